"""k > 1: the shortcuts of the composed bound give the eta of bounding every pair type in full (issue 10:
`calibrate --bits 40 --population 1e7 --epsilon 2 --reports 2` 44 -> 20 s, the same q).

The reference below is the composed bound as it was computed before them (every type's coarse curve from all its
points, then the fine curves from the largest bound down while it exceeds the largest refined one), written here
from the public pieces. The shortcuts: the widest type first, eta = 1 at once when its bound is trivial; a type
whose quick curve (6, 12 or 24 focus points, coarse; 24 on the mid, then the fine lattice) composes to at most the
widest type's bound keeps that (valid, looser) bound.
"""

from __future__ import annotations

import math

import pytest

from sufficientdp.loss.profile import compose_curve
from sufficientdp.ratio import proven


def _reference(q: float, population: int, epsilon: float, reports: int,
               dom: proven.Domain) -> tuple[float, float, float, str, dict[str, float]]:
    types = list(proven.pair_types(dom, q))
    log_gamma = proven.blanket_mass(dom, q)

    def one(pt: proven.PairType, res: float) -> tuple[str, float, float, float]:
        curve = proven.dominating_curve(pt, log_gamma=log_gamma, others=population - 1, resolution=res,
                                        focus=(-epsilon, 1.5 * epsilon), points=proven.DEFAULT_POINTS + 24)
        comp = compose_curve(curve, reports, epsilon)
        return pt.name, comp.eta, comp.eta * -math.expm1(comp.epsilon_prime - epsilon), comp.epsilon_prime

    resolution = proven.DEFAULT_RESOLUTION
    coarse = max(resolution, proven._COARSE)
    rows = {pt.name: one(pt, coarse) for pt in types}
    by_name = {pt.name: pt for pt in types}
    best_fine = -1.0
    for name in sorted(rows, key=lambda k: -rows[k][1]):
        if rows[name][1] <= best_fine:
            break
        fine = one(by_name[name], resolution)
        if fine[1] < rows[name][1]:
            rows[name] = fine
        best_fine = max(best_fine, rows[name][1])
    name, eta, delta, eps_p = max(rows.values(), key=lambda v: v[1])
    eta = min(1.0, eta * (1 + proven._REL_SAFETY) + 1e-15)
    return eta, delta, eps_p, name, {k: v[1] for k, v in rows.items()}


@pytest.mark.parametrize(("bits", "population", "epsilon", "reports", "q", "kind"), [
    (5, 1000, math.log(2), 2, 0.3, "all"),
    (8, 10_000, 1.0, 3, 0.36, "all"),
    (12, 1_000_000, 0.5, 4, 0.4, "all"),
    (6, 3000, 1.0, 2, 0.2, "onehot"),
    (4, 2000, 1.5, 2, 0.05, "all"),  # a trivial bound (eta = 1)
    (4, 2000, 1.5, 2, 0.08, "all"),  # next to it (eta 0.9996)
    (14, 100_000, 1.0, 2, 0.3, "all"),  # every quick curve taken (below)
])
def test_the_shortcuts_give_the_full_bound(bits: int, population: int, epsilon: float, reports: int, q: float,
                                           kind: str) -> None:
    dom = proven.Domain(bits=bits, kind=kind)
    ev = proven.evaluate(q=q, population=population, epsilon=epsilon, reports=reports, domain=dom)
    eta, delta, eps_p, worst, full = _reference(q, population, epsilon, reports, dom)
    assert ev.eta.hex() == eta.hex()
    if eta < 1.0:
        assert (ev.delta.hex(), ev.epsilon_prime.hex(), ev.worst) == (delta.hex(), eps_p.hex(), worst)
        # a type bounded from its first points only: a valid bound above its full one, at most the maximum
        got = dict(ev.by_type)
        assert set(got) == set(full)
        for name, value in got.items():
            assert value >= full[name] * (1 - 1e-12), name
            assert value <= max(full.values()), name
    else:  # trivial already for the widest type: only it is reported
        assert [name for name, _ in ev.by_type] == [proven._widest(list(proven.pair_types(dom, q))).name]


def test_some_types_keep_their_first_points_bound() -> None:
    """The shortcut is taken (else the test above would not test it): at L = 12 most types lie far below the
    widest one, and their reported bound is the first points' (larger than the full curve's)."""
    dom = proven.Domain(bits=12)
    ev = proven.evaluate(q=0.4, population=1_000_000, epsilon=0.5, reports=4, domain=dom)
    *_, full = _reference(0.4, 1_000_000, 0.5, 4, dom)
    looser = [name for name, value in ev.by_type if value > full[name]]
    assert looser


def test_every_quick_curve_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """At L = 14, N = 1e5, epsilon = 1, k = 2, q = 0.3 (in the reference test above) types stop after each quick
    curve: 6, 12 and 24 coarse points, 24 on the mid lattice, 24 on the fine one; the widest type gets its full
    curves. The quick curves' points are the full curve's focus points (one memo: none bounded twice)."""
    seen: dict[str, list[tuple[float, int]]] = {}
    bounded: list[tuple[str, float, float]] = []
    curve, delta = proven.dominating_curve, proven._blanket_delta

    def spy(pt: proven.PairType, **kw: object) -> object:
        seen.setdefault(pt.name, []).append((kw["resolution"], kw.get("screen", 0)))  # type: ignore[arg-type]
        return curve(pt, **kw)  # type: ignore[arg-type]

    def spy_delta(prep: object, **kw: object) -> float:
        bounded.append((prep.pair.name, kw["epsilon_prime"], kw["resolution"]))  # type: ignore[attr-defined]
        return delta(prep, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(proven, "dominating_curve", spy)
    monkeypatch.setattr(proven, "_blanket_delta", spy_delta)
    dom = proven.Domain(bits=14)
    proven.evaluate(q=0.3, population=100_000, epsilon=1.0, reports=2, domain=dom)
    stops = {name: calls[-1] for name, calls in seen.items()}
    coarse, mid, fine = proven._COARSE, proven._MID, proven.DEFAULT_RESOLUTION
    assert {(coarse, 4), (coarse, 2), (coarse, 1), (mid, 1), (fine, 1)} <= set(stops.values())
    assert stops[proven._widest(list(proven.pair_types(dom, 0.3))).name] == (fine, 0)
    for name, calls in seen.items():
        coarse_screens = [sc for res, sc in calls if res == coarse and sc]
        assert coarse_screens == [4, 2, 1][:len(coarse_screens)], name  # in order, each at most once
        refined = [(res, sc) for res, sc in calls if res < coarse]
        assert refined in ([], [(mid, 1)], [(mid, 1), (fine, 1)], [(mid, 1), (fine, 1), (fine, 0)]) or \
            name == proven._widest(list(proven.pair_types(dom, 0.3))).name, (name, refined)
    assert bounded and len(set(bounded)) == len(bounded)


def test_a_row_computed_before_is_reused_and_only_for_the_same_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A calibration's last probe bounds the widest type at the q it returns, and its final check needs that row
    again: the second evaluation computes no curve of it and gives the same Evaluation, float for float. Another q,
    epsilon, crowd or k computes its own."""
    made: list[tuple[str, float, int]] = []
    curve = proven.dominating_curve

    def spy(pt: proven.PairType, **kw: object) -> object:
        made.append((pt.name, kw["resolution"], kw.get("screen", 0)))  # type: ignore[arg-type]
        return curve(pt, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(proven, "dominating_curve", spy)
    dom = proven.Domain(bits=6)
    args = {"q": 0.3, "population": 10_000, "epsilon": 1.0, "reports": 2, "domain": dom}
    wide = proven._widest(list(proven.pair_types(dom, 0.3))).name
    probe = proven.evaluate(**args, only=frozenset([wide]))
    assert made and {name for name, _, _ in made} == {wide}
    made.clear()
    final = proven.evaluate(**args)
    assert made and wide not in {name for name, _, _ in made}
    proven._ROWS.clear()
    made.clear()
    fresh = proven.evaluate(**args)
    assert wide in {name for name, _, _ in made}
    assert repr(final) == repr(fresh) and dict(final.by_type)[wide] == dict(probe.by_type)[wide]
    for change in ({"q": 0.31}, {"epsilon": 1.1}, {"population": 10_001}, {"reports": 3}):
        made.clear()
        proven.evaluate(**{**args, **change}, only=frozenset([wide]))
        assert made, change
    from sufficientdp._numerics import positive_part

    monkeypatch.setattr(positive_part, "HEAVY_RATE", 2e-3)  # a tuning constant is part of the key too
    made.clear()
    proven.evaluate(**args, only=frozenset([wide]))
    assert made
