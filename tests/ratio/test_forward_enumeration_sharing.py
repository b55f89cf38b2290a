"""The forward enumeration's shared work (issue 10) gives the numbers of the plain computation, bit for bit.

* :func:`_chernoff.enumerate_heavy` (FORWARD) on a Problem whose expansions were computed for other strata (other
  thresholds y) gives every stage exactly as on a fresh Problem, where nothing is shared.
* :func:`_chernoff._log_tail_at`, the one-count probe of :func:`_chernoff.window`, is :func:`log_upper_tail` /
  :func:`log_lower_tail` at that count.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sufficientdp.ratio import _chernoff as ch


def _stages(pb: ch.Problem, y: float, cap: int) -> list[tuple]:
    out: list[tuple] = []

    def stage(h: ch.Heavy) -> bool:
        out.append((h.lstar, h.logp.tobytes(), h.h.tobytes(), h.m.tobytes(), h.dropped.hex(), h.certain.hex(),
                    [(lev, a.tobytes(), b.tobytes(), c.tobytes()) for lev, a, b, c in h.collapsed]))
        return False

    try:
        ch.enumerate_heavy(pb, y=y, stop_level=1, cap=cap, log_prune=math.log(1e-20), window_tol=1e-22, stage=stage)
    except ch.TooMany:
        out.append("TooMany")
    return out


@pytest.mark.parametrize(("q", "j", "population", "epsilon", "cap"), [
    (0.2, 5, 1000, 1.0, 120_000), (0.3, 12, 10_000, 2.0, 120_000), (0.35, 20, 100_000, 2.0, 120_000),
    (0.3, 12, 10_000, 2.0, 50),  # TooMany part way
])
def test_shared_expansions_match_a_fresh_problem(q: float, j: int, population: int, epsilon: float,
                                                 cap: int) -> None:
    shared = ch.forward_problem(q, j, population, epsilon)
    for l1 in (j, 0, j // 2, j - 1, 1, j // 2):  # later strata find the expansions of earlier ones
        y = float(shared.y[l1])
        assert _stages(shared, y, cap) == _stages(ch.forward_problem(q, j, population, epsilon), y, cap)
    assert shared.expansions  # the shared problem did share


def test_window_probe_is_the_array_bound() -> None:
    rng = np.random.default_rng(3)
    for _ in range(3000):
        m = int(rng.choice([1, 2, 7, 100, 10**4, 10**7, int(rng.integers(1, 10**7))]))
        a = float(rng.choice([1e-300, 1e-12, 1e-3, 0.1, 0.5, 0.9, 0.999, rng.random()]))
        la, l1a = math.log(a), math.log1p(-a)
        for k in (-1, 0, 1, m - 1, m, m + 1, int(m * a), int(m * a) + 1, int(rng.integers(-1, m + 2))):
            up = float(ch.log_upper_tail(np.array([k]), np.array([m]), la, l1a)[0])
            lo = float(ch.log_lower_tail(np.array([k]), np.array([m]), la, l1a)[0])
            assert ch._log_tail_at(k, m, la, l1a, upper=True).hex() == up.hex()
            assert ch._log_tail_at(k, m, la, l1a, upper=False).hex() == lo.hex()
