"""The searches over q shared by every calibration; each keeps a verified passing q (the safe side: more noise).

Each is a setting of the one bracket search of :mod:`sufficientdp._numerics.search` (grid phase, then a probe
policy that keeps "fails at lo, passes at hi"); none has a loop of its own.

* :func:`smallest_q_satisfying` — a root of a continuous condition decreasing in q (closed forms);
* :func:`scan_smallest` — a top-down geometric grid, then bisection (no monotonicity assumed);
* :func:`bracket_smallest` — the same grid (on down by factors of 8 to a floor, if asked), then
  interpolation-guided bracketing to the bisection's tolerance (the homogeneous and exact calibrations).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from .._errors import CalibrationError
from .._numerics.search import Bracket, Creep, Midpoint, RegulaFalsi, scan, search, verdict

__all__ = [
    "Q_FLOOR", "bracket_smallest", "log_condition", "log_excess", "log_slope", "scan_smallest",
    "smallest_q_satisfying",
]

Q_MIN = 1e-12
Q_MAX = 0.5 - 1e-12


def smallest_q_satisfying(excess: Callable[[float], float], *, what: str) -> float:
    """Smallest q in (0, 1/2) with ``excess(q) <= 0``, for ``excess`` decreasing in q.

    The returned q always satisfies the condition (checked); rounding errs towards more noise: brentq's root, then
    (:class:`~sufficientdp._numerics.search.Creep`) upward from it until the condition holds, 64 probes at most.

    Raises:
        CalibrationError: if even q -> 1/2 fails.
    """
    hi = Q_MAX
    if not excess(hi) <= 0.0:
        raise CalibrationError(f"no flip probability q < 0.5 satisfies {what}")
    lo = Q_MIN
    if excess(lo) <= 0.0:
        return lo
    from scipy.optimize import brentq  # noqa: PLC0415 - 0.2-0.4 s to import; only the closed-form methods need it

    q = float(brentq(excess, lo, hi, xtol=1e-300, rtol=4.5 * 2.220446049250313e-16, maxiter=500))
    # brentq's root is probed first (when strictly inside), then the search creeps up from the failing end
    found = search(verdict(lambda x: excess(x) <= 0.0), Bracket(fail=lo, ok=hi), Creep(rel=2.2e-16, first=q),
                   max_probes=64 if q > lo else 63)
    return found.ok


def log_excess(value: float, target: float) -> float:
    """``log(value / target)``, finite (``value`` floored at 1e-300): ``<= 0`` iff ``value <= target``."""
    return math.log(max(value, 1e-300)) - math.log(target)


def log_slope(seen: list[tuple[float, float]], default: float = -30.0) -> float:
    """``d log(eta) / d log(q)`` near the root, from the two evaluations ``(log q, log excess)`` of ``seen`` closest
    to it (smallest ``|log excess|``): a negative number, else ``default`` (fewer than two points, or a secant that
    is not negative). The calibrations' Newton-like walks from a coarse root to the fine one step by it."""
    pts = sorted(seen, key=lambda v: abs(v[1]))[:2]
    if len(pts) == 2 and pts[0][0] != pts[1][0]:
        s = (pts[0][1] - pts[1][1]) / (pts[0][0] - pts[1][0])
        if s < 0.0 and math.isfinite(s):
            return s
    return default


def log_condition(log_lhs: float, log_rhs: float) -> float:
    """Excess in log form; ``-inf`` handled."""
    if log_lhs == -math.inf:
        return -math.inf
    return log_lhs - log_rhs


#: The downward search below the grid stops here (a q this small is never a useful answer).
Q_FLOOR = 1e-12


def _top_down(passes: Any, q_hi: float, grid: int, seen: list[Any], floor: float | None = None
              ) -> tuple[float, float | None]:
    """The grid of :func:`scan_smallest` and :func:`bracket_smallest`: ``q_hi 1e-3**(i/grid)``, i = 1..grid, down
    to the first failure; with a ``floor``, on below by factors of 8 while the point is at least ``floor`` (large
    crowds with few bits: the answer can lie decades below). Returns ``(last passing q or q_hi, first failing q or
    None)``; ``seen`` gets each eta."""
    def ok(q: float) -> bool:
        good, eta = passes(q)
        seen.append(eta)
        return bool(good)

    def points() -> Iterator[float]:
        x = q_hi
        for i in range(1, grid + 1):
            x = q_hi * (1e-3 ** (i / grid))
            yield x
        while floor is not None and x / 8.0 >= floor:
            x /= 8.0
            yield x

    last_ok, fail_q = scan(ok, points(), until=False)
    return (last_ok if last_ok is not None else q_hi), fail_q


def scan_smallest(passes: Any, q_hi: float, *, grid: int = 12, iterations: int = 18) -> tuple[float, float | None]:
    """Smallest passing q: a top-down geometric grid below ``q_hi``, then bisection between the last passing and
    the first failing grid point (monotonicity is not assumed; a passing q below a failing grid point is not
    searched for). Returns ``(q, eta_at_q)``; ``passes(q)`` returns ``(ok, eta)``."""
    etas: list[Any] = []
    best_q, fail_q = _top_down(passes, q_hi, grid, etas)
    passed = etas if fail_q is None else etas[:-1]
    best_eta = passed[-1] if passed else 0.0
    if fail_q is None:
        return best_q, best_eta
    at_ok = [best_eta]

    def test(q: float) -> tuple[bool, float]:
        good, eta = passes(q)
        if good:
            at_ok[0] = eta
        return bool(good), math.nan

    b = search(test, Bracket(fail=fail_q, ok=best_q), Midpoint("geometric"), max_probes=iterations)
    return b.ok, at_ok[0]


def bracket_smallest(passes: Any, q_hi: float, target: float, *, grid: int = 12,
                     iterations: int = 12, floor: float | None = None) -> tuple[float, float | None]:
    """:func:`scan_smallest`'s answer to the same tolerance with fewer evaluations: the same top-down grid, then,
    instead of ``iterations`` geometric bisections, a bracketing search on ``log eta`` against ``log q`` until the
    bracket is as narrow as those bisections would leave it (``hi / lo <= (q_pass / q_fail)**(2**-iterations)``).

    ``passes(q)`` returns ``(ok, eta)`` with ``eta > target`` when not ok (a lower bound of the worst eta is
    enough there) and the worst eta when ok. Each step probes the root of ``log(-log eta)`` (close to linear in
    ``log q`` for tails that fall like ``exp(-c(q))``) interpolated between the bracket ends (regula falsi with the
    Illinois modification), kept at least 0.45 final widths inside the bracket so that an accurate interpolation
    closes it in one or two more evaluations; when four steps in a row have not halved the bracket the next probe is
    the geometric midpoint, so at most 5 ``iterations`` probes follow the grid. "Fails at lo, passes at hi" is
    kept throughout (no monotonicity assumed; a passing q below a failing point is not searched for). Returns
    ``(q, eta_at_q)`` with ``passes(q)`` verified at that very q."""
    etas: list[Any] = []
    best_q, fail_q = _top_down(passes, q_hi, grid, etas, floor)
    passed = etas if fail_q is None else etas[:-1]
    best_eta = passed[-1] if passed else 0.0
    if fail_q is None:
        return best_q, best_eta
    fail_eta = etas[-1]
    loglog_t = math.log(-math.log(target))

    def excess(e: float) -> float:
        # tails fall like exp(-c(q)): log(-log eta) is close to linear in log q
        if e <= 0.0:
            return -math.inf
        if e >= 1.0:
            return math.inf
        return loglog_t - math.log(-math.log(e))

    best = [best_q, best_eta]

    def test(x: float) -> tuple[bool, float]:
        qx = math.exp(x)
        good, eta = passes(qx)
        if good:
            best[:] = [qx, eta]
        return bool(good), excess(eta)

    a, b = math.log(fail_q), math.log(best_q)
    width = (b - a) / 2.0 ** iterations  # the bisection's final bracket (log q)
    step = 0.45 * width
    # every probe lies at least `step` inside the bracket, so it shrinks by `step` at least: at most this many
    budget = int((b - a) / step) + 1
    search(test, Bracket(fail=a, ok=b, fail_score=excess(fail_eta), ok_score=excess(best_eta)),
           RegulaFalsi(anchor="fail", margin=step, max_stalls=4, strict=True, guard_bisection=True),
           max_probes=budget, atol=width)
    return best[0], best[1]
