"""The numpy engine decodes Parquet with polars when it is installed (issue 10: the numpy path from Parquet at
least as fast as plain DuckDB): the tally is the in-memory one, progress is monotone, and anything polars' reader
does not take or a bad value hands the file to the pyarrow readers, whose errors are unchanged."""

import numpy as np
import pytest

import sufficientdp.engines as engines
from sufficientdp import DataError
from sufficientdp.aggregation.tally import tally
from sufficientdp.engines import tally_file

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("polars")


@pytest.fixture
def slices(monkeypatch):
    """A record of the slices polars decoded (rows of each)."""
    taken = []
    real = engines._polars_bits

    def spy(df, pl):
        taken.append(df.height)
        return real(df, pl)

    monkeypatch.setattr(engines, "_polars_bits", spy)
    return taken


def _without_polars(path, monkeypatch, **kw):
    with monkeypatch.context() as m:
        m.setattr(engines, "_polars", lambda: None)
        return tally_file(path, **kw)


def test_narrow_slices_get_one_decoding_thread_per_core(monkeypatch):
    monkeypatch.setattr(engines, "_cores", lambda: 3)
    narrow = engines.POLARS_NARROW_CELLS
    assert engines._polars_decoders([(0, 100), (100, 100)], narrow // 100) == 2  # (at most one per slice)
    assert engines._polars_decoders([(k * 10, 10) for k in range(9)], narrow // 10) == 3
    assert engines._polars_decoders([(0, 10), (10, 11)], narrow // 10) == 1  # 110 cells per row: too wide
    monkeypatch.setattr(engines, "_cores", lambda: 8)
    assert engines._polars_decoders([(k, 1) for k in range(9)], 1) == 4  # at most _MAX_READERS


@pytest.mark.parametrize("cores", [1, 3])
def test_one_or_several_decoding_threads_give_the_same_tally(tmp_path, monkeypatch, slices, cores, write_parquet):
    data = (np.random.default_rng(cores).random((7001, 9)) < 0.3).astype(np.uint8)
    path = tmp_path / "c.parquet"
    write_parquet(path, data, 1000)
    monkeypatch.setattr(engines, "_cores", lambda: cores)
    seen = []
    t, _ = tally_file(path, progress=lambda done, total: seen.append(done))
    assert t.to_dict(include_vector_histogram=True) == tally(data).to_dict(include_vector_histogram=True)
    assert sorted(slices) == [1] + [1000] * 7 and seen == sorted(seen) and seen[-1] == 7001


@pytest.mark.parametrize("bits, full_histogram", [(1, None), (5, True), (16, None), (20, True), (70, None),
                                                  (12, False)])
def test_polars_reader_equals_the_in_memory_tally(tmp_path, monkeypatch, slices, bits, full_histogram, write_parquet):
    rng = np.random.default_rng(bits)
    n = 5003
    data = (rng.random((n, bits)) < rng.random(bits)).astype(np.uint8)
    path = tmp_path / "r.parquet"
    write_parquet(path, data, 1500)  # row groups of 1500, 1500, 1500, 503
    monkeypatch.setattr(engines, "POLARS_SLICE_CELLS", 700 * bits)  # each group cut into 3 slices (the last: 1)
    seen = []
    t, names = tally_file(path, full_histogram=full_histogram, progress=lambda done, total: seen.append(done))
    assert t.to_dict(include_vector_histogram=True) == tally(data, full_histogram=full_histogram).to_dict(
        include_vector_histogram=True)
    assert names == [f"b{j}" for j in range(bits)]
    assert sorted(slices) == [500] * 9 + [503]  # (several decoding threads: any order)
    assert seen == sorted(seen) and seen[-1] == n and len(seen) == 10


def test_slices_cover_every_row_once_within_row_groups(monkeypatch):
    sizes = [10, 0, 7, 1]
    for cells in (1, 3, 8, 100):
        monkeypatch.setattr(engines, "POLARS_SLICE_CELLS", cells)
        got = engines._polars_slices(sizes, 1)
        rows = [r for start, k in got for r in range(start, start + k)]
        assert rows == list(range(18)), cells
        assert all(0 < k <= cells for _, k in got)
        assert all(not (s < b < s + k) for s, k in got for b in (10, 17))  # no slice crosses a row group's end


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint16, np.float32, np.bool_])
def test_polars_reader_takes_every_column_type_the_sequential_reader_takes(tmp_path, monkeypatch, slices, dtype,
                                                                           write_parquet):
    rng = np.random.default_rng(2)
    data = (rng.random((3001, 6)) < 0.4).astype(np.uint8)
    path = tmp_path / "t.parquet"
    write_parquet(path, data, 1000, dtype)
    t, _ = tally_file(path)
    assert slices  # polars read it
    assert t.to_dict(include_vector_histogram=True) == tally(data).to_dict(include_vector_histogram=True)
    assert t.to_dict(include_vector_histogram=True) == _without_polars(path, monkeypatch)[0].to_dict(
        include_vector_histogram=True)


@pytest.mark.parametrize("bad", ["two", "negative", "nan", "null", "half"])
def test_a_bad_value_gives_the_sequential_readers_error(tmp_path, monkeypatch, slices, bad):
    data = np.zeros((4000, 3), dtype=np.float64)
    value = {"two": 2.0, "negative": -1.0, "nan": np.nan, "half": 0.5, "null": None}[bad]
    path = tmp_path / "bad.parquet"
    cols = {f"b{j}": pa.array(data[:, j]) for j in range(3)}
    col = data[:, 1].tolist()
    col[3456] = value
    dtype = pa.int64() if bad in ("two", "negative", "null") else pa.float64()
    cols["b1"] = pa.array([None if v is None else (int(v) if dtype == pa.int64() else v) for v in col], type=dtype)
    pq.write_table(pa.table(cols), path, row_group_size=1000)
    with pytest.raises(DataError) as got:
        tally_file(path)
    assert slices  # polars saw it first, then handed over
    with pytest.raises(DataError) as before:
        _without_polars(path, monkeypatch)
    assert str(got.value) == str(before.value)
    assert "b1" in str(got.value)


def test_a_string_column_and_an_empty_file_go_to_the_sequential_reader(tmp_path, monkeypatch, slices):
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"a": pa.array([1, 0], type=pa.int8()), "b": pa.array(["1", "0"])}), path)
    with pytest.raises(DataError, match="'b'"):
        tally_file(path)
    empty = tmp_path / "e.parquet"
    pq.write_table(pa.table({"a": pa.array([], type=pa.uint8()), "b": pa.array([], type=pa.uint8())}), empty)
    t, names = tally_file(empty)
    assert t.reports == 0 and names == ["a", "b"]
    assert t.to_dict() == _without_polars(empty, monkeypatch)[0].to_dict()


def test_without_polars_the_path_is_not_taken(tmp_path, monkeypatch, slices, write_parquet):
    data = np.eye(4, dtype=np.uint8)
    path = tmp_path / "p.parquet"
    write_parquet(path, data, 2)
    monkeypatch.setattr(engines, "_polars", lambda: None)
    assert engines._tally_parquet_polars(path, None, None, 4) is None
    t, _ = tally_file(path)
    assert not slices and t.bit_counts.tolist() == [1, 1, 1, 1]


def test_a_failing_progress_callback_stops_the_decoder(tmp_path, monkeypatch, write_parquet):
    data = np.ones((6000, 2), dtype=np.uint8)
    path = tmp_path / "p.parquet"
    write_parquet(path, data, 1000)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tally_file(path, progress=stop)
    import threading

    assert not [t for t in threading.enumerate() if t.name == "sufficientdp-polars"]


def test_the_named_file_is_read_not_a_glob_match_or_a_hive_partition(tmp_path, slices, write_parquet):
    ones, eye = np.ones((6, 3), dtype=np.uint8), np.eye(3, dtype=np.uint8)
    write_parquet(tmp_path / "r1.parquet", ones, 2)
    write_parquet(tmp_path / "r[1].parquet", eye, 2)  # as a glob pattern this name matches r1.parquet
    t, _ = tally_file(tmp_path / "r[1].parquet")
    assert slices and t.bit_counts.tolist() == [1, 1, 1] and t.reports == 3
    hive = tmp_path / "year=2024"
    hive.mkdir()
    write_parquet(hive / "r.parquet", eye, 2)
    t, names = tally_file(hive / "r.parquet")
    assert names == ["b0", "b1", "b2"] and t.bit_counts.tolist() == [1, 1, 1]
