"""A rigorous upper bound on ``E[(S)_+]`` for a compound sum, by *randomized* lattice rounding and one FFT power.

The sum is ``S = W_1 + ... + W_n`` with ``W_i`` iid, ``W = 0`` with probability ``1 - gamma`` and ``W = V`` with
probability ``gamma``, ``V`` taking finitely many real values ``v_c`` with probabilities ``pi_c`` (the setting of
:mod:`sufficientdp._numerics.lattice`). The privacy-blanket bound needs ``E[(S)_+]`` (docs/proofs/blanket.md,
"positive-part form"); unlike a tail probability at many thresholds, it is a single smooth functional, and it has
an upper bound with **no rounding error term** at all:

1. **Randomized rounding.** Write ``v = h (k + f)`` with ``k = floor(v / h)`` and ``0 <= f < 1``, and replace each
   draw of ``v`` by ``h (k + 1)`` with probability ``f`` and ``h k`` otherwise. The rounded draw ``V'`` has
   ``E[V' | V] = V``, so the rounded sum ``S'`` has ``E[S' | S] = S`` and, ``x -> x_+`` being convex, Jensen's
   inequality gives ``E[(S')_+] = E[E[(S')_+ | S]] >= E[(E[S' | S])_+] = E[(S)_+]``. The slack is second order in
   ``h`` (about half the rounding variance times the density of ``S`` at 0).
2. **Heavy atoms.** The largest ``|v|`` are split off as in :mod:`~sufficientdp._numerics.lattice` (expected number
   of people drawing one ``lambda <= HEAVY_RATE``) and enumerated exactly for ``H = r = 0 .. h_max`` heavy people;
   nothing is pruned. The rest, ``E[(S)_+; H > h_max]``, is at most ``E[sum_i (W_i)_+; H > h_max] <= n E[(W)_+]
   P[H_{-1} >= h_max] <= n gamma E[V_+] lambda**h_max / h_max!`` (person i's own draw is independent of the others'
   heavy count ``H_{-1}``, and ``H > h_max`` needs ``H_{-1} >= h_max``).
3. **Window.** The lattice variable ``K`` lives on ``M`` cyclic cells covering ``[a_lo, a_lo + M)``. The computed
   cells are the wrapped law, each at least the true in-window probability, so the computed ``sum (h k + c)_+``
   over the window is at least the true in-window part. The parts outside: above the window,
   ``(hK + c)_+ <= h (K - a_hi)_+ + (h a_hi + c)_+`` on ``{K > a_hi}``, and for every ``theta > 0``
   ``E[(K - a)_+] <= exp(-theta a) E[exp(theta K)] / (e theta)`` (from ``x_+ <= exp(theta x) / (e theta)``) and
   ``P[K > a] <= exp(-theta a) E[exp(theta K)]``, with the exact moment generating function, each minimised on a
   grid of theta; below the window, at most ``(h a_lo + c)_+ ALPHA``.
4. **Floating point.** As in :mod:`~sufficientdp._numerics.lattice` (step 3 there, a float-error *model*): every
   sum of computed cells is off by at most ``fft_err``, so a sum weighted by values in ``[0, X]`` by at most
   ``2 X fft_err``; negative cells are clipped to 0 (which only raises the result).

The lattice step is refined (cells doubled) until the estimated rounding slack is below ``rtol`` of the result or
``max_cells`` is reached; every result is a valid upper bound, the refinement only tightens it.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_nonnegative_finite
from .lattice import ALPHA, HEAVY_RATE, compound_atoms, theta_grid, window_ends_and_mgf
from .logspace import log_comb_large_n

__all__ = ["CheckedProbs", "PositivePartBound", "checked_probs", "compound_positive_part_upper"]

_U = 2.0 ** -53
_MIN_CELLS = 2 ** 10
_MAX_HEAVY = 48  # heavy atoms at most (any choice is valid; more only narrow the window, at a combinatorial cost)
_HEAVY_ATOMS = 400_000  # largest number of heavy-sum atoms (no pruning: above it, no heavy split)
_TAIL_POWER = 1e-9  # first lambda**h_max / h_max! of the heavy enumeration (step 2); lowered while it matters
_THETAS = 56  # grid of Chernoff parameters (a coarser grid only widens the window or the allowance)
_MEMO_FLOATS = 2_000_000  # floats held by the memo of recent inputs (16 MB; the oldest inputs are dropped)
_ENTRY_OVERHEAD, _STEP_OVERHEAD = 256, 128  # Python objects of a memo entry and of a lattice in it, in floats


def _dot(a: NDArray[Any], b: NDArray[Any]) -> float:
    """``sum(a * b)`` without BLAS (whose threads cost milliseconds per small product on a busy machine, and which
    splits a product of more than 10,000 terms between its threads, so that the float would depend on the
    machine's thread count); the ufunc's own reduction (what ``np.sum`` calls) without ``np.sum``'s Python-level
    dispatch."""
    return float(_ADD(a * b))


def _dot_into(a: NDArray[Any], b: NDArray[Any]) -> float:
    """:func:`_dot` computing the products in ``b`` (which is overwritten): the same floats."""
    return float(_ADD(np.multiply(a, b, out=b)))


_ADD = np.add.reduce
_MAXIMUM = np.maximum.reduce
_MINIMUM = np.minimum.reduce


@dataclass(frozen=True, slots=True)
class PositivePartBound:
    """``upper >= E[(S)_+]``, with the lattice used, the allowances added and the estimated rounding slack."""

    upper: float
    cells: int
    step: float
    allowance: float
    slack_estimate: float


def _heavy_laws(v: NDArray[np.float64], pi: NDArray[np.float64], gamma: float, n: int, tail_power: float,
                levels: dict[int, _Levels] | None = None
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], float,
                           list[tuple[NDArray[np.float64], NDArray[np.float64]]], float] | None:
    """Light law, the exact laws of the heavy sums for ``r = 0 .. h_max`` and the bound of step 2 (unpruned).

    The heavy atoms are the largest ``|v|`` while ``lambda = n gamma pi(heavy)`` stays below a rate; the rate is
    lowered (fewer heavy atoms, fewer counts to enumerate) until the enumeration fits :data:`_HEAVY_ATOMS`.
    ``levels`` (per number of heavy atoms) keeps the sums enumerated so far for later calls on the same ``v`` and
    ``pi`` with a smaller ``tail_power`` (:class:`_Levels`).
    """
    if not float(pi[int(np.argmax(np.abs(v)))]) * (n * gamma) <= HEAVY_RATE:
        return None  # (lam[0] below, for the first largest |v|: no atom is rare enough to be heavy)
    order = np.argsort(-np.abs(v), kind="stable")
    lam = np.cumsum(pi[order]) * (n * gamma)
    for rate in (HEAVY_RATE, HEAVY_RATE * 1e-1, HEAVY_RATE * 1e-2, HEAVY_RATE * 1e-3):
        k = min(int(np.searchsorted(lam, rate, side="right")), _MAX_HEAVY)
        if k == 0 or k >= v.size or float(np.abs(v[order[k]])) > 0.5 * float(np.abs(v[order[0]])):
            return None
        out = _enumerate_heavy(v, pi, gamma, n, order, k, tail_power,
                               levels.setdefault(k, _Levels()) if levels is not None else _Levels())
        if out is not None:
            return out
    return None


def _next_level(ys: NDArray[np.float64], ps: NDArray[np.float64], last: NDArray[np.intp], mult: NDArray[np.intp],
                hv: NDArray[np.float64], hq: NDArray[np.float64], r: int
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp], NDArray[np.intp]]:
    """The law of ``r + 1`` heavy draws from the law of ``r``, one atom per multiset of heavy atoms.

    Level ``r`` holds every multiset ``M`` of ``r`` heavy atoms once (their indices in non-decreasing order; level 0
    the empty one): its sum ``ys``, its probability ``ps = r! / prod_i c_i! * prod_i hq_i**c_i`` (``c_i`` copies of
    atom ``i``: the multinomial law of ``r`` iid draws), its largest index ``last`` and that index's count ``mult``.
    A multiset of ``r + 1`` atoms is exactly one ``M`` plus one atom ``i >= last(M)``, with sum ``ys(M) + hv[i]``
    and probability ``ps(M) hq[i] (r + 1) / (c_i(M) + 1)``: so level ``r + 1`` is built by gathers, without sorting,
    in ``C(k + r, r + 1)`` atoms. (Atoms of equal sum are not merged: the same law, as a list with repeats.)

    Enumerating the ``k**(r + 1)`` sequences and merging equal floats instead (until session 18) found the same law,
    but a multiset's sum, added in different orders, gives floats one ulp apart: at L = 40 the levels of 3 to 7
    heavy draws held 1.3-2.7 times as many distinct floats as multisets, and the sort was half of a T-round bound.
    """
    k = hv.size
    counts = k - last  # the atoms i >= last(M) that extend M
    parent = np.repeat(np.arange(ys.size), counts)
    starts = np.cumsum(counts) - counts  # where each M's children begin
    child = np.arange(parent.size) - (starts - last)[parent]  # last(M), last(M) + 1, ..., k - 1
    new_mult = np.where(child == last[parent], mult[parent] + 1, 1)
    values = ys[parent] + hv[child]
    probs = ps[parent] * hq[child] * ((r + 1) / new_mult)
    return values, probs, child, new_mult


def _level_size(k: int, r: int) -> int:
    """Atoms of level ``r`` (:func:`_next_level`): the multisets of ``r`` of ``k`` heavy atoms."""
    return math.comb(k + r - 1, r)


@dataclass(slots=True)
class _Levels:
    """The levels ``r = 0, 1, ...`` enumerated so far for one input and one number of heavy atoms (the sums of ``r``
    heavy draws and their probabilities given ``H = r``, :func:`_next_level`), with the top level's last indices
    and counts to extend it. :func:`compound_positive_part_upper` lowers its ``tail_power`` until the heavy
    remainder is small, each time enumerating more counts of the same heavy atoms: the levels already computed are
    reused (the same arrays, so the same floats)."""

    sums: list[tuple[NDArray[np.float64], NDArray[np.float64]]] = field(
        default_factory=lambda: [(np.zeros(1), np.ones(1))])
    last: NDArray[np.intp] = field(default_factory=lambda: np.zeros(1, dtype=np.intp))
    mult: NDArray[np.intp] = field(default_factory=lambda: np.zeros(1, dtype=np.intp))


def _enumerate_heavy(v: NDArray[np.float64], pi: NDArray[np.float64], gamma: float, n: int,
                     order: NDArray[np.intp], k: int, tail_power: float, levels: _Levels
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], float,
                                list[tuple[NDArray[np.float64], NDArray[np.float64]]], float] | None:
    hv, hp = v[order[:k]], pi[order[:k]]
    lv, lp = v[order[k:]], pi[order[k:]]
    pi_h = float(hp.sum())
    p = gamma * pi_h
    lam_h = n * p
    h_max = 0
    while h_max < n and lam_h ** h_max / math.factorial(h_max) > tail_power:  # (no more than n heavy people)
        h_max += 1
    gamma_l = gamma * (1.0 - pi_h) / (1.0 - p)
    lp = lp / lp.sum()
    hq = hp / pi_h
    if _level_size(k, h_max) > _HEAVY_ATOMS:  # (the largest level: sizes grow with r)
        return None
    while len(levels.sums) <= h_max:
        ys, ps = levels.sums[-1]
        ys, ps, levels.last, levels.mult = _next_level(ys, ps, levels.last, levels.mult, hv, hq,
                                                       len(levels.sums) - 1)
        levels.sums.append((ys, ps))
    laws: list[tuple[NDArray[np.float64], NDArray[np.float64]]] = []
    for r in range(h_max + 1):
        ys, ps = levels.sums[r]
        log_pr = (log_comb_large_n(n, r) + r * math.log(p)
                  + (n - r) * math.log1p(-p))
        laws.append((ys.copy(), ps * math.exp(log_pr)))
    # H > h_max is impossible once h_max = n (every person enumerated): nothing left out
    tail = 0.0 if h_max >= n else n * gamma * _dot(pi, np.maximum(v, 0.0)) * lam_h ** h_max / math.factorial(h_max)
    return lv, lp, gamma_l, laws, tail


@dataclass(frozen=True, slots=True)
class CheckedProbs:
    """The probabilities of the atoms of ``V`` checked and normalised once (as :func:`compound_atoms` does), for
    many calls of :func:`compound_positive_part_upper` with the same probabilities and other values. Build it with
    :func:`checked_probs`."""

    shape: tuple[int, ...]
    probs: NDArray[np.float64]  # normalised, without the zero-probability atoms
    keep: NDArray[np.bool_] | None  # which atoms have a positive probability (None: all of them)
    valid: bool  # finite, non-negative, positive sum (else the call raises, as compound_atoms does)


def checked_probs(probs: ArrayLike) -> CheckedProbs:
    """:class:`CheckedProbs` of ``probs`` (the same arrays :func:`compound_atoms` computes; invalid probabilities
    raise only when used, with :func:`compound_atoms`'s message)."""
    pi = np.asarray(probs, dtype=float)
    if not (np.all(np.isfinite(pi)) and np.all(pi >= 0) and pi.sum() > 0):
        return CheckedProbs(pi.shape, pi, None, False)
    pi = pi / pi.sum()
    keep = pi > 0
    if bool(np.all(keep)):
        pi.flags.writeable = False  # shared by every call
        return CheckedProbs(pi.shape, pi, None, True)
    kept = pi[keep]
    kept.flags.writeable = False
    return CheckedProbs(pi.shape, kept, keep, True)


def _atoms(values: ArrayLike, probs: CheckedProbs, gamma: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`compound_atoms` with the probabilities checked already (the same arrays, checks and messages)."""
    v = np.asarray(values, dtype=float)
    if v.shape != probs.shape or v.ndim != 1 or v.size == 0:
        raise ValueError("values and probs must be 1-d arrays of the same non-zero length")
    if not (np.isfinite(v).all() and probs.valid):
        raise ValueError("values must be finite and probs non-negative with a positive sum")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1]; got {gamma!r}")
    return (v if probs.keep is None else v[probs.keep]), probs.probs


def compound_positive_part_upper(values: ArrayLike, probs: ArrayLike | CheckedProbs, *, gamma: float, n: int,
                                 rtol: float = 1e-3, max_cells: int = 2 ** 20, atol: float = 0.0) -> PositivePartBound:
    """Rigorous upper bound on ``E[(S)_+]``, ``S`` the sum of ``n`` iid copies of ``W`` (module docstring).

    Args:
        values, probs: the atoms of ``V`` (finite reals) and their probabilities (non-negative, positive sum; or
            :func:`checked_probs` of them, to check and normalise them once for many calls).
        gamma: probability in [0, 1] that a person contributes ``V``.
        n: number of people (>= 0).
        rtol: target rounding slack relative to the result (the lattice is refined until the estimate is below).
        max_cells: largest lattice (a power of two).
        atol: an absolute slack that is also enough (the lattice is refined until the estimate is below the larger
            of the two): a caller that needs only "at most x" passes a fraction of x, and a tiny result is not
            refined further. Every lattice gives a valid bound, so this only decides how tight; 0 (the default)
            leaves every float as without it.
    """
    atol = check_nonnegative_finite("atol", atol)
    v, pi = _atoms(values, probs, gamma) if isinstance(probs, CheckedProbs) else compound_atoms(values, probs, gamma)
    scale = float(_MAXIMUM(np.abs(v)))
    if n == 0 or gamma == 0.0 or scale == 0.0:
        return PositivePartBound(0.0, 1, 0.0, 0.0, 0.0)
    if n == 1:  # E[(W)_+] exactly
        return PositivePartBound(gamma * _dot(pi, np.maximum(v, 0.0)), 1, 0.0, 0.0, 0.0)
    v = v / scale
    if gamma == 1.0 and float(np.max(v)) == float(np.min(v)):  # S = n v surely
        return PositivePartBound(max(0.0, n * float(v[0])) * scale, 1, 0.0, 0.0, 0.0)
    tail_power = _TAIL_POWER
    levels: dict[int, _Levels] = {}  # the heavy sums enumerated so far, per number of heavy atoms (this input)
    best: _Run | None = None
    while True:
        run = _bound(v, pi, gamma, n, rtol, max_cells, tail_power, levels, atol / scale)
        # every enumeration gives a valid bound: the smallest is kept (more heavy counts narrow the window but can
        # end on a coarser lattice, so the last one is not always the tightest)
        if best is None or run.upper < best.upper:
            best = run
        # the heavy enumeration's remainder (step 2) should be negligible; if not, enumerate more counts
        if run.slack_estimate < 0.0 or tail_power < 1e-30:
            break
        if run.allowance_tail <= 0.1 * max(rtol * run.upper, atol / scale):
            break
        tail_power *= 1e-4
    return PositivePartBound(best.upper * scale, best.cells, best.step * scale, best.allowance * scale,
                             best.slack_estimate * scale)


_Heavy = tuple[NDArray[np.float64], NDArray[np.float64], float, list[tuple[NDArray[np.float64], NDArray[np.float64]]],
               float]
_Fit = tuple[float, NDArray[np.float64], NDArray[np.float64], float, float, float, float, NDArray[np.float64]]


@dataclass(frozen=True, slots=True)
class _Memo:
    """What :func:`_bound` computed for one exact input ``(v, pi, gamma, n, tail_power)`` (and the module's tuning
    constants): the heavy split and, per lattice ``(h asked for, cells)``, the fitted lattice and its evaluation.
    These are pure functions of the input, so a later call with the same input (:mod:`sufficientdp.ratio.proven`
    refines a pair type at several resolutions at the same e': the same coarse lattices come first) reuses them
    and returns the same floats."""

    heavy: _Heavy | None
    floats: int
    steps: dict[tuple[float, int], tuple[_Fit, PositivePartBound]] = field(default_factory=dict)


_MemoKey = tuple[bytes, bytes, float, int, float, tuple[float, ...]]
_MEMO: OrderedDict[_MemoKey, _Memo] = OrderedDict()
_MEMO_LOCK = threading.Lock()
_memo_floats = [0]  # floats held by _MEMO


def _memo_held(memo: _Memo) -> int:
    """Floats held by one memo entry."""
    return memo.floats + sum(f[1].size + f[2].size + f[7].size + _STEP_OVERHEAD for f, _ in memo.steps.values())


def _memo_added(floats: int) -> None:
    """Account ``floats`` just stored in the memo, dropping the oldest inputs (never the newest) to stay within
    :data:`_MEMO_FLOATS`. Call with :data:`_MEMO_LOCK` held."""
    _memo_floats[0] += floats
    while _memo_floats[0] > _MEMO_FLOATS and len(_MEMO) > 1:
        _, old = _MEMO.popitem(last=False)
        _memo_floats[0] -= _memo_held(old)


def tuning() -> tuple[float, ...]:
    """The module's constants that a bound depends on besides its input, read now (tests may patch them): part of
    the key of every cache of bounds."""
    return (HEAVY_RATE, ALPHA, _MAX_HEAVY, _HEAVY_ATOMS, _THETAS, _MIN_CELLS)


def _memo_for(v: NDArray[np.float64], pi: NDArray[np.float64], gamma: float, n: int, tail_power: float,
              levels: dict[int, _Levels] | None = None) -> tuple[_MemoKey, _Memo]:
    """The memo of this exact input and its key (the heavy split computed on first use)."""
    key = (v.tobytes(), pi.tobytes(), gamma, n, tail_power, tuning())
    with _MEMO_LOCK:
        memo = _MEMO.get(key)
        if memo is not None:
            _MEMO.move_to_end(key)
            return key, memo
    heavy = _heavy_laws(v, pi, gamma, n, tail_power, levels) if gamma < 1.0 else None
    floats = _ENTRY_OVERHEAD + (2 * v.size if heavy is None else 4 * v.size + sum(2 * ys.size for ys, _ in heavy[3]))
    memo = _Memo(heavy, floats)
    with _MEMO_LOCK:
        if key not in _MEMO and floats <= _MEMO_FLOATS // 4:  # (an input larger than that is not kept)
            _MEMO[key] = memo
            _memo_added(floats)
    return key, memo


@dataclass(frozen=True, slots=True)
class _Run:
    upper: float
    cells: int
    step: float
    allowance: float
    slack_estimate: float
    allowance_tail: float


@dataclass(frozen=True, slots=True)
class _Light:
    """The light law that :func:`_fit` puts on a lattice (values in units of the largest |v|)."""

    lv: NDArray[np.float64]
    lp: NDArray[np.float64]
    n: int
    gamma_l: float
    log_gamma: float
    log_1mg: float
    h_max: int


_FIT_STEPS = 80  # steps of the lattice fit at most
_FIT_TURNS = 6  # changes of direction after which the fit takes the finest lattice found that fits


def _fit(light: _Light, h: float, cells: int) -> _Fit | None:
    """A step near ``h`` whose Chernoff window fits the cells (the window's width in cells scales like 1/h), with
    the lattice rounded at that very step: ``(h, kv, kp, a_lo, a_hi, E[f (1 - f)], k_sd, Lambda)``.

    The width is not continuous in h (a few rare atoms decide the window's upper end: their count jumps), so the
    walk can oscillate between a window wider than the cells and one narrower than 70% of them. It then returns
    the finest lattice it met whose window fits (after :data:`_FIT_TURNS` changes of direction, or
    :data:`_FIT_STEPS` steps); None if it met none (the caller takes more cells). Every lattice returned has
    ``a_hi - a_lo + 1 <= cells`` and is the randomized rounding at the ``h`` returned with it (step 1 of the
    module docstring needs both)."""
    lv, lp, n, gamma_l = light.lv, light.lp, light.n, light.gamma_l
    atoms = lv.size
    log_alpha = math.log(ALPHA)
    fits: _Fit | None = None  # the finest lattice so far whose window fits
    turns, last = 0, 0
    for _ in range(_FIT_STEPS):
        # kv = [floor(lv / h), floor(lv / h) + 1] with probabilities kp = [lp (1 - f), lp f], the atoms of
        # probability 0 left out (written into the halves of new arrays: the same floats as concatenating)
        scaled = lv / h
        kv = np.empty(2 * atoms)
        kf = np.floor(scaled, out=kv[:atoms])
        np.add(kf, 1.0, out=kv[atoms:])
        f = np.subtract(scaled, kf, out=scaled)
        one_minus_f = 1.0 - f
        kp = np.empty(2 * atoms)
        np.multiply(lp, one_minus_f, out=kp[:atoms])
        np.multiply(lp, f, out=kp[atoms:])
        if not _MINIMUM(kp) > 0.0:  # (rarely: an atom on the lattice, f = 0)
            pos = kp > 0
            kv, kp = kv[pos], kp[pos]
        if atoms >= _MERGE_ATOMS:
            kv, kp = _merge_cells(kv, kp)
        k_sd = math.sqrt(max(n * (gamma_l * _dot(kp, kv * kv) - (gamma_l * _dot(kp, kv)) ** 2), 1.0))
        a_lo, a_hi, lam = window_ends_and_mgf(n, kv, np.log(kp), light.log_gamma, light.log_1mg, k_sd, log_alpha,
                                              fewer=light.h_max, grid=_THETAS)
        width = a_hi - a_lo + 1
        if width > cells:
            move = 1
            h *= 1.02 * width / cells
        elif width < 0.7 * cells and h * width > 1e-300 and atoms and float(_MAXIMUM(np.abs(kf))) > 4:
            if fits is None or width > fits[4] - fits[3] + 1:  # (it fits, if loosely: kept in case of a swing)
                fits = (h, kv, kp, a_lo, a_hi, _dot(lp, f * one_minus_f), k_sd, lam)
            move = -1
            h *= max(width / cells, 0.25) * 1.01
        else:
            return h, kv, kp, a_lo, a_hi, _dot(lp, f * one_minus_f), k_sd, lam
        turns += last != 0 and move != last
        last = move
        if turns >= _FIT_TURNS and fits is not None:
            break
    return fits


def _plain_bound(v: NDArray[np.float64], pi: NDArray[np.float64], gamma: float, n: int, best: _Run | None) -> _Run:
    """``E[(S)_+] <= E[sum_i (W_i)_+] = n gamma E[V_+]`` (``x -> x_+`` is subadditive), or the smallest lattice
    bound found before, if smaller: what :func:`_bound` returns when no lattice of at most ``max_cells`` cells
    holds the window (not met in practice: the window shrinks as the step grows; a safety net)."""
    upper = n * gamma * _dot(pi, np.maximum(v, 0.0))
    if best is not None and best.upper <= upper:
        return best
    return _Run(upper, 1, 0.0, 0.0, 0.0, 0.0)


def _bound(v: NDArray[np.float64], pi: NDArray[np.float64], gamma: float, n: int, rtol: float, max_cells: int,
           tail_power: float, levels: dict[int, _Levels] | None = None, atol: float = 0.0) -> _Run:
    """The bound with the heavy counts enumerated to ``lambda**h_max / h_max! <= tail_power`` (scaled units)."""
    key, memo = _memo_for(v, pi, gamma, n, tail_power, levels)
    heavy = memo.heavy
    if heavy is None:
        lv, lp, gamma_l, laws, tail = v, pi, gamma, _NO_HEAVY, 0.0
    else:
        lv, lp, gamma_l, laws, tail = heavy
    h_max = len(laws) - 1
    log_gamma = math.log(gamma_l)
    log_1mg = math.log1p(-gamma_l) if gamma_l < 1.0 else -math.inf
    sd = math.sqrt(max(n * (gamma_l * _dot(lp, lv * lv) - (gamma_l * _dot(lp, lv)) ** 2), 1e-300))

    light = _Light(lv, lp, n, gamma_l, log_gamma, log_1mg, h_max)

    cells = _MIN_CELLS
    h = 16.0 * sd / cells
    best: _Run | None = None
    while True:
        h_asked = h
        step = memo.steps.get((h_asked, cells))
        if step is None:
            got = _fit(light, h, cells)
            if got is None:  # no step puts the window in these cells: more cells, or the plain bound
                if cells >= max_cells:
                    return _plain_bound(v, pi, gamma, n, best)
                cells *= 2
                h /= 2.0
                continue
            fitted = got
            h, kv, kp, a_lo, a_hi, mean_ff, k_sd, lam = fitted
            res = _evaluate(kv, kp, gamma_l, n, h, cells, a_lo, a_hi, laws, tail, k_sd, lam, mean_ff)
            with _MEMO_LOCK:
                size = kv.size + kp.size + lam.size + _STEP_OVERHEAD
                if _MEMO.get(key) is memo and size <= _MEMO_FLOATS // 4:  # (else dropped meanwhile, or too large)
                    memo.steps[(h_asked, cells)] = (fitted, res)
                    _memo_added(size)
        else:
            (h, kv, kp, a_lo, a_hi, mean_ff, k_sd, lam), res = step
        run = _Run(res.upper, res.cells, res.step, res.allowance, res.slack_estimate, tail)
        # stop when the slack estimate is small, or when refining no longer helps (the slack is O(h**2): the
        # improvement of the last refinement bounds what is left, up to a constant)
        stalled = best is not None and best.upper - run.upper <= max(rtol * run.upper, atol)
        if best is None or run.upper < best.upper:
            best = run
        if res.slack_estimate <= max(rtol * res.upper, atol) or stalled or cells >= max_cells:
            break
        # the slack scales like h**2: jump towards the lattice that should meet rtol (one or two doublings)
        need = 0.5 * math.log2(max(res.slack_estimate / max(rtol * max(res.upper, 1e-300), atol), 1.0))
        factor = 1 << min(2, max(1, int(math.ceil(need))))
        factor = min(factor, max_cells // cells)
        cells *= factor
        h /= factor
    return best


_MERGE_ATOMS = 2048
"""Light atoms from which the rounded atoms of one lattice value are merged into one (:func:`_merge_cells`)."""


def _merge_cells(kv: NDArray[np.float64], kp: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The rounded law with one atom per lattice value: the distinct ``kv`` (ascending) and the summed ``kp`` of each.

    The same law, so every step of the module docstring holds unchanged; only the order in which the moment
    generating function's terms and the lattice cells' probabilities are added differs (rounding of the last
    bits, which the callers' relative safety margin covers). It makes the Chernoff window, whose cost is (atoms x
    thetas) exponentials, cost (distinct lattice values x thetas): at L = 256 a pair type has up to 33,282 report
    classes (66,564 rounded atoms) on a few hundred to a few thousand lattice values. Used from
    :data:`_MERGE_ATOMS` light atoms on (smaller inputs keep the unmerged sums, bit for bit as before)."""
    low = float(_MINIMUM(kv))
    span = float(_MAXIMUM(kv)) - low
    if span < 16.0 * kv.size:  # (integers: one count per value of the span, else by sorting)
        sums = np.bincount((kv - low).astype(np.int64), weights=kp).astype(np.float64, copy=False)
        at = np.flatnonzero(sums)
        return at.astype(np.float64) + low, sums[at]
    values, where = np.unique(kv, return_inverse=True)
    return values, np.bincount(where.ravel(), weights=kp, minlength=values.size).astype(np.float64, copy=False)


def _read_only(a: NDArray[np.float64]) -> NDArray[np.float64]:
    a.flags.writeable = False
    return a


_NO_HEAVY = [(_read_only(np.zeros(1)), _read_only(np.ones(1)))]  # the heavy laws without a heavy split (shared)


def _cell_numbers(cells: int) -> NDArray[np.float64]:
    """``np.arange(cells, dtype=float)``, kept once per lattice size up to :data:`_CACHED_CELLS` cells (at most 1 MB
    in all; a larger lattice's FFTs dwarf computing it again)."""
    return _small_cell_numbers(cells) if cells <= _CACHED_CELLS else np.arange(cells, dtype=float)


_CACHED_CELLS = 2 ** 16


@functools.cache
def _small_cell_numbers(cells: int) -> NDArray[np.float64]:
    out = np.arange(cells, dtype=float)
    out.flags.writeable = False  # shared by every call
    return out


def _one_heavy_sum(y: float, w: float, h: float, a_lo: float, a_hi: float, cells: int, s0: NDArray[np.float64],
                   s1: NDArray[np.float64], law: NDArray[np.float64]) -> tuple[float, float, float, float, float]:
    """The per-heavy-sum terms of :func:`_evaluate` for a single heavy sum ``y`` of probability ``w`` (every call
    without a heavy split), on Python floats instead of one-element arrays: the same IEEE operations in the same
    order, so the same floats. ``np.add.reduce`` of one element ``x`` is ``0.0 + x`` (it starts from the identity),
    ``np.maximum(x, 0.0)`` is ``x if x > 0.0 else 0.0`` (it returns its second argument on ties, so ``+0.0`` for
    ``x = -0.0``), ``np.floor`` is ``math.floor`` (up to the sign of a zero, which only feeds the cell indices) and
    ``astype(np.int64)`` truncates the integer-valued clipped index as ``int`` does.

    Returns ``sum w (h s1 + y s0)`` from the first cell with ``h k + y > 0``, ``w (h a_hi + y)_+``,
    ``w (h a_lo + y)_+``, ``w`` and ``w law[k]`` at the cell of ``h k + y = 0``, each as :func:`_dot` gives it.
    """
    lo_cell = float(math.floor(-y / h))
    i = int(min(max(lo_cell + 1.0 - a_lo, 0.0), float(cells)))
    part = 0.0 + w * (h * float(s1[i]) + y * float(s0[i]))
    top = h * a_hi + y
    low = h * a_lo + y
    top_part = 0.0 + w * (top if top > 0.0 else 0.0)
    low_part = 0.0 + w * (low if low > 0.0 else 0.0)
    j = int(min(max(lo_cell - a_lo, 0.0), float(cells - 1)))
    return part, top_part, low_part, 0.0 + w, 0.0 + w * float(law[j])


def _evaluate(kv: NDArray[np.float64], kp: NDArray[np.float64], gamma_l: float, n: int, h: float, cells: int,
              a_lo: float, a_hi: float, laws: list[tuple[NDArray[np.float64], NDArray[np.float64]]], tail: float,
              k_sd: float, lam: NDArray[np.float64], mean_ff: float) -> PositivePartBound:
    """Steps 1-4 of the module docstring on one lattice (values in units of the largest |v|); ``lam`` is one
    person's ``log E[exp(theta k)]`` on the grid ``np.geomspace(1e-9, 1e4, _THETAS) / k_sd`` (from the window)."""
    h_max = len(laws) - 1
    pmf = np.bincount(np.mod(kv.astype(np.int64), cells), weights=kp, minlength=cells)
    shifted = np.fft.rfft(pmf)
    shifted -= 1.0
    shifted *= gamma_l  # gamma_l (fhat - 1), in place (a product of two numbers is the same in either order)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = np.log1p(shifted)
        g *= n - h_max
        np.exp(g, out=g)
        finite = math.isfinite(float(_ADD(g.view(np.float64))))  # (a finite sum: every entry is finite)
    if not finite:
        g = np.where(np.isfinite(g), g, 0.0)
    powers = [g]
    if h_max:
        phi = 1.0 + shifted
        for _ in range(h_max):
            powers.append(powers[-1] * phi)
    powers.reverse()
    fft_err = math.sqrt(cells) * _U * (8.0 * math.log2(cells) + 16.0) * (
        n * gamma_l * math.sqrt(_dot(pmf, pmf)) + 1.0)
    thetas = theta_grid(_THETAS) / k_sd
    log_thetas = np.log(thetas)
    numbers = _cell_numbers(cells)
    shift = int(a_lo) % cells
    kv_top = max(0.0, float(_MAXIMUM(kv)))
    total = 0.0
    allowance = tail
    density0 = 0.0
    # suffix sums s[i] = sum_{k >= i} (same sequential order as cumsum of the reversed array), s[cells] = 0
    s0 = np.empty(cells + 1)
    s1 = np.empty(cells + 1)
    s0[cells] = s1[cells] = 0.0
    law = np.empty(cells)
    weighted = np.empty(cells)
    theta_a_hi = thetas * a_hi
    for r in range(h_max + 1):
        m = n - r
        raw = np.fft.irfft(powers[r], cells)
        ys, ws = laws[r]
        # Only the cells from the lowest one read below are computed (the cell of h k + y = 0 for the smallest
        # -y, clipped to the window): the law there is np.roll(raw, -shift) clipped at 0, and the suffix sums
        # from the top down to it are the same sequential sums as over the whole window.
        lo_cell = np.divide(ys, -h)  # the cell of h k + y = 0 for each y (ys / -h is -ys / h: IEEE symmetric)
        np.floor(lo_cell, out=lo_cell)
        lo = int(min(max(float(_MINIMUM(lo_cell)) - a_lo, 0.0), float(cells - 1)))
        start = shift + lo
        above_lo = law[lo:]
        if start < cells:
            np.concatenate((raw[start:], raw[:shift]), out=above_lo)
        else:
            above_lo[:] = raw[start - cells:shift]
        np.maximum(above_lo, 0.0, out=above_lo)
        above_lo[::-1].cumsum(out=s0[lo:cells][::-1])  # (what np.cumsum calls)
        np.multiply(above_lo, np.add(a_lo, numbers[lo:]), out=weighted[lo:])
        weighted[lo:][::-1].cumsum(out=s1[lo:cells][::-1])
        if ys.size == 1:  # no heavy atoms: the same operations on Python floats (see _one_heavy_sum)
            part, top_part, low_part, w_sum, dens = _one_heavy_sum(float(ys[0]), float(ws[0]), h, a_lo, a_hi,
                                                                   cells, s0, s1, law)
            total += part
            w_top = top_part
            allowance += 2.0 * fft_err * w_top + ALPHA * low_part
        else:
            # E[(hK + y)_+] over the window: cells with h k + y > 0, i.e. k >= floor(-y / h) + 1. (In place, in
            # the same order; products and sums of two terms are commutative.)
            idx = lo_cell + 1.0
            idx -= a_lo
            np.maximum(idx, 0.0, out=idx)
            np.minimum(idx, cells, out=idx)
            i = idx.astype(np.int64)
            term = s1.take(i)
            term *= h
            term += np.multiply(s0.take(i), ys, out=idx)
            total += _dot_into(ws, term)
            top = np.add(ys, h * a_hi, out=term)  # the largest (hk + y)_+ in the window
            np.maximum(top, 0.0, out=top)
            w_top = _dot_into(ws, top)
            low = np.add(ys, h * a_lo, out=idx)
            np.maximum(low, 0.0, out=low)
            allowance += 2.0 * fft_err * w_top + ALPHA * _dot_into(ws, low)
            w_sum = float(_ADD(ws))
            lo_cell -= a_lo
            np.maximum(lo_cell, 0.0, out=lo_cell)
            np.minimum(lo_cell, cells - 1, out=lo_cell)
            dens = _dot_into(ws, law.take(lo_cell.astype(np.int64)))
        # above the window (step 3): (hK + y)_+ <= h (K - a_hi)_+ + (h a_hi + y)_+ on {K > a_hi}, with
        # E[(K - a)_+] <= e^{-theta a} E[e^{theta K}] / (e theta) and P[K > a] <= e^{-theta a} E[e^{theta K}]
        if a_hi < m * kv_top:  # else the window reaches the top of the support
            log_chern = m * lam - theta_a_hi
            above = h * float(np.exp(np.minimum.reduce(log_chern - 1.0 - log_thetas)))
            allowance += w_sum * above + w_top * float(np.exp(np.minimum.reduce(log_chern)))
        # density of hK + y at 0 (per unit), for the slack estimate
        density0 += dens / h
    var_round = n * gamma_l * mean_ff * h * h
    slack = 0.5 * var_round * density0
    return PositivePartBound(total + allowance, cells, h, allowance, slack)
