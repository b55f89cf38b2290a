"""Shuffled randomized response PLDs against brute force (all 2^n flip patterns, Fractions), against
ratio.single_bit's exact tails, and the homogeneous L-bit histogram PLD against ratio.exact's enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.amplification import efmrtt19_epsilon, fmt21_epsilon
from sufficientdp.accounting.shuffled import (
    MAX_PROFILE_ATOMS,
    homogeneous_histogram_pld,
    shuffled_rr_pld,
    shuffled_rr_profile,
    shuffled_rr_worst_bracket,
    shuffled_rr_worst_profile,
)
from sufficientdp.loss import PrivacyLossDistribution
from sufficientdp.ratio.exact import ratio_distribution
from sufficientdp.ratio.single_bit import log_pmf, single_bit_tail, single_bit_worst_tail


# --- brute force: all 2^n flip patterns with exact fractions --------------------------------------------------------
def _count_pmf(bits: list[int], q: Fraction) -> list[Fraction]:
    """P[count of reported ones = s] by enumerating every flip pattern of the n people."""
    n = len(bits)
    out = [Fraction(0)] * (n + 1)
    for flips in itertools.product((0, 1), repeat=n):
        prob = Fraction(1)
        for f in flips:
            prob *= q if f else 1 - q
        out[sum(b ^ f for b, f in zip(bits, flips, strict=True))] += prob
    return out


@pytest.mark.parametrize("n", [1, 2, 4, 6])
@pytest.mark.parametrize("q", [Fraction(1, 4), Fraction(1, 10)])
def test_pld_matches_brute_force_enumeration(n: int, q: Fraction) -> None:
    # eps = log r with r rational, so the hockey stick sum_s (P(s) - r Q(s))_+ and the tail are exact fractions
    for m in range(n):
        base = [1] * m + [0] * (n - 1 - m)
        p_m = _count_pmf(base + [0], q)  # A_n(m)
        p_m1 = _count_pmf(base + [1], q)  # A_n(m+1)
        for direction, (pp, qq) in {"remove": (p_m, p_m1), "add": (p_m1, p_m)}.items():
            pld = shuffled_rr_pld(population=n, m=m, q=float(q), direction=direction, tail_tol=0.0)
            assert pld.infinity_mass == 0.0
            for r in (Fraction(1), Fraction(6, 5), Fraction(2), Fraction(7, 2)):
                hockey = sum((max(Fraction(0), a - r * b) for a, b in zip(pp, qq, strict=True)), Fraction(0))
                tail = sum((a for a, b in zip(pp, qq, strict=True) if a > r * b), Fraction(0))
                assert float(pld.delta(math.log(r))) == pytest.approx(float(hockey), abs=1e-14)
                # eta at a threshold equal to an atom is ill-conditioned in floats: nudge when close
                eps = math.log(r)
                if np.min(np.abs(pld.losses - eps)) > 1e-9:
                    assert float(pld.eta(eps)) == pytest.approx(float(tail), abs=1e-14)


# --- agreement with ratio.single_bit ------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    "n,m,q",
    [(30, 0, 0.2), (30, 7, 0.3), (500, 0, 0.1), (500, 250, 0.25), (20_000, 3, 0.25), (20_000, 9_000, 0.25),
     (200_000, 100_000, 0.4), (200_000, 199_999, 0.05)],
)
def test_profile_matches_single_bit_tail(n: int, m: int, q: float) -> None:
    eps = [0.01, 0.05, 0.2, 1.0]
    prof = shuffled_rr_profile(population=n, m=m, q=q, epsilon=eps)
    assert prof.kind == "bound" and prof.tail_tol == 1e-30
    for i, e in enumerate(eps):
        ref = single_bit_tail(population=n, m=m, q=q, epsilon=e)
        for d in ("add", "remove"):
            want = ref.details["per_direction"][d]
            got_d = prof.details["per_direction"][d]["delta"][i]
            got_e = prof.details["per_direction"][d]["eta"][i]
            # truncation adds at most tail_tol = 1e-30 (upper bound); otherwise agreement to rounding
            assert got_d == pytest.approx(want["delta"], rel=1e-8, abs=1e-28)
            assert got_e == pytest.approx(want["eta"], rel=1e-8, abs=1e-28)
        assert float(prof.delta[i]) == pytest.approx(ref.delta, rel=1e-8, abs=1e-28)
        assert float(prof.eta[i]) == pytest.approx(ref.eta, rel=1e-8, abs=1e-28)


@pytest.mark.slow
@pytest.mark.parametrize("n,m", [(3_000, 700), (2_000, 1_000)])
def test_fast_linear_convolution_matches_exact_log_domain_pmf(n: int, m: int) -> None:
    # min(m, n-1-m) > 50 with tail_tol > 0 selects the linear-domain convolution; check its losses and masses
    # against single_bit.log_pmf (exact log-domain) on the same support
    q = 0.3
    pld = shuffled_rr_pld(population=n, m=m, q=q, direction="remove")
    s = np.arange(n + 1)
    exact_losses = np.sort(log_pmf(s, population=n, m=m, q=q) - log_pmf(s, population=n, m=m + 1, q=q))  # exact, log domain
    idx = np.clip(np.searchsorted(exact_losses, pld.losses), 1, n)
    nearest = np.minimum(np.abs(exact_losses[idx] - pld.losses), np.abs(exact_losses[idx - 1] - pld.losses))
    assert np.max(nearest) < 1e-10  # every kept atom sits at an exact loss
    full = shuffled_rr_pld(population=n, m=m, q=q, direction="remove", tail_tol=0.0)  # log-domain path, whole support
    for e in (0.0, 0.01, 0.03, 0.1):
        assert float(pld.delta(e)) == pytest.approx(float(full.delta(e)), rel=1e-10, abs=1e-29)
        assert float(pld.delta(e)) >= float(full.delta(e)) * (1 - 1e-10)  # upper bound up to rounding
        assert float(pld.eta(e)) == pytest.approx(float(full.eta(e)), rel=1e-10, abs=1e-29)


def test_truncation_is_an_upper_bound_within_tail_tol() -> None:
    n, m, q = 3_000, 2, 0.2
    exact = shuffled_rr_pld(population=n, m=m, q=q, tail_tol=0.0)
    cut = shuffled_rr_pld(population=n, m=m, q=q, tail_tol=1e-10)
    assert 0 < cut.infinity_mass <= 1e-10 and cut.losses.size < exact.losses.size
    for e in np.linspace(0.0, 0.3, 13):
        d_exact, d_cut = float(exact.delta(e)), float(cut.delta(e))
        assert d_exact * (1 - 1e-12) <= d_cut <= d_exact + 1e-10 + 1e-15
        assert float(exact.eta(e)) * (1 - 1e-12) <= float(cut.eta(e)) <= float(exact.eta(e)) + 1e-10 + 1e-15
    rev_exact, rev_cut = exact.reverse(), cut.reverse()
    for e in (0.0, 0.05, 0.1):
        assert float(rev_exact.delta(e)) * (1 - 1e-12) <= float(rev_cut.delta(e)) <= float(rev_exact.delta(e)) + 1e-10


def test_mirror_symmetry_add_at_m_is_remove_at_n_minus_1_minus_m() -> None:
    n, q = 40, 0.15
    for m in (0, 3, 17):
        add = shuffled_rr_pld(population=n, m=m, q=q, direction="add", tail_tol=0.0)
        rem = shuffled_rr_pld(population=n, m=n - 1 - m, q=q, direction="remove", tail_tol=0.0)
        np.testing.assert_allclose(add.losses, rem.losses, atol=1e-11)
        np.testing.assert_allclose(add.probabilities, rem.probabilities, rtol=1e-10, atol=1e-300)


# --- worst case over m -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,q", [(20, 0.2), (35, 0.1), (40, 0.3)])
def test_worst_profile_matches_single_bit_worst_tail(n: int, q: float) -> None:
    eps = [0.1, 0.5, 1.0]  # at q = 0.3, eps = 1 > log(p/q): delta = eta = 0 exactly
    worst = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps)
    for i, e in enumerate(eps):
        ref = single_bit_worst_tail(population=n, q=q, epsilon=e)
        assert float(worst.delta[i]) == pytest.approx(ref.delta, rel=1e-9, abs=1e-300)
        assert float(worst.eta[i]) == pytest.approx(ref.eta, rel=1e-9, abs=1e-300)
        if ref.delta == 0.0:
            assert worst.delta[i] == 0.0 and worst.worst_m_delta[i] == -1 and worst.worst_direction_delta[i] == ""
            continue
        # the reported (m, direction) attains the worst value
        m, d = int(worst.worst_m_delta[i]), worst.worst_direction_delta[i]
        pld = shuffled_rr_pld(population=n, m=m, q=q, direction=d)
        assert float(pld.delta(e)) == pytest.approx(float(worst.delta[i]), rel=1e-12)


def test_worst_m_is_not_an_end_point() -> None:
    # n = 20, q = 0.2, eps = 0.5: the worst delta is at m = 1, not m = 0 (single_bit docstring / docs/single_bit.md)
    worst = shuffled_rr_worst_profile(population=20, q=0.2, epsilon=0.5)
    assert int(worst.worst_m_delta[0]) == 1
    ends = max(float(shuffled_rr_profile(population=20, m=m, q=0.2, epsilon=0.5).delta[0]) for m in (0, 19))
    assert float(worst.delta[0]) > ends * (1 + 1e-6)
    assert worst.to_dict()["scanned"].startswith("all m")


def test_worst_profile_subset_is_labelled() -> None:
    r = shuffled_rr_worst_profile(population=10**6, q=0.25, epsilon=[0.002], ms=[0, 1, 2])
    assert "not a worst case" in r.scanned and r.worst_m_delta[0] in (0, 1, 2)
    assert r.kind == "lower bound" and r.to_dict()["kind"] == "lower bound"
    with pytest.raises(ParameterError, match="max_scan"):
        shuffled_rr_worst_profile(population=2 * 10**6, q=0.25, epsilon=0.1)  # full scans go up to max_scan = 10**6


@pytest.mark.parametrize("tail_tol", [0.0, 1e-30])
def test_worst_profile_subset_is_a_lower_bound_on_the_worst_case(tail_tol: float) -> None:
    n, q, eps = 40, 0.2, [0.1, 0.5]
    full = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps, tail_tol=tail_tol)
    assert full.kind == ("exact" if tail_tol == 0.0 else "bound")
    sub = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps, ms=[0, 5, 39], tail_tol=tail_tol)
    assert sub.kind == "lower bound"
    assert np.all(sub.delta <= full.delta) and np.all(sub.eta <= full.eta)
    # each value is the pair's exact value lowered only by the 1e-7 relative rounding margin
    for i, e in enumerate(eps):
        exact_pair = float(shuffled_rr_profile(population=n, m=int(sub.worst_m_delta[i]), q=q, epsilon=e, tail_tol=0.0).delta[0])
        assert float(sub.delta[i]) == pytest.approx(exact_pair, rel=2e-7) and float(sub.delta[i]) <= exact_pair
    # a subset that covers every m is the full worst case again
    every = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps, ms=list(range(n)), tail_tol=tail_tol)
    assert every.kind == full.kind and every.scanned.startswith("all m")
    np.testing.assert_allclose(every.delta, full.delta, rtol=1e-12)



# --- worst case at any n: exact scan or rigorous bracket ---------------------------------------------------------------
@pytest.mark.parametrize("n,q,eps", [(20, 0.2, 0.5), (35, 0.1, 0.1), (40, 0.3, 0.3), (101, 0.15, 0.2)])
def test_worst_bracket_exact_path_matches_single_bit_worst_tail(n: int, q: float, eps: float) -> None:
    r = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps)
    ref = single_bit_worst_tail(population=n, q=q, epsilon=eps)  # exact log-domain scan, every m, both directions
    prof = shuffled_rr_worst_profile(population=n, q=q, epsilon=eps)
    assert r.kind == "exact" and r.upper_source.startswith("exact scan of every m")
    assert r.delta_lower == r.delta_upper and r.eta_lower == r.eta_upper
    assert r.delta_upper == pytest.approx(ref.delta, rel=1e-9) == pytest.approx(float(prof.delta[0]), rel=1e-9)
    assert r.eta_upper == pytest.approx(ref.eta, rel=1e-9) == pytest.approx(float(prof.eta[0]), rel=1e-9)
    # the representative (m, direction) attains it
    pld = shuffled_rr_pld(population=n, m=r.worst_m, q=q, direction=r.worst_direction, tail_tol=0.0)
    assert float(pld.delta(eps)) == pytest.approx(r.delta_upper, rel=1e-9)
    d = r.to_dict()
    assert {"delta_lower", "delta_upper", "eta_lower", "eta_upper", "kind", "worst_m", "scanned",
            "upper_source"} <= set(d)


def test_worst_bracket_exact_path_keeps_the_interior_worst_m() -> None:
    # n = 20, q = 0.2, eps = 0.5: worst m = 1, not an end point (same as single_bit_worst_tail)
    r = shuffled_rr_worst_bracket(population=20, q=0.2, epsilon=0.5)
    assert r.worst_m == 1 == single_bit_worst_tail(population=20, q=0.2, epsilon=0.5).details["argmax_m_delta"]


@pytest.mark.slow
@pytest.mark.parametrize("n,q,eps", [(300, 0.2, 0.3), (300, 0.05, 0.5), (300, 0.2, 1.0), (300, 0.35, 0.05),
                                     (1000, 0.2, 0.1), (1000, 0.3, 0.2), (300, 0.3, 0.8)])
def test_worst_bracket_contains_the_exact_worst_case(n: int, q: float, eps: float) -> None:
    exact = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps)  # full scan, every m (checked above)
    assert exact.kind == "exact"
    br = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps, full_scan_max=n - 1)  # forces the bracket path
    assert br.kind == "bracket" and "not every m" in br.scanned
    assert br.delta_lower <= exact.delta_upper <= br.delta_upper
    assert br.eta_lower <= exact.eta_upper <= br.eta_upper
    assert 0.0 <= br.delta_lower <= br.delta_upper <= 1.0 and 0.0 <= br.eta_lower <= br.eta_upper <= 1.0
    # the ends are scanned, so the lower end reaches the exact worst when it sits there
    if exact.worst_m < 16:
        assert br.delta_lower == pytest.approx(exact.delta_upper, rel=1e-6)
    # the rigorous upper end uses verified bounds only (today local-rr); unverified ones are reported separately
    status = br.bound_status
    rigorous = min(b["delta"] for b in status.values() if b["verified"] and b["delta"] is not None)
    assert br.delta_upper == pytest.approx(max(br.delta_lower, rigorous))
    assert status["local-rr"]["verified"] and "local-rr" in br.upper_source
    unverified = [b["delta"] for b in status.values() if not b["verified"] and b["delta"] is not None]
    if unverified and min(unverified) < br.delta_upper:
        assert br.delta_upper_unverified == pytest.approx(max(br.delta_lower, min(unverified)))
        assert br.unverified_source is not None and "not verified" in br.unverified_source
    else:
        assert br.delta_upper_unverified is None


def test_full_scan_resolves_negligible_values_exactly() -> None:
    # n = 1000, q = 0.3, eps = 0.5: every pair's delta is ~1e-59 or less (the old truncated scan could only bracket
    # it); the worst-over-crowds engine has no truncation, so the result is exact and matches an untruncated PLD
    r = shuffled_rr_worst_bracket(population=1000, q=0.3, epsilon=0.5)
    assert r.kind == "exact" and r.upper_source.startswith("exact scan of every m")
    exact_m0 = shuffled_rr_profile(population=1000, m=0, q=0.3, epsilon=0.5, tail_tol=0.0)  # untruncated, exact
    assert r.delta_upper >= float(exact_m0.delta[0]) * (1 - 1e-9) and r.delta_upper < 1e-30
    pld = shuffled_rr_pld(population=1000, m=r.worst_m, q=0.3, direction=r.worst_direction, tail_tol=0.0)
    assert float(pld.delta(0.5)) == pytest.approx(r.delta_upper, rel=1e-9)
    lo, hi = r.details["delta_bracket"]
    assert lo <= r.delta_upper <= hi and hi - lo <= 1e-8 * r.delta_upper


@pytest.mark.slow
def test_worst_bracket_each_upper_bound_dominates_the_exact_worst_case() -> None:
    # every rigorous bound, not only the smallest, must hold for the exact worst case (independent of which wins)
    for n, q, eps in [(300, 0.2, 1.0), (1000, 0.2, 0.1), (1000, 0.3, 0.5), (1000, 0.1, 1.5)]:
        exact = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps)
        br = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps, full_scan_max=1, ends=1, samples=0)
        for name, v in br.details["delta_upper_bounds"].items():
            if v is not None:
                assert exact.delta_upper <= v, name


def test_worst_bracket_rigorous_upper_uses_verified_bounds_only() -> None:
    # n = 1000, q = 0.2, eps = 0.1: bbgn19 (verified=False) is far below local-rr; it must not become delta_upper
    n, q, eps = 1000, 0.2, 0.1
    exact = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps)
    br = shuffled_rr_worst_bracket(population=n, q=q, epsilon=eps, full_scan_max=n - 1)
    status = br.bound_status
    assert set(status) == {"local-rr", "bbgn19", "fmt21", "efmrtt19"}
    assert status["local-rr"]["verified"] is True
    assert all(status[k]["verified"] is False and status[k]["provenance"] for k in ("bbgn19", "fmt21", "efmrtt19"))
    assert br.delta_upper == pytest.approx(status["local-rr"]["delta"]) and br.upper_source.startswith("delta: local-rr")
    assert exact.delta_upper <= br.delta_upper and exact.eta_upper <= br.eta_upper  # rigorous upper >= exact worst
    # the tighter amplification value is reported separately, labelled unverified
    assert br.delta_upper_unverified is not None and br.delta_upper_unverified < br.delta_upper
    assert br.delta_upper_unverified == pytest.approx(status["bbgn19"]["delta"])
    assert br.unverified_source is not None and br.unverified_source.startswith("delta: bbgn19")
    assert "not verified" in br.unverified_source
    d = br.to_dict()
    assert {"delta_upper_unverified", "eta_upper_unverified", "unverified_source", "bound_status"} <= set(d)
    assert d["bound_status"]["bbgn19"]["verified"] is False
    # exact path: no bound used, nothing unverified
    assert exact.bound_status == {} and exact.delta_upper_unverified is None and exact.unverified_source is None


def test_worst_bracket_reads_the_verified_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    # once an amplification bound is marked verified it counts as rigorous automatically (no hard-coded names)
    from sufficientdp.accounting import amplification

    monkeypatch.setitem(amplification._VERIFIED, "bbgn19", True)
    br = shuffled_rr_worst_bracket(population=1000, q=0.2, epsilon=0.1, full_scan_max=999)
    assert br.bound_status["bbgn19"]["verified"] is True
    assert br.upper_source.startswith("delta: bbgn19")
    assert br.delta_upper == pytest.approx(max(br.delta_lower, br.bound_status["bbgn19"]["delta"]))
    assert br.delta_upper_unverified is None or br.delta_upper_unverified < br.delta_upper


def test_eta_from_delta_inequality_on_exact_plds() -> None:
    # eta(eps) <= delta(eps') / (1 - e^(eps' - eps)) for eps' < eps, on exact (untruncated) PLDs, both directions
    for n, m, q in [(10, 0, 0.2), (10, 4, 0.1), (60, 1, 0.25), (60, 30, 0.05), (200, 0, 0.3)]:
        for direction in ("add", "remove"):
            pld = shuffled_rr_pld(population=n, m=m, q=q, direction=direction, tail_tol=0.0)
            for eps in (0.05, 0.2, 0.5, 1.0, 2.0):
                eta = float(pld.eta(eps))
                for f in (0.1, 0.5, 0.9, 0.99):
                    e1 = f * eps
                    assert eta <= float(pld.delta(e1)) / -math.expm1(e1 - eps) * (1 + 1e-12) + 1e-300


def test_amplification_inversions_are_monotone_in_delta() -> None:
    # feasibility "theorem valid and eps(delta) <= eps" is an up-set in delta on a fine grid (so the smallest
    # feasible probe found by the bracket is close to optimal; its validity does not depend on this)
    grid = np.exp(-np.linspace(700, 1e-6, 3000))
    for fn in (fmt21_epsilon, efmrtt19_epsilon):
        for eps0, n, eps in [(1.0, 10_000, 0.2), (0.4, 5_000, 0.3), (3.0, 10**6, 0.05), (0.3, 2000, 0.1)]:
            ok = [bool(r.valid and r.epsilon is not None and r.epsilon <= eps)
                  for r in (fn(eps0, n, float(d)) for d in grid)]
            if fn is efmrtt19_epsilon:  # valid only for delta < 1/100: an interval, monotone below 1/100
                ok = [o for o, d in zip(ok, grid, strict=True) if d < 0.01]
            first = ok.index(True) if True in ok else len(ok)
            assert all(ok[first:])


@pytest.mark.slow
def test_worst_bracket_pure_dp_region_and_large_n() -> None:
    q = 0.2  # eps0 = log 4
    r = shuffled_rr_worst_bracket(population=5000, q=q, epsilon=1.5, full_scan_max=10, ends=2, samples=2)
    assert r.eta_upper == 0.0 and r.delta_upper == 0.0 and r.delta_lower == 0.0
    assert "pure DP" in r.upper_source
    big = shuffled_rr_worst_bracket(population=10**5, q=0.25, epsilon=0.01, ends=2, samples=2, full_scan_max=1000)
    assert big.kind == "bracket" and 0 < big.delta_lower <= big.delta_upper < 1
    assert big.eta_lower <= big.eta_upper and big.worst_m in (0, 1, 99_997, 99_998)
    exact = shuffled_rr_worst_bracket(population=10**5, q=0.25, epsilon=0.01)  # default: every m (about 0.3 s)
    assert exact.kind == "exact" and big.delta_lower <= exact.delta_upper * (1 + 1e-9) <= big.delta_upper * (1 + 1e-9)
    assert big.eta_lower <= exact.eta_upper * (1 + 1e-9) and exact.eta_upper <= big.eta_upper


def test_worst_bracket_progress_callback() -> None:
    calls: list[tuple[int, int]] = []
    shuffled_rr_worst_bracket(population=10, q=0.2, epsilon=0.5, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1] == (10, 10)  # every m = 0..9 evaluated


@pytest.mark.parametrize(
    "kwargs,match",
    [({"population": 0}, "population must"), ({"q": 0.5}, "q must"), ({"q": float("nan")}, "q must"), ({"epsilon": 0.0}, "epsilon"),
     ({"epsilon": -1.0}, "epsilon"), ({"epsilon": float("inf")}, "epsilon"), ({"epsilon": True}, "epsilon"),
     ({"full_scan_max": 0}, "full_scan_max"), ({"ends": 0}, "ends"), ({"samples": -1}, "samples"),
     ({"population": 2.5}, "population must")],
)
def test_invalid_worst_bracket(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"population": 10, "q": 0.2, "epsilon": 0.5}
    args.update(kwargs)
    with pytest.raises(ParameterError, match=match):
        shuffled_rr_worst_bracket(**args)  # type: ignore[arg-type]

# --- homogeneous L-bit histogram ---------------------------------------------------------------------------------------
def _eta_delta_from_ratio_dist(dist, eps: float) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    return float(dist.eta(eps)), float(dist.delta(eps))


@pytest.mark.parametrize("bits,population,j,q", [(2, 4, 2, 0.2), (3, 3, 2, 0.25), (3, 4, 3, 0.15), (2, 6, 1, 0.3)])
def test_homogeneous_pld_matches_full_histogram_enumeration(bits: int, population: int, j: int, q: float) -> None:
    # ratio_distribution enumerates every histogram of N L-bit reports (independent of the weight profile)
    d = np.zeros((population, bits), dtype=int)
    dm = d.copy()
    dm[-1, :j] = 1
    dist = ratio_distribution(d, dm, q)  # R = P(S|D_m)/P(S|D) under S ~ A(D_m)
    pld = homogeneous_histogram_pld(q=q, population=population, outlier_bits=j)
    assert pld.max_loss == pytest.approx(float(dist.log_ratios[-1]), abs=1e-11)
    for e in (0.0, 0.2, 0.7, 1.5, 3.0):
        eta, delta = _eta_delta_from_ratio_dist(dist, e)
        if np.min(np.abs(pld.losses - e)) > 1e-9:
            assert float(pld.eta(e)) == pytest.approx(eta, abs=1e-13)
        assert float(pld.delta(e)) == pytest.approx(delta, abs=1e-13)


def _mixture_pld(q: float, n: int, j: int, outlier_in: str) -> PrivacyLossDistribution:
    """Independent oracle: the weight profile T straight from the definition (no closed form for R).

    With ``a_l = Bin(l; j, q)``, ``b_l = Bin(l; j, p)``: ``T ~ MN(N, a)`` under D and
    ``P(T) = sum_l b_l MN(N - 1, a)(T - e_l)`` under D_m, over every profile (itertools; log domain).
    """
    a = np.array([math.comb(j, k) * q**k * (1 - q) ** (j - k) for k in range(j + 1)])
    b = a[::-1]

    def log_mn(t: tuple[int, ...]) -> float:
        if min(t) < 0:
            return -math.inf
        out = math.lgamma(sum(t) + 1)
        for c, pr in zip(t, a):
            out += c * math.log(pr) - math.lgamma(c + 1)
        return out

    profiles = [t for t in itertools.product(range(n + 1), repeat=j + 1) if sum(t) == n]
    log_d = np.array([log_mn(t) for t in profiles])
    log_dm = np.array([
        np.logaddexp.reduce([math.log(b[k]) + log_mn(tuple(c - (i == k) for i, c in enumerate(t)))
                             for k in range(j + 1)])
        for t in profiles
    ])
    lp, lq = (log_dm, log_d) if outlier_in == "modified" else (log_d, log_dm)
    return PrivacyLossDistribution(losses=lp - lq, probabilities=np.exp(lp))


@pytest.mark.slow
@pytest.mark.parametrize("outlier_in", ["modified", "original"])
def test_homogeneous_pld_matches_the_mixture_definition(outlier_in: str) -> None:
    q, n, j = 0.22, 40, 3
    oracle = _mixture_pld(q, n, j, outlier_in)
    pld = homogeneous_histogram_pld(q=q, population=n, outlier_bits=j, outlier_in=outlier_in)
    for e in np.linspace(0.0, 2.5, 11):
        assert float(pld.delta(e)) == pytest.approx(float(oracle.delta(e)), rel=1e-9, abs=1e-15)
    np.testing.assert_allclose(pld.losses[-3:], oracle.losses[-3:], atol=1e-10)


def test_homogeneous_directions_are_reverses() -> None:
    a = homogeneous_histogram_pld(q=0.3, population=5, outlier_bits=2)
    b = homogeneous_histogram_pld(q=0.3, population=5, outlier_bits=2, outlier_in="original")
    r = a.reverse()
    for e in (0.0, 0.5, 1.0):
        assert float(r.delta(e)) == pytest.approx(float(b.delta(e)), abs=1e-13)


def test_homogeneous_size_limit_points_to_certified_bounds() -> None:
    with pytest.raises(ParameterError, match="ratio.tail") as info:
        homogeneous_histogram_pld(q=0.2, population=10**6, outlier_bits=5)
    assert str(MAX_PROFILE_ATOMS) in str(info.value)


# --- invalid inputs ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,match",
    [({"population": 0, "m": 0, "q": 0.2}, "population must"), ({"population": 5, "m": 5, "q": 0.2}, "m must"),
     ({"population": 5, "m": -1, "q": 0.2}, "m must"), ({"population": 5, "m": 1, "q": 0.5}, "q must"),
     ({"population": 5, "m": 1, "q": float("nan")}, "q must"), ({"population": 5.5, "m": 1, "q": 0.2}, "population must"),
     ({"population": 5, "m": 1, "q": 0.2, "direction": "both"}, "direction"),
     ({"population": 5, "m": 1, "q": 0.2, "tail_tol": 0.1}, "tail_tol"),
     ({"population": 5, "m": 1, "q": 0.2, "tail_tol": -1.0}, "tail_tol")],
)
def test_invalid_shuffled_rr_pld(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        shuffled_rr_pld(**kwargs)  # type: ignore[arg-type]


def test_invalid_profiles_and_homogeneous() -> None:
    with pytest.raises(ParameterError, match="epsilon"):
        shuffled_rr_profile(population=5, m=1, q=0.2, epsilon=-0.1)
    with pytest.raises(ParameterError, match="epsilon"):
        shuffled_rr_profile(population=5, m=1, q=0.2, epsilon=[])
    with pytest.raises(ParameterError, match="ms"):
        shuffled_rr_worst_profile(population=5, q=0.2, epsilon=0.1, ms=[7])
    with pytest.raises(ParameterError, match="ms"):
        shuffled_rr_worst_profile(population=5, q=0.2, epsilon=0.1, ms=[])
    with pytest.raises(ParameterError, match="max_scan"):
        shuffled_rr_worst_profile(population=5, q=0.2, epsilon=0.1, max_scan=0)
    with pytest.raises(ParameterError, match="q must"):
        homogeneous_histogram_pld(q=0.0, population=3, outlier_bits=1)
    with pytest.raises(ParameterError, match="population"):
        homogeneous_histogram_pld(q=0.2, population=0, outlier_bits=1)
    with pytest.raises(ParameterError, match="outlier_bits"):
        homogeneous_histogram_pld(q=0.2, population=3, outlier_bits=0)
    with pytest.raises(ParameterError, match="outlier_in"):
        homogeneous_histogram_pld(q=0.2, population=3, outlier_bits=1, outlier_in="both")
