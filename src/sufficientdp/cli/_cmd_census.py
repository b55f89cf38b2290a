"""``sufficientdp census``: the 2020 Census noise-module allocation and the paper's attacker scenarios (seed 004).

Without ``--scenario``/``--geo``/``--attributes`` it lists the allocation (every query and level with its exact
``rho*`` and discrete-Gaussian ``sigma^2 = 1/rho*``). With a scenario it prints the scenario's ``rho`` and the
power table (Gaussian proxy: exact; zCDP: bound; DGM: Monte-Carlo estimate with ``--dgm-samples``) and the
posterior table.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from ..census.allocation import ATTRIBUTES, GEO_LEVELS, PRODUCTION_2020
from ..census.scenarios import PAPER_LEVELS, SCENARIOS, analyze_scenario, custom_scenario, get_scenario
from ._common import emit, positive_int, real, seed


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``census`` subcommand."""

    p = sub.add_parser("census", help="2020 Census noise-module allocation and attacker scenarios (seed 004)")
    p.add_argument("--scenario", default=None,
                   help=f"paper scenario: {', '.join(SCENARIOS)} (ALL = whole budget, Table 2)")
    p.add_argument("--geo", nargs="+", default=None, metavar="LEVEL",
                   help=f"custom scenario: every query at these levels ({', '.join(GEO_LEVELS)})")
    p.add_argument("--attributes", nargs="+", default=None, metavar="ATTR",
                   help=f"custom scenario: person queries crossing these ({', '.join(ATTRIBUTES)})")
    p.add_argument("--levels", nargs="+", type=real("levels"), default=list(PAPER_LEVELS),
                   help="significance levels in (0, 1) (default 0.01 0.05 0.10)")
    p.add_argument("--deltas", nargs="+", type=real("deltas"), default=[1e-1, 1e-2, 1e-3, 1e-6],
                   help="deltas for the posterior table, in (0, 1)")
    p.add_argument("--dgm-samples", type=positive_int("dgm-samples"), default=None,
                   help="Monte-Carlo samples for the discrete-Gaussian power column (>= 1000)")
    p.add_argument("--seed", type=seed, default=0, help="seed for the Monte-Carlo column (default 0)")
    common(p)
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    if args.scenario is not None and (args.geo or args.attributes):
        raise ValueError("give either --scenario or --geo/--attributes, not both")
    if args.scenario is None and not args.geo and not args.attributes:
        return _allocation(args)
    scenario = (get_scenario(args.scenario) if args.scenario is not None
                else custom_scenario(args.geo or (), args.attributes or ()))
    rng = np.random.default_rng(args.seed) if args.dgm_samples else None
    rep = analyze_scenario(scenario, args.levels, deltas=args.deltas, dgm_samples=args.dgm_samples or 0, rng=rng)
    if args.json:
        emit(rep.to_dict())
        return 0
    sc = rep.scenario
    print(f"scenario {sc.name}: {sc.description}")
    paper = "" if sc.paper_rho is None else f"   (paper prints {sc.paper_rho}; " + (
        "matches)" if rep.matches_paper_rho else "DOES NOT follow from Tables 3-5)")
    print(f"rho = {rep.rho:.6f} = {rep.rho_exact}  [exact]{paper}")
    print(f"affected queries: {len(rep.queries)}")
    head = f"{'level':>8} {'Gaussian [exact]':>17} {'zCDP bound':>11}"
    if args.dgm_samples:
        head += f" {'DGM [estimate, CI]':>28}"
    print(head)
    for row in rep.powers:
        line = f"{row.level:>8g} {row.gaussian:>17.6f} {row.zcdp_bound:>11.6f}"
        if row.dgm is not None:
            line += f" {row.dgm.estimate:>10.4f} [{row.dgm.lower:.4f}, {row.dgm.upper:.4f}]"
        print(line)
    print("posterior: epsilon with P(posterior ratio > e^epsilon) <= delta")
    print(f"{'delta':>8} {'Gaussian f-DP':>14} {'zCDP rest-known':>16} {'zCDP any prior':>15}")
    for prow in rep.posterior:
        print(f"{prow.delta:>8g} {prow.gaussian_fdp:>14.4f} {prow.zcdp_rest_known:>16.4f} "
              f"{prow.zcdp_arbitrary_prior:>15.4f}")
    for note in rep.notes:
        print(f"note: {note}")
    return 0


def _allocation(args: argparse.Namespace) -> int:
    alloc = PRODUCTION_2020
    if args.json:
        d = alloc.to_dict()
        d["scenarios"] = [s.to_dict() for s in SCENARIOS.values()]
        emit(d)
        return 0
    print(f"{alloc.source}")
    print(f"base rho: persons {float(alloc.person_rho):g}, housing {float(alloc.housing_rho):g}; "
          f"total per block {float(alloc.total_rho):g} = {alloc.total_rho} [exact]")
    print(f"{'query':<40} {'level':<7} {'cells':>5} {'rho*':>10} {'sigma^2=1/rho*':>15}")
    for m in alloc.measurements():
        sig = f"{m.sigma2:>15.2f}" if m.measured else f"{'(not measured)':>15}"
        print(f"{m.query.name:<40} {m.level:<7} {m.query.cells:>5} {m.rho:>10.6f} {sig}")
    print(f"scenarios: {', '.join(SCENARIOS)} (use --scenario NAME)")
    return 0
