"""The fast all-pairs scan against the pre-issue-10 scan kept verbatim in ``tests/oracles/worst_crowds.py``.

Every field of every pair (values, brackets, cutoffs, counters) must agree bit for bit: the speed-up changes how the
same floating-point operations are laid out, not which ones are done.
"""

import math

import numpy as np
import pytest
from tests.oracles import worst_crowds as oracle

from sufficientdp.ratio import single_bit as sb

GRID = [(n, q, e) for n in (1, 2, 7, 50, 333, 2000) for q in (0.01, 0.2, 0.45) for e in (0.001, 0.1, 1.0, 3.0)]


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f"
                                              else a == b))


def _check_pairs(got, want) -> None:
    for k in ("m", "cutoff", "log_eta", "log_eta_lo", "log_eta_hi", "log_delta", "log_delta_lo", "log_delta_hi",
              "rel", "slow", "undecided", "nodes"):
        assert _same(getattr(got, k), getattr(want, k)), k


@pytest.mark.parametrize(("n", "q", "eps"), GRID)
def test_all_pairs_bit_for_bit(n: int, q: float, eps: float) -> None:
    ms = np.arange(n, dtype=np.int64)
    _check_pairs(sb._remove_pairs(n, q, eps, ms), oracle._remove_pairs(n, q, eps, ms))


@pytest.mark.parametrize(("n", "q", "eps"), [(20_000, 0.25, 0.01), (40_000, 0.1, 0.3), (5_000, 0.3, 0.2)])
def test_several_blocks_and_subsets_bit_for_bit(n: int, q: float, eps: float) -> None:
    for ms in (np.arange(n, dtype=np.int64), np.unique(np.r_[0:40, n // 3, n // 2 - 1, n - 40:n]).astype(np.int64)):
        _check_pairs(sb._remove_pairs(n, q, eps, ms), oracle._remove_pairs(n, q, eps, ms))


@pytest.mark.parametrize(("n", "q", "eps"), [(3000, 0.2, 0.5), (50, 0.45, 0.01), (100_000, 0.25, 0.01)])
@pytest.mark.parametrize(("shift", "kmult"), [(0, 2.0), (-5, 1.0), (5, 1.0), (None, 4.0)])
def test_retry_windows_bit_for_bit(n: int, q: float, eps: float, shift: int | None, kmult: float) -> None:
    """The second pass of ``_remove_pairs`` (moved windows, more nodes) and the resolution of missed windows."""
    ms = np.unique(np.linspace(0, n - 1, 300).round().astype(np.int64))
    b0 = None
    if shift is not None:
        b0 = np.clip(oracle._contour_block(n, q, eps, ms, None, 1.0)["base"] + shift, 0, n - 1)
    got, want = sb._contour_block(n, q, eps, ms, b0, kmult), oracle._contour_block(n, q, eps, ms, b0, kmult)
    assert got.keys() == want.keys()
    for k in want:
        assert _same(got[k], want[k]), k
    r_got, r_want = sb._resolve_block(n, got), oracle._resolve_block(n, want)
    assert r_got.keys() == r_want.keys()
    for k in r_want:
        assert _same(r_got[k], r_want[k]), k


def test_near_log_p_over_q() -> None:
    q = 0.2
    for eps in (math.log(4.0) * (1 - 1e-12), math.log(4.0) - 1e-6, math.nextafter(math.log(4.0), 0.0)):
        ms = np.arange(500, dtype=np.int64)
        _check_pairs(sb._remove_pairs(500, q, eps, ms), oracle._remove_pairs(500, q, eps, ms))


# --- skipping blocks (issue 10): the pruned scan against the full scan of the oracle

#: The fast suite (make test-fast) runs four of the 24 cases; make test runs them all.
_PRUNE_FAST = {(40_000, 0.25, 0.3), (70_001, 0.45, 0.02), (40_000, 0.05, 1.0), (70_001, 0.25, 2.5)}
PRUNE_GRID = [pytest.param(n, q, e, marks=() if (n, q, e) in _PRUNE_FAST else pytest.mark.slow)
              for n in (40_000, 70_001) for q in (0.05, 0.25, 0.45) for e in (0.02, 0.3, 1.0, 2.5)]


@pytest.mark.parametrize(("n", "q", "eps"), PRUNE_GRID)
def test_pruned_scan_equals_full_scan(n: int, q: float, eps: float) -> None:
    full = oracle._remove_pairs(n, q, eps, np.arange(n, dtype=np.int64))
    full = sb._Pairs(**{f: getattr(full, f) for f in oracle._Pairs.__dataclass_fields__})
    got = sb._scan_all(n, q, eps)
    a, b = sb._worst_result(n, q, eps, got).to_dict(), sb._worst_result(n, q, eps, full).to_dict()
    da, db = a.pop("details"), b.pop("details")
    assert a == b
    assert {k: v for k, v in da.items() if k.startswith("risky")} == {k: v for k, v in db.items()
                                                                        if k.startswith("risky")}
    skipped = got.log_eta == -np.inf
    skipped &= got.cutoff == -1
    assert int(skipped.sum()) >= got.bounded
    ev = ~skipped
    for k in ("cutoff", "log_eta", "log_eta_lo", "log_eta_hi", "log_delta", "log_delta_lo", "log_delta_hi"):
        assert _same(getattr(got, k)[ev], getattr(full, k)[ev]), k  # evaluated pairs: the full scan's numbers
    # a skipped pair's upper end is a proved bound: above the full scan's value
    assert np.all(full.log_eta[skipped] <= got.log_eta_hi[skipped])
    assert np.all(full.log_delta[skipped] <= got.log_delta_hi[skipped])


@pytest.mark.parametrize(("n", "q", "eps"), [(60, 0.2, 0.3), (500, 0.05, 1.0), (500, 0.45, 0.05), (3000, 0.25, 0.1),
                                             (3000, 0.1, 2.0), (20_000, 0.3, 0.5)])
def test_interval_bound_is_above_every_pair(n: int, q: float, eps: float) -> None:
    """``_log_eta_upper`` on random intervals (and whole ranges) against every pair's value in them."""
    full = oracle._remove_pairs(n, q, eps, np.arange(n, dtype=np.int64))
    rng = np.random.default_rng(n)
    lo = np.r_[0, n // 2, rng.integers(0, n, 40)]
    hi = np.minimum(n - 1, lo + np.r_[n - 1, 0, rng.integers(0, max(2, n // 10), 40)])
    ub = sb._log_eta_upper(n, q, eps, lo.astype(np.int64), hi.astype(np.int64))
    for a, b, u in zip(lo, hi, ub, strict=True):
        assert np.max(full.log_eta[a:b + 1]) <= u
        assert np.max(full.log_delta[a:b + 1]) <= u


def test_skips_far_blocks_at_moderate_epsilon() -> None:
    """The point of the pruning: at n = 1e5, q = 0.1, epsilon = 0.3 most blocks are proved below the worst."""
    got = sb._scan_all(100_000, 0.1, 0.3)
    assert got.bounded >= 60_000


@pytest.mark.parametrize(("n", "q", "eps"), [(500, 0.2, 0.05), (3000, 0.25, 0.01), (3000, 0.1, 1.0),
                                             (20_000, 0.45, 0.02)])
@pytest.mark.parametrize("span", [2, 17, 256])
def test_delta_interval_bound_is_above_every_pair(n: int, q: float, eps: float, span: int) -> None:
    """``_log_delta_upper`` (post-processing from population n - span + 1) against every pair in the interval."""
    full = oracle._remove_pairs(n, q, eps, np.arange(n, dtype=np.int64))
    lo = np.unique(np.r_[0, np.random.default_rng(span).integers(0, n - span + 1, 30), n - span]).astype(np.int64)
    ub = sb._log_delta_upper(n, q, eps, lo, span)
    for a, u in zip(lo, ub, strict=True):
        assert np.max(full.log_delta[a:a + span]) <= u


def _assert_worst_equal_and_skipped_bounded(n: int, q: float, eps: float, got: sb._Pairs, full: sb._Pairs) -> None:
    """The pruned scan ``got`` gives the full scan's worst case (details aside), and every skipped pair's upper ends
    are above the full scan's values."""
    a, b = sb._worst_result(n, q, eps, got).to_dict(), sb._worst_result(n, q, eps, full).to_dict()
    a.pop("details"), b.pop("details")
    assert a == b
    skipped = got.cutoff == -1
    assert np.all(full.log_eta[skipped] <= got.log_eta_hi[skipped])
    assert np.all(full.log_delta[skipped] <= got.log_delta_hi[skipped])


@pytest.mark.slow
def test_pruned_scan_at_small_epsilon_equals_full_scan() -> None:
    """Where the landscape over m is flat (small epsilon) the blocks are skipped on refined intervals."""
    n, q, eps = 300_000, 0.25, 0.01
    full = oracle._remove_pairs(n, q, eps, np.arange(n, dtype=np.int64))
    full = sb._Pairs(**{f: getattr(full, f) for f in oracle._Pairs.__dataclass_fields__})
    got = sb._scan_all(n, q, eps)
    assert got.bounded > 0
    _assert_worst_equal_and_skipped_bounded(n, q, eps, got, full)


@pytest.mark.parametrize(("n", "q", "eps"), [(40_000, 0.25, 0.0), pytest.param(40_000, 0.25, 1e-9, marks=pytest.mark.slow),
                                             pytest.param(70_000, 0.001, 3.0, marks=pytest.mark.slow),
                                             (50_000, 0.49, 1e-3), (40_000, 0.25, math.log(3.0))])
def test_pruned_scan_edge_epsilons(n: int, q: float, eps: float) -> None:
    """epsilon = 0 (the bound's slope is 0), tiny, large with q tiny, q near 1/2, and at log(p/q)."""
    full = oracle._remove_pairs(n, q, eps, np.arange(n, dtype=np.int64))
    full = sb._Pairs(**{f: getattr(full, f) for f in oracle._Pairs.__dataclass_fields__})
    a = sb._worst_result(n, q, eps, sb._scan_all(n, q, eps)).to_dict()
    b = sb._worst_result(n, q, eps, full).to_dict()
    a.pop("details"), b.pop("details")
    assert a == b


def test_interval_bound_over_its_node_budget_is_trivial(monkeypatch: pytest.MonkeyPatch) -> None:
    """An interval bound that would need more nodes than ``_ETA_BOUND_NODES`` is not computed: eta <= 1."""
    lo = np.array([0, 5_000], dtype=np.int64)
    hi = lo + 50
    assert np.all(sb._log_eta_upper(10_000, 0.1, 0.3, lo, hi) < -40.0)
    monkeypatch.setattr(sb, "_ETA_BOUND_NODES", 1)
    assert sb._log_eta_upper(10_000, 0.1, 0.3, lo, hi).tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("n", "q", "eps"), [(100_000, 0.000563, 0.5), (40_000, 0.002, 1.0)])
def test_pruned_scan_with_capped_interval_bounds_equals_full_scan(n: int, q: float, eps: float) -> None:
    """Small q at large n: a block-wide interval bound lies deep in its law's tail and took millions of nodes
    (5.6 s of a 6.2 s scan at n = 1e5, q = 5.6e-4, calibrate --bits 1); over ``_ETA_BOUND_NODES`` it is trivial
    and the interval split. The scan must still give the full scan's worst case, and proved upper ends."""
    calls: list[bool] = []
    plain = sb._contour_block

    def spy(*args: object, **kwargs: object) -> object:
        out = plain(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(out is None)
        return out

    full = oracle._remove_pairs(n, q, eps, np.arange(n, dtype=np.int64))
    full = sb._Pairs(**{f: getattr(full, f) for f in oracle._Pairs.__dataclass_fields__})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sb, "_contour_block", spy)
        mp.setattr(sb, "_PRE_RATIOS", ())  # (no first bound through delta: the interval bounds run, and their cap)
        if n < 100_000:
            mp.setattr(sb, "_ETA_BOUND_NODES", 2_000)  # (the cap then binds here too)
        got = sb._scan_all(n, q, eps)
    assert any(calls)  # the cap was hit
    _assert_worst_equal_and_skipped_bounded(n, q, eps, got, full)
