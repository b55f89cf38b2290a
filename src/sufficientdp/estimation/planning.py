"""Accuracy to expect before collecting: the standard error of a per-bit count, the confidence-interval width and
the smallest frequency a release can tell from zero (seed 001 §4; used by the design report).

For a per-bit count of N people, each sending k reports flipped with probability q, the unbiased estimate
``d_hat = (M / k - q N) / (p - q)`` has ``sd(d_hat) = sqrt(N q p / k) / (p - q)`` whatever the true count (each
report bit is Bernoulli with variance ``p q``; :func:`sufficientdp.parameters.sigma_per_sqrt_n`). With the normal
approximation ``z = Phi^-1((1 + level) / 2)``:

* expected interval half-width ``h = z sd(d_hat)`` (people), ``h / N`` as a frequency;
* smallest detectable frequency: the true frequency ``f`` at which a level-``level`` two-sided test of ``f = 0``
  rejects with probability ``power``: ``f N = (z + Phi^-1(power)) sd(d_hat)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from .._numerics.stats import normal_quantile
from .._validation import check_confidence_level, check_int, check_open_interval, renamed_fields
from ..parameters import sigma_per_sqrt_n

__all__ = ["Accuracy", "accuracy"]


@renamed_fields({"level": "confidence_level"})
@dataclass(frozen=True, slots=True, kw_only=True)
class Accuracy:
    """Accuracy of a per-bit count at q (see the module docstring for the formulas).

    Attributes:
        q, population, reports, confidence_level, power: the inputs (``level``, the former name of
            ``confidence_level``, still reads with a DeprecationWarning; ``to_dict`` keeps the key ``"level"``).
        sd_per_sqrt_n: ``sd(d_hat) / sqrt(N)``.
        sd: ``sd(d_hat)``, people.
        half_width: expected half-width of the ``confidence_level`` interval, people (normal approximation).
        half_width_fraction: ``half_width / N``.
        detectable_fraction: smallest true frequency detected with probability ``power`` by a test at
            significance ``1 - confidence_level`` (two-sided) (normal approximation).
    """

    q: float
    population: int
    reports: int
    confidence_level: float
    power: float
    sd_per_sqrt_n: float
    sd: float
    half_width: float
    half_width_fraction: float
    detectable_fraction: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the confidence level under the key ``"level"``, as before)."""
        d = asdict(self)
        d["level"] = d.pop("confidence_level")
        return d


def accuracy(q: float, *, population: int, reports: int = 1, confidence_level: float | None = None,
             power: float = 0.8, level: float | None = None) -> Accuracy:
    """Standard error, interval half-width and smallest detectable frequency of a per-bit count at q.

    Args:
        q: flip probability in (0, 1/2).
        population: N >= 1 people.
        reports: k >= 1 reports per person.
        confidence_level: of the interval, in (0, 1); default 0.95 (the result's ``confidence_level``).
        power: detection probability in (0, 1) for ``detectable_fraction``.
        level: the former name of ``confidence_level`` (deprecated; give one of the two).

    Raises:
        ParameterError: a parameter out of range.

    References:
        seed 001 §4 (sd of the unbiased estimate), §6 (k reports).

    Examples:
        >>> a = accuracy(0.25, population=10_000)
        >>> round(a.sd, 3), round(a.half_width, 2)  # sqrt(10^4 * 3/16) / (1/2) = 86.603; x 1.95996
        (86.603, 169.74)
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    population = check_int("population", population, minimum=1, maximum=10**12)
    reports = check_int("reports", reports, minimum=1, maximum=10**6)
    level = check_confidence_level(confidence_level, level)
    power = check_open_interval("power", power, 0.0, 1.0)
    s = sigma_per_sqrt_n(q, reports)
    sd = s * math.sqrt(population)
    z = normal_quantile(0.5 + 0.5 * level)
    half = z * sd
    detect = (z + normal_quantile(power)) * sd / population
    return Accuracy(q=q, population=population, reports=reports, confidence_level=level, power=power, sd_per_sqrt_n=s, sd=sd,
                    half_width=half, half_width_fraction=half / population, detectable_fraction=detect)
