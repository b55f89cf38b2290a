"""Conversions between DP variants and the attacker's maximal power (digest §1.8–1.13, §3).

Two different questions are answered here, and they must not be confused (digest §1.5: "delta is **not** a bound
on P(L > eps)"):

* **(eps, delta)-DP** — the hockey-stick ``delta(eps) = E[(1 - e^{eps - L})_+]``. The product converts zCDP and
  RDP to it with the tight conversion of Canonne, Kamath & Steinke (2020): :func:`zcdp_to_approx_dp`,
  :func:`zcdp_to_delta`, :func:`rdp_to_approx_dp`, :func:`rdp_to_delta` (default ``method="cks20"``).
* **the tail** ``eta(eps) = P(L > eps)`` (and hence the pbdp delta and the posterior-ratio tail of 004 Thm 7.4.2) —
  only the Chernoff/Markov bound ``exp((alpha-1)(r - eps))`` controls it: :func:`zcdp_tail_bound`,
  :func:`zcdp_tail_epsilon`, and ``method="bun-steinke"`` / ``method="classical"``. These are also valid (looser)
  (eps, delta)-DP conversions, and reproduce the numbers of papers that use them.

Every returned ``epsilon`` / ``delta`` is rounded **up**: each is the formula evaluated at one order ``alpha``
(any ``alpha > 1`` gives a valid bound, so the numerical minimiser's accuracy only affects tightness), plus a
generous bound on the floating-point error of that evaluation (:data:`_ROUNDOFF_UNITS` units of roundoff times
the sum of the magnitudes of the terms), then one ulp more.

References:
    papers/census-semantics-digest.md §1.13 (zCDP/RDP tail bounds, Bun–Steinke Lemma 3.5, and the
    inversion ``eps(delta) = rho + 2 sqrt(rho log(1/delta))``), §1.9 (GDP trade-off), §1.3 (Neyman–Pearson test).
    Pure DP -> zCDP ``rho = eps^2/2``: Bun & Steinke (2016), Proposition 1.4.
    RDP -> (eps, delta), classical: Mironov (2017), Proposition 3.
    RDP / zCDP -> (eps, delta), tight: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
    Privacy" (2020, arXiv:2004.00010) §2.3 — for ``(alpha, r)``-RDP,
    ``delta = exp((alpha-1)(r - eps)) / (alpha-1) * (1 - 1/alpha)^alpha``, equivalently
    ``eps = r + (log(1/delta) + (alpha-1) log(1-1/alpha) - log(alpha)) / (alpha-1)``; for ``rho``-zCDP put
    ``r = alpha rho`` and take the infimum over ``alpha > 1``. Statement checked against: Steinke's own
    ``cdp2adp.py`` (github.com/IBM/discrete-gaussian-differential-privacy, ``cdp_delta`` / ``cdp_eps``, citing
    arXiv:2004.00010v3 p. 13); OpenDP's soundness proof ``rust/src/combinators/measure_cast/zCDP_to_approxDP/
    cdp_delta/cdp_delta.tex`` (theorem and corollaries adapted from CKS20 §2.3, with the derivation
    ``sup_z (1 - e^{eps-z})_+ e^{-(alpha-1) z} = e^{-(alpha-1) eps} (1-1/alpha)^alpha / (alpha-1)``); and
    dp-accounting 0.6.0 (module ``rdp/rdp_privacy_accountant.py``) ``compute_epsilon`` / ``compute_delta``
    ("Improved bound from arXiv:2004.00010 Proposition 12 (in v4)", also Asoodeh et al., arXiv:2001.05990,
    eq. 20), which additionally uses ``delta(eps) <= delta(0) = TV <= sqrt(1 - exp(-KL))`` (Bretagnolle–Huber)
    with ``KL <= D_alpha``. Check value: ``rho = 2.63``, ``delta = 1e-6`` gives ``eps = 13.7923...`` (Bun–Steinke:
    14.6857...).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr, ndtri

from .._errors import ParameterError
from .._numerics.search import scan
from .._validation import check_positive_finite, check_real_array
from ..loss.distribution import PrivacyLossDistribution, _check_probability, _scalar_or_array
from .mechanisms import GaussianPLD

__all__ = [
    "RDP_CONVERSION_METHODS",
    "ZCDP_CONVERSION_METHODS",
    "RdpConversion",
    "gdp_mu_from_tradeoff",
    "gdp_tradeoff",
    "max_power",
    "pure_to_zcdp",
    "rdp_to_approx_dp",
    "rdp_to_delta",
    "zcdp_tail_bound",
    "zcdp_tail_epsilon",
    "zcdp_to_approx_dp",
    "zcdp_to_delta",
]

#: ``method=`` values of :func:`zcdp_to_approx_dp` / :func:`zcdp_to_delta`; the first is the default.
#: ``"cks20"``: Canonne–Kamath–Steinke 2020 (the tight hockey-stick conversion);
#: ``"bun-steinke"``: Bun–Steinke 2016 ``eps = rho + 2 sqrt(rho log(1/delta))`` (also bounds the tail ``eta``).
ZCDP_CONVERSION_METHODS: tuple[str, ...] = ("cks20", "bun-steinke")

#: ``method=`` values of :func:`rdp_to_approx_dp` / :func:`rdp_to_delta`; the first is the default.
#: ``"cks20"``: the conversion of dp-accounting's ``compute_epsilon`` / ``compute_delta`` (CKS 2020 plus the
#: KL/Bretagnolle–Huber bound); ``"classical"``: Mironov 2017 Prop. 3, ``eps = r + log(1/delta)/(alpha-1)``.
RDP_CONVERSION_METHODS: tuple[str, ...] = ("cks20", "classical")

_U = float(np.finfo(np.float64).eps)  # 2^-52
#: Units of roundoff allowed per evaluation (each formula has < 10 correctly-rounded operations; 64 is generous).
_ROUNDOFF_UNITS = 64.0
_TINY = math.ulp(0.0)  # smallest positive float: a positive bound that underflows is reported as this


def _up(value: float, magnitude: float) -> float:
    """``value`` plus a bound on its floating-point error (``magnitude`` = sum of the terms' absolute values)."""
    return math.nextafter(value + _ROUNDOFF_UNITS * _U * magnitude, math.inf)


def _up_array(value: NDArray[np.float64], magnitude: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(np.nextafter(value + _ROUNDOFF_UNITS * _U * magnitude, np.inf), dtype=np.float64)


def _exp_up(log_value: float) -> float:
    """``exp`` of an upper bound on a log-probability, rounded up, capped at 1, never 0 for a finite argument."""
    if math.isnan(log_value) or log_value >= 0.0:
        return 1.0
    out = math.nextafter(math.exp(log_value) * (1.0 + 4.0 * _U), math.inf)
    return min(1.0, max(out, _TINY))


def _check_method(method: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(method, str) or method not in allowed:
        raise ParameterError(f"method must be one of {', '.join(repr(m) for m in allowed)}; got {method!r}")
    return method


def _check_delta_open(delta: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(check_real_array("delta", delta, low=0.0, high=1.0, allow_empty=True), dtype=np.float64)


def _check_epsilon(epsilon: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(check_real_array("epsilon", epsilon, low=0.0, high=math.inf, closed_low=True,
                                       allow_empty=True), dtype=np.float64)


def _elementwise(fn: Any, x: NDArray[np.float64]) -> Any:
    flat = np.array([fn(float(v)) for v in x.ravel()], dtype=np.float64)
    return _scalar_or_array(flat.reshape(x.shape))


# ------------------------------------------------------------------------------------------------------- zCDP
def _bs_epsilon(rho: float, delta: float) -> float:
    log_inv = -math.log(delta)
    value = rho + 2.0 * math.sqrt(rho * log_inv)
    return _up(value, value)


def _cks_epsilon_at(rho: float, log_inv: float, alpha: float) -> float:
    """CKS ``eps`` at one order, rounded up: ``alpha rho + log(1-1/alpha) + (log(1/delta) - log alpha)/(alpha-1)``."""
    am1 = alpha - 1.0
    t1 = alpha * rho
    t2 = math.log1p(-1.0 / alpha)
    la = math.log(alpha)
    t3 = (log_inv - la) / am1
    value = t1 + t2 + t3
    return _up(value, abs(t1) + abs(t2) + (abs(log_inv) + abs(la)) / am1 + abs(value))


def _cks_zcdp_epsilon(rho: float, delta: float) -> float:
    log_inv = -math.log(delta)
    # d/dalpha of the CKS eps is rho - (log(1/delta) - log alpha)/(alpha-1)^2: zero where phi = 0, phi increasing,
    # phi(1) = -log(1/delta) < 0 and phi(1 + sqrt(log(1/delta)/rho)) = log(alpha) > 0 (the Bun–Steinke order).
    def phi(a: float) -> float:
        return rho * (a - 1.0) ** 2 + math.log(a) - log_inv

    lo = math.nextafter(1.0, 2.0)
    hi = max(1.0 + math.sqrt(log_inv / rho), lo)
    alpha = hi
    if phi(lo) < 0.0 < phi(hi):
        from scipy.optimize import brentq  # noqa: PLC0415 - 0.2-0.4 s to import: loaded when a root is needed
        alpha = max(float(brentq(phi, lo, hi, xtol=1e-15, rtol=4 * _U, maxiter=200)), lo)
    return max(0.0, _cks_epsilon_at(rho, log_inv, alpha))


def _cks_log_delta_at(rho: float, eps: float, alpha: float) -> float:
    """CKS ``log delta`` at one order, rounded up: ``(a-1)(a rho - eps) + a log(1-1/a) - log(a-1)``."""
    am1 = alpha - 1.0
    t1 = am1 * alpha * rho
    t2 = am1 * eps
    t3 = alpha * math.log1p(-1.0 / alpha)
    t4 = math.log(am1)
    value = t1 - t2 + t3 - t4
    return _up(value, abs(t1) + abs(t2) + abs(t3) + abs(t4) + abs(value))


def _cks_zcdp_delta(rho: float, eps: float) -> float:
    # d/dalpha of the CKS log delta is psi = (2 alpha - 1) rho - eps + log(1 - 1/alpha), increasing in alpha,
    # -> -inf as alpha -> 1 (Steinke's cdp2adp.py minimises the same derivative by bisection).
    def psi(a: float) -> float:
        return (2.0 * a - 1.0) * rho - eps + math.log1p(-1.0 / a)

    def doubling(x: float) -> Iterator[float]:  # x, 2x, 4x, ... up to the first at or above 1e300
        yield x
        while x < 1e300:
            x *= 2.0
            yield x

    lo = math.nextafter(1.0, 2.0)
    alpha = lo
    if psi(lo) < 0.0:
        last, hi = scan(lambda a: not psi(a) <= 0.0, doubling(max(2.0, (eps + rho) / (2.0 * rho) + 1.0)), until=True)
        if hi is None:  # psi <= 0 up to 1e300: the largest order tried
            alpha = last if last is not None else lo
        else:
            from scipy.optimize import brentq  # noqa: PLC0415 - 0.2-0.4 s to import: loaded when a root is needed
            alpha = float(brentq(psi, lo, hi, xtol=1e-15, rtol=4 * _U, maxiter=400)) if psi(hi) > 0.0 else hi
        alpha = max(alpha, lo)
    return _exp_up(_cks_log_delta_at(rho, eps, alpha))


def _bs_delta(rho: float, eps: float) -> float:
    if eps <= rho:
        return 1.0
    x = (eps - rho) ** 2 / (4.0 * rho)
    return _exp_up(_up(-x, x))


def zcdp_to_approx_dp(rho: float, delta: ArrayLike, *, method: str = "cks20") -> Any:
    """Smallest ``eps`` such that every ``rho``-zCDP mechanism is ``(eps, delta)``-DP, rounded up.

    ``method="cks20"`` (default): Canonne–Kamath–Steinke 2020 (module docstring),
    ``eps = inf_{alpha > 1} alpha rho + (log(1/delta) + (alpha-1) log(1-1/alpha) - log(alpha)) / (alpha-1)``,
    minimised by a root search on its derivative and evaluated at the order found, floored at 0 (``delta(eps)``
    is non-increasing, so a negative value means ``(0, delta)``-DP). (The Bretagnolle–Huber bound
    ``delta(0) <= sqrt(1 - e^{-rho})`` that dp-accounting also applies is never smaller than the CKS
    ``delta(0)``, so it is not needed here.) This bounds the hockey-stick ``delta`` only, **not** the tail
    ``P(L > eps)`` (for that, ``method="bun-steinke"``).

    ``method="bun-steinke"``: ``eps = rho + 2 sqrt(rho log(1/delta))`` (= :func:`zcdp_tail_epsilon`), the
    inversion of the Bun–Steinke tail bound (digest §1.13); larger, but it also bounds the PLRV tail ``eta``,
    the pbdp delta and the posterior-ratio tail of 004 Thm 7.4.2.

    Args: ``rho`` in (0, inf); ``delta`` in (0, 1), scalar or array; ``method`` in
    :data:`ZCDP_CONVERSION_METHODS`.

    Examples:
        >>> round(zcdp_to_approx_dp(2.63, 1e-6), 4), round(zcdp_to_approx_dp(2.63, 1e-6, method="bun-steinke"), 4)
        (13.7923, 14.6857)
    """
    rho = check_positive_finite("rho", rho)
    d = _check_delta_open(delta)
    if _check_method(method, ZCDP_CONVERSION_METHODS) == "bun-steinke":
        return _elementwise(lambda v: _bs_epsilon(rho, v), d)
    return _elementwise(lambda v: _cks_zcdp_epsilon(rho, v), d)


def zcdp_to_delta(rho: float, epsilon: ArrayLike, *, method: str = "cks20") -> Any:
    """Smallest ``delta`` such that every ``rho``-zCDP mechanism is ``(eps, delta)``-DP, rounded up.

    ``method="cks20"`` (default): ``delta = inf_{alpha > 1} exp((alpha-1)(alpha rho - eps)) / (alpha-1)
    * (1 - 1/alpha)^alpha`` (Canonne–Kamath–Steinke 2020), capped at 1.
    ``method="bun-steinke"``: the tail bound ``exp(-(eps-rho)^2/(4 rho))`` (1 for ``eps <= rho``), =
    :func:`zcdp_tail_bound`. Args: ``rho`` in (0, inf); ``epsilon`` in [0, inf), scalar or array.

    Examples:
        >>> zcdp_to_delta(2.63, 13.80) <= 1e-6 < zcdp_to_delta(2.63, 13.78)
        True
    """
    rho = check_positive_finite("rho", rho)
    eps = _check_epsilon(epsilon)
    if _check_method(method, ZCDP_CONVERSION_METHODS) == "bun-steinke":
        return _elementwise(lambda v: _bs_delta(rho, v), eps)
    return _elementwise(lambda v: _cks_zcdp_delta(rho, v), eps)


def zcdp_tail_epsilon(rho: float, delta: ArrayLike) -> Any:
    """``eps = rho + 2 sqrt(rho log(1/delta))``, rounded up: the inverse of :func:`zcdp_tail_bound` (digest §1.13).

    Every ``rho``-zCDP mechanism has ``P(L > eps) <= delta`` there, so this bounds the tail ``eta``, the pbdp
    delta and the posterior-ratio tail (004 Thm 7.4.2), and — more loosely than :func:`zcdp_to_approx_dp` — the
    hockey-stick delta. Args: ``rho`` in (0, inf); ``delta`` in (0, 1).

    Examples:
        >>> round(zcdp_tail_epsilon(0.5, math.exp(-1.0)), 12)   # 0.5 + 2 sqrt(0.5)
        1.914213562373
    """
    return zcdp_to_approx_dp(rho, delta, method="bun-steinke")


def zcdp_tail_bound(rho: float, epsilon: ArrayLike) -> Any:
    """``P(L > eps) <= exp(-(eps-rho)^2/(4 rho))`` for ``eps > rho``, else the trivial bound 1 (digest §1.13).

    Rounded up. This is a bound on the tail, hence also on the pbdp delta and the hockey-stick delta (for the
    latter :func:`zcdp_to_delta` is tighter).
    """
    rho = check_positive_finite("rho", rho)
    eps = np.asarray(epsilon, dtype=np.float64)
    if np.any(np.isnan(eps)) or np.any(eps < 0) or np.any(np.isinf(eps)):
        raise ParameterError(f"epsilon must be finite and in [0, inf); got {epsilon!r}")
    return _elementwise(lambda v: _bs_delta(rho, v), eps)


# -------------------------------------------------------------------------------------------------------- RDP
@dataclass(frozen=True, slots=True, kw_only=True)
class RdpConversion:
    """Result of :func:`rdp_to_approx_dp` / :func:`rdp_to_delta`: ``(epsilon, delta)`` and the order achieving it.

    ``method`` is the conversion used (:data:`RDP_CONVERSION_METHODS`).
    """

    epsilon: float
    delta: float
    alpha: float
    method: str = "cks20"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "epsilon": self.epsilon if math.isfinite(self.epsilon) else None,
            "delta": self.delta,
            "alpha": self.alpha,
            "method": self.method,
        }


def _check_rdp_curve(alphas: ArrayLike, rdp: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
    r = np.atleast_1d(np.asarray(rdp, dtype=np.float64))
    if a.ndim != 1 or a.shape != r.shape or a.size == 0:
        raise ParameterError(f"alphas and rdp must be non-empty 1-D of equal length; got {a.shape} and {r.shape}")
    if np.any(np.isnan(a)) or np.any(a <= 1) or np.any(np.isinf(a)):
        raise ParameterError(f"alphas must be finite and in (1, inf); got {alphas!r}")
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ParameterError(f"rdp must be in [0, inf]; got {rdp!r}")
    return a, r


def rdp_to_approx_dp(alphas: ArrayLike, rdp: ArrayLike, delta: float, *, method: str = "cks20") -> RdpConversion:
    """Best ``eps`` at ``delta`` from an RDP curve ``r(alpha)`` given on a grid of orders, rounded up.

    ``method="cks20"`` (default) — the conversion of dp-accounting's ``rdp_privacy_accountant.compute_epsilon``:
    per order, ``eps = 0`` if ``delta^2 >= 1 - e^{-r}`` (Bretagnolle–Huber, ``KL <= r``), else
    ``eps = max(0, r + log(1 - 1/alpha) - (log(delta) + log(alpha))/(alpha-1))`` (CKS 2020); minimum over the
    grid. Unlike dp-accounting it also uses orders in (1, 1.01] (valid; dp-accounting skips them only for
    numerical caution). ``method="classical"`` — ``eps = r + log(1/delta)/(alpha-1)`` (Mironov 2017, Prop. 3),
    the RDP tail bound ``P(L > eps) <= exp((alpha-1)(r - eps))`` (digest §1.13) inverted, which also bounds ``eta``.

    Args: ``alphas`` (orders in (1, inf)), ``rdp`` (values ``r(alpha)`` in [0, inf], ``inf`` allowed), ``delta``
    in (0, 1), ``method`` in :data:`RDP_CONVERSION_METHODS`.
    """
    a, r = _check_rdp_curve(alphas, rdp)
    d = float(_check_delta_open(delta))
    method = _check_method(method, RDP_CONVERSION_METHODS)
    log_inv = -math.log(d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        am1 = a - 1.0
        if method == "classical":
            t = log_inv / am1
            eps = _up_array(r + t, r + t + t)
        else:
            t2 = np.log1p(-1.0 / a)
            la = np.log(a)
            t3 = (log_inv - la) / am1
            value = r + t2 + t3
            eps = _up_array(value, r + np.abs(t2) + (log_inv + np.abs(la)) / am1 + np.abs(value))
            eps = np.maximum(eps, 0.0)
            # KL route, with the comparison made robust: only when delta^2 clearly exceeds 1 - e^{-r}
            kl = d * d * (1.0 - 4.0 * _U) >= -np.expm1(-r) * (1.0 + 4.0 * _U)
            eps = np.where(kl, 0.0, eps)
        eps = np.where(np.isinf(r), np.inf, eps)
    i = int(np.argmin(eps))
    return RdpConversion(epsilon=float(eps[i]), delta=d, alpha=float(a[i]), method=method)


def rdp_to_delta(alphas: ArrayLike, rdp: ArrayLike, epsilon: float, *, method: str = "cks20") -> RdpConversion:
    """Best ``delta`` at ``epsilon`` from an RDP curve on a grid of orders, rounded up (the inverse direction).

    ``method="cks20"`` (default) — dp-accounting's ``compute_delta``: per order the smaller of
    ``sqrt(1 - e^{-r})`` (Bretagnolle–Huber) and ``exp((alpha-1)(r - eps + log(1-1/alpha)) - log(alpha))``
    (CKS 2020; used for every order > 1), minimum over the grid, capped at 1. ``method="classical"`` —
    ``min(1, exp((alpha-1)(r - eps)))`` (Mironov 2017 Prop. 3; the RDP tail bound, which also bounds ``eta``).
    Args: as :func:`rdp_to_approx_dp`, with ``epsilon`` in [0, inf) instead of ``delta``.
    """
    a, r = _check_rdp_curve(alphas, rdp)
    e = float(_check_epsilon(epsilon))
    method = _check_method(method, RDP_CONVERSION_METHODS)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        am1 = a - 1.0
        if method == "classical":
            t1, t2 = am1 * r, am1 * e
            log_d = _up_array(t1 - t2, t1 + t2 + np.abs(t1 - t2))
        else:
            t1, t2 = am1 * r, am1 * e
            t3 = am1 * np.log1p(-1.0 / a)
            t4 = np.log(a)
            value = t1 - t2 + t3 - t4
            log_d = _up_array(value, t1 + t2 + np.abs(t3) + t4 + np.abs(value))
            # Bretagnolle–Huber: log sqrt(1 - e^{-r}); r = 0 means P = Q, delta = 0 exactly
            kl = 0.5 * np.log(-np.expm1(-r))
            kl_up = np.where(r == 0, -np.inf, _up_array(kl, np.abs(kl)) + 0.5 * math.log1p(8.0 * _U))
            log_d = np.minimum(log_d, kl_up)
        log_d = np.where(np.isinf(r), 0.0, log_d)
    i = int(np.argmin(log_d))
    best = float(log_d[i])
    delta = 0.0 if best == -math.inf else _exp_up(best)
    return RdpConversion(epsilon=e, delta=delta, alpha=float(a[i]), method=method)


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
