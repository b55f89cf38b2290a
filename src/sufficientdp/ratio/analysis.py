"""One entry point for statements about the privacy ratio, used by calibration and the CLI.

:func:`privacy_tail` answers "what is eta = P[R(S) > e**epsilon]?". By default (``method="proven"``) over **every**
pair of neighbouring collections (:mod:`sufficientdp.ratio.proven`, scope ``all-collections``). The other methods
are about the homogeneous configuration of seed 001 (§1.2, §3) only: N - 1 identical reports and one neighbour
that differs in j bits, in both neighbouring directions (a :class:`~sufficientdp.loss.result.Direction`: the
outlier in ``D_m`` — the paper's pair — or in ``D``; eq. 1.7 quantifies over both), with k reports per person:

* ``"homogeneous"`` (formerly ``"certified"``) — a rigorous upper bound for that configuration
  (:mod:`sufficientdp.ratio.tail`, :mod:`sufficientdp.ratio.reverse`; for k > 1 reports
  :func:`sufficientdp.ratio.k_reports.k_tail_certified`, with the reduction bounds of
  :mod:`~sufficientdp.ratio.reverse` where smaller). ``eta_lower``, where given, is a rigorous lower bound: for k > 1
  the lower end of ``reverse.reverse_tail`` is *not* one (it bounds a larger event) and is never passed on;
* ``"exact"`` — exact, for small configurations (:func:`sufficientdp.ratio.tail.exact_tail` and friends);
* ``"mc"`` — a Monte Carlo estimate with a confidence interval (k = 1: importance sampling; k > 1: plain draws of
  the count vectors forward, tilted draws in reverse).

Unless ``outlier_bits`` is given, the worst over j = 1..L is reported (ERRATA 5). Every result is about the
homogeneous configuration only: that it is the worst case over all collections is the paper's conjecture, which
fails for small collections (docs/worst_case.md); results carry that note.

The searches over q that use these tails live in :mod:`sufficientdp.calibration.homogeneous`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .._errors import ParameterError
from .._validation import MAX_BITS, MAX_POPULATION, check_epsilon, check_int, check_open_interval, check_reports
from ..loss.result import DIRECTIONS, TailResult, check_direction
from .proven import proven_tail

__all__ = ["DIRECTIONS", "K_NOTE", "TAIL_METHODS", "WORST_CASE_NOTE", "certified_k_direction", "exact_eta_upper",
           "privacy_tail"]

TAIL_METHODS = ("proven", "homogeneous", "exact", "mc")
#: Old name of ``"homogeneous"``, still accepted (with a DeprecationWarning): "certified" read as if it covered
#: every collection, while it bounds the homogeneous configuration only.
_RENAMED = {"certified": "homogeneous"}
WORST_CASE_NOTE = ("statement about the homogeneous configuration (N - 1 identical reports and one neighbour); "
                   "that it is the worst case over all collections is unproven and fails for some small "
                   "collections (docs/worst_case.md)")


def privacy_tail(*, q: float, bits: int, population: int, epsilon: float, reports: int = 1,
                 outlier_bits: int | None = None, method: str = "proven", direction: str = "both",
                 rng: Any = None, samples: int | None = None, confidence_level: float = 0.95,
                 progress: Any = None) -> TailResult:
    """``eta = P[R(S) > e**epsilon]``: over every collection (default) or for the homogeneous configuration.

    ``method="proven"`` (default) is :func:`sufficientdp.ratio.proven.proven_tail`: a rigorous upper bound over
    **every** pair of neighbouring collections of {0,1}^L, both directions (exact at L = 1, one report);
    ``scope="all-collections"``. The other methods are about the paper's homogeneous configuration only
    (seed 001 eq. 1.7, §3; ERRATA 4, 5), ``scope="homogeneous"``: ``"homogeneous"`` (a rigorous upper bound for
    that configuration), ``"exact"`` (small cases) or ``"mc"`` (an estimate with an interval).

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 1 people.
        epsilon: > 0.
        reports: k >= 1 reports per person (then R(S^k) = e_k(w)/C(kN, k), ERRATA 4).
        outlier_bits: j in [1, L]; ``None`` for the worst over j = 1..L.
        method: ``"proven"``, ``"homogeneous"``, ``"exact"`` or ``"mc"`` (above); ``"certified"`` is the
            deprecated name of ``"homogeneous"``.
        direction: a :class:`~sufficientdp.loss.result.Direction`: ``"both"`` (the worse of the two),
            ``"forward"`` (the outlier in ``D_m``, the paper's pair) or ``"reverse"`` (the outlier in ``D``); the
            aliases ``"modified"``/``"original"`` are accepted.
        rng: a seeded ``numpy.random.Generator`` for ``"mc"`` (default: fresh entropy).
        samples: Monte Carlo samples.
        confidence_level: confidence level of a Monte Carlo interval, in (0, 1) (split over j and directions,
            Bonferroni; the result's ``confidence``).
        progress: optional callback ``progress(done, total)`` (one step per outlier weight j).

    Returns:
        A :class:`~sufficientdp.loss.result.TailResult`; ``kind`` says whether ``eta`` is exact, a bound or an
        estimate, and ``details["direction"]`` which direction is worst.

    Examples:
        >>> r = privacy_tail(q=0.169199, bits=5, population=1000, epsilon=2.0, outlier_bits=5,
        ...                  method="homogeneous")
        >>> r.kind, r.scope, r.method, 0.0037 < r.eta < 0.0038
        ('bound', 'homogeneous', 'homogeneous', True)
    """
    q, bits, population, epsilon, reports, outlier_bits = _check_tail_inputs(q, bits, population, epsilon, reports,
                                                                            outlier_bits)
    if method in _RENAMED:
        warnings.warn(f"method {method!r} is renamed {_RENAMED[method]!r} (it bounds the homogeneous configuration "
                      "only; 'proven' covers every collection)", DeprecationWarning, stacklevel=2)
        method = _RENAMED[method]
    if method not in TAIL_METHODS:
        raise ParameterError(f"method must be one of {', '.join(TAIL_METHODS)}; got {method!r}")
    direction = check_direction("direction", direction)
    confidence = check_open_interval("confidence_level", confidence_level, 0.0, 1.0)
    if method == "proven":
        given = [name for name, value in (("outlier_bits", outlier_bits), ("rng", rng), ("samples", samples))
                 if value is not None] + (["direction"] if direction != "both" else [])
        if given:
            raise ParameterError(f"{', '.join(given)} does not apply to method 'proven' (it covers every pair of "
                                 "neighbouring collections, both directions); use method 'homogeneous', 'exact' "
                                 "or 'mc' for one configuration")
        return proven_tail(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports,
                           progress=progress)
    # The homogeneous machinery imports scipy.special (0.2-0.4 s at start-up), which the default proven method
    # above does not need: it is imported on first use (issue 10: start-up).
    from .reverse import two_sided_tail

    inner = "certified" if method == "homogeneous" else method
    if method == "mc" and rng is None:
        rng = np.random.default_rng()
    common: dict[str, Any] = {"q": q, "bits": bits, "population": population, "epsilon": epsilon,
                              "method": inner, "reports": reports, "rng": rng, "samples": samples}
    if inner == "certified" and reports > 1:
        res = _certified_k_worst(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports,
                                 outlier_bits=outlier_bits, direction=direction, progress=progress)
    elif outlier_bits is not None:
        res = two_sided_tail(outlier_bits=outlier_bits, confidence_level=confidence, direction=direction, **common)
        if progress is not None:
            progress(1, 1)
    else:
        # Worst over j = 1..L; a Monte Carlo interval is split over the L weights (Bonferroni).
        per_j = 1.0 - (1.0 - confidence) / bits
        results = []
        for j in range(1, bits + 1):
            results.append(two_sided_tail(outlier_bits=j, confidence_level=per_j, direction=direction, **common))
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
    res = _replace_details(res, details)
    if method == "homogeneous":
        return replace(res, method="homogeneous", details=_relabel(res.details))
    return res


def _check_tail_inputs(q: Any, bits: Any, population: Any, epsilon: Any, reports: Any,
                       outlier_bits: Any) -> tuple[float, int, int, float, int, int | None]:
    """The checks of :func:`privacy_tail`'s configuration (ParameterError naming the parameter)."""
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)
    population = check_int("population", population, minimum=1, maximum=MAX_POPULATION)
    epsilon = check_epsilon(epsilon)
    reports = check_reports(reports)
    if outlier_bits is not None:
        outlier_bits = check_int("outlier_bits", outlier_bits, minimum=1, maximum=bits)
    return q, bits, population, epsilon, reports, outlier_bits


def exact_eta_upper(*, q: float, bits: int, population: int, epsilon: float, outlier_bits: int,
                    direction: str) -> float:
    """``privacy_tail(method="exact", outlier_bits=j, direction=direction).eta_upper`` for one report and one
    direction (``"forward"`` or ``"reverse"``), the same float after the same checks, without the rest of the result
    (:func:`sufficientdp.ratio.tail.exact_tail_upper`, :func:`sufficientdp.ratio.reverse.reverse_exact_upper`):
    what the exact calibration search reads at each q (issue 10).

    Raises:
        ParameterError: a parameter out of range, or the configuration is beyond the exact method's limit.

    Examples:
        >>> kw = {"q": 0.25, "bits": 3, "population": 50, "epsilon": 0.5, "outlier_bits": 3}
        >>> exact_eta_upper(direction="reverse", **kw) == privacy_tail(method="exact", direction="reverse",
        ...                                                            **kw).eta_upper
        True
    """
    # scipy.special on first use, as privacy_tail's homogeneous methods
    from .reverse import reverse_exact_upper  # noqa: PLC0415
    from .tail import exact_tail_upper  # noqa: PLC0415

    q, bits, population, epsilon, _, j = _check_tail_inputs(q, bits, population, epsilon, 1, outlier_bits)
    one = exact_tail_upper if check_direction("direction", direction) == "forward" else reverse_exact_upper
    return one(q=q, bits=bits, population=population, epsilon=epsilon, outlier_bits=j)


def _relabel(obj: Any) -> Any:
    """The inner functions' name of the homogeneous bound, ``"certified"``, as ``"homogeneous"`` in the nested
    results (``details["forward"]``, ``["reverse"]``, ...), so that one tail says one method throughout."""
    if isinstance(obj, TailResult):
        return replace(obj, method="homogeneous" if obj.method == "certified" else obj.method,
                       details=_relabel(obj.details))
    if isinstance(obj, Mapping):  # dicts and the frozen details of a TailResult
        return {k: ("homogeneous" if k == "method" and v == "certified" else _relabel(v)) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_relabel(v) for v in obj)
    return obj


def _replace_details(res: TailResult, details: dict[str, Any]) -> TailResult:
    return replace(res, details=details)


# ---------------------------------------------------------------------------------------------------------------
# certified, k > 1 reports: heavy-report conditioning (k_reports.k_tail_certified) with the reduction bounds of
# reverse.py as a fallback upper bound; lower bounds only from statements that are lower bounds
# ---------------------------------------------------------------------------------------------------------------
_LOOSE = 1.05  # the reverse.py upper bound is tried as well when our bracket is wider than this factor
K_NOTE = ("k > 1: heavy reports conditioned exactly and the light ones bracketed through Maclaurin's inequality "
           "(above) and the ordered-tuple product (below), then Chernoff / Cantelli (k_reports.k_tail_certified); "
           "the reduction bounds of ratio.reverse are used where smaller; eta_lower is a rigorous lower bound")


def certified_k_direction(*, q: float, bits: int, population: int, epsilon: float, reports: int, j: int,
                           direction: str, stop_below: float | None = None,
                           stop_above: float | None = None) -> TailResult:
    """Rigorous bracket on one direction's k-report tail: :func:`k_tail_certified`, with its upper end replaced by
    the reduction bound of :mod:`ratio.reverse` (Maclaurin forward, truncation reverse) where that is smaller.

    The reduction bounds are upper bounds only: ``reverse.reverse_tail(reports=k)``'s ``eta_lower`` comes from the
    truncated sum ``e_1(min(w, tau))``, whose event *contains* the tail event, so it is not a lower bound on eta
    (it is discarded here)."""
    from .k_reports import k_tail_certified  # imports scipy.special: on first use (see privacy_tail)
    from .reverse import forward_k_certified, reverse_tail

    mine = k_tail_certified(q=q, bits=bits, population=population, reports=reports, epsilon=epsilon,
                            outlier_bits=j, direction=direction, stop_below=stop_below, stop_above=stop_above)
    up = mine.eta
    lo = mine.eta_lower if mine.eta_lower is not None else 0.0
    source = "heavy-conditioning"
    decided = (stop_below is not None and up <= stop_below) or (stop_above is not None and lo > stop_above)
    if up > 0.0 and up > _LOOSE * lo and not decided:
        if direction == "forward":
            other = forward_k_certified(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports,
                                        outlier_bits=j).eta
        else:
            other = reverse_tail(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports,
                                 outlier_bits=j, method="certified").eta
        if other < up:
            up, source = max(other, lo), "reduction bound (ratio.reverse)"
    details = {**mine.details, "upper_from": source}
    return replace(mine, eta=up, eta_upper=up, delta=up, delta_upper=up, details=details)


def _combine_directions(fwd: TailResult | None, rev: TailResult | None) -> TailResult:
    parts = [r for r in (fwd, rev) if r is not None]
    worst = max(parts, key=lambda r: r.eta)
    lows = [r.eta_lower for r in parts if r.eta_lower is not None]
    worst_dir = "forward" if worst is fwd else "reverse"
    details = {"direction": "both" if len(parts) == 2 else worst_dir, "worst_direction": worst_dir,
               "forward": None if fwd is None else fwd.to_dict(), "reverse": None if rev is None else rev.to_dict(),
               "notes": [K_NOTE]}
    return replace(worst, eta_lower=max(lows) if lows else None, details=details)


def _certified_k_worst(*, q: float, bits: int, population: int, epsilon: float, reports: int,
                       outlier_bits: int | None, direction: str, progress: Any = None) -> TailResult:
    """Certified bracket for k > 1, worst over j (or the given j) and the requested directions.

    Only the maximum matters, so once some (j, direction) has a lower bound ``b``, the others are refined only
    until their upper bound is ``<= b`` (they cannot be the worst then; their brackets stay valid)."""
    from .reverse import two_sided_tail  # imports scipy.special: on first use (see privacy_tail)

    if population < 2:
        # No crowd: the reduction bounds of ratio.reverse; their k > 1 reverse lower end is not a lower bound.
        js = [outlier_bits] if outlier_bits is not None else list(range(1, bits + 1))
        rs = [two_sided_tail(q=q, bits=bits, population=population, epsilon=epsilon, method="certified",
                             outlier_bits=j, reports=reports, direction=direction) for j in js]
        worst = max(rs, key=lambda r: r.eta)
        return replace(worst, eta_lower=None, details={**worst.details, "eta_lower_note": "not available"})
    js = [outlier_bits] if outlier_bits is not None else list(range(bits, 0, -1))
    dirs = ["forward", "reverse"] if direction == "both" else [direction]
    floor = 0.0
    results: list[TailResult] = []
    for i, j in enumerate(js):
        per: dict[str, TailResult] = {}
        for d in dirs:
            r = certified_k_direction(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports,
                                       j=j, direction=d, stop_below=floor if floor > 0 else None)
            per[d] = r
            floor = max(floor, r.eta_lower or 0.0)
        results.append(_combine_directions(per.get("forward"), per.get("reverse")))
        if progress is not None:
            progress(i + 1, len(js))
    worst = max(results, key=lambda r: r.eta)
    if outlier_bits is not None:
        return worst
    details = dict(worst.details)
    details["per_outlier_bits"] = {str(r.outlier_bits): r.eta for r in sorted(results, key=lambda r: r.outlier_bits or 0)}
    details["worst_outlier_bits"] = worst.outlier_bits
    return replace(worst, eta_lower=max(r.eta_lower or 0.0 for r in results), details=details)
