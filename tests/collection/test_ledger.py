"""Device-side ledger (issue 14): the budget rule against brute force, the window, persistence and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from sufficientdp import ParameterError
from sufficientdp.collection.ledger import Budget, Ledger, Spend


def _release_law(n_ones: int, n: int, q: float) -> np.ndarray:
    """Law of the count of ones among n one-bit randomized reports, n_ones of them true ones (shuffled RR)."""
    a = binom.pmf(np.arange(n_ones + 1), n_ones, 1 - q)
    b = binom.pmf(np.arange(n - n_ones + 1), n - n_ones, q)
    return np.convolve(a, b)


def _eta_pair(p: np.ndarray, q_: np.ndarray, eps: float) -> float:
    with np.errstate(divide="ignore"):
        loss = np.log(p) - np.log(q_)
    return float(p[loss > eps].sum())


def _worst_eta_one_and_two_releases(n: int, q1: float, q2: float, e1: float, e2: float) -> tuple[float, float, float]:
    """Brute force over every neighbouring pair (m ones among the others, the person's bit 0 vs 1, both
    directions): the worst one-release tails at (q1, e1) and (q2, e2), and the worst tail of the two independent
    releases together at e1 + e2 (product laws, enumerated exactly)."""
    w1 = w2 = w12 = 0.0
    for m in range(n):
        for a, b in ((m + 1, m), (m, m + 1)):
            p1, r1 = _release_law(a, n, q1), _release_law(b, n, q1)
            p2, r2 = _release_law(a, n, q2), _release_law(b, n, q2)
            w1 = max(w1, _eta_pair(p1, r1, e1))
            w2 = max(w2, _eta_pair(p2, r2, e2))
            w12 = max(w12, _eta_pair(np.outer(p1, p2).ravel(), np.outer(r1, r2).ravel(), e1 + e2))
    return w1, w2, w12


@pytest.mark.parametrize(("n", "q1", "q2", "e1", "e2"), [(6, 0.2, 0.3, 0.5, 0.7), (10, 0.1, 0.1, 1.0, 1.0),
                                                          (8, 0.25, 0.15, 0.3, 1.2)])
def test_sum_rule_bounds_the_two_release_tail_by_brute_force(n, q1, q2, e1, e2):
    w1, w2, w12 = _worst_eta_one_and_two_releases(n, q1, q2, e1, e2)
    ledger = Ledger(budget=Budget(epsilon=50.0, eta=0.999, period=10.0))
    ledger = ledger.record(Spend(campaign="a", family="f", epsilon=e1, eta=w1, at=1.0))
    d = ledger.decide(campaign="b", epsilon=e2, eta=w2, now=2.0)
    assert d.after_epsilon == pytest.approx(e1 + e2)
    assert w12 <= d.after_eta + 1e-15  # the ledger's total is a valid bound on the true composed tail
    assert w12 > 0  # the check is not vacuous


def test_window_budget_and_repeat_joins():
    day = 86400.0
    ledger = Ledger(budget=Budget(epsilon=2.0, eta=0.002, period=7 * day))
    ledger = ledger.record(Spend(campaign="w1", family="weekly", epsilon=1.0, eta=0.001, at=0.0))
    ledger = ledger.record(Spend(campaign="w2", family="weekly", epsilon=1.0, eta=0.001, at=3 * day))
    d = ledger.decide(campaign="w3", epsilon=1.0, eta=0.001, now=5 * day)
    assert not d.allowed and "epsilon 3 > 2" in d.reason and d.spent_epsilon == 2.0
    assert ledger.decide(campaign="w2", epsilon=1.0, eta=0.001, now=5 * day).allowed  # already joined: free
    assert ledger.record(Spend(campaign="w2", family="weekly", epsilon=1.0, eta=0.001, at=5 * day)) is ledger
    later = ledger.decide(campaign="w3", epsilon=1.0, eta=0.001, now=7 * day + 1)  # w1 left the window
    assert later.allowed and later.spent_epsilon == 1.0
    with pytest.raises(ParameterError, match="declined"):
        ledger.record(Spend(campaign="w3", family="weekly", epsilon=1.0, eta=0.001, at=5 * day))
    eta_only = Ledger(budget=Budget(epsilon=50.0, eta=0.0015, period=day))
    eta_only = eta_only.record(Spend(campaign="x", family="f", epsilon=0.1, eta=0.001, at=1.0))
    d = eta_only.decide(campaign="y", epsilon=0.1, eta=0.001, now=2.0)
    assert not d.allowed and "eta" in d.reason and "epsilon" not in d.reason.split("spend")[1]


def test_exact_splits_fit_their_budget():
    ledger = Ledger(budget=Budget(epsilon=1.0, eta=0.003, period=100.0))
    for i in range(3):
        ledger = ledger.record(Spend(campaign=f"c{i}", family="f", epsilon=1 / 3, eta=0.001, at=float(i)))
    assert ledger.spent(3.0) == (pytest.approx(1.0), pytest.approx(0.003))


def test_round_trip_and_validation():
    ledger = Ledger(budget=Budget(epsilon=3.0, eta=0.01, period=30 * 86400.0))
    ledger = ledger.record(Spend(campaign="c", family="fam", epsilon=1.0, eta=0.0, at=5.0))
    assert Ledger.from_dict(ledger.to_dict()) == ledger
    with pytest.raises(ParameterError, match="epsilon must be in"):
        Budget(epsilon=math.inf, eta=0.01, period=1.0)
    with pytest.raises(ParameterError, match="period"):
        Budget(epsilon=1.0, eta=0.01, period=1e300)
    with pytest.raises(ParameterError, match="campaign must be"):
        Spend(campaign="", family="f", epsilon=1.0, eta=0.1, at=0.0)
    with pytest.raises(ParameterError, match="at must be"):
        Spend(campaign="c", family="f", epsilon=1.0, eta=0.1, at=-1.0)
    with pytest.raises(ParameterError, match="malformed"):
        Ledger.from_dict({"version": 1, "budget": {"epsilon": 1.0}, "spends": []})
    with pytest.raises(ParameterError, match="version 1"):
        Ledger.from_dict({"budget": {}, "spends": []})
