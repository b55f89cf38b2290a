"""Rigorous two-sided brackets on the tail of a compound sum, by lattice rounding and one FFT power.

The sum is ``S = W_1 + ... + W_n`` with ``W_i`` iid, ``W = 0`` with probability ``1 - gamma`` and ``W = V`` with
probability ``gamma``, where ``V`` takes finitely many real values ``v_c`` with probabilities ``pi_c``. (In the
privacy-blanket analysis ``W`` is what one other person contributes; docs/proofs/blanket.md.) For any thresholds
``t`` we return ``lower <= P[S > t] <= upper``.

Method: round every value to a lattice ``hZ`` (the rounding error is bounded by Bernstein's inequality), compute
the law of the lattice sum by one FFT power on a window of cells (the wrap-around mass bounded by Chernoff's bound),
add a float-error allowance for the FFTs, and enumerate rare heavy atoms exactly. Every error term is added to
``upper`` and subtracted from ``lower``; the failure probabilities are :data:`ALPHA` per term and :data:`DROP` for
the atoms left out, so brackets are not meant for probabilities below about 1e-10. The lattice step ``h`` makes the
rounding deviation about ``resolution`` standard deviations of the sum (capped at ``max_cells`` cells). Error
budget and proofs: ``docs/proofs/compound_tail.md``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .logspace import log_comb_large_n
from .logspace import logsumexp_finite_columns as log_sum_exp_columns
from .logspace import logsumexp_finite_rows as log_sum_exp_rows

__all__ = ["ALPHA", "DROP", "HEAVY_RATE", "TailBracket", "compound_tail_bracket"]

ALPHA = 1e-14
"""Failure probability allotted to each of: the window's upper tail, its lower tail, the rounding deviation."""

DROP = 1e-11
"""Largest chance that some person draws one of the far-out atoms that are set to 0 (added to the error budget)."""

_U = 2.0 ** -53
_KCAP = 2 ** 52
_MIN_CELLS = 2 ** 10


def compound_atoms(values: ArrayLike, probs: ArrayLike, gamma: float
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The atoms of ``V`` checked (finite values, non-negative probabilities with a positive sum, gamma in
    [0, 1]), normalised, without the zero-probability ones. Raises ValueError."""
    v = np.asarray(values, dtype=float)
    pi = np.asarray(probs, dtype=float)
    if v.shape != pi.shape or v.ndim != 1 or v.size == 0:
        raise ValueError("values and probs must be 1-d arrays of the same non-zero length")
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(pi)) and np.all(pi >= 0) and pi.sum() > 0):
        raise ValueError("values must be finite and probs non-negative with a positive sum")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1]; got {gamma!r}")
    pi = pi / pi.sum()
    keep = pi > 0
    return v[keep], pi[keep]


@dataclass(frozen=True, slots=True)
class TailBracket:
    """``lower[i] <= P[S > t_i] <= upper[i]`` for the thresholds given, with how it was computed."""

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    cells: int
    step: float
    allowance: float  # everything added to upper besides the lattice tail itself


def _window_ends(n: int, k: NDArray[np.float64], logpi: NDArray[np.float64], log_gamma: float, log_1mg: float,
                 k_sd: float, log_alpha: float, fewer: int = 0, grid: int = 300) -> tuple[float, float]:
    """Integers ``a_lo <= a_hi`` with Chernoff ``P[K > a_hi] <= ALPHA`` and ``P[K < a_lo] <= ALPHA``.

    For every ``theta > 0``, ``P[K >= a] <= exp(n Lambda(theta) - theta a)`` with ``Lambda`` the log moment
    generating function of one person's lattice value, so ``a = (n Lambda(theta) - log ALPHA) / theta`` works for
    each theta; the smallest over a grid of theta is taken (and symmetrically for the lower end). The window is
    also clipped to the support ``[n min(0, k), n max(0, k)]``.

    With ``fewer = r`` the window holds for every number of people ``m`` in ``n - r .. n`` at once: for each theta,
    ``m Lambda(theta) <= n Lambda(theta) + r max(0, -Lambda(theta))``.
    """
    a_lo, a_hi, _ = window_ends_and_mgf(n, k, logpi, log_gamma, log_1mg, k_sd, log_alpha, fewer, grid)
    return a_lo, a_hi


@functools.cache
def theta_grid(grid: int) -> NDArray[np.float64]:
    """``np.geomspace(1e-9, 1e4, grid)``, computed once per grid size (read-only)."""
    base = np.geomspace(1e-9, 1e4, grid)
    base.flags.writeable = False
    return base


@functools.cache
def _signed_theta_grid(grid: int) -> NDArray[np.float64]:
    """:func:`theta_grid` followed by its negatives (read-only)."""
    base = theta_grid(grid)
    both = np.concatenate([base, -base])
    both.flags.writeable = False
    return both


def window_ends_and_mgf(n: int, k: NDArray[np.float64], logpi: NDArray[np.float64], log_gamma: float,
                        log_1mg: float, k_sd: float, log_alpha: float, fewer: int = 0, grid: int = 300
                        ) -> tuple[float, float, NDArray[np.float64]]:
    """:func:`_window_ends`, and ``Lambda(theta)`` on its grid of positive thetas (``np.geomspace(1e-9, 1e4, grid) /
    k_sd``), which the positive-part bound reuses for its tail allowance. Both signs of theta go through one
    log-sum-exp (each theta's sum is reduced on its own, so the numbers are those of two separate calls)."""
    th = _signed_theta_grid(grid) / k_sd  # (-x) / k_sd == -(x / k_sd) exactly: the same floats as +-thetas
    if k.size <= _COLUMNS_ATOMS:
        # exponents[j, i] = theta_i k_j + log pi_j: one column per theta (log_sum_exp_columns: the same floats as
        # the row-per-theta layout below, about twice as fast on these short sums, slower on long ones)
        exponents = np.multiply(k[:, None], th)
        exponents += logpi[:, None]
        inner = log_gamma + log_sum_exp_columns(exponents)
    else:
        exponents = np.multiply.outer(th, k)
        exponents += logpi
        inner = log_gamma + log_sum_exp_rows(exponents, overwrite=True)  # (exponents is not used again)
    lam = inner if log_1mg == -math.inf else np.logaddexp(log_1mg, inner)
    if fewer:
        cand = (n * lam + fewer * np.maximum(0.0, -lam) - log_alpha) / th
    else:  # (fewer * max(0, -lam) is +0, which leaves n * lam - log_alpha unchanged: the same floats)
        cand = n * lam
        cand -= log_alpha
        cand /= th
    a_up = float(_FMIN(cand[:grid]))  # np.nanmin / np.nanmax without their Python-level checks (fmin is quiet)
    a_down = float(_FMAX(cand[grid:]))
    a_hi = math.ceil(min(a_up, n * max(0.0, float(_MAXIMUM(k)))))
    a_lo = math.floor(max(a_down, n * min(0.0, float(_MINIMUM(k)))))
    return float(a_lo), float(a_hi), lam[:grid]


_COLUMNS_ATOMS = 40  # largest number of atoms whose window sums go one column per theta (measured crossover ~50)
_FMIN, _FMAX = np.fmin.reduce, np.fmax.reduce
_MAXIMUM, _MINIMUM = np.maximum.reduce, np.minimum.reduce


HEAVY_RATE = 1e-3
"""Largest expected number of people drawing a *heavy* atom (the largest |values|), which are then handled exactly."""

_HEAVY_ATOMS = 200_000  # largest number of heavy-sum atoms kept per count of heavy people


def _heavy_split(v: NDArray[np.float64], pi: NDArray[np.float64], gamma: float, n: int
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], float,
                            list[tuple[NDArray[np.float64], NDArray[np.float64]]], float] | None:
    """Split the atoms into light ones (on the lattice) and rare heavy ones (conditioned on exactly).

    The heavy atoms are the largest ``|v|`` while ``lambda = n gamma pi(heavy) <= HEAVY_RATE``. With ``H`` the
    number of people who draw one, ``P[H > r] <= lambda**(r+1) / (r+1)!`` (union bound over (r+1)-sets), so
    ``r <= h_max`` with that tail ``<= DROP / 2`` is enumerated: given ``H = r`` the others are ``n - r`` iid draws of
    the light-conditional law and the heavy draws add a sum ``y`` with an exact finite law. Returns the light law
    ``(values, probs, gamma_light)``, ``[(y atoms, P[H = r] P[y]) for r = 0 .. h_max]`` and the probability left
    out (``P[H > h_max]`` plus the rarest heavy sums, together at most ``DROP``; added to the upper end), or None
    when splitting would not narrow the lattice.
    """
    order = np.argsort(-np.abs(v), kind="stable")
    lam = np.cumsum(pi[order]) * (n * gamma)
    k = int(np.searchsorted(lam, HEAVY_RATE, side="right"))
    if k == 0 or k >= v.size or float(np.abs(v[order[k]])) > 0.5 * float(np.abs(v[order[0]])):
        return None
    hv, hp = v[order[:k]], pi[order[:k]]
    lv, lp = v[order[k:]], pi[order[k:]]
    pi_h = float(hp.sum())
    p = gamma * pi_h  # chance that one person draws a heavy atom
    lam_h = n * p
    h_max = 0
    while h_max < n and lam_h ** (h_max + 1) / math.factorial(h_max + 1) > DROP / 2:  # (at most n heavy people)
        h_max += 1
    gamma_l = gamma * (1.0 - pi_h) / (1.0 - p)
    lp = lp / lp.sum()
    hq = hp / pi_h
    left_out = 0.0 if h_max >= n else lam_h ** (h_max + 1) / math.factorial(h_max + 1)  # P[H > n] = 0
    budget = DROP / 2  # for pruning the rarest heavy sums
    laws: list[tuple[NDArray[np.float64], NDArray[np.float64]]] = []
    ys, ps = np.zeros(1), np.ones(1)
    for r in range(h_max + 1):
        if r:
            ys = (ys[:, None] + hv[None, :]).ravel()
            ps = (ps[:, None] * hq[None, :]).ravel()
            uniq, inv = np.unique(ys, return_inverse=True)
            ys, ps = uniq.astype(float), np.bincount(inv.ravel(), weights=ps).astype(float)
        log_pr = (log_comb_large_n(n, r) + r * math.log(p)
                  + (n - r) * math.log1p(-p))
        w = ps * math.exp(log_pr)
        lost = max(0.0, 1.0 - float(ps.sum())) * math.exp(log_pr)  # sums of earlier left-out ones, missing here
        left_out += lost
        budget = max(0.0, budget - lost)
        # leave out the rarest sums while their total stays within the budget (added to the upper end)
        order_w = np.argsort(w, kind="stable")
        cut = int(np.searchsorted(np.cumsum(w[order_w]), budget, side="right"))
        if cut:
            budget -= float(w[order_w[:cut]].sum())
            left_out += float(w[order_w[:cut]].sum())
            keep = np.sort(order_w[cut:])
            ys, ps, w = ys[keep], ps[keep], w[keep]
        if w.size > _HEAVY_ATOMS:
            return None
        laws.append((ys.copy(), w))
    return lv, lp, gamma_l, laws, left_out


def compound_tail_bracket(values: ArrayLike, probs: ArrayLike, *, gamma: float, n: int, thresholds: ArrayLike,
                          resolution: float = 2e-3, max_cells: int = 2 ** 21) -> TailBracket:
    """Bracket ``P[S > t]`` for ``S`` the sum of ``n`` iid copies of ``W`` (0 w.p. ``1 - gamma``, else ``V``).

    Args:
        values, probs: the atoms of ``V`` (finite reals) and their probabilities (non-negative, summing to 1).
        gamma: probability in [0, 1] that a person contributes ``V`` at all.
        n: number of people (>= 0).
        thresholds: the ``t`` values.
        resolution: target rounding slack as a fraction of sd(S) (smaller: tighter and slower).
        max_cells: largest lattice (a power of two).

    Returns:
        A :class:`TailBracket`.
    """
    v, pi = compound_atoms(values, probs, gamma)
    t = np.atleast_1d(np.asarray(thresholds, dtype=float))
    # Rare far-out atoms only widen the window: replace the largest |v| by 0 while the chance that any person draws
    # one stays <= DROP (that chance is added to upper and subtracted from lower: S is unchanged without them).
    p_dropped = 0.0
    if n > 0 and gamma > 0.0:
        order = np.argsort(-np.abs(v), kind="stable")
        cum = np.cumsum(pi[order]) * (n * gamma)
        n_drop = int(np.searchsorted(cum, DROP, side="right"))
        if 0 < n_drop < v.size:
            p_dropped = float(cum[n_drop - 1])
            v = v.copy()
            v[order[:n_drop]] = 0.0
    scale = float(np.max(np.abs(v)))
    if n == 0 or gamma == 0.0 or scale == 0.0:
        sure = (t < 0.0).astype(float)
        return TailBracket(lower=sure, upper=sure.copy(), cells=1, step=0.0, allowance=0.0)
    # Work in units of the largest |value| (the event {S > t} is scale-free).
    v = v / scale
    ts = t / scale
    mean1 = float(pi @ v)
    var_person = gamma * float(pi @ (v * v)) - (gamma * mean1) ** 2
    if n * var_person <= 0.0:  # gamma == 1 and a single atom: S = n v exactly
        s_val = n * float(v[0])
        sure = (s_val > ts).astype(float)
        return TailBracket(lower=sure, upper=sure.copy(), cells=1, step=0.0, allowance=0.0)
    heavy = _heavy_split(v, pi, gamma, n)
    if heavy is None:
        light_v, light_pi, gamma_l, heavy_laws, p_over = v, pi, gamma, [(np.zeros(1), np.ones(1))], 0.0
    else:
        light_v, light_pi, gamma_l, heavy_laws, p_over = heavy
    h_max = len(heavy_laws) - 1
    sd_s = math.sqrt(max(n * (gamma_l * float(light_pi @ (light_v * light_v))
                              - (gamma_l * float(light_pi @ light_v)) ** 2), 0.0))
    n_eff = max(n * gamma_l, 1.0)
    log_alpha = math.log(ALPHA)
    l_alpha = -log_alpha
    h = resolution * sd_s / (2.0 * math.sqrt(2.0 * l_alpha * n_eff) / math.sqrt(12.0) + 1e-300)
    if h <= 0.0:
        h = resolution / (8.0 * n_eff)
    log_gamma = math.log(gamma_l)
    log_1mg = math.log1p(-gamma_l) if gamma_l < 1.0 else -math.inf
    while True:
        kf = np.rint(light_v / h)
        clamped = np.abs(kf) > _KCAP
        kf = np.clip(kf, -_KCAP, _KCAP)
        e = np.where(clamped, 0.0, kf * h - light_v)
        p_clamped = min(1.0, n * gamma_l * float(light_pi[clamped].sum()))
        logpi = np.log(light_pi)
        k_sd = math.sqrt(max(n * (gamma_l * float(light_pi @ (kf * kf)) - (gamma_l * float(light_pi @ kf)) ** 2),
                             1.0))
        # Window [a_lo, a_hi] with Chernoff tails <= ALPHA outside, for every number n - h_max .. n of people.
        a_lo, a_hi = _window_ends(n, kf, logpi, log_gamma, log_1mg, k_sd, log_alpha, fewer=h_max)
        width = a_hi - a_lo + 1
        cells = max(_MIN_CELLS, 1 << int(math.ceil(math.log2(width))))
        if cells <= max_cells:
            break
        h *= 2.0 * cells / max_cells
    # Rounding deviation (Bernstein, both sides at ALPHA; the bound for n people covers n - h people too).
    mu_e1 = gamma_l * float(light_pi @ e)  # mean rounding error of one person
    var_e = n * max(gamma_l * float(light_pi @ (e * e)) - mu_e1 ** 2, 0.0)
    b3 = h * l_alpha / 3.0
    tau = b3 + math.sqrt(b3 * b3 + 2.0 * var_e * l_alpha)
    # The law of K (n - r light people) on the cyclic lattice, for r = 0 .. h_max.
    idx = np.mod(kf.astype(np.int64), cells)
    pmf = np.bincount(idx, weights=light_pi, minlength=cells)
    f = np.fft.rfft(pmf)
    phi = 1.0 + gamma_l * (f - 1.0)  # one person's characteristic function on the lattice
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = np.exp((n - h_max) * np.log1p(gamma_l * (f - 1.0)))
    g = np.where(np.isfinite(g), g, 0.0)
    powers = [g]  # phi ** (n - r) for r = h_max .. 0, by multiplying up (|phi| <= 1: stable)
    for _ in range(h_max):
        powers.append(powers[-1] * phi)
    powers.reverse()
    start = int(a_lo) % cells
    fft_err = math.sqrt(cells) * _U * (8.0 * math.log2(cells) + 16.0) * (
        n * gamma_l * float(np.sqrt(pmf @ pmf)) + 1.0)
    alias = 2.0 * ALPHA  # P[K outside the window], both sides
    allowance_up = ALPHA + fft_err + ALPHA + p_clamped + p_dropped + p_over  # window, float, rounding, ...
    allowance_lo = alias + fft_err + ALPHA + p_clamped + p_dropped
    up_sum = np.zeros(ts.size)
    lo_sum = np.zeros(ts.size)
    for r in range(h_max + 1):
        m = n - r
        law = np.roll(np.fft.irfft(powers[r], cells), -start)  # law[i] ~ P[K = a_lo + i]
        suffix = np.concatenate([np.cumsum(law[::-1])[::-1], [0.0]])  # suffix[i] ~ P[K >= a_lo + i]
        # Looked up at i = (smallest integer K > u) - a_lo, clipped to 0 .. cells: at and above the window's top
        # (i >= cells) the tail is 0; at and below its bottom (i <= 0) it is at most 1 (upper) and at least
        # 1 - P[K below the window] (lower).
        ext_up, ext_lo = suffix.copy(), suffix.copy()
        ext_up[0], ext_lo[0] = 1.0, 1.0 - ALPHA
        mu_e = m * mu_e1
        ys, ws = heavy_laws[r]  # heavy sums of r people and P[H = r, sum = y]
        step = max(1, 4_000_000 // max(ts.size, 1))
        for s0 in range(0, ys.size, step):
            y, w = ys[s0:s0 + step], ws[s0:s0 + step]
            base = ts[:, None] - y[None, :]
            base += mu_e
            for sign, acc, ext in ((-1.0, up_sum, ext_up), (1.0, lo_sum, ext_lo)):
                u = base + sign * tau
                u /= h
                np.floor(u, out=u)
                u += 1.0  # smallest integer K > u
                u -= a_lo
                np.clip(u, 0, cells, out=u)
                acc += ext.take(u.astype(np.int64)) @ w
    upper = np.clip(up_sum + allowance_up, 0.0, 1.0)
    lower = np.clip(lo_sum - allowance_lo, 0.0, 1.0)
    return TailBracket(lower=lower, upper=upper, cells=cells, step=h * scale,
                       allowance=allowance_up)
