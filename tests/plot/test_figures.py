"""sufficientdp.plot: each figure draws labelled axes, the marks asked for, and exports to a non-empty SVG."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from sufficientdp import plot  # noqa: E402


def _check(fig: object) -> str:
    svg = plot.to_svg(fig)  # type: ignore[arg-type]
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "<path" in svg
    ax = fig.axes[0]  # type: ignore[attr-defined]
    assert ax.get_xlabel() and ax.get_title()
    return svg


@pytest.mark.slow
def test_sigma_vs_q_marks_and_log_scale() -> None:
    fig = plot.sigma_vs_q(marks={"local": 0.45, "proven": 0.28}, chosen="proven")
    _check(fig)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert any("proven: q = 0.28 (chosen)" == t.get_text() for t in ax.get_legend().get_texts())


@pytest.mark.slow
def test_eta_vs_q_precomputed_target_line_and_zero() -> None:
    fig = plot.eta_vs_q(bits=5, population=1000, epsilon=1.0, qs=[0.2, 0.3, 0.4], etas=[0.1, 1e-5, 0.0],
                        target=1e-3, chosen_q=0.28)
    _check(fig)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "target η = 0.001" in labels


@pytest.mark.slow
def test_eta_vs_q_computes_with_the_proven_bound() -> None:
    fig = plot.eta_vs_q(bits=1, population=20, epsilon=1.0, qs=[0.2, 0.3], target=1e-2)
    _check(fig)
    xs = fig.axes[0].lines[0].get_xdata()
    assert list(xs) == [0.2, 0.3] or len(xs) <= 2  # zero etas are not drawn on the log axis


def test_methods_comparison_from_rows() -> None:
    rows = [{"method": "proven", "q": 0.27, "sigma_per_sqrt_n": 1.1, "scope": "all-collections", "kind": "bound"},
            {"method": "local", "q": 0.45, "sigma_per_sqrt_n": 5.0, "scope": "per-report", "kind": "exact"}]
    _check(plot.methods_comparison(rows, chosen="proven"))


def test_methods_comparison_needs_rows_or_configuration() -> None:
    with pytest.raises(TypeError):
        plot.methods_comparison()


@pytest.mark.slow
def test_power_vs_level_and_noise_vs_k() -> None:
    _check(plot.power_vs_level(epsilon=1.0, eta=1e-3))
    fig = plot.noise_vs_k(bits=3, population=500, epsilon=1.0, ks=(1, 2, 4))
    _check(fig)
    assert [line.get_label() for line in fig.axes[0].lines] == ["local", "paper-sigma"]


def test_release_estimates_with_an_estimate_below_its_clipped_interval() -> None:
    recs = [{"bit": 0, "estimate": -14.5, "lower": 0.0, "upper": 23.3},
            {"bit": 1, "estimate": 98.0, "lower": 74.0, "upper": 122.0}]
    fig = plot.release_estimates(recs, confidence_level=0.95)
    _check(fig)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["bit 0", "bit 1"]
