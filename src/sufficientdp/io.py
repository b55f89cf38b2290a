"""Reading and writing report files: CSV and Parquet, one report per row, one 0/1 column per bit.

This module is an adapter: CSV uses only numpy and the standard library; Parquet needs ``pyarrow``
(``pip install 'sufficientdp[parquet]'``). Writes are atomic: data go to a temporary file in the target folder,
which replaces the target only when complete, so a failure never leaves a half-written file.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import DataError, ParameterError
from .randomization.encoders import encode_bits

__all__ = ["detect_format", "iter_reports", "read_reports", "write_reports", "write_table"]

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


def _column_bits(values: np.ndarray, name: str, path: Any, offset: int, type_text: str) -> np.ndarray:
    """One Parquet column as uint8 0/1, or a DataError naming the column (and the row of a bad value)."""
    if values.dtype.kind == "b":
        return values.astype(np.uint8)
    if values.dtype.kind not in "iuf":
        raise DataError(f"column {name!r} of {str(path)!r} must hold 0/1 numbers; got type {type_text}")
    bad = (values != 0) & (values != 1)  # NaN is bad too
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"column {name!r} of {str(path)!r} must hold only 0 and 1; got {values[i]!r} at row "
                        f"{offset + i}")
    return values.astype(np.uint8)


def _parquet_batches(p: Path, path: Any, batch_rows: int) -> Any:
    """Yield ``(uint8 array, names)`` per batch of at most ``batch_rows`` rows (at least one, possibly empty)."""
    pa = _pyarrow()
    pf = pa.parquet.ParquetFile(p)
    names = list(pf.schema_arrow.names)
    if not names:
        raise DataError(f"{str(path)!r} has no columns")
    offset = 0
    yielded = False
    for batch in pf.iter_batches(batch_size=min(batch_rows, 1 << 30)):
        out = np.empty((batch.num_rows, len(names)), dtype=np.uint8)
        for j, name in enumerate(names):
            col = batch.column(j)
            if col.null_count:
                raise DataError(f"column {name!r} of {str(path)!r} has missing values")
            out[:, j] = _column_bits(np.asarray(col.to_numpy(zero_copy_only=False)), name, path, offset,
                                     str(col.type))
        offset += batch.num_rows
        yielded = True
        yield out, names
    if not yielded:
        for j, name in enumerate(names):
            t = pf.schema_arrow.field(j).type
            if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
                raise DataError(f"column {name!r} of {str(path)!r} must hold 0/1 numbers; got type {t}")
        yield np.zeros((0, len(names)), dtype=np.uint8), names


def iter_reports(path: str | os.PathLike[str], batch_rows: int = 1 << 18) -> Any:
    """Yield ``(uint8 array of at most batch_rows reports, column names)``: Parquet streams row groups; CSV is
    read whole and sliced. Same validation and errors as :func:`read_reports`.
    """
    fmt = detect_format(path)
    p = Path(path)
    if not p.is_file():
        raise DataError(f"input file {str(path)!r} does not exist")
    if fmt == "parquet":
        yield from _parquet_batches(p, path, batch_rows)
        return
    arr, names = read_reports(path)
    if arr.shape[0] == 0:
        yield arr, names
    for start in range(0, arr.shape[0], batch_rows):
        yield arr[start:start + batch_rows], names


def read_reports(path: str | os.PathLike[str]) -> tuple[np.ndarray, list[str]]:
    """Read a report file; returns the ``(n, L)`` uint8 array and the column names.

    Raises:
        DataError: missing file, no columns, ragged rows or values other than 0/1 (the message names the row).
    """
    fmt = detect_format(path)
    p = Path(path)
    if not p.is_file():
        raise DataError(f"input file {str(path)!r} does not exist")
    if fmt == "parquet":
        batches = list(_parquet_batches(p, path, 1 << 62))
        names = batches[0][1]
        arr = np.concatenate([b for b, _ in batches]) if len(batches) > 1 else batches[0][0]
        return arr, names
    fast = _read_csv_pyarrow(p)
    if fast is not None:
        return fast
    return _read_csv_stdlib(p, path)


def _read_csv_pyarrow(p: Path) -> tuple[np.ndarray, list[str]] | None:
    """Fast path for well-formed CSV files when pyarrow is installed; None means "use the careful reader"."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:
        return None
    try:
        table = pacsv.read_csv(p)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError):
        return None  # the stdlib reader names the offending line
    names = [str(n).strip() for n in table.column_names]
    if table.num_rows == 0 or not names:
        return None
    cols = []
    for col in table.columns:
        if col.null_count or not pa.types.is_integer(col.type):
            return None
        cols.append(np.asarray(col.to_numpy()))
    arr = np.column_stack(cols)
    if np.any((arr != 0) & (arr != 1)):
        return None
    return arr.astype(np.uint8), names


def _read_csv_stdlib(p: Path, path: str | os.PathLike[str]) -> tuple[np.ndarray, list[str]]:
    with p.open(newline="") as fh:
        reader = csv.reader(fh)
        try:
            names = next(reader)
        except StopIteration:
            raise DataError(f"{str(path)!r} is empty; expected a header row with one column per bit") from None
        names = [n.strip() for n in names]
        if not names or names == [""]:
            raise DataError(f"{str(path)!r} has an empty header; expected one column per bit")
        rows: list[list[int]] = []
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
            rows.append(vals)
    arr = np.asarray(rows, dtype=np.uint8).reshape(len(rows), len(names))
    return arr, names


def _atomic_target(path: Path) -> tuple[int, str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)


def write_reports(path: str | os.PathLike[str], reports: np.ndarray, columns: Sequence[str] | None = None) -> None:
    """Write an ``(n, L)`` 0/1 array atomically as CSV or Parquet (format from the extension)."""
    fmt = detect_format(path)
    arr = encode_bits(reports)
    cols = list(columns) if columns is not None else [f"bit{j}" for j in range(arr.shape[1])]
    if len(cols) != arr.shape[1]:
        raise DataError(f"{len(cols)} column names for {arr.shape[1]} bits")
    write_table(path, {name: arr[:, j] for j, name in enumerate(cols)}, fmt=fmt)


def write_table(path: str | os.PathLike[str], columns: dict[str, Any], *, fmt: str | None = None) -> None:
    """Write named columns (equal-length sequences) atomically as CSV or Parquet."""
    p = Path(path)
    fmt = fmt or detect_format(p)
    if fmt == "parquet":
        pa = _pyarrow()
    fd, tmp = _atomic_target(p)
    try:
        if fmt == "parquet":
            os.close(fd)
            table = pa.table({k: np.asarray(v) for k, v in columns.items()})
            pa.parquet.write_table(table, tmp)
        else:
            names = list(columns)
            arrays = [np.asarray(columns[n]) for n in names]
            with os.fdopen(fd, "w", newline="") as fh:
                if _write_csv_pyarrow(fh, tmp, names, arrays):
                    pass
                elif arrays and arrays[0].dtype.kind in "iub" and all(a.dtype == arrays[0].dtype for a in arrays):
                    fh.write(",".join(names) + "\n")
                    mat = np.column_stack(arrays) if arrays[0].size else np.zeros((0, len(arrays)), dtype=np.int64)
                    np.savetxt(fh, mat, fmt="%d", delimiter=",")
                else:
                    fh.write(",".join(names) + "\n")
                    writer = csv.writer(fh)
                    for row in zip(*arrays):
                        writer.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else v for v in row])
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    fh.write(",".join(names) + "\n")
    fh.flush()
    with pa.OSFile(target, "ab") as sink:
        pacsv.write_csv(table, sink, write_options=pacsv.WriteOptions(include_header=False, quoting_style="none"))
    return True
