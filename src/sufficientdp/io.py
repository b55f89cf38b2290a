"""Reading and writing report files: CSV and Parquet, one report per row, one 0/1 column per bit.

This module is an adapter: CSV uses only numpy and the standard library; Parquet needs ``pyarrow``
(``pip install 'sufficientdp[parquet]'``). Writes are atomic: data go to a temporary file in the target folder,
which replaces the target only when complete, so a failure never leaves a half-written file.

Randomized report files carry how they were made (:data:`METADATA_KEYS`: the flip probability that ran, the reports
per person, the bits): in a Parquet file as key-value metadata under ``sufficientdp``, beside a CSV file as a sidecar
``<file>.sdp.json`` (CSV has no place for it that every reader skips). ``sufficientdp estimate`` reads it, so a
k = 3 file is never estimated as three times as many people.
"""

from __future__ import annotations

import csv
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import DataError, ParameterError
from .randomization.encoders import encode_bits

__all__ = ["METADATA_KEYS", "detect_format", "iter_reports", "read_metadata", "read_reports", "sidecar_path",
           "write_reports", "write_table"]

#: The report-file metadata: ``q`` (the exact flip probability that ran), ``reports`` (k, reports per person) and
#: ``bits`` (L); ``version`` names the layout.
METADATA_KEYS = ("bits", "q", "reports", "version")
_META_KEY = b"sufficientdp"
_META_VERSION = 1
_MAX_SIDECAR_BYTES = 1 << 16


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """Where a CSV file's metadata lives: ``<file>.sdp.json`` beside it."""
    p = Path(path)
    return p.with_name(p.name + ".sdp.json")


def _check_metadata(meta: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Validated metadata dict, or a DataError naming the file and the bad key."""
    if not isinstance(meta, Mapping) or set(meta) != set(METADATA_KEYS):
        keys = sorted(meta) if isinstance(meta, Mapping) else type(meta).__name__
        raise DataError(f"report metadata of {where} must have the keys {', '.join(METADATA_KEYS)}; got {keys}")
    q, k, bits, version = meta["q"], meta["reports"], meta["bits"], meta["version"]
    if version != _META_VERSION:
        raise DataError(f"report metadata of {where}: version must be {_META_VERSION}; got {version!r}")
    if not isinstance(q, float) or not (math.isfinite(q) and 0.0 < q < 0.5):
        raise DataError(f"report metadata of {where}: q must be a number in (0, 0.5); got {q!r}")
    for name, value in (("reports", k), ("bits", bits)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**6:
            raise DataError(f"report metadata of {where}: {name} must be an integer in [1, 1000000]; got {value!r}")
    return {"bits": bits, "q": q, "reports": k, "version": version}


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The metadata a report file carries (``bits``, ``q``, ``reports``, ``version``), or None if it has none.

    Raises:
        DataError: the file does not exist, or its metadata is malformed.
    """
    fmt = detect_format(path)
    p = Path(path)
    if not p.is_file():
        raise DataError(f"input file {str(path)!r} does not exist")
    if fmt == "parquet":
        pa = _pyarrow()
        raw = (pa.parquet.read_schema(p).metadata or {}).get(_META_KEY)
        where = repr(str(path))
    else:
        side = sidecar_path(p)
        if not side.is_file():
            return None
        if side.stat().st_size > _MAX_SIDECAR_BYTES:
            raise DataError(f"report metadata {str(side)!r} is larger than {_MAX_SIDECAR_BYTES} bytes")
        raw = side.read_bytes()
        where = repr(str(side))
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"report metadata of {where} is not valid JSON: {exc}") from None
    return _check_metadata(meta, where)


def _metadata_json(meta: Mapping[str, Any]) -> bytes:
    full = _check_metadata({"version": _META_VERSION, **meta}, "the file to write")
    return json.dumps(full, sort_keys=True).encode()

_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def detect_format(path: str | os.PathLike[str]) -> str:
    """``"csv"`` or ``"parquet"`` from the file extension."""
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise ParameterError(f"file {str(path)!r} must end in .csv, .parquet or .pq; got {suffix or 'no extension'!r}")
    return _FORMATS[suffix]


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise ImportError("Parquet files need pyarrow: pip install 'sufficientdp[parquet]'") from exc
    return pyarrow


def _first_bad_value(values: np.ndarray) -> int:
    """Index of the first value that is not 0 or 1 (NaN included); only called on the error path."""
    return int(np.argmax((values != 0) & (values != 1)))


def _as_bits(values: np.ndarray) -> np.ndarray | None:
    """A numeric column as uint8 0/1 (a view when it already is one byte wide), or None if a value is not 0/1."""
    kind = values.dtype.kind
    if kind == "b":
        return values.view(np.uint8)
    if kind in "iu":
        unsigned = values.view(values.dtype.str.replace("i", "u"))  # negatives become huge
        if unsigned.size and unsigned.max() > 1:
            return None
        return unsigned if unsigned.dtype.itemsize == 1 else unsigned.astype(np.uint8)
    if kind == "f":
        if ((values != 0) & (values != 1)).any():  # NaN is bad too
            return None
        return values.astype(np.uint8)
    return None


_ARROW_FLOATS = {"halffloat": np.float16, "float": np.float32, "double": np.float64}


def _arrow_numpy(col: Any) -> np.ndarray:
    """A null-free pyarrow array as numpy: primitive numbers and booleans straight from the data buffer (pyarrow's
    ``to_numpy`` imports pandas, over half a second the first time), anything else through ``to_numpy``."""
    t = str(col.type)
    dtype = _ARROW_FLOATS.get(t) or (t if t.lstrip("u").startswith("int") and t[-1].isdigit() else None)
    data = col.buffers()[1] if len(col.buffers()) == 2 else None
    if data is None:
        return np.asarray(col.to_numpy(zero_copy_only=False))
    if t == "bool":
        raw = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        return raw[col.offset:col.offset + len(col)].view(np.bool_)
    if dtype is None:
        return np.asarray(col.to_numpy(zero_copy_only=False))
    return np.frombuffer(data, dtype=dtype, count=len(col), offset=col.offset * np.dtype(dtype).itemsize)


def _column_bits(values: np.ndarray, name: str, path: Any, offset: int, type_text: str) -> np.ndarray:
    """One Parquet column as uint8 0/1, or a DataError naming the column (and the row of a bad value)."""
    if values.dtype.kind not in "iufb":
        raise DataError(f"column {name!r} of {str(path)!r} must hold 0/1 numbers; got type {type_text}")
    out = _as_bits(values)
    if out is None:
        i = _first_bad_value(values)
        raise DataError(f"column {name!r} of {str(path)!r} must hold only 0 and 1; got {values[i].item()!r} at row "
                        f"{offset + i}")
    return out


# A batch of reports column by column: one 1-D uint8 0/1 array per bit (possibly read-only views), the names.
_Columns = tuple[list[np.ndarray], list[str]]


def _rows_for(batch_rows: int, max_cells: int | None, columns: int) -> int:
    """Rows per batch: at most ``batch_rows``, and at most ``max_cells`` values (but at least 256 rows)."""
    if max_cells is None or columns < 1:
        return batch_rows
    return max(1, min(batch_rows, max(256, max_cells // columns)))


def _pandas_index_columns(metadata: Mapping[bytes, bytes] | None) -> frozenset[str]:
    """The columns in which pandas' ``DataFrame.to_parquet`` stored the frame's index, from a Parquet file's
    key-value metadata: the ``index_columns`` of its ``pandas`` entry that are column names (a ``RangeIndex`` is
    stored as a description, not a column). They are not report bits: every reader leaves them out, as
    ``pandas.read_parquet`` makes them the index again. Empty when the entry is missing or not pandas' JSON.

    Examples:
        >>> sorted(_pandas_index_columns({b"pandas": b'{"index_columns": ["__index_level_0__"]}'}))
        ['__index_level_0__']
        >>> _pandas_index_columns({b"pandas": b'{"index_columns": [{"kind": "range"}]}'})
        frozenset()
    """
    raw = (metadata or {}).get(b"pandas")
    if raw is None:
        return frozenset()
    try:
        meta = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return frozenset()
    listed = meta.get("index_columns") if isinstance(meta, dict) else None
    return frozenset(c for c in listed if isinstance(c, str)) if isinstance(listed, list) else frozenset()


def _report_fields(schema: Any) -> tuple[list[str], list[Any], list[str] | None]:
    """``(names, types, columns)`` of the report columns of a Parquet file's Arrow schema: every column but pandas'
    stored index (:func:`_pandas_index_columns`); ``columns`` is what to ask pyarrow's readers for: None (every
    column, the usual case) or the names kept."""
    index = _pandas_index_columns(schema.metadata)
    keep = [j for j, n in enumerate(schema.names) if n not in index]
    names = [schema.names[j] for j in keep]
    return names, [schema.field(j).type for j in keep], (names if len(keep) < len(schema.names) else None)


def _parquet_columns(p: Path, path: Any, batch_rows: int, max_cells: int | None = None) -> Iterator[_Columns]:
    """Yield the columns of each batch of at most ``batch_rows`` rows (at least one batch, possibly empty)."""
    pa = _pyarrow()
    pf = pa.parquet.ParquetFile(p)
    names, types, selected = _report_fields(pf.schema_arrow)
    if not names:
        raise DataError(f"{str(path)!r} has no columns")
    batch_rows = _rows_for(batch_rows, max_cells, len(names))
    offset = 0
    yielded = False
    for batch in pf.iter_batches(batch_size=min(batch_rows, 1 << 30), columns=selected):
        cols = []
        for j, name in enumerate(names):
            col = batch.column(j)
            if col.null_count:
                raise DataError(f"column {name!r} of {str(path)!r} has missing values")
            cols.append(_column_bits(_arrow_numpy(col), name, path, offset,
                                     str(col.type)))
        offset += batch.num_rows
        yielded = True
        yield cols, names
    if not yielded:
        for name, t in zip(names, types, strict=True):
            if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
                raise DataError(f"column {name!r} of {str(path)!r} must hold 0/1 numbers; got type {t}")
        yield [np.zeros(0, dtype=np.uint8) for _ in names], names


def _parquet_layout(path: str | os.PathLike[str]) -> tuple[list[str], int, bool] | None:
    """(column names, row groups, whether every column has the same integer type) of a Parquet file whose columns
    are all numbers or booleans, for readers that split the row groups between threads; None for anything else
    (not Parquet, no pyarrow, a missing or unreadable file, no columns, another column type):
    :func:`_parquet_columns` then reads it and reports what is wrong."""
    try:
        if detect_format(path) != "parquet":
            return None
        pa = _pyarrow()
        pf = pa.parquet.ParquetFile(Path(path))
        schema = pf.schema_arrow
        names, types, _ = _report_fields(schema)
        numeric = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)
        if not names or not all(any(f(t) for f in numeric) for t in types):
            return None
        return names, int(pf.num_row_groups), pa.types.is_integer(types[0]) and all(t == types[0] for t in types)
    except Exception:  # noqa: BLE001 - the careful reader raises the right error
        return None


def _parquet_group_batches(path: str | os.PathLike[str], next_group: Callable[[], int | None], batch_rows: int,
                           max_cells: int | None = None) -> Iterator[Any]:
    """The Arrow record batches (at most ``batch_rows`` rows and ``max_cells`` values, as :func:`_parquet_columns`
    reads) of the row groups ``next_group()`` hands out, one group at a time until it returns None; several of
    these readers, each on its own thread, share a file's row groups. Decoding runs in pyarrow without the GIL and
    without pyarrow's own threads (the readers are the parallelism)."""
    pf = _pyarrow().parquet.ParquetFile(Path(path))
    names, _, selected = _report_fields(pf.schema_arrow)
    batch_rows = _rows_for(batch_rows, max_cells, len(names))
    while (group := next_group()) is not None:
        yield from pf.iter_batches(batch_size=min(batch_rows, 1 << 30), row_groups=[group], columns=selected,
                                   use_threads=False)


def _batch_bits(batch: Any, same_integer_type: bool = False) -> list[np.ndarray] | None:
    """An Arrow record batch's columns as uint8 0/1 (as :func:`_parquet_columns` gives them), or None when one holds
    a null, a type other than numbers or booleans, or a value other than 0/1 (the careful reader names it).

    Columns all of one integer type (``same_integer_type``, e.g. the ``uint8`` columns pyarrow writes) are copied
    into one column-major matrix by pyarrow (``to_tensor``, which refuses nulls) and checked with one ``max``: a
    few calls per batch instead of a few per column, which at L = 64 cost more than the copy."""
    if same_integer_type and batch.num_rows:
        pa = _pyarrow()
        try:
            matrix = np.asarray(batch.to_tensor(row_major=False)).T  # (L, n), each column contiguous
        except pa.ArrowException:
            return None
        unsigned = matrix.view(matrix.dtype.str.replace("i", "u"))  # negatives become huge
        if unsigned.max() > 1:
            return None
        return list(unsigned if unsigned.dtype.itemsize == 1 else unsigned.astype(np.uint8))
    cols = []
    for col in batch.columns:
        if col.null_count:
            return None
        values = _arrow_numpy(col)
        bits = _as_bits(values) if values.dtype.kind in "iufb" else None
        if bits is None:
            return None
        cols.append(bits)
    return cols


def _csv_header(p: Path) -> list[str] | None:
    """The header's names as the careful reader reads them (Python's csv module, each stripped), or None when the
    file cannot be read that way or the header is not within the first :data:`_MAX_HEADER_BYTES` characters (the
    readers then report why; this look never holds more than that)."""
    read = [0]

    def lines(fh: Any) -> Iterator[str]:  # the lines the csv module asks for, at most _MAX_HEADER_BYTES in all
        while read[0] < _MAX_HEADER_BYTES:
            line = fh.readline(_MAX_HEADER_BYTES - read[0])
            if not line:
                return
            read[0] += len(line)
            yield line

    try:
        with p.open(newline="") as fh:
            row = next(csv.reader(lines(fh)), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    if row is None or read[0] >= _MAX_HEADER_BYTES:
        return None  # (no header, or it may go on past what was read)
    return [n.strip() for n in row]


def _check_csv_names(names: Sequence[str], path: Any) -> None:
    """Every bit column needs a name: a DataError naming the first header field that is empty or blank (a header
    that is all one empty field gets the readers' own message). pandas' ``DataFrame.to_csv`` writes the frame's
    index as an unnamed first column, hence the hint."""
    if len(names) < 2 and not "".join(names):
        return
    for j, name in enumerate(names):
        if not name:
            hint = "; pandas' DataFrame.to_csv writes its index there: write with index=False" if j == 0 else ""
            raise DataError(f"{str(path)!r}: column {j + 1} of the header has no name; every bit column needs "
                            f"one{hint}")


def _csv_columns(p: Path, path: Any, batch_rows: int, max_cells: int | None = None) -> Iterator[_Columns]:
    """Yield the columns of each batch of at most ``batch_rows`` CSV rows (at least one batch, possibly empty).

    A file of one character per cell (:func:`_csv_fixed_layout`: what sufficientdp, pyarrow, pandas, polars and
    DuckDB write for 0/1 integers) is read as a byte matrix and checked byte by byte (:func:`_csv_fixed_columns`).
    Other well-formed files stream through pyarrow's CSV reader (when installed) in blocks. At the first thing
    either does not accept (a parse error, a missing or non-integer cell, a value other than 0/1) the careful
    standard-library reader takes over after the rows already yielded, and names the offending line (when the
    byte-matrix reader stops before yielding anything, pyarrow's reader runs first). The rows are the same every
    way (all skip empty lines, and a file of the fixed layout has none), so the result never depends on where a
    batch boundary falls.
    """
    header = _csv_header(p)
    if header is not None:
        _check_csv_names(header, path)
    done = 0
    readers: list[Callable[[], Iterator[_Columns | None]]] = [
        lambda: _csv_fixed_columns(p, batch_rows, max_cells), lambda: _csv_arrow_columns(p, batch_rows, max_cells)]
    for reader in readers:
        for item in reader():
            if item is None:
                break
            yield item
            done += len(item[0][0])
        else:
            if done:
                return
        if done:
            break
    yield from _csv_stdlib_columns(p, path, batch_rows, skip=done, max_cells=max_cells)


#: Longest header line the byte-matrix CSV reader looks at (longer: the other readers).
_MAX_HEADER_BYTES = 1 << 24


def _csv_header_names(header: bytes, p: Path) -> list[str] | None:
    """The column names the other CSV readers would give for a file whose first line is ``header``: pyarrow's
    parse of it when pyarrow is installed (:func:`_csv_arrow_columns`), else the standard-library reader's
    (:func:`_csv_stdlib_columns`); None where the header is empty or does not parse."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:
        try:
            with p.open(newline="") as fh:
                names = [n.strip() for n in next(csv.reader(fh), [])]
        except (UnicodeDecodeError, csv.Error):
            return None
        return names if names and names != [""] else None
    try:
        with p.open(newline="") as fh:  # (the check _csv_arrow_columns makes before pyarrow reads the file)
            if not next(csv.reader(fh), []):
                return None
        table = pacsv.read_csv(pa.py_buffer(header), read_options=pacsv.ReadOptions(use_threads=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError, csv.Error):
        return None
    names = [str(n).strip() for n in table.schema.names]
    return names or None


def _csv_fixed_layout(p: Path) -> tuple[list[str], int, int, int] | None:
    """``(names, data_start, rows, row_bytes)`` when the CSV file may be one character per cell: after the header
    line, ``rows`` rows of exactly ``row_bytes`` bytes, ``2L`` (``c,c,…,c\n``) or ``2L + 1`` (ending ``\r\n``),
    L the header's column count, judged from the file size and the first row's line end. None otherwise. Every row
    is checked byte by byte when read (:func:`_csv_fixed_columns`)."""
    try:
        size = p.stat().st_size
        with p.open("rb") as fh:
            header = fh.readline(_MAX_HEADER_BYTES)
            if not header.endswith(b"\n"):
                return None
            names = _csv_header_names(header, p)
            if names is None:
                return None
            width = 2 * len(names)
            first = fh.read(width + 1)
    except OSError:
        return None
    if first[width - 1:width] == b"\n":
        row_bytes = width
    elif first[width - 1:width + 1] == b"\r\n":
        row_bytes = width + 1
    else:
        return None
    data = size - len(header)
    if data <= 0 or data % row_bytes:
        return None
    return names, len(header), data // row_bytes, row_bytes


def _csv_fixed_columns(p: Path, batch_rows: int, max_cells: int | None = None) -> Iterator[_Columns | None]:
    """The CSV reader for files of one character per cell (:func:`_csv_fixed_layout`); yields None (and stops)
    where another reader must take over: the layout does not fit, or a row of the batch at hand is not exactly
    ``0`` or ``1`` cells separated by commas and ended by the first row's line end.

    Each batch of rows is read into one byte matrix (rows x row bytes) and compared with the template row
    ``0,0,…,0\n``: the difference (``uint8``, so a byte below the template's wraps to a large value) must be 0 at
    every comma and line end and 0 or 1 at every cell. Exactly then each row is L cells ``0``/``1``, which the
    careful reader (Python's csv module and ``int()``) reads as the same values, and the cells' differences are
    the bits. Memory: a few copies of one batch."""
    layout = _csv_fixed_layout(p)
    if layout is None:
        yield None
        return
    names, start, rows, row_bytes = layout
    bits = len(names)
    step = _rows_for(batch_rows, max_cells, bits)
    template = np.full(row_bytes, ord(","), dtype=np.uint8)
    template[0:2 * bits:2] = ord("0")
    template[2 * bits - 1:] = np.frombuffer(b"\r\n" if row_bytes > 2 * bits else b"\n", dtype=np.uint8)
    allowed = np.zeros(row_bytes, dtype=np.uint8)
    allowed[0:2 * bits:2] = 1
    with p.open("rb") as fh:
        fh.seek(start)
        for first in range(0, rows, step):
            n = min(step, rows - first)
            buf = bytearray(n * row_bytes)
            if fh.readinto(buf) != len(buf):  # the file changed under us
                yield None
                return
            diff = np.frombuffer(buf, dtype=np.uint8).reshape(n, row_bytes)
            np.subtract(diff, template, out=diff)
            if bool(np.greater(diff, allowed).any()):
                yield None
                return
            cols = np.ascontiguousarray(diff[:, 0:2 * bits:2].T)
            yield list(cols), names


def _csv_arrow_columns(p: Path, batch_rows: int, max_cells: int | None = None) -> Iterator[_Columns | None]:
    """pyarrow's streaming CSV reader; yields None (and stops) where the careful reader must take over."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:
        yield None
        return
    try:
        with p.open(newline="") as fh:
            header = next(csv.reader(fh), [])
    except (UnicodeDecodeError, csv.Error):
        yield None
        return
    if not header:
        yield None
        return
    batch_rows = _rows_for(batch_rows, max_cells, len(header))
    # One byte per cell (int8: a value that does not fit fails the parse), blocks of about batch_rows rows.
    block = min(max(batch_rows * 2 * len(header), 1 << 14), 1 << 26)
    errors = (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError)
    try:
        reader = pacsv.open_csv(p, read_options=pacsv.ReadOptions(block_size=block),
                                convert_options=pacsv.ConvertOptions(column_types={n: pa.int8() for n in header}))
    except errors:
        yield None
        return
    with reader:
        names = [str(n).strip() for n in reader.schema.names]
        if not names:
            yield None
            return
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except errors:
                yield None
                return
            cols = []
            for col in batch.columns:
                if col.null_count or not pa.types.is_integer(col.type):
                    yield None
                    return
                bits = _as_bits(_arrow_numpy(col))
                if bits is None:
                    yield None
                    return
                cols.append(bits)
            for start in range(0, batch.num_rows, batch_rows):
                yield [c[start:start + batch_rows] for c in cols], names


def _csv_stdlib_columns(p: Path, path: Any, batch_rows: int, skip: int = 0,
                        max_cells: int | None = None) -> Iterator[_Columns]:
    """The careful CSV reader: every line checked, errors name the line; the first ``skip`` rows (already
    yielded by the fast reader) are checked but not yielded again. Text that does not decode (the platform's
    default encoding, UTF-8 in practice) or that Python's csv module refuses is a DataError too."""
    with p.open(newline="") as fh:
        reader = csv.reader(fh)
        try:
            yield from _csv_stdlib_rows(reader, path, batch_rows, skip, max_cells)
        except UnicodeDecodeError as exc:  # (decoded a block at a time: no line number to give)
            raise DataError(f"{str(path)!r} is not text in the expected encoding ({exc.encoding}: {exc.reason}); "
                            "a report file holds 0/1 values under a header line") from None
        except csv.Error as exc:
            raise DataError(f"{str(path)!r} line {reader.line_num}: not CSV ({exc})") from None


def _csv_stdlib_rows(reader: Any, path: Any, batch_rows: int, skip: int,
                     max_cells: int | None) -> Iterator[_Columns]:
    """The body of :func:`_csv_stdlib_columns` on an open ``csv.reader``."""
    try:
        names = next(reader)
    except StopIteration:
        raise DataError(f"{str(path)!r} is empty; expected a header row with one column per bit") from None
    names = [n.strip() for n in names]
    if not names or names == [""]:
        raise DataError(f"{str(path)!r} has an empty header; expected one column per bit")
    batch_rows = _rows_for(batch_rows, max_cells, len(names))
    rows: list[list[int]] = []
    seen = 0
    yielded = False
    for lineno, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) != len(names):
            raise DataError(f"{str(path)!r} line {lineno}: {len(row)} values, expected {len(names)}")
        try:
            vals = [int(v) for v in row]
        except ValueError:
            raise DataError(f"{str(path)!r} line {lineno}: values must be 0 or 1; got {row!r}") from None
        if any(v not in (0, 1) for v in vals):
            raise DataError(f"{str(path)!r} line {lineno}: values must be 0 or 1; got {row!r}")
        seen += 1
        if seen <= skip:
            continue
        rows.append(vals)
        if len(rows) == batch_rows:
            arr = np.asarray(rows, dtype=np.uint8).reshape(len(rows), len(names))
            rows = []
            yielded = True
            yield [arr[:, j] for j in range(len(names))], names
    if rows or not (yielded or skip):
        arr = np.asarray(rows, dtype=np.uint8).reshape(len(rows), len(names))
        yield [arr[:, j] for j in range(len(names))], names


def _iter_columns(path: str | os.PathLike[str], batch_rows: int,
                  max_cells: int | None = None) -> Iterator[_Columns]:
    """Batches of at most ``batch_rows`` reports (and ``max_cells`` values) of a file, column by column (at least
    one batch)."""
    fmt = detect_format(path)
    p = Path(path)
    if not p.is_file():
        raise DataError(f"input file {str(path)!r} does not exist")
    if fmt == "parquet":
        return _parquet_columns(p, path, batch_rows, max_cells)
    return _csv_columns(p, path, batch_rows, max_cells)


def _stack(cols: list[np.ndarray]) -> np.ndarray:
    out = np.empty((len(cols[0]) if cols else 0, len(cols)), dtype=np.uint8)
    for j, c in enumerate(cols):
        out[:, j] = c
    return out


def iter_reports(path: str | os.PathLike[str],
                 batch_rows: int = 1 << 18) -> Iterator[tuple[np.ndarray, list[str]]]:
    """Yield ``(uint8 array of at most batch_rows reports, column names)``: Parquet and CSV files are read in
    batches (memory bounded by the batch, not the file). Same validation and errors as :func:`read_reports`.
    """
    batch_rows = int(batch_rows)
    if batch_rows < 1:
        raise ParameterError(f"batch_rows must be >= 1; got {batch_rows}")
    for cols, names in _iter_columns(path, batch_rows):
        yield _stack(cols), names


def read_reports(path: str | os.PathLike[str]) -> tuple[np.ndarray, list[str]]:
    """Read a report file; returns the ``(n, L)`` uint8 array and the column names.

    Raises:
        DataError: missing file, no columns, ragged rows or values other than 0/1 (the message names the row).
    """
    batches = list(iter_reports(path, 1 << 20))
    names = batches[0][1]
    arr = np.concatenate([b for b, _ in batches]) if len(batches) > 1 else batches[0][0]
    return arr, names


def _atomic_target(path: Path) -> tuple[int, str]:
    """A temporary file beside ``path`` for an atomic write (renamed over ``path`` when complete); refuses a ``path``
    that exists and is not a regular file: the rename would replace a device, a pipe or a socket (run as root,
    ``--output /dev/full`` replaced the device node with the report)."""
    if path.exists() and not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file (a device, pipe or socket)"
        raise ParameterError(f"output {str(path)!r} is {kind}; give the name of a regular file to write")
    path.parent.mkdir(parents=True, exist_ok=True)
    return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)


def write_reports(path: str | os.PathLike[str], reports: np.ndarray, columns: Sequence[str] | None = None, *,
                  metadata: Mapping[str, Any] | None = None) -> None:
    """Write an ``(n, L)`` 0/1 array atomically as CSV or Parquet (format from the extension).

    ``metadata`` (``q``, ``reports``, ``bits``; see :data:`METADATA_KEYS`) is stored in the Parquet file or in the
    CSV sidecar :func:`sidecar_path`; without it, a stale sidecar from an earlier file of the same name is removed.
    """
    fmt = detect_format(path)
    arr = encode_bits(reports)
    cols = list(columns) if columns is not None else [f"bit{j}" for j in range(arr.shape[1])]
    if len(cols) != arr.shape[1]:
        raise DataError(f"{len(cols)} column names for {arr.shape[1]} bits")
    seen: set[str] = set()
    for j, name in enumerate(cols):  # (the readers need a name per bit, and the table one column per name)
        if not isinstance(name, str) or not name.strip() or name.strip() in seen:
            raise ParameterError(f"columns must be distinct non-blank names, one per bit; got {name!r} for bit {j}")
        seen.add(name.strip())
    if metadata is not None and metadata.get("bits") != arr.shape[1]:
        raise DataError(f"metadata bits={metadata.get('bits')!r} but the reports have {arr.shape[1]} bits")
    write_table(path, {name: arr[:, j] for j, name in enumerate(cols)}, fmt=fmt, metadata=metadata)


def write_table(path: str | os.PathLike[str], columns: dict[str, Any], *, fmt: str | None = None,
                metadata: Mapping[str, Any] | None = None) -> None:
    """Write named columns (equal-length sequences) atomically as CSV or Parquet (``metadata``: see
    :func:`write_reports`)."""
    p = Path(path)
    fmt = fmt or detect_format(p)
    blob = _metadata_json(metadata) if metadata is not None else None
    if fmt == "parquet":
        pa = _pyarrow()
    fd, tmp = _atomic_target(p)
    side_tmp: str | None = None
    try:
        if fmt == "parquet":
            os.close(fd)
            table = pa.table({k: np.asarray(v) for k, v in columns.items()})
            if blob is not None:
                table = table.replace_schema_metadata({_META_KEY: blob})
            pa.parquet.write_table(table, tmp)
        else:
            names = list(columns)
            arrays = [np.asarray(columns[n]) for n in names]
            with os.fdopen(fd, "w", newline="") as fh:
                if _write_csv_pyarrow(fh, tmp, names, arrays):
                    pass
                elif arrays and arrays[0].dtype.kind in "iub" and all(a.dtype == arrays[0].dtype for a in arrays):
                    _write_header(fh, names)
                    mat = np.column_stack(arrays) if arrays[0].size else np.zeros((0, len(arrays)), dtype=np.int64)
                    np.savetxt(fh, mat, fmt="%d", delimiter=",")
                else:
                    _write_header(fh, names)
                    writer = csv.writer(fh)
                    for row in zip(*arrays):
                        writer.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else v for v in row])
            if blob is not None:
                side_fd, side_tmp = _atomic_target(sidecar_path(p))
                with os.fdopen(side_fd, "wb") as sh:
                    sh.write(blob)
        # Old sidecar out, new data in, new sidecar in: a crash in between leaves a file without metadata (estimate
        # then asks for --q and --reports), never data described by another file's metadata.
        side = sidecar_path(p)
        if fmt == "csv" and side.exists():
            side.unlink()
        os.replace(tmp, p)
        if side_tmp is not None:
            os.replace(side_tmp, side)
            side_tmp = None
    except BaseException:
        for t in (tmp, side_tmp):
            if t is not None and os.path.exists(t):
                os.unlink(t)
        raise


def _write_header(fh: Any, names: list[str]) -> None:
    """The header row, quoted as RFC 4180 needs (a column named ``a,b`` stays one column)."""
    csv.writer(fh, lineterminator="\n").writerow(names)


def _write_csv_pyarrow(fh: Any, target: str, names: list[str], arrays: list[np.ndarray]) -> bool:
    """Write integer columns with pyarrow's CSV writer (fast); False if pyarrow is missing or columns are not ints."""
    if not arrays or any(a.dtype.kind not in "iu" for a in arrays) or arrays[0].size == 0:
        return False
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:
        return False
    table = pa.table(dict(zip(names, arrays, strict=True)))
    _write_header(fh, names)
    fh.flush()
    with pa.OSFile(target, "ab") as sink:
        pacsv.write_csv(table, sink, write_options=pacsv.WriteOptions(include_header=False, quoting_style="none"))
    return True
