"""The T-round bound screens the pair types with their curves of the first 26 bounds (issue 10: the screen had been
a 32-point curve on a coarser lattice, which costs as much per point at L = 40 as the answer's lattice; a full
check at L = 40 took 22 s, now about 13 s). The types bounded in full continue from those bounds (the same floats as
a fresh curve), and the screened result must be the one of bounding every type in full: the same eta and delta with
fixed values, the same up to float rounding of the envelope's vertices with changing values."""

from __future__ import annotations

import math

import pytest

from sufficientdp.accounting.rounds import _SCREEN_POINTS, evaluate_rounds
from sufficientdp.loss.profile import compose_curve, envelope
from sufficientdp.ratio import proven


def _every_type_in_full(q: float, population: int, bits: int, n: int, epsilon: float,
                        points: int = proven.DEFAULT_POINTS) -> list[proven.DominatingCurve]:
    dom = proven.Domain(bits=bits)
    lg = proven.blanket_mass(dom, q)
    return [proven.dominating_curve(pt, log_gamma=lg, others=population - 1, resolution=proven.DEFAULT_RESOLUTION,
                                    points=points) for pt in proven.pair_types(dom, q)]


def _same(a: proven.DominatingCurve, b: proven.DominatingCurve) -> bool:
    return a.epsilons.tobytes() == b.epsilons.tobytes() and a.deltas.tobytes() == b.deltas.tobytes()


@pytest.mark.parametrize(("bits", "population", "q", "n", "epsilon"),
                         [(8, 10_000, 0.3, 3, 1.5), (6, 2_000, 0.25, 4, 1.0), (12, 10_000, 0.35, 4, 1.5)])
def test_screened_bound_is_the_bound_of_every_type_in_full(bits: int, population: int, q: float, n: int,
                                                          epsilon: float) -> None:
    full = _every_type_in_full(q, population, bits, n, epsilon)
    by_name = {c.name: c for c in full}
    comps = [compose_curve(c, n, epsilon) for c in full]
    fixed = evaluate_rounds(q=q, population=population, epsilon=epsilon, n=n, domain=proven.Domain(bits=bits),
                            values="fixed")
    assert fixed.eta == max(c.eta for c in comps)
    assert fixed.delta == max(c.delta for c in comps)
    # the curves bounded in full are the fresh ones, bit for bit; the others are their first points' fresh curves
    first = {c.name: c for c in _every_type_in_full(q, population, bits, n, epsilon, points=_SCREEN_POINTS)}
    refined = [c for c in fixed.curves if _same(c, by_name[c.name])]
    assert refined and len(refined) < len(full)  # (the screen did leave some types out)
    assert all(_same(c, first[c.name]) for c in fixed.curves if not _same(c, by_name[c.name]))
    changing = evaluate_rounds(q=q, population=population, epsilon=epsilon, n=n, domain=proven.Domain(bits=bits),
                               values="changing")
    every = compose_curve(envelope(full), n, epsilon)
    assert math.isclose(changing.eta, every.eta, rel_tol=1e-9)
    assert math.isclose(changing.delta, every.delta, rel_tol=1e-9)
    assert changing.evaluations < len(full) * proven.DEFAULT_POINTS
