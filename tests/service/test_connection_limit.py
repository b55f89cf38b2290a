"""The per-client connection limit of the collector server (``serve --max-connections-per-client``), over real sockets
on 127.0.0.1 only: one connection beyond the limit gets 503 ``too_many_connections`` and is closed; a freed slot is
usable again; without the option nothing is limited."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("uvicorn", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")

from tests.service.loopback import LoopbackServer  # noqa: E402

from sufficientdp.cli._cmd_serve import _connections  # noqa: E402
from sufficientdp.service.app import create_app  # noqa: E402
from sufficientdp.service.server import MAX_CONNECTIONS_PER_CLIENT, header_deadline_protocol  # noqa: E402

LIMIT = 3
GET = b"GET /v1/campaigns/" + b"0" * 32 + b" HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"


def _exchange(conn: socket.socket, request: bytes | None, limit: float = 10.0) -> tuple[int, dict[str, Any], bytes]:
    """Send ``request`` (if any) and read one response: status, JSON body, raw head."""
    if request is not None:
        conn.sendall(request)
    conn.settimeout(limit)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, f"connection closed without a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))
    while len(body) < length:
        chunk = conn.recv(65536)
        assert chunk
        body += chunk
    return int(head.split(b" ", 2)[1]), json.loads(body), head.lower()


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    application = create_app(str(tmp_path_factory.mktemp("connections") / "collector.db"))
    yield application
    application.state.jobs.close()
    application.state.storage.close()


@pytest.mark.parametrize("implementation", ["httptools", "h11"])
def test_one_connection_beyond_the_limit_gets_503_and_a_freed_slot_is_usable(app: Any, implementation: str) -> None:
    if implementation == "httptools":
        pytest.importorskip("httptools", reason="uvicorn's httptools protocol needs httptools")
    http = header_deadline_protocol(30.0, implementation, max_connections_per_client=LIMIT)
    with LoopbackServer(app, http) as server:
        held = [_connect(server.port) for _ in range(LIMIT)]
        try:
            status, body, _ = _exchange(held[0], GET)  # the held connections are served normally
            assert (status, body["error"]["code"]) == (404, "unknown_campaign")
            extra = _connect(server.port)
            status, body, head = _exchange(extra, None)  # answered before it sends anything
            assert status == 503 and body["error"]["code"] == "too_many_connections"
            assert b"retry-after: 1" in head and b"connection: close" in head
            extra.settimeout(10)
            assert extra.recv(1) == b""  # and closed
            extra.close()
            held.pop().close()  # free one slot
            deadline = time.monotonic() + 10
            while True:
                again = _connect(server.port)
                status, body, _ = _exchange(again, GET)
                again.close()
                if status == 404 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)  # the server has not seen the close yet
            assert (status, body["error"]["code"]) == (404, "unknown_campaign")
        finally:
            for conn in held:
                conn.close()


def test_without_a_limit_nothing_is_refused(app: Any) -> None:
    with LoopbackServer(app, header_deadline_protocol(30.0)) as server:
        held = [_connect(server.port) for _ in range(2 * LIMIT)]
        try:
            for conn in held:
                assert _exchange(conn, GET)[0] == 404
        finally:
            for conn in held:
                conn.close()


def test_limit_values_are_checked() -> None:
    for bad in (0, -1, MAX_CONNECTIONS_PER_CLIENT + 1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="max_connections_per_client"):
            header_deadline_protocol(30.0, max_connections_per_client=bad)  # type: ignore[arg-type]
    assert _connections("0") == 0 and _connections(str(MAX_CONNECTIONS_PER_CLIENT)) == MAX_CONNECTIONS_PER_CLIENT
    for bad_text in ("-1", "x", str(MAX_CONNECTIONS_PER_CLIENT + 1)):
        with pytest.raises(Exception, match="max-connections-per-client must be an integer"):
            _connections(bad_text)


def test_the_count_is_per_protocol_class(app: Any) -> None:
    # Two servers, each built with its own class of limit 1: a connection held on one does not count against
    # the other (the count lives in the class header_deadline_protocol returns), but a second one on the same
    # server is refused.
    first = header_deadline_protocol(30.0, max_connections_per_client=1)
    second = header_deadline_protocol(30.0, max_connections_per_client=1)
    assert first is not second
    with LoopbackServer(app, first) as server_a, LoopbackServer(app, second) as server_b:
        held_a = _connect(server_a.port)
        held_b = _connect(server_b.port)
        extra_a = _connect(server_a.port)
        try:
            assert _exchange(held_a, GET)[0] == 404
            assert _exchange(held_b, GET)[0] == 404
            status, body, _ = _exchange(extra_a, None)
            assert status == 503 and body["error"]["code"] == "too_many_connections"
        finally:
            for conn in (held_a, held_b, extra_a):
                conn.close()
