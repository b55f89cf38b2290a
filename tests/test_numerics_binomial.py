"""The pointwise binomial log pmf (issue 11, audit gap 12b): the floats of the row function, exact values."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from sufficientdp._numerics.binomial import log_binom_pmf, log_binom_pmf_all


def test_same_floats_as_the_row_function_at_every_point() -> None:
    for size in (0, 1, 7, 64, 65, 1000):
        for prob in (0.01, 0.1692, 0.5, 0.93):
            row = log_binom_pmf_all(size, prob)
            k = np.arange(size + 1)
            assert np.array_equal(log_binom_pmf(k, np.full_like(k, size), prob), row)


def test_scattered_pairs_against_exact_arithmetic_and_outside_the_support() -> None:
    k = np.array([[0, 3, 5], [2, -1, 9]])
    size = np.array([[4, 6, 5], [3, 2, 8]])
    got = log_binom_pmf(k, size, 0.3)
    q = Fraction(3, 10)
    for (kv, nv), g in zip(zip(k.ravel().tolist(), size.ravel().tolist()), got.ravel().tolist()):
        if 0 <= kv <= nv:
            exact = math.comb(nv, kv) * q**kv * (1 - q) ** (nv - kv)
            assert math.isclose(g, math.log(exact), rel_tol=1e-13, abs_tol=1e-13)
        else:
            assert g == -math.inf
    assert log_binom_pmf(2, 5, 0.2).shape == ()
