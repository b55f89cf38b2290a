"""Fine-grained attacker scenarios for the 2020 Census noise module, and their frequentist / Bayesian semantics.

A scenario restricts the neighbour pairs to those that differ only in what the target (Jessie) wants to protect —
e.g. "block within my custom block group" — so only some queries change. Its ``rho`` is the sum of ``rho*`` over
the affected queries (zCDP composes additively), and from ``rho`` follow (004 §8.2–8.3):

* ``gaussian`` — the power of the best level-``l`` test if every affected query used the continuous Gaussian
  proxy (sensitivity 1, ``sigma^2 = 1/(2 rho)``): ``Phi(sqrt(2 rho) + Phi^{-1}(l))``. **Exact** for that proxy
  (closed form, float precision); it is *not* a guarantee for the discrete Gaussian actually used.
* ``zcdp_bound`` — the largest power any ``rho``-zCDP mechanism allows at level ``l`` (004 Theorem 6.3: the
  Bernoulli pair ``(l, power)`` must satisfy ``D_alpha <= alpha rho`` in both directions for all ``alpha > 1``).
  A **bound** in the safe direction: only finitely many ``alpha`` are checked (each one a valid constraint), so
  the feasible set can only be larger, and the bisection reports the upper end of its bracket.
* ``dgm`` — a seeded Monte-Carlo **estimate** of the power of the likelihood-ratio test on the discrete-Gaussian
  noisy measurements (004 §6.3, "Power (DGM)"), with a simultaneous DKW confidence interval.
* posterior semantics (004 §7.4, Theorem 3 and Theorems "7.4.1"/"7.4.2"): ``epsilon`` at which the posterior-to-
  posterior ratio exceeds ``e^epsilon`` with probability at most ``delta``.

Scenario definitions follow 004 §8.2. ``geo_levels``: a change of location *below* a level (e.g. block within
custom block group) changes every query at the levels underneath; ``attributes``: a change of an attribute changes
every person query that crosses it, at every level. The printed ``rho`` of scenarios C–H does **not** follow from
the printed Tables 3–5 (census-semantics-digest.md §5.2, [INCONSISTENT]); the exact sum is reported, with the
paper's value beside it. The exact sums are larger, i.e. the safe direction.

The gap (0.0566–0.0587) is best explained by :data:`PAPER_GAP_CANDIDATE`: the two **US-level** cells of Table 5
with denominator 241, ``VOTINGAGE x HISPANIC x CENRACE`` (26/241, ``rho*`` = 0.007007) and ``HHGQ x VOTINGAGE x
HISPANIC x CENRACE`` (189/241, 0.050938), together ``2.56 x 104/4099 x 215/241 = 0.057945``. Every scenario C–H
contains both; leaving them out reproduces C, E, G, H to the printed digits but still misses D (0.9442 vs 0.945)
and F (0.5536 vs 0.555), and no set of at most three (query, level) measurements reproduces all six — so the paper
is inconsistent, not our reading. The same two queries at the STATE level (2/241 and 230/4097, 0.057951) are
numerically indistinguishable. The paper's own words include them: §8.1 sums "the rho* values at the national
level", and §8.2.5 counts "all queries involving race at the tract, county, state, and national levels". Leaving
them out would understate risk, so the product keeps the larger exact sum; :func:`paper_gap_candidate_rho` gives
the excluded-reading value for comparison only.

References:
    papers/004_47af1ee980af8d2f.txt §6.1 (eq. 4, Table 1), §6.3 (Theorem 6.3, Table 2), §7.4,
    §8.2 (scenarios A–H, Table 6), §8.3 (power formula); census-semantics-digest.md §3, §4, §5.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr, ndtri

from .._errors import ParameterError
from .._validation import check_int, check_open_interval, check_positive_finite, renamed, renamed_fields
from ..accounting.conversions import zcdp_to_approx_dp
from ..accounting.mechanisms import GaussianPLD
from ..loss.result import Kind
from ..semantics.frequentist import zcdp_power_bound
from .allocation import ATTRIBUTES, GEO_LEVELS, PRODUCTION_2020, Allocation, QueryRho

__all__ = [
    "PAPER_GAP_CANDIDATE",
    "PAPER_LEVELS",
    "SCENARIOS",
    "DgmPower",
    "PosteriorRow",
    "PowerRow",
    "Scenario",
    "ScenarioReport",
    "analyze_scenario",
    "custom_scenario",
    "dgm_power",
    "gaussian_power",
    "get_scenario",
    "paper_gap_candidate_rho",
    "posterior_bounds",
]

#: Significance levels tabulated by the paper (004 Tables 1, 2, 6 and §8.2).
PAPER_LEVELS: tuple[float, ...] = (0.01, 0.05, 0.10)

#: (query, level) measurements whose omission best explains why the paper's printed rho of scenarios C–H is
#: smaller than the exact sum (module docstring; census-semantics-digest.md §5.2): the US-level cells 26/241 and
#: 189/241 of 004 Table 5, rho* = 2.56 x 104/4099 x 215/241 = 0.057945 together. Diagnostic only — the paper's
#: accounting rule (§8.1, §8.2.5) includes them, and so does every rho this module reports.
PAPER_GAP_CANDIDATE: tuple[tuple[str, str], ...] = (
    ("VOTINGAGE x HISPANIC x CENRACE", "US"),
    ("HHGQ x VOTINGAGE x HISPANIC x CENRACE", "US"),
)


# ---------------------------------------------------------------------------------------------------- scenarios
@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """Which queries a neighbour pair of a scenario changes (004 §8.2).

    Attributes:
        name: ``"ALL"``, ``"A"`` … ``"H"``, or ``"custom"``.
        description: what the target protects.
        geo_levels: every query (person and housing) at these levels is affected.
        attributes: every person query crossing one of these attributes is affected, at every level.
        paper_rho: the paper's printed ``rho`` (decimal string, as printed), or ``None``.
        paper_powers: the paper's printed Gaussian powers at :data:`PAPER_LEVELS`, or ``None``.
        reference: where in 004 the scenario is stated.
    """

    name: str
    description: str
    geo_levels: frozenset[str] = frozenset()
    attributes: frozenset[str] = frozenset()
    paper_rho: str | None = None
    paper_powers: tuple[str, ...] | None = None
    reference: str = ""

    def __post_init__(self) -> None:
        levels = frozenset(self.geo_levels)
        bad = sorted(levels - set(GEO_LEVELS))
        if bad:
            raise ParameterError(f"geo_levels must be among {list(GEO_LEVELS)}; got {bad!r}")
        attrs = frozenset(self.attributes)
        bad = sorted(attrs - set(ATTRIBUTES))
        if bad:
            raise ParameterError(f"attributes must be among {list(ATTRIBUTES)}; got {bad!r}")
        if not levels and not attrs:
            raise ParameterError("a scenario needs at least one of geo_levels or attributes; got neither")
        object.__setattr__(self, "geo_levels", levels)
        object.__setattr__(self, "attributes", attrs)
        if self.paper_powers is not None and len(self.paper_powers) != len(PAPER_LEVELS):
            raise ParameterError(f"paper_powers must have {len(PAPER_LEVELS)} entries; got {self.paper_powers!r}")

    def affected(self, allocation: Allocation = PRODUCTION_2020) -> tuple[QueryRho, ...]:
        """The measured (``rho* > 0``) queries whose answers the scenario's neighbour pairs change."""
        if not isinstance(allocation, Allocation):
            raise ParameterError(f"allocation must be an Allocation; got {type(allocation).__name__}")
        return tuple(m for m in allocation.measurements()
                     if m.measured and (m.level in self.geo_levels or m.query.involves(self.attributes)))

    def rho(self, allocation: Allocation = PRODUCTION_2020) -> Fraction:
        """Exact scenario ``rho``: the sum of ``rho*`` over :meth:`affected` (zCDP composition, 004 §8.2)."""
        return sum((m.rho_star for m in self.affected(allocation)), Fraction(0))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"name": self.name, "description": self.description,
                "geo_levels": [lv for lv in GEO_LEVELS if lv in self.geo_levels],
                "attributes": sorted(self.attributes), "paper_rho": self.paper_rho,
                "paper_powers": list(self.paper_powers) if self.paper_powers else None,
                "reference": self.reference}


_ALL = frozenset(GEO_LEVELS)
_BELOW_CBG = frozenset({"BLOCK"})
_BELOW_TRACT = frozenset({"CBG", "BLOCK"})

#: The paper's scenarios. "ALL" is the whole production budget (Table 2); A–H are 004 §8.2.1–8.2.8.
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(name="ALL", description="any change of the record: every query at every level (total budget)",
                 geo_levels=_ALL, paper_rho="2.63", paper_powers=("0.49", "0.74", "0.84"),
                 reference="004 §6.3 Table 2, §8.1"),
        Scenario(name="A", description="block within custom block group: block-level person and housing queries",
                 geo_levels=_BELOW_CBG, paper_rho="0.1115", paper_powers=("0.03", "0.12", "0.21"),
                 reference="004 §8.2.1, Table 6"),
        Scenario(name="B", description="block within tract: custom-block-group- and block-level queries",
                 geo_levels=_BELOW_TRACT, paper_rho="0.926", paper_powers=("0.17", "0.39", "0.53"),
                 reference="004 §8.2.2"),
        Scenario(name="C", description="race only: person queries involving CENRACE at every level",
                 attributes=frozenset({"CENRACE"}), paper_rho="0.952", paper_powers=("0.17", "0.40", "0.54"),
                 reference="004 §8.2.3"),
        Scenario(name="D", description="ethnicity only: person queries involving HISPANIC at every level",
                 attributes=frozenset({"HISPANIC"}), paper_rho="0.945", paper_powers=("0.17", "0.39", "0.54"),
                 reference="004 §8.2.4"),
        Scenario(name="E", description="race and block within tract: all CBG- and block-level queries plus "
                                       "race queries at tract, county, state and US",
                 geo_levels=_BELOW_TRACT, attributes=frozenset({"CENRACE"}), paper_rho="1.32",
                 paper_powers=("0.24", "0.49", "0.63"), reference="004 §8.2.5"),
        Scenario(name="F", description="voting age and block within block group: block-level queries plus "
                                       "VOTINGAGE queries at every level",
                 geo_levels=_BELOW_CBG, attributes=frozenset({"VOTINGAGE"}), paper_rho="0.555",
                 paper_powers=("0.10", "0.28", "0.41"), reference="004 §8.2.6"),
        Scenario(name="G", description="voting age, race and block within block group",
                 geo_levels=_BELOW_CBG, attributes=frozenset({"VOTINGAGE", "CENRACE"}), paper_rho="0.969",
                 reference="004 §8.2.7 (powers not printed: 'very similar to Scenario C')"),
        Scenario(name="H", description="voting age, ethnicity and block within block group",
                 geo_levels=_BELOW_CBG, attributes=frozenset({"VOTINGAGE", "HISPANIC"}), paper_rho="0.968",
                 reference="004 §8.2.8 (powers not printed: 'very similar to Scenario C')"),
    )
}


def paper_gap_candidate_rho(scenario: Scenario | str, allocation: Allocation = PRODUCTION_2020) -> Fraction:
    """The scenario's ``rho`` with :data:`PAPER_GAP_CANDIDATE` left out — for comparison with the paper only.

    This is **not** a privacy guarantee: it understates the scenario's ``rho`` (the left-out queries do change
    under the scenario's neighbours, 004 §8.1 and §8.2.5). It shows how close the paper's printed value comes to
    the exact sum minus the candidate.

    Examples:
        >>> f"{float(paper_gap_candidate_rho('C')):.4f}", get_scenario("C").paper_rho   # 004 §8.2.3
        ('0.9523', '0.952')
    """
    sc = get_scenario(scenario) if isinstance(scenario, str) else scenario
    if not isinstance(sc, Scenario):
        raise ParameterError(f"scenario must be a Scenario or a name; got {type(scenario).__name__}")
    drop = set(PAPER_GAP_CANDIDATE)
    return sum((m.rho_star for m in sc.affected(allocation) if (m.query.name, m.level) not in drop), Fraction(0))


def get_scenario(name: str) -> Scenario:
    """The named paper scenario (case-insensitive).

    Raises:
        ParameterError: unknown name (the message lists the valid ones).
    """
    if isinstance(name, str) and name.upper() in SCENARIOS:
        return SCENARIOS[name.upper()]
    raise ParameterError(f"scenario must be one of {', '.join(SCENARIOS)}; got {name!r}")


def custom_scenario(geo_levels: Iterable[str] = (), attributes: Iterable[str] = ()) -> Scenario:
    """A user-defined scenario (004 §8.3: "selecting the set of queries that may be potentially revealing").

    Args:
        geo_levels: levels whose every query is affected (names from ``GEO_LEVELS``, case-insensitive).
        attributes: attributes whose person queries are affected at every level (from ``ATTRIBUTES``).
    """
    if isinstance(geo_levels, str) or isinstance(attributes, str):
        raise ParameterError("geo_levels and attributes must be sequences of names, not a single string")
    levels = frozenset(str(x).upper() for x in geo_levels)
    attrs = frozenset(str(x).upper() for x in attributes)
    desc = "custom: " + ", ".join([f"all queries at {'/'.join(lv for lv in GEO_LEVELS if lv in levels)}"] * bool(
        levels) + [f"queries involving {'/'.join(sorted(attrs))}"] * bool(attrs))
    return Scenario(name="custom", description=desc, geo_levels=levels, attributes=attrs)


# ---------------------------------------------------------------------------------------------------- power
def _levels_array(level: ArrayLike, *, closed: bool) -> np.ndarray:
    x = np.asarray(level, dtype=np.float64)
    ok = (x >= 0) & (x <= 1) if closed else (x > 0) & (x < 1)
    if x.size == 0 or np.any(np.isnan(x)) or not np.all(ok):
        rng = "[0, 1]" if closed else "(0, 1)"
        raise ParameterError(f"level must be in {rng}; got {level!r}")
    return x


def _out(x: np.ndarray) -> Any:
    return float(x) if x.ndim == 0 else x


def gaussian_power(rho: float | Fraction, level: ArrayLike) -> Any:
    """Power of the best level-``l`` test against the ``rho``-zCDP Gaussian mechanism: ``Phi(sqrt(2 rho) + Phi^{-1}(l))``.

    Exact for the continuous Gaussian proxy (004 §8.3; digest §1.9); via
    :meth:`sufficientdp.accounting.GaussianPLD.power`.

    Examples:
        >>> round(gaussian_power(2.63, 0.01), 2)   # 004 Table 2, "Power (Gaussian)"
        0.49
    """
    r = check_positive_finite("rho", float(rho) if isinstance(rho, Fraction) else rho)
    x = _levels_array(level, closed=True)
    return _out(np.asarray(GaussianPLD.from_rho(r).power(x), dtype=np.float64))


# ---------------------------------------------------------------------------------------------------- DGM
def _discrete_gaussian_difference(sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    """Support and CDF of ``Z_a - Z_b`` for two independent discrete Gaussians with parameter ``sigma2``.

    The discrete Gaussian ``f(k) ∝ exp(-k^2/(2 sigma2))`` (004 §8.1) is truncated at ``|k| <= ceil(13 sigma)+2``;
    the neglected mass is below ``exp(-84)``, far below Monte-Carlo resolution.
    """
    kmax = math.ceil(13.0 * math.sqrt(sigma2)) + 2
    k = np.arange(-kmax, kmax + 1, dtype=np.float64)
    w = np.exp(-(k**2) / (2.0 * sigma2))
    w /= w.sum()
    d = np.convolve(w, w)
    cdf = np.cumsum(d)
    cdf /= cdf[-1]
    return np.arange(-2 * kmax, 2 * kmax + 1, dtype=np.float64), cdf


@renamed_fields({"confidence": "confidence_level"})
@dataclass(frozen=True, slots=True, kw_only=True)
class DgmPower:
    """Monte-Carlo power of the likelihood-ratio test on the discrete-Gaussian measurements (an **estimate**).

    ``lower``/``upper`` hold simultaneously for all levels with probability ``>= confidence_level`` (one DKW band,
    Massart's constant, on the sampled log-likelihood ratio; the level-``l`` Neyman–Pearson power is bracketed
    by the empirical CDFs shifted by the band half-width).
    """

    level: float
    estimate: float
    lower: float
    upper: float
    samples: int
    confidence_level: float
    kind: Kind = Kind.ESTIMATE

    def __post_init__(self) -> None:
        if self.kind != Kind.ESTIMATE:
            raise ParameterError(f"kind must be {Kind.ESTIMATE.value!r}; got {self.kind!r}")
        object.__setattr__(self, "kind", Kind.ESTIMATE)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"level": self.level, "estimate": self.estimate, "lower": self.lower, "upper": self.upper,
                "samples": self.samples, "confidence": self.confidence_level,
                "kind": str(self.kind)}


def dgm_power(rhos: Sequence[float | Fraction], level: ArrayLike, *, rng: np.random.Generator,
              samples: int = 200_000, confidence_level: float | None = None,
              confidence: float | None = None) -> tuple[DgmPower, ...]:
    """Estimate the level/power trade-off of the LRT on discrete-Gaussian noisy queries (004 §6.3, Table 2 "DGM").

    Model (digest §3.3): the neighbours differ in every listed query by moving one record between two cells, each
    cell noised by a discrete Gaussian with ``sigma^2 = 1/rho*``. With ``D = Z_a - Z_b`` the log-likelihood ratio
    ``log p0/p1`` is ``S = sum_q (D_q + 1) rho*_q`` under H0 and ``sum_q (D_q - 1) rho*_q`` under H1, which has
    the law of ``-S`` (``D`` is symmetric). One sample of ``S`` therefore gives both empirical CDFs; the test
    rejects H0 for small ``S``.

    Args:
        rhos: ``rho*`` of each affected query (> 0; zero entries are not allowed — drop unmeasured queries).
        level: significance level(s) in (0, 1).
        rng: seeded generator (required: results are reproducible).
        samples: Monte-Carlo sample size (>= 1000).
        confidence_level: coverage of the simultaneous interval, in (0, 1); default 0.999.
        confidence: the former name of ``confidence_level`` (deprecated).

    Returns:
        One :class:`DgmPower` per level.
    """
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    n = check_int("samples", samples, minimum=1000)
    conf = check_open_interval("confidence_level", renamed("confidence_level", confidence_level, "confidence",
                                                           confidence, default=0.999), 0.0, 1.0)
    if isinstance(rhos, (str, bytes)) or not isinstance(rhos, Sequence) or len(rhos) == 0:
        raise ParameterError(f"rhos must be a non-empty sequence of positive numbers; got {rhos!r}")
    rvals = [check_positive_finite("rhos[i]", float(r) if isinstance(r, Fraction) else r) for r in rhos]
    x = _levels_array(level, closed=False).ravel()
    s = np.zeros(n)
    cache: dict[float, tuple[np.ndarray, np.ndarray]] = {}
    for r in rvals:
        if r not in cache:
            cache[r] = _discrete_gaussian_difference(1.0 / r)
        support, cdf = cache[r]
        idx = np.searchsorted(cdf, rng.random(n), side="right")
        s += (support[np.minimum(idx, support.size - 1)] + 1.0) * r
    s.sort()
    eps = math.sqrt(math.log(2.0 / (1.0 - conf)) / (2.0 * n))

    def g_le(t: float) -> float:  # empirical P1(S1 <= t) = #{S >= -t}/n
        return float(n - np.searchsorted(s, -t, side="left")) / n

    def g_lt(t: float) -> float:  # empirical P1(S1 < t) = #{S > -t}/n
        return float(n - np.searchsorted(s, -t, side="right")) / n

    out = []
    for lv in x:
        lv = float(lv)
        k = max(math.ceil(lv * n), 1)
        t = float(s[k - 1])
        below = float(np.searchsorted(s, t, side="left")) / n
        at = float(np.searchsorted(s, t, side="right")) / n
        frac = (lv - below) / (at - below) if at > below else 0.0
        est = g_lt(t) + frac * (g_le(t) - g_lt(t))
        ku = math.ceil((lv + eps) * n)
        upper = 1.0 if ku > n else min(1.0, g_le(float(s[ku - 1])) + eps)
        kl = math.ceil((lv - eps) * n) - 1
        lower = max(lv, g_lt(float(s[kl])) - eps) if kl >= 0 and lv - eps > 0 else lv
        out.append(DgmPower(level=lv, estimate=est, lower=min(lower, upper), upper=upper, samples=n,
                            confidence_level=conf))
    return tuple(out)


# ---------------------------------------------------------------------------------------------------- posterior
@dataclass(frozen=True, slots=True, kw_only=True)
class PosteriorRow:
    """``epsilon`` such that the posterior-to-posterior ratio exceeds ``e^epsilon`` with probability <= ``delta``.

    Attributes:
        delta: the probability.
        gaussian_fdp: Gaussian-proxy f-DP / pbdp curve ``log(delta / Phi(Phi^{-1}(delta) - sqrt(2 rho)))``
            (004 §7.4 Theorem 3, §8.3); exact for the continuous Gaussian, not a guarantee for the DGM.
        zcdp_rest_known: bound for any ``rho``-zCDP mechanism when the attacker knows everyone else
            (004 Theorem "7.4.1"): ``min_{alpha >= 1} log(1/delta)/alpha + (alpha - 1) rho``
            (``= 2 sqrt(rho log(1/delta)) - rho`` when ``log(1/delta) > rho``, else ``log(1/delta)``).
        zcdp_arbitrary_prior: bound for any prior (004 Theorem "7.4.2"): ``rho + 2 sqrt(rho log(1/delta))``.
    """

    delta: float
    gaussian_fdp: float
    zcdp_rest_known: float
    zcdp_arbitrary_prior: float
    kinds: tuple[tuple[str, str], ...] = (("gaussian_fdp", "exact"), ("zcdp_rest_known", "bound"),
                                          ("zcdp_arbitrary_prior", "bound"))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"delta": self.delta, "gaussian_fdp": self.gaussian_fdp, "zcdp_rest_known": self.zcdp_rest_known,
                "zcdp_arbitrary_prior": self.zcdp_arbitrary_prior, "kinds": dict(self.kinds)}


def posterior_bounds(rho: float | Fraction, deltas: ArrayLike) -> tuple[PosteriorRow, ...]:
    """Bayesian semantics at each ``delta`` in (0, 1) for a ``rho``-zCDP release (see :class:`PosteriorRow`).

    Bounds are rounded up by one ulp. Example:
        >>> row = posterior_bounds(2.63, [0.05])[0]
        >>> round(row.zcdp_arbitrary_prior, 6)   # 2.63 + 2 sqrt(2.63 log 20)
        8.243831
    """
    r = check_positive_finite("rho", float(rho) if isinstance(rho, Fraction) else rho)
    d = np.atleast_1d(np.asarray(deltas, dtype=np.float64))
    if d.size == 0 or d.ndim != 1 or np.any(np.isnan(d)) or np.any(d <= 0) or np.any(d >= 1):
        raise ParameterError(f"deltas must be a non-empty 1-D sequence in (0, 1); got {deltas!r}")
    mu = math.sqrt(2.0 * r)
    rows = []
    for dv in d:
        dv = float(dv)
        lg = -math.log(dv)
        fdp = math.log(dv) - float(log_ndtr(ndtri(dv) - mu))
        rest = 2.0 * math.sqrt(r * lg) - r if lg > r else lg
        arb = float(zcdp_to_approx_dp(r, dv, method="bun-steinke"))  # Thm 7.4.2 is a tail statement: not CKS
        rows.append(PosteriorRow(delta=dv, gaussian_fdp=fdp, zcdp_rest_known=math.nextafter(rest, math.inf),
                                 zcdp_arbitrary_prior=math.nextafter(arb, math.inf)))
    return tuple(rows)


# ---------------------------------------------------------------------------------------------------- report
@dataclass(frozen=True, slots=True, kw_only=True)
class PowerRow:
    """Power at one significance level: Gaussian proxy (exact), zCDP bound (bound), DGM (estimate, optional)."""

    level: float
    gaussian: float
    zcdp_bound: float
    dgm: DgmPower | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"level": self.level, "gaussian": self.gaussian, "gaussian_kind": "exact",
                "zcdp_bound": self.zcdp_bound, "zcdp_bound_kind": "bound",
                "dgm": None if self.dgm is None else self.dgm.to_dict()}


def _round_decimal(value: Fraction | float, like: str) -> str:
    places = len(like.split(".")[1]) if "." in like else 0
    if isinstance(value, Fraction):
        dec = Decimal(value.numerator) / Decimal(value.denominator)
    else:
        dec = Decimal(repr(float(value)))
    return str(dec.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN))


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioReport:
    """A scenario's ``rho`` (exact, from the allocation) and its semantics. See :func:`analyze_scenario`."""

    scenario: Scenario
    rho_exact: Fraction
    queries: tuple[QueryRho, ...]
    powers: tuple[PowerRow, ...]
    posterior: tuple[PosteriorRow, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def rho(self) -> float:
        """Scenario ``rho`` as a float."""
        return float(self.rho_exact)

    @property
    def matches_paper_rho(self) -> bool | None:
        """Whether the exact ``rho`` rounds to the paper's printed value (``None`` if nothing is printed)."""
        if self.scenario.paper_rho is None:
            return None
        return _round_decimal(self.rho_exact, self.scenario.paper_rho) == self.scenario.paper_rho

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "scenario": self.scenario.to_dict(),
            "rho": self.rho,
            "rho_exact": str(self.rho_exact),
            "rho_kind": "exact",
            "matches_paper_rho": self.matches_paper_rho,
            "queries": [m.to_dict() for m in self.queries],
            "powers": [p.to_dict() for p in self.powers],
            "posterior": [p.to_dict() for p in self.posterior],
            "notes": list(self.notes),
        }


def analyze_scenario(scenario: Scenario | str, levels: ArrayLike = PAPER_LEVELS, *,
                     allocation: Allocation = PRODUCTION_2020, deltas: ArrayLike = (1e-1, 1e-2, 1e-3, 1e-6),
                     dgm_samples: int = 0, rng: np.random.Generator | None = None) -> ScenarioReport:
    """``rho`` of a scenario and its power / posterior tables (004 §8.2–8.3).

    Args:
        scenario: a :class:`Scenario` or the name of one of :data:`SCENARIOS`.
        levels: significance levels in (0, 1).
        allocation: the budget allocation (default: 2020 production settings).
        deltas: probabilities for the posterior table, in (0, 1).
        dgm_samples: Monte-Carlo samples for the discrete-Gaussian column (0 = skip it).
        rng: seeded generator, required when ``dgm_samples > 0``.

    Examples:
        >>> rep = analyze_scenario("A")
        >>> f"{rep.rho:.4f}", [round(p.gaussian, 2) for p in rep.powers]   # 004 Table 6
        ('0.1115', [0.03, 0.12, 0.21])
    """
    sc = get_scenario(scenario) if isinstance(scenario, str) else scenario
    if not isinstance(sc, Scenario):
        raise ParameterError(f"scenario must be a Scenario or a name; got {type(scenario).__name__}")
    x = _levels_array(levels, closed=False).ravel()
    queries = sc.affected(allocation)
    rho = sum((m.rho_star for m in queries), Fraction(0))
    if rho <= 0:
        raise ParameterError(f"scenario {sc.name!r} affects no measured query (rho = 0)")
    dgm: tuple[DgmPower | None, ...] = (None,) * x.size
    if dgm_samples:
        if rng is None:
            raise ParameterError("rng must be a seeded numpy.random.Generator when dgm_samples > 0; got None")
        dgm = dgm_power([m.rho_star for m in queries], x, rng=rng, samples=dgm_samples)
    gauss = np.atleast_1d(gaussian_power(rho, x))
    bound = np.atleast_1d(zcdp_power_bound(x, float(rho)))
    powers = tuple(PowerRow(level=float(lv), gaussian=float(g), zcdp_bound=float(b), dgm=dm)
                   for lv, g, b, dm in zip(x, gauss, bound, dgm, strict=True))
    notes = ["gaussian: exact power of the continuous-Gaussian proxy (sigma^2 = 1/(2 rho)), not a guarantee for "
             "the discrete Gaussian used by TopDown; zcdp_bound: rigorous upper bound for any rho-zCDP mechanism "
             "(004 Theorem 6.3)"]
    if sc.paper_rho is not None and _round_decimal(rho, sc.paper_rho) != sc.paper_rho:
        drop = set(PAPER_GAP_CANDIDATE)
        cand_q = [m for m in queries if (m.query.name, m.level) in drop]
        cand = sum((m.rho_star for m in cand_q), Fraction(0))
        gap = _round_decimal(rho - Fraction(sc.paper_rho), "0.0000")
        note = (f"the paper prints rho = {sc.paper_rho} for scenario {sc.name}; the exact sum over the printed "
                f"Tables 3-5 is {_round_decimal(rho, '0.0000')} (gap {gap}; census-semantics-digest.md §5.2, "
                "[INCONSISTENT])")
        if cand_q:
            rest = rho - cand
            fits = _round_decimal(rest, sc.paper_rho) == sc.paper_rho
            note += ("; candidate explanation: the paper left out the US-level "
                     + " and ".join(f"{m.query.name} (rho* {_round_decimal(m.rho_star, '0.000000')})" for m in cand_q)
                     + f", together {_round_decimal(cand, '0.000000')}; without them rho = "
                     f"{_round_decimal(rest, '0.0000')}, which "
                     + ("rounds to the printed value" if fits else "still does not round to the printed value")
                     + "; 004 §8.1 and §8.2.5 count national-level queries, so they are kept")
        notes.append(note + "; the larger, exact value is used (never understate risk)")
    return ScenarioReport(scenario=sc, rho_exact=rho, queries=queries, powers=powers,
                          posterior=posterior_bounds(rho, deltas), notes=tuple(notes))
