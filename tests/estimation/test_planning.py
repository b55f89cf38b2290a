"""estimation.planning.accuracy: closed forms checked by hand and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.estimation.planning import accuracy


def test_hand_values() -> None:
    # q = 1/4, N = 10^4, k = 1: sd = sqrt(10^4 * 1/4 * 3/4) / (1/2) = 50 sqrt(3) = 86.6025...
    a = accuracy(0.25, population=10_000)
    assert a.sd == pytest.approx(50 * math.sqrt(3), rel=1e-12)
    assert a.half_width == pytest.approx(1.959963984540054 * 50 * math.sqrt(3), rel=1e-12)
    assert a.half_width_fraction == pytest.approx(a.half_width / 10_000)
    # detectable: (z_0.975 + z_0.8) sd / N = (1.959964 + 0.841621) * 86.6025 / 10^4
    assert a.detectable_fraction == pytest.approx((1.959963984540054 + 0.8416212335729143) * a.sd / 1e4)
    # k reports divide the variance by k
    assert accuracy(0.25, population=10_000, reports=4).sd == pytest.approx(a.sd / 2)


def test_simulated_sd_matches() -> None:
    # 4000 simulated releases of N = 2000, q = 0.3, true count 500: the sample sd of d_hat is within 5% of the
    # closed form (relative sd of a sample sd over 4000 draws ~ 1.1%; 5% is > 4 sd, failure probability < 1e-4).
    rng = np.random.default_rng(12)
    n, q, d = 2000, 0.3, 500
    m = rng.binomial(d, 1 - q, size=4000) + rng.binomial(n - d, q, size=4000)
    d_hat = (m - q * n) / (1 - 2 * q)
    assert np.std(d_hat) == pytest.approx(accuracy(q, population=n).sd, rel=0.05)


@pytest.mark.parametrize("kw", [{"q": 0.5}, {"q": 0.0}, {"population": 0}, {"confidence_level": 1.0}, {"power": 0.0},
                                {"reports": 0}])
def test_invalid(kw: dict) -> None:
    args = {"q": 0.3, "population": 100, **kw}
    with pytest.raises(ParameterError):
        accuracy(args.pop("q"), **args)


def test_confidence_level_name_and_deprecated_alias() -> None:
    new = accuracy(0.3, population=1000, confidence_level=0.9)
    with pytest.warns(DeprecationWarning, match="level= is deprecated"):
        old = accuracy(0.3, population=1000, level=0.9)
    assert new == old and new.confidence_level == 0.9 and new.to_dict()["level"] == 0.9
    assert accuracy(0.3, population=1000).confidence_level == 0.95
    with pytest.warns(DeprecationWarning, match=r"Accuracy.level is deprecated; use .confidence_level"):
        assert new.level == 0.9
    with pytest.raises(ParameterError, match="not both"):
        accuracy(0.3, population=1000, confidence_level=0.9, level=0.9)


def test_normal_quantile_is_scipy_norm_ppf_bit_for_bit():
    """The z of every interval and detection threshold (``_numerics.stats.normal_quantile``) is the float
    ``scipy.stats.norm.ppf`` returns, on the levels people ask for, random probabilities and both tails; the
    lowest supported scipy runs this too (``make test-lowest``)."""
    import numpy as np
    from scipy.stats import norm

    from sufficientdp._numerics.stats import normal_quantile

    levels = [0.5, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999]
    ps = [0.5 + lv / 2 for lv in levels] + levels
    ps += [float(x) for x in np.random.default_rng(11).random(2000)]
    ps += [float(x) for x in np.geomspace(1e-300, 0.5, 300)] + [1.0 - float(x) for x in np.geomspace(1e-16, 0.5, 60)]
    for p in ps:
        assert normal_quantile(p).hex() == float(norm.ppf(p)).hex(), p
    assert normal_quantile(0.0) == -np.inf and normal_quantile(1.0) == np.inf
    assert np.isnan(normal_quantile(1.5)) and np.isnan(float(norm.ppf(1.5)))
