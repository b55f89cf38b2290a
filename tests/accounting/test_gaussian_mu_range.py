"""The Gaussian mechanism's mu = sensitivity / sigma must lie in [1e-150, 1e150] (bad-input sweep, session 11):
sigma = 5e-324 overflowed mu and the error named mu, which the caller never gave; sigma = 1e-154 overflowed inside
the pbdp curve; sensitivity = 1e-300 made rho = mu**2 / 2 underflow to 0 ("rho must be finite and > 0"). At the
edge (sigma = 1e-150) the pbdp root search needs about 500 steps (brentq stopped at 100: RuntimeError)."""

import warnings

import pytest

from sufficientdp import ParameterError
from sufficientdp.accounting.mechanisms import gaussian
from sufficientdp.accounting.pbdp import pbdp_delta


@pytest.mark.parametrize(("sigma", "sensitivity"), [(5e-324, 1.0), (1e-154, 1.0), (1e-310, 1e10), (2.0, 5e-324),
                                                    (2.0, 1e-300)])
def test_mu_out_of_range_names_sigma_and_sensitivity(sigma, sensitivity):
    with pytest.raises(ParameterError, match=r"sensitivity / sigma \(the Gaussian's mu\) must be in \[1e-150, "
                                             r"1e150\]; got sensitivity = .*, sigma = "):
        gaussian(sigma, sensitivity)


@pytest.mark.parametrize("sigma", [1e-150, 1e150])
def test_the_edges_of_the_range_give_a_curve(sigma):
    g = gaussian(sigma)
    assert g.mu == pytest.approx(1.0 / sigma) and 0.0 < g.rho < float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = pbdp_delta(g, [0.5, 3.0])
    # mu = 1e150: the two Gaussians are told apart for sure (delta = 1); mu = 1e-150: not at all (delta = 0)
    assert all(x == pytest.approx(1.0 if sigma < 1 else 0.0, abs=1e-12) for x in d)
