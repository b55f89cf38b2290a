"""``proven_delta``: a rigorous bound on delta(epsilon) of one release over every pair of collections, pinned to
independent truth.

* Brute force (tests/oracles/rounds.py, no product code): every neighbouring pair of small collections, the exact
  delta of the released histogram; the bound must lie above the worst at N and at every larger crowd tried
  (N .. N + 2), for one and two reports per person.
* Exact facts: delta = 0 under local DP, and for a pair type whose largest per-report loss is below epsilon.
* The float-allowance regime (a tiny delta, the bound read off the dominating curve): brute force again, epsilon
  just below the largest loss.
"""

from __future__ import annotations

import math

import pytest
from tests.oracles import rounds as oracle

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.rounds import rounds_tail
from sufficientdp.ratio import proven
from sufficientdp.ratio.proven import Domain, blanket_delta, blanket_mass, pair_types, proven_delta, proven_tail
from sufficientdp.ratio.single_bit import worst_delta_upper


def _worst_delta(bits: int, population: int, q: float, epsilon: float, reports: int = 1) -> float:
    """The exact worst delta over every neighbouring pair (both orders), k reports per person."""
    if reports == 1:
        return oracle.worst_fixed(bits, population, q, 1, [epsilon])[1][0]
    worst = 0.0
    for base, x, xp in oracle.pairs(bits, population):
        p = oracle.round_law(bits, q, tuple(sorted((base + (x,)) * reports)))
        q_ = oracle.round_law(bits, q, tuple(sorted((base + (xp,)) * reports)))
        worst = max(worst, oracle.joint_eta_delta([p], [q_], [epsilon])[1][0])
    return worst


@pytest.mark.parametrize(("bits", "population", "q", "epsilon"), [
    (1, 4, 0.25, 0.5),  # the exact scan at L = 1
    (2, 3, 0.25, 1.0),
    (2, 2, 0.3, 1.0),
    (3, 2, 0.2, 1.0),
    (2, 3, 0.15, 2.0),
])
def test_bound_is_above_the_exact_worst_delta_at_n_and_larger_crowds(bits: int, population: int, q: float,
                                                                     epsilon: float) -> None:
    b = proven_delta(q=q, bits=bits, population=population, epsilon=epsilon)
    assert b.kind == "bound" and b.scope == "all-collections" and b.epsilon == epsilon
    exact = [_worst_delta(bits, n, q, epsilon) for n in range(population, population + 3)]
    assert exact[0] > 0.05  # informative cases
    assert max(exact) - 1e-12 <= b.delta <= 1.0
    assert b.delta < 4 * max(exact)  # and not far above the truth at these sizes


@pytest.mark.parametrize(("bits", "population", "q", "epsilon"), [(1, 3, 0.2, 2.0), (2, 2, 0.25, 1.5)])
def test_two_reports_bound_is_above_the_exact_worst_delta(bits: int, population: int, q: float,
                                                          epsilon: float) -> None:
    exact = _worst_delta(bits, population, q, epsilon, reports=2)
    b = proven_delta(q=q, bits=bits, population=population, epsilon=epsilon, reports=2)
    assert exact > 0.1
    assert exact - 1e-12 <= b.delta < 1.0
    assert "composed" in b.method


def test_one_bit_is_the_exact_scan_and_holds_for_larger_crowds() -> None:
    q, eps, n = 0.25, 1.0, 8
    b = proven_delta(q=q, bits=1, population=n, epsilon=eps)
    assert b.delta == worst_delta_upper(population=n, q=q, epsilon=eps)
    assert b.method.startswith("exact")
    # the worst delta does not grow with N (post-processing), unlike the worst eta (proven_tail's docstring)
    later = [_worst_delta(1, m, q, eps) for m in range(n, n + 4)]
    assert later[0] <= b.delta <= later[0] * (1 + 1e-9) + 1e-15
    assert max(later) <= b.delta + 1e-12


def test_local_dp_is_exactly_zero() -> None:
    # 3 bits at q = 0.4: every report's log ratio is at most 3 log(1.5) = 1.216 < 1.25
    b = proven_delta(q=0.4, bits=3, population=10, epsilon=1.25)
    assert b.delta == 0.0 and b.worst == "local"
    assert _worst_delta(3, 2, 0.4, 1.25) == 0.0
    # two reports: 2 * 1.216 > 1.25, so not local; the bound is positive
    assert proven_delta(q=0.4, bits=3, population=10, epsilon=1.25, reports=2).delta > 0.0


def test_types_below_epsilon_are_zero_and_the_allowance_goes_through_the_curve() -> None:
    # L = 5, N = 1000, q = 0.3269, epsilon = 3: types j <= 4 have largest loss 4 log(p/q) = 2.89 < 3 (delta 0);
    # j = 5 has 3.61. The bound at epsilon itself is its float allowance, about 1.9e-8 for every type; the
    # dominating curve read at epsilon is far below it.
    q, n, eps = 0.3269, 1000, 3.0
    b = proven_delta(q=q, bits=5, population=n, epsilon=eps)
    by_type = dict(b.by_type)
    assert all(by_type[f"j={j}"] == 0.0 for j in range(1, 5))
    assert b.worst == "j=5" and by_type["j=5"] > 0.0
    dom = Domain(bits=5)
    log_gamma = blanket_mass(dom, q)
    at_eps = {pt.name: blanket_delta(pt, log_gamma=log_gamma, others=n - 1, epsilon_prime=eps)
              for pt in pair_types(dom, q)}
    assert min(at_eps.values()) > 1e-8  # the allowance, even where delta is exactly 0
    assert b.delta < at_eps["j=5"] / 10


@pytest.mark.parametrize(("bits", "population"), [(2, 3), (2, 2), (3, 2)])
def test_bound_read_off_the_curve_is_above_the_exact_worst_delta(bits: int, population: int) -> None:
    # epsilon 1e-7 below the largest loss: delta is about 1e-8, the bound at epsilon is mostly its float allowance,
    # and the ladder goes on to the curve (the same brute force as above decides)
    q = 0.3
    eps = bits * math.log((1 - q) / q) - 1e-7
    b = proven_delta(q=q, bits=bits, population=population, epsilon=eps)
    exact = _worst_delta(bits, population, q, eps)
    assert 1e-9 < exact - 1e-15 <= b.delta < 10 * exact


def test_the_eta_bounds_at_hand_are_a_valid_start(monkeypatch: pytest.MonkeyPatch) -> None:
    # delta <= eta: after proven_tail at the same arguments, each type starts from its eta bound; a type whose eta
    # bound lies below the answer is not bounded again
    steps: list[str] = []
    original = proven._DeltaLadder.step

    def spy(self: proven._DeltaLadder, pt: proven.PairType, value: float, rung: int) -> tuple[float, int, bool]:
        steps.append(pt.name)
        return original(self, pt, value, rung)

    monkeypatch.setattr(proven._DeltaLadder, "step", spy)

    def cold_then_warm(q: float, bits: int, n: int, eps: float) -> tuple[float, int, float, int, float]:
        proven._ETA_BY_TYPE.clear()
        steps.clear()
        cold = proven_delta(q=q, bits=bits, population=n, epsilon=eps).delta
        cold_steps = len(steps)
        eta = proven_tail(q=q, bits=bits, population=n, epsilon=eps).eta
        steps.clear()
        warm = proven_delta(q=q, bits=bits, population=n, epsilon=eps).delta
        return cold, cold_steps, warm, len(steps), eta

    cold, _, warm, _, eta = cold_then_warm(0.2, 3, 2, 1.0)  # brute force decides
    exact = _worst_delta(3, 2, 0.2, 1.0)
    assert exact - 1e-12 <= warm <= eta and exact - 1e-12 <= cold
    cold, cold_steps, warm, warm_steps, eta = cold_then_warm(0.38, 12, 100_000, 2.0)
    assert warm == cold < eta  # (the same type on the same last rung)
    assert warm_steps <= cold_steps - 5  # (measured: 26 and 18)


def test_rounds_tail_at_one_round_is_the_one_release_bounds() -> None:
    q, bits, n, eps = 0.25, 2, 3, 1.0
    r = rounds_tail(q=q, bits=bits, population=n, epsilon=eps, rounds=1)
    assert r.kind == "bound" and r.scope == "all-collections" and r.details["used"] == "one round"
    assert r.eta == proven_tail(q=q, bits=bits, population=n, epsilon=eps, larger_crowds=True).eta
    assert r.delta_upper == proven_delta(q=q, bits=bits, population=n, epsilon=eps).delta
    eta, delta = oracle.worst_fixed(bits, n, q, 1, [eps])
    assert eta[0] - 1e-12 <= r.eta and delta[0] - 1e-12 <= r.delta_upper
    assert r.details["eta_composed"] is None and r.details["fallback"] is None  # nothing composed


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"q": 0.5}, r"^q must be in"),
    ({"epsilon": -1.0}, r"epsilon"),
    ({"population": 0}, r"^population must be"),
    ({"reports": 10_001}, r"^reports must be"),
    ({"resolution": 1e-13}, r"^resolution must be in \[1e-12, 1\)"),
    ({"domain": Domain(bits=4)}, r"^domain\.bits must equal bits \(3\); got 4"),
    ({"enough": math.nan}, r"^enough"),
])
def test_bad_input_is_refused_naming_the_parameter(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"q": 0.3, "bits": 3, "population": 10, "epsilon": 1.0, **kwargs}
    with pytest.raises(ParameterError, match=message):
        proven_delta(**args)  # type: ignore[arg-type]


def test_delta_never_exceeds_eta_on_a_grid() -> None:
    # delta(eps) <= eta(eps) for every pair; the two bounds are computed differently but both by the blanket, so a
    # delta bound above the eta bound would show a loose ladder (not an invalid one); at these sizes it never is
    for q in (0.2, 0.3, 0.4):
        for eps in (0.5, 1.0, math.log(5)):
            d = proven_delta(q=q, bits=6, population=500, epsilon=eps).delta
            e = proven_tail(q=q, bits=6, population=500, epsilon=eps).eta
            assert d <= e * (1 + 1e-6) + 1e-15
