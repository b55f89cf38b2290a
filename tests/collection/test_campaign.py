"""Tests of sufficientdp.collection.campaign: the campaign configuration, its certified q, release estimates."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

from sufficientdp._errors import DataError, ParameterError
from sufficientdp.aggregation import tally
from sufficientdp.calibration import calibrate, local_q
from sufficientdp.collection.campaign import (
    Campaign,
    TargetNotMetError,
    estimate_release,
    plan_campaign,
    proven_eta,
)
from sufficientdp.ratio.analysis import privacy_tail
from sufficientdp.ratio.proven import proven_tail

BASE = {"name": "survey", "bits": 4, "epsilon": 1.0, "crowd_size": 300}


def test_defaults_follow_the_contract() -> None:
    c = Campaign(**BASE)
    assert (c.eta, c.reports_per_person, c.q, c.precision, c.rate_limit) == (0.001, 1, None, 32, "tokens")
    assert c.to_dict() == {**BASE, "eta": 0.001, "reports_per_person": 1, "q": None, "precision": 32,
                           "rate_limit": "tokens", "family": None, "memo_q": None}


def test_campaign_is_frozen_and_threshold_is_k_times_n_min() -> None:
    c = Campaign(**BASE, reports_per_person=3)
    assert c.release_threshold == 900
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.bits = 5  # type: ignore[misc]


def test_integral_floats_are_normalized() -> None:
    c = Campaign(**{**BASE, "bits": 4.0, "crowd_size": 300.0})
    assert type(c.bits) is int and type(c.crowd_size) is int


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", ""), ("name", 7), ("name", "x" * 201), ("name", "a\nb"),
        ("bits", 0), ("bits", 287), ("bits", 1025), ("bits", 2.5), ("bits", True), ("bits", "4"),
        ("epsilon", 0.0), ("epsilon", -1.0), ("epsilon", math.nan), ("epsilon", math.inf), ("epsilon", "1"),
        ("eta", 0.0), ("eta", 1.0), ("eta", math.nan),
        ("crowd_size", 1), ("crowd_size", 10**9 + 1), ("crowd_size", None),
        ("reports_per_person", 0), ("reports_per_person", 101),
        ("q", 0.0), ("q", 0.5), ("q", -0.1), ("q", math.nan), ("q", "0.3"),
        ("precision", 1), ("precision", 65),
        ("rate_limit", "captcha"), ("rate_limit", None),
    ],
)
def test_every_field_is_validated(field: str, value: object) -> None:
    with pytest.raises(ParameterError, match=rf"^{field} must"):
        Campaign(**{**BASE, field: value})


def test_bits_stop_where_the_proven_bound_stops() -> None:
    # A campaign of 287 to 1024 bits used to be accepted, and then every calibration job of it failed with
    # invalid_parameter (the all-collections bound evaluates all of {0,1}^L up to L = 286 only).
    assert Campaign(**{**BASE, "bits": 286}).bits == 286
    with pytest.raises(ParameterError, match=r"^bits must be an integer >= 1 and <= 286, the most bits whose q the all-collections bound proves "
                       r"over all of \{0,1\}\^L; got 287$"):
        Campaign(**{**BASE, "bits": 287})
    with pytest.raises(ParameterError, match=r"^bits must be at most 286 "):
        proven_eta(q=0.45, bits=287, population=300, epsilon=1.0)


def test_given_q_is_rounded_up_to_the_dyadic_grid_and_certified() -> None:
    plan = plan_campaign(Campaign(name="t", bits=2, epsilon=1.0, crowd_size=50, q=0.3, eta=0.01, precision=20))
    assert plan.q_numerator == math.ceil(Fraction(0.3) * 2**20)
    assert plan.q == plan.q_numerator / 2**20 >= 0.3
    assert not plan.calibrated
    # The campaign's number is the all-collections bound at the dyadic q (the one calibrate and tail print), and
    # it lies above the exact homogeneous tail (worst over j, both directions), a configuration it covers.
    assert plan.eta_at_q == proven_tail(q=plan.q, bits=2, population=50, epsilon=1.0).eta
    exact = privacy_tail(q=plan.q, bits=2, population=50, epsilon=1.0, method="exact")
    assert exact.eta <= plan.eta_at_q
    d = plan.to_dict()
    assert d["q"] == plan.q and d["q_numerator"] == plan.q_numerator and d["eta_at_q"] == plan.eta_at_q
    assert "every pair of neighbouring collections" in d["guarantee"] and "50 people" in d["guarantee"]


def test_given_q_above_target_is_refused_with_the_numbers() -> None:
    c = Campaign(**BASE, q=0.05)
    with pytest.raises(TargetNotMetError, match=r"proven eta bound of (1|0\.9\d*) at crowd_size 300") as info:
        plan_campaign(c)
    assert info.value.eta == 0.001 and info.value.eta_at_q > 0.9
    # The exact tail at q = 0.05 (L = 4, N = 300) is itself far above the target: the refusal is not an artefact.
    assert privacy_tail(q=0.05, bits=4, population=300, epsilon=1.0, method="exact").eta > 0.5


def test_local_dp_q_has_zero_eta() -> None:
    # At q >= 1/(1 + e^(eps/(kL))) every ratio is <= (p/q)^(kL) <= e^eps (seed 001 eq. 4.2): eta = 0 surely.
    q = local_q(3, 1.0, 2) + 1e-6
    assert proven_eta(q=q, bits=3, population=20, epsilon=1.0, reports=2) == 0.0
    with pytest.warns(DeprecationWarning, match="crowd_size= is deprecated; use population="):
        assert proven_eta(q=q, bits=3, crowd_size=20, epsilon=1.0, reports=2) == 0.0
    with pytest.warns(DeprecationWarning, match="reports_per_person= is deprecated; use reports="):
        assert proven_eta(q=q, bits=3, population=20, epsilon=1.0, reports_per_person=2) == 0.0
    with pytest.raises(ParameterError, match="^give population or its former name crowd_size, not both"):
        proven_eta(q=q, bits=3, population=20, crowd_size=20, epsilon=1.0)


@pytest.mark.slow
def test_calibrated_q_meets_target_and_is_not_much_larger_than_needed() -> None:
    c = Campaign(name="t", bits=2, epsilon=1.0, crowd_size=100, eta=0.01, rate_limit="none")
    plan = plan_campaign(c)
    assert plan.calibrated and plan.eta_at_q <= 0.01
    cal = calibrate(bits=2, population=100, epsilon=1.0, eta=0.01)
    assert cal.method == "proven" and cal.q <= plan.q <= cal.q + 2**-32
    # Not wastefully large: 5% less noise fails the target under the same bound.
    assert proven_tail(q=0.95 * plan.q, bits=2, population=100, epsilon=1.0).eta > 0.01


def test_plan_campaign_rejects_non_campaign() -> None:
    with pytest.raises(ParameterError, match="campaign must be a Campaign"):
        plan_campaign({"bits": 4})  # type: ignore[arg-type]


def test_q_rounding_to_one_half_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError, match="rounds to 1/2"):
        plan_campaign(Campaign(**BASE, q=0.49, precision=2))


@pytest.mark.parametrize(
    "kwargs",
    [{"q": 0.0}, {"q": 0.5}, {"bits": 0}, {"population": 0}, {"population": None}, {"epsilon": -1.0},
     {"reports": 0}],
)
def test_proven_eta_invalid_inputs(kwargs: dict[str, float]) -> None:
    args = {"q": 0.3, "bits": 2, "population": 50, "epsilon": 1.0, "reports": 1, **kwargs}
    name = next(iter(kwargs))
    with pytest.raises(ParameterError, match=f"^{name} must"):
        proven_eta(**args)  # type: ignore[arg-type]


def test_estimate_release_matches_hand_computation() -> None:
    # 8 reports, L = 2, q = 1/4 (p - q = 1/2): d_hat = (M - q n) / (p - q) (seed 001 §4).
    reports = [[1, 0]] * 5 + [[0, 1]] * 1 + [[1, 1]] * 2
    r = estimate_release(tally(reports), q=0.25)
    assert [e["count"] for e in r.estimates] == [7, 3]
    assert [e["estimate"] for e in r.estimates] == [(7 - 2) / 0.5, (3 - 2) / 0.5]
    se = math.sqrt(8 * 0.75 * 0.25) / 0.5
    assert all(math.isclose(e["std_error"], se) for e in r.estimates)
    assert r.reports == 8 and r.population == 8.0 and r.confidence_level == 0.95
    assert r.to_dict()["people"] == 8.0 and r.to_dict()["level"] == 0.95  # the stored format is unchanged
    with pytest.warns(DeprecationWarning, match=r"ReleaseEstimates.people is deprecated; use .population"):
        assert r.people == 8.0
    with pytest.warns(DeprecationWarning, match=r"ReleaseEstimates.level is deprecated; use .confidence_level"):
        assert r.level == 0.95
    # Joint histogram (L <= 12): the inverse estimator preserves the total (columns of C^-1 sum to 1).
    assert r.histogram is not None and r.histogram["counts"] == (0, 5, 1, 2)  # read-only: tuples
    assert math.isclose(sum(r.histogram["estimate"]), 8.0)


def test_estimate_release_with_incomplete_k() -> None:
    # n = 5 reports with k = 2: d_hat = (M - q n) / (k (p - q)), sd = sqrt(n p q) / (k (p - q)).
    reports = [[1], [1], [0], [1], [1]]
    r = estimate_release(tally(reports), q=0.25, reports_per_person=2)
    e = r.estimates[0]
    assert math.isclose(e["estimate"], (4 - 0.25 * 5) / (2 * 0.5))
    assert math.isclose(e["std_error"], math.sqrt(5 * 0.75 * 0.25) / (2 * 0.5))
    # The estimate is unbiased and unclipped (2.75 > 2.5 here); the interval, clipped to [0, n / k], is widened to
    # hold it (BitEstimates: one interval everywhere, an estimate outside [0, N] is not hidden).
    assert r.population == 2.5 and 0.0 <= e["lower"] <= 2.5 < e["upper"] == e["estimate"]
    assert r.histogram is not None and math.isclose(sum(r.histogram["estimate"]), 2.5)


def test_estimate_release_divisible_k_agrees_with_per_report_formula() -> None:
    rng = np.random.default_rng(3)
    reports = rng.integers(0, 2, size=(40, 3))
    r = estimate_release(tally(reports), q=0.2, reports_per_person=4)
    m = reports.sum(axis=0)
    for j, e in enumerate(r.estimates):
        assert math.isclose(e["estimate"], (m[j] - 0.2 * 40) / (4 * 0.6))
        assert math.isclose(e["std_error"], math.sqrt(40 * 0.8 * 0.2) / (4 * 0.6))


def test_no_histogram_above_twelve_bits() -> None:
    r = estimate_release(tally(np.zeros((3, 13), dtype=np.uint8), full_histogram=True), q=0.25)
    assert r.histogram is None and len(r.estimates) == 13
    assert r.to_dict()["histogram"] is None


@pytest.mark.parametrize("k, n", [(1, 300), (2, 300), (3, 301)])
def test_joint_over_chosen_bits_equals_the_full_estimate_summed_over_the_others(k: int, n: int) -> None:
    """Independent route: the inverse estimator is linear and factorizes over bits, so the joint estimate of the
    chosen bits must equal the full 2**L joint estimate summed over the other bits, and a single chosen bit must
    reproduce the per-bit estimate (seed 001 §4)."""
    rng = np.random.default_rng(k)
    reports = rng.integers(0, 2, size=(n, 4))
    r = estimate_release(tally(reports), q=0.2, reports_per_person=k, joint=[3, 1])
    assert r.joint is not None and r.histogram is not None
    assert r.joint["bits"] == (3, 1) and r.joint["vectors"] == ("00", "10", "01", "11")
    full = np.array(r.histogram["estimate"])
    for cell in range(4):
        b3, b1 = cell & 1, (cell >> 1) & 1
        mask = [((i >> 3) & 1) == b3 and ((i >> 1) & 1) == b1 for i in range(16)]
        assert math.isclose(r.joint["estimate"][cell], full[mask].sum(), rel_tol=1e-9, abs_tol=1e-9)
        assert r.joint["counts"][cell] == int(((reports[:, 3] == b3) & (reports[:, 1] == b1)).sum())
    one = estimate_release(tally(reports), q=0.2, reports_per_person=k, joint=[2])
    assert one.joint is not None
    assert math.isclose(one.joint["estimate"][1], one.estimates[2]["estimate"], rel_tol=1e-9)
    assert math.isclose(one.joint["std_error"][1], one.estimates[2]["std_error"], rel_tol=1e-9)
    from sufficientdp._frozen import thaw

    assert r.to_dict()["joint"] == thaw(r.joint) and estimate_release(tally(reports), q=0.2).joint is None
    assert isinstance(r.to_dict()["joint"]["estimate"], list)  # plain JSON again
    with pytest.raises(TypeError):  # the result is immutable (issue 11): read-only mappings of tuples
        r.joint["bits"] = [0]  # type: ignore[index]
    with pytest.raises(TypeError):
        r.estimates[0]["estimate"] = 0.0  # type: ignore[index]


def test_joint_refusals() -> None:
    t = tally([[1, 0, 1]])
    for joint, message in (([3], "joint bit"), ([0, 0], "distinct"), ([], "1 to 6"), (list(range(7)), "joint")):
        with pytest.raises(ParameterError, match=message):
            estimate_release(t, q=0.25, joint=joint)
    with pytest.raises(ParameterError, match="L <= 12"):
        estimate_release(tally(np.zeros((3, 13), dtype=np.uint8), full_histogram=True), q=0.25, joint=[0])


def test_estimate_release_invalid_inputs() -> None:
    t = tally([[1, 0]])
    with pytest.raises(ParameterError, match="tally must be a Tally"):
        estimate_release([[1, 0]], q=0.25)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="q must be in"):
        estimate_release(t, q=0.5)
    with pytest.raises(ParameterError, match="reports_per_person"):
        estimate_release(t, q=0.25, reports_per_person=0)
    with pytest.raises(ParameterError, match="^confidence_level must be in"):
        estimate_release(t, q=0.25, confidence_level=1.0)
    with pytest.warns(DeprecationWarning, match="level= is deprecated"), pytest.raises(ParameterError,
                                                                                       match="^level must be in"):
        estimate_release(t, q=0.25, level=1.0)
    with pytest.raises(DataError, match="no reports"):
        estimate_release(tally(np.zeros((0, 2), dtype=np.uint8)), q=0.25)
