"""Conversions between DP variants and the attacker's maximal power (digest §1.8–1.13, §3).

References:
    /work/shared/papers/census-semantics-digest.md §1.13 (zCDP/RDP tail bounds, Bun–Steinke Lemma 3.5, and the
    inversion ``eps(delta) = rho + 2 sqrt(rho log(1/delta))``), §1.9 (GDP trade-off), §1.3 (Neyman–Pearson test).
    Pure DP -> zCDP ``rho = eps^2/2``: Bun & Steinke (2016), Proposition 1.4.
    RDP -> (eps, delta): Mironov (2017), Proposition 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr, ndtri

from .._errors import ParameterError
from .._validation import check_positive_finite
from .mechanisms import GaussianPLD
from .pld import PrivacyLossDistribution, _check_probability, _scalar_or_array

__all__ = [
    "RdpConversion",
    "gdp_mu_from_tradeoff",
    "gdp_tradeoff",
    "max_power",
    "pure_to_zcdp",
    "rdp_to_approx_dp",
    "zcdp_tail_bound",
    "zcdp_to_approx_dp",
]


def _check_delta_open(delta: ArrayLike) -> np.ndarray:
    d = _check_probability(delta, "delta")
    if np.any(d <= 0) or np.any(d >= 1):
        raise ParameterError(f"delta must be in (0, 1); got {delta!r}")
    return d


def zcdp_to_approx_dp(rho: float, delta: ArrayLike) -> Any:
    """``rho``-zCDP implies ``(eps, delta)``-DP with ``eps = rho + 2 sqrt(rho log(1/delta))``.

    This inverts the Bun–Steinke tail bound ``P(L > eps) <= exp(-(eps-rho)^2/(4 rho))`` (digest §1.13), so the
    returned eps also bounds the PLRV tail ``eta`` and the pbdp delta, not only the hockey-stick delta.

    Example:
        >>> round(zcdp_to_approx_dp(0.5, math.exp(-1.0)), 12)   # 0.5 + 2 sqrt(0.5)
        1.914213562373
    """
    rho = check_positive_finite("rho", rho)
    d = _check_delta_open(delta)
    return _scalar_or_array(rho + 2.0 * np.sqrt(rho * -np.log(d)))


def zcdp_tail_bound(rho: float, epsilon: ArrayLike) -> Any:
    """``P(L > eps) <= exp(-(eps-rho)^2/(4 rho))`` for ``eps > rho``, else the trivial bound 1 (digest §1.13)."""
    rho = check_positive_finite("rho", rho)
    eps = np.asarray(epsilon, dtype=np.float64)
    if np.any(np.isnan(eps)) or np.any(eps < 0) or np.any(np.isinf(eps)):
        raise ParameterError(f"epsilon must be finite and in [0, inf); got {epsilon!r}")
    out = np.where(eps > rho, np.exp(-((eps - rho) ** 2) / (4.0 * rho)), 1.0)
    return _scalar_or_array(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class RdpConversion:
    """Result of :func:`rdp_to_approx_dp`: the best ``epsilon`` at ``delta`` and the order ``alpha`` achieving it."""

    epsilon: float
    delta: float
    alpha: float
    method: str = "rdp-tail"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "epsilon": self.epsilon if math.isfinite(self.epsilon) else None,
            "delta": self.delta,
            "alpha": self.alpha,
            "method": self.method,
        }


def rdp_to_approx_dp(alphas: ArrayLike, rdp: ArrayLike, delta: float) -> RdpConversion:
    """``eps = min_alpha r(alpha) + log(1/delta)/(alpha-1)`` over a grid of orders (Mironov 2017, Prop. 3).

    Equivalent to the RDP tail bound ``P(L > eps) <= exp((alpha-1)(r - eps))`` of digest §1.13, minimised over
    the grid. Args: ``alphas`` (orders > 1, finite), ``rdp`` (values ``r(alpha) >= 0``, may be ``inf``), ``delta``
    in (0, 1).
    """
    a = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
    r = np.atleast_1d(np.asarray(rdp, dtype=np.float64))
    if a.ndim != 1 or a.shape != r.shape or a.size == 0:
        raise ParameterError(f"alphas and rdp must be non-empty 1-D of equal length; got {a.shape} and {r.shape}")
    if np.any(np.isnan(a)) or np.any(a <= 1) or np.any(np.isinf(a)):
        raise ParameterError(f"alphas must be finite and in (1, inf); got {alphas!r}")
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ParameterError(f"rdp must be in [0, inf]; got {rdp!r}")
    d = float(_check_delta_open(delta))
    eps = r + math.log(1.0 / d) / (a - 1.0)
    i = int(np.argmin(eps))
    return RdpConversion(epsilon=float(eps[i]), delta=d, alpha=float(a[i]))


def pure_to_zcdp(epsilon: ArrayLike) -> Any:
    """Pure ``eps``-DP implies ``(eps^2/2)``-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    eps = np.asarray(epsilon, dtype=np.float64)
    if np.any(np.isnan(eps)) or np.any(eps < 0) or np.any(np.isinf(eps)):
        raise ParameterError(f"epsilon must be finite and in [0, inf); got {epsilon!r}")
    return _scalar_or_array(eps**2 / 2.0)


def gdp_tradeoff(mu: float, level: ArrayLike) -> Any:
    """``mu``-GDP trade-off ``f(x) = Phi(Phi^{-1}(1-x) - mu)`` (digest §1.9); ``Phi^{-1}(1-x)`` as ``-Phi^{-1}(x)``."""
    mu = check_positive_finite("mu", mu)
    x = _check_probability(level, "level")
    return _scalar_or_array(np.asarray(ndtr(-ndtri(x) - mu), dtype=np.float64))


def gdp_mu_from_tradeoff(level: float, type2: float) -> float:
    """The ``mu`` whose GDP trade-off passes through ``(level, type2)``: ``mu = Phi^{-1}(1-x) - Phi^{-1}(f)``."""
    x = float(_check_probability(level, "level"))
    b = float(_check_probability(type2, "type2"))
    if not 0 < x < 1:
        raise ParameterError(f"level must be in (0, 1); got {level!r}")
    if not 0 < b < 1 - x:
        raise ParameterError(f"type2 must be in (0, 1 - level) = (0, {1 - x:g}); got {type2!r}")
    return float(-ndtri(x) - ndtri(b))


def max_power(pld: PrivacyLossDistribution | GaussianPLD, level: ArrayLike) -> Any:
    """Most powerful randomized test of ``H0: Q`` against ``H1: P`` at ``level`` (Neyman–Pearson, digest §1.3).

    For a PLD of ``L = log(P/Q)`` under ``P``: reject on the ``+inf`` atom (``Q``-mass 0) first, then atoms in
    decreasing likelihood ratio ``e^L`` (``Q``-mass ``p e^{-L}``) until the ``Q``-budget ``level`` is spent,
    randomizing on the boundary atom. Any test then satisfies ``power <= e^eps level + delta(eps)`` for every eps.
    Merged (rounded-up) losses make the returned power an upper bound. For :class:`GaussianPLD`:
    ``Phi(mu + Phi^{-1}(level))``.
    """
    if isinstance(pld, GaussianPLD):
        return pld.power(level)
    if not isinstance(pld, PrivacyLossDistribution):
        raise ParameterError(f"pld must be a PrivacyLossDistribution or GaussianPLD; got {type(pld).__name__}")
    x = _check_probability(level, "level")
    losses = pld.losses[::-1]  # decreasing likelihood ratio
    p_mass = pld.probabilities[::-1]
    q_mass = np.exp(np.log(p_mass) - losses)
    cq = np.concatenate([[0.0], np.cumsum(q_mass)])
    cp = np.concatenate([[0.0], np.cumsum(p_mass)])
    flat = x.ravel()
    # number of atoms fully rejected: largest j with cq[j] <= level
    j = np.searchsorted(cq, flat, side="right") - 1
    j = np.minimum(j, losses.size)
    full = cp[j]
    nxt = np.minimum(j, losses.size - 1)
    frac = np.where(j < losses.size, (flat - cq[j]) / q_mass[nxt] if losses.size else 0.0, 0.0)
    extra = np.where(j < losses.size, np.clip(frac, 0.0, 1.0) * p_mass[nxt] if losses.size else 0.0, 0.0)
    out = np.minimum(pld.infinity_mass + full + extra, 1.0)
    return _scalar_or_array(out.reshape(x.shape))
