"""Tests of probabilistically-bounded DP (pbdp): three definitions, the curve, eta vs delta (digest §1.7–1.9)."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.mechanisms import (
    GaussianPLD,
    binary_randomized_response,
    geometric,
    k_randomized_response,
)
from sufficientdp.accounting.pbdp import (
    compare_eta_delta,
    pbdp_curve,
    pbdp_delta,
    pbdp_epsilon,
    pbdp_holds,
    postprocessed_tail,
)
from sufficientdp.accounting.pld import PrivacyLossDistribution

E = math.e
ASYM_P = [0.5, 0.3, 0.15, 0.05, 0.0]
ASYM_Q = [0.1, 0.2, 0.3, 0.3, 0.1]


def _mechanisms() -> list[tuple[str, PrivacyLossDistribution]]:
    return [
        ("rr", binary_randomized_response(1 / (1 + E))),
        ("krr", k_randomized_response(1.3, 4)),
        ("geom2", geometric(0.7, 2)),
        ("asym", PrivacyLossDistribution.from_pmfs(ASYM_P, ASYM_Q)),
    ]


def _brute_force_v1(p: list[float], q: list[float], eps: float, steps: int = 24) -> float:
    """sup over randomized binary post-processings A of P[L^{A∘M} > eps], both directions, on a grid.

    A(w) = 1 with probability c_w, c_w in {0, 1/steps, ..., 1}; the grid also contains every deterministic test.
    Any post-processing's tail is the P-mass of {outputs with loss > eps}, which a binary test realises, so binary
    tests suffice; this enumerates them independently of the library's Neyman–Pearson construction.
    """
    pa, qa = np.array(p), np.array(q)
    grid = np.linspace(0, 1, steps + 1)
    c = np.array(list(itertools.product(grid, repeat=len(p))))
    best = 0.0
    for x, y in ((pa, qa), (qa, pa)):
        a, b = c @ x, c @ y
        for aa, bb in ((a, b), (1 - a, 1 - b)):
            with np.errstate(divide="ignore"):
                hit = (aa > 0) & ((bb <= 0) | (np.log(np.maximum(aa, 1e-300)) - np.log(np.maximum(bb, 1e-300)) > eps))
            if np.any(hit):
                best = max(best, float(np.max(aa[hit])))
    return best


# ------------------------------------------------------------------------------------------ the three versions
@pytest.mark.parametrize("name,pld", _mechanisms())
def test_three_versions_agree(name: str, pld: PrivacyLossDistribution) -> None:
    # v1 (tail, Def 5.2), v2 (Def 5.3) and v3 (Def 5.4, via max_power at level e^-eps delta) are checked by three
    # different computations; all must switch from False to True at the same delta = pbdp_delta(eps).
    for eps in [0.0, 0.1, 0.4, 0.9, 1.5, 2.5]:
        d = float(pbdp_delta(pld, eps))
        for v in (1, 2, 3):
            if v == 3 and d == 0.0:
                assert pbdp_holds(pld, eps, 1e-12, version=3), (name, eps)
                continue
            assert pbdp_holds(pld, eps, min(1.0, d * (1 + 1e-7)), version=v), (name, eps, v)
            if d > 1e-9:
                assert not pbdp_holds(pld, eps, d * (1 - 1e-5), version=v), (name, eps, v, d)


@pytest.mark.slow
@pytest.mark.parametrize("name,pld", _mechanisms()[:2] + _mechanisms()[3:])
def test_v1_brute_force_over_post_processings(name: str, pld: PrivacyLossDistribution) -> None:
    # literal Def 5.2: enumerate randomized binary post-processings on a grid; the library's value is the sup,
    # so the grid maximum must not exceed it, and must come within the grid resolution of it
    assert pld.pmfs is not None
    p, q = list(pld.pmfs[0]), list(pld.pmfs[1])
    steps = 40 if len(p) <= 3 else 10
    for eps in [0.2, 0.7, 1.2]:
        d = float(pbdp_delta(pld, eps))
        bf = _brute_force_v1(p, q, eps, steps)
        assert bf <= d + 1e-12, (name, eps, bf, d)
        assert bf >= d - 1.0 / steps, (name, eps, bf, d)


def test_randomized_response_closed_form_mpmath() -> None:
    # RR(eps0): reject w=1, and w=0 with prob s; a > e^eps b iff s < (e^eps0 - e^eps)/(e^{eps+eps0} - 1)
    # (derivation in the pbdp module docstring: crossing of the NP curve with a = e^eps b)
    mp.mp.dps = 40
    for eps0 in [0.5, 1.0, 3.0]:
        rr = binary_randomized_response(float(1 / (1 + mp.e**eps0)))
        for eps in [0.0, 0.1, 0.3 * eps0, 0.9 * eps0]:
            s = (mp.e**eps0 - mp.e**eps) / (mp.e ** (eps + eps0) - 1)
            exact = (mp.e**eps0 + s) / (1 + mp.e**eps0)
            got = float(pbdp_delta(rr, eps))
            assert float(exact) <= got <= float(exact) * (1 + 1e-9)
        assert pbdp_delta(rr, eps0 * (1 + 1e-9)) == 0.0  # pure eps0-DP: pbdp with delta = 0 (Def 5.2 remark)
        # small delta gives back eps0 (digest §1.8 [DERIVED] check with pure DP)
        assert float(pbdp_epsilon(rr, 1e-3)) == pytest.approx(eps0, rel=1e-9)


def test_epsilon_and_delta_forms_are_inverse() -> None:
    # f-DP form eps(delta) = log(delta / f^{-1}(1-delta)) against the crossing form delta(eps): eps(delta) is the
    # smallest eps with delta_pbdp(eps) <= delta (the curve may jump, e.g. to 0 at a pure-DP eps)
    for pld in [geometric(0.7, 2), PrivacyLossDistribution.from_pmfs(ASYM_P, ASYM_Q), GaussianPLD(mu=1.3)]:
        for d in [0.05, 0.2, 0.5, 0.9]:
            eps = float(pbdp_epsilon(pld, d))
            if 0 < eps < math.inf:
                assert float(pbdp_delta(pld, eps)) <= d * (1 + 1e-9)
                assert float(pbdp_delta(pld, eps * (1 - 1e-6))) > d * (1 - 1e-5)
    g = GaussianPLD(mu=1.3)  # continuous curve: an exact inverse
    assert float(pbdp_delta(g, pbdp_epsilon(g, 0.2))) == pytest.approx(0.2, rel=1e-8)


def test_gaussian_against_mpmath_and_digest() -> None:
    # digest §1.9: eps(delta) = log(delta / Phi(Phi^{-1}(delta) - mu)); mpmath oracle
    mp.mp.dps = 40
    g = GaussianPLD.from_rho(2.63)
    mu = mp.sqrt(2 * mp.mpf("2.63"))
    for d in ["1e-8", "0.01", "0.3", "0.9"]:
        dd = mp.mpf(d)
        z = mp.sqrt(2) * mp.erfinv(2 * dd - 1)
        exact = mp.log(dd / mp.ncdf(z - mu))
        got = float(pbdp_epsilon(g, float(dd)))
        assert float(exact) <= got <= float(exact) * (1 + 1e-9) + 1e-12
    # digest §8 [DERIVED]: at rho = 2.63, eps = 3: pbdp delta 0.679 vs tail 0.436
    t = compare_eta_delta(g, [3.0])
    assert t.delta_pbdp[0] == pytest.approx(0.679, abs=5e-4)
    assert t.eta[0] == pytest.approx(0.436, abs=5e-4)


# ------------------------------------------------------------------------------------------ pbdp vs approx DP
@pytest.mark.parametrize("name,pld", _mechanisms() + [("gauss", GaussianPLD(mu=0.8))])
def test_delta_le_eta_le_pbdp(name: str, pld: PrivacyLossDistribution | GaussianPLD) -> None:
    # pbdp => (eps, delta)-DP: hockey stick <= tail <= pbdp delta, on a grid
    eps = np.linspace(0.0, 3.0, 31)
    t = compare_eta_delta(pld, eps)
    for d, e, b in zip(t.delta, t.eta, t.delta_pbdp, strict=True):
        assert d <= e + 1e-15 <= b + 2e-15
    assert "not post-processing invariant" in t.explanation
    assert t.to_dict()["kind"] == "exact"
    assert "delta_pbdp" in t.format()


def test_approx_dp_does_not_imply_pbdp() -> None:
    # RR with eps0 = 1 at eps = 0.5: delta(0.5) = (e - e^0.5)/(1 + e) = 0.2876 [digest §2 DERIVED], so the
    # mechanism is (0.5, 0.2876)-DP, but its pbdp delta is 0.8137 (attack: reject w=1, and w=0 w.p. s)
    rr = binary_randomized_response(1 / (1 + E))
    d = (E - math.exp(0.5)) / (1 + E)
    assert float(rr.delta(0.5)) == pytest.approx(d, rel=1e-12)
    for v in (1, 2, 3):
        assert not pbdp_holds(rr, 0.5, d * 1.001, version=v)


def test_example_4_9_tails_under_post_processing() -> None:
    # digest Ex. 4.9: two RR copies; A1 = constant, identity, A2 = keep first; tails 0 < e^{2e}/(1+e^e)^2 < e^e/(1+e^e)
    eps = 1.0
    a, b = math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps))
    p = [a * a, a * b, b * a, b * b]  # outputs 11, 10, 01, 00 under D1 (cancer)
    q = [b * b, b * a, a * b, a * a]
    const = np.array([[1.0]] * 4)
    ident = np.eye(4)
    first = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=float)
    t0 = postprocessed_tail(p, q, const, eps / 2)
    t1 = postprocessed_tail(p, q, ident, eps / 2)
    t2 = postprocessed_tail(p, q, first, eps / 2)
    assert t0 == 0.0
    assert t1 == pytest.approx(math.exp(2 * eps) / (1 + math.exp(eps)) ** 2, rel=1e-12)
    assert t2 == pytest.approx(math.exp(eps) / (1 + math.exp(eps)), rel=1e-12)
    assert t0 < t1 < t2  # the raw tail (eta) is not post-processing invariant ...
    assert t2 <= float(pbdp_delta(PrivacyLossDistribution.from_pmfs(p, q), eps / 2))  # ... the pbdp delta bounds all


def test_example_5_6_single_point_not_convex() -> None:
    # digest Ex. 5.6: M1 and M2 satisfy (1.01, 0.02)-pbdp, their 1/2-1/2 mixture does not [VERIFIED numbers]
    m1p, m1q = [E / (1 + E), 1 / (1 + E)], [1 / (1 + E), E / (1 + E)]
    m2p, m2q = [0.0, 1.0], [0.01, 0.99]
    m1 = PrivacyLossDistribution.from_pmfs(m1p, m1q)
    m2 = PrivacyLossDistribution.from_pmfs(m2p, m2q)
    mix = PrivacyLossDistribution.from_pmfs([x / 2 for x in m1p + m2p], [x / 2 for x in m1q + m2q])
    for v in (1, 2, 3):
        assert pbdp_holds(m1, 1.01, 0.02, version=v)
        assert pbdp_holds(m2, 1.01, 0.02, version=v)
        assert not pbdp_holds(mix, 1.01, 0.02, version=v)
    # the paper's attack: level 0.0067235 < e^-1.01 0.02, power 0.0232765 > 0.02
    assert 0.5 / (1 + E) * 0.05 == pytest.approx(0.0067235, abs=1e-7)
    assert 0.5 * E / (1 + E) * 0.05 + 0.005 == pytest.approx(0.0232765, abs=1e-7)


def test_pbdp_curve_and_zcdp_bound() -> None:
    # the zCDP tail bound exp(-(eps-rho)^2/(4 rho)) bounds the pbdp delta (digest §1.13, Fig. 1)
    g = GaussianPLD.from_rho(2.63)
    c = pbdp_curve(g, np.linspace(0.0, 15.0, 31))
    assert c.rho == pytest.approx(2.63)
    assert c.zcdp_bound is not None
    for d, b in zip(c.delta_pbdp, c.zcdp_bound, strict=True):
        assert d <= b
    assert np.all(np.diff(c.delta_pbdp) <= 0)
    assert c.to_dict()["kind"]["zcdp_bound"] == "bound"
    assert pbdp_curve(geometric(1.0), [1.0]).zcdp_bound is None


def test_infinity_atom() -> None:
    # sampling m of n (digest Ex. 4.7): P(L = inf) = m/n, so delta_pbdp(eps) >= m/n for every eps, eps(delta) = inf
    pld = PrivacyLossDistribution.from_pmfs([0.7, 0.3, 0.0], [0.7, 0.0, 0.3])
    assert float(pbdp_delta(pld, 50.0)) == pytest.approx(0.3)
    assert pbdp_epsilon(pld, 0.2) == math.inf
    assert not pbdp_holds(pld, 50.0, 0.29, version=3)


# ------------------------------------------------------------------------------------------ invalid input
def test_invalid_inputs() -> None:
    rr = binary_randomized_response(0.25)
    with pytest.raises(ParameterError, match="pld"):
        pbdp_delta("rr", 1.0)  # type: ignore[arg-type]
    for bad in [-0.1, math.nan, math.inf]:
        with pytest.raises(ParameterError, match="epsilon"):
            pbdp_delta(rr, bad)
    for bad_d in [0.0, -0.1, 1.5, math.nan]:
        with pytest.raises(ParameterError, match="delta"):
            pbdp_epsilon(rr, bad_d)
    with pytest.raises(ParameterError, match="pld"):
        pbdp_epsilon(None, 0.1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="version"):
        pbdp_holds(rr, 1.0, 0.1, version=4)
    with pytest.raises(ParameterError, match="delta"):
        pbdp_holds(rr, 1.0, 0.0, version=3)
    with pytest.raises(ParameterError, match="delta"):
        pbdp_holds(rr, 1.0, 1.2)
    with pytest.raises(ParameterError, match="channel"):
        postprocessed_tail([0.5, 0.5], [0.5, 0.5], [[1.0, 0.0]], 1.0)
    with pytest.raises(ParameterError, match="channel"):
        postprocessed_tail([0.5, 0.5], [0.5, 0.5], [[0.5, 0.6], [1.0, 0.0]], 1.0)
    with pytest.raises(ParameterError):
        postprocessed_tail([0.5, 0.6], [0.5, 0.5], np.eye(2), 1.0)
    with pytest.raises(ParameterError, match="epsilon"):
        compare_eta_delta(rr, [-1.0])
    with pytest.raises(ParameterError, match="pld"):
        compare_eta_delta(3, [1.0])  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="rho"):
        pbdp_curve(rr, [1.0], rho=-1.0)
