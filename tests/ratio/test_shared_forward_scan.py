"""The homogeneous calibration's forward scan over j shared with a helper process (issue 10; `ratio.tail.
_shared_tight_scan`): this thread takes j from the top, the helper from the bottom, until they meet. The bound, the
worst j and the verdict must be those of the scan in one thread: on real bounds (with a real child), and on made-up
per-j values that put the first failing j on either side, ties between the sides, and every j on one side."""

from __future__ import annotations

import sys

import pytest
from tests.offload_spies import record_from_child

from sufficientdp import _offload
from sufficientdp._offload import Helper
from sufficientdp.ratio import tail


def _scan(q: float, bits: int, population: int, epsilon: float, fail_above: float,
          helper: Helper | None) -> tuple[float, int, bool]:
    b, _, jw, _, complete = tail.worst_certified_forward(q, bits, population, epsilon, fail_above=fail_above,
                                                         tight=True, helper=helper)
    return b, jw, complete


@pytest.mark.parametrize(("bits", "population", "epsilon", "qs"), [
    (20, 100_000, 1.0, (0.30, 0.33, 0.345, 0.36, 0.40)),
    (24, 10**6, 2.0, (0.25, 0.30, 0.32, 0.34)),
])
def test_the_shared_scan_gives_the_one_thread_bound(bits: int, population: int, epsilon: float,
                                                    qs: tuple[float, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    seen = record_from_child(monkeypatch, _offload.Pending)
    verdicts = set()
    helper = Helper()
    try:
        for q in qs:
            for fail_above in (1e-3, 1e-6):
                alone = _scan(q, bits, population, epsilon, fail_above, None)
                shared = _scan(q, bits, population, epsilon, fail_above, helper)
                assert (shared[0].hex(), shared[1], shared[2]) == (alone[0].hex(), alone[1], alone[2]), (q, fail_above)
                verdicts.add(alone[2])
    finally:
        helper.close()
    assert verdicts == {True, False}  # passing and failing q both met
    assert seen and all(seen)  # the child bounded some of the j


@pytest.mark.parametrize("values", [
    {9: 0.5, 8: 0.7, 7: 0.2, 6: 0.7, 5: 0.1, 4: 0.0, 3: 0.3, 2: 0.7, 1: 0.6},  # passes; a tie across the sides
    {9: 0.5, 8: 0.7, 7: 1.5, 6: 0.7, 5: 0.1, 4: 0.0, 3: 0.3, 2: 0.2, 1: 0.6},  # fails high (this thread's j)
    {9: 0.5, 8: 0.7, 7: 0.2, 6: 0.7, 5: 0.1, 4: 0.0, 3: 0.3, 2: 1.2, 1: 0.6},  # fails low (the helper's j)
    {9: 0.5, 8: 0.7, 7: 0.2, 6: 0.7, 5: 1.1, 4: 0.0, 3: 0.3, 2: 1.2, 1: 1.6},  # fails on both sides
    {9: 1.5, 8: 0.7, 7: 0.2, 6: 0.7, 5: 0.1, 4: 0.0, 3: 0.3, 2: 0.2, 1: 0.6},  # fails at j = L
    {9: 0.0, 8: 0.0, 7: 0.0, 6: 0.0, 5: 0.0, 4: 0.0, 3: 0.0, 2: 0.0, 1: 0.0},  # nothing can exceed
])
def test_the_shared_scan_meets_the_first_failure_from_the_top(values: dict[int, float],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # made-up bounds, the helper's calls run here on a second thread (a helper whose child cannot start)
    calls: list[int] = []

    def made_up(q: float, j: int, population: int, epsilon: float, stop: float,
                want_lower: bool = True) -> tuple[float, float]:
        calls.append(j)
        return values[j], values[j] / 2

    monkeypatch.setattr(tail, "_forward_bound", made_up)
    alone = _scan(0.3, 9, 100, 0.5, 1.0, None)  # (every j can exceed at epsilon = 0.5)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    helper = Helper()
    assert not helper.alive
    calls.clear()
    shared = tail._shared_tight_scan(0.3, 9, 100, 0.5, 1.0, helper)
    assert (shared[0], shared[2], shared[4]) == alone
    assert len(calls) == len(set(calls))  # every j bounded at most once
