"""Benchmark of the all-collections bound (sufficientdp.ratio.proven) against the homogeneous bound it replaced.

The baseline, measured in the same run, is the previous default: the rigorous homogeneous tail, worst over outlier
weights j and both directions (``privacy_tail(method="homogeneous")``), which covers one configuration only. For each
row: time of one eta evaluation by each, the ratio of times, and the two values (the proven one is larger because
it covers every pair of collections). Then calibrations: L = 5 by both (the interactive case), L = 40 at N = 1e7 and
a weight <= 2 domain by the proven bound.

Weight domains have no homogeneous baseline here (the homogeneous bound has no weight-domain form); their rows
show the proven bound alone, and one weight-domain calibration.

Targets (issue 9): about 1 s per eta evaluation at N = 1e7 (see docs/benchmarks.md for where it stands). Usage:
``.venv/bin/python benchmarks/bench_proven.py``.

The exact homogeneous calibration (issue 10: at most 5 s at L = 5, N = 1000) has its own section,
:func:`exact_calibration` (``.venv/bin/python benchmarks/bench_proven.py --exact`` runs only that, ~1 min): the
same run's homogeneous calibration is the baseline, and the previous search (``scan_smallest``: grid + 12
bisections, same per-q check) is timed beside the current one (``bracket_smallest``).
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_seconds  # noqa: E402

from sufficientdp import calibrate  # noqa: E402
from sufficientdp.calibration.search import scan_smallest  # noqa: E402
from sufficientdp.parameters import local_q  # noqa: E402
from sufficientdp.ratio.analysis import privacy_tail  # noqa: E402
from sufficientdp.ratio.proven import Domain, proven_tail  # noqa: E402

ROWS = [  # (L, N, epsilon, q, domain): q near the proven calibration at eta = 1e-3
    (5, 1000, math.log(2.0), 0.3045, "all"),
    (16, 100_000, 1.0, 0.3314, "all"),
    (40, 10_000_000, 2.0, 0.3756, "all"),
    (64, 100_000, 1.0, 0.0164, "onehot"),
    (16, 100_000, 1.0, 0.1093, "weight"),  # weight <= 2
]
MAX_WEIGHT = 2  # of the "weight" rows


def main() -> str:
    lines = [
        "## All-collections bound (`proven`) against the homogeneous bound (`homogeneous`, the old default)",
        "",
        "One eta evaluation each, best of 2; the baseline covers only the paper's configuration, the proven bound "
        "every pair of collections (so its value is larger).",
        "",
        "| L | N | epsilon | q | domain | proven s | homogeneous s | time ratio | eta proven | eta homogeneous |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for bits, n, eps, q, dom in ROWS:
        domain = Domain(bits=bits, kind=dom, max_weight=MAX_WEIGHT if dom == "weight" else None)
        out: dict[str, float] = {}

        def run_proven() -> None:
            out["p"] = proven_tail(q=q, bits=bits, population=n, epsilon=eps, domain=domain).eta  # noqa: B023

        def run_homog() -> None:
            out["h"] = privacy_tail(q=q, bits=bits, population=n, epsilon=eps,  # noqa: B023
                                  method="homogeneous").eta

        t_p = best_seconds(run_proven, 2)
        if dom == "all":
            t_h = best_seconds(run_homog, 2)
            h_text, ratio, eta_h = f"{t_h:.2f}", f"{t_p / t_h:.2f}", f"{out['h']:.3g}"
        else:
            h_text, ratio, eta_h = "-", "-", f"- (no {dom} homogeneous bound)"
        lines.append(f"| {bits} | {n:.0e} | {eps:.4g} | {q} | {dom} | {t_p:.2f} | {h_text} | {ratio} | "
                     f"{out['p']:.3g} | {eta_h} |")
    lines += ["", "Calibrations, eta = 1e-3 (one run each; the homogeneous one is the baseline):", "",
              "| L | max weight | N | epsilon | method | q | sd/sqrt(N) | seconds |",
              "|---|---|---|---|---|---|---|---|"]
    for bits, weight, n, eps, methods in ((5, None, 1000, math.log(2.0), ("homogeneous", "proven")),
                                          (40, None, 10_000_000, 2.0, ("proven",)),
                                          (16, MAX_WEIGHT, 100_000, 1.0, ("proven",))):
        for method in methods:
            res: dict[str, float] = {}

            def run_cal() -> None:
                c = calibrate(bits=bits, population=n, epsilon=eps, eta=1e-3, method=method,  # noqa: B023
                              max_weight=weight)  # noqa: B023
                res["q"], res["sd"] = c.q, c.sigma_per_sqrt_n  # noqa: B023

            t = best_seconds(run_cal, 1)
            lines.append(f"| {bits} | {weight or '-'} | {n:.0e} | {eps:.4g} | {method} | {res['q']:.4f} | "
                         f"{res['sd']:.3f} | {t:.1f} |")
    lines += ["", exact_calibration()]
    return "\n".join(lines)


def _old_exact_search(bits: int, n: int, eps: float, eta: float) -> tuple[float, int]:
    """The previous ``calibrate(method="exact")`` search: the same per-q check (every j, both directions, exact
    upper ends, j = L first, stop at the first failure) under ``scan_smallest(iterations=12)``."""
    calls = [0]

    def passes(qq: float) -> tuple[bool, float]:
        calls[0] += 1
        worst = 0.0
        for j in range(bits, 0, -1):
            for d in ("forward", "reverse"):
                r = privacy_tail(q=qq, bits=bits, population=n, epsilon=eps, method="exact", outlier_bits=j,
                                 direction=d)
                hi = r.eta_upper if r.eta_upper is not None else r.eta
                worst = max(worst, hi)
                if hi > eta:
                    return False, worst
        return True, worst

    q, _ = scan_smallest(passes, local_q(bits, eps, 1) * (1 - 1e-12), iterations=12)
    return q, calls[0]


def exact_calibration(bits: int = 5, n: int = 1000, eps: float = math.log(2.0), eta: float = 1e-3) -> str:
    """``calibrate(method="exact")`` against the same run's homogeneous calibration and the previous search."""
    res: dict[str, Any] = {}
    steps: list[int] = []

    def run(method: str) -> None:
        c = calibrate(bits=bits, population=n, epsilon=eps, eta=eta, method=method,
                      progress=lambda done, total: steps.append(done) if method == "exact" else None)
        res[method] = (c.q, c.eta_at_q)

    def run_old() -> None:
        res["old"] = _old_exact_search(bits, n, eps, eta)

    t_h = best_seconds(lambda: run("homogeneous"), 1)
    t_e = best_seconds(lambda: run("exact"), 1)
    t_o = best_seconds(run_old, 1)
    q_o, calls_o = res["old"]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return "\n".join([
        f"Exact homogeneous calibration, L = {bits}, N = {n}, epsilon = {eps:.6g}, eta = {eta:g} (one run each, "
        f"load average {load}):",
        "",
        "| calibration | q | eta at q | q evaluations | seconds | time / homogeneous |",
        "|---|---|---|---|---|---|",
        f"| homogeneous (baseline) | {res['homogeneous'][0]:.6f} | {res['homogeneous'][1]:.3g} | - | {t_h:.2f} | "
        "1.00 |",
        f"| exact (bracket_smallest) | {res['exact'][0]:.6f} | {res['exact'][1]:.4g} | {len(steps) - 1} | "
        f"{t_e:.2f} | {t_e / t_h:.2f} |",
        f"| exact, previous search (scan_smallest) | {q_o:.6f} | - | {calls_o} | {t_o:.2f} | {t_o / t_h:.2f} |",
        "",
        f"exact: {t_o / t_e:.1f}x faster than the previous search; relative difference of q "
        f"{(res['exact'][0] - q_o) / q_o:.1e} (the search tolerance is 1.4e-4).",
    ])


if __name__ == "__main__":
    print(exact_calibration() if "--exact" in sys.argv[1:] else main())
