"""``sufficientdp estimate --joint em`` (issue 10): convergence report, bootstrap intervals, progress, errors.

Run in process through ``sufficientdp.cli.main.main``. The reports are simulated here with numpy (every bit flipped
independently with probability q), written with ``sufficientdp.io.write_reports``.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest

from sufficientdp.cli.main import main
from sufficientdp.io import write_reports

Q = 0.125  # dyadic, so the effective q of the CLI is exactly this value


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3000 people, L = 3: 1500 hold 110, 1000 hold 000, 500 hold 011 (bit 0 first); five vectors nobody holds, so
    the inverse estimate has negative cells and the MLE lies on the boundary."""
    rng = np.random.default_rng(10)
    people = np.array([[1, 1, 0]] * 1500 + [[0, 0, 0]] * 1000 + [[0, 1, 1]] * 500, dtype=np.uint8)
    noisy = people ^ (rng.random(people.shape) < Q).astype(np.uint8)
    path = tmp_path_factory.mktemp("joint") / "reports.csv"
    write_reports(path, noisy)
    return path


@pytest.mark.slow
def test_json_reports_convergence_and_bootstrap_intervals(capsys: pytest.CaptureFixture[str],
                                                          reports: Path) -> None:
    argv = ["estimate", "--q", str(Q), "--input", str(reports), "--joint", "em", "--top", "3", "--bootstrap", "40",
            "--seed", "5", "--json"]
    code, out, _ = _run(capsys, *argv)
    assert code == 0
    d = json.loads(out)["joint"]
    assert d["method"] == "em" and d["solver"] == "lbfgs" and d["converged"] is True and "warning" not in d
    assert d["status"].startswith("converged after") and d["iterations"] >= 1 and d["tol"] == 1e-3
    assert d["max_iter"] == 10_000 and d["log_likelihood"] < 0 and d["gap_bound"] >= 0
    assert d["interval"] == "parametric-bootstrap" and d["bootstrap"] == 40 and d["bootstrap_unconverged"] == 0
    assert [t["vector"] for t in d["top"]] == ["110", "000", "011"]
    for t, n in zip(d["top"], (1500, 1000, 500)):
        assert t["lower"] <= t["estimate"] <= t["upper"] and t["std_error"] > 0
        assert abs(t["estimate"] - n) < 0.1 * n
    # Same seed, same output.
    assert _run(capsys, *argv)[1] == out


def test_text_reports_convergence_intervals_and_progress(capsys: pytest.CaptureFixture[str],
                                                         reports: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tqdm.std

    clock = [0.0]

    def slow_clock() -> float:  # every reading is a second later: the bars pass their 2 s delay and are drawn
        clock[0] += 1.0
        return clock[0]

    monkeypatch.setattr(tqdm.std, "time", slow_clock)
    monkeypatch.setattr(importlib.import_module("sufficientdp.cli._common"), "clock", slow_clock)  # bar creation
    code, out, err = _run(capsys, "estimate", "--q", str(Q), "--input", str(reports), "--joint", "em",
                          "--bootstrap", "5", "--seed", "1")
    assert code == 0
    assert "joint EM: converged after" in out and "log-likelihood" in out and "certified within" in out
    assert "95% intervals: parametric bootstrap, 5 replicates" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("110 "))
    assert "[" in line and "]" in line
    assert "joint EM fit" in err and "bootstrap" in err  # the progress bars (tqdm, on stderr)
    code, out, _ = _run(capsys, "estimate", "--q", str(Q), "--input", str(reports), "--joint", "em", "--quiet")
    assert code == 0 and "no intervals for the EM estimate (add --bootstrap B" in out


def test_not_converged_is_loud(capsys: pytest.CaptureFixture[str], reports: Path) -> None:
    code, out, _ = _run(capsys, "estimate", "--q", str(Q), "--input", str(reports), "--joint", "em", "--max-iter",
                        "1", "--quiet")
    assert code == 0
    assert out.startswith("WARNING: the joint EM fit did NOT converge")
    assert "joint EM: NOT CONVERGED after 1 iterations (lbfgs; max_iter reached)" in out
    code, out, _ = _run(capsys, "estimate", "--q", str(Q), "--input", str(reports), "--joint", "em", "--max-iter",
                        "1", "--json")
    d = json.loads(out)["joint"]
    assert d["converged"] is False and d["status"].startswith("NOT CONVERGED") and "did NOT converge" in d["warning"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--joint", "inverse", "--bootstrap", "10"], "--bootstrap needs --joint em"),
        (["--bootstrap", "10"], "--bootstrap needs --joint em"),
        (["--joint", "em", "--bootstrap", "10001"], r"bootstrap must be an integer in [1, 10000]; got 10001"),
        (["--joint", "em", "--bootstrap", "0"], "bootstrap must be an integer in [1,"),
        (["--joint", "em", "--max-iter", "0"], "max-iter must be an integer in [1,"),
        (["--joint", "em", "--bootstrap", "3", "--seed", "-1"], "seed must be an integer in [0, 2**128 - 1]; got -1"),
    ],
)
def test_bad_options(capsys: pytest.CaptureFixture[str], reports: Path, extra: list[str], message: str) -> None:
    code, out, err = _run(capsys, "estimate", "--q", str(Q), "--input", str(reports), *extra)
    assert code == 2 and out == ""
    assert message in err
