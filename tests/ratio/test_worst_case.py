"""Worst-case check of seed 001's conjecture (§1.2; ERRATA 5): symmetry reduction, known facts, counterexamples.

Independent truth: the unreduced enumeration of every ordered (D', x, x'), and brute force over ordered outputs
with exact rationals (no eq. 2.2, no dynamic programme) for the pinned counterexample.
"""

from __future__ import annotations

import doctest
import itertools
import json
import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

from sufficientdp import ParameterError
from sufficientdp.ratio import worst_case
from sufficientdp.ratio.exact import homogeneous_ratio_distribution, ratio_distribution
from sufficientdp.ratio.worst_case import (
    CONJECTURE_TOL,
    WorstCaseResult,
    _group_tables,
    conjecture_gap,
    neighbouring_pairs,
    worst_case_exhaustive,
    worst_case_grid,
    worst_case_search,
)


@pytest.mark.parametrize("bits, n", [(1, 1), (1, 4), (2, 1), (2, 3), (2, 5), (3, 2), (3, 3)])
def test_orbit_sizes_add_up_to_all_pairs(bits, n):
    """Sum of orbit sizes = 2**L (2**L - 1) C(N + 2**L - 2, N - 1): every ordered (D', x, x') counted once."""
    cells = 1 << bits
    total = cells * (cells - 1) * math.comb(n - 1 + cells - 1, n - 1)
    pairs = neighbouring_pairs(bits, n)
    assert sum(p.orbit_size for p in pairs) == total
    assert len(neighbouring_pairs(bits, n, reduce_symmetry=False)) == total
    assert all(p.population == n and p.hamming >= 1 for p in pairs)


@pytest.mark.parametrize("bits, n, q", [(1, 3, 0.2), (2, 2, 0.1), (2, 3, 0.3), (3, 2, 0.2)])
def test_reduced_worst_equals_unreduced_worst(bits, n, q):
    eps_grid = [f * bits * math.log((1 - q) / q) for f in (0.13, 0.3, 0.55, 0.8, 0.95)]  # f L never (half-)integer
    reduced = worst_case_grid(bits, n, q, eps_grid)
    full = worst_case_grid(bits, n, q, eps_grid, reduce_symmetry=False)
    for r, f in zip(reduced, full):
        assert r.eta == pytest.approx(f.eta, abs=1e-13)
        assert r.delta == pytest.approx(f.delta, abs=1e-13)
        assert r.pairs_total == f.pairs_total == f.pairs_checked
        assert r.pairs_checked < f.pairs_checked


def test_eta_is_invariant_on_an_orbit():
    """Bit permutations and XOR masks applied to every vector of both collections leave the law of R unchanged."""
    rng = np.random.default_rng(7)
    image, _ = _group_tables(3)
    for pair in [neighbouring_pairs(3, 3)[i] for i in (0, 5, 17, 40)]:
        base = ratio_distribution(pair.original, pair.modified, 0.17)
        for g in rng.choice(image.shape[0], size=4, replace=False):

            def move(coll):
                codes = [sum(b << i for i, b in enumerate(v)) for v in coll]
                return [[(int(image[g, c]) >> i) & 1 for i in range(3)] for c in codes]

            other = ratio_distribution(move(pair.original), move(pair.modified), 0.17)
            np.testing.assert_allclose(other.ratios, base.ratios, rtol=1e-11)
            np.testing.assert_allclose(other.probabilities, base.probabilities, rtol=1e-11, atol=1e-15)


def test_population_one_conjecture_holds():
    """N = 1: no crowd, each orbit is a single (x, x') with x' of weight j — the references themselves."""
    for q in (0.1, 0.3):
        gap = conjecture_gap(3, 1, q)
        assert gap.eta_gap == 0.0 and gap.delta_gap == 0.0 and gap.violating_pairs == 0
        for eps in (0.5, 2.0):
            assert worst_case_exhaustive(3, 1, q, eps).conjecture_holds


def test_worst_is_at_least_the_references():
    res = worst_case_exhaustive(2, 3, 0.2, 1.0)
    assert res.eta >= res.homogeneous_eta - 1e-15
    assert res.eta >= res.reverse_homogeneous_eta - 1e-15
    assert res.homogeneous_eta == max(res.homogeneous_eta_by_weight.values())
    for j in (1, 2):
        ref = homogeneous_ratio_distribution(0.2, 2, 3, j)
        assert res.homogeneous_eta_by_weight[j] == pytest.approx(ref.eta(1.0), abs=1e-15)
    json.dumps(res.to_dict())


def test_reverse_pair_puts_max_ratio_on_modal_output():
    """Outlier in D, D_m homogeneous: eta(eps) >= p**(L N) for every eps < L log(p/q) (all-zero output)."""
    q, bits, n = 0.1, 2, 4
    eps = bits * math.log((1 - q) / q) - 0.01
    rev = homogeneous_ratio_distribution(q, bits, n, outlier_in="original")
    fwd = homogeneous_ratio_distribution(q, bits, n)
    assert rev.eta(eps) >= (1 - q) ** (bits * n) * (1 - 1e-12)
    assert fwd.eta(eps) < 1e-3 < 0.4 < rev.eta(eps)


def _brute_eta(original, modified, q, eps):
    """eta by ordered-output enumeration with Fractions (independent of the library's enumeration)."""
    q = Fraction(q)
    p = 1 - q
    bits = len(original[0])
    cells = 1 << bits

    def prob(s, x):
        d = bin(s ^ sum(b << i for i, b in enumerate(x))).count("1")
        return q**d * p ** (bits - d)

    pd, pm = defaultdict(Fraction), defaultdict(Fraction)
    for seq in itertools.product(range(cells), repeat=len(original)):
        h = tuple(sorted(seq))
        pd[h] += math.prod(prob(s, x) for s, x in zip(seq, original))
        pm[h] += math.prod(prob(s, x) for s, x in zip(seq, modified))
    lam = Fraction(math.exp(eps))
    return sum(pm[h] for h in pm if pm[h] > lam * pd[h])


def test_pinned_counterexample_l2_n4():
    """L = 2, N = 4, q = 1/10, eps = 3.1: D = {00,00,11,00} -> D_m = {00,00,11,11} beats every homogeneous
    configuration (either direction, every outlier weight). Checked with exact rational brute force."""
    q, eps = Fraction(1, 10), 3.1
    bad_d = [[0, 0], [0, 0], [1, 1], [0, 0]]
    bad_dm = [[0, 0], [0, 0], [1, 1], [1, 1]]
    eta_bad = _brute_eta(bad_d, bad_dm, q, eps)
    refs = []
    for j in (1, 2):
        out = [1] * j + [0] * (2 - j)
        zeros = [[0, 0]] * 4
        refs.append(_brute_eta(zeros, zeros[:3] + [out], q, eps))  # paper's direction
        refs.append(_brute_eta(zeros[:3] + [out], zeros, q, eps))  # reverse direction
    assert eta_bad > max(refs) + Fraction(1, 10)
    res = worst_case_exhaustive(2, 4, float(q), eps)
    assert not res.conjecture_holds and not res.two_sided_holds
    assert res.eta >= float(eta_bad) - 1e-12
    assert res.homogeneous_eta == pytest.approx(float(max(refs[0], refs[2])), abs=1e-12)


def test_conjecture_gap_consistent_with_grid():
    gap = conjecture_gap(2, 4, 0.1)
    assert gap.eta_gap > 0.5 and gap.violating_pairs > 0
    lo, hi = gap.eta_gap_interval
    res = worst_case_exhaustive(2, 4, 0.1, gap.eta_gap_epsilon)
    assert res.eta - res.homogeneous_eta == pytest.approx(gap.eta_gap, abs=1e-12)
    assert lo <= gap.eta_gap_epsilon < hi
    two = conjecture_gap(2, 4, 0.1, reference="two-sided")
    assert 0.0 < two.eta_gap <= gap.eta_gap
    json.dumps(gap.to_dict())


def test_search_is_reproducible_and_bounded_by_exhaustive():
    exhaustive = worst_case_exhaustive(2, 5, 0.2, 1.5)
    a = worst_case_search(2, 5, 0.2, 1.5, rng=np.random.default_rng(3), budget=40)
    b = worst_case_search(2, 5, 0.2, 1.5, rng=np.random.default_rng(3), budget=40)
    assert isinstance(a, WorstCaseResult) and a.method == "heuristic" and not a.exhaustive
    assert a.to_dict() == b.to_dict()
    assert a.pairs_checked <= 40
    assert a.homogeneous_eta <= a.eta <= exhaustive.eta + CONJECTURE_TOL


def test_search_finds_counterexample_beyond_exhaustive_sizes():
    res = worst_case_search(2, 12, 0.1, 3.0, rng=np.random.default_rng(0), budget=60)
    assert not res.conjecture_holds  # a counterexample is exact, whatever the search
    d = ratio_distribution(res.original, res.modified, 0.1)
    assert d.eta(3.0) == pytest.approx(res.eta, abs=1e-15)


def test_invalid_inputs():
    with pytest.raises(ParameterError, match="q must be in"):
        worst_case_exhaustive(2, 3, 0.5, 1.0)
    with pytest.raises(ParameterError, match="epsilon must be a real number"):
        worst_case_exhaustive(2, 3, 0.2, float("nan"))
    with pytest.raises(ParameterError, match="bits must be an integer >= 1"):
        worst_case_exhaustive(0, 3, 0.2, 1.0)
    with pytest.raises(ParameterError, match="population must be an integer >= 1"):
        neighbouring_pairs(2, 0)
    with pytest.raises(ParameterError, match="candidate pairs must be <="):
        neighbouring_pairs(3, 12, reduce_symmetry=False)
    with pytest.raises(ParameterError, match="rng must be a numpy.random.Generator"):
        worst_case_search(2, 3, 0.2, 1.0, rng=1, budget=5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="budget must be an integer >= 1"):
        worst_case_search(2, 3, 0.2, 1.0, rng=np.random.default_rng(0), budget=0)
    with pytest.raises(ParameterError, match="reference must be one of"):
        conjecture_gap(2, 3, 0.2, reference="both")
    with pytest.raises(ParameterError, match="epsilons must contain"):
        worst_case_grid(2, 3, 0.2, [])


def test_docstring_examples():
    failures, _ = doctest.testmod(worst_case, raise_on_error=False)
    assert failures == 0
