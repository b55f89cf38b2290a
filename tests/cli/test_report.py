"""``sufficientdp report design`` (issue 12): a well-formed, self-contained page whose every number equals the JSON.

One report (L = 1, N = 50: the proven bound is then the exact single-bit scan, a few seconds) is written once per
module and checked from several sides; a real headless Chromium renders it when one is on PATH.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")

from cli_run import run  # noqa: E402

from sufficientdp.cli.main import main  # noqa: E402
from sufficientdp.report.design import _lookup, format_number  # noqa: E402

ARGS = ["report", "design", "--bits", "1", "--population", "50", "--epsilon", "1", "--eta", "0.01"]
FIGURES = ("sigma_vs_q", "eta_vs_q", "ratio_distribution", "methods_comparison", "power_vs_level", "noise_vs_k")
VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "base", "source"}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("report")
    out = folder / "report.html"
    buf_out, buf_err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf_out), contextlib.redirect_stderr(buf_err):
        code = main([*ARGS, "--output", str(out), "--json"])
    assert code == 0, buf_err.getvalue()
    lines = buf_out.getvalue().strip().splitlines()
    assert len(lines) == 1
    return {"folder": folder, "path": out, "html": out.read_text(encoding="utf-8"), "json": json.loads(lines[0])}


class _Checker(HTMLParser):
    """Tag balance (void elements aside), the numbers spans, the embedded JSON and the figures' SVG."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.spans: list[tuple[str, str, str]] = []
        self._span: list[Any] | None = None
        self._script: list[str] | None = None
        self.script_text = ""
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag == "span" and a.get("class") == "num":
            self._span = [a["data-key"], a["data-fmt"], ""]
        if tag == "script" and a.get("id") == "numbers":
            self._script = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()
        if tag == "span" and self._span is not None:
            self.spans.append((self._span[0], self._span[1], self._span[2]))
            self._span = None
        if tag == "script" and self._script is not None:
            self.script_text = "".join(self._script)
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._span is not None:
            self._span[2] += data
        if self._script is not None:
            self._script.append(data)


def _check(html: str) -> _Checker:
    c = _Checker()
    c.feed(html)
    c.close()
    return c


@pytest.mark.slow
def test_well_formed_and_self_contained(made: dict[str, Any]) -> None:
    html = made["html"]
    assert html.startswith("<!DOCTYPE html>")
    c = _check(html)
    assert c.errors == [] and c.stack == []
    # Nothing is fetched: no external scripts, styles, images or links (SVG namespaces are names, not fetches).
    for tag, attrs in c.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed")
        for key in ("src", "href", "xlink:href"):
            value = attrs.get(key)
            assert value is None or not re.match(r"[a-z]+://|//", value), (tag, key, value)
    assert "@import" not in html and "url(http" not in html


@pytest.mark.slow
def test_every_figure_is_present_and_non_empty(made: dict[str, Any]) -> None:
    svgs = re.findall(r"<svg\b.*?</svg>", made["html"], flags=re.S)
    assert len(svgs) == len(FIGURES)
    for svg in svgs:
        root = ET.fromstring(svg)  # well-formed XML
        paths = [e for e in root.iter() if e.tag.endswith("path") or e.tag.endswith("use")]
        assert len(paths) > 10
        assert float(root.get("width", "0pt").rstrip("pt")) > 100


@pytest.mark.slow
def test_numbers_on_the_page_equal_the_json(made: dict[str, Any]) -> None:
    c = _check(made["html"])
    embedded = json.loads(c.script_text)
    assert embedded == made["json"]  # the page's JSON is the command's --json output
    assert len(c.spans) > 40
    for key, fmt, text in c.spans:
        assert text == format_number(_lookup(embedded, key), fmt), key
    shown = {key for key, _, _ in c.spans}
    for i, row in enumerate(embedded["methods"]):  # each method's q is on the page
        if row["available"]:
            assert f"methods.{i}.q" in shown


@pytest.mark.slow
def test_decision_content(made: dict[str, Any]) -> None:
    d = made["json"]
    assert d["chosen"] == "proven" and d["methods"][0]["method"] == "proven" and d["methods"][0]["chosen"]
    assert {r["method"] for r in d["methods"]} == {"proven", "homogeneous", "local", "paper-sigma"}
    chosen_rows = re.findall(r'<tr class="chosen"><td>([^<]*)</td>', made["html"])
    assert chosen_rows == ["proven (chosen)"]
    pts = d["eta_vs_q"]["points"]
    assert len(pts) >= 3 and sum(p["calibrated"] for p in pts) == 1
    for section in ("The decision", "Accuracy", "What it means to an attacker", "Several reports per person",
                    "Assumptions and caveats", "Reproducibility"):
        assert section in made["html"]
    assert d["command"].startswith("sufficientdp report design --bits 1 --population 50 --epsilon 1.0 --eta 0.01")
    assert d["command"] in made["html"]


@pytest.mark.slow
def test_no_temporary_file_left(made: dict[str, Any]) -> None:
    assert sorted(p.name for p in made["folder"].iterdir()) == ["report.html"]


@pytest.mark.slow
def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    for extra in (["--epsilon", "nan"], ["--eta", "1.5"], ["--method", "certified"], ["--bits", "0"]):
        code, _, err = run(capsys, *ARGS, *extra, "--output", str(out))
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (extra, err)
    code, _, err = run(capsys, "report", "design", "--bits", "1", "--population", "50", "--epsilon", "1",
                       "--one-hot", "--output", str(out))
    assert code == 2 and err.count("\n") == 1
    code, _, err = run(capsys, *ARGS, "--method", "local", "--output", str(tmp_path))  # a directory
    assert code == 2 and "directory" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="no chromium or chromium-browser on PATH (.ci/run installs "
                                                 "Debian's chromium when it runs as root)")
def test_renders_in_headless_chromium(made: dict[str, Any], tmp_path: Path) -> None:
    _render_in_chromium(made["path"], tmp_path, figures=len(FIGURES))


def _render_in_chromium(page: Path, tmp_path: Path, *, figures: int) -> None:
    """Load ``page`` in headless Chromium: the DOM holds the figures and the JSON, no console error is logged, and
    the screenshot is a PNG that is not blank."""
    exe = _chromium()
    assert exe is not None
    url = page.resolve().as_uri()
    base = [exe, "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", "--enable-logging=stderr",
            "--v=0"]
    env = {**os.environ, "HOME": str(tmp_path)}
    dom = subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True, timeout=120, env=env)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<svg") >= figures
    assert 'id="numbers"' in dom.stdout
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == [], console
    shot = tmp_path / "page.png"
    res = subprocess.run([*base, f"--screenshot={shot}", "--window-size=1280,3000", url], capture_output=True,
                         text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000  # a blank page compresses to a few KB


# ---------------------------------------------------------------------------------------------------- release
@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A collector database with one campaign (L = 3, q = 1/4) and one release of 200 reports."""
    import numpy as np

    from sufficientdp.service.storage import open_storage, pack_reports

    folder = tmp_path_factory.mktemp("release")
    url = f"sqlite:///{folder / 'c.db'}"
    s = open_storage(url)
    spec = {"id": "c1", "name": "survey <test>", "bits": 3, "epsilon": 1.0, "eta": 0.001, "crowd_size": 50,
            "reports_per_person": 1, "q": 0.25, "eta_at_q": 0.0009, "guarantee": "proof & bound", "notes": ["n<1>"],
            "calibrated": True, "status": "active"}
    s.create_campaign("c1", spec, None)
    rng = np.random.default_rng(3)
    reports = (rng.random((200, 3)) < [0.1, 0.5, 0.8]).astype(int) ^ (rng.random((200, 3)) < 0.25).astype(int)
    s.submit("c1", pack_reports(reports), [None] * 200)
    rel = s.release("c1", threshold=50, bits=3, day="2024-01-01", build=lambda rid, t: {"id": rid})
    s.close()
    out = folder / "release.html"
    buf_out, buf_err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf_out), contextlib.redirect_stderr(buf_err):
        code = main(["report", "release", "--database", url, "--campaign", "c1", "--output", str(out), "--json"])
    assert code == 0, buf_err.getvalue()
    return {"url": url, "release": rel["id"], "folder": folder, "path": out, "reports": reports,
            "html": out.read_text(encoding="utf-8"), "json": json.loads(buf_out.getvalue())}


@pytest.mark.slow
def test_release_report_numbers_and_figure(released: dict[str, Any]) -> None:
    c = _check(released["html"])
    assert c.errors == [] and c.stack == []
    embedded = json.loads(c.script_text)
    assert embedded == released["json"]
    for key, fmt, text in c.spans:
        assert text == format_number(_lookup(embedded, key), fmt), key
    est = embedded["estimates"]
    assert est["reports"] == 200 and [r["count"] for r in est["estimates"]] == released["reports"].sum(0).tolist()
    assert len(embedded["top_vectors"]) == 8
    svgs = re.findall(r"<svg\b.*?</svg>", released["html"], flags=re.S)
    assert len(svgs) == 1 and len(list(ET.fromstring(svgs[0]).iter())) > 20
    assert "survey &lt;test&gt;" in released["html"] and "n&lt;1&gt;" in released["html"]  # escaped
    assert sorted(p.name for p in released["folder"].iterdir() if p.suffix != ".db" and "-" not in p.name) == \
        ["release.html"]


def test_release_report_refusals(released: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                 ) -> None:
    out = tmp_path / "r.html"
    for extra, message in ((["--campaign", "nope"], "unknown campaign"),
                           (["--campaign", "c1", "--release", "zz"], "unknown release"),
                           (["--campaign", "c1", "--level", "1.5"], "confidence-level must be in"),
                           (["--campaign", "c1", "--confidence-level", "0"], "confidence-level must be in")):
        code, _, err = run(capsys, "report", "release", "--database", released["url"], *extra, "--output", str(out))
        assert code == 2 and message in err and err.count("\n") == 1, err
    code, _, err = run(capsys, "report", "release", "--database", str(tmp_path / "missing.db"), "--campaign", "c1",
                       "--output", str(out))
    assert code == 2 and err.count("\n") == 1
    assert not out.exists()
    code, out_text, _ = run(capsys, "report", "release", "--database", released["url"], "--campaign", "c1",
                            "--release", released["release"], "--output", str(out), "--json")
    assert code == 0 and json.loads(out_text)["release"] == released["release"]


def test_release_report_joint_frequencies(released: dict[str, Any], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "j.html"
    code, out_text, err = run(capsys, "report", "release", "--database", released["url"], "--campaign", "c1",
                              "--joint", "2,0", "--output", str(out), "--json")
    assert code == 0, err
    numbers = json.loads(out_text)
    joint = numbers["estimates"]["joint"]
    assert joint["bits"] == [2, 0] and len(joint["estimate"]) == 4
    rep = released["reports"]
    assert joint["counts"] == [int(((rep[:, 2] == i & 1) & (rep[:, 0] == i >> 1)).sum()) for i in range(4)]
    html = out.read_text(encoding="utf-8")
    c = _check(html)
    assert c.errors == [] and json.loads(c.script_text) == numbers
    for key, fmt, text in c.spans:
        assert text == format_number(_lookup(numbers, key), fmt), key
    assert "Joint frequencies of bits 2, 0" in html and "--joint 2,0" in numbers["command"]
    for bad in ("9", "a,b", "1,1"):
        code, _, err = run(capsys, "report", "release", "--database", released["url"], "--campaign", "c1",
                           "--joint", bad, "--output", str(tmp_path / "bad.html"))
        assert code == 2 and err.count("\n") == 1, err


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="no chromium or chromium-browser on PATH (.ci/run installs "
                                                 "Debian's chromium when it runs as root)")
def test_release_report_renders_in_headless_chromium(released: dict[str, Any], tmp_path: Path) -> None:
    _render_in_chromium(released["path"], tmp_path, figures=1)
