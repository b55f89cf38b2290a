"""Tests for sufficientdp.estimation.joint (joint frequencies of whole bit vectors; seed 001 §1.3, §4, §6).

Independent truths used here:

* the dense channel ``A[s, x] = q**d(s,x) p**(L-d(s,x))`` built from Hamming distances of the integer indices (seed
  001 §1.3), and ``np.kron`` / ``np.linalg.inv`` of it;
* exact enumeration of every report outcome with ``fractions.Fraction`` for the mean and variance;
* the closed form ``Var f_hat_v = (sum_u f_u α**(L-d(u,v)) β**d(u,v) - f_v) / k``, ``β = pq/(p-q)**2``,
  ``α = 1 + β``, which for L = 1 is seed 001 §4/§6's ``N p q / (k (p - q)**2)``;
* a bit-flipping simulation written here with ``np.random.default_rng`` (no other package module).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.stats import binom, chi2

from sufficientdp._errors import DataError, ParameterError
from sufficientdp.estimation.joint import (
    MAX_BOOTSTRAP,
    JointEstimate,
    _apply_per_bit,
    _round_to_total,
    _simulate_histogram,
    apply_channel,
    apply_inverse_channel,
    joint_frequencies,
)

# ----------------------------------------------------------------------------------------------------------------
# Independent oracles
# ----------------------------------------------------------------------------------------------------------------


def popcount(a: np.ndarray | int) -> np.ndarray:
    a = np.asarray(a, dtype=np.int64)
    out = np.zeros(a.shape, dtype=np.int64)
    while np.any(a):
        out += a & 1
        a = a >> 1
    return out


def hamming(bits: int) -> np.ndarray:
    idx = np.arange(1 << bits)
    return popcount(idx[:, None] ^ idx[None, :])


def dense_channel(bits: int, q: float) -> np.ndarray:
    """A[s, x] = P[report s | vector x] = q**d p**(L-d) (seed 001 §1.3)."""
    d = hamming(bits)
    return q**d * (1.0 - q) ** (bits - d)


def exact_variance(f: np.ndarray, q: float, k: int) -> np.ndarray:
    """Closed form Var f_hat_v = (sum_u f_u α**(L-d) β**d - f_v) / k (see the module docstring)."""
    bits = int(np.log2(f.size))
    p = 1.0 - q
    beta = p * q / (p - q) ** 2
    alpha = 1.0 + beta
    d = hamming(bits)
    return ((alpha ** (bits - d) * beta**d) @ f - f) / k


def simulate_histogram(rng: np.random.Generator, people: np.ndarray, q: float, k: int, bits: int) -> np.ndarray:
    """Each of the k reports of every person flips each bit j (bit j of the index) independently w.p. q."""
    idx = np.repeat(people, k)
    for j in range(bits):
        idx = idx ^ ((rng.random(idx.size) < q).astype(np.int64) << j)
    return np.bincount(idx, minlength=1 << bits)


def kron_all(mats: list[np.ndarray]) -> np.ndarray:
    out = np.ones((1, 1))
    for m in mats:
        out = np.kron(out, m)
    return out


# ----------------------------------------------------------------------------------------------------------------
# Tensor-product channel = dense Kronecker channel
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bits", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("q", [0.01, 0.2, 0.35, 0.45])
def test_tensor_product_matches_dense_kronecker(bits: int, q: float) -> None:
    rng = np.random.default_rng(1000 * bits + int(100 * q))
    p = 1.0 - q
    c = np.array([[p, q], [q, p]])
    c_inv = np.linalg.inv(c)
    dense = dense_channel(bits, q)
    np.testing.assert_allclose(kron_all([c] * bits), dense, rtol=1e-14, atol=0)  # oracle sanity
    dense_inv = np.linalg.inv(dense)
    kron_inv = kron_all([c_inv] * bits)
    cond = (1.0 / (p - q)) ** bits  # ||A^-1||: amplification of rounding error
    for _ in range(3):
        h = rng.normal(size=1 << bits) * 100
        got = apply_inverse_channel(h, q, bits)
        scale = np.abs(h).sum() * cond
        np.testing.assert_allclose(got, kron_inv @ h, rtol=0, atol=1e-13 * scale)
        np.testing.assert_allclose(got, dense_inv @ h, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(apply_channel(h, q, bits), dense @ h, rtol=0, atol=1e-13 * np.abs(h).sum())


@pytest.mark.parametrize("bits", [1, 2, 3, 5])
def test_per_bit_matrices_follow_lsb_first_convention(bits: int) -> None:
    """Matrix j acts on bit j of the index, i.e. the operator is np.kron(M[L-1], ..., M[0])."""
    rng = np.random.default_rng(7 + bits)
    mats = [rng.normal(size=(2, 2)) for _ in range(bits)]
    x = rng.normal(size=1 << bits)
    expected = kron_all(mats[::-1]) @ x  # np.kron's first factor is the most significant index digit
    np.testing.assert_allclose(_apply_per_bit(x, mats), expected, rtol=1e-12, atol=1e-12)
    # On a C-order reshape to (2,)*L, bit 0 is the LAST axis.
    only_bit0 = [mats[0]] + [np.eye(2)] * (bits - 1)
    along_last_axis = np.einsum("ij,...j->...i", mats[0], x.reshape((2,) * bits)).ravel()
    np.testing.assert_allclose(_apply_per_bit(x, only_bit0), along_last_axis, rtol=1e-12, atol=1e-12)


def test_index_convention_hand_built() -> None:
    """One person with vector (bit0, bit1, bit2) = (1, 0, 0): index 1, label "100" (seed 001 §1.3's v_2)."""
    q, p = 0.25, 0.75  # exact in binary, and so is C^-1 = [[1.5, -0.5], [-0.5, 1.5]]
    vector = np.array([1, 0, 0])
    index = int(vector @ (1 << np.arange(3)))
    assert index == 1
    f = np.zeros(8)
    f[index] = 1.0
    probs = apply_channel(f, q, 3)
    expected = {0b001: p**3, 0b000: q * p**2, 0b011: q * p**2, 0b101: q * p**2,
                0b010: q**2 * p, 0b100: q**2 * p, 0b111: q**2 * p, 0b110: q**3}
    assert probs.tolist() == [expected[s] for s in range(8)]
    # Inverse of the exact expected histogram gives back the person (all values exact in binary floating point).
    assert apply_inverse_channel(probs, q, 3).tolist() == f.tolist()

    est = joint_frequencies(np.array([0, 40, 0, 1, 0, 1, 0, 0]), q=0.01)
    assert est.top(1)[0][0] == 1
    assert est.label(1) == "100" and est.label(6) == "011" and est.label(0) == "000" and est.label(7) == "111"
    df = est.to_pandas()
    assert list(df.index) == ["000", "100", "010", "110", "001", "101", "011", "111"]
    assert df.index.name == "vector"
    assert df.loc["100", "estimate"] == est.estimate[1]


@settings(max_examples=60, deadline=None)
@given(
    bits=st.integers(1, 8),
    q=st.floats(0.005, 0.45),
    seed=st.integers(0, 2**32 - 1),
)
def test_round_trip(bits: int, q: float, seed: int) -> None:
    x = np.random.default_rng(seed).normal(size=1 << bits)
    cond = (1.0 / (1.0 - 2.0 * q)) ** bits
    atol = 1e-13 * cond * np.abs(x).sum()
    np.testing.assert_allclose(apply_inverse_channel(apply_channel(x, q, bits), q, bits), x, rtol=0, atol=atol)
    np.testing.assert_allclose(apply_channel(apply_inverse_channel(x, q, bits), q, bits), x, rtol=0, atol=atol)
    # The channel is stochastic: it preserves totals.
    assert apply_channel(x, q, bits).sum() == pytest.approx(x.sum(), abs=1e-12 * np.abs(x).sum())


def test_large_bits_single_person_closed_form() -> None:
    """L = 20 without any dense matrix: A^-1 e_x has entries (p/(p-q))**(L-d) (-q/(p-q))**d."""
    bits, q = 20, 0.3
    p = 1.0 - q
    x = 0b1011_0000_1111_0000_0101
    h = np.zeros(1 << bits)
    h[x] = 1.0
    got = apply_inverse_channel(h, q, bits)
    for v in [0, x, x ^ 1, x ^ (1 << 19), (1 << bits) - 1, 12345]:
        d = int(popcount(v ^ x))
        assert got[v] == pytest.approx((p / (p - q)) ** (bits - d) * (-q / (p - q)) ** d, rel=1e-9)


# ----------------------------------------------------------------------------------------------------------------
# Exact unbiasedness and exact variance by enumeration
# ----------------------------------------------------------------------------------------------------------------

ENUMERATION_CASES = [
    # (bits, people's vectors, k, q)
    (1, [0, 1, 1], 2, Fraction(1, 4)),
    (1, [1, 1, 1, 0], 1, Fraction(1, 5)),
    (2, [0, 3], 2, Fraction(1, 4)),
    (2, [1, 2, 2], 1, Fraction(3, 10)),
    (2, [0, 1, 3], 2, Fraction(1, 8)),
]


@pytest.mark.parametrize(("bits", "people", "k", "q"), ENUMERATION_CASES)
def test_exact_mean_and_variance_by_enumeration(bits: int, people: list[int], k: int, q: Fraction) -> None:
    p = 1 - q
    n_cells = 1 << bits
    d = hamming(bits)
    channel = [[q ** int(d[s, x]) * p ** int(bits - d[s, x]) for x in range(n_cells)] for s in range(n_cells)]
    # B = (C^-1)^{⊗L}: B[v, s] = prod_j C^-1[v_j, s_j], C^-1 = [[p, -q], [-q, p]] / (p - q).
    c_inv = [[p / (p - q), -q / (p - q)], [-q / (p - q), p / (p - q)]]

    def b(v: int, s: int) -> Fraction:
        out = Fraction(1)
        for j in range(bits):
            out *= c_inv[(v >> j) & 1][(s >> j) & 1]
        return out

    binv = [[b(v, s) for s in range(n_cells)] for v in range(n_cells)]
    f = [Fraction(people.count(v)) for v in range(n_cells)]

    # Distribution of h: enumerate every outcome of the k*N independent reports.
    sources = [x for x in people for _ in range(k)]
    dist: dict[tuple[int, ...], Fraction] = {}
    for outcome in itertools.product(range(n_cells), repeat=len(sources)):
        prob = Fraction(1)
        for s, x in zip(outcome, sources):
            prob *= channel[s][x]
        h = tuple(outcome.count(s) for s in range(n_cells))
        dist[h] = dist.get(h, Fraction(0)) + prob
    assert sum(dist.values()) == 1

    mean = [Fraction(0)] * n_cells
    second = [Fraction(0)] * n_cells
    mean_plugin_var = [Fraction(0)] * n_cells
    for h, prob in dist.items():
        fhat = [sum(binv[v][s] * h[s] for s in range(n_cells)) / k for v in range(n_cells)]
        plugin = [
            (sum(binv[v][s] ** 2 * h[s] for s in range(n_cells)) - k * fhat[v]) / k**2 for v in range(n_cells)
        ]
        for v in range(n_cells):
            mean[v] += prob * fhat[v]
            second[v] += prob * fhat[v] ** 2
            mean_plugin_var[v] += prob * plugin[v]
        # The code path agrees with the exact estimator on this outcome.
        got = joint_frequencies(np.array(h), q=float(q), reports=k)
        np.testing.assert_allclose(got.estimate, [float(x) for x in fhat], rtol=0, atol=1e-12)
        np.testing.assert_allclose(got.std_error**2, [max(0.0, float(x)) for x in plugin], rtol=0, atol=1e-11)
        assert got.population == len(people)

    variance = [second[v] - mean[v] ** 2 for v in range(n_cells)]
    # 1. Unbiased, exactly.
    assert mean == f
    # 2. Variance = ((B∘B) E[h] - k f) / k**2, exactly.
    expected_h = [k * sum(channel[s][x] * f[x] for x in range(n_cells)) for s in range(n_cells)]
    formula = [
        (sum(binv[v][s] ** 2 * expected_h[s] for s in range(n_cells)) - k * f[v]) / k**2 for v in range(n_cells)
    ]
    assert variance == formula
    # 3. ... = the Hamming closed form (sum_u f_u α**(L-d) β**d - f_v) / k.
    beta = p * q / (p - q) ** 2
    alpha = 1 + beta
    closed = [
        (sum(f[u] * alpha ** int(bits - d[u, v]) * beta ** int(d[u, v]) for u in range(n_cells)) - f[v]) / k
        for v in range(n_cells)
    ]
    assert variance == closed
    # 4. The plug-in variance (before the floor at 0) is itself unbiased.
    assert mean_plugin_var == variance
    # 5. L = 1: seed 001 §4 / §6, sd = sqrt(N p q / k) / (p - q) for both cells.
    if bits == 1:
        assert variance == [len(people) * p * q / (k * (p - q) ** 2)] * 2


def test_plugin_variance_is_floored_at_zero() -> None:
    # h = e_0, q = 1/4, L = 2, k = 1: plug-in var of cell 3 is B[3,0]**2 - B[3,0] = 1/16 - 1/4 < 0 -> se 0.
    est = joint_frequencies([1, 0, 0, 0], q=0.25)
    assert est.estimate[3] == 0.25
    assert est.std_error[3] == 0.0
    assert np.all(np.isfinite(est.std_error)) and np.all(est.std_error >= 0)


# ----------------------------------------------------------------------------------------------------------------
# Seeded simulation: unbiasedness, variance, coverage
# ----------------------------------------------------------------------------------------------------------------

TRUTH = np.array([6000, 3000, 2500, 1500, 1200, 1000, 900, 800, 700, 600, 500, 400, 300, 300, 300, 0])
REPLICATIONS = 800


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 3])
def test_simulation_unbiased_and_covers(k: int) -> None:
    bits, q = 4, 0.2
    assert TRUTH.sum() == 20000 and TRUTH.size == 1 << bits
    people = np.repeat(np.arange(1 << bits), TRUTH)
    rng = np.random.default_rng(20240 + k)
    estimates = np.empty((REPLICATIONS, 1 << bits))
    variances = np.empty_like(estimates)
    covered = np.zeros(1 << bits, dtype=np.int64)
    for r in range(REPLICATIONS):
        h = simulate_histogram(rng, people, q, k, bits)
        est = joint_frequencies(h, q=q, reports=k, confidence_level=0.95)
        assert est.population == 20000 and est.reports == k
        # clipped to [0, N], widened only to hold an estimate outside it
        assert np.all((np.minimum(0.0, est.estimate) == np.minimum(est.lower, 0.0)) & (est.lower <= est.estimate)
                      & (est.estimate <= est.upper) & (est.upper == np.maximum(np.minimum(est.upper, 20000),
                                                                              est.estimate)))
        estimates[r] = est.estimate
        variances[r] = est.std_error**2
        covered += (est.lower <= TRUTH) & (TRUTH <= est.upper)

    sigma2 = exact_variance(TRUTH.astype(float), q, k)
    # Mean within 5 standard errors of the truth in every cell: the mean of R iid (nearly normal) estimates;
    # P(|Z| > 5) = 5.7e-7 per cell, < 1e-5 over the 16 cells x 2 values of k.
    z = (estimates.mean(axis=0) - TRUTH) / np.sqrt(sigma2 / REPLICATIONS)
    assert np.all(np.abs(z) < 5), z
    # Spread matches the exact variance: s^2 / sigma^2 ~ chi2(R-1); two-sided 1e-7 per cell.
    stat = (REPLICATIONS - 1) * estimates.var(axis=0, ddof=1) / sigma2
    assert np.all(stat > chi2.ppf(1e-7, REPLICATIONS - 1)) and np.all(stat < chi2.isf(1e-7, REPLICATIONS - 1))
    # The plug-in variance is unbiased (the floor at 0 never binds here): its replication mean is within 5
    # empirical standard errors of sigma^2 (P < 1e-5 overall, as above).
    assert np.all(variances > 0)
    se_of_mean = variances.std(axis=0, ddof=1) / np.sqrt(REPLICATIONS)
    assert np.all(np.abs(variances.mean(axis=0) - sigma2) < 5 * se_of_mean)
    # Coverage: per cell, the number of covering replications is Binomial(R, c) if the normal approximation
    # holds. Clipping to [0, N] cannot change whether a truth strictly inside (0, N) is covered, so c = 0.95 there;
    # for a truth of 0 it turns intervals lying wholly below 0 into [0, 0], which covers 0, so only the lower tail
    # can miss and c = 1 - 0.05/2 = 0.975 (the empty cell of TRUTH). Two-sided binomial tail 1e-7 per cell -> a
    # correct implementation fails with probability < 32 * 2e-7 < 1e-5 (plus the normal-approximation error,
    # which is far inside the [90.5%, 98.5%] window for c = 0.95 and R = 800).
    nominal = np.where(TRUTH == 0, 0.975, 0.95)
    lo, hi = binom.ppf(1e-7, REPLICATIONS, nominal), binom.isf(1e-7, REPLICATIONS, nominal)
    assert np.all((covered >= lo) & (covered <= hi)), (covered / REPLICATIONS, lo, hi)


# ----------------------------------------------------------------------------------------------------------------
# Maximum likelihood (method="em")
# ----------------------------------------------------------------------------------------------------------------


def log_likelihood(f: np.ndarray, h: np.ndarray, q: float) -> float:
    """sum_s h_s log (A f / sum f)_s with A the dense Hamming channel (multinomial coefficient dropped)."""
    bits = int(np.log2(h.size))
    return float(h @ np.log(dense_channel(bits, q) @ (f / f.sum())))


def brute_force_mle(h: np.ndarray, q: float) -> tuple[np.ndarray, float]:
    """Independent MLE: SLSQP on the simplex with the dense channel, from 8 starts; (pi, log-likelihood)."""
    bits = int(np.log2(h.size))
    a = dense_channel(bits, q)
    hh = np.asarray(h, dtype=float)

    def neg(pi: np.ndarray) -> tuple[float, np.ndarray]:
        m = np.maximum(a @ pi, 1e-300)
        return -float(hh @ np.log(m)), -(a.T @ (hh / m))

    best: tuple[np.ndarray, float] | None = None
    rng = np.random.default_rng(99)
    for start in [np.full(h.size, 1.0 / h.size)] + [rng.dirichlet(np.ones(h.size)) for _ in range(7)]:
        res = minimize(neg, start, jac=True, method="SLSQP", bounds=[(0.0, 1.0)] * h.size,
                       constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0, "jac": lambda p: np.ones_like(p)}],
                       options={"ftol": 1e-15, "maxiter": 2000})
        pi = np.clip(res.x, 0.0, None)
        pi /= pi.sum()
        ll = log_likelihood(pi, hh, q)
        if best is None or ll > best[1]:
            best = (pi, ll)
    assert best is not None
    return best


MLE_CASES = [
    # (bits, people per vector, k, q, seed): interior, boundary, sparse, k > 1
    (2, [60, 25, 10, 5], 1, 0.1, 1),
    (2, [80, 0, 0, 20], 2, 0.25, 2),
    (3, [50, 0, 30, 5, 0, 0, 10, 5], 2, 0.25, 3),
    (3, [200, 100, 0, 0, 0, 0, 0, 1], 1, 0.3, 4),
    (4, [300, 150, 40, 10] + [0] * 11 + [5], 1, 0.2, 5),
    (4, list(range(16)), 3, 0.15, 6),
]


@pytest.mark.slow
@pytest.mark.parametrize(("bits", "people", "k", "q", "seed"), MLE_CASES)
@pytest.mark.parametrize("solver", ["lbfgs", "em"])
def test_mle_matches_brute_force_and_kkt(bits: int, people: list[int], k: int, q: float, seed: int,
                                         solver: str) -> None:
    truth = np.array(people)
    h = simulate_histogram(np.random.default_rng(seed), np.repeat(np.arange(1 << bits), truth), q, k, bits)
    n_people = int(truth.sum())
    est = joint_frequencies(h, q=q, reports=k, method="em", solver=solver, tol=1e-9, max_iter=200_000)
    assert est.converged is True
    assert np.all(est.estimate >= 0) and est.estimate.sum() == pytest.approx(n_people, rel=1e-12)
    pi_bf, ll_bf = brute_force_mle(h, q)
    ll = log_likelihood(est.estimate, h, q)
    assert est.log_likelihood == pytest.approx(ll, rel=1e-12, abs=1e-9)
    # No better than the true maximum (SLSQP reaches it to ~1e-9 here), and within tol (+ SLSQP's error) of it.
    assert ll <= ll_bf + 1e-7
    assert ll >= ll_bf - 1e-6
    # The certified bound holds.
    assert ll_bf - ll <= est.gap_bound + 1e-7
    # A pi is unique on the cells with h_s > 0 (strict concavity of log), so the fitted report distributions agree.
    a = dense_channel(bits, q)
    np.testing.assert_allclose((a @ est.estimate / n_people)[h > 0], (a @ pi_bf)[h > 0], rtol=2e-3, atol=1e-6)
    # KKT certificate of the constrained maximum: g_v = (A^T (h / A pi))_v / n equals 1 on the support and is
    # <= 1 elsewhere (the Lagrange multiplier of sum pi = 1 is n).
    g = a.T @ (h / (a @ (est.estimate / n_people))) / h.sum()
    assert np.all(g <= 1 + 1e-5)
    np.testing.assert_allclose(g[est.estimate > 1e-3 * n_people], 1.0, atol=1e-5)


@pytest.mark.parametrize(("h0", "h1", "q"), [(70, 30, 0.2), (95, 5, 0.2), (2, 98, 0.1), (50, 50, 0.3),
                                             (100, 0, 0.25), (0, 7, 0.45)])
def test_mle_closed_form_one_bit(h0: int, h1: int, q: float) -> None:
    """L = 1: l(pi) = h0 log(p - (p-q) pi) + h1 log(q + (p-q) pi) with pi the share of 1s is concave in pi with
    stationary point pi = (h1/n - q)/(p - q) (the inverse estimate), so the MLE is that point clipped to [0, 1]."""
    n = h0 + h1
    p = 1 - q
    closed = min(1.0, max(0.0, (h1 / n - q) / (p - q)))
    for solver in ("lbfgs", "em"):
        est = joint_frequencies([h0, h1], q=q, method="em", solver=solver, tol=1e-12, max_iter=100_000)
        assert est.converged is True
        assert est.estimate[1] == pytest.approx(n * closed, abs=1e-4 * n)
        assert est.estimate.sum() == pytest.approx(n, rel=1e-12)


def test_mle_equals_inverse_when_interior_and_is_close_to_truth() -> None:
    bits, q, k = 4, 0.05, 1
    truth = TRUTH.copy()
    truth[0] -= 300
    truth[-1] = 300  # every cell populated, so the inverse estimate is positive and is the MLE
    rng = np.random.default_rng(5)
    h = simulate_histogram(rng, np.repeat(np.arange(16), truth), q, k, bits)
    inv = joint_frequencies(h, q=q, reports=k)
    assert np.all(inv.estimate > 0)
    fast = joint_frequencies(h, q=q, reports=k, method="em")
    assert fast.solver == "closed-form" and fast.iterations == 0 and fast.converged is True
    assert fast.status.startswith("closed form")
    np.testing.assert_allclose(fast.estimate, inv.estimate, rtol=1e-12, atol=1e-9)
    assert fast.gap_bound is not None and fast.gap_bound < 1e-6
    em = joint_frequencies(h, q=q, reports=k, method="em", solver="em", tol=1e-9, max_iter=100_000)
    assert em.converged is True and em.iterations is not None and 0 < em.iterations < 100_000
    np.testing.assert_allclose(em.estimate, inv.estimate, rtol=0, atol=1e-3)
    # Close to the truth: within 5 exact standard deviations per cell (P < 1e-5 for a correct implementation).
    sigma = np.sqrt(exact_variance(truth.astype(float), q, k))
    assert np.all(np.abs(fast.estimate - truth) < 5 * sigma)


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["lbfgs", "em"])
def test_log_likelihood_never_decreases_and_bound_holds(solver: str) -> None:
    bits, q, k = 3, 0.25, 2
    truth = np.array([50, 0, 30, 5, 0, 0, 10, 5])
    h = simulate_histogram(np.random.default_rng(3), np.repeat(np.arange(8), truth), q, k, bits)
    n = int(truth.sum())
    _, ll_max = brute_force_mle(h, q)
    previous = log_likelihood(np.full(8, n / 8), h, q)  # the uniform start
    for m in range(1, 16):
        est = joint_frequencies(h, q=q, reports=k, method="em", solver=solver, max_iter=m, tol=1e-12)
        assert est.iterations == m and est.converged is False
        assert est.status.startswith(f"NOT CONVERGED after {m} iterations ({solver}; max_iter reached)")
        assert np.all(est.estimate >= 0) and est.estimate.sum() == pytest.approx(n, rel=1e-12)
        current = log_likelihood(est.estimate, h, q)
        assert current >= previous - 1e-10 * abs(previous)
        assert ll_max - current <= est.gap_bound + 1e-9  # certified for every iterate, not only at the end
        previous = current


def test_not_converged_is_loud() -> None:
    h = simulate_histogram(np.random.default_rng(4), np.repeat(np.arange(16), [300, 150, 40, 10] + [0] * 12),
                           0.3, 1, 4)
    est = joint_frequencies(h, q=0.3, method="em", max_iter=2)
    assert est.converged is False and est.iterations == 2 and est.max_iter == 2
    assert est.criterion is not None and est.criterion > est.tol  # type: ignore[operator]
    assert est.status.startswith("NOT CONVERGED")
    d = est.to_dict()
    assert d["converged"] is False and d["status"].startswith("NOT CONVERGED") and d["max_iter"] == 2
    json.dumps(d, allow_nan=False)


@pytest.mark.slow
def test_l16_sparse_population_converges_quickly() -> None:
    """The issue's regime in miniature: L = 16, a few thousand people on few vectors; plain EM needs thousands of
    iterations here, the default solver a few hundred (an upper bound that leaves a wide margin)."""
    bits, q = 16, 0.2
    rng = np.random.default_rng(16)
    vectors = rng.choice(1 << bits, 20, replace=False)
    weights = np.array([1.0] * 15 + [6.0, 7.0, 8.0, 9.0, 10.0])
    people = rng.choice(vectors, 5000, p=weights / weights.sum())
    h = simulate_histogram(rng, people, q, 1, bits)
    est = joint_frequencies(h, q=q, method="em")
    assert est.converged is True and est.iterations is not None and est.iterations < 1000
    top = {i for i, _ in est.top(5)}
    assert top == set(vectors[15:].tolist())  # the five most held vectors (about 545 to 909 people; others 91)


# ----------------------------------------------------------------------------------------------------------------
# Parametric bootstrap
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_simulated_histogram_mean_and_variance_exact() -> None:
    """_simulate_histogram against the exact moments of a sum of independent one-hot reports:
    E h_s = k sum_v c_v A[s, v], Var h_s = k sum_v c_v A[s, v] (1 - A[s, v]) (seed 001 §1.3 channel)."""
    bits, q, k = 2, 0.3, 3
    counts = np.array([5, 0, 2, 1])
    a = dense_channel(bits, q)
    mean = k * a @ counts
    var = k * (a * (1 - a)) @ counts
    rng = np.random.default_rng(8)
    draws = np.array([_simulate_histogram(counts, q, bits, k, rng) for _ in range(20_000)])
    assert np.all(draws.sum(axis=1) == k * counts.sum())
    # Mean within 5 standard errors (P < 6e-7 per cell); variance within the chi-square 1e-7 tails (near normal).
    r = draws.shape[0]
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * np.sqrt(var / r))
    stat = (r - 1) * draws.var(axis=0, ddof=1) / var
    assert np.all(stat > chi2.ppf(1e-7, r - 1) * 0.97) and np.all(stat < chi2.isf(1e-7, r - 1) * 1.03)


@settings(max_examples=40, deadline=None)
@given(bits=st.integers(1, 5), total=st.integers(1, 500), seed=st.integers(0, 2**32 - 1))
def test_round_to_total(bits: int, total: int, seed: int) -> None:
    f = np.random.default_rng(seed).dirichlet(np.ones(1 << bits) * 0.3) * total
    c = _round_to_total(f, total)
    assert c.sum() == total and np.all(c >= 0) and np.all(np.abs(c - f) < 1)


def test_bootstrap_std_error_matches_exact_variance_when_interior() -> None:
    """Large interior case: the MLE is the inverse estimate, whose exact variance has a closed form; the bootstrap
    standard deviation at B = 400 estimates it (chi-square tails 1e-7, widened 10% for the plug-in of f_hat)."""
    bits, q, k = 2, 0.1, 2
    truth = np.array([4000, 3000, 2000, 1000])
    rng = np.random.default_rng(12)
    h = simulate_histogram(rng, np.repeat(np.arange(4), truth), q, k, bits)
    b = 400
    est = joint_frequencies(h, q=q, reports=k, method="em", bootstrap=b, rng=rng)
    assert est.solver == "closed-form" and est.interval == "parametric-bootstrap" and est.bootstrap == b
    assert est.bootstrap_unconverged == 0
    sigma2 = exact_variance(np.round(est.estimate), q, k)
    stat = (b - 1) * est.std_error**2 / sigma2
    assert np.all(stat > 0.9 * chi2.ppf(1e-7, b - 1)) and np.all(stat < 1.1 * chi2.isf(1e-7, b - 1))
    assert np.all((est.lower <= est.estimate) & (est.estimate <= est.upper))


@pytest.mark.slow
def test_bootstrap_coverage_seeded_simulation() -> None:
    """Coverage of the 95% bootstrap intervals, L = 2, k = 2, q = 0.2, a cell nobody holds and a small cell (so
    fits end at the boundary). R = 100 data sets, B = 100 replicates each. A long run of the same design
    (R = 1000, another seed; docs/joint_estimation.md) gave coverage 0.940 to 0.968 per cell; if the true coverage
    is >= 0.90 the count of covering data sets is below binom.ppf(1e-6, 100, 0.9) = 73 with probability < 1e-6
    per cell. The percentile or the basic interval alone fails this (checked: 0 of 100 at the empty cell, or 65
    of 100 at the small one)."""
    bits, q, k = 2, 0.2, 2
    truth = np.array([600, 0, 200, 20])
    rng = np.random.default_rng(2024)
    covered = np.zeros(4, dtype=np.int64)
    for _ in range(100):
        h = _simulate_histogram(truth, q, bits, k, rng)
        est = joint_frequencies(h, q=q, reports=k, method="em", bootstrap=100, rng=rng)
        assert np.all((0 <= est.lower) & (est.lower <= est.upper) & (est.upper <= 820))
        covered += (est.lower <= truth) & (truth <= est.upper)
    assert np.all(covered >= binom.ppf(1e-6, 100, 0.9)), covered


def test_bootstrap_reproducible_and_progress() -> None:
    h = simulate_histogram(np.random.default_rng(6), np.repeat(np.arange(8), [50, 0, 30, 5, 0, 0, 10, 5]), 0.25, 1,
                           3)
    calls: list[tuple[int, int]] = []
    one = joint_frequencies(h, q=0.25, method="em", bootstrap=7, rng=np.random.default_rng(1), max_iter=500,
                            progress=lambda d, t: calls.append((d, t)))
    two = joint_frequencies(h, q=0.25, method="em", bootstrap=7, rng=np.random.default_rng(1), max_iter=500)
    three = joint_frequencies(h, q=0.25, method="em", bootstrap=7, rng=np.random.default_rng(2), max_iter=500)
    np.testing.assert_array_equal(one.lower, two.lower)
    np.testing.assert_array_equal(one.upper, two.upper)
    assert not np.array_equal(one.upper, three.upper)
    np.testing.assert_array_equal(one.estimate, three.estimate)  # the fit itself is deterministic
    # Progress: the fit's iterations against max_iter, its end, then the replicates against B.
    assert one.iterations is not None
    fit_calls = [(i, 500) for i in range(1, one.iterations + 1)] + [(500, 500)]
    assert calls == fit_calls + [(b, 7) for b in range(8)]
    d = one.to_dict()
    assert d["interval"] == "parametric-bootstrap" and d["bootstrap"] == 7 and d["bootstrap_unconverged"] == 0
    assert None not in d["lower"] and None not in d["std_error"]
    json.dumps(d, allow_nan=False)


def test_bootstrap_counts_unconverged_refits() -> None:
    h = simulate_histogram(np.random.default_rng(6), np.repeat(np.arange(8), [50, 0, 30, 5, 0, 0, 10, 5]), 0.25, 1,
                           3)
    est = joint_frequencies(h, q=0.25, method="em", bootstrap=5, rng=np.random.default_rng(3), max_iter=1)
    assert est.converged is False and est.bootstrap_unconverged == 5
    assert "WARNING: 5 of 5 bootstrap refits did not converge" in est.status


# ----------------------------------------------------------------------------------------------------------------
# Result object
# ----------------------------------------------------------------------------------------------------------------


def test_result_object() -> None:
    est = joint_frequencies(np.array([3, 4, 1, 2]), q=0.25, confidence_level=0.9)
    assert isinstance(est, JointEstimate)
    settings_ = (est.method, est.bits, est.population, est.reports, est.q, est.confidence_level)
    assert settings_ == ("inverse", 2, 10, 1, 0.25, 0.9)
    assert est.iterations is None and est.converged is None
    # Worked by hand: (C^-1)⊗(C^-1) h with C^-1 = [[1.5, -0.5], [-0.5, 1.5]] for q = 1/4.
    assert est.estimate.tolist() == [3.5, 5.5, -0.5, 1.5]
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.q = 0.1  # type: ignore[misc]
    with pytest.raises(ValueError):
        est.estimate[0] = 1.0  # read-only array
    assert est.top(2) == [(1, 5.5), (0, 3.5)]
    assert [i for i, _ in est.top(10)] == [1, 0, 3, 2]
    tie = joint_frequencies(np.array([1, 1, 1, 1]), q=0.25)
    assert [i for i, _ in tie.top(4)] == [0, 1, 2, 3]  # ties broken by index
    d = est.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert d["estimate"] == [3.5, 5.5, -0.5, 1.5] and d["method"] == "inverse" and d["population"] == 10
    df = est.to_pandas()
    assert list(df.columns) == ["estimate", "lower", "upper", "std_error"]
    assert list(df.index) == ["00", "10", "01", "11"]
    np.testing.assert_array_equal(df["upper"].to_numpy(), est.upper)


def test_to_pandas_without_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    est = joint_frequencies(np.array([3, 4, 1, 2]), q=0.25)
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` raise ImportError
    with pytest.raises(ImportError, match=r"pip install 'sufficientdp\[pandas\]'"):
        est.to_pandas()


def test_inputs_accepted() -> None:
    base = joint_frequencies(np.array([3, 4, 1, 2]), q=0.25, reports=2)
    for h in ([3, 4, 1, 2], np.array([3.0, 4.0, 1.0, 2.0]), np.array([3, 4, 1, 2], dtype=np.uint8)):
        np.testing.assert_array_equal(joint_frequencies(h, q=0.25, reports=2.0).estimate, base.estimate)
    assert base.population == 5


# ----------------------------------------------------------------------------------------------------------------
# Bad inputs
# ----------------------------------------------------------------------------------------------------------------

GOOD = np.array([3, 4, 1, 2])


@pytest.mark.parametrize(
    ("histogram", "match"),
    [
        (np.zeros((2, 2), dtype=int), "histogram must be 1-D"),
        (np.array([1, 2, 3]), "histogram length"),
        (np.array([5]), "histogram length"),
        (np.array([], dtype=int), "histogram length"),
        (np.zeros(1 << 21, dtype=np.int8), "L = 21"),
        (np.array([1, -1, 0, 3]), "non-negative integer"),
        (np.array([1.5, 1, 0, 3]), "non-negative integer"),
        (np.array([np.nan, 1, 0, 3]), "non-negative integer"),
        (np.array([np.inf, 1, 0, 3]), "non-negative integer"),
        (np.array(["1", "2", "3", "4"]), "histogram"),
        (np.array([True, False]), "histogram"),
        (np.array([1 + 0j, 1]), "histogram"),
        (np.zeros(4, dtype=int), "at least one report"),
    ],
)
def test_bad_histogram(histogram: np.ndarray, match: str) -> None:
    with pytest.raises(DataError, match=match):
        joint_frequencies(histogram, q=0.2)


def test_total_not_divisible_by_reports() -> None:
    with pytest.raises(DataError, match=r"histogram total 10 is not a multiple of reports=3"):
        joint_frequencies(GOOD, q=0.2, reports=3)
    with pytest.raises(DataError, match="reports"):
        joint_frequencies(GOOD, q=0.2, reports=4, method="em")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"q": 0.0}, r"q must be in \(0, 0.5\); got 0.0"),
        ({"q": 0.5}, r"q must be in \(0, 0.5\)"),
        ({"q": 0.7}, r"q must be in \(0, 0.5\); got 0.7"),
        ({"q": -0.1}, "q must"),
        ({"q": float("nan")}, "q must"),
        ({"q": "0.1"}, "q must"),
        ({"q": None}, "q must"),
        ({"q": 0.2, "reports": 0}, "reports must be an integer >= 1"),
        ({"q": 0.2, "reports": 1.5}, "reports must"),
        ({"q": 0.2, "reports": True}, "reports must"),
        ({"q": 0.2, "confidence_level": 0.0}, r"level must be in \(0, 1\)"),
        ({"q": 0.2, "confidence_level": 1.0}, "level must"),
        ({"q": 0.2, "confidence_level": float("nan")}, "level must"),
        ({"q": 0.2, "method": "mle"}, "method must be one of 'inverse', 'em'; got 'mle'"),
        ({"q": 0.2, "method": None}, "method must"),
        ({"q": 0.2, "max_iter": 0}, "max_iter must"),
        ({"q": 0.2, "max_iter": 2.5}, "max_iter must"),
        ({"q": 0.2, "tol": 0.0}, "tol must"),
        ({"q": 0.2, "tol": -1e-6}, "tol must"),
        ({"q": 0.2, "tol": float("inf")}, "tol must"),
        ({"q": 0.2, "tol": float("nan")}, "tol must"),
        ({"q": 0.2, "method": "em", "solver": "newton"}, "solver must be one of 'lbfgs', 'em'; got 'newton'"),
        ({"q": 0.2, "method": "em", "solver": None}, "solver must"),
        ({"q": 0.2, "method": "em", "bootstrap": -1}, "bootstrap must be an integer >= 0"),
        ({"q": 0.2, "method": "em", "bootstrap": MAX_BOOTSTRAP + 1}, f"bootstrap must .* <= {MAX_BOOTSTRAP}"),
        ({"q": 0.2, "method": "em", "bootstrap": 2.5}, "bootstrap must"),
        ({"q": 0.2, "method": "em", "bootstrap": True}, "bootstrap must"),
        ({"q": 0.2, "bootstrap": 10}, "bootstrap applies to method='em' only"),
        ({"q": 0.2, "method": "em", "bootstrap": 2, "rng": 7}, "rng must be a numpy.random.Generator or None"),
        ({"q": 0.2, "method": "em", "progress": "bar"}, "progress must be a callable"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match) as info:
        joint_frequencies(GOOD, **kwargs)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


def test_bootstrap_memory_limit() -> None:
    """bootstrap * 2**L <= 2**26: at L = 20 at most 64 replicates (checked before any work)."""
    h = np.zeros(1 << 20, dtype=np.int64)
    h[0] = 10
    with pytest.raises(ParameterError, match=r"bootstrap must be <= 2\*\*26 / 2\*\*L = 64 at L = 20.*got 65"):
        joint_frequencies(h, q=0.2, method="em", bootstrap=65)


@pytest.mark.parametrize("func,name", [(apply_channel, "f"), (apply_inverse_channel, "h")])
def test_channel_functions_bad_inputs(func: object, name: str) -> None:
    with pytest.raises(ParameterError, match="bits must"):
        func([1.0, 2.0], 0.2, 0)  # type: ignore[operator]
    with pytest.raises(ParameterError, match="bits must"):
        func([1.0, 2.0], 0.2, 21)  # type: ignore[operator]
    with pytest.raises(ParameterError, match="q must"):
        func([1.0, 2.0], 0.5, 1)  # type: ignore[operator]
    with pytest.raises(DataError, match=f"{name} must be a 1-D array of length 2\\*\\*bits = 4"):
        func([1.0, 2.0], 0.2, 2)  # type: ignore[operator]
    with pytest.raises(DataError, match=f"{name} must be finite"):
        func([1.0, np.nan], 0.2, 1)  # type: ignore[operator]
    with pytest.raises(DataError, match=name):
        func(["a", "b"], 0.2, 1)  # type: ignore[operator]


def test_result_methods_bad_inputs() -> None:
    est = joint_frequencies(GOOD, q=0.2)
    with pytest.raises(ParameterError, match="n must"):
        est.top(0)
    with pytest.raises(ParameterError, match="index must"):
        est.label(4)
    with pytest.raises(ParameterError, match="index must"):
        est.label(-1)


def test_inverse_interval_holds_a_negative_estimate_everywhere() -> None:
    """gap 14 of issue 11: a negative unbiased estimate is inside its cell's interval in lower/upper, cell_interval
    and to_dict alike (never a clipped [0, 0]); the other ends stay clipped to [0, N]."""
    from sufficientdp.estimation.joint import joint_frequencies

    # L = 1, q = 0.25, N = 8 people, every report a 0: the inverse estimate of the ones is (0 - 8 q)/(1 - 2q) = -4
    est = joint_frequencies([8, 0], q=0.25, confidence_level=0.95)
    assert est.estimate[1] == pytest.approx(-4.0)
    assert est.lower[1] == est.estimate[1] and 0.0 <= est.upper[1] <= 8.0
    iv = est.cell_interval(1)
    assert (iv.lower, iv.estimate, iv.upper) == (est.lower[1], est.estimate[1], est.upper[1])
    d = est.to_dict()
    assert d["lower"][1] == est.lower[1] and d["upper"][1] == est.upper[1]
    # and the zeros' estimate (8 * 0.75 / 0.5 = 12) above N widens the upper end to it
    assert est.estimate[0] == pytest.approx(12.0) and est.upper[0] == est.estimate[0] and 0.0 <= est.lower[0] <= 8.0
