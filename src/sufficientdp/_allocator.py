"""Allocator settings for the package's own processes: freed numpy buffers are reused instead of returned.

The privacy bounds (:mod:`sufficientdp.ratio.proven`, the lattices of :mod:`sufficientdp._numerics`) allocate and
free buffers of the same few sizes (up to 16 MB) hundreds of times in one command. With glibc's defaults a buffer
above 128 KB is a fresh ``mmap`` until the first ones are freed, and memory freed at the top of the heap goes back
to the system; every reuse then faults its pages in again (zeroed by the kernel): ~38,000 page faults and about a
tenth of the CPU of ``sufficientdp tail --bits 40`` (docs/benchmarks.md). A fixed mmap threshold of 32 MB and a
trim threshold of 64 MB keep those buffers. Only where the memory comes from changes, never a computed number.

Only the command line and the collector's calibration job processes call :func:`tune_allocator` (processes the
package starts and owns); a library call never changes the allocator of its caller's process, and the
long-running collector server keeps the defaults.
"""

from __future__ import annotations

import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "tune_allocator"]

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
"""Blocks up to this size come from the heap (and are reused once freed)."""
TRIM_THRESHOLD = 64 << 20
"""Free memory kept at the top of the heap (beyond it, memory goes back to the system)."""


def tune_allocator() -> bool:
    """Set glibc's mmap and trim thresholds (:data:`MMAP_THRESHOLD`, :data:`TRIM_THRESHOLD`) for this process.

    Linux with glibc only: elsewhere (another C library, macOS, Windows) nothing happens. Returns whether both
    settings were applied.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - a C library without mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
