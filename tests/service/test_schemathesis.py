"""Schemathesis against the collector's own OpenAPI schema (issue 13): no input gets a 500, and every response
conforms to the schema (status code documented, JSON body matching its model, content type, headers).

In process (schemathesis's ASGI transport: no socket at all), on a fresh SQLite database, with the admin token so
that the administrative calls are exercised too. Each operation runs twice: once with the generated campaign id
(almost always ``unknown_campaign``) and once on real campaigns (one with rate-limiting tokens, one without), so
that the tokens, reports and releases bodies reach the code behind the 404. Positive (schema-valid) and negative
(schema-invalid) examples, bounded (``MAX_EXAMPLES`` per operation and mode) so the module takes about a minute
on one core; the draws are the same on every run (tests/conftest.py: hypothesis ``derandomize``).

Calibration jobs of generated campaigns are cut short (2 s time limit, one worker, a queue of one; 429 beyond),
so the fuzzing never runs minutes of CPU.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")
schemathesis = pytest.importorskip("schemathesis", reason="the fuzz test needs schemathesis (the 'test' extra)")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis.config import SchemathesisConfig  # noqa: E402
from schemathesis.generation import GenerationMode  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from sufficientdp.service.app import create_app  # noqa: E402

pytestmark = pytest.mark.slow

ADMIN = "admin-" + "0" * 20
AUTH = {"authorization": f"Bearer {ADMIN}"}
#: Examples per operation and test (hypothesis max_examples): 8 operations, 2 modes, 2 targets.
MAX_EXAMPLES = 100
#: Checks that do not apply: a schema-valid body can still be refused for reasons the schema cannot state (the
#: campaign is unknown, calibrating or has another L or k: 404/409/400/422 by design), and the
#: operations take no credentials that the schema declares (the admin token is a deployment secret).
#: Operations whose request has no part that a negative example could make schema-invalid (a path id of any
#: string, no body, no declared query).
NOTHING_TO_NEGATE = ("GET /v1/campaigns/{campaign_id}", "POST /v1/campaigns/{campaign_id}/cancel",
                     "POST /v1/campaigns/{campaign_id}/releases",
                     "GET /v1/campaigns/{campaign_id}/releases/{release_id}/report")
EXCLUDED = ("positive_data_acceptance", "ignored_auth", "missing_required_header", "max_response_time")


@pytest.fixture(scope="module")
def db_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("fuzz") / "collector.db")


@pytest.fixture(scope="module")
def campaigns(db_path: str) -> dict[str, str]:
    """Two active campaigns (L = 4, k = 2): ``tokens`` and ``none``, made by a collector with the default limits."""
    setup = create_app(db_path, admin_token=ADMIN)
    try:
        client = TestClient(setup, headers=AUTH)
        out = {}
        for rate_limit in ("tokens", "none"):
            r = client.post("/v1/campaigns", json={"name": f"fuzz-{rate_limit}", "bits": 4, "epsilon": 1.0,
                                                   "crowd_size": 5, "q": 0.45, "eta": 0.5,
                                                   "reports_per_person": 2, "rate_limit": rate_limit})
            assert r.status_code == 202, r.text
            out[rate_limit] = r.json()["id"]
        deadline = time.monotonic() + 300
        for cid in out.values():
            while (status := client.get(f"/v1/campaigns/{cid}").json()["status"]) == "calibrating":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert status == "active"
    finally:
        setup.state.jobs.close()
        setup.state.storage.close()
    return out


@pytest.fixture(scope="module")
def app(db_path: str, campaigns: dict[str, str]) -> Iterator[Any]:
    """The collector under test: generated campaigns' calibrations are cut short (2 s, one at a time)."""
    application = create_app(db_path, admin_token=ADMIN, calibration_workers=1, calibration_queue=1,
                             calibration_time_limit=2.0)
    yield application
    application.state.jobs.close()
    application.state.storage.close()


@pytest.fixture(scope="module")
def operations(app: Any) -> list[Any]:
    # A schema-violating request may also be refused with 413 request_too_large (over 10 000 reports, or a body
    # over max_body_bytes): a rejection, documented in the schema like the other 4xx.
    config = SchemathesisConfig.from_dict({"checks": {"negative_data_rejection": {"expected-statuses": [
        400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429, "5XX"]}}})
    api = schemathesis.openapi.from_asgi("/openapi.json", app, config=config)
    ops = [result.ok() for result in api.get_all_operations()]
    assert len(ops) == 8, [op.label for op in ops]  # 8th: GET .../releases/{release_id}/report (issue 12)
    return ops


_EXCLUDED = [getattr(schemathesis.checks, name) for name in EXCLUDED]
_SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                            HealthCheck.data_too_large])


@pytest.mark.parametrize("target", ["generated-id", "real-campaigns"])
@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda m: m.value)
def test_no_500_and_every_response_conforms_to_the_schema(operations: list[Any], campaigns: dict[str, str],
                                                           mode: Any, target: str) -> None:
    calls: dict[str, int] = {}
    statuses: dict[int, int] = {}
    for op in operations:
        fixed: dict[str, Any] | None = None
        if target == "real-campaigns":
            if not any(p.name == "campaign_id" for p in op.path_parameters):
                continue
            fixed = {"campaign_id": campaigns["tokens" if op.path.endswith(("/tokens", "/reports")) else "none"]}

        @_SETTINGS
        @given(case=op.as_strategy(generation_mode=mode, path_parameters=fixed))
        def run(case: Any) -> None:
            calls[op.label] = calls.get(op.label, 0) + 1
            response = case.call(headers=AUTH)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            case.validate_response(response, excluded_checks=_EXCLUDED)

        try:
            run()
        except Unsatisfiable:  # negative mode: nothing of this operation's request can break its schema
            assert mode == GenerationMode.NEGATIVE and op.label in NOTHING_TO_NEGATE, op.label
    print(f"schemathesis {mode.value} {target}: {sum(calls.values())} requests {calls}, statuses {statuses}")
    assert sum(calls.values()) >= 2 * len(calls)
