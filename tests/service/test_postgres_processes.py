"""Several collector processes sharing one PostgreSQL database (issue 10): the tests of
``collector_processes`` on PostgreSQL, and a deadlock between two processes' batches.

The shared tests (three ``sufficientdp serve`` processes on one database: disjoint and complete releases under
concurrent load, a token spent once, nothing acknowledged lost on ``kill -9``) are described in
``collector_processes``.

The PostgreSQL server comes from ``test_postgres``'s fixtures: ``$SUFFICIENTDP_TEST_POSTGRES_URL`` (CI), else a
throwaway server if ``initdb`` is installed, else the tests are skipped saying so.
"""

from __future__ import annotations

import secrets
import threading
import time

import pytest

httpx = pytest.importorskip("httpx", reason="the multi-process test needs httpx (extra 'service')")
pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("uvicorn", reason="the collector service needs the 'service' extra")
psycopg = pytest.importorskip("psycopg", reason="PostgreSQL tests need psycopg 3 (extra 'service')")

from collector_processes import (  # noqa: E402,F401  (tests/service is on sys.path; the tests run here)
    _db_counts,
    collectors,
    test_a_token_is_spent_once_across_processes,
    test_concurrent_reports_and_releases_across_processes_are_disjoint_and_complete,
    test_kill_9_of_one_process_loses_nothing_it_acknowledged,
)
from test_postgres import db_url, server_url  # noqa: E402,F401  (the PostgreSQL fixtures)

pytestmark = pytest.mark.slow


def test_a_deadlock_with_another_process_is_retried_not_failed(db_url: str) -> None:  # noqa: F811
    """Two writers insert the same two nonces in opposite orders (a token sent to two processes at once, twice):
    PostgreSQL aborts one waiting statement. The group-commit writer puts that request back and commits the rest;
    the retry finds its nonce spent by the other transaction and answers duplicate, instead of a 500."""
    from sufficientdp.service.storage import open_storage

    storage = open_storage(db_url)
    other = psycopg.connect(db_url, autocommit=False)  # "another process": one open transaction
    try:
        try:  # the other side never detects the deadlock first, so the group writer's statement is the victim
            other.execute("SET deadlock_timeout = '60s'")
        except psycopg.errors.InsufficientPrivilege:
            pytest.skip("SET deadlock_timeout needs a superuser")
        cid = "deadlock-" + secrets.token_hex(4)
        n1, n2 = secrets.token_bytes(32), secrets.token_bytes(32)
        other.execute("INSERT INTO spent (campaign_id, nonce) VALUES (%s, %s)", (cid, n2))
        with storage._group_cond:  # both requests in one batch, n1 first
            f1 = storage.submit_grouped(cid, [b"\x01\x00"], [n1])
            f2 = storage.submit_grouped(cid, [b"\x02\x00"], [n2])
        with psycopg.connect(db_url, autocommit=True) as watch:  # the writer holds n1 and waits for n2
            deadline = time.monotonic() + 30
            while watch.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                                "AND wait_event_type = 'Lock'").fetchone()[0] < 1:  # type: ignore[index]
                assert time.monotonic() < deadline, "the group writer never waited for the other transaction"
                time.sleep(0.02)
        taken: list[int] = []
        closing = threading.Thread(target=lambda: taken.append(other.execute(
            "INSERT INTO spent (campaign_id, nonce) VALUES (%s, %s) ON CONFLICT DO NOTHING", (cid, n1)).rowcount))
        closing.start()  # the cycle: it waits for the writer's n1 while the writer waits for its n2
        assert f1.result(timeout=60) == (1, 0)  # committed after the deadlock was broken
        closing.join(timeout=60)
        assert taken == [0]  # n1 was the writer's
        other.commit()
        assert f2.result(timeout=60) == (0, 1)  # retried after the other transaction committed: a duplicate
        by_release, spent = _db_counts(db_url, cid)
        assert by_release == {None: 1} and spent == {n1.hex(), n2.hex()}
    finally:
        other.close()
        storage.close()
