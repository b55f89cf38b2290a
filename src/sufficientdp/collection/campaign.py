"""A collection campaign: its validated configuration, its proven flip probability, and its releases.

A campaign fixes what every client does (L bits, flip probability q, k reports per person) and what the collector
promises: a release covers at least ``N_min`` people (``k * N_min`` reports), and at ``N_min`` the bound on
``eta = P[R > e**epsilon]`` (seed 001 eq. 1.7) over every pair of neighbouring collections is at most the
campaign's ``eta``.

* :class:`Campaign` — the frozen, validated configuration (what an operator asks for).
* :func:`plan_campaign` — turns it into a :class:`CampaignPlan`: the dyadic q actually used (rounded *up* to a
  multiple of ``2**-precision``, never less noise than asked) and the proven ``eta`` bound at ``N_min`` for that
  q. With ``q=None`` it calibrates with ``calibrate(method="proven")``; with q given it only checks it, and raises
  :class:`TargetNotMetError` when the bound exceeds the target. Both cost up to tens of seconds (the check alone,
  on this project's 2-core machine: 0.2 s at L = 4 or 64, 3.4 s at L = 286, N_min = 10^5; calibrating at L = 256:
  7-17 s; more with k > 1), so the HTTP collector runs them in a bounded background job
  (:mod:`sufficientdp.service.jobs`), never inside a request.
* :func:`proven_eta` — the all-collections bound at a given q (exact at L = 1).
* :func:`estimate_release` — per-bit estimates (and, for L <= 12, the joint histogram) of a released batch.

This module is part of the core: it imports only numpy, scipy and the standard library. The HTTP collector
(:mod:`sufficientdp.service`) is an adapter around it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Final

import numpy as np

from .._errors import CalibrationError, DataError, ParameterError
from .._frozen import freeze, thaw
from .._numerics.dyadic import DyadicProbability
from .._validation import (
    check_confidence_level,
    check_int,
    check_open_interval,
    check_positive_finite,
    renamed,
    renamed_fields,
)
from ..accounting.memoization import LIFETIME_STATEMENT
from ..accounting.rounds import rounds_tail
from ..aggregation.tally import Tally
from ..calibration._calibrate import DEFAULT_ETA, calibrate
from ..estimation.bits import estimate_bits
from ..estimation.joint import joint_frequencies
from ..ratio.proven import MAX_FULL_BITS, proven_tail

__all__ = [
    "MAX_BITS",
    "MAX_CROWD_SIZE",
    "MAX_EPSILON",
    "MAX_HISTOGRAM_BITS",
    "MAX_NAME_LENGTH",
    "MAX_PRECISION",
    "MAX_REPORTS_PER_PERSON",
    "RATE_LIMITS",
    "Campaign",
    "CampaignPlan",
    "ReleaseEstimates",
    "TargetNotMetError",
    "proven_eta",
    "estimate_release",
    "plan_campaign",
]

#: Largest L a campaign accepts: the most bits whose q the all-collections bound can prove over every vector of
#: {0,1}^L (:data:`sufficientdp.ratio.proven.MAX_FULL_BITS`, 286; a campaign above it could never be planned).
MAX_BITS: Final = MAX_FULL_BITS
#: Largest N_min (a crowd larger than a billion people needs no collector of this kind).
MAX_CROWD_SIZE: Final = 10**9
#: Largest k.
MAX_REPORTS_PER_PERSON: Final = 100
#: Largest epsilon (lambda = e**50 ~ 5e21: far beyond any meaningful privacy level).
MAX_EPSILON: Final = 50.0
#: Largest dyadic precision of q (clients draw 64-bit words).
MAX_PRECISION: Final = 64
#: Longest campaign name, in characters.
MAX_NAME_LENGTH: Final = 200
#: Releases carry the joint histogram (2**L cells) only up to this L.
MAX_HISTOGRAM_BITS: Final = 12
#: Rate limiting: blind-signature tokens (at most k reports per credential) or none.
RATE_LIMITS: Final = ("tokens", "none")
#: Confidence level of the intervals in releases.
RELEASE_LEVEL: Final = 0.95


class TargetNotMetError(CalibrationError):
    """A given q does not meet the campaign's target: its proven eta bound at N_min exceeds eta.

    Attributes:
        q: the dyadic q that was checked; eta_at_q: its proven bound; eta: the target.
    """

    def __init__(self, message: str, *, q: float, eta_at_q: float, eta: float) -> None:
        super().__init__(message)
        self.q = q
        self.eta_at_q = eta_at_q
        self.eta = eta


@dataclass(frozen=True, slots=True, kw_only=True)
class Campaign:
    """What an operator asks for when opening a collection campaign.

    Attributes:
        name: a label, 1 to 200 characters, no control characters.
        bits: L, bits per report, in [1, 286] (:data:`MAX_BITS`).
        epsilon: privacy level, in (0, 50].
        eta: target cut-off ``P[R > e**epsilon] <= eta`` at N_min, in (0, 1) (default 1e-3).
        crowd_size: N_min, the fewest people any release will cover, in [2, 10**9].
        reports_per_person: k, in [1, 100] (default 1).
        q: flip probability in (0, 0.5), or None to calibrate it (proven method).
        precision: bits of the dyadic flip probability used by clients, in [2, 64] (default 32).
        rate_limit: ``"tokens"`` (blind-signature tokens, at most k reports per credential) or ``"none"``.
        family: the campaign family it belongs to (1 to 200 printable characters), or None: the campaign is its
            own family. Published with the campaign so that devices can account it in their privacy ledger
            (:mod:`sufficientdp.collection.ledger`); it does not change the calibration.
        memo_q: the permanent flip probability q1 of a memoized family (RAPPOR-style, issue 14), in (0, 0.5), or
            None (no memoization). With memo_q, each device flips its value once per family and value with q1 (the
            memo, kept on the device) and every campaign of the family flips the memo again with ``q`` (the
            instantaneous q2, which must then be given); the guarantee is checked at the per-release flip
            ``q1(1-q2)+q2(1-q1)`` and the plan adds the lifetime bound (:mod:`sufficientdp.accounting.memoization`).
            Needs a ``family`` and ``reports_per_person = 1``.

    Raises:
        ParameterError: a field outside its domain (the message names it, its value and the allowed range).

    Examples:
        >>> c = Campaign(name="survey", bits=4, epsilon=1.0, crowd_size=300, q=0.3)
        >>> c.eta, c.reports_per_person, c.precision, c.rate_limit
        (0.001, 1, 32, 'tokens')
    """

    name: str
    bits: int
    epsilon: float
    crowd_size: int
    eta: float = DEFAULT_ETA
    reports_per_person: int = 1
    q: float | None = None
    precision: int = 32
    rate_limit: str = "tokens"
    family: str | None = None
    memo_q: float | None = None

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not (1 <= len(name) <= MAX_NAME_LENGTH) or not name.isprintable():
            shown = name if not isinstance(name, str) else name[:60]
            raise ParameterError(f"name must be a printable string of 1 to {MAX_NAME_LENGTH} characters; "
                                 f"got {shown!r}")
        set_ = object.__setattr__
        bits = check_int("bits", self.bits, minimum=1)
        if bits > MAX_BITS:
            raise ParameterError(f"bits must be an integer >= 1 and <= {MAX_BITS}, the most bits whose q the "
                                 f"all-collections bound proves over all of {{0,1}}^L; got {bits}")
        set_(self, "bits", bits)
        try:
            epsilon = check_positive_finite("epsilon", self.epsilon)
        except ParameterError:
            epsilon = math.nan
        if not 0.0 < epsilon <= MAX_EPSILON:
            shown = repr(self.epsilon)
            raise ParameterError(f"epsilon must be a number in (0, {MAX_EPSILON:g}]; got "
                                 f"{shown if len(shown) <= 60 else shown[:57] + '...'}")
        set_(self, "epsilon", epsilon)
        set_(self, "eta", check_open_interval("eta", self.eta, 0.0, 1.0))
        set_(self, "crowd_size", check_int("crowd_size", self.crowd_size, minimum=2, maximum=MAX_CROWD_SIZE))
        set_(self, "reports_per_person", check_int("reports_per_person", self.reports_per_person, minimum=1,
                                                   maximum=MAX_REPORTS_PER_PERSON))
        if self.q is not None:
            set_(self, "q", check_open_interval("q", self.q, 0.0, 0.5))
        set_(self, "precision", check_int("precision", self.precision, minimum=2, maximum=MAX_PRECISION))
        if self.rate_limit not in RATE_LIMITS:
            raise ParameterError(f"rate_limit must be one of {', '.join(map(repr, RATE_LIMITS))}; "
                                 f"got {self.rate_limit!r}")
        family = self.family
        if family is not None and (not isinstance(family, str) or not (1 <= len(family) <= MAX_NAME_LENGTH)
                                   or not family.isprintable()):
            shown = family if not isinstance(family, str) else family[:60]
            raise ParameterError(f"family must be None or a printable string of 1 to {MAX_NAME_LENGTH} "
                                 f"characters; got {shown!r}")
        if self.memo_q is not None:
            set_(self, "memo_q", check_open_interval("memo_q", self.memo_q, 0.0, 0.5))
            if self.q is None:
                raise ParameterError("q: a memoized campaign (memo_q given) needs the instantaneous q given; it is "
                                     "not calibrated")
            if self.family is None:
                raise ParameterError("family: a memoized campaign (memo_q given) needs a family (the memo is kept "
                                     "per family and value)")
            if self.reports_per_person != 1:
                raise ParameterError(f"reports_per_person must be 1 for a memoized campaign (memo_q given); got "
                                     f"{self.reports_per_person}")

    @property
    def release_threshold(self) -> int:
        """Fewest reports a release may cover: ``k * N_min`` (each person sends at most k reports)."""
        return self.reports_per_person * self.crowd_size

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        return asdict(self)


def proven_eta(*, q: float, bits: int, population: int | None = None, epsilon: float, reports: int | None = None,
               crowd_size: int | None = None, reports_per_person: int | None = None) -> float:
    """Upper bound on ``eta = P[R > e**epsilon]`` at flip probability q for **every** pair of neighbouring
    collections of N_min **or more** people (a release covers at least N_min).

    It is :func:`sufficientdp.ratio.proven.proven_tail` with ``larger_crowds=True`` (docs/proofs/blanket.md;
    at L = 1 :func:`~sufficientdp.ratio.proven.single_bit_larger_crowds`, since the exact value there is not
    monotone in N): the same quantity ``calibrate(method="proven", larger_crowds=True)`` drives below its target,
    so the collector's check and the calibration give one answer.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N_min >= 1 people (required).
        epsilon: > 0.
        reports: k >= 1 reports per person (default 1).
        crowd_size, reports_per_person: the former names of ``population`` and ``reports`` (deprecated: a
            DeprecationWarning; give one name of each).

    Returns:
        The bound, in [0, 1].

    Raises:
        ParameterError: a parameter out of range.

    Examples:
        >>> b = proven_eta(q=0.3, bits=4, population=300, epsilon=1.0)
        >>> 0.0 < b <= 1e-3
        True
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1, maximum=100_000)
    population = renamed("population", population, "crowd_size", crowd_size)
    if population is None:
        raise ParameterError("population must be given (an integer >= 1); got None")
    population = check_int("population", population, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    reports = check_int("reports", renamed("reports", reports, "reports_per_person", reports_per_person, default=1),
                        minimum=1)
    return _proven_eta(q, bits, population, epsilon, reports)


@functools.lru_cache(maxsize=256)
def _proven_eta(q: float, bits: int, population: int, epsilon: float, reports: int) -> float:
    """Cached: the bound is a pure function of its (validated) arguments and costs seconds to minutes."""
    res = proven_tail(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports, larger_crowds=True)
    return float(res.eta)


@dataclass(frozen=True, slots=True, kw_only=True)
class CampaignPlan:
    """A campaign with the flip probability clients must use and its proven guarantee.

    Attributes:
        campaign: the requested configuration.
        q: the dyadic flip probability actually used, ``q_numerator / 2**precision``.
        q_numerator: its numerator; clients flip each bit with probability exactly ``q_numerator / 2**precision``.
        precision: the dyadic precision.
        eta_at_q: bound on ``P[R > e**epsilon]`` at q and N_min over every pair of collections
            (:func:`proven_eta`).
        calibrated: True if q was calibrated (``campaign.q`` was None), False if it was given and checked.
        guarantee: one paragraph saying what the numbers promise and what they rest on.
        notes: caveats from the calibration.
        memo_q, memo_q_numerator: the dyadic permanent flip q1 of a memoized campaign (None otherwise).
        q_release: the per-release flip ``q1(1-q2)+q2(1-q1)`` the guarantee is checked at (q without memo).
        lifetime: for a memoized campaign, the lifetime guarantee of an unchanged value over every number of
            releases of the family: ``{"delta", "epsilon", "local_epsilon", "kind", "scope", "rounds", "eta",
            "statement"}`` (``eta`` None: not claimed); None otherwise.
    """

    campaign: Campaign
    q: float
    q_numerator: int
    precision: int
    eta_at_q: float
    calibrated: bool
    guarantee: str
    notes: tuple[str, ...] = field(default=())
    memo_q: float | None = None
    memo_q_numerator: int | None = None
    q_release: float | None = None
    lifetime: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the campaign's fields, with ``q`` replaced by the dyadic q, plus the plan's fields."""
        d = self.campaign.to_dict()
        d.update(q=self.q, q_numerator=self.q_numerator, precision=self.precision, eta_at_q=self.eta_at_q,
                 calibrated=self.calibrated, guarantee=self.guarantee, notes=list(self.notes),
                 memo_q=self.memo_q, memo_q_numerator=self.memo_q_numerator,
                 q_release=self.q if self.q_release is None else self.q_release,
                 lifetime=None if self.lifetime is None else dict(self.lifetime))
        return d


def _guarantee(c: Campaign, eta_at_q: float) -> str:
    return (f"proven, all collections: for a release of {c.release_threshold} reports ({c.crowd_size} people x "
            f"{c.reports_per_person} report(s)), P[R > e^{c.epsilon:g}] <= {eta_at_q:.3g} (target {c.eta:g}) for "
            "every pair of neighbouring collections, both directions, and every release of at least that many "
            "reports (a rigorous upper bound, docs/proofs/blanket.md). Releases are refused below the threshold. "
            "The bound goes through delta, which adding people can only lower, so it covers larger releases; at "
            "L = 1 it is the exact worst value over crowds of N_min to N_min + 7 people and the delta bound "
            "beyond (the exact value alone is not monotone in N). Each person must send at most "
            f"{c.reports_per_person} report(s) in total (rate limiting), and releases must be disjoint.")


def plan_campaign(campaign: Campaign, *, progress: Any = None) -> CampaignPlan:
    """Fix the campaign's dyadic flip probability and certify it at N_min.

    With ``campaign.q is None``: ``q = calibrate(method="proven", population=N_min, ...)``, rounded up to the
    dyadic grid; with q given: q rounded up to the grid. In both cases the proven bound is recomputed at the
    dyadic q (monotonicity in q is not assumed) and must be <= ``campaign.eta``.

    Args:
        campaign: the configuration.
        progress: optional ``progress(done, total)`` callback for the calibration search.

    Returns:
        A :class:`CampaignPlan`.

    Raises:
        TargetNotMetError: the proven bound at the (given or calibrated) dyadic q exceeds ``campaign.eta``.
        ParameterError: ``campaign`` is not a :class:`Campaign`, or q rounds to 1/2 at this precision.

    Examples:
        >>> plan = plan_campaign(Campaign(name="t", bits=2, epsilon=1.0, crowd_size=50, q=0.35, eta=0.05))
        >>> plan.q_numerator == math.ceil(0.35 * 2**32), plan.eta_at_q <= 0.05
        (True, True)
    """
    if not isinstance(campaign, Campaign):
        raise ParameterError(f"campaign must be a Campaign; got {type(campaign).__name__}")
    c = campaign
    notes: list[str] = []
    if c.q is None:
        cal = calibrate(bits=c.bits, population=c.crowd_size, epsilon=c.epsilon, reports=c.reports_per_person,
                        method="proven", eta=c.eta, progress=progress, larger_crowds=True)
        q_raw = cal.q
        notes.extend(cal.notes)
    else:
        q_raw = c.q
    dyadic = DyadicProbability.from_float(q_raw, precision=c.precision, rounding="up")
    q = dyadic.value
    memo: DyadicProbability | None = None
    q_release = q
    if c.memo_q is not None:  # the per-release flip of a memo flipped again: q1(1-q2)+q2(1-q1), exact, then down
        memo = DyadicProbability.from_float(c.memo_q, precision=c.precision, rounding="up")
        f1, f2 = Fraction(memo.numerator, 1 << c.precision), Fraction(dyadic.numerator, 1 << c.precision)
        exact = f1 * (1 - f2) + f2 * (1 - f1)
        q_release = float(exact)
        if Fraction(q_release) > exact:  # never check at more noise than the reports carry
            q_release = math.nextafter(q_release, 0.0)
    eta_at_q = proven_eta(q=q_release, bits=c.bits, population=c.crowd_size, epsilon=c.epsilon,
                          reports=c.reports_per_person)
    if not eta_at_q <= c.eta:
        how = "the calibrated" if c.q is None else "the given"
        raise TargetNotMetError(
            f"q: {how} flip probability {q_raw!r} (dyadic {q!r} at precision {c.precision}) has a proven "
            f"eta bound of {eta_at_q:.4g} at crowd_size {c.crowd_size}, above the target eta {c.eta:g}; use a larger q "
            f"(at most 0.5), a larger crowd_size or epsilon, or q = null to calibrate",
            q=q, eta_at_q=eta_at_q, eta=c.eta)
    lifetime: dict[str, Any] | None = None
    guarantee = _guarantee(c, eta_at_q)
    if memo is not None:
        lifetime = _lifetime(c, memo.value)
        guarantee += (" Memoized family: each report is the device's permanent memo (flip q1 = "
                      f"{memo.value:.6g}) flipped again with q = {q:.6g}, so the per-release flip is {q_release:.6g} "
                      f"and the bound above is at it. Lifetime of an unchanged value, every number of releases: "
                      f"delta({c.epsilon:g}) <= {lifetime['delta']:.3g} (the memo release's proven delta; eta is "
                      f"not claimed, it is not closed under post-processing) and "
                      f"{lifetime['local_epsilon']:.3g}-local DP per person.")
    return CampaignPlan(campaign=c, q=q, q_numerator=dyadic.numerator, precision=dyadic.precision,
                        eta_at_q=eta_at_q, calibrated=c.q is None, guarantee=guarantee,
                        notes=tuple(notes), memo_q=None if memo is None else memo.value,
                        memo_q_numerator=None if memo is None else memo.numerator,
                        q_release=q_release, lifetime=lifetime)


def _lifetime(c: Campaign, q1: float) -> dict[str, Any]:
    """The lifetime guarantee of a memoized family (:mod:`sufficientdp.accounting.memoization`)."""
    memo = rounds_tail(q=q1, bits=c.bits, population=c.crowd_size, epsilon=c.epsilon, rounds=1)
    assert memo.delta_upper is not None
    return {"delta": float(memo.delta_upper), "epsilon": c.epsilon,
            "local_epsilon": c.bits * math.log((1 - q1) / q1), "kind": "bound", "scope": "all-collections",
            "rounds": "any", "eta": None, "statement": LIFETIME_STATEMENT}


@renamed_fields({"people": "population", "level": "confidence_level"})
@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseEstimates:
    """Estimates from one released batch of reports.

    Attributes:
        reports: number of reports n in the batch.
        population: ``n / k`` (people-equivalents; a fraction if some people sent fewer than k reports).
        confidence_level: of the intervals (as scipy names it).
        estimates: one dict per bit: ``bit``, ``count`` (raw ones), ``estimate``, ``lower``, ``upper``,
            ``std_error`` (people with the bit set).
        histogram: for L <= 12, the joint estimate over the 2**L vectors (index bit j = vector bit j):
            ``counts`` (raw reports per vector), ``estimate``, ``lower``, ``upper``, ``std_error``; else None.
        joint: when asked for (``estimate_release(joint=...)``), the joint estimate over the chosen bits only:
            ``bits`` (the chosen bit indices), ``vectors`` (their values, chosen bit 0 first) and the same columns
            as ``histogram``; else None.

    Immutable: ``estimates`` is a tuple of read-only mappings, ``histogram`` and ``joint`` read-only mappings of
    tuples (:class:`~sufficientdp._frozen.FrozenDict`); :meth:`to_dict` gives plain lists and dicts.

    ``people`` and ``level``, the former names of ``population`` and ``confidence_level``, still work (constructor
    and read-only attributes) with a DeprecationWarning. ``to_dict`` keeps the keys ``"people"`` and ``"level"``:
    it is the format the collector stores and serves for every release.
    """

    reports: int
    population: float
    confidence_level: float
    estimates: tuple[Mapping[str, Any], ...]
    histogram: Mapping[str, Any] | None
    joint: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        for name in ("estimates", "histogram", "joint"):
            object.__setattr__(self, name, freeze(getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"reports": self.reports, "people": self.population, "level": self.confidence_level,
                "estimates": thaw(self.estimates), "histogram": thaw(self.histogram), "joint": thaw(self.joint)}


def _floats(a: np.ndarray) -> list[float | None]:
    return [float(x) if math.isfinite(float(x)) else None for x in np.asarray(a, dtype=float)]


def estimate_release(tally: Tally, *, q: float, reports_per_person: int = 1,
                     confidence_level: float | None = None, joint: Sequence[int] | None = None,
                     level: float | None = None) -> ReleaseEstimates:
    """Per-bit (and, for L <= 12, joint) estimates of the people behind a released batch.

    ``joint=(b_1, ..., b_m)`` (1 <= m <= :data:`MAX_JOINT_BITS` distinct bits, L <= 12) adds the joint estimate
    over those bits only: the report histogram is summed over the other bits (each bit is flipped independently,
    so the marginal histogram is the randomized-response histogram of the chosen bits) and estimated as the full
    histogram is.

    When the number of reports n is a multiple of k this is exactly
    ``estimate_bits(tally, q=q, reports=k)`` (seed 001 §4, §6). Otherwise (someone sent fewer than k reports)
    the estimator is applied per report and divided by k: ``d_hat = (M - q n) / (k (p - q))`` with standard
    error ``sqrt(n p q) / (k (p - q))`` — the same formulas with ``N = n / k`` people-equivalents.

    Args:
        tally: the batch's :class:`~sufficientdp.aggregation.Tally` (with ``vector_histogram`` for the joint
            estimate when L <= 12).
        q: the campaign's dyadic flip probability.
        reports_per_person: k.
        confidence_level: of the intervals, in (0, 1) (default :data:`RELEASE_LEVEL`; the result's ``level``).
        joint: bit indices whose joint frequencies are wanted (None: none).
        level: the former name of ``confidence_level`` (deprecated; give one of the two).

    Returns:
        A :class:`ReleaseEstimates`.

    Raises:
        ParameterError: q, k or confidence_level out of range. DataError: an empty tally.

    Examples:
        >>> from sufficientdp.aggregation import tally
        >>> r = estimate_release(tally([[1, 0], [1, 1], [0, 0], [1, 0]]), q=0.25)
        >>> [e["estimate"] for e in r.estimates]
        [4.0, 0.0]
    """
    if not isinstance(tally, Tally):
        raise ParameterError(f"tally must be a Tally; got {type(tally).__name__}")
    q = check_open_interval("q", q, 0.0, 0.5)
    k = check_int("reports_per_person", reports_per_person, minimum=1)
    level = check_confidence_level(confidence_level, level, default=RELEASE_LEVEL)
    n = tally.reports
    if n < 1:
        raise DataError("the batch holds no reports")
    divisible = n % k == 0
    if divisible:
        est = estimate_bits(tally, q=q, reports=k, confidence_level=level)
        scale = 1.0
    else:
        est = estimate_bits(np.asarray(tally.bit_counts), q=q, reports=1, population=n, confidence_level=level)
        scale = 1.0 / k
    records = tuple(
        {"bit": r["bit"], "count": r["count"], "estimate": r["estimate"] * scale, "lower": r["lower"] * scale,
         "upper": r["upper"] * scale, "std_error": r["std_error"] * scale}
        for r in est.to_records()
    )
    chosen = _check_joint_bits(joint, tally)
    histogram: dict[str, Any] | None = None
    sub: dict[str, Any] | None = None
    if tally.bits <= MAX_HISTOGRAM_BITS and tally.vector_histogram is not None:
        h = np.asarray(tally.vector_histogram, dtype=np.int64)
        histogram = {"bits": tally.bits, "index": "bit j of the index is bit j of the vector",
                     **_joint_columns(h, q=q, reports=k if divisible else 1, level=level, scale=scale)}
        if chosen is not None:
            index = np.arange(h.size)
            sub_index = sum(((index >> b) & 1) << t for t, b in enumerate(chosen))
            marginal = np.bincount(np.asarray(sub_index), weights=h, minlength=1 << len(chosen)).astype(np.int64)
            sub = {"bits": list(chosen),
                   "vectors": ["".join("1" if (i >> t) & 1 else "0" for t in range(len(chosen)))
                               for i in range(marginal.size)],
                   **_joint_columns(marginal, q=q, reports=k if divisible else 1, level=level, scale=scale)}
    return ReleaseEstimates(reports=n, population=n / k, confidence_level=level, estimates=records, histogram=histogram,
                            joint=sub)


#: Largest number of bits :func:`estimate_release` estimates jointly on request (2**6 = 64 cells).
MAX_JOINT_BITS = 6


def _check_joint_bits(joint: Sequence[int] | None, tally: Tally) -> tuple[int, ...] | None:
    if joint is None:
        return None
    chosen = tuple(check_int("joint bit", b, minimum=0, maximum=tally.bits - 1) for b in joint)
    if not 1 <= len(chosen) <= MAX_JOINT_BITS or len(set(chosen)) != len(chosen):
        raise ParameterError(f"joint must list 1 to {MAX_JOINT_BITS} distinct bits; got {list(chosen)}")
    if tally.bits > MAX_HISTOGRAM_BITS or tally.vector_histogram is None:
        raise ParameterError(f"joint frequencies need the report histogram, kept for L <= {MAX_HISTOGRAM_BITS}; "
                             f"got L = {tally.bits}")
    return chosen


def _joint_columns(h: np.ndarray, *, q: float, reports: int, level: float, scale: float) -> dict[str, Any]:
    est = joint_frequencies(h, q=q, reports=reports, confidence_level=level)
    return {"counts": [int(x) for x in h], "estimate": _floats(est.estimate * scale),
            "lower": _floats(est.lower * scale), "upper": _floats(est.upper * scale),
            "std_error": _floats(est.std_error * scale)}
