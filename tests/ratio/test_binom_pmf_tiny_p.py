"""binom_pmf where boost's pmf overflows: the smaller of a, 1 - a below about 1e-300 (scipy raises OverflowError
there; the exact calibration at L = 4096 reached a = 1.4e-308 and stopped with an internal error). The values are
pinned to the exact binomial pmf (mpmath at 60 digits)."""

import math

import mpmath
import numpy as np
import pytest

from sufficientdp.ratio._chernoff import binom_pmf


def _exact(c: int, m: int, p: float) -> float:
    with mpmath.workdps(60):
        mp = mpmath.mpf(p)
        return float(mpmath.binomial(m, c) * mp**c * (1 - mp) ** (m - c))


@pytest.mark.parametrize("a", [1.4063514380654363e-308, 3e-308, 1e-305, 1e-303])
@pytest.mark.parametrize("upper", [False, True])
def test_tiny_probability_gives_the_exact_pmf(a, upper):
    c = np.arange(-2, 12)[None, :]
    m = np.array([0, 1, 5, 49, 10**6, 10**12])[:, None]
    # a itself tiny, or 1 - a tiny (then the pmf is of m - c successes with the tiny probability)
    log_a, log1m_a = (math.log(a), math.log1p(-a)) if not upper else (math.log1p(-a), math.log(a))
    got = binom_pmf(c, m, log_a, log1m_a)
    assert got.shape == (m.size, c.size)
    for i, mm in enumerate(m[:, 0]):
        for j, cc in enumerate(c[0]):
            k = int(cc) if not upper else int(mm - cc)
            want = 0.0 if not 0 <= cc <= mm else _exact(k, int(mm), a)
            assert got[i, j] == pytest.approx(want, rel=1e-9, abs=1e-315), (a, upper, mm, cc)  # subnormals: absolute
