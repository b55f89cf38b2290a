"""``sufficientdp.ratio.single_bit_checks`` (the checks behind docs/single_bit.md): the claims that are theorems
(log-concavity and the likelihood-ratio order, docs/single_bit.md "What this says") show no violation on a small
grid, the counts follow from the grid, and the tally does catch violations."""

from __future__ import annotations

from fractions import Fraction

import pytest

from sufficientdp.ratio.single_bit_checks import CLAIMS, check_claims, exact_recheck


@pytest.mark.slow
def test_theorems_hold_on_a_small_grid_and_the_counts_follow_from_it() -> None:
    res = check_claims(ns=(3, 60), qs=(0.1, 0.3), alphas=(0.1, 0.5))  # Prop. 3.2 needs n q > d + 2
    assert list(res) == list(CLAIMS)
    for name, (count, bad) in res.items():
        assert count > 0 and bad == [], name
    # rho_n(s; m) for s = 1..n and every m: n - 1 differences per m, n + 1 values of m, two q
    assert res[CLAIMS[0]][0] == 2 * sum((n + 1) * (n - 1) for n in (3, 60))
    # pi(s; m) for m = 0..n-1: n differences in s per m
    assert res[CLAIMS[2]][0] == 2 * sum(n * n for n in (3, 60))


def test_a_violation_is_recorded_with_its_case() -> None:
    # a negative tolerance demands strict decrease by a margin, which rho cannot meet: the checks must fail
    res = check_claims(ns=(5,), qs=(0.2,), alphas=(0.5,), tol=-1.0)
    count, bad = res[CLAIMS[0]]
    assert count >= len(bad) > 5  # the first five violations are kept as cases, the rest counted as None
    assert bad[0] == (5, 0, 1, 0.2) and all(c is not None for c in bad[:5]) and all(c is None for c in bad[5:])


def test_exact_rational_recheck() -> None:
    checks, fails = exact_recheck(n_max=4, qs=(Fraction(1, 5), Fraction(1, 3)))
    assert fails == 0 and checks > 0
    # n = 1, one q: rho has one value per m (no pairs); pi: m = 0 gives one s-difference
    assert exact_recheck(n_max=1, qs=(Fraction(1, 5),)) == (1, 0)
