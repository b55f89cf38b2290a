"""uvicorn settings of the collector (``sufficientdp serve``): a deadline for request headers and an optional limit
on each client's concurrent connections.

uvicorn closes idle keep-alive connections, but a new connection that sends nothing, or trickles its request
headers a byte at a time (slowloris), is kept open forever. :func:`header_deadline_protocol` returns uvicorn's
HTTP/1.1 protocol (httptools when installed, else h11) with one addition: the request headers must be complete within ``seconds`` of the connection being
made or of the previous response; otherwise the connection is closed. The body has its own deadline in the app
(``read_timeout``: 408 ``request_timeout``).

With ``max_connections_per_client``, a connection from an address that already holds that many open connections
is answered at once with 503 ``too_many_connections`` (JSON, ``Retry-After: 1``, ``Connection: close``) and
closed, before anything of its request is read. The address is the TCP peer's: behind a reverse proxy every
connection comes from the proxy, so leave the limit off there (the default) and limit connections in the proxy.

Writes made in one step of the event loop go out in one ``send`` (:class:`CoalescingTransport`): uvicorn writes a
response's status line and headers, then its body, so a small response took two system calls and two TCP segments.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .errors import error_body

__all__ = ["MAX_CONNECTIONS_PER_CLIENT", "CoalescingTransport", "header_deadline_protocol"]

#: Largest accepted value of ``max_connections_per_client``.
MAX_CONNECTIONS_PER_CLIENT = 100_000


def _refusal() -> bytes:
    body = json.dumps(error_body("too_many_connections", "this client already holds the collector's limit of "
                                 "concurrent connections; close one and retry", None)).encode()
    head = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n")
    return head + body


class CoalescingTransport:
    """An asyncio transport whose writes made in one step of the event loop are sent together.

    The first :meth:`write` of a step schedules :meth:`flush` with ``loop.call_soon``; later writes of the same step
    join it. The bytes and their order are unchanged. :meth:`close` flushes first; :meth:`abort` drops what is
    buffered (as the transport drops its own buffer). Everything else is the wrapped transport's.
    """

    __slots__ = ("_buffer", "_loop", "_transport")

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._buffer: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._buffer:
            self._loop.call_soon(self.flush)
        self._buffer.append(bytes(data))

    def flush(self) -> None:
        """Send what is buffered now (nothing if the connection is closing)."""
        if not self._buffer:
            return
        data = b"".join(self._buffer)
        self._buffer.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._buffer.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def header_deadline_protocol(seconds: float, implementation: str = "auto", *,
                             max_connections_per_client: int | None = None) -> type[Any]:
    """uvicorn's HTTP/1.1 protocol class whose connections close when request headers take over ``seconds``.

    Pass it as ``uvicorn.Config(http=...)`` (or ``uvicorn.run(http=...)``).

    Args:
        seconds: the header deadline, in (0, 3600].
        implementation: ``"httptools"`` (uvicorn's protocol over the httptools C parser: a fraction of the CPU per
            request), ``"h11"`` (pure Python) or ``"auto"`` (httptools when it is installed, else h11).
        max_connections_per_client: most connections one peer address may hold open at once, in
            [1, :data:`MAX_CONNECTIONS_PER_CLIENT`]; one more is answered 503 ``too_many_connections`` and closed.
            None (default): no limit. The count is per protocol class, i.e. per server built with it.

    Raises:
        ValueError: ``seconds``, ``implementation`` or ``max_connections_per_client`` out of range.
        ImportError: uvicorn (the ``service`` extra) is missing, or httptools asked for and missing.
    """
    _check_arguments(seconds, implementation, max_connections_per_client)
    base = _base_protocol(implementation)
    # One count of open connections per peer address for the servers built with this class (touched on the
    # event loop only).
    namespace: dict[str, Any] = {
        "__doc__": _HeaderDeadline.__doc__, "__module__": __name__, "__qualname__": "HeaderDeadlineProtocol",
        "_seconds": float(seconds), "_limit": max_connections_per_client, "_open_by_peer": {}}
    protocol: type[Any] = type("HeaderDeadlineProtocol", (_HeaderDeadline, base), namespace)
    return protocol


def _check_arguments(seconds: Any, implementation: Any, limit: Any) -> None:
    """ValueError for an argument of :func:`header_deadline_protocol` out of range."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= 3600:
        raise ValueError(f"seconds must be in (0, 3600]; got {seconds!r}")
    if implementation not in ("auto", "httptools", "h11"):
        raise ValueError(f"implementation must be 'auto', 'httptools' or 'h11'; got {implementation!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                              or not 1 <= limit <= MAX_CONNECTIONS_PER_CLIENT):
        raise ValueError(f"max_connections_per_client must be None or an integer in [1, "
                         f"{MAX_CONNECTIONS_PER_CLIENT}]; got {limit!r}")


def _base_protocol(implementation: str) -> type[Any]:
    """uvicorn's HTTP/1.1 protocol class: httptools' (``"httptools"``, or ``"auto"`` when installed) or h11's."""
    try:
        if implementation == "h11":
            raise ImportError("h11 asked for")
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:
        if implementation == "httptools":
            raise
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


#: The base of :class:`_HeaderDeadline` for the type checker: the uvicorn protocol it is mixed into.
_ProtocolBase: Any = object


class _HeaderDeadline(_ProtocolBase):
    """uvicorn's protocol with a deadline on request headers and an optional per-peer connection limit (see
    :func:`header_deadline_protocol`, which mixes this class into uvicorn's protocol class and sets ``_seconds``,
    ``_limit`` and ``_open_by_peer``)."""

    _seconds: float
    _limit: int | None
    _open_by_peer: dict[str, int]  # peer address -> open connections
    _header_deadline: asyncio.TimerHandle | None = None
    _peer: str | None = None  # set while this connection counts against its peer's limit

    def connection_made(self, transport: Any) -> None:
        super().connection_made(CoalescingTransport(transport, self.loop))
        if self._limit is not None and not self._admit(transport, self._limit):
            return
        self._arm()

    def _admit(self, transport: Any, limit: int) -> bool:
        """Count this connection against its peer's limit; False (refused and closed) if the peer is at it."""
        peername = transport.get_extra_info("peername")
        peer = str(peername[0]) if isinstance(peername, (tuple, list)) and peername else None
        if peer is None:
            return True
        if self._open_by_peer.get(peer, 0) >= limit:
            transport.write(_refusal())
            transport.close()
            return False
        self._open_by_peer[peer] = self._open_by_peer.get(peer, 0) + 1
        self._peer = peer
        return True

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._waiting_for_headers():
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._peer is not None:
            left = self._open_by_peer.get(self._peer, 1) - 1
            if left > 0:
                self._open_by_peer[self._peer] = left
            else:
                self._open_by_peer.pop(self._peer, None)
            self._peer = None
        super().connection_lost(exc)

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or bool(self.cycle.response_complete)

    def _arm(self) -> None:
        self._disarm()
        self._header_deadline = self.loop.call_later(self._seconds, self._expire)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _expire(self) -> None:
        self._header_deadline = None
        if self._waiting_for_headers() and not self.transport.is_closing():
            self.transport.close()
