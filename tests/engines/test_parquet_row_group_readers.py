"""The numpy engine reads a Parquet file of several row groups on all cores (issue 10, "interactive speed"): the
tally is the in-memory one, progress is monotone, and every error is the one the sequential reader reports (the
column and the first bad row in file order), however far the other readers went."""

import threading

import numpy as np
import pytest

import sufficientdp.engines as engines
from sufficientdp import DataError, ParameterError
from sufficientdp.aggregation.columns import tally_columns, vector_histogram_columns
from sufficientdp.aggregation.tally import tally
from sufficientdp.engines import tally_file

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(autouse=True)
def _without_polars(monkeypatch):
    """These are the pyarrow readers' tests: polars' reader, which runs first when polars is installed, is off
    (tests/engines/test_parquet_polars.py tests it)."""
    monkeypatch.setattr(engines, "_polars", lambda: None)


@pytest.fixture
def readers(monkeypatch):
    """Three cores whatever the machine, and a record of the row groups the readers took."""
    monkeypatch.setattr(engines, "_cores", lambda: 3)
    taken = []
    real = engines._parquet_group_batches

    def spy(path, next_group, batch_rows, max_cells=None):
        def counted():
            group = next_group()
            if group is not None:
                taken.append(group)
            return group

        return real(path, counted, batch_rows, max_cells)

    monkeypatch.setattr(engines, "_parquet_group_batches", spy)
    return taken


def _sequential(monkeypatch, path, **kw):
    with monkeypatch.context() as m:
        m.setattr(engines, "_tally_parquet_parallel", lambda *a: None)
        return tally_file(path, **kw)


@pytest.mark.parametrize(("bits", "full_histogram"), [(1, None), (9, None), (16, None), (16, False), (20, True),
                                                      (21, None), (70, None)])
def test_row_group_readers_equal_the_in_memory_tally(tmp_path, monkeypatch, readers, bits, full_histogram,
                                                     write_parquet):
    rng = np.random.default_rng(bits)
    n = 12_345
    data = (rng.random((n, bits)) < rng.random(bits)).astype(np.uint8)
    path = tmp_path / "r.parquet"
    write_parquet(path, data, row_group_size=1000)
    monkeypatch.setattr(engines, "CHUNK_ROWS", 333)  # several batches per row group, one that does not divide it
    seen = []
    t, names = tally_file(path, full_histogram=full_histogram, progress=lambda done, total: seen.append((done, total)))
    assert sorted(readers) == list(range(13))  # the row-group readers ran, each group read once
    assert names == [f"b{j}" for j in range(bits)]
    want = tally(data, full_histogram=full_histogram).to_dict(include_vector_histogram=True)
    assert t.to_dict(include_vector_histogram=True) == want
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and dones[-1] == n and all(total == n for _, total in seen)
    assert len(seen) >= n // 333
    assert not any(th.name.startswith("sufficientdp-reader") for th in threading.enumerate())


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint16, np.float32, np.bool_, "mixed"])
def test_row_group_readers_take_every_column_type_the_sequential_reader_takes(tmp_path, monkeypatch, readers, dtype,
                                                                              write_parquet):
    data = np.random.default_rng(5).integers(0, 2, size=(5000, 6), dtype=np.uint8)
    path = tmp_path / "r.parquet"
    if dtype == "mixed":
        kinds = [np.uint8, np.int64, np.float64, np.bool_, np.int8, np.uint8]
        pq.write_table(pa.table({f"b{j}": data[:, j].astype(k) for j, k in enumerate(kinds)}), path,
                       row_group_size=700)
    else:
        write_parquet(path, data, row_group_size=700, dtype=dtype)
    t, _ = tally_file(path)
    assert readers
    assert t.to_dict(include_vector_histogram=True) == tally(data).to_dict(include_vector_histogram=True)


def _bad_file(path, where, value=2, dtype=np.int64):
    """5 row groups of 1000 rows, 4 columns; ``where`` lists (row, column) of bad values."""
    data = np.random.default_rng(9).integers(0, 2, size=(5000, 4)).astype(dtype)
    for row, col in where:
        data[row, col] = value
    pq.write_table(pa.table({f"b{j}": data[:, j] for j in range(data.shape[1])}), path, row_group_size=1000)


@pytest.mark.parametrize(("value", "dtype"), [(2, np.int64), (-1, np.int64), (2, np.uint8), (255, np.uint8),
                                              (-128, np.int8), (3.0, np.float32)])
@pytest.mark.parametrize("chunk", [1000, 1 << 18])
@pytest.mark.parametrize("where", [[(4321, 2)], [(3999, 1), (1500, 3)], [(999, 0), (4000, 0), (1000, 3)],
                                   [(2500, 3), (2999, 0), (4999, 1)]])
def test_a_bad_value_names_the_first_bad_row_in_file_order(tmp_path, monkeypatch, readers, where, chunk, value,
                                                           dtype):
    path = tmp_path / "bad.parquet"
    _bad_file(path, where, value, dtype)
    monkeypatch.setattr(engines, "CHUNK_ROWS", chunk)
    # The careful reader's order: the first batch (of `chunk` rows, here whole row groups or the whole file) with a
    # bad value, in it the first column with one, in that column the first row.
    batch = min(row // chunk for row, _ in where)
    col = min(c for row, c in where if row // chunk == batch)
    row = min(r for r, c in where if c == col and r // chunk == batch)
    with pytest.raises(DataError) as got:
        tally_file(path)
    assert f"column 'b{col}'" in str(got.value) and str(got.value).endswith(f"got {dtype(value).item()!r} at row {row}")
    with pytest.raises(DataError) as sequential:
        _sequential(monkeypatch, path)
    assert str(got.value) == str(sequential.value)
    assert not any(th.name.startswith("sufficientdp-reader") for th in threading.enumerate())


def test_nan_and_nulls_raise_what_the_sequential_reader_raises(tmp_path, monkeypatch, readers):
    path = tmp_path / "nan.parquet"
    _bad_file(path, [(2500, 1)], value=np.nan, dtype=np.float64)
    with pytest.raises(DataError, match=r"column 'b1'.* got nan at row 2500$"):
        tally_file(path)
    for other in (pa.int8(), pa.float64()):  # one integer type (read as one matrix) or not
        cols = {"a": pa.array([0, 1] * 2000, other), "b": pa.array([1] * 3999 + [None], pa.int8())}
        path = tmp_path / "null.parquet"
        pq.write_table(pa.table(cols), path, row_group_size=500)
        with pytest.raises(DataError, match="column 'b' .* has missing values"):
            tally_file(path)


def test_the_full_histogram_above_20_bits_raises_as_before(tmp_path, monkeypatch, readers, write_parquet):
    path = tmp_path / "wide.parquet"
    write_parquet(path, np.zeros((3000, 21), dtype=np.uint8), row_group_size=1000)
    with pytest.raises(ParameterError, match="full_histogram needs bits in"):
        tally_file(path, full_histogram=True)


def test_one_row_group_or_one_core_reads_sequentially(tmp_path, monkeypatch, readers, write_parquet):
    data = np.random.default_rng(4).integers(0, 2, size=(3000, 5), dtype=np.uint8)
    one = tmp_path / "one.parquet"
    write_parquet(one, data, row_group_size=10_000)
    want = tally(data).to_dict(include_vector_histogram=True)
    assert tally_file(one)[0].to_dict(include_vector_histogram=True) == want
    assert readers == []
    many = tmp_path / "many.parquet"
    write_parquet(many, data, row_group_size=1000)
    monkeypatch.setattr(engines, "_cores", lambda: 1)
    assert tally_file(many)[0].to_dict(include_vector_histogram=True) == want
    assert readers == []


def test_a_failing_progress_callback_stops_the_readers(tmp_path, monkeypatch, readers, write_parquet):
    data = np.ones((20_000, 3), dtype=np.uint8)
    path = tmp_path / "r.parquet"
    write_parquet(path, data, row_group_size=1000)
    monkeypatch.setattr(engines, "CHUNK_ROWS", 100)

    def stop(done, total):
        if done >= 500:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tally_file(path, progress=stop)
    assert 0 < len(readers) < 20  # stopped early
    assert not any(th.name.startswith("sufficientdp-reader") for th in threading.enumerate())


def test_vector_histogram_columns_is_the_full_histogram_of_tally():
    rng = np.random.default_rng(8)
    for bits in range(1, 21):
        for n in (0, 1, 255, 1000):
            data = (rng.random((n, bits)) < 0.4).astype(np.uint8)
            cols = [data[:, j] for j in range(bits)]
            got = vector_histogram_columns(cols)
            want = tally(data, full_histogram=True).vector_histogram
            assert got.dtype == np.int64 and got.tolist() == want.tolist()
            full = tally_columns(cols, full_histogram=True).to_dict(include_vector_histogram=True)
            assert full == tally(data, full_histogram=True).to_dict(include_vector_histogram=True)
    with pytest.raises(ParameterError, match="bits in"):
        vector_histogram_columns([np.zeros(3, np.uint8)] * 21)
    with pytest.raises(DataError, match="1-D uint8"):
        vector_histogram_columns([np.zeros(3, np.uint8), np.zeros(4, np.uint8)])


@pytest.mark.slow
def test_peak_memory_of_the_row_group_readers_does_not_grow_with_the_file(tmp_path, monkeypatch, readers,
                                                                          write_parquet):
    import tracemalloc

    rng = np.random.default_rng(11)
    monkeypatch.setattr(engines, "CHUNK_ROWS", 1 << 13)
    peaks = {}
    for n in (50_000, 400_000):
        path = tmp_path / f"r{n}.parquet"
        write_parquet(path, rng.integers(0, 2, size=(n, 16), dtype=np.uint8), row_group_size=25_000)
        tracemalloc.start()
        try:
            tally_file(path)
            peaks[n] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(readers) == 2 + 16  # both files went through the row-group readers
    # Eight times the rows: the numpy-side peak stays that of a few batches of 8192 x 16 bytes and the 2^16-bin
    # histograms, far below one int64 copy of the large file (51 MB).
    assert peaks[400_000] < 2 * peaks[50_000] + (1 << 20)
    assert peaks[400_000] < 8 << 20
