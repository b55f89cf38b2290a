"""``sufficientdp report design`` (the design report of a calibration) and ``sufficientdp report release`` (a
collector release's estimates): each one self-contained HTML page (docs/reports.md).
An adapter over :mod:`sufficientdp.report`: parsing, the progress bar and printing only.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any

from ._common import Parser, calibration_options, emit, real


class _DelayedBar:
    """A ``progress(done, total)`` callback whose tqdm bar (stderr) appears only once the work passes 2 s."""

    def __init__(self, enabled: bool, desc: str) -> None:
        self.enabled = enabled
        self.desc = desc
        self.bar: Any = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            try:
                from tqdm import tqdm
            except ImportError:
                self.enabled = False
                return
            self.bar = tqdm(total=total, desc=self.desc, unit="steps", file=sys.stderr, leave=False, delay=2.0)
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _command_line(args: argparse.Namespace) -> str:
    """The canonical command that reproduces this report (every option that differs from its default)."""
    words = ["sufficientdp", "report", "design", "--bits", str(args.bits), "--population", str(args.population),
             "--epsilon", repr(args.epsilon)]
    optional = (("--beta", args.beta, 3.0), ("--max-weight", args.max_weight, None),
                ("--reports", args.reports, 1), ("--method", args.method, "proven"), ("--eta", args.eta, None),
                ("--samples", args.samples, None), ("--seed", args.seed, None), ("--rounds", args.rounds, 1))
    for flag, value, default in optional:
        if value != default:
            words += [flag, repr(value) if isinstance(value, float) else str(value)]
    if args.one_hot:
        words.append("--one-hot")
    words += ["--output", args.output]
    return shlex.join(words)


def _cmd_design(args: argparse.Namespace) -> int:
    try:
        import jinja2  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"report design needs the 'report' extra (pip install 'sufficientdp[report]'): {exc}") \
            from None
    from ..report.design import design_report, write_html

    started = time.perf_counter()
    bar = _DelayedBar(not (args.json or args.quiet), f"report design ({args.method})")
    try:
        rep = design_report(bits=args.bits, population=args.population, epsilon=args.epsilon, beta=args.beta,
                            max_weight=args.max_weight, one_hot=args.one_hot, reports=args.reports,
                            method=args.method, eta=args.eta, samples=args.samples, seed=args.seed,
                            rounds=args.rounds, command=_command_line(args), progress=bar)
    finally:
        bar.close()
    path = write_html(args.output, rep.html)
    if args.json:
        emit(rep.numbers)
        return 0
    chosen = next(r for r in rep.numbers["methods"] if r.get("chosen"))
    print(f"wrote {path} ({len(rep.html) // 1024} KiB, {len(rep.figures)} figures, "
          f"{time.perf_counter() - started:.1f} s): q = {chosen['q']:.6g} ({chosen['method']}, {chosen['scope']}, "
          f"{chosen['kind']})")
    return 0


def _cmd_release(args: argparse.Namespace) -> int:
    try:
        import jinja2  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"report release needs the 'report' extra (pip install 'sufficientdp[report]'): {exc}") \
            from None
    from ..report.design import write_html
    from ..report.release import release_command, release_report

    command = release_command(database=args.database, campaign=args.campaign, release=args.release,
                              engine=args.engine, confidence_level=args.level, output=args.output, joint=args.joint)
    rep = release_report(database=args.database, campaign=args.campaign, release=args.release, engine=args.engine,
                         confidence_level=args.level, command=command, joint=args.joint)
    path = write_html(args.output, rep.html)
    if args.json:
        emit(rep.numbers)
        return 0
    est = rep.numbers["estimates"]
    print(f"wrote {path} ({len(rep.html) // 1024} KiB): {est['reports']} reports, {len(est['estimates'])} bits, "
          f"campaign {args.campaign}" + (f", release {args.release}" if args.release else ", all releases"))
    return 0


def _bit_list(text: str) -> tuple[int, ...]:
    """``--joint 0,3,5`` -> (0, 3, 5); the range against L is checked by the estimator."""
    try:
        bits = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--joint must be comma-separated bit indices like 0,3; got {text!r:.40}")
    if not 1 <= len(bits) <= 6 or min(bits) < 0:
        raise argparse.ArgumentTypeError(f"--joint must list 1 to 6 bit indices >= 0; got {text!r:.40}")
    return bits


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``report`` command and its ``design`` subcommand."""

    p = sub.add_parser("report", help="reports people can read: the design report of a calibration (HTML)")
    rsub = p.add_subparsers(dest="report", required=True, parser_class=Parser)
    d = rsub.add_parser("design", help="one self-contained HTML page: the decision, accuracy, privacy loss, "
                                       "comparison, attacker, k trade-off, caveats and the numbers as JSON")
    calibration_options(
        d, beta_help="multiple of sd for paper-sigma (default 3)",
        max_weight_help="every person's vector has at most w set bits",
        method_help="the chosen calibration method (default proven); proven, homogeneous, local and paper-sigma "
                    "are always shown beside it",
        eta_help="target P[R > e^epsilon] (default 0.001)",
        rounds_help="T rounds released separately (proven or local; other methods are listed as not available)")
    d.add_argument("--output", default="report.html", help="the HTML file (written atomically; default "
                                                           "report.html)")
    common(d)
    d.set_defaults(func=_cmd_design)

    r = rsub.add_parser("release", help="one self-contained HTML page: a collector release's per-bit estimates "
                                        "with intervals, the most frequent vectors, the campaign's guarantee")
    r.add_argument("--database", required=True,
                   help="collector database (sqlite:///path.db, a file path, or postgresql://); read only")
    r.add_argument("--campaign", required=True, help="campaign id")
    r.add_argument("--release", default=None, help="one release id (default: all releases of the campaign)")
    r.add_argument("--engine", choices=("numpy", "duckdb"), default="numpy", help="tally engine (default numpy)")
    r.add_argument("--confidence-level", "--level", dest="level", type=real("confidence-level"), default=0.95,
                   help="confidence level of the intervals, in (0, 1) (--level: its former name)")
    r.add_argument("--joint", type=_bit_list, default=None,
                   help="comma-separated bit indices (1 to 6, L <= 12): also show their joint frequencies")
    r.add_argument("--output", default="release.html", help="the HTML file (written atomically; default "
                                                            "release.html)")
    common(r)
    r.set_defaults(func=_cmd_release)
