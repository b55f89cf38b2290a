"""Exact ``eta`` for *structured* neighbouring pairs at large N, and a worst-case search over such pairs.

Seed 001's worst-case conjecture (§1.2) is false (ERRATA 5): bases that already hold a second copy of the outlier's
vector, or a few *partial* outliers, beat the homogeneous configuration. Exhaustive enumeration
(:mod:`sufficientdp.ratio.worst_case`) stops at N ~ 10. This module evaluates ``eta(epsilon)`` **exactly (as a
rigorous two-sided bracket)** for pairs whose common part ``D'`` is a *bulk* of ``n0`` copies of one vector plus a
small group, at any N (10**6 and beyond) for small L, and searches families of such pairs.

How: the report-class histogram is sufficient (bits on which every vector of the pair agrees form regions; a
report's class is its set-bit count per region; K classes), and ``R(S) = Q_Dm(S) / Q_D(S)`` is a ratio of two
polynomials in the class counts, each non-decreasing in every count. Boxes of histograms are therefore bounded by
their corners and decided whole (exact marginal masses above ``e**epsilon``, nothing below); the rest is refined down to single
histograms. The bracket is ``eta_lower = (mass decided above) - tau``, ``eta_upper = (mass decided above) + (ties)
+ tau``, with ``tau`` the exact binomial mass outside the enumerated box and ties ``|log R - epsilon| <= 1e-9``.
Derivation (sufficiency, the shift identity, the monotone bounds, the enumeration): ``docs/proofs/structured.md``.

Cost: the number of prefixes near the surface ``R = e**epsilon``; it is small when K <= 4 (every pair at L <= 2,
and at any L the families whose vectors take at most two patterns on the outlier's bits) at any N, and grows
with K and N otherwise (:data:`MAX_ITEMS` caps it; a family beyond it is skipped and reported). Measured: K <= 4
pairs take 0.01-0.5 s at N = 1e3-1e5; an L = 3 pair with one partial outlier (K = 6) at N = 1000, q = 0.2,
epsilon = 1 takes ~1.7 million prefixes (45 s), and beyond 3e7 at N = 1e4. Small epsilon (eta ~ 0.1) costs much
more than the tail regime that calibration targets.

Verification (tests/ratio/test_structured.py): brute force in exact rationals, the exhaustive enumeration of
:mod:`sufficientdp.ratio.exact`, the exact single-bit theory and seeded Monte Carlo (``docs/proofs/structured.md``).

References: seed 001 (``papers/001_3d8ddaba8b46cf9c.txt``) §1.2 (conjecture), eq. (1.5), (1.7), (2.2); ERRATA 5.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaln

from .._errors import ParameterError
from .._numerics.compositions import compositions
from .._numerics.logspace import log_falling_factorials, logsumexp, logsumexp_groups
from .._numerics.search import Bracket, Midpoint, search, verdict
from .._validation import (
    MAX_POPULATION,
    check_int,
    check_nonnegative_finite,
    check_open_interval,
    check_positive_finite,
)
from ..loss.distribution import _real_epsilon as _check_epsilon
from ..loss.result import Interval, Kind, Scope
from ._chernoff import binom_cdf, binom_sf
from .exact import _split_pair

if TYPE_CHECKING:
    from .worst_case import WorstCaseResult

__all__ = [
    "DEFAULT_PAIR_ITEMS",
    "DEFAULT_TIME_BUDGET",
    "FamilyStats",
    "MAX_COPIES",
    "MAX_GROUP",
    "MAX_ITEMS",
    "MAX_TERMS",
    "MAX_TIME_BUDGET",
    "StructuredPair",
    "StructuredSearchResult",
    "StructuredTail",
    "TooLarge",
    "candidate_pairs",
    "combined_claims",
    "homogeneous_pair",
    "structured_search",
    "structured_tail",
]

#: Largest number of histogram prefixes (rows of work) one evaluation may create before giving up.
MAX_ITEMS = 30_000_000
#: Largest number of group histograms ``u`` (compositions of m into K classes) per evaluation.
MAX_TERMS = 20_000
#: Default work cap per candidate pair in :func:`structured_search`.
DEFAULT_PAIR_ITEMS = 3_000_000
#: Default and largest time budget of :func:`structured_search` (seconds).
DEFAULT_TIME_BUDGET = 60.0
MAX_TIME_BUDGET = 3600.0
#: Largest group of extra vectors and largest number of copies of the outlier that :func:`candidate_pairs` builds.
MAX_GROUP = 4
MAX_COPIES = 256
#: Relative margin of every "above/below the threshold" decision; histograms closer than this are ties.
TIE = 1e-9
_CHUNK = 4_000_000  # items x terms per vectorized block
_MIN_SPLIT = 64  # a box of the remaining classes with at most this many histograms is not split
_MAX_CELLS = 4_000_000  # largest group-histogram x (m + 1)**2 table (32 MB)
_CANON_MAX_BITS = 5  # candidate pairs are deduplicated up to bit permutations up to this L
_SCREEN_ITEMS = 100_000  # structured_search: first-round work cap per candidate
_GROUPS_MAX_BITS = 4  # the "small groups" family (every group up to max_group) up to this L


class TooLarge(ParameterError):
    """The structured evaluation would exceed :data:`MAX_ITEMS` or :data:`MAX_TERMS`."""


# ----------------------------------------------------------------------------------------------------------------
# pairs


def _vec(code: int, bits: int) -> str:
    return "".join(str((code >> b) & 1) for b in range(bits))


@dataclass(frozen=True, slots=True)
class StructuredPair:
    """``D = D' + {x}``, ``D_m = D' + {x'}`` with ``D'`` given by vector counts (codes as in :mod:`exact`).

    Attributes:
        bits: L.
        common: ``((code, count), ...)`` of ``D'``, sorted by code, counts > 0, summing to N - 1.
        original_vector: code of ``x`` (in ``D``).
        modified_vector: code of ``x'`` (in ``D_m``).
        family: a short tag of the family that generated the pair (free text, for reports).
    """

    bits: int
    common: tuple[tuple[int, int], ...]
    original_vector: int
    modified_vector: int
    family: str = ""

    @classmethod
    def build(cls, bits: int, common: Mapping[int, int] | Iterable[tuple[int, int]], original_vector: int,
              modified_vector: int, family: str = "") -> StructuredPair:
        """Validated constructor; ``common`` maps vector codes to counts (zero counts are dropped)."""
        bits = check_int("bits", bits, minimum=1, maximum=30)
        items = dict(common.items()) if isinstance(common, Mapping) else dict(common)
        top = 1 << bits
        clean: dict[int, int] = {}
        for code, count in items.items():
            code = check_int("vector code", code, minimum=0, maximum=top - 1)
            count = check_int("count", count, minimum=0)
            if count:
                clean[code] = clean.get(code, 0) + count
        x = check_int("original_vector", original_vector, minimum=0, maximum=top - 1)
        xp = check_int("modified_vector", modified_vector, minimum=0, maximum=top - 1)
        if x == xp:
            raise ParameterError("original_vector and modified_vector must differ (the pair would be identical)")
        return cls(bits, tuple(sorted(clean.items())), x, xp, family)

    @classmethod
    def from_collections(cls, original: Any, modified: Any, family: str = "") -> StructuredPair:
        """The pair of two collections (people x bits 0/1 arrays) that differ in one person's vector.

        Examples:
            >>> StructuredPair.from_collections([[0, 0], [1, 1], [0, 0]], [[0, 0], [1, 1], [1, 1]]).label
            '{00×1, 11×1} + 00→11'
        """
        base, x, xp, bits = _split_pair(original, modified)
        codes, counts = np.unique(np.asarray(base, dtype=np.int64), return_counts=True)
        return cls.build(bits, {int(c): int(n) for c, n in zip(codes, counts)}, x, xp, family)

    @property
    def population(self) -> int:
        """N."""
        return sum(c for _, c in self.common) + 1

    @property
    def hamming(self) -> int:
        """Bits in which x and x' differ."""
        return bin(self.original_vector ^ self.modified_vector).count("1")

    def swapped(self) -> StructuredPair:
        """The pair in the other order (``x`` and ``x'`` exchanged)."""
        return replace(self, original_vector=self.modified_vector, modified_vector=self.original_vector)

    @property
    def label(self) -> str:
        """``{00×97, 10×2} + 11→00``: the common vectors with counts, then ``x → x'`` (bit 0 first)."""
        body = ", ".join(f"{_vec(c, self.bits)}×{n}" for c, n in self.common) or "∅"
        return f"{{{body}}} + {_vec(self.original_vector, self.bits)}→{_vec(self.modified_vector, self.bits)}"

    def codes(self) -> NDArray[np.int64]:
        """``D'`` as an array of codes (for small N: to cross-check against :mod:`exact`)."""
        return np.repeat(np.array([c for c, _ in self.common], dtype=np.int64),
                         [n for _, n in self.common]).astype(np.int64)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (vectors as bit strings, bit 0 first)."""
        return {"common": {_vec(c, self.bits): n for c, n in self.common},
                "original_vector": _vec(self.original_vector, self.bits),
                "modified_vector": _vec(self.modified_vector, self.bits),
                "population": self.population, "family": self.family, "label": self.label}


def homogeneous_pair(bits: int, population: int, weight: int, *, reverse: bool = False) -> StructuredPair:
    """The paper's configuration: ``D'`` = N - 1 zero vectors, outlier ``1^j 0^(L-j)`` in ``D_m`` (``reverse``:
    in ``D``)."""
    bits = check_int("bits", bits, minimum=1, maximum=30)
    population = check_int("population", population, minimum=1)
    weight = check_int("weight", weight, minimum=1, maximum=bits)
    y = (1 << weight) - 1
    common = {0: population - 1} if population > 1 else {}
    pr = StructuredPair.build(bits, common, 0, y, family=f"homogeneous j={weight}")
    return pr.swapped() if reverse else pr


# ----------------------------------------------------------------------------------------------------------------
# the model of one pair


def _bdtr(k: Any, n: Any, p: float) -> Any:
    """``P[Bin(n, p) <= k]`` (``0 <= k < n``) by boost's binomial cdf, the one scipy.stats uses. Not scipy.special's
    bdtr: it takes n as a C int (nan from n = 2**31: the structured tail of a crowd of 10**12 was [nan, nan]) and
    loses accuracy long before (P[X <= np] at n = 10**8, p = 0.3: 0.570 instead of 0.50005)."""
    return binom_cdf(np.asarray(k, dtype=float), np.asarray(n, dtype=float), p)


def _bdtrc(k: Any, n: Any, p: float) -> Any:
    """``P[Bin(n, p) > k]`` (``0 <= k < n``) by boost's binomial survival function (see :func:`_bdtr`)."""
    return binom_sf(np.asarray(k, dtype=float), np.asarray(n, dtype=float), p)


def _binom_interval(n: NDArray[np.int64], p: float, a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray[np.float64]:
    """``P[a <= X <= b]`` for ``X ~ Bin(n, p)``, elementwise, computed on the side of the smaller tail."""
    n = np.asarray(n, dtype=np.int64)
    a = np.maximum(np.asarray(a, dtype=np.int64), 0)
    b = np.minimum(np.asarray(b, dtype=np.int64), n)
    out = np.zeros(np.broadcast(n, a, b).shape)
    n, a, b = np.broadcast_arrays(n, a, b)
    ok = (a <= b) & (n >= 0)
    if not np.any(ok):
        return out
    nn, aa, bb = n[ok], a[ok], b[ok]  # integer counts
    full = (aa <= 0) & (bb >= nn)
    upper = aa > nn * p  # the interval sits in the upper half: difference of survival functions
    with np.errstate(invalid="ignore"):
        lower_form = np.where(bb >= nn, 1.0, _bdtr(np.minimum(bb, nn), nn, p)) - np.where(
            aa <= 0, 0.0, _bdtr(np.maximum(aa - 1, 0), nn, p))
        upper_form = np.where(aa <= 0, 1.0, _bdtrc(np.maximum(aa - 1, 0), nn, p)) - np.where(
            bb >= nn, 0.0, _bdtrc(np.minimum(bb, nn), nn, p))
    val = np.where(full, 1.0, np.where(upper, upper_form, lower_form))
    out[ok] = np.clip(np.nan_to_num(val, nan=0.0), 0.0, 1.0)
    return out


def _last_true(pred: Callable[[int], bool], a: int, b: int) -> int:
    """Largest k in [a, b) with ``pred(k)``, for ``pred`` true at a, false at b and monotone between (bisection)."""
    # integer bisection keeping "true at a, false at b"; it ends within bit_length(b - a) probes
    return int(search(verdict(lambda k: pred(int(k))), Bracket(fail=b, ok=a), Midpoint("integer"),
                      max_probes=max(b - a, 0).bit_length()).ok)


def _binom_box(n: int, p: float, tail: float) -> tuple[int, int, float]:
    """``[lo, hi]`` with ``P[X < lo] <= tail`` and ``P[X > hi] <= tail`` (X ~ Bin(n, p)) and the exact outside mass."""
    if n == 0:
        return 0, 0, 0.0
    mean = n * p

    def below(k: int) -> float:  # P[X < k]
        return 0.0 if k <= 0 else float(_bdtr(k - 1, n, p))

    def above(k: int) -> float:  # P[X > k]
        return 0.0 if k >= n else float(_bdtrc(k, n, p))

    # below() increases and above() decreases in k; below(0) = above(n) = 0 <= tail
    b = max(int(math.floor(mean)), 0)
    lo_ok = b if below(b) <= tail else _last_true(lambda k: below(k) <= tail, 0, b)
    a = min(int(math.ceil(mean)), n)
    hi_ok = a if above(a) <= tail else _last_true(lambda k: above(k) > tail, a, n) + 1
    return lo_ok, hi_ok, below(lo_ok) + above(hi_ok)


@dataclass
class _Model:
    """Everything about one pair at one q that the enumeration needs (see the module docstring)."""

    N: int
    n0: int
    m: int
    K: int
    classes: NDArray[np.int64]  # (K, regions) set-bit counts per region
    region_sizes: tuple[int, ...]
    log_pi0: NDArray[np.float64]  # (K,)
    U: NDArray[np.int64]  # (nu, K) group histograms
    log_pd: NDArray[np.float64]  # (nu,) log P_{G_D}(u)
    log_pdm: NDArray[np.float64]  # (nu,) log P_{G_Dm}(u)
    bulk: int
    analytic: int | None
    enum: list[int]  # enumerated classes, rarest first
    log_scale: NDArray[np.float64]  # (K,) log(N pi_0(v))
    U1: NDArray[np.int64]  # (nu1, K) histograms of the common group G (m - 1 people)
    log_pg: NDArray[np.float64]  # (nu1,) log P_G(u')
    rho_x: NDArray[np.float64]  # (K,) pi_x(c) / pi_0(c), scaled by exp(-log_rho_shift_x)
    rho_xp: NDArray[np.float64]  # (K,) pi_x'(c) / pi_0(c), scaled by exp(-log_rho_shift_xp)
    log_rho_shift: float  # log R = log(rho_xp . z / rho_x . z) + log_rho_shift


def _model(pair: StructuredPair, q: float) -> _Model:
    bits = pair.bits
    N = pair.population
    counts = dict(pair.common)
    bulk_code = max(counts, key=lambda c: (counts[c], -c)) if counts else pair.original_vector
    n0 = counts.get(bulk_code, 0)
    group: list[int] = []
    for c, k in sorted(counts.items()):
        if c != bulk_code:
            group += [c ^ bulk_code] * k
    g_d = [*group, pair.original_vector ^ bulk_code]
    g_dm = [*group, pair.modified_vector ^ bulk_code]
    m = len(g_d)
    distinct = sorted({0, *g_d, *g_dm})
    patterns: dict[tuple[int, ...], int] = {}
    for b in range(bits):
        pat = tuple((v >> b) & 1 for v in distinct)
        if any(pat):
            patterns[pat] = patterns.get(pat, 0) + 1
    regions = sorted(patterns.items())
    sizes = tuple(r for _, r in regions)
    classes = np.array(list(itertools.product(*[range(r + 1) for r in sizes])), dtype=np.int64).reshape(-1, len(sizes))
    K = classes.shape[0]
    nu = math.comb(m + K - 1, K - 1)
    if nu > MAX_TERMS:
        raise TooLarge(f"the group of {m} people over {K} report classes has {nu} histograms (> {MAX_TERMS})")
    if nu * (m + 1) ** 2 > _MAX_CELLS:  # the leaf's (group histogram) x (|u_E|, u_a) table
        raise TooLarge(f"the group of {m} people over {K} report classes is too large (group histograms x "
                       f"(m + 1)**2 = {nu * (m + 1) ** 2} > {_MAX_CELLS})")
    lq, lp = math.log(q), math.log1p(-q)
    log_binom = np.array([sum(math.lgamma(r + 1) - math.lgamma(k + 1) - math.lgamma(r - k + 1)
                               for r, k in zip(sizes, row)) for row in classes.tolist()])

    def law(v: int) -> NDArray[np.float64]:
        bitsv = [pat[distinct.index(v)] for pat, _ in regions]
        d = np.array([[k if bv == 0 else r - k for bv, r, k in zip(bitsv, sizes, row)] for row in classes.tolist()],
                     dtype=float).reshape(K, len(sizes))
        tot = np.array(sizes, dtype=float)
        out: NDArray[np.float64] = log_binom + (d * lq + (tot - d) * lp).sum(axis=1)
        return out

    log_pi0 = law(0)
    U = compositions(m, K)
    U1 = compositions(m - 1, K)

    def group_law(members: list[int], rows: NDArray[np.int64]) -> NDArray[np.float64]:
        """log-law of the class histogram of ``members``' reports, on the rows of ``rows``."""
        index = {tuple(r): i for i, r in enumerate(rows.tolist())}
        cur: dict[tuple[int, ...], float] = {tuple([0] * K): 0.0}
        for v in members:
            lv = law(v)
            nxt: dict[tuple[int, ...], float] = {}
            for key, val in cur.items():
                for c in range(K):
                    k2 = list(key)
                    k2[c] += 1
                    t = tuple(k2)
                    x = val + lv[c]
                    nxt[t] = float(np.logaddexp(nxt[t], x)) if t in nxt else x
            cur = nxt
        out = np.full(len(index), -np.inf)
        for key, val in cur.items():
            out[index[key]] = val
        return out

    log_pd, log_pdm = group_law(g_d, U), group_law(g_dm, U)
    log_pg = group_law(group, U1)
    lrx = law(pair.original_vector ^ bulk_code) - log_pi0
    lrxp = law(pair.modified_vector ^ bulk_code) - log_pi0
    sx, sxp = float(lrx.max()), float(lrxp.max())
    bulk = int(np.flatnonzero(classes.sum(axis=1) == 0)[0])
    others = [v for v in range(K) if v != bulk]
    others.sort(key=lambda v: (-log_pi0[v], v))
    analytic = others[0] if others else None
    enum = sorted(others[1:], key=lambda v: (log_pi0[v], v))
    return _Model(N=N, n0=n0, m=m, K=K, classes=classes, region_sizes=sizes, log_pi0=log_pi0, U=U, log_pd=log_pd,
                  log_pdm=log_pdm, bulk=bulk, analytic=analytic, enum=enum,
                  log_scale=math.log(N) + log_pi0, U1=U1, log_pg=log_pg, rho_x=np.exp(lrx - sx),
                  rho_xp=np.exp(lrxp - sxp), log_rho_shift=sxp - sx)


# ----------------------------------------------------------------------------------------------------------------
# the evaluation


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredTail:
    """``eta(epsilon) = P_{S~A(D_m)}[R(S) > e**epsilon]`` of one structured pair, as an exact bracket.

    Attributes:
        eta_lower, eta_upper: rigorous bracket (up to floating-point rounding): the exact mass decided above the
            threshold minus/plus the box slack, plus ties in the upper end.
        slack: total binomial tail mass outside the enumeration box (bounds the mass not examined).
        ties: mass of histograms with ``|log R - epsilon| <= 1e-9`` (counted only in ``eta_upper``).
        classes: K, the number of report classes after the symmetry reduction.
        items: histogram prefixes examined (the work done).
        seconds: wall time.
    """

    pair: StructuredPair
    q: float
    epsilon: float
    eta_lower: float
    eta_upper: float
    slack: float
    ties: float
    classes: int
    items: int
    seconds: float

    @property
    def eta(self) -> float:
        """Midpoint of the bracket (exact when the bracket is tight)."""
        return 0.5 * (self.eta_lower + self.eta_upper)

    @property
    def eta_interval(self) -> Interval:
        """``Interval(eta_lower, eta, eta_upper)`` of kind ``"bracket"``."""
        return Interval(self.eta_lower, self.eta, self.eta_upper, kind=Kind.BRACKET)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"pair": self.pair.to_dict(), "q": self.q, "epsilon": self.epsilon, "eta": self.eta,
                "eta_lower": self.eta_lower, "eta_upper": self.eta_upper, "slack": self.slack, "ties": self.ties,
                "classes": self.classes, "items": self.items, "seconds": self.seconds}


def _log_q_pair(mdl: _Model, s: Sequence[NDArray[np.int64]], rows: slice | None = None
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(log Q_D, log Q_Dm)`` at histograms with class counts ``s[v]`` (arrays, broadcastable), over all u."""
    U = mdl.U
    acc: NDArray[np.float64] | None = None
    for v in range(mdl.K):
        lf = log_falling_factorials(np.asarray(s[v]), mdl.m)  # (items, m+1)
        part = lf[..., U[:, v]] - U[:, v] * mdl.log_scale[v]
        acc = part if acc is None else acc + part
    assert acc is not None
    return logsumexp(acc + mdl.log_pd, axis=-1), logsumexp(acc + mdl.log_pdm, axis=-1)


def _greedy(coef: NDArray[np.float64], zl: NDArray[np.float64], cap: NDArray[np.float64],
            extra: NDArray[np.float64]) -> NDArray[np.float64]:
    """``argmax coef . z`` over ``zl <= z <= zl + cap``, ``sum(z - zl) = extra`` (fill the best classes first)."""
    order = np.argsort(-coef, axis=1, kind="stable")
    capo = np.take_along_axis(cap, order, axis=1)
    before = np.cumsum(capo, axis=1) - capo
    alloc_o = np.clip(extra[:, None] - before, 0.0, capo)
    alloc = np.empty_like(alloc_o)
    np.put_along_axis(alloc, order, alloc_o, axis=1)
    return zl + alloc


def _lfp(a: NDArray[np.float64], b: NDArray[np.float64], zl: NDArray[np.float64], zh: NDArray[np.float64],
         total: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rigorous ``(min, max)`` of ``a.z / b.z`` over ``{zl <= z <= zh, sum z = total}`` (a, b > 0), row-wise.

    Dinkelbach's iteration; after it, ``lam* <= lam + max_z (a - lam b).z / min_z b.z`` (and the mirror image
    for the minimum) turns the last iterate into a bound even if it has not converged exactly.
    """
    cap = np.maximum(zh - zl, 0.0)
    extra = np.clip(total - zl.sum(axis=1), 0.0, cap.sum(axis=1))
    d_min = np.einsum("k,nk->n", b, _greedy(-np.broadcast_to(b, zl.shape), zl, cap, extra))
    out = []
    # b.z can underflow to 0 (q near 1e-300): the ratio is then unbounded, and a row without a finite bound gets
    # the trivial one (-inf for the minimum, +inf for the maximum), which leaves its histograms undecided
    with np.errstate(divide="ignore", invalid="ignore"):
        for sign in (-1.0, 1.0):
            z = _greedy(sign * np.broadcast_to(a, zl.shape), zl, cap, extra)
            lam = (z @ a) / (z @ b)
            for _ in range(40):
                coef = sign * (a[None, :] - lam[:, None] * b[None, :])
                z = _greedy(coef, zl, cap, extra)
                new = (z @ a) / (z @ b)
                moved = sign * (new - lam) > 1e-15 * np.abs(lam)
                lam = np.where(moved, new, lam)
                if not np.any(moved):
                    break
            coef = sign * (a[None, :] - lam[:, None] * b[None, :])
            gap = np.maximum(np.einsum("nk,nk->n", coef, _greedy(coef, zl, cap, extra)), 0.0)
            bound = lam + sign * gap / d_min
            out.append(np.where(np.isnan(bound), sign * np.inf, bound))
    return out[0], out[1]


def _ratio_bounds(mdl: _Model, s_lo: NDArray[np.int64], s_hi: NDArray[np.int64]
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rigorous ``(min, max)`` of ``log R`` over the boxes ``s_lo <= S <= s_hi`` (rows; every class, bulk included).

    Exact form (module docstring): ``R(S) = rho_x'.z / rho_x.z`` with ``z = S - E_w[u']``, where ``w`` is the
    posterior of the common group's report histogram ``u'`` given S, ``w(u') ∝ P_G(u') prod_v (s_v)_{u'_v} /
    (N pi_v)**u'_v``, and ``sum z = N - m + 1``. On a box each weight lies between its values at the two corners,
    so ``E_w[u'_c]`` lies between the extreme weighted means (a threshold rule on the value of ``u'_c``); then
    ``z`` lies in a box and the linear-fractional ratio is bounded by :func:`_lfp`. Exact when ``s_lo = s_hi``.
    """
    n, K, m = s_lo.shape[0], mdl.K, mdl.m
    if m == 1:
        ey_lo = ey_hi = np.zeros((n, K))
    else:
        U1 = mdl.U1
        acc_lo = np.broadcast_to(mdl.log_pg, (n, U1.shape[0])).copy()
        acc_hi = acc_lo.copy()
        for c in range(K):
            sc = U1[:, c] * mdl.log_scale[c]
            acc_lo += log_falling_factorials(s_lo[:, c], m - 1)[:, U1[:, c]] - sc
            acc_hi += log_falling_factorials(s_hi[:, c], m - 1)[:, U1[:, c]] - sc
        top = np.max(acc_hi, axis=1)
        top = np.where(np.isfinite(top), top, 0.0)[:, None]
        w_lo, w_hi = np.exp(acc_lo - top), np.exp(acc_hi - top)
        kv = np.arange(m, dtype=float)
        ey_lo = np.empty((n, K))
        ey_hi = np.empty((n, K))
        for c in range(K):
            onehot = np.zeros((U1.shape[0], m))
            onehot[np.arange(U1.shape[0]), U1[:, c]] = 1.0
            sl, sh = w_lo @ onehot, w_hi @ onehot  # (n, m): weight of u'_c = k
            # threshold t = 0..m: heavy weights on k >= t (for the max) or on k < t (for the min)
            zero = np.zeros((n, 1))
            h_ge = np.concatenate([np.cumsum(sh[:, ::-1], axis=1)[:, ::-1], zero], axis=1)
            hk_ge = np.concatenate([np.cumsum((sh * kv)[:, ::-1], axis=1)[:, ::-1], zero], axis=1)
            l_ge = np.concatenate([np.cumsum(sl[:, ::-1], axis=1)[:, ::-1], zero], axis=1)
            lk_ge = np.concatenate([np.cumsum((sl * kv)[:, ::-1], axis=1)[:, ::-1], zero], axis=1)
            h_lt, hk_lt = h_ge[:, :1] - h_ge, hk_ge[:, :1] - hk_ge
            l_lt, lk_lt = l_ge[:, :1] - l_ge, lk_ge[:, :1] - lk_ge
            with np.errstate(invalid="ignore", divide="ignore"):
                mx = (hk_ge + lk_lt) / (h_ge + l_lt)
                mn = (lk_ge + hk_lt) / (l_ge + h_lt)
            ey_hi[:, c] = np.max(np.where(np.isfinite(mx), mx, -np.inf), axis=1)
            ey_lo[:, c] = np.min(np.where(np.isfinite(mn), mn, np.inf), axis=1)
        bad = ~np.isfinite(ey_hi) | ~np.isfinite(ey_lo)
        ey_hi = np.where(bad, m - 1.0, np.clip(ey_hi, 0.0, m - 1.0))
        ey_lo = np.where(bad, 0.0, np.clip(ey_lo, 0.0, m - 1.0))
    zl = np.maximum(s_lo - ey_hi, 0.0)
    zh = np.maximum(s_hi - ey_lo, zl)
    lo, hi = _lfp(mdl.rho_xp, mdl.rho_x, zl, zh, float(mdl.N - mdl.m + 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(np.maximum(lo, 0.0)) + mdl.log_rho_shift, np.log(hi) + mdl.log_rho_shift)


def _marginal_logpmf(mdl: _Model, dims: Sequence[int], s: NDArray[np.int64], uv: NDArray[np.int64]
                     ) -> NDArray[np.float64]:
    """``out[i, k] = log P[T_dims = s[i] - uv[k]]`` for the bulk ``T ~ Mult(n0, pi_0)``; -inf outside the support.

    The multinomial is split into per-class lookup tables ``t log pi_v - log t!`` and a term in the remainder
    ``r = n0 - sum t``, which depends on ``|uv[k]|`` only.
    """
    n0, lp = mdl.n0, mdl.log_pi0
    rest = [v for v in range(mdl.K) if v not in dims]
    log_rest = float(np.logaddexp.reduce(lp[rest])) if rest else -np.inf
    k, nu = s.shape[0], uv.shape[0]
    acc = np.full((k, nu), gammaln(n0 + 1.0))
    neg = np.zeros((k, nu), dtype=bool)
    for col, v in enumerate(dims):
        top = int(s[:, col].max()) if k else 0
        t_all = np.arange(top + 1, dtype=float)
        tab = t_all * lp[v] - gammaln(t_all + 1.0)
        t = s[:, None, col] - uv[None, :, col]
        neg |= t < 0
        acc += tab[np.clip(t, 0, top)]
    e = uv.sum(axis=1)
    r = n0 - s.sum(axis=1)[:, None] + np.arange(mdl.m + 1)[None, :]  # (k, m+1): remainder for |uv| = 0..m
    rr = np.maximum(r, 0).astype(float)
    with np.errstate(invalid="ignore"):
        h = np.where(rr > 0, rr * log_rest, 0.0) - gammaln(rr + 1.0)
    bad_r = (r < 0) | ((r > 0) & (not rest))
    h = np.where(bad_r, -np.inf, h)
    acc += h[:, e]
    return np.where(neg, -np.inf, acc)


def _projected_law(mdl: _Model, dims: Sequence[int], log_p: NDArray[np.float64]
                   ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The law of ``u_dims`` (unique rows, log-probabilities)."""
    proj = mdl.U[:, list(dims)] if dims else np.zeros((mdl.U.shape[0], 0), dtype=np.int64)
    uniq, inv = np.unique(proj, axis=0, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    out = np.full(uniq.shape[0], -np.inf)
    np.logaddexp.at(out, inv, log_p)
    return uniq, out


def _prefix_mass(mdl: _Model, dims: Sequence[int], s: NDArray[np.int64],
                 law: tuple[NDArray[np.int64], NDArray[np.float64]]) -> NDArray[np.float64]:
    """``P_{A(D_m)}[S_dims = s]`` (not in logs), s: (items, len(dims))."""
    uniq, lw = law
    out = np.zeros(s.shape[0])
    step = max(1, _CHUNK // max(1, uniq.shape[0]))
    for a in range(0, s.shape[0], step):
        lm = _marginal_logpmf(mdl, dims, s[a:a + step], uniq) + lw[None, :]
        out[a:a + step] = np.exp(logsumexp(lm, axis=-1))
    return out


class _Budget:
    """Work cap (histogram prefixes) and an optional wall-clock deadline (``time.perf_counter`` value)."""

    def __init__(self, cap: int, deadline: float | None = None) -> None:
        self.cap = cap
        self.used = 0
        self.deadline = deadline

    def take(self, n: int) -> None:
        self.used += n
        if self.used > self.cap:
            raise TooLarge(f"the structured evaluation needs more than {self.cap} histogram prefixes")
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise TooLarge("the structured evaluation ran out of its time limit")


def _decide(mdl: _Model, fixed: Sequence[int], items: NDArray[np.int64], rest: Sequence[int],
            lo_s: NDArray[np.int64], hi_s: NDArray[np.int64], thr_lo: float, thr_hi: float, budget: _Budget,
            max_depth: int = 6) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which prefixes are surely above / surely below the threshold for *every* completion in the box.

    The box of the remaining classes is split (k-d style, the class with the widest relative range first, up to
    ``max_depth`` times) until each piece's monotone bound decides it; a prefix is above (below) when all its
    pieces are, undecided as soon as it has pieces on both sides or a piece that cannot be decided.
    """
    N = mdl.N
    n = items.shape[0]
    has_up = np.zeros(n, dtype=bool)
    has_dn = np.zeros(n, dtype=bool)
    stuck = np.zeros(n, dtype=bool)
    fsum = items.sum(axis=1)
    rest_idx = list(rest)
    box = np.arange(n)
    blo = np.tile(lo_s[rest_idx], (n, 1))
    bhi = np.tile(hi_s[rest_idx], (n, 1))
    for depth in range(max_depth + 1):
        if box.size == 0:
            break
        budget.take(box.size)
        s0_hi = N - fsum[box] - blo.sum(axis=1)
        s0_lo = np.maximum(N - fsum[box] - bhi.sum(axis=1), 0)
        live = s0_hi >= 0  # a piece with no histogram is neutral
        box, blo, bhi, s0_lo, s0_hi = box[live], blo[live], bhi[live], s0_lo[live], s0_hi[live]
        if box.size == 0:
            break
        s_lo = np.empty((box.size, mdl.K), dtype=np.int64)
        s_hi = np.empty((box.size, mdl.K), dtype=np.int64)
        s_lo[:, list(fixed)] = s_hi[:, list(fixed)] = items[box]
        s_lo[:, rest_idx], s_hi[:, rest_idx] = blo, bhi
        s_lo[:, mdl.bulk], s_hi[:, mdl.bulk] = s0_lo, s0_hi
        r_lo, r_hi = np.empty(box.size), np.empty(box.size)
        step = max(1, _CHUNK // max(mdl.U1.shape[0], 1))
        for a in range(0, box.size, step):
            sl = slice(a, a + step)
            r_lo[sl], r_hi[sl] = _ratio_bounds(mdl, s_lo[sl], s_hi[sl])
        up, dn = r_lo > thr_hi, r_hi < thr_lo
        has_up[box[up]] = True
        has_dn[box[dn]] = True
        und = ~up & ~dn
        # splitting pays only for pieces with many histograms; small ones are left to the enumeration
        splittable = np.prod((bhi - blo + 1).astype(float), axis=1) > _MIN_SPLIT
        if depth == max_depth:
            stuck[box[und]] = True
            break
        stuck[box[und & ~splittable]] = True
        done = (has_up & has_dn) | stuck
        sel = und & splittable & ~done[box]
        box, blo, bhi = box[sel], blo[sel], bhi[sel]
        if box.size == 0:
            break
        rel = np.where(bhi > blo, np.log((bhi + 1.0) / (blo + 1.0)), -1.0)
        d = np.argmax(rel, axis=1)
        rows = np.arange(box.size)
        mid = (blo[rows, d] + bhi[rows, d]) // 2
        lo2, hi2 = blo.copy(), bhi.copy()
        hi_first = bhi.copy()
        hi_first[rows, d] = mid
        lo2[rows, d] = mid + 1
        box = np.concatenate([box, box])
        blo = np.concatenate([blo, lo2])
        bhi = np.concatenate([hi_first, hi2])
    up_all = has_up & ~has_dn & ~stuck
    dn_all = has_dn & ~has_up & ~stuck
    return up_all, dn_all


def _evaluate(mdl: _Model, epsilon: float, tau: float, budget: _Budget, floor: float = 0.0, drop: float = 0.0
              ) -> tuple[float, float, float]:
    """``(mass decided above, tie mass, box slack)`` for one pair (module docstring, steps 3-5).

    With ``floor > 0`` the enumeration stops as soon as ``above + (mass of the undecided prefixes) + slack <=
    floor``; the undecided mass is then returned with the ties (it only widens the upper end). With ``drop > 0``
    undecided prefixes of total marginal mass at most ``drop`` (the lightest first) are not refined; their mass is
    returned with the ties as well (a prefix's marginal mass bounds the mass of all its completions).
    """
    thr_hi = epsilon + TIE  # log R above this: surely above
    thr_lo = epsilon - TIE  # log R below this: surely below
    N, m, n0 = mdl.N, mdl.m, mdl.n0
    dims = [*mdl.enum] + ([mdl.analytic] if mdl.analytic is not None else [])
    lo_s = np.zeros(mdl.K, dtype=np.int64)
    hi_s = np.zeros(mdl.K, dtype=np.int64)
    slack = 0.0
    per = tau / (2 * max(len(dims), 1))
    for v in dims:
        lo, hi, out = _binom_box(n0, math.exp(mdl.log_pi0[v]), per)
        lo_s[v], hi_s[v] = lo, min(hi + m, N)
        slack += out
    above = 0.0
    ties = 0.0
    enum = mdl.enum
    # prefix levels
    prefix = np.zeros((1, 0), dtype=np.int64)
    for i, d in enumerate(enum):
        fixed = enum[: i + 1]
        rest = [*enum[i + 1:]] + ([mdl.analytic] if mdl.analytic is not None else [])
        if i == 0:  # the first level's prefixes are the counts v of the box with v + rest_lo <= N: refuse them
            first = int(min(hi_s[d], N - int(lo_s[rest].sum())) - lo_s[d] + 1)  # before they are allocated
            if first > 0 and budget.used + first > budget.cap:
                raise TooLarge(f"the structured evaluation needs more than {budget.cap} histogram prefixes")
        vals = np.arange(lo_s[d], hi_s[d] + 1, dtype=np.int64)
        law = _projected_law(mdl, fixed, mdl.log_pdm)
        rest_lo = int(lo_s[rest].sum())
        new_rows: list[NDArray[np.int64]] = []
        step = max(1, _CHUNK // max(1, mdl.U.shape[0] * vals.size))
        for start in range(0, prefix.shape[0], step):
            blk = prefix[start:start + step]
            items = np.concatenate([np.repeat(blk, vals.size, axis=0), np.tile(vals, blk.shape[0])[:, None]], axis=1)
            items = items[items.sum(axis=1) + rest_lo <= N]  # the bulk count cannot be negative
            if items.shape[0] == 0:
                continue
            budget.take(items.shape[0])
            up, down = _decide(mdl, fixed, items, rest, lo_s, hi_s, thr_lo, thr_hi, budget)
            if np.any(up):
                above += float(_prefix_mass(mdl, fixed, items[up], law).sum())
            new_rows.append(items[~up & ~down])
        prefix = np.concatenate(new_rows, axis=0) if new_rows else np.zeros((0, i + 1), dtype=np.int64)
        if prefix.shape[0] == 0:
            return above, ties, slack
        if floor > 0.0 or drop > 0.0:
            pm = _prefix_mass(mdl, fixed, prefix, law)
            open_mass = float(pm.sum())
            if floor > 0.0 and above + open_mass + slack <= floor:
                return above, ties + open_mass, slack
            if drop > 0.0:
                order = np.argsort(pm, kind="stable")
                cum = np.cumsum(pm[order])
                k = int(np.searchsorted(cum, drop, side="right"))
                if k:
                    gone = float(cum[k - 1])
                    drop -= gone
                    ties += gone
                    prefix = prefix[np.sort(order[k:])]
                    if prefix.shape[0] == 0:
                        return above, ties, slack
    # leaf: the analytic class
    a = mdl.analytic
    if a is None:  # pragma: no cover - a pair always has a non-bulk class
        return above, ties, slack
    a_up, a_ties = _leaf(mdl, prefix, int(lo_s[a]), int(hi_s[a]), epsilon, budget)
    return above + a_up, ties + a_ties, slack


def _leaf(mdl: _Model, prefix: NDArray[np.int64], a_lo: int, a_hi: int, epsilon: float, budget: _Budget
          ) -> tuple[float, float]:
    """Every enumerated class fixed: bisect the analytic class's range (module docstring, step 4).

    Returns ``(mass above, tie mass)``.
    """
    a = mdl.analytic
    assert a is not None
    N, m, n0, enum, U = mdl.N, mdl.m, mdl.n0, mdl.enum, mdl.U
    thr_hi, thr_lo = epsilon + TIE, epsilon - TIE
    n_items = prefix.shape[0]
    n_rest = N - prefix.sum(axis=1)
    item = np.arange(n_items)
    lo = np.full(n_items, a_lo, dtype=np.int64)
    hi = np.minimum(np.full(n_items, a_hi, dtype=np.int64), n_rest)
    ok = lo <= hi
    item, lo, hi = item[ok], lo[ok], hi[ok]
    empty = np.zeros(0, dtype=np.int64)
    up_parts: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = [(empty, empty, empty)]
    tie_parts: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = [(empty, empty, empty)]
    step = max(1, _CHUNK // max(mdl.U1.shape[0], 1))
    while item.size:
        budget.take(item.size)
        s_lo = np.empty((item.size, mdl.K), dtype=np.int64)
        s_hi = np.empty((item.size, mdl.K), dtype=np.int64)
        if enum:
            s_lo[:, enum] = s_hi[:, enum] = prefix[item]
        s_lo[:, a], s_hi[:, a] = lo, hi
        s_lo[:, mdl.bulk], s_hi[:, mdl.bulk] = n_rest[item] - hi, n_rest[item] - lo
        r_lo, r_hi = np.empty(item.size), np.empty(item.size)
        for b in range(0, item.size, step):
            sl = slice(b, b + step)
            r_lo[sl], r_hi[sl] = _ratio_bounds(mdl, s_lo[sl], s_hi[sl])
        up = r_lo > thr_hi
        down = r_hi < thr_lo
        und = ~up & ~down
        point = und & (lo == hi)
        up_parts.append((item[up], lo[up], hi[up]))
        tie_parts.append((item[point], lo[point], hi[point]))
        split = und & (lo < hi)
        it, l_, h_ = item[split], lo[split], hi[split]
        mid = (l_ + h_) // 2
        item = np.concatenate([it, it])
        lo = np.concatenate([l_, mid + 1])
        hi = np.concatenate([mid, h_])

    # W[item, e, alpha] = sum over u with (|u_E|, u_a) = (e, alpha) of P_Dm(u) P[T_E = S_E - u_E]
    ue = U[:, enum].sum(axis=1) if enum else np.zeros(U.shape[0], dtype=np.int64)
    w_onehot = np.zeros((U.shape[0], (m + 1) ** 2))
    w_onehot[np.arange(U.shape[0]), ue * (m + 1) + U[:, a]] = 1.0
    e_idx = np.repeat(np.arange(m + 1), m + 1)
    u_a = np.tile(np.arange(m + 1), m + 1)
    theta = math.exp(mdl.log_pi0[a] - np.logaddexp(mdl.log_pi0[a], mdl.log_pi0[mdl.bulk]))

    def mass(parts: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]]) -> float:
        it = np.concatenate([p[0] for p in parts])
        lo_ = np.concatenate([p[1] for p in parts])
        hi_ = np.concatenate([p[2] for p in parts])
        if it.size == 0:
            return 0.0
        order = np.lexsort((lo_, it))  # merge adjacent intervals of the same item
        it, lo_, hi_ = it[order], lo_[order], hi_[order]
        new = np.ones(it.size, dtype=bool)
        new[1:] = (it[1:] != it[:-1]) | (lo_[1:] != hi_[:-1] + 1)
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:], it.size) - 1
        it, lo_, hi_ = it[starts], lo_[starts], hi_[ends]
        uniq, inv = np.unique(it, return_inverse=True)
        inv = np.asarray(inv).reshape(-1)
        lw = np.empty((uniq.size, (m + 1) ** 2))
        stp = max(1, _CHUNK // U.shape[0])
        for s0 in range(0, uniq.size, stp):
            blk = prefix[uniq[s0:s0 + stp]]
            if enum:
                lm = _marginal_logpmf(mdl, enum, blk, U[:, enum])
            else:
                lm = np.zeros((blk.shape[0], U.shape[0]))
            lw[s0:s0 + stp] = logsumexp_groups(lm + mdl.log_pdm, w_onehot)
        total = 0.0
        stp = max(1, _CHUNK // ((m + 1) ** 2))
        for s0 in range(0, it.size, stp):
            ii, ll, hh = inv[s0:s0 + stp], lo_[s0:s0 + stp], hi_[s0:s0 + stp]
            w = lw[ii]
            live = np.isfinite(w)
            nn = (n0 - (N - n_rest[it[s0:s0 + stp]]))[:, None] + e_idx[None, :]
            pm = _binom_interval(nn, theta, ll[:, None] - u_a[None, :], hh[:, None] - u_a[None, :])
            total += float(np.sum(np.where(live, np.exp(np.where(live, w, 0.0)) * pm, 0.0)))
        return total

    return mass(up_parts), mass(tie_parts)


def structured_tail(pair: StructuredPair, q: float, epsilon: float, *, rel_tol: float = 1e-6,
                    floor: float = 0.0, mass_tol: float = 0.0, max_items: int = MAX_ITEMS,
                    time_limit: float | None = None) -> StructuredTail:
    """Exact bracket on ``eta(epsilon)`` for one structured pair (module docstring).

    The box slack is tightened (up to four passes) until it is at most ``rel_tol`` times the lower end, or the
    upper end is at most ``floor`` (a caller that only needs to know the pair cannot matter).

    Args:
        pair: the pair.
        q: flip probability in (0, 0.5).
        epsilon: the threshold (any real).
        rel_tol: target relative width of the slack part of the bracket, in (0, 1).
        floor: stop refining once ``eta_upper <= floor`` (>= 0).
        mass_tol: undecided histogram prefixes of total probability up to this (>= 0) are not refined; their mass
            is counted in ``eta_upper`` only (``ties``), so the bracket stays rigorous and is at most that much
            wider. 0 (default): refine everything.
        max_items: work cap, 1..:data:`MAX_ITEMS` (raises :class:`TooLarge` beyond it).
        time_limit: wall-clock limit in seconds, in (0, :data:`MAX_TIME_BUDGET`] (raises :class:`TooLarge`
            beyond it); None: no limit.

    Returns:
        A :class:`StructuredTail`.

    Raises:
        ParameterError: an argument out of range; :class:`TooLarge` (a subclass) when the work or time cap is hit.

    References:
        seed 001 eq. (1.5), (1.7), (2.2); ERRATA 5.

    Examples:
        >>> pr = StructuredPair.build(2, {0: 97, 1: 2}, 3, 0)   # {00×97, 10×2} + 11→00
        >>> t = structured_tail(pr, 0.1, 3.0)
        >>> round(t.eta * 1e6, 4), t.eta_upper - t.eta_lower < 1e-12
        (2.7403, True)
    """
    if not isinstance(pair, StructuredPair):
        raise ParameterError(f"pair must be a StructuredPair; got {type(pair).__name__}")
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = _check_epsilon(epsilon)
    rel_tol = check_open_interval("rel_tol", rel_tol, 0.0, 1.0)
    floor = check_nonnegative_finite("floor", floor)
    mass_tol = check_nonnegative_finite("mass_tol", mass_tol)
    max_items = check_int("max_items", max_items, minimum=1, maximum=MAX_ITEMS)
    t0 = time.perf_counter()
    deadline = None
    if time_limit is not None:
        deadline = t0 + _check_time("time_limit", time_limit)
    mdl = _model(pair, q)
    budget = _Budget(max_items, deadline)
    tau = 1e-14
    for _ in range(5):
        above, ties, slack = _evaluate(mdl, epsilon, tau, budget, floor, mass_tol)
        lo, hi = max(above - slack, 0.0), min(above + ties + slack, 1.0)
        if slack <= rel_tol * lo or hi <= floor or tau < 1e-290:
            break
        scale = lo if lo > 0 else max(hi - 2 * slack, 0.0)
        tau = max(min(tau * 1e-12, rel_tol * scale * 0.5) if scale > 0 else tau * 1e-12, 1e-300)
    return StructuredTail(pair=pair, q=q, epsilon=epsilon, eta_lower=lo, eta_upper=hi, slack=slack,
                          ties=ties, classes=mdl.K, items=budget.used, seconds=time.perf_counter() - t0)


def _check_time(name: str, value: Any) -> float:
    seconds = check_positive_finite(name, value)
    if seconds > MAX_TIME_BUDGET:
        raise ParameterError(f"{name} must be in (0, {MAX_TIME_BUDGET:g}] seconds; got {seconds!r}")
    return seconds


# ----------------------------------------------------------------------------------------------------------------
# candidate pairs


@lru_cache(maxsize=8)
def _perm_images(bits: int) -> tuple[tuple[int, ...], ...]:
    """``images[g][v]``: code v with its bits permuted by the g-th permutation of the L positions."""
    out = []
    for perm in itertools.permutations(range(bits)):
        out.append(tuple(sum(((v >> src) & 1) << dst for src, dst in enumerate(perm)) for v in range(1 << bits)))
    return tuple(out)


def _key(pair: StructuredPair) -> tuple[Any, ...]:
    """Dedup key: the lexicographically smallest image under bit permutations (L <= 5), else the pair itself."""
    if pair.bits > _CANON_MAX_BITS:
        return (pair.common, pair.original_vector, pair.modified_vector)
    best: tuple[Any, ...] | None = None
    for img in _perm_images(pair.bits):
        k = (tuple(sorted((img[c], n) for c, n in pair.common)), img[pair.original_vector], img[pair.modified_vector])
        if best is None or k < best:
            best = k
    assert best is not None
    return best


def _cost_rank(pair: StructuredPair) -> tuple[int, int]:
    """(K, m): the number of report classes and the group size, to evaluate cheap pairs first."""
    counts = dict(pair.common)
    bulk = max(counts, key=lambda c: (counts[c], -c)) if counts else pair.original_vector
    vecs = {c ^ bulk for c in counts} | {pair.original_vector ^ bulk, pair.modified_vector ^ bulk}
    distinct = sorted(vecs | {0})
    patterns: dict[tuple[int, ...], int] = {}
    for b in range(pair.bits):
        pat = tuple((v >> b) & 1 for v in distinct)
        if any(pat):
            patterns[pat] = patterns.get(pat, 0) + 1
    k = math.prod(r + 1 for r in patterns.values())
    return k, sum(n for c, n in counts.items() if c != bulk) + 1


def _copies_list(max_copies: int) -> list[int]:
    base = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256]
    return [k for k in base if k <= max_copies]


def candidate_pairs(bits: int, population: int, *, max_group: int = 2, max_copies: int = 16
                    ) -> tuple[StructuredPair, ...]:
    """Structured neighbouring pairs to search, each tagged with its family, cheapest and likeliest first.

    The common part ``D'`` is a bulk of zero vectors (any bulk vector is equivalent by the XOR symmetry) plus a
    small group; ``y = 1^j`` is an outlier of weight j. Families, both directions each (x -> x' and x' -> x):

    * ``homogeneous``: ``D' = (N-1) 0``, ``0 -> y`` (seed 001 §1.2) for j = 1..L;
    * ``copies of the outlier``: ``D' = (N-1-k) 0 + k y``, ``0 -> y``, k in 1, 2, 3, 4, 5, 6, 8, ... up to
      ``max_copies`` (k = 1: a second copy of the outlier's vector in the base, ERRATA 5);
    * ``partial outliers``: ``D' = (N-1-k) 0 + k v`` (and ``+ y`` once) with v a block of i bits inside y, outside
      y, or straddling its edge, k = 1..max_group, changed person ``0 <-> y`` or ``v <-> y``;
    * ``small groups`` (L <= 4 only): every group of at most ``max_group`` non-zero vectors with every ordered
      ``(x, x')``, one pair per orbit of the bit permutations.

    Duplicates (equal up to a bit permutation, L <= 5) keep their first family.

    Args:
        bits: L, 1..30.
        population: N >= 2.
        max_group: largest group of extra vectors (partial outliers, small groups), 1..:data:`MAX_GROUP`.
        max_copies: largest number of copies of the outlier in the base, 0..:data:`MAX_COPIES`.

    Returns:
        A tuple of :class:`StructuredPair` (``family`` set).

    Examples:
        >>> [p.label for p in candidate_pairs(1, 10, max_copies=2)]
        ['{0×9} + 0→1', '{0×9} + 1→0', '{0×8, 1×1} + 0→1', '{0×8, 1×1} + 1→0', '{0×7, 1×2} + 0→1', '{0×7, 1×2} + 1→0']
    """
    bits = check_int("bits", bits, minimum=1, maximum=30)
    population = check_int("population", population, minimum=2, maximum=MAX_POPULATION)
    max_group = check_int("max_group", max_group, minimum=1, maximum=MAX_GROUP)
    max_copies = check_int("max_copies", max_copies, minimum=0, maximum=MAX_COPIES)
    n1 = population - 1
    out: list[StructuredPair] = []
    seen: set[tuple[Any, ...]] = set()

    def add(common: dict[int, int], x: int, xp: int, family: str) -> None:
        if sum(common.values()) != n1 or min(common.values()) < 0 or x == xp:
            return
        pr = StructuredPair.build(bits, common, x, xp, family=family)
        key = _key(pr)
        if key not in seen:
            seen.add(key)
            out.append(pr)

    def both(common: dict[int, int], a: int, b: int, family: str) -> None:
        add(common, a, b, family)
        add(common, b, a, family)

    ys = [(1 << j) - 1 for j in range(1, bits + 1)]
    for y in ys:
        both({0: n1}, 0, y, "homogeneous")
    late: list[StructuredPair] = []
    for k in _copies_list(max_copies):
        start = len(out)
        for y in ys:
            if k < n1:
                both({0: n1 - k, y: k}, 0, y, "copies of the outlier")
        if k > 4:  # many copies: a larger group, evaluated after the small groups
            late += out[start:]
            del out[start:]
    partial: list[StructuredPair] = []
    start = len(out)
    for j in range(1, bits + 1):
        y = (1 << j) - 1
        blocks: set[int] = set()
        for i in range(1, bits + 1):
            if i < j:
                blocks.add((1 << i) - 1)  # inside y
            if j + i <= bits:
                blocks.add(((1 << i) - 1) << j)  # outside y
            lo_b = j - (i + 1) // 2  # straddling y's edge
            if 0 <= lo_b and lo_b + i <= bits and i >= 2:
                blocks.add(((1 << i) - 1) << lo_b)
        for v in sorted(blocks):
            for k in range(1, max_group + 1):
                if k >= n1:
                    continue
                both({0: n1 - k, v: k}, 0, y, "partial outliers")
                both({0: n1 - k, v: k}, v, y, "partial outliers")
                if k + 1 < n1:
                    both({0: n1 - k - 1, v: k, y: 1}, 0, y, "partial outliers")
    partial = sorted(out[start:], key=_cost_rank)
    del out[start:]
    out += partial
    if bits <= _GROUPS_MAX_BITS:
        start = len(out)
        cells = 1 << bits
        for size in range(0, max_group + 1):
            if size >= n1:
                break
            for group in itertools.combinations_with_replacement(range(1, cells), size):
                common: dict[int, int] = {0: n1 - size}
                for g in group:
                    common[g] = common.get(g, 0) + 1
                for x in range(cells):
                    for xp in range(cells):
                        add(common, x, xp, "small groups")
        small = sorted(out[start:], key=lambda p: (_cost_rank(p)[1], _cost_rank(p)[0]))
        del out[start:]
        out += small
    out += late
    return tuple(out)


# ----------------------------------------------------------------------------------------------------------------
# the search


@dataclass(frozen=True, slots=True, kw_only=True)
class FamilyStats:
    """What happened to one family of candidate pairs in :func:`structured_search`.

    Attributes:
        family: the family tag (:func:`candidate_pairs`).
        candidates: pairs generated.
        evaluated: pairs whose bracket was computed (refined until it is tight, or until it cannot beat the best).
        pruned: of those, pairs proved unable to beat the best pair found before them (``eta_upper <= floor``).
        skipped: pairs not evaluated.
        reason: why pairs were skipped ("" if none): the work cap, the time budget, or both.
    """

    family: str
    candidates: int
    evaluated: int
    pruned: int
    skipped: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"family": self.family, "candidates": self.candidates, "evaluated": self.evaluated,
                "pruned": self.pruned, "skipped": self.skipped, "reason": self.reason}


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredSearchResult:
    """The worst structured pair found for ``eta(epsilon)``, with its exact bracket and the homogeneous reference.

    Attributes:
        bits, population, q, epsilon: the configuration.
        pair: the worst pair found (largest ``eta_lower``, then ``eta``).
        eta, eta_lower, eta_upper: its exact bracket (:func:`structured_tail`). Over *all* pairs of collections the
            worst-case eta is at least ``eta_lower``: this is a **lower bound** on the worst case, never a guarantee.
        homogeneous_eta, homogeneous_eta_upper, homogeneous_worst_weight: ``max_j`` eta of the paper's configuration
            (``D' = (N-1) 0``, outlier ``1^j`` in ``D_m``), its upper end, and the j attaining it (0 if none could
            be evaluated).
        reverse_homogeneous_eta, reverse_homogeneous_eta_upper: the same with the outlier in ``D``.
        homogeneous_by_weight: ``((j, direction, eta_lower, eta_upper), ...)``, direction ``"forward"`` (outlier in
            ``D_m``) or ``"reverse"``; a j that could not be evaluated is missing (see ``families``).
        conjecture_holds: False when the found pair's ``eta_lower`` exceeds the paper reference's upper end (a
            rigorous counterexample to seed 001 §1.2); True only means none was found among the pairs searched.
        two_sided_holds: the same against ``max(homogeneous, reverse homogeneous)``.
        ratio: ``eta`` over the two-sided homogeneous eta; None when that is not resolved (its bracket's lower end
            is 0, e.g. an eta below 1e-60).
        exhaustive: True when the search covered every neighbouring pair (L = 1, by the exact all-crowd scan of
            :func:`sufficientdp.ratio.single_bit.worst_over_crowds`); then ``eta`` is the worst case itself.
        ranking: the best evaluated pairs (:class:`StructuredTail`), worst first.
        families: a :class:`FamilyStats` per family, in search order.
        pairs_total, pairs_evaluated, pairs_pruned, pairs_skipped: counts over every family.
        complete: True when no candidate was skipped.
        max_group, max_copies, time_budget, max_items: the search limits used.
        seconds: wall time.
        kind: :attr:`Kind.LOWER_BOUND` — ``eta`` is the exact value (bracketed) of one pair found, hence a lower
            bound on the worst case over every pair — or :attr:`Kind.EXACT` when ``exhaustive``.
        scope: :attr:`Scope.ALL_COLLECTIONS`: the quantity bounded is the worst case over every pair of
            neighbouring collections.
        searched: which pairs were searched, in words.
        method: ``"structured"``.
    """

    bits: int
    population: int
    q: float
    epsilon: float
    pair: StructuredPair
    eta: float
    eta_lower: float
    eta_upper: float
    homogeneous_eta: float
    homogeneous_eta_upper: float
    homogeneous_worst_weight: int
    reverse_homogeneous_eta: float
    reverse_homogeneous_eta_upper: float
    homogeneous_by_weight: tuple[tuple[int, str, float, float], ...]
    conjecture_holds: bool
    two_sided_holds: bool
    ratio: float | None
    exhaustive: bool
    ranking: tuple[StructuredTail, ...]
    families: tuple[FamilyStats, ...]
    pairs_total: int
    pairs_evaluated: int
    pairs_pruned: int
    pairs_skipped: int
    complete: bool
    max_group: int
    max_copies: int
    time_budget: float
    max_items: int
    seconds: float
    kind: Kind = Kind.LOWER_BOUND
    scope: Scope = Scope.ALL_COLLECTIONS
    searched: str = ""
    method: str = "structured"

    @property
    def eta_interval(self) -> Interval:
        """The found pair's ``Interval(eta_lower, eta, eta_upper)`` with this result's ``kind``."""
        return Interval(self.eta_lower, self.eta, self.eta_upper, kind=Kind(self.kind))

    @property
    def homogeneous_two_sided_eta(self) -> float:
        """``max(homogeneous_eta, reverse_homogeneous_eta)``."""
        return max(self.homogeneous_eta, self.reverse_homogeneous_eta)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the keys of :class:`sufficientdp.ratio.worst_case.WorstCaseResult` where they apply)."""
        return {
            "method": self.method, "kind": str(self.kind), "scope": str(self.scope), "searched": self.searched,
            "exhaustive": self.exhaustive,
            "bits": self.bits, "population": self.population, "q": self.q, "epsilon": self.epsilon,
            "eta": self.eta, "eta_lower": self.eta_lower, "eta_upper": self.eta_upper, "pair": self.pair.to_dict(),
            "homogeneous_eta": self.homogeneous_eta, "homogeneous_eta_upper": self.homogeneous_eta_upper,
            "homogeneous_worst_weight": self.homogeneous_worst_weight,
            "reverse_homogeneous_eta": self.reverse_homogeneous_eta,
            "reverse_homogeneous_eta_upper": self.reverse_homogeneous_eta_upper,
            "homogeneous_two_sided_eta": self.homogeneous_two_sided_eta,
            "homogeneous_by_weight": [{"weight": j, "direction": d, "eta_lower": lo, "eta_upper": hi}
                                      for j, d, lo, hi in self.homogeneous_by_weight],
            "conjecture_holds": self.conjecture_holds, "two_sided_holds": self.two_sided_holds,
            "ratio": self.ratio,
            "ranking": [t.to_dict() for t in self.ranking],
            "families": [f.to_dict() for f in self.families],
            "pairs_total": self.pairs_total, "pairs_evaluated": self.pairs_evaluated,
            "pairs_pruned": self.pairs_pruned, "pairs_skipped": self.pairs_skipped, "complete": self.complete,
            "limits": {"max_group": self.max_group, "max_copies": self.max_copies, "time_budget": self.time_budget,
                       "max_items": self.max_items},
            "seconds": self.seconds,
        }


def _single_bit_exact(population: int, q: float, epsilon: float) -> StructuredTail | None:
    """L = 1: the exact worst pair over every crowd (every pair is structured there), or None if not applicable."""
    if epsilon < 0:
        return None
    from .single_bit import worst_over_crowds

    t0 = time.perf_counter()
    r = worst_over_crowds(population, q, epsilon)
    n1 = population - 1
    if r.worst_m_eta < 0:  # eta = 0 for every pair: report the paper's one
        pr = replace(homogeneous_pair(1, population, 1), family="exact all-crowd scan (L = 1)")
    else:
        # "remove" at m: the others hold m ones and the changed person 1 -> 0; "add": 0 -> 1 (seed 000 §3.1.4)
        m = r.worst_m_eta
        x, xp = (1, 0) if r.worst_direction_eta == "remove" else (0, 1)
        pr = StructuredPair.build(1, {0: n1 - m, 1: m}, x, xp, family="exact all-crowd scan (L = 1)")
    return StructuredTail(pair=pr, q=q, epsilon=epsilon, eta_lower=r.eta_lower, eta_upper=r.eta_upper, slack=0.0,
                          ties=0.0, classes=2, items=population, seconds=time.perf_counter() - t0)


def structured_search(bits: int, population: int, q: float, epsilon: float, *, max_group: int = 2,
                      max_copies: int = 16, time_budget: float = DEFAULT_TIME_BUDGET,
                      max_items: int = DEFAULT_PAIR_ITEMS, top: int = 5, mass_tol: float = 1e-4,
                      extra_pairs: Sequence[StructuredPair] = (),
                      progress: Callable[[int, int], Any] | None = None) -> StructuredSearchResult:
    """Search structured neighbouring pairs for the largest ``eta(epsilon)``; exact bracket for the one found.

    Evaluates, in order, the paper's configuration for every outlier weight j and both directions (the
    reference), ``extra_pairs``, then the families of :func:`candidate_pairs`, each with :func:`structured_tail`.
    A candidate is first bounded with ``floor`` = the best lower end so far and stops as soon as its upper end
    is below it (*pruned*: it cannot be the worst); the others are refined to a bracket of relative width about
    ``mass_tol`` (mass left unrefined) plus ``1e-6`` (box slack). A candidate beyond ``max_items`` or the time
    left is *skipped* and counted per family. At L = 1 every pair is structured and the exact scan over every
    crowd (:func:`sufficientdp.ratio.single_bit.worst_over_crowds`) replaces the families (``exhaustive``).

    **What the result means.** The found pair's bracket is exact, so its ``eta_lower`` is a lower bound on the
    worst case over all pairs of collections (eq. 1.7), and ``two_sided_holds=False`` is a rigorous
    counterexample to the homogeneous worst case (seed 001 §1.2, ERRATA 5). ``True`` means only that no
    searched pair beats it. It is not an upper bound: :func:`sufficientdp.ratio.proven.proven_tail` is.

    Args:
        bits: L, 1..30.
        population: N, 2..10**12.
        q: flip probability in (0, 0.5).
        epsilon: the threshold (any real).
        max_group: 1..:data:`MAX_GROUP` (see :func:`candidate_pairs`).
        max_copies: 0..:data:`MAX_COPIES`.
        time_budget: seconds, in (0, :data:`MAX_TIME_BUDGET`]; candidates left when it runs out are skipped.
        max_items: work cap per candidate, 1..:data:`MAX_ITEMS` histogram prefixes.
        top: pairs kept in ``ranking``, 1..100.
        mass_tol: relative bracket width allowed to unrefined mass, in [0, 0.01].
        extra_pairs: further pairs to evaluate (same L and N), e.g. a heuristic search's best.
        progress: optional ``progress(done, total)`` over the candidates.

    Returns:
        A :class:`StructuredSearchResult`.

    Raises:
        ParameterError: an argument out of range (the message names it, its value and the allowed range).

    References:
        seed 001 §1.2 (conjecture), eq. (1.7); ERRATA 5.

    Examples:
        >>> r = structured_search(2, 100, 0.1, 3.0, time_budget=60)
        >>> r.pair.label, r.two_sided_holds, round(r.ratio, 2)
        ('{00×97, 10×2} + 11→00', False, 1.9)
    """
    bits = check_int("bits", bits, minimum=1, maximum=30)
    population = check_int("population", population, minimum=2, maximum=MAX_POPULATION)
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = _check_epsilon(epsilon)
    max_group = check_int("max_group", max_group, minimum=1, maximum=MAX_GROUP)
    max_copies = check_int("max_copies", max_copies, minimum=0, maximum=MAX_COPIES)
    time_budget = _check_time("time_budget", time_budget)
    max_items = check_int("max_items", max_items, minimum=1, maximum=MAX_ITEMS)
    top = check_int("top", top, minimum=1, maximum=100)
    mass_tol = check_nonnegative_finite("mass_tol", mass_tol)
    if mass_tol > 0.01:
        raise ParameterError(f"mass_tol must be in [0, 0.01]; got {mass_tol!r}")
    extras: list[StructuredPair] = []
    for pr in extra_pairs:
        if not isinstance(pr, StructuredPair):
            raise ParameterError(f"extra_pairs must hold StructuredPair objects; got {type(pr).__name__}")
        if pr.bits != bits or pr.population != population:
            raise ParameterError(f"extra_pairs must have bits = {bits} and population = {population}; got "
                                 f"bits = {pr.bits}, population = {pr.population}")
        extras.append(pr if pr.family else replace(pr, family="extra"))
    t0 = time.perf_counter()
    deadline = t0 + time_budget
    exact1 = _single_bit_exact(population, q, epsilon) if bits == 1 else None
    cands = candidate_pairs(bits, population, max_group=max_group, max_copies=max_copies)
    homog = [p for p in cands if p.family == "homogeneous"]
    rest = [] if exact1 is not None else [p for p in cands if p.family != "homogeneous"]
    rank = {f: i for i, f in enumerate(dict.fromkeys(p.family for p in rest))}
    rest.sort(key=lambda p: (_cost_rank(p), rank[p.family]))  # cheap pairs first, whatever their family
    order = [*homog, *extras, *rest]
    stats: dict[str, list[Any]] = {}
    if exact1 is not None:
        stats[exact1.pair.family] = [1, 1, 0, 0, set()]
    for p in order:
        stats.setdefault(p.family, [0, 0, 0, 0, set()])[0] += 1
    refs: dict[tuple[int, str], StructuredTail] = {}
    ranking: list[StructuredTail] = [exact1] if exact1 is not None else []
    best: StructuredTail | None = exact1
    screen = min(max_items, _SCREEN_ITEMS)
    # round 1: every candidate with a small work cap (most are pruned or resolved cheaply);
    # round 2: those that hit it, with the full cap, while time is left
    rounds: list[list[StructuredPair]] = [order, []]
    done = 0
    for rnd, batch in enumerate(rounds):
        cap = screen if rnd == 0 else max_items
        for pr in batch:
            st_fam = stats[pr.family]
            is_ref = pr.family == "homogeneous"
            left = deadline - time.perf_counter()
            if left <= 0:
                st_fam[3] += 1
                st_fam[4].add("time budget")
                done += 1
                continue
            floor = 0.0 if is_ref or best is None else best.eta_lower
            try:
                res = structured_tail(pr, q, epsilon, floor=floor, mass_tol=mass_tol * floor,
                                      max_items=max_items if is_ref else cap, time_limit=min(left, MAX_TIME_BUDGET))
            except TooLarge as exc:
                if rnd == 0 and not is_ref and cap < max_items and "time" not in str(exc):
                    rounds[1].append(pr)
                    continue
                st_fam[3] += 1
                st_fam[4].add("time budget" if "time" in str(exc) else f"work cap ({max_items} prefixes per pair)")
                done += 1
                continue
            finally:
                if progress is not None:
                    progress(done, len(order))
            done += 1
            st_fam[1] += 1
            if is_ref:
                refs[(pr.hamming, "forward" if pr.original_vector == 0 else "reverse")] = res
            if floor > 0 and res.eta_upper <= floor:
                st_fam[2] += 1
                continue
            ranking.append(res)
            if best is None or (res.eta_lower, res.eta) > (best.eta_lower, best.eta):
                best = res
    if progress is not None:
        progress(len(order), len(order))
    if best is None:
        raise TooLarge("no candidate pair could be evaluated within the limits (raise time_budget or max_items)")
    ranking.sort(key=lambda t: (-t.eta_lower, -t.eta, t.pair.label))
    fwd = {j: t for (j, d), t in refs.items() if d == "forward"}
    rev = {j: t for (j, d), t in refs.items() if d == "reverse"}
    complete_refs = len(fwd) == bits and len(rev) == bits
    wj = max(fwd, key=lambda j: (fwd[j].eta, j)) if fwd else 0
    hom, hom_up = (fwd[wj].eta, fwd[wj].eta_upper) if fwd else (0.0, math.inf)
    rj = max(rev, key=lambda j: (rev[j].eta, j)) if rev else 0
    rhom, rhom_up = (rev[rj].eta, rev[rj].eta_upper) if rev else (0.0, math.inf)
    margin = 1.0 + 1e-9  # masses are exact up to ~1e-9 relative rounding
    beats_paper = len(fwd) == bits and best.eta_lower > hom_up * margin
    beats_two = complete_refs and best.eta_lower > max(hom_up, rhom_up) * margin
    two_ref = max([*fwd.values(), *rev.values()], key=lambda t: t.eta, default=None)
    ratio = best.eta / two_ref.eta if two_ref is not None and two_ref.eta_lower > 0 else None
    families = tuple(FamilyStats(family=f, candidates=v[0], evaluated=v[1], pruned=v[2], skipped=v[3],
                                 reason=", ".join(sorted(v[4]))) for f, v in stats.items())
    n_eval = sum(f.evaluated for f in families)
    n_skip = sum(f.skipped for f in families)
    if exact1 is not None:
        searched = ("every neighbouring pair: at L = 1 every pair is structured, and the exact scan covers every "
                    "crowd composition m and both directions")
        kind = Kind.EXACT
    else:
        searched = (f"structured pairs only: D' = a bulk of copies of one vector plus up to {max_group} other "
                    f"vectors (partial outliers{', every small group' if bits <= _GROUPS_MAX_BITS else ''}) or up to "
                    f"{max_copies} copies of the outlier, both directions; {n_eval} of {n_eval + n_skip} "
                    "candidates evaluated. Not every pair of collections: a lower bound on the worst case "
                    "(sufficientdp.ratio.proven.proven_tail bounds every pair)")
        kind = Kind.LOWER_BOUND
    return StructuredSearchResult(
        bits=bits, population=population, q=q, epsilon=epsilon, pair=best.pair, eta=best.eta,
        eta_lower=best.eta_lower, eta_upper=best.eta_upper, homogeneous_eta=hom, homogeneous_eta_upper=hom_up,
        homogeneous_worst_weight=wj, reverse_homogeneous_eta=rhom, reverse_homogeneous_eta_upper=rhom_up,
        homogeneous_by_weight=tuple((j, d, t.eta_lower, t.eta_upper) for (j, d), t in sorted(refs.items())),
        conjecture_holds=not beats_paper, two_sided_holds=not beats_two, ratio=ratio,
        exhaustive=exact1 is not None, ranking=tuple(ranking[:top]), families=families,
        pairs_total=n_eval + n_skip, pairs_evaluated=n_eval, pairs_pruned=sum(f.pruned for f in families),
        pairs_skipped=n_skip, complete=n_skip == 0, max_group=max_group, max_copies=max_copies,
        time_budget=time_budget, max_items=max_items, seconds=time.perf_counter() - t0, kind=kind, searched=searched)


def combined_claims(structured: StructuredSearchResult, heuristic: WorstCaseResult | None = None
                    ) -> dict[str, Any]:
    """The conjecture verdicts of a structured search, together with a heuristic search's if there is one.

    Each search's ``False`` is conclusive (an exact counterexample), so the combined claim is False as soon as
    either finds one; ``True`` means only that neither did. ``eta_lower`` is the larger of the two lower bounds on
    the worst case (the heuristic's eta is exact).

    Returns:
        ``{"conjecture_holds", "two_sided_holds", "eta_lower", "source"}``; ``source`` names the search whose pair
        gives ``eta_lower`` (``"structured"`` or ``"heuristic"``).
    """
    out: dict[str, Any] = {"conjecture_holds": structured.conjecture_holds,
                           "two_sided_holds": structured.two_sided_holds, "eta_lower": structured.eta_lower,
                           "source": "structured"}
    if heuristic is not None:
        out["conjecture_holds"] = out["conjecture_holds"] and heuristic.conjecture_holds
        out["two_sided_holds"] = out["two_sided_holds"] and heuristic.two_sided_holds
        if heuristic.eta > structured.eta_lower:
            out["eta_lower"], out["source"] = heuristic.eta, "heuristic"
    return out
