"""`sufficientdp worst-case` beyond exhaustive sizes: the structured search (issue 9, ERRATA 5)."""

from __future__ import annotations

import pytest
from cli_run import run, run_json

ERRATA_ARGS = ("worst-case", "--bits", "2", "--population", "100", "--q", "0.1", "--epsilon", "3")


@pytest.mark.slow
def test_worst_case_reports_the_structured_counterexample_json(capsys):
    d = run_json(capsys, *ERRATA_ARGS, "--quiet")
    # {00×97, 10×2} + 11→00: eta = 2.7402794151872928e-06 by the exact enumeration of all C(103, 3) histograms
    # (tests/ratio/test_structured.py); the best homogeneous pair (reverse, j = 2) has 1.4407545770026147e-06.
    assert d["method"] == "structured" and d["exhaustive"] is False
    assert d["pair"]["label"] == "{00×97, 10×2} + 11→00"
    assert d["eta_lower"] <= 2.7402794151872928e-06 <= d["eta_upper"]
    assert d["reverse_homogeneous_eta"] == pytest.approx(1.4407545770026147e-06, rel=1e-8)
    assert d["two_sided_holds"] is False and d["conjecture_holds"] is False
    assert d["kind"] == "lower bound" and d["scope"] == "all-collections" and "structured pairs only" in d["searched"]
    assert d["ratio"] == pytest.approx(1.902, abs=1e-3)


@pytest.mark.slow
def test_worst_case_reports_the_structured_counterexample_text(capsys):
    code, out, err = run(capsys, *ERRATA_ARGS, "--quiet")
    assert code == 0, err
    assert "{00×97, 10×2} + 11→00" in out and "two_sided_holds: false" in out
    assert "exact counterexample" in out and "kind: lower bound (lower bound on the worst case over every pair" in out


def test_worst_case_small_sizes_stay_exhaustive(capsys):
    d = run_json(capsys, "worst-case", "--bits", "2", "--population", "4", "--q", "0.1", "--epsilon", "3.1")
    assert d["exhaustive"] is True and d["method"] == "exhaustive"


@pytest.mark.slow
def test_worst_case_heuristic_mode_combines_both_searches(capsys):
    d = run_json(capsys, "worst-case", "--bits", "2", "--population", "12", "--q", "0.1", "--epsilon", "3",
                 "--search", "heuristic", "--budget", "20", "--quiet")
    assert d["heuristic"]["method"] == "heuristic" and d["method"] == "structured"
    assert d["two_sided_holds"] == (d["heuristic"]["two_sided_holds"] and d["structured_claims"]["two_sided_holds"])
    assert d["eta_lower_bound"] >= max(d["eta_lower"], d["heuristic"]["eta"]) * (1 - 1e-12)


@pytest.mark.parametrize("flag, value, message", [
    ("--time-budget", "4000", "time-budget must be in (0, 3600]; got 4000"),
    ("--time-budget", "0", "time-budget must be in (0, 3600]; got 0"),
    ("--max-group", "5", "max-group must be an integer in [1, 4]; got 5"),
    ("--max-copies", "0", "max-copies must be an integer in [1, 256]; got 0"),
])
def test_worst_case_limits(capsys, flag, value, message):
    code, _, err = run(capsys, *ERRATA_ARGS, flag, value)
    assert code == 2 and message in err
