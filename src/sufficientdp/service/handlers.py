"""The collector's exception handlers: every error is the JSON body of docs/collector_api_contract.md."""

from __future__ import annotations

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .errors import ServiceError, error_body
from .validation import validation_error

__all__ = ["http_error", "request_validation_error", "service_error"]


async def service_error(request: Request, exc: ServiceError) -> JSONResponse:
    """A :class:`ServiceError`: its status, body and headers."""
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


async def request_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A request pydantic refused: 400 ``invalid_json``, 413 ``request_too_large``, 400 ``invalid_report`` or 403
    ``invalid_token`` (reports endpoint), else 422 ``invalid_parameter``; the first error is reported."""
    status, body = validation_error(list(exc.errors()), request.url.path.endswith("/reports"))
    return JSONResponse(body, status_code=status)


async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's HTTP errors (unknown path, method not allowed, an undecodable body) as JSON error bodies."""
    code = {400: "invalid_json", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    detail = str(exc.detail)
    if exc.status_code == 400:  # FastAPI could not decode the body (e.g. an integer of more than 4300 digits)
        detail = "the request body could not be parsed as JSON (malformed, or a number too long to convert)"
    return JSONResponse(error_body(code, detail, None), status_code=exc.status_code)
