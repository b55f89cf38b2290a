"""uvicorn settings of the collector (``sufficientdp serve``): a deadline for request headers.

uvicorn closes idle keep-alive connections, but a new connection that sends nothing, or trickles its request
headers a byte at a time (slowloris), is kept open forever. :func:`header_deadline_protocol` returns uvicorn's
HTTP/1.1 protocol (httptools when installed, else h11) with one addition: the request headers must be complete within ``seconds`` of the connection being
made or of the previous response; otherwise the connection is closed. The body has its own deadline in the app
(``read_timeout``: 408 ``request_timeout``).
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["header_deadline_protocol"]


def header_deadline_protocol(seconds: float, implementation: str = "auto") -> type[Any]:
    """uvicorn's HTTP/1.1 protocol class whose connections close when request headers take over ``seconds``.

    Pass it as ``uvicorn.Config(http=...)`` (or ``uvicorn.run(http=...)``).

    Args:
        seconds: the header deadline, in (0, 3600].
        implementation: ``"httptools"`` (uvicorn's protocol over the httptools C parser: a fraction of the CPU per
            request), ``"h11"`` (pure Python) or ``"auto"`` (httptools when it is installed, else h11).

    Raises:
        ValueError: ``seconds`` or ``implementation`` out of range.
        ImportError: uvicorn (the ``service`` extra) is missing, or httptools asked for and missing.
    """
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= 3600:
        raise ValueError(f"seconds must be in (0, 3600]; got {seconds!r}")
    if implementation not in ("auto", "httptools", "h11"):
        raise ValueError(f"implementation must be 'auto', 'httptools' or 'h11'; got {implementation!r}")
    base: type[Any]
    try:
        if implementation == "h11":
            raise ImportError("h11 asked for")
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:
        if implementation == "httptools":
            raise
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol

    class HeaderDeadlineProtocol(base):
        """h11 with a deadline on request headers (see :func:`header_deadline_protocol`)."""

        _header_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

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
            super().connection_lost(exc)

        def _waiting_for_headers(self) -> bool:
            return self.cycle is None or bool(self.cycle.response_complete)

        def _arm(self) -> None:
            self._disarm()
            self._header_deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def _expire(self) -> None:
            self._header_deadline = None
            if self._waiting_for_headers() and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadlineProtocol
