"""Check the single-bit claims of seed 000 (§3.1.2, §3.1.4, §3.1.5, Prop. 3.2, §4) on a grid; write docs/single_bit.md.

Usage: ``python scripts/single_bit_report.py [--out docs/single_bit.md]`` (about half a minute).

The checks are :mod:`sufficientdp.ratio.single_bit_checks` (exact log-domain pmfs from
:mod:`sufficientdp.ratio.single_bit`, a relative tolerance of 1e-9 on the log scale, and an exact rational re-check
of the small-n part of the grid); the document is laid out by :mod:`sufficientdp.report.single_bit`; this script is
their command line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sufficientdp.report.single_bit import build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "single_bit.md"))
    args = ap.parse_args()
    text = build()
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
