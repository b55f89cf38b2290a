"""``account --rounds`` and ``calibrate --rounds``: composed guarantees over T rounds, pinned to independent truth.

The exact worst eta over 30 rounds at L = 1 and N = 4 comes from tests/oracles/rounds.py (every tuple of 30
histograms, grouped by how often each histogram occurred; no product code).
"""

from __future__ import annotations

import pytest
from tests.cli.cli_run import run, run_json
from tests.oracles import rounds as oracle

from sufficientdp.accounting.rounds import rounds_tail


@pytest.mark.slow
def test_account_rounds_json_is_the_composed_bound_above_the_exact_worst(
        capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "account", "--rounds", "30", "--q", "0.3", "--bits", "1", "--population", "4",
                 "--epsilon", "3")
    assert d["mechanism"] == "campaign" and d["rounds"] == 30 and d["epsilon_is"] == "total over the rounds"
    assert d["kind"] == "bound" and d["scope"] == "all-collections" and "30 rounds together" in d["scope_rounds"]
    exact = oracle.worst_eta_l1_many_rounds(4, 0.3, 30, 3.0)  # about 0.05
    assert 0.01 < exact <= d["eta"] < 1.0
    lib = rounds_tail(q=0.3, bits=1, population=4, epsilon=3.0, rounds=30)
    assert d["eta"] == lib.eta and d["delta"] == lib.delta_upper
    assert d["fallback"]["eta"] >= d["eta_composed"] and "union bound" in d["fallback"]["rule"]
    assert d["one_round"]["eta"] <= d["eta"]  # one round at the same total epsilon leaks less


@pytest.mark.slow
def test_account_rounds_text_states_kind_scope_and_fallback(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "account", "--rounds", "3", "--q", "0.25", "--bits", "2", "--population", "3",
                       "--epsilon", "1", "--homogeneous", "--values", "fixed", "--quiet")
    assert code == 0
    assert "bound (bound, all-collections): over the 3 rounds together" in out
    assert "epsilon is the total over the 3 rounds" in out
    assert "fallback" in out and "simple rule, valid and loose" in out
    assert "homogeneous" in out and "a lower reference, not a guarantee" in out
    d = run_json(capsys, "account", "--rounds", "3", "--q", "0.25", "--bits", "2", "--population", "3",
                 "--epsilon", "1", "--homogeneous", "--values", "fixed")
    worst, _ = oracle.worst_fixed(2, 3, 0.25, 3, [1.0])
    assert d["homogeneous"]["eta_lower"] - 1e-12 <= worst[0] <= d["eta"]


@pytest.mark.slow
def test_calibrate_rounds_meets_the_total_target_against_the_exact_worst(
        capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "calibrate", "--rounds", "30", "--bits", "1", "--population", "4", "--epsilon", "3",
                 "--eta", "0.05")
    assert d["rounds"] == 30 and d["kind"] == "bound" and d["scope"] == "all-collections"
    assert "T rounds together" in d["guarantee"]
    assert d["eta_at_q"] <= 0.05 and d["q"] < d["local_q"]
    assert oracle.worst_eta_l1_many_rounds(4, d["q"], 30, 3.0) <= 0.05  # the guarantee holds, exactly checked
    code, out, _ = run(capsys, "calibrate", "--rounds", "30", "--bits", "1", "--population", "4", "--epsilon", "3",
                       "--eta", "0.05", "--quiet")
    assert code == 0 and "rounds T                  30" in out and "the 30 rounds together (bound)" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["account", "--rounds", "1001", "--q", "0.3", "--bits", "2", "--population", "10", "--epsilon", "1"],
     "rounds must be an integer >= 1 and <= 1000"),
    (["account", "--rounds", "1000", "--reports", "11", "--q", "0.3", "--bits", "2", "--population", "10",
      "--epsilon", "1"], "rounds * reports must be <= 10000"),
    (["account", "--rounds", "3", "--mechanism", "rr", "--q", "0.3", "--epsilon", "1"], "--rounds applies to"),
    (["account", "--rounds", "3", "--q", "0.3", "--epsilon", "1"], "requires --bits"),
    (["account", "--q", "0.3", "--epsilon", "1"], "--mechanism is required"),
    (["calibrate", "--rounds", "3", "--method", "mc", "--bits", "2", "--population", "10", "--epsilon", "1"],
     "rounds > 1 supports method"),
    (["calibrate", "--rounds", "1001", "--bits", "2", "--population", "10", "--epsilon", "1"], "rounds must be"),
])
def test_rounds_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err


def test_account_campaign_without_rounds_is_the_one_release_bound(capsys: pytest.CaptureFixture[str]) -> None:
    # T = 1: the one-release bounds (eta as ``tail`` gives it, delta from proven_delta), nothing composed
    from sufficientdp.ratio.proven import proven_delta

    args = ("--q", "0.25", "--bits", "2", "--population", "3", "--epsilon", "1")
    d = run_json(capsys, "account", "--mechanism", "campaign", *args)
    assert d["rounds"] == 1 and d["used"] == "one round" and d["eta_composed"] is None and d["fallback"] is None
    assert d["kind"] == "bound" and d["scope"] == "all-collections" and "one round" in d["scope_rounds"]
    t = run_json(capsys, "tail", *args)
    assert d["eta"] == t["eta"] == d["one_round"]["eta"]
    assert d["delta"] == proven_delta(q=0.25, bits=2, population=3, epsilon=1.0).delta
    eta, delta = oracle.worst_fixed(2, 3, 0.25, 1, [1.0])  # every pair of collections, brute force
    assert eta[0] - 1e-12 <= d["eta"] < 1.0 and delta[0] - 1e-12 <= d["delta"] < 1.0
    code, out, _ = run(capsys, "account", "--mechanism", "campaign", *args, "--quiet")
    assert code == 0
    assert "one round, every pair of neighbouring collections" in out and "P[L > 1] <= eta" in out
    assert "rounds together" not in out and "nothing composed" in out and "fallback" not in out
