"""The fast binomial pmf pieces of the exact tail (issue 10) against the plain formulas they replace, bit for bit:
``scipy.stats.binom.pmf`` for :func:`binom_pmf` and :func:`pmf_table`, the textbook expressions for the delta
bracket of :mod:`sufficientdp.ratio.tail`."""

import math

import numpy as np
import pytest
import scipy.stats

from sufficientdp.ratio._chernoff import binom_cdf, binom_pmf, binom_sf, forward_problem, pmf_table, unique_counts
from sufficientdp.ratio.tail import _concave_bracket, _f_delta


def _bits(x):
    return np.asarray(x, dtype=float).view(np.int64)


@pytest.mark.parametrize("a", [1e-9, 0.013, 0.3, 0.5, 0.77, 1.0 - 1e-7])
def test_binom_pmf_is_scipys_bit_for_bit(a):
    c = np.arange(-3, 260)[None, :]
    m = np.array([0, 1, 2, 7, 50, 133, 250, 999, 5000])[:, None]
    log_a, log1m_a = math.log(a), math.log1p(-a)
    got = binom_pmf(c, m, log_a, log1m_a)
    want = (scipy.stats.binom.pmf(c, m, math.exp(log_a)) if log_a <= log1m_a
            else scipy.stats.binom.pmf(m - c, m, math.exp(log1m_a)))
    assert got.shape == want.shape
    np.testing.assert_array_equal(_bits(got), _bits(want))
    assert np.all(got[c.repeat(m.size, 0) > m] == 0.0) and np.all(got[:, :3] == 0.0)


def test_pmf_table_rows_reused_across_windows_are_the_direct_values():
    pb = forward_problem(0.26, 5, 1000, 0.693147)
    log_a, log1m_a = math.log(0.21), math.log1p(-0.21)
    # overlapping windows and row sets, as the strata of one tail ask for them (the cache grows and resets)
    for lo, hi, ms in [(40, 120, [900, 950, 999]), (35, 118, [950, 700, 999, 3]), (50, 60, [700]),
                       (10, 200, [999, 400, 120])]:
        c = np.arange(lo, hi + 1, dtype=np.int64)
        um = np.array(sorted(ms), dtype=np.int64)
        got = pmf_table(pb, c, um, log_a, log1m_a)
        want = scipy.stats.binom.pmf(c[None, :], um[:, None], math.exp(log_a))
        np.testing.assert_array_equal(_bits(got), _bits(want))
    assert (log_a, log1m_a) in pb.pmfs


def _plain_bracket(a, b, mean, var):
    """The bracket's formulas written plainly (the code computes them in place)."""
    def f(x):
        with np.errstate(divide="ignore"):
            return np.maximum(1.0 - 1.0 / x, 0.0)
    fa, fb, fe = f(a), f(b), f(mean)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        span = b - a
        frac = np.where(span > 0, (mean - a) / np.where(span > 0, span, 1.0), 0.0)
        chord = fa + (fb - fa) * np.clip(frac, 0.0, 1.0)
        second = fe - var / (a * mean * mean)
    low = np.minimum(np.maximum(chord, np.nan_to_num(second, nan=0.0, neginf=0.0)), fe)
    return np.maximum(low, 0.0), fe


def test_concave_bracket_is_the_plain_formula_bit_for_bit():
    rng = np.random.default_rng(7)
    n = 5000
    a = np.concatenate([rng.uniform(0.5, 3.0, n), [1.0, 1.0, np.inf, np.nan, 0.0, 2.0, 1e308, 1.0]])
    gap = np.concatenate([rng.choice([0.0, 1e-12, 0.5, -1.0], n), [0.0, np.inf, 1.0, 1.0, 1.0, np.nan, 1e308, -0.0]])
    with np.errstate(over="ignore", invalid="ignore"):
        b = a + gap
        mean = a + (b - a) * np.concatenate([rng.uniform(-0.2, 1.2, n), np.full(8, 0.5)])
    var = np.concatenate([rng.uniform(0.0, 1.0, n), [0.0, 1.0, np.inf, 0.0, 1.0, 1.0, 0.0, 0.0]])
    for got, want in zip(_concave_bracket(a, b, mean, var), _plain_bracket(a, b, mean, var), strict=True):
        np.testing.assert_array_equal(_bits(got), _bits(want))
    x = np.array([0.0, 0.5, 1.0, 2.0, np.inf, 1e-300])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(_bits(_f_delta(x)), _bits(np.maximum(1.0 - 1.0 / x, 0.0)))


@pytest.mark.parametrize("p", [1e-9, 0.2, 0.5, 0.93])
def test_binom_cdf_and_sf_are_scipys_bit_for_bit(p):
    k = np.concatenate([np.arange(-3.0, 80.0, 0.5), [-np.inf, np.inf, np.nan, 1e300, -1e300, -0.5, 0.99999]])[None, :]
    n = np.array([0.0, 1.0, 2.0, 9.0, 40.0, 75.0, 1000.0])[:, None]
    np.testing.assert_array_equal(_bits(binom_cdf(k, n, p)), _bits(scipy.stats.binom.cdf(k, n, p)))
    np.testing.assert_array_equal(_bits(binom_sf(k, n, p)), _bits(scipy.stats.binom.sf(k, n, p)))
    # outside the direct path (non-integer n): scipy's own answer (nan)
    assert np.isnan(binom_cdf(np.array([1.0]), np.array([2.5]), p)[0])


@pytest.mark.parametrize("m", [np.array([5]), np.array([3, 0, 3, 7, 1000, 7, 2], dtype=np.int64),
                               np.random.default_rng(3).integers(600, 1000, 5000),
                               np.array([10**9, 4, 4]), np.array([-2, 5, -2]), np.zeros(0, dtype=np.int64),
                               np.array([3, 1, 3], dtype=np.uint64)])
def test_unique_counts_is_np_unique(m):
    got, want = unique_counts(m), np.unique(m, return_inverse=True)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
