"""The approach comparison: exact shuffled RR against the exact single-bit theory, sd against brute force, the
rows against the calibrations they come from, and invalid input."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.amplification import max_epsilon0
from sufficientdp.calibration import calibrate, local_q
from sufficientdp.calibration.compare import (
    APPROACHES,
    _row,
    compare_approaches,
    shuffled_rr_exact_q,
    shuffled_rr_worst_delta,
)
from sufficientdp.ratio.single_bit import single_bit_worst_tail


def _convolution_worst_delta(n, q, eps):
    """Independent oracle: every m, both directions, by direct convolution of exact binomial pmfs (seed 000 §3.1.4).

    ``A' = Bin(m, p) + Bin(n-1-m, q)``, ``P_m = A' + Ber(q)``, ``P_{m+1} = A' + Ber(p)``; O(n^3 / 6) work.
    """
    p, lam = 1.0 - q, math.exp(eps)
    best = 0.0
    for m in range(n):
        prev = np.convolve(binom.pmf(np.arange(m + 1), m, p), binom.pmf(np.arange(n - m), n - 1 - m, q))
        lo, hi = np.concatenate([prev, [0.0]]), np.concatenate([[0.0], prev])
        pm, pm1 = p * lo + q * hi, q * lo + p * hi
        forward, backward = np.maximum(pm - lam * pm1, 0.0), np.maximum(pm1 - lam * pm, 0.0)
        best = max(best, float(forward.sum()), float(backward.sum()))
    return best


@pytest.mark.parametrize("n, q, eps", [(30, 0.2, 0.5), (41, 0.1, 1.0), (25, 0.35, 0.2), (1, 0.25, 0.5)])
def test_worst_delta_matches_exact_single_bit_theory(n, q, eps):
    # single_bit_worst_tail: exact log-domain profile, every m scanned (seed 000 §3.1); and the direct convolution
    exact = single_bit_worst_tail(population=n, q=q, epsilon=eps).delta
    d, m = shuffled_rr_worst_delta(n, q, eps)
    assert exact <= d <= exact + 1e-9
    brute = _convolution_worst_delta(n, q, eps)
    assert brute <= d <= brute + 1e-9
    assert 0 <= m < n


def test_worst_delta_local_rr_closed_form():
    # n = 1 is local RR: delta = p - e^eps q (seed 000; digest Ex. 4.3)
    d, _ = shuffled_rr_worst_delta(1, 0.25, 0.5)
    assert d == pytest.approx(0.75 - math.exp(0.5) * 0.25, abs=1e-10)
    assert d >= 0.75 - math.exp(0.5) * 0.25


def test_exact_q_is_the_boundary():
    n, eps, delta = 40, 1.0, 0.01
    q, _ = shuffled_rr_exact_q(n, eps, delta)
    assert single_bit_worst_tail(population=n, q=q, epsilon=eps).delta <= delta  # passes at q ...
    assert single_bit_worst_tail(population=n, q=q * (1 - 1e-4), epsilon=eps).delta > delta  # ... fails just below
    assert q < local_q(1, eps)


def test_sd_formula_against_brute_force():
    # sd(d_hat) = sqrt(N q p / k)/(p - q): exact variance of d_hat = (M/k - qN)/(p - q) by enumerating every
    # outcome of the k N report bits (N = 2 people, k = 2 reports, true bits (1, 0)), in exact fractions.
    q = Fraction(1, 5)
    p = 1 - q
    n_people, k, truth = 2, 2, (1, 0)
    outcomes = []
    for bits in itertools.product((0, 1), repeat=n_people * k):
        prob = Fraction(1)
        for i, b in enumerate(bits):
            one = p if truth[i // k] == 1 else q
            prob *= one if b else 1 - one
        d_hat = (Fraction(sum(bits), k) - q * n_people) / (p - q)
        outcomes.append((prob, d_hat))
    mean = sum(pr * d for pr, d in outcomes)
    var = sum(pr * (d - mean) ** 2 for pr, d in outcomes)
    assert mean == 1  # unbiased
    row = _row("x", 0.2, population=n_people, reports=k, bits=1, kind="exact", guarantee="", notes=[])
    assert row.sd == pytest.approx(math.sqrt(float(var)), rel=1e-14)
    assert row.sd_per_sqrt_n == pytest.approx(math.sqrt(float(var) / n_people), rel=1e-14)


@pytest.mark.slow
def test_rows_small_l1():
    c = compare_approaches(bits=1, population=100, epsilon=1.0, delta=1e-3, sufficient=False)
    assert [r.approach for r in c.rows] == list(APPROACHES)
    loc = c.row("local-dp")
    assert loc.q == local_q(1, 1.0) and loc.kind == "exact"
    ex = c.row("shuffled-rr-exact")
    assert ex.kind == "exact" and ex.q < loc.q and ex.sd < loc.sd
    assert single_bit_worst_tail(population=100, q=ex.q, epsilon=1.0).delta <= 1e-3
    paper = c.row("sufficient-dp-paper")
    assert paper.kind == "heuristic"
    assert paper.q == calibrate(bits=1, population=100, epsilon=1.0, method="paper-sigma").q
    assert c.row("sufficient-dp-proven").q is None and c.row("sufficient-dp-homogeneous").q is None
    json.dumps(c.to_dict())
    assert isinstance(c.records, list) and set(c.records[0]) >= {"approach", "q", "sd", "kind", "guarantee", "notes"}


def test_amplification_rows_certify_their_q():
    n, eps, delta = 10**6, 1.0, 1e-6
    c = compare_approaches(bits=2, population=n, epsilon=eps, delta=delta, reports=2, sufficient=False)
    loc = c.row("local-dp")
    assert c.row("shuffled-rr-exact").q is None  # L > 1: not applicable
    for b in ("efmrtt19", "bbgn19", "fmt21"):
        row = c.row(f"shuffle-{b}")
        assert row.kind == "bound"
        assert row.q <= loc.q
        # the per-person epsilon0 of this q over kL = 4 bits never exceeds what the bound certifies
        assert row.epsilon0 <= max_epsilon0(b, epsilon=eps, delta=delta, population=n).usable_epsilon0
    assert c.row("shuffle-fmt21").q < loc.q  # a million people: FMT amplifies


@pytest.mark.slow
def test_sufficient_rows_small():
    c = compare_approaches(bits=2, population=50, epsilon=1.0, delta=1e-3, eta=0.01)
    for method, scope in (("homogeneous", "homogeneous"), ("proven", "all-collections")):
        row = c.row(f"sufficient-dp-{method}")
        assert row.kind == "bound" and row.scope == scope
        assert row.q == calibrate(bits=2, population=50, epsilon=1.0, method=method, eta=0.01).q
    # the proof costs noise: the all-collections q is larger than the homogeneous one
    assert c.row("sufficient-dp-proven").q > c.row("sufficient-dp-homogeneous").q
    assert c.row("local-dp").scope == "per-report" and c.row("sufficient-dp-paper").scope == "homogeneous"
    assert c.row("shuffled-rr-exact").kind == "n/a"


def test_exact_row_skipped_for_large_population():
    c = compare_approaches(bits=1, population=500, epsilon=1.0, delta=1e-3, sufficient=False,
                           exact_max_population=100)
    assert c.row("shuffled-rr-exact").q is None and "not computed" in c.row("shuffled-rr-exact").notes[0]
    with pytest.raises(KeyError):
        c.row("nope")


@pytest.mark.parametrize("kwargs", [
    {"bits": 0}, {"population": 0}, {"epsilon": 0.0}, {"epsilon": float("inf")}, {"delta": 0.0}, {"delta": 1.0},
    {"eta": 0.0}, {"eta": 1.5}, {"reports": 0}, {"beta": -1.0}, {"beta": True}, {"exact_max_population": 0},
])
def test_compare_invalid_inputs(kwargs):
    base = {"bits": 1, "population": 10, "epsilon": 1.0, "delta": 0.01, "sufficient": False}
    base.update(kwargs)
    with pytest.raises(ParameterError):
        compare_approaches(**base)


@pytest.mark.parametrize("call", [
    lambda: shuffled_rr_worst_delta(0, 0.2, 1.0),
    lambda: shuffled_rr_worst_delta(10, 0.5, 1.0),
    lambda: shuffled_rr_worst_delta(10, 0.2, -1.0),
    lambda: shuffled_rr_exact_q(10, 1.0, 0.0),
    lambda: shuffled_rr_exact_q(10, 0.0, 0.1),
    lambda: shuffled_rr_exact_q(0, 1.0, 0.1),
])
def test_exact_helpers_invalid_inputs(call):
    with pytest.raises(ParameterError):
        call()
