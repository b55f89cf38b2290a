"""Load benchmark of the collector service (``sufficientdp serve``): sustained reports/s and request latency.

A bounded load test on 127.0.0.1, against a **minimal FastAPI + SQLite endpoint measured in the same run** (the
baseline). Two servers run as subprocesses, each on a free port and a fresh SQLite file in WAL mode with
``synchronous=FULL``:

* the baseline: this file's :func:`baseline_app`, one ``POST /reports`` that validates the body with pydantic,
  inserts the report and its nonce and commits (one transaction and one fsync per request, commits serialized on
  one connection: the best a commit-per-request endpoint does on SQLite);
* the collector: ``python -m sufficientdp.cli serve`` with an admin token (``SUFFICIENTDP_ADMIN_TOKEN``). The
  campaign is created with the token (202) and polled until its background check of q makes it ``active``
  (``rate_limit="none"``, L = 8, epsilon = 1, N_min = 1000, q = 0.4).

The load comes from one client process: ``CONNECTIONS`` concurrent keep-alive HTTP/1.1 connections in an asyncio
loop (raw sockets: a few tens of microseconds of client CPU per request, so the 2 shared cores go mostly to the
server), each sending its next request as soon as the previous answer arrives, for ``PHASE_SECONDS`` per phase:

* ``baseline``: the minimal endpoint, one report per request;
* ``GET campaign``: ``GET /v1/campaigns/{id}`` (a read: the cost of the HTTP stack and the framework);
* ``batch 1``: ``POST .../reports`` with one report and its idempotency nonce per request (the privacy design);
* ``batch 100``: 100 reports per request;
* ``batch 1, fresh connection``: one report per request on a new TCP connection each time (what
  ``sufficientdp.client.Reporter`` does by default, so that reports are not linked by connection);
* ``2 processes on one SQLite file``: ``batch 1`` against two ``serve --reuse-port`` processes on one port and one
  database file (the kernel spreads the connections over them), then the baseline again (a fresh server), to show
  how much the shared machine's load drifted during the run;
* with PostgreSQL (see below): ``batch 1`` against one collector process on PostgreSQL, then against two
  processes sharing the database (the connections alternate between them).

PostgreSQL: the database URL in ``$SUFFICIENTDP_BENCH_POSTGRES_URL`` (a fresh database is created in it and dropped
afterwards when the role may), else a throwaway server started with ``scripts/ci_postgres.sh`` if ``initdb`` is
installed (never installing anything), else those phases are left out, saying so. For a server the benchmark
started itself, the server CPU per request also counts the PostgreSQL server's processes (postmaster and
backends); otherwise it is the collector processes only.

For each phase: requests/s and reports/s over the phase, p50/p99 latency, the server process's CPU time per
request (from ``/proc``: the part that does not depend on how busy the shared machine is), the load generator's
own CPU time per request (it shares the cores with the servers), and the ratio of
reports/s to the baseline. Every answer is checked (status 200, ``accepted`` = the batch size) and after the run the collector's
pending count must equal the number of reports sent. Absolute numbers depend on the load of the shared machine;
the ratios are the meaningful part.

Usage: ``.venv/bin/python benchmarks/bench_collector.py`` (prints a markdown section; ``main()`` returns it).
``--baseline-server PORT DB`` runs the baseline server (used internally). Needs the ``service`` extra and httpx.
"""

import asyncio
import glob
import json
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HOST = "127.0.0.1"
CONNECTIONS = 32
PHASE_SECONDS = 5.0
BITS = 8
CAMPAIGN = {"name": "bench", "bits": BITS, "epsilon": 1.0, "eta": 0.001, "crowd_size": 1000,
            "reports_per_person": 1, "q": 0.4, "precision": 32, "rate_limit": "none"}
STARTUP_TIMEOUT = 60.0
ACTIVE_TIMEOUT = 300.0
SEED = 20240611
ADMIN = secrets.token_hex(16)
POSTGRES_URL_ENV = "SUFFICIENTDP_BENCH_POSTGRES_URL"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ci_postgres.sh"


def _active_campaign(url: str) -> dict[str, Any]:
    """Create the benchmark's campaign on the collector at ``url`` and wait until it is active."""
    import httpx

    auth = {"authorization": f"Bearer {ADMIN}"}
    created = httpx.post(f"{url}/v1/campaigns", json=CAMPAIGN, headers=auth, timeout=60.0)
    if created.status_code != 202:
        raise RuntimeError(f"campaign creation failed: {created.status_code} {created.text[:500]}")
    cid = created.json()["id"]
    deadline = time.monotonic() + ACTIVE_TIMEOUT
    while (campaign := httpx.get(f"{url}/v1/campaigns/{cid}", timeout=30.0).json())["status"] == "calibrating":
        if time.monotonic() > deadline:
            raise RuntimeError(f"the campaign was not active within {ACTIVE_TIMEOUT:.0f} s")
        time.sleep(0.2)
    if campaign["status"] != "active":
        raise RuntimeError(f"the campaign failed: {campaign.get('error')}")
    return dict(campaign)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


# ------------------------------------------------------------------------------------------------- baseline
def baseline_app(database: str) -> Any:
    """The minimal FastAPI + SQLite endpoint: ``POST /reports`` stores one report per request, one commit each."""
    from fastapi import FastAPI, HTTPException
    from pydantic import BaseModel

    conn = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS reports (id BLOB PRIMARY KEY, report BLOB NOT NULL) WITHOUT ROWID")
    conn.execute("CREATE TABLE IF NOT EXISTS spent (nonce BLOB PRIMARY KEY) WITHOUT ROWID")
    lock = threading.Lock()

    class ReportsIn(BaseModel):
        reports: list[list[int]]
        nonces: list[str]

    app = FastAPI()

    @app.post("/reports")
    def post(body: ReportsIn) -> dict[str, int]:
        if len(body.reports) != 1 or len(body.nonces) != 1 or any(v not in (0, 1) for v in body.reports[0]):
            raise HTTPException(400, "one report of 0/1 and its nonce")
        packed = bytes(np.packbits(np.asarray(body.reports[0], dtype=np.uint8), bitorder="little"))
        with lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("INSERT INTO spent (nonce) VALUES (?)", (bytes.fromhex(body.nonces[0]),))
                conn.execute("INSERT INTO reports (id, report) VALUES (?, ?)", (secrets.token_bytes(16), packed))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return {"accepted": 1, "duplicates": 0}

    return app


def _run_baseline_server(port: int, database: str) -> None:
    import uvicorn

    uvicorn.run(baseline_app(database), host=HOST, port=port, access_log=False, log_level="warning")


# --------------------------------------------------------------------------------------------------- servers
class Server:
    """A server subprocess on a free port, stopped (by its own pid) on exit."""

    def __init__(self, workdir: Path, name: str, baseline: bool, database: str | None = None, *,
                 port: int | None = None, reuse_port: bool = False) -> None:
        self.port = _free_port() if port is None else port
        self.url = f"http://{HOST}:{self.port}"
        self.workdir = workdir
        self.logfile = workdir / f"{name}.log"
        self.log = open(self.logfile, "wb")  # noqa: SIM115 - closed in stop()
        db = workdir / f"{name}.db"
        if baseline:
            cmd = [sys.executable, __file__, "--baseline-server", str(self.port), str(db)]
        else:
            cmd = [sys.executable, "-m", "sufficientdp.cli", "serve", "--host", HOST, "--port", str(self.port),
                   "--database", database or f"sqlite:///{db}", "--log-level", "warning"]
            if reuse_port:
                cmd.append("--reuse-port")
        env = {**os.environ, "SUFFICIENTDP_ADMIN_TOKEN": ADMIN}
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with code {self.proc.returncode}:\n{self.tail()}")
            try:
                httpx.get(f"{self.url}/openapi.json", timeout=1.0)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"the server did not answer within {STARTUP_TIMEOUT:.0f} s:\n{self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return self.logfile.read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# ---------------------------------------------------------------------------------------------------- client
async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> tuple[int, bytes]:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return status, await reader.readexactly(length)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its reaped children (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process, its reaped children and its live children (a PostgreSQL postmaster and its
    backends; Linux /proc; NaN elsewhere)."""
    total = _cpu_seconds(pid)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            total += sum(int(x) for x in fields[11:13]) / os.sysconf("SC_CLK_TCK")
    return total


def _phase(ports: list[int], make: Callable[[int], tuple[bytes, int]], *, fresh: bool, seconds: float,
           pids: list[int], tree_pids: tuple[int, ...] = ()) -> dict[str, float]:
    """``CONNECTIONS`` concurrent clients send requests back to back for ``seconds``; rates and latencies.

    ``make(i)`` is the i-th raw HTTP request and the number of reports it carries (0 for a read). Client ``c``
    talks to ``ports[c % len(ports)]``; the server CPU is that of ``pids`` plus the process trees ``tree_pids``.
    """
    latencies: list[float] = []
    counts = [0]

    async def client(c: int, stop_at: float) -> None:
        port = ports[c % len(ports)]
        conn = None if fresh else await asyncio.open_connection(HOST, port)
        i = 0
        try:
            while time.perf_counter() < stop_at:
                raw, n = make(c * 10_000_000 + i)
                t0 = time.perf_counter()
                if fresh:
                    r, w = await asyncio.open_connection(HOST, port)
                    status, body = await _request(r, w, raw)
                    w.close()
                else:
                    assert conn is not None
                    status, body = await _request(conn[0], conn[1], raw)
                latencies.append(time.perf_counter() - t0)
                if status != 200 or (n and json.loads(body).get("accepted") != n):
                    raise RuntimeError(f"request failed: {status} {body[:200]!r}")
                counts[0] += n
                i += 1
        finally:
            if conn is not None:
                conn[1].close()

    async def run_all() -> float:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(c, t0 + seconds) for c in range(CONNECTIONS)))
        return time.perf_counter() - t0

    def server_cpu() -> float:
        return sum(_cpu_seconds(p) for p in pids) + sum(_tree_cpu_seconds(p) for p in tree_pids)

    cpu0, load0 = server_cpu(), time.process_time()
    elapsed = asyncio.run(run_all())
    cpu, load = server_cpu() - cpu0, time.process_time() - load0
    lat = np.asarray(latencies)
    return {"requests": float(lat.size), "reports": float(counts[0]), "seconds": elapsed,
            "server_cpu_ms": 1e3 * cpu / max(1, lat.size), "client_cpu_ms": 1e3 * load / max(1, lat.size),
            "req_per_s": lat.size / elapsed, "reports_per_s": counts[0] / elapsed,
            "p50_ms": 1e3 * float(np.percentile(lat, 50)), "p99_ms": 1e3 * float(np.percentile(lat, 99))}


def _post(path: str, port: int, body: dict[str, Any], *, fresh: bool) -> bytes:
    data = json.dumps(body, separators=(",", ":")).encode()
    conn = b"close" if fresh else b"keep-alive"
    return (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: " + f"{HOST}:{port}".encode() +
            b"\r\nContent-Type: application/json\r\nConnection: " + conn + b"\r\nContent-Length: " +
            str(len(data)).encode() + b"\r\n\r\n" + data)


def run(seconds: float = PHASE_SECONDS) -> tuple[list[tuple[str, dict[str, float]]], dict[str, Any]]:
    """Start both servers, create the campaign, run the phases; per-phase results and the campaign."""
    import httpx

    from sufficientdp import randomize

    with tempfile.TemporaryDirectory(prefix="bench-collector-") as tmp:
        base = Server(Path(tmp), "baseline", baseline=True)
        server = Server(Path(tmp), "collector", baseline=False)
        try:
            base.wait_ready()
            server.wait_ready()
            campaign = _active_campaign(server.url)
            cid = campaign["id"]
            pool = randomize(np.random.default_rng(SEED).integers(0, 2, size=(4096, BITS)), q=campaign["q"],
                             rng=np.random.default_rng(SEED + 1)).tolist()
            get_raw = (f"GET /v1/campaigns/{cid} HTTP/1.1\r\nHost: {HOST}:{server.port}\r\n\r\n").encode()

            def post(port: int, path: str, batch: int, fresh: bool) -> Callable[[int], tuple[bytes, int]]:
                def make(i: int) -> tuple[bytes, int]:
                    rows = [pool[(i * batch + j) % len(pool)] for j in range(batch)]
                    body = {"reports": rows, "nonces": [secrets.token_hex(32) for _ in range(batch)]}
                    return _post(path, port, body, fresh=fresh), batch
                return make

            reports_path = f"/v1/campaigns/{cid}/reports"
            phases: list[tuple[str, Server, Callable[[int], tuple[bytes, int]], bool]] = [
                ("baseline: minimal FastAPI + SQLite, 1 report per request", base,
                 post(base.port, "/reports", 1, False), False),
                ("collector: GET campaign (read)", server, lambda i: (get_raw, 0), False),
                ("collector: POST reports, batch 1", server, post(server.port, reports_path, 1, False), False),
                ("collector: POST reports, batch 100", server, post(server.port, reports_path, 100, False), False),
                ("collector: POST reports, batch 1, fresh connection", server,
                 post(server.port, reports_path, 1, True), True),
            ]
            results = [(name, _phase([srv.port], fn, fresh=fresh, seconds=seconds, pids=[srv.proc.pid]))
                       for name, srv, fn, fresh in phases]
            final = httpx.get(f"{server.url}/v1/campaigns/{cid}", timeout=30.0).json()
            stored = sum(int(r["reports"]) for name, r in results[2:])
            if int(final.get("pending_reports", -1)) != stored:
                raise RuntimeError(f"server holds {final.get('pending_reports')} reports; clients sent {stored}")
            return results, campaign
        finally:
            server.stop()
            base.stop()


class _Postgres:
    """A PostgreSQL database for the benchmark: ``url``, the postmaster's pid if this process started the server
    (else None), or ``skip`` saying why there is none. A context manager: drops the database and stops the server
    it made."""

    def __init__(self) -> None:
        self.url: str | None = None
        self.postmaster: int | None = None
        self.skip = ""
        self._dir: str | None = None
        self._server_url: str | None = None
        self._db: str | None = None

    def __enter__(self) -> "_Postgres":
        try:
            import psycopg
        except ImportError:
            self.skip = "psycopg is not installed (extra 'service')"
            return self
        server_url = os.environ.get(POSTGRES_URL_ENV)
        if not server_url:
            if shutil.which("initdb") is None and not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
                self.skip = f"no PostgreSQL: set {POSTGRES_URL_ENV} or install initdb"
                return self
            self._dir = tempfile.mkdtemp(prefix="bench-collector-pg-")
            os.chmod(self._dir, 0o755)  # the server runs as another user when we are root
            out = subprocess.run(["bash", str(SCRIPT), os.path.join(self._dir, "pg")], check=True, text=True,
                                 capture_output=True, env={**os.environ, "SUFFICIENTDP_PG_NO_INSTALL": "1"},
                                 timeout=180)
            server_url = out.stdout.strip().splitlines()[-1]
            pid_file = Path(self._dir, "pg", "data", "postmaster.pid")
            self.postmaster = int(pid_file.read_text().split()[0])
        self._server_url = server_url
        name = "sdp_bench_" + secrets.token_hex(6)
        try:
            with psycopg.connect(server_url, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            self._db = name
            from urllib.parse import urlsplit, urlunsplit

            self.url = urlunsplit(urlsplit(server_url)._replace(path="/" + name))
        except psycopg.Error:  # no CREATE DATABASE privilege: use the given database
            self.url = server_url
        return self

    def __exit__(self, *exc: object) -> None:
        if self._db is not None and self._server_url is not None:
            import psycopg

            with psycopg.connect(self._server_url, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {self._db} WITH (FORCE)")
        if self._dir is not None:
            pid_file = Path(self._dir, "pg", "data", "postmaster.pid")
            if self.postmaster is not None and pid_file.exists():
                os.kill(self.postmaster, signal.SIGINT)  # fast shutdown
                deadline = time.monotonic() + 30
                while pid_file.exists() and time.monotonic() < deadline:
                    time.sleep(0.1)
            shutil.rmtree(self._dir, ignore_errors=True)


def run_sqlite_processes(seconds: float = PHASE_SECONDS) -> list[tuple[str, dict[str, float]]]:
    """One-report requests to two collector processes on one SQLite file and one port (``serve --reuse-port``:
    the kernel spreads the connections), then to the baseline again (how much the machine's load drifted)."""
    import httpx

    from sufficientdp import randomize

    with tempfile.TemporaryDirectory(prefix="bench-collector-sqlite-") as tmp:
        base = Server(Path(tmp), "baseline-again", baseline=True)
        port = _free_port()
        database = f"sqlite:///{Path(tmp) / 'shared.db'}"
        servers = [Server(Path(tmp), f"shared{i}", baseline=False, database=database, port=port, reuse_port=True)
                   for i in range(2)]
        try:
            for srv in [base, *servers]:
                srv.wait_ready()
            campaign = _active_campaign(servers[0].url)
            cid = campaign["id"]
            pool = randomize(np.random.default_rng(SEED).integers(0, 2, size=(4096, BITS)), q=campaign["q"],
                             rng=np.random.default_rng(SEED + 1)).tolist()

            def post(path: str) -> Callable[[int], tuple[bytes, int]]:
                def make(i: int) -> tuple[bytes, int]:
                    body = {"reports": [pool[i % len(pool)]], "nonces": [secrets.token_hex(32)]}
                    return _post(path, port, body, fresh=False), 1
                return make

            results = [("collector, 2 processes on one SQLite file and one port (`--reuse-port`): POST reports, "
                        "batch 1", _phase([port], post(f"/v1/campaigns/{cid}/reports"), fresh=False,
                                          seconds=seconds, pids=[s.proc.pid for s in servers]))]
            final = httpx.get(f"{servers[1].url}/v1/campaigns/{cid}", timeout=30.0).json()
            if int(final.get("pending_reports", -1)) != int(results[0][1]["reports"]):
                raise RuntimeError(f"servers hold {final.get('pending_reports')} reports; clients sent "
                                   f"{results[0][1]['reports']:.0f}")
            results.append(("baseline again (after the collector phases)",
                            _phase([base.port], post("/reports"), fresh=False, seconds=seconds,
                                   pids=[base.proc.pid])))
            return results
        finally:
            for srv in [*servers, base]:
                srv.stop()


def run_postgres(pg: _Postgres, seconds: float = PHASE_SECONDS) -> list[tuple[str, dict[str, float]]]:
    """One-report requests to one, then two collector processes sharing the PostgreSQL database ``pg.url``."""
    import httpx

    from sufficientdp import randomize

    assert pg.url is not None
    tree = () if pg.postmaster is None else (pg.postmaster,)
    with tempfile.TemporaryDirectory(prefix="bench-collector-pg-logs-") as tmp:
        servers = [Server(Path(tmp), f"pg{i}", baseline=False, database=pg.url) for i in range(2)]
        try:
            for srv in servers:
                srv.wait_ready()
            first = servers[0]
            campaign = _active_campaign(first.url)
            cid = campaign["id"]
            pool = randomize(np.random.default_rng(SEED).integers(0, 2, size=(4096, BITS)), q=campaign["q"],
                             rng=np.random.default_rng(SEED + 1)).tolist()
            path = f"/v1/campaigns/{cid}/reports"

            def make(i: int) -> tuple[bytes, int]:
                body = {"reports": [pool[i % len(pool)]], "nonces": [secrets.token_hex(32)]}
                return _post(path, first.port, body, fresh=False), 1

            results = []
            for n in (1, 2):
                label = "1 process" if n == 1 else f"{n} processes"
                results.append((f"collector on PostgreSQL, {label}: POST reports, batch 1",
                                _phase([s.port for s in servers[:n]], make, fresh=False, seconds=seconds,
                                       pids=[s.proc.pid for s in servers[:n]], tree_pids=tree)))
            final = httpx.get(f"{servers[1].url}/v1/campaigns/{cid}", timeout=30.0).json()
            stored = sum(int(r["reports"]) for _, r in results)
            if int(final.get("pending_reports", -1)) != stored:
                raise RuntimeError(f"server holds {final.get('pending_reports')} reports; clients sent {stored}")
            return results
        finally:
            for srv in servers:
                srv.stop()


def main() -> str:
    """Run the load test and return a markdown section."""
    t0 = time.perf_counter()
    results, campaign = run()
    results += run_sqlite_processes()
    with _Postgres() as pg:
        if pg.url is not None:
            results += run_postgres(pg)
    total = time.perf_counter() - t0
    base = results[0][1]
    lines = [
        "## Collector service under load (`sufficientdp serve`, SQLite and PostgreSQL)",
        "",
        (f"{CONNECTIONS} concurrent keep-alive connections from one asyncio client process on 127.0.0.1 send "
         f"requests back to back for {PHASE_SECONDS:.0f} s per phase (same machine as the servers; all share the "
         f"2 cores). Campaign: L = {campaign['bits']}, q = {campaign['q']:.6g}, rate_limit = none; every report "
         "carries a fresh 32-byte idempotency nonce. Baseline: a minimal FastAPI + SQLite endpoint "
         "(`benchmarks/bench_collector.py` `baseline_app`: WAL, synchronous=FULL, one commit per request) in the "
         "same run. After the run the collector's pending count equals the number of reports sent. "
         + ("PostgreSQL phases: not run (" + pg.skip + "). " if pg.url is None else
            "PostgreSQL phases: one, then two `serve` processes on one database (connections alternate between "
            "them); server CPU " + ("includes the PostgreSQL server's processes. " if pg.postmaster is not None
                                    else "is the collector processes' only. "))
         + f"Total benchmark time {total:.0f} s."),
        "",
        "| phase | requests/s | reports/s | p50 ms | p99 ms | server CPU ms per request | client CPU ms per request "
        "| reports/s vs baseline |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results:
        ratio = f"{r['reports_per_s'] / base['reports_per_s']:.2f}" if r["reports"] else "-"
        lines.append(f"| {name} | {r['req_per_s']:.0f} | {r['reports_per_s']:.0f} | {r['p50_ms']:.1f} | "
                     f"{r['p99_ms']:.1f} | {r['server_cpu_ms']:.2f} | {r['client_cpu_ms']:.2f} | {ratio} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--baseline-server":
        _run_baseline_server(int(sys.argv[2]), sys.argv[3])
    else:
        print(main())
