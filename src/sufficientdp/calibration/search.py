"""Monotone root finding that errs on the safe side (larger flip probability)."""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.optimize import brentq

from .._errors import CalibrationError

__all__ = ["smallest_q_satisfying"]

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
    q = brentq(excess, lo, hi, xtol=1e-300, rtol=4.5 * 2.220446049250313e-16, maxiter=500)
    # Step upwards until the condition holds at the returned value (safe direction).
    for _ in range(64):
        if excess(q) <= 0.0:
            return float(q)
        q = min(Q_MAX, math.nextafter(q, 1.0) + abs(q) * 2.2e-16)
    return float(hi)


def log_condition(log_lhs: float, log_rhs: float) -> float:
    """Excess in log form; ``-inf`` handled."""
    if log_lhs == -math.inf:
        return -math.inf
    return log_lhs - log_rhs
