"""Immutable, validated parameter objects (STYLE.md, habit 2).

Domains (seed 001 §1.3): bits ``L >= 1``; flip probability ``q`` in (0, 1/2); reports per person ``k >= 1``;
population ``N >= 1``; privacy level ``epsilon > 0`` (``lambda = e**epsilon``); probability cut-off ``eta`` in
(0, 1). Every violation raises :class:`~sufficientdp.ParameterError` (a ``ValueError``) naming the parameter, the
value and the allowed range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._numerics.dyadic import DyadicProbability
from ._validation import check_int, check_open_interval, check_positive_finite

__all__ = ["PrivacyTarget", "RandomizationParams"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PrivacyTarget:
    """A sufficient-DP target: ``P[R(S) > e**epsilon] <= eta`` (seed 001, eq. 1.7).

    Attributes:
        epsilon: privacy level, finite and > 0.
        eta: probability cut-off in (0, 1), or ``None`` where a method does not use it (the paper's
            mean + beta * sd calibration sets no eta).

    Example:
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

    Example:
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
        object.__setattr__(self, "reports", check_int("reports", self.reports, minimum=1))
        object.__setattr__(self, "precision", check_int("precision", self.precision, minimum=2, maximum=64))
        DyadicProbability.from_float(self.q, precision=self.precision)  # validates representability

    @classmethod
    def from_local_epsilon(cls, *, bits: int, epsilon: float, reports: int = 1) -> RandomizationParams:
        """The local-DP flip probability ``q = 1 / (1 + e**(epsilon / L))`` (seed 001, eq. 4.2)."""
        bits = check_int("bits", bits, minimum=1)
        epsilon = check_positive_finite("epsilon", epsilon)
        return cls(bits=bits, q=1.0 / (1.0 + math.exp(epsilon / bits)), reports=reports)

    @property
    def p(self) -> float:
        """Probability of keeping a bit, ``1 - q``."""
        return 1.0 - self.q

    @property
    def flip(self) -> DyadicProbability:
        """The exact dyadic flip probability that the randomizer uses."""
        return DyadicProbability.from_float(self.q, precision=self.precision)

    @property
    def effective_q(self) -> float:
        """The flip probability that actually runs (``q`` rounded up to the dyadic grid)."""
        return self.flip.value
