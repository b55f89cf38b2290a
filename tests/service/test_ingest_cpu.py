"""The CPU savings of the collector's one-report path keep its behaviour: plain-Python packing gives the bytes
numpy's packing gives, FastAPI's native telemetry (which would record client addresses and paths) is off, and the
coalescing transport sends the bytes written, in order, once per event-loop step."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")

from sufficientdp.service.storage import pack_report_rows, pack_reports  # noqa: E402


@pytest.mark.parametrize("bits", [1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100])
def test_plain_packing_equals_numpy_packing(bits: int) -> None:
    rng = np.random.default_rng(bits)
    for n in (1, 2, 4):
        rows = rng.integers(0, 2, size=(n, bits))
        assert pack_report_rows(rows.tolist(), bits) == pack_reports(rows)


def test_plain_packing_every_8_bit_row() -> None:
    rows = [list(v) for v in itertools.product((0, 1), repeat=8)]  # all 256 rows: byte value = sum of v_j 2**j
    assert pack_report_rows(rows, 8) == [bytes([sum(v << j for j, v in enumerate(r))]) for r in rows]
    assert pack_report_rows(rows, 8) == pack_reports(np.array(rows))


@pytest.mark.parametrize("bad", [2, -1, 1 << 70, 0.5])
def test_plain_packing_declines_values_other_than_0_and_1(bad: Any) -> None:
    assert pack_report_rows([[0, 1, 0, 1], [0, 1, bad, 1]], 4) is None


def test_native_telemetry_is_off(tmp_path: Any) -> None:
    from fastapi import FastAPI

    from sufficientdp.service.app import create_app

    app = create_app(str(tmp_path / "c.db"), admin_token="t" * 20)
    try:
        config = getattr(app, "_telemetry", None)
        if config is None:
            assert not hasattr(FastAPI(), "_telemetry")  # a FastAPI without native telemetry
        else:
            assert (config["tracing"], config["metrics"], config["logs"]) == (False, False, False)
    finally:
        app.state.jobs.close()
        app.state.storage.close()


class _Recorder:
    """A transport that records what reaches it."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.sent.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


def test_coalescing_transport_sends_one_steps_writes_together_in_order() -> None:
    from sufficientdp.service.server import CoalescingTransport

    async def scenario() -> list[Any]:
        raw = _Recorder()
        t = CoalescingTransport(raw, asyncio.get_running_loop())
        t.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        t.write(b"")
        t.write(b"ok")
        seen = [list(raw.sent)]  # nothing sent within the step
        await asyncio.sleep(0)
        seen.append(list(raw.sent))
        t.write(b"a")
        t.write(b"b")
        t.close()  # flushes first
        seen.append((list(raw.sent), raw.closed, t.get_extra_info("peername")))
        t2 = CoalescingTransport(raw2 := _Recorder(), asyncio.get_running_loop())
        t2.write(b"dropped")
        t2.abort()
        await asyncio.sleep(0)
        seen.append((raw2.sent, raw2.aborted))
        return seen

    before, after, closed, aborted = asyncio.run(scenario())
    assert before == []
    assert after == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]
    assert closed == ([after[0], b"ab"], True, "info:peername")
    assert aborted == ([], True)


def test_served_responses_arrive_whole_over_keep_alive(tmp_path: Any) -> None:
    """Through uvicorn: pipelined keep-alive requests each get their complete response, in order."""
    from loopback import LoopbackServer

    from sufficientdp.service.app import create_app
    from sufficientdp.service.server import header_deadline_protocol

    app = create_app(str(tmp_path / "c.db"), admin_token="t" * 20)
    try:
        with LoopbackServer(app, http=header_deadline_protocol(30.0)) as srv, \
                socket.create_connection(("127.0.0.1", srv.port), timeout=30) as sock:
            request = f"GET /v1/campaigns/{'0' * 32} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            sock.sendall(request * 3)
            data = b""
            while data.count(b"HTTP/1.1 404") < 3 or not data.endswith(b"}"):
                chunk = sock.recv(65536)
                assert chunk, data
                data += chunk
        parts = data.split(b"HTTP/1.1 404 Not Found\r\n")[1:]
        assert len(parts) == 3
        for part in parts:
            head, body = part.split(b"\r\n\r\n", 1)
            length = int(next(h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")))
            assert len(body) == length
            assert set(json.loads(body)) == {"error"}
    finally:
        app.state.jobs.close()
        app.state.storage.close()
