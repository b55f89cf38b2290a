"""Result objects for statements about the distribution of the privacy ratio R(S), and the product's vocabulary.

Every privacy number says what kind of number it is (:class:`Kind`) and for which collections it holds
(:class:`Scope`); neighbouring collections are compared in a :class:`Direction`. The three are string enums: a
member equals its string (``Kind.BOUND == "bound"``), prints and serializes to JSON as that string.

A :class:`TailResult` is one of three kinds (the product's honesty rule):

* ``"exact"`` — computed exactly (up to floating-point rounding, bracketed by ``lower``/``upper`` where the method
  tracks it);
* ``"bound"`` — a rigorous upper bound (never understates risk); ``eta_lower`` may be None;
* ``"estimate"`` — a Monte Carlo estimate with a confidence interval ``[eta_lower, eta_upper]`` at ``confidence``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .._frozen import freeze, thaw

__all__ = ["DIRECTIONS", "KINDS", "SCOPES", "Direction", "Kind", "Scope", "TailResult"]


class _Vocabulary(StrEnum):
    """A string enum whose repr is its string (so tuples and doctests read as before)."""

    def __repr__(self) -> str:
        return repr(self.value)


class Kind(_Vocabulary):
    """What kind of number a privacy statement is."""

    EXACT = "exact"  #: computed exactly (up to stated floating-point margins)
    BOUND = "bound"  #: a rigorous upper bound on the risk (never understates it)
    LOWER_BOUND = "lower bound"  #: a rigorous lower bound (e.g. the worst pair found by a search)
    BRACKET = "bracket"  #: a rigorous two-sided bracket [lower, upper]
    ESTIMATE = "estimate"  #: a Monte Carlo estimate with a confidence interval
    HEURISTIC = "heuristic"  #: not a bound (the paper's mean + beta * sd rule)


class Scope(_Vocabulary):
    """For which collections a number holds."""

    ALL_COLLECTIONS = "all-collections"  #: every pair of neighbouring collections of the domain
    HOMOGENEOUS = "homogeneous"  #: the paper's configuration only (N - 1 identical vectors and one neighbour)
    PER_REPORT = "per-report"  #: one report on its own (local DP)


class Direction(_Vocabulary):
    """Which neighbouring direction: the changed person's vector added to the base (the paper's) or removed."""

    BOTH = "both"  #: the worse of the two
    FORWARD = "forward"  #: S ~ A(D_m), the outlier in D_m (seed 001 §1.2)
    REVERSE = "reverse"  #: the outlier in D, D_m homogeneous


#: The kinds a :class:`TailResult` may carry.
KINDS = (Kind.EXACT.value, Kind.BOUND.value, Kind.ESTIMATE.value)
SCOPES = tuple(s.value for s in Scope)
DIRECTIONS = tuple(d.value for d in Direction)


def _num(x: float | None) -> float | None:
    if x is None:
        return None
    return None if math.isnan(x) else float(x)  # +-inf stays a float (the CLI's JSON writes it as "inf")


@dataclass(frozen=True, slots=True, kw_only=True)
class TailResult:
    """The tail ``eta = P[R(S) > e**epsilon]`` of the privacy ratio under ``S ~ A(D_m)`` (seed 001 eq. 1.7).

    Attributes:
        eta: the value reported: exact value, bound, or point estimate (see ``kind``).
        eta_lower, eta_upper: bracket or confidence interval (None where not available).
        delta: approximate-DP ``delta(epsilon) = E[(1 - e**epsilon / R)_+]`` where computed, else None.
        delta_lower, delta_upper: its bracket / interval where available.
        method: how it was computed (``"proven"``, ``"homogeneous"``, ``"exact"``, ``"mc"``, ...).
        kind: a :class:`Kind`: ``"exact"``, ``"bound"`` or ``"estimate"``.
        scope: a :class:`Scope`: ``"all-collections"``, ``"homogeneous"`` or ``"per-report"``.
        epsilon, q, bits, population, reports, outlier_bits: the configuration.
        confidence: confidence level of an estimate's interval (None otherwise).
        details: method-specific extras (samples, terms, time, notes, ...), read-only (a :class:`FrozenDict`
            of tuples); ``to_dict`` returns a plain JSON-ready copy.
    """

    eta: float
    eta_lower: float | None
    eta_upper: float | None
    method: str
    kind: str
    epsilon: float
    q: float
    bits: int
    population: int
    reports: int = 1
    outlier_bits: int | None = None
    delta: float | None = None
    delta_lower: float | None = None
    delta_upper: float | None = None
    confidence: float | None = None
    scope: str = "homogeneous"
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", freeze(self.details))  # read-only: notes and caveats stay attached
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        if self.scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}; got {self.scope!r}")
        object.__setattr__(self, "kind", Kind(self.kind))
        object.__setattr__(self, "scope", Scope(self.scope))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (NaN becomes None; an infinite value stays ``inf``, which the CLI's JSON writes as "inf")."""
        return {
            "eta": _num(self.eta),
            "eta_lower": _num(self.eta_lower),
            "eta_upper": _num(self.eta_upper),
            "delta": _num(self.delta),
            "delta_lower": _num(self.delta_lower),
            "delta_upper": _num(self.delta_upper),
            "method": self.method,
            "kind": str(self.kind),
            "scope": str(self.scope),
            "epsilon": self.epsilon,
            "q": self.q,
            "bits": self.bits,
            "population": self.population,
            "reports": self.reports,
            "outlier_bits": self.outlier_bits,
            "confidence": self.confidence,
            "details": thaw(self.details),
        }
