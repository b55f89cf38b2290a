"""Seed 001's figures regenerated with sufficientdp.plot, corrected where the paper is wrong (issue 12; `make figures`).

The figures and their README.md are made by :mod:`sufficientdp.report.paper_figures`; this script is its command
line.

Usage: python scripts/make_figures.py [--output docs/figures] [--samples 400000] [--quick]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from sufficientdp.report.paper_figures import log, write_all


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", default="docs/figures", help="folder for the PNG/SVG files and README.md")
    ap.add_argument("--samples", type=int, default=400_000, help="draws of R(S) per curve (default 400,000)")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run; not for docs/figures)")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    for p in write_all(Path(args.output), samples=args.samples, quick=args.quick):
        print(p)
    log(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
