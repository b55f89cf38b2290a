"""Exact Bernoulli flips (seed 001 §1.3) and randomization of packed reports.

Exactness is proved by exhaustion: scripted sources make the lanes read every possible random integer exactly
once, and the number of flips must then be exactly ``numerator`` per ``2**precision`` values. Statistical tests use
fixed seeds and a 6-standard-deviation tolerance: a correct implementation fails one such check with probability
about 2e-9 (normal approximation; a few hundred checks in this file keep the total below 1e-6).
"""

import numpy as np
import pytest

from sufficientdp._errors import DataError, ParameterError
from sufficientdp._numerics.dyadic import DyadicProbability
from sufficientdp.randomization import _kernel
from sufficientdp.randomization._kernel import bernoulli_words, bernoulli_words_reference
from sufficientdp.randomization._packing import pack_bits, padding_mask, unpack_bits
from sufficientdp.randomization._randomize import randomize_packed
from sufficientdp.randomization._sources import GeneratorRandomSource, SystemRandomSource, default_source

ALL_ONES = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
LANES = np.arange(64, dtype=np.uint64)


def popcount(words: np.ndarray) -> int:
    return int(np.bitwise_count(words).sum())


def lanes_of(word: np.uint64) -> np.ndarray:
    """The 64 bits of a word, lane j = bit j."""
    return ((word >> LANES) & np.uint64(1)).astype(np.int64)


def within_6_sd(count: float, trials: int, p: float) -> bool:
    return abs(count - trials * p) <= 6 * np.sqrt(trials * p * (1 - p))


class ScriptedSource:
    """A fake RandomSource: call k returns ``n`` copies of ``script[k]`` (a uint64 constant).

    Every word of a call is identical, so the kernel sees the same bit pattern in every word whatever subset of
    words it asks for; it raises if the kernel asks for more calls than scripted.
    """

    name = "scripted"
    cryptographic = False

    def __init__(self, script):
        self.script = [np.uint64(int(w)) for w in script]
        self.calls = 0
        self.words = 0

    def random_words(self, n):
        assert self.calls < len(self.script), "the kernel read more random words than precision allows"
        out = np.full(n, self.script[self.calls], dtype=np.uint64)
        self.calls += 1
        self.words += n
        return out


class ArraySource:
    """A fake RandomSource handing out the words of one fixed array, in order."""

    name = "array"
    cryptographic = False

    def __init__(self, words):
        self.words = np.asarray(words, dtype=np.uint64)
        self.pos = 0

    def random_words(self, n):
        out = self.words[self.pos : self.pos + n].copy()
        assert out.size == n, "source exhausted"
        self.pos += n
        return out


class CountingSource:
    """Wraps a seeded generator and counts the words read."""

    name = "counting"
    cryptographic = False

    def __init__(self, seed):
        self.inner = GeneratorRandomSource(np.random.default_rng(seed))
        self.words = 0

    def random_words(self, n):
        self.words += n
        return self.inner.random_words(n)


def enumeration_script(precision: int, block: int = 0, shift: int = 0) -> list[int]:
    """Round k (most significant first) of ``V = block * 64 + ((lane + shift) % 64)``, as 64-lane words.

    Only the low ``precision`` bits of V are read: with ``precision <= 6`` (block 0) lane j reads
    ``(j + shift) mod 2**precision``, so every value is read by ``64 / 2**precision`` lanes; with a larger
    precision the top ``precision - 6`` bits are ``block`` in every lane and the low 6 bits enumerate 0..63.
    """
    values = [block * 64 + (lane + shift) % 64 for lane in range(64)]  # Python ints: exact up to 2**64
    return [
        sum(((value >> (precision - 1 - k)) & 1) << lane for lane, value in enumerate(values))
        for k in range(precision)
    ]


def all_probabilities(precision: int):
    return [DyadicProbability(numerator=num, precision=precision) for num in range(1, 1 << (precision - 1))]


# ------------------------------------------------------------------------------------ exactness by exhaustion
@pytest.mark.parametrize("precision", [2, 3, 4, 5, 6])
def test_exhaustive_every_lane_value_small_precision(precision):
    """64 lanes read V = lane mod 2**p: each of the 2**p values 64 / 2**p times; flips = numerator * that, exactly.

    Run on 3 words at once: every word holds the same enumeration, so each must have exactly that many ones.
    """
    for prob in all_probabilities(precision):
        source = ScriptedSource(enumeration_script(precision))
        words = bernoulli_words(3, prob, source)
        assert source.calls <= precision
        expected = prob.numerator * 64 // (1 << precision)
        assert [popcount(w) for w in words] == [expected] * 3, prob


@pytest.mark.slow
def test_exhaustive_lane_by_lane_rotations():
    """Precision 6: over 64 runs with rotated enumerations each lane reads every V in [0, 64) once and must flip
    for exactly ``numerator`` of them, so every lane's decision function is exact (not only their sum)."""
    for prob in all_probabilities(6):
        per_lane = np.zeros(64, dtype=np.int64)
        for shift in range(64):
            (word,) = bernoulli_words(1, prob, ScriptedSource(enumeration_script(6, shift=shift)))
            per_lane += lanes_of(word)
        assert np.all(per_lane == prob.numerator), prob


def _flip_set(prob: DyadicProbability, blocks) -> dict[int, list[int]]:
    """For each block b, the lanes (V = 64 b + lane) that the kernel flips; one 64-lane word per block."""
    out = {}
    for block in blocks:
        source = ScriptedSource(enumeration_script(prob.precision, block=block))
        (word,) = bernoulli_words(1, prob, source)
        assert source.calls <= prob.precision
        out[block] = np.flatnonzero(lanes_of(word)).tolist()
    return out


@pytest.mark.parametrize(
    "precision, numerators",
    [
        (7, [1, 2, 21, 32, 63]),
        (9, [1, 100, 128, 255]),  # more rounds than the dense phase: exercises compaction and the pool
        (12, [1, 1000, 1024, 2047]),
        (14, [1, 4097, 8191]),
    ],
)
def test_exhaustive_all_values_larger_precision(precision, numerators):
    """Every V in [0, 2**p) is read by some lane of some run; exactly ``numerator`` of them flip.

    The decision is also the documented threshold: flip iff V >= 2**p - numerator, i.e. U = 2**p - 1 - V is
    below the numerator (a bijection of the uniform distribution).
    """
    for num in numerators:
        prob = DyadicProbability(numerator=num, precision=precision)
        flips = _flip_set(prob, range(1 << (precision - 6)))
        flipped = {64 * block + lane for block, lanes in flips.items() for lane in lanes}
        assert len(flipped) == num
        assert flipped == set(range((1 << precision) - num, 1 << precision))


@pytest.mark.parametrize("num", [1, 3, 2**31 - 1, 2**31, 2**40 + 12345, 2**62 + 1, 2**63 - 1])
def test_decision_near_threshold_at_precision_64(num):
    """Precision 64 cannot be enumerated; check the 64-value blocks around the threshold and at both ends."""
    prob = DyadicProbability(numerator=num, precision=64)
    threshold = 2**64 - num
    blocks = {0, threshold // 64 - 1, threshold // 64, threshold // 64 + 1, 2**58 - 1} - {-1, 2**58}
    for block, lanes in _flip_set(prob, sorted(blocks)).items():
        assert lanes == [lane for lane in range(64) if 64 * block + lane >= threshold], block


@pytest.mark.parametrize("precision", [3, 6, 10])
def test_reference_exhaustive(precision):
    """The reference reads one integer per flip (top ``precision`` bits of a 32-bit half): feed every value."""
    values = np.arange(1 << precision, dtype=np.uint32) << np.uint32(32 - precision)
    values = np.tile(values, max(1, 128 >> precision))  # a whole number of words (64 flips each)
    for prob in all_probabilities(precision)[:: max(1, (1 << precision) // 64)]:
        words = bernoulli_words_reference(values.size // 64, prob, ArraySource(values.view(np.uint64)))
        assert popcount(words) == prob.numerator * values.size >> precision


@pytest.mark.parametrize("precision", [3, 6])
def test_fast_and_reference_count_the_same_on_exhaustive_sources(precision):
    """Both kernels, each fed every possible random integer once per lane, flip exactly as often."""
    for prob in all_probabilities(precision):
        fast = bernoulli_words(1, prob, ScriptedSource(enumeration_script(precision)))
        values = np.tile(np.arange(1 << precision, dtype=np.uint32), 64 >> precision) << np.uint32(32 - precision)
        ref = bernoulli_words_reference(1, prob, ArraySource(values.view(np.uint64)))
        assert popcount(fast) == popcount(ref) == prob.numerator * 64 >> precision


def test_reference_at_precision_above_32_reads_64_bit_integers():
    prob = DyadicProbability(numerator=5, precision=40)
    values = np.arange(64, dtype=np.uint64) << np.uint64(24)  # flip j reads U = j from the top 40 bits of word j
    values[-1] = ALL_ONES  # U = 2**40 - 1
    (word,) = bernoulli_words_reference(1, prob, ArraySource(values))
    assert lanes_of(word).tolist() == [1] * 5 + [0] * 59


def test_every_word_gets_every_round_across_chunks_and_pool(monkeypatch):
    """numerator = 1: c = 0b11..10, so a lane reading all-ones bits stays undecided until the last round and then
    flips. With tiny chunks and pool, every word must go through all p rounds (p words read per output word)."""
    monkeypatch.setattr(_kernel, "_CHUNK_WORDS", 5)
    monkeypatch.setattr(_kernel, "_POOL_WORDS", 7)
    prob = DyadicProbability(numerator=1, precision=20)

    class Ones:
        name, cryptographic, words = "ones", False, 0

        def random_words(self, n):
            self.words += n
            return np.full(n, ALL_ONES)

    source = Ones()
    out = bernoulli_words(53, prob, source)
    assert np.all(out == ALL_ONES)
    assert source.words == 53 * 20


def test_sources_with_read_only_or_recycled_buffers_give_the_same_flips():
    """The protocol asks for fresh writable arrays; a source that breaks it must not corrupt the comparison."""

    class ReadOnly:
        name, cryptographic = "read-only", False

        def __init__(self, seed):
            self.inner = GeneratorRandomSource(np.random.default_rng(seed))

        def random_words(self, n):
            return np.frombuffer(self.inner.random_words(n).tobytes(), dtype=np.uint64)

    class Recycled(ReadOnly):
        buffer = np.empty(0, dtype=np.uint64)

        def random_words(self, n):
            if self.buffer.size < n:
                self.buffer = np.empty(n, dtype=np.uint64)
            self.buffer[:n] = self.inner.random_words(n)
            return self.buffer[:n]

    prob = DyadicProbability.from_float(0.1)
    expected = bernoulli_words(3000, prob, GeneratorRandomSource(np.random.default_rng(8)))
    assert np.array_equal(bernoulli_words(3000, prob, ReadOnly(8)), expected)
    assert np.array_equal(bernoulli_words(3000, prob, Recycled(8)), expected)


# ------------------------------------------------------------------------------------------------ statistics
@pytest.mark.parametrize(
    "q, precision",
    [(0.1, 32), (0.3, 64), (0.01, 16), (0.25, 8), (0.4999, 32), (2**-20, 24), (0.2446, 53)],
)
def test_flip_rate_and_independence(q, precision):
    """4.2M flips: total rate, each of the 64 lanes, and adjacent pairs (incl. across words) within 6 sd."""
    prob = DyadicProbability.from_float(q, precision=precision)
    p = float(prob.fraction)
    n_words = 1 << 16
    words = bernoulli_words(n_words, prob, GeneratorRandomSource(np.random.default_rng(20240601)))
    assert words.shape == (n_words,) and words.dtype == np.uint64
    assert within_6_sd(popcount(words), 64 * n_words, p)
    per_lane = np.array([popcount(words & (np.uint64(1) << np.uint64(j))) for j in range(64)])
    assert all(within_6_sd(c, n_words, p) for c in per_lane), per_lane
    pairs = popcount(words & (words >> np.uint64(1)))  # bit j and bit j+1 of one word, j < 63
    cross = popcount((words[:-1] >> np.uint64(63)) & words[1:])  # bit 63 of a word and bit 0 of the next
    assert within_6_sd(pairs, 63 * n_words, p * p)
    assert within_6_sd(cross, n_words - 1, p * p)


def test_flip_rate_with_tiny_chunks_and_pool(monkeypatch):
    """Many chunks and pool flushes (odd sizes) change nothing in distribution."""
    monkeypatch.setattr(_kernel, "_CHUNK_WORDS", 1000)
    monkeypatch.setattr(_kernel, "_POOL_WORDS", 333)
    prob = DyadicProbability.from_float(0.15, precision=40)
    n_words = 50_000
    words = bernoulli_words(n_words, prob, GeneratorRandomSource(np.random.default_rng(9)))
    assert within_6_sd(popcount(words), 64 * n_words, prob.value)
    for j in (0, 17, 63):
        assert within_6_sd(popcount(words & (np.uint64(1) << np.uint64(j))), n_words, prob.value)


def test_reference_flip_rate():
    for q, precision in [(0.1, 32), (0.3, 64)]:
        prob = DyadicProbability.from_float(q, precision=precision)
        words = bernoulli_words_reference(20_000, prob, GeneratorRandomSource(np.random.default_rng(3)))
        assert within_6_sd(popcount(words), 64 * 20_000, prob.value)


def test_random_words_per_output_word():
    """Lazy comparison: about log2(64) + 2.5 ~ 8.5 words per output word, never more than the precision."""
    source = CountingSource(1)
    bernoulli_words(1 << 16, DyadicProbability.from_float(0.1, precision=64), source)
    assert 7 < source.words / (1 << 16) < 10
    source = CountingSource(2)
    bernoulli_words(1000, DyadicProbability(numerator=3, precision=4), source)
    assert source.words <= 1000 * 4


# -------------------------------------------------------------------------------------------- reproducibility
def test_same_seed_same_flips_different_seed_different_flips():
    prob = DyadicProbability.from_float(0.2)

    def run(seed):
        return bernoulli_words(200_000, prob, GeneratorRandomSource(np.random.default_rng(seed)))

    assert np.array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2))
    # A bare Generator is wrapped into a GeneratorRandomSource: same stream, same flips.
    assert np.array_equal(bernoulli_words(200_000, prob, np.random.default_rng(4)), run(4))


def test_csprng_sources_work():
    prob = DyadicProbability.from_float(0.3)
    for source in (None, SystemRandomSource(), default_source()):
        words = bernoulli_words(20_000, prob, source)
        assert within_6_sd(popcount(words), 64 * 20_000, prob.value)


# ---------------------------------------------------------------------------------------------- bad input
def test_kernel_rejects_bad_arguments():
    prob = DyadicProbability.from_float(0.1)
    rng = np.random.default_rng(0)
    assert bernoulli_words(0, prob, rng).shape == (0,)
    with pytest.raises(ParameterError, match="n_words must be an integer >= 0; got -1"):
        bernoulli_words(-1, prob, rng)
    with pytest.raises(ParameterError, match="prob must be a DyadicProbability"):
        bernoulli_words(1, 0.1, rng)
    with pytest.raises(ParameterError, match="rng must be None"):
        bernoulli_words(1, prob, 42)
    with pytest.raises(ParameterError, match="prob must be a DyadicProbability"):
        bernoulli_words_reference(1, 0.1, rng)


def test_kernel_rejects_a_source_returning_the_wrong_words():
    class Bad:
        name, cryptographic = "bad", False

        def __init__(self, make):
            self.make = make

        def random_words(self, n):
            return self.make(n)

    prob = DyadicProbability.from_float(0.1)
    for make in (lambda n: np.zeros(1, dtype=np.uint64), lambda n: np.zeros(n, dtype=np.int64), lambda n: [0] * n):
        with pytest.raises(DataError, match=r"random_words\(4\) must return a \(4,\) uint64 array"):
            bernoulli_words(4, prob, Bad(make))


# ------------------------------------------------------------------------------------------ randomize_packed
@pytest.mark.parametrize("bits", [1, 5, 63, 64, 65, 70, 100, 130, 1024])
def test_randomize_shape_padding_and_flip_rate(bits):
    """Flip rate of every bit position within 6 sd, for 0-input and 1-input; padding bits stay 0."""
    prob = DyadicProbability.from_float(0.25, precision=8)
    n = 4000
    rng = np.random.default_rng(bits)
    truth = rng.integers(0, 2, size=(n, bits), dtype=np.uint8)
    words = pack_bits(truth)
    before = words.copy()
    out = randomize_packed(words, bits, prob, GeneratorRandomSource(rng))
    assert np.array_equal(words, before)  # the input is not modified
    assert out.shape == words.shape and out.dtype == np.uint64
    assert not np.any(out & ~padding_mask(bits))
    flipped = unpack_bits(out, bits) ^ truth
    per_bit = flipped.sum(axis=0)
    assert all(within_6_sd(c, n, 0.25) for c in per_bit), per_bit


def test_randomize_reports_are_independent_copies():
    """k = 3: rows i*3 + r derive from person i; the flips of two copies coincide at rate q**2 (not q)."""
    bits, n, k = 70, 5000, 3
    prob = DyadicProbability.from_float(0.2, precision=16)
    q = prob.value
    truth = np.random.default_rng(0).integers(0, 2, size=(n, bits), dtype=np.uint8)
    out = randomize_packed(pack_bits(truth), bits, prob, np.random.default_rng(1), reports=k)
    assert out.shape == (n * k, 2)
    flips = unpack_bits(out, bits).reshape(n, k, bits) ^ truth[:, None, :]
    assert within_6_sd(flips.sum(), n * k * bits, q)
    for r in range(k):
        assert within_6_sd(flips[:, r].sum(), n * bits, q)
    for r, s in [(0, 1), (0, 2), (1, 2)]:
        assert within_6_sd((flips[:, r] & flips[:, s]).sum(), n * bits, q * q)


def test_randomize_is_reproducible():
    prob = DyadicProbability.from_float(0.1)
    words = pack_bits(np.random.default_rng(0).integers(0, 2, size=(100, 300)))
    a = randomize_packed(words, 300, prob, np.random.default_rng(5), reports=2)
    b = randomize_packed(words, 300, prob, GeneratorRandomSource(np.random.default_rng(5)), reports=2)
    c = randomize_packed(words, 300, prob, np.random.default_rng(6), reports=2)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_randomize_empty_and_csprng():
    prob = DyadicProbability.from_float(0.1)
    assert randomize_packed(np.zeros((0, 2), dtype=np.uint64), 100, prob, None, reports=3).shape == (0, 2)
    out = randomize_packed(np.zeros((1000, 1), dtype=np.uint64), 64, prob, None)
    assert within_6_sd(popcount(out), 64_000, prob.value)


def test_randomize_rejects_bad_input():
    prob = DyadicProbability.from_float(0.1)
    good = np.zeros((3, 2), dtype=np.uint64)
    rng = np.random.default_rng(0)
    with pytest.raises(DataError, match=r"must have shape \(n, 2\) for bits=100; got \(3, 3\)"):
        randomize_packed(np.zeros((3, 3), dtype=np.uint64), 100, prob, rng)
    with pytest.raises(DataError, match="must have dtype uint64; got int64"):
        randomize_packed(good.astype(np.int64), 100, prob, rng)
    with pytest.raises(DataError, match="numpy uint64 array"):
        randomize_packed(good.tolist(), 100, prob, rng)
    with pytest.raises(DataError, match="padding bits set beyond bit 99"):
        randomize_packed(good | np.uint64(1 << 40), 100, prob, rng)
    with pytest.raises(ParameterError, match="reports must be an integer >= 1 and <= 1000; got 0"):
        randomize_packed(good, 100, prob, rng, reports=0)
    with pytest.raises(ParameterError, match="bits must be an integer >= 1; got 0"):
        randomize_packed(good, 0, prob, rng)
    with pytest.raises(ParameterError, match="prob must be a DyadicProbability"):
        randomize_packed(good, 100, 0.1, rng)
    with pytest.raises(ParameterError, match="rng must be None"):
        randomize_packed(good, 100, prob, 7)
