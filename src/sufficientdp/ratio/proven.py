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
:func:`dominating_curve`), whose k-fold loss law is one FFT power (docs/proofs/blanket.md, step 6).

Everything returns ``kind="bound"`` and ``scope="all-collections"``.
"""

from __future__ import annotations

import functools
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._errors import ParameterError
from .._numerics.logspace import log_comb, logsumexp
from .._numerics.positive_part import CheckedProbs, checked_probs, compound_positive_part_upper
from .._validation import check_epsilon, check_finite_real, check_int, check_open_interval
from ..parameters import local_q
from .result import TailResult

if TYPE_CHECKING:  # (k > 1 only: loaded when used, not on every one-report command's start-up)
    from .._offload import Helper, Pending
    from ..loss.profile import DominatingCurve

__all__ = ["DEFAULT_POINTS", "DOMAINS", "EXACT_L1_MAX_POPULATION", "LARGER_CROWDS_DELTA_ONLY", "LARGER_CROWDS_WINDOW",
           "MAX_CLASSES", "MAX_FULL_BITS", "DeltaBound", "Domain", "Evaluation", "PairType", "blanket_delta", "blanket_mass",
           "bound_in_one_thread",
           "checked_domain", "dominating_curve", "evaluate", "is_exact_single_bit", "pair_types",
           "proven_delta", "proven_tail", "second_process_allowed", "single_bit_larger_crowds", "types_by_name", "worth_a_helper",
           "tail_from_evaluation"]

DOMAINS = ("all", "onehot", "weight")
#: Most report classes (summed over the pair types) the bound evaluates: about 0.8 GB of memory and minutes per
#: calibration at the limit. A weight domain with more falls back to all of {0,1}^L when that has fewer; any other
#: domain with more is refused before any work (all of {0,1}^L: L <= 286; L = 256 has 2.9 million).
MAX_CLASSES = 4_000_000
#: The largest L whose full domain {0,1}^L is within :data:`MAX_CLASSES` (``sum_j (L - j + 1)(j + 1)`` classes:
#: 3,980,977 at L = 286, 4,022,592 at L = 287): the most bits a collection can have its q proven for over every
#: vector (the collector's campaigns are limited to it).
MAX_FULL_BITS = 286
_REL_SAFETY = 1e-9
_COARSE = 5e-2  # lattice resolution of the first pass over pair types
_MID = 1.5e-2  # and of the second
_THREADS = 2  # pair types bounded at once
#: Report classes (summed over the pair types evaluated) from which the bounds run on :data:`_THREADS` threads;
#: below it they run in the calling thread: small lattices hold the GIL in numpy's many short calls, so threads
#: only add hand-overs (L = 5 calibration: 0.20 s on two threads, 0.14 s in one; L = 40, all 40 types at N = 1e7:
#: 0.25 s on two threads, 0.30 s in one; docs/benchmarks.md).
_THREADED_CLASSES = 4000
#: Report classes (summed over the pair types) and pair types from which a bound of every type with k > 1 reports or
#: T rounds shares its work with a helper process (:func:`worth_a_helper`); a fresh interpreter costs about 0.15 s of the
#: other core (start-up and imports), and 4,000 classes at L = 28 are about 1 s of work.
_SPLIT_CLASSES = 4000
_SPLIT_TYPES = 4
_ONE_PROCESS = False  # set by bound_in_one_thread: no second process at all
DEFAULT_RESOLUTION = 5e-4
"""Default lattice resolution of the bound (the rounding slack, as a fraction of the blanket sum's sd); the lattice
is also capped at :data:`FINAL_CELLS` cells, which is what binds for large crowds."""
FINAL_CELLS = 2 ** 20
MIN_RESOLUTION = 1e-12
"""Finest resolution :func:`proven_tail` accepts (as :func:`sufficientdp.accounting.rounds.rounds_tail`; the lattice
is capped at :data:`FINAL_CELLS` cells anyway; 5e-324 divided by zero)."""
MAX_CURVE_LOSS = 350.0
"""Largest per-report privacy loss ``d log((1-q)/q)`` (``d`` the domain's largest distance) that the composed bounds
(k > 1 reports, T rounds) accept: their dominating curves are convex hulls in ``t = e**epsilon`` whose slopes
multiply two such ``t``, which overflows from about 355 (e**710 > 1.8e308)."""


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
        """``all`` when ``max_weight`` is None or equals bits, else ``weight``.

        Raises:
            ParameterError: ``bits`` not an integer in [1, 100000], or ``max_weight`` neither None nor an integer
                in [1, bits] (as :func:`sufficientdp.calibrate` requires; checked before the comparison:
                ``Decimal('nan')`` raised decimal's own error).
        """
        bits = check_int("bits", bits, minimum=1, maximum=100_000)
        if max_weight is not None:
            max_weight = check_int("max_weight", max_weight, minimum=1, maximum=bits)
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


def _log_min_mass(domain: Domain, lvl: NDArray[np.float64], lq: float, lp: float) -> NDArray[np.float64]:
    """``log min_{z in X} R(z)(y)`` for a report y with ``lvl`` set bits (it depends on that count only)."""
    d, rest = _min_mass_counts(domain, lvl)
    return d * lq + rest * lp


def _min_mass_counts(domain: Domain, lvl: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(d, L - d)``: the set and unset bits of the vector z that minimises ``R(z)(y)`` over the domain, for reports
    y with ``lvl`` set bits (``log min_z R(z)(y) = d log q + (L - d) log(1 - q)``)."""
    L = domain.bits
    if domain.kind == "all":
        d = np.full_like(lvl, float(L))
    elif domain.kind == "onehot":
        d = np.where(lvl < L, lvl + 1.0, L - 1.0)
    else:
        w = float(domain.max_weight or 0)
        d = lvl + np.minimum(w, L - lvl)
    return d, L - d


def blanket_mass(domain: Domain, q: float) -> float:
    """``log gamma``: log of the blanket's total mass ``sum_y min_{z in X} R(z)(y)`` (docs/proofs/blanket.md)."""
    lq, lp = math.log(q), math.log1p(-q)
    lc, d, rest = _shapes(domain).mass
    return float(logsumexp(lc + (d * lq + rest * lp)))


def pair_types(domain: Domain, q: float) -> Iterator[PairType]:
    """Every type of neighbouring pair of ``domain``, with its report classes (see :class:`PairType`)."""
    lq, lp = math.log(q), math.log1p(-q)
    shapes = _shapes(domain)
    log_gamma = blanket_mass(domain, q) if domain.kind != "all" else 0.0  # (the uniform blanket needs no mass)
    for t in shapes.types:
        if t.d_min is None or t.rest_min is None:  # q-independent: all of {0,1}^L
            log_omega = t.log_omega
        else:
            log_omega = t.lc + (t.d_min * lq + t.rest_min * lp) - log_gamma
        yield PairType(t.name, log_omega, t.lc + t.d_x * lq + t.rest_x * lp, t.lc + t.d_xp * lq + t.rest_xp * lp)


@dataclass(frozen=True, slots=True)
class _TypeShape:
    """The q-independent arrays of one pair type (flattened over its report classes, read-only): ``log_p`` is
    ``lc + d_x log q + rest_x log(1 - q)`` (``rest_x = L - d_x``), ``log_q`` the same with ``d_xp``; ``log_omega`` is
    the field for the uniform blanket of all of {0,1}^L (no ``d_min``), else ``lc + d_min log q + rest_min log(1 -
    q) - log gamma``."""

    name: str
    lc: NDArray[np.float64]
    d_x: NDArray[np.float64]
    rest_x: NDArray[np.float64]
    d_xp: NDArray[np.float64]
    rest_xp: NDArray[np.float64]
    log_omega: NDArray[np.float64]  # (only used without d_min)
    d_min: NDArray[np.float64] | None
    rest_min: NDArray[np.float64] | None


@dataclass(frozen=True, slots=True)
class _Shapes:
    types: tuple[_TypeShape, ...]
    mass: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]  # log C(L, l), d, L - d at l = 0..L


_SHAPES: dict[Domain, _Shapes] = {}
_SHAPES_CLASSES = 1 << 16  # the arrays of domains with at most this many report classes are kept (<= 4 MB each)


def _shapes(domain: Domain) -> _Shapes:
    """:class:`_Shapes` of the domain (kept for small domains: every q and e' of a search reuses them; the same
    arrays, so the same floats, as computing them at each q)."""
    got = _SHAPES.get(domain)
    if got is None:
        got = _make_shapes(domain)
        if _class_count(domain) <= _SHAPES_CLASSES:
            if len(_SHAPES) >= 8:
                _SHAPES.clear()
            _SHAPES[domain] = got
    return got


def _frozen(a: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.ascontiguousarray(a).ravel()
    out.flags.writeable = False
    return out


def _make_shapes(domain: Domain) -> _Shapes:
    L = domain.bits
    levels = np.arange(L + 1, dtype=float)
    d_mass, rest_mass = _min_mass_counts(domain, levels)
    mass = (_frozen(log_comb(float(L), levels)), _frozen(d_mass), _frozen(rest_mass))
    types: list[_TypeShape] = []
    if domain.kind == "all":
        for j in range(L, 0, -1):
            a = np.arange(L - j + 1, dtype=float)[:, None]  # set bits among the L - j shared bits (x = x' = 0)
            b = np.arange(j + 1, dtype=float)[None, :]  # set bits among the j differing bits (x = 1, x' = 0)
            lc = log_comb(float(L - j), a) + log_comb(float(j), b)
            d_x, d_xp = a + (j - b), a + b
            types.append(_TypeShape(f"j={j}", _frozen(lc), _frozen(d_x), _frozen(L - d_x), _frozen(d_xp),
                                    _frozen(L - d_xp), _frozen(lc - L * math.log(2.0)), None, None))
        return _Shapes(tuple(types), mass)
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
        lc = log_comb(float(a_), ka) + log_comb(float(b_), kb) + log_comb(float(c_), kc) + log_comb(float(r_), kr)
        lvl = ka + kb + kc + kr
        d_x = (a_ - ka) + (c_ - kc) + kb + kr
        d_xp = (b_ - kb) + (c_ - kc) + ka + kr
        d_min, rest_min = _min_mass_counts(domain, lvl)
        types.append(_TypeShape(f"a={a_},b={b_},c={c_}", _frozen(lc), _frozen(d_x), _frozen(L - d_x), _frozen(d_xp),
                                _frozen(L - d_xp), _frozen(lc), _frozen(d_min), _frozen(rest_min)))
    return _Shapes(tuple(types), mass)


def _class_count(domain: Domain) -> int:
    """Report classes summed over the domain's pair types; for a weight domain the count stops as soon as it
    passes :data:`MAX_CLASSES` (its specs are O(w^3): a large w would otherwise take long just to count)."""
    L = domain.bits
    if domain.kind == "all":
        return sum((L - j + 1) * (j + 1) for j in range(1, L + 1))
    if domain.kind == "onehot":
        return 4 * (L - 1)
    w = int(domain.max_weight or 0)
    total = 0
    for c in range(w + 1):
        for a in range(w - c + 1):
            for b in range(w - c + 1):
                if a + b >= 1 and a + b + c <= L:
                    total += (a + 1) * (b + 1) * (c + 1) * (L - a - b - c + 1)
            if total > MAX_CLASSES:
                return total
    return total


def checked_domain(domain: Domain) -> tuple[Domain, tuple[str, ...]]:
    """The domain the all-collections bound evaluates for ``domain`` (itself, or all of {0,1}^L for a weight domain
    over :data:`MAX_CLASSES` report classes when that has fewer) and the notes saying so.

    Raises:
        ParameterError: neither is within :data:`MAX_CLASSES` (the message names bits, and max_weight), before any
            work.
    """
    notes: list[str] = []
    return _checked_size(domain, notes), tuple(notes)


def _checked_size(dom: Domain, notes: list[str]) -> Domain:
    """The domain the bound evaluates: ``dom``, or all of {0,1}^L for a weight domain with more than
    :data:`MAX_CLASSES` report classes when that has fewer (a note says so); a ParameterError naming bits (and
    max_weight) when neither is within the limit, before any work."""
    count = _class_count(dom)
    if count <= MAX_CLASSES:
        return dom
    if dom.kind == "weight" and _class_count(Domain(bits=dom.bits)) <= MAX_CLASSES:
        notes.append(f"the weight <= {dom.max_weight} domain has too many pair types to enumerate here; the bound "
                     "for all of {0,1}^L is used, which covers it (looser)")
        return Domain(bits=dom.bits)
    limit = (f"more than {MAX_CLASSES:,} report classes to evaluate, its limit (about 0.8 GB); all of {{0,1}}^L "
             f"allows bits <= {MAX_FULL_BITS}, a smaller max_weight or one-hot vectors more; or bound the paper's "
             "homogeneous configuration only (method 'homogeneous')")
    if dom.kind == "weight":
        raise ParameterError(f"bits={dom.bits} with max_weight={dom.max_weight}: the all-collections bound over "
                             f"{dom.label} has {limit}")
    raise ParameterError(f"bits must be at most {MAX_FULL_BITS} for the all-collections bound over {dom.label}; got "
                         f"{dom.bits}: it has {limit}")


def blanket_delta(pair: PairType, *, log_gamma: float, others: int, epsilon_prime: float,
                  resolution: float = DEFAULT_RESOLUTION) -> float:
    """Rigorous upper bound on ``delta_PQ(e')`` of the blanket dominating pair of one pair type.

    Positive-part form (docs/proofs/blanket.md, step 3'): with ``g(y) = (R(x)(y) - e**e' R(x')(y)) / omega(y)``,
    ``delta_PQ(e') = E[g(Y) 1{S_{N-1} + g(Y) > 0}] = E[(S_N)_+] / (N gamma)`` where ``S_N`` sums ``g`` over the
    blanket draws of all N people (exchangeability). ``E[(S_N)_+]`` is bounded above with randomized lattice
    rounding, which needs no rounding allowance (:func:`sufficientdp._numerics.positive_part.
    compound_positive_part_upper`); ``resolution`` is the relative rounding slack aimed at.
    """
    return _blanket_delta(_prepare(pair), log_gamma=log_gamma, others=others, epsilon_prime=epsilon_prime,
                          resolution=resolution)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """The parts of :func:`blanket_delta` that depend on the pair type only (not on e'), computed once per type
    when a search evaluates it at many e' (the same arrays, so the same floats, as computing them every time)."""

    pair: PairType
    lo: NDArray[np.float64]  # log omega, normalised
    p: NDArray[np.float64]  # P_c
    p_over_omega: NDArray[np.float64]  # P_c / omega_c
    omega: CheckedProbs  # omega, the probabilities of the blanket sum's atoms (checked, normalised)


def _prepare(pair: PairType) -> _Prepared:
    lo, omega = _blanket_law(pair.log_omega)
    return _Prepared(pair, lo, np.exp(pair.log_p), np.exp(pair.log_p - lo), omega)


def _blanket_law(log_omega: NDArray[np.float64]) -> tuple[NDArray[np.float64], CheckedProbs]:
    """``log omega`` normalised and omega checked, kept for recent small inputs: the blanket of all of {0,1}^L is
    the same at every q (the same arrays, so the same floats, as computing them again)."""
    key = (log_omega.dtype.str, log_omega.shape, log_omega.tobytes()) if log_omega.size <= 4096 else None
    got = _BLANKET_LAWS.get(key) if key is not None else None
    if got is None:
        lo = log_omega - float(logsumexp(log_omega))
        got = (lo, checked_probs(np.exp(lo)))
        if key is not None:
            lo.flags.writeable = False  # shared by every later call
            if len(_BLANKET_LAWS) >= 256:
                _BLANKET_LAWS.clear()
            _BLANKET_LAWS[key] = got
    return got


_BLANKET_LAWS: dict[tuple[str, tuple[int, ...], bytes] | None, tuple[NDArray[np.float64], CheckedProbs]] = {}


def _blanket_delta(prep: _Prepared, *, log_gamma: float, others: int, epsilon_prime: float,
                   resolution: float, local_and_safety: tuple[float, float] | None = None, slack: float = 0.0) -> float:
    """:func:`blanket_delta` on a prepared pair type (``local_and_safety``: :func:`_local_and_safety` at e', if the
    caller has it already; ``slack``: an absolute rounding slack in delta that is also enough, for a caller that
    needs only "at most x": the bound is valid either way, 0 leaves every float as without it)."""
    pair, lo = prep.pair, prep.lo
    local, safety = _local_and_safety(prep, epsilon_prime) if local_and_safety is None else local_and_safety
    gamma = min(math.exp(log_gamma), 1.0)
    n = others + 1
    if gamma * n == 0.0:  # no blanket: the local pair itself (the blanket pair is a post-processing of it)
        return local + safety
    g = prep.p_over_omega - np.exp(pair.log_q + epsilon_prime - lo)
    bound = compound_positive_part_upper(g, prep.omega, gamma=gamma, n=n, rtol=resolution,
                                         max_cells=_cells_for(resolution), atol=slack * n * gamma)
    return max(0.0, min(bound.upper / (n * gamma), local)) + safety


def _local_and_safety(prep: _Prepared, epsilon_prime: float) -> tuple[float, float]:
    """The local pair's delta at e' (``sum_c (P_c - e**e' Q_c)_+``: delta_PQ is at most that, by post-processing)
    and the floating-point allowance every bound of :func:`_blanket_delta` at e' carries (relative to
    ``sum_c |P_c - e**e' Q_c|``, which grows like ``e**e'``)."""
    weight = prep.p - np.exp(prep.pair.log_q + epsilon_prime)  # P_c - e^e' Q_c
    safety = _REL_SAFETY * float(_SUM(np.abs(weight), axis=None)) + 1e-300  # (_SUM(x, axis=None) is np.sum(x))
    return float(_SUM(np.maximum(weight, 0.0), axis=None)), safety


_SUM = np.add.reduce

DEFAULT_POINTS = 48
"""Points where a pair type's hockey-stick curve is bounded to build its dominating pair (k > 1; 17 evenly
spaced, the rest where the hull's chords leave the most room)."""
_ENDPOINT_PAD = 1e-9  # the curve is known exactly just outside [-top, top]


def dominating_curve(pair: PairType, *, log_gamma: float, others: int, resolution: float = DEFAULT_RESOLUTION,
                     points: int = DEFAULT_POINTS, tick: Callable[[], Any] | None = None,
                     focus: tuple[float, float] | None = None,
                     memo: dict[float, float] | None = None, screen: int = 0) -> DominatingCurve:
    """A discrete pair that dominates the blanket pair (P, Q) of one pair type (docs/proofs/blanket.md, step 6).

    ``delta_PQ(e)`` is bounded by :func:`blanket_delta` at ``points`` epsilons in ``(-top, top)``, ``top`` the
    largest per-report log ratio (it bounds the loss of (P, Q)); the lower convex hull of these bounds is the
    privacy profile of the dominating pair (:func:`sufficientdp.loss.profile.curve_from_bounds`).

    Args:
        pair: the pair type (:func:`pair_types`).
        log_gamma: log of the blanket's mass (:func:`blanket_mass`).
        others: N - 1, the other people in the crowd.
        resolution: relative slack of the bounds on delta_PQ.
        points: how many bounds to compute (>= 18).
        tick: called after each bound (progress).
        focus: an interval of epsilons where 24 points are placed first (k reports: around the per-report share
            of the target epsilon, where the composition is decided).
        memo: the bounds already computed for this pair type, blanket and resolution, by epsilon (read and
            filled): a curve with more points after one with fewer reuses them (the same floats: each bound is a
            pure function of its epsilon).
        screen: > 0 for a quick curve from every ``screen``-th focus point only
            (:func:`sufficientdp.loss.profile.curve_from_bounds`; a valid curve, looser).
    """
    from ..loss.profile import curve_from_bounds

    top = float(np.max(np.abs(pair.log_p - pair.log_q))) + _ENDPOINT_PAD
    prep = _prepare(pair)

    parts: dict[float, tuple[float, float]] = {}  # above()'s computation, for delta_of() at the same e'

    def delta_of(e: float) -> float:
        if memo is not None and e in memo:
            return memo[e]
        d = _blanket_delta(prep, log_gamma=log_gamma, others=others, epsilon_prime=e, resolution=resolution,
                           local_and_safety=parts.pop(e, None))
        if memo is not None:
            memo[e] = d
        return d

    def above(e: float) -> float:
        # every bound at e' is at least its float allowance (which grows like e**e'): at large e' it alone lies far
        # above the curve, and such a point, costly to bound (the lattice refines towards a tiny value), cannot be
        # a vertex of the hull (decided as for a fresh curve whether or not the memo holds e', so a curve reusing
        # the memo is the same as a fresh one)
        parts[e] = _local_and_safety(prep, e)
        return parts[e][1]

    return curve_from_bounds(delta_of, name=pair.name, top=top, points=points, resolution=resolution, tick=tick,
                             focus=focus, above=above, screen=screen)


_Row = tuple[str, float, float, float, float]  # (type, eta, delta at e', e', delta at epsilon)


class _Rows:
    """The composed rows of :func:`_evaluate_composed` for pair types of ``dom`` at ``q``: each row a pure function of
    the type and of ``floor`` (set once, from the widest type's bound), whether computed here or in a helper process
    (:func:`_row_elsewhere`, which builds the same object there): the same floats."""

    def __init__(self, *, dom: Domain, q: float, log_gamma: float, others: int, epsilon: float, reports: int,
                 resolution: float) -> None:
        self.dom, self.q, self.log_gamma, self.others = dom, q, log_gamma, others
        self.epsilon, self.reports, self.resolution = epsilon, reports, resolution
        self.coarse = max(resolution, _COARSE)
        self.between = [r for r in _tiers(resolution)[1:-1] if r < self.coarse]  # (the mid lattice, if any)
        self.floor = math.inf  # at most the final maximum over the types (the widest type's smaller bound)
        self.memos: dict[tuple[str, float], dict[float, float]] = {}

    def one(self, pt: PairType, res: float, screen: int = 0) -> _Row:
        from ..loss.profile import compose_curve

        # (a pure function of its key, the type being a pair type of ``dom`` at ``q``: a calibration's last probe of
        # the widest type is the final check's too)
        key = (self.dom, self.q, pt.name, self.others, self.epsilon, self.reports, res, screen, _tuning())
        got = _ROWS.get(key)
        if got is not None:
            return got
        curve = dominating_curve(pt, log_gamma=self.log_gamma, others=self.others, resolution=res,
                                 focus=(-self.epsilon, 1.5 * self.epsilon), points=DEFAULT_POINTS + 24,
                                 memo=self.memos.setdefault((pt.name, res), {}), screen=screen)
        comp = compose_curve(curve, self.reports, self.epsilon)
        row = (pt.name, comp.eta, comp.eta * -math.expm1(comp.epsilon_prime - self.epsilon), comp.epsilon_prime,
               comp.delta)
        if len(_ROWS) >= _ROWS_KEPT:
            _ROWS.clear()
        _ROWS[key] = row
        return row

    def coarse_row(self, pt: PairType) -> tuple[_Row, bool]:
        """The type's row on the coarse lattice: its first quick curve that composes to at most ``floor`` (and True),
        else its full curve's (and False)."""
        if math.isfinite(self.floor):
            for screen in _SCREENS:
                row = self.one(pt, self.coarse, screen)
                if row[1] <= self.floor:
                    return row, True
        return self.one(pt, self.coarse), False

    def fine_row(self, pt: PairType) -> _Row:
        """The type's refined row: its 24-point quick curve on the mid lattice, then on the final one, while above
        ``floor``, then its full curve on the final lattice."""
        if math.isfinite(self.floor):
            for res in (*self.between, self.resolution):
                row = self.one(pt, res, _SCREENS[-1])
                if row[1] <= self.floor:
                    return row
        return self.one(pt, self.resolution)

    def adopt(self, memos: dict[tuple[str, float], dict[float, float]]) -> None:
        """The bounds behind rows computed in the helper (a later curve of the same type reuses them)."""
        for k, memo in memos.items():
            self.memos.setdefault(k, {}).update(memo)

    def inputs(self) -> dict[str, Any]:
        """What :func:`_rows_there` rebuilds this object from in a helper process (the same rows there)."""
        return {"dom": self.dom, "q": self.q, "others": self.others, "epsilon": self.epsilon,
                "reports": self.reports, "resolution": self.resolution}

    def elsewhere(self, helper: Helper, name: str, fine: bool) -> Pending:
        """:meth:`coarse_row` (``fine`` False) or :meth:`fine_row` of the type ``name``, sent to ``helper``."""
        return helper.submit(_row_elsewhere, {**self.inputs(), "floor": self.floor, "name": name, "fine": fine})


@functools.lru_cache(maxsize=1)
def types_by_name(dom: Domain, q: float) -> tuple[float, dict[str, PairType]]:
    """The blanket's log mass and the pair types of ``dom`` at ``q`` by name, kept for the next call (one domain at a
    time): what a helper process rebuilds its work from (k > 1 rows here, T-round curves in
    :mod:`sufficientdp.accounting.rounds`)."""
    return blanket_mass(dom, q), {pt.name: pt for pt in pair_types(dom, q)}


def _rows_there(*, dom: Domain, q: float, others: int, epsilon: float, reports: int, resolution: float
                ) -> tuple[_Rows, dict[str, PairType]]:
    """:class:`_Rows` rebuilt in a helper process from :meth:`_Rows.inputs`, and the domain's pair types by name."""
    log_gamma, types = types_by_name(dom, q)
    return _Rows(dom=dom, q=q, log_gamma=log_gamma, others=others, epsilon=epsilon, reports=reports,
                 resolution=resolution), types


def _row_elsewhere(*, dom: Domain, q: float, others: int, epsilon: float, reports: int, resolution: float,
                   floor: float, name: str, fine: bool
                   ) -> tuple[_Row, bool, dict[tuple[str, float], dict[float, float]]]:
    """A row of :class:`_Rows` in a helper process: ``(row, from a quick curve, the bounds behind it)``."""
    rows, types = _rows_there(dom=dom, q=q, others=others, epsilon=epsilon, reports=reports, resolution=resolution)
    rows.floor = floor
    if fine:
        return rows.fine_row(types[name]), False, rows.memos
    row, quick = rows.coarse_row(types[name])
    return row, quick, rows.memos


def _coarse_rows(rows_of: _Rows, rest: list[PairType], pool: Any, helper: Helper | None) -> dict[str, tuple[_Row, bool]]:
    """Every type's coarse row (:meth:`_Rows.coarse_row`), by name: with a helper, this thread takes the types from
    the first on and a feeding thread sends them one at a time from the last on to the helper, until they meet;
    else on ``pool``."""
    if helper is None:
        return {r[0][0]: r for r in pool.map(rows_of.coarse_row, rest)}
    got: dict[str, tuple[_Row, bool]] = {}

    def here(pt: PairType) -> None:
        got[pt.name] = rows_of.coarse_row(pt)

    def there(pt: PairType) -> None:
        row, quick, memos = rows_of.elsewhere(helper, pt.name, fine=False).result()
        rows_of.adopt(memos)
        got[pt.name] = (row, quick)

    from .._offload import from_both_ends

    from_both_ends(rest, here, there)
    return got


def _evaluate_composed(types: list[PairType], *, q: float, log_gamma: float, others: int, epsilon: float,
                       reports: int, eps0: float, resolution: float, dom: Domain, notes: list[str],
                       progress: Callable[[int, int], Any] | None, helper: Helper | None = None) -> Evaluation:
    """k > 1: each type's dominating pair (:func:`dominating_curve`) composed k times
    (:func:`sufficientdp.loss.profile.compose_curve`); per type ``min_e' delta_k(e') / (1 - e**(e' - e))``.

    Every type on a coarse lattice (valid, looser), then the fine bound from the largest down while it matters.
    Two shortcuts give the same eta: the widest type is bounded first, and when its bound is trivial (eta >= 1 on
    both lattices) so is the maximum (eta = 1), the others are not bounded; otherwise its smaller bound ``floor`` is
    at most the final maximum, and a type whose quick curve (:data:`_SCREENS`: 6, then 12, then 24 focus points; a
    valid curve: a lower hull of fewer upper bounds lies above) composes to at most ``floor`` cannot raise the
    maximum, so it keeps that bound (reported in ``by_type``) instead of the full curve's. The same holds when a type
    is refined: it first gets the 24-point quick curve on the :data:`_MID` lattice (far cheaper at large L, and
    its lattices are reused by the finer ones), then on the final one, and its full curve only if both compose
    above ``floor``.

    Every row is a pure function of its type and ``floor`` (:class:`_Rows`), so the rows may be computed in any
    order and place: two at a time on the pool's threads, or here and in ``helper`` (a helper process: the coarse
    rows from both ends of the list, the next type to refine beside the current one), the same floats.
    """
    rows_of = _Rows(dom=dom, q=q, log_gamma=log_gamma, others=others, epsilon=epsilon, reports=reports,
                    resolution=resolution)
    coarse = rows_of.coarse
    fines: dict[str, _Row] = {}
    first: _Row | None = None
    if len(types) > 1:
        # (the halving of a calibration meets trivial q first; k = 1 stops there too)
        wide = _widest(types)
        first = rows_of.one(wide, coarse)
        if coarse > resolution:
            fines[wide.name] = rows_of.one(wide, resolution)
        rows_of.floor = min(first[1], fines[wide.name][1]) if wide.name in fines else first[1]
        if rows_of.floor >= 1.0:
            if progress is not None:
                progress(2 * len(types), 2 * len(types))
            _, _, delta, eps_p, _ = first
            return Evaluation(1.0, delta, eps_p, wide.name, ((wide.name, 1.0),), log_gamma, dom,
                              tuple(notes + ["the bound is trivial (eta <= 1) already for the widest pair type"]))
    rest = [pt for pt in types if first is None or pt.name != first[0]]

    # the coarse curves of different types are independent pure functions: computed two at a time when large
    # (numpy releases the GIL in the lattice work; the same floats either way), or here and in the helper
    with _InlinePool() if helper is not None else pair_type_pool(rest) as pool:
        side = helper is not None or pool.threaded  # whether the next type to refine is bounded alongside
        done = _coarse_rows(rows_of, rest, pool, helper)
        partial = {k for k, (_, quick) in done.items() if quick}  # types whose row is a quick curve's (<= floor)
        rows = {pt.name: first if first is not None and pt.name == first[0] else done[pt.name][0] for pt in types}
        if progress is not None:
            progress(len(types), 2 * len(types))
        if coarse > resolution:
            # from the largest coarse bound down, while it exceeds the largest refined one (a type whose bound is
            # below that cannot be the maximum); a type with a partial curve above it gets its full coarse curve
            # first and takes its place in the order (as if its full curve had been computed at once)
            best_fine = -1.0
            by_name = {pt.name: pt for pt in types}
            index = {pt.name: i for i, pt in enumerate(types)}
            pending = set(rows)

            def next_up() -> str:
                return max(pending, key=lambda k: (rows[k][1], -index[k]))  # (sorted()'s order: ties by index)

            def two_fine(name: str, after: str) -> tuple[_Row, _Row]:
                if helper is None:
                    a, b = pool.map(lambda k: rows_of.fine_row(by_name[k]), [name, after])
                    return a, b
                there = rows_of.elsewhere(helper, after, fine=True)
                here = rows_of.fine_row(by_name[name])
                row, _, memos = there.result()
                rows_of.adopt(memos)
                return here, row

            while pending:
                name = next_up()
                if rows[name][1] <= best_fine:
                    break
                if name in partial:
                    partial.discard(name)
                    rows[name] = rows_of.one(by_name[name], coarse)
                    continue
                pending.discard(name)
                if name not in fines and side and pending:  # the next candidate's fine bound alongside
                    after = next_up()
                    if after not in partial and after not in fines and rows[after][1] > best_fine:
                        fines[name], fines[after] = two_fine(name, after)
                fine = fines[name] if name in fines else rows_of.fine_row(by_name[name])
                if fine[1] < rows[name][1]:
                    rows[name] = fine
                best_fine = max(best_fine, rows[name][1])
    if progress is not None:
        progress(2 * len(types), 2 * len(types))
    vals = list(rows.values())
    name, eta, delta, eps_p, _ = max(vals, key=lambda v: v[1])
    eta = min(1.0, eta * (1 + _REL_SAFETY) + 1e-15)
    return Evaluation(eta, delta, eps_p, name, tuple((v[0], v[1]) for v in vals), log_gamma, dom, tuple(notes))


_ROWS: dict[tuple[Any, ...], _Row] = {}
"""The composed bounds of :func:`_evaluate_composed`'s recent curves, by everything they depend on (the domain, q and
the pair type's name, the crowd, epsilon, k, the lattice, the quick curve and the tuning): a calibration's
search bounds the widest type at the q it returns, and the final check over every type needs that again."""
_ROWS_KEPT = 4096


def _tuning() -> tuple[Any, ...]:
    """The module constants a composed row depends on besides its inputs, read now (tests may patch them)."""
    from .._numerics import positive_part
    from ..loss import profile

    return (DEFAULT_POINTS, _REL_SAFETY, *positive_part.tuning(), *profile.tuning())


_SCREENS = (4, 2, 1)
"""The quick curves of a type in :func:`_evaluate_composed`, in order: every 4th, 2nd, then every focus point (6, 12,
24 points, nested; :func:`sufficientdp.loss.profile.curve_from_bounds`); a type whose quick curve composes to at
most ``floor`` is not bounded further. At L = 40, k = 2 near the calibrated q, 4, 9 and 17 of the 39 other types
stop at 6, 12 and 24 points, instead of the 38 initial points of a full curve each."""


def _checked_inputs(*, q: float, bits: int, population: int, epsilon: float, reports: int, domain: Domain | None,
                    resolution: float) -> tuple[float, int, int, float, int, float, Domain]:
    """The common arguments of :func:`proven_tail` and :func:`proven_delta`, validated (the domain defaults to all
    of {0,1}^L)."""
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1, maximum=100_000)
    population = check_int("population", population, minimum=1, maximum=10**12)
    epsilon = check_epsilon(epsilon)
    reports = check_int("reports", reports, minimum=1, maximum=10_000)
    resolution = check_open_interval("resolution", resolution, 0.0, 1.0)
    if resolution < MIN_RESOLUTION:
        raise ParameterError(f"resolution must be in [{MIN_RESOLUTION:g}, 1); got {resolution!r}")
    dom = domain if domain is not None else Domain(bits=bits)
    if not isinstance(dom, Domain):
        raise ParameterError(f"domain must be a Domain or None; got {domain!r}")
    if dom.bits != bits:
        raise ParameterError(f"domain.bits must equal bits ({bits}); got {dom.bits}")
    if reports > 1:  # (on the domain the bound evaluates: all of {0,1}^L may stand in for a weight domain)
        check_composable(q, _checked_size(dom, []), releases=reports, epsilon=epsilon)
    return q, bits, population, epsilon, reports, resolution, dom


def proven_tail(*, q: float, bits: int, population: int, epsilon: float, reports: int = 1,
                domain: Domain | None = None, resolution: float = DEFAULT_RESOLUTION,
                epsilon_prime_hint: float | None = None,
                progress: Callable[[int, int], Any] | None = None, larger_crowds: bool = False) -> TailResult:
    """Rigorous upper bound on ``eta = P[R(S) > e**epsilon]`` for **every** pair of neighbouring collections.

    One bit (L = 1, one report, N <= 10**6) is answered exactly instead: every crowd composition m and both
    directions are scanned (:func:`sufficientdp.ratio.single_bit.single_bit_worst_tail`; ``kind="exact"``). That
    exact value holds for crowds of exactly N people: it is *not* monotone in N (q = 1/4, epsilon = 1: 2.6e-8 at
    N = 61, 5.4e-8 at N = 64). ``larger_crowds=True`` asks for a bound that also holds for every larger crowd (what
    a collector that releases batches of at least N people needs): the blanket bound already does (step 7 of
    docs/proofs/blanket.md); at L = 1 it is :func:`single_bit_larger_crowds`.

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
        larger_crowds: the bound must also hold for every crowd of more than N people (see above).

    Returns:
        A :class:`TailResult` with ``scope="all-collections"``, ``kind="bound"`` (``"exact"`` at L = 1), and in
        ``details`` the e' used, the worst pair type and the blanket's mass.

    References:
        seed 001 eq. (1.7); ERRATA 5; docs/proofs/blanket.md.

    Examples:
        >>> r = proven_tail(q=0.3, bits=5, population=1000, epsilon=math.log(2))
        >>> r.kind, r.scope, r.eta < 0.01
        ('bound', 'all-collections', True)
    """
    q, bits, population, epsilon, reports, resolution, dom = _checked_inputs(
        q=q, bits=bits, population=population, epsilon=epsilon, reports=reports, domain=domain,
        resolution=resolution)
    if epsilon_prime_hint is not None:
        epsilon_prime_hint = check_finite_real("epsilon_prime_hint", epsilon_prime_hint)
    if not isinstance(larger_crowds, bool):
        raise ParameterError(f"larger_crowds must be True or False; got {larger_crowds!r}")
    t0 = time.perf_counter()
    notes: tuple[str, ...] = ()
    if bits == 1 and reports == 1 and population >= 2:
        if larger_crowds and population + LARGER_CROWDS_WINDOW <= EXACT_L1_MAX_POPULATION:
            return single_bit_larger_crowds(q=q, population=population, epsilon=epsilon)
        if is_exact_single_bit(bits=bits, population=population, larger_crowds=larger_crowds):
            from .single_bit import single_bit_worst_tail

            res = single_bit_worst_tail(population=population, q=q, epsilon=epsilon)
            details = dict(res.details)
            details.update({"domain": dom.label, "bound": "exact: every crowd composition m and both directions "
                            "scanned (seed 000)", "crowds": "exactly N people",
                            "seconds": time.perf_counter() - t0})
            return replace(res, method="proven", scope="all-collections", details=details)
        notes = (f"L = 1 with N > {EXACT_L1_MAX_POPULATION:,}: the exact scan over every crowd composition is "
                 "not run; this is the privacy-blanket bound (valid, looser).",)
    hint = epsilon_prime_hint if epsilon_prime_hint is not None and epsilon_prime_hint < epsilon else None
    ev = evaluate(q=q, population=population, epsilon=epsilon, reports=reports, domain=dom,
                  resolution=resolution, epsilon_prime_hint=hint, progress=progress)
    if notes:
        ev = replace(ev, notes=ev.notes + notes)
    return _result(q, bits, population, epsilon, reports, ev, t0)


@dataclass(frozen=True, slots=True)
class DeltaBound:
    """A rigorous upper bound on ``delta(epsilon)`` of one release, from :func:`proven_delta`.

    Attributes:
        delta: the bound (the maximum over the pair types; 0 where every report is local DP at epsilon / k).
        epsilon: where delta is bounded.
        worst: the pair type with the largest bound ("local", or "j=1" at L = 1 answered by the exact scan).
        by_type: each pair type's bound, on the last rung it reached (a valid bound for that type).
        method: how the number was obtained, in words.
        kind: ``"bound"`` (an upper bound; at L = 1 the upper end of the exact scan's rounding bracket).
        scope: ``"all-collections"``: every pair of neighbouring collections of the domain, both directions, every
            crowd of at least N people.
        notes: anything the number rests on beyond the method.
    """

    delta: float
    epsilon: float
    worst: str
    by_type: tuple[tuple[str, float], ...]
    method: str
    notes: tuple[str, ...] = ()
    kind: str = "bound"
    scope: str = "all-collections"


def proven_delta(*, q: float, bits: int, population: int, epsilon: float, reports: int = 1,
                 domain: Domain | None = None, resolution: float = DEFAULT_RESOLUTION,
                 progress: Callable[[int, int], Any] | None = None, enough: float | None = None) -> DeltaBound:
    """Rigorous upper bound on ``delta(epsilon) = E[(1 - e**(epsilon - loss))_+]`` of one release (N people, k
    reports each) for **every** pair of neighbouring collections of the domain, both directions, and every crowd
    of at least N people.

    The hockey-stick divergence is closed under post-processing, so no step through a second epsilon is needed
    (docs/proofs/blanket.md, steps 2-3; eta needs step 4): k = 1, each pair type's blanket bound at
    ``e' = epsilon`` (:func:`blanket_delta`), or its dominating curve read at epsilon where the bound's float
    allowance decides; k > 1, each type's dominating curve composed k times and read at epsilon (step 6). The
    bound is the maximum over the types. Each type climbs a ladder of valid bounds, coarse to fine
    (:class:`_DeltaLadder`), always the type with the largest current bound next (a type keeps the smaller of its
    rungs), until that type is on its last rung: the maximum of the current bounds is then final (each is valid;
    no other type can exceed it). A type starts from its eta bound where :func:`evaluate` computed one at the same
    arguments (``delta <= eta``; ``account`` at T = 1 bounds eta first): at L = 40, N = 10^7, q = 0.42,
    epsilon = 2 the 23 types j <= 23 stay there. The bound falls with N (step 7).

    One bit, one report, ``2 <= N <=`` :data:`EXACT_L1_MAX_POPULATION`: the exact scan over every crowd
    composition (the upper end of its rounding bracket,
    :func:`sufficientdp.ratio.single_bit.worst_delta_upper`), which also holds for every larger crowd: a crowd of
    N' + 1 people is one of N' people plus an independent report, a post-processing.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 1, the smallest crowd.
        epsilon: > 0.
        reports: k >= 1 reports per person.
        domain: the vectors people may hold (default all of {0,1}^L).
        resolution: the final lattice resolution (smaller: tighter, slower).
        progress: optional callback ``progress(done, total)``.
        enough: stop refining as soon as every type's bound is at most this (a search's target: the answer is then
            a valid bound at most ``enough``, not the tightest; None: the tightest).

    Returns:
        A :class:`DeltaBound`.

    References:
        seed 001 eq. (1.7); docs/proofs/blanket.md.

    Examples:
        >>> b = proven_delta(q=0.3, bits=5, population=1000, epsilon=math.log(2))
        >>> b.kind, b.scope, 0.0 < b.delta < proven_tail(q=0.3, bits=5, population=1000, epsilon=math.log(2)).eta
        ('bound', 'all-collections', True)
    """
    q, bits, population, epsilon, reports, resolution, dom = _checked_inputs(
        q=q, bits=bits, population=population, epsilon=epsilon, reports=reports, domain=domain,
        resolution=resolution)
    if enough is not None:
        enough = check_finite_real("enough", enough)
    if reports * _local_epsilon(dom, q) <= epsilon:
        return DeltaBound(0.0, epsilon, "local", (), "local DP: the privacy loss never exceeds k * epsilon_0 <= "
                          "epsilon, so delta(epsilon) = 0")
    if bits == 1 and reports == 1 and 2 <= population <= EXACT_L1_MAX_POPULATION:
        from .single_bit import worst_delta_upper

        d = worst_delta_upper(population=population, q=q, epsilon=epsilon)
        value = 1.0 if d is None else min(1.0, float(d))
        return DeltaBound(value, epsilon, "j=1", (("j=1", value),),
                          "exact: every crowd composition m and both directions scanned (seed 000), the upper end "
                          "of the rounding bracket; the worst delta does not grow with N (post-processing)")
    notes: list[str] = []
    checked = _checked_size(dom, notes)
    log_gamma = blanket_mass(checked, q)
    types = list(pair_types(checked, q))
    climb = _DeltaLadder(q=q, log_gamma=log_gamma, others=population - 1, epsilon=epsilon, reports=reports,
                         resolution=resolution, dom=checked, enough=enough)
    total = len(types) * climb.rungs
    done = [0]

    def step(pt: PairType, value: float, rung: int) -> tuple[float, int, bool]:
        got = climb.step(pt, value, rung)
        done[0] += 1
        if progress is not None:
            progress(min(done[0], total - 1), total)
        return got

    by_name = {pt.name: pt for pt in types}
    known = _ETA_BY_TYPE.get((dom, q, population, epsilon, reports, resolution), {})
    current = {name: (min(1.0, known[name]), -1, False) for name in by_name if name in known}
    fresh = [pt for pt in types if pt.name not in current]
    with pair_type_pool(fresh) as pool:  # (the same floats either way: each bound is a pure function of its key)
        current.update(zip((pt.name for pt in fresh), pool.map(lambda pt: step(pt, math.inf, -1), fresh)))
    current = {name: current[name] for name in by_name}  # (the types' order: ties go to the first)
    # k > 1 with enough work: the next type's climb alongside, in a helper process (threads took as long as one at a
    # time: the short numpy calls of a curve hold the GIL); each rung is a pure function of its inputs, so every
    # bound is the float of one process, and the second climb is a valid bound the one-at-a-time order may skip
    from .._offload import Helper

    shared = reports > 1 and worth_a_helper(types)
    helper: Helper | None = None  # (started at the first climb it can take: a probe that stops at once starts none)
    try:
        while True:
            order = sorted(current, key=lambda k: -current[k][0])  # (ties: the earlier type first)
            name = order[0]
            value, rung, last = current[name]
            if last or (enough is not None and value * (1 + _REL_SAFETY) + 1e-15 <= enough):
                break
            side = next((k for k in order[1:] if not current[k][2]), None) if shared else None
            if side is not None and helper is None:
                helper = Helper()
            pending = (None if side is None or helper is None else
                       climb.elsewhere(helper, by_name[side], current[side][1]))
            current[name] = step(by_name[name], value, rung)
            if pending is not None and side is not None:
                done[0] += 1
                current[side] = climb.collect(pending, *current[side][:2])
    finally:
        if helper is not None:
            helper.close()
    if progress is not None:
        progress(total, total)
    delta = min(1.0, value * (1 + _REL_SAFETY) + 1e-15) if value > 0.0 else 0.0
    return DeltaBound(delta, epsilon, name, tuple((k, v) for k, (v, _, _) in current.items()),
                      climb.method, tuple(notes))


class _DeltaLadder:
    """The rungs of one pair type's delta(epsilon) bound in :func:`proven_delta`, coarse to fine, each valid.

    k = 1: the blanket bound at epsilon on the lattices of :func:`_tiers`; where its float allowance (which grows
    like ``e**epsilon``) is more than 1% of it (on any lattice: a finer one cannot go below it), the bound is mostly
    that allowance (a small delta at a large epsilon: L = 5, N = 1000, q = 0.3269, epsilon = 3 gives 1.9e-8 for a
    delta near 1e-12), and the type goes on to its dominating curve read at epsilon (:func:`dominating_curve`: the hull of bounds at other epsilons, some with
    a smaller allowance, and the exact 0 at the type's largest loss): 12 focus points on the coarse lattice (the
    allowance, not the lattice, decides there: L = 40, q = 0.42, epsilon = 2 gives the same 1.6774e-9 for the worst
    type on every lattice, where the bound at epsilon is 7.1e-9; 6 points first), then the full curve on the final
    lattice.
    A type whose largest per-report loss is below epsilon has delta exactly 0 (post-processing of the local pair).
    k > 1: the composed rows of :class:`_Rows` read at epsilon (the 6- and 12-point quick curves and the full
    curve on the coarse lattice, then the full curve on the mid and the final one; at L = 40, N = 10^7,
    epsilon = 2: at q = 0.42 the 6-point curve is 20-40% above the full one, the 12-point one 0.1%, and the coarse
    lattice 1e-4 above the final one; at q = 0.3789, where delta is 7e-5, the coarse lattice is 5% above).
    """

    def __init__(self, *, q: float, log_gamma: float, others: int, epsilon: float, reports: int,
                 resolution: float, dom: Domain, enough: float | None = None) -> None:
        self.log_gamma, self.others, self.epsilon, self.reports = log_gamma, others, epsilon, reports
        self.resolution, self.direct = resolution, 0
        # (a search's probe needs only "at most enough": the bound at epsilon may keep a rounding slack of 1%
        # of it instead of refining its lattice towards a tiny value)
        self.slack = 0.01 * enough if enough is not None and enough > 0.0 else 0.0
        if reports == 1:
            self.tiers: list[tuple[float, int]] = [(r, 0) for r in _tiers(resolution)]
            self.direct = len(self.tiers)  # (the rungs of the bound at epsilon itself)
            # (the curves, where the allowance decides: it does not depend on the lattice, so the quick curve's is
            # the coarse one)
            coarse = max(resolution, _COARSE)
            self.tiers += [(coarse, _SCREENS[0]), (coarse, _SCREENS[1]), (resolution, 0)]
            self.prepared: dict[str, tuple[_Prepared, float] | None] = {}  # (the type, its allowance at epsilon)
            self.memos: dict[tuple[str, float], dict[float, float]] = {}
            self.method = ("maximum over the pair types of the privacy-blanket bound on delta_PQ(epsilon), or its "
                           "dominating curve at epsilon (docs/proofs/blanket.md, steps 1-3 and 6)")
        else:
            self.rows = _Rows(dom=dom, q=q, log_gamma=log_gamma, others=others, epsilon=epsilon, reports=reports,
                              resolution=resolution)
            coarse = self.rows.coarse
            mids = [(r, 0) for r in self.rows.between]
            self.tiers = [(coarse, _SCREENS[0]), (coarse, _SCREENS[1]), (coarse, 0), *mids, (resolution, 0)]
            self.method = ("maximum over the pair types of delta at epsilon of k composed privacy-blanket "
                           "dominating pairs (docs/proofs/blanket.md, steps 1-3 and 6)")
        self.rungs = len(self.tiers)

    def step(self, pt: PairType, value: float, rung: int) -> tuple[float, int, bool]:
        """The type's next rung after ``rung`` (-1: the first): ``(the smaller bound, the rung, whether it is the
        type's last)``."""
        rung += 1
        res, screen = self.tiers[rung]
        if self.reports > 1:
            return min(value, self.rows.one(pt, res, screen)[4]), rung, rung == self.rungs - 1
        return self._one_report(pt, value, rung, res, screen)

    def elsewhere(self, helper: Helper, pt: PairType, rung: int) -> Pending:
        """k > 1: the composed row of the type's rung after ``rung``, sent to ``helper`` (with the bounds this
        process has for its curve)."""
        res, screen = self.tiers[rung + 1]
        return helper.submit(_row_at_elsewhere, {
            **self.rows.inputs(), "name": pt.name, "res": res, "screen": screen,
            "memo": dict(self.rows.memos.get((pt.name, res), {}))})

    def collect(self, pending: Pending, value: float, rung: int) -> tuple[float, int, bool]:
        """:meth:`step`'s answer from :meth:`elsewhere`'s row."""
        row, memos = pending.result()
        self.rows.adopt(memos)
        rung += 1
        return min(value, row[4]), rung, rung == self.rungs - 1

    def _facts(self, pt: PairType) -> tuple[_Prepared, float] | None:
        """The prepared type and the float allowance of its bound at epsilon, once per type; None when the type's
        largest per-report privacy loss is below epsilon (its delta there is 0)."""
        if pt.name not in self.prepared:
            largest = float(np.max(np.abs(pt.log_p - pt.log_q)))
            if largest < self.epsilon * (1 - 1e-9) - 1e-12:
                self.prepared[pt.name] = None
            else:
                prep = _prepare(pt)
                self.prepared[pt.name] = (prep, _local_and_safety(prep, self.epsilon)[1])
        return self.prepared[pt.name]

    def _one_report(self, pt: PairType, value: float, rung: int, res: float, screen: int) -> tuple[float, int, bool]:
        """:meth:`step` for k = 1."""
        facts = self._facts(pt)
        if facts is None:
            return 0.0, self.rungs - 1, True  # (delta of the local pair at epsilon is 0: so is delta_PQ)
        prep, safety = facts
        if rung < self.direct and safety >= value:
            return value, self.direct - 1, False  # (the bound at epsilon is at least its allowance: on to the curves)
        if rung < self.direct:
            got = _blanket_delta(prep, log_gamma=self.log_gamma, others=self.others, epsilon_prime=self.epsilon,
                                 resolution=res, slack=self.slack)
        else:
            curve = dominating_curve(pt, log_gamma=self.log_gamma, others=self.others, resolution=res,
                                     focus=(-self.epsilon, 1.5 * self.epsilon), points=DEFAULT_POINTS + 24,
                                     memo=self.memos.setdefault((pt.name, res), {}), screen=screen)
            got = float(curve(np.array([self.epsilon]))[0])
        value = min(value, got)
        if rung == self.rungs - 1:
            return value, rung, True
        if rung < self.direct and safety > 0.01 * value:
            return value, self.direct - 1, False  # the allowance decides: on to the curves (no finer lattice)
        return value, rung, rung == self.direct - 1  # (the direct bound on the final lattice: done)


def _row_at_elsewhere(*, dom: Domain, q: float, others: int, epsilon: float, reports: int, resolution: float, name: str,
                      res: float, screen: int, memo: dict[float, float]
                      ) -> tuple[_Row, dict[tuple[str, float], dict[float, float]]]:
    """``_Rows.one`` of the type ``name`` on lattice ``res`` in a helper process: ``(row, the bounds behind it)``
    (``memo``: the bounds the sending process has for that curve; the same floats either way)."""
    rows, types = _rows_there(dom=dom, q=q, others=others, epsilon=epsilon, reports=reports, resolution=resolution)
    rows.memos[(name, res)] = dict(memo)
    return rows.one(types[name], res, screen), rows.memos


#: Largest N at which L = 1 is answered by the exact scan over every crowd composition (O(N) per evaluation).
EXACT_L1_MAX_POPULATION = 1_000_000


def is_exact_single_bit(*, bits: int, population: int, reports: int = 1, larger_crowds: bool = False) -> bool:
    """Whether :func:`proven_tail` answers with the exact worst value (``kind="exact"``) rather than a bound: one
    bit, one report, ``2 <= N <=`` :data:`EXACT_L1_MAX_POPULATION`, for exactly N people (``larger_crowds=False``).
    The one place this rule lives (a calibration's ``kind`` reads it too)."""
    return (bits == 1 and reports == 1 and 2 <= population <= EXACT_L1_MAX_POPULATION) and not larger_crowds


#: Crowd sizes N, N+1, ..., N+LARGER_CROWDS_WINDOW-1 scanned exactly by :func:`single_bit_larger_crowds`.
LARGER_CROWDS_WINDOW = 8
#: From this N on, :func:`single_bit_larger_crowds` is the delta bound from N alone (no window).
LARGER_CROWDS_DELTA_ONLY = 1000
#: The e'/epsilon ratios tried, in this order, by :func:`single_bit_larger_crowds` for the delta-to-eta step (any
#: e' is valid).
_LARGER_CROWDS_RATIOS = (0.984375, 0.96875, 0.9375, 0.875, 0.75, 0.5, 0.25)


def single_bit_larger_crowds(*, q: float, population: int, epsilon: float) -> TailResult:
    """Upper bound on the worst ``eta`` over every pair of neighbouring collections of **at least** N people, L = 1.

    The exact worst eta at L = 1 is not monotone in N, so the value at N says nothing about N + 3. The worst
    *delta* is: a crowd of N' + 1 people is a crowd of N' people plus one independent report (a post-processing
    of the count), so ``delta*(N' + 1, e') <= delta*(N', e')`` for every neighbouring pair and e'. With
    ``eta <= delta(e') / (1 - e**(e' - epsilon))`` for any ``e' < epsilon`` (docs/proofs/blanket.md, step 4) this
    gives, with ``W`` = :data:`LARGER_CROWDS_WINDOW`::

        sup_{N' >= N} eta*(N') <= max( max_{N <= N' < N + W} eta*(N'),
                                       min_e' delta*(N + W, e') / (1 - e**(e' - epsilon)) )

    and also ``<= min_e' delta*(N, e') / (1 - e**(e' - epsilon))``; the smaller of the two is returned (from
    N = :data:`LARGER_CROWDS_DELTA_ONLY` on only the second is computed: there the exact values barely move over
    the window and the delta term decides). Every term is the upper end of
    :func:`~sufficientdp.ratio.single_bit.single_bit_worst_tail`'s rounding bracket.

    Raises:
        ParameterError: a parameter out of range, or ``N + W - 1`` above :data:`EXACT_L1_MAX_POPULATION`.

    Examples:
        >>> from sufficientdp.ratio.single_bit import single_bit_worst_tail
        >>> at_61 = single_bit_worst_tail(population=61, q=0.25, epsilon=1.0).eta
        >>> later = max(single_bit_worst_tail(population=n, q=0.25, epsilon=1.0).eta for n in range(61, 80))
        >>> later > 1.5 * at_61, single_bit_larger_crowds(q=0.25, population=61, epsilon=1.0).eta >= later
        (True, True)
    """
    from .single_bit import single_bit_worst_tail, worst_delta_upper

    q = check_open_interval("q", q, 0.0, 0.5)
    population = check_int("population", population, minimum=1,
                           maximum=EXACT_L1_MAX_POPULATION - LARGER_CROWDS_WINDOW + 1)
    epsilon = check_epsilon(epsilon)
    t0 = time.perf_counter()
    try:
        at_local = q >= local_q(1, epsilon, 1)
    except ParameterError:  # epsilon so small that local DP's q rounds to 1/2
        at_local = False
    if at_local:
        # every report is epsilon-local DP (local_q's rounding is on the safe side): no output of any crowd has a
        # ratio above p/q <= e**epsilon, so the ratio never exceeds e**epsilon
        return TailResult(eta=0.0, eta_lower=0.0, eta_upper=0.0, method="proven", kind="exact",
                          scope="all-collections", epsilon=epsilon, q=q, bits=1, population=population, reports=1,
                          delta=None, delta_upper=None,
                          details={"domain": "all", "crowds": "every crowd of at least N people",
                                   "bound": "log(p/q) <= epsilon: the ratio never exceeds p/q (local DP)",
                                   "notes": [], "seconds": time.perf_counter() - t0})
    def via_delta(n: int) -> tuple[float, float]:
        # e' from close to epsilon downwards, stopping once the bound has grown twice in a row (any e' is valid:
        # the stop only decides how tight the bound is)
        best, best_e, worse = math.inf, 0.0, 0
        deltas = _in_pairs(worst_delta_upper, [{"population": n, "q": q, "epsilon": r * epsilon}
                                               for r in _LARGER_CROWDS_RATIOS])
        for r, d in zip(_LARGER_CROWDS_RATIOS, deltas):
            e_prime = r * epsilon
            # (worst_delta_upper is single_bit_worst_tail's delta, faster)
            b = min(1.0, float(d if d is not None else 1.0) / -math.expm1(e_prime - epsilon) * (1.0 + 1e-12))
            if b < best:
                best, best_e, worse = b, e_prime, 0
            else:
                worse += 1
                if worse == 2 or b == 0.0:
                    break
        return best, best_e

    if population >= LARGER_CROWDS_DELTA_ONLY:
        # large crowds: the exact values hardly move from N to N + 7 and the delta term decides the composite
        # (within a few percent of the bound from N alone, measured), so only the bound from N is computed
        from_n, e_from_n = via_delta(population)
        return _larger_crowds_result(q, population, epsilon, from_n, t0, {
            "bound": "eta <= delta(e') / (1 - e^(e' - e)); the worst delta over every crowd composition is "
                     f"non-increasing in N (post-processing); delta(e' = {e_from_n:.6g}) at N",
            "delta_from_n": from_n})
    window = [r.eta_upper for r in _in_pairs(single_bit_worst_tail, [
        {"population": n, "q": q, "epsilon": epsilon} for n in range(population, population + LARGER_CROWDS_WINDOW)])]
    eta_window = max(float(v) for v in window if v is not None)
    beyond, e_beyond = via_delta(population + LARGER_CROWDS_WINDOW) if eta_window < 1.0 else (1.0, 0.0)
    composite = max(eta_window, beyond)
    # the bound from N alone is at least eta*(N'), so it can only help when the window's tail term decides
    from_n, e_from_n = via_delta(population) if beyond > eta_window else (1.0, 0.0)
    eta = min(composite, from_n)
    how = ("exact worst eta at N .. N+{w}, then delta(e' = {e:.6g}) at N+{w} (delta falls with N)".format(
        w=LARGER_CROWDS_WINDOW - 1, e=e_beyond) if composite <= from_n else
        f"delta(e' = {e_from_n:.6g}) at N (delta falls with N)")
    return _larger_crowds_result(q, population, epsilon, eta, t0, {
        "bound": "eta <= delta(e') / (1 - e^(e' - e)); the worst delta over every crowd composition is "
                 "non-increasing in N (post-processing); " + how,
        "exact_window_max": eta_window, "delta_beyond_window": beyond, "delta_from_n": from_n})


def _in_pairs(fn: Callable[..., Any], calls: list[dict[str, Any]]) -> Iterator[Any]:
    """``fn(**c)`` for each call of ``calls``, in order and lazily (a consumer that stops early computes no more,
    except the one call already running beside it): with the helper process of the enclosing
    :func:`sufficientdp._offload.helper_process` block, two at a time, the second in the helper. The same values
    (``fn`` is a pure function of its arguments); an exception is raised where the one-at-a-time loop would."""
    from .._offload import current_helper

    i = 0
    while i < len(calls):
        helper = current_helper()
        if helper is None or i + 1 == len(calls):
            yield fn(**calls[i])
            i += 1
            continue
        pending = helper.submit(fn, calls[i + 1])
        try:
            here = fn(**calls[i])
        except BaseException:
            helper.close()  # (its answer is not needed; an interrupt must not wait for it, nor compute it here)
            raise
        try:
            there: tuple[bool, Any] = (True, pending.result())
        except Exception as exc:  # noqa: BLE001 - raised when the loop reaches that call
            there = (False, exc)
        yield here
        if not there[0]:
            raise there[1]
        yield there[1]
        i += 2


def _larger_crowds_result(q: float, population: int, epsilon: float, eta: float, t0: float,
                          extra: dict[str, Any]) -> TailResult:
    details = {"domain": "all", "crowds": "every crowd of at least N people", **extra, "notes": [],
               "seconds": time.perf_counter() - t0}
    return TailResult(eta=eta, eta_lower=None, eta_upper=eta, method="proven", kind="bound", scope="all-collections",
                      epsilon=epsilon, q=q, bits=1, population=population, reports=1, delta=None,
                      delta_upper=None, details=details)


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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the numbers, ``by_type`` as ``{type: eta}``, the domain (``kind``, ``bits``,
        ``max_weight``, ``label``) and the notes."""
        return {"eta": self.eta, "delta": self.delta, "epsilon_prime": self.epsilon_prime, "worst": self.worst,
                "by_type": dict(self.by_type), "log_gamma": self.log_gamma,
                "domain": {"kind": self.domain.kind, "bits": self.domain.bits, "max_weight": self.domain.max_weight,
                           "label": self.domain.label},
                "notes": list(self.notes)}


def evaluate(*, q: float, population: int, epsilon: float, reports: int, domain: Domain,
             resolution: float = DEFAULT_RESOLUTION, only: frozenset[str] | None = None, epsilon_prime: float | None = None,
             epsilon_prime_hint: float | None = None,
             progress: Callable[[int, int], Any] | None = None) -> Evaluation:
    """The all-collections bound at q (no input checks; see :func:`proven_tail`).

    Each type's bound is also kept (:data:`_ETA_BY_TYPE`): ``delta <= eta``, so :func:`proven_delta` at the same
    arguments starts from them.
    """
    ev = _evaluate(q=q, population=population, epsilon=epsilon, reports=reports, domain=domain,
                   resolution=resolution, only=only, epsilon_prime=epsilon_prime,
                   epsilon_prime_hint=epsilon_prime_hint, progress=progress)
    if len(_ETA_BY_TYPE) >= 64:
        _ETA_BY_TYPE.clear()
    key = (domain, q, population, epsilon, reports, resolution)
    _ETA_BY_TYPE.setdefault(key, {}).update(ev.by_type)  # (each a valid bound on its type's eta; "local": none)
    return ev


_ETA_BY_TYPE: dict[tuple[Any, ...], dict[str, float]] = {}
"""Each pair type's eta bound from :func:`evaluate`'s recent calls, by (domain, q, N, epsilon, k, resolution): a
valid upper bound on the type's delta(epsilon) too (``E[(1 - e**(epsilon - L))_+] <= P[L > epsilon]``), where
:func:`proven_delta` starts (``account`` at T = 1 bounds eta, then delta)."""


def _evaluate(*, q: float, population: int, epsilon: float, reports: int, domain: Domain, resolution: float,
              only: frozenset[str] | None, epsilon_prime: float | None, epsilon_prime_hint: float | None,
              progress: Callable[[int, int], Any] | None) -> Evaluation:
    """:func:`evaluate` (its bound; the caller keeps each type's).

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
    dom = _checked_size(domain, notes)
    log_gamma = blanket_mass(dom, q)
    others = population - 1
    if reports * _local_epsilon(domain, q) <= epsilon:
        # decided on the domain asked for, not on all of {0,1}^L standing in for it (whose distance is larger: at
        # a weight domain's local-DP q its bound is far from 0)
        return Evaluation(0.0, 0.0, epsilon, "local", (), log_gamma, domain,
                          ("local DP: the privacy loss never exceeds k * epsilon_0 <= epsilon",))
    eps0 = _local_epsilon(dom, q)
    types = [t for t in pair_types(dom, q) if only is None or t.name in only]
    if not types:
        raise ParameterError(f"no pair type of the domain matches {sorted(only or [])}")
    if reports > 1:
        # (the final bounds only: a search's coarse lattices are too quick for a second interpreter's start-up)
        shared = only is None and resolution <= DEFAULT_RESOLUTION and worth_a_helper(types)
        from .._offload import Helper

        helper = Helper() if shared else None
        try:
            return _evaluate_composed(types, q=q, log_gamma=log_gamma, others=others, epsilon=epsilon,
                                      reports=reports, eps0=eps0, resolution=resolution, dom=dom, notes=notes,
                                      progress=progress, helper=helper)
        finally:
            if helper is not None:
                helper.close()
    tiers = _tiers(resolution)
    coarse = tiers[0]
    total = len(types) * len(tiers) + 1
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(min(done[0], total - 1), total)

    cache: dict[tuple[str, float, float], float] = {}
    prepared: dict[str, _Prepared] = {}

    def eta_of(pt: PairType, eps_q: float, res: float) -> float:
        key = (pt.name, eps_q, res)
        if key not in cache:
            prep = prepared.get(pt.name)
            if prep is None:
                prep = prepared.setdefault(pt.name, _prepare(pt))
            d = _blanket_delta(prep, log_gamma=log_gamma, others=others, epsilon_prime=eps_q, resolution=res)
            cache[key] = d / -math.expm1(eps_q - epsilon)
        return cache[key]

    with pair_type_pool(types) as pool:  # (the same floats either way)
        def prefetch_keys(keys: list[tuple[PairType, float, float]]) -> None:
            """``eta_of`` at several (type, e', tier) at once (the same numbers as one by one: each is a pure
            function of its key)."""
            todo = list({(pt.name, e, res): (pt, e, res) for pt, e, res in keys
                         if (pt.name, e, res) not in cache}.values())
            if len(todo) > 1:
                list(pool.map(lambda key: eta_of(*key), todo))

        def prefetch(pt: PairType, eps_qs: list[float], res: float) -> None:
            prefetch_keys([(pt, e, res) for e in eps_qs])

        fixed = epsilon_prime is not None
        if epsilon_prime is not None and not epsilon_prime < epsilon:
            raise ParameterError(f"epsilon_prime must be below epsilon = {epsilon}; got {epsilon_prime!r}")
        if epsilon_prime is not None:
            eps_p = epsilon_prime
        elif epsilon_prime_hint is not None and epsilon_prime_hint < epsilon:
            eps_p = epsilon_prime_hint
        else:  # where e' lies, from the type of largest distance (a guess; the leading type is searched below)
            eps_p, wide_val = _search_epsilon_prime(_widest(types), eta_of, epsilon=epsilon, tiers=[coarse],
                                                    prefetch=prefetch)
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
        list(pool.map(lambda t: record(t, eps_p, 0), types))
        by_name = {pt.name: pt for pt in types}
        lead_name = max(best, key=lambda k: best[k][0])
        lead = by_name[lead_name]
        if not fixed:  # e' for the leading type, polished down to the requested lattice
            # (the e' found so far is near the leading type's optimum too: types differ little in it)
            eps_p, _ = _search_epsilon_prime(lead, eta_of, epsilon=epsilon, tiers=tiers,
                                             start=eps_p if epsilon_prime_hint is None else None,
                                             hint=eps_p if epsilon_prime_hint is not None else None,
                                             prefetch=prefetch)
        prefetch_keys([(lead, eps_p, res) for res in tiers])  # (the last tier and the shrink below)
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


def bound_in_one_thread() -> None:
    """From now on, this process bounds the pair types in the calling thread only (no thread pool, no second process:
    :func:`worth_a_helper`; the same numbers, at up to twice the time on two cores). For a process with a memory
    limit (the collector's calibration jobs): an allocation that fails inside a pool's worker thread can leave the
    pool's caller waiting for a result that never comes (observed: a starved job still running after 60 s instead
    of failing at once); in one thread the MemoryError reaches the caller, and no child process escapes the
    limit."""
    global _THREADED_CLASSES, _ONE_PROCESS
    _THREADED_CLASSES = sys.maxsize
    _ONE_PROCESS = True


def second_process_allowed() -> bool:
    """Whether bounds may use a second process (not after :func:`bound_in_one_thread`)."""
    return not _ONE_PROCESS


def worth_a_helper(types: list[PairType]) -> bool:
    """Whether a bound of every one of ``types`` shares its work with a helper process (a fresh interpreter,
    :class:`sufficientdp._offload.Helper`): with :data:`_SPLIT_CLASSES` report classes or more, at least
    :data:`_SPLIT_TYPES` types and a spare core, unless :func:`bound_in_one_thread` forbade it. Each piece of work
    sent there is a pure function of its inputs, so the numbers are the floats of one process: the rows of k > 1
    reports (:func:`_evaluate_composed`; docs/proofs/blanket.md, "Two processes") and the curves over T rounds
    (:class:`sufficientdp.accounting.rounds._Curves`). L = 40, k = 2, N = 10^7, all 40 types at the calibrated q:
    2.5-3.3 s in one process (two threads), 1.5-1.6 s with the helper (three alternating runs)."""
    if _ONE_PROCESS or len(types) < _SPLIT_TYPES or sum(t.log_p.size for t in types) < _SPLIT_CLASSES:
        return False
    from .._offload import spare_core

    return spare_core()


def pair_type_pool(types: list[PairType]) -> Any:
    """The executor for the bounds of ``types`` (a ``with`` block with ``map``; the one thread policy of the
    all-collections bounds, k = 1, k > 1 and T rounds): two threads when they have :data:`_THREADED_CLASSES` report
    classes or more (numpy releases the GIL in the lattice work), else every call inline; the same floats either
    way (each bound is a pure function of its inputs). ``.threaded`` says which."""
    if sum(t.log_p.size for t in types) >= _THREADED_CLASSES:
        from concurrent.futures import ThreadPoolExecutor  # (with logging: 8 ms of start-up, loaded only here)

        pool = ThreadPoolExecutor(max_workers=_THREADS)
        pool.threaded = True  # type: ignore[attr-defined]
        return pool
    return _InlinePool()


class _InlinePool:
    """The part of an executor :func:`evaluate` uses (``map`` in a ``with`` block), running every call in the
    calling thread, in order."""

    threaded = False

    def __enter__(self) -> _InlinePool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, fn: Callable[[Any], Any], items: Any) -> list[Any]:
        return [fn(x) for x in items]


def _widest(types: list[PairType]) -> PairType:
    """The pair type whose two vectors are farthest apart (largest per-report log ratio): where e' is first
    searched."""
    return max(types, key=lambda pt: float(np.max(np.abs(pt.log_p - pt.log_q))))


def _tiers(resolution: float) -> list[float]:
    """Lattice resolutions of the passes, coarse to ``resolution``: :data:`_COARSE`, :data:`_MID`, ``resolution``
    (the ones not finer than ``resolution`` are skipped)."""
    return [r for r in (_COARSE, _MID) if r > resolution * 1.5] + [resolution]


def _search_epsilon_prime(pt: PairType, eta_of: Callable[[PairType, float, float], float], *, epsilon: float,
                          tiers: list[float], start: float | None = None, hint: float | None = None,
                          prefetch: Callable[[PairType, list[float], float], Any] | None = None
                          ) -> tuple[float, float]:
    """A good e' < e for one pair type's ``delta(e') / (1 - e**(e' - e))`` (any e' is valid; this only makes the
    bound small). Returns ``(e', bound at e' on the last tier)``.

    The objective is smooth and unimodal in ``x = log(e - e')`` up to the lattice's slack, which varies a little
    erratically with e' (the lattice step follows sd(S), which moves with e') and shrinks with the tier. Without
    ``start`` or ``hint``: a grid and a golden-section search on the coarsest tier (where e' lies hardly depends on
    the lattice). Then, on each finer tier, a parabola through three points around the current optimum (points
    where the parabola is not convex fall back to the best of the three), moved while an end is the best; the
    last tier first looks at five points 0.15 apart, then at +-0.075 around the best. ``start`` skips the coarse
    search (already done at that e'); ``hint`` skips it and the intermediate tiers (only the last tier's search,
    around the hint). ``prefetch(pt, e's, res)``, when given, computes ``eta_of`` at several e' at once (in
    parallel): the search asks it for the points it needs together (a grid, a stencil), then reads them one by
    one, so the numbers and the path of the search are those of the one-by-one search.
    """
    x_lo, x_hi = math.log(1e-6), math.log(epsilon + 4.0)

    def f(x: float, res: float) -> float:
        return eta_of(pt, epsilon - math.exp(x), res) if x_lo <= x <= x_hi else math.inf

    def fs_at(xs: list[float], res: float) -> list[float]:
        if prefetch is not None:
            prefetch(pt, [epsilon - math.exp(x) for x in xs if x_lo <= x <= x_hi], res)
        return [f(x, res) for x in xs]

    if start is None and hint is None:
        coarse = tiers[0]
        xs = np.linspace(math.log(1e-4), math.log(epsilon + 2.0), 9)
        vals = fs_at([float(x) for x in xs], coarse)
        i = int(np.argmin(vals))
        best_x, best_v = float(xs[i]), vals[i]
        a, b = float(xs[max(i - 1, 0)]), float(xs[min(i + 1, len(xs) - 1)])
        gr = (math.sqrt(5) - 1) / 2
        c, d = b - gr * (b - a), a + gr * (b - a)
        fc, fd = fs_at([c, d], coarse)
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
            fs = fs_at(pts, res)
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


def check_composable(q: float, dom: Domain, *, releases: int, epsilon: float) -> None:
    """Refuse a q whose per-report privacy loss exceeds :data:`MAX_CURVE_LOSS` when ``releases`` one-report releases
    are composed through dominating curves (not when their total loss stays below epsilon: local DP answers 0).

    Raises:
        ParameterError: naming q, its value and the smallest q accepted for the domain.
    """
    eps0 = _local_epsilon(dom, q)
    if releases * eps0 <= epsilon or eps0 <= MAX_CURVE_LOSS:
        return
    d = local_distance(dom)
    q_min = 1.0 / (1.0 + math.exp(MAX_CURVE_LOSS / d))
    raise ParameterError(
        f"q must be in [{q_min * (1 + 1e-5):.6g}, 0.5) for {dom.label} with {releases} report(s) composed: the "
        f"per-report privacy loss {d} * log((1-q)/q) must be at most {MAX_CURVE_LOSS:g} (the composed bound's "
        f"curves work in e**epsilon); got {q!r} (loss {eps0:.6g})")


def _result(q: float, bits: int, population: int, epsilon: float, reports: int, ev: Evaluation,
            t0: float) -> TailResult:
    return TailResult(
        eta=ev.eta, eta_lower=None, eta_upper=ev.eta, method="proven", kind="bound", scope="all-collections",
        epsilon=epsilon, q=q, bits=bits, population=population, reports=reports,
        delta=None, delta_upper=ev.delta if reports == 1 else None,
        details={"domain": ev.domain.label, "crowds": "every crowd of at least N people (the bound falls with N: "
                 "docs/proofs/blanket.md, step 7)", "epsilon_prime": ev.epsilon_prime, "worst_pair": ev.worst,
                 "blanket_mass": math.exp(ev.log_gamma),
                 "expected_blanket_reports": (population - 1) * math.exp(ev.log_gamma),
                 "bound": ("eta <= delta_PQ(e') / (1 - e^(e' - e)), delta_PQ of the privacy-blanket dominating "
                           "pair (docs/proofs/blanket.md)" if reports == 1 else
                           "eta <= delta(e') / (1 - e^(e' - e)) with delta of k composed blanket pairs, each "
                           "pair's privacy loss rounded up onto a grid (docs/proofs/blanket.md)"),
                 "notes": list(ev.notes), "seconds": time.perf_counter() - t0},
    )
