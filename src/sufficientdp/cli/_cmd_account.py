"""``sufficientdp account``: the exact privacy profile (delta and eta at epsilon) of a reference mechanism.

Mechanisms:

* ``shuffled-rr`` — n people, one bit each, binary randomized response with flip probability q, output the count
  of ones (the shuffled release). Neighbouring collections differ in one person's bit; delta and eta are the worst
  over the others' ones-count m and both directions
  (:func:`sufficientdp.accounting.shuffled.shuffled_rr_worst_bracket`): for n <= ``--full-scan-max`` (default
  10**6) every m is evaluated by :func:`sufficientdp.ratio.single_bit.worst_over_crowds` (O(n): n = 1e6 in a few
  seconds) and the numbers are exact (kind ``"exact"``; ``exact_bracket`` gives their rounding bracket, about
  1e-10 relative); above, the exact worst over the end and sampled
  m is a lower bound and the smallest *verified* bound valid for every m the upper end (kind ``"bracket"``; today
  only data processing from one person's RR: the published amplification bounds BBGN19, FMT21, EFMRTT19 carry
  ``verified=False`` and count only once their flag says verified). ``delta`` and ``eta`` are the rigorous upper
  ends (the safe numbers); ``delta_lower`` / ``eta_lower`` the lower ends. Tighter values resting on unverified
  published statements are reported separately as ``delta_upper_unverified`` / ``eta_upper_unverified`` (with
  ``unverified_source``; null when none is tighter), and ``bound_status`` gives every bound's value, ``verified``
  flag and provenance.
* ``rr`` — local binary randomized response (one person, no crowd).
* ``bit-vector-rr`` — local L-bit randomized response, neighbours differing in ``--differing`` bits (default all L,
  the worst case).
* ``gaussian`` — the Gaussian mechanism with standard deviation ``--sigma`` on a sensitivity-1 query.

All other numbers are exact (kind ``"exact"``): delta is the hockey-stick divergence ``E[(1 - e^(eps - loss))_+]``
and eta the tail ``P[loss > eps]`` of the privacy loss, both at ``--epsilon``.

``--rounds T`` (mechanism ``campaign``, the default with ``--rounds``; T = 1 without it): the product's own release,
T rounds of the anonymized histogram of N people's k fresh bit-vector reports, each round's histogram released
separately. T = 1 is one release: its own bounds (eta as ``tail`` gives it, for every crowd of at least N people,
and delta from :func:`sufficientdp.ratio.proven.proven_delta`), nothing composed.
``--epsilon`` is then the **total** over the T rounds and the numbers bound ``P[L_1 + ... + L_T > epsilon]`` and
``delta_T(epsilon)`` for every pair of neighbouring collections of the domain (kind ``"bound"``, scope
``"all-collections"``; :func:`sufficientdp.accounting.rounds.rounds_tail`, docs/proofs/rounds.md), with the simple
rule ``T * eta_1(epsilon / T)`` (union bound) reported as a labelled fallback and the one-round bound at the same
epsilon for comparison. ``--homogeneous`` adds the exact T-round value of the homogeneous configuration (small
sizes, k = 1): a lower reference, not a guarantee.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .._errors import ParameterError
from ._common import emit, positive_int, real, step_progress

MECHANISMS = ("shuffled-rr", "rr", "bit-vector-rr", "gaussian", "campaign")


def _require(args: argparse.Namespace, *names: str) -> None:
    for name in names:
        if getattr(args, name.replace("-", "_")) is None:
            raise ParameterError(f"--mechanism {args.mechanism} requires --{name}")


def _rounds(args: argparse.Namespace, progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    """``--rounds``: the composed all-collections bound of the campaign over T rounds (and its references)."""
    from ..accounting.rounds import homogeneous_rounds_tail, rounds_tail
    from ..ratio.proven import Domain, proven_tail

    _require(args, "q", "bits", "population")
    if args.one_hot and args.max_weight is not None:
        raise ParameterError("--one-hot and --max-weight are exclusive (one-hot vectors have exactly one set bit)")
    dom = (Domain(bits=args.bits, kind="onehot") if args.one_hot
           else Domain.from_max_weight(args.bits, args.max_weight))
    r = rounds_tail(q=args.q, bits=args.bits, population=args.population, epsilon=args.epsilon, rounds=args.rounds,
                    reports=args.reports, domain=dom, values=args.values, progress=progress)
    d = r.details
    one = r if args.rounds == 1 else proven_tail(q=args.q, bits=args.bits, population=args.population,
                                                 epsilon=args.epsilon, reports=args.reports, domain=dom)
    out: dict[str, Any] = {
        "mechanism": "campaign", "rounds": args.rounds, "reports_per_round": args.reports, "q": args.q,
        "bits": args.bits, "population": args.population, "epsilon": args.epsilon,
        "epsilon_is": "total over the rounds",
        "domain": d["domain"], "values": args.values, "kind": r.kind, "scope": r.scope,
        "scope_rounds": d["scope_rounds"], "eta": r.eta, "delta": r.delta_upper, "used": d["used"],
        "eta_composed": d["eta_composed"], "delta_composed": d["delta_composed"],
        "epsilon_prime": d["epsilon_prime"], "worst_pair": d["worst_pair"], "method": d["method"],
        "fallback": d["fallback"],
        "one_round": {"eta": one.eta, "kind": one.kind, "scope": one.scope,
                      "note": ("the bound above (T = 1 is one round)" if args.rounds == 1 else
                               "one round at the same epsilon, for comparison (proven_tail)")},
        "grid": d["grid"], "fft_cells": d["fft_cells"], "float_allowance": d["float_allowance"],
        "notes": d["notes"], "seconds": d["seconds"],
    }
    if args.homogeneous:
        if args.reports != 1:
            raise ParameterError("--homogeneous needs --reports 1 (the exact per-round distribution is one "
                                 "report a person)")
        h = homogeneous_rounds_tail(q=args.q, bits=args.bits, population=args.population, epsilon=args.epsilon,
                                    rounds=args.rounds)
        out["homogeneous"] = {"eta": h.eta, "eta_lower": h.eta_lower, "eta_upper": h.eta_upper,
                              "delta_lower": h.delta_lower, "delta_upper": h.delta_upper, "kind": h.kind,
                              "scope": h.scope, "worst": h.details["worst"], "note": h.details["note"]}
    return out


def account(args: argparse.Namespace, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The JSON object printed by the command (the math is in the core modules)."""
    mech = args.mechanism
    if getattr(args, "rounds", None) is not None or mech == "campaign":
        if mech not in (None, "campaign"):
            raise ParameterError(f"--rounds applies to --mechanism campaign (the anonymized bit-vector histogram); "
                                 f"got --mechanism {mech}")
        if args.rounds is None:
            args.rounds = 1
        return _rounds(args, progress)
    if mech is None:
        raise ParameterError("--mechanism is required (or --rounds T for the campaign over T rounds)")
    out: dict[str, Any] = {"mechanism": mech, "epsilon": args.epsilon, "kind": "exact"}
    if mech == "shuffled-rr":
        _require(args, "population", "q")
        from ..accounting.shuffled import shuffled_rr_worst_bracket

        r = shuffled_rr_worst_bracket(population=args.population, q=args.q, epsilon=args.epsilon,
                                      full_scan_max=args.full_scan_max, progress=progress)
        out.update(population=args.population, q=args.q, kind=r.kind, delta=r.delta_upper, eta=r.eta_upper,
                   delta_lower=r.delta_lower, eta_lower=r.eta_lower, worst_m=r.worst_m,
                   worst_direction=r.worst_direction, worst_m_eta=r.worst_m_eta, scanned=r.scanned,
                   upper_source=r.upper_source, delta_upper_unverified=r.delta_upper_unverified,
                   eta_upper_unverified=r.eta_upper_unverified, unverified_source=r.unverified_source,
                   bound_status=r.to_dict()["bound_status"],
                   exact_bracket=({"delta": list(r.details["delta_bracket"]), "eta": list(r.details["eta_bracket"])}
                                  if r.kind == "exact" else None),
                   method=r.details.get("method", "bracket: sampled m (lower end), verified bounds (upper end)"),
                   neighbours="one person's bit differs; worst over the others' ones-count m, both directions")
        return out
    from ..accounting import mechanisms as mx

    pld: Any
    if mech == "rr":
        _require(args, "q")
        pld = mx.binary_randomized_response(args.q)
        out.update(q=args.q)
    elif mech == "bit-vector-rr":
        _require(args, "q", "bits")
        differing = args.bits if args.differing is None else args.differing
        pld = mx.bit_vector_randomized_response(args.q, args.bits, differing)
        out.update(q=args.q, bits=args.bits, differing=differing)
    else:
        _require(args, "sigma")
        pld = mx.gaussian(args.sigma)
        out.update(sigma=args.sigma, sensitivity=1.0)
    # both directions of the neighbouring relation: the worse of the PLD and its reverse
    rev = pld.reverse()
    out.update(delta=max(float(pld.delta(args.epsilon)), float(rev.delta(args.epsilon))),
               eta=max(float(pld.eta(args.epsilon)), float(rev.eta(args.epsilon))),
               neighbours="local: one person's input differs; worse of both directions")
    return out


def _cmd(args: argparse.Namespace) -> int:
    campaign = args.rounds is not None or args.mechanism == "campaign"
    if (args.mechanism in ("shuffled-rr",) or campaign) and args.epsilon is not None and not args.epsilon > 0:
        raise ParameterError(f"epsilon must be finite and > 0, i.e. in (0, inf); got {args.epsilon!r}")
    if campaign:
        bar = step_progress(not (args.json or args.quiet), "account (bounding the blanket curves)", unit="bounds")
    else:
        bar = step_progress(not (args.json or args.quiet), "account (scanning m)", unit="m")
    try:
        out = account(args, progress=bar)
    finally:
        bar.close()
    from ..loss.distribution import ETA_DELTA_EXPLANATION

    out["explanation"] = ETA_DELTA_EXPLANATION
    if args.json:
        emit(out)
        return 0
    explanation = out.pop("explanation")
    if out["mechanism"] == "campaign":
        _print_rounds(out)
        print()
        print(explanation)
        return 0
    if args.mechanism == "shuffled-rr":
        if out["kind"] == "exact":
            print("exact: every m scanned, both directions (delta and eta are the exact worst case)")
        else:
            print("bracket: delta and eta are rigorous upper bounds for every m (verified bounds only); delta_lower "
                  "and eta_lower are the exact worst over the scanned m only")
            if out["delta_upper_unverified"] is not None or out["eta_upper_unverified"] is not None:
                print("unverified: delta_upper_unverified / eta_upper_unverified rest on published statements not "
                      "verified against the papers' text (upper bounds only if those statements hold); not the "
                      "safe numbers")
        status = out.pop("bound_status", {})
    for key, value in out.items():
        print(f"{key:<14} {value}")
    if args.mechanism == "shuffled-rr" and status:
        print("bounds (delta at epsilon; rigorous = verified):")
        for name, b in status.items():
            tag = "rigorous (verified)" if b["verified"] else "unverified published statement"
            print(f"  {name:<10} {b['delta']}  {tag}; provenance: {b['provenance']}")
    print()
    print(explanation)
    return 0


def _print_rounds(out: dict[str, Any]) -> None:
    t, fb = out["rounds"], out["fallback"]
    if t == 1:
        print(f"bound ({out['kind']}, {out['scope']}): one round, every pair of neighbouring collections, both "
              "directions")
        print(f"  P[L > {out['epsilon']:g}] <= eta = {out['eta']:.4g}")
        print(f"  delta({out['epsilon']:g}) <= {out['delta']:.4g}")
    else:
        print(f"bound ({out['kind']}, {out['scope']}): over the {t} rounds together, every pair of neighbouring "
              "collections, both directions")
        print(f"  P[L_1 + ... + L_{t} > {out['epsilon']:g}] <= eta = {out['eta']:.4g}   "
              f"(epsilon is the total over the {t} rounds)")
        print(f"  delta_{t}({out['epsilon']:g}) <= {out['delta']:.4g}")
    print(f"  scope: {out['scope_rounds']}")
    print(f"configuration  q = {out['q']:g} every round, L = {out['bits']}, N = {out['population']}, "
          f"k = {out['reports_per_round']} report(s) per person per round; domain: {out['domain']}")
    if out["eta_composed"] is not None:
        print(f"composed       eta <= {out['eta_composed']:.4g}, delta <= {out['delta_composed']:.4g}  "
              f"(worst: {out['worst_pair']}; e' = {out['epsilon_prime']:.4g})")
    if fb is not None:
        print(f"fallback       eta <= {fb['eta']:.4g}  simple rule, valid and loose: T * eta_1(epsilon / T), "
              f"eta_1({fb['epsilon_per_round']:.4g}) <= {fb['eta_per_round']:.3g}")
    if t == 1:
        print(f"one round      the one-release bounds, nothing composed (worst pair: {out['worst_pair']})")
    else:
        print(f"reported       the {out['used']} bound (both are valid; the smaller is reported)")
        one = out["one_round"]
        print(f"one round      eta <= {one['eta']:.4g} at the same epsilon ({one['kind']}), for comparison")
    if "homogeneous" in out:
        h = out["homogeneous"]
        print(f"homogeneous    eta in [{h['eta_lower']:.4g}, {h['eta_upper']:.4g}] ({h['kind']}, {h['scope']}; "
              f"{h['worst']}): a lower reference, not a guarantee")
    print(f"method         {out['method']}")
    for note in out["notes"]:
        print(f"note: {note}")


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``account`` subcommand."""

    p = sub.add_parser("account", help="delta and eta of a mechanism at epsilon (exact; shuffled RR above --full-scan-max: a bracket)")
    p.add_argument("--mechanism", choices=MECHANISMS, default=None,
                   help="shuffled-rr (n people, count of ones), rr, bit-vector-rr (--bits), gaussian (--sigma), "
                        "campaign (the anonymized bit-vector histogram; the default with --rounds)")
    p.add_argument("--epsilon", type=real("epsilon"), required=True,
                   help="epsilon at which to evaluate (with --rounds: the total over the rounds)")
    p.add_argument("--population", type=positive_int("population"), default=None, help="n, people (shuffled-rr)")
    p.add_argument("--q", type=real("q"), default=None, help="flip probability (rr mechanisms)")
    p.add_argument("--bits", type=positive_int("bits"), default=None, help="L (bit-vector-rr)")
    p.add_argument("--differing", type=positive_int("differing"), default=None,
                   help="bits in which neighbours differ (bit-vector-rr; default L, the worst case)")
    p.add_argument("--sigma", type=real("sigma"), default=None, help="noise standard deviation (gaussian)")
    p.add_argument("--full-scan-max", type=positive_int("full-scan-max"), default=1_000_000,
                   help="shuffled-rr: evaluate every m (exact) up to this n; above, a rigorous bracket "
                        "(default 1000000; n = 1e6 takes about a second)")
    p.add_argument("--rounds", type=positive_int("rounds"), default=None,
                   help="campaign: T rounds, each histogram released separately (<= 1000, T*k <= 10000); prints "
                        "the composed bound on P[L_1 + ... + L_T > epsilon] over every pair of collections")
    p.add_argument("--reports", type=positive_int("reports"), default=1,
                   help="campaign: k reports per person per round (default 1)")
    p.add_argument("--max-weight", type=positive_int("max-weight"), default=None,
                   help="campaign: every vector has at most w set bits")
    p.add_argument("--one-hot", action="store_true", help="campaign: every vector has exactly one set bit")
    p.add_argument("--values", choices=("changing", "fixed"), default="changing",
                   help="campaign: collections may change from round to round (default; covers both) or stay "
                        "the same (fixed; can be tighter)")
    p.add_argument("--homogeneous", action="store_true",
                   help="campaign: also the exact T-round value of the homogeneous configuration (small sizes, "
                        "k = 1), a lower reference")
    common(p)
    p.set_defaults(func=_cmd)
