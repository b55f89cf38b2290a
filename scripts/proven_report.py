"""Regenerate ``docs/proven_bound.md``: how much noise the all-collections bound (``method="proven"``) costs.

The document is computed and laid out by :mod:`sufficientdp.report.proven_bound` (the best-e' bound and the
bisection are :mod:`sufficientdp.calibration.proven_grid`); this script is its command line. Every computation is
timed and reported on stderr; in part 2 a computation that uses more than ``--budget`` CPU seconds (default 180;
the bisection gets six times that) is stopped and listed as skipped.

Run time, measured on the shared two-core development machine: the full grid 36 s (2026-11-28; it took 40 min
before the speed work of issue 10, 18.5 min on 2026-11-27); ``--quick`` (a small grid, for checking the script)
a few seconds. The bound evaluates two pair types at a time on two threads, so CPU time can exceed wall-clock
time.

Usage::

    python scripts/proven_report.py --output docs/proven_bound.md --save proven_results.json
    python scripts/proven_report.py --render proven_results.json --output docs/proven_bound.md  # no computing
    python scripts/proven_report.py --quick            # small grid, printed to stdout
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from sufficientdp.report import proven_bound as pb


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, help="write the document here (default: stdout)")
    parser.add_argument("--quick", action="store_true", help="a small grid (L = 5, N = 1000; two reduced domains "
                        "at N = 1e4), for checking the script")
    parser.add_argument("--budget", type=float, default=pb.DEFAULT_BUDGET,
                        help="CPU seconds per calibration in part 2 before it is skipped (default %(default)s; "
                        "0 = no limit)")
    parser.add_argument("--paper-budget", type=float, default=0.0,
                        help="the same for part 1 (default 0 = no limit)")
    parser.add_argument("--save", type=Path, help="also write the raw results here (JSON)")
    parser.add_argument("--render", type=Path, metavar="RESULTS",
                        help="compute nothing: render the document from results saved with --save")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "scripts/proven_report.py", *(sys.argv[1:] if argv is None else argv)])
    if args.render is not None:
        doc, suspicious = pb.render(pb.results_from_json(args.render.read_text(encoding="utf-8")),
                                    rendered_by=command)
    else:
        state = pb.compute(paper=pb.QUICK_PAPER if args.quick else pb.PAPER,
                           card_domains=pb.QUICK_CARD_DOMAINS if args.quick else pb.CARD_DOMAINS,
                           card_ns=pb.QUICK_CARD_N if args.quick else pb.CARD_N, budget=args.budget or None,
                           paper_budget=args.paper_budget or None, command=command, quick=args.quick,
                           repo=Path(__file__).resolve().parents[1])
        if args.save is not None:
            args.save.write_text(pb.results_to_json(state), encoding="utf-8")
            pb.log(f"wrote {args.save}")
        doc, suspicious = pb.render(state)
    for s in suspicious:
        pb.log(f"SUSPICIOUS: {s}")
    if args.output is None:
        print(doc)
    else:
        args.output.write_text(doc, encoding="utf-8")
        pb.log(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
