"""In-process tests of the collector HTTP API (docs/collector_api_contract.md) on SQLite.

tests/service/test_postgres.py runs the same tests against PostgreSQL by overriding the ``db_url`` fixture; tests
that only make sense for SQLite check ``storage.dialect``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import math
import re
import secrets
import threading
import time
import warnings
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from sufficientdp._errors import ParameterError  # noqa: E402
from sufficientdp.calibration import calibrate  # noqa: E402
from sufficientdp.collection import rsabssa  # noqa: E402
from sufficientdp.collection.tokens import SCHEME_RSABSSA, TokenKey, blind, new_nonce, unblind, verify  # noqa: E402
from sufficientdp.service.app import create_app  # noqa: E402
from sufficientdp.service.storage import SCHEMA_VERSION  # noqa: E402

BASE: dict[str, Any] = {"name": "survey", "bits": 4, "epsilon": 1.0, "crowd_size": 300, "q": 0.3,
                        "rate_limit": "none"}
N_MIN = 300
#: The deployment's admin token: administrative calls are closed without one (403 admin_disabled).
ADMIN = "admin-" + "0" * 20
AUTH = {"authorization": f"Bearer {ADMIN}"}


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("collector") / "collector.db")


@pytest.fixture(scope="module")
def app(db_url: str) -> Iterator[Any]:
    application = create_app(db_url, admin_token=ADMIN)
    yield application
    application.state.jobs.close()
    application.state.storage.close()


@pytest.fixture(scope="module")
def client(app: Any) -> TestClient:
    return TestClient(app, headers=AUTH)  # the deployment's client: it may create campaigns and releases


@pytest.fixture(scope="module")
def token_campaign(client: TestClient) -> dict[str, Any]:
    return new_campaign(client, rate_limit="tokens", reports_per_person=2, crowd_size=5, q=0.45, eta=0.5)


_COUNTERS = ("pending_reports", "released_reports", "releases")


def settled(client: TestClient, cid: str, *, timeout: float = 60.0) -> dict[str, Any]:
    """Poll ``GET /v1/campaigns/{cid}`` until the campaign leaves ``calibrating``; the object without counters."""
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(f"/v1/campaigns/{cid}")
        assert r.status_code == 200, r.text
        body = r.json()
        if body["status"] != "calibrating":
            return {k: v for k, v in body.items() if k not in _COUNTERS}
        assert time.monotonic() < deadline, f"campaign {cid} still calibrating after {timeout} s"
        time.sleep(0.02)


def create(client: TestClient, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """``POST /v1/campaigns``: 202 with the campaign object and its Location; then the settled campaign."""
    r = client.post("/v1/campaigns", json=body, **kwargs)
    assert r.status_code == 202, r.text
    created = r.json()
    assert r.headers["location"] == f"/v1/campaigns/{created['id']}"
    assert created["status"] in ("calibrating", "active", "failed")  # settled at once when the outcome is known
    return settled(client, created["id"])


def new_campaign(client: TestClient, **overrides: Any) -> dict[str, Any]:
    c = create(client, {**BASE, **overrides})
    assert c["status"] == "active" and c["error"] is None, c
    return c


_ANY: Any = object()


def assert_error(r: Any, status: int, code: str, parameter: Any = _ANY) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "parameter"}
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    if parameter is not _ANY:
        assert body["error"]["parameter"] == parameter, body
    return body["error"]


def pending(client: TestClient, cid: str) -> int:
    return int(client.get(f"/v1/campaigns/{cid}").json()["pending_reports"])


def hex_nonces(n: int) -> list[str]:
    return [secrets.token_hex(32) for _ in range(n)]


def draft_tokens(campaign: dict[str, Any], count: int) -> tuple[list[bytes], list[tuple[int, int]]]:
    """Fresh token messages in the campaign's scheme (the nonce for RSA-FDH, prefix || nonce for RSABSSA) and their
    (blinded, unblinder) pairs."""
    key = TokenKey.from_dict(campaign["token_key"])
    msgs, blinded = [], []
    for _ in range(count):
        nonce = new_nonce()
        if campaign["token_scheme"] == SCHEME_RSABSSA:
            msg = rsabssa.prepare(nonce)
            b, inv = rsabssa.blind(key, msg)
            blinded.append((int.from_bytes(b, "big"), inv))
        else:
            msg = nonce
            blinded.append(blind(key, nonce))
        msgs.append(msg)
    return msgs, blinded


def finish_tokens(campaign: dict[str, Any], msgs: list[bytes], blinded: list[tuple[int, int]],
                  signatures: list[str]) -> list[dict[str, str]]:
    """The wire tokens from the blind signatures (each checked: RSABSSA finalize verifies, RSA-FDH here)."""
    key = TokenKey.from_dict(campaign["token_key"])
    out = []
    for msg, (_, u), s in zip(msgs, blinded, signatures, strict=True):
        if campaign["token_scheme"] == SCHEME_RSABSSA:
            final = rsabssa.finalize(key, msg, int(s, 16).to_bytes(key.byte_length, "big"), u)
            prefix, nonce = msg[:rsabssa.PREFIX_BYTES], msg[rsabssa.PREFIX_BYTES:]
            out.append({"nonce": nonce.hex(), "prefix": prefix.hex(), "signature": final.hex()})
        else:
            signature = unblind(key, int(s, 16), u)
            assert verify(key, msg, signature)
            out.append({"nonce": msg.hex(), "signature": format(signature, "x")})
    return out


def get_tokens(client: TestClient, campaign: dict[str, Any], credential: str, count: int) -> list[dict[str, str]]:
    msgs, blinded = draft_tokens(campaign, count)
    r = client.post(f"/v1/campaigns/{campaign['id']}/tokens",
                    json={"credential": credential, "blinded": [format(b, "x") for b, _ in blinded]})
    assert r.status_code == 200, r.text
    return finish_tokens(campaign, msgs, blinded, r.json()["signatures"])


# ---------------------------------------------------------------------------------------------------- campaigns
def test_openapi_description_lists_every_endpoint(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert {"/v1/campaigns", "/v1/campaigns/{campaign_id}", "/v1/campaigns/{campaign_id}/tokens",
            "/v1/campaigns/{campaign_id}/reports", "/v1/campaigns/{campaign_id}/releases",
            "/v1/campaigns/{campaign_id}/estimates", "/v1/campaigns/{campaign_id}/cancel"} <= set(spec["paths"])
    schemas = set(spec["components"]["schemas"])
    assert {"CampaignIn", "CampaignOut", "ReportsIn", "ReleaseOut", "ErrorOut"} <= schemas


def test_create_campaign_with_given_q(client: TestClient) -> None:
    r = client.post("/v1/campaigns", json=BASE)
    assert r.status_code == 202 and r.json()["status"] in ("calibrating", "active")
    c = settled(client, r.json()["id"])
    assert re.fullmatch(r"[0-9a-f]{32}", c["id"])
    assert {k: c[k] for k in ("name", "bits", "epsilon", "eta", "crowd_size", "reports_per_person", "precision",
                              "rate_limit")} == {**{k: BASE[k] for k in ("name", "bits", "epsilon", "crowd_size",
                                                                         "rate_limit")},
                                                 "eta": 0.001, "reports_per_person": 1, "precision": 32}
    assert c["q_numerator"] == math.ceil(Fraction(0.3) * 2**32) and c["q"] == c["q_numerator"] / 2**32
    assert 0.0 <= c["eta_at_q"] <= 0.001 and c["calibrated"] is False and c["token_key"] is None
    assert "every pair of neighbouring collections" in c["guarantee"]
    got = client.get(f"/v1/campaigns/{c['id']}").json()
    assert got == {**c, "pending_reports": 0, "released_reports": 0, "releases": 0}


def test_create_campaign_with_tokens_publishes_a_2048_bit_key(token_campaign: dict[str, Any]) -> None:
    key = TokenKey.from_dict(token_campaign["token_key"])
    assert key.n.bit_length() == 2048 and key.e == 65537
    assert token_campaign["token_scheme"] == "rsabssa-sha384-pss-randomized"  # the default of new campaigns


def test_create_campaign_calibrates_when_q_is_null(client: TestClient) -> None:
    # L = 1: the calibration (for every release of at least N_min people) is quick.
    c = new_campaign(client, bits=1, crowd_size=100, eta=0.01, q=None)
    expected = calibrate(bits=1, population=100, epsilon=1.0, eta=0.01, larger_crowds=True).q
    assert c["calibrated"] is True and c["q_numerator"] == math.ceil(Fraction(expected) * 2**32)
    assert c["eta_at_q"] <= 0.01


def test_given_q_above_target_makes_a_failed_campaign(client: TestClient) -> None:
    c = create(client, {**BASE, "q": 0.05})
    assert c["status"] == "failed" and c["q"] is None and c["eta_at_q"] is None and c["guarantee"] is None
    err = c["error"]
    assert (err["code"], err["parameter"]) == ("target_not_met", "q")
    assert "0.001" in err["message"] and "300" in err["message"]
    # A failed campaign accepts nothing.
    cid = c["id"]
    assert_error(client.post(f"/v1/campaigns/{cid}/reports", json={"reports": [[0, 1, 0, 1]]}), 409,
                 "campaign_not_active", None)
    assert_error(client.post(f"/v1/campaigns/{cid}/releases"), 409, "campaign_not_active", None)
    assert client.get(f"/v1/campaigns/{cid}/estimates").json() == {"campaign": cid, "releases": []}


def test_given_q_rounding_to_one_half_is_refused_at_once(client: TestClient) -> None:
    err = assert_error(client.post("/v1/campaigns", json={**BASE, "q": 0.49, "precision": 2}), 422,
                       "invalid_parameter", "q")
    assert "precision 2" in err["message"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", ""), ("name", 3), ("bits", 0), ("bits", 1025), ("bits", "4"), ("bits", 2.5), ("bits", True),
     ("epsilon", 0), ("epsilon", -1.0), ("epsilon", "e"), ("epsilon", 50.5), ("epsilon", 1e308), ("eta", 0),
     ("eta", 1.5), ("eta", 1.0), ("crowd_size", 1), ("bits", 10**30), ("crowd_size", 10**9 + 1),
     ("crowd_size", 10**10), ("reports_per_person", 0), ("reports_per_person", 101), ("q", 0.5), ("q", -0.2),
     ("q", "0.3"), ("precision", 1), ("precision", 65), ("rate_limit", "captcha"), ("rate_limit", None)],
)
def test_invalid_campaign_fields_are_named(client: TestClient, field: str, value: Any) -> None:
    err = assert_error(client.post("/v1/campaigns", json={**BASE, field: value}), 422, "invalid_parameter", field)
    assert err["message"].startswith(field) and ("must" in err["message"])


def test_missing_and_unknown_campaign_fields(client: TestClient) -> None:
    body = {k: v for k, v in BASE.items() if k != "bits"}
    err = assert_error(client.post("/v1/campaigns", json=body), 422, "invalid_parameter", "bits")
    assert "required" in err["message"]
    assert_error(client.post("/v1/campaigns", json={**BASE, "colour": 1}), 422, "invalid_parameter", "colour")


@pytest.mark.parametrize("body", [b"{", b"[1, 2]", b"7", b""])
def test_malformed_json_bodies(client: TestClient, body: bytes) -> None:
    r = client.post("/v1/campaigns", content=body, headers={"content-type": "application/json"})
    assert_error(r, 400, "invalid_json", None)


def test_unknown_campaign_everywhere(client: TestClient) -> None:
    for cid in ("0" * 32, "not-an-id"):
        assert_error(client.get(f"/v1/campaigns/{cid}"), 404, "unknown_campaign")
        assert_error(client.post(f"/v1/campaigns/{cid}/reports", json={"reports": [[0, 1, 0, 1]]}),
                     404, "unknown_campaign")
        assert_error(client.post(f"/v1/campaigns/{cid}/tokens", json={"credential": "a", "blinded": ["1"]}),
                     404, "unknown_campaign")
        assert_error(client.post(f"/v1/campaigns/{cid}/releases"), 404, "unknown_campaign")
        assert_error(client.get(f"/v1/campaigns/{cid}/estimates"), 404, "unknown_campaign")
    assert_error(client.get("/v2/nothing"), 404, "not_found")
    assert_error(client.delete("/v1/campaigns"), 405, "method_not_allowed")


# ------------------------------------------------------------------------------------------------------ reports
def test_submit_and_idempotent_retry(client: TestClient) -> None:
    c = new_campaign(client)
    reports = [[0, 1, 0, 1], [1, 1, 1, 1], [0, 0, 0, 0]]
    nonces = hex_nonces(3)
    url = f"/v1/campaigns/{c['id']}/reports"
    assert client.post(url, json={"reports": reports, "nonces": nonces}).json() == {"accepted": 3, "duplicates": 0}
    # The same request again (a retry whose answer was lost) stores nothing.
    assert client.post(url, json={"reports": reports, "nonces": nonces}).json() == {"accepted": 0, "duplicates": 3}
    # Partly new: only the new nonce is stored.
    r = client.post(url, json={"reports": reports[:2], "nonces": [nonces[0], secrets.token_hex(32)]})
    assert r.json() == {"accepted": 1, "duplicates": 1}
    # Reports without nonces are never deduplicated.
    assert client.post(url, json={"reports": reports}).json() == {"accepted": 3, "duplicates": 0}
    assert pending(client, c["id"]) == 7


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"reports": []}, "reports"),
        ({"reports": [[0, 1, 0]]}, "reports[0]"),
        ({"reports": [[0, 1, 0, 1], [0, 1, 0, 1, 1]]}, "reports[1]"),
        ({"reports": [[0, 1, 0, 2]]}, "reports[0][3]"),
        ({"reports": [[0, 1, 0, -1]]}, "reports[0][3]"),
        ({"reports": [[0, 1, 0, True]]}, "reports[0][3]"),
        ({"reports": [[0, 1, 0, 0.5]]}, "reports[0][3]"),
        ({"reports": [[0, 1, 0, "1"]]}, "reports[0][3]"),
        ({"reports": "0101"}, "reports"),
        ({"reports": [[0, 1, 0, 1]], "nonces": []}, "nonces"),
        ({"reports": [[0, 1, 0, 1]], "nonces": ["ab"]}, "nonces[0]"),
        ({"reports": [[0, 1, 0, 1]], "nonces": ["g" * 64]}, "nonces[0]"),
        ({"reports": [[0, 1, 0, 1]] * 2, "nonces": ["a" * 64] * 2}, "nonces"),
        ({"reports": [[0, 1, 0, 1]], "tokens": [{"nonce": "a" * 64, "signature": "1"}]}, "tokens"),
        ({"reports": [[0, 1, 0, 1]], "extra": 1}, "extra"),
        ({}, "reports"),
    ],
)
def test_invalid_reports_store_nothing(client: TestClient, body: dict[str, Any], parameter: str) -> None:
    c = new_campaign(client)
    url = f"/v1/campaigns/{c['id']}/reports"
    assert_error(client.post(url, json=body), 400, "invalid_report", parameter)
    assert pending(client, c["id"]) == 0


def test_one_bad_report_rejects_the_whole_request(client: TestClient) -> None:
    c = new_campaign(client)
    good = [[0, 1, 0, 1]] * 50
    r = client.post(f"/v1/campaigns/{c['id']}/reports", json={"reports": good + [[0, 1, 2, 1]]})
    assert_error(r, 400, "invalid_report", "reports[50][2]")
    assert pending(client, c["id"]) == 0


def test_size_limits(client: TestClient, db_url: str) -> None:
    c = new_campaign(client)
    url = f"/v1/campaigns/{c['id']}/reports"
    assert_error(client.post(url, json={"reports": [[0, 1, 0, 1]] * 10_001}), 413, "request_too_large", "reports")
    assert client.post(url, json={"reports": [[0, 1, 0, 1]] * 10_000}).json()["accepted"] == 10_000
    small = create_app(db_url, max_body_bytes=2048)
    try:
        sc = TestClient(small)
        body = b'{"reports": [' + b",".join([b"[0,1,0,1]"] * 300) + b"]}"
        assert_error(sc.post(url, content=body, headers={"content-type": "application/json"}), 413,
                     "request_too_large", None)

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is enforced while reading
            yield body[:1000]
            yield body[1000:]

        assert_error(sc.post(url, content=chunks(), headers={"content-type": "application/json"}), 413,
                     "request_too_large", None)
        assert sc.post(url, json={"reports": [[0, 1, 0, 1]] * 10}).json()["accepted"] == 10
    finally:
        small.state.jobs.close()
        small.state.storage.close()
    assert pending(client, c["id"]) == 10_010


def test_concurrent_submissions_of_one_nonce_store_it_once(client: TestClient) -> None:
    c = new_campaign(client)
    nonce = secrets.token_hex(32)
    results: list[dict[str, int]] = []

    def submit() -> None:
        r = client.post(f"/v1/campaigns/{c['id']}/reports", json={"reports": [[1, 1, 1, 1]], "nonces": [nonce]})
        results.append(r.json())

    threads = [threading.Thread(target=submit) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r["accepted"] for r in results) == 1 and sum(r["duplicates"] for r in results) == 5
    assert pending(client, c["id"]) == 1


# ----------------------------------------------------------------------------------------------------- releases
def test_releases_are_disjoint_and_estimates_are_exact_functions_of_the_reports(client: TestClient) -> None:
    c = new_campaign(client)
    cid = c["id"]
    rng = np.random.default_rng(11)
    first = rng.integers(0, 2, size=(N_MIN - 1, 4))
    url = f"/v1/campaigns/{cid}/reports"
    assert client.post(url, json={"reports": first.tolist()}).json()["accepted"] == N_MIN - 1
    err = assert_error(client.post(f"/v1/campaigns/{cid}/releases"), 409, "crowd_too_small", None)
    assert f"{N_MIN - 1} are pending" in err["message"] and str(N_MIN) in err["message"]
    last = rng.integers(0, 2, size=(1, 4))
    client.post(url, json={"reports": last.tolist()})
    r = client.post(f"/v1/campaigns/{cid}/releases")
    assert r.status_code == 201, r.text
    rel1 = r.json()
    batch1 = np.vstack([first, last])
    q = c["q"]
    assert rel1["reports"] == N_MIN and rel1["level"] == 0.95
    assert rel1["created"] == dt.datetime.now(dt.UTC).date().isoformat()
    for j, e in enumerate(rel1["estimates"]):
        m = int(batch1[:, j].sum())
        assert e["bit"] == j and e["count"] == m
        assert math.isclose(e["estimate"], (m - q * N_MIN) / (1 - 2 * q), rel_tol=1e-12)
        assert math.isclose(e["std_error"], math.sqrt(N_MIN * q * (1 - q)) / (1 - 2 * q), rel_tol=1e-12)
    hist = np.bincount(batch1 @ (1 << np.arange(4)), minlength=16)
    assert rel1["histogram"]["counts"] == hist.tolist()
    # Nothing pending: the next release is refused with the numbers.
    err = assert_error(client.post(f"/v1/campaigns/{cid}/releases"), 409, "crowd_too_small", None)
    assert "0 are pending" in err["message"]
    # A second batch makes a second release that covers exactly the new reports.
    batch2 = rng.integers(0, 2, size=(N_MIN + 7, 4))
    client.post(url, json={"reports": batch2.tolist()})
    rel2 = client.post(f"/v1/campaigns/{cid}/releases").json()
    assert rel2["reports"] == N_MIN + 7
    assert [e["count"] for e in rel2["estimates"]] == batch2.sum(axis=0).tolist()
    status = client.get(f"/v1/campaigns/{cid}").json()
    assert (status["pending_reports"], status["released_reports"], status["releases"]) == (0, 2 * N_MIN + 7, 2)
    listing = client.get(f"/v1/campaigns/{cid}/estimates").json()
    assert listing["campaign"] == cid and [x["id"] for x in listing["releases"]] == [rel1["id"], rel2["id"]]
    assert listing["releases"][0] == rel1
    one = client.get(f"/v1/campaigns/{cid}/estimates", params={"release": rel2["id"]}).json()
    assert one == {"campaign": cid, "releases": [rel2]}


def test_estimates_query_errors(client: TestClient) -> None:
    c = new_campaign(client)
    url = f"/v1/campaigns/{c['id']}/estimates"
    assert client.get(url).json() == {"campaign": c["id"], "releases": []}
    assert_error(client.get(url, params={"release": "f" * 32}), 404, "unknown_release", "release")
    assert_error(client.get(url, params={"since": "2024-01-01"}), 409, "overlapping_release", "since")
    assert_error(client.get(url, params={"from": "a", "to": "b"}), 409, "overlapping_release")
    assert_error(client.get(url, params={"colour": "red"}), 422, "invalid_parameter", "colour")
    assert_error(client.get(url + "?release=a&release=b"), 422, "invalid_parameter", "release")


def test_concurrent_releases_take_each_report_once(client: TestClient) -> None:
    c = new_campaign(client)
    client.post(f"/v1/campaigns/{c['id']}/reports", json={"reports": [[1, 0, 0, 1]] * (2 * N_MIN)})
    out: list[Any] = []

    def release() -> None:
        out.append(client.post(f"/v1/campaigns/{c['id']}/releases"))

    threads = [threading.Thread(target=release) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = [r.json() for r in out if r.status_code == 201]
    assert len(ok) == 1 and ok[0]["reports"] == 2 * N_MIN
    assert all(r.json()["error"]["code"] == "crowd_too_small" for r in out if r.status_code != 201)


# ------------------------------------------------------------------------------------------------------- tokens
def test_token_issuance_and_use(client: TestClient, token_campaign: dict[str, Any]) -> None:
    cid = token_campaign["id"]
    tokens = get_tokens(client, token_campaign, "alice@example.org", 2)
    url = f"/v1/campaigns/{cid}/reports"
    before = pending(client, cid)
    body = {"reports": [[0, 1, 1, 0], [1, 1, 0, 0]], "tokens": tokens}
    assert client.post(url, json=body).json() == {"accepted": 2, "duplicates": 0}
    # A spent token is a duplicate, not a new report (safe retries, and no double use).
    assert client.post(url, json=body).json() == {"accepted": 0, "duplicates": 2}
    # nonces may repeat the token nonces; they must agree.
    fresh = get_tokens(client, token_campaign, "bob", 1)
    assert_error(client.post(url, json={"reports": [[0, 0, 0, 0]], "tokens": fresh,
                                        "nonces": [secrets.token_hex(32)]}), 400, "invalid_report", "nonces[0]")
    ok = {"reports": [[0, 0, 0, 0]], "tokens": fresh, "nonces": [fresh[0]["nonce"]]}
    assert client.post(url, json=ok).json() == {"accepted": 1, "duplicates": 0}
    assert pending(client, cid) == before + 3
    # One issuance per credential.
    key = TokenKey.from_dict(token_campaign["token_key"])
    again = {"credential": "alice@example.org", "blinded": [format(blind(key, new_nonce())[0], "x")]}
    assert_error(client.post(f"/v1/campaigns/{cid}/tokens", json=again), 409, "token_already_issued", "credential")


def test_credentials_are_stored_only_as_hmac(app: Any, client: TestClient, token_campaign: dict[str, Any]) -> None:
    credential = "carol-" + secrets.token_hex(8)
    get_tokens(client, token_campaign, credential, 1)
    storage = app.state.storage
    with storage._tx(write=False) as cur:
        rows = storage._x(cur, "SELECT credential_mac FROM issued WHERE campaign_id = ?",
                          (token_campaign["id"],)).fetchall()
        dump = []
        for table in ("campaigns", "reports", "spent", "issued", "releases", "settings"):
            dump += [repr(tuple(bytes(v) if isinstance(v, memoryview) else v for v in row))
                     for row in storage._x(cur, f"SELECT * FROM {table}").fetchall()]
    key = storage.setting("credential_hmac_key", lambda: b"unused")
    mac = hmac.new(key, token_campaign["id"].encode() + b"\x00" + credential.encode(), hashlib.sha256).digest()
    assert mac in {bytes(r[0]) for r in rows}
    assert not any(credential in line or credential.encode().hex() in line for line in dump)


def test_token_errors_store_nothing(client: TestClient, token_campaign: dict[str, Any]) -> None:
    cid = token_campaign["id"]
    url = f"/v1/campaigns/{cid}/reports"
    before = pending(client, cid)
    assert_error(client.post(url, json={"reports": [[0, 1, 1, 0]]}), 403, "invalid_token", "tokens")
    forged = {"nonce": secrets.token_hex(32), "prefix": secrets.token_hex(32), "signature": "abc123"}
    good = get_tokens(client, token_campaign, "dave", 1)[0]
    assert_error(client.post(url, json={"reports": [[0, 1, 1, 0]] * 2, "tokens": [good, forged]}), 403,
                 "invalid_token", "tokens[1]")
    # A signature for another nonce, or with another prefix, is invalid too.
    assert_error(client.post(url, json={"reports": [[0, 1, 1, 0]], "tokens": [
        {**good, "prefix": secrets.token_hex(32)}]}), 403, "invalid_token", "tokens[0]")
    swapped = {**good, "nonce": secrets.token_hex(32)}
    assert_error(client.post(url, json={"reports": [[0, 1, 1, 0]], "tokens": [swapped]}), 403, "invalid_token")
    assert_error(client.post(url, json={"reports": [[0, 1, 1, 0]], "tokens": [{**good, "signature": "xyz"}]}), 403,
                 "invalid_token", "tokens[0].signature")
    assert_error(client.post(url, json={"reports": [[0, 1, 1, 0]], "tokens": [{**good, "nonce": "12"}]}), 400,
                 "invalid_report", "tokens[0].nonce")
    assert_error(client.post(url, json={"reports": [[0, 1, 1, 0]], "tokens": []}), 400, "invalid_report", "tokens")
    assert pending(client, cid) == before
    # The unspent good token still works afterwards: nothing of the failed requests was stored.
    assert client.post(url, json={"reports": [[0, 1, 1, 0]], "tokens": [good]}).json()["accepted"] == 1


def test_tokens_of_another_campaign_are_refused(client: TestClient, token_campaign: dict[str, Any]) -> None:
    other = new_campaign(client, rate_limit="tokens", crowd_size=5, q=0.45, eta=0.5)
    tok = get_tokens(client, other, "erin", 1)
    assert_error(client.post(f"/v1/campaigns/{token_campaign['id']}/reports",
                             json={"reports": [[0, 1, 1, 0]], "tokens": tok}), 403, "invalid_token", "tokens[0]")


def test_invalid_token_requests(client: TestClient, token_campaign: dict[str, Any]) -> None:
    cid = token_campaign["id"]
    url = f"/v1/campaigns/{cid}/tokens"
    key = TokenKey.from_dict(token_campaign["token_key"])
    b = format(blind(key, new_nonce())[0], "x")
    cases = [
        ({"credential": "", "blinded": [b]}, "credential"),
        ({"credential": "x" * 5000, "blinded": [b]}, "credential"),
        ({"credential": 7, "blinded": [b]}, "credential"),
        ({"credential": "f1", "blinded": []}, "blinded"),
        ({"credential": "f2", "blinded": [b, b, b]}, "blinded"),
        ({"credential": "f3", "blinded": ["0"]}, "blinded[0]"),
        ({"credential": "f4", "blinded": [format(key.n, "x")]}, "blinded[0]"),
        ({"credential": "f5", "blinded": ["zz"]}, "blinded[0]"),
        ({"credential": "f6", "blinded": [12]}, "blinded[0]"),
        ({"blinded": [b]}, "credential"),
    ]
    for body, parameter in cases:
        assert_error(client.post(url, json=body), 422, "invalid_parameter", parameter)
    # Failed requests did not spend the credential.
    assert client.post(url, json={"credential": "f3", "blinded": [b]}).status_code == 200
    plain = new_campaign(client)
    assert_error(client.post(f"/v1/campaigns/{plain['id']}/tokens", json={"credential": "g", "blinded": [b]}),
                 422, "invalid_parameter", "rate_limit")


def token_request(campaign: dict[str, Any], count: int) -> tuple[list[bytes], list[tuple[int, int]], list[str]]:
    """Fresh token messages (:func:`draft_tokens`), their (blinded, unblinder) pairs and the wire form of the
    blinded list."""
    msgs, blinded = draft_tokens(campaign, count)
    return msgs, blinded, [format(b, "x") for b, _ in blinded]


def table_dump(storage: Any) -> dict[str, set[tuple[Any, ...]]]:
    """Every row of every table, as tuples of plain values."""
    out = {}
    with storage._tx(write=False) as cur:
        for table in ("campaigns", "reports", "spent", "issued", "releases", "settings"):
            out[table] = {tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
                          for row in storage._x(cur, f"SELECT * FROM {table}").fetchall()}
    return out


def credential_mac(storage: Any, campaign_id: str, credential: str) -> bytes:
    key = storage.setting("credential_hmac_key", lambda: b"unused")
    return hmac.new(key, campaign_id.encode() + b"\x00" + credential.encode(), hashlib.sha256).digest()


def test_identical_token_retry_gets_the_same_signatures(app: Any, client: TestClient,
                                                        token_campaign: dict[str, Any]) -> None:
    cid = token_campaign["id"]
    url = f"/v1/campaigns/{cid}/tokens"
    credential = "frank-" + secrets.token_hex(8)
    nonces, blinded, wire = token_request(token_campaign, 2)
    first = client.post(url, json={"credential": credential, "blinded": wire})
    assert first.status_code == 200, first.text
    before = table_dump(app.state.storage)
    # The answer was lost: the identical request is answered again, byte for byte, and stores nothing.
    again = client.post(url, json={"credential": credential, "blinded": wire})
    assert again.status_code == 200 and again.content == first.content
    # The same integers written differently (case, leading zeros) are the same list of values signed.
    assert client.post(url, json={"credential": credential, "blinded": ["00" + w.upper() for w in wire]}).content \
        == first.content
    assert table_dump(app.state.storage) == before
    tokens = finish_tokens(token_campaign, nonces, blinded, again.json()["signatures"])
    r = client.post(f"/v1/campaigns/{cid}/reports",
                    json={"reports": [[0, 1, 1, 0], [1, 0, 0, 1]], "tokens": tokens})
    assert r.json() == {"accepted": 2, "duplicates": 0}


def test_token_retry_with_another_list_is_refused(app: Any, client: TestClient,
                                                  token_campaign: dict[str, Any]) -> None:
    cid = token_campaign["id"]
    url = f"/v1/campaigns/{cid}/tokens"
    credential = "grace-" + secrets.token_hex(8)
    _, _, wire = token_request(token_campaign, 2)
    _, _, other = token_request(token_campaign, 2)
    assert client.post(url, json={"credential": credential, "blinded": wire}).status_code == 200
    before = table_dump(app.state.storage)
    for changed in (other, wire[::-1], wire[:1], [wire[0], other[1]], wire + wire[:1]):
        status = 422 if len(changed) > 2 else 409  # more than k values is invalid before anything else
        r = client.post(url, json={"credential": credential, "blinded": changed})
        assert_error(r, status, "token_already_issued" if status == 409 else "invalid_parameter")
    assert table_dump(app.state.storage) == before  # refused requests store nothing
    # The first list is still answered; another credential with the same list is a separate issuance.
    assert client.post(url, json={"credential": credential, "blinded": wire}).status_code == 200
    assert client.post(url, json={"credential": credential + "-2", "blinded": wire}).status_code == 200


def test_token_issuance_stores_only_the_credential_hmac_and_the_list_digest(
        app: Any, client: TestClient, token_campaign: dict[str, Any]) -> None:
    storage = app.state.storage
    cid = token_campaign["id"]
    key = TokenKey.from_dict(token_campaign["token_key"])
    credential = "heidi-" + secrets.token_hex(8)
    nonces, blinded, wire = token_request(token_campaign, 2)
    before = table_dump(storage)
    for _ in range(2):
        assert client.post(f"/v1/campaigns/{cid}/tokens", json={"credential": credential, "blinded": wire}) \
            .status_code == 200
    after = table_dump(storage)
    changed = {t for t in after if after[t] != before[t]}
    assert changed == {"issued"} and before["issued"] <= after["issued"]  # one new row, nothing else touched
    # The documented encoding (storage.blinded_digest): SHA-256(context || m as 4 bytes || each value as
    # len(n) big-endian bytes), recomputed here from the blinded integers.
    data = b"sufficientdp/tokens/blinded-list/v1\x00" + (2).to_bytes(4, "big") + b"".join(
        b.to_bytes(key.byte_length, "big") for b, _ in blinded)
    assert after["issued"] - before["issued"] == {
        (cid, credential_mac(storage, cid, credential), hashlib.sha256(data).digest())}
    with storage._tx(write=False) as cur:
        columns = [d[0] for d in storage._x(cur, "SELECT * FROM issued").description]
    assert columns == ["campaign_id", "credential_mac", "blinded_digest"]
    # Neither the credential nor any nonce or blinded value is stored anywhere.
    text = repr(after)
    for secret in [credential, credential.encode().hex()] + [n.hex() for n in nonces] + wire:
        assert secret not in text


def test_concurrent_identical_token_requests(client: TestClient, token_campaign: dict[str, Any]) -> None:
    url = f"/v1/campaigns/{token_campaign['id']}/tokens"
    credential = "ivan-" + secrets.token_hex(8)
    lists = [token_request(token_campaign, 1)[2] for _ in range(2)]
    out: list[Any] = []

    def post(wire: list[str]) -> None:
        out.append(client.post(url, json={"credential": credential, "blinded": wire}))

    threads = [threading.Thread(target=post, args=(lists[i % 2],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = [r for r in out if r.status_code == 200]
    # Exactly one list won; every request with it got the same answer, every other one a 409.
    assert len(ok) == 4 and len({r.content for r in ok}) == 1
    assert all(r.json()["error"]["code"] == "token_already_issued" for r in out if r.status_code != 200)


def test_schema_version_1_is_migrated(app: Any, client: TestClient, token_campaign: dict[str, Any]) -> None:
    storage = app.state.storage
    url = f"/v1/campaigns/{token_campaign['id']}/tokens"
    old = "judy-" + secrets.token_hex(8)
    _, _, wire = token_request(token_campaign, 1)
    assert client.post(url, json={"credential": old, "blinded": wire}).status_code == 200

    def version() -> bytes:
        with storage._tx(write=False) as cur:
            return bytes(storage._x(cur, "SELECT value FROM settings WHERE key = 'schema_version'").fetchone()[0])

    def set_version(v: bytes) -> None:
        with storage._tx() as cur:
            storage._x(cur, "UPDATE settings SET value = ? WHERE key = 'schema_version'", (v,))

    current = str(SCHEMA_VERSION).encode()
    assert version() == current
    try:
        with storage._tx() as cur:  # turn the database back into a version-1 one
            storage._x(cur, "ALTER TABLE issued DROP COLUMN blinded_digest")
            storage._x(cur, "UPDATE settings SET value = ? WHERE key = 'schema_version'", (b"1",))
        storage.init_schema()
        assert version() == current
        with storage._tx(write=False) as cur:
            assert [d[0] for d in storage._x(cur, "SELECT * FROM issued").description][-1] == "blinded_digest"
        # An issuance recorded before version 2 has no digest: it is never re-answered.
        assert_error(client.post(url, json={"credential": old, "blinded": wire}), 409, "token_already_issued")
        new = "kim-" + secrets.token_hex(8)
        first = client.post(url, json={"credential": new, "blinded": wire})
        assert first.status_code == 200
        assert client.post(url, json={"credential": new, "blinded": wire}).content == first.content
        storage.init_schema()  # idempotent
        assert version() == current
        set_version(str(SCHEMA_VERSION + 1).encode())
        with pytest.raises(RuntimeError, match=f"schema version {SCHEMA_VERSION + 1}"):
            storage.init_schema()
    finally:
        set_version(current)
        storage.init_schema()


def test_schema_version_3_token_campaigns_are_marked_rsa_fdh(app: Any, client: TestClient, db_url: str) -> None:
    """Migration 3 -> 4 on this back end (SQLite here, PostgreSQL in test_postgres.py): a token campaign stored
    without ``token_scheme`` (as version 3 stored them) is marked ``rsa-fdh-sha256``; no other row changes; a
    collector opened on the migrated database accepts its unspent RSA-FDH token once."""
    storage = app.state.storage
    legacy = "rsa-fdh-sha256"
    c = new_campaign(client, rate_limit="tokens", token_scheme=legacy, reports_per_person=2, crowd_size=5, q=0.45,
                     eta=0.5)
    cid = c["id"]
    tokens = get_tokens(client, c, "mig-" + secrets.token_hex(8), 2)
    url = f"/v1/campaigns/{cid}/reports"
    assert client.post(url, json={"reports": [[0, 1, 0, 1]], "tokens": tokens[:1]}).json() == \
        {"accepted": 1, "duplicates": 0}

    def stored() -> dict[str, Any]:
        with storage._tx(write=False) as cur:
            return dict(json.loads(storage._x(cur, "SELECT spec FROM campaigns WHERE id = ?", (cid,)).fetchone()[0]))

    def set_version(v: bytes) -> None:
        with storage._tx() as cur:
            storage._x(cur, "UPDATE settings SET value = ? WHERE key = 'schema_version'", (v,))

    spec = stored()
    assert spec.pop("token_scheme") == legacy
    with storage._tx() as cur:  # the campaign as version 3 stored it, in a version-3 database
        storage._x(cur, "UPDATE campaigns SET spec = ? WHERE id = ?", (json.dumps(spec), cid))
    set_version(b"3")
    try:
        before = table_dump(storage)
        storage.init_schema()
        after = table_dump(storage)
        assert {t for t in after if after[t] != before[t]} == {"campaigns", "settings"}
        assert after["settings"] - before["settings"] == {("schema_version", str(SCHEMA_VERSION).encode())}
        gone, new = before["campaigns"] - after["campaigns"], after["campaigns"] - before["campaigns"]
        assert [r[0] for r in gone] == [r[0] for r in new] == [cid] and list(new)[0][2] == list(gone)[0][2]
        assert stored() == {**spec, "token_scheme": legacy}
    finally:
        set_version(str(SCHEMA_VERSION).encode())
    fresh = create_app(db_url, admin_token=ADMIN)  # a collector that never saw the campaign before
    try:
        tc = TestClient(fresh)
        assert tc.get(f"/v1/campaigns/{cid}").json()["token_scheme"] == legacy
        body = {"reports": [[1, 0, 1, 0]], "tokens": tokens[1:]}
        assert tc.post(url, json=body).json() == {"accepted": 1, "duplicates": 0}
        assert tc.post(url, json=body).json() == {"accepted": 0, "duplicates": 1}
        assert tc.post(url, json={"reports": [[1, 0, 1, 0]], "tokens": tokens[:1]}).json() == \
            {"accepted": 0, "duplicates": 1}
    finally:
        fresh.state.jobs.close()
        fresh.state.storage.close()


def test_readonly_reader_and_numpy_tally_of_the_live_database(app: Any, client: TestClient, db_url: str) -> None:
    """open_storage_readonly (SQLite or PostgreSQL): released reports only, same snapshot, writes refused."""
    from sufficientdp.engines import tally_collector
    from sufficientdp.service.storage import open_storage_readonly

    storage = app.state.storage
    c = new_campaign(client, crowd_size=5, q=0.45, eta=0.5)
    cid = c["id"]
    rng = np.random.default_rng(5)
    released = rng.integers(0, 2, size=(23, 4))
    client.post(f"/v1/campaigns/{cid}/reports", json={"reports": released.tolist()})
    rel = client.post(f"/v1/campaigns/{cid}/releases").json()
    client.post(f"/v1/campaigns/{cid}/reports", json={"reports": [[1, 1, 1, 1]] * 3})  # pending
    before = table_dump(storage)
    with open_storage_readonly(db_url) as reader:
        assert reader.schema_version == SCHEMA_VERSION and reader.campaign_spec(cid) == c
        for release_id in (rel["id"], None):
            rows = [b for chunk in reader.released_reports(cid, release_id, chunk_rows=5) for b in chunk]
            bits = np.unpackbits(np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), 1),
                                 axis=1, bitorder="little")[:, :4]
            assert len(rows) == 23 and bits.sum(axis=0).tolist() == released.sum(axis=0).tolist()
        with pytest.raises(LookupError, match="unknown release"):
            reader.released_reports(cid, "f" * 32)
        # One snapshot: a release made meanwhile is not seen by this reader.
        client.post(f"/v1/campaigns/{cid}/reports", json={"reports": [[0, 1, 0, 1]] * 5})
        rel2 = client.post(f"/v1/campaigns/{cid}/releases")
        assert rel2.status_code == 201  # the reader does not block the collector's writes
        assert sum(len(ch) for ch in reader.released_reports(cid)) == 23
        with pytest.raises(Exception, match="(?i)read.?only"):  # the session itself refuses writes
            cur = reader._conn.cursor()
            cur.execute("DELETE FROM settings")
    after = table_dump(storage)
    assert after["settings"] == before["settings"]
    t = tally_collector(db_url, cid, engine="numpy")
    assert t.reports == 31 and t.bit_counts.tolist() == (released.sum(axis=0) + [3, 8, 3, 8]).tolist()
    assert t.bit_counts.tolist() == [a["count"] + b["count"] for a, b in
                                     zip(rel["estimates"], rel2.json()["estimates"], strict=True)]


def test_readonly_reader_never_migrates(app: Any) -> None:
    """Version 1 is read as it is (not migrated); a newer version is refused."""
    from sufficientdp.service.storage import open_storage_readonly

    storage = app.state.storage

    def set_version(v: bytes) -> None:
        with storage._tx() as cur:
            storage._x(cur, "UPDATE settings SET value = ? WHERE key = 'schema_version'", (v,))

    db = getattr(storage, "url", None) or storage.path
    try:
        set_version(b"1")
        with open_storage_readonly(db) as reader:
            assert reader.schema_version == 1
        newer = str(SCHEMA_VERSION + 1).encode()
        set_version(newer)
        with pytest.raises(RuntimeError, match=f"schema version {SCHEMA_VERSION + 1}"):
            open_storage_readonly(db)
        with storage._tx(write=False) as cur:
            assert bytes(storage._x(cur, "SELECT value FROM settings WHERE key = 'schema_version'")
                         .fetchone()[0]) == newer
    finally:
        set_version(str(SCHEMA_VERSION).encode())


# ------------------------------------------------------------------------------------------ storage and config
def test_sqlite_schema_reveals_no_order_nor_time(app: Any) -> None:
    storage = app.state.storage
    if storage.dialect != "sqlite":
        pytest.skip("SQLite-specific schema check")
    with storage._tx(write=False) as cur:
        for table in ("reports", "spent", "issued"):
            sql = storage._x(cur, "SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
            assert sql.rstrip().endswith("WITHOUT ROWID")
        cols = {r[1] for r in storage._x(cur, "PRAGMA table_info(reports)").fetchall()}
        assert cols == {"id", "campaign_id", "release_id", "report"}
        assert {r[1] for r in storage._x(cur, "PRAGMA table_info(spent)").fetchall()} == {"campaign_id", "nonce"}
        assert storage._x(cur, "PRAGMA journal_mode").fetchone()[0] == "wal"
        assert storage._x(cur, "PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_admin_token_guards_campaigns_cancellations_and_releases(db_url: str) -> None:
    secured = create_app(db_url, admin_token="s" * 20)
    try:
        sc = TestClient(secured)
        assert_error(sc.post("/v1/campaigns", json=BASE), 401, "unauthorized")
        assert_error(sc.post("/v1/campaigns", json=BASE, headers={"authorization": "Bearer " + "s" * 19}), 401,
                     "unauthorized")
        auth = {"authorization": "Bearer " + "s" * 20}
        c = create(sc, BASE, headers=auth)
        assert c["status"] == "active"
        assert_error(sc.post(f"/v1/campaigns/{c['id']}/releases"), 401, "unauthorized")
        assert_error(sc.post(f"/v1/campaigns/{c['id']}/cancel"), 401, "unauthorized")
        assert_error(sc.post(f"/v1/campaigns/{c['id']}/releases", headers=auth), 409, "crowd_too_small")
        assert_error(sc.post(f"/v1/campaigns/{c['id']}/cancel", headers=auth), 409, "campaign_not_calibrating")
        # The participants' calls need no admin token.
        assert sc.get(f"/v1/campaigns/{c['id']}").status_code == 200
        assert sc.post(f"/v1/campaigns/{c['id']}/reports", json={"reports": [[0, 1, 0, 1]]}).status_code == 200
    finally:
        secured.state.jobs.close()
        secured.state.storage.close()


def test_administrative_calls_are_closed_without_an_admin_token(db_url: str, client: TestClient) -> None:
    c = new_campaign(client)
    closed = create_app(db_url)  # no admin token: the default
    try:
        cc = TestClient(closed)
        for path in ("/v1/campaigns", f"/v1/campaigns/{c['id']}/releases", f"/v1/campaigns/{c['id']}/cancel"):
            for headers in ({}, {"authorization": "Bearer "}, AUTH):
                err = assert_error(cc.post(path, json=BASE, headers=headers), 403, "admin_disabled", None)
                assert "SUFFICIENTDP_ADMIN_TOKEN" in err["message"]
        assert cc.get(f"/v1/campaigns/{c['id']}").json()["status"] == "active"
        assert cc.post(f"/v1/campaigns/{c['id']}/reports", json={"reports": [[0, 1, 0, 1]]}).status_code == 200
        assert cc.get(f"/v1/campaigns/{c['id']}/estimates").status_code == 200
    finally:
        closed.state.jobs.close()
        closed.state.storage.close()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"max_body_bytes": 10}, "max_body_bytes"), ({"max_body_bytes": 2**31}, "max_body_bytes"),
     ({"token_key_bits": 1024}, "token_key_bits"), ({"token_key_bits": 16384}, "token_key_bits"),
     ({"credential_key": b"short"}, "credential_key"), ({"admin_token": "short"}, "admin_token"),
     ({"calibration_workers": 0}, "calibration_workers"), ({"calibration_workers": 9}, "calibration_workers"),
     ({"calibration_queue": -1}, "calibration_queue"), ({"calibration_queue": 1001}, "calibration_queue"),
     ({"calibration_time_limit": 0}, "calibration_time_limit"),
     ({"calibration_time_limit": 86401}, "calibration_time_limit"),
     ({"calibration_memory_limit": 1 << 20}, "calibration_memory_limit"),
     ({"calibration_memory_limit": 1 << 41}, "calibration_memory_limit")],
)
def test_create_app_invalid_arguments(db_url: str, kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        create_app(db_url, **kwargs)


@pytest.mark.parametrize("url", ["mysql://localhost/x", "sqlite:///", "sqlite:///:memory:", ""])
def test_unsupported_database_urls(url: str) -> None:
    with pytest.raises(ParameterError, match="database must"):
        create_app(url)
