"""Tests of conversions and of the attacker's maximal power."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sufficientdp import ParameterError
from sufficientdp.accounting import (
    GaussianPLD,
    PrivacyLossDistribution,
    binary_randomized_response,
    gdp_mu_from_tradeoff,
    gdp_tradeoff,
    geometric,
    k_randomized_response,
    max_power,
    pure_to_zcdp,
    rdp_to_approx_dp,
    zcdp_tail_bound,
    zcdp_to_approx_dp,
)


def test_zcdp_to_approx_dp_closed_form_and_monotone() -> None:
    # digest §1.13 [DERIVED]: eps(delta) = rho + 2 sqrt(rho log(1/delta)) -- now method="bun-steinke" (rounded up);
    # the default is the tighter Canonne–Kamath–Steinke conversion (tests/accounting/test_conversions_optimal.py)
    for rho, d, closed in [(0.5, math.exp(-1), 0.5 + 2 * math.sqrt(0.5)), (2.0, math.exp(-8), 2.0 + 2 * 4.0)]:
        old = zcdp_to_approx_dp(rho, d, method="bun-steinke")
        assert old >= closed and old == pytest.approx(closed, rel=1e-13)
        assert zcdp_to_approx_dp(rho, d) < old
    for method in ["cks20", "bun-steinke"]:
        deltas = np.logspace(-12, -0.01, 40)
        eps = zcdp_to_approx_dp(1.0, deltas, method=method)
        assert np.all(np.diff(eps) < 0)  # decreasing in delta
        assert zcdp_to_approx_dp(1.1, 1e-6, method=method) > zcdp_to_approx_dp(1.0, 1e-6, method=method)


@pytest.mark.parametrize("rho", [0.1115, 0.926, 2.63])
def test_zcdp_conversion_is_valid_for_the_gaussian(rho: float) -> None:
    # the Gaussian with mu = sqrt(2 rho) is rho-zCDP; its exact delta and tail must lie under the bound
    g = GaussianPLD.from_rho(rho)
    for d in [1e-1, 1e-3, 1e-6, 1e-10]:
        # the default (CKS) eps bounds the hockey-stick delta; the Bun–Steinke eps also bounds the tail eta
        assert float(g.delta(zcdp_to_approx_dp(rho, d))) <= d
        eps = zcdp_to_approx_dp(rho, d, method="bun-steinke")
        assert float(g.delta(eps)) <= float(g.eta(eps)) <= d
    # the Bun–Steinke eps is the tail bound exp(-(eps-rho)^2/(4 rho)) inverted
    assert zcdp_tail_bound(rho, zcdp_to_approx_dp(rho, 1e-5, method="bun-steinke")) == pytest.approx(1e-5, rel=1e-10)


def test_zcdp_tail_bound_digest_values() -> None:
    # digest §6 Table 6 "zCDP Upper Bound" is the power bound, not this; here: the RDP bound minimised over alpha
    # equals the zCDP bound at alpha* = (eps+rho)/(2 rho) (digest §1.13)
    rho, eps = 0.5, 3.0
    alphas = np.linspace(1.001, 20, 200_000)
    rdp_min = np.min(np.exp((alphas - 1) * (alphas * rho - eps)))
    assert zcdp_tail_bound(rho, eps) == pytest.approx(rdp_min, rel=1e-8)
    assert zcdp_tail_bound(rho, 0.3) == 1.0


def test_rdp_to_approx_dp_matches_zcdp_closed_form() -> None:
    # (alpha, alpha rho)-RDP for all alpha: min_alpha alpha rho + log(1/d)/(alpha-1) = rho + 2 sqrt(rho log(1/d))
    # (the classical conversion; the default CKS one is checked in test_conversions_optimal.py)
    rho, d = 0.4, 1e-6
    alphas = 1 + np.logspace(-3, 3, 20_001)
    res = rdp_to_approx_dp(alphas, alphas * rho, d, method="classical")
    exact = zcdp_to_approx_dp(rho, d, method="bun-steinke")
    assert exact * (1 - 1e-13) <= res.epsilon <= exact * (1 + 1e-6)
    assert res.alpha == pytest.approx(1 + math.sqrt(math.log(1 / d) / rho), rel=1e-3)
    assert res.to_dict()["delta"] == d and res.method == "classical"
    assert rdp_to_approx_dp(alphas, alphas * rho, d).epsilon < res.epsilon
    # for RR (pure eps) the RDP conversions are valid: its exact delta at the returned epsilon is <= d, and the
    # classical one (the RDP tail bound) also bounds the tail eta
    rr = binary_randomized_response(0.2).self_compose(20)
    grid = np.linspace(1.1, 64, 300)
    res_rr = rdp_to_approx_dp(grid, rr.renyi(grid), 1e-5, method="classical")
    assert float(rr.delta(res_rr.epsilon)) <= float(rr.eta(res_rr.epsilon)) <= 1e-5
    assert float(rr.delta(rdp_to_approx_dp(grid, rr.renyi(grid), 1e-5).epsilon)) <= 1e-5


def test_pure_to_zcdp_and_rr_renyi_below_it() -> None:
    assert pure_to_zcdp(1.0) == 0.5
    # Bun–Steinke Prop 1.4: eps-DP => (eps^2/2)-zCDP, i.e. D_alpha <= alpha eps^2 / 2
    for eps in [0.1, 1.0, 3.0]:
        rr = binary_randomized_response(1 / (1 + math.exp(eps)))
        alphas = np.linspace(1.01, 50, 100)
        assert np.all(rr.renyi(alphas) <= alphas * pure_to_zcdp(eps) + 1e-12)


def test_gdp_tradeoff_and_inverse() -> None:
    mu = 1.3
    x = np.linspace(0, 1, 101)
    f = gdp_tradeoff(mu, x)
    assert f[0] == 1.0 and f[-1] == 0.0
    assert np.all(np.diff(f) <= 0) and np.all(f <= 1 - x + 1e-15)
    np.testing.assert_allclose(gdp_tradeoff(mu, f), x, atol=1e-12)  # GDP trade-offs are symmetric: f(f(x)) = x
    assert gdp_mu_from_tradeoff(0.05, float(gdp_tradeoff(mu, 0.05))) == pytest.approx(mu, rel=1e-12)
    # digest Table 2 (rho = 2.63, Gaussian): power = 1 - f(level)
    np.testing.assert_allclose(
        1 - gdp_tradeoff(math.sqrt(5.26), [0.01, 0.05, 0.1]), [0.49, 0.74, 0.84], atol=0.005
    )


def test_max_power_rr_reproduces_digest_table1() -> None:
    # randomized response attains the Wasserman–Zhou bound min(e^eps l, 1 - e^{-eps}(1-l)); digest Table 1 exact
    # values (the printed 0.820 and 0.550 are the typos the digest flags).
    table = {
        0.01: [0.011052, 0.016487, 0.027183, 0.073891, 0.545982],
        0.05: [0.055259, 0.082436, 0.135914, 0.369453, 0.982601],
        0.10: [0.110517, 0.164872, 0.271828, 0.738906, 0.983516],
    }
    for level, row in table.items():
        epss = [0.1, 0.5, 1.0, 2.0, 4.0]
        got = [float(max_power(binary_randomized_response(1 / (1 + math.exp(e))), level)) for e in epss]
        exact = [min(math.exp(e) * level, 1 - math.exp(-e) * (1 - level)) for e in epss]  # digest eq. (4)
        np.testing.assert_allclose(got, exact, atol=1e-12)
        # the digest's 6-decimal values; 0.982601 is 1 - e^{-4} 0.95 = 0.9826002 rounded up, hence 2e-6
        np.testing.assert_allclose(got, row, atol=2e-6)


def test_max_power_hand_computation_rr_quarter() -> None:
    # H0 = (1/4, 3/4), H1 = (3/4, 1/4): reject output 0 first (LR 3): power 3l for l <= 1/4, then 3/4 + (l-1/4)/3
    pld = binary_randomized_response(0.25)
    levels = np.array([0.0, 0.1, 0.25, 0.5, 1.0])
    expected = np.where(levels <= 0.25, 3 * levels, 0.75 + (levels - 0.25) / 3)
    np.testing.assert_allclose(max_power(pld, levels), expected, atol=1e-15)


def test_max_power_gaussian_dispatch() -> None:
    g = GaussianPLD(mu=1.0)
    assert float(max_power(g, 0.05)) == pytest.approx(float(1 - gdp_tradeoff(1.0, 0.05)), rel=1e-14)


@pytest.mark.parametrize(
    "pld",
    [
        binary_randomized_response(0.2).self_compose(3),
        k_randomized_response(1.5, 4).compose(geometric(0.4, 3)),
        PrivacyLossDistribution.from_pmfs([0.4, 0.3, 0.2, 0.1, 0.0], [0.0, 0.1, 0.2, 0.3, 0.4]),
    ],
)
def test_power_obeys_hypothesis_testing_characterization(pld: PrivacyLossDistribution) -> None:
    # (eps, delta(eps))-DP <=> every test has power <= e^eps level + delta (digest §3.2, Kairouz et al.),
    # and the bound is attained by the NP test at some level (the curve touches the line).
    levels = np.linspace(0, 1, 201)
    power = max_power(pld, levels)
    assert np.all(np.diff(power) >= -1e-15)  # non-decreasing
    assert np.all(power >= levels - 1e-12)  # at least as good as a coin
    for eps in [0.0, 0.25, 0.7, 1.5, 3.0]:
        d = float(pld.delta(eps))
        assert np.all(power <= math.exp(eps) * levels + d + 1e-12)
        assert np.max(max_power(pld, np.linspace(0, 1, 20001)) - math.exp(eps) * np.linspace(0, 1, 20001)) == (
            pytest.approx(d, abs=1e-3)
        )


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: zcdp_to_approx_dp(0.0, 1e-5), "rho"),
        (lambda: zcdp_to_approx_dp(1.0, 0.0), "delta"),
        (lambda: zcdp_to_approx_dp(1.0, 1.0), "delta"),
        (lambda: zcdp_tail_bound(1.0, -1.0), "epsilon"),
        (lambda: rdp_to_approx_dp([1.0, 2.0], [0.1, 0.2], 1e-5), "alphas"),
        (lambda: rdp_to_approx_dp([2.0], [0.1, 0.2], 1e-5), "alphas and rdp"),
        (lambda: rdp_to_approx_dp([2.0], [-0.1], 1e-5), "rdp"),
        (lambda: pure_to_zcdp(float("nan")), "epsilon"),
        (lambda: gdp_tradeoff(-1.0, 0.1), "mu"),
        (lambda: gdp_tradeoff(1.0, 1.1), "level"),
        (lambda: gdp_mu_from_tradeoff(0.1, 0.95), "type2"),
        (lambda: max_power("x", 0.1), "pld"),  # type: ignore[arg-type]
        (lambda: max_power(binary_randomized_response(0.2), -0.1), "level"),
    ],
)
def test_bad_inputs_raise_parameter_error(call: object, name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        call()  # type: ignore[operator]
