"""Single-bit theory of seed 000 §3.1 against exact rational convolution and brute-force profiles."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from sufficientdp._errors import ParameterError
from sufficientdp.ratio.single_bit import (
    log_cdf,
    log_pmf,
    log_privacy_ratio,
    log_probability_ratio,
    log_sf,
    pmf_by_prop_3_1,
    privacy_ratio,
    recursion_3_2,
    recursion_3_3,
    single_bit_tail,
    single_bit_worst_tail,
)


def exact_pmf(n: int, m: int, q: Fraction) -> list[Fraction]:
    """Direct convolution Bin(m, p) * Bin(n - m, q) in rational arithmetic (independent truth)."""
    p = 1 - q
    a = [math.comb(m, j) * p**j * q ** (m - j) for j in range(m + 1)]
    b = [math.comb(n - m, j) * q**j * p ** (n - m - j) for j in range(n - m + 1)]
    out = [Fraction(0)] * (n + 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


QS = [Fraction(1, 10), Fraction(1, 4), Fraction(2, 5)]


@pytest.mark.parametrize("q", QS)
def test_log_pmf_cdf_sf_exact(q):
    for n in range(1, 12):
        for m in range(n + 1):
            ex = exact_pmf(n, m, q)
            s = np.arange(n + 1)
            got = log_pmf(s, population=n, m=m, q=float(q))
            assert np.allclose(got, [math.log(v) for v in ex], rtol=0, atol=1e-12)
            cdf = np.cumsum([float(v) for v in ex])
            assert np.allclose(np.exp(log_cdf(s, population=n, m=m, q=float(q))), cdf, rtol=1e-12, atol=1e-15)
            sf = np.cumsum([float(v) for v in ex][::-1])[::-1]
            assert np.allclose(np.exp(log_sf(s, population=n, m=m, q=float(q))), sf, rtol=1e-12, atol=1e-15)
    assert log_pmf(-1, population=3, m=1, q=0.2) == -math.inf and log_pmf(4, population=3, m=1, q=0.2) == -math.inf


def test_log_pmf_far_tail_large_n():
    """n = 2000: log-domain values far below float range agree with scipy's log pmf of a pure binomial (m = 0)."""
    s = np.array([0, 1, 5, 1999, 2000])
    got = log_pmf(s, population=2000, m=0, q=0.3)
    assert np.allclose(got, binom.logpmf(s, 2000, 0.3), rtol=1e-12)
    got = log_pmf(s, population=2000, m=2000, q=0.3)
    assert np.allclose(got, binom.logpmf(s, 2000, 0.7), rtol=1e-12)


@pytest.mark.parametrize("q", QS)
def test_recursions_3_2_3_3(q):
    for n in range(1, 10):
        for m in range(n + 1):
            ex = exact_pmf(n, m, q)
            if m >= 1:
                assert list(recursion_3_2(np.array(exact_pmf(n - 1, m - 1, q), dtype=object), q)) == ex
            if m <= n - 1:
                assert list(recursion_3_3(np.array(exact_pmf(n - 1, m, q), dtype=object), q)) == ex


@pytest.mark.parametrize("q", QS)
def test_prop_3_1_exact(q):
    """Seed 000 Prop. 3.1 (3.4), used as a recurrence from P(0), reproduces the pmf exactly."""
    for n in range(1, 12):
        for m in range(n + 1):
            assert pmf_by_prop_3_1(population=n, m=m, q=q) == exact_pmf(n, m, q)


def test_privacy_ratio_direction_and_values():
    """Paper's definition: pi(s; m) = P[A_n(m) = s] / P[A_n(m+1) = s]."""
    q = Fraction(1, 4)
    for n in range(1, 9):
        for m in range(n):
            a, b = exact_pmf(n, m, q), exact_pmf(n, m + 1, q)
            got = privacy_ratio(np.arange(n + 1), population=n, m=m, q=0.25)
            assert np.allclose(got, [float(x / y) for x, y in zip(a, b)], rtol=1e-12)
            lr = log_probability_ratio(np.arange(1, n + 1), population=n, m=m, q=0.25)
            assert np.allclose(np.exp(lr), [float(a[s] / a[s - 1]) for s in range(1, n + 1)], rtol=1e-12)
    assert privacy_ratio(0, population=7, m=3, q=0.25) == pytest.approx(3.0)  # p/q
    assert privacy_ratio(7, population=7, m=3, q=0.25) == pytest.approx(1 / 3)  # q/p


@pytest.mark.slow
def test_monotonicity_grid():
    """§3.1.2 / §3.1.4: rho decreasing in s, increasing in m; pi decreasing in s, increasing in m,
    pi(s; m) >= pi(s+1; m+1). All hold on this grid (docs/single_bit.md has the larger grid)."""
    tol = 1e-10
    for n in (2, 5, 17, 40, 90):
        for q in (0.02, 0.1, 0.3, 0.45, 0.499):
            lpi = np.array([log_privacy_ratio(np.arange(n + 1), population=n, m=m, q=q) for m in range(n)])
            assert np.all(np.diff(lpi, axis=1) <= tol * (1 + np.abs(lpi[:, :-1])))
            assert np.all(np.diff(lpi, axis=0) >= -tol * (1 + np.abs(lpi[:-1])))
            assert np.all(lpi[1:, 1:] <= lpi[:-1, :-1] + tol * (1 + np.abs(lpi[:-1, :-1])))
            lrho = np.array([log_probability_ratio(np.arange(1, n + 1), population=n, m=m, q=q) for m in range(n + 1)])
            assert np.all(np.diff(lrho, axis=1) <= tol * (1 + np.abs(lrho[:, :-1])))
            assert np.all(np.diff(lrho, axis=0) >= -tol * (1 + np.abs(lrho[:-1])))


def test_quantile_claim_grid():
    """§3.1.5: tau_n(m) in {tau_n(m-1), tau_n(m-1) + 1} for every alpha on the grid."""
    for n in (1, 4, 13, 50):
        for q in (0.05, 0.25, 0.45):
            F = np.array([np.exp(log_cdf(np.arange(n + 1), population=n, m=m, q=q)) for m in range(n + 1)])
            for alpha in (1e-6, 0.01, 0.1, 0.5, 0.9, 0.999):
                tau = np.argmax(F >= alpha, axis=1)
                assert set(np.diff(tau).tolist()) <= {0, 1}


def _brute_profile(n, m, q, eps):
    p = 1 - q
    a = np.convolve(binom.pmf(np.arange(m + 1), m, p), binom.pmf(np.arange(n - m + 1), n - m, q))
    b = np.convolve(binom.pmf(np.arange(m + 2), m + 1, p), binom.pmf(np.arange(n - m), n - m - 1, q))
    lam = math.exp(eps)
    return {"remove": (a[a > lam * b].sum(), np.maximum(a - lam * b, 0).sum()),
            "add": (b[b > lam * a].sum(), np.maximum(b - lam * a, 0).sum())}


@pytest.mark.parametrize("n,m,q,eps", [(1, 0, 0.25, 0.5), (20, 3, 0.2, 0.5), (100, 0, 0.1, 0.3),
                                       (100, 99, 0.1, 0.3), (57, 20, 0.35, 0.05), (5, 2, 0.45, 0.1),
                                       (300, 150, 0.3, 0.2), (40, 7, 0.05, 2.0)])
def test_tail_matches_brute_force(n, m, q, eps):
    bf = _brute_profile(n, m, q, eps)
    for d in ("add", "remove"):
        r = single_bit_tail(population=n, m=m, q=q, epsilon=eps, direction=d)
        assert r.kind == "exact"
        assert r.eta == pytest.approx(bf[d][0], rel=1e-9, abs=1e-300)
        assert r.delta == pytest.approx(bf[d][1], rel=1e-7, abs=1e-15)
    both = single_bit_tail(population=n, m=m, q=q, epsilon=eps)
    assert both.eta == pytest.approx(max(bf["add"][0], bf["remove"][0]), rel=1e-9, abs=1e-300)


def test_tail_symmetry_and_pure_dp_edge():
    """n - A_n(m) ~ A_n(n - m): (m, m+1) 'add' equals (n-1-m, n-m) 'remove'; eps >= log(p/q) gives 0."""
    a = single_bit_tail(population=80, m=11, q=0.2, epsilon=0.4, direction="add")
    b = single_bit_tail(population=80, m=68, q=0.2, epsilon=0.4, direction="remove")
    assert a.eta == pytest.approx(b.eta, rel=1e-10) and a.delta == pytest.approx(b.delta, rel=1e-8)
    z = single_bit_tail(population=80, m=11, q=0.2, epsilon=math.log(4.0) + 1e-9)
    assert z.eta == 0.0 and z.delta == 0.0


def test_large_n_is_fast():
    t = time.perf_counter()
    r = single_bit_tail(population=1_000_000, m=400_000, q=0.3, epsilon=0.01)
    elapsed = time.perf_counter() - t
    assert elapsed < 2.0  # typically ~0.3 s
    assert 0.0 < r.eta < 1e-20 and r.details["log_eta"] is not None


def test_worst_over_m_scan_and_extremes_not_always_worst():
    n, q, eps = 20, 0.2, 0.5
    bf = [_brute_profile(n, m, q, eps) for m in range(n)]
    worst_delta = max(max(x["add"][1], x["remove"][1]) for x in bf)
    worst_eta = max(max(x["add"][0], x["remove"][0]) for x in bf)
    r = single_bit_worst_tail(population=n, q=q, epsilon=eps)
    assert r.delta == pytest.approx(worst_delta, rel=1e-9)
    assert r.eta == pytest.approx(worst_eta, rel=1e-9)
    # counterexample to "the extreme pair is the worst": m = 1 beats m = 0 for delta
    assert r.details["argmax_m_delta"] == 1
    assert r.delta > single_bit_tail(population=n, m=0, q=q, epsilon=eps).delta * 1.05


def test_invalid_inputs():
    with pytest.raises(ParameterError):
        log_pmf([0], population=0, m=0, q=0.2)
    with pytest.raises(ParameterError):
        log_pmf([0], population=3, m=4, q=0.2)
    with pytest.raises(ParameterError):
        log_pmf([0.5], population=3, m=1, q=0.2)
    with pytest.raises(ParameterError):
        log_pmf([0], population=3, m=1, q=0.5)
    with pytest.raises(ParameterError):
        single_bit_tail(population=3, m=3, q=0.2, epsilon=1.0)
    with pytest.raises(ParameterError):
        single_bit_tail(population=3, m=1, q=0.2, epsilon=0.0)
    with pytest.raises(ParameterError):
        single_bit_tail(population=3, m=1, q=0.2, epsilon=1.0, direction="sideways")
    with pytest.raises(ParameterError):
        single_bit_worst_tail(population=2_000_000, q=0.2, epsilon=1.0)
    with pytest.raises(ParameterError):
        log_privacy_ratio([5], population=3, m=1, q=0.2)
