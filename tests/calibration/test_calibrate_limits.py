"""The limits of calibrate and the Monte Carlo tails, checked before any work (bad-input sweep, session 11).

Before: calibrate took any L and N (population=1e30: OverflowError or "cannot convert float NaN to integer" deep
in the search; the documented limits are L <= 4096, N <= 10**12), and samples had no upper limit (samples=10**12:
MemoryError allocating 7 TiB; 1e30: OverflowError). The Monte Carlo calibration also took a sampler's refusal of
samples for a failed draw and silently fell back to the certified bound.
"""

from decimal import Decimal

import numpy as np
import pytest

import sufficientdp as sdp
from sufficientdp import ParameterError


@pytest.mark.parametrize(("kw", "fragment"), [
    (dict(bits=4097), "bits must be an integer >= 1 and <= 4096; got 4097"),
    (dict(bits=10**30), "bits must be"),
    (dict(population=10**12 + 1), "population must be an integer >= 1 and <= 1000000000000"),
    (dict(population=1e30), "population must be"),
    (dict(population=1e308), "population must be"),
])
@pytest.mark.parametrize("method", ["proven", "homogeneous", "mc", "exact", "local", "paper-sigma"])
def test_calibrate_refuses_bits_and_population_beyond_the_limits(kw, fragment, method):
    with pytest.raises(ParameterError, match=fragment):
        sdp.calibrate(**{**dict(bits=2, population=50, epsilon=1.0, method=method), **kw})


@pytest.mark.parametrize("samples", [10**12, 1e30, 10**8 + 1, 500])
def test_monte_carlo_samples_have_limits(samples):
    with pytest.raises(ParameterError, match="samples must be an integer >= 1000 and <= 100000000"):
        sdp.calibrate(bits=2, population=50, epsilon=1.0, method="mc", samples=samples,
                      rng=np.random.default_rng(1))
    with pytest.raises(ParameterError, match="samples must be an integer >= 1000 and <= 100000000"):
        sdp.privacy_tail(q=0.2, bits=2, population=50, epsilon=1.0, method="mc", samples=samples,
                         rng=np.random.default_rng(1))


@pytest.mark.parametrize("samples", [10**12, 10**8 + 1])
def test_monte_carlo_samples_limit_with_several_reports(samples):
    with pytest.raises(ParameterError, match="samples must be an integer >= 1 and <= 100000000"):
        sdp.privacy_tail(q=0.2, bits=2, population=50, epsilon=1.0, method="mc", samples=samples, reports=2,
                         rng=np.random.default_rng(1))


@pytest.mark.parametrize("max_weight", [Decimal("nan"), np.array([1, 2]), 1.5, 3])
def test_max_weight_is_checked_before_the_domain(max_weight):
    # (a Decimal NaN raised decimal.InvalidOperation and an array numpy's "truth value ... is ambiguous")
    with pytest.raises(ParameterError, match="max_weight must be an integer >= 1"):
        sdp.calibrate(bits=2, population=50, epsilon=1.0, max_weight=max_weight)
