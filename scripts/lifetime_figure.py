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

from sufficientdp.accounting.memoization import composed_flip, memoized_guarantee
from sufficientdp.accounting.rounds import rounds_tail
from sufficientdp.plot.figures import lifetime_memoization

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "figures"
sys.path.insert(0, str(ROOT))  # the exact oracle shared with the tests

from tests.oracles.memoization import delta_t  # noqa: E402


def main() -> int:
    q1, q2, lam = Fraction(1, 4), Fraction(1, 8), Fraction(3, 2)
    q = composed_flip(q1, q2)
    a, b = (0, 0, 1), (0, 0, 0)
    ts = list(range(1, 21))
    exact = {"T": ts, "memoized": [float(delta_t(a, b, q1=q1, q2=q2, bits=1, rounds=t, lam=lam)) for t in ts],
             "fresh": [float(delta_t(a, b, q1=None, q2=q, bits=1, rounds=t, lam=lam)) for t in ts],
             "memo_release": float(delta_t(a, b, q1=None, q2=q1, bits=1, rounds=1, lam=lam))}

    bits, population, epsilon, p1, p2 = 4, 1000, 1.0, 0.2, 0.1
    g = memoized_guarantee(q_permanent=p1, q_instant=p2, bits=bits, population=population, epsilon=epsilon)
    big_ts = [1, 2, 5, 10, 20, 50, 100]
    proven = {"T": big_ts, "fresh_delta": [float(rounds_tail(q=g.q_release, bits=bits, population=population,
                                                             epsilon=epsilon, rounds=t, fallback=False).delta_upper
                                                 or 0.0) for t in big_ts],
              "memoized_lifetime_delta": g.lifetime_delta, "per_release_delta": g.per_release.delta_upper,
              "q_release": g.q_release, "local_epsilon": g.lifetime_local_epsilon}

    fig = lifetime_memoization(
        {**exact, "q": q, "q1": q1, "q2": q2, "epsilon_label": f"ln {lam}", "title": "Exact: N = 3, L = 1 (outlier 1 vs 0)"},
        {**proven, "q_permanent": p1, "q_instant": p2, "epsilon": epsilon, "population": population, "bits": bits})
    OUT.mkdir(parents=True, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(OUT / f"lifetime_memoization.{ext}", dpi=120, metadata={"Date": None} if ext == "svg" else None)
    print(json.dumps({"exact": exact, "proven": proven}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
