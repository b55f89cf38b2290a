"""The smallest q whose all-collections bound meets the target (docs/proofs/blanket.md; seed 001 eq. 1.7).

The bound of :mod:`sufficientdp.ratio.proven` is evaluated at every q the search returns, over every pair type of
the domain, so the q returned always satisfies ``eta_bound(q) <= eta`` (the search itself may use a subset of the
pair types to go faster; the final check uses all of them and the search resumes above a q that fails it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from .._errors import CalibrationError
from .._numerics.search import Bracket, RegulaFalsi, search
from ..parameters import local_q
from ..ratio.proven import (
    DEFAULT_RESOLUTION,
    Domain,
    Evaluation,
    evaluate,
    local_distance,
    proven_tail,
    tail_from_evaluation,
)
from ..ratio.result import TailResult
from .search import log_excess

__all__ = ["local_q_for_domain", "proven_q"]

_BISECT_STEPS = 14  # relative precision 2**(2**-14) - 1 ~ 4e-5 on q once bracketed within a factor of 2
_REL_TOL = 2e-4  # of the final q (the fine lattice's bound jitters by about this much in q: no use going finer)
_COARSE_TOL = 1e-3  # of the search on the coarse lattice
_SEARCH_RESOLUTION = 2e-2  # lattice resolution while bracketing q (fast, looser)
_FINE_RESOLUTION = DEFAULT_RESOLUTION  # the resolution of the final answer (proven_tail's default)
_POLISH = 0.03  # the fine search looks this far (relative) below the coarse answer
_FULL_STEP = 2e-3  # the answer is also checked this far (relative) below with the full bound
_LEAD_MAX = 4  # pair types searched at once (others are caught by the full bound's check)


def _illinois(f: Callable[[float], float], lo: float, hi: float, f_lo: float, f_hi: float, target: float,
              rel_tol: float = _REL_TOL) -> float:
    """Smallest passing q between a failing ``lo`` and a passing ``hi`` (to ``rel_tol``), by regula falsi (Illinois)
    on ``log(eta(q) / target)`` against log q (:class:`~sufficientdp._numerics.search.RegulaFalsi`, aimed half a
    tolerance above the root so that the passing side moves); bisection steps where the interpolation is unusable.
    Returns a q at which ``f(q) <= target`` was observed (or ``hi``)."""
    def test(q: float) -> tuple[bool, float]:
        v = f(q)
        return v <= target, log_excess(v, target)

    policy = RegulaFalsi(anchor="ok", log=True, margin_frac=0.02, lean=0.5 * rel_tol)
    return search(test, Bracket(fail=lo, ok=hi, fail_score=f_lo, ok_score=f_hi), policy,
                  max_probes=4 * _BISECT_STEPS, rtol=rel_tol).ok


def local_q_for_domain(domain: Domain, epsilon: float, reports: int) -> float:
    """Local-DP flip probability for the domain: ``1 / (1 + e**(epsilon / (k d)))``, d its largest distance."""
    return local_q(local_distance(domain), epsilon, reports)


def proven_q(*, bits: int, population: int, epsilon: float, eta: float, reports: int = 1,
             domain: Domain | None = None, progress: Callable[[int, int], Any] | None = None,
             larger_crowds: bool = False) -> tuple[float, TailResult, list[str]]:
    """Smallest q (to about 2e-4 relative) with the all-collections bound on eta at most ``eta``.

    Returns ``(q, tail, notes)`` where ``tail`` is :func:`~sufficientdp.ratio.proven.proven_tail` at q.

    The search: halve q from local DP's until the bound over *every* pair type (coarse lattice) fails; the types
    that lead there (within a factor 4 of the worst, at most :data:`_LEAD_MAX`) are searched on the coarse lattice,
    then on the fine one, with e' following q; the answer is checked with the full bound (every type, its own e'
    search: exactly :func:`proven_tail`), and a type that fails it joins the searched ones. The bound is not
    exactly monotone in q (the lattice's slack jitters), so the answer is the smallest q *observed* to pass near
    the root, to about :data:`_REL_TOL`.

    ``larger_crowds=True``: the bound must also hold for every crowd of more than ``population`` people
    (:func:`~sufficientdp.ratio.proven.proven_tail`'s flag; it changes only L = 1, where the exact value at N is
    not monotone in N). The search then runs on the exact value at N and the answer is checked, and stepped up,
    with the larger-crowds bound.

    Raises:
        CalibrationError: if no q below local DP's meets the target (then local DP's q is the answer; callers
            use it).
    """
    dom = domain if domain is not None else Domain(bits=bits)
    q_loc = local_q_for_domain(dom, epsilon, reports)
    notes: list[str] = []
    steps = [0]
    total = 2 * _BISECT_STEPS + 12

    def tick() -> None:
        steps[0] += 1
        if progress is not None:
            progress(min(steps[0], total - 1), total)

    def done() -> None:
        if progress is not None:
            progress(total, total)

    if population == 1:
        notes.append("population 1: no crowd to hide in; local DP's q is used.")
        return q_loc, proven_tail(q=q_loc, bits=bits, population=population, epsilon=epsilon, reports=reports,
                                  domain=dom, larger_crowds=larger_crowds), notes

    exact_l1 = bits == 1 and reports == 1
    fulls: dict[float, TailResult] = {}
    full_evs: dict[float, Evaluation] = {}

    def full(q: float) -> TailResult:
        # exactly the number tail, the collector and every other caller compute at q (one answer everywhere)
        if q not in fulls:
            tick()
            t0 = time.perf_counter()
            if exact_l1:
                fulls[q] = proven_tail(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports,
                                       domain=dom, larger_crowds=larger_crowds)
            else:
                ev = evaluate(q=q, population=population, epsilon=epsilon, reports=reports, domain=dom,
                              resolution=DEFAULT_RESOLUTION)
                full_evs[q] = ev
                fulls[q] = tail_from_evaluation(ev, q=q, bits=bits, population=population, epsilon=epsilon,
                                                reports=reports, seconds=t0)
        return fulls[q]

    lead: set[str] = set()
    hint: list[float] = []
    stage = [_SEARCH_RESOLUTION]
    fine_eps = [0.0]  # the fine stage's e' has been searched (then held)

    exact_at_n: dict[float, float] = {}

    def fast(q: float) -> float:
        tick()
        if exact_l1 and larger_crowds:  # search on the exact value at N; full() checks the larger crowds
            if q not in exact_at_n:
                exact_at_n[q] = proven_tail(q=q, bits=bits, population=population, epsilon=epsilon,
                                            reports=reports, domain=dom).eta
            return exact_at_n[q]
        if exact_l1:
            return full(q).eta
        # e' follows q by a local search around the previous one (any e' gives a valid bound); on the fine
        # lattice, where q moves by a few percent at most, it is searched once and then held
        fixed = hint[0] if hint and fine_eps[0] == stage[0] else None
        ev = evaluate(q=q, population=population, epsilon=epsilon, reports=reports, domain=dom,
                      only=frozenset(lead), epsilon_prime_hint=hint[0] if hint else None, resolution=stage[0],
                      epsilon_prime=fixed)
        if ev.epsilon_prime < epsilon:  # (local DP reports e' = epsilon: no e' to follow)
            hint[:] = [ev.epsilon_prime]
        if stage[0] == _FINE_RESOLUTION:
            fine_eps[0] = stage[0]
        return ev.eta

    def scan(q: float) -> Evaluation:
        # every pair type, coarse lattice: where the halving looks, and which types lead
        tick()
        ev = evaluate(q=q, population=population, epsilon=epsilon, reports=reports, domain=dom,
                      epsilon_prime_hint=hint[0] if hint else None, resolution=_SEARCH_RESOLUTION)
        if ev.epsilon_prime < epsilon:
            hint[:] = [ev.epsilon_prime]
        return ev

    def leaders(ev: Evaluation) -> set[str]:
        if not ev.by_type:
            return set()
        top = max(v for _, v in ev.by_type)
        ranked = sorted(ev.by_type, key=lambda kv: -kv[1])
        return {k for k, v in ranked[:_LEAD_MAX] if v >= 0.25 * top} | {ranked[0][0]}

    hi, lo = q_loc, None  # local DP: eta = 0 at q_loc
    f_hi, f_lo = -math.inf, 0.0
    x = q_loc
    for _ in range(60):  # halve until the bound over every type fails (or q is negligible)
        x *= 0.5
        if x < 1e-12:
            break
        if exact_l1:
            fx = fast(x)
        else:
            ev = scan(x)
            fx = ev.eta
            lead |= leaders(ev)
        if fx <= eta:
            hi, f_hi = x, log_excess(fx, eta)
        else:
            lo, f_lo = x, log_excess(fx, eta)
            break
    while lo is not None:
        coarse_stage = not exact_l1 and stage[0] > _FINE_RESOLUTION
        if not exact_l1:  # the lead types' bound at the bracket's ends (the halving measured every type)
            f_lo = log_excess(fast(lo), eta) if f_lo <= 0.0 else f_lo
        hi = _illinois(fast, lo, hi, f_lo, f_hi, eta, _COARSE_TOL if coarse_stage else _REL_TOL)
        if coarse_stage:
            # The coarse lattice was only for speed: its bound is looser, so the fine root lies at or below hi
            # (or a little above, where the fine e' search differs): bracket it on the fine lattice, walking down
            # while the lower end still passes.
            stage[0] = _FINE_RESOLUTION
            f_hi = log_excess(fast(hi), eta)
            up = 0
            while f_hi > 0.0 and up < 8 and hi < q_loc:  # fine lattice fails at the coarse root: step up
                lo_f, f_lo_f = hi, f_hi
                hi = min(q_loc, hi * (1.0 + _POLISH / 4))
                f_hi = log_excess(fast(hi), eta)
                up += 1
            if up and f_hi <= 0.0:
                hi = _illinois(fast, lo_f, hi, f_lo_f, f_hi, eta)
            elif not up:
                below = hi * (1.0 - _POLISH)
                f_below = log_excess(fast(below), eta)
                while f_below <= 0.0 and below > 1e-12:
                    hi, f_hi = below, f_below
                    below = hi * (1.0 - _POLISH)
                    f_below = log_excess(fast(below), eta)
                hi = _illinois(fast, below, hi, f_below, f_hi, eta)
        res = full(hi)
        if res.eta > eta and not exact_l1:
            # a type outside the searched ones, or the full e' search, fails at hi: search with the types
            # that fail here as well
            ev = full_evs[hi]
            new = {k for k, v in ev.by_type if v > eta} - lead
            if new:
                lead |= new
                if ev.epsilon_prime < epsilon:
                    hint[:] = [ev.epsilon_prime]
                fine_eps[0] = 0.0  # search e' again for the new types
                lo, f_lo = hi, log_excess(fast(hi), eta)
                if f_lo <= 0.0:  # the lead types pass at hi although a new type fails: the new one decides
                    f_lo = log_excess(res.eta, eta)
                hi, f_hi = q_loc, -math.inf
                continue
        if res.eta <= eta:
            # near-minimal against the full bound itself: look just below (the fast bound and the full one
            # differ a little in e'); move down while the full bound still passes there
            # (skipped when the full bound at hi is already within 3% of the target: 0.2% lower in q it is
            # above it, the bound rising ~4% per 0.1% of q near the root in every case measured)
            for _ in range(6 if res.eta < 0.97 * eta else 0):
                below = hi * (1.0 - _FULL_STEP)
                if below <= 0.0 or full(below).eta > eta:
                    break
                hi = below
            done()
            return hi, full(hi), notes
        # The full bound fails slightly above the searched root (every type is searched, so it is e' or the
        # lattice's jitter): step q up by small relative amounts (eta falls steeply in q; local DP's q passes).
        # (The larger-crowds bound at L = 1 can sit well above the exact value the search ran on: larger steps,
        # then the last step narrowed with the bound itself, to 1e-3; the q returned was observed to pass.)
        wide = larger_crowds and exact_l1
        step = 1e-2 if wide else 2e-4
        for _ in range(12):
            if hi >= q_loc:
                break
            below, f_below = hi, log_excess(full(hi).eta, eta)
            hi = min(q_loc, hi * (1.0 + step))
            if full(hi).eta <= eta:
                if wide:
                    hi = _illinois(lambda x: full(x).eta, below, hi, f_below, log_excess(full(hi).eta, eta), eta,
                                   _COARSE_TOL)
                done()
                return hi, full(hi), notes
            step *= 3.0
        break
    res = full(hi) if hi < q_loc else proven_tail(q=q_loc, bits=bits, population=population, epsilon=epsilon,
                                                  reports=reports, domain=dom, larger_crowds=larger_crowds)
    if res.eta > eta:  # pragma: no cover - local DP's q has eta = 0 by construction
        raise CalibrationError(f"no flip probability q < 0.5 meets eta <= {eta} with the proven bound")
    if hi == q_loc:
        notes.append("no flip probability below local DP's meets the target with the proven bound; local DP's q "
                     "is used (the privacy loss then never exceeds epsilon).")
    done()
    return hi, res, notes
