"""Flip probabilities near the bottom of (0, 1/2) (q = 1e-300) are valid input: the tails and the structured search
answer without a numerical warning (bad-input sweep, session 11: the forward light law's variance overflowed to
inf * 0 = nan, and the structured search divided by a report probability that underflowed to 0, each printing
RuntimeWarnings on the command line's stderr)."""

import warnings

import pytest

import sufficientdp as sdp
from sufficientdp.ratio.structured import structured_search


@pytest.mark.parametrize("method", ["exact", "homogeneous"])
def test_tails_at_tiny_q(method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = sdp.privacy_tail(q=1e-300, bits=2, population=30, epsilon=1.0, method=method)
    # q = 1e-300 is (almost) no noise: the neighbour is all but certain to be seen
    assert r.eta == pytest.approx(1.0, abs=1e-8) and 0.0 <= r.eta_lower <= r.eta <= r.eta_upper <= 1.0


def test_structured_search_at_tiny_q():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = structured_search(2, 4, 1e-300, 3.0, time_budget=10)
    assert 0.0 <= r.eta_lower <= r.eta_upper <= 1.0
