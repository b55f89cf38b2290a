"""Exact privacy ratio R(S; D, D_m) of the anonymized output and its exact distribution (seed 001 §1.2–§3).

Setting (seed 001 §1.3): ``D = (x_1..x_N)`` are bit vectors of length ``L``; ``D_m`` replaces one of them,
``x_r -> x'_r``. Each bit of each vector is flipped independently with probability ``q`` (``p = 1 - q``) and the
output ``S`` is the histogram of the ``N`` randomized vectors over ``{0,1}^L`` (order dropped). The privacy ratio
is ``R(S) = P(S|D_m) / P(S|D)`` (eq. 1.5/2.1) and sufficient DP asks for ``P_{S~A(D_m)}[R(S) > e**eps] <= eta``
(eq. 1.7).

Conventions:

* A vector ``x`` of ``{0,1}^L`` is encoded as the integer ``sum_b x[b] * 2**b`` (bit ``b`` of the index is report
  bit ``b``; the paper's enumeration v_1 = 00..0, v_2 = 10..0, v_3 = 01..0, ...; same as
  :class:`sufficientdp.Tally`'s ``vector_histogram``).
* A histogram is a length-``2**L`` vector of non-negative counts summing to ``N``.

Computation. With ``D'`` the ``N - 1`` vectors common to ``D`` and ``D_m`` (seed 001 eq. 2.2)::

    P(S | D' ∪ {y}) = sum_v P(S - e_v | D') p(v | y),      p(v | y) = q**d(v, y) * p**(L - d(v, y)),

and ``P(. | D')`` for a general (non-homogeneous) ``D'`` is obtained by a dynamic programme over people: person
``k`` adds one vector to a partial histogram of size ``k - 1``, and the partial histograms are memoized (all of
them for :func:`ratio_distribution`, only those below ``S`` for :func:`privacy_ratio`). Everything is carried in
the log domain (``logaddexp``), so no product of ``N L`` flip probabilities underflows.

The homogeneous configuration (``N - 1`` zero vectors and one outlier with ``j`` set bits) is handled by
:func:`homogeneous_ratio_distribution` through the set-bit counts ``T`` of the ``j`` differing bits
(eq. 3.4–3.6): ``R = (1/N) sum_l t_l (q/p)**(j - 2l)`` and, since ``P(S|D_m) = R(S) P(S|D)``,
``P_m(T) = R(T) * Multinomial(N, Bin(j, q))(T)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln

from .._errors import DataError, ParameterError
from .._numerics.binomial import log_binom_pmf, log_binom_pmf_all
from .._numerics.compositions import compositions
from .._numerics.logspace import logsumexp
from .._numerics.stats import scipy_stats
from .._validation import check_int, check_open_interval, check_positive_finite
from ..loss import MERGE_TOL, PrivacyLossDistribution
from ..loss.result import Direction, check_direction
from ._chernoff import levels

__all__ = [
    "MAX_BITS",
    "MAX_HISTOGRAMS",
    "MAX_HOMOGENEOUS_ATOMS",
    "MAX_RATIO_STATES",
    "RATIO_MERGE_TOL",
    "RatioDistribution",
    "TruncatedTail",
    "five_bit_tail",
    "histogram_count",
    "homogeneous_ratio_distribution",
    "outlier_alone",
    "privacy_ratio",
    "ratio_distribution",
]

#: Largest L accepted by the exact (histogram) functions: 2**L cells per histogram.
MAX_BITS = 12
#: Largest number of anonymized outputs ``C(N + 2**L - 1, N)`` that :func:`ratio_distribution` enumerates
#: (e.g. N <= 30 for L = 2, N <= 12 for L = 3, N <= 6 for L = 4).
MAX_HISTOGRAMS = 200_000
#: Largest number of set-bit count vectors ``C(N + j, j)`` that :func:`homogeneous_ratio_distribution`
#: enumerates (e.g. N <= 1400 for j = 2, N <= 180 for j = 3, N <= 70 for j = 4, N <= 40 for j = 5).
MAX_HOMOGENEOUS_ATOMS = 1_000_000
#: Largest number of memoized partial histograms ``prod_v (s_v + 1)`` that :func:`privacy_ratio` will visit.
MAX_RATIO_STATES = 2_000_000
#: Ratios whose logs differ by at most this much (i.e. relative difference <= ~1e-12) are merged into one atom
#: (the privacy-loss distribution's :data:`sufficientdp.loss.MERGE_TOL`).
RATIO_MERGE_TOL = MERGE_TOL

#: The exact distribution of the privacy ratio is a privacy-loss distribution (``log R`` under ``A(D_m)``):
#: ``RatioDistribution`` is another name for :class:`sufficientdp.loss.PrivacyLossDistribution`, the one type.
RatioDistribution = PrivacyLossDistribution


# ----------------------------------------------------------------------------------------------------------------
# validation helpers


def _check_q(q: Any) -> float:
    return check_open_interval("q", q, 0.0, 0.5)


def histogram_count(bits: int, population: int) -> int:
    """Number of anonymized outputs (histograms of ``N`` vectors over ``{0,1}^L``): ``C(N + 2**L - 1, N)``.

    Examples:
        >>> histogram_count(2, 6), histogram_count(3, 4)
        (84, 330)
    """
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)
    population = check_int("population", population, minimum=1)
    return math.comb(population + (1 << bits) - 1, population)


def _as_collection(name: str, value: Any, bits: int | None = None) -> tuple[np.ndarray, int]:
    """Return ``(codes, bits)``: a collection of 0/1 vectors as an int array of vector codes."""
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - numpy accepts nearly anything
        raise DataError(f"{name} must be a 2-D array of 0/1 values; got {value!r}") from exc
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise DataError(
            f"{name} must be a non-empty 2-D array (people x bits) of 0/1 values; got shape {arr.shape}"
        )
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.number) or not np.all((arr == 0) | (arr == 1)):
        raise DataError(f"{name} must contain only 0/1 values")
    width = int(arr.shape[1])
    if width > MAX_BITS:
        raise ParameterError(f"bits must be an integer >= 1 and <= {MAX_BITS}; got {width} (columns of {name})")
    if bits is not None and width != bits:
        raise DataError(f"{name} must have {bits} columns (bits); got {width}")
    codes = (arr.astype(np.int64) << np.arange(width, dtype=np.int64)).sum(axis=1)
    return codes, width


def _split_pair(original: Any, modified: Any) -> tuple[np.ndarray, int, int, int]:
    """Return ``(base_codes, x, x_prime, bits)`` with ``D = base + {x}`` and ``D_m = base + {x'}``.

    The two collections must have the same size and differ (as multisets, i.e. up to a permutation of people,
    which the anonymized output cannot see) in at most one person's vector.
    """
    d, bits = _as_collection("original", original)
    dm, _ = _as_collection("modified", modified, bits)
    if d.shape[0] != dm.shape[0]:
        raise DataError(
            f"original and modified must have the same number of people; got {d.shape[0]} and {dm.shape[0]}"
        )
    positional = np.flatnonzero(d != dm)
    if positional.size == 1:
        r = int(positional[0])
        return np.delete(d, r), int(d[r]), int(dm[r]), bits
    a, b = np.sort(d), np.sort(dm)
    if np.array_equal(a, b):
        return d[1:], int(d[0]), int(d[0]), bits
    # multiset difference
    m = 1 << bits
    ca, cb = np.bincount(a, minlength=m), np.bincount(b, minlength=m)
    diff = ca - cb
    if np.abs(diff).sum() != 2:
        raise DataError(
            "modified must differ from original in exactly one person's vector (up to reordering people)"
        )
    x, xp = int(np.flatnonzero(diff == 1)[0]), int(np.flatnonzero(diff == -1)[0])
    base = np.repeat(np.arange(m), np.minimum(ca, cb))
    return base, x, xp, bits


def _log_flip_table(bits: int, q: float) -> np.ndarray:
    """``T[y, v] = log p(v | y) = d(v, y) log q + (L - d(v, y)) log p`` (seed 001 §1.3)."""
    m = 1 << bits
    codes = np.arange(m)
    xor = codes[:, None] ^ codes[None, :]
    dist = np.zeros_like(xor)
    for b in range(bits):
        dist += (xor >> b) & 1
    return dist * math.log(q) + (bits - dist) * math.log1p(-q)


# ----------------------------------------------------------------------------------------------------------------
# lattice of histograms


def count_vector_atoms(log_level_probs: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every count vector ``T`` of ``n`` iid reports over the levels of ``log_level_probs`` and ``log P(T)``.

    ``T`` runs over the ``C(n + J, J)`` compositions of ``n`` into ``J + 1`` parts (lexicographic order) and
    ``P(T) = n! / prod_l T_l! * prod_l pi_l**T_l`` (the multinomial law; seed 001 eq. 3.5). The one exact
    enumeration of homogeneous count vectors: :func:`homogeneous_ratio_distribution` and the k-report exact
    tails of :mod:`sufficientdp.ratio.reverse` use it.
    """
    t = compositions(n, int(log_level_probs.size))
    tf = t.astype(float)
    log_mn: np.ndarray = gammaln(n + 1.0) - gammaln(tf + 1.0).sum(axis=1) + tf @ log_level_probs
    return t, log_mn


def _rank_table(n: int, k: int) -> np.ndarray:
    """``T[m, r] = C(r + m, m)``, the number of compositions of at most ``r`` into ``m`` parts (used by :func:`_rank`)."""
    table = np.zeros((k, n + 1), dtype=np.int64)
    for m in range(k):
        for r in range(n + 1):
            table[m, r] = math.comb(r + m, m)
    return table


def _rank(rows: np.ndarray, n: int, table: np.ndarray) -> np.ndarray:
    """Lexicographic rank of each composition of ``n`` (rows) among all compositions of ``n`` into ``k`` parts.

    Compositions whose first differing part ``i`` is ``a < h_i`` number ``C(r_i + m, m) - C(r_i - h_i + m, m)``
    with ``r_i`` the amount left before part ``i`` and ``m = k - 1 - i`` (hockey-stick identity).
    """
    k = rows.shape[1]
    rank = np.zeros(rows.shape[0], dtype=np.int64)
    remaining = np.full(rows.shape[0], n, dtype=np.int64)
    for i in range(k - 1):
        m = k - 1 - i
        h = rows[:, i]
        rank += table[m, remaining] - table[m, remaining - h]
        remaining = remaining - h
    return rank


@lru_cache(maxsize=64)
def _lattice(cells: int, n: int) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Histograms of size ``n`` over ``cells`` cells and, for each size ``k < n``, the up-maps.

    Returns ``(H_n, ups)`` where ``ups[k]`` has shape ``(cells, |H_k|)`` and ``ups[k][v, i]`` is the index in
    ``H_{k+1}`` of ``H_k[i] + e_v``.
    """
    table = _rank_table(n, cells)
    ups = []
    for k in range(n):
        hk = compositions(k, cells)
        up = np.empty((cells, hk.shape[0]), dtype=np.int64)
        for v in range(cells):
            moved = hk.copy()
            moved[:, v] += 1
            up[v] = _rank(moved, k + 1, table)
        up.setflags(write=False)
        ups.append(up)
    hn = compositions(n, cells)
    hn.setflags(write=False)
    return hn, tuple(ups)


def _add_person(logp: np.ndarray, up: np.ndarray, log_flip: np.ndarray, size: int) -> np.ndarray:
    """One DP step: ``P(H + e_v | people + {y}) += P(H | people) p(v | y)`` in the log domain."""
    out = np.full(size, -np.inf)
    for v in range(up.shape[0]):
        idx = up[v]
        out[idx] = np.logaddexp(out[idx], logp + log_flip[v])
    return out


def _log_probs_all(
    base: np.ndarray, x: int, xp: int, bits: int, q: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(H_N, log P(S|D), log P(S|D_m))`` over every histogram ``S`` of size ``N`` (seed 001 eq. 2.2)."""
    cells = 1 << bits
    n = base.size + 1
    flips = _log_flip_table(bits, q)
    hn, ups = _lattice(cells, n)
    logp = np.zeros(1)
    for k, y in enumerate(base.tolist()):
        logp = _add_person(logp, ups[k], flips[y], _size(ups, k + 1, hn))
    size_n = hn.shape[0]
    log_d = _add_person(logp, ups[n - 1], flips[x], size_n)
    log_m = _add_person(logp, ups[n - 1], flips[xp], size_n)
    return hn, log_d, log_m


def _size(ups: tuple[np.ndarray, ...], k: int, hn: np.ndarray) -> int:
    return int(ups[k].shape[1] if k < len(ups) else hn.shape[0])


# ----------------------------------------------------------------------------------------------------------------
# public functions


def _histogram_input(value: Any, bits: int) -> np.ndarray:
    vh = getattr(value, "vector_histogram", None)
    if vh is not None:
        value = vh
    arr = np.asarray(value)
    cells = 1 << bits
    if arr.ndim == 1:
        if arr.size != cells:
            raise DataError(f"a histogram must have 2**bits = {cells} entries; got {arr.size}")
        if not np.issubdtype(arr.dtype, np.number) or np.any(arr < 0) or np.any(arr != np.round(arr)):
            raise DataError("a histogram must contain non-negative integer counts")
        return arr.astype(np.int64)
    codes, _ = _as_collection("reports", arr, bits)
    return np.bincount(codes, minlength=cells).astype(np.int64)


def privacy_ratio(histogram_or_reports: ArrayLike, original: ArrayLike, modified: ArrayLike, q: float) -> float:
    """The privacy ratio ``R(S; D, D_m) = P[A(D_m) = S] / P[A(D) = S]`` of one anonymized output, exactly.

    Uses seed 001 eq. (2.2): ``P(S | D' ∪ {y}) = sum_v P(S - e_v | D') p(v | y)`` with ``D'`` the vectors common to
    both collections; ``P(S - e_v | D')`` comes from a dynamic programme over the people of ``D'`` memoized on the
    partial histograms below ``S`` (at most ``prod_v (s_v + 1)`` of them). When ``D'`` is homogeneous (copies of
    one vector ``b``) the closed form eq. (2.4) is used instead:
    ``R = sum_v s_v p(v|x')/p(v|b) / sum_v s_v p(v|x)/p(v|b)``. All in the log domain.

    Args:
        histogram_or_reports: the output ``S``: a length ``2**L`` vector of counts (index bit b = report bit b), a
            2-D ``(N, L)`` array of 0/1 reports (tallied here), or an object with a ``vector_histogram``
            (a :class:`sufficientdp.Tally`).
        original: ``D``, a ``(N, L)`` array of 0/1.
        modified: ``D_m``, same shape, differing from ``D`` in one person's vector (up to reordering people).
        q: flip probability in (0, 0.5).

    Returns:
        ``R(S)`` as a float (``exp`` of the log-domain value).

    Raises:
        ParameterError: ``q`` out of range, or ``prod_v (s_v + 1)`` above :data:`MAX_RATIO_STATES`.
        DataError: malformed collections or output, or an output whose size differs from ``N``.

    References:
        seed 001 eq. (1.5), (2.1), (2.2), (2.4).

    Examples:
        >>> d = [[0, 0], [0, 0], [0, 0]]
        >>> dm = [[0, 0], [0, 0], [1, 1]]
        >>> round(privacy_ratio([[1, 1], [1, 1], [1, 1]], d, dm, 0.2), 10)  # (p/q)**L at the all-ones output
        16.0
    """
    q = _check_q(q)
    base, x, xp, bits = _split_pair(original, modified)
    s = _histogram_input(histogram_or_reports, bits)
    n = base.size + 1
    if int(s.sum()) != n:
        raise DataError(f"the output must contain N = {n} reports (the collections' size); got {int(s.sum())}")
    return math.exp(_log_ratio_single(s, base, x, xp, bits, q))


def _log_ratio_single(s: np.ndarray, base: np.ndarray, x: int, xp: int, bits: int, q: float) -> float:
    flips = _log_flip_table(bits, q)
    support = np.flatnonzero(s > 0)
    if base.size == 0:
        # local ratio: S is a single vector v
        v = int(support[0])
        return float(flips[xp, v] - flips[x, v])
    if np.all(base == base[0]):
        b = int(base[0])
        logs = np.log(s[support])
        num = logsumexp(logs + flips[xp, support] - flips[b, support], split_max=True)
        den = logsumexp(logs + flips[x, support] - flips[b, support], split_max=True)
        return float(num - den)
    states = math.prod(int(c) + 1 for c in s[support])
    if states > MAX_RATIO_STATES:
        raise ParameterError(
            f"prod_v (s_v + 1) must be <= {MAX_RATIO_STATES} for the exact ratio; got {states} "
            "(the output has too many distinct large counts)"
        )
    target = tuple(int(c) for c in s)
    layer: dict[tuple[int, ...], float] = {tuple([0] * s.size): 0.0}
    for y in base.tolist():
        row = flips[y]
        nxt: dict[tuple[int, ...], float] = {}
        for h, lp in layer.items():
            for v in support.tolist():
                if h[v] < target[v]:
                    g = h[:v] + (h[v] + 1,) + h[v + 1 :]
                    val = lp + float(row[v])
                    old = nxt.get(g)
                    nxt[g] = val if old is None else float(np.logaddexp(old, val))
        layer = nxt
    num_terms, den_terms = [], []
    for v in support.tolist():
        g = target[:v] + (target[v] - 1,) + target[v + 1 :]
        lp = layer.get(g, -math.inf)
        num_terms.append(lp + float(flips[xp, v]))
        den_terms.append(lp + float(flips[x, v]))
    return float(logsumexp(num_terms, split_max=True) - logsumexp(den_terms, split_max=True))


def ratio_distribution(original: ArrayLike, modified: ArrayLike, q: float) -> PrivacyLossDistribution:
    """Exact distribution of ``R(S; D, D_m)`` under ``S ~ A(D_m)`` over all anonymized outputs.

    Enumerates every histogram ``S`` of ``N`` vectors over ``{0,1}^L`` (``C(N + 2**L - 1, N)`` of them):
    ``log P(. | D')`` by the dynamic programme over people (each adds one vector to a partial histogram), then
    ``log P(S | D)`` and ``log P(S | D_m)`` by eq. (2.2), and ``log R = log P(S|D_m) - log P(S|D)``.

    Feasible sizes: up to :data:`MAX_HISTOGRAMS` outputs, e.g. N <= 30 for L = 2, N <= 12 for L = 3, N <= 6 for
    L = 4.

    Args:
        original: ``D``, a ``(N, L)`` array of 0/1.
        modified: ``D_m``, same shape, differing from ``D`` in one person's vector (up to reordering people).
        q: flip probability in (0, 0.5).

    Returns:
        A :class:`~sufficientdp.loss.PrivacyLossDistribution` (``method="exact-histogram"``).

    Raises:
        ParameterError: ``q`` out of range; ``C(N + 2**L - 1, N)`` above :data:`MAX_HISTOGRAMS`.
        DataError: malformed collections.

    References:
        seed 001 eq. (1.6), (1.7), (2.1), (2.2).

    Examples:
        >>> dist = ratio_distribution([[0, 0], [0, 0]], [[0, 0], [1, 1]], 0.2)
        >>> round(dist.max_ratio, 10), round(float(dist.probabilities.sum()), 12)
        (16.0, 1.0)
    """
    q = _check_q(q)
    base, x, xp, bits = _split_pair(original, modified)
    n = base.size + 1
    count = math.comb(n + (1 << bits) - 1, n)
    if count > MAX_HISTOGRAMS:
        raise ParameterError(
            f"the number of histograms C(N + 2**L - 1, N) must be <= {MAX_HISTOGRAMS}; got {count} "
            f"for N = {n}, L = {bits} (population too large for exact enumeration)"
        )
    return _distribution_from_codes(base, x, xp, bits, q)


def _distribution_from_codes(base: np.ndarray, x: int, xp: int, bits: int, q: float) -> PrivacyLossDistribution:
    """:func:`ratio_distribution` on validated codes (``D = base + {x}``, ``D_m = base + {x'}``)."""
    n = base.size + 1
    _, log_d, log_m = _log_probs_all(base, x, xp, bits, q)
    return PrivacyLossDistribution(
        log_ratios=log_m - log_d,
        log_probabilities=log_m,
        q=q,
        bits=bits,
        population=n,
        outlier_bits=None,
        method="exact-histogram",
        outputs=math.comb(n + (1 << bits) - 1, n),
        details={
            "common": _codes_to_lists(np.sort(base).tolist(), bits),
            "original_vector": _codes_to_lists([x], bits)[0],
            "modified_vector": _codes_to_lists([xp], bits)[0],
            "hamming": bin(x ^ xp).count("1"),
        },
    )


def homogeneous_ratio_distribution(
    q: float, bits: int, population: int, outlier_bits: int | None = None, *,
    outlier_in: Direction | str = Direction.FORWARD,
) -> PrivacyLossDistribution:
    """Exact distribution of ``R(S)`` for the homogeneous configuration with one outlier (seed 001 §3).

    ``D`` is ``N`` zero vectors; ``D_m`` replaces one by an outlier with ``j = outlier_bits`` set bits (default
    ``L``, the all-ones vector of the paper's conjecture). Only the ``j`` differing bits matter:
    ``R = (1/N) sum_l t_l (q/p)**(j - 2l)`` (eq. 3.4, 3.6 with L -> j) where ``t_l`` counts outputs with ``l`` of
    those bits set and ``T ~ MN(N - 1, Bin(j, q)) + MN(1, Bin(j, p))`` (eq. 3.5). Since ``P(S|D_m) = R(S) P(S|D)``,
    ``P_m(T) = R(T) * MN(N, Bin(j, q))(T)`` exactly. All ``C(N + j, j)`` vectors ``T`` are enumerated.

    ``outlier_in=Direction.REVERSE`` (alias ``"original"``) gives the *reverse* pair (the outlier is in ``D`` and
    ``D_m`` is homogeneous):
    there ``R_rev(S) = 1 / R(S)`` with ``T ~ MN(N, Bin(j, q))``. Its largest ratio ``(p/q)**j`` sits at the *most
    likely* output (every report all-zero on the j bits), so this direction is not covered by the paper's
    conjecture (see ``docs/worst_case.md``).

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1 (only enters through ``j <= L``).
        population: N >= 1.
        outlier_bits: j in [1, L]; default L.
        outlier_in: a :class:`~sufficientdp.loss.result.Direction`: ``FORWARD`` (the paper's configuration: D
            homogeneous, the outlier in D_m) or ``REVERSE`` (the reverse pair); the aliases ``"modified"`` /
            ``"original"`` are accepted (the same results).

    Returns:
        A :class:`~sufficientdp.loss.PrivacyLossDistribution` (``method="exact-homogeneous"``).

    Raises:
        ParameterError: parameter out of range, or ``C(N + j, j)`` above :data:`MAX_HOMOGENEOUS_ATOMS`.

    References:
        seed 001 eq. (3.4)–(3.6), (3.11).

    Examples:
        >>> dist = homogeneous_ratio_distribution(0.2, 2, 3)
        >>> round(dist.max_ratio, 10)  # (p/q)**j, attained when every output has all j bits set
        16.0
    """
    q = _check_q(q)
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=1)
    j = bits if outlier_bits is None else check_int("outlier_bits", outlier_bits, minimum=1, maximum=bits)
    direction = check_direction("outlier_in", outlier_in, (Direction.FORWARD, Direction.REVERSE))
    count = math.comb(population + j, j)
    if count > MAX_HOMOGENEOUS_ATOMS:
        raise ParameterError(
            f"the number of set-bit count vectors C(N + j, j) must be <= {MAX_HOMOGENEOUS_ATOMS}; got {count} "
            f"for N = {population}, j = {j}"
        )
    p = 1.0 - q
    ls = np.arange(j + 1)
    log_a = log_binom_pmf_all(j, q, log1m_prob=math.log(p))
    log_w = (j - 2 * ls) * (math.log(q) - math.log(p))
    t, log_mn = count_vector_atoms(log_a, population)
    log_r = logsumexp(np.broadcast_to(log_w, t.shape), b=t, axis=1, split_max=True) - math.log(population)
    if direction is Direction.FORWARD:
        lr, lp = log_r, log_mn + log_r
    else:
        lr, lp = -log_r, log_mn
    return PrivacyLossDistribution(
        log_ratios=lr,
        log_probabilities=lp,
        q=q,
        bits=bits,
        population=population,
        outlier_bits=j,
        method="exact-homogeneous",
        outputs=count,
        details={
            "configuration": "N-1 zero vectors + one outlier with j set bits",
            "outlier_in": direction.value,
        },
    )


@dataclass(frozen=True, slots=True)
class TruncatedTail:
    """``P[R(S) >= lambda]`` by enumeration with a truncated mass: the truth lies in ``[value, value + truncated]``
    (:func:`five_bit_tail`)."""

    value: float
    truncated: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``value``, ``truncated`` and the bracket ``lower`` (= value), ``upper``
        (= value + truncated)."""
        return {"value": self.value, "truncated": self.truncated, "lower": self.value,
                "upper": self.value + self.truncated}


def five_bit_tail(*, q: float, population: int, thresholds: Sequence[float],
                  delta: float = 1e-15) -> list[TruncatedTail]:
    """``P[R(S) >= lambda]`` for L = 5 in the homogeneous configuration, by enumeration (seed 001 eq. 3.5-3.6).

    The N - 1 zero reports give counts ``(t_0..t_5) ~ Multinomial(N - 1, Bin(5, q))``, generated sequentially as
    ``t_5 ~ Bin(N-1, p_5)``, ``t_4 | t_5 ~ Bin(N-1-t_5, p_4/(p_0+..+p_4))``, ... . The "high" counts
    ``(t_5, t_4, t_3)`` are enumerated on a grid, and for every remainder ``m_3 = N-1-t_5-t_4-t_3`` the law of the
    "low" part ``t_2 w_2 + t_1 w_1 + t_0 w_0`` is enumerated over ``(t_2, t_1)``, sorted, and queried for the
    residual threshold; the outlier's count class ``l ~ Bin(5, p)`` is summed out (``w_l = (q/p)**(5 - 2l)``,
    eq. 3.2). Each count ``t_c`` (c >= 1) is restricted to the central range that leaves at most ``delta`` of its
    Bin(N-1, p_c) marginal on each side, so (union bound) the omitted mass is at most the sum of those tails,
    returned as ``truncated``.

    The enumeration behind ``docs/reproduction.md``'s "exact" tail column (the paper's L = 5 tables, N <= 5000):
    an implementation independent of :func:`sufficientdp.ratio.tail.exact_tail` (which brackets ``P[R > lambda]``
    for any j through the shared Chernoff engine), so each checks the other.

    Args:
        q: flip probability in (0, 0.5).
        population: N >= 2.
        thresholds: the values of ``lambda`` (> 0).
        delta: mass left out on each side of each count's marginal, in (0, 1).

    Returns:
        One :class:`TruncatedTail` per threshold, in order.

    Raises:
        ParameterError: a parameter out of range.

    References:
        ``papers/001_3d8ddaba8b46cf9c.txt`` (seed 001) eq. (3.2), (3.5)-(3.6), §3.3.

    Examples:
        >>> t = five_bit_tail(q=0.169199, population=1000, thresholds=[float(np.exp(2.0))])[0]
        >>> round(t.value, 6), t.truncated < 1e-13
        (0.003706, True)
    """
    q = _check_q(q)
    population = check_int("population", population, minimum=2)
    lams = [check_positive_finite("thresholds", t) for t in thresholds]
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    binom = scipy_stats().binom
    bits = 5
    n = population - 1
    lvals = np.arange(bits + 1)
    p0 = binom.pmf(lvals, bits, q)
    p1 = p0[::-1].copy()
    w = np.exp(levels(q, bits)[1])
    a4 = p0[4] / p0[:5].sum()
    a3 = p0[3] / p0[:4].sum()
    a2 = p0[2] / p0[:3].sum()
    a1 = p0[1] / p0[:2].sum()
    logpmf = log_binom_pmf  # log P[Bin(m, a) = k] at the (k, m) pairs of the grids, -inf outside 0 <= k <= m

    ranges: dict[int, np.ndarray] = {}
    truncated = 0.0
    for c in range(1, bits + 1):
        lo = max(int(binom.ppf(delta, n, p0[c])), 0)
        hi = min(int(binom.isf(delta, n, p0[c])), n)
        ranges[c] = np.arange(lo, hi + 1)
        truncated += float(binom.cdf(lo - 1, n, p0[c]) + binom.sf(hi, n, p0[c]))

    t5 = ranges[5][:, None, None]
    t4 = ranges[4][None, :, None]
    t3 = ranges[3][None, None, :]
    lp_high = (logpmf(t5, np.full_like(t5, n), p0[5]) + logpmf(t4, n - t5, a4) + logpmf(t3, n - t5 - t4, a3))
    high = t5 * w[5] + t4 * w[4] + t3 * w[3]
    m3 = n - t5 - t4 - t3
    lp_high, high, m3 = (np.broadcast_to(a, lp_high.shape).ravel() for a in (lp_high, high, m3))
    keep = np.isfinite(lp_high) & (m3 >= 0)
    p_high, high, m3 = np.exp(lp_high[keep]), high[keep], m3[keep]

    cuts = np.asarray(lams, dtype=float) * population
    # residual threshold for the low part: y = N lam - w[l_outlier] - high
    y = cuts[None, :, None] - w[None, None, :] - high[:, None, None]  # (combo, threshold, outlier l)
    order = np.argsort(m3, kind="stable")
    splits = np.flatnonzero(np.diff(m3[order])) + 1
    t2 = ranges[2][:, None]
    t1 = ranges[1][None, :]
    total = np.zeros(len(cuts))
    for grp in np.split(order, splits):
        m = int(m3[grp[0]])
        mm = np.full(t2.shape, m)
        lp = logpmf(t2, mm, a2) + logpmf(t1, m - t2, a1)
        ok = np.isfinite(lp)
        low = (m * w[0] + t2 * (w[2] - w[0]) + t1 * (w[1] - w[0]))
        low = np.broadcast_to(low, lp.shape)[ok]
        pr = np.exp(lp[ok])
        srt = np.argsort(low)
        low, pr = low[srt], pr[srt]
        suffix = np.concatenate([np.cumsum(pr[::-1])[::-1], [0.0]])  # suffix[i] = P[low >= low[i]]
        g = suffix[np.searchsorted(low, y[grp], side="left")]  # P[low >= y]
        total += np.einsum("c,ctl,l->t", p_high[grp], g, p1)
    return [TruncatedTail(float(v), truncated) for v in total]


def outlier_alone(*, q: float, bits: int, population: int, ratio: float) -> tuple[float, int | None]:
    """``P[(N - 1) + w_{l1} >= N lambda]`` with ``l1 ~ Bin(L, p)`` and ``w_l = (q/p)**(L - 2l)`` (seed 001
    eq. 3.2, 3.6): the chance that the outlier's own report pushes ``R(S)`` to ``lambda = ratio`` while the
    ``N - 1`` zero reports sit at their mean ``E X0 = 1`` (eq. 7.6). A reference point for the tail, not a bound.

    Args:
        q: flip probability in (0, 0.5).
        bits: L >= 1.
        population: N >= 2.
        ratio: the threshold ``lambda`` (> 0).

    Returns:
        The probability and the smallest such ``l1`` (None if no outlier report suffices).

    Raises:
        ParameterError: a parameter out of range.

    References:
        ``papers/001_3d8ddaba8b46cf9c.txt`` (seed 001) eq. (3.2), (3.6), (7.6).

    Examples:
        >>> outlier_alone(q=0.1, bits=5, population=10, ratio=2.0)[1]  # w_l = 9**(2l - 5) >= 10 * 2 - 9 first at l = 4
        4
    """
    q = _check_q(q)
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=2)
    ratio = check_positive_finite("ratio", ratio)
    lvals = np.arange(bits + 1)
    w = np.exp(levels(q, bits)[1])
    hit = w >= population * ratio - (population - 1)
    if not hit.any():
        return 0.0, None
    return float(scipy_stats().binom.pmf(lvals, bits, 1.0 - q)[hit].sum()), int(lvals[hit].min())


def _codes_to_lists(codes: Sequence[int], bits: int) -> list[list[int]]:
    return [[(int(c) >> b) & 1 for b in range(bits)] for c in codes]
