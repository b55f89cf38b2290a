"""Sufficient DP over T rounds (docs/proofs/rounds.md), pinned to independent truth.

* Brute force (tests/oracles/rounds.py, no product code): every tuple of T separate histograms is enumerated for
  every neighbouring pair at L = 1, 2 and tiny N; the exact worst eta_T and delta_T must lie below the bound.
* T = 30 at L = 1: the joint output's loss depends only on how often each per-round histogram occurred, so the
  exact eta_30 is a sum over the compositions of 30 (the multinomial law of the counts), computed here.
* Closed form: binary randomized response composed n times (the binomial law) for the composition step.
* Simulation: the homogeneous configuration simulated round by round (seeded; the bound must exceed the lower
  Clopper-Pearson limit at level 1e-9, which a correct implementation fails with probability <= 1e-9).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import binom
from tests.oracles import rounds as oracle

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.rounds import (
    DominatingCurve,
    compose_curve,
    dominating_curve,
    homogeneous_rounds_tail,
    rounds_tail,
)
from sufficientdp.calibration import calibrate
from sufficientdp.ratio.proven import Domain, blanket_mass, pair_types, proven_tail

FAST = {"resolution": 4e-3, "points": 32}  # coarser lattice and fewer points: valid, looser, faster


# ------------------------------------------------------------------------------------------------ brute force
@pytest.mark.slow
@pytest.mark.parametrize(("bits", "population", "q", "rounds", "epsilons"), [
    (1, 4, 0.25, 3, (0.5, 1.0, 2.0)),
    (1, 6, 0.2, 3, (1.5, 3.0)),
    (2, 3, 0.25, 2, (1.0, 1.5)),
    (2, 2, 0.3, 3, (1.0, 2.0)),
])
def test_bound_is_above_exact_worst_over_every_pair(bits: int, population: int, q: float, rounds: int,
                                                   epsilons: tuple[float, ...]) -> None:
    worst_eta, worst_delta = oracle.worst_fixed(bits, population, q, rounds, epsilons)
    for e, we, wd in zip(epsilons, worst_eta, worst_delta, strict=True):
        r = rounds_tail(q=q, bits=bits, population=population, epsilon=e, rounds=rounds, values="fixed")
        assert r.kind == "bound" and r.scope == "all-collections" and r.details["rounds"] == rounds
        assert r.eta >= we - 1e-12
        assert r.details["eta_composed"] >= we - 1e-12
        assert r.delta_upper is not None and r.delta_upper >= wd - 1e-12
        assert r.eta < 1.0  # informative on these cases


@pytest.mark.slow
@pytest.mark.parametrize(("bits", "population", "q", "epsilon"), [(1, 3, 0.25, 1.0), (2, 2, 0.3, 1.0)])
def test_changing_values_bound_is_above_exact_worst_over_every_sequence(bits: int, population: int, q: float,
                                                                        epsilon: float) -> None:
    # every round its own (D'_t, x_t, x'_t): can exceed the fixed-collection worst case (it does here)
    we, wd = oracle.worst_changing(bits, population, q, 2, [epsilon])
    wf, _ = oracle.worst_fixed(bits, population, q, 2, [epsilon])
    r = rounds_tail(q=q, bits=bits, population=population, epsilon=epsilon, rounds=2, values="changing")
    assert we[0] >= wf[0]
    assert r.eta >= we[0] - 1e-12 and r.delta_upper is not None and r.delta_upper >= wd[0] - 1e-12


def test_k_reports_per_round_bound_is_above_exact_worst() -> None:
    # 2 rounds of 2 reports per person: a round's histogram holds 2N reports (each vector repeated k times)
    bits, population, q, k, eps = 1, 3, 0.2, 2, 2.0
    worst = 0.0
    for base, x, xp in oracle.pairs(bits, population):
        p = oracle.round_law(bits, q, tuple(sorted((base + (x,)) * k)))
        q_ = oracle.round_law(bits, q, tuple(sorted((base + (xp,)) * k)))
        worst = max(worst, oracle.joint_eta_delta([p, p], [q_, q_], [eps])[0][0])
    r = rounds_tail(q=q, bits=bits, population=population, epsilon=eps, rounds=2, reports=k)
    assert r.details["one_report_releases"] == 4
    assert worst - 1e-12 <= r.eta < 1.0


@pytest.mark.slow
def test_thirty_rounds_bound_is_above_exact_l1() -> None:
    q, population, eps = 0.3, 4, 3.0
    exact = oracle.worst_eta_l1_many_rounds(population, q, 30, eps)
    r = rounds_tail(q=q, bits=1, population=population, epsilon=eps, rounds=30)
    assert 0.01 < exact <= r.eta < 1.0


# ----------------------------------------------------------------------------------------- composition step
@pytest.mark.parametrize(("q", "n", "epsilon"), [(0.3, 1, 0.5), (0.3, 10, 2.0), (0.4, 200, 1.5), (0.45, 1000, 1.0)])
def test_composition_of_randomized_response_matches_binomial(q: float, n: int, epsilon: float) -> None:
    # binary randomized response: its hockey-stick curve is exactly the hull through (-e0, 1 - e^-e0) and (e0, 0)
    p = 1.0 - q
    e0 = math.log(p / q)
    curve = DominatingCurve("rr", np.array([-e0, e0]), np.array([-math.expm1(-e0), 0.0]), 0, 0.0)
    c = compose_curve(curve, n, epsilon)
    k = np.arange(n + 1)
    loss = (2 * k - n) * e0  # k of n reports "agree": loss (2k - n) e0 under P, K ~ Bin(n, p)
    pmf = binom.pmf(k, n, p)
    delta = float(np.sum(pmf * np.maximum(-np.expm1(epsilon - loss), 0.0)))
    eta = float(np.sum(pmf[loss > epsilon]))
    assert delta <= c.delta <= delta * (1 + 5e-3) + 1e-12  # pessimistic, and close (second-order grid error)
    assert eta <= c.eta
    # the eta bound is the best delta-to-eta conversion of the (nearly) exact delta curve
    eps_p = np.linspace(epsilon - 3, epsilon - 1e-4, 3000)
    best = min(float(np.sum(pmf * np.maximum(-np.expm1(e - loss), 0.0))) / -math.expm1(e - epsilon) for e in eps_p)
    assert c.eta <= best * (1 + 1e-2) + 1e-12


def test_curve_is_above_the_exact_blanket_curve_everywhere() -> None:
    # the exact hockey-stick curve of the blanket pair, by rational enumeration (tests/oracles/blanket.py), at
    # points the curve was not built from, negative epsilon included
    from fractions import Fraction

    from tests.oracles import blanket

    bits, population, q = 2, 4, Fraction(1, 4)
    dom = Domain(bits=bits)
    lg = blanket_mass(dom, float(q))
    for pt in pair_types(dom, float(q)):
        j = int(pt.name.split("=")[1])
        x, xp = tuple([1] * j + [0] * (bits - j)), (0,) * bits
        curve = dominating_curve(pt, log_gamma=lg, others=population - 1, resolution=4e-3, points=24)
        for e in (-2.3, -1.1, -0.37, 0.0, 0.29, 0.8, 1.7):
            truth = float(blanket.blanket_delta_enumeration(bits, population, q, Fraction(e), x, xp, "all"))
            assert float(curve(np.array([e]))[0]) >= truth - 1e-12, (pt.name, e)
        losses, pmass = curve.loss_law()  # a genuine pair: P- and Q-masses sum to 1
        assert math.isclose(float(pmass.sum()), 1.0, rel_tol=1e-9)
        assert math.isclose(float(np.sum(pmass * np.exp(-losses))), 1.0, rel_tol=1e-9)


# ------------------------------------------------------------------------------------------------ properties
@pytest.mark.slow
def test_monotone_in_rounds_and_above_one_round() -> None:
    kw = {"q": 0.25, "bits": 3, "population": 200, "epsilon": 2.0, "fallback": False, **FAST}
    etas = [rounds_tail(rounds=t, **kw).eta for t in (1, 2, 4, 8)]
    assert etas == sorted(etas) and etas[0] < etas[-1]
    one = proven_tail(q=0.25, bits=3, population=200, epsilon=2.0)
    assert etas[1] >= one.eta  # two rounds can only leak more than one
    # on one fixed grid the composed bound is exactly non-decreasing in n (E[e^-L] <= 1 for the dominating law)
    dom = Domain(bits=3)
    pt = next(iter(pair_types(dom, 0.25)))
    curve = dominating_curve(pt, log_gamma=blanket_mass(dom, 0.25), others=199, resolution=4e-3, points=24)
    seq = [compose_curve(curve, n, 2.0, grid=2e-3).delta for n in range(1, 9)]
    assert all(b >= a for a, b in zip(seq, seq[1:], strict=False))


@pytest.mark.slow
@pytest.mark.parametrize(("bits", "population", "q", "rounds", "epsilon"), [
    (1, 10, 0.25, 2, 2.0), (1, 200, 0.1, 2, 2.0), (1, 200, 0.4, 5, 0.5), (3, 10, 0.4, 2, 2.0),
    (3, 200, 0.25, 2, 2.0), (3, 200, 0.4, 2, 0.5), (3, 200, 0.25, 5, 6.0),
])
def test_simple_rule_is_above_the_composed_bound(bits: int, population: int, q: float, rounds: int,
                                                 epsilon: float) -> None:
    # not a theorem (both are upper bounds; the product reports the smaller), but true on every case tried
    r = rounds_tail(q=q, bits=bits, population=population, epsilon=epsilon, rounds=rounds, values="fixed", **FAST)
    fb = r.details["fallback"]
    assert fb["eta"] >= r.details["eta_composed"]
    assert fb["eta"] == min(1.0, rounds * fb["eta_per_round"])
    assert r.eta == min(fb["eta"], r.details["eta_composed"])


def test_local_dp_regime_is_zero() -> None:
    # 5 rounds of 3 bits at q with 5 * 3 * log(p/q) <= epsilon: the total loss never exceeds epsilon
    q = 1.0 / (1.0 + math.exp(1.0 / 15.0)) + 1e-9
    r = rounds_tail(q=q, bits=3, population=100, epsilon=1.0, rounds=5)
    assert r.eta == 0.0 and r.delta_upper == 0.0


def test_limits_and_validation() -> None:
    with pytest.raises(ParameterError, match="rounds"):
        rounds_tail(q=0.3, bits=2, population=10, epsilon=1.0, rounds=1001)
    with pytest.raises(ParameterError, match="rounds \\* reports"):
        rounds_tail(q=0.3, bits=2, population=10, epsilon=1.0, rounds=1000, reports=11)
    with pytest.raises(ParameterError, match="values"):
        rounds_tail(q=0.3, bits=2, population=10, epsilon=1.0, rounds=2, values="sometimes")
    with pytest.raises(ParameterError, match="q"):
        rounds_tail(q=0.6, bits=2, population=10, epsilon=1.0, rounds=2)
    with pytest.raises(ParameterError, match="epsilon"):
        rounds_tail(q=0.3, bits=2, population=10, epsilon=0.0, rounds=2)
    with pytest.raises(ParameterError, match="rounds > 1 supports"):
        calibrate(bits=2, population=10, epsilon=1.0, rounds=2, method="mc")


# ------------------------------------------------------------------------------------ homogeneous and simulation
def _simulate_homogeneous(q: float, j: int, population: int, rounds: int, epsilon: float, samples: int,
                          rng: np.random.Generator, outlier_in_p: bool) -> int:
    """How many of ``samples`` simulated campaigns have total loss > epsilon (N - 1 zeros and one outlier with j set
    bits; a report with l of the j bits set has ratio w_l = (q/p)^(j - 2l), R = mean of the N ratios; seed 001
    eq. 3.4)."""
    p = 1.0 - q
    ls = np.arange(j + 1)
    zero = binom.pmf(ls, j, q)
    log_w = (j - 2 * ls) * math.log(q / p)
    counts = rng.multinomial(population - 1, zero, size=(samples, rounds)).astype(float)
    if outlier_in_p:  # S ~ A(D_m): the outlier's report has l ~ Bin(j, p)
        extra = rng.binomial(j, p, size=(samples, rounds))
    else:  # S ~ A(D): all zero; the loss is -log R
        extra = rng.binomial(j, q, size=(samples, rounds))
    counts[np.arange(samples)[:, None], np.arange(rounds)[None, :], extra] += 1.0
    log_r = np.log(counts @ np.exp(log_w)) - math.log(population)
    total = (log_r if outlier_in_p else -log_r).sum(axis=1)
    return int(np.sum(total > epsilon))


def _cp_lower(x: int, n: int, alpha: float) -> float:
    return 0.0 if x == 0 else float(beta_dist.ppf(alpha, x, n - x + 1))


@pytest.mark.slow
def test_simulation_at_moderate_size_stays_below_the_bound() -> None:
    # L = 5, N = 1000, T = 30 rounds; q chosen so that the homogeneous configuration's eta_30 is several per cent
    # (about 0.08 for j = 5 in either direction; the all-collections bound is about 0.6)
    q, bits, population, rounds, eps = 0.25, 5, 1000, 30, 3.0
    rng = np.random.default_rng(20240614)
    r = rounds_tail(q=q, bits=bits, population=population, epsilon=eps, rounds=rounds, values="fixed")
    samples = 4000
    for j, side in ((5, True), (5, False), (3, True)):
        hits = _simulate_homogeneous(q, j, population, rounds, eps, samples, rng, side)
        assert _cp_lower(hits, samples, 1e-9) <= r.eta, (j, side, hits)
    hits = _simulate_homogeneous(q, 5, population, rounds, eps, samples, rng, True)
    assert _cp_lower(hits, samples, 1e-9) > 0.02  # the simulation sees the event: the check above is not vacuous


def test_homogeneous_bracket_contains_bruteforce_and_simulation() -> None:
    q, bits, population, rounds, eps = 0.25, 2, 3, 2, 1.0
    h = homogeneous_rounds_tail(q=q, bits=bits, population=population, epsilon=eps, rounds=rounds)
    assert h.kind == "exact" and h.scope == "homogeneous" and h.eta_lower is not None
    worst = 0.0
    for j_code in (1, 3):  # outlier with j = 1 or 2 set bits, both directions
        zeros = (0,) * (population - 1)
        p_ = oracle.round_law(bits, q, tuple(sorted(zeros + (j_code,))))
        q_ = oracle.round_law(bits, q, zeros + (0,))
        worst = max(worst, oracle.joint_eta_delta([p_] * rounds, [q_] * rounds, [eps])[0][0],
                    oracle.joint_eta_delta([q_] * rounds, [p_] * rounds, [eps])[0][0])
    assert h.eta_lower - 1e-12 <= worst <= h.eta_upper + 1e-12
    # and a larger homogeneous case against the simulation (the same quantity, no bracket slack to hide in)
    q, population, rounds, eps = 0.2, 30, 5, 1.0
    h = homogeneous_rounds_tail(q=q, bits=1, population=population, epsilon=eps, rounds=rounds)
    rng = np.random.default_rng(7)
    samples = 20000
    side = "D_m" in h.details["worst"]
    hits = _simulate_homogeneous(q, 1, population, rounds, eps, samples, rng, side)
    lo = _cp_lower(hits, samples, 1e-9)
    hi = 1.0 - _cp_lower(samples - hits, samples, 1e-9)
    assert lo <= h.eta_upper and h.eta_lower <= hi


# ------------------------------------------------------------------------------------------------- calibration
@pytest.mark.slow
def test_calibration_meets_a_total_target_and_is_not_loose() -> None:
    bits, population, eps, eta, rounds = 3, 300, 2.0, 1e-2, 5
    cal = calibrate(bits=bits, population=population, epsilon=eps, eta=eta, rounds=rounds)
    assert cal.rounds == rounds and cal.kind == "bound" and cal.scope == "all-collections"
    assert cal.eta_at_q is not None and cal.eta_at_q <= eta
    lower = rounds_tail(q=cal.q * 0.97, bits=bits, population=population, epsilon=eps, rounds=rounds)
    assert lower.eta > eta  # 3% less noise fails: the search found the edge
    local = calibrate(bits=bits, population=population, epsilon=eps, rounds=rounds, method="local")
    assert math.isclose(local.q, 1.0 / (1.0 + math.exp(eps / (bits * rounds))), rel_tol=1e-12)
    assert cal.q < local.q
