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
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

httpx = pytest.importorskip("httpx", reason="the durability test needs httpx (extra 'service')")
pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("uvicorn", reason="the collector service needs the 'service' extra")

BITS = 12
BATCH = 25
CROWD = 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(db: Path, port: int, log: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("SUFFICIENTDP_ADMIN_TOKEN", None)
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


@pytest.mark.slow
def test_kill_9_keeps_every_acknowledged_report(tmp_path: Path) -> None:
    db = tmp_path / "collector.db"
    port = _free_port()
    log = open(tmp_path / "server.log", "wb")  # closed in finally
    proc = _start(db, port, log)
    base = f"http://127.0.0.1:{port}"
    try:
        r = httpx.post(f"{base}/v1/campaigns", json={"name": "crash", "bits": BITS, "epsilon": 2.0,
                                                     "crowd_size": CROWD, "q": 0.45, "eta": 0.5,
                                                     "rate_limit": "none"}, timeout=60)
        assert r.status_code == 201, r.text
        cid = r.json()["id"]
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

        release = httpx.post(f"{base}/v1/campaigns/{cid}/releases", timeout=60).json()
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
    port = _free_port()
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
                        "admin_token_required": False}
        assert "secret-name" not in line
        deadline = time.monotonic() + 60
        while True:
            try:
                assert httpx.get(info["openapi"], timeout=1.0).status_code == 200
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.1)
    finally:
        _stop(proc)
