"""Memoized randomized response (issue 14) against an exhaustive computation in exact rationals.

For tiny N, L and T the joint law of T memoized anonymized releases is enumerated exactly for two neighbouring
collections: the memos' multiset (each bit flipped with q1), then per release each memo flipped again with q2, the
release being the multiset of the N reports. With ``lambda = e^epsilon`` rational, ``delta_T(epsilon) = sum_o
(P(o) - lambda Q(o))_+`` is exact. Checked: one memoized release is exactly the release at the composed q; delta_T
never exceeds the delta of the memo release (nor the library's stated lifetime bound) for every T; without
memoization (a fresh randomization at the same per-release q every time) delta_T grows with T and passes it.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction

import pytest
from tests.oracles.memoization import delta, fresh_joint, memoized_joint, one_release

from sufficientdp import ParameterError
from sufficientdp.accounting.memoization import composed_flip, memoized_guarantee

# Small neighbouring pairs: the first N-1 people are fixed, the last one holds x or x'.
CASES = [
    # (bits, others, x, x', q1, q2, lambda, T max)
    (1, (0,), 0, 1, Fraction(1, 4), Fraction(1, 8), Fraction(3, 2), 4),
    (1, (1, 0), 0, 1, Fraction(1, 4), Fraction(1, 8), Fraction(3, 2), 4),
    (2, (0,), 0, 3, Fraction(1, 4), Fraction(1, 8), Fraction(2), 4),
    (2, (1, 2), 0, 3, Fraction(1, 4), Fraction(1, 8), Fraction(2), 3),
    (2, (0, 0), 1, 2, Fraction(3, 10), Fraction(1, 10), Fraction(3, 2), 3),
]


@pytest.mark.slow
@pytest.mark.parametrize("bits, others, x, y, q1, q2, lam, t_max", CASES)
def test_memoized_releases_never_exceed_the_memo_release(bits: int, others: tuple[int, ...], x: int, y: int,
                                                         q1: Fraction, q2: Fraction, lam: Fraction,
                                                         t_max: int) -> None:
    d, d2 = (*others, x), (*others, y)
    q = composed_flip(q1, q2)
    assert q == q1 * (1 - q2) + q2 * (1 - q1) and isinstance(q, Fraction)
    for a, b in ((d, d2), (d2, d)):  # both directions
        memo_delta = delta(one_release(a, q1, bits), one_release(b, q1, bits), lam)
        # one memoized release is exactly one release at the composed q
        assert memoized_joint(a, q1, q2, bits, 1) == one_release(a, q, bits)
        memo_curve, fresh_curve = [], []
        for t in range(1, t_max + 1):
            memo_curve.append(delta(memoized_joint(a, q1, q2, bits, t), memoized_joint(b, q1, q2, bits, t), lam))
            fresh_curve.append(delta(fresh_joint(a, q, bits, t), fresh_joint(b, q, bits, t), lam))
        assert memo_curve[0] == fresh_curve[0]
        assert all(m <= memo_delta for m in memo_curve), (memo_curve, memo_delta)  # the lifetime bound, every T
        assert all(m1 <= m2 for m1, m2 in zip(memo_curve, memo_curve[1:]))  # more releases never leak less
        # without memoization delta_T strictly grows with T and overtakes the memoized lifetime bound
        assert all(f1 < f2 for f1, f2 in zip(fresh_curve, fresh_curve[1:])), fresh_curve
        assert fresh_curve[-1] > memo_delta, (fresh_curve, memo_delta)


@pytest.mark.slow
@pytest.mark.parametrize("bits, population", [(1, 2), (2, 2), (1, 3)])
def test_stated_lifetime_bound_covers_every_pair_and_every_T(bits: int, population: int) -> None:
    """The library's lifetime delta (proven, all collections) is above the exact delta_T of every neighbouring pair
    of the small case, for T = 1..3, and its per-release delta above every pair's one-release delta."""
    q1, q2, lam = Fraction(1, 4), Fraction(1, 8), Fraction(3, 2)
    g = memoized_guarantee(q_permanent=float(q1), q_instant=float(q2), bits=bits, population=population,
                           epsilon=math.log(lam))
    assert (g.lifetime_kind, g.lifetime_scope) == ("bound", "all-collections")
    assert g.q_release == float(composed_flip(q1, q2))
    assert math.isclose(g.lifetime_local_epsilon, bits * math.log(3))
    worst = [Fraction(0)] * 3
    vectors = range(1 << bits)
    for others in itertools.combinations_with_replacement(vectors, population - 1):
        for x, y in itertools.permutations(vectors, 2):
            a, b = (*others, x), (*others, y)
            for t in range(1, 4):
                worst[t - 1] = max(worst[t - 1], delta(memoized_joint(a, q1, q2, bits, t),
                                                       memoized_joint(b, q1, q2, bits, t), lam))
    tol = 1e-12
    assert all(float(w) <= g.lifetime_delta + tol for w in worst), (worst, g.lifetime_delta)
    assert float(worst[0]) <= g.per_release.delta_upper + tol
    assert worst[0] <= worst[1] <= worst[2] and worst[2] > 0
    d = g.to_dict()
    assert d["lifetime"]["eta"] is None and "not closed under post-processing" in d["lifetime"]["eta_note"]


def test_eta_is_not_closed_under_post_processing() -> None:
    """The docs' example: merging two outcomes raises P[L > epsilon] from 0.01 to 0.51 (delta cannot rise)."""
    lam = Fraction(2718281828, 10**9)  # e to 9 digits
    p = {"a": Fraction(1, 2), "b": Fraction(1, 100), "c": Fraction(49, 100)}
    q = {"a": Fraction(1, 2) / Fraction(269, 100), "b": Fraction(1, 10**18)}  # ratios 2.69 < e and huge
    q["c"] = 1 - q["a"] - q["b"]
    merge = {"a": "ab", "b": "ab", "c": "c"}
    pm: dict[str, Fraction] = defaultdict(Fraction)
    qm: dict[str, Fraction] = defaultdict(Fraction)
    for o in p:
        pm[merge[o]] += p[o]
        qm[merge[o]] += q[o]

    def eta(pp: dict[str, Fraction], qq: dict[str, Fraction]) -> Fraction:
        return sum((pp[o] for o in pp if pp[o] > lam * qq[o]), Fraction(0))

    def hockey(pp: dict[str, Fraction], qq: dict[str, Fraction]) -> Fraction:
        return sum((pp[o] - lam * qq[o] for o in pp if pp[o] > lam * qq[o]), Fraction(0))

    assert eta(p, q) == Fraction(1, 100) and eta(pm, qm) == Fraction(51, 100)
    assert hockey(pm, qm) <= hockey(p, q)


def test_composed_flip_and_arguments() -> None:
    assert composed_flip(0.0, 0.3) == 0.3 and composed_flip(0.3, 0.0) == 0.3
    assert composed_flip(Fraction(1, 4), Fraction(1, 4)) == Fraction(3, 8)
    with pytest.raises(ParameterError, match="q_instant"):
        composed_flip(0.2, 0.5)
    with pytest.raises(ParameterError, match="q_permanent"):
        memoized_guarantee(q_permanent=0.0, q_instant=0.1, bits=1, population=2, epsilon=1.0)
    with pytest.raises(ParameterError, match="q_instant"):
        memoized_guarantee(q_permanent=0.2, q_instant=-0.1, bits=1, population=2, epsilon=1.0)
