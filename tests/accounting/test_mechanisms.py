"""Tests of the reference mechanisms' PLDs against numerical integration and brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from sufficientdp import ParameterError
from sufficientdp.accounting import (
    GaussianPLD,
    PrivacyLossDistribution,
    binary_randomized_response,
    bit_vector_randomized_response,
    gaussian,
    geometric,
    k_randomized_response,
)


def _gauss_delta_quad(mu: float, eps: float) -> float:
    """E[(1 - e^{eps-L})_+] with L ~ N(mu^2/2, mu^2), by scipy.integrate.quad (digest eq. 3, §1.9)."""
    dens = stats.norm(mu**2 / 2, mu).pdf
    val, _ = integrate.quad(lambda x: -math.expm1(eps - x) * dens(x), eps, np.inf, epsabs=1e-14, epsrel=1e-12)
    return float(val)


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.2934690, 4.0])
@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0, 3.0, 6.0])
def test_gaussian_analytic_delta_matches_quadrature(mu: float, eps: float) -> None:
    g = GaussianPLD(mu=mu)
    assert float(g.delta(eps)) == pytest.approx(_gauss_delta_quad(mu, eps), abs=1e-11)
    assert float(g.eta(eps)) == pytest.approx(stats.norm(mu**2 / 2, mu).sf(eps), abs=1e-15)
    assert float(g.delta(eps)) <= float(g.eta(eps))


@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0])
def test_gaussian_renyi_matches_quadrature(alpha: float) -> None:
    mu = 0.8
    dens = stats.norm(mu**2 / 2, mu).pdf
    mgf, _ = integrate.quad(lambda x: math.exp((alpha - 1) * x) * dens(x), -30, 30, epsabs=1e-13)
    g = GaussianPLD(mu=mu)
    assert float(g.renyi(alpha)) == pytest.approx(math.log(mgf) / (alpha - 1), rel=1e-9)
    assert g.rho == pytest.approx(mu**2 / 2)


def test_gaussian_constructors_and_composition() -> None:
    assert gaussian(2.0, 3.0).mu == pytest.approx(1.5)
    assert GaussianPLD.from_rho(2.63).mu == pytest.approx(math.sqrt(5.26))  # digest §1.9: mu = sqrt(2 rho)
    g = GaussianPLD(mu=0.5)
    assert g.self_compose(4).mu == pytest.approx(1.0)
    assert g.compose(GaussianPLD(mu=1.2)).mu == pytest.approx(1.3)
    for target in [0.1, 1e-5, 1e-10]:
        eps = float(g.epsilon_for_delta(target))
        assert float(g.delta(eps)) <= target
        assert float(g.delta(eps * (1 - 1e-8))) > target


def test_gaussian_power_reproduces_digest_table2() -> None:
    # digest §3.3 Table 2, rho = 2.63, Gaussian column: 0.49, 0.74, 0.84 (paper, 2 decimals)
    g = GaussianPLD.from_rho(2.63)
    np.testing.assert_allclose(g.power([0.01, 0.05, 0.10]), [0.49, 0.74, 0.84], atol=0.005)


def test_geometric_unit_sensitivity_is_randomized_response() -> None:
    # digest Ex. 4.4: the two-sided geometric mechanism has exactly the PLRV of randomized response
    eps = 0.9
    geo = geometric(eps)
    rr = binary_randomized_response(1 / (1 + math.exp(eps)))
    np.testing.assert_allclose(geo.losses, rr.losses, atol=1e-14)
    np.testing.assert_allclose(geo.probabilities, rr.probabilities, atol=1e-14)


@pytest.mark.parametrize("sens", [2, 3, 5])
def test_geometric_matches_brute_force_over_output_window(sens: int) -> None:
    eps = 0.7
    z = np.arange(-400, 401)
    a = math.exp(-eps)
    noise = (1 - a) / (1 + a) * a ** np.abs(z)  # mass outside the window ~ e^{-280}: negligible
    w = np.arange(-400, 401 + sens)
    p = np.interp(w - sens, z, noise, left=0.0, right=0.0)  # D1 count = sens
    q = np.interp(w, z, noise, left=0.0, right=0.0)  # D2 count = 0
    mask = (p > 0) & (q > 0)
    p, q = p[mask] / p[mask].sum(), q[mask] / q[mask].sum()
    geo = geometric(eps, sens)
    assert geo.max_loss == pytest.approx(sens * eps)
    for e in [0.0, 0.5, 1.0, 2.0, 3.0]:
        assert float(geo.delta(e)) == pytest.approx(float(np.maximum(p - math.exp(e) * q, 0).sum()), abs=1e-12)


@pytest.mark.parametrize("j", [1, 2, 4])
def test_bit_vector_rr_equals_composition_of_binary_rr(j: int) -> None:
    q = 0.15
    bv = bit_vector_randomized_response(q, bits=8, differing=j)
    comp = binary_randomized_response(q).self_compose(j)
    np.testing.assert_allclose(bv.losses, comp.losses, atol=1e-12)
    np.testing.assert_allclose(bv.probabilities, comp.probabilities, atol=1e-14)


def test_k_rr_total_variation() -> None:
    # delta(0) = TV = (e^eps - 1)/(e^eps + k - 1) for k-ary randomized response
    eps, k = 1.2, 7
    pld = k_randomized_response(eps, k)
    assert float(pld.delta(0.0)) == pytest.approx((math.exp(eps) - 1) / (math.exp(eps) + k - 1), rel=1e-13)
    assert pld.max_loss == pytest.approx(eps)
    assert isinstance(pld, PrivacyLossDistribution)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: binary_randomized_response(0.0), "q"),
        (lambda: binary_randomized_response(1.2), "q"),
        (lambda: k_randomized_response(1.0, 1), "k"),
        (lambda: k_randomized_response(-1.0, 3), "epsilon"),
        (lambda: bit_vector_randomized_response(0.1, 4, 5), "differing"),
        (lambda: bit_vector_randomized_response(0.1, 0, 1), "bits"),
        (lambda: geometric(float("inf")), "epsilon"),
        (lambda: geometric(1.0, 0), "sensitivity"),
        (lambda: GaussianPLD(mu=0.0), "mu"),
        (lambda: gaussian(-1.0), "sigma"),
        (lambda: GaussianPLD.from_rho(float("nan")), "rho"),
        (lambda: GaussianPLD(mu=1.0).delta(-0.1), "epsilon"),
        (lambda: GaussianPLD(mu=1.0).renyi(0.5), "alpha"),
        (lambda: GaussianPLD(mu=1.0).power(1.5), "level"),
    ],
)
def test_bad_inputs_raise_parameter_error(call: object, name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        call()  # type: ignore[operator]


def test_gaussian_epsilon_for_delta_rounds_up_with_bounded_work(monkeypatch) -> None:
    """At small mu brentq's absolute tolerance is large against epsilon, and the old one-ulp creep after it took
    2,146 delta evaluations (mu = 0.00324, delta = 1e-3); now at most 64 creep probes, then bisection. The answer
    is still a point where delta(eps) <= target (the safe side), within 1e-12 relative of the old one."""
    from sufficientdp.accounting.mechanisms import GaussianPLD

    pld = GaussianPLD(mu=0.00324)
    calls = []
    original = GaussianPLD.delta
    monkeypatch.setattr(GaussianPLD, "delta", lambda self, e: calls.append(e) or original(self, e))
    eps = float(pld.epsilon_for_delta(1e-3))
    assert len(calls) < 400
    assert float(original(pld, eps)) <= 1e-3
    assert eps == pytest.approx(0.0006353209103253133, rel=1e-12)  # the old creep's answer
    below = float(np.nextafter(eps, 0.0))
    assert float(original(pld, below)) > 1e-3 or float(original(pld, float(np.nextafter(below, 0.0)))) > 1e-3
