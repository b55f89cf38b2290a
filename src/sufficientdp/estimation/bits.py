"""Per-bit unbiased count estimates with standard errors and confidence intervals (seed 001 §4, §6).

With N people, k reports each and flip probability q (p = 1 - q), the number M_j of reports with bit j set has
``E M_j = k (p d_j + q (N - d_j))``, so ``d_hat_j = (M_j / k - q N) / (p - q)`` is unbiased for the number d_j of
people whose bit j is 1.

Standard error. Every report bit is Bernoulli(p) or Bernoulli(q) and both have variance ``p q``, so
``Var M_j = k N p q`` whatever d_j is, and ``sd(d_hat_j) = sqrt(N p q / k) / (p - q)`` exactly. This is the
expression seed 001 gives (§4, §6); it is the exact value, not only a worst case. ``std_error="plugin"``
instead uses the empirical report rate ``r = M_j/(kN)``: ``sqrt(k N r (1-r)) / (k (p - q))``, which is never smaller
(``r (1-r) >= p q`` for r in [q, p]), as a check that does not rely on the model.

Confidence intervals are normal (``estimate ± z * std_error``), then intersected with [0, N] where the truth lies,
then widened to hold the estimate itself where the unbiased estimate lies outside [0, N] (negative, or above N).
Intersecting never drops the truth and widening only adds points, so coverage is kept; and a negative estimate is
never hidden behind a clipped [0, 0]: ``lower``/``upper``, :meth:`BitEstimates.interval`, ``to_records`` and
``to_dict`` give one and the same interval (issue 11). A bit whose whole normal interval falls outside [0, N] is
also flagged (``outside``, ``warnings``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._errors import DataError, ParameterError
from .._frozen import readonly
from .._numerics.stats import normal_quantile
from .._validation import check_confidence_level, check_int, check_open_interval, check_reports, renamed_fields
from ..aggregation.tally import Tally
from ..loss.result import Interval, Kind

__all__ = ["STD_ERROR_METHODS", "BitEstimates", "estimate_bits"]

STD_ERROR_METHODS = ("exact", "plugin")


@renamed_fields({"level": "confidence_level"})
@dataclass(frozen=True, slots=True, kw_only=True)
class BitEstimates:
    """Estimated number of people with each bit set.

    Attributes:
        estimate: unbiased estimates d_hat_j (float array, may be negative or exceed N).
        lower, upper: confidence interval at ``confidence_level``: the normal interval ``estimate ± z std_error`` intersected
            with [0, N], then widened to contain ``estimate``. So ``lower < 0`` exactly where the estimate is
            negative (then ``lower == estimate``), ``upper > N`` exactly where it exceeds N; otherwise the interval
            lies in [0, N]. :meth:`interval`, :meth:`to_records` and :meth:`to_dict` report these same ends.
        std_error: standard error of each estimate.
        population: N (people), reports: k, q: flip probability used, confidence_level: of the intervals (as
        scipy names it; ``level``, its former name, still reads with a DeprecationWarning),
        std_error_method: ``"exact"`` or ``"plugin"``; counts: the observed M_j.
        outside: bool array, True where the whole unclipped interval ``estimate ± z std_error`` lies outside
            [0, N]. The clipped interval is still a valid confidence interval, but such a bit is a sign the
            reports do not fit (q, k): a wrong ``reports`` or ``q``, or a rare draw (probability <= (1-confidence_level)/2).

    ``to_dict`` keeps the key ``"level"`` for the confidence level (the CLI's ``--json`` format is unchanged).

    Every array is a read-only copy (results are immutable). :meth:`interval` gives bit j as an
    :class:`~sufficientdp.loss.result.Interval`, :attr:`intervals` every bit.
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    std_error: np.ndarray
    counts: np.ndarray
    population: int
    reports: int
    q: float
    confidence_level: float
    std_error_method: str
    outside: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("estimate", "lower", "upper", "std_error"):
            object.__setattr__(self, name, readonly(getattr(self, name), np.float64))
        # one interval everywhere (issue 11): the ends are widened to hold the estimate (a NaN end stays NaN)
        est, lo, hi = self.estimate, self.lower, self.upper
        object.__setattr__(self, "lower", readonly(np.where(lo > est, est, lo), np.float64))
        object.__setattr__(self, "upper", readonly(np.where(hi < est, est, hi), np.float64))
        object.__setattr__(self, "counts", readonly(self.counts, np.int64))
        if self.outside is None:
            z = normal_quantile(0.5 + self.confidence_level / 2.0)
            out = (self.estimate + z * self.std_error < 0.0) | (self.estimate - z * self.std_error > self.population)
        else:
            out = self.outside
        object.__setattr__(self, "outside", readonly(out, bool))

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line per bit whose whole interval lies outside [0, N] (see ``outside``)."""
        assert self.outside is not None
        return tuple(
            f"bit {j}: estimate {self.estimate[j]:.6g} with its whole {self.confidence_level:g} interval outside "
            f"[0, {self.population}]; check q = {self.q:g} and reports = {self.reports} are what the reports were "
            "randomized with" for j in np.flatnonzero(self.outside))

    @property
    def bits(self) -> int:
        """Number of bits L."""
        return int(self.estimate.shape[0])

    def interval(self, j: int) -> Interval:
        """Bit ``j``'s estimate with its confidence interval, an :class:`~sufficientdp.loss.result.Interval`.

        ``Interval(lower[j], estimate[j], upper[j], confidence_level=confidence_level, kind="estimate")``: the same ends as
        ``lower``/``upper`` and :meth:`to_records` (a negative estimate -300 gives ``Interval(-300, -300, 0)`` here
        and ``lower = -300``, ``upper = 0`` there; never a clipped [0, 0] that hides it).
        """
        j = check_int("j", j, minimum=0, maximum=self.bits - 1)
        return _interval(float(self.lower[j]), float(self.estimate[j]), float(self.upper[j]),
                         self.confidence_level)

    @property
    def intervals(self) -> tuple[Interval, ...]:
        """:meth:`interval` of every bit, bit 0 first."""
        return tuple(self.interval(j) for j in range(self.bits))

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per bit: ``bit``, ``count``, ``estimate``, ``lower``, ``upper``, ``std_error``, ``outside``.

        ``lower``/``upper`` are the attributes' ends (widened to hold a negative or above-N estimate, see the class),
        the same as :meth:`interval`; ``outside`` flags a bit whose whole normal interval lies outside [0, N].
        """
        return [
            {
                "bit": j,
                "count": int(self.counts[j]),
                "estimate": float(self.estimate[j]),
                "lower": float(self.lower[j]),
                "upper": float(self.upper[j]),
                "std_error": float(self.std_error[j]),
                "outside": bool(self.outside[j]) if self.outside is not None else False,
            }
            for j in range(self.bits)
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with ``estimates`` (a list, one entry per bit) and the settings."""
        return {
            "population": self.population,
            "reports": self.reports,
            "q": self.q,
            "level": self.confidence_level,
            "std_error_method": self.std_error_method,
            "estimates": self.to_records(),
            "warnings": list(self.warnings),
        }

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` indexed by bit."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover
            raise ImportError("to_pandas() needs pandas: pip install 'sufficientdp[pandas]'") from exc
        return pd.DataFrame.from_records(self.to_records(), index="bit")


def _interval(lower: float, estimate: float, upper: float, level: float) -> Interval:
    """A confidence interval as an Interval; a NaN end is unknown (None); the ends widen to hold the estimate."""
    lo = None if math.isnan(lower) else min(lower, estimate)
    hi = None if math.isnan(upper) else max(upper, estimate)
    return Interval(lo, estimate, hi, confidence_level=level, kind=Kind.ESTIMATE)


def estimate_bits(
    data: Tally | ArrayLike,
    *,
    q: float,
    reports: int = 1,
    population: int | None = None,
    confidence_level: float | None = None,
    std_error: str = "exact",
    level: float | None = None,
) -> BitEstimates:
    """Unbiased per-bit counts ``d_hat_j = (M_j/k - q N)/(p - q)`` with standard errors and CIs.

    Args:
        data: a :class:`~sufficientdp.Tally`, or per-bit counts M_j (then ``population`` is required).
        q: the flip probability that was used, in (0, 0.5) (use the randomizer's effective dyadic value).
        reports: k, reports per person.
        population: N; by default the tally's report count divided by k.
        confidence_level: of the intervals, in (0, 1); default 0.95 (the result's ``confidence_level``).
        std_error: ``"exact"`` (sqrt(N p q / k)/(p - q)) or ``"plugin"`` (from the observed rate).
        level: the former name of ``confidence_level`` (deprecated; give one of the two).

    Raises:
        ParameterError: q, reports, confidence_level, population or std_error out of range.
        DataError: counts negative or larger than the number of reports, or reports not divisible by k.

    References:
        seed 001 §4 (estimator and its standard deviation), §6 (k reports).

    Examples:
        >>> est = estimate_bits([300, 700], q=0.25, population=1000)
        >>> est.estimate.tolist()
        [100.0, 900.0]
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    reports = check_reports(reports)
    level = check_confidence_level(confidence_level, level)
    if std_error not in STD_ERROR_METHODS:
        raise ParameterError(f"std_error must be one of {', '.join(STD_ERROR_METHODS)}; got {std_error!r}")
    if isinstance(data, Tally):
        counts = np.asarray(data.bit_counts, dtype=np.int64)
        n_reports = data.reports
        if n_reports % reports:
            raise DataError(f"the tally has {n_reports} reports, not a multiple of reports={reports}")
        pop_from_data = n_reports // reports
        if population is None:
            population = pop_from_data
        else:
            population = check_int("population", population, minimum=1)
            if population != pop_from_data:
                raise DataError(f"population={population} but the tally holds {n_reports} reports "
                                f"= {pop_from_data} people x {reports}")
    else:
        try:
            counts = np.asarray(data)
        except (ValueError, TypeError):
            raise DataError("counts must be a non-empty 1-D array of non-negative integers") from None
        if counts.ndim != 1 or counts.size == 0:
            raise DataError(f"counts must be a non-empty 1-D array; got shape {counts.shape}")
        if counts.dtype.kind not in "iuf" or not np.all(np.isfinite(counts)) or np.any(counts != np.round(counts)):
            raise DataError("counts must be non-negative integers")
        if np.any(np.abs(counts) > 2.0**62):  # also very negative ones: -1e300 does not fit an int64
            raise DataError("counts must be non-negative integers below 2**62")
        counts = counts.astype(np.int64)
        if population is None:
            raise ParameterError("population must be given (an integer >= 1) when data are counts; got None")
        population = check_int("population", population, minimum=1)
    if population < 1:
        raise DataError("there are no reports to estimate from (population 0)")
    if np.any(counts < 0) or np.any(counts > population * reports):
        raise DataError(f"counts must be in [0, {population * reports}] (population x reports)")
    p = 1.0 - q
    n = float(population)
    est = (counts / reports - q * n) / (p - q)
    if std_error == "exact":
        se = np.full(counts.shape, math.sqrt(n * p * q / reports) / (p - q))
    else:
        r = counts / (n * reports)
        se = np.sqrt(n * reports * r * (1.0 - r)) / (reports * (p - q))
    z = normal_quantile(0.5 + level / 2.0)
    lower = np.clip(est - z * se, 0.0, n)  # BitEstimates widens these to hold an estimate outside [0, N]
    upper = np.clip(est + z * se, 0.0, n)
    outside = (est + z * se < 0.0) | (est - z * se > n)
    return BitEstimates(estimate=est, lower=lower, upper=upper, std_error=se, counts=counts,
                        population=population, reports=reports, q=q, confidence_level=level,
                        std_error_method=std_error,
                        outside=outside)
