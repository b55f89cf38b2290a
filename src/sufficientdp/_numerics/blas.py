"""One OpenBLAS thread for a stretch of small matrix products (issue 10).

Many small products (a few thousand rows times a few dozen columns) wake OpenBLAS's worker threads, which then spin:
on a busy 2-core machine that doubles the CPU time of the product and can quadruple its wall time. The thread count
does not change the numbers: OpenBLAS splits the rows of the result between threads and each element is summed in
the same order whatever the split (pinned bit for bit in ``tests/ratio/test_worst_crowds_golden.py``). Cutting the
products into pieces below OpenBLAS's multi-threading threshold would also do it but is *not* bit-identical (small
products take OpenBLAS's small-matrix kernels, which sum in another order).

:func:`one_blas_thread` sets the calling thread's OpenBLAS thread count to 1 (``openblas_set_num_threads_local``,
OpenBLAS >= 0.3.27, thread-local: other threads, e.g. concurrent service requests, are not affected) and restores it
on exit. Where numpy's BLAS is not a bundled OpenBLAS with that function (MKL, Accelerate, a system library) it does
nothing: same numbers, only slower on a busy machine. The user's environment (``OPENBLAS_NUM_THREADS``) is never
read or changed.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

__all__ = ["one_blas_thread"]

_UNSET = object()
_setter: object = _UNSET


def _find_setter() -> Callable[[int], int] | None:
    """numpy's bundled OpenBLAS's ``openblas_set_num_threads_local`` (wheels: numpy.libs/ or numpy/.dylibs/)."""
    root = os.path.dirname(np.__file__)
    paths: list[str] = []
    for d in (os.path.join(os.path.dirname(root), "numpy.libs"), os.path.join(root, ".dylibs")):
        paths += sorted(glob.glob(os.path.join(d, "*openblas*")))
    for path in paths:
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_int]
        return fn
    return None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with one OpenBLAS thread in the calling thread (a no-op where that cannot be set)."""
    global _setter
    if _setter is _UNSET:
        _setter = _find_setter()
    setter = _setter
    if not callable(setter):
        yield
        return
    previous = int(setter(1))
    try:
        yield
    finally:
        setter(previous)
