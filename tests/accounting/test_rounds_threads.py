"""The T-round bound bounds the pair types' curves on two threads on large domains, the next refinement alongside
(issue 10: `calibrate --bits 40 --population 1e6 --epsilon 2 --rounds 4` 105 s -> about half); the result must be
the one computed one curve at a time, in order: every number, the curves refined and their count."""

from __future__ import annotations

import pytest

from sufficientdp.accounting.rounds import evaluate_rounds
from sufficientdp.ratio import proven


@pytest.mark.parametrize("values", ["changing", "fixed"])
@pytest.mark.parametrize(("bits", "population", "q", "n"), [(8, 10_000, 0.3, 3), (6, 2_000, 0.25, 4)])
def test_threaded_rounds_bound_is_the_sequential_one(values: str, bits: int, population: int, q: float, n: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out = []
    for threshold in (0, 10**12):  # threaded on every domain / never
        monkeypatch.setattr(proven, "_THREADED_CLASSES", threshold)
        ticks: list[tuple[int, int]] = []
        r = evaluate_rounds(q=q, population=population, epsilon=1.0, n=n, domain=proven.Domain(bits=bits),
                            values=values, resolution=proven.DEFAULT_RESOLUTION,
                            progress=lambda d, t: ticks.append((d, t)))
        out.append((r.eta.hex(), r.delta.hex(), r.epsilon_prime.hex(), r.worst, r.by_type, r.evaluations,
                    [(c.name, c.resolution, c.epsilons.tobytes(), c.deltas.tobytes()) for c in r.curves]))
        assert ticks and ticks[-1][0] == ticks[-1][1]  # the progress ends at its total
    assert out[0] == out[1]
