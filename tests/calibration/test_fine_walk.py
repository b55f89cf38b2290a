"""The proven calibration's walk from the coarse root to the fine one (issue 10, session 22).

The fine lattice's bound is tighter than the coarse one, so its root lies a little below the coarse root. The walk
used to probe 3% below it at once: far below the root, where the bound is large and its lattices the costliest of
the search (L = 128, k = 2: 1.9 s of a 9 s calibration). It now steps to the root predicted with the slope of the
coarse search's two evaluations nearest its root, a little beyond it, so the regula falsi starts from a bracket
about as narrow as its tolerance."""

from __future__ import annotations

import math

import pytest

from sufficientdp.calibration import proven as calibration_proven
from sufficientdp.calibration.proven import proven_q
from sufficientdp.calibration.search import log_excess, log_slope

ETA = 1e-3


def test_log_slope_takes_the_two_points_nearest_the_root() -> None:
    seen = [(math.log(0.30), 2.0), (math.log(0.34), -0.01), (math.log(0.335), 0.05), (math.log(0.40), -9.0)]
    want = (0.05 - -0.01) / (math.log(0.335) - math.log(0.34))
    assert log_slope(seen) == want < 0.0
    assert log_slope(seen[:1]) == -30.0  # one point: the default
    assert log_slope([(math.log(0.3), 0.1), (math.log(0.31), 0.2)], default=-7.0) == -7.0  # rising: not a slope
    assert log_slope([(math.log(0.3), 0.1), (math.log(0.3), -0.1)]) == -30.0  # one q twice: no secant


class _Smooth(calibration_proven._Run):
    """A run whose fine bound is ``eta (q / root)**slope`` (made up; the walk and the regula falsi see only it)."""

    __slots__ = ("probes", "root", "slope")

    def __init__(self, root: float, slope: float) -> None:
        super().__init__(bits=8, population=1000, epsilon=1.0, eta=ETA, reports=1,
                         dom=calibration_proven.Domain(bits=8), progress=None, larger_crowds=False)
        self.root, self.slope, self.probes = root, slope, []

    def fast(self, q: float) -> float:
        self.probes.append(q)
        return self.eta * math.exp(self.slope * (math.log(q) - math.log(self.root)))


@pytest.mark.parametrize(("coarse_slope", "max_probes"), [(-50.0, 3), (-35.0, 5), (-80.0, 5), (-5.0, 5),
                                                          (-500.0, 5)])
def test_the_walk_brackets_the_fine_root_near_it(coarse_slope: float, max_probes: int) -> None:
    # the coarse root 0.3343, the fine root 0.1% below it, the fine slope -50; the coarse slope right (the probes:
    # the coarse root, just below the fine root, just above it), a little off, or far off (10x too shallow: the
    # first step goes 0.9% below the root; 10x too steep: a short step, then the secant of the fine bound's own
    # two values)
    hi, root = 0.3343, 0.3343 * 0.999
    run = _Smooth(root, -50.0)
    run.coarse_seen[:] = [(math.log(hi), log_excess(0.95 * ETA, ETA)),
                          (math.log(hi * 0.9995), log_excess(0.95 * ETA, ETA) - coarse_slope * 5.0004e-4)]
    q = calibration_proven._to_fine(run, hi)
    assert run.fast(q) <= ETA  # observed to pass
    assert root <= q <= root * (1.0 + 2.5e-4)  # the fine search's tolerance (2e-4), with room for rounding
    probes = run.probes[:-1]
    assert probes[0] == hi and len(probes) <= max_probes
    assert min(probes) > root * 0.99  # never far below the root (the old walk probed 3% below hi first)


def test_a_walk_that_keeps_passing_widens_its_steps() -> None:
    # a flat bound (slope -0.01: the prediction says the root is far below, the steps are capped at 3%) that passes
    # down to 0.05: the walk reaches it in at most 3% steps, a few dozen probes, not hundreds of 1e-4 steps
    run = _Smooth(0.05, -0.01)
    run.coarse_seen[:] = [(math.log(0.3), -0.0001), (math.log(0.2999), -0.00009)]
    q = calibration_proven._to_fine(run, 0.3)
    assert run.fast(q) <= ETA and q <= 0.05 * (1.0 + 2.5e-4)
    assert len(run.probes) < 80


@pytest.mark.slow
def test_no_fine_probe_of_a_calibration_lies_far_below_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    probed: list[tuple[float, float]] = []
    plain = calibration_proven._Run.fast

    def recording(run: calibration_proven._Run, q: float) -> float:
        probed.append((run.stage, q))
        return plain(run, q)

    monkeypatch.setattr(calibration_proven._Run, "fast", recording)
    q, tail, _ = proven_q(bits=40, population=10**7, epsilon=2.0, eta=ETA, reports=2)
    fine = [x for stage, x in probed if stage == calibration_proven._FINE_RESOLUTION]
    assert tail.eta <= ETA and len(fine) <= 4
    assert min(fine) > q * 0.99  # (the 3% walk had probed 0.3677 for q = 0.3789)


def test_the_coarse_search_stops_at_a_pass_near_the_target() -> None:
    # eta(q) = eta (q / 0.3)**-50: the regula falsi's probes pass within 5% of the target before the bracket is
    # within 1e-3; with near = 0.05 it stops at the first of them, without the probe that only moves the failing end
    probes: list[float] = []

    def eta_of(q: float) -> float:
        probes.append(q)
        return ETA * (q / 0.3) ** -50.0

    lo, hi = 0.2, 0.45
    args = (lo, hi, log_excess(eta_of(lo), ETA), log_excess(eta_of(hi), ETA), ETA, 1e-3)
    probes.clear()
    q_near = calibration_proven._illinois(eta_of, *args, near=0.05)
    near_probes = len(probes)
    probes.clear()
    q_full = calibration_proven._illinois(eta_of, *args)
    assert eta_of(q_near) <= ETA and -0.05 <= log_excess(eta_of(q_near), ETA) <= 0.0
    assert near_probes < len(probes) - 1  # (the last call is the assertion's own)
    assert abs(q_near / q_full - 1.0) < 1.1e-3  # both within the coarse tolerance of the root 0.3
