"""sufficientdp.report.paper_figures (issue 12; `make figures` runs it through scripts/make_figures.py): each figure
function draws a non-empty figure at small sizes, the quick run writes every file, and the new plot functions (the
R(S) distribution, sd against N) export non-empty SVG. Not a re-render of docs/figures/ (that is `make figures`, a
few minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from sufficientdp import plot  # noqa: E402
from sufficientdp.ratio.sampling import sample_privacy_ratio  # noqa: E402
from sufficientdp.report import paper_figures as mf  # noqa: E402


def _non_empty(fig: object) -> str:
    svg = plot.to_svg(fig)  # type: ignore[arg-type]
    assert svg.startswith("<svg") and "<path" in svg
    axes = [ax for ax in fig.axes if ax.axison]  # type: ignore[attr-defined]
    assert axes and all(ax.get_xlabel() for ax in axes)
    assert all(ax.lines or ax.patches for ax in axes)
    return svg


@pytest.mark.slow
def test_ratio_distribution_six_panels_with_threshold() -> None:
    fig, numbers = mf.fig_ratio_distribution(samples=2000)
    _non_empty(fig)
    assert len([ax for ax in fig.axes if ax.axison]) == 6
    rows = numbers["rows"]
    assert [(r["lambda"], r["N"]) for r in rows][:3] == [("2", 1000), ("2", 3000), ("2", 5000)]
    # the misprinted q (ERRATA 1) is drawn beside the (3.12) q, and its tail is far larger
    five = rows[2]
    assert abs(five["q"] - 0.1964) < 5e-4 and five["q_printed"] == "0.1778"
    assert five["p_at_printed_q"] > 3 * five["p"]
    for ax in fig.axes[:6]:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any(lab.startswith("λ = e^ε") for lab in labels)


@pytest.mark.slow
def test_sigma_vs_q_section_4() -> None:
    fig, n = mf.fig_sigma_vs_q()
    _non_empty(fig)
    assert abs(n["local_q"] - 0.465) < 5e-4 and abs(n["q_sufficient"] - 0.1964) < 5e-4
    assert 10 < n["gain"] < 12 < n["gain_at_printed_q"]


@pytest.mark.slow
def test_noise_vs_k_section_6_1_corrected() -> None:
    fig, n = mf.fig_noise_vs_k(ks=(1, 10))
    _non_empty(fig)
    q = {(r["method"][:5], r["reports"]): r["q"] for r in n["rows"]}
    assert abs(q[("paper", 1)] - 0.351) < 5e-4
    assert q[("paper", 10)] < q[("paper", 1)] < q[("corre", 10)]  # the paper's q falls; the corrected q rises


@pytest.mark.slow
def test_sigma_vs_n_small() -> None:
    fig, n = mf.fig_sigma_vs_n(populations=(100, 1000), proven_populations=(), bits=2)
    _non_empty(fig)
    assert {r["method"] for r in n["rows"]} == {"local DP", "paper's heuristic (mean + 3 sd, homogeneous)"}


@pytest.mark.slow
def test_write_all_quick_writes_every_figure_and_the_readme(tmp_path: Path) -> None:
    written = mf.write_all(tmp_path / "figs", quick=True)
    names = ("ratio_distribution_3_3", "sigma_vs_q_4", "noise_vs_k_6_1", "sigma_vs_n")
    assert [p.name for p in written] == [f"{n}.{e}" for n in names for e in ("png", "svg")] + ["README.md"]
    assert all(p.stat().st_size > 0 for p in written)
    readme = written[-1].read_text(encoding="utf-8")
    assert "5,000 draws per curve" in readme and "| 0.1778 |" in readme  # the quick size; the printed misprint


@pytest.mark.slow
def test_ratio_distribution_single_panel() -> None:
    s = sample_privacy_ratio(q=0.2, bits=3, population=200, samples=3000, rng=5)
    fig = plot.ratio_distribution(s, epsilon=1.0, note="a note")
    _non_empty(fig)
    ax = fig.axes[0]
    assert "homogeneous, estimate" in ax.get_title()
    assert any(f"{s.fraction_above(1.0):.3g}" in t.get_text() for t in ax.get_legend().get_texts())


@pytest.mark.slow
def test_sigma_vs_population_log_log() -> None:
    rows = [{"method": "local", "population": n, "sigma_per_sqrt_n": 5.0} for n in (100, 1000)]
    fig = plot.sigma_vs_population(rows)
    _non_empty(fig)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"
