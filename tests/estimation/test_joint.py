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
from scipy.stats import binom, chi2

from sufficientdp._errors import DataError, ParameterError
from sufficientdp.estimation.joint import (
    JointEstimate,
    _apply_per_bit,
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
        est = joint_frequencies(h, q=q, reports=k, level=0.95)
        assert est.population == 20000 and est.reports == k
        assert np.all((0 <= est.lower) & (est.lower <= est.upper) & (est.upper <= 20000))
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
# EM
# ----------------------------------------------------------------------------------------------------------------


def log_likelihood(f: np.ndarray, h: np.ndarray, q: float) -> float:
    """sum_s h_s log (A f)_s with A the dense Hamming channel (constant terms dropped)."""
    bits = int(np.log2(h.size))
    return float(h @ np.log(dense_channel(bits, q) @ f))


def test_em_equals_inverse_when_interior_and_is_close_to_truth() -> None:
    bits, q, k = 4, 0.05, 1
    truth = TRUTH.copy()
    truth[0] -= 300
    truth[-1] = 300  # every cell populated, so the inverse estimate is positive and is the MLE
    rng = np.random.default_rng(5)
    h = simulate_histogram(rng, np.repeat(np.arange(16), truth), q, k, bits)
    inv = joint_frequencies(h, q=q, reports=k)
    em = joint_frequencies(h, q=q, reports=k, method="em", tol=1e-12, max_iter=10_000)
    assert np.all(inv.estimate > 0)
    assert em.converged is True and em.iterations is not None and em.iterations < 10_000
    np.testing.assert_allclose(em.estimate, inv.estimate, rtol=0, atol=1e-6)
    # Close to the truth: within 5 exact standard deviations per cell (P < 1e-5 for a correct implementation).
    sigma = np.sqrt(exact_variance(truth.astype(float), q, k))
    assert np.all(np.abs(em.estimate - truth) < 5 * sigma)
    assert np.all(np.abs(em.estimate - truth) < 0.01 * truth.sum())


@pytest.mark.parametrize("k", [1, 3])
def test_em_boundary_nonnegative_sums_to_n_and_is_a_maximum(k: int) -> None:
    bits, q = 4, 0.2
    truth = np.zeros(16, dtype=np.int64)
    truth[[0, 1, 6, 15]] = [300, 150, 40, 10]  # sparse: the inverse estimate has negative cells
    n = int(truth.sum())
    h = simulate_histogram(np.random.default_rng(11 + k), np.repeat(np.arange(16), truth), q, k, bits)
    inv = joint_frequencies(h, q=q, reports=k)
    assert np.any(inv.estimate < 0)
    em = joint_frequencies(h, q=q, reports=k, method="em", tol=1e-7, max_iter=100_000)
    assert em.converged is True
    assert np.all(em.estimate >= 0)
    assert em.estimate.sum() == pytest.approx(n, rel=1e-12)
    assert em.population == n and em.method == "em"
    # KKT certificate of the constrained maximum: g_v = (A^T (h / A f))_v / k equals 1 where f_v > 0 and is <= 1
    # where f_v = 0 (the Lagrange multiplier of sum f = N is 1).
    dense = dense_channel(bits, q)
    g = dense.T @ (h / (dense @ em.estimate)) / k
    assert np.all(g <= 1 + 1e-4)
    np.testing.assert_allclose(g[em.estimate > 1], 1.0, atol=1e-4)
    # A maximum: no worse than the truth or the clipped, rescaled inverse estimate.
    ll = log_likelihood(em.estimate, h, q)
    clipped = np.maximum(inv.estimate, 0)
    assert ll >= log_likelihood(truth.astype(float), h, q) - 1e-9
    assert ll >= log_likelihood(clipped * n / clipped.sum(), h, q) - 1e-9
    # No intervals for EM.
    assert np.all(np.isnan(em.std_error)) and np.all(np.isnan(em.lower)) and np.all(np.isnan(em.upper))
    d = em.to_dict()
    assert d["std_error"] == [None] * 16 and d["iterations"] == em.iterations and d["converged"] is True
    json.dumps(d, allow_nan=False)


def test_em_log_likelihood_never_decreases() -> None:
    bits, q, k = 3, 0.25, 2
    truth = np.array([50, 0, 30, 5, 0, 0, 10, 5])
    h = simulate_histogram(np.random.default_rng(3), np.repeat(np.arange(8), truth), q, k, bits)
    n = int(truth.sum())
    previous = log_likelihood(np.full(8, n / 8), h, q)  # the uniform start
    for m in range(1, 41):
        em = joint_frequencies(h, q=q, reports=k, method="em", max_iter=m, tol=1e-300)
        assert em.iterations == m and em.converged is False
        assert np.all(em.estimate >= 0) and em.estimate.sum() == pytest.approx(n, rel=1e-12)
        current = log_likelihood(em.estimate, h, q)
        assert current >= previous - 1e-10 * abs(previous)
        previous = current


# ----------------------------------------------------------------------------------------------------------------
# Result object
# ----------------------------------------------------------------------------------------------------------------


def test_result_object() -> None:
    est = joint_frequencies(np.array([3, 4, 1, 2]), q=0.25, level=0.9)
    assert isinstance(est, JointEstimate)
    settings_ = (est.method, est.bits, est.population, est.reports, est.q, est.level)
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
        ({"q": 0.2, "level": 0.0}, r"level must be in \(0, 1\)"),
        ({"q": 0.2, "level": 1.0}, "level must"),
        ({"q": 0.2, "level": float("nan")}, "level must"),
        ({"q": 0.2, "method": "mle"}, "method must be one of 'inverse', 'em'; got 'mle'"),
        ({"q": 0.2, "method": None}, "method must"),
        ({"q": 0.2, "max_iter": 0}, "max_iter must"),
        ({"q": 0.2, "max_iter": 2.5}, "max_iter must"),
        ({"q": 0.2, "tol": 0.0}, "tol must"),
        ({"q": 0.2, "tol": -1e-6}, "tol must"),
        ({"q": 0.2, "tol": float("inf")}, "tol must"),
        ({"q": 0.2, "tol": float("nan")}, "tol must"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match) as info:
        joint_frequencies(GOOD, **kwargs)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


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
