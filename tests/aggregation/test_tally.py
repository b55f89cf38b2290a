"""Tally (seed 001 eq. 3.3-3.4): counts are functions of the multiset of reports only."""

import collections

import numpy as np
import pytest

from sufficientdp import DataError, ParameterError, Tally, tally
from sufficientdp.aggregation import tally_packed
from sufficientdp.randomization import pack_bits


def brute(reports):
    reports = [tuple(int(x) for x in r) for r in reports]
    bits = len(reports[0])
    counts = [sum(r[j] for r in reports) for j in range(bits)]
    weights = collections.Counter(sum(r) for r in reports)
    vec = collections.Counter(sum(b << j for j, b in enumerate(r)) for r in reports)
    return counts, [weights.get(w, 0) for w in range(bits + 1)], [vec.get(v, 0) for v in range(2**bits)]


def test_matches_brute_force_and_ignores_order():
    rng = np.random.default_rng(1)
    data = (rng.random((500, 7)) < 0.3).astype(np.uint8)
    t = tally(data)
    counts, weights, vec = brute(data)
    assert t.bit_counts.tolist() == counts
    assert t.weight_histogram.tolist() == weights
    assert t.vector_histogram.tolist() == vec
    shuffled = tally(data[rng.permutation(len(data))])
    assert shuffled.to_dict(include_vector_histogram=True) == t.to_dict(include_vector_histogram=True)


def test_merge_equals_tally_of_union():
    rng = np.random.default_rng(2)
    a = (rng.random((100, 5)) < 0.5).astype(np.uint8)
    b = (rng.random((70, 5)) < 0.5).astype(np.uint8)
    merged = tally(a).merge(tally(b))
    whole = tally(np.vstack([a, b]))
    assert merged.to_dict(include_vector_histogram=True) == whole.to_dict(include_vector_histogram=True)


def test_wide_reports_and_histogram_limits():
    data = np.zeros((3, 130), dtype=np.uint8)
    data[0, 129] = 1
    data[1, :] = 1
    t = tally_packed(pack_bits(data), 130)
    assert t.vector_histogram is None
    assert t.bit_counts[129] == 2 and t.bit_counts[0] == 1
    assert t.weight_histogram[0] == 1 and t.weight_histogram[1] == 1 and t.weight_histogram[130] == 1
    with pytest.raises(ParameterError, match=r"full_histogram needs bits in \[1, 20\]; got bits=21"):
        tally(np.zeros((1, 21)), full_histogram=True)


def test_counts_are_read_only_and_exportable():
    t = tally([[1, 0, 1]])
    with pytest.raises(ValueError):
        t.bit_counts[0] = 5
    assert t.to_dict()["bit_counts"] == [1, 0, 1]
    assert t.to_pandas()["count"].tolist() == [1, 0, 1]
    assert isinstance(t, Tally)


def test_bad_input():
    with pytest.raises(DataError, match="only 0 and 1"):
        tally([[0, 3]])
    with pytest.raises(DataError, match=r"packed reports must have shape \(n, 1\)"):
        tally_packed(np.zeros((2, 2), dtype=np.uint64), 5)
