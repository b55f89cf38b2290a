"""The public sampler of R(S) (issue 12 item 4) against exact distributions at small N.

Two tests per configuration, both with a stated false-failure probability for a correct sampler:

* DKW (Dvoretzky-Kiefer-Wolfowitz with Massart's constant): for n iid draws from *any* distribution,
  ``P[sup_x |F_n(x) - F(x)| > e] <= 2 exp(-2 n e**2)``. Non-asymptotic and valid for discrete laws. We take
  ``e`` with ``2 exp(-2 n e**2) = 1e-9``.
* Pearson's chi-square on the exact atoms (merged so that every cell expects >= 20 draws), rejected only when the
  statistic exceeds its chi-square quantile at ``1 - 1e-7`` (asymptotic; with >= 20 expected per cell the
  approximation error is far below that level).

So a correct implementation fails this file with probability about 1e-6 at most; the seeds are fixed, so a run is
reproducible.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import chi2

from sufficientdp._errors import ParameterError
from sufficientdp._numerics.compositions import compositions
from sufficientdp.ratio.exact import homogeneous_ratio_distribution
from sufficientdp.ratio.k_reports import log_esp_from_counts
from sufficientdp.ratio.sampling import RatioSample, sample_privacy_ratio

N_DRAWS = 40_000
DKW_FAIL = 1e-9
CHI2_FAIL = 1e-7


def _check_against(log_atoms: np.ndarray, probs: np.ndarray, draws: np.ndarray) -> None:
    order = np.argsort(log_atoms)
    log_atoms, probs = log_atoms[order], probs[order] / probs.sum()
    n = draws.size
    # map each draw to its atom (relative tolerance 1e-9 on R)
    idx = np.searchsorted(log_atoms, draws - 1e-9)
    assert np.all(idx < log_atoms.size)
    assert np.all(np.abs(log_atoms[idx] - draws) <= 1e-9), "a draw is not an atom of the exact distribution"
    counts = np.bincount(idx, minlength=log_atoms.size).astype(float)
    # DKW on the CDF at every atom
    e = math.sqrt(math.log(2 / DKW_FAIL) / (2 * n))
    gap = np.max(np.abs(np.cumsum(counts) / n - np.cumsum(probs)))
    assert gap <= e, (gap, e)
    # chi-square on cells of consecutive atoms with >= 20 expected draws
    cells_obs, cells_exp, acc_o, acc_e = [], [], 0.0, 0.0
    for o, p in zip(counts, probs * n):
        acc_o += o
        acc_e += p
        if acc_e >= 20:
            cells_obs.append(acc_o)
            cells_exp.append(acc_e)
            acc_o = acc_e = 0.0
    cells_obs[-1] += acc_o
    cells_exp[-1] += acc_e
    obs, exp = np.array(cells_obs), np.array(cells_exp)
    assert obs.size >= 3
    stat = float(((obs - exp) ** 2 / exp).sum())
    assert stat <= chi2.ppf(1 - CHI2_FAIL, obs.size - 1), (stat, obs.size)


@pytest.mark.parametrize(("q", "bits", "population", "j"), [
    (0.25, 2, 5, None),
    (0.2, 3, 8, None),
    (0.15, 5, 12, 5),
    (0.3, 4, 10, 2),
])
@pytest.mark.parametrize("outlier_in", ["modified", "original"])
def test_k1_matches_exact_homogeneous_distribution(q: float, bits: int, population: int, j: int | None,
                                                    outlier_in: str) -> None:
    exact = homogeneous_ratio_distribution(q, bits, population, j, outlier_in=outlier_in)
    s = sample_privacy_ratio(q=q, bits=bits, population=population, outlier_bits=j, outlier_in=outlier_in,
                             samples=N_DRAWS, rng=20261126)
    assert s.kind == "estimate" and s.scope == "homogeneous" and s.samples == N_DRAWS
    _check_against(np.asarray(exact.log_ratios), np.asarray(exact.probabilities), s.log_ratios)


@pytest.mark.parametrize(("q", "j", "population", "k"), [(0.25, 2, 4, 2), (0.2, 3, 3, 3)])
def test_k_reports_matches_enumeration(q: float, j: int, population: int, k: int) -> None:
    """k reports: P_m(T) = R(T) * MN(kN, Bin(j, q))(T) with R(T) = e_k(w)/C(kN, k), all T enumerated."""
    n = k * population
    ls = np.arange(j + 1)
    log_a = gammaln(j + 1) - gammaln(ls + 1) - gammaln(j - ls + 1) + ls * math.log(q) + (j - ls) * math.log1p(-q)
    log_w = (j - 2.0 * ls) * (math.log(q) - math.log1p(-q))
    t = compositions(n, j + 1).astype(float)
    log_r = log_esp_from_counts(log_w, t, k) - (gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1))
    log_p = gammaln(n + 1) - gammaln(t + 1).sum(axis=1) + t @ log_a + log_r
    # merge equal ratios
    order = np.argsort(log_r)
    lr, lp = log_r[order], log_p[order]
    keep = np.concatenate([[True], np.diff(lr) > 1e-11])
    groups = np.cumsum(keep) - 1
    atoms = lr[keep]
    probs = np.bincount(groups, weights=np.exp(lp))
    s = sample_privacy_ratio(q=q, bits=j, population=population, reports=k, samples=N_DRAWS, rng=7)
    assert math.isclose(float(probs.sum()), 1.0, rel_tol=1e-9)
    _check_against(atoms, probs, s.log_ratios)


def test_large_n_is_cheap_and_the_tail_is_an_estimate() -> None:
    s = sample_privacy_ratio(q=0.2446, bits=5, population=10**7, samples=2000, rng=3)
    assert s.population == 10**7 and np.all(np.isfinite(s.log_ratios))
    r = s.tail(math.log(2.0))
    assert r.kind == "estimate" and r.scope == "homogeneous" and r.eta_lower <= r.eta <= r.eta_upper
    assert r.eta == s.fraction_above(math.log(2.0))


def test_seeded_and_immutable() -> None:
    a = sample_privacy_ratio(q=0.2, bits=3, population=100, samples=500, rng=11)
    b = sample_privacy_ratio(q=0.2, bits=3, population=100, samples=500, rng=np.random.default_rng(11))
    assert np.array_equal(a.log_ratios, b.log_ratios) and a.seed == 11 and b.seed is None
    assert np.array_equal(a.privacy_loss, a.log_ratios) and np.allclose(np.log(a.ratios), a.log_ratios)
    with pytest.raises(ValueError):
        a.log_ratios[0] = 0.0
    with pytest.raises(AttributeError):
        a.q = 0.3  # type: ignore[misc]
    assert isinstance(a, RatioSample) and a.to_dict()["kind"] == "estimate"


@pytest.mark.parametrize("kwargs", [{"q": 0.5}, {"samples": 0}, {"population": 1}, {"outlier_bits": 4},
                                    {"outlier_in": "both"}, {"rng": "x"}])
def test_refuses_bad_parameters(kwargs: dict[str, object]) -> None:
    base: dict[str, object] = {"q": 0.2, "bits": 3, "population": 10, "samples": 10}
    with pytest.raises(ParameterError):
        sample_privacy_ratio(**{**base, **kwargs})  # type: ignore[arg-type]
