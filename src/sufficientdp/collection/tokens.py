"""Rate-limiting tokens: Chaum RSA blind signatures with a full-domain hash (Privacy-Pass style).

A collector that wants "at most k reports per person" without learning *which* reports came from whom issues k
tokens per authenticated credential and accepts a report only with an unspent token. The tokens are RSA blind
signatures, so the signer never sees the nonces it signs and cannot link a token it later sees to the issuance
(the credential) it came from. See ``docs/rate_limiting.md`` for the design and its limits.

The scheme (textbook Chaum blinding over a full-domain hash):

* Key: an RSA modulus ``n = p * q`` and exponents with ``e * d = 1 (mod lcm(p - 1, q - 1))``.
* Full-domain hash ``H(x) = int(MGF1-SHA256(x, len(n) bytes)) mod n`` (:func:`full_domain_hash`).
* Client: draws a 32-byte nonce ``x`` and a uniform ``r`` in ``Z_n^*``, sends ``b = H(x) * r**e mod n``
  (:func:`blind`). Because ``r -> r**e`` is a bijection of ``Z_n^*``, ``b`` is uniform in ``Z_n^*`` whatever
  ``x`` is: the signer learns nothing about the nonce.
* Signer: returns ``s' = b**d mod n`` (:meth:`TokenSigner.sign_blinded`).
* Client: ``s = s' * r**-1 mod n = H(x)**d mod n`` (:func:`unblind`), a plain RSA-FDH signature of ``x``.
* Collector: accepts ``(x, s)`` if ``s**e = H(x) (mod n)`` (:func:`verify`) and ``x`` was never spent.

Arithmetic uses Python integers. Keys are generated and serialized with ``cryptography`` (the ``crypto`` extra),
which is imported lazily: :func:`blind`, :func:`unblind`, :func:`verify` and :func:`new_nonce` need only the
standard library. Production randomness comes from :mod:`secrets`.

References:
    D. Chaum, "Blind signatures for untraceable payments", CRYPTO 1982. M. Bellare and P. Rogaway, "The exact
    security of digital signatures: how to sign with RSA and Rabin", EUROCRYPT 1996 (RSA-FDH). A. Davidson et al.,
    "Privacy Pass", PETS 2018; RFC 9474 (RSA blind signatures), RFC 9578 (Privacy Pass issuance protocols).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from dataclasses import dataclass
from typing import Any, Final

from .._errors import ParameterError

__all__ = [
    "NONCE_BYTES",
    "TokenKey",
    "TokenSigner",
    "blind",
    "full_domain_hash",
    "new_nonce",
    "unblind",
    "verify",
]

#: Length in bytes of a token nonce (64 hex characters on the wire).
NONCE_BYTES: Final = 32
_MIN_GENERATED_BITS: Final = 2048
_MAX_GENERATED_BITS: Final = 8192


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(f"{name} must be an int; got {type(value).__name__} {value!r:.60}")
    return value


def _show(value: int) -> str:
    """An int for an error message: in full if short, else its size (keys and blinded values are huge)."""
    return str(value) if value.bit_length() <= 64 else f"a {value.bit_length()}-bit value"


def _check_bytes(name: str, value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise ParameterError(f"{name} must be bytes; got {type(value).__name__}")
    return bytes(value)


def _check_nonce(nonce: Any) -> bytes:
    nonce = _check_bytes("nonce", nonce)
    if len(nonce) != NONCE_BYTES:
        raise ParameterError(f"nonce must be exactly {NONCE_BYTES} bytes; got {len(nonce)} bytes")
    return nonce


@dataclass(frozen=True, slots=True)
class TokenKey:
    """The public half of a token key: RSA modulus ``n`` and public exponent ``e``.

    Attributes:
        n: the modulus, an odd integer >= 15 (real keys have 2048 bits or more).
        e: the public exponent, odd, in ``[3, n)``.

    Example:
        >>> key = TokenKey(n=3233, e=17)
        >>> key.to_dict()
        {'n': 'ca1', 'e': 17}
        >>> TokenKey.from_dict(key.to_dict()) == key
        True
    """

    n: int
    e: int

    def __post_init__(self) -> None:
        n = _check_int("n", self.n)
        e = _check_int("e", self.e)
        if n < 15 or n % 2 == 0:
            raise ParameterError(f"n must be an odd RSA modulus >= 15; got {_show(n)}")
        if not (3 <= e < n) or e % 2 == 0:
            raise ParameterError(f"e must be an odd integer in [3, n); got {_show(e)}")

    @property
    def byte_length(self) -> int:
        """Length of the modulus in bytes (the length of the full-domain hash output before reduction)."""
        return (self.n.bit_length() + 7) // 8

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"n": "<lowercase hex, no prefix>", "e": int}`` (the collector contract's ``token_key``)."""
        return {"n": format(self.n, "x"), "e": self.e}

    @classmethod
    def from_dict(cls, data: Any) -> TokenKey:
        """Inverse of :meth:`to_dict`.

        Raises:
            ParameterError: ``data`` is not a mapping with a hex string ``n`` and an integer ``e``.
        """
        if not isinstance(data, dict) or "n" not in data or "e" not in data:
            raise ParameterError(f"token_key must be a mapping with keys 'n' and 'e'; got {data!r:.80}")
        n_text = data["n"]
        if not isinstance(n_text, str):
            raise ParameterError(f"token_key.n must be a hex string; got {type(n_text).__name__}")
        try:
            n = int(n_text, 16)
        except ValueError:
            raise ParameterError(f"token_key.n must be a hex string; got {n_text!r:.80}") from None
        return cls(n=n, e=_check_int("token_key.e", data["e"]))


def _mgf1_sha256(seed: bytes, length: int) -> bytes:
    """MGF1 with SHA-256 (RFC 8017, appendix B.2.1)."""
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return bytes(out[:length])


def full_domain_hash(key: TokenKey, message: bytes) -> int:
    """The full-domain hash ``H(message) = int(MGF1-SHA256(message, len(n) bytes), big-endian) mod n``.

    Args:
        key: the public key (only ``n`` is used).
        message: the bytes to hash (the token nonce).

    Returns:
        An integer in ``[0, n)``.

    Example:
        >>> 0 <= full_domain_hash(TokenKey(n=3233, e=17), b"x") < 3233
        True
    """
    if not isinstance(key, TokenKey):
        raise ParameterError(f"key must be a TokenKey; got {type(key).__name__}")
    message = _check_bytes("message", message)
    return int.from_bytes(_mgf1_sha256(message, key.byte_length), "big") % key.n


def new_nonce() -> bytes:
    """Return a fresh token nonce: 32 bytes from :mod:`secrets` (64 hex characters on the wire)."""
    return secrets.token_bytes(NONCE_BYTES)


def _random_unit(n: int) -> int:
    """A uniform element of ``Z_n^*`` (rejection sampling with :mod:`secrets`)."""
    while True:
        r = secrets.randbelow(n)
        if r > 1 and math.gcd(r, n) == 1:
            return r


def blind(key: TokenKey, nonce: bytes) -> tuple[int, int]:
    """Blind a nonce for signing: ``b = H(nonce) * r**e mod n`` with ``r`` uniform in ``Z_n^*``.

    Args:
        key: the campaign's public token key.
        nonce: a 32-byte nonce (:func:`new_nonce`); keep it secret until the token is spent.

    Returns:
        ``(blinded, unblinder)``: the value to send to the signer and ``r**-1 mod n`` for :func:`unblind`.

    Raises:
        ParameterError: ``key`` is not a :class:`TokenKey` or ``nonce`` is not 32 bytes.

    Example:
        >>> key = TokenKey(n=3233, e=17)
        >>> blinded, unblinder = blind(key, bytes(32))
        >>> 0 < blinded < key.n and 0 < unblinder < key.n
        True
    """
    if not isinstance(key, TokenKey):
        raise ParameterError(f"key must be a TokenKey; got {type(key).__name__}")
    nonce = _check_nonce(nonce)
    m = full_domain_hash(key, nonce)
    if m == 0:  # probability 1/n: only conceivable with toy keys
        raise ParameterError("nonce hashes to 0 modulo n; draw another nonce")
    r = _random_unit(key.n)
    return m * pow(r, key.e, key.n) % key.n, pow(r, -1, key.n)


def unblind(key: TokenKey, blind_signature: int, unblinder: int) -> int:
    """Remove the blinding factor: ``s = blind_signature * unblinder mod n``.

    Args:
        key: the public token key.
        blind_signature: the signer's answer to the blinded value, in ``(0, n)``.
        unblinder: the second value returned by :func:`blind`, in ``(0, n)``.

    Returns:
        The RSA-FDH signature of the nonce; check it with :func:`verify` before relying on it (a signer that
        answers with garbage, or under another key, is caught there).

    Raises:
        ParameterError: a value is not an int in ``(0, n)``.
    """
    if not isinstance(key, TokenKey):
        raise ParameterError(f"key must be a TokenKey; got {type(key).__name__}")
    for name, value in (("blind_signature", blind_signature), ("unblinder", unblinder)):
        _check_int(name, value)
        if not (0 < value < key.n):
            raise ParameterError(
                f"{name} must be in (0, n) for the {key.n.bit_length()}-bit key; got {_show(value)}"
            )
    return blind_signature * unblinder % key.n


def verify(key: TokenKey, nonce: bytes, signature: int) -> bool:
    """Check a token: ``signature**e = H(nonce) (mod n)``.

    Malformed tokens (nonce of the wrong length, signature outside ``(0, n)``) are invalid, not errors: the
    function returns ``False``. Spent-nonce bookkeeping is the caller's job.

    Args:
        key: the public token key.
        nonce: the token nonce (32 bytes).
        signature: the unblinded signature.

    Returns:
        True if the signature is valid for this nonce under this key.

    Raises:
        ParameterError: ``key`` is not a :class:`TokenKey`, ``nonce`` is not bytes or ``signature`` not an int.
    """
    if not isinstance(key, TokenKey):
        raise ParameterError(f"key must be a TokenKey; got {type(key).__name__}")
    nonce = _check_bytes("nonce", nonce)
    _check_int("signature", signature)
    if len(nonce) != NONCE_BYTES or not (0 < signature < key.n):
        return False
    return pow(signature, key.e, key.n) == full_domain_hash(key, nonce)


class TokenSigner:
    """The private token key of a campaign; signs blinded values.

    Build one with :meth:`generate` (a fresh 2048-bit key from ``cryptography``), :meth:`from_pem`, or
    :meth:`from_primes` (known primes; tests with tiny keys). Signing uses the CRT, hides the exponent's timing
    behind base blinding (``(b * u**e)**d * u**-1``, fresh ``u`` each time), and checks its own result before
    returning it.

    Example:
        >>> signer = TokenSigner.from_primes(61, 53, e=17)
        >>> key = signer.public
        >>> nonce = bytes(range(32))
        >>> blinded, unblinder = blind(key, nonce)
        >>> verify(key, nonce, unblind(key, signer.sign_blinded(blinded), unblinder))
        True
    """

    __slots__ = ("_d", "_dp", "_dq", "_p", "_q", "_q_inv", "public")

    def __init__(self, *, p: int, q: int, e: int, d: int) -> None:
        for name, value in (("p", p), ("q", q), ("e", e), ("d", d)):
            _check_int(name, value)
        if p < 3 or q < 3 or p == q:
            raise ParameterError(f"p and q must be distinct odd primes >= 3; got p={p}, q={q}")
        lam = math.lcm(p - 1, q - 1)
        if math.gcd(e, lam) != 1 or (e * d) % lam != 1:
            raise ParameterError("d must be the inverse of e modulo lcm(p - 1, q - 1)")
        #: The public key (publish it in the campaign object as ``token_key``).
        self.public = TokenKey(n=p * q, e=e)
        self._p, self._q, self._d = p, q, d
        self._dp, self._dq = d % (p - 1), d % (q - 1)
        self._q_inv = pow(q, -1, p)

    @classmethod
    def from_primes(cls, p: int, q: int, *, e: int = 65537) -> TokenSigner:
        """Build a signer from two primes (``d = e**-1 mod lcm(p - 1, q - 1)``); for tests and known keys.

        Raises:
            ParameterError: ``e`` is not invertible modulo ``lcm(p - 1, q - 1)`` or the primes are invalid.
        """
        for name, value in (("p", p), ("q", q), ("e", e)):
            _check_int(name, value)
        if p < 3 or q < 3:
            raise ParameterError(f"p and q must be odd primes >= 3; got p={p}, q={q}")
        lam = math.lcm(p - 1, q - 1)
        if math.gcd(e, lam) != 1:
            raise ParameterError(f"e must be coprime to lcm(p - 1, q - 1) = {lam}; got {e}")
        return cls(p=p, q=q, e=e, d=pow(e, -1, lam))

    @classmethod
    def generate(cls, bits: int = 2048) -> TokenSigner:
        """Generate a fresh RSA key (``e = 65537``) with ``cryptography``.

        Args:
            bits: modulus size, in [2048, 8192].

        Raises:
            ParameterError: ``bits`` out of range.
            ImportError: the ``cryptography`` package (extra ``crypto``) is not installed.
        """
        if isinstance(bits, bool) or not isinstance(bits, int) or not (
            _MIN_GENERATED_BITS <= bits <= _MAX_GENERATED_BITS
        ):
            raise ParameterError(
                f"bits must be an integer in [{_MIN_GENERATED_BITS}, {_MAX_GENERATED_BITS}]; got {bits!r}"
            )
        rsa = _rsa_module()
        private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
        return cls._from_cryptography(private)

    @classmethod
    def _from_cryptography(cls, private: Any) -> TokenSigner:
        numbers = private.private_numbers()
        return cls(p=numbers.p, q=numbers.q, e=numbers.public_numbers.e, d=numbers.d)

    def to_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM (store it like any other secret).

        Raises:
            ImportError: ``cryptography`` is not installed.
        """
        rsa = _rsa_module()
        from cryptography.hazmat.primitives import serialization

        p, q, d, e = self._p, self._q, self._d, self.public.e
        numbers = rsa.RSAPrivateNumbers(
            p=p, q=q, d=d, dmp1=self._dp, dmq1=self._dq, iqmp=rsa.rsa_crt_iqmp(p, q),
            public_numbers=rsa.RSAPublicNumbers(e=e, n=self.public.n),
        )
        return numbers.private_key().private_bytes(
            encoding=serialization.Encoding.PEM,
            format=serialization.PrivateFormat.PKCS8,
            encryption_algorithm=serialization.NoEncryption(),
        )

    @classmethod
    def from_pem(cls, data: bytes) -> TokenSigner:
        """Load a key written by :meth:`to_pem` (unencrypted PEM, RSA).

        Raises:
            ParameterError: ``data`` is not bytes or not an unencrypted RSA private key in PEM.
            ImportError: ``cryptography`` is not installed.
        """
        data = _check_bytes("data", data)
        rsa = _rsa_module()
        from cryptography.hazmat.primitives import serialization

        try:
            private = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise ParameterError(f"data must be an unencrypted PEM private key; loading failed: {exc}") from None
        if not isinstance(private, rsa.RSAPrivateKey):
            raise ParameterError(f"data must hold an RSA private key; got {type(private).__name__}")
        return cls._from_cryptography(private)

    def _raw_sign(self, x: int) -> int:
        """``x**d mod n`` by the CRT (Garner's recombination)."""
        p, q = self._p, self._q
        sp = pow(x % p, self._dp, p)
        sq = pow(x % q, self._dq, q)
        h = self._q_inv * (sp - sq) % p
        return sq + h * q

    def sign_blinded(self, blinded: int) -> int:
        """Sign a blinded value: return ``blinded**d mod n``.

        Args:
            blinded: the client's blinded value (:func:`blind`), an int in ``(0, n)``.

        Returns:
            The blind signature, in ``(0, n)``.

        Raises:
            ParameterError: ``blinded`` is not an int in ``(0, n)``.
            RuntimeError: the computed signature fails its own check (a fault; nothing is returned).
        """
        n, e = self.public.n, self.public.e
        _check_int("blinded", blinded)
        if not (0 < blinded < n):
            raise ParameterError(f"blinded must be in (0, n) for the {n.bit_length()}-bit key; got {_show(blinded)}")
        u = _random_unit(n)
        s = self._raw_sign(blinded * pow(u, e, n) % n) * pow(u, -1, n) % n
        if pow(s, e, n) != blinded:
            raise RuntimeError("blind signature failed its self-check; refusing to return it")
        return s

    def __repr__(self) -> str:
        return f"TokenSigner(public=TokenKey(n=<{self.public.n.bit_length()} bits>, e={self.public.e}))"


def _rsa_module() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import rsa
    except ImportError as exc:
        raise ImportError(
            "token keys need the optional 'cryptography' package; install it with pip install 'sufficientdp[crypto]'"
        ) from exc
    return rsa
