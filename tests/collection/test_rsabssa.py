"""RFC 9474 RSABSSA-SHA384-PSS-Randomized against the RFC's published test vectors (Appendix A), plus round trips.

The vectors (tests/collection/data/rfc9474_vectors.json) are the RFC's, hex as published; the test first checks
that they are self-consistent under an independent implementation (``cryptography``'s RSA-PSS verification, and
``p * q = n``), then that every step of :mod:`sufficientdp.collection.rsabssa` reproduces them byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cryptography", reason="RSABSSA verification needs cryptography")

from sufficientdp._errors import ParameterError  # noqa: E402
from sufficientdp.collection import rsabssa  # noqa: E402
from sufficientdp.collection.tokens import TokenSigner  # noqa: E402

_DATA = json.loads((Path(__file__).parent / "data" / "rfc9474_vectors.json").read_text())
_KEY = {name: int(value, 16) for name, value in _DATA["key"].items()}
VECTORS = {v["name"]: v for v in _DATA["vectors"]}


@pytest.fixture(scope="module")
def signer() -> TokenSigner:
    s = TokenSigner.from_primes(_KEY["p"], _KEY["q"], e=_KEY["e"])
    assert s.public.n == _KEY["n"] and s.public.n.bit_length() == 4096
    return s


def _hex(v: dict[str, Any], name: str) -> bytes:
    return bytes.fromhex(v[name])


def test_the_vectors_are_self_consistent_under_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    assert _KEY["p"] * _KEY["q"] == _KEY["n"]
    public = rsa.RSAPublicNumbers(_KEY["e"], _KEY["n"]).public_key()
    for v in VECTORS.values():
        public.verify(_hex(v, "sig"), _hex(v, "prepared_msg"),
                      padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=48), hashes.SHA384())


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VECTORS))
def test_every_step_reproduces_the_rfc_vectors(signer: TokenSigner, name: str) -> None:
    v = VECTORS[name]
    key = signer.public
    msg, prefix = _hex(v, "msg"), _hex(v, "msg_prefix")
    prepared = rsabssa.prepare(msg, prefix=prefix) if prefix else msg  # Deterministic: no prefix
    assert prepared == _hex(v, "prepared_msg")
    if "encoded_msg" in v:
        assert rsabssa.emsa_pss_encode(prepared, key.n.bit_length() - 1, _hex(v, "salt")) == _hex(v, "encoded_msg")
    inv = int(v["inv"], 16)
    blinded, got_inv = rsabssa._blind_with(key, prepared, _hex(v, "salt"), pow(inv, -1, key.n))
    assert (blinded, got_inv) == (_hex(v, "blinded_msg"), inv)
    blind_sig = rsabssa.blind_sign(signer, blinded)
    assert blind_sig == _hex(v, "blind_sig")
    sig = rsabssa.finalize(key, prepared, blind_sig, inv)
    assert sig == _hex(v, "sig")
    assert rsabssa.verify(key, prepared, sig)


def test_randomized_round_trip_with_a_fresh_key() -> None:
    signer = TokenSigner.generate(2048)
    key = signer.public
    prepared = rsabssa.prepare(b"\x07" * 32)
    assert len(prepared) == rsabssa.PREFIX_BYTES + 32
    blinded, inv = rsabssa.blind(key, prepared)
    sig = rsabssa.finalize(key, prepared, rsabssa.blind_sign(signer, blinded), inv)
    assert rsabssa.verify(key, prepared, sig)
    # Another prepared message, a flipped bit, a truncated signature: no.
    assert not rsabssa.verify(key, rsabssa.prepare(b"\x07" * 32), sig)
    assert not rsabssa.verify(key, prepared, bytes([sig[0] ^ 1]) + sig[1:])
    assert not rsabssa.verify(key, prepared, sig[1:])
    # Blinding is randomized: the same message blinds to different values.
    assert rsabssa.blind(key, prepared)[0] != blinded


@pytest.mark.slow
def test_finalize_refuses_a_bad_blind_signature_and_blind_sign_a_bad_message(signer: TokenSigner) -> None:
    v = VECTORS["RSABSSA-SHA384-PSS-Randomized"]
    key = signer.public
    good = _hex(v, "blind_sig")
    with pytest.raises(ParameterError, match="does not verify"):
        rsabssa.finalize(key, _hex(v, "prepared_msg"), good[:-1] + bytes([good[-1] ^ 1]), int(v["inv"], 16))
    with pytest.raises(ParameterError, match="modulus length"):
        rsabssa.blind_sign(signer, b"\x01" * 10)
    with pytest.raises(ParameterError, match="out of range"):
        rsabssa.blind_sign(signer, b"\xff" * key.byte_length)
    with pytest.raises(ParameterError, match="prefix"):
        rsabssa.prepare(b"x", prefix=b"short")
    with pytest.raises(ParameterError, match="bytes"):
        rsabssa.prepare("text")  # type: ignore[arg-type]
