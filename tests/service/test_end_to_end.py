"""End to end: simulated people report through the client Reporter (tokens, k = 2) to the in-process collector.

300 people with known true values (seeded) each use :class:`sufficientdp.client.reporter.Reporter` with a seeded
generator: the Reporter fetches the campaign, obtains 2 blind-signature tokens for its credential, randomizes its
value twice and submits each report in its own request. A release then covers all 600 reports, and:

* the raw counts equal those of the same seeded randomizations recomputed here (nothing lost or duplicated);
* each per-bit estimate's 99.9% interval ``estimate ± z_0.9995 * std_error`` covers the true count. The standard
  error is the exact sd of the unbiased estimator (seed 001 §4, §6), so under the normal approximation each bit
  fails with probability 0.001 and the test with at most 4 * 0.001 = 0.4% (union bound); the seeds are fixed,
  so the outcome is deterministic;
* a second release from 10 more people (20 reports < k * N_min = 600) is refused with ``crowd_too_small``.
"""

from __future__ import annotations

import math
import secrets
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")
pytest.importorskip("httpx", reason="the Reporter needs httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from sufficientdp.client.reporter import Reporter, wait_for_campaign  # noqa: E402
from sufficientdp.collection.tokens import TokenKey  # noqa: E402
from sufficientdp.parameters import RandomizationParams  # noqa: E402
from sufficientdp.randomization import Randomizer  # noqa: E402
from sufficientdp.service.app import create_app  # noqa: E402

BITS = 4
PEOPLE = 300
K = 2
PREVALENCE = np.array([0.1, 0.3, 0.5, 0.85])


def _report(client: TestClient, cid: str, value: np.ndarray, credential: str, seed: int, key: TokenKey) -> Any:
    reporter = Reporter("http://testserver", cid, credential=credential, client=client,
                        rng=np.random.default_rng(seed), backoff=0.0, token_key=key)
    try:
        return reporter.report(value)
    finally:
        reporter.close()


@pytest.mark.slow
def test_reporters_to_release(tmp_path: Path) -> None:
    admin = secrets.token_hex(16)
    auth = {"authorization": f"Bearer {admin}"}  # the deployment's calls; the Reporters send no admin token
    app = create_app(str(tmp_path / "collector.db"), admin_token=admin)
    try:
        client = TestClient(app)
        r = client.post("/v1/campaigns", headers=auth, json={"name": "e2e", "bits": BITS, "epsilon": 1.0,
                                                             "crowd_size": PEOPLE, "reports_per_person": K,
                                                             "q": 0.4, "rate_limit": "tokens"})
        assert r.status_code == 202, r.text  # the collector checks q in a background job
        key = TokenKey.from_dict(r.json()["token_key"])  # pinned: the campaign's creator is the deployment
        campaign = wait_for_campaign("http://testserver", r.json()["id"], client=client, timeout=120,
                                     interval=0.05)
        cid, q = campaign["id"], campaign["q"]
        assert campaign["status"] == "active" and campaign["eta_at_q"] <= campaign["eta"]

        rng = np.random.default_rng(20240611)
        truth = (rng.random((PEOPLE, BITS)) < PREVALENCE).astype(np.uint8)
        seeds = rng.integers(0, 2**63, size=PEOPLE + 10)
        for i in range(PEOPLE):
            receipt = _report(client, cid, truth[i], f"person-{i}", int(seeds[i]), key)
            assert (receipt.accepted, receipt.duplicates, receipt.tokens) == (K, 0, True)

        status = client.get(f"/v1/campaigns/{cid}").json()
        assert status["pending_reports"] == K * PEOPLE
        release = client.post(f"/v1/campaigns/{cid}/releases", headers=auth)
        assert release.status_code == 201, release.text
        rel = release.json()
        assert rel["reports"] == K * PEOPLE and rel["people"] == PEOPLE

        # The same seeded randomizations, recomputed here, give the released raw counts exactly.
        params = RandomizationParams(bits=BITS, q=q, reports=K)
        expected = sum(Randomizer(params, rng=np.random.default_rng(int(seeds[i]))).randomize(truth[i:i + 1])
                       .sum(axis=0) for i in range(PEOPLE))
        assert [e["count"] for e in rel["estimates"]] == np.asarray(expected).tolist()

        z = float(norm.ppf(0.9995))
        true_counts = truth.sum(axis=0)
        for e, d in zip(rel["estimates"], true_counts, strict=True):
            assert math.isclose(e["std_error"], math.sqrt(PEOPLE * q * (1 - q) / K) / (1 - 2 * q))
            assert e["estimate"] - z * e["std_error"] <= d <= e["estimate"] + z * e["std_error"], (e, int(d))
        assert rel["histogram"] is not None and math.isclose(sum(rel["histogram"]["estimate"]), PEOPLE)

        # Ten more people: 20 reports, far below k * N_min = 600; the release is refused with the numbers.
        for i in range(PEOPLE, PEOPLE + 10):
            _report(client, cid, truth[i % PEOPLE], f"person-{i}", int(seeds[i]), key)
        refused = client.post(f"/v1/campaigns/{cid}/releases", headers=auth)
        assert refused.status_code == 409
        err = refused.json()["error"]
        assert err["code"] == "crowd_too_small" and "20 are pending" in err["message"] and "600" in err["message"]
        # A person cannot report twice: the credential's tokens were issued once.
        again = client.post(f"/v1/campaigns/{cid}/tokens", json={"credential": "person-0", "blinded": ["2"]})
        assert again.status_code == 409 and again.json()["error"]["code"] == "token_already_issued"
    finally:
        app.state.jobs.close()
        app.state.storage.close()
