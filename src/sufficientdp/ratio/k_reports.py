"""The privacy ratio of k-randomization, done right (seed 001 §6 and Appendix II, corrected by ERRATA 4).

Seed 001 is ``papers/001_3d8ddaba8b46cf9c.txt``.

Setting: each of N people sends k independent randomized reports of its L-bit vector; all kN reports are
anonymized together. Neighbouring collections (homogeneous configuration): D has every person at the all-zeros
vector; in D_m one person holds a vector that differs from zero in j bits (``outlier_bits``; j = L is the paper's
all-ones outlier). Only the j changed coordinates matter, so the problem is the L = j problem.

A report with l set bits among the j coordinates has the per-report ratio ``w = (q/p)**(j - 2 l)``
(seed 001 eq. 3.2). Under D_m the k outlier reports can be any k-subset of the kN anonymized reports, and each
k-subset can be matched to the k outlier records in k! ways, which cancels the ``(kN)!/(kN-k)!`` of the
denominator up to a factor k!. The correct privacy ratio is therefore the U-statistic (ERRATA 4)::

    R(S^k) = e_k(w_1, ..., w_{kN}) / C(kN, k),

where ``e_k`` is the elementary symmetric polynomial of degree k. The paper's (8.21) is this divided by k!, and
its (6.1)-(6.3) moment "bounds" add variances of overlapping terms as if independent, so they bound nothing.
For k = 1 the formula is R(S) of seed 001 eq. (3.4).

Computation. ``R(S^k)`` depends on S only through the counts ``t_l`` of reports with l set bits (like T of
seed 001 eq. 3.3), and ``e_k(w) = [z^k] prod_l (1 + w_l z)**t_l``. We multiply the L + 1 factors as polynomials
truncated at degree k, in the log domain (coefficient ``log C(t, i) + i log w_l``), so kN = 1e8 costs nothing
more than kN = 100.

Rigorous reduction. Maclaurin's inequality ``(e_k / C(n, k))**(1/k) <= e_1 / n`` gives
``R(S^k) <= (mean w)**k``, so ``P[R(S^k) > e**eps] <= P[mean w > e**(eps/k)]``: a tail of the k = 1 kind (kN reports,
k from the outlier) at the threshold ``lambda**(1/k)``.

The global reduction is loose (it keeps the diagonal terms of the heaviest reports). :func:`k_tail_certified`
enumerates the heavy reports exactly and applies Maclaurin only to the light ones: a rigorous two-sided bracket in
both directions, a few percent wide at L = 5, N = 1000, k = 2 (``docs/proofs/k_reports.md``).

What the numbers are: Monte Carlo tails are *estimates* with a Clopper-Pearson interval (``kind="estimate"``);
Maclaurin Monte Carlo is an estimate of an *upper bound*; :func:`k_tail_certified` is a rigorous bracket
(``kind="bound"``: ``eta`` is an upper bound and ``eta_lower`` a lower bound, up to stated float64 margins); a
calibration from Monte Carlo (:mod:`sufficientdp.calibration.k_reports`) is an estimate, not a proof.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from .._errors import ParameterError
from .._numerics.binomial import log_binom_pmf_all
from .._numerics.compositions import compositions
from .._numerics.logspace import log_comb_large_n, log_falling_factorials, logsumexp
from .._numerics.search import bisect_many
from .._numerics.stats import scipy_stats
from .._validation import MAX_MC_SAMPLES, check_int, check_open_interval, check_rng, renamed
from ..loss.result import Direction, TailResult, check_direction
from ..parameters import sigma_per_sqrt_n
from ._chernoff import Config, check_config

__all__ = [
    "k_maclaurin_bound_tail",
    "k_ratio",
    "k_tail_certified",
    "k_tail_exact_single_bit",
    "k_tail_mc",
    "k_tail_mc_worst_outlier_bits",
    "log_esp_from_counts",
    "log_k_ratio",
    "sigma_per_sqrt_n_k",
]

_NEG_INF = -math.inf


# ---------------------------------------------------------------------------------------------------------------
# log-domain helpers
# ---------------------------------------------------------------------------------------------------------------


def _log_binom_coef(t: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """``log C(t, i)`` for i = 0..k, shape ``t.shape + (k+1,)``; ``-inf`` where i > t.

    Uses the falling factorial ``sum_{r<i} log(t - r) - log(i!)`` so that t ~ 1e8 loses no digits
    (``gammaln(t+1) - gammaln(t-i+1)`` would cancel catastrophically).
    """
    out: NDArray[np.float64] = log_falling_factorials(t, k) - gammaln(np.arange(k + 1) + 1.0)
    return out


def _poly_mul_trunc(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Product of log-coefficient polynomials (rows), truncated at the last degree of ``a``."""
    k = a.shape[-1] - 1
    out = np.empty_like(a)
    for d in range(k + 1):
        out[..., d] = logsumexp(a[..., : d + 1] + b[..., d::-1], axis=-1)
    return out


def log_esp_from_counts(log_weights: ArrayLike, counts: ArrayLike, k: int) -> NDArray[np.float64]:
    """``log e_k`` of the multiset holding ``counts[..., g]`` copies of ``exp(log_weights[g])``.

    ``e_k(w) = [z^k] prod_g (1 + w_g z)**t_g``: the factors are multiplied as polynomials truncated at degree k,
    entirely in the log domain. Vectorized over the leading axes of ``counts`` (e.g. Monte Carlo samples).

    Args:
        log_weights: shape ``(G,)``, the logs of the distinct weights.
        counts: shape ``(..., G)``, non-negative integer multiplicities (float arrays with integral values are fine).
        k: the degree, >= 1.

    Returns:
        ``log e_k`` with shape ``counts.shape[:-1]`` (``-inf`` when fewer than k items).

    References:
        ERRATA 4 (R(S^k) = e_k / C(kN, k)); seed 001 eq. (3.3) (the count vector T).

    Examples:
        >>> import numpy as np
        >>> round(float(np.exp(log_esp_from_counts(np.log([2.0, 3.0]), [2, 1], 2))), 9)  # e_2(2, 2, 3) = 4+6+6
        16.0
    """
    k = check_int("k", k, minimum=1)
    lw = np.asarray(log_weights, dtype=np.float64)
    t = np.asarray(counts, dtype=np.float64)
    if lw.ndim != 1 or t.shape[-1:] != lw.shape:
        raise ParameterError(f"counts must have shape (..., {lw.shape[0] if lw.ndim == 1 else '?'}) matching "
                             f"log_weights; got counts {t.shape}, log_weights {lw.shape}")
    if np.any(t < 0) or np.any(t != np.floor(t)):
        raise ParameterError("counts must be non-negative integers")
    if np.any(np.isnan(lw)) or np.any(lw == math.inf):
        raise ParameterError("log_weights must be finite or -inf (a weight of 0)")
    lead = t.shape[:-1]
    t2 = t.reshape(-1, lw.shape[0])
    if k == 1:
        with np.errstate(divide="ignore"):
            res: NDArray[np.float64] = logsumexp(np.where(t2 > 0, np.log(np.where(t2 > 0, t2, 1.0)) + lw, _NEG_INF),
                                                 axis=-1)
        return res.reshape(lead)
    poly = np.full((t2.shape[0], k + 1), _NEG_INF)
    poly[:, 0] = 0.0
    deg = np.arange(k + 1, dtype=np.float64)
    for g in range(lw.shape[0]):
        tg = t2[:, g]
        if not np.any(tg > 0):
            continue
        if lw[g] == _NEG_INF:  # a zero weight contributes the factor 1
            continue
        factor = _log_binom_coef(tg, k) + deg * lw[g]
        poly = _poly_mul_trunc(poly, factor)
    return np.asarray(poly[:, k].reshape(lead), dtype=np.float64)


def log_k_ratio(weights: ArrayLike, k: int) -> float:
    """``log R(S^k) = log e_k(w) - log C(n, k)`` for the n per-report ratios ``w`` (ERRATA 4).

    Equal weights are grouped (``np.unique``) and multiplied as ``(1 + w z)**t``, so the cost is
    O(#distinct * k**2) whatever n is.

    Args:
        weights: the n >= k positive per-report ratios ``w_i = P(s_i | outlier) / P(s_i | 0)``.
        k: reports per person, 1 <= k <= n.

    Returns:
        ``log R(S^k)``.

    Raises:
        ParameterError: weights not positive and finite, or k out of range.

    References:
        ERRATA 4; seed 001 eq. (8.21) (which lacks the k! matchings); seed 001 eq. (3.4) for k = 1.

    Examples:
        >>> round(math.exp(log_k_ratio([0.5, 2.0, 1.0], 2)), 6)  # (1 + 0.5 + 2) / 3
        1.166667
    """
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ParameterError("weights must be a non-empty array of finite numbers > 0, i.e. in (0, inf)")
    k = check_int("k", k, minimum=1, maximum=int(w.size))
    values, counts = np.unique(w, return_counts=True)
    log_ek = float(log_esp_from_counts(np.log(values), counts.astype(np.float64), k))
    return log_ek - log_comb_large_n(float(w.size), k)


def k_ratio(weights: ArrayLike, k: int) -> float:
    """The k-randomization privacy ratio ``R(S^k) = e_k(w_1..w_{kN}) / C(kN, k)`` (ERRATA 4).

    Args:
        weights: the kN per-report ratios ``w_i = (q/p)**(j - 2 l_i)``.
        k: reports per person.

    Returns:
        ``R(S^k)`` (``inf`` if it overflows a float; use :func:`log_k_ratio` then).

    References:
        ERRATA 4; seed 001 §6, Appendix II eq. (8.20)-(8.21) (corrected).

    Examples:
        >>> round(k_ratio([0.5, 2.0, 1.0, 4.0], 2), 6)  # e_2 = 1+.5+2+2+4+8 = 17.5 over C(4,2) = 6
        2.916667
    """
    lr = log_k_ratio(weights, k)
    return math.exp(lr) if lr < 709.0 else math.inf


# ---------------------------------------------------------------------------------------------------------------
# configuration and sampling
# ---------------------------------------------------------------------------------------------------------------


def _sample_counts(cfg: Config, samples: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Set-bit counts T = MN(kN - k, Bin(j, q)) + MN(k, Bin(j, p)) under D_m (seed 001 eq. 3.5, k reports)."""
    set_bits = np.arange(cfg.j + 1)
    p0 = scipy_stats().binom.pmf(set_bits, cfg.j, cfg.q)
    p1 = scipy_stats().binom.pmf(set_bits, cfg.j, 1.0 - cfg.q)
    p0 = p0 / p0.sum()
    p1 = p1 / p1.sum()
    t = rng.multinomial(cfg.n - cfg.k, p0, size=samples).astype(np.float64)
    t += rng.multinomial(cfg.k, p1, size=samples)
    return t


def _log_r_and_log_mean(cfg: Config, t: NDArray[np.float64], *, need_r: bool = True
                        ) -> tuple[NDArray[np.float64] | None, NDArray[np.float64]]:
    lw = cfg.log_w
    log_mean = log_esp_from_counts(lw, t, 1) - math.log(cfg.n)
    if not need_r:
        return None, log_mean
    if cfg.k == 1:
        return log_mean, log_mean
    log_r = log_esp_from_counts(lw, t, cfg.k) - log_comb_large_n(float(cfg.n), cfg.k)
    return log_r, log_mean


def _clopper_pearson(x: int, n: int, confidence: float) -> tuple[float, float]:
    a = 1.0 - confidence
    lo = 0.0 if x == 0 else float(scipy_stats().beta.ppf(a / 2, x, n - x + 1))
    hi = 1.0 if x == n else float(scipy_stats().beta.ppf(1 - a / 2, x + 1, n - x))
    return lo, hi


def _check_samples_conf(samples: Any, confidence: Any) -> tuple[int, float]:
    samples = check_int("samples", samples, minimum=1, maximum=MAX_MC_SAMPLES)
    confidence = check_open_interval("confidence_level", confidence, 0.0, 1.0)
    return samples, confidence


def _tail_from_log_values(cfg: Config, log_vals: NDArray[np.float64], threshold_log: float,
                          *, method: str, confidence: float, details: dict[str, Any],
                          log_r_for_delta: NDArray[np.float64] | None) -> TailResult:
    samples = int(log_vals.size)
    hits = int(np.count_nonzero(log_vals > threshold_log))
    lo, hi = _clopper_pearson(hits, samples, confidence)
    delta = dlo = dhi = None
    if log_r_for_delta is not None:
        # delta(eps) = E_{D_m}[(1 - e^eps / R)_+] (seed 001 eq. 1.7's approximate-DP companion).
        with np.errstate(over="ignore"):
            vals = np.where(log_r_for_delta > cfg.epsilon, -np.expm1(cfg.epsilon - log_r_for_delta), 0.0)
        delta = float(vals.mean())
        se = float(vals.std(ddof=1) / math.sqrt(samples)) if samples > 1 else math.inf
        z = float(-_norm_ppf((1 - confidence) / 2))
        dlo, dhi = max(0.0, delta - z * se), min(1.0, delta + z * se)
    details = {"samples": samples, "hits": hits, "ci": "Clopper-Pearson", **details}
    return TailResult(eta=hits / samples, eta_lower=lo, eta_upper=hi, method=method, kind="estimate",
                      epsilon=cfg.epsilon, q=cfg.q, bits=cfg.bits, population=cfg.population,
                      reports=cfg.k, outlier_bits=cfg.j, delta=delta, delta_lower=dlo, delta_upper=dhi,
                      confidence_level=confidence, details=details)


def _norm_ppf(x: float) -> float:
    return float(scipy_stats().norm.ppf(x))


# ---------------------------------------------------------------------------------------------------------------
# tails
# ---------------------------------------------------------------------------------------------------------------


def k_tail_mc(*, q: float, bits: int, population: int, reports: int, epsilon: float, samples: int = 20_000,
              rng: np.random.Generator | int | None = None, outlier_bits: int | None = None,
              confidence_level: float | None = None,
              confidence: float | None = None) -> TailResult:
    """Monte Carlo estimate of ``eta = P[R(S^k) > e**epsilon]`` under ``S ~ A(D_m^k)`` with the correct ratio.

    Draws the set-bit counts ``T = MN(kN - k, Bin(j, q)) + MN(k, Bin(j, p))`` and evaluates
    ``R(S^k) = e_k(w) / C(kN, k)`` from the counts (log-domain truncated polynomial product), so kN = 1e8 is cheap.
    Also estimates ``delta(eps) = E[(1 - e**eps / R)_+]`` with a normal-approximation interval.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 2 people.
        reports: k >= 1 reports per person.
        epsilon: privacy level > 0.
        samples: Monte Carlo samples.
        rng: seeded ``numpy.random.Generator`` (or int seed) for reproducibility.
        outlier_bits: j, the bits in which the outlier differs from zero (default L, the paper's all-ones case;
            ERRATA 5 asks for the worst over j — see :func:`k_tail_mc_worst_outlier_bits`).
        confidence_level: level of the Clopper-Pearson interval for eta.

    Returns:
        A :class:`TailResult` with ``kind="estimate"``, ``method="mc"``.

    References:
        ERRATA 4 (the U-statistic); seed 001 eq. (1.7), (3.3)-(3.5), §6.

    Examples:
        >>> r = k_tail_mc(q=0.25, bits=2, population=50, reports=2, epsilon=1.0, samples=2000, rng=1)
        >>> r.kind, r.eta_lower <= r.eta <= r.eta_upper
        ('estimate', True)
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    cfg = check_config(q, bits, population, epsilon, outlier_bits, reports, min_population=2)
    samples, confidence = _check_samples_conf(samples, confidence)
    gen = check_rng(rng)
    t = _sample_counts(cfg, samples, gen)
    log_r, _ = _log_r_and_log_mean(cfg, t)
    assert log_r is not None
    return _tail_from_log_values(cfg, log_r, cfg.epsilon, method="mc", confidence=confidence,
                                 details={"statistic": "R(S^k) = e_k(w)/C(kN,k)"}, log_r_for_delta=log_r)


def k_tail_mc_worst_outlier_bits(*, q: float, bits: int, population: int, reports: int, epsilon: float,
                                 samples: int = 20_000, rng: np.random.Generator | int | None = None,
                                 confidence_level: float | None = None,
                                 confidence: float | None = None) -> TailResult:
    """Worst of :func:`k_tail_mc` over outlier weights j = 1..L (ERRATA 5), by the upper confidence limit.

    Each j uses its own samples; the returned result is the j with the largest ``eta_upper``, and
    ``details["per_j"]`` lists every j's ``(eta, eta_lower, eta_upper)``. A Monte Carlo estimate over a family:
    the reported interval is per-j, not simultaneous.
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    cfg = check_config(q, bits, population, epsilon, None, reports, min_population=2)
    gen = check_rng(rng)
    results = [k_tail_mc(q=cfg.q, bits=cfg.bits, population=cfg.population, reports=cfg.k,
                         epsilon=cfg.epsilon, samples=samples, rng=gen, outlier_bits=j, confidence_level=confidence)
               for j in range(1, cfg.bits + 1)]
    worst = max(results, key=lambda r: (r.eta_upper or 0.0, r.eta))
    per_j = {str(r.outlier_bits): [r.eta, r.eta_lower, r.eta_upper] for r in results}
    return replace(worst, details={**worst.details, "per_j": per_j, "worst_over": "outlier_bits 1..L"})


def k_maclaurin_bound_tail(*, q: float, bits: int, population: int, reports: int, epsilon: float,
                           samples: int = 20_000, rng: np.random.Generator | int | None = None,
                           outlier_bits: int | None = None, confidence_level: float | None = None,
                           confidence: float | None = None) -> TailResult:
    """Monte Carlo of the rigorous reduction ``eta <= P[mean w > e**(epsilon/k)]`` (Maclaurin's inequality).

    Maclaurin: ``(e_k(w) / C(n, k))**(1/k) <= e_1(w) / n`` for non-negative w, hence ``R(S^k) <= (mean w)**k`` and
    ``P[R(S^k) > lambda] <= P[mean w > lambda**(1/k)]``. The right side is the k = 1 kind of tail of a sum of
    independent per-report ratios (kN reports, k from the outlier, threshold ``lambda**(1/k)``).

    The inequality is a proof; **this function's number is a Monte Carlo estimate of that upper bound**
    (``kind="estimate"``, ``method="maclaurin-mc"``), with a Clopper-Pearson interval.

    Args:
        q, bits, population, reports, epsilon, samples, rng, outlier_bits, confidence_level: as in :func:`k_tail_mc`.
            (The rigorous k-report bound is :func:`k_tail_certified`, or over every collection
            :func:`sufficientdp.ratio.proven.proven_tail`.)

    Returns:
        A :class:`TailResult` (estimate of an upper bound; ``details["bound_of"] = "eta"``).

    References:
        ERRATA 4 (Maclaurin reduction); seed 001 eq. (3.4), (3.12) (the k = 1 sum).

    Examples:
        >>> b = k_maclaurin_bound_tail(q=0.25, bits=2, population=50, reports=2, epsilon=1.0, samples=2000, rng=1)
        >>> b.method, b.details["bound_of"]
        ('maclaurin-mc', 'eta')
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    cfg = check_config(q, bits, population, epsilon, outlier_bits, reports, min_population=2)
    samples, confidence = _check_samples_conf(samples, confidence)
    gen = check_rng(rng)
    t = _sample_counts(cfg, samples, gen)
    _, log_mean = _log_r_and_log_mean(cfg, t, need_r=False)
    return _tail_from_log_values(
        cfg, log_mean, cfg.epsilon / cfg.k, method="maclaurin-mc", confidence=confidence,
        details={"statistic": "mean w (Maclaurin: R(S^k) <= (mean w)^k)", "threshold": "exp(epsilon/k)",
                 "bound_of": "eta",
                 "note": "Monte Carlo estimate of a rigorous upper bound on eta, not itself a guarantee"},
        log_r_for_delta=None)


def k_tail_exact_single_bit(*, q: float, population: int, reports: int, epsilon: float) -> TailResult:
    """Exact ``eta`` and ``delta`` of k-randomization when the outlier differs in one bit (j = 1).

    With j = 1 the count of reported ones among the kN reports is ``A_{kN}(k) = Bin(k, p) + Bin(kN - k, q)``
    (seed 000 §3.1), and ``R(S^k) = e_k(w)/C(kN, k)`` is a function of that count. Enumerates every count
    (O(kN k^2)); a test oracle for :func:`k_tail_mc`.

    Returns:
        A :class:`TailResult` with ``kind="exact"``.
    """
    cfg = check_config(q, 1, population, epsilon, 1, reports, min_population=2)
    n = cfg.n
    if n > 200_000:
        raise ParameterError(f"population * reports must be <= 200000 for exact enumeration; got {n}")
    from .single_bit import log_pmf

    s = np.arange(n + 1)
    logp = log_pmf(s, population=n, m=cfg.k, q=cfg.q)
    counts = np.stack([n - s, s], axis=1).astype(np.float64)
    log_r = log_esp_from_counts(cfg.log_w, counts, cfg.k) - log_comb_large_n(float(n), cfg.k)
    risky = log_r > cfg.epsilon
    eta = float(np.exp(logp[risky]).sum())
    with np.errstate(over="ignore"):
        delta = float(np.sum(np.exp(logp[risky]) * -np.expm1(cfg.epsilon - log_r[risky])))
    return TailResult(eta=eta, eta_lower=eta, eta_upper=eta, method="exact", kind="exact", epsilon=cfg.epsilon,
                      q=cfg.q, bits=1, population=cfg.population, reports=cfg.k, outlier_bits=1,
                      delta=delta, delta_lower=delta, delta_upper=delta, details={"support": n + 1})


# ---------------------------------------------------------------------------------------------------------------
# certified tails for k reports: exact conditioning on the heavy reports, Maclaurin only on the light ones
# ---------------------------------------------------------------------------------------------------------------

_KT_SLACK = 1e-9  # relative slack on the e_k threshold, always in the safe direction
_KT_REL_SAFETY = 1e-9  # relative margin on final bounds and Chernoff exponents
_KT_ABS_FLOOR = 1e-300
_KT_MAX_LIVE = 150_000  # live heavy configurations per stage (times the outlier configurations: 4x that)
_KT_PRUNE_REL = 30.0  # configurations below (current upper bound) * e**-30 are pruned (their mass is added)
_KT_TIGHT = 1e-3  # stop refining once upper <= (1 + 1e-3) * lower
_KT_BISECT = 36  # bisection steps for the light-sum thresholds (any bracket end on the safe side is valid)


def _log_ext(lw: float, c: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """Log coefficients of ``(1 + e**lw z)**c`` truncated at degree k (one row per entry of ``c``)."""
    return _log_binom_coef(np.asarray(c, dtype=np.float64), k) + np.arange(k + 1) * lw


def _mul(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Product of log-coefficient polynomials (rows broadcast), truncated at degree k."""
    a2, b2 = np.broadcast_arrays(a, b)
    return _poly_mul_trunc(np.ascontiguousarray(a2), np.ascontiguousarray(b2))


def _binom_logpmf_safe(c: NDArray[np.float64], m: NDArray[np.float64], log_a: float,
                       log1m_a: float) -> NDArray[np.float64]:
    """``log P[Bin(m, a) = c]`` from boost's pmf with the smaller of a, 1 - a (``binom.logpmf`` loses digits)."""
    with np.errstate(divide="ignore"):
        if log_a <= log1m_a:
            return np.asarray(np.log(scipy_stats().binom.pmf(c, m, math.exp(log_a))), dtype=np.float64)
        return np.asarray(np.log(scipy_stats().binom.pmf(m - c, m, math.exp(log1m_a))), dtype=np.float64)


def _binom_outside(lo: int, hi: int, m: NDArray[np.float64], a: float) -> NDArray[np.float64]:
    """Upper estimate of ``P[Bin(m, a) < lo] + P[Bin(m, a) > hi]`` (boost's cdf/sf, relative margin 1e-6)."""
    out = scipy_stats().binom.cdf(lo - 1, m, a) + scipy_stats().binom.sf(hi, m, a)
    return np.asarray(np.minimum(out * (1.0 + 1e-6) + 1e-300, 1.0), dtype=np.float64)


class _LightMix:
    """The light reports of one stage: ``mz`` iid zero reports conditioned on ``l < ls`` and ``mo`` iid outlier
    reports conditioned on ``l < lso`` (``lso <= ls``), in units of ``w_{ls-1}`` (every light value is in
    ``(0, 1]``; level 0 gives the smallest, ``umin``)."""

    def __init__(self, lw: NDArray[np.float64], lpi0: NDArray[np.float64], lpi1: NDArray[np.float64],
                 ls: int, lso: int) -> None:
        self.lvmax = float(lw[ls - 1])
        u0 = np.exp(lw[:ls] - self.lvmax)
        u1 = np.exp(lw[:lso] - self.lvmax)
        self.umin = float(u0[0])
        lp0 = lpi0[:ls] - logsumexp(lpi0[:ls])
        lp1 = lpi1[:lso] - logsumexp(lpi1[:lso])
        p0, p1 = np.exp(lp0), np.exp(lp1)
        self.mu0, self.mu1 = float(p0 @ u0), float(p1 @ u1)
        self.var0 = float(p0 @ (u0 - self.mu0) ** 2)
        self.var1 = float(p1 @ (u1 - self.mu1) ** 2)
        self._laws = ((lp0, u0), (lp1, u1))
        self._tabs: dict[int, tuple[NDArray[np.float64], ...]] = {}

    def _tables(self, sign: int) -> tuple[NDArray[np.float64], ...]:
        """(theta >= 0, Lambda0(sign theta), Lambda1(sign theta), tilted means 0 and 1) on a log grid of theta.
        ``Lambda(t) = log E e^{t u}``; the tilted means are used only to choose theta."""
        if sign not in self._tabs:
            theta = np.concatenate([[0.0], np.geomspace(1e-10, 1e7, 2400)])
            out: list[NDArray[np.float64]] = [theta]
            means = []
            for lp, u in self._laws:
                p = np.exp(lp)
                tu = sign * theta[:, None] * u[None, :]
                with np.errstate(over="ignore", under="ignore"):
                    z = lp[None, :] + tu
                    zm = z.max(axis=1, keepdims=True)
                    wts = np.exp(z - zm)
                    lse = zm[:, 0] + np.log(np.sum(wts, axis=1))
                    s = np.sum(p[None, :] * np.expm1(np.minimum(tu, 600.0)), axis=1)
                    # log1p of a same-sign sum is accurate; far from 0 (or near overflow) the logsumexp is
                    lam = np.where((theta < 600.0) & (s > -0.5), np.log1p(np.maximum(s, -0.5)), lse)
                    means.append(np.sum(wts * u[None, :], axis=1) / np.sum(wts, axis=1))
                out.append(lam)
            acc = np.maximum.accumulate if sign > 0 else np.minimum.accumulate
            out.extend(acc(mn) for mn in means)
            self._tabs[sign] = tuple(out)
        return self._tabs[sign]

    def log_tail(self, mz: NDArray[np.float64], mo: NDArray[np.float64], y: NDArray[np.float64],
                 upper: bool) -> NDArray[np.float64]:
        """Log of a rigorous bound on ``P[S >= y]`` (``upper``) or ``P[S <= y]`` (S: the light sum, units u).

        Chernoff with the exact MGF: ``-s theta y + mz Lambda0(s theta) + mo Lambda1(s theta)``, ``s = +-1``, for a
        near-optimal grid ``theta >= 0`` (every theta is valid), inflated by ``1e-9`` of its terms' magnitude and
        capped at 0."""
        out = np.zeros(y.shape)
        mean = mz * self.mu0 + mo * self.mu1
        mid = y > mean if upper else y < mean
        if not np.any(mid):
            return out
        sign = 1 if upper else -1
        theta, lam0, lam1, d0, d1 = self._tables(sign)
        a, b, yy = mz[mid], mo[mid], y[mid]
        def reaches(md: NDArray[np.int64]) -> NDArray[np.bool_]:
            tm = a * d0[md] + b * d1[md]
            return np.asarray(~(tm < yy) if upper else ~(tm > yy))

        # first grid index whose tilted mean reaches y (the exponent's derivative changes sign)
        lo, hi = bisect_many(reaches, np.zeros(yy.shape, dtype=np.int64),
                             np.full(yy.shape, theta.size - 1, dtype=np.int64), probes=13, integer=True)
        best = np.zeros(yy.shape)
        for idx in (lo, hi):
            th = theta[idx]
            raw = -sign * th * yy + a * lam0[idx] + b * lam1[idx]
            mag = np.abs(th * yy) + np.abs(a * lam0[idx]) + np.abs(b * lam1[idx])
            best = np.minimum(best, raw + _KT_REL_SAFETY * mag + 1e-12)
        out[mid] = np.minimum(best, 0.0)
        return out

    def cantelli(self, mz: NDArray[np.float64], mo: NDArray[np.float64], z: NDArray[np.float64],
                 upper: bool) -> NDArray[np.float64]:
        """Rigorous lower bound on ``P[S > z]`` (``upper``) or ``P[S < z]``: Cantelli's inequality
        ``d**2 / (V + d**2)`` with ``d = E S - z > 0`` (resp. ``z - E S > 0``)."""
        mean = mz * self.mu0 + mo * self.mu1
        var = mz * self.var0 + mo * self.var1
        d = mean - z if upper else z - mean
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.where(d > 0, d * d / (var + d * d), 0.0)
        return np.asarray(np.clip(np.nan_to_num(val, nan=0.0) * (1.0 - 1e-9) - 1e-15, 0.0, 1.0), dtype=np.float64)


def _log_maclaurin_poly(hp: NDArray[np.float64], log_cm: NDArray[np.float64], ly: NDArray[np.float64],
                        lvmax: float, log_m: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log sum_d e_{k-d}(H) C(m, d) (y vmax / m)**d`` >= ``log e_k`` when the m light values sum to ``y``
    (units u): Maclaurin ``e_d(x) <= C(m, d) mean(x)**d``; equality when the light values are all equal."""
    k = hp.shape[-1] - 1
    d = np.arange(k + 1)
    with np.errstate(invalid="ignore"):
        step = np.where(np.isfinite(log_m), ly + lvmax - log_m, _NEG_INF)
        terms = hp[:, ::-1] + log_cm + np.where(d == 0, 0.0, d * step[:, None])
    out: NDArray[np.float64] = logsumexp(terms, axis=-1)
    return out


def _log_product_poly(hp: NDArray[np.float64], y: NDArray[np.float64], lvmax: float) -> NDArray[np.float64]:
    """``log sum_d e_{k-d}(H) vmax**d prod_{s<d} (y - s)_+ / d!`` <= ``log e_k`` when the light values (each
    <= 1 in units u) sum to ``y``: ``d! e_d(x) >= prod_{s<d} (e_1(x) - s max x)_+`` (sum over ordered d-tuples of
    distinct indices, one index at a time; the inner sum omits at most s values, each <= max x). Equality when
    the light values are all 1."""
    k = hp.shape[-1] - 1
    lf = np.zeros((y.size, k + 1))
    for d in range(1, k + 1):
        f = y - (d - 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lf[:, d] = lf[:, d - 1] + np.where(f > 0, np.log(np.where(f > 0, f, 1.0)), _NEG_INF)
    dd = np.arange(k + 1)
    out: NDArray[np.float64] = logsumexp(hp[:, ::-1] + lf + dd * lvmax - gammaln(dd + 1.0), axis=-1)
    return out


class _KTooMany(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _KProblem:
    """``P[e_k(w) > Theta]`` (``upper``) or ``P[e_k(w) < Theta]`` for ``n_zero`` iid zero reports and
    ``n_out`` iid outlier reports, with ``log_w`` increasing in the level."""

    k: int
    lw: NDArray[np.float64]
    lpi0: NDArray[np.float64]
    lpi1: NDArray[np.float64]
    n_zero: int
    n_out: int
    log_thr: float
    upper: bool

    @property
    def j(self) -> int:
        return int(self.lw.size - 1)


@dataclass(slots=True)
class _KStates:
    """Heavy zero-report configurations: levels ``>= ls`` enumerated, ``m`` zero reports left below ``ls``."""

    ls: int
    logp: NDArray[np.float64]
    poly: NDArray[np.float64]  # log e_i of the heavy zero reports, i = 0..k
    m: NDArray[np.float64]
    log_sure: float = _NEG_INF  # mass of configurations in the event whatever the rest does
    dropped: float = 0.0  # window tails and pruned configurations (added to upper bounds only)


def _k_stage(pb: _KProblem, st: _KStates, log_prune: float) -> tuple[float, float]:
    """(upper, lower) on the event's probability at one stage (heavy levels ``>= ls``), without final margins.

    Given the heavy multiset H (zero and outlier reports at levels >= ls) and the m light reports with sum S,
    ``e_k = sum_i e_i(H) e_{k-i}(light)`` is bracketed by :func:`_log_product_poly` (below) and
    :func:`_log_maclaurin_poly` (above), both non-decreasing in S; the event is then contained in / contains a
    tail event of S, bounded by Chernoff (above) and Cantelli (below). (State, outlier configuration) pairs below
    ``log_prune`` are counted as sure for the upper bound and as impossible for the lower one."""
    k, j, ls = pb.k, pb.j, st.ls
    sure = math.exp(st.log_sure) if st.log_sure > _NEG_INF else 0.0
    up, lo = sure + st.dropped, sure
    if st.logp.size == 0:
        return up, lo
    lso = ls  # outlier reports enumerated at the same heavy levels (enumerating them lower was tried: slower,
    heavy_levels = np.arange(lso, j + 1)  # no tighter where the zero reports cannot be enumerated deep)
    if math.comb(pb.n_out + heavy_levels.size, pb.n_out) > 4 * _KT_MAX_LIVE:
        raise _KTooMany
    comps = compositions(pb.n_out, heavy_levels.size + 1)  # last column: light outlier reports
    lp_cat = np.concatenate([pb.lpi1[lso:], [logsumexp(pb.lpi1[:lso])]])
    lp_o = (math.lgamma(pb.n_out + 1) - np.sum(gammaln(comps + 1.0), axis=1)
            + np.sum(np.where(comps > 0, comps * lp_cat[None, :], 0.0), axis=1))
    keep_o = lp_o >= log_prune
    if not np.all(keep_o):
        up += float(np.exp(lp_o[~keep_o]).sum())  # improbable outlier configurations: counted as sure
        comps, lp_o = comps[keep_o], lp_o[keep_o]
    # pairs (state, outlier configuration); the improbable ones go to the upper bound whole
    lpw = st.logp[:, None] + lp_o[None, :]
    small = lpw < log_prune
    if np.any(small):
        up += float(np.exp(lpw[small]).sum())
    si, ci = np.nonzero(~small)
    if si.size == 0:
        return up, lo
    if si.size > 4 * _KT_MAX_LIVE:
        raise _KTooMany
    used = np.unique(ci)
    opoly = np.full((comps.shape[0], k + 1), _NEG_INF)
    opoly[:, 0] = 0.0
    for i, lev in enumerate(heavy_levels):
        col = comps[used, i]
        if np.any(col > 0):
            opoly[used] = _mul(opoly[used], _log_ext(float(pb.lw[lev]), col.astype(np.float64), k))
    hp = _mul(st.poly[si], opoly[ci])
    mz = st.m[si]
    mo = comps[ci, -1].astype(np.float64)
    pw = np.exp(lpw[si, ci])
    light = _LightMix(pb.lw, pb.lpi0, pb.lpi1, ls, lso)
    mt = mz + mo
    with np.errstate(divide="ignore"):
        log_m = np.log(mt)
    log_cm = _log_binom_coef(mt, k)
    thr_dn = pb.log_thr + math.log1p(-_KT_SLACK)
    thr_up = pb.log_thr + math.log1p(_KT_SLACK)
    # exact e_k with every light value at its smallest (w_0) / largest (w_{ls-1}) ratio
    lmin = _log_maclaurin_poly(hp, log_cm, log_m + math.log(light.umin), light.lvmax, log_m)
    lmax = _log_maclaurin_poly(hp, log_cm, log_m, light.lvmax, log_m)
    if pb.upper:  # event e_k > Theta
        sure_up, sure_lo = lmin > thr_dn, lmin > thr_up
        live_up = ~sure_up & (lmax > thr_dn)
        live_lo = ~sure_lo & (lmax > thr_up) & (mt > 0)
    else:  # event e_k < Theta
        sure_up, sure_lo = lmax < thr_up, lmax < thr_dn
        live_up = ~sure_up & (lmin < thr_up)
        live_lo = ~sure_lo & (lmin < thr_dn) & (mt > 0)
    up += float(pw[sure_up].sum())
    lo += float(pw[sure_lo].sum())
    if np.any(live_up):
        up += float(pw[live_up] @ np.exp(_k_live_upper(pb, light, hp[live_up], mz[live_up], mo[live_up],
                                                       log_cm[live_up], log_m[live_up], thr_dn, thr_up)))
    if np.any(live_lo):
        lo += float(pw[live_lo] @ _k_live_lower(pb, light, hp[live_lo], mz[live_lo], mo[live_lo],
                                                 log_cm[live_lo], log_m[live_lo], thr_dn, thr_up))
    return up, lo


def _k_live_upper(pb: _KProblem, light: _LightMix, hp: NDArray[np.float64], mz: NDArray[np.float64],
                  mo: NDArray[np.float64], log_cm: NDArray[np.float64], log_m: NDArray[np.float64],
                  thr_dn: float, thr_up: float) -> NDArray[np.float64]:
    """Log upper bounds on the event's conditional probability for live configurations."""
    mt = mz + mo
    if pb.upper:
        # e_k <= Maclaurin(S); the largest y with Maclaurin(y) <= Theta(1 - slack): event => S > y
        y_lo, y_hi = log_m + math.log(light.umin), log_m.copy()  # Maclaurin(y_lo) <= thr_dn < Maclaurin(y_hi)
        y_lo, y_hi = bisect_many(lambda y: _log_maclaurin_poly(hp, log_cm, y, light.lvmax, log_m) > thr_dn, y_lo,
                                 y_hi, probes=_KT_BISECT)
        return light.log_tail(mz, mo, np.exp(y_lo) * (1.0 - 1e-12), upper=True)
    # e_k >= Product(S); the smallest z with Product(z) >= Theta(1 + slack): event => S < z
    z_lo, z_hi = mt * light.umin, mt.copy()  # Product(z_hi) >= thr_up (not sure), search from below
    z_lo, z_hi = bisect_many(lambda z: _log_product_poly(hp, z, light.lvmax) >= thr_up, z_lo, z_hi,
                             probes=_KT_BISECT)
    return light.log_tail(mz, mo, z_hi * (1.0 + 1e-12), upper=False)


def _k_live_lower(pb: _KProblem, light: _LightMix, hp: NDArray[np.float64], mz: NDArray[np.float64],
                  mo: NDArray[np.float64], log_cm: NDArray[np.float64], log_m: NDArray[np.float64],
                  thr_dn: float, thr_up: float) -> NDArray[np.float64]:
    """Lower bounds on the event's conditional probability for live configurations."""
    mt = mz + mo
    out = np.zeros(mt.shape)
    if pb.upper:
        # e_k >= Product(S); the smallest z with Product(z) >= Theta(1 + slack): S > z => event
        ok = _log_product_poly(hp, mt, light.lvmax) >= thr_up
        if np.any(ok):
            hpo = hp[ok]
            z_lo, z_hi = bisect_many(lambda z: _log_product_poly(hpo, z, light.lvmax) >= thr_up,
                                     mt[ok] * light.umin, mt[ok].copy(), probes=_KT_BISECT)
            out[ok] = light.cantelli(mz[ok], mo[ok], z_hi * (1.0 + 1e-12), upper=True)
        return out
    # e_k <= Maclaurin(S); the largest y with Maclaurin(y) <= Theta(1 - slack): S < y => event
    ok = _log_maclaurin_poly(hp, log_cm, log_m + math.log(light.umin), light.lvmax, log_m) <= thr_dn
    if np.any(ok):
        hpo, lcm, lm = hp[ok], log_cm[ok], log_m[ok]
        y_lo, y_hi = bisect_many(lambda y: _log_maclaurin_poly(hpo, lcm, y, light.lvmax, lm) > thr_dn,
                                 lm + math.log(light.umin), lm.copy(), probes=_KT_BISECT)
        out[ok] = light.cantelli(mz[ok], mo[ok], np.exp(y_lo) * (1.0 - 1e-12), upper=False)
    return out


def _k_expand(pb: _KProblem, st: _KStates, lev: int, logle0: NDArray[np.float64], log_prune: float) -> _KStates:
    """Enumerate the zero reports' count at level ``lev`` given the levels above (``T_lev | T_{>lev} ~
    Bin(m, pi0(lev) / pi0(<= lev))``, exact). Children outside the event whatever the rest does are dropped (zero
    mass); children inside it whatever the rest does are summed into ``log_sure``; children below the pruning
    level and the window's tails are added to ``dropped``."""
    k, j = pb.k, pb.j
    log_a = float(pb.lpi0[lev] - logle0[lev])
    log1m_a = float(logle0[lev - 1] - logle0[lev])
    a = math.exp(log_a)
    m = st.m
    if m.size == 0:
        return replace(st, ls=lev)
    tol = max(math.exp(log_prune) * 1e-3, 1e-300)
    with warnings.catch_warnings():  # boost may fail to bracket extreme quantiles; the window only needs to be
        warnings.simplefilter("ignore", RuntimeWarning)  # some window: the mass outside it is computed exactly
        q_lo, q_hi = scipy_stats().binom.ppf(tol, m, a), scipy_stats().binom.isf(tol, m, a)
    q_lo = np.where(np.isfinite(q_lo), q_lo, 0.0)
    q_hi = np.where(np.isfinite(q_hi), q_hi, m)
    c_lo = int(max(0.0, float(np.min(q_lo)) - 1.0))
    c_hi = int(min(float(np.max(m)), float(np.max(q_hi)) + 1.0))
    c = np.arange(c_lo, c_hi + 1, dtype=np.float64)
    if c.size * st.logp.size > 40 * _KT_MAX_LIVE:
        raise _KTooMany
    dropped = st.dropped + float(np.exp(st.logp) @ _binom_outside(c_lo, c_hi, m, a))
    mm = np.broadcast_to(m[:, None], (m.size, c.size))
    cc = np.broadcast_to(c[None, :], mm.shape)
    valid = cc <= mm
    with np.errstate(invalid="ignore"):
        lp = np.where(valid, st.logp[:, None] + _binom_logpmf_safe(cc, mm, log_a, log1m_a), _NEG_INF)
    small = valid & (lp < log_prune)
    if np.any(small):
        dropped += float(np.exp(lp[small]).sum())
    rows, cols = np.nonzero(valid & ~small)
    lp = lp[rows, cols]
    cpoly = _mul(st.poly[rows], _log_ext(float(pb.lw[lev]), c[cols], k))
    rest = m[rows] - c[cols]
    # the rest: `rest` zero reports at levels < lev and the outlier reports at any level; e_k is non-decreasing
    # in every ratio, so its extremes are at "all rest at w_0" and "zeros at w_{lev-1}, outliers at w_j"
    log_max = _mul(_mul(cpoly, _log_ext(float(pb.lw[j]), np.array([float(pb.n_out)]), k)),
                   _log_ext(float(pb.lw[lev - 1]), rest, k))[:, k]
    log_min = _mul(cpoly, _log_ext(float(pb.lw[0]), rest + pb.n_out, k))[:, k]
    thr_dn = pb.log_thr + math.log1p(-_KT_SLACK)
    thr_up = pb.log_thr + math.log1p(_KT_SLACK)
    if pb.upper:
        never, sure = log_max <= thr_dn, log_min > thr_up
    else:
        never, sure = log_min >= thr_up, log_max < thr_dn
    log_sure = st.log_sure
    if np.any(sure):
        log_sure = float(np.logaddexp(log_sure, logsumexp(lp[sure])))
    live = ~never & ~sure
    if int(np.count_nonzero(live)) > _KT_MAX_LIVE:
        raise _KTooMany
    return _KStates(ls=lev, logp=lp[live], poly=cpoly[live], m=rest[live], log_sure=log_sure, dropped=dropped)


def _k_bounds(pb: _KProblem, *, stop_below: float | None = None,
              stop_above: float | None = None) -> tuple[float, float, dict[str, Any]]:
    """Rigorous (upper, lower) on the event's probability: the best over the stages ``l* = j+1, j, ..., 1``.

    Stops when the bracket is within 0.1%, when the upper bound is ``<= stop_below`` or the lower bound is
    ``> stop_above`` (a calibration's pass/fail is then decided), or when the next stage would exceed the
    configuration budget. Margins: thresholds moved by a relative 1e-9 in the safe direction, Chernoff exponents
    inflated by 1e-9 of their terms, upper bounds times ``1 + 1e-9`` (floored at 1e-300), lower bounds times
    ``1 - 1e-9``; float64 rounding of the computation is orders of magnitude below (not interval arithmetic)."""
    j, k = pb.j, pb.k
    logle0 = np.logaddexp.accumulate(pb.lpi0)
    st = _KStates(ls=j + 1, logp=np.zeros(1), poly=np.concatenate([[0.0], np.full(k, _NEG_INF)])[None, :],
                  m=np.array([float(pb.n_zero)]))
    best_up, best_lo = 1.0, 0.0
    stages: list[dict[str, Any]] = []
    stopped = "every level enumerated (light part deterministic)"
    for lev in range(j, -1, -1):
        try:
            up, lo = _k_stage(pb, st, math.log(max(best_up, 1e-300)) - _KT_PRUNE_REL)
        except _KTooMany:
            stopped = f"stage l* = {st.ls}: configuration budget"
            break
        up = min(1.0, up * (1.0 + _KT_REL_SAFETY) + _KT_ABS_FLOOR)
        lo = min(1.0, max(0.0, lo * (1.0 - _KT_REL_SAFETY)))
        stages.append({"lstar": st.ls, "upper": up, "lower": lo, "live": int(st.logp.size)})
        best_up, best_lo = min(best_up, up), max(best_lo, lo)
        if best_up <= best_lo * (1.0 + _KT_TIGHT) or best_up <= 2.0 * _KT_ABS_FLOOR:
            stopped = "upper within 0.1% of lower"
            break
        if stop_below is not None and best_up <= stop_below:
            stopped = "upper bound below the requested level"
            break
        if stop_above is not None and best_lo > stop_above:
            stopped = "lower bound above the requested level"
            break
        if lev == 0:
            break
        if st.logp.size == 0:
            stopped = "no undecided configurations left"
            break
        log_prune = math.log(max(best_up, 1e-300)) - _KT_PRUNE_REL
        try:
            st = _k_expand(pb, st, lev, logle0, log_prune)
        except _KTooMany:
            stopped = f"expanding level {lev}: configuration budget"
            break
    return best_up, min(best_lo, best_up), {"stages": stages, "stopped": stopped}


def _k_levels(cfg: Config) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(log w_l increasing in l, log P[Bin(j, q) = l], log P[Bin(j, p) = l])."""
    j = cfg.j
    lpi0 = log_binom_pmf_all(j, cfg.q)
    return cfg.log_w, lpi0, lpi0[::-1].copy()


def _local_dp_regime(cfg: Config) -> bool:
    """``(p/q)**(j k) <= e**eps`` (with a 1e-12 margin): every ratio, both directions, is ``<= e**eps``."""
    log_max = cfg.j * cfg.k * (math.log1p(-cfg.q) - math.log(cfg.q))
    return log_max <= cfg.epsilon * (1.0 - 1e-12) - 1e-15


def k_tail_certified(*, q: float, bits: int, population: int, reports: int, epsilon: float,
                     outlier_bits: int | None = None, direction: Direction | str = Direction.FORWARD,
                     stop_below: float | None = None, stop_above: float | None = None) -> TailResult:
    """Rigorous bracket on the k-report tail, homogeneous configuration, one direction (ERRATA 4).

    ``direction="forward"`` (the outlier in ``D_m``, seed 001's pair): ``eta = P_{D_m}[R(S^k) > e**eps]`` with
    ``kN - k`` zero reports and ``k`` outlier reports. ``direction="reverse"`` (the outlier in ``D``): ``eta =
    P_{D}[R(S^k) < e**-eps]`` with all ``kN`` reports from zero vectors (``R_rev = 1/R``).

    Method: the reports at the heavy levels are enumerated exactly and only the light ones are bounded, through
    their sum (Maclaurin above, a product bound below), then Chernoff with the exact moment generating function
    (above) and Cantelli (below); unlike the global Maclaurin reduction (:func:`k_maclaurin_bound_tail`), the
    heavy reports' own terms are exact. Derivation: ``docs/proofs/k_reports.md``.

    Args:
        q, bits, population, reports, epsilon, outlier_bits: as in :func:`k_tail_mc`.
        direction: a :class:`~sufficientdp.loss.result.Direction`, ``"forward"`` or ``"reverse"`` (aliases
            ``"modified"``/``"original"``).
        stop_below, stop_above: stop refining once the upper bound is ``<= stop_below`` or the lower bound is
            ``> stop_above`` (for calibrations; the bracket returned is still valid).

    Returns:
        A :class:`TailResult` with ``kind="bound"``, ``method="certified"``: ``eta = eta_upper`` is a rigorous upper
        bound, ``eta_lower`` a rigorous lower bound (both up to the stated float64 margins, not interval
        arithmetic); ``delta <= eta``.

    Raises:
        ParameterError: an input out of range.

    References:
        ERRATA 4 (R(S^k) = e_k(w)/C(kN, k)); seed 001 (``papers/001_3d8ddaba8b46cf9c.txt``) eq. (1.7),
        (3.2)-(3.5); Maclaurin's inequality; Cantelli's inequality; ``docs/proofs/k_reports.md``.

    Examples:
        >>> r = k_tail_certified(q=0.2, bits=3, population=50, reports=2, epsilon=1.0)
        >>> r.kind, r.eta_lower <= r.eta
        ('bound', True)
    """
    cfg = check_config(q, bits, population, epsilon, outlier_bits, reports, min_population=2)
    direction = check_direction("direction", direction, (Direction.FORWARD, Direction.REVERSE))
    t0 = time.perf_counter()

    def result(up: float, lo: float, details: dict[str, Any]) -> TailResult:
        return TailResult(eta=up, eta_lower=lo, eta_upper=up, delta=up, delta_lower=0.0, delta_upper=up,
                          method="certified", kind="bound", epsilon=cfg.epsilon, q=cfg.q, bits=cfg.bits,
                          population=cfg.population, reports=cfg.k, outlier_bits=cfg.j, details=details)

    if _local_dp_regime(cfg):
        return result(0.0, 0.0, {"direction": direction, "reason": "(p/q)**(j k) <= e**epsilon: R <= e**epsilon "
                                 "surely in both directions (local-DP regime)"})
    lw, lpi0, lpi1 = _k_levels(cfg)
    n, k = cfg.n, cfg.k
    log_c = log_comb_large_n(float(n), k)
    if direction == "forward":
        pb = _KProblem(k=k, lw=lw, lpi0=lpi0, lpi1=lpi1, n_zero=n - k, n_out=k, log_thr=cfg.epsilon + log_c,
                       upper=True)
    else:
        pb = _KProblem(k=k, lw=lw, lpi0=lpi0, lpi1=lpi0, n_zero=n, n_out=0, log_thr=-cfg.epsilon + log_c,
                       upper=False)
    up, lo, info = _k_bounds(pb, stop_below=stop_below, stop_above=stop_above)
    details = {"direction": direction, "seconds": time.perf_counter() - t0, **info,
               "note": "heavy reports enumerated exactly; light part bracketed by Maclaurin (above) and the "
                       "ordered-tuple product (below), then Chernoff (exact MGF) / Cantelli",
               "delta_note": "delta <= eta (always valid)"}
    return result(up, lo, details)


# ---------------------------------------------------------------------------------------------------------------
# calibration
# ---------------------------------------------------------------------------------------------------------------


def sigma_per_sqrt_n_k(q: float, reports: int) -> float:
    """``sd(d_hat) / sqrt(N) = sqrt(q p / k) / (p - q)`` (seed 001 §6, typo-corrected); see
    :func:`sufficientdp.parameters.sigma_per_sqrt_n`, which this calls.

    Examples:
        >>> round(sigma_per_sqrt_n_k(0.25, 4), 4)
        0.433
    """
    return sigma_per_sqrt_n(q, reports)
