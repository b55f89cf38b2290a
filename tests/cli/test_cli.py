"""The CLI, tested in-process: JSON shapes, the paper's numbers, files in and out, one-line errors with exit 2."""

import argparse
import math

import numpy as np
import pytest
from cli_run import run, run_json

from sufficientdp.io import read_reports, write_reports


@pytest.mark.parametrize(
    "bits, population, epsilon, method, expected, tol",
    [
        # seed 001 §3.3, first table (lambda = 2 written as e^0.693): 0.2446 and 0.2109
        (5, 1000, 0.693, "paper-sigma", 0.2446, 5e-5),
        (5, 3000, 0.693, "paper-sigma", 0.2109, 5e-5),
        # ... at epsilon = ln 2 exactly eq. (3.12) gives 0.24454 (see docs/reproduction.md); (3.13) gives 0.2449
        (5, 1000, math.log(2), "paper-sigma", 0.24454, 5e-6),
        (5, 1000, math.log(2), "paper-simplified", 0.2449, 5e-5),
        # seed 001 §3.3, second table (lambda = e^2)
        (5, 1000, 2.0, "paper-sigma", 0.1692, 5e-5),
        (5, 3000, 2.0, "paper-sigma", 0.1424, 5e-5),
        (5, 5000, 2.0, "paper-sigma", 0.1310, 5e-5),
        # seed 001 §4: L = 40, N = 10M, lambda = e^2 -> 0.351; local DP 0.465 and 0.4875
        (40, 10_000_000, 2.0, "paper-sigma", 0.351, 5e-4),
        (5, 1000, math.log(2), "local", 0.465, 5e-4),
        (40, 10_000_000, 2.0, "local", 0.4875, 5e-5),
    ],
)
def test_calibrate_reproduces_paper(capsys, bits, population, epsilon, method, expected, tol):
    d = run_json(capsys, "calibrate", "--bits", str(bits), "--population", str(population), "--epsilon",
                 repr(epsilon), "--method", method)
    assert abs(d["q"] - expected) <= tol
    for key in ("q", "method", "bits", "population", "epsilon", "sigma_per_sqrt_n", "local_q", "gain_vs_local"):
        assert key in d
    assert d["method"] == method and d["bits"] == bits and d["population"] == population


@pytest.mark.slow
def test_calibrate_text_and_max_weight(capsys):
    code, out, _err = run(capsys, "calibrate", "--bits", "12", "--population", "2000", "--epsilon", "1",
                         "--max-weight", "1")
    # proven over the weight <= 1 domain: a bound for every pair of collections of that domain
    assert code == 0 and "every pair of neighbouring collections" in out and "(2)" in out
    code, out, _err = run(capsys, "calibrate", "--bits", "64", "--population", "100000", "--epsilon", "1",
                         "--max-weight", "1", "--method", "homogeneous")
    assert code == 0 and "unproven" in out and "homogeneous configuration only" in out


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["calibrate", "--bits", "0", "--population", "10", "--epsilon", "1"],
         "bits must be an integer in [1, 4096]; got 0"),
        (["calibrate", "--bits", "5", "--population", "10", "--epsilon", "-1"], "epsilon must be in (0, 50]; got -1"),
        (["calibrate", "--bits", "5", "--population", "10", "--epsilon", "0"], "epsilon must be in (0, 50]"),
        # issue 13: huge or non-finite numbers are refused before any work
        (["calibrate", "--bits", "2", "--population", "100", "--epsilon", "1e308", "--method", "paper-sigma"],
         "epsilon must be in (0, 50]; got 1e308"),
        (["calibrate", "--bits", "5", "--population", "10", "--epsilon", "inf"], "epsilon must be a finite number"),
        (["tail", "--population", "1e29", "--bits", "2", "--q", "0.1", "--epsilon", "1"],
         "population must be an integer in [1, 1000000000000]; got '1e29'"),
        (["calibrate", "--bits", "2", "--population", "100", "--epsilon", "1", "--method", "mc", "--samples",
          "99999999999999"], "samples must be an integer in [1, 100000000]"),
        (["calibrate", "--bits", "100000", "--population", "100", "--epsilon", "1"],
         "bits must be an integer in [1, 4096]; got 100000"),
        (["tail", "--bits", "5", "--population", "10", "--q", "0.7", "--epsilon", "1"], "q must be in (0, 0.5)"),
        (["randomize", "--q", "0.2", "--reports", "1e29", "--input", "a.csv", "--output", "b.csv"],
         "reports must be an integer in [1, 1000]"),
        (["calibrate", "--bits", "x", "--population", "10", "--epsilon", "1"], "bits must be an integer"),
        (["calibrate", "--bits", "5", "--population", "10"], "required: --epsilon"),
        (["calibrate", "--bits", "5", "--population", "10", "--epsilon", "1", "--method", "z"],
         "method must be one of proven, homogeneous"),
        (["calibrate", "--bits", "5", "--population", "10", "--epsilon", "1", "--method", "certified"],
         "'certified' was renamed 'homogeneous'"),
        (["tail", "--bits", "5", "--population", "10", "--q", "0.2", "--epsilon", "1", "--outlier-bits", "2"],
         "--outlier-bits does not apply to --method proven"),
        (["estimate", "--q", "0.2", "--input", "nope.csv"], "does not exist"),
        (["aggregate", "--input", "file.txt"], "must end in .csv, .parquet or .pq"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("sufficientdp: error:")
    assert fragment in err
    assert "Traceback" not in err


def test_estimate_bad_q_names_parameter(capsys, tmp_path):
    f = tmp_path / "r.csv"
    write_reports(f, np.array([[0, 1]]))
    code, _, err = run(capsys, "estimate", "--q", "0.7", "--input", str(f))
    assert code == 2 and "q must be in (0, 0.5); got 0.7" in err


def test_bad_file_contents(capsys, tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("a,b\n0,1\n1,2\n")
    code, _, err = run(capsys, "aggregate", "--input", str(f))
    assert code == 2 and "line 3" in err and "0 or 1" in err


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_shell_flow_randomize_aggregate_estimate(capsys, tmp_path, ext):
    rng = np.random.default_rng(5)
    n, bits = 4000, 6
    truth = (rng.random((n, bits)) < np.linspace(0.05, 0.6, bits)).astype(np.uint8)
    src = tmp_path / f"true.{ext}"
    out = tmp_path / f"rand.{ext}"
    write_reports(src, truth, [f"feature_{j}" for j in range(bits)])
    d = run_json(capsys, "randomize", "--q", "0.2", "--input", str(src), "--output", str(out), "--reports", "2",
                 "--seed", "11")
    assert d["reports"] == 2 * n and d["randomness"] == "numpy-generator"
    data, names = read_reports(out)
    assert data.shape == (2 * n, bits) and names == [f"feature_{j}" for j in range(bits)]
    agg = run_json(capsys, "aggregate", "--input", str(out))
    assert agg["reports"] == 2 * n and agg["bit_counts"] == data.sum(axis=0).tolist()
    est = run_json(capsys, "estimate", "--q", "0.2", "--input", str(out), "--reports", "2")
    assert len(est["estimates"]) == bits
    true_counts = truth.sum(axis=0)
    for e, t in zip(est["estimates"], true_counts):
        assert {"estimate", "lower", "upper", "std_error"} <= set(e)
        # 6 standard errors: fails with probability < 1e-8 per bit for a correct implementation
        assert abs(e["estimate"] - t) < 6 * e["std_error"]
    # same seed, same output
    out2 = tmp_path / f"rand2.{ext}"
    run_json(capsys, "randomize", "--q", "0.2", "--input", str(src), "--output", str(out2), "--reports", "2",
             "--seed", "11")
    assert np.array_equal(read_reports(out2)[0], data)


def test_estimate_writes_table(capsys, tmp_path):
    src = tmp_path / "r.csv"
    write_reports(src, np.array([[0, 1], [1, 1], [0, 0]]))
    out = tmp_path / "est.csv"
    code, _text, err = run(capsys, "estimate", "--q", "0.1", "--input", str(src), "--output", str(out))
    assert code == 0, err
    header = out.read_text().splitlines()[0]
    assert header == "column,count,estimate,lower,upper,std_error"


def test_randomize_without_seed_uses_csprng(capsys, tmp_path):
    src = tmp_path / "t.csv"
    write_reports(src, np.zeros((50, 3), dtype=np.uint8))
    d = run_json(capsys, "randomize", "--q", "0.3", "--input", str(src), "--output", str(tmp_path / "o.csv"))
    assert d["randomness"] in ("aes-256-ctr", "os-urandom")


def test_demo_json(capsys):
    d = run_json(capsys, "demo", "--population", "20000", "--bits", "8", "--seed", "3", "--method", "paper-sigma")
    assert d["reports"] == 20000 and len(d["estimates"]) == 8
    assert d["calibration"]["method"] == "paper-sigma"
    # 8 bits, 95% CIs: at least 5 covered fails with probability < 1e-3 for a correct implementation
    assert d["covered"] >= 5


@pytest.mark.slow
def test_demo_text(capsys):
    code, out, _err = run(capsys, "demo", "--population", "5000", "--bits", "4", "--seed", "1")
    assert code == 0 and "true" in out and "estimate" in out and "local DP would need" in out


@pytest.mark.parametrize("method", ["inverse", "em"])
def test_estimate_joint(capsys, tmp_path, method):
    np.random.default_rng(8)
    n = 20000
    truth = np.zeros((n, 3), dtype=np.uint8)
    truth[: n // 2] = [1, 1, 0]  # half the people hold 110, the rest 000
    src = tmp_path / "t.csv"
    out = tmp_path / "r.csv"
    write_reports(src, truth)
    run_json(capsys, "randomize", "--q", "0.1", "--input", str(src), "--output", str(out), "--seed", "4")
    d = run_json(capsys, "estimate", "--q", "0.1", "--input", str(out), "--joint", method, "--top", "2")
    top = d["joint"]["top"]
    assert {t["vector"] for t in top} == {"110", "000"}
    for t in top:
        assert abs(t["estimate"] - n / 2) < 0.05 * n
    code, text, _err = run(capsys, "estimate", "--q", "0.1", "--input", str(out), "--joint", method)
    assert code == 0 and "most frequent vectors" in text


def test_estimate_joint_too_many_bits(capsys, tmp_path):
    src = tmp_path / "w.csv"
    write_reports(src, np.zeros((2, 21), dtype=np.uint8))
    code, _, err = run(capsys, "estimate", "--q", "0.1", "--input", str(src), "--joint", "inverse")
    assert code == 2 and "bits in [1, 20]" in err


@pytest.mark.slow
def test_tail_json(capsys):
    d = run_json(capsys, "tail", "--bits", "5", "--population", "1000", "--q", "0.169199", "--epsilon", "2",
                 "--outlier-bits", "5", "--method", "homogeneous")
    for key in ("eta", "eta_lower", "eta_upper", "delta", "method", "scope"):
        assert key in d
    # seed 001 §3.3: exact P[R >= e^2] = 0.003706 at this q (docs/reproduction.md, exact enumeration)
    assert d["method"] == "homogeneous" and 0.003706 <= d["eta"] <= 0.0037072 and d["scope"] == "homogeneous"
    p = run_json(capsys, "tail", "--bits", "5", "--population", "1000", "--q", "0.169199", "--epsilon", "2")
    # the default covers every pair of collections, so it is at least the homogeneous value
    assert p["method"] == "proven" and p["scope"] == "all-collections" and p["eta"] >= d["eta"]
    mc = run_json(capsys, "tail", "--bits", "5", "--population", "1000", "--q", "0.169199", "--epsilon", "2",
                  "--method", "mc", "--seed", "2", "--outlier-bits", "5", "--direction", "forward")
    # exact value 0.0037063002 (ratio.tail.exact_tail, bracket narrower than 1e-10)
    assert mc["kind"] == "estimate" and mc["eta_lower"] - 1e-9 <= 0.0037063002 <= mc["eta_upper"] + 1e-9


@pytest.mark.slow
def test_tail_text_and_errors(capsys):
    code, out, err = run(capsys, "tail", "--bits", "3", "--population", "50", "--q", "0.2", "--epsilon", "1")
    assert code == 0 and "rigorous upper bound" in out and "every pair of neighbouring collections" in out
    code, out, err = run(capsys, "tail", "--bits", "3", "--population", "50", "--q", "0.2", "--epsilon", "1",
                         "--method", "homogeneous")
    assert code == 0 and "rigorous upper bound" in out and "homogeneous configuration only" in out
    code, out, err = run(capsys, "tail", "--bits", "3", "--population", "50", "--q", "0.7", "--epsilon", "1")
    assert code == 2 and "q must be in (0, 0.5); got 0.7" in err and err.count("\n") == 1


def test_worst_case_json(capsys):
    d = run_json(capsys, "worst-case", "--bits", "2", "--population", "4", "--q", "0.1", "--epsilon", "3.1")
    for key in ("eta", "original", "modified", "homogeneous_eta"):
        assert key in d
    # docs/worst_case.md: D = {00,00,11,00} -> D_m = {00,00,11,11} has eta = 0.6622 > the paper's 0.0241
    assert d["eta"] == pytest.approx(0.6622288, abs=1e-6)
    assert d["homogeneous_eta"] == pytest.approx(0.0241144, abs=1e-6)


@pytest.mark.slow
def test_calibrate_proven_cli(capsys):
    d = run_json(capsys, "calibrate", "--bits", "5", "--population", "1000", "--epsilon", "2", "--eta", "0.001")
    assert d["method"] == "proven" and d["eta_target"] == 0.001 and "eta" not in d and d["eta_at_q"] <= 0.001
    assert d["scope"] == "all-collections" and d["kind"] == "bound"
    code, _, err = run(capsys, "calibrate", "--bits", "5", "--population", "1000", "--epsilon", "2", "--eta", "2")
    assert code == 2 and "eta must be in (0, 1); got 2" in err


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_aggregate_engines_agree(capsys, tmp_path, ext):
    rng = np.random.default_rng(12)
    f = tmp_path / f"r.{ext}"
    write_reports(f, (rng.random((500, 9)) < 0.3).astype(np.uint8))
    a = run_json(capsys, "aggregate", "--input", str(f), "--histogram")
    b = run_json(capsys, "aggregate", "--input", str(f), "--histogram", "--engine", "duckdb")
    assert a == b


def test_randomize_refuses_rows_above_max_weight(capsys, tmp_path):
    f = tmp_path / "true.csv"
    write_reports(f, np.array([[1, 0, 0], [1, 1, 0]], dtype=np.uint8))
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "randomize", "--q", "0.2", "--input", str(f), "--output", str(out),
                       "--max-weight", "1", "--seed", "1")
    assert code == 2 and "row 1 has 2 set bits; max_weight is 1" in err and err.count("\n") == 1
    assert not out.exists()  # nothing written
    code, _, _ = run(capsys, "randomize", "--q", "0.2", "--input", str(f), "--output", str(out),
                     "--max-weight", "2", "--seed", "1")
    assert code == 0 and out.exists()


def test_core_command_list_matches_the_parser() -> None:
    # main() skips loading the extra command modules when a core command runs; the list it uses must be complete.
    from sufficientdp.cli.main import _CORE_COMMANDS, build_parser

    parser = build_parser(only="")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(_CORE_COMMANDS)
    everything = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert {"account", "census", "compare", "interpret", "serve"} <= set(everything.choices)


def test_version_and_start_up_import_no_math() -> None:
    # `sufficientdp --version` and parsing a core command must not import scipy (start-up time, issue 10).
    import subprocess
    import sys

    code = ("import sys; from sufficientdp.cli.main import main, build_parser; main(['--version']); "
            "build_parser(only=''); print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    from sufficientdp import __version__

    assert out.strip().splitlines() == [f"sufficientdp {__version__}", "False"]


def test_a_small_calibration_loads_no_thread_pool_and_no_loss_distribution() -> None:
    # calibrate --bits 5 bounds its few pair types in the calling thread (threads only added GIL hand-overs) and
    # needs the result types, not the privacy-loss distribution code: neither is imported (start-up, issue 10).
    import subprocess
    import sys

    code = ("import sys; from sufficientdp.cli.main import main; "
            "main(['calibrate', '--bits', '5', '--population', '1000', '--epsilon', '0.693147', '--json']); "
            "print(sorted(m for m in ('concurrent.futures', 'sufficientdp.loss.distribution') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_internal_errors_are_one_line_exit_1_and_debug_shows_the_traceback(capsys, monkeypatch):
    # An unexpected exception inside a command: one line on stderr, exit 1, no traceback (issue 13); --debug
    # re-raises it.
    import sufficientdp.calibration as calibration

    def boom(**kwargs):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(calibration, "calibrate", boom)
    code, out, err = run(capsys, "calibrate", "--bits", "2", "--population", "10", "--epsilon", "1")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "internal error (ZeroDivisionError" in err and "Traceback" not in err
    with pytest.raises(ZeroDivisionError):
        from sufficientdp.cli.main import main

        main(["calibrate", "--bits", "2", "--population", "10", "--epsilon", "1", "--debug"])


def test_json_writes_infinity_as_a_string_and_nan_as_null(capsys):
    # Issue 11: "infinite epsilon" must not read like "not computed". One rule for every JSON writer
    # (sufficientdp._json); the command line's --json prints it on one line.
    import json
    import math

    from sufficientdp._json import jsonable
    from sufficientdp.cli._common import emit
    from sufficientdp.ratio.result import TailResult

    out = jsonable({"a": math.inf, "b": math.nan, "c": [-math.inf, 1.5], "d": np.float64(np.inf)})
    assert out == {"a": "inf", "b": None, "c": ["-inf", 1.5], "d": "inf"}
    json.dumps(out, allow_nan=False)
    res = TailResult(eta=1.0, eta_lower=None, eta_upper=math.inf, method="x", kind="bound", epsilon=1.0, q=0.2,
                     bits=1, population=2, delta=math.nan)
    d = jsonable(res.to_dict())
    assert d["eta_upper"] == "inf" and d["delta"] is None and d["eta_lower"] is None
    emit({"a": math.inf, "b": math.nan, "c": (np.int64(3), np.float32(0.5), np.array([1.0, -np.inf])), "n": None})
    assert capsys.readouterr().out == '{"a": "inf", "b": null, "c": [3, 0.5, [1.0, "-inf"]], "n": null}\n'


def test_output_that_is_the_input_is_refused(tmp_path):
    from sufficientdp.cli.main import main
    from sufficientdp.io import write_reports

    src = tmp_path / "in.csv"
    write_reports(src, np.array([[0, 1], [1, 0]], dtype=np.uint8))
    before = src.read_bytes()
    (tmp_path / "alias.csv").symlink_to(src)
    assert main(["randomize", "--input", str(src), "--output", str(src), "--q", "0.25"]) == 2
    assert main(["estimate", "--input", str(src), "--q", "0.25", "--output", str(tmp_path / "alias.csv")]) == 2
    assert src.read_bytes() == before


@pytest.mark.slow
def test_sigterm_during_writes_leaves_no_temporary_file(tmp_path):
    # A process writing report files again and again is sent SIGTERM: the write it was in must remove its
    # temporary file, and the process exits with 128 + 15.
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import numpy as np, itertools\n"
        "from sufficientdp.cli.main import _on_termination_unwind, _Terminated\n"
        "from sufficientdp.io import write_reports\n"
        "_on_termination_unwind()\n"
        "arr = (np.random.default_rng(0).random((300000, 16)) < 0.5).astype(np.uint8)\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    for i in itertools.count():\n"
        "        write_reports(f'out{i % 3}.csv', arr)\n"
        "except _Terminated as exc:\n"
        "    raise SystemExit(128 + exc.signum)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
