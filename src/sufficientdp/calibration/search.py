"""The searches over q shared by every calibration; each keeps a verified passing q (the safe side: more noise).

* :func:`smallest_q_satisfying` — a root of a continuous condition decreasing in q (closed forms);
* :func:`grid_then_bisect` — an increasing grid, then bisection, keeping "fails at lo, passes at hi";
* :func:`scan_smallest` — a top-down geometric grid, then bisection (no monotonicity assumed);
* :func:`bracket_smallest` — the same grid, then interpolation-guided bracketing to the bisection's tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._errors import CalibrationError

__all__ = [
    "Q_FLOOR", "bracket_smallest", "grid_then_bisect", "log_condition", "log_excess", "scan_smallest",
    "smallest_q_satisfying",
]

Q_MIN = 1e-12
Q_MAX = 0.5 - 1e-12


def smallest_q_satisfying(excess: Callable[[float], float], *, what: str) -> float:
    """Smallest q in (0, 1/2) with ``excess(q) <= 0``, for ``excess`` decreasing in q.

    The returned q always satisfies the condition (checked); rounding errs towards more noise.

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

    q = brentq(excess, lo, hi, xtol=1e-300, rtol=4.5 * 2.220446049250313e-16, maxiter=500)
    # Step upwards until the condition holds at the returned value (safe direction).
    for _ in range(64):
        if excess(q) <= 0.0:
            return float(q)
        q = min(Q_MAX, math.nextafter(q, 1.0) + abs(q) * 2.2e-16)
    return float(hi)


def log_excess(value: float, target: float) -> float:
    """``log(value / target)``, finite (``value`` floored at 1e-300): ``<= 0`` iff ``value <= target``."""
    return math.log(max(value, 1e-300)) - math.log(target)


def log_condition(log_lhs: float, log_rhs: float) -> float:
    """Excess in log form; ``-inf`` handled."""
    if log_lhs == -math.inf:
        return -math.inf
    return log_lhs - log_rhs


#: The downward search below the lowest grid point stops here (a q this small is never a useful answer).
Q_FLOOR = 1e-12


def grid_then_bisect(passes: Callable[[float], bool], points: list[float],
                      iterations: int) -> tuple[float | None, float | None]:
    """The search shared by the certified-q calibrations: ``(hi, lo)`` with ``passes(hi)`` verified.

    Scans ``points`` (increasing) for the first passing q. If the lowest point already passes, steps down by
    factors of 8 until a q fails (or :data:`Q_FLOOR`), so that large crowds with few bits are not handed the
    grid's coarse lowest point. Then bisects between the failing ``lo`` and the passing ``hi`` (geometric midpoint
    while ``hi > 2 lo``, arithmetic after), keeping "fails at lo, passes at hi". ``lo`` is None when no failing
    q was found; ``hi`` is None when no point passes.
    """
    ok_idx = next((i for i, qq in enumerate(points) if passes(qq)), None)
    if ok_idx is None:
        return None, None
    hi = points[ok_idx]
    lo: float | None = points[ok_idx - 1] if ok_idx > 0 else None
    if lo is None:
        qq = hi
        while qq / 8.0 >= Q_FLOOR:
            qq /= 8.0
            if passes(qq):
                hi = qq
            else:
                lo = qq
                break
    if lo is not None:
        for _ in range(iterations):
            mid = math.sqrt(lo * hi) if hi > 2.0 * lo else 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            if passes(mid):
                hi = mid
            else:
                lo = mid
    return hi, lo


def scan_smallest(passes: Any, q_hi: float, *, grid: int = 12, iterations: int = 18) -> tuple[float, float | None]:
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


def bracket_smallest(passes: Any, q_hi: float, target: float, *, grid: int = 12,
                     iterations: int = 12) -> tuple[float, float | None]:
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
    best_q, best_eta = q_hi, 0.0
    fail_q: float | None = None
    fail_eta = 1.0
    for i in range(1, grid + 1):
        qi = q_hi * (1e-3 ** (i / grid))
        ok, eta = passes(qi)
        if not ok:
            fail_q, fail_eta = qi, eta
            break
        best_q, best_eta = qi, eta
    if fail_q is None:
        return best_q, best_eta
    loglog_t = math.log(-math.log(target))

    def excess(e: float) -> float:
        # tails fall like exp(-c(q)): log(-log eta) is close to linear in log q
        if e <= 0.0:
            return -math.inf
        if e >= 1.0:
            return math.inf
        return loglog_t - math.log(-math.log(e))

    a, b = math.log(fail_q), math.log(best_q)
    fa, fb = excess(fail_eta), excess(best_eta)
    width = (b - a) / 2.0 ** iterations  # the bisection's final bracket (log q)
    step = 0.45 * width
    last = ""
    checkpoint, slow = b - a, 0
    while b - a > width:
        if slow < 4 and math.isfinite(fa) and math.isfinite(fb) and fa > 0.0 >= fb:
            x = a + fa * (b - a) / (fa - fb)
        else:
            x = 0.5 * (a + b)
            slow = 4
        x = min(max(x, a + step), b - step)
        qx = math.exp(x)
        ok, eta = passes(qx)
        if ok:
            b, best_q, best_eta = x, qx, eta
            fb = excess(eta)
            if last == "b":  # Illinois: the fail end has not moved twice in a row, halve its weight
                fa *= 0.5
            last = "b"
        else:
            a, fa = x, excess(eta)
            if last == "a":
                fb *= 0.5
            last = "a"
        if slow >= 4 or b - a <= 0.5 * checkpoint:
            checkpoint, slow = b - a, 0
        else:
            slow += 1
    return best_q, best_eta
