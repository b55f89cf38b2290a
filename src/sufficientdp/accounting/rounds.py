"""Sufficient DP over T rounds: the privacy loss of T independent anonymized releases (docs/proofs/rounds.md).

A campaign runs T rounds. In every round each of the N people sends k fresh reports (bit-vector randomized
response, seed 001 §1.3) and that round's histogram is released. For neighbouring collections the privacy loss of
the T histograms together is the **sum** of the per-round losses, because the rounds are independent given the
data. This module bounds ``eta_T(epsilon) = P[L_1 + ... + L_T > epsilon]`` over every pair of neighbouring
collections of the domain (the statement of seed 001 eq. 1.7, ``papers/001_3d8ddaba8b46cf9c.txt``, for the
whole sequence), and the hockey-stick ``delta_T(epsilon)`` with it.

Why it holds (proof: docs/proofs/rounds.md, steps 1-5): the T histograms are a post-processing of T·k one-report
releases, each dominated by its pair type's privacy-blanket pair (docs/proofs/blanket.md step 2); rigorous upper
bounds on that pair's hockey-stick curve at a few dozen points, joined by their lower convex hull ("connect the
dots", Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022), are the curve of a dominating discrete pair
(:mod:`sufficientdp.loss.profile`), which is moved onto a grid and composed T·k times by one FFT power; then
``eta_T(epsilon) <= min_{e' < epsilon} delta_n(e') / (1 - e**(e' - epsilon))``, the maximum over pair types.

The simple rule is reported next to it as a fallback (:func:`simple_rule`): the union bound
``P[sum L_t > epsilon] <= sum P[L_t > epsilon / T]`` gives ``eta_T(epsilon) <= T eta_1(epsilon / T)`` with
``eta_1`` a one-round bound from the same curves. Both are valid upper bounds; the result is the smaller.

``values="changing"`` (the default of :func:`rounds_tail`) covers collections that may change from round to round
(fixed in advance, one person's values differing): it composes one curve above every pair type's (their pointwise
maximum). ``values="fixed"`` covers a collection that stays the same over the T rounds (the pair type is the same
in every round).

One round (T = 1) is one release: :func:`rounds_tail` answers with the one-release bounds instead (docs/proofs/rounds.md,
"One round").

The homogeneous configuration (N - 1 zero vectors and one outlier, seed 001 §3) is composed exactly where its
per-round privacy-loss distribution can be enumerated (:func:`homogeneous_rounds_tail`): a *lower* reference for
the worst case over all collections, bracketed rigorously (losses rounded down / up onto a grid).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from .._errors import ParameterError
from .._validation import check_int, check_open_interval, check_positive_finite
from ..loss.profile import Composition, DominatingCurve, compose_curve, envelope, is_below, lattice_power
from ..loss.result import Direction, TailResult
from ..ratio.proven import (
    DEFAULT_POINTS,
    Domain,
    PairType,
    blanket_mass,
    check_composable,
    checked_domain,
    dominating_curve,
    local_distance,
    pair_type_pool,
    pair_types,
    types_by_name,
    worth_a_helper,
)
from .shuffled import homogeneous_histogram_pld

if TYPE_CHECKING:
    from .._offload import Helper, Pending

__all__ = [
    "MAX_ROUNDS",
    "MAX_TOTAL_REPORTS",
    "VALUES",
    "DominatingCurve",
    "compose_curve",
    "dominating_curve",
    "homogeneous_rounds_tail",
    "rounds_tail",
    "simple_rule",
]

MAX_ROUNDS = 1000
"""Largest number of rounds T accepted."""
MAX_TOTAL_REPORTS = 10_000
"""Largest number of one-report releases T·k composed (each person's reports over all rounds)."""
VALUES = ("fixed", "changing")

DEFAULT_RESOLUTION = 5e-4
"""Lattice resolution of the blanket's compound-sum bracket for the answer (as :mod:`sufficientdp.ratio.proven`)."""
SEARCH_RESOLUTION = 4e-3
"""A coarser lattice (looser; faster where the lattice, not the heavy atoms, costs most) for the calibration's
searches."""
MIN_RESOLUTION = 1e-12
"""Finest resolution accepted (the answer stops moving well above it: 1e-12 and 1e-20 give the same floats)."""
_SCREEN_POINTS = 26
"""Bounds of every pair type's first curve (:func:`evaluate_rounds`: 17 evenly spaced, 0 and one batch of 8 where
the hull leaves the most room), which decides the types bounded with all ``points``."""
_SPLIT_RESOLUTION = 2e-2
"""Coarsest lattice at which :class:`_Curves` shares the types' curves with a helper process: the calibration's first
evaluation (every type, 18 points at 1.5e-2) takes about 1 s at L = 40, the final one (26 points at 5e-4) about
4 s; a coarser pass is too quick for a second interpreter's start-up."""
_MAX_TYPES = 64  # pair types of a weight <= w domain before the bound for all of {0,1}^L is used instead


def _cube_instead(domain: Domain) -> bool:
    """A weight domain with more than :data:`_MAX_TYPES` pair types: bounded as all of {0,1}^L (which covers it)."""
    return domain.kind == "weight" and _type_count(domain) > _MAX_TYPES


def evaluated_domain(domain: Domain) -> Domain:
    """The domain :func:`evaluate_rounds` bounds for ``domain``: all of {0,1}^L for a weight domain with too many pair
    types or report classes (it covers it), else ``domain`` itself (a ParameterError when neither is within the
    class limit, before any work)."""
    return checked_domain(Domain(bits=domain.bits) if _cube_instead(domain) else domain)[0]


# ------------------------------------------------------------------------------------------------- the T rounds
def _check(q: Any, bits: Any, population: Any, epsilon: Any, rounds: Any, reports: Any,
           values: Any) -> tuple[float, int, int, float, int, int]:
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1, maximum=100_000)
    population = check_int("population", population, minimum=1, maximum=10**12)
    epsilon = check_positive_finite("epsilon", epsilon)
    rounds = check_int("rounds", rounds, minimum=1, maximum=MAX_ROUNDS)
    reports = check_int("reports", reports, minimum=1, maximum=MAX_TOTAL_REPORTS)
    if rounds * reports > MAX_TOTAL_REPORTS:
        raise ParameterError(f"rounds * reports must be <= {MAX_TOTAL_REPORTS} (one-report releases composed); "
                             f"got {rounds} * {reports} = {rounds * reports}")
    if values not in VALUES:
        raise ParameterError(f"values must be one of {VALUES}; got {values!r}")
    return q, bits, population, epsilon, rounds, reports


def _domain(bits: int, domain: Domain | None) -> Domain:
    dom = domain if domain is not None else Domain(bits=bits)
    if dom.bits != bits:
        raise ParameterError(f"domain.bits must equal bits ({bits}); got {dom.bits}")
    return dom


def _type_count(domain: Domain) -> int:
    """Number of pair types of a weight <= w domain (:func:`~sufficientdp.ratio.proven.pair_types`)."""
    w, L = int(domain.max_weight or 0), domain.bits
    return sum(1 for c in range(w + 1) for a in range(w - c + 1) for b in range(w - c + 1)
               if a + b >= 1 and a + b + c <= L)


@dataclass(frozen=True, slots=True)
class RoundsEvaluation:
    """The composed bound at one q (before the fallback): eta, delta, e', worst pair type, per-type etas, and the log
    of the blanket's mass the bound used (that of the domain it bounds: all of {0,1}^L for a weight domain it
    stands in for; nan where not given)."""

    eta: float
    delta: float
    epsilon_prime: float
    worst: str
    by_type: tuple[tuple[str, float], ...]
    composition: Composition | None
    evaluations: int
    notes: tuple[str, ...]
    curves: tuple[DominatingCurve, ...] = ()
    log_gamma: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the numbers, ``by_type`` as ``{type: eta}``, the composition's numbers (or None) and, of
        the curves, their names and vertex counts (the vertices themselves stay on :attr:`curves`)."""
        comp = self.composition
        return {
            "eta": self.eta, "delta": self.delta, "epsilon_prime": self.epsilon_prime, "worst": self.worst,
            "by_type": dict(self.by_type),
            "composition": None if comp is None else {
                "eta": comp.eta, "delta": comp.delta, "epsilon_prime": comp.epsilon_prime, "grid": comp.grid,
                "cells": comp.cells, "float_allowance": comp.float_allowance},
            "evaluations": self.evaluations, "notes": list(self.notes),
            "curves": [{"name": c.name, "vertices": int(c.epsilons.size), "evaluations": c.evaluations,
                        "resolution": c.resolution} for c in self.curves],
        }


def evaluate_rounds(*, q: float, population: int, epsilon: float, n: int, domain: Domain, values: str = "fixed",
                    resolution: float = DEFAULT_RESOLUTION, points: int = DEFAULT_POINTS,
                    only: frozenset[str] | None = None,
                    progress: Callable[[int, int], Any] | None = None,
                    cache: dict[tuple[Any, ...], Any] | None = None) -> RoundsEvaluation:
    """The composed all-collections bound for ``n`` one-report releases at q (no input checks).

    With several pair types and more than :data:`_SCREEN_POINTS` points, every type's curve from its first
    :data:`_SCREEN_POINTS` bounds first (a valid curve: the lower hull of fewer upper bounds lies above the one of
    more), then, from the largest composed bound down, the curve of ``points`` bounds (the first ones reused) of each
    type that can still matter: ``values="fixed"``, a type whose first curve composes to an eta (then a delta) above
    the largest of the full curves so far; ``"changing"``, a type whose first curve does not lie under the envelope of the full curves so
    far (the envelope is then composed). ``only`` restricts the pair types (the result is then a bound for those
    types only; calibration searches with it and re-checks every type). ``cache`` memoizes the curves and the
    bounds behind them (by q, N, domain, type, lattice and points) across calls.
    """
    notes: list[str] = []
    eps0 = local_distance(domain) * math.log((1.0 - q) / q)  # (local DP is decided on the domain asked for)
    if _cube_instead(domain):
        notes.append(f"the weight <= {domain.max_weight} domain has more than {_MAX_TYPES} pair types; the "
                     "bound for all of {0,1}^L is used, which covers it (its blanket is valid for every sub-domain; looser)")
        domain = Domain(bits=domain.bits)
    domain, size_notes = checked_domain(domain)  # (the class limit of every all-collections bound, before any work)
    notes.extend(size_notes)
    log_gamma = blanket_mass(domain, q)
    if n * eps0 <= epsilon:  # (no stand-in domain is bounded: its notes do not apply)
        return RoundsEvaluation(0.0, 0.0, epsilon, "local", (), None, 0, (
            "local DP: the privacy loss of every one-report release is at most epsilon_0, so the total never "
            "exceeds n * epsilon_0 <= epsilon",), log_gamma=log_gamma)
    types = [t for t in pair_types(domain, q) if only is None or t.name in only]
    if not types:
        raise ParameterError(f"no pair type of the domain matches {sorted(only or [])}")
    two = len(types) > 1 and points > _SCREEN_POINTS  # one type, or few points: a single pass
    first = _SCREEN_POINTS if two else points
    total = len(types) * (first + (points if two else 0))
    done = [0]
    lock = threading.Lock()

    def tick() -> None:
        with lock:
            done[0] += 1
            if progress is not None:
                progress(min(done[0], total), total)

    # The types' curves are independent pure functions: on two threads, or here and in a helper process, on large
    # domains (pair_type_pool, _Curves). The refinement below decides type by type, in order, exactly as one thread
    # would; the next type that would be refined as things stand is bounded alongside (used if the decision reaches
    # it, else dropped).
    with pair_type_pool(types) as pool, _Curves(q=q, population=population, domain=domain, resolution=resolution,
                                                log_gamma=log_gamma, cache=cache, tick=tick, pool=pool,
                                                types=types) as source:
        curves = source.first_curves(first)
        evaluations = sum(c.evaluations for c in curves.values())
        ahead: dict[str, DominatingCurve] = {}

        def refined(name: str, after: str | None) -> DominatingCurve:
            if name not in ahead and after is not None:
                ahead.update(source.side_by_side(name, after, points))
            return ahead.pop(name) if name in ahead else source.full(name, points)

        if values == "changing":
            if two:
                # from the largest first bound down; a type whose first curve lies under the envelope of the full
                # curves already computed cannot raise it (its own full curve may replace it or not: either is valid)
                order = sorted(curves, key=lambda k: -compose_curve(curves[k], n, epsilon).eta)
                full_curves: dict[str, DominatingCurve] = {}
                env: DominatingCurve | None = None  # of the full curves so far (recomputed when one is added)
                for i, name in enumerate(order):
                    if env is not None and is_below(curves[name], env):
                        continue
                    after = next((k for k in order[i + 1:] if env is None or not is_below(curves[k], env)), None)
                    full_curves[name] = refined(name, after)
                    evaluations += full_curves[name].evaluations - curves[name].evaluations
                    env = envelope(list(full_curves.values()))
                curves.update(full_curves)
            comp = compose_curve(envelope(list(curves.values())), n, epsilon)
            if progress is not None:
                progress(total, total)
            return RoundsEvaluation(comp.eta, comp.delta, comp.epsilon_prime, "envelope of every pair type", (),
                                    comp, evaluations, tuple(notes), tuple(curves.values()), log_gamma)
        comps = {name: compose_curve(c, n, epsilon) for name, c in curves.items()}
        deltas = {name: c.delta for name, c in comps.items()}  # per type, the smaller of its curves' deltas
        if two:
            full_done: set[str] = set()

            def refine_down(size: Callable[[str], float]) -> int:
                """Full curves from the largest ``size`` (eta or delta) down while it can still raise the maximum
                over the types; returns the bounds computed."""
                best = max((size(k) for k in full_done), default=-1.0)
                order = sorted((k for k in comps if k not in full_done), key=lambda k: -size(k))
                count = 0
                for i, name in enumerate(order):
                    if size(name) <= best:
                        break
                    after = order[i + 1] if i + 1 < len(order) and size(order[i + 1]) > best else None
                    full = refined(name, after)
                    full_done.add(name)
                    count += full.evaluations - curves[name].evaluations
                    fc = compose_curve(full, n, epsilon)
                    deltas[name] = min(deltas[name], fc.delta)
                    if fc.eta < comps[name].eta:
                        comps[name], curves[name] = fc, full
                    best = max(best, size(name))
                return count

            evaluations += refine_down(lambda k: comps[k].eta)
            evaluations += refine_down(lambda k: deltas[k])  # (a type whose delta, not eta, is the largest)
    if progress is not None:
        progress(total, total)
    worst = max(comps, key=lambda k: comps[k].eta)
    delta = max(deltas.values())
    w = comps[worst]
    return RoundsEvaluation(w.eta, delta, w.epsilon_prime, worst, tuple((k, c.eta) for k, c in comps.items()), w,
                            evaluations, tuple(notes), tuple(curves.values()), log_gamma)


class _Curves:
    """The dominating curves of one evaluation's pair types: memoized by type and number of points (``cache``, when
    given, across evaluations) with the bounds behind them (a curve of more points reuses those of fewer: the same
    floats), computed here, on the pool's second thread, or in a helper process.

    The helper (:class:`sufficientdp._offload.Helper`, a fresh interpreter) is the one of the enclosing
    :func:`sufficientdp._offload.helper_process` block (a calibration's search: one for all its evaluations), or is
    started for this evaluation on large domains (:func:`~sufficientdp.ratio.proven.worth_a_helper` decides: enough
    report classes and types, a spare core, not forbidden); at :data:`_SPLIT_RESOLUTION` or finer and with two
    types or more only. It computes the same pure functions (the types rebuilt there
    from ``domain`` and ``q``, the bounds already known sent along), so every curve is the float this process
    would compute; its curves and bounds join the memos and the cache as if computed here. Used as a ``with``
    block: the helper ends with it."""

    def __init__(self, *, q: float, population: int, domain: Domain, resolution: float, log_gamma: float,
                 cache: dict[tuple[Any, ...], Any] | None, tick: Callable[[], None], pool: Any,
                 types: list[PairType]) -> None:
        self.q, self.population, self.domain, self.resolution = q, population, domain, resolution
        self.log_gamma, self.cache, self.tick, self.pool, self.types = log_gamma, cache, tick, pool, types
        self.by_name = {pt.name: pt for pt in types}
        self.memos: dict[tuple[Any, ...], dict[float, float]] = (
            {} if cache is None else cache.setdefault(("memos",), {}))
        self.helper: Helper | None = None
        self._own = False  # whether the helper is this evaluation's (else a search's, current_helper())
        if resolution <= _SPLIT_RESOLUTION and len(types) > 1:
            from .._offload import Helper, current_helper

            self.helper = current_helper()
            if self.helper is None and worth_a_helper(types):
                self.helper, self._own = Helper(), True

    def __enter__(self) -> _Curves:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.helper is not None and self._own:
            self.helper.close()

    def _key(self, name: str, points: int) -> tuple[Any, ...]:
        return (self.q, self.population, self.domain, name, self.resolution, points)

    def _cached(self, name: str, points: int) -> bool:
        return self.cache is not None and self._key(name, points) in self.cache

    def curve(self, pt: PairType, points: int) -> DominatingCurve:
        """The curve of ``points`` bounds of ``pt``, computed here (or from the cache)."""
        key = self._key(pt.name, points)
        if self.cache is not None and key in self.cache:
            return cast(DominatingCurve, self.cache[key])
        memo = self.memos.setdefault(key[:-1], {})
        c = dominating_curve(pt, log_gamma=self.log_gamma, others=self.population - 1, resolution=self.resolution,
                             points=points, tick=self.tick, memo=memo)
        if self.cache is not None:
            self.cache[key] = c
        return c

    def full(self, name: str, points: int) -> DominatingCurve:
        return self.curve(self.by_name[name], points)

    def _adopt(self, answer: list[tuple[str, DominatingCurve, dict[float, float], int]], points: int,
               into: dict[str, DominatingCurve]) -> None:
        """The helper's curves and bounds, as if computed here (ticks included)."""
        for name, curve, memo, ticks in answer:
            key = self._key(name, points)
            self.memos.setdefault(key[:-1], {}).update(memo)
            if self.cache is not None:
                self.cache[key] = curve
            into[name] = curve
            for _ in range(ticks):
                self.tick()

    def _send(self, names: list[str], points: int) -> Pending:
        assert self.helper is not None
        return self.helper.submit(_curves_elsewhere, {
            "q": self.q, "population": self.population, "domain": self.domain, "names": names,
            "resolution": self.resolution, "points": points,
            "memos": {k: dict(self.memos.get(self._key(k, points)[:-1], {})) for k in names}})

    def first_curves(self, points: int) -> dict[str, DominatingCurve]:
        """Every type's curve of ``points`` bounds, by name in the types' order. With the helper, this thread takes
        the types from the first on and the helper, fed by a thread of its own that waits for each answer, one at
        a time from the last on, until they meet (what a type costs varies several-fold between types and with
        the machine's load: a fixed half would leave one side waiting)."""
        types = self.types
        if self.helper is None:
            return dict(zip((pt.name for pt in types), self.pool.map(lambda pt: self.curve(pt, points), types)))
        todo = [pt for pt in types if not self._cached(pt.name, points)]
        got: dict[str, DominatingCurve] = {}

        def here(pt: PairType) -> None:
            got[pt.name] = self.curve(pt, points)

        def there(pt: PairType) -> None:
            self._adopt(self._send([pt.name], points).result(), points, got)

        from .._offload import from_both_ends

        from_both_ends(todo, here, there)
        return {pt.name: got[pt.name] if pt.name in got else self.curve(pt, points) for pt in types}

    def side_by_side(self, name: str, after: str, points: int) -> dict[str, DominatingCurve]:
        """The curves of ``points`` bounds of ``name`` and ``after``, the second in the helper or on the pool's second
        thread when there is one (else only ``name``'s)."""
        if self.helper is not None and self.helper.alive and not self._cached(after, points):
            pending = self._send([after], points)
            out = {name: self.full(name, points)}
            self._adopt(pending.result(), points, out)
            return out
        if self.pool.threaded:
            return dict(zip((name, after), self.pool.map(lambda k: self.full(k, points), (name, after))))
        return {name: self.full(name, points)}


def _curves_elsewhere(*, q: float, population: int, domain: Domain, names: list[str], resolution: float,
                      points: int, memos: dict[str, dict[float, float]] | None = None
                      ) -> list[tuple[str, DominatingCurve, dict[float, float], int]]:
    """The curves of ``points`` bounds of the pair types ``names``, each from the bounds already known in ``memos``
    (by name; none: an empty memo), with the bounds behind each and how many bounds each took (the progress ticks):
    the helper's part of :class:`_Curves` (the types rebuilt here from ``domain`` and ``q``: the same arrays,
    nothing large to send)."""
    log_gamma, types = types_by_name(domain, q)
    others = population - 1
    out = []
    for name in names:
        memo = dict((memos or {}).get(name, {}))
        ticks = [0]

        def tick(count: list[int] = ticks) -> None:
            count[0] += 1

        curve = dominating_curve(types[name], log_gamma=log_gamma, others=others, resolution=resolution,
                                 points=points, memo=memo, tick=tick)
        out.append((name, curve, memo, ticks[0]))
    return out


def simple_rule(curves: tuple[DominatingCurve, ...], *, epsilon: float, rounds: int,
                reports: int) -> dict[str, Any]:
    """The simple rule over T rounds: ``eta_T(eps) <= T eta_1(eps / T)`` and ``delta_T(eps) <= T delta_1(eps / T)``.

    ``eta_1`` and ``delta_1`` bound one round (k reports) at ``epsilon / T`` from the same dominating curves (the
    largest over pair types, so each round may have its own type). The union bound
    ``{L_1 + ... + L_T > epsilon} ⊆ ∪_t {L_t > epsilon / T}`` gives the first; basic composition of approximate DP
    the second. Valid, and loose: the composed bound is usually far smaller (it is not smaller in every case, so
    the product reports the smaller of the two).
    """
    per_e = epsilon / rounds
    comps = [compose_curve(c, reports, per_e) for c in curves]
    eta1 = max((c.eta for c in comps), default=0.0)
    delta1 = max((c.delta for c in comps), default=0.0)
    return {"rule": "simple composition (union bound): P[L_1 + ... + L_T > epsilon] <= sum_t P[L_t > epsilon / T], "
                    "so eta_T(epsilon) <= T * eta_1(epsilon / T); delta_T(epsilon) <= T * delta_1(epsilon / T); "
                    "valid, loose",
            "eta": min(1.0, rounds * eta1), "delta": min(1.0, rounds * delta1), "epsilon_per_round": per_e,
            "eta_per_round": eta1, "delta_per_round": delta1}


def rounds_tail(*, q: float, bits: int, population: int, epsilon: float, rounds: int, reports: int = 1,
                domain: Domain | None = None, values: str = "changing", fallback: bool = True,
                resolution: float = DEFAULT_RESOLUTION, points: int = DEFAULT_POINTS,
                progress: Callable[[int, int], Any] | None = None) -> TailResult:
    """Rigorous bound on ``eta_T = P[L_1 + ... + L_T > epsilon]`` for T rounds, over every pair of collections.

    ``epsilon`` is the **total** over the T rounds; every round releases its own histogram of the N people's k
    fresh reports. The bound composes the privacy-blanket dominating pair T·k times (module docstring,
    docs/proofs/rounds.md) and, with ``fallback``, also computes the simple rule ``T * eta_1(epsilon / T)``; the
    reported ``eta`` is the smaller (both are valid). T = 1 is one release: its own bounds, nothing composed
    (:func:`sufficientdp.ratio.proven.proven_tail` for every crowd of at least N people and
    :func:`sufficientdp.ratio.proven.proven_delta`; docs/proofs/rounds.md, "One round"; ``details["used"]`` is
    ``"one round"``; ``values``, ``fallback`` and ``points`` do not apply).

    Args:
        q: flip probability in (0, 0.5), the same in every round.
        bits: L >= 1.
        population: N >= 1, the smallest crowd of any round.
        epsilon: the total epsilon over the T rounds (> 0).
        rounds: T in [1, :data:`MAX_ROUNDS`].
        reports: k >= 1 reports per person per round (T·k <= :data:`MAX_TOTAL_REPORTS`).
        domain: the vectors people may hold (default all of {0,1}^L).
        values: ``"fixed"`` (the collection is the same in every round) or ``"changing"`` (it may change from
            round to round, fixed in advance).
        fallback: also compute the simple rule (:func:`simple_rule`, from the same curves; cheap).
        resolution, points: lattice resolution (in [1e-12, 1)) and number of points of each pair type's curve.
        progress: optional callback ``progress(done, total)``.

    Returns:
        A :class:`TailResult` with ``kind="bound"``, ``scope="all-collections"``, ``reports=k``, ``delta_upper``
        the composed bound on ``delta_T(epsilon)``, and in ``details`` the rounds, the method, the composed and
        fallback values, the worst pair type and the grid.

    Raises:
        ParameterError: an argument out of range (T > 1000, T·k > 10000, ...).

    References:
        seed 001 eq. (1.7); docs/proofs/blanket.md; docs/proofs/rounds.md.

    Examples:
        >>> r = rounds_tail(q=0.3, bits=2, population=200, epsilon=2.0, rounds=3, fallback=False)
        >>> r.kind, r.scope, r.details["rounds"], r.eta < 0.05
        ('bound', 'all-collections', 3, True)
    """
    q, bits, population, epsilon, rounds, reports = _check(q, bits, population, epsilon, rounds, reports, values)
    resolution = check_open_interval("resolution", resolution, 0.0, 1.0)
    if resolution < MIN_RESOLUTION:  # the lattice's size is about 1/resolution (5e-324: an OverflowError)
        raise ParameterError(f"resolution must be in [{MIN_RESOLUTION:g}, 1); got {resolution!r}")
    points = check_int("points", points, minimum=1, maximum=10_000)
    dom = _domain(bits, domain)
    if rounds == 1:  # one release: its own bounds (tighter, and without the curves of every pair type)
        return _one_round(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports, domain=dom,
                          values=values, resolution=resolution, progress=progress)
    # the domain evaluate_rounds bounds (a weight domain with too many pair types: all of {0,1}^L)
    check_composable(q, Domain(bits=bits) if _cube_instead(dom) else dom,
                     releases=rounds * reports, epsilon=epsilon)
    return _rounds_tail(q=q, bits=bits, population=population, epsilon=epsilon, rounds=rounds, reports=reports,
                        domain=dom, values=values, fallback=fallback, resolution=resolution,
                        points=points, progress=progress)


def _one_round(*, q: float, bits: int, population: int, epsilon: float, reports: int, domain: Domain,
               values: str, resolution: float, progress: Callable[[int, int], Any] | None) -> TailResult:
    """T = 1: eta from :func:`sufficientdp.ratio.proven.proven_tail` for every crowd of at least N people (at
    L = 1 from the exact scans), delta(epsilon) from :func:`sufficientdp.ratio.proven.proven_delta`: the bounds of
    one release (k reports per person), with no composition over rounds (docs/proofs/rounds.md, "One round")."""
    from .._progress import Phases
    from ..ratio.proven import proven_delta, proven_tail

    t0 = time.perf_counter()
    phases = Phases(progress, 2)  # one bar: eta, then delta
    one = proven_tail(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports, domain=domain,
                      resolution=resolution, larger_crowds=True, progress=phases.of(0))
    phases.end(0)
    dl = proven_delta(q=q, bits=bits, population=population, epsilon=epsilon, reports=reports, domain=domain,
                      resolution=resolution, progress=phases.of(1))
    phases.end(1)
    d = one.details
    details: dict[str, Any] = {
        "rounds": 1, "reports_per_round": reports, "one_report_releases": reports, "epsilon_total": epsilon,
        "domain": domain.label, "values": values,
        "scope_rounds": ("one round (one histogram), every pair of neighbouring collections of the domain, both "
                         "directions, every crowd of at least N people"),
        "method": ("one release: eta from the one-release bound (proven_tail, " + str(d.get("bound", "")) + "); "
                   "delta(epsilon) from proven_delta (" + dl.method + ")"),
        "used": "one round",
        "eta_composed": None, "delta_composed": None, "epsilon_prime": d.get("epsilon_prime"),
        "worst_pair": d.get("worst_pair", dl.worst), "worst_pair_delta": dl.worst,
        "by_type": None, "fallback": None, "grid": None, "fft_cells": None, "float_allowance": None,
        "curve_points": None, "resolution": resolution, "bounds_evaluated": None,
        "blanket_mass": d.get("blanket_mass"),
        "notes": [*d.get("notes", []), *dl.notes], "seconds": time.perf_counter() - t0,
    }
    return TailResult(eta=one.eta, eta_lower=None, eta_upper=one.eta, method="proven-rounds", kind="bound",
                      scope="all-collections", epsilon=epsilon, q=q, bits=bits, population=population,
                      reports=reports, delta=None, delta_upper=dl.delta, details=details)


def _rounds_tail(*, q: float, bits: int, population: int, epsilon: float, rounds: int, reports: int,
                 domain: Domain, values: str, fallback: bool = True, resolution: float = DEFAULT_RESOLUTION,
                 points: int = DEFAULT_POINTS, progress: Callable[[int, int], Any] | None = None,
                 cache: dict[tuple[Any, ...], Any] | None = None) -> TailResult:
    """:func:`rounds_tail` without the input checks (and with a curve cache for searches)."""
    dom = domain
    t0 = time.perf_counter()
    n = rounds * reports
    ev = evaluate_rounds(q=q, population=population, epsilon=epsilon, n=n, domain=dom, values=values,
                         resolution=resolution, points=points, progress=progress, cache=cache)
    fb = simple_rule(ev.curves, epsilon=epsilon, rounds=rounds, reports=reports) if fallback else None
    eta, used = ev.eta, "composed"
    if fb is not None and fb["eta"] < eta:
        eta, used = fb["eta"], "fallback"
    delta = min(ev.delta, fb["delta"]) if fb is not None else ev.delta
    comp = ev.composition
    details: dict[str, Any] = {
        "rounds": rounds, "reports_per_round": reports, "one_report_releases": n, "epsilon_total": epsilon,
        "domain": dom.label, "values": values,
        "scope_rounds": (f"the {rounds} rounds together (one histogram per round), every pair of neighbouring "
                         "collections of the domain, both directions; "
                         + ("the collection is the same in every round" if values == "fixed" else
                            "the collections may change from round to round (fixed in advance)")),
        "method": ("composed privacy-blanket dominating pair: rigorous upper bounds on each pair type's "
                   "hockey-stick curve, their convex hull (connect the dots), n-fold FFT composition on a grid; "
                   "eta <= delta_n(e') / (1 - e^(e' - epsilon)) (docs/proofs/rounds.md)"),
        "used": used,
        "eta_composed": ev.eta, "delta_composed": ev.delta, "epsilon_prime": ev.epsilon_prime,
        "worst_pair": ev.worst, "by_type": [list(x) for x in ev.by_type],
        "fallback": fb,
        "grid": None if comp is None else comp.grid, "fft_cells": None if comp is None else comp.cells,
        "float_allowance": None if comp is None else comp.float_allowance,
        "curve_points": points, "resolution": resolution, "bounds_evaluated": ev.evaluations,
        # the mass of the blanket the bound used (all of {0,1}^L's for a weight domain it stands in for; computing
        # it on the weight domain itself built that domain's shapes: more than 20 GB at L = 256, w = 25)
        "blanket_mass": math.exp(ev.log_gamma),
        "notes": list(ev.notes), "seconds": time.perf_counter() - t0,
    }
    return TailResult(eta=eta, eta_lower=None, eta_upper=eta, method="proven-rounds", kind="bound",
                      scope="all-collections", epsilon=epsilon, q=q, bits=bits, population=population,
                      reports=reports, delta=None, delta_upper=delta, details=details)


# ------------------------------------------------------------------------------- the homogeneous configuration
def _bracket_compose(losses: NDArray[np.float64], probs: NDArray[np.float64], inf_mass: float, n: int,
                     epsilon: float, h: float) -> tuple[float, float, float, float]:
    """``(eta_lo, eta_up, delta_lo, delta_up)`` at ``epsilon`` of the n-fold sum of iid losses (exact law given as
    atoms): losses rounded down / up onto a grid of spacing h bracket the sum, hence eta and delta (both
    increasing in the loss); the FFT's float allowance widens the bracket."""
    out: list[float] = []
    for direction in (np.floor, np.ceil):
        idx = direction(losses / h).astype(np.int64)
        lo = int(idx.min())
        base = np.bincount(idx - lo, weights=probs).astype(np.float64)
        law, err, _ = lattice_power(base, n)
        values = n * lo * h + h * np.arange(law.size)
        above = values > epsilon
        some_inf = -math.expm1(n * math.log1p(-inf_mass)) if inf_mass < 1.0 else 1.0  # a release has loss +inf
        eta = float(np.sum(law[above])) + some_inf
        delta = float(np.sum(law[above] * -np.expm1(epsilon - values[above]))) + some_inf
        sign = -1.0 if direction is np.floor else 1.0
        out += [min(1.0, max(0.0, eta + sign * err)), min(1.0, max(0.0, delta + sign * err))]
    return out[0], out[2], out[1], out[3]


def homogeneous_rounds_tail(*, q: float, bits: int, population: int, epsilon: float, rounds: int,
                            grid: float | None = None) -> TailResult:
    """``eta_T`` of the homogeneous configuration over T rounds, exactly (a rigorous bracket), one report a round.

    For each outlier weight j = 1..L and both directions, the exact per-round privacy-loss distribution of the
    histogram (:func:`sufficientdp.accounting.shuffled.homogeneous_histogram_pld`) is composed T times: the loss
    of the T histograms is the sum of T iid per-round losses. Losses rounded down and up onto a grid bracket the
    sum; the worst (j, direction) is reported. This is one pair of collections, so it is a **lower** reference
    for the worst case over all collections (``scope="homogeneous"``).

    Raises:
        ParameterError: arguments out of range, or the per-round distribution too large to enumerate
            (``C(N + j, j)`` above ``MAX_PROFILE_ATOMS``).

    Examples:
        >>> r = homogeneous_rounds_tail(q=0.25, bits=1, population=4, epsilon=1.0, rounds=3)
        >>> r.kind, r.scope, r.eta_lower <= r.eta <= r.eta_upper
        ('exact', 'homogeneous', True)
    """
    q, bits, population, epsilon, rounds, _ = _check(q, bits, population, epsilon, rounds, 1, "fixed")
    h = grid if grid is not None else min(1e-3, epsilon / (50.0 * rounds))
    best: tuple[float, float, float, float] | None = None
    arg = ""
    t0 = time.perf_counter()
    for j in range(1, bits + 1):
        for side in (Direction.FORWARD, Direction.REVERSE):
            pld = homogeneous_histogram_pld(q=q, population=population, outlier_bits=j, outlier_in=side)
            br = _bracket_compose(np.asarray(pld.losses), np.asarray(pld.probabilities), pld.infinity_mass,
                                  rounds, epsilon, h)
            if best is None or br[1] > best[1]:
                best, arg = br, f"j={j}, outlier in {'D_m' if side is Direction.FORWARD else 'D'}"
    assert best is not None
    eta_lo, eta_up, d_lo, d_up = best
    return TailResult(eta=eta_up, eta_lower=eta_lo, eta_upper=eta_up, method="exact-rounds", kind="exact",
                      scope="homogeneous", epsilon=epsilon, q=q, bits=bits, population=population, reports=1,
                      delta=d_up, delta_lower=d_lo, delta_upper=d_up,
                      details={"rounds": rounds, "epsilon_total": epsilon, "worst": arg, "grid": h,
                               "configuration": "N - 1 zero vectors and one outlier with j set bits, the same in "
                                                "every round; worst j and direction (upper ends compared)",
                               "note": "one pair of collections: a lower reference for the worst case over all "
                                       "collections, not a guarantee",
                               "seconds": time.perf_counter() - t0})
