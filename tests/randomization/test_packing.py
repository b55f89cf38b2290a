"""Packing of L-bit reports into uint64 words: bit j -> word j // 64, bit j % 64 (least significant first)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sufficientdp._errors import DataError, ParameterError
from sufficientdp.randomization._packing import pack_bits, padding_mask, unpack_bits, words_per_report


def bit_by_bit(words: np.ndarray, bits: int) -> np.ndarray:
    """Independent oracle: read bit j of every report with a shift and a mask (no np.unpackbits)."""
    j = np.arange(bits)
    return ((words[:, j // 64] >> (j % 64).astype(np.uint64)) & np.uint64(1)).astype(np.uint8)


@settings(max_examples=60, deadline=None)
@given(bits=st.integers(1, 1100), n=st.integers(0, 50), seed=st.integers(0, 2**32 - 1))
def test_round_trip_layout_and_padding(bits, n, seed):
    values = np.random.default_rng(seed).integers(0, 2, size=(n, bits), dtype=np.uint8)
    words = pack_bits(values)
    assert words.shape == (n, words_per_report(bits)) and words.dtype == np.uint64
    assert np.array_equal(bit_by_bit(words, bits), values)
    assert not np.any(words & ~padding_mask(bits))  # padding bits are 0
    back = unpack_bits(words, bits)
    assert back.dtype == np.uint8 and np.array_equal(back, values)


def test_layout_by_hand():
    """Report bits 0, 2 and 64 set: word 0 = 0b101 = 5, word 1 = 1."""
    row = np.zeros(70, dtype=bool)
    row[[0, 2, 64]] = True
    assert pack_bits(row[None, :]).tolist() == [[5, 1]]
    assert pack_bits(np.ones((1, 64), dtype=np.uint8)).tolist() == [[2**64 - 1]]


@pytest.mark.parametrize("dtype", [bool, np.uint8, np.int8, np.uint16, np.int32, np.int64, np.uint64])
def test_all_integer_dtypes_pack_alike(dtype):
    values = np.random.default_rng(1).integers(0, 2, size=(7, 130))
    assert np.array_equal(pack_bits(values.astype(dtype)), pack_bits(values.astype(np.uint8)))
    assert np.array_equal(pack_bits(values.astype(dtype).tolist()), pack_bits(values))  # array-likes


def test_non_contiguous_and_big_endian_input():
    values = np.random.default_rng(2).integers(0, 2, size=(40, 200), dtype=np.uint8)
    assert np.array_equal(pack_bits(values[::2, ::-1]), pack_bits(np.ascontiguousarray(values[::2, ::-1])))
    assert np.array_equal(pack_bits(values.T.copy().T), pack_bits(values))
    assert np.array_equal(pack_bits(values.astype(">i4")), pack_bits(values))
    words = pack_bits(values)
    assert np.array_equal(unpack_bits(words.astype(">u8"), 200), values)
    assert np.array_equal(unpack_bits(words[::-1], 200), values[::-1])


def test_many_rows_are_packed_in_steps():
    values = np.random.default_rng(3).integers(0, 2, size=(150_000, 3), dtype=np.uint8)
    words = pack_bits(values)
    assert np.array_equal(words[:, 0], values[:, 0] + 2 * values[:, 1] + 4 * values[:, 2])


@pytest.mark.parametrize(
    "values, fragment",
    [
        (np.array([[0, 2, 1]]), "only 0 and 1; got 2 at row 0, bit 1"),
        (np.array([[0, 0], [1, -1]]), "only 0 and 1; got -1 at row 1, bit 1"),
        (np.array([[255]], dtype=np.uint8), "only 0 and 1; got 255 at row 0, bit 0"),
        (np.array([[0, np.iinfo(np.int64).min]]), "only 0 and 1; got -9223372036854775808"),
        (np.array([[0.0, 1.0]]), "boolean or integer dtype holding 0/1; got dtype float64"),
        (np.array([["0", "1"]]), "boolean or integer dtype"),
        (np.array([1, 0, 1]), "2-D array"),
        (np.zeros((2, 0), dtype=np.uint8), "at least one bit column"),
    ],
)
def test_pack_rejects_bad_data(values, fragment):
    with pytest.raises(DataError) as info:
        pack_bits(values)
    assert fragment in str(info.value)


def test_words_per_report_and_padding_mask():
    assert [words_per_report(b) for b in (1, 63, 64, 65, 128, 129, 1024)] == [1, 1, 1, 2, 2, 3, 16]
    for bits in (1, 5, 63, 64, 65, 130, 1024):
        mask = padding_mask(bits)
        assert mask.shape == (words_per_report(bits),) and mask.dtype == np.uint64
        assert np.array_equal(bit_by_bit(mask[None, :], 64 * mask.size)[0], np.arange(64 * mask.size) < bits)
    for bad in (0, -3, 1.5, "8", True):
        with pytest.raises(ParameterError, match="bits must be an integer >= 1"):
            words_per_report(bad)
        with pytest.raises(ParameterError, match="bits must be an integer >= 1"):
            padding_mask(bad)


def test_unpack_rejects_bad_words():
    words = np.zeros((2, 2), dtype=np.uint64)
    with pytest.raises(DataError, match=r"shape \(n, 2\) for bits=100; got \(2, 2, 1\)"):
        unpack_bits(words[:, :, None], 100)
    with pytest.raises(DataError, match=r"shape \(n, 1\) for bits=64; got \(2, 2\)"):
        unpack_bits(words, 64)
    with pytest.raises(DataError, match="dtype uint64; got int64"):
        unpack_bits(words.astype(np.int64), 100)
    with pytest.raises(DataError, match="numpy uint64 array"):
        unpack_bits(words.tolist(), 100)
    with pytest.raises(DataError, match=r"padding bits set beyond bit 99 \(row 1\)"):
        unpack_bits(np.array([[0, 0], [0, 1 << 36]], dtype=np.uint64), 100)
    with pytest.raises(ParameterError, match="bits must be an integer >= 1; got 0"):
        unpack_bits(words, 0)
    assert unpack_bits(np.zeros((0, 2), dtype=np.uint64), 100).shape == (0, 100)
