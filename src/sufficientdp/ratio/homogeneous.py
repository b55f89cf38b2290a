"""Moments of the privacy ratio R(S) in the homogeneous configuration (seed 001 §3.1, Appendix I).

Configuration: ``n`` anonymized reports, ``n_outlier`` of which come from the all-ones vector and the rest from the
all-zeros vector, each bit flipped with probability ``q`` (``p = 1 - q``). A report with ``l`` set bits carries the
per-report ratio ``w = (q/p)**(L - 2l)`` and the privacy ratio is the mean ``R = (1/n) * sum(w_i)``
(seed 001 eq. 3.4; with ``n = N`` and one outlier this is R(S) of eq. 3.6).

With ``phi = (p**3 + q**3) / (p*q)`` (eq. 3.14) and ``psi = (p**5 + q**5) / (p*q)**2 = phi**2 + phi - 1``:

* a zero-report contribution X0 has ``E X0 = 1`` and ``Var X0 = phi**L - 1`` (eq. 7.6, 7.7);
* an outlier contribution X1 has ``E X1 = phi**L`` and ``Var X1 = psi**L - phi**(2L)`` (eq. 7.8, 7.9).

Everything here is computed in the log domain so that L in the thousands and n in the billions neither overflow
nor lose the small differences ``phi**L - 1`` near q = 1/2 (where ``phi - 1 = (p - q)**2 / (p q)``).

These are exact moments. Turning them into a tail statement with "mean + beta * sd" is the paper's *heuristic*;
it is not a bound on eta (ERRATA 3).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from .._errors import ParameterError
from .._numerics.logspace import log_add_exp, log_expm1
from .._validation import check_int, check_open_interval, check_positive_finite

__all__ = [
    "RatioMoments",
    "log_phi",
    "log_psi_minus_phi2",
    "ratio_moments",
]


def log_phi(q: float) -> float:
    """``log(phi)`` with ``phi = (p**3 + q**3)/(p q) = 1 + (p - q)**2/(p q)`` (seed 001 eq. 3.14), accurate near 1/2."""
    p = 1.0 - q
    return math.log1p((p - q) ** 2 / (p * q))


def log_psi_minus_phi2(q: float, bits: float) -> float:
    """``log(psi**L - phi**(2L))``: the log of ``Var X1`` (seed 001 eq. 7.9).

    Uses ``psi / phi**2 = 1 + (phi - 1)/phi**2`` so the difference never cancels catastrophically.
    """
    lphi = log_phi(q)
    phi_minus_1 = math.expm1(lphi)
    ratio = math.log1p(phi_minus_1 / math.exp(2.0 * lphi))  # log(psi / phi^2)
    return 2.0 * bits * lphi + log_expm1(bits * ratio)


@dataclass(frozen=True, slots=True, kw_only=True)
class RatioMoments:
    """Mean and spread of the privacy ratio, with the pieces in log form.

    Attributes:
        mean: ``E R``.
        sd: ``sqrt(Var R)``.
        log_excess_mean: ``log(E R - 1)`` (``E R - 1 = n_outlier (phi**L - 1) / n``).
        log_var: ``log(Var R)``.
    """

    mean: float
    sd: float
    log_excess_mean: float
    log_var: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``mean``, ``sd``, ``log_excess_mean``, ``log_var``."""
        return asdict(self)


def ratio_moments(*, q: float, bits: int, n: float, n_outlier: int = 1, simplified: bool = False) -> RatioMoments:
    """Exact mean and variance of ``R = (1/n) sum w_i`` in the homogeneous configuration.

    ``simplified=False`` gives the exact moments behind seed 001 eq. (3.12); ``simplified=True`` gives the
    simpler, more conservative expressions of eq. (3.13)/(3.15) (ERRATA 7: it is looser, not tighter):
    ``E R - 1`` is replaced by ``n_outlier * phi**L / n`` and the zero-report variance ``(n - n_outlier)(phi**L - 1)``
    by ``n * phi**L``.

    Args:
        q: flip probability in (0, 0.5).
        bits: L, the number of bits in which the outlier differs.
        n: number of anonymized reports (N for one report per person; kN for k reports).
        n_outlier: reports that come from the outlier (1; or k under k-randomization).
        simplified: use eq. (3.13) instead of the exact moments.

    References:
        seed 001 §3.1 (moments of R(S)), eq. (3.12), (3.13), (3.15); Appendix I eq. (7.6)–(7.9).

    Examples:
        >>> m = ratio_moments(q=0.25, bits=5, n=1000)
        >>> round(m.mean, 6)
        1.068165
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1, maximum=10**6)  # O(1) in log space: far beyond the CLI's 4096
    n_outlier = check_int("n_outlier", n_outlier, minimum=1)
    n = check_positive_finite("n", n)
    if n < n_outlier:
        raise ParameterError(f"n must be >= n_outlier = {n_outlier}; got {n!r}")
    lphi = log_phi(q)
    log_phi_l_minus_1 = log_expm1(bits * lphi)  # log(phi^L - 1)
    log_var1 = log_psi_minus_phi2(q, bits)  # log(psi^L - phi^2L)
    log_n = math.log(n)
    n_zero = n - n_outlier
    if simplified:
        log_excess = math.log(n_outlier) + bits * lphi - log_n
        log_var_x = log_add_exp(log_n + bits * lphi, math.log(n_outlier) + log_var1)
    else:
        log_excess = math.log(n_outlier) + log_phi_l_minus_1 - log_n
        log_zero = math.log(n_zero) + log_phi_l_minus_1 if n_zero > 0 else -math.inf
        log_var_x = log_add_exp(log_zero, math.log(n_outlier) + log_var1)
    log_var = log_var_x - 2.0 * log_n
    mean = 1.0 + (math.exp(log_excess) if log_excess < 700 else math.inf)
    sd = math.exp(0.5 * log_var) if log_var < 1400 else math.inf
    return RatioMoments(mean=mean, sd=sd, log_excess_mean=log_excess, log_var=log_var)
