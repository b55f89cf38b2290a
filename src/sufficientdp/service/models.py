"""The request and response models of the collector's HTTP API (pydantic), and the limits they state.

Every bound of a request field is declared here, so /openapi.json states it and pydantic enforces it before the
endpoint runs (the endpoints check again what depends on the campaign: L per report, at most k blinded values,
a blinded value below the campaign's modulus, a valid signature).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..collection.campaign import (
    MAX_BITS,
    MAX_CROWD_SIZE,
    MAX_EPSILON,
    MAX_NAME_LENGTH,
    MAX_PRECISION,
    MAX_REPORTS_PER_PERSON,
)
from ..collection.tokens import SCHEME_RSA_FDH, SCHEME_RSABSSA

__all__ = [
    "ALLOWED", "ERROR_CODES", "MAX_CREDENTIAL_LENGTH", "MAX_HEX_DIGITS", "MAX_REPORTS_PER_REQUEST", "BitEstimateOut",
    "CampaignIn",
    "CampaignOut", "CampaignStatusOut", "ErrorDetail", "ErrorOut", "EstimatesOut", "ReleaseOut", "ReportsIn",
    "ReportsOut", "TokenIn", "TokenKeyOut", "TokensIn", "TokensOut",
]

#: Most reports accepted in one request.
MAX_REPORTS_PER_REQUEST = 10_000
#: Longest credential accepted by the token endpoint, in characters.
MAX_CREDENTIAL_LENGTH = 4096
#: Most hex digits of a blinded value or a signature.
MAX_HEX_DIGITS = 4096
#: Status codes whose JSON error body (:class:`ErrorOut`) the API states for every route.
ERROR_CODES = (400, 401, 403, 404, 405, 408, 409, 413, 422, 429, 500, 503)

#: What each request field allows, as the error messages state it.
ALLOWED = {
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


#: A hex string of 1 to MAX_HEX_DIGITS digits (a blinded value or a signature).
_HexInt = Annotated[str, Field(min_length=1, max_length=MAX_HEX_DIGITS, pattern=r"^[0-9a-fA-F]+$")]
#: 64 hex characters (a 32-byte nonce).
_Hex64 = Annotated[str, Field(min_length=64, max_length=64, pattern=r"^[0-9a-fA-F]{64}$")]
#: One report: 1 to MAX_BITS integers, each 0 or 1 (exactly L of them, checked against the campaign).
_Report = Annotated[list[Annotated[int, Field(ge=0, le=1)]], Field(min_length=1, max_length=MAX_BITS)]


class CampaignIn(BaseModel):
    """Body of ``POST /v1/campaigns``."""

    model_config = ConfigDict(strict=True, extra="forbid")
    name: str = Field(min_length=1, max_length=MAX_NAME_LENGTH, description=ALLOWED["name"])
    bits: int = Field(ge=1, le=MAX_BITS, description="L, bits per report: " + ALLOWED["bits"])
    epsilon: float = Field(gt=0, le=MAX_EPSILON, allow_inf_nan=False,
                           description="privacy level (lambda = e^epsilon): " + ALLOWED["epsilon"])
    eta: float = Field(default=0.001, gt=0, lt=1, allow_inf_nan=False,
                       description="target P[R > e^epsilon] at crowd_size: " + ALLOWED["eta"])
    crowd_size: int = Field(ge=2, le=MAX_CROWD_SIZE,
                            description="N_min, the fewest people a release covers: " + ALLOWED["crowd_size"])
    reports_per_person: int = Field(default=1, ge=1, le=MAX_REPORTS_PER_PERSON,
                                    description="k: " + ALLOWED["reports_per_person"])
    q: float | None = Field(default=None, gt=0, lt=0.5, allow_inf_nan=False,
                            description="flip probability; null calibrates it (proven method, in a background "
                                        "job: seconds to minutes): " + ALLOWED["q"])
    precision: int = Field(default=32, ge=2, le=MAX_PRECISION,
                           description="dyadic precision of q: " + ALLOWED["precision"])
    rate_limit: Literal["tokens", "none"] = Field(default="tokens", description=ALLOWED["rate_limit"])
    token_scheme: Literal["rsabssa-sha384-pss-randomized", "rsa-fdh-sha256"] | None = Field(
        default=None, description="the blind-signature scheme of the campaign's tokens (docs/rate_limiting.md): "
                                  + ALLOWED["token_scheme"])
    family: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_LENGTH,
                               description="the campaign family (devices account a family's campaigns in their "
                                           "privacy ledger); null: the campaign is its own family: "
                                           + ALLOWED["family"])
    memo_q: float | None = Field(default=None, gt=0, lt=0.5, allow_inf_nan=False,
                                 description="permanent flip q1 of a memoized family (RAPPOR-style): each device "
                                             "reports its value's permanent memo flipped again with q; the "
                                             "guarantee is checked at q1(1-q)+q(1-q1) and the lifetime bound is "
                                             "published: " + ALLOWED["memo_q"])


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

