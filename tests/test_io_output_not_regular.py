"""An output path that exists and is not a regular file is refused before anything is written: the atomic rename
would replace it (bad-input sweep, session 11: run as root, `report design --output /dev/full` replaced the device
node with the HTML page). Tested with a named pipe, which any user can make."""

import os
import stat

import numpy as np
import pytest

from sufficientdp import ParameterError
from sufficientdp.io import write_reports, write_table
from sufficientdp.report.design import write_html


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
@pytest.mark.parametrize("name", ["out.csv", "out.parquet", "out.html"])
def test_a_named_pipe_is_not_replaced(tmp_path, name):
    target = tmp_path / name
    os.mkfifo(target)
    with pytest.raises(ParameterError, match="is not a regular file"):
        if name.endswith(".html"):
            write_html(target, "<html></html>")
        elif name.endswith(".csv"):
            write_table(target, {"a": [1, 2]})
        else:
            write_reports(target, np.array([[0, 1], [1, 0]], dtype=np.uint8))
    assert stat.S_ISFIFO(os.stat(target).st_mode)  # still the pipe
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file


def test_a_directory_is_not_replaced(tmp_path):
    target = tmp_path / "out.csv"
    target.mkdir()
    with pytest.raises(ParameterError, match="is a directory"):
        write_reports(target, np.array([[0, 1]], dtype=np.uint8))
    assert target.is_dir() and list(target.iterdir()) == []


def test_a_regular_file_is_still_replaced(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    write_reports(target, np.array([[0, 1]], dtype=np.uint8))
    assert target.read_text().splitlines()[0] == "bit0,bit1"
