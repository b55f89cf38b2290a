"""Memoized campaign families end to end (issue 14 item 3): the device's MemoStore, and the same devices sending
for 10 rounds to the real collector, whose published lifetime bound is checked against an exact computation."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from tests.oracles import memoization as oracle

from sufficientdp import ParameterError, RandomizationParams, Randomizer
from sufficientdp.client import CampaignInfo, CollectorError, MemoError, MemoStore, Reporter, wait_for_campaign

ADMIN = "admin-" + "3" * 20
ADMIN_AUTH = {"authorization": f"Bearer {ADMIN}"}
Q1, Q2, LAM = Fraction(1, 4), Fraction(1, 8), Fraction(3, 2)


# --- exact small case (independent of the library: tests/oracles/memoization.py) ----------------------------


def exact_delta(a: tuple[int, ...], b: tuple[int, ...], rounds: int, *, memoized: bool) -> Fraction:
    if memoized:
        return oracle.delta_t(a, b, q1=Q1, q2=Q2, bits=1, rounds=rounds, lam=LAM)
    return oracle.delta_t(a, b, q1=None, q2=Q1 * (1 - Q2) + Q2 * (1 - Q1), bits=1, rounds=rounds, lam=LAM)


# --- the memo store ------------------------------------------------------------------------------------------


def test_memo_store_is_permanent_private_and_exact(tmp_path: Any) -> None:
    path = tmp_path / "memo.json"
    store = MemoStore(path)
    value = [1, 0, 1, 1, 0, 0, 1, 0]
    m = store.memo("fam", value, 1, 2)  # q1 = 1/4
    assert m == store.memo("fam", value, 1, 2) == MemoStore(path).memo("fam", value, 1, 2)  # permanent, restarts
    assert store.families == ("fam",)
    text = path.read_text()
    data = json.loads(text)
    assert set(data["families"]["fam"]) == {"secret", "numerator", "precision"}  # no value, no memo
    assert "secret" not in repr(store) and data["families"]["fam"]["secret"] not in repr(store)
    # the flip rate is q1: 4000 bits of the zero vector, 1/4 expected, 6 standard deviations
    flips = sum(MemoStore(tmp_path / "big.json").memo("f", [0] * 4000, 1, 2))
    assert abs(flips - 1000) < 6 * math.sqrt(4000 * 0.25 * 0.75)
    with pytest.raises(MemoError, match="memoized with q1 = 1/2\\*\\*2"):
        store.memo("fam", value, 3, 4)
    assert store.forget("fam") and not store.forget("fam") and store.families == ()
    with pytest.raises(ParameterError):
        store.memo("fam", [2], 1, 2)
    for bad in (b"", b"{", b'{"version": 1, "families": {"f": {"secret": "zz", "numerator": 1, "precision": 2}}}',
                b'{"version": 1, "families": {"f": {"secret": "' + b"00" * 32 + b'", "numerator": 2, '
                b'"precision": 2}}}'):
        path.write_bytes(bad)
        with pytest.raises(MemoError, match="corrupted.*not reset"):
            MemoStore(path)
        assert path.read_bytes() == bad


def test_memoized_campaign_needs_a_memo_store() -> None:
    base = {"id": "0" * 32, "bits": 1, "q_numerator": 1 << 29, "precision": 32, "reports_per_person": 1,
            "rate_limit": "none", "family": "f", "memo_q_numerator": 1 << 30, "memo_q": 0.25}
    info = CampaignInfo.from_dict(base)
    assert info.memo_flip is not None and info.memo_flip.value == 0.25
    with pytest.raises(ParameterError, match="must name its family"):
        CampaignInfo.from_dict({**base, "family": None})
    with pytest.raises(ParameterError, match="memo_q must equal"):
        CampaignInfo.from_dict({**base, "memo_q": 0.3})


# --- end to end ---------------------------------------------------------------------------------------------


def test_same_devices_for_ten_rounds_within_the_published_lifetime_bound(tmp_path: Any) -> None:
    pytest.importorskip("fastapi")
    app_module = pytest.importorskip("sufficientdp.service.app")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    rounds, values = 10, (1, 0)
    body = {"name": "daily bit", "bits": 1, "epsilon": math.log(LAM), "eta": 0.99, "crowd_size": 2,
            "q": float(Q2), "memo_q": float(Q1), "family": "daily-bit", "rate_limit": "none"}
    stores = [MemoStore(tmp_path / f"device-{i}.json") for i in range(len(values))]
    app = app_module.create_app(f"sqlite:///{tmp_path / 'c.db'}", admin_token=ADMIN)
    lifetimes, counts, expected = [], [], []
    with TestClient(app, base_url="http://testserver") as tc:
        bad = tc.post("/v1/campaigns", headers=ADMIN_AUTH, json={**body, "family": None})
        assert bad.status_code == 422 and bad.json()["error"]["parameter"] == "family"
        for t in range(rounds):
            created = tc.post("/v1/campaigns", headers=ADMIN_AUTH, json=body)
            assert created.status_code == 202, created.text
            cid = created.json()["id"]
            c = wait_for_campaign("http://testserver", cid, client=tc, interval=0.05)
            assert c["memo_q"] == 0.25 and c["q"] == 0.125 and c["q_release"] == float(Q1 * (1 - Q2) + Q2 * (1 - Q1))
            life = c["lifetime"]
            assert (life["kind"], life["scope"], life["rounds"], life["eta"]) == ("bound", "all-collections", "any",
                                                                                  None)
            lifetimes.append(life["delta"])
            with pytest.raises(CollectorError) as info:  # no memo store: refused before anything is sent
                Reporter("http://testserver", cid, client=tc).report([1])
            assert info.value.code == "memo_required"
            total = 0
            for i, v in enumerate(values):
                seed = 1000 * t + i
                r = Reporter("http://testserver", cid, client=tc, backoff=0.0, memo=stores[i],
                             rng=np.random.default_rng(seed))
                assert r.report([v]).accepted == 1
                # independent replay: the report is the permanent memo flipped with q2 by the same generator
                memo = np.array(stores[i].memo("daily-bit", [v], 1 << 30, 32), dtype=np.uint8)
                params = RandomizationParams(bits=1, q=0.125, reports=1, precision=32)
                total += int(Randomizer(params, rng=np.random.default_rng(seed)).randomize(memo[None, :]).sum())
            expected.append(total)
            release = tc.post(f"/v1/campaigns/{cid}/releases", headers=ADMIN_AUTH)
            assert release.status_code == 201, release.text
            counts.append(int(release.json()["estimates"][0]["count"]))
    app.state.storage.close()
    assert counts == expected  # every round's reports came from the memos
    assert len(set(lifetimes)) == 1  # the published lifetime bound does not grow with the rounds
    bound = lifetimes[0]
    # The exact leakage of the 10 memoized releases, every neighbouring pair of N = 2, L = 1, both directions.
    worst = Fraction(0)
    for other, x, y in itertools.product((0, 1), (0, 1), (0, 1)):
        if x != y:
            worst = max(worst, exact_delta((other, x), (other, y), rounds, memoized=True))
    assert 0 < float(worst) <= bound + 1e-12, (float(worst), bound)
    # without memoization the same per-release q over 10 rounds leaks more than the memoized lifetime bound
    fresh = max(exact_delta((o, x), (o, 1 - x), rounds, memoized=False) for o in (0, 1) for x in (0, 1))
    assert float(fresh) > bound
