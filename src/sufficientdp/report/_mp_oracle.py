"""An independent high-precision evaluation of seed 001's printed formulas, for the cross-check section of
``docs/reproduction.md`` (:mod:`sufficientdp.report.reproduction`).

Deliberately *not* the core: an oracle that shared code with the library it checks would check nothing, so these
functions re-evaluate the paper's formulas as printed (``papers/001_3d8ddaba8b46cf9c.txt`` §3.1 moments, eq. 3.12,
3.13, 3.17, 6.3) in mpmath at the caller's precision (``mpmath.workdps``), and solve for q by bisection. mpmath is
a test extra, which the core may not import; this module imports it on first use and :data:`available` says
whether it can.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:  # optional: the independent high-precision oracle
    import mpmath
except ImportError:  # pragma: no cover - exercised only without the test extra
    mpmath = None

available = mpmath is not None


def mp_phi_psi(q: Any) -> tuple[Any, Any]:
    """``phi`` and ``psi`` of seed 001 eq. (3.14) and §3.1."""
    q = mpmath.mpf(q)
    p = 1 - q
    return (p**3 + q**3) / (p * q), (p**5 + q**5) / (p * q) ** 2


def mp_moments(q: Any, bits: int, n: int, simplified: bool = False) -> tuple[Any, Any]:
    """E R and sd R as printed in seed 001 §3.1 (exact) or eq. (3.13) (simplified)."""
    phi, psi = mp_phi_psi(q)
    n = mpmath.mpf(n)
    if simplified:
        mean = 1 + phi**bits / n
        var = phi**bits / n + (psi**bits - phi ** (2 * bits)) / n**2
    else:
        mean = (n - 1) / n + phi**bits / n
        var = (n - 1) / n**2 * (phi**bits - 1) + (psi**bits - phi ** (2 * bits)) / n**2
    return mean, mpmath.sqrt(var)


def mp_bisect(lhs_minus_target: Callable[[Any], Any], iters: int = 110) -> Any:
    """Smallest q in (0, 1/2) with ``lhs_minus_target(q) <= 0`` (decreasing function), by bisection."""
    lo, hi = mpmath.mpf("1e-9"), mpmath.mpf("0.5") - mpmath.mpf("1e-40")
    for _ in range(iters):
        mid = (lo + hi) / 2
        if lhs_minus_target(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def mp_q_312(bits: int, n: int, eps: float, beta: float = 3.0, simplified: bool = False) -> Any:
    """The q of eq. (3.12) (or 3.13 with ``simplified``): E R + beta sd R = e^eps, by bisection."""
    lam = mpmath.exp(mpmath.mpf(eps))

    def f(q: Any) -> Any:
        m, s = mp_moments(q, bits, n, simplified)
        return m + mpmath.mpf(beta) * s - lam

    return mp_bisect(f)


def mp_eq_6_3(q: Any, bits: int, n: int, k: int, beta: float = 3.0) -> Any:
    """Left side of seed 001 eq. (6.3) as printed."""
    phi, _ = mp_phi_psi(q)
    psi = phi**2 + phi - 1
    kn = mpmath.mpf(k) * n
    var = (phi**bits / kn + psi**bits / kn**2) ** k - (1 / kn + phi ** (2 * bits) / kn**2) ** k
    return (1 + phi**bits / kn) ** k + mpmath.mpf(beta) * mpmath.sqrt(max(var, 0))


def mp_maurer(q: Any, bits: int, n: int, beta: float, line: str) -> Any:
    """Seed 001 eq. (3.17): ``line="last"`` as printed, or ``"middle"`` (keeps the phi^(2L) term of sigma^2)."""
    phi, _ = mp_phi_psi(q)
    psi = phi**2 + phi - 1
    b2 = mpmath.mpf(beta) ** 2
    den = (n - 1) * phi**bits + psi**bits
    if line == "last":
        return mpmath.exp(-b2 / 2 * (1 - ((n - 1) + phi**bits) / den))
    var = (n - 1) * (phi**bits - 1) + psi**bits - phi ** (2 * bits)
    return mpmath.exp(-b2 * var / (2 * den))




def mp_local_q(bits: int, eps: float) -> Any:
    """Local-DP q of seed 001 eq. (4.2): ``1 / (1 + e^(eps/L))``."""
    return 1 / (1 + mpmath.exp(mpmath.mpf(eps) / bits))


def mp_sigma_per_sqrt_n(q: float) -> Any:
    """``sqrt(q p) / (p - q)`` (seed 001 §4)."""
    qq = mpmath.mpf(q)
    return mpmath.sqrt(qq * (1 - qq)) / (1 - 2 * qq)


def mp_exp(x: float) -> Any:
    """``e^x`` at the working precision."""
    return mpmath.exp(x)
