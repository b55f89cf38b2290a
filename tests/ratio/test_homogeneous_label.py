"""``tail --method homogeneous`` says "homogeneous" everywhere, nested direction results included (issue 9)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sufficientdp.ratio.analysis import privacy_tail


def _methods(obj: Any) -> list[str]:
    if isinstance(obj, dict):
        return [v for k, v in obj.items() if k == "method" and isinstance(v, str)] + [
            m for v in obj.values() for m in _methods(v)]
    if isinstance(obj, list):
        return [m for v in obj for m in _methods(v)]
    return []


@pytest.mark.slow
@pytest.mark.parametrize("reports", [1, 2])
def test_homogeneous_tail_never_says_certified(reports: int) -> None:
    res = privacy_tail(q=0.3, bits=3, population=100, epsilon=1.0, reports=reports, method="homogeneous")
    methods = _methods(json.loads(json.dumps(res.to_dict())))
    assert methods and set(methods) == {"homogeneous"}, methods
