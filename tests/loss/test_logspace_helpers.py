"""The numpy-only log-domain helpers against scipy.special and exact integer arithmetic."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.special import gammaln
from scipy.special import logsumexp as scipy_logsumexp

from sufficientdp._numerics.binomial import log_binom_pmf_all
from sufficientdp._numerics.logspace import (
    _EXP_ZERO,
    log_add_exp,
    log_comb,
    log_comb_large_n,
    log_expm1,
    log_factorials,
    log_falling_factorials,
    log_sub_exp,
    logsumexp,
    logsumexp_finite_columns,
    logsumexp_finite_rows,
    logsumexp_groups,
)


def _ulps(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.spacing(np.abs(b)), 5e-324)))


@pytest.mark.parametrize("seed", range(6))
def test_logsumexp_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(scale=10.0 ** rng.integers(-2, 4), size=(7, 33)) + rng.normal(scale=300.0)
    assert abs(logsumexp(a) - float(scipy_logsumexp(a))) <= 8 * np.spacing(abs(float(scipy_logsumexp(a))))
    for axis in (0, 1):
        assert _ulps(logsumexp(a, axis=axis), scipy_logsumexp(a, axis=axis)) <= 8


def test_logsumexp_against_exact_sum() -> None:
    a = [-1000.5, -1001.25, -999.0, -1e6]
    with mpmath.workdps(50):
        exact = mpmath.log(sum(mpmath.exp(mpmath.mpf(x)) for x in a))
        assert abs(logsumexp(a) - float(exact)) <= 4 * np.spacing(1000.0)


def test_logsumexp_infinities_and_empty() -> None:
    assert logsumexp([-math.inf, -math.inf]) == -math.inf
    assert logsumexp([0.0, math.inf]) == math.inf
    assert logsumexp([]) == -math.inf
    assert math.isnan(logsumexp([0.0, math.nan]))
    rows = logsumexp(np.array([[-math.inf, -math.inf], [0.0, 0.0]]), axis=1)
    assert rows[0] == -math.inf and rows[1] == pytest.approx(math.log(2.0), rel=1e-15)


def test_log_comb_against_exact_integers() -> None:
    for n in (0, 1, 5, 40, 257, 1000, 5000):
        for k in sorted({0, min(1, n), n // 3, n // 2, n}):
            with mpmath.workdps(40):
                exact = float(mpmath.log(mpmath.binomial(n, k))) if n >= 1000 else math.log(math.comb(n, k))
            got = log_comb(n, k)
            # the formula cancels: its error is a few ulps of log(n!), the largest term (scipy's gammaln form too)
            assert abs(got - exact) <= 6 * np.spacing(max(1.0, math.lgamma(n + 1.0))), (n, k)


def test_log_comb_matches_gammaln_formula_and_broadcasts() -> None:
    n = np.arange(0, 300, dtype=float)[:, None]
    k = np.arange(0, 300, dtype=float)[None, :]
    kk = np.minimum(k, n)
    ref = gammaln(n + 1.0) - gammaln(kk + 1.0) - gammaln(n - kk + 1.0)
    got = log_comb(n, kk)
    assert got.shape == ref.shape
    assert np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref))) < 1e-13


def test_log_comb_rejects_non_integers_and_out_of_range() -> None:
    for n, k in ((5, 6), (5, -1), (5.5, 2), (5, 2.5)):
        with pytest.raises(ValueError, match="0 <= k <= n"):
            log_comb(n, k)


def test_log_factorials_exact_and_read_only() -> None:
    lf = log_factorials(30)
    assert lf.shape == (31,)
    for i in (0, 1, 7, 30):
        assert abs(lf[i] - math.log(math.factorial(i))) <= 2 * np.spacing(max(1.0, math.log(math.factorial(i))))
    with pytest.raises(ValueError):
        lf[3] = 0.0
    with pytest.raises(ValueError, match="n_max"):
        log_factorials(-1)


def test_two_term_helpers_against_mpmath() -> None:
    pairs = [(0.0, -1e-12), (3.5, 2.0), (-700.0, -745.0), (1e-9, 0.0), (50.0, -50.0), (-1000.0, -1000.5)]
    for a, b in pairs:
        with mpmath.workdps(60):
            ea, eb = mpmath.exp(mpmath.mpf(a)), mpmath.exp(mpmath.mpf(b))
            add, sub = float(mpmath.log(ea + eb)), float(mpmath.log(ea - eb))
        assert abs(log_add_exp(a, b) - add) <= 4 * np.spacing(abs(add)), (a, b)
        assert abs(log_add_exp(b, a) - add) <= 4 * np.spacing(abs(add)), (a, b)
        # log(e^a - e^b) loses only the relative accuracy of expm1(b - a): a few ulps of max(|a|, |result|)
        assert abs(log_sub_exp(a, b) - sub) <= 4 * np.spacing(max(abs(a), abs(sub))), (a, b)
    assert log_add_exp(-math.inf, 2.5) == 2.5 and log_add_exp(2.5, -math.inf) == 2.5
    assert log_add_exp(-math.inf, -math.inf) == -math.inf
    assert log_sub_exp(1.0, 1.0) == -math.inf and log_sub_exp(1.0, 2.0) == -math.inf
    assert log_sub_exp(-math.inf, -math.inf) == -math.inf and log_sub_exp(0.0, -math.inf) == 0.0


def test_log_expm1_against_mpmath() -> None:
    for x in (1e-300, 1e-12, 1e-3, 0.5, 29.9, 30.1, 200.0, 1e5):
        with mpmath.workdps(60):
            exact = float(mpmath.log(mpmath.expm1(mpmath.mpf(x))))
        assert abs(log_expm1(x) - exact) <= 4 * np.spacing(max(1.0, abs(exact))), x
    assert log_expm1(0.0) == -math.inf and log_expm1(-1.0) == -math.inf


def test_log_comb_large_n_against_exact_integers() -> None:
    for n, k in ((10, 0), (10, 3), (1000, 7), (10**9, 2), (10**9 + 7, 5), (123_456_789, 12)):
        with mpmath.workdps(60):
            exact = float(mpmath.log(mpmath.binomial(n, k)))
        assert abs(log_comb_large_n(float(n), k) - exact) <= 8 * k * np.spacing(max(1.0, exact)), (n, k)
    assert log_comb_large_n(40.0, 13) == pytest.approx(log_comb(40, 13), rel=1e-14)


def test_logsumexp_groups_against_mpmath() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(scale=50.0, size=(4, 9)) - 400.0
    a[1, :] = -math.inf  # a row of zeros
    a[2, [0, 3]] = -math.inf
    group = np.array([0, 1, 0, 2, 2, 1, 0, 3, 3])
    onehot = (group[:, None] == np.arange(4)[None, :]).astype(float)
    onehot[:, 3] = 0.0  # an empty group
    got = logsumexp_groups(a, onehot)
    assert got.shape == (4, 4)
    for i in range(4):
        for g in range(4):
            terms = [a[i, j] for j in range(9) if onehot[j, g] and a[i, j] > -math.inf]
            if not terms:
                assert got[i, g] == -math.inf
                continue
            with mpmath.workdps(50):
                exact = float(mpmath.log(sum(mpmath.exp(mpmath.mpf(t)) for t in terms)))
            assert abs(got[i, g] - exact) <= 8 * np.spacing(abs(exact)), (i, g)


def test_log_falling_factorials_against_exact_integers() -> None:
    s = np.array([[0, 3, 7], [40, 10**8, 123_456_789]])
    m = 6
    got = log_falling_factorials(s, m)
    assert got.shape == (2, 3, m + 1)
    for idx in np.ndindex(s.shape):
        for k in range(m + 1):
            if k > s[idx]:
                assert got[idx + (k,)] == -math.inf
                continue
            with mpmath.workdps(60):
                exact = float(mpmath.log(math.perm(int(s[idx]), k))) if k else 0.0
            assert abs(got[idx + (k,)] - exact) <= 4 * k * np.spacing(max(1.0, exact)), (idx, k)


def test_log_binom_pmf_all_against_exact_rationals() -> None:
    for size, prob in ((0, 0.3), (1, 0.5), (7, 0.01), (60, 0.4), (400, 1e-6)):
        got = log_binom_pmf_all(size, prob)
        assert got.shape == (size + 1,)
        for j in sorted({0, size // 3, size // 2, size}):
            with mpmath.workdps(60):
                p = mpmath.mpf(prob)
                exact = float(mpmath.log(mpmath.binomial(size, j) * p ** j * (1 - p) ** (size - j)))
            assert abs(got[j] - exact) <= 1e-13 * max(1.0, abs(exact)), (size, prob, j)


def test_log_binom_pmf_all_takes_the_callers_log_of_one_minus_prob() -> None:
    q = 0.3
    ref = log_binom_pmf_all(20, q)
    own = log_binom_pmf_all(20, q, log1m_prob=math.log(1.0 - q))
    assert np.max(np.abs(own - ref)) <= 1e-14 * np.max(np.abs(ref))
    shifted = log_binom_pmf_all(20, q, log1m_prob=math.log1p(-q) + 1.0)  # the parameter is used as given
    assert np.max(np.abs((shifted - ref) - np.arange(20, -1, -1))) <= 1e-12  # (size - j) * 1.0 added


def test_logsumexp_finite_rows_is_logsumexp_on_finite_rows() -> None:
    rng = np.random.default_rng(11)
    for cols in (1, 2, 7, 33, 300):
        a = rng.normal(scale=40.0, size=(9, cols)) - 500.0
        assert np.array_equal(logsumexp_finite_rows(a), logsumexp(a, axis=1))
        with mpmath.workdps(50):
            exact = [float(mpmath.log(sum(mpmath.exp(mpmath.mpf(x)) for x in row))) for row in a]
        assert _ulps(logsumexp_finite_rows(a), np.array(exact)) <= 8


def test_exp_is_zero_below_the_cutoff() -> None:
    """``exp`` underflows to exactly 0 below :data:`_EXP_ZERO` (numpy's SIMD kernel at every offset of an array,
    its 0-d call and libm), and not just above ``log(2**-1075)``."""
    far = [-1e4, -1e300, -np.finfo(float).max]
    grid = np.concatenate([np.linspace(-900.0, _EXP_ZERO, 200_003, endpoint=False), far])
    for start in range(9):  # every lane offset of the vector kernel, and its scalar tail
        assert not np.any(np.exp(grid[start:]))
    assert math.exp(np.nextafter(_EXP_ZERO, -np.inf)) == 0.0 and np.exp(np.float64(_EXP_ZERO - 1e-9)) == 0.0
    assert np.exp(-745.0) > 0.0  # the subnormal band is not cut


@pytest.mark.parametrize("overwrite", [False, True])
def test_logsumexp_finite_rows_cutoff_keeps_every_float(overwrite: bool) -> None:
    """Terms that underflow are set to 0 without ``exp``: the rows come out as the plain formula's, bit for bit,
    with many such terms, subnormal ones and none at all (the lattice window's rows at large theta)."""
    rng = np.random.default_rng(3)
    for cols in (1, 5, 12, 33, 786):
        a = rng.normal(scale=10.0 ** rng.uniform(0, 3.5), size=(112, cols)) * rng.uniform(0, 3, size=(112, 1))
        a[::7, :] -= rng.uniform(700.0, 760.0, size=(16, cols))  # the subnormal band and just below it
        a[::7, 0] = 0.0
        top = np.max(a, axis=1)
        plain = top + np.log(np.sum(np.exp(a - top[:, None]), axis=1))
        kept = a.copy()
        got = logsumexp_finite_rows(kept, overwrite=overwrite)
        assert got.tobytes() == plain.tobytes()
        if not overwrite:
            assert kept.tobytes() == a.tobytes()


def test_logsumexp_finite_columns_is_the_rows_form_of_the_transpose() -> None:
    """The columns form (terms x sums) gives the rows form's floats on the transposed array, bit for bit: the
    maxima are exact in any order and each sum is the same contiguous row reduction (numpy's pairwise order, which
    a sequential sum down the columns would not reproduce), on short and long sums, with tied and signed-zero
    maxima, underflowing terms and arrays above the exp cut (4096 terms)."""
    rng = np.random.default_rng(5)
    sequential_differs = False
    for terms in (1, 2, 7, 8, 9, 12, 17, 24, 40, 129, 300):
        for sums in (1, 3, 112, 600):
            a = rng.normal(scale=10.0 ** rng.uniform(0, 3), size=(terms, sums))
            a[::5] -= rng.uniform(700.0, 760.0, size=a[::5].shape)
            if terms > 2:
                a[1, ::3] = a[0, ::3]  # tied maxima
                a[2, ::4], a[0, ::4] = -0.0, 0.0
                a[2:, ::4] = np.minimum(a[2:, ::4], -1.0)
            got = logsumexp_finite_columns(a)
            assert got.tobytes() == logsumexp_finite_rows(np.ascontiguousarray(a.T)).tobytes()
            top = np.max(a, axis=0)
            sequential = top + np.log(np.add.reduce(np.exp(a - top), axis=0))
            sequential_differs |= sequential.tobytes() != got.tobytes()
    assert sequential_differs  # (the order matters: this test can tell)


_SCIPY_SPLIT_MAX = tuple(int(v) for v in __import__("scipy").__version__.split(".")[:2]) >= (1, 15)


@pytest.mark.parametrize("seed", range(8))
def test_logsumexp_split_max_is_scipys_algorithm(seed: int) -> None:
    """``split_max=True`` is the arithmetic of scipy >= 1.15 (bit for bit there; to a few ulps on older scipy),
    with and without weights, along every axis, with ``-inf`` entries and tied maxima."""
    rng = np.random.default_rng(seed)
    a = rng.normal(scale=10.0 ** rng.integers(-2, 3), size=(6, 17)) + rng.normal(scale=300.0)
    a[rng.random(a.shape) < 0.15] = -math.inf
    a[2, :4] = a[2, 4]  # ties at some maxima
    w = rng.integers(0, 4, size=a.shape).astype(float)
    tol = 0 if _SCIPY_SPLIT_MAX else 8
    for axis in (None, 0, 1):
        assert _ulps(logsumexp(a, axis, split_max=True), scipy_logsumexp(a, axis=axis)) <= tol
        assert _ulps(logsumexp(a, axis, b=w, split_max=True), scipy_logsumexp(a, axis=axis, b=w)) <= tol


def test_logsumexp_split_max_against_mpmath() -> None:
    """One dominant term (a tail sum): the log1p form is within a few ulps of the exact value."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        a = np.concatenate([[rng.normal(scale=50.0)], rng.normal(scale=3.0, size=20) - rng.uniform(5, 40)])
        w = rng.integers(1, 5, size=a.size).astype(float)
        with mpmath.workdps(60):
            exact = float(mpmath.log(sum(mpmath.mpf(float(c)) * mpmath.exp(mpmath.mpf(float(x)))
                                         for x, c in zip(a, w))))
        assert _ulps(logsumexp(a, b=w, split_max=True), exact) <= 4


def test_logsumexp_split_max_edges() -> None:
    assert logsumexp([-math.inf, -math.inf], split_max=True) == -math.inf
    assert logsumexp([math.inf, 1.0], split_max=True) == math.inf
    assert math.isnan(logsumexp([math.nan, 1.0], split_max=True))
    assert logsumexp(np.zeros(0), split_max=True) == -math.inf
    assert logsumexp([math.inf, 0.0], b=[0.0, 1.0], split_max=True) == 0.0  # a zero weight removes its term
    assert logsumexp([2.0, 2.0], split_max=True) == 2.0 + math.log(2.0)
    with pytest.raises(ValueError, match="b must be >= 0"):
        logsumexp([1.0, 2.0], b=[1.0, -1.0], split_max=True)
    with pytest.raises(ValueError, match="split_max=True"):
        logsumexp([1.0, 2.0], b=[1.0, 1.0])
