"""Fixtures shared by the engine tests: a record of the careful CSV reader's hand-overs, and Parquet files of 0/1
columns with chosen row groups and column type."""

import numpy as np
import pytest

import sufficientdp.io as sio


@pytest.fixture
def careful_skips(monkeypatch):
    """The ``skip`` of every call of the careful CSV reader (the rows a fast reader had yielded before handing
    over), in order."""
    skips = []
    careful = sio._csv_stdlib_columns

    def spy(p, path, batch_rows, skip=0, max_cells=None):
        skips.append(skip)
        return careful(p, path, batch_rows, skip, max_cells)

    monkeypatch.setattr(sio, "_csv_stdlib_columns", spy)
    return skips


@pytest.fixture
def write_parquet():
    """``write(path, data, row_group_size, dtype=np.uint8)``: the columns of ``data`` as ``b0``, ``b1``, … in row
    groups of ``row_group_size`` rows."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")

    def write(path, data, row_group_size, dtype=np.uint8):
        pq.write_table(pa.table({f"b{j}": data[:, j].astype(dtype) for j in range(data.shape[1])}), path,
                       row_group_size=row_group_size)

    return write


@pytest.fixture
def hive_named_file(tmp_path):
    """``make(ext)``: the 3 x 3 identity as report file ``flag=1/r<ext>`` (a folder named like a hive partition,
    which DuckDB's readers would turn into an extra column ``flag``)."""
    from sufficientdp.io import write_reports

    def make(ext):
        folder = tmp_path / "flag=1"
        folder.mkdir(exist_ok=True)
        write_reports(folder / f"r{ext}", np.eye(3, dtype=np.uint8))
        return folder / f"r{ext}"

    return make
