"""Exact single-bit (L = 1) theory of shuffled randomized response (seed 000 §3.1, §4).

n people, m of whom hold the bit 1; each bit is flipped with probability q (``p = 1 - q``) and the anonymized
output is the count s of reported ones::

    s ~ A_n(m) = Bin(m, p) + Bin(n - m, q)                    (seed 000 §3.1)

Contents:

* the pmf, cdf and survival function of A_n(m), exact in the log domain and vectorized over s
  (:func:`log_pmf`, :func:`log_cdf`, :func:`log_sf`);
* the paper's recursions (3.2), (3.3) and Proposition 3.1 (3.4) as functions;
* the paper's privacy ratio ``pi(s; m) = P[A_n(m) = s] / P[A_n(m+1) = s]`` — note the direction: the paper puts the
  collection with *fewer* ones in the numerator (seed 000 §3.1) — and the probability ratio
  ``rho_n(s; m) = P[A_n(m) = s] / P[A_n(m) = s - 1]`` (§3.1.2);
* the exact privacy profile of shuffled binary randomized response for neighbouring counts m and m+1, in both
  directions, as a :class:`TailResult` (``kind="exact"``), and its worst case over m.

Monotonicity. The paper's §3.1.2 claims (rho decreasing in s, increasing in m) are marked TODO there
(ERRATA 8). They do hold: A_n(m) is a sum of independent Bernoulli variables, hence log-concave (Newton's
inequalities / Hoggar 1974), so rho is non-increasing in s; and replacing a Ber(q) summand by Ber(p) raises the
likelihood-ratio order, which convolution with a log-concave law preserves (Shanthikumar & Yao), so rho is
non-decreasing in m. ``pi(s; m) = (q + p r)/(p + q r)`` with ``r = rho_{n-1}(s; m)`` (seed 000 §3.1.4) then
inherits both monotonicities. The tail routines below use "pi is non-increasing in s" to reduce the risky set to an
interval; ``scripts/single_bit_report.py`` and the tests also check it numerically over a grid.

Worst case over m: the paper's §4 argues for extreme ("maximal") collections pointwise in s. For the privacy
*profile* (delta, eta) the worst m is near the ends but **not** always m = 0 or n - 1 (the grid in
``docs/single_bit.md`` shows counterexamples), so :func:`single_bit_worst_tail` scans every m.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from .._errors import ParameterError
from .._validation import check_int, check_open_interval, check_positive_finite
from .result import TailResult

__all__ = [
    "DIRECTIONS",
    "log_cdf",
    "log_pmf",
    "log_privacy_ratio",
    "log_probability_ratio",
    "log_sf",
    "pmf",
    "pmf_by_prop_3_1",
    "privacy_ratio",
    "prop_3_1_next",
    "recursion_3_2",
    "recursion_3_3",
    "single_bit_tail",
    "single_bit_worst_tail",
]

DIRECTIONS = ("add", "remove", "both")
_NEG_INF = -math.inf
_CHUNK_ELEMS = 4_000_000


def _log_binom_pmf_all(size: int, prob: float) -> NDArray[np.float64]:
    """``log Bin(j; size, prob)`` for j = 0..size (exact to rounding)."""
    j = np.arange(size + 1, dtype=np.float64)
    return (gammaln(size + 1.0) - gammaln(j + 1.0) - gammaln(size - j + 1.0)
            + j * math.log(prob) + (size - j) * math.log1p(-prob))


def _lse_rows(a: NDArray[np.float64]) -> NDArray[np.float64]:
    m = np.max(a, axis=-1)
    fin = np.isfinite(m)
    sm = np.where(fin, m, 0.0)
    with np.errstate(under="ignore", divide="ignore"):
        out = np.log(np.sum(np.exp(a - sm[:, None]), axis=-1)) + sm
    return np.where(fin, out, m)


@dataclass(frozen=True)
class _TwoBinomial:
    """``X + Y`` with ``X ~ Bin(m1, p1)`` (the smaller) and ``Y ~ Bin(m2, p2)``; exact log pmf/cdf/sf.

    Every value is a sum over j of a discretely log-concave sequence in j whose second difference is at most
    ``-4/(m1+2)``; summing a window of ``20 sqrt(m1+2) + 2`` terms either side of its maximum drops terms that are
    below ``e**-800`` times the largest, so the relative truncation error is below ``(m1+1) e**-800``.
    """

    m1: int
    p1: float
    m2: int
    p2: float

    @classmethod
    def of(cls, n: int, m: int, q: float) -> _TwoBinomial:
        p = 1.0 - q
        if m <= n - m:
            return cls(m, p, n - m, q)
        return cls(n - m, q, m, p)

    @property
    def n(self) -> int:
        return self.m1 + self.m2

    def _arrays(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        cache = self.__dict__.get("_cache")
        if cache is None:
            lb1 = _log_binom_pmf_all(self.m1, self.p1)
            lb2 = _log_binom_pmf_all(self.m2, self.p2)
            lf2 = np.minimum(np.logaddexp.accumulate(lb2), 0.0)
            ls2 = np.minimum(np.logaddexp.accumulate(lb2[::-1])[::-1], 0.0)
            cache = (lb1, lb2, lf2, ls2)
            object.__setattr__(self, "_cache", cache)
        return cache

    def _g(self, kind: str, j: NDArray[np.int64], s: NDArray[np.int64]) -> NDArray[np.float64]:
        """Summand ``log B1(j) + log G2(s - j)`` with G2 = pmf / cdf / sf of Y (``-inf`` out of range)."""
        lb1, lb2, lf2, ls2 = self._arrays()
        x = s - j
        j_ok = (j >= 0) & (j <= self.m1)
        jj = np.clip(j, 0, self.m1)
        xx = np.clip(x, 0, self.m2)
        if kind == "pmf":
            second = np.where((x >= 0) & (x <= self.m2), lb2[xx], _NEG_INF)
        elif kind == "cdf":
            second = np.where(x < 0, _NEG_INF, np.where(x >= self.m2, 0.0, lf2[xx]))
        else:  # sf: P[Y >= x]
            second = np.where(x > self.m2, _NEG_INF, np.where(x <= 0, 0.0, ls2[xx]))
        return np.where(j_ok, lb1[jj], _NEG_INF) + second

    def _bounds(self, kind: str, s: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        if kind == "pmf":
            return np.maximum(0, s - self.m2), np.minimum(self.m1, s)
        if kind == "cdf":
            return np.zeros_like(s), np.minimum(self.m1, s)
        return np.maximum(0, s - self.m2), np.full_like(s, self.m1)

    def log_value(self, kind: str, s: ArrayLike) -> NDArray[np.float64]:
        s_arr = np.atleast_1d(np.asarray(s, dtype=np.int64))
        out = np.full(s_arr.shape, _NEG_INF)
        if kind == "cdf":
            out[s_arr >= self.n] = 0.0
            valid = (s_arr >= 0) & (s_arr < self.n)
        elif kind == "sf":
            out[s_arr <= 0] = 0.0
            valid = (s_arr > 0) & (s_arr <= self.n)
        else:
            valid = (s_arr >= 0) & (s_arr <= self.n)
        sv = s_arr[valid]
        if sv.size:
            out[valid] = self._sum(kind, sv)
        return out

    def _sum(self, kind: str, s: NDArray[np.int64]) -> NDArray[np.float64]:
        lo, hi = self._bounds(kind, s)
        # argmax of the concave summand: smallest j in [lo, hi] with g(j+1) - g(j) <= 0 (bisection, vectorized)
        a, b = lo.copy(), hi.copy()
        while True:
            active = a < b
            if not np.any(active):
                break
            mid = (a + b) // 2
            up = self._g(kind, mid + 1, s) > self._g(kind, mid, s)
            a = np.where(active & up, mid + 1, a)
            b = np.where(active & ~up, mid, b)
        jstar = a
        w = int(math.ceil(20.0 * math.sqrt(self.m1 + 2.0))) + 2
        start = np.maximum(lo, jstar - w)
        stop = np.minimum(hi, jstar + w)
        width = int(np.max(stop - start)) + 1
        out = np.empty(s.shape)
        chunk = max(1, _CHUNK_ELEMS // width)
        offs = np.arange(width)
        for c in range(0, s.size, chunk):
            sl = slice(c, c + chunk)
            jj = start[sl, None] + offs[None, :]
            g = self._g(kind, jj, s[sl, None])
            g = np.where(jj <= stop[sl, None], g, _NEG_INF)
            out[sl] = _lse_rows(g)
        return out


def _check_nmq(n: Any, m: Any, q: Any, *, m_max_offset: int = 0) -> tuple[int, int, float]:
    n = check_int("n", n, minimum=1)
    m = check_int("m", m, minimum=0, maximum=n - m_max_offset)
    q = check_open_interval("q", q, 0.0, 0.5)
    return n, m, q


def _as_int_array(name: str, s: ArrayLike) -> NDArray[np.int64]:
    arr = np.asarray(s)
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr)):
            raise ParameterError(f"{name} must be integer-valued; got {s!r}")
    return arr.astype(np.int64)


def log_pmf(s: ArrayLike, *, n: int, m: int, q: float) -> NDArray[np.float64]:
    """``log P[A_n(m) = s]`` for ``A_n(m) = Bin(m, p) + Bin(n - m, q)``, vectorized over s (``-inf`` off support).

    Exact convolution in the log domain over a window that provably holds all but ``e**-800`` of the mass
    (see :class:`_TwoBinomial`). Cost O(len(s) * sqrt(min(m, n - m))) after O(n) set-up.

    Args:
        s: integer(s) (any shape; values outside 0..n give ``-inf``).
        n: people, >= 1.
        m: people holding a 1, 0 <= m <= n.
        q: flip probability in (0, 0.5).

    Returns:
        Array of the same shape as s.

    References:
        seed 000 §3.1 (definition of A_n(m)).

    Example:
        >>> round(float(np.exp(log_pmf(1, n=2, m=1, q=0.25))), 6)  # p*p + q*q
        0.625
    """
    n, m, q = _check_nmq(n, m, q)
    s_arr = _as_int_array("s", s)
    return _TwoBinomial.of(n, m, q).log_value("pmf", s_arr.ravel()).reshape(s_arr.shape)


def pmf(s: ArrayLike, *, n: int, m: int, q: float) -> NDArray[np.float64]:
    """``P[A_n(m) = s]`` (``exp`` of :func:`log_pmf`)."""
    return np.exp(log_pmf(s, n=n, m=m, q=q))


def log_cdf(s: ArrayLike, *, n: int, m: int, q: float) -> NDArray[np.float64]:
    """``log P[A_n(m) <= s]``, exact in the log domain (accurate far into the lower tail)."""
    n, m, q = _check_nmq(n, m, q)
    s_arr = _as_int_array("s", s)
    return _TwoBinomial.of(n, m, q).log_value("cdf", s_arr.ravel()).reshape(s_arr.shape)


def log_sf(s: ArrayLike, *, n: int, m: int, q: float) -> NDArray[np.float64]:
    """``log P[A_n(m) >= s]`` (note: ``>=``), exact in the log domain."""
    n, m, q = _check_nmq(n, m, q)
    s_arr = _as_int_array("s", s)
    return _TwoBinomial.of(n, m, q).log_value("sf", s_arr.ravel()).reshape(s_arr.shape)


# ---------------------------------------------------------------------------------------------------------------
# the paper's recursions
# ---------------------------------------------------------------------------------------------------------------


def _check_prev(prev: ArrayLike) -> NDArray[Any]:
    arr = np.asarray(prev)
    if arr.ndim != 1 or arr.size < 1:
        raise ParameterError(f"prev must be a 1-d pmf array of length n >= 1; got shape {arr.shape}")
    return arr


def recursion_3_2(prev: ArrayLike, q: float | Fraction) -> NDArray[Any]:
    """Seed 000 eq. (3.2): ``P_{n,m}(s) = p P_{n-1,m-1}(s-1) + q P_{n-1,m-1}(s)`` for s = 0..n.

    Args:
        prev: the pmf of ``A_{n-1}(m-1)`` on 0..n-1 (floats, or ``Fraction`` objects for exact arithmetic).
        q: flip probability (float or Fraction).

    Returns:
        The pmf of ``A_n(m)`` on 0..n (same element type).

    Example:
        >>> recursion_3_2([1.0], 0.25).tolist()  # A_1(1) = Ber(p)
        [0.25, 0.75]
    """
    a = _check_prev(prev)
    p = 1 - q
    zero = a[:1] * 0
    return np.concatenate([zero, a]) * p + np.concatenate([a, zero]) * q


def recursion_3_3(prev: ArrayLike, q: float | Fraction) -> NDArray[Any]:
    """Seed 000 eq. (3.3): ``P_{n,m}(s) = q P_{n-1,m}(s-1) + p P_{n-1,m}(s)`` for s = 0..n.

    Args:
        prev: the pmf of ``A_{n-1}(m)`` on 0..n-1.
        q: flip probability.

    Returns:
        The pmf of ``A_n(m)`` on 0..n.

    Example:
        >>> recursion_3_3([1.0], 0.25).tolist()  # A_1(0) = Ber(q)
        [0.75, 0.25]
    """
    a = _check_prev(prev)
    p = 1 - q
    zero = a[:1] * 0
    return np.concatenate([zero, a]) * q + np.concatenate([a, zero]) * p


def prop_3_1_next(p_s: Any, p_s_minus_1: Any, *, n: int, m: int, s: int, q: Any) -> Any:
    """Seed 000 Prop. 3.1, eq. (3.4): ``P_{n,m}(s+1)`` from ``P_{n,m}(s)`` and ``P_{n,m}(s-1)``.

    ``(s+1) P(s+1) = {(m - s) p/q + (n - m - s) q/p} P(s) + (n - s + 1) P(s-1)``, for 0 <= s <= n-1
    (``P(-1) := 0``). Works with floats, ``Fraction`` or mpmath numbers. The three-term recurrence is exact
    algebra but numerically unstable in floating point past the mode; use it with exact arithmetic.

    Example:
        >>> from fractions import Fraction as F
        >>> prop_3_1_next(F(1, 4), 0, n=1, m=1, s=0, q=F(1, 4))  # A_1(1) = Ber(p): P(1) = p
        Fraction(3, 4)
    """
    n = check_int("n", n, minimum=1)
    m = check_int("m", m, minimum=0, maximum=n)
    s = check_int("s", s, minimum=0, maximum=n - 1)
    p = 1 - q
    coef = (m - s) * p / q + (n - m - s) * q / p
    return (coef * p_s + (n - s + 1) * p_s_minus_1) / (s + 1)


def pmf_by_prop_3_1(*, n: int, m: int, q: Any) -> list[Any]:
    """The whole pmf of ``A_n(m)`` from ``P(0) = q**m p**(n-m)`` by repeated use of (3.4) (exact with Fraction).

    Example:
        >>> from fractions import Fraction as F
        >>> pmf_by_prop_3_1(n=2, m=1, q=F(1, 4))
        [Fraction(3, 16), Fraction(5, 8), Fraction(3, 16)]
    """
    n = check_int("n", n, minimum=1)
    m = check_int("m", m, minimum=0, maximum=n)
    p = 1 - q
    out = [q**m * p ** (n - m)]
    prev = 0 * out[0]
    for s in range(n):
        nxt = prop_3_1_next(out[s], prev, n=n, m=m, s=s, q=q)
        prev = out[s]
        out.append(nxt)
    return out


# ---------------------------------------------------------------------------------------------------------------
# ratios
# ---------------------------------------------------------------------------------------------------------------


def log_probability_ratio(s: ArrayLike, *, n: int, m: int, q: float) -> NDArray[np.float64]:
    """``log rho_n(s; m) = log P[A_n(m) = s] - log P[A_n(m) = s-1]`` for 1 <= s <= n (seed 000 §3.1.2)."""
    n, m, q = _check_nmq(n, m, q)
    s_arr = _as_int_array("s", s)
    if np.any(s_arr < 1) or np.any(s_arr > n):
        raise ParameterError(f"s must be in [1, {n}]; got {s!r}")
    dist = _TwoBinomial.of(n, m, q)
    flat = s_arr.ravel()
    return (dist.log_value("pmf", flat) - dist.log_value("pmf", flat - 1)).reshape(s_arr.shape)


def _log_pi_from_prev(dist_prev: _TwoBinomial, s: NDArray[np.int64], q: float) -> NDArray[np.float64]:
    """``log pi(s; m)`` from ``A' = A_{n-1}(m)``: ``pi = (q a + p b)/(p a + q b)``, a = P'(s-1), b = P'(s)."""
    la = dist_prev.log_value("pmf", s - 1)
    lb = dist_prev.log_value("pmf", s)
    lq, lp = math.log(q), math.log1p(-q)
    return np.logaddexp(lq + la, lp + lb) - np.logaddexp(lp + la, lq + lb)


def log_privacy_ratio(s: ArrayLike, *, n: int, m: int, q: float) -> NDArray[np.float64]:
    """``log pi(s; m)`` with the paper's direction ``pi(s; m) = P[A_n(m) = s] / P[A_n(m+1) = s]`` (seed 000 §3.1).

    Computed through seed 000 §3.1.4: ``pi = (q a + p b) / (p a + q b)`` with a, b the pmf of ``A_{n-1}(m)`` at
    s-1 and s, so it is accurate even where both pmfs underflow.

    Args:
        s: integer(s) in 0..n.
        n: people >= 1; m: 0 <= m <= n-1; q: flip probability in (0, 0.5).

    Example:
        >>> round(float(np.exp(log_privacy_ratio(0, n=5, m=2, q=0.25))), 6)  # p/q at s = 0
        3.0
    """
    n, m, q = _check_nmq(n, m, q, m_max_offset=1)
    s_arr = _as_int_array("s", s)
    if np.any(s_arr < 0) or np.any(s_arr > n):
        raise ParameterError(f"s must be in [0, {n}]; got {s!r}")
    prev = _TwoBinomial.of(n - 1, m, q)
    return _log_pi_from_prev(prev, s_arr.ravel(), q).reshape(s_arr.shape)


def privacy_ratio(s: ArrayLike, *, n: int, m: int, q: float) -> NDArray[np.float64]:
    """``pi(s; m) = P[A_n(m) = s] / P[A_n(m+1) = s]`` (seed 000 §3.1); ``exp`` of :func:`log_privacy_ratio`."""
    return np.exp(log_privacy_ratio(s, n=n, m=m, q=q))


# ---------------------------------------------------------------------------------------------------------------
# exact privacy profile
# ---------------------------------------------------------------------------------------------------------------


def _first_true(pred: Any, lo: int, hi: int) -> int:
    """Smallest integer x in [lo, hi] with pred(x) True, for pred monotone False..True (hi if none before)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _log_sub(la: float, lb: float) -> float:
    """``log(e**la - e**lb)`` for la >= lb (``-inf`` when equal)."""
    if la == _NEG_INF or lb >= la:
        return _NEG_INF
    return la + math.log(-math.expm1(lb - la))


@dataclass(frozen=True)
class _DirectionTail:
    log_eta: float
    log_delta: float
    boundary: int  # remove: risky s <= boundary; add: risky s >= boundary


def _tail_direction(n: int, m: int, q: float, epsilon: float, direction: str) -> _DirectionTail:
    """One direction of the pair (A_n(m), A_n(m+1)); uses that log pi(s; m) is non-increasing in s."""
    prev = _TwoBinomial.of(n - 1, m, q)
    lq, lp = math.log(q), math.log1p(-q)

    def lpi(x: int) -> float:
        return float(_log_pi_from_prev(prev, np.array([x], dtype=np.int64), q)[0])

    def lf(x: int) -> float:
        return float(prev.log_value("cdf", np.array([x]))[0])

    def ls(x: int) -> float:
        return float(prev.log_value("sf", np.array([x]))[0])

    if direction == "remove":
        # numerator A_n(m) = A' + Ber(q); risky {s : log pi(s) > eps} = {0..b}
        b = _first_true(lambda x: lpi(x) <= epsilon, 0, n) - 1
        if b < 0:
            return _DirectionTail(_NEG_INF, _NEG_INF, b)
        log_f_num = float(np.logaddexp(lp + lf(b), lq + lf(b - 1)))  # P[A'+Ber(q) <= b]
        log_f_den = float(np.logaddexp(lq + lf(b), lp + lf(b - 1)))  # P[A'+Ber(p) <= b]
        return _DirectionTail(log_f_num, _log_sub(log_f_num, epsilon + log_f_den), b)
    # add: numerator A_n(m+1) = A' + Ber(p); risky {s : -log pi(s) > eps} = {b..n}
    b = _first_true(lambda x: -lpi(x) > epsilon, 0, n + 1)
    if b > n:
        return _DirectionTail(_NEG_INF, _NEG_INF, b)
    log_s_num = float(np.logaddexp(lp + ls(b - 1), lq + ls(b)))  # P[A'+Ber(p) >= b]
    log_s_den = float(np.logaddexp(lq + ls(b - 1), lp + ls(b)))  # P[A'+Ber(q) >= b]
    return _DirectionTail(log_s_num, _log_sub(log_s_num, epsilon + log_s_den), b)


def _exp(x: float) -> float:
    return math.exp(x) if x > -745.2 else 0.0


def single_bit_tail(*, n: int, m: int, q: float, epsilon: float, direction: str = "both") -> TailResult:
    """Exact ``eta(eps)`` and ``delta(eps)`` of shuffled binary randomized response for counts m vs m+1.

    Directions (the numerator distribution is the one the output is drawn from, as in seed 001 eq. 1.7):

    * ``"remove"``: ``eta = P_{A_n(m)}[pi(s; m) > e**eps]`` with the paper's ``pi = P_m / P_{m+1}``;
      ``delta = sum_s (P_m(s) - e**eps P_{m+1}(s))_+``.
    * ``"add"``: ``eta = P_{A_n(m+1)}[1/pi(s; m) > e**eps]``; ``delta = sum_s (P_{m+1}(s) - e**eps P_m(s))_+``.
    * ``"both"``: the larger of the two for each of eta and delta (``details`` has both).

    Because ``pi(s; m)`` is non-increasing in s (log-concavity; see the module docstring, also checked
    numerically), each risky set is an interval and eta, delta are two exact log-domain cdf evaluations —
    O(n) set-up plus O(sqrt(n) log n) per query: n = 1e6 takes a fraction of a second.

    Args:
        n: people, >= 1 (n = 1 is plain local randomized response).
        m: the smaller of the two neighbouring counts of ones, 0 <= m <= n - 1.
        q: flip probability in (0, 0.5).
        epsilon: > 0.
        direction: ``"add"``, ``"remove"`` or ``"both"``.

    Returns:
        A :class:`TailResult` with ``kind="exact"`` (``details["log_eta"]``/``["log_delta"]`` keep values that
        underflow a float).

    References:
        seed 000 §3.1 (A_n(m), pi), §3.1.2, §3.1.4; seed 001 eq. (1.7).

    Example:
        >>> r = single_bit_tail(n=1, m=0, q=0.25, epsilon=0.5)  # local RR: ratio 3 > e^0.5 w.p. p = 0.75
        >>> round(r.eta, 6), round(r.delta, 4)  # delta = p - e^0.5 q
        (0.75, 0.3378)
    """
    n = check_int("n", n, minimum=1)
    m = check_int("m", m, minimum=0, maximum=n - 1)
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = check_positive_finite("epsilon", epsilon)
    if direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}")
    dirs = ("add", "remove") if direction == "both" else (direction,)
    parts = {d: _tail_direction(n, m, q, epsilon, d) for d in dirs}
    log_eta = max(t.log_eta for t in parts.values())
    log_delta = max(t.log_delta for t in parts.values())
    eta, delta = _exp(log_eta), _exp(log_delta)
    details: dict[str, Any] = {
        "m": m, "direction": direction, "log_eta": log_eta if math.isfinite(log_eta) else None,
        "log_delta": log_delta if math.isfinite(log_delta) else None,
        "per_direction": {d: {"eta": _exp(t.log_eta), "delta": _exp(t.log_delta), "boundary_s": t.boundary}
                          for d, t in parts.items()},
        "uses": "pi(s; m) non-increasing in s (log-concavity; numerically checked)",
    }
    return TailResult(eta=eta, eta_lower=eta, eta_upper=eta, method="exact", kind="exact", epsilon=epsilon, q=q,
                      bits=1, population=n, reports=1, outlier_bits=1, delta=delta, delta_lower=delta,
                      delta_upper=delta, details=details)


def single_bit_worst_tail(*, n: int, q: float, epsilon: float, ms: ArrayLike | None = None,
                          max_scan: int = 20_000) -> TailResult:
    """Worst ``eta`` and worst ``delta`` over neighbouring counts (m, m+1), both directions, by scanning m.

    The extremes m = 0 / n-1 are *not* always the worst (counterexamples in ``docs/single_bit.md``), so no
    "maximal collection" shortcut is used: by default every m = 0..n-1 is scanned (O(n^2) overall; refused for
    n > ``max_scan``). Pass ``ms`` to scan a subset; the result then says it is the worst over that subset only.
    By the symmetry ``n - A_n(m) ~ A_n(n - m)``, the pair (m, m+1) in one direction equals (n-1-m, n-m) in the
    other, so scanning both directions over all m double-counts harmlessly.

    Returns:
        A :class:`TailResult` (``kind="exact"`` over the scanned m) with ``details["argmax_m_eta"]``,
        ``details["argmax_m_delta"]`` and ``details["scanned"]``.

    Example:
        >>> r = single_bit_worst_tail(n=20, q=0.2, epsilon=0.5)
        >>> r.details["argmax_m_delta"], round(r.delta, 6)
        (1, 0.024494)
    """
    n = check_int("n", n, minimum=1)
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = check_positive_finite("epsilon", epsilon)
    max_scan = check_int("max_scan", max_scan, minimum=1)
    if ms is None:
        if n > max_scan:
            raise ParameterError(f"n must be <= max_scan = {max_scan} to scan every m; got {n} (pass ms to scan a "
                                 "subset)")
        m_list = list(range(n))
        scanned = "all m = 0..n-1"
    else:
        m_list = sorted({check_int("ms", int(v), minimum=0, maximum=n - 1) for v in np.atleast_1d(ms)})
        if not m_list:
            raise ParameterError("ms must contain at least one m in [0, n-1]; got an empty list")
        scanned = f"subset of {len(m_list)} values of m (not a worst case over all m)"
    best_eta = (_NEG_INF, -1)
    best_delta = (_NEG_INF, -1)
    for m in m_list:
        for d in ("add", "remove"):
            t = _tail_direction(n, m, q, epsilon, d)
            # strict improvement beyond rounding, so ties keep the smallest m
            if t.log_eta > best_eta[0] + 1e-12:
                best_eta = (t.log_eta, m)
            if t.log_delta > best_delta[0] + 1e-12:
                best_delta = (t.log_delta, m)
    eta, delta = _exp(best_eta[0]), _exp(best_delta[0])
    details = {"argmax_m_eta": best_eta[1], "argmax_m_delta": best_delta[1], "scanned": scanned,
               "log_eta": best_eta[0] if math.isfinite(best_eta[0]) else None,
               "log_delta": best_delta[0] if math.isfinite(best_delta[0]) else None}
    return TailResult(eta=eta, eta_lower=eta, eta_upper=eta, method="exact-scan", kind="exact", epsilon=epsilon,
                      q=q, bits=1, population=n, reports=1, outlier_bits=1, delta=delta, delta_lower=delta,
                      delta_upper=delta, details=details)
