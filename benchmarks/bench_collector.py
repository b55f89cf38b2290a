"""Load benchmark of the collector service (``sufficientdp serve``): sustained reports/s and request latency.

A bounded load test on 127.0.0.1. It starts ``python -m sufficientdp.cli serve`` on a free port with a fresh SQLite
database, creates a campaign with ``rate_limit="none"`` and a given q (L = 8, epsilon = 1, N_min = 1000,
q = 0.4: certified eta ~ 1e-92 <= 1e-3, about 2 s of certification), then runs four phases of ``PHASE_SECONDS``
each, with ``THREADS`` client threads sending requests back to back:

* ``baseline``: ``GET /v1/campaigns/{id}`` (a read of one row: the cost of the HTTP stack and the framework);
* ``batch 1``: ``POST .../reports`` with one report and its idempotency nonce per request (keep-alive);
* ``batch 100``: the same with 100 reports per request;
* ``batch 1, fresh connection``: one report per request on a new TCP connection each time (what
  ``sufficientdp.client.Reporter`` does by default, so that reports are not linked by connection).

For each phase: requests/s and reports/s sustained over the phase, p50/p99 latency per request, and the ratios to
the baseline measured in the same run. Client threads share the 2 cores with the server, so absolute numbers are a
floor; the ratios are the meaningful part. Total run time: about 30 s (server start, campaign certification, four
phases).

Usage: ``.venv/bin/python benchmarks/bench_collector.py`` (prints a markdown section; ``main()`` returns it).
Needs the ``service`` extra (fastapi, uvicorn) for the server and httpx for the client threads.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sufficientdp import randomize

HOST = "127.0.0.1"
THREADS = 4
PHASE_SECONDS = 5.0
BITS = 8
CAMPAIGN = {"name": "bench", "bits": BITS, "epsilon": 1.0, "eta": 0.001, "crowd_size": 1000,
            "reports_per_person": 1, "q": 0.4, "precision": 32, "rate_limit": "none"}
STARTUP_TIMEOUT = 30.0
SEED = 20240611


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def serve_command(port: int, database: str) -> list[str]:
    """The command that starts the collector (the CLI's ``serve``)."""
    return [sys.executable, "-m", "sufficientdp.cli", "serve", "--host", HOST, "--port", str(port),
            "--database", database]


class Server:
    """``python -m sufficientdp.cli serve`` as a subprocess, stopped (by its own pid) on exit."""

    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.log = open(workdir / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        cmd = serve_command(self.port, f"sqlite:///{workdir / 'bench.db'}")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=dict(os.environ))
        self.workdir = workdir

    def wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the collector exited with code {self.proc.returncode}:\n{self.tail()}")
            try:
                httpx.get(f"{self.url}/v1/campaigns/{'0' * 32}", timeout=1.0)  # any answer (404) means up
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"the collector did not answer within {STARTUP_TIMEOUT:.0f} s:\n{self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return (self.workdir / "server.log").read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _phase(make_request: Callable[[Any, int], int], *, fresh: bool, seconds: float) -> dict[str, float]:
    """Run ``THREADS`` threads sending requests for ``seconds``; return rates and latency percentiles."""
    import httpx

    latencies: list[list[float]] = [[] for _ in range(THREADS)]
    reports = [0] * THREADS
    errors: list[str] = []
    start_gate = threading.Barrier(THREADS + 1)
    stop_at = [0.0]

    def worker(t: int) -> None:
        limits = httpx.Limits(max_keepalive_connections=0) if fresh else httpx.Limits()
        with httpx.Client(timeout=30.0, limits=limits) as client:
            start_gate.wait()
            i = 0
            while time.perf_counter() < stop_at[0]:
                t0 = time.perf_counter()
                try:
                    reports[t] += make_request(client, t * 1_000_000 + i)
                except Exception as exc:  # recorded and reported, never silent
                    errors.append(repr(exc))
                    return
                latencies[t].append(time.perf_counter() - t0)
                i += 1

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    stop_at[0] = time.perf_counter() + seconds
    t_start = time.perf_counter()
    start_gate.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - t_start
    if errors:
        raise RuntimeError(f"{len(errors)} client errors, first: {errors[0]}")
    lat = np.concatenate([np.asarray(x) for x in latencies])
    return {"requests": float(lat.size), "seconds": elapsed, "req_per_s": lat.size / elapsed,
            "reports_per_s": sum(reports) / elapsed, "p50_ms": 1e3 * float(np.percentile(lat, 50)),
            "p99_ms": 1e3 * float(np.percentile(lat, 99))}


def run(seconds: float = PHASE_SECONDS) -> tuple[list[tuple[str, dict[str, float]]], dict[str, Any]]:
    """Start the server, create the campaign, run the phases; return per-phase results and the campaign."""
    import httpx

    with tempfile.TemporaryDirectory(prefix="bench-collector-") as tmp:
        server = Server(Path(tmp))
        try:
            server.wait_ready()
            created = httpx.post(f"{server.url}/v1/campaigns", json=CAMPAIGN, timeout=300.0)
            if created.status_code != 201:
                raise RuntimeError(f"campaign creation failed: {created.status_code} {created.text[:500]}")
            campaign = created.json()
            cid = campaign["id"]
            pool = randomize(np.random.default_rng(SEED).integers(0, 2, size=(4096, BITS)), q=campaign["q"],
                             rng=np.random.default_rng(SEED + 1)).tolist()

            def get_campaign(client: httpx.Client, i: int) -> int:
                response = client.get(f"{server.url}/v1/campaigns/{cid}")
                if response.status_code != 200:
                    raise RuntimeError(f"GET campaign: {response.status_code} {response.text[:200]}")
                return 0

            def post(batch: int) -> Callable[[httpx.Client, int], int]:
                def send(client: httpx.Client, i: int) -> int:
                    rows = [pool[(i * batch + j) % len(pool)] for j in range(batch)]
                    body = {"reports": rows, "nonces": [secrets.token_hex(32) for _ in range(batch)]}
                    response = client.post(f"{server.url}/v1/campaigns/{cid}/reports", json=body)
                    if response.status_code != 200 or response.json().get("accepted") != batch:
                        raise RuntimeError(f"POST reports: {response.status_code} {response.text[:200]}")
                    return batch
                return send

            phases = [
                ("baseline: GET campaign", get_campaign, False),
                ("POST reports, batch 1", post(1), False),
                ("POST reports, batch 100", post(100), False),
                ("POST reports, batch 1, fresh connection", post(1), True),
            ]
            results = [(name, _phase(fn, fresh=fresh, seconds=seconds)) for name, fn, fresh in phases]
            final = httpx.get(f"{server.url}/v1/campaigns/{cid}", timeout=30.0).json()
            stored = sum(r["reports_per_s"] * r["seconds"] for _, r in results)
            if int(final.get("pending_reports", -1)) != round(stored):
                raise RuntimeError(f"server holds {final.get('pending_reports')} reports; clients sent {stored:.0f}")
            return results, campaign
        finally:
            server.stop()


def main() -> str:
    """Run the load test and return a markdown section."""
    t0 = time.perf_counter()
    results, campaign = run()
    total = time.perf_counter() - t0
    base = results[0][1]
    lines = [
        "## Collector service under load (`sufficientdp serve`, SQLite)",
        "",
        (f"{THREADS} client threads on 127.0.0.1 send requests back to back for {PHASE_SECONDS:.0f} s per phase "
         f"(same machine as the server; both share the 2 cores). Campaign: L = {campaign['bits']}, "
         f"q = {campaign['q']:.6g}, rate_limit = none; every report carries a fresh 32-byte idempotency nonce. "
         "Baseline: `GET /v1/campaigns/{id}` in the same run. After the run the server's pending count equals the "
         f"number of reports sent. Total benchmark time {total:.0f} s."),
        "",
        "| phase | requests/s | reports/s | p50 ms | p99 ms | requests/s vs baseline | p50 vs baseline |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results:
        lines.append(f"| {name} | {r['req_per_s']:.0f} | {r['reports_per_s']:.0f} | {r['p50_ms']:.1f} | "
                     f"{r['p99_ms']:.1f} | {r['req_per_s'] / base['req_per_s']:.2f} | "
                     f"{r['p50_ms'] / base['p50_ms']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
