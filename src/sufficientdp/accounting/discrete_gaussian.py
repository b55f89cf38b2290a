"""The discrete Gaussian ``N_Z(mu, sigma^2)``: exact pmf, privacy-loss distribution, zCDP and an exact sampler.

``P[X = x] = exp(-(x - mu)^2 / (2 sigma^2)) / Z`` for ``x`` in the integers, ``Z = sum_{k in Z} e^{-k^2/(2 sigma^2)}``
(digest §1.13, "Discrete Gaussian (Census)"; Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for
Differential Privacy", Definition 1). ``sigma^2`` is the scale *parameter*; the variance is slightly below it.

Contents:

* :func:`discrete_gaussian_log_normalizer` — ``log Z`` with a rigorous bracket (:class:`NormalizerBracket`);
* :class:`DiscreteGaussian` — ``log_pmf`` / ``pmf``, ``rho`` and the privacy-loss distribution
  (:meth:`DiscreteGaussian.pld`) of ``q(D) + N_Z(0, sigma^2)`` for an integer sensitivity;
* :func:`sample_discrete_gaussian`, :func:`sample_discrete_laplace`, :func:`sample_bernoulli_exp` — the exact
  samplers of CKS Algorithms 1–3 driven by uniform random integers, with every accept/reject decision made in
  rational arithmetic (no floating point).

References:
    Canonne, Kamath, Steinke (2020), arXiv:2004.00010: Definition 1 (pmf), Theorem 4 (``Δ^2/(2σ^2)``-zCDP),
    Proposition 5 (Rényi divergence), Algorithm 1 (Bernoulli(exp(-γ))), Algorithm 2 (discrete Laplace),
    Algorithm 3 (discrete Gaussian). papers/census-semantics-digest.md §1.13, §7 item 8.
"""

from __future__ import annotations

import math
import numbers
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._errors import ParameterError
from .._validation import check_int, check_positive_finite
from ..loss.distribution import PrivacyLossDistribution
from ..loss.result import Interval, Kind

__all__ = [
    "MAX_PLD_ATOMS",
    "DiscreteGaussian",
    "NormalizerBracket",
    "discrete_gaussian_log_normalizer",
    "sample_bernoulli_exp",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
]

#: :meth:`DiscreteGaussian.pld` refuses supports with more atoms than this.
MAX_PLD_ATOMS = 4_000_000
_ULP = 2.0**-52
#: Relative rounding allowance on the float evaluation of Z (a few dozen operations, each <= 1/2 ulp).
_ROUNDING = 64 * _ULP


# ---------------------------------------------------------------------------------------------------------------
# normalising constant
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalizerBracket:
    """``log Z(sigma^2)`` with a rigorous bracket ``lower <= log Z <= upper``.

    Attributes:
        log_z: the point value.
        lower, upper: the bracket (truncation error of the series plus a float-rounding allowance of
            64 ulp relative on ``Z``).
        method: ``"direct"`` (sum over ``|k| <= K``) or ``"poisson"`` (Poisson summation, for ``sigma >= 1``).
        kind: always ``"exact"`` (a bracketed exact value).
    """

    log_z: float
    lower: float
    upper: float
    method: str
    kind: str = "exact"

    @property
    def interval(self) -> Interval:
        """``Interval(lower, log_z, upper)`` with this bracket's ``kind``."""
        return Interval(self.lower, self.log_z, self.upper, kind=Kind(self.kind))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"log_z": self.log_z, "lower": self.lower, "upper": self.upper, "method": self.method,
                "kind": self.kind}


def _check_sigma_squared(sigma_squared: Any) -> float:
    if isinstance(sigma_squared, Fraction):
        if sigma_squared <= 0:
            raise ParameterError(f"sigma_squared must be finite and > 0, i.e. in (0, inf); got {sigma_squared!r}")
        value = float(sigma_squared)
        if not 0.0 < value < math.inf:
            raise ParameterError(f"sigma_squared must be representable as a positive float; got {sigma_squared!r}")
        return value
    return check_positive_finite("sigma_squared", sigma_squared)


def discrete_gaussian_log_normalizer(sigma_squared: float | Fraction) -> NormalizerBracket:
    """``log Z`` with ``Z = sum_{k in Z} exp(-k^2 / (2 sigma^2))`` and a rigorous bracket.

    For ``sigma >= 1`` Poisson summation gives ``Z = sigma sqrt(2 pi) (1 + 2 sum_{k>=1} e^{-2 pi^2 sigma^2 k^2})``;
    the terms ``k >= 2`` total at most ``3 e^{-8 pi^2 sigma^2} < 1e-33`` (relative) and are bracketed, not summed.
    For ``sigma < 1`` the series is summed directly over ``|k| <= K`` with ``K = ceil(sigma sqrt(2 * 60)) + 1``; the
    rest is at most ``2 int_K^inf e^{-x^2/(2 sigma^2)} dx = sigma sqrt(2 pi) erfc(K / (sigma sqrt 2))`` (the summand
    decreases for ``k >= 0``). The float evaluation is allowed 64 ulp of relative rounding on each side.

    Args:
        sigma_squared: the scale parameter ``sigma^2`` (finite, > 0; float or Fraction).

    Returns:
        A :class:`NormalizerBracket`.

    Raises:
        ParameterError: ``sigma_squared`` not finite and positive.

    References:
        CKS 2020, Definition 1; Poisson summation as in CKS §2 (their bound ``Z <= sqrt(2 pi) sigma + 1``).

    Examples:
        >>> b = discrete_gaussian_log_normalizer(4.0)  # sigma = 2: Z = 2 sqrt(2 pi)(1 + 2 e^{-8 pi^2} + ...)
        >>> round(b.log_z, 12) == round(math.log(2 * math.sqrt(2 * math.pi)), 12)
        True
    """
    s2 = _check_sigma_squared(sigma_squared)
    sigma = math.sqrt(s2)
    if sigma >= 1.0:
        a = 2.0 * math.pi**2 * s2
        first = 2.0 * math.exp(-a)
        log_theta = math.log1p(first)
        trunc = 3.0 * math.exp(-4.0 * a)  # >= 2 sum_{k>=2} e^{-a k^2}, relative to theta >= 1
        log_z = math.log(sigma) + 0.5 * math.log(2.0 * math.pi) + log_theta
        lower = log_z + math.log1p(-_ROUNDING)
        upper = log_z + math.log1p(trunc) + math.log1p(_ROUNDING)
        return NormalizerBracket(log_z=log_z, lower=lower, upper=upper, method="poisson")
    k_max = int(math.ceil(sigma * math.sqrt(120.0))) + 1
    ks = np.arange(1, k_max + 1, dtype=np.float64)
    z = 1.0 + 2.0 * math.fsum(np.exp(-(ks**2) / (2.0 * s2)).tolist())
    trunc = sigma * math.sqrt(2.0 * math.pi) * math.erfc(k_max / (sigma * math.sqrt(2.0)))
    log_z = math.log(z)
    lower = log_z + math.log1p(-_ROUNDING)
    upper = log_z + math.log1p(trunc / z + _ROUNDING)
    return NormalizerBracket(log_z=log_z, lower=lower, upper=upper, method="direct")


def _log_tail_bound(k: float, sigma: float, log_z_lower: float) -> float:
    """``log`` of an upper bound on ``P[X > k]`` for ``X ~ N_Z(0, sigma^2)``, ``k >= 0`` (integral comparison)."""
    integral = sigma * math.sqrt(math.pi / 2.0) * math.erfc(k / (sigma * math.sqrt(2.0)))
    if integral <= 0.0:  # erfc underflowed: use the Gaussian tail e^{-k^2/2s^2} * sigma^2/k (Mills' ratio)
        return -(k**2) / (2.0 * sigma**2) + 2.0 * math.log(sigma) - math.log(k) - log_z_lower
    return math.log(integral) - log_z_lower


# ---------------------------------------------------------------------------------------------------------------
# distribution object
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscreteGaussian:
    """The discrete Gaussian mechanism ``q(D) + N_Z(0, sigma^2)`` for an integer query of sensitivity ``Δ``.

    Attributes:
        sigma_squared: scale parameter ``sigma^2`` (float or Fraction, > 0). The Census uses
            ``sigma^2 = 1 / rho*`` per cell (digest §1.13).
        sensitivity: ``Δ``, integer >= 1 (``|q(D) - q(D')| <= Δ``).

    Examples:
        >>> dg = DiscreteGaussian(sigma_squared=2.0, sensitivity=1)
        >>> dg.rho
        0.25
        >>> round(float(dg.pmf(0)), 6)  # 1 / Z(2)
        0.282095
    """

    sigma_squared: float | Fraction
    sensitivity: int = 1

    def __post_init__(self) -> None:
        _check_sigma_squared(self.sigma_squared)
        object.__setattr__(self, "sensitivity", check_int("sensitivity", self.sensitivity, minimum=1))

    @property
    def sigma(self) -> float:
        """``sqrt(sigma^2)``."""
        return math.sqrt(float(self.sigma_squared))

    @property
    def rho(self) -> float:
        """zCDP parameter ``Δ^2 / (2 sigma^2)`` (CKS Theorem 4), rounded up to the next float (safe direction).

        It is tight: the Rényi divergence of order ``alpha`` between ``N_Z(Δ, σ^2)`` and ``N_Z(0, σ^2)`` is at most
        ``alpha Δ^2/(2σ^2)``, with equality at every integer ``alpha`` (CKS Proposition 5).
        """
        exact = Fraction(self.sensitivity**2) / (2 * Fraction(self.sigma_squared))
        value = float(exact)
        return value if Fraction(value) >= exact else float(np.nextafter(value, np.inf))

    def log_normalizer(self) -> NormalizerBracket:
        """``log Z`` with its bracket (:func:`discrete_gaussian_log_normalizer`)."""
        return discrete_gaussian_log_normalizer(self.sigma_squared)

    def log_pmf(self, x: ArrayLike, mu: int = 0) -> Any:
        """``log P[N_Z(mu, sigma^2) = x] = -(x - mu)^2/(2 sigma^2) - log Z`` (vectorized over integer ``x``)."""
        xs = np.asarray(x)
        if xs.dtype.kind not in "iu":
            if xs.dtype.kind != "f" or not np.all(np.isfinite(xs)) or np.any(xs != np.floor(xs)):
                raise ParameterError(f"x must be integer-valued; got {x!r}")
        mu = check_int("mu", mu, minimum=-(2**62))
        d = xs.astype(np.float64) - float(mu)
        out = -(d**2) / (2.0 * float(self.sigma_squared)) - self.log_normalizer().log_z
        return float(out) if out.ndim == 0 else out

    def pmf(self, x: ArrayLike, mu: int = 0) -> Any:
        """``P[N_Z(mu, sigma^2) = x]`` (``exp`` of :meth:`log_pmf`)."""
        return np.exp(self.log_pmf(x, mu))

    def pld(self, tail_tol: float = 1e-15) -> PrivacyLossDistribution:
        """PLD of ``P = N_Z(Δ, σ^2)`` vs ``Q = N_Z(0, σ^2)``; safe-direction truncation of the two tails.

        An output ``w = Δ + z`` has loss ``L = (Δ^2 + 2Δz)/(2σ^2)``. The noise ``z`` is kept for ``|z| <= K`` with
        ``K`` the smallest integer such that the rigorous tail bound ``P[|z| > K - Δ] <= tail_tol``; the P-mass
        of the dropped outputs (bounded above) goes to the ``+inf`` atom and their Q-mass (also bounded above) to
        the ``-inf`` record. This is the PLD of a pair that dominates the true one (the dropped outputs are merged
        into one P-only and one Q-only output, from which the true pair is a post-processing), so ``delta``,
        ``eta`` and everything computed from it — also after :meth:`PrivacyLossDistribution.reverse` and
        composition — are **upper bounds**, within ``tail_tol`` (per factor) of the exact values. Probabilities use
        the lower end of the ``log Z`` bracket (they are overstated by at most 64 ulp). The two directions have the
        same PLD (the pair is symmetric under ``w -> Δ - w``).

        Args:
            tail_tol: allowed dropped mass per side, in (0, 1e-10].

        Raises:
            ParameterError: ``tail_tol`` out of range, or more than :data:`MAX_PLD_ATOMS` atoms would be needed.
        """
        if isinstance(tail_tol, bool) or not isinstance(tail_tol, numbers.Real) or not (0.0 < tail_tol <= 1e-10):
            raise ParameterError(f"tail_tol must be in (0, 1e-10]; got {tail_tol!r}")
        s2 = float(self.sigma_squared)
        sigma = math.sqrt(s2)
        d = self.sensitivity
        bracket = self.log_normalizer()
        log_tol = math.log(tail_tol) - math.log(2.0)  # two one-sided tails per measure
        k = max(1, int(math.ceil(sigma * math.sqrt(2.0 * max(1.0, -log_tol)))))
        while _log_tail_bound(float(k), sigma, bracket.lower) > log_tol:
            k += max(1, k // 8)
        k_cut = k + d  # P[|z| > k_cut - Δ] <= tail_tol; the Q-side tails are then within tail_tol too
        if 2 * k_cut + 1 > MAX_PLD_ATOMS:
            raise ParameterError(
                f"the support 2K + 1 = {2 * k_cut + 1} must be <= MAX_PLD_ATOMS = {MAX_PLD_ATOMS} "
                f"(sigma_squared = {self.sigma_squared!r} too large for an atom-by-atom PLD)"
            )
        z = np.arange(-k_cut, k_cut + 1, dtype=np.float64)
        log_p = -(z**2) / (2.0 * s2) - bracket.lower
        losses = (d * d + 2.0 * d * z) / (2.0 * s2)
        probs = np.exp(log_p)
        # dropped P-mass: P[|z| > k_cut]; dropped Q-mass: Q[w outside Δ + [-k_cut, k_cut]] <= P[|z| > k_cut - Δ]
        p_drop = min(1.0, 2.0 * math.exp(_log_tail_bound(float(k_cut), sigma, bracket.lower)))
        q_drop = min(1.0, math.exp(_log_tail_bound(float(k_cut - d), sigma, bracket.lower))
                     + math.exp(_log_tail_bound(float(k_cut + d), sigma, bracket.lower)))
        return PrivacyLossDistribution(losses=losses, probabilities=probs, infinity_mass=p_drop,
                                       neg_infinity_mass=q_drop)


# ---------------------------------------------------------------------------------------------------------------
# exact samplers (CKS Algorithms 1-3)
# ---------------------------------------------------------------------------------------------------------------

RandBelow = Callable[[int], int]


class _WordRandBelow:
    """Uniform integers in ``[0, n)`` from a stream of uniform 64-bit words, by rejection (exact, unbiased)."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._buf: list[int] = []

    def _word(self) -> int:
        if not self._buf:
            self._buf = [int(w) for w in self._source.random_words(1024)][::-1]
        return self._buf.pop()

    def __call__(self, n: int) -> int:
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        words = (bits + 63) // 64
        while True:
            x = 0
            for _ in range(words):
                x = (x << 64) | self._word()
            x >>= 64 * words - bits
            if x < n:
                return x


def _as_randbelow(rng: Any) -> RandBelow:
    """``rng`` -> a function ``randbelow(n)`` returning a uniform integer in ``[0, n)``."""
    if rng is None:
        return secrets.randbelow
    from ..randomization._sources import RandomSource, as_source

    if isinstance(rng, np.random.Generator) or (not isinstance(rng, type) and isinstance(rng, RandomSource)):
        return _WordRandBelow(as_source(rng))
    if callable(rng):
        return rng
    raise ParameterError(
        "rng must be None (secrets.randbelow, cryptographic), a numpy.random.Generator (seeded simulation), a "
        f"RandomSource, or a callable randbelow(n) -> int in [0, n); got {rng!r}"
    )


def _draw(randbelow: RandBelow, n: int) -> int:
    value = randbelow(n)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= int(value) < n:
        raise ParameterError(f"the random source must return an integer in [0, {n}); got {value!r}")
    return int(value)


def _bernoulli(randbelow: RandBelow, num: int, den: int) -> bool:
    """Bernoulli(num/den) for integers 0 <= num <= den: ``randbelow(den) < num``."""
    return _draw(randbelow, den) < num


def _bernoulli_exp_unit(randbelow: RandBelow, gamma: Fraction) -> bool:
    """Bernoulli(exp(-gamma)) for 0 <= gamma <= 1 (CKS Algorithm 1, first part)."""
    k = 1
    while _bernoulli(randbelow, gamma.numerator, gamma.denominator * k):
        k += 1
    return k % 2 == 1


def _bernoulli_exp(randbelow: RandBelow, gamma: Fraction) -> bool:
    """Bernoulli(exp(-gamma)) for rational gamma >= 0 (CKS Algorithm 1)."""
    whole = gamma.numerator // gamma.denominator
    for _ in range(whole):
        if not _bernoulli_exp_unit(randbelow, Fraction(1)):
            return False
    return _bernoulli_exp_unit(randbelow, gamma - whole)


def _discrete_laplace(randbelow: RandBelow, t: int) -> int:
    """``P[Y = y] ∝ exp(-|y|/t)`` for an integer scale t >= 1 (CKS Algorithm 2 with s = 1)."""
    while True:
        u = _draw(randbelow, t)
        if not _bernoulli_exp(randbelow, Fraction(u, t)):
            continue
        v = 0
        while _bernoulli_exp_unit(randbelow, Fraction(1)):
            v += 1
        x = u + t * v
        negative = _draw(randbelow, 2) == 1
        if negative and x == 0:
            continue
        return -x if negative else x


def _discrete_gaussian(randbelow: RandBelow, s2: Fraction, t: int) -> int:
    """CKS Algorithm 3: discrete Laplace proposal of scale t = floor(sigma) + 1, accept w.p. exp(-(|y|-s2/t)^2/2s2)."""
    while True:
        y = _discrete_laplace(randbelow, t)
        gamma = (abs(y) - s2 / t) ** 2 / (2 * s2)
        if _bernoulli_exp(randbelow, gamma):
            return y


def _as_rational(name: str, value: Any, *, allow_zero: bool = False) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (numbers.Rational, float, str)):
        raise ParameterError(f"{name} must be a positive rational (int, Fraction, finite float or 'a/b'); "
                             f"got {value!r}")
    try:
        frac = Fraction(value)
    except (ValueError, ZeroDivisionError, OverflowError):
        raise ParameterError(f"{name} must be a positive rational number; got {value!r}") from None
    if frac < 0 or (frac == 0 and not allow_zero):
        rng_text = "[0, inf)" if allow_zero else "(0, inf)"
        raise ParameterError(f"{name} must be a rational number in {rng_text}; got {value!r}")
    return frac


def _check_size(size: Any) -> int | None:
    if size is None:
        return None
    return check_int("size", size, minimum=0)


def _finish(values: list[int], size: int | None) -> Any:
    if size is None:
        return values[0]
    return np.asarray(values, dtype=object if any(abs(v) >= 2**62 for v in values) else np.int64)


def sample_bernoulli_exp(gamma: Fraction | int | float | str, size: int | None = None, *, rng: Any = None) -> Any:
    """Exact draws from Bernoulli(exp(-gamma)) for rational ``gamma >= 0`` (CKS Algorithm 1).

    Args:
        gamma: rational ``>= 0`` (int, Fraction, float taken exactly, or ``"a/b"``).
        size: None for one ``bool``; otherwise the number of draws (a bool array).
        rng: randomness: None (``secrets.randbelow``), a :class:`numpy.random.Generator` (seeded simulations,
            not cryptographic), a ``RandomSource``, or a callable ``randbelow(n)`` returning uniform ints in [0, n).

    Raises:
        ParameterError: gamma negative or not rational; bad size or rng.

    Examples:
        >>> sample_bernoulli_exp(0, rng=np.random.default_rng(1))
        True
    """
    g = _as_rational("gamma", gamma, allow_zero=True)
    n = _check_size(size)
    rb = _as_randbelow(rng)
    draws = [_bernoulli_exp(rb, g) for _ in range(1 if n is None else n)]
    return draws[0] if n is None else np.asarray(draws, dtype=bool)


def sample_discrete_laplace(scale: int, size: int | None = None, *, rng: Any = None) -> Any:
    """Exact draws from the discrete Laplace ``P[Y = y] = (e^{1/t} - 1)/(e^{1/t} + 1) e^{-|y|/t}`` (CKS Alg. 2).

    Args:
        scale: ``t``, integer >= 1.
        size: None for one ``int``; otherwise the number of draws (an int64 array).
        rng: as in :func:`sample_bernoulli_exp`.

    Examples:
        >>> isinstance(sample_discrete_laplace(3, rng=np.random.default_rng(0)), int)
        True
    """
    t = check_int("scale", scale, minimum=1)
    n = _check_size(size)
    rb = _as_randbelow(rng)
    return _finish([_discrete_laplace(rb, t) for _ in range(1 if n is None else n)], n)


def sample_discrete_gaussian(sigma_squared: Fraction | int | float | str, size: int | None = None, *,
                             rng: Any = None) -> Any:
    """Exact draws from ``N_Z(0, sigma^2)`` for rational ``sigma^2`` (CKS Algorithm 3).

    ``t = floor(sigma) + 1`` (computed as ``isqrt(floor(sigma^2)) + 1``, exactly); repeat: ``Y`` from the
    discrete Laplace of scale ``t``, accept with probability ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))`` by
    Algorithm 1. Every decision compares a uniform random integer with an integer numerator, so the output law
    is exactly the discrete Gaussian (no floating point); the expected number of uniform draws is a small constant
    per sample (CKS Theorem 6 gives the rejection rate).

    Args:
        sigma_squared: positive rational (int, Fraction, float taken *exactly* as its binary value, or ``"a/b"``).
        size: None for one ``int``; otherwise the number of draws (an int64 array).
        rng: None for the CSPRNG ``secrets.randbelow`` (production); a seeded :class:`numpy.random.Generator` or a
            ``RandomSource`` (its 64-bit words are turned into uniform integers by rejection); or any callable
            ``randbelow(n)``.

    Raises:
        ParameterError: ``sigma_squared`` not a positive rational; bad ``size``; bad ``rng``.

    References:
        CKS 2020, Algorithms 1–3, Theorem 6.

    Examples:
        >>> x = sample_discrete_gaussian("9/4", size=5, rng=np.random.default_rng(7))
        >>> x.dtype, x.shape
        (dtype('int64'), (5,))
    """
    s2 = _as_rational("sigma_squared", sigma_squared)
    t = math.isqrt(s2.numerator // s2.denominator) + 1
    n = _check_size(size)
    rb = _as_randbelow(rng)
    return _finish([_discrete_gaussian(rb, s2, t) for _ in range(1 if n is None else n)], n)
