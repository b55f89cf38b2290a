"""worst_over_crowds (every neighbouring pair of shuffled binary RR at once) against independent oracles.

Oracles: exact rational pmfs (Fractions) with a 60-digit threshold for small n; the exact per-pair log-domain routine
of the old full scan (``_tail_direction``, both directions at every m) for n up to a few hundred; the PLD scan at
n = 2000; 40-digit sums at n = 2e4. The brackets must contain the truth, not only approximate it.
"""

from __future__ import annotations

import json
import math
import time
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.shuffled import shuffled_rr_pld
from sufficientdp.ratio.single_bit import (
    _remove_pairs,
    _tail_direction,
    single_bit_tail,
    single_bit_worst_tail,
    worst_over_crowds,
)


# --- oracle 1: exact rational pmfs -----------------------------------------------------------------------------------
def _pmf(n1: int, m: int, q: Fraction) -> list[Fraction]:
    """P[Bin(m, p) + Bin(n1 - m, q) = s], s = 0..n1, exactly."""
    p = 1 - q
    a = [math.comb(m, j) * p**j * q ** (m - j) for j in range(m + 1)]
    b = [math.comb(n1 - m, j) * q**j * p ** (n1 - m - j) for j in range(n1 - m + 1)]
    out = [Fraction(0)] * (n1 + 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _brute_worst(n: int, q: Fraction, eps: float) -> dict[str, object]:
    """Every pair (A_n(m), A_n(m+1)), both directions: exact pmfs, threshold e**eps to 60 digits."""
    mp.mp.dps = 60
    lam = mp.e ** mp.mpf(eps)
    pm = [_pmf(n, m, q) for m in range(n + 1)]  # A_n(m) on 0..n
    out: dict[str, object] = {"pairs": {}}
    best = {"eta": (mp.mpf(-1), None), "delta": (mp.mpf(-1), None)}
    ties = False
    for m in range(n):
        for direction, (pp, qq) in (("remove", (pm[m], pm[m + 1])), ("add", (pm[m + 1], pm[m]))):
            eta = delta = mp.mpf(0)
            for a, b in zip(pp, qq, strict=True):
                fa, fb = mp.mpf(a.numerator) / a.denominator, mp.mpf(b.numerator) / b.denominator
                if eps == 0.0 and a == b:
                    ties = True  # loss exactly 0 = eps: not risky, but floats cannot tell
                if fa > lam * fb and not (eps == 0.0 and a == b):
                    eta += fa
                    delta += fa - lam * fb
            out["pairs"][(m, direction)] = (eta, delta)  # type: ignore[index]
            for name, v in (("eta", eta), ("delta", delta)):
                if v > best[name][0] * (1 + mp.mpf(10) ** -30):
                    best[name] = (v, (m, direction))
    out.update(eta=best["eta"][0], delta=best["delta"][0], ties=ties)
    return out


def _inside(lo: float, x: mp.mpf, hi: float) -> bool:
    return mp.mpf(lo) <= x <= mp.mpf(hi)


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12])
@pytest.mark.parametrize("q", [Fraction(1, 50), Fraction(1, 10), Fraction(1, 4), Fraction(2, 5)])
def test_matches_rational_brute_force(n: int, q: Fraction) -> None:
    eps0 = math.log((1 - q) / q)
    for eps in (0.0, 0.05, 0.3, 1.0, 2.5, eps0 * (1 - 1e-3), eps0 * (1 - 1e-9), math.nextafter(eps0, 0.0)):
        truth = _brute_worst(n, q, eps)
        r = worst_over_crowds(n, float(q), eps)
        assert r.kind == "exact" and r.details["slow_pairs"] == 0
        # the bracket contains the exact worst value (rigour), the value is accurate
        assert _inside(r.delta_lower, truth["delta"], r.delta_upper)  # type: ignore[arg-type]
        # (near log(p/q) delta is sensitive to the last ulp of e**eps: the bracket says how much)
        tol = max(1e-10 * float(truth["delta"]), r.delta_upper - r.delta_lower)  # type: ignore[arg-type]
        assert abs(r.delta - float(truth["delta"])) <= tol  # type: ignore[arg-type]
        assert _inside(r.eta_lower, truth["eta"], r.eta_upper)  # type: ignore[arg-type]
        if not truth["ties"]:
            tol = max(1e-10 * float(truth["eta"]), r.eta_upper - r.eta_lower)  # type: ignore[arg-type]
            assert abs(r.eta - float(truth["eta"])) <= tol  # type: ignore[arg-type]
        # the reported pair attains the worst value
        for name in ("eta", "delta"):
            m, d = getattr(r, f"worst_m_{name}"), getattr(r, f"worst_direction_{name}")
            if getattr(r, name) == 0.0:  # no risky output (a positive upper end only within 2 ulps of log(p/q))
                assert (m, d) == (-1, "")
                assert float(truth[name]) == 0.0 or getattr(r, f"{name}_upper") > 0.0  # type: ignore[arg-type]
                continue
            if name == "eta" and truth["ties"]:
                continue
            val = truth["pairs"][(m, d)][0 if name == "eta" else 1]  # type: ignore[index]
            assert float(val) == pytest.approx(float(truth[name]), rel=1e-9)  # type: ignore[arg-type]


def test_local_rr_and_pure_dp_region() -> None:
    r = worst_over_crowds(1, 0.25, 0.5)  # one person: local RR, eta = p, delta = p - e^eps q
    assert r.eta == pytest.approx(0.75, rel=1e-14) and r.delta == pytest.approx(0.75 - math.exp(0.5) / 4, rel=1e-14)
    assert (r.worst_m_eta, r.worst_direction_eta) == (0, "remove")
    for n in (1, 7, 5000):
        z = worst_over_crowds(n, 0.2, math.log(4.0) + 1e-9)  # epsilon > log(p/q): every loss <= epsilon
        assert z.eta == z.delta == z.eta_upper == z.delta_upper == 0.0
        assert z.log_eta is None and z.worst_m_delta == -1 and z.worst_direction_eta == ""
        # within 2 ulps of e**eps of log(p/q) the sign of p - e**eps q is not certain: honest upper ends
        u = worst_over_crowds(n, 0.2, math.log(4.0))
        assert u.eta == u.delta == 0.0 and u.eta_upper == 1.0 and 0.0 < u.delta_upper < 1e-14


# --- oracle 2: the old exact scan (per-pair log-domain routine, both directions at every m) ---------------------------
def _old_scan(n: int, q: float, eps: float) -> dict[tuple[int, str], tuple[float, float]]:
    return {(m, d): (t.log_eta, t.log_delta) for m in range(n) for d in ("add", "remove")
            for t in (_tail_direction(n, m, q, eps, d),)}


@pytest.mark.slow
@pytest.mark.parametrize("n,q,eps", [(20, 0.2, 0.5), (60, 0.02, 0.05), (60, 0.05, 1.0), (120, 0.02, 1.0),
                                     (120, 0.2, 0.05), (97, 0.45, 0.1), (150, 0.0163608, 1.0), (40, 0.3, 1.0)])
def test_matches_old_exact_scan(n: int, q: float, eps: float) -> None:
    old = _old_scan(n, q, eps)
    r = worst_over_crowds(n, q, eps)
    for name, k in (("eta", 0), ("delta", 1)):
        best = max(v[k] for v in old.values())
        if best == -math.inf:
            assert getattr(r, name) == 0.0
            continue
        assert getattr(r, f"log_{name}") == pytest.approx(best, abs=1e-9)
        # the reported (m, direction) is a pair the old scan puts at the maximum
        got = old[(getattr(r, f"worst_m_{name}"), getattr(r, f"worst_direction_{name}"))][k]
        assert got == pytest.approx(best, abs=1e-9)
    # every pair, not only the maximum: the mirror of each remove pair is the add pair at n - 1 - m
    pairs = _remove_pairs(n, q, eps, np.arange(n))
    for m in range(n):
        for k, name in ((0, "eta"), (1, "delta")):
            o = old[(m, "remove")][k]
            if o == -math.inf:
                continue
            lo, hi = getattr(pairs, f"log_{name}_lo")[m], getattr(pairs, f"log_{name}_hi")[m]
            assert lo - 1e-10 <= o <= hi + 1e-10
            assert old[(n - 1 - m, "add")][k] == pytest.approx(o, abs=1e-9)


def test_worst_m_not_at_an_end_known_case() -> None:
    # n = 1000, q = 0.0163608, eps = 1: the worst eta is about 0.00208 at m = 18 (remove: the output comes from the
    # crowd where the changed person holds 0; risky outputs s <= 23), far above the end pairs
    r = worst_over_crowds(1000, 0.0163608, 1.0)
    assert (r.worst_m_eta, r.worst_direction_eta) == (18, "remove")
    assert r.eta == pytest.approx(0.00208, rel=2e-3) and r.details["risky_outputs_eta"] == "s <= 23"
    pair = single_bit_tail(population=1000, m=18, q=0.0163608, epsilon=1.0, direction="remove")
    assert r.eta == pytest.approx(pair.eta, rel=1e-9) and r.eta_lower <= pair.eta <= r.eta_upper
    ends = max(single_bit_tail(population=1000, m=m, q=0.0163608, epsilon=1.0).eta for m in (0, 999))
    assert r.eta > 2 * ends


# --- oracle 3: the PLD scan at n = 2000 --------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("q", [0.0163608, 0.1, 0.3, 0.45])
def test_matches_pld_scan_n2000(q: float) -> None:
    n, grid = 2000, (0.01, 0.1, 0.5, 1.0)
    vals = np.array([[(float(pld.eta(e)), float(pld.delta(e))) for e in grid]
                     for m in range(n) for pld in (shuffled_rr_pld(population=n, m=m, q=q, direction="remove"),)])
    for i, eps in enumerate(grid):
        r = worst_over_crowds(n, q, eps)
        eta, delta = vals[:, i, 0], vals[:, i, 1]  # PLD values: upper bounds within tail_tol = 1e-30 of exact
        for name, v in (("eta", eta), ("delta", delta)):
            best = float(v.max())
            if best < 1e-25:
                assert getattr(r, f"{name}_upper") <= best + 1e-30
                continue
            assert getattr(r, name) == pytest.approx(best, rel=1e-8)
            m, d = getattr(r, f"worst_m_{name}"), getattr(r, f"worst_direction_{name}")
            assert v[m if d == "remove" else n - 1 - m] == pytest.approx(best, rel=1e-8)


# --- oracle 4: 40-digit sums at n = 2e4 ---------------------------------------------------------------------------------
def _hp_truth(n: int, m: int, q: float, eps: float, b: int) -> tuple[mp.mpf, mp.mpf]:
    """eta, delta of the remove pair at m with cutoff b, the pmf of A' summed term by term at 40 digits."""
    mp.mp.dps = 40
    qq = mp.mpf(q)
    pp, n1, lam = 1 - qq, n - 1, mp.e ** mp.mpf(eps)
    m1, p1, m2, p2 = (m, pp, n1 - m, qq) if m <= n1 - m else (n1 - m, qq, m, pp)

    def lb(k: int, size: int, pr: mp.mpf) -> mp.mpf:
        return mp.loggamma(size + 1) - mp.loggamma(k + 1) - mp.loggamma(size - k + 1) + k * mp.log(pr) + (
            size - k) * mp.log(1 - pr)

    b1 = [lb(j, m1, p1) for j in range(m1 + 1)]

    def pmf(x: int) -> mp.mpf:
        return mp.fsum(mp.e ** (b1[j] + lb(x - j, m2, p2)) for j in range(m1 + 1) if 0 <= x - j <= m2)

    lo = max(0, b - 60 * int(math.sqrt(n1) + 5))
    vals = [pmf(s) for s in range(lo, b + 2)]
    assert lo == 0 or vals[0] < mp.mpf(10) ** -40 * vals[-2]
    c1, c2 = pp - lam * qq, lam * pp - qq
    assert c1 * vals[-2] - c2 * vals[-3] > 0 >= c1 * vals[-1] - c2 * vals[-2]  # b is the cutoff
    fb = mp.fsum(vals[:-1])
    fb1 = fb - vals[-2]
    return pp * fb + qq * fb1, c1 * fb - c2 * fb1


@pytest.mark.slow
@pytest.mark.parametrize("n,q,eps,ms", [(20_000, 0.25, 0.05, [0, 7, 19_999]), (20_000, 0.02, 0.5, [0, 3, 19_990])])
def test_brackets_contain_high_precision_truth(n: int, q: float, eps: float, ms: list[int]) -> None:
    pairs = _remove_pairs(n, q, eps, np.array(ms))
    for i, m in enumerate(ms):
        te, td = _hp_truth(n, m, q, eps, int(pairs.cutoff[i]))
        assert pairs.log_eta_lo[i] <= float(mp.log(te)) <= pairs.log_eta_hi[i]
        assert pairs.log_delta_lo[i] <= float(mp.log(td)) <= pairs.log_delta_hi[i]
        assert pairs.log_eta_hi[i] - pairs.log_eta_lo[i] < 1e-9


@pytest.mark.slow
def test_large_n_is_fast_and_consistent() -> None:
    t0 = time.perf_counter()
    r = worst_over_crowds(100_000, 0.25, 0.01)
    assert time.perf_counter() - t0 < 10.0  # about 0.3 s on 2 cores
    # every pair covered: evaluated, or its block proved below the worst (the outputs are the full scan's, pinned
    # bit for bit in test_worst_crowds_golden.py)
    assert r.details["pairs_evaluated"] + r.details["pairs_bounded"] == 100_000 and r.details["slow_pairs"] == 0
    assert r.details["max_pair_relative_halfwidth"] < 1e-8
    assert r.delta_lower <= r.delta <= r.delta_upper <= r.delta * (1 + 1e-8)
    for name in ("eta", "delta"):  # the reported pair, recomputed by the per-pair routine
        m, d = getattr(r, f"worst_m_{name}"), getattr(r, f"worst_direction_{name}")
        t = single_bit_tail(population=100_000, m=m, q=0.25, epsilon=0.01, direction=d)
        assert getattr(t, name) == pytest.approx(getattr(r, name), rel=1e-7)
    # the end pairs are not larger
    for m in (0, 1, 99_998, 99_999):
        t = single_bit_tail(population=100_000, m=m, q=0.25, epsilon=0.01)
        assert t.delta <= r.delta * (1 + 1e-7) and t.eta <= r.eta * (1 + 1e-7)


@pytest.mark.slow
def test_underflowing_values_keep_their_logs() -> None:
    r = worst_over_crowds(100_000, 0.45, 0.01)  # worst eta ~ 1e-55, far tails at q close to 1/2
    assert 0 < r.eta < 1e-50 and r.log_eta == pytest.approx(math.log(r.eta), abs=1e-9)
    deep = worst_over_crowds(300_000, 0.0163608, 1.0)  # ~ e**-1380: below a float's range
    assert deep.eta == 0.0 and deep.log_eta is not None and deep.log_eta < -800
    t = _tail_direction(300_000, deep.worst_m_eta, 0.0163608, 1.0, deep.worst_direction_eta)
    assert t.log_eta == pytest.approx(deep.log_eta, abs=1e-7)


def test_result_is_json_ready_and_wrapper_agrees() -> None:
    r = worst_over_crowds(300, 0.1, 0.3)
    d = json.loads(json.dumps(r.to_dict()))
    assert {"eta", "eta_lower", "eta_upper", "delta", "delta_lower", "delta_upper", "worst_m_eta",
            "worst_direction_eta", "worst_m_delta", "worst_direction_delta", "kind", "method", "details"} <= set(d)
    w = single_bit_worst_tail(population=300, q=0.1, epsilon=0.3)
    assert (w.eta, w.delta) == (r.eta, r.delta)
    assert w.details["argmax_m_delta"] == r.worst_m_delta and w.details["argmax_direction_delta"] == r.worst_direction_delta
    assert w.eta_lower == r.eta_lower and w.delta_upper == r.delta_upper
    # a subset is the worst over its pairs only (both directions at each given m)
    sub = single_bit_worst_tail(population=300, q=0.1, epsilon=0.3, ms=[5, 150])
    ref = max(single_bit_tail(population=300, m=m, q=0.1, epsilon=0.3).delta for m in (5, 150))
    assert sub.delta == pytest.approx(ref, rel=1e-9) and "subset" in sub.details["scanned"]


def test_progress_and_invalid_inputs() -> None:
    calls: list[tuple[int, int]] = []
    worst_over_crowds(40_000, 0.2, 0.1, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (40_000, 40_000) and len(calls) >= 2
    for kwargs, match in [({"population": 0}, "population"), ({"population": 2.5}, "population"),
                          ({"q": 0.5}, "q must"), ({"q": 0.0}, "q must"), ({"epsilon": -0.1}, "epsilon"),
                          ({"epsilon": math.inf}, "epsilon"), ({"epsilon": math.nan}, "epsilon")]:
        args: dict[str, object] = {"population": 10, "q": 0.2, "epsilon": 0.5}
        args.update(kwargs)
        with pytest.raises(ParameterError, match=match):
            worst_over_crowds(**args)  # type: ignore[arg-type]
