"""Vectors outside the declared domain (--max-weight / --one-hot) are refused before anything is randomized."""

from __future__ import annotations

import numpy as np
import pytest

from sufficientdp import DataError, ParameterError
from sufficientdp.randomization.randomizer import check_domain, randomize


def test_check_domain_names_the_row_and_the_count() -> None:
    rows = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=np.uint8)
    check_domain(rows, max_weight=3)
    with pytest.raises(DataError, match=r"row 2 has 3 set bits; max_weight is 2 \(1 row"):
        check_domain(rows, max_weight=2)
    with pytest.raises(DataError, match="row 1 has 2 set bits; one-hot"):
        check_domain(rows, onehot=True)
    with pytest.raises(DataError, match="row 0 has 0 set bits; one-hot"):
        check_domain(np.zeros((2, 3), dtype=np.uint8), onehot=True)
    with pytest.raises(ParameterError, match="exclusive"):
        check_domain(rows, max_weight=1, onehot=True)
    with pytest.raises(ParameterError, match="max_weight must be an integer >= 1"):
        check_domain(rows, max_weight=0)


def test_randomize_refuses_rows_outside_the_domain() -> None:
    rng = np.random.default_rng(0)
    ok = randomize([[0, 1, 0], [0, 0, 0]], q=0.2, max_weight=1, rng=rng)
    assert ok.shape == (2, 3)
    with pytest.raises(DataError, match="max_weight is 1"):
        randomize([[0, 1, 1]], q=0.2, max_weight=1, rng=rng)
    assert randomize([[0, 1, 0]], q=0.2, onehot=True, rng=rng).shape == (1, 3)
