"""Regenerate ``docs/reproduction.md``: every number in seed 001's tables and worked examples.

The document is built by :mod:`sufficientdp.report.reproduction` (statuses, tables, text); this script is its
command line.

Usage::

    python scripts/reproduce_001.py --output docs/reproduction.md   # full mode (make reproduce)
    python scripts/reproduce_001.py --quick                          # fewer samples, prints to stdout

The independent cross-check against mpmath needs ``mpmath`` (installed with the ``test`` extra); without it that
section says it was skipped.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from sufficientdp.report.reproduction import build, log, settings_for


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", metavar="PATH", help="write the markdown here (default: stdout)")
    ap.add_argument("--quick", action="store_true",
                    help="fewer Monte Carlo samples, exact tails only for N = 1000")
    ap.add_argument("--seed", type=int, default=1, help="seed of the Monte Carlo streams (default 1)")
    args = ap.parse_args(argv)
    if args.seed < 0:
        ap.error(f"--seed must be >= 0; got {args.seed}")
    t0 = time.perf_counter()
    text, disagreements = build(settings_for(quick=args.quick, seed=args.seed))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    log(f"done in {time.perf_counter() - t0:.1f} s")
    for d in disagreements:
        log(f"library vs mpmath disagreement: {d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
