"""Errors of the collector's HTTP API and their JSON form.

Every error response has the body ``{"error": {"code": "<snake_case>", "message": "<one sentence>",
"parameter": "<name or null>"}}`` (docs/collector_api_contract.md). Codes and statuses:

* 400 ``invalid_json`` (the body is not a JSON object), ``invalid_report`` (a report, nonce or token is malformed);
* 401 ``unauthorized`` (an administrative call without the deployment's admin bearer token);
* 403 ``invalid_token`` (a missing or invalid rate-limiting token), ``admin_disabled`` (an administrative call
  while the deployment has no admin token: closed by default);
* 404 ``unknown_campaign``, ``unknown_release``, ``not_found``;
* 405 ``method_not_allowed``;
* 408 ``request_timeout`` (the request body did not arrive within the deployment's read timeout; the
  connection is closed);
* 409 ``crowd_too_small``, ``token_already_issued``, ``overlapping_release``, ``campaign_not_active`` (tokens,
  reports or a release for a campaign that is ``calibrating`` or ``failed``), ``campaign_not_calibrating`` (a
  cancellation of a campaign that is ``active`` or ``failed``);
* 413 ``request_too_large``;
* 422 ``invalid_parameter``;
* 429 ``calibration_queue_full`` (with ``Retry-After``; nothing was stored);
* 503 ``shutting_down`` (with ``Retry-After``; nothing was stored; also a request still in flight when the
  server's graceful shutdown ends);
* 500 ``internal_error``: an unexpected error; the body carries only a correlation id (also in the
  ``X-Correlation-Id`` header), and the one log line has the same id and the exception's type, never its
  message, a traceback or request data.

A campaign whose background job failed carries the same ``{"code", "message", "parameter"}`` object in its
``error`` field: ``target_not_met``, ``invalid_parameter``, ``calibration_timeout``, ``calibration_out_of_memory``,
``calibration_failed``, ``calibration_interrupted``, ``calibration_cancelled``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ServiceError", "error_body"]


class ServiceError(Exception):
    """An error answered with ``status`` and the JSON error body.

    Args:
        status: HTTP status code.
        code: snake_case error code.
        message: one sentence naming the parameter, the value and the allowed range where that applies.
        parameter: the offending parameter's name, or None.
        headers: extra response headers (``Retry-After``), or None.
    """

    def __init__(self, status: int, code: str, message: str, parameter: str | None = None, *,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.parameter = parameter
        self.headers = headers

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return error_body(self.code, self.message, self.parameter)


def error_body(code: str, message: str, parameter: str | None = None) -> dict[str, Any]:
    """``{"error": {"code": ..., "message": ..., "parameter": ...}}``."""
    return {"error": {"code": code, "message": message, "parameter": parameter}}
