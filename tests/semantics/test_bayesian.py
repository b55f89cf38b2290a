"""Tests of the Bayesian semantics against direct Bayes-rule computation (digest §4, paper 004 Sec. 7, seed 003)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.mechanisms import GaussianPLD, binary_randomized_response
from sufficientdp.accounting.pbdp import pbdp_delta
from sufficientdp.semantics.bayesian import (
    correlated_prior_shift,
    fdp_posterior_delta,
    posterior_table,
    prior_to_posterior_reading,
    pure_dp_posterior_bound,
    rdp_posterior_delta,
    total_variation_reading,
    zcdp_posterior_delta,
    zcdp_posterior_epsilon,
)


def _rr_world(eps: float, prior_rest: dict[tuple[int, ...], float], p_target: dict[tuple[int, ...], float]):
    """Exact toy world: 2 other people + target, each bit reported through eps-RR (so M is eps-DP per person).

    prior_rest: P_A(D^-) over the others' bits; p_target: P_A(target = 1 | D^-). Returns for every output w:
    (actual posterior of target = 1, counterfactual psample posterior, P(w | true record 1)) — paper 004 §7.2.
    """
    q = 1 / (1 + math.exp(eps))

    def lik(w: tuple[int, ...], d: tuple[int, ...]) -> float:
        return float(np.prod([1 - q if wi == di else q for wi, di in zip(w, d, strict=True)]))

    out = []
    for w in itertools.product([0, 1], repeat=3):
        num_a = sum(pr * p_target[dm] * lik(w, dm + (1,)) for dm, pr in prior_rest.items())
        den = sum(pr * (p_target[dm] * lik(w, dm + (1,)) + (1 - p_target[dm]) * lik(w, dm + (0,)))
                  for dm, pr in prior_rest.items())
        num_c = sum(pr * p_target[dm] * (p_target[dm] * lik(w, dm + (1,)) + (1 - p_target[dm]) * lik(w, dm + (0,)))
                    for dm, pr in prior_rest.items())
        p_w_given_1 = sum(pr * p_target[dm] * lik(w, dm + (1,)) for dm, pr in prior_rest.items()) / sum(
            pr * p_target[dm] for dm, pr in prior_rest.items())
        out.append((num_a / den, num_c / den, p_w_given_1))
    return out


# ------------------------------------------------------------------------------------------ pure DP
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_pure_dp_rest_known_tight_for_randomized_response(eps: float) -> None:
    # Bayes rule for binary RR with the rest known: posterior after the matching report is exactly the odds bound
    q = 1 / (1 + math.exp(eps))
    for p in [0.01, 0.1, 0.5, 0.9]:
        post_1 = p * (1 - q) / (p * (1 - q) + (1 - p) * q)
        post_0 = p * q / (p * q + (1 - p) * (1 - q))
        b = pure_dp_posterior_bound(p, eps)
        assert b.upper == pytest.approx(post_1, rel=1e-10) and b.upper >= post_1
        assert b.lower == pytest.approx(post_0, rel=1e-10) and b.lower <= post_0
        assert b.tight and b.kind == "bound" and b.failure_probability == 0.0


def test_pure_dp_any_prior_even_wrong_or_correlated() -> None:
    # paper 004 Sec. 7.3: ratio of actual to psample posterior within e^{+-eps} for every prior and output;
    # priors with uncertain, correlated rest (and arbitrary, possibly "wrong", beliefs)
    eps = 1.0
    rests = [(0, 0), (0, 1), (1, 0), (1, 1)]
    priors = [
        ({r: 0.25 for r in rests}, {r: 0.3 for r in rests}),
        ({(0, 0): 0.9, (1, 1): 0.1, (0, 1): 0.0, (1, 0): 0.0}, {(0, 0): 0.01, (1, 1): 0.99, (0, 1): 0.5, (1, 0): 0.5}),
        ({(0, 0): 0.4, (0, 1): 0.3, (1, 0): 0.2, (1, 1): 0.1}, {(0, 0): 0.7, (0, 1): 0.2, (1, 0): 0.05, (1, 1): 0.6}),
    ]
    for prior_rest, p_target in priors:
        prior_rest = {k: v for k, v in prior_rest.items() if v > 0}
        for post_a, post_c, _ in _rr_world(eps, prior_rest, p_target):
            assert math.exp(-eps) * (1 - 1e-12) <= post_a / post_c <= math.exp(eps) * (1 + 1e-12)
            b = pure_dp_posterior_bound(post_c, eps, rest_known=False)
            assert b.lower <= post_a <= b.upper


# ------------------------------------------------------------------------------------------ zCDP / f-DP, Gaussian
def _gauss_exceed(p: float, sigma: float, eps: float, r: int, under: str) -> float:
    """Exact P(ratio(r, w) >= e^eps) for the Gaussian count mechanism with the rest known, binary record.

    ratio(r, w) = P(w | r) / (p P(w | 1) + (1 - p) P(w | 0)); w ~ N(r', sigma^2) with r' from the prior ("marginal",
    Thm 7.4.1) or r' = r ("given", Thm 3). The ratio is monotone in w, so the event is a half-line.
    """
    pr = p if r == 1 else 1 - p  # prior of the record in question
    thr = (math.exp(-eps) - pr) / (1 - pr)  # ratio >= e^eps  <=>  P(w|other)/P(w|r) <= thr
    if thr <= 0:
        return 0.0
    # log P(w|1)/P(w|0) = (2w - 1)/(2 sigma^2); for r = 1 need it >= -log thr; for r = 0 need it <= log thr
    lr = -math.log(thr)
    w0 = sigma**2 * lr + 0.5 if r == 1 else 0.5 - sigma**2 * lr

    def prob(mean: float) -> float:
        return float(norm.sf(w0, mean, sigma) if r == 1 else norm.cdf(w0, mean, sigma))

    if under == "given":
        return prob(float(r))
    return p * prob(1.0) + (1 - p) * prob(0.0)


@pytest.mark.parametrize("rho", [0.1115, 0.926, 2.63])
def test_zcdp_and_fdp_rest_known_against_exact_gaussian(rho: float) -> None:
    sigma = 1 / math.sqrt(2 * rho)  # sensitivity-1 Gaussian that is exactly rho-zCDP
    g = GaussianPLD.from_rho(rho)
    for p in [0.01, 0.2, 0.5]:
        for eps in [0.05, 0.5, 1.0, 2.0, 4.0]:
            for r in (0, 1):
                exact_marg = _gauss_exceed(p, sigma, eps, r, "marginal")
                assert exact_marg <= float(zcdp_posterior_delta(eps, rho))  # Thm 7.4.1
                assert exact_marg <= float(rdp_posterior_delta(eps, 2.0, 2.0 * rho))
                exact_given = _gauss_exceed(p, sigma, eps * (1 + 1e-9), r, "given")
                assert exact_given <= float(fdp_posterior_delta(g, eps)) + 1e-12  # Thm 3 (pbdp curve)
                assert exact_given <= float(zcdp_posterior_delta(eps, rho, rest_known=False))  # Thm 7.4.2


def test_zcdp_any_prior_exact_discrete_world() -> None:
    # Thm 7.4.2 with uncertain, correlated rest: eps0-DP RR world is (eps0^2/2)-zCDP (Bun–Steinke Prop. 1.4);
    # P_{w|r}(ratio >= e^eps) computed exactly by enumeration must be below exp(-(eps - rho)^2/(4 rho))
    eps0 = 0.8
    rho = eps0**2 / 2
    prior_rest = {(0, 0): 0.5, (0, 1): 0.1, (1, 0): 0.1, (1, 1): 0.3}
    p_target = {(0, 0): 0.2, (0, 1): 0.5, (1, 0): 0.5, (1, 1): 0.9}
    world = _rr_world(eps0, prior_rest, p_target)
    for eps in [0.1, 0.4, 0.7, 1.0]:
        exceed = sum(pw for a, c, pw in world if a / c >= math.exp(eps))
        assert exceed <= float(zcdp_posterior_delta(eps, rho, rest_known=False))


def test_curves_closed_forms_and_inverse() -> None:
    rho = 0.5
    # alpha* = (eps + rho)/(2 rho) minimises the RDP forms (digest §4.3, §4.4)
    for eps in [1.0, 3.0]:
        a = (eps + rho) / (2 * rho)
        assert float(rdp_posterior_delta(eps, a, a * rho)) == pytest.approx(float(zcdp_posterior_delta(eps, rho)),
                                                                            rel=1e-9)
        assert float(rdp_posterior_delta(eps, a, a * rho, rest_known=False)) == pytest.approx(
            float(zcdp_posterior_delta(eps, rho, rest_known=False)), rel=1e-9)
    assert float(zcdp_posterior_delta(0.3, rho)) == pytest.approx(math.exp(-0.3))  # eps <= rho: Markov, e^-eps
    assert float(zcdp_posterior_delta(0.3, rho, rest_known=False)) == 1.0
    for d in [0.9, 0.3, 1e-3, 1e-9]:
        for rk in (True, False):
            e = zcdp_posterior_epsilon(d, rho, rest_known=rk)
            assert float(zcdp_posterior_delta(e, rho, rest_known=rk)) <= d * (1 + 1e-9)
            assert float(zcdp_posterior_delta(e * 0.999, rho, rest_known=rk)) > d


def test_example_7_1_wrong_prior() -> None:
    # paper 004 Ex. 7.1: posterior 1/(1 + 99 e^{-101.3 + 1/2}) ~ 1 vs counterfactual 0.01: ratio ~ 100
    post = 1 / (1 + 99 * math.exp(-101.3 + 0.5))
    assert post == pytest.approx(1.0, abs=1e-40)
    assert post / 0.01 == pytest.approx(100.0)
    # a pure-DP mechanism cannot do this: the any-prior band at counterfactual 0.01 stays far below 1
    assert pure_dp_posterior_bound(0.01, 1.0, rest_known=False).upper < 0.03


# ------------------------------------------------------------------------------------------ seed 003 readings
def test_total_variation_readings() -> None:
    # RR with flip q: TV = 1 - 2q exactly = tanh(eps/2); seed 003's 1 - e^{-eps} is a looser valid bound
    for eps in [0.1, 1.0, 3.0]:
        q = 1 / (1 + math.exp(eps))
        tv = total_variation_reading(binary_randomized_response(q))
        assert tv.total_variation == pytest.approx(1 - 2 * q, rel=1e-12) and tv.kind == "exact"
        b = total_variation_reading(epsilon=eps)
        assert b.kind == "bound" and tv.total_variation <= b.total_variation <= 1 - math.exp(-eps)
        assert "not a privacy definition" in b.caveat
    g = total_variation_reading(GaussianPLD(mu=1.0))
    assert g.total_variation == pytest.approx(2 * norm.cdf(0.5) - 1, rel=1e-9)
    assert g.to_dict()["advantage"] == pytest.approx((1 + g.total_variation) / 2)


def test_prior_to_posterior_independent_records_and_correlated_counterexample() -> None:
    eps = 1.0
    # independent records, rest unknown: the posterior stays in the odds band (direct Bayes on the toy world)
    rests = [(0, 0), (0, 1), (1, 0), (1, 1)]
    prior_rest = {r: (0.6 if r[0] else 0.4) * (0.3 if r[1] else 0.7) for r in rests}
    p = 0.2
    reading = prior_to_posterior_reading(p, eps)
    for post_a, _, _ in _rr_world(eps, prior_rest, {r: p for r in rests}):
        assert reading.lower <= post_a <= reading.upper
    assert "independent" in reading.assumption and "differencing" in reading.caveat
    # correlated prior: the posterior is p e^{eps n}/(p e^{eps n} + 1 - p) exactly; far outside the band
    shift = correlated_prior_shift(p, eps, 20)
    exact = p * math.exp(20 * eps) / (p * math.exp(20 * eps) + 1 - p)
    assert shift.upper == pytest.approx(exact, rel=1e-12) and shift.kind == "exact"
    assert shift.upper > reading.upper + 0.5


# ------------------------------------------------------------------------------------------ table
def test_posterior_table() -> None:
    t = posterior_table([0.01, 0.1, 0.5], rho=0.1115)
    d = t.to_dict()
    assert set(d["columns"]) == {"zcdp_rest_known", "zcdp_any_prior", "gaussian_fdp_rest_known"}
    assert all(k == "bound" for k in d["kind"].values())
    # rest-known zCDP: posterior <= prior e^eps with eps from the inverted Thm 7.4.1 curve
    e = zcdp_posterior_epsilon(0.05, 0.1115)
    assert t.columns["zcdp_rest_known"][0] == pytest.approx(0.01 * math.exp(e), rel=1e-9)
    # f-DP column uses the Gaussian pbdp curve: delta_pbdp(eps_used) <= 0.05
    g = GaussianPLD.from_rho(0.1115)
    assert float(pbdp_delta(g, t.ratio_epsilon["gaussian_fdp_rest_known"])) <= 0.05 * (1 + 1e-9)
    assert t.columns["zcdp_rest_known"][0] <= t.columns["zcdp_any_prior"][0]
    pure = posterior_table([0.1], epsilon=1.0)
    assert pure.failure_probability == 0.0
    assert pure.columns["pure_dp_rest_known"][0] <= pure.columns["pure_dp_any_prior"][0]
    assert "prior" in pure.format()


def test_invalid_inputs() -> None:
    for bad in [0.0, 1.0, -0.5, math.nan, "x", True]:
        with pytest.raises(ParameterError, match="prior"):
            pure_dp_posterior_bound(bad, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="epsilon"):
        pure_dp_posterior_bound(0.5, -1.0)
    with pytest.raises(ParameterError, match="epsilon"):
        zcdp_posterior_delta(-1.0, 1.0)
    with pytest.raises(ParameterError, match="rho"):
        zcdp_posterior_delta(1.0, 0.0)
    with pytest.raises(ParameterError, match="delta"):
        zcdp_posterior_epsilon(0.0, 1.0)
    with pytest.raises(ParameterError, match="alpha"):
        rdp_posterior_delta(1.0, 1.0, 0.5)
    with pytest.raises(ParameterError, match="gamma"):
        rdp_posterior_delta(1.0, 2.0, -0.5)
    with pytest.raises(ParameterError, match="epsilon"):
        rdp_posterior_delta(math.inf, 2.0, 0.5)
    with pytest.raises(ParameterError, match="pld"):
        fdp_posterior_delta("g", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="needs"):
        posterior_table([0.1])
    with pytest.raises(ParameterError, match="priors"):
        posterior_table([0.1, 1.0], rho=1.0)
    with pytest.raises(ParameterError, match="delta"):
        posterior_table([0.1], rho=1.0, failure_probability=1.0)
    with pytest.raises(ParameterError, match="mechanism"):
        posterior_table([0.1], mechanism="rr")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="exactly one"):
        total_variation_reading()
    with pytest.raises(ParameterError, match="exactly one"):
        total_variation_reading(GaussianPLD(mu=1.0), epsilon=1.0)
    with pytest.raises(ParameterError, match="pld"):
        total_variation_reading("x")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="n must"):
        correlated_prior_shift(0.1, 1.0, 0)
    with pytest.raises(ParameterError, match="epsilon"):
        correlated_prior_shift(0.1, 0.0, 3)
    with pytest.raises(ParameterError, match="prior"):
        prior_to_posterior_reading(1.2, 1.0)
