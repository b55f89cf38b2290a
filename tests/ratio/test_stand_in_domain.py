"""A weight domain too large to enumerate is bounded through all of {0,1}^L, which covers it (session 17).

Two defects of that stand-in, found by running `calibrate --bits 256 --population 100000 --epsilon 2 --max-weight
10`: it spent 19 s and then refused ("no flip probability q < 0.5 meets eta <= 0.001"), although at the domain's
local-DP q every report's privacy loss is at most 2w log(p/q) <= epsilon, so eta = 0 there exactly. Local DP was
decided on the stand-in's distance (L, not 2w): at q = 0.475 the bound for all of {0,1}^256 is 0.51. And with k
reports the composable check looked at the weight domain while the stand-in was composed: at q = 0.05 its
per-report loss 256 log 19 overflowed (an OverflowError instead of a ParameterError naming q).
"""

from __future__ import annotations

import math

import pytest

from sufficientdp import calibrate
from sufficientdp._errors import ParameterError
from sufficientdp.accounting.rounds import _cube_instead, rounds_tail
from sufficientdp.calibration.proven import local_q_for_domain
from sufficientdp.ratio.proven import Domain, local_distance, proven_tail

BIG = Domain.from_max_weight(256, 10)  # more report classes than the limit: all of {0,1}^256 stands in
ROUNDS = Domain.from_max_weight(12, 5)  # more pair types than the T-round bound takes: all of {0,1}^12 stands in


def test_the_domains_stand_in_for_something_larger() -> None:
    r = proven_tail(q=0.3, bits=256, population=10**5, epsilon=2.0, domain=BIG)
    assert any("the bound for all of {0,1}^L is used" in n for n in r.details["notes"])
    assert _cube_instead(ROUNDS) and local_distance(ROUNDS) == 10 < 12


def _loss_at(q: float, distance: int) -> float:
    return distance * math.log((1.0 - q) / q)


def test_at_the_weight_domains_local_q_the_bound_is_zero() -> None:
    q = local_q_for_domain(BIG, 2.0, 1)
    assert _loss_at(q, 20) <= 2.0 < _loss_at(q, 256)  # local DP for the domain, not for all of {0,1}^256
    r = proven_tail(q=q, bits=256, population=10**5, epsilon=2.0, domain=BIG)
    assert r.eta == 0.0 and r.scope == "all-collections"
    assert r.details["worst_pair"] == "local"
    below = proven_tail(q=q * 0.999, bits=256, population=10**5, epsilon=2.0, domain=BIG)
    assert below.eta > 0.1  # just below, the stand-in's bound (nothing here is local DP any more)


def test_t_rounds_at_the_weight_domains_local_q_are_zero() -> None:
    q = local_q_for_domain(ROUNDS, 2.0, 3)  # three one-report releases, each of loss <= 10 log(p/q) <= 2/3
    assert 3 * _loss_at(q, 10) <= 2.0 < 3 * _loss_at(q, 12)
    r = rounds_tail(q=q, bits=12, population=1000, epsilon=2.0, rounds=3, domain=ROUNDS)
    assert r.eta == 0.0 and r.scope == "all-collections"
    assert list(r.details["notes"]) == ["local DP: the privacy loss of every one-report release is at most epsilon_0, "
                                  "so the total never exceeds n * epsilon_0 <= epsilon"]


def test_k_reports_refuse_a_q_the_stand_in_cannot_compose() -> None:
    with pytest.raises(ParameterError, match=r"q must be in \[0\.20\d+, 0\.5\).*got 0\.05"):
        proven_tail(q=0.05, bits=256, population=10**5, epsilon=2.0, domain=BIG, reports=2)


@pytest.mark.slow
def test_calibration_answers_the_local_q_instead_of_refusing() -> None:
    c = calibrate(bits=256, population=10**5, epsilon=2.0, max_weight=10)
    assert c.q == local_q_for_domain(BIG, 2.0, 1) and c.eta_at_q == 0.0
    assert c.scope == "all-collections" and c.kind == "bound"


def test_t_rounds_never_build_the_stood_in_domain(monkeypatch: pytest.MonkeyPatch) -> None:
    # the result's blanket mass had been computed on the weight domain itself, whose shapes the bound never needs:
    # at L = 256, w = 25 that took more than 20 GB and `calibrate --rounds 2 --bits 256 --max-weight 25` was killed
    # by the kernel (session 22); it is the mass of the blanket the bound used, all of {0,1}^L's
    from sufficientdp.ratio import proven

    built: list[Domain] = []
    original = proven._make_shapes

    def spy(domain: Domain) -> object:
        built.append(domain)
        return original(domain)

    monkeypatch.setattr(proven, "_SHAPES", {})
    monkeypatch.setattr(proven, "_make_shapes", spy)
    r = rounds_tail(q=0.3, bits=12, population=1000, epsilon=2.0, rounds=3, domain=ROUNDS)
    assert set(built) == {Domain(bits=12)}
    assert r.details["blanket_mass"] == math.exp(proven.blanket_mass(Domain(bits=12), 0.3))
    assert 0.0 < r.eta <= 1.0 and any("{0,1}^L is used" in n for n in r.details["notes"])
