"""``sufficientdp interpret``: what a privacy guarantee means to an attacker (power tables, posterior bounds).

An adapter only: the math lives in :mod:`sufficientdp.semantics` and :mod:`sufficientdp.accounting.pbdp`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable
from typing import Any

from .._errors import ParameterError
from ..accounting.mechanisms import GaussianPLD, binary_randomized_response
from ..accounting.pbdp import compare_eta_delta
from ..semantics.bayesian import posterior_table, total_variation_reading
from ..semantics.frequentist import power_table
from ._common import emit, real

#: Longest --levels/--epsilons list, and the largest epsilon in it (as --epsilon everywhere).
_MAX_ITEMS = 100
_MAX_EPSILON = 50.0


def _float_list(name: str, text: str) -> list[float]:
    parts = [t.strip() for t in str(text).split(",")]
    if not parts or any(not t for t in parts):
        raise ParameterError(f"{name} must be a comma-separated list of numbers; got {text!r}")
    out = []
    for t in parts:
        try:
            v = float(t)
        except ValueError:
            raise ParameterError(f"{name} must be a comma-separated list of numbers; got {text!r}") from None
        if math.isnan(v):
            raise ParameterError(f"{name} must be a comma-separated list of numbers; got {text!r}")
        if name == "epsilons" and not 0.0 <= v <= _MAX_EPSILON:
            raise ParameterError(f"epsilons must be numbers in [0, {_MAX_EPSILON:g}]; got {t!r}")
        out.append(v)
    if len(out) > _MAX_ITEMS:
        raise ParameterError(f"{name} must list at most {_MAX_ITEMS} numbers; got {len(out)}")
    return out


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``interpret`` subcommand."""

    p = sub.add_parser(
        "interpret",
        help="what a guarantee means to an attacker: power of a test at each level, posterior bounds",
        description="Give exactly one of --rho (zCDP), --epsilon [--delta] (pure / approximate DP) or --mechanism.",
    )
    p.add_argument("--rho", type=real("rho"), default=None, help="zCDP parameter rho > 0")
    p.add_argument("--epsilon", type=real("epsilon"), default=None, help="pure-DP epsilon >= 0")
    p.add_argument("--delta", type=real("delta"), default=None, help="with --epsilon: approximate-DP delta")
    p.add_argument("--mechanism", choices=["gaussian", "rr"], default=None, help="a concrete mechanism")
    p.add_argument("--sigma", type=real("sigma"), default=None, help="gaussian: noise standard deviation > 0")
    p.add_argument("--sensitivity", type=real("sensitivity"), default=1.0, help="gaussian: L2 sensitivity (1)")
    p.add_argument("--q", type=real("q"), default=None, help="rr: flip probability in (0, 1)")
    p.add_argument("--levels", default="0.01,0.05,0.1", help="significance levels in (0, 1), comma-separated")
    p.add_argument("--priors", default="0.01,0.1,0.5", help="prior probabilities in (0, 1), comma-separated")
    p.add_argument("--failure", type=real("failure"), default=0.05,
                   help="probability with which a non-pure posterior bound may fail (default 0.05)")
    p.add_argument("--epsilons", default="0.5,1,2,3",
                   help="eps grid for the delta / eta / pbdp table of a mechanism (comma-separated)")
    common(p)
    p.set_defaults(func=_cmd)


def _mechanism(args: argparse.Namespace) -> tuple[Any, str, dict[str, Any]]:
    if args.mechanism == "gaussian":
        if args.sigma is None:
            raise ParameterError("--mechanism gaussian requires --sigma")
        g = GaussianPLD.from_sigma(args.sigma, args.sensitivity)
        return g, "gaussian", {"mechanism": "gaussian", "sigma": args.sigma, "sensitivity": args.sensitivity,
                               "mu": g.mu, "rho": g.rho}
    if args.q is None:
        raise ParameterError("--mechanism rr requires --q")
    rr = binary_randomized_response(args.q)
    return rr, "rr", {"mechanism": "rr", "q": args.q, "epsilon": rr.max_loss}


def _cmd(args: argparse.Namespace) -> int:
    given = [x for x in (args.rho, args.epsilon, args.mechanism) if x is not None]
    if len(given) != 1:
        raise ParameterError("give exactly one of --rho, --epsilon or --mechanism")
    if args.delta is not None and args.epsilon is None:
        raise ParameterError("--delta requires --epsilon")
    if args.mechanism is None and (args.sigma is not None or args.q is not None):
        raise ParameterError("--sigma and --q require --mechanism")
    levels = _float_list("levels", args.levels)
    priors = _float_list("priors", args.priors)
    out: dict[str, Any] = {}
    eta_table = None
    if args.rho is not None:
        table = power_table(levels, rho=args.rho)
        post = posterior_table(priors, rho=args.rho, failure_probability=args.failure)
        eta_table = compare_eta_delta(GaussianPLD.from_rho(table.parameters["rho"]),
                                      _float_list("epsilons", args.epsilons))
    elif args.epsilon is not None:
        table = power_table(levels, epsilon=args.epsilon, delta=args.delta)
        if args.delta is None:
            post = posterior_table(priors, epsilon=args.epsilon, failure_probability=args.failure)
            out["total_variation"] = total_variation_reading(epsilon=args.epsilon).to_dict()
        else:
            post = None
            out["posterior_note"] = ("approximate (eps, delta)-DP has no posterior-to-posterior reading here "
                                     "(paper 004 Sec. 7 does not review it); give --rho or --mechanism instead")
    else:
        mech, name, params = _mechanism(args)
        table = power_table(levels, mechanism=mech, mechanism_name=name)
        table = dataclasses.replace(table, parameters={**table.parameters, **params})  # results are immutable
        pure_eps = max(mech.max_loss, mech.reverse().max_loss)  # finite iff the mechanism is pure DP
        post = posterior_table(priors, mechanism=mech, mechanism_name=name, failure_probability=args.failure,
                               epsilon=pure_eps if math.isfinite(pure_eps) else None)
        eta_table = compare_eta_delta(mech, _float_list("epsilons", args.epsilons))
        out["total_variation"] = total_variation_reading(mech).to_dict()
    out.update(table.to_dict())
    out["posterior"] = None if post is None else post.to_dict()
    if eta_table is not None:
        out["delta_eta_pbdp"] = eta_table.to_dict()
    if args.json:
        emit(out)
        return 0
    params_text = ", ".join(f"{k} = {v:.6g}" if isinstance(v, float) else f"{k} = {v}"
                            for k, v in table.parameters.items())
    print(f"Frequentist: maximal power of a test at each level ({params_text})")
    print(table.format())
    for note in table.notes:
        print(f"note: {note}")
    if post is not None:
        print()
        print("Bayesian: upper bound on the attacker's posterior belief in the target's record")
        print(post.format())
        for note in post.notes:
            print(f"note: {note}")
    else:
        print()
        print(f"note: {out['posterior_note']}")
    if eta_table is not None:
        print()
        print("delta (approximate DP) vs eta (tail, sufficient DP) vs pbdp delta")
        print(eta_table.format())
    if "total_variation" in out:
        tv = out["total_variation"]
        print()
        print(f"total variation distance: {tv['total_variation']:.6g} ({tv['kind']}); {tv['caveat']}")
    return 0
