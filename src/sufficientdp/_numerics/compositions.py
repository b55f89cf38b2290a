"""Weak compositions: every way to write ``n`` as an ordered sum of ``parts`` non-negative integers.

The one enumeration of count vectors (histograms of ``n`` items over ``parts`` cells) shared by the exact ratio
distribution, the exhaustive worst case, the structured worst case and the certified k-report tails.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["compositions"]


def compositions(n: int, parts: int) -> NDArray[np.int64]:
    """All length-``parts`` non-negative integer vectors summing to ``n``, in lexicographic order.

    Returns an ``int64`` array of shape ``(C(n + parts - 1, parts - 1), parts)`` (no rows if ``n < 0``; the single
    row ``[n]`` if ``parts == 1``), built level by level without recursion.

    Examples:
        >>> compositions(2, 3).tolist()
        [[0, 0, 2], [0, 1, 1], [0, 2, 0], [1, 0, 1], [1, 1, 0], [2, 0, 0]]
    """
    rows = np.zeros((1, 0), dtype=np.int64)
    remaining = np.array([n], dtype=np.int64)
    for _ in range(parts - 1):
        counts = remaining + 1
        parent = np.repeat(np.arange(remaining.size), counts)
        starts = np.cumsum(counts) - counts
        vals = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
        rows = np.column_stack([rows[parent], vals])
        remaining = remaining[parent] - vals
    out: NDArray[np.int64] = np.column_stack([rows, remaining]).astype(np.int64, copy=False)
    return out
