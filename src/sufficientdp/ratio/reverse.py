"""The *reverse* homogeneous pair and two-sided statements (seed 001 eq. 1.7 quantifies over ALL neighbours).

Sufficient DP (seed 001 eq. 1.7) asks ``P_{S~A(D_m)}[R(S; D, D_m) > e**eps] <= eta`` for every neighbouring pair,
and neighbouring is symmetric. :mod:`sufficientdp.ratio.tail` handles the paper's (*forward*) pair: ``D`` = N
zero vectors, ``D_m`` = N - 1 zeros + one outlier differing in ``j`` bits. The **reverse** pair swaps them: ``D``
= zeros + outlier, ``D_m`` = all zeros. Then ``R_rev(S) = 1 / R_fwd(S)`` with ``S ~ A(all zeros)``, so all reports
are iid "zero" reports (``l ~ Bin(j, q)`` set bits among the j bits, per-report ratio ``w_l = r**(j - 2l)``,
``r = q/p``, ``E w = 1``) and, with k reports per person (``n = kN`` reports; ERRATA 4)::

    eta_rev = P[ e_k(w_1..w_n) / C(n, k) < e**-eps ]          (k = 1: P[(1/N) sum w_i < e**-eps])

a *lower* tail of non-negative iid variables: light, and large for small N (the all-zero output, probability
``p**(jN)`` for k = 1, has the largest reverse ratio ``(p/q)**j``; see ``docs/worst_case.md``).

Certified upper bounds (``kind="bound"``) — every step is a proof
-----------------------------------------------------------------
Throughout we bound the *non-strict* event (``<=``), so ties at the threshold cannot make the bound understate.

**(C1) Lower-tail Chernoff, exact MGF.** For iid ``V_i >= 0`` with law ``pi`` on values ``v_l`` and any
``theta >= 0``: ``P[sum_{i<=m} V_i <= y] <= E exp(theta (y - sum V)) = exp(theta y + m Lambda(-theta))`` with
``Lambda(-theta) = log sum_l pi_l e^{-theta v_l}`` (Markov on ``e^{-theta sum V}``). ``theta`` is chosen on a fine
log grid by the tilted mean (any theta is valid). Values are scaled so that the threshold is 1.

**(C2) Exact conditioning on heavy levels (k = 1, and the truncated k > 1 sum).** The counts of the top levels
``T_j, T_{j-1}, ...`` are enumerated top-down with their exact conditional binomial laws
``T_l | T_{>l} ~ Bin(m, pi_l / pi(<= l))``. A configuration with ``H + m v_0 > 1`` cannot be in the event (drops
out with *zero* mass), one with ``H + m v_{l*-1} <= 1`` is in it surely; the light remainder (levels ``< l*``) is
bounded by (C1) with the conditional law. Count windows (binomial Chernoff mass outside added) and pruned
configurations (mass added) keep it finite. Every stage gives a valid bound; the smallest is kept. If the
enumeration reaches ``l* = 2`` the remaining ``T_1`` is binomial and its CDF is summed exactly (``"exact"``).

**(C3) k > 1 reverse.** Let ``u_i = min(w_i, tau)`` for any ``tau > 0``. (i) ``e_k`` is non-decreasing in each
non-negative argument, so ``e_k(w) >= e_k(u)``. (ii) ``k! e_k(u)`` is the sum over *ordered* k-tuples of distinct
indices; summing one index at a time, the inner sum over indices not yet used is ``>= e_1(u) - s tau`` after
``s`` indices (each used ``u <= tau``), so by induction ``k! e_k(u) >= prod_{s<k} (e_1(u) - s tau)_+``. (iii)
``k! C(n, k) = prod_{s<k} (n - s)``. Hence ``R_fwd >= g(e_1(u)) := prod_{s<k} (e_1(u) - s tau)_+ / (n - s)``,
continuous and non-decreasing, strictly increasing for ``x > (k-1) tau``; with ``x*`` its root at ``e**-eps``
(bisection, rounded up), ``{R_fwd < e**-eps} c {e_1(u) <= x*}`` and (C1)/(C2) apply to the truncated sum.
``tau`` is optimized over the levels ``w_l`` and a geometric grid (each tau gives a valid bound). This is
sharper than the Bonferroni route ``k! e_k >= e_1**k - C(k,2) p_2 e_1**(k-2)`` (whose ``p_2 = sum w**2`` is
heavy-tailed and needs a separate union bound): truncation makes ``p_2 <= tau e_1`` automatically, and the
product ``prod (1 - s tau/e_1) >= 1 - C(k,2) tau/e_1``.

**(C4) Forward, k > 1** (for the two-sided statement). Maclaurin (ERRATA 4): ``R(S^k) <= (mean w)**k``, so
``eta_fwd <= P[sum_{i<=n} w_i >= n e**(eps/k)]`` with ``n - k`` zero reports and ``k`` outlier reports
(``l ~ Bin(j, p)``). Scaled values ``v = w/(n e**(eps/k))``. The outlier sum ``O`` is computed exactly by
convolution, each partial sum rounded *up* onto a log grid (so ``O`` is overstated, safe). Given ``O = o`` the zero
sum ``Z`` must reach ``y = 1 - o``; for every split level ``l*`` with ``H`` = number of zero reports at levels
``>= l*``: ``P[Z >= y] <= P[H >= 2] + sum_{h >= l*} P[H = 1, at h] P[Light_{m-1} >= y - v_h]
+ P[H = 0] P[Light_m >= y]`` (exact ``P[H = 0], P[H = 1]``; ``P[H >= 2] <= min(1 - P0 - P1, C(m,2) pi_>=**2)``),
the light tails by the upper-tail Chernoff of :mod:`tail` (exact MGF). The min over ``l*`` is taken per value of
``o`` (valid, since each is a bound on the same conditional probability); ``y`` is rounded down onto the grid
(monotone, safe). For k = 1 the forward direction uses :func:`tail.homogeneous_tail` (its finer machinery).

**delta.** ``delta = E[(1 - e**eps/R)_+] <= eta`` always. For the reverse k = 1 pair ``e**eps / R_rev = V``
(the scaled sum), so ``delta_rev = E[(1 - V)_+]``; with ``(x)_+ <= e^{theta x - 1}/theta`` (theta > 0):
``delta_rev <= exp(theta - 1 - log theta + N Lambda(-theta))`` (C1 again). We report the min of that and eta's
bound; for k > 1 only ``delta <= eta`` is used.

Float-safety conventions (those of :mod:`tail`): log-domain throughout; thresholds moved by a relative ``1e-10``
in the safe direction; every Chernoff exponent inflated by ``1e-9`` of its terms' magnitude (+1e-12); final upper
bounds multiplied by ``1 + 1e-9`` and floored at ``1e-300`` (an underflowed bound is never reported as 0);
"impossible"/"sure" decisions carry relative margins ``1e-9``; ``eta = 0`` exactly only in the local-DP regime
``(p/q)**(jk) <= e**eps`` (decided with a 1e-12 margin), where ``R <= (p/q)**(jk)`` in both directions. The
margins exceed float64 rounding by orders of magnitude; they are not interval arithmetic.

Exact (``kind="exact"``): k = 1 via (C2) run to the binomial level (an independent implementation; the tests
check it against :func:`exact.homogeneous_ratio_distribution` with ``outlier_in="original"``); any k by
enumerating every count vector ``T`` of the n reports when ``C(n + j, j) <= 1e6`` (``P_m(T) = R_fwd(T) P_0(T)``
gives the forward direction from the same enumeration).

Monte Carlo (``kind="estimate"``): count vectors ``T ~ Multinomial(n, pi_theta)`` with the exponential tilt
``pi_theta(l) ∝ pi(l) e^{-theta u_l}`` of the certified bound (theta = 0: plain sampling), the exact statistic
(``log_esp_from_counts``), and weight ``Y = 1_E exp(theta (sum u - x*)) in [0, 1]`` since ``E c {sum u <= x*}``;
``eta = B E[Y]`` with ``B`` the (un-inflated) Chernoff value, empirical-Bernstein interval (valid for every
sample size), intersected with the certified bracket.

The homogeneous configuration is the paper's *unproven* worst case (ERRATA 5; in fact refuted at small sizes, see
``docs/worst_case.md``): everything here is a statement about that configuration, both directions, worst over j.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy.special import gammaln, logsumexp

from .._errors import ParameterError
from .._numerics.stats import scipy_stats
from .._validation import check_int, check_open_interval, check_positive_finite, check_rng
from . import tail as _tail
from .result import DIRECTIONS, TailResult

__all__ = [
    "DIRECTIONS",
    "METHODS",
    "forward_k_certified",
    "reverse_tail",
    "two_sided_tail",
    "worst_certified_two_sided",
    "worst_two_sided",
]

METHODS = ("certified", "exact", "mc")

_REL_SAFETY = 1e-9
_THRESH_SLACK = 1e-10
_ABS_FLOOR = 1e-300
_LOG_CAP = 700.0
_CERT_MAX_CONFIGS = 120_000
_EXACT_MAX_CONFIGS = 3_000_000
_EXACT_MAX_ATOMS = 1_000_000  # count vectors enumerated by the k > 1 exact method
_REFINE_ABOVE = math.log(1e-250)  # (C2) refinement only where the plain bound is above this
_PRUNE_REL = 45.0  # configurations below (plain bound) * e**-45 are pruned (mass added)
_MC_DEFAULT_SAMPLES = 50_000
_O_GRID = 6000  # (C4) grid of the outlier sum
_O_MIN = 1e-9


# ---------------------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Cfg:
    q: float
    bits: int
    population: int
    epsilon: float
    j: int
    k: int

    @property
    def n(self) -> int:
        return self.population * self.k


def _check(q: Any, bits: Any, population: Any, epsilon: Any, outlier_bits: Any, reports: Any) -> _Cfg:
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    reports = check_int("reports", reports, minimum=1)
    j = bits if outlier_bits is None else check_int("outlier_bits", outlier_bits, minimum=1, maximum=bits)
    return _Cfg(q=q, bits=bits, population=population, epsilon=epsilon, j=j, k=reports)


def _check_method(method: Any) -> str:
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    return str(method)


def _impossible(cfg: _Cfg, j: int | None = None) -> bool:
    """``(p/q)**(j k) <= e**eps``: both directions have ``R <= e**eps`` surely (eta = delta = 0)."""
    jj = cfg.j if j is None else j
    log_max = jj * cfg.k * (math.log1p(-cfg.q) - math.log(cfg.q))
    return log_max <= cfg.epsilon * (1.0 - 1e-12) - 1e-15


def _levels(q: float, j: int) -> tuple[np.ndarray, np.ndarray]:
    """``log P[Bin(j, q) = l]`` and ``log w_l = (j - 2l) log(q/p)``, l = 0..j (w increasing in l)."""
    lv = np.arange(j + 1, dtype=float)
    logq, logp = math.log(q), math.log1p(-q)
    logpi = gammaln(j + 1.0) - gammaln(lv + 1.0) - gammaln(j - lv + 1.0) + lv * logq + (j - lv) * logp
    return logpi, (j - 2.0 * lv) * (logq - logp)


def _result(cfg: _Cfg, *, eta: float, lo: float | None, hi: float | None, method: str, kind: str,
            delta: float | None = None, d_lo: float | None = None, d_hi: float | None = None,
            confidence: float | None = None, details: dict[str, Any] | None = None) -> TailResult:
    return TailResult(eta=eta, eta_lower=lo, eta_upper=hi, method=method, kind=kind, epsilon=cfg.epsilon, q=cfg.q,
                      bits=cfg.bits, population=cfg.population, reports=cfg.k, outlier_bits=cfg.j, delta=delta,
                      delta_lower=d_lo, delta_upper=d_hi, confidence=confidence, details=details or {})


_NEVER = "(p/q)**(j k) <= e**epsilon: R <= e**epsilon surely in both directions (local-DP regime), eta = delta = 0"


# ---------------------------------------------------------------------------------------------------------------
# (C1) lower-tail Chernoff with the exact MGF
# ---------------------------------------------------------------------------------------------------------------
class _LowerLaw:
    """Law ``pi`` (normalized from ``logpi``) on non-decreasing values ``v``; bounds on ``P[sum of m <= y]``."""

    def __init__(self, logpi: np.ndarray, v: np.ndarray) -> None:
        self.logpi = logpi - float(logsumexp(logpi))
        self.pi = np.exp(self.logpi)
        self.v = np.asarray(v, dtype=float)
        self.vmin = float(self.v[0])
        self.mu = float(np.sum(self.pi * self.v))
        gaps = self.v - self.vmin
        pos = gaps[gaps > 0]
        self.theta_lo = 1e-8 / max(self.mu, 1e-300)
        self.theta_hi = max(1e4 / float(pos.min()), self.theta_lo * 10.0) if pos.size else 0.0
        self._grid: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(theta grid, Lambda(-theta), tilted mean) — built lazily (only the vectorized stages need it)."""
        if self._grid is None:
            if self.theta_hi <= 0.0:
                theta = np.zeros(1)
            else:
                lo, hi = self.theta_lo, self.theta_hi
                npts = int(min(60_000, max(200, math.ceil(math.log10(hi / lo) * 800))))
                theta = np.concatenate([[0.0], np.geomspace(lo, hi, npts)])
            lam = self.log_mgf(theta)
            with np.errstate(over="ignore", invalid="ignore"):
                z = self.logpi[None, :] - theta[:, None] * self.v[None, :]
                zm = z.max(axis=1, keepdims=True)
                wts = np.exp(z - zm)
                tm = np.sum(wts * self.v[None, :], axis=1) / np.sum(wts, axis=1)
            self._grid = (theta, lam, np.minimum.accumulate(np.nan_to_num(tm, nan=self.vmin)))
        return self._grid

    @property
    def theta(self) -> np.ndarray:
        return self._tables()[0]

    @property
    def lam(self) -> np.ndarray:
        return self._tables()[1]

    @property
    def tmean(self) -> np.ndarray:
        return self._tables()[2]

    def scalar(self, m: float, y: float) -> tuple[float, float, float]:
        """(log bound with margin, theta, Lambda) for one ``P[sum of m <= y]``: Brent on log theta (the
        exponent is convex in theta, hence unimodal in log theta) after a coarse scan; any theta is valid and
        the bound is evaluated at the theta found."""
        from scipy.optimize import minimize_scalar

        if y < m * self.vmin * (1.0 - 1e-12) - 1e-300:
            return -math.inf, math.inf, -math.inf
        if m <= 0 or y >= m * self.mu or self.theta_hi <= 0.0:
            return 0.0, 0.0, 0.0

        def f(u: float) -> float:
            th = math.exp(u)
            return th * y + m * float(self.log_mgf(np.array([th]))[0])

        us = np.linspace(math.log(self.theta_lo), math.log(self.theta_hi), 64)
        fs = [f(float(u)) for u in us]
        i = int(np.argmin(fs))
        lo_u, hi_u = float(us[max(i - 1, 0)]), float(us[min(i + 1, us.size - 1)])
        r = minimize_scalar(f, bounds=(lo_u, hi_u), method="bounded", options={"xatol": 1e-10})
        u = float(r.x) if float(r.fun) < fs[i] else float(us[i])
        th = math.exp(u)
        lam = float(self.log_mgf(np.array([th]))[0])
        raw = th * y + m * lam
        if raw >= 0:
            return 0.0, 0.0, 0.0
        return min(raw + _REL_SAFETY * (abs(th * y) + abs(m * lam)) + 1e-12, 0.0), th, lam

    def log_mgf(self, theta: np.ndarray) -> np.ndarray:
        """``log E e^{-theta V}`` (accurate: log1p of a same-sign sum, or logsumexp when far from 0)."""
        theta = np.asarray(theta, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            tv = theta[:, None] * self.v[None, :]
            s = np.sum(self.pi[None, :] * np.expm1(-tv), axis=1)
            lse = logsumexp(self.logpi[None, :] - tv, axis=1)
        out: np.ndarray = np.where(s > -0.5, np.log1p(np.maximum(s, -0.5)), lse)
        return out

    def choose(self, m: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(theta, raw log bound ``min(0, theta y + m Lambda)``, Lambda) — no margin; -inf where impossible."""
        m, y = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(y, dtype=float))
        theta = np.zeros(y.shape)
        lam = np.zeros(y.shape)
        out = np.zeros(y.shape)
        imp = y < m * self.vmin * (1.0 - 1e-12) - 1e-300
        mid = ~imp & (y < m * self.mu) & (m > 0)
        out[imp] = -np.inf
        if np.any(mid) and self.theta.size > 1:
            mm, yy = m[mid], y[mid]
            g = yy / mm
            idx = np.searchsorted(-self.tmean, -g)  # first theta whose tilted mean is <= g
            cands = np.stack([np.clip(idx - 1, 0, self.theta.size - 1), np.clip(idx, 0, self.theta.size - 1)])
            vals = self.theta[cands] * yy[None, :] + mm[None, :] * self.lam[cands]
            best = np.argmin(vals, axis=0)
            gi = cands[best, np.arange(mm.size)]
            b = vals[best, np.arange(mm.size)]
            pos = b >= 0
            theta[mid] = np.where(pos, 0.0, self.theta[gi])
            lam[mid] = np.where(pos, 0.0, self.lam[gi])
            out[mid] = np.minimum(b, 0.0)
        return theta, out, lam

    def log_upper(self, m: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Log of a rigorous bound on ``P[sum of m <= y]`` (y already moved up by the slack)."""
        m, y = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(y, dtype=float))
        theta, raw, lam = self.choose(m, y)
        out = raw.copy()
        act = (theta > 0) & np.isfinite(raw)
        if np.any(act):
            mag = np.abs(theta[act] * y[act]) + np.abs(m[act] * lam[act])
            out[act] = np.minimum(raw[act] + _REL_SAFETY * mag + 1e-12, 0.0)
        return out

    def log_delta_upper(self, m: float) -> float:
        """Log of a bound on ``E[(1 - sum of m)_+]``: ``min_theta exp(theta - 1 - log theta + m Lambda)``."""
        th = self.theta[1:]
        if th.size == 0:
            return 0.0 if m * self.vmin < 1.0 else -math.inf
        vals = th - 1.0 - np.log(th) + m * self.lam[1:]
        i = int(np.argmin(vals))
        mag = abs(th[i]) + 1.0 + abs(math.log(th[i])) + abs(m * self.lam[1:][i])
        return float(min(vals[i] + _REL_SAFETY * mag + 1e-12, 0.0))


def _slack_up(h: np.ndarray) -> np.ndarray:
    out: np.ndarray = (1.0 - h) + _THRESH_SLACK * (1.0 + np.abs(h)) + 1e-300
    return out


# ---------------------------------------------------------------------------------------------------------------
# (C2) enumeration of heavy levels for the lower tail  {sum V <= 1}
# ---------------------------------------------------------------------------------------------------------------
class _TooMany(Exception):
    pass


@dataclass(slots=True)
class _State:
    lstar: int  # light levels are 0..lstar-1
    logp: np.ndarray
    h: np.ndarray
    m: np.ndarray
    log_certain: float = -math.inf
    log_dropped: float = -math.inf
    certain_delta: float = 0.0  # sum over sure configurations of P * E[1 - V | config] (delta, k = 1)
    configs: int = 0


@dataclass(slots=True)
class _Problem:
    """Lower tail ``P[sum_{i<=n} V_i <= 1]``, ``V = v_l`` with ``l ~ pi`` (log), ``v`` non-decreasing."""

    logpi: np.ndarray
    v: np.ndarray
    n: int
    laws: dict[int, _LowerLaw] = field(default_factory=dict)

    def law(self, lstar: int) -> _LowerLaw:
        if lstar not in self.laws:
            self.laws[lstar] = _LowerLaw(self.logpi[:lstar], self.v[:lstar])
        return self.laws[lstar]


def _lae(a: float, b: float) -> float:
    return float(np.logaddexp(a, b))


def _enumerate(pb: _Problem, *, log_ref: float, cap: int, stop_level: int,
               stage: Callable[[_State], None]) -> _State:
    """Top-down enumeration of heavy counts (levels J..stop_level); ``stage`` is called at every stage."""
    v = pb.v
    big_j = v.size - 1
    logle = np.logaddexp.accumulate(pb.logpi)
    st = _State(lstar=big_j + 1, logp=np.zeros(1), h=np.zeros(1), m=np.full(1, pb.n, dtype=np.int64))
    v0 = float(v[0])
    log_prune = log_ref - _PRUNE_REL
    tol = math.exp(max(log_prune - 5.0, -690.0))
    for lev in range(big_j, stop_level - 1, -1):
        stage(st)
        if st.logp.size == 0:
            st = replace(st, lstar=lev)
            continue
        log_a = float(pb.logpi[lev] - logle[lev])
        log1m_a = float(logle[lev - 1] - logle[lev])
        vl = float(v[lev])
        m = st.m
        if vl > v0:
            with np.errstate(over="ignore", invalid="ignore"):
                cm = np.floor(((1.0 + 1e-9) - st.h - m * v0) / (vl - v0) * (1.0 + 1e-12) + 1e-9)
            cmax = np.clip(np.nan_to_num(cm, nan=-1.0, posinf=1e18), -1, m).astype(np.int64)
        else:
            cmax = m.copy()
        lo, hi = _tail._window(int(m.min()), int(m.max()), log_a, log1m_a, tol)
        top = min(hi, int(cmax.max()))
        if top < lo:
            c = np.zeros(0, dtype=np.int64)
        else:
            c = np.arange(lo, top + 1, dtype=np.int64)
        if c.size * m.size > 8 * cap:
            raise _TooMany
        # mass outside the window (Chernoff): lower side always; upper side only where it could matter
        low_t = _tail._log_lower_tail(np.full(m.shape, lo - 1), m, log_a, log1m_a)
        up_t = np.where(cmax > hi, _tail._log_upper_tail(np.full(m.shape, hi + 1), m, log_a, log1m_a), -np.inf)
        out = st.logp + np.logaddexp(low_t, up_t)
        log_dropped = _lae(st.log_dropped, float(logsumexp(out)) if out.size else -math.inf)
        log_certain = st.log_certain
        certain_delta = st.certain_delta
        if c.size == 0:
            st = _State(lev, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), log_certain, log_dropped,
                        certain_delta, st.configs)
            continue
        um, uinv = np.unique(m, return_inverse=True)
        with np.errstate(divide="ignore"):
            ltab = np.log(_tail._binom_pmf(c[None, :], um[:, None], log_a, log1m_a))
        child = st.logp[:, None] + ltab[uinv]
        valid = (c[None, :] <= cmax[:, None]) & (c[None, :] <= m[:, None])
        keep = valid & (child >= log_prune)
        drop = valid & ~keep
        if np.any(drop):
            dl = child[drop]
            fin = np.isfinite(dl)
            extra = float(logsumexp(dl[fin])) if np.any(fin) else -math.inf
            if np.any(~fin):
                extra = _lae(extra, math.log(_ABS_FLOOR * int(np.sum(~fin))))
            log_dropped = _lae(log_dropped, extra)
        h = np.broadcast_to(st.h[:, None] + (c * vl)[None, :], child.shape)[keep]
        mn = np.broadcast_to(m[:, None] - c[None, :], child.shape)[keep]
        lp = child[keep]
        vmax_rest = float(v[lev - 1])
        sure = (h + mn * vmax_rest) * (1.0 + 1e-9) <= 1.0 - 1e-9
        never = h + mn * v0 > (1.0 + 1e-9) * (1.0 + 1e-9)
        if np.any(sure):
            log_certain = _lae(log_certain, float(logsumexp(lp[sure])))
            mu_rest = pb.law(lev).mu
            certain_delta += float(np.sum(np.exp(lp[sure]) * np.maximum(1.0 - h[sure] - mn[sure] * mu_rest, 0.0)))
        live = ~sure & ~never
        if int(np.count_nonzero(live)) > cap:
            raise _TooMany
        st = _State(lev, lp[live], h[live], mn[live], log_certain, log_dropped, certain_delta,
                    st.configs + int(np.count_nonzero(live)))
    stage(st)
    return st


def _stage_log_bound(pb: _Problem, st: _State) -> float:
    """Log of the (C1)+(C2) bound at one stage (without the final relative margin)."""
    parts = [st.log_certain, st.log_dropped]
    if st.logp.size:
        law = pb.law(st.lstar)
        lb = law.log_upper(st.m, _slack_up(st.h))
        parts.append(float(logsumexp(st.logp + lb)))
    return float(logsumexp(np.array(parts)))


@dataclass(slots=True)
class _BinomFinish:
    raw: float  # strict event, float
    lower: float  # strict event, rigorous lower (without margins)
    upper: float  # non-strict event, upper (without margins)
    delta: float
    delta_err: float


def _binomial_finish(pb: _Problem, st: _State) -> _BinomFinish:
    """Levels {0, 1} left: ``V = H + T_1 v_1 + (m - T_1) v_0`` with ``T_1 ~ Bin(m, pi_1/(pi_0 + pi_1))``."""
    if st.logp.size == 0:
        return _BinomFinish(0.0, 0.0, 0.0, 0.0, 0.0)
    v0, v1 = float(pb.v[0]), float(pb.v[1])
    d = v1 - v0
    la = float(pb.logpi[1] - np.logaddexp(pb.logpi[0], pb.logpi[1]))
    l1a = float(pb.logpi[0] - np.logaddexp(pb.logpi[0], pb.logpi[1]))
    a = math.exp(la)
    m = st.m.astype(float)
    big_a = 1.0 - st.h - m * v0
    kk = big_a / d
    s = _THRESH_SLACK * (1.0 + np.abs(st.h) + m * v0) / d + 1e-12

    def cdf(x: np.ndarray, mm: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if la <= l1a:
            return np.where(x < 0, 0.0, scipy_stats().binom.cdf(x, mm, a))
        return np.where(x < 0, 0.0, scipy_stats().binom.sf(mm - x - 1, mm, math.exp(l1a)))

    pc = np.exp(st.logp)
    with np.errstate(invalid="ignore", over="ignore"):
        k_up = np.floor(np.clip(kk + s, -1.0, 2e18))
        k_lo = np.ceil(np.clip(kk - s, -1.0, 2e18)) - 1
        k_raw = np.ceil(np.clip(kk, -1.0, 2e18)) - 1
        up = cdf(k_up, m) + _ABS_FLOOR
        lo = cdf(k_lo, m)
        raw = cdf(k_raw, m)
        kf = np.floor(np.clip(kk, -1.0, 2e18))
        t1 = big_a * cdf(kf, m)
        t2 = d * m * a * cdf(kf - 1, np.maximum(m - 1, 0))
    dl = np.maximum(t1 - t2, 0.0)
    return _BinomFinish(float(pc @ raw), float(pc @ lo), float(pc @ up), float(pc @ dl),
                        float(pc @ (np.abs(t1) + np.abs(t2))) * 1e-12)


# ---------------------------------------------------------------------------------------------------------------
# reverse: problem setup (k = 1 and the truncated k > 1 sum)
# ---------------------------------------------------------------------------------------------------------------
def _x_star(n: int, k: int, tau: float, epsilon: float) -> float:
    """Root (rounded up) of ``prod_{s<k} (x - s tau)/(n - s) = e**-eps`` with ``x > (k-1) tau`` (C3)."""
    if k == 1:
        return n * math.exp(-epsilon) * (1.0 + 1e-12)
    base = sum(math.log(n - s) for s in range(k)) - epsilon

    def g(x: float) -> float:
        return sum(math.log(x - s * tau) for s in range(k)) - base

    lo = (k - 1) * tau
    hi = (k - 1) * tau + n * math.exp(-epsilon / k)
    while g(hi) < 0:  # cannot happen (see docstring), kept for safety
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if mid > (k - 1) * tau and g(mid) >= 0:
            hi = mid
        else:
            lo = mid
    return hi * (1.0 + 1e-12)


def _reverse_problem(cfg: _Cfg, tau: float | None) -> tuple[_Problem, float]:
    """(problem, x*) for truncation ``tau`` (None: no truncation; k = 1)."""
    logpi, logw = _levels(cfg.q, cfg.j)
    n = cfg.n
    if tau is None:
        logu = logw
        xs = _x_star(n, 1, 0.0, cfg.epsilon) if cfg.k == 1 else math.nan
    else:
        logu = np.minimum(logw, math.log(tau))
        xs = _x_star(n, cfg.k, tau, cfg.epsilon)
    v = np.exp(np.minimum(logu - math.log(xs), _LOG_CAP))
    return _Problem(logpi=logpi, v=v, n=n), xs


def _tau_candidates(cfg: _Cfg) -> list[float]:
    _, logw = _levels(cfg.q, cfg.j)
    n, k = cfg.n, cfg.k
    scale = n * math.exp(-cfg.epsilon / k)
    grid = scale * np.geomspace(1e-9, 0.95 / (k - 1), 48)
    cands = set(float(x) for x in np.exp(logw)) | set(float(x) for x in grid)
    return sorted(c for c in cands if c > 0 and (k - 1) * c < scale * 10)


def _plain_log_bound(pb: _Problem) -> tuple[float, float, float]:
    """(log bound, theta, Lambda) of (C1) for the whole sum."""
    return pb.law(pb.v.size).scalar(float(pb.n), float(_slack_up(np.zeros(1))[0]))


@dataclass(slots=True)
class _RevBound:
    log_bound: float
    log_plain: float
    log_lower: float
    tau: float | None
    x_star: float
    theta: float
    lam: float
    stages: list[float]
    lstar: int
    configs: int
    exact_reached: bool
    problem: _Problem


def _reverse_certified_core(cfg: _Cfg, *, refine: bool = True, stop_below: float | None = None) -> _RevBound:
    if cfg.k == 1:
        choices: list[float | None] = [None]
    else:
        choices = list(_tau_candidates(cfg))
    best: tuple[float, _Problem, float, float | None, float, float] | None = None
    for tau in choices:
        pb, xs = _reverse_problem(cfg, tau)
        lb, th, lam = _plain_log_bound(pb)
        if best is None or lb < best[0]:
            best = (lb, pb, xs, tau, th, lam)
    assert best is not None
    lb, pb, xs, tau, th, lam = best
    stages = [lb]
    res = _RevBound(lb, lb, -math.inf, tau, xs, th, lam, stages, pb.v.size, 0, False, pb)
    if not refine or lb < _REFINE_ABOVE or (stop_below is not None and lb <= math.log(stop_below)):
        return res

    def stage(st: _State) -> None:
        if st.lstar == pb.v.size:
            return  # the root stage is the plain bound
        b = _stage_log_bound(pb, st)
        stages.append(b)
        res.log_lower = max(res.log_lower, st.log_certain)
        if b < res.log_bound:
            res.log_bound, res.lstar, res.configs = b, st.lstar, int(st.logp.size)

    try:
        final = _enumerate(pb, log_ref=lb, cap=_CERT_MAX_CONFIGS, stop_level=2, stage=stage)
        if pb.v.size >= 2 and pb.v[1] > pb.v[0]:
            fin = _binomial_finish(pb, final)
            b = float(np.logaddexp(_lae(final.log_certain, final.log_dropped), math.log(max(fin.upper, 1e-320))))
            stages.append(b)
            res.exact_reached = True
            res.log_lower = max(res.log_lower, math.log(max(fin.lower + math.exp(final.log_certain), 1e-320)))
            if b < res.log_bound:
                res.log_bound, res.lstar, res.configs = b, 1, int(final.logp.size)
    except _TooMany:
        pass
    return res


def _finish_up(log_b: float) -> float:
    return float(min(1.0, math.exp(min(log_b, 0.0)) * (1.0 + _REL_SAFETY) + _ABS_FLOOR))


def _reverse_certified(cfg: _Cfg) -> TailResult:
    t0 = time.perf_counter()
    if _impossible(cfg):
        return _result(cfg, eta=0.0, lo=0.0, hi=0.0, method="certified", kind="bound", delta=0.0, d_lo=0.0,
                       d_hi=0.0, details={"direction": "reverse", "reason": _NEVER})
    rb = _reverse_certified_core(cfg)
    up = _finish_up(rb.log_bound)
    # For k > 1 the core's lower end comes from the truncated sum e_1(min(w, tau)), whose event contains the tail
    # event: it bounds eta from above, not below. Only k = 1 has a valid lower end here (k_reports has the
    # rigorous k > 1 bracket).
    lo = (max(0.0, math.exp(rb.log_lower) * (1.0 - _REL_SAFETY))
          if cfg.k == 1 and rb.log_lower > -math.inf else 0.0)
    enum = _small_exact(cfg, "reverse")
    if enum is not None and enum.eta_upper is not None and enum.eta_upper < up:
        up = float(enum.eta_upper)
        lo = max(lo, float(enum.eta_lower or 0.0))
    lo = min(lo, up)
    if cfg.k == 1:
        d_up = min(up, _finish_up(rb.problem.law(rb.problem.v.size).log_delta_upper(float(rb.problem.n))))
        d_note = "delta <= min(eta bound, min_theta exp(theta - 1 - log theta + N Lambda(-theta)))"
    else:
        d_up = up
        d_note = "delta <= eta (always valid)"
    vacuous = up >= 1.0 - 1e-12
    details: dict[str, Any] = {
        "direction": "reverse",
        "log10_bound": rb.log_bound / math.log(10.0),
        "log10_plain_chernoff": rb.log_plain / math.log(10.0),
        "best_stage_lstar": rb.lstar, "configs": rb.configs, "binomial_level_reached": rb.exact_reached,
        "truncation_tau": rb.tau, "x_star": rb.x_star,
        "vacuous": vacuous, "delta_note": d_note, "seconds": time.perf_counter() - t0,
        "exact_enumeration_used": enum is not None and enum.eta_upper == up,
        "note": ("lower-tail Chernoff (exact MGF) + exact conditioning on heavy levels" +
                 ("" if cfg.k == 1 else "; k > 1: e_k(w) >= e_k(min(w, tau)) >= prod (e_1 - s tau)_+/k! (C3)")),
    }
    if vacuous:
        details["vacuous_note"] = "the bound is >= 1 (capped at 1): nothing is certified here"
    return _result(cfg, eta=up, lo=lo, hi=up, method="certified", kind="bound", delta=d_up, d_lo=0.0,
                   d_hi=d_up, details=details)


# ---------------------------------------------------------------------------------------------------------------
# exact
# ---------------------------------------------------------------------------------------------------------------
def _reverse_exact_k1(cfg: _Cfg) -> TailResult:
    t0 = time.perf_counter()
    pb, _ = _reverse_problem(cfg, None)
    lb, _, _ = _plain_log_bound(pb)
    log_ref = max(lb, math.log(1e-200))
    try:
        st = _enumerate(pb, log_ref=log_ref, cap=_EXACT_MAX_CONFIGS, stop_level=2, stage=lambda s: None)
    except _TooMany:
        raise ParameterError(
            f"exact method infeasible for outlier_bits={cfg.j}, population={cfg.population}: more than "
            f"{_EXACT_MAX_CONFIGS:,} heavy-count configurations; use method='certified' or 'mc'") from None
    fin = _binomial_finish(pb, st)
    cert = math.exp(st.log_certain) if st.log_certain > -math.inf else 0.0
    drop = math.exp(st.log_dropped) if st.log_dropped > -math.inf else 0.0
    lo = max(0.0, (fin.lower + cert) * (1.0 - _REL_SAFETY))
    hi = min(1.0, (fin.upper + cert + drop) * (1.0 + _REL_SAFETY) + _ABS_FLOOR, _finish_up(lb))
    raw = min(max(fin.raw + cert, lo), hi)
    d = fin.delta + st.certain_delta
    d_lo = max(0.0, (d - fin.delta_err) * (1.0 - _REL_SAFETY))
    d_hi = min(hi, (d + fin.delta_err + drop) * (1.0 + _REL_SAFETY) + _ABS_FLOOR)
    details = {"direction": "reverse", "configs": st.configs, "dropped_mass": drop,
               "seconds": time.perf_counter() - t0,
               "note": "bracket contains P[R_rev > lambda] and P[R_rev >= lambda] (enumeration + binomial CDF)"}
    return _result(cfg, eta=raw, lo=lo, hi=hi, method="exact", kind="exact", delta=min(max(d, d_lo), d_hi),
                   d_lo=d_lo, d_hi=d_hi, details=details)


def _compositions(n: int, parts: int) -> np.ndarray:
    from .exact import _compositions as comp

    return comp(n, parts)


def _exact_counts(cfg: _Cfg) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every count vector T of n reports: (log P_0(T), log R_fwd(T), log P_m(T) = log R_fwd + log P_0)."""
    from .k_reports import _log_comb, log_esp_from_counts

    n, j = cfg.n, cfg.j
    atoms = math.comb(n + j, j)
    if atoms > _EXACT_MAX_ATOMS:
        raise ParameterError(f"exact method needs C(n + j, j) <= {_EXACT_MAX_ATOMS} count vectors (n = reports * "
                             f"population = {n}, outlier_bits = {j}); got {atoms}; use 'certified' or 'mc'")
    logpi, logw = _levels(cfg.q, j)
    t = _compositions(n, j + 1).astype(float)
    log_p0 = gammaln(n + 1.0) - gammaln(t + 1.0).sum(axis=1) + t @ logpi
    log_r = log_esp_from_counts(logw, t, cfg.k) - _log_comb(float(n), cfg.k)
    return log_p0, log_r, log_p0 + log_r


def _exact_from_atoms(cfg: _Cfg, log_prob: np.ndarray, log_ratio: np.ndarray, direction: str) -> TailResult:
    eps = cfg.epsilon
    pr = np.exp(log_prob)

    def tail(e: float) -> float:
        return float(math.fsum(pr[log_ratio > e].tolist()))

    eta = tail(eps)
    lo = tail(eps + 1e-9) * (1.0 - _REL_SAFETY)
    hi = min(1.0, tail(eps - 1e-9) * (1.0 + _REL_SAFETY) + 1e-15)
    sel = log_ratio > eps
    dval = float(math.fsum((pr[sel] * -np.expm1(eps - log_ratio[sel])).tolist()))
    return _result(cfg, eta=eta, lo=lo, hi=hi, method="exact", kind="exact", delta=dval, d_lo=dval * (1 - 1e-9),
                   d_hi=min(1.0, dval * (1 + 1e-9) + 1e-15),
                   details={"direction": direction, "count_vectors": int(log_prob.size),
                            "note": "every count vector enumerated; bracket = ties within 1e-9 in log R"})


def _small_exact(cfg: _Cfg, direction: str) -> TailResult | None:
    """k > 1 and ``C(kN + j, j) <= 2e5``: the exact enumeration, whose upper end (ties within 1e-9 in log R
    included, relative margin 1e-9) is a valid bound and is used by "certified" where it is smaller."""
    if cfg.k == 1 or math.comb(cfg.n + cfg.j, cfg.j) > 200_000:
        return None
    log_p0, log_r, log_pm = _exact_counts(cfg)
    if direction == "reverse":
        return _exact_from_atoms(cfg, log_p0, -log_r, "reverse")
    return _exact_from_atoms(cfg, log_pm, log_r, "forward")


def _reverse_exact(cfg: _Cfg) -> TailResult:
    if _impossible(cfg):
        return _result(cfg, eta=0.0, lo=0.0, hi=0.0, method="exact", kind="exact", delta=0.0, d_lo=0.0, d_hi=0.0,
                       details={"direction": "reverse", "reason": _NEVER})
    if cfg.k == 1:
        return _reverse_exact_k1(cfg)
    log_p0, log_r, _ = _exact_counts(cfg)
    return _exact_from_atoms(cfg, log_p0, -log_r, "reverse")


# ---------------------------------------------------------------------------------------------------------------
# Monte Carlo (tilted by the certified bound; plain when the bound is trivial)
# ---------------------------------------------------------------------------------------------------------------
def _reverse_mc(cfg: _Cfg, rng: np.random.Generator, samples: int, confidence: float) -> TailResult:
    from .k_reports import _log_comb, log_esp_from_counts

    t0 = time.perf_counter()
    if _impossible(cfg):
        return _result(cfg, eta=0.0, lo=0.0, hi=0.0, method="mc", kind="estimate", confidence=confidence,
                       details={"direction": "reverse", "reason": _NEVER})
    rb = _reverse_certified_core(cfg, refine=False)
    cert_up = _finish_up(rb.log_bound)
    pb = rb.problem
    theta = rb.theta
    logpi, logw = _levels(cfg.q, cfg.j)
    law = pb.law(pb.v.size)
    lam = float(law.log_mgf(np.array([theta]))[0]) if theta > 0 else 0.0
    log_b = theta * 1.0 + pb.n * lam  # un-inflated Chernoff value (threshold 1 in scaled units)
    lt = logpi - theta * pb.v
    pt = np.exp(lt - logsumexp(lt))
    pt /= pt.sum()
    n, k, eps = cfg.n, cfg.k, cfg.epsilon
    y = np.empty(samples)
    chunk = max(1000, 2_000_000 // (cfg.j + 1) // max(1, k))
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        t = rng.multinomial(n, pt, size=size).astype(float)
        log_r = log_esp_from_counts(logw, t, k) - (math.log(n) if k == 1 else _log_comb(float(n), k))
        hit = log_r < -eps
        su = t @ pb.v
        with np.errstate(over="ignore"):
            yy = np.where(hit, np.exp(np.minimum(theta * (su - 1.0), 0.0)), 0.0)
        y[start:start + size] = yy
    alpha = 1.0 - confidence
    b = math.exp(log_b)
    est = b * float(y.mean())
    half = b * _tail._empirical_bernstein(y, alpha)
    lo = max(0.0, est - half)
    hi = min(1.0, est + half, cert_up)
    details = {"direction": "reverse", "samples": samples, "tilt_theta": theta, "chernoff_value": b,
               "hits": int(np.count_nonzero(y > 0)), "truncation_tau": rb.tau, "x_star": rb.x_star,
               "interval": "empirical Bernstein (Maurer-Pontil) on Y in [0, 1], intersected with the certified bound",
               "seconds": time.perf_counter() - t0}
    return _result(cfg, eta=min(max(est, lo), hi), lo=min(lo, hi), hi=hi, method="mc", kind="estimate",
                   confidence=confidence, details=details)


def reverse_tail(*, q: float, bits: int, population: int, epsilon: float, method: str = "certified",
                 outlier_bits: int | None = None, reports: int = 1, rng: np.random.Generator | int | None = None,
                 samples: int | None = None, confidence: float = 0.95) -> TailResult:
    """``eta_rev = P_{S~A(zeros)}[R_rev(S) > e**epsilon]`` for the reverse homogeneous pair (outlier in D).

    ``R_rev = C(n, k) / e_k(w)`` with all ``n = kN`` reports from zero vectors (k = 1: ``N / sum w``). See the
    module docstring for the derivations (C1)–(C3) and the float-safety conventions.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 1.
        epsilon: privacy level > 0.
        method: ``"certified"`` (rigorous upper bound), ``"exact"`` (k = 1: heavy-level enumeration + binomial
            CDF; k > 1: every count vector, C(kN + j, j) <= 1e6) or ``"mc"`` (tilted Monte Carlo estimate).
        outlier_bits: j in [1, L] (default L); use :func:`worst_two_sided` for the worst j (ERRATA 5).
        reports: k >= 1 reports per person (ERRATA 4).
        rng, samples, confidence: Monte Carlo only.

    Returns:
        A :class:`TailResult` with ``details["direction"] == "reverse"``.

    Raises:
        ParameterError: a parameter out of range (the message names it), or "exact" beyond its limit.

    Example:
        >>> r = reverse_tail(q=0.2, bits=2, population=4, epsilon=1.0)
        >>> r.kind, r.details["direction"], 0.0 < r.eta <= 1.0
        ('bound', 'reverse', True)
    """
    method = _check_method(method)
    cfg = _check(q, bits, population, epsilon, outlier_bits, reports)
    if method == "certified":
        return _reverse_certified(cfg)
    if method == "exact":
        return _reverse_exact(cfg)
    n_samp = _MC_DEFAULT_SAMPLES if samples is None else check_int("samples", samples, minimum=100)
    confidence = check_open_interval("confidence", confidence, 0.0, 1.0)
    return _reverse_mc(cfg, check_rng(rng), n_samp, confidence)


# ---------------------------------------------------------------------------------------------------------------
# (C4) forward, k reports: Maclaurin + outlier convolution + heavy split
# ---------------------------------------------------------------------------------------------------------------
def _forward_k_log_bound(cfg: _Cfg) -> tuple[float, dict[str, Any]]:
    """Log of a rigorous bound on ``P[sum w >= n e**(eps/k)]`` (n - k zero reports, k outlier reports)."""
    n, k, j = cfg.n, cfg.k, cfg.j
    model = _tail._model(cfg.q, j, n, cfg.epsilon / k)  # v_l = w_l / (n e**(eps/k)), capped at e**700
    v = model.v
    logp0 = model.logp0
    p1 = np.exp(model.logp1)
    # outlier sum on the grid g[0] = 0, g[1..G] geometric in [O_MIN, 1]; index G + 1 means >= 1 (sure)
    g = np.concatenate([[0.0], np.geomspace(_O_MIN, 1.0, _O_GRID)])
    dist = np.zeros(g.size + 1)
    dist[0] = 1.0
    for _ in range(k):
        idx = np.searchsorted(g, g[:, None] + v[None, :], side="left")  # first grid point >= value (rounds up);
        new = np.zeros(g.size + 1)                                       # g.size: above 1, the sure bin
        np.add.at(new, idx.ravel(), (dist[:-1, None] * p1[None, :]).ravel())
        new[-1] += dist[-1]
        dist = new
    sure = float(dist[-1])
    og = g
    m0 = n - k
    y = np.maximum(1.0 - og, 0.0)
    y_dn = y - _THRESH_SLACK * (1.0 + y) - 1e-300
    best = np.ones(og.size)
    best_l = np.full(og.size, -1)
    if m0 == 0:
        best = np.where(y_dn <= 0, 1.0, 0.0)
    else:
        for lstar in range(j + 1, 0, -1):
            light = _tail._Light(model, lstar)
            if lstar == j + 1:
                b = np.exp(light.log_upper(np.full(og.shape, float(m0)), y_dn))
            else:
                log_heavy = float(logsumexp(logp0[lstar:]))
                pi_ge = math.exp(log_heavy)
                log_pl = math.log1p(-pi_ge) if pi_ge < 0.5 else float(logsumexp(logp0[:lstar]))
                log_p0h = m0 * log_pl
                log_p1h = math.log(m0) + log_heavy + (m0 - 1) * log_pl
                p_ge2 = min(max(0.0, 1.0 - math.exp(log_p0h) - math.exp(log_p1h) + 1e-15),
                            0.5 * m0 * (m0 - 1) * pi_ge * pi_ge)
                b = p_ge2 + math.exp(log_p0h) * np.exp(light.log_upper(np.full(og.shape, float(m0)), y_dn))
                for hl in range(lstar, j + 1):
                    w_h = math.exp(math.log(m0) + logp0[hl] + (m0 - 1) * log_pl)
                    if w_h <= 0:
                        continue
                    t = y_dn - v[hl]
                    b = b + w_h * np.exp(light.log_upper(np.full(og.shape, float(m0 - 1)), t))
            better = b < best
            best = np.where(better, b, best)
            best_l = np.where(better, lstar, best_l)
    best = np.minimum(best, 1.0)
    total = math.fsum((dist[:-1] * best).tolist()) + sure
    log_total = math.log(max(total, 1e-320))
    info = {"p_outlier_sum_ge_threshold": sure, "o_grid": _O_GRID,
            "split_levels_used": sorted({int(x) for x in best_l[dist[:-1] > 0]})}
    return log_total, info


def forward_k_certified(*, q: float, bits: int, population: int, epsilon: float, reports: int = 1,
                        outlier_bits: int | None = None) -> TailResult:
    """Rigorous upper bound on the forward k-report tail ``P[R(S^k) > e**epsilon]`` via Maclaurin (C4).

    ``R(S^k) <= (mean w)**k`` (ERRATA 4), so the tail is at most ``P[sum w >= kN e**(epsilon/k)]`` over
    ``kN - k`` zero reports and ``k`` outlier reports; bounded by exact convolution of the outlier part (rounded
    up) and Chernoff with a heavy-level split for the zero part (see the module docstring). For k = 1 it is a
    valid but looser alternative to :func:`tail.certified_tail`.

    Args:
        q, bits, population, epsilon, outlier_bits: as in :func:`reverse_tail`.
        reports: k >= 1.

    Returns:
        A :class:`TailResult` (``kind="bound"``, ``details["direction"] == "forward"``).

    Raises:
        ParameterError: a parameter out of range.
    """
    cfg = _check(q, bits, population, epsilon, outlier_bits, reports)
    return _forward_k(cfg)


def _forward_k(cfg: _Cfg) -> TailResult:
    t0 = time.perf_counter()
    if _impossible(cfg):
        return _result(cfg, eta=0.0, lo=0.0, hi=0.0, method="certified", kind="bound", delta=0.0, d_lo=0.0,
                       d_hi=0.0, details={"direction": "forward", "reason": _NEVER})
    log_b, info = _forward_k_log_bound(cfg)
    up = _finish_up(log_b)
    enum = _small_exact(cfg, "forward")
    if enum is not None and enum.eta_upper is not None and enum.eta_upper < up:
        up = float(enum.eta_upper)
        info["exact_enumeration_used"] = True
    details = {"direction": "forward", "seconds": time.perf_counter() - t0, "vacuous": up >= 1.0 - 1e-12,
               "note": "Maclaurin R(S^k) <= (mean w)^k; outlier sum convolved exactly (rounded up); zero reports: "
                       "Chernoff with exact MGF and a heavy-level split (0 or 1 heavy report exact, >= 2 bounded)",
               **info}
    return _result(cfg, eta=up, lo=None, hi=up, method="certified", kind="bound", delta=up, d_lo=0.0, d_hi=up,
                   details=details)


def _forward(cfg: _Cfg, method: str, rng: np.random.Generator, samples: int | None,
             confidence: float) -> TailResult:
    if cfg.k == 1:
        r = _tail.homogeneous_tail(q=cfg.q, bits=cfg.bits, population=cfg.population, epsilon=cfg.epsilon,
                                   method=method, outlier_bits=cfg.j, rng=rng, samples=samples,
                                   confidence=confidence)
        return replace(r, details={**r.details, "direction": "forward"})
    if method == "certified":
        return _forward_k(cfg)
    if method == "exact":
        if _impossible(cfg):
            return _result(cfg, eta=0.0, lo=0.0, hi=0.0, method="exact", kind="exact", delta=0.0,
                           details={"direction": "forward", "reason": _NEVER})
        _, log_r, log_pm = _exact_counts(cfg)
        return _exact_from_atoms(cfg, log_pm, log_r, "forward")
    from .k_reports import k_tail_mc

    if cfg.population < 2:
        raise ParameterError("population must be an integer >= 2 for the forward k-report Monte Carlo; got 1")
    r = k_tail_mc(q=cfg.q, bits=cfg.bits, population=cfg.population, reports=cfg.k, epsilon=cfg.epsilon,
                  samples=samples or _MC_DEFAULT_SAMPLES, rng=rng, outlier_bits=cfg.j, confidence=confidence)
    return replace(r, details={**r.details, "direction": "forward"})


# ---------------------------------------------------------------------------------------------------------------
# two-sided, worst over j, calibration
# ---------------------------------------------------------------------------------------------------------------
def _combine(cfg: _Cfg, fwd: TailResult | None, rev: TailResult | None, method: str,
             confidence: float | None, extra: dict[str, Any]) -> TailResult:
    parts = [r for r in (fwd, rev) if r is not None]
    worst = max(parts, key=lambda r: (r.eta, r.eta_upper if r.eta_upper is not None else 1.0))
    kind = "bound" if method == "certified" else ("exact" if method == "exact" else "estimate")
    lows = [r.eta_lower for r in parts]
    lo = max(x for x in lows if x is not None) if any(x is not None for x in lows) else None
    hi = max(r.eta_upper if r.eta_upper is not None else 1.0 for r in parts)
    deltas = [r.delta_upper if r.delta_upper is not None else r.delta for r in parts]
    d_hi = max(d for d in deltas if d is not None) if all(d is not None for d in deltas) else None
    worst_dir = worst.details.get("direction", "forward" if worst is fwd else "reverse")
    details = {"direction": "both" if len(parts) == 2 else worst_dir, "worst_direction": worst_dir,
               "forward": None if fwd is None else fwd.to_dict(), "reverse": None if rev is None else rev.to_dict(),
               **extra}
    return _result(cfg, eta=worst.eta, lo=lo, hi=hi, method=method, kind=kind, delta=worst.delta,
                   d_lo=None, d_hi=d_hi, confidence=confidence, details=details)


def two_sided_tail(*, q: float, bits: int, population: int, epsilon: float, method: str = "certified",
                   outlier_bits: int | None = None, reports: int = 1, rng: np.random.Generator | int | None = None,
                   samples: int | None = None, confidence: float = 0.95, direction: str = "both") -> TailResult:
    """``max(eta_fwd, eta_rev)`` for one outlier weight j: both homogeneous pairs (seed 001 eq. 1.7 is symmetric).

    Forward: :func:`tail.homogeneous_tail` for k = 1; for k > 1 ``certified`` = Maclaurin bound (C4),
    ``exact`` = every count vector, ``mc`` = :func:`k_reports.k_tail_mc`. Reverse: :func:`reverse_tail`.
    For ``mc`` each direction runs at confidence ``1 - (1 - confidence)/2`` (Bonferroni), so
    ``[max lowers, max uppers]`` covers the max with probability >= ``confidence``.

    Args:
        q, bits, population, epsilon, method, outlier_bits, reports, rng, samples, confidence: as in
            :func:`reverse_tail`.
        direction: ``"both"`` (default), ``"forward"`` or ``"reverse"``.

    Returns:
        A :class:`TailResult` for the worst direction; ``details["worst_direction"]`` and both results in
        ``details["forward"]``, ``details["reverse"]``.

    Raises:
        ParameterError: a parameter out of range.

    Example:
        >>> r = two_sided_tail(q=0.2, bits=2, population=4, epsilon=1.0)
        >>> r.details["worst_direction"] in ("forward", "reverse")
        True
    """
    method = _check_method(method)
    if direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}")
    cfg = _check(q, bits, population, epsilon, outlier_bits, reports)
    confidence = check_open_interval("confidence", confidence, 0.0, 1.0)
    gen = check_rng(rng)
    conf_each = 1.0 - (1.0 - confidence) / 2.0 if (method == "mc" and direction == "both") else confidence
    fwd = rev = None
    if direction in ("both", "forward"):
        fwd = _forward(cfg, method, gen, samples, conf_each)
    if direction in ("both", "reverse"):
        rev = reverse_tail(q=cfg.q, bits=cfg.bits, population=cfg.population, epsilon=cfg.epsilon, method=method,
                           outlier_bits=cfg.j, reports=cfg.k, rng=gen, samples=samples, confidence=conf_each)
    return _combine(cfg, fwd, rev, method, confidence if method == "mc" else None, {})


def worst_two_sided(*, q: float, bits: int, population: int, epsilon: float, method: str = "certified",
                    reports: int = 1, rng: np.random.Generator | int | None = None, samples: int | None = None,
                    confidence: float = 0.95) -> TailResult:
    """``max_{j=1..L} max(eta_fwd(j), eta_rev(j))`` (ERRATA 5: never assume j = L).

    Certified: the max of rigorous bounds. Exact: the max of brackets. Monte Carlo: each (j, direction) at
    Bonferroni level ``1 - (1 - confidence)/(2L)``.

    Returns:
        A :class:`TailResult` for the worst (j, direction); ``details["per_outlier_bits"]`` has, per j, the
        forward and reverse values.

    Raises:
        ParameterError: a parameter out of range.

    Example:
        >>> r = worst_two_sided(q=0.2, bits=2, population=4, epsilon=1.0)
        >>> r.outlier_bits in (1, 2) and r.kind == "bound"
        True
    """
    method = _check_method(method)
    cfg = _check(q, bits, population, epsilon, None, reports)
    confidence = check_open_interval("confidence", confidence, 0.0, 1.0)
    gen = check_rng(rng)
    t0 = time.perf_counter()
    conf_j = 1.0 - (1.0 - confidence) / cfg.bits if method == "mc" else confidence
    per: dict[str, Any] = {}
    results: list[TailResult] = []
    for j in range(1, cfg.bits + 1):
        r = two_sided_tail(q=cfg.q, bits=cfg.bits, population=cfg.population, epsilon=cfg.epsilon, method=method,
                           outlier_bits=j, reports=cfg.k, rng=gen, samples=samples, confidence=conf_j)
        results.append(r)
        per[str(j)] = {"forward": r.details["forward"]["eta"], "reverse": r.details["reverse"]["eta"],
                       "worst_direction": r.details["worst_direction"]}
    worst = max(results, key=lambda r: (r.eta, r.eta_upper if r.eta_upper is not None else 1.0))
    lows = [r.eta_lower for r in results if r.eta_lower is not None]
    hi = max(r.eta_upper if r.eta_upper is not None else 1.0 for r in results)
    details = {**worst.details, "per_outlier_bits": per, "seconds": time.perf_counter() - t0,
               "worst_over": "outlier_bits 1..L and both directions"}
    return replace(worst, eta_lower=max(lows) if lows else None, eta_upper=hi, details=details)


def worst_certified_two_sided(q: float, bits: int, population: int, epsilon: float, reports: int,
                               fail_above: float) -> tuple[bool, float, dict[str, Any]]:
    """(passes, bound, info): worst over j and both directions of certified bounds, stopping at the first
    failure (every computed bound is rigorous, so "passes" is a proof when True)."""
    worst = 0.0
    info: dict[str, Any] = {}
    for j in range(bits, 0, -1):
        cfg = _Cfg(q=q, bits=bits, population=population, epsilon=epsilon, j=j, k=reports)
        if _impossible(cfg):
            continue
        rb = _reverse_certified_core(cfg, stop_below=fail_above)
        b = _finish_up(rb.log_bound)
        if b > fail_above and reports > 1:
            b = _reverse_certified(cfg).eta
        if b > worst:
            worst, info = b, {"j": j, "direction": "reverse"}
        if b > fail_above:
            return False, worst, info
    if reports == 1:
        b, _, jw, _, complete = _tail._worst_certified(q, bits, population, epsilon, fail_above=fail_above)
        if b > worst:
            worst, info = b, {"j": jw, "direction": "forward"}
        return complete and worst <= fail_above, worst, info
    for j in range(bits, 0, -1):
        cfg = _Cfg(q=q, bits=bits, population=population, epsilon=epsilon, j=j, k=reports)
        if _impossible(cfg):
            continue
        b = _forward_k(cfg).eta
        if b > worst:
            worst, info = b, {"j": j, "direction": "forward"}
        if b > fail_above:
            return False, worst, info
    return worst <= fail_above, worst, info
