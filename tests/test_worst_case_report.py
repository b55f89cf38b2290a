"""``docs/worst_case.md``'s generator (:mod:`sufficientdp.report.worst_case`, command line
``scripts/worst_case_report.py``): the formatting helpers (the tables themselves take about a minute;
``python scripts/worst_case_report.py`` regenerates them)."""

from __future__ import annotations

from sufficientdp.report import worst_case as wc


def test_pair_text_and_fmt() -> None:
    assert wc.pair_text([[0, 0], [1, 0], [1, 1]], [[0, 0], [1, 0], [0, 1]]) == "{00,10} + 11→01"
    assert wc.pair_text([[1]], [[0]]) == "{∅} + 1→0"
    assert wc.pair_text(None, [[0]]) == "—"
    assert (wc.fmt(None), wc.fmt(0.0), wc.fmt(3e-5), wc.fmt(0.12345)) == ("—", "0", "3.0e-05", "0.1235")
    assert wc.table(["a", "b"], [["1", "2"]]) == "| a | b |\n| --- | --- |\n| 1 | 2 |"

