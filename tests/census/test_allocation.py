"""The Census allocation tables (seed 004 Tables 3-5) as exact fractions, and per-query rho* / noise scales.

Oracle: an independent transcription of 004 Tables 3-5 (below, copied from
papers/004_47af1ee980af8d2f.txt §8.1) and exact `fractions` arithmetic.
"""

import dataclasses
import json
import math
from fractions import Fraction as F

import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.census.allocation import (
    GEO_LEVELS,
    HOUSING_QUERIES,
    PERSON_QUERIES,
    PRODUCTION_2020,
    Allocation,
    CensusQuery,
    QueryRho,
)

# 004 Table 4 (person, housing) per level US, State, County, Tract, CBG, Block.
T4_PERSON = ["104/4099", "1440/4099", "447/4099", "687/4099", "1256/4099", "165/4099"]
T4_HOUSING = ["1/205", "1/205", "7/82", "364/1025", "1759/4100", "99/820"]
# 004 Table 5, "query (cells)": US State County Tract CBG Block.
T5 = """TOTAL|1|0 3773/4097 3126/4097 1567/4102 1705/4099 5/4097
CENRACE|63|52/4097 6/4097 10/4097 4/2051 3/4099 9/4097
HISPANIC|2|26/4097 6/4097 10/4097 5/4102 3/4099 5/4097
VOTINGAGE|2|26/4097 6/4097 10/4097 5/4102 3/4099 5/4097
HHINSTLEVELS|3|26/4097 6/4097 10/4097 5/4102 3/4099 5/4097
HHGQ|8|26/4097 6/4097 10/4097 5/4102 3/4099 5/4097
HISPANIC x CENRACE|126|130/4097 12/4097 28/4097 1933/4102 1055/4099 21/4097
VOTINGAGE x CENRACE|126|130/4097 12/4097 28/4097 10/2051 9/4099 21/4097
VOTINGAGE x HISPANIC|4|26/4097 6/4097 10/4097 5/4102 3/4099 5/4097
VOTINGAGE x HISPANIC x CENRACE|252|26/241 2/241 101/4097 67/4102 24/4099 71/4097
HHGQ x VOTINGAGE x HISPANIC x CENRACE|2016|189/241 230/4097 754/4097 241/2051 1288/4099 3945/4097"""
T5_ROWS = {name: (int(cells), [F(x) for x in vals.split()])
           for name, cells, vals in (line.split("|") for line in T5.splitlines())}


def _props():
    return {n: dict(zip(GEO_LEVELS, v)) for n, (_, v) in T5_ROWS.items()}


def _kwargs(**over):
    kw = dict(person_rho=F("2.56"), housing_rho=F("0.07"), person_levels=dict(zip(GEO_LEVELS, map(F, T4_PERSON))),
              housing_levels=dict(zip(GEO_LEVELS, map(F, T4_HOUSING))), query_proportions=_props())
    kw.update(over)
    return kw


def test_tables_match_independent_transcription():
    a = PRODUCTION_2020
    assert a.person_rho == F(256, 100) and a.housing_rho == F(7, 100)  # 004 Table 3
    assert [a.person_levels[lv] for lv in GEO_LEVELS] == [F(x) for x in T4_PERSON]
    assert [a.housing_levels[lv] for lv in GEO_LEVELS] == [F(x) for x in T4_HOUSING]
    assert [q.name for q in PERSON_QUERIES] == list(T5_ROWS)
    for q in PERSON_QUERIES:
        cells, vals = T5_ROWS[q.name]
        assert q.cells == cells
        assert [a.query_proportions[q.name][lv] for lv in GEO_LEVELS] == vals
    assert [(q.name, q.cells) for q in HOUSING_QUERIES] == [("OCCUPANCY STATUS", 2)]


def test_columns_sum_to_one_exactly():
    # digest §5.1 [VERIFIED]: every column of Tables 4 and 5 sums to exactly 1.
    assert sum(map(F, T4_PERSON)) == 1 and sum(map(F, T4_HOUSING)) == 1
    for i in range(6):
        assert sum(v[i] for _, v in T5_ROWS.values()) == 1


def test_total_rho_is_exactly_2_63():
    # 004 §8.1: "rho = 2.56 + 0.07 = 2.63"; per-block sum over all six levels.
    a = PRODUCTION_2020
    brute = sum(F("2.56") * F(T4_PERSON[i]) * v[i] for _, v in T5_ROWS.values() for i in range(6))
    brute += sum(F("0.07") * F(h) for h in T4_HOUSING)
    assert a.total_rho == brute == F(263, 100)
    assert a.person_total == F("2.56") and a.housing_total == F("0.07")


def test_worked_examples_of_section_8_1():
    a = PRODUCTION_2020
    occ = a.rho_star("OCCUPANCY STATUS", "COUNTY")
    assert occ == F("0.07") * F(7, 82)
    assert round(float(occ), 4) == 0.0060  # 004 §8.1 prints "≈ 0.0060"
    va = a.rho_star("VOTINGAGE x CENRACE", "STATE")
    assert va == F("2.56") * F(1440, 4099) * F(12, 4097)
    assert round(float(va), 4) == 0.0026  # 004 §8.1 prints "≈ 0.0026"
    # digest §5.1 [INCONSISTENT]: the text's Fairfax example rho* = 0.0175 is not table-derived; the table gives
    county = a.rho_star("VOTINGAGE x CENRACE", "COUNTY")
    assert round(float(county), 7) == 0.0019079 and round(float(county), 4) != 0.0175


def test_noise_scales_and_zcdp_of_each_measurement():
    for m in PRODUCTION_2020.measurements():
        if not m.measured:
            assert m.query.name == "TOTAL" and m.level == "US"  # Table 5: 0 (US total is not measured)
            assert m.sigma2 == math.inf and m.to_dict()["sigma2"] is None
            continue
        assert m.sigma2 == float(1 / m.rho_star)  # 004 §8.1: sigma = sqrt(1/rho*)
        assert m.gaussian_sigma2 == pytest.approx(m.sigma2 / 2, rel=1e-15)
        # bounded neighbours: squared L2 sensitivity 2, so Delta^2/(2 sigma^2) = rho* (Canonne-Kamath-Steinke)
        assert F(2) / (2 * (1 / m.rho_star)) == m.rho_star
        assert m.mu == pytest.approx(math.sqrt(2 * m.rho), rel=1e-15)
    assert len(PRODUCTION_2020.measurements()) == 6 * 12


def test_to_dict_is_json_and_exact():
    d = json.loads(json.dumps(PRODUCTION_2020.to_dict()))
    assert d["total_rho_exact"] == "263/100" and d["kind"] == "exact"
    assert F(d["query_proportions"]["VOTINGAGE x HISPANIC x CENRACE"]["US"]) == F(26, 241)
    assert len(d["measurements"]) == 72
    assert json.loads(json.dumps(PERSON_QUERIES[-1].to_dict()))["attributes"] == [
        "CENRACE", "HHGQ", "HISPANIC", "VOTINGAGE"]


def test_immutable():
    a = PRODUCTION_2020
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.person_rho = F(1)  # type: ignore[misc]
    with pytest.raises(TypeError):
        a.person_levels["US"] = F(1)  # type: ignore[index]
    with pytest.raises(TypeError):
        a.query_proportions["TOTAL"]["US"] = F(1)  # type: ignore[index]


def test_custom_allocation_accepts_strings_and_ints():
    a = Allocation(**_kwargs(person_rho="1/2", housing_rho=1))
    assert a.total_rho == F(3, 2)


@pytest.mark.parametrize("over, match", [
    (dict(person_rho=0), "person_rho"),
    (dict(person_rho=-1), "person_rho"),
    (dict(housing_rho=0.07), "housing_rho"),  # floats are not exact
    (dict(housing_rho=True), "housing_rho"),
    (dict(person_rho="x"), "person_rho"),
    (dict(person_levels={**dict(zip(GEO_LEVELS, map(F, T4_PERSON))), "US": F(105, 4099)}), "sum to exactly 1"),
    (dict(person_levels={"US": F(1)}), "person_levels"),
    (dict(housing_levels={**dict(zip(GEO_LEVELS, map(F, T4_HOUSING))), "US": F(-1, 205)}), r"\[0, 1\]"),
    (dict(housing_levels={**dict(zip(GEO_LEVELS, map(F, T4_HOUSING))), "US": 0.5}), "exact fraction"),
    (dict(query_proportions={k: v for k, v in _props().items() if k != "TOTAL"}), "query_proportions"),
    (dict(query_proportions={**_props(), "TOTAL": {**_props()["TOTAL"], "US": F(1, 4097)}}), "sum to exactly 1"),
    (dict(query_proportions={**_props(), "TOTAL": {"US": F(0)}}), "query_proportions"),
    (dict(query_proportions={**_props(), "TOTAL": {**_props()["TOTAL"], "US": "a/b"}}), "query_proportions"),
    (dict(person_queries=()), "person_queries"),
    (dict(housing_queries=PERSON_QUERIES[:1]), "housing_queries"),
])
def test_invalid_allocation(over, match):
    with pytest.raises(ParameterError, match=match):
        Allocation(**_kwargs(**over))


def test_invalid_lookups():
    with pytest.raises(ParameterError, match="query must be one of"):
        PRODUCTION_2020.rho_star("RACE", "US")
    with pytest.raises(ParameterError, match="level must be one of"):
        PRODUCTION_2020.rho_star("TOTAL", "NATION")


@pytest.mark.parametrize("kw, match", [
    (dict(name="", attributes=frozenset(), cells=1, universe="person"), "name"),
    (dict(name="X", attributes=frozenset({"AGE"}), cells=1, universe="person"), "attributes"),
    (dict(name="X", attributes=frozenset(), cells=0, universe="person"), "cells"),
    (dict(name="X", attributes=frozenset(), cells=True, universe="person"), "cells"),
    (dict(name="X", attributes=frozenset(), cells=2, universe="households"), "universe"),
])
def test_invalid_query(kw, match):
    with pytest.raises(ParameterError, match=match):
        CensusQuery(**kw)


def test_query_rho_unmeasured_to_dict():
    m = QueryRho(query=PERSON_QUERIES[0], level="US", rho_star=F(0))
    assert not m.measured and m.mu == 0.0 and m.to_dict()["gaussian_sigma2"] is None
