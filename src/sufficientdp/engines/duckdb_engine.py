"""DuckDB engine: tally a report file in SQL, without loading it into numpy (seed 001 §1.3, eq. 3.3–3.4).

This module is an adapter (``pip install 'sufficientdp[duckdb]'``); it holds no math beyond the three counts that
:func:`sufficientdp.aggregation.tally.tally` computes, and gives identical results:

* ``bit_counts`` — ``SUM(col_j)`` for every column j;
* ``weight_histogram`` — ``GROUP BY Σ_j col_j`` (number of set bits per report);
* ``vector_histogram`` — ``GROUP BY Σ_j col_j·2^j`` (bit j ↔ 2^j, least significant first), for L <= 16 by
  default and L <= 20 on request.

A file of plain 0/1 values is counted in one scan (:func:`_tally_one_pass`: ``GROUP BY`` a per-row key — the
row's hash or packed bits for the full histogram, its weight otherwise — with the counts derived from the groups;
a Parquet file without the full histogram, when pyarrow is installed, is read by DuckDB and counted batch by batch
by the numpy engine's kernel, :func:`_tally_parquet_batches`, as the per-row weight costs more in SQL than the
whole numpy count); anything unusual goes to the validating passes. Every value must be 0 or 1 and none may be
missing; a :class:`~sufficientdp._errors.DataError` names the first offending column. CSV cells are accepted
exactly when Python's ``int()`` would give 0 or 1 (as :func:`sufficientdp.io.read_reports` does);
Parquet columns must be integer, floating-point or boolean (as :func:`~sufficientdp.randomization.encode_bits`
requires).

:func:`tally_collector_duckdb` counts the released reports of a collector database (docs/collector.md) in SQL,
reading the SQLite file through DuckDB's ``sqlite_scanner`` extension. That extension is not part of the duckdb
wheel and DuckDB would normally download it; here it is loaded from a local file only — the
``duckdb-extension-sqlite-scanner`` package (pulled in by the ``duckdb`` extra on Linux x86_64/aarch64, macOS arm64
and Windows x64; built for exactly one DuckDB version, hence ``duckdb>=1.5,<1.6``), or else an extension already
installed in DuckDB's local extension directory. Nothing is downloaded, and unsigned extensions stay refused, so
the file must carry DuckDB's signature.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import DataError, ParameterError
from ..aggregation.tally import MAX_HISTOGRAM_BITS, Tally, tally_histogram
from ..io import _batch_bits, _check_csv_names, _csv_header, _pandas_index_columns, detect_format
from ._handoff import Handoff
from ._paths import duckdb_readable

__all__ = ["sqlite_path", "tally_collector_duckdb", "tally_file_duckdb"]

# A CSV cell Python's int() reads as 0 or 1: optional blanks, optional sign ("-" only before zeros), leading zeros.
_CSV_BIT = r"\s*(\+?0*1|[+-]?0+)\s*"
#: Values per Arrow batch that DuckDB hands to the numpy kernel (:func:`_tally_parquet_batches`): 4 MB of ``uint8``,
#: fewer and larger batches than the numpy engine's (each one costs its reading thread a GIL hand-over).
_ARROW_BATCH_CELLS = 1 << 22
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

    Examples:
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
    with duckdb_readable(p) as readable:  # (never a glob pattern: r[1].parquet is not r1.parquet)
        return _tally_named_file(readable, path, fmt, full_histogram)


def _tally_named_file(p: Path, path: str | os.PathLike[str], fmt: str,
                      full_histogram: bool | None) -> tuple[Tally, list[str]]:
    """:func:`tally_file_duckdb` on the file ``p`` that DuckDB reads (``path``, as the user named it, in
    messages)."""
    duckdb = _duckdb()
    if fmt == "parquet":
        source = f"read_parquet({_literal(str(p))}, hive_partitioning = false)"
    else:
        source = (f"read_csv({_literal(str(p))}, hive_partitioning = false, header = true, all_varchar = true, "
                  "delim = ',', quote = '\"', escape = '\"')")
    con = duckdb.connect(":memory:")
    try:
        try:
            schema = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
            if fmt == "parquet":  # pandas' stored index is not a report column (in every engine)
                index = _pandas_index_columns({b"pandas": row[0] for row in con.execute(
                    f"SELECT value FROM parquet_kv_metadata({_literal(str(p))}) WHERE key = 'pandas'::BLOB"
                ).fetchall()})
                schema = [row for row in schema if str(row[0]) not in index]
        except duckdb.Error as exc:
            raise DataError(f"cannot read {str(path)!r}: {str(exc).splitlines()[0]}") from None
        names = [str(row[0]) for row in schema]
        if not names:
            raise DataError(f"{str(path)!r} has no columns")
        labels = names  # the names returned and in messages: a CSV header's as every engine reads it (DuckDB
        if fmt == "csv":  # renames an empty or repeated name)
            header = _csv_header(p)
            if header is not None and len(header) == len(names):
                _check_csv_names(header, path)
                labels = header
            else:
                labels = [n.strip() for n in names]
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
        # One pass over the file when every value turns out to be a plain 0 or 1 (the usual case); otherwise the
        # validating passes below name the bad column or accept what int() accepts.
        try:
            fast = _tally_one_pass(con, p, source, cols, fmt, [str(row[1]) for row in schema], full_histogram)
        except duckdb.Error:
            fast = None
        if fast is not None:
            return fast, labels
        if fmt == "parquet":
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
            for name, count in zip(labels, bad, strict=True):
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
    return Tally(bits=bits, reports=n, bit_counts=counts, weight_histogram=weights, vector_histogram=vh), labels


def _tally_one_pass(con: Any, path: Path, source: str, cols: list[str], fmt: str, types: list[str],
                    full_histogram: bool) -> Tally | None:
    """The tally in one scan of the file, or None when a value is not a plain 0/1 (or a column type calls for the
    careful passes).

    * Parquet, integer or boolean columns: a first query of ``count``/``min``/``max`` per column must show no
      missing value and values in [0, 1]; DuckDB answers it from the file's column statistics when the writer
      stored them (as it answers any such query), by a scan otherwise. Then, with the full histogram, ``GROUP BY
      hash(c0, …, c_{L-1})``: one 64-bit key per row from one function call (cheaper per row than combining the
      columns with arithmetic, and a single-column key for the hash table), each group mapped back to its row by
      the hashes of the 2^L possible rows, computed by the same function on the same column types (None if two of
      them collide or a group's hash is not among them). Floating-point columns (min/max cannot tell 0.5 from
      0/1) keep the ``GROUP BY`` of all columns with an exact 0/1 check of every group.
    * CSV: cells read as ``UTINYINT`` (DuckDB's integer parser, which also accepts ``1.0``, `` 1`` or ``0x1``);
      with the full histogram one 8-bit key per 8 columns (``c0 | c1 << 1 | … | c7 << 7``; at L <= 16 DuckDB's
      perfect hash aggregate, a direct array of 2^18 slots). The scan also returns the largest ``c0 | c1 | …``
      (<= 1 exactly when every value is 0 or 1) and the byte size settles the rest: with no empty cell every row
      takes at least 2L bytes (L cells of at least one character, L - 1 commas, a newline), so rows that take
      exactly n·2L bytes after the header, the last ending in a newline, have one character per cell, and the
      only single characters DuckDB reads as 0 or 1 are ``0`` and ``1``. Anything else (`` 1``, ``+1``, ``"1"``,
      CRLF line ends, a blank) goes to the careful passes, which apply Python's int() rules.
    * Parquet without the full histogram, when pyarrow is installed: :func:`_tally_parquet_batches` (DuckDB reads
      the file and hands Arrow batches to the numpy counting kernel).
    * Otherwise without the full histogram: ``GROUP BY`` the row weight with per-column sums.

    All counts are derived from the groups.
    """
    bits = len(cols)
    if fmt == "parquet" and any(t in ("FLOAT", "DOUBLE") for t in types):
        return _tally_group_all(con, source, cols) if full_histogram else None
    if fmt == "parquet" and not full_histogram and _arrow_available():
        return _tally_parquet_batches(con, path, cols, types)
    check_rows = fmt == "csv"
    data_bytes = 0
    if fmt == "csv":
        layout = _csv_layout(path)
        if layout is None or layout[1] % (2 * bits):
            return None  # cannot be one character per cell
        data_bytes = layout[1]
        typed = ", ".join("'UTINYINT'" for _ in cols)
        source = (f"read_csv({_literal(str(path))}, hive_partitioning = false, header = true, delim = ',', "
                  "quote = '\"', escape = '\"', "
                  f"types = [{typed}])")
        xs = list(cols)
    else:
        if not _counts_and_ranges_are_bits(con, source, cols):
            return None
        xs = [c if t == "UTINYINT" else f"CAST({c} AS UTINYINT)" for c, t in zip(cols, types, strict=True)]
    valid = f", max({' | '.join(xs)})" if check_rows else ""
    if full_histogram and fmt == "parquet":
        result = list(con.execute(f"SELECT hash({', '.join(cols)}) AS h, count(*) FROM {source} GROUP BY h"
                                  ).fetchnumpy().values())
        row_hash, count = np.asarray(result[0], dtype=np.uint64), np.asarray(result[1], dtype=np.int64)
        args = ", ".join(f"CAST((i >> {j}) & 1 AS {t})" for j, t in enumerate(types))
        table = np.asarray(con.execute(f"SELECT hash({args}) AS h FROM range({1 << bits}) AS t(i) ORDER BY i"
                                       ).fetchnumpy()["h"], dtype=np.uint64)
        order = np.argsort(table)
        ordered = table[order]
        if (ordered[1:] == ordered[:-1]).any():
            return None  # two possible rows share a hash
        at = np.minimum(np.searchsorted(ordered, row_hash), ordered.shape[0] - 1)
        if not (ordered[at] == row_hash).all():
            return None
        return _from_codes(bits, order[at].astype(np.int64), count)
    if full_histogram:
        keys = [" | ".join(x if i == 0 else f"({x} << {i})" for i, x in enumerate(xs[start:start + 8]))
                for start in range(0, bits, 8)]
        con.execute("SET perfect_ht_threshold = 18")  # two 8-bit keys and their NULL bits: 2^18 slots
        result = list(con.execute(
            "SELECT " + ", ".join(f"{k} AS k{i}" for i, k in enumerate(keys)) + f", count(*){valid} "
            f"FROM {source} GROUP BY ALL").fetchnumpy().values())
        group_keys, count = result[:len(keys)], np.asarray(result[len(keys)], dtype=np.int64)
        if check_rows and not _plain_bits(result[-1], group_keys):
            return None
        code = np.zeros(count.shape[0], dtype=np.int64)
        for i, key in enumerate(group_keys):
            code |= np.asarray(key, dtype=np.int64) << (8 * i)
        tally = _from_codes(bits, code, count)
    else:
        wide = [x if bits < 256 else f"CAST({x} AS USMALLINT)" for x in xs]  # the weight fits the type
        result = list(con.execute(
            f"SELECT {' + '.join(wide)} AS w, count(*){valid}" + "".join(f", CAST(sum({x}) AS BIGINT)" for x in xs)
            + f" FROM {source} GROUP BY w").fetchnumpy().values())
        w, count = result[0], np.asarray(result[1], dtype=np.int64)
        if check_rows and not _plain_bits(result[2], [w]):
            return None
        weights = np.zeros(bits + 1, dtype=np.int64)
        np.add.at(weights, np.asarray(w, dtype=np.int64), count)
        counts = np.array([int(np.asarray(s, dtype=np.int64).sum()) for s in result[-bits:]], dtype=np.int64)
        tally = Tally(bits=bits, reports=int(count.sum()), bit_counts=counts, weight_histogram=weights)
    if fmt == "csv" and data_bytes != 2 * bits * tally.reports:
        return None
    return tally


def _counts_and_ranges_are_bits(con: Any, source: str, cols: list[str]) -> bool:
    """One query of ``count``, ``min`` and ``max`` per column (DuckDB answers it from Parquet column statistics when
    the writer stored them): no missing value and every column within [0, 1]."""
    row = con.execute("SELECT count(*), " + ", ".join(f"count({c}), min({c}), max({c})" for c in cols)
                      + f" FROM {source}").fetchone()
    n = int(row[0])
    for j in range(len(cols)):
        count, lo, hi = row[1 + 3 * j: 4 + 3 * j]
        if int(count) != n or (n and (int(lo) < 0 or int(hi) > 1)):
            return False
    return True


def _arrow_available() -> bool:
    """pyarrow is installed (DuckDB's Arrow export needs it; the ``duckdb`` extra does not pull it in)."""
    return importlib.util.find_spec("pyarrow") is not None


def _tally_parquet_batches(con: Any, path: Path, cols: list[str], types: list[str]) -> Tally | None:
    """The tally of a Parquet file of integer or boolean columns without the full histogram: DuckDB reads and
    decodes the file and hands Arrow batches (``uint8`` columns) to the numpy engine's counting kernel
    (:func:`~sufficientdp.aggregation.columns.tally_columns`), each batch checked by the numpy engine's
    :func:`sufficientdp.io._batch_bits`; None when a value is missing or not 0/1, for the validating passes to name
    the column.

    Why not SQL: the weight histogram needs each row's weight ``c0 + … + c_{L-1}``, and DuckDB's L - 1 additions
    per row cost more than the plain per-column sums (docs/benchmarks.md, "Aggregation engines"), while numpy adds
    a batch's columns at a small fraction of the cost of decoding them.

    * Validation: the ``count``/``min``/``max`` query of every column (answered from the column statistics when
      every row group has them; skipped otherwise, as it would be a scan of its own), and in every batch no null
      and a largest value of at most 1 per column (which also catches statistics that do not match the data).
      Non-``UTINYINT`` columns are cast to ``UTINYINT`` in SQL (a negative or too large value fails the cast).
    * Parallel and bounded: DuckDB streams one query's result on one thread, so the row groups are split into up
      to ``threads`` (DuckDB's setting, the number of cores by default) contiguous ranges of ``file_row_number``,
      each read by its own cursor on its own thread (row groups outside a range are skipped from their
      statistics). The reading threads only fetch; this thread validates and counts every batch (with the
      kernel in the reading threads, they kept waiting for the GIL behind numpy's many short calls).
      Batches hold at most :data:`_ARROW_BATCH_CELLS` values, and at most two per stream plus the one being
      counted exist at a time.
    """
    from ..aggregation.columns import tally_columns

    duckdb = _duckdb()
    bits = len(cols)
    file = _literal(str(path))
    groups, with_stats = con.execute(
        "SELECT list(n ORDER BY g), coalesce(bool_and(s), true) FROM (SELECT row_group_id AS g, "
        "any_value(row_group_num_rows) AS n, bool_and(stats_min_value IS NOT NULL AND stats_max_value IS NOT NULL "
        f"AND stats_null_count IS NOT NULL) AS s FROM parquet_metadata({file}) GROUP BY g)").fetchone()
    sizes = [int(x) for x in groups or []]
    if with_stats and not _counts_and_ranges_are_bits(con, f"read_parquet({file}, hive_partitioning = false)", cols):
        return None
    xs = ", ".join(c if t == "UTINYINT" else f"CAST({c} AS UTINYINT) AS {c}"
                   for c, t in zip(cols, types, strict=True))
    threads = int(con.execute("SELECT current_setting('threads')").fetchone()[0])
    bounds = _row_ranges(sizes, 1 if '"file_row_number"' in cols else threads)
    if len(bounds) <= 2:
        queries = [f"SELECT {xs} FROM read_parquet({file}, hive_partitioning = false)"]
    else:
        queries = [f"SELECT {xs} FROM read_parquet({file}, hive_partitioning = false, file_row_number = true) "
                   f"WHERE file_row_number >= {lo} AND file_row_number < {hi}"
                   for lo, hi in zip(bounds, bounds[1:], strict=False)]
    rows = max(1, _ARROW_BATCH_CELLS // bits)
    # Each stream only fetches (DuckDB works without the GIL) and hands its batches over; this thread validates and
    # counts them all, so the streams never wait for the GIL behind numpy's many short calls.
    batches = Handoff(maxsize=len(queries))
    offer = batches.offer

    def stream(k: int) -> None:
        cur = con.cursor()
        try:
            result = cur.execute(queries[k])
            reader = (result.to_arrow_reader(rows) if hasattr(result, "to_arrow_reader")
                      else result.fetch_record_batch(rows))
            for batch in reader:
                if not offer(0, batch):
                    return
            offer(1, None)
        except duckdb.Error:
            offer(2, None)  # e.g. CAST(-1 AS UTINYINT): the validating passes name the column
        except BaseException as exc:  # noqa: BLE001 - raised in the calling thread below
            offer(3, exc)
        finally:
            cur.close()

    con.execute("SET threads = 1")  # one DuckDB thread per stream; the streams are the parallelism
    workers = [threading.Thread(target=stream, args=(k,), name=f"sufficientdp-duckdb-{k}", daemon=True)
               for k in range(len(queries))]
    total = tally_columns([np.zeros(0, dtype=np.uint8)] * bits, full_histogram=False)
    ended, invalid, error = 0, False, None
    try:
        for w in workers:
            w.start()
        while ended < len(workers) and not invalid and error is None:
            kind, value = batches.take()
            if kind == 0:
                columns = _batch_bits(value)
                invalid = columns is None
                if columns is not None:
                    total = total.merge(tally_columns(columns, full_histogram=False))
            ended += kind == 1
            invalid = invalid or kind == 2
            error = value if kind == 3 else None
    finally:
        batches.close()  # the streams stop at their next batch (they have all ended unless something went wrong)
        for w in workers:
            if w.ident is not None:  # started
                w.join()
        con.execute(f"SET threads = {threads}")  # as before, for the validating passes if they run
    if error is not None:
        raise error
    return None if invalid else total


def _row_ranges(sizes: list[int], streams: int) -> list[int]:
    """Boundaries ``0 = b_0 < … < b_k = n`` splitting row groups of ``sizes`` rows into at most ``streams``
    contiguous ranges of about equal rows, at row group boundaries (``[0, n]`` for a single range)."""
    n = sum(sizes)
    bounds = [0]
    done = 0
    for size in sizes[:-1]:
        done += size
        if len(bounds) < streams and done * streams >= n * len(bounds) and done > bounds[-1]:
            bounds.append(done)
    if n > bounds[-1] or len(bounds) == 1:
        bounds.append(n)
    return bounds


def _from_codes(bits: int, code: np.ndarray, count: np.ndarray) -> Tally:
    """The tally of groups of ``count`` rows with codes Σ_j bit_j·2^j."""
    vh = np.zeros(1 << bits, dtype=np.int64)
    np.add.at(vh, code, count)
    return tally_histogram(vh, bits)


def _plain_bits(largest: Any, keys: list[Any]) -> bool:
    """No missing key and every group's largest ``c0 | c1 | …`` at most 1."""
    if any(np.ma.isMaskedArray(k) and np.ma.getmaskarray(k).any() for k in [largest, *keys]):
        return False
    return bool((np.asarray(largest, dtype=np.int64) <= 1).all())


def _csv_layout(path: Path) -> tuple[int, int] | None:
    """(bytes of the header line, bytes after it) of a CSV file whose last byte is a newline, else None."""
    with path.open("rb") as fh:
        header = len(fh.readline())
        size = fh.seek(0, os.SEEK_END)
        if size == header:
            return header, 0
        fh.seek(size - 1)
        if fh.read(1) != b"\n":
            return None
    return header, size - header


def _tally_group_all(con: Any, source: str, cols: list[str]) -> Tally | None:
    """``GROUP BY`` all (Parquet) columns, at most 2^L groups of valid data; None when a group holds a value other
    than exactly 0 or 1 or a missing value."""
    bits = len(cols)
    keys = list(con.execute(f"SELECT {', '.join(cols)}, count(*) FROM {source} GROUP BY ALL").fetchnumpy().values())
    count = np.asarray(keys[-1], dtype=np.int64)
    code = np.zeros(count.shape[0], dtype=np.int64)
    for j, key in enumerate(keys[:bits]):
        if np.ma.isMaskedArray(key) and np.ma.getmaskarray(key).any():
            return None  # a missing value
        values = np.asarray(key)
        ones = values == 1
        if not (ones | (values == 0)).all():
            return None
        code |= ones.astype(np.int64) << j
    return _from_codes(bits, code, count)


# --------------------------------------------------------------------------------------------- collector database
_EXTENSION_PACKAGE = "duckdb_extension_sqlite_scanner"


def sqlite_path(database_url: str) -> str | None:
    """The SQLite file a collector database URL names (as :func:`~sufficientdp.service.storage.open_storage`
    reads it), or None for a ``postgresql://`` URL.

    Raises:
        ParameterError: not a ``sqlite:///`` URL, a file path or a ``postgresql://`` URL; or an empty path.

    Examples:
        >>> sqlite_path("sqlite:///data/collector.db"), sqlite_path("postgresql://db/c")
        ('data/collector.db', None)
    """
    if not isinstance(database_url, str) or not database_url:
        raise ParameterError(f"database must be a sqlite:/// path or a postgresql:// URL; got {database_url!r}")
    if database_url.startswith(("postgresql://", "postgres://")):
        return None
    if database_url.startswith("sqlite:///"):
        path = database_url[len("sqlite:///"):]
    elif "://" in database_url:
        raise ParameterError("database must be a sqlite:/// path, a file path or a postgresql:// URL; "
                             f"got {database_url!r}")
    else:
        path = database_url
    if not path or path == ":memory:":
        raise ParameterError(f"database must name an SQLite file (sqlite:///path.db); got {database_url!r}")
    return path


def _load_sqlite_extension(con: Any, duckdb: Any) -> None:
    """LOAD ``sqlite_scanner`` from a local file (never downloaded); ImportError explaining what is missing."""
    version = str(con.execute("PRAGMA version").fetchone()[0])  # library version, e.g. "v1.5.5"
    try:
        import importlib

        package = importlib.import_module(_EXTENSION_PACKAGE)
    except ImportError:
        package = None
    tried = []
    if package is not None:
        folders = [Path(p) / "extensions" for p in package.__path__]
        for folder in folders:
            candidate = folder / version / "sqlite_scanner.duckdb_extension"
            if candidate.is_file():
                try:
                    con.execute(f"LOAD {_literal(str(candidate))}")
                    return
                except duckdb.Error as exc:
                    tried.append(f"{candidate}: {str(exc).splitlines()[0]}")
        built = sorted({p.name for folder in folders if folder.is_dir() for p in folder.iterdir()})
        if not tried:
            tried.append(f"duckdb-extension-sqlite-scanner has builds for {', '.join(built) or 'no version'}, "
                         f"not for the installed duckdb {version}")
    else:
        tried.append("duckdb-extension-sqlite-scanner is not installed")
    try:
        con.execute("LOAD sqlite_scanner")  # only from DuckDB's local extension directory (autoinstall is off)
        return
    except duckdb.Error as exc:
        tried.append(f"no local sqlite_scanner in DuckDB's extension directory ({str(exc).splitlines()[0]})")
    raise ImportError(
        "engine='duckdb' reads SQLite through DuckDB's sqlite_scanner extension, which the duckdb wheel does not "
        "bundle and which is not downloaded here: " + "; ".join(tried) + ". Install it with pip install "
        "'sufficientdp[duckdb]' (Linux x86_64/aarch64, macOS arm64, Windows x64), or use engine='numpy'")


def _bit_index(j: int) -> int:
    """Position of report bit j in ``CAST(report AS BIT)``: bytes in order, each byte most significant bit first,
    while the packing puts bit j in byte j // 8 at position j % 8 counted from the least significant bit."""
    return 8 * (j // 8) + 7 - j % 8


def tally_collector_duckdb(database_url: str, campaign_id: str, *, release_id: str | None = None,
                           full_histogram: bool | None = None) -> Tally:
    """Tally the released reports of a campaign in an SQLite collector database with DuckDB.

    Only released reports are counted — those of ``release_id``, or of every release of the campaign when it is
    None — never pending ones: counting those would publish counts of a crowd that has not passed the release
    threshold k·N_min (docs/collector.md). The file is read through ``sqlite_scanner`` (read-only ``ATTACH``),
    loaded from a local file only (module docstring). The counts are those of
    :func:`sufficientdp.aggregation.tally.tally` on the unpacked reports: ``bit_counts`` sums bit j =
    ``get_bit(CAST(report AS BIT), 8·⌊j/8⌋ + 7 − j mod 8)``; ``weight_histogram`` groups by ``bit_count``;
    ``vector_histogram`` groups by Σ_j bit_j·2^j.

    Args:
        database_url: ``sqlite:///path.db`` or a plain file path (PostgreSQL: use ``engine="numpy"``).
        campaign_id: the campaign.
        release_id: one release of that campaign, or None for all its releases.
        full_histogram: compute the 2^L vector histogram; default: when L <= 16. Allowed only for L <= 20.

    Returns:
        The :class:`Tally`, identical to ``tally_collector(..., engine="numpy")``.

    Raises:
        ImportError: duckdb or its sqlite_scanner extension is not available locally.
        ParameterError: a ``postgresql://`` or otherwise unsupported URL, or ``full_histogram`` for L > 20.
        DataError: missing or unreadable file, unknown campaign or release, or a stored report that is not
            ⌈L/8⌉ bytes with zero padding bits.
    """
    path = sqlite_path(database_url)
    if path is None:
        raise ParameterError("engine='duckdb' reads SQLite collector databases only; use engine='numpy' for "
                             f"{database_url!r}")
    if not Path(path).is_file():
        raise DataError(f"database file {path!r} does not exist")
    duckdb = _duckdb()
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                             "autoload_known_extensions": False})
    try:
        _load_sqlite_extension(con, duckdb)
        try:
            con.execute(f"ATTACH {_literal(path)} AS collector (TYPE sqlite, READ_ONLY)")
            row = con.execute("SELECT spec FROM collector.campaigns WHERE id = ?", [campaign_id]).fetchone()
        except duckdb.Error as exc:
            raise DataError(f"cannot read collector database {path!r}: {str(exc).splitlines()[0]}") from None
        if row is None:
            raise DataError(f"unknown campaign {campaign_id!r} in {path!r}")
        bits = int(json.loads(row[0])["bits"])
        if full_histogram is None:
            full_histogram = bits <= 16
        if full_histogram and bits > MAX_HISTOGRAM_BITS:
            raise ParameterError(f"full_histogram needs bits in [1, {MAX_HISTOGRAM_BITS}]; got bits={bits}")
        if release_id is not None:
            found = con.execute("SELECT 1 FROM collector.releases WHERE id = ? AND campaign_id = ?",
                                [release_id, campaign_id]).fetchone()
            if found is None:
                raise DataError(f"unknown release {release_id!r} of campaign {campaign_id!r}")
            where, params = "campaign_id = ? AND release_id = ?", [campaign_id, release_id]
        else:
            where, params = "campaign_id = ? AND release_id IS NOT NULL", [campaign_id]
        n_bytes = -(-bits // 8)
        # A row of the wrong length becomes NULL (the cast of an empty blob would fail); it is counted as bad.
        source = (f"(SELECT CASE WHEN octet_length(report) = {n_bytes} THEN CAST(report AS BIT) END AS b "
                  f"FROM collector.reports WHERE {where})")
        bit = [f"get_bit(b, {_bit_index(j)})" for j in range(bits)]
        padding = [f"get_bit(b, {_bit_index(j)})" for j in range(bits, 8 * n_bytes)]
        bad = "b IS NULL" + "".join(f" OR {p} <> 0" for p in padding)
        row0 = con.execute(f"SELECT count(*), count(*) FILTER (WHERE {bad}), "
                           + ", ".join(f"sum({x})" for x in bit) + f" FROM {source}", params).fetchone()
        n, n_bad = int(row0[0]), int(row0[1])
        if n_bad:
            raise DataError(f"{n_bad} stored report(s) of campaign {campaign_id!r} are not {n_bytes}-byte packed "
                            f"{bits}-bit reports with zero padding")
        counts = np.array([int(x or 0) for x in row0[2:]], dtype=np.int64)
        weights = np.zeros(bits + 1, dtype=np.int64)
        for w, c in con.execute(f"SELECT bit_count(b) AS w, count(*) FROM {source} GROUP BY w", params).fetchall():
            weights[int(w)] = int(c)
        vh = None
        if full_histogram:
            code = " + ".join(f"{x} * {1 << j}" for j, x in enumerate(bit))
            vh = np.zeros(1 << bits, dtype=np.int64)
            for v, c in con.execute(f"SELECT {code} AS code, count(*) FROM {source} GROUP BY code",
                                    params).fetchall():
                vh[int(v)] = int(c)
    except duckdb.Error as exc:
        raise DataError(f"cannot read collector database {path!r}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    return Tally(bits=bits, reports=n, bit_counts=counts, weight_histogram=weights, vector_histogram=vh)
