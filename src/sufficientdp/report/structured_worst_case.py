"""The generated structured worst-case tables of ``docs/worst_case.md`` (issue 9; ERRATA 5).

For L = 1, 2, 3, N = 100 .. 1e5 and epsilon = 1, 3 at the q the default calibration picks (method proven,
eta = 1e-3), the tables set side by side

* the homogeneous worst case: max over the outlier weight j and both directions of the paper's configuration,
* the worst structured pair found by :func:`sufficientdp.ratio.structured.structured_search` (exact bracket; a
  lower bound on the worst case over all pairs), and
* the rigorous all-collections bound :func:`sufficientdp.ratio.proven.proven_tail` (an upper bound).

A found eta above the proven bound would mean a bug in one of them: :func:`generate` says so in its second return
value. A second table reproduces the L = 2 claims of ERRATA 5 at the (N, q, epsilon) they refer to.

An adapter (issue 11): it lays out numbers from the core and holds no math. The block sits between :data:`BEGIN`
and :data:`END`; ``scripts/structured_worst_case_report.py`` (the command line) splices it into the document.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from ..calibration import calibrate
from ..ratio.proven import proven_tail
from ..ratio.structured import StructuredSearchResult, structured_search

BEGIN = "<!-- BEGIN STRUCTURED -->"
END = "<!-- END STRUCTURED -->"

BITS = (1, 2, 3)
POPULATIONS = (100, 1_000, 10_000, 100_000)
EPSILONS = (1.0, 3.0)
ETA = 1e-3
#: seconds per structured search (L = 3 pairs with partial outliers have 6 to 8 report classes and cost more)
TIME_BUDGET = {1: 60.0, 2: 60.0, 3: 120.0}
MAX_GROUP = 2
MAX_COPIES = 16
#: ERRATA 5's L = 2 claims: (N, q, epsilon)
ERRATA = ((100, 0.1, 3.0), (1_000, 0.1, 2.5), (3_000, 0.075, 1.0), (10_000, 0.05, 1.0), (10_000, 0.05, 1.5),
          (10_000, 0.075, 1.0))


def fmt(x: float | None) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0"
    return f"{x:.4g}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def homogeneous_text(r: StructuredSearchResult) -> str:
    fwd = [t for t in r.homogeneous_by_weight if t[1] == "forward"]
    rev = [t for t in r.homogeneous_by_weight if t[1] == "reverse"]
    best = max([*fwd, *rev], key=lambda t: 0.5 * (t[2] + t[3]))
    return f"{fmt(0.5 * (best[2] + best[3]))} (j={best[0]}, {best[1]})"


def coverage(r: StructuredSearchResult) -> str:
    if r.exhaustive:
        return "every pair (exact scan)"
    text = f"{r.pairs_evaluated}/{r.pairs_total}"
    reasons = sorted({f.reason for f in r.families if f.skipped})
    return text + (f" ({'; '.join(reasons)})" if reasons else "")


def row(r: StructuredSearchResult, proven: float, with_q_eps: bool) -> tuple[list[str], bool]:
    ok = r.eta_lower <= proven
    cells = [str(r.bits), f"{r.population:,}"]
    if with_q_eps:
        cells += [f"{r.epsilon:g}", f"{r.q:.4g}"]
    else:
        cells += [f"{r.q:g}", f"{r.epsilon:g}"]
    ratio = "—" if r.ratio is None else f"{r.ratio:.3f}"
    cells += [
        homogeneous_text(r),
        f"{fmt(r.eta)} [{fmt(r.eta_lower)}, {fmt(r.eta_upper)}]",
        ratio,
        f"`{r.pair.label}` ({r.pair.family})",
        fmt(proven),
        "yes" if ok else "**NO — bug**",
        coverage(r),
        f"{r.seconds:.0f}",
    ]
    return cells, ok


def generate(*, bits: Sequence[int] = BITS, populations: Sequence[int] = POPULATIONS,
             epsilons: Sequence[float] = EPSILONS, errata: Sequence[tuple[int, float, float]] = ERRATA,
             time_budget: dict[int, float] | None = None, progress: bool = True) -> tuple[str, bool]:
    """The block between :data:`BEGIN` and :data:`END`, and whether every found eta is within the proven bound
    (False means a bug in one of them). ``progress``: each row on stderr as it is made (about 15 minutes in all with
    the default grid; the arguments choose a smaller one)."""
    budget = TIME_BUDGET if time_budget is None else time_budget
    t0 = time.perf_counter()
    all_ok = True
    rows = []
    for b in bits:
        for n in populations:
            for eps in epsilons:
                q = calibrate(bits=b, population=n, epsilon=eps, eta=ETA).q
                r = structured_search(b, n, q, eps, max_group=MAX_GROUP, max_copies=MAX_COPIES,
                                      time_budget=budget[b])
                proven = proven_tail(q=q, bits=b, population=n, epsilon=eps).eta
                cells, ok = row(r, proven, True)
                all_ok &= ok
                rows.append(cells)
                _progress(progress, cells)
    errata_rows = []
    for n, q, eps in errata:
        r = structured_search(2, n, q, eps, max_group=MAX_GROUP, max_copies=MAX_COPIES, time_budget=budget[2])
        proven = proven_tail(q=q, bits=2, population=n, epsilon=eps).eta
        cells, ok = row(r, proven, False)
        all_ok &= ok
        errata_rows.append(cells)
        _progress(progress, cells)
    tail = ["homogeneous worst η (j, direction)", "structured worst found η [exact bracket]",
            "found / homogeneous", "winning pair D' + x→x' (family)", "proven bound η (all collections)",
            "found ≤ proven", "candidates evaluated", "s"]
    head = table(["L", "N", "ε", "q (calibrated)", *tail], rows)
    errata_table = table(["L", "N", "q", "ε", *tail], errata_rows)
    elapsed = time.perf_counter() - t0
    parts = [
        BEGIN,
        "",
        f"_Generated by `scripts/structured_worst_case_report.py` in {elapsed / 60:.0f} min. Search limits: groups "
        f"of up to {MAX_GROUP} extra vectors, up to {MAX_COPIES} copies of the outlier, time budget "
        f"{', '.join(f'{budget[b]:.0f} s (L = {b})' for b in bits)}. Pairs are written `{{D'}} + x→x'` with "
        "vector counts (bit strings, bit 0 first)._",
        "",
        f"#### At the calibrated q (`sufficientdp calibrate`, method proven, η = {ETA:g})",
        "",
        head,
        "",
        "#### ERRATA 5's L = 2 claims",
        "",
        errata_table,
        "",
        END,
    ]
    return "\n".join(parts), all_ok


def _progress(on: bool, cells: Sequence[str]) -> None:
    if on:
        print(" | ".join(cells), file=sys.stderr, flush=True)
