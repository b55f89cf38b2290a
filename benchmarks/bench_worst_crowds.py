"""Worst case of shuffled binary RR over every neighbouring pair: before vs after issue 10, same run.

``old``: the scan as it was before issue 10 (``tests/oracles/worst_crowds.py``, a verbatim copy: every pair by the
tilted contour rule, OpenBLAS threads as the environment sets them); ``new``: :func:`worst_over_crowds` (products on
one OpenBLAS thread, blocks of m proved below the worst skipped). Both give the same outputs (checked here, and bit
for bit in ``tests/ratio/test_worst_crowds_oracle.py``). One run each (CPU seconds, wall in brackets), ratio =
old CPU / new CPU. Usage: ``.venv/bin/python benchmarks/bench_worst_crowds.py`` (about a minute).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root: tests.oracles

from tests.oracles.worst_crowds import _Pairs as OldPairs  # noqa: E402
from tests.oracles.worst_crowds import _remove_pairs as old_remove_pairs  # noqa: E402

from sufficientdp.ratio.single_bit import _Pairs, _worst_result, worst_over_crowds  # noqa: E402

CASES = ((100_000, 0.25, 0.01), (1_000_000, 0.25, 0.01), (1_000_000, 0.25, 0.1), (1_000_000, 0.25, 0.5))


def _timed(func: Callable[[], Any]) -> tuple[Any, float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    out = func()
    return out, time.process_time() - c0, time.perf_counter() - w0


def main() -> str:
    lines = ["| n | q | epsilon | old CPU s [wall] | new CPU s [wall] | ratio | pairs evaluated (new) | same outputs |",
             "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for n, q, eps in CASES:
        old_pairs, c_old, w_old = _timed(lambda: old_remove_pairs(n, q, eps, np.arange(n)))
        old = _worst_result(n, q, eps, _Pairs(**{f: getattr(old_pairs, f) for f in OldPairs.__dataclass_fields__}))
        new, c_new, w_new = _timed(lambda: worst_over_crowds(n, q, eps))
        a, b = old.to_dict(), new.to_dict()
        a.pop("details")
        d = b.pop("details")
        lines.append(f"| {n:,} | {q} | {eps} | {c_old:.2f} [{w_old:.2f}] | {c_new:.2f} [{w_new:.2f}] | "
                     f"{c_old / c_new:.1f} | {d['pairs_evaluated']:,} | {'yes' if a == b else 'NO'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
