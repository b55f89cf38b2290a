"""The worst-case-over-m functions of accounting.shuffled and `account --mechanism shuffled-rr` all run on the one
engine, ratio.single_bit.worst_over_crowds, and are exact up to 10**6 people."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from sufficientdp.accounting.shuffled import shuffled_rr_pld, shuffled_rr_worst_bracket, shuffled_rr_worst_profile
from sufficientdp.cli._cmd_account import account
from sufficientdp.ratio.single_bit import worst_over_crowds


@pytest.mark.slow
@pytest.mark.parametrize("n,q", [(20, 0.2), (700, 0.05), (3000, 0.3)])
def test_profile_and_bracket_are_the_engine(n: int, q: float) -> None:
    eps = [0.0, 0.05, 0.4]
    prof = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps, tail_tol=0.0)
    bound = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps)  # tail_tol > 0: rigorous upper ends
    assert prof.kind == "exact" and bound.kind == "bound"
    for i, e in enumerate(eps):
        w = worst_over_crowds(n, q, e)
        assert (prof.delta[i], prof.eta[i]) == (w.delta, w.eta)
        assert (bound.delta[i], bound.eta[i]) == (w.delta_upper, w.eta_upper)
        assert (int(prof.worst_m_delta[i]), prof.worst_direction_delta[i]) == (w.worst_m_delta,
                                                                                w.worst_direction_delta)
        assert (int(prof.worst_m_eta[i]), prof.worst_direction_eta[i]) == (w.worst_m_eta, w.worst_direction_eta)
        if e > 0:
            br = shuffled_rr_worst_bracket(population=n, q=q, epsilon=e)
            assert br.kind == "exact" and br.delta_upper == w.delta and br.eta_upper == w.eta
            assert br.details["delta_bracket"] == (w.delta_lower, w.delta_upper)  # read-only details: a tuple
            assert (br.worst_m, br.worst_direction, br.worst_m_eta) == (w.worst_m_delta, w.worst_direction_delta,
                                                                        w.worst_m_eta)


def test_subset_lower_bounds_use_the_engine() -> None:
    n, q, eps = 3000, 0.1, 0.2
    sub = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps, ms=[0, 10, 2990])
    full = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps)
    assert sub.kind == "lower bound" and float(sub.delta[0]) <= float(full.delta[0])
    m, d = int(sub.worst_m_delta[0]), sub.worst_direction_delta[0]
    exact_pair = float(shuffled_rr_pld(population=n, m=m, q=q, direction=d, tail_tol=0.0).delta(eps))
    assert float(sub.delta[0]) <= exact_pair * (1 + 1e-12) and float(sub.delta[0]) == pytest.approx(exact_pair,
                                                                                                    rel=1e-8)


def test_bracket_path_lower_end_below_the_exact_value() -> None:
    n, q, eps = 5000, 0.2, 0.3
    exact = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps)
    br = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps, full_scan_max=100)
    assert exact.kind == "exact" and br.kind == "bracket"
    assert br.delta_lower <= exact.delta_upper <= br.delta_upper
    assert br.eta_lower <= exact.eta_upper <= br.eta_upper
    if exact.worst_m < 16:  # the ends are scanned
        assert br.delta_lower == pytest.approx(exact.delta_upper, rel=1e-8)


def _args(**kw: object) -> argparse.Namespace:
    base = {"mechanism": "shuffled-rr", "epsilon": 0.05, "population": 5000, "q": 0.25, "bits": None,
            "differing": None, "sigma": None, "full_scan_max": 1_000_000}
    base.update(kw)
    return argparse.Namespace(**base)


@pytest.mark.slow
def test_account_is_exact_above_2000_people() -> None:
    out = account(_args())  # n = 5000: previously a loose bracket, now every m exactly
    w = worst_over_crowds(5000, 0.25, 0.05)
    assert out["kind"] == "exact" and out["delta"] == w.delta == out["delta_lower"] and out["eta"] == w.eta
    assert out["upper_source"].startswith("exact scan of every m") and out["bound_status"] == {}
    assert out["exact_bracket"] == {"delta": [w.delta_lower, w.delta_upper], "eta": [w.eta_lower, w.eta_upper]}
    assert out["method"] == "tilted-contour" and (out["worst_m"], out["worst_direction"]) == (w.worst_m_delta,
                                                                                               w.worst_direction_delta)
    keys = {"mechanism", "epsilon", "kind", "population", "q", "delta", "eta", "delta_lower", "eta_lower", "worst_m",
            "worst_direction", "worst_m_eta", "scanned", "upper_source", "delta_upper_unverified",
            "eta_upper_unverified", "unverified_source", "bound_status", "neighbours"}
    assert keys <= set(out)
    json.dumps(out)
    br = account(_args(full_scan_max=100))  # the bracket path is still there on request
    assert br["kind"] == "bracket" and br["exact_bracket"] is None and keys <= set(br)
    assert br["delta_lower"] <= out["delta"] <= br["delta"]


@pytest.mark.slow
def test_profile_scans_a_million_people() -> None:
    prof = shuffled_rr_worst_profile(population=10**6, q=0.25, epsilon=[0.01])
    assert prof.kind == "bound" and prof.scanned.startswith("all m")
    pairs = prof.details["pairs"][0]  # every m covered: evaluated, or proved below the worst (issue 10)
    assert np.all(prof.delta > 0) and pairs["pairs_evaluated"] + pairs["pairs_bounded"] == 10**6
