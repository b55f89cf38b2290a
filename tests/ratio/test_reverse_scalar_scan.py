"""The reverse light law's scalar Chernoff search (``LowerLaw.scalar``) scans 64 points of log theta with one
``log_mgf`` call on all of them (issue 10: the 64 separate calls were a third of the reverse side of a large-L
homogeneous calibration). The scan must give the floats of the 64 separate calls, hence the same theta, bound and
Lambda: checked against the search written out with one call per point, on the reverse problems of several
configurations (including the subnormal-gap one, where theta reaches the cap)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from sufficientdp.ratio._chernoff import REL_SAFETY, LowerLaw, check_config
from sufficientdp.ratio.reverse import _reverse_problem


def _one_call_per_point(law: LowerLaw, m: float, y: float) -> tuple[float, float, float]:
    if y < m * law.vmin * (1.0 - 1e-12) - 1e-300:
        return -math.inf, math.inf, -math.inf
    if m <= 0 or y >= m * law.mu or law.theta_hi <= 0.0:
        return 0.0, 0.0, 0.0

    def f(u: float) -> float:
        th = math.exp(u)
        return th * y + m * float(law.log_mgf(np.array([th]))[0])

    us = np.linspace(math.log(law.theta_lo), math.log(law.theta_hi), 64)
    fs = [f(float(u)) for u in us]
    i = int(np.argmin(fs))
    lo_u, hi_u = float(us[max(i - 1, 0)]), float(us[min(i + 1, us.size - 1)])
    r = minimize_scalar(f, bounds=(lo_u, hi_u), method="bounded", options={"xatol": 1e-10})
    u = float(r.x) if float(r.fun) < fs[i] else float(us[i])
    th = math.exp(u)
    lam = float(law.log_mgf(np.array([th]))[0])
    raw = th * y + m * lam
    if raw >= 0:
        return 0.0, 0.0, 0.0
    return min(raw + REL_SAFETY * (abs(th * y) + abs(m * lam)) + 1e-12, 0.0), th, lam


@pytest.mark.parametrize(("q", "bits", "population", "epsilon", "j"), [
    (0.35, 40, 10**7, 2.0, 40), (0.3, 16, 10**5, 1.0, 16), (0.3, 16, 10**5, 1.0, 7), (0.2, 5, 1000, 0.7, 5),
    (0.05, 3, 30, 1.0, 2), (0.45, 64, 10**6, 2.0, 64), (0.031234375001302085, 1000, 50, 1.0, 1000)])
def test_the_vector_scan_gives_the_floats_of_one_call_per_point(q: float, bits: int, population: int,
                                                                 epsilon: float, j: int) -> None:
    pb, _ = _reverse_problem(check_config(q, bits, population, epsilon, j), None)
    compared = 0
    for lstar in sorted({pb.v.size, max(1, pb.v.size // 2), min(2, pb.v.size)}):
        law = LowerLaw(pb, lstar)
        for m in (float(pb.n), float(pb.n) / 3.0, 1.0):
            for frac in (0.0, 0.3, 0.9, 0.999, 1.2):
                y = m * (law.vmin + frac * (law.mu - law.vmin))
                assert law.scalar(m, y) == _one_call_per_point(law, m, y)
                compared += 1
    assert compared >= 15
