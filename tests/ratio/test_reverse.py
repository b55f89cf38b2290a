"""Reverse homogeneous pair and two-sided statements (sufficientdp.ratio.reverse) against independent truth.

Independent truth used here:

* :func:`sufficientdp.ratio.exact.homogeneous_ratio_distribution` with ``outlier_in="original"`` (every count
  vector of the N reports enumerated) for k = 1;
* brute force for k > 1: every ordered sequence of report levels (one report at a time, no multinomial algebra),
  ``e_k`` by summing products over all k-subsets (ERRATA 4), both directions;
* the elementary fact that the all-zero output (probability ``p**(jN)``) has the largest reverse ratio.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.ratio.exact import homogeneous_ratio_distribution
from sufficientdp.ratio.result import TailResult
from sufficientdp.ratio.reverse import (
    forward_k_certified,
    reverse_tail,
    two_sided_tail,
    worst_two_sided,
)
from sufficientdp.ratio.tail import exact_tail

SMALL_K1 = [
    (0.2, 2, 4, 1.0, 2),
    (0.1, 2, 4, 2.0, 2),
    (0.1, 2, 4, 2.0, 1),
    (0.3, 3, 10, 0.8, 3),
    (0.3, 3, 10, 0.8, 2),
    (0.169199, 5, 30, 2.0, 5),
    (0.25, 4, 50, 1.0, 4),
    (0.4, 3, 60, 0.3, 3),
    (0.3, 2, 200, 0.3, 2),
    (0.05, 3, 7, 3.0, 3),
]


def _lo(r: TailResult) -> float:
    assert r.eta_lower is not None
    return r.eta_lower


def _hi(r: TailResult) -> float:
    assert r.eta_upper is not None
    return r.eta_upper


def _d(x: float | None) -> float:
    assert x is not None
    return x


def brute_force_k(q: float, j: int, population: int, k: int, eps: float) -> tuple[float, float]:
    """(eta_rev, eta_fwd) by enumerating every ordered sequence of the kN report levels (float64)."""
    p = 1.0 - q
    n = k * population
    pl = [math.comb(j, lv) * q**lv * p ** (j - lv) for lv in range(j + 1)]
    wl = [(q / p) ** (j - 2 * lv) for lv in range(j + 1)]
    lam = math.exp(eps)
    eta_rev = eta_fwd = 0.0
    for seq in itertools.product(range(j + 1), repeat=n):
        pr0 = math.prod(pl[lv] for lv in seq)
        w = [wl[lv] for lv in seq]
        ek = sum(math.prod(c) for c in itertools.combinations(w, k))
        r = ek / math.comb(n, k)
        if 1.0 / r > lam:
            eta_rev += pr0
        if r > lam:
            eta_fwd += pr0 * r  # P(S | D_m) = R(S) P(S | D)
    return eta_rev, eta_fwd


@pytest.mark.slow
@pytest.mark.parametrize("q,bits,n,eps,j", SMALL_K1)
def test_k1_certified_and_exact_against_oracle(q: float, bits: int, n: int, eps: float, j: int) -> None:
    oracle = homogeneous_ratio_distribution(q, bits, n, outlier_bits=j, outlier_in="original").tail(eps)
    cert = reverse_tail(q=q, bits=bits, population=n, epsilon=eps, outlier_bits=j)
    ex = reverse_tail(q=q, bits=bits, population=n, epsilon=eps, outlier_bits=j, method="exact")
    assert cert.kind == "bound" and cert.details["direction"] == "reverse"
    assert cert.eta >= _hi(oracle)  # bound covers even the tie-inclusive tail
    assert ex.kind == "exact"
    assert _lo(ex) <= oracle.eta * (1 + 1e-9) + 1e-15
    assert oracle.eta <= _hi(ex) * (1 + 1e-9) + 1e-15
    assert ex.eta == pytest.approx(oracle.eta, rel=1e-9, abs=1e-15)
    # delta: certified >= exact, exact matches the oracle
    assert _d(cert.delta) >= _d(oracle.delta) * (1 - 1e-12)
    assert ex.delta == pytest.approx(_d(oracle.delta), rel=1e-8, abs=1e-14)
    # the all-zero output alone has the largest reverse ratio (p/q)**j
    if j * math.log((1 - q) / q) > eps:
        assert ex.eta >= (1 - q) ** (j * n) * (1 - 1e-12)


def test_plain_chernoff_is_an_upper_bound_too() -> None:
    q, bits, n, eps = 0.3, 2, 200, 0.3
    oracle = homogeneous_ratio_distribution(q, bits, n, outlier_in="original").eta(eps)
    cert = reverse_tail(q=q, bits=bits, population=n, epsilon=eps)
    assert 10 ** cert.details["log10_plain_chernoff"] >= oracle
    assert cert.eta <= 10 ** cert.details["log10_plain_chernoff"] * (1 + 1e-9) + 1e-300


@pytest.mark.parametrize("q,j,n,k,eps", [(0.2, 2, 2, 2, 1.0), (0.3, 2, 3, 2, 0.7), (0.15, 1, 4, 2, 1.5),
                                         (0.25, 3, 2, 2, 1.2), (0.3, 1, 3, 3, 0.9), (0.35, 2, 3, 2, 0.2)])
def test_k_reports_exact_and_certified_against_brute_force(q: float, j: int, n: int, k: int, eps: float) -> None:
    rev_bf, fwd_bf = brute_force_k(q, j, n, k, eps)
    ex = two_sided_tail(q=q, bits=j, population=n, epsilon=eps, reports=k, method="exact")
    assert ex.details["reverse"]["eta"] == pytest.approx(rev_bf, rel=1e-9, abs=1e-14)
    assert ex.details["forward"]["eta"] == pytest.approx(fwd_bf, rel=1e-9, abs=1e-14)
    cert = two_sided_tail(q=q, bits=j, population=n, epsilon=eps, reports=k)
    assert cert.details["reverse"]["eta"] >= rev_bf
    assert cert.details["forward"]["eta"] >= fwd_bf
    assert cert.eta == max(cert.details["reverse"]["eta"], cert.details["forward"]["eta"])
    assert cert.details["worst_direction"] in ("forward", "reverse")


def test_truncated_chernoff_k2_without_enumeration_against_brute_force() -> None:
    """(C3) alone (no exact-enumeration shortcut): force it through the core on a brute-forceable case."""
    from sufficientdp.ratio import reverse as rv
    from sufficientdp.ratio._chernoff import check_config

    q, j, n, k, eps = 0.3, 2, 4, 2, 0.5
    rev_bf, _ = brute_force_k(q, j, n, k, eps)
    cfg = check_config(q, j, n, eps, None, k)
    rb = rv._reverse_certified_core(cfg)
    assert rv._finish_up(rb.log_bound) >= rev_bf


@pytest.mark.slow
def test_mc_interval_covers_exact_k1() -> None:
    for (q, bits, n, eps, j), seed in zip(SMALL_K1[:6], range(6), strict=True):
        oracle = homogeneous_ratio_distribution(q, bits, n, outlier_bits=j, outlier_in="original").eta(eps)
        mc = reverse_tail(q=q, bits=bits, population=n, epsilon=eps, outlier_bits=j, method="mc", rng=seed,
                          samples=20_000)
        assert mc.kind == "estimate" and mc.confidence_level == 0.95
        assert _lo(mc) <= oracle <= _hi(mc)


def test_mc_interval_covers_exact_k2() -> None:
    q, j, n, k, eps = 0.25, 3, 40, 2, 1.0
    ex = reverse_tail(q=q, bits=j, population=n, epsilon=eps, reports=k, method="exact")
    mc = reverse_tail(q=q, bits=j, population=n, epsilon=eps, reports=k, method="mc", rng=11, samples=20_000)
    assert _lo(mc) <= ex.eta <= _hi(mc)


def test_mc_tilted_rare_event_k1() -> None:
    """The tilt makes a ~1e-10 tail measurable, and the interval still covers the exact value."""
    q, bits, n, eps = 0.3, 2, 1000, 0.25
    ex = reverse_tail(q=q, bits=bits, population=n, epsilon=eps, method="exact")
    mc = reverse_tail(q=q, bits=bits, population=n, epsilon=eps, method="mc", rng=5, samples=20_000)
    assert 0 < ex.eta < 1e-6
    assert _lo(mc) <= ex.eta <= _hi(mc)
    assert _hi(mc) <= 3 * ex.eta


@pytest.mark.slow
@pytest.mark.parametrize("q,j,n,k,eps", [(0.25, 3, 500, 2, 1.0), (0.3, 2, 1000, 3, 0.6), (0.2, 4, 300, 2, 2.0),
                                         (0.3, 3, 300, 4, 1.2), (0.35, 2, 100, 2, 0.3)])
def test_k_bound_above_mc_lower_end(q: float, j: int, n: int, k: int, eps: float) -> None:
    cert = reverse_tail(q=q, bits=j, population=n, epsilon=eps, reports=k)
    mc = reverse_tail(q=q, bits=j, population=n, epsilon=eps, reports=k, method="mc", rng=7, samples=10_000)
    assert cert.eta >= _lo(mc)
    fwd = forward_k_certified(q=q, bits=j, population=n, epsilon=eps, reports=k)
    fmc = two_sided_tail(q=q, bits=j, population=n, epsilon=eps, reports=k, method="mc", direction="forward",
                         rng=8, samples=10_000)
    assert fwd.eta >= _lo(fmc)


def test_forward_k1_alternative_bound_is_valid() -> None:
    for q, bits, n, eps in [(0.169199, 5, 1000, 2.0), (0.3, 3, 100, 1.0)]:
        ex = exact_tail(q=q, bits=bits, population=n, epsilon=eps)
        assert forward_k_certified(q=q, bits=bits, population=n, epsilon=eps).eta >= _hi(ex)


@pytest.mark.slow
def test_paper_case_reverse_is_small() -> None:
    """L = 5, N = 1000, lambda = e^2, q = 0.169199 (seed 001 §3.3): the reverse tail is ~1.6e-4, 23x below the
    forward 0.003706 (exact); certified bound and exact value agree to 1e-9."""
    q, bits, n, eps = 0.169199, 5, 1000, 2.0
    cert = reverse_tail(q=q, bits=bits, population=n, epsilon=eps)
    ex = reverse_tail(q=q, bits=bits, population=n, epsilon=eps, method="exact")
    print(f"reverse eta at the paper's L=5, N=1000, lambda=e^2, q=0.169199: exact {ex.eta:.6e}, "
          f"certified {cert.eta:.6e}")
    assert _lo(ex) <= ex.eta <= _hi(ex) <= cert.eta
    # the exact method is checked against ratio.exact's independent enumeration on small N elsewhere in this
    # file; here it is pinned to its value and to the certified bound computed by a different route
    assert ex.eta == pytest.approx(1.578046e-4, rel=1e-5)
    assert cert.eta <= ex.eta * (1 + 1e-6)
    both = worst_two_sided(q=q, bits=bits, population=n, epsilon=eps)
    assert both.details["worst_direction"] == "forward" and both.outlier_bits == 5
    assert 0.003706 <= both.eta < 0.0038


def test_small_population_reverse_dominates() -> None:
    r = two_sided_tail(q=0.317147, bits=5, population=10, epsilon=2.0)
    assert r.details["worst_direction"] == "reverse"
    assert r.details["reverse"]["eta"] > r.details["forward"]["eta"]


def test_local_dp_regime_is_zero() -> None:
    # (p/q)**(jk) <= e**eps: q = 0.4, j = 2, k = 2: (1.5)**4 = 5.06 < e**2
    for method in ("certified", "exact", "mc"):
        r = reverse_tail(q=0.4, bits=2, population=5, epsilon=2.0, reports=2, method=method, rng=1, samples=1000)
        assert r.eta == 0.0
    assert forward_k_certified(q=0.4, bits=2, population=5, epsilon=2.0, reports=2).eta == 0.0


def test_vacuous_is_flagged() -> None:
    """k = 3, eps = 0.05: the truncation bound (C3) is vacuous (true tail ~0.42); it must say so, capped at 1."""
    r = reverse_tail(q=0.3, bits=6, population=3000, epsilon=0.05, reports=3)
    assert r.eta == 1.0 and r.details["vacuous"] is True and "vacuous_note" in r.details
    r2 = reverse_tail(q=0.2, bits=2, population=4, epsilon=1.0)
    assert r2.details["vacuous"] is False


def test_worst_two_sided_takes_the_max_over_j() -> None:
    r = worst_two_sided(q=0.2, bits=3, population=6, epsilon=1.5)
    per = r.details["per_outlier_bits"]
    assert set(per) == {"1", "2", "3"}
    assert r.eta == pytest.approx(max(max(v["forward"], v["reverse"]) for v in per.values()))
    ex = worst_two_sided(q=0.2, bits=3, population=6, epsilon=1.5, method="exact")
    assert r.eta >= ex.eta


@pytest.mark.parametrize("kwargs,name", [
    ({"q": 0.7}, "q"), ({"q": 0.0}, "q"), ({"bits": 0}, "bits"), ({"population": 0}, "population"),
    ({"epsilon": -1.0}, "epsilon"), ({"epsilon": math.inf}, "epsilon"), ({"reports": 0}, "reports"),
    ({"outlier_bits": 4}, "outlier_bits"), ({"method": "magic"}, "method"),
    ({"method": "mc", "samples": 5}, "samples"), ({"method": "mc", "confidence_level": 1.5}, "confidence_level"),
    ({"method": "mc", "rng": "seed"}, "rng"),
])
def test_bad_input_names_the_parameter(kwargs: dict[str, Any], name: str) -> None:
    base = {"q": 0.2, "bits": 3, "population": 10, "epsilon": 1.0}
    with pytest.raises(ParameterError, match=name):
        reverse_tail(**{**base, **kwargs})


def test_bad_input_other_entry_points() -> None:
    with pytest.raises(ParameterError, match="direction"):
        two_sided_tail(q=0.2, bits=2, population=4, epsilon=1.0, direction="sideways")
    with pytest.raises(ParameterError, match="population"):
        worst_two_sided(q=0.2, bits=2, population=-3, epsilon=1.0)
    with pytest.raises(ParameterError, match="exact"):
        reverse_tail(q=0.2, bits=5, population=1000, epsilon=1.0, reports=2, method="exact")


def test_result_is_json_ready() -> None:
    import json

    r = two_sided_tail(q=0.2, bits=2, population=4, epsilon=1.0, reports=2)
    json.dumps(r.to_dict())
    assert np.isfinite(r.eta)
