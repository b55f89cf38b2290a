"""The one configuration type of the homogeneous analyses (issue 11, audit gap 4).

``ratio._chernoff.Config`` and :func:`check_config` serve the Chernoff engines (population >= 1) and the k-report and
sampling analyses (population >= 2, through ``min_population``); bad input raises a ParameterError naming the
parameter, the value and the allowed range.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.ratio import k_reports
from sufficientdp.ratio._chernoff import Config, check_config, levels
from sufficientdp.ratio.sampling import sample_privacy_ratio


def test_fields_and_derived_quantities() -> None:
    cfg = check_config(0.25, 5, 10, 1.0, 3, 2)
    assert cfg == Config(q=0.25, bits=5, population=10, epsilon=1.0, j=3, k=2)
    assert cfg.n == 20
    # log w_l = (j - 2l) log(q/p) = (3 - 2l) log(1/3), l = 0..3 (seed 001 eq. 3.2), the same floats as levels()
    np.testing.assert_allclose(cfg.log_w, [(3 - 2 * lv) * math.log(1 / 3) for lv in range(4)], rtol=1e-15)
    assert np.array_equal(cfg.log_w, levels(0.25, 3)[1])
    assert check_config(0.25, 5, 10, 1.0, None).j == 5


def test_min_population_is_a_parameter() -> None:
    assert check_config(0.25, 2, 1, 1.0, None).population == 1
    with pytest.raises(ParameterError, match=r"population must be an integer >= 2; got 1"):
        check_config(0.25, 2, 1, 1.0, None, min_population=2)
    with pytest.raises(ParameterError, match=r"population must be an integer >= 1; got 0"):
        check_config(0.25, 2, 0, 1.0, None)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"q": 0.5}, r"q must be in \(0, 0.5\); got 0.5"),
    ({"bits": 0}, r"bits must be an integer >= 1; got 0"),
    ({"epsilon": -1.0}, r"epsilon must be"),
    ({"outlier_bits": 6}, r"outlier_bits must be an integer >= 1 and <= 5; got 6"),
    ({"reports": 0}, r"reports must be an integer >= 1; got 0"),
])
def test_messages_name_parameter_value_and_range(kwargs: dict[str, float], message: str) -> None:
    args = {"q": 0.25, "bits": 5, "population": 10, "epsilon": 1.0, "outlier_bits": None, "reports": 1} | kwargs
    with pytest.raises(ParameterError, match=message):
        check_config(**args)


def test_k_report_and_sampling_entry_points_need_two_people() -> None:
    with pytest.raises(ParameterError, match=r"population must be an integer >= 2; got 1"):
        k_reports.k_tail_mc(q=0.25, bits=2, population=1, reports=2, epsilon=1.0, samples=10, rng=0)
    with pytest.raises(ParameterError, match=r"population must be an integer >= 2; got 1"):
        k_reports.k_tail_exact_single_bit(q=0.25, population=1, reports=2, epsilon=1.0)
    with pytest.raises(ParameterError, match=r"population must be an integer >= 2; got 1"):
        sample_privacy_ratio(q=0.25, bits=2, population=1, samples=10, rng=0)
