"""A public sampler of the privacy ratio R(S) and of the privacy loss ln R(S), at any N (issue 12 item 4).

Configuration: the paper's homogeneous one (seed 001 §1.2, eq. 3.4–3.6), with k reports per person (ERRATA 4).
``D`` has every person at the all-zeros vector; in ``D_m`` one person's vector differs from zero in ``j`` bits
(``outlier_bits``, default L). Only those j bits matter: a report with ``l`` of them set carries the per-report
ratio ``w_l = (q/p)**(j - 2l)`` (eq. 3.2), and with ``t_l`` the number of reports with ``l`` set bits

    R(S^k) = e_k(w_1, ..., w_{kN}) / C(kN, k),     for k = 1:  R(S) = (1/N) sum_l t_l w_l   (eq. 3.4).

Under ``S ~ A(D_m)`` the count vector is ``T = MN(kN - k, Bin(j, q)) + MN(k, Bin(j, p))`` (eq. 3.5), so one draw
costs ``O(j k)`` whatever N is: N = 10**7 is as cheap as N = 10. This module is a thin public face of the sampler
that :func:`sufficientdp.ratio.k_reports.k_tail_mc` already uses (the same count draws and the same log-domain
evaluation of ``e_k``); it returns the draws themselves, so that a figure can show the whole distribution with the
threshold ``e**epsilon``, and not only the tail.

``outlier_in=Direction.REVERSE`` (alias ``"original"``) samples the reverse pair (the outlier is in ``D``, ``D_m`` is
homogeneous): then
``T ~ MN(kN, Bin(j, q))`` and the ratio is ``1 / R`` (as in
:func:`sufficientdp.ratio.exact.homogeneous_ratio_distribution`).

What the draws are: a Monte Carlo sample (``kind="estimate"``) of the ratio in the homogeneous configuration
(``scope="homogeneous"``), which is **not** the worst case over all collections (ERRATA 5). A tail read from the
sample (:meth:`RatioSample.tail`) is an estimate with a Clopper-Pearson interval, never a guarantee.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._errors import ParameterError
from .._frozen import readonly
from .._numerics.stats import scipy_stats
from .._validation import check_int, check_open_interval, check_positive_finite, check_rng, renamed
from ..loss.result import Direction, TailResult, check_direction
from ._chernoff import Config, check_config, levels
from .k_reports import (
    _log_r_and_log_mean,
    _sample_counts,
    _tail_from_log_values,
)

__all__ = ["MAX_SAMPLES", "RatioSample", "ThresholdCount", "count_ratio_above", "sample_privacy_ratio"]

#: Largest number of draws one call returns (8 bytes each).
MAX_SAMPLES = 20_000_000
_CHUNK = 250_000  # draws per batch (bounds the temporary count arrays)
_PAIRS = (Direction.FORWARD, Direction.REVERSE)  # the directions of one pair (not BOTH)


@dataclass(frozen=True, slots=True, kw_only=True)
class RatioSample:
    """Independent draws of ``R(S)`` under ``S ~ A(D_m)`` in the homogeneous configuration (an estimate).

    Attributes:
        log_ratios: the draws of the privacy loss ``ln R(S)``, in draw order (read-only float64 array).
        q, bits, population, reports, outlier_bits: the configuration (``outlier_bits`` is j).
        outlier_in: a :class:`~sufficientdp.loss.result.Direction`: ``FORWARD`` (the paper's pair, the outlier in
            ``D_m``) or ``REVERSE`` (the reverse pair); the aliases ``"modified"``/``"original"`` are accepted.
        seed: the int seed given, if any (None for a Generator or no seed).
        kind: always ``"estimate"``; scope: always ``"homogeneous"``; method: always ``"mc"``.
    """

    log_ratios: NDArray[np.float64]
    q: float
    bits: int
    population: int
    reports: int = 1
    outlier_bits: int | None = None
    outlier_in: Direction = Direction.FORWARD
    seed: int | None = None
    kind: str = "estimate"
    scope: str = "homogeneous"
    method: str = "mc"
    _sorted: NDArray[np.float64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "outlier_in", check_direction("outlier_in", self.outlier_in, _PAIRS))
        arr = readonly(np.array(self.log_ratios, dtype=np.float64))
        object.__setattr__(self, "log_ratios", arr)
        object.__setattr__(self, "_sorted", readonly(np.sort(arr)))

    @property
    def samples(self) -> int:
        """Number of draws."""
        return int(self.log_ratios.size)

    @property
    def privacy_loss(self) -> NDArray[np.float64]:
        """The draws of the privacy loss ``ln R(S)`` (the same array as ``log_ratios``)."""
        return self.log_ratios

    @property
    def ratios(self) -> NDArray[np.float64]:
        """The draws of ``R(S)`` (a new array; ``inf`` where ``ln R > 709``)."""
        with np.errstate(over="ignore"):
            return np.exp(self.log_ratios)

    def fraction_above(self, epsilon: float) -> float:
        """Fraction of draws with ``ln R > epsilon`` (the point estimate of ``eta(epsilon)``)."""
        eps = float(epsilon)
        above = self._sorted.size - int(np.searchsorted(self._sorted, eps, side="right"))
        return above / self._sorted.size

    def quantile(self, level: float) -> float:
        """Empirical quantile of ``ln R`` at ``level`` in [0, 1]."""
        if isinstance(level, bool) or not 0.0 <= float(level) <= 1.0:
            raise ParameterError(f"level must be a number in [0, 1]; got {level!r}")
        return float(np.quantile(self._sorted, float(level)))

    def tail(self, epsilon: float, *, confidence_level: float | None = None,
             confidence: float | None = None) -> TailResult:
        """``eta = P[R > e**epsilon]`` estimated from the draws, with a Clopper-Pearson interval and the
        approximate-DP ``delta(epsilon)`` (normal interval): a :class:`TailResult` with ``kind="estimate"``."""
        confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
        cfg = Config(q=self.q, bits=self.bits, j=int(self.outlier_bits or self.bits), population=self.population,
                     k=self.reports, epsilon=check_positive_finite("epsilon", epsilon))
        confidence = check_open_interval("confidence_level", confidence, 0.0, 1.0)
        return _tail_from_log_values(cfg, self.log_ratios, cfg.epsilon, method="mc", confidence=confidence,
                                     details={"statistic": "R(S^k) = e_k(w)/C(kN,k)", "outlier_in": str(self.outlier_in),
                                              "source": "sample_privacy_ratio", "seed": self.seed},
                                     log_r_for_delta=self.log_ratios)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (not the draws): configuration, kind, scope and a few quantiles of ``ln R``."""
        qs = (0.01, 0.5, 0.99, 0.999)
        return {"q": self.q, "bits": self.bits, "population": self.population, "reports": self.reports,
                "outlier_bits": self.outlier_bits, "outlier_in": str(self.outlier_in), "samples": self.samples,
                "seed": self.seed, "kind": self.kind, "scope": self.scope, "method": self.method,
                "mean_ratio": float(np.mean(self.ratios)),
                "log_ratio_quantiles": {str(x): float(np.quantile(self._sorted, x)) for x in qs}}


def sample_privacy_ratio(*, q: float, bits: int, population: int, samples: int = 100_000, reports: int = 1,
                         outlier_bits: int | None = None, outlier_in: Direction | str = Direction.FORWARD,
                         rng: np.random.Generator | int | None = None) -> RatioSample:
    """Draw ``R(S)`` (and the privacy loss ``ln R(S)``) under ``S ~ A(D_m)``, homogeneous configuration, any N.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 2 people.
        samples: number of draws, 1 to :data:`MAX_SAMPLES`.
        reports: k >= 1 reports per person (the correct U-statistic ratio, ERRATA 4).
        outlier_bits: j in [1, L], the bits in which the outlier differs (default L).
        outlier_in: a :class:`~sufficientdp.loss.result.Direction`: ``FORWARD`` (seed 001's pair, the outlier in
            ``D_m``) or ``REVERSE`` (the reverse pair, ratio ``1/R``); the aliases ``"modified"``/``"original"``
            are accepted.
        rng: a seeded ``numpy.random.Generator`` or an int seed (None: fresh entropy, not reproducible).

    Returns:
        A :class:`RatioSample` (``kind="estimate"``, ``scope="homogeneous"``).

    Raises:
        ParameterError: a parameter out of range.

    References:
        seed 001 eq. (3.2)–(3.6), §3.3 (the distribution figures); ERRATA 4 (k reports), 5 (not the worst case).

    Examples:
        >>> import math
        >>> s = sample_privacy_ratio(q=0.2446, bits=5, population=1000, samples=20_000, rng=1)
        >>> s.kind, s.scope, s.samples
        ('estimate', 'homogeneous', 20000)
        >>> 0.0 < s.fraction_above(math.log(2.0)) < 0.05
        True
    """
    cfg = check_config(q, bits, population, 1.0, outlier_bits, reports, min_population=2)
    samples = check_int("samples", samples, minimum=1, maximum=MAX_SAMPLES)
    outlier_in = check_direction("outlier_in", outlier_in, _PAIRS)
    seed = int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    gen = check_rng(rng)
    out = np.empty(samples, dtype=np.float64)
    for start in range(0, samples, _CHUNK):
        size = min(_CHUNK, samples - start)
        # the reverse pair: T ~ MN(kN, Bin(j, q)), every report from an all-zeros vector
        t = _sample_counts(cfg, size, gen) if outlier_in is Direction.FORWARD else _sample_reverse(cfg, size, gen)
        log_r, _ = _log_r_and_log_mean(cfg, t)
        assert log_r is not None
        out[start:start + size] = log_r if outlier_in is Direction.FORWARD else -log_r
    return RatioSample(log_ratios=out, q=cfg.q, bits=cfg.bits, population=cfg.population, reports=cfg.k,
                       outlier_bits=cfg.j, outlier_in=outlier_in, seed=seed)


def _sample_reverse(cfg: Config, size: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Set-bit counts ``T ~ MN(kN, Bin(j, q))`` (every report from an all-zeros vector)."""
    from scipy.stats import binom

    p0 = binom.pmf(np.arange(cfg.j + 1), cfg.j, cfg.q)
    return np.asarray(rng.multinomial(cfg.n, p0 / p0.sum(), size=size), dtype=np.float64)



@dataclass(frozen=True, slots=True)
class ThresholdCount:
    """Plain Monte Carlo count of ``R(S) >= lambda`` (and of ``R(S) > lambda``) with a 95% Clopper-Pearson interval
    for ``P[R(S) >= lambda]`` (an estimate; :func:`count_ratio_above`).

    Attributes:
        hits: draws with ``R >= lambda``.
        hits_strict: draws with ``R > lambda``.
        samples: number of draws.
        lower, upper: the exact (Clopper-Pearson) 95% interval of ``hits / samples``.
    """

    hits: int
    hits_strict: int
    samples: int
    lower: float
    upper: float

    @property
    def estimate(self) -> float:
        """``hits / samples``."""
        return self.hits / self.samples

    def contains(self, x: float) -> bool:
        """Whether ``x`` lies in ``[lower, upper]``."""
        return self.lower <= x <= self.upper

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``hits``, ``hits_strict``, ``samples``, ``estimate``, ``lower``, ``upper``, ``kind``
        (``"estimate"``; the interval is the 95% Clopper-Pearson one)."""
        return {"hits": self.hits, "hits_strict": self.hits_strict, "samples": self.samples,
                "estimate": self.estimate, "lower": self.lower, "upper": self.upper, "kind": "estimate"}


def count_ratio_above(*, q: float, bits: int, population: int, thresholds: Sequence[float], samples: int,
                      rng: np.random.Generator | int | None, chunk: int | None = None) -> list[ThresholdCount]:
    """Estimate ``P[R(S) >= lambda]`` for each ``lambda`` in ``thresholds`` by plain Monte Carlo of seed 001
    eq. (3.5)-(3.6), homogeneous configuration (``N - 1`` zero vectors, one all-ones outlier, one report each).

    ``T ~ Multinomial(N - 1, Bin(L, q) pmf) + Multinomial(1, Bin(L, p) pmf)`` and
    ``R = (1/N) sum_l T_l w_l`` with ``w_l = (q/p)**(L - 2l)`` (eq. 3.2); every threshold is read from the same
    draws, compared in the linear domain (``N R >= N lambda``). This is the independent plain simulation that
    ``docs/reproduction.md`` sets beside the exact tails (no importance sampling, unlike
    :func:`sufficientdp.ratio.tail.mc_tail`; a different random stream from :func:`sample_privacy_ratio`, which
    draws the outlier's report as a one-trial multinomial). An estimate (``kind="estimate"``), not a bound.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 2.
        thresholds: the values of ``lambda`` (> 0).
        samples: number of draws (>= 1).
        rng: a seeded ``numpy.random.Generator`` or an int seed (None: fresh entropy).
        chunk: draws per batch (default ``max(10_000, 2_000_000 // (L + 1))``; the draws depend on it).

    Returns:
        One :class:`ThresholdCount` per threshold, in order.

    Raises:
        ParameterError: a parameter out of range.

    References:
        ``papers/001_3d8ddaba8b46cf9c.txt`` (seed 001) eq. (3.2), (3.5)-(3.6), §3.3.

    Examples:
        >>> c = count_ratio_above(q=0.1692, bits=5, population=1000, thresholds=[np.exp(2.0)], samples=20_000,
        ...                       rng=np.random.default_rng(1))[0]
        >>> c.lower <= 0.003706 <= c.upper  # the exact tail (docs/reproduction.md)
        True
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=2)
    samples = check_int("samples", samples, minimum=1)
    lams = [check_positive_finite("thresholds", t) for t in thresholds]
    gen = check_rng(rng)
    if chunk is None:
        chunk = max(10_000, 2_000_000 // (bits + 1))
    chunk = check_int("chunk", chunk, minimum=1)
    lvals = np.arange(bits + 1)
    stats = scipy_stats()
    p0 = stats.binom.pmf(lvals, bits, q)
    p0 = p0 / p0.sum()
    p1 = p0[::-1].copy()
    w = np.exp(levels(q, bits)[1])
    cuts = np.asarray(lams, dtype=float) * population
    ge = np.zeros(len(cuts), dtype=np.int64)
    gt = np.zeros(len(cuts), dtype=np.int64)
    done = 0
    while done < samples:
        m = min(chunk, samples - done)
        x = gen.multinomial(population - 1, p0, size=m) @ w
        x += w[gen.choice(bits + 1, size=m, p=p1)]
        for i, c in enumerate(cuts):
            ge[i] += np.count_nonzero(x >= c)
            gt[i] += np.count_nonzero(x > c)
        done += m
    out = []
    for i in range(len(cuts)):
        ci = stats.binomtest(int(ge[i]), samples).proportion_ci(confidence_level=0.95, method="exact")
        out.append(ThresholdCount(int(ge[i]), int(gt[i]), samples, float(ci.low), float(ci.high)))
    return out
