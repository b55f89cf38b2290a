"""Tests of ``sufficientdp interpret`` (in-process)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sufficientdp.cli.main import main


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    rc = main(argv)
    out = capsys.readouterr().out
    assert rc == 0
    return json.loads(out)


def test_rho_json_reproduces_table_6(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["interpret", "--rho", "0.1115", "--levels", "0.01,0.05,0.1", "--json"])
    assert d["levels"] == [0.01, 0.05, 0.1]
    # digest §5.2 Table 6 (Scenario A): Gaussian 0.03, 0.12, 0.21; zCDP bound 0.03739, 0.14018, 0.24036 [VERIFIED]
    np.testing.assert_allclose(d["power_gaussian"], [0.03, 0.12, 0.21], atol=0.005)
    np.testing.assert_allclose(d["power_zcdp_bound"], [0.03739, 0.14018, 0.24036], atol=1e-5)
    assert d["kind"] == {"power_gaussian": "exact", "power_zcdp_bound": "bound"}
    post = d["posterior"]
    assert post["priors"] == [0.01, 0.1, 0.5]
    assert set(post["kind"].values()) == {"bound"}
    for col in post["columns"].values():
        assert len(col) == 3
    assert d["delta_eta_pbdp"]["kind"] == "exact"


def test_rho_text_and_priors(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["interpret", "--rho", "2.63", "--priors", "0.2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "0.698160" in out and "0.486886" in out  # digest Table 2
    assert "posterior" in out


def test_epsilon_modes(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["interpret", "--epsilon", "1", "--json"])
    assert d["power_rr"] == pytest.approx(d["power_pure_dp_bound"], rel=1e-9)
    assert d["posterior"]["columns"]["pure_dp_rest_known"][1] == pytest.approx(1 / (1 + 9 * np.exp(-1)), rel=1e-9)
    assert d["total_variation"]["kind"] == "bound"
    d2 = _json(capsys, ["interpret", "--epsilon", "1", "--delta", "0.01", "--json"])
    assert d2["kind"] == {"power_approx_dp_bound": "bound"} and d2["posterior"] is None


def test_mechanisms(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["interpret", "--mechanism", "gaussian", "--sigma", "2", "--sensitivity", "1", "--json"])
    assert d["parameters"]["mu"] == pytest.approx(0.5)
    assert all(g <= b for g, b in zip(d["power_gaussian"], d["power_zcdp_bound"], strict=True))
    d2 = _json(capsys, ["interpret", "--mechanism", "rr", "--q", "0.25", "--json"])
    np.testing.assert_allclose(d2["power_rr"], [0.03, 0.15, 0.3], rtol=1e-9)  # e^eps l with e^eps = 3
    assert "pure_dp_rest_known" in d2["posterior"]["columns"]
    rc = main(["interpret", "--mechanism", "rr", "--q", "0.25"])
    assert rc == 0 and "total variation" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["--rho", "0"],
        ["--rho", "-1"],
        ["--rho", "1", "--levels", "0,0.05"],
        ["--rho", "1", "--levels", "0.05,1"],
        ["--rho", "1", "--levels", "0.05,abc"],
        ["--rho", "1", "--levels", ""],
        ["--rho", "1", "--priors", "1.5"],
        ["--rho", "abc"],
        ["--mechanism", "gaussian", "--sigma", "0"],
        ["--mechanism", "gaussian", "--sigma", "-2"],
        ["--mechanism", "gaussian"],
        ["--mechanism", "rr", "--q", "1.2"],
        ["--mechanism", "rr"],
        ["--rho", "1", "--epsilon", "1"],
        ["--delta", "0.1"],
        ["--rho", "1", "--delta", "0.1"],
        ["--rho", "1", "--sigma", "1"],
        [],
        ["--epsilon", "-1"],
        ["--rho", "1", "--failure", "0"],
    ],
)
def test_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    rc = main(["interpret", *argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("sufficientdp: error:") and err.count("\n") == 1
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["--rho", "1000"], ["--mechanism", "rr", "--q", "1e-320"], ["--epsilon", "50"]])
def test_extreme_privacy_losses_read_as_certainty_not_a_crash(capsys, argv):
    # issue 13: these overflowed e^eps (OverflowError tracebacks). With a huge privacy loss every posterior bound
    # is 1 (the attacker can be certain) and the test's power is 1.
    from cli_run import run_json

    d = run_json(capsys, "interpret", *argv)
    columns = d["posterior"]["columns"]
    assert columns and all(0.0 <= v <= 1.0 for col in columns.values() for v in col)
    # the columns driven by the huge loss (all but the Markov-type "rest known" zCDP bound, which is independent of
    # rho by construction: E[ratio] = 1, paper 004 Sec. 7.4.1) say certainty
    assert all(v == 1.0 for name, col in columns.items() if name != "zcdp_rest_known" for v in col)
