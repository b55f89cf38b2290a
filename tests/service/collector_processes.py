"""Several collector processes on one database: the shared parts of ``test_postgres_processes`` and
``test_sqlite_processes`` (issue 10). Not a test module itself: the tests below are collected where they are
imported, each module giving its own ``db_url`` fixture (a PostgreSQL URL, an SQLite file).

Three ``sufficientdp serve`` processes (``python -m sufficientdp.cli serve``) on 127.0.0.1 use one database; the
tests send requests to all of them at once and check the guarantees against what the clients themselves sent and
were told (the independent truth), and against the database read directly:

* concurrent one-report submissions and concurrent releases from every process: the releases are disjoint and
  together hold every acknowledged report exactly once (their report counts and per-bit counts add up to the
  acknowledged reports' count and column sums; every stored row belongs to exactly one release);
* one token sent to every process at the same moment is accepted exactly once in total; an issuance recorded by
  one process is answered again (identical retry) or refused (another list) by the others;
* ``kill -9`` of one process while all of them take reports (and another one releases): every report it
  acknowledged is stored with its nonce; the survivors answer it as a duplicate; after resubmitting the
  unacknowledged requests the releases hold every report sent, once.
"""

from __future__ import annotations

import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from test_app import draft_tokens, finish_tokens  # (tests/service is on sys.path)
from tests.service.loopback import free_port

__all__ = ["Collector", "collectors", "test_a_token_is_spent_once_across_processes",
           "test_concurrent_reports_and_releases_across_processes_are_disjoint_and_complete",
           "test_kill_9_of_one_process_loses_nothing_it_acknowledged"]

PROCESSES = 3
BITS = 12
CROWD = 20
ADMIN = secrets.token_hex(16)
AUTH = {"authorization": f"Bearer {ADMIN}"}


class Collector:
    """One ``sufficientdp serve`` process on 127.0.0.1 (its log in ``log_path``)."""

    def __init__(self, database: str, log_path: Path, *, port: int | None = None, reuse_port: bool = False) -> None:
        self.port = free_port() if port is None else port
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = open(log_path, "ab")  # closed by stop()
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "SUFFICIENTDP_ADMIN_TOKEN": ADMIN}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sufficientdp.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
             "--database", database, "--quiet", "--log-level", "info"] + (["--reuse-port"] if reuse_port else []),
            stdout=self._log, stderr=self._log, env=env)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: "
                                   f"{self.log_path.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"{self.base}/openapi.json", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("server did not start within 90 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()



@pytest.fixture(scope="module")
def collectors(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Collector]]:
    logs = tmp_path_factory.mktemp("collector-logs")
    procs: list[Collector] = []
    try:
        for i in range(PROCESSES):
            procs.append(Collector(db_url, logs / f"server{i}.log"))
        for p in procs:
            p.wait_ready()
        yield procs
    finally:
        for p in procs:
            p.stop()


def _active(base: str, **overrides: Any) -> dict[str, Any]:
    """Create a campaign (q given, checked by a background job of that process) and wait until it is active."""
    body = {"name": "multi", "bits": BITS, "epsilon": 2.0, "crowd_size": CROWD, "q": 0.45, "eta": 0.5,
            "rate_limit": "none", **overrides}
    r = httpx.post(f"{base}/v1/campaigns", headers=AUTH, timeout=120, json=body)
    assert r.status_code == 202, r.text
    cid = str(r.json()["id"])
    deadline = time.monotonic() + 120
    while (c := httpx.get(f"{base}/v1/campaigns/{cid}", timeout=10).json())["status"] == "calibrating":
        assert time.monotonic() < deadline, "the campaign never became active"
        time.sleep(0.1)
    assert c["status"] == "active", c
    return dict(c)

def _db_counts(url: str, cid: str) -> tuple[dict[str | None, int], set[str]]:
    """``{release id or None: stored reports}`` and the spent nonces (hex) of a campaign, read directly."""
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url[len("sqlite:///"):])
        try:
            rows = conn.execute("SELECT release_id, COUNT(*) FROM reports WHERE campaign_id = ? GROUP BY release_id",
                                (cid,)).fetchall()
            spent = {bytes(r[0]).hex() for r in conn.execute("SELECT nonce FROM spent WHERE campaign_id = ?",
                                                                (cid,)).fetchall()}
        finally:
            conn.close()
        return {r[0]: int(r[1]) for r in rows}, spent
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT release_id, COUNT(*) FROM reports WHERE campaign_id = %s GROUP BY release_id",
                            (cid,)).fetchall()
        spent = {bytes(r[0]).hex() for r in conn.execute("SELECT nonce FROM spent WHERE campaign_id = %s",
                                                            (cid,)).fetchall()}
    return {r[0]: int(r[1]) for r in rows}, spent


def _check_releases(collectors: list[Collector], db: str, cid: str, sent: np.ndarray) -> list[dict[str, Any]]:
    """Every process serves the same releases; they hold every report of ``sent`` (rows) exactly once."""
    listings = [httpx.get(f"{c.base}/v1/campaigns/{cid}/estimates", timeout=30).json()["releases"]
                for c in collectors if c.proc.poll() is None]
    releases = listings[0]
    assert all(other == releases for other in listings[1:])  # one history, the same from every process
    ids = [r["id"] for r in releases]
    assert len(set(ids)) == len(ids)
    assert all(r["reports"] >= CROWD for r in releases)  # each release met its threshold on its own
    # Disjoint and complete: the counts add up to the reports sent, bit by bit (a report counted by two releases,
    # or by none, would change a sum).
    assert sum(r["reports"] for r in releases) == sent.shape[0]
    per_bit = np.sum([[e["count"] for e in r["estimates"]] for r in releases], axis=0)
    assert per_bit.tolist() == sent.sum(axis=0).tolist()
    by_release, spent = _db_counts(db, cid)
    assert by_release == {r["id"]: r["reports"] for r in releases}  # no pending row, no row of an unknown release
    assert len(spent) == sent.shape[0]
    return list(releases)


def test_concurrent_reports_and_releases_across_processes_are_disjoint_and_complete(
        collectors: list[Collector], db_url: str) -> None:
    cid = _active(collectors[0].base)["id"]
    lock = threading.Lock()
    acked: list[list[int]] = []
    failures: list[str] = []
    made: list[tuple[int, dict[str, Any]]] = []  # (process, release)
    stop_submit = threading.Event()
    stop_release = threading.Event()

    def submitter(proc: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        url = f"{collectors[proc].base}/v1/campaigns/{cid}/reports"
        with httpx.Client(timeout=30.0) as c:
            while not stop_submit.is_set():
                report = rng.integers(0, 2, size=BITS).tolist()
                r = c.post(url, json={"reports": [report], "nonces": [secrets.token_hex(32)]})
                with lock:
                    if r.status_code == 200 and r.json() == {"accepted": 1, "duplicates": 0}:
                        acked.append(report)
                    else:
                        failures.append(f"{r.status_code} {r.text[:200]}")

    def releaser(proc: int) -> None:
        url = f"{collectors[proc].base}/v1/campaigns/{cid}/releases"
        with httpx.Client(timeout=60.0, headers=AUTH) as c:
            while not stop_release.is_set():
                r = c.post(url)
                with lock:
                    if r.status_code == 201:
                        made.append((proc, r.json()))
                    elif not (r.status_code == 409 and r.json()["error"]["code"] == "crowd_too_small"):
                        failures.append(f"release {r.status_code} {r.text[:200]}")
                time.sleep(0.02)

    submitters = [threading.Thread(target=submitter, args=(i % PROCESSES, 100 + i)) for i in range(4 * PROCESSES)]
    releasers = [threading.Thread(target=releaser, args=(i,)) for i in range(PROCESSES)]
    for t in submitters + releasers:
        t.start()
    deadline = time.monotonic() + 120
    while True:  # until enough releases, from at least two processes, were made under load
        time.sleep(0.2)
        with lock:
            enough = len(acked) >= 1500 and len(made) >= 6 and len({p for p, _ in made}) >= 2
        if enough or failures or time.monotonic() > deadline:
            break
    stop_submit.set()
    for t in submitters:
        t.join(timeout=60)
    stop_release.set()
    for t in releasers:
        t.join(timeout=60)
    assert not failures, failures[:5]
    assert len(made) >= 6 and len({p for p, _ in made}) >= 2, (len(acked), [(p, r["reports"]) for p, r in made])

    # The rest: top up to the threshold if needed, then one last release from another process.
    pending = httpx.get(f"{collectors[1].base}/v1/campaigns/{cid}", timeout=30).json()["pending_reports"]
    rng = np.random.default_rng(7)
    with httpx.Client(timeout=30.0) as c:
        for _ in range(max(0, CROWD - pending)):
            report = rng.integers(0, 2, size=BITS).tolist()
            r = c.post(f"{collectors[2].base}/v1/campaigns/{cid}/reports",
                       json={"reports": [report], "nonces": [secrets.token_hex(32)]})
            assert r.json() == {"accepted": 1, "duplicates": 0}
            acked.append(report)
    if acked:
        r = httpx.post(f"{collectors[1].base}/v1/campaigns/{cid}/releases", headers=AUTH, timeout=60)
        assert r.status_code == 201, r.text
        made.append((1, r.json()))
    status = httpx.get(f"{collectors[0].base}/v1/campaigns/{cid}", timeout=30).json()
    assert status["pending_reports"] == 0 and status["released_reports"] == len(acked)
    assert status["releases"] == len(made)

    releases = _check_releases(collectors, db_url, cid, np.array(acked))
    assert sorted(r["id"] for r in releases) == sorted(r["id"] for _, r in made)


def test_a_token_is_spent_once_across_processes(collectors: list[Collector], db_url: str) -> None:
    campaign = _active(collectors[0].base, rate_limit="tokens", reports_per_person=2, crowd_size=5)
    cid = campaign["id"]
    # Issuance: recorded by one process, seen by the others (identical retry answered, another list refused).
    tokens: list[dict[str, str]] = []
    for n in range(12):
        issuer, retry, other = (collectors[(n + i) % PROCESSES] for i in range(3))
        msgs, blinded = draft_tokens(campaign, 2)
        body = {"credential": f"person-{n}", "blinded": [format(b, "x") for b, _ in blinded]}
        first = httpx.post(f"{issuer.base}/v1/campaigns/{cid}/tokens", json=body, timeout=60)
        assert first.status_code == 200, first.text
        again = httpx.post(f"{retry.base}/v1/campaigns/{cid}/tokens", json=body, timeout=60)
        assert again.status_code == 200 and again.json() == first.json()
        _, fresh = draft_tokens(campaign, 2)
        refused = httpx.post(f"{other.base}/v1/campaigns/{cid}/tokens", timeout=60,
                             json={**body, "blinded": [format(b, "x") for b, _ in fresh]})
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "token_already_issued"
        tokens += finish_tokens(campaign, msgs, blinded, first.json()["signatures"])

    # Spending: every token goes to every process at the same moment (several tokens in flight at once).
    rng = np.random.default_rng(11)
    reports = rng.integers(0, 2, size=(len(tokens), BITS))
    answers: list[list[Any]] = [[None] * PROCESSES for _ in tokens]
    barriers = [threading.Barrier(PROCESSES) for _ in tokens]

    def spender(proc: int, group: int) -> None:
        url = f"{collectors[proc].base}/v1/campaigns/{cid}/reports"
        with httpx.Client(timeout=60.0) as c:
            for i in range(group, len(tokens), 4):
                body = {"reports": [reports[i].tolist()], "tokens": [tokens[i]]}
                barriers[i].wait(timeout=60)
                r = c.post(url, json=body)
                answers[i][proc] = r.json() if r.status_code == 200 else f"{r.status_code} {r.text[:200]}"

    threads = [threading.Thread(target=spender, args=(p, g)) for p in range(PROCESSES) for g in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for i, row in enumerate(answers):
        assert sorted(map(str, row)) == sorted(map(str, [{"accepted": 1, "duplicates": 0}]
                                                   + [{"accepted": 0, "duplicates": 1}] * (PROCESSES - 1))), (i, row)
    # Spent for good: sent again anywhere, each is a duplicate; then one release holds each report once.
    with httpx.Client(timeout=60.0) as c:
        for i, tok in enumerate(tokens):
            r = c.post(f"{collectors[i % PROCESSES].base}/v1/campaigns/{cid}/reports",
                       json={"reports": [reports[i].tolist()], "tokens": [tok]})
            assert r.json() == {"accepted": 0, "duplicates": 1}
    r = httpx.post(f"{collectors[2].base}/v1/campaigns/{cid}/releases", headers=AUTH, timeout=60)
    assert r.status_code == 201, r.text
    _check_releases(collectors, db_url, cid, reports)


def test_kill_9_of_one_process_loses_nothing_it_acknowledged(collectors: list[Collector], db_url: str,
                                                             tmp_path: Path) -> None:
    cid = _active(collectors[0].base)["id"]
    victim = Collector(db_url, tmp_path / "victim.log")
    try:
        victim.wait_ready()
        lock = threading.Lock()
        sent: list[tuple[str, list[int], bool, int]] = []  # (nonce, report, acknowledged, process: -1 the victim)
        made: list[dict[str, Any]] = []
        failures: list[str] = []
        stop = threading.Event()
        victim_acked = threading.Semaphore(0)

        def submitter(proc: int, seed: int) -> None:
            rng = np.random.default_rng(seed)
            base = victim.base if proc < 0 else collectors[proc].base
            with httpx.Client(timeout=10.0) as c:
                while not stop.is_set():
                    report = rng.integers(0, 2, size=BITS).tolist()
                    nonce = secrets.token_hex(32)
                    ok = False
                    try:
                        r = c.post(f"{base}/v1/campaigns/{cid}/reports",
                                   json={"reports": [report], "nonces": [nonce]})
                        ok = r.status_code == 200 and r.json() == {"accepted": 1, "duplicates": 0}
                        if not ok:
                            with lock:
                                failures.append(f"{r.status_code} {r.text[:200]}")
                    except httpx.HTTPError:
                        if proc >= 0:
                            with lock:
                                failures.append("a surviving process failed a request")
                    with lock:
                        sent.append((nonce, report, ok, proc))
                    if not ok and proc < 0:
                        return  # the victim is gone
                    if ok and proc < 0:
                        victim_acked.release()

        def releaser() -> None:
            with httpx.Client(timeout=60.0, headers=AUTH) as c:
                while not stop.is_set():
                    r = c.post(f"{collectors[1].base}/v1/campaigns/{cid}/releases")
                    with lock:
                        if r.status_code == 201:
                            made.append(r.json())
                        elif not (r.status_code == 409 and r.json()["error"]["code"] == "crowd_too_small"):
                            failures.append(f"release {r.status_code} {r.text[:200]}")
                    time.sleep(0.05)

        threads = [threading.Thread(target=submitter, args=(-1, i)) for i in range(8)]
        threads += [threading.Thread(target=submitter, args=(i % PROCESSES, 50 + i)) for i in range(PROCESSES)]
        threads.append(threading.Thread(target=releaser))
        for t in threads:
            t.start()
        for _ in range(300):  # at least 300 one-report requests acknowledged by the victim before the crash
            assert victim_acked.acquire(timeout=60), "the victim stopped acknowledging before the crash"
        os.kill(victim.proc.pid, signal.SIGKILL)
        victim.proc.wait(timeout=10)
        time.sleep(1.0)  # the survivors keep taking reports and releasing
        stop.set()
        for t in threads:
            t.join(timeout=60)
        assert not failures, failures[:5]
        by_victim = [s for s in sent if s[3] < 0]
        acknowledged = [s for s in sent if s[2]]
        assert sum(s[2] for s in by_victim) >= 300 and not all(s[2] for s in by_victim)  # killed mid-stream

        # Read directly: every acknowledged nonce is spent, and a report was stored with each spent nonce.
        by_release, spent = _db_counts(db_url, cid)
        missing = [s for s in acknowledged if s[0] not in spent]
        assert not missing, f"{len(missing)} acknowledged reports were lost"
        assert sum(by_release.values()) == len(spent)
        assert spent <= {s[0] for s in sent}

        # The survivors answer the victim's acknowledged requests as duplicates; the unacknowledged ones are
        # either stored (duplicate) or not (accepted now), never half.
        with httpx.Client(timeout=30.0) as c:
            for i, (nonce, report, ok, _) in enumerate(s for s in by_victim):
                r = c.post(f"{collectors[i % PROCESSES].base}/v1/campaigns/{cid}/reports",
                           json={"reports": [report], "nonces": [nonce]}).json()
                if ok:
                    assert r == {"accepted": 0, "duplicates": 1}
                else:
                    assert r in ({"accepted": 0, "duplicates": 1}, {"accepted": 1, "duplicates": 0})
        status = httpx.get(f"{collectors[2].base}/v1/campaigns/{cid}", timeout=30).json()
        if status["pending_reports"]:
            rng = np.random.default_rng(3)
            with httpx.Client(timeout=30.0) as c:
                for _ in range(max(0, CROWD - status["pending_reports"])):
                    nonce, report = secrets.token_hex(32), rng.integers(0, 2, size=BITS).tolist()
                    r = c.post(f"{collectors[0].base}/v1/campaigns/{cid}/reports",
                               json={"reports": [report], "nonces": [nonce]})
                    assert r.json() == {"accepted": 1, "duplicates": 0}
                    sent.append((nonce, report, True, 0))
            r = httpx.post(f"{collectors[2].base}/v1/campaigns/{cid}/releases", headers=AUTH, timeout=60)
            assert r.status_code == 201, r.text
        _check_releases(collectors, db_url, cid, np.array([s[1] for s in sent]))
    finally:
        victim.stop()
    # The servers logged start-up lines, never a request, a nonce or a report.
    logs = "".join(Path(p).read_text(errors="replace")
                   for p in [victim.log_path] + [c.log_path for c in collectors])
    assert "POST /v1" not in logs and "HTTP/1.1" not in logs
    assert not any(s[0] in logs for s in sent[:200])
