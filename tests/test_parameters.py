"""Parameter objects: domains, immutability, messages naming parameter, value and range."""

import dataclasses
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sufficientdp import ParameterError, PrivacyTarget, RandomizationParams
from sufficientdp.randomization import DyadicProbability


def test_randomization_params_valid_and_frozen():
    p = RandomizationParams(bits=8, q=0.25, reports=3)
    assert (p.bits, p.q, p.reports, p.p) == (8, 0.25, 3, 0.75)
    assert p.effective_q == 0.25
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.q = 0.1  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"bits": 0, "q": 0.2}, "bits must be an integer >= 1; got 0"),
        ({"bits": 2.5, "q": 0.2}, "bits must be an integer >= 1; got 2.5"),
        ({"bits": True, "q": 0.2}, "bits must be an integer"),
        ({"bits": 4, "q": 0.5}, "q must be in (0, 0.5); got 0.5"),
        ({"bits": 4, "q": 0.0}, "q must be in (0, 0.5); got 0.0"),
        ({"bits": 4, "q": 0.7}, "q must be in (0, 0.5); got 0.7"),
        ({"bits": 4, "q": float("nan")}, "q must be a real number in (0, 0.5); got nan"),
        ({"bits": 4, "q": "0.2"}, "q must be a real number"),
        ({"bits": 4, "q": 0.2, "reports": 0}, "reports must be an integer >= 1 and <= 1000; got 0"),
        ({"bits": 4, "q": 0.2, "precision": 65}, "precision must be an integer >= 2 and <= 64; got 65"),
    ],
)
def test_randomization_params_invalid(kwargs, fragment):
    with pytest.raises(ParameterError) as info:
        RandomizationParams(**kwargs)
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


def test_privacy_target():
    t = PrivacyTarget(epsilon=math.log(2), eta=1e-3)
    assert t.lam == pytest.approx(2.0, rel=1e-15)
    assert PrivacyTarget.from_lambda(2.0).epsilon == pytest.approx(math.log(2))
    for bad, frag in [({"epsilon": 0}, "epsilon must be finite and > 0"), ({"epsilon": math.inf}, "epsilon"),
                      ({"epsilon": 1, "eta": 1.0}, "eta must be in (0, 1); got 1.0"),
                      ({"epsilon": 1, "eta": 0}, "eta must be in (0, 1)")]:
        with pytest.raises(ParameterError, match=None) as info:
            PrivacyTarget(**bad)
        assert frag in str(info.value)
    with pytest.raises(ParameterError, match=r"lambda must be in \(1, inf\)"):
        PrivacyTarget.from_lambda(1.0)


def test_local_epsilon_constructor():
    # seed 001 eq. (4.3): L = 5, lambda = 2 -> q = 0.465
    assert RandomizationParams.from_local_epsilon(bits=5, epsilon=math.log(2)).q == pytest.approx(0.465, abs=5e-4)


@given(st.floats(min_value=1e-9, max_value=0.4999999), st.integers(min_value=8, max_value=64))
def test_dyadic_rounds_up_within_one_ulp_of_grid(q, precision):
    try:
        d = DyadicProbability.from_float(q, precision=precision)
    except ParameterError:
        # only when q rounds up to 1/2 at this precision
        assert Fraction(q) > Fraction(1, 2) - Fraction(1, 2**precision)
        return
    exact = Fraction(q)
    assert d.fraction >= exact  # never less noise than asked
    assert d.fraction - exact < Fraction(1, 2**precision) or d.numerator == 1


def test_dyadic_exact_values_and_errors():
    assert DyadicProbability.from_float(0.25, precision=8).numerator == 64
    assert DyadicProbability.from_float(0.3, precision=4).numerator == 5  # 4.8 rounded up
    assert DyadicProbability.from_float(0.3, precision=4, rounding="down").numerator == 4
    assert DyadicProbability.from_float(0.3, precision=4, rounding="nearest").numerator == 5
    with pytest.raises(ParameterError, match="rounding must be one of"):
        DyadicProbability.from_float(0.3, rounding="sideways")
    with pytest.raises(ParameterError, match="rounds to 1/2"):
        DyadicProbability.from_float(0.49, precision=4)
    with pytest.raises(ParameterError, match=r"numerator must be in \[1, 7\]"):
        DyadicProbability(numerator=8, precision=4)


# --- mechanism facts: one implementation of local_q and sigma (issue 11 drift bugs) -------------------------------
def _ldp_epsilon_exact(q: float, distance: int, reports: int) -> Fraction:
    """Independent truth: the worst log-likelihood ratio of k reports differing in ``distance`` bits, k d log(p/q),
    with q the exact binary value of the double (mpmath, 50 digits)."""
    import mpmath

    with mpmath.workdps(50):
        qq = mpmath.mpf(Fraction(q).numerator) / Fraction(q).denominator
        return +(distance * reports * mpmath.log((1 - qq) / qq))


@pytest.mark.parametrize(("bits", "epsilon", "reports"), [(5, 1.0, 3), (1, 1.0, 1), (40, 2.0, 7), (5, math.log(2), 1),
                                                          (1024, 0.5, 100), (3, 40.0, 1)])
def test_local_q_is_epsilon_ldp_over_all_reports_and_tight(bits, epsilon, reports):
    from sufficientdp import local_q

    q = local_q(bits, epsilon, reports)
    # epsilon-LDP over the k reports (never less noise than asked) ...
    assert _ldp_epsilon_exact(q, bits, reports) <= epsilon
    # ... and tight: one ulp less noise breaks it (or the exact formula 1/(1+e^(eps/kL)) is within 1e-13 relative).
    import mpmath

    with mpmath.workdps(50):
        exact = 1 / (1 + mpmath.exp(mpmath.mpf(epsilon) / (bits * reports)))
    assert abs(q - float(exact)) <= 1e-13 * float(exact)


def test_from_local_epsilon_composes_over_reports():
    # The drift bug: epsilon = 1, L = 5, k = 3 used to give q = 0.4502 (3.0-LDP over the three reports).
    p = RandomizationParams.from_local_epsilon(bits=5, epsilon=1.0, reports=3)
    assert p.reports == 3
    assert p.q == pytest.approx(1 / (1 + math.exp(1.0 / 15)), rel=1e-12)  # 0.48334
    assert _ldp_epsilon_exact(p.q, 5, 3) <= 1.0
    from sufficientdp import local_q

    assert p.q == local_q(5, 1.0, 3)


def test_local_q_refuses_epsilon_where_q_rounds_to_half():
    from sufficientdp import local_q

    with pytest.raises(ParameterError, match="epsilon / \\(reports \\* bits\\)"):
        local_q(5, 1e-320)
    with pytest.raises(ParameterError, match="bits"):
        local_q(0, 1.0)
    with pytest.raises(ParameterError, match="reports"):
        local_q(5, 1.0, reports=10**7)


@pytest.mark.parametrize("q", [0.7, 0.5, 0.0, -0.1, math.nan])
def test_sigma_per_sqrt_n_rejects_q_outside_open_half(q):
    from sufficientdp import sigma_per_sqrt_n

    with pytest.raises(ParameterError, match="q must be"):
        sigma_per_sqrt_n(q)


def test_sigma_per_sqrt_n_matches_binomial_variance():
    from sufficientdp import sigma_per_sqrt_n

    # Var d_hat = Var(M/k) / (p - q)^2 with M ~ Bin(k N, p or q): N p q / k / (p - q)^2, here N = 1, exact fractions.
    q, k = Fraction(1, 4), 4
    p = 1 - q
    var = p * q / k / (p - q) ** 2
    assert sigma_per_sqrt_n(0.25, 4) == pytest.approx(math.sqrt(var), rel=1e-15)
    from sufficientdp.ratio.k_reports import sigma_per_sqrt_n_k

    assert sigma_per_sqrt_n_k(0.25, 4) == sigma_per_sqrt_n(0.25, 4)


@given(bits=st.integers(1, 4096), reports=st.integers(1, 1000),
       epsilon=st.floats(1e-6, 50.0, allow_nan=False, allow_infinity=False))
def test_local_q_never_exceeds_epsilon_in_exact_arithmetic(bits, reports, epsilon):
    from sufficientdp import local_q

    q = local_q(bits, epsilon, reports)
    assert 0.0 < q < 0.5
    assert _ldp_epsilon_exact(q, bits, reports) <= epsilon
