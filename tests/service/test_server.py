"""The collector over real sockets on 127.0.0.1 (issue 13): request read timeouts, and the shutdown (SIGTERM within
seconds, the SQLite WAL checkpointed and truncated).

The read-timeout tests serve the app with uvicorn in a thread; the shutdown tests run ``sufficientdp serve`` in a
child process and send it SIGTERM. All traffic stays on the loopback interface.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("uvicorn", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")
httpx = pytest.importorskip("httpx", reason="the collector service needs the 'service' extra")

from tests.service.loopback import LoopbackServer, free_port  # noqa: E402

from sufficientdp.cli._cmd_serve import SHUTDOWN_GRACE  # noqa: E402
from sufficientdp.service.app import create_app  # noqa: E402
from sufficientdp.service.server import header_deadline_protocol  # noqa: E402

ADMIN = "admin-" + "0" * 20
AUTH = {"authorization": f"Bearer {ADMIN}"}
CAMPAIGN: dict[str, Any] = {"name": "socket", "bits": 4, "epsilon": 1.0, "crowd_size": 5, "q": 0.45, "eta": 0.5,
                            "rate_limit": "none"}
READ_TIMEOUT = 1.0


# ------------------------------------------------------------------------------------------------ helpers
def _raw(port: int, head: bytes, body: bytes) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    conn.sendall(head + body)
    return conn


def _read_all(conn: socket.socket, limit: float) -> tuple[bytes, float, bool]:
    """Everything the server sends until it closes the connection (or ``limit`` seconds): data, time, closed."""
    start = time.monotonic()
    conn.settimeout(0.2)
    data = b""
    while time.monotonic() - start < limit:
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            return data, time.monotonic() - start, True
        data += chunk
    return data, time.monotonic() - start, False


def _response(data: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


@pytest.fixture(scope="module", params=["httptools", "h11"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """The collector over real sockets, with each HTTP/1.1 implementation the header deadline supports."""
    if request.param == "httptools":
        pytest.importorskip("httptools", reason="uvicorn's httptools protocol needs httptools")
    app = create_app(str(tmp_path_factory.mktemp("socket") / "collector.db"), admin_token=ADMIN,
                     read_timeout=READ_TIMEOUT)
    try:
        with LoopbackServer(app, header_deadline_protocol(READ_TIMEOUT, request.param)) as server:
            url = f"http://127.0.0.1:{server.port}"
            cid = httpx.post(f"{url}/v1/campaigns", json=CAMPAIGN, headers=AUTH).json()["id"]
            deadline = time.monotonic() + 120
            while httpx.get(f"{url}/v1/campaigns/{cid}").json()["status"] == "calibrating":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            yield server.port, cid
    finally:
        app.state.jobs.close()
        app.state.storage.close()


# ------------------------------------------------------------------------------------------- read timeouts
def _post_head(cid: str, length: int) -> bytes:
    return (f"POST /v1/campaigns/{cid}/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def test_a_body_that_never_arrives_gets_408_and_the_connection_is_closed(served: tuple[int, str]) -> None:
    port, cid = served
    conn = _raw(port, _post_head(cid, 1000), b"{")  # declares 1000 bytes, sends 1
    try:
        # Meanwhile the server answers others.
        assert httpx.get(f"http://127.0.0.1:{port}/v1/campaigns/{cid}", timeout=10).status_code == 200
        data, elapsed, closed = _read_all(conn, 15)
    finally:
        conn.close()
    status, body = _response(data)
    assert (status, body["error"]["code"]) == (408, "request_timeout")
    assert f"{READ_TIMEOUT:g} s" in body["error"]["message"]
    assert closed and READ_TIMEOUT * 0.5 <= elapsed <= READ_TIMEOUT + 5


def test_a_trickling_body_gets_408_at_the_deadline_not_per_chunk(served: tuple[int, str]) -> None:
    port, cid = served
    body = json.dumps({"reports": [[0, 1, 0, 1]]}).encode()
    conn = _raw(port, _post_head(cid, len(body)), b"")
    start = time.monotonic()
    try:
        for byte in body:  # one byte every 0.1 s: each read is quick, the whole body is not
            try:
                conn.sendall(bytes([byte]))
            except OSError:  # the server already answered and closed
                break
            time.sleep(0.1)
            if time.monotonic() - start > READ_TIMEOUT + 2:
                break
        data, _, closed = _read_all(conn, 10)
    finally:
        conn.close()
    assert _response(data)[0] == 408 and closed
    assert time.monotonic() - start <= READ_TIMEOUT + 10


def test_a_whole_body_in_time_is_served_normally(served: tuple[int, str]) -> None:
    port, cid = served
    body = json.dumps({"reports": [[0, 1, 0, 1]]}).encode()
    conn = _raw(port, _post_head(cid, len(body)).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"), body)
    try:
        data, _, _ = _read_all(conn, 15)
    finally:
        conn.close()
    assert _response(data) == (200, {"accepted": 1, "duplicates": 0})


def test_headers_that_never_complete_and_silent_connections_are_closed(served: tuple[int, str]) -> None:
    port, cid = served
    partial = _raw(port, f"POST /v1/campaigns/{cid}/reports HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode(), b"")
    silent = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        for conn in (partial, silent):
            data, elapsed, closed = _read_all(conn, 15)
            assert closed and data == b"" and elapsed <= READ_TIMEOUT + 5
    finally:
        partial.close()
        silent.close()


def test_slow_but_timely_headers_and_keep_alive_are_served(served: tuple[int, str]) -> None:
    port, cid = served
    conn = _raw(port, f"GET /v1/campaigns/{cid} HTTP/1.1\r\n".encode(), b"")
    try:
        time.sleep(READ_TIMEOUT / 2)
        conn.sendall(b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data, _, _ = _read_all(conn, 15)
    finally:
        conn.close()
    assert data.startswith(b"HTTP/1.1 200")
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:  # one connection, kept alive
        for _ in range(3):
            assert client.get(f"/v1/campaigns/{cid}").status_code == 200
            time.sleep(READ_TIMEOUT / 2)


def test_header_deadline_is_validated() -> None:
    for bad in (0, -1, 3601, float("nan"), True, "5"):
        with pytest.raises(ValueError, match="seconds"):
            header_deadline_protocol(bad)
    with pytest.raises(ValueError, match="implementation"):
        header_deadline_protocol(5, "uvloop")


def test_read_timeout_is_validated(tmp_path: Path) -> None:
    from sufficientdp._errors import ParameterError

    for bad in (0, -1.0, 3601, float("nan"), "30", True):
        with pytest.raises(ParameterError, match="read_timeout"):
            create_app(str(tmp_path / "x.db"), read_timeout=bad)


# ----------------------------------------------------------------------------------------------- shutdown


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """Start ``sufficientdp serve`` on 127.0.0.1; yields a starter returning (process, url, database path)."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(*extra: str) -> tuple[subprocess.Popen[bytes], str, Path]:
        db = tmp_path / "collector.db"
        port = free_port()
        env = {**os.environ, "SUFFICIENTDP_ADMIN_TOKEN": ADMIN}
        proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from sufficientdp.cli.main import main; sys.exit(main())",
             "serve", "--database", str(db), "--host", "127.0.0.1", "--port", str(port), "--quiet", *extra],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                if httpx.get(f"{url}/openapi.json", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the collector did not start"
            time.sleep(0.1)
        return proc, url, db

    yield start
    for proc in procs:  # only the processes this test started
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def _terminate(proc: subprocess.Popen[bytes]) -> tuple[float, str]:
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate(timeout=30)
        pytest.fail("the collector did not stop within 30 s of SIGTERM")
    return time.monotonic() - start, err.decode(errors="replace")


def _wal(db: Path) -> Path:
    return db.with_name(db.name + "-wal")


def test_clean_shutdown_checkpoints_and_truncates_the_wal(serve: Any) -> None:
    proc, url, db = serve()
    cid = httpx.post(f"{url}/v1/campaigns", json=CAMPAIGN, headers=AUTH, timeout=30).json()["id"]
    deadline = time.monotonic() + 120
    while httpx.get(f"{url}/v1/campaigns/{cid}", timeout=10).json()["status"] == "calibrating":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    for _ in range(5):
        r = httpx.post(f"{url}/v1/campaigns/{cid}/reports", json={"reports": [[0, 1, 1, 0]] * 20}, timeout=30)
        assert r.json() == {"accepted": 20, "duplicates": 0}
    assert _wal(db).exists() and _wal(db).stat().st_size > 0  # commits sit in the WAL while serving
    elapsed, err = _terminate(proc)
    assert elapsed < SHUTDOWN_GRACE + 10, err
    assert "Traceback" not in err
    assert not _wal(db).exists() or _wal(db).stat().st_size == 0
    # Everything acknowledged is in the main database file.
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT count(*) FROM reports").fetchone()[0] == 100
    finally:
        conn.close()


def test_sigterm_stops_within_seconds_despite_a_stalled_client_and_a_running_calibration(serve: Any) -> None:
    proc, url, db = serve("--read-timeout", "600")
    # A calibration that runs for many seconds (L = 256, k = 2, N_min = 300, q = null: 17 s on a quiet 2-core
    # machine; L = 64 at N_min = 10**6 and eta = 1e-6, used before, now takes 0.7 s) in its child process...
    r = httpx.post(f"{url}/v1/campaigns", headers=AUTH, timeout=30,
                   json={"name": "long", "bits": 256, "epsilon": 1.0, "crowd_size": 300, "q": None,
                         "reports_per_person": 2, "rate_limit": "none"})
    assert r.status_code == 202
    slow_id = r.json()["id"]
    # ... and a client that declared a body and stalls (its read deadline is far away).
    stalled = _raw(int(url.rsplit(":", 1)[1]), _post_head(slow_id, 1000), b"{")
    try:
        time.sleep(1.0)
        assert httpx.get(f"{url}/v1/campaigns/{slow_id}", timeout=10).json()["status"] == "calibrating"
        elapsed, err = _terminate(proc)
        data, _, closed = _read_all(stalled, 10)
    finally:
        stalled.close()
    assert elapsed < SHUTDOWN_GRACE + 10, (elapsed, err)
    # The stalled client was told, and its connection closed.
    assert _response(data)[0] == 503 and _response(data)[1]["error"]["code"] == "shutting_down" and closed
    assert "Traceback" not in err
    assert not _wal(db).exists() or _wal(db).stat().st_size == 0
    # The interrupted calibration is still recorded as calibrating: the next collector queues it again.
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT count(*) FROM campaigns").fetchone()[0] == 1
    finally:
        conn.close()
