"""One entry point for statements about the privacy ratio, used by calibration and the CLI.

:func:`privacy_tail` answers "what is eta = P[R(S) > e**epsilon]?" for the homogeneous configuration of seed 001
(§1.2, §3): N - 1 identical reports and one neighbour that differs in j bits, in both neighbouring directions
(the neighbour added — the paper's direction — or removed; eq. 1.7 quantifies over both), with k reports per
person, by one of three methods:

* ``"certified"`` — a rigorous upper bound (:mod:`sufficientdp.ratio.tail`, :mod:`sufficientdp.ratio.reverse`);
* ``"exact"`` — exact, for small configurations (:func:`sufficientdp.ratio.tail.exact_tail` and friends);
* ``"mc"`` — a Monte Carlo estimate with a confidence interval.

Unless ``outlier_bits`` is given, the worst over j = 1..L is reported (ERRATA 5). Every result is about the
homogeneous configuration only: that it is the worst case over all collections is the paper's conjecture, which
fails for small collections (docs/worst_case.md); results carry that note.

:func:`calibrate_tail` is the tail-based calibration behind ``calibrate(method="certified" | "mc" | "exact")``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import ParameterError
from .._validation import check_int, check_open_interval, check_positive_finite
from .k_reports import calibrate_k
from .result import TailResult
from .reverse import certified_q_two_sided, two_sided_tail

__all__ = ["DIRECTIONS", "TAIL_METHODS", "WORST_CASE_NOTE", "calibrate_tail", "privacy_tail"]

TAIL_METHODS = ("certified", "exact", "mc")
DIRECTIONS = ("both", "forward", "reverse")
WORST_CASE_NOTE = ("statement about the homogeneous configuration (N - 1 identical reports and one neighbour); "
                   "that it is the worst case over all collections is unproven and fails for some small "
                   "collections (docs/worst_case.md)")


def privacy_tail(*, q: float, bits: int, population: int, epsilon: float, reports: int = 1,
                 outlier_bits: int | None = None, method: str = "certified", direction: str = "both",
                 rng: Any = None, samples: int | None = None, confidence: float = 0.95,
                 progress: Any = None) -> TailResult:
    """``eta = P[R(S) > e**epsilon]`` for the homogeneous configuration (seed 001 eq. 1.7, §3; ERRATA 4, 5).

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 1 people.
        epsilon: > 0.
        reports: k >= 1 reports per person (then R(S^k) = e_k(w)/C(kN, k), ERRATA 4).
        outlier_bits: j in [1, L]; ``None`` for the worst over j = 1..L.
        method: ``"certified"`` (rigorous upper bound), ``"exact"`` (small cases) or ``"mc"`` (estimate).
        direction: ``"both"`` (the worse of the two), ``"forward"`` (neighbour added) or ``"reverse"``.
        rng: a seeded ``numpy.random.Generator`` for ``"mc"`` (default: fresh entropy).
        samples: Monte Carlo samples.
        confidence: level of a Monte Carlo interval (split over j and directions, Bonferroni).
        progress: optional callback ``progress(done, total)`` (one step per outlier weight j).

    Returns:
        A :class:`~sufficientdp.ratio.result.TailResult`; ``kind`` says whether ``eta`` is exact, a bound or an
        estimate, and ``details["direction"]`` which direction is worst.

    Example:
        >>> r = privacy_tail(q=0.169199, bits=5, population=1000, epsilon=2.0, outlier_bits=5)
        >>> r.kind, 0.0037 < r.eta < 0.0038
        ('bound', True)
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    reports = check_int("reports", reports, minimum=1)
    if outlier_bits is not None:
        outlier_bits = check_int("outlier_bits", outlier_bits, minimum=1, maximum=bits)
    if method not in TAIL_METHODS:
        raise ParameterError(f"method must be one of {', '.join(TAIL_METHODS)}; got {method!r}")
    if direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}")
    confidence = check_open_interval("confidence", confidence, 0.0, 1.0)
    if method == "mc" and rng is None:
        rng = np.random.default_rng()
    common: dict[str, Any] = {"q": q, "bits": bits, "population": population, "epsilon": epsilon,
                              "method": method, "reports": reports, "rng": rng, "samples": samples}
    if outlier_bits is not None:
        res = two_sided_tail(outlier_bits=outlier_bits, confidence=confidence, direction=direction, **common)
        if progress is not None:
            progress(1, 1)
    else:
        # Worst over j = 1..L; a Monte Carlo interval is split over the L weights (Bonferroni).
        per_j = 1.0 - (1.0 - confidence) / bits
        results = []
        for j in range(1, bits + 1):
            results.append(two_sided_tail(outlier_bits=j, confidence=per_j, direction=direction, **common))
            if progress is not None:
                progress(j, bits)
        res = max(results, key=lambda r: (r.eta_upper if r.eta_upper is not None else r.eta))
        details = dict(res.details)
        details["per_outlier_bits"] = {str(r.outlier_bits): r.eta for r in results}
        details["worst_outlier_bits"] = res.outlier_bits
        res = _replace_details(res, details)
    details = dict(res.details)
    details.setdefault("direction", direction)
    notes = list(details.get("notes", []))
    notes.append(WORST_CASE_NOTE)
    details["notes"] = notes
    return _replace_details(res, details)


def _replace_details(res: TailResult, details: dict[str, Any]) -> TailResult:
    from dataclasses import replace

    return replace(res, details=details)


def _scan_smallest(passes: Any, q_hi: float, *, grid: int = 12, iterations: int = 18) -> tuple[float, float | None]:
    """Smallest passing q: a top-down geometric grid below ``q_hi``, then bisection between the last passing and
    the first failing grid point (monotonicity is not assumed; a passing q below a failing grid point is not
    searched for). Returns ``(q, eta_at_q)``; ``passes(q)`` returns ``(ok, eta)``."""
    best_q, best_eta = q_hi, 0.0
    fail_q: float | None = None
    for i in range(1, grid + 1):
        qi = q_hi * (1e-3 ** (i / grid))
        ok, eta = passes(qi)
        if not ok:
            fail_q = qi
            break
        best_q, best_eta = qi, eta
    if fail_q is None:
        return best_q, best_eta
    lo, hi = fail_q, best_q
    for _ in range(iterations):
        mid = math.sqrt(lo * hi)
        ok, eta = passes(mid)
        if ok:
            hi, best_eta = mid, eta
        else:
            lo = mid
    return hi, best_eta


def calibrate_tail(*, method: str, bits: int, population: int, epsilon: float, eta: float, reports: int = 1,
                   rng: Any = None, samples: int | None = None,
                   progress: Any = None) -> tuple[float, float | None, list[str]]:
    """Smallest q with ``P[R > e**epsilon] <= eta`` by ``method``; returns ``(q, eta_at_q, notes)``.

    ``"certified"``: the worst-over-j, two-sided certified bound (:func:`~sufficientdp.ratio.reverse.
    certified_q_two_sided`). ``"exact"``: the same with exact tails (small configurations only). ``"mc"``: Monte
    Carlo (:func:`~sufficientdp.ratio.k_reports.calibrate_k`): the upper confidence limit of the forward tail at
    j = L must be <= eta — an estimate, not a bound.
    """
    from ..calibration.calibrate import local_q

    notes: list[str] = []
    q_loc = local_q(bits, epsilon, reports)
    if method == "certified":
        res = certified_q_two_sided(bits=bits, population=population, epsilon=epsilon, eta=eta, reports=reports,
                                    progress=progress)
        if res.details.get("local_dp"):
            notes.append("no flip probability below local DP's meets the target with the certified bound; the "
                         "local-DP q is used (the ratio then never exceeds e^epsilon).")
        if reports > 1:
            notes.append(f"k = {reports}: forward direction bounded through Maclaurin's inequality "
                         "R(S^k) <= (mean w)^k (ERRATA 4), which is conservative.")
        notes.append(WORST_CASE_NOTE)
        return res.q, res.eta, notes
    if method == "exact":
        def passes(qq: float) -> tuple[bool, float]:
            r = privacy_tail(q=qq, bits=bits, population=population, epsilon=epsilon, reports=reports,
                             method="exact")
            hi = r.eta_upper if r.eta_upper is not None else r.eta
            return hi <= eta, hi

        q, at_q = _scan_smallest(passes, q_loc * (1 - 1e-12))
        notes.append("grid + bisection on q; a passing q below the first failing grid point is not searched.")
        notes.append(WORST_CASE_NOTE)
        return q, at_q, notes
    if method == "mc":
        if population < 2:
            raise ParameterError(f"population must be an integer >= 2 for method 'mc'; got {population}")
        kcal = calibrate_k(bits=bits, population=population, reports=reports, epsilon=epsilon, eta=eta,
                           method="mc", rng=rng, samples=samples or 20_000)
        notes.append("Monte Carlo estimate (forward direction, outlier weight j = L): the upper confidence limit "
                     "of eta at q is <= the target; not a bound. Use method 'certified' for a guarantee.")
        at_q = kcal.check.eta_upper if kcal.check.eta_upper is not None else kcal.check.eta
        return kcal.q, at_q, notes
    raise ParameterError(f"method must be one of {', '.join(TAIL_METHODS)}; got {method!r}")
