"""Group commit of reports (:meth:`Storage.submit_grouped`): one transaction per batch of requests, each request in
its own savepoint, every future resolved only after the commit that holds it."""

from __future__ import annotations

import secrets
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from sufficientdp.service.storage import Storage, open_storage


def _nonce() -> bytes:
    return secrets.token_bytes(32)


@pytest.fixture
def storage(tmp_path: Path) -> Any:
    s = open_storage(str(tmp_path / "c.db"))
    yield s
    s.close()


def _queued_together(s: Storage, requests: list[tuple[str, list[bytes], list[bytes | None]]]) -> list[Any]:
    """Queue every request while holding the queue's lock, so the writer takes them as one batch."""
    with s._group_cond:  # reentrant: submit_grouped takes it again
        return [s.submit_grouped(cid, reports, nonces) for cid, reports, nonces in requests]


def test_a_batch_is_one_commit_and_every_request_gets_its_own_answer(storage: Storage,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    commits = []
    original = storage._tx

    def counting_tx(**kwargs: Any) -> Any:
        commits.append(kwargs)
        return original(**kwargs)

    monkeypatch.setattr(storage, "_tx", counting_tx)
    shared = _nonce()
    futures = _queued_together(storage, [
        ("c", [b"\x01"], [_nonce()]),
        ("c", [b"\x02", b"\x03"], [_nonce(), None]),
        ("c", [b"\x04"], [shared]),
        ("c", [b"\x05"], [shared]),  # the same nonce later in the same batch: a duplicate
    ])
    assert [f.result(timeout=30) for f in futures] == [(1, 0), (2, 0), (1, 0), (0, 1)]
    assert len(commits) == 1
    assert storage.counts("c") == (4, 0, 0)


def test_an_error_in_one_request_does_not_fail_the_others(storage: Storage,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    original = storage._insert_reports

    def failing(cur: Any, campaign_id: str, reports: list[bytes], nonces: list[bytes | None]) -> tuple[int, int]:
        out = original(cur, campaign_id, reports, nonces)  # its rows are written, then it fails
        if campaign_id == "bad":
            raise sqlite3.IntegrityError("injected")
        return out

    monkeypatch.setattr(storage, "_insert_reports", failing)
    bad_nonce = _nonce()
    futures = _queued_together(storage, [
        ("good", [b"\x01"], [_nonce()]),
        ("bad", [b"\x01", b"\x02"], [bad_nonce, _nonce()]),
        ("good", [b"\x03"], [_nonce()]),
    ])
    assert futures[0].result(timeout=30) == (1, 0)
    with pytest.raises(sqlite3.IntegrityError, match="injected"):
        futures[1].result(timeout=30)
    assert futures[2].result(timeout=30) == (1, 0)
    assert storage.counts("good") == (2, 0, 0)
    assert storage.counts("bad") == (0, 0, 0)  # rolled back to its savepoint: no report and no spent nonce
    monkeypatch.setattr(storage, "_insert_reports", original)
    assert storage.submit_grouped("bad", [b"\x01"], [bad_nonce]).result(timeout=30) == (1, 0)


def test_a_failed_commit_fails_every_request_of_the_batch(storage: Storage, monkeypatch: pytest.MonkeyPatch) -> None:
    original = storage._insert_reports

    def fatal(cur: Any, campaign_id: str, reports: list[bytes], nonces: list[bytes | None]) -> tuple[int, int]:
        raise KeyboardInterrupt  # not an Exception: the whole transaction is abandoned

    monkeypatch.setattr(storage, "_insert_reports", fatal)
    futures = _queued_together(storage, [("c", [b"\x01"], [_nonce()]), ("c", [b"\x02"], [_nonce()])])
    for f in futures:
        with pytest.raises(KeyboardInterrupt):
            f.result(timeout=30)
    monkeypatch.setattr(storage, "_insert_reports", original)
    assert storage.counts("c") == (0, 0, 0)


def test_a_cancelled_request_is_skipped_and_close_commits_the_queue(tmp_path: Path) -> None:
    s = open_storage(str(tmp_path / "c.db"))
    with s._group_cond:
        futures = [s.submit_grouped("c", [bytes([i])], [_nonce()]) for i in range(50)]
        assert futures[0].cancel()
        closer = threading.Thread(target=s.close)
        closer.start()
    closer.join(timeout=30)
    assert not closer.is_alive()
    assert all(f.result(timeout=0) == (1, 0) for f in futures[1:])
    with pytest.raises(RuntimeError, match="closed"):
        s.submit_grouped("c", [b"\x01"], [None])
    again = open_storage(str(tmp_path / "c.db"))
    try:
        assert again.counts("c") == (49, 0, 0)
    finally:
        again.close()


def test_concurrent_requests_share_commits(storage: Storage) -> None:
    results: list[tuple[int, int]] = []
    lock = threading.Lock()

    def client() -> None:
        for _ in range(25):
            r = storage.submit_grouped("c", [b"\x01"], [_nonce()]).result(timeout=60)
            with lock:
                results.append(r)

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [(1, 0)] * 200
    assert storage.counts("c") == (200, 0, 0)


def test_the_reports_fast_path_answers_as_the_route_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small valid requests to an active campaign skip FastAPI's routing; anything else, errors included, is
    answered by the route exactly as before (the fast path does nothing when it declines)."""
    pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
    import time

    from fastapi.testclient import TestClient

    from sufficientdp.service.app import create_app

    admin = "admin-" + "1" * 20
    app = create_app(str(tmp_path / "c.db"), admin_token=admin)
    grouped = []
    original = app.state.storage.submit_grouped

    def counting(*args: Any) -> Any:
        grouped.append(args)
        return original(*args)

    monkeypatch.setattr(app.state.storage, "submit_grouped", counting)
    try:
        with TestClient(app) as client:
            r = client.post("/v1/campaigns", headers={"authorization": f"Bearer {admin}"},
                            json={"name": "fast", "bits": 4, "epsilon": 1.0, "crowd_size": 5, "q": 0.45,
                                  "eta": 0.5, "rate_limit": "none"})
            cid = r.json()["id"]
            deadline = time.monotonic() + 120
            while client.get(f"/v1/campaigns/{cid}").json()["status"] == "calibrating":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            url = f"/v1/campaigns/{cid}/reports"
            nonce = secrets.token_hex(32)
            ok = client.post(url, json={"reports": [[0, 1, 1, 0]], "nonces": [nonce]})
            assert (ok.status_code, ok.json(), ok.headers["content-type"]) == \
                (200, {"accepted": 1, "duplicates": 0}, "application/json")
            assert client.post(url, json={"reports": [[0, 1, 1, 0]], "nonces": [nonce]}).json() == \
                {"accepted": 0, "duplicates": 1}
            bad = client.post(url, json={"reports": [[0, 2, 1, 0]]})
            assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_report"
            assert bad.json()["error"]["parameter"] == "reports[0][1]"
            short = client.post(url, json={"reports": [[0, 1]]})
            assert short.status_code == 400 and short.json()["error"]["parameter"] == "reports[0]"
            extra = client.post(url, json={"reports": [[0, 1, 1, 0]], "x": 1})
            assert extra.status_code == 400 and extra.json()["error"]["code"] == "invalid_report"
            assert client.post(url, json={"reports": [[1, 1, 1, 1]] * 6}).json() == {"accepted": 6, "duplicates": 0}
            assert client.post(url, content=b"{", headers={"content-type": "application/json"}).status_code == 400
            assert client.get(f"/v1/campaigns/{cid}").json()["pending_reports"] == 7
            assert [len(args[1]) for args in grouped] == [1, 1, 6]  # every stored request went through once
    finally:
        app.state.jobs.close()
        app.state.storage.close()
