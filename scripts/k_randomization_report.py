"""k-randomization done right: the paper's (6.3) against the correct ratio R(S^k) (ERRATA 4).

Writes ``docs/k_randomization.md``, made by :mod:`sufficientdp.report.k_randomization` (this script is its command
line). Run time about one to two minutes. Every eta here is a seeded Monte Carlo estimate with a 95%
Clopper-Pearson interval (``kind="estimate"``); every calibrated q is an estimate.

Usage: ``python scripts/k_randomization_report.py [--out docs/k_randomization.md] [--quick]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sufficientdp.report.k_randomization import build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "k_randomization.md"))
    ap.add_argument("--quick", action="store_true", help="fewer samples (smoke run)")
    args = ap.parse_args()
    text = build(quick=args.quick)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
