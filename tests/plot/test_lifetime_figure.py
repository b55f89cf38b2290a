"""plot.figures.lifetime_memoization: draws what it is given (docs/rounds.md's figure; numbers from the caller)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from sufficientdp.plot.figures import lifetime_memoization  # noqa: E402


def test_lifetime_figure_draws_the_given_curves() -> None:
    exact = {"T": [1, 2, 3], "memoized": [0.05, 0.07, 0.08], "fresh": [0.05, 0.09, 0.13], "memo_release": 0.1,
             "q": "5/16", "q1": "1/4", "q2": "1/8", "epsilon_label": "ln 3/2", "title": "exact"}
    proven = {"T": [1, 10], "fresh_delta": [1e-6, 0.05], "memoized_lifetime_delta": 0.009, "q_release": 0.26,
              "q_permanent": 0.2, "q_instant": 0.1, "epsilon": 1.0, "population": 1000, "bits": 4}
    fig = lifetime_memoization(exact, proven)
    left, right = fig.axes
    assert [list(line.get_ydata()) for line in left.lines[:2]] == [exact["fresh"], exact["memoized"]]
    assert list(right.lines[0].get_ydata()) == proven["fresh_delta"]
    assert right.get_yscale() == "log" and "N = 1000, L = 4" in right.get_title()
    assert "ε = ln 3/2" in left.get_ylabel()
