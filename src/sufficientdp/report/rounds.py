"""The tables of ``docs/rounds.md``: the total eta over T rounds, and the q per round for a total target.

Table 1 (:func:`eta_table`): L = 5, N = 1000, q fixed at 0.3269 (the T = 30 calibration when the table was first
made; the bound has tightened since), total epsilon = 3:
the composed bound on eta_T (all collections, values changing or fixed), the simple rule T * eta_1(3 / T), and the
one-round bound. Table 2 (:func:`q_table`): the flip probability per round meeting a total target (epsilon = 3,
eta = 1e-3) over T rounds, with the per-round standard error and that of the average of T rounds (for a value that
does not change).

An adapter (issue 11): it lays out numbers from :func:`sufficientdp.accounting.rounds.rounds_tail` and
:func:`sufficientdp.calibration.calibrate` and holds no math; ``scripts/rounds_report.py`` prints both tables.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from ..accounting.rounds import rounds_tail
from ..calibration import calibrate, sigma_per_sqrt_n

BITS, POPULATION, EPSILON, ETA, Q30 = 5, 1000, 3.0, 1e-3, 0.3269
ETA_ROUNDS = (1, 2, 5, 10, 20, 30, 50, 100, 300, 1000)
Q_ROUNDS = (1, 3, 10, 30, 100, 300, 1000)


def eta_table(rounds: Sequence[int] = ETA_ROUNDS) -> str:
    """Table 1 (Markdown, with its heading line): eta_T bounds at the fixed q :data:`Q30`, one row per T."""
    out = [f"L = {BITS}, N = {POPULATION}, q = {Q30} every round, total epsilon = {EPSILON:g}", "",
           "| T | eta_T bound (composed) | simple rule T eta_1(eps/T) | delta_T(eps) bound | seconds |",
           "|---:|---:|---:|---:|---:|"]
    for t in rounds:
        t0 = time.perf_counter()
        r = rounds_tail(q=Q30, bits=BITS, population=POPULATION, epsilon=EPSILON, rounds=t)
        if t == 1:  # one release: its own bounds, nothing composed (the simple rule is that bound itself)
            cells = f"{r.eta:.3g} (one release) | — "
        else:
            cells = f"{r.details['eta_composed']:.3g} | {r.details['fallback']['eta']:.3g} "
        out.append(f"| {t} | {cells}| {r.delta_upper:.3g} | {time.perf_counter() - t0:.1f} |")
    return "\n".join(out)


def q_table(rounds: Sequence[int] = Q_ROUNDS) -> str:
    """Table 2 (Markdown, with its heading line): the per-round q for the total target, one row per T."""
    out = [f"Target over the T rounds together: epsilon = {EPSILON:g}, eta = {ETA:g} (L = {BITS}, N = {POPULATION})",
           "",
           "| T | q per round | eta_T at q | sd(d_hat)/sqrt(N) per round | sd of the T-round mean | local DP q | "
           "seconds |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for t in rounds:
        t0 = time.perf_counter()
        c = calibrate(bits=BITS, population=POPULATION, epsilon=EPSILON, eta=ETA, rounds=t)
        sd = sigma_per_sqrt_n(c.q)
        out.append(f"| {t} | {c.q:.4f} | {c.eta_at_q:.3g} | {sd:.3f} | {sd / math.sqrt(t):.3f} | {c.local_q:.4f} | "
                   f"{time.perf_counter() - t0:.0f} |")
    return "\n".join(out)
