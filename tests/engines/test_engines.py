"""Aggregation engines (STYLE.md habit 6: every engine gives the same result).

Truth is the numpy engine, itself pinned to brute force in tests/aggregation/test_tally.py; here the DuckDB engine
must give field-for-field identical tallies on random CSV and Parquet files, and reject the same bad input.
"""

import tempfile

import numpy as np
import pytest

from sufficientdp import DataError, ParameterError
from sufficientdp.engines import ENGINES, tally_file
from sufficientdp.io import write_reports

# The embedded engines; Spark's agreement with them is tested in test_spark_engine.py (one shared session there).
EMBEDDED = tuple(e for e in ENGINES if e != "spark")

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


def _names_column(engine):
    """The DuckDB engine names the bad column; the numpy reader (sufficientdp.io) names a bad value's row."""
    return "bad_col" if engine == "duckdb" else "bad_col|row|line"


@pytest.mark.slow
@pytest.mark.parametrize("ext", [".csv", ".parquet"])
@pytest.mark.parametrize("bits", [1, 7, 16, 70])
@pytest.mark.parametrize("n", [0, 1, 1000])
def test_engines_agree_on_random_files(tmp_path, ext, bits, n):
    rng = np.random.default_rng(1000 * bits + n)
    reports = (rng.random((n, bits)) < rng.random(bits)).astype(np.uint8)
    path = tmp_path / f"reports{ext}"
    write_reports(path, reports)
    results = {engine: tally_file(path, engine=engine) for engine in EMBEDDED}
    (ref, ref_names), (t, names) = results["numpy"], results["duckdb"]
    assert names == ref_names == [f"bit{j}" for j in range(bits)]
    assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)
    assert (t.vector_histogram is None) == (bits > 16)
    assert t.reports == n and int(t.weight_histogram.sum()) == n
    # Independent check of the vector histogram index convention: bit j ↔ 2^j.
    if t.vector_histogram is not None and n:
        codes = reports.astype(np.int64) @ (1 << np.arange(bits, dtype=np.int64))
        assert t.vector_histogram.tolist() == np.bincount(codes, minlength=1 << bits).tolist()


@pytest.mark.parametrize("engine", EMBEDDED)
@pytest.mark.parametrize("full_histogram", [True, False])
def test_full_histogram_flag(tmp_path, engine, full_histogram):
    path = tmp_path / "r.parquet"
    write_reports(path, np.eye(18, dtype=np.uint8))
    t, _ = tally_file(path, engine=engine, full_histogram=full_histogram)
    assert (t.vector_histogram is not None) == full_histogram
    if full_histogram:
        assert t.vector_histogram.tolist() == np.bincount(1 << np.arange(18), minlength=1 << 18).tolist()


@pytest.mark.parametrize("engine", EMBEDDED)
def test_full_histogram_refused_above_20_bits(tmp_path, engine):
    path = tmp_path / "r.csv"
    write_reports(path, np.zeros((2, 21), dtype=np.uint8))
    with pytest.raises(ParameterError, match="full_histogram"):
        tally_file(path, engine=engine, full_histogram=True)


@pytest.mark.parametrize("engine", EMBEDDED)
@pytest.mark.parametrize("cell", ["2", "-1", "0.5", "1.0", "x", ""])
def test_bad_csv_value_raises_data_error(tmp_path, engine, cell):
    path = tmp_path / "r.csv"
    path.write_text(f"a,bad_col,c\n1,0,1\n0,{cell},1\n")
    with pytest.raises(DataError, match=_names_column(engine)):
        tally_file(path, engine=engine)


def test_duckdb_csv_accepts_what_int_accepts(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('a,b\n 1,+1\n01,-0\n"1",0\n')
    ref, _ = tally_file(path, engine="numpy")
    t, _ = tally_file(path, engine="duckdb")
    assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)
    assert t.bit_counts.tolist() == [3, 1]


@pytest.mark.parametrize("engine", EMBEDDED)
@pytest.mark.parametrize("values", [[1.0, 0.5], [1, 3], [1, None], [True, None], [0.0, float("nan")]])
def test_bad_parquet_value_raises_data_error(tmp_path, engine, values):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"ok": [1, 0], "bad_col": values}), path)
    with pytest.raises(DataError, match=_names_column(engine)):
        tally_file(path, engine=engine)


@pytest.mark.parametrize("engine", EMBEDDED)
def test_parquet_string_column_raises_data_error(tmp_path, engine):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"ok": [1, 0], "txt": ["1", "0"]}), path)
    with pytest.raises(DataError):
        tally_file(path, engine=engine)


@pytest.mark.parametrize("engine", EMBEDDED)
def test_parquet_bool_and_float_columns_agree(tmp_path, engine):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"b": [True, False, True], "f": [1.0, 1.0, 0.0]}), path)
    t, names = tally_file(path, engine=engine)
    assert names == ["b", "f"]
    assert t.to_dict(include_vector_histogram=True) == {
        "bits": 2, "reports": 3, "bit_counts": [2, 2], "weight_histogram": [0, 2, 1], "vector_histogram": [0, 1, 1, 1]}


@pytest.mark.parametrize("engine", EMBEDDED)
def test_missing_file_and_bad_extension(tmp_path, engine):
    with pytest.raises(DataError, match="does not exist"):
        tally_file(tmp_path / "nope.csv", engine=engine)
    with pytest.raises(ParameterError, match="must end in"):
        tally_file(tmp_path / "r.txt", engine=engine)


@pytest.mark.parametrize("engine", ["sparkle", "NumPy", "", None, 1])
def test_unknown_engine_raises_parameter_error(tmp_path, engine):
    path = tmp_path / "r.csv"
    write_reports(path, np.ones((1, 2), dtype=np.uint8))
    with pytest.raises(ParameterError, match="engine"):
        tally_file(path, engine=engine)


@pytest.mark.parametrize("engine", EMBEDDED)
def test_zero_byte_csv_is_an_error(engine, tmp_path):
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    with pytest.raises(DataError, match="is empty"):
        tally_file(path, engine=engine)


def _one_pass(path, full_histogram):
    """The DuckDB engine's one-scan tally (None: it hands the file to the validating passes)."""
    import duckdb

    from sufficientdp.engines import duckdb_engine

    fmt = "parquet" if path.suffix == ".parquet" else "csv"
    source = (f"read_parquet('{path}')" if fmt == "parquet"
              else f"read_csv('{path}', header = true, all_varchar = true)")
    con = duckdb.connect(":memory:")
    try:
        schema = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        cols = ['"' + row[0] + '"' for row in schema]
        return duckdb_engine._tally_one_pass(con, path, source, cols, fmt, [str(r[1]) for r in schema],
                                             full_histogram)
    finally:
        con.close()


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
@pytest.mark.parametrize("bits", [3, 16, 17])
@pytest.mark.parametrize("full_histogram", [True, False])
def test_duckdb_one_scan_is_taken_for_plain_files(tmp_path, ext, bits, full_histogram):
    # The fast path must not silently hand ordinary files (written by write_reports: LF line ends, Parquet with
    # column statistics) to the slow validating passes, and must equal the numpy engine (brute-force pinned).
    reports = np.random.default_rng(bits).integers(0, 2, size=(500, bits), dtype=np.uint8)
    path = tmp_path / f"r{ext}"
    write_reports(path, reports)
    fast = _one_pass(path, full_histogram)
    assert fast is not None
    ref, _ = tally_file(path, engine="numpy", full_histogram=full_histogram)
    assert fast.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)


@pytest.mark.parametrize("full_histogram", [True, False])
@pytest.mark.parametrize("cell", ["1.0", "1e0", "0x1", "0b1", "1.", "1_0", "2", "9"])
def test_duckdb_csv_cells_its_integer_parser_accepts_but_int_does_not(tmp_path, full_histogram, cell):
    # DuckDB reads "1.0", "1e0", "0x1", "0b1" and "1." as 1; Python's int() (the numpy engine's rule) refuses them.
    path = tmp_path / "r.csv"
    path.write_text(f"a,bad_col\n1,0\n0,{cell}\n")
    assert _one_pass(path, full_histogram) is None
    with pytest.raises(DataError, match="bad_col"):
        tally_file(path, engine="duckdb", full_histogram=full_histogram)


@pytest.mark.parametrize("text", ["a,bad_col\n1,1\n01,\n", "a,bad_col\n0,1\n,01\n", "a,bad_col\n0,1\n1,0\n\n"])
def test_duckdb_csv_byte_count_guard(tmp_path, text):
    # Rows of exactly 2L bytes, but an empty cell beside a two-character one (or a blank line): not plain cells.
    path = tmp_path / "r.csv"
    path.write_text(text)
    assert _one_pass(path, True) is None
    try:
        ref, _ = tally_file(path, engine="numpy")
    except DataError:
        with pytest.raises(DataError):
            tally_file(path, engine="duckdb")
    else:
        t, _ = tally_file(path, engine="duckdb")
        assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)


def test_duckdb_csv_crlf_and_no_final_newline_agree(tmp_path):
    for name, text in (("crlf.csv", "a,b\r\n0,1\r\n1,1\r\n"), ("open.csv", "a,b\n0,1\n1,1")):
        path = tmp_path / name
        path.write_bytes(text.encode())
        assert _one_pass(path, True) is None  # the careful passes read these
        ref, _ = tally_file(path, engine="numpy")
        t, names = tally_file(path, engine="duckdb")
        assert names == ["a", "b"]
        assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)
        assert t.bit_counts.tolist() == [1, 2]


@pytest.mark.parametrize("statistics", [True, False])
@pytest.mark.parametrize("full_histogram", [True, False])
def test_duckdb_parquet_validation_with_and_without_column_statistics(tmp_path, statistics, full_histogram):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    good = {name: pa.array(rng.integers(0, 2, 300).astype(dtype), type=kind)
            for name, dtype, kind in (("u8", np.uint8, pa.uint8()), ("i8", np.int8, pa.int8()),
                                      ("i16", np.int16, pa.int16()), ("i64", np.int64, pa.int64()),
                                      ("u64", np.uint64, pa.uint64()), ("b", bool, pa.bool_()))}
    path = tmp_path / "good.parquet"
    pq.write_table(pa.table(good), path, write_statistics=statistics)
    fast = _one_pass(path, full_histogram)
    assert fast is not None
    ref, _ = tally_file(path, engine="numpy", full_histogram=full_histogram)
    assert fast.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)
    for bad in ([0, 1, 2], [0, 1, -1], [1, None, 0]):
        values = good["i16"].to_numpy(zero_copy_only=False).tolist()[:-3] + bad
        path = tmp_path / "bad.parquet"
        pq.write_table(pa.table({**good, "bad_col": pa.array(values, pa.int16())}), path,
                       write_statistics=statistics)
        assert _one_pass(path, full_histogram) is None
        with pytest.raises(DataError, match="bad_col"):
            tally_file(path, engine="duckdb", full_histogram=full_histogram)


def test_duckdb_row_hashes_that_match_no_possible_row_go_to_the_validating_passes(tmp_path):
    # The hash table of the 2^L possible rows is computed with the column types given; with another type's hashes
    # (VARCHAR '0'/'1' for uint8 columns) no group's hash is found, and the one-scan tally must refuse, not guess.
    import duckdb

    from sufficientdp.engines import duckdb_engine

    path = tmp_path / "r.parquet"
    write_reports(path, np.random.default_rng(3).integers(0, 2, size=(200, 5), dtype=np.uint8))
    source = f"read_parquet('{path}')"
    cols = [f'"bit{j}"' for j in range(5)]
    con = duckdb.connect(":memory:")
    try:
        assert duckdb_engine._tally_one_pass(con, path, source, cols, "parquet", ["UTINYINT"] * 5, True) is not None
        assert duckdb_engine._tally_one_pass(con, path, source, cols, "parquet", ["VARCHAR"] * 5, True) is None
    finally:
        con.close()


# ------------------------------------------------------------------- Parquet without the full histogram (issue 10)
def _batches(path, threads):
    """The DuckDB engine's Arrow-batch tally of a Parquet file, with DuckDB's ``threads`` setting (the number of
    streams it may split the row groups into)."""
    import duckdb

    from sufficientdp.engines import duckdb_engine

    con = duckdb.connect(":memory:")
    try:
        con.execute(f"SET threads = {threads}")
        schema = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
        return duckdb_engine._tally_parquet_batches(con, path, ['"' + r[0] + '"' for r in schema],
                                                    [str(r[1]) for r in schema])
    finally:
        con.close()


def _wide_table(rng, n, bits):
    import pyarrow as pa

    reports = (rng.random((n, bits)) < rng.random(bits)).astype(np.uint8)
    return reports, {f"bit{j}": pa.array(reports[:, j]) for j in range(bits)}


@pytest.mark.parametrize("statistics", [True, False])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_duckdb_parquet_batches_at_64_bits_equal_the_in_memory_tally(tmp_path, monkeypatch, statistics, threads):
    # Truth: the packed-word tally of the same array (brute-force pinned in tests/aggregation/test_tally.py). Row
    # groups of 700 rows and batches of 256 rows: several streams, each with several batches, none aligned.
    import pyarrow as pa
    import pyarrow.parquet as pq

    import sufficientdp.aggregation.columns as columns
    from sufficientdp.aggregation.tally import tally
    from sufficientdp.engines import duckdb_engine

    reports, table = _wide_table(np.random.default_rng(threads), 5_001, 64)
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table(table), path, row_group_size=700, write_statistics=statistics)
    monkeypatch.setattr(duckdb_engine, "_ARROW_BATCH_CELLS", 64 * 256)
    seen = []
    kernel = columns.tally_columns

    def spy(cols, full_histogram=None):
        seen.append(len(cols[0]))
        return kernel(cols, full_histogram=full_histogram)

    monkeypatch.setattr(columns, "tally_columns", spy)
    truth = tally(reports, full_histogram=False).to_dict(include_vector_histogram=True)
    fast = _batches(path, threads)
    assert fast is not None and fast.to_dict(include_vector_histogram=True) == truth
    assert max(seen) <= 256 and sum(seen) == 5_001  # bounded batches, every row once
    t, names = tally_file(path, engine="duckdb")
    assert names == [f"bit{j}" for j in range(64)]
    assert t.to_dict(include_vector_histogram=True) == truth


@pytest.mark.parametrize("statistics", [True, False])
@pytest.mark.parametrize("bad", [2, None, -1, 300])
def test_duckdb_parquet_batches_refuse_a_bad_value_at_64_bits(tmp_path, statistics, bad):
    # One bad cell in a late row group of one column of 64: the batch tally refuses (from the column statistics,
    # or without them from the batch check or the cast), and the validating passes name the column.
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, table = _wide_table(np.random.default_rng(5), 3_000, 63)
    values = np.random.default_rng(6).integers(0, 2, 3_000).tolist()
    values[2_345] = bad
    table["bad_col"] = pa.array(values, pa.int16() if bad in (-1, 300) else pa.uint8())
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table(table), path, row_group_size=500, write_statistics=statistics)
    for threads in (1, 2):
        assert _batches(path, threads) is None
    with pytest.raises(DataError, match="bad_col"):
        tally_file(path, engine="duckdb")
    with pytest.raises(DataError, match="bad_col"):
        tally_file(path, engine="numpy")


def test_duckdb_parquet_without_pyarrow_keeps_the_sql_tally(tmp_path, monkeypatch):
    # The duckdb extra does not pull in pyarrow: without it the engine counts in SQL (GROUP BY the row weight),
    # with the same result; with it, the batch tally is what runs.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sufficientdp.aggregation.tally import tally
    from sufficientdp.engines import duckdb_engine

    reports, table = _wide_table(np.random.default_rng(8), 2_000, 40)
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table(table), path, row_group_size=300)
    truth = tally(reports, full_histogram=False).to_dict()
    calls = []
    batches = duckdb_engine._tally_parquet_batches
    monkeypatch.setattr(duckdb_engine, "_tally_parquet_batches", lambda *a: calls.append(1) or batches(*a))
    assert tally_file(path, engine="duckdb")[0].to_dict() == truth and calls == [1]
    monkeypatch.setattr(duckdb_engine, "_arrow_available", lambda: False)
    assert tally_file(path, engine="duckdb")[0].to_dict() == truth and calls == [1]


def test_duckdb_parquet_batches_with_a_column_named_file_row_number(tmp_path):
    # DuckDB cannot add its file_row_number column to such a file: one stream, no row ranges.
    import pyarrow as pa
    import pyarrow.parquet as pq

    reports, table = _wide_table(np.random.default_rng(9), 1_000, 30)
    table["file_row_number"] = table.pop("bit0")
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table(table), path, row_group_size=100)
    ref, _ = tally_file(path, engine="numpy")
    assert _batches(path, 2).to_dict() == ref.to_dict()


def test_row_ranges_split_at_row_group_boundaries():
    # Brute force over small layouts: contiguous ranges covering [0, n], cut only where a row group ends, at most
    # `streams` of them, and no range more than one row group above an equal share.
    from sufficientdp.engines.duckdb_engine import _row_ranges

    rng = np.random.default_rng(10)
    for _ in range(500):
        sizes = rng.integers(0, 5, rng.integers(0, 8)).tolist()
        streams = int(rng.integers(1, 5))
        bounds = _row_ranges(sizes, streams)
        ends = set(np.cumsum([0, *sizes]).tolist())
        n = sum(sizes)
        assert bounds[0] == 0 and bounds[-1] == n and set(bounds) <= ends
        assert all(a < b for a, b in zip(bounds[:-1], bounds[1:])) or bounds == [0, 0]
        assert 2 <= len(bounds) <= streams + 1
        largest = max(sizes, default=0)
        assert all(b - a <= n / streams + largest for a, b in zip(bounds[:-1], bounds[1:]))


def test_duckdb_parquet_batches_raise_an_unexpected_error_of_any_stream(tmp_path, monkeypatch):
    # An error that is not about the data (here from the batch check of the third batch) is raised to the caller,
    # not taken for a bad value, and the streams stop early.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sufficientdp.engines import duckdb_engine

    _, table = _wide_table(np.random.default_rng(11), 4_000, 64)
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table(table), path, row_group_size=500)
    check = duckdb_engine._batch_bits
    calls = []

    def flaky(batch):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("disk on fire")
        return check(batch)

    monkeypatch.setattr(duckdb_engine, "_batch_bits", flaky)
    monkeypatch.setattr(duckdb_engine, "_ARROW_BATCH_CELLS", 64 * 256)  # 8 batches per stream
    with pytest.raises(RuntimeError, match="disk on fire"):
        _batches(path, 2)
    assert len(calls) < 16  # the streams stopped early
    calls.clear()
    with pytest.raises(RuntimeError, match="disk on fire"):
        tally_file(path, engine="duckdb")


@pytest.mark.parametrize("engine", EMBEDDED)
@pytest.mark.parametrize(("name", "decoy"), [("r[1].parquet", "r1.parquet"), ("c[1].csv", "c1.csv"),
                                              ("a*b.csv", "aXb.csv"), ("q?.parquet", "qX.parquet"),
                                              ("{x,y}.csv", "x.csv")])
def test_a_file_name_with_glob_characters_is_that_file(tmp_path, monkeypatch, engine, name, decoy):
    """DuckDB would expand ``[1]``, ``*``, ``?`` (so would polars' reader, unless told not to): the engine must
    count the file named, not another file the name matches as a pattern, and leave no link behind."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    write_reports(tmp_path / decoy, np.ones((6, 3), dtype=np.uint8))
    write_reports(tmp_path / name, np.eye(3, dtype=np.uint8))
    t, names = tally_file(tmp_path / name, engine=engine)
    assert names == ["bit0", "bit1", "bit2"]
    assert t.reports == 3 and t.bit_counts.tolist() == [1, 1, 1]
    assert not list(scratch.iterdir())


@pytest.mark.parametrize("engine", EMBEDDED)
@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_a_folder_named_like_a_hive_partition_adds_no_column(hive_named_file, engine, ext):
    """``flag=1/r.parquet``: DuckDB's reader would add a column ``flag`` (all ones) from the folder name, a bit that
    is not in the file."""
    t, names = tally_file(hive_named_file(ext), engine=engine)
    assert names == ["bit0", "bit1", "bit2"]
    assert t.reports == 3 and t.bit_counts.tolist() == [1, 1, 1]
