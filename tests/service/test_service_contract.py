"""The collector's error contract under fire (issue 13): the OpenAPI schema states every validation bound, values
just outside a bound get a 4xx JSON error, and an unexpected error is a 500 with only a correlation id.

The schemathesis run against the schema is in tests/service/test_schemathesis.py; read timeouts and the shutdown
(WAL checkpoint, SIGTERM) over a real server in tests/service/test_server.py.
"""

from __future__ import annotations

import logging
import math
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from sufficientdp.collection import campaign as core  # noqa: E402
from sufficientdp.service.app import (  # noqa: E402
    MAX_CREDENTIAL_LENGTH,
    MAX_HEX_DIGITS,
    MAX_REPORTS_PER_REQUEST,
    create_app,
)

ADMIN = "admin-" + "0" * 20
AUTH = {"authorization": f"Bearer {ADMIN}"}
BASE: dict[str, Any] = {"name": "survey", "bits": 4, "epsilon": 1.0, "crowd_size": 300, "q": 0.3,
                        "rate_limit": "none"}
REQUEST_MODELS = ("CampaignIn", "TokensIn", "TokenIn", "ReportsIn")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    application = create_app(str(tmp_path_factory.mktemp("contract") / "collector.db"), admin_token=ADMIN)
    yield application
    application.state.jobs.close()
    application.state.storage.close()


@pytest.fixture(scope="module")
def client(app: Any) -> TestClient:
    return TestClient(app, headers=AUTH)


@pytest.fixture(scope="module")
def schema(client: TestClient) -> dict[str, Any]:
    r = client.get("/openapi.json")
    assert r.status_code == 200
    return r.json()


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    return _resolve(schema, schema["components"]["schemas"][ref.rsplit("/", 1)[1]])


def _leaves(schema: dict[str, Any], node: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (path, sub-schema) of a request model, through anyOf, arrays and nested objects."""
    node = _resolve(schema, node)
    yield path, node
    for alt in node.get("anyOf", []):
        yield from _leaves(schema, alt, path)
    if "items" in node:
        yield from _leaves(schema, node["items"], path + "[]")
    for name, sub in node.get("properties", {}).items():
        yield from _leaves(schema, sub, f"{path}.{name}")


def test_every_number_string_and_list_of_a_request_has_its_bounds_in_the_schema(schema: dict[str, Any]) -> None:
    checked = 0
    for model in REQUEST_MODELS:
        for path, node in _leaves(schema, schema["components"]["schemas"][model], model):
            kind = node.get("type")
            if kind in ("integer", "number"):
                assert "minimum" in node or "exclusiveMinimum" in node, path
                assert "maximum" in node or "exclusiveMaximum" in node, path
            elif kind == "string" and "enum" not in node and "const" not in node:
                assert "maxLength" in node, path
            elif kind == "array":
                assert "maxItems" in node, path
            else:
                continue
            checked += 1
    assert checked >= 17


def _field(schema: dict[str, Any], model: str, name: str) -> dict[str, Any]:
    node = schema["components"]["schemas"][model]["properties"][name]
    alts = [a for a in node.get("anyOf", [node]) if a.get("type") != "null"]
    assert len(alts) == 1
    return alts[0]


def test_campaign_bounds_in_the_schema_are_the_enforced_limits(schema: dict[str, Any]) -> None:
    # The limits of sufficientdp.collection.campaign (the core refuses the same values again).
    expected = {
        "bits": {"minimum": 1, "maximum": core.MAX_BITS},
        "epsilon": {"exclusiveMinimum": 0, "maximum": core.MAX_EPSILON},
        "eta": {"exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "crowd_size": {"minimum": 2, "maximum": core.MAX_CROWD_SIZE},
        "reports_per_person": {"minimum": 1, "maximum": core.MAX_REPORTS_PER_PERSON},
        "q": {"exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
        "precision": {"minimum": 2, "maximum": core.MAX_PRECISION},
        "name": {"minLength": 1, "maxLength": core.MAX_NAME_LENGTH},
    }
    for name, bounds in expected.items():
        node = _field(schema, "CampaignIn", name)
        assert {k: node.get(k) for k in bounds} == bounds, name
    assert (core.MAX_BITS, core.MAX_CROWD_SIZE, core.MAX_REPORTS_PER_PERSON, core.MAX_EPSILON) == (
        286, 10**9, 100, 50.0)  # docs/collector_api_contract.md states these numbers
    tokens = schema["components"]["schemas"]["TokensIn"]["properties"]
    assert (tokens["credential"]["minLength"], tokens["credential"]["maxLength"]) == (1, MAX_CREDENTIAL_LENGTH)
    assert (tokens["blinded"]["minItems"], tokens["blinded"]["maxItems"]) == (1, core.MAX_REPORTS_PER_PERSON)
    assert tokens["blinded"]["items"]["maxLength"] == MAX_HEX_DIGITS
    reports = schema["components"]["schemas"]["ReportsIn"]["properties"]
    assert (reports["reports"]["minItems"], reports["reports"]["maxItems"]) == (1, MAX_REPORTS_PER_REQUEST)
    row = reports["reports"]["items"]
    assert (row["minItems"], row["maxItems"]) == (1, core.MAX_BITS)
    assert (row["items"]["minimum"], row["items"]["maximum"]) == (0, 1)
    token = schema["components"]["schemas"]["TokenIn"]["properties"]
    assert token["nonce"]["maxLength"] == 64 and token["signature"]["maxLength"] == MAX_HEX_DIGITS


def _just_outside(node: dict[str, Any]) -> list[Any]:
    """Values just outside each bound of a numeric schema (the next integer, the next float)."""
    out: list[Any] = []
    integer = node["type"] == "integer"
    if "minimum" in node:
        out.append(node["minimum"] - 1 if integer else math.nextafter(node["minimum"], -math.inf))
    if "exclusiveMinimum" in node:
        out.append(node["exclusiveMinimum"])
    if "maximum" in node:
        out.append(node["maximum"] + 1 if integer else math.nextafter(node["maximum"], math.inf))
    if "exclusiveMaximum" in node:
        out.append(node["exclusiveMaximum"])
    return out


def test_campaign_values_just_outside_a_stated_bound_get_a_422(client: TestClient, schema: dict[str, Any]) -> None:
    tried = 0
    for name in ("bits", "epsilon", "eta", "crowd_size", "reports_per_person", "q", "precision"):
        for value in _just_outside(_field(schema, "CampaignIn", name)):
            r = client.post("/v1/campaigns", json={**BASE, name: value})
            assert r.status_code == 422, (name, value, r.text)
            err = r.json()["error"]
            assert (err["code"], err["parameter"]) == ("invalid_parameter", name)
            assert err["message"].startswith(f"{name} must be") and repr(value) in err["message"]
            tried += 1
    for value in ("", "x" * (core.MAX_NAME_LENGTH + 1)):
        r = client.post("/v1/campaigns", json={**BASE, "name": value})
        assert (r.status_code, r.json()["error"]["parameter"]) == (422, "name")
        tried += 1
    assert tried == 16


def test_participant_values_just_outside_a_stated_bound_get_a_4xx(client: TestClient) -> None:
    r = client.post("/v1/campaigns", json={**BASE, "rate_limit": "tokens", "reports_per_person": 2})
    assert r.status_code == 202
    cid = r.json()["id"]
    cases: list[tuple[str, dict[str, Any], int, str, str]] = [
        ("tokens", {"credential": "c" * (MAX_CREDENTIAL_LENGTH + 1), "blinded": ["ab"]}, 422, "invalid_parameter",
         "credential"),
        ("tokens", {"credential": "c", "blinded": ["ab"] * (core.MAX_REPORTS_PER_PERSON + 1)}, 422,
         "invalid_parameter", "blinded"),
        ("tokens", {"credential": "c", "blinded": ["a" * (MAX_HEX_DIGITS + 1)]}, 422, "invalid_parameter",
         "blinded[0]"),
        ("reports", {"reports": [[0, 1, 0, -1]]}, 400, "invalid_report", "reports[0][3]"),
        ("reports", {"reports": [[0, 1, 0, 2]]}, 400, "invalid_report", "reports[0][3]"),
        ("reports", {"reports": [[0, 1, 0, 2**64]]}, 400, "invalid_report", "reports[0][3]"),
        ("reports", {"reports": [[0] * (core.MAX_BITS + 1)]}, 400, "invalid_report", "reports[0]"),
        ("reports", {"reports": []}, 400, "invalid_report", "reports"),
        ("reports", {"reports": [[0, 1, 0, 1]] * (MAX_REPORTS_PER_REQUEST + 1)}, 413, "request_too_large",
         "reports"),
        ("reports", {"reports": [[0, 1, 0, 1]], "nonces": ["a" * 65]}, 400, "invalid_report", "nonces[0]"),
        ("reports", {"reports": [[0, 1, 0, 1]], "tokens": [{"nonce": "a" * 64, "signature": "a" * 4097}]}, 403,
         "invalid_token", "tokens[0].signature"),
    ]
    for path, body, status, code, parameter in cases:
        r = client.post(f"/v1/campaigns/{cid}/{path}", json=body)
        assert r.status_code == status and r.headers["content-type"] == "application/json", (path, r.text[:200])
        assert (r.json()["error"]["code"], r.json()["error"]["parameter"]) == (code, parameter)


# ------------------------------------------------------------------------------------------- internal errors
def test_an_internal_error_is_a_500_with_only_a_correlation_id(app: Any, client: TestClient,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    cid = client.post("/v1/campaigns", json=BASE).json()["id"]
    secret = "credential-4242-and-report-bits"

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"boom with request data {secret} {args}")

    monkeypatch.setattr(app.state.storage, "counts", broken)
    with caplog.at_level(logging.DEBUG):
        r = client.get(f"/v1/campaigns/{cid}")
    assert r.status_code == 500 and r.headers["content-type"] == "application/json"
    err = r.json()["error"]
    assert set(r.json()) == {"error"} and (err["code"], err["parameter"]) == ("internal_error", None)
    correlation = r.headers["x-correlation-id"]
    assert re.fullmatch(r"[0-9a-f]{16}", correlation)
    assert correlation in err["message"] and secret not in r.text and cid not in r.text
    assert "boom" not in r.text and "RuntimeError" not in r.text
    lines = [rec for rec in caplog.records if correlation in rec.getMessage()]
    assert len(lines) == 1 and "RuntimeError" in lines[0].getMessage()
    for rec in caplog.records:  # no values and no traceback anywhere in the server's log
        if rec.name.startswith("httpx"):  # the test's own HTTP client
            continue
        text = rec.getMessage()
        assert secret not in text and cid not in text and "boom" not in text
        assert rec.exc_info is None and rec.exc_text is None
    # The next call gets another correlation id; the server keeps working once the fault is gone.
    r2 = client.get(f"/v1/campaigns/{cid}")
    assert r2.status_code == 500 and r2.headers["x-correlation-id"] != correlation
    monkeypatch.undo()
    assert client.get(f"/v1/campaigns/{cid}").status_code == 200


def test_an_internal_error_in_a_post_is_a_500_too(app: Any, client: TestClient,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    cid = "0" * 32

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(app.state.storage, "get_campaign", broken)
    r = client.post(f"/v1/campaigns/{cid}/reports", json={"reports": [[0, 1, 0, 1]]})
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal_error"
    assert "x-correlation-id" in r.headers
