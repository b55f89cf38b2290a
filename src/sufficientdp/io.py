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
from collections.abc import Mapping, Sequence
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
