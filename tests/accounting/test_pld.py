"""Tests of PrivacyLossDistribution against independent truth (exact fractions, brute-force enumeration)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sufficientdp import ParameterError
from sufficientdp.accounting import (
    PrivacyLossDistribution,
    binary_randomized_response,
    k_randomized_response,
)


def _hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """sup_S P(S) - e^eps Q(S) = sum_w (p(w) - e^eps q(w))_+  (digest §1.5 eq. 2, direct)."""
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def _tail(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    with np.errstate(divide="ignore"):
        loss = np.where(q > 0, np.log(p) - np.log(q), np.inf)
    return float(p[(p > 0) & (loss > eps)].sum())


# --- binary randomized response, hand computation with fractions -------------------------------------------------
# q = 1/4: p = (3/4, 1/4) (bit 0), q = (1/4, 3/4) (bit 1). With eps = log r (r rational):
#   delta(log r) = (3/4 - r/4)_+ + (1/4 - 3r/4)_+
@pytest.mark.parametrize("r", [Fraction(1), Fraction(3, 2), Fraction(2), Fraction(5, 2), Fraction(3), Fraction(4)])
def test_binary_rr_delta_matches_fraction_hand_computation(r: Fraction) -> None:
    p0, p1 = Fraction(3, 4), Fraction(1, 4)
    expected = max(Fraction(0), p0 - r * p1) + max(Fraction(0), p1 - r * p0)
    pld = binary_randomized_response(0.25)
    assert float(pld.delta(math.log(r))) == pytest.approx(float(expected), abs=1e-14)


def test_binary_rr_digest_closed_form() -> None:
    # digest Ex. 4.3 [DERIVED]: delta(eps') = (e^eps - e^eps')/(1 + e^eps) for eps' < eps, else 0
    eps = 1.3
    pld = binary_randomized_response(1 / (1 + math.exp(eps)))
    grid = np.linspace(0, 2, 21)
    expected = np.where(grid < eps, (math.exp(eps) - np.exp(grid)) / (1 + math.exp(eps)), 0.0)
    np.testing.assert_allclose(pld.delta(grid), expected, atol=1e-14)
    assert pld.max_loss == pytest.approx(eps, abs=1e-14)


# --- composition against enumeration of the product space --------------------------------------------------------
def _product(pmfs: list[np.ndarray]) -> np.ndarray:
    out = np.array([1.0])
    for pm in pmfs:
        out = np.outer(out, pm).ravel()
    return out


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("q", [0.1, 0.25, 0.4])
def test_rr_self_composition_matches_enumeration(k: int, q: float) -> None:
    rr = binary_randomized_response(q)
    composed = rr.self_compose(k)
    p = _product([np.array([1 - q, q])] * k)
    qq = _product([np.array([q, 1 - q])] * k)
    assert len(p) == 2**k
    for eps in [0.0, 0.3, 1.0, 2.0, 5.0]:
        assert float(composed.delta(eps)) == pytest.approx(_hockey(p, qq, eps), abs=1e-13)
        # eta jumps at the atoms; probe between atoms (float noise decides ties at an atom)
        assert float(composed.eta(eps + 1e-6)) == pytest.approx(_tail(p, qq, eps + 1e-6), abs=1e-13)
    assert composed.losses.size == k + 1  # equal losses were merged
    # Rényi divergence adds under composition
    assert float(composed.renyi(3.0)) == pytest.approx(k * float(rr.renyi(3.0)), rel=1e-12)


def test_heterogeneous_composition_with_infinite_atoms_matches_enumeration() -> None:
    a_p, a_q = np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.1, 0.3, 0.0, 0.6])
    b_p, b_q = np.array([0.6, 0.4]), np.array([0.2, 0.8])
    c = k_randomized_response(0.7, 3)
    assert c.pmfs is not None
    pld = (
        PrivacyLossDistribution.from_pmfs(a_p, a_q).compose(PrivacyLossDistribution.from_pmfs(b_p, b_q)).compose(c)
    )
    p = _product([a_p, b_p, c.pmfs[0]])
    q = _product([a_q, b_q, c.pmfs[1]])
    direct = PrivacyLossDistribution.from_pmfs(p, q)
    assert pld.infinity_mass == pytest.approx(0.2, abs=1e-15)
    assert pld.neg_infinity_mass == pytest.approx(0.6, abs=1e-15)
    for eps in [0.0, 0.5, 1.5, 3.0]:
        assert float(pld.delta(eps)) == pytest.approx(_hockey(p, q, eps), abs=1e-13)
        assert float(pld.eta(eps + 1e-6)) == pytest.approx(_tail(p, q, eps + 1e-6), abs=1e-13)
    # reverse by change of measure (composed, no pmfs) agrees with the exact reverse from the product pmfs
    rev, rev_exact = pld.reverse(), direct.reverse()
    assert pld.pmfs is None
    np.testing.assert_allclose(rev.losses, rev_exact.losses, atol=1e-12)
    np.testing.assert_allclose(rev.probabilities, rev_exact.probabilities, atol=1e-14)
    assert rev.infinity_mass == pytest.approx(rev_exact.infinity_mass, abs=1e-14)
    for eps in [0.0, 0.5, 2.0]:
        assert float(rev.delta(eps)) == pytest.approx(_hockey(q, p, eps), abs=1e-13)


def test_zeros_give_exact_infinite_atoms_sampling_example() -> None:
    # digest Ex. 4.7: sampling m of n; P(L = +inf) = m/n, so delta(eps) >= m/n for every eps.
    m, n = 2, 10
    pld = PrivacyLossDistribution(
        losses=np.array([0.0]), probabilities=np.array([(n - m) / n]), infinity_mass=m / n
    )
    assert pld.max_loss == math.inf
    assert np.all(np.asarray(pld.delta([0.0, 1.0, 50.0])) == pytest.approx(m / n))
    assert float(pld.epsilon_for_delta(0.1)) == math.inf
    assert float(pld.renyi(2.0)) == math.inf


def test_epsilon_for_delta_inverts_delta_from_both_sides() -> None:
    pld = binary_randomized_response(0.2).self_compose(4).compose(k_randomized_response(0.5, 5))
    for target in [0.3, 0.1, 1e-3, 1e-6]:
        eps = float(pld.epsilon_for_delta(target))
        assert float(pld.delta(eps)) <= target
        assert float(pld.delta(max(eps * (1 - 1e-9) - 1e-12, 0.0))) > target or eps == 0.0
    assert float(pld.epsilon_for_delta(0.0)) == pytest.approx(pld.max_loss, abs=1e-12)
    assert float(pld.epsilon_for_delta(1.0)) == 0.0


def test_renyi_of_rr_matches_direct_formula() -> None:
    # D_alpha = log((1-q)^a q^(1-a) + q^a (1-q)^(1-a)) / (a-1)   (digest §1.10, summed over the two outputs)
    q = 0.3
    pld = binary_randomized_response(q)
    for a in [1.01, 1.5, 2.0, 10.0, 100.0]:
        direct = math.log((1 - q) ** a * q ** (1 - a) + q**a * (1 - q) ** (1 - a)) / (a - 1)
        assert float(pld.renyi(a)) == pytest.approx(direct, rel=1e-12)


def test_merge_keeps_larger_loss() -> None:
    pld = PrivacyLossDistribution(
        losses=np.array([1.0, 1.0 + 5e-13, -2.0]), probabilities=np.array([0.2, 0.3, 0.5])
    )
    assert pld.losses.tolist() == [-2.0, 1.0 + 5e-13]
    assert pld.probabilities.tolist() == pytest.approx([0.5, 0.5])


def test_compose_cap() -> None:
    big = PrivacyLossDistribution(
        losses=np.arange(3000, dtype=float) * 1e-3, probabilities=np.full(3000, 1 / 3000)
    )
    with pytest.raises(ParameterError, match="MAX_COMPOSE_ATOMS"):
        big.compose(big)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: PrivacyLossDistribution.from_pmfs([0.5, 0.5], [1.0]), "p and q"),
        (lambda: PrivacyLossDistribution.from_pmfs([0.5, 0.6], [0.5, 0.5]), "p must sum"),
        (lambda: PrivacyLossDistribution.from_pmfs([0.5, 0.5], [-0.5, 1.5]), "q must"),
        (lambda: binary_randomized_response(0.3).delta(float("nan")), "epsilon"),
        (lambda: binary_randomized_response(0.3).delta("1"), "epsilon"),
        (lambda: binary_randomized_response(0.3).eta(float("nan")), "epsilon"),
        (lambda: binary_randomized_response(0.3).epsilon_for_delta(1.5), "delta"),
        (lambda: binary_randomized_response(0.3).renyi(1.0), "alpha"),
        (lambda: binary_randomized_response(0.3).self_compose(0), "k"),
        (lambda: binary_randomized_response(0.3).compose("x"), "other"),  # type: ignore[arg-type]
        (lambda: PrivacyLossDistribution(losses=np.array([np.inf]), probabilities=np.array([1.0])), "losses"),
        (
            lambda: PrivacyLossDistribution(
                losses=np.array([0.0]), probabilities=np.array([1.0]), infinity_mass=2
            ),
            "inf",
        ),
    ],
)
def test_bad_inputs_raise_parameter_error(call: object, name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        call()  # type: ignore[operator]


pmf_pairs = st.integers(min_value=2, max_value=6).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 20), min_size=n, max_size=n).filter(lambda v: sum(v) > 0),
        st.lists(st.integers(0, 20), min_size=n, max_size=n).filter(lambda v: sum(v) > 0),
    )
)


@settings(max_examples=60, deadline=None)
@given(pmf_pairs, st.floats(0.0, 5.0))
def test_property_delta_le_eta_and_monotone(pair: tuple[list[int], list[int]], eps: float) -> None:
    p = np.array(pair[0], float) / sum(pair[0])
    q = np.array(pair[1], float) / sum(pair[1])
    pld = PrivacyLossDistribution.from_pmfs(p, q)
    d, e = float(pld.delta(eps)), float(pld.eta(eps))
    assert d <= e + 1e-15
    assert d == pytest.approx(_hockey(p, q, eps), abs=1e-12)
    assert float(pld.delta(eps + 0.1)) <= d + 1e-15
    assert pld.infinity_mass <= d + 1e-15  # digest §1.5: delta >= P(L = inf)


def test_negative_epsilon_is_the_hockey_stick() -> None:
    # one type with the privacy-ratio distribution (issue 11): delta and eta take any real epsilon
    p, q = np.array([0.7, 0.3]), np.array([0.3, 0.7])
    pld = PrivacyLossDistribution.from_pmfs(p, q)
    for eps in (-1.0, -0.2):
        assert float(pld.delta(eps)) == pytest.approx(_hockey(p, q, eps), abs=1e-15)
        assert float(pld.eta(eps)) == pytest.approx(_tail(p, q, eps), abs=1e-15)
    np.testing.assert_allclose(pld.delta([-1.0, 0.5]), [_hockey(p, q, -1.0), _hockey(p, q, 0.5)], atol=1e-15)
