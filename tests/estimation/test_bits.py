"""Per-bit estimator (seed 001 §4, §6): exact unbiasedness and variance, simulated CI coverage, bad input."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from sufficientdp import DataError, ParameterError, estimate_bits, tally


def test_exact_unbiasedness_and_variance_by_enumeration():
    """E[d_hat] = d and Var[d_hat] = N p q /(k (p-q)^2), summing over the exact law of M (two binomials)."""
    q = Fraction(1, 5)
    p = 1 - q
    for n_people, d, k in [(5, 2, 1), (4, 4, 2), (6, 0, 3)]:
        n1, n0 = d * k, (n_people - d) * k  # report-bits from people with bit 1 / bit 0
        # law of M = Bin(n1, p) + Bin(n0, q), exactly
        pm1 = [math.comb(n1, i) * p**i * (1 - p) ** (n1 - i) for i in range(n1 + 1)]
        pm0 = [math.comb(n0, i) * q**i * (1 - q) ** (n0 - i) for i in range(n0 + 1)]
        law = {}
        for i, a in enumerate(pm1):
            for j, b in enumerate(pm0):
                law[i + j] = law.get(i + j, 0) + a * b
        mean = sum(pr * (Fraction(m, k) - q * n_people) / (p - q) for m, pr in law.items())
        second = sum(pr * ((Fraction(m, k) - q * n_people) / (p - q)) ** 2 for m, pr in law.items())
        assert mean == d
        assert second - mean**2 == n_people * p * q / (k * (p - q) ** 2)
        # and the library's numbers agree with the exact ones on every outcome
        for m in law:
            est = estimate_bits([m], q=float(q), reports=k, population=n_people)
            assert est.estimate[0] == pytest.approx(float((Fraction(m, k) - q * n_people) / (p - q)), rel=1e-12)
            assert est.std_error[0] == pytest.approx(math.sqrt(float(n_people * p * q / k)) / float(p - q))


@pytest.mark.slow
def test_simulated_unbiasedness_and_coverage():
    """Simulate M_j directly from its law; mean within 5 SE and 95% coverage within 6 binomial sd.

    False-failure probability: < 1e-6 for the mean checks (5 sigma, 8 bits) and < 1e-8 for coverage (6 sigma,
    given the normal CI's coverage at N = 20000 is within 0.3% of nominal).
    """
    rng = np.random.default_rng(20261122)
    n_people, k, q = 20_000, 3, 0.2
    d = np.array([0, 10, 200, 5000, 10000, 15000, 19990, 20000])
    reps = 4000
    m = rng.binomial(k * d, 1 - q, size=(reps, d.size)) + rng.binomial(k * (n_people - d), q, size=(reps, d.size))
    estimates = np.empty((reps, d.size))
    covered = np.zeros(d.size, dtype=int)
    for r in range(reps):
        e = estimate_bits(m[r], q=q, reports=k, population=n_people, confidence_level=0.95)
        estimates[r] = e.estimate
        covered += (e.lower <= d) & (d <= e.upper)
    se = math.sqrt(n_people * q * (1 - q) / k) / (1 - 2 * q)
    assert np.all(np.abs(estimates.mean(axis=0) - d) < 5 * se / math.sqrt(reps))
    assert np.allclose(estimates.std(axis=0), se, rtol=0.1)
    sd_cov = math.sqrt(reps * 0.95 * 0.05)
    interior = (d > 5 * se) & (d < n_people - 5 * se)  # clipping only raises coverage near 0 and N
    assert np.all(np.abs(covered[interior] - 0.95 * reps) < 6 * sd_cov)
    assert np.all(covered[~interior] >= 0.95 * reps - 6 * sd_cov)


def test_plugin_standard_error_is_never_smaller():
    est_exact = estimate_bits([100, 500, 900], q=0.1, population=1000)
    est_plug = estimate_bits([100, 500, 900], q=0.1, population=1000, std_error="plugin")
    assert np.all(est_plug.std_error >= est_exact.std_error - 1e-12)
    assert est_plug.std_error[0] == pytest.approx(est_exact.std_error[0])  # r = q gives p q exactly


def test_from_tally_and_to_dict():
    t = tally([[1, 0], [1, 1], [0, 0], [1, 0]])
    est = estimate_bits(t, q=0.25, reports=2)
    assert est.population == 2
    d = est.to_dict()
    assert [set(x) >= {"estimate", "lower", "upper", "std_error"} for x in d["estimates"]] == [True, True]
    assert all(0 <= x["lower"] <= x["upper"] <= 2 for x in d["estimates"])
    df = est.to_pandas()
    assert list(df.columns) == ["count", "estimate", "lower", "upper", "std_error", "outside"]


def test_interval_width_matches_normal_quantile():
    est = estimate_bits([5000], q=0.25, population=10000, confidence_level=0.9)
    z = 1.6448536269514722
    assert est.upper[0] - est.estimate[0] == pytest.approx(z * est.std_error[0])


@pytest.mark.parametrize(
    "kwargs, exc, fragment",
    [
        ({"q": 0.5}, ParameterError, "q must be in (0, 0.5); got 0.5"),
        ({"confidence_level": 1.0}, ParameterError, "confidence_level must be in (0, 1); got 1.0"),
        ({"reports": 0}, ParameterError, "reports must be an integer >= 1 and <= 1000; got 0"),
        ({"population": None}, ParameterError, "population must be given"),
        ({"std_error": "bootstrap"}, ParameterError, "std_error must be one of exact, plugin"),
        ({"data": [-1, 2]}, DataError, "counts must be in [0, 10]"),
        ({"data": [11]}, DataError, "counts must be in [0, 10]"),
        ({"data": [[1, 2]]}, DataError, "counts must be a non-empty 1-D array"),
        ({"data": [1.5]}, DataError, "non-negative integers"),
    ],
)
def test_invalid(kwargs, exc, fragment):
    args = {"data": [3, 4], "q": 0.2, "population": 10}
    args.update(kwargs)
    data = args.pop("data")
    with pytest.raises(exc) as info:
        estimate_bits(data, **args)
    assert fragment in str(info.value)


def test_tally_not_divisible_by_reports():
    t = tally([[1], [0], [1]])
    with pytest.raises(DataError, match="not a multiple of reports=2"):
        estimate_bits(t, q=0.1, reports=2)


def test_interval_coverage_under_the_exact_law():
    # The product's 95% interval, evaluated at every possible count M (one "bit" per value of M), covers the true d
    # with probability within 0.5% of 95% under the exact law of M: Bin(d, p) + Bin(N - d, q), N = 20000.
    n_people, q, d = 20000, 0.2, 4000
    law = np.convolve(binom.pmf(np.arange(d + 1), d, 1 - q), binom.pmf(np.arange(n_people - d + 1), n_people - d, q))
    est = estimate_bits(np.arange(n_people + 1), q=q, population=n_people, confidence_level=0.95)
    cover = law[(est.lower <= d) & (d <= est.upper)].sum()
    assert abs(cover - 0.95) < 0.005


def test_results_are_immutable_and_out_of_range_bits_are_flagged():
    # N = 1000, q = 0.25: M = 100 gives d_hat = (100 - 250) / 0.5 = -300, sd = sqrt(1000 * 3/16) / 0.5 = 27.4, so the
    # whole 95% interval [-353.7, -246.3] lies below 0 (a k or q mismatch): clipped to [0, 0], widened to hold the
    # estimate ([-300, 0]: the negative estimate is not hidden) and flagged.
    est = estimate_bits([100, 300], q=0.25, population=1000)
    assert est.estimate.tolist() == [-300.0, 100.0]
    assert est.lower[0] == -300.0 and est.upper[0] == 0.0
    assert est.outside.tolist() == [True, False]
    assert len(est.warnings) == 1 and est.warnings[0].startswith("bit 0: estimate -300")
    assert est.to_dict()["estimates"][0]["outside"] is True
    for name in ("estimate", "lower", "upper", "std_error", "counts", "outside"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(est, name)[0] = 1


def test_tail_result_details_are_read_only():
    from sufficientdp.ratio.result import TailResult

    notes = ["homogeneous configuration only"]
    res = TailResult(eta=0.1, eta_lower=None, eta_upper=0.1, method="x", kind="bound", epsilon=1.0, q=0.2, bits=1,
                     population=10, details={"notes": notes})
    notes.clear()  # the caller's list is copied, not shared
    assert res.details["notes"] == ("homogeneous configuration only",)
    with pytest.raises(TypeError):
        res.details["notes"] = ()  # type: ignore[index]
    with pytest.raises(AttributeError):
        res.details["notes"].append("x")  # type: ignore[attr-defined]
    assert res.to_dict()["details"] == {"notes": ["homogeneous configuration only"]}
    import pickle

    assert pickle.loads(pickle.dumps(res)) == res


def test_confidence_level_is_the_name_and_level_its_former_alias():
    from sufficientdp.estimation import joint_frequencies

    new = estimate_bits([300, 700], q=0.25, population=1000, confidence_level=0.9)
    with pytest.warns(DeprecationWarning, match="level= is deprecated; use confidence_level="):
        old = estimate_bits([300, 700], q=0.25, population=1000, level=0.9)
    assert new.confidence_level == old.confidence_level == 0.9 and new.lower.tolist() == old.lower.tolist()
    assert estimate_bits([300, 700], q=0.25, population=1000).confidence_level == 0.95  # the default
    with pytest.warns(DeprecationWarning, match=r"BitEstimates.level is deprecated; use .confidence_level"):
        assert new.level == 0.9  # the former attribute name still reads
    assert new.to_dict()["level"] == 0.9  # the JSON key is unchanged (CLI --json format)
    with pytest.raises(ParameterError, match="^give confidence_level or its former name level, not both"):
        estimate_bits([300, 700], q=0.25, population=1000, confidence_level=0.9, level=0.9)
    with pytest.raises(ParameterError, match="^confidence_level must be in"):
        estimate_bits([300, 700], q=0.25, population=1000, confidence_level=1.0)
    with pytest.warns(DeprecationWarning), pytest.raises(ParameterError, match="^level must be in"):
        estimate_bits([300, 700], q=0.25, population=1000, level=0.0)
    h = np.array([3, 4, 1, 2])
    with pytest.warns(DeprecationWarning):
        old_joint = joint_frequencies(h, q=0.25, level=0.8)
    assert joint_frequencies(h, q=0.25, confidence_level=0.8).upper.tolist() == old_joint.upper.tolist()
    with pytest.raises(ParameterError, match="^confidence_level must be in"):
        joint_frequencies(h, q=0.25, confidence_level=-0.1)
