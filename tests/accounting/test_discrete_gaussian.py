"""Discrete Gaussian: pmf and normaliser against mpmath, PLD against brute-force mpmath sums, exact samplers by
chi-square goodness of fit against the exact pmf (CKS 2020, arXiv:2004.00010)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy.stats import binomtest, chi2

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.discrete_gaussian import (
    DiscreteGaussian,
    discrete_gaussian_log_normalizer,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)

mpmath.mp.dps = 40
#: Per statistical test, the false-alarm probability of a correct implementation (chi-square / binomial level).
ALPHA = 1e-6


def _mp_z(s2: float | Fraction) -> mpmath.mpf:
    s2m = mpmath.mpf(s2.numerator) / s2.denominator if isinstance(s2, Fraction) else mpmath.mpf(s2)
    k = int(40 * math.sqrt(float(s2))) + 40
    return 1 + 2 * mpmath.fsum(mpmath.exp(-mpmath.mpf(j) ** 2 / (2 * s2m)) for j in range(1, k + 1))


# --- normaliser and pmf against mpmath ---------------------------------------------------------------------------
@pytest.mark.parametrize("s2", [0.01, 0.3, 0.99, 1.0, 2.5, 100.0, 1e4, Fraction(1, 3), Fraction(7, 2)])
def test_normalizer_bracket_contains_mpmath_value(s2: float | Fraction) -> None:
    truth = mpmath.log(_mp_z(s2)) if float(s2) < 1e3 else mpmath.log(mpmath.sqrt(2 * mpmath.pi * s2))
    b = discrete_gaussian_log_normalizer(s2)
    assert b.lower <= float(truth) <= b.upper
    assert b.upper - b.lower < 1e-13
    assert abs(b.log_z - float(truth)) < 1e-14 * max(1.0, abs(float(truth)))
    assert b.to_dict()["kind"] == "exact"


@pytest.mark.parametrize("s2,mu", [(0.5, 0), (2.0, 3), (Fraction(9, 4), -2), (50.0, 1)])
def test_log_pmf_matches_mpmath(s2: float | Fraction, mu: int) -> None:
    dg = DiscreteGaussian(sigma_squared=s2)
    z = _mp_z(s2)
    xs = np.arange(mu - 12, mu + 13)
    got = dg.log_pmf(xs, mu)
    s2m = mpmath.mpf(float(s2))
    for x, g in zip(xs.tolist(), got, strict=True):
        truth = -mpmath.mpf(x - mu) ** 2 / (2 * s2m) - mpmath.log(z)
        assert abs(g - float(truth)) <= 1e-13 * max(1.0, abs(float(truth)))
    assert float(np.sum(dg.pmf(np.arange(mu - 200, mu + 201), mu))) == pytest.approx(1.0, abs=1e-13)


# --- zCDP: CKS Proposition 5 by brute force -------------------------------------------------------------------------
@pytest.mark.parametrize("s2,delta_", [(1.0, 1), (2.5, 2), (0.4, 1)])
def test_rho_is_renyi_divergence_at_integer_orders(s2: float, delta_: int) -> None:
    # D_alpha(N_Z(Δ,σ²) || N_Z(0,σ²)) = log(sum_x P^alpha Q^(1-alpha))/(alpha-1); equals alpha*rho at integer alpha
    # and is <= alpha*rho otherwise (CKS Prop. 5 / Thm 4). Brute-force sum over |x| <= 60σ + 60 at 40 digits.
    dg = DiscreteGaussian(sigma_squared=s2, sensitivity=delta_)
    z = _mp_z(s2)
    s2m = mpmath.mpf(s2)
    xs = range(-int(60 * math.sqrt(s2)) - 60, int(60 * math.sqrt(s2)) + 61)

    def renyi(alpha: mpmath.mpf) -> float:
        tot = mpmath.fsum(mpmath.exp(-(alpha * (x - delta_) ** 2 + (1 - alpha) * x**2) / (2 * s2m)) for x in xs)
        return float(mpmath.log(tot / z) / (alpha - 1))

    for alpha in (2, 3):
        assert renyi(mpmath.mpf(alpha)) == pytest.approx(alpha * dg.rho, rel=1e-13)
    assert renyi(mpmath.mpf(1.5)) < 1.5 * dg.rho
    assert dg.rho >= delta_**2 / (2 * s2)  # rounded up, never down


def test_rho_exact_for_rational_sigma() -> None:
    dg = DiscreteGaussian(sigma_squared=Fraction(1, 3), sensitivity=1)
    assert Fraction(dg.rho) >= Fraction(3, 2) and dg.rho == 1.5


# --- PLD against brute force ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("s2,delta_", [(1.0, 1), (4.0, 1), (2.0, 3), (0.3, 1)])
def test_pld_delta_eta_are_tight_upper_bounds(s2: float, delta_: int) -> None:
    dg = DiscreteGaussian(sigma_squared=s2, sensitivity=delta_)
    tol = 1e-15
    pld = dg.pld(tail_tol=tol)
    z = _mp_z(s2)
    s2m = mpmath.mpf(s2)
    xs = range(-int(50 * math.sqrt(s2)) - 50, int(50 * math.sqrt(s2)) + 51 + delta_)
    p = [mpmath.exp(-mpmath.mpf(x - delta_) ** 2 / (2 * s2m)) / z for x in xs]
    q = [mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2m)) / z for x in xs]
    for eps in (0.0, 0.3, 1.0, 2.5):
        e = mpmath.exp(eps)
        hockey = float(mpmath.fsum(max(pi - e * qi, 0) for pi, qi in zip(p, q, strict=True)))
        # P[L > eps] with the loss L(x) = (2 x delta - delta^2) / (2 sigma^2) compared in exact rationals: at a tie
        # (s2 = 1, eps = 2.5) a floating comparison pi > e * qi goes either way with mpmath's working precision.
        tail = float(mpmath.fsum(pi for pi, x in zip(p, xs, strict=True)
                                 if Fraction(2 * x * delta_ - delta_**2, 2) / Fraction(s2) > Fraction(eps)))
        for d in (pld, pld.reverse()):  # the pair is symmetric: both directions have this profile
            assert hockey - 1e-15 <= float(d.delta(eps)) <= hockey * (1 + 3e-14) + 2 * tol + 1e-15
            assert tail - 1e-15 <= float(d.eta(eps)) <= tail * (1 + 3e-14) + 2 * tol + 1e-15
    assert 0 < pld.infinity_mass <= tol and 0 < pld.neg_infinity_mass <= tol
    assert pld.max_loss == math.inf


def test_pld_refuses_huge_support_and_bad_tolerance() -> None:
    with pytest.raises(ParameterError, match="MAX_PLD_ATOMS"):
        DiscreteGaussian(sigma_squared=1e12).pld()
    for bad in (0.0, -1e-12, 1e-3, True, "x", float("nan")):
        with pytest.raises(ParameterError, match="tail_tol"):
            DiscreteGaussian(sigma_squared=1.0).pld(tail_tol=bad)  # type: ignore[arg-type]


# --- samplers ----------------------------------------------------------------------------------------------------------
def _chi_square_pvalue(draws: np.ndarray, pmf: dict[int, float]) -> float:
    """Pearson chi-square of draws against pmf, cells with expected count >= 5 and two pooled tails."""
    n = draws.size
    keys = sorted(k for k, v in pmf.items() if n * v >= 5)
    lo, hi = keys[0], keys[-1]
    obs = [int(np.sum(draws < lo))] + [int(np.sum(draws == k)) for k in keys] + [int(np.sum(draws > hi))]
    exp_ = [n * sum(v for k, v in pmf.items() if k < lo)] + [n * pmf[k] for k in keys]
    exp_.append(n - sum(exp_))
    cells = [(o, e) for o, e in zip(obs, exp_, strict=True) if e > 0]
    stat = sum((o - e) ** 2 / e for o, e in cells)
    return float(chi2.sf(stat, len(cells) - 1))


@pytest.mark.slow
@pytest.mark.parametrize("s2", [Fraction(9, 4), Fraction(1, 5)])
def test_discrete_gaussian_sampler_chi_square(s2: Fraction) -> None:
    # H0: draws ~ N_Z(0, s2) exactly. A correct sampler fails with probability ALPHA = 1e-6 (asymptotic chi-square).
    draws = sample_discrete_gaussian(s2, size=8000, rng=np.random.default_rng(20240611))
    dg = DiscreteGaussian(sigma_squared=s2)
    support = range(-60, 61)
    pmf = dict(zip(support, dg.pmf(np.array(support)).tolist(), strict=True))
    assert draws.dtype == np.int64
    assert _chi_square_pvalue(draws, pmf) > ALPHA


@pytest.mark.slow
def test_discrete_laplace_sampler_chi_square() -> None:
    # P[Y = y] = (e^{1/t} - 1)/(e^{1/t} + 1) e^{-|y|/t} (CKS Alg. 2); false-alarm probability ALPHA.
    t = 3
    draws = sample_discrete_laplace(t, size=8000, rng=np.random.default_rng(7))
    c = math.tanh(1 / (2 * t))
    pmf = {y: c * math.exp(-abs(y) / t) for y in range(-200, 201)}
    assert _chi_square_pvalue(draws, pmf) > ALPHA


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(5, 2), "7/4"])
def test_bernoulli_exp_sampler_binomial_test(gamma: Fraction | str) -> None:
    # exact two-sided binomial test of the success rate exp(-gamma); false-alarm probability ALPHA
    draws = sample_bernoulli_exp(gamma, size=6000, rng=np.random.default_rng(3))
    target = math.exp(-float(Fraction(gamma)))
    if target == 1.0:
        assert draws.all()
    else:
        assert binomtest(int(draws.sum()), draws.size, target).pvalue > ALPHA


def test_sampler_is_driven_only_by_the_injected_source_and_is_reproducible() -> None:
    calls: list[int] = []
    gen = np.random.default_rng(11)

    def randbelow(n: int) -> int:
        calls.append(n)
        return int(gen.integers(0, n)) if n < 2**63 else int(gen.integers(0, 2**62)) % n

    a = sample_discrete_gaussian(Fraction(5, 2), size=50, rng=randbelow)
    assert calls and all(isinstance(c, int) and c >= 1 for c in calls)
    gen = np.random.default_rng(11)
    calls.clear()
    b = sample_discrete_gaussian(Fraction(5, 2), size=50, rng=randbelow)
    assert np.array_equal(a, b)
    c = sample_discrete_gaussian(Fraction(5, 2), size=50, rng=np.random.default_rng(4))
    d = sample_discrete_gaussian(Fraction(5, 2), size=50, rng=np.random.default_rng(4))
    assert np.array_equal(c, d)


def test_huge_denominator_uses_multiword_uniform_integers() -> None:
    # sigma^2 = (10^40 + 1)/10^39 ~ 10: Bernoulli denominators exceed 2^64, exercising multi-word rejection.
    s2 = Fraction(10**40 + 1, 10**39)
    draws = sample_discrete_gaussian(s2, size=3000, rng=np.random.default_rng(5))
    dg = DiscreteGaussian(sigma_squared=s2)
    support = range(-40, 41)
    pmf = dict(zip(support, dg.pmf(np.array(support)).tolist(), strict=True))
    assert _chi_square_pvalue(draws, pmf) > ALPHA  # false-alarm probability ALPHA


def test_default_cryptographic_source() -> None:
    x = sample_discrete_gaussian(2)
    assert isinstance(x, int)
    arr = sample_discrete_gaussian(2, size=0)
    assert arr.shape == (0,)
    assert isinstance(sample_bernoulli_exp(Fraction(1, 2)), bool)
    assert isinstance(sample_discrete_laplace(1), int)


# --- invalid inputs ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "a", None])
def test_invalid_sigma_squared(bad: object) -> None:
    with pytest.raises(ParameterError, match="sigma_squared"):
        discrete_gaussian_log_normalizer(bad)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="sigma_squared"):
        DiscreteGaussian(sigma_squared=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, -2, "0", Fraction(-1, 2), True, None, float("inf"), "x/y"])
def test_invalid_sampler_sigma_squared(bad: object) -> None:
    with pytest.raises(ParameterError, match="sigma_squared"):
        sample_discrete_gaussian(bad, rng=np.random.default_rng(0))  # type: ignore[arg-type]


def test_invalid_other_arguments() -> None:
    with pytest.raises(ParameterError, match="sensitivity"):
        DiscreteGaussian(sigma_squared=1.0, sensitivity=0)
    with pytest.raises(ParameterError, match="sensitivity"):
        DiscreteGaussian(sigma_squared=1.0, sensitivity=1.5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="x must be integer"):
        DiscreteGaussian(sigma_squared=1.0).log_pmf(0.5)
    with pytest.raises(ParameterError, match="scale"):
        sample_discrete_laplace(0)
    with pytest.raises(ParameterError, match="gamma"):
        sample_bernoulli_exp(-1)
    with pytest.raises(ParameterError, match="size"):
        sample_discrete_gaussian(1, size=-1)
    with pytest.raises(ParameterError, match="rng"):
        sample_discrete_gaussian(1, rng=42)
    with pytest.raises(ParameterError, match="random source"):
        sample_discrete_gaussian(1, rng=lambda n: n)  # out of range [0, n)
