"""Per-campaign token schemes over real sockets on 127.0.0.1 (issue 13): RFC 9474 RSABSSA for new campaigns, RSA-FDH
for campaigns of a migrated database.

A version-3 SQLite database is built here with the version-3 DDL (copied below, as the code of that version wrote
it) and the campaign objects that code stored (no ``token_scheme``), holding a token campaign with an issuance, a
spent token and a pending report, plus a token issued before the upgrade and not yet spent. The collector then
opens it (the migration runs) and is served by uvicorn on the loopback interface; the client
:class:`~sufficientdp.client.reporter.Reporter` and raw ``httpx`` requests talk to it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("uvicorn", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")
httpx = pytest.importorskip("httpx", reason="the Reporter needs httpx")

from cryptography.exceptions import InvalidSignature  # noqa: E402
from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import padding, rsa  # noqa: E402
from tests.service.loopback import LoopbackServer  # noqa: E402

from sufficientdp._errors import ParameterError  # noqa: E402
from sufficientdp.client.reporter import CampaignInfo, Reporter  # noqa: E402
from sufficientdp.collection import tokens as fdh  # noqa: E402
from sufficientdp.collection.tokens import TokenKey, TokenSigner  # noqa: E402
from sufficientdp.service.app import create_app  # noqa: E402
from sufficientdp.service.storage import blinded_digest, pack_reports  # noqa: E402

ADMIN = "admin-" + "0" * 20
AUTH = {"authorization": f"Bearer {ADMIN}"}
RSABSSA = "rsabssa-sha384-pss-randomized"
LEGACY = "rsa-fdh-sha256"
TOKENS: dict[str, Any] = {"name": "tokens", "bits": 4, "epsilon": 1.0, "crowd_size": 5, "q": 0.45, "eta": 0.5,
                          "rate_limit": "tokens", "reports_per_person": 2}

#: The DDL of schema version 3 (sufficientdp.service.storage before token schemes), SQLite flavour.
V3_DDL = (
    "CREATE TABLE campaigns (id TEXT PRIMARY KEY, spec TEXT NOT NULL, signer_pem BLOB) WITHOUT ROWID",
    "CREATE TABLE reports (id BLOB PRIMARY KEY, campaign_id TEXT NOT NULL, release_id TEXT, "
    "report BLOB NOT NULL) WITHOUT ROWID",
    "CREATE INDEX reports_by_release ON reports (campaign_id, release_id)",
    "CREATE TABLE spent (campaign_id TEXT NOT NULL, nonce BLOB NOT NULL, PRIMARY KEY (campaign_id, nonce)) "
    "WITHOUT ROWID",
    "CREATE TABLE issued (campaign_id TEXT NOT NULL, credential_mac BLOB NOT NULL, blinded_digest BLOB, "
    "PRIMARY KEY (campaign_id, credential_mac)) WITHOUT ROWID",
    "CREATE TABLE releases (id TEXT PRIMARY KEY, campaign_id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "day TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (campaign_id, seq)) WITHOUT ROWID",
    "CREATE TABLE settings (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID",
    "CREATE TABLE jobs (campaign_id TEXT PRIMARY KEY, request TEXT NOT NULL, attempts INTEGER NOT NULL) "
    "WITHOUT ROWID",
)


def _legacy_token(signer: TokenSigner) -> dict[str, str]:
    """A token issued by a version-3 collector: RSA-FDH, blinded by the client and signed by the campaign's key."""
    key = signer.public
    nonce = fdh.new_nonce()
    blinded, unblinder = fdh.blind(key, nonce)
    signature = fdh.unblind(key, signer.sign_blinded(blinded), unblinder)
    assert fdh.verify(key, nonce, signature)
    return {"nonce": nonce.hex(), "signature": format(signature, "x")}


def _dump(db: str) -> dict[str, set[tuple[Any, ...]]]:
    con = sqlite3.connect(db)
    try:
        return {t: set(con.execute(f"SELECT * FROM {t}").fetchall())
                for t in ("campaigns", "reports", "spent", "issued", "releases", "jobs")}
    finally:
        con.close()


@pytest.fixture(scope="module")
def old_db(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A version-3 database: a legacy token campaign (one issuance, one spent token, one pending report), a campaign
    without tokens, and a legacy token issued before the upgrade that was never spent."""
    db = str(tmp_path_factory.mktemp("v3") / "collector.db")
    signer = TokenSigner.generate(2048)
    cid, plain_id = secrets.token_hex(16), secrets.token_hex(16)
    common = {"status": "active", "error": None, "bits": 4, "epsilon": 1.0, "eta": 0.5, "crowd_size": 5,
              "q": 0.4375, "q_numerator": 7, "precision": 4, "eta_at_q": 0.1, "calibrated": False,
              "guarantee": "g", "notes": [], "family": None, "memo_q": None, "memo_q_numerator": None,
              "q_release": 0.4375, "lifetime": None}
    spec = {"id": cid, "name": "old tokens", **common, "reports_per_person": 2, "rate_limit": "tokens",
            "token_key": signer.public.to_dict()}
    plain = {"id": plain_id, "name": "old plain", **common, "reports_per_person": 1, "rate_limit": "none",
             "token_key": None}
    hmac_key = secrets.token_bytes(32)
    spent = _legacy_token(signer)
    unspent = _legacy_token(signer)
    con = sqlite3.connect(db)
    with con:
        for stmt in V3_DDL:
            con.execute(stmt)
        con.executemany("INSERT INTO settings VALUES (?, ?)", [("schema_version", b"3"),
                                                               ("credential_hmac_key", hmac_key)])
        con.execute("INSERT INTO campaigns VALUES (?, ?, ?)", (cid, json.dumps(spec), signer.to_pem()))
        con.execute("INSERT INTO campaigns VALUES (?, ?, ?)", (plain_id, json.dumps(plain), None))
        mac = hmac.new(hmac_key, cid.encode() + b"\x00" + b"old-user", hashlib.sha256).digest()
        con.execute("INSERT INTO issued VALUES (?, ?, ?)", (cid, mac, blinded_digest([5, 7], 256)))
        con.execute("INSERT INTO spent VALUES (?, ?)", (cid, bytes.fromhex(spent["nonce"])))
        con.execute("INSERT INTO reports VALUES (?, ?, NULL, ?)",
                    (secrets.token_bytes(16), cid, pack_reports(np.array([[1, 0, 1, 1]], dtype=np.uint8))[0]))
    con.close()
    return {"db": db, "cid": cid, "plain": plain_id, "spec": spec, "plain_spec": plain, "key": signer.public,
            "spent": spent, "unspent": unspent, "before": _dump(db)}


@pytest.fixture(scope="module")
def served(old_db: dict[str, Any]) -> Iterator[str]:
    app = create_app(old_db["db"], admin_token=ADMIN)  # opens (and migrates) the version-3 database
    try:
        with LoopbackServer(app) as server:
            yield server.url
    finally:
        app.state.jobs.close()
        app.state.storage.close()


def _active(url: str, body: dict[str, Any]) -> dict[str, Any]:
    r = httpx.post(f"{url}/v1/campaigns", json=body, headers=AUTH)
    assert r.status_code == 202, r.text
    cid = r.json()["id"]
    deadline = time.monotonic() + 120
    while (c := httpx.get(f"{url}/v1/campaigns/{cid}").json())["status"] == "calibrating":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert c["status"] == "active", c
    return dict(c)


def _pending(url: str, cid: str) -> int:
    return int(httpx.get(f"{url}/v1/campaigns/{cid}").json()["pending_reports"])


def _error(r: Any, status: int, code: str, parameter: str | None) -> str:
    assert r.status_code == status and r.headers["content-type"] == "application/json", r.text
    err = r.json()["error"]
    assert (err["code"], err["parameter"]) == (code, parameter), err
    return str(err["message"])


def _report(url: str, cid: str, key: TokenKey, credential: str, value: list[int]) -> tuple[Any, list[dict]]:
    """One person through the Reporter; the receipt and the report bodies it sent (kept for the replay tests)."""
    reporter = Reporter(url, cid, credential=credential, token_key=key, backoff=0.0,
                        rng=np.random.default_rng(7))
    try:
        receipt = reporter.report(value)
        bodies = list(reporter._pending or [])
    finally:
        reporter.close()
    return receipt, bodies


# ------------------------------------------------------------------------------------------------ migration
def test_the_migration_marks_old_token_campaigns_rsa_fdh_and_loses_nothing(served: str,
                                                                           old_db: dict[str, Any]) -> None:
    db, before = old_db["db"], old_db["before"]
    after = _dump(db)
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT value FROM settings WHERE key = 'schema_version'").fetchone()[0] == b"4"
    finally:
        con.close()
    # Reports, spent nonces, issuances, releases and jobs as they were (this runs before any request that writes).
    for table in ("reports", "spent", "issued", "releases", "jobs"):
        assert after[table] == before[table], table
    rows = {r[0]: (json.loads(r[1]), r[2]) for r in after["campaigns"]}
    old_rows = {r[0]: r[2] for r in before["campaigns"]}
    assert rows[old_db["cid"]] == ({**old_db["spec"], "token_scheme": LEGACY}, old_rows[old_db["cid"]])
    assert rows[old_db["plain"]] == (old_db["plain_spec"], None)  # a campaign without tokens is not rewritten
    served_plain = httpx.get(f"{served}/v1/campaigns/{old_db['plain']}").json()
    assert served_plain["token_scheme"] is None
    c = httpx.get(f"{served}/v1/campaigns/{old_db['cid']}").json()
    assert c["token_scheme"] == LEGACY and c["token_key"] == old_db["spec"]["token_key"]
    assert c["pending_reports"] == 1


def test_legacy_tokens_keep_verifying_after_the_migration(served: str, old_db: dict[str, Any]) -> None:
    cid = old_db["cid"]
    url = f"{served}/v1/campaigns/{cid}/reports"
    before = _pending(served, cid)
    # A token issued by the version-3 collector and spent there is still spent (a duplicate, nothing stored).
    r = httpx.post(url, json={"reports": [[0, 0, 0, 1]], "tokens": [old_db["spent"]]})
    assert r.json() == {"accepted": 0, "duplicates": 1}
    # One issued there and not yet spent verifies now, once.
    body = {"reports": [[0, 1, 0, 1]], "tokens": [old_db["unspent"]]}
    assert httpx.post(url, json=body).json() == {"accepted": 1, "duplicates": 0}
    assert httpx.post(url, json=body).json() == {"accepted": 0, "duplicates": 1}
    # RSA-FDH tokens carry no prefix: one given is refused, naming the field.
    message = _error(httpx.post(url, json={"reports": [[0, 1, 0, 1]], "tokens": [
        {**old_db["unspent"], "prefix": secrets.token_hex(32)}]}), 400, "invalid_report", "tokens[0].prefix")
    assert LEGACY in message
    assert _pending(served, cid) == before + 1


def test_the_reporter_uses_rsa_fdh_for_a_migrated_campaign(served: str, old_db: dict[str, Any]) -> None:
    cid = old_db["cid"]
    before = _pending(served, cid)
    receipt, bodies = _report(served, cid, old_db["key"], "new-user", [1, 0, 0, 1])
    assert (receipt.accepted, receipt.duplicates, receipt.tokens) == (2, 0, True)
    assert _pending(served, cid) == before + 2
    for body in bodies:  # RSA-FDH tokens on the wire: no prefix, and they verify as such
        (token,) = body["tokens"]
        assert set(token) == {"nonce", "signature"}
        assert fdh.verify(old_db["key"], bytes.fromhex(token["nonce"]), int(token["signature"], 16))
    # The credential that received tokens before the upgrade is still spent.
    r = httpx.post(f"{served}/v1/campaigns/{cid}/tokens", json={"credential": "old-user", "blinded": ["2"]})
    _error(r, 409, "token_already_issued", "credential")


# ------------------------------------------------------------------------------------------------ RSABSSA
def _pss_verifies(key: TokenKey, message: bytes, signature: bytes) -> bool:
    """RSASSA-PSS verification (SHA-384, MGF1-SHA-384, 48-byte salt) by ``cryptography`` alone."""
    public = rsa.RSAPublicNumbers(key.e, key.n).public_key()
    try:
        public.verify(signature, message, padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=48),
                      hashes.SHA384())
    except InvalidSignature:
        return False
    return True


def test_new_campaigns_use_rsabssa_end_to_end_and_a_token_is_spent_once(served: str) -> None:
    c = _active(served, TOKENS)
    assert c["token_scheme"] == RSABSSA
    cid, key = c["id"], TokenKey.from_dict(c["token_key"])
    receipt, bodies = _report(served, cid, key, "alice", [1, 1, 0, 0])
    assert (receipt.accepted, receipt.duplicates, receipt.tokens) == (2, 0, True)
    assert _pending(served, cid) == 2
    for body in bodies:
        (token,) = body["tokens"]
        assert set(token) == {"nonce", "prefix", "signature"} and len(token["prefix"]) == 64
        # An ordinary RSA-PSS signature of prefix || nonce under the campaign key (checked by cryptography)...
        message = bytes.fromhex(token["prefix"]) + bytes.fromhex(token["nonce"])
        signature = int(token["signature"], 16).to_bytes(key.byte_length, "big")
        assert _pss_verifies(key, message, signature)
        # ... which is not an RSA-FDH signature of the nonce.
        assert not fdh.verify(key, bytes.fromhex(token["nonce"]), int(token["signature"], 16))
    url = f"{served}/v1/campaigns/{cid}/reports"
    # Spending a token twice: the replay is a duplicate and stores nothing.
    for body in bodies:
        assert httpx.post(url, json=body).json() == {"accepted": 0, "duplicates": 1}
    # Nor can the nonce be spent again under another prefix (the signature covers prefix || nonce).
    token = bodies[0]["tokens"][0]
    _error(httpx.post(url, json={"reports": [[0, 0, 0, 0]], "tokens": [{**token, "prefix": secrets.token_hex(32)}]}),
           403, "invalid_token", "tokens[0]")
    assert _pending(served, cid) == 2
    # The credential got its k tokens once.
    r = httpx.post(f"{served}/v1/campaigns/{cid}/tokens", json={"credential": "alice", "blinded": ["2"]})
    _error(r, 409, "token_already_issued", "credential")


def test_wrong_scheme_or_malformed_prefix_is_a_4xx_naming_the_field(served: str, old_db: dict[str, Any]) -> None:
    c = _active(served, TOKENS)
    cid = c["id"]
    url = f"{served}/v1/campaigns/{cid}/reports"
    good = {"nonce": secrets.token_hex(32), "prefix": secrets.token_hex(32), "signature": "abc"}
    cases = [
        ({k: v for k, v in good.items() if k != "prefix"}, 400, "invalid_report"),  # an RSA-FDH-shaped token
        ({**good, "prefix": None}, 400, "invalid_report"),
        ({**good, "prefix": "ab"}, 400, "invalid_report"),  # too short
        ({**good, "prefix": "a" * 65}, 400, "invalid_report"),  # too long
        ({**good, "prefix": "zz" * 32}, 400, "invalid_report"),  # not hex
        ({**good, "prefix": 7}, 400, "invalid_report"),
        ({**good, "prefix": ["ab"]}, 400, "invalid_report"),
    ]
    for token, status, code in cases:
        r = httpx.post(url, json={"reports": [[0, 1, 0, 1]], "tokens": [token]})
        message = _error(r, status, code, "tokens[0].prefix")
        assert "prefix" in message and "64 hex" in message, message
    # A valid RSA-FDH token of the migrated campaign, presented to an RSABSSA campaign with a prefix: invalid.
    _error(httpx.post(url, json={"reports": [[0, 1, 0, 1]], "tokens": [
        {**old_db["unspent"], "prefix": secrets.token_hex(32)}]}), 403, "invalid_token", "tokens[0]")
    assert _pending(served, cid) == 0  # nothing was stored


def test_token_scheme_at_campaign_creation(served: str) -> None:
    legacy = _active(served, {**TOKENS, "token_scheme": LEGACY})  # for apps shipped before RSABSSA
    assert legacy["token_scheme"] == LEGACY
    receipt, bodies = _report(served, legacy["id"], TokenKey.from_dict(legacy["token_key"]), "bob", [0, 0, 1, 1])
    assert receipt.accepted == 2 and all("prefix" not in b["tokens"][0] for b in bodies)
    plain = _active(served, {**TOKENS, "rate_limit": "none"})
    assert plain["token_scheme"] is None and plain["token_key"] is None
    for body in ({**TOKENS, "rate_limit": "none", "token_scheme": RSABSSA}, {**TOKENS, "token_scheme": "rsa"},
                 {**TOKENS, "token_scheme": 1}):
        _error(httpx.post(f"{served}/v1/campaigns", json=body, headers=AUTH), 422, "invalid_parameter",
               "token_scheme")


def test_the_schema_states_the_prefix_and_the_schemes(served: str) -> None:
    schemas = httpx.get(f"{served}/openapi.json").json()["components"]["schemas"]
    (prefix,) = [a for a in schemas["TokenIn"]["properties"]["prefix"]["anyOf"] if a.get("type") == "string"]
    assert (prefix["minLength"], prefix["maxLength"], prefix["pattern"]) == (64, 64, "^[0-9a-fA-F]{64}$")
    (scheme,) = [a for a in schemas["CampaignIn"]["properties"]["token_scheme"]["anyOf"] if a.get("type") != "null"]
    assert sorted(scheme["enum"]) == sorted(fdh.TOKEN_SCHEMES)


# ------------------------------------------------------------------------------------------------ client
def test_campaign_info_reads_the_scheme() -> None:
    base = {"id": "a" * 32, "bits": 4, "q_numerator": 7, "precision": 4, "reports_per_person": 1,
            "rate_limit": "tokens", "token_key": {"n": "ca1", "e": 17}}
    assert CampaignInfo.from_dict(base).token_scheme == LEGACY  # a collector that predates RSABSSA
    assert CampaignInfo.from_dict({**base, "token_scheme": RSABSSA}).token_scheme == RSABSSA
    assert CampaignInfo.from_dict({**base, "rate_limit": "none", "token_key": None}).token_scheme is None
    with pytest.raises(ParameterError, match="campaign.token_scheme must be one of"):
        CampaignInfo.from_dict({**base, "token_scheme": "rsa-pss"})
