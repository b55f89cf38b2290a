"""The tight zCDP/RDP -> (eps, delta) conversions (Canonne–Kamath–Steinke 2020, dp_accounting's compute_epsilon).

Independent truths used: dp_accounting 0.6.0's ``compute_epsilon`` / ``compute_delta`` (oracle for the RDP
conversion), mpmath at 50 digits evaluating the CKS formula on fine alpha grids (refined by a root search on the
derivative), the check value ``eps = 13.79`` at ``rho = 2.63, delta = 1e-6`` (Bun–Steinke: 14.69), exact
mechanisms (Gaussian, randomized response), and the old conversions, which the new ones must never exceed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
import pytest

from sufficientdp import ParameterError
from sufficientdp.accounting import GaussianPLD, binary_randomized_response, pure_to_zcdp
from sufficientdp.accounting.conversions import (
    RDP_CONVERSION_METHODS,
    ZCDP_CONVERSION_METHODS,
    rdp_to_approx_dp,
    rdp_to_delta,
    zcdp_tail_bound,
    zcdp_tail_epsilon,
    zcdp_to_approx_dp,
    zcdp_to_delta,
)

rdp_acc = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
dp_event = pytest.importorskip("dp_accounting.dp_event")

mpmath.mp.dps = 50

RHOS = [1e-4, 0.01, 0.1115, 0.5, 0.926, 2.63, 20.0]
DELTAS = [1e-12, 1e-9, 1e-6, 1e-3, 0.05]


# ------------------------------------------------------------------------------------------- mpmath references
def _mp_eps_at(rho: mpmath.mpf, log_inv: mpmath.mpf, a: mpmath.mpf) -> mpmath.mpf:
    return a * rho + (log_inv + (a - 1) * mpmath.log(1 - 1 / a) - mpmath.log(a)) / (a - 1)


def _mp_log_delta_at(rho: mpmath.mpf, eps: mpmath.mpf, a: mpmath.mpf) -> mpmath.mpf:
    return (a - 1) * (a * rho - eps) + a * mpmath.log(1 - 1 / a) - mpmath.log(a - 1)


def _mp_grid_min(f: Callable[[mpmath.mpf], mpmath.mpf], a_lo: float, a_hi: float, n: int = 4000) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Minimum of ``f`` over a geometric grid of ``alpha - 1``, refined by golden section around the best point."""
    grid = [1 + mpmath.mpf(x) for x in np.geomspace(a_lo - 1, a_hi - 1, n)]
    vals = [f(a) for a in grid]
    i = min(range(n), key=lambda k: vals[k])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, n - 1)]
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(200):
        c, d = hi - g * (hi - lo), lo + g * (hi - lo)
        if f(c) < f(d):
            hi = d
        else:
            lo = c
    a = (lo + hi) / 2
    return min(f(a), vals[i]), a


def mp_cks_epsilon(rho: float, delta: float) -> mpmath.mpf:
    r, li = mpmath.mpf(rho), -mpmath.log(mpmath.mpf(delta))
    return _mp_grid_min(lambda a: _mp_eps_at(r, li, a), 1 + 1e-9, 1 + 1e6)[0]


def mp_cks_delta(rho: float, eps: float) -> mpmath.mpf:
    r, e = mpmath.mpf(rho), mpmath.mpf(eps)
    return mpmath.exp(_mp_grid_min(lambda a: _mp_log_delta_at(r, e, a), 1 + 1e-9, 1 + 1e6)[0])


# ------------------------------------------------------------------------------------------------- zCDP, eps
@pytest.mark.slow
def test_check_value_rho_263_delta_1e6() -> None:
    new = zcdp_to_approx_dp(2.63, 1e-6)
    old = zcdp_to_approx_dp(2.63, 1e-6, method="bun-steinke")
    assert new == pytest.approx(13.79, abs=0.005)
    assert old == pytest.approx(14.69, abs=0.005)
    assert old - new > 0.89  # the new conversion is strictly (and materially) better here
    # never below the true infimum (a valid bound), and within 1e-12 of it (tight)
    ref = mp_cks_epsilon(2.63, 1e-6)
    assert float(ref) == pytest.approx(13.792327690, abs=1e-9)
    assert mpmath.mpf(new) >= ref and new - float(ref) < 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("rho", RHOS)
def test_zcdp_epsilon_matches_mpmath_infimum_and_is_never_below_it(rho: float) -> None:
    for d in DELTAS:
        got = zcdp_to_approx_dp(rho, d)
        ref = max(mp_cks_epsilon(rho, d), mpmath.mpf(0))  # delta(eps) is non-increasing: floor at 0
        assert mpmath.mpf(got) >= ref, (rho, d)  # rounded in the safe direction
        assert got - float(ref) <= 1e-12 * max(1.0, float(ref)), (rho, d)  # and tight


@pytest.mark.parametrize("rho", RHOS)
def test_zcdp_epsilon_strictly_below_bun_steinke(rho: float) -> None:
    for d in DELTAS:
        new = zcdp_to_approx_dp(rho, d)
        old = zcdp_to_approx_dp(rho, d, method="bun-steinke")
        assert old == zcdp_tail_epsilon(rho, d)
        # the CKS eps at the Bun–Steinke order alpha = 1 + sqrt(log(1/d)/rho) is already smaller by
        # log(alpha)/(alpha-1) - log(1-1/alpha) > 0 (and eps is floored at 0), so strictly below everywhere
        a = 1 + math.sqrt(-math.log(d) / rho)
        gain = math.log(a) / (a - 1) - math.log1p(-1 / a)
        assert new < old and new <= max(0.0, old - 0.99 * gain), (rho, d, new, old)


def test_bun_steinke_method_is_the_old_closed_form_rounded_up() -> None:
    for rho, d in [(0.5, math.exp(-1)), (2.0, math.exp(-8)), (2.63, 1e-6)]:
        exact = mpmath.mpf(rho) + 2 * mpmath.sqrt(rho * -mpmath.log(mpmath.mpf(d)))
        got = zcdp_to_approx_dp(rho, d, method="bun-steinke")
        assert mpmath.mpf(got) >= exact and got == pytest.approx(float(exact), rel=1e-13)


def test_zcdp_epsilon_monotone_and_array_shape() -> None:
    deltas = np.logspace(-15, -0.05, 60)
    for rho in [0.01, 0.5, 2.63]:
        eps = zcdp_to_approx_dp(rho, deltas)
        assert eps.shape == deltas.shape
        pos = eps[eps > 0]
        assert np.all(np.diff(pos) < 0)  # strictly decreasing in delta while positive
        assert np.all(np.diff(eps) <= 0)
    rhos = np.geomspace(1e-3, 50, 40)
    by_rho = [zcdp_to_approx_dp(float(r), 1e-6) for r in rhos]
    assert np.all(np.diff(by_rho) > 0)  # increasing in rho
    assert zcdp_to_approx_dp(1.0, np.array([[1e-3, 1e-6]])).shape == (1, 2)


def test_zcdp_epsilon_is_zero_exactly_from_the_cks_delta_at_zero() -> None:
    rho = 0.01
    d0 = zcdp_to_delta(rho, 0.0)  # 0.08563...: CKS delta(0), below the Bretagnolle–Huber sqrt(1-e^-rho) = 0.0998
    assert d0 == pytest.approx(0.0856336, abs=1e-6) and d0 < math.sqrt(-math.expm1(-rho))
    assert zcdp_to_approx_dp(rho, d0 * (1 + 1e-9)) == 0.0
    assert 0.0 < zcdp_to_approx_dp(rho, d0 * (1 - 1e-6)) < 1e-4


# ----------------------------------------------------------------------------------------------- zCDP, delta
@pytest.mark.slow
@pytest.mark.parametrize("rho", [0.01, 0.1115, 0.926, 2.63])
def test_zcdp_delta_matches_mpmath_and_inverts_epsilon(rho: float) -> None:
    for eps in [0.0, 0.3, 1.0, 4.0, 13.79, 40.0]:
        got = zcdp_to_delta(rho, eps)
        ref = min(mp_cks_delta(rho, eps), mpmath.mpf(1))
        assert mpmath.mpf(got) >= ref, (rho, eps)  # rounded in the safe direction
        assert got <= float(ref) * (1 + 1e-9) + 1e-300, (rho, eps)  # the rounding margin is ~64 ulp of log delta
        assert got <= zcdp_to_delta(rho, eps, method="bun-steinke")
        assert got <= zcdp_tail_bound(rho, eps)
    for d in [1e-10, 1e-6, 1e-2]:
        eps = zcdp_to_approx_dp(rho, d)
        assert zcdp_to_delta(rho, eps) == pytest.approx(d, rel=1e-9)
        assert zcdp_to_delta(rho, eps) <= d * (1 + 1e-12)
    deltas = zcdp_to_delta(rho, np.linspace(0, 30, 61))
    assert np.all(np.diff(deltas) <= 0)


def test_zcdp_delta_check_value_and_strictly_below_old() -> None:
    assert zcdp_to_delta(2.63, 13.80) <= 1e-6 < zcdp_to_delta(2.63, 13.78)
    assert zcdp_to_delta(2.63, 14.6857) < 0.5 * zcdp_to_delta(2.63, 14.6857, method="bun-steinke")
    # a positive bound never underflows to 0 (that would understate delta)
    assert 0.0 < zcdp_to_delta(0.01, 60.0) <= 1e-300


# ------------------------------------------------------------------------------- zCDP: exact mechanisms
@pytest.mark.parametrize("rho", [0.1115, 0.926, 2.63])
def test_cks_epsilon_is_valid_for_the_gaussian(rho: float) -> None:
    g = GaussianPLD.from_rho(rho)  # exactly rho-zCDP
    for d in [1e-1, 1e-3, 1e-6, 1e-10]:
        eps = zcdp_to_approx_dp(rho, d)
        assert float(g.delta(eps)) <= d


def test_cks_epsilon_is_not_a_tail_bound() -> None:
    # Randomized response with eps0 = 0.2 is 0.02-zCDP (Bun–Steinke Prop. 1.4). At delta = 0.05 the CKS eps is
    # below 0.2, so P(L > eps) = e^0.2/(1+e^0.2) = 0.55 > delta: (eps, delta)-DP holds (delta(eps) ~ 1e-3), but
    # the tail does not. Tail readings (eta, pbdp, posterior Thm 7.4.2) must use method="bun-steinke".
    rr = binary_randomized_response(1 / (1 + math.exp(0.2)))
    rho, d = float(pure_to_zcdp(0.2)), 0.05
    eps = zcdp_to_approx_dp(rho, d)
    assert eps < 0.2
    assert float(rr.delta(eps)) <= d < float(rr.eta(eps))
    tail_eps = zcdp_tail_epsilon(rho, d)
    assert float(rr.eta(tail_eps)) <= d


# ----------------------------------------------------------------------------------- RDP vs dp_accounting
def _curves() -> list[tuple[str, np.ndarray, np.ndarray]]:
    orders = np.concatenate([np.linspace(1.02, 2, 50), np.linspace(2.1, 20, 180), np.geomspace(21, 2000, 80)])
    out = [("gaussian rho=0.5", orders, orders * 0.5), ("gaussian rho=2.63", orders, orders * 2.63)]
    acc = rdp_acc.RdpAccountant(list(orders))
    acc.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 1000)
    out.append(("dp-sgd q=0.01 sigma=1.1 T=1000", orders, np.asarray(acc._rdp, dtype=np.float64)))
    rr = binary_randomized_response(0.2).self_compose(20)
    out.append(("rr x20", orders, np.asarray(rr.renyi(orders), dtype=np.float64)))
    return out


@pytest.mark.parametrize(("name", "orders", "rdp"), _curves())
def test_rdp_epsilon_matches_dp_accounting(name: str, orders: np.ndarray, rdp: np.ndarray) -> None:
    for d in [1e-12, 1e-8, 1e-5, 1e-3, 0.1]:
        ours = rdp_to_approx_dp(orders, rdp, d)
        theirs, order = rdp_acc.compute_epsilon(orders, rdp, d)
        assert ours.method == "cks20" and ours.delta == d
        assert ours.epsilon >= float(theirs), (name, d)
        assert ours.epsilon == pytest.approx(float(theirs), rel=1e-12, abs=1e-12), (name, d)
        if theirs > 0:
            assert ours.alpha == order
        # classical (Mironov) is never better, and strictly worse whenever the bound is positive
        old = rdp_to_approx_dp(orders, rdp, d, method="classical")
        assert ours.epsilon <= old.epsilon
        if ours.epsilon > 0:
            assert ours.epsilon < old.epsilon - 1e-6


@pytest.mark.parametrize(("name", "orders", "rdp"), _curves())
def test_rdp_delta_matches_dp_accounting(name: str, orders: np.ndarray, rdp: np.ndarray) -> None:
    for eps in [0.0, 0.5, 1.0, 3.0, 8.0]:
        ours = rdp_to_delta(orders, rdp, eps)
        theirs, order = rdp_acc.compute_delta(orders, rdp, eps)
        assert ours.epsilon == eps
        assert ours.delta >= float(theirs), (name, eps)
        assert ours.delta == pytest.approx(float(theirs), rel=1e-10, abs=1e-300), (name, eps)
        old = rdp_to_delta(orders, rdp, eps, method="classical")
        assert ours.delta <= old.delta
        if 0 < old.delta < 1:
            assert ours.delta < old.delta


def test_rdp_result_is_the_formula_at_the_returned_order_rounded_up() -> None:
    # any order gives a valid bound; the returned value must be >= the exact formula at the returned order
    orders = np.linspace(1.5, 80, 500)
    for rho in [0.05, 0.9, 3.0]:
        for d in [1e-9, 1e-4]:
            res = rdp_to_approx_dp(orders, orders * rho, d)
            a = mpmath.mpf(res.alpha)
            exact = _mp_eps_at(mpmath.mpf(rho) * 1, -mpmath.log(mpmath.mpf(d)), a)
            r_float = mpmath.mpf(float(res.alpha * rho))  # the rdp value actually passed (a float product)
            exact = exact - a * mpmath.mpf(rho) + r_float
            assert mpmath.mpf(res.epsilon) >= exact and res.epsilon - float(exact) < 1e-12
            cl = rdp_to_approx_dp(orders, orders * rho, d, method="classical")
            exact_cl = mpmath.mpf(float(cl.alpha * rho)) - mpmath.log(mpmath.mpf(d)) / (mpmath.mpf(cl.alpha) - 1)
            assert mpmath.mpf(cl.epsilon) >= exact_cl


def test_rdp_of_zcdp_curve_agrees_with_zcdp_conversion() -> None:
    # (alpha, alpha rho)-RDP on a fine grid -> the zCDP conversion (which takes the infimum over all alpha)
    rho, d = 0.4, 1e-6
    alphas = 1 + np.logspace(-3, 3, 20_001)
    res = rdp_to_approx_dp(alphas, alphas * rho, d)
    exact = zcdp_to_approx_dp(rho, d)
    assert exact <= res.epsilon <= exact * (1 + 1e-6)
    log_inv = -math.log(d)
    root = float(mpmath.findroot(lambda a: rho * (a - 1) ** 2 + mpmath.log(a) - log_inv, 2.0))
    assert res.alpha == pytest.approx(root, rel=1e-3)  # d/dalpha = 0 <=> rho (alpha-1)^2 = log(1/d) - log(alpha)
    # the dp_accounting oracle on the same grid (orders <= 1.01 are skipped there, irrelevant at this delta)
    assert res.epsilon == pytest.approx(float(rdp_acc.compute_epsilon(alphas, alphas * rho, d)[0]), rel=1e-12)


def test_rdp_valid_for_randomized_response_exact_delta() -> None:
    rr = binary_randomized_response(0.2).self_compose(20)
    grid = np.linspace(1.1, 64, 300)
    res = rdp_to_approx_dp(grid, rr.renyi(grid), 1e-5)
    assert float(rr.delta(res.epsilon)) <= 1e-5
    back = rdp_to_delta(grid, rr.renyi(grid), res.epsilon)
    assert back.delta <= 1e-5 * (1 + 1e-9)


def test_rdp_edge_values() -> None:
    # an infinite order is ignored; all-infinite gives eps = inf; rdp = 0 gives delta = 0
    res = rdp_to_approx_dp([2.0, 3.0], [math.inf, 0.3], 1e-5)
    assert res.alpha == 3.0 and math.isfinite(res.epsilon)
    assert rdp_to_approx_dp([2.0], [math.inf], 1e-5).epsilon == math.inf
    assert rdp_to_approx_dp([2.0], [math.inf], 1e-5).to_dict()["epsilon"] is None
    assert rdp_to_delta([2.0], [0.0], 0.0).delta == 0.0
    assert rdp_to_delta([2.0], [math.inf], 1.0).delta == 1.0
    assert rdp_to_approx_dp([2.0], [0.0], 1e-5).epsilon == 0.0


# ------------------------------------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: zcdp_to_approx_dp(1.0, 1e-5, method="bs"), r"method must be one of 'cks20', 'bun-steinke'"),
        (lambda: zcdp_to_delta(1.0, 1.0, method=None), "method"),  # type: ignore[arg-type]
        (lambda: zcdp_to_delta(1.0, 1.0, method="CKS20"), "method"),
        (lambda: rdp_to_approx_dp([2.0], [0.1], 1e-5, method="cks"), r"method must be one of 'cks20', 'classical'"),
        (lambda: rdp_to_delta([2.0], [0.1], 1.0, method="bun-steinke"), "method"),
        (lambda: zcdp_to_approx_dp(-1.0, 1e-5), r"rho must be finite and > 0.*got -1.0"),
        (lambda: zcdp_to_approx_dp(math.inf, 1e-5), "rho"),
        (lambda: zcdp_to_approx_dp(1.0, 1.5), r"delta must be in \(0, 1\); got 1.5"),
        (lambda: zcdp_to_approx_dp(1.0, [1e-5, 0.0]), "delta"),
        (lambda: zcdp_to_delta(1.0, -0.1), r"epsilon must be finite and in \[0, inf\); got -0.1"),
        (lambda: zcdp_to_delta(1.0, math.nan), "epsilon"),
        (lambda: zcdp_to_delta(1.0, math.inf), "epsilon"),
        (lambda: zcdp_tail_epsilon(0.0, 1e-5), "rho"),
        (lambda: rdp_to_delta([2.0], [0.1], -1.0), "epsilon"),
        (lambda: rdp_to_delta([0.5], [0.1], 1.0), r"alphas must be finite and in \(1, inf\)"),
        (lambda: rdp_to_delta([2.0], [math.nan], 1.0), r"rdp must be in \[0, inf\]"),
        (lambda: rdp_to_approx_dp([], [], 1e-5), "alphas and rdp"),
        (lambda: rdp_to_approx_dp([2.0], [0.1], 0.0), "delta"),
    ],
)
def test_bad_inputs_raise_parameter_error(call: object, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        call()  # type: ignore[operator]
    with pytest.raises(ValueError):  # ParameterError is a ValueError
        call()  # type: ignore[operator]


def test_method_tuples() -> None:
    assert ZCDP_CONVERSION_METHODS[0] == "cks20" and RDP_CONVERSION_METHODS[0] == "cks20"
