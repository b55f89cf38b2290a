"""``sufficientdp._json``: the one JSON rule of the command line and the reports (issue 11: three copies, one of
which wrote ``Infinity``). Strict JSON: never the tokens NaN / Infinity; +-inf as "inf"/"-inf", NaN as null."""

from __future__ import annotations

import json
import math
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sufficientdp._frozen import FrozenDict
from sufficientdp._json import dumps, jsonable, restore_infinities


def _strict_loads(text: str):
    def refuse(token: str) -> None:  # json.loads hands NaN, Infinity and -Infinity to parse_constant
        raise AssertionError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def test_values_and_containers() -> None:
    obj = {"inf": math.inf, "ninf": -math.inf, "nan": math.nan, "f32": np.float32(0.5), "i64": np.int64(-3),
           "b": np.bool_(True), "t": (1, np.float64(np.inf)), "s": frozenset({2}), "a": np.array([[1.0, np.nan]]),
           "m": MappingProxyType({"x": 1}), "fz": FrozenDict({"y": -np.inf}), "none": None, "str": "inf"}
    assert jsonable(obj) == {"inf": "inf", "ninf": "-inf", "nan": None, "f32": 0.5, "i64": -3, "b": True,
                             "t": [1, "inf"], "s": [2], "a": [[1.0, None]], "m": {"x": 1}, "fz": {"y": "-inf"},
                             "none": None, "str": "inf"}
    out = jsonable(obj)
    assert type(out["i64"]) is int and type(out["b"]) is bool and type(out["f32"]) is float


def test_keys_are_the_strings_json_writes() -> None:
    assert jsonable({1: "a", 0.5: "b", None: "c", np.int64(7): "d", (1, 2): "e"}) == {
        "1": "a", "0.5": "b", "null": "c", "7": "d", "(1, 2)": "e"}
    assert jsonable({True: 1}) == {"true": 1}  # what json.dumps writes for the key True


def test_other_objects_need_a_fallback() -> None:
    class Thing:
        def __str__(self) -> str:
            return "thing"

    with pytest.raises(TypeError, match="Thing is not JSON serializable"):
        jsonable({"x": [Thing()]})
    assert jsonable({"x": [Thing()]}, fallback=str) == {"x": ["thing"]}


finite_or_not = st.floats(allow_nan=True, allow_infinity=True)
words = st.sampled_from(["", "a", "inf", "-inf", "nan", "Infinity"])
trees = st.recursive(finite_or_not | st.integers() | words | st.none(),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(words, kids, max_size=3),
                     max_leaves=12)


def _expected(x):
    """The round trip through dumps, loads and restore_infinities: NaN is lost (null), the rest survives."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, list):
        return [_expected(v) for v in x]
    if isinstance(x, dict):
        return {k: _expected(v) for k, v in x.items()}
    if x in ("inf", "-inf"):  # a string that reads as an infinity (documented: only for files without such text)
        return float(x)
    return x


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])  # a shared, loaded machine
@given(trees)
def test_dumps_is_strict_and_infinities_come_back(tree) -> None:
    text = dumps(tree)
    back = restore_infinities(_strict_loads(text))
    assert back == _expected(tree)
