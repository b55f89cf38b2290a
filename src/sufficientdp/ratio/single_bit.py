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
``docs/single_bit.md`` shows counterexamples), so :func:`worst_over_crowds` covers every m — all n pairs at
once in O(n) (a tilted trapezoid rule with a per-pair error bracket; blocks of m proved below the worst by a
rigorous bound are skipped; see its docstring) — and :func:`single_bit_worst_tail` is a thin wrapper over it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._errors import ParameterError
from .._frozen import freeze, thaw
from .._numerics.blas import one_blas_thread
from .._numerics.logspace import log_sub_exp, logsumexp
from .._numerics.search import Bracket, Midpoint, bisect_many, search, verdict
from .._validation import (
    check_int,
    check_nonnegative_finite,
    check_open_interval,
    check_population,
    check_positive_finite,
    renamed_params,
)
from ..loss.result import Kind, TailResult, check_choice

__all__ = [
    "DIRECTIONS",
    "WorstOverCrowds",
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
    "worst_over_crowds",
]

#: The directions of the pair (A_n(m), A_n(m+1)): the changed person holds 1 ("add") or 0 ("remove") in the
#: collection the output is drawn from, or the worse of the two ("both"). Not the outlier's side of
#: :class:`~sufficientdp.loss.result.Direction` (the two agree only at m = 0; see its docstring).
DIRECTIONS = ("add", "remove", "both")
_NEG_INF = -math.inf
_CHUNK_ELEMS = 4_000_000
#: Most people one binomial of the exact evaluation holds (its log pmf, cdf and sf are arrays of this length, 0.4 GB
#: each): beyond it the evaluation is refused instead of allocating (a crowd of 10**10 asked for 37 GiB).
MAX_TABLE_PEOPLE = 5 * 10**7


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
            # (scipy.special, imported here: the contour scan of worst_over_crowds never needs it; issue 10)
            from .._numerics.binomial import log_binom_pmf_all

            if max(self.m1, self.m2) > MAX_TABLE_PEOPLE:
                raise ParameterError(
                    f"population: the exact single-bit evaluation at N = {self.n} needs binomial tables of "
                    f"{max(self.m1, self.m2)} entries (at most {MAX_TABLE_PEOPLE}); give a smaller population")
            lb1 = log_binom_pmf_all(self.m1, self.p1)
            lb2 = log_binom_pmf_all(self.m2, self.p2)
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
        # (the bracket (lo - 1, hi]: False is taken at lo - 1, the end below the range; enough probes to close it)
        def past_top(j: NDArray[np.int64]) -> NDArray[np.bool_]:
            return np.asarray((j >= lo) & (self._g(kind, j + 1, s) <= self._g(kind, j, s)))

        _, jstar = bisect_many(past_top, lo - 1, hi, probes=int(np.max(hi - lo + 1)).bit_length(), integer=True)
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
            out[sl] = logsumexp(g, axis=-1)
        return out


def _check_nmq(n: Any, m: Any, q: Any, *, m_max_offset: int = 0) -> tuple[int, int, float]:
    n = check_int("population", n, minimum=1)
    m = check_int("m", m, minimum=0, maximum=n - m_max_offset)
    q = check_open_interval("q", q, 0.0, 0.5)
    return n, m, q


def _as_int_array(name: str, s: ArrayLike) -> NDArray[np.int64]:
    arr = np.asarray(s)
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr)):
            raise ParameterError(f"{name} must be integer-valued; got {s!r}")
    return arr.astype(np.int64)


@renamed_params({"n": "population"})
def log_pmf(s: ArrayLike, *, population: int, m: int, q: float) -> NDArray[np.float64]:
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

    Examples:
        >>> round(float(np.exp(log_pmf(1, population=2, m=1, q=0.25))), 6)  # p*p + q*q
        0.625
    """
    n = population  # A_n(m): n people
    n, m, q = _check_nmq(n, m, q)
    s_arr = _as_int_array("s", s)
    return _TwoBinomial.of(n, m, q).log_value("pmf", s_arr.ravel()).reshape(s_arr.shape)


@renamed_params({"n": "population"})
def pmf(s: ArrayLike, *, population: int, m: int, q: float) -> NDArray[np.float64]:
    """``P[A_n(m) = s]`` (``exp`` of :func:`log_pmf`)."""
    n = population  # A_n(m): n people
    return np.exp(log_pmf(s, population=n, m=m, q=q))


@renamed_params({"n": "population"})
def log_cdf(s: ArrayLike, *, population: int, m: int, q: float) -> NDArray[np.float64]:
    """``log P[A_n(m) <= s]``, exact in the log domain (accurate far into the lower tail)."""
    n = population  # A_n(m): n people
    n, m, q = _check_nmq(n, m, q)
    s_arr = _as_int_array("s", s)
    return _TwoBinomial.of(n, m, q).log_value("cdf", s_arr.ravel()).reshape(s_arr.shape)


@renamed_params({"n": "population"})
def log_sf(s: ArrayLike, *, population: int, m: int, q: float) -> NDArray[np.float64]:
    """``log P[A_n(m) >= s]`` (note: ``>=``), exact in the log domain."""
    n = population  # A_n(m): n people
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

    Examples:
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

    Examples:
        >>> recursion_3_3([1.0], 0.25).tolist()  # A_1(0) = Ber(q)
        [0.75, 0.25]
    """
    a = _check_prev(prev)
    p = 1 - q
    zero = a[:1] * 0
    return np.concatenate([zero, a]) * q + np.concatenate([a, zero]) * p


@renamed_params({"n": "population"})
def prop_3_1_next(p_s: Any, p_s_minus_1: Any, *, population: int, m: int, s: int, q: Any) -> Any:
    """Seed 000 Prop. 3.1, eq. (3.4): ``P_{n,m}(s+1)`` from ``P_{n,m}(s)`` and ``P_{n,m}(s-1)``.

    ``(s+1) P(s+1) = {(m - s) p/q + (n - m - s) q/p} P(s) + (n - s + 1) P(s-1)``, for 0 <= s <= n-1
    (``P(-1) := 0``). Works with floats, ``Fraction`` or mpmath numbers. The three-term recurrence is exact
    algebra but numerically unstable in floating point past the mode; use it with exact arithmetic.

    Examples:
        >>> from fractions import Fraction as F
        >>> prop_3_1_next(F(1, 4), 0, population=1, m=1, s=0, q=F(1, 4))  # A_1(1) = Ber(p): P(1) = p
        Fraction(3, 4)
    """
    n = population  # A_n(m): n people
    n = check_int("population", n, minimum=1)
    m = check_int("m", m, minimum=0, maximum=n)
    s = check_int("s", s, minimum=0, maximum=n - 1)
    p = 1 - q
    coef = (m - s) * p / q + (n - m - s) * q / p
    return (coef * p_s + (n - s + 1) * p_s_minus_1) / (s + 1)


@renamed_params({"n": "population"})
def pmf_by_prop_3_1(*, population: int, m: int, q: Any) -> list[Any]:
    """The whole pmf of ``A_n(m)`` from ``P(0) = q**m p**(n-m)`` by repeated use of (3.4) (exact with Fraction).

    Examples:
        >>> from fractions import Fraction as F
        >>> pmf_by_prop_3_1(population=2, m=1, q=F(1, 4))
        [Fraction(3, 16), Fraction(5, 8), Fraction(3, 16)]
    """
    n = population  # A_n(m): n people
    n = check_int("population", n, minimum=1)
    m = check_int("m", m, minimum=0, maximum=n)
    p = 1 - q
    out = [q**m * p ** (n - m)]
    prev = 0 * out[0]
    for s in range(n):
        nxt = prop_3_1_next(out[s], prev, population=n, m=m, s=s, q=q)
        prev = out[s]
        out.append(nxt)
    return out


# ---------------------------------------------------------------------------------------------------------------
# ratios
# ---------------------------------------------------------------------------------------------------------------


@renamed_params({"n": "population"})
def log_probability_ratio(s: ArrayLike, *, population: int, m: int, q: float) -> NDArray[np.float64]:
    """``log rho_n(s; m) = log P[A_n(m) = s] - log P[A_n(m) = s-1]`` for 1 <= s <= n (seed 000 §3.1.2)."""
    n = population  # A_n(m): n people
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


@renamed_params({"n": "population"})
def log_privacy_ratio(s: ArrayLike, *, population: int, m: int, q: float) -> NDArray[np.float64]:
    """``log pi(s; m)`` with the paper's direction ``pi(s; m) = P[A_n(m) = s] / P[A_n(m+1) = s]`` (seed 000 §3.1).

    Computed through seed 000 §3.1.4: ``pi = (q a + p b) / (p a + q b)`` with a, b the pmf of ``A_{n-1}(m)`` at
    s-1 and s, so it is accurate even where both pmfs underflow.

    Args:
        s: integer(s) in 0..n.
        n: people >= 1; m: 0 <= m <= n-1; q: flip probability in (0, 0.5).

    Examples:
        >>> round(float(np.exp(log_privacy_ratio(0, population=5, m=2, q=0.25))), 6)  # p/q at s = 0
        3.0
    """
    n = population  # A_n(m): n people
    n, m, q = _check_nmq(n, m, q, m_max_offset=1)
    s_arr = _as_int_array("s", s)
    if np.any(s_arr < 0) or np.any(s_arr > n):
        raise ParameterError(f"s must be in [0, {n}]; got {s!r}")
    prev = _TwoBinomial.of(n - 1, m, q)
    return _log_pi_from_prev(prev, s_arr.ravel(), q).reshape(s_arr.shape)


@renamed_params({"n": "population"})
def privacy_ratio(s: ArrayLike, *, population: int, m: int, q: float) -> NDArray[np.float64]:
    """``pi(s; m) = P[A_n(m) = s] / P[A_n(m+1) = s]`` (seed 000 §3.1); ``exp`` of :func:`log_privacy_ratio`."""
    n = population  # A_n(m): n people
    return np.exp(log_privacy_ratio(s, population=n, m=m, q=q))


# ---------------------------------------------------------------------------------------------------------------
# exact privacy profile
# ---------------------------------------------------------------------------------------------------------------


def _first_true(pred: Any, lo: int, hi: int) -> int:
    """Smallest integer x in [lo, hi] with pred(x) True, for pred monotone False..True (hi if none before)."""
    # the bracket (lo - 1, hi]: probes the upper middle of it, (lo + hi) // 2; ends within bit_length(width) probes
    end = search(verdict(lambda x: pred(int(x))), Bracket(fail=lo - 1, ok=hi), Midpoint("integer-upper"),
                 max_probes=max(hi - lo + 1, 0).bit_length())
    return int(end.fail) + 1


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
        return _DirectionTail(log_f_num, log_sub_exp(log_f_num, epsilon + log_f_den), b)
    # add: numerator A_n(m+1) = A' + Ber(p); risky {s : -log pi(s) > eps} = {b..n}
    b = _first_true(lambda x: -lpi(x) > epsilon, 0, n + 1)
    if b > n:
        return _DirectionTail(_NEG_INF, _NEG_INF, b)
    log_s_num = float(np.logaddexp(lp + ls(b - 1), lq + ls(b)))  # P[A'+Ber(p) >= b]
    log_s_den = float(np.logaddexp(lq + ls(b - 1), lp + ls(b)))  # P[A'+Ber(q) >= b]
    return _DirectionTail(log_s_num, log_sub_exp(log_s_num, epsilon + log_s_den), b)


def _exp(x: float) -> float:
    return math.exp(x) if x > -745.2 else 0.0


def single_bit_tail(*, population: int | None = None, m: int, q: float, epsilon: float, direction: str = "both",
                    n: int | None = None) -> TailResult:
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
        population: n, the people, >= 1 (n = 1 is plain local randomized response); required (``n``, its former
            name, is deprecated).
        m: the smaller of the two neighbouring counts of ones, 0 <= m <= n - 1.
        q: flip probability in (0, 0.5).
        epsilon: > 0.
        direction: ``"add"``, ``"remove"`` or ``"both"``.

    Returns:
        A :class:`TailResult` with ``kind="exact"`` (``details["log_eta"]``/``["log_delta"]`` keep values that
        underflow a float).

    References:
        seed 000 §3.1 (A_n(m), pi), §3.1.2, §3.1.4; seed 001 eq. (1.7).

    Examples:
        >>> r = single_bit_tail(population=1, m=0, q=0.25, epsilon=0.5)  # local RR: ratio 3 > e^0.5 w.p. p = 0.75
        >>> round(r.eta, 6), round(r.delta, 4)  # delta = p - e^0.5 q
        (0.75, 0.3378)
    """
    n = check_population(population, n)
    m = check_int("m", m, minimum=0, maximum=n - 1)
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = check_positive_finite("epsilon", epsilon)
    direction = check_choice("direction", direction, DIRECTIONS)
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


def single_bit_worst_tail(*, population: int | None = None, q: float, epsilon: float, ms: ArrayLike | None = None,
                          max_scan: int = 1_000_000, n: int | None = None) -> TailResult:
    """Worst ``eta`` and worst ``delta`` over neighbouring counts (m, m+1), both directions, over every m.

    The extremes m = 0 / n-1 are *not* always the worst (counterexamples in ``docs/single_bit.md``), so no
    "maximal collection" shortcut is used: every pair is evaluated by :func:`worst_over_crowds` (O(n) overall;
    refused for n > ``max_scan``, default 10**6). Pass ``ms`` to evaluate a subset (both directions at each given
    m); the result then says it is the worst over that subset only.

    Returns:
        A :class:`TailResult` (``kind="exact"`` over the evaluated pairs; ``eta_lower``/``eta_upper`` and
        ``delta_lower``/``delta_upper`` are the rounding bracket of :func:`worst_over_crowds`) with
        ``details["argmax_m_eta"]``, ``details["argmax_m_delta"]`` (the representative m: the add pair at m is the
        remove pair at n-1-m), ``details["argmax_direction_eta"]`` / ``["argmax_direction_delta"]`` and
        ``details["scanned"]``.

    Args:
        population: n, the people, >= 1; required (``n``, its former name, is deprecated).
        q: flip probability in (0, 0.5).
        epsilon: > 0.
        ms: optional subset of m in [0, n-1].
        max_scan: largest n for a full scan.

    Examples:
        >>> r = single_bit_worst_tail(population=20, q=0.2, epsilon=0.5)
        >>> r.details["argmax_m_delta"], round(r.delta, 6)
        (1, 0.024494)
    """
    n = check_population(population, n)
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = check_positive_finite("epsilon", epsilon)
    max_scan = check_int("max_scan", max_scan, minimum=1)
    if ms is None:
        if n > max_scan:
            raise ParameterError(f"population must be <= max_scan = {max_scan} to scan every m; got {n} (pass ms "
                                 "to scan a subset)")
        m_arr = np.arange(n, dtype=np.int64)
        scanned = "all m = 0..n-1"
    else:
        m_list = sorted({check_int("ms", int(v), minimum=0, maximum=n - 1) for v in np.atleast_1d(ms)})
        if not m_list:
            raise ParameterError("ms must contain at least one m in [0, n-1]; got an empty list")
        # both directions at each m: the add pair at m is the remove pair at n - 1 - m
        m_arr = np.unique(np.array(m_list + [n - 1 - m for m in m_list], dtype=np.int64))
        scanned = ("all m = 0..n-1" if len(m_list) == n else
                   f"subset of {len(m_list)} values of m (not a worst case over all m)")
    w = _worst_result(n, q, epsilon, _scan_all(n, q, epsilon) if ms is None else _remove_pairs(n, q, epsilon, m_arr))
    details = {"argmax_m_eta": w.worst_m_eta, "argmax_m_delta": w.worst_m_delta,
               "argmax_direction_eta": w.worst_direction_eta, "argmax_direction_delta": w.worst_direction_delta,
               "scanned": scanned, "log_eta": w.log_eta, "log_delta": w.log_delta, **w.details}
    return TailResult(eta=w.eta, eta_lower=w.eta_lower, eta_upper=w.eta_upper, method="exact-scan", kind="exact",
                      epsilon=epsilon, q=q, bits=1, population=n, reports=1, outlier_bits=1, delta=w.delta,
                      delta_lower=w.delta_lower, delta_upper=w.delta_upper, details=details)

def worst_delta_upper(*, population: int, q: float, epsilon: float) -> float | None:
    """``single_bit_worst_tail(population=..., q=..., epsilon=...).delta_upper`` (validated parameters, population
    at most 10**6), without what only eta needs: the scan skips every block whose delta bound (post-processing,
    :func:`_log_delta_upper`) is below the level, without the eta bounds on intervals. The evaluated blocks, and so
    the worst delta and its upper end, are those of the full scan (432 configurations compared, n = 10**3..10**6;
    tests/ratio/test_single_bit_delta_only.py); about 3.5 times faster. The larger-crowds bound at L = 1 needs only
    this (:func:`sufficientdp.ratio.proven.single_bit_larger_crowds`)."""
    return _worst_result(population, q, epsilon, _scan_all(population, q, epsilon, delta_only=True)).delta_upper


# ---------------------------------------------------------------------------------------------------------------
# worst case over every crowd: all m at once
# ---------------------------------------------------------------------------------------------------------------

_U = 2.0**-53
#: Half-width of the window of s searched for the cutoff around the tilted mode (Darroch: within 1 of the mean).
_WIN = 2
#: A common tilt is pushed at least this many tilted standard deviations below 1 (keeps 1/(1 - z) tame).
_KAPPA = 3.0
#: Aliasing and dropped-node terms are aimed below ``e**_LOG_TARGET`` of the value (then bounded, not assumed).
_LOG_TARGET = -50.0
#: The same for the cdf values behind the eta bounds of the pruned scan (an upper bound with that much slack).
_BOUND_LOG_TARGET = -12.0
#: Per-pair relative bracket half-width above which a pair is recomputed with twice the nodes; a recomputed pair
#: is accepted up to _ACCEPT_REL (its width is then rounding in a delta that is a small difference, which more
#: nodes do not change), else it goes to the slow exact path.
_MAX_REL = 1e-6
_ACCEPT_REL = 1e-3
#: Relative allowance given to a pair computed by the slow exact path (``_tail_direction``) in a worst-case scan.
_SLOW_REL = 1e-7
_ROWS = 16_384
_CELLS = 1 << 21


@dataclass(frozen=True, slots=True, kw_only=True)
class WorstOverCrowds:
    """Exact worst-case ``eta(epsilon)`` and ``delta(epsilon)`` of shuffled binary RR over every neighbouring pair.

    Neighbours: one person's bit differs; the other ``population - 1`` people hold ``m`` ones, for every
    ``m = 0..population-1``; both directions. ``"remove"`` is the pair ``(A_n(m), A_n(m+1))`` (the output is drawn
    from the collection where the changed person holds 0; loss ``log pi(s; m)``), ``"add"`` the reverse
    (``(A_n(m+1), A_n(m))``). By the mirror symmetry the add pair at ``m`` *is* the remove pair at
    ``n - 1 - m``; the arg-max is reported as the representative with the smaller ``m``.

    Attributes:
        population, q, epsilon: the configuration.
        eta, delta: the worst values (``kind="exact"``: each pair's value to floating-point accuracy, maximised
            over every pair).
        eta_lower, eta_upper, delta_lower, delta_upper: a bracket on the worst value that holds under the
            floating-point error model of :func:`worst_over_crowds` (every pair's own bracket, maximised). It also
            covers a cutoff that rounding cannot decide (``eta`` jumps there).
        log_eta, log_delta: natural logs of ``eta`` / ``delta`` (kept when the values underflow a float; None
            when the value is exactly 0, i.e. ``epsilon >= log(p/q)``).
        worst_m_eta, worst_direction_eta: the pair attaining ``eta`` (``-1`` / ``""`` when it is 0); ties keep
            the smallest ``m``.
        worst_m_delta, worst_direction_delta: likewise for ``delta``.
        kind: ``Kind.EXACT`` (a :class:`~sufficientdp.loss.result.Kind`, equal to ``"exact"``).
        method: ``"tilted-contour"``.
        details: extras, read-only (``to_dict`` gives plain JSON): the output cutoff ``s`` of each arg-max pair, pairs evaluated and pairs
            skipped (``pairs_bounded``: proved below the worst, their upper ends enter ``*_upper``), the largest
            relative bracket half-width of any evaluated pair, pairs recomputed by the slow exact path, node counts.
    """

    population: int
    q: float
    epsilon: float
    eta: float
    eta_lower: float
    eta_upper: float
    delta: float
    delta_lower: float
    delta_upper: float
    log_eta: float | None
    log_delta: float | None
    worst_m_eta: int
    worst_direction_eta: str
    worst_m_delta: int
    worst_direction_delta: str
    kind: Kind = Kind.EXACT
    method: str = "tilted-contour"
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind != Kind.EXACT:
            raise ParameterError(f"kind must be {Kind.EXACT.value!r}; got {self.kind!r}")
        object.__setattr__(self, "kind", Kind.EXACT)
        object.__setattr__(self, "details", freeze(self.details))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        d = {f: thaw(getattr(self, f)) for f in self.__dataclass_fields__}
        d["kind"] = str(self.kind)
        return d


@dataclass(frozen=True, slots=True)
class _Pairs:
    """Remove-direction values of the pairs ``(A_n(m), A_n(m+1))`` for an array of m (all logs; -inf for 0)."""

    m: NDArray[np.int64]
    cutoff: NDArray[np.int64]
    log_eta: NDArray[np.float64]
    log_eta_lo: NDArray[np.float64]
    log_eta_hi: NDArray[np.float64]
    log_delta: NDArray[np.float64]
    log_delta_lo: NDArray[np.float64]
    log_delta_hi: NDArray[np.float64]
    rel: float  # largest relative half-width of a pair's bracket (contour pairs)
    slow: int  # pairs computed by the slow exact path
    undecided: int  # pairs whose cutoff rounding cannot decide (eta bracketed across it)
    nodes: tuple[int, int]  # (min, max) number of contour nodes used per pair
    bounded: int = 0  # pairs not evaluated: proved below the worst (values -inf, log_*_hi a rigorous upper bound)


def _log_bernstein(a: NDArray[np.float64], var: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log`` of Bernstein's bound ``P[S - ES >= a] <= exp(-a**2 / (2 (var + a/3)))`` (summands in [0, 1]); 0 if a <= 0."""
    a = np.maximum(a, 0.0)
    return -(a * a) / (2.0 * (var + a / 3.0))


def _tilted(p: float, q: float, r: float, mf: NDArray[np.float64], n1: int
            ) -> tuple[float, float, float, float, NDArray[np.float64], NDArray[np.float64]]:
    """The law of ``A' = Bin(m, p) + Bin(n1 - m, q)`` tilted by ``r**s``: ``Bin(m, pr) + Bin(n1 - m, qr)``."""
    pr = p * r / (q + p * r)
    qr = q * r / (p + q * r)
    v1 = pr * (q / (q + p * r))  # pr (1 - pr)
    v2 = qr * (p / (p + q * r))
    return pr, qr, v1, v2, mf * pr + (n1 - mf) * qr, mf * v1 + (n1 - mf) * v2


def _log_exact(x: Fraction) -> float:
    """``log x`` for a positive rational, to a few ulps relative (``log1p`` of the exactly formed ``x - 1``)."""
    y = float(x - 1)
    return math.log1p(y) + float((x - 1 - Fraction(y)) / x)


def _block_constants(q: float, lam: float, r: float) -> dict[str, float]:
    """Block scalars from the exact ``p = 1 - q`` (not ``fl(1 - q)``, whose error times n would reach ~1e-10).

    Each is correctly rounded (rationals) or within a few ulps (logs) of its value for the given floats q,
    ``lam = fl(e**epsilon)`` (taken as exact: epsilon is read as ``log(lam)``) and r.
    """
    qf, lf, rf = Fraction(q), Fraction(lam), Fraction(r)
    pf = 1 - qf
    a, b = qf + pf * rf, pf + qf * rf
    c1, c2 = pf - lf * qf, lf * pf - qf
    return {"pr": float(pf * rf / a), "qr": float(qf * rf / b), "v1": float(pf * rf * qf / (a * a)),
            "v2": float(qf * rf * pf / (b * b)), "l1": _log_exact(a), "l2": _log_exact(b), "c1": float(c1),
            "c2": float(c2), "d0": float(c1 - c2 * rf)}


#: Rows of the node terms computed at a time (the temporaries then stay in the cache; the products are not split).
_NODE_ROWS = 1024


def _node_terms(mf: NDArray[np.float64], rest: NDArray[np.float64], off: NDArray[np.float64],
                ra: NDArray[np.float64], rb: NDArray[np.float64], ia: NDArray[np.float64], ib: NDArray[np.float64],
                th: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``|E|``, ``|E| cos(arg E)`` and ``|E| sin(arg E)`` of the node terms ``E = phi(r e**i th) / phi(r) ...`` of
    :func:`_contour_block`: ``log|E| = m ra + (n1 - m) rb``, ``arg E = m ia + (n1 - m) ib - off th`` (rows: m).

    The same floating-point operations, in the same order, as forming the whole arrays at once (so the same bits),
    done ``_NODE_ROWS`` rows at a time in place: the temporaries stay in the cache and no large array is
    allocated per operation (about 10-20% less time for these terms; cos and sin are most of it)."""
    shape = (mf.size, th.size)
    amp, ac, as_ = np.empty(shape), np.empty(shape), np.empty(shape)
    for c in range(0, mf.size, _NODE_ROWS):
        sl = slice(c, c + _NODE_ROWS)
        a, t, ph = amp[sl], ac[sl], as_[sl]
        np.multiply.outer(mf[sl], ra, out=a)
        np.multiply.outer(rest[sl], rb, out=t)
        a += t  # m ra + (n1 - m) rb
        np.multiply.outer(mf[sl], ia, out=ph)
        np.multiply.outer(rest[sl], ib, out=t)
        ph += t
        np.multiply.outer(off[sl], th, out=t)
        ph -= t  # (m ia + (n1 - m) ib) - off th
        np.exp(a, out=a)
        np.cos(ph, out=t)
        t *= a
        np.sin(ph, out=ph)
        ph *= a
    return amp, ac, as_


def _contour_block(n: int, q: float, epsilon: float, ms: NDArray[np.int64], b0: NDArray[np.int64] | None,
                   kmult: float, *, cdf_only: bool = False, max_nodes: int | None = None) -> dict[str, Any] | None:
    """Remove-direction eta and delta of the pairs at ``ms`` by one tilted trapezoid rule (see worst_over_crowds).

    ``cdf_only``: only the cdf of ``A'`` at ``base - 1`` and ``base`` (columns 0 and 1 of ``f``/``ef``; no pmf
    columns, one delta column), with the node count aimed at ``e**_BOUND_LOG_TARGET`` instead of
    ``e**_LOG_TARGET``: what the eta bounds of :func:`_log_eta_upper` use. The truncation terms are bounded and
    added to ``ef`` either way, so ``f + ef`` stays an upper bound; only its slack is larger (about
    ``e**_BOUND_LOG_TARGET`` relative).

    ``max_nodes``: None (nothing computed) when the rule would need more than this many nodes per row: a cdf far in
    the tail of its law (an interval bound of :func:`_log_eta_upper` over many m) can need millions of nodes for a
    single row."""
    n1 = n - 1
    p = 1.0 - q
    lam = math.exp(epsilon)
    mf = ms.astype(np.float64)
    qf, lf = Fraction(q), Fraction(lam)
    r0 = max(float(((1 - qf) - lf * qf) / (lf * (1 - qf) - qf)), 1e-300)  # c1 / c2, exactly formed
    _, _, _, _, mu0, s20 = _tilted(p, q, r0, mf, n1)
    base = np.clip(np.floor(mu0).astype(np.int64), 0, n1) if b0 is None else b0
    smin = math.sqrt(float(s20.min()))
    # one tilt for the block: the cutoff's (1/r* = c1/c2, exactly formed: near log(p/q) a rounded c1 would put
    # the tilt far off), pushed at least 3 sd below 1 (keeps 1/(1 - z) tame)
    r = min(r0, math.exp(-_KAPPA / max(smin, 3.0 * _KAPPA)))
    k_ = _block_constants(q, lam, r)
    pr, qr, v1, v2, l1, l2, c1, c2 = (k_[x] for x in ("pr", "qr", "v1", "v2", "l1", "l2", "c1", "c2"))
    mu, s2 = mf * pr + (n1 - mf) * qr, mf * v1 + (n1 - mf) * v2
    lr = math.log(r)
    bf = base.astype(np.float64)
    log_c = mf * l1 + (n1 - mf) * l2 - bf * lr  # e**log_c = phi(r) r**-base: the unit of every column below
    err_c = 8.0 * _U * (mf * abs(l1) + (n1 - mf) * abs(l2) + bf * abs(lr) + 1.0)
    jp = np.arange(-_WIN - 1, _WIN + 2)  # pmf of A' at base + jp
    jf = np.arange(-_WIN - 1, _WIN + 1)  # cdf of A'
    jd = np.arange(-_WIN, _WIN + 1)  # sum_{s <= b} (P(s) - e**eps Q(s))
    if cdf_only:
        jp, jf, jd = jp[:0], np.arange(-1, 1), np.arange(0, 1)
    # --- node count (heuristic sizes; every term they control is bounded below and added to the bracket)
    s2min, s2max = float(s2.min()), float(s2.max())
    dmax = float(np.max(np.abs(bf - mu))) + _WIN + 1.0
    log_pi = -0.5 * math.log(2.0 * math.pi * (s2min + 1.0)) - dmax * dmax / (2.0 * (s2min + 1.0)) - 5.0
    t = -(_BOUND_LOG_TARGET if cdf_only else _LOG_TARGET) - log_pi + math.log(s2max + 2.0)
    k_pmf = dmax + t / 3.0 + math.sqrt(t * t / 9.0 + 2.0 * t * s2max) + 1.0
    log_f = min(0.0, float(log_c.min()) + log_pi + (_WIN + 1) * lr)
    k_cdf = min((t - log_f) / -lr + 1.0, max(2.0 * (t + 1.0) / -lr + 2.0, 2.0 * k_pmf))
    big_k = int(math.ceil(kmult * max(k_pmf, k_cdf, 4.0 * _WIN + 8.0)))
    log_wmax = max(-(_WIN + 1) * lr, math.log(c1 + c2 * r) - _WIN * lr - math.log1p(-r), -_WIN * lr - math.log1p(-r))
    need = t + log_wmax
    half = big_k // 2
    if s2min > need / 2.0:
        kw = min(half, int(math.floor(math.acos(1.0 - need / s2min) * big_k / (2.0 * math.pi))) + 1)
    else:
        kw = half
    if max_nodes is not None and kw + 1 > max_nodes:
        return None
    k = np.arange(kw + 1)
    th = 2.0 * math.pi * k / big_k
    mult = np.where(k == 0, 1.0, 2.0)  # conjugate symmetry: node k stands for k and K - k
    if big_k % 2 == 0 and kw == half:
        mult[-1] = 1.0
    sh = np.sin(0.5 * th) ** 2
    st = np.sin(th)
    ra = 0.5 * np.log1p(-4.0 * v1 * sh)  # log|1 + pr (e**i th - 1)|
    rb = 0.5 * np.log1p(-4.0 * v2 * sh)
    ia = np.arctan2(pr * st, 1.0 - 2.0 * pr * sh) - pr * th  # arg(1 + pr (e**i th - 1)) - pr th
    ib = np.arctan2(qr * st, 1.0 - 2.0 * qr * sh) - qr * th
    z = r * np.exp(1j * th)
    wz = 1.0 / (1.0 - z)
    one_minus = 2.0 * sh - 1j * st  # 1 - e**(i th), without cancellation
    dz = k_["d0"] + c2 * r * one_minus  # c1 - c2 z with the exactly formed c1 - c2 r: no cancellation near th = 0
    w = np.concatenate([
        (r ** -jp.astype(np.float64))[None, :] * np.exp(-1j * np.outer(th, jp)),
        (r ** -jf.astype(np.float64))[None, :] * np.exp(-1j * np.outer(th, jf)) * wz[:, None],
        (r ** -jd.astype(np.float64))[None, :] * np.exp(-1j * np.outer(th, jd)) * (dz * wz)[:, None],
    ], axis=1) * (mult / big_k)[:, None]
    wr, wi, wa = np.ascontiguousarray(w.real), np.ascontiguousarray(-w.imag), np.abs(w)
    # the delta weights' own rounding is relative to |d0| + c2 r |1 - e**(i th)| (>= |c1 - c2 z|)
    wa[:, -jd.size:] *= ((abs(k_["d0"]) + c2 * r * np.abs(one_minus)) / np.maximum(np.abs(dz), 1e-300))[:, None]
    amax = float(np.max(np.abs(ra) + np.abs(ia) + pr * th))
    bmax = float(np.max(np.abs(rb) + np.abs(ib) + qr * th))
    val = np.empty((ms.size, w.shape[1]))
    err = np.empty_like(val)
    rows = max(1, _CELLS // (kw + 1))
    off = bf - mu
    rest = n1 - mf
    for c in range(0, ms.size, rows):
        sl = slice(c, c + rows)
        amp, ac, as_ = _node_terms(mf[sl], rest[sl], off[sl], ra, rb, ia, ib, th)
        val[sl] = ac @ wr
        val[sl] += as_ @ wi
        # rounding: |error of L| <= delta_m (absolute), exp/cos/sin and the weights a few ulps, the dot products
        # gamma_{2(kw+1)}; all relative to sum_k |E_k| |w_k|
        # (the tilted mean enters the phase through off = base - mean, rounded to 2 u mean)
        d_m = 8.0 * _U * (mf[sl] * amax + (n1 - mf[sl]) * bmax + (np.abs(off[sl]) + 2.0 * mu[sl] + 1.0) * th[-1]
                          + 4.0)
        e = amp @ wa
        e *= (d_m + (4.0 * (kw + 1) + 32.0) * _U)[:, None]
        e *= 1.0 + 1e-6
        err[sl] = e
    ncols = (jp.size, jf.size, jd.size)
    wmax = np.concatenate([r ** -jp.astype(np.float64), r ** -jf.astype(np.float64) / (1.0 - r),
                           (c1 + c2 * r) * r ** -jd.astype(np.float64) / (1.0 - r)])
    if kw < half:  # dropped nodes: |phi(r e**i th)| / phi(r) <= exp(-(1 - cos th) s2), decreasing in |th|
        th_out = 2.0 * math.pi * (kw + 1) / big_k
        err += np.exp(-(1.0 - math.cos(th_out)) * s2)[:, None] * wmax[None, :]
    a, f, dd = np.split(val, np.cumsum(ncols)[:2], axis=1)
    ea, ef, ed = np.split(err, np.cumsum(ncols)[:2], axis=1)
    # aliasing, in units of e**log_c (see worst_over_crowds)
    sp = base[:, None] + jp[None, :]
    up = np.where(sp + big_k > n1, -np.inf, _log_bernstein(sp + big_k - mu[:, None], s2[:, None]))
    lo = np.where(sp - big_k < 0, -np.inf, _log_bernstein(mu[:, None] - (sp - big_k), s2[:, None]))
    ea = ea + np.exp(np.logaddexp(up, lo) - jp[None, :] * lr)
    sf = base[:, None] + jf[None, :]
    sd = base[:, None] + jd[None, :]

    def geo(b: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.float64]:
        """``sum_{J >= 1} r**(J K) F(b + J K)``: the smaller of ``r**K / (1 - r**K)`` and, splitting the sum at
        ``s = b + J K / 2``, ``phi(r) r**-b (r**(K/2) / (1 - r**(K/2)) + (2 n / K + 1) P_r[S > b + K/2])``."""
        with np.errstate(over="ignore"):
            whole = np.exp(big_k * lr - math.log1p(-(r**big_k)) - log_c)[:, None]
        tail = np.where(b + big_k / 2.0 > n1, -np.inf, _log_bernstein(b + big_k / 2.0 - mu[:, None], s2[:, None]))
        split = np.exp(-j * lr) * (math.exp(0.5 * big_k * lr) / -math.expm1(0.5 * big_k * lr)
                                   + (2.0 * n1 / big_k + 1.0) * np.exp(tail))
        res: NDArray[np.float64] = np.minimum(whole, split)
        return res

    lof = np.where(sf - big_k < 0, -np.inf, _log_bernstein(mu[:, None] - (sf - big_k), s2[:, None]))
    ef = ef + geo(sf, jf[None, :]) + np.exp(lof - jf[None, :] * lr) * (np.maximum(sf, 0) / big_k + 1.0)
    lod = np.where(sd - big_k < 0, -np.inf, _log_bernstein(mu[:, None] - (sd - big_k), s2[:, None]))
    ed = ed + max(c1, c2) * geo(sd, jd[None, :]) + (c1 + c2) * np.exp(lod - jd[None, :] * lr) * (
        np.maximum(sd, 0) / big_k + 1.0)
    # outside the support 0..n-1 of A' the values are known exactly
    out_p = (sp < 0) | (sp > n1)
    a, ea = np.where(out_p, 0.0, a), np.where(out_p, 0.0, ea)
    with np.errstate(over="ignore"):
        one = np.exp(-log_c)[:, None]
    f = np.where(sf < 0, 0.0, np.where(sf >= n1, one, f))
    ef = np.where((sf < 0) | (sf >= n1), 0.0, ef) + 4.0 * _U * np.abs(f)  # + eta's float p, q multipliers
    # delta also as c1 F(b) - c2 F(b-1): better where the tilt is far from 1/r* (then c1 - c2 z cancels)
    d_alt = c1 * f[:, 1:] - c2 * f[:, :-1]
    ed_alt = c1 * ef[:, 1:] + c2 * ef[:, :-1] + 4.0 * _U * (c1 * np.abs(f[:, 1:]) + c2 * np.abs(f[:, :-1]))
    use_alt = ed_alt < ed
    dd, ed = np.where(use_alt, d_alt, dd), np.where(use_alt, ed_alt, ed)
    return {"base": base, "log_c": log_c, "err_c": err_c, "a": a, "ea": ea, "f": f, "ef": ef, "d": dd, "ed": ed,
            "c1": c1, "c2": c2, "p": p, "q": q, "lam": lam, "nodes": kw + 1}


def _resolve_block(n: int, blk: dict[str, Any]) -> dict[str, Any]:
    """Cutoff (last risky s) from the pmf window; eta and delta with their brackets; window misses flagged."""
    a, ea, c1, c2, p = blk["a"], blk["ea"], blk["c1"], blk["c2"], blk["p"]
    q = blk["q"]
    base = blk["base"]
    js = np.arange(-_WIN, _WIN + 2)  # s = base + js; g(s) = c1 A'(s) - c2 A'(s-1) > 0 iff s is risky
    s = base[:, None] + js[None, :]
    # e**epsilon is known to 2 ulps (d_lam); g and delta move by d_lam times the Q-mass involved
    d_lam = 4.0 * _U * blk["lam"]
    g = c1 * a[:, 1:] - c2 * a[:, :-1]
    eg = c1 * ea[:, 1:] + c2 * ea[:, :-1] + d_lam * (q * np.abs(a[:, 1:]) + p * np.abs(a[:, :-1]))
    low, high = s <= 0, s >= n  # s = 0 is always risky (pi = p/q); s = n never (A'(n) = 0)
    sure = (g > eg) | low
    sure_not = ((g < -eg) | high) & ~low
    pos = ((g > 0.0) | low) & ~high
    rows = np.arange(base.size)
    width = js.size
    # the risky set is {s <= b}: a surely risky s gives b >= s, a surely safe one b < s, whatever lies beyond
    # (far from the tilted mode the window's values may be too inaccurate to decide, which is fine)
    has_sure, has_not = sure.any(axis=1), sure_not.any(axis=1)
    ib_lo = width - 1 - np.argmax(sure[:, ::-1], axis=1)
    ib_hi = np.argmax(sure_not, axis=1) - 1
    # -1: cutoff below the window, +1: above, 2: contradictory (not expected; recomputed, then the slow path)
    status = np.where(~has_sure, -1, np.where(~has_not, 1, np.where(ib_lo > ib_hi, 2, 0)))
    ok = status == 0
    ib_lo = np.clip(np.where(ok, ib_lo, 0), 0, width - 2)
    ib_hi = np.clip(np.where(ok, ib_hi, 0), 0, width - 2)
    cols = np.arange(width)[None, :]
    in_range = (cols >= ib_lo[:, None]) & (cols <= ib_hi[:, None])
    cand = pos & in_range  # computed cutoff: the last computed-positive s in the undecided range
    ib = np.where(cand.any(axis=1), width - 1 - np.argmax(cand[:, ::-1], axis=1), ib_lo)
    f, ef, d, ed = blk["f"], blk["ef"], blk["d"], blk["ed"]
    fo, do = -js[0] + 1, -js[0]  # column of offset j: j + fo in f (offsets -W-1..W), j + do in d (-W..W)
    # delta at cutoff b is decreasing in e**eps with slope -Q(s <= b) = -(q F(b) + p F(b-1)): an input
    # uncertainty, not a numerical one, so it widens the bracket but does not trigger a recomputation
    ed_lam = d_lam * (q * np.abs(f[:, 1:]) + p * np.abs(f[:, :-1]))

    def eta(i: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        j = js[i]
        return (p * f[rows, j + fo] + q * f[rows, j - 1 + fo], p * ef[rows, j + fo] + q * ef[rows, j - 1 + fo])

    e_val, _ = eta(ib)
    e_lo, e_lo_err = eta(ib_lo)
    e_hi, e_hi_err = eta(ib_hi)
    d_val = d[rows, js[ib] + do]
    rel_d = ed[rows, js[ib] + do] / d_val
    ed = ed + ed_lam
    jd = np.arange(d.shape[1])
    inside = (jd[None, :] >= js[ib_lo][:, None] + do) & (jd[None, :] <= js[ib_hi][:, None] + do)
    # delta = max_b sum_{s <= b} (P(s) - lam Q(s)) (the hockey stick is a sup over sets): every candidate cutoff's
    # lower end is a lower bound, so an undecided cutoff does not widen delta's bracket
    d_lo = np.max(np.where(inside, d - ed, -np.inf), axis=1)
    d_hi = np.max(np.where(inside, d + ed, -np.inf), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # relative half-width at a fixed cutoff (an undecided cutoff widens eta's bracket by a pmf jump, honestly)
        rel = np.maximum(np.maximum(e_lo_err / e_lo, e_hi_err / e_hi), rel_d)
    e_lo, e_hi = e_lo - e_lo_err, e_hi + e_hi_err
    d_lo = np.maximum(d_lo, 0.0)  # (only the e**eps uncertainty can reach 0: the numerical part is checked by rel)
    good = ok & (e_val > 0) & (d_val > 0) & (e_lo > 0) & ~np.isnan(rel)
    lc, ec = blk["log_c"], blk["err_c"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {
            "status": status, "good": good, "cutoff": base + js[ib], "rel": np.where(good, rel, np.inf),
            "undecided": ib_lo < ib_hi,
            "log_eta": lc + np.log(e_val), "log_eta_lo": lc - ec + np.log(e_lo), "log_eta_hi": lc + ec + np.log(e_hi),
            "log_delta": lc + np.log(d_val), "log_delta_lo": lc - ec + np.log(d_lo),
            "log_delta_hi": lc + ec + np.log(d_hi),
        }
    return out


_PAIR_KEYS = ("cutoff", "log_eta", "log_eta_lo", "log_eta_hi", "log_delta", "log_delta_lo", "log_delta_hi")


def _remove_pairs(n: int, q: float, epsilon: float, ms: NDArray[np.int64],
                  progress: Callable[[int, int], None] | None = None) -> _Pairs:
    """Remove-direction (eta, delta) of every pair at ``ms`` (sorted, 0 <= m <= n-1), with per-pair brackets."""
    size = ms.size
    res: dict[str, Any] = {k: np.zeros(size, dtype=np.int64 if k == "cutoff" else np.float64)
                           for k in _PAIR_KEYS}
    lam = Fraction(math.exp(epsilon))
    if not (1 - Fraction(q)) - lam * Fraction(q) > 0:  # lam >= p/q: every loss <= log(p/q) <= eps
        for k in _PAIR_KEYS[1:]:
            res[k][:] = _NEG_INF
        res["cutoff"][:] = -1
        # within the 2 ulps of e**eps of log(p/q) the true e**eps may still be below p/q: then eta <= 1 and
        # delta <= p - e**eps q (data processing from one person's RR) are all that is certain
        c1_low = (1 - Fraction(q)) - lam * (1 - Fraction(4 * _U)) * Fraction(q)
        if c1_low > 0:
            res["log_eta_hi"][:] = 0.0
            res["log_delta_hi"][:] = math.log(float(c1_low) * (1.0 + 4.0 * _U))
        if progress is not None:
            progress(size, size)
        return _Pairs(m=ms, rel=0.0, slow=0, undecided=0, nodes=(0, 0), **res)
    worst_rel, slow, undecided, nodes = 0.0, 0, 0, [math.inf, 0.0]
    for c in range(0, size, _ROWS):
        idx = np.arange(c, min(size, c + _ROWS))
        todo: NDArray[np.int64] = idx
        b0: NDArray[np.int64] | None = None
        kmult = 1.0
        for _ in range(6):
            with one_blas_thread():  # small products: OpenBLAS's spinning workers only cost CPU (same numbers)
                blk = _contour_block(n, q, epsilon, ms[todo], b0, kmult)
            assert blk is not None  # (no max_nodes)
            nodes = [min(nodes[0], blk["nodes"]), max(nodes[1], blk["nodes"])]
            out = _resolve_block(n, blk)
            done = out["good"] & (out["rel"] <= (_MAX_REL if kmult == 1.0 else _ACCEPT_REL))
            for k in _PAIR_KEYS:
                res[k][todo[done]] = out[k][done]
            if np.any(done):
                worst_rel = max(worst_rel, float(np.max(out["rel"][done])))
                undecided += int(np.sum(out["undecided"][done]))
            left = ~done
            shift = out["status"][left]
            # a missed window moves by its width; a pair whose bracket is too wide gets twice the nodes
            move = np.where(np.abs(shift) == 1, shift, 0)
            b0 = np.clip(blk["base"][left] + move * (2 * _WIN + 1), 0, n - 1)
            kmult = kmult if np.all(move != 0) else 2.0 * kmult
            todo = todo[left]
            if not todo.size:
                break
        for i in todo:  # the slow exact per-pair path (not expected in practice; counted in details)
            t = _tail_direction(n, int(ms[i]), q, epsilon, "remove")
            res["cutoff"][i] = t.boundary
            res["log_eta"][i], res["log_delta"][i] = t.log_eta, t.log_delta
            res["log_eta_lo"][i] = t.log_eta + math.log1p(-_SLOW_REL)
            res["log_eta_hi"][i] = t.log_eta + _SLOW_REL
            res["log_delta_lo"][i] = t.log_delta + math.log1p(-_SLOW_REL)
            res["log_delta_hi"][i] = t.log_delta + _SLOW_REL
            slow += 1
        if progress is not None:
            progress(int(idx[-1]) + 1, size)
    return _Pairs(m=ms, rel=worst_rel, slow=slow, undecided=undecided, nodes=(int(nodes[0]), int(nodes[1])),
                  **res)


#: A block of pairs is skipped only if rigorous upper bounds on every pair in it are below the worst lower ends
#: found so far by this much (natural log).
_PRUNE_MARGIN = 0.01
#: Length of the intervals of m whose delta is bounded by post-processing (one pair of population n - 255 each).
_DELTA_SPAN = 256
#: Rounds of refining the eta intervals, the most eta intervals per block (beyond that it is evaluated), and the
#: fraction of the interval length the slope model allows that is used. An interval's bound takes one cdf-only
#: contour row (:func:`_contour_block` with ``cdf_only``: about a quarter of an evaluated pair's cost), so a
#: block may be refined down to single m (``_ROWS`` intervals) before it is evaluated.
_ETA_ROUNDS = 12
#: The e'/epsilon at which :func:`_scan_all` first bounds eta of a block through delta(e') (any e' < epsilon is valid;
#: one ratio: 0.875 pruned most per cost among 0.5, 0.75, 0.875 and all three, on 32 scans at N = 1e5 and 1e6).
_PRE_RATIOS = (0.875,)
_ETA_ROWS = _ROWS
_ETA_AIM = 0.9
#: Most contour nodes per interval in :func:`_log_eta_upper`; beyond it the intervals of the call get the trivial
#: bound and are split (a block-wide interval deep in the tail took 6 million nodes, 5.6 s, at N = 10^5,
#: q = 5.6e-4, and its bound was near 1, so it was split anyway; the narrow intervals of later rounds need tens).
#: 2^12, 2^14 and 2^16 gave the same tails, every field, on 123 cases (N = 10^3 .. 10^6); 2^12 the fastest.
_ETA_BOUND_NODES = 1 << 12


def _log_eta_upper(n: int, q: float, epsilon: float, lo: NDArray[np.int64], hi: NDArray[np.int64]
                   ) -> NDArray[np.float64]:
    """Log of a rigorous upper bound on eta -- hence on delta -- of every remove pair m in ``[lo, hi]`` (c1 > 0).

    With ``A'_m = A_{n-1}(m)`` and the cutoff ``b_m`` (risky set ``{s <= b_m}``, see :func:`worst_over_crowds`):

    * ``b_m <= b_hi``: rho is non-decreasing in m (module docstring), so a risky s at m is risky at hi;
    * ``b_hi <= floor(mean) + 1``, the mean of ``A'_hi`` tilted by ``(c1/c2)**s``: b_hi is a mode of that tilted
      law (its pmf rises up to b_hi and, being log-concave, falls after), and a mode of a sum of independent
      Bernoullis is within 1 of its mean (Darroch 1964); the float mean gets a 1e-9 relative allowance;
    * ``A'_m`` is stochastically increasing in m (a Ber(q) summand becomes Ber(p)), so with ``B >= b_hi``
      ``eta(m) = p F_m(b_m) + q F_m(b_m - 1) <= p F_lo(B) + q F_lo(B - 1)``;
    * ``delta(m) = E_P[(1 - e**(eps - loss))_+] <= P[loss > eps] = eta(m)``.

    ``F_lo`` comes from the contour rule's cdf columns with their brackets (:func:`_contour_block`, window at B).
    """
    n1 = n - 1
    qf, lf = Fraction(q), Fraction(math.exp(epsilon))
    pf = 1 - qf
    r0 = (pf - lf * qf) / (lf * pf - qf)
    pr0, qr0 = float(pf * r0 / (qf + pf * r0)), float(qf * r0 / (pf + qf * r0))
    mu = hi * pr0 + (n1 - hi) * qr0
    big_b = np.floor(mu + 1e-9 * (mu + 1.0)).astype(np.int64) + 1
    out = np.zeros(lo.size)
    inner = big_b < n1  # (else F = 1)
    if np.any(inner):
        with one_blas_thread():
            blk = _contour_block(n, q, epsilon, lo[inner], big_b[inner], 1.0, cdf_only=True,
                                 max_nodes=_ETA_BOUND_NODES)
        if blk is None:  # too many nodes for these intervals: the trivial bound (eta <= 1); the scan splits them
            return out
        col = 1  # the cdf column at offset 0 from the window's base (column 0: offset -1)
        up = blk["f"] + blk["ef"]
        with np.errstate(divide="ignore"):
            log_up = np.log(((1.0 - q) * up[:, col] + q * up[:, col - 1]) * (1.0 + 8.0 * _U))
        out[inner] = np.minimum(0.0, blk["log_c"] + blk["err_c"] + log_up)
    return out


def _log_delta_upper(n: int, q: float, epsilon: float, lo: NDArray[np.int64], span: int) -> NDArray[np.float64]:
    """Log of a rigorous upper bound on delta of every remove pair m in ``[lo, lo + span - 1]`` (post-processing).

    ``A_{n-1}(m) = W + V`` with ``W = Bin(lo, p) + Bin(n - span - lo, q)`` (the ``n - span`` people common to the
    interval) and V independent (the other ``span - 1``), so the pair at m is the remove pair at lo of population
    ``n - span + 1`` with V added to both sides: a post-processing, which cannot raise delta (hockey-stick
    divergence). Its upper end comes from the same contour scan.
    """
    pp = _remove_pairs(n - span + 1, q, epsilon, lo)
    return pp.log_delta_hi


def _levels(pairs: list[_Pairs], margin: float) -> tuple[float, float]:
    """Log levels (eta, delta) below which a pair changes no output of :func:`_worst_result`:
    ``min(largest lower end, largest value - 1e-12)`` (the arg-max tie tolerance), minus ``margin``."""
    out = []
    for name in ("eta", "delta"):
        lo = max(float(np.max(getattr(pp, f"log_{name}_lo"))) for pp in pairs)
        val = max(float(np.max(getattr(pp, f"log_{name}"))) for pp in pairs)
        out.append(min(lo, val - 1e-12) - margin)
    return out[0], out[1]


def _log_eta_through_delta(n: int, q: float, epsilon: float, lo_d: NDArray[np.int64],
                           blocks: int) -> NDArray[np.float64]:
    """Log of an upper bound on eta of every remove pair of each of ``blocks`` blocks (the ``lo_d`` intervals of
    :data:`_DELTA_SPAN` m, ``lo_d.size / blocks`` per block, in order): ``eta(e) <= delta(e') / (1 - e**(e' - e))``
    for every pair and every ``e' < e`` (docs/proofs/blanket.md, step 4), delta bounded on the intervals by
    post-processing (:func:`_log_delta_upper`), at ``e' = r e`` for ``r`` in :data:`_PRE_RATIOS`; ``+inf`` where no
    e' is usable. ``+1e-9`` covers the rounding of the conversion."""
    out = np.full(blocks, np.inf)
    for r in _PRE_RATIOS:
        e_prime = r * epsilon
        gap = -math.expm1(e_prime - epsilon)
        if not (e_prime > 0.0 and gap > 0.0):  # (epsilon so small that e' rounds to it or to 0: no bound)
            continue
        d_r = np.max(_log_delta_upper(n, q, e_prime, lo_d, _DELTA_SPAN).reshape(blocks, -1), axis=1)
        out = np.minimum(out, d_r - math.log(gap) + 1e-9)
    return out


def _scan_all(n: int, q: float, epsilon: float, progress: Callable[[int, int], None] | None = None,
              delta_only: bool = False) -> _Pairs:
    """Every remove pair m = 0..n-1, skipping blocks proved unable to change the worst case (issue 10).

    The pairs are evaluated in the blocks of :func:`_remove_pairs` (``_ROWS`` consecutive m, so an evaluated pair
    gets exactly the numbers of the full scan): first the two end blocks, then every other block is bounded --
    delta by post-processing on intervals of ``_DELTA_SPAN`` m (:func:`_log_delta_upper`), eta on intervals
    refined where the bound is close, down to single m (:func:`_log_eta_upper`, whose slack grows with the
    interval; one cheap cdf-only contour row per interval) -- and
    evaluated only if some bound is not below the levels of :func:`_levels` (margin ``_PRUNE_MARGIN`` = 1%).
    A skipped block's pairs get values ``-inf``, lower ends ``-inf`` and upper ends their block's bounds. The
    worst values, their brackets and arg-max pairs are those of the full scan unless a skipped pair's own bracket
    would have been wider than that margin (contour pairs are accepted up to 1e-3); the bracket stays rigorous
    either way. ``delta_only``: the eta bounds on intervals are not computed, a block is skipped when its delta
    bound is below the level, and a skipped block's eta upper end is 1 (only delta's numbers are meant).
    """
    ms = np.arange(n, dtype=np.int64)
    starts = list(range(0, n, _ROWS))
    qf, lam = Fraction(q), Fraction(math.exp(epsilon))
    if len(starts) <= 2 or not (1 - qf) - lam * qf > 0:
        return _remove_pairs(n, q, epsilon, ms, progress)
    done: dict[int, _Pairs] = {}
    finished = 0

    def evaluate(c: int) -> None:
        nonlocal finished
        done[c] = _remove_pairs(n, q, epsilon, ms[c:c + _ROWS])
        finished += done[c].m.size
        if progress is not None:
            progress(finished, n)

    evaluate(starts[0])
    evaluate(starts[-1])
    lv_eta, lv_delta = _levels(list(done.values()), _PRUNE_MARGIN)
    inner = starts[1:-1]
    # delta: intervals of _DELTA_SPAN m (they tile the inner blocks: _ROWS is a multiple of it)
    lo_d = np.arange(inner[0], inner[-1] + _ROWS, _DELTA_SPAN, dtype=np.int64)
    d_up = _log_delta_upper(n, q, epsilon, lo_d, _DELTA_SPAN).reshape(len(inner), -1)
    # eta (and delta <= eta): one interval per block, refined where its bound is above the level but the slack
    # might close the gap
    r0 = ((1 - qf) - lam * qf) / (lam * (1 - qf) - qf)
    slope = float((1 - qf) * r0 / (qf + (1 - qf) * r0) - qf * r0 / (1 - qf + qf * r0)) * -math.log(float(r0))
    n_in = len(inner)
    d_block = np.max(d_up, axis=1)
    failed = np.full(n_in, lv_eta == _NEG_INF or lv_delta == _NEG_INF)
    e_up = np.full(n_in, _NEG_INF)
    todo = ~failed
    if not delta_only and todo.any():
        # a first eta bound per block through delta (milliseconds): a block below the level needs none of the
        # contour bounds on intervals below (most of the scan's time at N = 10**6). The blocks evaluated can only
        # be fewer; the worst values, their brackets and pairs are unchanged (a skipped block's bound is below the
        # level).
        e_pre = _log_eta_through_delta(n, q, epsilon, lo_d, n_in)
        pre = todo & (e_pre < lv_eta)
        e_up[pre] = e_pre[pre]
        todo &= ~pre
    bi = np.flatnonzero(todo)  # the intervals: block index, first and last m
    a = np.array(inner, dtype=np.int64)[bi]
    b = a + (_ROWS - 1)
    for _ in range(0 if delta_only else _ETA_ROUNDS):
        if not bi.size:
            break
        u = _log_eta_upper(n, q, epsilon, a, b)
        ok = u < lv_eta
        np.maximum.at(e_up, bi[ok], u[ok])
        size = b - a + 1
        # the bound's slack grows by about `slope` per m of the interval: aim below what must go, with room (where
        # the bound saturates at 1 the slope says nothing: then 4 times smaller)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # (slope 0 at epsilon = 0)
            room = size - np.where(ok, 0.0, u - lv_eta) / slope
        new = np.floor(_ETA_AIM * np.clip(np.nan_to_num(room, nan=-1.0), -1.0, size)).astype(np.int64)
        new = np.where(u > -1.0, np.minimum(new, size // 4), new)
        hopeless = ~ok & ((size == 1) | (new < 1))
        pieces = np.where(ok | hopeless, 0, -(-size // np.maximum(new, 1)))
        failed |= np.bincount(bi[hopeless], minlength=n_in) > 0
        failed |= np.bincount(bi, weights=pieces, minlength=n_in) > _ETA_ROWS
        keep = ~ok & ~failed[bi]
        cnt, new = pieces[keep], new[keep]
        first = np.repeat(np.cumsum(cnt) - cnt, cnt)
        a_next = np.repeat(a[keep], cnt) + (np.arange(int(cnt.sum())) - first) * np.repeat(new, cnt)
        b = np.minimum(a_next + np.repeat(new, cnt) - 1, np.repeat(b[keep], cnt))
        a, bi = a_next, np.repeat(bi[keep], cnt)
    if delta_only:  # (eta is not asked for: every block whose delta bound is below the level is skipped)
        failed, e_up = d_block >= lv_delta, np.zeros(n_in)
    else:
        failed[bi] = True  # (intervals still open after the last round)
        d_block = np.minimum(d_block, e_up)  # delta <= eta
        failed |= d_block >= lv_delta
    skipped: dict[int, tuple[float, float]] = {}
    for i, c in enumerate(inner):
        if failed[i]:
            evaluate(c)
        else:  # every interval below the levels: skipped
            skipped[c] = (float(e_up[i]), float(d_block[i]))
            finished += _ROWS
    if progress is not None:
        progress(finished, n)
    # the columns over all m, written in place (no per-block arrays to concatenate)
    cols: dict[str, Any] = {k: np.empty(n, dtype=np.int64 if k == "cutoff" else np.float64) for k in _PAIR_KEYS}
    for c, pp in done.items():
        for k in _PAIR_KEYS:
            cols[k][c:c + pp.m.size] = getattr(pp, k)
    for c, (log_eta_upper, log_delta_upper) in skipped.items():
        _fill_bounded(cols, slice(c, c + _ROWS), log_eta_upper, log_delta_upper)
    ev = list(done.values())
    return _Pairs(
        m=ms, **cols,
        rel=max(pp.rel for pp in ev), slow=sum(pp.slow for pp in ev), undecided=sum(pp.undecided for pp in ev),
        nodes=(min(pp.nodes[0] for pp in ev), max(pp.nodes[1] for pp in ev)),
        bounded=_ROWS * len(skipped))


def _fill_bounded(cols: dict[str, Any], sl: slice, log_eta_upper: float, log_delta_upper: float) -> None:
    """A skipped block: values and lower ends ``-inf`` (0 is a valid lower end), upper ends the proved bounds."""
    cols["cutoff"][sl] = -1
    for k in ("log_eta", "log_eta_lo", "log_delta", "log_delta_lo"):
        cols[k][sl] = _NEG_INF
    cols["log_eta_hi"][sl] = log_eta_upper
    cols["log_delta_hi"][sl] = min(log_delta_upper, log_eta_upper)


def _representative(n: int, m: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """The remove pair at m is the add pair at n - 1 - m: representative m and whether it is the add pair."""
    add = m > n - 1 - m
    return np.where(add, n - 1 - m, m), add


def _argmax_pair(n: int, pairs: _Pairs, values: NDArray[np.float64]) -> int:
    """Index of the largest value (log domain); ties within 1e-12 relative keep the smallest representative m."""
    best = float(np.max(values))
    if best == _NEG_INF:
        return -1
    close = np.flatnonzero(values >= best - 1e-12)
    rep, add = _representative(n, pairs.m[close])
    return int(close[np.lexsort((add, rep))[0]])


def worst_over_crowds(population: int, q: float, epsilon: float, *,
                      progress: Callable[[int, int], None] | None = None) -> WorstOverCrowds:
    """Exact worst ``eta(epsilon)`` and ``delta(epsilon)`` of shuffled binary RR over **every** neighbouring pair.

    ``n = population`` people report one bit each through randomized response (flip probability q); only the
    count of reported ones is released. Neighbours differ in one person's bit; the other ``n - 1`` bits are
    arbitrary, ``m`` of them ones. For every ``m = 0..n-1`` and both directions this computes
    ``eta = P_P[log P(S)/Q(S) > epsilon]`` and ``delta = E_P[(1 - e**(epsilon - loss))_+]`` and returns the
    largest of each with the pair attaining it. Every pair is covered — evaluated, or proved below the worst —
    in O(n) work overall (about 25 to 120 complex terms per evaluated pair). ``A'`` below has variance
    ``(n-1) p q`` for *every* m, so the loss is not small away from the ends: at small epsilon the values over m
    are flat to within a fraction of a nat (n = 1e6, q = 0.25, epsilon = 0.01: 0.5 nats over all m, eta jumping
    by 2% each time the cutoff moves). Blocks of ``16384`` consecutive m whose pairs are all proved below the
    worst by rigorous bounds are skipped (``details["pairs_bounded"]``; see ``_scan_all``: the outputs are those
    of evaluating them, bit for bit): at n = 1e6, q = 0.25 about 7% of the pairs are evaluated at
    epsilon = 0.01 (about 0.35 s of CPU; 3 s evaluating all) and 2% at epsilon = 0.1 or 0.5 (about 0.12 s).

    **How** (the proof, with every error term: ``docs/proofs/worst_over_crowds.md``). The remove pairs over all m
    are every pair (the add pair at m is the remove pair at ``n - 1 - m``). For each, log-concavity of
    ``A' = A_{n-1}(m)`` makes the risky set ``{s <= b}`` for one cutoff b, so ``eta = p F(b) + q F(b-1)`` and
    delta is a sum over ``s <= b``; b is found near the tilted mean (Darroch 1964) and checked by signs. Every
    needed pmf/cdf value is a coefficient of a generating function extracted by the trapezoid rule on a circle,
    with aliasing, dropped nodes, rounding and input errors bounded per pair and added to its bracket (typically
    1e-14 to 1e-9 relative, ``details["max_pair_relative_halfwidth"]``; checked against 40-digit sums in the
    tests). A pair whose cutoff is undecided within its error gets a bracket spanning both cutoffs; a bracket wider
    than ``1e-6`` relative is recomputed with twice the nodes, then accepted up to ``1e-3``; beyond that (counted
    in ``details["slow_pairs"]``) the exact per-pair routine of :func:`single_bit_tail` is used.

    Args:
        population: n >= 1 (n = 1 is local randomized response). Time and memory grow linearly.
        q: flip probability in (0, 0.5).
        epsilon: finite, >= 0.
        progress: optional ``progress(done, total)`` over the m covered (evaluated or skipped).

    Returns:
        A :class:`WorstOverCrowds`.

    Raises:
        ParameterError: an argument out of range.

    References:
        seed 000 §3.1 (A_n(m), pi), §3.1.4; seed 001 eq. (1.7); J. N. Darroch, "On the distribution of the number
        of successes in independent trials", Ann. Math. Statist. 35 (1964).

    Examples:
        >>> r = worst_over_crowds(20, 0.2, 0.5)  # = single_bit_worst_tail(population=20, q=0.2, epsilon=0.5)
        >>> r.worst_m_delta, r.worst_direction_delta, round(r.delta, 6)
        (1, 'remove', 0.024494)
    """
    n = check_int("population", population, minimum=1)
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = check_nonnegative_finite("epsilon", epsilon)
    pairs = _scan_all(n, q, epsilon, progress)
    return _worst_result(n, q, epsilon, pairs)


def _worst_result(n: int, q: float, epsilon: float, pairs: _Pairs) -> WorstOverCrowds:
    out: dict[str, Any] = {}
    details: dict[str, Any] = {"pairs_evaluated": int(pairs.m.size) - pairs.bounded,
                               "pairs_bounded": pairs.bounded, "slow_pairs": pairs.slow,
                               "undecided_cutoff_pairs": pairs.undecided,
                               "max_pair_relative_halfwidth": pairs.rel, "contour_nodes": list(pairs.nodes)}
    for name in ("eta", "delta"):
        vals = getattr(pairs, f"log_{name}")
        i = _argmax_pair(n, pairs, vals)
        lo = float(np.max(getattr(pairs, f"log_{name}_lo")))
        hi = float(np.max(getattr(pairs, f"log_{name}_hi")))
        if i < 0:  # every value 0 (the upper end is positive only within 2 ulps of e**eps of log(p/q))
            out.update({name: 0.0, f"{name}_lower": 0.0, f"{name}_upper": min(1.0, _exp(hi)), f"log_{name}": None,
                        f"worst_m_{name}": -1, f"worst_direction_{name}": ""})
            details[f"risky_outputs_{name}"] = None
            continue
        m = int(pairs.m[i])
        b = int(pairs.cutoff[i])
        add = m > n - 1 - m
        val = float(vals[i])
        out.update({name: _exp(val), f"{name}_lower": _exp(lo), f"{name}_upper": min(1.0, _exp(hi)),
                    f"log_{name}": val, f"worst_m_{name}": n - 1 - m if add else m,
                    f"worst_direction_{name}": "add" if add else "remove"})
        details[f"risky_outputs_{name}"] = f"s >= {n - b}" if add else f"s <= {b}"
    return WorstOverCrowds(population=n, q=q, epsilon=epsilon, details=details, **out)
