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
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .._errors import ParameterError

MECHANISMS = ("shuffled-rr", "rr", "bit-vector-rr", "gaussian")


def _require(args: argparse.Namespace, *names: str) -> None:
    for name in names:
        if getattr(args, name.replace("-", "_")) is None:
            raise ParameterError(f"--mechanism {args.mechanism} requires --{name}")


def account(args: argparse.Namespace, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The JSON object printed by the command (the math is in the core modules)."""
    mech = args.mechanism
    out: dict[str, Any] = {"mechanism": mech, "epsilon": args.epsilon, "kind": "exact"}
    if mech == "shuffled-rr":
        _require(args, "population", "q")
        from ..accounting.shuffled import shuffled_rr_worst_bracket

        r = shuffled_rr_worst_bracket(n=args.population, q=args.q, epsilon=args.epsilon,
                                      full_scan_max=args.full_scan_max, progress=progress)
        out.update(population=args.population, q=args.q, kind=r.kind, delta=r.delta_upper, eta=r.eta_upper,
                   delta_lower=r.delta_lower, eta_lower=r.eta_lower, worst_m=r.worst_m,
                   worst_direction=r.worst_direction, worst_m_eta=r.worst_m_eta, scanned=r.scanned,
                   upper_source=r.upper_source, delta_upper_unverified=r.delta_upper_unverified,
                   eta_upper_unverified=r.eta_upper_unverified, unverified_source=r.unverified_source,
                   bound_status=r.to_dict()["bound_status"],
                   exact_bracket=({"delta": r.details["delta_bracket"], "eta": r.details["eta_bracket"]}
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
    from .main import _emit, _step_progress

    if args.mechanism in ("shuffled-rr",) and args.epsilon is not None and not args.epsilon > 0:
        raise ParameterError(f"epsilon must be finite and > 0, i.e. in (0, inf); got {args.epsilon!r}")
    bar = _step_progress(not (args.json or args.quiet), "account (scanning m)", unit="m")
    try:
        out = account(args, progress=bar)
    finally:
        bar.close()
    from ..accounting.pbdp import ETA_DELTA_EXPLANATION

    out["explanation"] = ETA_DELTA_EXPLANATION
    if args.json:
        _emit(out)
        return 0
    explanation = out.pop("explanation")
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


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``account`` subcommand."""
    from .main import _float, _positive_int

    p = sub.add_parser("account", help="delta and eta of a mechanism at epsilon (exact; shuffled RR above --full-scan-max: a bracket)")
    p.add_argument("--mechanism", choices=MECHANISMS, required=True,
                   help="shuffled-rr (n people, count of ones), rr, bit-vector-rr (--bits), gaussian (--sigma)")
    p.add_argument("--epsilon", type=_float("epsilon"), required=True, help="epsilon at which to evaluate")
    p.add_argument("--population", type=_positive_int("population"), default=None, help="n, people (shuffled-rr)")
    p.add_argument("--q", type=_float("q"), default=None, help="flip probability (rr mechanisms)")
    p.add_argument("--bits", type=_positive_int("bits"), default=None, help="L (bit-vector-rr)")
    p.add_argument("--differing", type=_positive_int("differing"), default=None,
                   help="bits in which neighbours differ (bit-vector-rr; default L, the worst case)")
    p.add_argument("--sigma", type=_float("sigma"), default=None, help="noise standard deviation (gaussian)")
    p.add_argument("--full-scan-max", type=_positive_int("full-scan-max"), default=1_000_000,
                   help="shuffled-rr: evaluate every m (exact) up to this n; above, a rigorous bracket "
                        "(default 1000000; n = 1e6 takes a few seconds)")
    common(p)
    p.set_defaults(func=_cmd)
