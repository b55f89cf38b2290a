"""Amplification-by-shuffling bounds: formulas against mpmath, the reference implementation, and the exact
privacy profile of shuffled binary randomized response (which every valid bound must dominate)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import mpmath as mp
import pytest

from sufficientdp.accounting.amplification import (
    BOUNDS,
    amplification_epsilon,
    bbgn19_delta,
    bbgn19_epsilon,
    efmrtt19_epsilon,
    flip_probability_for_epsilon0,
    fmt21_epsilon,
    max_epsilon0,
)
from sufficientdp.calibration.compare import shuffled_rr_worst_delta
from sufficientdp.ratio.single_bit import single_bit_worst_tail


@pytest.fixture(autouse=True)
def _mpmath_precision() -> Iterator[None]:
    """Every test of this module computes its mpmath oracles at 50 digits (restored afterwards)."""
    with mp.workdps(50):
        yield


def _fmt_printed(e0: float, n: int, delta: float) -> mp.mpf:
    """FMT 2021 Thm 3.1 as printed, in 50-digit arithmetic."""
    e0, n, delta = mp.mpf(e0), mp.mpf(n), mp.mpf(delta)
    a = 8 * mp.sqrt(mp.e**e0 * mp.log(4 / delta)) / mp.sqrt(n)
    return mp.log(1 + (mp.e**e0 - 1) / (mp.e**e0 + 1) * (a + 8 * mp.e**e0 / n))


def _bbgn_mp(eps: float, e0: float, n: int) -> mp.mpf:
    eps, e0 = mp.mpf(eps), mp.mpf(e0)
    a = mp.e**eps - 1
    b = (mp.e**eps + 1) * (mp.e**e0 - mp.e**-e0)
    g = mp.e**-e0
    return b**2 / (4 * a * g * n) * (1 - g * (1 - mp.e ** (-2 * a**2 / b**2))) ** n


# ------------------------------------------------------------------------------------------ formulas
@pytest.mark.parametrize("e0, n, delta", [(0.4, 10_000, 1e-6), (0.1, 1000, 0.009), (0.49, 10**7, 1e-12)])
def test_efmrtt19_value_matches_mpmath_and_rounds_up(e0, n, delta):
    # EFMRTT 2019 Thm 7: epsilon = 12 eps0 sqrt(log(1/delta)/n)
    truth = 12 * mp.mpf(e0) * mp.sqrt(mp.log(1 / mp.mpf(delta)) / n)
    r = efmrtt19_epsilon(e0, n, delta)
    assert r.valid and r.kind == "bound" and r.failed_condition is None
    assert r.epsilon >= truth
    assert r.epsilon <= truth * (1 + 1e-14)


@pytest.mark.parametrize("e0, n, delta, failed", [
    (0.5, 10_000, 1e-6, "epsilon0 < 1/2"), (0.4, 999, 1e-6, "n >= 1000"), (0.4, 10_000, 0.01, "delta < 1/100"),
])
def test_efmrtt19_outside_range_is_invalid(e0, n, delta, failed):
    r = efmrtt19_epsilon(e0, n, delta)
    assert not r.valid and r.epsilon is None and r.failed_condition.startswith(failed)


# values of closedformanalysis(n, eps0, delta) in apple/ml-shuffling-amplification (computeamplification.py,
# commit 993d285), the authors' reference implementation of FMT 2021, run on the fetched snapshot
@pytest.mark.parametrize("n, e0, delta, reference", [
    (100_000, 4.0, 1e-6, 0.5378040242374512),
    (10_000, 1.0, 1e-5, 0.2157558621205732),
    (1_000_000, 2.0, 1e-8, 0.07189073021806718),
    (5000, 0.5, 1e-3, 0.10983995119086191),
])
def test_fmt21_matches_reference_implementation(n, e0, delta, reference):
    r = fmt21_epsilon(e0, n, delta)
    assert r.valid
    assert reference <= r.epsilon <= reference * (1 + 1e-14)
    # ... and is never below the expression printed in Thm 3.1
    assert r.epsilon >= _fmt_printed(e0, n, delta)


def test_fmt21_validity_boundary():
    n, delta = 100_000, 1e-6
    # the stricter of the restated Thm 3.1 hypothesis (log(2/delta)) and the authors' closedformanalysis regime
    # check (log(4/delta)); neither verified against the paper's text, so the stricter one applies
    limit = math.log(n / (16 * math.log(4 / delta)))
    assert limit < math.log(n / (16 * math.log(2 / delta)))
    assert fmt21_epsilon(limit * (1 - 1e-9), n, delta).valid
    r = fmt21_epsilon(limit * (1 + 1e-9), n, delta)
    assert not r.valid and r.epsilon is None and "log(n / (16 log(4/delta)))" in r.failed_condition
    # between the two readings: refused (the authors' code returns eps0 there, "not a valid parameter regime")
    assert not fmt21_epsilon(0.5 * (limit + math.log(n / (16 * math.log(2 / delta)))), n, delta).valid
    # n too small for any epsilon0: n <= 16 log(4/delta)
    assert not fmt21_epsilon(0.01, 100, 1e-6).valid


# values of Hoeffding(LDPMechanism()).get_delta(eps, eps0, n) in BorjaBalle/amplification-by-shuffling
# (shuffleddp/amplification_bounds.py + mechanisms.py, commit 1778a0dd), the privacy-blanket authors' reference
# code, run on the fetched snapshot (outside the project)
@pytest.mark.parametrize("eps, e0, n, reference", [
    (0.5, 2.0, 10_000, 0.004817855795648099),
    (1.0, 3.0, 20_000, 0.28127146249504087),
    (0.3, 1.0, 5000, 4.7781351107275985e-09),
])
def test_bbgn19_matches_authors_reference_code(eps, e0, n, reference):
    r = bbgn19_delta(eps, e0, n)
    assert reference * (1 - 1e-12) <= r.delta <= reference * (1 + 1e-11)


# Erlingsson(...).get_eps in the same repository (constant 12; it accepts eps0 <= 0.5 and delta <= 0.01, we require
# the strict inequalities)
@pytest.mark.parametrize("e0, n, delta, reference", [(0.4, 10_000, 1e-6, 0.17841226506479227),
                                                     (0.1, 1000, 0.009, 0.08235996728004524)])
def test_efmrtt19_matches_reference_code(e0, n, delta, reference):
    r = efmrtt19_epsilon(e0, n, delta)
    assert r.valid and reference <= r.epsilon <= reference * (1 + 1e-14)
    assert not efmrtt19_epsilon(0.5, 1000, delta).valid and not efmrtt19_epsilon(0.4, 1000, 0.01).valid


@pytest.mark.parametrize("bound", BOUNDS)
def test_unverified_statements_are_flagged(bound):
    # none of the three statements was checked against the paper's own text: the product must say so
    r = amplification_epsilon(bound, epsilon0=1.0, population=10**6, delta=1e-6)
    assert r.verified is False and r.statement.startswith("unverified")
    assert "@" in r.provenance and "unverified" in r.reference
    d = r.to_dict()
    assert d["verified"] is False and d["provenance"] == r.provenance
    m = max_epsilon0(bound, epsilon=1.0, delta=1e-6, population=10**6)
    if m.amplified:
        assert m.verified is False and any(x.startswith("unverified") for x in m.notes)
    # no amplification: the trivial (epsilon, 0) guarantee needs no paper
    small = max_epsilon0(bound, epsilon=1.0, delta=1e-6, population=10)
    assert not small.amplified and small.verified is True
    assert not any(x.startswith("unverified") for x in small.notes)


def test_compare_rows_carry_the_unverified_note():
    from sufficientdp.calibration.compare import compare_approaches

    c = compare_approaches(bits=1, population=10**6, epsilon=1.0, delta=1e-6, sufficient=False,
                           exact_max_population=10)
    row = c.row("shuffle-fmt21")
    assert any(x.startswith("unverified") for x in row.notes)


@pytest.mark.parametrize("eps, e0, n", [(0.5, 2.0, 100_000), (0.1, 0.5, 5000), (0.05, 3.0, 10**6), (1.0, 1.5, 50)])
def test_bbgn19_delta_matches_mpmath(eps, e0, n):
    truth = _bbgn_mp(eps, e0, n)
    r = bbgn19_delta(eps, e0, n)
    assert r.kind == "bound" and r.valid
    assert r.delta >= min(truth, 1)
    assert r.delta <= max(min(truth, 1) * (1 + 1e-11), 1e-300)


def test_bbgn19_delta_zero_when_epsilon_at_least_epsilon0():
    assert bbgn19_delta(1.0, 1.0, 100).delta == 0.0
    assert bbgn19_delta(2.0, 1.0, 100).delta == 0.0


def test_bbgn19_epsilon_inverts_delta():
    r = bbgn19_epsilon(2.0, 100_000, 1e-6)
    assert r.valid
    assert _bbgn_mp(r.epsilon, 2.0, 100_000) <= 1e-6
    assert _bbgn_mp(r.epsilon * (1 - 1e-9), 2.0, 100_000) > 1e-6  # the smallest such epsilon
    # no amplification: tiny crowd
    r = bbgn19_epsilon(0.5, 3, 1e-9)
    assert not r.valid and r.epsilon is None


# ------------------------------------------------------------------------------------------ vs exact shuffled RR
def _exact_delta(n: int, e0: float, eps: float, full_scan: bool) -> float:
    q = 1.0 / (1.0 + math.exp(e0))  # binary RR is exactly e0-LDP
    if full_scan:
        return single_bit_worst_tail(population=n, q=q, epsilon=eps).delta
    return shuffled_rr_worst_delta(n, q, eps)[0]  # all m, both directions (cross-checked in test_compare)


def test_fmt21_and_bbgn19_dominate_exact_shuffled_rr_full_scan():
    # single_bit_worst_tail scans every m (exact). n = 100: FMT needs delta > 2 e^(-n/16).
    cases = [("fmt21", 0.3, 0.2), ("fmt21", 0.5, 0.2), ("bbgn19", 1.2, 0.2), ("bbgn19", 0.7, 0.05)]
    for bound, e0, delta in cases:
        r = amplification_epsilon(bound, epsilon0=e0, population=100, delta=delta)
        assert r.valid and r.epsilon < e0  # the bound amplifies here, so the check is not vacuous
        assert _exact_delta(100, e0, r.epsilon, True) <= delta


@pytest.mark.slow
@pytest.mark.parametrize("n, e0s, deltas", [(300, (0.2, 0.45, 1.0, 2.0), (0.009, 1e-4)),
                                            (1000, (0.2, 0.45), (0.009,))])
def test_all_bounds_dominate_exact_shuffled_rr_grid(n, e0s, deltas):
    checked = {b: 0 for b in BOUNDS}
    for e0 in e0s:
        for delta in deltas:
            for bound in BOUNDS:
                r = amplification_epsilon(bound, epsilon0=e0, population=n, delta=delta)
                if not r.valid or r.epsilon >= e0:
                    continue
                assert _exact_delta(n, e0, r.epsilon, False) <= delta, (bound, e0, delta)
                checked[bound] += 1
    assert checked["fmt21"] >= 2 and checked["bbgn19"] >= 2
    if n >= 1000:
        assert checked["efmrtt19"] >= 2


# ------------------------------------------------------------------------------------------ monotonicity
def test_monotonicity():
    e0s = [0.05 * i for i in range(1, 10)]
    for f in (efmrtt19_epsilon, fmt21_epsilon, bbgn19_epsilon):
        vals = [f(e0, 10**6, 1e-8).epsilon for e0 in e0s]
        assert all(a <= b for a, b in zip(vals, vals[1:])), f  # non-decreasing in epsilon0
        by_n = [f(0.4, n, 1e-8).epsilon for n in (10**4, 10**5, 10**6)]
        assert by_n[0] > by_n[1] > by_n[2]  # decreasing in n
        by_delta = [f(0.4, 10**6, d).epsilon for d in (1e-9, 1e-6, 1e-3)]
        assert by_delta[0] > by_delta[1] > by_delta[2]  # decreasing in delta
    ds = [bbgn19_delta(0.3, e0, 10_000).delta for e0 in (0.5, 1.0, 2.0, 3.0)]
    assert all(a <= b for a, b in zip(ds, ds[1:]))


# ------------------------------------------------------------------------------------------ inversion
@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("eps, n", [(0.3, 10**6), (1.0, 10**5)])
def test_max_epsilon0_is_feasible_and_maximal(bound, eps, n):
    delta = 1e-6
    r = max_epsilon0(bound, epsilon=eps, delta=delta, population=n)
    assert r.kind == "bound" and r.epsilon0 is not None
    assert r.usable_epsilon0 == max(eps, r.epsilon0)
    if bound == "bbgn19":
        assert bbgn19_delta(eps, r.epsilon0, n).delta <= delta
        assert bbgn19_delta(eps, r.epsilon0 * (1 + 1e-6), n).delta > delta
    else:
        b = amplification_epsilon(bound, epsilon0=r.epsilon0, population=n, delta=delta)
        assert b.valid and b.epsilon <= eps
        above = amplification_epsilon(bound, epsilon0=r.epsilon0 * (1 + 1e-6), population=n, delta=delta)
        assert (not above.valid) or above.epsilon > eps


def test_max_epsilon0_amplifies_for_large_crowds_and_not_for_small():
    r = max_epsilon0("fmt21", epsilon=1.0, delta=1e-6, population=10**6)
    assert r.amplified and r.usable_epsilon0 > 5
    small = max_epsilon0("fmt21", epsilon=1.0, delta=1e-6, population=100)
    assert not small.amplified and small.usable_epsilon0 == 1.0 and small.notes
    bigger = max_epsilon0("fmt21", epsilon=1.0, delta=1e-6, population=10**7)
    assert bigger.usable_epsilon0 > r.usable_epsilon0  # monotone in n


def test_flip_probability_for_epsilon0():
    # log(p/q) = log 3 at q = 1/4 exactly
    assert flip_probability_for_epsilon0(math.log(3), 1) == pytest.approx(0.25, rel=1e-15)
    for e0, bits, k in [(5.0, 5, 1), (2.0, 40, 3), (1e-6, 1, 1)]:
        q = flip_probability_for_epsilon0(e0, bits, k)
        assert bits * k * (math.log1p(-q) - math.log(q)) <= e0
        truth = 1 / (1 + mp.e ** (mp.mpf(e0) / (bits * k)))
        assert abs(q - truth) <= 1e-13 * truth


# ------------------------------------------------------------------------------------------ invalid input
@pytest.mark.parametrize("call", [
    lambda: efmrtt19_epsilon(0.0, 1000, 1e-6),
    lambda: efmrtt19_epsilon(0.3, 0, 1e-6),
    lambda: efmrtt19_epsilon(0.3, 1000, 1.0),
    lambda: fmt21_epsilon(float("nan"), 1000, 1e-6),
    lambda: fmt21_epsilon(1.0, 10.5, 1e-6),
    lambda: fmt21_epsilon(1.0, 1000, 0.0),
    lambda: bbgn19_delta(0.0, 1.0, 10),
    lambda: bbgn19_delta(0.5, -1.0, 10),
    lambda: bbgn19_delta(0.5, 1.0, 0),
    lambda: bbgn19_epsilon(1.0, 10, 2.0),
    lambda: amplification_epsilon("nope", epsilon0=1.0, population=10, delta=0.1),
    lambda: max_epsilon0("fmt21", epsilon=0.0, delta=0.1, population=10),
    lambda: max_epsilon0("fmt21", epsilon=1.0, delta=0.0, population=10),
    lambda: max_epsilon0("fmt21", epsilon=1.0, delta=0.1, population=0),
    lambda: max_epsilon0("x", epsilon=1.0, delta=0.1, population=10),
    lambda: flip_probability_for_epsilon0(0.0, 1),
    lambda: flip_probability_for_epsilon0(1.0, 0),
    lambda: flip_probability_for_epsilon0(1.0, 1, 0),
])
def test_invalid_inputs_raise_parameter_error(call):
    from sufficientdp._errors import ParameterError

    with pytest.raises(ParameterError):
        call()


def test_to_dict():
    d = fmt21_epsilon(1.0, 10**5, 1e-6).to_dict()
    assert d["kind"] == "bound" and d["valid"] is True and "Thm 3.1" in d["reference"] and d["verified"] is False
    d = max_epsilon0("bbgn19", epsilon=1.0, delta=1e-6, population=10**5).to_dict()
    assert isinstance(d["notes"], list) and d["kind"] == "bound"
