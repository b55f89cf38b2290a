"""The client randomizer: bit-vector randomized response with exact dyadic flips (seed 001 §1.3, §6).

Each bit of each report is flipped independently with probability exactly ``numerator / 2**precision`` (the
flip probability q rounded *up* to that grid; see :class:`~sufficientdp.randomization.DyadicProbability`), decided
by integer comparison of uniformly random bits. Production randomness comes from a CSPRNG
(:func:`~sufficientdp.randomization.default_source`); simulations pass a seeded ``numpy.random.Generator``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._errors import DataError, ParameterError
from .._validation import check_int, check_reports
from ..parameters import RandomizationParams
from ._packing import pack_bits, unpack_bits, words_per_report
from ._randomize import randomize_packed
from ._sources import RandomSource, as_source
from .encoders import encode_bits

__all__ = ["Randomizer", "check_domain", "randomize"]


class Randomizer:
    """Randomizes reports for one set of :class:`~sufficientdp.RandomizationParams`.

    Args:
        params: bits L, flip probability q, reports per person k, dyadic precision.
        rng: ``None`` for the CSPRNG (production), a seeded ``numpy.random.Generator`` for simulations, or any
            :class:`~sufficientdp.randomization.RandomSource`.

    Examples:
        >>> r = Randomizer(RandomizationParams(bits=4, q=0.25, reports=2), rng=np.random.default_rng(0))
        >>> r.randomize([[1, 0, 0, 1]]).shape
        (2, 4)
    """

    def __init__(self, params: RandomizationParams, rng: Any = None) -> None:
        if not isinstance(params, RandomizationParams):
            raise TypeError(f"params must be a RandomizationParams; got {type(params).__name__}")
        self.params = params
        self.source: RandomSource = as_source(rng)

    def randomize_packed(self, words: np.ndarray) -> np.ndarray:
        """Randomize packed reports ``(n, W)`` uint64 → ``(n*k, W)``; rows ``i*k .. i*k+k-1`` are person i's."""
        words = np.asarray(words)
        expected = words_per_report(self.params.bits)
        if words.ndim != 2 or words.shape[1] != expected:
            raise DataError(f"packed reports must have shape (n, {expected}) for bits={self.params.bits}; "
                            f"got {words.shape}")
        return randomize_packed(words, self.params.bits, self.params.flip, self.source, self.params.reports)

    def randomize(self, values: ArrayLike) -> np.ndarray:
        """Randomize an ``(n, L)`` 0/1 array; returns ``(n*k, L)`` uint8 (person-major: k rows per person)."""
        arr = encode_bits(values, self.params.bits, name="values")
        out = self.randomize_packed(pack_bits(arr))
        return unpack_bits(out, self.params.bits)


def check_domain(values: np.ndarray, *, max_weight: int | None = None, onehot: bool = False) -> None:
    """Refuse true vectors outside the declared domain (a guarantee proven for that domain covers only it).

    Raises:
        DataError: naming the first row with too many set bits (or, for one-hot, not exactly one), and its count.
        ParameterError: ``max_weight`` not an integer >= 1, or both arguments given.
    """
    if max_weight is None and not onehot:
        return
    if max_weight is not None and onehot:
        raise ParameterError("max_weight and onehot are exclusive (one-hot vectors have exactly one set bit)")
    weights = np.asarray(values, dtype=np.uint8).sum(axis=1, dtype=np.int64)
    if onehot:
        bad = np.flatnonzero(weights != 1)
        if bad.size:
            raise DataError(f"row {int(bad[0])} has {int(weights[bad[0]])} set bits; one-hot vectors have exactly 1")
        return
    w = check_int("max_weight", max_weight, minimum=1)
    bad = np.flatnonzero(weights > w)
    if bad.size:
        raise DataError(f"row {int(bad[0])} has {int(weights[bad[0]])} set bits; max_weight is {w} "
                        f"({bad.size} row(s) above it)")


def randomize(values: ArrayLike, *, q: float, reports: int = 1, rng: Any = None, precision: int = 32,
              max_weight: int | None = None, onehot: bool = False) -> np.ndarray:
    """Randomize an ``(n, L)`` array of 0/1 reports: flip each bit with probability q, k times per person.

    Args:
        values: (n, L) array-like of 0/1.
        q: flip probability in (0, 0.5); rounded up to a multiple of ``2**-precision``.
        reports: k >= 1 independent randomized reports per person.
        rng: ``None`` (CSPRNG), a seeded ``numpy.random.Generator``, or a RandomSource.
        precision: bits of the dyadic flip probability, in [2, 64].
        max_weight, onehot: the domain q was calibrated for (``calibrate(max_weight=..., onehot=...)``); rows
            outside it are refused before anything is randomized.

    Returns:
        ``(n*k, L)`` uint8 array; rows ``i*k .. i*k+k-1`` belong to person i (shuffle or tally before release).

    Raises:
        ParameterError: q, reports or precision out of range. DataError: values not a 2-D 0/1 array, or a row
            outside the declared domain.

    References:
        seed 001 §1.3 (the mechanism A_0), §6 (k-randomization).

    Examples:
        >>> out = randomize([[0, 1, 1]], q=0.1, reports=3, rng=np.random.default_rng(1))
        >>> out.shape, sorted(set(out.ravel().tolist())) <= [0, 1]
        ((3, 3), True)
    """
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as exc:  # ragged rows, objects numpy cannot hold
        raise DataError(f"values must be a rectangular 2-D array of 0/1 values; got {type(values).__name__} "
                        f"({str(exc)[:80]})") from None
    if arr.ndim != 2:
        raise DataError(f"values must be a 2-D array (people x bits); got shape {arr.shape}")
    reports = check_reports(reports)
    params = RandomizationParams(bits=max(arr.shape[1], 1), q=q, reports=reports, precision=precision)
    if max_weight is not None or onehot:
        check_domain(encode_bits(arr, params.bits, name="values"), max_weight=max_weight, onehot=onehot)
    return Randomizer(params, rng=rng).randomize(arr)
