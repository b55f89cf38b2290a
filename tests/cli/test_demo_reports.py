"""``sufficientdp demo --collector --report-dir DIR`` (issue 12, ``make demo``): the collection flow on 127.0.0.1
ends by writing a design report and a release report and printing their paths; the database is kept beside them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sufficientdp.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.service]


def test_collector_demo_writes_both_reports(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for extra in ("fastapi", "uvicorn", "httpx", "cryptography", "matplotlib", "jinja2"):
        pytest.importorskip(extra)
    folder = tmp_path / "demo"
    code = main(["demo", "--collector", "--population", "40", "--crowd-size", "20", "--bits", "2", "--q", "0.45",
                 "--eta", "0.5", "--seed", "3", "--report-dir", str(folder), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[-2] == f"design report: {folder / 'design.html'}"
    assert lines[-1] == f"release report: {folder / 'release.html'}"
    assert (folder / "collector.db").exists()
    design = (folder / "design.html").read_text(encoding="utf-8")
    release = (folder / "release.html").read_text(encoding="utf-8")
    numbers = {name: json.loads(re.search(r'<script type="application/json" id="numbers">(.*?)</script>', page,
                                          flags=re.S).group(1))  # type: ignore[union-attr]
               for name, page in (("design", design), ("release", release))}
    assert numbers["design"]["report"] == "design" and numbers["design"]["inputs"]["bits"] == 2
    assert numbers["design"]["inputs"]["population"] == 20
    assert numbers["release"]["report"] == "release"
    assert numbers["release"]["estimates"]["reports"] == 40
    assert numbers["release"]["spec"]["crowd_size"] == 20 and numbers["release"]["spec"]["bits"] == 2
    assert "--report-dir" not in release and "<svg" in design and "<svg" in release


def test_report_dir_needs_the_collector(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["demo", "--report-dir", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2 and "--report-dir applies only with --collector" in err
