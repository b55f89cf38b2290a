"""The figures: each function calls core functions for its numbers (or takes them already computed) and draws.

An adapter (DESIGN.md): no math here. Every function returns a :class:`matplotlib.figure.Figure` drawn on the
Agg backend (nothing is shown or registered with pyplot), with labelled axes and units, a colour-blind-safe
palette (Okabe-Ito), log scales for eta and the target as a line.

Functions that need expensive numbers (``eta_vs_q``, ``methods_comparison``, ``noise_vs_k``) accept them
precomputed, so that a report computes each number once and shows the same number in its text, its JSON and
its figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .._validation import check_confidence_level
from ._style import MARKERS, PALETTE, STYLES, TARGET_COLOUR, new_figure

__all__ = ["DEFAULT_SIGMA_GRID", "eta_vs_q", "lifetime_memoization", "methods_comparison", "noise_vs_k",
           "power_vs_level",
           "ratio_distribution", "ratio_distribution_grid", "release_estimates", "sigma_vs_population",
           "sigma_vs_q"]

#: q values of the sd(d_hat) curve (cheap: a closed form per point).
DEFAULT_SIGMA_GRID: tuple[float, ...] = tuple(float(x) for x in np.linspace(0.01, 0.48, 95))
#: Levels of the attacker-power figure (log-spaced from 1e-4 to 0.5).
DEFAULT_LEVELS: tuple[float, ...] = tuple(float(x) for x in np.geomspace(1e-4, 0.5, 41))

_SCOPE_SHORT = {"all-collections": "all collections", "homogeneous": "homogeneous only", "per-report": "per report"}


def sigma_vs_q(*, reports: int = 1, qs: Sequence[float] | None = None,
               marks: Mapping[str, float] | None = None, chosen: str | None = None) -> Figure:
    """``sd(d_hat) / sqrt(N)`` of a per-bit count against the flip probability q
    (:func:`sufficientdp.parameters.sigma_per_sqrt_n`), with each method's q marked.

    Args:
        reports: k reports per person.
        qs: the q values of the curve (default :data:`DEFAULT_SIGMA_GRID`).
        marks: label -> q, drawn as points on the curve (e.g. each calibration method's q).
        chosen: the label drawn emphasised.

    Examples:
        >>> fig = sigma_vs_q(marks={"local": 0.45})
        >>> fig.axes[0].get_xlabel()
        'flip probability q'
    """
    from ..parameters import sigma_per_sqrt_n

    grid = list(DEFAULT_SIGMA_GRID if qs is None else qs)
    fig, ax = new_figure()
    ax.plot(grid, [sigma_per_sqrt_n(q, reports) for q in grid], color=PALETTE[0], lw=2,
            label=f"sd(d̂)/√N, k = {reports}")
    for i, (label, q) in enumerate((marks or {}).items()):
        big = label == chosen
        ax.plot([q], [sigma_per_sqrt_n(q, reports)], linestyle="none", marker=MARKERS[(i + 1) % len(MARKERS)],
                ms=11 if big else 7, color=PALETTE[(i + 1) % len(PALETTE)], mec="black" if big else "none",
                label=f"{label}: q = {q:.4g}" + (" (chosen)" if big else ""))
    ax.set_yscale("log")
    ax.set_xlabel("flip probability q")
    ax.set_ylabel("sd(d̂)/√N  (people per √people)")
    ax.set_title("Accuracy of a per-bit count against the noise")
    ax.legend(fontsize="small")
    return fig


def eta_vs_q(*, bits: int, population: int, epsilon: float, reports: int = 1,
             qs: Sequence[float] | None = None, etas: Sequence[float | None] | None = None,
             target: float | None = None, chosen_q: float | None = None, label: str = "proven bound",
             extra: Mapping[str, tuple[Sequence[float], Sequence[float | None]]] | None = None) -> Figure:
    """``eta = P[R > e^epsilon]`` against q, log scale, with the target as a line.

    Without ``etas``, each point is :func:`sufficientdp.ratio.proven.proven_tail` at that q (about 0.5 s each at
    L = 5: keep ``qs`` short).

    Args:
        bits, population, epsilon, reports: the configuration.
        qs: the q values (default five values from 0.1 to 0.45).
        etas: eta at each q, precomputed (None entries are skipped; zero is drawn at the bottom of the axis).
        target: the target eta, drawn as a horizontal line.
        chosen_q: the chosen q, drawn as a vertical line.
        label: the legend of the main series.
        extra: other series, label -> (qs, etas) (e.g. the homogeneous bound).
    """
    grid = list(np.linspace(0.1, 0.45, 5) if qs is None else qs)
    if etas is None:
        from ..ratio.proven import proven_tail

        etas = [proven_tail(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports).eta
                for q in grid]
    fig, ax = new_figure()
    series = {label: (grid, list(etas)), **dict(extra or {})}
    floor = None
    for i, (name, (xs, ys)) in enumerate(series.items()):
        pts = [(x, y) for x, y in zip(xs, ys) if y is not None and y > 0]
        if pts:
            lo = min(y for _, y in pts)
            floor = lo if floor is None else min(floor, lo)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=PALETTE[i], linestyle=STYLES[i],
                    marker=MARKERS[i], lw=2, label=name)
    if target is not None:
        ax.axhline(target, color=TARGET_COLOUR, lw=1.2, linestyle="--", label=f"target η = {target:g}")
    if chosen_q is not None:
        ax.axvline(chosen_q, color=PALETTE[2], lw=1.2, linestyle=":", label=f"chosen q = {chosen_q:.4g}")
    ax.set_yscale("log")
    ax.set_xlabel("flip probability q")
    ax.set_ylabel("η = P[R > e^ε]  (probability)")
    ax.set_title(f"Privacy tail against q (L = {bits}, N = {population}, k = {reports}, ε = {epsilon:g})")
    ax.legend(fontsize="small")
    return fig


def methods_comparison(rows: Sequence[Mapping[str, Any]] | None = None, *, bits: int | None = None,
                       population: int | None = None, epsilon: float | None = None, reports: int = 1,
                       eta: float | None = None, methods: Sequence[str] = ("proven", "homogeneous", "local",
                                                                            "paper-sigma"),
                       chosen: str | None = None) -> Figure:
    """Each calibration method's ``sd(d_hat)/sqrt(N)`` as a bar, annotated with its q, scope and kind.

    Args:
        rows: one mapping per method with ``method``, ``q``, ``sigma_per_sqrt_n``, ``scope``, ``kind`` (e.g.
            ``Calibration.to_dict()``). Without rows, :func:`sufficientdp.calibration.calibrate` is called for
            each of ``methods`` with ``bits``, ``population``, ``epsilon``, ``reports``, ``eta``.
        chosen: the method drawn emphasised.
    """
    if rows is None:
        from ..calibration import calibrate

        if bits is None or population is None or epsilon is None:
            raise TypeError("methods_comparison needs rows, or bits, population and epsilon")
        rows = [calibrate(bits=bits, population=population, epsilon=epsilon, reports=reports, eta=eta,
                          method=m).to_dict() for m in methods]
    fig, ax = new_figure(6.4, 0.6 + 0.55 * max(1, len(rows)))
    names = [str(r["method"]) for r in rows]
    values = [float(r["sigma_per_sqrt_n"]) for r in rows]
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(rows))]
    bars = ax.barh(names, values, color=colours,
                   edgecolor=["black" if n == chosen else "none" for n in names],
                   linewidth=[2.0 if n == chosen else 0.0 for n in names])
    for bar, r in zip(bars, rows):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                f"  q = {float(r['q']):.4g}; {_SCOPE_SHORT.get(str(r['scope']), r['scope'])}, {r['kind']}",
                va="center", fontsize="small")
    ax.invert_yaxis()
    ax.set_xlim(0, max(values) * 1.9 if values else 1)
    ax.set_xlabel("sd(d̂)/√N  (people per √people; smaller is more accurate)")
    ax.set_title("Noise each method needs for the same target")
    return fig


def power_vs_level(*, epsilon: float, eta: float | None = None, levels: Sequence[float] | None = None,
                   tables: Sequence[Any] | None = None) -> Figure:
    """The most powerful test an attacker can run against one person, against its level (seed 004 §6).

    Curves from :func:`sufficientdp.semantics.frequentist.power_table`: the (epsilon, 0) bound (what pure
    epsilon-DP would allow) and, with ``eta``, the (epsilon, eta) bound (a tail bound ``P[R > e^eps] <= eta``
    implies ``delta(eps) <= eta``). The diagonal ``power = level`` is an attacker who learns nothing.

    Args:
        epsilon: the privacy level.
        eta: the tail bound (optional).
        levels: the test levels (default :data:`DEFAULT_LEVELS`).
        tables: precomputed :class:`~sufficientdp.semantics.frequentist.PowerTable` objects (or their
            ``to_dict()``), drawn instead.
    """
    xs = list(DEFAULT_LEVELS if levels is None else levels)
    if tables is None:
        from ..semantics.frequentist import power_table

        tables = [power_table(xs, epsilon=epsilon)]
        if eta is not None:
            tables.append(power_table(xs, epsilon=epsilon, delta=eta))
    labels = {"power_pure_dp_bound": f"(ε = {epsilon:g}, δ = 0) bound", "power_rr": "randomized response",
              "power_approx_dp_bound": f"(ε = {epsilon:g}, δ = η{'' if eta is None else f' = {eta:g}'}) bound"}
    fig, ax = new_figure()
    i = 0
    for t in tables:
        d = t.to_dict() if hasattr(t, "to_dict") else dict(t)
        for name in d:
            if name in ("levels", "kind", "parameters", "notes") or name == "power_rr":
                continue
            ax.plot(d["levels"], d[name], color=PALETTE[i], linestyle=STYLES[i], lw=2, label=labels.get(name, name))
            i += 1
    ax.plot(xs, xs, color="grey", lw=1, linestyle=":", label="no information (power = level)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("test level: false-alarm probability")
    ax.set_ylabel("attacker's power: detection probability")
    ax.set_title("Best test of 'this person's record is r0' against 'r1'")
    ax.legend(fontsize="small")
    return fig


def noise_vs_k(rows: Sequence[Mapping[str, Any]] | None = None, *, bits: int | None = None,
               population: int | None = None, epsilon: float | None = None,
               ks: Sequence[int] = (1, 2, 3, 4, 6, 8), methods: Sequence[str] = ("local", "paper-sigma"),
               log_k: bool = False, title: str | None = None) -> Figure:
    """``sd(d_hat)/sqrt(N)`` against k, the reports per person, at the same total epsilon (corrected seed 001 §6).

    Args:
        rows: mappings with ``method``, ``reports`` (k) and ``sigma_per_sqrt_n`` (e.g. ``Calibration.to_dict()``).
            Without rows, :func:`sufficientdp.calibration.calibrate` is called for each method and k.
        ks, methods: the grid when computing.
        log_k: draw k on a log axis (for k up to hundreds).
        title: the title (default "Noise against the number of reports per person").
    """
    if rows is None:
        from ..calibration import calibrate

        if bits is None or population is None or epsilon is None:
            raise TypeError("noise_vs_k needs rows, or bits, population and epsilon")
        rows = [calibrate(bits=bits, population=population, epsilon=epsilon, reports=k, method=m).to_dict()
                for m in methods for k in ks]
    fig, ax = new_figure()
    _sigma_lines(ax, rows, "reports", ordered=False)
    ax.set_yscale("log")
    if log_k:
        ax.set_xscale("log")
    ax.set_xlabel("k, reports per person (same total ε)")
    ax.set_ylabel("sd(d̂)/√N  (people per √people)")
    ax.set_title(title or "Noise against the number of reports per person")
    ax.legend(fontsize="small")
    return fig


def _sigma_lines(ax: Any, rows: Sequence[Mapping[str, Any]], x_key: str, *, ordered: bool) -> None:
    """One line of ``sigma_per_sqrt_n`` against ``x_key`` per method, in the order methods first appear."""
    order: list[str] = []
    for r in rows:
        if str(r["method"]) not in order:
            order.append(str(r["method"]))
    for i, m in enumerate(order):
        pts = [(int(r[x_key]), float(r["sigma_per_sqrt_n"])) for r in rows if str(r["method"]) == m]
        if ordered:
            pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=PALETTE[i], linestyle=STYLES[i],
                marker=MARKERS[i], lw=2, label=m)


def release_estimates(records: Sequence[Mapping[str, Any]], *, confidence_level: float | None = None,
                      labels: Sequence[str] | None = None, level: float | None = None) -> Figure:
    """Per-bit estimates of a release (people with the bit set) with their confidence intervals as error bars.

    Args:
        records: one mapping per bit with ``estimate``, ``lower``, ``upper`` (e.g.
            ``sufficientdp.collection.campaign.estimate_release(...).estimates``).
        confidence_level: the intervals' confidence level (for the legend; default 0.95).
        labels: the bits' names (default ``bit 0``, ``bit 1``, ...).
        level: the former name of ``confidence_level`` (deprecated; give one of the two).
    """
    level = check_confidence_level(confidence_level, level)
    names = list(labels) if labels is not None else [f"bit {r.get('bit', i)}" for i, r in enumerate(records)]
    est = [float(r["estimate"]) for r in records]
    fig, ax = new_figure(6.4, max(2.4, 0.9 + 0.35 * len(records)))
    # The interval as a segment (it is clipped at zero, so an estimate below zero can lie outside it).
    ax.hlines(names, [float(r["lower"]) for r in records], [float(r["upper"]) for r in records],
              color=PALETTE[1], lw=2, label=f"{level:.0%} interval")
    ax.plot(est, names, "o", color=PALETTE[0], label="estimate")
    ax.axvline(0.0, color="grey", lw=1, linestyle=":")
    ax.invert_yaxis()
    ax.set_xlabel("people with the bit set (estimated count)")
    ax.set_title("Per-bit estimates of the release")
    ax.legend(fontsize="small")
    return fig


def lifetime_memoization(exact: Mapping[str, Any], proven: Mapping[str, Any]) -> Figure:
    """Lifetime risk against the number of releases T, with and without memoization (docs/rounds.md), two panels.

    Args:
        exact: the exact δ_T(ε) of a tiny case, computed by the caller: ``T`` (list), ``memoized`` and ``fresh``
            (δ_T per T), ``memo_release`` (δ of the memo release), ``q1``, ``q2``, ``q`` (the flips, for the
            legend), ``epsilon_label`` (ε as text) and ``title``.
        proven: the proven all-collections bounds: ``T``, ``fresh_delta`` (δ_T of T fresh releases),
            ``memoized_lifetime_delta``, ``q_release``, ``q_permanent``, ``q_instant``, ``epsilon``, ``population``
            and ``bits``.
    """
    fig = Figure(figsize=(10.0, 4.0))
    left, right = fig.subplots(1, 2)
    left.plot(exact["T"], exact["fresh"], color=PALETTE[1], marker="s",
              label=f"fresh every release (q = {exact['q']})")
    left.plot(exact["T"], exact["memoized"], color=PALETTE[0], marker="o",
              label=f"memoized (q1 = {exact['q1']}, q2 = {exact['q2']})")
    left.axhline(exact["memo_release"], color=PALETTE[0], ls="--", label="bound: δ of the memo release (q1)")
    left.set(xlabel="releases T", ylabel=f"exact δ_T(ε), ε = {exact['epsilon_label']}", title=exact["title"])
    left.legend(fontsize=8)
    right.plot(proven["T"], proven["fresh_delta"], color=PALETTE[1], marker="s",
               label=f"fresh every release (q = {proven['q_release']:.3g})")
    right.axhline(proven["memoized_lifetime_delta"], color=PALETTE[0], ls="--",
                  label=f"memoized lifetime (q1 = {proven['q_permanent']}, q2 = {proven['q_instant']})")
    right.set(xscale="log", yscale="log", xlabel="releases T",
              ylabel=f"proven bound on δ_T(ε), ε = {proven['epsilon']:g}",
              title=f"Proven, all collections: N = {proven['population']}, L = {proven['bits']}")
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


def sigma_vs_population(rows: Sequence[Mapping[str, Any]], *, title: str | None = None) -> Figure:
    """``sd(d_hat)/sqrt(N)`` against the crowd size N, one line per method (log-log).

    Args:
        rows: mappings with ``method``, ``population`` (N) and ``sigma_per_sqrt_n`` (e.g.
            ``calibrate(population=N, method=m).to_dict()``), computed by the caller.
        title: the title.
    """
    fig, ax = new_figure()
    _sigma_lines(ax, rows, "population", ordered=True)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("N, people in the smallest crowd a release covers")
    ax.set_ylabel("sd(d̂)/√N  (people per √people)")
    ax.set_title(title or "Noise against the crowd size")
    ax.legend(fontsize="small")
    return fig


def _draw_ratio(ax: Any, samples: Mapping[str, Any], *, epsilon: float, title: str | None, note: str | None,
                bins: int) -> None:
    """One panel: histograms of R(S) draws (:class:`sufficientdp.ratio.sampling.RatioSample`), the threshold
    ``e^epsilon`` as a line and the region above it shaded, with each sample's estimated tail in the legend."""
    threshold = float(np.exp(epsilon))
    # the drawn range: 0 to past the threshold and the 99.9% quantile of every sample
    right = max([threshold * 1.3] + [float(np.exp(s.quantile(0.999))) for s in samples.values()])
    for i, (label, s) in enumerate(samples.items()):
        above = s.fraction_above(epsilon)
        ax.hist(np.minimum(s.ratios, right), bins=bins, range=(0.0, right), density=True,
                histtype="stepfilled" if i == 0 else "step", alpha=0.55 if i == 0 else 1.0,
                color=PALETTE[i % len(PALETTE)], linestyle=STYLES[i % len(STYLES)], lw=1.5,
                label=f"{label}: P[R > λ] ≈ {above:.3g}")
    ax.axvspan(threshold, right, color=PALETTE[1], alpha=0.12, lw=0)
    ax.axvline(threshold, color=TARGET_COLOUR, lw=1.2, linestyle="--", label=f"λ = e^ε = {threshold:.4g}")
    ax.set_xlim(0.0, right)
    ax.set_xlabel("privacy ratio R(S)  (dimensionless)")
    ax.set_ylabel("density")
    if title:
        ax.set_title(title, fontsize="medium")
    if note:
        ax.text(0.98, 0.55, note, transform=ax.transAxes, ha="right", va="top", fontsize="x-small",
                bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.8, "lw": 0.5})
    ax.legend(fontsize="x-small", loc="upper right")


def ratio_distribution(samples: Any, *, epsilon: float, title: str | None = None, note: str | None = None,
                       bins: int = 80) -> Figure:
    """The distribution of the privacy ratio R(S) with the threshold ``lambda = e^epsilon`` and the tail shaded.

    Args:
        samples: a :class:`sufficientdp.ratio.sampling.RatioSample`, or a mapping label -> RatioSample (several
            distributions on one panel, e.g. the paper's q and the corrected q), drawn by
            :func:`sufficientdp.ratio.sampling.sample_privacy_ratio`.
        epsilon: the privacy level (the threshold is ``e^epsilon``).
        title, note: the panel's title and a short note written on it.
        bins: histogram bins.

    Examples:
        >>> from sufficientdp.ratio.sampling import sample_privacy_ratio
        >>> s = sample_privacy_ratio(q=0.25, bits=5, population=1000, samples=2000, rng=1)
        >>> ratio_distribution(s, epsilon=0.693).axes[0].get_xlabel()
        'privacy ratio R(S)  (dimensionless)'
    """
    fig, ax = new_figure()
    _draw_ratio(ax, _as_samples(samples), epsilon=epsilon, title=title or _ratio_title(samples), note=note,
                bins=bins)
    return fig


def ratio_distribution_grid(panels: Sequence[Mapping[str, Any]], *, ncols: int = 3, title: str | None = None,
                            bins: int = 80) -> Figure:
    """Several :func:`ratio_distribution` panels on one figure (seed 001 §3.3 has six).

    Args:
        panels: one mapping per panel with ``samples`` (a RatioSample or label -> RatioSample), ``epsilon`` and
            optionally ``title`` and ``note``.
        ncols: panels per row.
        title: the figure's title.
    """
    from matplotlib.figure import Figure as _Figure

    nrows = max(1, -(-len(panels) // ncols))
    fig = _Figure(figsize=(4.6 * ncols, 3.6 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(panels):
            ax.set_axis_off()
            continue
        p = panels[k]
        ax.grid(True, which="major", alpha=0.3)
        _draw_ratio(ax, _as_samples(p["samples"]), epsilon=float(p["epsilon"]),
                    title=p.get("title") or _ratio_title(p["samples"]), note=p.get("note"), bins=bins)
    if title:
        fig.suptitle(title)
    return fig


def _as_samples(samples: Any) -> dict[str, Any]:
    if isinstance(samples, Mapping):
        return dict(samples)
    return {f"q = {samples.q:.4g}": samples}


def _ratio_title(samples: Any) -> str:
    s = next(iter(samples.values())) if isinstance(samples, Mapping) else samples
    k = f", k = {s.reports}" if s.reports != 1 else ""
    return f"R(S), L = {s.bits}, N = {s.population}{k} ({s.scope}, {s.kind})"
