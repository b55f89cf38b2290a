"""The *reverse* homogeneous pair and two-sided statements (seed 001 eq. 1.7 quantifies over ALL neighbours).

The reverse pair swaps the paper's: ``D`` = zeros + outlier, ``D_m`` = all zeros, so ``R_rev = 1 / R_fwd`` with all
``n = kN`` reports iid zero reports (ERRATA 4) and ``eta_rev = P[e_k(w) / C(n, k) < e**-eps]``, a lower tail.

* (C1)–(C2) lower-tail Chernoff with the exact MGF and exact conditioning on the heavy levels: the REVERSE direction
  of the engine in :mod:`sufficientdp.ratio._chernoff` (the forward one is :mod:`sufficientdp.ratio.tail`);
* (C3) k > 1: ``e_k(w) >= e_k(min(w, tau)) >= prod_s (e_1 - s tau)_+ / k!`` reduces to a truncated sum;
* (C4) forward, k > 1 (:func:`forward_k_certified`): Maclaurin ``R(S^k) <= (mean w)**k``, exact outlier
  convolution and a heavy-level split.

``"exact"``: k = 1 by the enumeration down to the binomial level, any k by every count vector
(``C(kN + j, j) <= 1e6``); ``"mc"``: tilted Monte Carlo with an empirical-Bernstein interval. Proofs, the delta bound
and the float-safety conventions: ``docs/proofs/reverse_tail.md``. Everything is a statement about the homogeneous
configuration (ERRATA 5; ``docs/worst_case.md``), both directions, worst over j.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import ParameterError
from .._numerics.logspace import log_comb_large_n, logsumexp
from .._numerics.search import Bracket, Midpoint, scan, search, verdict
from .._validation import MAX_MC_SAMPLES, check_int, check_open_interval, check_rng, renamed
from ..loss.result import DIRECTIONS, Direction, TailResult, check_direction
from ._chernoff import (
    ABS_FLOOR,
    CERT_MAX_CONFIGS,
    EXACT_MAX_CONFIGS,
    LOG_CAP,
    METHODS,
    REL_SAFETY,
    THRESH_SLACK,
    Config,
    Heavy,
    Problem,
    ReverseFinish,
    TooMany,
    check_config,
    check_method,
    empirical_bernstein,
    enumerate_heavy,
    forward_problem,
    impossible,
    levels,
    make_problem,
    tail_result,
)
from .exact import count_vector_atoms
from .k_reports import k_tail_mc, log_esp_from_counts
from .tail import homogeneous_tail, worst_certified_forward

if TYPE_CHECKING:
    from .._offload import Helper

__all__ = [
    "DIRECTIONS",
    "METHODS",
    "forward_k_certified",
    "reverse_exact_upper",
    "reverse_tail",
    "two_sided_tail",
    "worst_certified_two_sided",
    "worst_two_sided",
]


_EXACT_MAX_ATOMS = 1_000_000  # count vectors enumerated by the k > 1 exact method
_REFINE_ABOVE = math.log(1e-250)  # (C2) refinement only where the plain bound is above this
_PRUNE_REL = 45.0  # configurations below (plain bound) * e**-45 are pruned (mass added)
_MC_DEFAULT_SAMPLES = 50_000
_O_GRID = 6000  # (C4) grid of the outlier sum
_O_MIN = 1e-9


# ---------------------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------------------
_NEVER = "(p/q)**(j k) <= e**epsilon: R <= e**epsilon surely in both directions (local-DP regime), eta = delta = 0"


def _slack_up(h: np.ndarray) -> np.ndarray:
    out: np.ndarray = (1.0 - h) + THRESH_SLACK * (1.0 + np.abs(h)) + 1e-300
    return out


# ---------------------------------------------------------------------------------------------------------------
# (C2) enumeration of heavy levels for the lower tail  {sum V <= 1}
# ---------------------------------------------------------------------------------------------------------------
def _enumerate(pb: Problem, *, log_ref: float, cap: int, stop_level: int,
               stage: Callable[[Heavy], None]) -> Heavy:
    """(C2): the shared enumeration (:func:`._chernoff.enumerate_heavy`, REVERSE), pruning relative to
    ``log_ref`` (the plain bound): children below ``log_ref - 45`` and window tails of ``e**-5`` of that."""
    log_prune = log_ref - _PRUNE_REL
    return enumerate_heavy(pb, stop_level=stop_level, cap=cap, log_prune=log_prune,
                           window_tol=math.exp(max(log_prune - 5.0, -690.0)), stage=stage)


def _stage_log_bound(pb: Problem, st: Heavy) -> float:
    """Log of the (C1)+(C2) bound at one stage (without the final relative margin)."""
    parts = [st.log_certain, st.log_dropped]
    if st.logp.size:
        law = pb.lower_law(st.lstar)
        lb = law.log_upper(st.m, _slack_up(st.h))
        parts.append(float(logsumexp(st.logp + lb, split_max=True)))
    return float(logsumexp(np.array(parts), split_max=True))


# ---------------------------------------------------------------------------------------------------------------
# reverse: problem setup (k = 1 and the truncated k > 1 sum)
# ---------------------------------------------------------------------------------------------------------------
def _x_star(n: int, k: int, tau: float, epsilon: float) -> float:
    """Root (rounded up) of ``prod_{s<k} (x - s tau)/(n - s) = e**-eps`` with ``x > (k-1) tau`` (C3)."""
    if k == 1:
        return n * math.exp(-epsilon) * (1.0 + 1e-12)
    base = sum(math.log(n - s) for s in range(k)) - epsilon

    def g(x: float) -> float:
        return sum(math.log(x - s * tau) for s in range(k)) - base

    lo = (k - 1) * tau
    hi = (k - 1) * tau + n * math.exp(-epsilon / k)

    def doubling(x: float) -> Iterator[float]:
        while True:
            yield x
            x *= 2.0

    _, top = scan(lambda x: not g(x) < 0, doubling(hi), until=True)  # g(hi) < 0 cannot happen (see docstring)
    hi = top if top is not None else hi
    end = search(verdict(lambda x: x > (k - 1) * tau and g(x) >= 0), Bracket(fail=lo, ok=hi), Midpoint(),
                 max_probes=200)
    return end.ok * (1.0 + 1e-12)


def _reverse_problem(cfg: Config, tau: float | None) -> tuple[Problem, float]:
    """(problem, x*) for truncation ``tau`` (None: no truncation; k = 1)."""
    logpi, logw = levels(cfg.q, cfg.j)
    n = cfg.n
    if tau is None:
        logu = logw
        xs = _x_star(n, 1, 0.0, cfg.epsilon) if cfg.k == 1 else math.nan
    else:
        logu = np.minimum(logw, math.log(tau))
        xs = _x_star(n, cfg.k, tau, cfg.epsilon)
    v = np.exp(np.minimum(logu - math.log(xs), LOG_CAP))
    return make_problem(Direction.REVERSE, cfg.q, cfg.j, cfg.population, cfg.epsilon, n, logpi, v), xs


def _tau_candidates(cfg: Config) -> list[float]:
    _, logw = levels(cfg.q, cfg.j)
    n, k = cfg.n, cfg.k
    scale = n * math.exp(-cfg.epsilon / k)
    grid = scale * np.geomspace(1e-9, 0.95 / (k - 1), 48)
    cands = set(float(x) for x in np.exp(logw)) | set(float(x) for x in grid)
    return sorted(c for c in cands if c > 0 and (k - 1) * c < scale * 10)


def _plain_log_bound(pb: Problem) -> tuple[float, float, float]:
    """(log bound, theta, Lambda) of (C1) for the whole sum."""
    return pb.lower_law(pb.v.size).scalar(float(pb.n), float(_slack_up(np.zeros(1))[0]))


@dataclass(slots=True)
class _RevBound:
    log_bound: float
    log_plain: float
    log_lower: float
    tau: float | None
    x_star: float
    theta: float
    lam: float
    stages: list[float]
    lstar: int
    configs: int
    exact_reached: bool
    problem: Problem


def _reverse_certified_core(cfg: Config, *, refine: bool = True, stop_below: float | None = None) -> _RevBound:
    if cfg.k == 1:
        choices: list[float | None] = [None]
    else:
        choices = list(_tau_candidates(cfg))
    best: tuple[float, Problem, float, float | None, float, float] | None = None
    for tau in choices:
        pb, xs = _reverse_problem(cfg, tau)
        lb, th, lam = _plain_log_bound(pb)
        if best is None or lb < best[0]:
            best = (lb, pb, xs, tau, th, lam)
    assert best is not None
    lb, pb, xs, tau, th, lam = best
    stages = [lb]
    res = _RevBound(lb, lb, -math.inf, tau, xs, th, lam, stages, pb.v.size, 0, False, pb)
    if not refine or lb < _REFINE_ABOVE or (stop_below is not None and lb <= math.log(stop_below)):
        return res

    def stage(st: Heavy) -> None:
        if st.lstar == pb.v.size:
            return  # the root stage is the plain bound
        b = _stage_log_bound(pb, st)
        stages.append(b)
        res.log_lower = max(res.log_lower, st.log_certain)
        if b < res.log_bound:
            res.log_bound, res.lstar, res.configs = b, st.lstar, int(st.logp.size)

    try:
        final = _enumerate(pb, log_ref=lb, cap=CERT_MAX_CONFIGS, stop_level=2, stage=stage)
        if pb.v.size >= 2 and pb.v[1] > pb.v[0]:
            fin = ReverseFinish(pb, final).tail()
            b = float(np.logaddexp(float(np.logaddexp(final.log_certain, final.log_dropped)),
                                   math.log(max(fin.upper, 1e-320))))
            stages.append(b)
            res.exact_reached = True
            res.log_lower = max(res.log_lower, math.log(max(fin.lower + math.exp(final.log_certain), 1e-320)))
            if b < res.log_bound:
                res.log_bound, res.lstar, res.configs = b, 1, int(final.logp.size)
    except TooMany:
        pass
    return res


def _finish_up(log_b: float) -> float:
    return float(min(1.0, math.exp(min(log_b, 0.0)) * (1.0 + REL_SAFETY) + ABS_FLOOR))


def _reverse_certified(cfg: Config) -> TailResult:
    t0 = time.perf_counter()
    if impossible(cfg.q, cfg.j, cfg.epsilon, cfg.k):
        return tail_result(cfg, eta=0.0, lo=0.0, hi=0.0, method="certified", kind="bound", delta=0.0, d_lo=0.0,
                           d_hi=0.0, details={"direction": "reverse", "reason": _NEVER})
    rb = _reverse_certified_core(cfg)
    up = _finish_up(rb.log_bound)
    # For k > 1 the core's lower end comes from the truncated sum e_1(min(w, tau)), whose event contains the tail
    # event: it bounds eta from above, not below. Only k = 1 has a valid lower end here (k_reports has the
    # rigorous k > 1 bracket).
    lo = (max(0.0, math.exp(rb.log_lower) * (1.0 - REL_SAFETY))
          if cfg.k == 1 and rb.log_lower > -math.inf else 0.0)
    enum = _small_exact(cfg, "reverse")
    if enum is not None and enum.eta_upper is not None and enum.eta_upper < up:
        up = float(enum.eta_upper)
        lo = max(lo, float(enum.eta_lower or 0.0))
    lo = min(lo, up)
    if cfg.k == 1:
        d_up = min(up, _finish_up(rb.problem.lower_law(rb.problem.v.size).log_delta_upper(float(rb.problem.n))))
        d_note = "delta <= min(eta bound, min_theta exp(theta - 1 - log theta + N Lambda(-theta)))"
    else:
        d_up = up
        d_note = "delta <= eta (always valid)"
    vacuous = up >= 1.0 - 1e-12
    details: dict[str, Any] = {
        "direction": "reverse",
        "log10_bound": rb.log_bound / math.log(10.0),
        "log10_plain_chernoff": rb.log_plain / math.log(10.0),
        "best_stage_lstar": rb.lstar, "configs": rb.configs, "binomial_level_reached": rb.exact_reached,
        "truncation_tau": rb.tau, "x_star": rb.x_star,
        "vacuous": vacuous, "delta_note": d_note, "seconds": time.perf_counter() - t0,
        "exact_enumeration_used": enum is not None and enum.eta_upper == up,
        "note": ("lower-tail Chernoff (exact MGF) + exact conditioning on heavy levels" +
                 ("" if cfg.k == 1 else "; k > 1: e_k(w) >= e_k(min(w, tau)) >= prod (e_1 - s tau)_+/k! (C3)")),
    }
    if vacuous:
        details["vacuous_note"] = "the bound is >= 1 (capped at 1): nothing is certified here"
    return tail_result(cfg, eta=up, lo=lo, hi=up, method="certified", kind="bound", delta=d_up, d_lo=0.0,
                       d_hi=d_up, details=details)


# ---------------------------------------------------------------------------------------------------------------
# exact
# ---------------------------------------------------------------------------------------------------------------
def _reverse_exact_k1_parts(cfg: Config) -> tuple[float, Heavy, ReverseFinish, float, float]:
    """(plain log bound, enumeration, its binomial finish, certain mass, dropped mass) of the k = 1 exact tail."""
    pb, _ = _reverse_problem(cfg, None)
    lb, _, _ = _plain_log_bound(pb)
    log_ref = max(lb, math.log(1e-200))
    try:
        st = _enumerate(pb, log_ref=log_ref, cap=EXACT_MAX_CONFIGS, stop_level=2, stage=lambda s: None)
    except TooMany:
        raise ParameterError(
            f"exact method infeasible for outlier_bits={cfg.j}, population={cfg.population}: more than "
            f"{EXACT_MAX_CONFIGS:,} heavy-count configurations; use method='certified' or 'mc'") from None
    cert = math.exp(st.log_certain) if st.log_certain > -math.inf else 0.0
    drop = math.exp(st.log_dropped) if st.log_dropped > -math.inf else 0.0
    return lb, st, ReverseFinish(pb, st), cert, drop


def _reverse_exact_k1_upper(lb: float, finish_upper: float, cert: float, drop: float) -> float:
    return min(1.0, (finish_upper + cert + drop) * (1.0 + REL_SAFETY) + ABS_FLOOR, _finish_up(lb))


def reverse_exact_upper(*, q: float, bits: int, population: int, epsilon: float,
                        outlier_bits: int | None = None) -> float:
    """``reverse_tail(method="exact", ...).eta_upper`` for one report, the same float, without the lower end, the
    float value and delta (one binomial CDF per configuration instead of five): what the exact calibration search
    reads (issue 10).

    Raises:
        ParameterError: as :func:`reverse_tail`.

    Examples:
        >>> kw = {"q": 0.25, "bits": 3, "population": 50, "epsilon": 0.5}
        >>> reverse_exact_upper(**kw) == reverse_tail(method="exact", **kw).eta_upper
        True
    """
    cfg = check_config(q, bits, population, epsilon, outlier_bits, 1)
    if impossible(cfg.q, cfg.j, cfg.epsilon, cfg.k):
        return 0.0
    lb, _, finish, cert, drop = _reverse_exact_k1_parts(cfg)
    return _reverse_exact_k1_upper(lb, finish.upper(), cert, drop)


def _reverse_exact_k1(cfg: Config) -> TailResult:
    t0 = time.perf_counter()
    lb, st, finish, cert, drop = _reverse_exact_k1_parts(cfg)
    fin = finish.tail()
    fin_delta, fin_delta_err = finish.delta()
    lo = max(0.0, (fin.lower + cert) * (1.0 - REL_SAFETY))
    hi = _reverse_exact_k1_upper(lb, fin.upper, cert, drop)
    raw = min(max(fin.raw + cert, lo), hi)
    d = fin_delta + st.certain_delta
    d_lo = max(0.0, (d - fin_delta_err) * (1.0 - REL_SAFETY))
    d_hi = min(hi, (d + fin_delta_err + drop) * (1.0 + REL_SAFETY) + ABS_FLOOR)
    details = {"direction": "reverse", "configs": st.configs, "dropped_mass": drop,
               "seconds": time.perf_counter() - t0,
               "note": "bracket contains P[R_rev > lambda] and P[R_rev >= lambda] (enumeration + binomial CDF)"}
    return tail_result(cfg, eta=raw, lo=lo, hi=hi, method="exact", kind="exact", delta=min(max(d, d_lo), d_hi),
                       d_lo=d_lo, d_hi=d_hi, details=details)


def _exact_counts(cfg: Config) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every count vector T of n reports: (log P_0(T), log R_fwd(T), log P_m(T) = log R_fwd + log P_0)."""
    n, j = cfg.n, cfg.j
    atoms = math.comb(n + j, j)
    if atoms > _EXACT_MAX_ATOMS:
        raise ParameterError(f"exact method needs C(n + j, j) <= {_EXACT_MAX_ATOMS} count vectors (n = reports * "
                             f"population = {n}, outlier_bits = {j}); got {atoms}; use 'certified' or 'mc'")
    logpi, logw = levels(cfg.q, j)
    counts, log_p0 = count_vector_atoms(logpi, n)
    t = counts.astype(float)
    log_r = log_esp_from_counts(logw, t, cfg.k) - log_comb_large_n(float(n), cfg.k)
    return log_p0, log_r, log_p0 + log_r


def _exact_from_atoms(cfg: Config, log_prob: np.ndarray, log_ratio: np.ndarray, direction: str) -> TailResult:
    """The exact tail statement of the atoms ``(log P, log R)`` of every count vector (:func:`_exact_counts`).

    The same statement as :meth:`sufficientdp.loss.PrivacyLossDistribution.tail` of those atoms (``eta`` at
    ``epsilon``, ties within 1e-9 in ``log R`` counted only in the upper end, ``delta = E[(1 - e**eps/R)_+]``),
    here with the relative margins of the certified bounds and in linear ``math.fsum`` sums of the atoms.
    The distribution's eta comes from a log-domain cumulative sum over merged equal losses instead, a few ulps
    away (<= 6e-15 relative on the pinned cases): routing this through it would move the pinned k > 1 exact and
    small-exact results (tests/ratio/test_tail_engine_golden.py), so the two evaluations stay apart.
    """
    eps = cfg.epsilon
    pr = np.exp(log_prob)

    def tail(e: float) -> float:
        return float(math.fsum(pr[log_ratio > e].tolist()))

    eta = tail(eps)
    lo = tail(eps + 1e-9) * (1.0 - REL_SAFETY)
    hi = min(1.0, tail(eps - 1e-9) * (1.0 + REL_SAFETY) + 1e-15)
    sel = log_ratio > eps
    dval = float(math.fsum((pr[sel] * -np.expm1(eps - log_ratio[sel])).tolist()))
    return tail_result(cfg, eta=eta, lo=lo, hi=hi, method="exact", kind="exact", delta=dval,
                       d_lo=dval * (1 - 1e-9), d_hi=min(1.0, dval * (1 + 1e-9) + 1e-15),
                       details={"direction": direction, "count_vectors": int(log_prob.size),
                            "note": "every count vector enumerated; bracket = ties within 1e-9 in log R"})


def _small_exact(cfg: Config, direction: str) -> TailResult | None:
    """k > 1 and ``C(kN + j, j) <= 2e5``: the exact enumeration, whose upper end (ties within 1e-9 in log R
    included, relative margin 1e-9) is a valid bound and is used by "certified" where it is smaller."""
    if cfg.k == 1 or math.comb(cfg.n + cfg.j, cfg.j) > 200_000:
        return None
    log_p0, log_r, log_pm = _exact_counts(cfg)
    if direction == "reverse":
        return _exact_from_atoms(cfg, log_p0, -log_r, "reverse")
    return _exact_from_atoms(cfg, log_pm, log_r, "forward")


def _reverse_exact(cfg: Config) -> TailResult:
    if impossible(cfg.q, cfg.j, cfg.epsilon, cfg.k):
        return tail_result(cfg, eta=0.0, lo=0.0, hi=0.0, method="exact", kind="exact", delta=0.0, d_lo=0.0,
                           d_hi=0.0, details={"direction": "reverse", "reason": _NEVER})
    if cfg.k == 1:
        return _reverse_exact_k1(cfg)
    log_p0, log_r, _ = _exact_counts(cfg)
    return _exact_from_atoms(cfg, log_p0, -log_r, "reverse")


# ---------------------------------------------------------------------------------------------------------------
# Monte Carlo (tilted by the certified bound; plain when the bound is trivial)
# ---------------------------------------------------------------------------------------------------------------
def _reverse_mc(cfg: Config, rng: np.random.Generator, samples: int, confidence: float) -> TailResult:
    t0 = time.perf_counter()
    if impossible(cfg.q, cfg.j, cfg.epsilon, cfg.k):
        return tail_result(cfg, eta=0.0, lo=0.0, hi=0.0, method="mc", kind="estimate", confidence=confidence,
                           details={"direction": "reverse", "reason": _NEVER})
    rb = _reverse_certified_core(cfg, refine=False)
    cert_up = _finish_up(rb.log_bound)
    pb = rb.problem
    theta = rb.theta
    logpi, logw = levels(cfg.q, cfg.j)
    law = pb.lower_law(pb.v.size)
    lam = float(law.log_mgf(np.array([theta]))[0]) if theta > 0 else 0.0
    log_b = theta * 1.0 + pb.n * lam  # un-inflated Chernoff value (threshold 1 in scaled units)
    lt = logpi - theta * pb.v
    pt = np.exp(lt - logsumexp(lt, split_max=True))
    pt /= pt.sum()
    n, k, eps = cfg.n, cfg.k, cfg.epsilon
    y = np.empty(samples)
    chunk = max(1000, 2_000_000 // (cfg.j + 1) // max(1, k))
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        t = rng.multinomial(n, pt, size=size).astype(float)
        log_r = log_esp_from_counts(logw, t, k) - (math.log(n) if k == 1 else log_comb_large_n(float(n), k))
        hit = log_r < -eps
        su = t @ pb.v
        with np.errstate(over="ignore"):
            yy = np.where(hit, np.exp(np.minimum(theta * (su - 1.0), 0.0)), 0.0)
        y[start:start + size] = yy
    alpha = 1.0 - confidence
    b = math.exp(log_b)
    est = b * float(y.mean())
    half = b * empirical_bernstein(y, alpha)
    lo = max(0.0, est - half)
    hi = min(1.0, est + half, cert_up)
    details = {"direction": "reverse", "samples": samples, "tilt_theta": theta, "chernoff_value": b,
               "hits": int(np.count_nonzero(y > 0)), "truncation_tau": rb.tau, "x_star": rb.x_star,
               "interval": "empirical Bernstein (Maurer-Pontil) on Y in [0, 1], intersected with the certified bound",
               "seconds": time.perf_counter() - t0}
    return tail_result(cfg, eta=min(max(est, lo), hi), lo=min(lo, hi), hi=hi, method="mc", kind="estimate",
                       confidence=confidence, details=details)


def reverse_tail(*, q: float, bits: int, population: int, epsilon: float, method: str = "certified",
                 outlier_bits: int | None = None, reports: int = 1, rng: np.random.Generator | int | None = None,
                 samples: int | None = None, confidence_level: float | None = None,
                 confidence: float | None = None) -> TailResult:
    """``eta_rev = P_{S~A(zeros)}[R_rev(S) > e**epsilon]`` for the reverse homogeneous pair (outlier in D).

    ``R_rev = C(n, k) / e_k(w)`` with all ``n = kN`` reports from zero vectors (k = 1: ``N / sum w``). See the
    derivations (C1)–(C3) and the float-safety conventions in ``docs/proofs/reverse_tail.md``.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 1.
        epsilon: privacy level > 0.
        method: ``"certified"`` (rigorous upper bound), ``"exact"`` (k = 1: heavy-level enumeration + binomial
            CDF; k > 1: every count vector, C(kN + j, j) <= 1e6) or ``"mc"`` (tilted Monte Carlo estimate).
        outlier_bits: j in [1, L] (default L); use :func:`worst_two_sided` for the worst j (ERRATA 5).
        reports: k >= 1 reports per person (ERRATA 4).
        rng, samples, confidence_level: Monte Carlo only.

    Returns:
        A :class:`TailResult` with ``details["direction"] == "reverse"``.

    Raises:
        ParameterError: a parameter out of range (the message names it), or "exact" beyond its limit.

    Examples:
        >>> r = reverse_tail(q=0.2, bits=2, population=4, epsilon=1.0)
        >>> r.kind, r.details["direction"], 0.0 < r.eta <= 1.0
        ('bound', 'reverse', True)
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    method = check_method(method)
    cfg = check_config(q, bits, population, epsilon, outlier_bits, reports)
    if method == "certified":
        return _reverse_certified(cfg)
    if method == "exact":
        return _reverse_exact(cfg)
    n_samp = _MC_DEFAULT_SAMPLES if samples is None else check_int("samples", samples, minimum=100, maximum=MAX_MC_SAMPLES)
    confidence = check_open_interval("confidence_level", confidence, 0.0, 1.0)
    return _reverse_mc(cfg, check_rng(rng), n_samp, confidence)


# ---------------------------------------------------------------------------------------------------------------
# (C4) forward, k reports: Maclaurin + outlier convolution + heavy split
# ---------------------------------------------------------------------------------------------------------------
def _forward_k_log_bound(cfg: Config) -> tuple[float, dict[str, Any]]:
    """Log of a rigorous bound on ``P[sum w >= n e**(eps/k)]`` (n - k zero reports, k outlier reports)."""
    n, k, j = cfg.n, cfg.k, cfg.j
    model = forward_problem(cfg.q, j, n, cfg.epsilon / k)  # v_l = w_l / (n e**(eps/k)), capped at e**700
    v = model.v
    logp0 = model.logpi
    p1 = np.exp(model.logp1)
    # outlier sum on the grid g[0] = 0, g[1..G] geometric in [O_MIN, 1]; index G + 1 means >= 1 (sure)
    g = np.concatenate([[0.0], np.geomspace(_O_MIN, 1.0, _O_GRID)])
    dist = np.zeros(g.size + 1)
    dist[0] = 1.0
    for _ in range(k):
        idx = np.searchsorted(g, g[:, None] + v[None, :], side="left")  # first grid point >= value (rounds up);
        new = np.zeros(g.size + 1)                                       # g.size: above 1, the sure bin
        np.add.at(new, idx.ravel(), (dist[:-1, None] * p1[None, :]).ravel())
        new[-1] += dist[-1]
        dist = new
    sure = float(dist[-1])
    og = g
    m0 = n - k
    y = np.maximum(1.0 - og, 0.0)
    y_dn = y - THRESH_SLACK * (1.0 + y) - 1e-300
    best = np.ones(og.size)
    best_l = np.full(og.size, -1)
    if m0 == 0:
        best = np.where(y_dn <= 0, 1.0, 0.0)
    else:
        for lstar in range(j + 1, 0, -1):
            light = model.upper_law(lstar)
            if lstar == j + 1:
                b = np.exp(light.log_upper(np.full(og.shape, float(m0)), y_dn))
            else:
                log_heavy = float(logsumexp(logp0[lstar:], split_max=True))
                pi_ge = math.exp(log_heavy)
                log_pl = math.log1p(-pi_ge) if pi_ge < 0.5 else float(logsumexp(logp0[:lstar], split_max=True))
                log_p0h = m0 * log_pl
                log_p1h = math.log(m0) + log_heavy + (m0 - 1) * log_pl
                p_ge2 = min(max(0.0, 1.0 - math.exp(log_p0h) - math.exp(log_p1h) + 1e-15),
                            0.5 * m0 * (m0 - 1) * pi_ge * pi_ge)
                b = p_ge2 + math.exp(log_p0h) * np.exp(light.log_upper(np.full(og.shape, float(m0)), y_dn))
                for hl in range(lstar, j + 1):
                    w_h = math.exp(math.log(m0) + logp0[hl] + (m0 - 1) * log_pl)
                    if w_h <= 0:
                        continue
                    t = y_dn - v[hl]
                    b = b + w_h * np.exp(light.log_upper(np.full(og.shape, float(m0 - 1)), t))
            better = b < best
            best = np.where(better, b, best)
            best_l = np.where(better, lstar, best_l)
    best = np.minimum(best, 1.0)
    total = math.fsum((dist[:-1] * best).tolist()) + sure
    log_total = math.log(max(total, 1e-320))
    info = {"p_outlier_sum_ge_threshold": sure, "o_grid": _O_GRID,
            "split_levels_used": sorted({int(x) for x in best_l[dist[:-1] > 0]})}
    return log_total, info


def forward_k_certified(*, q: float, bits: int, population: int, epsilon: float, reports: int = 1,
                        outlier_bits: int | None = None) -> TailResult:
    """Rigorous upper bound on the forward k-report tail ``P[R(S^k) > e**epsilon]`` via Maclaurin (C4).

    ``R(S^k) <= (mean w)**k`` (ERRATA 4), so the tail is at most ``P[sum w >= kN e**(epsilon/k)]`` over
    ``kN - k`` zero reports and ``k`` outlier reports; bounded by exact convolution of the outlier part (rounded
    up) and Chernoff with a heavy-level split for the zero part (docs/proofs/reverse_tail.md). For k = 1 it is a
    valid but looser alternative to :func:`tail.certified_tail`.

    Args:
        q, bits, population, epsilon, outlier_bits: as in :func:`reverse_tail`.
        reports: k >= 1.

    Returns:
        A :class:`TailResult` (``kind="bound"``, ``details["direction"] == "forward"``).

    Raises:
        ParameterError: a parameter out of range.
    """
    cfg = check_config(q, bits, population, epsilon, outlier_bits, reports)
    return _forward_k(cfg)


def _forward_k(cfg: Config) -> TailResult:
    t0 = time.perf_counter()
    if impossible(cfg.q, cfg.j, cfg.epsilon, cfg.k):
        return tail_result(cfg, eta=0.0, lo=0.0, hi=0.0, method="certified", kind="bound", delta=0.0, d_lo=0.0,
                           d_hi=0.0, details={"direction": "forward", "reason": _NEVER})
    log_b, info = _forward_k_log_bound(cfg)
    up = _finish_up(log_b)
    enum = _small_exact(cfg, "forward")
    if enum is not None and enum.eta_upper is not None and enum.eta_upper < up:
        up = float(enum.eta_upper)
        info["exact_enumeration_used"] = True
    details = {"direction": "forward", "seconds": time.perf_counter() - t0, "vacuous": up >= 1.0 - 1e-12,
               "note": "Maclaurin R(S^k) <= (mean w)^k; outlier sum convolved exactly (rounded up); zero reports: "
                       "Chernoff with exact MGF and a heavy-level split (0 or 1 heavy report exact, >= 2 bounded)",
               **info}
    return tail_result(cfg, eta=up, lo=None, hi=up, method="certified", kind="bound", delta=up, d_lo=0.0,
                       d_hi=up, details=details)


def _forward(cfg: Config, method: str, rng: np.random.Generator, samples: int | None,
             confidence: float, with_delta: bool = True) -> TailResult:
    if cfg.k == 1:
        r = homogeneous_tail(q=cfg.q, bits=cfg.bits, population=cfg.population, epsilon=cfg.epsilon,
                             method=method, outlier_bits=cfg.j, rng=rng, samples=samples,
                             confidence_level=confidence, with_delta=with_delta)
        return replace(r, details={**r.details, "direction": "forward"})
    if method == "certified":
        return _forward_k(cfg)
    if method == "exact":
        if impossible(cfg.q, cfg.j, cfg.epsilon, cfg.k):
            return tail_result(cfg, eta=0.0, lo=0.0, hi=0.0, method="exact", kind="exact", delta=0.0,
                               details={"direction": "forward", "reason": _NEVER})
        _, log_r, log_pm = _exact_counts(cfg)
        return _exact_from_atoms(cfg, log_pm, log_r, "forward")
    if cfg.population < 2:
        raise ParameterError("population must be an integer >= 2 for the forward k-report Monte Carlo; got 1")
    r = k_tail_mc(q=cfg.q, bits=cfg.bits, population=cfg.population, reports=cfg.k, epsilon=cfg.epsilon,
                  samples=samples or _MC_DEFAULT_SAMPLES, rng=rng, outlier_bits=cfg.j, confidence_level=confidence)
    return replace(r, details={**r.details, "direction": "forward"})


# ---------------------------------------------------------------------------------------------------------------
# two-sided, worst over j, calibration
# ---------------------------------------------------------------------------------------------------------------
def _combine(cfg: Config, fwd: TailResult | None, rev: TailResult | None, method: str,
             confidence: float | None, extra: dict[str, Any]) -> TailResult:
    parts = [r for r in (fwd, rev) if r is not None]
    worst = max(parts, key=lambda r: (r.eta, r.eta_upper if r.eta_upper is not None else 1.0))
    kind = "bound" if method == "certified" else ("exact" if method == "exact" else "estimate")
    lows = [r.eta_lower for r in parts]
    lo = max(x for x in lows if x is not None) if any(x is not None for x in lows) else None
    hi = max(r.eta_upper if r.eta_upper is not None else 1.0 for r in parts)
    deltas = [r.delta_upper if r.delta_upper is not None else r.delta for r in parts]
    d_hi = max(d for d in deltas if d is not None) if all(d is not None for d in deltas) else None
    worst_dir = worst.details.get("direction", "forward" if worst is fwd else "reverse")
    details = {"direction": "both" if len(parts) == 2 else worst_dir, "worst_direction": worst_dir,
               "forward": None if fwd is None else fwd.to_dict(), "reverse": None if rev is None else rev.to_dict(),
               **extra}
    return tail_result(cfg, eta=worst.eta, lo=lo, hi=hi, method=method, kind=kind,
                       delta=worst.delta if d_hi is not None else None,  # (a direction without delta: none)
                       d_lo=None, d_hi=d_hi, confidence=confidence, details=details)


def two_sided_tail(*, q: float, bits: int, population: int, epsilon: float, method: str = "certified",
                   outlier_bits: int | None = None, reports: int = 1, rng: np.random.Generator | int | None = None,
                   samples: int | None = None, confidence_level: float | None = None,
                   confidence: float | None = None, direction: str = "both", with_delta: bool = True) -> TailResult:
    """``max(eta_fwd, eta_rev)`` for one outlier weight j: both homogeneous pairs (seed 001 eq. 1.7 is symmetric).

    Forward: :func:`tail.homogeneous_tail` for k = 1; for k > 1 ``certified`` = Maclaurin bound (C4),
    ``exact`` = every count vector, ``mc`` = :func:`k_reports.k_tail_mc`. Reverse: :func:`reverse_tail`.
    For ``mc`` each direction runs at confidence ``1 - (1 - confidence)/2`` (Bonferroni), so
    ``[max lowers, max uppers]`` covers the max with probability >= ``confidence``.

    Args:
        q, bits, population, epsilon, method, outlier_bits, reports, rng, samples, confidence_level: as in
            :func:`reverse_tail`.
        direction: a :class:`~sufficientdp.loss.result.Direction`: ``"both"`` (default), ``"forward"`` or
            ``"reverse"`` (aliases ``"modified"``/``"original"``).
        with_delta: False skips the certified forward bound on delta for k = 1 (most of its time at large N):
            the result's ``delta_upper`` is then None; eta is the same float.

    Returns:
        A :class:`TailResult` for the worst direction; ``details["worst_direction"]`` and both results in
        ``details["forward"]``, ``details["reverse"]``.

    Raises:
        ParameterError: a parameter out of range.

    Examples:
        >>> r = two_sided_tail(q=0.2, bits=2, population=4, epsilon=1.0)
        >>> r.details["worst_direction"] in ("forward", "reverse")
        True
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    method = check_method(method)
    direction = check_direction("direction", direction)
    cfg = check_config(q, bits, population, epsilon, outlier_bits, reports)
    confidence = check_open_interval("confidence_level", confidence, 0.0, 1.0)
    gen = check_rng(rng)
    conf_each = 1.0 - (1.0 - confidence) / 2.0 if (method == "mc" and direction == "both") else confidence
    fwd = rev = None
    if direction in ("both", "forward"):
        fwd = _forward(cfg, method, gen, samples, conf_each, with_delta)
    if direction in ("both", "reverse"):
        rev = reverse_tail(q=cfg.q, bits=cfg.bits, population=cfg.population, epsilon=cfg.epsilon, method=method,
                           outlier_bits=cfg.j, reports=cfg.k, rng=gen, samples=samples, confidence_level=conf_each)
    return _combine(cfg, fwd, rev, method, confidence if method == "mc" else None, {})


def worst_two_sided(*, q: float, bits: int, population: int, epsilon: float, method: str = "certified",
                    reports: int = 1, rng: np.random.Generator | int | None = None, samples: int | None = None,
                    confidence_level: float | None = None,
                    confidence: float | None = None, with_delta: bool = True) -> TailResult:
    """``max_{j=1..L} max(eta_fwd(j), eta_rev(j))`` (ERRATA 5: never assume j = L).

    Certified: the max of rigorous bounds. Exact: the max of brackets. Monte Carlo: each (j, direction) at
    Bonferroni level ``1 - (1 - confidence)/(2L)``. ``with_delta=False``: as in :func:`two_sided_tail`.

    Returns:
        A :class:`TailResult` for the worst (j, direction); ``details["per_outlier_bits"]`` has, per j, the
        forward and reverse values.

    Raises:
        ParameterError: a parameter out of range.

    Examples:
        >>> r = worst_two_sided(q=0.2, bits=2, population=4, epsilon=1.0)
        >>> r.outlier_bits in (1, 2) and r.kind == "bound"
        True
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    method = check_method(method)
    cfg = check_config(q, bits, population, epsilon, None, reports)
    confidence = check_open_interval("confidence_level", confidence, 0.0, 1.0)
    gen = check_rng(rng)
    t0 = time.perf_counter()
    conf_j = 1.0 - (1.0 - confidence) / cfg.bits if method == "mc" else confidence
    per: dict[str, Any] = {}
    results: list[TailResult] = []
    for j in range(1, cfg.bits + 1):
        r = two_sided_tail(q=cfg.q, bits=cfg.bits, population=cfg.population, epsilon=cfg.epsilon, method=method,
                           outlier_bits=j, reports=cfg.k, rng=gen, samples=samples, confidence_level=conf_j,
                           with_delta=with_delta)
        results.append(r)
        per[str(j)] = {"forward": r.details["forward"]["eta"], "reverse": r.details["reverse"]["eta"],
                       "worst_direction": r.details["worst_direction"]}
    worst = max(results, key=lambda r: (r.eta, r.eta_upper if r.eta_upper is not None else 1.0))
    lows = [r.eta_lower for r in results if r.eta_lower is not None]
    hi = max(r.eta_upper if r.eta_upper is not None else 1.0 for r in results)
    details = {**worst.details, "per_outlier_bits": per, "seconds": time.perf_counter() - t0,
               "worst_over": "outlier_bits 1..L and both directions"}
    return replace(worst, eta_lower=max(lows) if lows else None, eta_upper=hi, details=details)


def worst_certified_two_sided(q: float, bits: int, population: int, epsilon: float, reports: int,
                               fail_above: float, *, forward_first: bool = False, tight: bool = False,
                               helper: Helper | None = None) -> tuple[bool, float, dict[str, Any]]:
    """(passes, bound, info): worst over j and both directions of certified bounds, stopping at the first
    failure (every computed bound is rigorous, so "passes" is a proof when True).

    ``forward_first`` evaluates the forward direction first (a search passes it when that direction failed last):
    each direction's bounds do not depend on the other's, so the verdict is the same either way, and so is the
    bound of a passing q (the worst of all); a failing q stops at its first failure, which comes sooner.

    ``tight=True``: every bound is refined to the running maximum over the j and directions already bounded, not
    to ``fail_above`` (:func:`~sufficientdp.ratio.tail.worst_certified_forward`'s ``tight``), so a passing q gets
    the worst bound itself (for k = 1 the eta of :func:`worst_two_sided`, tested), which the calibration's
    interpolating search needs: with ``tight=False`` a passing q's bound stops just below ``fail_above`` whatever
    the true worst (at L = 40, N = 10^7: 9.1e-4 reported where the worst bound is 4.4e-5).

    ``helper`` (k = 1, ``tight``): a helper process that bounds some of the forward direction's j beside this one
    (:func:`~sufficientdp.ratio.tail.worst_certified_forward`)."""
    if forward_first:
        ok, worst, info = _worst_forward(q, bits, population, epsilon, reports, fail_above, 0.0, {}, tight, helper)
        if not ok:
            return False, worst, info
        ok, worst, info = _worst_reverse(q, bits, population, epsilon, reports, fail_above, worst, info, tight)
        return ok and worst <= fail_above, worst, info
    ok, worst, info = _worst_reverse(q, bits, population, epsilon, reports, fail_above, 0.0, {}, tight)
    if not ok:
        return False, worst, info
    ok, worst, info = _worst_forward(q, bits, population, epsilon, reports, fail_above, worst, info, tight, helper)
    return ok and worst <= fail_above, worst, info


def _worst_reverse(q: float, bits: int, population: int, epsilon: float, reports: int, fail_above: float,
                   worst: float, info: dict[str, Any], tight: bool = False) -> tuple[bool, float, dict[str, Any]]:
    """The reverse half of :func:`worst_certified_two_sided`, from the running ``(worst, info)``: j = L..1, False
    at the first bound above ``fail_above``."""
    for j in range(bits, 0, -1):
        cfg = Config(q=q, bits=bits, population=population, epsilon=epsilon, j=j, k=reports)
        if impossible(cfg.q, cfg.j, cfg.epsilon, cfg.k):
            continue
        stop = (worst if worst > 0.0 else None) if tight else fail_above
        rb = _reverse_certified_core(cfg, stop_below=stop)
        b = _finish_up(rb.log_bound)
        if b > fail_above and reports > 1:
            b = _reverse_certified(cfg).eta
        if b > worst:
            worst, info = b, {"j": j, "direction": "reverse"}
        if b > fail_above:
            return False, worst, info
    return True, worst, info


def _worst_forward(q: float, bits: int, population: int, epsilon: float, reports: int, fail_above: float,
                   worst: float, info: dict[str, Any], tight: bool = False,
                   helper: Helper | None = None) -> tuple[bool, float, dict[str, Any]]:
    """The forward half of :func:`worst_certified_two_sided`, from the running ``(worst, info)``."""
    if reports == 1:
        b, _, jw, _, complete = worst_certified_forward(q, bits, population, epsilon, fail_above=fail_above,
                                                        tight=tight, helper=helper)
        if b > worst:
            worst, info = b, {"j": jw, "direction": "forward"}
        return complete and b <= fail_above, worst, info
    for j in range(bits, 0, -1):
        cfg = Config(q=q, bits=bits, population=population, epsilon=epsilon, j=j, k=reports)
        if impossible(cfg.q, cfg.j, cfg.epsilon, cfg.k):
            continue
        b = _forward_k(cfg).eta
        if b > worst:
            worst, info = b, {"j": j, "direction": "forward"}
        if b > fail_above:
            return False, worst, info
    return worst <= fail_above, worst, info
