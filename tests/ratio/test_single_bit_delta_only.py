"""The delta-only scan at L = 1 (issue 10: the larger-crowds bound, which the collector's one-bit campaigns are
calibrated with, needs only delta at several e'): the worst delta's upper end is the full scan's, bit for bit.

At development 432 configurations were compared (n = 10**3..10**6, q = 3e-5..0.2, e' = 0.05..2); here a spread
of them that exercises both skipped and evaluated inner blocks, and the larger-crowds bound itself against the one
computed from the full scan."""

from __future__ import annotations

import numpy as np
import pytest

from sufficientdp.ratio import proven, single_bit
from sufficientdp.ratio.single_bit import single_bit_worst_tail, worst_delta_upper


@pytest.mark.parametrize("population", [1000, 40_000, 300_000])
def test_delta_only_scan_gives_the_full_scans_delta(population: int) -> None:
    for q in np.geomspace(1e-4, 0.2, 4):
        for e in (0.1, 0.49, 1.75):
            full = single_bit_worst_tail(population=population, q=float(q), epsilon=e).delta_upper
            assert worst_delta_upper(population=population, q=float(q), epsilon=e) == full, (q, e)


def test_delta_only_scan_skips_blocks_it_is_meant_to() -> None:
    """The scan without eta's interval bounds still skips the inner blocks whose delta bound is below the level
    (else it would be the full evaluation): at n = 300,000 most blocks are skipped."""
    pairs = single_bit._scan_all(300_000, 0.002, 0.45, delta_only=True)
    assert pairs.bounded >= 0.5 * 300_000


def test_larger_crowds_bound_is_the_one_from_the_full_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = proven.single_bit_larger_crowds(q=0.00064147, population=100_000, epsilon=0.5)
    monkeypatch.setattr(single_bit, "worst_delta_upper",
                        lambda **kw: single_bit_worst_tail(**kw).delta_upper)
    slow = proven.single_bit_larger_crowds(q=0.00064147, population=100_000, epsilon=0.5)
    assert fast.eta == slow.eta and fast.eta <= 1e-3


@pytest.mark.parametrize(("population", "q", "epsilon"), [(300_000, 0.002, 0.45), (1_000_000, 2.0128533e-05, 1.0),
                                                          (40_000, 0.01, 2.0), (100_000, 0.0005, 0.1)])
def test_eta_prefilter_through_delta_changes_no_result(population: int, q: float, epsilon: float,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact scan first bounds each block's eta through delta at smaller e' (milliseconds) and runs the
    contour bounds on intervals only for the blocks that does not settle (1.5 -> 0.4 s per scan at N = 10**6):
    every value, bracket and arg-max pair is the scan's without it (the blocks skipped can only be more)."""
    fast = single_bit.worst_over_crowds(population=population, q=q, epsilon=epsilon)
    calls = []
    real = single_bit._log_eta_upper
    monkeypatch.setattr(single_bit, "_log_eta_upper", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(single_bit, "_PRE_RATIOS", ())
    plain = single_bit.worst_over_crowds(population=population, q=q, epsilon=epsilon)
    a, b = fast.to_dict(), plain.to_dict()
    details_a, details_b = a.pop("details"), b.pop("details")
    assert a == b
    assert details_a["pairs_bounded"] >= details_b["pairs_bounded"]
    assert calls  # (without the prefilter the contour bounds ran: the comparison is with that scan)
