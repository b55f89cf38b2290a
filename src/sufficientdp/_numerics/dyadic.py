"""Exact dyadic representation of a flip probability.

A float q is replaced by the dyadic rational ``numerator / 2**precision``. The randomizer decides every flip by
comparing ``precision`` uniformly random bits with ``numerator`` (as integers), so the flip probability is exactly
the dyadic value, with no floating-point comparison involved.

Rounding is *up* by default: for q < 1/2 a larger flip probability never weakens privacy, so the mechanism that
runs is at least as private as the one that was calibrated. The error is below ``2**-precision``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from .._errors import ParameterError
from .._validation import check_int, check_open_interval

__all__ = ["DyadicProbability"]

_ROUNDINGS = ("up", "down", "nearest")


@dataclass(frozen=True, slots=True, kw_only=True)
class DyadicProbability:
    """A probability ``numerator / 2**precision`` in (0, 1/2), used to decide bit flips exactly.

    Attributes:
        numerator: integer in ``[1, 2**(precision-1) - 1]``.
        precision: number of random bits per comparison, in ``[2, 64]``.

    Examples:
        >>> d = DyadicProbability.from_float(0.25, precision=8)
        >>> (d.numerator, d.precision, d.value)
        (64, 8, 0.25)
    """

    numerator: int
    precision: int = 32

    def __post_init__(self) -> None:
        check_int("precision", self.precision, minimum=2, maximum=64)
        limit = 1 << (self.precision - 1)
        if isinstance(self.numerator, bool) or not isinstance(self.numerator, int):
            raise ParameterError(f"numerator must be an int; got {self.numerator!r}")
        if not (1 <= self.numerator < limit):
            raise ParameterError(
                f"numerator must be in [1, {limit - 1}] so that q is in (0, 0.5) at precision "
                f"{self.precision}; got {self.numerator}"
            )

    @classmethod
    def from_float(cls, q: float, *, precision: int = 32, rounding: str = "up") -> DyadicProbability:
        """Round ``q`` in (0, 1/2) to a multiple of ``2**-precision``.

        Args:
            q: flip probability, in (0, 0.5).
            precision: bits of the dyadic representation, in [2, 64].
            rounding: ``"up"`` (default; never less noise than asked), ``"down"`` or ``"nearest"``.

        Raises:
            ParameterError: if q, precision or rounding is out of range, or q cannot be represented in (0, 1/2)
                at this precision.
        """
        q = check_open_interval("q", q, 0.0, 0.5)
        precision = check_int("precision", precision, minimum=2, maximum=64)
        if rounding not in _ROUNDINGS:
            raise ParameterError(f"rounding must be one of {_ROUNDINGS}; got {rounding!r}")
        exact = Fraction(q) * (1 << precision)  # Fraction(float) is exact
        if rounding == "up":
            num = math.ceil(exact)
        elif rounding == "down":
            num = math.floor(exact)
        else:
            num = round(exact)
        limit = 1 << (precision - 1)
        num = max(num, 1)
        if num >= limit:
            raise ParameterError(
                f"q={q!r} rounds to 1/2 at precision {precision}; q must be in (0, 0.5 - 2**-{precision})"
            )
        return cls(numerator=num, precision=precision)

    @property
    def fraction(self) -> Fraction:
        """The exact probability as a :class:`fractions.Fraction`."""
        return Fraction(self.numerator, 1 << self.precision)

    @property
    def value(self) -> float:
        """The probability as a float (exact for precision <= 53)."""
        return self.numerator / (1 << self.precision)
