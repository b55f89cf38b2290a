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
