"""Result objects for statements about the distribution of the privacy ratio R(S), and the product's vocabulary.

Every privacy number says what kind of number it is (:class:`Kind`) and for which collections it holds
(:class:`Scope`); neighbouring collections are compared in a :class:`Direction`. The three are string enums: a
member equals its string (``Kind.BOUND == "bound"``), prints and serializes to JSON as that string.

A :class:`TailResult` is one of three kinds (the product's honesty rule):

* ``"exact"`` — computed exactly (up to floating-point rounding, bracketed by ``lower``/``upper`` where the method
  tracks it);
* ``"bound"`` — a rigorous upper bound (never understates risk); ``eta_lower`` may be None;
* ``"estimate"`` — a Monte Carlo estimate with a confidence interval ``[eta_lower, eta_upper]`` at ``confidence_level``.

A range around a value — a bracket, a one-sided bound, a confidence interval — is an :class:`Interval`
``(lower, estimate, upper)`` (``TailResult.eta_interval``, ``BitEstimates.interval(j)``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from enum import StrEnum
from typing import Any

from .._errors import ParameterError
from .._frozen import freeze, thaw
from .._validation import _as_float, check_choice, renamed_fields

__all__ = [
    "DIRECTIONS",
    "DIRECTION_ALIASES",
    "KINDS",
    "SCOPES",
    "Direction",
    "Interval",
    "Kind",
    "Scope",
    "TailResult",
    "check_choice",
    "check_direction",
]


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
    """Which collection of a neighbouring pair the output is drawn from (the numerator of the privacy loss).

    Seed 001 (§1.2, eq. 1.7) writes the pair ``(D, D_m)`` and the ratio ``R(S) = P(S | D_m) / P(S | D)`` with
    ``S ~ A(D_m)``; in the homogeneous configuration ``D`` is ``N`` identical (all-zero) vectors and the outlier is
    the one vector that differs. ``FORWARD`` is that pair (the outlier in ``D_m``, loss ``log R``), ``REVERSE`` the
    same two collections the other way round (the outlier in ``D``, ``D_m`` homogeneous; loss ``-log R`` under the
    homogeneous law), ``BOTH`` the worse of the two.

    The same idea under an older name, accepted as an alias wherever a direction of the homogeneous pair is asked
    for (:data:`DIRECTION_ALIASES`, checked by :func:`check_direction`): ``outlier_in="modified"`` is ``FORWARD``,
    ``outlier_in="original"`` is ``REVERSE`` (:func:`sufficientdp.ratio.exact.homogeneous_ratio_distribution`,
    :func:`sufficientdp.ratio.sampling.sample_privacy_ratio`,
    :func:`sufficientdp.accounting.shuffled.homogeneous_histogram_pld`).

    Two *different* ideas keep their own words ``"add"``/``"remove"`` (both checked by :func:`check_choice`):

    * shuffled binary randomized response (:mod:`sufficientdp.ratio.single_bit`,
      :mod:`sufficientdp.accounting.shuffled`): the pair ``(A_n(m), A_n(m+1))`` of one person's bit changing while
      the other ``n - 1`` people hold ``m`` ones, for any ``m``; ``"remove"`` draws the output where the changed
      person holds 0, ``"add"`` where they hold 1. It names the changed bit, not the outlier: only for a crowd of
      zeros (``m = 0``, the homogeneous configuration with L = 1) is ``"add"`` ``FORWARD`` and ``"remove"``
      ``REVERSE``; for a crowd of ones (``m = n - 1``) it is the other way round (the mirror symmetry: ``"add"`` at
      ``m`` is ``"remove"`` at ``n - 1 - m``); ``"both"`` is ``BOTH``.
    * Poisson subsampling (:func:`sufficientdp.accounting.sampling.poisson_subsample`): the add/remove-one
      neighbouring relation (the person present in one dataset and absent from the other, datasets of different
      sizes); ``"add"`` draws from the dataset with the person, ``"remove"`` from the one without. A pair of
      collections of the same size differing in one person's vector (``FORWARD``/``REVERSE``) is not such a pair.
    """

    BOTH = "both"  #: the worse of the two
    FORWARD = "forward"  #: S ~ A(D_m), the outlier in D_m (seed 001 §1.2); alias outlier_in="modified"
    REVERSE = "reverse"  #: the outlier in D, D_m homogeneous; alias outlier_in="original"


#: The kinds a :class:`TailResult` may carry.
KINDS = (Kind.EXACT.value, Kind.BOUND.value, Kind.ESTIMATE.value)
SCOPES = tuple(s.value for s in Scope)
DIRECTIONS = tuple(d.value for d in Direction)
#: The older spellings of a homogeneous pair's direction (the ``outlier_in`` argument), accepted as aliases.
DIRECTION_ALIASES: Mapping[str, Direction] = {"modified": Direction.FORWARD, "original": Direction.REVERSE}


def check_direction(name: str, value: Any, allowed: tuple[Direction, ...] = tuple(Direction)) -> Direction:
    """``value`` as a :class:`Direction` member among ``allowed`` (its string or an alias of
    :data:`DIRECTION_ALIASES` accepted), else ParameterError naming the parameter, the value and the allowed values.

    Examples:
        >>> check_direction("outlier_in", "modified", (Direction.FORWARD, Direction.REVERSE))
        'forward'
        >>> check_direction("direction", Direction.BOTH) is Direction.BOTH
        True
    """
    return Direction(check_choice(name, value, tuple(d.value for d in allowed), DIRECTION_ALIASES))


def _real(name: str, value: Any, *, optional: bool) -> float | None:
    """``value`` as a float: a real number, not NaN (infinite allowed); None passes where ``optional``."""
    if value is None and optional:
        return None
    return _as_float(name, value, "[-inf, inf]" + (" or None" if optional else ""))


@dataclass(frozen=True, slots=True)
class Interval:
    """A value with the range around it: ``Interval(lower, estimate, upper)``.

    One type for every range the product reports: a rigorous bracket (``kind="bracket"`` or ``"exact"``), a
    one-sided bound (``kind="bound"``: ``upper`` is the bound), a confidence interval (``kind="estimate"`` with
    ``confidence_level``, named as in scipy's ``confidence_interval(confidence_level=...)``).

    Attributes:
        lower: the lower end, or None where that side is unknown (not computed, e.g. a one-sided bound).
        estimate: the value reported: the exact value, the bound, or the point estimate.
        upper: the upper end, or None where that side is unknown.
        confidence_level: the coverage of a confidence interval, in (0, 1); None for a bracket or bound.
        kind: a :class:`Kind`, or None.

    ``lower <= estimate <= upper`` holds for every given end (a violation raises :class:`ParameterError`); the
    ends may be infinite, never NaN. The instance is immutable.

    Examples:
        >>> iv = Interval(0.1, 0.2, 0.3, confidence_level=0.95, kind="estimate")
        >>> iv.to_dict()
        {'lower': 0.1, 'estimate': 0.2, 'upper': 0.3, 'confidence_level': 0.95, 'kind': 'estimate'}
        >>> Interval(None, 1e-6, 1e-6, kind=Kind.BOUND).lower is None
        True
    """

    lower: float | None
    estimate: float
    upper: float | None
    _: KW_ONLY
    confidence_level: float | None = None
    kind: Kind | None = None

    def __post_init__(self) -> None:
        lower = _real("lower", self.lower, optional=True)
        estimate = _real("estimate", self.estimate, optional=False)
        upper = _real("upper", self.upper, optional=True)
        assert estimate is not None
        if lower is not None and not lower <= estimate:
            raise ParameterError(f"lower must be <= estimate ({estimate!r}); got {lower!r}")
        if upper is not None and not estimate <= upper:
            raise ParameterError(f"upper must be >= estimate ({estimate!r}); got {upper!r}")
        level = _real("confidence_level", self.confidence_level, optional=True)
        if level is not None and not 0.0 < level < 1.0:
            raise ParameterError(f"confidence_level must be in (0, 1) or None; got {self.confidence_level!r}")
        kind = self.kind
        if kind is not None:
            if kind not in tuple(Kind):
                raise ParameterError(f"kind must be one of {tuple(k.value for k in Kind)} or None; got {kind!r}")
            kind = Kind(kind)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "estimate", estimate)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "confidence_level", level)
        object.__setattr__(self, "kind", kind)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict: ``lower``, ``estimate``, ``upper``, ``confidence_level``, ``kind`` (a string or None)."""
        return {
            "lower": self.lower,
            "estimate": self.estimate,
            "upper": self.upper,
            "confidence_level": self.confidence_level,
            "kind": None if self.kind is None else str(self.kind),
        }


def _num(x: float | None) -> float | None:
    if x is None:
        return None
    return None if math.isnan(x) else float(x)  # +-inf stays a float (the CLI's JSON writes it as "inf")


@renamed_fields({"confidence": "confidence_level"})
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
        confidence_level: confidence level of an estimate's interval (None otherwise), as scipy names it;
            ``confidence``, its former name, still works (constructor and attribute) with a
            DeprecationWarning. ``to_dict`` keeps the key ``"confidence"`` (the CLI's ``--json`` format).
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
    confidence_level: float | None = None
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

    @property
    def eta_interval(self) -> Interval:
        """``Interval(eta_lower, eta, eta_upper)`` with this result's ``confidence_level`` and ``kind``."""
        return Interval(self.eta_lower, self.eta, self.eta_upper, confidence_level=self.confidence_level,
                        kind=Kind(self.kind))

    @property
    def delta_interval(self) -> Interval | None:
        """``Interval(delta_lower, delta, delta_upper)`` with ``confidence_level`` and ``kind``; None where ``delta`` is."""
        if self.delta is None:
            return None
        return Interval(self.delta_lower, self.delta, self.delta_upper, confidence_level=self.confidence_level,
                        kind=Kind(self.kind))

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
            "confidence": self.confidence_level,
            "details": thaw(self.details),
        }
