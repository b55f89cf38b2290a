"""k > 1: the coarse dominating curves of the pair types are computed two at a time on large domains (issue 10:
`tail --bits 40 --population 1e7 --reports 2` 18 -> 13 s); the bound must be the one computed one type at a time."""

from __future__ import annotations

import pytest

from sufficientdp.ratio import proven


@pytest.mark.parametrize(("bits", "population", "q", "reports"), [(8, 10_000, 0.3, 3), (6, 2_000, 0.25, 2)])
def test_threaded_composed_bound_is_the_sequential_one(bits: int, population: int, q: float, reports: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out = []
    for threshold in (0, 10**12):  # threaded on every domain / never
        monkeypatch.setattr(proven, "_THREADED_CLASSES", threshold)
        proven._SHAPES.clear()
        proven._ROWS.clear()  # (else the second run reads the first one's rows)
        ev = proven.evaluate(q=q, population=population, epsilon=1.0, reports=reports,
                             domain=proven.Domain(bits=bits))
        out.append((ev.eta.hex(), ev.delta.hex(), ev.epsilon_prime.hex(), ev.worst, ev.by_type))
    assert out[0] == out[1]
    assert len(out[0][4]) == bits  # every pair type was bounded
