"""Exact R(S) and its distribution (seed 001 §1.2–§3) against brute force over ordered outputs (independent truth).

The oracle enumerates every ORDERED output (s_1..s_N) in ({0,1}^L)^N with exact rational arithmetic
(``fractions.Fraction``), multiplies ``p(s_i | x_i)`` and sums per histogram: no eq. (2.2), no dynamic programme.
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
from hypothesis import given, settings
from hypothesis import strategies as st

from sufficientdp import ParameterError, tally
from sufficientdp._errors import DataError
from sufficientdp.ratio import exact, ratio_moments
from sufficientdp.ratio.exact import (
    RatioDistribution,
    histogram_count,
    homogeneous_ratio_distribution,
    privacy_ratio,
    ratio_distribution,
)
from sufficientdp.ratio.result import TailResult


def code(v):
    return sum(b << i for i, b in enumerate(v))


def brute_force(original, modified, q):
    """{histogram: (P(S|D), P(S|D_m))} by enumerating ordered outputs with Fractions."""
    q = Fraction(q)
    p = 1 - q
    bits = len(original[0])
    cells = 1 << bits

    def prob(s, x):
        d = bin(s ^ code(x)).count("1")
        return q**d * p ** (bits - d)

    out = defaultdict(lambda: [Fraction(0), Fraction(0)])
    for seq in itertools.product(range(cells), repeat=len(original)):
        hist = [0] * cells
        for s in seq:
            hist[s] += 1
        entry = out[tuple(hist)]
        entry[0] += math.prod(prob(s, x) for s, x in zip(seq, original))
        entry[1] += math.prod(prob(s, x) for s, x in zip(seq, modified))
    return dict(out)


def brute_distribution(original, modified, q):
    """{R: P_{A(D_m)}[R]} exactly."""
    dist = defaultdict(Fraction)
    for pd, pm in brute_force(original, modified, q).values():
        dist[pm / pd] += pm
    return dict(dist)


CASES = [
    # (original, modified, q)
    ([[0], [0], [0]], [[0], [0], [1]], Fraction(1, 5)),
    ([[0, 0], [0, 0]], [[0, 0], [1, 1]], Fraction(1, 4)),
    ([[0, 0], [0, 0], [0, 0]], [[0, 0], [0, 0], [1, 1]], Fraction(1, 5)),
    ([[0, 0], [0, 0], [0, 0]], [[0, 0], [0, 0], [1, 0]], Fraction(3, 10)),  # outlier weight j = 1 < L
    ([[0, 1], [1, 0], [0, 0]], [[0, 1], [1, 0], [1, 1]], Fraction(1, 5)),  # non-homogeneous D'
    ([[1, 1], [1, 1], [0, 0]], [[1, 1], [1, 1], [1, 1]], Fraction(1, 10)),  # reverse: D_m homogeneous
    ([[0, 1, 1], [0, 0, 0]], [[0, 1, 1], [1, 1, 0]], Fraction(1, 5)),  # L = 3
]


@pytest.mark.parametrize("original, modified, q", CASES)
def test_distribution_matches_ordered_brute_force(original, modified, q):
    truth = brute_distribution(original, modified, q)
    dist = ratio_distribution(original, modified, float(q))
    keys = sorted(truth)
    # merge brute-force atoms closer than the documented tolerance the same way (none are, for these cases)
    assert len(keys) == dist.ratios.size
    np.testing.assert_allclose(dist.ratios, [float(k) for k in keys], rtol=1e-12)
    np.testing.assert_allclose(dist.probabilities, [float(truth[k]) for k in keys], rtol=1e-12, atol=1e-15)
    # eta and delta exactly (Fractions) at thresholds between atoms
    for a, b in zip(keys, keys[1:]):
        eps = math.log((float(a) + float(b)) / 2)
        lam = Fraction(math.exp(eps))
        eta = sum(pr for r, pr in truth.items() if r > lam)
        delta = sum(pr * (1 - lam / r) for r, pr in truth.items() if r > lam)
        assert dist.eta(eps) == pytest.approx(float(eta), rel=1e-12, abs=1e-15)
        assert dist.delta(eps) == pytest.approx(float(delta), rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("original, modified, q", CASES)
def test_privacy_ratio_every_output(original, modified, q):
    """Single-output R(S) (DP over partial histograms, or the closed form eq. 2.4) equals the brute force."""
    for hist, (pd, pm) in brute_force(original, modified, q).items():
        r = privacy_ratio(list(hist), original, modified, float(q))
        assert r == pytest.approx(float(pm / pd), rel=1e-12)


def test_privacy_ratio_accepts_reports_tally_and_reordered_people():
    d = [[0, 1], [1, 0], [0, 0]]
    dm = [[0, 1], [1, 0], [1, 1]]
    reports = [[1, 1], [0, 1], [1, 1]]
    truth = brute_force(d, dm, Fraction(1, 5))
    hist = np.bincount([code(v) for v in reports], minlength=4)
    pd, pm = truth[tuple(int(c) for c in hist)]
    expected = float(pm / pd)
    assert privacy_ratio(reports, d, dm, 0.2) == pytest.approx(expected, rel=1e-12)
    assert privacy_ratio(tally(np.array(reports), full_histogram=True), d, dm, 0.2) == pytest.approx(
        expected, rel=1e-12
    )
    # the same pair with people reordered (the changed person first)
    assert privacy_ratio(reports, d[::-1], dm[::-1], 0.2) == pytest.approx(expected, rel=1e-12)
    # and given as multisets that differ in one vector but not position by position
    assert privacy_ratio(reports, [[0, 0], [0, 1], [1, 0]], [[0, 1], [1, 1], [1, 0]], 0.2) == pytest.approx(
        expected, rel=1e-12
    )


def random_pair(rng, bits, n):
    d = rng.integers(0, 2, size=(n, bits))
    dm = d.copy()
    r = int(rng.integers(0, n))
    while np.array_equal(dm[r], d[r]):
        dm[r] = rng.integers(0, 2, size=bits)
    return d, dm


@pytest.mark.parametrize("bits, n", [(2, 6), (3, 4), (2, 1), (4, 3)])
def test_normalization_and_mean_under_original_is_one(bits, n):
    """sum P_m = 1 and E_{A(D)}[R] = sum_S P_D(S) R(S) = sum_S P_m(S) = 1, i.e. E_{A(D_m)}[1/R] = 1."""
    rng = np.random.default_rng(bits * 100 + n)
    for _ in range(3):
        d, dm = random_pair(rng, bits, n)
        dist = ratio_distribution(d, dm, 0.23)
        assert dist.probabilities.sum() == pytest.approx(1.0, abs=1e-12)
        assert float(np.sum(dist.probabilities / dist.ratios)) == pytest.approx(1.0, abs=1e-12)
        assert dist.outputs == histogram_count(bits, n)
        # R <= (p/q)**hamming(x, x') since R is a weighted mean of p(v|x')/p(v|x) (eq. 2.2)
        assert dist.max_ratio <= (0.77 / 0.23) ** dist.details["hamming"] * (1 + 1e-12)


@pytest.mark.parametrize(
    "q, bits, n, j", [(0.2, 2, 3, 2), (0.3, 3, 4, 2), (0.1, 3, 3, 3), (0.25, 2, 6, 1), (0.4, 1, 5, 1)]
)
def test_homogeneous_equals_general_enumeration(q, bits, n, j):
    d = [[0] * bits for _ in range(n)]
    dm = [row[:] for row in d]
    dm[-1] = [1] * j + [0] * (bits - j)
    general = ratio_distribution(d, dm, q)
    hom = homogeneous_ratio_distribution(q, bits, n, j)
    np.testing.assert_allclose(hom.ratios, general.ratios, rtol=1e-11)
    np.testing.assert_allclose(hom.probabilities, general.probabilities, rtol=1e-11, atol=1e-15)
    # reverse direction: outlier in D, D_m homogeneous
    rev = homogeneous_ratio_distribution(q, bits, n, j, outlier_in="original")
    general_rev = ratio_distribution(dm, d, q)
    np.testing.assert_allclose(rev.ratios, general_rev.ratios, rtol=1e-11)
    np.testing.assert_allclose(rev.probabilities, general_rev.probabilities, rtol=1e-11, atol=1e-15)


@pytest.mark.parametrize("q, j, n", [(0.2, 3, 10), (0.35, 5, 7), (0.1, 1, 50), (0.45, 2, 300)])
def test_homogeneous_mean_matches_eq_3_12(q, j, n):
    """E R = (N-1)/N + phi**j / N (seed 001 §3.1), via the independent moment code."""
    dist = homogeneous_ratio_distribution(q, j, n)
    assert dist.mean == pytest.approx(ratio_moments(q=q, bits=j, n=n).mean, rel=1e-10)
    assert float(np.sum(dist.probabilities / dist.ratios)) == pytest.approx(1.0, rel=1e-10)


def test_homogeneous_eta_against_fraction_oracle():
    """N = 20, j = 3, q = 1/5: eta by exact rational summation over T ~ MN(N-1, Bin(j,q)) + MN(1, Bin(j,p))."""
    q, j, n = Fraction(1, 5), 3, 20
    p = 1 - q
    a = [math.comb(j, k) * q**k * p ** (j - k) for k in range(j + 1)]
    b = [math.comb(j, k) * p**k * q ** (j - k) for k in range(j + 1)]
    w = [(q / p) ** (j - 2 * k) for k in range(j + 1)]
    law = defaultdict(Fraction)
    for t in itertools.product(range(n), repeat=j):  # t_1..t_j of the N-1 zero reports
        if sum(t) > n - 1:
            continue
        full = (n - 1 - sum(t), *t)
        coef = math.factorial(n - 1) // math.prod(math.factorial(c) for c in full)
        pz = coef * math.prod(ai**c for ai, c in zip(a, full))
        base = sum(c * wi for c, wi in zip(full, w))
        for k in range(j + 1):
            law[(base + w[k]) / n] += pz * b[k]
    dist = homogeneous_ratio_distribution(float(q), j, n)
    for eps in (0.1, 0.5, 1.0, 2.0, 3.0):
        lam = Fraction(math.exp(eps))
        eta = sum(pr for r, pr in law.items() if r > lam)
        assert dist.eta(eps) == pytest.approx(float(eta), rel=1e-11, abs=1e-300)


@pytest.mark.parametrize("q, bits, n", [(0.2, 2, 3), (0.1, 3, 5), (0.3, 1, 4)])
def test_max_ratio_homogeneous_is_p_over_q_to_the_L(q, bits, n):
    """max_S R(S) = (p/q)**L, attained at the output where every report is all-ones (eq. 3.6, remark after)."""
    p = 1 - q
    dist = homogeneous_ratio_distribution(q, bits, n)
    assert dist.max_ratio == pytest.approx((p / q) ** bits, rel=1e-12)
    d = [[0] * bits] * n
    dm = [[0] * bits] * (n - 1) + [[1] * bits]
    assert privacy_ratio([[1] * bits] * n, d, dm, q) == pytest.approx((p / q) ** bits, rel=1e-12)
    # the probability of that maximal atom is p**L * q**(L (N-1)): unlikely as N grows
    assert dist.probabilities[-1] == pytest.approx(p**bits * q ** (bits * (n - 1)), rel=1e-10)
    # the reverse pair puts the same maximal ratio on the MOST likely output (all reports all-zero)
    rev = homogeneous_ratio_distribution(q, bits, n, outlier_in="original")
    assert rev.max_ratio == pytest.approx((p / q) ** bits, rel=1e-12)
    assert rev.probabilities[-1] == pytest.approx(p ** (bits * n), rel=1e-10)


@pytest.mark.slow
def test_large_population_stays_finite():
    dist = homogeneous_ratio_distribution(0.05, 2, 1400)
    assert np.all(np.isfinite(dist.log_ratios))
    assert dist.probabilities.sum() == pytest.approx(1.0, abs=1e-10)
    assert 0.0 <= dist.eta(0.01) <= 1.0
    assert dist.log_eta(2 * math.log(19) - 1e-9) < -1000  # needs the log domain: P = p**2 q**(2(N-1))


@settings(max_examples=40, deadline=None)
@given(
    q=st.floats(0.01, 0.49),
    e1=st.floats(-3, 6),
    e2=st.floats(-3, 6),
    j=st.integers(1, 3),
)
def test_eta_delta_monotone_and_ordered(q, e1, e2, j):
    dist = homogeneous_ratio_distribution(q, 3, 6, j)
    lo, hi = min(e1, e2), max(e1, e2)
    assert dist.eta(lo) >= dist.eta(hi)
    assert dist.delta(lo) >= dist.delta(hi) - 1e-15
    for e in (lo, hi):
        assert 0.0 <= dist.delta(e) <= dist.eta(e) <= 1.0


def test_eta_edges_and_tail_result():
    dist = ratio_distribution([[0, 1], [1, 0], [0, 0]], [[0, 1], [1, 0], [1, 1]], 0.2)
    assert dist.eta(math.log(dist.min_ratio) - 1e-6) == pytest.approx(1.0)
    assert dist.eta(math.log(dist.max_ratio)) == 0.0
    assert dist.delta(math.log(dist.max_ratio)) == 0.0
    np.testing.assert_allclose(dist.eta_many([-10, 0.5, 10]), [dist.eta(-10), dist.eta(0.5), dist.eta(10)])
    np.testing.assert_allclose(dist.delta_many([-1, 0.5, 10]), [dist.delta(-1), dist.delta(0.5), 0.0], atol=1e-14)
    eps = math.log(dist.ratios[3])  # exactly at an atom: strict ">" excludes it; eta_upper includes it
    res = dist.tail(eps)
    assert isinstance(res, TailResult)
    assert res.kind == "exact" and res.method == "exact"
    assert res.eta_lower <= res.eta <= res.eta_upper
    assert res.eta_upper - res.eta_lower == pytest.approx(dist.probabilities[3], rel=1e-9)
    json.dumps(res.to_dict())
    json.dumps(dist.to_dict())
    with pytest.raises(ValueError):
        dist.log_ratios[0] = 1.0  # read-only arrays: the result is a value


def test_invalid_inputs():
    d = [[0, 0], [0, 0]]
    dm = [[0, 0], [1, 1]]
    for bad_q in (0.0, 0.5, 0.7, float("nan"), "0.2", True):
        with pytest.raises(ParameterError, match="q must be"):
            ratio_distribution(d, dm, bad_q)
        with pytest.raises(ParameterError, match="q must be"):
            privacy_ratio([2, 0, 0, 0], d, dm, bad_q)
        with pytest.raises(ParameterError, match="q must be"):
            homogeneous_ratio_distribution(bad_q, 2, 3)
    with pytest.raises(DataError, match="differ from original in exactly one"):
        ratio_distribution([[0, 0], [0, 0]], [[1, 1], [1, 1]], 0.2)
    with pytest.raises(DataError, match="0/1"):
        ratio_distribution([[0, 2], [0, 0]], dm, 0.2)
    with pytest.raises(DataError, match="same number of people"):
        ratio_distribution([[0, 0]], dm, 0.2)
    with pytest.raises(DataError, match="columns"):
        ratio_distribution(d, [[0, 0, 0], [1, 1, 1]], 0.2)
    with pytest.raises(DataError, match="2-D"):
        ratio_distribution([0, 0], [0, 1], 0.2)
    with pytest.raises(DataError, match="N = 2 reports"):
        privacy_ratio([3, 0, 0, 0], d, dm, 0.2)
    with pytest.raises(DataError, match="2\\*\\*bits = 4 entries"):
        privacy_ratio([2, 0, 0], d, dm, 0.2)
    with pytest.raises(DataError, match="non-negative integer"):
        privacy_ratio([3, -1, 0, 0], d, dm, 0.2)
    with pytest.raises(ParameterError, match=r"C\(N \+ 2\*\*L - 1, N\) must be <= 200000; got"):
        ratio_distribution([[0, 0, 0]] * 20, [[0, 0, 0]] * 19 + [[1, 1, 1]], 0.2)
    with pytest.raises(ParameterError, match=r"C\(N \+ j, j\) must be <= 1000000; got"):
        homogeneous_ratio_distribution(0.2, 5, 200)
    with pytest.raises(ParameterError, match="outlier_bits must be an integer >= 1 and <= 2; got 3"):
        homogeneous_ratio_distribution(0.2, 2, 3, 3)
    with pytest.raises(ParameterError, match="population must be an integer >= 1; got 0"):
        homogeneous_ratio_distribution(0.2, 2, 0)
    with pytest.raises(ParameterError, match="outlier_in must be one of"):
        homogeneous_ratio_distribution(0.2, 2, 3, outlier_in="both")
    dist = homogeneous_ratio_distribution(0.2, 2, 3)
    for bad_eps in (float("nan"), "1", None):
        with pytest.raises(ParameterError, match="epsilon must be a real number"):
            dist.eta(bad_eps)
    with pytest.raises(ValueError):
        RatioDistribution(log_ratios=np.array([]), log_probabilities=np.array([]), q=0.2, bits=1, population=1)


def test_identical_collections_give_ratio_one():
    d = [[0, 1], [1, 0]]
    dist = ratio_distribution(d, d, 0.3)
    np.testing.assert_allclose(dist.ratios, [1.0])
    assert dist.eta(0.0) == 0.0


def test_docstring_examples():
    failures, _ = doctest.testmod(exact, raise_on_error=False)
    assert failures == 0


@pytest.mark.parametrize("target", [0.5, 0.1, 0.01, 1e-4, 0.0])
def test_epsilon_for_inverts_eta(target):
    dist = ratio_distribution([[0, 1], [1, 0], [0, 0], [0, 0]], [[0, 1], [1, 0], [0, 0], [1, 1]], 0.15)
    eps = dist.epsilon_for(target)
    assert dist.eta(eps) <= target
    assert dist.eta(np.nextafter(eps, -np.inf) - 1e-12) > target
    assert dist.epsilon_for(1.0) == -math.inf
    with pytest.raises(ParameterError, match="eta must be"):
        dist.epsilon_for(-0.1)
