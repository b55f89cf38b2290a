"""Figure for docs/rounds.md (issue 14): lifetime risk against the number of releases T, with and without memoization.

Left: the exact delta_T(epsilon) of a tiny case (N = 3 people, L = 1 bit, the outlier holds 1 or 0, the others 0),
enumerated in exact rationals: T memoized releases (q1 = 1/4 permanent, q2 = 1/8 instantaneous) against T fresh
releases at the same per-release q = 5/16. Right: the proven all-collections bounds at L = 4, N = 1000: delta_T of
T fresh releases at the per-release q (sufficientdp.accounting.rounds.rounds_tail) against the memoized lifetime
bound (sufficientdp.accounting.memoization.memoized_guarantee), which holds for every T.

Writes docs/figures/lifetime_memoization.{png,svg} and prints the numbers as JSON. About a minute on 2 cores.
Run: .venv/bin/python scripts/lifetime_figure.py
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from sufficientdp.accounting.memoization import composed_flip, memoized_guarantee  # noqa: E402
from sufficientdp.accounting.rounds import rounds_tail  # noqa: E402
from sufficientdp.plot._style import PALETTE  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "figures"
sys.path.insert(0, str(ROOT))  # the exact oracle shared with the tests

from tests.oracles.memoization import delta_t  # noqa: E402


def main() -> int:
    q1, q2, lam = Fraction(1, 4), Fraction(1, 8), Fraction(3, 2)
    q = composed_flip(q1, q2)
    a, b = (0, 0, 1), (0, 0, 0)
    ts = list(range(1, 21))
    exact_memo = [float(delta_t(a, b, q1, q2, 1, t, lam)) for t in ts]
    exact_fresh = [float(delta_t(a, b, None, q, 1, t, lam)) for t in ts]
    memo_release = float(delta_t(a, b, None, q1, 1, 1, lam))

    bits, population, epsilon, p1, p2 = 4, 1000, 1.0, 0.2, 0.1
    g = memoized_guarantee(q_permanent=p1, q_instant=p2, bits=bits, population=population, epsilon=epsilon)
    big_ts = [1, 2, 5, 10, 20, 50, 100]
    fresh_bound = [float(rounds_tail(q=g.q_release, bits=bits, population=population, epsilon=epsilon, rounds=t,
                                     fallback=False).delta_upper or 0.0) for t in big_ts]

    fig = Figure(figsize=(10.0, 4.0))
    left, right = fig.subplots(1, 2)
    left.plot(ts, exact_fresh, color=PALETTE[1], marker="s", label=f"fresh every release (q = {q})")
    left.plot(ts, exact_memo, color=PALETTE[0], marker="o", label=f"memoized (q1 = {q1}, q2 = {q2})")
    left.axhline(memo_release, color=PALETTE[0], ls="--", label="bound: δ of the memo release (q1)")
    left.set(xlabel="releases T", ylabel=f"exact δ_T(ε), ε = ln {lam}",
             title="Exact: N = 3, L = 1 (outlier 1 vs 0)")
    left.legend(fontsize=8)
    right.plot(big_ts, fresh_bound, color=PALETTE[1], marker="s", label=f"fresh every release (q = {g.q_release:.3g})")
    right.axhline(g.lifetime_delta, color=PALETTE[0], ls="--", label=f"memoized lifetime (q1 = {p1}, q2 = {p2})")
    right.set(xscale="log", yscale="log", xlabel="releases T", ylabel=f"proven bound on δ_T(ε), ε = {epsilon:g}",
              title=f"Proven, all collections: N = {population}, L = {bits}")
    right.legend(fontsize=8)
    fig.tight_layout()
    OUT.mkdir(parents=True, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(OUT / f"lifetime_memoization.{ext}", dpi=120, metadata={"Date": None} if ext == "svg" else None)
    print(json.dumps({"exact": {"T": ts, "memoized": exact_memo, "fresh": exact_fresh, "memo_release": memo_release},
                      "proven": {"T": big_ts, "fresh_delta": fresh_bound, "memoized_lifetime_delta": g.lifetime_delta,
                                 "per_release_delta": g.per_release.delta_upper, "q_release": g.q_release,
                                 "local_epsilon": g.lifetime_local_epsilon}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
