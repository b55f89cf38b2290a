"""The flip probability q per round that meets a **total** target over T rounds (docs/proofs/rounds.md).

The target is ``P[L_1 + ... + L_T > epsilon] <= eta`` for the T rounds together (``epsilon`` and ``eta`` are
totals), bounded by :func:`sufficientdp.accounting.rounds.rounds_tail` over every pair of neighbouring collections. The
search runs on the worst pair type's bound on a coarse lattice, then on the fine lattice; the q returned is checked
with the full bound (every pair type, fine lattice), so ``rounds_tail(q).eta <= eta`` always holds at it. On domains
of 16 or more pair types the first evaluation's four worst types are bounded in full before each check (if their
bound alone exceeds the target, so does the full one: the check fails without the other types), and once a check
has failed beyond the lead type the fine search runs again on those four as the check bounds them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._errors import CalibrationError, ParameterError
from .._numerics.search import Bracket, RegulaFalsi, geometric, search, walk
from .._offload import helper_process
from .._validation import check_open_interval
from ..accounting.rounds import (
    DEFAULT_RESOLUTION,
    SEARCH_RESOLUTION,
    _check,
    _domain,
    _rounds_tail,
    evaluate_rounds,
    evaluated_domain,
    simple_rule,
)
from ..loss.result import TailResult
from ..parameters import effective_bits, local_q, sigma_per_sqrt_n
from ..ratio.proven import DEFAULT_POINTS, Domain, pair_types, worth_a_helper
from .methods import DEFAULT_ETA
from .proven import local_q_for_domain
from .result import Calibration
from .search import log_excess, log_slope

__all__ = ["rounds_q"]

_COARSE_TOL = 2e-3  # relative precision on q of the coarse search
_REL_TOL = 2e-3  # of the fine search (the fine bound jitters by about 1e-3 in q: no use going finer)
_PROBE_TOL = 5e-4  # of the fine search again with the probe's types (steep: eta 1.26e-3 -> 0.94e-3 over 0.1% of q at
# L = 40, N = 1e6, T = 4; the first search's end already failed, so the root is near)
_POLISH = 0.04  # the fine root is looked for this far (relative) below the coarse one
_PICK_RESOLUTION = 1.5e-2  # the first evaluation (every pair type) only picks the worst type
_PICK_POINTS = 18
_PROBE_TYPES = 4  # the first evaluation's worst types (of 16 or more), bounded in full first at every check (a
# failing q fails fast) and searched on once a check failed


def _root(f: Callable[[float], float], lo: float, hi: float, f_lo: float, f_hi: float, target: float,
          rel_tol: float) -> float:
    """Smallest passing q in ``(lo, hi]`` to ``rel_tol`` (``lo`` fails, ``hi`` passes): the one search's regula
    falsi (Illinois) on ``log(eta / target)`` against ``log q``, kept 5% of the bracket inside, bisection where the
    scores are unusable (an infinite one: ``+inf`` is given to the search as ``nan``, which it does not
    interpolate); 60 probes at most. Returns a q observed to pass (or ``hi``)."""

    def test(q: float) -> tuple[bool, float]:
        fx = log_excess(f(q), target)
        return fx <= 0.0, (math.nan if fx == math.inf else fx)

    return search(test, Bracket(fail=lo, ok=hi, fail_score=math.nan if f_lo == math.inf else f_lo, ok_score=f_hi),
                  RegulaFalsi(anchor="ok", log=True, margin_frac=0.05), max_probes=60, rtol=rel_tol).ok


def _fine_root(fast: Callable[..., float], q0: float, slope: float, target: float, q_max: float,
               rel_tol: float = _REL_TOL) -> float:
    """The root of the fine-lattice bound near the coarse root ``q0``: the one search's expanding walk by
    Newton-like steps in log q with the coarse slope (aiming 0.1% past the predicted root, at most 4% a step,
    capped at ``q_max``; the slope re-estimated from each step) until the root is bracketed, then regula falsi
    (:func:`_root`) to ``rel_tol``. Returns a q whose fine bound was seen to pass."""
    at = [q0, log_excess(fast(q0, DEFAULT_RESOLUTION), target), slope]  # the walk's end, its excess, the slope

    def test(x: float) -> tuple[bool, float]:
        q, f, s = at
        fx = log_excess(fast(x), target)
        if fx != f and x != q:
            s_new = (fx - f) / (math.log(x) - math.log(q))
            s = s_new if s_new < 0.0 else s
        at[:] = [x, fx, s]
        return fx <= 0.0, fx

    def step(q: float, k: int) -> tuple[float, bool]:
        f, s = at[1], at[2]
        d = min(max(-f / s, -_POLISH), _POLISH)  # log q step to the predicted root, at most 4%
        nxt = min(q_max, math.exp(math.log(q) + d) * (1.001 if f > 0.0 else 0.999))
        return nxt, f > 0.0 and nxt >= q_max  # failing at q_max: nothing above to try

    w = walk(test, q0, passes=at[1] <= 0.0, step=step, max_steps=12, start_score=at[1])
    b = w.bracket()
    if b is None and w.passes:
        # still passing 12 steps (up to 40%) below: the coarse root was far above, its failing end only failing the
        # first, looser evaluation (seen at epsilon = 0.05-0.1: q = 0.2426, about half local DP's, where 0.0375
        # passes). Walk on by factors 0.8 until the fine bound fails.
        def fine_test(x: float) -> tuple[bool, float]:
            fx = log_excess(fast(x), target)
            return fx <= 0.0, fx

        down = walk(fine_test, w.last, passes=True, step=geometric(0.8, floor=1e-12), max_steps=60,
                    start_score=w.last_score)
        b = down.bracket()
        if b is None:
            return down.last
    if b is None:
        raise CalibrationError("the fine bound fails up to local DP's q")  # pragma: no cover - eta = 0 there
    return _root(fast, b.fail, b.ok, b.fail_score, b.ok_score, target, rel_tol)


@dataclass(frozen=True, slots=True)
class _Failed:
    """A q known to fail without the full bound: ``eta`` is a bound over some pair types only (at most the full
    bound), above the target."""

    eta: float
    details: dict[str, Any]


def _step_up(full: Callable[[float], TailResult | _Failed], hi: float, res: TailResult | _Failed, eta: float,
             q_loc: float) -> tuple[float, TailResult | _Failed]:
    """From ``hi``, where the full bound ``res`` fails, up by factors ``1 + 1e-3 2**k`` (k = 0, 1, ...; capped at
    local DP's q) until it passes: the one search's expanding walk; a pass more than 1.5 :data:`_REL_TOL` above
    the last failure is then narrowed by regula falsi on the full bound to :data:`_REL_TOL` (the doubling steps
    had overshot by up to their last one: 0.8% at L = 5, N = 1e6, epsilon = 0.3, eta = 1e-6, T = 3). Returns the
    last q probed and its bound (``hi`` and ``res`` if ``hi`` is already local DP's q). From any ``hi >= 1e-15``
    the steps reach ``q_loc`` within 60 of the 64 allowed (the searches never go below 1e-14: the step-down stops
    at 1e-12, each of the at most 8 fine walks goes at most 40% lower); were it lower, the walk would stop failing
    and rounds_q raise."""
    at: dict[float, TailResult | _Failed] = {hi: res}  # the full bound at every q probed

    def full_eta(x: float) -> float:
        if x not in at:
            at[x] = full(x)
        return at[x].eta

    def test(x: float) -> tuple[bool, float]:
        return full_eta(x) <= eta, math.nan

    def step(x: float, k: int) -> tuple[float, bool] | None:
        return None if not x < q_loc else (min(q_loc, x * (1.0 + 1e-3 * 2.0**k)), False)

    w = walk(test, hi, passes=False, step=step, max_steps=64)
    if w.hit is None:
        return w.last, at[w.last]
    if w.hit <= w.last * (1.0 + 1.5 * _REL_TOL):
        return w.hit, at[w.hit]
    q = _root(full_eta, w.last, w.hit, log_excess(at[w.last].eta, eta), log_excess(at[w.hit].eta, eta), eta,
              _REL_TOL)
    return q, at[q]


def rounds_q(*, bits: int, population: int, epsilon: float, eta: float, rounds: int, reports: int = 1,
             domain: Domain | None = None, values: str = "changing",
             progress: Callable[[int, int], Any] | None = None) -> tuple[float, TailResult, list[str]]:
    """Smallest q per round (to about 2e-3 relative) whose T-round bound on eta is at most ``eta``.

    Args:
        bits, population: L and N (the smallest crowd of any round).
        epsilon, eta: the **total** target over the T rounds.
        rounds: T.
        reports: k reports per person per round.
        domain: the vectors people may hold.
        values: ``"changing"`` or ``"fixed"`` (see :func:`~sufficientdp.accounting.rounds.rounds_tail`).
        progress: optional callback ``progress(done, total)``.

    Returns:
        ``(q, tail, notes)`` with ``tail = rounds_tail(q=q, ...)`` (``tail.eta <= eta``).

    Raises:
        CalibrationError: if not even local DP's q passes (cannot happen: there the loss never exceeds epsilon).
    """
    _, bits, population, epsilon, rounds, reports = _check(0.25, bits, population, epsilon, rounds, reports, values)
    dom = _domain(bits, domain)
    n = rounds * reports
    q_loc = local_q_for_domain(dom, epsilon, n)
    notes: list[str] = []
    steps = [0]
    total = 40

    def tick() -> None:
        steps[0] += 1
        if progress is not None:
            progress(min(steps[0], total - 1), total)

    cache: dict[tuple[Any, ...], Any] = {}  # curves and bounds already computed at a q (the final check reuses)
    probe: list[str] = []  # the first evaluation's worst pair types

    def full(q: float) -> TailResult | _Failed:
        """Exactly rounds_tail(q=q, ...) at its defaults, or, when the bound over the probe's types alone (their
        curves as the full bound computes them: cached for it) is above the target, that failure: the bound over
        every type lies above the one over some of them (a larger envelope, a larger maximum)."""
        if probe:
            ev = evaluate_rounds(q=q, population=population, epsilon=epsilon, n=n, domain=dom, values=values,
                                 resolution=DEFAULT_RESOLUTION, points=DEFAULT_POINTS, only=frozenset(probe),
                                 cache=cache)
            low = min(ev.eta, simple_rule(ev.curves, epsilon=epsilon, rounds=rounds, reports=reports)["eta"])
            if low > eta:
                tick()
                return _Failed(low, {"worst_pair": ev.worst})
        return exact(q)

    def exact(q: float) -> TailResult:
        tick()
        return _rounds_tail(q=q, bits=bits, population=population, epsilon=epsilon, rounds=rounds,
                            reports=reports, domain=dom, values=values, cache=cache)

    if population == 1:
        notes.append("population 1: no crowd to hide in; local DP's q is used.")
        return q_loc, exact(q_loc), notes
    lead: set[str] = set()
    with_probe = [False]  # the fine search bounds the probe's types too (once a check failed beyond the lead)
    stage = [SEARCH_RESOLUTION]
    seen: list[tuple[float, float]] = []  # (log q, log(eta / target)) on the coarse lattice

    def fast(q: float, resolution: float | None = None) -> float:
        if resolution is not None:
            stage[0] = resolution
        tick()
        if lead and stage[0] == DEFAULT_RESOLUTION and with_probe[0]:  # the probe's types too, as the check does
            ev = evaluate_rounds(q=q, population=population, epsilon=epsilon, n=n, domain=dom, values=values,
                                 resolution=stage[0], only=frozenset(lead | set(probe)), cache=cache)
        elif lead:
            ev = evaluate_rounds(q=q, population=population, epsilon=epsilon, n=n, domain=dom, values="fixed",
                                 resolution=stage[0], only=frozenset(lead), cache=cache)
        else:
            ev = evaluate_rounds(q=q, population=population, epsilon=epsilon, n=n, domain=dom, values="fixed",
                                 resolution=max(stage[0], _PICK_RESOLUTION), points=_PICK_POINTS)
        if not lead and ev.worst != "local":
            lead.add(ev.worst)
            if len(ev.by_type) >= 4 * _PROBE_TYPES:  # (fewer types: the full check costs about as much)
                probe[:] = [k for k, _ in sorted(ev.by_type, key=lambda kv: -kv[1])[:_PROBE_TYPES]]
        elif stage[0] == SEARCH_RESOLUTION and ev.eta > 0.0:
            seen.append((math.log(q), log_excess(ev.eta, eta)))
        return ev.eta

    def fast_test(x: float) -> tuple[bool, float]:
        fx = fast(x)
        return fx <= eta, log_excess(fx, eta)

    # one helper process for every evaluation of the search on a large domain (accounting.rounds._Curves), decided
    # on the domain the evaluations bound (a large weight domain's pair types are not built: all of {0,1}^L's are)
    with helper_process(enabled=worth_a_helper(list(pair_types(evaluated_domain(dom), q_loc)))):
        return _search(fast_test, fast, full, q_loc=q_loc, eta=eta, lead=lead, probe=probe, with_probe=with_probe,
                       stage=stage, seen=seen, notes=notes, rounds=rounds, progress=progress, total=total)


def _search(fast_test: Callable[[float], tuple[bool, float]], fast: Callable[..., float],
            full: Callable[[float], TailResult | _Failed], *, q_loc: float, eta: float, lead: set[str],
            probe: list[str], with_probe: list[bool], stage: list[float], seen: list[tuple[float, float]],
            notes: list[str], rounds: int, progress: Callable[[int, int], Any] | None,
            total: int) -> tuple[float, TailResult, list[str]]:
    """The search of :func:`rounds_q` (its closures and state passed in)."""
    # step down from local DP's q by factors 0.8 until the fast bound fails (not below 1e-12)
    down = walk(fast_test, q_loc, passes=True, step=geometric(0.8, floor=1e-12), max_steps=60,
                start_score=-math.inf)
    hi, f_hi = down.last, down.last_score
    lo, f_lo = (0.0, math.inf) if down.hit is None else (down.hit, down.hit_score)
    for _ in range(8):
        if lo > 0.0:
            hi = _root(fast, lo, hi, f_lo, f_hi, eta, _COARSE_TOL)
            hi = _fine_root(fast, hi, log_slope(seen), eta, q_loc)
            stage[0] = DEFAULT_RESOLUTION
        res = full(hi)
        if res.eta <= eta:
            break
        # the full bound (every pair type, every direction of values) fails: search again on the fine lattice
        # from here with the probe's types as the check bounds them (the envelope of their curves with changing
        # values), then take the worst type into the search or step up
        worst = str(res.details.get("worst_pair"))
        if probe and not with_probe[0] and (worst in lead or worst in probe or worst.startswith("envelope")):
            with_probe[0] = True
            lo, hi = 0.0, _fine_root(fast, hi, log_slope(seen), eta, q_loc, _PROBE_TOL)
            continue
        if worst in lead or worst.startswith("envelope"):
            hi, res = _step_up(full, hi, res, eta, q_loc)
            break
        lead.add(worst)
        stage[0] = SEARCH_RESOLUTION
        lo, f_lo, hi, f_hi = hi, log_excess(res.eta, eta), q_loc, -math.inf
    else:  # pragma: no cover - the loop breaks once the full bound passes
        res = full(q_loc)
        hi = q_loc
    if res.eta > eta or not isinstance(res, TailResult):  # pragma: no cover - local DP's q has eta = 0
        raise CalibrationError(f"no flip probability q < 0.5 meets eta <= {eta} over {rounds} rounds")
    if hi >= q_loc:
        notes.append("no flip probability below local DP's meets the target with the proven bound; local DP's q "
                     "is used (the total privacy loss then never exceeds epsilon).")
    if progress is not None:
        progress(total, total)
    return hi, res, notes


GUARANTEE = ("rigorous upper bound over the T rounds together: P[L_1 + ... + L_T > epsilon] <= eta (epsilon and "
             "eta are totals) for every pair of neighbouring collections of the domain, both directions, the "
             "collections the same or changing from round to round; composed privacy-blanket dominating pair "
             "(docs/proofs/rounds.md)")
LOCAL_GUARANTEE = ("proof: local DP composed over the T rounds: every one of a person's T k reports has ratio at "
                   "most e^(epsilon / (T k)), so the total loss never exceeds epsilon (eta = 0)")


def calibrate_rounds(*, bits: int, population: int, epsilon: float, rounds: int, max_weight: int | None = None,
                     reports: int = 1, method: str = "proven", onehot: bool = False, eta: float | None = None,
                     progress: Any = None) -> Calibration:
    """:func:`sufficientdp.calibration.calibrate` with ``rounds=T > 1``: q per round for a total target.

    Only ``method="proven"`` (the composed bound) and ``"local"`` (local DP composed T k times) are available: the
    other methods' statements (homogeneous configuration, heuristics) are not composed.
    """

    if method not in ("proven", "local"):
        raise ParameterError(f"rounds > 1 supports method 'proven' or 'local'; got {method!r} (its statement is "
                             "not composed over rounds)")
    _check(0.25, bits, population, epsilon, rounds, reports, "changing")
    if onehot and max_weight is not None:
        raise ParameterError("onehot and max_weight are exclusive (one-hot vectors have exactly one set bit)")
    dom = Domain(bits=bits, kind="onehot") if onehot else Domain.from_max_weight(bits, max_weight)
    l_eff = 2 if onehot else effective_bits(bits, max_weight)
    q_local = local_q(l_eff, epsilon, reports * rounds)
    notes: list[str] = [f"{rounds} rounds of {reports} report(s) per person: epsilon and eta are totals over the "
                        f"rounds; q is the flip probability of every round."]
    eta_target: float | None = None
    eta_at_q: float | None = None
    if method == "proven":
        eta_target = check_open_interval("eta", DEFAULT_ETA if eta is None else eta, 0.0, 1.0)
        q, tail, more = rounds_q(bits=bits, population=population, epsilon=epsilon, eta=eta_target, rounds=rounds,
                                 reports=reports, domain=dom, progress=progress)
        eta_at_q = tail.eta
        notes.extend(more)
        notes.extend(str(x) for x in tail.details.get("notes", []))
        fb = tail.details.get("fallback")
        if fb is not None:
            notes.append(f"simple rule (union bound, valid and loose) at this q: eta_T <= T * eta_1(epsilon / T) "
                         f"= {fb['eta']:.3g}; composed bound {tail.details['eta_composed']:.3g}.")
        guarantee = GUARANTEE
    else:
        q = q_local
        guarantee = LOCAL_GUARANTEE
    sig = sigma_per_sqrt_n(q, reports)
    sig_local = sigma_per_sqrt_n(q_local, reports)
    return Calibration(q=q, method=method, guarantee=guarantee,
                       scope="all-collections" if method == "proven" else "per-report", domain=dom.kind, bits=bits,
                       effective_bits=l_eff, max_weight=max_weight, population=population, reports=reports,
                       epsilon=epsilon, lam=math.exp(epsilon), beta=None, sigma_per_sqrt_n=sig, local_q=q_local,
                       local_sigma_per_sqrt_n=sig_local, gain_vs_local=sig_local / sig, eta_target=eta_target,
                       eta_at_q=eta_at_q, notes=tuple(notes), rounds=rounds)
