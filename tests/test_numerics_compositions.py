"""The one weak-composition enumeration (issue 11, audit gap 12a), against brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sufficientdp._numerics.compositions import compositions


@pytest.mark.parametrize("parts", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 7])
def test_matches_brute_force_in_lexicographic_order(n: int, parts: int) -> None:
    # brute force: every vector of [0, n]**parts summing to n; itertools.product is lexicographic
    expected = [v for v in itertools.product(range(n + 1), repeat=parts) if sum(v) == n]
    got = compositions(n, parts)
    assert got.dtype == np.int64
    assert got.shape == (math.comb(n + parts - 1, parts - 1), parts)
    assert [tuple(r) for r in got.tolist()] == expected


def test_edge_cases() -> None:
    assert compositions(3, 1).tolist() == [[3]]
    assert compositions(-1, 3).shape == (0, 3)  # no way to sum to a negative number
    assert compositions(0, 4).tolist() == [[0, 0, 0, 0]]
