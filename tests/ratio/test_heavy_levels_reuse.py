"""The heavy sums of the positive-part bound (``_numerics.positive_part``, step 2): level ``r`` is the law of the sum of
``r`` iid heavy draws, one atom per multiset of heavy atoms (``_next_level``, issue 10: enumerating every sequence
and merging equal floats was half of a T-round bound, and a multiset's sum added in different orders left up to 3
floats per multiset). Checked against every sequence of draws, by brute force; and the levels already enumerated
for one input are reused when the heavy remainder asks for more counts (``_Levels``), with the floats of a fresh
enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from sufficientdp._numerics import positive_part
from sufficientdp._numerics.positive_part import _heavy_laws, _Levels, _next_level


def _heavy_atoms(seed: int, smallest: int, largest: int, *, grid: bool) -> tuple[int, np.ndarray, np.ndarray]:
    """k heavy atoms of both signs (integers when ``grid``, so that sums are exact and many coincide) and their
    probabilities."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(smallest, largest))
    hv = rng.integers(-6, 7, size=k).astype(float) if grid else rng.normal(size=k) * 3
    hq = rng.random(k)
    return k, hv, hq / hq.sum()


def _levels(hv: np.ndarray, hq: np.ndarray, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    lev = _Levels()
    for r in range(count):
        ys, ps = lev.sums[-1]
        ys, ps, lev.last, lev.mult = _next_level(ys, ps, lev.last, lev.mult, hv, hq, r)
        lev.sums.append((ys, ps))
    return lev.sums


@pytest.mark.parametrize("seed", range(6))
def test_each_level_is_the_law_of_every_sequence_of_draws(seed: int) -> None:
    # integer atoms: every sum is exact, so the law by value can be compared with the brute-force sum over all
    # k**r sequences, whose probabilities are added in exact rational arithmetic
    k, hv, hq = _heavy_atoms(seed, 1, 7, grid=True)
    exact_q = [Fraction(float(x)) for x in hq]
    for r, (ys, ps) in enumerate(_levels(hv, hq, 4)):
        assert ys.size == ps.size == math.comb(k + r - 1, r)  # one atom per multiset
        brute: dict[float, Fraction] = {}
        for seq in itertools.product(range(k), repeat=r):
            value = float(sum(hv[list(seq)])) if seq else 0.0
            brute[value] = brute.get(value, Fraction(0)) + math.prod((exact_q[i] for i in seq), start=Fraction(1))
        got: dict[float, float] = {}
        for y, p in zip(ys.tolist(), ps.tolist()):
            got[y] = got.get(y, 0.0) + p
        assert set(got) == set(brute)
        for value, prob in brute.items():
            assert got[value] == pytest.approx(float(prob), rel=1e-13, abs=1e-300)


@pytest.mark.parametrize("seed", range(4))
def test_real_atoms_give_the_moments_and_positive_parts_of_every_sequence(seed: int) -> None:
    # real atoms: sums of a multiset in different orders differ by an ulp, so the law is compared through smooth
    # functionals (total mass, mean, E[(Y - c)_+] at several c), to rounding
    k, hv, hq = _heavy_atoms(seed + 40, 2, 9, grid=False)
    for r, (ys, ps) in enumerate(_levels(hv, hq, 3)):
        listed = list(itertools.product(range(k), repeat=r))
        seqs = np.array(listed, dtype=np.intp).reshape(len(listed), r)
        values = hv[seqs].sum(axis=1)
        probs = hq[seqs].prod(axis=1)
        assert float(ps.sum()) == pytest.approx(1.0, rel=1e-13)
        assert float(ps @ ys) == pytest.approx(float(probs @ values), rel=1e-12, abs=1e-12)
        for c in (-4.0, -1.0, 0.0, 0.5, 3.0):
            assert float(ps @ np.maximum(ys - c, 0.0)) == pytest.approx(
                float(probs @ np.maximum(values - c, 0.0)), rel=1e-12, abs=1e-12)


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
    monkeypatch.setattr(positive_part, "_HEAVY_ATOMS", 20_000)  # (a level over it within a few counts)
    shared: dict[int, _Levels] = {}
    for tail_power in (1e-9, 1e-13, 1e-17, 1e-21):
        fresh = _heavy_laws(v, pi, gamma, n, tail_power)
        reused = _heavy_laws(v, pi, gamma, n, tail_power, shared)
        assert _laws_bytes(reused) == _laws_bytes(fresh)
        assert reused is not None and reused[3][-1][0].size <= 20_000
    assert len(shared) >= 2  # (a level over the limit: the fallback to fewer heavy atoms was exercised)


@pytest.mark.parametrize("limit_offset", [-1, 0])
def test_a_split_is_refused_exactly_when_its_largest_level_is_over_the_limit(monkeypatch: pytest.MonkeyPatch,
                                                                            limit_offset: int) -> None:
    rng = np.random.default_rng(5)
    v = np.concatenate([rng.normal(size=100), 500 / 1.2 ** np.arange(12)])  # 12 rare heavy atoms
    pi = np.concatenate([np.full(100, (1 - 12e-9) / 100), np.full(12, 1e-9)])
    gamma, n, tail_power = 0.5, 100_000, 1e-12
    free = _heavy_laws(v, pi, gamma, n, tail_power)
    assert free is not None
    laws = free[3]
    k = laws[1][0].size  # (level 1: one atom per heavy atom)
    top = laws[-1][0].size
    assert top == math.comb(k + len(laws) - 2, len(laws) - 1)
    monkeypatch.setattr(positive_part, "_HEAVY_ATOMS", top + limit_offset)
    got = _heavy_laws(v, pi, gamma, n, tail_power)
    if limit_offset == 0:  # exactly at the limit: the same split
        assert _laws_bytes(got) == _laws_bytes(free)
    else:  # one atom over: a smaller split (fewer heavy atoms) or none
        assert got is None or got[3][1][0].size < k
