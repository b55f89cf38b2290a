"""Calibration jobs of the collector: a bounded queue, worker threads, one child process per job.

Fixing a campaign's q is math whose cost grows quickly with L and k (:func:`~sufficientdp.collection.campaign.
plan_campaign`: calibrating at L = 256 takes 7-17 s and about 0.35 GB on two cores, more with k > 1; campaigns stop
at L = 286, the proven bound's limit). The HTTP collector therefore never runs it
inside a request: ``POST /v1/campaigns`` stores the campaign as ``calibrating`` with its job and answers 202, and a
:class:`CalibrationJobs` runs the job in the background (docs/collector_api_contract.md).

Bounds (each job, and all of them together):

* at most ``workers`` jobs run at once, each in its own child process (``python -P -m sufficientdp.service.jobs``
  with the server's interpreter: the job reads its configuration as JSON on stdin and writes its outcome on
  stdout), at a lower scheduling priority (``nice`` +10) than the server;
* at most ``workers + max_queued`` jobs are admitted (running, queued or being stored); :meth:`CalibrationJobs.
  submit` refuses more, and the API answers 429 ``calibration_queue_full`` without storing anything;
* a job that has not answered ``time_limit`` seconds (wall clock) after its process started is killed (SIGKILL)
  and the campaign fails with ``calibration_timeout``; the child also caps its address space at ``memory_limit``
  bytes (``RLIMIT_AS``: an allocation beyond it fails with ``calibration_out_of_memory``) and its CPU time
  (``RLIMIT_CPU``, a backstop), and exits by itself if the server process goes away;
* a job started :data:`MAX_ATTEMPTS` times without storing an outcome (its collector was stopped or killed each
  time) fails with ``calibration_interrupted`` at the next start instead of running again;
* the deployment may cancel a job (``POST /v1/campaigns/{id}/cancel``: the outcome ``calibration_cancelled`` is
  stored first, then :meth:`CalibrationJobs.cancel` drops the queued job or kills its process).

Outcomes are pure functions of the validated configuration (bits, epsilon, eta, crowd_size, reports_per_person,
q, precision), so the deterministic ones (``active`` with its plan, ``target_not_met``, ``invalid_parameter``) are
remembered in a small in-process cache and a campaign with the same configuration gets its outcome at once.

This module imports no web framework: the child processes load only the core.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from .._allocator import tune_allocator
from .._errors import CalibrationError, ParameterError
from ..collection.campaign import Campaign, TargetNotMetError, plan_campaign

__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_QUEUE",
    "DEFAULT_TIME_LIMIT",
    "MAX_ATTEMPTS",
    "MAX_MEMORY_LIMIT",
    "MAX_QUEUE",
    "MAX_TIME_LIMIT",
    "MAX_WORKERS",
    "MIN_MEMORY_LIMIT",
    "CalibrationJobs",
    "Outcome",
    "cached_outcome",
    "compute_outcome",
    "failed",
]

#: Default wall-clock limit of one job, in seconds (L = 8 or k = 2 calibrate in 15 to 25 s; L = 64 takes minutes).
DEFAULT_TIME_LIMIT: Final = 600.0
#: Largest accepted time limit (one day).
MAX_TIME_LIMIT: Final = 86_400.0
#: Default address-space limit of a job's process, in bytes (the proven bound needs 0.2 GB at L = 4, 1.7 GB at
#: L = 64).
DEFAULT_MEMORY_LIMIT: Final = 4 << 30
#: Smallest and largest accepted memory limits.
MIN_MEMORY_LIMIT: Final = 256 << 20
MAX_MEMORY_LIMIT: Final = 1 << 40
#: Largest number of jobs run at once.
MAX_WORKERS: Final = 8
#: Default and largest number of jobs waiting for a worker.
DEFAULT_QUEUE: Final = 8
MAX_QUEUE: Final = 1000
#: A job started this many times without storing an outcome fails at its next start.
MAX_ATTEMPTS: Final = 3
#: Seconds a refused client is told to wait (``Retry-After``).
RETRY_AFTER: Final = 30
#: Fields of the configuration the outcome depends on (the cache key).
MATH_FIELDS: Final = ("bits", "epsilon", "eta", "crowd_size", "reports_per_person", "q", "precision", "memo_q")
#: Fields a successful job adds to the campaign object.
PLAN_FIELDS: Final = ("q", "q_numerator", "precision", "eta_at_q", "calibrated", "guarantee", "notes", "memo_q",
                      "memo_q_numerator", "q_release", "lifetime")

_NICENESS: Final = 10
_CHILD_GRACE: Final = 5.0  # the child's own watchdog fires this long after the parent's deadline
_CACHE_SIZE: Final = 256
_FIELDS: Final = frozenset(("name", "bits", "epsilon", "eta", "crowd_size", "reports_per_person", "q", "precision",
                            "rate_limit", "family", "memo_q"))
_log = logging.getLogger("sufficientdp.service")


@dataclass(frozen=True, slots=True)
class Outcome:
    """The outcome of a job: ``status`` ``"active"`` with ``plan`` (the :data:`PLAN_FIELDS`), or ``"failed"``
    with ``error`` (``{"code", "message", "parameter"}``, as in the API's error bodies)."""

    status: str
    plan: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None

    @property
    def deterministic(self) -> bool:
        """True if the same configuration always gives this outcome (so it may be cached)."""
        return self.status == "active" or (self.error or {}).get("code") in ("target_not_met", "invalid_parameter")

    def to_wire(self) -> list[Any]:
        """``[status, plan, error]``, as the job's process writes it."""
        return [self.status, self.plan, self.error]


def failed(code: str, message: str, parameter: str | None = None) -> Outcome:
    """A failed outcome."""
    return Outcome("failed", error={"code": code, "message": message, "parameter": parameter})


def _parameter(message: str) -> str | None:
    head = message.split(" ", 1)[0].rstrip(":").split("=", 1)[0]
    return head if head in _FIELDS else None


def compute_outcome(fields: dict[str, Any]) -> Outcome:
    """Run :func:`plan_campaign` on a validated configuration, in this process (the job's body).

    Args:
        fields: the :class:`~sufficientdp.collection.campaign.Campaign` fields.

    Returns:
        ``active`` with the plan, or ``failed`` with ``target_not_met`` (parameter ``q`` for a given q, ``eta``
        for a calibrated one) or ``invalid_parameter``. Other exceptions (``MemoryError``, ...) propagate.
    """
    try:
        campaign = Campaign(**fields)
    except ParameterError as exc:
        return failed("invalid_parameter", str(exc), _parameter(str(exc)))
    try:
        plan = plan_campaign(campaign)
    except TargetNotMetError as exc:
        return failed("target_not_met", str(exc), "q" if campaign.q is not None else "eta")
    except CalibrationError as exc:
        return failed("target_not_met", str(exc), "eta")
    except ParameterError as exc:
        return failed("invalid_parameter", str(exc), _parameter(str(exc)) or "precision")
    d = plan.to_dict()
    return Outcome("active", plan={k: d[k] for k in PLAN_FIELDS})


# ------------------------------------------------------------------------------------------------------- cache
_cache: collections.OrderedDict[tuple[Any, ...], Outcome] = collections.OrderedDict()
_cache_lock = threading.Lock()


def _key(fields: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((name, fields.get(name)) for name in MATH_FIELDS)


def cached_outcome(fields: dict[str, Any]) -> Outcome | None:
    """The remembered deterministic outcome of this configuration in this process, or None."""
    key = _key(fields)
    with _cache_lock:
        out = _cache.get(key)
        if out is not None:
            _cache.move_to_end(key)
        return out


def remember(fields: dict[str, Any], outcome: Outcome) -> None:
    """Remember a deterministic outcome (the oldest of :data:`_CACHE_SIZE` entries is dropped)."""
    if not outcome.deterministic:
        return
    with _cache_lock:
        _cache[_key(fields)] = outcome
        _cache.move_to_end(_key(fields))
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


# ------------------------------------------------------------------------------------------------- child side
def _limit_resources(time_limit: float, memory_limit: int) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: the parent's wall-clock limit still applies
        return
    for which, value in ((resource.RLIMIT_AS, memory_limit),
                         (resource.RLIMIT_CPU, int(time_limit * max(1, os.cpu_count() or 1)) + 10)):
        try:
            _, hard = resource.getrlimit(which)
            soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):  # pragma: no cover - a platform without this limit
            pass


def _die_with(parent: int) -> None:
    """End this process when the server (``parent``) goes away, even in a long computation holding the GIL.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (the kernel kills this process when the server's thread that
    started it ends); then, in case the server was already gone, the parent is checked once. The watchdog thread
    of :func:`_worker_main` checks again every half second (the only check elsewhere).
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl: the watchdog still applies
            pass
    if os.getppid() != parent:
        os._exit(3)


def _worker_main() -> int:
    """Entry point of a job's process (``python -P -m sufficientdp.service.jobs``).

    Reads ``{"fields", "time_limit", "memory_limit", "parent"}`` (JSON) from stdin, writes the outcome
    ``[status, plan, error]`` (JSON) to stdout.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which then stops its jobs
    job = json.loads(sys.stdin.buffer.read())
    parent = int(job["parent"])  # the server's pid, as it said: os.getppid() now may already be a reaper's
    _die_with(parent)
    time_limit = float(job["time_limit"])
    memory_limit = int(job["memory_limit"])
    deadline = time.monotonic() + time_limit + _CHILD_GRACE

    def watchdog() -> None:  # ends the process if the server went away or did not stop it in time
        while True:
            time.sleep(0.5)
            if os.getppid() != parent or time.monotonic() > deadline:
                os._exit(3)

    threading.Thread(target=watchdog, name="sufficientdp-calibration-watchdog", daemon=True).start()
    try:
        os.nice(_NICENESS)
    except (AttributeError, OSError):  # pragma: no cover - not POSIX
        pass
    _limit_resources(time_limit, memory_limit)
    tune_allocator()  # (this process is the package's own: reuse the bounds' freed buffers)
    from ..ratio.proven import bound_in_one_thread

    bound_in_one_thread()  # (under the memory limit: see bound_in_one_thread)
    try:
        outcome = compute_outcome(dict(job["fields"]))
    except MemoryError:
        outcome = failed("calibration_out_of_memory",
                         f"the calibration needed more than the job's memory limit of {memory_limit} bytes; use a "
                         "smaller bits or reports_per_person")
    except Exception as exc:
        outcome = failed("calibration_failed", f"the calibration failed ({type(exc).__name__})")
    sys.stdout.write(json.dumps(outcome.to_wire()))
    sys.stdout.flush()
    return 0


# ------------------------------------------------------------------------------------------------ parent side
class CalibrationJobs:
    """A bounded queue of calibration jobs run by worker threads, each job in a child process.

    Args:
        start: ``start(campaign_id)`` counts one more start of the job in storage and returns the count, or None
            if the job is already finished (nothing to do).
        finish: ``finish(campaign_id, outcome)`` stores the outcome (and ends the job in storage).
        workers: jobs run at once, in [1, 8].
        max_queued: jobs waiting for a worker, in [0, 1000].
        time_limit: seconds of wall-clock time per job, in (0, 86400].
        memory_limit: bytes of address space per job, in [2**28, 2**40].

    Raises:
        ParameterError: an argument out of range.
    """

    def __init__(self, *, start: Callable[[str], int | None], finish: Callable[[str, Outcome], None],
                 workers: int = 1, max_queued: int = DEFAULT_QUEUE, time_limit: float = DEFAULT_TIME_LIMIT,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        from .._validation import check_int, check_positive_finite

        self.workers = check_int("calibration_workers", workers, minimum=1, maximum=MAX_WORKERS)
        self.max_queued = check_int("calibration_queue", max_queued, minimum=0, maximum=MAX_QUEUE)
        self.time_limit = check_positive_finite("calibration_time_limit", time_limit)
        if self.time_limit > MAX_TIME_LIMIT:
            raise ParameterError(f"calibration_time_limit must be in (0, {MAX_TIME_LIMIT:g}] seconds; got "
                                 f"{time_limit!r}")
        self.memory_limit = check_int("calibration_memory_limit", memory_limit, minimum=MIN_MEMORY_LIMIT,
                                      maximum=MAX_MEMORY_LIMIT)
        self._start = start
        self._finish = finish
        self._cond = threading.Condition()
        self._queue: collections.deque[tuple[str, dict[str, Any]]] = collections.deque()
        self._reserved = 0
        self._running = 0
        self._procs: dict[subprocess.Popen[bytes], str] = {}  # running processes and their campaigns
        self._active: set[str] = set()  # campaigns whose job a worker has taken from the queue
        self._cancelled: set[str] = set()  # ... and that were cancelled meanwhile
        self._closed = False
        self._threads = [threading.Thread(target=self._loop, name=f"sufficientdp-calibration-{i}", daemon=True)
                         for i in range(self.workers)]
        for t in self._threads:
            t.start()

    @property
    def capacity(self) -> int:
        """Jobs admitted at most (running, queued or being stored): ``workers + max_queued``."""
        return self.workers + self.max_queued

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def load(self) -> int:
        """Jobs admitted now (running, queued or being stored)."""
        with self._cond:
            return self._load()

    def _load(self) -> int:
        return len(self._queue) + self._reserved + self._running

    def has_room(self) -> bool:
        """Whether :meth:`submit` would admit a job now (it checks again); False once closed."""
        with self._cond:
            return not self._closed and self._load() < self.capacity

    def state(self, campaign_id: str) -> str | None:
        """``"queued"`` or ``"running"`` for a job of this process, else None (finished, cancelled, or run by
        another collector process on the same database)."""
        with self._cond:
            if campaign_id in self._active and campaign_id not in self._cancelled:
                return "running"
            if any(cid == campaign_id for cid, _ in self._queue):
                return "queued"
            return None

    def cancel(self, campaign_id: str) -> bool:
        """Drop a job from the queue, or kill its running process; nothing is stored for it.

        The caller stores the job's outcome first (``calibration_cancelled``): a worker whose process is killed
        here stores nothing, and one that finished meanwhile finds the job already finished in storage.

        Returns:
            True if this process had the job (queued or running).
        """
        with self._cond:
            before = len(self._queue)
            self._queue = collections.deque(j for j in self._queue if j[0] != campaign_id)
            found = len(self._queue) != before
            if campaign_id in self._active:
                self._cancelled.add(campaign_id)
                found = True
            procs = [p for p, cid in self._procs.items() if cid == campaign_id]
        for proc in procs:  # the worker sees its process end and the cancelled mark, and stores nothing
            try:
                proc.kill()
            except OSError:  # pragma: no cover - already gone
                pass
        return found

    def submit(self, campaign_id: str, fields: dict[str, Any], store: Callable[[], None]) -> str:
        """Admit a job if there is room: ``store()`` (which writes the campaign and its job), then queue it.

        Returns:
            ``"queued"``, ``"full"`` (nothing stored) or ``"closed"`` (shutting down; nothing stored).

        Raises:
            Whatever ``store()`` raises (the job is then not queued).
        """
        with self._cond:
            if self._closed:
                return "closed"
            if self._load() >= self.capacity:
                return "full"
            self._reserved += 1
        try:
            store()
        except BaseException:
            with self._cond:
                self._reserved -= 1
            raise
        with self._cond:
            self._reserved -= 1
            self._queue.append((campaign_id, dict(fields)))
            self._cond.notify()
        return "queued"

    def recover(self, jobs: list[tuple[str, dict[str, Any]]]) -> None:
        """Queue jobs found unfinished in storage at start-up (they were admitted before; no capacity check)."""
        with self._cond:
            self._queue.extend((cid, dict(f)) for cid, f in jobs)
            self._cond.notify_all()

    def close(self, timeout: float = 10.0) -> None:
        """Stop: kill the running jobs' processes and end the worker threads. Unfinished jobs stay in storage
        (``calibrating``) and are queued again by the next collector started on the same database."""
        with self._cond:
            self._closed = True
            procs = list(self._procs)
            self._cond.notify_all()
        for proc in procs:  # the worker waiting on it sees the process end, and the closed flag
            try:
                proc.kill()
            except OSError:  # pragma: no cover - already gone
                pass
        deadline = time.monotonic() + timeout
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=max(0.0, deadline - time.monotonic()))

    # ------------------------------------------------------------------------------------------------ workers
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                campaign_id, fields = self._queue.popleft()
                self._running += 1
                self._active.add(campaign_id)
            try:
                self._run(campaign_id, fields)
            except Exception as exc:  # a storage error: the job stays unfinished and is recovered at restart
                _log.error("calibration job %s: %s", campaign_id, type(exc).__name__)
            finally:
                with self._cond:
                    self._running -= 1
                    self._active.discard(campaign_id)
                    self._cancelled.discard(campaign_id)

    def _run(self, campaign_id: str, fields: dict[str, Any]) -> None:
        attempts = self._start(campaign_id)
        if attempts is None or self._is_cancelled(campaign_id):
            return
        if attempts > MAX_ATTEMPTS:
            self._store(campaign_id, failed(
                "calibration_interrupted",
                f"the calibration was started {MAX_ATTEMPTS} times and never finished (the collector stopped "
                "during each run); create the campaign again"))
            return
        outcome = cached_outcome(fields)
        while outcome is None:
            result = self._execute(campaign_id, fields)
            if result is None:  # closing (the job stays unfinished in storage) or cancelled (its outcome is stored)
                return
            if isinstance(result, str):  # "interrupted": stopped from outside; run it again (attempts bound it)
                attempts = self._start(campaign_id)
                if attempts is None:
                    return
                if attempts > MAX_ATTEMPTS:
                    outcome = failed("calibration_interrupted",
                                     f"the calibration process was stopped {MAX_ATTEMPTS} times before it finished")
                continue
            outcome = result
            remember(fields, outcome)
        self._store(campaign_id, outcome)

    def _is_cancelled(self, campaign_id: str) -> bool:
        with self._cond:
            return campaign_id in self._cancelled

    def _store(self, campaign_id: str, outcome: Outcome) -> None:
        if outcome.status != "active":
            _log.warning("calibration job %s failed: %s", campaign_id, (outcome.error or {}).get("code"))
        for attempt in range(3):
            try:
                self._finish(campaign_id, outcome)
                return
            except Exception:
                if attempt == 2:
                    raise
                time.sleep(1.0)

    def _execute(self, campaign_id: str, fields: dict[str, Any]) -> Outcome | str | None:
        """Run one job in a child process: its outcome, ``"interrupted"``, or None when closing or cancelled."""
        payload = json.dumps({"fields": fields, "time_limit": self.time_limit, "memory_limit": self.memory_limit,
                              "parent": os.getpid()}).encode()
        # The deployment's secrets (SUFFICIENTDP_CREDENTIAL_KEY, SUFFICIENTDP_ADMIN_TOKEN) stay out of the job.
        env = {k: v for k, v in os.environ.items() if not k.startswith("SUFFICIENTDP_")}
        # -P: the working directory is not put on sys.path (a stray ./sufficientdp is never imported). A session of
        # its own: a terminal's Ctrl-C reaches the server only, which then stops its jobs.
        try:
            proc = subprocess.Popen([sys.executable, "-P", "-m", "sufficientdp.service.jobs"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True, env=env,
                                    start_new_session=True)
        except OSError as exc:
            return failed("calibration_failed", f"the collector could not start a calibration process "
                                                f"({type(exc).__name__})")
        try:
            with self._cond:
                if self._closed or campaign_id in self._cancelled:
                    return None
                self._procs[proc] = campaign_id
            started = time.monotonic()
            try:
                out, _ = proc.communicate(payload, timeout=self.time_limit)
            except subprocess.TimeoutExpired:
                if self._closed or self._is_cancelled(campaign_id):
                    return None
                return failed("calibration_timeout",
                              f"the calibration did not finish within the collector's time limit of "
                              f"{self.time_limit:g} s (it was stopped after {time.monotonic() - started:.0f} s); "
                              "use a smaller bits or reports_per_person, or give q")
            if self._closed or self._is_cancelled(campaign_id):
                return None
            try:
                status, plan, error = json.loads(out)
                if status in ("active", "failed"):
                    return Outcome(str(status), plan=dict(plan), error=None if error is None else dict(error))
            except (ValueError, TypeError):
                pass  # the process ended without a (valid) answer
            code = proc.returncode
            if code is not None and code < 0 and -code in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                return "interrupted"
            how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
            return failed("calibration_failed",
                          f"the calibration process {how} without a result (for example out of memory); use a "
                          "smaller bits or reports_per_person")
        finally:
            _kill(proc)
            with self._cond:
                self._procs.pop(proc, None)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            proc.kill()
        except OSError:  # pragma: no cover - already gone
            pass
    try:
        proc.wait(5.0)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
        pass
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            pipe.close()


if __name__ == "__main__":
    sys.exit(_worker_main())
