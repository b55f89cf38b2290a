"""Checking seed 001's worst-case conjecture (§1.2) by exhaustive enumeration and by heuristic search.

The conjecture (seed 001 §1.2, claim 1): for every neighbouring pair ``(D, D_m)``,
``P[R(S; D, D_m) > e**eps] <= P[R(S; D*, D*_m) > e**eps]`` where ``D*`` is ``N`` zero vectors and ``D*_m`` replaces
one of them by the all-ones vector. ERRATA 5: it is unproven, and an outlier differing in ``j < L`` bits behaves
like the ``L = j`` case, so the reference is always the worst over ``j = 1..L`` of the homogeneous configuration.

A neighbouring pair is ``D = D' + {x}``, ``D_m = D' + {x'}`` with ``D'`` a multiset of ``N - 1`` vectors
(the anonymized output cannot see the order of people). ``eta`` and ``delta`` are invariant under

* permutations of people (built into the multiset representation),
* permutations of the ``L`` bit positions, and
* the bit-flip symmetry ``v -> v XOR c`` applied to every vector of both collections,

because the flip kernel ``p(v|y) = q**d(v,y) p**(L-d(v,y))`` depends only on Hamming distances, which these maps
preserve, and they permute the histograms bijectively. So it suffices to check one pair per orbit of the
hyperoctahedral group (order ``L! 2**L``); every orbit contains a pair with ``x = 0`` and
``x' = 1..10..0`` (the ``j`` lowest bits set), which is where the enumeration starts.

Both directions matter: the definition (eq. 1.7) quantifies over all ``(D, D_m)``, and the pair with the outlier
in ``D`` (``D_m`` homogeneous) puts the maximal ratio ``(p/q)**j`` on the most likely output. The results record
the homogeneous reference in both directions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from .._errors import ParameterError
from .._frozen import freeze, thaw
from .._numerics.compositions import compositions
from .._validation import check_int, check_open_interval
from ..loss.distribution import PrivacyLossDistribution
from ..loss.distribution import _real_epsilon as _check_epsilon
from ..loss.result import Direction
from .exact import (
    MAX_BITS,
    MAX_HISTOGRAMS,
    _codes_to_lists,
    _distribution_from_codes,
    homogeneous_ratio_distribution,
)

__all__ = [
    "CONJECTURE_TOL",
    "MAX_EXHAUSTIVE_PAIRS",
    "ConjectureGap",
    "NeighbouringPair",
    "WorstCaseResult",
    "conjecture_gap",
    "neighbouring_pairs",
    "worst_case_exhaustive",
    "worst_case_grid",
    "worst_case_search",
]

#: Absolute tolerance on eta (and delta) when deciding whether a pair beats the homogeneous reference.
CONJECTURE_TOL = 1e-12
#: Largest number of candidate pairs ``L * C(N + 2**L - 2, N - 1)`` (or, unreduced,
#: ``2**L (2**L - 1) C(N + 2**L - 2, N - 1)``) that the exhaustive check generates.
MAX_EXHAUSTIVE_PAIRS = 100_000


# ----------------------------------------------------------------------------------------------------------------
# pairs and symmetry


@dataclass(frozen=True, slots=True, kw_only=True)
class NeighbouringPair:
    """``D = D' + {x}``, ``D_m = D' + {x'}`` with vectors encoded as integers (bit ``b`` = report bit ``b``).

    Attributes:
        bits: L.
        common: the codes of ``D'`` (``N - 1`` of them), sorted.
        original_vector: code of ``x``.
        modified_vector: code of ``x'``.
        orbit_size: number of distinct ``(D', x, x')`` triples in this pair's symmetry orbit (1 if unreduced).
    """

    bits: int
    common: tuple[int, ...]
    original_vector: int
    modified_vector: int
    orbit_size: int = 1

    @property
    def population(self) -> int:
        """N."""
        return len(self.common) + 1

    @property
    def original(self) -> list[list[int]]:
        """``D`` as a list of 0/1 lists; the changed person is last."""
        return _codes_to_lists([*self.common, self.original_vector], self.bits)

    @property
    def modified(self) -> list[list[int]]:
        """``D_m`` as a list of 0/1 lists; the changed person is last."""
        return _codes_to_lists([*self.common, self.modified_vector], self.bits)

    @property
    def hamming(self) -> int:
        """Number of bits in which ``x`` and ``x'`` differ."""
        return bin(self.original_vector ^ self.modified_vector).count("1")

    def distribution(self, q: float) -> PrivacyLossDistribution:
        """The exact distribution of ``R(S)`` under ``A(D_m)`` for this pair."""
        q = check_open_interval("q", q, 0.0, 0.5)
        return _distribution_from_codes(
            np.asarray(self.common, dtype=np.int64), self.original_vector, self.modified_vector, self.bits, q
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"original": self.original, "modified": self.modified, "orbit_size": self.orbit_size}


@lru_cache(maxsize=16)
def _group_tables(bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(image, inverse)``: ``image[g, v]`` = g(v) for every g = (bit permutation, XOR mask); ``inverse[g]`` its
    inverse permutation of the ``2**L`` codes."""
    cells = 1 << bits
    codes = np.arange(cells)
    rows = []
    for perm in itertools.permutations(range(bits)):
        permuted = np.zeros(cells, dtype=np.int64)
        for src, dst in enumerate(perm):
            permuted |= ((codes >> src) & 1) << dst
        for mask in range(cells):
            rows.append(permuted ^ mask)
    image = np.array(rows, dtype=np.int64)
    inverse = np.argsort(image, axis=1)
    image.setflags(write=False)
    inverse.setflags(write=False)
    return image, inverse


def _orbit_keys(counts: np.ndarray, x: int, xp: int, bits: int) -> np.ndarray:
    """Rows ``(g(x), g(x'), counts of g(D'))`` for every group element g."""
    image, inverse = _group_tables(bits)
    return np.column_stack([image[:, x], image[:, xp], counts[inverse]])


def _canonical(counts: np.ndarray, x: int, xp: int, bits: int) -> tuple[tuple[int, ...], int]:
    """Lexicographically smallest image of the pair and the orbit size."""
    keys = _orbit_keys(counts, x, xp, bits)
    uniq = np.unique(keys, axis=0)  # sorted lexicographically
    return tuple(int(v) for v in uniq[0]), int(uniq.shape[0])


def _pair_from_key(key: tuple[int, ...], bits: int, orbit_size: int) -> NeighbouringPair:
    counts = np.asarray(key[2:], dtype=np.int64)
    common = tuple(int(c) for c in np.repeat(np.arange(counts.size), counts))
    return NeighbouringPair(
        bits=bits, common=common, original_vector=key[0], modified_vector=key[1], orbit_size=orbit_size
    )


def _check_sizes(bits: Any, population: Any) -> tuple[int, int]:
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)
    population = check_int("population", population, minimum=1)
    count = math.comb(population + (1 << bits) - 1, population)
    if count > MAX_HISTOGRAMS:
        raise ParameterError(
            f"the number of histograms C(N + 2**L - 1, N) must be <= {MAX_HISTOGRAMS}; got {count} "
            f"for N = {population}, L = {bits}"
        )
    return bits, population


def neighbouring_pairs(
    bits: int, population: int, *, reduce_symmetry: bool = True
) -> tuple[NeighbouringPair, ...]:
    """Every neighbouring pair ``(D, D_m)`` with ``x != x'``, one per symmetry orbit or all of them.

    With ``reduce_symmetry=True`` the candidates are ``x = 0``, ``x' = 2**j - 1`` (j = 1..L) and every multiset
    ``D'``, each replaced by the lexicographically smallest image under the group of bit permutations and XOR
    masks; the sum of the ``orbit_size`` values is the unreduced count ``2**L (2**L - 1) C(N + 2**L - 2, N - 1)``.

    Raises:
        ParameterError: sizes beyond :data:`MAX_EXHAUSTIVE_PAIRS` candidates or :data:`MAX_HISTOGRAMS` outputs.

    Examples:
        >>> len(neighbouring_pairs(2, 2)), len(neighbouring_pairs(2, 2, reduce_symmetry=False))
        (7, 48)
    """
    bits, population = _check_sizes(bits, population)
    cells = 1 << bits
    n_bases = math.comb(population - 1 + cells - 1, population - 1)
    candidates = (bits if reduce_symmetry else cells * (cells - 1)) * n_bases
    if candidates > MAX_EXHAUSTIVE_PAIRS:
        raise ParameterError(
            f"the number of candidate pairs must be <= {MAX_EXHAUSTIVE_PAIRS}; got {candidates} "
            f"for N = {population}, L = {bits}"
        )
    bases = compositions(population - 1, cells)
    if not reduce_symmetry:
        out = []
        for x in range(cells):
            for xp in range(cells):
                if x == xp:
                    continue
                for counts in bases:
                    key = (x, xp, *(int(c) for c in counts))
                    out.append(_pair_from_key(key, bits, 1))
        return tuple(out)
    seen: dict[tuple[int, ...], int] = {}
    for j in range(1, bits + 1):
        xp = (1 << j) - 1
        for counts in bases:
            key, size = _canonical(counts, 0, xp, bits)
            seen.setdefault(key, size)
    return tuple(_pair_from_key(key, bits, size) for key, size in sorted(seen.items()))


# ----------------------------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True, slots=True, kw_only=True)
class WorstCaseResult:
    """The worst neighbouring pair found for ``eta(epsilon)`` and the homogeneous references.

    Attributes:
        eta, delta: exact ``eta(epsilon)`` and ``delta(epsilon)`` of the worst pair (max eta; ties by delta).
        original, modified: the worst pair ``D``, ``D_m`` (tuples of 0/1 tuples; the changed person is last).
        homogeneous_eta: the conjecture's reference, ``max_j eta`` of "N - 1 zeros + one outlier with j set bits",
            j = 1..L (ERRATA 5).
        homogeneous_delta: ``delta`` of that worst-weight configuration.
        homogeneous_worst_weight: the j attaining ``homogeneous_eta``.
        homogeneous_eta_by_weight: ``{j: eta}`` for the paper's direction (outlier in ``D_m``).
        reverse_homogeneous_eta: ``max_j eta`` of the reverse pair (outlier in ``D``, ``D_m`` homogeneous).
        reverse_homogeneous_eta_by_weight: ``{j: eta}`` for the reverse direction.
        pairs_checked: pairs whose eta was computed exactly.
        pairs_total: neighbouring pairs represented (sum of orbit sizes; equals ``pairs_checked`` for a search).
        conjecture_holds: ``eta <= homogeneous_eta + tol``. Exhaustive: a proof for this (L, N, q, epsilon) up to
            rounding. Heuristic: False is conclusive (the counterexample is exact), True only means none was found.
        conjecture_holds_all_ones: the same against ``j = L`` only (the paper's literal statement).
        two_sided_holds: ``eta <= max(homogeneous_eta, reverse_homogeneous_eta) + tol``.
        exhaustive: True for :func:`worst_case_exhaustive`, False for the heuristic search.
        method: ``"exhaustive"`` or ``"heuristic"``.
        ranking: the top pairs, each ``{"eta", "delta", "original", "modified", "orbit_size"}``.
        epsilon, q, bits, population: the configuration.
        tol: the tolerance used in the comparisons.
        details: extras.

    Immutable: the pairs are tuples, the mappings read-only (:class:`~sufficientdp._frozen.FrozenDict`);
    :meth:`to_dict` gives plain JSON-ready lists and dicts.
    """

    eta: float
    delta: float
    original: Sequence[Sequence[int]]
    modified: Sequence[Sequence[int]]
    homogeneous_eta: float
    homogeneous_delta: float
    homogeneous_worst_weight: int
    homogeneous_eta_by_weight: Mapping[int, float]
    reverse_homogeneous_eta: float
    reverse_homogeneous_eta_by_weight: Mapping[int, float]
    pairs_checked: int
    pairs_total: int
    conjecture_holds: bool
    conjecture_holds_all_ones: bool
    two_sided_holds: bool
    exhaustive: bool
    method: str
    ranking: tuple[Mapping[str, Any], ...]
    epsilon: float
    q: float
    bits: int
    population: int
    tol: float = CONJECTURE_TOL
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("original", "modified", "homogeneous_eta_by_weight", "reverse_homogeneous_eta_by_weight",
                     "ranking", "details"):
            object.__setattr__(self, name, freeze(getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "eta": self.eta,
            "delta": self.delta,
            "original": thaw(self.original),
            "modified": thaw(self.modified),
            "homogeneous_eta": self.homogeneous_eta,
            "homogeneous_delta": self.homogeneous_delta,
            "homogeneous_worst_weight": self.homogeneous_worst_weight,
            "homogeneous_eta_by_weight": {str(k): v for k, v in self.homogeneous_eta_by_weight.items()},
            "reverse_homogeneous_eta": self.reverse_homogeneous_eta,
            "reverse_homogeneous_eta_by_weight": {
                str(k): v for k, v in self.reverse_homogeneous_eta_by_weight.items()
            },
            "pairs_checked": self.pairs_checked,
            "pairs_total": self.pairs_total,
            "conjecture_holds": self.conjecture_holds,
            "conjecture_holds_all_ones": self.conjecture_holds_all_ones,
            "two_sided_holds": self.two_sided_holds,
            "exhaustive": self.exhaustive,
            "method": self.method,
            "ranking": thaw(self.ranking),
            "epsilon": self.epsilon,
            "q": self.q,
            "bits": self.bits,
            "population": self.population,
            "tol": self.tol,
            "details": thaw(self.details),
        }


def _homogeneous_refs(
    q: float, bits: int, population: int, epsilon: float
) -> tuple[dict[int, tuple[float, float]], dict[int, tuple[float, float]]]:
    fwd, rev = {}, {}
    for j in range(1, bits + 1):
        d = homogeneous_ratio_distribution(q, bits, population, j)
        fwd[j] = (d.eta(epsilon), d.delta(epsilon))
        r = homogeneous_ratio_distribution(q, bits, population, j, outlier_in=Direction.REVERSE)
        rev[j] = (r.eta(epsilon), r.delta(epsilon))
    return fwd, rev


def _build_result(
    scored: list[tuple[float, float, NeighbouringPair]],
    *,
    q: float,
    bits: int,
    population: int,
    epsilon: float,
    exhaustive: bool,
    top: int,
    details: dict[str, Any],
) -> WorstCaseResult:
    scored.sort(key=lambda t: (-t[0], -t[1], t[2].common, t[2].original_vector, t[2].modified_vector))
    eta, delta, worst = scored[0]
    fwd, rev = _homogeneous_refs(q, bits, population, epsilon)
    wj = max(fwd, key=lambda j: (fwd[j][0], fwd[j][1], j))
    hom_eta, hom_delta = fwd[wj]
    rev_eta = max(v[0] for v in rev.values())
    ranking = tuple(
        {"eta": e, "delta": d, "original": pr.original, "modified": pr.modified, "orbit_size": pr.orbit_size}
        for e, d, pr in scored[:top]
    )
    return WorstCaseResult(
        eta=eta,
        delta=delta,
        original=worst.original,
        modified=worst.modified,
        homogeneous_eta=hom_eta,
        homogeneous_delta=hom_delta,
        homogeneous_worst_weight=wj,
        homogeneous_eta_by_weight={j: v[0] for j, v in fwd.items()},
        reverse_homogeneous_eta=rev_eta,
        reverse_homogeneous_eta_by_weight={j: v[0] for j, v in rev.items()},
        pairs_checked=len(scored),
        pairs_total=sum(pr.orbit_size for _, _, pr in scored),
        conjecture_holds=eta <= hom_eta + CONJECTURE_TOL,
        conjecture_holds_all_ones=eta <= fwd[bits][0] + CONJECTURE_TOL,
        two_sided_holds=eta <= max(hom_eta, rev_eta) + CONJECTURE_TOL,
        exhaustive=exhaustive,
        method="exhaustive" if exhaustive else "heuristic",
        ranking=ranking,
        epsilon=epsilon,
        q=q,
        bits=bits,
        population=population,
        details=details,
    )


# ----------------------------------------------------------------------------------------------------------------
# exhaustive check


def worst_case_exhaustive(
    bits: int, population: int, q: float, epsilon: float, *, reduce_symmetry: bool = True, top: int = 5
) -> WorstCaseResult:
    """Exact ``eta(epsilon)`` for every neighbouring pair up to symmetry; the worst pair and the references.

    Every pair (one per orbit of people permutations x bit permutations x XOR masks, see the module docstring) gets
    its exact distribution from the histogram enumeration of :func:`sufficientdp.ratio.exact.ratio_distribution`,
    so the result is exact for this ``(L, N, q, epsilon)``. Feasible: e.g. L = 2 with N <= 8, L = 3 with N <= 5,
    L = 4 with N <= 3.

    Args:
        bits: L >= 1.
        population: N >= 1.
        q: flip probability in (0, 0.5).
        epsilon: privacy level (any real number).
        reduce_symmetry: False enumerates every ordered ``(D', x, x')`` (for cross-checking the reduction).
        top: how many pairs to keep in ``ranking``.

    Returns:
        A :class:`WorstCaseResult` (``exhaustive=True``).

    Raises:
        ParameterError: parameters out of range or sizes beyond :data:`MAX_EXHAUSTIVE_PAIRS` /
            :data:`MAX_HISTOGRAMS`.

    References:
        seed 001 §1.2 (conjecture, claim 1), eq. (1.7), (2.2); ERRATA 5.

    Examples:
        >>> res = worst_case_exhaustive(2, 2, 0.2, 2.0)
        >>> res.pairs_total, res.conjecture_holds
        (48, True)
    """
    return worst_case_grid(bits, population, q, [epsilon], reduce_symmetry=reduce_symmetry, top=top)[0]


def worst_case_grid(
    bits: int,
    population: int,
    q: float,
    epsilons: Sequence[float],
    *,
    reduce_symmetry: bool = True,
    top: int = 5,
) -> tuple[WorstCaseResult, ...]:
    """:func:`worst_case_exhaustive` for several epsilons, computing each pair's distribution once.

    Examples:
        >>> [r.conjecture_holds for r in worst_case_grid(2, 4, 0.1, [2.0, 3.1])]
        [True, False]
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    eps_list = [_check_epsilon(e) for e in epsilons]
    if not eps_list:
        raise ParameterError("epsilons must contain at least one value; got an empty sequence")
    top = check_int("top", top, minimum=1)
    pairs = neighbouring_pairs(bits, population, reduce_symmetry=reduce_symmetry)
    bits, population = pairs[0].bits, pairs[0].population
    scored: list[list[tuple[float, float, NeighbouringPair]]] = [[] for _ in eps_list]
    for pr in pairs:
        dist = pr.distribution(q)
        for i, eps in enumerate(eps_list):
            scored[i].append((dist.eta(eps), dist.delta(eps), pr))
    details = {"reduce_symmetry": reduce_symmetry, "group_order": math.factorial(bits) * (1 << bits)}
    return tuple(
        _build_result(
            sc,
            q=q,
            bits=bits,
            population=population,
            epsilon=eps,
            exhaustive=True,
            top=top,
            details=dict(details),
        )
        for sc, eps in zip(scored, eps_list)
    )


# ----------------------------------------------------------------------------------------------------------------
# heuristic search


def worst_case_search(
    bits: int,
    population: int,
    q: float,
    epsilon: float,
    *,
    rng: np.random.Generator,
    budget: int = 200,
    top: int = 5,
) -> WorstCaseResult:
    """Heuristic search for a pair with large ``eta(epsilon)`` when exhaustive enumeration is too big.

    **A heuristic**: it can find counterexamples (each is evaluated exactly) but cannot prove the conjecture.
    Candidates, in this order, each canonicalized and evaluated once with the exact histogram enumeration:

    1. for every outlier weight j (``x = 0``, ``x' = 2**j - 1``): every homogeneous ``D' = (N-1) b``, which
       includes the paper's configuration (``b = 0``) and the reverse one (``b = x'``);
    2. two-vector mixtures ``D' = k b1 + (N-1-k) b2`` with ``b1, b2`` in ``{x, x'}`` and then random pairs;
    3. local search from the best pairs: move one person of ``D'`` to another vector, with random restarts,
       until ``budget`` exact evaluations have been spent.

    Args:
        bits: L >= 1.
        population: N >= 1 (exact evaluation needs ``C(N + 2**L - 1, N) <= MAX_HISTOGRAMS``).
        q: flip probability in (0, 0.5).
        epsilon: privacy level.
        rng: a seeded ``numpy.random.Generator`` (habit 6).
        budget: number of exact evaluations (>= 1).
        top: how many pairs to keep in ``ranking``.

    Returns:
        A :class:`WorstCaseResult` with ``exhaustive=False``, ``method="heuristic"``.

    References:
        seed 001 §1.2; ERRATA 5.
    """
    bits, population = _check_sizes(bits, population)
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = _check_epsilon(epsilon)
    budget = check_int("budget", budget, minimum=1)
    top = check_int("top", top, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    cells = 1 << bits
    m = population - 1
    cache: dict[tuple[int, ...], tuple[float, float, NeighbouringPair]] = {}

    def evaluate(counts: np.ndarray, x: int, xp: int) -> tuple[float, float, NeighbouringPair] | None:
        key, size = _canonical(counts, x, xp, bits)
        if key in cache:
            return cache[key]
        if len(cache) >= budget:
            return None
        pr = _pair_from_key(key, bits, size)
        dist = pr.distribution(q)
        cache[key] = (dist.eta(epsilon), dist.delta(epsilon), pr)
        return cache[key]

    def unit(v: int, k: int) -> np.ndarray:
        c = np.zeros(cells, dtype=np.int64)
        c[v] = k
        return c

    # 1. homogeneous bases, 2a. mixtures of x and x'
    stages: list[tuple[np.ndarray, int, int]] = []
    for j in range(1, bits + 1):
        xp = (1 << j) - 1
        for b in range(cells):
            stages.append((unit(b, m), 0, xp))
    for j in range(1, bits + 1):
        xp = (1 << j) - 1
        for k in range(1, m):
            stages.append((unit(0, k) + unit(xp, m - k), 0, xp))
    for counts, x, xp in stages:
        evaluate(counts, x, xp)
    # 2b. random two-vector mixtures
    tries = 0
    while len(cache) < budget and m >= 2 and tries < 4 * budget:
        tries += 1
        j = int(rng.integers(1, bits + 1))
        b1, b2 = (int(v) for v in rng.choice(cells, size=2, replace=False))
        k = int(rng.integers(1, m))
        if len(cache) >= budget // 2:
            break
        evaluate(unit(b1, k) + unit(b2, m - k), 0, (1 << j) - 1)
    # 3. local search
    stall = 0
    while len(cache) < budget and m >= 1 and stall < 4 * budget:
        ranked = sorted(cache.values(), key=lambda t: (-t[0], -t[1]))
        start = ranked[int(rng.integers(0, min(3, len(ranked))))][2]
        counts = np.bincount(np.asarray(start.common, dtype=np.int64), minlength=cells)
        x, xp = start.original_vector, start.modified_vector
        for _ in range(int(rng.integers(1, 3))):  # one or two moves
            src = int(rng.choice(np.flatnonzero(counts > 0)))
            dst = int(rng.integers(0, cells))
            counts[src] -= 1
            counts[dst] += 1
        before = len(cache)
        evaluate(counts, x, xp)
        stall = stall + 1 if len(cache) == before else 0
    scored = list(cache.values())
    return _build_result(
        scored,
        q=q,
        bits=bits,
        population=population,
        epsilon=epsilon,
        exhaustive=False,
        top=top,
        details={"budget": budget, "note": "heuristic search: a True conjecture_holds is not a proof"},
    )


# ----------------------------------------------------------------------------------------------------------------
# all epsilon at once


@dataclass(frozen=True, slots=True, kw_only=True)
class ConjectureGap:
    """Largest excess of a pair's ``eta``/``delta`` over the homogeneous reference, over *all* epsilon.

    ``eta`` of every distribution is a right-continuous step function of epsilon that only jumps at log-ratios,
    so the supremum of ``eta_pair - eta_ref`` is attained on an interval between consecutive breakpoints of the
    union; it is evaluated at each interval's midpoint (breakpoints closer than 1e-9 in log are treated as one).
    ``delta`` is continuous and linear in ``e**epsilon`` between breakpoints, so its excess is maximal at a
    breakpoint.

    Attributes:
        reference: ``"paper"`` (max over j of the outlier-in-D_m configuration) or ``"two-sided"`` (also the
            reverse, outlier-in-D configuration).
        eta_gap: ``sup_eps max_pairs (eta_pair(eps) - eta_ref(eps))``; reported as 0.0 when it is at most
            :data:`CONJECTURE_TOL` (floating-point noise), i.e. when the conjecture holds for all eps.
        eta_gap_epsilon: an epsilon where it is attained (interval midpoint), or None if the gap is 0.
        eta_gap_interval: ``(lo, hi)``: the gap holds for every epsilon in ``[lo, hi)``.
        eta_pair, eta_reference: the two etas there.
        eta_pair_original, eta_pair_modified: the pair.
        delta_gap, delta_gap_epsilon, delta_pair_original, delta_pair_modified: the same for delta.
        violating_pairs: number of pairs whose eta exceeds the reference for some epsilon (by > tol).
        pairs_checked: pairs examined.
        bits, population, q: the configuration.
    """

    reference: str
    eta_gap: float
    eta_gap_epsilon: float | None
    eta_gap_interval: tuple[float, float] | None
    eta_pair: float | None
    eta_reference: float | None
    eta_pair_original: list[list[int]] | None
    eta_pair_modified: list[list[int]] | None
    delta_gap: float
    delta_gap_epsilon: float | None
    delta_pair_original: list[list[int]] | None
    delta_pair_modified: list[list[int]] | None
    violating_pairs: int
    pairs_checked: int
    bits: int
    population: int
    q: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def conjecture_gap(bits: int, population: int, q: float, *, reference: str = "paper") -> ConjectureGap:
    """Check the conjecture for every epsilon at once, exhaustively over pairs up to symmetry.

    Args:
        bits: L >= 1.
        population: N >= 1.
        q: flip probability in (0, 0.5).
        reference: ``"paper"``: ``eta_ref(eps) = max_j eta_j(eps)`` over the paper's configuration with an
            outlier of weight j in ``D_m`` (ERRATA 5); ``"two-sided"``: also the reverse pairs (outlier in ``D``).

    Returns:
        A :class:`ConjectureGap`; ``eta_gap <= CONJECTURE_TOL`` means the conjecture holds for every epsilon at this
        ``(L, N, q)``.

    References:
        seed 001 §1.2 (conjecture), eq. (1.7); ERRATA 5.
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    if reference not in ("paper", "two-sided"):
        raise ParameterError(f"reference must be one of ('paper', 'two-sided'); got {reference!r}")
    pairs = neighbouring_pairs(bits, population)
    bits, population = pairs[0].bits, pairs[0].population
    refs = [homogeneous_ratio_distribution(q, bits, population, j) for j in range(1, bits + 1)]
    if reference == "two-sided":
        refs += [
            homogeneous_ratio_distribution(q, bits, population, j, outlier_in=Direction.REVERSE)
            for j in range(1, bits + 1)
        ]
    ref_points = np.concatenate([r.log_ratios for r in refs])
    best_eta: tuple[float, float, float, float, float, float, NeighbouringPair] | None = None
    best_delta: tuple[float, float, NeighbouringPair] | None = None
    violating = 0
    for pr in pairs:
        dist = pr.distribution(q)
        pts = np.unique(np.concatenate([ref_points, dist.log_ratios]))
        keep = np.concatenate([[True], np.diff(pts) > 1e-9])
        pts = pts[keep]
        if pts.size >= 2:
            mids = 0.5 * (pts[:-1] + pts[1:])
            gap = dist.eta_many(mids) - np.max([r.eta_many(mids) for r in refs], axis=0)
            k = int(np.argmax(gap))
            if gap[k] > CONJECTURE_TOL:
                violating += 1
            if best_eta is None or gap[k] > best_eta[0]:
                eta_ref = float(np.max([r.eta(mids[k]) for r in refs]))
                best_eta = (
                    float(gap[k]),
                    float(mids[k]),
                    float(pts[k]),
                    float(pts[k + 1]),
                    dist.eta(mids[k]),
                    eta_ref,
                    pr,
                )
        dgap = dist.delta_many(pts) - np.max([r.delta_many(pts) for r in refs], axis=0)
        kd = int(np.argmax(dgap))
        if best_delta is None or dgap[kd] > best_delta[0]:
            best_delta = (float(dgap[kd]), float(pts[kd]), pr)
    if best_delta is None:  # pragma: no cover - neighbouring_pairs never returns an empty tuple
        raise RuntimeError("no neighbouring pair was generated")
    eta_positive = best_eta is not None and best_eta[0] > CONJECTURE_TOL
    delta_positive = best_delta[0] > CONJECTURE_TOL
    return ConjectureGap(
        reference=reference,
        eta_gap=best_eta[0] if eta_positive and best_eta is not None else 0.0,
        eta_gap_epsilon=best_eta[1] if eta_positive and best_eta is not None else None,
        eta_gap_interval=(best_eta[2], best_eta[3]) if eta_positive and best_eta is not None else None,
        eta_pair=best_eta[4] if eta_positive and best_eta is not None else None,
        eta_reference=best_eta[5] if eta_positive and best_eta is not None else None,
        eta_pair_original=best_eta[6].original if eta_positive and best_eta is not None else None,
        eta_pair_modified=best_eta[6].modified if eta_positive and best_eta is not None else None,
        delta_gap=best_delta[0] if delta_positive else 0.0,
        delta_gap_epsilon=best_delta[1] if delta_positive else None,
        delta_pair_original=best_delta[2].original if delta_positive else None,
        delta_pair_modified=best_delta[2].modified if delta_positive else None,
        violating_pairs=violating,
        pairs_checked=len(pairs),
        bits=bits,
        population=population,
        q=q,
    )
