"""Spark engine: tally a report file or a Spark DataFrame with PySpark (seed 001 §1.3, eq. 3.3–3.4).

This module is an adapter (``pip install 'sufficientdp[spark]'``, plus a Java 17+ runtime); it holds no math
beyond the three counts that :func:`sufficientdp.aggregation.tally.tally` computes, and gives identical results:

* ``bit_counts`` — Σ over reports of ``col_j`` for every column j;
* ``weight_histogram`` — reports per number of set bits Σ_j col_j;
* ``vector_histogram`` — reports per code Σ_j col_j·2^j (bit j ↔ 2^j, least significant first), for L <= 16 by
  default and L <= 20 on request.

Everything is one Spark aggregation over the data: a ``GROUP BY`` on the weight (at most L+2 groups, so the
shuffle is tiny) that also sums every column, or, for the full histogram, a ``GROUP BY`` on the code (at most
2^L + 1 groups) from which the driver derives the bit counts and weights; the same pass counts the valid cells of
every column, and the counts are trusted only when all cells are valid, else a
:class:`~sufficientdp._errors.DataError` names the first bad column (as the DuckDB engine does).

Validation follows the other engines: CSV cells are read as text and accepted exactly when DuckDB's engine accepts
them (Python ``int()`` giving 0 or 1: optional blanks and sign, leading zeros); Parquet columns must be integer,
floating-point or boolean (unsigned 64-bit columns arrive in Spark as ``decimal(20,0)`` and are accepted as
integers); CSV rows with too few or too many values are rejected. DataFrame columns may also be strings (then read
like CSV cells).

Sessions: pass ``spark=`` to use a session you configured (a cluster: ``spark://host:7077``, YARN, Kubernetes;
see docs/spark.md); otherwise the active session is reused, or a new one is started with ``master`` (default
``local[*]``, all cores of this machine) and left running for later calls, as ``getOrCreate`` does.
"""

from __future__ import annotations

import csv
import importlib.resources
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import DataError, ParameterError
from ..aggregation.tally import MAX_HISTOGRAM_BITS, Tally
from ..io import _check_csv_names, _pandas_index_columns, detect_format
from ._paths import hadoop_escaped

__all__ = ["tally_dataframe_spark", "tally_file_spark"]

# A text cell Python's int() reads as 1, and one it reads as 0 or 1 (the DuckDB engine's _CSV_BIT; Java regex).
_TEXT_ONE = r"^\s*\+?0*1\s*$"
_TEXT_BIT = r"^\s*(\+?0*1|[+-]?0+)\s*$"
# Name of the column Spark fills with the raw line of a CSV row that has too few or too many values.
_CORRUPT = "_sufficientdp_corrupt_record"


def _pyspark() -> Any:
    try:
        import pyspark.sql
        # pyspark warns about pandas versions it has not certified (the engine does not use pandas through Spark)
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    except ImportError as exc:
        raise ImportError("the spark engine needs pyspark and Java 17+: "
                          "pip install 'sufficientdp[spark]'") from exc
    return pyspark.sql


def _session(spark: Any, master: Any) -> Any:
    """The session to use: ``spark`` if given, else the active one, else a new one on ``master``."""
    if not isinstance(master, str) or not master.strip():
        raise ParameterError(f"master must be a non-empty Spark master URL such as 'local[*]'; got {master!r}")
    sql = _pyspark()
    if spark is not None:
        if not (hasattr(spark, "read") and hasattr(spark, "createDataFrame")):
            raise ParameterError(f"spark must be a pyspark.sql.SparkSession or None; got {type(spark).__name__}")
        return spark
    active = sql.SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = (sql.SparkSession.builder.master(master).appName("sufficientdp")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.ui.enabled", "false")  # no web UI unless the caller brings a session with one
               .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={_quiet_log_config()}"))
    if master.strip().startswith("local"):
        # A local session serves nobody else: its driver binds to loopback, not the machine's external interface.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    return builder.getOrCreate()


def _quiet_log_config() -> str:
    """URI of the packaged log4j2 configuration that keeps Spark's JVM to errors only."""
    resource = importlib.resources.files(__package__) / "log4j2-quiet.properties"
    # An installed package keeps its data as real files; as_file also covers zipped installs (the path then lives
    # as long as the interpreter's temporary directory, which outlives the session we configure).
    with importlib.resources.as_file(resource) as path:
        return path.as_uri()


def _check_full_histogram(full_histogram: bool | None, bits: int) -> bool:
    if full_histogram is None:
        return bits <= 16
    if not isinstance(full_histogram, bool):
        raise ParameterError(f"full_histogram must be True, False or None; got {full_histogram!r}")
    if full_histogram and bits > MAX_HISTOGRAM_BITS:
        raise ParameterError(f"full_histogram needs bits in [1, {MAX_HISTOGRAM_BITS}]; got bits={bits}")
    return full_histogram


def _cell_columns(col: Any, dtype: Any, name: str, label: str, *, allow_text: bool) -> tuple[Any, Any]:
    """``(bit, check)`` for one bit column, two integer expressions: ``bit`` is the cell's bit (0 or 1, NULL for a
    missing cell) where the cell is 0 or 1, and is 0 or 1 (or NULL) for any other cell too, so that sums of bits
    and codes Σ_j bit_j·2^j can never overflow; ``check`` is 0 or 1 exactly where the cell is 0 or 1 (equal to
    ``bit`` there), and NULL, negative or >= 2 where it is not (missing, NaN, 2, 0.5, text "x").

    A row is valid exactly when ``check_0 | check_1 | ... | check_{L-1}`` is 0 or 1 (a bitwise OR is 0 or 1 only
    when every term is, and NULL when a term is): one comparison per row instead of one count per column.
    Plain comparisons, casts and bitwise operators, no ``CASE WHEN``: Spark compiles 64 of them into one fast
    projection, where nested conditionals made it fall back to interpreted evaluation (~100x slower).
    """
    from pyspark.sql import types as T

    if isinstance(dtype, T.BooleanType):
        bit = col.cast("int")
        return bit, bit
    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType)):
        check = col.cast("int")  # the cast cannot overflow
        return check.bitwiseAND(1), check
    numeric = (T.LongType, T.FloatType, T.DoubleType)
    if isinstance(dtype, numeric) or (isinstance(dtype, T.DecimalType) and dtype.scale == 0):
        bit, ok = (col == 1).cast("int"), col.isin(0, 1)
    elif allow_text and isinstance(dtype, T.StringType):
        bit, ok = col.rlike(_TEXT_ONE).cast("int"), col.rlike(_TEXT_BIT)
    else:
        raise DataError(f"column {name!r} of {label} must hold 0/1 numbers; got type {dtype.simpleString()}")
    return bit, bit.bitwiseOR((~ok).cast("int") * 2)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _tally(df: Any, columns: list[str], names: list[str], label: str, *, full_histogram: bool | None,
           allow_text: bool, corrupt: bool = False, progress: Callable[[int, int], None] | None = None) -> Tally:
    """Tally the ``columns`` of ``df`` (and check the CSV corrupt-record column if ``corrupt``).

    One Spark aggregation over the data (three Spark jobs: Spark's planner runs the shuffle and result stages as
    jobs, and reading a Parquet schema is one more): per row the key (the weight Σ_j x_j, or the code Σ_j x_j 2^j
    for the full histogram) and one validity flag, then ``GROUP BY key`` with ``count(*)``, the count of valid
    rows and, for the weight key only, the per-column sums (the full histogram gives the bit counts on the
    driver). The counts are trusted only when every row was valid; otherwise a second pass (error path only)
    counts the bad cells per column and a DataError names the first bad column (messages name the bit columns by
    ``names``, the header's names where ``columns`` are positional aliases).
    """
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    bits = len(names)
    if bits == 0:
        raise DataError(f"{label} has no columns; expected one 0/1 column per bit")
    full = _check_full_histogram(full_histogram, bits)
    fields = {f.name: f.dataType for f in df.schema.fields}
    cells = [_cell_columns(df[_quote(c)], fields[c], n, label, allow_text=allow_text)
             for c, n in zip(columns, names, strict=True)]
    values = [v for v, _ in cells]
    check = cells[0][1]
    for _, c in cells[1:]:
        check = check.bitwiseOR(c)
    if full:
        key = sum((F.shiftleft(v, j) for j, v in enumerate(values[1:], start=1)), values[0])
    else:
        key = sum(values[1:], values[0])
    # Project first, aggregate the projected columns: computing the sums' inputs inside the aggregation makes
    # Spark generate one method too large for the JVM to compile (measured 2-3x slower at L = 64).
    projected = [key.alias("k"), check.isin(0, 1).alias("ok")]
    aggs = [F.count(F.lit(1)).alias("n"), F.count_if(F.col("ok")).alias("ok")]
    if not full:
        projected += [v.alias(f"b{j}") for j, v in enumerate(values)]
        aggs += [F.sum(F.col(f"b{j}")).alias(f"s{j}") for j in range(bits)]
    if corrupt:
        projected.append(df[_CORRUPT].alias("ragged"))
        aggs.append(F.count(F.col("ragged")).alias("ragged"))
    try:
        rows = df.select(*projected).groupBy("k").agg(*aggs).collect()
        n = sum(int(r[1]) for r in rows)
        if sum(int(r[2]) for r in rows) != n or (corrupt and any(r["ragged"] for r in rows)):
            _raise_bad(df, cells, names, label, corrupt=corrupt)
    except PySparkException as exc:
        raise DataError(f"cannot read {label}: {str(exc).splitlines()[0]}") from None
    # Every cell is 0 or 1 from here on, so no key is NULL.
    keys = np.array([int(r[0]) for r in rows], dtype=np.int64)
    sizes = np.array([int(r[1]) for r in rows], dtype=np.int64)
    vh = None
    weights = np.zeros(bits + 1, dtype=np.int64)
    if full:
        vh = np.zeros(1 << bits, dtype=np.int64)
        vh[keys] = sizes
        codes = np.arange(1 << bits, dtype=np.int64)
        # Bit j is set in code c iff (c >> j) & 1: the counts and weights follow from the histogram exactly.
        counts = np.array([int(vh[(codes >> j) & 1 == 1].sum()) for j in range(bits)], dtype=np.int64)
        np.add.at(weights, np.bitwise_count(codes.astype(np.uint64)).astype(np.intp), vh)
    else:
        weights[keys] = sizes
        counts = np.zeros(bits, dtype=np.int64)
        for r in rows:
            counts += np.array([int(r[f"s{j}"] or 0) for j in range(bits)], dtype=np.int64)
    if progress is not None:
        progress(n, n)
    return Tally(bits=bits, reports=n, bit_counts=counts, weight_histogram=weights, vector_histogram=vh)


def _raise_bad(df: Any, cells: list[tuple[Any, Any]], names: list[str], label: str, *, corrupt: bool) -> None:
    """Second pass, only when some row is bad: a DataError naming the first bad column (or the ragged CSV rows)."""
    from pyspark.sql import functions as F

    aggs = [F.count(F.lit(1)).alias("n")]
    aggs += [F.count_if(check.isin(0, 1)).alias(f"ok{j}") for j, (_, check) in enumerate(cells)]
    if corrupt:  # Spark refuses a query of the corrupt-record column alone; here it comes with the others
        aggs += [F.count(df[_CORRUPT]).alias("ragged"), F.first(df[_CORRUPT], ignorenulls=True).alias("line")]
    row = df.agg(*aggs).collect()[0]
    if corrupt and row["ragged"]:
        raise DataError(f"{label}: {int(row['ragged'])} row(s) do not have {len(names)} comma-separated values "
                        f"(one per column); first: {row['line']!r}")
    for j, name in enumerate(names):
        bad = int(row["n"]) - int(row[f"ok{j}"])
        if bad:
            raise DataError(f"column {name!r} of {label} must hold only 0 and 1 with no missing values; "
                            f"{bad} row(s) do not")
    raise DataError(f"{label} has rows that are not 0/1 reports")  # pragma: no cover - a column is named above


def _local_pandas_index(path: Path) -> frozenset[str]:
    """The columns in which pandas stored its index in the local Parquet file ``path``
    (:func:`sufficientdp.io._pandas_index_columns`, read with pyarrow); none for a folder, a URI, a file pyarrow
    cannot read, or without pyarrow (then such a column is read as a bit column, and named as not 0/1)."""
    try:
        import pyarrow.parquet as pq

        return _pandas_index_columns(pq.read_schema(path).metadata) if path.is_file() else frozenset()
    except Exception:  # noqa: BLE001 - Spark reads the file and reports what is wrong with it
        return frozenset()


def tally_dataframe_spark(df: Any, *, columns: Sequence[str] | None = None, full_histogram: bool | None = None,
                          progress: Callable[[int, int], None] | None = None) -> tuple[Tally, list[str]]:
    """Tally a Spark DataFrame of reports (one 0/1 column per bit) where it lives, without collecting it.

    Args:
        df: a ``pyspark.sql.DataFrame``; columns may be integer, floating-point, boolean, ``decimal(p,0)`` or
            strings (read like CSV cells: ``"1"``, ``" 01"``, ``"+1"``, ``"-0"`` are accepted).
        columns: the bit columns in bit order (bit j = ``columns[j]``); default: all columns of ``df``.
        full_histogram: compute the 2^L vector histogram; default: when L <= 16. Allowed only for L <= 20.
        progress: optional callback ``progress(rows_done, rows_total)``, called once when the count is done.

    Returns:
        The :class:`Tally` and the column names (identical to the numpy engine on the same values).

    Raises:
        ImportError: pyspark is not installed.
        ParameterError: ``df`` is not a DataFrame, ``columns`` is not a list of names of ``df`` or repeats one,
            or ``full_histogram`` is requested for L > 20.
        DataError: no columns, a column of another type, a missing value or a value other than 0/1 (the message
            names the column).

    Example (needs pyspark and Java; run by tests/engines/test_spark_engine.py):
        >>> df = spark.createDataFrame([(1, 0), (1, 1), (0, 0)], ["a", "b"])  # doctest: +SKIP
        >>> t, names = tally_dataframe_spark(df)  # doctest: +SKIP
        >>> names, t.bit_counts.tolist(), t.vector_histogram.tolist()  # doctest: +SKIP
        (['a', 'b'], [2, 1], [1, 1, 0, 1])
    """
    _pyspark()
    if not (hasattr(df, "schema") and hasattr(df, "groupBy") and hasattr(df, "columns")):
        raise ParameterError(f"df must be a pyspark.sql.DataFrame; got {type(df).__name__}")
    available = list(df.columns)
    if columns is None:
        names = available
    else:
        if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
            raise ParameterError(f"columns must be a sequence of column names; got {columns!r}")
        names = list(columns)
        missing = [c for c in names if c not in available]
        if missing:
            raise ParameterError(f"columns {missing!r} are not in the DataFrame; it has {available!r}")
    if len(set(names)) != len(names):
        raise ParameterError(f"bit columns must have distinct names; got {names!r}")
    return _tally(df, names, names, "the DataFrame", full_histogram=full_histogram, allow_text=True,
                  progress=progress), names


def tally_file_spark(path: str | os.PathLike[str], *, full_histogram: bool | None = None, spark: Any = None,
                     master: str = "local[*]",
                     progress: Callable[[int, int], None] | None = None) -> tuple[Tally, list[str]]:
    """Tally a CSV or Parquet report file (one 0/1 column per bit) with Spark.

    Args:
        path: ``.csv``, ``.parquet`` or ``.pq`` file (a Parquet folder as Spark writes it is accepted too). A
            URI (``hdfs://``, ``s3a://``, ``file://``) is passed to Spark as is; every executor must reach it.
        full_histogram: compute the 2^L vector histogram; default: when L <= 16. Allowed only for L <= 20.
        spark: a ``pyspark.sql.SparkSession`` to run on (e.g. a cluster); default: the active session, or a new
            local one on ``master``.
        master: Spark master URL for a new session (``local[*]``, ``local[2]``, ``spark://host:7077``, ``yarn``,
            ``k8s://https://host:443``); ignored when ``spark`` is given or a session is active.
        progress: optional callback ``progress(rows_done, rows_total)``, called once when the count is done.

    Returns:
        The :class:`Tally` (same fields as ``tally(read_reports(path)[0])``) and the column names.

    Raises:
        ImportError: pyspark is not installed.
        ParameterError: unknown file extension, bad ``spark``/``master``, or ``full_histogram`` requested for
            L > 20.
        DataError: missing or unreadable file, no columns, rows with too few or too many values, a missing value
            or a value other than 0/1 (the message names the column).

    Example (needs pyspark and Java; run by tests/engines/test_spark_engine.py):
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
        >>> _ = p.write_text("a,b\\n1,0\\n1,1\\n0,0\\n")
        >>> t, names = tally_file_spark(p, master="local[1]")  # doctest: +SKIP
        >>> names, t.bit_counts.tolist(), t.weight_histogram.tolist()  # doctest: +SKIP
        (['a', 'b'], [2, 1], [1, 1, 1])
    """
    fmt = detect_format(path)
    text = os.fspath(path)
    is_uri = "://" in text
    if not is_uri and not Path(text).exists():
        raise DataError(f"input file {text!r} does not exist")
    session = _session(spark, master)
    label = repr(text)
    text = hadoop_escaped(text)  # the file named, never a glob pattern (r[1].parquet is not r1.parquet)
    from pyspark.errors import PySparkException
    from pyspark.sql import types as T

    try:
        if fmt == "parquet":
            df = session.read.parquet(text)
            index = frozenset() if is_uri else _local_pandas_index(Path(os.fspath(path)))
            columns = names = [c for c in df.columns if c not in index]
        else:
            # The header as Python's csv module reads it (as sufficientdp.io does; Spark would rename duplicates).
            first = session.read.text(text).limit(1).collect()
            if not first:
                raise DataError(f"{label} is empty; expected a header row with one column per bit")
            names = [h.strip() for h in next(csv.reader([first[0][0]]), [])]
            if not names or names == [""]:
                raise DataError(f"{label} has an empty header; expected one column per bit")
            _check_csv_names(names, os.fspath(path))
            # Positional names and a corrupt-record column: a row with too few or too many values is caught.
            columns = [f"_c{j}" for j in range(len(names))]
            schema = T.StructType([T.StructField(c, T.StringType()) for c in columns]
                                  + [T.StructField(_CORRUPT, T.StringType())])
            reader = session.read.option("header", True).option("escape", '"').option("quote", '"')
            df = (reader.schema(schema).option("enforceSchema", True).option("mode", "PERMISSIVE")
                  .option("columnNameOfCorruptRecord", _CORRUPT).csv(text))
    except PySparkException as exc:
        raise DataError(f"cannot read {label}: {str(exc).splitlines()[0]}") from None
    tally = _tally(df, columns, names, label, full_histogram=full_histogram, allow_text=fmt == "csv",
                   corrupt=fmt == "csv", progress=progress)
    return tally, names
