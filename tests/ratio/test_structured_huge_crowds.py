"""The structured search at large crowds (bad-input sweep, session 11). It took its binomial tails from
scipy.special's bdtr / bdtrc, which take n as a C int (nan from n = 2**31: the structured tail of the homogeneous
pair at N = 10**12 was [nan, nan] and the search failed on "floor must be a real number ... got nan") and lose
accuracy long before (P[X <= np] at n = 10**8, p = 0.3: 0.570); and a wide first enumeration level allocated
74.5 GiB (worst-case --population 1000000000000: MemoryError, exit 1)."""

import math

import numpy as np
import pytest

from sufficientdp.cli.main import main
from sufficientdp.ratio.structured import _bdtr, _bdtrc, candidate_pairs, structured_tail


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@pytest.mark.parametrize("n", [10**7, 10**8, 2**31 - 1, 2**31, 10**10, 10**12])
@pytest.mark.parametrize("z", [-3.0, -1.0, 0.5, 2.0])
def test_binomial_tails_above_the_c_int_limit_follow_the_normal_law(n, z):
    p = 0.1
    sd = math.sqrt(n * p * (1 - p))
    k = int(n * p + z * sd)
    want = _normal_cdf((k + 0.5 - n * p) / sd)  # continuity-corrected CLT: error O(1/sd) < 1e-4 here
    assert float(_bdtr(k, n, p)) == pytest.approx(want, abs=1e-4)
    assert float(_bdtrc(k, n, p)) == pytest.approx(1.0 - want, abs=1e-4)
    got = _bdtr(np.array([k, 100]), np.array([n, 1000]), p)  # mixed sizes in one call
    assert got[0] == pytest.approx(want, abs=1e-4) and got[1] == pytest.approx(0.5265990812, abs=1e-9)


def test_homogeneous_structured_tail_at_a_trillion_people_is_finite():
    pair = candidate_pairs(2, 10**12)[0]
    t = structured_tail(pair, 0.1, 3.0)
    assert math.isfinite(t.eta_lower) and math.isfinite(t.eta_upper) and 0.0 <= t.eta_lower <= t.eta_upper < 1e-50


def test_worst_case_at_the_population_limit_is_not_an_internal_error(capsys):
    code = main(["worst-case", "--bits", "2", "--population", str(10**12), "--q", "0.1", "--epsilon", "3",
                 "--time-budget", "3", "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert '"pairs_evaluated"' in out
