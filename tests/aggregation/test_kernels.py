"""Tests of the tally kernels (seed 001 §1.3, eq. 3.3-3.4).

Truth comes from outside the code under test: the unpacked 0/1 matrix the reports were packed from (column sums,
row sums), brute-force Python loops over Python ints, ``collections.Counter``, and data built so that the counts
are known by construction (a tiled block, all-ones reports). Packing uses a local helper, not the library's.
"""

from __future__ import annotations

import doctest
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sufficientdp._errors import DataError, ParameterError
from sufficientdp.aggregation import _kernels
from sufficientdp.aggregation._kernels import (
    _bit_counts_hs,
    bit_counts,
    bit_counts_reference,
    vector_histogram,
    weight_histogram,
)

# Lane counts for the private kernel: 1, 2, 3 force many tiny planes and a deep hierarchy (weights 1, 16, 256,
# 4096, ...) even for a few hundred reports; the last is the production default.
LANES = [1, 2, 3, 5, 16, 64, _kernels._HS_LANES]


def pack(bitmatrix: np.ndarray) -> np.ndarray:
    """Pack an ``(n, L)`` 0/1 matrix into ``(n, ceil(L/64))`` little-endian uint64 words (bit j -> word j//64)."""
    n, length = bitmatrix.shape
    width = -(-length // 64)
    packed = np.packbits(bitmatrix.astype(np.uint8), axis=1, bitorder="little")  # (n, ceil(L/8))
    padded = np.zeros((n, 8 * width), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view("<u8").astype(np.uint64)


def random_bits(rng: np.random.Generator, n: int, length: int, density: float) -> np.ndarray:
    return (rng.random((n, length)) < density).astype(np.uint8)


def python_int(row: np.ndarray) -> int:
    """The report as a Python int: bit j of the report is bit j of the int (brute force, no numpy bit tricks)."""
    return sum(int(word) << (64 * w) for w, word in enumerate(row))


def brute_bit_counts(words: np.ndarray, length: int) -> list[int]:
    values = [python_int(row) for row in words]
    return [sum((v >> j) & 1 for v in values) for j in range(length)]


def brute_weight_histogram(words: np.ndarray, length: int) -> list[int]:
    hist = [0] * (length + 1)
    for row in words:
        hist[python_int(row).bit_count()] += 1
    return hist


# --------------------------------------------------------------------------------------------- pack self-check


def test_pack_helper_layout() -> None:
    bitmatrix = np.zeros((1, 70), dtype=np.uint8)
    bitmatrix[0, [0, 3, 63, 64, 69]] = 1
    words = pack(bitmatrix)
    assert words.shape == (1, 2)
    assert int(words[0, 0]) == (1 << 0) | (1 << 3) | (1 << 63)
    assert int(words[0, 1]) == (1 << 0) | (1 << 5)


# ---------------------------------------------------------------------------------------- property-based tests


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    length=st.integers(1, 200),
    n=st.integers(0, 300),
    seed=st.integers(0, 2**32 - 1),
    density=st.sampled_from([0.0, 0.03, 0.5, 0.97, 1.0]),
    lanes=st.sampled_from(LANES),
)
def test_kernels_match_unpacked_truth(length: int, n: int, seed: int, density: float, lanes: int) -> None:
    rng = np.random.default_rng(seed)
    bitmatrix = random_bits(rng, n, length, density)
    words = pack(bitmatrix)
    truth = bitmatrix.sum(axis=0, dtype=np.int64)  # M_j, from the matrix before packing

    fast = bit_counts(words, length)
    assert fast.dtype == np.int64 and fast.shape == (length,)
    np.testing.assert_array_equal(fast, truth)
    np.testing.assert_array_equal(bit_counts_reference(words, length), truth)
    hs = _bit_counts_hs(words, lanes)
    np.testing.assert_array_equal(hs[:length], truth)
    assert not hs[length:].any()  # padding bits are zero and counted as zero

    hist = weight_histogram(words, length)
    assert hist.dtype == np.int64 and hist.shape == (length + 1,)
    np.testing.assert_array_equal(hist, np.bincount(bitmatrix.sum(axis=1, dtype=np.int64), minlength=length + 1))


@settings(max_examples=40, deadline=None)
@given(length=st.integers(1, 20), n=st.integers(0, 300), seed=st.integers(0, 2**32 - 1))
def test_vector_histogram_matches_counter(length: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Draw from a few distinct vectors so that counts above 1 occur even for L = 20.
    support = rng.integers(0, 2**length, size=5, dtype=np.uint64)
    values = support[rng.integers(0, 5, size=n)]
    hist = vector_histogram(values.reshape(-1, 1), length)
    assert hist.dtype == np.int64 and hist.shape == (2**length,)
    expected = np.zeros(2**length, dtype=np.int64)
    for value, count in Counter(int(v) for v in values).items():
        expected[value] = count
    np.testing.assert_array_equal(hist, expected)
    np.testing.assert_array_equal(vector_histogram(values, length), expected)  # 1-D form


# ----------------------------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("length", [1, 63, 64, 65, 128, 1024])
def test_no_reports(length: int) -> None:
    words = np.zeros((0, -(-length // 64)), dtype=np.uint64)
    np.testing.assert_array_equal(bit_counts(words, length), np.zeros(length, dtype=np.int64))
    np.testing.assert_array_equal(bit_counts_reference(words, length), np.zeros(length, dtype=np.int64))
    np.testing.assert_array_equal(weight_histogram(words, length), np.zeros(length + 1, dtype=np.int64))
    if length <= 20:
        np.testing.assert_array_equal(vector_histogram(words, length), np.zeros(2**length, dtype=np.int64))


@pytest.mark.parametrize("length", [1, 7, 64, 65, 128, 1024])
@pytest.mark.parametrize("n", [1, 16, 17, 1000, 4099])
def test_all_ones(length: int, n: int) -> None:
    words = pack(np.ones((n, length), dtype=np.uint8))
    np.testing.assert_array_equal(bit_counts(words, length), np.full(length, n))
    for lanes in (1, 3, 64):
        np.testing.assert_array_equal(_bit_counts_hs(words, lanes)[:length], np.full(length, n))
    expected_hist = np.zeros(length + 1, dtype=np.int64)
    expected_hist[length] = n  # every report has L set bits: t_L = N (eq. 3.3)
    np.testing.assert_array_equal(weight_histogram(words, length), expected_hist)


@pytest.mark.slow
@pytest.mark.parametrize("length", [64, 65, 128, 1024])
@pytest.mark.parametrize("n", [0, 1, 15, 16, 33, 2500])
def test_widths_against_brute_force(length: int, n: int) -> None:
    rng = np.random.default_rng(1000 * length + n)
    words = pack(random_bits(rng, n, length, 0.5))
    truth = np.array(brute_bit_counts(words, length), dtype=np.int64)
    np.testing.assert_array_equal(bit_counts(words, length), truth)
    np.testing.assert_array_equal(bit_counts_reference(words, length), truth)
    for lanes in (1, 2, 64):
        np.testing.assert_array_equal(_bit_counts_hs(words, lanes)[:length], truth)
    np.testing.assert_array_equal(weight_histogram(words, length), brute_weight_histogram(words, length))


@pytest.mark.parametrize("lanes", [_kernels._HS_LANES, 512])
def test_large_n_known_by_construction(lanes: int) -> None:
    """n = 3,000,000 reports at L = 64: a 1000-row block tiled 3000 times, so M = 3000 * M(block).

    M(block) is computed by a Python loop over Python ints; the tiling multiplies it exactly. With lanes=512 the
    Harley-Seal hierarchy reaches weight 16**3 = 4096 and the ragged tail is non-empty.
    """
    rng = np.random.default_rng(20240601)
    block = rng.integers(0, 2**64, size=(1000, 1), dtype=np.uint64)
    block_counts = brute_bit_counts(block, 64)
    words = np.tile(block, (3000, 1))
    expected = 3000 * np.array(block_counts, dtype=np.int64)
    np.testing.assert_array_equal(_bit_counts_hs(words, lanes), expected)
    if lanes == _kernels._HS_LANES:
        np.testing.assert_array_equal(bit_counts(words, 64), expected)
        np.testing.assert_array_equal(bit_counts(words.reshape(-1), 64), expected)  # 1-D form, W = 1
        expected_hist = 3000 * np.array(brute_weight_histogram(block, 64), dtype=np.int64)
        np.testing.assert_array_equal(weight_histogram(words, 64), expected_hist)


def test_large_n_all_ones_carries_through_every_level() -> None:
    """3,000,001 all-ones reports at L = 65: every bit count is n, which exercises every carry of the tree."""
    n = 3_000_001
    words = np.empty((n, 2), dtype=np.uint64)
    words[:, 0] = np.uint64(2**64 - 1)
    words[:, 1] = np.uint64(1)
    np.testing.assert_array_equal(bit_counts(words, 65), np.full(65, n))
    np.testing.assert_array_equal(_bit_counts_hs(words, 300)[:65], np.full(65, n))


# ---------------------------------------------------------------------------------- dtypes, layouts, histograms


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.dtype(">u8"), np.dtype("<u8")])
def test_other_unsigned_dtypes(dtype: np.dtype) -> None:
    rng = np.random.default_rng(7)
    info_max = np.iinfo(np.dtype(dtype).newbyteorder("=")).max
    values = rng.integers(0, int(info_max) + 1, size=(5000, 1), dtype=np.uint64)
    as_dtype = values.astype(dtype)
    truth = brute_bit_counts(values, 64)
    np.testing.assert_array_equal(bit_counts(as_dtype, 64), truth)
    np.testing.assert_array_equal(bit_counts_reference(as_dtype, 64), truth)
    np.testing.assert_array_equal(weight_histogram(as_dtype, 64), brute_weight_histogram(values, 64))
    small = (values & np.uint64(0xFF)).astype(dtype)
    np.testing.assert_array_equal(
        vector_histogram(small, 8), np.bincount(small.ravel().astype(np.intp), minlength=256)
    )


def test_non_contiguous_inputs() -> None:
    rng = np.random.default_rng(8)
    base = rng.integers(0, 2**64, size=(4000, 4), dtype=np.uint64)
    strided = base[::2, 1:3]  # (2000, 2), neither row- nor column-contiguous
    fortran = np.asfortranarray(base[:, :2])
    for words in (strided, fortran):
        truth = brute_bit_counts(words, 128)
        np.testing.assert_array_equal(bit_counts(words, 128), truth)
        np.testing.assert_array_equal(_bit_counts_hs(words, 8)[:128], truth)
        np.testing.assert_array_equal(weight_histogram(words, 128), brute_weight_histogram(words, 128))


@pytest.mark.parametrize("n", [_kernels._HS_MIN_WORDS - 1, _kernels._HS_MIN_WORDS, 5 * _kernels._HS_MIN_WORDS + 7])
def test_strategy_boundary_and_input_untouched(n: int) -> None:
    """Both strategies of bit_counts (plain CSA reduction below _HS_MIN_WORDS words, Harley-Seal above) agree with
    the reference, and no kernel writes into the caller's array (the CSAs work in place on their own copies)."""
    rng = np.random.default_rng(n)
    words = rng.integers(0, 2**64, size=(n, 1), dtype=np.uint64)
    before = words.copy()
    np.testing.assert_array_equal(bit_counts(words, 64), bit_counts_reference(words, 64))
    weight_histogram(words, 64)
    np.testing.assert_array_equal(words, before)
    small = words & np.uint64(0xFFFF)
    small_before = small.copy()
    vector_histogram(small, 16)
    np.testing.assert_array_equal(small, small_before)


def test_vector_histogram_strided_input() -> None:
    values = np.arange(12, dtype=np.uint64).reshape(6, 2) % np.uint64(4)  # column 0: 0, 2, 0, 2, 0, 2
    np.testing.assert_array_equal(vector_histogram(values[:, :1], 2), [3, 0, 3, 0])
    np.testing.assert_array_equal(vector_histogram(values[::2, 1], 2), [0, 3, 0, 0])  # 1, 1, 1


def test_weight_histogram_sums_to_n_and_matches_bit_counts() -> None:
    """sum_l t_l = N and sum_l l * t_l = sum_j M_j (both count all set bits)."""
    rng = np.random.default_rng(9)
    words = pack(random_bits(rng, 3000, 130, 0.3))
    hist = weight_histogram(words, 130)
    assert hist.sum() == 3000
    assert int(np.dot(np.arange(131), hist)) == int(bit_counts(words, 130).sum())


@pytest.mark.parametrize("length", [1, 2, 16, 20])
def test_vector_histogram_bit_order(length: int) -> None:
    """The index of a report is its integer value with report bit j = bit j of the index (LSB first)."""
    bitmatrix = np.zeros((3, length), dtype=np.uint8)
    bitmatrix[0, 0] = 1  # value 1
    bitmatrix[1, length - 1] = 1  # value 2**(L-1)
    bitmatrix[2, :] = 1  # value 2**L - 1
    hist = vector_histogram(pack(bitmatrix), length)
    expected = Counter([1, 2 ** (length - 1), 2**length - 1])
    assert {int(v): int(c) for v, c in zip(np.flatnonzero(hist), hist[hist > 0], strict=True)} == dict(expected)


# -------------------------------------------------------------------------------------------- invalid inputs

ALL_KERNELS = [bit_counts, bit_counts_reference, weight_histogram, vector_histogram]


@pytest.mark.parametrize("kernel", ALL_KERNELS)
@pytest.mark.parametrize("bits", [0, -1, 1.5, True, "8", None])
def test_bad_bits(kernel, bits) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParameterError, match="bits"):
        kernel(np.zeros((2, 1), dtype=np.uint64), bits)


@pytest.mark.parametrize("bits", [0, 21, 64])
def test_vector_histogram_bits_range(bits: int) -> None:
    with pytest.raises(ParameterError, match=rf"bits must be an integer in \[1, 20\].*got {bits}"):
        vector_histogram(np.zeros((2, 1), dtype=np.uint64), bits)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
@pytest.mark.parametrize(
    "words, message",
    [
        (np.zeros((2, 1), dtype=np.int64), "unsigned integer dtype"),
        (np.zeros((2, 1), dtype=np.float64), "unsigned integer dtype"),
        (np.zeros((2, 1), dtype=bool), "unsigned integer dtype"),
        ([[1], [2]], "unsigned integer dtype"),
        (np.zeros((2, 2), dtype=np.uint64), r"shape \(n, 1\) or \(n,\).*got shape \(2, 2\)"),
        (np.zeros((2, 1, 1), dtype=np.uint64), r"got shape \(2, 1, 1\)"),
        (np.zeros((), dtype=np.uint64), r"got shape \(\)"),
    ],
)
def test_bad_words(kernel, words, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match=message):
        kernel(words, 8)


@pytest.mark.parametrize("kernel", [bit_counts, bit_counts_reference, weight_histogram])
def test_wide_reports_need_two_dimensions(kernel) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match=r"shape \(n, 2\).*got shape \(4,\)"):
        kernel(np.zeros(4, dtype=np.uint64), 65)
    with pytest.raises(DataError, match=r"W = ceil\(bits/64\) = 2"):
        kernel(np.zeros((4, 3), dtype=np.uint64), 65)


@pytest.mark.parametrize("kernel", [bit_counts, bit_counts_reference, weight_histogram])
@pytest.mark.parametrize("bits, bad_word_column, bad_value", [(5, 0, 1 << 5), (65, 1, 1 << 63), (100, 1, 1 << 36)])
def test_padding_bits_rejected(kernel, bits: int, bad_word_column: int, bad_value: int) -> None:  # type: ignore[no-untyped-def]
    words = np.zeros((40, -(-bits // 64)), dtype=np.uint64)
    words[17, bad_word_column] = np.uint64(bad_value)
    with pytest.raises(DataError, match="padding bits"):
        kernel(words, bits)


def test_vector_histogram_rejects_values_out_of_range() -> None:
    with pytest.raises(DataError, match=r"value 16 >= 2\*\*bits = 16"):
        vector_histogram(np.array([1, 16, 3], dtype=np.uint64), 4)


def test_docstring_examples() -> None:
    result = doctest.testmod(_kernels, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4 and result.failed == 0
