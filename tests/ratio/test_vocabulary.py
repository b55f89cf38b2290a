"""Kind, Scope, Direction: one vocabulary, string enums that read, compare and serialize as their strings."""

import json

import pytest

import sufficientdp as sdp
from sufficientdp.ratio.result import DIRECTIONS, KINDS, SCOPES, Direction, Kind, Scope, TailResult


def test_members_are_their_strings():
    assert Kind.BOUND == "bound" and Scope.ALL_COLLECTIONS == "all-collections" and Direction.REVERSE == "reverse"
    assert json.dumps({"k": Kind.LOWER_BOUND}) == '{"k": "lower bound"}'
    assert repr((Kind.EXACT, Scope.PER_REPORT)) == "('exact', 'per-report')"
    assert f"{Scope.HOMOGENEOUS}" == "homogeneous"
    assert SCOPES == ("all-collections", "homogeneous", "per-report")
    assert DIRECTIONS == ("both", "forward", "reverse")
    assert set(KINDS) <= {k.value for k in Kind}


def test_results_carry_the_enums_and_plain_json():
    r = TailResult(eta=0.1, eta_lower=None, eta_upper=0.1, method="homogeneous", kind="bound", epsilon=1.0, q=0.2,
                   bits=2, population=10)
    assert r.kind is Kind.BOUND and r.scope is Scope.HOMOGENEOUS
    d = r.to_dict()
    assert type(d["kind"]) is str and type(d["scope"]) is str and d["kind"] == "bound"
    with pytest.raises(ValueError, match="kind must be one of"):
        TailResult(eta=0.1, eta_lower=None, eta_upper=0.1, method="x", kind="heuristic", epsilon=1.0, q=0.2,
                   bits=2, population=10)
    cal = sdp.calibrate(bits=2, population=100, epsilon=1.0, eta=1e-3, method="local")
    assert cal.scope is Scope.PER_REPORT and cal.kind is Kind.EXACT
    d = cal.to_dict()
    assert type(d["scope"]) is str and type(d["kind"]) is str and json.loads(json.dumps(d))["scope"] == "per-report"
