"""Several collector processes sharing one SQLite file (issue 10): the tests of ``collector_processes`` on SQLite,
and several processes on one port (``serve --reuse-port``).

SQLite serializes the processes' write transactions (``BEGIN IMMEDIATE``); the collector makes them take turns
through a file lock first (:class:`sufficientdp.service.storage.SQLiteStorage`), so that a waiting writer starts as
soon as the other commits instead of sleeping in SQLite's busy handler. Every guarantee checked on PostgreSQL must
hold here too: disjoint and complete releases, a token spent once, nothing acknowledged lost on ``kill -9``.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

httpx = pytest.importorskip("httpx", reason="the multi-process test needs httpx (extra 'service')")
pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("uvicorn", reason="the collector service needs the 'service' extra")

from collector_processes import (  # noqa: E402,F401  (tests/service is on sys.path; the tests run here)
    AUTH,
    BITS,
    CROWD,
    Collector,
    _active,
    _check_releases,
    collectors,
    test_a_token_is_spent_once_across_processes,
    test_concurrent_reports_and_releases_across_processes_are_disjoint_and_complete,
    test_kill_9_of_one_process_loses_nothing_it_acknowledged,
)
from tests.service.loopback import free_port  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite file for the module's collector processes."""
    return "sqlite:///" + str(tmp_path_factory.mktemp("sqlite-processes") / "collector.db")


@pytest.fixture
def shared_port(tmp_path: Path) -> Iterator[tuple[list[Collector], str]]:
    """Two collector processes started with ``--reuse-port`` on one port, one SQLite file."""
    port = free_port()
    db = "sqlite:///" + str(tmp_path / "shared.db")
    procs = [Collector(db, tmp_path / f"server{i}.log", port=port, reuse_port=True) for i in range(2)]
    try:
        for p in procs:
            p.wait_ready()
        yield procs, db
    finally:
        for p in procs:
            p.stop()


def test_two_processes_share_one_port_and_every_report_is_stored_once(
        shared_port: tuple[list[Collector], str]) -> None:
    procs, db = shared_port
    assert all(p.proc.poll() is None for p in procs)  # both bound the same port
    base = procs[0].base
    cid = _active(base)["id"]
    sent: list[list[int]] = []
    lock = threading.Lock()
    failures: list[str] = []

    def submitter(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(60):
            report = rng.integers(0, 2, size=BITS).tolist()
            with httpx.Client(timeout=30.0) as c:  # a fresh connection each time: the kernel spreads them
                r = c.post(f"{base}/v1/campaigns/{cid}/reports",
                           json={"reports": [report], "nonces": [secrets.token_hex(32)]})
            with lock:
                if r.status_code == 200 and r.json() == {"accepted": 1, "duplicates": 0}:
                    sent.append(report)
                else:
                    failures.append(f"{r.status_code} {r.text[:200]}")

    threads = [threading.Thread(target=submitter, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures[:5]
    assert len(sent) == 360 >= CROWD
    r = httpx.post(f"{base}/v1/campaigns/{cid}/releases", headers=AUTH, timeout=60)
    assert r.status_code == 201, r.text
    _check_releases(procs, db, cid, np.array(sent))


def test_a_second_process_without_reuse_port_cannot_take_the_port(
        shared_port: tuple[list[Collector], str], tmp_path: Path) -> None:
    procs, db = shared_port
    out = subprocess.run([sys.executable, "-m", "sufficientdp.cli", "serve", "--host", "127.0.0.1", "--port",
                          str(procs[0].port), "--database", db, "--quiet", "--log-level", "warning"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "address already in use" in (out.stderr + out.stdout).lower()
    assert all(p.proc.poll() is None for p in procs)
