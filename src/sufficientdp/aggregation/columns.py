"""Tally of reports given column by column: one 0/1 ``uint8`` array per bit (how file readers deliver them).

The same three counts as :func:`sufficientdp.aggregation.tally.tally`, computed without building the ``(n, L)``
matrix or packing it: ``bit_counts[j]`` is the number of non-zero entries of column j, the weight of a row is the
sum of its columns, its code is Σ_j col_j·2^j (bit j ↔ 2^j). All integer and exact, so the result is identical to
``tally(np.column_stack(columns))``. The caller guarantees every value is 0 or 1 (the readers validate per batch).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._errors import DataError, ParameterError
from .tally import MAX_HISTOGRAM_BITS, Tally

__all__ = ["tally_columns", "vector_histogram_columns"]


def tally_columns(columns: Sequence[np.ndarray], *, full_histogram: bool | None = None) -> Tally:
    """Tally equal-length 1-D ``uint8`` columns holding only 0 and 1 (one per bit, bit j = ``columns[j]``).

    Args:
        columns: L >= 1 arrays of the same length, dtype uint8 (or bool), values 0/1 (not checked).
        full_histogram: compute the 2^L histogram; default: when L <= 16. Allowed only for L <= 20.

    Examples:
        >>> t = tally_columns([np.array([1, 1, 0], np.uint8), np.array([0, 1, 0], np.uint8)])
        >>> t.bit_counts.tolist(), t.weight_histogram.tolist(), t.vector_histogram.tolist()
        ([2, 1], [1, 1, 1], [1, 1, 0, 1])
    """
    bits = len(columns)
    if bits < 1:
        raise DataError("need at least one bit column")
    if full_histogram is None:
        full_histogram = bits <= 16
    if full_histogram and bits > MAX_HISTOGRAM_BITS:
        raise ParameterError(f"full_histogram needs bits in [1, {MAX_HISTOGRAM_BITS}]; got bits={bits}")
    cols = [np.asarray(c).view(np.uint8) if np.asarray(c).dtype == np.bool_ else np.asarray(c) for c in columns]
    n = int(cols[0].shape[0])
    if any(c.ndim != 1 or c.shape[0] != n or c.dtype != np.uint8 for c in cols):
        raise DataError("columns must be 1-D uint8 arrays of equal length")
    counts = np.array([np.count_nonzero(c) for c in cols], dtype=np.int64)
    weight_dtype = np.uint8 if bits < 256 else np.uint16 if bits < 65536 else np.uint32
    weights = cols[0].astype(weight_dtype)
    for c in cols[1:]:
        np.add(weights, c, out=weights, casting="unsafe")
    weight_hist = np.bincount(weights, minlength=bits + 1).astype(np.int64, copy=False)
    vh = _code_histogram(cols) if full_histogram else None
    return Tally(bits=bits, reports=n, bit_counts=counts, weight_histogram=weight_hist, vector_histogram=vh)


def vector_histogram_columns(columns: Sequence[np.ndarray]) -> np.ndarray:
    """The 2^L histogram (int64) of the codes Σ_j columns[j]·2^j of equal-length 1-D ``uint8`` 0/1 columns (values
    not checked), L <= 20: the ``vector_histogram`` of :func:`tally_columns`, without the bit counts and weights,
    which :func:`~sufficientdp.aggregation.tally.tally_histogram` derives from it exactly; so summing the histograms
    of a file's batches and deriving the counts once costs less than counting every batch three ways.

    Examples:
        >>> vector_histogram_columns([np.array([1, 1, 0], np.uint8), np.array([0, 1, 0], np.uint8)]).tolist()
        [1, 1, 0, 1]
    """
    bits = len(columns)
    if not 1 <= bits <= MAX_HISTOGRAM_BITS:
        raise ParameterError(f"the vector histogram needs bits in [1, {MAX_HISTOGRAM_BITS}]; got bits={bits}")
    n = int(np.asarray(columns[0]).shape[0])
    cols = [np.asarray(c) for c in columns]
    if any(c.ndim != 1 or c.shape[0] != n or c.dtype != np.uint8 for c in cols):
        raise DataError("columns must be 1-D uint8 arrays of equal length")
    return _code_histogram(cols)


def _code_histogram(cols: list[np.ndarray]) -> np.ndarray:
    """bincount of the codes: each group of 8 columns summed into one byte Σ_j c_j·2^j in ``uint8`` (exact for 0/1
    values; multiply and add of same-type ``uint8`` arrays are several times faster than shifts into a wider type),
    then the bytes joined into the code."""
    n = cols[0].shape[0]
    tmp = np.empty(n, dtype=np.uint8)
    code = None
    for start in range(8 * ((len(cols) - 1) // 8), -1, -8):
        byte = cols[start].copy()
        for j, c in enumerate(cols[start + 1:start + 8], start=1):
            np.multiply(c, np.uint8(1 << j), out=tmp)
            np.add(byte, tmp, out=byte)
        if code is None:
            code = byte.astype(np.intp)
        else:
            code <<= 8
            code |= byte
    assert code is not None
    return np.bincount(code, minlength=1 << len(cols)).astype(np.int64, copy=False)
