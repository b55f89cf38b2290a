"""Calibration on the paper's homogeneous configuration (seed 001 §1.2, §3.2): the smallest q by tail bounds.

Every search here is over q and lives in the calibration layer; the tails it evaluates at each q come from the
ratio analysis (:mod:`sufficientdp.ratio.reverse`, :mod:`sufficientdp.ratio.analysis`), which never searches over q.

* :func:`certified_q_two_sided` — the worst-over-j, two-sided certified bound (k = 1; k > 1 through the reduction
  bounds of :mod:`~sufficientdp.ratio.reverse`);
* :func:`calibrate_tail` — ``calibrate(method="homogeneous" | "exact" | "mc")``: the certified search above, the
  k > 1 heavy-report conditioning, exact tails or Monte Carlo.

Every result is about the homogeneous configuration only (scope ``homogeneous``): that it is the worst case over
all collections is the paper's conjecture, which fails (ERRATA 5, docs/worst_case.md); ``method="proven"``
(:mod:`.proven`) covers every collection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._errors import CalibrationError, ParameterError
from .._offload import helper_process
from .._validation import MAX_MC_SAMPLES, check_int, check_open_interval, check_positive_finite, renamed
from ..loss.result import TailResult
from ..parameters import effective_bits, local_q
from ..ratio.analysis import K_NOTE, WORST_CASE_NOTE, certified_k_direction, exact_eta_upper, privacy_tail
from ..ratio.proven import second_process_allowed
from ..ratio.reverse import two_sided_tail, worst_certified_two_sided, worst_two_sided
from .search import Q_FLOOR, bracket_smallest, scan_smallest

__all__ = ["calibrate_tail", "certified_q_two_sided"]

_METHODS = ("homogeneous", "exact", "mc")
#: The search's grid points per factor 1000 in q and its tolerance (bisection steps within the grid's last
#: interval: about 1.4e-4 of q), of certified_q_two_sided and the calibrations.
_GRID, _ITERATIONS = 12, 12
_SHARED_BITS = 36
"""Effective bits from which the two-sided search shares the forward scan's j with a helper process: the helper's
start-up and its own tables cost about what it gains at L = 30-32 (five alternating runs each, docs/benchmarks.md);
at L = 40, N = 10^7 the search takes 3.7-4.2 s instead of 4.2-4.5 s, at L = 64 9-10 s instead of 12 s. Below, one
process (at L = 16 the helper made it 1.5 -> 1.75 s)."""


def _calibration_inputs(bits: Any, population: Any, epsilon: Any, eta: Any, grid: Any, iterations: Any,
                        max_weight: Any) -> tuple[int, int, float, float, int, int, int, list[str]]:
    """Validated inputs of a certified-q search, ``L_eff`` (seed 001 §5) and the note that goes with it."""
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    eta = check_open_interval("eta", eta, 0.0, 1.0)
    grid = check_int("grid", grid, minimum=4)
    iterations = check_int("iterations", iterations, minimum=1)
    l_eff = effective_bits(bits, max_weight)
    notes: list[str] = []
    if max_weight is not None and l_eff < bits:
        notes.append(f"cardinality reduction L_eff = min(L, 2w) = {l_eff} (seed 001 §5) is an unproven remark of "
                     "the paper (ERRATA 6)")
    return bits, population, epsilon, eta, grid, iterations, l_eff, notes


def certified_q_two_sided(*, bits: int, population: int, epsilon: float, eta: float, reports: int = 1,
                          max_weight: int | None = None, grid: int = _GRID, iterations: int = _ITERATIONS,
                          progress: Callable[[int, int], None] | None = None, with_delta: bool = True) -> TailResult:
    """Smallest q whose worst-over-j, two-sided certified bound is ``<= eta`` (a top-down grid, then a bracketing
    search; monotonicity in q is not assumed, only "fails at lo, passes at hi" is kept).

    At the local-DP q ``q_loc = 1/(1 + e**(eps/(kL)))`` we have ``(p/q)**(kL) = e**eps`` and every ratio in both
    directions is ``<= (p/q)**(jk) <= e**eps`` (k reports: ``R_fwd <= (max w)**k``, ``R_rev <= (1/min w)**k``),
    so eta = 0 there. The search is :func:`~sufficientdp.calibration.search.bracket_smallest` below ``q_loc``: the
    grid ``q_loc 1e-3**(i/grid)``, i = 1..grid, then factors of 8 down to 1e-12, to the first failing point, then
    regula falsi on ``log(-log eta)`` against ``log q`` until the bracket is as narrow as ``iterations`` bisections
    would leave it (relative width about ``0.58 / 2**iterations`` with the defaults: 1.4e-4; 5e-4 below the grid).
    If no point below ``q_loc`` passes,
    ``q_loc (1 + 1e-12)`` is returned (nudged up so that float rounding cannot break ``R <= e**eps``) with eta = 0
    and ``details["local_dp"] = True``.

    ``max_weight=w`` uses ``L_eff = min(L, 2w)`` (seed 001 §5, an unproven remark; ERRATA 6), stated in notes.

    Args:
        bits: L >= 1.
        population: N >= 1.
        epsilon: > 0.
        eta: target in (0, 1).
        reports: k >= 1.
        max_weight: optional bound on set bits per report.
        grid: points of the grid per factor 1000 in q (>= 4).
        iterations: the tolerance, as bisection steps within the grid's last interval (>= 1).
        progress: optional callback ``progress(done, total)`` after each evaluation (``total`` is an upper
            bound on the number of evaluations), for progress bars in adapters.
        with_delta: the result at the returned q also bounds delta (for k = 1 the forward delta bound costs
            more than the whole search at large N); False leaves the result's ``delta_upper`` None, with the
            same q and eta.

    Returns:
        A :class:`TailResult` at the returned ``q`` (``kind="bound"``); ``details["q_fail"]`` is the largest q
        below it observed to fail (None if none was evaluated).

    Raises:
        ParameterError: a parameter out of range.

    Examples:
        >>> r = certified_q_two_sided(bits=2, population=50, epsilon=1.0, eta=0.05, grid=4, iterations=4)
        >>> r.eta <= 0.05
        True
    """
    bits, population, epsilon, eta, grid, iterations, l_eff, notes = _calibration_inputs(
        bits, population, epsilon, eta, grid, iterations, max_weight)
    reports = check_int("reports", reports, minimum=1)
    t0 = time.perf_counter()
    found = _two_sided_search(l_eff, population, epsilon, eta, reports, grid, iterations, progress)
    hi, evals, q_loc = found.q, found.evaluations, found.q_local
    fails = [e["q"] for e in evals if not e["passes"] and e["q"] < hi]
    base = {"target_eta": eta, "effective_bits": l_eff, "notes": notes, "evaluations": evals, "q_local": q_loc,
            "search": "top-down grid then regula falsi on log(-log eta); monotonicity in q not assumed",
            "direction": "both"}
    if found.local_dp:
        details = {**base, "q_fail": max(fails, default=None), "local_dp": True,
                   "seconds": time.perf_counter() - t0,
                   "reason": "no q below the local-DP q meets the two-sided certified target; at q_local "
                             "(p/q)**(kL) <= e**epsilon so R <= e**epsilon surely in both directions (eta = 0)"}
        return TailResult(eta=0.0, eta_lower=0.0, eta_upper=0.0, method="certified", kind="bound", epsilon=epsilon,
                          q=hi, bits=bits, population=population, reports=reports, outlier_bits=l_eff,
                          delta=0.0, delta_lower=0.0, delta_upper=0.0, details=details)
    res = worst_two_sided(q=hi, bits=l_eff, population=population, epsilon=epsilon, reports=reports,
                          with_delta=with_delta)
    if not res.eta <= eta:  # pragma: no cover - verified by the search
        raise CalibrationError("internal: returned q does not verify")
    details = {**res.details, **base, "q_fail": max(fails, default=None), "local_dp": False,
               "seconds": time.perf_counter() - t0}
    return replace(res, q=hi, bits=bits, details=details)


@dataclass(frozen=True, slots=True)
class _Found:
    """What :func:`_two_sided_search` found: ``q`` and the worst two-sided bound ``eta`` there (the search's own
    evaluation at that very q), the evaluations, the local-DP q, and whether ``q`` is the local-DP point."""

    q: float
    eta: float
    evaluations: list[dict[str, Any]]
    q_local: float
    local_dp: bool


def _two_sided_search(l_eff: int, population: int, epsilon: float, eta: float, reports: int, grid: int,
                      iterations: int, progress: Callable[[int, int], None] | None) -> _Found:
    """The search of :func:`certified_q_two_sided` (validated inputs). Each q is bounded by
    :func:`~sufficientdp.ratio.reverse.worst_certified_two_sided` with ``tight=True``: a passing q's bound is the
    worst two-sided bound itself, so the interpolation between passing and failing q sees how far each is from
    the target (bounds stopped just below the target had cost 20 evaluations instead of 13 at L = 40,
    N = 10^7), and at the returned q it is the eta of :func:`~sufficientdp.ratio.reverse.worst_two_sided` for
    k = 1 (tests/calibration/test_homogeneous_calibration.py)."""
    evals: list[dict[str, Any]] = []

    total = 4 + 2 * iterations  # (typical: a few grid points, then about two probes per halving; an estimate)

    failed_forward = [False]  # the direction that failed last is evaluated first (the same verdicts, sooner)
    helper: list[Any] = [None]

    def passes(qq: float) -> tuple[bool, float]:
        ok, b, info = worst_certified_two_sided(qq, l_eff, population, epsilon, reports, eta,
                                                forward_first=failed_forward[0], tight=True, helper=helper[0])
        if not ok:
            failed_forward[0] = info.get("direction") == "forward"
        evals.append({"q": qq, "bound": b, "passes": ok, **info})
        if progress is not None:
            progress(len(evals), max(total, len(evals) + 1))
        return ok, b  # (failing: the first bound above eta, a lower bound of the worst; passing: the worst)

    q_loc = local_q(l_eff, epsilon, reports)
    top = q_loc * (1.0 - 1e-12)  # eta = 0 at q_loc: the search's passing end, evaluated only as the fallback
    # the forward scan's j shared with a helper process where the scan is long enough to gain (k = 1)
    with helper_process(enabled=reports == 1 and l_eff >= _SHARED_BITS and second_process_allowed()) as helper[0]:
        hi, at_hi = bracket_smallest(passes, top, eta, grid=grid, iterations=iterations, floor=Q_FLOOR)
    if hi == top and not any(e["q"] == top and e["passes"] for e in evals):
        # q_loc nudged up until the two-sided tail (whose thresholds carry a safety slack) sees eta = 0: 1e-12 is
        # enough at small epsilon, not at epsilon = 20..50 (eta read 0.99 there: "internal: ..." before)
        for nudge in (1e-12, 1e-10, 1e-8):
            q_ret = min(q_loc * (1.0 + nudge), 0.5 - 1e-15)
            at_local = worst_two_sided(q=q_ret, bits=l_eff, population=population, epsilon=epsilon, reports=reports)
            if at_local.eta == 0.0:
                break
        else:  # pragma: no cover - q_loc is the local-DP point by construction
            raise CalibrationError("internal: the local-DP q does not give (p/q)**(kL) <= e**epsilon")
        return _Found(q_ret, 0.0, evals, q_loc, True)
    if at_hi is None or not at_hi <= eta:  # pragma: no cover - bracket_smallest returns a verified pass
        raise CalibrationError("internal: the search's q does not verify")
    return _Found(hi, float(at_hi), evals, q_loc, False)


def calibrate_tail(*, method: str, bits: int, population: int, epsilon: float, eta: float, reports: int = 1,
                   rng: Any = None, samples: int | None = None, progress: Any = None,
                   confidence_level: float | None = None,
                   confidence: float | None = None) -> tuple[float, float | None, list[str]]:
    """Smallest q with ``P[R > e**epsilon] <= eta`` by ``method``; returns ``(q, eta_at_q, notes)``.

    ``"homogeneous"`` (also ``"certified"``, its old name): the worst-over-j, two-sided certified bound (k = 1: :func:`~sufficientdp.ratio.reverse.
    certified_q_two_sided`; k > 1: the heavy-report conditioning of :func:`~sufficientdp.ratio.k_reports.
    k_tail_certified`). ``"exact"``: the same with exact tails (small configurations only). ``"mc"``: Monte Carlo
    with the sampler of ``privacy_tail(method="mc")`` (worst over j, both directions): the upper confidence limit
    at ``confidence`` must be <= eta, and ``eta_at_q`` is that limit from an independent re-check — an estimate,
    not a bound.
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    notes: list[str] = []
    q_loc = local_q(bits, epsilon, reports)
    if method in ("homogeneous", "certified"):
        if reports > 1 and population >= 2:
            return _certified_q_k(bits=bits, population=population, epsilon=epsilon, eta=eta, reports=reports,
                                  q_loc=q_loc, progress=progress)
        bits, population, epsilon, eta, grid, iterations, l_eff, _ = _calibration_inputs(
            bits, population, epsilon, eta, _GRID, _ITERATIONS, None)
        found = _two_sided_search(l_eff, population, epsilon, eta, check_int("reports", reports, minimum=1), grid,
                                  iterations, progress)
        # (only q and eta are returned: the search's own bound at q, which for k = 1 is worst_two_sided's eta)
        if found.local_dp:
            notes.append("no flip probability below local DP's meets the target with the certified bound; the "
                         "local-DP q is used (the ratio then never exceeds e^epsilon).")
        if reports > 1:
            notes.append(f"k = {reports}: forward direction bounded through Maclaurin's inequality "
                         "R(S^k) <= (mean w)^k (ERRATA 4), which is conservative.")
        notes.append(WORST_CASE_NOTE)
        return found.q, found.eta, notes
    if method == "exact":
        calls = [0]

        def passes(qq: float) -> tuple[bool, float]:
            # every outlier weight j and both directions must pass; stop at the first that fails (j = L first,
            # usually the worst), so failing q cost one or two exact tails instead of 2 L
            calls[0] += 1
            if progress is not None:
                progress(min(calls[0], 11), 12)
            worst = 0.0
            for j in range(bits, 0, -1):
                for d in ("forward", "reverse"):
                    if reports == 1:  # the same float as privacy_tail's eta_upper, faster
                        hi = exact_eta_upper(q=qq, bits=bits, population=population, epsilon=epsilon,
                                             outlier_bits=j, direction=d)
                    else:
                        r = privacy_tail(q=qq, bits=bits, population=population, epsilon=epsilon, reports=reports,
                                         method="exact", outlier_bits=j, direction=d)
                        hi = r.eta_upper if r.eta_upper is not None else r.eta
                    worst = max(worst, hi)
                    if hi > eta:
                        return False, worst
            return True, worst

        # the grid and tolerance of scan_smallest(iterations=12), reached by interpolation of log(-log eta) in log q
        q, at_q = bracket_smallest(passes, q_loc * (1 - 1e-12), eta, iterations=12)
        if progress is not None:
            progress(12, 12)
        notes.append("grid on q, then bracketing (log(-log eta) interpolated in log q) to the tolerance of 12 "
                     "bisections; a passing q below the first failing grid point is not searched.")
        notes.append(WORST_CASE_NOTE)
        return q, at_q, notes
    if method == "mc":
        return _mc_q(bits=bits, population=population, epsilon=epsilon, eta=eta, reports=reports, q_loc=q_loc,
                     rng=rng, samples=samples, confidence=confidence, progress=progress)
    raise ParameterError(f"method must be one of {', '.join(_METHODS)}; got {method!r}")


def _local_point(q_loc: float) -> float:
    """The local-DP q nudged up so that float rounding cannot break ``(p/q)**(kL) <= e**epsilon`` (eta = 0)."""
    return min(q_loc * (1.0 + 1e-12), 0.5 - 1e-15)


def _certified_q_k(*, bits: int, population: int, epsilon: float, eta: float, reports: int, q_loc: float,
                   progress: Any = None) -> tuple[float, float, list[str]]:
    """k > 1 certified calibration: smallest q on the search path whose worst-over-j, two-sided certified bound
    (:func:`certified_k_direction`) is <= eta. Every (j, direction) stops refining as soon as its bracket decides
    pass (upper <= eta) or fail (lower > eta); a pass is therefore a proof."""
    q_hi = _local_point(q_loc)
    calls = [0]

    def passes(qq: float) -> tuple[bool, float]:
        calls[0] += 1
        if progress is not None:
            progress(calls[0], max(calls[0], 32))
        worst = 0.0
        for j in range(bits, 0, -1):
            for d in ("forward", "reverse"):
                r = certified_k_direction(q=qq, bits=bits, population=population, epsilon=epsilon,
                                           reports=reports, j=j, direction=d, stop_below=eta, stop_above=eta)
                worst = max(worst, r.eta)
                if r.eta > eta:
                    return False, worst
        return True, worst

    q, at_q = bracket_smallest(passes, q_hi, eta, iterations=_ITERATIONS)  # (as k = 1)
    notes: list[str] = []
    if q >= q_hi:
        notes.append("no flip probability below local DP's meets the target with the certified bound; the "
                     "local-DP q is used (the ratio then never exceeds e^epsilon).")
        at = 0.0
    else:
        full = privacy_tail(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports,
                            method="homogeneous")
        at = min(full.eta, at_q if at_q is not None else 1.0)
        if not at <= eta:  # pragma: no cover - the search verified the pass at q
            raise CalibrationError("internal: the certified k-report bound at the returned q exceeds the target")
    notes.append(f"k = {reports}: " + K_NOTE + " (both directions, worst outlier weight j).")
    notes.append("top-down grid, then regula falsi on q; a passing q below the first failing grid point is not "
                 "searched.")
    notes.append(WORST_CASE_NOTE)
    return q, at, notes


_MC_RECHECKS = 24  # independent re-checks before falling back to the local-DP q
_MC_RAISE = 0.02  # each failed re-check moves q 2% of the way to the local-DP q


def _mc_q(*, bits: int, population: int, epsilon: float, eta: float, reports: int, q_loc: float, rng: Any,
          samples: int | None, confidence: float, progress: Any = None) -> tuple[float, float, list[str]]:
    """Monte Carlo calibration with the sampler of ``privacy_tail(method="mc")`` (worst over j = 1..L and both
    directions; k = 1 importance-sampled): the smallest q on the search path whose upper confidence limit is
    <= eta, with common random numbers (one seed for every search step), then an independent re-check at q with
    fresh samples. If the re-check's upper limit exceeds eta, q is raised (2% of the way to the local-DP q) and
    re-checked with new samples, at most 24 times; then the local-DP q (eta = 0 exactly) is returned. The
    returned eta is the accepted re-check's upper confidence limit, so it never exceeds the target."""
    if population < 2:
        raise ParameterError(f"population must be an integer >= 2 for method 'mc'; got {population}")
    confidence = check_open_interval("confidence_level", confidence, 0.0, 1.0)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    # checked here: a sampler's ParameterError below would be taken for a failed draw (the except ValueError)
    n_samples = (check_int("samples", samples, minimum=1000 if reports == 1 else 1, maximum=MAX_MC_SAMPLES)
                 if samples is not None else (20_000 if reports == 1 else 50_000))
    seed = int(gen.integers(0, 2**63 - 1))
    q_hi = _local_point(q_loc)
    calls = [0]

    per_j = 1.0 - (1.0 - confidence) / bits  # Bonferroni over j, as privacy_tail(method="mc")
    fallbacks: set[int] = set()

    def upper_at(qq: float, s: int) -> float:
        """The worst over j of the two-sided Monte Carlo upper limits (privacy_tail's sampler); stops at the
        first j above the target (j = L first)."""
        calls[0] += 1
        if progress is not None:
            progress(calls[0], max(calls[0], 24))
        gen_s = np.random.default_rng(s)
        worst = 0.0
        for j in range(bits, 0, -1):
            try:
                r = two_sided_tail(q=qq, bits=bits, population=population, epsilon=epsilon, method="mc",
                                   outlier_bits=j, reports=reports, rng=gen_s, samples=n_samples,
                                   confidence_level=per_j)
                up = r.eta_upper if r.eta_upper is not None else 1.0
            except ValueError:
                # tail.mc_tail cannot draw when every live configuration's weight underflows (an astronomically
                # small tail); a rigorous upper bound is a valid upper confidence limit at any level
                fallbacks.add(j)
                up = two_sided_tail(q=qq, bits=bits, population=population, epsilon=epsilon,
                                    method="certified", outlier_bits=j, reports=reports).eta
            worst = max(worst, up)
            if worst > eta:
                break
        return worst

    def passes(qq: float) -> tuple[bool, float]:
        up = upper_at(qq, seed)
        return up <= eta, up

    q, _ = scan_smallest(passes, q_hi, iterations=12)
    level = f"{100 * confidence:g}%"
    notes = [f"Monte Carlo estimate, not a bound: the {level} upper confidence limit of eta (worst outlier weight "
             "j and both directions, Bonferroni-split) is <= the target at q. Use method 'homogeneous' or "
             "'proven' for a guarantee."]
    raised = 0
    at_q = 0.0
    while q < q_hi:
        at_q = upper_at(q, seed + 1 + raised)
        if at_q <= eta:
            break
        raised += 1
        if raised > _MC_RECHECKS:
            q = q_hi
            break
        q = q + _MC_RAISE * (q_hi - q)
    if q >= q_hi:
        q, at_q = q_hi, 0.0
        notes.append("the Monte Carlo criterion was not met below the local-DP flip probability; the local-DP q is "
                     "used (there the ratio never exceeds e^epsilon, eta = 0 exactly).")
    else:
        notes.append(f"search with common random numbers (seed {seed}); eta at q is the upper confidence limit of "
                     f"an independent re-check with fresh samples ({n_samples} per (j, direction))"
                     + (f"; q was raised {raised} time(s) until that re-check met the target." if raised else "."))
    if fallbacks:
        notes.append("at some search steps the importance sampler had nothing to draw for outlier weight j = "
                     + ", ".join(str(x) for x in sorted(fallbacks)) + " (the tail underflows); the rigorous "
                     "certified bound was used there.")
    notes.append(WORST_CASE_NOTE)
    return q, at_q, notes
