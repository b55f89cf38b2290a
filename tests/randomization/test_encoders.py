"""Encoders (seed 001 §5): raw bits, one-hot categories, bounded-weight sets."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sufficientdp import DataError, ParameterError, encode_bits, encode_one_hot, encode_set


def test_encode_bits_accepts_bools_and_ints():
    assert encode_bits(np.array([[True, False]])).tolist() == [[1, 0]]
    assert encode_bits([[1.0, 0.0]]).dtype == np.uint8


@pytest.mark.parametrize(
    "values, fragment",
    [([1, 0], "2-D array"), ([[1, 2]], "only 0 and 1; got 2 at row 0, bit 1"), ([["a", "b"]], "0/1 numbers"),
     (np.zeros((2, 0)), "at least one bit column")],
)
def test_encode_bits_rejects(values, fragment):
    with pytest.raises(DataError) as info:
        encode_bits(values)
    assert fragment in str(info.value)


@pytest.mark.parametrize("dtype", ["boolean", "Int8", "UInt8", "Int64", "Float64", "int8[pyarrow]", "bool[pyarrow]"])
def test_encode_bits_takes_pandas_nullable_and_arrow_columns(dtype):
    """pandas' nullable and Arrow-backed columns arrive as object arrays: the 0/1 numbers and booleans they hold
    are the reports (the same as the plain numpy columns), a missing value is named."""
    pd = pytest.importorskip("pandas")
    if "pyarrow" in dtype:
        pytest.importorskip("pyarrow")
    data = np.random.default_rng(5).integers(0, 2, size=(40, 3))
    frame = pd.DataFrame(data, columns=["a", "b", "c"]).astype(dtype)
    assert np.asarray(frame).dtype == object  # (else this tests nothing new)
    assert np.array_equal(encode_bits(frame), data.astype(np.uint8))
    frame.iloc[7, 2] = None
    with pytest.raises(DataError, match=r"only 0 and 1; got <NA> at row 7, bit 2$"):
        encode_bits(frame)


@pytest.mark.parametrize("cell, shown", [("1", "'1'"), (float("nan"), "nan"), (2, "2"), (None, "None"),
                                         (np.int64(-1), "-1"), (True, None), (np.float32(1.0), None),
                                         (np.uint8(0), None)])
def test_encode_bits_object_arrays_take_only_0_1_numbers_and_booleans(cell, shown):
    values = np.array([[0, 1], [1, 0]], dtype=object)
    values[1, 1] = cell
    if shown is None:
        assert encode_bits(values).tolist() == [[0, 1], [1, int(cell)]]
    else:
        with pytest.raises(DataError, match=rf"only 0 and 1; got {shown} at row 1, bit 1$"):
            encode_bits(values)


def test_encode_bits_checks_width():
    with pytest.raises(DataError, match="must have 3 columns"):
        encode_bits([[1, 0]], bits=3)


@given(st.lists(st.integers(0, 99), max_size=50))
def test_one_hot_round_trip(cats):
    out = encode_one_hot(cats, bits=100)
    assert out.shape == (len(cats), 100)
    assert np.all(out.sum(axis=1) == 1)
    assert out.argmax(axis=1).tolist() == cats


def test_one_hot_rejects_out_of_range():
    with pytest.raises(DataError, match=r"categories must be in \[0, 4\); got 4"):
        encode_one_hot([0, 4], bits=4)
    with pytest.raises(DataError, match=r"categories must be in \[0, 4\); got -1"):
        encode_one_hot([-1], bits=4)
    with pytest.raises(ParameterError, match="bits must be an integer >= 1 and <= 4096; got 0"):
        encode_one_hot([0], bits=0)


@given(st.lists(st.sets(st.integers(0, 19), max_size=3), max_size=30))
def test_set_encoding(sets):
    out = encode_set([sorted(s) for s in sets], bits=20, max_weight=3)
    for row, s in zip(out, sets):
        assert set(np.flatnonzero(row).tolist()) == s


def test_set_encoding_rejects():
    with pytest.raises(DataError, match="max_weight allows at most 2"):
        encode_set([[0, 1, 2]], bits=5, max_weight=2)
    with pytest.raises(DataError, match="duplicate"):
        encode_set([[1, 1]], bits=5, max_weight=2)
    with pytest.raises(DataError, match=r"items must be integers in \[0, 5\)"):
        encode_set([[7]], bits=5, max_weight=2)
    with pytest.raises(ParameterError, match="max_weight must be an integer >= 1 and <= 5; got 6"):
        encode_set([[1]], bits=5, max_weight=6)
