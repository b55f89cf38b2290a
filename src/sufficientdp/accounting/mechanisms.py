"""Privacy-loss distributions of reference mechanisms (digest §2, §1.9).

Discrete mechanisms return a :class:`~sufficientdp.loss.distribution.PrivacyLossDistribution`; the Gaussian mechanism
returns the closed-form :class:`GaussianPLD`.

References:
    papers/census-semantics-digest.md Ex. 4.3 (randomized response), Ex. 4.4 (geometric),
    Ex. 4.5 / §1.9 (Gaussian, Balle–Wang delta, GDP), §1.10–1.12 (Rényi, zCDP).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr, logsumexp, ndtr, ndtri

from .._errors import ParameterError
from .._numerics.search import creep_then_bisect, verdict
from .._numerics.stats import scipy_stats
from .._validation import check_int, check_open_interval, check_positive_finite
from ..loss.distribution import PrivacyLossDistribution, _check_epsilon, _check_probability, _scalar_or_array

__all__ = [
    "GaussianPLD",
    "binary_randomized_response",
    "bit_vector_randomized_response",
    "gaussian",
    "geometric",
    "k_randomized_response",
]


def binary_randomized_response(q: float) -> PrivacyLossDistribution:
    """PLD of binary randomized response with flip probability ``q`` (neighbours: bit 0 vs bit 1).

    ``p = (1-q, q)`` (true bit 0), ``q_pmf = (q, 1-q)`` (true bit 1); losses ``±log((1-q)/q)`` (digest Ex. 4.3).

    Args:
        q: flip probability in (0, 1).

    Examples:
        >>> round(binary_randomized_response(0.25).max_loss, 6)
        1.098612
    """
    q = check_open_interval("q", q, 0.0, 1.0)
    return PrivacyLossDistribution.from_pmfs([1.0 - q, q], [q, 1.0 - q])


def k_randomized_response(epsilon: float, k: int) -> PrivacyLossDistribution:
    """PLD of k-ary randomized response: keep the true value w.p. ``e^eps/(e^eps+k-1)``, else a uniform other value.

    Neighbours hold values ``x != x'``: losses ``+eps`` (output x), ``-eps`` (output x'), ``0`` (others).

    Args:
        epsilon: finite, > 0.
        k: number of values, integer >= 2.
    """
    epsilon = check_positive_finite("epsilon", epsilon)
    k = check_int("k", k, minimum=2)
    # p_keep = 1/(1 + (k-1) e^{-eps}), p_other = e^{-eps} p_keep  (stable for large eps)
    keep = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    other = math.exp(-epsilon) * keep
    p = np.full(k, other)
    q = np.full(k, other)
    p[0], q[1] = keep, keep
    return PrivacyLossDistribution.from_pmfs(p, q)


def bit_vector_randomized_response(q: float, bits: int, differing: int) -> PrivacyLossDistribution:
    """PLD of local L-bit randomized response (each bit flipped independently w.p. ``q``).

    Neighbours differ in ``j = differing`` of the ``L = bits`` bits; the agreeing bits contribute loss 0. With
    ``m ~ Binomial(j, 1-q)`` the number of differing bits reported as under D1, ``L = (2m - j) log((1-q)/q)``.

    Args:
        q: flip probability in (0, 1).
        bits: L, integer >= 1.
        differing: j, integer in [1, L].
    """
    q = check_open_interval("q", q, 0.0, 1.0)
    bits = check_int("bits", bits, minimum=1)
    j = check_int("differing", differing, minimum=1, maximum=bits)
    m = np.arange(j + 1)
    # P[m] = P[Binomial(j, q) = j - m], in logs: the linear pmf underflows in the tails (L = 4096, or q = 1e-300,
    # where 1 - q rounds to 1), and the reverse PLD is those tails (Q[m] = P[m] e^{-loss}): dropped, its masses
    # did not sum to 1. In logs every atom is kept (Q-mass of every outcome is positive: no infinite atoms).
    log_p = scipy_stats().binom.logpmf(j - m, j, q)  # (scipy.stats imported here: 0.6 s, on first use)
    losses = ((2 * m - j) * (math.log1p(-q) - math.log(q))).astype(np.float64)
    return PrivacyLossDistribution(losses=losses, log_probabilities=log_p - logsumexp(log_p))


def geometric(epsilon: float, sensitivity: int = 1) -> PrivacyLossDistribution:
    """PLD of the two-sided geometric mechanism ``P(Z=z) ∝ e^{-eps|z|}`` on a count, neighbours ``c`` vs ``c+Δ``.

    With ``D1`` count ``Δ`` and ``D2`` count 0, an output ``w`` has ``L(w) = eps(|w| - |w-Δ|)``: ``+Δ eps`` for
    ``w >= Δ``, ``-Δ eps`` for ``w <= 0``, ``eps(2w-Δ)`` in between. The loss is *constant* on both infinite tails,
    so the tails are summed in closed form into the two extreme atoms — ``P(w >= Δ) = 1/(1+a)`` and
    ``P(w <= 0) = a^Δ/(1+a)`` with ``a = e^{-eps}`` — and no truncation error arises (for ``Δ = 1`` this is exactly
    randomized response, digest Ex. 4.4).

    Args:
        epsilon: noise parameter, finite, > 0.
        sensitivity: Δ, integer >= 1.
    """
    epsilon = check_positive_finite("epsilon", epsilon)
    d = check_int("sensitivity", sensitivity, minimum=1)
    a = math.exp(-epsilon)
    norm = (1.0 - a) / (1.0 + a)
    w = np.arange(1, d)  # interior outputs 1..Δ-1, noise z = w - Δ
    interior_p = norm * a ** (d - w).astype(np.float64)
    losses = np.concatenate([[-d * epsilon], epsilon * (2 * w - d), [d * epsilon]])
    probs = np.concatenate([[a**d / (1.0 + a)], interior_p, [1.0 / (1.0 + a)]])
    return PrivacyLossDistribution(losses=losses.astype(np.float64), probabilities=probs / probs.sum())


@dataclass(frozen=True, slots=True, kw_only=True)
class GaussianPLD:
    """Closed-form PLD of the Gaussian mechanism: ``L ~ N(mu^2/2, mu^2)``, ``mu = Δ/σ`` (digest Ex. 4.5, §1.9).

    Symmetric (both directions have the same PLD). ``delta`` is the exact Balle–Wang curve, ``eta`` the exact tail,
    ``renyi(alpha) = alpha mu^2/2``, ``rho = mu^2/2``, and the trade-off is ``mu``-GDP.

    Examples:
        >>> g = GaussianPLD.from_rho(2.63)
        >>> round(float(g.power(0.01)), 2)   # digest Table 2, Gaussian column: 0.49
        0.49
    """

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_positive_finite("mu", self.mu))

    @classmethod
    def from_sigma(cls, sigma: float, sensitivity: float = 1.0) -> GaussianPLD:
        """``mu = sensitivity / sigma``."""
        sigma = check_positive_finite("sigma", sigma)
        sensitivity = check_positive_finite("sensitivity", sensitivity)
        mu = sensitivity / sigma
        # mu in [1e-150, 1e150]: beyond, rho = mu**2 / 2 and the curves' arithmetic leave double precision
        # (sigma = 5e-324: mu overflows; sigma = 1e-154: an overflow inside the pbdp curve; sensitivity = 1e-300:
        # rho underflows to 0)
        if not 1e-150 <= mu <= 1e150:
            raise ParameterError(f"sensitivity / sigma (the Gaussian's mu) must be in [1e-150, 1e150]; got "
                                 f"sensitivity = {sensitivity!r}, sigma = {sigma!r}")
        return cls(mu=mu)

    @classmethod
    def from_rho(cls, rho: float) -> GaussianPLD:
        """The Gaussian mechanism that is exactly ``rho``-zCDP: ``mu = sqrt(2 rho)`` (digest §1.9, footnote 15)."""
        rho = check_positive_finite("rho", rho)
        return cls(mu=math.sqrt(2.0 * rho))

    @property
    def rho(self) -> float:
        """zCDP parameter ``mu^2/2``."""
        return self.mu**2 / 2.0

    @property
    def max_loss(self) -> float:
        """The loss is unbounded: ``inf`` (no pure DP)."""
        return math.inf

    def delta(self, epsilon: ArrayLike) -> Any:
        """``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` (Balle–Wang; digest §1.9)."""
        eps = _check_epsilon(epsilon)
        mu = self.mu
        first = ndtr(-eps / mu + mu / 2.0)
        second = np.exp(eps + log_ndtr(-eps / mu - mu / 2.0))
        return _scalar_or_array(np.clip(first - second, 0.0, 1.0))

    def eta(self, epsilon: ArrayLike) -> Any:
        """``eta(eps) = P[N(mu^2/2, mu^2) > eps] = Phi(mu/2 - eps/mu)``."""
        eps = _check_epsilon(epsilon)
        return _scalar_or_array(np.asarray(ndtr(self.mu / 2.0 - eps / self.mu), dtype=np.float64))

    def epsilon_for_delta(self, delta: ArrayLike) -> Any:
        """Smallest ``eps >= 0`` with ``delta(eps) <= delta`` (root of the Balle–Wang curve; ``inf`` at 0)."""
        d = _check_probability(delta, "delta")
        out = np.empty(d.size)
        for i, target in enumerate(d.ravel()):
            t = float(target)
            if t <= 0.0:
                out[i] = math.inf
            elif float(self.delta(0.0)) <= t:
                out[i] = 0.0
            else:
                hi = 1.0
                while float(self.delta(hi)) > t:
                    hi *= 2.0
                from scipy.optimize import brentq  # noqa: PLC0415 - 0.2-0.4 s to import: loaded when a root is needed
                eps = float(brentq(lambda e: float(self.delta(e)) - t, 0.0, hi, xtol=1e-14, rtol=1e-14))
                # round in the safe direction (bounded: the creep alone took 2,146 probes at mu = 0.00324)
                test = verdict(functools.partial(self._meets, target=t))
                out[i] = eps if test(eps)[0] else creep_then_bisect(test, eps, hi, rel=1e-15)
        return _scalar_or_array(out.reshape(d.shape))

    def _meets(self, eps: float, *, target: float) -> bool:
        return float(self.delta(eps)) <= target

    def renyi(self, alpha: ArrayLike) -> Any:
        """``D_alpha = alpha mu^2 / 2`` for ``alpha > 1`` (digest §1.10)."""
        a = np.asarray(alpha, dtype=np.float64)
        if np.any(np.isnan(a)) or np.any(a <= 1) or np.any(np.isinf(a)):
            raise ParameterError(f"alpha must be finite and in (1, inf); got {alpha!r}")
        return _scalar_or_array(a * self.rho)

    def tradeoff(self, level: ArrayLike) -> Any:
        """GDP trade-off ``f(x) = Phi(Phi^{-1}(1-x) - mu)`` (type-II error of the best level-x test)."""
        x = _check_probability(level, "level")
        return _scalar_or_array(np.asarray(ndtr(-ndtri(x) - self.mu), dtype=np.float64))

    def power(self, level: ArrayLike) -> Any:
        """Maximal power at ``level``: ``1 - f(level) = Phi(mu + Phi^{-1}(level))`` (digest §3.3)."""
        x = _check_probability(level, "level")
        return _scalar_or_array(np.asarray(ndtr(self.mu + ndtri(x)), dtype=np.float64))

    def reverse(self) -> GaussianPLD:
        """The Gaussian PLD is symmetric."""
        return self

    def compose(self, other: GaussianPLD) -> GaussianPLD:
        """Independent composition: ``mu^2`` adds."""
        if not isinstance(other, GaussianPLD):
            raise ParameterError(f"other must be a GaussianPLD; got {type(other).__name__}")
        return GaussianPLD(mu=math.hypot(self.mu, other.mu))

    def self_compose(self, k: int) -> GaussianPLD:
        """``k``-fold composition: ``mu sqrt(k)``."""
        k = check_int("k", k, minimum=1)
        return GaussianPLD(mu=self.mu * math.sqrt(k))


def gaussian(sigma: float, sensitivity: float = 1.0) -> GaussianPLD:
    """The Gaussian mechanism ``q(D) + N(0, sigma^2)`` with L2 sensitivity ``sensitivity``: ``mu = Δ/σ``."""
    return GaussianPLD.from_sigma(sigma, sensitivity)
