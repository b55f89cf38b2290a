"""The numpy engine streams (issue 10): results bit-for-bit equal to the in-memory tally, memory bounded by the
batch, errors unchanged when the fast CSV reader hands over to the careful one in the middle of a file."""

import tracemalloc

import numpy as np
import pytest

import sufficientdp.engines as engines
from sufficientdp import DataError
from sufficientdp.aggregation.columns import tally_columns
from sufficientdp.aggregation.tally import tally
from sufficientdp.engines import tally_file
from sufficientdp.io import iter_reports, read_reports, write_reports

pytest.importorskip("pyarrow")


def _in_memory(data, full_histogram=None):
    return tally(data, full_histogram=full_histogram).to_dict(include_vector_histogram=True)


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
@pytest.mark.parametrize("bits", [1, 5, 16, 70])
def test_streaming_equals_in_memory_with_a_chunk_that_does_not_divide_the_rows(tmp_path, monkeypatch, ext, bits):
    rng = np.random.default_rng(bits)
    n = 10_001  # odd; 997 does not divide it
    data = (rng.random((n, bits)) < rng.random(bits)).astype(np.uint8)
    path = tmp_path / f"r{ext}"
    write_reports(path, data)
    monkeypatch.setattr(engines, "CHUNK_ROWS", 997)
    monkeypatch.setattr(engines, "POLARS_SLICE_CELLS", 997 * bits)  # (the Parquet reader when polars is installed)
    seen = []
    t, names = tally_file(path, progress=lambda done, total: seen.append(done))
    assert names == [f"bit{j}" for j in range(bits)]
    assert t.to_dict(include_vector_histogram=True) == _in_memory(data)
    assert seen[-1] == n and len(seen) >= n // 997
    batches = list(iter_reports(path, batch_rows=997))
    assert all(0 < b.shape[0] <= 997 for b, _ in batches)
    np.testing.assert_array_equal(np.concatenate([b for b, _ in batches]), data)
    np.testing.assert_array_equal(read_reports(path)[0], data)


def test_tally_columns_matches_tally_with_and_without_the_full_histogram():
    rng = np.random.default_rng(3)
    for bits in (1, 8, 20, 300):
        data = (rng.random((777, bits)) < 0.3).astype(np.uint8)
        cols = [data[:, j] for j in range(bits)]
        for full in ((None, False, True) if bits <= 20 else (None,)):
            got = tally_columns(cols, full_histogram=full).to_dict(include_vector_histogram=True)
            assert got == _in_memory(data, full)


def _csv(path, rows, header="a,b,c"):
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows))


@pytest.mark.slow
def test_csv_fast_reader_hands_over_mid_file_without_losing_or_repeating_rows(tmp_path, monkeypatch, careful_skips):
    rng = np.random.default_rng(7)
    data = (rng.random((50_001, 3)) < 0.5).astype(np.uint8)
    rows = [",".join(map(str, r)) for r in data]
    rows[40_000] = " 1, +0,01"  # int() accepts it; pyarrow's int8 parser does not
    data[40_000] = (1, 0, 1)
    rows.insert(25_000, "")  # an empty line is skipped by both readers
    path = tmp_path / "odd.csv"
    _csv(path, rows)
    skips = careful_skips
    monkeypatch.setattr(engines, "CHUNK_ROWS", 300)
    t, _ = tally_file(path)
    assert t.to_dict(include_vector_histogram=True) == _in_memory(data)
    assert skips and 0 < skips[0] <= 40_000  # the fast reader did yield rows before handing over
    np.testing.assert_array_equal(np.concatenate([b for b, _ in iter_reports(path, 300)]), data)


@pytest.mark.slow
@pytest.mark.parametrize("bad", ["2", "", "x", "1,0"])
def test_csv_bad_value_deep_in_the_file_names_its_line(tmp_path, monkeypatch, bad):
    rows = ["0,1,0"] * 60_000
    rows[43_210] = f"1,{bad},0" if bad != "1,0" else "1,0"
    path = tmp_path / "bad.csv"
    _csv(path, rows)
    monkeypatch.setattr(engines, "CHUNK_ROWS", 500)
    with pytest.raises(DataError, match="line 43212"):  # header is line 1
        tally_file(path)


def _peak_bytes(path, chunk, monkeypatch):
    monkeypatch.setattr(engines, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(engines, "POLARS_SLICE_CELLS", chunk * 16)  # (the Parquet reader when polars is installed)
    tracemalloc.start()
    try:
        tally_file(path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_peak_memory_of_a_chunked_tally_does_not_grow_with_the_file(tmp_path, monkeypatch, ext):
    rng = np.random.default_rng(11)
    peaks = {}
    for n in (50_000, 400_000):
        path = tmp_path / f"r{n}{ext}"
        write_reports(path, rng.integers(0, 2, size=(n, 16), dtype=np.uint8))
        peaks[n] = _peak_bytes(path, 1 << 13, monkeypatch)
    # Eight times the rows: the numpy-side peak stays that of a few batches (8192 x 16 bytes plus the 2^16-bin
    # histograms), far below one int64 copy of the large file (51 MB).
    assert peaks[400_000] < 2 * peaks[50_000] + (1 << 20)
    assert peaks[400_000] < 8 << 20


def test_arrow_columns_to_numpy_without_pandas_match_to_numpy():
    pa = pytest.importorskip("pyarrow")
    from sufficientdp.io import _arrow_numpy

    arrays = [pa.array([0, 1, 1, 0, 1] * 3, pa.uint8()), pa.array([True, False, True] * 5),
              pa.array([0.0, 1.0, 0.5] * 5, pa.float32()), pa.array([0, 1, -2] * 5, pa.int64()),
              pa.array([0.0, 1.0] * 5), pa.array([1, 0], pa.int8())]
    for a in arrays:
        for part in (a, a.slice(3, 7), a.slice(1, 0)):
            got, want = _arrow_numpy(part), part.to_numpy(zero_copy_only=False)
            assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize("full_histogram", [True, False])
def test_duckdb_one_pass_hands_unusual_values_to_the_validating_passes(tmp_path, full_histogram):
    pytest.importorskip("duckdb")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    cols = {f"c{j}": np.array([0, 1, 1, 0], dtype=np.int64) for j in range(17)}
    cols["bad_col"] = np.array([0, 1, -1, 1], dtype=np.int64)  # sums to 1 like a valid column would
    path = tmp_path / "neg.parquet"
    pq.write_table(pa.table(cols), path)
    with pytest.raises(DataError, match="bad_col"):
        tally_file(path, engine="duckdb", full_histogram=full_histogram)
    csv_path = tmp_path / "odd.csv"
    csv_path.write_text("a,b\n 1,+0\n01,1\n0,0\n")  # int() reads these; the one-pass query does not
    t, names = tally_file(csv_path, engine="duckdb", full_histogram=full_histogram)
    ref, _ = tally_file(csv_path, engine="numpy", full_histogram=full_histogram)
    assert names == ["a", "b"]
    assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_wide_reports_get_fewer_rows_per_batch(tmp_path, ext):
    from sufficientdp.io import _iter_columns

    data = np.random.default_rng(2).integers(0, 2, size=(3001, 40), dtype=np.uint8)
    path = tmp_path / f"wide{ext}"
    write_reports(path, data)
    batches = [cols for cols, _ in _iter_columns(path, 10**6, 20_000)]  # 20,000 values / 40 bits = 500 rows
    assert all(len(cols) == 40 and len(cols[0]) <= 500 for cols in batches)
    np.testing.assert_array_equal(np.concatenate([np.column_stack(c) for c in batches]), data)


def test_prefetched_batches_keep_order_errors_and_stop_with_the_consumer():
    import threading

    from sufficientdp.engines import _prefetched

    assert list(_prefetched(iter(range(1000)))) == list(range(1000))

    def failing():
        yield 1
        raise DataError("bad row 7")

    got = []
    with pytest.raises(DataError, match="bad row 7"):
        for item in _prefetched(failing()):
            got.append(item)
    assert got == [1]

    closed = threading.Event()

    def endless():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    stream = _prefetched(endless())
    assert [next(stream) for _ in range(5)] == [0, 1, 2, 3, 4]
    stream.close()  # the consumer stops early: the reader thread ends and the source is closed
    assert closed.is_set()
    assert not any(t.name == "sufficientdp-reader" for t in threading.enumerate())
