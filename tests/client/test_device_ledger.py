"""The device-side privacy ledger wired into the Reporter (issue 14): budget arithmetic against brute force, a
declined campaign sends nothing, the ledger survives a restart, a corrupted ledger file is an error."""

from __future__ import annotations

import json
import math
import os
import random
import warnings
from fractions import Fraction
from typing import Any

import httpx
import pytest

from sufficientdp import ParameterError
from sufficientdp.client import CampaignInfo, LedgerError, LedgerStore, Reporter
from sufficientdp.collection import TokenKey
from sufficientdp.collection.ledger import Budget

BASE = "https://collector.test"
DAY = 86400.0
ADMIN = "admin-" + "2" * 20
ADMIN_AUTH = {"authorization": f"Bearer {ADMIN}"}


class Clock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class FakeCollector:
    """Campaigns without tokens, each with its published guarantee; records every request."""

    def __init__(self) -> None:
        self.campaigns: dict[str, dict[str, Any]] = {}
        self.requests: list[httpx.Request] = []
        self.stored: list[Any] = []

    def add(self, cid: str, *, epsilon: float, eta_at_q: float | None, family: str | None = "daily",
            bits: int = 4) -> str:
        self.campaigns[cid] = {"id": cid, "status": "active", "bits": bits, "epsilon": epsilon, "eta": 0.001,
                               "crowd_size": 10, "reports_per_person": 1, "q": 0.25, "q_numerator": 1 << 30,
                               "precision": 32, "eta_at_q": eta_at_q, "rate_limit": "none", "token_key": None,
                               "family": family}
        return cid

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        parts = request.url.path.split("/")
        cid = parts[3]
        if request.method == "GET" and len(parts) == 4 and cid in self.campaigns:
            return httpx.Response(200, json=self.campaigns[cid])
        if request.method == "POST" and parts[-1] == "reports":
            body = json.loads(request.content)
            self.stored.extend(body["reports"])
            return httpx.Response(200, json={"accepted": len(body["reports"]), "duplicates": 0})
        return httpx.Response(404, json={"error": {"code": "unknown_campaign", "message": "no", "parameter": None}})

    def sent_after_fetch(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.method != "GET"]


def cid(i: int) -> str:
    return f"{i:032x}"


def reporter(collector: FakeCollector, campaign: str, store: LedgerStore | None) -> Reporter:
    return Reporter(BASE, campaign, client=httpx.Client(transport=httpx.MockTransport(collector)), backoff=0.0,
                    ledger=store)


# --- budget arithmetic against brute force -------------------------------------------------------------------


def brute_allowed(joined: list[tuple[str, Fraction, Fraction, float]], campaign: str, eps: Fraction,
                  eta: Fraction, now: float, budget: tuple[Fraction, Fraction, float]) -> bool:
    """Direct definition: a campaign already joined is free; otherwise the exact sums over (now - period, now]."""
    if any(c == campaign for c, *_ in joined):
        return True
    b_eps, b_eta, period = budget
    window = [(e, h) for c, e, h, at in joined if now - period < at <= now]
    return sum((e for e, _ in window), eps) <= b_eps and min(Fraction(1), sum((h for _, h in window), eta)) <= b_eta


@pytest.mark.parametrize("seed", range(6))
def test_decisions_match_brute_force(tmp_path: Any, seed: int) -> None:
    rng = random.Random(seed)
    # Values on a coarse dyadic grid, so the float sums are exact and the comparison has no ties to break.
    b_eps, b_eta, period = Fraction(rng.randint(8, 24), 4), Fraction(rng.randint(4, 40), 1024), rng.choice(
        [3 * DAY, 7 * DAY, 30 * DAY])
    clock = Clock()
    store = LedgerStore(tmp_path / "ledger.json", budget=Budget(epsilon=float(b_eps), eta=float(b_eta),
                                                                  period=period), clock=clock)
    collector = FakeCollector()
    joined: list[tuple[str, Fraction, Fraction, float]] = []
    outcomes = []
    for i in range(60):
        clock.t += rng.choice([0.0, 3600.0, DAY, 2 * DAY])
        c = cid(rng.randrange(i + 1))  # sometimes a campaign already seen
        if c not in collector.campaigns:
            collector.add(c, epsilon=rng.randint(1, 8) / 4, eta_at_q=rng.randint(0, 8) / 1024)
        spec = collector.campaigns[c]
        eps, eta = Fraction(spec["epsilon"]), Fraction(spec["eta_at_q"])
        expected = brute_allowed(joined, c, eps, eta, clock.t, (b_eps, b_eta, period))
        before = len(collector.sent_after_fetch())
        receipt = reporter(collector, c, store).report([1, 0, 1, 0])
        assert receipt.decision is not None and receipt.decision.allowed == expected, (i, receipt.decision)
        assert receipt.declined == (not expected)
        sent = len(collector.sent_after_fetch()) - before
        assert sent == (1 if expected else 0)  # one report request when joined, nothing when declined
        if expected and not any(j[0] == c for j in joined):
            joined.append((c, eps, eta, clock.t))
        outcomes.append(expected)
    assert any(outcomes) and not all(outcomes)  # both branches exercised
    assert [s.campaign for s in LedgerStore(tmp_path / "ledger.json").ledger.spends] == [j[0] for j in joined]


# --- a declined campaign sends nothing -----------------------------------------------------------------------


def test_declined_campaign_sends_nothing_and_says_nothing(tmp_path: Any) -> None:
    collector = FakeCollector()
    store = LedgerStore(tmp_path / "l.json", budget=Budget(epsilon=1.5, eta=1e-3, period=30 * DAY), clock=Clock())
    a = collector.add(cid(1), epsilon=1.0, eta_at_q=1e-4)
    b = collector.add(cid(2), epsilon=1.0, eta_at_q=1e-4)
    first = reporter(collector, a, store).report([1, 1, 0, 0])
    assert not first.declined and first.accepted == 1
    assert first.to_dict()["declined"] is False
    n = len(collector.requests)
    r = reporter(collector, b, store)
    second = r.report([1, 1, 0, 0])
    assert second.declined and second.reports == second.accepted == second.requests == 0
    assert r.decision is second.decision and "epsilon 2 > 1.5" in second.decision.reason
    new = collector.requests[n:]
    assert [req.method for req in new] == ["GET"]  # only the anonymous campaign fetch every device makes
    assert new[0].content == b"" and "ledger" not in str(new[0].url) and len(collector.stored) == 1
    assert second.to_dict()["decision"]["allowed"] is False
    # obtain_tokens on a declined token campaign sends nothing either (same rule)
    assert [s.campaign for s in store.ledger.spends] == [a]


def test_campaign_without_published_guarantee_is_declined(tmp_path: Any) -> None:
    collector = FakeCollector()
    store = LedgerStore(tmp_path / "l.json", budget=Budget(epsilon=5.0, eta=0.1, period=DAY), clock=Clock())
    c = collector.add(cid(3), epsilon=1.0, eta_at_q=None)
    receipt = reporter(collector, c, store).report([0, 0, 0, 1])
    assert receipt.declined and "publishes no per-release guarantee" in receipt.decision.reason
    assert collector.sent_after_fetch() == [] and store.ledger.spends == ()


def test_without_a_ledger_nothing_changes() -> None:
    collector = FakeCollector()
    c = collector.add(cid(4), epsilon=40.0, eta_at_q=0.5)
    receipt = reporter(collector, c, None).report([0, 1, 0, 1])
    assert receipt.decision is None and not receipt.declined and "decision" not in receipt.to_dict()


def test_campaign_info_reads_the_published_guarantee() -> None:
    collector = FakeCollector()
    c = collector.add(cid(5), epsilon=0.5, eta_at_q=2e-4, family=None)
    info = CampaignInfo.from_dict(collector.campaigns[c])
    assert (info.epsilon, info.eta_at_q, info.family) == (0.5, 2e-4, None)
    for bad in ({"epsilon": -1}, {"eta_at_q": 1.0}, {"family": ""}, {"family": "a\nb"}, {"epsilon": True}):
        with pytest.raises(ParameterError):
            CampaignInfo.from_dict({**collector.campaigns[c], **bad})


# --- persistence ---------------------------------------------------------------------------------------------


def test_restart_keeps_the_ledger(tmp_path: Any) -> None:
    path = tmp_path / "ledger.json"
    clock = Clock()
    collector = FakeCollector()
    budget = Budget(epsilon=2.0, eta=1e-3, period=7 * DAY)
    for i in range(2):
        collector.add(cid(10 + i), epsilon=1.0, eta_at_q=1e-4)
        assert not reporter(collector, cid(10 + i), LedgerStore(path, budget=budget, clock=clock)).report(
            [1, 0, 0, 0]).declined
        clock.t += 3600
    # a new process: the store is read back from the file (budget kept when not given)
    collector.add(cid(12), epsilon=1.0, eta_at_q=1e-4)
    again = LedgerStore(path, clock=clock)
    assert again.budget == budget and [s.campaign for s in again.ledger.spends] == [cid(10), cid(11)]
    assert reporter(collector, cid(12), again).report([1, 0, 0, 0]).declined
    # a week later the first two spends left the window
    clock.t += 7 * DAY
    assert not reporter(collector, cid(12), LedgerStore(path, clock=clock)).report([1, 0, 0, 0]).declined
    stored = json.loads(path.read_text())
    # only campaign ids, families, guarantees and times: no value, no report, no credential
    assert set(stored) == {"version", "budget", "spends"}
    assert all(set(s) == {"campaign", "family", "epsilon", "eta", "at"} for s in stored["spends"])
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]  # no temporary file left behind


@pytest.mark.parametrize("content", [b"", b"{not json", b"\xff\xfe", b"[]", b'{"version": 2}',
                                     b'{"version": 1, "budget": {"epsilon": 1, "eta": 0.1, "period": 1}, '
                                     b'"spends": [{"campaign": "c"}]}',
                                     b'{"version": 1, "budget": {"epsilon": -1, "eta": 0.1, "period": 1}, '
                                     b'"spends": []}'])
def test_corrupted_ledger_is_a_clear_error_not_a_reset(tmp_path: Any, content: bytes) -> None:
    path = tmp_path / "ledger.json"
    path.write_bytes(content)
    with pytest.raises(LedgerError, match=r"ledger at .*ledger\.json is corrupted.*not reset") as info:
        LedgerStore(path, budget=Budget(epsilon=1.0, eta=0.1, period=DAY))
    assert "Traceback" not in str(info.value)
    assert path.read_bytes() == content  # left as found


def test_store_arguments(tmp_path: Any) -> None:
    with pytest.raises(ParameterError, match="no ledger at .* and no budget"):
        LedgerStore(tmp_path / "missing.json")
    with pytest.raises(ParameterError, match="budget must be a Budget"):
        LedgerStore(tmp_path / "x.json", budget=(1, 0.1, 3))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="ledger must be a LedgerStore"):
        Reporter(BASE, cid(1), ledger="ledger.json")  # type: ignore[arg-type]
    store = LedgerStore(tmp_path / "y.json", budget=Budget(epsilon=1.0, eta=0.1, period=DAY), clock=Clock())
    with pytest.raises(ParameterError, match="cannot record"):
        store.record(campaign="c", family="f", epsilon=2.0, eta=0.0)
    assert not (tmp_path / "y.json").exists()
    store.record(campaign="c", family="f", epsilon=0.5, eta=0.0)
    assert math.isclose(store.forget_before(store.now()).spent(store.now())[0], 0.0)


# --- against the real collector app ----------------------------------------------------------------------------


def test_collector_publishes_family_and_a_declined_device_sends_nothing(tmp_path: Any) -> None:
    pytest.importorskip("fastapi")
    app_module = pytest.importorskip("sufficientdp.service.app")
    from sufficientdp.client import wait_for_campaign

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    app = app_module.create_app(f"sqlite:///{tmp_path / 'c.db'}", admin_token=ADMIN)
    body = {"name": "t", "bits": 4, "epsilon": 1.0, "eta": 0.5, "crowd_size": 3, "q": 0.48, "rate_limit": "tokens",
            "family": "weekly-usage"}
    with TestClient(app, base_url="http://testserver") as tc:
        ids, keys = [], []
        for _ in range(2):
            created = tc.post("/v1/campaigns", headers=ADMIN_AUTH, json=body)
            assert created.status_code == 202, created.text
            assert created.json()["family"] == "weekly-usage"
            ids.append(created.json()["id"])
            keys.append(TokenKey.from_dict(created.json()["token_key"]))
            served = wait_for_campaign("http://testserver", ids[-1], client=tc, interval=0.05)
            assert served["family"] == "weekly-usage" and served["eta_at_q"] is not None
        store = LedgerStore(tmp_path / "device.json", clock=Clock(),
                            budget=Budget(epsilon=1.5, eta=0.9, period=30 * DAY))
        receipts = []
        for cid_, key in zip(ids, keys, strict=True):
            r = Reporter("http://testserver", cid_, credential="device-1", client=tc, backoff=0.0, token_key=key,
                         ledger=store)
            receipts.append(r.report([1, 0, 1, 0]))
        assert not receipts[0].declined and receipts[0].accepted == 1
        assert receipts[1].declined and receipts[1].requests == 0
        assert tc.get(f"/v1/campaigns/{ids[1]}").json()["pending_reports"] == 0
        # the declined device never asked for tokens: its credential is still unused for campaign 2
        r = Reporter("http://testserver", ids[1], credential="device-1", client=tc, backoff=0.0, token_key=keys[1])
        assert r.report([1, 0, 1, 0]).accepted == 1
        assert [s.family for s in store.ledger.spends] == ["weekly-usage"]
        bad = tc.post("/v1/campaigns", headers=ADMIN_AUTH, json={**body, "family": ""})
        assert bad.status_code == 422
        none = tc.post("/v1/campaigns", headers=ADMIN_AUTH, json={k: v for k, v in body.items() if k != "family"})
        assert none.json()["family"] is None
    app.state.storage.close()
