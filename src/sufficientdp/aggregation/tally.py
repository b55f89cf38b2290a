"""Anonymizing aggregation: drop identity and order, keep only counts (seed 001 §1.3, eq. 3.3–3.4).

A :class:`Tally` holds everything the server releases about a batch of reports:

* ``bit_counts`` — M_j, how many reports have bit j set;
* ``weight_histogram`` — T = (t_0..t_L), how many reports have l set bits (eq. 3.3; in the homogeneous
  configuration R(S) depends on S only through T, eq. 3.4);
* ``vector_histogram`` — counts over all 2^L vectors (L <= 20), index bit j ↔ report bit j.

These are functions of the multiset of reports only, so nothing about order or who sent what survives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._errors import DataError
from .._validation import check_int
from ..randomization._packing import pack_bits, words_per_report
from ..randomization.encoders import encode_bits
from ._kernels import bit_counts, vector_histogram, weight_histogram

__all__ = ["MAX_HISTOGRAM_BITS", "Tally", "tally", "tally_packed"]

MAX_HISTOGRAM_BITS = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Tally:
    """Counts of an anonymized batch of reports.

    Attributes:
        bits: L.
        reports: number of reports tallied.
        bit_counts: int64 array (L,), M_j.
        weight_histogram: int64 array (L+1,), t_l.
        vector_histogram: int64 array (2^L,) or None (only for L <= 20 and when requested).
    """

    bits: int
    reports: int
    bit_counts: np.ndarray
    weight_histogram: np.ndarray
    vector_histogram: np.ndarray | None = None

    def __post_init__(self) -> None:
        if isinstance(self.bits, bool) or not isinstance(self.bits, (int, np.integer)) or self.bits < 1:
            raise DataError(f"bits must be an integer >= 1; got {self.bits!r}")
        if isinstance(self.reports, bool) or not isinstance(self.reports, (int, np.integer)) or self.reports < 0:
            raise DataError(f"reports must be an integer >= 0; got {self.reports!r}")
        for name in ("bit_counts", "weight_histogram", "vector_histogram"):
            arr = getattr(self, name)
            if arr is None and name == "vector_histogram":
                continue
            if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "iu":
                raise DataError(f"{name} must be an integer numpy array; got {type(arr).__name__}"
                                + (f" of {arr.dtype}" if isinstance(arr, np.ndarray) else ""))
        if self.bit_counts.shape != (self.bits,):
            raise DataError(f"bit_counts must have shape ({self.bits},); got {self.bit_counts.shape}")
        if self.weight_histogram.shape != (self.bits + 1,):
            raise DataError(f"weight_histogram must have shape ({self.bits + 1},); got {self.weight_histogram.shape}")
        for arr in (self.bit_counts, self.weight_histogram, self.vector_histogram):
            if arr is not None:
                arr.setflags(write=False)

    def merge(self, other: Tally) -> Tally:
        """Sum of two tallies of disjoint batches with the same L."""
        if not isinstance(other, Tally) or other.bits != self.bits:
            raise DataError("can only merge tallies with the same number of bits")
        vh = None
        if self.vector_histogram is not None and other.vector_histogram is not None:
            vh = self.vector_histogram + other.vector_histogram
        return Tally(bits=self.bits, reports=self.reports + other.reports,
                     bit_counts=self.bit_counts + other.bit_counts,
                     weight_histogram=self.weight_histogram + other.weight_histogram, vector_histogram=vh)

    def to_dict(self, *, include_vector_histogram: bool = False) -> dict[str, Any]:
        """JSON-ready dict: ``bits``, ``reports``, ``bit_counts``, ``weight_histogram`` (and the full histogram)."""
        d: dict[str, Any] = {
            "bits": self.bits,
            "reports": self.reports,
            "bit_counts": [int(x) for x in self.bit_counts],
            "weight_histogram": [int(x) for x in self.weight_histogram],
        }
        if include_vector_histogram and self.vector_histogram is not None:
            d["vector_histogram"] = [int(x) for x in self.vector_histogram]
        return d

    def to_pandas(self) -> Any:
        """Per-bit counts as a ``pandas.DataFrame`` (columns ``bit``, ``count``)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_pandas() needs pandas: pip install 'sufficientdp[pandas]'") from exc
        return pd.DataFrame({"bit": np.arange(self.bits), "count": np.asarray(self.bit_counts)})


def tally_packed(words: np.ndarray, bits: int, *, full_histogram: bool | None = None) -> Tally:
    """Tally packed reports ``(n, W)`` uint64 (bit j in word j//64 at position j%64).

    Args:
        words: packed reports.
        bits: L.
        full_histogram: compute the 2^L histogram; default: when L <= 16. Allowed only for L <= 20.
    """
    bits = check_int("bits", bits, minimum=1)
    words = np.asarray(words)
    if words.ndim != 2 or words.shape[1] != words_per_report(bits):
        raise DataError(f"packed reports must have shape (n, {words_per_report(bits)}); got {words.shape}")
    if full_histogram is None:
        full_histogram = bits <= 16
    if full_histogram and bits > MAX_HISTOGRAM_BITS:
        from .._errors import ParameterError

        raise ParameterError(f"full_histogram needs bits in [1, {MAX_HISTOGRAM_BITS}]; got bits={bits}")
    vh = vector_histogram(words, bits) if full_histogram else None
    if vh is not None and words.shape[0] >= vh.shape[0]:  # summing the 2^L entries is the cheaper way
        return tally_histogram(vh, bits)
    return Tally(bits=bits, reports=int(words.shape[0]), bit_counts=bit_counts(words, bits),
                 weight_histogram=weight_histogram(words, bits), vector_histogram=vh)


def tally_histogram(vh: np.ndarray, bits: int) -> Tally:
    """The tally whose 2^L histogram is ``vh`` (index bit j ↔ report bit j): every count is a sum of its entries
    (M_j over the indices with bit j set, t_l over those with l bits set), exact in int64.

    Examples:
        >>> tally_histogram(np.array([1, 1, 0, 1]), 2).to_dict()
        {'bits': 2, 'reports': 3, 'bit_counts': [2, 1], 'weight_histogram': [1, 1, 1]}
    """
    bits = check_int("bits", bits, minimum=1, maximum=MAX_HISTOGRAM_BITS)
    vh = np.asarray(vh)
    if vh.shape != (1 << bits,) or vh.dtype.kind not in "iu":
        raise DataError(f"the vector histogram must be an integer array of shape ({1 << bits},); got {vh.shape}")
    vh = vh.astype(np.int64, copy=False)
    # Entry i has bit j set exactly in the second half of each block of 2^(j+1) consecutive entries.
    counts = np.array([int(vh.reshape(-1, 2, 1 << j)[:, 1, :].sum()) for j in range(bits)], dtype=np.int64)
    weight = np.bitwise_count(np.arange(1 << bits, dtype=np.uint32))
    weights = np.zeros(bits + 1, dtype=np.int64)
    np.add.at(weights, weight, vh)
    return Tally(bits=bits, reports=int(vh.sum()), bit_counts=counts, weight_histogram=weights,
                 vector_histogram=vh)


def tally(reports: ArrayLike, *, bits: int | None = None, full_histogram: bool | None = None) -> Tally:
    """Tally an ``(n, L)`` array of 0/1 reports into anonymous counts.

    Examples:
        >>> t = tally([[1, 0], [1, 1], [0, 0]])
        >>> t.reports, t.bit_counts.tolist(), t.weight_histogram.tolist(), t.vector_histogram.tolist()
        (3, [2, 1], [1, 1, 1], [1, 1, 0, 1])
    """
    if (isinstance(reports, np.ndarray) and reports.ndim == 2 and reports.dtype in (np.uint8, np.bool_)
            and reports.shape[1] >= 1 and (bits is None or check_int("bits", bits) == reports.shape[1])):
        words = _pack_bytes(reports)
        if words is not None:
            return tally_packed(words, reports.shape[1], full_histogram=full_histogram)
    arr = encode_bits(reports, bits)  # validates, and names the first bad value
    return tally_packed(pack_bits(arr), arr.shape[1], full_histogram=full_histogram)


#: Multiplying a little-endian word of eight 0/1 bytes by this moves byte k's low bit to bit 56 + k and nothing
#: else into bits 56..63 (the partial products b_i·2^(56 + 8i - 7k) land in the top byte only for i = k, and they
#: are distinct powers of two, so nothing carries): ``(word * M) >> 56`` is the eight bits packed, byte 0 first.
_GATHER = np.uint64(0x0102040810204080)
_PACK_ROWS = 1 << 16


def _pack_bytes(reports: np.ndarray) -> np.ndarray | None:
    """Pack an ``(n, L)`` uint8/bool array as :func:`pack_bits` does, eight columns per multiplication, in steps
    of ``_PACK_ROWS`` rows; None when a value is not 0 or 1 (the caller then reports it)."""
    n, length = reports.shape
    n_bytes = -(-length // 8)
    n_words = words_per_report(length)
    out = np.zeros((n, n_words), dtype=np.uint64)
    out_bytes = out.view(np.uint8)
    buf = np.zeros((min(n, _PACK_ROWS), 8 * n_bytes), dtype=np.uint8)
    for begin in range(0, n, _PACK_ROWS):
        chunk = reports[begin:begin + _PACK_ROWS].view(np.uint8)
        rows = chunk.shape[0]
        if chunk.max() > 1:
            return None
        if length % 8 == 0 and chunk.flags.c_contiguous:
            groups = chunk.view("<u8")
        else:
            buf[:rows, :length] = chunk
            groups = buf[:rows].view("<u8")
        packed = (groups * _GATHER) >> np.uint64(56)
        out_bytes[begin:begin + rows, :n_bytes] = packed
    if not np.little_endian:  # pragma: no cover - the bytes were laid out little-endian
        out.byteswap(inplace=True)
    return out
