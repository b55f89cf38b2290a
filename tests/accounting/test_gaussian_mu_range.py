"""The Gaussian mechanism's mu = sensitivity / sigma must be a finite positive number; sigma = 5e-324 overflowed it
and the error named mu, which the caller never gave (bad-input sweep, session 11)."""

import math

import pytest

from sufficientdp import ParameterError
from sufficientdp.accounting.mechanisms import gaussian


@pytest.mark.parametrize(("sigma", "sensitivity"), [(5e-324, 1.0), (1e-310, 1e10), (2.0, 5e-324)])
def test_mu_out_of_range_names_sigma_and_sensitivity(sigma, sensitivity):
    with pytest.raises(ParameterError, match=r"sensitivity / sigma must be a finite number > 0.*sigma = "):
        gaussian(sigma, sensitivity)


def test_mu_at_the_edges_of_the_range():
    assert gaussian(1e-300, 1.0).mu == pytest.approx(1e300)
    assert math.isfinite(gaussian(1e-300, 1.0).mu) and gaussian(1e300, 1e-10).mu > 0.0
