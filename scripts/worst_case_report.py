"""Regenerate the tables of ``docs/worst_case.md``: exhaustive check of seed 001's worst-case conjecture (§1.2).

The tables are made by :mod:`sufficientdp.report.worst_case`; this script is its command line. The generated part
of the document sits between the ``<!-- BEGIN GENERATED -->`` and ``<!-- END GENERATED -->`` markers; the
hand-written text around it is kept. Run time: about a minute.

Usage::

    python scripts/worst_case_report.py --output docs/worst_case.md
    python scripts/worst_case_report.py            # print the generated tables to stdout
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from _generated_block import splice

from sufficientdp.report.worst_case import BEGIN, END, generate


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, help="document to update (between the GENERATED markers)")
    args = parser.parse_args(argv)
    generated = generate()
    if args.output is None:
        print(generated)
        return 0
    splice(args.output, BEGIN, END, generated, "Worst case of the privacy ratio: checking seed 001's conjecture")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
