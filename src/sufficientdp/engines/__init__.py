"""Aggregation engines: the same :class:`~sufficientdp.aggregation.tally.Tally` of a report file, computed by
numpy, DuckDB or Spark (STYLE.md: one ``engine=`` argument picks the computation strategy; every engine gives the
same result).

* ``"numpy"`` — streams the file in batches of at most :data:`CHUNK_ROWS` rows and :data:`CHUNK_CELLS` values
  (the readers of :mod:`sufficientdp.io`: pyarrow's Parquet and streaming CSV readers, or the standard-library
  CSV reader), validates each batch and counts it column by column
  (:func:`sufficientdp.aggregation.columns.tally_columns`); memory is bounded by the batch, not the file (core
  dependencies only; Parquet needs ``sufficientdp[parquet]``, pyarrow also speeds up CSV).
  Parquet files are decoded by polars when it is installed (``sufficientdp[polars]``, in ``[all]``; a row group at
  a time, :func:`_tally_parquet_polars`), else a file of several row groups by one pyarrow reading thread per core
  (:func:`_tally_parquet_parallel`). CSV files of one character per cell are read as a byte matrix
  (:func:`sufficientdp.io._csv_fixed_columns`).
* ``"duckdb"`` — :func:`~sufficientdp.engines.duckdb_engine.tally_file_duckdb` counts in SQL over the file without
  loading it into memory (``pip install 'sufficientdp[duckdb]'``); a Parquet file without the full histogram is
  read by DuckDB and counted batch by batch by the numpy kernel when pyarrow is installed (the per-row weight costs
  more in SQL).
* ``"spark"`` — :func:`~sufficientdp.engines.spark_engine.tally_file_spark` counts with PySpark, locally or on a
  cluster (``pip install 'sufficientdp[spark]'`` and Java 17+); data already in Spark:
  :func:`~sufficientdp.engines.spark_engine.tally_dataframe_spark`. See docs/spark.md.

:func:`tally_collector` gives the same :class:`Tally` of the *released* reports stored by the collector service
(docs/collector.md), with ``engine="numpy"`` (through the storage layer: SQLite or PostgreSQL) or ``"duckdb"``
(SQL over the SQLite file: :func:`~sufficientdp.engines.duckdb_engine.tally_collector_duckdb`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

from .._errors import DataError, ParameterError
from ..aggregation.columns import tally_columns, vector_histogram_columns
from ..aggregation.tally import MAX_HISTOGRAM_BITS, Tally, tally_histogram
from ..io import _as_bits, _batch_bits, _iter_columns, _parquet_group_batches, _parquet_layout, detect_format
from ._handoff import Handoff
from .duckdb_engine import sqlite_path, tally_collector_duckdb, tally_file_duckdb
from .spark_engine import tally_dataframe_spark, tally_file_spark

__all__ = [
    "COLLECTOR_ENGINES",
    "ENGINES",
    "tally_collector",
    "tally_collector_duckdb",
    "tally_dataframe_spark",
    "tally_file",
    "tally_file_duckdb",
    "tally_file_spark",
]

ENGINES = ("numpy", "duckdb", "spark")
_T = TypeVar("_T")
#: Engines of :func:`tally_collector`.
COLLECTOR_ENGINES = ("numpy", "duckdb")

#: Rows read and tallied at a time by the numpy engine (and rows per collector read).
CHUNK_ROWS = 1 << 18
#: At most this many values per batch of the numpy engine: wide reports get fewer rows per batch, so the memory of
#: a batch (and of the reader's buffers, which follow it) stays bounded for any L; 2^20 measured as fast as larger
#: batches (docs/benchmarks.md, "Aggregation engines").
CHUNK_CELLS = 1 << 20


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

    Examples:
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
    total_rows = _row_count(path)
    fast = _tally_parquet_polars(path, full_histogram, progress, total_rows)
    if fast is None:
        fast = _tally_parquet_parallel(path, full_histogram, progress, total_rows)
    if fast is not None:
        return fast
    # Streams: one batch (at most CHUNK_ROWS rows, CHUNK_CELLS values) in memory at a time, tallied column by
    # column (no packed copy).
    running = _Running(full_histogram)
    names: list[str] = []
    for cols, names in _prefetched(_iter_columns(path, CHUNK_ROWS, CHUNK_CELLS)):
        running.add(cols)
        if progress is not None:
            progress(running.reports, max(total_rows, running.reports))
    return running.tally(), names


class _Running:
    """The tally of the batches added so far: the kernels' counts of each batch, summed (exact integers, in any
    order). With the full histogram only the 2^L histograms are summed, and the bit counts and weights derived from
    the total once (:func:`~sufficientdp.aggregation.tally.tally_histogram`), identical to summing each batch's.
    The first batch goes through :func:`~sufficientdp.aggregation.columns.tally_columns`, which checks the
    arguments (``full_histogram`` for L > 20 raises its ParameterError there)."""

    __slots__ = ("_bits", "_full", "_tally", "_vh", "reports")

    def __init__(self, full_histogram: bool | None) -> None:
        self._full = full_histogram
        self._bits = 0
        self._tally: Tally | None = None
        self._vh: np.ndarray | None = None
        self.reports = 0

    def add(self, cols: list[np.ndarray]) -> None:
        if self._vh is not None:
            self._vh += vector_histogram_columns(cols)
        else:
            part = tally_columns(cols, full_histogram=self._full)
            if part.vector_histogram is not None and self._tally is None:
                self._vh = part.vector_histogram.astype(np.int64, copy=True)
                self._bits = part.bits
            else:
                self._tally = part if self._tally is None else self._tally.merge(part)
        self.reports += len(cols[0])

    def tally(self) -> Tally:
        if self._vh is not None:
            return tally_histogram(self._vh, self._bits)
        assert self._tally is not None  # the readers yield at least one batch
        return self._tally


#: Most reading threads of the numpy engine's Parquet path (one per core, each one batch ahead).
_MAX_READERS = 4


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def _tally_parquet_parallel(path: str | os.PathLike[str], full_histogram: bool | None,
                            progress: Callable[[int, int], None] | None,
                            total_rows: int) -> tuple[Tally, list[str]] | None:
    """The numpy engine on a Parquet file of two or more row groups, on every core: up to :data:`_MAX_READERS`
    threads (one per core) take the row groups in turn and decode them batch by batch (pyarrow, without the GIL);
    this thread validates and counts every batch as it comes (numpy's kernels), so decoding, which costs most, runs
    on all cores and counting alongside. The counts are sums, so the order in which batches arrive does not matter.

    None (nothing reported; the sequential reader runs instead) for a file this path does not take (one row group,
    one core, a column that is not numbers or booleans, the full histogram asked for L > 20) and as soon as a batch
    holds a null or a value other than 0/1, or a reader fails: the sequential reader then reports the error it
    always did (the column and the first bad row in file order), which a reader that went ahead cannot know.
    Memory: each reader holds the batch it decodes and at most ``readers`` decoded batches wait.
    """
    layout = _parquet_layout(path)
    if layout is None:
        return None
    names, groups, same_integer_type = layout
    readers = min(_MAX_READERS, _cores(), groups)
    full = len(names) <= 16 if full_histogram is None else full_histogram
    if readers < 2 or (full and len(names) > MAX_HISTOGRAM_BITS):
        return None
    lock = threading.Lock()
    order = iter(range(groups))

    def next_group() -> int | None:
        with lock:
            return next(order, None)

    batches = Handoff(maxsize=readers)

    def read() -> None:
        try:
            for batch in _parquet_group_batches(path, next_group, CHUNK_ROWS, CHUNK_CELLS):
                if not batches.offer(0, batch):
                    return
            batches.offer(1, None)
        except BaseException:  # noqa: BLE001 - the sequential reader reports it
            batches.offer(2, None)

    threads = [threading.Thread(target=read, name=f"sufficientdp-reader-{k}", daemon=True) for k in range(readers)]
    running = _count_handed_over(threads, batches, lambda batch: _batch_bits(batch, same_integer_type),
                                 full_histogram, progress, total_rows)
    return None if running is None else (running.tally(), names)


def _count_handed_over(workers: list[threading.Thread], handoff: Handoff,
                       bits_of: Callable[[Any], list[np.ndarray] | None], full_histogram: bool | None,
                       progress: Callable[[int, int], None] | None, total_rows: int) -> _Running | None:
    """Start ``workers`` (each hands items over as kind 0, then kind 1 when done; kind 2 when it fails) and
    validate (``bits_of``: the item's 0/1 columns, or None) and count every item in this thread as it comes. None
    at the first item refused or a failure; the workers stop at their next hand-over and are joined either way."""
    running = _Running(full_histogram)
    ended = 0
    try:
        for w in workers:
            w.start()
        while ended < len(workers):
            kind, item = handoff.take()
            if kind == 1:
                ended += 1
                continue
            cols = bits_of(item) if kind == 0 else None
            if cols is None:
                return None
            running.add(cols)
            if progress is not None:
                progress(running.reports, max(total_rows, running.reports))
    finally:
        handoff.close()  # the workers stop at their next hand-over
        for w in workers:
            if w.ident is not None:  # started
                w.join()
    return running


#: Most values (rows x columns) in one slice that polars decodes for the numpy engine (64 MB of ``uint8``): a row
#: group is one slice when it fits (a slice that starts or ends inside a row group decodes all of it).
POLARS_SLICE_CELLS = 1 << 26
#: Slices of at most this many values (16 MB of ``uint8``) are decoded one per core at a time (see
#: :func:`_tally_parquet_polars`).
POLARS_NARROW_CELLS = 1 << 24


def _polars() -> Any:
    """The polars module, or None when it is not installed (``pip install 'sufficientdp[polars]'``)."""
    try:
        import polars
    except ImportError:
        return None
    return polars


def _polars_bits(df: Any, pl: Any) -> list[np.ndarray] | None:
    """A polars DataFrame's columns as uint8 0/1 (:func:`sufficientdp.io._batch_bits`'s rules: numbers or booleans,
    no null, every value 0 or 1), or None."""
    cols = []
    for s in df.get_columns():
        dtype = s.dtype
        if s.null_count() or not (dtype.is_integer() or dtype.is_float() or dtype == pl.Boolean):
            return None
        bits = _as_bits(s.to_numpy())
        if bits is None:
            return None
        cols.append(bits)
    return cols


def _polars_slices(sizes: list[int], bits: int) -> list[tuple[int, int]]:
    """``(first row, rows)`` of the slices polars decodes: each row group, cut into equal parts of at most
    :data:`POLARS_SLICE_CELLS` values where it holds more."""
    cap = max(1, POLARS_SLICE_CELLS // max(bits, 1))
    out: list[tuple[int, int]] = []
    start = 0
    for size in sizes:
        parts = -(-size // cap) if size else 0
        for k in range(parts):
            lo, hi = start + size * k // parts, start + size * (k + 1) // parts
            out.append((lo, hi - lo))
        start += size
    return out


def _polars_plan(path: str | os.PathLike[str], full_histogram: bool | None
                 ) -> tuple[Any, Any, list[str], list[tuple[int, int]]] | None:
    """``(polars, lazy scan, names, slices)`` for :func:`_tally_parquet_polars`, or None where it does not apply."""
    pl = _polars()
    layout = _parquet_layout(path) if pl is not None else None
    if layout is None:
        return None
    names, _, _ = layout
    full = len(names) <= 16 if full_histogram is None else full_histogram
    if full and len(names) > MAX_HISTOGRAM_BITS:
        return None
    try:
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(path).metadata
        sizes = [int(meta.row_group(g).num_rows) for g in range(meta.num_row_groups)]
        # the one file named (no glob: 'r[1].parquet' is that file, not r1.parquet; no columns from directory
        # names such as year=2024/)
        frame = pl.scan_parquet(path, glob=False, hive_partitioning=False)
        stored = list(frame.collect_schema().names())
        if stored != names:  # pandas' stored index is not read (_parquet_layout leaves it out); anything else is
            kept = set(names)  # another reading of the file than pyarrow's, left to the pyarrow readers
            if [n for n in stored if n in kept] != names:
                return None
            frame = frame.select(names)
    except Exception:  # noqa: BLE001 - the pyarrow readers report what is wrong
        return None
    return pl, frame, names, _polars_slices(sizes, len(names))


class _SharedIterator:
    """Items handed out one at a time to several threads (None once all are taken)."""

    def __init__(self, items: list[tuple[int, int]]) -> None:
        self._items = iter(items)
        self._lock = threading.Lock()

    def take(self) -> tuple[int, int] | None:
        with self._lock:
            return next(self._items, None)


def _polars_decode(frame: Any, pieces: _SharedIterator, ready: Handoff) -> None:
    """One decoding thread of :func:`_tally_parquet_polars`: collects the slices it takes and hands them over
    (kind 0), then kind 1; kind 2 when polars fails (the sequential reader then reports the error)."""
    try:
        while (piece := pieces.take()) is not None:
            if not ready.offer(0, frame.slice(*piece).collect()):
                return
        ready.offer(1, None)
    except BaseException:  # noqa: BLE001 - the sequential reader reports it
        ready.offer(2, None)


def _polars_decoders(slices: list[tuple[int, int]], bits: int) -> int:
    """Decoding threads for :func:`_tally_parquet_polars`: one per core (at most :data:`_MAX_READERS`, at most one
    per slice) when every slice holds at most :data:`POLARS_NARROW_CELLS` values, else one."""
    widest = max((rows for _, rows in slices), default=0) * bits
    return max(1, min(_MAX_READERS, _cores(), len(slices))) if widest <= POLARS_NARROW_CELLS else 1


def _tally_parquet_polars(path: str | os.PathLike[str], full_histogram: bool | None,
                          progress: Callable[[int, int], None] | None,
                          total_rows: int) -> tuple[Tally, list[str]] | None:
    """The numpy engine on a Parquet file when polars is installed: polars decodes the file a row group at a time
    (:func:`_polars_slices`; polars' reader is 2-3x faster than pyarrow's here, docs/benchmarks.md) in background
    threads, and this thread validates and counts each slice with the numpy kernels as it comes, as the other
    readers' batches are counted (the counts are sums: arrival order does not matter). Polars spreads one slice
    over its threads column by column, which a narrow slice does not fill: slices of at most
    :data:`POLARS_NARROW_CELLS` values are decoded one per core at a time, wider ones one at a time.

    None (nothing reported; the pyarrow readers run instead) when polars is not installed, for a file this path
    does not take (what :func:`_tally_parquet_parallel` refuses, other column names in polars than in the file's
    Arrow schema), and as soon as a slice holds a null or a value other than 0/1 or polars fails: the sequential
    reader then reports the error it always did. Memory: each decoding thread holds the slice it decodes and at
    most as many decoded slices wait as there are decoding threads (each at most :data:`POLARS_SLICE_CELLS`
    values, and at most :data:`POLARS_NARROW_CELLS` when there are several threads)."""
    plan = _polars_plan(path, full_histogram)
    if plan is None:
        return None
    pl, frame, names, slices = plan
    decoders = _polars_decoders(slices, len(names))
    ready = Handoff(maxsize=decoders)
    pieces = _SharedIterator(slices)
    workers = [threading.Thread(target=_polars_decode, args=(frame, pieces, ready), name="sufficientdp-polars",
                                daemon=True) for _ in range(decoders)]
    running = _count_handed_over(workers, ready, lambda df: _polars_bits(df, pl), full_histogram, progress,
                                 total_rows)
    if running is None or not running.reports:  # (no rows: the sequential reader's empty tally and type checks)
        return None
    return running.tally(), names


def _prefetched(items: Iterator[_T]) -> Iterator[_T]:
    """The items of ``items``, produced by a background thread one item ahead of the consumer: the reader decodes
    batch k + 1 while batch k is counted (pyarrow's readers and numpy's kernels release the GIL). At most one
    finished item waits, so memory stays bounded by a few batches; an exception of the reader is raised here, and
    the thread stops when the consumer does."""
    ready = Handoff(maxsize=1)

    def produce() -> None:
        try:
            for item in items:
                if not ready.offer(0, item):
                    return
            ready.offer(1, None)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            ready.offer(2, exc)

    worker = threading.Thread(target=produce, name="sufficientdp-reader", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = ready.take()
            if kind == 1:
                return
            if kind == 2:
                raise value
            yield value
    finally:
        ready.close()
        worker.join()
        close = getattr(items, "close", None)
        if close is not None:
            close()


def tally_collector(database_url: str, campaign_id: str, *, release_id: str | None = None,
                    engine: str = "duckdb", full_histogram: bool | None = None) -> Tally:
    """Tally the released reports of a campaign stored by the collector service (docs/collector.md).

    Only **released** reports are aggregated: those of ``release_id``, or those of every release of the campaign
    when it is None. Pending reports never are — a tally of them would publish counts over a crowd that has not
    reached the release threshold k·N_min, bypassing the crowd guarantee the collector enforces. Releases are
    disjoint, so the tally of all releases is the sum of the per-release tallies.

    Args:
        database_url: the collector's database: ``sqlite:///path.db``, a plain SQLite file path, or (numpy
            engine only) a ``postgresql://`` URL.
        campaign_id: the campaign.
        release_id: one release of that campaign, or None for all of them.
        engine: ``"duckdb"`` (SQL over the SQLite file, ``pip install 'sufficientdp[duckdb]'``) or ``"numpy"``
            (reads through :func:`sufficientdp.service.storage.open_storage_readonly`; SQLite or PostgreSQL).
            Both only read: neither creates, write-locks, migrates nor writes the database.
        full_histogram: compute the 2^L vector histogram; default: when L <= 16. Allowed only for L <= 20.

    Returns:
        The :class:`Tally` of the stored packed reports (bit j in byte j // 8 at position j % 8); identical for
        both engines.

    Raises:
        ParameterError: unknown ``engine``, unsupported URL (or ``postgresql://`` with ``engine="duckdb"``), or
            ``full_histogram`` for L > 20.
        DataError: missing SQLite file, unknown campaign or release (the message names it), a stored report
            that is not ⌈L/8⌉ bytes with zero padding bits, or (numpy engine) not a collector database or one
            of a schema version this code does not know.
        ImportError: duckdb or its sqlite_scanner extension is unavailable (``engine="duckdb"``), psycopg for
            PostgreSQL.

    Examples:
        >>> import tempfile, pathlib
        >>> from sufficientdp.service.storage import open_storage, pack_reports
        >>> url = "sqlite:///" + str(pathlib.Path(tempfile.mkdtemp()) / "c.db")
        >>> s = open_storage(url)
        >>> s.create_campaign("c1", {"id": "c1", "bits": 2}, None)
        >>> s.submit("c1", pack_reports(np.array([[1, 0], [1, 1], [0, 0]])), [None] * 3)
        (3, 0)
        >>> _ = s.release("c1", threshold=3, bits=2, day="2024-01-01", build=lambda rid, t: {"id": rid})
        >>> _ = s.submit("c1", pack_reports(np.array([[1, 1]])), [None])  # pending: not counted
        >>> s.close()
        >>> tally_collector(url, "c1", engine="numpy").to_dict(include_vector_histogram=True)
        {'bits': 2, 'reports': 3, 'bit_counts': [2, 1], 'weight_histogram': [1, 1, 1], 'vector_histogram': [1, 1, 0, 1]}
    """
    if not isinstance(engine, str) or engine not in COLLECTOR_ENGINES:
        raise ParameterError(f"engine must be one of {', '.join(map(repr, COLLECTOR_ENGINES))}; got {engine!r}")
    if not isinstance(campaign_id, str) or not campaign_id:
        raise ParameterError(f"campaign_id must be a non-empty string; got {campaign_id!r}")
    if release_id is not None and (not isinstance(release_id, str) or not release_id):
        raise ParameterError(f"release_id must be None or a non-empty string; got {release_id!r}")
    if engine == "duckdb":
        return tally_collector_duckdb(database_url, campaign_id, release_id=release_id,
                                      full_histogram=full_histogram)
    return _tally_collector_numpy(database_url, campaign_id, release_id, full_histogram)


def _tally_collector_numpy(database_url: str, campaign_id: str, release_id: str | None,
                           full_histogram: bool | None) -> Tally:
    from ..aggregation.tally import MAX_HISTOGRAM_BITS
    from ..service.storage import open_storage_readonly, tally_report_bytes

    path = sqlite_path(database_url)
    where = path or "the database"  # never the PostgreSQL URL: it may hold a password
    if path is not None and not os.path.isfile(path):
        raise DataError(f"database file {path!r} does not exist")
    # Read-only: never creates, write-locks, migrates or writes the collector's database (it may be live).
    try:
        reader = open_storage_readonly(database_url)
    except RuntimeError as exc:
        raise DataError(f"cannot tally {where!r}: {exc}") from None
    with reader:
        spec = reader.campaign_spec(campaign_id)
        if spec is None:
            raise DataError(f"unknown campaign {campaign_id!r} in {where!r}")
        bits = int(spec["bits"])
        if full_histogram is None:
            full_histogram = bits <= 16
        if full_histogram and bits > MAX_HISTOGRAM_BITS:
            raise ParameterError(f"full_histogram needs bits in [1, {MAX_HISTOGRAM_BITS}]; got bits={bits}")
        n_bytes = -(-bits // 8)
        pad_mask = (0xFF << (bits % 8)) & 0xFF if bits % 8 else 0
        try:
            stored = reader.released_reports(campaign_id, release_id, chunk_rows=CHUNK_ROWS)
        except LookupError as exc:
            raise DataError(str(exc.args[0])) from None
        bad = 0

        def chunks() -> Iterator[list[bytes]]:
            nonlocal bad
            for rows in stored:
                good = []
                for b in rows:
                    if len(b) != n_bytes or b[-1] & pad_mask:
                        bad += 1
                    else:
                        good.append(b)
                yield good

        t = tally_report_bytes(chunks(), bits, full_histogram=full_histogram)
    if bad:
        raise DataError(f"{bad} stored report(s) of campaign {campaign_id!r} are not {n_bytes}-byte packed "
                        f"{bits}-bit reports with zero padding")
    return t
