"""DuckDB engine: tally a report file in SQL, without loading it into numpy (seed 001 §1.3, eq. 3.3–3.4).

This module is an adapter (``pip install 'sufficientdp[duckdb]'``); it holds no math beyond the three counts that
:func:`sufficientdp.aggregation.tally.tally` computes, and gives identical results:

* ``bit_counts`` — ``SUM(col_j)`` for every column j;
* ``weight_histogram`` — ``GROUP BY Σ_j col_j`` (number of set bits per report);
* ``vector_histogram`` — ``GROUP BY Σ_j col_j·2^j`` (bit j ↔ 2^j, least significant first), for L <= 16 by
  default and L <= 20 on request.

Validation happens in one SQL pass before the result is trusted: every value must be 0 or 1 and none may be
missing; a :class:`~sufficientdp._errors.DataError` names the first offending column. CSV cells are read as text
and accepted exactly when Python's ``int()`` would give 0 or 1 (as :func:`sufficientdp.io.read_reports` does);
Parquet columns must be integer, floating-point or boolean (as :func:`~sufficientdp.randomization.encode_bits`
requires).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import DataError, ParameterError
from ..aggregation.tally import MAX_HISTOGRAM_BITS, Tally
from ..io import detect_format

__all__ = ["tally_file_duckdb"]

# A CSV cell Python's int() reads as 0 or 1: optional blanks, optional sign ("-" only before zeros), leading zeros.
_CSV_BIT = r"\s*(\+?0*1|[+-]?0+)\s*"
_PARQUET_TYPES = frozenset({
    "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
    "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE",
})


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError as exc:
        raise ImportError("the duckdb engine needs duckdb: pip install 'sufficientdp[duckdb]'") from exc
    return duckdb


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def tally_file_duckdb(path: str | os.PathLike[str], *,
                      full_histogram: bool | None = None) -> tuple[Tally, list[str]]:
    """Tally a CSV or Parquet report file (one 0/1 column per bit) with DuckDB.

    Args:
        path: ``.csv``, ``.parquet`` or ``.pq`` file with a header / schema naming one column per bit.
        full_histogram: compute the 2^L vector histogram; default: when L <= 16. Allowed only for L <= 20.

    Returns:
        The :class:`Tally` (same fields as ``tally(read_reports(path)[0])``) and the column names.

    Raises:
        ImportError: duckdb is not installed.
        ParameterError: unknown file extension, or ``full_histogram`` requested for L > 20.
        DataError: missing or unreadable file, no columns, a missing value or a value other than 0/1 (the message
            names the column).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
        >>> _ = p.write_text("a,b\\n1,0\\n1,1\\n0,0\\n")
        >>> t, names = tally_file_duckdb(p)
        >>> names, t.bit_counts.tolist(), t.weight_histogram.tolist(), t.vector_histogram.tolist()
        (['a', 'b'], [2, 1], [1, 1, 1], [1, 1, 0, 1])
    """
    fmt = detect_format(path)
    p = Path(path)
    if not p.is_file():
        raise DataError(f"input file {str(path)!r} does not exist")
    if fmt == "csv" and p.stat().st_size == 0:  # as the numpy engine (DuckDB would invent one empty column)
        raise DataError(f"{str(path)!r} is empty; expected a header row with one column per bit")
    duckdb = _duckdb()
    if fmt == "parquet":
        source = f"read_parquet({_literal(str(p))})"
    else:
        source = (f"read_csv({_literal(str(p))}, header = true, all_varchar = true, delim = ',', quote = '\"', "
                  "escape = '\"')")
    con = duckdb.connect(":memory:")
    try:
        try:
            schema = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        except duckdb.Error as exc:
            raise DataError(f"cannot read {str(path)!r}: {str(exc).splitlines()[0]}") from None
        names = [str(row[0]) for row in schema]
        if not names:
            raise DataError(f"{str(path)!r} has no columns")
        bits = len(names)
        if full_histogram is None:
            full_histogram = bits <= 16
        if full_histogram and bits > MAX_HISTOGRAM_BITS:
            raise ParameterError(f"full_histogram needs bits in [1, {MAX_HISTOGRAM_BITS}]; got bits={bits}")
        cols = [_ident(n) for n in names]
        if fmt == "parquet":
            for name, row in zip(names, schema, strict=True):
                if str(row[1]) not in _PARQUET_TYPES:
                    raise DataError(f"column {name!r} of {str(path)!r} must hold 0/1 numbers; got type {row[1]}")
            valid = [f"coalesce(CAST({c} AS DOUBLE) IN (0, 1), false)" for c in cols]
        else:
            valid = [f"coalesce(regexp_full_match({c}, {_literal(_CSV_BIT)}), false)" for c in cols]
        # TRY_CAST keeps the validating pass from failing on a bad cell; the sums are used only if no cell is bad.
        values = [f"TRY_CAST({c} AS INTEGER)" for c in cols]
        try:
            row0 = con.execute(
                "SELECT count(*), " + ", ".join(f"count(*) FILTER (WHERE NOT {v})" for v in valid) + ", "
                + ", ".join(f"sum({v})" for v in values) + f" FROM {source}"
            ).fetchone()
            n = int(row0[0])
            bad = [int(x) for x in row0[1:1 + bits]]
            for name, count in zip(names, bad, strict=True):
                if count:
                    raise DataError(f"column {name!r} of {str(path)!r} must hold only 0 and 1 with no missing "
                                    f"values; {count} row(s) do not")
            counts = np.array([int(x or 0) for x in row0[1 + bits:]], dtype=np.int64)
            weight_expr = " + ".join(values)
            weights = np.zeros(bits + 1, dtype=np.int64)
            for w, c in con.execute(f"SELECT {weight_expr} AS w, count(*) FROM {source} GROUP BY w").fetchall():
                weights[int(w)] = int(c)
            vh = None
            if full_histogram:
                code_expr = " + ".join(f"{v} * {1 << j}" for j, v in enumerate(values))
                vh = np.zeros(1 << bits, dtype=np.int64)
                for code, c in con.execute(
                        f"SELECT {code_expr} AS code, count(*) FROM {source} GROUP BY code").fetchall():
                    vh[int(code)] = int(c)
        except duckdb.Error as exc:
            raise DataError(f"cannot read {str(path)!r}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    if fmt == "csv":
        names = [n.strip() for n in names]
    return Tally(bits=bits, reports=n, bit_counts=counts, weight_histogram=weights, vector_histogram=vh), names
