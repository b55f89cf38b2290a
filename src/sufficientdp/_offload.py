"""One function call in a fresh Python process, so that it runs beside the caller's work on another core.

The core's scalar loops hold the GIL, so a thread gains little (measured on the design report and on the bounds of
many pair types: issue 10); a process does. Used by the design report (its homogeneous calibration) and by the
all-collections bounds of k reports and T rounds (half of the pair types, :mod:`sufficientdp.ratio.proven`). The
child is a fresh interpreter (``python -m sufficientdp._offload``), not a fork or a
``multiprocessing`` spawn: a fork copies whatever threads and locks the caller holds, and a spawn imports the
caller's main script again (a script without a ``__main__`` guard would run twice). The call and its result travel
as pickles through the child's stdin and stdout; both ends are this package, nothing else reads or writes them.

Standard library only (no math; below every layer of the package). Whatever goes wrong with the child itself (it
cannot start, cannot import the function, dies) makes :meth:`Offloaded.result` run the call in the calling process
instead, so the answer never depends on whether a second process was available; an exception raised by the call
itself is raised again.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Offloaded", "Offloads", "spare_core"]


def spare_core() -> bool:
    """Whether this process may use more than one core (a second process would otherwise only add its start-up)."""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # pragma: no cover - not Linux
        return (os.cpu_count() or 1) > 1


class Offloaded:
    """``fn(**kwargs)`` started in a child process at construction; :meth:`result` waits for its value.

    ``fn`` must be importable by name (a module-level function of this package) and ``kwargs`` picklable. Started
    through :class:`Offloads`, which calls :meth:`close` when its block ends: a call whose result is not needed
    (the caller failed) is stopped."""

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self._fn, self._kwargs = fn, dict(kwargs)
        self._out: bytes | None = None
        #: whether :meth:`result` got its value (or the call's exception) from the child
        self.from_child = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        try:
            payload = pickle.dumps((list(sys.path), pickle.dumps((fn, self._kwargs))))
            proc = subprocess.Popen([sys.executable, "-m", "sufficientdp._offload"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
        except Exception:  # noqa: BLE001 - no child: result() computes in this process
            return
        self._proc = proc
        # writing and reading in a thread: neither end blocks on a full pipe while this process works
        self._reader = threading.Thread(target=self._talk, args=(proc, payload), name="sufficientdp-offload",
                                        daemon=True)
        self._reader.start()

    def _talk(self, proc: subprocess.Popen[bytes], payload: bytes) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            with proc.stdin:
                proc.stdin.write(payload)
            self._out = proc.stdout.read()
        except (OSError, ValueError):  # the child ended early (it cannot start, or it was stopped)
            self._out = None
        finally:
            proc.stdout.close()

    def result(self) -> Any:
        """The call's value (computed here if the child could not give it); its exception if it raised one."""
        answer = self._collect()
        self.from_child = answer is not None
        if answer is None:
            return self._fn(**self._kwargs)
        ok, value = answer
        if ok:
            return value
        raise value

    def _collect(self) -> tuple[bool, Any] | None:
        if self._proc is None or self._reader is None:
            return None
        self._reader.join()
        code = self._proc.wait()
        out, self._out = self._out, None
        if code != 0 or not out:
            return None
        try:
            answer = pickle.loads(out)  # noqa: S301 - written by our own child, through its stdout
        except Exception:  # noqa: BLE001 - e.g. an exception type that cannot be rebuilt: compute here
            return None
        return answer if isinstance(answer, tuple) and len(answer) == 2 else None

    def close(self) -> None:
        """Stop the child if it is still running (its result is then not needed)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            proc.wait()
        if self._reader is not None:
            self._reader.join()

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


def _main() -> int:
    """The child: read ``(sys.path, call)`` from stdin, write ``(True, value)`` or ``(False, exception)``."""
    path, call = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 - written by the parent, this module
    sys.path[:] = path
    fn, kwargs = pickle.loads(call)  # noqa: S301
    try:
        answer: tuple[bool, Any] = (True, fn(**kwargs))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        answer = (False, exc)
    try:
        data = pickle.dumps(answer)
    except Exception:  # noqa: BLE001 - an unpicklable value or exception: the parent computes it itself
        return 1
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_main())
