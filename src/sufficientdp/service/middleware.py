"""The collector's ASGI middleware: the body limit and read deadline, the fast path of small report requests,
and the last line of defence that turns an unexpected exception into a 500 carrying only a correlation id.

Order (outermost first): :class:`InternalErrors`, :class:`BodyLimit`, :class:`ReportsFastPath`, the app.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .errors import error_body

__all__ = ["BodyLimit", "InternalErrors", "ReportsFastPath", "send_error"]

_log = logging.getLogger("sufficientdp.service")


class BodyLimit:
    """ASGI middleware: read the whole body before the app runs, within ``limit`` bytes (413 above) and within
    ``timeout`` seconds from the first read (408 ``request_timeout`` otherwise, then the connection is closed).

    So a client that declares 1000 bytes and sends 1 holds neither a worker thread nor its connection for longer
    than ``timeout``; the endpoints (run in worker threads) only ever see complete bodies.
    """

    def __init__(self, app: Any, limit: int, timeout: float) -> None:
        self.app = app
        self.limit = limit
        self.timeout = timeout

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", []):
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.limit:
                    await self._too_large(send)
                    return
        chunks: list[bytes] = []
        size = 0
        more = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while more:
            message = None
            try:
                async with asyncio.timeout_at(deadline):  # cheaper than an anyio cancel scope per request
                    message = await receive()
            except TimeoutError:
                pass
            if message is None:
                await self._error(send, 408, "request_timeout", f"the request body was not received within "
                                  f"{self.timeout:g} s; send the whole body at once")
                return
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                await self._too_large(send)
                return
            chunks.append(body)
            more = message.get("more_body", False)
        data = b"".join(chunks)
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Callable[[Any], Awaitable[None]]) -> None:
        await self._error(send, 413, "request_too_large", f"the request body must be at most {self.limit} bytes")

    @staticmethod
    async def _error(send: Callable[[Any], Awaitable[None]], status: int, code: str, message: str) -> None:
        await send_error(send, status, code, message)


async def send_error(send: Callable[[Any], Awaitable[None]], status: int, code: str, message: str) -> None:
    """Send a JSON error response and close the connection (the request body may be unread)."""
    body = json.dumps(error_body(code, message, None)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class ReportsFastPath:
    """ASGI middleware: ``POST /v1/campaigns/{id}/reports`` with a JSON body, answered without FastAPI's routing.

    The body (complete: this runs inside :class:`BodyLimit`) goes to ``accept(campaign_id, body)``, which validates
    it exactly as the route does and stores it; if it returns None (not a small valid request to a known active
    campaign: nothing was done), the request goes on to the route, which validates it again and answers, errors
    included. About a third of the server's CPU per one-report request is FastAPI's routing and serialization.
    """

    _PATH = re.compile(r"/v1/campaigns/([0-9a-f]{32})/reports")

    def __init__(self, app: Any, accept: Callable[[str, bytes], Awaitable[dict[str, int] | None]]) -> None:
        self.app = app
        self.accept = accept

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        match = self._PATH.fullmatch(scope.get("path", "")) if scope["type"] == "http" and \
            scope.get("method") == "POST" else None
        if match is None or (b"content-type", b"application/json") not in scope.get("headers", ()):
            await self.app(scope, receive, send)
            return
        message = await receive()
        if message["type"] != "http.request" or message.get("more_body", False):
            answer = None
        else:
            answer = await self.accept(match.group(1), message.get("body", b""))
        if answer is None:
            replayed = False

            async def replay() -> Any:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return message
                return await receive()

            await self.app(scope, replay, send)
            return
        data = json.dumps(answer, separators=(",", ":")).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(data)).encode()),
                                (b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": data})


class InternalErrors:
    """ASGI middleware: an unexpected exception becomes a 500 JSON error carrying only a correlation id.

    The log line holds the correlation id and the exception's type, never its message or traceback (both could
    quote request data). The exception is not re-raised, so neither Starlette nor uvicorn logs a traceback either.
    If the response had already started, the connection is simply ended (the same log line).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except asyncio.CancelledError:
            # The server cancels the requests still in flight when its graceful shutdown times out (a stalled
            # client, for instance): answer 503 if nothing was sent yet, and end the task quietly (re-raising
            # would make uvicorn log a traceback for an orderly shutdown).
            _log.warning("a request was cancelled by the server's shutdown")
            if not started:
                await send_error(send, 503, "shutting_down", "the collector is shutting down; nothing was stored "
                                  "by this request, retry later")
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            correlation = secrets.token_hex(8)
            _log.error("internal error %s: %s", correlation, type(exc).__name__)
            if started:
                return
            body = json.dumps(error_body("internal_error", f"internal error (correlation id {correlation}); "
                                         "the collector's log has the same id", None)).encode()
            await send({"type": "http.response.start", "status": 500,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode()),
                                    (b"x-correlation-id", correlation.encode())]})
            await send({"type": "http.response.body", "body": body})
