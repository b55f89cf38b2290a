"""--output of randomize and estimate is checked before any work: '' (estimate used to skip the write silently and
exit 0) or a name without .csv/.parquet/.pq (refused only after the work) is one line naming --output, exit 2, and
nothing is written (bad-input sweep, session 11)."""

import numpy as np
import pytest
from cli_run import run

from sufficientdp.io import write_reports


@pytest.mark.parametrize("output", ["", "abc", "x.txt"])
@pytest.mark.parametrize("command", ["randomize", "estimate"])
def test_an_output_without_a_table_format_is_refused_first(tmp_path, capsys, monkeypatch, command, output):
    src = tmp_path / "in.csv"
    write_reports(src, (np.random.default_rng(0).random((30, 2)) < 0.4).astype(np.uint8))
    monkeypatch.chdir(tmp_path)
    argv = [command, "--input", str(src), "--q", "0.25", "--output", output, "--quiet"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sufficientdp: error: --output: file ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]  # nothing written, no temporary file
