"""Immutable, validated parameter objects (STYLE.md, habit 2).

Domains (seed 001 §1.3): bits ``L >= 1``; flip probability ``q`` in (0, 1/2); reports per person ``k >= 1``;
population ``N >= 1``; privacy level ``epsilon > 0`` (``lambda = e**epsilon``); probability cut-off ``eta`` in
(0, 1). Every violation raises :class:`~sufficientdp.ParameterError` (a ``ValueError``) naming the parameter, the
value and the allowed range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._numerics.search import Bracket, Creep, search
from ._validation import check_int, check_open_interval, check_positive_finite, check_reports

if TYPE_CHECKING:  # (loaded where a flip probability is built: fractions and decimal stay out of start-up)
    from ._numerics.dyadic import DyadicProbability

__all__ = ["PrivacyTarget", "RandomizationParams", "effective_bits", "local_q", "sigma_per_sqrt_n"]

#: Largest L (or L1 distance between neighbouring reports) the mechanism facts accept (as ``RandomizationParams``'s
#: callers: the CLI caps bits at 4096, campaigns at 1024).
_MAX_DISTANCE = 10**6
#: Largest k.
_MAX_REPORTS = 10**6


def effective_bits(bits: int, max_weight: int | None) -> int:
    """``L_eff = min(L, 2 w)`` for reports with at most ``w`` set bits (seed 001 §5; unproven for sufficient DP)."""
    bits = check_int("bits", bits, minimum=1)
    if max_weight is None:
        return bits
    w = check_int("max_weight", max_weight, minimum=1, maximum=bits)
    return min(bits, 2 * w)


def local_q(bits: int, epsilon: float, reports: int = 1) -> float:
    """The local-DP flip probability: the smallest double ``q`` with ``k L log(p / q) <= epsilon``.

    Bit-vector randomized response flipping each of ``L`` bits with probability ``q`` is ``L log(p/q)``-LDP per
    report, and ``k`` reports compose to ``k L log(p/q)`` (seed 001 eq. 4.2 with k-fold composition), so
    ``q = 1 / (1 + e**(epsilon / (k L)))``; the value is rounded *up* until the inequality holds in floating point,
    so the returned q is never less noisy than epsilon-LDP needs. ``bits`` may be any L1 distance between
    neighbouring reports (``2 w`` for reports with at most ``w`` set bits). This is the one implementation; the
    calibration, accounting and analysis modules all call it.

    Raises:
        ParameterError: bits or reports outside [1, 10**6], epsilon not finite and > 0, or epsilon / (k L) so
            small that q rounds to 1/2 (no report content survives).

    Examples:
        >>> round(local_q(5, math.log(2)), 3)
        0.465
        >>> round(local_q(5, 1.0, reports=3), 4)
        0.4833
    """
    bits = check_int("bits", bits, minimum=1, maximum=_MAX_DISTANCE)
    epsilon = check_positive_finite("epsilon", epsilon)
    reports = check_int("reports", reports, minimum=1, maximum=_MAX_REPORTS)
    kl = bits * reports
    x = epsilon / kl
    t = math.exp(-x)
    q = t / (1.0 + t)  # = 1 / (1 + e**x) to a few ulps, also where q is tiny
    # The loss log(p/q) = log1p((1 - 2q) / q): 1 - 2q is exact for q >= 1/4 and within an ulp below, so the evaluated
    # loss is within a few ulps of the true one; the 2**-48 relative margin (16 ulps) covers them (checked in 50-digit
    # arithmetic in tests/test_parameters.py). A q that fails moves up by the excess (d log(p/q) = -dq / (p q)): the
    # one search's creep with a Newton step (64 probes at most; none passing leaves q = 1/2, refused below).

    def excess(y: float) -> tuple[bool, float]:
        e = kl * math.log1p((1.0 - 2.0 * y) / y) * (1.0 + 2.0**-48) - epsilon
        return e <= 0.0, e

    if 0.0 < q < 0.5:
        q = search(excess, Bracket(fail=0.0, ok=0.5), Creep(rel=0.0, first=q, scale=kl), max_probes=64).ok
    if not 0.0 < q < 0.5:
        from ._errors import ParameterError

        raise ParameterError(f"epsilon / (reports * bits) = {x!r} is too small: the local-DP flip probability "
                             "rounds to 1/2 in double precision; use epsilon / (reports * bits) >= 1e-15")
    return q


def sigma_per_sqrt_n(q: float, reports: int = 1) -> float:
    """Standard deviation of an unbiased per-bit count estimate, divided by sqrt(N): ``sqrt(q p / k) / (p - q)``.

    Exact for any true count (seed 001 §4 and §6): every report bit is Bernoulli with variance ``p q`` whatever the
    true bit, and ``d_hat = (M / k - q N) / (p - q)``.

    Raises:
        ParameterError: q outside (0, 1/2) or reports outside [1, 10**6].

    Examples:
        >>> round(sigma_per_sqrt_n(0.351), 2)
        1.6
        >>> round(sigma_per_sqrt_n(0.25, 4), 4)
        0.433
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    reports = check_int("reports", reports, minimum=1, maximum=_MAX_REPORTS)
    p = 1.0 - q
    return math.sqrt(q * p / reports) / (p - q)


@dataclass(frozen=True, slots=True, kw_only=True)
class PrivacyTarget:
    """A sufficient-DP target: ``P[R(S) > e**epsilon] <= eta`` (seed 001, eq. 1.7).

    Attributes:
        epsilon: privacy level, finite and > 0.
        eta: probability cut-off in (0, 1), or ``None`` where a method does not use it (the paper's
            mean + beta * sd calibration sets no eta).

    Examples:
        >>> PrivacyTarget(epsilon=math.log(2)).lam
        2.0
    """

    epsilon: float
    eta: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive_finite("epsilon", self.epsilon))
        if self.eta is not None:
            object.__setattr__(self, "eta", check_open_interval("eta", self.eta, 0.0, 1.0))

    @classmethod
    def from_lambda(cls, lam: float, eta: float | None = None) -> PrivacyTarget:
        """Build from the ratio bound ``lambda = e**epsilon`` (must be > 1)."""
        lam = check_positive_finite("lambda", lam)
        if lam <= 1.0:
            from ._errors import ParameterError

            raise ParameterError(f"lambda must be in (1, inf); got {lam!r}")
        return cls(epsilon=math.log(lam), eta=eta)

    @property
    def lam(self) -> float:
        """The ratio bound ``lambda = e**epsilon``."""
        return math.exp(self.epsilon)


@dataclass(frozen=True, slots=True, kw_only=True)
class RandomizationParams:
    """Bit-vector randomized response: each of ``bits`` bits flipped with probability ``q``, ``reports`` times.

    The flip probability that actually runs is the dyadic rational :attr:`flip` (``q`` rounded *up* to a multiple
    of ``2**-precision``); :attr:`effective_q` is its value. Estimators use the effective value.

    Attributes:
        bits: L >= 1, the length of a report.
        q: flip probability in (0, 0.5).
        reports: k >= 1, independent randomized reports per person (k-randomization, seed 001 §6).
        precision: bits of the dyadic representation of q, in [2, 64] (default 32).

    Examples:
        >>> RandomizationParams(bits=8, q=0.25).p
        0.75
    """

    bits: int
    q: float
    reports: int = 1
    precision: int = 32

    def __post_init__(self) -> None:
        object.__setattr__(self, "bits", check_int("bits", self.bits, minimum=1))
        object.__setattr__(self, "q", check_open_interval("q", self.q, 0.0, 0.5))
        object.__setattr__(self, "reports", check_reports(self.reports))
        object.__setattr__(self, "precision", check_int("precision", self.precision, minimum=2, maximum=64))
        from ._numerics.dyadic import DyadicProbability

        DyadicProbability.from_float(self.q, precision=self.precision)  # validates representability

    @classmethod
    def from_local_epsilon(cls, *, bits: int, epsilon: float, reports: int = 1) -> RandomizationParams:
        """Parameters that are epsilon-LDP over all ``reports``: ``q = 1 / (1 + e**(epsilon / (k L)))`` (seed 001,
        eq. 4.2 with k-fold composition; see :func:`local_q`).

        Examples:
            >>> round(RandomizationParams.from_local_epsilon(bits=5, epsilon=1.0, reports=3).q, 4)
            0.4833
        """
        return cls(bits=bits, q=local_q(bits, epsilon, reports), reports=reports)

    @property
    def p(self) -> float:
        """Probability of keeping a bit, ``1 - q``."""
        return 1.0 - self.q

    @property
    def flip(self) -> DyadicProbability:
        """The exact dyadic flip probability that the randomizer uses."""
        from ._numerics.dyadic import DyadicProbability

        return DyadicProbability.from_float(self.q, precision=self.precision)

    @property
    def effective_q(self) -> float:
        """The flip probability that actually runs (``q`` rounded up to the dyadic grid)."""
        return self.flip.value
