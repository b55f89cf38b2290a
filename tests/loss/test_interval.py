"""The Interval(lower, estimate, upper) type (issue 11) and the results that carry one."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import sufficientdp as sdp
from sufficientdp import ParameterError
from sufficientdp.accounting.discrete_gaussian import discrete_gaussian_log_normalizer
from sufficientdp.accounting.rounds import homogeneous_rounds_tail
from sufficientdp.accounting.shuffled import shuffled_rr_worst_bracket
from sufficientdp.estimation import estimate_bits, joint_frequencies
from sufficientdp.loss.result import Interval, Kind
from sufficientdp.ratio.analysis import privacy_tail

# --------------------------------------------------------------------------------------------------- the type


def test_interval_is_exported_at_the_top_level():
    assert sdp.Interval is Interval
    assert "Interval" in sdp.__all__


def test_interval_fields_and_to_dict():
    iv = Interval(0.1, 0.2, 0.3, confidence_level=0.95, kind="estimate")
    assert (iv.lower, iv.estimate, iv.upper, iv.confidence_level) == (0.1, 0.2, 0.3, 0.95)
    assert iv.kind is Kind.ESTIMATE
    assert iv.to_dict() == {"lower": 0.1, "estimate": 0.2, "upper": 0.3, "confidence_level": 0.95,
                            "kind": "estimate"}
    assert type(iv.to_dict()["kind"]) is str
    bare = Interval(None, 1.0, None)
    assert bare.to_dict() == {"lower": None, "estimate": 1.0, "upper": None, "confidence_level": None,
                              "kind": None}


def test_interval_converts_numpy_scalars_and_keeps_infinite_ends():
    iv = Interval(np.float32(0.5), np.int64(1), math.inf)
    assert type(iv.lower) is float and type(iv.estimate) is float
    assert (iv.lower, iv.estimate, iv.upper) == (0.5, 1.0, math.inf)


def test_interval_degenerate_is_allowed():
    assert Interval(0.25, 0.25, 0.25).to_dict()["lower"] == 0.25


def test_interval_is_immutable():
    iv = Interval(0.0, 0.5, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        iv.lower = 0.1  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        iv.extra = 1  # type: ignore[attr-defined]
    assert hash(iv) == hash(Interval(0.0, 0.5, 1.0))


@pytest.mark.parametrize(("args", "kwargs", "field"), [
    ((0.3, 0.2, 0.4), {}, "lower"),
    ((0.1, 0.2, 0.15), {}, "upper"),
    ((None, math.nan, None), {}, "estimate"),
    ((math.nan, 0.2, None), {}, "lower"),
    ((None, 0.2, math.nan), {}, "upper"),
    ((None, None, None), {}, "estimate"),
    ((None, True, None), {}, "estimate"),
    (("0.1", 0.2, None), {}, "lower"),
    ((0.1, 0.2, 0.3), {"confidence_level": 1.0}, "confidence_level"),
    ((0.1, 0.2, 0.3), {"confidence_level": 0.0}, "confidence_level"),
    ((0.1, 0.2, 0.3), {"confidence_level": math.nan}, "confidence_level"),
    ((0.1, 0.2, 0.3), {"kind": "guess"}, "kind"),
])
def test_interval_rejects_bad_input_naming_the_field(args, kwargs, field):
    with pytest.raises(ParameterError, match=rf"^{field} must"):
        Interval(*args, **kwargs)


def test_interval_optional_fields_are_keyword_only():
    with pytest.raises(TypeError):
        Interval(0.1, 0.2, 0.3, 0.95)  # type: ignore[misc]


# --------------------------------------------------------------------------------------------------- results


def _same(interval: Interval, lower, estimate, upper, confidence, kind):
    assert (interval.lower, interval.estimate, interval.upper) == (lower, estimate, upper)
    assert interval.confidence_level == confidence
    assert interval.kind == kind


@pytest.mark.parametrize(("method", "reports", "direction"), [
    ("proven", 1, "both"), ("proven", 2, "both"), ("exact", 1, "both"), ("exact", 1, "reverse"),
    ("homogeneous", 1, "both"), ("homogeneous", 2, "forward"), ("homogeneous", 2, "reverse"),
    ("mc", 1, "both"), ("mc", 2, "forward"),
])
def test_tail_result_intervals_equal_its_fields(method, reports, direction):
    kw = {"rng": np.random.default_rng(7), "samples": 2000} if method == "mc" else {}
    r = privacy_tail(q=0.25, bits=3, population=20, epsilon=1.0, reports=reports, method=method,
                     direction=direction, **kw)
    _same(r.eta_interval, r.eta_lower, r.eta, r.eta_upper, r.confidence_level, r.kind)
    if r.delta is None:
        assert r.delta_interval is None
    else:
        _same(r.delta_interval, r.delta_lower, r.delta, r.delta_upper, r.confidence_level, r.kind)


def test_rounds_tail_result_intervals_equal_its_fields():
    r = homogeneous_rounds_tail(q=0.25, bits=1, population=4, epsilon=1.0, rounds=3)
    _same(r.eta_interval, r.eta_lower, r.eta, r.eta_upper, None, "exact")
    _same(r.delta_interval, r.delta_lower, r.delta, r.delta_upper, None, "exact")


def test_bit_estimates_intervals_equal_the_table():
    # N = 100, q = 1/4 (p - q = 1/2), counts 40 and 70: d_hat = (M - 25) / 0.5 = 30 and 90 by hand.
    est = estimate_bits(np.array([40, 70]), q=0.25, population=100, confidence_level=0.9)
    assert est.estimate.tolist() == [30.0, 90.0]
    assert len(est.intervals) == 2
    for j, iv in enumerate(est.intervals):
        assert iv == est.interval(j)
        _same(iv, est.lower[j], est.estimate[j], est.upper[j], 0.9, "estimate")
    with pytest.raises(ParameterError, match="^j must"):
        est.interval(2)


def test_bit_estimate_outside_its_clipped_interval_is_shown_not_hidden():
    # count 10 with N = 100, q = 1/4: d_hat = (10 - 25) / 0.5 = -30 (by hand); the clipped interval is [0, 0]
    # (its whole normal interval -30 +- 1.645 * 8.66 lies below 0), so the interval extends down to -30: one answer
    # in the Interval, the arrays, to_records and to_dict (issue 11: no clipped [0, 0] hiding the estimate).
    est = estimate_bits(np.array([10]), q=0.25, population=100, confidence_level=0.9)
    assert est.estimate[0] == -30.0 and est.lower[0] == -30.0 and est.upper[0] == 0.0 and est.outside[0]
    _same(est.interval(0), -30.0, -30.0, 0.0, 0.9, "estimate")
    rec = est.to_records()[0]
    assert (rec["lower"], rec["estimate"], rec["upper"], rec["outside"]) == (-30.0, -30.0, 0.0, True)
    assert est.to_dict()["estimates"][0] == rec


def test_bit_estimate_above_population_and_negative_inside_its_interval():
    # N = 100, q = 1/4, sd = sqrt(100 * 3/16) / 0.5 = 8.660 (by hand), z(0.9) = 1.645: z sd = 14.25.
    # count 80: d_hat = (80 - 25) / 0.5 = 110 > N: interval [110 - 14.25, 100] widened to [95.75, 110], not flagged
    # (its normal interval reaches below N). count 23: d_hat = -4, interval [0, 10.25] widened to [-4, 10.25].
    est = estimate_bits(np.array([80, 23]), q=0.25, population=100, confidence_level=0.9)
    z_sd = 1.6448536269514722 * math.sqrt(100 * 3 / 16) / 0.5
    assert est.estimate.tolist() == [110.0, -4.0]
    assert est.lower.tolist() == pytest.approx([110.0 - z_sd, -4.0], abs=1e-12)
    assert est.upper.tolist() == pytest.approx([110.0, -4.0 + z_sd], abs=1e-12)
    assert est.outside.tolist() == [False, False]
    for j, rec in enumerate(est.to_records()):
        iv = est.interval(j)
        assert (rec["lower"], rec["estimate"], rec["upper"]) == (iv.lower, iv.estimate, iv.upper)
        assert (rec["lower"], rec["upper"]) == (est.lower[j], est.upper[j])


def test_joint_estimate_cell_intervals():
    h = np.array([30, 20, 25, 25])
    inv = joint_frequencies(h, q=0.25)
    for i in range(4):
        iv = inv.cell_interval(i)
        assert iv.estimate == inv.estimate[i]
        assert iv.lower == min(inv.lower[i], inv.estimate[i]) and iv.upper == max(inv.upper[i], inv.estimate[i])
        assert iv.confidence_level == inv.confidence_level and iv.kind == "estimate"
    em = joint_frequencies(h, q=0.25, method="em")  # no bootstrap: the interval is unknown (NaN), so None
    assert np.isnan(em.lower).all()
    iv = em.cell_interval(0)
    assert iv.lower is None and iv.upper is None and iv.estimate == em.estimate[0]
    with pytest.raises(ParameterError, match="^index must"):
        em.cell_interval(4)


@pytest.mark.parametrize("full_scan_max", [1_000_000, 20])
def test_shuffled_bracket_intervals_report_the_rigorous_upper_end(full_scan_max):
    b = shuffled_rr_worst_bracket(population=100, q=0.2, epsilon=0.3, full_scan_max=full_scan_max)
    _same(b.delta_interval, b.delta_lower, b.delta_upper, b.delta_upper, None, b.kind)
    _same(b.eta_interval, b.eta_lower, b.eta_upper, b.eta_upper, None, b.kind)


def test_normalizer_bracket_interval():
    for s2 in (0.5, 4.0):
        b = discrete_gaussian_log_normalizer(s2)
        _same(b.interval, b.lower, b.log_z, b.upper, None, "exact")


def test_structured_results_intervals_equal_their_fields():
    from sufficientdp.ratio.structured import StructuredPair, structured_search, structured_tail

    t = structured_tail(StructuredPair.build(2, {0: 97, 1: 2}, 3, 0), 0.1, 3.0)
    _same(t.eta_interval, t.eta_lower, t.eta, t.eta_upper, None, "bracket")
    r = structured_search(1, 20, 0.2, 1.0, time_budget=10)
    _same(r.eta_interval, r.eta_lower, r.eta, r.eta_upper, None, r.kind)
