"""Routes of the participants: ``POST /v1/campaigns/{id}/tokens`` (blind signatures, once per credential) and
``POST /v1/campaigns/{id}/reports`` (group commit), and :func:`fast_reports`, the same reports endpoint for the
:class:`~sufficientdp.service.middleware.ReportsFastPath` middleware.

The blind signatures are :mod:`sufficientdp.collection.tokens`' (RSA-FDH) and
:mod:`sufficientdp.collection.rsabssa`'s (RFC 9474); the request checks are :mod:`sufficientdp.service.validation`'s.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from concurrent.futures import Future
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from ..errors import ServiceError
from ..models import ALLOWED, MAX_CREDENTIAL_LENGTH, ReportsIn, ReportsOut, TokensIn, TokensOut
from ..state import ServiceState, get_state
from ..storage import blinded_digest
from ..validation import check_report_body, hex_int

__all__ = ["check_reports", "fast_reports", "router"]

#: Requests with at most this many reports to a known active campaign are validated on the event loop.
_INLINE_REPORTS = 4

router = APIRouter()
State = Annotated[ServiceState, Depends(get_state)]


@router.post("/v1/campaigns/{campaign_id}/tokens", response_model=TokensOut)
def issue_tokens(campaign_id: str, body: TokensIn, state: State) -> dict[str, Any]:
    """Blind-sign at most k token messages, once per credential and campaign (identical retries answered)."""
    spec, pem = state.load(campaign_id, active=True)
    if spec["rate_limit"] != "tokens" or pem is None:
        raise ServiceError(422, "invalid_parameter",
                           f"campaign {campaign_id} has rate_limit 'none'; it issues no tokens", "rate_limit")
    if not (1 <= len(body.credential) <= MAX_CREDENTIAL_LENGTH):
        raise ServiceError(422, "invalid_parameter", f"credential must be {ALLOWED['credential']}; got a "
                           f"string of {len(body.credential)} characters", "credential")
    k = int(spec["reports_per_person"])
    if not (1 <= len(body.blinded) <= k):
        raise ServiceError(422, "invalid_parameter", f"blinded must hold 1 to k = {k} values; got "
                           f"{len(body.blinded)}", "blinded")
    signer = state.signer_for(campaign_id, pem)
    values = _blinded_values(body.blinded, signer.public.n)
    mac = hmac.new(state.credential_key,
                   campaign_id.encode() + b"\x00" + body.credential.encode("utf-8", "surrogatepass"),
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
    sigs = state.storage.issue(campaign_id, mac, digest, lambda: [signer.sign_blinded(v) for v in values])
    if sigs is None:
        raise ServiceError(409, "token_already_issued",
                           f"tokens were already issued to this credential for campaign {campaign_id} (only "
                           "an identical retry of the same blinded list is answered again)", "credential")
    return {"signatures": [format(s, "x") for s in sigs]}


def _blinded_values(blinded: list[str], n: int) -> list[int]:
    """The blinded values as integers, each in (0, n) for the campaign's modulus ``n`` (422 otherwise)."""
    values = []
    for i, text in enumerate(blinded):
        v = hex_int(text, f"blinded[{i}]", code="invalid_parameter", status=422)
        if not (0 < v < n):
            raise ServiceError(422, "invalid_parameter", f"blinded[{i}] must be in (0, n) for the campaign's "
                               f"{n.bit_length()}-bit key; got a {v.bit_length()}-bit value", f"blinded[{i}]")
        values.append(v)
    return values


@router.post("/v1/campaigns/{campaign_id}/reports", response_model=ReportsOut)
async def submit_reports(campaign_id: str, body: ReportsIn, state: State) -> dict[str, Any]:
    """Store randomized reports (group commit); reports whose nonce is already stored are duplicates.

    A small request to an active campaign this process knows is validated on the event loop; any other in a
    worker thread (database read, token checks, large arrays). The answer is sent after the commit that
    holds the request (:meth:`Storage.submit_grouped`).
    """
    if len(body.reports) <= _INLINE_REPORTS and state.cached_active(campaign_id) is not None:
        packed, nonces = check_reports(state, campaign_id, body)
    else:
        import anyio.to_thread

        packed, nonces = await anyio.to_thread.run_sync(check_reports, state, campaign_id, body)
    accepted, duplicates = await _committed(state.storage.submit_grouped(campaign_id, packed, nonces))
    return {"accepted": accepted, "duplicates": duplicates}


async def fast_reports(state: ServiceState, campaign_id: str, raw: bytes) -> dict[str, int] | None:
    """The answer to a small valid reports request to a cached active campaign; None: not such a request
    (nothing was done; the route handles it, errors included)."""
    if state.cached_active(campaign_id) is None:
        return None
    try:
        body = ReportsIn.model_validate(json.loads(raw))  # as FastAPI validates the body (Python mode)
        if len(body.reports) > _INLINE_REPORTS:
            return None
        packed, nonces = check_reports(state, campaign_id, body)
    except Exception:  # noqa: BLE001 - the route validates again and answers with the same error
        return None
    accepted, duplicates = await _committed(state.storage.submit_grouped(campaign_id, packed, nonces))
    return {"accepted": accepted, "duplicates": duplicates}


async def _committed(queued: Future[tuple[int, int]]) -> tuple[int, int]:
    """The (accepted, duplicates) of a queued group commit once it is committed."""
    try:
        return await asyncio.wrap_future(queued)
    except asyncio.CancelledError:  # the server's shutdown: answer 503 only if nothing will be stored
        if queued.cancel() or queued.cancelled():
            raise
        return await asyncio.wrap_future(queued)  # being committed: wait for the answer


def check_reports(state: ServiceState, campaign_id: str,
                  body: ReportsIn) -> tuple[list[bytes], list[bytes | None]]:
    """Validate a reports request to an active campaign: its packed reports and the nonce (or token nonce) of
    each."""
    spec, _ = state.load(campaign_id, active=True)
    return check_report_body(spec, campaign_id, body)
