"""A proven bound on eta over **all** collections: the privacy-blanket dominating pair (docs/proofs/blanket.md).

Seed 001 asks for ``P[R(S; D, D_m) > e**epsilon] <= eta`` for *all* neighbouring D, D_m (eq. 1.7). The paper only
analyses its homogeneous configuration, which is not the worst case (ERRATA 5). This module bounds every pair.

The argument (Balle, Bell, Gascón, Nissim 2019, "The privacy blanket of the shuffle model"; Su, Cheng, Wang 2025
show the blanket is the best decomposition), specialised to bit-vector randomized response on a domain
``X ⊆ {0,1}^L`` and written out in docs/proofs/blanket.md:

1. **Blanket.** For every report y, ``R(x)(y) >= m(y) := min_{z in X} R(z)(y)`` for every ``x in X``. With
   ``gamma = sum_y m(y)`` and ``omega = m / gamma``, every person's randomizer is the mixture
   ``R(x) = gamma omega + (1 - gamma) LO_x``.
2. **Dominating pair.** For neighbours that differ in one person's value (x versus x'), reveal which of the other
   N - 1 people drew from the blanket and what the others drew: the real output is a post-processing of the
   pair ``P = {B blanket reports} ∪ {one report from R(x)}``, ``Q = {B blanket reports} ∪ {one from R(x')}``,
   ``B ~ Bin(N - 1, gamma)``, mixed over the assignments. The hockey-stick divergence is jointly convex and
   closed under post-processing, so ``delta_real(e') <= delta_PQ(e')`` for every ``e'`` and every pair.
3. **Exact form of delta_PQ.** With ``g(y) = (R(x)(y) - e**e' R(x')(y)) / omega(y)`` the privacy-loss event is
   ``{sum over the B + 1 reports of g > 0}``, so ``delta_PQ(e') = E_{Y~omega}[g(Y) P[S > -g(Y)]]`` with
   ``S = sum_{i < N} W_i``, ``W_i = g(blanket report)`` with probability gamma and 0 otherwise. By
   exchangeability (add the special person as an N-th summand) this is ``E[(S_N)_+] / (N gamma)``: one smooth
   functional of a compound sum, bounded above by randomized lattice rounding
   (:func:`sufficientdp._numerics.positive_part.compound_positive_part_upper`; no rounding allowance, Jensen).
   (The threshold form, bracketed by :func:`sufficientdp._numerics.lattice.compound_tail_bracket`, is the
   independent check of this one in the tests.)
4. **From delta to eta.** eta is *not* closed under post-processing, so it goes through delta: for the real pair
   ``delta(e') >= eta(e) (1 - e**(e' - e))`` for ``e' < e``, hence
   ``eta_real(e) <= inf_{e' < e} delta_PQ(e') / (1 - e**(e' - e))``. (This is the best bound the delta curve
   alone can give: a pair with loss just above e on mass eta attains it.)

Pairs: by the symmetries of randomized response only the *type* of (x, x') matters — for all of {0,1}^L the
Hamming distance j (both orders are the same pair, flipping the j differing bits swaps them and leaves the uniform
blanket unchanged); one-hot vectors have one type; weight <= w has types (a, b, c) = (|x \\ x'|, |x' \\ x|,
|x ∩ x'|). The bound is the maximum over types, so it covers both neighbouring directions.

k reports per person: the k-report output is a post-processing of k independent single-report blanket pairs
(each of person i's reports is a separate draw, so assign other people's r-th reports to the r-th copy), hence
``delta_k <= delta of the k-fold composition``. Each pair type's (P, Q) is replaced by a discrete pair that
dominates it (the lower convex hull of delta bounds on a grid of epsilons, read as a privacy profile;
:func:`_dominating_loss_law`), whose k-fold loss law is one FFT power (docs/proofs/blanket.md, step 6).

Everything returns ``kind="bound"`` and ``scope="all-collections"``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaln, logsumexp

from .._errors import ParameterError
from .._numerics.positive_part import compound_positive_part_upper
from .._validation import check_epsilon, check_int, check_open_interval
from .result import TailResult

__all__ = ["DOMAINS", "Domain", "Evaluation", "PairType", "blanket_delta", "blanket_mass", "evaluate", "pair_types",
           "proven_tail", "tail_from_evaluation"]

DOMAINS = ("all", "onehot", "weight")
_MAX_CLASSES = 4_000_000  # total report classes over all pair types before the weight domain falls back to "all"
_REL_SAFETY = 1e-9
_COARSE = 5e-2  # lattice resolution of the first pass over pair types
_MID = 1.5e-2  # and of the second
_THREADS = 2  # pair types bounded at once
DEFAULT_RESOLUTION = 5e-4
"""Default lattice resolution of the bound (the rounding slack, as a fraction of the blanket sum's sd); the lattice
is also capped at :data:`FINAL_CELLS` cells, which is what binds for large crowds."""
FINAL_CELLS = 2 ** 20


def _cells_for(resolution: float) -> int:
    """Cell cap of a lattice tier: small for the coarse pre-passes, :data:`FINAL_CELLS` for the answer."""
    if resolution >= _COARSE:
        return 2 ** 16
    if resolution >= _MID:
        return 2 ** 18
    return FINAL_CELLS


@dataclass(frozen=True, slots=True, kw_only=True)
class Domain:
    """Which vectors a person may hold: all of {0,1}^L, exactly one bit set, or at most ``max_weight`` bits."""

    bits: int
    kind: str = "all"
    max_weight: int | None = None

    def __post_init__(self) -> None:
        check_int("bits", self.bits, minimum=1, maximum=100_000)
        if self.kind not in DOMAINS:
            raise ParameterError(f"domain must be one of {', '.join(DOMAINS)}; got {self.kind!r}")
        if self.kind == "onehot" and self.bits < 2:
            raise ParameterError(f"a one-hot domain needs bits >= 2 (one vector has no neighbours); got {self.bits}")
        if self.kind == "weight":
            if self.max_weight is None:
                raise ParameterError("max_weight is required for domain 'weight'")
            check_int("max_weight", self.max_weight, minimum=1, maximum=self.bits)
        elif self.max_weight is not None:
            raise ParameterError(f"max_weight applies only to domain 'weight'; got domain {self.kind!r}")

    @property
    def label(self) -> str:
        """``"all of {0,1}^L"``, ``"one-hot"`` or ``"weight <= w"``."""
        if self.kind == "all":
            return f"all of {{0,1}}^{self.bits}"
        if self.kind == "onehot":
            return f"one-hot vectors of {self.bits} bits"
        return f"vectors of {self.bits} bits with at most {self.max_weight} set"

    @classmethod
    def from_max_weight(cls, bits: int, max_weight: int | None) -> Domain:
        """``all`` when ``max_weight`` is None or >= bits, else ``weight``."""
        if max_weight is None or max_weight >= bits:
            return cls(bits=bits)
        return cls(bits=bits, kind="weight", max_weight=max_weight)


@dataclass(frozen=True, slots=True)
class PairType:
    """One class of neighbouring pairs (x, x') and the law of the report statistic under the blanket.

    Arrays run over report classes c (reports with the same counts of set bits in each region of the pair):
    ``log_omega`` (blanket mass), ``log_p`` (mass under R(x)), ``log_q`` (mass under R(x')).
    """

    name: str
    log_omega: NDArray[np.float64]
    log_p: NDArray[np.float64]
    log_q: NDArray[np.float64]


def _log_comb(n: NDArray[np.float64] | float, k: NDArray[np.float64] | float) -> Any:
    return gammaln(np.asarray(n) + 1.0) - gammaln(np.asarray(k) + 1.0) - gammaln(np.asarray(n) - np.asarray(k) + 1.0)


def _log_min_mass(domain: Domain, lvl: NDArray[np.float64], lq: float, lp: float) -> NDArray[np.float64]:
    """``log min_{z in X} R(z)(y)`` for a report y with ``lvl`` set bits (it depends on that count only)."""
    L = domain.bits
    if domain.kind == "all":
        d = np.full_like(lvl, float(L))
    elif domain.kind == "onehot":
        d = np.where(lvl < L, lvl + 1.0, L - 1.0)
    else:
        w = float(domain.max_weight or 0)
        d = lvl + np.minimum(w, L - lvl)
    return d * lq + (L - d) * lp


def blanket_mass(domain: Domain, q: float) -> float:
    """``log gamma``: log of the blanket's total mass ``sum_y min_{z in X} R(z)(y)`` (docs/proofs/blanket.md)."""
    lq, lp = math.log(q), math.log1p(-q)
    lvl = np.arange(domain.bits + 1, dtype=float)
    return float(logsumexp(_log_comb(float(domain.bits), lvl) + _log_min_mass(domain, lvl, lq, lp)))


def pair_types(domain: Domain, q: float) -> Iterator[PairType]:
    """Every type of neighbouring pair of ``domain``, with its report classes (see :class:`PairType`)."""
    L = domain.bits
    lq, lp = math.log(q), math.log1p(-q)
    log_gamma = blanket_mass(domain, q)
    if domain.kind == "all":
        for j in range(L, 0, -1):
            a = np.arange(L - j + 1, dtype=float)[:, None]  # set bits among the L - j shared bits (x = x' = 0)
            b = np.arange(j + 1, dtype=float)[None, :]  # set bits among the j differing bits (x = 1, x' = 0)
            lc = _log_comb(float(L - j), a) + _log_comb(float(j), b)
            d_x, d_xp = a + (j - b), a + b
            log_omega = lc - L * math.log(2.0)
            yield PairType(f"j={j}", log_omega.ravel(), (lc + d_x * lq + (L - d_x) * lp).ravel(),
                           (lc + d_xp * lq + (L - d_xp) * lp).ravel())
        return
    if domain.kind == "onehot":
        specs: list[tuple[int, int, int]] = [(1, 1, 0)]
    else:
        w = int(domain.max_weight or 0)
        specs = [(a, b, c) for c in range(w + 1) for a in range(w - c + 1) for b in range(w - c + 1)
                 if a + b >= 1 and a + b + c <= L]
    for a_, b_, c_ in specs:
        r_ = L - a_ - b_ - c_
        ka, kb, kc, kr = np.meshgrid(np.arange(a_ + 1.0), np.arange(b_ + 1.0), np.arange(c_ + 1.0),
                                     np.arange(r_ + 1.0), indexing="ij")
        lc = _log_comb(float(a_), ka) + _log_comb(float(b_), kb) + _log_comb(float(c_), kc) + _log_comb(float(r_), kr)
        lvl = ka + kb + kc + kr
        d_x = (a_ - ka) + (c_ - kc) + kb + kr
        d_xp = (b_ - kb) + (c_ - kc) + ka + kr
        log_omega = lc + _log_min_mass(domain, lvl, lq, lp) - log_gamma
        yield PairType(f"a={a_},b={b_},c={c_}", log_omega.ravel(), (lc + d_x * lq + (L - d_x) * lp).ravel(),
                       (lc + d_xp * lq + (L - d_xp) * lp).ravel())


def _class_count(domain: Domain) -> int:
    L = domain.bits
    if domain.kind == "all":
        return sum((L - j + 1) * (j + 1) for j in range(1, L + 1))
    if domain.kind == "onehot":
        return 4 * (L - 1)
    w = int(domain.max_weight or 0)
    return sum((a + 1) * (b + 1) * (c + 1) * (L - a - b - c + 1) for c in range(w + 1)
               for a in range(w - c + 1) for b in range(w - c + 1) if a + b >= 1 and a + b + c <= L)


def blanket_delta(pair: PairType, *, log_gamma: float, others: int, epsilon_prime: float,
                  resolution: float = DEFAULT_RESOLUTION) -> float:
    """Rigorous upper bound on ``delta_PQ(e')`` of the blanket dominating pair of one pair type.

    Positive-part form (docs/proofs/blanket.md, step 3'): with ``g(y) = (R(x)(y) - e**e' R(x')(y)) / omega(y)``,
    ``delta_PQ(e') = E[g(Y) 1{S_{N-1} + g(Y) > 0}] = E[(S_N)_+] / (N gamma)`` where ``S_N`` sums ``g`` over the
    blanket draws of all N people (exchangeability). ``E[(S_N)_+]`` is bounded above with randomized lattice
    rounding, which needs no rounding allowance (:func:`sufficientdp._numerics.positive_part.
    compound_positive_part_upper`); ``resolution`` is the relative rounding slack aimed at.
    """
    lo = pair.log_omega - float(logsumexp(pair.log_omega))  # log omega, normalised
    weight = np.exp(pair.log_p) - np.exp(pair.log_q + epsilon_prime)  # P_c - e^e' Q_c
    safety = _REL_SAFETY * float(np.sum(np.abs(weight))) + 1e-300
    gamma = min(math.exp(log_gamma), 1.0)
    n = others + 1
    if gamma * n == 0.0:  # no blanket: the local pair itself (the blanket pair is a post-processing of it)
        return float(np.sum(np.maximum(weight, 0.0))) + safety
    g = np.exp(pair.log_p - lo) - np.exp(pair.log_q + epsilon_prime - lo)
    bound = compound_positive_part_upper(g, np.exp(lo), gamma=gamma, n=n, rtol=resolution,
                                         max_cells=_cells_for(resolution))
    local = float(np.sum(np.maximum(weight, 0.0)))  # delta_PQ <= the local pair's delta (post-processing)
    return max(0.0, min(bound.upper / (n * gamma), local)) + safety


_PLD_POINTS = 48  # epsilons where the pair type's delta is bounded to build its dominating pair (k > 1)
_PLD_CELLS = 4096  # uniform grid of the composed loss


def _dominating_loss_law(pair: PairType, *, log_gamma: float, others: int, epsilon: float, reports: int,
                         resolution: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A discrete pair that dominates the pair type's (P, Q), as its loss law under P: ``(points, masses)``.

    docs/proofs/blanket.md, step 6. The privacy profile ``x -> delta(log x)`` of any pair is convex and
    decreasing in ``x = e**e``. It is bounded above at grid points ``e_0 < ... < e_m`` (:func:`blanket_delta`;
    exactly ``1 - e**e_0`` at ``e_0 = -top`` and 0 at ``e_m = top``, ``top = max |log r_x / r_x'|`` bounding the
    loss); the lower convex hull of those points is a convex, decreasing, piecewise-linear function above the true
    profile, and it *is* the profile of the discrete pair with loss atoms at the hull's corners: the mass at corner
    ``x_j`` is ``x_j`` times the increase of slope there (slope -1 left of the first corner, 0 right of the last).
    A pair whose profile is pointwise larger dominates (Blackwell), and composition keeps the order.
    """
    lr = (pair.log_p - pair.log_omega) - (pair.log_q - pair.log_omega)
    top = float(np.max(np.abs(lr)))
    if top <= 0.0:
        return np.zeros(1), np.ones(1)
    lo_d, hi_d = -min(top, epsilon), min(top, 1.5 * epsilon)
    dense = np.linspace(lo_d, hi_d, _PLD_POINTS - 12)
    pts = np.unique(np.concatenate([np.linspace(-top, lo_d, 5), dense, np.linspace(hi_d, top, 9)]))
    vals = np.empty(pts.size)
    vals[0], vals[-1] = -math.expm1(pts[0]), 0.0
    for i in range(1, pts.size - 1):
        vals[i] = min(1.0, blanket_delta(pair, log_gamma=log_gamma, others=others, epsilon_prime=float(pts[i]),
                                         resolution=resolution))
    xs = np.exp(pts)
    ys = np.maximum(vals, np.maximum(-np.expm1(pts), 0.0))  # every profile is >= (1 - x)_+
    hull = _lower_hull(xs, ys)
    hx, hy = xs[hull], ys[hull]
    # The hull starts on the line 1 - x and ends at (e**top, 0), the lowest point: its slopes are non-decreasing
    # and within [-1, 0] (up to rounding), so the corner masses are non-negative and sum to 1.
    slopes = np.concatenate([[-1.0], np.diff(hy) / np.diff(hx), [0.0]])
    masses = np.maximum(hx * np.diff(slopes), 0.0)
    return pts[hull], masses / max(float(np.sum(masses)), 1e-300)


def _lower_hull(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.intp]:
    """Indices of the lower convex hull of points sorted by x (Andrew's monotone chain)."""
    out: list[int] = []
    for i in range(x.size):
        while len(out) >= 2:
            a, b = out[-2], out[-1]
            if (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a]) <= 0.0:  # b is not below a-i
                out.pop()
            else:
                break
        out.append(i)
    return np.asarray(out, dtype=np.intp)


def _composed_delta(points: NDArray[np.float64], masses: NDArray[np.float64], reports: int,
                    eps_primes: NDArray[np.float64]) -> NDArray[np.float64]:
    """``E[(1 - e**(e' - S))_+]`` with S the sum of ``reports`` iid copies of the law (rounded up to a grid)."""
    span = float(points[-1] - points[0])
    h = span / (_PLD_CELLS - 1) if span > 0 else 1.0
    idx = np.ceil((points - points[0]) / h - 1e-9).astype(np.int64)  # round up: the law only grows
    base = np.bincount(idx, weights=masses, minlength=int(idx.max()) + 1)
    size = reports * (base.size - 1) + 1  # support of the k-fold sum
    cells = 1 << int(math.ceil(math.log2(size)))
    f = np.fft.rfft(base, cells)
    law = np.fft.irfft(f ** reports, cells)[:size]  # the k-fold convolution (no wrap-around: cells >= size)
    # float error of the FFT power, the model of _numerics.lattice (step 3): added to every delta below
    fft_err = math.sqrt(cells) * 2.0 ** -53 * (8.0 * math.log2(cells) + 16.0) * (
        reports * float(np.sqrt(base @ base)) + 1.0)
    law = np.maximum(law, 0.0)
    values = reports * float(points[0]) + h * np.arange(law.size)
    # E[(1 - e^(e' - S))_+] = P[S > e'] - e^(e') E[e^(-S); S > e'] for each e': two suffix sums (values at or
    # below the smallest e' are zeroed first, so e^(-S) cannot overflow), plus the float allowances
    keep = values > float(np.min(eps_primes))
    w0 = np.where(keep, law, 0.0)
    w1 = np.where(keep, law * np.exp(-np.where(keep, values, 0.0)), 0.0)
    s0 = np.concatenate([np.cumsum(w0[::-1])[::-1], [0.0]])
    s1 = np.concatenate([np.cumsum(w1[::-1])[::-1], [0.0]])
    first = np.searchsorted(values, eps_primes, side="right")  # first value > e'
    t0, t1 = s0[first], s1[first]
    out = np.maximum(t0 - np.exp(eps_primes) * t1, 0.0) + 1e-15 * t0 + fft_err
    return np.asarray(out, dtype=float)


def _evaluate_composed(types: list[PairType], *, log_gamma: float, others: int, epsilon: float, reports: int,
                       eps0: float, resolution: float, dom: Domain, notes: list[str],
                       progress: Callable[[int, int], Any] | None) -> Evaluation:
    """k > 1: each type's dominating law composed k times; per type ``min_e' delta_k(e') / (1 - e**(e' - e))``."""
    eps_primes = epsilon - np.geomspace(1e-4, epsilon + 4.0, 200)

    def one(pt: PairType, res: float) -> tuple[str, float, float, float]:
        pts, masses = _dominating_loss_law(pt, log_gamma=log_gamma, others=others, epsilon=epsilon,
                                           reports=reports, resolution=res)
        deltas = _composed_delta(pts, masses, reports, eps_primes)
        ratios = deltas / -np.expm1(eps_primes - epsilon)
        i = int(np.argmin(ratios))
        return pt.name, float(ratios[i]), float(deltas[i]), float(eps_primes[i])

    # every type on a coarse lattice (valid, looser), then the fine bound from the largest down while it matters
    coarse = max(resolution, _COARSE)
    rows = {pt.name: one(pt, coarse) for pt in types}
    if progress is not None:
        progress(len(types), 2 * len(types))
    if coarse > resolution:
        best_fine = -1.0
        by_name = {pt.name: pt for pt in types}
        for name in sorted(rows, key=lambda k: -rows[k][1]):
            if rows[name][1] <= best_fine:
                break
            fine = one(by_name[name], resolution)
            if fine[1] < rows[name][1]:
                rows[name] = fine
            best_fine = max(best_fine, rows[name][1])
    if progress is not None:
        progress(2 * len(types), 2 * len(types))
    vals = list(rows.values())
    name, eta, delta, eps_p = max(vals, key=lambda v: v[1])
    eta = min(1.0, eta * (1 + _REL_SAFETY) + 1e-15)
    return Evaluation(eta, delta, eps_p, name, tuple((v[0], v[1]) for v in vals), log_gamma, dom, tuple(notes))


def proven_tail(*, q: float, bits: int, population: int, epsilon: float, reports: int = 1,
                domain: Domain | None = None, resolution: float = DEFAULT_RESOLUTION,
                epsilon_prime_hint: float | None = None,
                progress: Callable[[int, int], Any] | None = None) -> TailResult:
    """Rigorous upper bound on ``eta = P[R(S) > e**epsilon]`` for **every** pair of neighbouring collections.

    One bit (L = 1, one report) is answered exactly instead: every crowd composition m and both directions are
    scanned (:func:`sufficientdp.ratio.single_bit.single_bit_worst_tail`; ``kind="exact"``).

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 1 people in the crowd.
        epsilon: > 0.
        reports: k >= 1 reports per person.
        domain: the vectors people may hold (default: all of {0,1}^L).
        resolution: lattice resolution of the compound-sum bracket (smaller: tighter, slower).
        epsilon_prime_hint: where to look for the auxiliary e' < epsilon (a local search around it instead of a
            global one; any e' gives a valid bound).
        progress: optional callback ``progress(done, total)``.

    Returns:
        A :class:`TailResult` with ``scope="all-collections"``, ``kind="bound"`` (``"exact"`` at L = 1), and in
        ``details`` the e' used, the worst pair type and the blanket's mass.

    References:
        seed 001 eq. (1.7); ERRATA 5; docs/proofs/blanket.md.

    Example:
        >>> r = proven_tail(q=0.3, bits=5, population=1000, epsilon=math.log(2))
        >>> r.kind, r.scope, r.eta < 0.01
        ('bound', 'all-collections', True)
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1, maximum=100_000)
    population = check_int("population", population, minimum=1, maximum=10**12)
    epsilon = check_epsilon(epsilon)
    reports = check_int("reports", reports, minimum=1, maximum=10_000)
    resolution = check_open_interval("resolution", resolution, 0.0, 1.0)
    dom = domain if domain is not None else Domain(bits=bits)
    if dom.bits != bits:
        raise ParameterError(f"domain.bits must equal bits ({bits}); got {dom.bits}")
    t0 = time.perf_counter()
    if bits == 1 and reports == 1 and population >= 2:
        from .single_bit import single_bit_worst_tail

        res = single_bit_worst_tail(n=population, q=q, epsilon=epsilon)
        details = dict(res.details)
        details.update({"domain": dom.label, "bound": "exact: every crowd composition m and both directions "
                        "scanned (seed 000)", "seconds": time.perf_counter() - t0})
        return replace(res, method="proven", scope="all-collections", details=details)
    hint = epsilon_prime_hint if epsilon_prime_hint is not None and epsilon_prime_hint < epsilon else None
    ev = evaluate(q=q, population=population, epsilon=epsilon, reports=reports, domain=dom,
                  resolution=resolution, epsilon_prime_hint=hint, progress=progress)
    return _result(q, bits, population, epsilon, reports, ev, t0)


def tail_from_evaluation(ev: Evaluation, *, q: float, bits: int, population: int, epsilon: float,
                         reports: int = 1, seconds: float = 0.0) -> TailResult:
    """The :class:`TailResult` that :func:`proven_tail` returns for ``evaluate(...)`` at its defaults (no hint, the
    default resolution): calibration evaluates the bound itself and reports it without computing it twice."""
    return _result(q, bits, population, epsilon, reports, ev, time.perf_counter() - seconds)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The bound at one q: ``eta``, the e' it used, the worst pair type, and each type's value at e'."""

    eta: float
    delta: float
    epsilon_prime: float
    worst: str
    by_type: tuple[tuple[str, float], ...]
    log_gamma: float
    domain: Domain
    notes: tuple[str, ...]


def evaluate(*, q: float, population: int, epsilon: float, reports: int, domain: Domain,
             resolution: float = DEFAULT_RESOLUTION, only: frozenset[str] | None = None, epsilon_prime: float | None = None,
             epsilon_prime_hint: float | None = None,
             progress: Callable[[int, int], Any] | None = None) -> Evaluation:
    """The all-collections bound at q (no input checks; see :func:`proven_tail`).

    ``only`` restricts the pair types (the result is then a bound for those types only — calibration uses it to
    search, then re-checks every type); ``epsilon_prime`` skips the search over e'; ``epsilon_prime_hint`` makes
    that search local (a few points around the hint).

    Every pair type gets its own bound ``delta_t(e'_t) / (1 - e**(e'_t - e))`` and the answer is their maximum
    (valid: each real pair has one type, and step 4 of docs/proofs/blanket.md holds for any e' per type). To keep
    the count of lattice FFTs small: e' is searched on the *leading* type only (the largest bound on the coarse
    lattice), every type is bounded on the coarse lattice, and a type is refined to a finer lattice only while its
    current (valid) bound exceeds the leading type's final bound — a type whose bound is already below it cannot
    be the maximum.
    """
    notes: list[str] = []
    dom = domain
    if dom.kind == "weight" and _class_count(dom) > _MAX_CLASSES:
        notes.append(f"the weight <= {dom.max_weight} domain has too many pair types to enumerate here; the bound "
                     "for all of {0,1}^L is used, which covers it (looser)")
        dom = Domain(bits=dom.bits)
    log_gamma = blanket_mass(dom, q)
    others = population - 1
    eps0 = _local_epsilon(dom, q)
    if reports * eps0 <= epsilon:
        return Evaluation(0.0, 0.0, epsilon, "local", (), log_gamma, dom,
                          tuple(notes + ["local DP: the privacy loss never exceeds k * epsilon_0 <= epsilon"]))
    types = [t for t in pair_types(dom, q) if only is None or t.name in only]
    if not types:
        raise ParameterError(f"no pair type of the domain matches {sorted(only or [])}")
    if reports > 1:
        return _evaluate_composed(types, log_gamma=log_gamma, others=others, epsilon=epsilon, reports=reports,
                                  eps0=eps0, resolution=resolution, dom=dom, notes=notes, progress=progress)
    tiers = _tiers(resolution)
    coarse = tiers[0]
    total = len(types) * len(tiers) + 1
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(min(done[0], total - 1), total)

    cache: dict[tuple[str, float, float], float] = {}

    def eta_of(pt: PairType, eps_q: float, res: float) -> float:
        key = (pt.name, eps_q, res)
        if key not in cache:
            d = blanket_delta(pt, log_gamma=log_gamma, others=others, epsilon_prime=eps_q, resolution=res)
            cache[key] = d / -math.expm1(eps_q - epsilon)
        return cache[key]

    fixed = epsilon_prime is not None
    if epsilon_prime is not None and not epsilon_prime < epsilon:
        raise ParameterError(f"epsilon_prime must be below epsilon = {epsilon}; got {epsilon_prime!r}")
    if epsilon_prime is not None:
        eps_p = epsilon_prime
    elif epsilon_prime_hint is not None and epsilon_prime_hint < epsilon:
        eps_p = epsilon_prime_hint
    else:  # where e' lies, from the type of largest distance (a guess; the leading type is searched below)
        eps_p, wide_val = _search_epsilon_prime(_widest(types), eta_of, epsilon=epsilon, tiers=[coarse])
        if wide_val >= 1.0:  # one type's bound is already trivial, so the maximum is (eta <= 1): stop here
            wide = _widest(types)
            if progress is not None:
                progress(total, total)
            return Evaluation(1.0, wide_val * -math.expm1(eps_p - epsilon), eps_p, wide.name,
                              ((wide.name, 1.0),), log_gamma, dom,
                              tuple(notes + ["the bound is trivial (eta <= 1) already for the widest pair type"]))
    # best[name] = (bound on eta, e', delta at e', tier index) — the smallest valid bound found for the type
    best: dict[str, tuple[float, float, float, int]] = {}

    def record(pt: PairType, eps_q: float, tier: int) -> None:
        val = eta_of(pt, eps_q, tiers[tier])
        if pt.name not in best or val < best[pt.name][0]:
            best[pt.name] = (val, eps_q, val * -math.expm1(eps_q - epsilon), tier)
        else:
            best[pt.name] = best[pt.name][:3] + (tier,)
        tick()

    if progress is not None:
        progress(0, total)
    with ThreadPoolExecutor(max_workers=_THREADS) as pool:  # numpy's FFTs and ufuncs release the GIL
        list(pool.map(lambda t: record(t, eps_p, 0), types))
        by_name = {pt.name: pt for pt in types}
        lead_name = max(best, key=lambda k: best[k][0])
        lead = by_name[lead_name]
        if not fixed:  # e' for the leading type, polished down to the requested lattice
            # (the e' found so far is near the leading type's optimum too: types differ little in it)
            eps_p, _ = _search_epsilon_prime(lead, eta_of, epsilon=epsilon, tiers=tiers,
                                             start=eps_p if epsilon_prime_hint is None else None,
                                             hint=eps_p if epsilon_prime_hint is not None else None)
        record(lead, eps_p, len(tiers) - 1)
        floor = best[lead_name][0]  # a valid final bound: types at or below it need no refinement
        # How much each tier tightens the leading type's bound: a type is sent through an intermediate tier only
        # if that is likely to bring it below the floor (else straight to the last tier). Only the order of work
        # depends on this guess; every number kept is a valid bound.
        shrink = [eta_of(lead, eps_p, tiers[ti]) for ti in range(len(tiers) - 1)] + [floor]
        for ti in range(1, len(tiers)):
            ratio = shrink[ti] / max(shrink[0], 1e-300)
            while True:
                todo = sorted((k for k, v in best.items() if v[3] < ti and v[0] > floor
                               and (ti == len(tiers) - 1 or v[0] * ratio <= floor)),
                              key=lambda k: -best[k][0])[:_THREADS]
                if not todo:
                    break
                list(pool.map(lambda k: record(by_name[k], eps_p, ti), todo))  # noqa: B023
                if ti == len(tiers) - 1:
                    floor = max(floor, max(best[k][0] for k in todo))
    if progress is not None:
        progress(total, total)
    worst_name = max(best, key=lambda k: best[k][0])
    val, eps_w, delta_w, _ = best[worst_name]
    eta = min(1.0, val * (1 + _REL_SAFETY))
    return Evaluation(eta, delta_w, eps_w, worst_name, tuple((k, v[0]) for k, v in best.items()), log_gamma, dom,
                      tuple(notes))


def _widest(types: list[PairType]) -> PairType:
    """The pair type whose two vectors are farthest apart (largest per-report log ratio): where e' is first
    searched."""
    return max(types, key=lambda pt: float(np.max(np.abs(pt.log_p - pt.log_q))))


def _tiers(resolution: float) -> list[float]:
    """Lattice resolutions of the passes, coarse to ``resolution``: :data:`_COARSE`, :data:`_MID`, ``resolution``
    (the ones not finer than ``resolution`` are skipped)."""
    return [r for r in (_COARSE, _MID) if r > resolution * 1.5] + [resolution]


def _search_epsilon_prime(pt: PairType, eta_of: Callable[[PairType, float, float], float], *, epsilon: float,
                          tiers: list[float], start: float | None = None,
                          hint: float | None = None) -> tuple[float, float]:
    """A good e' < e for one pair type's ``delta(e') / (1 - e**(e' - e))`` (any e' is valid; this only makes the
    bound small). Returns ``(e', bound at e' on the last tier)``.

    The objective is smooth and unimodal in ``x = log(e - e')`` up to the lattice's slack, which varies a little
    erratically with e' (the lattice step follows sd(S), which moves with e') and shrinks with the tier. Without
    ``start`` or ``hint``: a grid and a golden-section search on the coarsest tier (where e' lies hardly depends on
    the lattice). Then, on each finer tier, a parabola through three points around the current optimum (points
    where the parabola is not convex fall back to the best of the three), moved while an end is the best; the
    last tier first looks at five points 0.15 apart, then at +-0.075 around the best. ``start`` skips the coarse
    search (already done at that e'); ``hint`` skips it and the intermediate tiers (only the last tier's search,
    around the hint).
    """
    x_lo, x_hi = math.log(1e-6), math.log(epsilon + 4.0)

    def f(x: float, res: float) -> float:
        return eta_of(pt, epsilon - math.exp(x), res) if x_lo <= x <= x_hi else math.inf

    if start is None and hint is None:
        coarse = tiers[0]
        xs = np.linspace(math.log(1e-4), math.log(epsilon + 2.0), 9)
        vals = [f(float(x), coarse) for x in xs]
        i = int(np.argmin(vals))
        best_x, best_v = float(xs[i]), vals[i]
        a, b = float(xs[max(i - 1, 0)]), float(xs[min(i + 1, len(xs) - 1)])
        gr = (math.sqrt(5) - 1) / 2
        c, d = b - gr * (b - a), a + gr * (b - a)
        fc, fd = f(c, coarse), f(d, coarse)
        for _ in range(5):
            if fc < fd:
                b, d, fd = d, c, fc
                c = b - gr * (b - a)
                fc = f(c, coarse)
            else:
                a, c, fc = c, d, fd
                d = a + gr * (b - a)
                fd = f(d, coarse)
        for x_, v_ in ((c, fc), (d, fd)):
            if v_ < best_v:
                best_x, best_v = x_, v_
        refine = tiers[1:]
    else:
        ref = start if start is not None else hint
        assert ref is not None
        best_x = min(max(math.log(epsilon - ref), x_lo), x_hi)
        best_v = math.inf
        refine = tiers[1:] if start is not None else tiers[-1:]  # a hint is already close: last tier only
    for res in refine:
        # the last tier looks wider (its slack jitters with e' more than the curve bends near the optimum) and
        # then closer: a stencil of 5 points 0.15 apart, then +-0.075 around the best, then the parabola's vertex
        stencils = [(0.15, 2), (0.075, 1)] if res == tiers[-1] else [(0.2, 1)]
        for h, n_side in stencils:
            pts = [best_x + k * h for k in range(-n_side, n_side + 1)]
            fs = [f(x_, res) for x_ in pts]
            for _ in range(6):  # walk while an end is the best
                i = int(np.argmin(fs))
                if i == 0:
                    pts.insert(0, pts[0] - h)
                    fs.insert(0, f(pts[0], res))
                elif i == len(pts) - 1:
                    pts.append(pts[-1] + h)
                    fs.append(f(pts[-1], res))
                else:
                    break
            i = int(np.argmin(fs))
            best_x, best_v = pts[i], fs[i]
        if 0 < i < len(pts) - 1:
            fm, f0, fp = fs[i - 1], fs[i], fs[i + 1]
            curv = fm + fp - 2.0 * f0
            if math.isfinite(curv) and curv > 0.0:  # vertex of the parabola, inside (x - h, x + h)
                xv = best_x + 0.5 * h * (fm - fp) / curv
                if abs(xv - best_x) > 0.1 * h:
                    fv = f(xv, res)
                    if fv < best_v:
                        best_x, best_v = xv, fv
    return epsilon - math.exp(best_x), best_v


def local_distance(dom: Domain) -> int:
    """Largest Hamming distance between two vectors of the domain (L, 2, or min(L, 2w))."""
    if dom.kind == "onehot":
        return 2
    if dom.kind == "weight":
        return min(dom.bits, 2 * int(dom.max_weight or 0))
    return dom.bits


def _local_epsilon(dom: Domain, q: float) -> float:
    """Largest per-report log ratio between two vectors of the domain: (max distance) * log(p/q)."""
    return local_distance(dom) * math.log((1 - q) / q)


def _result(q: float, bits: int, population: int, epsilon: float, reports: int, ev: Evaluation,
            t0: float) -> TailResult:
    return TailResult(
        eta=ev.eta, eta_lower=None, eta_upper=ev.eta, method="proven", kind="bound", scope="all-collections",
        epsilon=epsilon, q=q, bits=bits, population=population, reports=reports,
        delta=None, delta_upper=ev.delta if reports == 1 else None,
        details={"domain": ev.domain.label, "epsilon_prime": ev.epsilon_prime, "worst_pair": ev.worst,
                 "blanket_mass": math.exp(ev.log_gamma),
                 "expected_blanket_reports": (population - 1) * math.exp(ev.log_gamma),
                 "bound": ("eta <= delta_PQ(e') / (1 - e^(e' - e)), delta_PQ of the privacy-blanket dominating "
                           "pair (docs/proofs/blanket.md)" if reports == 1 else
                           "eta <= delta(e') / (1 - e^(e' - e)) with delta of k composed blanket pairs, each "
                           "pair's privacy loss rounded up onto a grid (docs/proofs/blanket.md)"),
                 "notes": list(ev.notes), "seconds": time.perf_counter() - t0},
    )
