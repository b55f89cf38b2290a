"""A Parquet file written by pandas with its index stored (``DataFrame.to_parquet`` of a filtered frame, or of a
frame with a named or multi-level index) holds the index as extra columns, named in the file's ``pandas`` metadata.
They are not report bits: every reader leaves them out, as ``pandas.read_parquet`` makes them the index again, and
the tally is that of the frame's own columns. A column of the same name without that metadata is a report column."""

import numpy as np
import pytest

import sufficientdp.engines as engines
from sufficientdp import DataError
from sufficientdp.aggregation.tally import tally
from sufficientdp.engines import tally_file
from sufficientdp.io import _pandas_index_columns, iter_reports, read_reports

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _frames():
    """(label, frame) of 0/1 report columns with an index pandas stores as columns (values far from 0/1)."""
    rng = np.random.default_rng(7)
    data = (rng.random((3000, 5)) < 0.4).astype(np.uint8)
    base = pd.DataFrame(data, columns=[f"b{j}" for j in range(5)])
    filtered = base[base["b0"] == 1]  # an Index of the kept row numbers: __index_level_0__
    named = base.set_axis(pd.Index(np.arange(10_000, 13_000), name="person"))
    multi = base.set_axis(pd.MultiIndex.from_arrays([np.arange(3000) % 7 + 2, np.arange(3000) + 5],
                                                    names=["day", None]))
    return [("filtered", filtered), ("named", named), ("multi", multi)]


@pytest.fixture(params=[label for label, _ in _frames()])
def pandas_file(request, tmp_path):
    """``(path, frame)``: the frame written by pandas with its index, in row groups of 1000 rows."""
    frame = dict(_frames())[request.param]
    path = tmp_path / f"{request.param}.parquet"
    frame.to_parquet(path, row_group_size=1000)
    stored = pq.read_schema(path).names
    assert len(stored) > frame.shape[1]  # the index is stored as columns (else the test tests nothing)
    return path, frame


def _truth(frame):
    return tally(frame.to_numpy(dtype=np.uint8)).to_dict(include_vector_histogram=True)


def test_the_metadata_names_only_stored_index_columns():
    assert _pandas_index_columns(None) == frozenset()
    assert _pandas_index_columns({b"pandas": b"not json"}) == frozenset()
    assert _pandas_index_columns({b"pandas": b'["index_columns"]'}) == frozenset()
    assert _pandas_index_columns({b"pandas": b'{"index_columns": [{"kind": "range", "start": 0}]}'}) == frozenset()
    assert _pandas_index_columns({b"pandas": b'{"index_columns": ["day", "__index_level_1__"]}'}) == {
        "day", "__index_level_1__"}


def test_read_reports_and_iter_reports_leave_the_index_out(pandas_file):
    path, frame = pandas_file
    reports, names = read_reports(path)
    assert names == list(frame.columns)
    assert np.array_equal(reports, frame.to_numpy(dtype=np.uint8))
    assert sum(batch.shape[0] for batch, _ in iter_reports(path, batch_rows=700)) == len(frame)


@pytest.mark.parametrize("reader", ["polars", "pyarrow row groups", "sequential"])
def test_the_numpy_engine_leaves_the_index_out_on_every_path(pandas_file, monkeypatch, reader):
    path, frame = pandas_file
    taken = []
    if reader == "polars":
        pytest.importorskip("polars")
        real = engines._polars_bits
        monkeypatch.setattr(engines, "_polars_bits", lambda df, pl: taken.append(df.width) or real(df, pl))
    else:
        monkeypatch.setattr(engines, "_polars", lambda: None)
        if reader == "sequential":
            monkeypatch.setattr(engines, "_cores", lambda: 1)
        real_groups = engines._parquet_group_batches
        monkeypatch.setattr(engines, "_parquet_group_batches",
                            lambda *a, **k: taken.append("groups") or real_groups(*a, **k))
    t, names = tally_file(path, engine="numpy")
    assert names == list(frame.columns)
    assert t.to_dict(include_vector_histogram=True) == _truth(frame)
    if reader == "polars":
        assert taken and set(taken) == {frame.shape[1]}  # polars decoded only the report columns
    else:
        assert bool(taken) == (reader == "pyarrow row groups")


def test_the_duckdb_engine_leaves_the_index_out(pandas_file):
    pytest.importorskip("duckdb")
    path, frame = pandas_file
    for full in (None, False):  # the full-histogram query and the Arrow hand-over
        t, names = tally_file(path, engine="duckdb", full_histogram=full)
        assert names == list(frame.columns)
        want = _truth(frame)
        got = t.to_dict(include_vector_histogram=True)
        if full is False:
            want.pop("vector_histogram")
        assert got == want


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_a_column_of_that_name_without_pandas_metadata_is_a_report_column(tmp_path, engine):
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"b0": pa.array([0, 1, 1], pa.uint8()),
                             "__index_level_0__": pa.array([1, 0, 1], pa.uint8())}), path)
    t, names = tally_file(path, engine=engine)
    assert names == ["b0", "__index_level_0__"] and t.bit_counts.tolist() == [2, 2]
    pq.write_table(pa.table({"b0": pa.array([0, 1, 1], pa.uint8()),
                             "__index_level_0__": pa.array([5, 0, 1], pa.int64())}), path)
    with pytest.raises(DataError, match="__index_level_0__"):
        tally_file(path, engine=engine)


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_a_bad_value_in_a_report_column_is_still_reported(tmp_path, engine):
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    frame = pd.DataFrame({"b0": [0, 1, 2, 1], "b1": [1, 1, 0, 0]}).iloc[1:]
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path)
    with pytest.raises(DataError, match="'b0'"):
        tally_file(path, engine=engine)


def test_a_file_of_only_an_index_has_no_columns(tmp_path):
    path = tmp_path / "empty.parquet"
    pd.DataFrame(index=pd.Index([3, 4, 5], name="person")).to_parquet(path)
    with pytest.raises(DataError, match="no columns"):
        read_reports(path)


# CSV has no metadata: pandas' DataFrame.to_csv writes the index as a first column with an empty name. A bit needs
# a name, so every engine refuses an empty or blank header name (with a hint for the first column) and returns the
# header's names as Python's csv module reads them (DuckDB alone would rename an empty or repeated name).

@pytest.mark.parametrize("engine", ["numpy", "duckdb", "read_reports"])
def test_a_csv_with_pandas_index_is_refused_with_a_hint(tmp_path, engine):
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    path = tmp_path / "idx.csv"
    pd.DataFrame({"a": [0, 1, 1], "b": [1, 1, 0]}).to_csv(path)
    assert path.read_text().startswith(",a,b")
    with pytest.raises(DataError, match=r"column 1 of the header has no name.*index=False"):
        read_reports(path) if engine == "read_reports" else tally_file(path, engine=engine)


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("header, column", [("a,,b", 2), ("a,b, ", 3), ("a, \t,b", 2)])
def test_an_empty_header_name_is_refused(tmp_path, engine, header, column):
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    path = tmp_path / "e.csv"
    path.write_text(header + "\n0,1,1\n1,1,0\n")
    with pytest.raises(DataError, match=rf"column {column} of the header has no name; every bit column needs one$"):
        tally_file(path, engine=engine)


@pytest.mark.parametrize("header", ["a,a,b", " x ,y,x", "a,A,a"])
def test_every_engine_returns_the_headers_names(tmp_path, header):
    pytest.importorskip("duckdb")
    path = tmp_path / "d.csv"
    path.write_text(header + "\n0,1,1\n1,1,0\n")
    want = [n.strip() for n in header.split(",")]
    got = {engine: tally_file(path, engine=engine) for engine in ("numpy", "duckdb")}
    assert got["numpy"][1] == got["duckdb"][1] == want == read_reports(path)[1]
    assert got["numpy"][0].to_dict(include_vector_histogram=True) == got["duckdb"][0].to_dict(
        include_vector_histogram=True)
