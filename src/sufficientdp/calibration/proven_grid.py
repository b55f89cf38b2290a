"""The all-collections bound minimized over a grid of the auxiliary e', and the smallest q it certifies.

:func:`sufficientdp.ratio.proven.proven_tail` bounds ``eta = P[R(S) > e**epsilon]`` over every pair of neighbouring
collections through ``eta <= delta(e') / (1 - e**(e' - epsilon))`` (``docs/proofs/blanket.md`` step 4) and picks
the auxiliary ``e' < epsilon`` by a local search, which for weight domains can end far from the best ``e'``
(measured: 17x too large at L = 16, w = 2, N = 1e6). Every ``e' < epsilon`` gives a valid bound, so the minimum
over any set of them is one too. :func:`best_bound` evaluates a grid (:data:`E_GRID`) and a finer grid around its
best point; :func:`certified_q` bisects for the smallest q whose best-grid bound is at most eta.

These are the independent checks ``docs/proven_bound.md`` sets beside ``proven_tail`` and
``calibrate(method="proven")`` for the cardinality reduction of seed 001 §5 (``papers/001_3d8ddaba8b46cf9c.txt``;
``papers/ERRATA.md`` item 6: "at most w set bits => the noise of L_eff = 2w bits suffices", unproven). Each value is
a rigorous upper bound on eta for the domain (``kind="bound"``, ``scope="all-collections"``), never an estimate.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numerics.search import Bracket, Midpoint, search
from .._validation import check_open_interval, check_positive_finite
from ..parameters import sigma_per_sqrt_n
from ..ratio.proven import Domain, evaluate, proven_tail

__all__ = ["BISECT_REL", "E_GRID", "best_bound", "certified_q"]

#: gaps ``epsilon - e'`` tried by :func:`best_bound` (any e' < epsilon gives a valid bound)
E_GRID = tuple(float(x) for x in np.geomspace(1e-3, 5.0, 24))
#: relative width at which :func:`certified_q` stops bisecting
BISECT_REL = 2e-3


def best_bound(*, q: float, bits: int, population: int, epsilon: float, domain: Domain,
               library: bool = True, center: float | None = None) -> dict[str, Any]:
    """The smallest of several valid all-collections bounds on eta at q (one report per person).

    Evaluates ``evaluate(..., epsilon_prime=epsilon - gap)`` (:mod:`sufficientdp.ratio.proven`) for every gap of
    :data:`E_GRID` (or, with ``center``, seven points ``center * e**(0.3 i)``, i = -3..3), then five more on a
    geometric grid between the neighbours of the best one, and returns the minimum. With ``library`` it also runs
    :func:`~sufficientdp.ratio.proven.proven_tail` and keeps its value where that is smaller.

    Returns:
        ``{"eta", "epsilon_prime", "gap", "worst_pair", "eta_library", "notes"}``: the bound, the e' and gap
        that gave it, the worst pair type there, proven_tail's own value (None without ``library``) and its notes.

    Raises:
        ParameterError: a parameter out of range (raised by the bound).

    References:
        ``docs/proofs/blanket.md`` step 4; ``papers/001_3d8ddaba8b46cf9c.txt`` §5; ``papers/ERRATA.md`` item 6.
    """
    lib = proven_tail(q=q, bits=bits, population=population, epsilon=epsilon, domain=domain) if library else None

    def at(gap: float) -> tuple[float, float, str]:
        ev = evaluate(q=q, population=population, epsilon=epsilon, reports=1, domain=domain,
                      epsilon_prime=epsilon - gap)
        return ev.eta, gap, ev.worst

    if center is None:
        gaps = list(E_GRID)
    else:
        gaps = [center * math.exp(0.3 * i) for i in range(-3, 4)]
    tried = [at(g) for g in gaps]
    best = min(tried)
    i = gaps.index(best[1])
    lo_g, hi_g = gaps[max(i - 1, 0)], gaps[min(i + 1, len(gaps) - 1)]
    tried += [at(float(g)) for g in np.geomspace(lo_g, hi_g, 7)[1:-1]]
    eta_b, gap, worst = min(tried)
    out: dict[str, Any] = {"eta": eta_b, "epsilon_prime": epsilon - gap, "gap": gap, "worst_pair": worst,
                           "eta_library": None, "notes": []}
    if lib is not None:
        out["eta_library"] = lib.eta
        out["notes"] = list(lib.details.get("notes", []))
        if lib.eta <= eta_b:
            out.update({"eta": lib.eta, "epsilon_prime": lib.details.get("epsilon_prime"),
                        "worst_pair": lib.details.get("worst_pair")})
    return out


def certified_q(*, q_fail: float, q_ok: float, bits: int, population: int, epsilon: float, eta: float,
                domain: Domain) -> dict[str, Any]:
    """Bisect (geometrically) between ``q_fail`` (bound above eta) and ``q_ok`` (certified) with :func:`best_bound`
    until the bracket is :data:`BISECT_REL` relative wide.

    Returns:
        ``{"q", "eta", "q_fail", "steps", "sigma_per_sqrt_n"}``: the smallest q found whose bound is at most eta
        (``q_ok`` if none in between was), that bound (None if no midpoint was certified), the largest q found
        not certified, the number of bound evaluations and ``sigma_per_sqrt_n`` at ``q``.

    Raises:
        ParameterError: ``q_fail``, ``q_ok`` outside (0, 1/2) or ``eta`` not positive.
    """
    lo = check_open_interval("q_fail", q_fail, 0.0, 0.5)
    hi = check_open_interval("q_ok", q_ok, 0.0, 0.5)
    eta = check_positive_finite("eta", eta)
    at_hi: list[float | None] = [None]
    center: list[float | None] = [None]  # each bound's e' search starts at the previous one's best gap

    def test(q: float) -> tuple[bool, float]:
        b = best_bound(q=q, bits=bits, population=population, epsilon=epsilon, domain=domain, library=False,
                       center=center[0])
        center[0] = b["gap"]
        if b["eta"] <= eta:
            at_hi[0] = b["eta"]
        return b["eta"] <= eta, math.nan

    # geometric bisection until hi / lo - 1 <= BISECT_REL (200 probes: far more than floats allow in (0, 1/2))
    end = search(test, Bracket(fail=lo, ok=hi), Midpoint("geometric"), max_probes=200,
                 until=lambda br: not br.ok / br.fail - 1.0 > BISECT_REL)
    return {"q": end.ok, "eta": at_hi[0], "q_fail": end.fail, "steps": end.probes,
            "sigma_per_sqrt_n": sigma_per_sqrt_n(end.ok)}
