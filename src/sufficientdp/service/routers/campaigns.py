"""Routes of the campaigns: ``POST /v1/campaigns`` (admin), ``GET /v1/campaigns/{id}``,
``POST /v1/campaigns/{id}/cancel`` (admin).

Creating a campaign validates it with the core's :class:`~sufficientdp.collection.campaign.Campaign`, stores it as
``calibrating`` and hands its calibration to the bounded job pool (:mod:`sufficientdp.service.jobs`).
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response

from ..._errors import ParameterError
from ..._numerics.dyadic import DyadicProbability
from ...collection.campaign import Campaign
from ...collection.tokens import SCHEME_RSABSSA
from ..errors import ServiceError
from ..jobs import RETRY_AFTER, Outcome, cached_outcome, failed
from ..models import CampaignIn, CampaignOut, CampaignStatusOut
from ..state import ServiceState, finished, get_state, require_admin
from ..validation import clip, param_of

__all__ = ["router"]

router = APIRouter()
State = Annotated[ServiceState, Depends(get_state)]


@router.post("/v1/campaigns", status_code=202, response_model=CampaignOut, dependencies=[Depends(require_admin)])
def create_campaign(body: CampaignIn, response: Response, state: State) -> dict[str, Any]:
    """Create a campaign: 202 with status 'calibrating' (poll the Location); a background job calibrates q
    (q = null) or checks the given q, and the campaign becomes 'active' or 'failed'."""
    campaign, token_scheme = _checked_campaign(body)
    fields = campaign.to_dict()
    known = cached_outcome(fields)  # the outcome of an identical configuration, computed before
    if known is None and not state.jobs.has_room():
        raise _refused(state, closed=state.jobs.closed)
    campaign_id = secrets.token_hex(16)
    pem: bytes | None = None
    token_key: dict[str, Any] | None = None
    if campaign.rate_limit == "tokens":  # one RSA key generation: bounded work
        from ...collection.tokens import TokenSigner

        signer = TokenSigner.generate(state.token_key_bits)
        pem = signer.to_pem()
        token_key = signer.public.to_dict()
        state.remember_signer(campaign_id, signer)
    spec: dict[str, Any] = {
        "id": campaign_id, "status": "calibrating", "error": None, **fields, "q": None, "q_numerator": None,
        "eta_at_q": None, "calibrated": campaign.q is None, "guarantee": None, "notes": [],
        "token_key": token_key, "token_scheme": token_scheme}
    try:
        spec, outcome = _store(state, campaign_id, spec, pem, fields, known)
    except BaseException:
        state.forget_signer(campaign_id)  # nothing was stored
        raise
    if outcome in ("full", "closed"):
        state.forget_signer(campaign_id)
        raise _refused(state, closed=outcome == "closed")
    if outcome == "queued":
        response.headers["Retry-After"] = "1"
    response.headers["Location"] = f"/v1/campaigns/{campaign_id}"
    return spec


def _checked_campaign(body: CampaignIn) -> tuple[Campaign, str | None]:
    """The campaign the request describes (checked by the core) and its token scheme (422 when invalid)."""
    requested = body.model_dump()
    token_scheme = requested.pop("token_scheme")
    try:
        campaign = Campaign(**requested)
    except ParameterError as exc:
        raise ServiceError(422, "invalid_parameter", clip(str(exc)), param_of(str(exc))) from None
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
    return campaign, token_scheme


def _store(state: ServiceState, campaign_id: str, spec: dict[str, Any], pem: bytes | None, fields: dict[str, Any],
           known: Outcome | None) -> tuple[dict[str, Any], str]:
    """Store the campaign: finished at once when an identical configuration's outcome is ``known``, else with its
    job in one transaction, only if the queue has room. The stored object and ``stored``, ``queued``, ``full`` or
    ``closed``."""
    if known is not None:
        spec = finished(spec, known)
        state.storage.create_campaign(campaign_id, spec, pem)
        return spec, "stored"
    outcome = state.jobs.submit(campaign_id, fields,
                                lambda: state.storage.create_campaign(campaign_id, spec, pem, job=fields))
    return spec, outcome


def _refused(state: ServiceState, *, closed: bool) -> ServiceError:
    """503 ``shutting_down`` when the job pool is closed, else 429 ``calibration_queue_full`` (nothing stored)."""
    if closed:
        return ServiceError(503, "shutting_down", "the collector is shutting down; nothing was stored", None,
                            headers={"Retry-After": str(RETRY_AFTER)})
    return ServiceError(429, "calibration_queue_full",
                        f"the collector already has {state.jobs.capacity} campaign calibrations running or queued "
                        f"(its limit); nothing was stored, retry in {RETRY_AFTER} s", None,
                        headers={"Retry-After": str(RETRY_AFTER)})


@router.get("/v1/campaigns/{campaign_id}", response_model=CampaignStatusOut)
def get_campaign(campaign_id: str, state: State) -> dict[str, Any]:
    """The campaign object with its counters."""
    spec, _ = state.load(campaign_id)
    return state.status(spec)


@router.post("/v1/campaigns/{campaign_id}/cancel", response_model=CampaignStatusOut,
             dependencies=[Depends(require_admin)])
def cancel_calibration(campaign_id: str, state: State) -> dict[str, Any]:
    """Cancel a campaign's calibration: it fails with 'calibration_cancelled' (409 unless calibrating)."""
    spec, _ = state.load(campaign_id)
    if spec["status"] == "calibrating":
        outcome = failed("calibration_cancelled", f"the calibration of campaign {campaign_id} was cancelled by "
                         "the deployment (POST /v1/campaigns/{id}/cancel); create a new campaign")
        if state.storage.finish_job(campaign_id, finished(spec, outcome)):  # first writer wins
            state.jobs.cancel(campaign_id)  # drop it from the queue or kill its process; nothing more is stored
            spec, _ = state.load(campaign_id)
            return state.status(spec)
        spec, _ = state.load(campaign_id)  # its job stored an outcome meanwhile
    raise ServiceError(409, "campaign_not_calibrating", f"campaign {campaign_id} is {spec['status']}, not "
                       "calibrating; only a calibrating campaign can be cancelled", None)
