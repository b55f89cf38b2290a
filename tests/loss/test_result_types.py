"""Result types are immutable values with ``to_dict()`` and, when table-shaped, ``to_pandas()`` (issue 11, gap 6).

Immutability is checked structurally: no list, dict or writeable numpy array is reachable from any field of a
result (tuples, :class:`FrozenDict` and read-only arrays only), and assigning a field raises. Every ``to_pandas``
table is checked column by column against the fields it is built from; every ``to_dict`` is JSON-serializable.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from sufficientdp._frozen import FrozenDict
from sufficientdp.accounting.mechanisms import binary_randomized_response
from sufficientdp.accounting.pbdp import compare_eta_delta
from sufficientdp.accounting.shuffled import (
    shuffled_rr_profile,
    shuffled_rr_worst_bracket,
    shuffled_rr_worst_profile,
)
from sufficientdp.census.scenarios import DgmPower
from sufficientdp.loss.distribution import PrivacyLossDistribution
from sufficientdp.loss.result import Kind
from sufficientdp.ratio.homogeneous import ratio_moments
from sufficientdp.ratio.sampling import count_ratio_above
from sufficientdp.ratio.single_bit import worst_over_crowds
from sufficientdp.ratio.worst_case import worst_case_exhaustive
from sufficientdp.semantics.bayesian import PosteriorBound, posterior_table, pure_dp_posterior_bound
from sufficientdp.semantics.frequentist import power_table

pd = pytest.importorskip("pandas")


def _mutable_paths(value: Any, path: str = "") -> list[str]:
    """Paths to every mutable container reachable from ``value`` (lists, dicts, sets, writeable arrays)."""
    if isinstance(value, np.ndarray):
        return [path] if value.flags.writeable else []
    if isinstance(value, (list, dict, set, bytearray)):
        return [path]
    if isinstance(value, Mapping):
        if not isinstance(value, FrozenDict):
            return [path]
        return [p for k, v in value.items() for p in _mutable_paths(v, f"{path}[{k!r}]")]
    if isinstance(value, tuple):
        return [p for i, v in enumerate(value) for p in _mutable_paths(v, f"{path}[{i}]")]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [p for f in dataclasses.fields(value) for p in _mutable_paths(getattr(value, f.name),
                                                                            f"{path}.{f.name}")]
    return []


def _pld() -> PrivacyLossDistribution:
    return PrivacyLossDistribution(losses=[-1.0, 1.0], probabilities=[0.25, 0.75], pmfs=(np.array([0.75, 0.25]),
                                   np.array([0.25, 0.75])), details={"notes": ["a"], "per": {"x": [1, 2]}})


RESULTS = {
    "ShuffledRRProfile": lambda: shuffled_rr_profile(population=20, m=1, q=0.2, epsilon=[0.5, 1.0]),
    "ShuffledRRProfile-worst": lambda: shuffled_rr_worst_profile(population=20, q=0.2, epsilon=[0.5, 1.0]),
    "ShuffledRRBracket-exact": lambda: shuffled_rr_worst_bracket(population=20, q=0.2, epsilon=0.5),
    "ShuffledRRBracket-bracket": lambda: shuffled_rr_worst_bracket(population=100, q=0.2, epsilon=0.3, full_scan_max=20),
    "WorstOverCrowds": lambda: worst_over_crowds(20, 0.2, 0.5),
    "PrivacyLossDistribution": _pld,
    "WorstCaseResult": lambda: worst_case_exhaustive(2, 3, 0.2, 1.0),
    "PosteriorTable": lambda: posterior_table([0.1, 0.5], epsilon=1.0, rho=0.1),
    "PowerTable": lambda: power_table([0.05, 0.1], rho=0.1, epsilon=1.0),
    "EtaDeltaTable": lambda: compare_eta_delta(binary_randomized_response(0.25), [0.5, 1.0]),
    "PosteriorBound": lambda: pure_dp_posterior_bound(0.5, 1.0),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_no_mutable_container_is_reachable_from_a_result(name):
    r = RESULTS[name]()
    assert _mutable_paths(r) == []
    field = dataclasses.fields(r)[0].name
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError)):
        setattr(r, field, None)
    json.dumps(r.to_dict(), allow_nan=True)  # plain lists and dicts again


def test_the_mutable_paths_checker_finds_mutable_containers():
    @dataclasses.dataclass(frozen=True)
    class Loose:
        a: Any
        b: Any

    assert _mutable_paths(Loose(a=(1, [2]), b=FrozenDict({"x": np.zeros(2)}))) == [".a[1]", ".b['x']"]
    assert _mutable_paths(Loose(a=(1, (2,)), b=FrozenDict({"x": np.zeros(2)[:0].copy()}))) == [".b['x']"]
    ro = np.zeros(2)
    ro.flags.writeable = False
    assert _mutable_paths(Loose(a={"k": 1}, b=ro)) == [".a"]


def test_details_and_arrays_refuse_writes():
    prof = RESULTS["ShuffledRRProfile"]()
    with pytest.raises(ValueError, match="read-only"):
        prof.delta[0] = 1.0
    with pytest.raises(TypeError):
        prof.details["per_direction"] = {}  # type: ignore[index]
    br = RESULTS["ShuffledRRBracket-bracket"]()
    with pytest.raises(TypeError):
        br.bound_status["local-rr"]["verified"] = False  # type: ignore[index]
    pld = _pld()
    with pytest.raises(ValueError, match="read-only"):
        pld.pmfs[0][0] = 0.5  # type: ignore[index]
    assert pld.to_dict()["details"] == {"notes": ["a"], "per": {"x": [1, 2]}}
    wc = RESULTS["WorstCaseResult"]()
    with pytest.raises(TypeError):
        wc.homogeneous_eta_by_weight[1] = 0.0  # type: ignore[index]
    assert wc.to_dict()["original"] == [list(v) for v in wc.original]


def test_caller_containers_are_copied_not_shared():
    per = {"x": [1, 2]}
    pld = PrivacyLossDistribution(losses=[0.0], probabilities=[1.0], details={"per": per})
    per["x"].append(3)
    assert pld.details["per"]["x"] == (1, 2)


@pytest.mark.parametrize(("name", "kind"), [
    ("ShuffledRRProfile", Kind.BOUND), ("ShuffledRRProfile-worst", Kind.BOUND), ("ShuffledRRBracket-exact", Kind.EXACT),
    ("ShuffledRRBracket-bracket", Kind.BRACKET), ("WorstOverCrowds", Kind.EXACT), ("PosteriorBound", Kind.BOUND),
])
def test_kind_is_the_kind_enum_and_equals_its_string(name, kind):
    r = RESULTS[name]()
    assert r.kind is kind and r.kind == kind.value
    assert type(r.to_dict()["kind"]) is str and r.to_dict()["kind"] == kind.value


def test_kind_of_a_subset_profile_is_lower_bound_and_table_kinds_are_enums():
    r = shuffled_rr_worst_profile(population=20, q=0.2, epsilon=0.5, ms=[1, 2])
    assert r.kind is Kind.LOWER_BOUND and r.to_dict()["kind"] == "lower bound"
    t = RESULTS["PowerTable"]()
    assert dict(t.kind) == {"power_gaussian": Kind.EXACT, "power_zcdp_bound": Kind.BOUND,
                            "power_pure_dp_bound": Kind.BOUND, "power_rr": Kind.EXACT}
    assert t.to_dict()["kind"]["power_rr"] == "exact"
    assert all(k is Kind.BOUND for k in RESULTS["PosteriorTable"]().kind.values())


def test_kinds_other_than_the_one_allowed_are_refused():
    from sufficientdp import ParameterError

    b = pure_dp_posterior_bound(0.5, 1.0)
    with pytest.raises(ParameterError, match="^kind must"):
        dataclasses.replace(b, kind="exact")
    d = DgmPower(level=0.05, estimate=0.1, lower=0.09, upper=0.11, samples=10, confidence_level=0.99)
    assert d.kind is Kind.ESTIMATE and d.to_dict()["kind"] == "estimate"
    with pytest.raises(ParameterError, match="^kind must"):
        dataclasses.replace(d, kind="bound")
    p = RESULTS["ShuffledRRProfile"]()
    with pytest.raises(ParameterError, match="^kind must"):
        dataclasses.replace(p, kind="guess")
    assert isinstance(b, PosteriorBound)


# ---------------------------------------------------------------------------------------------------- to_pandas


def _column(frame: Any, name: str) -> list[Any]:
    return (frame.index if frame.index.name == name else frame[name]).tolist()


@pytest.mark.parametrize("name", ["ShuffledRRProfile", "ShuffledRRProfile-worst"])
def test_profile_to_pandas_is_the_per_epsilon_fields(name):
    r = RESULTS[name]()
    df = r.to_pandas()
    assert df.index.name == "epsilon"
    assert list(df.columns) == ["delta", "eta", "worst_m_delta", "worst_m_eta", "worst_direction_delta",
                                "worst_direction_eta"]
    for col in ("epsilon", "delta", "eta", "worst_m_delta", "worst_m_eta"):
        assert _column(df, col) == getattr(r, col).tolist()
    for col in ("worst_direction_delta", "worst_direction_eta"):
        assert _column(df, col) == list(getattr(r, col))


def test_posterior_and_power_tables_to_pandas():
    t = RESULTS["PosteriorTable"]()
    df = t.to_pandas()
    assert df.index.name == "prior" and df.index.tolist() == list(t.priors)
    assert list(df.columns) == list(t.columns)
    for name, values in t.columns.items():
        assert df[name].tolist() == list(values)
    p = RESULTS["PowerTable"]()
    df = p.to_pandas()
    assert df.index.name == "level" and df.index.tolist() == list(p.levels)
    assert list(df.columns) == list(p.columns)
    for name, values in p.columns.items():
        assert df[name].tolist() == list(values)


def test_eta_delta_table_to_pandas():
    t = RESULTS["EtaDeltaTable"]()
    df = t.to_pandas()
    assert df.index.name == "epsilon" and df.index.tolist() == list(t.epsilons)
    assert list(df.columns) == ["delta", "eta", "delta_pbdp"]
    for name in ("delta", "eta", "delta_pbdp"):
        assert df[name].tolist() == list(getattr(t, name))


def test_comparison_to_pandas_is_its_records():
    from sufficientdp.calibration.compare import compare_approaches

    c = compare_approaches(bits=2, population=50, epsilon=1.0, delta=1e-6, sufficient=False)
    df = c.to_pandas()
    assert df.index.name == "approach" and df.index.tolist() == [r.approach for r in c.rows]
    records = c.records
    assert list(df.columns) == [k for k in records[0] if k != "approach"]
    for i, rec in enumerate(records):
        for key, value in rec.items():
            if key == "approach":
                continue
            got = df[key].iloc[i]
            assert (value is None and (got is None or (isinstance(got, float) and math.isnan(got)))) or got == value


def test_kscan_to_pandas_is_its_table():
    from sufficientdp.calibration.k_reports import KCalibration, KScan

    fields = {f.name for f in dataclasses.fields(KCalibration)}
    assert "reports" in fields
    scan = _small_kscan()
    df = scan.to_pandas()
    rows = scan.table()
    assert df.index.name == "k" and df.index.tolist() == [r["k"] for r in rows]
    assert list(df.columns) == ["q", "sigma_per_sqrt_n", "eta_check", "eta_check_upper"]
    for name in df.columns:
        assert df[name].tolist() == [r[name] for r in rows]
    assert isinstance(scan, KScan)


def _small_kscan() -> Any:
    from sufficientdp.calibration.k_reports import best_k

    return best_k(bits=1, population=200, epsilon=2.0, eta=0.05, reports=[1, 2], method="mc", rng=3, samples=400,
                  iterations=6)


# ---------------------------------------------------------------------------------------------------- to_dict


def test_to_dict_of_the_small_results():
    m = ratio_moments(q=0.25, bits=5, n=1000)
    assert m.to_dict() == {"mean": m.mean, "sd": m.sd, "log_excess_mean": m.log_excess_mean, "log_var": m.log_var}
    (c,) = count_ratio_above(q=0.25, bits=2, population=20, thresholds=[1.5], samples=500, rng=1)
    d = c.to_dict()
    assert (d["hits"], d["hits_strict"], d["samples"], d["lower"], d["upper"]) == (
        c.hits, c.hits_strict, c.samples, c.lower, c.upper)
    assert d["estimate"] == c.hits / c.samples and d["kind"] == "estimate"
    json.dumps(d)


def test_to_dict_of_truncated_tail_and_evaluations():
    from sufficientdp.accounting.rounds import RoundsEvaluation
    from sufficientdp.ratio.exact import TruncatedTail
    from sufficientdp.ratio.proven import Domain, Evaluation

    t = TruncatedTail(value=0.25, truncated=1e-15)
    assert t.to_dict() == {"value": 0.25, "truncated": 1e-15, "lower": 0.25, "upper": 0.25 + 1e-15}
    ev = Evaluation(0.01, 0.001, 0.9, "t1", (("t1", 0.01), ("t2", 0.005)), -3.0, Domain(bits=3, kind="onehot"),
                    ("n",))
    assert ev.to_dict() == {"eta": 0.01, "delta": 0.001, "epsilon_prime": 0.9, "worst": "t1",
                            "by_type": {"t1": 0.01, "t2": 0.005}, "log_gamma": -3.0,
                            "domain": {"kind": "onehot", "bits": 3, "max_weight": None,
                                       "label": "one-hot vectors of 3 bits"},
                            "notes": ["n"]}
    re = RoundsEvaluation(0.02, 0.002, 0.8, "t2", (("t2", 0.02),), None, 7, ())
    assert re.to_dict() == {"eta": 0.02, "delta": 0.002, "epsilon_prime": 0.8, "worst": "t2",
                            "by_type": {"t2": 0.02}, "composition": None, "evaluations": 7, "notes": [],
                            "curves": []}
    json.dumps(ev.to_dict())
    json.dumps(re.to_dict())


# ---------------------------------------------------------------------------------------------------- former names


def test_tail_result_confidence_level_and_its_former_name():
    from sufficientdp import ParameterError
    from sufficientdp.loss.result import TailResult

    kw = dict(eta=0.1, eta_lower=0.05, eta_upper=0.2, method="mc", kind="estimate", epsilon=1.0, q=0.2, bits=1,
              population=10)
    new = TailResult(confidence_level=0.9, **kw)
    with pytest.warns(DeprecationWarning, match=r"TailResult\(confidence=\.\.\.\) is deprecated"):
        old = TailResult(confidence=0.9, **kw)
    assert old == new and new.confidence_level == 0.9 and new.eta_interval.confidence_level == 0.9
    with pytest.warns(DeprecationWarning, match=r"TailResult.confidence is deprecated; use .confidence_level"):
        assert new.confidence == 0.9
    with pytest.raises((AttributeError, TypeError)):  # read-only (TypeError: CPython 3.11's frozen+slots setattr)
        new.confidence = 0.5  # type: ignore[misc]
    with pytest.raises(ParameterError, match="^give confidence_level or its former name confidence, not both"):
        TailResult(confidence=0.9, confidence_level=0.9, **kw)
    assert new.to_dict()["confidence"] == 0.9  # the JSON key is unchanged (CLI --json format)
    assert dataclasses.replace(new, confidence_level=0.8).confidence_level == 0.8


def test_joint_estimate_confidence_level_and_its_former_name():
    from sufficientdp.estimation import joint_frequencies

    est = joint_frequencies(np.array([30, 20, 25, 25]), q=0.25, confidence_level=0.9)
    assert est.confidence_level == 0.9 and est.to_dict()["level"] == 0.9
    with pytest.warns(DeprecationWarning, match=r"JointEstimate.level is deprecated"):
        assert est.level == 0.9


def test_shuffled_rr_population_and_its_former_name_n():
    from sufficientdp import ParameterError

    new = shuffled_rr_profile(population=20, m=1, q=0.2, epsilon=0.5)
    with pytest.warns(DeprecationWarning, match="n= is deprecated; use population="):
        old = shuffled_rr_profile(n=20, m=1, q=0.2, epsilon=0.5)
    assert old.delta.tolist() == new.delta.tolist() and new.population == 20
    assert new.to_dict()["population"] == 20
    with pytest.warns(DeprecationWarning, match=r"ShuffledRRProfile.n is deprecated; use .population"):
        assert new.n == 20
    b = shuffled_rr_worst_bracket(population=20, q=0.2, epsilon=0.5)
    with pytest.warns(DeprecationWarning, match=r"ShuffledRRBracket.n is deprecated"):
        assert b.n == b.population == 20
    with pytest.raises(ParameterError, match="^population must be given"):
        shuffled_rr_worst_bracket(q=0.2, epsilon=0.5)
    with pytest.raises(ParameterError, match="^give population or its former name n, not both"):
        shuffled_rr_worst_profile(population=20, n=20, q=0.2, epsilon=0.5)


def test_a_former_name_warns_at_the_callers_line():
    with pytest.warns(DeprecationWarning) as record:
        shuffled_rr_pld_call = shuffled_rr_profile(n=5, m=1, q=0.2, epsilon=0.5)
    assert record[0].filename == __file__ and shuffled_rr_pld_call.population == 5


def test_single_bit_tails_take_population_and_n_as_its_former_name():
    from sufficientdp.ratio.single_bit import single_bit_tail, single_bit_worst_tail

    new = single_bit_tail(population=20, m=1, q=0.2, epsilon=0.5)
    with pytest.warns(DeprecationWarning, match="n= is deprecated; use population=") as record:
        old = single_bit_tail(n=20, m=1, q=0.2, epsilon=0.5)
    assert record[0].filename == __file__ and old == new and new.population == 20
    with pytest.warns(DeprecationWarning):
        assert single_bit_worst_tail(n=20, q=0.2, epsilon=0.5) == single_bit_worst_tail(population=20, q=0.2,
                                                                                         epsilon=0.5)


def test_amplification_and_compare_take_population_and_n_as_its_former_name():
    from sufficientdp import ParameterError
    from sufficientdp.accounting.amplification import amplification_epsilon, bbgn19_delta, max_epsilon0
    from sufficientdp.calibration.compare import shuffled_rr_worst_delta

    new = amplification_epsilon("efmrtt19", epsilon0=0.4, population=2000, delta=1e-6)
    with pytest.warns(DeprecationWarning, match="n= is deprecated; use population=") as record:
        old = amplification_epsilon("efmrtt19", epsilon0=0.4, n=2000, delta=1e-6)
    assert record[0].filename == __file__ and old == new and new.population == 2000
    assert new.to_dict()["population"] == 2000
    with pytest.warns(DeprecationWarning, match=r"AmplificationBound.n is deprecated; use .population"):
        assert new.n == 2000
    assert bbgn19_delta(0.5, 1.0, 1000) == bbgn19_delta(0.5, 1.0, population=1000)  # positional calls unchanged
    with pytest.warns(DeprecationWarning):
        assert bbgn19_delta(0.5, 1.0, n=1000) == bbgn19_delta(0.5, 1.0, 1000)
    m = max_epsilon0("bbgn19", epsilon=1.0, delta=1e-6, population=1000)
    with pytest.warns(DeprecationWarning, match=r"Epsilon0Result.n is deprecated"):
        assert m.n == m.population == 1000
    with pytest.raises(ParameterError, match="^give population or its former name n, not both"):
        max_epsilon0("bbgn19", epsilon=1.0, delta=1e-6, population=1000, n=1000)
    with pytest.raises(ParameterError, match="^population must"):
        shuffled_rr_worst_delta(0, 0.2, 1.0)
    with pytest.warns(DeprecationWarning):
        assert shuffled_rr_worst_delta(n=20, q=0.2, epsilon=0.5) == shuffled_rr_worst_delta(20, 0.2, 0.5)
