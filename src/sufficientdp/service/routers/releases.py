"""Routes of the releases: ``POST /v1/campaigns/{id}/releases`` (admin), ``GET /v1/campaigns/{id}/estimates``
and ``GET /v1/campaigns/{id}/releases/{rid}/report`` (the release's HTML page).

A release's estimates are :func:`sufficientdp.collection.campaign.estimate_release`'s; its page is the report
adapter's (``create_app(release_page=...)``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from ..._errors import SufficientDPError
from ...collection.campaign import estimate_release
from ..errors import ServiceError
from ..models import ERROR_CODES, EstimatesOut, ReleaseOut
from ..state import ServiceState, get_state, require_admin, today
from ..storage import CrowdTooSmall
from ..validation import show

__all__ = ["router"]

#: Query parameters that would ask for a window over reports (refused: releases are disjoint).
_WINDOW_PARAMS = ("from", "to", "since", "until", "start", "end", "window", "after", "before")
#: Headers of a served page: it is self-contained (inline styles and SVG, a JSON data block, no script runs).
_PAGE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                                            "frame-ancestors 'none'",
                 "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}

router = APIRouter()
State = Annotated[ServiceState, Depends(get_state)]


@router.post("/v1/campaigns/{campaign_id}/releases", status_code=201, response_model=ReleaseOut,
             dependencies=[Depends(require_admin)])
def make_release(campaign_id: str, state: State) -> dict[str, Any]:
    """Release all pending reports if there are at least k * N_min of them."""
    spec, _ = state.load(campaign_id, active=True)
    k = int(spec["reports_per_person"])
    n_min = int(spec["crowd_size"])
    day = today()

    def build(release_id: str, tally: Any) -> dict[str, Any]:
        est = estimate_release(tally, q=float(spec["q"]), reports_per_person=k)
        d = est.to_dict()
        return {"id": release_id, "reports": d["reports"], "people": d["people"],
                "estimates": d["estimates"], "histogram": d["histogram"], "level": d["level"], "created": day}

    try:
        return state.storage.release(campaign_id, threshold=k * n_min, bits=int(spec["bits"]), day=day,
                                     build=build)
    except CrowdTooSmall as exc:
        raise ServiceError(409, "crowd_too_small",
                           f"a release needs at least k * N_min = {k} * {n_min} = {exc.needed} pending "
                           f"reports; {exc.pending} are pending", None) from None
    except SufficientDPError as exc:  # pragma: no cover - the stored campaign was validated
        raise ServiceError(422, "invalid_parameter", str(exc), None) from None


@router.get("/v1/campaigns/{campaign_id}/estimates", response_model=EstimatesOut)
def get_estimates(campaign_id: str, request: Request, state: State, release: str | None = None) -> dict[str, Any]:
    """The campaign's releases; ``?release=<id>`` for one. Windows across releases are refused."""
    state.load(campaign_id)
    _check_estimates_query(request)
    rels = state.storage.releases(campaign_id)
    if release is not None:
        rels = [r for r in rels if r["id"] == release]
        if not rels:
            raise ServiceError(404, "unknown_release", f"campaign {campaign_id} has no release "
                               f"{show(release)}", "release")
    return {"campaign": campaign_id, "releases": rels}


def _check_estimates_query(request: Request) -> None:
    """409 for a window over reports, 422 for another unknown parameter or a repeated ``release``."""
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


# The page is HTML; its errors are the usual JSON bodies (stated per code: the route's media type is HTML).
_JSON_ERROR = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}}


@router.get("/v1/campaigns/{campaign_id}/releases/{release_id}/report", response_class=HTMLResponse,
            responses={200: {"description": "The release's page (self-contained HTML, read-only)",
                             "content": {"text/html": {"schema": {"type": "string"}}}},
                       **{code: _JSON_ERROR for code in ERROR_CODES}})
def get_release_page(campaign_id: str, release_id: str, state: State) -> HTMLResponse:
    """The page of one release: the HTML ``sufficientdp report release`` writes (rendered by the report
    adapter passed as ``release_page``; 404 ``not_found`` when this collector serves no pages)."""
    if state.release_page is None:
        raise ServiceError(404, "not_found", "this collector serves no release pages (start it with the "
                           "'report' extra installed)", None)
    state.load(campaign_id)
    if not any(r["id"] == release_id for r in state.storage.releases(campaign_id)):
        raise ServiceError(404, "unknown_release", f"campaign {campaign_id} has no release {show(release_id)}",
                           "release_id")
    return HTMLResponse(state.release_page(state.database_url, campaign_id, release_id), headers=_PAGE_HEADERS)
