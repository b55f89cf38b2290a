"""Tests of the frequentist semantics: maximal power at a level (digest §3, paper 004 Sec. 6)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import linprog

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.conversions import max_power
from sufficientdp.accounting.mechanisms import GaussianPLD, binary_randomized_response
from sufficientdp.accounting.pld import PrivacyLossDistribution
from sufficientdp.semantics.frequentist import (
    approx_dp_power_bound,
    fdp_power,
    power_table,
    pure_dp_power_bound,
    rdp_power_bound,
    zcdp_power_bound,
)


def _lp_power(p0: np.ndarray, p1: np.ndarray, level: float) -> float:
    """Brute-force truth: max_c sum c p1 s.t. sum c p0 <= level, 0 <= c <= 1 (every randomized test), by LP."""
    res = linprog(-p1, A_ub=[p0], b_ub=[level], bounds=[(0, 1)] * p0.size, method="highs")
    return float(-res.fun)


# ------------------------------------------------------------------------------------------ Thm 6.1
def test_table_1_pure_dp() -> None:
    # digest §3.1 Table 1, exact values [VERIFIED]; the paper prints 0.550 (only 2 s.f.) and "0.820" (typo, 0.082)
    exact = {
        0.01: [0.011052, 0.016487, 0.027183, 0.073891, 0.545982],
        0.05: [0.055259, 0.082436, 0.135914, 0.369453, 0.982601],
        0.10: [0.110517, 0.164872, 0.271828, 0.738906, 0.983516],
    }
    for level, row in exact.items():
        for eps, v in zip([0.1, 0.5, 1, 2, 4], row, strict=True):
            assert pure_dp_power_bound(level, eps) == pytest.approx(v, abs=1.5e-6)  # digest rounds 0.9826002 up
    assert abs(pure_dp_power_bound(0.05, 0.5) - 0.820) > 0.7  # the printed anomaly is a typo
    assert pure_dp_power_bound(0.01, 4.0) == pytest.approx(0.550, abs=0.005)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_pure_dp_bound_attained_by_randomized_response(eps: float) -> None:
    # RR's most powerful randomized test (LP over all tests, both directions) equals the bound at every level
    q = 1 / (1 + math.exp(eps))
    p0, p1 = np.array([1 - q, q]), np.array([q, 1 - q])
    rr = binary_randomized_response(q)
    for level in [1e-4, 0.01, 0.05, q, 0.3, 0.5, 0.9]:
        truth = _lp_power(p0, p1, level)
        bound = pure_dp_power_bound(level, eps)
        assert truth <= bound <= truth * (1 + 1e-9) + 1e-15
        assert float(fdp_power(rr, level)) == pytest.approx(truth, rel=1e-9)


# ------------------------------------------------------------------------------------------ Thm 6.2
@pytest.mark.parametrize("eps,delta", [(0.5, 0.01), (1.0, 0.1), (2.0, 1e-4)])
def test_approx_dp_bound_is_tight(eps: float, delta: float) -> None:
    # the canonical (eps, delta) mechanism (Kairouz–Oh–Viswanath) attains Thm 6.2 at every level
    a, b = math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps))
    p = np.array([0.0, (1 - delta) * b, (1 - delta) * a, delta])  # D1 (null)
    q = np.array([delta, (1 - delta) * a, (1 - delta) * b, 0.0])  # D2 (alternative)
    for level in [0.001, 0.01, 0.05, 0.2, 0.6]:
        truth = _lp_power(p, q, level)
        assert truth <= approx_dp_power_bound(level, eps, delta) <= truth + 1e-9


def test_approx_dp_curve_minimum_and_gaussian() -> None:
    # a Gaussian satisfies (eps, delta(eps)) for every eps: its exact power is below the min over its curve
    g = GaussianPLD(mu=1.0)
    eps = np.linspace(0.0, 6.0, 61)
    deltas = np.asarray(g.delta(eps))
    for level in [0.001, 0.01, 0.1, 0.4]:
        curve = approx_dp_power_bound(level, eps, deltas)
        assert float(g.power(level)) <= curve <= min(approx_dp_power_bound(level, e, d) for e, d in zip(eps, deltas))


# ------------------------------------------------------------------------------------------ Thm 6.3
def test_zcdp_bound_digest_tables() -> None:
    # digest §3.3 Table 2 (rho = 2.63) and Table 6 (rho = 0.1115) [VERIFIED], and rho = 0.926 [DERIVED]
    np.testing.assert_allclose(zcdp_power_bound([0.01, 0.05, 0.1], 2.63), [0.69816, 0.94658, 0.96234], atol=1e-5)
    np.testing.assert_allclose(zcdp_power_bound([0.01, 0.05, 0.1], 0.1115), [0.03739, 0.14018, 0.24036], atol=1e-5)
    np.testing.assert_allclose(zcdp_power_bound([0.01, 0.05, 0.1], 0.926), [0.240, 0.515, 0.664], atol=1e-3)


def test_gaussian_power_below_zcdp_bound() -> None:
    # the Gaussian with mu = sqrt(2 rho) is rho-zCDP, so its exact power must be <= the bound at every level
    levels = np.logspace(-6, -0.05, 5)
    for rho in [0.05, 2.63]:
        g = GaussianPLD.from_rho(rho)
        assert np.all(np.asarray(g.power(levels)) <= np.asarray(zcdp_power_bound(levels, rho)))
    # paper Table 2 Gaussian column 0.49, 0.74, 0.84; mpmath oracle Phi(sqrt(2 rho) + Phi^{-1}(l))
    mp.mp.dps = 30
    mu = mp.sqrt(2 * mp.mpf("2.63"))
    oracle = [float(mp.ncdf(mu + mp.sqrt(2) * mp.erfinv(2 * mp.mpf(lv) - 1))) for lv in ("0.01", "0.05", "0.1")]
    got = GaussianPLD.from_rho(2.63).power([0.01, 0.05, 0.1])
    np.testing.assert_allclose(got, oracle, rtol=1e-12)
    np.testing.assert_allclose(got, [0.49, 0.74, 0.84], atol=0.005)


def _sup_over_alpha(level: float, power: float, rho: float) -> float:
    """max over alpha of D_alpha / alpha for the Bernoulli pair, both directions (dense grid + mpmath refine)."""
    mp.mp.dps = 30
    lv, pw = mp.mpf(level), mp.mpf(power)

    def ratio(a: mp.mpf) -> mp.mpf:
        d1 = mp.log(lv**a * pw ** (1 - a) + (1 - lv) ** a * (1 - pw) ** (1 - a)) / (a - 1)
        d2 = mp.log(pw**a * lv ** (1 - a) + (1 - pw) ** a * (1 - lv) ** (1 - a)) / (a - 1)
        return max(d1, d2) / a

    grid = [1 + 10 ** (k / 20) for k in range(-120, 81)]
    vals = [ratio(mp.mpf(a)) for a in grid]
    i = int(np.argmax([float(v) for v in vals]))
    lo, hi = mp.mpf(grid[max(i - 1, 0)]), mp.mpf(grid[min(i + 1, len(grid) - 1)])
    best = mp.findroot(lambda a: mp.diff(ratio, a), (lo + hi) / 2) if i not in (0, len(grid) - 1) else grid[i]
    best = min(max(mp.mpf(best), lo), hi)
    return float(max(vals[i], ratio(best)))


@pytest.mark.parametrize("rho,level", [(2.63, 0.01), (2.63, 0.1), (0.1115, 0.05)])
def test_zcdp_bound_attained_by_binary_mechanism(rho: float, level: float) -> None:
    # the binary mechanism D1 -> Ber(level), D2 -> Ber(p) is rho-zCDP iff p is feasible: just below the bound it is
    # rho-zCDP (so the bound is attained: it is the sup over all rho-zCDP mechanisms) and just above it is not
    p = float(zcdp_power_bound(level, rho))
    assert _sup_over_alpha(level, p - 1e-6, rho) <= rho * (1 + 1e-9)
    assert _sup_over_alpha(level, p + 1e-4, rho) > rho


def test_both_renyi_directions_are_needed() -> None:
    # digest §3.3: at rho = 2.63, l = 0.1 the second inequality alone allows power 1: D_a(Ber(1)||Ber(0.1)) =
    # log(10) <= a rho for all a > 1 since log 10 < 2.63; the first direction excludes it (infinite divergence)
    assert math.log(10) < 2.63
    assert float(zcdp_power_bound(0.1, 2.63)) < 0.97


def test_rdp_bound_with_zcdp_pairs_is_consistent() -> None:
    # fewer orders = fewer constraints: the RDP bound on a coarse grid of (alpha, alpha rho) is >= the zCDP bound
    alphas = np.array([1.5, 2, 4, 8, 16, 32])
    rdp = rdp_power_bound([0.01, 0.1], alphas, 0.5 * alphas)
    z = zcdp_power_bound([0.01, 0.1], 0.5)
    assert np.all(np.asarray(rdp) >= np.asarray(z))
    assert np.all(np.asarray(rdp) <= np.asarray(z) + 0.05)
    # one pair, checked against the binary mechanism at the bound: D_2 in the binding direction equals gamma
    p = float(rdp_power_bound(0.05, [2.0], [1.0]))
    d_fwd = math.log(0.05**2 / p + 0.95**2 / (1 - p))
    d_rev = math.log(p**2 / 0.05 + (1 - p) ** 2 / 0.95)
    assert max(d_fwd, d_rev) == pytest.approx(1.0, abs=1e-9)


# ------------------------------------------------------------------------------------------ §6.4 and f-DP
def test_compound_hypothesis_section_6_4() -> None:
    # §6.4: with uncertainty about the other records the pure-DP bound still holds. Output: the sum of n RR'd bits;
    # others' bits drawn from a correlated F (all equal w.p. 0.5, else independent 0.3). Exact pmfs by enumeration.
    eps, n_others = 1.0, 4
    q = 1 / (1 + math.exp(eps))
    rr_one = np.array([q, 1 - q])  # P(report = 0), P(report = 1) for a true 1
    rr_zero = np.array([1 - q, q])

    def out_pmf(target: int) -> np.ndarray:
        total = np.zeros(n_others + 2)
        configs = []
        for mask in range(2**n_others):
            bits = [(mask >> i) & 1 for i in range(n_others)]
            indep = np.prod([0.3 if b else 0.7 for b in bits])
            allsame = 0.5 if (sum(bits) in (0, n_others)) else 0.0
            configs.append((bits, 0.5 * indep + allsame / 1.0 * 0.5))
        for bits, w in configs:
            pmf = np.array([1.0])
            for b in bits + [target]:
                pmf = np.convolve(pmf, rr_one if b else rr_zero)
            total += w * pmf
        return total / total.sum()

    p0, p1 = out_pmf(0), out_pmf(1)
    compound = PrivacyLossDistribution.from_pmfs(p1, p0)  # H0: target 0 (Q), H1: target 1 (P)
    for level in [0.01, 0.05, 0.2, 0.5]:
        truth = _lp_power(p0, p1, level)
        assert float(max_power(compound, level)) == pytest.approx(truth, rel=1e-7, abs=1e-12)
        assert truth <= pure_dp_power_bound(level, eps)


def test_fdp_power_asymmetric_takes_both_directions() -> None:
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    pld = PrivacyLossDistribution.from_pmfs(p, q)
    for level in [0.02, 0.1, 0.3]:
        truth = max(_lp_power(p, q, level), _lp_power(q, p, level))
        assert float(fdp_power(pld, level)) == pytest.approx(truth, rel=1e-9)
    assert fdp_power(GaussianPLD(mu=1.0), 0.05) == pytest.approx(float(GaussianPLD(mu=1.0).power(0.05)))


# ------------------------------------------------------------------------------------------ table
def test_power_table_columns_and_kinds() -> None:
    t = power_table([0.01, 0.05, 0.1], rho=2.63)
    d = t.to_dict()
    assert d["levels"] == [0.01, 0.05, 0.1]
    assert len(d["power_gaussian"]) == len(d["power_zcdp_bound"]) == 3
    assert d["kind"] == {"power_gaussian": "exact", "power_zcdp_bound": "bound"}
    assert all(g <= b for g, b in zip(d["power_gaussian"], d["power_zcdp_bound"], strict=True))
    t2 = power_table([0.05], epsilon=1.0)
    assert t2.columns["power_rr"][0] == pytest.approx(t2.columns["power_pure_dp_bound"][0], rel=1e-9)
    t3 = power_table([0.05], epsilon=1.0, delta=0.01)
    assert t3.kind == {"power_approx_dp_bound": "bound"}
    t4 = power_table([0.05], mechanism=GaussianPLD(mu=1.0), mechanism_name="g")
    assert set(t4.columns) == {"power_g", "power_zcdp_bound"}
    assert "level" in t4.format()


def test_invalid_inputs() -> None:
    for bad in [0.0, 1.0, -0.1, 1.5, math.nan, [], "x", True]:
        with pytest.raises(ParameterError, match="level"):
            pure_dp_power_bound(bad, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="epsilon"):
        pure_dp_power_bound(0.1, -1.0)
    with pytest.raises(ParameterError, match="epsilon"):
        approx_dp_power_bound(0.1, math.inf, 0.1)
    with pytest.raises(ParameterError, match="delta"):
        approx_dp_power_bound(0.1, 1.0, 1.5)
    with pytest.raises(ParameterError, match="same length"):
        approx_dp_power_bound(0.1, [1.0, 2.0], [0.1])
    with pytest.raises(ParameterError, match="rho"):
        zcdp_power_bound(0.1, 0.0)
    with pytest.raises(ParameterError, match="rho"):
        zcdp_power_bound(0.1, math.inf)
    with pytest.raises(ParameterError, match="alphas"):
        zcdp_power_bound(0.1, 1.0, alphas=[0.5])
    with pytest.raises(ParameterError, match="alphas"):
        rdp_power_bound(0.1, [1.0], [0.1])
    with pytest.raises(ParameterError, match="same length"):
        rdp_power_bound(0.1, [2.0, 3.0], [0.1])
    with pytest.raises(ParameterError, match="gammas"):
        rdp_power_bound(0.1, [2.0], [-0.1])
    with pytest.raises(ParameterError, match="pld"):
        fdp_power("g", 0.1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="needs"):
        power_table([0.1])
    with pytest.raises(ParameterError, match="delta requires"):
        power_table([0.1], rho=1.0, delta=0.1)
    with pytest.raises(ParameterError, match="levels"):
        power_table([0.1, 2.0], rho=1.0)
    with pytest.raises(ParameterError, match="delta"):
        power_table([0.1], epsilon=1.0, delta=2.0)
