"""Aggregation engines: the same :class:`~sufficientdp.aggregation.tally.Tally` of a report file, computed by
numpy, DuckDB or Spark (STYLE.md: one ``engine=`` argument picks the computation strategy; every engine gives the
same result).

* ``"numpy"`` — :func:`sufficientdp.io.read_reports` loads the file, :func:`sufficientdp.aggregation.tally.tally`
  counts it (core dependencies only; Parquet needs ``sufficientdp[parquet]``).
* ``"duckdb"`` — :func:`~sufficientdp.engines.duckdb_engine.tally_file_duckdb` counts in SQL over the file without
  loading it into memory (``pip install 'sufficientdp[duckdb]'``).
* ``"spark"`` — :func:`~sufficientdp.engines.spark_engine.tally_file_spark` counts with PySpark, locally or on a
  cluster (``pip install 'sufficientdp[spark]'`` and Java 17+); data already in Spark:
  :func:`~sufficientdp.engines.spark_engine.tally_dataframe_spark`. See docs/spark.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from .._errors import ParameterError
from ..aggregation.tally import Tally, tally_packed
from ..io import detect_format, iter_reports
from ..randomization._packing import pack_bits, words_per_report
from .duckdb_engine import tally_file_duckdb
from .spark_engine import tally_dataframe_spark, tally_file_spark

__all__ = ["ENGINES", "tally_dataframe_spark", "tally_file", "tally_file_duckdb", "tally_file_spark"]

ENGINES = ("numpy", "duckdb", "spark")

#: Rows packed and tallied at a time by the numpy engine (bounds the memory of the packed copy).
CHUNK_ROWS = 1 << 18


def _row_count(path: str | os.PathLike[str]) -> int:
    """Rows of a Parquet file from its metadata (0 when unknown, e.g. for CSV), for progress bars."""
    if detect_format(path) != "parquet":
        return 0
    try:
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception:  # noqa: BLE001 - only a progress total; the reader reports real errors
        return 0


def tally_file(path: str | os.PathLike[str], *, engine: str = "numpy", full_histogram: bool | None = None,
               progress: Callable[[int, int], None] | None = None,
               spark_master: str = "local[*]") -> tuple[Tally, list[str]]:
    """Tally a CSV or Parquet report file (one 0/1 column per bit) with the chosen engine.

    Args:
        path: ``.csv``, ``.parquet`` or ``.pq`` file.
        engine: one of :data:`ENGINES`.
        full_histogram: compute the 2^L vector histogram; default: when L <= 16. Allowed only for L <= 20.
        progress: optional callback ``progress(rows_done, rows_total)`` (numpy engine: called per chunk; spark
            engine: called once at the end; duckdb engine: not called).
        spark_master: Spark master URL for ``engine="spark"`` when no session is active (``local[*]``,
            ``spark://host:7077``, ``yarn``, ...; docs/spark.md).

    Returns:
        The :class:`Tally` and the column names; identical for every engine.

    Raises:
        ParameterError: unknown ``engine`` or file extension, or ``full_histogram`` requested for L > 20.
        DataError: missing file, no columns, a missing value or a value other than 0/1.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
        >>> _ = p.write_text("a,b\\n1,0\\n1,1\\n0,0\\n")
        >>> tally_file(p)[0].to_dict(include_vector_histogram=True)
        {'bits': 2, 'reports': 3, 'bit_counts': [2, 1], 'weight_histogram': [1, 1, 1], 'vector_histogram': [1, 1, 0, 1]}
    """
    if not isinstance(engine, str) or engine not in ENGINES:
        raise ParameterError(f"engine must be one of {', '.join(map(repr, ENGINES))}; got {engine!r}")
    if engine == "duckdb":
        return tally_file_duckdb(path, full_histogram=full_histogram)
    if engine == "spark":
        return tally_file_spark(path, full_histogram=full_histogram, progress=progress, master=spark_master)
    total: Tally | None = None
    names: list[str] = []
    done = 0
    total_rows = _row_count(path)
    for chunk, names in iter_reports(path, CHUNK_ROWS):
        bits = chunk.shape[1]
        if total is None:
            total = tally_packed(np.zeros((0, words_per_report(bits)), dtype=np.uint64), bits,
                                 full_histogram=full_histogram)
        if chunk.shape[0]:
            total = total.merge(tally_packed(pack_bits(chunk), bits, full_histogram=full_histogram))
        done += chunk.shape[0]
        if progress is not None:
            progress(done, max(total_rows, done))
    assert total is not None  # iter_reports yields at least once
    return total, names
