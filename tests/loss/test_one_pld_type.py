"""One privacy-loss distribution type (issue 11): the exact privacy-ratio distribution is a PLD.

Independent truths: the reverse pair enumerated directly (``outlier_in="original"``) against the change of measure
``reverse()``; composition against the direct product of two enumerations; the old names are the one class.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.accounting import PrivacyLossDistribution as AccountingPLD
from sufficientdp.accounting.pld import PrivacyLossDistribution as OldPathPLD
from sufficientdp.loss import PrivacyLossDistribution
from sufficientdp.ratio.exact import RatioDistribution, homogeneous_ratio_distribution, ratio_distribution


def test_old_names_are_the_one_class() -> None:
    assert RatioDistribution is PrivacyLossDistribution
    assert AccountingPLD is PrivacyLossDistribution
    assert OldPathPLD is PrivacyLossDistribution
    assert isinstance(homogeneous_ratio_distribution(0.2, 2, 3), PrivacyLossDistribution)


@pytest.mark.parametrize("q, bits, population", [(0.2, 2, 5), (0.3, 3, 8)])
def test_reverse_by_change_of_measure_is_the_enumerated_reverse_pair(q: float, bits: int, population: int) -> None:
    forward = homogeneous_ratio_distribution(q, bits, population)
    direct = homogeneous_ratio_distribution(q, bits, population, outlier_in="original")
    changed = forward.reverse()
    np.testing.assert_allclose(changed.losses, direct.losses, atol=1e-11)
    np.testing.assert_allclose(changed.probabilities, direct.probabilities, rtol=1e-10, atol=1e-16)
    for eps in (-0.5, 0.0, 0.4, 1.2):
        assert float(changed.delta(eps)) == pytest.approx(direct.delta(eps), abs=1e-13)


def test_compose_two_ratio_distributions_matches_the_product_of_pmfs() -> None:
    # two independent releases of the same pair: the loss adds, so P[L1 + L2 > eps] by a double sum
    d = ratio_distribution([[0, 0], [0, 1], [1, 1]], [[0, 0], [0, 1], [0, 0]], 0.25)
    both = d.compose(d)
    for eps in (0.0, 0.7, 1.5):
        direct = sum(
            p1 * p2
            for l1, p1 in zip(d.losses, d.probabilities)
            for l2, p2 in zip(d.losses, d.probabilities)
            if l1 + l2 > eps + 1e-9
        )
        assert float(both.eta(eps + 1e-9)) == pytest.approx(direct, abs=1e-14)


def test_log_domain_masses_keep_tails_below_the_smallest_float() -> None:
    pld = PrivacyLossDistribution(losses=[0.0, 5.0], log_probabilities=[0.0, -2000.0])
    assert pld.log_eta(1.0) == pytest.approx(-2000.0, abs=1e-12)
    assert pld.eta(1.0) == 0.0
    assert pld.probabilities.tolist() == [1.0, 0.0]


def test_infinity_mass_enters_every_tail() -> None:
    pld = PrivacyLossDistribution.from_pmfs([0.5, 0.3, 0.2], [0.5, 0.5, 0.0])
    assert pld.infinity_mass == pytest.approx(0.2)
    assert pld.eta(10.0) == pytest.approx(0.2, abs=1e-15)
    assert pld.log_eta(10.0) == pytest.approx(math.log(0.2), abs=1e-15)
    assert pld.epsilon_for(0.1) == math.inf
    assert pld.max_ratio == math.inf
    np.testing.assert_allclose(pld.eta_many([10.0, -10.0]), [0.2, 1.0], atol=1e-15)
    np.testing.assert_allclose(pld.delta_many([10.0]), [0.2], atol=1e-15)


def test_constructor_takes_one_of_each_name() -> None:
    with pytest.raises(ParameterError, match="exactly one of losses and log_ratios"):
        PrivacyLossDistribution(losses=[0.0], log_ratios=[0.0], probabilities=[1.0])
    with pytest.raises(ParameterError, match="exactly one of probabilities and log_probabilities"):
        PrivacyLossDistribution(losses=[0.0])
    with pytest.raises(ParameterError, match="sum to 1"):
        PrivacyLossDistribution(log_ratios=[0.0, 1.0], log_probabilities=[-1.0, -1.0])
    with pytest.raises(ParameterError, match="tail needs"):
        PrivacyLossDistribution(losses=[0.0], probabilities=[1.0]).tail(0.5)
