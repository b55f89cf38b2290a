"""Campaign calibration as a bounded background job (docs/collector_api_contract.md, "Campaign creation").

``POST /v1/campaigns`` answers 202 and never runs the calibration (or the check of a given q) itself: a job does,
in a child process, with a bounded queue (429 ``calibration_queue_full`` beyond it, nothing stored), a wall-clock
limit (``calibration_timeout``), a memory limit (``calibration_out_of_memory``) and cancellation by the deployment
(``calibration_cancelled``). Tokens, reports and releases of a campaign that is not active get 409
``campaign_not_active``. A collector restarted on the same database runs the unfinished jobs again, and fails a
job started :data:`MAX_ATTEMPTS` times (``calibration_interrupted``); shutting it down kills the running jobs.

Timing: the "slow" configuration (L = 256, k = 2, N_min = 300, q calibrated) runs for 17 s on a quiet 2-core
machine, so it is still calibrating whenever these tests look (within a few seconds), and a 10 s limit stops it;
the "fast" ones (L = 1: the bound is exact and instant) finish within the job's process start-up (about 1 s on a
quiet machine, 2 s on a loaded one: 5x below the limit).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import signal
import sqlite3
import time
import warnings
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")
pytest.importorskip("httpx", reason="the client helpers need httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from sufficientdp.calibration import calibrate  # noqa: E402
from sufficientdp.client import CollectorError, Reporter, wait_for_campaign  # noqa: E402
from sufficientdp.service import jobs as jobs_module  # noqa: E402
from sufficientdp.service.app import create_app  # noqa: E402
from sufficientdp.service.jobs import MAX_ATTEMPTS  # noqa: E402
from sufficientdp.service.storage import SCHEMA_VERSION, open_storage  # noqa: E402

SLOW: dict[str, Any] = {"name": "slow", "bits": 256, "epsilon": 1.0, "crowd_size": 300, "q": None,
                        "reports_per_person": 2,  # L = 256, k = 2: 17 s of calibration
                        "rate_limit": "tokens"}
FAST: dict[str, Any] = {"name": "fast", "bits": 1, "epsilon": 1.0, "crowd_size": 100, "eta": 0.01, "q": None,
                        "rate_limit": "none"}
URL = "http://testserver"  # TestClient: requests go to the app in this process, never to a network
ADMIN = "admin-" + "2" * 20
AUTH = {"authorization": f"Bearer {ADMIN}"}
LIMIT = 10.0  # seconds: the time limit of the restarted collector


def _app(db: str, **kwargs: Any) -> tuple[Any, TestClient]:
    """A collector with an admin token, and a client that sends it (lifespan not run: close with _close)."""
    app = create_app(db, admin_token=ADMIN, **kwargs)
    return app, TestClient(app, headers=AUTH)


@pytest.fixture(autouse=True)
def _no_remembered_outcomes() -> Iterator[None]:
    """Outcomes are cached per process; other test modules must not make these jobs instant."""
    jobs_module._cache.clear()
    yield
    jobs_module._cache.clear()


def _error(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "parameter"}
    assert body["error"]["code"] == code, body
    return dict(body["error"])


def _post(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/v1/campaigns", json=body)
    assert r.status_code == 202, r.text
    c = r.json()
    assert r.headers["location"] == f"/v1/campaigns/{c['id']}" and r.headers["retry-after"] == "1"
    assert c["status"] == "calibrating" and c["error"] is None
    assert c["q"] is None and c["q_numerator"] is None and c["eta_at_q"] is None and c["guarantee"] is None
    return dict(c)


def _settled(client: TestClient, cid: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (c := client.get(f"/v1/campaigns/{cid}").json())["status"] == "calibrating":
        assert time.monotonic() < deadline, f"{cid} still calibrating"
        time.sleep(0.02)
    return dict(c)


def _running(app: Any, cid: str, timeout: float = 30.0) -> list[Any]:
    """Wait until the job of ``cid`` runs in its process; the job processes."""
    deadline = time.monotonic() + timeout
    while app.state.jobs.state(cid) != "running" or not app.state.jobs._procs:
        assert time.monotonic() < deadline, f"the job of {cid} never started"
        time.sleep(0.02)
    return list(app.state.jobs._procs)


def _close(app: Any) -> None:
    app.state.jobs.close()
    app.state.storage.close()


def _rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return list(con.execute(sql).fetchall())
    finally:
        con.close()


def test_queue_conflicts_restart_and_time_limit(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    first, client = _app(db, calibration_workers=1, calibration_queue=2)
    procs: list[Any] = []
    try:
        slow = _post(client, SLOW)
        assert slow["calibrated"] is True and slow["token_key"] is not None  # the key is known at once
        fast = _post(client, FAST)
        fast2 = _post(client, {**FAST, "crowd_size": 101})
        # Capacity 1 + 2: a fourth is refused and nothing of it is stored.
        r = client.post("/v1/campaigns", json={**FAST, "crowd_size": 102})
        err = _error(r, 429, "calibration_queue_full")
        assert err["parameter"] is None and "3" in err["message"] and r.headers["retry-after"] == "30"
        assert len(_rows(db, "SELECT id FROM campaigns")) == 3 and len(_rows(db, "SELECT * FROM jobs")) == 3
        # Nothing but GET works while a campaign is calibrating.
        for cid in (slow["id"], fast["id"]):
            err = _error(client.post(f"/v1/campaigns/{cid}/reports", json={"reports": [[1] * 8]}), 409,
                         "campaign_not_active")
            assert "calibrating" in err["message"] and err["parameter"] is None
            _error(client.post(f"/v1/campaigns/{cid}/releases"), 409, "campaign_not_active")
        _error(client.post(f"/v1/campaigns/{slow['id']}/tokens", json={"credential": "a", "blinded": ["1f"]}), 409,
               "campaign_not_active")
        got = client.get(f"/v1/campaigns/{slow['id']}").json()
        assert got == {**slow, "pending_reports": 0, "released_reports": 0, "releases": 0}
        # The client side: a Reporter refuses to start, waiting gives up at its timeout.
        with pytest.raises(CollectorError) as info:
            Reporter(URL, slow["id"], client=client, allow_unpinned_token_key=True).fetch_campaign()
        assert info.value.code == "campaign_not_active"
        with pytest.raises(CollectorError) as info:
            wait_for_campaign(URL, slow["id"], client=client, timeout=0.2, interval=0.05)
        assert info.value.code == "timeout"
        procs = _running(first, slow["id"])
        assert first.state.jobs.state(fast["id"]) == "queued"
    finally:
        _close(first)
    assert all(p.poll() is not None for p in procs)  # stopping the collector killed the running job
    assert len(_rows(db, "SELECT * FROM jobs")) == 3  # ... and left the unfinished jobs in storage

    # Restart with a 10 s limit: every unfinished job runs again; one had already been started MAX_ATTEMPTS times.
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE jobs SET attempts = ? WHERE campaign_id = ?", (MAX_ATTEMPTS, fast2["id"]))
    con.close()
    second, client = _app(db, calibration_time_limit=LIMIT)
    try:
        done = wait_for_campaign(URL, fast["id"], client=client, timeout=60, interval=0.05)
        expected = calibrate(bits=1, population=100, epsilon=1.0, eta=0.01, larger_crowds=True).q
        assert done["status"] == "active" and done["error"] is None and done["calibrated"] is True
        assert done["q_numerator"] == math.ceil(Fraction(expected) * 2**32) and done["eta_at_q"] <= 0.01
        assert "every pair of neighbouring collections" in done["guarantee"]
        timed_out = _settled(client, slow["id"])
        assert timed_out["status"] == "failed" and timed_out["q"] is None
        assert timed_out["error"]["code"] == "calibration_timeout" and "10 s" in timed_out["error"]["message"]
        with pytest.raises(CollectorError) as info:
            wait_for_campaign(URL, slow["id"], client=client, timeout=5)
        assert info.value.code == "calibration_timeout"
        interrupted = _settled(client, fast2["id"])
        assert interrupted["status"] == "failed"
        assert interrupted["error"]["code"] == "calibration_interrupted"
        assert _rows(db, "SELECT * FROM jobs") == []
        # Reports flow once active; the same configuration again is settled at once (its outcome is known).
        r = client.post(f"/v1/campaigns/{fast['id']}/reports", json={"reports": [[1], [0]]})
        assert r.status_code == 200 and r.json() == {"accepted": 2, "duplicates": 0}
        again = client.post("/v1/campaigns", json=FAST)
        assert again.status_code == 202 and again.json()["status"] == "active"
        assert again.json()["q_numerator"] == done["q_numerator"] and "retry-after" not in again.headers
    finally:
        _close(second)


def test_a_killed_or_memory_starved_job_fails_cleanly(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    app, client = _app(db, calibration_memory_limit=256 << 20)
    try:
        # 256 MiB of address space: an L = 256 calibration for 10^5 people does not fit (its lattices are mapped
        # beyond the limit): the job fails cleanly and at once. (A job bounds in one thread: with two, L = 64 failed
        # to map its threads' stacks and, under load, the pool could wait for a result that never came: the job
        # still ran after 60 s. In one thread L = 64 now fits; a tiny calibration, L = 4, has fitted since the
        # proven bound stopped importing scipy.)
        starved = _settled(client, _post(client, {**SLOW, "bits": 256, "reports_per_person": 1,
                                                  "crowd_size": 100_000, "rate_limit": "none"})["id"])
        assert starved["status"] == "failed"
        assert starved["error"]["code"] in ("calibration_out_of_memory", "calibration_failed"), starved
        killed = _post(client, {**SLOW, "rate_limit": "none"})
        procs = _running(app, killed["id"])
        procs[0].send_signal(signal.SIGKILL)
        c = _settled(client, killed["id"])
        assert c["status"] == "failed" and c["error"]["code"] == "calibration_failed"
        assert "signal 9" in c["error"]["message"]
    finally:
        _close(app)


def test_the_deployment_cancels_a_queued_and_a_running_job(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    app, client = _app(db, calibration_workers=1, calibration_queue=1)
    try:
        running = _post(client, {**SLOW, "rate_limit": "none"})
        queued = _post(client, FAST)
        _error(client.post("/v1/campaigns", json={**FAST, "crowd_size": 101}), 429, "calibration_queue_full")
        procs = _running(app, running["id"])
        assert app.state.jobs.state(queued["id"]) == "queued"
        # A participant cannot cancel: administrative call.
        _error(client.post(f"/v1/campaigns/{queued['id']}/cancel", headers={"authorization": ""}), 401,
               "unauthorized")
        for cid in (queued["id"], running["id"]):
            r = client.post(f"/v1/campaigns/{cid}/cancel")
            assert r.status_code == 200, r.text
            c = r.json()
            assert c["status"] == "failed" and c["q"] is None and c["pending_reports"] == 0
            assert c["error"]["code"] == "calibration_cancelled" and c["error"]["parameter"] is None
            assert app.state.jobs.state(cid) is None
        for p in procs:  # the running job's process was killed
            p.wait(timeout=10)
        assert _rows(db, "SELECT * FROM jobs") == []
        deadline = time.monotonic() + 10
        while app.state.jobs.load():
            assert time.monotonic() < deadline, "the cancelled jobs still count against the capacity"
            time.sleep(0.02)
        # Nothing overwrites the cancellation; a second cancel, or one of an active campaign, is a 409.
        assert client.get(f"/v1/campaigns/{running['id']}").json()["error"]["code"] == "calibration_cancelled"
        err = _error(client.post(f"/v1/campaigns/{running['id']}/cancel"), 409, "campaign_not_calibrating")
        assert "failed" in err["message"]
        _error(client.post(f"/v1/campaigns/{'0' * 32}/cancel"), 404, "unknown_campaign")
        _error(client.post(f"/v1/campaigns/{running['id']}/reports", json={"reports": [[1] * 32]}), 409,
               "campaign_not_active")
        # The freed worker takes the next job.
        fresh = wait_for_campaign(URL, _post(client, {**FAST, "crowd_size": 101})["id"], client=client, timeout=60,
                                  interval=0.05)
        assert fresh["status"] == "active"
        _error(client.post(f"/v1/campaigns/{fresh['id']}/cancel"), 409, "campaign_not_calibrating")
    finally:
        _close(app)


def test_shutdown_kills_running_jobs_and_refuses_new_ones(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    app = create_app(db, admin_token=ADMIN)
    try:
        with TestClient(app, headers=AUTH) as client:  # runs the ASGI lifespan: its shutdown closes the jobs
            cid = _post(client, {**SLOW, "rate_limit": "none"})["id"]
            procs = _running(app, cid)
        assert app.state.jobs.closed
        for p in procs:
            assert p.poll() is not None
        assert [r[0] for r in _rows(db, "SELECT campaign_id FROM jobs")] == [cid]  # left for the next start
        r = TestClient(app, headers=AUTH).post("/v1/campaigns", json=FAST)
        assert _error(r, 503, "shutting_down")["parameter"] is None and r.headers["retry-after"] == "30"
        assert len(_rows(db, "SELECT id FROM campaigns")) == 1
    finally:
        _close(app)


@pytest.mark.skipif(not os.environ.get("SUFFICIENTDP_TEST_POSTGRES_URL"),
                    reason="needs SUFFICIENTDP_TEST_POSTGRES_URL (CI: scripts/ci_postgres.sh)")
def test_restart_rule_and_cancellation_on_postgresql() -> None:
    psycopg = pytest.importorskip("psycopg")
    server = os.environ["SUFFICIENTDP_TEST_POSTGRES_URL"]
    name = "sdp_jobs_" + secrets.token_hex(6)
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = urlunsplit(urlsplit(server)._replace(path="/" + name))
    try:
        first, client = _app(url, calibration_workers=1, calibration_queue=1)
        try:
            slow = _post(client, {**SLOW, "rate_limit": "none"})
            fast = _post(client, FAST)
            _running(first, slow["id"])
        finally:
            _close(first)
        second, client = _app(url, calibration_time_limit=LIMIT)
        try:
            storage = second.state.storage
            assert storage.dialect == "postgresql"
            assert {cid for cid, _, _ in storage.unfinished_jobs()} == {slow["id"], fast["id"]}  # re-queued
            c = client.post(f"/v1/campaigns/{slow['id']}/cancel").json()
            assert c["status"] == "failed" and c["error"]["code"] == "calibration_cancelled"
            done = wait_for_campaign(URL, fast["id"], client=client, timeout=60, interval=0.05)
            assert done["status"] == "active" and done["eta_at_q"] <= 0.01
            assert storage.unfinished_jobs() == []
            assert storage.start_job(fast["id"]) is None  # finished: nothing to start
            assert storage.finish_job(fast["id"], {}) is False  # first writer wins
            assert client.get(f"/v1/campaigns/{fast['id']}").json()["status"] == "active"
        finally:
            _close(second)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a_version_2_database_is_migrated_and_its_campaigns_stay_active(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    storage = open_storage(db)
    legacy = {"id": "a" * 32, "name": "old", "bits": 2, "epsilon": 1.0, "eta": 0.5, "crowd_size": 2,
              "reports_per_person": 1, "q": 0.25, "q_numerator": 1, "precision": 2, "eta_at_q": 0.1,
              "calibrated": False, "guarantee": "g", "notes": [], "rate_limit": "none", "token_key": None}
    storage.create_campaign(legacy["id"], legacy, None)
    storage.close()
    con = sqlite3.connect(db)
    with con:  # the schema of version 2: no jobs table
        con.execute("DROP TABLE jobs")
        con.execute("UPDATE settings SET value = ? WHERE key = 'schema_version'", (b"2",))
    con.close()
    app, client = _app(db)
    try:
        assert _rows(db, "SELECT value FROM settings WHERE key = 'schema_version'") == \
            [(str(SCHEMA_VERSION).encode(),)]
        got = client.get(f"/v1/campaigns/{legacy['id']}").json()
        assert got == {**legacy, "status": "active", "error": None, "pending_reports": 0, "released_reports": 0,
                       "releases": 0, "family": None, "memo_q": None, "memo_q_numerator": None, "q_release": None,
                       "lifetime": None, "token_scheme": None}  # fields added later are served as null
        r = client.post(f"/v1/campaigns/{legacy['id']}/reports", json={"reports": [[1, 0], [0, 1]]})
        assert r.status_code == 200
        assert client.post(f"/v1/campaigns/{legacy['id']}/releases").status_code == 201
        assert json.loads(_rows(db, "SELECT spec FROM campaigns")[0][0]) == legacy  # the stored object unchanged
    finally:
        _close(app)


@pytest.mark.parametrize(
    ("path", "body", "status", "code", "fragment"),
    [
        ("tokens", {"credential": "c", "blinded": ["1"] * 101}, 422, "invalid_parameter", "at most 100"),
        ("tokens", {"credential": "c" * 4097, "blinded": ["1"]}, 422, "invalid_parameter", "4096"),
        ("tokens", {"credential": "c", "blinded": ["f" * 4097]}, 422, "invalid_parameter", "4096 digits"),
        ("reports", {"reports": [[0, 1]], "nonces": ["0" * 64] * 10_001}, 413, "request_too_large", "10000"),
        ("reports", {"reports": [[0, 1]], "tokens": [{"nonce": "0" * 64, "signature": "1"}] * 10_001}, 413,
         "request_too_large", "10000"),
        ("reports", {"reports": [[0, 1]], "tokens": [{"nonce": "0" * 64, "signature": "f" * 4097}]}, 403,
         "invalid_token", "4096 digits"),
        ("reports", {"reports": [[0, 10**400]]}, 400, "invalid_report", "0 or 1"),
    ],
)
def test_every_count_and_size_has_a_limit_named_in_its_error(tmp_path: Path, path: str, body: dict[str, Any],
                                                            status: int, code: str, fragment: str) -> None:
    app, client = _app(str(tmp_path / "c.db"), max_body_bytes=1 << 22)
    try:
        rate = "tokens" if path == "tokens" or "tokens" in body else "none"
        cid = _settled(client, _post(client, {**FAST, "bits": 2, "q": 0.45, "eta": 0.5, "crowd_size": 5,
                                              "rate_limit": rate})["id"])["id"]
        err = _error(client.post(f"/v1/campaigns/{cid}/{path}", json=body), status, code)
        assert fragment in err["message"], err
    finally:
        _close(app)


@pytest.mark.parametrize("raw", [b'{"name": "x", "bits": 1e400, "epsilon": 1, "crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": 1e400, "crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": 1, "crowd_size": ' + b"9" * 5000 + b"}",
                                 b'{"name": "x", "bits": 2, "epsilon": NaN, "crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": Infinity, "crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": 1, "eta": NaN, "crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": 1, "q": NaN, "crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": 1, "q": -Infinity, "crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": 1, "q": 5e-324, "precision": 1e3, '
                                 b'"crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": 1e-320, "crowd_size": 5, "eta": 1.0}',
                                 b'{"name": "x", "bits": -9223372036854775809, "epsilon": 1, "crowd_size": 5}',
                                 b'{"name": "x", "bits": 2, "epsilon": 1, "crowd_size": 5, "reports_per_person": '
                                 b'18446744073709551616}'])
def test_out_of_range_json_numbers_are_4xx(tmp_path: Path, raw: bytes) -> None:
    app, client = _app(str(tmp_path / "c.db"))
    try:
        r = client.post("/v1/campaigns", content=raw, headers={"content-type": "application/json"})
        assert 400 <= r.status_code < 500 and set(r.json()) == {"error"}, r.text
        assert r.json()["error"]["code"] in ("invalid_parameter", "invalid_json"), r.text
        assert _rows(str(tmp_path / "c.db"), "SELECT id FROM campaigns") == []
    finally:
        _close(app)
