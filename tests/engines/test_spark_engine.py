"""Spark aggregation engine (STYLE.md habit 6: every engine gives the same result).

Truth: the numpy engine (itself pinned to brute force in tests/aggregation/test_tally.py) and, independently here, a
pure-Python brute-force count of the reports written to the file. The Spark engine must give field-for-field
identical tallies to numpy and DuckDB on random CSV and Parquet files (L from 1 to 64, so both the full-histogram
and the weight-only query run, and L > 32, L = 64 cross word boundaries), and reject the same bad input with the
same error types. One local[2] SparkSession serves the whole module (a Spark call costs ~1 s even on tiny data, so
the parametrizations are kept small).
"""

import shutil
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from sufficientdp import DataError, ParameterError
from sufficientdp.engines import tally_file
from sufficientdp.engines.spark_engine import tally_dataframe_spark, tally_file_spark
from sufficientdp.io import write_reports

pytest.importorskip("pyspark", reason="the spark engine needs pyspark: pip install 'sufficientdp[spark]'")
pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


def _java_ok() -> bool:
    java = shutil.which("java")
    if java is None:
        return False
    try:
        return subprocess.run([java, "-version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


pytestmark = pytest.mark.skipif(not _java_ok(), reason="the spark engine needs a Java runtime (java not found)")


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("sufficientdp-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _brute_force(reports: np.ndarray) -> dict:
    """Count with Python loops only: per-bit sums, set-bit counts, and codes Σ_j x_j 2^j."""
    n, bits = reports.shape
    rows = [[int(x) for x in row] for row in reports]
    bit_counts = [sum(row[j] for row in rows) for j in range(bits)]
    weights = Counter(sum(row) for row in rows)
    d = {"bits": bits, "reports": n, "bit_counts": bit_counts,
         "weight_histogram": [weights.get(w, 0) for w in range(bits + 1)]}
    if bits <= 16:
        codes = Counter(sum(x << j for j, x in enumerate(row)) for row in rows)
        d["vector_histogram"] = [codes.get(c, 0) for c in range(1 << bits)]
    return d


def _random_reports(seed: int, n: int, bits: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random((n, bits)) < rng.random(bits)).astype(np.uint8)


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
@pytest.mark.parametrize("bits", [1, 7, 16, 33, 64])
def test_spark_agrees_with_numpy_duckdb_and_brute_force(spark, tmp_path, ext, bits):
    reports = _random_reports(bits, 500, bits)
    path = tmp_path / f"reports{ext}"
    write_reports(path, reports)
    t, names = tally_file(path, engine="spark")
    assert names == [f"bit{j}" for j in range(bits)]
    got = t.to_dict(include_vector_histogram=True)
    for engine in ("numpy", "duckdb"):
        ref, ref_names = tally_file(path, engine=engine)
        assert ref_names == names
        assert got == ref.to_dict(include_vector_histogram=True)
    assert got == _brute_force(reports)
    assert (t.vector_histogram is None) == (bits > 16)
    assert t.bit_counts.dtype == t.weight_histogram.dtype == np.int64


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
@pytest.mark.parametrize("n", [0, 1])
def test_spark_tiny_files(spark, tmp_path, ext, n):
    reports = np.ones((n, 3), dtype=np.uint8)
    path = tmp_path / f"r{ext}"
    write_reports(path, reports)
    t, names = tally_file_spark(path)
    ref, ref_names = tally_file(path, engine="numpy")
    assert names == ref_names == ["bit0", "bit1", "bit2"]
    assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True) == \
        _brute_force(reports)


@pytest.mark.parametrize(("bits", "full_histogram"), [(18, True), (7, False)])
def test_full_histogram_flag(spark, tmp_path, bits, full_histogram):
    reports = np.vstack([np.eye(bits, dtype=np.uint8), _random_reports(3, 200, bits)])
    path = tmp_path / "r.parquet"
    write_reports(path, reports)
    t, _ = tally_file_spark(path, full_histogram=full_histogram)
    ref, _ = tally_file(path, engine="numpy", full_histogram=full_histogram)
    assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)
    assert (t.vector_histogram is not None) == full_histogram
    if full_histogram:
        codes = reports.astype(np.int64) @ (1 << np.arange(bits, dtype=np.int64))
        assert t.vector_histogram.tolist() == np.bincount(codes, minlength=1 << bits).tolist()


def test_full_histogram_refused_above_20_bits(spark, tmp_path):
    path = tmp_path / "r.csv"
    write_reports(path, np.zeros((2, 21), dtype=np.uint8))
    with pytest.raises(ParameterError, match="full_histogram"):
        tally_file(path, engine="spark", full_histogram=True)
    with pytest.raises(ParameterError, match="full_histogram"):
        tally_file_spark(path, full_histogram="yes")


@pytest.mark.parametrize("cell", ["2", "-1", "0.5", "1.0", "x", ""])
def test_bad_csv_value_raises_data_error(spark, tmp_path, cell):
    path = tmp_path / "r.csv"
    path.write_text(f"a,bad_col,c\n1,0,1\n0,{cell},1\n")
    with pytest.raises(DataError, match="column 'bad_col' .* 1 row"):
        tally_file(path, engine="spark")


def test_csv_accepts_what_int_accepts(spark, tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('a,b\n 1,+1\n01,-0\n"1",0\n\n')
    t, _ = tally_file(path, engine="spark")
    for engine in ("numpy", "duckdb"):
        ref, _ = tally_file(path, engine=engine)
        assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)
    assert t.bit_counts.tolist() == [3, 1] and t.reports == 3


@pytest.mark.parametrize("text", ["a,b\n1,0\n1\n", "a,b\n1,0\n1,0,1\n"])
def test_ragged_csv_rows_raise_data_error(spark, tmp_path, text):
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(DataError, match="1 row.* 2 comma-separated values"):
        tally_file_spark(path)
    with pytest.raises(DataError):
        tally_file(path, engine="numpy")


def test_csv_header_names_kept_as_written(spark, tmp_path):
    """Duplicate, dotted and padded names come back as the numpy reader gives them (Spark would rename)."""
    path = tmp_path / "r.csv"
    path.write_text("a,a, b.c ,`d`\n1,0,1,1\n0,0,1,0\n")
    t, names = tally_file_spark(path)
    ref, ref_names = tally_file(path, engine="numpy")
    assert names == ref_names == ["a", "a", "b.c", "`d`"]
    assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)


@pytest.mark.parametrize(("text", "match"), [("", "is empty"), ("\n1,0\n", "empty header")])
def test_empty_csv_raises_data_error(spark, tmp_path, text, match):
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=match):
        tally_file_spark(path)
    with pytest.raises(DataError, match=match):
        tally_file(path, engine="numpy")


@pytest.mark.parametrize("values", [[1.0, 0.5], [1, 3], [1, None], [True, None], [0.0, float("nan")]])
def test_bad_parquet_value_raises_data_error(spark, tmp_path, values):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"ok": [1, 0], "bad_col": values}), path)
    with pytest.raises(DataError, match="column 'bad_col' .* 1 row"):
        tally_file(path, engine="spark")


def test_parquet_string_column_raises_data_error(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"ok": [1, 0], "txt": ["1", "0"]}), path)
    with pytest.raises(DataError, match="column 'txt' .* got type string"):
        tally_file(path, engine="spark")


def test_parquet_column_types_agree(spark, tmp_path):
    """bool, float32, int8, uint8, uint64 (Spark: decimal(20,0)) all count like the other engines."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({
        "b": [True, False, True], "f": np.array([1.0, 1.0, -0.0], dtype=np.float32),
        "i8": np.array([0, 1, 1], dtype=np.int8), "u8": np.array([1, 0, 0], dtype=np.uint8),
        "u64": np.array([1, 1, 1], dtype=np.uint64)}), path)
    t, names = tally_file(path, engine="spark")
    assert names == ["b", "f", "i8", "u8", "u64"]
    for engine in ("numpy", "duckdb"):
        ref, _ = tally_file(path, engine=engine)
        assert t.to_dict(include_vector_histogram=True) == ref.to_dict(include_vector_histogram=True)
    assert t.bit_counts.tolist() == [2, 2, 2, 1, 3]


def test_spark_written_parquet_folder(spark, tmp_path):
    reports = _random_reports(7, 300, 5)
    df = spark.createDataFrame([tuple(int(x) for x in row) for row in reports], [f"c{j}" for j in range(5)])
    folder = tmp_path / "out.parquet"
    df.repartition(3).write.parquet(str(folder))
    t, names = tally_file_spark(folder)
    assert names == [f"c{j}" for j in range(5)]
    assert t.to_dict(include_vector_histogram=True) == _brute_force(reports)


def test_missing_file_and_bad_extension(spark, tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        tally_file(tmp_path / "nope.csv", engine="spark")
    with pytest.raises(ParameterError, match="must end in"):
        tally_file(tmp_path / "r.txt", engine="spark")


def test_unreadable_uri_raises_data_error(spark, tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        tally_file_spark(f"file://{tmp_path}/nope.parquet")


def test_progress_called_once_with_total(spark, tmp_path):
    path = tmp_path / "r.parquet"
    write_reports(path, np.ones((5, 2), dtype=np.uint8))
    calls = []
    tally_file(path, engine="spark", progress=lambda done, total: calls.append((done, total)))
    assert calls == [(5, 5)]


def test_explicit_session_and_bad_session_arguments(spark, tmp_path):
    path = tmp_path / "r.csv"
    write_reports(path, np.eye(3, dtype=np.uint8))
    t, _ = tally_file_spark(path, spark=spark)
    assert t.bit_counts.tolist() == [1, 1, 1]
    with pytest.raises(ParameterError, match="spark must be"):
        tally_file_spark(path, spark="local[2]")
    for master in ("", None, 2):
        with pytest.raises(ParameterError, match="master"):
            tally_file_spark(path, master=master)


# ------------------------------------------------------------------------------------------------ DataFrames
def test_dataframe_agrees_with_numpy(spark):
    from sufficientdp.aggregation.tally import tally

    reports = _random_reports(11, 400, 9)
    cols = ["x.y", "b c", "`q`"] + [f"c{j}" for j in range(6)]
    df = spark.createDataFrame([tuple(int(x) for x in row) for row in reports], cols)
    t, names = tally_dataframe_spark(df)
    assert names == cols
    assert t.to_dict(include_vector_histogram=True) == tally(reports).to_dict(include_vector_histogram=True)
    # columns= picks and orders the bits: bit j is columns[j].
    t2, names2 = tally_dataframe_spark(df, columns=["c5", "x.y"], full_histogram=False)
    assert names2 == ["c5", "x.y"]
    assert t2.to_dict() == tally(reports[:, [8, 0]]).to_dict()
    assert t2.vector_histogram is None


def test_dataframe_string_bool_and_bad_columns(spark):
    df = spark.createDataFrame([(" 1", True, 1.0, 2), ("-0", False, 0.0, 0)], ["s", "b", "f", "bad_col"])
    t, _ = tally_dataframe_spark(df, columns=["s", "b", "f"])
    assert t.to_dict(include_vector_histogram=True)["vector_histogram"] == [1, 0, 0, 0, 0, 0, 0, 1]
    with pytest.raises(DataError, match="column 'bad_col' of the DataFrame .* 1 row"):
        tally_dataframe_spark(df)


def test_dataframe_invalid_arguments(spark):
    df = spark.createDataFrame([(1, 0)], ["a", "b"])
    with pytest.raises(ParameterError, match="not in the DataFrame"):
        tally_dataframe_spark(df, columns=["a", "zz"])
    with pytest.raises(ParameterError, match="distinct"):
        tally_dataframe_spark(df, columns=["a", "a"])
    with pytest.raises(ParameterError, match="columns must be"):
        tally_dataframe_spark(df, columns="a")
    with pytest.raises(DataError, match="no columns"):
        tally_dataframe_spark(df, columns=[])
    with pytest.raises(ParameterError, match="df must be"):
        tally_dataframe_spark(np.ones((2, 2)))
    with pytest.raises(DataError, match="must hold 0/1 numbers"):
        tally_dataframe_spark(spark.createDataFrame([([1],)], ["arr"]))


def test_missing_pyspark_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    path = tmp_path / "r.csv"
    write_reports(path, np.ones((1, 2), dtype=np.uint8))
    with pytest.raises(ImportError, match=r"sufficientdp\[spark\]"):
        tally_file_spark(path)


def test_dataframe_huge_values_are_bad_cells_not_overflows(spark):
    """Keys are built from bits 0/1 only, so a huge integer cell is reported as a bad cell (no ANSI overflow)."""
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(c, T.IntegerType()) for c in ("a", "bad_col")])
    df = spark.createDataFrame([(1, 2**31 - 1), (0, 2**31 - 1), (1, 1)], schema)
    for full in (True, False):
        with pytest.raises(DataError, match="column 'bad_col' of the DataFrame .* 2 row"):
            tally_dataframe_spark(df, full_histogram=full)


def test_engine_session_binds_to_loopback_without_ui_and_is_quiet(tmp_path):
    # issue 13: a session the engine creates for a local master binds its driver to 127.0.0.1 (not the machine's
    # external interface), runs no web UI, and keeps Spark's logging to errors (a fresh JVM, so a subprocess).
    f = tmp_path / "r.csv"
    write_reports(f, _random_reports(3, 50, 4))
    code = ("import sys\n"
            "from sufficientdp.engines.spark_engine import _session, tally_file_spark\n"
            "s = _session(None, 'local[1]')\n"
            f"tally_file_spark({str(f)!r}, master='local[1]')\n"
            "print(s.conf.get('spark.driver.host'), s.conf.get('spark.driver.bindAddress'),\n"
            "      s.conf.get('spark.ui.enabled'), s.sparkContext.uiWebUrl)\n"
            "s.stop()\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["127.0.0.1", "127.0.0.1", "false", "None"]
    noise = [line for line in res.stderr.splitlines() if " WARN " in line or "Warning" in line]
    assert noise == []


@pytest.mark.parametrize(("name", "decoy"), [("r[1].parquet", "r1.parquet"), ("c[1].csv", "c1.csv"),
                                              ("a*b.csv", "aXb.csv"), ("{x,y}.parquet", "x.parquet")])
def test_a_file_name_with_glob_characters_is_that_file(spark, tmp_path, name, decoy):
    """Spark (Hadoop) expands ``[1]``, ``*``, ``{x,y}`` in paths: the file named is counted, not a match."""
    write_reports(tmp_path / decoy, np.ones((6, 3), dtype=np.uint8))
    write_reports(tmp_path / name, np.eye(3, dtype=np.uint8))
    t, names = tally_file_spark(tmp_path / name, spark=spark)
    assert names == ["bit0", "bit1", "bit2"]
    assert t.reports == 3 and t.bit_counts.tolist() == [1, 1, 1]


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_a_folder_named_like_a_hive_partition_adds_no_column(spark, hive_named_file, ext):
    t, names = tally_file_spark(hive_named_file(ext), spark=spark)
    assert names == ["bit0", "bit1", "bit2"]
    assert t.reports == 3 and t.bit_counts.tolist() == [1, 1, 1]


def test_pandas_stored_index_is_not_a_report_column(spark, tmp_path):
    """As in the embedded engines (tests/engines/test_pandas_index_columns.py): the columns pandas' metadata names
    as the stored index are left out."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 0, 1, 1, 0], "b": [0, 0, 1, 1, 1]}).set_axis(
        pd.Index([100, 101, 102, 103, 104], name="person"))
    frame = frame[frame["a"] + frame["b"] > 0]
    path = tmp_path / "indexed.parquet"
    frame.to_parquet(path)
    t, names = tally_file(path, engine="spark")
    assert names == ["a", "b"]
    assert t.to_dict(include_vector_histogram=True) == tally_file(path, engine="numpy")[0].to_dict(
        include_vector_histogram=True)
    assert t.bit_counts.tolist() == [3, 3] and t.reports == 4


def test_csv_header_names_as_the_other_engines(spark, tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("a,a,b\n0,1,1\n1,1,0\n")
    assert tally_file_spark(path, spark=spark)[1] == tally_file(path, engine="numpy")[1] == ["a", "a", "b"]
    path.write_text(",a,b\n0,1,1\n1,1,0\n")
    with pytest.raises(DataError, match=r"column 1 of the header has no name.*index=False"):
        tally_file_spark(path, spark=spark)
