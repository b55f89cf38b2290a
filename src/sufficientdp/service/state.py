"""The collector's application state, created once per app: storage, the credential HMAC key, the admin token,
the calibration job pool, the deployment's limits and the per-process caches (active campaigns, token signers).

The routes reach it through FastAPI's ``Depends(get_state)`` (it is ``app.state.service``); nothing here is math.
"""

from __future__ import annotations

import datetime as _dt
import hmac
import logging
import os
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from .._errors import ParameterError
from ..collection.tokens import SCHEME_RSA_FDH
from .errors import ServiceError
from .jobs import CalibrationJobs, Outcome
from .storage import Storage, open_storage
from .validation import show

__all__ = ["CREDENTIAL_KEY_ENV", "ServiceState", "finished", "get_state", "open_state", "require_admin", "today"]

#: Environment variable holding the credential HMAC key (hex) when ``create_app`` is not given one.
CREDENTIAL_KEY_ENV = "SUFFICIENTDP_CREDENTIAL_KEY"
#: Active campaigns whose object and token key a collector process keeps in memory.
_ACTIVE_CACHE_SIZE = 1024
_CAMPAIGN_ID = re.compile(r"[0-9a-f]{32}")

_log = logging.getLogger("sufficientdp.service")

#: A campaign as served and its token key (PEM), or None for a campaign without tokens.
Loaded = tuple[dict[str, Any], bytes | None]


@dataclass(frozen=True, eq=False)
class ServiceState:
    """What the routes share. The caches are filled as campaigns are used (an active campaign never changes)."""

    database_url: str
    storage: Storage
    jobs: CalibrationJobs
    credential_key: bytes
    admin_token: str | None
    token_key_bits: int
    release_page: Callable[[str, str, str], str] | None
    _signers: dict[str, Any] = field(init=False, default_factory=dict)
    _signers_lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _active: dict[str, Loaded] = field(init=False, default_factory=dict)
    _active_lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def cached_active(self, campaign_id: str) -> Loaded | None:
        """An active campaign already loaded by this process (active is final: its object never changes)."""
        with self._active_lock:
            return self._active.get(campaign_id)

    def load(self, campaign_id: str, *, active: bool = False) -> Loaded:
        """The campaign (as served) and its token key; with ``active``, 409 unless its status is active."""
        if not _CAMPAIGN_ID.fullmatch(campaign_id):
            raise ServiceError(404, "unknown_campaign", f"no campaign with id {show(campaign_id)}", "id")
        if active and (hit := self.cached_active(campaign_id)) is not None:
            return dict(hit[0]), hit[1]
        rec = self.storage.get_campaign(campaign_id)
        if rec is None:
            raise ServiceError(404, "unknown_campaign", f"no campaign with id {show(campaign_id)}", "id")
        spec = _public(rec.spec)
        if spec["status"] == "active":
            with self._active_lock:
                if len(self._active) >= _ACTIVE_CACHE_SIZE:
                    self._active.pop(next(iter(self._active)))
                self._active[campaign_id] = (dict(spec), rec.signer_pem)
        if active and spec["status"] != "active":
            raise ServiceError(409, "campaign_not_active", _not_active_message(campaign_id, spec), None)
        return spec, rec.signer_pem

    def signer_for(self, campaign_id: str, pem: bytes) -> Any:
        """The campaign's token signer (loaded from its PEM once per process)."""
        with self._signers_lock:
            s = self._signers.get(campaign_id)
        if s is None:
            from ..collection.tokens import TokenSigner

            s = TokenSigner.from_pem(pem)
            self.remember_signer(campaign_id, s)
        return s

    def remember_signer(self, campaign_id: str, signer: Any) -> None:
        """Keep a campaign's token signer (a new campaign's, or one just loaded)."""
        with self._signers_lock:
            self._signers[campaign_id] = signer

    def forget_signer(self, campaign_id: str) -> None:
        """Drop a signer kept for a campaign that was not stored."""
        with self._signers_lock:
            self._signers.pop(campaign_id, None)

    def status(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The campaign object with its counters."""
        pending, released, n_rel = self.storage.counts(spec["id"])
        return {**spec, "pending_reports": pending, "released_reports": released, "releases": n_rel}

    def close(self) -> None:
        """Stop the jobs, then close the storage (SQLite: the WAL is checkpointed and truncated)."""
        self.jobs.close()
        self.storage.close()


def _not_active_message(campaign_id: str, spec: dict[str, Any]) -> str:
    if spec["status"] == "calibrating":
        return (f"campaign {campaign_id} is still calibrating (its q is being calibrated or checked); it accepts "
                f"tokens, reports and releases once GET /v1/campaigns/{campaign_id} shows status 'active'")
    code = (spec.get("error") or {}).get("code", "")
    return (f"campaign {campaign_id} failed ({code}); it accepts no tokens, reports or releases: create a new "
            "campaign")


def open_state(database_url: str, *, credential_key: bytes | None, admin_token: str | None, token_key_bits: int,
               release_page: Callable[[str, str, str], str] | None, calibration_workers: int,
               calibration_queue: int, calibration_time_limit: float,
               calibration_memory_limit: int) -> ServiceState:
    """Open the storage, start the job pool and queue again the jobs a stopped collector left unfinished (the
    arguments are :func:`~sufficientdp.service.app.create_app`'s, already checked there)."""
    opened: list[Storage] = []

    def finish(campaign_id: str, outcome: Outcome) -> None:
        rec = opened[0].get_campaign(campaign_id)
        if rec is not None:
            opened[0].finish_job(campaign_id, finished(rec.spec, outcome))

    jobs = CalibrationJobs(start=lambda campaign_id: opened[0].start_job(campaign_id), finish=finish,
                           workers=calibration_workers, max_queued=calibration_queue,
                           time_limit=calibration_time_limit, memory_limit=calibration_memory_limit)
    try:
        storage = open_storage(database_url)
        opened.append(storage)
        cred_key = _credential_key(storage, credential_key)
        # Restart rule: jobs a stopped collector left unfinished run again (MAX_ATTEMPTS bounds the restarts).
        jobs.recover([(cid, request) for cid, request, _ in storage.unfinished_jobs()])
    except BaseException:
        jobs.close()
        raise
    return ServiceState(database_url=database_url, storage=storage, jobs=jobs, credential_key=cred_key,
                        admin_token=admin_token, token_key_bits=token_key_bits, release_page=release_page)


# -------------------------------------------------------------------------------------------- dependencies
async def get_state(request: Request) -> ServiceState:
    """The app's :class:`ServiceState` (a FastAPI dependency)."""
    state: ServiceState = request.app.state.service
    return state


def require_admin(request: Request) -> None:
    """The administrative calls' dependency: 403 ``admin_disabled`` without an admin token, 401 ``unauthorized``
    unless the request carries it as its bearer token."""
    admin_token = request.app.state.service.admin_token
    if admin_token is None:
        raise ServiceError(403, "admin_disabled", "administrative calls (creating and cancelling campaigns, "
                           "releases) are closed: the deployment has no admin token (SUFFICIENTDP_ADMIN_TOKEN)",
                           None)
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {admin_token}".encode()):
        raise ServiceError(401, "unauthorized", "this call needs the deployment's admin bearer token", None)


# --------------------------------------------------------------------------------------------- campaigns
def _public(spec: dict[str, Any]) -> dict[str, Any]:
    """The stored campaign object as served (campaigns stored before schema version 3 were all active; before
    version 4 every token campaign used RSA-FDH tokens: the migration writes it, and this default agrees)."""
    return {"status": "active", "error": None,
            "token_scheme": SCHEME_RSA_FDH if spec.get("rate_limit") == "tokens" else None, **spec}


def finished(spec: dict[str, Any], outcome: Outcome) -> dict[str, Any]:
    """The campaign object once its job has an outcome."""
    out = dict(spec)
    if outcome.status == "active":
        out.update(outcome.plan)
        out.update(status="active", error=None)
    else:
        out.update(status="failed", error=dict(outcome.error or {}))
    return out


def today() -> str:
    """Today's UTC day, YYYY-MM-DD (a release's ``created``)."""
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
