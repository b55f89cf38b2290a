"""Randomization of packed reports: the mechanism A_0 of seed 001 §1.3, k times per person (§6).

Every valid bit of every report is XORed with an independent exact Bernoulli(q) flip from
:func:`~sufficientdp.randomization._kernel.bernoulli_words`; padding bits stay 0.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from .._numerics.dyadic import DyadicProbability
from .._validation import check_int, check_reports
from ._kernel import _check_prob, bernoulli_words
from ._packing import _check_words, words_per_report
from ._sources import RandomSource, as_source

__all__ = ["randomize_packed"]

_WORD_BITS: Final = 64
#: Flip words generated per call of the kernel (8 MiB): bounds memory, amortizes the kernel's per-call tail.
_STEP_WORDS: Final = 1 << 20


def _partial_word_flips(rows: int, tail: int, prob: DyadicProbability, source: RandomSource) -> np.ndarray:
    """Flips for the last, partial word of ``rows`` reports: ``tail`` (< 64) low bits each, the rest 0.

    One 64-bit flip word serves ``64 // tail`` reports (report r of a group takes bits ``r*tail ..
    r*tail + tail - 1``), so short reports do not pay for 64 flips each. Every flip bit is used at most once.
    """
    mask = np.uint64((1 << tail) - 1)
    per_word = _WORD_BITS // tail
    if per_word == 1:
        flips = bernoulli_words(rows, prob, source)
        flips &= mask
        return flips
    words = bernoulli_words(-(-rows // per_word), prob, source)
    shifts = np.arange(per_word, dtype=np.uint64) * np.uint64(tail)
    groups = (words[:, None] >> shifts) & mask
    out: np.ndarray = groups.reshape(-1)[:rows]
    return out


def randomize_packed(
    words: np.ndarray,
    bits: int,
    prob: DyadicProbability,
    source: RandomSource | np.random.Generator | None,
    reports: int = 1,
) -> np.ndarray:
    """Randomize packed reports: flip every valid bit independently with probability exactly ``prob``.

    Row ``i * reports + r`` of the output is the r-th independent randomization of input row i:
    ``words[i] XOR F`` where the valid bits of ``F`` are i.i.d. Bernoulli(``numerator / 2**precision``) and its
    padding bits are 0, so padding stays 0.

    Args:
        words: ``(n, W)`` ``uint64`` packed reports (:func:`~sufficientdp.randomization.pack_bits`),
            ``W = ceil(bits / 64)``, padding bits 0.
        bits: L, the report width, ``>= 1``.
        prob: the flip probability q as a :class:`~sufficientdp.randomization.DyadicProbability`.
        source: random words: a :class:`~sufficientdp.randomization.RandomSource` (production: a cryptographic
            one), a seeded ``numpy.random.Generator`` (simulations) or ``None`` (a fresh CSPRNG).
        reports: k >= 1 independent randomizations per person (seed 001 §6).

    Returns:
        ``(n * reports, W)`` ``uint64`` array, person-major (the k reports of person i are adjacent; shuffle or
        tally before release).

    Raises:
        ParameterError: if ``bits`` or ``reports`` is not an integer >= 1, ``prob`` is not a
            :class:`DyadicProbability`, or ``source`` is not a source.
        DataError: if ``words`` is not a 2-D ``uint64`` array with ``W`` columns and zero padding.

    References:
        seed 001 §1.3 (A_0: each bit flipped independently with probability q), §6 (k reports per person).

    Examples:
        >>> from sufficientdp.randomization._packing import pack_bits
        >>> q = DyadicProbability.from_float(0.25, precision=8)
        >>> x = pack_bits(np.zeros((2, 70), dtype=np.uint8))
        >>> y = randomize_packed(x, 70, q, np.random.default_rng(0), reports=3)
        >>> y.shape, bool((y[:, 1] >> np.uint64(6) == 0).all())  # 6 valid bits in word 1; padding stays 0
        ((6, 2), True)
    """
    bits = check_int("bits", bits, minimum=1)
    prob = _check_prob(prob)
    reports = check_reports(reports)
    words = _check_words(words, bits)
    src = as_source(source)
    n_words = words_per_report(bits)
    full, tail = divmod(bits, _WORD_BITS)
    total = words.shape[0] * reports
    native = words.astype(np.uint64, copy=reports == 1)  # a private copy either way (np.repeat copies)
    out = np.repeat(native, reports, axis=0) if reports > 1 else native
    rows_per_step = max(1, _STEP_WORDS // n_words)
    for begin in range(0, total, rows_per_step):
        end = min(begin + rows_per_step, total)
        rows = end - begin
        if full:
            flips = bernoulli_words(rows * full, prob, src).reshape(rows, full)
            out[begin:end, :full] ^= flips
        if tail:
            out[begin:end, full] ^= _partial_word_flips(rows, tail, prob, src)
    return out
