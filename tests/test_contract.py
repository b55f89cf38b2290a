"""The API's error contract under fire (issue 13): every out-of-domain input raises ParameterError/DataError (both
ValueError) naming the parameter, never another exception and never a value outside the documented range.

Each reproduction from the issue is pinned, and hypothesis throws hostile values (NaN, infinities, huge and tiny
numbers, negative numbers, booleans, strings, None) at the public functions. Expensive functions are fuzzed only
with at least one invalid argument, so each call must fail fast, before any work.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sufficientdp as sdp
from sufficientdp import CalibrationError, DataError, ParameterError
from sufficientdp.ratio import ratio_moments

HOSTILE = st.one_of(
    st.just(math.nan), st.just(math.inf), st.just(-math.inf), st.just(0), st.just(-1), st.just(0.0),
    st.just(1e308), st.just(5e-324), st.just(2**63), st.just(10**30), st.just(True), st.just("1"), st.just(None),
    st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-(10**40), max_value=10**40),
)


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: sdp.calibrate(bits=2, population=100, epsilon=1e6), "epsilon must be in"),
    (lambda: sdp.calibrate(bits=2, population=100, epsilon=1e308, method="paper-sigma"), "epsilon must be in"),
    (lambda: sdp.calibrate(bits=2, population=100, epsilon=1e-17), "too small"),
    (lambda: sdp.randomize(np.zeros((2, 3), dtype=np.uint8), q=0.25, reports=2**63), "reports must be"),
    (lambda: sdp.Tally(bits=2, reports=3, bit_counts=1.5, weight_histogram=np.zeros(3, dtype=np.int64)),
     "bit_counts must be"),
    (lambda: ratio_moments(q=math.nan, bits=2, n=10), "q must be"),
    (lambda: ratio_moments(q=0.7, bits=2, n=10), "q must be"),
    (lambda: ratio_moments(q=0.2, bits=2, n=math.nan), "n must be"),
    (lambda: sdp.local_q(1, 5e-324), "too small"),
    (lambda: sdp.privacy_tail(q=0.3, bits=2, population=100, epsilon=1.0, reports=10**6), "reports must be"),
    (lambda: sdp.privacy_tail(q=0.3, bits=10**6, population=100, epsilon=1.0), "bits must be"),
    (lambda: sdp.proven_tail(q=0.3, bits=2, population=10**30, epsilon=1.0), "population must be"),
    (lambda: sdp.sigma_per_sqrt_n(0.5), "q must be"),
])
def test_issue_reproductions_raise_a_value_error_naming_the_parameter(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()


def test_local_q_stays_inside_its_range_at_the_extremes():
    q = sdp.local_q(1, 40.0)  # was 0.0
    assert 0.0 < q < 0.5
    assert 0.0 < sdp.calibrate(bits=1, population=100, epsilon=40.0, method="local").q < 0.5  # was ZeroDivisionError


def test_calibration_error_is_a_value_error():
    assert issubclass(CalibrationError, ValueError)


def _only_value_errors(call):
    try:
        call()
    except (ParameterError, DataError, CalibrationError):
        pass


@settings(max_examples=150, deadline=None)
@given(q=HOSTILE, reports=HOSTILE)
def test_fuzz_mechanism_facts(q, reports):
    _only_value_errors(lambda: sdp.sigma_per_sqrt_n(q, reports))
    _only_value_errors(lambda: sdp.RandomizationParams(bits=3, q=q, reports=reports))
    _only_value_errors(lambda: sdp.local_q(3, q, reports))
    _only_value_errors(lambda: ratio_moments(q=q, bits=3, n=reports))
    _only_value_errors(lambda: sdp.PrivacyTarget(epsilon=q, eta=reports))


@settings(max_examples=150, deadline=None)
@given(bits=HOSTILE, population=HOSTILE, epsilon=HOSTILE, eta=HOSTILE)
def test_fuzz_calibrate_and_tails_fail_fast_on_any_invalid_argument(bits, population, epsilon, eta):
    # At least one argument is hostile; replace any that happen to be valid and cheap by an invalid one so every
    # call must be refused before work (a valid draw would start a real calibration).
    valid_bits = isinstance(bits, int) and not isinstance(bits, bool) and 1 <= bits <= 4096
    valid_pop = isinstance(population, int) and not isinstance(population, bool) and 1 <= population <= 10**12
    valid_eps = isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) and 0 < epsilon <= 50
    if valid_bits and valid_pop and valid_eps:
        epsilon = math.nan
    with pytest.raises(ValueError):
        sdp.calibrate(bits=bits, population=population, epsilon=epsilon, eta=0.001)
    with pytest.raises(ValueError):
        sdp.privacy_tail(q=0.3, bits=bits, population=population, epsilon=epsilon)
    with pytest.raises(ValueError):
        sdp.proven_tail(q=0.3, bits=bits, population=population, epsilon=epsilon)
    _only_value_errors(lambda: sdp.calibrate(bits=2, population=50, epsilon=1.0, eta=eta, method="local"))


@settings(max_examples=100, deadline=None)
@given(counts=st.lists(st.one_of(st.integers(-5, 50), st.floats(allow_nan=True)), min_size=0, max_size=4),
       q=HOSTILE, population=HOSTILE, level=HOSTILE)
def test_fuzz_estimate_bits(counts, q, population, level):
    _only_value_errors(lambda: sdp.estimate_bits(counts, q=q, population=population, confidence_level=level))
    _only_value_errors(lambda: sdp.estimate_bits(counts, q=0.25, population=10, confidence_level=0.9))


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.lists(st.one_of(st.integers(-2, 3), st.floats(allow_nan=True)), min_size=1, max_size=3),
                     min_size=0, max_size=4), q=HOSTILE, reports=HOSTILE)
def test_fuzz_randomize_and_tally(rows, q, reports):
    _only_value_errors(lambda: sdp.randomize(rows, q=q, reports=reports))
    _only_value_errors(lambda: sdp.tally(rows))
    _only_value_errors(lambda: sdp.encode_bits(rows))
