"""The privacy-ratio facade and the tail-based calibration methods (issue: certified, exact, mc)."""

import numpy as np
import pytest

from sufficientdp import ParameterError, calibrate
from sufficientdp.ratio.analysis import privacy_tail
from sufficientdp.ratio.exact import homogeneous_ratio_distribution


@pytest.mark.slow
@pytest.mark.parametrize("q, bits, n, eps", [(0.2, 3, 20, 1.0), (0.1, 2, 8, 2.0), (0.3, 3, 40, 0.5)])
def test_certified_bounds_exact_both_directions(q, bits, n, eps):
    """Independent oracle: exact distributions from enumeration of count vectors (ratio.exact)."""
    truth = 0.0
    for j in range(1, bits + 1):
        fwd = homogeneous_ratio_distribution(q, bits, n, outlier_bits=j).eta(eps)
        rev = homogeneous_ratio_distribution(q, bits, n, outlier_bits=j, outlier_in="original").eta(eps)
        truth = max(truth, fwd, rev)
    cert = privacy_tail(q=q, bits=bits, population=n, epsilon=eps, method="homogeneous")
    exact = privacy_tail(q=q, bits=bits, population=n, epsilon=eps, method="exact")
    assert cert.kind == "bound" and exact.kind == "exact"
    assert cert.eta >= truth * (1 - 1e-9)
    assert exact.eta_lower <= truth * (1 + 1e-9) and truth <= exact.eta_upper * (1 + 1e-9)
    mc = privacy_tail(q=q, bits=bits, population=n, epsilon=eps, method="mc", rng=np.random.default_rng(3),
                      samples=20_000)
    # fails with probability < 5% for a correct implementation; the seed is fixed
    assert mc.kind == "estimate" and mc.eta_lower * (1 - 1e-9) <= truth <= mc.eta_upper * (1 + 1e-9)


@pytest.mark.slow
def test_direction_and_outlier_bits():
    both = privacy_tail(q=0.3, bits=5, population=10, epsilon=2.0, method="homogeneous")
    fwd = privacy_tail(q=0.3, bits=5, population=10, epsilon=2.0, direction="forward", method="homogeneous")
    rev = privacy_tail(q=0.3, bits=5, population=10, epsilon=2.0, direction="reverse", method="homogeneous")
    assert both.eta == pytest.approx(max(fwd.eta, rev.eta))
    one = privacy_tail(q=0.3, bits=5, population=10, epsilon=2.0, outlier_bits=2, method="homogeneous")
    assert one.outlier_bits == 2 and one.eta <= both.eta * (1 + 1e-12)
    assert any("homogeneous configuration" in n for n in both.details["notes"])


@pytest.mark.parametrize(
    "kwargs, fragment",
    [({"q": 0.6}, "q must be in (0, 0.5)"), ({"method": "guess"}, "method must be one of proven, homogeneous, exact, mc"),
     ({"direction": "up"}, "direction must be one of both, forward, reverse"),
     ({"outlier_bits": 9}, "outlier_bits must be an integer >= 1 and <= 5; got 9")],
)
def test_invalid(kwargs, fragment):
    args = {"q": 0.2, "bits": 5, "population": 100, "epsilon": 1.0}
    args.update(kwargs)
    with pytest.raises(ParameterError) as info:
        privacy_tail(**args)
    assert fragment in str(info.value)


@pytest.mark.slow
def test_homogeneous_calibration_meets_target_and_is_tight():
    cal = calibrate(bits=5, population=1000, epsilon=2.0, eta=1e-3, method="homogeneous")
    assert cal.method == "homogeneous" and cal.eta_at_q <= 1e-3
    at_q = privacy_tail(q=cal.q, bits=5, population=1000, epsilon=2.0, method="homogeneous")
    assert at_q.eta <= 1e-3 * (1 + 1e-9)
    below = privacy_tail(q=cal.q * 0.99, bits=5, population=1000, epsilon=2.0, method="homogeneous")
    assert below.eta > 1e-3
    # the paper's heuristic q gives a larger eta (seed 001 §3.3: about 0.0037)
    paper = calibrate(bits=5, population=1000, epsilon=2.0, method="paper-sigma")
    assert paper.q < cal.q


@pytest.mark.slow
def test_exact_calibration_small_case():
    cal = calibrate(bits=2, population=20, epsilon=1.0, eta=0.05, method="exact")
    truth = max(
        max(homogeneous_ratio_distribution(cal.q, 2, 20, outlier_bits=j).eta(1.0),
            homogeneous_ratio_distribution(cal.q, 2, 20, outlier_bits=j, outlier_in="original").eta(1.0))
        for j in (1, 2))
    assert truth <= 0.05 * (1 + 1e-9)
    cert = calibrate(bits=2, population=20, epsilon=1.0, eta=0.05)
    assert cal.q <= cert.q * (1 + 1e-6)  # exact never needs more noise than the bound


@pytest.mark.slow
def test_mc_calibration_is_labelled_estimate():
    cal = calibrate(bits=3, population=200, epsilon=1.5, eta=0.01, method="mc", rng=np.random.default_rng(5),
                    samples=5000)
    assert "estimate" in cal.guarantee and 0 < cal.q < 0.5
    assert any("not a bound" in n for n in cal.notes)


def test_default_is_the_all_collections_bound_and_labels_say_their_scope():
    """The default answers for every collection (proven_tail, exact at L = 1); the homogeneous method is labelled
    'homogeneous', never 'certified'; the old name still works, with a DeprecationWarning."""
    from sufficientdp.ratio.proven import proven_tail

    default = privacy_tail(q=0.05, bits=1, population=200, epsilon=1.0)
    assert default.scope == "all-collections" and default.method == "proven"
    assert default.eta == proven_tail(q=0.05, bits=1, population=200, epsilon=1.0).eta
    hom = privacy_tail(q=0.05, bits=1, population=200, epsilon=1.0, method="homogeneous")
    assert hom.method == "homogeneous" and hom.scope == "homogeneous"
    # at L = 1 the homogeneous pair is one of the pairs the exact all-crowd scan covers
    assert hom.eta_lower is None or hom.eta_lower <= default.eta * (1 + 1e-9)
    with pytest.warns(DeprecationWarning, match="homogeneous"):
        old = privacy_tail(q=0.05, bits=1, population=200, epsilon=1.0, method="certified")
    assert old.eta == hom.eta and old.method == "homogeneous"
    with pytest.raises(ParameterError, match="outlier_bits does not apply to method 'proven'"):
        privacy_tail(q=0.05, bits=2, population=200, epsilon=1.0, outlier_bits=1)
