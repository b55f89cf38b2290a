"""``sufficientdp compare``: the flip probability and per-bit error each privacy approach needs (docs/comparison.md).

An adapter over :func:`sufficientdp.calibration.compare.compare_approaches`: parsing and printing only.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ._common import emit, positive_int, real, step_progress


def _fmt(x: float | None, spec: str) -> str:
    if x is None:
        width = int(spec.split(".")[0]) if spec[0].isdigit() else 1
        return "-".rjust(width)
    return format(x, spec)


def _cmd(args: argparse.Namespace) -> int:
    from ..calibration.compare import compare_approaches

    bar = step_progress(not (args.json or args.quiet), "compare (sufficient-DP searches)")
    try:
        c = compare_approaches(bits=args.bits, population=args.population, epsilon=args.epsilon, delta=args.delta,
                               eta=args.eta, reports=args.reports, beta=args.beta,
                               sufficient=not args.no_sufficient,
                               exact_max_population=args.exact_max_population, progress=bar)
    finally:
        bar.close()
    if args.json:
        emit(c.to_dict())
        return 0
    print(f"L = {c.bits} bits, N = {c.population} people, k = {c.reports} report(s), epsilon = {c.epsilon:g}, "
          f"delta = {c.delta:g} (approximate DP), eta = {c.eta:g} (sufficient DP)")
    print(f"{'approach':<26} {'q':>10} {'sd(d_hat)':>12} {'sd/sqrt(N)':>11} {'eps0':>9}  {'holds for':<16} kind")
    for r in c.rows:
        kind = r.kind if r.verified else f"{r.kind} (unverified)"
        print(f"{r.approach:<26} {_fmt(r.q, '10.6f')} {_fmt(r.sd, '12.4g')} {_fmt(r.sd_per_sqrt_n, '11.4f')} "
              f"{_fmt(r.epsilon0, '9.4g')}  {r.scope:<16} {kind}")
    print()
    for r in c.rows:
        print(f"{r.approach}: {r.guarantee}")
        for note in r.notes:
            print(f"    - {note}")
    return 0


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``compare`` subcommand."""
    from ..calibration._calibrate import DEFAULT_ETA

    p = sub.add_parser("compare", help="noise (q) and error each approach needs: local DP, shuffling bounds, "
                                       "exact shuffled RR, sufficient DP")
    p.add_argument("--bits", type=positive_int("bits"), required=True, help="L, bits per report")
    p.add_argument("--population", type=positive_int("population"), required=True, help="N, people")
    p.add_argument("--epsilon", type=real("epsilon"), required=True, help="target epsilon")
    p.add_argument("--delta", type=real("delta"), required=True, help="target delta of approximate DP")
    p.add_argument("--eta", type=real("eta"), default=DEFAULT_ETA,
                   help=f"target P[R > e^epsilon] of sufficient DP (default {DEFAULT_ETA:g})")
    p.add_argument("--reports", type=positive_int("reports"), default=1, help="k, reports per person")
    p.add_argument("--beta", type=real("beta"), default=3.0, help="the paper's multiple of sd (default 3)")
    p.add_argument("--no-sufficient", action="store_true",
                   help="skip the rows of the product's own bounds (slow for large L): sufficient-DP proven and "
                        "homogeneous, approximate-dp-proven")
    p.add_argument("--exact-max-population", type=positive_int("exact-max-population"), default=400,
                   help="largest N for the exact shuffled-RR row (L = 1; default 400)")
    common(p)
    p.set_defaults(func=_cmd)
