"""Dominating curves skip the points whose float allowance alone lies above the hull (issue 10).

``loss.profile.curve_from_bounds(above=...)``: a point whose known least value (for the blanket bound: the
floating-point allowance every bound at that e' carries, which grows like e**e') exceeds twice the chord through
the points already bounded beside it cannot be a vertex of the lower hull, so it is not bounded. The curves must be
the very curves of bounding every point (the same vertices, the same floats), with fewer bounds computed at large L;
and where a stand-in would end up on the hull, it is bounded after all.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from sufficientdp.loss import profile
from sufficientdp.ratio import proven
from sufficientdp.ratio.proven import Domain, blanket_mass, pair_types


def _without_above(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = profile.curve_from_bounds

    def every_point(*args: Any, **kwargs: Any) -> profile.DominatingCurve:
        kwargs.pop("above", None)
        return plain(*args, **kwargs)

    monkeypatch.setattr(profile, "curve_from_bounds", every_point)


@pytest.mark.parametrize(("bits", "population", "q", "points", "resolution"), [
    (12, 10**5, 0.30, 48, 5e-4),
    (24, 10**6, 0.36, 18, 0.05),
    (40, 10**7, 0.3788682807146893, 72, 0.05),  # the k = 2 calibration's answer at L = 40, N = 1e7, epsilon 2
])
def test_curves_are_those_of_bounding_every_point(bits: int, population: int, q: float, points: int,
                                                  resolution: float, monkeypatch: pytest.MonkeyPatch) -> None:
    dom = Domain(bits=bits)
    log_gamma = blanket_mass(dom, q)
    types = list(pair_types(dom, q))
    picked = types[:: max(1, len(types) // 4)]
    kw = {"log_gamma": log_gamma, "others": population - 1, "resolution": resolution, "points": points,
          "focus": (-2.0, 3.0)}
    fast = [proven.dominating_curve(pt, **kw) for pt in picked]
    with monkeypatch.context() as m:
        _without_above(m)
        slow = [proven.dominating_curve(pt, **kw) for pt in picked]
    for a, b in zip(fast, slow, strict=True):
        assert a.epsilons.tobytes() == b.epsilons.tobytes(), a.name
        assert a.deltas.tobytes() == b.deltas.tobytes(), a.name
        assert a.evaluations <= b.evaluations
    if bits >= 24:  # large L: the allowance passes the curve at large e', where bounds are the costliest
        assert sum(c.evaluations for c in fast) < sum(c.evaluations for c in slow)


def test_the_least_value_is_at_most_the_bound() -> None:
    # the contract of `above`: the blanket bound at e' is at least its allowance, at every e' (small and large)
    dom = Domain(bits=16)
    q = 0.33
    pt = max(pair_types(dom, q), key=lambda p: float(np.max(np.abs(p.log_p - p.log_q))))
    prep = proven._prepare(pt)
    top = float(np.max(np.abs(pt.log_p - pt.log_q)))
    for e in np.linspace(-top, top, 23):
        least = proven._local_and_safety(prep, float(e))[1]
        bound = proven._blanket_delta(prep, log_gamma=blanket_mass(dom, q), others=10**6 - 1,
                                      epsilon_prime=float(e), resolution=0.05)
        assert least <= bound


def test_a_stand_in_on_the_hull_is_bounded_after_all(monkeypatch: pytest.MonkeyPatch) -> None:
    # Force every point to be skipped (a chord of 0): the stand-ins (0.9 of the bound) then form the hull, and
    # each that is a vertex must be bounded after all, until every vertex is a value of delta_of.
    lam = 1.5  # two randomized responses: losses 2 lam, 0, -2 lam under P with p**2, 2pq, q**2 (a kink at 0)
    p = math.exp(lam) / (1.0 + math.exp(lam))
    law = ((2 * lam, p * p), (0.0, 2 * p * (1 - p)), (-2 * lam, (1 - p) ** 2))

    def exact(e: float) -> float:
        return sum(w * max(-math.expm1(e - loss), 0.0) for loss, w in law)

    def delta_of(e: float) -> float:  # an upper bound, loose in places (as the lattice bounds are)
        return exact(e) * (1.0 + 0.5 * math.sin(3.0 * e) ** 2)

    calls: list[float] = []

    def counted(e: float) -> float:
        calls.append(e)
        return delta_of(e)

    monkeypatch.setattr(profile, "_chord", lambda vals, e: 0.0)
    curve = profile.curve_from_bounds(counted, name="rr2", top=2 * lam + 1e-9, points=30, resolution=0.0,
                                      above=lambda e: 0.9 * delta_of(e))
    inner = curve.epsilons[1:-1]
    assert inner.size > 0
    for e, d in zip(inner, curve.deltas[1:-1], strict=True):
        assert float(e) in calls
        assert d == max(delta_of(float(e)), max(-math.expm1(min(float(e), 0.0)), 0.0))
    assert curve.evaluations == len(set(calls)) < 30  # only the vertices were bounded
    # and the curve is valid: above the exact curve everywhere
    grid = np.linspace(-2 * lam, 2 * lam, 101)
    assert np.all(curve(grid) >= np.array([exact(float(e)) for e in grid]) - 1e-15)


@pytest.mark.parametrize("screen", [4, 2, 1])
def test_a_quick_curve_bounds_every_screen_th_focus_point_only(screen: int) -> None:
    """``curve_from_bounds(screen=s)``: exactly every s-th of the 24 inner focus points (clipped to the loss's
    range), which are points of the full curve too, nothing else; a valid curve above the full one's hull."""
    asked: list[float] = []

    def delta_of(e: float) -> float:  # the hockey-stick curve of randomized response with loss +-1
        asked.append(e)
        return max(0.0, (math.e - math.exp(e)) / (1.0 + math.e))

    quick = profile.curve_from_bounds(delta_of, name="rr", top=1.0, points=48, resolution=0.05, focus=(-0.5, 3.0),
                                      screen=screen)
    focus = [float(x) for x in np.linspace(-0.5, 1.0, profile._FOCUS_POINTS)[1:-1]]  # (clipped at top = 1)
    assert asked == focus[::screen]
    asked.clear()
    full = profile.curve_from_bounds(delta_of, name="rr", top=1.0, points=48, resolution=0.05, focus=(-0.5, 3.0))
    assert set(focus) <= set(asked) and len(asked) > len(focus)
    grid = np.linspace(-1.2, 1.2, 97)
    assert np.all(quick(grid) >= full(grid) - 1e-12)
    with pytest.raises(ValueError, match="focus"):
        profile.curve_from_bounds(delta_of, name="rr", top=1.0, points=48, resolution=0.05, screen=screen)
