"""Memoized randomized response (RAPPOR-style) over many releases: what one release and a lifetime cost (issue 14).

A campaign family with memoization has every device draw, once per value, a *permanent* randomized copy of its
value (the memo): each bit flipped independently with probability ``q1``. The memo is stored on the device, never
sent, and may be forgotten when the family ends. Every release of the family then reports a fresh *instantaneous*
randomization of the memo: each bit flipped again with probability ``q2``. The device sends the instantaneous
report only.

Per release. One report is the value with each bit flipped with probability

    q = q1 (1 - q2) + q2 (1 - q1)        (:func:`composed_flip`)

independently across bits and people, so one anonymized release is *exactly* the product's ordinary release at q:
its guarantee (ε, η and δ) is the one of q (:func:`memoized_guarantee` computes it with the proven all-collections
bound of :func:`sufficientdp.accounting.rounds.rounds_tail` at one round).

Lifetime, for a value that does not change: for every ε, every T and every pair of neighbouring collections,

    δ_T(ε) <= δ_memo(ε)          (δ of one anonymized release at q1, one report per person),

because the T releases are a randomized post-processing of the anonymized histogram of the memos, and the lifetime
is ``ε_0``-local-DP with ``ε_0 = d · ln((1 - q1) / q1)`` (d the largest Hamming distance of the domain). η is *not*
claimed for the lifetime: the tail of the privacy loss is not closed under post-processing. Scope: the same N
people in every release, values unchanged, each device reusing its memo, one report per person per release (a new
value costs another ``δ_memo``). The argument, the counterexample for η and the scope in full: docs/rounds.md,
"Memoization".

This module is part of the core (numpy/scipy and the standard library only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._errors import ParameterError
from .._validation import check_int, check_open_interval, check_positive_finite
from ..loss.result import TailResult
from ..ratio.proven import Domain, local_distance
from .rounds import _domain, rounds_tail

__all__ = ["MemoGuarantee", "composed_flip", "memoized_guarantee"]


def composed_flip(q_permanent: Any, q_instant: Any) -> Any:
    """The per-report flip probability of a memo (flip ``q1``) randomized again (flip ``q2``).

    ``q1 (1 - q2) + q2 (1 - q1)``: a bit is reported flipped when exactly one of the two layers flips it. Works
    on floats and on :class:`fractions.Fraction` values (exact).

    Examples:
        >>> composed_flip(0.25, 0.25)
        0.375
        >>> from fractions import Fraction
        >>> composed_flip(Fraction(1, 4), Fraction(1, 8))
        Fraction(5, 16)
    """
    for name, v in (("q_permanent", q_permanent), ("q_instant", q_instant)):
        if isinstance(v, bool) or not (0 <= v < 0.5):
            raise ParameterError(f"{name} must be in [0, 0.5); got {v!r}")
    return q_permanent * (1 - q_instant) + q_instant * (1 - q_permanent)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoGuarantee:
    """What a memoized campaign family promises.

    Attributes:
        q_permanent, q_instant: the two flip probabilities q1 (memo, drawn once per value) and q2 (every release).
        q_release: the per-report flip of one release, ``composed_flip(q1, q2)``.
        epsilon: the privacy level the numbers are stated at.
        per_release: the guarantee of one anonymized release (η and δ bounds at ``q_release``; kind ``bound``,
            scope ``all-collections``).
        lifetime_delta: bound on ``δ_T(ε)`` for **every** number of releases T of an unchanged value (the δ of one
            anonymized release at q1: kind ``bound``, scope ``all-collections``, see :attr:`lifetime_scope`).
        lifetime_local_epsilon: the per-person local-DP ε of the memo, ``d · ln((1 - q1) / q1)``, also for every T.
        lifetime_kind, lifetime_scope: how to read the lifetime numbers.
        memo_release: the tail result of one release at q1 the lifetime δ is read from (its ``eta`` is *not* a
            lifetime guarantee: η is not closed under post-processing).
    """

    q_permanent: float
    q_instant: float
    q_release: float
    epsilon: float
    bits: int
    population: int
    per_release: TailResult
    lifetime_delta: float
    lifetime_local_epsilon: float
    memo_release: TailResult
    lifetime_kind: str = "bound"
    lifetime_scope: str = "all-collections"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the two tail results in full under ``per_release`` and ``memo_release``)."""
        return {
            "q_permanent": self.q_permanent, "q_instant": self.q_instant, "q_release": self.q_release,
            "epsilon": self.epsilon, "bits": self.bits, "population": self.population,
            "per_release": {"eta": self.per_release.eta, "delta": self.per_release.delta_upper,
                            "kind": self.per_release.kind, "scope": self.per_release.scope},
            "lifetime": {
                "delta": self.lifetime_delta, "local_epsilon": self.lifetime_local_epsilon,
                "kind": self.lifetime_kind, "scope": self.lifetime_scope, "rounds": "any",
                "statement": LIFETIME_STATEMENT,
                "eta": None,
                "eta_note": ("not claimed: eta = P[L > epsilon] is not closed under post-processing, and the "
                             "releases are a post-processing of the memo release"),
            },
            "per_release_details": self.per_release.to_dict(),
            "memo_release_details": self.memo_release.to_dict(),
        }


#: What the lifetime numbers state, in words.
LIFETIME_STATEMENT = (
    "for every number of releases T of the family, every pair of neighbouring collections of the domain (both "
    "directions), the same N people reporting in every release with unchanged values and reused memos: "
    "delta_T(epsilon) <= lifetime_delta; each person's reports are local_epsilon-local-DP whatever the crowd")


def memoized_guarantee(*, q_permanent: float, q_instant: float, bits: int, population: int, epsilon: float,
                       domain: Domain | None = None) -> MemoGuarantee:
    """The per-release and lifetime guarantees of a memoized campaign family (module docstring).

    Args:
        q_permanent: q1, the memo's flip probability, in (0, 0.5).
        q_instant: q2, each release's flip probability on top of the memo, in [0, 0.5).
        bits: L.
        population: N, the crowd of every release (>= 1).
        epsilon: the privacy level (> 0).
        domain: the vectors people may hold (default all of {0,1}^L).

    Returns:
        A :class:`MemoGuarantee`: ``per_release`` from the proven bound at ``composed_flip(q1, q2)``;
        ``lifetime_delta`` the proven δ bound of one release at q1 (one report per person), valid for every T.

    Examples:
        >>> g = memoized_guarantee(q_permanent=0.3, q_instant=0.1, bits=2, population=200, epsilon=2.0)
        >>> g.q_release, g.lifetime_kind, g.lifetime_scope
        (0.34, 'bound', 'all-collections')
        >>> g.per_release.delta_upper <= g.lifetime_delta
        True
    """
    q1 = check_open_interval("q_permanent", q_permanent, 0.0, 0.5)
    if isinstance(q_instant, bool) or not isinstance(q_instant, (int, float)) or not 0 <= q_instant < 0.5:
        raise ParameterError(f"q_instant must be in [0, 0.5); got {q_instant!r}")
    q2 = float(q_instant)
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    dom = _domain(bits, domain)
    q = composed_flip(q1, q2)
    per_release = rounds_tail(q=q, bits=bits, population=population, epsilon=epsilon, rounds=1, domain=dom)
    memo = rounds_tail(q=q1, bits=bits, population=population, epsilon=epsilon, rounds=1, domain=dom)
    assert memo.delta_upper is not None
    return MemoGuarantee(q_permanent=q1, q_instant=q2, q_release=q, epsilon=epsilon, bits=bits,
                         population=population, per_release=per_release, lifetime_delta=float(memo.delta_upper),
                         lifetime_local_epsilon=local_distance(dom) * math.log((1 - q1) / q1), memo_release=memo)
