"""Tests of the blind-signature rate-limiting tokens (sufficientdp.collection.tokens).

Independent truths used here:
* the textbook RSA example p=61, q=53, n=3233, e=17, d=2753 (worked by hand: phi = 60*52 = 3120 and
  17*2753 = 46801 = 15*3120 + 1; e.g. Wikipedia "RSA (cryptosystem)", example section: 65**17 mod 3233 = 2790 and
  2790**2753 mod 3233 = 65);
* MGF1-SHA256 recomputed here from hashlib following RFC 8017 B.2.1;
* brute-force enumeration of Z_n^* for the blinding (perfect hiding) property.
"""

from __future__ import annotations

import hashlib
import math

import pytest

from sufficientdp import ParameterError
from sufficientdp.collection import (
    NONCE_BYTES,
    TokenKey,
    TokenSigner,
    blind,
    full_domain_hash,
    new_nonce,
    unblind,
    verify,
)
from sufficientdp.collection.tokens import _is_probable_prime

P, Q, E, D = 61, 53, 17, 2753
N = P * Q
TINY = TokenKey(n=N, e=E)


@pytest.fixture(scope="module")
def signer() -> TokenSigner:
    return TokenSigner.generate(2048)


def _mgf1(seed: bytes, length: int) -> bytes:
    blocks = [hashlib.sha256(seed + i.to_bytes(4, "big")).digest() for i in range(-(-length // 32))]
    return b"".join(blocks)[:length]


def _nonce(i: int) -> bytes:
    return hashlib.sha256(b"test-nonce-%d" % i).digest()


# --- the hand-worked textbook key -----------------------------------------------------------------------------


def test_tiny_key_matches_textbook_numbers() -> None:
    assert N == 3233
    assert (E * D) % ((P - 1) * (Q - 1)) == 1
    assert pow(65, E, N) == 2790 and pow(2790, D, N) == 65  # the textbook encryption/decryption of m = 65
    signer = TokenSigner.from_primes(P, Q, e=E)
    assert signer.public == TINY
    # lcm(60, 52) = 780, so the library's d is 2753 mod 780 = 413; both are valid private exponents.
    assert signer._d == 413 and (E * 413) % 780 == 1
    for m in (1, 2, 65, 2790, 3232):
        assert signer.sign_blinded(m) == pow(m, D, N)


def test_blinded_crt_signing_equals_plain_exponentiation_for_every_value() -> None:
    # The CRT with exponent blinding (d_p + r (p - 1), fresh r) and base blinding is x**d mod n for every x in
    # (0, n), the multiples of p and of q included (there the blinded exponent relies on d_p, d_q > 0).
    signer = TokenSigner.from_primes(P, Q, e=E)
    assert [signer.sign_blinded(m) for m in range(1, N)] == [pow(m, D, N) for m in range(1, N)]
    assert [signer._raw_sign(m) for m in range(0, N, P)] == [pow(m, D, N) for m in range(0, N, P)]


def test_full_domain_hash_matches_independent_mgf1() -> None:
    for i in range(20):
        x = _nonce(i)
        assert full_domain_hash(TINY, x) == int.from_bytes(_mgf1(x, 2), "big") % N
    big = TokenKey(n=(1 << 2047) + 1 + 2 * 12345, e=65537)  # any odd 2048-bit modulus exercises 8 MGF1 blocks
    x = _nonce(99)
    assert full_domain_hash(big, x) == int.from_bytes(_mgf1(x, 256), "big") % big.n
    # MGF1 counter blocks: the first 32 bytes are SHA256(x || 00000000)
    assert _mgf1(x, 32) == hashlib.sha256(x + b"\0\0\0\0").digest()


def test_tiny_key_full_protocol_by_hand() -> None:
    signer = TokenSigner.from_primes(P, Q, e=E)
    for i in range(30):
        x = _nonce(i)
        m = full_domain_hash(TINY, x)
        if math.gcd(m, N) != 1:
            continue
        blinded, unblinder = blind(TINY, x)
        r = pow(unblinder, -1, N)
        assert blinded == m * pow(r, E, N) % N
        s = unblind(TINY, signer.sign_blinded(blinded), unblinder)
        assert s == pow(m, D, N)  # textbook RSA-FDH signature, computed independently with d = 2753
        assert verify(TINY, x, s)


def test_blinding_hides_the_nonce_perfectly_on_tiny_key() -> None:
    units = [r for r in range(1, N) if math.gcd(r, N) == 1]
    assert len(units) == 60 * 52
    unit_set = set(units)
    messages = [m for m in (full_domain_hash(TINY, _nonce(i)) for i in range(10)) if math.gcd(m, N) == 1]
    assert len(messages) >= 3
    # For every message, r -> m * r**e is a bijection of Z_n^*: a uniform r gives a uniform blinded value,
    # whatever the nonce. So the distribution of what the signer sees does not depend on the nonce.
    for m in messages:
        assert {m * pow(r, E, N) % N for r in units} == unit_set
    # Any observed (blinded, blind signature) is consistent with ANY nonce: there is a blinding factor r' that
    # maps the nonce to the observed blinded value, and the signature then unblinds to that nonce's signature.
    signer = TokenSigner.from_primes(P, Q, e=E)
    blinded, _ = blind(TINY, _nonce(0))
    blind_sig = signer.sign_blinded(blinded)
    for m in messages:
        r_prime = pow(blinded * pow(m, -1, N) % N, D, N)
        assert m * pow(r_prime, E, N) % N == blinded
        assert blind_sig * pow(r_prime, -1, N) % N == pow(m, D, N)


# --- the real 2048-bit scheme ---------------------------------------------------------------------------------


def test_round_trip_and_tampering(signer: TokenSigner) -> None:
    key = signer.public
    assert key.n.bit_length() == 2048 and key.e == 65537
    nonce = new_nonce()
    blinded, unblinder = blind(key, nonce)
    sig = unblind(key, signer.sign_blinded(blinded), unblinder)
    assert verify(key, nonce, sig)
    assert sig == pow(full_domain_hash(key, nonce), signer._d, key.n)
    tampered = bytearray(nonce)
    tampered[0] ^= 1
    assert not verify(key, bytes(tampered), sig)
    assert not verify(key, nonce, sig ^ 1)
    assert not verify(key, nonce, (sig + 1) % key.n)
    assert not verify(key, nonce, 0) and not verify(key, nonce, key.n + sig)
    assert not verify(key, nonce[:-1], sig)  # wrong length is invalid, not an error
    # the blind signature itself (before unblinding) is not a valid token
    assert not verify(key, nonce, signer.sign_blinded(blinded))
    # a different key does not accept it
    other = TokenSigner.from_primes(P, Q, e=E).public
    assert not verify(other, nonce, sig % other.n or 1)


def test_same_nonce_blinds_differently(signer: TokenSigner) -> None:
    key = signer.public
    nonce = new_nonce()
    values = {blind(key, nonce)[0] for _ in range(5)}
    assert len(values) == 5  # equal values among 5 uniform draws in Z_n^* have probability < 2**-2000
    assert all(0 < b < key.n for b in values) and full_domain_hash(key, nonce) not in values


def test_new_nonce() -> None:
    a, b = new_nonce(), new_nonce()
    assert isinstance(a, bytes) and len(a) == NONCE_BYTES == 32 and a != b


def test_pem_round_trip(signer: TokenSigner) -> None:
    pem = signer.to_pem()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    again = TokenSigner.from_pem(pem)
    assert again.public == signer.public
    nonce = new_nonce()
    blinded, unblinder = blind(again.public, nonce)
    assert verify(signer.public, nonce, unblind(signer.public, again.sign_blinded(blinded), unblinder))
    assert "2048 bits" in repr(signer) and str(signer._d) not in repr(signer)


def test_token_key_dict_round_trip(signer: TokenSigner) -> None:
    d = signer.public.to_dict()
    assert d["e"] == 65537 and int(d["n"], 16) == signer.public.n and not d["n"].startswith("0x")
    assert TokenKey.from_dict(d) == signer.public
    assert TINY.to_dict() == {"n": "ca1", "e": 17}


# --- invalid inputs -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 3234, "e": 17}, "n must be an odd"),
        ({"n": 9, "e": 3}, "n must be an odd"),
        ({"n": 3233, "e": 16}, "e must be an odd"),
        ({"n": 3233, "e": 1}, "e must be an odd"),
        ({"n": 3233, "e": 3233}, "e must be an odd"),
        ({"n": 3233.0, "e": 17}, "n must be an int"),
        ({"n": 3233, "e": True}, "e must be an int"),
    ],
)
def test_token_key_rejects_invalid(kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        TokenKey(**kwargs)


@pytest.mark.parametrize(
    "data",
    [None, [], {"n": "ca1"}, {"e": 17}, {"n": 3233, "e": 17}, {"n": "xyz", "e": 17}, {"n": "ca1", "e": "17"},
     # only the to_dict form: lowercase hex, no prefix, sign, whitespace, separator or leading zero
     {"n": "0xca1", "e": 17}, {"n": "CA1", "e": 17}, {"n": " ca1", "e": 17}, {"n": "ca1\n", "e": 17},
     {"n": "+ca1", "e": 17}, {"n": "c_a1", "e": 17}, {"n": "0ca1", "e": 17}, {"n": "", "e": 17}],
)
def test_token_key_from_dict_rejects_invalid(data: object) -> None:
    with pytest.raises(ParameterError, match="token_key"):
        TokenKey.from_dict(data)


def test_miller_rabin_matches_trial_division_and_known_values() -> None:
    def trial(n: int) -> bool:
        return n >= 2 and all(n % d for d in range(2, math.isqrt(n) + 1))

    assert [n for n in range(3000) if _is_probable_prime(n)] == [n for n in range(3000) if trial(n)]
    for carmichael in (561, 1105, 1729, 41041, 825265):
        assert not _is_probable_prime(carmichael)
    assert not _is_probable_prime(3825123056546413051)  # strong pseudoprime to the bases 2, 3, ..., 23
    assert not _is_probable_prime(318665857834031151167461)  # strong pseudoprime to the bases 2, ..., 37
    m127, m89, m61 = 2**127 - 1, 2**89 - 1, 2**61 - 1  # Mersenne primes; 127 and 89 bits use random bases
    assert _is_probable_prime(m127) and _is_probable_prime(m89) and _is_probable_prime(m61)
    assert not _is_probable_prime(m127 * m89) and not _is_probable_prime(m89 * m61) and not _is_probable_prime(m127 + 2)


def test_from_primes_checks_primality() -> None:
    with pytest.raises(ParameterError, match="q must be a prime; got 55"):
        TokenSigner.from_primes(61, 55, e=7)
    with pytest.raises(ParameterError, match="p must be a prime; got 561"):
        TokenSigner.from_primes(561, 53, e=7)  # a Carmichael number
    with pytest.raises(ParameterError, match="p must be a prime; got a 216-bit value"):
        TokenSigner.from_primes((2**127 - 1) * (2**89 - 1), 2**61 - 1)
    with pytest.raises(ParameterError, match="distinct"):
        TokenSigner.from_primes(P, P, e=E)
    big = TokenSigner.from_primes(2**127 - 1, 2**89 - 1)  # large primes: the probabilistic test accepts them
    nonce = _nonce(3)
    blinded, unblinder = blind(big.public, nonce)
    assert verify(big.public, nonce, unblind(big.public, big.sign_blinded(blinded), unblinder))


def test_functions_reject_invalid() -> None:
    with pytest.raises(ParameterError, match="key must be a TokenKey"):
        blind({"n": "ca1", "e": 17}, _nonce(0))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="nonce must be exactly 32 bytes"):
        blind(TINY, b"short")
    with pytest.raises(ParameterError, match="nonce must be bytes"):
        blind(TINY, "ab" * 32)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="blind_signature must be in"):
        unblind(TINY, 0, 5)
    with pytest.raises(ParameterError, match="unblinder must be in"):
        unblind(TINY, 5, N)
    with pytest.raises(ParameterError, match="blind_signature must be an int"):
        unblind(TINY, "5", 5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="key must be a TokenKey"):
        unblind(None, 5, 5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="signature must be an int"):
        verify(TINY, _nonce(0), "5")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="nonce must be bytes"):
        verify(TINY, "00" * 32, 5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="key must be a TokenKey"):
        verify(None, _nonce(0), 5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="key must be a TokenKey"):
        full_domain_hash(None, b"x")  # type: ignore[arg-type]


def test_signer_rejects_invalid() -> None:
    signer = TokenSigner.from_primes(P, Q, e=E)
    for bad in (0, N, N + 1, -1):
        with pytest.raises(ParameterError, match="blinded must be in"):
            signer.sign_blinded(bad)
    with pytest.raises(ParameterError, match="blinded must be an int"):
        signer.sign_blinded(5.0)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="e must be coprime"):
        TokenSigner.from_primes(P, Q, e=3)  # gcd(3, 780) = 3
    with pytest.raises(ParameterError, match="p and q"):
        TokenSigner.from_primes(2, Q, e=E)
    with pytest.raises(ParameterError, match="d must be the inverse"):
        TokenSigner(p=P, q=Q, e=E, d=D + 1)
    with pytest.raises(ParameterError, match="distinct"):
        TokenSigner(p=P, q=P, e=E, d=D)
    for bits in (1024, 2047 + 8192, 2048.0, True):
        with pytest.raises(ParameterError, match="bits must be an integer in"):
            TokenSigner.generate(bits)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="PEM"):
        TokenSigner.from_pem(b"not a key")
    with pytest.raises(ParameterError, match="data must be bytes"):
        TokenSigner.from_pem("-----BEGIN PRIVATE KEY-----")  # type: ignore[arg-type]


def test_from_pem_rejects_non_rsa_key() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with pytest.raises(ParameterError, match="RSA private key"):
        TokenSigner.from_pem(pem)
