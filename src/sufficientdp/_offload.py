"""Calls in a fresh Python process, so that they run beside the caller's work on another core.

:class:`Helper` runs calls one after another in one child (many short calls, tens of milliseconds each, where a
start-up per call would cost more); :class:`Offloaded` is a helper of its own for one call (seconds of work).

The core's scalar loops hold the GIL, so a thread gains little (measured on the design report and on the bounds of
many pair types: issue 10); a process does. :class:`Offloaded` is used by the design report (its homogeneous
calibration); a :class:`Helper` by the all-collections bounds of k reports and over T rounds (the pair types' rows
and curves, shared piece by piece: :func:`from_both_ends`), by the homogeneous search's scan over j, and by the
L = 1 bound for larger crowds (its exact values two at a time). A helper's child starts none of its own. The
child is a fresh interpreter (``python -m sufficientdp._offload``), not a fork or a
``multiprocessing`` spawn: a fork copies whatever threads and locks the caller holds, and a spawn imports the
caller's main script again (a script without a ``__main__`` guard would run twice). The calls and their results
travel as length-prefixed pickles through the child's stdin and stdout; both ends are this package, nothing else
reads or writes them.

Standard library only (no math; below every layer of the package). Whatever goes wrong with the child itself (it
cannot start, cannot import the function, dies) makes :meth:`Pending.result` run the call in the calling process
instead, so the answer never depends on whether a second process was available; an exception raised by the call
itself is raised again.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import IO, Any, TypeVar, cast

__all__ = ["Helper", "Offloaded", "Offloads", "Pending", "current_helper", "from_both_ends", "helper_process",
           "spare_core"]

_T = TypeVar("_T")


_IN_HELPER = False
"""Whether this interpreter is a helper's child (set by :func:`_serve`)."""


def spare_core() -> bool:
    """Whether this process may use more than one core (a second process would otherwise only add its start-up).
    Never in a helper's child: it runs beside its parent, which has the other core, so a child of its own would
    only share the same cores three ways (the design report's homogeneous calibration at L = 40: slower)."""
    if _IN_HELPER:
        return False
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # pragma: no cover - not Linux
        return (os.cpu_count() or 1) > 1


def _python() -> str:
    """The interpreter to start: this one. Not in a frozen application (PyInstaller and the like), whose executable
    is the application itself, nor without a known executable: then no child starts (``OSError``) and every call
    runs in this process."""
    if getattr(sys, "frozen", False) or not sys.executable:
        raise OSError("no Python interpreter to start a second process with")
    return sys.executable


class Offloaded:
    """``fn(**kwargs)`` started in a child process at construction; :meth:`result` waits for its value.

    ``fn`` must be importable by name (a module-level function of this package) and ``kwargs`` picklable. A
    :class:`Helper` of its own that runs this one call. Started through :class:`Offloads`, which calls :meth:`close`
    when its block ends: a call whose result is not needed (the caller failed) is stopped."""

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self._helper = Helper()
        self._pending = self._helper.submit(fn, kwargs)
        #: whether :meth:`result` got its value (or the call's exception) from the child
        self.from_child = False

    @property
    def _proc(self) -> subprocess.Popen[bytes] | None:
        return self._helper._proc

    def result(self) -> Any:
        """The call's value (computed here if the child could not give it); its exception if it raised one."""
        try:
            return self._pending.result()
        finally:
            self.from_child = self._pending.from_child
            self._helper.close()

    def close(self) -> None:
        """Stop the child if it is still running (its result is then not needed)."""
        self._helper.close()


class Offloads:
    """The calls a piece of work started (:meth:`start`); leaving the ``with`` block stops those still running."""

    def __init__(self) -> None:
        self._calls: list[Offloaded] = []

    def start(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Offloaded:
        call = Offloaded(fn, kwargs)
        self._calls.append(call)
        return call

    def __enter__(self) -> Offloads:
        return self

    def __exit__(self, *exc: object) -> None:
        for call in self._calls:
            call.close()


class Helper:
    """A fresh interpreter that runs calls sent to it one after another (``python -m sufficientdp._offload``): for
    many short calls (tens of milliseconds each) a start-up per call would cost more than the call. At most one call
    is outstanding: :meth:`submit`, compute something here, then :meth:`Pending.result`.

    Whatever goes wrong with the child (it cannot start, dies, cannot pickle an answer) makes the call run in this
    process instead, and the helper is not used again; an exception raised by the call itself is raised again."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._busy = False
        try:
            proc = subprocess.Popen([_python(), "-m", "sufficientdp._offload"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    close_fds=True)
        except Exception:  # noqa: BLE001 - no child: every call runs here
            return
        self._proc = proc
        if not self._send(pickle.dumps(list(sys.path))):
            self.close()

    @property
    def alive(self) -> bool:
        """Whether calls still go to the child."""
        return self._proc is not None

    def _send(self, data: bytes) -> bool:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return False
        try:
            _write_frame(proc.stdin, data)
            return True
        except (OSError, ValueError):
            return False

    def submit(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Pending:
        """Send ``fn(**kwargs)`` (``fn`` importable by name, ``kwargs`` picklable) to the child."""
        if self._busy:
            raise RuntimeError("a Helper runs one call at a time: take the result of the previous call first")
        sent = False
        if self._proc is not None:
            try:
                sent = self._send(pickle.dumps((fn, dict(kwargs))))
            except Exception:  # noqa: BLE001 - unpicklable: this call runs here
                sent = False
            if sent:
                self._busy = True
        return Pending(self if sent else None, fn, kwargs)

    def _receive(self) -> tuple[Any, Any] | None:
        self._busy = False
        proc = self._proc
        if proc is None or proc.stdout is None:
            return None
        try:
            data = _read_frame(proc.stdout)
            answer = pickle.loads(data) if data is not None else None  # noqa: S301 - our own child's answer
        except Exception:  # noqa: BLE001 - the child died or wrote something else
            answer = None
        if not (isinstance(answer, tuple) and len(answer) == 2 and answer[0] is not None):
            self.close()  # (not used again: later calls run here)
            return None
        return answer

    def close(self) -> None:
        """Stop the child (it holds nothing worth finishing: no call is outstanding, or its answer is not needed)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


class Pending:
    """A call sent to a :class:`Helper` (or, when it could not be sent, to be run here by :meth:`result`)."""

    def __init__(self, helper: Helper | None, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self._helper, self._fn, self._kwargs = helper, fn, kwargs
        #: whether :meth:`result` got its value (or the call's exception) from the child
        self.from_child = False

    def result(self) -> Any:
        """The call's value (computed here if the child could not give it); its exception if it raised one."""
        answer = self._helper._receive() if self._helper is not None else None
        if answer is None:
            return self._fn(**self._kwargs)
        self.from_child = True
        ok, value = answer
        if ok:
            return value
        raise value


def from_both_ends(items: Sequence[_T], here: Callable[[_T], object], there: Callable[[_T], object]) -> None:
    """``here(item)`` on the items from the first on, in this thread, and ``there(item)`` from the last on, in a
    feeding thread (typically a call sent to a :class:`Helper` and waited for), until the two meet: each item once,
    the work shared by how fast each side goes, not by a fixed split. ``there`` returning True stops its side (this
    thread then takes every item left); ``here`` returning True stops both (the items left are not taken). An
    exception of either side is raised here, after the feeding thread has ended (it finishes its current item)."""
    ends = [0, len(items)]  # the next item this thread takes; one past the next the feeding thread takes
    back_open = [True]
    lock = threading.Lock()
    failed: list[BaseException] = []

    def take(last: bool) -> tuple[bool, _T | None]:
        with lock:
            if ends[0] >= ends[1] or (last and not back_open[0]):
                return False, None
            if last:
                ends[1] -= 1
                return True, items[ends[1]]
            ends[0] += 1
            return True, items[ends[0] - 1]

    def feed() -> None:
        try:
            while True:
                ok, item = take(last=True)
                if not ok:
                    return
                if there(cast(_T, item)) is True:
                    with lock:
                        back_open[0] = False
                    return
        except BaseException as exc:  # noqa: BLE001 - raised again by the calling thread
            failed.append(exc)

    feeder = threading.Thread(target=feed, name="sufficientdp-both-ends", daemon=True)
    feeder.start()
    try:
        while True:
            ok, item = take(last=False)
            if not ok or here(cast(_T, item)) is True:
                break
    finally:
        with lock:
            ends[0] = ends[1]  # (stopped, or an error here: the feeding thread takes nothing more)
        feeder.join()
    if failed:
        raise failed[0]


_HELPER: ContextVar[Helper | None] = ContextVar("sufficientdp_helper", default=None)


@contextlib.contextmanager
def helper_process(enabled: bool = True) -> Iterator[Helper | None]:
    """A :class:`Helper` for the block (:func:`current_helper` returns it there), when ``enabled`` and a spare core
    exists; None otherwise. The child ends with the block."""
    helper = Helper() if enabled and spare_core() else None
    token = _HELPER.set(helper)
    try:
        yield helper
    finally:
        _HELPER.reset(token)
        if helper is not None:
            helper.close()


def current_helper() -> Helper | None:
    """The :class:`Helper` of the innermost :func:`helper_process` block, if any and still running."""
    helper = _HELPER.get()
    return helper if helper is not None and helper.alive else None


def _write_frame(stream: IO[bytes], data: bytes) -> None:
    stream.write(struct.pack("<Q", len(data)))
    stream.write(data)
    stream.flush()


def _read_frame(stream: IO[bytes]) -> bytes | None:
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    return data if len(data) == size else None


def _serve() -> int:
    """The :class:`Helper`'s child: ``sys.path`` first, then ``(fn, kwargs)`` frames until stdin ends, each answered
    with ``(True, value)``, ``(False, exception)`` or ``(None, None)`` (an answer that cannot be pickled)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    head = _read_frame(stdin)
    if head is None:
        return 0
    sys.path[:] = pickle.loads(head)  # noqa: S301 - written by the parent, this module
    import sufficientdp._offload as package_copy  # (this file runs as __main__; the package imports its own copy)

    package_copy._IN_HELPER = True
    while True:
        frame = _read_frame(stdin)
        if frame is None:
            return 0
        data = _answer(*pickle.loads(frame))  # noqa: S301
        _write_frame(stdout, data if data is not None else pickle.dumps((None, None)))


def _answer(fn: Callable[..., Any], kwargs: dict[str, Any]) -> bytes | None:
    """``(True, fn(**kwargs))`` or ``(False, its exception)``, pickled; None when that cannot be pickled (an
    unpicklable value or exception: the parent then computes the call itself)."""
    try:
        answer: tuple[bool, Any] = (True, fn(**kwargs))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        answer = (False, exc)
    try:
        return pickle.dumps(answer)
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    sys.exit(_serve())
