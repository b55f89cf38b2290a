"""Poisson subsampling of a PLD against the PLD of the explicitly mixed pmfs and the pure-DP amplification bound
eps' = log(1 + gamma (e^eps - 1)) (Balle, Barthe, Gaboardi 2018, Theorem 8)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.mechanisms import binary_randomized_response, k_randomized_response
from sufficientdp.accounting.pld import PrivacyLossDistribution
from sufficientdp.accounting.sampling import poisson_subsample

EPS_GRID = np.linspace(0.0, 3.0, 31)

# explicit pmfs with a P-only outcome (+inf atom) and a Q-only outcome (-inf record)
P1 = np.array([0.30, 0.25, 0.20, 0.15, 0.10, 0.0])
Q1 = np.array([0.05, 0.20, 0.25, 0.30, 0.0, 0.20])


@pytest.mark.parametrize("p,q", [(P1, Q1), (np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5]))])
@pytest.mark.parametrize("gamma", [0.01, 0.3, 0.77, 1.0])
def test_matches_pld_of_explicitly_mixed_pmfs(p: np.ndarray, q: np.ndarray, gamma: float) -> None:
    mix = gamma * p + (1 - gamma) * q
    expected = {"add": PrivacyLossDistribution.from_pmfs(mix, q), "remove": PrivacyLossDistribution.from_pmfs(q, mix)}
    base = PrivacyLossDistribution.from_pmfs(p, q)
    for direction, want in expected.items():
        got = poisson_subsample(base, gamma, direction)
        np.testing.assert_allclose(got.delta(EPS_GRID), want.delta(EPS_GRID), atol=1e-14)
        grid = EPS_GRID[np.min(np.abs(EPS_GRID[:, None] - want.losses[None, :]), axis=1) > 1e-9]
        np.testing.assert_allclose(got.eta(grid), want.eta(grid), atol=1e-14)
        assert got.infinity_mass == pytest.approx(want.infinity_mass, abs=1e-15)
        assert got.neg_infinity_mass == pytest.approx(want.neg_infinity_mass, abs=1e-15)
        np.testing.assert_allclose(got.reverse().delta(EPS_GRID), want.reverse().delta(EPS_GRID), atol=1e-14)


@pytest.mark.parametrize("mech", ["rr", "krr"])
@pytest.mark.parametrize("gamma", [1e-4, 0.05, 0.5, 0.9])
def test_pure_dp_amplification_bound(mech: str, gamma: float) -> None:
    eps = 1.7
    pld = binary_randomized_response(1 / (1 + math.exp(eps))) if mech == "rr" else k_randomized_response(eps, 4)
    bound = math.log1p(gamma * math.expm1(eps))  # log(1 + gamma (e^eps - 1)), Balle et al. 2018 Thm 8
    add = poisson_subsample(pld, gamma, "add")
    rem = poisson_subsample(pld, gamma, "remove")
    assert add.max_loss == pytest.approx(bound, rel=1e-12)  # attained in the add direction
    assert rem.max_loss == pytest.approx(-math.log1p(-gamma * -math.expm1(-eps)), rel=1e-12)
    assert rem.max_loss <= bound
    # from both sides: delta(bound) = 0, delta slightly below the bound > 0
    assert float(add.delta(bound * (1 + 1e-9))) == 0.0
    assert float(add.delta(bound * (1 - 1e-6))) > 0.0


def test_binary_rr_subsampled_hand_computation_with_fractions() -> None:
    # q = 1/4: P = (3/4, 1/4), Q = (1/4, 3/4); gamma = 1/5 -> mix = (7/20, 13/20).
    # add pair (mix, Q): delta(log r) = (7/20 - r/4)_+ + (13/20 - 3r/4)_+
    g = Fraction(1, 5)
    mix = (g * Fraction(3, 4) + (1 - g) * Fraction(1, 4), g * Fraction(1, 4) + (1 - g) * Fraction(3, 4))
    qq = (Fraction(1, 4), Fraction(3, 4))
    sub_add = poisson_subsample(binary_randomized_response(0.25), 0.2, "add")
    sub_rem = poisson_subsample(binary_randomized_response(0.25), 0.2, "remove")
    for r in (Fraction(1), Fraction(11, 10), Fraction(6, 5), Fraction(7, 5)):
        want_add = sum((max(Fraction(0), a - r * b) for a, b in zip(mix, qq, strict=True)), Fraction(0))
        want_rem = sum((max(Fraction(0), b - r * a) for a, b in zip(mix, qq, strict=True)), Fraction(0))
        assert float(sub_add.delta(math.log(r))) == pytest.approx(float(want_add), abs=1e-15)
        assert float(sub_rem.delta(math.log(r))) == pytest.approx(float(want_rem), abs=1e-15)


def test_rate_one_is_identity_or_reverse() -> None:
    base = PrivacyLossDistribution.from_pmfs(P1, Q1)
    np.testing.assert_allclose(poisson_subsample(base, 1.0, "add").delta(EPS_GRID), base.delta(EPS_GRID), atol=1e-15)
    np.testing.assert_allclose(poisson_subsample(base, 1.0, "remove").delta(EPS_GRID), base.reverse().delta(EPS_GRID),
                               atol=1e-15)


def test_subsampling_never_increases_delta() -> None:
    base = PrivacyLossDistribution.from_pmfs(P1, Q1)
    for gamma in (0.1, 0.5):
        for d, ref in (("add", base), ("remove", base.reverse())):
            assert np.all(poisson_subsample(base, gamma, d).delta(EPS_GRID) <= ref.delta(EPS_GRID) + 1e-15)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan"), True, "0.5", None])
def test_invalid_rate(bad: object) -> None:
    with pytest.raises(ParameterError, match="rate"):
        poisson_subsample(binary_randomized_response(0.2), bad)  # type: ignore[arg-type]


def test_invalid_pld_and_direction() -> None:
    with pytest.raises(ParameterError, match="pld"):
        poisson_subsample([0.5, 0.5], 0.1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="direction"):
        poisson_subsample(binary_randomized_response(0.2), 0.1, "both")
