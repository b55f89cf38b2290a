"""Random-word sources (seed 001 §1.3 needs uniform bits): CSPRNGs for production, seeded generators for simulation."""

import os
import sys

import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.randomization import _sources
from sufficientdp.randomization._sources import (
    GeneratorRandomSource,
    KeystreamRandomSource,
    RandomSource,
    SystemRandomSource,
    as_source,
    default_source,
)


def _assert_looks_uniform(words: np.ndarray) -> None:
    """Every bit position is 1 in about half of the words: |count - n/2| <= 6 sd for each of the 64 positions.

    Under a uniform source each count is Binomial(n, 1/2); P(|Z| > 6) ~ 2e-9 per position, < 2e-7 for all 64.
    """
    n = words.size
    ones = ((words[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).sum(axis=0)
    assert np.all(np.abs(ones - n / 2) <= 6 * np.sqrt(n / 4)), ones


# ------------------------------------------------------------------------------------------------ generator
def test_generator_source_same_seed_same_words():
    a = GeneratorRandomSource(np.random.default_rng(123)).random_words(1000)
    b = GeneratorRandomSource(np.random.default_rng(123)).random_words(1000)
    c = GeneratorRandomSource(np.random.default_rng(124)).random_words(1000)
    assert a.dtype == np.uint64 and a.shape == (1000,)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_generator_source_is_the_generators_full_64_bit_stream():
    """The words are exactly rng.integers(0, 2**64, dtype=uint64): full 64-bit words for every bit generator."""
    for bit_generator in (np.random.PCG64, np.random.MT19937, np.random.Philox):
        words = GeneratorRandomSource(np.random.Generator(bit_generator(7))).random_words(4096)
        expected = np.random.Generator(bit_generator(7)).integers(0, 2**64, size=4096, dtype=np.uint64)
        assert np.array_equal(words, expected)
        _assert_looks_uniform(words)  # MT19937's random_raw would fail this: its top 32 bits are 0


def test_generator_source_advances_the_generator():
    rng = np.random.default_rng(5)
    source = GeneratorRandomSource(rng)
    first, second = source.random_words(8), source.random_words(8)
    assert not np.array_equal(first, second)
    assert source.rng is rng
    assert source.name == "numpy-generator" and source.cryptographic is False


@pytest.mark.parametrize("bad", [None, 3, np.random.RandomState(0), "seed"])
def test_generator_source_rejects_non_generators(bad):
    with pytest.raises(ParameterError, match="rng must be a numpy.random.Generator"):
        GeneratorRandomSource(bad)


# ---------------------------------------------------------------------------------------------- os.urandom
def test_system_source_words():
    source = SystemRandomSource()
    assert source.name == "os-urandom" and source.cryptographic is True
    a, b = source.random_words(4096), source.random_words(4096)
    assert a.dtype == np.uint64 and a.shape == (4096,) and a.flags.writeable
    assert not np.array_equal(a, b)  # equal with probability 2**-262144
    _assert_looks_uniform(np.concatenate([a, b]))
    assert source.random_words(0).shape == (0,)


def test_system_source_reads_os_urandom(monkeypatch):
    monkeypatch.setattr(_sources.os, "urandom", lambda n: bytes(range(n)))
    words = SystemRandomSource().random_words(2)
    assert words.astype("<u8").tobytes() == bytes(range(16))


@pytest.mark.parametrize("bad", [-1, 1.5, "3", None])
def test_random_words_rejects_bad_counts(bad):
    for source in (SystemRandomSource(), GeneratorRandomSource(np.random.default_rng(0))):
        with pytest.raises(ParameterError, match="n must be an integer >= 0"):
            source.random_words(bad)


# -------------------------------------------------------------------------------------------- AES-256-CTR
def test_keystream_source_words():
    pytest.importorskip("cryptography", reason="KeystreamRandomSource needs the crypto extra")
    first, second = KeystreamRandomSource(), KeystreamRandomSource()
    assert first.name == "aes-256-ctr" and first.cryptographic is True
    a = first.random_words(4096)
    assert a.dtype == np.uint64 and a.shape == (4096,) and a.flags.writeable
    assert not np.array_equal(a, second.random_words(4096))  # independent keys
    assert not np.array_equal(a, first.random_words(4096))  # the stream moves on
    _assert_looks_uniform(a)
    # Large requests are encrypted in pieces; the pieces join into one stream.
    assert first.random_words(300_000).shape == (300_000,)


# NIST SP 800-38A, F.5.5 CTR-AES256.Encrypt: key, initial counter block and the first two output blocks
# (the keystream; plaintext XOR ciphertext of the published example).
NIST_KEY = bytes.fromhex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
NIST_COUNTER = bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
NIST_KEYSTREAM = bytes.fromhex("0bdf7df1591716335e9a8b15c860c5025a6e699d536119065433863c8f657b94")


def _scripted_urandom(monkeypatch, chunks):
    """Make os.urandom return the given byte strings in order (and record the requested sizes)."""
    chunks = list(chunks)
    sizes = []

    def fake(n):
        sizes.append(n)
        out = chunks.pop(0)
        assert len(out) == n
        return out

    monkeypatch.setattr(_sources.os, "urandom", fake)
    return sizes


def test_keystream_is_aes_256_ctr_keyed_from_os_urandom(monkeypatch):
    pytest.importorskip("cryptography", reason="KeystreamRandomSource needs the crypto extra")
    sizes = _scripted_urandom(monkeypatch, [NIST_KEY, NIST_COUNTER])
    words = KeystreamRandomSource().random_words(4)
    assert sizes == [32, 16]  # a 256-bit key and a 128-bit counter block, both from OS entropy
    assert words.astype("<u8").tobytes() == NIST_KEYSTREAM


def _aes_ctr_keystream(key: bytes, counter: bytes, n_bytes: int) -> bytes:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    return Cipher(algorithms.AES(key), modes.CTR(counter)).encryptor().update(bytes(n_bytes))


def test_keystream_rekeys_after_the_block_budget(monkeypatch):
    pytest.importorskip("cryptography", reason="KeystreamRandomSource needs the crypto extra")
    monkeypatch.setattr(KeystreamRandomSource, "REKEY_BLOCKS", 2)  # 32 bytes = 4 words per key
    keys = [bytes([k]) * 32 for k in (1, 2, 3)]
    counters = [bytes([k]) * 16 for k in (4, 5, 6)]
    _scripted_urandom(monkeypatch, [keys[0], counters[0], keys[1], counters[1], keys[2], counters[2]])
    source = KeystreamRandomSource()
    words = source.random_words(10)  # 80 bytes: 32 + 32 + 16 under three keys
    assert source.keys_used == 3
    expected = b"".join(_aes_ctr_keystream(k, c, 32) for k, c in zip(keys, counters))[:80]
    assert words.astype("<u8").tobytes() == expected


def test_keystream_rekeys_in_a_forked_child(monkeypatch):
    pytest.importorskip("cryptography", reason="KeystreamRandomSource needs the crypto extra")
    source = KeystreamRandomSource()
    source.random_words(1)
    assert source.keys_used == 1
    monkeypatch.setattr(_sources.os, "getpid", lambda: -12345)  # as seen from a child process
    source.random_words(1)
    assert source.keys_used == 2


def test_keystream_without_cryptography(monkeypatch):
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers", None)  # import now fails
    with pytest.raises(ImportError, match=r"pip install 'sufficientdp\[crypto\]'"):
        KeystreamRandomSource()
    fallback = default_source()
    assert isinstance(fallback, SystemRandomSource) and fallback.cryptographic


# ------------------------------------------------------------------------------------ default and as_source
def test_default_source_is_cryptographic():
    source = default_source()
    assert source.cryptographic is True
    assert isinstance(source, RandomSource)
    try:
        import cryptography  # noqa: F401
    except ImportError:
        assert source.name == "os-urandom"
    else:
        assert source.name == "aes-256-ctr"


def test_as_source_accepts_none_generators_and_sources():
    assert as_source(None).cryptographic is True
    rng = np.random.default_rng(0)
    wrapped = as_source(rng)
    assert isinstance(wrapped, GeneratorRandomSource) and wrapped.rng is rng
    system = SystemRandomSource()
    assert as_source(system) is system
    assert as_source(wrapped) is wrapped

    class Custom:
        name = "custom"
        cryptographic = False

        def random_words(self, n):
            return np.zeros(n, dtype=np.uint64)

    custom = Custom()
    assert as_source(custom) is custom


@pytest.mark.parametrize(
    "bad, fragment",
    [
        (42, "numpy.random.default_rng(42)"),
        (np.int64(7), "numpy.random.default_rng(7)"),
        (np.random.RandomState(0), "legacy RandomState is not supported"),
        ("aes", "got 'aes'"),
        (SystemRandomSource, "got <class"),  # the class, not an instance
        (True, "got True"),
        (os.urandom, "got <built-in function urandom>"),
    ],
)
def test_as_source_rejects_everything_else(bad, fragment):
    with pytest.raises(ParameterError) as info:
        as_source(bad)
    message = str(info.value)
    assert message.startswith("rng must be None (cryptographic randomness), a numpy.random.Generator")
    assert fragment in message
