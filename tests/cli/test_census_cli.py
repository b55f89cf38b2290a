"""`sufficientdp census`, in-process: allocation listing, scenarios (seed 004 §8.2, Tables 2 and 6), errors."""

import json
from fractions import Fraction

import pytest

from sufficientdp.cli.main import main


def run(capsys, *argv):
    code = main(["census", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_allocation_json(capsys):
    code, out, err = run(capsys, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["total_rho_exact"] == "263/100"  # 004 §8.1: rho = 2.56 + 0.07 = 2.63
    m = {(x["query"], x["level"]): x for x in d["measurements"]}
    va = m[("VOTINGAGE x CENRACE", "STATE")]
    assert Fraction(va["rho_star_exact"]) == Fraction("2.56") * Fraction(1440, 4099) * Fraction(12, 4097)
    assert round(va["rho_star"], 4) == 0.0026  # 004 §8.1 worked example
    assert m[("TOTAL", "US")]["sigma2"] is None
    assert [s["name"] for s in d["scenarios"]] == ["ALL", "A", "B", "C", "D", "E", "F", "G", "H"]


def test_allocation_text(capsys):
    code, out, _ = run(capsys)
    assert code == 0 and "2.63" in out and "OCCUPANCY STATUS" in out and "(not measured)" in out


def test_scenario_a_json_table6(capsys):
    code, out, err = run(capsys, "--scenario", "A", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert round(d["rho"], 4) == 0.1115 and d["matches_paper_rho"] is True and d["rho_kind"] == "exact"
    # 004 Table 6: Gaussian 0.03 / 0.12 / 0.21, zCDP upper bound 0.04 / 0.14 / 0.24
    assert [round(p["gaussian"], 2) for p in d["powers"]] == [0.03, 0.12, 0.21]
    assert [round(p["zcdp_bound"], 2) for p in d["powers"]] == [0.04, 0.14, 0.24]
    assert {p["zcdp_bound_kind"] for p in d["powers"]} == {"bound"}
    assert d["posterior"] and d["powers"][0]["dgm"] is None


def test_scenario_text_with_dgm_and_custom_levels(capsys):
    code, out, err = run(capsys, "--scenario", "all", "--levels", "0.05", "--dgm-samples", "5000", "--seed", "3")
    assert code == 0, err
    assert "rho = 2.630000" in out and "DGM" in out
    assert "0.741706" in out  # Gaussian power at level 0.05, rho 2.63 (Table 2 prints 0.74)


def test_scenario_c_flags_inconsistency(capsys):
    code, out, _ = run(capsys, "--scenario", "C")
    assert code == 0 and "DOES NOT follow" in out and "0.952" in out


def test_custom_scenario(capsys):
    code, out, err = run(capsys, "--geo", "BLOCK", "--attributes", "VOTINGAGE", "--json")
    assert code == 0, err
    d = json.loads(out)
    code2, out2, _ = run(capsys, "--scenario", "F", "--json")
    assert d["rho_exact"] == json.loads(out2)["rho_exact"]


@pytest.mark.parametrize("argv, needle", [
    (["--scenario", "Z"], "ALL, A, B, C, D, E, F, G, H"),
    (["--scenario", "A", "--geo", "BLOCK"], "not both"),
    (["--geo", "PLANET"], "geo_levels"),
    (["--attributes", "AGE"], "attributes"),
    (["--scenario", "A", "--levels", "1.5"], "level"),
    (["--scenario", "A", "--levels", "x"], "levels"),
    (["--scenario", "A", "--deltas", "0"], "deltas"),
    (["--scenario", "A", "--dgm-samples", "10"], "samples"),
])
def test_errors_one_line_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sufficientdp") and needle in lines[0]
