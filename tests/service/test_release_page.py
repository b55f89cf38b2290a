"""The collector serves each release's page read-only (issue 12): ``GET /v1/campaigns/{id}/releases/{rid}/report``
returns the HTML ``sufficientdp report release`` writes for that release (the command line names the database
``DATABASE_URL`` instead of its URL). In process (TestClient), SQLite."""

from __future__ import annotations

import contextlib
import io
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
pytest.importorskip("cryptography", reason="token keys need cryptography")
pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from sufficientdp.cli.main import main  # noqa: E402
from sufficientdp.report.release import SERVED_DATABASE, release_page  # noqa: E402
from sufficientdp.service.app import create_app  # noqa: E402

pytestmark = pytest.mark.service

ADMIN = "admin-" + "0" * 20
AUTH = {"authorization": f"Bearer {ADMIN}"}
CAMPAIGN = {"name": "survey <page>", "bits": 3, "epsilon": 1.0, "crowd_size": 20, "q": 0.45, "eta": 0.5,
            "rate_limit": "none"}


def _campaign(client: TestClient, reports: np.ndarray) -> tuple[str, str]:
    r = client.post("/v1/campaigns", json=CAMPAIGN)
    assert r.status_code == 202, r.text
    cid = r.json()["id"]
    for _ in range(600):
        status = client.get(f"/v1/campaigns/{cid}").json()["status"]
        if status != "calibrating":
            break
        time.sleep(0.05)
    assert status == "active"
    assert client.post(f"/v1/campaigns/{cid}/reports", json={"reports": reports.tolist()}).status_code == 200
    r = client.post(f"/v1/campaigns/{cid}/releases")
    assert r.status_code == 201, r.text
    return cid, r.json()["id"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("release_page")
    url = str(folder / "collector.db")
    app = create_app(url, admin_token=ADMIN, release_page=release_page)
    plain = create_app(str(folder / "plain.db"), admin_token=ADMIN)  # no renderer: the route answers 404
    try:
        client = TestClient(app, headers=AUTH)
        reports = (np.random.default_rng(4).random((40, 3)) < 0.4).astype(int)
        cid, rid = _campaign(client, reports)
        yield {"client": client, "plain": TestClient(plain, headers=AUTH), "url": url, "cid": cid, "rid": rid,
               "folder": folder, "reports": reports}
    finally:
        for a in (app, plain):
            a.state.jobs.close()
            a.state.storage.close()


def test_the_page_is_the_report_release_html(served: dict[str, Any]) -> None:
    r = served["client"].get(f"/v1/campaigns/{served['cid']}/releases/{served['rid']}/report")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["content-security-policy"]
    out = Path(served["folder"]) / "release.html"
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["report", "release", "--database", served["url"], "--campaign", served["cid"], "--release",
                     served["rid"], "--output", str(out)])
    assert code == 0
    cli_html = out.read_text(encoding="utf-8")
    # the same page, but the served one does not show where the database is
    assert served["url"] not in r.text and SERVED_DATABASE in r.text
    assert r.text == cli_html.replace(served["url"], SERVED_DATABASE).replace(
        f"--output {out}", "--output release.html")
    assert "survey &lt;page&gt;" in r.text and "<svg" in r.text


def test_read_only_and_refusals(served: dict[str, Any]) -> None:
    c, cid, rid = served["client"], served["cid"], served["rid"]
    path = f"/v1/campaigns/{cid}/releases/{rid}/report"
    for method in (c.post, c.put, c.delete):
        assert method(path).status_code == 405
    for bad, code in ((f"/v1/campaigns/{cid}/releases/nope/report", "unknown_release"),
                      (f"/v1/campaigns/{'0' * 32}/releases/{rid}/report", "unknown_campaign"),
                      (f"/v1/campaigns/not-an-id/releases/{rid}/report", "unknown_campaign")):
        r = c.get(bad)
        assert r.status_code == 404 and r.json()["error"]["code"] == code, r.text
    r = served["plain"].get(path)
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_the_route_is_in_the_openapi_schema(served: dict[str, Any]) -> None:
    spec = served["client"].get("/openapi.json").json()
    op = spec["paths"]["/v1/campaigns/{campaign_id}/releases/{release_id}/report"]["get"]
    assert "text/html" in op["responses"]["200"]["content"]
