"""``docs/k_randomization.md``'s generator (:mod:`sufficientdp.report.k_randomization`, command line
``scripts/k_randomization_report.py``): one table of the finding at small sizes (the document itself takes one to
two minutes)."""

from __future__ import annotations

import pytest

from sufficientdp.calibration.paper import paper_eq_6_3_q
from sufficientdp.report import k_randomization as kr


@pytest.mark.slow
def test_finding_table_has_one_row_per_k_with_the_6_3_q() -> None:
    lines = kr.finding(5, 1000, [2, 4], 2000, 7)
    assert lines[0] == "### L = 5, N = 1,000, lambda = e^2"
    rows = [ln for ln in lines if ln.startswith("| 2 |") or ln.startswith("| 4 |")]
    assert len(rows) == 2
    for row, k in zip(rows, (2, 4)):
        assert row.split(" | ")[1] == f"{paper_eq_6_3_q(bits=5, population=1000, epsilon=2.0, reports=k):.4f}"
