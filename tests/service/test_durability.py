"""Crash test: ``kill -9`` the collector mid-stream; every acknowledged report must survive, nothing half-written.

A real server (``python -m sufficientdp.cli serve``) runs on a temporary SQLite file; client threads submit
batches with nonces over raw HTTP and record which requests were acknowledged (200). The server is killed with
SIGKILL while they are sending, restarted on the same file, and then:

* every acknowledged batch, resubmitted, is answered entirely as duplicates (so it is stored);
* every batch that was in flight is either entirely stored or entirely absent (one transaction per request);
* after resubmitting everything, the store holds each report exactly once: the pending count equals the number of
  distinct reports sent, and a release's per-bit counts equal the column sums of everything sent;
* ``PRAGMA integrity_check`` is ``ok`` and every stored row has the packed length.

SIGKILL tests a process crash (the operating system's page cache survives); ``synchronous=FULL`` is what covers
power loss, which this test cannot simulate.
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
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.service.loopback import free_port  # noqa: E402

httpx = pytest.importorskip("httpx", reason="the durability test needs httpx (extra 'service')")
pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("uvicorn", reason="the collector service needs the 'service' extra")

BITS = 12
BATCH = 25
CROWD = 20
#: The served collector's admin token (administrative calls are closed without one).
ADMIN = secrets.token_hex(16)
AUTH = {"authorization": f"Bearer {ADMIN}"}




def _start(db: Path, port: int, log: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "SUFFICIENTDP_ADMIN_TOKEN": ADMIN}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sufficientdp.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--database", f"sqlite:///{db}", "--quiet", "--log-level", "info"],
        stdout=log, stderr=log, env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=1.0).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start within 60 s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _active_campaign(base: str, name: str) -> str:
    """Create a campaign with a given q (checked by a background job) and wait until it is active."""
    r = httpx.post(f"{base}/v1/campaigns", headers=AUTH, timeout=60,
                   json={"name": name, "bits": BITS, "epsilon": 2.0, "crowd_size": CROWD, "q": 0.45, "eta": 0.5,
                         "rate_limit": "none"})
    assert r.status_code == 202, r.text
    cid = str(r.json()["id"])
    deadline = time.monotonic() + 120
    while httpx.get(f"{base}/v1/campaigns/{cid}", timeout=10).json()["status"] == "calibrating":
        assert time.monotonic() < deadline, "the campaign never became active"
        time.sleep(0.1)
    assert httpx.get(f"{base}/v1/campaigns/{cid}", timeout=10).json()["status"] == "active"
    return cid


@pytest.mark.slow
def test_kill_9_keeps_every_acknowledged_report(tmp_path: Path) -> None:
    db = tmp_path / "collector.db"
    port = free_port()
    log = open(tmp_path / "server.log", "wb")  # closed in finally
    proc = _start(db, port, log)
    base = f"http://127.0.0.1:{port}"
    try:
        cid = _active_campaign(base, "crash")
        url = f"{base}/v1/campaigns/{cid}/reports"
        rng = np.random.default_rng(2024)
        lock = threading.Lock()
        sent: list[tuple[list[str], np.ndarray, bool]] = []  # (nonces, reports, acknowledged)
        stop = threading.Event()
        acked = threading.Semaphore(0)

        def worker(seed: int) -> None:
            local = np.random.default_rng(seed)
            with httpx.Client(timeout=10.0) as c:
                while not stop.is_set():
                    reports = local.integers(0, 2, size=(BATCH, BITS))
                    nonces = [secrets.token_hex(32) for _ in range(BATCH)]
                    ok = False
                    try:
                        resp = c.post(url, json={"reports": reports.tolist(), "nonces": nonces})
                        ok = resp.status_code == 200 and resp.json() == {"accepted": BATCH, "duplicates": 0}
                        if resp.status_code != 200:
                            stop.set()
                    except httpx.HTTPError:
                        stop.set()
                    with lock:
                        sent.append((nonces, reports, ok))
                    if ok:
                        acked.release()

        threads = [threading.Thread(target=worker, args=(int(rng.integers(1 << 30)),)) for _ in range(4)]
        for t in threads:
            t.start()
        for _ in range(40):  # at least 40 acknowledged batches before the crash
            assert acked.acquire(timeout=60), "the server stopped acknowledging before the crash"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        stop.set()
        for t in threads:
            t.join(timeout=30)
        acknowledged = [s for s in sent if s[2]]
        in_flight = [s for s in sent if not s[2]]
        assert len(acknowledged) >= 40 and in_flight  # each thread saw its last request fail: mid-stream

        proc = _start(db, port, log)
        status = httpx.get(f"{base}/v1/campaigns/{cid}", timeout=10).json()
        assert status["pending_reports"] >= BATCH * len(acknowledged)
        stored_before = status["pending_reports"]
        assert stored_before % BATCH == 0  # no request was half-written

        with httpx.Client(timeout=30.0) as c:
            for nonces, reports, _ in acknowledged:
                resp = c.post(url, json={"reports": reports.tolist(), "nonces": nonces})
                assert resp.json() == {"accepted": 0, "duplicates": BATCH}
            newly = 0
            for nonces, reports, _ in in_flight:
                resp = c.post(url, json={"reports": reports.tolist(), "nonces": nonces}).json()
                assert resp in ({"accepted": 0, "duplicates": BATCH}, {"accepted": BATCH, "duplicates": 0})
                newly += resp["accepted"]
        assert stored_before + newly == BATCH * len(sent)
        assert httpx.get(f"{base}/v1/campaigns/{cid}", timeout=10).json()["pending_reports"] == BATCH * len(sent)

        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            lengths = conn.execute("SELECT DISTINCT length(report) FROM reports").fetchall()
            assert lengths == [(-(-BITS // 8),)]
            assert conn.execute("SELECT COUNT(*) FROM spent").fetchone()[0] == BATCH * len(sent)
        finally:
            conn.close()

        release = httpx.post(f"{base}/v1/campaigns/{cid}/releases", headers=AUTH, timeout=60).json()
        everything = np.vstack([s[1] for s in sent])
        assert release["reports"] == everything.shape[0]
        assert [e["count"] for e in release["estimates"]] == everything.sum(axis=0).tolist()
    finally:
        _stop(proc)
        log.close()
    # At log level info the server logged start-up lines but no request: the access log is off.
    text = (tmp_path / "server.log").read_text(errors="replace")
    assert "Uvicorn running" in text or "Application startup complete" in text
    assert "POST /v1" not in text and "GET /v1" not in text and "HTTP/1.1" not in text


@pytest.mark.slow
def test_kill_9_under_concurrent_one_report_requests_loses_no_acknowledged_report(tmp_path: Path) -> None:
    """Group commit under load: many clients send one report per request (so the writer commits batches of
    requests), the server is killed with SIGKILL mid-stream, and the database, opened directly, holds every
    acknowledged report: its nonce is spent and the reports count equals the spent count (a report and its nonce
    are written in one savepoint of one transaction), and at most the unacknowledged requests are extra."""
    db = tmp_path / "collector.db"
    port = free_port()
    log = open(tmp_path / "server.log", "wb")  # closed in finally
    proc = _start(db, port, log)
    base = f"http://127.0.0.1:{port}"
    try:
        cid = _active_campaign(base, "crash-1")
        url = f"{base}/v1/campaigns/{cid}/reports"
        lock = threading.Lock()
        acknowledged: list[tuple[str, list[int]]] = []
        unacknowledged: list[str] = []
        stop = threading.Event()
        acked = threading.Semaphore(0)

        def worker(seed: int) -> None:
            local = np.random.default_rng(seed)
            with httpx.Client(timeout=10.0) as c:
                while not stop.is_set():
                    report = local.integers(0, 2, size=BITS).tolist()
                    nonce = secrets.token_hex(32)
                    ok = False
                    try:
                        resp = c.post(url, json={"reports": [report], "nonces": [nonce]})
                        ok = resp.status_code == 200 and resp.json() == {"accepted": 1, "duplicates": 0}
                        if resp.status_code != 200:
                            stop.set()
                    except httpx.HTTPError:
                        stop.set()
                    with lock:
                        (acknowledged.append((nonce, report)) if ok else unacknowledged.append(nonce))
                    if ok:
                        acked.release()

        threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(16)]
        for t in threads:
            t.start()
        for _ in range(300):  # at least 300 acknowledged one-report requests before the crash
            assert acked.acquire(timeout=60), "the server stopped acknowledging before the crash"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        stop.set()
        for t in threads:
            t.join(timeout=30)
        assert len(acknowledged) >= 300 and unacknowledged

        conn = sqlite3.connect(db)  # opened as the restarted collector would: the WAL is recovered
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            spent = {bytes(row[0]).hex() for row in conn.execute("SELECT nonce FROM spent WHERE campaign_id = ?",
                                                                  (cid,))}
            n_reports = conn.execute("SELECT COUNT(*) FROM reports WHERE campaign_id = ?", (cid,)).fetchone()[0]
        finally:
            conn.close()
        missing = [nonce for nonce, _ in acknowledged if nonce not in spent]
        assert not missing, f"{len(missing)} acknowledged reports were lost"
        assert n_reports == len(spent)  # no report without its nonce, no nonce without its report
        assert len(acknowledged) <= n_reports <= len(acknowledged) + len(unacknowledged)
        assert spent <= {nonce for nonce, _ in acknowledged} | set(unacknowledged)

        # The restarted collector answers every acknowledged request again as a duplicate.
        proc = _start(db, port, log)
        with httpx.Client(timeout=30.0) as c:
            for nonce, report in acknowledged[:50]:
                assert c.post(url, json={"reports": [report], "nonces": [nonce]}).json() == \
                    {"accepted": 0, "duplicates": 1}
        assert httpx.get(f"{base}/v1/campaigns/{cid}", timeout=10).json()["pending_reports"] == n_reports
    finally:
        _stop(proc)
        log.close()


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (Linux /proc)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _wait_gone(pids: list[int], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while any(_alive(pid) for pid in pids):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the job's process through /proc")
def test_kill_9_during_a_calibration_requeues_it_at_restart(tmp_path: Path) -> None:
    """The server dies mid-calibration: its job's process ends by itself, and the restarted server runs the job
    again from the stored request (restart rule, docs/collector_api_contract.md). A graceful stop (SIGTERM) kills
    the running job and leaves it stored for the next start."""
    db = tmp_path / "collector.db"
    port = free_port()
    log = open(tmp_path / "server.log", "wb")  # closed in finally
    proc = _start(db, port, log)
    base = f"http://127.0.0.1:{port}"
    try:
        # Checking this q takes about a second and a half (after the job's ~0.6 s start-up): long enough to
        # kill the server while it runs, short enough to run again after the restart.
        r = httpx.post(f"{base}/v1/campaigns", headers=AUTH, timeout=60,
                       json={"name": "restart", "bits": 12, "epsilon": 2.0, "crowd_size": 20, "eta": 0.5,
                             "q": 0.45, "rate_limit": "none"})
        assert r.status_code == 202 and r.json()["status"] == "calibrating", r.text
        cid = r.json()["id"]
        deadline = time.monotonic() + 30
        while not (jobs := _children(proc.pid)):
            assert time.monotonic() < deadline, "no calibration process appeared"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        _wait_gone(jobs, "the orphaned calibration process kept running")  # it notices within half a second

        proc = _start(db, port, log)
        deadline = time.monotonic() + 120
        while (c := httpx.get(f"{base}/v1/campaigns/{cid}", timeout=10).json())["status"] == "calibrating":
            assert time.monotonic() < deadline, "the re-queued calibration never finished"
            time.sleep(0.1)
        assert c["status"] == "active" and c["calibrated"] is False and c["eta_at_q"] <= 0.5

        # SIGTERM during a calibration of minutes (L = 32, q calibrated): the server stops its job's process.
        r = httpx.post(f"{base}/v1/campaigns", headers=AUTH, timeout=60,
                       json={"name": "long", "bits": 32, "epsilon": 1.0, "crowd_size": 300, "rate_limit": "none"})
        assert r.status_code == 202, r.text
        deadline = time.monotonic() + 30
        while not (jobs := _children(proc.pid)):
            assert time.monotonic() < deadline, "no calibration process appeared"
            time.sleep(0.05)
        _stop(proc)
        # A graceful stop (uvicorn re-raises SIGTERM after its shutdown: exit code 128 + 15), not the SIGKILL of
        # _stop's fallback.
        assert proc.returncode in (0, 128 + signal.SIGTERM), proc.returncode
        # Killed and reaped by the lifespan shutdown before the server exited (not by its watchdog, later).
        assert not any(_alive(pid) for pid in jobs), "the calibration process outlived the server's shutdown"
        con = sqlite3.connect(db)
        try:
            assert con.execute("SELECT campaign_id FROM jobs").fetchall() == [(r.json()["id"],)]
        finally:
            con.close()
    finally:
        _stop(proc)
        log.close()


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["serve", "--port", "0", "--database", "x.db"], {}, "port must be an integer in [1, 65535]"),
        (["serve", "--port", "http", "--database", "x.db"], {}, "port must be an integer"),
        (["serve", "--port", "8123", "--database", "mysql://localhost/x"], {}, "database must be"),
        (["serve", "--port", "8123", "--database", "x.db", "--max-body-bytes", "10"], {}, "max_body_bytes"),
        (["serve", "--port", "8123"], {}, "--database"),
        (["serve", "--port", "8123", "--database", "{db}"], {"SUFFICIENTDP_ADMIN_TOKEN": "short"},
         "SUFFICIENTDP_ADMIN_TOKEN must be at least 16"),
    ],
)
def test_serve_rejects_bad_input_with_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], argv: list[str],
                                             env: dict[str, str], message: str) -> None:
    from sufficientdp.cli.main import main

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{db}", str(tmp_path / "c.db")) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("sufficientdp: error:") and message in err and err.count("\n") == 1


def test_serve_json_prints_one_startup_line_without_the_database_url(tmp_path: Path) -> None:
    port = free_port()
    db = tmp_path / "secret-name.db"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("SUFFICIENTDP_ADMIN_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sufficientdp.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--database", f"sqlite:///{db}", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        import json

        info = json.loads(line)
        assert info == {"url": f"http://127.0.0.1:{port}", "openapi": f"http://127.0.0.1:{port}/openapi.json",
                        "admin": "closed"}
        assert "secret-name" not in line
        deadline = time.monotonic() + 60
        while True:
            try:
                assert httpx.get(info["openapi"], timeout=1.0).status_code == 200
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.1)
        # Without SUFFICIENTDP_ADMIN_TOKEN the administrative calls are closed.
        r = httpx.post(f"{info['url']}/v1/campaigns", timeout=10,
                       json={"name": "x", "bits": 1, "epsilon": 1.0, "crowd_size": 5, "rate_limit": "none"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "admin_disabled", r.text
    finally:
        _stop(proc)
