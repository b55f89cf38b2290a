"""The last hostile inputs of docs/reliability.md ("Not yet covered", session 11), each pinned: a ParameterError
naming the parameter, the value and the range, or a correct answer where one is computable.

Truths are independent of the code: closed-form binomial laws in mpmath, the single uniform draw the demo's
population was defined by, the observed histogram as the MLE when the channel is (almost) the identity.
"""

import math
import tracemalloc
import warnings
from decimal import Decimal

import mpmath as mp
import numpy as np
import pytest

import sufficientdp.demo as demo
from sufficientdp import joint_frequencies
from sufficientdp._errors import ParameterError
from sufficientdp.accounting.mechanisms import bit_vector_randomized_response
from sufficientdp.accounting.rounds import rounds_tail
from sufficientdp.ratio.proven import MAX_CURVE_LOSS, Domain, proven_tail


class _Reached(Exception):
    """Raised by a stubbed calibration: the demo's own checks passed."""


def _stub_calibrate(**kwargs):
    raise _Reached


# ------------------------------------------------------------------------------------------------ demo memory
def test_demo_population_1e12_refused_before_any_work(monkeypatch):
    monkeypatch.setattr(demo, "calibrate", _stub_calibrate)
    with pytest.raises(ParameterError, match=r"population must be in \[1, 41666666\].*got 1000000000000"):
        demo.run_demo(population=10**12)


@pytest.mark.parametrize(("bits", "reports"), [(16, 1), (1, 1), (4096, 1), (16, 1000), (65, 3)])
def test_demo_limit_is_the_documented_byte_count(monkeypatch, bits, reports):
    monkeypatch.setattr(demo, "calibrate", _stub_calibrate)
    words = -(-bits // 64)
    per_person = bits + 16 + 8 * words * (reports + 1)  # docs: N L + 16 N + 8 ceil(L/64) N (k + 1) bytes
    most = 2 * 10**9 // per_person
    with pytest.raises(_Reached):  # the largest population passes the check (and reaches the calibration)
        demo.run_demo(population=most, bits=bits, reports=reports)
    with pytest.raises(ParameterError, match=rf"population must be in \[1, {most}\].*got {most + 1}$"):
        demo.run_demo(population=most + 1, bits=bits, reports=reports)


def test_demo_default_is_far_below_the_limit():
    assert demo.demo_bytes(100_000, 16, 1) == 4_800_000 < demo.MAX_DEMO_BYTES


@pytest.mark.parametrize(("name", "value"), [("bits", 4097), ("bits", 0), ("reports", 1001), ("population", 0),
                                             ("population", 10**12 + 1), ("population", 1.5)])
def test_demo_argument_ranges(monkeypatch, name, value):
    monkeypatch.setattr(demo, "calibrate", _stub_calibrate)
    with pytest.raises(ParameterError, match=name):
        demo.run_demo(**{name: value})


@pytest.mark.parametrize(("population", "bits"), [(1, 1), (3, 2), (70_001, 16), (5_000, 300), (3, (1 << 20) + 3)])
def test_skewed_population_is_the_single_draw(population, bits):
    # the definition: one rng.random((N, L)) compared with 0.6 * 0.75**j, then bit 1 copies bit 0 for a third
    rng = np.random.default_rng(7)
    truth = (rng.random((population, bits)) < 0.6 * 0.75 ** np.arange(bits)).astype(np.uint8)
    if bits >= 2:
        copy = rng.random(population) < 1 / 3
        truth[copy, 1] = truth[copy, 0]
    got = demo.skewed_population(population, bits, np.random.default_rng(7))
    assert got.dtype == np.uint8 and got.shape == (population, bits)
    np.testing.assert_array_equal(got, truth)


def test_skewed_population_holds_one_byte_per_entry():
    population, bits = 200_000, 64  # 12.8 million entries: the single draw held 9 bytes each (115 MB)
    tracemalloc.start()
    try:
        demo.skewed_population(population, bits, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * population * bits


# ------------------------------------------------------------------------------------------------ proven_tail
_BASE = {"q": 0.3, "bits": 4, "population": 100, "epsilon": 1.0}


@pytest.mark.parametrize("resolution", [5e-324, 1e-13, 0.0, 1.0, float("nan")])
def test_proven_tail_resolution_range(resolution):
    with pytest.raises(ParameterError, match=r"resolution must be"):
        proven_tail(**_BASE, resolution=resolution)


def test_proven_tail_finest_resolution_accepted():
    assert 0.0 < proven_tail(**_BASE, resolution=1e-12).eta < 1.0


@pytest.mark.parametrize("hint", [np.array([0.5, 0.6]), "0.5", True, float("nan"), float("inf"), [0.5]])
def test_proven_tail_epsilon_prime_hint_checked(hint):
    with pytest.raises(ParameterError, match=r"epsilon_prime_hint must be .*; got"):
        proven_tail(**_BASE, epsilon_prime_hint=hint)


def test_proven_tail_numpy_scalar_hint_still_used():
    # any e' gives a valid bound; a hint is only where to look: the answer stays close to the hint-free one
    free = proven_tail(**_BASE).eta
    hinted = proven_tail(**_BASE, epsilon_prime_hint=np.float64(0.5)).eta
    assert hinted == pytest.approx(free, rel=0.05)


@pytest.mark.parametrize("max_weight", [Decimal("nan"), "2", 0, 1.5, float("nan"), 6])
def test_domain_from_max_weight_checked(max_weight):
    with pytest.raises(ParameterError, match=r"max_weight must be an integer >= 1( and <= 5)?; got"):
        Domain.from_max_weight(5, max_weight)


def test_domain_from_max_weight_values():
    assert Domain.from_max_weight(5, 2) == Domain(bits=5, kind="weight", max_weight=2)
    assert Domain.from_max_weight(5, 5) == Domain(bits=5) == Domain.from_max_weight(5, None)
    with pytest.raises(ParameterError, match="bits"):
        Domain.from_max_weight(Decimal("nan"), 2)


# ------------------------------------------------------------------------------------------ bit-vector RR
def _log_binom_pmf(m: int, n: int, log_p, log_1mp) -> float:
    """log P[Binomial(n, p) = m] from log p and log(1 - p) (1 - 1e-300 needs them apart)."""
    return float(mp.log(mp.binomial(n, m)) + m * log_p + (n - m) * log_1mp)


@mp.workdps(50)
def test_bit_vector_rr_atoms_at_q_1e_300():
    # P[m] = Binomial(j, 1 - q) at m; 1 - q rounds to 1 in floats, so the linear pmf lost every atom but m = j
    q, j = mp.mpf("1e-300"), 4
    pld = bit_vector_randomized_response(1e-300, j, j)
    a = float(mp.log1p(-q) - mp.log(q))
    np.testing.assert_allclose(pld.losses, [(2 * m - j) * a for m in range(j + 1)], rtol=1e-15)
    lq, lp = mp.log(q), mp.log1p(-q)
    np.testing.assert_allclose(pld.log_probabilities, [_log_binom_pmf(m, j, lp, lq) for m in range(j + 1)],
                               rtol=1e-13, atol=1e-310)
    rev = pld.reverse()  # was: "probabilities + infinity_mass must sum to 1"
    # its atoms (those whose mass is a normal float) are Binomial(j, q) at m = (j - loss / a) / 2
    ms = np.rint((j - rev.losses / a) / 2).astype(int)
    assert ms.tolist() == [1, 0]  # m = 2..4 have Q-mass 1e-600 and less (0 as floats)
    np.testing.assert_allclose(rev.log_probabilities, [_log_binom_pmf(m, j, lq, lp) for m in ms], rtol=1e-12,
                               atol=1e-299)
    assert float(rev.probabilities.sum()) == pytest.approx(1.0, abs=1e-15)


@mp.workdps(40)
def test_bit_vector_rr_4096_bits_both_directions_exact():
    # L = (2m - j) log(p/q), m ~ Binomial(j, p) under P; the reverse loss -(2m - j) log(p/q), m ~ Binomial(j, q)
    # under Q: by symmetry both tails are P[Binomial(j, q) < (j - eps / a) / 2], summed exactly in mpmath
    j, q = 4096, mp.mpf(3) / 10
    a = mp.log((1 - q) / q)
    pld = bit_vector_randomized_response(0.3, j, j)
    rev = pld.reverse()
    for eps in (1300.0, 1388.0, 1450.0):
        cut = (j - mp.mpf(eps) / a) / 2  # m < cut
        exact = mp.fsum(mp.binomial(j, m) * q**m * (1 - q) ** (j - m) for m in range(int(mp.ceil(cut))))
        assert float(rev.eta(eps)) == pytest.approx(float(exact), rel=1e-9, abs=1e-300)
        assert float(pld.eta(eps)) == pytest.approx(float(exact), rel=1e-9, abs=1e-300)


# ------------------------------------------------------------------------------------------ composed bounds
def test_rounds_tail_q_1e_300_refused_naming_q():
    with pytest.raises(ParameterError, match=r"^q must be in \[9\.98245e-39, 0\.5\) .*got 1e-300"):
        rounds_tail(q=1e-300, bits=4, population=100, epsilon=1.0, rounds=2)


def test_rounds_tail_one_round_at_q_1e_300_is_the_one_release_bound():
    # T = 1 composes nothing (the one-release bounds), so no curve can overflow: the trivial bound, as ``tail``
    r = rounds_tail(q=1e-300, bits=4, population=100, epsilon=1.0, rounds=1)
    assert r.eta == proven_tail(q=1e-300, bits=4, population=100, epsilon=1.0).eta == 1.0
    assert r.delta_upper is not None and 0.99 < r.delta_upper <= 1.0


def test_proven_tail_k_reports_q_1e_300_refused_naming_q():
    with pytest.raises(ParameterError, match=r"^q must be in \[.*got 1e-300"):
        proven_tail(q=1e-300, bits=4, population=100, epsilon=1.0, reports=2)


def test_composed_bounds_at_the_smallest_q_accepted_run_clean():
    q_lo = 9.98245e-39  # the range's printed lower end for all of {0,1}^4
    assert 4 * math.log((1 - q_lo) / q_lo) <= MAX_CURVE_LOSS  # it is inside the documented loss limit
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was: RuntimeWarning (e**epsilon overflowed in the curves' hull)
        r = rounds_tail(q=q_lo, bits=4, population=100, epsilon=1.0, rounds=2)
        k = proven_tail(q=q_lo, bits=4, population=100, epsilon=1.0, reports=2)
    assert r.eta == 1.0 and k.eta == 1.0  # nothing is hidden at such a q: one report shows the vector


def test_one_hot_domain_limit_uses_its_distance():
    # one-hot: distance 2, so q down to 1/(1 + e**175) is accepted; below it refused
    q_ok, q_bad = 1.0 / (1.0 + math.exp(174.0)), 1.0 / (1.0 + math.exp(176.0))
    dom = Domain(bits=8, kind="onehot")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rounds_tail(q=q_ok, bits=8, population=50, epsilon=1.0, rounds=2, domain=dom).eta <= 1.0
    with pytest.raises(ParameterError, match=r"^q must be in .*one-hot"):
        rounds_tail(q=q_bad, bits=8, population=50, epsilon=1.0, rounds=2, domain=dom)


def test_local_dp_answer_is_not_refused():
    # the total loss below epsilon: the answer is 0 without any curve, at any q the loss allows
    r = rounds_tail(q=0.45, bits=2, population=10, epsilon=40.0, rounds=2)
    assert r.eta == 0.0


# ------------------------------------------------------------------------------------------ joint EM at tiny q
@pytest.mark.parametrize(("bits", "q"), [(3, 5e-324), (10, 1e-100), (16, 1e-60), (10, 1e-300)])
@pytest.mark.parametrize("solver", ["lbfgs", "em"])
def test_joint_em_tiny_q_is_the_observed_histogram(bits, q, solver):
    # the channel is the identity up to q: the MLE of sum_s h_s log (A pi)_s is pi = h / n (the observed
    # frequencies maximize sum h log m over every distribution m), i.e. the counts h / k
    rng = np.random.default_rng(3)
    h = np.zeros(1 << bits, dtype=np.int64)
    h[rng.integers(0, 1 << bits, 20)] += rng.integers(1, 50, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was: 0/0 in h / (A pi) -> a NaN fit, then numpy's "n < 0"
        est = joint_frequencies(h, q=q, method="em", solver=solver, max_iter=300)
    assert est.converged
    np.testing.assert_allclose(est.estimate, h, rtol=1e-9, atol=1e-9)


def test_joint_em_bootstrap_at_q_5e_324():
    h = np.array([5, 0, 0, 0, 0, 0, 0, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = joint_frequencies(h, q=5e-324, method="em", bootstrap=20, rng=np.random.default_rng(0))
    np.testing.assert_allclose(est.estimate, h, atol=1e-9)
    assert np.all(est.lower <= est.estimate) and np.all(est.estimate <= est.upper)


# ------------------------------------------------------------------------------------------ values, not reports
@pytest.mark.parametrize(("values", "message"), [
    ([[2, 0]], r"^values must hold only 0 and 1; got 2 at row 0, bit 0$"),
    ([[0, 1], [1]], r"^values must be a rectangular 2-D array"),
    ([1, 0], r"^values must be a 2-D array \(people x bits\); got shape \(2,\)$"),
    ([["a"]], r"^values must hold 0/1 numbers"),
])
def test_randomize_names_values_not_reports(values, message):
    # randomize(values, reports=k): "reports must ..." read as the number k
    from sufficientdp import randomize
    from sufficientdp._errors import DataError
    from sufficientdp.parameters import RandomizationParams
    from sufficientdp.randomization.randomizer import Randomizer

    with pytest.raises(DataError, match=message):
        randomize(values, q=0.2)
    if np.asarray(values, dtype=object).ndim == 2 and len({len(r) for r in values}) == 1:
        with pytest.raises(DataError, match=message):
            Randomizer(RandomizationParams(bits=len(values[0]), q=0.2)).randomize(values)


def test_randomize_domain_check_names_values():
    from sufficientdp import randomize
    from sufficientdp._errors import DataError

    with pytest.raises(DataError, match=r"^values must hold only 0 and 1"):
        randomize([[3, 0]], q=0.2, max_weight=1)


def test_tally_still_names_reports():
    from sufficientdp import tally
    from sufficientdp._errors import DataError

    with pytest.raises(DataError, match=r"^reports must hold only 0 and 1; got 2 at row 0, bit 0$"):
        tally([[2]])
