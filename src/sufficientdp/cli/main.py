"""The ``sufficientdp`` command line (an adapter: parsing, files and printing only; the math is in the core).

Errors go to stderr as one line, ``sufficientdp: error: ...``, with exit code 2 and no traceback.
Every command takes ``--json`` and then prints exactly one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import pkgutil
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import __version__
from .._allocator import tune_allocator
from .._errors import ParameterError, SufficientDPError
from ..calibration.methods import METHODS
from ._common import (
    Parser,
    StepProgress,
    UsageError,
    calibration_options,
    emit,
    method_choice,
    positive_int,
    progress_bar,
    real,
    seed,
    step_progress,
)

if TYPE_CHECKING:
    from ..aggregation.tally import Tally

# The commands import the math they need when they run, so that start-up (and --help) stays fast.

CHUNK_ROWS = 1 << 18
_CORE_COMMANDS = ("calibrate", "randomize", "aggregate", "estimate", "tail", "worst-case", "demo")


def _extra_commands() -> list[str]:
    """Command modules ``cli/_cmd_*.py``, each with ``register(sub, common)`` (they import their extras lazily)."""
    here = [os.path.dirname(__file__)]
    return sorted(m.name for m in pkgutil.iter_modules(here) if m.name.startswith("_cmd_"))


def _chunks(n: int) -> Iterator[slice]:
    for start in range(0, n, CHUNK_ROWS):
        yield slice(start, min(n, start + CHUNK_ROWS))


# ---------------------------------------------------------------------------------------------------- calibrate
def _cmd_calibrate(args: argparse.Namespace) -> int:
    from ..calibration import calibrate

    if args.larger_crowds and args.method != "proven":
        raise ParameterError(f"--larger-crowds applies only to --method proven; got --method {args.method}")
    rng = np.random.default_rng(args.seed) if args.seed is not None else None
    bar = step_progress(not (args.json or args.quiet), f"calibrate ({args.method} search)")
    try:
        cal = calibrate(bits=args.bits, population=args.population, epsilon=args.epsilon, beta=args.beta,
                        max_weight=args.max_weight, reports=args.reports, method=args.method, eta=args.eta,
                        rng=rng, samples=args.samples, progress=bar, onehot=args.one_hot, rounds=args.rounds,
                        larger_crowds=args.larger_crowds)
    finally:
        bar.close()
    d = cal.to_dict()
    if args.json:
        emit(d)
        return 0
    print(f"flip probability q        {cal.q:.6g}   ({cal.method}; {cal.guarantee})")
    together = f", the {cal.rounds} rounds together" if cal.rounds > 1 else ""
    print(f"holds for                 {_SCOPE_TEXT[cal.scope]}{together} ({cal.kind})")
    print(f"bits L (effective)        {cal.bits} ({cal.effective_bits})")
    print(f"population N              {cal.population}")
    print(f"reports per person k      {cal.reports}")
    if cal.rounds > 1:
        print(f"rounds T                  {cal.rounds} (q per round; epsilon and eta are totals over the T rounds)")
    print(f"epsilon (lambda)          {cal.epsilon:g} ({cal.lam:.6g})")
    print(f"sd(d_hat)/sqrt(N)         {cal.sigma_per_sqrt_n:.4g}")
    print(f"local DP q, sd/sqrt(N)    {cal.local_q:.6g}, {cal.local_sigma_per_sqrt_n:.4g}")
    print(f"gain vs local DP          {cal.gain_vs_local:.2f}x smaller standard error")
    if cal.eta_target is not None:
        at_q = "-" if cal.eta_at_q is None else f"{cal.eta_at_q:.3g}"
        print(f"target eta                {cal.eta_target:g}; at q: {at_q}")
    for note in cal.notes:
        print(f"note: {note}")
    return 0


# ---------------------------------------------------------------------------------------------------- randomize
def _refuse_output_over_input(input_path: str, output_path: str | None) -> None:
    """An output that is the input (same path, or another name for the same file) would destroy the data."""
    if output_path is None:
        return
    same = os.path.abspath(input_path) == os.path.abspath(output_path)
    if not same and os.path.exists(output_path) and os.path.exists(input_path):
        same = os.path.samefile(input_path, output_path)
    if same:
        raise UsageError(f"--output {output_path!r} is the input file; choose another output (the input would be "
                          "replaced)")


def _check_output_format(output_path: str | None) -> None:
    """An --output that names no table format ('' or no .csv/.parquet/.pq) is refused before any work."""
    if output_path is None:
        return
    from ..io import detect_format

    try:
        detect_format(output_path)
    except ParameterError as exc:
        raise UsageError(f"--output: {exc}") from None


def _cmd_randomize(args: argparse.Namespace) -> int:
    from ..io import read_reports, write_reports
    from ..parameters import RandomizationParams
    from ..randomization._packing import pack_bits, unpack_bits
    from ..randomization._sources import as_source
    from ..randomization.randomizer import Randomizer, check_domain

    _refuse_output_over_input(args.input, args.output)
    _check_output_format(args.output)
    data, names = read_reports(args.input)
    params = RandomizationParams(bits=data.shape[1], q=args.q, reports=args.reports)
    # A guarantee calibrated for a domain (--max-weight / --one-hot) covers only vectors in it: refuse the file
    # before anything is written.
    check_domain(data, max_weight=args.max_weight, onehot=args.one_hot)
    rng = np.random.default_rng(args.seed) if args.seed is not None else None
    source = as_source(rng)
    randomizer = Randomizer(params, rng=source)
    bar = progress_bar(data.shape[0], not (args.json or args.quiet), "randomize")
    parts = []
    for sl in _chunks(data.shape[0]):
        parts.append(randomizer.randomize_packed(pack_bits(data[sl])))
        bar.update(sl.stop - sl.start)
    bar.close()
    words = np.concatenate(parts) if parts else np.zeros((0, (data.shape[1] + 63) // 64), dtype=np.uint64)
    # Shuffle rows so the file's order links no report to an input row or to its sibling reports.
    if words.shape[0] > 1:
        perm = _uniform_permutation(words.shape[0], source)
        words = words[perm]
    out = unpack_bits(words, data.shape[1])
    # The file says how it was made, so `estimate` needs no --q/--reports (and cannot be given wrong ones).
    write_reports(args.output, out, names,
                  metadata={"q": params.effective_q, "reports": params.reports, "bits": params.bits})
    summary = {"input_rows": int(data.shape[0]), "reports": int(out.shape[0]), "bits": int(data.shape[1]),
               "q": params.q, "effective_q": params.effective_q, "reports_per_person": params.reports,
               "randomness": source.name, "output": str(args.output)}
    if args.json:
        emit(summary)
    else:
        print(f"wrote {out.shape[0]} randomized reports ({data.shape[0]} people x {params.reports}) to "
              f"{args.output}; q = {params.effective_q:.10g} exactly (dyadic), randomness: {source.name}")
    return 0


def _uniform_permutation(n: int, source: Any) -> np.ndarray:
    """Fisher–Yates-equivalent permutation: sort by 128 random bits per item (ties have probability < n^2/2^128)."""
    hi = source.random_words(n)
    lo = source.random_words(n)
    return np.lexsort((lo, hi))


# ---------------------------------------------------------------------------------------------------- aggregate
def _tally_file(path: str, quiet: bool, full_histogram: bool | None = None,
                engine: str = "numpy", spark_master: str = "local[*]") -> tuple[Tally, list[str]]:
    from ..engines import tally_file

    bar = step_progress(not quiet, "aggregate", "rows")
    try:
        return tally_file(path, engine=engine, full_histogram=full_histogram, progress=bar,
                          spark_master=spark_master)
    finally:
        bar.close()


def _cmd_aggregate(args: argparse.Namespace) -> int:
    if (args.input is None) == (args.database is None):
        raise UsageError("aggregate: give exactly one of --input FILE and --database URL")
    source: dict[str, Any] = {}
    if args.database is None:
        if args.campaign is not None or args.release is not None:
            raise UsageError("aggregate: --campaign and --release go with --database, not --input")
        t, names = _tally_file(args.input, args.json or args.quiet, engine=args.engine,
                               spark_master=args.spark_master)
    else:
        from ..engines import COLLECTOR_ENGINES, tally_collector

        if args.campaign is None:
            raise UsageError("aggregate: --database needs --campaign ID")
        if args.engine not in COLLECTOR_ENGINES:
            raise UsageError(f"aggregate: --database works with --engine {' or '.join(COLLECTOR_ENGINES)}; "
                              f"got {args.engine}")
        # Only released reports are counted (every release of the campaign, or --release), never pending ones.
        t = tally_collector(args.database, args.campaign, release_id=args.release, engine=args.engine)
        names = [f"bit{j}" for j in range(t.bits)]
        source = {"campaign": args.campaign, "release": args.release}
    d = t.to_dict(include_vector_histogram=args.histogram)
    d["columns"] = names
    d.update(source)
    if args.json:
        emit(d)
        return 0
    head = f"{t.reports} reports, {t.bits} bits"
    if source:
        head += f" (campaign {args.campaign}, " + (f"release {args.release})" if args.release else "all releases)")
    print(head)
    width = max(len(n) for n in names)
    for name, c in zip(names, t.bit_counts):
        print(f"  {name:<{width}}  {int(c)}")
    print("set-bit histogram: " + " ".join(str(int(x)) for x in t.weight_histogram))
    return 0


# ---------------------------------------------------------------------------------------------------- estimate
#: What ``estimate`` says when a file without metadata is estimated without --reports (k = 1 is then assumed).
_DEFAULT_K_WARNING = ("k = 1 report per person is a default (the file carries no metadata and --reports was not "
                      "given); if each person sent k > 1 reports, N is overstated k times: give --reports k")


def _estimate_settings(args: argparse.Namespace, meta: dict[str, Any] | None) -> tuple[float, int, str, str]:
    """(q, k, where they came from, where k came from): the file's metadata, checked against --q/--reports when
    both are given; without metadata, --q is required and k is --reports, else the default 1 (said so)."""
    from ..parameters import RandomizationParams

    if meta is None:
        if args.q is None:
            raise UsageError("estimate: the file carries no metadata (q, reports); give --q (and --reports if each "
                              "person sent more than one report)")
        reports = 1 if args.reports is None else args.reports
        RandomizationParams(bits=1, q=args.q, reports=reports)
        return (args.q, reports, "command line (the file carries no metadata)",
                "default" if args.reports is None else "command line")
    if args.q is not None:
        given = RandomizationParams(bits=1, q=args.q).effective_q
        if given != meta["q"]:
            raise UsageError(f"estimate: --q {args.q!r} (runs as {given!r}) but the file was randomized with "
                              f"q = {meta['q']!r} (its metadata); drop --q or use the file's value")
    if args.reports is not None and args.reports != meta["reports"]:
        raise UsageError(f"estimate: --reports {args.reports} but the file holds {meta['reports']} reports per "
                          "person (its metadata); drop --reports or use the file's value")
    return meta["q"], meta["reports"], "file metadata", "file metadata"


def _cmd_estimate(args: argparse.Namespace) -> int:
    from ..estimation.bits import estimate_bits
    from ..estimation.joint import MAX_BOOTSTRAP, joint_frequencies
    from ..io import read_metadata
    from ..parameters import RandomizationParams

    # Validate the output, q and the file's metadata before reading a possibly large file.
    _refuse_output_over_input(args.input, args.output)
    _check_output_format(args.output)
    meta = read_metadata(args.input)
    q, reports, source, reports_from = _estimate_settings(args, meta)
    if args.joint and args.top < 1:
        raise SufficientDPError(f"top must be an integer >= 1; got {args.top}")
    if args.bootstrap is not None and args.joint != "em":
        raise SufficientDPError("--bootstrap needs --joint em (the inverse estimate has closed-form intervals)")
    if args.bootstrap is not None and args.bootstrap > MAX_BOOTSTRAP:
        raise SufficientDPError(f"bootstrap must be an integer in [1, {MAX_BOOTSTRAP}]; got {args.bootstrap}")
    t, names = _tally_file(args.input, args.json or args.quiet, full_histogram=bool(args.joint) or None)
    if meta is not None and meta["bits"] != t.bits:
        raise SufficientDPError(f"the file has {t.bits} bits but its metadata says bits={meta['bits']}")
    params = RandomizationParams(bits=t.bits, q=q, reports=reports)
    est = estimate_bits(t, q=params.effective_q, reports=params.reports, confidence_level=args.level,
                        std_error=args.std_error)
    d = est.to_dict()
    d["settings_from"] = source
    d["reports_from"] = reports_from  # "file metadata", "command line" or "default" (k = 1 assumed)
    if reports_from == "default":
        d["warnings"] = [*d["warnings"], _DEFAULT_K_WARNING]
    for rec, name in zip(d["estimates"], names):
        rec["column"] = name
    joint = None
    if args.joint:
        assert t.vector_histogram is not None
        kwargs: dict[str, Any] = {}
        bars: list[StepProgress] = []
        if args.joint == "em":
            state = {"total": -1, "done": -1}

            def progress(done: int, total: int) -> None:  # a new bar per phase: the fit, then the bootstrap
                if total != state["total"] or done < state["done"]:
                    if bars:
                        bars[-1].close()
                    phase = "joint EM fit (iterations; stops when converged)" if not bars else "bootstrap"
                    bars.append(step_progress(not (args.json or args.quiet), phase,
                                               "replicates" if bars else "iterations"))
                state["total"], state["done"] = total, done
                bars[-1](done, total)

            kwargs = {"progress": progress, "bootstrap": args.bootstrap or 0, "max_iter": args.max_iter,
                      "rng": np.random.default_rng(args.seed)}
        try:
            joint = joint_frequencies(t.vector_histogram, q=params.effective_q, reports=params.reports,
                                      method=args.joint, confidence_level=args.level, **kwargs)
        finally:
            for bar in bars:
                bar.close()
        top = []
        for index, _ in joint.top(args.top):
            top.append({"vector": joint.label(index), "estimate": float(joint.estimate[index]),
                        "lower": _finite_or_none(joint.lower[index]), "upper": _finite_or_none(joint.upper[index]),
                        "std_error": _finite_or_none(joint.std_error[index])})
        summary = {k: v for k, v in joint.to_dict().items() if k not in ("estimate", "lower", "upper", "std_error")}
        d["joint"] = {**summary, "top": top}
        if joint.converged is False:
            d["joint"]["warning"] = "the joint EM fit did NOT converge (raise --max-iter); see status"
    if args.output is not None:
        from ..io import write_table

        recs = d["estimates"]
        write_table(args.output, {k: [r[k] for r in recs] for k in
                                  ("column", "count", "estimate", "lower", "upper", "std_error")})
    if args.json:
        emit(d)
        return 0
    if joint is not None:
        if joint.method == "em":
            if not joint.converged:
                print("WARNING: the joint EM fit did NOT converge; the vectors below are not the maximum-likelihood "
                      "estimate (raise --max-iter)")
            print(f"joint EM: {joint.status}")
            if joint.interval == "none":
                print("no intervals for the EM estimate (add --bootstrap B for parametric-bootstrap intervals)")
            else:
                print(f"{100 * joint.confidence_level:g}% intervals: parametric bootstrap, {joint.bootstrap} replicates "
                      "(union of percentile and basic intervals; seed "
                      f"{'none' if args.seed is None else args.seed})")
        print(f"most frequent vectors (bit 0 first; {args.joint}):")
        for r in d["joint"]["top"]:
            ci = "" if r["lower"] is None else f"  [{r['lower']:.1f}, {r['upper']:.1f}]"
            print(f"  {r['vector']}  {r['estimate']:12.1f}{ci}")
    k_text = f"{est.reports} (default)" if reports_from == "default" else f"{est.reports}"
    print(f"N = {est.population} people, k = {k_text}, q = {est.q:.10g} (from the {source}), "
          f"{100 * est.confidence_level:g}% intervals (std error: {est.std_error_method})")
    width = max(8, max(len(n) for n in names))
    print(f"  {'column':<{width}}  {'estimate':>12}  {'lower':>12}  {'upper':>12}  {'std_error':>10}")
    for r in d["estimates"]:
        print(f"  {r['column']:<{width}}  {r['estimate']:12.1f}  {r['lower']:12.1f}  {r['upper']:12.1f}  "
              f"{r['std_error']:10.1f}")
    for line in d["warnings"]:
        print(f"warning: {line}", file=sys.stderr)
    return 0


def _finite_or_none(x: float) -> float | None:
    return None if math.isnan(x) else float(x)  # +-inf is written "inf" by emit


# ---------------------------------------------------------------------------------------------------- tail
def _cmd_tail(args: argparse.Namespace) -> int:
    from ..ratio.proven import Domain, proven_tail  # (the other methods' module is loaded only for them)

    rng = np.random.default_rng(args.seed) if args.seed is not None else None
    bar = step_progress(not (args.json or args.quiet), f"tail ({args.method})")
    try:
        if args.method == "proven":
            for flag, value in (("--outlier-bits", args.outlier_bits), ("--samples", args.samples)):
                if value is not None:
                    raise ParameterError(f"{flag} does not apply to --method proven (it covers every pair)")
            if args.direction != "both":
                raise ParameterError("--direction does not apply to --method proven (it covers both directions)")
            if args.one_hot and args.max_weight is not None:
                raise ParameterError("--one-hot and --max-weight are exclusive")
            dom = (Domain(bits=args.bits, kind="onehot") if args.one_hot
                   else Domain.from_max_weight(args.bits, args.max_weight))
            res = proven_tail(q=args.q, bits=args.bits, population=args.population, epsilon=args.epsilon,
                              reports=args.reports, domain=dom, progress=bar, larger_crowds=args.larger_crowds)
        else:
            if args.one_hot or args.max_weight is not None:
                raise ParameterError("--one-hot and --max-weight apply only to --method proven")
            if args.larger_crowds:
                raise ParameterError(f"--larger-crowds applies only to --method proven; got --method {args.method}")
            from ..ratio.analysis import privacy_tail

            res = privacy_tail(q=args.q, bits=args.bits, population=args.population, epsilon=args.epsilon,
                               reports=args.reports, outlier_bits=args.outlier_bits,
                               method=args.method, direction=args.direction, rng=rng, samples=args.samples, progress=bar)
    finally:
        bar.close()
    d = res.to_dict()
    if args.json:
        emit(d)
        return 0
    kind_text = {"exact": "exact", "bound": "rigorous upper bound", "estimate": "Monte Carlo estimate"}[res.kind]
    lo = "-" if res.eta_lower is None else f"{res.eta_lower:.6g}"
    hi = "-" if res.eta_upper is None else f"{res.eta_upper:.6g}"
    print(f"eta = P[R > e^{res.epsilon:g}] = {res.eta:.6g}  ({kind_text}; method {res.method}); "
          f"interval [{lo}, {hi}]" + (f" at {100 * res.confidence_level:g}%" if res.confidence_level else ""))
    if res.delta is not None:
        print(f"delta(epsilon) = E[(1 - e^epsilon/R)+] = {res.delta:.6g}")
    crowds = res.details.get("crowds")
    print(f"holds for: {_SCOPE_TEXT[res.scope]}" + (f"; crowds: {crowds}" if crowds else ""))
    if res.method == "proven":
        print(f"configuration: L = {res.bits}, N = {res.population}, k = {res.reports}, q = {res.q:g}; "
              f"domain: {res.details.get('domain')}; worst pair type: "
              f"{res.details.get('worst_pair', res.details.get('argmax_m_eta'))}")
    else:
        print(f"configuration: L = {res.bits}, N = {res.population}, k = {res.reports}, q = {res.q:g}, "
              f"worst outlier weight j = {res.outlier_bits}, direction: {res.details.get('direction', '-')}")
    for note in res.details.get("notes", []):
        print(f"note: {note}")
    return 0


# ---------------------------------------------------------------------------------------------------- worst-case
def _cmd_worst_case(args: argparse.Namespace) -> int:
    from ..ratio.exact import histogram_count
    from ..ratio.structured import StructuredPair, combined_claims, structured_search
    from ..ratio.worst_case import worst_case_exhaustive, worst_case_search

    search = args.search
    if search == "auto":
        small = histogram_count(args.bits, args.population) <= 2_000 and args.bits <= 3
        search = "exhaustive" if small else "structured"
    if search == "exhaustive":
        res = worst_case_exhaustive(args.bits, args.population, args.q, args.epsilon)
        if args.json:
            emit(res.to_dict())
            return 0
        _print_worst_case(res)
        return 0
    heuristic = None
    extra: list[StructuredPair] = []
    if search == "heuristic":
        rng = np.random.default_rng(args.seed)
        heuristic = worst_case_search(args.bits, args.population, args.q, args.epsilon, rng=rng, budget=args.budget)
        extra = [StructuredPair.from_collections(r["original"], r["modified"], family="heuristic search")
                 for r in heuristic.ranking]
    bar = step_progress(not (args.json or args.quiet), "worst-case (structured search)", "pairs")
    try:
        sres = structured_search(args.bits, args.population, args.q, args.epsilon, max_group=args.max_group,
                                 max_copies=args.max_copies, time_budget=args.time_budget, extra_pairs=extra,
                                 progress=bar)
    finally:
        bar.close()
    claims = combined_claims(sres, heuristic)
    if args.json:
        d = sres.to_dict()
        if heuristic is not None:
            d = {**d, "structured_claims": {k: d[k] for k in ("conjecture_holds", "two_sided_holds")},
                 "heuristic": heuristic.to_dict(), "conjecture_holds": claims["conjecture_holds"],
                 "two_sided_holds": claims["two_sided_holds"], "eta_lower_bound": claims["eta_lower"],
                 "eta_lower_bound_source": claims["source"]}
        emit(d)
        return 0
    if heuristic is not None:
        _print_worst_case(heuristic)
        print()
    _print_structured(sres)
    if heuristic is not None:
        print(f"combined: worst-case eta >= {claims['eta_lower']:.6g} (from the {claims['source']} search); "
              f"two_sided_holds: {str(claims['two_sided_holds']).lower()}")
    return 0


def _print_worst_case(res: Any) -> None:
    print(f"{'exhaustive (a proof for this configuration)' if res.exhaustive else 'heuristic search'}: "
          f"{res.pairs_checked} neighbouring pairs checked")
    print(f"worst eta = {res.eta:.6g}, delta = {res.delta:.6g}")
    print(f"  original: {res.original}")
    print(f"  modified: {res.modified}")
    print(f"paper's configuration (worst over outlier weight j = {res.homogeneous_worst_weight}): "
          f"eta = {res.homogeneous_eta:.6g}; reverse direction: eta = {res.reverse_homogeneous_eta:.6g}")
    print("conjecture (seed 001 §1.2) " + ("holds" if res.conjecture_holds else "FAILS") + " here"
          + ("" if res.exhaustive else " among the pairs searched"))


def _print_structured(res: Any) -> None:
    skipped = "; ".join(f"{f.family}: {f.skipped} ({f.reason})" for f in res.families if f.skipped)
    print(f"structured search: {res.pairs_evaluated} of {res.pairs_total} candidate pairs evaluated "
          f"({res.pairs_pruned} proved below the best), {res.pairs_skipped} skipped"
          + (f" [{skipped}]" if skipped else "") + f"; {res.seconds:.1f} s")
    kind_text = ("exact worst case over every pair of collections" if res.exhaustive else
                 "lower bound on the worst case over every pair of collections (exact bracket of the pair found)")
    print(f"kind: {res.kind} ({kind_text})")
    print(f"worst pair found: {res.pair.label}  (family: {res.pair.family}; vectors bit 0 first, D' + x→x')")
    print(f"  eta = {res.eta:.6g}, exact bracket [{res.eta_lower:.6g}, {res.eta_upper:.6g}]")
    print(f"paper's configuration (worst over outlier weight j = {res.homogeneous_worst_weight}): "
          f"eta = {res.homogeneous_eta:.6g}; reverse direction: eta = {res.reverse_homogeneous_eta:.6g}")
    if res.ratio is not None:
        print(f"found / homogeneous worst (both directions) = {res.ratio:.4g}")
    if not res.two_sided_holds:
        verdict = ("FAILS, also against the reverse direction: the pair above is an exact counterexample, "
                   "so the homogeneous configuration is not the worst case")
    elif not res.conjecture_holds:
        verdict = "FAILS against the paper's direction (the reverse homogeneous pair is worse still)"
    elif res.exhaustive:
        verdict = "holds here (every pair was covered)"
    else:
        verdict = "holds among the pairs searched (not a proof: only structured pairs were tried)"
    print(f"conjecture (seed 001 §1.2): {verdict}")
    print(f"two_sided_holds: {str(res.two_sided_holds).lower()}")
    print(f"scope: {res.scope} (of the worst case bounded); searched: {res.searched}")


# ---------------------------------------------------------------------------------------------------- demo
def _cmd_demo(args: argparse.Namespace) -> int:
    if args.collector:
        return _cmd_demo_collector(args)
    from .._errors import ParameterError
    from ..demo import run_demo

    only = [flag for flag, value in (("--crowd-size", args.crowd_size), ("--q", args.q), ("--database", args.database),
                                     ("--report-dir", args.report_dir)) if value is not None]
    if only:
        raise ParameterError(f"{only[0]} applies only with --collector")
    population = 100_000 if args.population is None else args.population
    bits = 16 if args.bits is None else args.bits
    beta = 3.0 if args.beta is None else args.beta
    method = "proven" if args.method is None else args.method
    bar = step_progress(not (args.json or args.quiet), "calibrate (proven, then homogeneous to compare)"
                        if method == "proven" else f"calibrate ({method} search)")
    try:
        result = run_demo(population=population, bits=bits, epsilon=args.epsilon, beta=beta,
                          reports=args.reports, seed=args.seed, method=method, eta=args.eta, progress=bar)
    finally:
        bar.close()
    if args.json:
        emit(result.to_dict())
    else:
        print(result.render())
    return 0


def _cmd_demo_collector(args: argparse.Namespace) -> int:
    from .._errors import ParameterError
    from ..demo import run_collector_demo

    if args.method is not None or args.beta is not None:
        flag = "--method" if args.method is not None else "--beta"
        raise ParameterError(f"{flag} applies only to the in-memory demo; the collector calibrates q with the "
                                "certified method (or give --q)")
    show = not (args.json or args.quiet)
    database = args.database
    if args.report_dir is not None:  # the reports need the database: keep it beside them unless one is given
        os.makedirs(args.report_dir, exist_ok=True)
        database = database if database is not None else os.path.join(args.report_dir, "collector.db")
    bar = step_progress(show, "people reporting", "people")
    try:
        result = run_collector_demo(
            population=1000 if args.population is None else args.population,
            bits=4 if args.bits is None else args.bits, epsilon=args.epsilon, eta=args.eta,
            crowd_size=300 if args.crowd_size is None else args.crowd_size, reports=args.reports, q=args.q,
            seed=args.seed, database=database, progress=bar,
            status=(lambda message: print(message, file=sys.stderr)) if show else None)
    finally:
        bar.close()
    reports = None
    if args.report_dir is not None:
        from ..demo import write_demo_reports

        if show:
            print("writing the design report (a calibration per method: tens of seconds) and the release report "
                  "...", file=sys.stderr)
        reports = write_demo_reports(result, args.report_dir)
    if args.json:
        emit({**result.to_dict(), **({"reports": {"design": reports.design, "release": reports.release}}
                                      if reports is not None else {})})
    else:
        print(result.render())
        if reports is not None:
            print(f"design report: {reports.design}")
            print(f"release report: {reports.release}")
    return 0


# ---------------------------------------------------------------------------------------------------- parser
_SCOPE_TEXT = {
    "all-collections": "every pair of neighbouring collections (the adversary chooses everyone else's vector)",
    "homogeneous": "the paper's homogeneous configuration only (N - 1 identical vectors and one neighbour); "
                   "other collections can be worse",
    "per-report": "each report on its own (local DP), hence every collection",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests).

    ``only``: the command about to run (``""``: a core command); the other command modules in ``cli/_cmd_*.py``
    (census, interpret, ... import heavier math to describe their options) are then not loaded, which keeps
    start-up fast. A test checks that the core commands are exactly the ones :data:`_CORE_COMMANDS` names.
    """
    parser = Parser(prog="sufficientdp", description="Bit-vector randomized response with sufficient DP.")
    parser.add_argument("--version", action="version", version=f"sufficientdp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser("calibrate", help="choose the flip probability q")
    calibration_options(
        p, beta_help="multiple of sd in mean + beta*sd (default 3)",
        max_weight_help="every person's vector has at most w set bits (proven: bounded over that domain)",
        method_help="proven (default: rigorous bound over every pair of collections), homogeneous (rigorous for "
                    "the paper's configuration only), exact, mc, local, or the paper's heuristics paper-sigma / "
                    "paper-simplified",
        eta_help="target P[R > e^epsilon] for proven/homogeneous/mc/exact (default 0.001)",
        rounds_help="T rounds released separately (<= 1000, T*k <= 10000): q per round for a total target "
                    "(epsilon, eta) over the T rounds (proven or local)")
    p.add_argument("--larger-crowds", action="store_true",
                   help="proven: the bound must also hold for every crowd of more than N people (N is the "
                        "smallest crowd a release covers); changes only L = 1, where the exact value is not "
                        "monotone in N")
    common(p)
    p.set_defaults(func=_cmd_calibrate)

    p = sub.add_parser("randomize", help="randomize a file of true reports (one 0/1 column per bit)")
    p.add_argument("--q", type=real("q"), required=True, help="flip probability in (0, 0.5)")
    p.add_argument("--input", required=True, help="CSV or Parquet file")
    p.add_argument("--output", required=True, help="CSV or Parquet file (written atomically, rows shuffled)")
    p.add_argument("--reports", type=positive_int("reports"), default=1, help="k, reports per person")
    p.add_argument("--max-weight", type=positive_int("max-weight"), default=None,
                   help="refuse the file if a row has more than w set bits (the domain q was calibrated for)")
    p.add_argument("--one-hot", action="store_true",
                   help="refuse the file unless every row has exactly one set bit")
    p.add_argument("--seed", type=seed, default=None,
                   help="seed a numpy Generator (simulation only; default: CSPRNG)")
    common(p)
    p.set_defaults(func=_cmd_randomize)

    p = sub.add_parser("aggregate", help="tally a file of randomized reports or a collector's released reports")
    p.add_argument("--input", default=None, help="CSV or Parquet file (or --database)")
    p.add_argument("--database", default=None,
                   help="collector database (sqlite:///path.db, a file path, or postgresql:// with --engine "
                        "numpy); counts released reports only")
    p.add_argument("--campaign", default=None, help="campaign id (with --database)")
    p.add_argument("--release", default=None, help="one release id (with --database; default: all releases)")
    p.add_argument("--histogram", action="store_true", help="include the full 2^L histogram (L <= 16) in --json")
    p.add_argument("--engine", choices=("numpy", "duckdb", "spark"), default="numpy",
                   help="numpy (in memory, chunked), duckdb (SQL over the file or the SQLite database; extra "
                        "'duckdb') or spark (files only; extra 'spark', Java 17+)")
    p.add_argument("--spark-master", default="local[*]",
                   help="Spark master for --engine spark (default local[*]; e.g. spark://host:7077, yarn)")
    common(p)
    p.set_defaults(func=_cmd_aggregate)

    p = sub.add_parser("estimate", help="unbiased per-bit counts with confidence intervals")
    p.add_argument("--q", type=real("q"), default=None,
                   help="flip probability used by the randomizer (default: the file's metadata, which `randomize` "
                        "writes; required for files without it)")
    p.add_argument("--input", required=True, help="CSV or Parquet file of randomized reports")
    p.add_argument("--reports", type=positive_int("reports"), default=None,
                   help="k, reports per person (default: the file's metadata; for a file without it 1, which "
                        "the output marks as a default)")
    p.add_argument("--confidence-level", "--level", dest="level", type=real("confidence-level"), default=0.95,
                   help="confidence level of the intervals, in (0, 1) (--level: its former name)")
    p.add_argument("--std-error", choices=("exact", "plugin"), default="exact")
    p.add_argument("--output", default=None, help="also write the estimates as CSV or Parquet")
    p.add_argument("--joint", choices=("inverse", "em"), default=None,
                   help="also estimate whole-vector frequencies (L <= 20): unbiased inverse or non-negative EM")
    p.add_argument("--top", type=positive_int("top"), default=10, help="vectors to show with --joint")
    p.add_argument("--bootstrap", type=positive_int("bootstrap"), default=None,
                   help="with --joint em: parametric-bootstrap intervals from B refits (at most 10000)")
    p.add_argument("--max-iter", type=positive_int("max-iter"), default=10_000,
                   help="with --joint em: iterations allowed per fit (default 10000)")
    p.add_argument("--seed", type=seed, default=None,
                   help="with --bootstrap: seed of the simulation (default: fresh entropy)")
    common(p)
    p.set_defaults(func=_cmd_estimate)

    p = sub.add_parser("tail", help="eta = P[R > e^epsilon] of the privacy ratio (every collection, or the "
                                    "homogeneous configuration)")
    p.add_argument("--bits", type=positive_int("bits"), required=True, help="L, bits per report")
    p.add_argument("--population", type=positive_int("population"), required=True, help="N, people")
    p.add_argument("--q", type=real("q"), required=True, help="flip probability in (0, 0.5)")
    p.add_argument("--epsilon", type=real("epsilon"), required=True)
    p.add_argument("--reports", type=positive_int("reports"), default=1, help="k, reports per person")
    p.add_argument("--outlier-bits", type=positive_int("outlier-bits"), default=None,
                   help="j, bits in which the neighbour differs (default: the worst over j = 1..L)")
    p.add_argument("--method", type=method_choice(("proven", "homogeneous", "exact", "mc")), default="proven",
                   help="proven (default: bound over every pair of collections; exact at L = 1), homogeneous "
                        "(the paper's configuration only), exact or mc (homogeneous)")
    p.add_argument("--max-weight", type=positive_int("max-weight"), default=None,
                   help="proven: every vector has at most w set bits")
    p.add_argument("--one-hot", action="store_true", help="proven: every vector has exactly one set bit")
    p.add_argument("--direction", choices=("both", "forward", "reverse"), default="both",
                   help="neighbouring direction: outlier added (forward), removed (reverse), or the worse of both")
    p.add_argument("--samples", type=positive_int("samples"), default=None, help="Monte Carlo samples (mc)")
    p.add_argument("--seed", type=seed, default=None, help="seed for Monte Carlo (default: fresh entropy)")
    p.add_argument("--larger-crowds", action="store_true",
                   help="proven: the bound must also hold for every crowd of more than N people (N is the "
                        "smallest crowd a release covers); changes only L = 1, where the exact value is not "
                        "monotone in N")
    common(p)
    p.set_defaults(func=_cmd_tail)

    p = sub.add_parser("worst-case", help="search neighbouring collections for the largest eta")
    p.add_argument("--bits", type=positive_int("bits"), required=True)
    p.add_argument("--population", type=positive_int("population"), required=True)
    p.add_argument("--q", type=real("q"), required=True)
    p.add_argument("--epsilon", type=real("epsilon"), required=True)
    p.add_argument("--search", choices=("auto", "exhaustive", "structured", "heuristic"), default="auto",
                   help="auto: exhaustive when small (a proof), else structured; structured: exact brackets of "
                        "structured pairs at any N (a lower bound on the worst case); heuristic: the seeded "
                        "local search (small N), followed by the structured search")
    p.add_argument("--budget", type=positive_int("budget"), default=200, help="pairs evaluated by the heuristic")
    p.add_argument("--seed", type=seed, default=0, help="seed of the heuristic search")
    p.add_argument("--time-budget", type=real("time-budget"), default=60.0,
                   help="seconds for the structured search (<= 3600; default 60)")
    p.add_argument("--max-group", type=positive_int("max-group"), default=2,
                   help="structured search: largest group of extra vectors in the base (<= 4; default 2)")
    p.add_argument("--max-copies", type=positive_int("max-copies"), default=16,
                   help="structured search: largest number of copies of the outlier in the base (<= 256)")
    common(p)
    p.set_defaults(func=_cmd_worst_case)

    p = sub.add_parser("demo", help="simulate, calibrate, randomize, aggregate and estimate end to end",
                       description="In memory by default. --collector runs the collection flow instead: a loopback "
                                   "collector, a campaign, simulated people reporting through the client Reporter "
                                   "with tokens, a release, and the crowd-threshold and rate-limit refusals.")
    p.add_argument("--collector", action="store_true",
                   help="run the HTTP collection flow on 127.0.0.1 (extras 'service' and 'client')")
    p.add_argument("--population", type=positive_int("population"), default=None,
                   help="people (default 100000; 1000 with --collector)")
    p.add_argument("--bits", type=positive_int("bits"), default=None, help="L (default 16; 4 with --collector)")
    p.add_argument("--epsilon", type=real("epsilon"), default=1.0)
    p.add_argument("--beta", type=real("beta"), default=None, help="multiple of sd (default 3; in-memory only)")
    p.add_argument("--reports", type=positive_int("reports"), default=1)
    p.add_argument("--seed", type=seed, default=None, help="seed for a reproducible simulation (default: CSPRNG)")
    p.add_argument("--method", type=method_choice(METHODS), default=None,
                   help="calibration method (default proven; in-memory only)")
    p.add_argument("--eta", type=real("eta"), default=None, help="target eta (default 0.001)")
    p.add_argument("--crowd-size", type=positive_int("crowd-size"), default=None,
                   help="--collector: N_min, the fewest people a release covers (default 300)")
    p.add_argument("--q", type=real("q"), default=None,
                   help="--collector: flip probability to check instead of calibrating it")
    p.add_argument("--database", default=None,
                   help="--collector: keep the collector's database at this URL (default: a temporary SQLite "
                        "file, deleted)")
    p.add_argument("--report-dir", default=None,
                   help="--collector: end by writing DIR/design.html (report design at the campaign's parameters) "
                        "and DIR/release.html (report release of the demo's release) and print their paths; the "
                        "database is kept at DIR/collector.db unless --database is given (extra 'report')")
    common(p)
    p.set_defaults(func=_cmd_demo)

    for name in _extra_commands():
        if only is not None and name != f"_cmd_{only}":
            continue
        module = importlib.import_module(f".{name}", __package__)
        module.register(sub, common)
    return parser


class _Terminated(BaseException):
    """SIGTERM/SIGHUP as an exception, so that every ``finally`` and cleanup runs (temporary files, bars)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_termination_unwind() -> None:
    """Turn SIGTERM and SIGHUP into :class:`_Terminated` (main thread only; `serve` installs its own handlers)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, frame: object) -> None:
        raise _Terminated(signum)

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code (0 ok, 2 bad input, 1 internal error, 130 interrupted).

    Errors are one line on stderr; ``--debug`` (anywhere on the line) re-raises internal errors with their
    traceback.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in words  # tracebacks of internal errors (never for input errors)
    words = [w for w in words if w != "--debug"]
    argv = words
    first = next((w for w in words if not w.startswith("-")), None)  # the command (options precede it rarely)
    if words and words[0] in ("--version", "-V") and len(words) == 1:
        print(f"sufficientdp {__version__}")
        return 0
    _on_termination_unwind()
    if first != "serve":  # the long-running collector keeps the allocator's defaults
        tune_allocator()
    try:
        only = None  # load every command module (help, a typo, options before the command)
        if first is not None and not words[0].startswith("-"):
            if f"_cmd_{first}" in _extra_commands():
                only = first
            elif first in _CORE_COMMANDS:
                only = ""
        parser = build_parser(only=only)
        args = parser.parse_args(argv)
        return int(args.func(args))
    except UsageError as exc:
        print(f"sufficientdp: error: {exc}".replace("\n", " "), file=sys.stderr)
        return 2
    except (SufficientDPError, ValueError, ImportError, OSError) as exc:
        msg = str(exc).replace("\n", " ")
        print(f"sufficientdp: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sufficientdp: interrupted", file=sys.stderr)
        return 130
    except _Terminated as exc:
        print(f"sufficientdp: terminated by signal {exc.signum}", file=sys.stderr)
        return 128 + exc.signum
    except Exception as exc:  # an internal error: one line and exit 1, the traceback only with --debug
        if debug:
            raise
        msg = str(exc).replace("\n", " ")[:300]
        print(f"sufficientdp: internal error ({type(exc).__name__}{': ' + msg if msg else ''}); please report it "
              "with the command line; --debug shows the traceback", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
