"""Tail of the privacy ratio (sufficientdp.ratio.tail) against independent truth.

Independent truth used here:

* brute force: every outcome of the N randomized reports enumerated one report at a time (no multinomial algebra),
  probabilities and R(S) in 40-digit mpmath (seed 001 eq. 3.2, 3.4–3.6);
* a composition enumeration in mpmath for moderate N (every count vector T of the N - 1 zero reports);
* elementary bounds: P[outlier keeps >= 35 of 40 bits] and P[some zero report has >= 35 of 40 set], each of which
  alone makes R exceed e^2 at L = 40, N = 1e7 (so eta is at least the probability of their union);
* docs/reproduction.md: exact P[R >= e^2] = 0.003706 at L = 5, N = 1000, q = 0.169199 (script enumeration).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from sufficientdp._errors import ParameterError
from sufficientdp.ratio.tail import (
    certified_tail,
    exact_tail,
    homogeneous_tail,
    mc_tail,
    worst_over_outlier_bits,
)


@pytest.fixture(autouse=True)
def _mpmath_precision() -> Iterator[None]:
    """Every test of this module computes its mpmath oracles at 40 digits (restored afterwards)."""
    with mp.workdps(40):
        yield


def brute_force(q: float, j: int, n: int, eps: float) -> tuple[mp.mpf, mp.mpf, mp.mpf]:
    """(P[R > lambda], P[R >= lambda], delta) by enumerating the set-bit count of every report in turn."""
    qm = mp.mpf(q)
    pm = 1 - qm
    lam = mp.e**eps
    p0 = [mp.binomial(j, k) * qm**k * pm ** (j - k) for k in range(j + 1)]
    p1 = [mp.binomial(j, k) * pm**k * qm ** (j - k) for k in range(j + 1)]
    w = [(qm / pm) ** (j - 2 * k) for k in range(j + 1)]
    gt = ge = delta = mp.mpf(0)
    for combo in itertools.product(range(j + 1), repeat=n):  # combo[0] is the outlier's report
        pr = p1[combo[0]] * mp.fprod(p0[c] for c in combo[1:])
        r = mp.fsum(w[c] for c in combo) / n
        if r > lam * (1 + mp.mpf(10) ** -30):
            gt += pr
        if r >= lam * (1 - mp.mpf(10) ** -30):
            ge += pr
        if r > lam:
            delta += pr * (1 - lam / r)
    return gt, ge, delta


def composition_exact(q: float, j: int, n: int, eps: float) -> mp.mpf:
    """P[R > lambda] by enumerating every count vector of the n - 1 zero reports (mpmath)."""
    qm = mp.mpf(q)
    pm = 1 - qm
    lam = mp.e**eps
    p0 = [mp.binomial(j, k) * qm**k * pm ** (j - k) for k in range(j + 1)]
    p1 = [mp.binomial(j, k) * pm**k * qm ** (j - k) for k in range(j + 1)]
    w = [(qm / pm) ** (j - 2 * k) for k in range(j + 1)]
    m = n - 1
    total = mp.mpf(0)
    logf = [mp.log(mp.factorial(k)) for k in range(m + 1)]

    def rec(level: int, left: int, counts: list[int]) -> None:
        nonlocal total
        if level == j:
            cs = counts + [left]
            s = mp.fsum(c * w[i] for i, c in enumerate(cs))
            lp = logf[m] - mp.fsum(logf[c] for c in cs) + mp.fsum(c * mp.log(p0[i]) for i, c in enumerate(cs))
            pr = mp.exp(lp)
            for l1 in range(j + 1):
                if (s + w[l1]) / n > lam:
                    total += pr * p1[l1]
            return
        for c in range(left + 1):
            rec(level + 1, left - c, counts + [c])

    rec(0, m, [])
    return total


SMALL_GRID = [
    (q, j, n, eps)
    for q in (0.05, 0.15, 0.3, 0.45)
    for j in (1, 2, 3)
    for n in (1, 2, 4)
    for eps in (0.2, 1.0, 2.5)
]


@pytest.mark.slow
@pytest.mark.parametrize("q, j, n, eps", SMALL_GRID)
def test_certified_and_exact_against_brute_force(q, j, n, eps):
    gt, ge, delta = brute_force(q, j, n, eps)
    c = certified_tail(q=q, bits=j, population=n, epsilon=eps)
    e = exact_tail(q=q, bits=j, population=n, epsilon=eps)
    # the key safety property: the certified bound never understates the risk (>= even covers ties)
    assert c.eta >= float(ge) * (1 - 1e-12)
    assert c.eta_lower <= float(gt) * (1 + 1e-12) + 1e-300
    assert c.delta >= float(delta) * (1 - 1e-12)
    assert c.delta_lower <= float(delta) * (1 + 1e-12) + 1e-300
    # the exact bracket contains both P[R > lambda] and P[R >= lambda]
    assert e.eta_lower <= float(gt) * (1 + 1e-12) + 1e-300
    assert float(ge) * (1 - 1e-12) <= e.eta_upper
    assert e.delta_lower <= float(delta) * (1 + 1e-12) + 1e-300 and float(delta) * (1 - 1e-12) <= e.delta_upper


@pytest.mark.slow
@pytest.mark.parametrize("q, j, n, eps", [(0.2, 3, 25, 1.0), (0.1, 2, 60, 1.5), (0.3, 3, 40, 0.3),
                                          (0.12, 3, 30, 2.0)])
def test_moderate_population_against_composition_enumeration(q, j, n, eps):
    truth = float(composition_exact(q, j, n, eps))
    c = certified_tail(q=q, bits=j, population=n, epsilon=eps)
    e = exact_tail(q=q, bits=j, population=n, epsilon=eps)
    assert c.eta >= truth * (1 - 1e-12)
    assert c.eta_lower <= truth * (1 + 1e-12)
    assert e.eta_lower <= truth * (1 + 1e-12) and truth * (1 - 1e-12) <= e.eta_upper
    assert e.eta_upper - e.eta_lower <= 1e-8 * max(truth, 1e-12) + 1e-13


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=st.floats(0.01, 0.49), j=st.integers(1, 3), n=st.integers(1, 4), eps=st.floats(0.01, 4.0))
def test_certified_never_below_brute_force_property(q, j, n, eps):
    _, ge, _ = brute_force(q, j, n, eps)
    c = certified_tail(q=q, bits=j, population=n, epsilon=eps)
    assert c.eta >= float(ge) * (1 - 1e-12)


def test_reproduction_l5_exact_value():
    # docs/reproduction.md: exact P[R >= e^2] = 0.003706 at L = 5, N = 1000, q = 0.169199 (eq. 3.12 at lambda = e^2)
    e = exact_tail(q=0.169199, bits=5, population=1000, epsilon=2.0)
    assert round(e.eta_lower, 6) == 0.003706 and round(e.eta_upper, 6) == 0.003706
    assert e.eta_upper - e.eta_lower < 1e-10
    c = certified_tail(q=0.169199, bits=5, population=1000, epsilon=2.0)
    assert e.eta_upper <= c.eta < 1.01 * e.eta_upper
    assert c.eta_lower <= e.eta_lower


@pytest.mark.slow
@pytest.mark.parametrize("n, q, eps", [(3000, 0.142355, 2.0), (1000, 0.244552, 0.693)])
def test_paper_configurations_certified_within_a_few_percent(n, q, eps):
    e = exact_tail(q=q, bits=5, population=n, epsilon=eps)
    c = certified_tail(q=q, bits=5, population=n, epsilon=eps)
    assert c.eta_lower <= e.eta_lower and e.eta_upper <= c.eta <= 1.05 * e.eta_upper
    assert c.delta_lower <= e.delta_upper and e.delta_lower <= c.delta


@pytest.mark.slow
def test_l40_certified_above_elementary_lower_bound():
    # Either event makes R > e^2 at L = 40, N = 1e7, q = 0.350914 (w = (p/q)^30 > N e^2), so
    # eta >= 1 - (1 - P[Bin(40, p) >= 35]) (1 - P[Bin(40, q) >= 35])^(N - 1) ~= 0.0013411.
    q = mp.mpf(0.350914)
    p = 1 - q
    out = mp.fsum(mp.binomial(40, k) * p**k * q ** (40 - k) for k in range(35, 41))
    zero = mp.fsum(mp.binomial(40, k) * q**k * p ** (40 - k) for k in range(35, 41))
    union = float(1 - (1 - out) * (1 - zero) ** (10**7 - 1))
    r = homogeneous_tail(q=0.350914, bits=40, population=10**7, epsilon=2.0)
    assert r.kind == "bound"
    assert r.eta >= 0.00125  # the reproduction's Monte Carlo lower end
    assert r.eta >= union
    assert r.eta <= 1.001 * union  # nearly all of the risk is these two events
    assert r.eta_lower >= union * (1 - 1e-9)


@pytest.mark.slow
def test_mc_interval_covers_exact_values():
    # Empirical-Bernstein intervals at 99.9%: a correct sampler misses with probability <= 1e-3 per check.
    for n, q, eps in [(1000, 0.169199, 2.0), (1000, 0.244552, 0.693), (40, 0.2, 1.0)]:
        e = exact_tail(q=q, bits=5 if n > 40 else 3, population=n, epsilon=eps)
        m = mc_tail(q=q, bits=5 if n > 40 else 3, population=n, epsilon=eps, rng=np.random.default_rng(2024),
                    samples=20_000, confidence_level=0.999)
        assert m.kind == "estimate"
        assert m.eta_lower <= e.eta_upper and e.eta_lower <= m.eta_upper
        assert m.delta_lower <= e.delta_upper and e.delta_lower <= m.delta_upper


def test_mc_is_reproducible_with_a_seed():
    a = mc_tail(q=0.244552, bits=5, population=1000, epsilon=0.693, rng=np.random.default_rng(7), samples=5000)
    b = mc_tail(q=0.244552, bits=5, population=1000, epsilon=0.693, rng=np.random.default_rng(7), samples=5000)
    assert a.eta == b.eta and a.delta == b.delta


def test_local_dp_regime_is_exactly_zero():
    # (p/q)^j <= e^eps: R never exceeds lambda
    q = 1 / (1 + math.exp(1.0 / 3)) + 1e-9
    for method in ("certified", "exact", "mc"):
        r = homogeneous_tail(q=q, bits=3, population=100, epsilon=1.0, method=method)
        assert r.eta == 0.0 and r.eta_upper == 0.0


def test_worst_over_outlier_bits_is_max_of_per_j_bounds():
    w = worst_over_outlier_bits(q=0.2, bits=4, population=200, epsilon=1.0)
    per = {int(k): v for k, v in w.details["per_outlier_bits"].items()}
    assert w.eta == max(per.values()) and per[w.outlier_bits] == w.eta
    for j in range(1, 5):
        e = exact_tail(q=0.2, bits=4, population=200, epsilon=1.0, outlier_bits=j)
        assert per[j] >= e.eta_lower  # truth lies in [eta_lower, eta_upper]; the bound must be above it
    we = worst_over_outlier_bits(q=0.2, bits=4, population=200, epsilon=1.0, method="exact")
    assert we.eta_lower <= we.eta <= we.eta_upper <= w.eta


def test_binomial_pmf_accuracy_claim():
    # the module relies on scipy's binomial pmf (boost) being accurate to ~1e-15 relative, even for N ~ 1e7
    for k, n, a in [(3, 10**7, 3e-7), (5, 10**7 - 3, 1.3e-7), (1_300_000, 10**7, 0.13), (250, 4999, 0.05)]:
        exact = mp.binomial(n, k) * mp.mpf(a) ** k * (1 - mp.mpf(a)) ** (n - k)
        assert abs(binom.pmf(k, n, a) / float(exact) - 1) < 1e-12


@pytest.mark.parametrize("kwargs, name", [
    ({"q": 0.7}, "q"),
    ({"q": float("nan")}, "q"),
    ({"bits": 0}, "bits"),
    ({"population": 0}, "population"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"outlier_bits": 6}, "outlier_bits"),
    ({"method": "bogus"}, "method"),
    ({"method": "mc", "samples": 10}, "samples"),
    ({"method": "mc", "confidence_level": 1.5}, "confidence_level"),
    ({"method": "mc", "rng": "seed"}, "rng"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"q": 0.2, "bits": 5, "population": 100, "epsilon": 1.0} | kwargs
    with pytest.raises(ParameterError, match=name):
        homogeneous_tail(**args)


def test_bad_input_worst():
    with pytest.raises(ParameterError, match="method"):
        worst_over_outlier_bits(q=0.2, bits=3, population=100, epsilon=1.0, method="x")


def test_exact_beyond_feasibility_raises():
    with pytest.raises(ParameterError, match="infeasible"):
        exact_tail(q=0.350914, bits=40, population=10**7, epsilon=2.0)


@pytest.mark.slow
@pytest.mark.parametrize("q", [0.1, 0.2, 0.3])
@pytest.mark.parametrize("j", [2, 4, 5])
@pytest.mark.parametrize("n", [50, 300])
def test_certified_above_exact_grid(q, j, n):
    for eps in (0.5, 1.5, 3.0):
        e = exact_tail(q=q, bits=j, population=n, epsilon=eps)
        c = certified_tail(q=q, bits=j, population=n, epsilon=eps)
        assert c.eta >= e.eta_lower and c.eta_lower <= e.eta_upper
        assert c.delta >= e.delta_lower and c.delta_lower <= e.delta_upper
        if e.eta_lower > 1e-12:
            assert c.eta <= 2 * e.eta_upper  # the accuracy goal (not a safety property)


@pytest.mark.parametrize("q, j, n, eps", SMALL_GRID[::5])
def test_mc_against_brute_force(q, j, n, eps):
    # 99.9% empirical-Bernstein intervals (valid at every sample size): a miss has probability <= 1e-3 per case.
    gt, ge, delta = brute_force(q, j, n, eps)
    m = mc_tail(q=q, bits=j, population=n, epsilon=eps, rng=np.random.default_rng(11), samples=2000,
                confidence_level=0.999)
    assert m.eta_lower <= float(ge) * (1 + 1e-9) + 1e-300 and float(gt) * (1 - 1e-9) <= m.eta_upper
    assert m.delta_lower <= float(delta) * (1 + 1e-9) + 1e-300 and float(delta) * (1 - 1e-9) <= m.delta_upper
