"""Fast tally of an unpacked uint8/bool array (issue 10): eight columns packed per multiplication, and the bit
counts and weight histogram derived from the full histogram. Truth: brute force over the rows (Python integers)
and the np.packbits-based pack_bits."""

import itertools

import numpy as np
import pytest

from sufficientdp import DataError
from sufficientdp.aggregation.tally import _pack_bytes, tally, tally_histogram
from sufficientdp.randomization._packing import pack_bits


def _brute(rows, bits):
    counts = [0] * bits
    weights = [0] * (bits + 1)
    vh = [0] * (1 << bits) if bits <= 16 else None
    for row in rows.tolist():
        for j, v in enumerate(row):
            counts[j] += int(v)
        weights[sum(int(v) for v in row)] += 1
        if vh is not None:
            vh[sum(int(v) << j for j, v in enumerate(row))] += 1
    return counts, weights, vh


def test_gather_multiplication_on_every_byte_pattern():
    rows = np.array(list(itertools.product([0, 1], repeat=8)), dtype=np.uint8)[:, ::-1]  # row i has bits of i
    words = _pack_bytes(np.ascontiguousarray(rows))
    assert words[:, 0].tolist() == list(range(256))


@pytest.mark.parametrize("bits", [1, 3, 8, 9, 16, 17, 64, 65, 130])
@pytest.mark.parametrize("n", [0, 1, 7, 70_001])  # 70,001 rows: more than one packing step
def test_pack_bytes_equals_pack_bits(bits, n):
    a = np.random.default_rng(bits * 1000 + n).integers(0, 2, size=(n, bits), dtype=np.uint8)
    for view in (a, a[:, ::-1], np.asfortranarray(a), a.astype(bool), a[::2]):
        np.testing.assert_array_equal(_pack_bytes(view), pack_bits(view))


@pytest.mark.parametrize("bits", [1, 5, 16, 20])
def test_tally_of_uint8_and_bool_matches_brute_force(bits):
    rng = np.random.default_rng(bits)
    rows = (rng.random((3001, bits)) < rng.random(bits)).astype(np.uint8)
    counts, weights, vh = _brute(rows, bits)
    for arr in (rows, rows.astype(bool), rows.astype(np.int64)):
        t = tally(arr)
        assert t.bit_counts.tolist() == counts and t.weight_histogram.tolist() == weights
        assert (t.vector_histogram.tolist() if t.vector_histogram is not None else None) == vh
        full = tally(arr, full_histogram=True)
        assert full.bit_counts.tolist() == counts and full.weight_histogram.tolist() == weights


def test_tally_histogram_sums():
    vh = np.array([5, 0, 2, 7, 1, 0, 0, 3])  # index bit j <-> report bit j, L = 3
    t = tally_histogram(vh, 3)
    assert t.bit_counts.tolist() == [7 + 3, 2 + 7 + 3, 1 + 3]
    assert t.weight_histogram.tolist() == [5, 0 + 2 + 1, 7 + 0 + 0, 3]
    assert t.reports == 18


@pytest.mark.parametrize("bad", [2, 255])
def test_bad_uint8_value_gives_the_same_error(bad):
    rows = np.zeros((70_000, 9), dtype=np.uint8)
    rows[69_999, 4] = bad
    with pytest.raises(DataError, match=f"got {bad} at row 69999, bit 4"):
        tally(rows)
