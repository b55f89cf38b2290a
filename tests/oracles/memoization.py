"""Exact oracle for memoized randomized response (issue 14), in rational arithmetic, independent of the library.

N people each hold an L-bit value. A *memoized* family flips every bit of the value once with ``q1`` (the permanent
memo); each release flips every bit of the memo again with ``q2`` and publishes the multiset of the N reports.
Without memoization each release flips the value afresh. Laws are over multisets (sorted tuples) of outcomes; T
releases are exchangeable given the memos, so a law over multisets of release outcomes, weighted by the number of
orderings, gives the exact hockey-stick divergence. Shared by tests/accounting/test_memoization.py,
tests/client/test_memoized_family.py and scripts/lifetime_figure.py.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction
from functools import cache

Dist = dict[tuple[int, ...], Fraction]


def _report_law(value: int, q: Fraction, bits: int) -> list[Fraction]:
    """P[report = r] for one vector flipped bitwise with probability q."""
    return [q ** bin(r ^ value).count("1") * (1 - q) ** (bits - bin(r ^ value).count("1"))
            for r in range(1 << bits)]


@cache
def multiset_law(values: tuple[int, ...], q: Fraction, bits: int) -> tuple[tuple[tuple[int, ...], Fraction], ...]:
    """Law of the sorted tuple (multiset) of the N randomized vectors."""
    law: Dist = {(): Fraction(1)}
    for v in values:
        per = _report_law(v, q, bits)
        nxt: Dist = defaultdict(Fraction)
        for key, p in law.items():
            for r, pr in enumerate(per):
                nxt[tuple(sorted((*key, r)))] += p * pr
        law = nxt
    return tuple(sorted(law.items()))


def memoized_joint(values: tuple[int, ...], q1: Fraction, q2: Fraction, bits: int, rounds: int) -> Dist:
    """Law of T memoized releases, over the *multiset* of the T release outcomes."""
    memos = multiset_law(values, q1, bits)
    per_memo = [(pm, dict(multiset_law(m, q2, bits))) for m, pm in memos]
    outcomes = sorted({o for _, law in per_memo for o in law})
    out: Dist = {}
    for combo in itertools.combinations_with_replacement(outcomes, rounds):
        total = Fraction(0)
        for pm, law in per_memo:
            term = pm
            for o in combo:
                term *= law.get(o, Fraction(0))
                if not term:
                    break
            total += term
        if total:
            out[combo] = total
    return out


def fresh_joint(values: tuple[int, ...], q: Fraction, bits: int, rounds: int) -> Dist:
    """T independent releases at flip q (no memo), as a law over multisets of outcomes."""
    law = dict(multiset_law(values, q, bits))
    out: Dist = {}
    for combo in itertools.combinations_with_replacement(sorted(law), rounds):
        p = Fraction(1)
        for o in combo:
            p *= law[o]
        out[combo] = p
    return out


def multiplicity(combo: tuple[tuple[int, ...], ...]) -> int:
    """Number of orderings of a multiset of outcomes."""
    counts: dict[tuple[int, ...], int] = defaultdict(int)
    for o in combo:
        counts[o] += 1
    m = math.factorial(len(combo))
    for c in counts.values():
        m //= math.factorial(c)
    return m


def delta(p: Dist, q: Dist, lam: Fraction, *, exchangeable: bool = True) -> Fraction:
    """Exact hockey-stick divergence sum_o (P(o) - lam Q(o))_+ (outcome multisets weighted by their orderings)."""
    total = Fraction(0)
    for o in set(p) | set(q):
        d = p.get(o, Fraction(0)) - lam * q.get(o, Fraction(0))
        if d > 0:
            total += d * (multiplicity(o) if exchangeable else 1)
    return total


def delta_t(a: tuple[int, ...], b: tuple[int, ...], *, q1: Fraction | None, q2: Fraction, bits: int, rounds: int,
            lam: Fraction) -> Fraction:
    """Exact delta_T(log lam) of T releases for the neighbours a, b: memoized (q1 then q2) when q1 is given,
    else T fresh releases at flip q2."""
    if q1 is None:
        return delta(fresh_joint(a, q2, bits, rounds), fresh_joint(b, q2, bits, rounds), lam)
    return delta(memoized_joint(a, q1, q2, bits, rounds), memoized_joint(b, q1, q2, bits, rounds), lam)


def one_release(values: tuple[int, ...], q: Fraction, bits: int) -> Dist:
    """One release at flip q, as a law over one-outcome tuples."""
    return {(o,): p for o, p in multiset_law(values, q, bits)}
