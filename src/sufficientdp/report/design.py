"""The design report: every number a reviewer needs to approve a calibration, gathered from the core, drawn by
:mod:`sufficientdp.plot` and laid out by the Jinja2 template ``templates/design.html.j2``.

An adapter: no math here. Each number is computed once (one calibration per method, a handful of proven-bound
evaluations) and the same value is shown in the page's text, its figures and its JSON (``DesignReport.numbers``,
embedded in the page as ``<script type="application/json" id="numbers">``).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from .._errors import SufficientDPError
from .._json import jsonable
from .._offload import Offloaded, Offloads, spare_core

__all__ = ["COMPARED_METHODS", "DesignReport", "design_numbers", "design_report", "format_number", "render_design",
           "render_page", "write_html"]

#: The calibration methods every design report shows (plus the chosen one when it is another).
COMPARED_METHODS = ("proven", "homogeneous", "local", "paper-sigma")
#: Multiples of the proven q at which the proven bound is evaluated for the eta-against-q figure (each costs about
#: 0.5 s at L = 5; the calibrated q itself comes with its bound).
ETA_GRID_FACTORS = (0.8, 0.9, 1.1, 1.25)
#: Reports per person in the k trade-off (cheap methods only: local DP and the paper's heuristic).
K_GRID = (1, 2, 3, 4, 6, 8)
K_METHODS = ("local", "paper-sigma")
#: Test levels and priors quoted in words in the attacker section.
ATTACK_LEVELS = (0.01, 0.05)
PRIORS = (0.01, 0.5)
LEVEL = 0.95
POWER = 0.8
#: Draws of R(S) for the distribution figure (divided by k**2 for k reports, at least 5,000; none beyond
#: RATIO_MAX_REPORTS), and the seed used when the command gives none: the page is the same on every run.
RATIO_SAMPLES = 200_000
RATIO_SEED = 20261126
RATIO_MAX_REPORTS = 16

Progress = Callable[[int, int], Any]


@dataclass(frozen=True, slots=True)
class DesignReport:
    """A rendered design report: ``numbers`` (JSON-ready), ``figures`` (name -> inline SVG) and ``html``."""

    numbers: dict[str, Any]
    figures: dict[str, str]
    html: str

    def to_dict(self) -> dict[str, Any]:
        """The numbers shown on the page (the JSON embedded in it)."""
        return self.numbers


def design_numbers(*, bits: int, population: int, epsilon: float, beta: float = 3.0, max_weight: int | None = None,
                   one_hot: bool = False, reports: int = 1, method: str = "proven", eta: float | None = None,
                   samples: int | None = None, seed: int | None = None, rounds: int = 1, command: str | None = None,
                   progress: Progress | None = None,
                   while_waiting: Callable[[dict[str, Any]], Any] | None = None) -> dict[str, Any]:
    """Every number of the design report, JSON-ready (same parameters as :func:`sufficientdp.calibrate`).

    The chosen ``method`` is calibrated first, so that a bad parameter is refused before anything else runs (only
    the homogeneous calibration's second process starts before it, and is stopped then); another method that does
    not apply (e.g. ``homogeneous`` with ``rounds > 1``) is listed with its reason. ``while_waiting(numbers)``, if
    given, is called with every number but the methods table (the entry of a row computed in the second process is
    still empty) before that row is waited for (:func:`design_report` draws the figures that do not show the
    methods meanwhile).

    Raises:
        ParameterError, CalibrationError: from the chosen method's calibration.
    """
    with Offloads() as offloads:  # a call still running when this ends (an error, an interrupt) is stopped
        return _design_numbers(bits=bits, population=population, epsilon=epsilon, beta=beta, max_weight=max_weight,
                               one_hot=one_hot, reports=reports, method=method, eta=eta, samples=samples, seed=seed,
                               rounds=rounds, command=command, progress=progress, offloads=offloads,
                               while_waiting=while_waiting)


def _design_numbers(*, bits: int, population: int, epsilon: float, beta: float, max_weight: int | None,
                    one_hot: bool, reports: int, method: str, eta: float | None, samples: int | None,
                    seed: int | None, rounds: int, command: str | None, progress: Progress | None,
                    offloads: Offloads, while_waiting: Callable[[dict[str, Any]], Any] | None) -> dict[str, Any]:
    import numpy as np

    from ..calibration import calibrate
    from ..calibration.methods import DEFAULT_ETA

    methods = [method] + [m for m in COMPARED_METHODS if m != method]
    eta_grid_n = len(ETA_GRID_FACTORS) if rounds == 1 else 0
    total = len(methods) + eta_grid_n + 4
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    common: dict[str, Any] = {"bits": bits, "population": population, "epsilon": epsilon, "beta": beta,
                              "max_weight": max_weight, "onehot": one_hot, "reports": reports, "eta": eta,
                              "rounds": rounds}
    cals: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    # The homogeneous calibration (seconds at large L; its scalar loops hold the GIL) runs in a second process
    # beside everything below and fills its row at the end: the same numbers, sooner (issue 10). It is never the
    # chosen method here; it starts before the chosen method's calibration, which refuses bad parameters (the
    # child is then stopped when the block of design_numbers ends).
    late: tuple[int, Offloaded] | None = None
    pending = (offloads.start(calibrate, {"method": "homogeneous", **common})
               if method != "homogeneous" and spare_core() else None)
    for m in methods:
        if m == "homogeneous" and pending is not None:
            late = (len(rows), pending)
            rows.append({})
            continue
        rng = np.random.default_rng(seed) if m == "mc" and seed is not None else None
        row, cal = _method_row(m, method, lambda: calibrate(method=m, rng=rng,  # noqa: B023 - called at once
                                                            samples=samples if m == "mc" else None, **common),
                               population=population, reports=reports * rounds)
        rows.append(row)
        if cal is not None:
            cals[m] = cal
        step()
    chosen = cals[method]
    target = chosen.eta_target if chosen.eta_target is not None else (eta if eta is not None else DEFAULT_ETA)

    # eta against q: the proven bound around the proven q (one round only: the bound is per release).
    eta_curve: dict[str, Any] = {"method": "proven", "target": target, "points": [], "note": ""}
    if rounds == 1 and "proven" in cals:
        eta_curve["points"] = _eta_points(cals["proven"], bits=bits, population=population, epsilon=epsilon,
                                          reports=reports, max_weight=max_weight, one_hot=one_hot, step=step)
        eta_curve["target"] = cals["proven"].eta_target
    else:
        eta_curve["note"] = ("not drawn: the proven bound per q is for one release (rounds = 1)" if rounds > 1
                             else "not drawn: the proven calibration is unavailable here")

    # The distribution of R(S) at the chosen q, homogeneous configuration (a Monte Carlo picture, not the guarantee).
    ratio: dict[str, Any] = {"note": ""}
    if rounds > 1:
        ratio["note"] = "not drawn: the distribution is that of one release (rounds = 1)"
    elif reports > RATIO_MAX_REPORTS or chosen.q >= 0.5:
        ratio["note"] = (f"not drawn: more than {RATIO_MAX_REPORTS} reports per person" if chosen.q < 0.5
                         else "not drawn: q = 1/2 sends no information")
    else:
        ratio = _ratio_numbers(chosen.q, bits=bits, population=population, epsilon=epsilon, reports=reports,
                               max_weight=max_weight, one_hot=one_hot, seed=seed)
    step()

    # Comparison with local DP, the shuffle-amplification bounds, exact shuffled RR and the paper's heuristic.
    comparison: dict[str, Any] | None = None
    if rounds == 1:
        from ..calibration.compare import compare_approaches

        delta = target if target is not None else DEFAULT_ETA
        comparison = compare_approaches(bits=bits, population=population, epsilon=epsilon, delta=delta,
                                        eta=delta, reports=reports, beta=beta, sufficient=False,
                                        exact_max_population=200).to_dict()
        comparison["rows"] = [r for r in comparison["rows"] if not r["approach"].startswith("sufficient-dp-")
                              and r["approach"] != "approximate-dp-proven"]  # (not computed here: sufficient=False)
    step()

    # What it means to an attacker (seed 004 §6, §7).
    from ..semantics.bayesian import pure_dp_posterior_bound
    from ..semantics.frequentist import power_table

    attack_levels = list(ATTACK_LEVELS)
    from ..plot.figures import DEFAULT_LEVELS

    curve_levels = list(DEFAULT_LEVELS)
    pure = power_table(attack_levels, epsilon=epsilon).to_dict()
    tail = power_table(attack_levels, epsilon=epsilon, delta=target).to_dict()
    attacker = {
        "epsilon": epsilon, "eta": target, "levels": attack_levels,
        "power_pure_dp_bound": pure["power_pure_dp_bound"], "power_tail_bound": tail["power_approx_dp_bound"],
        "posterior": [{"prior": p, "upper": pure_dp_posterior_bound(p, epsilon).upper} for p in PRIORS],
        "curves": [power_table(curve_levels, epsilon=epsilon).to_dict(),
                   power_table(curve_levels, epsilon=epsilon, delta=target).to_dict()],
    }
    step()

    # k reports per person at the same total epsilon (one round).
    k_rows = _k_rows(bits=bits, population=population, epsilon=epsilon, beta=beta, max_weight=max_weight,
                     one_hot=one_hot) if rounds == 1 else []
    step()

    inputs = {"bits": bits, "population": population, "epsilon": epsilon, "beta": beta, "max_weight": max_weight,
              "one_hot": one_hot, "reports": reports, "method": method, "eta": eta, "samples": samples,
              "seed": seed, "rounds": rounds}

    def numbers() -> dict[str, Any]:
        return dict(jsonable({
            "report": "design", "version": __version__, "command": command, "inputs": inputs, "chosen": method,
            "target_eta": target, "level": LEVEL, "power": POWER, "methods": rows, "eta_vs_q": eta_curve,
            "comparison": comparison, "attacker": attacker, "k_tradeoff": {"ks": list(K_GRID), "rows": k_rows},
            "ratio_distribution": ratio,
        }, fallback=str))

    if late is not None:
        if while_waiting is not None:
            while_waiting(numbers())
        rows[late[0]] = _method_row("homogeneous", method, late[1].result, population=population,
                                    reports=reports * rounds)[0]
        step()
    return numbers()


def _k_rows(*, bits: int, population: int, epsilon: float, beta: float, max_weight: int | None,
            one_hot: bool) -> list[dict[str, Any]]:
    """The k trade-off: q and the noise for every k of :data:`K_GRID` by the cheap methods :data:`K_METHODS`."""
    from ..calibration import calibrate

    rows: list[dict[str, Any]] = []
    for m in K_METHODS:
        for k in K_GRID:
            c = calibrate(bits=bits, population=population, epsilon=epsilon, beta=beta, max_weight=max_weight,
                          onehot=one_hot, reports=k, method=m)
            rows.append({"method": m, "reports": k, "q": c.q, "sigma_per_sqrt_n": c.sigma_per_sqrt_n})
    return rows


def _method_row(m: str, chosen: str, calibrated: Callable[[], Any], *, population: int,
                reports: int) -> tuple[dict[str, Any], Any]:
    """The methods table's row of ``m`` and its calibration (None when ``m`` is not available here: the row says
    why); the chosen method's error is raised."""
    from ..estimation.planning import accuracy

    try:
        cal = calibrated()
    except SufficientDPError as exc:
        if m == chosen:
            raise
        return {"method": m, "available": False, "chosen": False, "reason": str(exc)}, None
    d = cal.to_dict()
    d["available"] = True
    d["chosen"] = m == chosen
    d["accuracy"] = accuracy(cal.q, population=population, reports=reports, confidence_level=LEVEL,
                             power=POWER).to_dict() if cal.q < 0.5 else None
    return d, cal


def _eta_points(cal: Any, *, bits: int, population: int, epsilon: float, reports: int, max_weight: int | None,
                one_hot: bool, step: Callable[[], None]) -> list[dict[str, Any]]:
    """The proven bound at the calibrated q and at ``ETA_GRID_FACTORS`` times it (one ``step()`` per factor)."""
    from ..ratio.proven import Domain, proven_tail

    dom = (Domain(bits=bits, kind="onehot") if one_hot else Domain.from_max_weight(bits, max_weight))
    qp = cal.q
    pts = [{"q": qp, "eta": cal.eta_at_q, "kind": cal.kind, "calibrated": True}]
    # the auxiliary e' of the nearest q evaluated seeds a local search (2-3x faster), but only from a bound that is
    # not near-trivial: from q = 0.9 qp (eta 0.96) the search at 1.1 qp took 3.6 s instead of 2.3 s and at 1.25 qp
    # ended 10x looser (L = 40, N = 1e7)
    hint: float | None = None
    for f in sorted(ETA_GRID_FACTORS, key=lambda x: abs(x - 1.0)):
        qx = qp * f
        if 0.0 < qx < 0.5:
            r = proven_tail(q=qx, bits=bits, population=population, epsilon=epsilon, reports=reports, domain=dom,
                            epsilon_prime_hint=hint)
            if r.eta < 0.5:
                hint = r.details.get("epsilon_prime", hint)
            pts.append({"q": qx, "eta": r.eta, "kind": r.kind, "calibrated": False})
        step()
    return sorted(pts, key=lambda p: p["q"])


def _ratio_sample(r: Mapping[str, Any]) -> Any:
    """The draws behind ``numbers["ratio_distribution"]`` (seeded: the same draws for the numbers and the figure,
    drawn once: :func:`_seeded_ratio_sample` keeps the last one)."""
    return _seeded_ratio_sample(float(r["q"]), int(r["bits"]), int(r["population"]), int(r["reports"]),
                                int(r["outlier_bits"]), int(r["samples"]), int(r["seed"]))


@functools.lru_cache(maxsize=1)
def _seeded_ratio_sample(q: float, bits: int, population: int, reports: int, outlier_bits: int, samples: int,
                         seed: int) -> Any:
    """:func:`~sufficientdp.ratio.sampling.sample_privacy_ratio` with an integer seed (a pure function of its
    arguments, so the figure reuses the numbers' draws: 1.3 s of a report at L = 40, N = 10^7)."""
    from ..ratio.sampling import sample_privacy_ratio

    return sample_privacy_ratio(q=q, bits=bits, population=population, reports=reports, outlier_bits=outlier_bits,
                                samples=samples, rng=seed)


def _ratio_numbers(q: float, *, bits: int, population: int, epsilon: float, reports: int, max_weight: int | None,
                   one_hot: bool, seed: int | None) -> dict[str, Any]:
    from ..parameters import effective_bits

    # the neighbour differs in L bits, 2w with at most w set bits (seed 001 §5), 2 for one-hot
    j = min(bits, 2 if one_hot else effective_bits(bits, max_weight))
    r: dict[str, Any] = {"q": q, "bits": bits, "population": population, "reports": reports, "outlier_bits": j,
                         "samples": max(5000, RATIO_SAMPLES // reports**2),
                         "seed": RATIO_SEED if seed is None else seed, "epsilon": epsilon, "note": ""}
    t = _ratio_sample(r).tail(epsilon, confidence_level=LEVEL)
    r.update({"eta": t.eta, "eta_lower": t.eta_lower, "eta_upper": t.eta_upper, "kind": t.kind,
              "scope": t.scope})
    return r


def _figures(numbers: Mapping[str, Any], drawn: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every figure of ``numbers`` (name -> inline SVG, in the page's order); those in ``drawn`` (from
    :func:`_figures_without_methods` of the same numbers) are not drawn again."""
    from ..plot import methods_comparison, sigma_vs_q, to_svg

    rest = dict(drawn) if drawn is not None else _figures_without_methods(numbers)
    inp = numbers["inputs"]
    ok = [r for r in numbers["methods"] if r["available"] and r["q"] < 0.5]
    figs: dict[str, str] = {}
    fig = sigma_vs_q(reports=inp["reports"] * inp["rounds"], marks={r["method"]: r["q"] for r in ok},
                     chosen=numbers["chosen"])
    figs["sigma_vs_q"] = to_svg(fig)
    if "eta_vs_q" in rest:
        figs["eta_vs_q"] = rest.pop("eta_vs_q")
    bars = [{"method": r["method"], "q": r["q"], "sigma_per_sqrt_n": r["sigma_per_sqrt_n"], "scope": r["scope"],
             "kind": r["kind"]} for r in ok]
    if numbers["comparison"] is not None:
        bars += [{"method": r["approach"], "q": r["q"], "sigma_per_sqrt_n": r["sd_per_sqrt_n"], "scope": r["scope"],
                  "kind": r["kind"]} for r in numbers["comparison"]["rows"]
                 if r["q"] is not None and r["approach"] != "local-dp" and r["approach"] != "sufficient-dp-paper"]
    figs["methods_comparison"] = to_svg(methods_comparison(bars, chosen=numbers["chosen"]))
    figs.update(rest)
    return figs


def _figures_without_methods(numbers: Mapping[str, Any]) -> dict[str, str]:
    """The figures that do not show the methods table (drawn while its last row is computed elsewhere): eta
    against q, power against level, noise against k and the distribution of R(S), in the page's order."""
    from ..plot import eta_vs_q, noise_vs_k, power_vs_level, to_svg

    inp = numbers["inputs"]
    figs: dict[str, str] = {}
    pts = numbers["eta_vs_q"]["points"]
    if pts:
        fig = eta_vs_q(bits=inp["bits"], population=inp["population"], epsilon=inp["epsilon"],
                       reports=inp["reports"], qs=[p["q"] for p in pts], etas=[p["eta"] for p in pts],
                       target=numbers["eta_vs_q"]["target"],
                       chosen_q=next(r["q"] for r in numbers["methods"] if r.get("chosen")))
        figs["eta_vs_q"] = to_svg(fig)
    att = numbers["attacker"]
    figs["power_vs_level"] = to_svg(power_vs_level(epsilon=att["epsilon"], eta=att["eta"], tables=att["curves"]))
    if numbers["k_tradeoff"]["rows"]:
        figs["noise_vs_k"] = to_svg(noise_vs_k(numbers["k_tradeoff"]["rows"]))
    rd = numbers.get("ratio_distribution") or {}
    if rd.get("samples"):
        from ..plot import ratio_distribution

        figs["ratio_distribution"] = to_svg(ratio_distribution(
            {f"q = {rd['q']:.4g} ({numbers['chosen']})": _ratio_sample(rd)}, epsilon=rd["epsilon"],
            title=f"R(S) at the chosen q, homogeneous configuration (j = {rd['outlier_bits']}, N = "
                  f"{rd['population']}, k = {rd['reports']}; estimate)"))
    return figs


def _lookup(numbers: Any, path: str) -> Any:
    cur = numbers
    for part in path.split("."):
        cur = cur[int(part)] if isinstance(cur, list) else cur[part]
    return cur


def format_number(value: Any, fmt: str) -> str:
    """How the page writes a JSON value: ``format(value, fmt)`` for numbers (``fmt`` ending in ``%``: a fraction
    as a percentage), the text itself for strings, "-" for null."""
    if value is None:
        return "-"
    if isinstance(value, str) or isinstance(value, bool):
        return str(value)
    return format(value, fmt)


def render_design(numbers: Mapping[str, Any], figures: Mapping[str, str] | None = None) -> str:
    """The HTML page of ``numbers`` (figures drawn from them unless given)."""
    return render_page("design.html.j2", numbers, _figures(numbers) if figures is None else figures)


def render_page(template_name: str, numbers: Mapping[str, Any], figures: Mapping[str, str]) -> str:
    """Render a report template: ``n`` (the numbers), ``num(path, fmt)`` (a number of the JSON, in a
    ``span.num`` naming its path and format), ``figures`` (inline SVG) and ``numbers_json`` (for the
    ``script#numbers`` block; ``<``, ``>`` and ``&`` escaped so no string can end the script)."""
    import jinja2
    from markupsafe import Markup, escape

    env = jinja2.Environment(loader=jinja2.PackageLoader("sufficientdp.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)

    def num(path: str, fmt: str = ".4g") -> Markup:
        text = format_number(_lookup(numbers, path), fmt)
        return Markup('<span class="num" data-key="{}" data-fmt="{}">{}</span>').format(path, fmt, escape(text))

    blob = json.dumps(numbers, indent=1, allow_nan=False, sort_keys=False)
    safe_blob = blob.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    template = env.get_template(template_name)
    return template.render(n=numbers, num=num, figures={k: Markup(v) for k, v in figures.items()},
                           numbers_json=Markup(safe_blob), scope_text=SCOPE_TEXT)


SCOPE_TEXT = {
    "all-collections": "every pair of neighbouring collections (whatever everyone else holds)",
    "homogeneous": "the paper's homogeneous configuration only (other collections can be worse)",
    "per-report": "each report on its own (local DP), hence every collection",
}


def design_report(*, progress: Progress | None = None, **kwargs: Any) -> DesignReport:
    """Compute the numbers (:func:`design_numbers`, same keyword arguments), draw the figures, render the page.

    The figures that do not show the methods table are drawn while its last row (the homogeneous calibration, in
    a second process) is still computed: the same numbers, so the same figures."""
    drawn: list[dict[str, str]] = []
    numbers = design_numbers(progress=progress, while_waiting=lambda partial: drawn.append(
        _figures_without_methods(partial)), **kwargs)
    figures = _figures(numbers, drawn[0] if drawn else None)
    return DesignReport(numbers=numbers, figures=figures, html=render_design(numbers, figures))


def write_html(path: str | os.PathLike[str], html: str) -> Path:
    """Write ``html`` to ``path`` atomically (a temporary file in the same folder, then a rename)."""
    from ..io import _atomic_target

    p = Path(path)
    if p.is_dir():
        raise SufficientDPError(f"--output {str(path)!r} is a directory; give a file name such as report.html")
    fd, tmp = _atomic_target(p)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(html)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return p
