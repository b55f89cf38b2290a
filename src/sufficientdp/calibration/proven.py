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
from .._numerics.search import Bracket, RegulaFalsi, geometric, search, walk
from .._offload import helper_process
from ..parameters import local_q
from ..ratio.proven import (
    DEFAULT_RESOLUTION,
    EXACT_L1_MAX_POPULATION,
    LARGER_CROWDS_DELTA_ONLY,
    LARGER_CROWDS_WINDOW,
    Domain,
    Evaluation,
    evaluate,
    local_distance,
    proven_tail,
    second_process_allowed,
    tail_from_evaluation,
)
from ..ratio.result import TailResult
from .search import log_excess, log_slope

__all__ = ["local_q_for_domain", "proven_q"]

_BISECT_STEPS = 14  # relative precision 2**(2**-14) - 1 ~ 4e-5 on q once bracketed within a factor of 2
_REL_TOL = 2e-4  # of the final q (the fine lattice's bound jitters by about this much in q: no use going finer)
_COARSE_TOL = 1e-3  # of the search on the coarse lattice
_NEAR = 0.05  # ... which also stops at a q whose bound passes within this (log excess) of the target
_SEARCH_RESOLUTION = 2e-2  # lattice resolution while bracketing q (fast, looser)
_FINE_RESOLUTION = DEFAULT_RESOLUTION  # the resolution of the final answer (proven_tail's default)
_POLISH = 0.03  # the fine search looks at most this far (relative) below the coarse answer per step
_PAST = 8e-5  # ... aiming this far (relative) past the root it predicts (0.4 of the fine search's tolerance: the
# regula falsi, which aims half a tolerance above the root, then leaves a bracket within the tolerance)
_FULL_STEP = 2e-3  # the answer is also checked this far (relative) below with the full bound
_LOOK_STEPS = 6  # ... at most this many times (still passing after them: the search runs again, _search_again)
_FAR_BELOW = 0.01  # a full bound at the searched root below this fraction of the target: search again at once
_STEEPEST = 100.0  # a look below predicted above this many times the target is not skipped (:func:`_steep_below`)
_LEAD_MAX = 4  # pair types searched at once (others are caught by the full bound's check)


def _illinois(f: Callable[[float], float], lo: float, hi: float, f_lo: float, f_hi: float, target: float,
              rel_tol: float = _REL_TOL, near: float = 0.0) -> float:
    """Smallest passing q between a failing ``lo`` and a passing ``hi`` (to ``rel_tol``), by regula falsi (Illinois)
    on ``log(eta(q) / target)`` against log q (:class:`~sufficientdp._numerics.search.RegulaFalsi`, aimed half a
    tolerance above the root so that the passing side moves); bisection steps where the interpolation is unusable.
    ``near > 0`` also stops it at a passing q whose log excess is at least ``-near`` (the coarse search: the fine
    one starts there and steps by the slope, :func:`_newton_down`, so a last probe that only moves the failing end
    is not needed). Returns a q at which ``f(q) <= target`` was observed (or ``hi``)."""
    def test(q: float) -> tuple[bool, float]:
        v = f(q)
        return v <= target, log_excess(v, target)

    policy = RegulaFalsi(anchor="ok", log=True, margin_frac=0.02, lean=0.5 * rel_tol)
    return search(test, Bracket(fail=lo, ok=hi, fail_score=f_lo, ok_score=f_hi), policy,
                  max_probes=4 * _BISECT_STEPS, rtol=rel_tol,
                  until=(lambda b: b.ok_score >= -near) if near > 0.0 else None).ok


def local_q_for_domain(domain: Domain, epsilon: float, reports: int) -> float:
    """Local-DP flip probability for the domain: ``1 / (1 + e**(epsilon / (k d)))``, d its largest distance."""
    return local_q(local_distance(domain), epsilon, reports)


class _Run:
    """The state of one :func:`proven_q` search: the bounds it evaluates (counted for ``progress``), their cache,
    the pair types searched (``lead``), the e' followed (``hint``) and the lattice (``stage``)."""

    __slots__ = ("bits", "coarse_seen", "dom", "epsilon", "eta", "exact_at_n", "exact_l1", "fine_eps", "fine_etas",
                 "full_evs", "fulls", "hint", "hold", "larger_crowds", "lead", "population", "progress", "q_loc",
                 "reports", "stage", "steps", "total")

    def __init__(self, *, bits: int, population: int, epsilon: float, eta: float, reports: int, dom: Domain,
                 progress: Callable[[int, int], Any] | None, larger_crowds: bool) -> None:
        self.bits, self.population, self.epsilon, self.eta, self.reports = bits, population, epsilon, eta, reports
        self.dom, self.progress, self.larger_crowds = dom, progress, larger_crowds
        self.q_loc = local_q_for_domain(dom, epsilon, reports)
        self.steps = 0
        self.total = 2 * _BISECT_STEPS + 12
        self.exact_l1 = bits == 1 and reports == 1
        self.fulls: dict[float, TailResult] = {}
        self.full_evs: dict[float, Evaluation] = {}
        self.lead: set[str] = set()
        self.hint: float | None = None
        self.stage = _SEARCH_RESOLUTION
        self.fine_eps = 0.0  # the fine stage's e' has been searched (then held)
        self.hold = True  # hold the fine stage's e' (False: searched near the last one at every q)
        self.exact_at_n: dict[float, float] = {}
        self.fine_etas: dict[float, float] = {}  # the fine lattice's search bounds, by q
        self.coarse_seen: list[tuple[float, float]] = []  # the coarse lattice's (log q, log excess), for the slope

    def tick(self) -> None:
        self.steps += 1
        if self.progress is not None:
            self.progress(min(self.steps, self.total - 1), self.total)

    def done(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)

    def tail(self, q: float) -> TailResult:
        """:func:`proven_tail` at q (with the larger crowds when asked)."""
        return proven_tail(q=q, bits=self.bits, population=self.population, epsilon=self.epsilon,
                           reports=self.reports, domain=self.dom, larger_crowds=self.larger_crowds)

    def full(self, q: float) -> TailResult:
        # exactly the number tail, the collector and every other caller compute at q (one answer everywhere)
        if q not in self.fulls:
            self.tick()
            t0 = time.perf_counter()
            if self.exact_l1:
                self.fulls[q] = self.tail(q)
            else:
                ev = evaluate(q=q, population=self.population, epsilon=self.epsilon, reports=self.reports,
                              domain=self.dom, resolution=DEFAULT_RESOLUTION)
                self.full_evs[q] = ev
                self.fulls[q] = tail_from_evaluation(ev, q=q, bits=self.bits, population=self.population,
                                                     epsilon=self.epsilon, reports=self.reports, seconds=t0)
        return self.fulls[q]

    def fast(self, q: float) -> float:
        self.tick()
        if self.exact_l1 and self.larger_crowds and self.population + LARGER_CROWDS_WINDOW <= EXACT_L1_MAX_POPULATION:
            # search on the exact value at N; full() checks the larger crowds (above that N the larger-crowds bound
            # is the blanket bound, milliseconds: searched itself below, not the exact scan at N, 1.4 s at 10**6)
            if q not in self.exact_at_n:
                self.exact_at_n[q] = proven_tail(q=q, bits=self.bits, population=self.population,
                                                 epsilon=self.epsilon, reports=self.reports, domain=self.dom).eta
            return self.exact_at_n[q]
        if self.exact_l1:
            return self.full(q).eta
        # e' follows q by a local search around the previous one (any e' gives a valid bound); on the fine
        # lattice, where q moves by a few percent at most, it is searched once and then held
        fixed = self.hint if self.hint is not None and self.fine_eps == self.stage and self.hold else None
        ev = evaluate(q=q, population=self.population, epsilon=self.epsilon, reports=self.reports, domain=self.dom,
                      only=frozenset(self.lead), epsilon_prime_hint=self.hint, resolution=self.stage,
                      epsilon_prime=fixed)
        if ev.epsilon_prime < self.epsilon:  # (local DP reports e' = epsilon: no e' to follow)
            self.hint = ev.epsilon_prime
        if self.stage == _FINE_RESOLUTION:
            self.fine_eps = self.stage
            self.fine_etas[q] = ev.eta
        elif ev.eta > 0.0:
            self.coarse_seen.append((math.log(q), log_excess(ev.eta, self.eta)))
        return ev.eta

    def fast_test(self, q: float) -> tuple[bool, float]:
        """The lead types' bound at q as a search test: passes when its log excess is ``<= 0``."""
        f = log_excess(self.fast(q), self.eta)
        return f <= 0.0, f

    def full_test(self, q: float) -> tuple[bool, float]:
        """The full bound at q as a search test."""
        v = self.full(q).eta
        return v <= self.eta, log_excess(v, self.eta)

    def scan(self, q: float) -> Evaluation:
        # every pair type, coarse lattice: where the halving looks, and which types lead
        self.tick()
        ev = evaluate(q=q, population=self.population, epsilon=self.epsilon, reports=self.reports, domain=self.dom,
                      epsilon_prime_hint=self.hint, resolution=_SEARCH_RESOLUTION)
        if ev.epsilon_prime < self.epsilon:
            self.hint = ev.epsilon_prime
        return ev

    def leaders(self, ev: Evaluation) -> set[str]:
        if not ev.by_type:
            return set()
        top = max(v for _, v in ev.by_type)
        ranked = sorted(ev.by_type, key=lambda kv: -kv[1])
        return {k for k, v in ranked[:_LEAD_MAX] if v >= 0.25 * top} | {ranked[0][0]}


def _blanket_passes(run: _Run, q: float) -> bool:
    """At L = 1 (exact search): the all-collections blanket bound at q (coarse lattice, milliseconds) is at most
    half the target. It bounds the exact worst case from above, so the exact value passes there too: the halving
    skips the exact scan (up to seconds at large N) at such q. Half, not all, of the target: a margin against the
    two computations' last bits."""
    ev = evaluate(q=q, population=run.population, epsilon=run.epsilon, reports=run.reports, domain=run.dom,
                  resolution=_SEARCH_RESOLUTION)
    return ev.eta <= 0.5 * run.eta


def _halve(run: _Run) -> tuple[float | None, float, float, float]:
    """Halve q from local DP's (eta = 0 there) until the bound over every type fails (or q is below 1e-12), the
    leading types joining ``run.lead``. Returns ``(lo, f_lo, hi, f_hi)``: the failing q (None if none) and the
    passing one, with their log excesses.

    At L = 1 the exact value is computed only where the blanket bound does not already pass
    (:func:`_blanket_passes`) and at the last passing q: the same points, verdicts and end values as evaluating
    it at every step, so the same search after."""
    if run.exact_l1:
        cheap = walk(lambda x: (_blanket_passes(run, x), math.nan), run.q_loc, passes=True,
                     step=geometric(0.5, floor=1e-12), max_steps=60, start_score=-math.inf)
        start, start_score = cheap.last, -math.inf
        if cheap.last != run.q_loc:  # observed to pass by the blanket bound: the exact value there
            start_score = log_excess(run.fast(cheap.last), run.eta)
            if start_score > 0.0:  # (not expected: the blanket bound is above the exact value) halve from the top
                start, start_score = run.q_loc, -math.inf

        def exact(x: float) -> tuple[bool, float]:
            fx = run.fast(x)
            return fx <= run.eta, log_excess(fx, run.eta)

        w = walk(exact, start, passes=True, step=geometric(0.5, floor=1e-12),
                 max_steps=60 - round(math.log2(run.q_loc / start)), start_score=start_score)
        if w.hit is None:
            return None, 0.0, w.last, w.last_score
        return w.hit, w.hit_score, w.last, w.last_score

    def test(x: float) -> tuple[bool, float]:
        ev = run.scan(x)
        run.lead |= run.leaders(ev)
        return ev.eta <= run.eta, log_excess(ev.eta, run.eta)

    w = walk(test, run.q_loc, passes=True, step=geometric(0.5, floor=1e-12), max_steps=60, start_score=-math.inf)
    if w.hit is None:
        return None, 0.0, w.last, w.last_score
    return w.hit, w.hit_score, w.last, w.last_score


def _newton_down(run: _Run, hi: float, f_hi: float) -> tuple[Callable[[float], tuple[bool, float]],
                                                              Callable[[float, int], tuple[float, bool] | None]]:
    """The fine lattice's walk down from ``hi``, a passing coarse root whose fine log excess is ``f_hi``: its test and
    its step. Each step goes to the root predicted from the walk's last point with the slope of ``log eta`` in
    ``log q`` (at first that of the coarse search's two evaluations nearest its root, :func:`~.search.log_slope`;
    then the secant of the walk's last two points, when negative), at most :data:`_POLISH` (relative), and
    :data:`_PAST` beyond it, a margin that doubles with every step that still passes (up to :data:`_POLISH`: a
    walk that keeps passing moves by 6% at most, by at least 3% from its tenth step on); none from below 1e-12.

    A good prediction fails just below the root, so the bracket handed to the regula falsi is about as narrow as
    its tolerance. (The walk used to step 3% down at once: far below the root, where the bound is large and its
    lattices costly; L = 128, k = 2: 1.9 s of a 9 s calibration.)"""
    at = [math.log(hi), f_hi, log_slope(run.coarse_seen)]  # the walk's end (log q), its log excess, the slope

    def test(x: float) -> tuple[bool, float]:
        passed, fx = run.fast_test(x)
        q, f, s = at
        if fx != f and math.log(x) != q:
            secant = (fx - f) / (math.log(x) - q)
            s = secant if secant < 0.0 else s
        at[:] = [math.log(x), fx, s]
        return passed, fx

    def step(x: float, k: int) -> tuple[float, bool] | None:
        if k and not x > 1e-12:
            return None
        f, s = at[1], at[2]
        d = min(0.0, max(-f / s, math.log1p(-_POLISH)))  # (f <= 0 and s < 0: a step down)
        return math.exp(math.log(x) + d) * (1.0 - min(_POLISH, _PAST * 2.0**k)), False

    return test, step


def _to_fine(run: _Run, hi: float) -> float:
    """The coarse lattice was only for speed: its bound is looser, so the fine root lies at or below the coarse
    root ``hi`` (or a little above, where the fine e' search differs): bracket it on the fine lattice (stepping up
    while the fine bound fails, else walking down by Newton-like steps, :func:`_newton_down`, while the lower end
    still passes) and search it."""
    run.stage = _FINE_RESOLUTION
    f_hi = log_excess(run.fast(hi), run.eta)
    if f_hi > 0.0:  # fine lattice fails at the coarse root: step up (while the log excess is > 0; nan stops)
        def failing(q: float) -> tuple[bool, float]:
            f = log_excess(run.fast(q), run.eta)
            return not f > 0.0, f

        up = walk(failing, hi, passes=False, step=geometric(1.0 + _POLISH / 4, limit=run.q_loc), max_steps=8,
                  start_score=f_hi)
        if up.steps:
            if up.hit is not None and up.hit_score <= 0.0:
                return _illinois(run.fast, up.last, up.hit, up.last_score, up.hit_score, run.eta)
            return up.last if up.hit is None else up.hit  # no pass within 8 steps (or a nan): that q is kept
    # (no step budget: the 1e-12 floor ends the walk within ~900 steps; 1 << 20 never binds)
    test, step = _newton_down(run, hi, f_hi)
    down = walk(test, hi, passes=True, step=step, max_steps=1 << 20, start_score=f_hi)
    if down.hit is not None:
        below, f_below, hi, f_hi = down.hit, down.hit_score, down.last, down.last_score
    else:  # stopped at or below 1e-12, still passing: the search runs between it and the point before
        below, f_below, hi, f_hi = down.last, down.last_score, down.prior, down.prior_score
    return _illinois(run.fast, below, hi, f_below, f_hi, run.eta)


def _widen(run: _Run, hi: float, res: TailResult) -> float | None:
    """A type outside the searched ones, or the full e' search, fails at ``hi``: the types that fail there join the
    searched ones. Returns the new failing end's log excess (None if no type is new)."""
    ev = run.full_evs[hi]
    new = {k for k, v in ev.by_type if v > run.eta} - run.lead
    if not new:
        return None
    run.lead |= new
    if ev.epsilon_prime < run.epsilon:
        run.hint = ev.epsilon_prime
    run.fine_eps = 0.0  # search e' again for the new types
    f_lo = log_excess(run.fast(hi), run.eta)
    if f_lo <= 0.0:  # the lead types pass at hi although a new type fails: the new one decides
        f_lo = log_excess(res.eta, run.eta)
    return f_lo


def _steep_below(run: _Run, hi: float, eta_hi: float) -> bool:
    """Whether the full bound, at least half the target at ``hi``, is predicted above 1.5 times the target one
    :data:`_FULL_STEP` lower: log eta extrapolated linearly in log q from the full bound at ``hi``, with the slope of
    the fine search's own bound between ``hi`` and its nearest failing value below. (On 120 calibrations of a grid,
    L = 2-64, N = 1e2-1e7, the look below moved q only where the full bound at hi was under 13% of the target;
    session 14.) The slope is taken between two values of the same bound: until session 18 it ran from the full
    bound at hi to the search's bound below, which differ in e' (L = 64, N = 1e6, epsilon = 0.1, eta = 0.05: 0.030
    at hi and 0.051 just 0.01% below gave a slope of -5,400, the look was skipped, and 0.2% lower passed at 0.048);
    of the 5 skips of 9 calibrations checked then (L = 8-128), 4 are still taken, and the same q is returned in
    all 9. A skip only saves time: a look that runs and finds nothing keeps q.

    A prediction above :data:`_STEEPEST` times the target is not trusted (the look runs): at very small targets the
    search's bound, whose e' is held, jitters by factors of 2 within 1e-4 of q, so its local slope can say "12,600
    times the target 0.2% lower" where the full bound, its e' searched, still passes there (L = 24, N = 6.2e6,
    epsilon = 0.542, eta = 1.56e-9: the skip kept q = 0.4770 where the look and the search after it find 0.4666,
    2.2% less noise; session 22). The skips that pay (one full bound of every type, 1-2 s at L = 128-256) were
    predicted at 2-39 times the target on the calibrations checked."""
    at_hi = run.fine_etas.get(hi)
    below = [(q, e) for q, e in run.fine_etas.items() if q < hi and e > run.eta]
    if not eta_hi >= 0.5 * run.eta or not below or at_hi is None or not at_hi > 0.0:
        return False
    q_f, eta_f = max(below)
    slope = math.log(eta_f / at_hi) / math.log(q_f / hi)
    predicted = math.log(eta_hi) + slope * math.log1p(-_FULL_STEP)  # (in logs: a steep slope cannot overflow)
    return math.log(1.5 * run.eta) < predicted <= math.log(_STEEPEST * run.eta)


def _look_below(run: _Run, hi: float, eta_hi: float) -> tuple[float, bool]:
    """Near-minimal against the full bound itself: look just below (the fast bound and the full one differ a little
    in e'); move down by :data:`_FULL_STEP` while the full bound still passes there (skipped when the full bound at
    hi is already within 3% of the target: 0.2% lower in q it is above it, the bound rising ~4% per 0.1% of q near
    the root in every case measured; and when it is predicted well above the target there, :func:`_steep_below`:
    one full bound of every type, 1-2 s at L = 128-256). Returns the lowest q observed to pass and whether it
    still passed after :data:`_LOOK_STEPS` steps (room below: :func:`_search_again`); a bound at hi below
    :data:`_FAR_BELOW` times the target has room without looking (on 84 calibrations of a grid, L = 5-64,
    N = 1e3-1e7, epsilon = 0.05-2, the bound at the searched root was either at least 5% of the target or, once,
    2e-4 of it, where the six steps all passed)."""
    def step(x: float, k: int) -> tuple[float, bool] | None:
        below = x * (1.0 - _FULL_STEP)
        return None if below <= 0.0 else (below, False)

    def test(q: float) -> tuple[bool, float]:
        return not run.full(q).eta > run.eta, math.nan

    if eta_hi < _FAR_BELOW * run.eta:  # (six 0.2% steps do not raise a bound 100-fold: search again at once)
        return hi, True
    skip = eta_hi >= 0.97 * run.eta or _steep_below(run, hi, eta_hi)
    w = walk(test, hi, passes=True, step=step, max_steps=0 if skip else _LOOK_STEPS)
    return w.last, w.hit is None and w.steps == _LOOK_STEPS


def _search_again(run: _Run, hi: float) -> float:
    """The full bound still passes :data:`_LOOK_STEPS` steps below the searched root ``hi``: the fine search's e',
    searched once where it began and then held, was far from the best e' where it ended (seen at epsilon = 0.05,
    N = 10^7, L = 40: the fast bound at its root 4,000 times the full one, q 2.9% above the smallest passing).
    Search again below ``hi`` with e' searched near the last one at every q: walk down by 1%, 2%, 4%, ... until the
    lead types fail, regula falsi between, then the full bound at the root (stepping up while it fails; ``hi``
    passes). Returns a q observed to pass the full bound."""
    run.hold = False
    f_hi = log_excess(run.fast(hi), run.eta)

    def step(x: float, k: int) -> tuple[float, bool] | None:
        below = x * (1.0 - min(0.5, 0.01 * 2.0**k))
        return None if below <= 1e-12 else (below, False)

    down = walk(run.fast_test, hi, passes=True, step=step, max_steps=40, start_score=f_hi)
    if down.hit is None:  # (not expected: the full bound passed just below) keep the lowest q that passed
        below = down.last
    else:
        below = _illinois(run.fast, down.hit, down.last, down.hit_score, down.last_score, run.eta)
    if below < hi and run.full(below).eta <= run.eta:
        return below
    up, passed = _step_up(run, below)
    return up if passed and up < hi else hi


def _step_up(run: _Run, hi: float) -> tuple[float, bool]:
    """The full bound fails slightly above the searched root (every type is searched, so it is e' or the lattice's
    jitter): step q up by small relative amounts, 2e-4, 6e-4, ... (eta falls steeply in q; local DP's q passes).
    (The larger-crowds bound at L = 1 can sit well above the exact value the search ran on: steps 1%, 3%, ...,
    then the last step narrowed with the bound itself, to 1e-3.) Returns ``(q, passed)``: the q observed to pass,
    or the last q that failed."""
    if run.larger_crowds and run.exact_l1:
        return _wide_step_up(run, hi)
    steps = [2e-4]
    for _ in range(11):
        steps.append(steps[-1] * 3.0)

    def step(x: float, k: int) -> tuple[float, bool] | None:
        return None if x >= run.q_loc else (min(run.q_loc, x * (1.0 + steps[k])), False)

    w = walk(run.full_test, hi, passes=False, step=step, max_steps=12,
             start_score=log_excess(run.full(hi).eta, run.eta))
    if w.hit is None:
        return w.last, False
    return w.hit, True


def _wide_step_up(run: _Run, hi: float) -> tuple[float, bool]:
    """:func:`_step_up` for the larger-crowds bound at L = 1, which can sit well above the exact value the search
    ran on (twice the target, 12% higher in q, at N = 1e5): Newton-like steps in log q on the bound's log excess,
    the slope from the last two probes (the first step 1%), aimed 1% past the predicted root (each step 0.5% to
    50%, up to local DP's q), then regula falsi with the bound itself to 1e-3. About 5 bounds instead of the 8 of
    steps 1%, 3%, 9%, ... (each bound runs several exact scans). Returns ``(q, passed)`` as :func:`_step_up`."""
    at = [hi, log_excess(run.full(hi).eta, run.eta), math.nan]  # the last probe, its log excess, the slope

    def test(x: float) -> tuple[bool, float]:
        q, f, s = at
        fx = log_excess(run.full(x).eta, run.eta)
        if math.isfinite(fx) and math.isfinite(f) and x != q:
            slope = (fx - f) / (math.log(x) - math.log(q))
            s = slope if slope < 0.0 else s
        at[:] = [x, fx, s]
        return fx <= 0.0, fx

    def step(x: float, k: int) -> tuple[float, bool] | None:
        if not x < run.q_loc:
            return None
        f, s = at[1], at[2]
        d = 0.01 if not (math.isfinite(s) and math.isfinite(f)) else min(max(-f / s + 0.01, 0.005), math.log(1.5))
        return min(run.q_loc, x * math.exp(d)), False

    w = walk(test, hi, passes=False, step=step, max_steps=40, start_score=at[1])
    if w.hit is None:
        return w.last, False
    return _illinois(lambda x: run.full(x).eta, w.last, w.hit, w.last_score, w.hit_score, run.eta, _COARSE_TOL), True


def proven_q(*, bits: int, population: int, epsilon: float, eta: float, reports: int = 1,
             domain: Domain | None = None, progress: Callable[[int, int], Any] | None = None,
             larger_crowds: bool = False) -> tuple[float, TailResult, list[str]]:
    """Smallest q (to about 2e-4 relative) with the all-collections bound on eta at most ``eta``.

    Returns ``(q, tail, notes)`` where ``tail`` is :func:`~sufficientdp.ratio.proven.proven_tail` at q.

    The search: halve q from local DP's until the bound over *every* pair type (coarse lattice) fails; the types
    that lead there (within a factor 4 of the worst, at most :data:`_LEAD_MAX`) are searched on the coarse lattice,
    then on the fine one, with e' following q; the answer is checked with the full bound (every type, its own e'
    search: exactly :func:`proven_tail`), and a type that fails it joins the searched ones; where the full bound
    still passes :data:`_LOOK_STEPS` steps of 0.2% below, the fine search's held e' was stale and the search runs
    again with e' searched at every q (:func:`_search_again`). The bound is not exactly monotone in q (the
    lattice's slack jitters), so the answer is the smallest q *observed* to pass near the root, to about
    :data:`_REL_TOL`.

    ``larger_crowds=True``: the bound must also hold for every crowd of more than ``population`` people
    (:func:`~sufficientdp.ratio.proven.proven_tail`'s flag; it changes only L = 1, where the exact value at N is
    not monotone in N). The search then runs on the exact value at N and the answer is checked, and stepped up,
    with the larger-crowds bound.

    Raises:
        CalibrationError: if no q below local DP's meets the target (then local DP's q is the answer; callers
            use it).
    """
    dom = domain if domain is not None else Domain(bits=bits)
    run = _Run(bits=bits, population=population, epsilon=epsilon, eta=eta, reports=reports, dom=dom,
               progress=progress, larger_crowds=larger_crowds)
    # one bit, larger crowds: the bound's exact deltas run two at a time, the second in a helper process
    # (ratio.proven._in_pairs: the same values; N = 10^5: 2.9 -> 2.3 s, N = 5000: 1.45 -> 0.87 s); below
    # LARGER_CROWDS_DELTA_ONLY people they take milliseconds and the helper's start-up (~0.08 s) would not pay;
    # above EXACT_L1_MAX_POPULATION - LARGER_CROWDS_WINDOW the bound is the blanket's, with no exact delta
    helper = (run.exact_l1 and larger_crowds and second_process_allowed()
              and LARGER_CROWDS_DELTA_ONLY <= population <= EXACT_L1_MAX_POPULATION - LARGER_CROWDS_WINDOW)
    with helper_process(enabled=helper):
        return _search(run)


def _search(run: _Run) -> tuple[float, TailResult, list[str]]:
    """The search of :func:`proven_q`."""
    population, eta = run.population, run.eta
    q_loc = run.q_loc
    notes: list[str] = []
    if population == 1:
        notes.append("population 1: no crowd to hide in; local DP's q is used.")
        return q_loc, run.tail(q_loc), notes

    lo, f_lo, hi, f_hi = _halve(run)
    while lo is not None:
        coarse_stage = not run.exact_l1 and run.stage > _FINE_RESOLUTION
        if not run.exact_l1:  # the lead types' bound at the bracket's ends (the halving measured every type)
            f_lo = log_excess(run.fast(lo), eta) if f_lo <= 0.0 else f_lo
        hi = _illinois(run.fast, lo, hi, f_lo, f_hi, eta, _COARSE_TOL if coarse_stage else _REL_TOL,
                       _NEAR if coarse_stage else 0.0)
        if coarse_stage:
            hi = _to_fine(run, hi)
        res = run.full(hi)
        if res.eta > eta and not run.exact_l1:
            widened = _widen(run, hi, res)
            if widened is not None:  # search again from hi (failing) up to local DP's q
                lo, f_lo = hi, widened
                hi, f_hi = q_loc, -math.inf
                continue
        if res.eta <= eta:
            hi, room = _look_below(run, hi, res.eta)
            if room:
                hi = _search_again(run, hi)
            if hi < q_loc:
                run.done()
                return hi, run.full(hi), notes
            break
        hi, passed = _step_up(run, hi)
        if passed and hi < q_loc:
            run.done()
            return hi, run.full(hi), notes
        break
    res = run.full(hi) if hi < q_loc else run.tail(q_loc)
    if res.eta > eta:  # pragma: no cover - local DP's q has eta = 0 by construction
        raise CalibrationError(f"no flip probability q < 0.5 meets eta <= {eta} with the proven bound")
    if hi == q_loc:
        notes.append("no flip probability below local DP's meets the target with the proven bound; local DP's q "
                     "is used (the privacy loss then never exceeds epsilon).")
    run.done()
    return hi, res, notes
