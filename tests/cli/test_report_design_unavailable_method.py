"""report design when a method it shows beside the chosen one is not available (--rounds 2: homogeneous and
paper-sigma are not composed over rounds) rendered nothing: the template read "chosen" from the unavailable row
(bad-input sweep, session 11: jinja2 UndefinedError, exit 1; first seen at --epsilon 50)."""

import pytest
from cli_run import run

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")


@pytest.mark.slow
def test_design_report_with_methods_not_available(tmp_path, capsys):
    out = tmp_path / "d.html"
    code, _, err = run(capsys, "report", "design", "--bits", "2", "--population", "50", "--epsilon", "1",
                       "--method", "local", "--rounds", "2", "--output", str(out), "--quiet")
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert page.lstrip().startswith("<!DOCTYPE html>") and "paper-sigma" in page
