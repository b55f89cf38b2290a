"""The reverse light law's Chernoff search when the smallest gap between report values is subnormal (L = 1000, q
near 0.03: 5e-324): 1e4 / gap overflowed to theta_hi = inf and scipy's bounded minimizer raised "Optimization
bounds must be finite scalars" (calibrate(bits=1000, method="homogeneous" or "mc") failed with a bare ValueError).
Any finite theta gives a valid bound, so the search range is capped."""

import math

import numpy as np

from sufficientdp.ratio._chernoff import _THETA_CAP, LowerLaw, check_config
from sufficientdp.ratio.reverse import _reverse_problem, reverse_tail


def test_reverse_tail_with_a_subnormal_gap_is_a_bound_in_range():
    cfg = check_config(0.031234375001302085, 1000, 50, 1.0, 1000)
    pb, _ = _reverse_problem(cfg, None)
    gaps = np.diff(pb.v)
    assert float(gaps[gaps > 0].min()) < 1e-300  # the case: 1e4 / gap is not finite
    law = LowerLaw(pb, pb.v.size)
    assert law.theta_hi == _THETA_CAP
    log_bound, theta, _ = law.scalar(float(pb.n), float(pb.n) * law.vmin * 2.0)
    assert math.isfinite(theta) and log_bound <= 0.0
    r = reverse_tail(q=cfg.q, bits=1000, population=50, epsilon=1.0, outlier_bits=1000, method="certified")
    assert r.kind == "bound" and 0.0 <= r.eta_lower <= r.eta <= r.eta_upper <= 1.0
