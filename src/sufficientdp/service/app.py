"""The collector's HTTP API (FastAPI), following docs/collector_api_contract.md.

An adapter: it parses and validates requests, stores reports, and calls the core for everything that is math
(:func:`sufficientdp.collection.campaign.plan_campaign` for calibration and the proven all-collections bound,
:func:`sufficientdp.collection.campaign.estimate_release` for estimates, :mod:`sufficientdp.collection.rsabssa`
(RFC 9474 RSABSSA-SHA384-PSS-Randomized, new campaigns) and :mod:`sufficientdp.collection.tokens` (RSA-FDH,
campaigns created before it; the campaign's ``token_scheme`` says which) for blind signatures). It logs no request data: no raw reports, nonces, credentials, client addresses or user agents.

No request runs unbounded math: ``POST /v1/campaigns`` validates the fields, stores the campaign as
``calibrating`` and answers 202; its q is calibrated (or the given q checked) by a bounded background job
(:mod:`sufficientdp.service.jobs`: bounded queue, one child process per job, time and memory limits), and
``GET /v1/campaigns/{id}`` shows ``calibrating``, ``active`` or ``failed``. Every numeric input has an upper
limit, stated in its error message and in docs/collector_api_contract.md.

Endpoints (all JSON): ``POST /v1/campaigns``, ``GET /v1/campaigns/{id}``, ``POST /v1/campaigns/{id}/cancel``,
``POST /v1/campaigns/{id}/tokens``, ``POST /v1/campaigns/{id}/reports``, ``POST /v1/campaigns/{id}/releases``,
``GET /v1/campaigns/{id}/estimates``. The administrative ones (creating and cancelling campaigns, releases) need
the deployment's admin token and are closed (403 ``admin_disabled``) when none is configured. The OpenAPI
description is served at ``/openapi.json``.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import numpy as np

try:
    from fastapi import Depends, FastAPI, Request, Response
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import HTMLResponse, JSONResponse
    from pydantic import BaseModel, ConfigDict, Field
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the collector service needs the 'service' extra: pip install 'sufficientdp[service]'") from exc

from .._errors import ParameterError, SufficientDPError
from .._numerics.dyadic import DyadicProbability
from ..collection.campaign import (
    MAX_BITS,
    MAX_CROWD_SIZE,
    MAX_EPSILON,
    MAX_NAME_LENGTH,
    MAX_PRECISION,
    MAX_REPORTS_PER_PERSON,
    Campaign,
    estimate_release,
)
from ..collection.tokens import SCHEME_RSA_FDH, SCHEME_RSABSSA
from .errors import ServiceError, error_body
from .jobs import (
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_QUEUE,
    DEFAULT_TIME_LIMIT,
    RETRY_AFTER,
    CalibrationJobs,
    Outcome,
    cached_outcome,
    failed,
)
from .storage import CrowdTooSmall, Storage, blinded_digest, open_storage, pack_report_rows, pack_reports

__all__ = ["MAX_REPORTS_PER_REQUEST", "create_app"]

#: Most reports accepted in one request.
MAX_REPORTS_PER_REQUEST = 10_000
#: Requests with at most this many reports to a known active campaign are validated on the event loop.
_INLINE_REPORTS = 4
#: Requests of at most this many values (reports x bits) are checked and packed in plain Python, not numpy (the
#: same answers; numpy's conversions cost more than the work for a few short rows).
_PLAIN_PYTHON_VALUES = 256
#: Active campaigns whose object and token key a collector process keeps in memory.
_ACTIVE_CACHE_SIZE = 1024
#: Longest credential accepted by the token endpoint, in characters.
MAX_CREDENTIAL_LENGTH = 4096
#: Most hex digits of a blinded value or a signature.
MAX_HEX_DIGITS = 4096
#: Environment variable holding the credential HMAC key (hex) when ``create_app`` is not given one.
CREDENTIAL_KEY_ENV = "SUFFICIENTDP_CREDENTIAL_KEY"

_log = logging.getLogger("sufficientdp.service")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_HEXINT = re.compile(r"[0-9a-fA-F]{1,4096}")
_CAMPAIGN_ID = re.compile(r"[0-9a-f]{32}")
_WINDOW_PARAMS = ("from", "to", "since", "until", "start", "end", "window", "after", "before")

_ALLOWED = {
    "name": f"a printable string of 1 to {MAX_NAME_LENGTH} characters",
    "family": f"null or a printable string of 1 to {MAX_NAME_LENGTH} characters",
    "bits": f"an integer in [1, {MAX_BITS}]",
    "epsilon": f"a number in (0, {MAX_EPSILON:g}]",
    "eta": "a number in (0, 1)",
    "crowd_size": f"an integer in [2, {MAX_CROWD_SIZE}]",
    "reports_per_person": f"an integer in [1, {MAX_REPORTS_PER_PERSON}]",
    "q": "null or a number in (0, 0.5)",
    "memo_q": "null or a number in (0, 0.5); needs q, a family and reports_per_person = 1",
    "precision": f"an integer in [2, {MAX_PRECISION}]",
    "rate_limit": "'tokens' or 'none'",
    "token_scheme": f"null (default: '{SCHEME_RSABSSA}' for rate_limit 'tokens'), '{SCHEME_RSABSSA}' or, for "
                    f"clients that predate it, '{SCHEME_RSA_FDH}'; null when rate_limit is 'none'",
    "credential": f"a non-empty string of at most {MAX_CREDENTIAL_LENGTH} characters",
    "blinded": f"a list of 1 to k (at most {MAX_REPORTS_PER_PERSON}) hex strings of at most {MAX_HEX_DIGITS} digits",
    "reports": f"a list of 1 to {MAX_REPORTS_PER_REQUEST} lists of L integers 0 or 1",
    "nonces": f"null or a list of at most {MAX_REPORTS_PER_REQUEST} 64-hex-character strings aligned with reports",
    "tokens": f"null or a list of at most {MAX_REPORTS_PER_REQUEST} {{nonce, prefix, signature}} objects aligned "
              "with reports",
    "nonce": "a string of 64 hex characters",
    "prefix": f"a string of 64 hex characters (the 32-byte RSABSSA message prefix) for token_scheme "
              f"'{SCHEME_RSABSSA}'; omitted (null) for '{SCHEME_RSA_FDH}'",
    "signature": f"a hex string of 1 to {MAX_HEX_DIGITS} digits",
}


# --------------------------------------------------------------------------------------------------- models
# Every bound of a request field is declared here, so /openapi.json states it and pydantic enforces it before the
# endpoint runs (the endpoints check again what depends on the campaign: L per report, at most k blinded values,
# a blinded value below the campaign's modulus, a valid signature).
#: A hex string of 1 to MAX_HEX_DIGITS digits (a blinded value or a signature).
_HexInt = Annotated[str, Field(min_length=1, max_length=MAX_HEX_DIGITS, pattern=r"^[0-9a-fA-F]+$")]
#: 64 hex characters (a 32-byte nonce).
_Hex64 = Annotated[str, Field(min_length=64, max_length=64, pattern=r"^[0-9a-fA-F]{64}$")]
#: One report: 1 to MAX_BITS integers, each 0 or 1 (exactly L of them, checked against the campaign).
_Report = Annotated[list[Annotated[int, Field(ge=0, le=1)]], Field(min_length=1, max_length=MAX_BITS)]


class CampaignIn(BaseModel):
    """Body of ``POST /v1/campaigns``."""

    model_config = ConfigDict(strict=True, extra="forbid")
    name: str = Field(min_length=1, max_length=MAX_NAME_LENGTH, description=_ALLOWED["name"])
    bits: int = Field(ge=1, le=MAX_BITS, description="L, bits per report: " + _ALLOWED["bits"])
    epsilon: float = Field(gt=0, le=MAX_EPSILON, allow_inf_nan=False,
                           description="privacy level (lambda = e^epsilon): " + _ALLOWED["epsilon"])
    eta: float = Field(default=0.001, gt=0, lt=1, allow_inf_nan=False,
                       description="target P[R > e^epsilon] at crowd_size: " + _ALLOWED["eta"])
    crowd_size: int = Field(ge=2, le=MAX_CROWD_SIZE,
                            description="N_min, the fewest people a release covers: " + _ALLOWED["crowd_size"])
    reports_per_person: int = Field(default=1, ge=1, le=MAX_REPORTS_PER_PERSON,
                                    description="k: " + _ALLOWED["reports_per_person"])
    q: float | None = Field(default=None, gt=0, lt=0.5, allow_inf_nan=False,
                            description="flip probability; null calibrates it (proven method, in a background "
                                        "job: seconds to minutes): " + _ALLOWED["q"])
    precision: int = Field(default=32, ge=2, le=MAX_PRECISION,
                           description="dyadic precision of q: " + _ALLOWED["precision"])
    rate_limit: Literal["tokens", "none"] = Field(default="tokens", description=_ALLOWED["rate_limit"])
    token_scheme: Literal["rsabssa-sha384-pss-randomized", "rsa-fdh-sha256"] | None = Field(
        default=None, description="the blind-signature scheme of the campaign's tokens (docs/rate_limiting.md): "
                                  + _ALLOWED["token_scheme"])
    family: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_LENGTH,
                               description="the campaign family (devices account a family's campaigns in their "
                                           "privacy ledger); null: the campaign is its own family: "
                                           + _ALLOWED["family"])
    memo_q: float | None = Field(default=None, gt=0, lt=0.5, allow_inf_nan=False,
                                 description="permanent flip q1 of a memoized family (RAPPOR-style): each device "
                                             "reports its value's permanent memo flipped again with q; the "
                                             "guarantee is checked at q1(1-q)+q(1-q1) and the lifetime bound is "
                                             "published: " + _ALLOWED["memo_q"])


class TokenKeyOut(BaseModel):
    """RSA public key of a campaign's blind-signature tokens."""

    n: str = Field(description="modulus, lowercase hex")
    e: int


class ErrorDetail(BaseModel):
    """Error description."""

    code: str
    message: str
    parameter: str | None


class CampaignOut(BaseModel):
    """A campaign object. While ``status`` is ``calibrating`` (and when it is ``failed``) the fields fixed by the
    calibration (``q``, ``q_numerator``, ``eta_at_q``, ``guarantee``) are null."""

    id: str
    status: Literal["calibrating", "active", "failed"] = Field(
        description="calibrating: q is being calibrated or the given q checked (background job); active: reports "
                    "are accepted; failed: see error (no reports are ever accepted)")
    error: ErrorDetail | None = Field(default=None, description="why the campaign failed; null otherwise")
    name: str
    bits: int
    epsilon: float
    eta: float
    crowd_size: int
    reports_per_person: int
    q: float | None = Field(description="the dyadic q actually used: q_numerator / 2**precision (null until "
                                        "active)")
    q_numerator: int | None
    precision: int
    eta_at_q: float | None = Field(description=("upper bound on P[R > e^epsilon] at q and crowd_size over every "
                                                 "pair of collections (exact at L = 1); null until active"))
    calibrated: bool = Field(description="true if q was calibrated (q = null in the request), false if checked")
    guarantee: str | None
    notes: list[str]
    rate_limit: str
    token_key: TokenKeyOut | None
    token_scheme: str | None = Field(default=None, description=(
        f"'{SCHEME_RSABSSA}' (RFC 9474; tokens carry a 32-byte prefix), '{SCHEME_RSA_FDH}' (campaigns created "
        "before RSABSSA, or by clients that predate it), or null when rate_limit is 'none'"))
    family: str | None = Field(default=None, description=(
        "the campaign family; null: the campaign is its own family. With epsilon and eta_at_q it is the "
        "per-release guarantee a device records in its privacy ledger (sufficientdp.collection.ledger)"))
    memo_q: float | None = Field(default=None, description="memoized family: the dyadic permanent flip q1 "
                                                           "(memo_q_numerator / 2**precision); null otherwise")
    memo_q_numerator: int | None = None
    q_release: float | None = Field(default=None, description="the per-release flip the guarantee is checked at: "
                                                              "q1(1-q)+q(1-q1) when memoized, else q")
    lifetime: dict[str, Any] | None = Field(default=None, description=(
        "memoized family: the lifetime guarantee of an unchanged value over every number of releases (delta at "
        "epsilon, local_epsilon, kind, scope; eta null: not claimed); null otherwise"))


class CampaignStatusOut(CampaignOut):
    """A campaign object with its counters."""

    pending_reports: int
    released_reports: int
    releases: int


class TokensIn(BaseModel):
    """Body of ``POST /v1/campaigns/{id}/tokens``."""

    model_config = ConfigDict(strict=True, extra="forbid")
    credential: str = Field(min_length=1, max_length=MAX_CREDENTIAL_LENGTH,
                            description="opaque credential authenticated upstream; only its HMAC is stored")
    blinded: list[_HexInt] = Field(min_length=1, max_length=MAX_REPORTS_PER_PERSON,
                               description="blinded token messages, hex; at most k. A retry with the same "
                                           "credential and the identical list gets the same signatures again")


class TokensOut(BaseModel):
    """Blind signatures, aligned with ``blinded``."""

    signatures: list[str]


class TokenIn(BaseModel):
    """One rate-limiting token."""

    model_config = ConfigDict(strict=True, extra="forbid")
    nonce: _Hex64 = Field(description="64 hex characters (32 random bytes); the idempotency key")
    prefix: _Hex64 | None = Field(default=None, description=(
        f"token_scheme '{SCHEME_RSABSSA}': the 32-byte message prefix (64 hex characters) the client drew; the "
        f"signature is an RSASSA-PSS signature of prefix || nonce. Required for that scheme, omitted for "
        f"'{SCHEME_RSA_FDH}'"))
    signature: _HexInt = Field(description="the finalized signature, hex: RSASSA-PSS (SHA-384) of prefix || nonce, "
                                           "or the RSA-FDH signature of the nonce (legacy campaigns)")


class ReportsIn(BaseModel):
    """Body of ``POST /v1/campaigns/{id}/reports``."""

    model_config = ConfigDict(strict=True, extra="forbid")
    reports: list[_Report] = Field(min_length=1, max_length=MAX_REPORTS_PER_REQUEST,
                                   description="randomized reports, each a list of L integers 0 or 1")
    nonces: list[_Hex64] | None = Field(default=None, max_length=MAX_REPORTS_PER_REQUEST,
                                     description="optional per-report idempotency keys (64 hex)")
    tokens: list[TokenIn] | None = Field(default=None, max_length=MAX_REPORTS_PER_REQUEST,
                                         description="required when rate_limit = 'tokens'")


class ReportsOut(BaseModel):
    """Outcome of a submission."""

    accepted: int
    duplicates: int


class BitEstimateOut(BaseModel):
    """Estimated number of people with one bit set."""

    bit: int
    count: int
    estimate: float
    lower: float
    upper: float
    std_error: float


class ReleaseOut(BaseModel):
    """A release: estimates from all reports pending when it was made."""

    id: str
    reports: int
    people: float
    estimates: list[BitEstimateOut]
    histogram: dict[str, Any] | None
    level: float
    created: str = Field(description="UTC day, YYYY-MM-DD")


class EstimatesOut(BaseModel):
    """The releases of a campaign (disjoint by construction)."""

    campaign: str
    releases: list[ReleaseOut]


class ErrorOut(BaseModel):
    """Every error response."""

    error: ErrorDetail


# ---------------------------------------------------------------------------------------------- middleware
class _BodyLimit:
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
        await _send_error(send, status, code, message)


async def _send_error(send: Callable[[Any], Awaitable[None]], status: int, code: str, message: str) -> None:
    """Send a JSON error response and close the connection (the request body may be unread)."""
    body = json.dumps(error_body(code, message, None)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class _ReportsFastPath:
    """ASGI middleware: ``POST /v1/campaigns/{id}/reports`` with a JSON body, answered without FastAPI's routing.

    The body (complete: this runs inside :class:`_BodyLimit`) goes to ``accept(campaign_id, body)``, which validates
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


class _InternalErrors:
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
                await _send_error(send, 503, "shutting_down", "the collector is shutting down; nothing was stored "
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


# ------------------------------------------------------------------------------------------------- helpers
def _no_telemetry() -> dict[str, Any]:
    """FastAPI's arguments that turn its native OpenTelemetry instrumentation off (none for a FastAPI without it).

    Request spans and metrics would record client addresses, paths with campaign ids and timings of individual
    reports, which the collector keeps nowhere (docs/collector.md); and FastAPI asks the global providers whether
    to instrument on every request (about a tenth of a one-report request's CPU).
    """
    import inspect

    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:
        return {}
    return {"telemetry": {"tracing": False, "metrics": False, "logs": False}}


def _param_of(message: str) -> str | None:
    head = message.split(" ", 1)[0].rstrip(":")
    return head if head in _ALLOWED else None


def _loc_name(loc: tuple[Any, ...]) -> str | None:
    parts = [p for p in loc if p != "body"]
    if not parts:
        return None
    out = str(parts[0])
    for p in parts[1:]:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _clip(message: str, limit: int = 500) -> str:
    """A core error message, cut to ``limit`` characters (it may quote a huge input)."""
    return message if len(message) <= limit else message[:limit - 3] + "..."


def _hex_int(text: str, name: str, *, code: str, status: int) -> int:
    if not _HEXINT.fullmatch(text):
        raise ServiceError(status, code, f"{name} must be a hex string of 1 to {MAX_HEX_DIGITS} digits; got "
                           f"{_show(text)}", name)
    return int(text, 16)


def _public(spec: dict[str, Any]) -> dict[str, Any]:
    """The stored campaign object as served (campaigns stored before schema version 3 were all active; before
    version 4 every token campaign used RSA-FDH tokens: the migration writes it, and this default agrees)."""
    return {"status": "active", "error": None,
            "token_scheme": SCHEME_RSA_FDH if spec.get("rate_limit") == "tokens" else None, **spec}


def _finished(spec: dict[str, Any], outcome: Outcome) -> dict[str, Any]:
    """The campaign object once its job has an outcome."""
    out = dict(spec)
    if outcome.status == "active":
        out.update(outcome.plan)
        out.update(status="active", error=None)
    else:
        out.update(status="failed", error=dict(outcome.error or {}))
    return out


def _today() -> str:
    return _dt.datetime.now(_dt.UTC).date().isoformat()


def _credential_key(storage: Storage, given: bytes | None) -> bytes:
    if given is not None:
        if not isinstance(given, bytes) or len(given) < 16:
            shown = f"{len(given)} bytes" if isinstance(given, bytes) else type(given).__name__
            raise ParameterError(f"credential_key must be bytes of length >= 16; got {shown}")
        return given
    env = os.environ.get(CREDENTIAL_KEY_ENV)
    if env:
        try:
            key = bytes.fromhex(env)
        except ValueError:
            raise ParameterError(f"{CREDENTIAL_KEY_ENV} must be hex (at least 32 digits)") from None
        if len(key) < 16:
            raise ParameterError(f"{CREDENTIAL_KEY_ENV} must be hex (at least 32 digits); got {len(env)} digits")
        return key
    return storage.setting("credential_hmac_key", lambda: secrets.token_bytes(32))


# ----------------------------------------------------------------------------------------------------- app
def create_app(database_url: str, *, max_body_bytes: int = 1 << 20, credential_key: bytes | None = None,
               admin_token: str | None = None, token_key_bits: int = 2048, calibration_workers: int = 1,
               calibration_queue: int = DEFAULT_QUEUE, calibration_time_limit: float = DEFAULT_TIME_LIMIT,
               calibration_memory_limit: int = DEFAULT_MEMORY_LIMIT, read_timeout: float = 30.0,
               release_page: Callable[[str, str, str], str] | None = None) -> Any:
    """Build the collector's ASGI application.

    Args:
        database_url: ``sqlite:///path.db`` (or a plain path) or ``postgresql://...``; the schema is created if
            missing.
        max_body_bytes: largest request body accepted (413 above), in [1024, 2**30]; default 1 MiB.
        credential_key: key of the HMAC under which token credentials are stored (>= 16 bytes). Default: the hex
            value of ``$SUFFICIENTDP_CREDENTIAL_KEY``, else a random key kept in the database (then anyone who
            reads the database can test guesses of low-entropy credentials; keep the key outside it).
        admin_token: the bearer token of the administrative calls (creating and cancelling campaigns, making
            releases: ``Authorization: Bearer <token>``), at least 16 characters. Default None: those calls are
            closed (403 ``admin_disabled``); the participants' calls (GET, tokens, reports, estimates) work.
        token_key_bits: RSA modulus size of new campaigns' token keys, in [2048, 8192].
        calibration_workers: calibration jobs run at once (one child process each), in [1, 8]; default 1.
        calibration_queue: further jobs that may wait for a worker, in [0, 1000]; default 8. Beyond
            ``calibration_workers + calibration_queue`` admitted jobs, ``POST /v1/campaigns`` answers 429
            ``calibration_queue_full`` (nothing stored).
        calibration_time_limit: wall-clock seconds a job may run before it is killed and its campaign fails
            (``calibration_timeout``), in (0, 86400]; default 600.
        calibration_memory_limit: address-space limit of a job's process in bytes, in [2**28, 2**40]; default
            4 GiB.
        read_timeout: seconds within which a request's whole body must arrive, from its first read, in
            (0, 3600]; default 30. A slower body gets 408 ``request_timeout`` and the connection is closed.
        release_page: renders the read-only HTML page of one release, ``release_page(database_url, campaign_id,
            release_id) -> html``, served at ``GET /v1/campaigns/{id}/releases/{rid}/report`` (the report adapter's
            :func:`sufficientdp.report.release.release_page`, which ``sufficientdp serve`` passes when the
            ``report`` extra is installed). Default None: that route answers 404 ``not_found``.

    Jobs left unfinished by a stopped collector (campaigns still ``calibrating`` in the database) are queued
    again when the app is created, and fail (``calibration_interrupted``) once started more than
    :data:`~sufficientdp.service.jobs.MAX_ATTEMPTS` times. Stop the jobs with ``app.state.jobs.close()`` and the
    storage with ``app.state.storage.close()`` (the ASGI lifespan shutdown does both; for SQLite the close
    checkpoints the WAL into the database and truncates it).

    Returns:
        A FastAPI application (``app.state.storage`` is the :class:`~sufficientdp.service.storage.Storage`,
        ``app.state.jobs`` the :class:`~sufficientdp.service.jobs.CalibrationJobs`).

    Raises:
        ParameterError: an argument out of range or an unsupported database URL.
        ImportError: the ``service`` extra (or psycopg for PostgreSQL) is missing.
    """
    from .._validation import check_int

    max_body_bytes = check_int("max_body_bytes", max_body_bytes, minimum=1024, maximum=1 << 30)
    if isinstance(read_timeout, bool) or not isinstance(read_timeout, (int, float)) or \
            not 0 < read_timeout <= 3600:
        raise ParameterError(f"read_timeout must be a number of seconds in (0, 3600]; got {read_timeout!r}")
    read_timeout = float(read_timeout)
    token_key_bits = check_int("token_key_bits", token_key_bits, minimum=2048, maximum=8192)
    if admin_token is not None and (not isinstance(admin_token, str) or len(admin_token) < 16):
        raise ParameterError("admin_token must be None or a string of at least 16 characters")
    if admin_token is None:
        _log.warning("no admin token: creating campaigns and releases is closed (403 admin_disabled); set "
                     "SUFFICIENTDP_ADMIN_TOKEN (serve) or admin_token (create_app) to open them")

    def finish(campaign_id: str, outcome: Outcome) -> None:
        rec = storage.get_campaign(campaign_id)
        if rec is not None:
            storage.finish_job(campaign_id, _finished(rec.spec, outcome))

    jobs = CalibrationJobs(start=lambda campaign_id: storage.start_job(campaign_id), finish=finish,
                           workers=calibration_workers, max_queued=calibration_queue,
                           time_limit=calibration_time_limit, memory_limit=calibration_memory_limit)
    try:
        storage = open_storage(database_url)
        cred_key = _credential_key(storage, credential_key)
        # Restart rule: jobs a stopped collector left unfinished run again (MAX_ATTEMPTS bounds the restarts).
        jobs.recover([(cid, request) for cid, request, _ in storage.unfinished_jobs()])
    except BaseException:
        jobs.close()
        raise
    signers: dict[str, Any] = {}
    signers_lock = threading.Lock()
    active_campaigns: dict[str, tuple[dict[str, Any], bytes | None]] = {}
    active_lock = threading.Lock()

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        yield
        import anyio.to_thread

        await anyio.to_thread.run_sync(jobs.close)
        await anyio.to_thread.run_sync(storage.close)  # SQLite: the WAL is checkpointed and truncated

    app = FastAPI(
        title="sufficientdp collector",
        version="1",
        description="Collects randomized bit-vector reports and releases estimates over crowds of at least "
                    "N_min people (docs/collector.md, docs/collector_api_contract.md).",
        responses={code: {"model": ErrorOut} for code in (400, 401, 403, 404, 405, 408, 409, 413, 422, 429, 500,
                                                          503)},
        lifespan=lifespan,
        **_no_telemetry(),
    )
    app.state.storage = storage
    app.state.jobs = jobs
    app.add_middleware(_ReportsFastPath, accept=lambda campaign_id, body: fast_reports(campaign_id, body))
    app.add_middleware(_BodyLimit, limit=max_body_bytes, timeout=read_timeout)
    app.add_middleware(_InternalErrors)  # outermost of ours: it also catches what _BodyLimit raises

    # ---------------------------------------------------------------------------------- error handlers
    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        is_reports = request.url.path.endswith("/reports")
        err = errors[0] if errors else {"type": "", "loc": (), "msg": "invalid request"}
        etype = str(err.get("type", ""))
        loc = tuple(err.get("loc", ()))
        if etype == "json_invalid" or [p for p in loc if p != "body"] == []:
            detail = "the request body is not valid JSON" if etype == "json_invalid" else \
                "the request body must be a JSON object"
            return JSONResponse(error_body("invalid_json", detail, None), status_code=400)
        name = _loc_name(loc)
        top = str(loc[1]) if len(loc) > 1 and loc[0] == "body" else (str(loc[0]) if loc else None)
        if etype == "too_long" and name in ("reports", "nonces", "tokens"):
            return JSONResponse(error_body(
                "request_too_large",
                f"{name} must hold at most {MAX_REPORTS_PER_REQUEST} entries per request; got more", name),
                status_code=413)
        if etype == "missing":
            message = f"{name} is required ({_ALLOWED.get(top or '', 'see /openapi.json')})"
        elif etype == "extra_forbidden":
            message = f"{name} is not a known field; allowed fields are listed in /openapi.json"
        else:
            parts = [p for p in loc if p != "body"]
            if top == "reports" and len(parts) == 3:
                allowed = "the integer 0 or 1"
            elif top == "reports" and len(parts) == 2:
                allowed = "a list of L integers 0 or 1"
            else:
                last = [p for p in parts if isinstance(p, str)][-1] if parts else ""
                allowed = _ALLOWED.get(last, "")
            message = (f"{name} must be {allowed}; got {_show(err.get('input'))}" if allowed else
                       f"{name}: {err.get('msg')}; got {_show(err.get('input'))}")
        if is_reports and len(loc) == 4 and loc[1] == "tokens" and loc[3] == "signature":
            # A signature that is not hex is an invalid token, as one that does not verify.
            return JSONResponse(error_body("invalid_token", message, name), status_code=403)
        if is_reports:
            return JSONResponse(error_body("invalid_report", message, name), status_code=400)
        return JSONResponse(error_body("invalid_parameter", message, name), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {400: "invalid_json", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        detail = str(exc.detail)
        if exc.status_code == 400:  # FastAPI could not decode the body (e.g. an integer of more than 4300 digits)
            detail = "the request body could not be parsed as JSON (malformed, or a number too long to convert)"
        return JSONResponse(error_body(code, detail, None), status_code=exc.status_code)

    # ------------------------------------------------------------------------------------------ helpers
    def require_admin(request: Request) -> None:
        if admin_token is None:
            raise ServiceError(403, "admin_disabled", "administrative calls (creating and cancelling campaigns, "
                               "releases) are closed: the deployment has no admin token (SUFFICIENTDP_ADMIN_TOKEN)",
                               None)
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {admin_token}".encode()):
            raise ServiceError(401, "unauthorized", "this call needs the deployment's admin bearer token", None)

    def cached_active(campaign_id: str) -> tuple[dict[str, Any], bytes | None] | None:
        """An active campaign already loaded by this process (active is final: its object never changes)."""
        with active_lock:
            return active_campaigns.get(campaign_id)

    def load(campaign_id: str, *, active: bool = False) -> tuple[dict[str, Any], bytes | None]:
        """The campaign (as served) and its token key; with ``active``, 409 unless its status is active."""
        if not _CAMPAIGN_ID.fullmatch(campaign_id):
            raise ServiceError(404, "unknown_campaign", f"no campaign with id {_show(campaign_id)}", "id")
        if active and (hit := cached_active(campaign_id)) is not None:
            return dict(hit[0]), hit[1]
        rec = storage.get_campaign(campaign_id)
        if rec is None:
            raise ServiceError(404, "unknown_campaign", f"no campaign with id {_show(campaign_id)}", "id")
        spec = _public(rec.spec)
        if spec["status"] == "active":
            with active_lock:
                if len(active_campaigns) >= _ACTIVE_CACHE_SIZE:
                    active_campaigns.pop(next(iter(active_campaigns)))
                active_campaigns[campaign_id] = (dict(spec), rec.signer_pem)
        if active and spec["status"] != "active":
            if spec["status"] == "calibrating":
                message = (f"campaign {campaign_id} is still calibrating (its q is being calibrated or checked); "
                           f"it accepts tokens, reports and releases once GET /v1/campaigns/{campaign_id} shows "
                           "status 'active'")
            else:
                code = (spec.get("error") or {}).get("code", "")
                message = (f"campaign {campaign_id} failed ({code}); it accepts no tokens, reports or releases: "
                           "create a new campaign")
            raise ServiceError(409, "campaign_not_active", message, None)
        return spec, rec.signer_pem

    def signer_for(campaign_id: str, pem: bytes) -> Any:
        with signers_lock:
            s = signers.get(campaign_id)
        if s is None:
            from ..collection.tokens import TokenSigner

            s = TokenSigner.from_pem(pem)
            with signers_lock:
                signers[campaign_id] = s
        return s

    def status(spec: dict[str, Any]) -> dict[str, Any]:
        pending, released, n_rel = storage.counts(spec["id"])
        return {**spec, "pending_reports": pending, "released_reports": released, "releases": n_rel}

    # ---------------------------------------------------------------------------------------- endpoints
    @app.post("/v1/campaigns", status_code=202, response_model=CampaignOut, dependencies=[Depends(require_admin)])
    def create_campaign(body: CampaignIn, response: Response) -> dict[str, Any]:
        """Create a campaign: 202 with status 'calibrating' (poll the Location); a background job calibrates q
        (q = null) or checks the given q, and the campaign becomes 'active' or 'failed'."""
        requested = body.model_dump()
        token_scheme = requested.pop("token_scheme")
        try:
            campaign = Campaign(**requested)
        except ParameterError as exc:
            raise ServiceError(422, "invalid_parameter", _clip(str(exc)), _param_of(str(exc))) from None
        if campaign.rate_limit != "tokens" and token_scheme is not None:
            raise ServiceError(422, "invalid_parameter", f"token_scheme must be null when rate_limit is "
                               f"'{campaign.rate_limit}' (the campaign issues no tokens); got {token_scheme!r}",
                               "token_scheme")
        if campaign.rate_limit == "tokens" and token_scheme is None:
            token_scheme = SCHEME_RSABSSA
        if campaign.q is not None:  # cheap: a given q that cannot be a dyadic q below 1/2 is refused now
            try:
                DyadicProbability.from_float(campaign.q, precision=campaign.precision, rounding="up")
            except ParameterError as exc:
                raise ServiceError(422, "invalid_parameter", str(exc), "q") from None
        fields = campaign.to_dict()
        known = cached_outcome(fields)  # the outcome of an identical configuration, computed before
        busy = ServiceError(429, "calibration_queue_full",
                            f"the collector already has {jobs.capacity} campaign calibrations running or queued "
                            f"(its limit); nothing was stored, retry in {RETRY_AFTER} s", None,
                            headers={"Retry-After": str(RETRY_AFTER)})
        closing = ServiceError(503, "shutting_down", "the collector is shutting down; nothing was stored", None,
                               headers={"Retry-After": str(RETRY_AFTER)})
        if known is None and not jobs.has_room():
            raise closing if jobs.closed else busy
        campaign_id = secrets.token_hex(16)
        pem: bytes | None = None
        token_key: dict[str, Any] | None = None
        if campaign.rate_limit == "tokens":  # one RSA key generation: bounded work
            from ..collection.tokens import TokenSigner

            signer = TokenSigner.generate(token_key_bits)
            pem = signer.to_pem()
            token_key = signer.public.to_dict()
            with signers_lock:
                signers[campaign_id] = signer
        spec: dict[str, Any] = {
            "id": campaign_id, "status": "calibrating", "error": None, **fields, "q": None, "q_numerator": None,
            "eta_at_q": None, "calibrated": campaign.q is None, "guarantee": None, "notes": [],
            "token_key": token_key, "token_scheme": token_scheme}

        def forget_key() -> None:  # nothing was stored
            with signers_lock:
                signers.pop(campaign_id, None)

        try:
            if known is not None:
                spec = _finished(spec, known)
                storage.create_campaign(campaign_id, spec, pem)
                outcome = "stored"
            else:  # the campaign and its job in one transaction, only if the queue has room
                outcome = jobs.submit(campaign_id, fields,
                                      lambda: storage.create_campaign(campaign_id, spec, pem, job=fields))
        except BaseException:
            forget_key()
            raise
        if outcome in ("full", "closed"):
            forget_key()
            raise closing if outcome == "closed" else busy
        if outcome == "queued":
            response.headers["Retry-After"] = "1"
        response.headers["Location"] = f"/v1/campaigns/{campaign_id}"
        return spec

    @app.get("/v1/campaigns/{campaign_id}", response_model=CampaignStatusOut)
    def get_campaign(campaign_id: str) -> dict[str, Any]:
        """The campaign object with its counters."""
        spec, _ = load(campaign_id)
        return status(spec)

    @app.post("/v1/campaigns/{campaign_id}/cancel", response_model=CampaignStatusOut,
              dependencies=[Depends(require_admin)])
    def cancel_calibration(campaign_id: str) -> dict[str, Any]:
        """Cancel a campaign's calibration: it fails with 'calibration_cancelled' (409 unless calibrating)."""
        spec, _ = load(campaign_id)
        if spec["status"] == "calibrating":
            outcome = failed("calibration_cancelled", f"the calibration of campaign {campaign_id} was cancelled by "
                             "the deployment (POST /v1/campaigns/{id}/cancel); create a new campaign")
            if storage.finish_job(campaign_id, _finished(spec, outcome)):  # first writer wins
                jobs.cancel(campaign_id)  # drop it from the queue or kill its process; nothing more is stored
                spec, _ = load(campaign_id)
                return status(spec)
            spec, _ = load(campaign_id)  # its job stored an outcome meanwhile
        raise ServiceError(409, "campaign_not_calibrating", f"campaign {campaign_id} is {spec['status']}, not "
                           "calibrating; only a calibrating campaign can be cancelled", None)

    @app.post("/v1/campaigns/{campaign_id}/tokens", response_model=TokensOut)
    def issue_tokens(campaign_id: str, body: TokensIn) -> dict[str, Any]:
        """Blind-sign at most k token messages, once per credential and campaign (identical retries answered)."""
        spec, pem = load(campaign_id, active=True)
        if spec["rate_limit"] != "tokens" or pem is None:
            raise ServiceError(422, "invalid_parameter",
                               f"campaign {campaign_id} has rate_limit 'none'; it issues no tokens", "rate_limit")
        if not (1 <= len(body.credential) <= MAX_CREDENTIAL_LENGTH):
            raise ServiceError(422, "invalid_parameter", f"credential must be {_ALLOWED['credential']}; got a "
                               f"string of {len(body.credential)} characters", "credential")
        k = int(spec["reports_per_person"])
        if not (1 <= len(body.blinded) <= k):
            raise ServiceError(422, "invalid_parameter", f"blinded must hold 1 to k = {k} values; got "
                               f"{len(body.blinded)}", "blinded")
        signer = signer_for(campaign_id, pem)
        n = signer.public.n
        values = []
        for i, text in enumerate(body.blinded):
            v = _hex_int(text, f"blinded[{i}]", code="invalid_parameter", status=422)
            if not (0 < v < n):
                raise ServiceError(422, "invalid_parameter", f"blinded[{i}] must be in (0, n) for the campaign's "
                                   f"{n.bit_length()}-bit key; got a {v.bit_length()}-bit value", f"blinded[{i}]")
            values.append(v)
        mac = hmac.new(cred_key, campaign_id.encode() + b"\x00" + body.credential.encode("utf-8", "surrogatepass"),
                       hashlib.sha256).digest()
        # One issuance per credential, but an identical retry (same credential, same blinded list in the same
        # order; its answer was lost) is answered again. That is safe: RSA signing is deterministic, b**d mod n
        # depends on b only, so re-signing the identical blinded values returns byte for byte the signatures
        # already returned once. The requester gets no signature on any new value: the credential still obtains
        # signatures on one list of at most k values, hence at most k tokens (the one-more-RSA argument of
        # docs/rate_limiting.md is unchanged), and whoever replays a request without its blinding factors gets
        # nothing usable. The stored digest is a function of the blinded values, which are uniform in Z_n^*
        # whatever the nonces are, so it links the credential to nothing about the tokens. A different list
        # would be a second signing session: refused with 409 as before.
        digest = blinded_digest(values, signer.public.byte_length)
        sigs = storage.issue(campaign_id, mac, digest, lambda: [signer.sign_blinded(v) for v in values])
        if sigs is None:
            raise ServiceError(409, "token_already_issued",
                               f"tokens were already issued to this credential for campaign {campaign_id} (only "
                               "an identical retry of the same blinded list is answered again)", "credential")
        return {"signatures": [format(s, "x") for s in sigs]}

    @app.post("/v1/campaigns/{campaign_id}/reports", response_model=ReportsOut)
    async def submit_reports(campaign_id: str, body: ReportsIn) -> dict[str, Any]:
        """Store randomized reports (group commit); reports whose nonce is already stored are duplicates.

        A small request to an active campaign this process knows is validated on the event loop; any other in a
        worker thread (database read, token checks, large arrays). The answer is sent after the commit that
        holds the request (:meth:`Storage.submit_grouped`).
        """
        if len(body.reports) <= _INLINE_REPORTS and cached_active(campaign_id) is not None:
            packed, nonces = check_reports(campaign_id, body)
        else:
            import anyio.to_thread

            packed, nonces = await anyio.to_thread.run_sync(check_reports, campaign_id, body)
        queued = storage.submit_grouped(campaign_id, packed, nonces)
        try:
            accepted, duplicates = await asyncio.wrap_future(queued)
        except asyncio.CancelledError:  # the server's shutdown: answer 503 only if nothing will be stored
            if queued.cancel() or queued.cancelled():
                raise
            accepted, duplicates = await asyncio.wrap_future(queued)  # being committed: wait for the answer
        return {"accepted": accepted, "duplicates": duplicates}

    async def fast_reports(campaign_id: str, raw: bytes) -> dict[str, int] | None:
        """The answer to a small valid reports request to a cached active campaign; None: not such a request
        (nothing was done; the route handles it, errors included)."""
        if cached_active(campaign_id) is None:
            return None
        try:
            body = ReportsIn.model_validate(json.loads(raw))  # as FastAPI validates the body (Python mode)
            if len(body.reports) > _INLINE_REPORTS:
                return None
            packed, nonces = check_reports(campaign_id, body)
        except Exception:  # noqa: BLE001 - the route validates again and answers with the same error
            return None
        queued = storage.submit_grouped(campaign_id, packed, nonces)
        try:
            accepted, duplicates = await asyncio.wrap_future(queued)
        except asyncio.CancelledError:
            if queued.cancel() or queued.cancelled():
                raise
            accepted, duplicates = await asyncio.wrap_future(queued)
        return {"accepted": accepted, "duplicates": duplicates}

    def check_reports(campaign_id: str, body: ReportsIn) -> tuple[list[bytes], list[bytes | None]]:
        """Validate a reports request: its packed reports and the nonce (or token nonce) of each."""
        spec, pem = load(campaign_id, active=True)
        bits = int(spec["bits"])
        m = len(body.reports)
        if m == 0:
            raise ServiceError(400, "invalid_report", "reports must hold at least one report; got []", "reports")
        for i, row in enumerate(body.reports):
            if len(row) != bits:
                raise ServiceError(400, "invalid_report", f"reports[{i}] must have {bits} bits (L = {bits}); "
                                   f"got {len(row)}", f"reports[{i}]")
        packed = pack_report_rows(body.reports, bits) if m * bits <= _PLAIN_PYTHON_VALUES else None
        if packed is None:  # large, or a value that is not 0/1 (numpy finds the first one for the message)
            try:
                arr = np.asarray(body.reports, dtype=np.int64)
            except OverflowError:  # an integer beyond 64 bits: find it (rare; the common path stays vectorized)
                i, j, v = next((i, j, v) for i, row in enumerate(body.reports) for j, v in enumerate(row)
                               if not -(1 << 63) <= v < (1 << 63))
                raise ServiceError(400, "invalid_report", f"reports[{i}][{j}] must be 0 or 1; got {_show(v)}",
                                   f"reports[{i}][{j}]") from None
            bad = np.argwhere((arr != 0) & (arr != 1))
            if bad.size:
                i, j = (int(x) for x in bad[0])
                raise ServiceError(400, "invalid_report", f"reports[{i}][{j}] must be 0 or 1; got "
                                   f"{int(arr[i, j])}", f"reports[{i}][{j}]")
            packed = pack_reports(arr.astype(np.uint8))
        nonces: list[bytes | None] = [None] * m
        if body.nonces is not None:
            if len(body.nonces) != m:
                raise ServiceError(400, "invalid_report", f"nonces must be aligned with reports ({m}); got "
                                   f"{len(body.nonces)}", "nonces")
            for i, text in enumerate(body.nonces):
                if not _HEX64.fullmatch(text):
                    raise ServiceError(400, "invalid_report", f"nonces[{i}] must be 64 hex characters; got "
                                       f"{_show(text)}", f"nonces[{i}]")
            nonces = [bytes.fromhex(t) for t in body.nonces]
        if spec["rate_limit"] == "tokens":
            if body.tokens is None:
                raise ServiceError(403, "invalid_token", "tokens are required by this campaign (rate_limit "
                                   "'tokens'): one {nonce, prefix, signature} per report", "tokens")
            if len(body.tokens) != m:
                raise ServiceError(400, "invalid_report", f"tokens must be aligned with reports ({m}); got "
                                   f"{len(body.tokens)}", "tokens")
            from ..collection import rsabssa
            from ..collection.tokens import TokenKey, verify

            key = TokenKey.from_dict(spec["token_key"])
            scheme = spec["token_scheme"]
            token_nonces: list[bytes | None] = []
            for i, tok in enumerate(body.tokens):
                if not _HEX64.fullmatch(tok.nonce):
                    raise ServiceError(400, "invalid_report", f"tokens[{i}].nonce must be 64 hex characters; got "
                                       f"{_show(tok.nonce)}", f"tokens[{i}].nonce")
                nonce = bytes.fromhex(tok.nonce)
                if nonces[i] is not None and nonces[i] != nonce:
                    raise ServiceError(400, "invalid_report",
                                       f"nonces[{i}] must equal tokens[{i}].nonce when both are given",
                                       f"nonces[{i}]")
                if scheme == SCHEME_RSABSSA and (tok.prefix is None or not _HEX64.fullmatch(tok.prefix)):
                    raise ServiceError(400, "invalid_report", f"tokens[{i}].prefix must be 64 hex characters (the "
                                       f"32-byte message prefix): campaign {campaign_id} uses token_scheme "
                                       f"'{scheme}'; got {_show(tok.prefix)}", f"tokens[{i}].prefix")
                if scheme != SCHEME_RSABSSA and tok.prefix is not None:
                    raise ServiceError(400, "invalid_report", f"tokens[{i}].prefix must be omitted: campaign "
                                       f"{campaign_id} uses token_scheme '{scheme}', whose tokens have no message "
                                       "prefix", f"tokens[{i}].prefix")
                sig = _hex_int(tok.signature, f"tokens[{i}].signature", code="invalid_token", status=403)
                if scheme == SCHEME_RSABSSA:
                    assert tok.prefix is not None  # checked above
                    valid = 0 < sig < key.n and rsabssa.verify(key, bytes.fromhex(tok.prefix) + nonce,
                                                               sig.to_bytes(key.byte_length, "big"))
                else:
                    valid = verify(key, nonce, sig)
                if not valid:
                    raise ServiceError(403, "invalid_token", f"tokens[{i}] is not a valid token of campaign "
                                       f"{campaign_id}; nothing was stored", f"tokens[{i}]")
                token_nonces.append(nonce)
            nonces = token_nonces
        elif body.tokens is not None:
            raise ServiceError(400, "invalid_report", f"campaign {campaign_id} has rate_limit 'none'; tokens must "
                               "be omitted", "tokens")
        if len({n for n in nonces if n is not None}) != sum(n is not None for n in nonces):
            raise ServiceError(400, "invalid_report", "nonces must be distinct within one request", "nonces")
        return packed, nonces

    @app.post("/v1/campaigns/{campaign_id}/releases", status_code=201, response_model=ReleaseOut,
              dependencies=[Depends(require_admin)])
    def make_release(campaign_id: str) -> dict[str, Any]:
        """Release all pending reports if there are at least k * N_min of them."""
        spec, _ = load(campaign_id, active=True)
        k = int(spec["reports_per_person"])
        n_min = int(spec["crowd_size"])
        day = _today()

        def build(release_id: str, tally: Any) -> dict[str, Any]:
            est = estimate_release(tally, q=float(spec["q"]), reports_per_person=k)
            d = est.to_dict()
            return {"id": release_id, "reports": d["reports"], "people": d["people"],
                    "estimates": d["estimates"], "histogram": d["histogram"], "level": d["level"], "created": day}

        try:
            return storage.release(campaign_id, threshold=k * n_min, bits=int(spec["bits"]), day=day, build=build)
        except CrowdTooSmall as exc:
            raise ServiceError(409, "crowd_too_small",
                               f"a release needs at least k * N_min = {k} * {n_min} = {exc.needed} pending "
                               f"reports; {exc.pending} are pending", None) from None
        except SufficientDPError as exc:  # pragma: no cover - the stored campaign was validated
            raise ServiceError(422, "invalid_parameter", str(exc), None) from None

    @app.get("/v1/campaigns/{campaign_id}/estimates", response_model=EstimatesOut)
    def get_estimates(campaign_id: str, request: Request, release: str | None = None) -> dict[str, Any]:
        """The campaign's releases; ``?release=<id>`` for one. Windows across releases are refused."""
        load(campaign_id)
        params = request.query_params
        window = [p for p in params if p in _WINDOW_PARAMS]
        if window:
            raise ServiceError(409, "overlapping_release",
                               f"{window[0]}: estimates are served per release only (releases are disjoint by "
                               "construction); a window over reports would overlap earlier releases", window[0])
        unknown = [p for p in params if p != "release"]
        if unknown:
            raise ServiceError(422, "invalid_parameter", f"{unknown[0]} is not a known query parameter; allowed: "
                               "release", unknown[0])
        if len(params.getlist("release")) > 1:
            raise ServiceError(422, "invalid_parameter", "release may be given once; got "
                               f"{len(params.getlist('release'))} values", "release")
        rels = storage.releases(campaign_id)
        if release is not None:
            rels = [r for r in rels if r["id"] == release]
            if not rels:
                raise ServiceError(404, "unknown_release", f"campaign {campaign_id} has no release "
                                   f"{_show(release)}", "release")
        return {"campaign": campaign_id, "releases": rels}

    # The page is HTML; its errors are the usual JSON bodies (stated per code: the route's media type is HTML).
    json_error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}}
    @app.get("/v1/campaigns/{campaign_id}/releases/{release_id}/report", response_class=HTMLResponse,
             responses={200: {"description": "The release's page (self-contained HTML, read-only)",
                              "content": {"text/html": {"schema": {"type": "string"}}}},
                        **{code: json_error for code in (400, 401, 403, 404, 405, 408, 409, 413, 422, 429, 500,
                                                         503)}})
    def get_release_page(campaign_id: str, release_id: str) -> HTMLResponse:
        """The page of one release: the HTML ``sufficientdp report release`` writes (rendered by the report
        adapter passed as ``release_page``; 404 ``not_found`` when this collector serves no pages)."""
        if release_page is None:
            raise ServiceError(404, "not_found", "this collector serves no release pages (start it with the "
                               "'report' extra installed)", None)
        load(campaign_id)
        if not any(r["id"] == release_id for r in storage.releases(campaign_id)):
            raise ServiceError(404, "unknown_release", f"campaign {campaign_id} has no release {_show(release_id)}",
                               "release_id")
        return HTMLResponse(release_page(database_url, campaign_id, release_id), headers=_PAGE_HEADERS)

    return app


#: Headers of a served page: it is self-contained (inline styles and SVG, a JSON data block, no script runs).
_PAGE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                                            "frame-ancestors 'none'",
                 "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
