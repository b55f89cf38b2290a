"""Regenerate the module index of ``docs/design.md`` (:mod:`sufficientdp.report.module_index`).

Usage::

    python scripts/module_index.py --output docs/design.md
    python scripts/module_index.py            # print the index
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from _generated_block import splice

from sufficientdp.report.module_index import BEGIN, END, generate


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, help="document to update (between the MODULE INDEX markers)")
    args = parser.parse_args(argv)
    if args.output is None:
        print(generate())
        return 0
    splice(args.output, BEGIN, END, generate())
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
