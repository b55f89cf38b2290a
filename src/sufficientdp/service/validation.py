"""Request checks of the collector's HTTP API that depend on the campaign (pydantic has checked the rest), and the
wording of its error messages. Plain functions of explicit arguments; each raises
:class:`~sufficientdp.service.errors.ServiceError` with the status, code, message and parameter of the API contract
(docs/collector_api_contract.md).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..collection.tokens import SCHEME_RSABSSA, TokenKey, verify
from .errors import ServiceError, error_body
from .models import ALLOWED, MAX_HEX_DIGITS, MAX_REPORTS_PER_REQUEST, ReportsIn, TokenIn
from .storage import pack_report_rows, pack_reports

__all__ = ["check_report_body", "clip", "hex_int", "loc_name", "param_of", "show", "validation_error"]

#: Requests of at most this many values (reports x bits) are checked and packed in plain Python, not numpy (the
#: same answers; numpy's conversions cost more than the work for a few short rows).
_PLAIN_PYTHON_VALUES = 256
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_HEXINT = re.compile(r"[0-9a-fA-F]{1,4096}")


def param_of(message: str) -> str | None:
    """The request field a core error message starts with, if it is one."""
    head = message.split(" ", 1)[0].rstrip(":")
    return head if head in ALLOWED else None


def loc_name(loc: tuple[Any, ...]) -> str | None:
    """A pydantic error location as the field name the messages use (``tokens[0].nonce``)."""
    parts = [p for p in loc if p != "body"]
    if not parts:
        return None
    out = str(parts[0])
    for p in parts[1:]:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def show(value: Any) -> str:
    """A value as an error message quotes it (at most 80 characters)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def clip(message: str, limit: int = 500) -> str:
    """A core error message, cut to ``limit`` characters (it may quote a huge input)."""
    return message if len(message) <= limit else message[:limit - 3] + "..."


def hex_int(text: str, name: str, *, code: str, status: int) -> int:
    """The integer a hex string of 1 to MAX_HEX_DIGITS digits stands for (else ``status``/``code``)."""
    if not _HEXINT.fullmatch(text):
        raise ServiceError(status, code, f"{name} must be a hex string of 1 to {MAX_HEX_DIGITS} digits; got "
                           f"{show(text)}", name)
    return int(text, 16)


# ------------------------------------------------------------------------------------------------- reports
def check_report_body(spec: dict[str, Any], campaign_id: str,
                      body: ReportsIn) -> tuple[list[bytes], list[bytes | None]]:
    """Validate a reports request against its active campaign ``spec``: its packed reports and the nonce (or
    token nonce) of each."""
    packed = _packed_reports(body.reports, int(spec["bits"]))
    nonces = _nonces(body.nonces, len(body.reports))
    if spec["rate_limit"] == "tokens":
        nonces = _token_nonces(spec, campaign_id, body.tokens, nonces)
    elif body.tokens is not None:
        raise ServiceError(400, "invalid_report", f"campaign {campaign_id} has rate_limit 'none'; tokens must "
                           "be omitted", "tokens")
    if len({n for n in nonces if n is not None}) != sum(n is not None for n in nonces):
        raise ServiceError(400, "invalid_report", "nonces must be distinct within one request", "nonces")
    return packed, nonces


def _packed_reports(reports: list[list[int]], bits: int) -> list[bytes]:
    """The reports packed (storage's format), each checked to hold ``bits`` values 0 or 1."""
    m = len(reports)
    if m == 0:
        raise ServiceError(400, "invalid_report", "reports must hold at least one report; got []", "reports")
    for i, row in enumerate(reports):
        if len(row) != bits:
            raise ServiceError(400, "invalid_report", f"reports[{i}] must have {bits} bits (L = {bits}); "
                               f"got {len(row)}", f"reports[{i}]")
    packed = pack_report_rows(reports, bits) if m * bits <= _PLAIN_PYTHON_VALUES else None
    if packed is not None:
        return packed
    # large, or a value that is not 0/1 (numpy finds the first one for the message)
    try:
        arr = np.asarray(reports, dtype=np.int64)
    except OverflowError:  # an integer beyond 64 bits: find it (rare; the common path stays vectorized)
        i, j, v = next((i, j, v) for i, row in enumerate(reports) for j, v in enumerate(row)
                       if not -(1 << 63) <= v < (1 << 63))
        raise ServiceError(400, "invalid_report", f"reports[{i}][{j}] must be 0 or 1; got {show(v)}",
                           f"reports[{i}][{j}]") from None
    bad = np.argwhere((arr != 0) & (arr != 1))
    if bad.size:
        i, j = (int(x) for x in bad[0])
        raise ServiceError(400, "invalid_report", f"reports[{i}][{j}] must be 0 or 1; got "
                           f"{int(arr[i, j])}", f"reports[{i}][{j}]")
    return pack_reports(arr.astype(np.uint8))


def _nonces(given: list[str] | None, m: int) -> list[bytes | None]:
    """The request's nonces as bytes (None for each of the ``m`` reports when none are given)."""
    if given is None:
        return [None] * m
    if len(given) != m:
        raise ServiceError(400, "invalid_report", f"nonces must be aligned with reports ({m}); got "
                           f"{len(given)}", "nonces")
    for i, text in enumerate(given):
        if not _HEX64.fullmatch(text):
            raise ServiceError(400, "invalid_report", f"nonces[{i}] must be 64 hex characters; got "
                               f"{show(text)}", f"nonces[{i}]")
    return [bytes.fromhex(t) for t in given]


def _token_nonces(spec: dict[str, Any], campaign_id: str, tokens: list[TokenIn] | None,
                  nonces: list[bytes | None]) -> list[bytes | None]:
    """The nonces of a token campaign's reports: each token's, once the token verifies under the campaign's key."""
    m = len(nonces)
    if tokens is None:
        raise ServiceError(403, "invalid_token", "tokens are required by this campaign (rate_limit "
                           "'tokens'): one {nonce, prefix, signature} per report", "tokens")
    if len(tokens) != m:
        raise ServiceError(400, "invalid_report", f"tokens must be aligned with reports ({m}); got "
                           f"{len(tokens)}", "tokens")
    key = TokenKey.from_dict(spec["token_key"])
    scheme = spec["token_scheme"]
    return [_token_nonce(key, scheme, campaign_id, i, tok, nonces[i]) for i, tok in enumerate(tokens)]


def _token_nonce(key: TokenKey, scheme: str, campaign_id: str, i: int, tok: TokenIn,
                 nonce_given: bytes | None) -> bytes:
    """The nonce of token ``i``, checked against the report's nonce (if given) and verified."""
    if not _HEX64.fullmatch(tok.nonce):
        raise ServiceError(400, "invalid_report", f"tokens[{i}].nonce must be 64 hex characters; got "
                           f"{show(tok.nonce)}", f"tokens[{i}].nonce")
    nonce = bytes.fromhex(tok.nonce)
    if nonce_given is not None and nonce_given != nonce:
        raise ServiceError(400, "invalid_report", f"nonces[{i}] must equal tokens[{i}].nonce when both are given",
                           f"nonces[{i}]")
    if scheme == SCHEME_RSABSSA and (tok.prefix is None or not _HEX64.fullmatch(tok.prefix)):
        raise ServiceError(400, "invalid_report", f"tokens[{i}].prefix must be 64 hex characters (the "
                           f"32-byte message prefix): campaign {campaign_id} uses token_scheme "
                           f"'{scheme}'; got {show(tok.prefix)}", f"tokens[{i}].prefix")
    if scheme != SCHEME_RSABSSA and tok.prefix is not None:
        raise ServiceError(400, "invalid_report", f"tokens[{i}].prefix must be omitted: campaign "
                           f"{campaign_id} uses token_scheme '{scheme}', whose tokens have no message "
                           "prefix", f"tokens[{i}].prefix")
    sig = hex_int(tok.signature, f"tokens[{i}].signature", code="invalid_token", status=403)
    if scheme == SCHEME_RSABSSA:
        from ..collection import rsabssa

        assert tok.prefix is not None  # checked above
        valid = 0 < sig < key.n and rsabssa.verify(key, bytes.fromhex(tok.prefix) + nonce,
                                                   sig.to_bytes(key.byte_length, "big"))
    else:
        valid = verify(key, nonce, sig)
    if not valid:
        raise ServiceError(403, "invalid_token", f"tokens[{i}] is not a valid token of campaign "
                           f"{campaign_id}; nothing was stored", f"tokens[{i}]")
    return nonce


# ---------------------------------------------------------------------------------------- request errors
def validation_error(errors: list[Any], is_reports: bool) -> tuple[int, dict[str, Any]]:
    """The status and JSON body answering pydantic's ``errors`` (the first one is reported) of a request;
    ``is_reports``: the request was to the reports endpoint (400 ``invalid_report``, 403 for a signature)."""
    err = errors[0] if errors else {"type": "", "loc": (), "msg": "invalid request"}
    etype = str(err.get("type", ""))
    loc = tuple(err.get("loc", ()))
    if etype == "json_invalid" or [p for p in loc if p != "body"] == []:
        detail = "the request body is not valid JSON" if etype == "json_invalid" else \
            "the request body must be a JSON object"
        return 400, error_body("invalid_json", detail, None)
    name = loc_name(loc)
    if etype == "too_long" and name in ("reports", "nonces", "tokens"):
        return 413, error_body("request_too_large",
                               f"{name} must hold at most {MAX_REPORTS_PER_REQUEST} entries per request; got more",
                               name)
    message = _validation_message(err, etype, loc, name)
    if is_reports and len(loc) == 4 and loc[1] == "tokens" and loc[3] == "signature":
        # A signature that is not hex is an invalid token, as one that does not verify.
        return 403, error_body("invalid_token", message, name)
    if is_reports:
        return 400, error_body("invalid_report", message, name)
    return 422, error_body("invalid_parameter", message, name)


def _validation_message(err: Any, etype: str, loc: tuple[Any, ...], name: str | None) -> str:
    """The message of one pydantic error at ``loc`` (field ``name``)."""
    top = str(loc[1]) if len(loc) > 1 and loc[0] == "body" else (str(loc[0]) if loc else None)
    if etype == "missing":
        return f"{name} is required ({ALLOWED.get(top or '', 'see /openapi.json')})"
    if etype == "extra_forbidden":
        return f"{name} is not a known field; allowed fields are listed in /openapi.json"
    parts = [p for p in loc if p != "body"]
    if top == "reports" and len(parts) == 3:
        allowed = "the integer 0 or 1"
    elif top == "reports" and len(parts) == 2:
        allowed = "a list of L integers 0 or 1"
    else:
        last = [p for p in parts if isinstance(p, str)][-1] if parts else ""
        allowed = ALLOWED.get(last, "")
    return (f"{name} must be {allowed}; got {show(err.get('input'))}" if allowed else
            f"{name}: {err.get('msg')}; got {show(err.get('input'))}")
