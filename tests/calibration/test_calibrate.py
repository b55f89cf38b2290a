"""Calibration (seed 001 §3.2, §4, §5): the condition holds at the returned q and fails just below."""

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sufficientdp import ParameterError, calibrate, local_q, sigma_per_sqrt_n
from sufficientdp.calibration import effective_bits, phi_from_q, q_from_phi
from sufficientdp.calibration.search import Q_MIN
from sufficientdp.ratio import ratio_moments


def heuristic_lhs(q, bits, n, k=1, beta=3.0, simplified=False):
    m = ratio_moments(q=q, bits=bits, n=n * k, n_outlier=k, simplified=simplified)
    return m.mean + beta * m.sd


@settings(max_examples=60, deadline=None)
@given(
    bits=st.integers(1, 64),
    population=st.integers(2, 10**9),
    epsilon=st.floats(0.05, 8.0),
    method=st.sampled_from(["paper-sigma", "paper-simplified"]),
)
def test_condition_holds_at_q_and_fails_just_below(bits, population, epsilon, method):
    cal = calibrate(bits=bits, population=population, epsilon=epsilon, method=method)
    lam = math.exp(epsilon)
    simplified = method == "paper-simplified"
    assert 0 < cal.q < 0.5
    if cal.q == cal.local_q:
        return  # capped at local DP
    assert heuristic_lhs(cal.q, bits, population, simplified=simplified) <= lam * (1 + 1e-12)
    if cal.q == Q_MIN:
        return  # the solver's floor: even the smallest q it considers meets the heuristic (huge N, large eps)
    below = cal.q * (1 - 1e-7)
    assert heuristic_lhs(below, bits, population, simplified=simplified) > lam


@settings(max_examples=40, deadline=None)
@given(bits=st.integers(1, 48), population=st.integers(10, 10**8), epsilon=st.floats(0.1, 5.0))
def test_monotone_in_population_epsilon_and_bits(bits, population, epsilon):
    q = calibrate(bits=bits, population=population, epsilon=epsilon, method="paper-sigma").q
    assert calibrate(bits=bits, population=population * 4, epsilon=epsilon, method="paper-sigma").q <= q
    assert calibrate(bits=bits, population=population, epsilon=epsilon * 1.5, method="paper-sigma").q <= q
    assert calibrate(bits=bits + 1, population=population, epsilon=epsilon, method="paper-sigma").q >= q
    assert calibrate(bits=bits, population=population, epsilon=epsilon, method="paper-simplified").q >= q * (1 - 1e-12)


def test_local_q_exact_in_high_precision():
    # (p/q)^L = lambda exactly at the local-DP q (seed 001 eq. 4.1-4.2)
    for bits, eps in [(5, math.log(2)), (40, 2.0), (1000, 0.5), (1, 10.0)]:
        qf = local_q(bits, eps)
        with mp.workdps(50):
            q = mp.mpf(qf)
            loss = bits * mp.log((1 - q) / q)
        # never above epsilon (rounded up to the safe side), and within a few steps of q's double grid below it:
        # one ulp of q moves the loss by L ulp(q) / (p q).
        step = bits * (math.nextafter(qf, 1.0) - qf) / (qf * (1 - qf))
        assert loss <= eps
        assert eps - loss <= 4 * step + 1e-14 * eps


def test_local_method_and_reports():
    cal = calibrate(bits=40, population=10**7, epsilon=2, method="local")
    assert cal.q == cal.local_q and cal.gain_vs_local == 1.0 and cal.ratio_mean is None
    assert "proof" in cal.guarantee
    # k reports compose: (p/q)^(kL) <= lambda
    assert calibrate(bits=5, population=100, epsilon=1, method="local", reports=3).q == pytest.approx(
        local_q(15, 1.0))


def test_heuristic_is_labelled():
    cal = calibrate(bits=5, population=1000, epsilon=1, method="paper-sigma")
    assert "heuristic" in cal.guarantee and "not a bound" in cal.guarantee
    assert any("ERRATA 3" in n for n in cal.notes)


def test_max_weight_reduction_and_note():
    cal = calibrate(bits=100, population=10**6, epsilon=1, max_weight=1, method="paper-sigma")
    assert cal.effective_bits == 2
    assert cal.q == calibrate(bits=2, population=10**6, epsilon=1, method="paper-sigma").q
    assert any("unproven" in n for n in cal.notes)
    assert effective_bits(10, 7) == 10
    with pytest.raises(ParameterError, match=r"max_weight must be an integer >= 1 and <= 10; got 11"):
        calibrate(bits=10, population=100, epsilon=1, max_weight=11)


def test_reports_use_maclaurin_reduction():
    one = calibrate(bits=40, population=10**7, epsilon=2, method="paper-sigma")
    four = calibrate(bits=40, population=10**7, epsilon=2, reports=4, method="paper-sigma")
    assert four.q > one.q  # k reports need more noise per report
    assert any("Maclaurin" in n for n in four.notes)
    lam_k = math.exp(2 / 4)
    assert heuristic_lhs(four.q, 40, 10**7, k=4) <= lam_k * (1 + 1e-12)
    assert four.sigma_per_sqrt_n == pytest.approx(sigma_per_sqrt_n(four.q, 4))


def test_sigma_per_sqrt_n_formula():
    # seed 001 §4: q = 0.351 -> 1.6 (printed to 2 digits)
    assert sigma_per_sqrt_n(0.351) == pytest.approx(1.6, abs=0.005)
    assert sigma_per_sqrt_n(0.2, reports=4) == pytest.approx(math.sqrt(0.16 / 4) / 0.6)


@given(st.floats(1e-6, 0.4999))
def test_phi_round_trip(q):
    # seed 001 eq. (3.14) and (3.16)
    assert q_from_phi(phi_from_q(q)) == pytest.approx(q, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"bits": 0}, "bits must be an integer >= 1 and <= 4096; got 0"),
        ({"population": 0}, "population must be an integer >= 1 and <= 1000000000000; got 0"),
        ({"epsilon": -1}, "epsilon must be in (0, 50]"),
        ({"epsilon": math.nan}, "epsilon must be a real number"),
        ({"beta": -1}, "beta must be finite and >= 0"),
        ({"method": "magic"}, "method must be one of proven, homogeneous, exact, mc, local, paper-sigma, paper-simplified; got 'magic'"),
        ({"reports": 0}, "reports must be an integer >= 1 and <= 1000; got 0"),
    ],
)
def test_invalid(kwargs, fragment):
    base = {"bits": 5, "population": 1000, "epsilon": 1.0}
    base.update(kwargs)
    with pytest.raises(ParameterError) as info:
        calibrate(**base)
    assert fragment in str(info.value)


def test_population_one_is_local():
    cal = calibrate(bits=3, population=1, epsilon=1, method="paper-sigma")
    assert cal.q == cal.local_q


@pytest.mark.slow
def test_kind_and_scope_of_each_method():
    cals = {m: calibrate(bits=2, population=50, epsilon=1.0, method=m)
            for m in ("proven", "homogeneous", "local", "paper-sigma", "paper-simplified")}
    assert {m: c.kind for m, c in cals.items()} == {
        "proven": "bound", "homogeneous": "bound", "local": "exact", "paper-sigma": "heuristic",
        "paper-simplified": "heuristic"}
    assert {m: c.scope for m, c in cals.items()} == {
        "proven": "all-collections", "homogeneous": "homogeneous", "local": "per-report",
        "paper-sigma": "homogeneous", "paper-simplified": "homogeneous"}
    d = calibrate(bits=2, population=50, epsilon=1.0, method="local").to_dict()
    assert d["kind"] == "exact" and d["scope"] == "per-report"


def test_default_is_proven_and_certified_is_refused_with_the_new_name():
    assert calibrate(bits=2, population=50, epsilon=1.0).method == "proven"
    with pytest.raises(ParameterError, match="renamed 'homogeneous'"):
        calibrate(bits=2, population=50, epsilon=1.0, method="certified")


@pytest.mark.slow
def test_proven_meets_its_target_for_every_pair_of_collections():
    # Issue 9, "Done when": the default q meets eta for every pair of neighbouring collections, checked here by
    # exhaustive search over all pairs (sufficientdp.ratio.worst_case, exact) on small crowds.
    from sufficientdp.ratio.worst_case import worst_case_exhaustive

    for bits, population, eps, target in ((2, 6, 1.0, 0.05), (2, 8, 0.7, 0.1), (3, 4, 1.5, 0.05)):
        c = calibrate(bits=bits, population=population, epsilon=eps, eta=target)
        assert c.eta_at_q <= target
        assert worst_case_exhaustive(bits, population, c.q, eps).eta <= target


def test_proven_at_one_bit_is_the_exact_all_crowd_scan():
    # Issue 9: at L = 1, N = 1000, eps = 1 the homogeneous calibration (q = 0.01636) misses the target 2x (a crowd
    # with 18 ones). The default now calibrates on the exact worst over every crowd, and is tight.
    from sufficientdp.ratio.single_bit import single_bit_worst_tail

    c = calibrate(bits=1, population=1000, epsilon=1.0, eta=1e-3)
    assert c.kind == "exact" and c.scope == "all-collections"
    assert single_bit_worst_tail(population=1000, q=c.q, epsilon=1.0).eta <= 1e-3
    assert single_bit_worst_tail(population=1000, q=c.q * (1 - 1e-3), epsilon=1.0).eta > 1e-3 * 0.98
    assert c.q > 0.0164  # more noise than the homogeneous answer, which was wrong


@pytest.mark.slow
def test_homogeneous_searches_below_the_lowest_grid_point():
    # Regression: with one bit and a large crowd the answer lies far below q_local / grid; the search used to
    # return the grid's lowest passing point (q = 0.0168 here, whose eta is ~1e-206), 90x more noise than needed.
    from sufficientdp.ratio.single_bit import single_bit_tail

    c = calibrate(bits=1, population=100_000, epsilon=1.0, eta=1e-3, method="homogeneous")
    assert c.q < 1e-3
    assert c.eta_at_q <= 1e-3
    # independent check: the exact single-bit tail (seed 000) at the returned q, the worse of both directions
    exact = single_bit_tail(population=100_001, m=0, q=c.q, epsilon=1.0, direction="both")
    assert exact.eta <= 1e-3
    # and 5% less noise misses the target exactly, so the answer is not wastefully large
    assert single_bit_tail(population=100_001, m=0, q=0.95 * c.q, epsilon=1.0, direction="both").eta > 1e-3


def test_eta_names_a_value_never_a_target():
    # issue 11: "eta means the target in one result and the value in another". A calibration's target is
    # eta_target, the value at q is eta_at_q; the old attribute warns and the JSON has no ambiguous "eta" key.
    cal = calibrate(bits=3, population=200, epsilon=2.0, eta=0.01, method="homogeneous")
    assert cal.eta_target == 0.01 and cal.eta_at_q is not None and cal.eta_at_q <= 0.01
    d = cal.to_dict()
    assert d["eta_target"] == 0.01 and d["eta_at_q"] == cal.eta_at_q and "eta" not in d
    with pytest.warns(DeprecationWarning, match="use eta_target"):
        assert cal.eta == 0.01
    assert calibrate(bits=5, population=1000, epsilon=2.0, method="local").eta_target is None
