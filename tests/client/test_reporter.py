"""Tests of the collector client (sufficientdp.client.Reporter) against fake collectors implementing the contract.

The fake collector (an ``httpx.MockTransport`` handler, plus one real stdlib HTTP server for connection-level
checks) follows docs/collector_api_contract.md: campaign object, one token issuance per credential (an identical
retry of the same blinded list is answered again), token-checked and nonce-idempotent report submission.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import warnings
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import numpy as np
import pytest

from sufficientdp import ParameterError, RandomizationParams, Randomizer
from sufficientdp.client import (
    CampaignInfo,
    CollectorError,
    Reporter,
    ReportLimitError,
    ReportReceipt,
    wait_for_campaign,
)
from sufficientdp.collection import TokenKey, TokenSigner, verify

CID = "0123456789abcdef0123456789abcdef"
#: The collector's admin token in the tests against the real service (creating campaigns and releases need it).
ADMIN = "admin-" + "1" * 20
ADMIN_AUTH = {"authorization": f"Bearer {ADMIN}"}
BASE = "https://collector.test"
CREDENTIAL = "credential-Zq81-very-secret"
ALLOWED = {"host", "accept", "accept-encoding", "connection", "content-length", "content-type", "user-agent"}


@pytest.fixture(scope="module")
def signer() -> TokenSigner:
    return TokenSigner.generate(2048)


class FakeCollector:
    """A collector following the contract, recording every request it sees."""

    def __init__(self, signer: TokenSigner | None, *, bits: int = 8, k: int = 3, q: float = 0.25,
                 rate_limit: str = "tokens") -> None:
        self.signer = signer
        self.bits, self.k, self.rate_limit = bits, k, rate_limit
        self.q_numerator = round(q * 2**32)
        self.requests: list[httpx.Request] = []
        self.stored: dict[str, list[int]] = {}
        self.issued: dict[bytes, list[int]] = {}  # credential HMAC -> the blinded list signed for it
        self.token_answers: list[list[str]] = []  # every signature list computed by /tokens
        # Failures injected *after* /tokens recorded the issuance, one per request: "read_timeout" and
        # "disconnect" raise in the transport (the answer is lost), "bad_gateway" answers 502.
        self.lose_tokens: list[str] = []
        self.secret = b"server-hmac-key"
        self.fail: Callable[[httpx.Request, int], httpx.Response | None] = lambda request, i: None
        self.lose_answer_once: set[str] = set()  # nonces whose first successful answer is "lost"

    def campaign(self) -> dict[str, Any]:
        key = self.signer.public.to_dict() if (self.signer and self.rate_limit == "tokens") else None
        return {"id": CID, "name": "t", "bits": self.bits, "epsilon": 1.0, "eta": 0.001, "crowd_size": 10,
                "reports_per_person": self.k, "q": self.q_numerator / 2**32, "q_numerator": self.q_numerator,
                "precision": 32, "eta_at_q": 0.0005, "guarantee": "...", "rate_limit": self.rate_limit,
                "token_key": key, "pending_reports": len(self.stored), "released_reports": 0, "releases": 0}

    @staticmethod
    def error(status: int, code: str, parameter: str | None = None) -> httpx.Response:
        return httpx.Response(status, json={"error": {"code": code, "message": f"{code} happened",
                                                      "parameter": parameter}})

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        injected = self.fail(request, len(self.requests))
        if injected is not None:
            return injected
        path = request.url.path
        if request.method == "GET" and path == f"/v1/campaigns/{CID}":
            return httpx.Response(200, json=self.campaign(), headers={"set-cookie": "track=me; Path=/"})
        if request.method == "POST" and path == f"/v1/campaigns/{CID}/tokens":
            body = json.loads(request.content)
            tag = hmac.new(self.secret, body["credential"].encode(), hashlib.sha256).digest()
            blinded = [int(b, 16) for b in body["blinded"]]
            if tag in self.issued and self.issued[tag] != blinded:
                return self.error(409, "token_already_issued", "credential")
            if len(body["blinded"]) > self.k:
                return self.error(422, "invalid_parameter", "blinded")
            self.issued[tag] = blinded
            assert self.signer is not None
            sigs = [format(self.signer.sign_blinded(b), "x") for b in blinded]
            self.token_answers.append(sigs)
            if self.lose_tokens:
                loss = self.lose_tokens.pop(0)
                if loss == "read_timeout":
                    raise httpx.ReadTimeout("answer lost", request=request)
                if loss == "disconnect":
                    raise httpx.RemoteProtocolError("server disconnected", request=request)
                return self.error(502, "bad_gateway")
            return httpx.Response(200, json={"signatures": sigs}, headers={"set-cookie": "issued=1; Path=/"})
        if request.method == "POST" and path == f"/v1/campaigns/{CID}/reports":
            body = json.loads(request.content)
            reports = body["reports"]
            if self.rate_limit == "tokens":
                assert self.signer is not None
                nonces = [t["nonce"] for t in body["tokens"]]
                for t in body["tokens"]:
                    if not verify(self.signer.public, bytes.fromhex(t["nonce"]), int(t["signature"], 16)):
                        return self.error(403, "invalid_token", "tokens")
            else:
                nonces = body["nonces"]
            accepted = duplicates = 0
            for nonce, report in zip(nonces, reports, strict=True):
                if len(report) != self.bits or set(report) - {0, 1}:
                    return self.error(400, "invalid_report", "reports")
                if nonce in self.stored:
                    duplicates += 1
                else:
                    self.stored[nonce] = report
                    accepted += 1
            for nonce in nonces:
                if nonce in self.lose_answer_once:
                    self.lose_answer_once.discard(nonce)
                    raise httpx.ReadTimeout("answer lost", request=request)
            return httpx.Response(200, json={"accepted": accepted, "duplicates": duplicates})
        return self.error(404, "unknown_campaign", "campaign_id")

    def report_requests(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path.endswith("/reports")]


def make(collector: FakeCollector, **kwargs: Any) -> tuple[Reporter, list[float]]:
    client = kwargs.pop("client", None) or httpx.Client(transport=httpx.MockTransport(collector))
    kwargs.setdefault("credential", CREDENTIAL)
    kwargs.setdefault("backoff", 0.0)
    if collector.signer is not None and collector.rate_limit == "tokens":
        kwargs.setdefault("token_key", collector.signer.public)  # the deployment ships the key in the app
    reporter = Reporter(BASE, CID, client=client, **kwargs)
    sleeps: list[float] = []
    reporter._sleep = sleeps.append
    return reporter, sleeps


# --- the token flow -------------------------------------------------------------------------------------------


def test_token_flow_one_request_per_report(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, bits=8, k=3)
    reporter, sleeps = make(collector)
    receipt = reporter.report([1, 0, 1, 1, 0, 0, 1, 0])
    assert isinstance(receipt, ReportReceipt)
    assert receipt.to_dict() == {"campaign_id": CID, "reports": 3, "accepted": 3, "duplicates": 0,
                                 "requests": 3, "tokens": True}
    assert [r.url.path.rsplit("/", 1)[-1] for r in collector.requests] == [CID, "tokens", "reports", "reports",
                                                                              "reports"]
    assert len(collector.stored) == 3 and sleeps == []
    for request in collector.report_requests():
        body = json.loads(request.content)
        assert set(body) == {"reports", "tokens"} and len(body["reports"]) == 1 and len(body["tokens"]) == 1
        assert len(body["tokens"][0]["nonce"]) == 64
    token_body = json.loads(collector.requests[1].content)
    assert set(token_body) == {"credential", "blinded"} and len(token_body["blinded"]) == 3
    assert token_body["credential"] == CREDENTIAL
    # the signer saw blinded values only: none equals the hash of a spent nonce, none reveals a nonce
    spent = set(collector.stored)
    assert not any(nonce in json.dumps(token_body) for nonce in spent)


def test_second_report_is_refused(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=2)
    reporter, _ = make(collector)
    reporter.report([0] * 8)
    n_requests = len(collector.requests)
    with pytest.raises(ReportLimitError, match="already submitted"):
        reporter.report([0] * 8)
    with pytest.raises(ReportLimitError, match="already used its tokens"):
        reporter.obtain_tokens()
    with pytest.raises(ReportLimitError, match="already submitted"):
        reporter.resume()
    assert len(collector.requests) == n_requests  # refused locally, nothing sent
    # a second Reporter with the same credential is refused by the collector: one issuance per credential
    again, _ = make(collector)
    with pytest.raises(CollectorError, match="token_already_issued") as info:
        again.report([0] * 8)
    assert info.value.status == 409 and info.value.code == "token_already_issued"
    assert info.value.parameter == "credential"


def test_obtain_tokens_early_then_report(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=2)
    reporter, _ = make(collector)
    assert reporter.obtain_tokens() == 2 and reporter.obtain_tokens() == 2  # issued once
    assert sum(r.url.path.endswith("/tokens") for r in collector.requests) == 1
    assert reporter.report([1] * 8).accepted == 2


def test_no_raw_value_or_identifier_leaves_the_device(signer: TokenSigner) -> None:
    bits = 64
    value = [int(c) for c in format(0x9E3779B97F4A7C15, "064b")]
    collector = FakeCollector(signer, bits=bits, k=4, q=0.25)
    client = httpx.Client(transport=httpx.MockTransport(collector), headers={"x-device-id": "dev-42"},
                          cookies={"session": "sess-42"}, auth=("user-42", "pw-42"))
    reporter, _ = make(collector, client=client)
    reporter.report(value)
    assert len(collector.requests) == 6
    encodings = [json.dumps(value), json.dumps(value, separators=(",", ":")), "".join(map(str, value)),
                 format(0x9E3779B97F4A7C15, "x"), str(0x9E3779B97F4A7C15)]
    secrets_ = ["dev-42", "sess-42", "user-42", "pw-42", "track=me", "issued=1"]
    for request in collector.requests:
        text = request.content.decode() + json.dumps(dict(request.headers))
        assert not any(e in text for e in encodings)
        is_tokens = request.url.path.endswith("/tokens")
        assert (CREDENTIAL in text) == is_tokens
        if is_tokens:  # the credential only in the body's credential field
            assert json.loads(request.content)["credential"] == CREDENTIAL
            assert CREDENTIAL not in json.dumps(dict(request.headers))
        else:
            assert set(request.headers.keys()) <= ALLOWED
            assert not any(s in text for s in secrets_)
            assert request.headers["connection"] == "close" and request.headers["user-agent"] == "sufficientdp"
    # each randomized report differs from the value (P[equal] = 0.75**64 < 1e-7 per report)
    assert all(report != value for report in collector.stored.values())


# --- retries and idempotency ----------------------------------------------------------------------------------


def test_retries_reuse_the_same_nonce_and_token(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=2)
    failures: dict[bytes, int] = {}

    def fail(request: httpx.Request, i: int) -> httpx.Response | None:
        if request.url.path.endswith("/reports"):
            failures[request.content] = failures.get(request.content, 0) + 1
            attempt = failures[request.content]
            if attempt == 1:
                raise httpx.ConnectError("refused", request=request)
            if attempt == 2:
                return httpx.Response(503, json={"error": {"code": "unavailable", "message": "x",
                                                           "parameter": None}})
            if attempt == 3:
                return httpx.Response(429, headers={"retry-after": "7"})
        return None

    collector.fail = fail
    reporter, sleeps = make(collector)
    receipt = reporter.report([1, 1, 0, 0, 1, 1, 0, 0])
    assert receipt.accepted == 2 and receipt.duplicates == 0 and receipt.requests == 8
    bodies = [r.content for r in collector.report_requests()]
    assert len(bodies) == 8 and len(set(bodies)) == 2  # 4 identical attempts per report: same nonce, same token
    assert sorted(failures.values()) == [4, 4]
    assert sleeps.count(7.0) == 2  # Retry-After honoured (backoff=0 otherwise)


def test_lost_answer_is_answered_as_duplicate(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=3, rate_limit="none")

    original = collector.__call__

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/reports") and not collector.lose_answer_once and not collector.stored:
            collector.lose_answer_once.add(json.loads(request.content)["nonces"][0])
        return original(request)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    reporter, _ = make(collector, client=client, credential=None)
    receipt = reporter.report([0, 1] * 4)
    assert (receipt.accepted, receipt.duplicates, receipt.requests) == (2, 1, 4)
    assert len(collector.stored) == 3


def token_requests(collector: FakeCollector) -> list[httpx.Request]:
    return [r for r in collector.requests if r.url.path.endswith("/tokens")]


@pytest.mark.parametrize("loss", ["read_timeout", "disconnect", "bad_gateway", "rate_limited"])
def test_lost_token_answer_is_retried_with_the_same_blinded_list(signer: TokenSigner, loss: str) -> None:
    collector = FakeCollector(signer, k=3)
    if loss == "rate_limited":  # 429 from in front of the collector: nothing recorded yet
        refused = iter([True, True])

        def fail(request: httpx.Request, i: int) -> httpx.Response | None:
            if request.url.path.endswith("/tokens") and next(refused, False):
                return httpx.Response(429, headers={"retry-after": "2"})
            return None

        collector.fail = fail
    else:  # the issuance is recorded, then its answer is lost (twice)
        collector.lose_tokens = [loss, loss]
    reporter, sleeps = make(collector)
    receipt = reporter.report([1, 0, 0, 1, 1, 0, 0, 1])
    assert (receipt.accepted, receipt.duplicates, receipt.reports) == (3, 0, 3)
    sent = token_requests(collector)
    assert len(sent) == 3 and len({r.content for r in sent}) == 1  # byte-identical retries: same blinded list
    assert len(collector.issued) == 1  # one issuance for the credential
    # Re-signing the identical list gave identical signatures (RSA is deterministic), and they verified: the
    # fake accepts a report only with a valid token, and every token's signature is unblinded from them.
    assert len(collector.token_answers) == (1 if loss == "rate_limited" else 3)
    assert all(a == collector.token_answers[0] for a in collector.token_answers)
    for request in collector.report_requests():
        token = json.loads(request.content)["tokens"][0]
        assert verify(signer.public, bytes.fromhex(token["nonce"]), int(token["signature"], 16))
    assert reporter._token_request is None  # blinding factors dropped once the tokens verified
    if loss == "rate_limited":
        assert sleeps.count(2.0) == 2


def test_token_request_is_kept_when_retries_run_out(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=2)
    collector.lose_tokens = ["read_timeout", "read_timeout"]
    reporter, _ = make(collector, max_retries=1)
    with pytest.raises(CollectorError, match="after 2 attempts") as info:
        reporter.obtain_tokens()
    assert info.value.code == "unreachable" and len(collector.issued) == 1  # the collector did issue
    # Another Reporter (new blinding factors, another list) with the same credential is refused ...
    other, _ = make(collector)
    with pytest.raises(CollectorError, match="token_already_issued"):
        other.obtain_tokens()
    # ... but this one resends its identical list, gets the same signatures and reports.
    receipt = reporter.report([0, 1] * 4)
    assert (receipt.accepted, receipt.duplicates) == (2, 0)
    sent = [r.content for r in token_requests(collector)]  # mine, mine, the other Reporter's, mine
    assert len(sent) == 4 and sent[0] == sent[1] == sent[3] != sent[2]
    assert collector.token_answers[0] == collector.token_answers[1] == collector.token_answers[-1]


def test_backoff_is_exponential_and_bounded(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=1, rate_limit="none")
    collector.fail = lambda request, i: (httpx.Response(500) if request.url.path.endswith("/reports") else None)
    reporter, sleeps = make(collector, backoff=1.0, max_retries=4, credential=None)
    with pytest.raises(CollectorError, match="after 5 attempts") as info:
        reporter.report([0] * 8)
    assert info.value.code == "unreachable" and info.value.status is None
    assert len(sleeps) == 4 and all(0 <= s <= 2.0**i for i, s in enumerate(sleeps))


def test_4xx_is_not_retried_and_resume_keeps_nonces(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=3)
    state = {"broken": True, "reports": 0}

    def fail(request: httpx.Request, i: int) -> httpx.Response | None:
        if request.url.path.endswith("/reports"):
            state["reports"] += 1
            if state["reports"] == 2 and state["broken"]:
                return FakeCollector.error(403, "invalid_token", "tokens")
        return None

    collector.fail = fail
    reporter, sleeps = make(collector)
    with pytest.raises(CollectorError, match="invalid_token") as info:
        reporter.report([1] * 8)
    assert info.value.status == 403 and info.value.parameter == "tokens" and sleeps == []
    assert reporter.submitted == 1 and len(collector.stored) == 1
    failed_body = collector.report_requests()[-1].content
    with pytest.raises(ReportLimitError, match="resume"):
        reporter.report([1] * 8)  # never re-randomize
    state["broken"] = False
    receipt = reporter.resume()
    assert receipt.accepted == 3 and receipt.requests == 4 and len(collector.stored) == 3
    assert collector.report_requests()[2].content == failed_body  # the same token after resume


@pytest.mark.parametrize("forge", ["echo", "flip", "count"])
def test_wrong_signatures_are_caught(signer: TokenSigner, forge: str) -> None:
    collector = FakeCollector(signer, k=2)

    def fail(request: httpx.Request, i: int) -> httpx.Response | None:
        if not request.url.path.endswith("/tokens"):
            return None
        blinded = json.loads(request.content)["blinded"]
        real = [signer.sign_blinded(int(b, 16)) for b in blinded]
        sigs = {"echo": [int(b, 16) for b in blinded], "flip": [real[0], real[1] ^ 2], "count": real[:1]}[forge]
        return httpx.Response(200, json={"signatures": [format(s, "x") for s in sigs]})

    collector.fail = fail
    reporter, _ = make(collector)
    with pytest.raises(CollectorError) as info:
        reporter.report([0] * 8)
    assert info.value.code == ("bad_response" if forge == "count" else "invalid_signature")
    assert collector.report_requests() == []


def test_pinned_token_key(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=1)
    reporter, _ = make(collector, token_key=TokenKey(n=3233, e=17))
    with pytest.raises(CollectorError, match="pinned") as info:
        reporter.report([0] * 8)
    assert info.value.code == "pin_mismatch"
    assert not any(r.url.path.endswith(("/tokens", "/reports")) for r in collector.requests)
    ok, _ = make(FakeCollector(signer, k=1), token_key=signer.public)
    assert ok.report([0] * 8).accepted == 1


def test_unpinned_token_key_is_refused_by_default(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, k=1)
    reporter, _ = make(collector, token_key=None)
    with pytest.raises(CollectorError, match="no token_key is pinned") as info:
        reporter.report([0] * 8)
    assert info.value.code == "unpinned_token_key" and info.value.parameter == "token_key"
    assert [r.url.path for r in collector.requests] == [f"/v1/campaigns/{CID}"]  # no /tokens, no /reports
    allowed, _ = make(FakeCollector(signer, k=1), token_key=None, allow_unpinned_token_key=True)
    assert allowed.report([0] * 8).accepted == 1
    # a campaign without tokens needs no key pin
    assert make(FakeCollector(None, k=1, rate_limit="none"), credential=None)[0].report([0] * 8).accepted == 1


@pytest.mark.parametrize("rate_limit", ["tokens", "none"])
@pytest.mark.parametrize(
    ("served", "pins", "parameter"),
    [
        ({"q": 0.01}, {"min_q": 0.2}, "q"),  # almost no noise
        ({"q": 0.25 - 2**-32}, {"min_q": 0.25}, "q"),  # the dyadic q is compared exactly
        ({"k": 50}, {"max_reports_per_person": 3}, "reports_per_person"),  # many noisings of one value
        ({"bits": 16}, {"bits": 8}, "bits"),
    ],
)
def test_campaign_violating_a_pin_is_refused_and_nothing_is_sent(
    signer: TokenSigner, rate_limit: str, served: dict, pins: dict, parameter: str
) -> None:
    collector = FakeCollector(signer if rate_limit == "tokens" else None, rate_limit=rate_limit, **served)
    reporter, _ = make(collector, credential=CREDENTIAL if rate_limit == "tokens" else None, **pins)
    with pytest.raises(CollectorError, match="pinned") as info:
        reporter.report([0] * collector.bits)
    assert info.value.code == "pin_mismatch" and info.value.parameter == parameter
    assert reporter.campaign is None and reporter.submitted == 0
    assert all(r.method == "GET" for r in collector.requests)  # nothing POSTed to /tokens or /reports
    with pytest.raises(CollectorError, match="pinned"):  # still refused later: the campaign was not cached
        reporter.obtain_tokens()
    assert all(r.method == "GET" for r in collector.requests)


def test_campaign_within_the_pins_is_accepted(signer: TokenSigner) -> None:
    collector = FakeCollector(signer, bits=8, k=3, q=0.25)
    reporter, _ = make(collector, min_q=0.25, max_reports_per_person=3, bits=8)
    assert reporter.report([1] * 8).accepted == 3
    more, _ = make(FakeCollector(signer, bits=8, k=2, q=0.4), min_q=0.25, max_reports_per_person=3, bits=8)
    assert more.report([1] * 8).accepted == 2  # more noise and fewer reports than the pins allow: fine


# --- randomization --------------------------------------------------------------------------------------------


def test_randomization_uses_the_campaign_q_and_k() -> None:
    collector = FakeCollector(None, bits=8, k=5, q=0.3, rate_limit="none")
    reporter, _ = make(collector, credential=None, rng=np.random.default_rng(11))
    value = [1, 0, 0, 1, 1, 0, 1, 0]
    reporter.report(value)
    sent = [json.loads(r.content)["reports"][0] for r in collector.report_requests()]
    params = RandomizationParams(bits=8, q=collector.q_numerator / 2**32, reports=5, precision=32)
    expected = Randomizer(params, rng=np.random.default_rng(11)).randomize([value]).tolist()
    assert sent == expected
    assert reporter.campaign is not None and reporter.campaign.flip.numerator == collector.q_numerator


def test_flip_rate_matches_q() -> None:
    # 4 reports x 512 bits = 2048 Bernoulli(1/8) flips: mean 256, sd 15; |dev| > 6 sd has probability < 1e-8.
    collector = FakeCollector(None, bits=512, k=4, q=0.125, rate_limit="none")
    reporter, _ = make(collector, credential=None)  # CSPRNG
    value = np.arange(512) % 3 == 0
    reporter.report(value)
    flips = sum(int(np.sum(np.array(r) != value)) for r in collector.stored.values())
    assert abs(flips - 256) < 6 * 15


# --- the default client: fresh connection per request, no cookies ------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, int, str | None, str | None]] = []

    def _answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("set-cookie", "track=me; Path=/")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self.seen.append(("GET", self.client_address[1], self.headers.get("cookie"),
                          self.headers.get("connection")))
        self._answer(200, FakeCollector(None, bits=4, k=3, rate_limit="none").campaign())

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["content-length"]))
        self.seen.append(("POST", self.client_address[1], self.headers.get("cookie"),
                          self.headers.get("connection")))
        self._answer(200, {"accepted": 1, "duplicates": 0})

    def log_message(self, *args: Any) -> None:
        pass


def test_default_client_uses_a_fresh_connection_per_request_and_no_cookies() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with Reporter(f"http://127.0.0.1:{server.server_address[1]}", CID, timeout=5.0) as reporter:
            receipt = reporter.report([1, 0, 1, 0])
    finally:
        server.shutdown()
        server.server_close()
    assert receipt.accepted == 3
    seen = _Handler.seen
    assert [s[0] for s in seen] == ["GET", "POST", "POST", "POST"]
    assert len({s[1] for s in seen}) == 4  # four distinct client ports: four connections
    assert all(s[2] is None for s in seen)  # the cookie set by the server is never sent back
    assert all(s[3] == "close" for s in seen)


# --- invalid inputs -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([0, 1, 1], "value must be a sequence of length 8"),
        ([[0, 1, 0, 1, 0, 1, 0, 1]], "value must be a sequence of length 8"),
        ([0, 1, 2, 0, 0, 0, 0, 0], "value entries must be 0 or 1; entry 2"),
        ([0, 1, 0.5, 0, 0, 0, 0, 0], "value entries must be 0 or 1"),
        (["a"] * 8, "value must hold only 0 and 1"),
        (5, "value must be a sequence"),
    ],
)
def test_report_rejects_invalid_values(signer: TokenSigner, value: Any, match: str) -> None:
    collector = FakeCollector(signer, bits=8)
    reporter, _ = make(collector)
    with pytest.raises(ParameterError, match=match):
        reporter.report(value)
    assert not any(r.url.path.endswith(("/tokens", "/reports")) for r in collector.requests)
    assert reporter.report([True] * 8).accepted == 3  # still usable after a rejected value


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((5, CID), {}, "base_url must be a string"),
        (("ftp://x", CID), {}, "base_url must be an http"),
        (("https://u:p@x", CID), {}, "credentials"),
        (("https://x", "abc"), {}, "campaign_id must be 32 hex"),
        (("https://x", "../" + CID[3:]), {}, "campaign_id must be 32 hex"),
        (("https://x", CID), {"credential": ""}, "credential must be"),
        (("https://x", CID), {"client": object()}, "client must be an httpx.Client"),
        (("https://x", CID), {"max_retries": -1}, "max_retries"),
        (("https://x", CID), {"timeout": 0}, "timeout"),
        (("https://x", CID), {"backoff": -1}, "backoff"),
        (("https://x", CID), {"rng": 5}, "rng must be"),
        (("https://x", CID), {"token_key": {"n": "ca1", "e": 17}}, "token_key must be a TokenKey"),
        (("https://x", CID), {"min_q": 0.5}, "min_q must be a number in"),
        (("https://x", CID), {"min_q": 0}, "min_q must be a number in"),
        (("https://x", CID), {"min_q": True}, "min_q must be a number in"),
        (("https://x", CID), {"max_reports_per_person": 0}, "max_reports_per_person"),
        (("https://x", CID), {"bits": 0}, "bits"),
        (("https://x", CID), {"allow_unpinned_token_key": 1}, "allow_unpinned_token_key must be a bool"),
    ],
)
def test_reporter_rejects_invalid_arguments(args: tuple, kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        Reporter(*args, **kwargs)


def test_tokens_need_a_credential(signer: TokenSigner) -> None:
    collector = FakeCollector(signer)
    reporter, _ = make(collector, credential=None)
    with pytest.raises(ParameterError, match="credential must be given"):
        reporter.report([0] * 8)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"bits": 0}, "campaign.bits"),
        ({"q_numerator": 2**31}, "numerator must be in"),  # q = 0.5
        ({"q_numerator": 0, "q": 0.0}, "numerator must be in"),  # q = 0
        ({"q_numerator": -5}, "numerator must be in"),
        ({"precision": 65}, "campaign.precision"),
        ({"precision": 8}, "campaign.q_numerator"),  # 2**30 is not below 2**7: q >= 0.5 at precision 8
        ({"q": 0.3}, "campaign.q must equal q_numerator / 2..precision"),  # float q inconsistent with numerator
        ({"q": "0.25"}, "campaign.q must equal"),
        ({"rate_limit": "maybe"}, "campaign.rate_limit"),
        ({"token_key": None}, "campaign.token_key"),
        ({"id": "f" * 32}, "served campaign"),
    ],
)
def test_malformed_campaign_is_refused(signer: TokenSigner, change: dict, match: str) -> None:
    collector = FakeCollector(signer)
    good = collector.campaign()
    collector.campaign = lambda: {**good, **change}  # type: ignore[method-assign]
    reporter, _ = make(collector)
    with pytest.raises(CollectorError, match=match):
        reporter.report([0] * 8)


def test_campaign_info_from_dict(signer: TokenSigner) -> None:
    info = CampaignInfo.from_dict(FakeCollector(signer, q=0.25).campaign())
    assert info.q == 0.25 and info.token_key == signer.public and info.reports_per_person == 3
    with pytest.raises(ParameterError, match="campaign must be a JSON object"):
        CampaignInfo.from_dict([])
    with pytest.raises(ParameterError, match="campaign.q_numerator is missing"):
        CampaignInfo.from_dict({"id": CID, "bits": 1, "precision": 32, "reports_per_person": 1,
                                "rate_limit": "none"})


def test_resume_without_report() -> None:
    reporter = Reporter(BASE, CID)
    with pytest.raises(ReportLimitError, match="nothing to resume"):
        reporter.resume()
    assert CREDENTIAL not in repr(Reporter(BASE, CID, credential=CREDENTIAL))
    reporter.close()


# --- against the real collector app, in process (skipped without the service extra) ---------------------------


def test_against_the_collector_service(tmp_path: Any) -> None:
    pytest.importorskip("fastapi")
    app_module = pytest.importorskip("sufficientdp.service.app")
    with warnings.catch_warnings():  # starlette's TestClient warns about httpx at import
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    app = app_module.create_app(f"sqlite:///{tmp_path / 'c.db'}", admin_token=ADMIN)
    with TestClient(app, base_url="http://testserver") as tc:
        created = tc.post("/v1/campaigns", headers=ADMIN_AUTH,
                          json={"name": "t", "bits": 8, "epsilon": 1.0, "eta": 0.5, "crowd_size": 3,
                                "reports_per_person": 2, "q": 0.48})
        assert created.status_code == 202, created.text  # q is checked by a background job
        cid = created.json()["id"]
        key = TokenKey.from_dict(created.json()["token_key"])  # the creator (the deployment) pins its key
        assert wait_for_campaign("http://testserver", cid, client=tc, interval=0.05)["status"] == "active"
        receipts = []
        for i in range(3):
            reporter = Reporter("http://testserver", cid, credential=f"user-{i}", client=tc, backoff=0.0,
                                token_key=key, bits=8, max_reports_per_person=2, min_q=0.48)
            receipts.append(reporter.report([1, 0, 1, 0, 1, 1, 0, 0]))
        assert [(r.accepted, r.duplicates, r.tokens) for r in receipts] == [(2, 0, True)] * 3
        with pytest.raises(CollectorError) as info:
            Reporter("http://testserver", cid, credential="user-0", client=tc, token_key=key).report([0] * 8)
        assert info.value.code == "token_already_issued"
        assert tc.get(f"/v1/campaigns/{cid}").json()["pending_reports"] == 6
        release = tc.post(f"/v1/campaigns/{cid}/releases", headers=ADMIN_AUTH)
        assert release.status_code == 201 and release.json()["reports"] == 6
    app.state.storage.close()


def test_lost_token_answer_against_the_collector_service(tmp_path: Any) -> None:
    """The real collector commits the issuance, the answer is lost in transport; the retry gets it again."""
    pytest.importorskip("fastapi")
    app_module = pytest.importorskip("sufficientdp.service.app")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    app = app_module.create_app(f"sqlite:///{tmp_path / 'c.db'}", admin_token=ADMIN)
    with TestClient(app, base_url="http://testserver") as tc:
        created = tc.post("/v1/campaigns", headers=ADMIN_AUTH,
                          json={"name": "t", "bits": 8, "epsilon": 1.0, "eta": 0.5, "crowd_size": 3,
                                "reports_per_person": 2, "q": 0.48})
        assert created.status_code == 202, created.text  # q is checked by a background job
        cid = created.json()["id"]
        key = TokenKey.from_dict(created.json()["token_key"])
        assert wait_for_campaign("http://testserver", cid, client=tc, interval=0.05)["status"] == "active"
        answers: list[bytes] = []

        def handler(request: httpx.Request) -> httpx.Response:
            headers = {"content-type": "application/json"} if request.content else None
            r = tc.request(request.method, request.url.path, content=request.content, headers=headers)
            if request.url.path.endswith("/tokens"):
                answers.append(r.content)
                if len(answers) == 1:  # the server committed; the answer never reaches the client
                    assert r.status_code == 200
                    raise httpx.ReadError("connection reset", request=request)
            return httpx.Response(r.status_code, headers={"content-type": "application/json"}, content=r.content)

        client = httpx.Client(transport=httpx.MockTransport(handler))
        reporter = Reporter("http://testserver", cid, credential="user-lost", client=client, backoff=0.0,
                            token_key=key)
        receipt = reporter.report([1, 0, 1, 0, 1, 1, 0, 0])
        assert (receipt.accepted, receipt.duplicates) == (2, 0)  # the server verified both tokens
        assert len(answers) == 2 and answers[0] == answers[1]  # byte-identical signatures on the retry
        assert tc.get(f"/v1/campaigns/{cid}").json()["pending_reports"] == 2
        with pytest.raises(CollectorError, match="token_already_issued"):  # a new list is still refused
            Reporter("http://testserver", cid, credential="user-lost", client=tc, token_key=key).obtain_tokens()
    app.state.storage.close()


# --- waiting for a campaign to leave "calibrating" -------------------------------------------------------------


def _campaign_sequence(*bodies: tuple[int, dict[str, Any]]) -> tuple[httpx.Client, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    answers = list(bodies)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status, body = answers.pop(0) if len(answers) > 1 else answers[0]
        return httpx.Response(status, json=body)

    return httpx.Client(transport=httpx.MockTransport(handler)), seen


def test_wait_for_campaign_polls_until_active_and_retries_5xx() -> None:
    active = {**FakeCollector(None, rate_limit="none").campaign(), "status": "active", "error": None}
    calibrating = {**active, "status": "calibrating", "q": None, "q_numerator": None}
    client, seen = _campaign_sequence((200, calibrating), (503, {"error": {}}), (200, calibrating), (200, active))
    assert wait_for_campaign(BASE, CID, client=client, interval=0.01, max_interval=0.02) == active
    assert len(seen) == 4 and all(r.method == "GET" and r.url.path == f"/v1/campaigns/{CID}" for r in seen)
    # A Reporter refuses a calibrating campaign (nothing is cached, no token or report request is sent).
    client, seen = _campaign_sequence((200, calibrating))
    with pytest.raises(CollectorError) as info:
        Reporter(BASE, CID, client=client).report([0] * 8)
    assert info.value.code == "campaign_not_active" and len(seen) == 1


@pytest.mark.parametrize(
    ("answer", "code"),
    [((200, {"id": CID, "status": "failed", "error": {"code": "target_not_met", "message": "q: too small",
                                                       "parameter": "q"}}), "target_not_met"),
     ((200, {"id": CID, "status": "calibrating"}), "timeout"),
     ((404, {"error": {"code": "unknown_campaign", "message": "no campaign", "parameter": "id"}}),
      "unknown_campaign"),
     ((200, {"id": "f" * 32, "status": "active"}), "bad_response"),
     ((200, {"id": CID, "status": "paused"}), "bad_response")],
)
def test_wait_for_campaign_failures(answer: tuple[int, dict[str, Any]], code: str) -> None:
    client, _ = _campaign_sequence(answer)
    with pytest.raises(CollectorError) as info:
        wait_for_campaign(BASE, CID, client=client, timeout=0.05, interval=0.01)
    assert info.value.code == code
    if code == "target_not_met":
        assert info.value.parameter == "q" and "q: too small" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"base_url": "ftp://x"}, "base_url"), ({"campaign_id": "x"}, "campaign_id"), ({"timeout": 0}, "timeout"),
     ({"timeout": 10**6}, "timeout"), ({"interval": -1}, "interval"), ({"max_interval": 61}, "max_interval"),
     ({"client": object()}, "client")],
)
def test_wait_for_campaign_invalid_arguments(kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"base_url": BASE, "campaign_id": CID, **kwargs}
    with pytest.raises(ParameterError, match=match):
        wait_for_campaign(args.pop("base_url"), args.pop("campaign_id"), **args)
