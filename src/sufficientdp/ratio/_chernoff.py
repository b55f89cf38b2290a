"""The one Chernoff tail engine behind :mod:`.tail` (forward direction) and :mod:`.reverse` (reverse direction).

Both directions of the homogeneous pair (seed 001 §1.2, eq. 1.7, 3.2–3.6) reduce to a tail of a sum of ``n`` iid
reports whose level ``l ~ Bin(j, q)`` carries a scaled value ``v_l`` (non-decreasing in ``l``): the *forward* pair
asks for the upper tail ``P[sum v > y]`` (:class:`Direction` ``FORWARD``), the *reverse* pair for the lower tail
``P[sum v <= 1]`` (``REVERSE``). This module holds what both need, once:

* :class:`Problem` — the one model type (levels, their law, scaled values, direction) with a cache of the
  Chernoff law of the light levels, :class:`LightLaw` (one interface; its tail is :class:`UpperLaw` FORWARD,
  :class:`LowerLaw` REVERSE);
* :func:`enumerate_heavy` — the top-down enumeration of the counts of the heavy levels with exact conditional
  binomial laws, count windows, pruning, and "sure"/"impossible" collapsing, parameterized by direction;
* :class:`BinomialFinish` — the exact methods' last step (levels {0, 1} left: a threshold on ``T_1``), one
  reduction and count rounding parameterized by direction, evaluated by :class:`ForwardFinish` (window pmf tables)
  or :class:`ReverseFinish` (boost's CDF);
* the binomial pieces (Chernoff bounds on binomial tails, count windows, boost's pmf), :class:`TooMany`,
  the local-DP test :func:`impossible`, :func:`check_config`, :func:`empirical_bernstein` and the float-safety
  margins shared by both directions.

The derivations (conditioning on heavy levels, Chernoff with the exact moment generating function, the
rounding margins) are in ``docs/proofs/chernoff_tail.md``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from scipy.special import xlogy

from .._errors import ParameterError
from .._numerics.binomial import log_binom_pmf_all
from .._numerics.logspace import logsumexp, logsumexp_finite_rows
from .._numerics.search import Bracket, Midpoint, search, verdict
from .._numerics.stats import scipy_stats
from .._validation import check_int, check_open_interval, check_positive_finite
from ..loss.result import Direction, TailResult

__all__ = [
    "ABS_FLOOR",
    "CERT_MAX_CONFIGS",
    "EXACT_MAX_CONFIGS",
    "LOG_CAP",
    "METHODS",
    "REL_SAFETY",
    "THRESH_SLACK",
    "BinomialFinish",
    "Config",
    "FinishTail",
    "ForwardFinish",
    "Heavy",
    "LightLaw",
    "LowerLaw",
    "Problem",
    "ReverseFinish",
    "TooMany",
    "UpperLaw",
    "binom_cdf",
    "binom_pmf",
    "binom_sf",
    "check_config",
    "check_method",
    "tail_result",
    "dot",
    "empirical_bernstein",
    "enumerate_forward_upper",
    "enumerate_heavy",
    "forward_problem",
    "impossible",
    "levels",
    "log_lower_tail",
    "log_upper_tail",
    "make_problem",
    "root",
    "window",
]

METHODS = ("certified", "exact", "mc")
"""The methods of the homogeneous tails, both directions (one ``method=`` argument, STYLE.md)."""

REL_SAFETY = 1e-9  # relative safety margin on final bounds and Chernoff exponents
THRESH_SLACK = 1e-10  # relative shift of thresholds in the safe direction
ABS_FLOOR = 1e-300  # stand-in for a probability that underflowed
LOG_CAP = 700.0  # scaled values above e**700 are capped (they exceed every threshold <= 1 on their own)
CERT_MAX_CONFIGS = 120_000  # certified methods stop refining before a stage would exceed this
EXACT_MAX_CONFIGS = 3_000_000
"""Largest number of heavy-count configurations the exact methods enumerate before raising ParameterError."""


class TooMany(Exception):
    """The enumeration would exceed its cap of live configurations (the stages already seen stay valid)."""


# ---------------------------------------------------------------------------------------------------------------
# Configuration, levels, the local-DP regime
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Config:
    """Validated parameters of one homogeneous pair: ``j`` differing bits, ``k`` reports per person.

    The one configuration type of the homogeneous analyses (the Chernoff engines, :mod:`.k_reports`,
    :mod:`.sampling`); :func:`check_config` builds it from public arguments.
    """

    q: float
    bits: int
    population: int
    epsilon: float
    j: int
    k: int

    @property
    def n(self) -> int:
        """``k N``: the number of reports."""
        return self.population * self.k

    @property
    def log_w(self) -> np.ndarray:
        """``log w_l = (j - 2l) log(q/p)``, l = 0..j (seed 001 eq. 3.2; the same values as :func:`levels`)."""
        lq = math.log(self.q) - math.log1p(-self.q)
        return np.asarray((self.j - 2.0 * np.arange(self.j + 1)) * lq, dtype=np.float64)


def check_config(q: Any, bits: Any, population: Any, epsilon: Any, outlier_bits: Any, reports: Any = 1, *,
                 min_population: int = 1) -> Config:
    """Validate the public parameters (ParameterError naming the parameter, value and range) into a :class:`Config`.

    ``min_population`` is the smallest population the caller's analysis accepts (1 for the Chernoff engines; 2 for
    the k-report and sampling analyses, which need at least one person besides the outlier).
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=min_population)
    epsilon = check_positive_finite("epsilon", epsilon)
    reports = check_int("reports", reports, minimum=1)
    j = bits if outlier_bits is None else check_int("outlier_bits", outlier_bits, minimum=1, maximum=bits)
    return Config(q=q, bits=bits, population=population, epsilon=epsilon, j=j, k=reports)


def tail_result(cfg: Config, *, eta: float, lo: float | None, hi: float | None, method: str, kind: str,
                delta: float | None = None, d_lo: float | None = None, d_hi: float | None = None,
                confidence: float | None = None, details: dict[str, Any] | None = None) -> TailResult:
    """The :class:`TailResult` of one homogeneous pair ``cfg`` (either direction)."""
    return TailResult(eta=eta, eta_lower=lo, eta_upper=hi, method=method, kind=kind, epsilon=cfg.epsilon, q=cfg.q,
                      bits=cfg.bits, population=cfg.population, reports=cfg.k, outlier_bits=cfg.j, delta=delta,
                      delta_lower=d_lo, delta_upper=d_hi, confidence_level=confidence,
                      details=details or {})


def check_method(method: Any) -> str:
    """``method`` if it is one of :data:`METHODS`, else ParameterError naming the allowed values."""
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    return str(method)


def levels(q: float, j: int) -> tuple[np.ndarray, np.ndarray]:
    """``log P[Bin(j, q) = l]`` and ``log w_l = (j - 2l) log(q/p)``, l = 0..j (seed 001 eq. 3.2; w increasing)."""
    lv = np.arange(j + 1, dtype=float)
    logq, logp = math.log(q), math.log1p(-q)
    return log_binom_pmf_all(j, q), (j - 2.0 * lv) * (logq - logp)


def impossible(q: float, j: int, epsilon: float, k: int = 1) -> bool:
    """``(p/q)**(j k) <= e**eps``: ``R <= e**eps`` surely in both directions (eta = delta = 0 exactly).

    Decided with a relative margin of 1e-12 so that rounding never declares a tail zero that is not.
    """
    log_max = j * k * (math.log1p(-q) - math.log(q))
    return log_max <= epsilon * (1.0 - 1e-12) - 1e-15


# ---------------------------------------------------------------------------------------------------------------
# The one model type
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Problem:
    """``n`` iid reports at levels ``l = 0..j`` (law ``logpi``), scaled values ``v`` (non-decreasing, capped at
    ``e**700``) so that the threshold of the sum is 1, and the direction of the tail asked for.

    ``FORWARD``: ``v_l = w_l / (N lambda)`` and the event is ``{sum of the n = N - 1 zero reports > y}`` with
    ``y = 1 - v_{l1}`` per outlier level ``l1`` (:mod:`.tail`). ``REVERSE``: ``v_l = u_l / x*`` and the event is
    ``{sum of the n reports <= 1}`` (:mod:`.reverse`). ``laws`` caches the law of the light levels ``< l*``.
    """

    direction: Direction
    q: float
    j: int
    population: int
    epsilon: float
    n: int
    logpi: np.ndarray  # log P[Bin(j, q) = l]: the law of a zero report
    logle: np.ndarray  # log P[Bin(j, q) <= l]
    v: np.ndarray  # scaled values (capped)
    laws: dict[int, LightLaw] = field(default_factory=dict, compare=False, repr=False)
    # binomial pmf rows keyed by (log a, log(1 - a)): the strata of one tail share them (:func:`pmf_table`)
    pmfs: dict[tuple[float, float], tuple[int, int, dict[int, np.ndarray]]] = field(default_factory=dict, compare=False, repr=False)
    # FORWARD: the enumeration's expansions, shared by the strata of one tail (:func:`enumerate_heavy`)
    expansions: dict[tuple[int, float, float], _Expansion] = field(default_factory=dict, compare=False, repr=False)

    @property
    def logp1(self) -> np.ndarray:
        """``log P[Bin(j, p) = l]``: the law of the outlier's report (forward)."""
        out: np.ndarray = self.logpi[::-1].copy()
        return out

    @property
    def y(self) -> np.ndarray:
        """Forward: threshold of the zero-report sum in each outlier stratum, ``S > 1 - v_{l1}``."""
        out: np.ndarray = 1.0 - self.v
        return out

    def law(self, lstar: int) -> LightLaw:
        """The :class:`LightLaw` of one report given ``l < lstar`` in this direction (cached)."""
        if lstar not in self.laws:
            self.laws[lstar] = LightLaw.of(self, lstar)
        out: LightLaw = self.laws[lstar]
        return out

    def upper_law(self, lstar: int) -> UpperLaw:
        """:meth:`law` of a FORWARD problem, typed for its extras (Cantelli's :meth:`UpperLaw.lower`)."""
        law = self.law(lstar)
        assert isinstance(law, UpperLaw)
        return law

    def lower_law(self, lstar: int) -> LowerLaw:
        """:meth:`law` of a REVERSE problem, typed for its extras (:meth:`LowerLaw.scalar`, ``log_mgf``, ...)."""
        law = self.law(lstar)
        assert isinstance(law, LowerLaw)
        return law


def make_problem(direction: Direction, q: float, j: int, population: int, epsilon: float, n: int,
                 logpi: np.ndarray, v: np.ndarray) -> Problem:
    return Problem(direction=direction, q=q, j=j, population=population, epsilon=epsilon, n=n, logpi=logpi,
                   logle=np.logaddexp.accumulate(logpi), v=v)


def forward_problem(q: float, j: int, population: int, epsilon: float) -> Problem:
    """The forward pair in units of ``N lambda``: ``v_l = w_l / (N e**epsilon)``, ``n = N - 1`` zero reports."""
    logpi, logw = levels(q, j)
    logv = logw - math.log(population) - epsilon
    v = np.exp(np.minimum(logv, LOG_CAP))
    return make_problem(Direction.FORWARD, q, j, population, epsilon, population - 1, logpi, v)


# ---------------------------------------------------------------------------------------------------------------
# Binomial pieces
# ---------------------------------------------------------------------------------------------------------------
def _kl(x: np.ndarray, log_a: float, log1m_a: float) -> np.ndarray:
    """``D(x || a) = x log(x/a) + (1-x) log((1-x)/(1-a))`` with ``log a``, ``log(1-a)`` given."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = xlogy(x, x) - x * log_a + xlogy(1.0 - x, 1.0 - x) - (1.0 - x) * log1m_a
        return out


def log_upper_tail(k: np.ndarray, m: np.ndarray, log_a: float, log1m_a: float) -> np.ndarray:
    """Log of a rigorous bound on ``P[Bin(m, a) >= k]`` (Chernoff; 0 where trivial, -inf where impossible)."""
    k = np.asarray(k, dtype=float)
    m = np.asarray(m, dtype=float)
    k, m = np.broadcast_arrays(k, m)
    out = np.zeros(k.shape)
    out[k > m] = -np.inf
    a = math.exp(log_a)
    mid = (k > 0) & (k <= m) & (k > m * a)
    if np.any(mid):
        x = k[mid] / m[mid]
        out[mid] = -m[mid] * _kl(x, log_a, log1m_a)
    return out


def log_lower_tail(k: np.ndarray, m: np.ndarray, log_a: float, log1m_a: float) -> np.ndarray:
    """Log of a rigorous bound on ``P[Bin(m, a) <= k]``."""
    k = np.asarray(k, dtype=float)
    m = np.asarray(m, dtype=float)
    k, m = np.broadcast_arrays(k, m)
    out = np.zeros(k.shape)
    out[k < 0] = -np.inf
    a = math.exp(log_a)
    mid = (k >= 0) & (k < m) & (k < m * a)
    if np.any(mid):
        x = k[mid] / m[mid]
        out[mid] = -m[mid] * _kl(x, log_a, log1m_a)
    return out


def _log_tail_at(k: int, m: int, log_a: float, log1m_a: float, *, upper: bool) -> float:
    """:func:`log_upper_tail` (``upper``) or :func:`log_lower_tail` at one count ``k`` of ``Bin(m, a)``: the same
    tests and operations on one value (Python floats, :func:`_kl` on a 0-d array), without the arrays' masks (the
    bisections of :func:`window` probe one count at a time; issue 10)."""
    kf, mf = float(k), float(m)
    a = math.exp(log_a)
    if upper:
        if kf > mf:
            return -math.inf
        inside = kf > 0 and kf <= mf and kf > mf * a
    else:
        if kf < 0:
            return -math.inf
        inside = kf >= 0 and kf < mf and kf < mf * a
    if not inside:
        return 0.0
    return float(-mf * _kl(np.asarray(kf / mf), log_a, log1m_a))


@functools.lru_cache(maxsize=4096)
def window(m_lo: int, m_hi: int, log_a: float, log1m_a: float, tol: float) -> tuple[int, int]:
    """Count window ``[lo, hi]`` outside which Bin(m, a), ``m_lo <= m <= m_hi``, has Chernoff mass <= tol/side.

    Cached by its exact arguments (the strata of one tail ask for the same windows; issue 10)."""
    log_tol = math.log(tol)
    a = math.exp(log_a)
    # hi: smallest k >= m_hi a with P[Bin(m_hi) >= k + 1] <= tol (integer bisection; the bound is monotone in k)
    def upper_ok(k: float) -> bool:
        return _log_tail_at(int(k) + 1, m_hi, log_a, log1m_a, upper=True) <= log_tol

    lo_k, hi_k = int(math.floor(m_hi * a)), m_hi
    if upper_ok(hi_k):
        hi_k = int(search(verdict(upper_ok), Bracket(fail=lo_k, ok=hi_k), Midpoint("integer"),
                          max_probes=max(hi_k - lo_k, 0).bit_length()).ok)
    hi = hi_k

    # lo: largest k <= m_lo a with P[Bin(m_lo) <= k - 1] <= tol
    def lower_ok(k: float) -> bool:
        return _log_tail_at(int(k) - 1, m_lo, log_a, log1m_a, upper=False) <= log_tol

    lo_k, hi_k = 0, int(math.ceil(m_lo * a))
    if lower_ok(lo_k):
        lo_k = int(search(verdict(lower_ok), Bracket(fail=hi_k, ok=lo_k), Midpoint("integer"),
                          max_probes=max(hi_k - lo_k, 0).bit_length()).ok)
    lo = lo_k
    return max(0, min(lo, hi)), max(hi, 0)


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """``sum(a * b)`` without BLAS: a BLAS product wakes OpenBLAS's worker threads, whose spinning slowed the whole
    exact tail 2-3x on a busy 2-core machine (issue 10). numpy sums pairwise (error O(eps log n))."""
    return float(np.sum(a * b))


def _boost_binom(name: str) -> Any:
    """Boost's binomial ufunc ``name`` (``_binom_pmf``, ``_binom_cdf``, ``_binom_sf``), the one ``scipy.stats.binom``
    evaluates inside the support (None if this scipy has no such private ufunc)."""
    try:
        from scipy.special import _ufuncs
    except ImportError:  # pragma: no cover - scipy layout changed
        return None
    return getattr(_ufuncs, name, None)


def _plain_counts(n: np.ndarray, p: float) -> bool:
    """Whether ``n`` (float array) holds integers >= 0 and ``0 <= p <= 1``: where the direct ufuncs apply."""
    return bool(0.0 <= p <= 1.0 and (n.size == 0 or (np.all(n >= 0) and np.all(np.floor(n) == n))))


def _binom_tail(kind: str, k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """``scipy.stats.binom.<kind>(k, n, p)`` (``kind`` ``"cdf"`` or ``"sf"``) bit for bit: boost's value at
    ``floor(k)`` clipped to [0, 1] for ``0 <= k < n``; for ``k >= n`` the cdf is 1 and the sf 0, below 0 the cdf is 0
    and the sf 1; nan for nan. scipy.stats is imported only for arguments outside those (issue 10)."""
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float))
    ufunc = _boost_binom(f"_binom_{kind}")
    if ufunc is None or not _plain_counts(n_arr, p):
        out: np.ndarray = getattr(scipy_stats().binom, kind)(k, n, p)
        return out
    res = np.zeros(k_arr.shape)
    res[(k_arr >= n_arr) if kind == "cdf" else (k_arr < 0)] = 1.0
    res[np.isnan(k_arr)] = np.nan
    inside = (k_arr >= 0) & (k_arr < n_arr) & np.isfinite(k_arr)
    if np.any(inside):
        res[inside] = np.clip(ufunc(np.floor(k_arr[inside]), n_arr[inside], p), 0.0, 1.0)
    return res


def binom_cdf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """``scipy.stats.binom.cdf(k, n, p)`` bit for bit, without importing scipy.stats (:func:`_binom_tail`)."""
    return _binom_tail("cdf", k, n, p)


def binom_sf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """``scipy.stats.binom.sf(k, n, p)`` bit for bit, without importing scipy.stats (:func:`_binom_tail`)."""
    return _binom_tail("sf", k, n, p)


def binom_pmf(c: np.ndarray, m: np.ndarray, log_a: float, log1m_a: float) -> np.ndarray:
    """``P[Bin(m, a) = c]`` via boost's pmf, parameterized by the smaller of a, 1 - a (accurate to ~1e-15).

    For integer ``c``, ``m >= 0`` the values are ``scipy.stats.binom.pmf``'s bit for bit (boost's pmf clipped to
    [0, 1] inside ``0 <= c <= m``, 0 outside) without its per-call argument handling (issue 10). Where boost
    overflows (the smaller of a, 1 - a below about 1e-300: it raises OverflowError; L in the thousands reaches it),
    the pmf comes from its logarithm instead (:func:`_binom_pmf_from_logs`).
    """
    log_p, log1m_p = (log_a, log1m_a) if log_a <= log1m_a else (log1m_a, log_a)
    k, p = (c, math.exp(log_a)) if log_a <= log1m_a else (m - c, math.exp(log1m_a))
    pmf = _boost_binom("_binom_pmf")
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k), np.asarray(m))
    try:
        if (pmf is None or k_arr.dtype.kind not in "iu" or n_arr.dtype.kind not in "iu"
                or (n_arr.size and int(n_arr.min()) < 0)):
            out: np.ndarray = scipy_stats().binom.pmf(k, m, p)
            return out
        inside = (k_arr >= 0) & (k_arr <= n_arr)
        res = np.zeros(k_arr.shape)
        res[inside] = np.clip(pmf(k_arr[inside].astype(float), n_arr[inside].astype(float), p), 0.0, 1.0)
        return res
    except OverflowError:
        return _binom_pmf_from_logs(k_arr, n_arr, log_p, log1m_p)


def _binom_pmf_from_logs(k: np.ndarray, n: np.ndarray, log_p: float, log1m_p: float) -> np.ndarray:
    """``P[Bin(n, p) = k]`` as ``exp(log C(n, k) + k log p + (n - k) log(1 - p))`` (0 outside ``0 <= k <= n``, nan
    where k or n is nan), with ``log C(n, k) = -log(n + 1) - log B(n - k + 1, k + 1)`` (no cancellation at large n):
    what :func:`binom_pmf` returns where boost overflows, at p so small that every term but k = 0 underflows."""
    from scipy.special import betaln

    kf, nf = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    res = np.where(np.isnan(kf) | np.isnan(nf), np.nan, 0.0)
    inside = (kf >= 0) & (kf <= nf) & (np.floor(kf) == kf) & (np.floor(nf) == nf) & np.isfinite(nf)
    if np.any(inside):
        ki, ni = kf[inside], nf[inside]
        with np.errstate(under="ignore", invalid="ignore"):
            log_pmf = (-np.log1p(ni) - betaln(ni - ki + 1.0, ki + 1.0) + np.where(ki > 0, ki * log_p, 0.0)
                       + np.where(ni > ki, (ni - ki) * log1m_p, 0.0))
            res[inside] = np.clip(np.exp(log_pmf), 0.0, 1.0)
    return res


def unique_counts(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(m, return_inverse=True)`` for a 1-D array of counts: the same arrays, by a bincount when the
    counts are small non-negative integers (no sort; issue 10), else by ``np.unique``."""
    if m.ndim == 1 and m.size and m.dtype.kind == "i":
        top = int(m.max())
        if int(m.min()) >= 0 and top <= 8 * m.size + 4096:
            present = np.bincount(m, minlength=top + 1) > 0
            uniq = np.flatnonzero(present)
            lookup = np.cumsum(present) - 1
            return uniq.astype(m.dtype, copy=False), lookup[m]
    um, inv = np.unique(m, return_inverse=True)
    return um, inv


_PMF_CACHE_MAX = 4_000_000  # floats held per Problem by pmf_table (32 MB)


def pmf_table(pb: Problem, c: np.ndarray, um: np.ndarray, log_a: float, log1m_a: float) -> np.ndarray:
    """``binom_pmf(c[None, :], um[:, None], log_a, log1m_a)`` for a contiguous ``c``, rows cached on ``pb``.

    Each value depends on (c, m, log a, log(1 - a)) only, so rows computed for one stratum (over a count range
    that covers this one) are reused as they are: the same numbers bit for bit. The cache keeps at most
    ``_PMF_CACHE_MAX`` floats per Problem (larger tables are computed directly).
    """
    if c.size == 0 or um.size == 0 or um.size * c.size > _PMF_CACHE_MAX // 4:
        return binom_pmf(c[None, :], um[:, None], log_a, log1m_a)
    lo, hi = int(c[0]), int(c[-1])
    key = (log_a, log1m_a)
    entry = pb.pmfs.get(key)
    if entry is None or lo < entry[0] or hi > entry[1]:  # (re)start this key's rows over the union range
        if entry is not None:
            lo, hi = min(lo, entry[0]), max(hi, entry[1])
        pad = 8 + (hi - lo) // 16  # the strata's windows differ by a few counts: cover them without a restart
        lo, hi = max(lo - pad, 0), hi + pad
        fresh: dict[int, np.ndarray] = {}
        entry = (lo, hi, fresh)
        pb.pmfs[key] = entry
    c0, c1, rows = entry
    counts = um.tolist()  # Python ints: the dictionary's keys
    missing = [x for x in counts if x not in rows]
    if missing:
        full = np.arange(c0, c1 + 1, dtype=np.int64)
        tab = binom_pmf(full[None, :], np.asarray(missing, dtype=np.int64)[:, None], log_a, log1m_a)
        for i, mv in enumerate(missing):
            rows[mv] = tab[i]
    start = int(c[0]) - c0
    stop = start + c.size
    out = np.stack([rows[x][start:stop] for x in counts])
    if sum((e[1] - e[0] + 1) * len(e[2]) for e in pb.pmfs.values()) > _PMF_CACHE_MAX:
        pb.pmfs.clear()
    return out


def empirical_bernstein(x: np.ndarray, alpha: float) -> float:
    """Half-width of a two-sided ``1 - alpha`` interval for the mean of iid variables in [0, 1].

    Maurer & Pontil (2009), Theorem 4, applied to each side at level alpha/2:
    ``sqrt(2 V ln(4/alpha) / n) + 7 ln(4/alpha) / (3 (n - 1))`` with V the sample variance. Valid for every n
    (not asymptotic).
    """
    n = x.size
    if n < 2:
        return 1.0
    log_term = math.log(4.0 / alpha)
    return math.sqrt(2.0 * float(x.var(ddof=1)) * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))


# ---------------------------------------------------------------------------------------------------------------
# Chernoff laws of the light levels (exact moment generating function)
# ---------------------------------------------------------------------------------------------------------------
class LightLaw:
    """The law of one report given that its level is light (``l < lstar``), and Chernoff bounds on the tail of the
    sum ``Light_m`` of ``m`` such reports in the problem's direction: the one light-level law of both directions.

    Both directions share the law (``logpi``, ``pi``, ``v``, ``vmin``, ``mu``: normalized log probabilities, values,
    smallest value, mean) and the interface: :meth:`choose` ``(m, t) -> (theta, raw log bound, Lambda)`` picks a
    near-optimal ``theta >= 0`` from a grid (``theta``, ``lam``, ``tmean``: the grid, the log MGF there and the
    tilted mean) and :meth:`log_upper` inflates the raw exponent by the float-safety margin. What differs is the
    tail, hence the exponent and the grid: :class:`UpperLaw` (FORWARD) bounds ``P[Light_m >= t] <=
    exp(-theta t + m log E e^{theta V})``, :class:`LowerLaw` (REVERSE) ``P[Light_m <= t] <= exp(theta t +
    m log E e^{-theta V})`` (docs/proofs/chernoff_tail.md, reverse_tail.md (C1)). Each keeps its own arithmetic
    (normalization, grid, MGF evaluation), so the numbers are those of the two laws it unites bit for bit.
    """

    direction: ClassVar[Direction]
    logpi: np.ndarray
    pi: np.ndarray
    v: np.ndarray
    vmin: float
    mu: float

    @staticmethod
    def of(pb: Problem, lstar: int) -> LightLaw:
        """The light law of ``pb`` for levels ``< lstar``, in ``pb.direction``."""
        return UpperLaw(pb, lstar) if pb.direction == Direction.FORWARD else LowerLaw(pb, lstar)

    def choose(self, m: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(theta, raw log bound ``min(0, exponent)``, Lambda) for the tail of ``Light_m`` at ``t``: theta = 0
        (bound 1) where trivial, ``-inf`` where impossible; no safety margin (proposals, and :meth:`log_upper`)."""
        raise NotImplementedError

    def log_upper(self, m: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Log of a rigorous upper bound on the tail of ``Light_m`` at ``t`` in the direction (``t`` already moved
        by the slack in the safe direction).

        The exponent for the chosen theta, inflated by ``1e-9 (|theta t| + |m Lambda|)`` (+1e-12; float64 rounding
        of both terms is far below that), capped at 0."""
        m, t = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(t, dtype=float))
        theta, raw, lam = self.choose(m, t)
        out = raw.copy()
        act = (theta > 0) & np.isfinite(raw)
        if np.any(act):
            mag = np.abs(theta[act] * t[act]) + np.abs(m[act] * lam[act])
            out[act] = np.minimum(raw[act] + REL_SAFETY * mag + 1e-12, 0.0)
        return out


class UpperLaw(LightLaw):
    """FORWARD light law: law of one zero report given ``l < lstar``; Chernoff ``P[Light_m >= t] <=
    exp(-theta t + m Lambda(theta))`` on a fixed theta grid, and Cantelli's lower bound (:meth:`lower`)."""

    direction = Direction.FORWARD

    def __init__(self, model: Problem, lstar: int) -> None:
        logpi = model.logpi[:lstar] - model.logle[lstar - 1]
        self.logpi = logpi
        self.pi = np.exp(logpi)
        self.v = model.v[:lstar].copy()
        self.vmin = float(self.v.min())
        self.vmax = float(self.v.max())
        self.mu = float(np.sum(self.pi * self.v))
        with np.errstate(over="ignore", invalid="ignore"):  # values near exp(LOG_CAP) (q tiny): no finite variance
            var = float(np.sum(self.pi * (self.v - self.mu) ** 2))
        self.var = var if math.isfinite(var) else math.inf  # inf: the variance-based lower bounds drop to 0
        s = np.concatenate([[0.0], np.geomspace(1e-10, 1e7, 2400)])
        self.theta = s / self.vmax
        tv = self.theta[:, None] * self.v[None, :]
        with np.errstate(over="ignore"):
            small = tv[:, -1] < 600.0
            lam = np.empty(s.size)
            # log E e^{theta X} = log1p(sum pi expm1(theta v)): accurate to a few ulp of itself (all terms >= 0)
            lam[small] = np.log1p(np.sum(self.pi[None, :] * np.expm1(tv[small]), axis=1))
            big = ~small
            if np.any(big):
                lam[big] = logsumexp_finite_rows(logpi[None, :] + tv[big])
            # tilted mean Lambda'(theta), used only to choose theta
            z = logpi[None, :] + tv
            zm = z.max(axis=1, keepdims=True)
            wts = np.exp(z - zm)
            dmean = np.sum(wts * self.v[None, :], axis=1) / np.sum(wts, axis=1)
        self.lam = lam
        self.tmean = np.maximum.accumulate(dmean)

    def choose(self, m: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Near-optimal Chernoff ``theta`` for ``P[Light_m > t]`` and the raw log bound
        ``min(0, -theta t + m Lambda(theta))`` (``theta = 0``, bound 1, where trivial; ``-inf`` where
        impossible), and ``Lambda(theta)``. No safety margin: for proposals, and the core of :meth:`log_upper`."""
        m, t = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(t, dtype=float))
        theta = np.zeros(t.shape)
        lam = np.zeros(t.shape)
        out = np.zeros(t.shape)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            sure = t <= m * self.vmin
            never = ~sure & (t > m * self.vmax * (1.0 + 1e-12))
            mid = ~sure & ~never & (t > m * self.mu)
        out[never] = -np.inf
        if np.any(mid):
            mm, tt = m[mid], t[mid]
            g = np.clip(np.searchsorted(self.tmean, tt / mm), 1, self.theta.size - 1)
            x0 = -self.theta[g - 1] * tt + mm * self.lam[g - 1]
            x1 = -self.theta[g] * tt + mm * self.lam[g]
            use1 = x1 < x0
            gg = np.where(use1, g, g - 1)
            best = np.where(use1, x1, x0)
            pos = best > 0
            theta[mid] = np.where(pos, 0.0, self.theta[gg])
            lam[mid] = np.where(pos, 0.0, self.lam[gg])
            out[mid] = np.minimum(best, 0.0)
        return theta, out, lam

    def lower(self, m: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Rigorous lower bound on ``P[Light_m > t]`` (t shifted up by the slack): Cantelli's inequality."""
        m, t = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(t, dtype=float))
        out = np.zeros(t.shape)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            sure = t < m * self.vmin * (1.0 - 1e-12)
            mid = ~sure & (t < m * self.mu)
            d = m[mid] * self.mu - t[mid]
            d2 = d * d
            out[mid] = d2 / (m[mid] * self.var + d2) * (1.0 - 1e-9)
        out[sure] = 1.0
        return out


#: Largest Chernoff theta of the REVERSE light law's search when ``1e4 / (smallest gap)`` overflows (the bound
#: holds at every theta >= 0, so capping the search range keeps it valid).
_THETA_CAP = 1e300


class LowerLaw(LightLaw):
    """REVERSE light law: law ``pi`` of one report given ``l < lstar`` on non-decreasing values ``v``; Chernoff
    ``P[Light_m <= y] <= exp(theta y + m Lambda(-theta))`` on a lazily built theta grid, with a scalar optimizer
    (:meth:`scalar`), the log MGF (:meth:`log_mgf`) and the bound on ``E[(1 - Light_m)_+]``
    (:meth:`log_delta_upper`)."""

    direction = Direction.REVERSE

    def __init__(self, model: Problem, lstar: int) -> None:
        logpi = model.logpi[:lstar]
        self.logpi = logpi - float(logsumexp(logpi, split_max=True))
        self.pi = np.exp(self.logpi)
        self.v = np.asarray(model.v[:lstar], dtype=float)
        self.vmin = float(self.v[0])
        self.mu = float(np.sum(self.pi * self.v))
        gaps = self.v - self.vmin
        pos = gaps[gaps > 0]
        self.theta_lo = 1e-8 / max(self.mu, 1e-300)
        self.theta_hi = max(1e4 / float(pos.min()), self.theta_lo * 10.0) if pos.size else 0.0
        if not math.isfinite(self.theta_hi):  # a subnormal gap (L in the hundreds): any finite theta is valid
            self.theta_hi = _THETA_CAP
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

        def exponents(ths: list[float]) -> list[float]:
            # theta y + m Lambda(-theta) at each theta, with one log_mgf call (row by row the same operations: the
            # same floats as one call per theta, tested; the scan's 64 calls were a third of a large-L homogeneous
            # calibration's reverse side)
            lams = self.log_mgf(np.array(ths))
            return [th * y + m * float(lam) for th, lam in zip(ths, lams, strict=True)]

        def f(u: float) -> float:
            return exponents([math.exp(u)])[0]

        us = np.linspace(math.log(self.theta_lo), math.log(self.theta_hi), 64)
        fs = exponents([math.exp(float(u)) for u in us])
        i = int(np.argmin(fs))
        lo_u, hi_u = float(us[max(i - 1, 0)]), float(us[min(i + 1, us.size - 1)])
        r = minimize_scalar(f, bounds=(lo_u, hi_u), method="bounded", options={"xatol": 1e-10})
        u = float(r.x) if float(r.fun) < fs[i] else float(us[i])
        th = math.exp(u)
        lam = float(self.log_mgf(np.array([th]))[0])
        raw = th * y + m * lam
        if raw >= 0:
            return 0.0, 0.0, 0.0
        return min(raw + REL_SAFETY * (abs(th * y) + abs(m * lam)) + 1e-12, 0.0), th, lam

    def log_mgf(self, theta: np.ndarray) -> np.ndarray:
        """``log E e^{-theta V}`` (accurate: log1p of a same-sign sum, or logsumexp when far from 0)."""
        theta = np.asarray(theta, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            tv = theta[:, None] * self.v[None, :]
            s = np.sum(self.pi[None, :] * np.expm1(-tv), axis=1)
            lse = logsumexp(self.logpi[None, :] - tv, axis=1, split_max=True)
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

    def log_delta_upper(self, m: float) -> float:
        """Log of a bound on ``E[(1 - sum of m)_+]``: ``min_theta exp(theta - 1 - log theta + m Lambda)``."""
        th = self.theta[1:]
        if th.size == 0:
            return 0.0 if m * self.vmin < 1.0 else -math.inf
        vals = th - 1.0 - np.log(th) + m * self.lam[1:]
        i = int(np.argmin(vals))
        mag = abs(th[i]) + 1.0 + abs(math.log(th[i])) + abs(m * self.lam[1:][i])
        return float(min(vals[i] + REL_SAFETY * mag + 1e-12, 0.0))


# ---------------------------------------------------------------------------------------------------------------
# Top-down enumeration of heavy-level counts (both directions)
# ---------------------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Heavy:
    """Heavy configurations after processing levels ``j..lstar`` (light levels: ``0..lstar-1``).

    Each live configuration has its exact multinomial log probability ``logp``, scaled heavy sum
    ``h = sum_{l >= lstar} T_l v_l`` and ``m`` reports left for the light levels. The masses set aside are kept as
    each direction's callers sum them: FORWARD linearly (``dropped``, ``certain`` and the ``collapsed``
    configurations, which the delta brackets need), REVERSE in the log domain (``log_dropped``, ``log_certain``,
    and ``certain_delta``, the sure configurations' part of ``E[(1 - V)_+]``).
    """

    lstar: int
    logp: np.ndarray
    h: np.ndarray
    m: np.ndarray
    dropped: float = 0.0  # FORWARD: mass removed (window tails and pruning), added to upper bounds
    certain: float = 0.0  # FORWARD: mass of configurations in the event whatever the light levels do
    collapsed: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    log_certain: float = -math.inf  # REVERSE: log of the mass in the event surely
    log_dropped: float = -math.inf  # REVERSE: log of the mass removed
    certain_delta: float = 0.0  # REVERSE: sum over sure configurations of P * E[1 - V | config] (k = 1)
    configs: int = 0  # REVERSE: live configurations generated so far


def root(pb: Problem) -> Heavy:
    """The stage before any level is processed: one configuration, all ``n`` reports light."""
    return Heavy(lstar=pb.j + 1, logp=np.zeros(1), h=np.zeros(1), m=np.full(1, pb.n, dtype=np.int64))


def _level(pb: Problem, lev: int) -> tuple[float, float, float]:
    """``(log a, log(1 - a), v)`` of level ``lev`` of the heavy enumeration: how a configuration's count at this
    level splits off the levels below (binomial with ``a = pi_lev / le_lev``) and the level's value (shared by
    :func:`enumerate_heavy` and :func:`enumerate_forward_upper`)."""
    return float(pb.logpi[lev] - pb.logle[lev]), float(pb.logle[lev - 1] - pb.logle[lev]), float(pb.v[lev])


_EXPANSION_CACHE_MAX = 4_000_000  # children held per Problem by the cache of expansions (about 200 MB at most)


@dataclass(slots=True)
class _Expansion:
    """One level of the FORWARD enumeration from a given set of parents, up to the event's tests: what
    :func:`enumerate_heavy` computes there that does not depend on the threshold ``y``, so that the strata of one
    tail (one ``y`` each) share it (issue 10). Every float is computed by the same operations on the same numbers
    as in a plain pass over the level, and replayed in the same order.

    ``parents``: the parents' (logp, h, m); ``outside``: the window's Chernoff mass added to the dropped mass;
    ``drops``: per chunk of parents with dropped children, the float added to the dropped mass; ``bounds``: the
    chunks' offsets into the kept children (logp ``lp``, heavy sum ``h``, counts left ``m``, and the two sums of
    the event's tests, ``h + m v_0`` and ``(h + m v_rest)(1 + 1e-9)``); ``kids``: the next level's expansions by
    the children kept live (the bytes of the mask). ``too_many``: the level raises :class:`TooMany`;
    ``empty``: no count in the window.
    """

    parents: tuple[np.ndarray, np.ndarray, np.ndarray]
    too_many: bool = False
    empty: bool = False
    outside: float = 0.0
    drops: list[float] = field(default_factory=list)
    bounds: list[int] = field(default_factory=list)
    lp: np.ndarray = field(default_factory=lambda: np.zeros(0))
    h: np.ndarray = field(default_factory=lambda: np.zeros(0))
    m: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    sure_sum: np.ndarray = field(default_factory=lambda: np.zeros(0))
    never_sum: np.ndarray = field(default_factory=lambda: np.zeros(0))
    kids: dict[bytes, _Expansion] = field(default_factory=dict)
    held: list[int] = field(default_factory=lambda: [0])  # children held by its tree (one list shared by the tree)


def _expand_forward(pb: Problem, lev: int, parents: tuple[np.ndarray, np.ndarray, np.ndarray], *, cap: int,
                    log_prune: float, window_tol: float) -> _Expansion:
    """The :class:`_Expansion` of ``parents`` at level ``lev`` (FORWARD): :func:`enumerate_heavy`'s operations."""
    logp, hp, m = parents
    v = pb.v
    v0 = float(v[0])
    log_a, log1m_a, vl = _level(pb, lev)
    lo, hi = window(int(m.min()), int(m.max()), log_a, log1m_a, window_tol)
    c = np.arange(lo, hi + 1, dtype=np.int64) if hi >= lo else np.zeros(0, dtype=np.int64)
    if c.size * m.size > 8 * cap:
        return _Expansion(parents, too_many=True)
    # mass of each parent outside the window (rigorous Chernoff bound)
    low_t = log_lower_tail(np.full(m.shape, lo - 1), m, log_a, log1m_a)
    up_t = log_upper_tail(np.full(m.shape, hi + 1), m, log_a, log1m_a)
    outside = float(np.sum(np.exp(logp + np.logaddexp(up_t, low_t))))
    if c.size == 0:
        return _Expansion(parents, empty=True, outside=outside)
    step = max(1, 2_000_000 // c.size)  # chunks of parents bound the memory
    drops: list[float] = []
    bounds = [0]
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    v_rest = float(v[lev - 1])
    ltab, uinv = _log_pmf_by_parent(pb, c, m, log_a, log1m_a)
    for start in range(0, m.size, step):
        sl = slice(start, start + step)
        mm = m[sl, None]
        child = ltab[uinv[sl]]  # a fresh copy (fancy indexing); adding in place (IEEE + commutes)
        child += logp[sl, None]
        if int(c[-1]) <= int(mm.min()):  # every count fits every parent (the usual case)
            keep = child >= log_prune
            drop = ~keep
        else:
            valid = c[None, :] <= mm
            keep = valid & (child >= log_prune)
            drop = valid & ~keep
        if np.any(drop):
            dl = child[drop]
            n_inf = dl.size - int(np.count_nonzero(np.isfinite(dl)))  # usually 0: no second copy then
            drops.append(float(np.sum(np.exp(dl if n_inf == 0 else dl[np.isfinite(dl)]))) + ABS_FLOOR * n_inf)
        # the kept children's heavy sums and counts left, h[parent] + c vl and m[parent] - c in row-major order,
        # built from the kept entries only (the same operations as on the full grid, then masked; issue 10)
        parts.append(_kept_children(child, keep, c, hp[sl], m[sl], vl))
        bounds.append(bounds[-1] + parts[-1][0].size)
    lp, h, m_new = (np.concatenate([x[i] for x in parts]) for i in range(3))
    mf = m_new.astype(float)  # converted once (int * float converts the same way)
    return _Expansion(parents, outside=outside, drops=drops, bounds=bounds, lp=lp, h=h, m=m_new,
                      sure_sum=h + mf * v0, never_sum=(h + mf * v_rest) * (1.0 + 1e-9))


def _enumerate_forward(pb: Problem, *, stop_level: int, cap: int, log_prune: float, window_tol: float, y: float,
                       stage: Callable[[Heavy], bool | None] | None) -> Heavy:
    """:func:`enumerate_heavy` FORWARD: the expansion of each level comes from ``pb.expansions`` (computed once per
    set of parents for every threshold ``y``); the event's tests, the sums and the collapsed configurations follow
    it chunk by chunk as a plain pass over the level does (the same floats)."""
    heavy = root(pb)
    margin = 1e-9 * abs(y) + 1e-300
    key = (cap, log_prune, window_tol)
    prev: tuple[_Expansion, bytes] | None = None  # the expansion the current parents come from, and their mask
    for lev in range(pb.j, stop_level - 1, -1):
        if stage is not None and stage(heavy):
            return heavy
        if heavy.logp.size == 0:
            heavy = replace(heavy, lstar=lev)
            continue
        parents = (heavy.logp, heavy.h, heavy.m)
        node = pb.expansions.get(key) if prev is None else prev[0].kids.get(prev[1])
        if node is None:
            node = _expand_forward(pb, lev, parents, cap=cap, log_prune=log_prune, window_tol=window_tol)
            if prev is None:
                pb.expansions[key] = node
                node.held = [node.lp.size]
            elif prev[0].held[0] + node.lp.size <= _EXPANSION_CACHE_MAX:
                prev[0].kids[prev[1]] = node
                node.held = prev[0].held
                node.held[0] += node.lp.size
            else:  # the cache is full: this expansion is not kept, nor are those below it
                node.held = [_EXPANSION_CACHE_MAX + 1]
        if node.too_many:
            raise TooMany
        dropped = heavy.dropped + node.outside
        certain, collapsed = heavy.certain, list(heavy.collapsed)
        if node.empty:
            heavy = Heavy(lev, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), dropped, certain, collapsed,
                          heavy.log_certain, heavy.log_dropped, heavy.certain_delta, heavy.configs)
            prev = None
            continue
        for d in node.drops:
            dropped += d
        sure = node.sure_sum > y + margin  # event {S > y}
        never = node.never_sum < y - margin
        sure_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        if np.any(sure):
            for a, b in zip(node.bounds[:-1], node.bounds[1:], strict=True):
                s = sure[a:b]
                if np.any(s):
                    lp_sure = node.lp[a:b][s]
                    certain += float(np.sum(np.exp(lp_sure)))
                    sure_parts.append((lp_sure, node.h[a:b][s], node.m[a:b][s]))
        live = ~sure
        live &= ~never
        kept = int(np.count_nonzero(live))
        if kept > cap:
            raise TooMany
        if sure_parts:
            collapsed.append((lev, np.concatenate([x[0] for x in sure_parts]),
                              np.concatenate([x[1] for x in sure_parts]),
                              np.concatenate([x[2] for x in sure_parts])))
        mask = np.packbits(live).tobytes()
        kid = node.kids.get(mask)
        nxt = kid.parents if kid is not None else (node.lp[live], node.h[live], node.m[live])
        heavy = Heavy(lev, *nxt, dropped, certain, collapsed, heavy.log_certain, heavy.log_dropped,
                      heavy.certain_delta, heavy.configs + kept)
        prev = (node, mask)
    if stage is not None:
        stage(heavy)
    return heavy


def _log_pmf_by_parent(pb: Any, c: np.ndarray, m: np.ndarray, log_a: float, log1m_a: float
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``log P[count = c_j]`` for every parent's ``m``: the pmf depends on (m, c) only, so it is tabulated once per
    distinct m. Returns the table and each parent's row in it (``table[rows]`` is parent by count)."""
    um, uinv = unique_counts(m)
    with np.errstate(divide="ignore"):
        return np.log(pmf_table(pb, c, um, log_a, log1m_a)), uinv


def _kept_children(child: np.ndarray, keep: np.ndarray, c: np.ndarray, h: np.ndarray, m: np.ndarray,
                   vl: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept children's log probabilities, heavy sums ``h[parent] + c vl`` and counts left ``m[parent] - c``, in
    row-major order, built from the kept entries only (the same operations as on the full grid, then masked)."""
    per_parent = np.count_nonzero(keep, axis=1)
    ck = np.broadcast_to(c, child.shape)[keep]
    return child[keep], np.repeat(h, per_parent) + ck * vl, np.repeat(m, per_parent) - ck


def enumerate_heavy(pb: Problem, *, stop_level: int, cap: int, log_prune: float, window_tol: float,
                    y: float = 1.0, stage: Callable[[Heavy], bool | None] | None = None) -> Heavy:
    """Enumerate heavy counts level by level from ``j`` down to ``stop_level`` (``pb.direction`` sets the event).

    ``T_l | T_{>l} ~ Bin(m, pi_l / pi(<= l))`` exactly, over a count window whose outside mass (binomial
    Chernoff, at most ``window_tol`` per side) is set aside, children with log probability below ``log_prune``
    set aside too. The event is ``{S > y}`` (FORWARD) or ``{S <= 1}`` (REVERSE; counts that already push the
    sum above 1 are not generated). After each level a configuration that is in the event whatever the light
    levels do is collapsed into the certain mass, and one that cannot be in it is removed (zero contribution);
    both tests carry relative margins 1e-9.

    ``stage(heavy)`` is called before each level and after the last; if it returns True the enumeration stops
    there. Raises :class:`TooMany` if a level would exceed ``cap`` live configurations.
    """
    if pb.direction == Direction.FORWARD:
        return _enumerate_forward(pb, stop_level=stop_level, cap=cap, log_prune=log_prune, window_tol=window_tol,
                                  y=y, stage=stage)
    v = pb.v
    heavy = root(pb)
    v0 = float(v[0])
    for lev in range(pb.j, stop_level - 1, -1):
        if stage is not None and stage(heavy):
            return heavy
        if heavy.logp.size == 0:
            heavy = replace(heavy, lstar=lev)
            continue
        log_a, log1m_a, vl = _level(pb, lev)
        m = heavy.m
        if vl > v0:  # counts pushing the sum above 1 leave the event (not generated)
            with np.errstate(over="ignore", invalid="ignore"):
                cm = np.floor(((1.0 + 1e-9) - heavy.h - m * v0) / (vl - v0) * (1.0 + 1e-12) + 1e-9)
            cmax = np.clip(np.nan_to_num(cm, nan=-1.0, posinf=1e18), -1, m).astype(np.int64)
        else:
            cmax = m.copy()
        lo, hi = window(int(m.min()), int(m.max()), log_a, log1m_a, window_tol)
        top = min(hi, int(cmax.max()))
        c = np.arange(lo, top + 1, dtype=np.int64) if top >= lo else np.zeros(0, dtype=np.int64)
        if c.size * m.size > 8 * cap:
            raise TooMany
        # mass of each parent outside the window (rigorous Chernoff bound): the lower side, and the upper side
        # only where the window cuts counts that could still be in the event
        low_t = log_lower_tail(np.full(m.shape, lo - 1), m, log_a, log1m_a)
        up_t = log_upper_tail(np.full(m.shape, hi + 1), m, log_a, log1m_a)
        up_t = np.where(cmax > hi, up_t, -np.inf)
        out = heavy.logp + np.logaddexp(up_t, low_t)
        dropped, certain, collapsed = heavy.dropped, heavy.certain, list(heavy.collapsed)
        log_dropped, log_certain, certain_delta = heavy.log_dropped, heavy.log_certain, heavy.certain_delta
        log_dropped = float(np.logaddexp(log_dropped, float(logsumexp(out, split_max=True)) if out.size else -math.inf))
        if c.size == 0:
            heavy = Heavy(lev, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), dropped, certain, collapsed,
                          log_certain, log_dropped, certain_delta, heavy.configs)
            continue
        step = m.size  # one chunk: the log-domain sums are taken over the level
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        kept = 0
        v_rest = float(v[lev - 1])
        ltab, uinv = _log_pmf_by_parent(pb, c, m, log_a, log1m_a)
        for start in range(0, m.size, step):
            sl = slice(start, start + step)
            mm = m[sl, None]
            child = ltab[uinv[sl]]  # a fresh copy (fancy indexing); adding in place (IEEE + commutes)
            child += heavy.logp[sl, None]
            valid = c[None, :] <= mm
            valid = (c[None, :] <= cmax[sl, None]) & valid
            keep = valid & (child >= log_prune)
            drop = valid & ~keep
            if np.any(drop):
                dl = child[drop]
                fin = np.isfinite(dl)
                extra = float(logsumexp(dl[fin], split_max=True)) if np.any(fin) else -math.inf
                if np.any(~fin):
                    extra = float(np.logaddexp(extra, math.log(ABS_FLOOR * int(np.sum(~fin)))))
                log_dropped = float(np.logaddexp(log_dropped, extra))
            # the kept children's heavy sums and counts left, h[parent] + c vl and m[parent] - c in row-major order,
            # built from the kept entries only (the same operations as on the full grid, then masked; issue 10)
            lp, h, m_new = _kept_children(child, keep, c, heavy.h[sl], m[sl], vl)
            # event {S <= 1}
            sure = (h + m_new * v_rest) * (1.0 + 1e-9) <= 1.0 - 1e-9
            never = h + m_new * v0 > (1.0 + 1e-9) * (1.0 + 1e-9)
            if np.any(sure):
                log_certain = float(np.logaddexp(log_certain, float(logsumexp(lp[sure], split_max=True))))
                mu_rest = pb.lower_law(lev).mu
                gap = np.maximum(1.0 - h[sure] - m_new[sure] * mu_rest, 0.0)
                certain_delta += float(np.sum(np.exp(lp[sure]) * gap))
            live = ~sure & ~never
            parts.append((lp[live], h[live], m_new[live]))
            kept += int(np.count_nonzero(live))
            if kept > cap:
                raise TooMany
        heavy = Heavy(lev, np.concatenate([x[0] for x in parts]), np.concatenate([x[1] for x in parts]),
                      np.concatenate([x[2] for x in parts]), dropped, certain, collapsed, log_certain, log_dropped,
                      certain_delta, heavy.configs + kept)
    if stage is not None:
        stage(heavy)
    return heavy


#: units of roundoff (2**-53, relative) of exp (4 ulp each), products and pairwise sums (depth <= 34) in two float
#: evaluations of one sum of ``exp`` of dropped children (:func:`enumerate_forward_upper`; the children's own
#: rounding and the row's prefix sums are added there)
_DROPPED_REL_ULPS = 128


def _unimodal_rows(t: np.ndarray) -> tuple[bool, np.ndarray]:
    """(every row of ``t`` rises to its first maximum and falls after it (``-inf`` allowed), that first maximum)."""
    top = np.argmax(t, axis=1)
    col = np.arange(1, t.shape[1])
    rising = col[None, :] <= top[:, None]  # the pair (i - 1, i) lies left of the maximum
    ok = np.where(rising, t[:, 1:] >= t[:, :-1], t[:, 1:] <= t[:, :-1])
    return bool(np.all(ok)), top


def _first_true(pred: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray,
                last: bool, guess: np.ndarray | None = None) -> np.ndarray:
    """Per entry, the first (``last=False``: ``pred`` false then true on ``[lo, hi]``, true at ``hi``) or the last
    (``last=True``: true then false, true at ``lo``) index where ``pred`` holds, by vectorized bisection.

    ``guess`` (``last=False`` only): a likely answer; ``pred`` is tried there and just below it first, which
    closes the bracket of every entry it is right for (any guess is safe: each probe only narrows the bracket)."""
    lo, hi = lo.copy(), hi.copy()
    if guess is not None:
        for shift in (0, 1):
            g = np.clip(guess - shift, lo, hi)
            ok = pred(g)
            lo, hi = np.where(ok, lo, np.maximum(lo, g + 1)), np.where(ok, np.minimum(hi, g), hi)
    while True:
        open_ = lo < hi
        if not np.any(open_):
            return lo
        mid = (lo + hi + 1) // 2 if last else (lo + hi) // 2
        ok = pred(mid) | ~open_
        if last:
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid - 1)
        else:
            lo, hi = np.where(ok, lo, mid + 1), np.where(ok, mid, hi)


def enumerate_forward_upper(pb: Problem, *, y: float, cap: int, log_prune: float,
                            window_tol: float) -> tuple[Heavy, float, float] | None:
    """:func:`enumerate_heavy` (FORWARD, ``stop_level=2``) for the upper end of the exact tail only (issue 10).

    Returns ``(heavy, dropped_lo, dropped_hi)``: ``heavy`` has the same live configurations (``logp``, ``h``,
    ``m``, in the same order) and the same certain mass as :func:`enumerate_heavy`'s, bit for bit (the same float
    operations on the same numbers), no collapsed configurations (the delta brackets need them, the upper end of
    eta does not), and ``dropped = dropped_hi``; ``[dropped_lo, dropped_hi]`` contains the float that
    :func:`enumerate_heavy` sums as its dropped mass (each float addition is monotone in its operands).

    Each count row ``log P[Bin(m, a) = c]`` over the window is unimodal, so the children a parent keeps
    (``logp + log pmf >= log_prune``) are an interval of counts, found by bisection with the same float test; the
    kept children are built from those intervals, without the parents x window grid. The mass of the dropped
    children (the rest of the grid) is taken from prefix and suffix sums of each row's ``exp``, whose difference
    from the grid's own float sum is bounded by a few hundred units of roundoff (plus an absolute allowance for
    subnormal terms). None if some row is not unimodal in floats (then the caller uses :func:`enumerate_heavy`).
    Raises :class:`TooMany` exactly where :func:`enumerate_heavy` does.
    """
    v = pb.v
    heavy = root(pb)
    v0 = float(v[0])
    margin = 1e-9 * abs(y) + 1e-300
    d_lo = d_hi = heavy.dropped
    certain = heavy.certain
    ulp = 2.0 ** -52
    for lev in range(pb.j, 1, -1):
        if heavy.logp.size == 0:
            heavy = replace(heavy, lstar=lev)
            continue
        log_a, log1m_a, vl = _level(pb, lev)
        m = heavy.m
        lo, hi = window(int(m.min()), int(m.max()), log_a, log1m_a, window_tol)
        c = np.arange(lo, hi + 1, dtype=np.int64) if hi >= lo else np.zeros(0, dtype=np.int64)
        if c.size * m.size > 8 * cap:
            raise TooMany
        low_t = log_lower_tail(np.full(m.shape, lo - 1), m, log_a, log1m_a)
        up_t = log_upper_tail(np.full(m.shape, hi + 1), m, log_a, log1m_a)
        outside = float(np.sum(np.exp(heavy.logp + np.logaddexp(up_t, low_t))))
        d_lo += outside
        d_hi += outside
        if c.size == 0:
            heavy = Heavy(lev, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), d_hi, certain)
            continue
        n_par, width = m.size, c.size
        um, uinv = unique_counts(m)
        with np.errstate(divide="ignore"):
            ltab = np.log(pmf_table(pb, c, um, log_a, log1m_a))
        ncol = np.clip(um - lo + 1, 0, width)  # counts c <= m (the others are not children)
        ltab = np.where(np.arange(width)[None, :] < ncol[:, None], ltab, -np.inf)
        unimodal, top = _unimodal_rows(ltab)
        if not unimodal:
            return None
        logp = heavy.logp
        row = uinv

        def keeps(k: np.ndarray) -> np.ndarray:
            out: np.ndarray = ltab[row, k] + logp >= log_prune  # the test of enumerate_heavy: child >= log_prune
            return out

        peak = top[row]
        some = keeps(peak)
        first = np.where(some, _first_true(keeps, np.zeros(n_par, dtype=np.int64), peak, last=False), width)
        last = np.where(some, _first_true(keeps, peak, np.maximum(ncol[row] - 1, peak), last=True), width - 1)
        per_parent = last - first + 1
        # A kept child of parent i at count c is sure (in the event whatever the light levels do) iff
        # S = h_i + c v_l + (m_i - c) v_0 > y + margin, and cannot be in it iff (h_i + c v_l + (m_i - c) v_rest)
        # (1 + 1e-9) < y - margin. Both sums grow by at least v_l - v_rest per count, far more than their float
        # rounding (checked), so along a parent's counts the sure ones are a suffix and the impossible ones a
        # prefix: found by bisection with enumerate_heavy's own float tests.
        v_rest = float(v[lev - 1])
        scale = float(heavy.h.max()) + hi * vl + float(m.max()) * v_rest + abs(y) + 1.0
        if not vl - v_rest > 64 * ulp * scale:
            return None

        def sure_at(k: np.ndarray) -> np.ndarray:
            ck = np.minimum(k, last) + lo
            out: np.ndarray = (heavy.h + ck * vl) + (m - ck).astype(float) * v0 > y + margin
            return out | (k > last)

        def possible_at(k: np.ndarray) -> np.ndarray:
            ck = np.minimum(k, last) + lo
            never = ((heavy.h + ck * vl) + (m - ck).astype(float) * v_rest) * (1.0 + 1e-9) < y - margin
            out: np.ndarray = ~never | (k > last)
            return out

        # where the sums cross their thresholds in exact arithmetic: the bisections' first probes
        base = heavy.h - lo * vl
        with np.errstate(over="ignore", invalid="ignore"):
            x_sure = np.floor((y + margin - (base + (m - lo) * v0)) / (vl - v0)) + 1.0
            x_live = np.ceil(((y - margin) / (1.0 + 1e-9) - (base + (m - lo) * v_rest)) / (vl - v_rest))
        sure_from = _first_true(sure_at, first, last + 1, last=False,
                                guess=np.clip(x_sure, -1.0, width + 1.0).astype(np.int64))
        live_from = _first_true(possible_at, first, last + 1, last=False,
                                guess=np.clip(x_live, -1.0, width + 1.0).astype(np.int64))
        n_live = sure_from - live_from
        n_sure = last + 1 - sure_from
        if int(n_live.sum()) > cap:
            raise TooMany
        flat_ltab = ltab.ravel()

        def children(frm: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """(log p, count c, offsets) of the children at columns ``frm .. frm + count - 1`` of each parent, in
            row-major order, as enumerate_heavy's boolean masks give them."""
            offs = np.cumsum(count) - count
            flat = np.arange(int(count.sum())) + np.repeat(row * width + frm - offs, count)
            lp = flat_ltab[flat] + np.repeat(logp, count)  # child = log pmf + log p(parent), one float addition
            return lp, flat % width + lo, offs

        lp_sure, _, sure_offs = children(sure_from, n_sure)
        lp, ck, _ = children(live_from, n_live)
        h = np.repeat(heavy.h, n_live) + ck * vl
        m_new = np.repeat(m, n_live) - ck
        # the dropped children: per parent, the row's mass left and right of its kept interval (prefix / suffix sums
        # of exp over the row), times exp(logp); -inf entries count ABS_FLOOR each, as in enumerate_heavy
        e = np.exp(ltab)
        left = np.zeros((e.shape[0], width + 1))
        np.cumsum(e, axis=1, out=left[:, 1:])
        right = _suffix(e)
        mass = np.exp(logp) * (left[row, first] + right[row, last + 1])
        n_drop = ncol[row] - per_parent
        n_inf = np.count_nonzero(np.isneginf(ltab) & (np.arange(width)[None, :] < ncol[:, None]), axis=1)[row]
        # The grid sums exp(fl(x)), x = log pmf + logp: the rounding of x moves exp(x) by at most u |x| exp(x),
        # which is <= u K exp(x) for |x| <= K and <= u K e**-K for |x| > K (|x| e**x falls there); K = 60 - log_prune
        # (the kept children are >= log_prune). The prefix sums add u per count. Twice the sum of the allowances.
        reach = 60.0 - log_prune
        rel = 2.0 * (_DROPPED_REL_ULPS + reach + width) * 2.0 ** -53
        far = reach * math.exp(-reach) * 2.0 ** -53
        step = max(1, 2_000_000 // width)  # enumerate_heavy's chunks of parents: the same partial sums
        for a in range(0, n_par, step):
            b = min(a + step, n_par)
            if int(n_drop[a:b].sum()) > 0:
                s = float(np.sum(mass[a:b]))
                k_inf = int(n_inf[a:b].sum())
                tiny = float(n_drop[a:b].sum()) * (4.0 * 5e-324 * (width + 4) + far)  # subnormal and far terms
                d_lo += max(s * (1.0 - rel) - tiny, 0.0) + ABS_FLOOR * k_inf
                d_hi += (s * (1.0 + rel) + tiny) + ABS_FLOOR * k_inf
            ka, kb = int(sure_offs[a]), int(sure_offs[b]) if b < n_par else lp_sure.size
            if kb > ka:
                certain += float(np.sum(np.exp(lp_sure[ka:kb])))
        heavy = Heavy(lev, lp, h, m_new, d_hi, certain)
    return heavy, d_lo, d_hi


# ---------------------------------------------------------------------------------------------------------------
# The binomial finish: levels {0, 1} left (the exact methods, both directions)
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FinishTail:
    """Sums over the live configurations of a :class:`BinomialFinish` of ``P[config] P[event | config]`` (without
    the certain or dropped masses and without the final relative margins)."""

    raw: float  # the event at the float threshold
    lower: float  # the strict event with the threshold moved against it by the slack: a lower end
    upper: float  # the non-strict event with the threshold moved towards it: an upper end
    outside: float = 0.0  # FORWARD: Chernoff mass outside the count window (to add to upper ends)


class BinomialFinish:
    """The last step of the exact methods of both directions: live configurations with only levels {0, 1} left.

    There ``Light_m = m v_0 + T_1 d`` (``d = v_1 - v_0``) with ``T_1 ~ Bin(m, a)``, ``a = pi_1 / (pi_0 + pi_1)``
    exactly, so the event is a threshold on ``T_1``: ``k = (y - H - m v_0) / d``, FORWARD ``{T_1 > k}``
    (``y = 1 - v_{l1}``), REVERSE ``{T_1 <= k}`` (``y = 1``), with the slack ``s = 1e-10 (1 + v_{l1} + H +
    m v_0) / d + 1e-12`` (``v_{l1} = 0`` REVERSE). :meth:`counts` turns ``k`` and ``s`` into the raw, lower and
    upper count thresholds of the event (docs/proofs/chernoff_tail.md "exact", reverse_tail.md (C2)).

    Evaluating the binomial tail at those counts is per direction, each keeping its own arithmetic (the numbers
    are those of the two finishes this unites, bit for bit): :class:`ForwardFinish` sums pmf tables over a count
    window (whose suffix sums the forward delta bracket needs too), :class:`ReverseFinish` evaluates boost's CDF
    and the exact ``E[(1 - V)_+]``. Both give :meth:`tail` -> :class:`FinishTail`.
    """

    direction: ClassVar[Direction]

    def __init__(self, pb: Problem, heavy: Heavy, *, y: float, offset: float) -> None:
        self.v0, self.v1 = float(pb.v[0]), float(pb.v[1])
        self.dv = self.v1 - self.v0
        self.log_a = float(pb.logpi[1] - pb.logle[1])  # a = pi_1 / (pi_0 + pi_1)
        self.log1m_a = float(pb.logpi[0] - pb.logle[1])
        self.heavy = heavy
        self.pc = np.exp(heavy.logp)
        self.m = heavy.m.astype(float)
        self.mw0 = self.m * self.v0
        self.k = (y - heavy.h - self.mw0) / self.dv
        self.s = THRESH_SLACK * (1.0 + offset + heavy.h + self.mw0) / self.dv + 1e-12

    def counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(raw, lower, upper) count thresholds of the event: FORWARD the first count of ``{T_1 > k}`` (raw), of
        ``{T_1 > k + s}`` (lower) and of ``{T_1 >= k - s}`` (upper), at least 0; REVERSE the last count of
        ``{T_1 < k}``, ``{T_1 < k - s}`` and ``{T_1 <= k + s}`` (-1: none)."""
        k, s = self.k, self.s
        with np.errstate(invalid="ignore", over="ignore"):
            if self.direction == Direction.FORWARD:
                return (np.maximum(np.floor(np.clip(k, -1.0, 2e18)) + 1, 0),
                        np.maximum(np.floor(np.clip(k + s, -1.0, 2e18)) + 1, 0),
                        np.maximum(np.ceil(np.clip(k - s, -1.0, 2e18)), 0))
            return (np.ceil(np.clip(k, -1.0, 2e18)) - 1,
                    np.ceil(np.clip(k - s, -1.0, 2e18)) - 1,
                    np.floor(np.clip(k + s, -1.0, 2e18)))

    def tail(self) -> FinishTail:
        """The sums of the event's probability over the live configurations at the three thresholds."""
        raise NotImplementedError


def _suffix(x: np.ndarray) -> np.ndarray:
    """Row-wise suffix sums ``out[:, i] = sum(x[:, i:])``, with a last column of zeros."""
    out = np.zeros((x.shape[0], x.shape[1] + 1))
    out[:, :-1] = np.cumsum(x[:, ::-1], axis=1)[:, ::-1]
    return out


class ForwardFinish(BinomialFinish):
    """FORWARD finish: the law of ``T_1`` as pmf tables over a count window ``[lo, hi]`` per distinct ``m``, with
    suffix sums of the pmf and of its first two centred moments (the delta bracket of :mod:`.tail` reads them)
    and the Chernoff mass outside the window; ``y = 1 - v1`` for the outlier's scaled value ``v1``."""

    direction = Direction.FORWARD

    def __init__(self, pb: Problem, heavy: Heavy, *, v1: float, window_tol: float) -> None:
        super().__init__(pb, heavy, y=1.0 - v1, offset=v1)
        self.mu, self.inv = unique_counts(heavy.m)
        lo, hi = window(int(self.mu.min()), int(self.mu.max()), self.log_a, self.log1m_a, window_tol)
        self.lo, self.hi = lo, hi
        if self.mu.size * (hi - lo + 2) > 40_000_000:
            raise ParameterError("exact method infeasible: the T_1 table would exceed 4e7 entries "
                                 f"(population={pb.population}, outlier_bits={pb.j}); use "
                                 "method='certified' or 'mc'")
        self.kvals = np.arange(lo, hi + 1)
        self.pmf = pmf_table(pb, self.kvals, self.mu, self.log_a, self.log1m_a)
        # suffix sums over k >= lo + i (last column 0) of pmf, and (on first use: the delta bracket of :mod:`.tail`
        # reads them, the upper end of eta does not) of pmf * (k - c), pmf * (k - c)**2 with the centre c = m a1
        # (centred to avoid cancellation in the conditional variance)
        self.centre = self.mu * math.exp(self.log_a)
        self.sf = _suffix(self.pmf)
        tails = np.logaddexp(log_upper_tail(np.full(self.mu.shape, hi + 1), self.mu, self.log_a, self.log1m_a),
                             log_lower_tail(np.full(self.mu.shape, lo - 1), self.mu, self.log_a, self.log1m_a))
        self.outside = np.exp(tails)  # per distinct m: Chernoff bound on the mass outside the window

    @functools.cached_property
    def s1(self) -> np.ndarray:
        """Suffix sums of ``pmf * (k - centre)`` (as :attr:`sf`)."""
        return _suffix(self.pmf * (self.kvals[None, :] - self.centre[:, None]))

    @functools.cached_property
    def s2(self) -> np.ndarray:
        """Suffix sums of ``pmf * (k - centre)**2`` (as :attr:`sf`)."""
        kc = self.kvals[None, :] - self.centre[:, None]
        return _suffix(self.pmf * kc * kc)

    def col(self, kmin: np.ndarray) -> np.ndarray:
        """The table column of the count ``kmin`` (clipped to the window; the last column is the empty sum)."""
        out: np.ndarray = np.clip(kmin - self.lo, 0, self.hi - self.lo + 1).astype(np.int64)
        return out

    def prob_ge(self, rows: np.ndarray, kmin: np.ndarray) -> np.ndarray:
        """``P[T_1 >= kmin, T_1 in window]`` for configuration rows ``rows``."""
        out: np.ndarray = self.sf[self.inv[rows], self.col(kmin)]
        return out

    def tail(self) -> FinishTail:
        rows = np.arange(self.pc.size)
        k_raw, k_lo, k_hi = self.counts()
        return FinishTail(raw=dot(self.pc, self.prob_ge(rows, k_raw)), lower=dot(self.pc, self.prob_ge(rows, k_lo)),
                          upper=dot(self.pc, self.prob_ge(rows, k_hi)),
                          outside=dot(self.pc, self.outside[self.inv]))


class ReverseFinish(BinomialFinish):
    """REVERSE finish (``y = 1``): boost's binomial CDF over the whole range (parameterized by the smaller of
    ``a``, ``1 - a``) and the exact ``E[(1 - V)_+]`` (:meth:`delta`)."""

    direction = Direction.REVERSE

    def __init__(self, pb: Problem, heavy: Heavy) -> None:
        super().__init__(pb, heavy, y=1.0, offset=0.0)
        self.a = math.exp(self.log_a)

    def cdf(self, x: np.ndarray, mm: np.ndarray) -> np.ndarray:
        """``P[Bin(mm, a) <= x]`` (0 for ``x < 0``)."""
        x = np.asarray(x, dtype=float)
        if self.log_a <= self.log1m_a:
            return np.where(x < 0, 0.0, binom_cdf(x, mm, self.a))
        return np.where(x < 0, 0.0, binom_sf(mm - x - 1, mm, math.exp(self.log1m_a)))

    def tail(self) -> FinishTail:
        if self.pc.size == 0:
            return FinishTail(0.0, 0.0, 0.0)
        k_raw, k_lo, _ = self.counts()
        with np.errstate(invalid="ignore", over="ignore"):
            lo = self.cdf(k_lo, self.m)
            raw = self.cdf(k_raw, self.m)
        return FinishTail(raw=float(self.pc @ raw), lower=float(self.pc @ lo), upper=self.upper())

    def upper(self) -> float:
        """:meth:`tail`'s upper end alone (one CDF evaluation instead of three)."""
        if self.pc.size == 0:
            return 0.0
        with np.errstate(invalid="ignore", over="ignore"):
            up = self.cdf(self.counts()[2], self.m) + ABS_FLOOR
        return float(self.pc @ up)

    def delta(self) -> tuple[float, float]:
        """(``sum P[config] E[(1 - V)_+ | config]``, its rounding allowance) over the live configurations, exactly:
        ``E[(A - T_1 d)_+] = A P[T_1 <= K] - d m a P[Bin(m - 1, a) <= K - 1]`` with ``A = 1 - H - m v_0`` and
        ``K = floor(A / d)``."""
        if self.pc.size == 0:
            return 0.0, 0.0
        big_a = 1.0 - self.heavy.h - self.mw0
        m = self.m
        with np.errstate(invalid="ignore", over="ignore"):
            kf = np.floor(np.clip(self.k, -1.0, 2e18))
            t1 = big_a * self.cdf(kf, m)
            t2 = self.dv * m * self.a * self.cdf(kf - 1, np.maximum(m - 1, 0))
        dl = np.maximum(t1 - t2, 0.0)
        return float(self.pc @ dl), float(self.pc @ (np.abs(t1) + np.abs(t2))) * 1e-12
