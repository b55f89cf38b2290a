"""The client side of the collector: randomize a value locally and submit it, k reports, one request each.

A :class:`Reporter` stands for one person in one campaign. It

1. fetches the campaign (``GET /v1/campaigns/{id}``) to learn the number of bits L, the exact dyadic flip
   probability ``q = q_numerator / 2**precision``, the reports per person k, the rate-limit mode and the token key;
2. randomizes the value k times *on the device* with the project's :class:`~sufficientdp.Randomizer` (CSPRNG by
   default), so the raw value never leaves the device;
3. when the campaign is rate-limited by tokens, obtains k blind-signature tokens in one request authenticated by
   the credential (``POST .../tokens``), unblinds and verifies them, in the campaign's ``token_scheme``: RFC 9474
   RSABSSA-SHA384-PSS-Randomized (:mod:`sufficientdp.collection.rsabssa`; each token carries the 32-byte message
   prefix the client drew) for ``"rsabssa-sha384-pss-randomized"``, RSA-FDH (:mod:`sufficientdp.collection.tokens`)
   for ``"rsa-fdh-sha256"`` or a collector that publishes no scheme (it predates RSABSSA).
   The nonces, blinding factors and request body are drawn once and kept until the signatures arrive: every retry
   (connection errors, 5xx, 429, or a later call after all retries failed) resends the *identical* blinded list,
   which the collector answers again with the same signatures if its first answer was lost;
4. submits each of the k reports in its *own* request (``POST .../reports``) with its token or idempotency nonce,
   retrying with exponential backoff on connection errors, 5xx and 429 with the *same* nonce, so that a retry is
   answered as a duplicate and never stored twice.

What a request carries. Report and campaign requests are rebuilt with an allow-list of headers (``Host``,
``Accept``, ``Accept-Encoding``, ``Connection: close``, ``Content-Length``, ``Content-Type`` and the fixed
``User-Agent: sufficientdp``): no cookie, no ``Authorization``, no custom header of a caller-supplied client
reaches the collector with a report. The credential appears only in the body of the token request, which may also
carry the caller's client headers (deployments authenticate the credential upstream). The Reporter logs nothing.

Pins. Everything the Reporter learns from the collector is attacker-controlled if the collector is malicious or
compromised, or if anyone sits in the middle (plain ``http``). A tiny q (almost no noise), a large k (many
independent noisings of the same value) or a key chosen to defeat blinding (see
:mod:`sufficientdp.collection.tokens`) would defeat the local randomization or the unlinkability of tokens.
Deployments should therefore ship the campaign's parameters *inside the app* and pass them as pins:
``min_q`` (the smallest acceptable dyadic q), ``max_reports_per_person`` (largest acceptable k), ``bits`` (the
exact L) and ``token_key`` (the exact public key). A campaign violating a pin is refused with
:class:`CollectorError` (code ``"pin_mismatch"``) before anything is sent. A token campaign whose key is not pinned
is refused (code ``"unpinned_token_key"``) unless ``allow_unpinned_token_key=True``.

Connections. The default client keeps no connection alive (every request opens a fresh connection and asks the
server to close it) and stores no cookies, so the server cannot link a person's reports, or the reports to the
token request, by connection or cookie. It cannot hide the network address: route the client through an OHTTP
relay or an anonymizing proxy (pass such a ``client=``, or set ``HTTPS_PROXY``) and see ``docs/rate_limiting.md``
for the limits (timing correlation, sybils, malicious clients).

Privacy ledger. With ``ledger=`` (a :class:`~sufficientdp.client.device.LedgerStore`), the Reporter reads the
campaign's published per-release guarantee (``epsilon``, ``eta_at_q`` and ``family``) and asks the device's ledger
before sending anything: when joining would exceed the configured budget for the period, :meth:`Reporter.report`
returns a receipt with ``declined`` True and the local :class:`~sufficientdp.collection.ledger.Decision`, and sends
no token request and no report. The collector sees the same as for a device that did not report (the anonymous
campaign fetch, which every device makes before deciding, is the only request). A campaign joined is recorded in
the ledger file (atomically) *before* its first token or report request, so a crash cannot lose a spend.

Memoized families. A campaign publishing ``memo_q_numerator`` belongs to a memoized family (RAPPOR-style, see
:mod:`sufficientdp.accounting.memoization`): with ``memo=`` (a :class:`~sufficientdp.client.device.MemoStore`) the
Reporter flips the value's permanent memo (derived once per family and value, kept on the device, never sent) with
the campaign's q; without it the campaign is refused (``memo_required``) before anything is sent.
"""

from __future__ import annotations

import json
import random
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any, Final

import numpy as np
from numpy.typing import ArrayLike

from .._errors import DataError, ParameterError, SufficientDPError
from .._numerics.dyadic import DyadicProbability
from .._validation import check_int, check_positive_finite
from ..collection import rsabssa
from ..collection.ledger import Decision
from ..collection.tokens import (
    SCHEME_RSA_FDH,
    SCHEME_RSABSSA,
    TOKEN_SCHEMES,
    TokenKey,
    blind,
    new_nonce,
    unblind,
    verify,
)
from ..parameters import RandomizationParams
from ..randomization._sources import RandomSource, as_source
from ..randomization.randomizer import Randomizer, check_domain
from .device import LedgerStore, MemoStore

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "sufficientdp.client needs the optional 'httpx' package; install it with "
        "pip install 'sufficientdp[client]'"
    ) from exc

__all__ = ["CampaignInfo", "CollectorError", "ReportLimitError", "ReportReceipt", "Reporter", "wait_for_campaign"]

_CAMPAIGN_ID: Final = re.compile(r"[0-9a-fA-F]{32}")
_RATE_LIMITS: Final = ("tokens", "none")
#: Headers a report or campaign request may carry (everything else a caller's client adds is removed).
_ALLOWED_HEADERS: Final = frozenset(
    {"host", "accept", "accept-encoding", "connection", "content-length", "content-type", "user-agent"}
)
_USER_AGENT: Final = "sufficientdp"
_MAX_BACKOFF: Final = 30.0


class CollectorError(SufficientDPError):
    """The collector refused a request (4xx), misbehaved, or could not be reached after all retries.

    Attributes:
        status: the HTTP status, or ``None`` if no response was received.
        code: the contract's error code (``"invalid_token"``, ``"token_already_issued"``,
            ``"campaign_not_active"``, ...), the code of a failed campaign's ``error`` (``"target_not_met"``,
            ``"calibration_timeout"``, ...; see :func:`wait_for_campaign`), or a client-side code
            (``"unreachable"``, ``"bad_response"``, ``"invalid_signature"``, ``"campaign_mismatch"``,
            ``"pin_mismatch"``, ``"unpinned_token_key"``, ``"campaign_not_active"`` for a campaign still
            calibrating, ``"timeout"``).
        parameter: the parameter the collector named, if any.
    """

    def __init__(self, message: str, *, status: int | None = None, code: str = "", parameter: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.parameter = parameter


class ReportLimitError(SufficientDPError):
    """This Reporter already reported (its k reports, hence its k tokens, are used) or has a submission pending."""



def _dyadic(data: Mapping[str, Any], name: str, precision: int, *, what: str) -> DyadicProbability:
    """The campaign's ``{name}_numerator / 2**precision``, checked, and equal to ``{name}`` where that is given."""
    numerator = data[f"{name}_numerator"]
    if isinstance(numerator, bool) or not isinstance(numerator, int):
        raise ParameterError(f"campaign.{name}_numerator must be {what}; got {numerator!r:.80}")
    try:
        flip = DyadicProbability(numerator=numerator, precision=precision)
    except ParameterError as exc:
        raise ParameterError(f"campaign.{name}_numerator: {exc}") from None
    value = data.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value != flip.value):
        raise ParameterError(f"campaign.{name} must equal {name}_numerator / 2**precision = {flip.value!r} "
                             f"({name}_numerator={numerator}, precision={precision}); got {value!r:.80}")
    return flip

@dataclass(frozen=True, slots=True, kw_only=True)
class CampaignInfo:
    """What a client needs to know about a campaign (parsed from ``GET /v1/campaigns/{id}``).

    Attributes:
        id: the campaign id (32 hex characters).
        bits: L, the length of a report.
        flip: the exact dyadic flip probability ``q_numerator / 2**precision`` the randomizer must use.
        reports_per_person: k.
        rate_limit: ``"tokens"`` or ``"none"``.
        token_key: the public token key when ``rate_limit == "tokens"``, else ``None``.
        token_scheme: the tokens' blind-signature scheme when ``rate_limit == "tokens"`` (one of
            :data:`~sufficientdp.collection.tokens.TOKEN_SCHEMES`; ``"rsa-fdh-sha256"`` when the collector publishes
            none, as collectors before RSABSSA did), else ``None``.
        epsilon: the campaign's privacy level, or ``None`` if the collector did not publish it.
        eta_at_q: the campaign's bound on ``P[L > epsilon]`` at its q (the per-release guarantee with
            ``epsilon``), or ``None`` if not published.
        family: the campaign family (``None``: the campaign is its own family).
        memo_flip: the permanent flip q1 of a memoized family (``None``: no memoization). Then ``flip`` is the
            instantaneous q2 applied to the device's memo, never to the value.
    """

    id: str
    bits: int
    flip: DyadicProbability
    reports_per_person: int
    rate_limit: str
    token_key: TokenKey | None
    token_scheme: str | None = None
    epsilon: float | None = None
    eta_at_q: float | None = None
    family: str | None = None
    memo_flip: DyadicProbability | None = None

    @property
    def q(self) -> float:
        """The flip probability as a float (exactly ``q_numerator / 2**precision`` for precision <= 53)."""
        return self.flip.value

    @classmethod
    def from_dict(cls, data: Any) -> CampaignInfo:
        """Parse and validate a campaign object of the collector contract.

        The dyadic q must lie in (0, 0.5) (``1 <= q_numerator < 2**(precision - 1)``, precision in [2, 64]); if the
        object also carries the float ``q``, it must equal ``q_numerator / 2**precision``.

        Raises:
            ParameterError: a field is missing or out of its domain, or ``q`` disagrees with
                ``q_numerator / 2**precision`` (the message names the field).
        """
        if not isinstance(data, dict):
            raise ParameterError(f"campaign must be a JSON object; got {type(data).__name__}")
        if data.get("status", "active") != "active":
            raise ParameterError(f"campaign.status must be 'active' (reports are accepted only then); got "
                                 f"{data.get('status')!r:.80}")
        for name in ("id", "bits", "q_numerator", "precision", "reports_per_person", "rate_limit"):
            if name not in data:
                raise ParameterError(f"campaign.{name} is missing from the collector's campaign object")
        cid = data["id"]
        if not isinstance(cid, str) or not _CAMPAIGN_ID.fullmatch(cid):
            raise ParameterError(f"campaign.id must be 32 hex characters; got {cid!r:.80}")
        bits = check_int("campaign.bits", data["bits"], minimum=1)
        precision = check_int("campaign.precision", data["precision"], minimum=2, maximum=64)
        flip = _dyadic(data, "q", precision, what="an int")
        k = check_int("campaign.reports_per_person", data["reports_per_person"], minimum=1)
        rate_limit = data["rate_limit"]
        if rate_limit not in _RATE_LIMITS:
            raise ParameterError(f"campaign.rate_limit must be one of {_RATE_LIMITS}; got {rate_limit!r:.80}")
        token_key = None
        token_scheme = None
        if rate_limit == "tokens":
            if data.get("token_key") is None:
                raise ParameterError("campaign.token_key must be given when rate_limit is 'tokens'; got null")
            token_key = TokenKey.from_dict(data["token_key"])
            token_scheme = data.get("token_scheme") or SCHEME_RSA_FDH
            if token_scheme not in TOKEN_SCHEMES:
                raise ParameterError(f"campaign.token_scheme must be one of {TOKEN_SCHEMES} or null; got "
                                     f"{token_scheme!r:.80}")
        epsilon = data.get("epsilon")
        if epsilon is not None and (isinstance(epsilon, bool) or not isinstance(epsilon, (int, float))
                                    or not 0 < epsilon <= 50):
            raise ParameterError(f"campaign.epsilon must be a number in (0, 50] or null; got {epsilon!r:.80}")
        eta_at_q = data.get("eta_at_q")
        if eta_at_q is not None and (isinstance(eta_at_q, bool) or not isinstance(eta_at_q, (int, float))
                                     or not 0 <= eta_at_q < 1):
            raise ParameterError(f"campaign.eta_at_q must be a number in [0, 1) or null; got {eta_at_q!r:.80}")
        family = data.get("family")
        if family is not None and (not isinstance(family, str) or not 1 <= len(family) <= 200
                                   or not family.isprintable()):
            raise ParameterError(f"campaign.family must be null or 1 to 200 printable characters; got "
                                 f"{family!r:.80}")
        memo_flip = None
        if data.get("memo_q_numerator") is not None:
            memo_flip = _dyadic(data, "memo_q", precision, what="an int or null")
            if family is None or k != 1:
                raise ParameterError("a memoized campaign (memo_q_numerator) must name its family and have "
                                     "reports_per_person = 1")
        return cls(id=cid, bits=bits, flip=flip, reports_per_person=k, rate_limit=rate_limit, token_key=token_key,
                   token_scheme=token_scheme,
                   epsilon=None if epsilon is None else float(epsilon),
                   eta_at_q=None if eta_at_q is None else float(eta_at_q), family=family, memo_flip=memo_flip)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportReceipt:
    """What happened to one person's k reports.

    Attributes:
        campaign_id: the campaign.
        reports: k, the number of reports submitted (one request each).
        accepted: reports the collector stored.
        duplicates: reports the collector already had (a retry of a request whose answer was lost).
        requests: HTTP requests sent for the reports, retries included.
        tokens: True if each report carried a rate-limiting token.
        decision: the device's ledger decision (``None`` without a ledger). Local only: never sent.
    """

    campaign_id: str
    reports: int
    accepted: int
    duplicates: int
    requests: int
    tokens: bool
    decision: Decision | None = None

    @property
    def declined(self) -> bool:
        """True if the device's ledger declined the campaign (nothing was sent)."""
        return self.decision is not None and not self.decision.allowed

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields (``declined`` and ``decision`` only when a ledger decided)."""
        out: dict[str, Any] = {
            "campaign_id": self.campaign_id,
            "reports": self.reports,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "requests": self.requests,
            "tokens": self.tokens,
        }
        if self.decision is not None:
            out["declined"] = self.declined
            out["decision"] = self.decision.to_dict()
        return out


def _default_client(timeout: float) -> httpx.Client:
    """A client that keeps no connection alive, stores no cookie and follows no redirect."""
    return httpx.Client(
        timeout=timeout,
        limits=httpx.Limits(max_keepalive_connections=0),
        cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
        follow_redirects=False,
        headers={"user-agent": _USER_AGENT},
    )


def _check_value(value: ArrayLike, bits: int) -> np.ndarray:
    """Validate one person's value: a 1-D sequence of exactly ``bits`` entries, each 0 or 1."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise ParameterError(f"value must be a sequence of {bits} entries, each 0 or 1") from None
    if arr.ndim != 1 or arr.shape[0] != bits:
        shape = f"length {arr.shape[0]}" if arr.ndim == 1 else f"shape {arr.shape}"
        raise ParameterError(f"value must be a sequence of length {bits} (the campaign's bits); got {shape}")
    if arr.dtype == bool:
        return arr.astype(np.uint8)
    if arr.dtype.kind not in "iuf":
        raise ParameterError(f"value must hold only 0 and 1 (numbers or bools); got dtype {arr.dtype}")
    bad = np.flatnonzero((arr != 0) & (arr != 1))
    if bad.size:
        raise ParameterError(f"value entries must be 0 or 1; entry {int(bad[0])} is {arr[bad[0]].item()!r}")
    return arr.astype(np.uint8)


class Reporter:
    """Randomize one person's value locally and submit it to a collector campaign.

    Args:
        base_url: the collector's root URL, ``http(s)://host[:port][/prefix]`` without credentials in it.
        campaign_id: the campaign id (32 hex characters).
        credential: the opaque string the deployment authenticates upstream; required when the campaign is
            rate-limited by tokens. It is sent once, in the body of the token request, and nowhere else.
        client: an ``httpx.Client`` to use (an OHTTP relay or proxy, or a mock transport in tests); by default a
            client with no keep-alive, no cookies and no redirects is created (and closed by :meth:`close`).
        rng: ``None`` (default) for cryptographic randomness; a seeded ``numpy.random.Generator`` only for
            simulations. Token nonces and blinding factors always come from :mod:`secrets`.
        max_retries: retries per request after the first attempt, on connection errors, 5xx and 429 (>= 0).
        timeout: seconds per request (> 0).
        token_key: pin the expected public token key (ship it in the app); a campaign serving another key is
            refused. Required for campaigns rate-limited by tokens unless ``allow_unpinned_token_key`` is True.
        min_q: pin the smallest acceptable flip probability, in (0, 0.5); a campaign whose exact dyadic q
            (``q_numerator / 2**precision``) is below it is refused. ``None``: any q in (0, 0.5).
        max_reports_per_person: pin the largest acceptable k (>= 1); a campaign asking for more reports (more
            independent noisings of the same value) is refused. ``None``: any k.
        bits: pin L (>= 1); a campaign with another L is refused. ``None``: any L.
        allow_unpinned_token_key: accept a token key fetched from the collector without a ``token_key`` pin.
            Unsafe outside tests: blinding hides the nonce only if ``gcd(e, lambda(n)) = 1``, which a client
            cannot check; a collector choosing ``p = 1 (mod e)`` sees the e-th-residue class of ``H(nonce)``
            through the blinding and links spent tokens to credentials. It can also hand each client its own key.
        backoff: base of the exponential backoff in seconds (>= 0): attempt i waits uniformly in
            ``[0, backoff * 2**i]``, at most 30 s, or the server's ``Retry-After`` if it is longer.
        max_weight, onehot: the domain the campaign's guarantee was calibrated for (at most w set bits, or
            exactly one); a value outside it is refused before anything is randomized or sent.
        ledger: the device's privacy ledger (:class:`~sufficientdp.client.device.LedgerStore`), or None. With a
            ledger, a campaign whose published guarantee (``epsilon``, ``eta_at_q``) would exceed the budget is
            declined locally and nothing is sent (see :meth:`report`); a campaign that publishes no guarantee is
            declined too.
        memo: the device's memo store (:class:`~sufficientdp.client.device.MemoStore`), required to take part in
            a memoized campaign family (the campaign publishes ``memo_q_numerator``): the value's permanent memo
            (derived once per family and value, never sent) is randomized with the campaign's q instead of the
            value. A memoized campaign without ``memo`` is refused (``memo_required``) before anything is sent.

    A Reporter is single-use: :meth:`report` may succeed once (one value, k randomized reports). Not thread-safe.

    Examples:
        >>> reporter = Reporter("https://collector.example", "0" * 32, credential="opaque")
        >>> reporter.submitted
        0
        >>> reporter.close()
    """

    def __init__(
        self,
        base_url: str,
        campaign_id: str,
        *,
        credential: str | None = None,
        client: httpx.Client | None = None,
        rng: Any = None,
        max_retries: int = 5,
        timeout: float = 10.0,
        token_key: TokenKey | None = None,
        backoff: float = 0.25,
        min_q: float | None = None,
        max_reports_per_person: int | None = None,
        bits: int | None = None,
        allow_unpinned_token_key: bool = False,
        max_weight: int | None = None,
        onehot: bool = False,
        ledger: LedgerStore | None = None,
        memo: MemoStore | None = None,
    ) -> None:
        if not isinstance(base_url, str):
            raise ParameterError(f"base_url must be a string http(s)://host[:port]; got {type(base_url).__name__}")
        try:
            url = httpx.URL(base_url)
        except (httpx.InvalidURL, TypeError):
            raise ParameterError(f"base_url must be an http(s) URL; got {base_url!r:.80}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ParameterError(f"base_url must be an http(s) URL with a host; got {base_url!r:.80}")
        if url.userinfo or url.query or url.fragment:
            raise ParameterError("base_url must not contain credentials, a query or a fragment")
        if not isinstance(campaign_id, str) or not _CAMPAIGN_ID.fullmatch(campaign_id):
            raise ParameterError(f"campaign_id must be 32 hex characters; got {campaign_id!r:.80}")
        if credential is not None and (not isinstance(credential, str) or not credential):
            raise ParameterError("credential must be a non-empty string or None")
        if client is not None and not isinstance(client, httpx.Client):
            raise ParameterError(f"client must be an httpx.Client or None; got {type(client).__name__}")
        if token_key is not None and not isinstance(token_key, TokenKey):
            raise ParameterError(f"token_key must be a TokenKey or None; got {type(token_key).__name__}")
        if min_q is not None and (isinstance(min_q, bool) or not isinstance(min_q, (int, float))
                                  or not (0.0 < min_q < 0.5)):
            raise ParameterError(f"min_q must be a number in (0, 0.5) or None; got {min_q!r:.80}")
        if max_reports_per_person is not None:
            check_int("max_reports_per_person", max_reports_per_person, minimum=1)
        if bits is not None:
            check_int("bits", bits, minimum=1)
        if max_weight is not None:
            check_int("max_weight", max_weight, minimum=1)
        if not isinstance(onehot, bool) or (onehot and max_weight is not None):
            raise ParameterError("onehot must be a bool, and exclusive with max_weight")
        if not isinstance(allow_unpinned_token_key, bool):
            raise ParameterError("allow_unpinned_token_key must be a bool; got "
                                 f"{type(allow_unpinned_token_key).__name__}")
        if ledger is not None and not isinstance(ledger, LedgerStore):
            raise ParameterError(f"ledger must be a LedgerStore or None; got {type(ledger).__name__}")
        self.ledger = ledger
        if memo is not None and not isinstance(memo, MemoStore):
            raise ParameterError(f"memo must be a MemoStore or None; got {type(memo).__name__}")
        self.memo = memo
        self.decision: Decision | None = None  # the ledger's last decision for this campaign (local only)
        self.min_q = None if min_q is None else float(min_q)
        self.max_reports_per_person = max_reports_per_person
        self.bits = bits
        self.max_weight = max_weight
        self.onehot = onehot
        self.allow_unpinned_token_key = allow_unpinned_token_key
        self._source: RandomSource = as_source(rng)
        self.max_retries = check_int("max_retries", max_retries, minimum=0, maximum=100)
        self.timeout = check_positive_finite("timeout", timeout)
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or not (0 <= backoff <= 60):
            raise ParameterError(f"backoff must be a number of seconds in [0, 60]; got {backoff!r}")
        self.backoff = float(backoff)
        self.base_url = str(url).rstrip("/")
        self.campaign_id = campaign_id
        self._credential = credential
        self._pinned_key = token_key
        self._own_client = client is None
        self._client = _default_client(self.timeout) if client is None else client
        self._sleep: Callable[[float], None] = time.sleep
        self._jitter = random.SystemRandom()
        self.campaign: CampaignInfo | None = None
        # (nonce, RSABSSA message prefix or None, signature), obtained once
        self._tokens: list[tuple[bytes, bytes | None, int]] | None = None
        # (nonces, prefixes, (blinded, unblinder) pairs, request body) of a token request not yet answered: reused
        # verbatim by every retry, dropped once the signatures are verified.
        self._token_request: tuple[list[bytes], list[bytes | None], list[tuple[int, int]],
                                   dict[str, Any]] | None = None
        self._pending: list[dict[str, Any]] | None = None  # request bodies of the randomized reports
        self._next = 0  # index of the next body to submit
        self._accepted = self._duplicates = self._requests = 0
        self._done = False

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP client if the Reporter created it; drop the tokens and pending reports from memory."""
        if self._own_client:
            self._client.close()
        self._tokens = None
        self._token_request = None
        if self._done:
            self._pending = None

    def __enter__(self) -> Reporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:  # never shows the credential, the tokens or the reports
        return f"Reporter({self.base_url!r}, {self.campaign_id!r}, submitted={self.submitted})"

    @property
    def submitted(self) -> int:
        """Reports submitted so far (accepted or answered as duplicates)."""
        return self._next

    # -- HTTP --------------------------------------------------------------------------------------------------

    def _url(self, suffix: str = "") -> str:
        return f"{self.base_url}/v1/campaigns/{self.campaign_id}{suffix}"

    def _build(self, method: str, url: str, body: Any, *, anonymous: bool) -> httpx.Request:
        content = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"accept": "application/json"}
        if content is not None:
            headers["content-type"] = "application/json"
        request = self._client.build_request(method, url, content=content, headers=headers)
        if anonymous:
            for name in list(request.headers.keys()):
                if name.lower() not in _ALLOWED_HEADERS:
                    del request.headers[name]
            request.headers["user-agent"] = _USER_AGENT
            request.headers["connection"] = "close"
        return request

    def _wait(self, attempt: int, response: httpx.Response | None) -> None:
        delay = self._jitter.uniform(0.0, min(_MAX_BACKOFF, self.backoff * 2.0**attempt))
        if response is not None:
            try:
                delay = max(delay, min(_MAX_BACKOFF, float(response.headers.get("retry-after", "0"))))
            except ValueError:
                pass
        if delay > 0:
            self._sleep(delay)

    def _send(self, method: str, url: str, body: Any = None, *, anonymous: bool = True) -> Any:
        """Send with retries (the same body every time); return the decoded JSON of a 2xx answer."""
        last = ""
        retry_response: httpx.Response | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._wait(attempt - 1, retry_response)
            request = self._build(method, url, body, anonymous=anonymous)
            if url.endswith("/reports"):
                self._requests += 1
            try:
                # auth=None: a caller's client auth is never applied to anonymous requests.
                auth = None if anonymous else httpx.USE_CLIENT_DEFAULT
                response = self._client.send(request, auth=auth, follow_redirects=False)
                try:
                    response.read()
                finally:
                    response.close()
            except httpx.TransportError as exc:
                last, retry_response = f"connection error ({type(exc).__name__})", None
                continue
            status = response.status_code
            if status == 429 or status >= 500:
                last, retry_response = f"HTTP {status}", response
                continue
            if 200 <= status < 300:
                try:
                    return response.json()
                except ValueError:
                    raise CollectorError(f"the collector answered {method} {url} with non-JSON content",
                                         status=status, code="bad_response") from None
            raise self._error(status, response)
        raise CollectorError(f"the collector could not be reached at {url} after {self.max_retries + 1} attempts; "
                             f"last failure: {last}", code="unreachable")

    @staticmethod
    def _error(status: int, response: httpx.Response) -> CollectorError:
        code, message, parameter = "", f"HTTP {status}", None
        try:
            err = response.json()["error"]
            code = str(err.get("code", ""))
            message = str(err.get("message", message))
            parameter = err.get("parameter")
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
        return CollectorError(f"the collector refused the request ({status} {code}): {message}",
                              status=status, code=code, parameter=parameter)

    # -- protocol steps ----------------------------------------------------------------------------------------

    def fetch_campaign(self) -> CampaignInfo:
        """``GET /v1/campaigns/{id}``: learn L, the dyadic q, k, the rate limit and the token key (cached).

        Raises:
            CollectorError: the collector refused, is unreachable, or served a malformed campaign (including a q
                outside (0, 0.5) or inconsistent with ``q_numerator / 2**precision``) or another campaign id
                (``campaign_mismatch``); a campaign still calibrating (``campaign_not_active``: wait with
                :func:`wait_for_campaign`) or failed (its error's code, e.g. ``target_not_met``); a campaign
                violating a pin (``pin_mismatch``: q below ``min_q``, k above ``max_reports_per_person``, another
                L, a token key other than the pinned one); or a token
                campaign while no ``token_key`` is pinned and ``allow_unpinned_token_key`` is False
                (``unpinned_token_key``). Nothing is cached then, and no token or report request is sent.
        """
        if self.campaign is not None:
            return self.campaign
        data = self._send("GET", self._url())
        _check_status(data, self.campaign_id)
        try:
            info = CampaignInfo.from_dict(data)
        except ParameterError as exc:
            raise CollectorError(f"the collector served a malformed campaign: {exc}",
                                 code="bad_response") from None
        if info.id.lower() != self.campaign_id.lower():
            raise CollectorError(f"the collector served campaign {info.id} for {self.campaign_id}",
                                 code="campaign_mismatch")
        self._check_pins(info)
        self.campaign = info
        return info

    def _check_pins(self, info: CampaignInfo) -> None:
        """Refuse a campaign that violates a pin (or a token campaign with an unpinned key, unless allowed)."""
        if self.min_q is not None and Fraction(info.flip.numerator, 1 << info.flip.precision) < Fraction(self.min_q):
            raise CollectorError(f"the campaign's q = {info.flip.numerator}/2**{info.flip.precision} "
                                 f"(~{info.q:.6g}) is below the pinned min_q {self.min_q!r}; refusing to report "
                                 "with less noise", code="pin_mismatch", parameter="q")
        if self.max_reports_per_person is not None and info.reports_per_person > self.max_reports_per_person:
            raise CollectorError(f"the campaign asks for reports_per_person = {info.reports_per_person}, above the "
                                 f"pinned max_reports_per_person {self.max_reports_per_person}",
                                 code="pin_mismatch", parameter="reports_per_person")
        if self.bits is not None and info.bits != self.bits:
            raise CollectorError(f"the campaign has bits = {info.bits}, not the pinned bits {self.bits}",
                                 code="pin_mismatch", parameter="bits")
        if self._pinned_key is not None and info.token_key != self._pinned_key:
            raise CollectorError("the campaign's token key differs from the pinned token_key",
                                 code="pin_mismatch", parameter="token_key")
        if info.memo_flip is not None and self.memo is None:
            raise CollectorError(f"campaign {info.id} belongs to the memoized family {info.family!r:.60}: pass a "
                                 "MemoStore (memo=) so that reports come from the value's permanent memo",
                                 code="memo_required", parameter="memo")
        if info.rate_limit == "tokens" and self._pinned_key is None and not self.allow_unpinned_token_key:
            raise CollectorError("the campaign uses tokens but no token_key is pinned: a fetched key cannot be "
                                 "trusted to keep tokens unlinkable; pass token_key= (shipped with the app), or "
                                 "allow_unpinned_token_key=True only for tests", code="unpinned_token_key",
                                 parameter="token_key")

    def obtain_tokens(self) -> int:
        """Obtain the k tokens (once): blind k nonces, ``POST .../tokens`` with the credential, unblind, verify.

        Calling it well before :meth:`report` decouples issuance from submission in time (see the limits in
        ``docs/rate_limiting.md``). A no-op returning 0 when the campaign is not rate-limited by tokens.

        Retries: the request is retried on connection errors, 5xx and 429 with the *same* body, and if it still
        fails the blinded nonces and their blinding factors are kept, so calling this again (or :meth:`report`)
        resends the identical blinded list. The collector answers an identical retry with the same signatures, so
        a lost answer does not spend the credential. Only this Reporter object holds the blinding factors: a new
        Reporter draws new ones and is refused (``token_already_issued``) once an issuance was committed.

        Returns:
            The number of tokens held (k), or 0.

        Raises:
            ParameterError: no credential was given.
            CollectorError: the collector refused (e.g. ``token_already_issued``) or returned invalid signatures.
        """
        info = self.fetch_campaign()
        if info.rate_limit != "tokens":
            return 0
        if self.ledger is not None and not self._admissible(info, record=False).allowed:
            return 0  # declined by the device's ledger: nothing is sent
        if self._tokens is not None:
            return len(self._tokens)
        if self._done or self._pending is not None:
            raise ReportLimitError("this Reporter already used its tokens")
        if self._credential is None:
            raise ParameterError("credential must be given for a campaign with rate_limit 'tokens'; got None")
        key = info.token_key
        assert key is not None  # guaranteed by CampaignInfo.from_dict
        k = info.reports_per_person
        if self._token_request is None:
            nonces = [new_nonce() for _ in range(k)]
            prefixes: list[bytes | None]
            if info.token_scheme == SCHEME_RSABSSA:  # RFC 9474: blind PSS-encoded prefix || nonce
                prefixes = [secrets.token_bytes(rsabssa.PREFIX_BYTES) for _ in range(k)]
                blinded = []
                for nonce, prefix in zip(nonces, prefixes, strict=True):
                    msg, inv = rsabssa.blind(key, rsabssa.prepare(nonce, prefix=prefix))
                    blinded.append((int.from_bytes(msg, "big"), inv))
            else:
                prefixes = [None] * k
                blinded = [blind(key, nonce) for nonce in nonces]
            body = {"credential": self._credential, "blinded": [format(b, "x") for b, _ in blinded]}
            self._token_request = (nonces, prefixes, blinded, body)
        nonces, prefixes, blinded, body = self._token_request
        data = self._send("POST", self._url("/tokens"), body, anonymous=False)
        try:
            sigs = [int(s, 16) for s in data["signatures"]]
        except (TypeError, KeyError, ValueError):
            raise CollectorError("the collector's token answer has no list of hex 'signatures'",
                                 code="bad_response") from None
        if len(sigs) != k:
            raise CollectorError(f"the collector returned {len(sigs)} signatures for {k} blinded nonces",
                                 code="bad_response")
        tokens: list[tuple[bytes, bytes | None, int]] = []
        bad = CollectorError("the collector returned a signature that does not verify under the campaign's token "
                             "key", code="invalid_signature")
        for nonce, prefix, (_, unblinder), sig in zip(nonces, prefixes, blinded, sigs, strict=True):
            if not 0 < sig < key.n:
                raise bad
            if prefix is None:
                if not verify(key, nonce, signature := unblind(key, sig, unblinder)):
                    raise bad
            else:
                try:  # finalize = unblind, then RSASSA-PSS verification of prefix || nonce
                    final = rsabssa.finalize(key, prefix + nonce, sig.to_bytes(key.byte_length, "big"), unblinder)
                except ParameterError:
                    raise bad from None
                signature = int.from_bytes(final, "big")
            tokens.append((nonce, prefix, signature))
        self._tokens = tokens
        self._token_request = None  # the blinding factors are no longer needed
        return k

    def report(self, value: ArrayLike) -> ReportReceipt:
        """Randomize ``value`` k times locally and submit each randomized report in its own request.

        Args:
            value: one person's value, a sequence of L entries 0/1 (for a category use
                ``sufficientdp.encode_one_hot([c], L)[0]``, for a set ``encode_set([s], L, w)[0]``).

        Returns:
            The receipt (accepted / duplicate counts).

        Raises:
            ParameterError: ``value`` does not have length L or holds something other than 0/1, or lies outside
                the declared domain (``max_weight`` / ``onehot``); or a credential is needed and missing.
            ReportLimitError: this Reporter already reported (or has a pending submission: call :meth:`resume`).
            CollectorError: the collector refused a request or stayed unreachable; the reports not yet
                submitted are kept, :meth:`resume` sends them (with the same nonces) later.
        """
        if self._done:
            raise ReportLimitError(f"this Reporter already submitted its {self._next} reports (its tokens are "
                                   "used); a person reports once per campaign")
        if self._pending is not None:
            raise ReportLimitError("a submission is pending; call resume() to finish it (never re-randomize)")
        info = self.fetch_campaign()
        arr = _check_value(value, info.bits)
        try:  # the app's declared domain (the guarantee it relies on covers only vectors in it)
            check_domain(np.asarray(arr).reshape(1, -1), max_weight=self.max_weight, onehot=self.onehot)
        except DataError as exc:
            raise ParameterError(f"value: {exc}".replace("row 0 has", "it has")) from None
        if self.ledger is not None:
            decision = self._admissible(info, record=True)
            if not decision.allowed:  # silence: no token request, no report
                return ReportReceipt(campaign_id=self.campaign_id, reports=0, accepted=0, duplicates=0,
                                     requests=0, tokens=False, decision=decision)
        if info.rate_limit == "tokens":
            self.obtain_tokens()
        params = RandomizationParams(bits=info.bits, q=info.flip.numerator / (1 << info.flip.precision),
                                     reports=info.reports_per_person, precision=info.flip.precision)
        if params.flip != info.flip:  # only for precision > 53 where the float cannot hold the dyadic value
            raise CollectorError(f"cannot run q_numerator={info.flip.numerator} at precision "
                                 f"{info.flip.precision} exactly", code="bad_response")
        if info.memo_flip is not None:  # RAPPOR-style: the instantaneous flip applies to the permanent memo
            assert self.memo is not None and info.family is not None  # checked when the campaign was fetched
            arr = np.asarray(self.memo.memo(info.family, arr.tolist(), info.memo_flip.numerator,
                                            info.memo_flip.precision), dtype=np.uint8)
        rows = Randomizer(params, rng=self._source).randomize(arr[np.newaxis, :])
        del arr
        bodies: list[dict[str, Any]] = []
        for i, row in enumerate(rows.tolist()):
            body: dict[str, Any] = {"reports": [row]}
            if self._tokens is not None:
                nonce, prefix, signature = self._tokens[i]
                token = {"nonce": nonce.hex(), "signature": format(signature, "x")}
                if prefix is not None:
                    token["prefix"] = prefix.hex()
                body["tokens"] = [token]
            else:
                body["nonces"] = [new_nonce().hex()]
            bodies.append(body)
        self._pending = bodies
        self._tokens = None  # each token now lives only in its report body
        return self.resume()

    def resume(self) -> ReportReceipt:
        """Submit the reports not yet submitted (after a :class:`CollectorError`), with their original nonces.

        Raises:
            ReportLimitError: nothing was prepared (call :meth:`report`) or everything is already submitted.
            CollectorError: as in :meth:`report`.
        """
        if self._pending is None:
            raise ReportLimitError("nothing to resume: call report(value) first")
        if self._done:
            raise ReportLimitError("all reports are already submitted")
        url = self._url("/reports")
        while self._next < len(self._pending):
            data = self._send("POST", url, self._pending[self._next])
            try:
                accepted, duplicates = int(data["accepted"]), int(data["duplicates"])
            except (TypeError, KeyError, ValueError):
                raise CollectorError("the collector's answer to a report has no integer 'accepted'/'duplicates'",
                                     code="bad_response") from None
            self._accepted += accepted
            self._duplicates += duplicates
            self._next += 1
        self._done = True
        assert self.campaign is not None
        return ReportReceipt(campaign_id=self.campaign_id, reports=len(self._pending), accepted=self._accepted,
                             duplicates=self._duplicates, requests=self._requests,
                             tokens=self.campaign.rate_limit == "tokens", decision=self.decision)

    def _admissible(self, info: CampaignInfo, *, record: bool) -> Decision:
        """Ask the ledger about this campaign's published guarantee; with ``record``, join (persisted) if allowed.

        A campaign publishing no guarantee (``epsilon`` or ``eta_at_q`` missing) is declined: it cannot be
        accounted. The decision is kept in :attr:`decision` (local only).
        """
        assert self.ledger is not None
        store = self.ledger
        if info.epsilon is None or info.eta_at_q is None:
            spent_eps, spent_eta = store.ledger.spent(store.now())
            decision = Decision(allowed=False, reason=f"declined: campaign {info.id} publishes no per-release "
                                "guarantee (epsilon, eta_at_q) to account", spent_epsilon=spent_eps,
                                spent_eta=spent_eta, after_epsilon=spent_eps, after_eta=spent_eta,
                                budget=store.budget)
        elif record:
            decision = store.join(campaign=info.id, family=info.family or info.id, epsilon=info.epsilon,
                                  eta=info.eta_at_q)
        else:
            decision = store.decide(campaign=info.id, epsilon=info.epsilon, eta=info.eta_at_q)
        self.decision = decision
        return decision


def _check_status(data: Any, campaign_id: str) -> None:
    """Raise :class:`CollectorError` unless the campaign object's status is active (absent: active)."""
    status = data.get("status", "active") if isinstance(data, dict) else "active"
    if status == "active":
        return
    if status == "calibrating":
        raise CollectorError(f"campaign {campaign_id} is still calibrating; it accepts reports once active "
                             "(sufficientdp.client.wait_for_campaign waits for it)", code="campaign_not_active")
    err = data.get("error") if isinstance(data.get("error"), dict) else {}
    if status == "failed":
        raise CollectorError(f"campaign {campaign_id} failed ({err.get('code', '')}): {err.get('message', '')}",
                             code=str(err.get("code") or "campaign_failed"), parameter=err.get("parameter"))
    raise CollectorError(f"the collector served campaign {campaign_id} with an unknown status {status!r:.40}",
                         code="bad_response")


def wait_for_campaign(base_url: str, campaign_id: str, *, client: httpx.Client | None = None,
                      timeout: float = 900.0, interval: float = 0.25, max_interval: float = 5.0) -> dict[str, Any]:
    """Wait until a new campaign leaves ``calibrating`` (``GET /v1/campaigns/{id}``, polled with backoff).

    ``POST /v1/campaigns`` answers 202: the collector calibrates q (or checks the given q) in a background job,
    which may take from about a second to its time limit (600 s by default). This polls the campaign until its
    status is ``active`` or ``failed``, waiting ``interval`` seconds at first and 1.5 times longer each time, at
    most ``max_interval``. Connection errors, 5xx and 429 answers are retried until ``timeout``.

    Args:
        base_url: the collector's root URL.
        campaign_id: the id from the 202 answer (32 hex characters).
        client: an ``httpx.Client`` (e.g. the one that created the campaign); by default a client like the
            Reporter's is created and closed.
        timeout: seconds to wait in all, in (0, 86400].
        interval, max_interval: first and largest pause between polls, in seconds, in (0, 60].

    Returns:
        The active campaign object (as served: ``q``, ``q_numerator``, ``eta_at_q``, ``guarantee``, ...).

    Raises:
        ParameterError: an argument out of range.
        CollectorError: the campaign failed (``code`` is its error's code: ``target_not_met``,
            ``calibration_timeout``, ``calibration_out_of_memory``, ``calibration_failed``,
            ``calibration_interrupted``, ``calibration_cancelled``, ``invalid_parameter``; ``parameter`` as the
            collector named it); it is still calibrating after ``timeout`` (``timeout``); or the collector refused
            the request (4xx, e.g. ``unknown_campaign``) or answered something that is not a campaign object
            (``bad_response``).
    """
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise ParameterError(f"base_url must be an http(s) URL; got {base_url!r:.80}")
    if not isinstance(campaign_id, str) or not _CAMPAIGN_ID.fullmatch(campaign_id):
        raise ParameterError(f"campaign_id must be 32 hex characters; got {campaign_id!r:.80}")
    for name, value, top in (("timeout", timeout, 86_400.0), ("interval", interval, 60.0),
                             ("max_interval", max_interval, 60.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value <= top):
            raise ParameterError(f"{name} must be a number of seconds in (0, {top:g}]; got {value!r:.80}")
    if client is not None and not isinstance(client, httpx.Client):
        raise ParameterError(f"client must be an httpx.Client or None; got {type(client).__name__}")
    url = f"{base_url.rstrip('/')}/v1/campaigns/{campaign_id}"
    own = client is None
    http = _default_client(min(30.0, float(timeout))) if client is None else client
    deadline = time.monotonic() + float(timeout)
    pause = float(interval)
    last = "no answer yet"
    try:
        while True:
            try:
                response = http.get(url, headers={"accept": "application/json"})
            except httpx.TransportError as exc:
                response, last = None, f"connection error ({type(exc).__name__})"
            if response is not None:
                status = response.status_code
                if 200 <= status < 300:
                    try:
                        data = response.json()
                    except ValueError:
                        raise CollectorError(f"the collector answered GET {url} with non-JSON content",
                                             status=status, code="bad_response") from None
                    if not isinstance(data, dict) or data.get("id") != campaign_id:
                        raise CollectorError(f"the collector did not answer GET {url} with campaign {campaign_id}",
                                             status=status, code="bad_response")
                    if data.get("status", "active") != "calibrating":
                        _check_status(data, campaign_id)
                        return data
                    last = "status calibrating"
                elif status == 429 or status >= 500:
                    last = f"HTTP {status}"
                else:
                    raise Reporter._error(status, response)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CollectorError(f"campaign {campaign_id} is still not active after {timeout:g} s (last: {last})",
                                     code="timeout")
            time.sleep(min(pause, remaining))
            pause = min(float(max_interval), pause * 1.5)
    finally:
        if own:
            http.close()
