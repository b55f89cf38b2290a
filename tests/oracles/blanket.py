"""Independent exact oracle for the privacy-blanket dominating pair of bit-vector randomized response.

Nothing here imports ``sufficientdp``: the point is an independent computation to test it (and the theorem) against.

Setting. A report of ``x in {0,1}^L`` flips every bit independently with probability ``q`` (``p = 1 - q``):
``R(x)(y) = p^(L - d(x, y)) q^d(x, y)``. The mechanism releases the histogram (multiset) of the N reports.
Neighbours: ``D_m = D' + {x}`` (law P) and ``D = D' + {x'}`` (law Q); the privacy loss is
``Lambda = log P(S) / Q(S)`` under ``S ~ P``; ``eta(e) = P[Lambda > e]``, ``delta(e) = sup_A P(A) - e^e Q(A)``.

Blanket pair for ``(x, x')`` on a domain ``X``: ``m(y) = min_{z in X} R(z)(y)``, ``gamma = sum_y m(y)``,
``omega = m / gamma``; ``B ~ Bin(N - 1, gamma)``; P (resp. Q) releases the multiset of B iid omega-draws plus one
report from ``R(x)`` (resp. ``R(x')``). Its size ``B + 1`` is visible, so its delta is the Bin-mixture of the
per-size deltas.

Exactness. ``q`` and ``eps`` are rationals (``Fraction``; a float is taken at its exact binary value). Every
probability is then rational, and with ``b`` the denominator of ``q`` every probability of a histogram of N reports
is an integer over ``b^(L N)``: the code works with those integers (numpy ``int64`` while ``b^(L N) < 2^62``,
Python ints otherwise). A hockey-stick value ``P(A) - e^eps Q(A)`` is kept as the exact pair
``ExpAffine(P(A), Q(A), eps)``; because ``e^eps`` is transcendental for rational ``eps != 0`` (Lindemann), two
such values are equal iff their pairs are, and the sign of ``a - e^eps b`` is decided rigorously with interval
arithmetic (a private mpmath interval context, so no global mpmath state is touched). In particular the set
``{S : P(S) > e^eps Q(S)}`` is found exactly, and for ``eps != 0`` there are no ties, so ``eta`` with ``>`` and with
``>=`` coincide (both are returned anyway).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache

import mpmath
import numpy as np
from mpmath.ctx_iv import MPIntervalContext

__all__ = [
    "ExpAffine",
    "RealPairResult",
    "WorstReal",
    "BlanketResult",
    "sign_a_minus_exp_b",
    "domain_points",
    "blanket_weights",
    "real_pair_delta_eta",
    "iter_real_pairs",
    "worst_real",
    "blanket_delta",
    "blanket_delta_enumeration",
    "blanket_delta_identity",
    "eta_from_delta_bound",
]

_IV = MPIntervalContext()  # private interval context: its precision is ours alone


# ---------------------------------------------------------------------------------------------------------------
# Exact arithmetic on numbers a - e^eps b (a, b, eps rational)
# ---------------------------------------------------------------------------------------------------------------

def _frac(v: object) -> Fraction:
    if isinstance(v, Fraction):
        return v
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, (float, str)):
        return Fraction(v)
    raise TypeError(f"expected a rational (int, Fraction, str or float), got {type(v).__name__}")


def _sgn(v: Fraction | int) -> int:
    return (v > 0) - (v < 0)


def sign_a_minus_exp_b(a: object, b: object, eps: object) -> int:
    """Exact sign (-1, 0, 1) of ``a - e^eps * b`` for rationals a, b, eps.

    >>> sign_a_minus_exp_b(Fraction(27183, 10000), 1, 1), sign_a_minus_exp_b(Fraction(27182, 10000), 1, 1)
    (1, -1)
    >>> sign_a_minus_exp_b(3, 3, 0), sign_a_minus_exp_b(0, 0, 1)
    (0, 0)
    """
    a, b, eps = _frac(a), _frac(b), _frac(eps)
    if b == 0:
        return _sgn(a)
    if eps == 0:
        return _sgn(a - b)
    sb = _sgn(b)
    r = a / b  # a - e^eps b = b (r - e^eps)
    if r <= 0:
        return -sb
    # float screen, then rigorous intervals; r == e^eps is impossible (e^eps is irrational for rational eps != 0)
    try:
        rf, ef = float(r), math.exp(float(eps))
        if math.isfinite(rf) and math.isfinite(ef) and abs(rf - ef) > 1e-9 * (rf + ef):
            return sb if rf > ef else -sb
    except OverflowError:
        pass
    prec = 128
    while prec <= 1 << 20:
        _IV.prec = prec
        ri = _IV.mpf(r.numerator) / _IV.mpf(r.denominator)
        ei = _IV.exp(_IV.mpf(eps.numerator) / _IV.mpf(eps.denominator))
        if ri.a > ei.b:
            return sb
        if ri.b < ei.a:
            return -sb
        prec *= 4
    raise ArithmeticError(f"could not separate {r} from exp({eps})")  # pragma: no cover


@dataclass(frozen=True)
class ExpAffine:
    """The real number ``a - e^eps * b`` (a, b, eps rational), compared exactly."""

    a: Fraction
    b: Fraction
    eps: Fraction

    def sign(self) -> int:
        return sign_a_minus_exp_b(self.a, self.b, self.eps)

    def mpf(self, dps: int = 50) -> mpmath.mpf:
        with mpmath.workdps(dps):
            return mpmath.mpf(self.a.numerator) / self.a.denominator - mpmath.exp(
                mpmath.mpf(self.eps.numerator) / self.eps.denominator) * (
                mpmath.mpf(self.b.numerator) / self.b.denominator)

    def __float__(self) -> float:
        return float(self.mpf(30))

    def _cmp(self, other: object) -> int:
        if isinstance(other, ExpAffine):
            if other.eps != self.eps:
                if self.b == 0 and other.b == 0:
                    return _sgn(self.a - other.a)
                raise ValueError("comparing ExpAffine values with different eps")
            return sign_a_minus_exp_b(self.a - other.a, self.b - other.b, self.eps)
        o = _frac(other)
        return sign_a_minus_exp_b(self.a - o, self.b, self.eps)

    def __eq__(self, other: object) -> bool:
        return self._cmp(other) == 0

    def __hash__(self) -> int:  # pragma: no cover - equal values have equal pairs when eps != 0
        return hash((self.a, self.b, self.eps))

    def __lt__(self, other: object) -> bool:
        return self._cmp(other) < 0

    def __le__(self, other: object) -> bool:
        return self._cmp(other) <= 0

    def __gt__(self, other: object) -> bool:
        return self._cmp(other) > 0

    def __ge__(self, other: object) -> bool:
        return self._cmp(other) >= 0

    def __repr__(self) -> str:
        return f"ExpAffine({self.a} - e^{self.eps} * {self.b} ~ {float(self):.6g})"


# ---------------------------------------------------------------------------------------------------------------
# Domains, randomizer weights, histograms
# ---------------------------------------------------------------------------------------------------------------

def _to_mask(x: int | Sequence[int], L: int) -> int:
    """A bit vector as an int: bit i of the int is coordinate i. Accepts an int or a 0/1 sequence of length L."""
    if isinstance(x, (int, np.integer)):
        v = int(x)
    else:
        bits = list(x)
        if len(bits) != L or any(bb not in (0, 1) for bb in bits):
            raise ValueError(f"{x!r} is not a 0/1 vector of length {L}")
        v = sum(int(bb) << i for i, bb in enumerate(bits))
    if not 0 <= v < (1 << L):
        raise ValueError(f"{x!r} is not in {{0,1}}^{L}")
    return v


def _domain_key(domain: object) -> object:
    if domain in ("all", "onehot"):
        return domain
    if isinstance(domain, (tuple, list)) and len(domain) == 2 and domain[0] == "weight":
        return ("weight", int(domain[1]))
    raise ValueError(f"unknown domain {domain!r}")


def domain_points(L: int, domain: object) -> tuple[int, ...]:
    """The domain as sorted bitmasks: "all", "onehot" (exactly one bit set) or ("weight", w) (at most w set bits).

    >>> domain_points(2, "all"), domain_points(3, "onehot"), domain_points(2, ("weight", 1))
    ((0, 1, 2, 3), (1, 2, 4), (0, 1, 2))
    """
    key = _domain_key(domain)
    pts = range(1 << L)
    if key == "all":
        return tuple(pts)
    if key == "onehot":
        return tuple(v for v in pts if v.bit_count() == 1)
    return tuple(v for v in pts if v.bit_count() <= key[1])  # type: ignore[index]


def _q_parts(q: object) -> tuple[int, int]:
    qf = _frac(q)
    if not 0 < qf < 1:
        raise ValueError(f"need 0 < q < 1, got {qf}")
    return qf.numerator, qf.denominator


@cache
def _report_weights(L: int, qa: int, qb: int) -> tuple[tuple[int, ...], ...]:
    """``W[x][y] = b^L R(x)(y) = (b - a)^(L - d) a^d`` (integers), q = a / b."""
    pa = qb - qa
    return tuple(tuple(pa ** (L - (x ^ y).bit_count()) * qa ** (x ^ y).bit_count() for y in range(1 << L))
                 for x in range(1 << L))


def blanket_weights(L: int, q: object, domain: object) -> tuple[tuple[int, ...], int, int]:
    """``(m, Gamma, b^L)``: ``m[y] = b^L min_{z in X} R(z)(y)`` (integers), ``Gamma = sum m``, so ``gamma =
    Gamma / b^L`` and ``omega = m / Gamma``.

    >>> blanket_weights(1, Fraction(1, 4), "all")
    ((1, 1), 2, 4)
    """
    qa, qb = _q_parts(q)
    W = _report_weights(L, qa, qb)
    pts = domain_points(L, domain)
    if not pts:
        raise ValueError("empty domain")
    m = tuple(min(W[z][y] for z in pts) for y in range(1 << L))
    return m, sum(m), qb ** L


class _HistSpace:
    """All histograms of n reports over C cells (n = 0..nmax), with the table 'add one report in cell y'."""

    def __init__(self, C: int, nmax: int) -> None:
        self.C = C
        self.levels: list[list[tuple[int, ...]]] = [[(0,) * C]]
        self.index: list[dict[tuple[int, ...], int]] = [{(0,) * C: 0}]
        self.trans: list[np.ndarray] = []
        for n in range(nmax):
            cur = self.levels[n]
            nxt = sorted({h[:y] + (h[y] + 1,) + h[y + 1:] for h in cur for y in range(C)})
            idx = {h: i for i, h in enumerate(nxt)}
            t = np.array([[idx[h[:y] + (h[y] + 1,) + h[y + 1:]] for y in range(C)] for h in cur], dtype=np.intp)
            self.levels.append(nxt)
            self.index.append(idx)
            self.trans.append(t)

    def add(self, dist: np.ndarray, n: int, w: Sequence[int]) -> np.ndarray:
        """Law of the histogram after one more independent report with (integer) weights w: sum_y w[y] shift_y."""
        t = self.trans[n]
        out = np.zeros(len(self.levels[n + 1]), dtype=dist.dtype)
        for y in range(self.C):
            if w[y]:
                out[t[:, y]] += dist * w[y]  # t[:, y] is injective: no repeated indices
        return out


@cache
def _hist_space(C: int, nmax: int) -> _HistSpace:
    return _HistSpace(C, nmax)


def _dtype(qb: int, L: int, N: int) -> type | np.dtype:
    return np.int64 if qb ** (L * N) < (1 << 62) else object


def _signs(P: np.ndarray, Q: np.ndarray, eps: Fraction) -> np.ndarray:
    """Exact elementwise sign of ``P - e^eps Q`` (P, Q nonnegative integer arrays)."""
    e = math.exp(float(eps))
    Pf, Qf = P.astype(float), Q.astype(float)
    diff = Pf - e * Qf
    s = np.sign(diff).astype(np.int8)
    amb = np.abs(diff) <= 1e-9 * (Pf + e * Qf)
    for i in np.flatnonzero(amb):
        s[i] = sign_a_minus_exp_b(int(P[i]), int(Q[i]), eps)
    return s


def _delta_eta(P: np.ndarray, Q: np.ndarray, denom: int, eps: Fraction) -> tuple[ExpAffine, Fraction, Fraction]:
    s = _signs(P, Q, eps)
    gt, ge = s > 0, s >= 0
    pa, qa = int(P[gt].sum()), int(Q[gt].sum())
    return (ExpAffine(Fraction(pa, denom), Fraction(qa, denom), eps), Fraction(pa, denom),
            Fraction(int(P[ge].sum()), denom))


# ---------------------------------------------------------------------------------------------------------------
# The real pair
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RealPairResult:
    delta: ExpAffine            # sup_A P(A) - e^eps Q(A), P = law of M(D' + {x}), Q = law of M(D' + {x'})
    eta: Fraction               # P[Lambda > eps]
    eta_ge: Fraction            # P[Lambda >= eps]


def _real_arrays_tuples(L: int, base: Sequence[int], x: int, xp: int, qa: int, qb: int) -> tuple[np.ndarray, ...]:
    """Histogram laws by brute force: every ordered tuple of reports, grouped by histogram (Python ints)."""
    W = _report_weights(L, qa, qb)
    N, C = len(base) + 1, 1 << L
    hs = _hist_space(C, N)
    idx = hs.index[N]
    out = []
    for last in (x, xp):
        people = tuple(base) + (last,)
        arr = np.zeros(len(hs.levels[N]), dtype=object)
        arr[:] = 0
        for ys in itertools.product(range(C), repeat=N):
            w = 1
            for person, y in zip(people, ys):
                w *= W[person][y]
            h = [0] * C
            for y in ys:
                h[y] += 1
            arr[idx[tuple(h)]] += w
        out.append(arr)
    return out[0], out[1]


def _real_arrays_conv(L: int, base: Sequence[int], x: int, xp: int, qa: int, qb: int) -> tuple[np.ndarray, ...]:
    """The same laws, grouping incrementally (one person at a time)."""
    W = _report_weights(L, qa, qb)
    N, C = len(base) + 1, 1 << L
    hs = _hist_space(C, N)
    dist = np.ones(1, dtype=_dtype(qb, L, N))
    for n, person in enumerate(base):
        dist = hs.add(dist, n, W[person])
    return hs.add(dist, N - 1, W[x]), hs.add(dist, N - 1, W[xp])


def real_pair_delta_eta(L: int, base: Sequence[int | Sequence[int]], x: int | Sequence[int],
                        x_prime: int | Sequence[int], q: object, eps: object, *,
                        method: str = "convolution") -> RealPairResult:
    """Exact delta and eta of the real pair ``M(D' + {x})`` vs ``M(D' + {x'})``, ``D' = base`` (N - 1 vectors).

    ``method="tuples"`` enumerates all ``2^(L N)`` ordered report tuples and groups them into histograms;
    ``"convolution"`` (default) does the same grouping one person at a time (identical integers, much faster).

    >>> r = real_pair_delta_eta(1, [], 0, 1, Fraction(1, 4), 1)   # N = 1: plain randomized response
    >>> r.delta.a, r.delta.b, r.eta                                # P = (3/4, 1/4), Q = (1/4, 3/4); 3 > e
    (Fraction(3, 4), Fraction(1, 4), Fraction(3, 4))
    """
    qa, qb = _q_parts(q)
    eps = _frac(eps)
    base_m = [_to_mask(v, L) for v in base]
    xm, xpm = _to_mask(x, L), _to_mask(x_prime, L)
    N = len(base_m) + 1
    if method == "tuples":
        P, Q = _real_arrays_tuples(L, base_m, xm, xpm, qa, qb)
    elif method == "convolution":
        P, Q = _real_arrays_conv(L, base_m, xm, xpm, qa, qb)
    else:
        raise ValueError(method)
    d, e_gt, e_ge = _delta_eta(P, Q, qb ** (L * N), eps)
    return RealPairResult(d, e_gt, e_ge)


def _symmetry_group(L: int, pts: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Hyperoctahedral maps y -> perm(y) xor f (as tables on {0..2^L-1}) that map the domain onto itself."""
    S = set(pts)
    group = []
    for perm in itertools.permutations(range(L)):
        for f in range(1 << L):
            table = tuple(sum(((y >> i) & 1) << perm[i] for i in range(L)) ^ f for y in range(1 << L))
            if {table[v] for v in pts} == S:
                group.append(table)
    return group


def _pairs(L: int, pts: tuple[int, ...], symmetry: bool) -> list[tuple[int, int]]:
    """Ordered pairs x != x' of the domain; with symmetry, one per orbit of the domain's symmetry group.

    Justification: for g in the group, d(gx, gy) = d(x, y), so M(gD) is M(D) relabelled cellwise (delta and eta
    unchanged), and m(gy) = min_{z in X} R(z)(gy) = min_{z in g^-1 X = X} R(z)(y) = m(y), so the blanket pair of
    (gx, gx') is that of (x, x') relabelled. All D' are still enumerated, so every triple (D', x, x') is covered
    up to a symmetry.
    """
    allp = [(u, v) for u in pts for v in pts if u != v]
    if not symmetry:
        return allp
    group = _symmetry_group(L, pts)
    return [(u, v) for (u, v) in allp if (u, v) == min((g[u], g[v]) for g in group)]


@dataclass(frozen=True)
class RealTriple:
    base: tuple[int, ...]
    x: int
    x_prime: int
    P: np.ndarray
    Q: np.ndarray
    denom: int

    def delta_eta(self, eps: object) -> tuple[ExpAffine, Fraction, Fraction]:
        return _delta_eta(self.P, self.Q, self.denom, _frac(eps))


def iter_real_pairs(L: int, N: int, q: object, domain: object, *, symmetry: bool = False) -> Iterator[RealTriple]:
    """Every real triple (D', x, x'): D' a multiset of N - 1 domain points, x != x' in the domain (ordered).

    With ``symmetry=True`` only one (x, x') per orbit of the domain's symmetry group (all D' for each).
    """
    qa, qb = _q_parts(q)
    W = _report_weights(L, qa, qb)
    pts = domain_points(L, domain)
    pairs = _pairs(L, pts, symmetry)
    needed = sorted({u for pr in pairs for u in pr})
    hs = _hist_space(1 << L, N)
    denom = qb ** (L * N)
    root = np.ones(1, dtype=_dtype(qb, L, N))

    def rec(start: int, depth: int, dist: np.ndarray, base: tuple[int, ...]) -> Iterator[RealTriple]:
        if depth == N - 1:
            last = {u: hs.add(dist, N - 1, W[u]) for u in needed}
            for u, v in pairs:
                yield RealTriple(base, u, v, last[u], last[v], denom)
            return
        for i in range(start, len(pts)):
            yield from rec(i, depth + 1, hs.add(dist, depth, W[pts[i]]), base + (pts[i],))

    yield from rec(0, 0, root, ())


@dataclass(frozen=True)
class WorstReal:
    delta: ExpAffine
    delta_arg: tuple[tuple[int, ...], int, int]     # (D', x, x') attaining it
    eta: Fraction                                  # max P[Lambda > eps]
    eta_arg: tuple[tuple[int, ...], int, int]
    eta_ge: Fraction                               # max P[Lambda >= eps]
    triples: int                                   # how many triples were enumerated


def worst_real(L: int, N: int, q: object, eps: object, domain: object, *, symmetry: bool = True) -> WorstReal:
    """Max over all D' (multisets of N - 1 domain points) and ordered pairs x != x' of the real delta and eta.

    >>> w = worst_real(1, 1, Fraction(1, 4), 1, "all")
    >>> w.eta, w.delta.a, w.delta.b
    (Fraction(3, 4), Fraction(3, 4), Fraction(1, 4))
    """
    eps = _frac(eps)
    best_d: ExpAffine | None = None
    best_e, best_ge = Fraction(-1), Fraction(-1)
    arg_d = arg_e = ((), -1, -1)
    n = 0
    for t in iter_real_pairs(L, N, q, domain, symmetry=symmetry):
        n += 1
        d, e_gt, e_ge = t.delta_eta(eps)
        if best_d is None or d > best_d:
            best_d, arg_d = d, (t.base, t.x, t.x_prime)
        if e_gt > best_e:
            best_e, arg_e = e_gt, (t.base, t.x, t.x_prime)
        best_ge = max(best_ge, e_ge)
    if best_d is None:
        raise ValueError("the domain has fewer than two points: no neighbouring pairs")
    return WorstReal(best_d, arg_d, best_e, arg_e, best_ge, n)


# ---------------------------------------------------------------------------------------------------------------
# The blanket pair
# ---------------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=4096)
def _blanket_arrays(L: int, N: int, qa: int, qb: int, x: int, xp: int,
                    dkey: object) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per B = k: integer weights (over b^(L N)) of the histograms of k omega-draws plus the special report,
    already multiplied by ``P(B = k) = C(N-1, k) gamma^k (1 - gamma)^(N-1-k)``."""
    W = _report_weights(L, qa, qb)
    m, G, bL = blanket_weights(L, Fraction(qa, qb), dkey)
    hs = _hist_space(1 << L, N)
    dist = np.ones(1, dtype=_dtype(qb, L, N))  # weights of k omega-draws: gamma^k omega^(x) b^(L k) = prod m
    out = []
    for k in range(N):
        c = math.comb(N - 1, k) * (bL - G) ** (N - 1 - k)
        out.append((hs.add(dist, k, W[x]) * c, hs.add(dist, k, W[xp]) * c))
        if k < N - 1:
            dist = hs.add(dist, k, m)
    return tuple(out)


def blanket_delta_enumeration(L: int, N: int, q: object, eps: object, x: int | Sequence[int],
                              x_prime: int | Sequence[int], domain: object) -> ExpAffine:
    """The blanket pair's delta by enumeration: sum over B = k and multisets S of size k + 1 of (P - e^eps Q)_+."""
    qa, qb = _q_parts(q)
    eps = _frac(eps)
    xm, xpm = _to_mask(x, L), _to_mask(x_prime, L)
    denom = qb ** (L * N)
    a = b = 0
    for P, Q in _blanket_arrays(L, N, qa, qb, xm, xpm, _domain_key(domain)):
        s = _signs(P, Q, eps) > 0
        a += int(P[s].sum())
        b += int(Q[s].sum())
    return ExpAffine(Fraction(a, denom), Fraction(b, denom), eps)


@lru_cache(maxsize=1024)
def _sb_law(L: int, N: int, qa: int, qb: int, x: int, xp: int, dkey: object):  # type: ignore[no-untyped-def]
    """omega, u = R(x)/omega, v = R(x')/omega, and the law of (U, V) = sum_{t <= B} (u, v)(Y_t), exactly."""
    W = _report_weights(L, qa, qb)
    m, G, bL = blanket_weights(L, Fraction(qa, qb), dkey)
    C = 1 << L
    omega = [Fraction(m[y], G) for y in range(C)]
    u = [Fraction(W[x][y], bL) / omega[y] for y in range(C)]
    v = [Fraction(W[xp][y], bL) / omega[y] for y in range(C)]
    gamma = Fraction(G, bL)
    step: dict[tuple[Fraction, Fraction], Fraction] = {}
    for y in range(C):
        step[(u[y], v[y])] = step.get((u[y], v[y]), Fraction(0)) + omega[y]
    level: dict[tuple[Fraction, Fraction], Fraction] = {(Fraction(0), Fraction(0)): Fraction(1)}
    law: dict[tuple[Fraction, Fraction], Fraction] = {}
    for k in range(N):
        pk = math.comb(N - 1, k) * gamma ** k * (1 - gamma) ** (N - 1 - k)
        for key, pr in level.items():
            law[key] = law.get(key, Fraction(0)) + pk * pr
        if k < N - 1:
            nxt: dict[tuple[Fraction, Fraction], Fraction] = {}
            for (U, V), pr in level.items():
                for (du, dv), w in step.items():
                    kk = (U + du, V + dv)
                    nxt[kk] = nxt.get(kk, Fraction(0)) + pr * w
            level = nxt
    return omega, u, v, law


def blanket_delta_identity(L: int, N: int, q: object, eps: object, x: int | Sequence[int],
                           x_prime: int | Sequence[int], domain: object) -> ExpAffine:
    """The blanket pair's delta as ``E_{Y ~ omega}[g(Y) P(S_B > -g(Y))]``, ``g = (R(x) - e^eps R(x')) / omega``,
    ``S_B = sum_{t <= B} g(Y_t)``. With g = u - e^eps v the event is ``(U + u) - e^eps (V + v) > 0``."""
    qa, qb = _q_parts(q)
    eps = _frac(eps)
    omega, u, v, law = _sb_law(L, N, qa, qb, _to_mask(x, L), _to_mask(x_prime, L), _domain_key(domain))
    a = b = Fraction(0)
    for y in range(len(omega)):
        pa = Fraction(0)
        for (U, V), pr in law.items():
            if sign_a_minus_exp_b(U + u[y], V + v[y], eps) > 0:
                pa += pr
        a += omega[y] * u[y] * pa
        b += omega[y] * v[y] * pa
    return ExpAffine(a, b, eps)


@dataclass(frozen=True)
class BlanketResult:
    enumeration: ExpAffine
    identity: ExpAffine
    gamma: Fraction

    @property
    def delta(self) -> ExpAffine:
        return self.enumeration


def blanket_delta(L: int, N: int, q: object, eps: object, x: int | Sequence[int], x_prime: int | Sequence[int],
                  domain: object) -> BlanketResult:
    """The blanket pair's delta, exactly, both by enumeration and by the ``E_omega[g P(S_B > -g)]`` identity.

    (The two are returned separately so that a caller can check ``enumeration == identity``.)

    >>> r = blanket_delta(2, 3, Fraction(1, 4), 1, 0, 3, "all")
    >>> r.enumeration == r.identity, r.gamma
    (True, Fraction(1, 4))
    """
    m, G, bL = blanket_weights(L, q, domain)
    return BlanketResult(blanket_delta_enumeration(L, N, q, eps, x, x_prime, domain),
                         blanket_delta_identity(L, N, q, eps, x, x_prime, domain), Fraction(G, bL))


# ---------------------------------------------------------------------------------------------------------------
# eta from delta
# ---------------------------------------------------------------------------------------------------------------

def _to_mpf(v: object) -> mpmath.mpf:
    if isinstance(v, ExpAffine):
        return v.mpf(mpmath.mp.dps)
    if isinstance(v, Fraction):
        return mpmath.mpf(v.numerator) / v.denominator
    return mpmath.mpf(v)


def eta_from_delta_bound(delta_fn: Callable[[Fraction], object], eps: object, grid: Iterable[object], *,
                         dps: int = 50, return_argmin: bool = False):  # type: ignore[no-untyped-def]
    """``min_{e' in grid, e' < eps} delta_fn(e') / (1 - e^(e' - eps))`` as an mpmath number (``dps`` digits).

    Valid for the real eta when ``delta_fn >= delta_real``, because for e' < eps
    ``delta(e') = E[(1 - e^(e' - Lambda))_+] >= (1 - e^(e' - eps)) P[Lambda > eps]`` (also with >=).

    >>> float(eta_from_delta_bound(lambda e: Fraction(1, 10), 1, [Fraction(1, 2), 0, 2]))  # 0.1 / (1 - e^-1)
    0.15819767068693263
    """
    eps = _frac(eps)
    best, arg = None, None
    with mpmath.workdps(dps):
        e_m = mpmath.mpf(eps.numerator) / eps.denominator
        for ep in grid:
            ep = _frac(ep)
            if ep >= eps:
                continue
            val = _to_mpf(delta_fn(ep)) / (1 - mpmath.exp(mpmath.mpf(ep.numerator) / ep.denominator - e_m))
            if best is None or val < best:
                best, arg = val, ep
    if best is None:
        raise ValueError("no grid point below eps")
    return (best, arg) if return_argmin else best
