"""Exact privacy-loss distributions of anonymized (shuffled) randomized response.

Two mechanisms:

1. **Shuffled binary randomized response** (seed 000 §3.1). ``n`` people each report one bit through randomized
   response with flip probability ``q``; only the count ``s`` of reported ones is released. Neighbouring
   collections differ in one person's bit; the other ``n - 1`` people hold ``m`` ones. With
   ``A_n(m) = Bin(m, 1-q) + Bin(n-m, q)`` the pair is ``(A_n(m), A_n(m+1))``:

   * ``direction="remove"``: ``P = A_n(m)``, ``Q = A_n(m+1)`` (loss ``log pi(s; m)``, the paper's ratio);
   * ``direction="add"``: ``P = A_n(m+1)``, ``Q = A_n(m)``.

   Both pmfs come from one exact log-domain evaluation of ``A' = A_{n-1}(m)``
   (:func:`sufficientdp.ratio.single_bit.log_pmf`): ``A_n(m)(s) = q A'(s-1) + p A'(s)`` and
   ``A_n(m+1)(s) = p A'(s-1) + q A'(s)`` (seed 000 §3.1.4).

   Worst case over ``m``: by the symmetry ``n - A_n(m) ~ A_n(n - m)`` the "add" pair at ``m`` is the "remove"
   pair at ``n - 1 - m`` mirrored, so scanning the "remove" direction over every ``m = 0..n-1`` covers both
   directions. The worst ``m`` is near the ends but **not** always ``0`` or ``n - 1`` (``docs/single_bit.md``),
   so every ``m`` is evaluated; no end point is assumed. The one engine for that is
   :func:`sufficientdp.ratio.single_bit.worst_over_crowds` (all n pairs in O(n), n = 1e6 in about a second), which
   :func:`shuffled_rr_worst_profile` and :func:`shuffled_rr_worst_bracket` call.

2. **Anonymized L-bit histogram, homogeneous configuration** (seed 001 §3): ``N`` people, ``N - 1`` all-zero,
   and one person who is all-zero in ``D`` and has ``j`` set bits in ``D_m``; the privacy loss is
   ``log R(S) = log P(S|D_m) - log P(S|D)``. The weight profile ``T`` (how many reports have ``l`` of the ``j``
   bits set, ``l = 0..j``) is a sufficient statistic, so its PLD *is* the histogram's PLD. Exact by enumeration of
   the ``C(N + j, j)`` profiles; large sizes must use the certified bounds of :mod:`sufficientdp.ratio.tail`.

References:
    seed 000 (papers/000_2c4289e004756bf1.txt) §3.1, §3.1.4, §4; seed 001
    (papers/001_3d8ddaba8b46cf9c.txt) eq. (1.5)–(1.7), (3.4)–(3.6); digest §1.2, §1.5 eq. (3).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._errors import ParameterError
from .._frozen import data_frame, freeze, readonly, thaw
from .._numerics.search import Bracket, Midpoint, scan, search, verdict
from .._numerics.stats import scipy_stats
from .._validation import (
    check_int,
    check_open_interval,
    check_population,
    check_positive_finite,
    check_real_array,
    renamed_fields,
)
from ..loss.distribution import PrivacyLossDistribution
from ..loss.result import Direction, Interval, Kind, check_choice, check_direction
from ..ratio.single_bit import DIRECTIONS, _Pairs, _remove_pairs, _TwoBinomial, worst_over_crowds
from .amplification import _up as _round_up

__all__ = [
    "MAX_PROFILE_ATOMS",
    "ShuffledRRBracket",
    "ShuffledRRProfile",
    "homogeneous_histogram_pld",
    "shuffled_rr_pld",
    "shuffled_rr_profile",
    "shuffled_rr_worst_bracket",
    "shuffled_rr_worst_profile",
]

#: Largest number of weight profiles ``C(N + j, j)`` that :func:`homogeneous_histogram_pld` enumerates.
MAX_PROFILE_ATOMS = 1_000_000
_DIRECTIONS = tuple(d for d in DIRECTIONS if d != "both")  # ("add", "remove"): one pair, not the worse of two
_NEG_INF = -math.inf


def _check_tail_tol(tail_tol: Any) -> float:
    if isinstance(tail_tol, bool) or not isinstance(tail_tol, numbers.Real) or not (0.0 <= float(tail_tol) <= 1e-10):
        raise ParameterError(f"tail_tol must be in [0, 1e-10]; got {tail_tol!r}")
    return float(tail_tol)


def _check_direction(direction: Any) -> str:
    return check_choice("direction", direction, _DIRECTIONS)


# ---------------------------------------------------------------------------------------------------------------
# shuffled binary randomized response
# ---------------------------------------------------------------------------------------------------------------


class _LogPrev:
    """``A' = A_{n-1}(m)`` through :mod:`sufficientdp.ratio.single_bit`'s exact log-domain convolution (any size)."""

    method = "log-domain"

    def __init__(self, n1: int, m: int, q: float) -> None:
        self.n1 = n1
        self._dist = _TwoBinomial.of(n1, m, q) if n1 >= 1 else None

    def log_pmf(self, s: NDArray[np.int64]) -> NDArray[np.float64]:
        if self._dist is None:  # A_0(0) is the point mass at 0
            return np.where(s == 0, 0.0, _NEG_INF)
        return self._dist.log_value("pmf", s)

    def log_cdf(self, x: int) -> float:
        """``log P[A' <= x]`` (exact)."""
        if x < 0:
            return _NEG_INF
        if self._dist is None or x >= self.n1:
            return 0.0
        return float(self._dist.log_value("cdf", np.array([x]))[0])

    def log_sf(self, x: int) -> float:
        """``log P[A' >= x]`` (exact)."""
        if x <= 0:
            return 0.0
        if self._dist is None or x > self.n1:
            return _NEG_INF
        return float(self._dist.log_value("sf", np.array([x]))[0])


#: Mass of each binomial left out of the linear-domain convolution window.
_CONV_TAIL = 1e-80


class _ConvPrev:
    """``A' = Bin(m, p) + Bin(n1 - m, q)`` by a direct linear-domain convolution over the binomials' bulk.

    Each binomial is restricted to a window outside which its exact mass (scipy's ``logcdf``/``logsf``) is at most
    ``tau = 1e-80``, so every convolved pmf value is low by at most ``2 tau`` (absolute) and never high; the cdf /
    sf values used for the dropped tails are rounded *up* by the left-out mass. The convolution adds positive terms
    only (no cancellation), so its relative rounding error is below ``len * 2**-53``. It is used only on windows
    where every pmf value exceeds ``1e30 * 2 tau`` (truncation below 1e-30 relative; checked, otherwise the caller
    falls back to :class:`_LogPrev`).
    """

    method = "linear-convolution"

    def __init__(self, n1: int, m: int, q: float) -> None:
        p = 1.0 - q
        self.n1 = n1
        self._size2 = n1 - m
        self._a1, self._b1 = self._bulk(m, p)
        self._a2, self._b2 = self._bulk(n1 - m, q)
        j = np.arange(self._a2, self._a2 + self._b2.size)
        binom = scipy_stats().binom  # (imported on first use: the exact scan does not need scipy.stats)
        self._cdf2 = np.exp(binom.logcdf(j, n1 - m, q))  # P[X2 <= j] on the bulk
        self._sf2 = np.exp(binom.logsf(j - 1, n1 - m, q))  # P[X2 >= j] on the bulk

    @staticmethod
    def _bulk(size: int, prob: float) -> tuple[int, NDArray[np.float64]]:
        if size == 0:
            return 0, np.ones(1)
        mean, sd = size * prob, math.sqrt(size * prob * (1.0 - prob)) + 1.0
        log_tau = math.log(_CONV_TAIL)
        c = math.sqrt(2.0 * -log_tau)
        binom = scipy_stats().binom
        while True:
            lo = max(0, int(math.floor(mean - c * sd)))
            hi = min(size, int(math.ceil(mean + c * sd)))
            if (lo == 0 or binom.logcdf(lo - 1, size, prob) <= log_tau) and \
                    (hi == size or binom.logsf(hi, size, prob) <= log_tau):
                return lo, np.exp(binom.logpmf(np.arange(lo, hi + 1), size, prob))
            c *= 1.25

    def pmf(self, s_lo: int, s_hi: int) -> NDArray[np.float64]:
        """``P[A' = s]`` for s = s_lo..s_hi, each low by at most ``2 tau``."""
        l1 = self._b1.size
        start = s_lo - self._a1 - l1 + 1  # b2 is needed at indices start..stop (zero outside its bulk)
        stop = s_hi - self._a1
        pad = np.zeros(stop - start + 1)
        i0, i1 = max(start, self._a2), min(stop, self._a2 + self._b2.size - 1)
        if i0 <= i1:
            pad[i0 - start: i1 - start + 1] = self._b2[i0 - self._a2: i1 - self._a2 + 1]
        return np.convolve(pad, self._b1, mode="valid")

    def _other_tail(self) -> float:
        return 0.0 if (self._a2 == 0 and self._a2 + self._b2.size - 1 == self._size2) else _CONV_TAIL

    def cdf_upper(self, x: int) -> float:
        """Upper bound on ``P[A' <= x]``: ``sum_j b1(j) (P[X2 <= x - j] + tau) + tau``."""
        if x < 0:
            return 0.0
        y = x - np.arange(self._a1, self._a1 + self._b1.size) - self._a2
        f = np.where(y < 0, 0.0, np.where(y >= self._b2.size, 1.0, self._cdf2[np.clip(y, 0, self._b2.size - 1)]))
        return min(1.0, float(self._b1 @ np.minimum(f + self._other_tail(), 1.0)) + _CONV_TAIL)

    def sf_upper(self, x: int) -> float:
        """Upper bound on ``P[A' >= x]``."""
        if x <= 0:
            return 1.0
        y = x - np.arange(self._a1, self._a1 + self._b1.size) - self._a2
        f = np.where(y <= 0, 1.0, np.where(y >= self._b2.size, 0.0, self._sf2[np.clip(y, 0, self._b2.size - 1)]))
        return min(1.0, float(self._b1 @ np.minimum(f + self._other_tail(), 1.0)) + _CONV_TAIL)


def _log(x: float) -> float:
    return math.log(x) if x > 0.0 else _NEG_INF


def _ro(a: NDArray[np.float64]) -> NDArray[np.float64]:
    a.setflags(write=False)
    return a


#: Above this min(m, n - 1 - m) (and with tail_tol > 0) the linear-domain convolution is used (much faster).
_CONV_MIN_M = 50


@lru_cache(maxsize=8)
def _pair(n: int, m: int, q: float, tail_tol: float
          ) -> tuple[NDArray[np.float64], NDArray[np.float64], float, float, str]:
    """``(log A_n(m)(s), log A_n(m+1)(s))`` on a window, the dropped masses outside it, and the method used.

    Both come from ``A' = A_{n-1}(m)``: ``A_n(m) = A' + Ber(q)``, ``A_n(m+1) = A' + Ber(p)`` (seed 000 §3.1.4).
    """
    lq, lp = math.log(q), math.log1p(-q)
    p_ = 1.0 - q
    exact = _LogPrev(n - 1, m, q)
    lo, hi = 0, n
    drop_a = drop_b = 0.0
    conv = None
    if tail_tol > 0.0:
        mean = m * p_ + (n - m) * q + 0.5
        sd = math.sqrt(n * p_ * q) + 1.0
        log_tol = math.log(tail_tol) - math.log(2.0)
        k = math.sqrt(2.0 * -log_tol) + 1.0
        conv = _ConvPrev(n - 1, m, q) if min(m, n - 1 - m) > _CONV_MIN_M else None
        while True:
            lo = max(0, int(math.floor(mean - k * sd)))
            hi = min(n, int(math.ceil(mean + k * sd)))
            if conv is not None:  # upper bounds on the dropped masses
                f1, f2 = conv.cdf_upper(lo - 1), conv.cdf_upper(lo - 2)
                s1, s0 = conv.sf_upper(hi), conv.sf_upper(hi + 1)
                low_a, low_b = _log(p_ * f1 + q * f2), _log(q * f1 + p_ * f2)
                up_a, up_b = _log(q * s1 + p_ * s0), _log(p_ * s1 + q * s0)
            else:  # exact
                f1l, f2l = exact.log_cdf(lo - 1), exact.log_cdf(lo - 2)
                s1l, s0l = exact.log_sf(hi), exact.log_sf(hi + 1)
                low_a, low_b = float(np.logaddexp(lp + f1l, lq + f2l)), float(np.logaddexp(lq + f1l, lp + f2l))
                up_a, up_b = float(np.logaddexp(lq + s1l, lp + s0l)), float(np.logaddexp(lp + s1l, lq + s0l))
            if max(low_a, low_b, up_a, up_b) <= log_tol or (lo == 0 and hi == n):
                break
            k *= 1.25
        if (lo, hi) != (0, n):
            drop_a = min(1.0, math.exp(float(np.logaddexp(low_a, up_a))))
            drop_b = min(1.0, math.exp(float(np.logaddexp(low_b, up_b))))
    if conv is not None:
        vals = conv.pmf(lo - 1, hi)
        s_all = np.arange(lo - 1, hi + 1)
        inside = (s_all >= 0) & (s_all <= n - 1)  # the support of A'
        if float(vals[inside].min()) > 1e30 * 2.0 * _CONV_TAIL:
            prev = np.full(vals.shape, _NEG_INF)
            prev[inside] = np.log(vals[inside])
            la, lb = prev[:-1], prev[1:]
            return (_ro(np.logaddexp(lq + la, lp + lb)), _ro(np.logaddexp(lp + la, lq + lb)), drop_a, drop_b,
                    conv.method)
    prev = exact.log_pmf(np.arange(lo - 1, hi + 1, dtype=np.int64))
    la, lb = prev[:-1], prev[1:]  # A'(s-1), A'(s)
    return (_ro(np.logaddexp(lq + la, lp + lb)), _ro(np.logaddexp(lp + la, lq + lb)), drop_a, drop_b,
            exact.method)


def shuffled_rr_pld(*, population: int | None = None, m: int, q: float, direction: str = "remove",
                    tail_tol: float = 1e-30, n: int | None = None) -> PrivacyLossDistribution:
    """Exact PLD of the count of reported ones in shuffled binary randomized response.

    The pair is ``(A_n(m), A_n(m+1))`` ("remove": ``P = A_n(m)``) or its reverse ("add"); see the module docstring.
    Losses are ``log P(s) - log Q(s)`` from exact log-domain pmfs, so they stay accurate where both pmfs
    underflow a float.

    With ``tail_tol > 0`` only the window of ``s`` around the mean whose complement has exact mass
    ``<= tail_tol`` under both measures is kept (at ``n = 1e6`` a few thousand values instead of a million); the
    dropped ``P``-mass (computed exactly from the log cdf/sf) goes to the ``+inf`` atom and the dropped ``Q``-mass to
    the ``-inf`` record, so ``delta``/``eta`` of the result (and of its reverse and compositions) are upper bounds
    exceeding the exact values by at most ``tail_tol``. ``tail_tol = 0`` keeps the whole support 0..n (exact).

    Args:
        population: n, the people, >= 1 (required; ``n``, its former name, is deprecated).
        m: ones among the other n - 1 people, 0 <= m <= n - 1.
        q: flip probability in (0, 0.5).
        direction: ``"remove"`` or ``"add"``.
        tail_tol: in [0, 1e-10]; default 1e-30.

    Returns:
        A :class:`~sufficientdp.accounting.pld.PrivacyLossDistribution` .

    Raises:
        ParameterError: any argument out of range.

    References:
        seed 000 §3.1 (A_n(m), pi), §3.1.4 (A_n from A_{n-1}); seed 001 eq. (1.7).

    Examples:
        >>> pld = shuffled_rr_pld(population=1, m=0, q=0.25)  # n = 1: local RR, losses +-log 3
        >>> [round(float(x), 6) for x in pld.losses], round(float(pld.delta(0.0)), 6)
        ([-1.098612, 1.098612], 0.5)
    """
    n = check_population(population, n)
    m = check_int("m", m, minimum=0, maximum=n - 1)
    q = check_open_interval("q", q, 0.0, 0.5)
    direction = _check_direction(direction)
    tol = _check_tail_tol(tail_tol)
    lam, lam1, drop_m, drop_m1, _method = _pair(n, m, q, tol)
    if direction == "remove":
        lp, lq_, drop_p, drop_q = lam, lam1, drop_m, drop_m1
    else:
        lp, lq_, drop_p, drop_q = lam1, lam, drop_m1, drop_m
    # both pmfs are positive on 0..n (0 < q < 1/2): every loss is finite; losses straight from the log pmfs
    probs = np.exp(lp)
    inf_mass = min(1.0, drop_p)
    total = float(probs.sum()) + inf_mass
    if abs(total - 1.0) > 1e-12:
        # at n ~ 1e6 the log pmfs carry ~1e-9 relative rounding (gammaln of arguments ~1e7 has ulp ~2e-9), enough to
        # trip the PLD's 1e-9 normalisation check; rescale the kept atoms (a change of the same ~1e-9 relative order)
        probs = probs * ((1.0 - inf_mass) / float(probs.sum()))
    return PrivacyLossDistribution(losses=lp - lq_, probabilities=probs, infinity_mass=inf_mass,
                                   neg_infinity_mass=min(1.0, drop_q))


@renamed_fields({"n": "population"})
@dataclass(frozen=True, slots=True, kw_only=True)
class ShuffledRRProfile:
    """Privacy profile ``delta(eps)`` and tail ``eta(eps) = P[L > eps]`` of shuffled binary randomized response.

    Attributes:
        epsilon: the epsilons (1-D array).
        delta: hockey-stick ``delta(eps)``, worst over the directions (and over ``m`` for a worst profile).
        eta: ``P[L > eps]``, worst likewise.
        population, q: the configuration (n people; ``n`` is the former name, deprecated).
        m: the ``m`` of a single-pair profile, else None.
        worst_m_delta, worst_m_eta: per epsilon, the ``m`` attaining the worst value (``-1`` where it is 0);
            for a single pair, ``m`` everywhere.
        worst_direction_delta, worst_direction_eta: per epsilon, ``"add"`` or ``"remove"`` (``""`` where the value
            is 0). In a full scan only "remove" pairs are computed; the remove pair at ``m > n - 1 - m`` is reported
            as the identical "add" pair at ``n - 1 - m``, and ties keep the smallest ``m``.
        kind: a :class:`~sufficientdp.loss.result.Kind`: ``"exact"`` (``tail_tol = 0``), ``"bound"`` (upper bounds
            within ``tail_tol`` of exact; for a worst profile: the upper ends of the engine's rounding brackets) or,
            for a worst profile over a proper subset of ``m``, ``"lower bound"`` (a lower bound on the worst case).
        tail_tol: the truncation tolerance used.
        scanned: which ``m`` were examined.
        details: extras, read-only (a :class:`~sufficientdp._frozen.FrozenDict`; ``to_dict`` gives plain JSON).

    The arrays are read-only copies (results are immutable). :meth:`to_pandas` gives one row per epsilon.
    """

    epsilon: NDArray[np.float64]
    delta: NDArray[np.float64]
    eta: NDArray[np.float64]
    population: int
    q: float
    m: int | None
    worst_m_delta: NDArray[np.int64]
    worst_m_eta: NDArray[np.int64]
    worst_direction_delta: tuple[str, ...] = ()
    worst_direction_eta: tuple[str, ...] = ()
    kind: Kind = Kind.EXACT
    tail_tol: float = 0.0
    scanned: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("epsilon", "delta", "eta"):
            object.__setattr__(self, name, readonly(getattr(self, name), np.float64))
        for name in ("worst_m_delta", "worst_m_eta"):
            object.__setattr__(self, name, readonly(getattr(self, name), np.int64))
        for name in ("worst_direction_delta", "worst_direction_eta"):
            object.__setattr__(self, name, tuple(str(d) for d in getattr(self, name)))
        object.__setattr__(self, "kind", _kind(self.kind))
        object.__setattr__(self, "details", freeze(self.details))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "epsilon": self.epsilon.tolist(), "delta": self.delta.tolist(), "eta": self.eta.tolist(),
            "population": self.population, "q": self.q, "m": self.m, "worst_m_delta": self.worst_m_delta.tolist(),
            "worst_m_eta": self.worst_m_eta.tolist(), "worst_direction_delta": list(self.worst_direction_delta),
            "worst_direction_eta": list(self.worst_direction_eta), "kind": str(self.kind), "tail_tol": self.tail_tol,
            "scanned": self.scanned, "details": thaw(self.details),
        }

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` indexed by ``epsilon``: ``delta``, ``eta``, ``worst_m_delta``, ``worst_m_eta`` and,
        where recorded, ``worst_direction_delta``, ``worst_direction_eta`` (the per-epsilon fields).

        Raises:
            ImportError: pandas is not installed (``pip install 'sufficientdp[pandas]'``).
        """
        cols: dict[str, Any] = {"epsilon": self.epsilon, "delta": self.delta, "eta": self.eta,
                                "worst_m_delta": self.worst_m_delta, "worst_m_eta": self.worst_m_eta}
        for name in ("worst_direction_delta", "worst_direction_eta"):
            if len(getattr(self, name)) == self.epsilon.size:
                cols[name] = getattr(self, name)
        return data_frame(cols, index="epsilon")


def _kind(kind: Any) -> Kind:
    """``kind`` as a :class:`Kind` (a member or its string), else ParameterError."""
    if kind not in tuple(Kind):
        raise ParameterError(f"kind must be one of {tuple(k.value for k in Kind)}; got {kind!r}")
    return Kind(kind)


def _eps_array(epsilon: ArrayLike) -> NDArray[np.float64]:
    # non-empty, finite, >= 0 ("epsilon must be finite and in [0, inf); got ...")
    return np.atleast_1d(check_real_array("epsilon", epsilon, low=0.0, high=math.inf, closed_low=True)).ravel()


def shuffled_rr_profile(*, population: int | None = None, m: int, q: float, epsilon: ArrayLike,
                        tail_tol: float = 1e-30, n: int | None = None) -> ShuffledRRProfile:
    """``delta(eps)`` and ``eta(eps)`` of the pair ``(A_n(m), A_n(m+1))``, worst of the two directions.

    Args:
        population, m, q: as in :func:`shuffled_rr_pld` (``n``: the former name of ``population``, deprecated).
        epsilon: one or more epsilons (finite, >= 0).
        tail_tol: as in :func:`shuffled_rr_pld`.

    Returns:
        A :class:`ShuffledRRProfile` (``kind="exact"`` for ``tail_tol = 0``, else ``"bound"``).

    Examples:
        >>> r = shuffled_rr_profile(population=20, m=1, q=0.2, epsilon=0.5)
        >>> round(float(r.delta[0]), 6)  # = single_bit_tail(population=20, m=1, q=0.2, epsilon=0.5).delta
        0.024494
    """
    n = check_population(population, n)
    eps = _eps_array(epsilon)
    tol = _check_tail_tol(tail_tol)
    per = {d: shuffled_rr_pld(population=n, m=m, q=q, direction=d, tail_tol=tol) for d in _DIRECTIONS}
    deltas = {d: np.atleast_1d(per[d].delta(eps)) for d in _DIRECTIONS}
    etas = {d: np.atleast_1d(per[d].eta(eps)) for d in _DIRECTIONS}
    d_dir = tuple("remove" if deltas["remove"][i] >= deltas["add"][i] else "add" for i in range(eps.size))
    e_dir = tuple("remove" if etas["remove"][i] >= etas["add"][i] else "add" for i in range(eps.size))
    ms = np.full(eps.size, m, dtype=np.int64)
    return ShuffledRRProfile(
        epsilon=eps, delta=np.maximum(deltas["add"], deltas["remove"]), eta=np.maximum(etas["add"], etas["remove"]),
        population=n, q=q, m=m, worst_m_delta=ms, worst_m_eta=ms.copy(), worst_direction_delta=d_dir,
        worst_direction_eta=e_dir, kind=Kind.EXACT if tol == 0.0 else Kind.BOUND, tail_tol=tol, scanned=f"m = {m}",
        details={"per_direction": {d: {"delta": deltas[d].tolist(), "eta": etas[d].tolist()} for d in _DIRECTIONS}},
    )


def _pairs_both_ways(n: int, q: float, eps: float, ms: list[int]) -> tuple[_Pairs, dict[int, int]]:
    """Remove-direction pairs at ``ms`` and ``n - 1 - ms`` (the add pairs at ``ms``), by the one worst-case engine."""
    every = np.unique(np.array(ms + [n - 1 - m for m in ms], dtype=np.int64))
    pairs = _remove_pairs(n, q, eps, every)
    return pairs, {int(m): i for i, m in enumerate(every)}


def shuffled_rr_worst_profile(*, population: int | None = None, q: float, epsilon: ArrayLike,
                              ms: ArrayLike | None = None, max_scan: int = 1_000_000, tail_tol: float = 1e-30,
                              n: int | None = None) -> ShuffledRRProfile:
    """Worst ``delta(eps)`` and ``eta(eps)`` over every neighbouring pair, per epsilon.

    Every pair ``(A_n(m), A_n(m+1))``, ``m = 0..n-1``, both directions, is covered (evaluated, or proved below the
    worst) by :func:`sufficientdp.ratio.single_bit.worst_over_crowds` (O(n) per epsilon; n = 1e6 in about a second;
    refused above ``max_scan``). No end point is assumed: the worst ``m`` is returned per epsilon. Pass ``ms`` to
    evaluate a subset (both directions at each given m); unless it covers every ``m`` the result is then only a
    **lower bound** on the worst case (``kind="lower bound"``): each pair's rigorous lower end, maximised over the
    subset.

    Args:
        population: n, the people, >= 1 (required; ``n``, its former name, is deprecated).
        q: flip probability in (0, 0.5).
        epsilon: one or more epsilons (finite, >= 0).
        ms: optional subset of m values in [0, n-1].
        max_scan: largest n for a full scan (default 10**6).
        tail_tol: kept for compatibility (no truncation happens any more): with ``tail_tol = 0`` the values are the
            exact ones (``kind="exact"``), otherwise the upper ends of their rounding brackets (``kind="bound"``).

    Returns:
        A :class:`ShuffledRRProfile` with ``m=None``, ``worst_m_delta`` / ``worst_m_eta`` per epsilon
        (``-1`` where the worst value is 0) and ``scanned``. ``kind``: ``"exact"``, ``"bound"`` or
        ``"lower bound"`` (a proper subset ``ms``). ``details["pairs"]`` per epsilon: the engine's counters.

    Raises:
        ParameterError: arguments out of range, empty ``ms``, or ``n > max_scan`` without ``ms``.

    Examples:
        >>> r = shuffled_rr_worst_profile(population=20, q=0.2, epsilon=0.5)
        >>> int(r.worst_m_delta[0]), round(float(r.delta[0]), 6)  # = single_bit_worst_tail(population=20, q=0.2, ...)
        (1, 0.024494)
    """
    n = check_population(population, n)
    q = check_open_interval("q", q, 0.0, 0.5)
    eps = _eps_array(epsilon)
    max_scan = check_int("max_scan", max_scan, minimum=1)
    tol = _check_tail_tol(tail_tol)
    if ms is None:
        if n > max_scan:
            raise ParameterError(
                f"population must be <= max_scan = {max_scan} to scan every m; got {n} (pass ms to scan a subset)")
        m_list = list(range(n))
        scanned = "all m = 0..n-1 (both directions, via the mirror symmetry)"
    else:
        m_list = sorted({check_int("ms", v, minimum=0, maximum=n - 1) for v in np.atleast_1d(np.asarray(ms))})
        if not m_list:
            raise ParameterError("ms must contain at least one m in [0, n-1]; got an empty list")
        scanned = f"subset of {len(m_list)} values of m, both directions (not a worst case over all m)"
    subset = len(m_list) < n  # a proper subset: the maximum over it is only a lower bound on the worst case
    if not subset and ms is not None:
        scanned = "all m = 0..n-1 (given as ms), both directions"
    k = eps.size
    best = {"delta": np.zeros(k), "eta": np.zeros(k)}
    arg = {"delta": np.full(k, -1, dtype=np.int64), "eta": np.full(k, -1, dtype=np.int64)}
    dirs: dict[str, list[str]] = {"delta": [], "eta": []}
    counters = []
    for i, e in enumerate(eps):
        if not subset:
            w = worst_over_crowds(n, q, float(e))
            counters.append(w.details)
            for name in ("delta", "eta"):
                best[name][i] = getattr(w, name if tol == 0.0 else f"{name}_upper")
                arg[name][i] = getattr(w, f"worst_m_{name}")
                dirs[name].append(getattr(w, f"worst_direction_{name}"))
            continue
        pairs, where = _pairs_both_ways(n, q, float(e), m_list)
        for name in ("delta", "eta"):
            best[name][i], arg[name][i], direction = _best_scanned(pairs, where, m_list, n, name)
            dirs[name].append(direction)
    details: dict[str, Any] = {"pairs_examined": 2 * len(m_list)}
    if counters:
        details["pairs"] = counters
    if subset:
        kind = Kind.LOWER_BOUND
    else:
        kind = Kind.EXACT if tol == 0.0 else Kind.BOUND
    return ShuffledRRProfile(
        epsilon=eps, delta=best["delta"], eta=best["eta"], population=n, q=q, m=None, worst_m_delta=arg["delta"],
        worst_m_eta=arg["eta"], worst_direction_delta=tuple(dirs["delta"]), worst_direction_eta=tuple(dirs["eta"]),
        kind=kind, tail_tol=tol, scanned=scanned, details=details,
    )


# ---------------------------------------------------------------------------------------------------------------
# worst case over m at any n: exact scan, or a rigorous bracket
# ---------------------------------------------------------------------------------------------------------------

#: Grid of ``eps' / eps`` used by the eta upper bound ``eta(eps) <= delta(eps') / (1 - e^(eps' - eps))``.
_ETA_GRID = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98)
_EPS_ULP = 2.220446049250313e-16


@renamed_fields({"n": "population"})
@dataclass(frozen=True, slots=True, kw_only=True)
class ShuffledRRBracket:
    """Worst-case ``delta(eps)`` and ``eta(eps)`` of shuffled binary RR over all neighbours, exact or bracketed.

    ``kind="exact"``: every pair ``(m, m+1)``, both directions, was evaluated exactly (to floating-point accuracy)
    and ``delta_lower == delta_upper``, ``eta_lower == eta_upper``. ``kind="bracket"``: the lower ends are the
    exact worst over the scanned ``m`` only (a valid lower bound on the worst case), the upper ends are rigorous
    upper bounds valid for every ``m`` (``upper_source`` names them). The safe numbers are the upper ends.

    **Rigorous vs unverified.** ``delta_upper`` / ``eta_upper`` use only bounds whose statement is verified: the
    data-processing bound ``local-rr`` (proved in :func:`_delta_upper_all_m`), this module's own scan, and any
    published amplification bound whose :class:`~sufficientdp.accounting.amplification.AmplificationBound` says
    ``verified=True`` (today none: BBGN19, FMT21 and EFMRTT19 were checked against reference code only). Tighter
    values resting on unverified published statements are reported separately in ``delta_upper_unverified`` /
    ``eta_upper_unverified`` (``unverified_source`` names them); they are upper bounds only *if* those statements
    are what the papers prove, and are never the safe numbers.

    Attributes:
        delta_lower, delta_upper: bracket on the worst hockey-stick ``delta(eps)`` (upper end: rigorous).
        eta_lower, eta_upper: bracket on the worst tail ``eta(eps) = P[L > eps]`` (upper end: rigorous).
        kind: ``Kind.EXACT`` or ``Kind.BRACKET`` (a :class:`~sufficientdp.loss.result.Kind`; equal to its string).
        worst_m: the ``m`` of the largest scanned lower ``delta`` (representative: the ``"add"`` pair at ``m`` is the
            ``"remove"`` pair at ``n - 1 - m``), ``-1`` if every scanned value is 0.
        worst_direction: ``"add"``, ``"remove"`` or ``""`` for ``worst_m``.
        worst_m_eta: likewise for ``eta``.
        scanned: which ``m`` were evaluated.
        upper_source: what the rigorous upper ends come from.
        population, q, epsilon: the configuration (n people; ``n`` is the former name, deprecated).
        delta_upper_unverified, eta_upper_unverified: the smallest upper end from bounds with ``verified=False``,
            reported only when below the rigorous upper end (else None); never used for ``delta_upper`` /
            ``eta_upper``.
        unverified_source: what the unverified values come from (None when both are None).
        bound_status: per upper bound considered (``local-rr``, ``bbgn19``, ``fmt21``, ``efmrtt19``): its
            ``delta`` at ``epsilon`` (None if not applicable), ``verified`` flag and ``provenance``; empty for
            ``kind="exact"`` (no bound used). Read-only.
        details: extras, read-only: per-bound deltas, pairs evaluated, the eps' used for ``eta_upper``
            (``to_dict`` gives plain JSON).
    """

    delta_lower: float
    delta_upper: float
    eta_lower: float
    eta_upper: float
    kind: Kind
    worst_m: int
    worst_direction: str
    worst_m_eta: int
    scanned: str
    upper_source: str
    population: int
    q: float
    epsilon: float
    delta_upper_unverified: float | None = None
    eta_upper_unverified: float | None = None
    unverified_source: str | None = None
    bound_status: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _kind(self.kind))
        object.__setattr__(self, "bound_status", freeze(self.bound_status))
        object.__setattr__(self, "details", freeze(self.details))

    @property
    def delta_interval(self) -> Interval:
        """``Interval(delta_lower, delta_upper, delta_upper)``: the value reported is the rigorous upper end."""
        return Interval(self.delta_lower, self.delta_upper, self.delta_upper, kind=Kind(self.kind))

    @property
    def eta_interval(self) -> Interval:
        """``Interval(eta_lower, eta_upper, eta_upper)``: the value reported is the rigorous upper end."""
        return Interval(self.eta_lower, self.eta_upper, self.eta_upper, kind=Kind(self.kind))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        d = {f: thaw(getattr(self, f)) for f in self.__dataclass_fields__}
        d["kind"] = str(self.kind)
        return d


def _best_scanned(pairs: _Pairs, where: dict[int, int], reps: list[int], n: int, name: str
                  ) -> tuple[float, int, str]:
    """Largest rigorous lower end over the scanned pairs (remove at each rep, and add = remove at n - 1 - rep)."""
    lo = getattr(pairs, f"log_{name}_lo")
    best, arg, direction = _NEG_INF, -1, ""
    for m in reps:  # ties keep the smallest m, "remove" first
        for d, i in (("remove", where[m]), ("add", where[n - 1 - m])):
            v = float(lo[i])
            if v > best + 1e-12:
                best, arg, direction = v, m, d
    return (math.exp(best) if best > -745.2 else 0.0), (arg if best > _NEG_INF else -1), direction


def _smallest_feasible_delta(ok: Callable[[float], bool]) -> float | None:
    """Smallest probed ``delta`` in (0, 1) with ``ok(delta)`` (a bisection on log delta; the result is checked).

    A coarse grid of ``log delta`` finds the first feasible point from below, then a bisection (geometric midpoint,
    :mod:`sufficientdp._numerics.search`) narrows the step to it. The value returned is always one at which ``ok``
    holds, so it is a rigorous certificate whether or not ``ok`` is monotone (monotonicity only affects how small
    the answer is; the tests check it).
    """
    grid = [math.exp(-x) for x in np.linspace(700.0, 1e-9, 401)]
    below, first = scan(ok, grid, until=True)
    if first is None or below is None:
        return first
    return search(verdict(ok), Bracket(fail=below, ok=first), Midpoint("log-geometric"), max_probes=80).ok


#: Provenance of the data-processing bound (a proof, not a published statement).
_LOCAL_RR_PROVENANCE = ("proved here (data processing, see _delta_upper_all_m): the count is the changed person's "
                        "RR report plus an independent, identically distributed rest, so delta <= max(0, p - e^eps q)")


@dataclass(frozen=True, slots=True)
class _Upper:
    """One upper bound on ``delta(epsilon)`` for every pair: its value (None if not applicable) and status."""

    value: float | None
    verified: bool
    provenance: str


def _delta_upper_all_m(*, n: int, q: float, epsilon: float) -> dict[str, _Upper]:
    """Upper bounds on ``delta(epsilon)`` valid for every neighbouring pair, each with its verification status.

    * ``local-rr`` (``verified=True``, proved here): data processing. The count is ``B + S'`` with ``B`` the
      changed person's report and ``S'`` the others' count, independent and identically distributed under both
      neighbours, so ``delta`` is at most that of one randomized response: ``max(0, p - e^eps q)``.
    * ``bbgn19``: :func:`~sufficientdp.accounting.amplification.bbgn19_delta` with ``epsilon0 = log(p/q)``.
    * ``fmt21`` / ``efmrtt19``: the smallest probed ``delta`` at which the theorem is valid and certifies an epsilon
      ``<= epsilon``; since ``delta(eps)`` is non-increasing in ``eps``, that ``delta`` bounds ``delta(epsilon)``.

    The amplification bounds carry the ``verified`` flag and ``provenance`` of their
    :class:`~sufficientdp.accounting.amplification.AmplificationBound` (read, not assumed): a bound with
    ``verified=False`` holds only if its published statement is what the paper proves.
    """
    from .amplification import bbgn19_delta, efmrtt19_epsilon, fmt21_epsilon

    p = 1.0 - q
    eps0 = math.log1p(-q) - math.log(q)
    ex = math.exp(epsilon)
    local = p - ex * q
    local = max(0.0, local + 8.0 * _EPS_ULP * (p + ex * q))  # rounding slack, upwards
    out: dict[str, _Upper] = {"local-rr": _Upper(min(1.0, local), True, _LOCAL_RR_PROVENANCE)}
    b = bbgn19_delta(epsilon, eps0, n)
    out["bbgn19"] = _Upper(b.delta, bool(b.verified), b.provenance)
    for name, fn in (("fmt21", fmt21_epsilon), ("efmrtt19", efmrtt19_epsilon)):
        status: dict[str, Any] = {}

        def ok(delta: float, fn: Callable[[float, int, float], Any] = fn, status: dict[str, Any] = status) -> bool:
            r = fn(eps0, n, delta)
            status.update(verified=bool(r.verified), provenance=r.provenance)
            return bool(r.valid and r.epsilon is not None and r.epsilon <= epsilon)

        value = _smallest_feasible_delta(ok)
        out[name] = _Upper(value, bool(status.get("verified", False)), str(status.get("provenance", "")))
    return out


def _label(name: str) -> str:
    return name + (" (inverted in delta, checked)" if name in ("fmt21", "efmrtt19") else "")


def _best(bounds: dict[str, _Upper], verified: bool) -> tuple[float, str] | None:
    """The smallest applicable bound with the given verification status (None if there is none)."""
    valid = {k: b.value for k, b in bounds.items() if b.value is not None and b.verified == verified}
    if not valid:
        return None
    name = min(valid, key=lambda k: (valid[k], k))
    return float(valid[name]), name


#: One ``eta`` upper end: value, the ``eps'`` used (None if not from the delta route), source.
_EtaEnd = tuple[float, float | None, str]


def _eta_upper_all_m(*, n: int, q: float, epsilon: float) -> tuple[_EtaEnd, _EtaEnd | None]:
    """``eta(epsilon)`` upper ends for every pair, from delta upper bounds at ``eps' < epsilon``.

    For any pair and ``eps' < eps``: ``delta(eps') = E_P[(1 - e^(eps' - L))_+] >= E_P[(1 - e^(eps' - L)) 1{L > eps}]
    >= P[L > eps] (1 - e^(eps' - eps))`` (the ``+inf`` atom contributes 1 >= the factor), so
    ``eta(eps) <= delta(eps') / (1 - e^(eps' - eps))``; minimised over a grid of ``eps'``. For ``eps >= epsilon0``
    every loss is ``<= epsilon0 <= eps`` (pure DP, data processing), so ``eta = 0``.

    Returns ``(rigorous, unverified)``: the first uses only verified delta bounds; the second only bounds with
    ``verified=False`` (None when none applies or in the pure-DP region).
    """
    eps0 = math.log1p(-q) - math.log(q)
    if epsilon >= _round_up(eps0, 16):
        return (0.0, None, "pure DP: every loss <= epsilon0 = log(p/q) <= epsilon"), None
    rig: _EtaEnd = (1.0, None, "no rigorous bound below 1 applies: trivial upper end 1")
    unv: _EtaEnd | None = None
    den = {f: -math.expm1(epsilon * f - epsilon) * (1.0 - 8.0 * _EPS_ULP) for f in _ETA_GRID}  # rounded down
    for f in _ETA_GRID:
        e1 = epsilon * f
        bounds = _delta_upper_all_m(n=n, q=q, epsilon=e1)
        for verified in (True, False):
            best = _best(bounds, verified)
            if best is None:
                continue
            val = min(1.0, _round_up(best[0] / den[f]))
            src = f"delta(eps') / (1 - e^(eps' - eps)) with {_label(best[1])} at eps' = {e1:.6g}"
            if verified and val < rig[0]:
                rig = (val, e1, src)
            elif not verified and (unv is None or val < unv[0]):
                unv = (val, e1, src)
    return rig, unv


def _unverified_end(lower: float, rigorous: float, value: float | None, source: str
                    ) -> tuple[float | None, str | None]:
    """An unverified upper end, reported only when below the rigorous one; flagged if below the lower end."""
    if value is None or not value < rigorous:
        return None, None
    if value < lower:
        return lower, (f"{source}; its value {value:.6g} is below the exact lower end, so that statement is refuted "
                       "at this configuration (floored at the lower end)")
    return value, source


_UNVERIFIED_NOTE = ("rests on a published statement not verified against the paper's text (see bound_status "
                    "provenance); an upper bound only if that statement is what the paper proves")


def shuffled_rr_worst_bracket(*, population: int | None = None, q: float, epsilon: float,
                              full_scan_max: int = 1_000_000, ends: int = 16, samples: int = 24,
                              progress: Callable[[int, int], None] | None = None, n: int | None = None
                              ) -> ShuffledRRBracket:
    """Worst ``delta(eps)`` and ``eta(eps)`` of shuffled binary RR over every neighbouring pair: exact or bracketed.

    * ``n <= full_scan_max`` (default 10**6): every pair ``(A_n(m), A_n(m+1))``, ``m = 0..n-1``, both directions,
      by :func:`sufficientdp.ratio.single_bit.worst_over_crowds` (O(n); n = 1e6 in about a second):
      ``kind="exact"``, lower == upper == the exact worst value. Its rounding bracket (about 1e-10 relative) is in
      ``details["delta_bracket"]`` / ``details["eta_bracket"]``.
    * ``n > full_scan_max``: the ``ends`` smallest and largest ``m`` and ``samples`` geometrically spaced interior
      ``m`` (with their mirrors), both directions. Lower end: the largest rigorous lower end over those pairs
      (same engine), a valid lower bound on the worst case (the worst ``m`` is usually near an end but that is not
      proved, so it is not assumed). Upper end: the smallest *verified* bound valid for every pair
      (today only ``local-rr`` data processing; an amplification bound counts once its ``verified`` flag is True;
      see :func:`_delta_upper_all_m`), never below the lower end; ``eta`` upper from
      ``eta(eps) <= delta(eps') / (1 - e^(eps' - eps))``, ``eps' < eps``. ``kind="bracket"``.

    Whenever the bracket path runs, the amplification bounds with ``verified=False`` (``bbgn19``, ``fmt21``,
    ``efmrtt19``) are evaluated too; if they are tighter they are reported as ``delta_upper_unverified`` /
    ``eta_upper_unverified`` (with ``unverified_source``), never as the upper end. ``bound_status`` lists every
    bound with its value, ``verified`` flag and provenance.

    Args:
        population: n, the people, >= 1 (required; ``n``, its former name, is deprecated).
        q: flip probability in (0, 0.5).
        epsilon: finite, > 0.
        full_scan_max: largest n evaluated in full (default 10**6; about a second there), >= 1.
        ends: how many m at each end are scanned in the bracket path, >= 1.
        samples: how many geometrically spaced interior m are scanned in the bracket path, >= 0.
        progress: optional ``progress(done, total)`` callback (over the m evaluated).

    Returns:
        A :class:`ShuffledRRBracket`.

    Raises:
        ParameterError: any argument out of range.

    References:
        seed 000 §3.1 (A_n(m)); amplification bounds in :mod:`sufficientdp.accounting.amplification`.

    Examples:
        >>> r = shuffled_rr_worst_bracket(population=20, q=0.2, epsilon=0.5)
        >>> r.kind, r.worst_m, round(r.delta_upper, 6)  # = single_bit_worst_tail(population=20, q=0.2, epsilon=0.5)
        ('exact', 1, 0.024494)
    """
    n = check_population(population, n)
    q = check_open_interval("q", q, 0.0, 0.5)
    eps = check_positive_finite("epsilon", epsilon)
    full_scan_max = check_int("full_scan_max", full_scan_max, minimum=1)
    ends = check_int("ends", ends, minimum=1)
    samples = check_int("samples", samples, minimum=0)
    half = (n - 1) // 2
    details: dict[str, Any] = {}
    if n <= full_scan_max:
        w = worst_over_crowds(n, q, eps, progress=progress)
        details.update(w.details, delta_bracket=[w.delta_lower, w.delta_upper],
                       eta_bracket=[w.eta_lower, w.eta_upper], method=w.method)
        return ShuffledRRBracket(
            delta_lower=w.delta, delta_upper=w.delta, eta_lower=w.eta, eta_upper=w.eta, kind=Kind.EXACT,
            worst_m=w.worst_m_delta, worst_direction=w.worst_direction_delta, worst_m_eta=w.worst_m_eta,
            scanned="all m = 0..n-1, both directions",
            upper_source=("exact scan of every m" if not w.details.get("pairs_bounded") else
                          "exact scan of every m (pairs proved below the worst bounded, not evaluated)"),
            population=n, q=q, epsilon=eps,
            details=details)
    interior = np.geomspace(ends, max(ends, half), samples) if samples and half > ends else np.array([])
    reps = sorted(set(range(min(ends, half + 1))) | {int(round(x)) for x in interior if ends <= x <= half})
    pairs, where = _pairs_both_ways(n, q, eps, reps)
    if progress is not None:
        progress(len(reps), len(reps))
    details.update(pairs_evaluated=2 * len(reps), representatives=reps)
    scanned = (f"m = 0..{min(ends, half + 1) - 1} and their mirrors n-{min(ends, half + 1)}..n-1, plus "
               f"{len(reps) - min(ends, half + 1)} geometrically spaced interior m in [{ends}, {half}] and "
               "their mirrors, both directions (not every m: the lower end is a lower bound)")
    d_lo, m_d, dir_d = _best_scanned(pairs, where, reps, n, "delta")
    e_lo, m_e, _ = _best_scanned(pairs, where, reps, n, "eta")
    bounds = _delta_upper_all_m(n=n, q=q, epsilon=eps)
    d_rig = _best(bounds, True)  # local-rr is always verified and applicable
    assert d_rig is not None
    d_unv = _best(bounds, False)
    (e_rig, e_eps, e_src), e_unv = _eta_upper_all_m(n=n, q=q, epsilon=eps)
    d_up, d_up_src = d_rig[0], _label(d_rig[1])
    e_up, e_up_src = e_rig, e_src
    if e_up >= 1.0 and d_up >= 1.0:
        d_up_src = e_up_src = "no rigorous bound applies: trivial upper end 1"
    d_up, e_up = max(d_lo, d_up), max(e_lo, e_up)
    d_uv, d_uv_src = _unverified_end(d_lo, d_up, None if d_unv is None else d_unv[0],
                                     "" if d_unv is None else _label(d_unv[1]))
    e_uv, e_uv_src = _unverified_end(e_lo, e_up, None if e_unv is None else e_unv[0],
                                     "" if e_unv is None else e_unv[2])
    unverified_source = None
    if d_uv is not None or e_uv is not None:
        unverified_source = (f"delta: {d_uv_src or 'none below the rigorous upper end'}; "
                             f"eta: {e_uv_src or 'none below the rigorous upper end'}. {_UNVERIFIED_NOTE}")
    status = {k: {"delta": b.value, "verified": b.verified, "provenance": b.provenance} for k, b in bounds.items()}
    details.update(delta_upper_bounds={k: b.value for k, b in bounds.items()}, eta_upper_eps_prime=e_eps,
                   eta_upper_unverified_eps_prime=None if e_uv is None or e_unv is None else e_unv[1],
                   epsilon0=math.log1p(-q) - math.log(q))
    return ShuffledRRBracket(
        delta_lower=d_lo, delta_upper=d_up, eta_lower=e_lo, eta_upper=e_up, kind=Kind.BRACKET,
        worst_m=m_d, worst_direction=dir_d, worst_m_eta=m_e, scanned=scanned,
        upper_source=f"delta: {d_up_src}; eta: {e_up_src}", population=n, q=q, epsilon=eps, delta_upper_unverified=d_uv,
        eta_upper_unverified=e_uv, unverified_source=unverified_source, bound_status=status, details=details)


# ---------------------------------------------------------------------------------------------------------------
# anonymized L-bit histogram, homogeneous configuration
# ---------------------------------------------------------------------------------------------------------------


def homogeneous_histogram_pld(*, q: float, population: int, outlier_bits: int,
                              outlier_in: Direction | str = Direction.FORWARD) -> PrivacyLossDistribution:
    """Exact PLD of the anonymized histogram for ``N - 1`` all-zero people plus one outlier with ``j`` set bits.

    ``D``: ``N`` all-zero vectors; ``D_m``: one of them replaced by a vector with ``j = outlier_bits`` set bits
    (the other ``L - j`` bits agree and do not matter). With ``a_l = Bin(l; j, q)`` the chance that a zero
    vector's report has ``l`` of the ``j`` bits set and ``b_l = Bin(l; j, 1 - q)`` the outlier's, the weight profile
    ``T`` (``t_l`` = reports with ``l`` of the ``j`` bits set) has, straight from the definition,

    * under ``D``: ``T ~ Multinomial(N, a)``;
    * under ``D_m``: ``P(T) = sum_l b_l Multinomial(N - 1, a)(T - e_l)``.

    ``T`` is sufficient for the pair, so this is the PLD of the full histogram. ``outlier_in=Direction.FORWARD``
    (alias ``"modified"``) is the paper's pair (seed 001 eq. 1.5–1.7): ``P`` = law under ``D_m``, ``Q`` = law under
    ``D``, loss ``log R(S)``. ``outlier_in=Direction.REVERSE`` (alias ``"original"``) is the reverse pair (``P`` =
    law under the homogeneous collection, loss ``-log R``).
    The enumeration of all ``C(N + j, j)`` profiles is the package's one homogeneous enumeration,
    :func:`sufficientdp.ratio.exact.homogeneous_ratio_distribution` (with ``L = j``), in the log domain (no
    underflow); this function adds the size limit that points to the certified bounds.

    Args:
        q: flip probability in (0, 0.5).
        population: N >= 1.
        outlier_bits: j >= 1.
        outlier_in: a :class:`~sufficientdp.loss.result.Direction`: ``FORWARD`` (default, the paper's direction)
            or ``REVERSE``; the aliases ``"modified"``/``"original"`` are accepted (the same results).

    Returns:
        A :class:`~sufficientdp.loss.PrivacyLossDistribution` (exact; ``method="exact-homogeneous"``).

    Raises:
        ParameterError: arguments out of range, or ``C(N + j, j) > MAX_PROFILE_ATOMS``: for large sizes use the
            certified bounds of :func:`sufficientdp.ratio.tail.certified_tail` /
            :func:`sufficientdp.ratio.tail.homogeneous_tail` (rigorous upper bounds on ``eta`` and ``delta``).

    References:
        seed 001 eq. (1.5)–(1.7), (3.4)–(3.6).

    Examples:
        >>> pld = homogeneous_histogram_pld(q=0.2, population=3, outlier_bits=2)
        >>> round(pld.max_loss, 10) == round(2 * math.log(4.0), 10)  # (p/q)^j at the all-ones output
        True
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    n = check_int("population", population, minimum=1)
    j = check_int("outlier_bits", outlier_bits, minimum=1)
    direction = check_direction("outlier_in", outlier_in, (Direction.FORWARD, Direction.REVERSE))
    count = math.comb(n + j, j)
    if count > MAX_PROFILE_ATOMS:
        raise ParameterError(
            f"the number of weight profiles C(N + j, j) must be <= MAX_PROFILE_ATOMS = {MAX_PROFILE_ATOMS}; got "
            f"{count} for N = {n}, j = {j}. For large sizes use the certified bounds of sufficientdp.ratio.tail "
            "(certified_tail / homogeneous_tail), which bound eta and delta rigorously from above"
        )
    from ..ratio.exact import homogeneous_ratio_distribution  # (scipy.special: not on the account command's path)

    return homogeneous_ratio_distribution(q, j, n, j, outlier_in=direction)
