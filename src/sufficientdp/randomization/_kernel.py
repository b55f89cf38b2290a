"""Exact Bernoulli bits, 64 at a time: the flip decisions of the randomizer (seed 001 §1.3).

The mechanism A_0 of seed 001 §1.3 flips every bit of a report independently with probability q. Here q is the
dyadic rational ``numerator / 2**precision`` (:class:`~sufficientdp.randomization.DyadicProbability`) and a flip is
decided *exactly*, by integer comparison of ``precision`` uniformly random bits, never by a float comparison.

**The fast kernel** (:func:`bernoulli_words`) works on 64 lanes at once (one ``uint64`` word holds 64 flips):
a lane flips iff the ``precision``-bit integer ``V`` of its random bits exceeds ``c = 2**precision - 1 -
numerator``, which has probability exactly ``numerator / 2**precision``. The comparison runs bit-sliced from the
most significant bit and stops for a lane at its first bit that differs from ``c``'s (about 8.5 random words per
output word instead of ``precision``); whether more bits are drawn depends only on bits already read, so every
lane reads i.i.d. uniform bits, lanes read disjoint bits, and the flips are independent and exact. Proof and the
round-by-round rule: ``docs/proofs/exact_flips.md``.

**The reference** (:func:`bernoulli_words_reference`) is the obvious version, used as a test oracle and as the
benchmark's naive baseline: one random 32-bit integer per flip (64-bit above precision 32), keep its top
``precision`` bits as U, flip iff ``U < numerator``, pack with ``np.packbits``.

References:
    seed 001 §1.3 (``papers/001_3d8ddaba8b46cf9c.txt``): the randomization A_0 of bit vectors;
    ``docs/proofs/exact_flips.md``.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .._errors import DataError, ParameterError
from .._numerics.dyadic import DyadicProbability
from .._validation import check_int
from ._sources import GeneratorRandomSource, KeystreamRandomSource, RandomSource, SystemRandomSource, as_source

__all__ = ["bernoulli_words", "bernoulli_words_reference"]

#: Words per chunk of the dense phase (512 KiB per array: eq, res and the random word stay in L2).
_CHUNK_WORDS: Final = 1 << 16
#: Rounds run on every word of a chunk before undecided words are compacted. After r rounds a word still has an
#: undecided lane with probability 1 - (1 - 2**-r)**64: 0.87 (r=5), 0.64 (6), 0.39 (7), 0.22 (8), 0.12 (9). Dense
#: rounds cost ~1 random word plus 1-3 in-place ufunc passes; compaction costs a mask, flatnonzero, gathers and a
#: scatter, so compacting late is cheaper: in a sweep on the benchmark machine 7-9 dense rounds were equally fast
#: (within noise) and 5-6 slower; chunk 2**15..2**17 and pool 2**15..2**18 made no measurable difference.
_DENSE_ROUNDS: Final = 8
#: Undecided words (from many chunks) are pooled until there are this many, then finished together.
_POOL_WORDS: Final = 1 << 16
#: Rounds between two compactions of the pool.
_TAIL_STEP: Final = 1
#: Sources known to return fresh, writable arrays (others' first draw of a chunk is copied).
_FRESH_ARRAY_SOURCES: Final = (GeneratorRandomSource, KeystreamRandomSource, SystemRandomSource)
#: Flips per chunk of the reference implementation (bounds its memory to a few MB).
_REFERENCE_CHUNK_FLIPS: Final = 1 << 20


def _check_prob(prob: Any) -> DyadicProbability:
    if not isinstance(prob, DyadicProbability):
        raise ParameterError(
            f"prob must be a DyadicProbability (e.g. DyadicProbability.from_float(q)); got {prob!r}"
        )
    return prob


def _draw(source: RandomSource, n: int) -> np.ndarray:
    """``source.random_words(n)``, checked: a wrong shape or dtype must not broadcast silently."""
    words = source.random_words(n)
    if not isinstance(words, np.ndarray) or words.dtype != np.uint64 or words.shape != (n,):
        shape = getattr(words, "shape", None)
        dtype = getattr(words, "dtype", type(words).__name__)
        raise DataError(
            f"{type(source).__name__}.random_words({n}) must return a ({n},) uint64 array; "
            f"got shape {shape} and dtype {dtype}"
        )
    return words


def _threshold_bits(prob: DyadicProbability) -> tuple[bool, ...]:
    """Bits of ``c = 2**p - 1 - numerator``, most significant first, without its trailing ones.

    The trailing ones of c are the trailing zeros of the numerator; a lane still undecided when they start
    satisfies ``V <= c`` whatever its remaining bits, so they are never compared.
    """
    p, num = prob.precision, prob.numerator
    c = (1 << p) - 1 - num
    rounds = p - ((num & -num).bit_length() - 1)
    return tuple(bool((c >> (p - 1 - i)) & 1) for i in range(rounds))


def _run_rounds(
    eq: np.ndarray,
    res: np.ndarray,
    res_valid: bool,
    bits: tuple[bool, ...],
    start: int,
    stop: int,
    source: RandomSource,
) -> bool:
    """Run comparison rounds ``start .. stop-1`` on ``eq`` and ``res`` in place.

    Args:
        eq: undecided lanes (1 = all random bits so far equal the threshold's).
        res: lanes decided *flip*; ignored (treated as 0) while ``res_valid`` is False.
        res_valid: whether ``res`` holds data yet (it is written, not read, by the first deciding round).
        bits: threshold bits from :func:`_threshold_bits`.
        start, stop: round indices.
        source: random words.

    Returns:
        Whether ``res`` holds data (False if no round in the range could decide a flip).
    """
    n = eq.size
    for i in range(start, stop):
        v = _draw(source, n)
        if not v.flags.writeable or np.may_share_memory(v, eq) or np.may_share_memory(v, res):
            v = v.copy()  # a source that hands out read-only or recycled buffers must not corrupt eq or res
        if bits[i]:  # threshold bit 1: a lane with random bit 0 is below c -> decided "no flip"
            np.bitwise_and(eq, v, out=eq)
        elif res_valid:  # threshold bit 0: a lane with random bit 1 is above c -> decided "flip"
            np.bitwise_and(eq, v, out=v)
            np.bitwise_or(res, v, out=res)
            np.bitwise_xor(eq, v, out=eq)
        else:
            np.bitwise_and(eq, v, out=res)
            np.bitwise_xor(eq, res, out=eq)
            res_valid = True
    return res_valid


def _finish(
    out: np.ndarray,
    where: np.ndarray,
    eq: np.ndarray,
    bits: tuple[bool, ...],
    start: int,
    source: RandomSource,
) -> None:
    """Decide the undecided lanes ``eq`` of the words ``out[where]``, from round ``start`` on (compacting)."""
    rounds = len(bits)
    i = start
    while i < rounds and eq.size:
        stop = min(rounds, i + _TAIL_STEP)
        res = np.empty_like(eq)
        if _run_rounds(eq, res, False, bits, i, stop, source):
            out[where] |= res  # indices in `where` are distinct, so the fancy-index update is exact
        i = stop
        if i < rounds:
            live = np.flatnonzero(eq != 0)
            where, eq = where[live], eq[live]
    # Lanes still undecided here match c on every compared bit and c's remaining bits are all 1: no flip.


def bernoulli_words(
    n_words: int, prob: DyadicProbability, source: RandomSource | np.random.Generator | None
) -> np.ndarray:
    """Return ``n_words`` words of independent exact Bernoulli(``numerator / 2**precision``) bits.

    Each of the ``64 * n_words`` bits is 1 independently with probability exactly ``prob.fraction``, decided by
    integer comparison of ``prob.precision`` uniformly random bits (lazily, most significant first; see the module
    docstring for the algorithm and why it is exact). At most ``precision`` and on average about 8.5 random words
    are read per output word.

    Args:
        n_words: number of 64-bit words to return, ``>= 0``.
        prob: the flip probability.
        source: random words; a :class:`~sufficientdp.randomization.RandomSource`, a seeded
            ``numpy.random.Generator`` or ``None`` (a fresh CSPRNG), as accepted by
            :func:`~sufficientdp.randomization.as_source`.

    Returns:
        ``(n_words,)`` ``uint64`` array; bit j of word w is flip number ``64 * w + j``.

    Raises:
        ParameterError: if ``n_words`` is not a non-negative integer, ``prob`` is not a
            :class:`DyadicProbability` or ``source`` is not a source.
        DataError: if the source returns something other than the requested ``uint64`` words.

    References:
        seed 001 §1.3 (the mechanism A_0: each bit flipped independently with probability q).

    Examples:
        >>> from sufficientdp.randomization._sources import GeneratorRandomSource
        >>> q = DyadicProbability.from_float(0.25, precision=8)
        >>> w = bernoulli_words(1000, q, GeneratorRandomSource(np.random.default_rng(0)))
        >>> w.shape, w.dtype, abs(int(np.bitwise_count(w).sum()) / 64000 - 0.25) < 0.01
        ((1000,), dtype('uint64'), True)
    """
    n_words = check_int("n_words", n_words, minimum=0)
    prob = _check_prob(prob)
    source = as_source(source)
    bits = _threshold_bits(prob)
    rounds = len(bits)
    dense = min(_DENSE_ROUNDS, rounds)
    out = np.empty(n_words, dtype=np.uint64)
    pool_where: list[np.ndarray] = []
    pool_eq: list[np.ndarray] = []
    pooled = 0
    for begin in range(0, n_words, _CHUNK_WORDS):
        end = min(begin + _CHUNK_WORDS, n_words)
        res = out[begin:end]
        if bits[0]:  # always the case for q < 1/2: round 0 only narrows eq, which starts as all ones
            eq = _draw(source, end - begin)
            if type(source) not in _FRESH_ARRAY_SOURCES:  # eq lives across draws: a foreign source might recycle
                eq = eq.copy()
            first = 1
        else:
            eq = np.full(end - begin, np.uint64(0xFFFF_FFFF_FFFF_FFFF))
            first = 0
        if not _run_rounds(eq, res, False, bits, first, dense, source):
            res.fill(0)
        if dense < rounds:
            live = np.flatnonzero(eq != 0)
            if live.size:
                pool_where.append(live + begin)
                pool_eq.append(eq[live])
                pooled += live.size
            if pooled >= _POOL_WORDS:
                _finish(out, np.concatenate(pool_where), np.concatenate(pool_eq), bits, dense, source)
                pool_where, pool_eq, pooled = [], [], 0
    if pooled:
        _finish(out, np.concatenate(pool_where), np.concatenate(pool_eq), bits, dense, source)
    return out


def bernoulli_words_reference(
    n_words: int, prob: DyadicProbability, source: RandomSource | np.random.Generator | None
) -> np.ndarray:
    """The obviously correct (and slow) version of :func:`bernoulli_words`: one random integer per flip.

    For each flip, draw a 32-bit integer (64-bit if ``precision > 32``), keep its top ``precision`` bits as
    ``U`` and flip iff ``U < numerator``; pack the flips with ``np.packbits`` (little-endian bit order). This is
    the test oracle and the benchmark's naive baseline. It reads ``precision <= 32 ? 4 : 8`` random bytes per flip.

    Args:
        n_words: number of 64-bit words to return, ``>= 0``.
        prob: the flip probability.
        source: random words (as for :func:`bernoulli_words`).

    Returns:
        ``(n_words,)`` ``uint64`` array; bit j of word w is flip number ``64 * w + j``.

    References:
        seed 001 §1.3.

    Examples:
        >>> from sufficientdp.randomization._sources import GeneratorRandomSource
        >>> q = DyadicProbability.from_float(0.25, precision=8)
        >>> bernoulli_words_reference(3, q, GeneratorRandomSource(np.random.default_rng(0))).shape
        (3,)
    """
    n_words = check_int("n_words", n_words, minimum=0)
    prob = _check_prob(prob)
    source = as_source(source)
    p, num = prob.precision, prob.numerator
    out = np.empty(n_words, dtype=np.uint64)
    step = _REFERENCE_CHUNK_FLIPS // 64
    for begin in range(0, n_words, step):
        end = min(begin + step, n_words)
        flips = 64 * (end - begin)
        if p <= 32:
            u32 = _draw(source, flips // 2).view(np.uint32)  # two 32-bit integers per word
            below = (u32 >> np.uint32(32 - p)) < np.uint32(num)
        else:
            u64 = _draw(source, flips)
            below = (u64 >> np.uint64(64 - p)) < np.uint64(num)
        out[begin:end] = np.packbits(below, bitorder="little").view("<u8")
    return out
