"""The one safe monotone search (sufficientdp._numerics.search, issue 11), and its expanding walk.

Pinned to independent truth: thresholds chosen by the test, math.isqrt, and a replay of every probe that checks the
bracket invariant ("fails at fail, passes at ok", every probe strictly inside) on predicates that are not monotone.
"""

from __future__ import annotations

import math
import random

import pytest

from sufficientdp._errors import ParameterError
from sufficientdp._numerics.search import (
    Bracket,
    Creep,
    Midpoint,
    Policy,
    RegulaFalsi,
    geometric,
    scan,
    search,
    verdict,
    walk,
)


class _Recorder:
    """A test that records (x, verdict) and answers from ``fn``."""

    def __init__(self, fn):
        self.fn = fn
        self.calls: list[tuple[float, bool]] = []

    def __call__(self, x: float) -> tuple[bool, float]:
        ok, score = self.fn(x)
        self.calls.append((x, ok))
        return ok, score


def _replay(start: Bracket, calls: list[tuple[float, bool]], end: Bracket) -> None:
    """Every probe strictly inside the bracket of its time; the final ends are the replayed ones."""
    fail, ok = start.fail, start.ok
    for x, passed in calls:
        assert min(fail, ok) < x < max(fail, ok), (x, fail, ok)
        if passed:
            ok = x
        else:
            fail = x
    assert (end.fail, end.ok) == (fail, ok)
    assert end.probes == len(calls)


def _noisy(seed: int, threshold: float, flip: float):
    """Passes above ``threshold``, except that each point's verdict is flipped with probability ``flip`` (the
    same point always gets the same verdict): not monotone."""
    def fn(x: float) -> tuple[bool, float]:
        r = random.Random(hash((seed, x))).random()
        passed = (x >= threshold) != (r < flip)
        return passed, random.Random(hash((seed, x, 1))).uniform(-1.0, 1.0)  # scores as adversarial
    return fn


_POLICIES = [
    lambda: Midpoint("arithmetic"),
    lambda: Midpoint("geometric"),
    lambda: Midpoint("log-geometric"),
    lambda: Midpoint("geometric", arithmetic_within=2.0),
    lambda: RegulaFalsi(anchor="ok"),
    lambda: RegulaFalsi(anchor="fail", log=True, margin_frac=0.02, lean=1e-4),
    lambda: RegulaFalsi(anchor="fail", margin=1e-4, max_stalls=3, strict=True, guard_bisection=True),
    lambda: Creep(rel=1e-3, first=0.3),
    lambda: Creep(rel=0.0, first=0.3, scale=5.0),
]


@pytest.mark.parametrize("make", _POLICIES)
@pytest.mark.parametrize("seed", range(6))
def test_the_invariant_holds_on_non_monotone_predicates(make, seed: int) -> None:
    rec = _Recorder(_noisy(seed, threshold=0.2 + 0.05 * seed, flip=0.3))
    start = Bracket(fail=1e-3, ok=0.9, fail_score=1.0, ok_score=-1.0)
    end = search(rec, start, make(), max_probes=40, rtol=1e-9)
    _replay(start, rec.calls, end)
    # the answer is the starting ok end or a point observed to pass; the fail end likewise
    assert end.ok == start.ok or (end.ok, True) in rec.calls
    assert end.fail == start.fail or (end.fail, False) in rec.calls
    assert len(rec.calls) <= 40


def test_the_largest_passing_point_when_ok_is_below_fail() -> None:
    for n in (0, 1, 2, 3, 15, 16, 17, 10**6, 10**12 + 7):
        rec = _Recorder(lambda k, n=n: (k * k <= n, math.nan))
        start = Bracket(fail=n + 1, ok=0)
        end = search(rec, start, Midpoint("integer"), max_probes=200)
        assert end.ok == math.isqrt(n) and end.fail == math.isqrt(n) + 1
        _replay(start, rec.calls, end)


@pytest.mark.parametrize("mean", ["arithmetic", "geometric", "log-geometric"])
def test_a_monotone_threshold_is_found_to_the_tolerance(mean: str) -> None:
    for t in (1e-6, 0.0123, 0.5, 0.987):
        end = search(verdict(lambda x, t=t: x >= t), Bracket(fail=1e-9, ok=1.0), Midpoint(mean), max_probes=500,
                     rtol=1e-10)
        assert end.fail < t <= end.ok
        assert end.ok - end.fail <= 1e-10 * end.ok


def test_the_tolerance_and_the_probe_budget_stop_the_search() -> None:
    rec = _Recorder(lambda x: (x >= 0.3, math.nan))
    end = search(rec, Bracket(fail=0.0, ok=1.0), Midpoint(), max_probes=7)
    assert len(rec.calls) == 7 == end.probes
    assert end.ok - end.fail == pytest.approx(2.0**-7)
    rec = _Recorder(lambda x: (x >= 0.3, math.nan))
    end = search(rec, Bracket(fail=0.0, ok=1.0), Midpoint(), max_probes=100, atol=0.01)
    assert end.ok - end.fail <= 0.01 < 2 * (end.ok - end.fail)  # stops as soon as the width is within atol
    end = search(rec, Bracket(fail=0.0, ok=1.0), Midpoint(), max_probes=0)
    assert (end.fail, end.ok, end.probes) == (0.0, 1.0, 0)


def test_regula_falsi_reaches_the_bisection_tolerance_with_fewer_probes() -> None:
    def smooth(x: float) -> tuple[bool, float]:  # root at x = log(1000) / 7
        excess = math.log(1000.0) - 7.0 * x
        return excess <= 0.0, excess

    root = math.log(1000.0) / 7.0
    bis, rf = _Recorder(smooth), _Recorder(smooth)
    start = Bracket(fail=0.0, ok=5.0, fail_score=smooth(0.0)[1], ok_score=smooth(5.0)[1])
    e1 = search(bis, start, Midpoint(), max_probes=200, atol=1e-9)
    e2 = search(rf, start, RegulaFalsi(anchor="fail", margin=0.45e-9), max_probes=200, atol=1e-9)
    for e in (e1, e2):
        assert e.fail < root <= e.ok and e.ok - e.fail <= 1e-9
    assert len(rf.calls) < len(bis.calls) / 4


def test_regula_falsi_bisects_after_max_stalls() -> None:
    # a score that interpolation trusts but that puts every probe next to the failing end: stalls, then bisects
    def lopsided(x: float) -> tuple[bool, float]:
        return x >= 0.9, (1e-9 if x < 0.9 else -1.0)

    rec = _Recorder(lopsided)
    policy = RegulaFalsi(anchor="fail", margin=1e-6, max_stalls=2, strict=True)
    search(rec, Bracket(fail=0.0, ok=1.0, fail_score=1e-9, ok_score=-1.0), policy, max_probes=4)
    xs = [x for x, _ in rec.calls]
    assert xs[0] == pytest.approx(1e-6) and xs[1] == pytest.approx(2e-6)  # interpolation, kept a margin inside
    assert xs[2] == pytest.approx(0.5 * (2e-6 + 1.0))  # two stalls: the midpoint


def test_creep_probes_the_estimate_then_steps_up_by_units_in_the_last_place() -> None:
    rec = _Recorder(lambda x: (x >= 0.3, math.nan))
    end = search(rec, Bracket(fail=0.0, ok=0.5), Creep(rel=0.0, first=0.3), max_probes=10)
    assert end.ok == 0.3 and len(rec.calls) == 1
    t = math.nextafter(math.nextafter(0.3, 1.0), 1.0)
    rec = _Recorder(lambda x: (x >= t, math.nan))
    end = search(rec, Bracket(fail=0.0, ok=0.5), Creep(rel=0.0, first=0.3), max_probes=10)
    assert end.ok == t and [x for x, _ in rec.calls] == [0.3, math.nextafter(0.3, 1.0), t]


def test_creep_with_a_scale_takes_the_newton_step_when_it_is_longer() -> None:
    # score(x) = 100 (0.3 - x) / 0.3: derivative in log x at 0.29 is about -100, so from 0.29 the Newton step
    # 0.29 (1 + score / 100) lands on 0.29 + 0.29 * 0.01 / 0.3 (checked by hand), past the ulp creep
    def fn(x: float) -> tuple[bool, float]:
        s = 100.0 * (0.3 - x) / 0.3
        return s <= 0.0, s
    rec = _Recorder(fn)
    end = search(rec, Bracket(fail=0.0, ok=0.5), Creep(rel=0.0, first=0.29, scale=100.0), max_probes=10)
    xs = [x for x, _ in rec.calls]
    assert xs[0] == 0.29 and xs[1] == 0.29 * (1.0 + fn(0.29)[1] / 100.0)
    assert end.ok == xs[-1] and fn(end.ok)[0] and all(not p for _, p in rec.calls[:-1])
    # a Newton step shorter than one ulp (tiny score) leaves the creep
    t = math.nextafter(0.3, 1.0)
    rec = _Recorder(lambda x: (x >= t, 1e-30))
    end = search(rec, Bracket(fail=0.0, ok=0.5), Creep(rel=0.0, first=0.3, scale=1.0), max_probes=10)
    assert [x for x, _ in rec.calls] == [0.3, t] and end.ok == t
    # going down (ok below fail): the largest passing point, x (1 - score / scale)
    rec = _Recorder(lambda x: (x <= 0.2, 1.0))
    end = search(rec, Bracket(fail=1.0, ok=0.0), Creep(rel=0.0, first=0.4, scale=2.0), max_probes=10)
    assert [x for x, _ in rec.calls] == [0.4, 0.2] and end.ok == 0.2
    # a step outside the bracket ends the search with the starting ok end
    rec = _Recorder(lambda x: (False, 10.0))
    end = search(rec, Bracket(fail=0.0, ok=0.5), Creep(rel=0.0, first=0.3, scale=1.0), max_probes=10)
    assert [x for x, _ in rec.calls] == [0.3] and end.ok == 0.5


def test_a_proposal_outside_the_bracket_ends_the_search() -> None:
    class Outside(Policy):
        def propose(self, b: Bracket) -> tuple[float, bool]:
            return b.ok, True

    rec = _Recorder(lambda x: (True, math.nan))
    assert search(rec, Bracket(fail=0.0, ok=1.0), Outside(), max_probes=5).ok == 1.0
    assert rec.calls == []


def test_scan_returns_the_point_before_the_flip_and_the_flip() -> None:
    seen: list[float] = []

    def up(x: float) -> bool:
        seen.append(x)
        return x >= 0.35

    assert scan(up, [0.1, 0.2, 0.3, 0.4, 0.5], until=True) == (0.3, 0.4)
    assert seen == [0.1, 0.2, 0.3, 0.4]  # stops at the flip
    assert scan(up, [0.4, 0.5], until=True) == (None, 0.4)
    assert scan(up, [0.1, 0.2], until=True) == (0.2, None)
    assert scan(up, [0.5, 0.45, 0.3, 0.2], until=False) == (0.45, 0.3)
    assert scan(up, [], until=True) == (None, None)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: search(verdict(bool), Bracket(0.0, 1.0), Midpoint(), max_probes=-1), "max_probes"),
    (lambda: search(verdict(bool), Bracket(0.0, 1.0), Midpoint(), max_probes=2.5), "max_probes"),
    (lambda: search(verdict(bool), Bracket(0.0, 1.0), Midpoint(), max_probes=3, atol=-1.0), "atol"),
    (lambda: search(verdict(bool), Bracket(0.0, 1.0), Midpoint(), max_probes=3, rtol=math.nan), "rtol"),
    (lambda: Midpoint("median"), "mean"),
    (lambda: Midpoint("arithmetic", arithmetic_within=2.0), "arithmetic_within"),
    (lambda: Midpoint("geometric", arithmetic_within=1.0), "arithmetic_within"),
    (lambda: RegulaFalsi(anchor="middle"), "anchor"),
    (lambda: RegulaFalsi(margin_frac=0.5), "margin_frac"),
    (lambda: RegulaFalsi(margin=-1.0), "margin"),
    (lambda: RegulaFalsi(margin=0.1, margin_frac=0.1), "margin"),
    (lambda: RegulaFalsi(lean=math.inf), "lean"),
    (lambda: RegulaFalsi(max_stalls=0), "max_stalls"),
    (lambda: Creep(rel=-1e-16), "rel"),
    (lambda: Creep(rel=0.0, scale=0.0), "scale"),
    (lambda: Creep(rel=0.0, scale=math.inf), "scale"),
])
def test_bad_arguments_raise_parameter_error_naming_the_parameter(call, name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        call()
    assert issubclass(ParameterError, ValueError)


def test_bisect_many_narrows_every_bracket_to_its_threshold() -> None:
    import numpy as np

    from sufficientdp._numerics.search import bisect_many

    thresholds = np.array([0.1, 0.5, 0.77, 1e-9, 0.999])
    seen: list[np.ndarray] = []

    def over(x: np.ndarray) -> np.ndarray:
        seen.append(x.copy())
        return x >= thresholds

    below, above = bisect_many(over, np.zeros(5), np.ones(5), probes=30)
    assert len(seen) == 30
    assert np.all(below < thresholds) and np.all(thresholds <= above)
    assert np.all(above - below == 2.0**-30)
    # each end is its start or a point observed with that end's verdict
    probed = np.array(seen)
    for i in range(5):
        assert below[i] == 0.0 or (below[i] in probed[:, i] and below[i] < thresholds[i])
        assert above[i] in probed[:, i]
    with pytest.raises(ParameterError, match="probes"):
        bisect_many(over, np.zeros(1), np.ones(1), probes=-1)


def test_until_is_a_callers_own_stop_rule() -> None:
    rec = _Recorder(lambda x: (x >= 0.3, math.nan))
    end = search(rec, Bracket(fail=0.01, ok=0.5), Midpoint("geometric"), max_probes=100,
                 until=lambda b: b.ok / b.fail - 1.0 <= 1e-3)
    assert end.ok / end.fail - 1.0 <= 1e-3 < end.ok / end.fail * (end.ok / end.fail) - 1.0
    assert end.fail < 0.3 <= end.ok and end.probes == len(rec.calls)


def test_integer_upper_midpoint_finds_the_first_true_integer() -> None:
    for n in (0, 1, 2, 15, 16, 17, 10**9 + 3):
        first = math.isqrt(n) + (0 if math.isqrt(n) ** 2 == n else 1)  # smallest x with x * x >= n
        rec = _Recorder(lambda x, n=n: (x * x >= n, math.nan))
        start = Bracket(fail=-1, ok=10**5 + 1)  # the search over [0, 10**5 + 1]
        end = search(rec, start, Midpoint("integer-upper"), max_probes=64)
        assert end.fail + 1 == end.ok == first
        assert rec.calls[0][0] == (0 + 10**5 + 1) // 2  # the upper middle of (fail, ok]: (lo + hi) // 2 of [0, ok]
        _replay(start, rec.calls, end)


def test_bisect_many_integer_finds_the_first_index_reaching_each_value() -> None:
    import numpy as np

    from sufficientdp._numerics.search import bisect_many

    grid = np.cumsum(np.arange(1, 101, dtype=np.float64))  # increasing, 100 entries
    ys = np.array([0.5, 1.0, 7.3, 2000.0, 5049.0])
    lo, hi = bisect_many(lambda i: grid[i] >= ys, np.zeros(5, dtype=np.int64), np.full(5, 99, dtype=np.int64),
                         probes=8, integer=True)
    truth = np.searchsorted(grid, ys, side="left")  # first index with grid >= y
    assert lo.dtype == np.int64 and hi.dtype == np.int64
    assert np.array_equal(hi, truth) and np.array_equal(lo, np.maximum(truth - 1, 0))


def test_walk_halves_until_the_verdict_flips_and_returns_the_bracket() -> None:
    rec = _Recorder(lambda x: (x >= 0.01, x - 0.01))  # passes from 0.01 up
    w = walk(rec, 1.0, passes=True, step=geometric(0.5), max_steps=60, start_score=0.99)
    assert [x for x, _ in rec.calls] == [0.5 ** k for k in range(1, 8)]  # 2**-7 < 0.01 <= 2**-6
    assert (w.last, w.hit, w.prior, w.steps) == (2.0 ** -6, 2.0 ** -7, 2.0 ** -5, 7)
    b = w.bracket()
    assert b is not None and (b.fail, b.ok) == (2.0 ** -7, 2.0 ** -6)
    assert b.ok_score == 2.0 ** -6 - 0.01 and b.fail_score == 2.0 ** -7 - 0.01
    _replay(Bracket(fail=0.0, ok=1.0), rec.calls, Bracket(fail=b.fail, ok=b.ok, probes=w.steps))


def test_walk_up_from_a_failing_point_clamps_at_the_limit_and_stops_there() -> None:
    rec = _Recorder(lambda x: (False, 1.0))  # never passes
    w = walk(rec, 0.1, passes=False, step=geometric(2.0, limit=0.5), max_steps=50)
    assert [x for x, _ in rec.calls] == [0.2, 0.4, 0.5]  # clamped to the limit, then no step from it
    assert (w.hit, w.last, w.prior, w.steps) == (None, 0.5, 0.4, 3) and w.bracket() is None
    rec2 = _Recorder(lambda x: (x > 0.3, 0.0))
    w2 = walk(rec2, 0.1, passes=False, step=geometric(2.0, limit=0.5), max_steps=50)
    b = w2.bracket()
    assert b is not None and (b.fail, b.ok, w2.steps) == (0.2, 0.4, 2)  # fails at 0.2, passes at 0.4


def test_walk_stops_at_the_floor_the_step_budget_and_a_final_point() -> None:
    rec = _Recorder(lambda x: (True, 0.0))
    w = walk(rec, 1.0, passes=True, step=geometric(0.1, floor=1e-3), max_steps=50)
    assert len(rec.calls) == 3 and w.last == rec.calls[-1][0] and w.hit is None  # 1e-4 < floor: not probed
    rec2 = _Recorder(lambda x: (True, 0.0))
    assert walk(rec2, 1.0, passes=True, step=geometric(0.5), max_steps=4).steps == 4 and len(rec2.calls) == 4
    assert walk(rec2, 1.0, passes=True, step=geometric(0.5), max_steps=0).last == 1.0
    rec3 = _Recorder(lambda x: (True, 0.0))

    def once(x: float, k: int) -> tuple[float, bool]:
        return x + 1.0, True  # final: the walk stops after it keeps the verdict

    w3 = walk(rec3, 0.0, passes=True, step=once, max_steps=9)
    assert (w3.last, w3.prior, w3.steps, len(rec3.calls)) == (1.0, 0.0, 1, 1)


@pytest.mark.parametrize("seed", range(20))
def test_walk_keeps_the_invariant_on_non_monotone_predicates(seed: int) -> None:
    rec = _Recorder(_noisy(seed, 0.3, 0.2))
    w = walk(rec, 1.0, passes=True, step=geometric(0.8), max_steps=100)
    observed = dict(rec.calls)
    assert w.last == 1.0 or observed[w.last] is True
    assert all(observed[x] for x, _ in rec.calls[:-1])  # every point before the flip kept the verdict
    if w.hit is not None:
        assert observed[w.hit] is False and rec.calls[-1][0] == w.hit


@pytest.mark.parametrize(("call", "name"), [
    (lambda: walk(verdict(bool), 1.0, passes=True, step=geometric(0.5), max_steps=-1), "max_steps"),
    (lambda: geometric(1.0), "factor"),
    (lambda: geometric(0.0), "factor"),
    (lambda: geometric(math.inf), "factor"),
])
def test_walk_bad_arguments_raise_parameter_error(call, name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        call()


def test_creep_then_bisect_is_the_creep_when_it_passes_and_bounded_otherwise() -> None:
    from sufficientdp._numerics.search import creep_then_bisect

    calls: list[float] = []

    def test(x: float) -> tuple[bool, float]:
        calls.append(x)
        return x >= 1.0 + 5e-15, math.nan

    # passes within the creep's budget: the creep's point (an ulp plus 1e-15 relative per step)
    x = creep_then_bisect(test, 1.0, 2.0, rel=1e-15)
    assert x >= 1.0 + 5e-15 and len(calls) <= 5
    # a boundary far beyond the creep (1e-6 away, 1e9 ulps): 64 creep probes, then bisection to adjacent floats
    calls.clear()
    boundary = 1.0 + 1e-6
    y = creep_then_bisect(lambda v: (calls.append(v) or v >= boundary, math.nan), 1.0, 2.0, rel=1e-15)
    assert y >= boundary and math.nextafter(y, 0.0) < boundary and len(calls) <= 64 + 1100
    # from 0 (the subnormals: a creep alone would need ~2**52 probes)
    calls.clear()
    z = creep_then_bisect(lambda v: (calls.append(v) or v >= 1e-300, math.nan), 0.0, 1.0, rel=1e-15)
    assert z >= 1e-300 and len(calls) <= 64 + 1100
