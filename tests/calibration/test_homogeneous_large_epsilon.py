"""The homogeneous calibration at large epsilon (bad-input sweep, session 11): no q below the local-DP q passes, and
its fallback, q_loc (1 + 1e-12), read eta = 0.99 in the two-sided tail (whose thresholds carry a safety slack), so
calibrate(epsilon=20..50, method="homogeneous") raised "internal: the local-DP q does not give ..."."""

import mpmath
import pytest

import sufficientdp as sdp
from sufficientdp.parameters import local_q


@pytest.mark.parametrize("epsilon", [20.0, 40.0, 50.0])
@pytest.mark.parametrize("bits", [2, 5])
def test_the_local_dp_fallback_is_local_dp(epsilon, bits):
    cal = sdp.calibrate(bits=bits, population=50, epsilon=epsilon, method="homogeneous")
    q_loc = local_q(bits, epsilon)
    assert q_loc <= cal.q <= q_loc * (1.0 + 1e-8) and cal.eta_at_q == 0.0
    with mpmath.workdps(50):  # (p/q)**L <= e**epsilon exactly: every report's ratio is within the level
        q = mpmath.mpf(cal.q)
        assert bits * mpmath.log((1 - q) / q) <= epsilon
