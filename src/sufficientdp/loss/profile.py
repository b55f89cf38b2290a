"""Dominating pairs from bounds on a privacy profile, and their n-fold composition ("connect the dots").

The hockey-stick curve (privacy profile) ``t -> delta(log t)`` of any pair of distributions is convex and
decreasing in ``t = e**epsilon``, equal to ``1 - t`` below the smallest privacy loss and 0 above the largest. Given
upper bounds on it at a few epsilons, the lower convex hull of those points (with the exact ends) lies above the
true curve everywhere, and it is itself the curve of a discrete pair whose privacy loss has atoms at the hull's
vertices (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the dots", PETS 2022). A pair whose curve is at
least another's at every epsilon dominates it in Blackwell's sense (the other is a post-processing of it), and
composition keeps the order, so the n-fold composition of the discrete pair bounds that of the original
(docs/proofs/blanket.md step 6, docs/proofs/rounds.md). :func:`compose_curve` splits each atom onto a uniform grid
keeping its P- and Q-mass (the split pair's curve is a chord of the atom's, hence larger), composes by one FFT
power with a floating-point allowance, and turns ``delta_n`` into a bound on ``eta`` (blanket.md step 4).

Used by the all-collections bound for k reports per person (:mod:`sufficientdp.ratio.proven`) and over T rounds
(:mod:`sufficientdp.accounting.rounds`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Composition", "DominatingCurve", "compose_curve", "curve_from_bounds", "envelope", "fft_allowance", "is_below",
           "lattice_power"]

_INITIAL_POINTS = 17
_REFINE_BATCH = 8
_FOCUS_POINTS = 26  # 24 inner points of the focus interval
_MAX_CELLS = 1 << 22  # FFT length cap of the n-fold composition
_REL_SAFETY = 1e-9


@dataclass(frozen=True, slots=True)
class DominatingCurve:
    """An upper bound on a pair's hockey-stick curve, convex in ``e**epsilon``: the curve of a dominating pair.

    Attributes:
        name: the pair type (or ``"envelope"``).
        epsilons: the hull's vertices, increasing; the first is below the smallest loss (there
            ``delta = 1 - e**epsilon`` exactly), the last above the largest (``delta = 0``).
        deltas: the curve at the vertices.
        evaluations: how many bounds on delta_PQ were computed for it.
        resolution: the lattice resolution of those bounds.
    """

    name: str
    epsilons: NDArray[np.float64]
    deltas: NDArray[np.float64]
    evaluations: int
    resolution: float

    def loss_law(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(losses, P-masses)`` of the dominating pair's privacy loss: atoms at the vertices.

        With ``t = e**epsilon`` and the curve's slopes ``s`` (``-1`` before the first vertex, 0 after the last), the
        Q-mass of the atom at vertex v is ``s_{v+1} - s_v`` and its P-mass ``t_v`` times that.
        """
        t = np.exp(self.epsilons)
        slopes = np.diff(self.deltas) / np.diff(t)
        s = np.concatenate([[-1.0], slopes, [0.0]])
        q_mass = np.maximum(np.diff(s), 0.0)
        return self.epsilons.copy(), q_mass * t

    def __call__(self, epsilon: NDArray[np.float64]) -> NDArray[np.float64]:
        """The curve at ``epsilon`` (linear in ``e**epsilon`` between vertices; exact outside)."""
        e = np.asarray(epsilon, dtype=float)
        t = np.exp(e)
        inside = np.interp(t, np.exp(self.epsilons), self.deltas)
        return np.where(e <= self.epsilons[0], -np.expm1(np.minimum(e, 0.0)),
                        np.where(e >= self.epsilons[-1], 0.0, inside))


def _lower_hull(t: NDArray[np.float64], d: NDArray[np.float64]) -> NDArray[np.int64]:
    """Indices of the lower convex hull of the points ``(t_i, d_i)`` (t increasing), both ends included."""
    idx: list[int] = []
    for i in range(t.size):
        while len(idx) >= 2:
            a, b = idx[-2], idx[-1]
            if (d[b] - d[a]) * (t[i] - t[a]) >= (d[i] - d[a]) * (t[b] - t[a]):
                idx.pop()
            else:
                break
        idx.append(i)
    return np.asarray(idx, dtype=np.int64)


def _hull_curve(name: str, eps: NDArray[np.float64], d: NDArray[np.float64], evaluations: int,
                resolution: float) -> DominatingCurve:
    """The hull of upper bounds ``d`` at ``eps`` (increasing; exact values at both ends) as a curve."""
    d = np.maximum(d, np.maximum(-np.expm1(np.minimum(eps, 0.0)), 0.0))  # delta >= (1 - e^eps)_+ always
    h = _lower_hull(np.exp(eps), d)
    return DominatingCurve(name, eps[h].copy(), d[h].copy(), evaluations, resolution)


def tuning() -> tuple[float, ...]:
    """The module's constants that a curve and its composition depend on besides their inputs, read now (tests may
    patch them): part of the key of a cache of composed bounds."""
    return (_INITIAL_POINTS, _REFINE_BATCH, _FOCUS_POINTS, _MAX_CELLS, _REL_SAFETY)


def _chord(vals: dict[float, float], e: float) -> float:
    """The chord (linear in ``t = e**eps``) at ``e`` through the nearest points of ``vals`` on either side (``vals``
    holds both ends of the range, which contains ``e``)."""
    a = max(x for x in vals if x < e)
    b = min(x for x in vals if x > e)
    ta, tb = math.exp(a), math.exp(b)
    if not tb > ta:
        return max(vals[a], vals[b])
    w = (math.exp(e) - ta) / (tb - ta)
    return vals[a] * (1.0 - w) + vals[b] * w


def _first_points(top: float, focus: tuple[float, float] | None, screen: int) -> list[float]:
    """The epsilons :func:`curve_from_bounds` bounds first, ascending: 15 evenly spaced in ``(-top, top)``, 0 and the
    focus's 24 inner points (clipped to ``(-top, top)``); with ``screen = s > 0`` every s-th focus point only."""
    inner: list[float] = []
    if focus is not None:
        lo, hi = max(focus[0], -top), min(focus[1], top)
        if lo < hi:
            inner = [float(x) for x in np.linspace(lo, hi, _FOCUS_POINTS)[1:-1]]
    if screen:
        if focus is None:
            raise ValueError(f"screen = {screen} needs a focus interval; got focus = None")
        return inner[::screen]
    return sorted({*(float(x) for x in np.linspace(-top, top, _INITIAL_POINTS)[1:-1]), 0.0, *inner})


def curve_from_bounds(delta_of: Callable[[float], float], *, name: str, top: float, points: int,
                      resolution: float, tick: Callable[[], Any] | None = None,
                      focus: tuple[float, float] | None = None,
                      above: Callable[[float], float] | None = None, screen: int = 0) -> DominatingCurve:
    """A dominating curve for a pair whose privacy loss lies in ``[-top, top]``, from upper bounds on its
    hockey-stick curve.

    ``delta_of(e)`` (an upper bound on ``delta(e)``) is evaluated at ``points`` epsilons in ``(-top, top)``: 17
    evenly spaced and 0, then, 8 at a time, the midpoints where the hull's chord lies farthest above
    ``(1 - e**e)_+`` (the least the curve can be). The ends are exact: ``delta(-top) = 1 - e**(-top)`` and
    ``delta(top) = 0``. Any set of points gives a valid curve; more points only make it tighter. ``resolution`` is
    recorded (it says how ``delta_of`` was computed). ``focus = (lo, hi)`` adds 24 evenly spaced points there
    first (where the composition is decided, e.g. around the target epsilon).

    ``above(e)``, when given, is a number that ``delta_of(e)`` is known to be at least (e.g. its floating-point
    allowance), cheap to compute. Where it exceeds twice the chord through the nearest points already placed on
    either side, ``delta_of(e)`` is not computed: the chord lies above the lower hull of any set of points holding
    those two (stand-ins included: they lie above it too), so the bound would lie above the hull and would not be
    one of its vertices. The point is kept with the value ``above(e)`` (at most the bound it stands for) only to
    steer the choice of later points as the bound would have; should it still end up a vertex (rounding), it is
    bounded after all and the hull taken again, so every vertex of the curve is a value of ``delta_of``.

    ``screen = s > 0`` (with ``focus``) asks for a quick curve instead: only every s-th of the focus's 24 inner
    points, no other point and no refinement (``points`` is ignored). The screens s = 4, 2, 1 are nested (6, 12,
    24 points), so a memoizing ``delta_of`` computes each point once across them and a later full curve.
    """
    vals: dict[float, float] = {-top: -math.expm1(-top), top: 0.0}
    skipped: set[float] = set()

    def bound(e: float) -> None:
        if above is not None:
            least = above(e)
            if least > 2.0 * _chord(vals, e):
                vals[e] = least
                skipped.add(e)
                if tick is not None:
                    tick()
                return
        vals[e] = delta_of(e)
        if tick is not None:
            tick()

    for e in _first_points(top, focus, screen):
        bound(e)
    if screen:
        points = 0  # (no refinement)
    while len(vals) - 2 < points:
        es = np.array(sorted(vals))
        ds = np.array([vals[e] for e in es])
        ts = np.exp(es)
        mids = 0.5 * (es[:-1] + es[1:])
        width = ts[1:] - ts[:-1]
        w = (np.exp(mids) - ts[:-1]) / np.where(width > 0, width, 1.0)
        room = ds[:-1] * (1.0 - w) + ds[1:] * w - np.maximum(-np.expm1(np.minimum(mids, 0.0)), 0.0)
        room = np.where(width > 0, room, 0.0)  # points too close to tell apart in t: nothing to gain there
        fresh = [float(mids[i]) for i in np.argsort(-room)[:_REFINE_BATCH] if room[i] > 0 and mids[i] not in vals]
        if not fresh:
            break
        for e in fresh[:points - (len(vals) - 2)]:
            bound(e)
    es = np.array(sorted(vals))
    while True:
        curve = _hull_curve(name, es, np.array([vals[e] for e in es]), len(vals) - 2 - len(skipped), resolution)
        stand_ins = [e for e in curve.epsilons.tolist() if e in skipped]
        if not stand_ins:
            return curve
        for e in stand_ins:  # (not expected: each lies above twice a chord through bounded points)
            vals[e] = delta_of(e)
            skipped.discard(e)


def envelope(curves: list[DominatingCurve]) -> DominatingCurve:
    """One curve above every curve of ``curves`` (their maximum, convexified): it dominates every pair type.

    Between two consecutive points of the union of the vertices every curve is linear in ``t``, so their maximum
    is convex there and the chord through the union's points lies above it.
    """
    eps = np.unique(np.concatenate([c.epsilons for c in curves]))
    d = np.max(np.stack([c(eps) for c in curves]), axis=0)
    return _hull_curve("envelope", eps, d, sum(c.evaluations for c in curves), max(c.resolution for c in curves))


def is_below(curve: DominatingCurve, other: DominatingCurve) -> bool:
    """Whether ``curve <= other`` everywhere (both are linear in t between the union of their vertices)."""
    eps = np.unique(np.concatenate([curve.epsilons, other.epsilons]))
    return bool(np.all(curve(eps) <= other(eps)))


@dataclass(frozen=True, slots=True)
class Composition:
    """The n-fold composition of a dominating curve at one epsilon.

    Attributes:
        eta: upper bound on ``P[loss > epsilon]`` for any pair the curve dominates, n-fold.
        delta: upper bound on ``delta_n(epsilon)``.
        epsilon_prime: the e' of the eta bound.
        grid: spacing of the uniform grid of the composed loss.
        cells: FFT length.
        float_allowance: the floating-point allowance added to every delta.
    """

    eta: float
    delta: float
    epsilon_prime: float
    grid: float
    cells: int
    float_allowance: float


def fft_allowance(cells: int, n: int, base: NDArray[np.float64]) -> float:
    """l1 bound on the float error of ``irfft(rfft(base) ** n)`` (the model of :mod:`sufficientdp.ratio.proven`).

    The sum of squares is numpy's own reduction, not a BLAS dot product: OpenBLAS splits a dot product of more than
    10,000 terms between its threads, whose partial sums make the float depend on the machine's thread count, and
    whose waiting threads then spin on the other core (at L = 40, k = 2, 2.3 of 6.7 CPU-s of a bound of every pair
    type; issue 10)."""
    return math.sqrt(cells) * 2.0 ** -53 * (8.0 * math.log2(cells) + 16.0) * (
        n * float(np.sqrt(np.add.reduce(base * base))) + 1.0)


def lattice_power(base: NDArray[np.float64], n: int) -> tuple[NDArray[np.float64], float, int]:
    """The n-fold convolution power of a law on a lattice (one FFT), negative float noise clipped to 0, the l1
    allowance for the FFT's float error (:func:`fft_allowance`) and the FFT's size; entry i of the law is the mass
    at n * (first point) + i."""
    size = n * (base.size - 1) + 1
    cells = 1 << int(math.ceil(math.log2(max(size, 2))))
    law = np.fft.irfft(np.fft.rfft(base, cells) ** n, cells)[:size]
    return np.maximum(law, 0.0), fft_allowance(cells, n, base), cells


def _grid_for(span: float, n: int, epsilon: float) -> float:
    """Grid spacing: ``min(2e-3, epsilon / (10 sqrt(n)))`` (connect-the-dots rounding is second order: its effect
    on the n-fold sum grows like ``n h**2``), coarser if needed for the n-fold support to fit :data:`_MAX_CELLS`."""
    h = min(2e-3, epsilon / (10.0 * math.sqrt(n)))
    return max(h, n * span / (_MAX_CELLS - 2 * n - 1))


def compose_curve(curve: DominatingCurve, n: int, epsilon: float, grid: float | None = None) -> Composition:
    """Bound ``eta`` and ``delta`` at ``epsilon`` of n independent copies of any pair the curve dominates.

    The dominating pair's loss (atoms at the vertices) is split onto a uniform grid keeping each atom's P- and
    Q-mass (pessimistic: the split pair's curve is above), composed n times by one FFT power, and
    ``delta_n(e') = E[(1 - e**(e' - S))_+]`` read at 4000 values ``e' < epsilon``;
    ``eta <= min delta_n(e') / (1 - e**(e' - epsilon))`` (docs/proofs/blanket.md step 4).

    Args:
        curve: a :class:`DominatingCurve`.
        n: number of independent copies (>= 1).
        epsilon: > 0.
        grid: spacing of the uniform grid (default: see ``_grid_for``); any spacing gives a valid bound.

    Returns:
        A :class:`Composition`.
    """
    losses, pmass = curve.loss_law()
    lo_e, hi_e = float(losses[0]), float(losses[-1])
    h = grid if grid is not None else _grid_for(hi_e - lo_e, n, epsilon)
    ga = np.floor(losses / h).astype(np.int64)
    xa, xb = ga * h, (ga + 1) * h
    # P-mass share of the lower point, keeping P- and Q-mass (an atom at x with P-mass m has Q-mass m e^{-x}):
    # wa = (e^{-l} - e^{-xb}) / (e^{-xa} - e^{-xb}) = expm1(xb - l) / expm1(xb - xa)
    wa = np.clip(np.expm1(xb - losses) / np.expm1(xb - xa), 0.0, 1.0)
    lo = int(ga.min())
    base = np.zeros(int(ga.max()) - lo + 2)
    np.add.at(base, ga - lo, pmass * wa)
    np.add.at(base, ga - lo + 1, pmass * (1.0 - wa))
    # float error of the FFT power, the model of sufficientdp.ratio.proven (l1 bound over all outputs)
    law, fft_err, cells = lattice_power(base, n)
    values = n * lo * h + h * np.arange(law.size)
    eps_primes = np.unique(np.concatenate([epsilon - np.geomspace(1e-5, epsilon + 6.0, 4000), [epsilon]]))
    keep = values > float(eps_primes[0])
    w0 = np.where(keep, law, 0.0)
    w1 = np.where(keep, law * np.exp(-np.where(keep, values, 0.0)), 0.0)
    s0 = np.concatenate([np.cumsum(w0[::-1])[::-1], [0.0]])
    s1 = np.concatenate([np.cumsum(w1[::-1])[::-1], [0.0]])
    first = np.searchsorted(values, eps_primes, side="right")
    deltas = np.maximum(s0[first] - np.exp(eps_primes) * s1[first], 0.0) + 1e-15 * s0[first] + fft_err
    deltas = np.minimum(deltas * (1.0 + _REL_SAFETY), 1.0)
    below = eps_primes < epsilon
    ratios = deltas[below] / -np.expm1(eps_primes[below] - epsilon)
    i = int(np.argmin(ratios))
    return Composition(eta=min(1.0, float(ratios[i])), delta=float(deltas[-1]),
                       epsilon_prime=float(eps_primes[below][i]), grid=h, cells=cells, float_allowance=fft_err)
