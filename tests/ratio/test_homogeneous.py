"""Moments of R(S) (seed 001 §3.1) against brute force and high-precision evaluation of the paper's formulas."""

import itertools
import math

import mpmath as mp
import pytest

from sufficientdp.ratio import ratio_moments


def brute_force_moments(q, bits, n, n_outlier):
    """Mean/var of R = (1/n) sum_i P(s_i|1)/P(s_i|0) by enumerating every ordered output (independent truth)."""
    q = mp.mpf(q)
    p = 1 - q
    vectors = list(itertools.product((0, 1), repeat=bits))

    def prob(v, origin):
        ones = sum(v)
        if origin == 0:
            return q**ones * p ** (bits - ones)
        return p**ones * q ** (bits - ones)

    def ratio(v):
        return prob(v, 1) / prob(v, 0)

    mean = mp.mpf(0)
    second = mp.mpf(0)
    origins = [1] * n_outlier + [0] * (n - n_outlier)
    for combo in itertools.product(vectors, repeat=n):
        pr = mp.fprod(prob(v, o) for v, o in zip(combo, origins))
        r = mp.fsum(ratio(v) for v in combo) / n
        mean += pr * r
        second += pr * r * r
    return mean, second - mean**2


@pytest.mark.parametrize("q, bits, n, n_out", [(0.2, 2, 3, 1), (0.35, 3, 2, 1), (0.1, 1, 4, 1), (0.3, 2, 3, 2)])
def test_moments_match_brute_force(q, bits, n, n_out):
    mean, var = brute_force_moments(q, bits, n, n_out)
    m = ratio_moments(q=q, bits=bits, n=n, n_outlier=n_out)
    assert m.mean == pytest.approx(float(mean), rel=1e-12)
    assert m.sd == pytest.approx(float(mp.sqrt(var)), rel=1e-10)


def paper_3_12(q, bits, n):
    """Seed 001 §3.1: E R and Var R exactly as printed, in 60-digit arithmetic."""
    mp.mp.dps = 60
    q = mp.mpf(q)
    p = 1 - q
    phi = (p**3 + q**3) / (p * q)
    psi = (p**5 + q**5) / (p * q) ** 2
    mean = (n - 1) / mp.mpf(n) + phi**bits / n
    var = (n - 1) / mp.mpf(n) ** 2 * (phi**bits - 1) + (psi**bits - phi ** (2 * bits)) / mp.mpf(n) ** 2
    return mean, var


@pytest.mark.parametrize(
    "q, bits, n",
    [(0.2446, 5, 1000), (0.351, 40, 10**7), (0.49999, 3, 10), (0.05, 100, 10**9), (0.4, 1000, 10**6)],
)
def test_moments_match_paper_formula_high_precision(q, bits, n):
    mean, var = paper_3_12(q, bits, n)
    m = ratio_moments(q=q, bits=bits, n=n)
    assert m.log_excess_mean == pytest.approx(float(mp.log(mean - 1)), rel=1e-11, abs=1e-11)
    assert m.log_var == pytest.approx(float(mp.log(var)), rel=1e-11, abs=1e-11)


def test_simplified_is_more_conservative():
    for q in (0.1, 0.2, 0.3, 0.45):
        exact = ratio_moments(q=q, bits=5, n=1000)
        simple = ratio_moments(q=q, bits=5, n=1000, simplified=True)
        assert simple.mean > exact.mean and simple.sd > exact.sd


def test_psi_identity():
    # seed 001 §3.2: (p^5+q^5)/(pq)^2 = phi^2 + phi - 1
    mp.mp.dps = 40
    for q in (mp.mpf("0.1"), mp.mpf("0.33"), mp.mpf("0.49")):
        p = 1 - q
        phi = (p**3 + q**3) / (p * q)
        assert mp.almosteq((p**5 + q**5) / (p * q) ** 2, phi**2 + phi - 1, 1e-35)


def test_no_overflow_for_huge_parameters():
    m = ratio_moments(q=0.01, bits=5000, n=1e12)
    assert math.isinf(m.mean) and m.log_excess_mean > 700 and math.isfinite(m.log_var)
