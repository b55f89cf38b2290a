"""Regenerate the structured worst-case tables of ``docs/worst_case.md`` (issue 9; ERRATA 5).

The tables are made by :mod:`sufficientdp.report.structured_worst_case`; this script is its command line. The
generated part sits between ``<!-- BEGIN STRUCTURED -->`` and ``<!-- END STRUCTURED -->``; the rest of the document
(and the tables of ``scripts/worst_case_report.py``) is kept. A found eta above the proven bound (a bug in one of
them) is reported and the exit code is 1. Run time: about 15 minutes.

Usage::

    python scripts/structured_worst_case_report.py --output docs/worst_case.md
    python scripts/structured_worst_case_report.py            # print the tables to stdout
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from _generated_block import splice

from sufficientdp.report.structured_worst_case import BEGIN, END, generate


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, help="document to update (between the STRUCTURED markers)")
    args = parser.parse_args(argv)
    generated, ok = generate()
    if not ok:
        print("a found eta exceeds the proven all-collections bound: a bug in one of them", file=sys.stderr)
    if args.output is None:
        print(generated)
        return 0 if ok else 1
    splice(args.output, BEGIN, END, generated)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
