"""Independent brute-force oracle for T rounds of the anonymized histogram (nothing here imports ``sufficientdp``).

Every round, each of the N people sends one report of bit-vector randomized response (every bit flipped with
probability q) and the round's histogram of the N reports is released. The T histograms are released separately.
For neighbouring collections (``D_m = D' + {x}``, law P; ``D = D' + {x'}``, law Q) the joint output of the T rounds
is enumerated literally (every tuple of T histograms), its probability under both collections is the product of
the per-round probabilities, and

    eta_T(eps) = P[log P(S_1..S_T) / Q(S_1..S_T) > eps],   delta_T(eps) = sum_S (P(S) - e^eps Q(S))_+.

Per-round histogram probabilities are computed by enumerating every tuple of the N people's reports. Floats are
used throughout (the sums are short: relative error ~1e-13), so callers compare with a small tolerance.

``worst_fixed`` takes the worst over every pair (D', x, x'), both orders, the collection the same in every round;
``worst_changing`` lets every round use its own (D'_t, x_t, x'_t) (including x_t = x'_t: the person's value the
same in that round).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from functools import cache

import numpy as np
from scipy.stats import binom

__all__ = ["RoundLaw", "joint_eta_delta", "pairs", "round_law", "worst_changing", "worst_eta_l1_many_rounds",
           "worst_fixed"]

RoundLaw = dict[tuple[int, ...], float]


def _report_probs(bits: int, q: float, x: int) -> list[float]:
    out = []
    for y in range(1 << bits):
        d = bin(x ^ y).count("1")
        out.append(q ** d * (1.0 - q) ** (bits - d))
    return out


@cache
def round_law(bits: int, q: float, collection: tuple[int, ...]) -> RoundLaw:
    """Law of one round's histogram (a tuple of 2^L counts) for the collection (a tuple of vectors as ints)."""
    per = [_report_probs(bits, q, x) for x in collection]
    law: dict[tuple[int, ...], float] = defaultdict(float)
    for ys in itertools.product(range(1 << bits), repeat=len(collection)):
        pr = 1.0
        for i, y in enumerate(ys):
            pr *= per[i][y]
        hist = [0] * (1 << bits)
        for y in ys:
            hist[y] += 1
        law[tuple(hist)] += pr
    return dict(law)


def joint_eta_delta(p_rounds: Sequence[RoundLaw], q_rounds: Sequence[RoundLaw],
                    epsilons: Sequence[float]) -> tuple[list[float], list[float]]:
    """eta_T and delta_T at each epsilon for the T rounds (per-round laws P_t, Q_t), by enumerating every tuple of
    T histograms."""
    etas = [0.0] * len(epsilons)
    deltas = [0.0] * len(epsilons)
    supports = [sorted(set(p) | set(q)) for p, q in zip(p_rounds, q_rounds, strict=True)]
    for outs in itertools.product(*supports):
        pp = math.prod(p_rounds[t].get(s, 0.0) for t, s in enumerate(outs))
        qq = math.prod(q_rounds[t].get(s, 0.0) for t, s in enumerate(outs))
        if pp == 0.0:
            continue
        loss = math.inf if qq == 0.0 else math.log(pp) - math.log(qq)
        for i, e in enumerate(epsilons):
            if loss > e:
                etas[i] += pp
            deltas[i] += max(0.0, pp - math.exp(e) * qq)
    return etas, deltas


def pairs(bits: int, population: int, *, allow_equal: bool = False) -> Iterator[tuple[tuple[int, ...], int, int]]:
    """Every (D', x, x') with D' a multiset of N - 1 vectors and x != x' (both orders; x = x' too if asked)."""
    vectors = range(1 << bits)
    for base in itertools.combinations_with_replacement(vectors, population - 1):
        for x in vectors:
            for xp in vectors:
                if x != xp or allow_equal:
                    yield base, x, xp


def _laws(bits: int, q: float, base: tuple[int, ...], x: int, xp: int) -> tuple[RoundLaw, RoundLaw]:
    return round_law(bits, q, tuple(sorted(base + (x,)))), round_law(bits, q, tuple(sorted(base + (xp,))))


def worst_fixed(bits: int, population: int, q: float, rounds: int,
                epsilons: Sequence[float]) -> tuple[list[float], list[float]]:
    """Worst eta_T and delta_T at each epsilon over every neighbouring pair, the same pair in every round."""
    worst_eta = [0.0] * len(epsilons)
    worst_delta = [0.0] * len(epsilons)
    for base, x, xp in pairs(bits, population):
        p, q_ = _laws(bits, q, base, x, xp)
        etas, deltas = joint_eta_delta([p] * rounds, [q_] * rounds, epsilons)
        worst_eta = [max(a, b) for a, b in zip(worst_eta, etas, strict=True)]
        worst_delta = [max(a, b) for a, b in zip(worst_delta, deltas, strict=True)]
    return worst_eta, worst_delta


def worst_changing(bits: int, population: int, q: float, rounds: int,
                   epsilons: Sequence[float]) -> tuple[list[float], list[float]]:
    """Worst eta_T and delta_T when every round has its own pair (D'_t, x_t, x'_t), x_t = x'_t allowed."""
    per_round = [_laws(bits, q, b, x, xp) for b, x, xp in pairs(bits, population, allow_equal=True)]
    worst_eta = [0.0] * len(epsilons)
    worst_delta = [0.0] * len(epsilons)
    for combo in itertools.product(range(len(per_round)), repeat=rounds):
        if all(per_round[i][0] == per_round[i][1] for i in combo):
            continue
        etas, deltas = joint_eta_delta([per_round[i][0] for i in combo], [per_round[i][1] for i in combo],
                                       epsilons)
        worst_eta = [max(a, b) for a, b in zip(worst_eta, etas, strict=True)]
        worst_delta = [max(a, b) for a, b in zip(worst_delta, deltas, strict=True)]
    return worst_eta, worst_delta


def worst_eta_l1_many_rounds(population: int, q: float, rounds: int, epsilon: float) -> float:
    """Exact worst eta_T at L = 1 (one bit, one report a round) for large T, over every pair (m ones among the
    N - 1 others, both orders), the collection the same in every round.

    A round's histogram is its count c = 0..N of ones; the T-round loss depends only on how often each c occurred,
    (n_0, ..., n_N), a composition of T with a multinomial law. So eta_T is a sum over the C(T + N, N) compositions
    (every tuple of T histograms is accounted for, grouped by these counts).
    """
    p = 1.0 - q
    worst = 0.0
    comps = []
    for cut in itertools.combinations(range(rounds + population), population):
        parts = np.diff(np.concatenate([[-1], cut, [rounds + population]])) - 1
        comps.append(parts)
    counts = np.array(comps, dtype=float)  # rows: (n_0, ..., n_N), summing to T
    log_multi = math.lgamma(rounds + 1) - np.sum([[math.lgamma(v + 1) for v in row] for row in counts], axis=1)
    for m in range(population):  # ones among the N - 1 others
        for x, xp in ((1, 0), (0, 1)):
            def law(ones: int, x_: int) -> np.ndarray:
                dist = binom.pmf(np.arange(ones + 1), ones, p)  # reports of the ones
                dist = np.convolve(dist, binom.pmf(np.arange(population - ones), population - 1 - ones, q))
                dist = np.convolve(dist, [q, p] if x_ == 1 else [p, q])
                return np.asarray(dist)
            lp, lq = np.log(law(m, x)), np.log(law(m, xp))
            joint_lp = log_multi + counts @ lp
            loss = counts @ (lp - lq)
            worst = max(worst, float(np.sum(np.exp(joint_lp[loss > epsilon]))))
    return worst
