"""Errors of the collector's HTTP API and their JSON form.

Every error response has the body ``{"error": {"code": "<snake_case>", "message": "<one sentence>",
"parameter": "<name or null>"}}`` (docs/collector_api_contract.md). Codes and statuses:

* 400 ``invalid_json`` (the body is not a JSON object), ``invalid_report`` (a report, nonce or token is malformed);
* 403 ``invalid_token`` (a missing or invalid rate-limiting token);
* 404 ``unknown_campaign``, ``unknown_release``, ``not_found``;
* 405 ``method_not_allowed``;
* 409 ``crowd_too_small``, ``token_already_issued``, ``overlapping_release``;
* 413 ``request_too_large``;
* 422 ``invalid_parameter``, ``target_not_met``;
* 401 ``unauthorized`` (administrative calls when the deployment sets an admin token);
* 500 ``internal_error`` (details are never sent nor logged with request data).
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
    """

    def __init__(self, status: int, code: str, message: str, parameter: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.parameter = parameter

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return error_body(self.code, self.message, self.parameter)


def error_body(code: str, message: str, parameter: str | None = None) -> dict[str, Any]:
    """``{"error": {"code": ..., "message": ..., "parameter": ...}}``."""
    return {"error": {"code": code, "message": message, "parameter": parameter}}
