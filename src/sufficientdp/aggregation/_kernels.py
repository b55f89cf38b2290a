"""Tally kernels of the anonymizing aggregation: per-bit counts, set-bit histogram, full-vector histogram.

The server drops identity and order and keeps only tallies of the randomized reports (seed 001 §1.3, step 2 of the
perfectly anonymized mechanism A). Reports arrive *packed*: an L-bit report is a row of ``W = ceil(L / 64)``
unsigned 64-bit words, bit ``j`` of the report is bit ``j % 64`` (LSB first) of word ``j // 64``, and the padding
bits beyond ``L`` are zero. Three tallies are computed here:

* :func:`bit_counts` -- the per-bit margins ``M_j = #{i : x_ij = 1}``;
* :func:`weight_histogram` -- the set-bit histogram ``T = (t_0, ..., t_L)`` of seed 001 eq. (3.3), the only
  statistic the privacy ratio of a zero-valued collection depends on (eq. 3.4);
* :func:`vector_histogram` -- the full tally over all ``2**L`` vectors (small L only).

All arithmetic is integer and exact. :func:`bit_counts` is the hot path; it runs a bit-sliced Harley-Seal
carry-save adder (CSA) tree with numpy's vectorized bitwise ufuncs, so each 64-bit word costs about five
bitwise operations instead of 64 unpacked bytes. :func:`bit_counts_reference` is the obvious
``unpackbits(...).sum(axis=0)`` version, kept as test oracle and benchmark baseline.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import DataError, ParameterError
from .._validation import check_int

__all__ = [
    "bit_counts",
    "bit_counts_reference",
    "vector_histogram",
    "weight_histogram",
]

_WORD_BITS = 64
_MAX_VECTOR_BITS = 20

# Words per bit-sliced plane of the Harley-Seal tree (rows_per_plane * W ~ this). 2**14 words = 128 KiB per plane:
# large enough to amortize the ~1 us overhead of a numpy call over 75 calls per 16 planes, small enough that the
# 11 working planes (1.4 MiB) stay in the 2 MiB L2. Measured on the benchmark machine (AMD EPYC, AVX-512, n = 2e7):
# 2**12 -> 4.8e8, 2**13..2**15 -> 5.4e8, 2**16 -> 4.8e8 words/s.
_HS_LANES = 1 << 14
# Below this many words the Harley-Seal set-up and flush cost more than they save: a plain 3:2 CSA reduction
# (_wallace_counts) runs at 2-3e8 words/s there. Above it, planes hold at least words/64 words (>= 4 chunks).
_HS_MIN_WORDS = 1 << 18
# Below this many rows a weight class is counted by unpacking instead of further CSA steps.
_UNPACK_ROWS = 64
# Rows per chunk for the reference, the histograms and the padding check (bounded temporaries).
_CHUNK_ROWS = 1 << 18
_VECTOR_CHUNK_ROWS = 1 << 22

_xor = np.bitwise_xor
_and = np.bitwise_and
_or = np.bitwise_or


# --------------------------------------------------------------------------------------------------- validation


def _check_bits(bits: Any) -> int:
    return check_int("bits", bits, minimum=1)


def _as_words(words: Any, bits: int, name: str = "words") -> np.ndarray:
    """Return ``words`` as a 2-D ``(n, W)`` unsigned-integer array (no copy, no dtype change) after checking it.

    Any unsigned integer dtype is accepted (it converts losslessly to uint64); the kernels cast chunk by chunk.
    """
    arr = np.asarray(words)
    width = -(-bits // _WORD_BITS)
    if arr.dtype.kind != "u":
        raise DataError(
            f"{name} must have an unsigned integer dtype (uint64 words, or uint8/16/32 which convert losslessly); "
            f"got dtype {arr.dtype}"
        )
    if arr.ndim == 1 and width == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2 or arr.shape[1] != width:
        shapes = f"(n, {width})" + (" or (n,)" if width == 1 else "")
        raise DataError(
            f"{name} must have shape {shapes}: one row of W = ceil(bits/64) = {width} words per report for "
            f"bits={bits}; got shape {arr.shape}"
        )
    return arr


def _padding_mask(bits: int) -> int:
    """Mask of the padding bits of the last word (0 when ``bits`` is a multiple of 64)."""
    used = bits % _WORD_BITS
    return 0 if used == 0 else ((1 << _WORD_BITS) - 1) ^ ((1 << used) - 1)


def _check_padding_counts(counts: np.ndarray, bits: int, name: str = "words") -> np.ndarray:
    """Raise if any padding bit beyond ``bits`` was counted; return the counts of the ``bits`` real bits."""
    if counts[bits:].any():
        first = bits + int(np.flatnonzero(counts[bits:])[0])
        raise DataError(
            f"{name} has padding bits set beyond bits={bits} (e.g. bit {first} is set in {counts[first]} "
            f"report(s)); padding bits must be zero"
        )
    return counts[:bits].copy()


def _check_padding_zero(arr: np.ndarray, bits: int, name: str = "words") -> None:
    """Raise :class:`DataError` if a padding bit of the last word is set (one pass over the last column)."""
    mask = _padding_mask(bits)
    if mask == 0:
        return
    last = arr[:, -1]
    umask = np.uint64(mask)
    for start in range(0, last.shape[0], _CHUNK_ROWS):
        if np.bitwise_and(last[start : start + _CHUNK_ROWS], umask).any():
            raise DataError(f"{name} has padding bits set beyond bits={bits}; padding bits must be zero")


# -------------------------------------------------------------------------------------------------- reference


def _unpack_sum(block: np.ndarray) -> np.ndarray:
    """Per-bit counts (int64, length ``64 * W``) of a small ``(m, W)`` block, by unpacking to bytes."""
    little = np.ascontiguousarray(block, dtype=np.dtype("<u8"))
    unpacked = np.unpackbits(little.view(np.uint8), axis=1, bitorder="little")
    out: np.ndarray = unpacked.sum(axis=0, dtype=np.int64)
    return out


def bit_counts_reference(words: np.ndarray, bits: int) -> np.ndarray:
    """Per-bit counts ``M_j`` by unpacking every report to bytes (obvious version; test oracle and baseline).

    ``M_j = sum_i x_ij`` for ``j = 0, ..., L-1``: the per-bit margins of the anonymized tally.

    Args:
        words: packed reports, shape ``(n, W)`` with ``W = ceil(bits / 64)`` (or ``(n,)`` when ``W == 1``),
            any unsigned integer dtype; bit ``j`` is bit ``j % 64`` (LSB first) of word ``j // 64``.
        bits: report length L, an integer >= 1.

    Returns:
        int64 array of shape ``(bits,)``.

    Raises:
        ParameterError: if ``bits`` is not an integer >= 1.
        DataError: if ``words`` has the wrong dtype or shape, or a padding bit beyond ``bits`` is set.

    References:
        seed 001 §1.3 (tally of the anonymized reports), eq. (3.3)-(3.4).

    Examples:
        >>> import numpy as np
        >>> bit_counts_reference(np.array([0b101, 0b100, 0b001], dtype=np.uint64), 3).tolist()
        [2, 0, 2]
    """
    bits = _check_bits(bits)
    arr = _as_words(words, bits)
    counts = np.zeros(arr.shape[1] * _WORD_BITS, dtype=np.int64)
    for start in range(0, arr.shape[0], _CHUNK_ROWS):
        counts += _unpack_sum(arr[start : start + _CHUNK_ROWS])
    return _check_padding_counts(counts, bits)


# --------------------------------------------------------------------------------- fast kernel: Harley-Seal tree


class _Scratch:
    """Temporary planes shared by every level of the tree (all 1-D uint64 of ``lanes`` words)."""

    __slots__ = ("eights_a", "eights_b", "fours_a", "fours_b", "twos_a", "twos_b", "u")

    def __init__(self, lanes: int) -> None:
        self.u = np.empty(lanes, dtype=np.uint64)
        self.twos_a = np.empty(lanes, dtype=np.uint64)
        self.twos_b = np.empty(lanes, dtype=np.uint64)
        self.fours_a = np.empty(lanes, dtype=np.uint64)
        self.fours_b = np.empty(lanes, dtype=np.uint64)
        self.eights_a = np.empty(lanes, dtype=np.uint64)
        self.eights_b = np.empty(lanes, dtype=np.uint64)


def _csa(scratch: _Scratch, high: np.ndarray, low: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """Carry-save adder on bit slices: ``low, high <- sum and carry of (low + b + c)``, 5 bitwise ops.

    ``low`` is updated in place (sum bit, same weight) and ``high`` receives the carry (double weight):
    ``sum = low ^ b ^ c``, ``carry = (low & b) | ((low ^ b) & c)``.
    """
    u = scratch.u
    _xor(low, b, out=u)
    _and(low, b, out=high)
    _xor(u, c, out=low)
    _and(u, c, out=u)
    _or(high, u, out=high)


class _Level:
    """One level of the Harley-Seal hierarchy: inputs of weight ``16**k`` arrive 16 planes at a time.

    The state planes ``ones, twos, fours, eights`` hold, per lane, a 4-bit bit-sliced running count of weight
    ``16**k * (1, 2, 4, 8)``; each batch of 16 input planes is folded in with 15 CSAs, which emit one plane of
    weight ``16**(k+1)`` (the "sixteens") to the next level.
    """

    __slots__ = ("buffer", "exponent", "fill", "state")

    def __init__(self, exponent: int, lanes: int, *, buffered: bool) -> None:
        self.exponent = exponent  # log2 of the weight of one input plane
        self.state = np.zeros((4, lanes), dtype=np.uint64)
        # Pending input planes: (16, lanes) for levels >= 1, which receive one plane at a time; level 0 gets
        # whole chunks of the input and needs none.
        self.buffer = np.empty((16 if buffered else 0, lanes), dtype=np.uint64)
        self.fill = 0

    def fold(self, scratch: _Scratch, planes: np.ndarray, sixteens: np.ndarray) -> None:
        """Add the 16 planes ``planes[0..15]`` into the state; write the weight-16 carry plane to ``sixteens``."""
        ones, twos, fours, eights = self.state
        s = scratch
        for half, eights_x in ((0, s.eights_a), (8, s.eights_b)):
            _csa(s, s.twos_a, ones, planes[half + 0], planes[half + 1])
            _csa(s, s.twos_b, ones, planes[half + 2], planes[half + 3])
            _csa(s, s.fours_a, twos, s.twos_a, s.twos_b)
            _csa(s, s.twos_a, ones, planes[half + 4], planes[half + 5])
            _csa(s, s.twos_b, ones, planes[half + 6], planes[half + 7])
            _csa(s, s.fours_b, twos, s.twos_a, s.twos_b)
            _csa(s, eights_x, fours, s.fours_a, s.fours_b)
        _csa(s, sixteens, eights, s.eights_a, s.eights_b)


def _push(levels: list[_Level], index: int, scratch: _Scratch, planes: np.ndarray) -> None:
    """Fold 16 planes into ``levels[index]`` and propagate the emitted sixteens upward (creating levels)."""
    lanes = planes.shape[1]
    while True:
        if index + 1 == len(levels):
            levels.append(_Level(levels[index].exponent + 4, lanes, buffered=True))
        nxt = levels[index + 1]
        levels[index].fold(scratch, planes, nxt.buffer[nxt.fill])
        nxt.fill += 1
        if nxt.fill < 16:
            return
        nxt.fill = 0
        planes = nxt.buffer
        index += 1


def _wallace_counts(groups: dict[int, list[np.ndarray]], width: int) -> np.ndarray:
    """Exact per-bit counts of weighted word blocks: ``sum_e 2**e * popcount-per-bit(concat(groups[e]))``.

    Each weight class ``e`` (blocks of shape ``(m_i, width)``) is reduced with 3:2 CSA steps on thirds of its rows
    -- the sum stays in class ``e``, the carry moves to class ``e + 1`` -- until fewer than ``_UNPACK_ROWS`` rows
    remain, which are then unpacked. Used to flush the Harley-Seal state and the ragged tail.
    """
    total = np.zeros(width * _WORD_BITS, dtype=np.int64)
    while groups:
        exponent = min(groups)
        rows = np.concatenate(groups.pop(exponent), axis=0)  # always a fresh array: safe to modify in place
        while rows.shape[0] >= _UNPACK_ROWS:
            third = rows.shape[0] // 3
            a, b, c = rows[:third], rows[third : 2 * third], rows[2 * third : 3 * third]
            u = np.bitwise_xor(a, b)
            _and(a, b, out=a)
            _and(u, c, out=b)
            _xor(u, c, out=c)  # sum bit, weight 2**exponent
            _or(a, b, out=a)  # carry bit, weight 2**(exponent + 1)
            groups.setdefault(exponent + 1, []).append(a)
            rows = rows[2 * third :]  # sums followed by the (< 3) leftover rows: still contiguous
        total += _unpack_sum(rows) << exponent
    return total


def _bit_counts_hs(arr: np.ndarray, lanes: int = _HS_LANES) -> np.ndarray:
    """Per-bit counts (length ``64 * W``, padding bits included) of a validated ``(n, W)`` array.

    Rows are taken 16 * R at a time (``R * W ~ lanes``): the chunk, seen as 16 planes of ``R * W`` words, is folded
    into a Harley-Seal hierarchy (levels of weight 1, 16, 256, ...). At the end the state planes, the partial level
    buffers and the ragged tail are counted exactly by :func:`_wallace_counts`.

    Exactness: every plane is a bit-sliced integer, every CSA is exact, and the final weighted sums are int64 and
    bounded by ``n`` (so no overflow for ``n < 2**63``).
    """
    n, width = arr.shape
    rows_per_plane = max(1, min(lanes // width, n // 16))
    plane_words = rows_per_plane * width
    chunk_rows = 16 * rows_per_plane
    full = n - n % chunk_rows

    groups: dict[int, list[np.ndarray]] = {}
    if full:
        scratch = _Scratch(plane_words)
        levels = [_Level(0, plane_words, buffered=False)]
        for start in range(0, full, chunk_rows):
            chunk = np.ascontiguousarray(arr[start : start + chunk_rows])
            _push(levels, 0, scratch, chunk.reshape(16, plane_words))
        for level in levels:
            for p in range(4):
                groups.setdefault(level.exponent + p, []).append(level.state[p].reshape(-1, width))
            if level.fill:
                groups.setdefault(level.exponent, []).append(level.buffer[: level.fill].reshape(-1, width))
    groups.setdefault(0, []).append(arr[full:].astype(np.uint64, copy=False))
    return _wallace_counts(groups, width)


def _bit_counts_fast(arr: np.ndarray) -> np.ndarray:
    """Per-bit counts (length ``64 * W``) of a validated ``(n, W)`` array, choosing the strategy by size."""
    n, width = arr.shape
    total_words = n * width
    if total_words < _HS_MIN_WORDS:
        return _wallace_counts({0: [arr.astype(np.uint64, copy=False)]}, width)
    return _bit_counts_hs(arr, lanes=min(_HS_LANES, total_words // 64))


def bit_counts(words: np.ndarray, bits: int) -> np.ndarray:
    """Per-bit counts ``M_j`` of packed reports, exact, with a bit-sliced carry-save adder tree.

    ``M_j = #{i : bit j of report i is set} = sum_i x_ij`` for ``j = 0, ..., L-1``: the per-bit margins of the
    anonymized tally (seed 001 §1.3, step 2). Equal to :func:`bit_counts_reference` and 20-40x faster at L = 64
    (3-5e8 reports/s on one core; see ``benchmarks/bench_aggregation.py``). Each 64-bit word costs 4.7 bitwise
    ufunc passes over cache-resident bit planes (a Harley-Seal tree of carry-save adders: 15 adders of 5 ops per
    16 words), so the speed is bound by numpy's per-pass cache bandwidth, not by memory. Small inputs
    (< 2**18 words) use a plain 3:2 carry-save reduction instead. Extra memory is bounded whatever ``n``
    (20 planes of at most 128 KiB per level of weight 16**k: about 10 MiB for n = 1e9); counts are exact int64
    for any ``n < 2**63``.

    Args:
        words: packed reports, shape ``(n, W)`` with ``W = ceil(bits / 64)`` (or ``(n,)`` when ``W == 1``);
            uint64, or any unsigned integer dtype (converted losslessly). Bit ``j`` of a report is bit ``j % 64``
            (LSB first) of word ``j // 64``; padding bits beyond ``bits`` must be zero. ``n = 0`` is allowed.
        bits: report length L, an integer >= 1.

    Returns:
        int64 array of shape ``(bits,)``.

    Raises:
        ParameterError: if ``bits`` is not an integer >= 1.
        DataError: if ``words`` has the wrong dtype or shape, or a padding bit beyond ``bits`` is set.

    References:
        seed 001 §1.3 (perfectly anonymized mechanism: tally of the randomized reports), eq. (3.3)-(3.4).

    Examples:
        >>> import numpy as np
        >>> # reports 1101, 0100, 0001 written bit 0 first, i.e. the words 0b1011, 0b0010, 0b1000
        >>> words = np.array([[0b1011], [0b0010], [0b1000]], dtype=np.uint64)
        >>> bit_counts(words, 4).tolist()
        [1, 2, 0, 2]
    """
    bits = _check_bits(bits)
    arr = _as_words(words, bits)
    return _check_padding_counts(_bit_counts_fast(arr), bits)


# ------------------------------------------------------------------------------------------------- histograms


def weight_histogram(words: np.ndarray, bits: int) -> np.ndarray:
    """Set-bit histogram ``T = (t_0, ..., t_L)``: ``t_l`` = number of reports with exactly ``l`` set bits.

    ``t_l = #{i : sum_j x_ij = l}`` (seed 001 eq. 3.3). For a zero-valued collection the privacy ratio depends on
    the synthetic collection only through T: ``R(S) = (1/N) sum_l t_l (q/p)**(L - 2l)`` (eq. 3.4). Computed as
    ``np.bincount`` of the row popcounts (``np.bitwise_count`` summed over the row's words), chunk by chunk.

    Args:
        words: packed reports, shape ``(n, W)`` with ``W = ceil(bits / 64)`` (or ``(n,)`` when ``W == 1``), any
            unsigned integer dtype; padding bits beyond ``bits`` must be zero. ``n = 0`` is allowed.
        bits: report length L, an integer >= 1.

    Returns:
        int64 array of shape ``(bits + 1,)`` summing to ``n``.

    Raises:
        ParameterError: if ``bits`` is not an integer >= 1.
        DataError: if ``words`` has the wrong dtype or shape, or a padding bit beyond ``bits`` is set.

    References:
        seed 001 eq. (3.3) (definition of T), eq. (3.4) (R(S) as a function of T).

    Examples:
        >>> import numpy as np
        >>> weight_histogram(np.array([0b000, 0b011, 0b101, 0b111], dtype=np.uint64), 3).tolist()
        [1, 0, 2, 1]
    """
    bits = _check_bits(bits)
    arr = _as_words(words, bits)
    _check_padding_zero(arr, bits)
    n, width = arr.shape
    hist = np.zeros(bits + 1, dtype=np.int64)
    for start in range(0, n, _CHUNK_ROWS):
        pop = np.bitwise_count(arr[start : start + _CHUNK_ROWS])  # uint8, (rows, W)
        if width == 1:
            weights = pop.reshape(-1)
        else:
            weights = pop[:, 0].astype(np.intp)
            for w in range(1, width):
                weights += pop[:, w]
        hist += np.bincount(weights, minlength=bits + 1)
    return hist


def vector_histogram(words: np.ndarray, bits: int) -> np.ndarray:
    """Full tally over all ``2**L`` vectors: entry ``v`` counts the reports equal to the vector with value ``v``.

    ``s_v = #{i : sum_j x_ij 2**j = v}`` (report bit ``j`` is bit ``j`` of ``v``, LSB first), i.e. the output of
    the perfectly anonymized mechanism A of seed 001 §1.3 and the ``s_i`` of eq. (3.4). Only for
    ``1 <= L <= 20`` (the result has ``2**L`` entries); computed by ``np.bincount`` of the single word of each
    report.

    Args:
        words: packed reports, shape ``(n, 1)`` or ``(n,)``, any unsigned integer dtype; values must be
            ``< 2**bits`` (padding bits zero). ``n = 0`` is allowed.
        bits: report length L, an integer in [1, 20].

    Returns:
        int64 array of shape ``(2**bits,)`` summing to ``n``.

    Raises:
        ParameterError: if ``bits`` is not an integer in [1, 20].
        DataError: if ``words`` has the wrong dtype or shape, or a value is ``>= 2**bits``.

    References:
        seed 001 §1.3 (tally into counts of unique values), eq. (3.4) (the counts ``s_i``).

    Examples:
        >>> import numpy as np
        >>> vector_histogram(np.array([3, 0, 3, 1], dtype=np.uint64), 2).tolist()
        [1, 1, 0, 2]
    """
    try:
        bits = check_int("bits", bits, minimum=1, maximum=_MAX_VECTOR_BITS)
    except ParameterError:
        raise ParameterError(
            f"bits must be an integer in [1, {_MAX_VECTOR_BITS}] for vector_histogram (2**bits counts); "
            f"got {bits!r}"
        ) from None
    arr = _as_words(words, bits)
    values = arr[:, 0]  # W == 1; a view even when the rows are strided
    size = 1 << bits
    hist = np.zeros(size, dtype=np.int64)
    native_u64 = values.dtype == np.uint64 and values.dtype.isnative
    for start in range(0, values.shape[0], _VECTOR_CHUNK_ROWS):
        chunk = values[start : start + _VECTOR_CHUNK_ROWS]
        top = int(chunk.max())
        if top >= size:
            raise DataError(f"words has a value {top} >= 2**bits = {size} (padding bits set) for bits={bits}")
        # Values are < 2**20, so the int64 view of uint64 is the same numbers (no copy); bincount needs intp.
        index = chunk.view(np.int64) if native_u64 else chunk.astype(np.intp)
        hist += np.bincount(index, minlength=size)
    return hist
