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

The app is assembled from parts: :class:`~sufficientdp.service.state.ServiceState` (storage, credential key, admin
token, calibration job pool, limits; ``app.state.service``), one ``APIRouter`` per resource
(:mod:`sufficientdp.service.routers`: campaigns; reports and tokens; releases), the request models
(:mod:`~sufficientdp.service.models`), the request checks (:mod:`~sufficientdp.service.validation`), the exception
handlers (:mod:`~sufficientdp.service.handlers`) and the ASGI middleware (:mod:`~sufficientdp.service.middleware`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

try:
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the collector service needs the 'service' extra: pip install 'sufficientdp[service]'") from exc

from .._errors import ParameterError
from .errors import ServiceError
from .handlers import http_error, request_validation_error, service_error
from .jobs import DEFAULT_MEMORY_LIMIT, DEFAULT_QUEUE, DEFAULT_TIME_LIMIT
from .middleware import BodyLimit, InternalErrors, ReportsFastPath
from .models import ERROR_CODES, MAX_REPORTS_PER_REQUEST, ErrorOut
from .models import MAX_CREDENTIAL_LENGTH as MAX_CREDENTIAL_LENGTH  # re-exported: defined here before the split
from .models import MAX_HEX_DIGITS as MAX_HEX_DIGITS
from .routers import campaigns, releases, reports
from .state import CREDENTIAL_KEY_ENV as CREDENTIAL_KEY_ENV
from .state import ServiceState, open_state

__all__ = ["MAX_REPORTS_PER_REQUEST", "create_app"]

_log = logging.getLogger("sufficientdp.service")


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
    max_body_bytes, read_timeout, token_key_bits = _checked_limits(max_body_bytes, read_timeout, token_key_bits,
                                                                   admin_token)
    state = open_state(database_url, credential_key=credential_key, admin_token=admin_token,
                       token_key_bits=token_key_bits, release_page=release_page,
                       calibration_workers=calibration_workers, calibration_queue=calibration_queue,
                       calibration_time_limit=calibration_time_limit,
                       calibration_memory_limit=calibration_memory_limit)
    app = FastAPI(
        title="sufficientdp collector",
        version="1",
        description="Collects randomized bit-vector reports and releases estimates over crowds of at least "
                    "N_min people (docs/collector.md, docs/collector_api_contract.md).",
        responses={code: {"model": ErrorOut} for code in ERROR_CODES},
        lifespan=_lifespan,
        **_no_telemetry(),
    )
    app.state.service = state
    app.state.storage = state.storage
    app.state.jobs = state.jobs
    app.add_middleware(ReportsFastPath, accept=functools.partial(reports.fast_reports, state))
    app.add_middleware(BodyLimit, limit=max_body_bytes, timeout=read_timeout)
    app.add_middleware(InternalErrors)  # outermost of ours: it also catches what BodyLimit raises
    app.exception_handler(ServiceError)(service_error)
    app.exception_handler(RequestValidationError)(request_validation_error)
    app.exception_handler(StarletteHTTPException)(http_error)
    for resource in (campaigns, reports, releases):  # the order of /openapi.json's paths
        app.include_router(resource.router)
    return app


def _checked_limits(max_body_bytes: int, read_timeout: float, token_key_bits: int,
                    admin_token: str | None) -> tuple[int, float, int]:
    """``create_app``'s limits, checked (ParameterError out of range); warns when the admin calls are closed."""
    from .._validation import check_int

    max_body_bytes = check_int("max_body_bytes", max_body_bytes, minimum=1024, maximum=1 << 30)
    if isinstance(read_timeout, bool) or not isinstance(read_timeout, (int, float)) or \
            not 0 < read_timeout <= 3600:
        raise ParameterError(f"read_timeout must be a number of seconds in (0, 3600]; got {read_timeout!r}")
    token_key_bits = check_int("token_key_bits", token_key_bits, minimum=2048, maximum=8192)
    if admin_token is not None and (not isinstance(admin_token, str) or len(admin_token) < 16):
        raise ParameterError("admin_token must be None or a string of at least 16 characters")
    if admin_token is None:
        _log.warning("no admin token: creating campaigns and releases is closed (403 admin_disabled); set "
                     "SUFFICIENTDP_ADMIN_TOKEN (serve) or admin_token (create_app) to open them")
    return max_body_bytes, float(read_timeout), token_key_bits


@asynccontextmanager
async def _lifespan(app: Any) -> AsyncIterator[None]:
    """At shutdown: stop the calibration jobs, then close the storage (SQLite: the WAL is checkpointed and
    truncated)."""
    yield
    import anyio.to_thread

    state: ServiceState = app.state.service
    await anyio.to_thread.run_sync(state.jobs.close)
    await anyio.to_thread.run_sync(state.storage.close)


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
