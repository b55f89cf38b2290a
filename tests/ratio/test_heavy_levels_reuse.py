"""The heavy sums of the positive-part bound, enumerated faster (issue 10: at L = 96 and eta = 1e-6 one bound took
seconds re-enumerating and re-sorting the same sums): each new level merges sorted runs instead of sorting afresh
(``_add_one_heavy_draw``), and the levels already enumerated for one input are reused when the heavy remainder
asks for more counts (``_Levels``). Both must give the floats of the plain computation, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from sufficientdp._numerics import positive_part
from sufficientdp._numerics.positive_part import _add_one_heavy_draw, _heavy_laws, _Levels


def _plain_level(ys: np.ndarray, ps: np.ndarray, hv: np.ndarray, hq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The formulation the enumeration used before: np.unique of the row-per-ys sums, bincount of the inverse."""
    sums = (ys[:, None] + hv[None, :]).ravel()
    probs = (ps[:, None] * hq[None, :]).ravel()
    uniq, inv = np.unique(sums, return_inverse=True)
    return uniq.astype(float), np.bincount(inv.ravel(), weights=probs).astype(float)


def _heavy_atoms(seed: int, smallest: int, largest: int) -> tuple[int, np.ndarray, np.ndarray]:
    """k heavy atoms of both signs, some on a coarse grid (so that many sums coincide exactly), some not, and their
    probabilities."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(smallest, largest))
    hv = np.where(rng.random(k) < 0.5, np.round(rng.normal(size=k) * 4) / 4, rng.normal(size=k) * 3)
    hq = rng.random(k)
    return k, hv, hq / hq.sum()


@pytest.mark.parametrize("seed", range(6))
def test_one_more_heavy_draw_is_the_unique_of_all_sums(seed: int) -> None:
    k, hv, hq = _heavy_atoms(seed, 1, 30)
    ys, ps = np.zeros(1), np.ones(1)
    for _ in range(4):
        plain = _plain_level(ys, ps, hv, hq)
        ys, ps = _add_one_heavy_draw(ys, ps, hv, hq)
        assert ys.tobytes() == plain[0].tobytes()
        assert ps.tobytes() == plain[1].tobytes()
    assert ys.size < k ** 4 or k == 1  # (coinciding sums were merged)


def _laws_bytes(out: tuple | None) -> object:
    if out is None:
        return None
    lv, lp, gamma_l, laws, tail = out
    return (lv.tobytes(), lp.tobytes(), gamma_l, [(y.tobytes(), w.tobytes()) for y, w in laws], tail)


def test_reused_levels_give_the_floats_of_a_fresh_enumeration(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    v = np.concatenate([rng.normal(size=200), 1000 / 1.15 ** np.arange(30)])  # 30 rare heavy atoms, 1000 to 17
    pi = np.concatenate([np.full(200, (1 - 30e-9) / 200), np.full(30, 1e-9)])
    gamma, n = 0.3, 20_000
    monkeypatch.setattr(positive_part, "_HEAVY_ATOMS", 20_000)  # (an overflow within a few levels)
    shared: dict[int, _Levels] = {}
    seen_overflow = False
    for tail_power in (1e-9, 1e-13, 1e-17, 1e-21, 1e-25):
        fresh = _heavy_laws(v, pi, gamma, n, tail_power)
        reused = _heavy_laws(v, pi, gamma, n, tail_power, shared)
        assert _laws_bytes(reused) == _laws_bytes(fresh)
        seen_overflow |= any(lv.overflow is not None for lv in shared.values())
    assert seen_overflow  # the overflow shortcut was exercised
    assert len(shared) >= 2  # (and the fallback to fewer heavy atoms)


@pytest.mark.parametrize(("seed", "smallest", "largest"), [(10, 5, 25), (11, 5, 25), (12, 5, 25), (20, 12, 30),
                                                          (21, 12, 30), (22, 12, 30), (23, 12, 30)])
def test_a_level_is_refused_exactly_when_over_its_limit(seed: int, smallest: int, largest: int) -> None:
    # A level over its limit is refused once its distinct sums are counted, before their probabilities are added; one
    # of more than 3 * limit sums is first counted on its first rows (at least 3 * limit sums): refused there only
    # when those alone hold more than `limit` distinct sums, which the whole level then does too. Every limit,
    # small (the early count decides) to large (the whole level decides), must give the plain answer: None exactly
    # when the level has more than `limit` distinct sums, else the level itself.
    _, hv, hq = _heavy_atoms(seed, smallest, largest)
    ys, ps = np.zeros(1), np.ones(1)
    for _ in range(3):
        full = _add_one_heavy_draw(ys, ps, hv, hq)
        assert full is not None
        count = full[0].size
        early = 0
        for limit in sorted({1, 2, 3, count // 8, count // 4, count // 3, count // 2, count - 1, count, count + 1}):
            if limit < 1:
                continue
            early += ys.size * hv.size > 3 * limit
            got = _add_one_heavy_draw(ys, ps, hv, hq, limit=limit)
            if count > limit:
                assert got is None, (limit, count)
            else:
                assert got is not None and got[0].tobytes() == full[0].tobytes()
                assert got[1].tobytes() == full[1].tobytes()
        assert early  # (the early count was reached)
        ys, ps = full
