"""``calibrate_tail(method="exact")`` after the search change (issue 10): the same q to the search's tolerance.

The old search was :func:`sufficientdp.calibration.search.scan_smallest` (a 12-point geometric grid, then 12
geometric bisections). Its q values below were computed with that code (commit ddba304, before this change) by
``calibrate_tail(method="exact", bits=.., population=.., epsilon=.., eta=..)``. Both searches keep a failing q
below and a verified passing q above the crossing, in a bracket ``hi / lo <= (q_pass / q_fail) ** (2 ** -12)``
with the same grid points, so the two answers differ by at most that bracket's width.
"""

from __future__ import annotations

import math

import pytest

from sufficientdp.calibration.homogeneous import calibrate_tail
from sufficientdp.calibration.search import bracket_smallest, scan_smallest
from sufficientdp.parameters import local_q
from sufficientdp.ratio.analysis import privacy_tail

# (bits, population, epsilon, eta) -> q returned by the old scan_smallest search (commit ddba304)
OLD_Q = {
    (3, 200, 1.0, 1e-3): 0.2232512464397822,
    (4, 300, 0.8, 1e-2): 0.23763306682226853,
    (2, 1000, 0.5, 1e-3): 0.1570755676498495,
}


def _grid_tolerance(bits: int, epsilon: float, q: float) -> float:
    """The log-width of the final bracket: the grid step between the grid points around q, halved 12 times."""
    q_hi = local_q(bits, epsilon, 1) * (1 - 1e-12)
    i = math.floor(math.log(q_hi / q) / math.log(1e3 ** (1 / 12))) + 1  # first grid point below q
    upper = q_hi * 1e-3 ** ((i - 1) / 12)
    lower = q_hi * 1e-3 ** (i / 12)
    return math.log(upper / lower) / 2**12


@pytest.mark.parametrize("config", sorted(OLD_Q))
def test_exact_q_matches_the_old_search_within_its_tolerance(config: tuple[int, int, float, float]) -> None:
    bits, population, epsilon, eta = config
    q, at_q, _ = calibrate_tail(method="exact", bits=bits, population=population, epsilon=epsilon, eta=eta)
    assert abs(math.log(q / OLD_Q[config])) <= _grid_tolerance(bits, epsilon, OLD_Q[config]) * (1 + 1e-9)
    assert at_q is not None and at_q <= eta
    # independent re-check at the returned q: every outlier weight and both directions, exact upper ends
    worst = max(privacy_tail(q=q, bits=bits, population=population, epsilon=epsilon, method="exact",
                             outlier_bits=j, direction=d).eta_upper or 0.0
                for j in range(1, bits + 1) for d in ("forward", "reverse"))
    assert worst <= eta


def _smooth(threshold: float, calls: list[float]) -> object:
    def passes(q: float) -> tuple[bool, float]:
        calls.append(q)
        eta = math.exp(-((q / threshold) ** 3) * math.log(1e3))  # = 1e-3 at the threshold, decreasing in q
        return eta <= 1e-3, eta
    return passes


@pytest.mark.parametrize("threshold", [0.01, 0.1237, 0.3, 0.44])
def test_bracket_smallest_agrees_with_scan_smallest_and_uses_fewer_evaluations(threshold: float) -> None:
    old_calls: list[float] = []
    new_calls: list[float] = []
    q_old, _ = scan_smallest(_smooth(threshold, old_calls), 0.45, iterations=12)
    q_new, e_new = bracket_smallest(_smooth(threshold, new_calls), 0.45, 1e-3, iterations=12)
    tol = math.log(1e3) / 12 / 2**12
    assert q_new >= threshold and q_old >= threshold  # both verified passing
    assert abs(math.log(q_new / q_old)) <= tol * (1 + 1e-9)
    assert e_new is not None and e_new <= 1e-3
    assert q_new in new_calls  # the returned q is one that was evaluated
    assert len(new_calls) < len(old_calls)


def test_bracket_smallest_without_a_failing_grid_point_returns_the_lowest() -> None:
    q, eta = bracket_smallest(lambda q: (True, 0.0), 0.4, 1e-3, grid=4)
    assert q == pytest.approx(0.4 * 1e-3) and eta == 0.0


def test_bracket_smallest_keeps_fail_below_pass_when_not_monotone() -> None:
    # passes only on two islands: the search still returns a verified passing q with a failing one just below
    def passes(q: float) -> tuple[bool, float]:
        ok = 0.2 <= q or 0.05 <= q < 0.06
        return ok, (1e-4 if ok else 0.5)
    q, _ = bracket_smallest(passes, 0.45, 1e-3)
    assert passes(q)[0]
    assert not passes(q * math.exp(-math.log(1e3) / 12 / 2**12 * 1.01))[0]


def test_exact_calibration_reports_progress_to_completion() -> None:
    seen: list[tuple[int, int]] = []
    calibrate_tail(method="exact", bits=2, population=50, epsilon=1.0, eta=0.05,
                   progress=lambda done, total: seen.append((done, total)))
    assert len(seen) >= 3  # one call per q evaluated, then the final one
    assert all(0 < d <= t for d, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1][0] == seen[-1][1]
