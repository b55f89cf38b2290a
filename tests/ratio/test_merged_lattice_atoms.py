"""The rounded atoms of one lattice value merged into one (positive_part._merge_cells, issue 10: large L).

A pair type of the full domain at L = 256 has up to 33,282 report classes; on the lattice they fall on a few hundred
to a few thousand values. Merging them is the same law, so the bound must be the same up to the order of float
additions: checked against the unmerged computation on a grid of large-domain pair types, and against the exact
compound law on many atoms.
"""

from __future__ import annotations

import numpy as np
import pytest

from sufficientdp._numerics import positive_part
from sufficientdp._numerics.positive_part import _merge_cells, compound_positive_part_upper
from sufficientdp.ratio import proven
from sufficientdp.ratio.proven import Domain, blanket_mass, pair_types


def _merged_by_loop(kv: np.ndarray, kp: np.ndarray) -> tuple[list[float], list[float]]:
    sums: dict[float, float] = {}
    for v, p in zip(kv.tolist(), kp.tolist(), strict=True):  # input order, as bincount adds
        sums[v] = sums.get(v, 0.0) + p
    keys = sorted(sums)
    return keys, [sums[k] for k in keys]


@pytest.mark.parametrize("span", [40, 10**7])  # one count per value of the span / by sorting
@pytest.mark.parametrize("seed", range(3))
def test_merge_sums_each_lattice_value_in_input_order(span: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    kv = rng.integers(-span // 2, span // 2, size=5000).astype(float)
    kp = rng.random(5000)
    values, sums = _merge_cells(kv, kp)
    keys, expected = _merged_by_loop(kv, kp)
    assert values.dtype == np.float64 and sums.dtype == np.float64
    assert values.tolist() == keys
    assert sums.tolist() == expected  # the same floats: each value's atoms added in input order


def _integer_law(values: np.ndarray, probs: np.ndarray, gamma: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = int(min(0, values.min())), int(max(0, values.max()))
    one = np.zeros(hi - lo + 1)
    np.add.at(one, values.astype(np.int64) - lo, gamma * probs)
    one[-lo] += 1 - gamma
    law = np.ones(1)
    for _ in range(n):
        law = np.convolve(law, one)
    return np.arange(law.size) + lo * n, law


@pytest.mark.parametrize("merge_from", [2048, 10**9])  # merged (the default at 3,000 atoms) and unmerged
@pytest.mark.parametrize(("gamma", "n"), [(0.2, 300), (0.05, 120), (1.0, 40)])
def test_bound_on_many_atoms_is_above_and_near_the_exact_value(gamma: float, n: int, merge_from: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(positive_part, "_MERGE_ATOMS", merge_from)
    positive_part._MEMO.clear()
    positive_part._memo_floats[0] = 0
    rng = np.random.default_rng(7)
    values = rng.integers(-9, 12, size=3000).astype(float)  # 3,000 atoms on 21 values, mean about 0.5
    values -= 0.6 * (values > 8)  # (a few off the integers, so the rounding splits them)
    probs = rng.random(3000)
    probs /= probs.sum()
    scaled = np.round(values * 5).astype(np.int64)  # exact law on a grid of 0.2
    support, law = _integer_law(scaled.astype(float), probs, gamma, n)
    exact = float(law @ np.maximum(support / 5.0, 0.0))
    b = compound_positive_part_upper(values, probs, gamma=gamma, n=n)
    assert exact <= b.upper * (1 + 1e-10)
    assert b.upper <= exact * (1 + 2e-3)


@pytest.mark.parametrize(("bits", "q"), [(128, 0.45), (256, 0.48)])
def test_merged_bound_is_the_unmerged_one_on_large_domain_types(bits: int, q: float,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    dom = Domain(bits=bits)
    log_gamma = blanket_mass(dom, q)
    types = list(pair_types(dom, q))
    picked = [t for t in types if t.log_p.size >= 2048][:: max(1, bits // 32)][:4]
    assert picked  # the merge runs on these
    seen = 0
    for pt in picked:
        prep = proven._prepare(pt)
        for others in (999, 10**7 - 1):
            for eps_p in (0.3, 0.9):
                values = []
                for merge_from in (2048, 10**9):
                    monkeypatch.setattr(positive_part, "_MERGE_ATOMS", merge_from)
                    positive_part._MEMO.clear()
                    positive_part._memo_floats[0] = 0
                    values.append(proven._blanket_delta(prep, log_gamma=log_gamma, others=others,
                                                        epsilon_prime=eps_p, resolution=0.05))
                merged, plain = values
                assert merged == pytest.approx(plain, rel=1e-12, abs=0.0)
                seen += plain > 1e-6
    assert seen >= 4  # (non-trivial values)
