"""Benchmark of the aggregation engines (numpy, DuckDB, Spark) on one large Parquet report file.

For L = 16 and L = 64 a Parquet file of ``N`` random reports (one uint8 column per bit, row groups of 2^20 rows,
pyarrow's default compression) is written once to a temporary folder; every engine then tallies the same file
end to end (open, read, validate, count: ``engines.tally_file(path, engine=...)``), single run each (one run of
Spark or DuckDB over 10^7 reports takes seconds; the machine is a shared 2-core VM, so the ratios are the
meaningful numbers). The baseline, timed in the same run, is the obvious script: ``pandas.read_parquet`` then
numpy column sums, ``bincount`` of the row sums (and of the codes Σ_j x_j 2^j at L = 16). Every engine's tally is
checked equal to the baseline's counts.

Spark runs in local mode on this machine, with ``local[1]`` (one core) and ``local[2]`` (both cores) at L = 16
and with ``local[2]`` only at L = 64 (to keep the run under ~5 minutes), a fresh SparkContext per master; the
JVM/context start-up time is reported separately and not included, but each timed call includes Spark's query
planning and code generation (a new plan per call, as a user would see it; no warm-up run).

Usage: ``.venv/bin/python benchmarks/bench_engines.py`` (prints a markdown section; ``main()`` returns it).
Environment: ``SDP_BENCH_ENGINES_N`` overrides N (default 10^7).
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import cpu_model

from sufficientdp.aggregation.tally import Tally
from sufficientdp.engines import tally_file

N_REPORTS = int(os.environ.get("SDP_BENCH_ENGINES_N", 10_000_000))
BITS = (16, 64)
SPARK_RUNS = (("local[1]", 16), ("local[2]", 16), ("local[2]", 64))
ROW_GROUP = 1 << 20
SEED = 20240601


def _write_file(path: Path, n: int, bits: int) -> None:
    """Random reports (each bit 1 with probability 1/2), written in row groups of ROW_GROUP rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED + bits)
    schema = pa.schema([(f"bit{j}", pa.uint8()) for j in range(bits)])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, n, ROW_GROUP):
            rows = min(ROW_GROUP, n - start)
            words = rng.integers(0, 2**64, size=rows, dtype=np.uint64)
            cols = [((words >> np.uint64(j)) & np.uint64(1)).astype(np.uint8) for j in range(bits)]
            writer.write_table(pa.table(cols, schema=schema))


def _baseline(path: Path) -> dict[str, Any]:
    """The naive script: pandas reads the file, numpy sums columns and row sums (and codes for small L)."""
    import pandas as pd

    arr = pd.read_parquet(path).to_numpy()
    bits = arr.shape[1]
    d: dict[str, Any] = {
        "bits": bits,
        "reports": int(arr.shape[0]),
        "bit_counts": [int(x) for x in arr.sum(axis=0, dtype=np.int64)],
        "weight_histogram": [int(x) for x in np.bincount(arr.sum(axis=1, dtype=np.int64), minlength=bits + 1)],
    }
    if bits <= 16:
        codes = arr.astype(np.int64) @ (1 << np.arange(bits, dtype=np.int64))
        d["vector_histogram"] = [int(x) for x in np.bincount(codes, minlength=1 << bits)]
    return d


def _timed(func: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def _spark_session(master: str) -> tuple[Any, float]:
    from pyspark.sql import SparkSession

    start = time.perf_counter()
    session = (SparkSession.builder.master(master).appName("sufficientdp-bench")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "4g").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session, time.perf_counter() - start


def _check(name: str, tally: Tally, truth: dict[str, Any]) -> None:
    if tally.to_dict(include_vector_histogram=True) != truth:
        raise AssertionError(f"{name} disagrees with the baseline on the benchmark file")


def main() -> str:
    """Run the benchmark and return a markdown section headed ``## Aggregation engines``."""
    warnings.simplefilter("ignore", FutureWarning)  # pyspark's note about pandas 3
    try:
        import pyspark
    except ImportError:
        pyspark = None
    tmp = Path(tempfile.mkdtemp(prefix="sdp-bench-engines-"))
    rows: list[tuple[int, str, float]] = []  # (bits, engine, seconds)
    sizes: dict[int, float] = {}
    truths: dict[int, dict[str, Any]] = {}
    notes: list[str] = []
    try:
        for bits in BITS:
            path = tmp / f"reports{bits}.parquet"
            t_write, _ = _timed(lambda: _write_file(path, N_REPORTS, bits))
            sizes[bits] = path.stat().st_size
            print(f"L={bits}: wrote {sizes[bits] / 1e6:.0f} MB in {t_write:.1f} s", file=sys.stderr)
            t_base, truth = _timed(lambda: _baseline(path))
            truths[bits] = truth
            rows.append((bits, "baseline: `pandas.read_parquet` + numpy sums/`bincount`", t_base))
            for engine in ("numpy", "duckdb"):
                seconds, (tally, _) = _timed(lambda: tally_file(path, engine=engine))
                _check(engine, tally, truth)
                rows.append((bits, f"`engine=\"{engine}\"`", seconds))
                print(f"L={bits}: {engine} {seconds:.1f} s", file=sys.stderr)
        if pyspark is None:
            notes.append("Spark was not measured: pyspark is not installed (`pip install 'sufficientdp[spark]'`).")
        elif shutil.which("java") is None:
            notes.append("Spark was not measured: no Java runtime on this machine.")
        else:
            for master in dict.fromkeys(m for m, _ in SPARK_RUNS):
                session, t_start = _spark_session(master)
                notes.append(f"SparkSession start-up with `{master}`: {t_start:.1f} s (not included in the table).")
                try:
                    for bits in (b for m, b in SPARK_RUNS if m == master):
                        path = tmp / f"reports{bits}.parquet"
                        seconds, (tally, _) = _timed(lambda: tally_file(path, engine="spark"))
                        _check(f"spark {master}", tally, truths[bits])
                        rows.append((bits, f"`engine=\"spark\"`, `{master}`", seconds))
                        print(f"L={bits}: spark {master} {seconds:.1f} s", file=sys.stderr)
                finally:
                    session.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    header = (
        f"Each engine tallies the same Parquet file of N = {N_REPORTS:,} random reports end to end (read, "
        "validate every value is 0/1, count bit counts, weight histogram, and at L = 16 the full 2^16 "
        "histogram); one run each, all results checked equal to the baseline's. Machine: "
        f"{cpu_model()}, nproc = {os.cpu_count()} (so `local[2]` is all the cores there are), "
        f"Python {platform.python_version()}, numpy {np.__version__}"
        + (f", pyspark {pyspark.__version__}" if pyspark is not None else "") + ". File sizes: "
        + ", ".join(f"L = {b}: {s / 1e6:.0f} MB" for b, s in sizes.items()) + "."
    )
    lines = ["## Aggregation engines", "", header, "",
             "| L | engine | time (s) | reports/s | vs baseline |", "|---:|---|---:|---:|---:|"]
    base = {b: s for b, name, s in rows if name.startswith("baseline")}
    for bits, name, seconds in rows:
        lines.append(f"| {bits} | {name} | {seconds:.2f} | {N_REPORTS / seconds:.3g} | "
                     f"{base[bits] / seconds:.2f}x |")
    spark = {(b, "2" in name.split("local[")[1][:1]): s for b, name, s in rows if "local[" in name}
    if spark:
        scaling = ", ".join(f"L = {b}: {spark[(b, False)] / spark[(b, True)]:.2f}x"
                            for b in BITS if (b, False) in spark and (b, True) in spark)
        notes.append(f"Spark speed-up from `local[1]` to `local[2]` (2 cores): {scaling}.")
    lines += [""] + [f"- {note}" for note in notes]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
