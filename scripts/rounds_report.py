"""Tables for docs/rounds.md: the total eta over T rounds, and the q per round for a total target.

Table 1: L = 5, N = 1000, q fixed at 0.3269 (the calibration for T = 30), total epsilon = 3: the composed bound on
eta_T (all collections, values changing or fixed), the simple rule T * eta_1(3 / T), and the one-round bound.
Table 2: the flip probability per round meeting a total target (epsilon = 3, eta = 1e-3) over T rounds, with the
per-round standard error and that of the average of T rounds (for a value that does not change).

Usage: ``.venv/bin/python scripts/rounds_report.py`` (a few minutes; prints Markdown).
"""

from __future__ import annotations

import math
import time

from sufficientdp import calibrate
from sufficientdp.accounting.rounds import rounds_tail
from sufficientdp.calibration import sigma_per_sqrt_n

BITS, POPULATION, EPSILON, ETA, Q30 = 5, 1000, 3.0, 1e-3, 0.3269


def table_eta() -> None:
    print(f"L = {BITS}, N = {POPULATION}, q = {Q30} every round, total epsilon = {EPSILON:g}\n")
    print("| T | eta_T bound (composed) | simple rule T eta_1(eps/T) | delta_T(eps) bound | seconds |")
    print("|---:|---:|---:|---:|---:|")
    for t in (1, 2, 5, 10, 20, 30, 50, 100, 300, 1000):
        t0 = time.perf_counter()
        r = rounds_tail(q=Q30, bits=BITS, population=POPULATION, epsilon=EPSILON, rounds=t)
        fb = r.details["fallback"]
        print(f"| {t} | {r.details['eta_composed']:.3g} | {fb['eta']:.3g} | {r.delta_upper:.3g} | "
              f"{time.perf_counter() - t0:.1f} |")


def table_q() -> None:
    print(f"\nTarget over the T rounds together: epsilon = {EPSILON:g}, eta = {ETA:g} "
          f"(L = {BITS}, N = {POPULATION})\n")
    print("| T | q per round | eta_T at q | sd(d_hat)/sqrt(N) per round | sd of the T-round mean | local DP q | "
          "seconds |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for t in (1, 3, 10, 30, 100, 300, 1000):
        t0 = time.perf_counter()
        c = calibrate(bits=BITS, population=POPULATION, epsilon=EPSILON, eta=ETA, rounds=t)
        sd = sigma_per_sqrt_n(c.q)
        print(f"| {t} | {c.q:.4f} | {c.eta_at_q:.3g} | {sd:.3f} | {sd / math.sqrt(t):.3f} | {c.local_q:.4f} | "
              f"{time.perf_counter() - t0:.0f} |")


if __name__ == "__main__":
    table_eta()
    table_q()
