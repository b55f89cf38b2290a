"""Sources of uniformly random 64-bit words for the exact randomizer.

The randomizer (seed 001 §1.3, the mechanism A_0) decides every flip by comparing uniformly random *bits* with the
numerator of a dyadic probability, so all it needs from a source is a stream of uniform ``uint64`` words. Three
sources are provided:

* :class:`KeystreamRandomSource` (``name="aes-256-ctr"``, cryptographic): the production default; needs the
  ``crypto`` extra.
* :class:`SystemRandomSource` (``name="os-urandom"``, cryptographic): the production fallback, no extra needed.
* :class:`GeneratorRandomSource` (``name="numpy-generator"``, *not* cryptographic): seeded, reproducible
  simulations.

:func:`as_source` turns the ``rng=`` argument of the public API into a source (STYLE.md, habit 6).
"""

from __future__ import annotations

import os
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np

from .._errors import ParameterError
from .._validation import check_int

__all__ = [
    "GeneratorRandomSource",
    "KeystreamRandomSource",
    "RandomSource",
    "SystemRandomSource",
    "as_source",
    "default_source",
]

_WORD_BYTES: Final = 8


@runtime_checkable
class RandomSource(Protocol):
    """Anything that hands out uniformly random 64-bit words.

    Attributes:
        name: short identifier recorded with results (``"aes-256-ctr"``, ``"os-urandom"``, ...).
        cryptographic: True if the words come from a cryptographically secure generator; production
            randomization must use such a source.

    A source is stateful and not thread-safe: give each thread its own.
    """

    name: str
    cryptographic: bool

    def random_words(self, n: int) -> np.ndarray:
        """Return a fresh, writable ``(n,)`` ``uint64`` array of independent uniformly random words."""
        ...


class SystemRandomSource:
    """Random words read from the operating system's CSPRNG (:func:`os.urandom`).

    Always available, but slower than :class:`KeystreamRandomSource` (every request is a system call; a few hundred
    MB/s on a typical Linux machine).

    Examples:
        >>> SystemRandomSource().random_words(3).shape
        (3,)
    """

    name: str = "os-urandom"
    cryptographic: bool = True

    def random_words(self, n: int) -> np.ndarray:
        """Return ``n`` uniformly random ``uint64`` words from :func:`os.urandom`."""
        n = check_int("n", n, minimum=0)
        # bytes -> read-only view -> owned, writable, native-endian copy.
        return np.frombuffer(os.urandom(_WORD_BYTES * n), dtype="<u8").astype(np.uint64)

    def __repr__(self) -> str:
        return "SystemRandomSource()"


class KeystreamRandomSource:
    """Random words from an AES-256-CTR keystream keyed from OS entropy (a fast CSPRNG).

    The keystream is the encryption of zeros under a 32-byte key and a 16-byte initial counter block, both drawn
    from :func:`os.urandom`. The key is replaced by fresh OS entropy after at most ``2**32`` blocks (64 GiB) and
    in a child process after :func:`os.fork` (so that parent and child never share a stream). Throughput is several
    GB/s on CPUs with AES instructions.

    Raises:
        ImportError: if the optional ``cryptography`` package is not installed
            (``pip install 'sufficientdp[crypto]'``).

    Examples:
        >>> try:
        ...     source = KeystreamRandomSource()
        ... except ImportError:  # without the crypto extra
        ...     source = SystemRandomSource()
        >>> source.random_words(3).dtype
        dtype('uint64')
    """

    name: str = "aes-256-ctr"
    cryptographic: bool = True

    #: Maximum number of AES blocks encrypted under one key before re-keying from OS entropy.
    REKEY_BLOCKS: int = 1 << 32
    _BLOCK_BYTES: Final = 16
    _PIECE_BYTES: Final = 1 << 20  # encrypt at most 1 MiB of zeros per call: bounds the zero buffer

    def __init__(self) -> None:
        try:
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        except ImportError as exc:
            raise ImportError(
                "KeystreamRandomSource needs the optional 'cryptography' package; install it with "
                "pip install 'sufficientdp[crypto]' (or use SystemRandomSource, which reads os.urandom)"
            ) from exc
        self._cipher = Cipher
        self._aes = algorithms.AES
        self._ctr = modes.CTR
        self._zeros = bytes(self._PIECE_BYTES)
        #: Number of keys drawn from OS entropy so far (the first one included).
        self.keys_used = 0
        self._rekey()

    def _rekey(self) -> None:
        key = os.urandom(32)
        counter = os.urandom(self._BLOCK_BYTES)
        self._encryptor: Any = self._cipher(self._aes(key), self._ctr(counter)).encryptor()
        # Budget in bytes: CTR is a stream, so b bytes use ceil(b / 16) <= REKEY_BLOCKS blocks.
        self._bytes_left = self.REKEY_BLOCKS * self._BLOCK_BYTES
        self._pid = os.getpid()
        self.keys_used += 1

    def random_words(self, n: int) -> np.ndarray:
        """Return ``n`` uniformly random ``uint64`` words from the AES-256-CTR keystream."""
        n = check_int("n", n, minimum=0)
        if os.getpid() != self._pid:  # forked child: never continue the parent's stream
            self._rekey()
        # Two spare words: older cryptography releases demand len(buf) >= len(data) + 15 from update_into, even
        # in CTR mode where exactly len(data) bytes are written. The spare bytes never reach the caller.
        out = np.empty(n + 2, dtype=np.uint64)
        buf = out.view(np.uint8)  # the words' byte order does not matter: every byte is uniform
        pos, total = 0, 8 * n
        zeros = memoryview(self._zeros)
        while pos < total:
            if self._bytes_left <= 0:
                self._rekey()
            size = min(total - pos, self._PIECE_BYTES, self._bytes_left)
            self._encryptor.update_into(zeros[:size], buf[pos : pos + size + self._BLOCK_BYTES - 1])
            self._bytes_left -= size
            pos += size
        return out[:n]

    def __repr__(self) -> str:
        return "KeystreamRandomSource()"


class GeneratorRandomSource:
    """Random words from a seeded :class:`numpy.random.Generator` (simulations; *not* cryptographic).

    The same seed gives the same words, hence the same randomized reports. Words are drawn with
    ``rng.integers(0, 2**64, dtype=np.uint64)``, which uses the full 64-bit output of every bit generator
    (``bit_generator.random_raw`` would not: for ``MT19937`` its words have only 32 random bits).

    Args:
        rng: the generator; it is used (and advanced) in place, not copied.

    Examples:
        >>> a = GeneratorRandomSource(np.random.default_rng(5)).random_words(2)
        >>> b = GeneratorRandomSource(np.random.default_rng(5)).random_words(2)
        >>> bool((a == b).all())
        True
    """

    name: str = "numpy-generator"
    cryptographic: bool = False

    def __init__(self, rng: np.random.Generator) -> None:
        if not isinstance(rng, np.random.Generator):
            raise ParameterError(f"rng must be a numpy.random.Generator; got {rng!r}")
        self.rng = rng

    def random_words(self, n: int) -> np.ndarray:
        """Return the next ``n`` ``uint64`` words of the generator's stream."""
        n = check_int("n", n, minimum=0)
        return self.rng.integers(0, 1 << 64, size=n, dtype=np.uint64, endpoint=False)

    def __repr__(self) -> str:
        return f"GeneratorRandomSource({self.rng!r})"


def default_source() -> RandomSource:
    """Return a new CSPRNG source: AES-256-CTR if ``cryptography`` is installed, else :func:`os.urandom`.

    Examples:
        >>> default_source().cryptographic
        True
    """
    try:
        return KeystreamRandomSource()
    except ImportError:
        return SystemRandomSource()


def as_source(rng: Any) -> RandomSource:
    """Turn the ``rng=`` argument of the public API into a :class:`RandomSource`.

    Args:
        rng: ``None`` for a fresh cryptographic source (:func:`default_source`; production), a seeded
            :class:`numpy.random.Generator` (simulations), or an object implementing :class:`RandomSource`
            (returned unchanged).

    Returns:
        The source.

    Raises:
        ParameterError: for anything else, including an integer seed or a legacy ``numpy.random.RandomState``
            (pass ``numpy.random.default_rng(seed)`` instead).

    Examples:
        >>> as_source(np.random.default_rng(0)).name
        'numpy-generator'
    """
    if rng is None:
        return default_source()
    if isinstance(rng, np.random.Generator):
        return GeneratorRandomSource(rng)
    if not isinstance(rng, type) and isinstance(rng, RandomSource):
        return rng
    hint = ""
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        hint = f"; to seed a simulation pass numpy.random.default_rng({int(rng)})"
    elif isinstance(rng, np.random.RandomState):
        hint = "; the legacy RandomState is not supported, use numpy.random.default_rng(seed)"
    raise ParameterError(
        "rng must be None (cryptographic randomness), a numpy.random.Generator (seeded simulation) or a "
        f"RandomSource (an object with name, cryptographic and random_words(n)); got {rng!r}{hint}"
    )
