"""rounds_tail's lattice resolution has a lower limit, 1e-12 (bad-input sweep, session 11: resolution=5e-324 made
the blanket's lattice size infinite, an OverflowError deep in the compound-sum bound)."""

import pytest

import sufficientdp as sdp
from sufficientdp import ParameterError
from sufficientdp.accounting.rounds import MIN_RESOLUTION


@pytest.mark.parametrize("resolution", [5e-324, 1e-300, 9.99e-13])
def test_resolution_below_the_limit_is_refused(resolution):
    with pytest.raises(ParameterError, match=r"resolution must be in \[1e-12, 1\)"):
        sdp.rounds_tail(q=0.2, bits=2, population=30, epsilon=1.0, rounds=2, resolution=resolution)


def test_the_finest_resolution_gives_the_converged_value():
    fine = sdp.rounds_tail(q=0.2, bits=2, population=30, epsilon=1.0, rounds=2, resolution=MIN_RESOLUTION)
    finer_than_default = sdp.rounds_tail(q=0.2, bits=2, population=30, epsilon=1.0, rounds=2, resolution=1e-7)
    # a finer lattice only tightens the bound, and the bound has converged well above the limit
    assert fine.eta <= finer_than_default.eta
    assert fine.eta == pytest.approx(finer_than_default.eta, rel=1e-5)
