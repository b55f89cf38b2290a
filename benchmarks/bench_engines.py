"""Benchmark of the aggregation engines against plain tools, wall time and peak memory, on CSV and Parquet files.

Files (written once to a temporary folder; random reports, each bit 1 with probability 1/2, uint8 columns):

* Parquet, L = 16, ``N_PARQUET`` rows (default 10^7), row groups of 2^20 rows, pyarrow's default compression;
* Parquet, L = 64, same N;
* CSV, L = 16, ``N_CSV`` rows (default 3·10^6), written by pyarrow (``0``/``1`` cells, quoted header).

Every measurement runs in a fresh subprocess (``python bench_engines.py --worker KIND PATH``) that imports numpy,
pyarrow and duckdb first, then times only the aggregation call and reports its wall time and its own peak RSS
(``VmHWM`` of ``/proc/self/status``, which includes the interpreter and those imports, and polars' when it is
installed; the ``idle`` row is a worker that only imports them). Kinds:

* ``engine=numpy`` / ``engine=duckdb`` — ``sufficientdp.engines.tally_file(path, engine=...)``: read, validate
  every value is 0/1, bit counts, weight histogram and (L = 16) the full 2^16 histogram;
* ``plain DuckDB`` — ``SELECT count(*), sum(b0), …, sum(bL-1) FROM read_parquet(path)`` / ``read_csv(path)``
  (DuckDB's sniffer types the CSV columns): only the bit counts, no validation, no histograms;
* ``polars`` — ``pl.scan_parquet(path)`` / ``pl.scan_csv(path)`` then ``.select(pl.all().sum())`` (the row is left
  out with a note when polars is not installed);
* ``duckdb-same`` / ``polars-same`` — the plain tool computing the engines' outputs in one query, as a user of that
  tool would write it (:func:`_duckdb_same_outputs`, :func:`_polars_same_outputs`): the baseline for the same work,
  where the two rows above do less (no validation, no histograms).

Each kind runs ``REPEATS`` times (default 2) in alternation and the best wall time is reported (a shared 2-core
VM: the least disturbed run); the RSS is the largest of the runs. Ratios are to plain DuckDB in the same run
(> 1 means slower than plain DuckDB). Every engine's tally is checked equal to the tally of the generated arrays
computed in memory by the packed-word kernels (``sufficientdp.aggregation.tally.tally``), and plain DuckDB's sums
to its bit counts.

In memory (in this process): ``sdp.tally`` of an ``(N, 16)`` uint8 array against ``arr.sum(0)``.

Spark (``engine="spark"``) runs only with ``SDP_BENCH_SPARK=1`` (JVM start-up and several minutes).

Usage: ``.venv/bin/python benchmarks/bench_engines.py`` (prints a markdown section; ``main()`` returns it; each
run's time and, per file, the median of each kind and its ratio to plain DuckDB's median go to stderr).
Environment: ``SDP_BENCH_ENGINES_N`` (Parquet rows), ``SDP_BENCH_ENGINES_CSV_N`` (CSV rows),
``SDP_BENCH_ENGINES_REPEATS``, ``SDP_BENCH_ENGINES_ONLY`` (comma-separated subset of ``parquet16``, ``parquet64``,
``csv16`` and ``memory``, the in-memory note; default all), e.g. ``SDP_BENCH_ENGINES_ONLY=parquet64
SDP_BENCH_ENGINES_REPEATS=5`` for the Parquet L = 64 case alone.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

N_PARQUET = int(os.environ.get("SDP_BENCH_ENGINES_N", 10_000_000))
N_CSV = int(os.environ.get("SDP_BENCH_ENGINES_CSV_N", 3_000_000))
REPEATS = int(os.environ.get("SDP_BENCH_ENGINES_REPEATS", 2))
SPARK = os.environ.get("SDP_BENCH_SPARK") == "1"
ALL_FILES = (("parquet", 16, N_PARQUET), ("parquet", 64, N_PARQUET), ("csv", 16, N_CSV))
_ONLY = [x.strip() for x in os.environ.get("SDP_BENCH_ENGINES_ONLY", "").split(",") if x.strip()]
_CASES = [f"{fmt}{bits}" for fmt, bits, _ in ALL_FILES] + ["memory"]
if any(x not in _CASES for x in _ONLY):
    raise SystemExit(f"SDP_BENCH_ENGINES_ONLY must list some of {', '.join(_CASES)}; got {_ONLY}")
FILES = tuple(f for f in ALL_FILES if not _ONLY or f"{f[0]}{f[1]}" in _ONLY)
IN_MEMORY = not _ONLY or "memory" in _ONLY
ROW_GROUP = 1 << 20
SEED = 20240601


def _write_file(path: Path, fmt: str, n: int, bits: int) -> dict[str, Any]:
    """Random reports in chunks of ROW_GROUP rows; returns the in-memory tally of what was written (the truth)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from sufficientdp.aggregation.tally import tally

    rng = np.random.default_rng(SEED + bits)
    schema = pa.schema([(f"bit{j}", pa.uint8()) for j in range(bits)])
    truth = None
    writer: Any = pq.ParquetWriter(path, schema) if fmt == "parquet" else None
    sink = open(path, "wb") if fmt == "csv" else None  # noqa: SIM115 - closed below
    try:
        for i, start in enumerate(range(0, n, ROW_GROUP)):
            rows = min(ROW_GROUP, n - start)
            words = rng.integers(0, 2**64, size=rows, dtype=np.uint64)
            cols = [((words >> np.uint64(j)) & np.uint64(1)).astype(np.uint8) for j in range(bits)]
            table = pa.table(cols, schema=schema)
            if writer is not None:
                writer.write_table(table)
            else:
                pacsv.write_csv(table, sink, write_options=pacsv.WriteOptions(include_header=i == 0,
                                                                              quoting_style="none"))
            part = tally(np.column_stack(cols))
            truth = part if truth is None else truth.merge(part)
    finally:
        if writer is not None:
            writer.close()
        if sink is not None:
            sink.close()
    assert truth is not None
    return truth.to_dict(include_vector_histogram=True)


# ------------------------------------------------------------------------------------------------------ worker
def _worker(kind: str, path: str) -> dict[str, Any]:
    import resource

    import duckdb
    import pyarrow.csv  # noqa: F401 - imported before the clock starts, as for every kind
    import pyarrow.parquet  # noqa: F401

    try:  # (the numpy engine decodes Parquet with polars when it is installed; the polars row uses it)
        import polars  # noqa: F401
    except ImportError:
        pass

    from sufficientdp.engines import tally_file

    out: dict[str, Any] = {}
    same: dict[str, Any] | None = None
    start = time.perf_counter()
    if kind.startswith("engine="):
        t, _ = tally_file(path, engine=kind.split("=", 1)[1])
        out["result"] = t.to_dict(include_vector_histogram=True)
    elif kind == "plain-duckdb":
        fmt = "parquet" if path.endswith(".parquet") else "csv"
        con = duckdb.connect(":memory:")
        names = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_{fmt}('{path}')").fetchall()]
        row = con.execute("SELECT " + ", ".join(f'sum("{c}")' for c in names)
                          + f" FROM read_{fmt}('{path}')").fetchone()
        out["bit_counts"] = [int(x) for x in row]
    elif kind == "polars":
        import polars as pl

        frame = pl.scan_parquet(path) if path.endswith(".parquet") else pl.scan_csv(path)
        out["bit_counts"] = [int(x) for x in frame.select(pl.all().sum()).collect().row(0)]
    elif kind == "duckdb-same":
        same = _duckdb_same_outputs(duckdb, path)
    elif kind == "polars-same":
        same = _polars_same_outputs(path)
    elif kind != "idle":
        raise ValueError(kind)
    out["seconds"] = time.perf_counter() - start
    if kind.endswith("-same"):  # (outside the clock: only the comparison with the truth needs a Tally)
        from sufficientdp.aggregation.tally import Tally

        out["result"] = None if same is None else Tally(**same).to_dict(include_vector_histogram=True)
    out["rss_mb"] = _peak_rss_mb(resource)
    return out


def _same_fields(bits: int, codes: Any, weights: Any, counts: Any, sums: Any) -> dict[str, Any]:
    """Tally fields from groups: by full code (``sums`` None: bit counts from the codes) or by weight (``codes``
    None, ``sums`` the per-group column sums)."""
    counts = np.asarray(counts, dtype=np.int64)
    if codes is not None:
        vh = np.zeros(1 << bits, dtype=np.int64)
        np.add.at(vh, np.asarray(codes, dtype=np.int64), counts)
        ones = [(np.arange(1 << bits) >> j) & 1 for j in range(bits)]
        bit_counts = np.array([int(vh @ one) for one in ones], dtype=np.int64)
        wh = np.bincount(sum(ones), weights=vh, minlength=bits + 1).astype(np.int64)
        return {"bits": bits, "reports": int(vh.sum()), "bit_counts": bit_counts, "weight_histogram": wh,
                "vector_histogram": vh}
    wh = np.zeros(bits + 1, dtype=np.int64)
    np.add.at(wh, np.asarray(weights, dtype=np.int64), counts)
    bit_counts = np.array([int(np.asarray(s, dtype=np.int64).sum()) for s in sums], dtype=np.int64)
    return {"bits": bits, "reports": int(counts.sum()), "bit_counts": bit_counts, "weight_histogram": wh}


def _duckdb_same_outputs(duckdb: Any, path: str) -> dict[str, Any] | None:
    """What the engines compute, in plain DuckDB SQL as a user would write it: at L <= 16 ``GROUP BY ALL`` columns
    (the full histogram; every group's key checked 0/1 and not NULL), else ``GROUP BY`` the row weight with the
    per-column ``sum``, ``min`` and ``max`` (validation) per group. None when a value is not 0/1."""
    fmt = "parquet" if path.endswith(".parquet") else "csv"
    con = duckdb.connect(":memory:")
    source = f"read_{fmt}('{path}')"
    cols = [f'"{r[0]}"' for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
    bits = len(cols)
    if bits <= 16:
        res = list(con.execute(f"SELECT {', '.join(cols)}, count(*) FROM {source} GROUP BY ALL").fetchnumpy()
                   .values())
        keys = [np.ma.filled(np.ma.asarray(k).astype(np.int64), -1) for k in res[:bits]]
        if any(((k != 0) & (k != 1)).any() for k in keys):
            return None
        codes = sum(k << j for j, k in enumerate(keys))
        return _same_fields(bits, codes, None, res[bits], None)
    res = list(con.execute(
        f"SELECT {' + '.join(cols)} AS w, count(*), " + ", ".join(f"sum({c}), min({c}), max({c})" for c in cols)
        + f" FROM {source} GROUP BY w").fetchnumpy().values())
    w = np.ma.asarray(res[0])
    lows, highs = res[3::3], res[4::3]
    if np.ma.getmaskarray(w).any() or any(np.asarray(x).min() < 0 for x in lows) or any(
            np.asarray(x).max() > 1 for x in highs):
        return None
    return _same_fields(bits, None, w, res[1], res[2::3])


def _polars_same_outputs(path: str) -> dict[str, Any] | None:
    """What the engines compute, in one polars lazy query: ``group_by`` the row code ``Σ_j c_j·2^j`` (L <= 16) or
    the row weight (with the per-column sums), each group with the smallest and largest value of its rows and
    their missing values (validation). None when a value is not 0/1."""
    import polars as pl

    frame = pl.scan_parquet(path) if path.endswith(".parquet") else pl.scan_csv(path)
    names = list(frame.collect_schema().names())
    bits = len(names)
    checks = [pl.len().alias("_n"), pl.min_horizontal(pl.all()).min().alias("_lo"),
              pl.max_horizontal(pl.all()).max().alias("_hi"),
              pl.sum_horizontal(pl.all().is_null()).sum().alias("_null")]
    if bits <= 16:
        key = pl.sum_horizontal([pl.col(c).cast(pl.UInt32) * (1 << j) for j, c in enumerate(names)]).alias("_k")
        groups = frame.group_by(key).agg(checks).collect()
    else:
        key = pl.sum_horizontal(pl.all().cast(pl.UInt16)).alias("_k")
        groups = frame.group_by(key).agg(*checks, pl.all().sum()).collect()
    nulls, lo, hi = groups.select(pl.col("_null").sum(), pl.col("_lo").min(), pl.col("_hi").max()).row(0)
    if nulls or lo < 0 or hi > 1:
        return None
    k, n = groups["_k"].to_numpy(), groups["_n"].to_numpy()
    if bits <= 16:
        return _same_fields(bits, k, None, n, None)
    return _same_fields(bits, None, k, n, [groups[c].to_numpy() for c in names])


def _peak_rss_mb(resource: Any) -> float:
    """This process's peak RSS: VmHWM from /proc/self/status (ru_maxrss of a freshly exec'd child can carry the
    parent's high-water mark on Linux), else ru_maxrss."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run(kind: str, path: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--worker", kind, str(path)], capture_output=True, text=True,
                          check=False)
    if proc.returncode:
        raise RuntimeError(f"worker {kind} on {path.name} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _spark_rows(paths: dict[tuple[str, int], Path], truths: dict[tuple[str, int], Any]) -> list[str]:
    from pyspark.sql import SparkSession

    from sufficientdp.engines import tally_file

    session = (SparkSession.builder.master("local[2]").appName("sufficientdp-bench")
               .config("spark.ui.enabled", "false").config("spark.driver.memory", "4g").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    notes = []
    try:
        for key, path in paths.items():
            start = time.perf_counter()
            t, _ = tally_file(path, engine="spark")
            seconds = time.perf_counter() - start
            if t.to_dict(include_vector_histogram=True) != truths[key]:
                raise AssertionError(f"spark disagrees on {path.name}")
            notes.append(f"`engine=\"spark\"`, `local[2]`, {key[0]} L = {key[1]}: {seconds:.2f} s (in process).")
    finally:
        session.stop()
    return notes


def _in_memory_note() -> str:
    """``sdp.tally`` of an in-memory ``(N_PARQUET, 16)`` uint8 array against ``arr.sum(0)`` (bit counts only), in
    this process, best of REPEATS alternated runs; the bit counts are checked equal."""
    from sufficientdp import tally

    arr = np.random.default_rng(SEED).integers(0, 2, size=(N_PARQUET, 16), dtype=np.uint8)
    best = {"tally": float("inf"), "sum": float("inf")}
    for _ in range(REPEATS):
        start = time.perf_counter()
        t = tally(arr)
        best["tally"] = min(best["tally"], time.perf_counter() - start)
        start = time.perf_counter()
        sums = arr.sum(0)
        best["sum"] = min(best["sum"], time.perf_counter() - start)
        if t.bit_counts.tolist() != sums.tolist():
            raise AssertionError("sdp.tally and arr.sum(0) disagree")
    return (f"In memory, a ({N_PARQUET:,}, 16) uint8 array: `sdp.tally(arr)` (validation, bit counts, weight "
            f"histogram, full 2^16 histogram) {best['tally']:.3f} s, `arr.sum(0)` (bit counts only) "
            f"{best['sum']:.3f} s: ratio {best['tally'] / best['sum']:.2f}.")


def main() -> str:
    """Run the benchmark and return a markdown section headed ``## Aggregation engines``."""
    from _common import cpu_model

    try:
        import polars

        polars_version: str | None = polars.__version__
    except ImportError:
        polars_version = None
    import duckdb
    import pyarrow

    kinds = ["engine=numpy", "engine=duckdb", "plain-duckdb", "duckdb-same"] + (
        ["polars", "polars-same"] if polars_version else [])
    labels = {"engine=numpy": '`engine="numpy"`', "engine=duckdb": '`engine="duckdb"`',
              "plain-duckdb": "plain DuckDB `SELECT sum(b0), …`",
              "duckdb-same": "plain DuckDB, same outputs (`GROUP BY`)",
              "polars": "polars `scan_*().select(pl.all().sum())`",
              "polars-same": "polars, same outputs (`group_by`)"}
    tmp = Path(tempfile.mkdtemp(prefix="sdp-bench-engines-"))
    notes: list[str] = []
    lines: list[str] = []
    t0 = time.perf_counter()
    try:
        paths: dict[tuple[str, int], Path] = {}
        truths: dict[tuple[str, int], Any] = {}
        sizes = []
        for fmt, bits, n in FILES:
            path = tmp / f"reports{bits}.{fmt}"
            truths[(fmt, bits)] = _write_file(path, fmt, n, bits)
            paths[(fmt, bits)] = path
            sizes.append(f"{fmt} L = {bits}: {n:,} rows, {path.stat().st_size / 1e6:.0f} MB")
            print(f"wrote {path.name}", file=sys.stderr)
        idle = max(_run("idle", next(iter(paths.values())))["rss_mb"] for _ in range(2)) if paths else 0.0
        table = ["| file | L | rows | engine / tool | time (s) | vs plain DuckDB | peak RSS (MB) |",
                 "|---|---:|---:|---|---:|---:|---:|"]
        for fmt, bits, n in FILES:
            key = (fmt, bits)
            best: dict[str, float] = {}
            runs: dict[str, list[float]] = {kind: [] for kind in kinds}
            rss: dict[str, float] = {}
            for _ in range(REPEATS):
                for kind in kinds:
                    out = _run(kind, paths[key])
                    truth = truths[key]
                    if "result" in out and out["result"] != truth:
                        raise AssertionError(f"{kind} disagrees with the in-memory tally on {paths[key].name}")
                    if "bit_counts" in out and out["bit_counts"] != truth["bit_counts"]:
                        raise AssertionError(f"{kind} bit counts disagree on {paths[key].name}")
                    best[kind] = min(best.get(kind, float("inf")), out["seconds"])
                    runs[kind].append(out["seconds"])
                    rss[kind] = max(rss.get(kind, 0.0), out["rss_mb"])
                    print(f"{fmt} L={bits} {kind}: {out['seconds']:.2f} s, {out['rss_mb']:.0f} MB",
                          file=sys.stderr)
            medians = {kind: statistics.median(runs[kind]) for kind in kinds}
            for kind in kinds:
                print(f"{fmt} L={bits} {kind}: median of {REPEATS} {medians[kind]:.2f} s, "
                      f"{medians[kind] / medians['plain-duckdb']:.2f}x plain DuckDB's median", file=sys.stderr)
            for kind in kinds:
                table.append(f"| {fmt} | {bits} | {n:,} | {labels[kind]} | {best[kind]:.2f} | "
                             f"{best[kind] / best['plain-duckdb']:.2f} | {rss[kind]:.0f} |")
            same = min((k for k in kinds if k.endswith("-same")), key=lambda k: best[k])
            notes.append(f"{fmt} L = {bits}, the same outputs: `engine=\"numpy\"` "
                         f"{best['engine=numpy'] / best[same]:.2f}x the faster plain tool computing them "
                         f"({labels[same]}; {medians['engine=numpy'] / medians[same]:.2f}x by medians), "
                         f"`engine=\"duckdb\"` {best['engine=duckdb'] / best['duckdb-same']:.2f}x plain DuckDB "
                         f"computing them ({medians['engine=duckdb'] / medians['duckdb-same']:.2f}x by medians); "
                         f"best of {REPEATS}.")
        if IN_MEMORY:
            notes.append(_in_memory_note())
        if polars_version is None:
            notes.append("polars was not measured: it is not installed in this environment.")
        if SPARK:
            notes += _spark_rows(paths, truths)
        else:
            notes.append("Spark was not run (set `SDP_BENCH_SPARK=1`).")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    header = (
        "Each engine and each plain tool aggregates the same file in a fresh subprocess; the time is the "
        "aggregation call only (imports done before the clock starts), best of "
        f"{REPEATS} alternated runs; peak RSS is the worker's `VmHWM` (the idle worker with numpy, pyarrow and "
        f"duckdb imported: {idle:.0f} MB). The engines read, validate every value is 0/1 and count bit counts, "
        "the weight histogram and at L = 16 the full 2^16 histogram, all checked equal to the in-memory tally of the "
        "generated arrays; plain DuckDB and polars only sum the columns (their sums checked too); the *same outputs* "
        "rows compute what the engines do (validation, bit counts, weight histogram, full histogram at L <= 16) in "
        "one query of the plain tool, checked equal to the in-memory tally too. Files: "
        + "; ".join(sizes) + f". Machine: {cpu_model()}, nproc = {os.cpu_count()} (shared, loaded), Python "
        f"{platform.python_version()}, numpy {np.__version__}, pyarrow {pyarrow.__version__}, duckdb "
        f"{duckdb.__version__}" + (f", polars {polars_version}" if polars_version else "")
        + f". Whole benchmark: {time.perf_counter() - t0:.0f} s."
    )
    lines = ["## Aggregation engines", "", header, "", *table, ""] + [f"- {note}" for note in notes]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(sys.argv[2], sys.argv[3])))
    else:
        print(main())
