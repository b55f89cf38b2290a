"""RFC 9474 RSA blind signatures, variant RSABSSA-SHA384-PSS-Randomized: the standard encoding of blind tokens.

The token scheme of new campaigns (campaign field ``token_scheme`` = ``"rsabssa-sha384-pss-randomized"``): the
collector verifies with :func:`verify`, the client :class:`~sufficientdp.client.Reporter` runs :func:`prepare`,
:func:`blind` and :func:`finalize` with the token nonce as ``msg`` and sends the 32-byte prefix with the token.
Campaigns created before it keep the textbook RSA-FDH tokens of :mod:`sufficientdp.collection.tokens`
(``"rsa-fdh-sha256"``; docs/rate_limiting.md). It is checked against the RFC's published test vectors
(tests/collection/test_rsabssa.py, RFC 9474 Appendix A).

The protocol (RFC 9474, Section 4), with SHA-384, MGF1-SHA-384 and a 48-byte salt (RSASSA-PSS, RFC 8017):

* Client, :func:`prepare`: ``input_msg = msg_prefix || msg`` with a fresh 32-byte ``msg_prefix`` (the randomized
  variant: the signed message has entropy even if ``msg`` has little).
* Client, :func:`blind`: ``encoded = EMSA-PSS-ENCODE(input_msg, bit_len(n) - 1)`` with a fresh salt,
  ``m = OS2IP(encoded)`` (a unit mod n), a uniform ``r`` in ``[1, n)``, ``blinded_msg = I2OSP(m * r**e mod n)``;
  keeps ``inv = r**-1 mod n``.
* Signer, :func:`blind_sign`: ``blind_sig = I2OSP(RSASP1(sk, OS2IP(blinded_msg)))``, checked with RSAVP1 before
  it is returned (:meth:`TokenSigner.sign_blinded`, which also blinds the base of its exponentiation).
* Client, :func:`finalize`: ``sig = I2OSP(OS2IP(blind_sig) * inv mod n)``, returned only if it verifies.
* Anyone, :func:`verify`: RSASSA-PSS-VERIFY of ``input_msg`` (done by ``cryptography``): the result is an ordinary
  RSA-PSS signature.

Timing: the signer's exponentiation runs on Python integers, which are not constant-time. Base blinding with a
fresh unit and CRT exponents blinded with fresh multiples of ``p - 1`` and ``q - 1`` each time
(:meth:`TokenSigner.sign_blinded`) decorrelate the timing from the value the client sent and from any one fixed
exponent pattern; they do not make the arithmetic constant-time. ``cryptography`` offers no raw RSA private
operation (RSASP1 without padding), so the signing itself cannot be delegated to it; the verification is.

References:
    F. Denis, F. Jacobs, C. A. Wood, "RSA Blind Signatures", RFC 9474 (2023), Sections 4 and 5 and Appendix A.
    K. Moriarty et al., "PKCS #1: RSA Cryptography Specifications Version 2.2", RFC 8017, Section 9.1.
"""

from __future__ import annotations

import hashlib
import math
import secrets
from typing import Any, Final

from .._errors import ParameterError
from .tokens import TokenKey, TokenSigner, mgf1

__all__ = [
    "PREFIX_BYTES",
    "SALT_BYTES",
    "blind",
    "blind_sign",
    "emsa_pss_encode",
    "finalize",
    "prepare",
    "verify",
]

#: Bytes of the random message prefix of the randomized variant (RFC 9474, Section 4.1).
PREFIX_BYTES: Final = 32
#: Bytes of the PSS salt: the hash length of SHA-384 (RFC 9474, Section 5: RSABSSA-SHA384-PSS-*).
SALT_BYTES: Final = 48
_HASH_BYTES: Final = 48


def _bytes(name: str, value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise ParameterError(f"{name} must be bytes; got {type(value).__name__}")
    return bytes(value)


def _key(key: Any) -> TokenKey:
    if not isinstance(key, TokenKey):
        raise ParameterError(f"key must be a TokenKey; got {type(key).__name__}")
    if key.n.bit_length() < 8 * (_HASH_BYTES + SALT_BYTES + 2) + 1:
        raise ParameterError(f"key must have a modulus of at least {8 * (_HASH_BYTES + SALT_BYTES + 2) + 1} bits "
                             f"for SHA-384 PSS with a {SALT_BYTES}-byte salt; got {key.n.bit_length()} bits")
    return key


def _os2ip(data: bytes) -> int:
    return int.from_bytes(data, "big")


def _i2osp(x: int, length: int) -> bytes:
    return x.to_bytes(length, "big")


def prepare(msg: bytes, *, prefix: bytes | None = None) -> bytes:
    """RFC 9474 Section 4.1, randomized variant: ``prefix || msg`` with a fresh 32-byte prefix.

    Args:
        msg: the message (for tokens, the nonce).
        prefix: the 32-byte prefix; default fresh from :mod:`secrets` (give it only to reproduce a test vector).

    Returns:
        The prepared message ``input_msg``: what is blinded, signed and verified.

    Examples:
        >>> len(prepare(b"nonce"))
        37
    """
    msg = _bytes("msg", msg)
    prefix = secrets.token_bytes(PREFIX_BYTES) if prefix is None else _bytes("prefix", prefix)
    if len(prefix) != PREFIX_BYTES:
        raise ParameterError(f"prefix must be exactly {PREFIX_BYTES} bytes; got {len(prefix)} bytes")
    return prefix + msg


def emsa_pss_encode(msg: bytes, em_bits: int, salt: bytes) -> bytes:
    """EMSA-PSS-ENCODE with SHA-384 and MGF1-SHA-384 (RFC 8017, Section 9.1.1).

    Args:
        msg: the message.
        em_bits: the encoded message's maximal bit length (``bit_len(n) - 1`` for RSASSA-PSS).
        salt: the salt (48 bytes in RSABSSA-SHA384-PSS; empty in the PSSZERO variants).

    Returns:
        The encoded message, ``ceil(em_bits / 8)`` bytes.

    Raises:
        ParameterError: ``em_bits`` too small for the hash and the salt.
    """
    msg, salt = _bytes("msg", msg), _bytes("salt", salt)
    if isinstance(em_bits, bool) or not isinstance(em_bits, int):
        raise ParameterError(f"em_bits must be an int; got {type(em_bits).__name__}")
    em_len = (em_bits + 7) // 8
    if em_len < _HASH_BYTES + len(salt) + 2:
        raise ParameterError(f"em_bits must be at least {8 * (_HASH_BYTES + len(salt) + 2) - 7} for a "
                             f"{len(salt)}-byte salt; got {em_bits}")
    m_hash = hashlib.sha384(msg).digest()
    h = hashlib.sha384(b"\x00" * 8 + m_hash + salt).digest()
    db = b"\x00" * (em_len - len(salt) - _HASH_BYTES - 2) + b"\x01" + salt
    masked = bytearray(a ^ b for a, b in zip(db, mgf1(h, em_len - _HASH_BYTES - 1, "sha384"), strict=True))
    masked[0] &= 0xFF >> (8 * em_len - em_bits)
    return bytes(masked) + h + b"\xbc"


def _blind_with(key: TokenKey, prepared: bytes, salt: bytes, r: int) -> tuple[bytes, int]:
    n, k = key.n, key.byte_length
    encoded = emsa_pss_encode(prepared, n.bit_length() - 1, salt)
    m = _os2ip(encoded)
    if math.gcd(m, n) != 1:  # would reveal a factor of n; never happens with a real key
        raise ParameterError("the encoded message is not invertible modulo n (invalid key or input)")
    if not (1 <= r < n) or math.gcd(r, n) != 1:
        raise ParameterError("the blinding factor r must be a unit in [1, n)")
    inv = pow(r, -1, n)
    blinded = m * pow(r, key.e, n) % n
    return _i2osp(blinded, k), inv


def blind(key: TokenKey, prepared: bytes) -> tuple[bytes, int]:
    """RFC 9474 Section 4.2 (Blind): the blinded message for the signer and the client's secret ``inv``.

    Args:
        key: the signer's public key (pinned by the client, as for :func:`~sufficientdp.collection.tokens.blind`).
        prepared: the prepared message (:func:`prepare`).

    Returns:
        ``(blinded_msg, inv)``: ``blinded_msg`` has the modulus length in bytes; keep ``inv`` for :func:`finalize`.
    """
    key = _key(key)
    prepared = _bytes("prepared", prepared)
    n = key.n
    while True:
        r = 1 + secrets.randbelow(n - 1)
        if math.gcd(r, n) == 1:
            return _blind_with(key, prepared, secrets.token_bytes(SALT_BYTES), r)


def blind_sign(signer: TokenSigner, blinded_msg: bytes) -> bytes:
    """RFC 9474 Section 4.3 (BlindSign): ``RSASP1`` of the blinded message, checked with ``RSAVP1``.

    Raises:
        ParameterError: ``blinded_msg`` is not the modulus length, or its value is not in ``(0, n)``.
        RuntimeError: the signature fails its own check (a fault; nothing is returned).
    """
    if not isinstance(signer, TokenSigner):
        raise ParameterError(f"signer must be a TokenSigner; got {type(signer).__name__}")
    key = _key(signer.public)
    blinded_msg = _bytes("blinded_msg", blinded_msg)
    if len(blinded_msg) != key.byte_length:
        raise ParameterError(f"blinded_msg must be {key.byte_length} bytes (the modulus length); got "
                             f"{len(blinded_msg)}")
    m = _os2ip(blinded_msg)
    if not 0 < m < key.n:
        raise ParameterError("blinded_msg must encode an integer in (0, n) (message representative out of range)")
    return _i2osp(signer.sign_blinded(m), key.byte_length)


def finalize(key: TokenKey, prepared: bytes, blind_sig: bytes, inv: int) -> bytes:
    """RFC 9474 Section 4.4 (Finalize): unblind and verify; the result is an RSASSA-PSS signature of ``prepared``.

    Raises:
        ParameterError: a malformed input, or a signature that does not verify (the signer misbehaved, or the
            inputs do not belong together).
    """
    key = _key(key)
    prepared, blind_sig = _bytes("prepared", prepared), _bytes("blind_sig", blind_sig)
    if len(blind_sig) != key.byte_length:
        raise ParameterError(f"blind_sig must be {key.byte_length} bytes (the modulus length); got {len(blind_sig)}")
    if isinstance(inv, bool) or not isinstance(inv, int) or not 0 < inv < key.n:
        raise ParameterError("inv must be an int in (0, n), as returned by blind")
    sig = _i2osp(_os2ip(blind_sig) * inv % key.n, key.byte_length)
    if not verify(key, prepared, sig):
        raise ParameterError("the finalized signature does not verify (invalid blind signature)")
    return sig


def verify(key: TokenKey, prepared: bytes, sig: bytes) -> bool:
    """RSASSA-PSS-VERIFY of the prepared message with SHA-384, MGF1-SHA-384 and a 48-byte salt (``cryptography``).

    Returns:
        True if ``sig`` is a valid signature of ``prepared`` under ``key``; False otherwise (including a signature of
        the wrong length).
    """
    key = _key(key)
    prepared, sig = _bytes("prepared", prepared), _bytes("sig", sig)
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding, rsa
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("RSABSSA verification needs 'cryptography': pip install 'sufficientdp[crypto]'") from exc
    if len(sig) != key.byte_length:
        return False
    public = rsa.RSAPublicNumbers(key.e, key.n).public_key()
    try:
        public.verify(sig, prepared, padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=SALT_BYTES),
                      hashes.SHA384())
    except InvalidSignature:
        return False
    return True
