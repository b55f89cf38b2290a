"""Packing of L-bit reports into 64-bit words (the randomizer's and the tally kernels' layout).

A report ``x in {0, 1}**L`` (seed 001 §1.3) is stored in ``W = ceil(L / 64)`` ``uint64`` words: bit j of the report
is bit ``j % 64`` (least significant first) of word ``j // 64``. The ``64 * W - L`` padding bits of the last word
are always 0; :func:`padding_mask` has 1s exactly at the L valid positions.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .._errors import DataError
from .._validation import check_int

__all__ = ["pack_bits", "padding_mask", "unpack_bits", "words_per_report"]

_WORD_BITS: Final = 64
#: Rows packed per step (bounds the temporaries of the uint8 view and the padding copy).
_ROWS_PER_STEP: Final = 1 << 16


def words_per_report(bits: int) -> int:
    """Number of ``uint64`` words holding an L-bit report: ``ceil(L / 64)``.

    Raises:
        ParameterError: if ``bits`` is not an integer >= 1.

    Examples:
        >>> words_per_report(64), words_per_report(65), words_per_report(1024)
        (1, 2, 16)
    """
    bits = check_int("bits", bits, minimum=1)
    return -(-bits // _WORD_BITS)


def padding_mask(bits: int) -> np.ndarray:
    """``(W,)`` ``uint64`` mask with 1s exactly at the L valid bit positions of a packed report.

    Examples:
        >>> [hex(int(w)) for w in padding_mask(68)]
        ['0xffffffffffffffff', '0xf']
    """
    n_words = words_per_report(bits)
    mask = np.full(n_words, np.uint64(0xFFFF_FFFF_FFFF_FFFF))
    tail = bits % _WORD_BITS
    if tail:
        mask[-1] = np.uint64((1 << tail) - 1)
    return mask


def _first_bad(values: np.ndarray) -> str:
    """Describe the first value of a 2-D array that is neither 0 nor 1 (only called on the error path)."""
    row, col = np.argwhere((values != 0) & (values != 1))[0]
    return f"got {values[row, col].item()!r} at row {int(row)}, bit {int(col)}"


def pack_bits(bits: Any) -> np.ndarray:
    """Pack an ``(n, L)`` array of 0/1 into ``(n, ceil(L/64))`` ``uint64`` words (bit j -> word j//64, bit j%64).

    Args:
        bits: ``(n, L)`` array (or array-like) of 0/1 with a boolean or integer dtype, ``L >= 1``.

    Returns:
        ``(n, W)`` ``uint64`` array; padding bits are 0.

    Raises:
        DataError: if the input is not 2-D, has no bit column, has a non-integer dtype, or contains values
            other than 0 and 1.

    References:
        seed 001 §1.3 (reports are vectors in ``{0, 1}**L``).

    Examples:
        >>> pack_bits(np.array([[1, 0, 1], [0, 0, 0]])).tolist()
        [[5], [0]]
    """
    arr = np.asarray(bits)
    if arr.ndim != 2:
        raise DataError(f"reports must be a 2-D array (reports x bits); got shape {arr.shape}")
    n, length = arr.shape
    if length == 0:
        raise DataError(f"reports must have at least one bit column; got shape {arr.shape}")
    if arr.dtype != np.bool_:
        if arr.dtype.kind not in "iu":
            raise DataError(f"reports must have a boolean or integer dtype holding 0/1; got dtype {arr.dtype}")
        # One reduction decides validity: viewed as unsigned, negative values are huge.
        unsigned = arr.view(arr.dtype.str.replace("i", "u")) if arr.dtype.kind == "i" else arr
        if arr.size and unsigned.max() > 1:
            raise DataError(f"reports must contain only 0 and 1; {_first_bad(arr)}")
    n_words = -(-length // _WORD_BITS)
    out = np.empty((n, n_words), dtype=np.uint64)
    out_bytes = out.view(np.uint8)  # (n, 8 W); byte k of a row is bits 8k .. 8k+7, little-endian words
    n_bytes = -(-length // 8)
    for begin in range(0, n, _ROWS_PER_STEP):
        end = min(begin + _ROWS_PER_STEP, n)
        packed = np.packbits(arr[begin:end], axis=1, bitorder="little")  # (rows, ceil(L/8)), padding bits 0
        out_bytes[begin:end, :n_bytes] = packed
        out_bytes[begin:end, n_bytes:] = 0
    if not np.little_endian:  # pragma: no cover - the bytes were laid out little-endian
        out.byteswap(inplace=True)
    return out


def _check_words(words: Any, bits: int, name: str = "words") -> np.ndarray:
    """Validate packed reports: 2-D ``uint64`` with ``words_per_report(bits)`` columns and zero padding."""
    if not isinstance(words, np.ndarray):
        raise DataError(f"{name} must be a numpy uint64 array of packed reports; got {type(words).__name__}")
    n_words = words_per_report(bits)
    if words.ndim != 2 or words.shape[1] != n_words:
        raise DataError(f"{name} must have shape (n, {n_words}) for bits={bits}; got {words.shape}")
    if words.dtype.kind != "u" or words.dtype.itemsize != 8:
        raise DataError(f"{name} must have dtype uint64; got {words.dtype}")
    tail = bits % _WORD_BITS
    if tail and words.shape[0]:
        high = np.uint64(((1 << _WORD_BITS) - 1) ^ ((1 << tail) - 1))
        bad = np.flatnonzero(words[:, -1] & high)
        if bad.size:
            raise DataError(
                f"{name} has padding bits set beyond bit {bits - 1} (row {int(bad[0])}); "
                f"is bits={bits} the width the reports were packed with?"
            )
    return words


def unpack_bits(words: np.ndarray, bits: int) -> np.ndarray:
    """Inverse of :func:`pack_bits`: ``(n, W)`` ``uint64`` words -> ``(n, L)`` ``uint8`` array of 0/1.

    Args:
        words: packed reports, ``(n, ceil(bits/64))`` ``uint64``, padding bits 0.
        bits: L, the report width, ``>= 1``.

    Raises:
        ParameterError: if ``bits`` is not an integer >= 1.
        DataError: if ``words`` has the wrong shape or dtype, or padding bits set.

    Examples:
        >>> unpack_bits(np.array([[5]], dtype=np.uint64), 3).tolist()
        [[1, 0, 1]]
    """
    bits = check_int("bits", bits, minimum=1)
    words = _check_words(words, bits)
    little = np.ascontiguousarray(words, dtype="<u8")
    return np.unpackbits(little.view(np.uint8), axis=1, count=bits, bitorder="little")
