"""The tail ``eta = P[R(S) > e**epsilon]`` of the privacy ratio, homogeneous configuration, forward pair
(seed 001 §1.2–§3, eq. 1.7, 3.2, 3.4–3.6).

``N - 1`` zero vectors and one outlier differing in ``j = outlier_bits`` bits; ``N R = sum_l T_l w_l + w_{l1}``
with ``T ~ Multinomial(N - 1, Bin(j, q))``, ``l1 ~ Bin(j, p)`` and ``w_l = (q/p)**(j - 2l)``. Three methods:

* ``"certified"`` — rigorous upper bound (``kind="bound"``) with a Cantelli lower bound: exact conditioning on the
  outlier's level and the heavy counts, Chernoff with the exact MGF on the light remainder;
* ``"exact"`` — the same enumeration down to the binomial level (two-sided bracket; small j, N);
* ``"mc"`` — importance sampling of the light tails on top of the exact conditioning (empirical-Bernstein interval).

The enumeration and the Chernoff laws are the FORWARD direction of :mod:`sufficientdp.ratio._chernoff`, shared with
:mod:`sufficientdp.ratio.reverse`. Derivation, rounding margins and feasibility limits:
``docs/proofs/chernoff_tail.md``. The homogeneous configuration is the paper's *unproven* worst case (ERRATA 5;
take the worst over ``j``, :func:`worst_over_outlier_bits`); nothing here uses the Maurer step (ERRATA 3).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import ParameterError
from .._numerics.blas import one_blas_thread
from .._numerics.stats import scipy_stats
from .._validation import MAX_MC_SAMPLES, check_int, check_open_interval, renamed
from ..loss.result import TailResult
from ._chernoff import (
    ABS_FLOOR,
    CERT_MAX_CONFIGS,
    EXACT_MAX_CONFIGS,
    METHODS,
    REL_SAFETY,
    THRESH_SLACK,
    Config,
    ForwardFinish,
    Heavy,
    Problem,
    TooMany,
    UpperLaw,
    check_config,
    check_method,
    dot,
    empirical_bernstein,
    enumerate_forward_upper,
    enumerate_heavy,
    forward_problem,
    impossible,
    root,
    tail_result,
)

if TYPE_CHECKING:
    from .._offload import Helper

__all__ = [
    "EXACT_MAX_CONFIGS",
    "METHODS",
    "certified_tail",
    "exact_tail",
    "exact_tail_upper",
    "homogeneous_tail",
    "mc_tail",
    "worst_over_outlier_bits",
]


_LOG_PRUNE = math.log(1e-20)  # configurations below this probability are dropped (mass added to upper bounds)
_WINDOW_TOL = 1e-22  # per-parent Chernoff mass allowed outside a level's count window
_CERT_DELTA_GRID = 32
_TIGHT = 1e-3  # a stratum stops refining once its upper bound is within 0.1% of its lower bound
_MC_DEFAULT_SAMPLES = 200_000


# ---------------------------------------------------------------------------------------------------------------
# Delta brackets of configurations sure to exceed
# ---------------------------------------------------------------------------------------------------------------

def _f_delta(x: np.ndarray) -> np.ndarray:
    """``(1 - 1/x)_+``: the delta integrand as a function of ``R / lambda``."""
    with np.errstate(divide="ignore"):
        out: np.ndarray = np.divide(1.0, x)
        np.subtract(1.0, out, out=out)  # in place: the same operations, fewer temporaries
        np.maximum(out, 0.0, out=out)
        return out


def _concave_bracket(a: np.ndarray, b: np.ndarray, mean: np.ndarray, var: np.ndarray) -> tuple[np.ndarray,
                                                                                             np.ndarray]:
    """Bracket of ``E f(X)`` for ``X in [a, b]``, ``a >= 1`` (``f = 1 - 1/x`` concave there), given E X, Var X.

    Upper: Jensen ``f(E X)``. Lower: the larger of the chord through ``(a, f(a))``, ``(b, f(b))`` and
    ``f(E X) - Var X / (a (E X)**2)`` (from ``1/X - 1/mu = (mu - X)/mu**2 + (mu - X)**2/(X mu**2)``).
    """
    fa, fb, fe = _f_delta(a), _f_delta(b), _f_delta(mean)
    # in place where possible (the same IEEE operations in the same order as the plain formulas; issue 10)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        span = np.subtract(b, a)  # frac = (mean - a) / span where span > 0, else 0
        pos = span > 0
        span[~pos] = 1.0
        frac = np.subtract(mean, a)
        frac /= span
        frac[~pos] = 0.0
        np.clip(frac, 0.0, 1.0, out=frac)
        chord = np.subtract(fb, fa)  # chord = fa + (fb - fa) * frac
        chord *= frac
        chord += fa
        second = np.multiply(a, mean)  # second = fe - var / (a * mean * mean)
        second *= mean
        np.divide(var, second, out=second)
        np.subtract(fe, second, out=second)
    np.nan_to_num(second, copy=False, nan=0.0, neginf=0.0)
    low = np.maximum(chord, second, out=chord)
    np.minimum(low, fe, out=low)
    return np.maximum(low, 0.0, out=low), fe


def _all_certain(model: Problem) -> Heavy:
    """A stratum sure to exceed: its one root configuration collapsed (certain mass 1)."""
    start = root(model)
    return Heavy(start.lstar, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 0.0, 1.0,
                 [(model.j + 1, start.logp, start.h, start.m)])


def _collapsed_delta(model: Problem, heavy: Heavy, v1: float) -> tuple[float, float]:
    """Bracket of ``E[(1 - lambda/R)_+ ; collapsed configurations]`` in one stratum (outlier value ``v1``).

    A configuration collapsed at level ``lev`` has ``R/lambda = H + v1 + Light > 1`` with ``Light`` the sum of
    its ``m`` remaining iid reports (levels < lev): ``Light in [m v_0, m v_{lev-1}]``, mean ``m mu``, variance
    ``m s**2`` (see :func:`_concave_bracket`).
    """
    lo_sum, hi_sum = 0.0, 0.0
    for lev, logp, h, m in heavy.collapsed:
        light = model.upper_law(lev)  # the law of one remaining report: its mean and variance
        mu, var = light.mu, light.var
        mf = m.astype(float)
        base = h + v1
        ends = []
        for scale in (model.v[0], model.v[lev - 1], mu):  # base + mf * scale, computed in place (+ commutes)
            x = mf * scale
            x += base
            ends.append(x)
        lo, hi = _concave_bracket(ends[0], ends[1], ends[2], mf * var)
        pc = np.exp(logp)
        lo_sum += dot(pc, lo)
        hi_sum += dot(pc, hi)
    return lo_sum, hi_sum


# ---------------------------------------------------------------------------------------------------------------
# The light remainder: Chernoff upper bound and Cantelli lower bound
# ---------------------------------------------------------------------------------------------------------------
def _residual(heavy: Heavy, x: float, v1: float, up: bool) -> np.ndarray:
    """Residual threshold for the light sum, ``x - v1 - H``, moved by the slack in the safe direction."""
    t = (x - v1) - heavy.h
    slack = THRESH_SLACK * (x + v1 + heavy.h) + 1e-300
    return t - slack if up else t + slack


def _live_tail(heavy: Heavy, light: UpperLaw, v1: float, xs: np.ndarray,
               want_lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """Raw sums over the live configurations of upper (and lower) bounds on ``P[R > x lambda, config]``."""
    ups = np.zeros(xs.size)
    los = np.zeros(xs.size)
    if heavy.logp.size == 0:
        return ups, los
    pc = np.exp(heavy.logp)
    with one_blas_thread():  # a dot product's sum order depends on OpenBLAS's thread count: one, on every machine
        for i, x in enumerate(xs):
            ups[i] = float(pc @ np.exp(light.log_upper(heavy.m, _residual(heavy, float(x), v1, True))))
            if want_lower:
                los[i] = float(pc @ light.lower(heavy.m, _residual(heavy, float(x), v1, False)))
    return ups, los


def _finish(heavy: Heavy, up_live: float, lo_live: float, extra_up: float = 0.0) -> tuple[float, float]:
    """Bounds for one stratum from the live sums: add the certain mass (both ends) and the dropped mass (upper
    end), then apply the relative margins."""
    up = (up_live + heavy.certain + heavy.dropped + extra_up) * (1.0 + REL_SAFETY) + ABS_FLOOR
    lo = (lo_live + heavy.certain) * (1.0 - REL_SAFETY)
    return float(min(up, 1.0)), float(min(max(lo, 0.0), 1.0))


def _delta_grid(k: int) -> np.ndarray:
    """Threshold factors ``1/(1 - v_i)``, ``v_i = i/k``, i = 0..k-1 (delta = int_0^1 P[R > lambda/(1-v)] dv)."""
    return 1.0 / (1.0 - np.arange(k) / k)


def _stratum_kind(model: Problem, l1: int) -> str:
    """``"certain"`` if ``(N-1) w_0 + w_{l1} > N lambda`` (always exceeds), ``"never"`` if even ``N - 1`` top
    reports cannot exceed, else ``"random"`` (margins 1e-9 relative)."""
    y = float(model.y[l1])
    n = model.n
    if n * model.v[0] > y + 1e-9 * abs(y) + 1e-300:
        return "certain"
    if n * model.v[-1] * (1.0 + 1e-9) < y - 1e-9 * abs(y):
        return "never"
    return "random"


# ---------------------------------------------------------------------------------------------------------------
# Certified
# ---------------------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class _Stratum:
    """Certified bounds for one outlier stratum ``l1`` at its best stage."""

    l1: int
    weight: float  # P[l1]
    kind: str
    up: float
    lo: float
    heavy: Heavy | None = None
    stages: int = 0
    refined: bool = False


def _strata_stage0(model: Problem, lights: Callable[[int], UpperLaw], want_lower: bool) -> list[_Stratum]:
    """Every stratum at the root stage (no enumeration): certain, never, or the plain Chernoff (and Cantelli)
    bound of all ``n`` reports light.

    The random strata's bounds come from one vectorized evaluation over their thresholds: elementwise the same
    operations as :func:`_live_tail` on each stratum's root, whose one configuration (probability ``exp(0) =
    1``) is then summed as there, one ``pc @`` product per stratum (issue 10)."""
    kinds = [_stratum_kind(model, l1) for l1 in range(model.j + 1)]
    rand = [l1 for l1, kind in enumerate(kinds) if kind == "random"]
    ups = los = np.zeros(0)
    pc = np.zeros(0)
    if rand:
        start = root(model)
        light = lights(model.j + 1)
        pc = np.exp(start.logp)
        v1 = model.v[rand]
        h = np.broadcast_to(start.h, v1.shape)
        m = np.broadcast_to(start.m, v1.shape)
        t = (1.0 - v1) - h  # _residual at x = 1 of each stratum's root
        slack = THRESH_SLACK * (1.0 + v1 + h) + 1e-300
        ups = np.exp(light.log_upper(m, t - slack))
        if want_lower:
            los = light.lower(m, t + slack)
    strata = []
    for l1, kind in enumerate(kinds):
        w = float(math.exp(model.logp1[l1]))
        if kind == "certain":
            strata.append(_Stratum(l1, w, kind, 1.0, 1.0, None))
        elif kind == "never":
            strata.append(_Stratum(l1, w, kind, 0.0, 0.0, None))
        else:
            i = rand.index(l1)
            start = root(model)
            up_live = float(pc @ ups[i:i + 1])
            lo_live = float(pc @ los[i:i + 1]) if want_lower else 0.0
            up, lo = _finish(start, up_live, lo_live)
            strata.append(_Stratum(l1, w, kind, up, lo, start, 1))
    return strata


def _refine_stratum(model: Problem, st: _Stratum, lights: Callable[[int], UpperLaw], cap: int,
                    want_lower: bool) -> None:
    """Lower l* stage by stage for one stratum, keeping the smallest upper and largest lower bound."""
    if st.kind != "random":
        return
    v1 = float(model.v[st.l1])
    one = np.array([1.0])

    def stage(heavy: Heavy) -> bool:
        st.stages += 1
        if heavy.lstar <= model.j:  # the root stage was done by _strata_stage0
            ups, los = _live_tail(heavy, lights(heavy.lstar), v1, one, want_lower)
            up, lo = _finish(heavy, float(ups[0]), float(los[0]))
            if up < st.up:
                st.up, st.heavy = up, heavy
            st.lo = max(st.lo, lo)
        return st.up <= st.lo * (1.0 + _TIGHT) or st.up <= 1e-300

    try:
        enumerate_heavy(model, y=float(model.y[st.l1]), stop_level=1, cap=cap, log_prune=_LOG_PRUNE,
                        window_tol=_WINDOW_TOL, stage=stage)
    except TooMany:
        pass
    st.refined = True


def _certified_core(model: Problem, *, stop_below: float | None = None, cap: int = CERT_MAX_CONFIGS,
                    want_lower: bool = True) -> list[_Stratum]:
    """Per-stratum certified bounds; ``eta <= sum_l1 P[l1] up_l1`` (and ``>= sum P[l1] lo_l1``).

    Every stratum first gets the plain Chernoff bound (no enumeration). Strata are then refined in decreasing
    order of their contribution; refinement stops early once the total is ``<= stop_below`` (the remaining
    strata keep their valid stage-0 bounds), and strata whose contribution is below 1e-4 of the total / (j+1)
    are not refined (their bounds are valid, they just are not tightened).
    """
    lights = model.upper_law
    strata = _strata_stage0(model, lights, want_lower)

    def total() -> float:
        return math.fsum(s.weight * s.up for s in strata)

    order = sorted((s for s in strata if s.kind == "random"), key=lambda s: -s.weight * s.up)
    for s in order:
        tot = total()
        if stop_below is not None and tot <= stop_below:
            break
        if s.weight * s.up < 1e-4 * tot / (model.j + 1):
            continue
        _refine_stratum(model, s, lights, cap, want_lower)
    return strata


def _sum_strata(strata: list[_Stratum]) -> tuple[float, float]:
    up = math.fsum(s.weight * s.up for s in strata) * (1.0 + REL_SAFETY) + ABS_FLOOR
    lo = math.fsum(s.weight * s.lo for s in strata) * (1.0 - REL_SAFETY)
    return min(up, 1.0), min(max(lo, 0.0), 1.0)


def _certified_delta(model: Problem, strata: list[_Stratum]) -> tuple[float, float]:
    """Rigorous bracket of delta: per stratum, Riemann sums of the Chernoff/Cantelli bounds on the live
    configurations over ``x_i = 1/(1 - i/K)``, plus the Jensen/chord bracket of the collapsed ones, plus dropped
    mass (upper)."""
    xs = _delta_grid(_CERT_DELTA_GRID)
    k = xs.size
    lights = model.upper_law
    d_up, d_lo = [], []
    for s in strata:
        v1 = float(model.v[s.l1])
        if s.kind == "never":
            continue
        heavy = s.heavy
        if heavy is None:  # certain stratum: everything collapsed at the root
            heavy = _all_certain(model)
        ups, los = _live_tail(heavy, lights(heavy.lstar), v1, xs, True)
        c_lo, c_hi = _collapsed_delta(model, heavy, v1)
        hi = float(np.sum(ups)) / k + c_hi + heavy.dropped
        lo = float(np.sum(los[1:])) / k + c_lo
        d_up.append(s.weight * min(hi, s.up))
        d_lo.append(s.weight * lo)
    return (max(0.0, math.fsum(d_lo) * (1.0 - REL_SAFETY)),
            min(1.0, math.fsum(d_up) * (1.0 + REL_SAFETY) + ABS_FLOOR))


def _zero_result(cfg: Config, method: str, kind: str) -> TailResult:
    return tail_result(cfg, eta=0.0, lo=0.0, hi=0.0, method=method, kind=kind, delta=0.0, d_lo=0.0, d_hi=0.0,
                       details={"reason": _NEVER})


_NEVER = "(p/q)**j <= e**epsilon: R never exceeds lambda (local-DP regime), eta = delta = 0 exactly"


def _strata_details(strata: list[_Stratum]) -> dict[str, Any]:
    return {str(s.l1): {"p_l1": s.weight, "kind": s.kind, "eta_upper": s.up, "eta_lower": s.lo,
                        "lstar": None if s.heavy is None else s.heavy.lstar,
                        "configs": 0 if s.heavy is None else int(s.heavy.logp.size),
                        "dropped_mass": 0.0 if s.heavy is None else s.heavy.dropped,
                        "refined": s.refined} for s in strata}


def certified_tail(*, q: float, bits: int, population: int, epsilon: float,
                   outlier_bits: int | None = None, with_delta: bool = True) -> TailResult:
    """Rigorous upper bound on ``eta = P[R(S) > e**epsilon]`` (and on delta), with a rigorous lower bound.

    ``eta = sum_{l1} P[l1] sum_{heavy counts c} P[c] P[Light_{m(c)} > N lambda - w_{l1} - H(c)]`` exactly
    (seed 001 eq. 3.5–3.6). Per stratum ``l1``, the light tail is bounded above by Chernoff with the exact MGF
    and below by Cantelli; enumerated-away and pruned masses are added to the upper bound; ``l*`` is lowered
    until the enumeration would exceed 120,000 live configurations, and the best stage is kept (see the module
    docstring for the rounding margins). Delta: ``delta <= sum_{i<K} eta_upper(lambda/(1 - i/K))/K`` and
    ``delta >= sum_{0<i<K} eta_lower(lambda/(1 - i/K))/K`` (K = 32) on the live configurations, with
    configurations already sure to exceed bracketed by Jensen/chord.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 1 (N - 1 zero reports plus the outlier).
        epsilon: privacy level > 0 (``lambda = e**epsilon``).
        outlier_bits: j in [1, L], bits in which the outlier differs (default L).
        with_delta: also bound delta (most of the time at large N); with False, ``delta`` and its bounds are
            None and eta is the same float.

    Returns:
        A :class:`TailResult` with ``kind="bound"``, ``eta = eta_upper`` (never understated) and ``eta_lower``
        a rigorous lower bound; ``details["strata"]`` has, per ``l1``, its bounds, ``l*``, configurations and
        dropped mass.

    Raises:
        ParameterError: a parameter out of range.

    References:
        seed 001 §1.2 (eq. 1.7), §3.1 (eq. 3.2, 3.4–3.6); ERRATA 3 (no Maurer step), ERRATA 5.

    Examples:
        >>> r = certified_tail(q=0.169199, bits=5, population=1000, epsilon=2.0)
        >>> r.eta_lower <= 0.003706 <= r.eta < 2 * 0.003706
        True
    """
    cfg = check_config(q, bits, population, epsilon, outlier_bits)
    q, bits, population, epsilon, j = cfg.q, cfg.bits, cfg.population, cfg.epsilon, cfg.j
    t0 = time.perf_counter()
    model = forward_problem(q, j, population, epsilon)
    if impossible(model.q, model.j, model.epsilon):
        return _zero_result(cfg, "certified", "bound")
    strata = _certified_core(model)
    up, lo = _sum_strata(strata)
    d_lo: float | None = None
    d_up: float | None = None
    if with_delta:
        d_lo, d_up = _certified_delta(model, strata)
        d_up = min(d_up, up)
    details = {"strata": _strata_details(strata), "seconds": time.perf_counter() - t0,
               "note": "upper bound: exact conditioning on the outlier and the heavy counts + Chernoff (exact "
                       "MGF) on the light sum; lower bound: Cantelli. Homogeneous configuration = unproven "
                       "worst case (ERRATA 5)."}
    return tail_result(cfg, eta=up, lo=lo, hi=up, method="certified", kind="bound", delta=d_up, d_lo=d_lo,
                       d_hi=d_up, details=details)


# ---------------------------------------------------------------------------------------------------------------
# Exact
# ---------------------------------------------------------------------------------------------------------------
def _infeasible(model: Problem) -> ParameterError:
    return ParameterError(
        f"exact method infeasible for outlier_bits={model.j}, population={model.population}: more "
        f"than {EXACT_MAX_CONFIGS:,} heavy-count configurations; use method='certified' (rigorous "
        "bound) or 'mc'")


def _exact_stratum(model: Problem, l1: int) -> tuple[float, float, float, float, float, float, int]:
    """One stratum: (eta float value, eta lower, eta upper, delta lower, delta upper, dropped, configs)."""
    kind = _stratum_kind(model, l1)
    v1 = float(model.v[l1])
    if kind == "never":
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0
    if kind == "certain":
        heavy = _all_certain(model)
    else:
        try:
            heavy = enumerate_heavy(model, y=float(model.y[l1]), stop_level=2, cap=EXACT_MAX_CONFIGS,
                                    log_prune=_LOG_PRUNE, window_tol=_WINDOW_TOL)
        except TooMany:
            raise _infeasible(model) from None
    c_lo, c_hi = _collapsed_delta(model, heavy, v1)
    raw = lo = hi = d_lo = d_hi = outside = 0.0
    n_cfg = int(heavy.logp.size)
    if n_cfg:
        bl = ForwardFinish(model, heavy, v1=v1, window_tol=_WINDOW_TOL)  # the event is T_1 > k
        pc, dv, mw0 = bl.pc, bl.dv, bl.mw0
        _, k_lo, k_hi = bl.counts()  # first counts strictly above k + s (lower end), at or above k - s (upper)
        fin = bl.tail()
        raw, lo, hi, outside = fin.raw, fin.lower, fin.upper, fin.outside
        # delta over the live configurations: X = base + T_1 dv with base = H + v1 + m v0. Given T_1 >= k1
        # (the first count with X > 1), X lies in [base + k1 dv, base + hi dv] where f = 1 - 1/x is concave:
        # bracket E[f(X); T_1 >= k1] with the conditional mean and variance (suffix-sum tables, exact).
        base = heavy.h + v1 + mw0
        u = bl.inv
        c1 = bl.col(k_lo)  # k1: strictly above the threshold with slack, so X >= 1 there
        mass = bl.sf[u, c1]
        ok = mass > 0
        if np.any(ok):
            cm = np.where(ok, mass, 1.0)
            mean_k = bl.centre[u] + bl.s1[u, c1] / cm
            var_k = np.maximum(bl.s2[u, c1] / cm - (bl.s1[u, c1] / cm) ** 2, 0.0) * (1.0 + 1e-6) + 1e-300
            k1 = (bl.lo + c1).astype(float)
            a_x = np.maximum(base + k1 * dv, 1.0)
            b_x = np.maximum(base + bl.hi * dv, a_x)
            mean_x = np.clip(base + mean_k * dv, a_x, b_x)
            blo, bhi = _concave_bracket(a_x, b_x, mean_x, var_k * dv * dv)
            d_lo += dot(pc[ok], (mass * blo)[ok])
            d_hi += dot(pc[ok], (mass * bhi)[ok])
        # counts between the ">=" threshold and k1 have 1 <= X < base + k1 dv (a relative 1e-10 sliver)
        sliver = bl.sf[u, bl.col(k_hi)] - mass
        d_hi += dot(pc, np.maximum(sliver, 0.0) * _f_delta(base + (bl.lo + c1) * dv))
    up, _ = _finish(heavy, hi, 0.0, extra_up=outside)
    _, low = _finish(heavy, 0.0, lo)
    dropped = heavy.dropped + outside
    d_lo = (d_lo + c_lo) * (1.0 - REL_SAFETY)
    d_hi = (d_hi + c_hi + dropped) * (1.0 + REL_SAFETY) + ABS_FLOOR
    return raw + heavy.certain, low, up, max(d_lo, 0.0), min(d_hi, up), dropped, n_cfg


def exact_tail(*, q: float, bits: int, population: int, epsilon: float,
               outlier_bits: int | None = None) -> TailResult:
    """Exact ``eta = P[R(S) > e**epsilon]`` with a rigorous two-sided bracket, for small j and N.

    Per outlier stratum ``l1``, enumerates the counts of levels ``j..2`` top-down (exact conditional binomials;
    windows and pruning with their mass bounded and added to the upper end; configurations that are sure or
    impossible whatever the lower levels do are resolved exactly) and sums the binomial tail of ``T_1``:
    ``P[N R > N lambda | c, l1] = P[T_1 (w_1 - w_0) > N lambda - w_{l1} - H(c) - m w_0]`` (seed 001 eq. 3.6).
    Lattice points within a relative 1e-10 of the threshold count only in the upper end, so
    ``[eta_lower, eta_upper]`` contains both ``P[R > lambda]`` and ``P[R >= lambda]``; ``eta`` is the float
    value for ``>``. ``delta`` is summed exactly over ``T_1`` where the range of ``R`` straddles ``lambda``, and
    bracketed by Jensen / chord / variance bounds of the concave ``1 - 1/x`` where ``R > lambda`` surely.

    Feasibility: at most ``EXACT_MAX_CONFIGS`` live heavy configurations per stratum (at the paper's L = 5
    configurations: N up to ~1e4 within seconds; every extra differing bit multiplies the work by the spread of
    one more count), else :class:`ParameterError`.

    Args:
        q, bits, population, epsilon, outlier_bits: as in :func:`certified_tail`.

    Returns:
        A :class:`TailResult` with ``kind="exact"``.

    Raises:
        ParameterError: a parameter out of range, or the configuration is beyond the feasibility limit.

    References:
        seed 001 eq. (3.4)–(3.6), (1.7).

    Examples:
        >>> r = exact_tail(q=0.169199, bits=5, population=1000, epsilon=2.0)
        >>> r.eta_lower <= 0.003706 + 5e-7 and 0.003706 - 5e-7 <= r.eta_upper
        True
    """
    cfg = check_config(q, bits, population, epsilon, outlier_bits)
    q, bits, population, epsilon, j = cfg.q, cfg.bits, cfg.population, cfg.epsilon, cfg.j
    t0 = time.perf_counter()
    model = forward_problem(q, j, population, epsilon)
    if impossible(model.q, model.j, model.epsilon):
        return _zero_result(cfg, "exact", "exact")
    p1 = np.exp(model.logp1)
    vals = [_exact_stratum(model, l1) for l1 in range(j + 1)]
    raw = math.fsum(p1[i] * v[0] for i, v in enumerate(vals))
    lo = max(0.0, math.fsum(p1[i] * v[1] for i, v in enumerate(vals)) * (1.0 - REL_SAFETY))
    hi = min(1.0, math.fsum(p1[i] * v[2] for i, v in enumerate(vals)) * (1.0 + REL_SAFETY) + ABS_FLOOR)
    d_lo = max(0.0, math.fsum(p1[i] * v[3] for i, v in enumerate(vals)) * (1.0 - REL_SAFETY))
    d_hi = min(hi, math.fsum(p1[i] * v[4] for i, v in enumerate(vals)) * (1.0 + REL_SAFETY) + ABS_FLOOR)
    details = {"configs": sum(v[6] for v in vals), "dropped_mass": math.fsum(p1[i] * v[5] for i, v in
                                                                             enumerate(vals)),
               "seconds": time.perf_counter() - t0,
               "note": "bracket contains P[R > lambda] and P[R >= lambda]"}
    return tail_result(cfg, eta=float(min(max(raw, lo), hi)), lo=lo, hi=hi, method="exact", kind="exact",
                       delta=0.5 * (d_lo + d_hi), d_lo=d_lo, d_hi=d_hi, details=details)


def _exact_stratum_upper(model: Problem, l1: int) -> float:
    """The upper end of :func:`_exact_stratum` (its third value), bit for bit, without the delta bracket and with
    the enumeration of :func:`~sufficientdp.ratio._chernoff.enumerate_forward_upper`: its dropped mass is known to
    an interval, and the upper end is the same float at both ends of it (else, or if that enumeration does not
    apply, :func:`_exact_stratum` decides)."""
    if _stratum_kind(model, l1) != "random":
        return _exact_stratum(model, l1)[2]
    v1 = float(model.v[l1])
    try:
        found = enumerate_forward_upper(model, y=float(model.y[l1]), cap=EXACT_MAX_CONFIGS, log_prune=_LOG_PRUNE,
                                        window_tol=_WINDOW_TOL)
    except TooMany:
        raise _infeasible(model) from None
    if found is None:
        return _exact_stratum(model, l1)[2]
    heavy, d_lo, d_hi = found
    hi = outside = 0.0
    if heavy.logp.size:
        bl = ForwardFinish(model, heavy, v1=v1, window_tol=_WINDOW_TOL)
        rows = np.arange(bl.pc.size)
        hi = dot(bl.pc, bl.prob_ge(rows, bl.counts()[2]))  # FinishTail.upper and .outside of bl.tail()
        outside = dot(bl.pc, bl.outside[bl.inv])
    ends = {_finish(replace(heavy, dropped=d), hi, 0.0, extra_up=outside)[0] for d in (d_lo, d_hi)}
    return ends.pop() if len(ends) == 1 else _exact_stratum(model, l1)[2]


def exact_tail_upper(*, q: float, bits: int, population: int, epsilon: float, outlier_bits: int | None = None) -> float:
    """``exact_tail(...).eta_upper``, the same float, ~5x faster at L = 5, N = 1000: what a calibration search needs
    (issue 10).

    Per stratum, :func:`_exact_stratum_upper` (no delta bracket; the kept children built from per-parent count
    intervals, the dropped mass to an interval that leaves the upper end unchanged).

    Raises:
        ParameterError: as :func:`exact_tail`.

    Examples:
        >>> kw = {"q": 0.169199, "bits": 5, "population": 1000, "epsilon": 2.0}
        >>> exact_tail_upper(**kw) == exact_tail(**kw).eta_upper
        True
    """
    cfg = check_config(q, bits, population, epsilon, outlier_bits)
    model = forward_problem(cfg.q, cfg.j, cfg.population, cfg.epsilon)
    if impossible(model.q, model.j, model.epsilon):
        return 0.0
    p1 = np.exp(model.logp1)
    ups = [_exact_stratum_upper(model, l1) for l1 in range(cfg.j + 1)]
    return min(1.0, math.fsum(p1[i] * u for i, u in enumerate(ups)) * (1.0 + REL_SAFETY) + ABS_FLOOR)


# ---------------------------------------------------------------------------------------------------------------
# Monte Carlo
# ---------------------------------------------------------------------------------------------------------------
def _collapsed_all(model: Problem, strata: list[_Stratum]) -> tuple[float, float]:
    """``sum_l1 P[l1] E[(1 - lambda/R)_+ ; collapsed]`` bracket (certain strata collapse at the root)."""
    lo, hi = 0.0, 0.0
    for s in strata:
        if s.kind == "never":
            continue
        heavy = s.heavy
        if heavy is None:
            heavy = _all_certain(model)
        c_lo, c_hi = _collapsed_delta(model, heavy, float(model.v[s.l1]))
        lo += s.weight * c_lo
        hi += s.weight * c_hi
    return lo, hi


def mc_tail(*, q: float, bits: int, population: int, epsilon: float, outlier_bits: int | None = None,
            rng: np.random.Generator | None = None, samples: int | None = None,
            confidence_level: float | None = None,
            confidence: float | None = None) -> TailResult:
    """Monte Carlo estimate of ``eta`` and ``delta``: importance sampling on top of the exact conditioning.

    Write ``eta = sum_{l1} P[l1] (certain_{l1} + sum_c P[c] P[Light_{m_c} > t_c] + dropped part)`` as in
    :func:`certified_tail` (the outlier stratum and the heavy counts are handled exactly; seed 001 eq. 3.5–3.6).
    Only the light probabilities are sampled. Each live pair ``(l1, c)`` has the Chernoff value
    ``B_c = exp(-theta_c t_c + m_c Lambda(theta_c)) >= P[Light > t_c]``; pairs are drawn with probability
    ``∝ U_c = P[l1] P[c] B_c``, and the light counts from the exponentially tilted law
    ``pi_theta(l) ∝ pi(l) e^{theta_c v_l}`` (a multinomial of the ``m_c`` light reports). The likelihood ratio
    over ``B_c`` is ``Y = exp(-theta_c (Light - t_c)) 1{Light > t_c}``, which lies in [0, 1]; so
    ``eta = certain + U_tot E[Y] (+ dropped)`` with a bounded, typically low-variance Y (the relative variance
    is small whenever the Chernoff bound is tight). The interval is the empirical-Bernstein interval of
    Maurer & Pontil (valid for every sample size at the stated confidence, not asymptotic), widened by the
    dropped mass on the upper side and intersected with the rigorous certified bracket (both hold, so the
    coverage is unchanged). ``delta`` uses the same draws with ``Y (1 - lambda/R)``, plus the Jensen/chord
    bracket for configurations sure to exceed (its half-width is added to the interval).

    This is an estimate (``kind="estimate"``); the sampler shares the exact decomposition with the certified
    method, so for an independent check use :func:`exact_tail` or a plain simulation.

    Args:
        q, bits, population, epsilon, outlier_bits: as in :func:`certified_tail`.
        rng: a seeded ``numpy.random.Generator`` (a fresh unseeded one if None).
        samples: number of draws (default 200,000; 1,000 to ``_validation.MAX_MC_SAMPLES``).
        confidence_level: level of the interval, in (0, 1).

    Returns:
        A :class:`TailResult` with ``kind="estimate"``; ``details`` has ``U_tot``, the exact part, the
        dropped mass, the normal-approximation interval for reference and the time.

    Raises:
        ParameterError: a parameter out of range.

    References:
        seed 001 §3.2 (Monte Carlo of eq. 3.5–3.6).

    Examples:
        >>> r = mc_tail(q=0.169199, bits=5, population=1000, epsilon=2.0, rng=np.random.default_rng(1),
        ...             samples=20_000)
        >>> r.eta_lower <= 0.0037063002 <= r.eta_upper  # exact_tail: 0.00370630022 (reproduction.md: 0.003706)
        True
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    cfg = check_config(q, bits, population, epsilon, outlier_bits)
    q, bits, population, epsilon, j = cfg.q, cfg.bits, cfg.population, cfg.epsilon, cfg.j
    samples = (_MC_DEFAULT_SAMPLES if samples is None
               else check_int("samples", samples, minimum=1000, maximum=MAX_MC_SAMPLES))
    confidence = check_open_interval("confidence_level", confidence, 0.0, 1.0)
    if rng is None:
        rng = np.random.default_rng()
    elif not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy.random.Generator or None; got {rng!r}")
    t0 = time.perf_counter()
    model = forward_problem(q, j, population, epsilon)
    if impossible(model.q, model.j, model.epsilon):
        return _zero_result(cfg, "mc", "estimate")
    strata = _certified_core(model)
    cert_up, cert_lo = _sum_strata(strata)
    lights = model.upper_law
    exact_part = math.fsum(s.weight * (1.0 if s.kind == "certain" else (s.heavy.certain if s.heavy else 0.0))
                           for s in strata if s.kind != "never")
    dropped = math.fsum(s.weight * s.heavy.dropped for s in strata if s.kind == "random" and s.heavy)
    c_lo, c_hi = _collapsed_all(model, strata)
    # proposal over live (stratum, configuration) pairs
    rows: list[dict[str, np.ndarray]] = []
    for s in strata:
        if s.kind != "random" or s.heavy is None or s.heavy.logp.size == 0:
            continue
        hv = s.heavy
        light = lights(hv.lstar)
        v1 = float(model.v[s.l1])
        t = (1.0 - v1) - hv.h
        theta, log_b, _ = light.choose(hv.m, t)
        u = s.weight * np.exp(hv.logp + log_b)
        keep = u > 0
        rows.append({"u": u[keep], "theta": theta[keep], "t": t[keep], "m": hv.m[keep], "h": hv.h[keep],
                     "lstar": np.full(int(keep.sum()), hv.lstar), "v1": np.full(int(keep.sum()), v1)})
    alpha = 1.0 - confidence
    if rows and any(r["u"].size for r in rows):  # nothing to sample when every live weight underflowed to 0
        cat = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
        u_tot = float(np.sum(cat["u"]))
        pick = rng.choice(cat["u"].size, size=samples, p=cat["u"] / u_tot)
        y = np.empty(samples)
        dval = np.empty(samples)
        chunk = max(1000, 2_000_000 // (j + 1))
        for start in range(0, samples, chunk):
            sel = pick[start:start + chunk]
            th, tt, mm, hh = cat["theta"][sel], cat["t"][sel], cat["m"][sel], cat["h"][sel]
            ls, v1s = cat["lstar"][sel], cat["v1"][sel]
            lv = np.arange(j + 1)
            logw = model.logpi[None, :] + th[:, None] * model.v[None, :]
            logw = np.where(lv[None, :] < ls[:, None], logw, -np.inf)
            logw -= logw.max(axis=1, keepdims=True)
            pv = np.exp(logw)
            pv /= pv.sum(axis=1, keepdims=True)
            counts = rng.multinomial(mm, pv)
            light_sum = counts @ model.v
            hit = light_sum > tt
            with np.errstate(over="ignore", invalid="ignore"):
                yy = np.where(hit, np.exp(-th * (light_sum - tt)), 0.0)
            y[start:start + sel.size] = np.minimum(yy, 1.0)
            dval[start:start + sel.size] = y[start:start + sel.size] * _f_delta(hh + v1s + light_sum)
        est = exact_part + u_tot * float(y.mean())
        half = u_tot * empirical_bernstein(y, alpha)
        normal_half = u_tot * float(scipy_stats().norm.ppf(1 - alpha / 2)) * float(y.std(ddof=1)) / math.sqrt(samples)
        d_est = u_tot * float(dval.mean())
        d_half = u_tot * empirical_bernstein(dval, alpha)
        n_pairs = int(cat["u"].size)
    else:
        u_tot, est, half, normal_half, d_est, d_half, n_pairs = 0.0, exact_part, 0.0, 0.0, 0.0, 0.0, 0
    eta_lo = max(est - half, cert_lo, 0.0)
    eta_hi = min(est + half + dropped, cert_up, 1.0)
    d_mid = d_est + 0.5 * (c_lo + c_hi)
    d_lo = max(0.0, d_est - d_half + c_lo)
    d_hi = min(1.0, d_est + d_half + c_hi + dropped)
    details = {"samples": samples, "pairs": n_pairs, "U_tot": u_tot, "exact_part": exact_part,
               "dropped_mass": dropped, "normal_interval": [est - normal_half, est + normal_half],
               "certified_bracket": [cert_lo, cert_up], "seconds": time.perf_counter() - t0,
               "interval": "empirical Bernstein (Maurer-Pontil), valid for every sample size; intersected with "
                           "the certified bracket"}
    return tail_result(cfg, eta=min(max(est, eta_lo), eta_hi), lo=eta_lo, hi=eta_hi, method="mc", kind="estimate",
                       delta=min(max(d_mid, d_lo), d_hi), d_lo=d_lo, d_hi=d_hi, confidence=confidence,
                       details=details)


# ---------------------------------------------------------------------------------------------------------------
# Public dispatcher, worst case over j, calibration
# ---------------------------------------------------------------------------------------------------------------
def homogeneous_tail(*, q: float, bits: int, population: int, epsilon: float, method: str = "certified",
                     outlier_bits: int | None = None, rng: np.random.Generator | None = None,
                     samples: int | None = None, confidence_level: float | None = None,
                     confidence: float | None = None, with_delta: bool = True) -> TailResult:
    """``eta = P[R(S) > e**epsilon]`` (seed 001 eq. 1.7) for the homogeneous configuration, by ``method``.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 1.
        epsilon: privacy level > 0.
        method: ``"certified"`` (rigorous upper bound, default), ``"exact"`` (small j, N; rigorous bracket) or
            ``"mc"`` (estimate with a confidence interval).
        outlier_bits: j in [1, L] (default L). The conjectured worst case is not proven (ERRATA 5): use
            :func:`worst_over_outlier_bits` for a statement about every j.
        rng, samples, confidence_level: Monte Carlo only (ignored otherwise).
        with_delta: ``"certified"`` only: False skips the bound on delta (None in the result; the same eta).

    Returns:
        A :class:`TailResult` (``kind`` says whether it is a bound, exact, or an estimate).

    Raises:
        ParameterError: a parameter out of range (or "exact" beyond its feasibility limit).

    References:
        seed 001 §1.2, §3.1–§3.3; ERRATA 3, 5.

    Examples:
        >>> r = homogeneous_tail(q=0.350914, bits=40, population=10_000_000, epsilon=2.0)
        >>> r.kind, r.eta >= 0.00124
        ('bound', True)
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    method = check_method(method)
    if method == "certified":
        return certified_tail(q=q, bits=bits, population=population, epsilon=epsilon, outlier_bits=outlier_bits,
                              with_delta=with_delta)
    if method == "exact":
        return exact_tail(q=q, bits=bits, population=population, epsilon=epsilon, outlier_bits=outlier_bits)
    return mc_tail(q=q, bits=bits, population=population, epsilon=epsilon, outlier_bits=outlier_bits, rng=rng,
                   samples=samples, confidence_level=confidence)


def worst_certified_forward(q: float, bits: int, population: int, epsilon: float, *,
                            fail_above: float | None = None, tight: bool = False,
                            helper: Helper | None = None) -> tuple[float, float, int, dict[int, float], bool]:
    """Max over j of the forward certified bound (validated parameters; used by :func:`worst_over_outlier_bits`
    and :func:`sufficientdp.ratio.reverse.worst_certified_two_sided`). Branch and bound: refinement of a j stops
    once its bound is below the running maximum (or below ``fail_above``, the target of a calibration), since its
    bound is valid either way and cannot change the verdict. With ``fail_above``, returns as soon as some j
    exceeds it.

    ``tight=True`` (with ``fail_above``): each j is refined as without ``fail_above`` (to the running maximum,
    with lower bounds, so a stratum also stops once its bracket is within 0.1%), and ``fail_above`` only ends the
    scan at the first j above it. A passing q then gets the worst bound itself, the float that
    ``fail_above=None`` returns, not a bound stopped just below the target: what a search interpolating between
    passing and failing q needs (issue 10). The verdict can differ from ``tight=False`` only where the worst eta
    lies within 0.1% of ``fail_above`` (a stratum stopped by its bracket), and a pass is a proof either way.

    ``helper`` (with ``tight`` and ``fail_above``): a :class:`sufficientdp._offload.Helper` that bounds some of the j
    beside this process (:func:`_shared_tight_scan`); the bound, worst j and verdict are those of the scan here on
    every case compared, the lower bound and the per-j bounds of j not refined to the end may differ (each valid).

    Returns (bound, lower bound, worst j, per-j bounds, complete)."""
    if helper is not None and tight and fail_above is not None and helper.alive:
        return _shared_tight_scan(q, bits, population, epsilon, fail_above, helper)
    per: dict[int, float] = {}
    best, best_lo, best_j = 0.0, 0.0, bits
    for j in range(bits, 0, -1):
        stop = best if fail_above is None or tight else max(best, fail_above)
        up, lo = _forward_bound(q, j, population, epsilon, stop, want_lower=fail_above is None or tight)
        per[j] = up
        best_lo = max(best_lo, lo)
        if up > best:
            best, best_j = up, j
        if fail_above is not None and best > fail_above:
            return best, best_lo, best_j, per, False
    return best, best_lo, best_j, per, True


def _forward_bound(q: float, j: int, population: int, epsilon: float, stop: float,
                   want_lower: bool = True) -> tuple[float, float]:
    """The forward certified bound and its lower bound for outlier weight j, refined until below ``stop`` (0: to
    the end; :func:`_certified_core`); (0, 0) when j cannot exceed."""
    model = forward_problem(q, j, population, epsilon)
    if impossible(model.q, model.j, model.epsilon):
        return 0.0, 0.0
    return _sum_strata(_certified_core(model, stop_below=stop if stop > 0 else None, want_lower=want_lower))


def _shared_tight_scan(q: float, bits: int, population: int, epsilon: float, fail_above: float,
                       helper: Helper) -> tuple[float, float, int, dict[int, float], bool]:
    """:func:`worst_certified_forward` with ``tight`` and ``fail_above``, the j shared with a helper process.

    j = L is bounded here first (a failing q usually fails there). Then this thread takes j = L - 1, L - 2, ...
    and a feeding thread sends j = 1, 2, ... to the helper one at a time, each with the larger running maximum
    known, until they meet (the small j cost milliseconds, the large ones up to a tenth of a second); after a
    failing j the helper takes no more, and this thread bounds the j between. A bound is refined until it lies
    below the running maximum or to its end, and refining only lowers it (a stratum keeps the smaller of its
    bounds), so every bound above ``fail_above`` and the largest bound are refined to their end on either side,
    as in one scan: the verdict is the same, a failing q returns the first failing j from the top with its bound,
    and a passing q the largest bound, with the largest j attaining it. (A bound stopped just below the running
    maximum carries the final safety factor ``1 + REL_SAFETY`` and could lie within it above that maximum, which
    would make the two scans differ in the last digits; not met on the cases compared, and each is a valid
    bound.)"""
    import threading

    from .._offload import from_both_ends

    js = list(range(bits, 0, -1))  # (a j that cannot exceed is bounded by (0, 0), as in one scan)
    per = {j: 0.0 for j in js}
    best, best_lo = _forward_bound(q, js[0], population, epsilon, 0.0)
    best_j = js[0]
    per[best_j] = best
    if best > fail_above:
        return best, best_lo, best_j, per, False
    known = [best]  # the running maximum over both sides
    lock = threading.Lock()
    mine: dict[int, tuple[float, float]] = {}
    theirs: dict[int, tuple[float, float]] = {}

    def here(j: int) -> bool:
        mine[j] = _forward_bound(q, j, population, epsilon, known[0])
        with lock:
            known[0] = max(known[0], mine[j][0])
        return mine[j][0] > fail_above  # the first failing j from the top (the helper's are all smaller): stop

    def there(j: int) -> bool:
        theirs[j] = helper.submit(_forward_bound, {"q": q, "j": j, "population": population, "epsilon": epsilon,
                                                   "stop": known[0]}).result()
        with lock:
            known[0] = max(known[0], theirs[j][0])
        return theirs[j][0] > fail_above  # (this thread still bounds the larger j left)

    from_both_ends(js[1:], here, there)
    for j in sorted({**mine, **theirs}, reverse=True):  # from the top, as one scan meets them
        up, lo = mine[j] if j in mine else theirs[j]
        per[j], best_lo = up, max(best_lo, lo)
        if up > best:
            best, best_j = up, j
        if up > fail_above:
            return best, best_lo, best_j, per, False
    return best, best_lo, best_j, per, True


def worst_over_outlier_bits(*, q: float, bits: int, population: int, epsilon: float, method: str = "certified",
                            rng: np.random.Generator | None = None, samples: int | None = None,
                            confidence_level: float | None = None,
                            confidence: float | None = None) -> TailResult:
    """``max_{j = 1..L} eta_j``: the tail for the worst outlier weight (ERRATA 5: never assume j = L).

    * ``"certified"``: the max of rigorous bounds is a rigorous bound on ``max_j eta_j``. A j whose bound drops
      below the running maximum is not refined further (its bound is valid, so the max is unchanged);
      ``eta_lower`` is the max of the lower bounds found.
    * ``"exact"``: ``[max_j lower_j, max_j upper_j]`` brackets ``max_j eta_j``.
    * ``"mc"``: each j is estimated at confidence ``1 - (1 - confidence)/L`` (Bonferroni), so that with
      probability >= ``confidence`` all intervals hold simultaneously and ``[max_j lower_j, max_j upper_j]``
      covers ``max_j eta_j``; ``samples`` is per j.

    Args:
        q, bits, population, epsilon: as in :func:`homogeneous_tail`.
        method, rng, samples, confidence_level: as in :func:`homogeneous_tail`.

    Returns:
        A :class:`TailResult` for the worst j (``outlier_bits``), with the per-j values in
        ``details["per_outlier_bits"]``.

    Raises:
        ParameterError: a parameter out of range.

    References:
        seed 001 §1.2 (conjecture), ERRATA 5.

    Examples:
        >>> r = worst_over_outlier_bits(q=0.169199, bits=5, population=1000, epsilon=2.0)
        >>> r.outlier_bits, r.eta >= 0.003706
        (5, True)
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    method = check_method(method)
    cfg = check_config(q, bits, population, epsilon, None)
    q, bits, population, epsilon = cfg.q, cfg.bits, cfg.population, cfg.epsilon
    t0 = time.perf_counter()
    if method == "certified":
        eta, lo, jw, per, _ = worst_certified_forward(q, bits, population, epsilon)
        details: dict[str, Any] = {"per_outlier_bits": {str(k): per[k] for k in sorted(per)},
                                   "seconds": time.perf_counter() - t0,
                                   "note": "max over j of rigorous bounds; j not refined once below the max"}
        return TailResult(eta=eta, eta_lower=lo, eta_upper=eta, method="certified", kind="bound", epsilon=epsilon,
                          q=q, bits=bits, population=population, outlier_bits=jw, details=details)
    results: dict[int, TailResult] = {}
    conf_j = 1.0 - (1.0 - confidence) / bits if method == "mc" else confidence
    for j in range(1, bits + 1):
        results[j] = homogeneous_tail(q=q, bits=bits, population=population, epsilon=epsilon, method=method,
                                      outlier_bits=j, rng=rng, samples=samples, confidence_level=conf_j)
    jw = max(results, key=lambda k: results[k].eta)
    w = results[jw]
    lo = max(float(r.eta_lower or 0.0) for r in results.values())
    hi = max(float(r.eta_upper if r.eta_upper is not None else 1.0) for r in results.values())
    details = {"per_outlier_bits": {str(k): results[k].to_dict() for k in sorted(results)},
               "seconds": time.perf_counter() - t0}
    if method == "mc":
        details["note"] = f"per-j intervals at Bonferroni level {conf_j:.6g}; the max estimate is biased upward"
    return TailResult(eta=w.eta, eta_lower=lo, eta_upper=hi, method=method, kind=w.kind, epsilon=epsilon, q=q,
                      bits=bits, population=population, outlier_bits=jw, delta=w.delta,
                      delta_lower=w.delta_lower, delta_upper=w.delta_upper,
                      confidence_level=confidence if method == "mc" else None, details=details)
