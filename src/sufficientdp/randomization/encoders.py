"""Encoders: turn a person's value into an L-bit report before randomization (seed 001 §1.3, §5).

Three encodings:

* :func:`encode_bits` — the value already is a bit vector (one 0/1 column per bit);
* :func:`encode_one_hot` — a category in ``[0, L)`` becomes a vector with exactly one set bit (§5);
* :func:`encode_set` — a set of at most ``w`` items from ``[0, L)`` becomes a vector with at most ``w`` set bits,
  the bounded-weight case of the cardinality reduction (§5).

All return an ``(n, L)`` ``uint8`` array of 0/1; pass it to :func:`sufficientdp.randomize`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._errors import DataError
from .._validation import MAX_BITS, check_int

__all__ = ["encode_bits", "encode_one_hot", "encode_set"]


def _bit_value(v: object) -> int:
    """0 or 1 for a number or boolean equal to it (Python's or numpy's), else -1."""
    if isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)) and (v == 0 or v == 1):
        return int(v)
    return -1


_bit_of = np.frompyfunc(_bit_value, 1, 1)


def encode_bits(values: ArrayLike, bits: int | None = None, *, name: str = "reports") -> np.ndarray:
    """Validate a 2-D array of 0/1 values (one row per person) and return it as ``uint8``.

    Args:
        values: array-like of shape (n, L) holding only 0 and 1 (bools allowed; an object array, such as pandas'
            nullable or Arrow-backed columns give, may hold Python or numpy numbers and booleans).
        bits: expected L; if given, the number of columns must match.
        name: what the messages call the array (``"values"`` for true values, the default for reports).

    Raises:
        DataError: wrong shape or a value other than 0/1.

    Examples:
        >>> encode_bits([[1, 0, 1]]).tolist()
        [[1, 0, 1]]
    """
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as exc:  # ragged rows, objects numpy cannot hold
        raise DataError(f"{name} must be a rectangular 2-D array of 0/1 values; got {type(values).__name__} "
                        f"({str(exc)[:80]})") from None
    if arr.ndim != 2:
        raise DataError(f"{name} must be a 2-D array (people x bits); got shape {arr.shape}")
    if bits is not None:
        bits = check_int("bits", bits, minimum=1)
        if arr.shape[1] != bits:
            raise DataError(f"{name} must have {bits} columns (one per bit); got {arr.shape[1]}")
    if arr.shape[1] < 1:
        raise DataError(f"{name} must have at least one bit column; got 0")
    if arr.dtype == bool:
        return arr.astype(np.uint8)
    if arr.dtype == object:  # e.g. pandas' nullable and Arrow-backed columns: the numbers and booleans they hold
        held, arr = arr, _bit_of(arr).astype(np.int8)  # -1 where an element is anything else (missing, text)
        bad_at = np.argwhere(arr < 0)
        if bad_at.size:
            i, j = map(int, bad_at[0])
            v = held[i, j]
            raise DataError(f"{name} must hold only 0 and 1; got {v.item() if isinstance(v, np.generic) else v!r} "
                            f"at row {i}, bit {j}")
    if arr.dtype.kind not in "iuf":
        raise DataError(f"{name} must hold 0/1 numbers; got dtype {arr.dtype}")
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise DataError(f"{name} must hold only 0 and 1; got {arr[i, j].item()!r} at row {i}, bit {j}")
    return arr.astype(np.uint8)


def encode_one_hot(categories: ArrayLike, bits: int) -> np.ndarray:
    """One-hot encode categories in ``[0, bits)``: row i has bit ``categories[i]`` set; ``bits`` in [1, 4096] (the
    analyses' limit, ``_validation.MAX_BITS``).

    Examples:
        >>> encode_one_hot([2, 0], bits=3).tolist()
        [[0, 0, 1], [1, 0, 0]]
    """
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)  # the vectors are allocated: bounded
    cats = np.asarray(categories)
    if cats.ndim != 1:
        raise DataError(f"categories must be 1-D; got shape {cats.shape}")
    if cats.size and (cats.dtype.kind not in "iu" and not np.all(np.equal(np.mod(cats, 1), 0))):
        raise DataError("categories must be integers in [0, bits)")
    cats = cats.astype(np.int64)
    if cats.size and (cats.min() < 0 or cats.max() >= bits):
        bad = cats[(cats < 0) | (cats >= bits)][0]
        raise DataError(f"categories must be in [0, {bits}); got {int(bad)}")
    out = np.zeros((cats.size, bits), dtype=np.uint8)
    out[np.arange(cats.size), cats] = 1
    return out


def encode_set(items: Iterable[Sequence[int] | Iterable[int]], bits: int, max_weight: int) -> np.ndarray:
    """Encode sets of at most ``max_weight`` distinct items from ``[0, bits)`` as bit vectors.

    Reports with at most w set bits are the case of seed 001 §5 (cardinality reduction).

    Raises:
        DataError: an item out of range, a duplicate, or a set larger than ``max_weight``.

    Examples:
        >>> encode_set([[0, 2], []], bits=4, max_weight=2).tolist()
        [[1, 0, 1, 0], [0, 0, 0, 0]]
    """
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)  # the vectors are allocated: bounded
    max_weight = check_int("max_weight", max_weight, minimum=1, maximum=bits)
    rows: list[list[int]] = [list(s) for s in items]
    out = np.zeros((len(rows), bits), dtype=np.uint8)
    for i, row in enumerate(rows):
        if len(row) > max_weight:
            raise DataError(f"set {i} has {len(row)} items; max_weight allows at most {max_weight}")
        if len(set(row)) != len(row):
            raise DataError(f"set {i} has duplicate items: {row}")
        for item in row:
            if isinstance(item, bool) or not isinstance(item, (int, np.integer)) or not (0 <= item < bits):
                raise DataError(f"set {i} has item {item!r}; items must be integers in [0, {bits})")
            out[i, item] = 1
    return out
