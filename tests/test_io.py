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


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_csv_header_with_comma_and_quote_round_trips(tmp_path, engine):
    # Drift bug (issue 11): the writer did not quote headers, so "a,b" became two columns its own reader rejected.
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    from sufficientdp.engines import tally_file

    arr = np.array([[0, 1, 1], [1, 1, 0], [1, 0, 0]], dtype=np.uint8)
    names = ["a,b", 'say "hi"', "plain"]
    path = tmp_path / "r.csv"
    write_reports(path, arr, columns=names)
    back, cols = read_reports(path)
    assert cols == names
    assert np.array_equal(back, arr)
    t, tallied_names = tally_file(path, engine=engine)
    assert tallied_names == names
    assert t.reports == 3
    assert list(t.bit_counts) == [2, 2, 1]


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_report_metadata_round_trip_and_stale_sidecar(tmp_path, ext):
    from sufficientdp.io import read_metadata, sidecar_path

    arr = np.array([[0, 1], [1, 1]], dtype=np.uint8)
    path = tmp_path / f"r.{ext}"
    meta = {"q": 0.2446000000927597, "reports": 3, "bits": 2}
    write_reports(path, arr, metadata=meta)
    assert read_metadata(path) == {**meta, "version": 1}
    back, _ = read_reports(path)  # the data are unchanged by the metadata
    assert np.array_equal(back, arr)
    # Rewriting the same name without metadata must not leave the old file's q and k attached to the new data.
    write_reports(path, arr)
    assert read_metadata(path) is None
    assert not sidecar_path(path).exists()


def test_report_metadata_is_validated(tmp_path):
    from sufficientdp.io import read_metadata, sidecar_path

    arr = np.zeros((2, 2), dtype=np.uint8)
    with pytest.raises(DataError, match="metadata bits=3"):
        write_reports(tmp_path / "a.csv", arr, metadata={"q": 0.25, "reports": 1, "bits": 3})
    with pytest.raises(DataError, match="q must be a number in \\(0, 0.5\\)"):
        write_reports(tmp_path / "a.csv", arr, metadata={"q": 0.75, "reports": 1, "bits": 2})
    assert not (tmp_path / "a.csv").exists()  # nothing half-written
    write_reports(tmp_path / "b.csv", arr)
    sidecar_path(tmp_path / "b.csv").write_text('{"q": 0.25, "reports": 0, "bits": 2, "version": 1}')
    with pytest.raises(DataError, match="reports must be an integer"):
        read_metadata(tmp_path / "b.csv")
    sidecar_path(tmp_path / "b.csv").write_text("not json")
    with pytest.raises(DataError, match="not valid JSON"):
        read_metadata(tmp_path / "b.csv")


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
@pytest.mark.parametrize("names", [["a", "a"], ["a", " a "], ["", "b"], ["a", "  "], ["a", 3]])
def test_write_reports_needs_distinct_non_blank_names(tmp_path, ext, names):
    # A repeated name had silently dropped a column (one dict key per name); a blank one wrote a file no reader takes.
    if ext == ".parquet":
        pytest.importorskip("pyarrow")
    path = tmp_path / f"r{ext}"
    with pytest.raises(ParameterError, match=r"columns must be distinct non-blank names, one per bit; got .* for bit [01]$"):
        write_reports(path, np.eye(2, dtype=np.uint8), columns=names)
    assert not path.exists()
