"""`sufficientdp demo` shows a device declining a campaign over its privacy budget (issue 14)."""

from __future__ import annotations

import json

import pytest

from sufficientdp.cli.main import main


@pytest.mark.slow
def test_demo_shows_a_device_declining_over_its_budget(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--population", "5000", "--bits", "4", "--seed", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    led, cal = d["ledger"], d["calibration"]
    assert [c["allowed"] for c in led["campaigns"]] == [True, True, False]
    assert led["budget"]["epsilon"] == 2 * cal["epsilon"]
    assert led["campaigns"][-1]["reason"].startswith("declined: joining would spend epsilon 3")
    assert main(["demo", "--population", "5000", "--bits", "4", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "DECLINES day-3" in out and "sends nothing" in out
