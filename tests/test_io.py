"""Report files: CSV and Parquet round trips, atomic writes, clear errors."""

import numpy as np
import pytest

from sufficientdp import DataError, ParameterError
from sufficientdp.io import read_reports, write_reports


@pytest.mark.parametrize("ext", ["csv", "parquet", "pq"])
def test_round_trip(tmp_path, ext):
    rng = np.random.default_rng(0)
    data = (rng.random((257, 70)) < 0.4).astype(np.uint8)
    f = tmp_path / f"x.{ext}"
    write_reports(f, data)
    back, names = read_reports(f)
    assert np.array_equal(back, data) and names == [f"bit{j}" for j in range(70)]


def test_empty_file_round_trip(tmp_path):
    f = tmp_path / "e.csv"
    write_reports(f, np.zeros((0, 3), dtype=np.uint8), ["a", "b", "c"])
    back, names = read_reports(f)
    assert back.shape == (0, 3) and names == ["a", "b", "c"]


def test_failed_write_leaves_nothing(tmp_path):
    f = tmp_path / "out.csv"
    f.write_text("previous contents\n")
    with pytest.raises(DataError):
        write_reports(f, np.array([[0, 2]]))
    assert f.read_text() == "previous contents\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_errors(tmp_path):
    with pytest.raises(ParameterError, match="must end in .csv, .parquet or .pq"):
        read_reports(tmp_path / "x.json")
    with pytest.raises(DataError, match="does not exist"):
        read_reports(tmp_path / "missing.csv")
    ragged = tmp_path / "r.csv"
    ragged.write_text("a,b\n1\n")
    with pytest.raises(DataError, match="line 2: 1 values, expected 2"):
        read_reports(ragged)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="is empty"):
        read_reports(empty)


def test_iter_reports_streams_parquet_in_batches_equal_to_read_reports(tmp_path):
    pytest.importorskip("pyarrow")
    from sufficientdp.io import iter_reports

    rng = np.random.default_rng(5)
    data = (rng.random((1000, 9)) < 0.4).astype(np.uint8)
    for ext in (".parquet", ".csv"):
        path = tmp_path / f"r{ext}"
        write_reports(path, data)
        batches = list(iter_reports(path, batch_rows=128))
        assert all(b.shape[0] <= 128 for b, _ in batches)
        whole, names = read_reports(path)
        np.testing.assert_array_equal(np.concatenate([b for b, _ in batches]), whole)
        np.testing.assert_array_equal(whole, data)
        assert batches[0][1] == names


def test_iter_reports_names_column_and_absolute_row_of_a_bad_value(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from sufficientdp.io import iter_reports

    col = np.zeros(1000, dtype=np.int64)
    col[777] = 2
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"ok": np.ones(1000, dtype=np.int64), "bad_col": col}), path, row_group_size=100)
    with pytest.raises(DataError, match=r"'bad_col'.*row 777"):
        list(iter_reports(path, batch_rows=100))
