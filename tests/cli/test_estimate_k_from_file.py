"""``estimate`` takes k (reports per person) from the file ``randomize`` wrote (issue 11: a k = 3 file estimated
without ``--reports`` silently reported 3x too many people).

The input is known, so each estimate is checked against the true count of people with the bit set: the estimator
is unbiased with sd(d_hat_j) = sqrt(N q (1 - q) / k) / (1 - 2q) (N people, k reports each, every report's bit flipped
independently with probability q), and a correct implementation lands within 6 sd of the truth except with
probability below 2e-9 per bit (normal tail; the seeds are fixed, so a pass is reproducible). The wrong N (3N when
k = 1 is assumed) is off by about 2 * truth, more than 50 sd here. Each estimate is also checked against the direct
computation (count / k - N q) / (1 - 2q) from the counts printed by ``aggregate``.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from cli_run import run, run_json

from sufficientdp.io import read_metadata, sidecar_path, write_reports

PEOPLE, K, Q = 2000, 3, 0.25
PROBS = (0.1, 0.5, 0.9)  # bit j is set for about PROBS[j] of the people
SD = math.sqrt(PEOPLE * Q * (1 - Q) / K) / (1 - 2 * Q)  # 22.4 people


@pytest.fixture(scope="module")
def truth_input(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, np.ndarray]:
    rng = np.random.default_rng(20261127)
    data = (rng.random((PEOPLE, len(PROBS))) < PROBS).astype(np.uint8)
    path = tmp_path_factory.mktemp("k3") / "true.csv"
    write_reports(path, data)
    return str(path), data.sum(axis=0)


def _randomize(capsys: pytest.CaptureFixture[str], src: str, out: str) -> None:
    summary = run_json(capsys, "randomize", "--q", str(Q), "--input", src, "--output", out, "--reports", str(K),
                       "--seed", "7")
    assert summary["input_rows"] == PEOPLE and summary["reports"] == K * PEOPLE
    assert summary["reports_per_person"] == K


def _check_against_truth(d: dict, counts: list[int], truth: np.ndarray, k: int = K) -> None:
    assert d["population"] == PEOPLE  # people, not the K * PEOPLE rows of the file
    assert d["reports"] == k
    for rec, count, true in zip(d["estimates"], counts, truth):
        assert rec["count"] == count
        direct = (count / k - PEOPLE * Q) / (1 - 2 * Q)
        assert rec["estimate"] == pytest.approx(direct, rel=1e-12, abs=1e-9)
        assert rec["std_error"] == pytest.approx(SD, rel=1e-12)
        assert abs(rec["estimate"] - true) < 6 * SD, (rec["estimate"], true)


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_estimate_reads_k_from_the_file(capsys: pytest.CaptureFixture[str], tmp_path, truth_input,
                                        suffix: str) -> None:
    src, truth = truth_input
    out = str(tmp_path / f"reports.{suffix}")
    _randomize(capsys, src, out)
    meta = read_metadata(out)
    assert meta is not None and meta["reports"] == K and meta["q"] == Q and meta["bits"] == len(PROBS)
    # The metadata lives in the CSV sidecar, or in the Parquet file itself (no sidecar).
    assert sidecar_path(out).is_file() == (suffix == "csv")
    counts = run_json(capsys, "aggregate", "--input", out)["bit_counts"]
    assert sum(run_json(capsys, "aggregate", "--input", out)["weight_histogram"]) == K * PEOPLE

    d = run_json(capsys, "estimate", "--input", out)  # no --q, no --reports
    assert d["settings_from"] == "file metadata" and d["reports_from"] == "file metadata"
    assert d["q"] == Q and d["warnings"] == []
    _check_against_truth(d, counts, truth)
    # Giving the file's own values is accepted and changes nothing.
    again = run_json(capsys, "estimate", "--input", out, "--reports", str(K), "--q", str(Q))
    assert again["estimates"] == d["estimates"]

    code, text, err = run(capsys, "estimate", "--input", out)
    assert code == 0 and err == ""
    assert text.splitlines()[0].startswith(f"N = {PEOPLE} people, k = {K}, q = 0.25 (from the file metadata)")


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_reports_that_contradict_the_file_exit_2(capsys: pytest.CaptureFixture[str], tmp_path, truth_input,
                                                 suffix: str) -> None:
    src, _ = truth_input
    out = str(tmp_path / f"reports.{suffix}")
    _randomize(capsys, src, out)
    for flag in ("--json", "--quiet"):
        code, text, err = run(capsys, "estimate", "--input", out, "--reports", "1", flag)
        assert code == 2 and text == ""
        assert err.count("\n") == 1 and err.startswith("sufficientdp: error: ")
        assert "--reports 1 but the file holds 3 reports per person" in err
    code, _, err = run(capsys, "estimate", "--input", out, "--q", "0.2")
    assert code == 2 and err.count("\n") == 1 and "--q 0.2" in err and "q = 0.25" in err


def _strip_metadata(tmp_path, suffix: str, out: str) -> str:
    """A copy of the randomized file without its metadata (a file made by another tool)."""
    bare = str(tmp_path / f"bare.{suffix}")
    if suffix == "csv":
        shutil.copyfile(out, bare)
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(out)
        pq.write_table(table.replace_schema_metadata(None), bare)
    assert read_metadata(bare) is None
    return bare


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_file_without_metadata_says_k_is_a_default(capsys: pytest.CaptureFixture[str], tmp_path, truth_input,
                                                   suffix: str) -> None:
    src, truth = truth_input
    out = str(tmp_path / f"reports.{suffix}")
    _randomize(capsys, src, out)
    bare = _strip_metadata(tmp_path, suffix, out)

    # No q anywhere: refused, one line, exit 2.
    code, text, err = run(capsys, "estimate", "--input", bare)
    assert code == 2 and text == "" and err.count("\n") == 1 and "carries no metadata" in err and "--q" in err

    # q given, k not: k = 1 is assumed, and both outputs say so.
    d = run_json(capsys, "estimate", "--input", bare, "--q", str(Q))
    assert d["reports"] == 1 and d["reports_from"] == "default"
    assert d["population"] == K * PEOPLE  # rows: what k = 1 means (the reason it must be said)
    assert any("k = 1 report per person is a default" in w and "--reports" in w for w in d["warnings"])
    code, text, err = run(capsys, "estimate", "--input", bare, "--q", str(Q), "--quiet")
    assert code == 0
    assert text.splitlines()[0].startswith(f"N = {K * PEOPLE} people, k = 1 (default), q = 0.25")
    assert "warning: k = 1 report per person is a default" in err

    # q and k given: the command line's values, no warning, and the right N.
    counts = run_json(capsys, "aggregate", "--input", bare)["bit_counts"]
    d = run_json(capsys, "estimate", "--input", bare, "--q", str(Q), "--reports", str(K))
    assert d["reports_from"] == "command line" and d["warnings"] == []
    assert d["settings_from"] == "command line (the file carries no metadata)"
    _check_against_truth(d, counts, truth)
    code, text, err = run(capsys, "estimate", "--input", bare, "--q", str(Q), "--reports", str(K), "--quiet")
    assert code == 0 and err == "" and "(default)" not in text


def test_metadata_json_is_what_randomize_ran(capsys: pytest.CaptureFixture[str], tmp_path, truth_input) -> None:
    # The sidecar is plain JSON naming q, k and L (readable by other tools).
    src, _ = truth_input
    out = tmp_path / "reports.csv"
    _randomize(capsys, src, str(out))
    side = json.loads(sidecar_path(out).read_text())
    assert side == {"bits": len(PROBS), "q": Q, "reports": K, "version": 1}
