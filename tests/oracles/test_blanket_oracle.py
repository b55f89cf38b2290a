"""The privacy-blanket dominating pair, checked exactly on small cells by the independent oracle in blanket.py.

(a) the blanket pair's delta by enumeration equals the ``E_omega[g P(S_B > -g)]`` identity (exactly);
(b) ``delta_real(D', x, x'; e) <= delta_blanket(x, x'; e)`` for every D' (multiset of N - 1 domain points) and
    every ordered pair x != x' (no symmetry reduction here), and per triple ``eta_real <= min_{e'} delta_blanket(e')
    / (1 - e^(e' - e))``;
(c) the worst real eta over all triples is at most ``eta_from_delta_bound`` of the worst blanket delta.

All comparisons are exact (rational pairs a - e^eps b with rigorous sign decisions); none has a tolerance.
"""

from __future__ import annotations

from fractions import Fraction as F
from functools import cache

import mpmath
import pytest

from .blanket import (
    ExpAffine,
    blanket_delta,
    blanket_delta_enumeration,
    blanket_weights,
    domain_points,
    eta_from_delta_bound,
    iter_real_pairs,
    real_pair_delta_eta,
    worst_real,
)

QS = (F(1, 10), F(1, 4), F(2, 5))
EPSS = (F(1, 2), F(1), F(2))
DOMAINS = ("all", "onehot", ("weight", 1))
NS = (1, 2, 3, 4, 5)


def grid(eps: F) -> list[F]:
    return [eps * j / 32 for j in range(32)]


def _dname(domain: object) -> str:
    return domain if isinstance(domain, str) else f"weight<={domain[1]}"


# cells (L, domain, N) with at least two domain points; the heaviest ones are marked slow
_SLOW = {(3, "all", 4), (3, "all", 5), (4, "all", 2)}
_CELLS = [(L, d, N) for L in (1, 2, 3) for d in DOMAINS for N in NS if len(domain_points(L, d)) >= 2]
_CELLS += [(4, d, N) for d in ("onehot", ("weight", 1)) for N in (2, 3, 4)] + [(4, "all", 2)]
_CELLS += [(3, ("weight", 2), N) for N in (2, 3)]
CELLS = [pytest.param(L, d, N, id=f"L{L}-{_dname(d)}-N{N}", marks=[pytest.mark.slow] if (L, d, N) in _SLOW else [])
         for (L, d, N) in _CELLS]


@cache
def blanket_enum(L: int, N: int, q: F, eps: F, x: int, xp: int, domain: object) -> ExpAffine:
    return blanket_delta_enumeration(L, N, q, eps, x, xp, domain)


@cache
def blanket_eta_bound(L: int, N: int, q: F, eps: F, x: int, xp: int, domain: object) -> mpmath.mpf:
    return eta_from_delta_bound(lambda e: blanket_enum(L, N, q, e, x, xp, domain), eps, grid(eps))


def _pairs(L: int, domain: object) -> list[tuple[int, int]]:
    pts = domain_points(L, domain)
    return [(u, v) for u in pts for v in pts if u != v]


@cache
def real_results(L: int, domain: object, N: int, q: F) -> tuple:
    """Every triple (D', x, x') with its exact (delta, eta_gt, eta_ge) at each eps in EPSS."""
    return tuple((t.base, t.x, t.x_prime, {e: t.delta_eta(e) for e in EPSS})
                 for t in iter_real_pairs(L, N, q, domain, symmetry=False))


def _fmt(L: int, domain: object, N: int, q: F, eps: F, base: tuple, x: int, xp: int) -> str:
    bits = lambda v: "".join(str((v >> i) & 1) for i in range(L))  # noqa: E731  (coordinate 0 first)
    return (f"L={L} domain={_dname(domain)} N={N} q={q} eps={eps} D'={[bits(v) for v in base]} "
            f"x={bits(x)} x'={bits(xp)}")


# ---------------------------------------------------------------------------------------------------------------
# the oracle's own consistency
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("L,N", [(1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (3, 2)])
def test_tuple_enumeration_matches_incremental_grouping(L: int, N: int) -> None:
    """Brute force over all 2^(L N) ordered report tuples == the person-by-person grouping, every triple."""
    for q in (F(1, 4), F(2, 5)):
        for t in iter_real_pairs(L, N, q, "all", symmetry=False):
            for e in EPSS:
                a = real_pair_delta_eta(L, t.base, t.x, t.x_prime, q, e, method="tuples")
                b = real_pair_delta_eta(L, t.base, t.x, t.x_prime, q, e, method="convolution")
                assert (a.delta.a, a.delta.b, a.eta, a.eta_ge) == (b.delta.a, b.delta.b, b.eta, b.eta_ge)
                assert a.eta == a.eta_ge  # no ties at eps != 0


def test_real_pair_small_hand_case() -> None:
    """N = 2, L = 1, D' = {0}, x = 0, x' = 1, q = 1/4: histograms (#0, #1) = (2,0), (1,1), (0,2) with
    P = (9/16, 6/16, 1/16) and Q = (3/16, 10/16, 3/16); at eps = 1 only (2,0) has P > e Q."""
    r = real_pair_delta_eta(1, [0], 0, 1, F(1, 4), 1)
    assert (r.delta.a, r.delta.b, r.eta) == (F(9, 16), F(3, 16), F(9, 16))


def test_closed_form_blanket_masses() -> None:
    for q in QS:
        p = 1 - q
        for L in (1, 2, 3, 4):
            m, G, bL = blanket_weights(L, q, "all")
            assert F(G, bL) == (2 * q) ** L
            # weight <= 1: worst of {0, e_i} for a report of weight w is at distance w + 1 (w < L), else L
            m, G, bL = blanket_weights(L, q, ("weight", 1))
            assert [F(v, bL) for v in m] == [p ** (L - y.bit_count() - 1) * q ** (y.bit_count() + 1)
                                            if y.bit_count() < L else q ** L for y in range(1 << L)]
            if L >= 2:  # one-hot: distance w + 1 if some bit of y is 0, else L - 1
                m, G, bL = blanket_weights(L, q, "onehot")
                assert [F(v, bL) for v in m] == [p ** (L - y.bit_count() - 1) * q ** (y.bit_count() + 1)
                                                if y.bit_count() < L else p * q ** (L - 1) for y in range(1 << L)]


@pytest.mark.slow
@pytest.mark.parametrize("L,domain,N", [(L, d, N) for L in (2, 3) for d in DOMAINS for N in (2, 3, 4)])
def test_symmetry_reduction_of_worst_real(L: int, domain: object, N: int) -> None:
    for q in (F(1, 10), F(2, 5)):
        for e in EPSS:
            full = worst_real(L, N, q, e, domain, symmetry=False)
            red = worst_real(L, N, q, e, domain, symmetry=True)
            assert full.delta == red.delta and full.eta == red.eta and full.eta_ge == red.eta_ge
            assert red.triples <= full.triples


# ---------------------------------------------------------------------------------------------------------------
# (a) the identity, (b) domination for every real triple, (c) the eta bound at the worst triple
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("L,domain,N", CELLS)
def test_a_blanket_identity_is_exact(L: int, domain: object, N: int) -> None:
    for q in QS:
        for x, xp in _pairs(L, domain):
            for e in EPSS:
                r = blanket_delta(L, N, q, e, x, xp, domain)
                # e^eps is transcendental, so equal values means equal rational pairs
                assert (r.enumeration.a, r.enumeration.b) == (r.identity.a, r.identity.b), _fmt(
                    L, domain, N, q, e, (), x, xp)
                assert 0 <= r.enumeration.sign() and r.enumeration <= 1


@pytest.mark.slow
@pytest.mark.parametrize("L,domain,N", CELLS)
def test_b_every_real_pair_is_dominated(L: int, domain: object, N: int) -> None:
    bad = []
    for q in QS:
        for base, x, xp, by_eps in real_results(L, domain, N, q):
            for e, (d_real, eta, eta_ge) in by_eps.items():
                d_bl = blanket_enum(L, N, q, e, x, xp, domain)
                if not d_real <= d_bl:
                    bad.append(f"delta: {_fmt(L, domain, N, q, e, base, x, xp)}: real {d_real!r} > blanket {d_bl!r}")
                bound = blanket_eta_bound(L, N, q, e, x, xp, domain)
                with mpmath.workdps(50):
                    if not mpmath.mpf(eta_ge.numerator) / eta_ge.denominator <= bound:
                        bad.append(f"eta: {_fmt(L, domain, N, q, e, base, x, xp)}: eta {eta} > bound {bound}")
                if N == 1:  # no one else: the blanket pair is the real pair
                    assert d_real == d_bl
    assert not bad, f"{len(bad)} violations, first: " + "\n".join(bad[:10])


@pytest.mark.slow
@pytest.mark.parametrize("L,domain,N", CELLS)
def test_c_worst_real_eta_below_delta_bound(L: int, domain: object, N: int) -> None:
    pairs = _pairs(L, domain)
    for q in QS:
        res = real_results(L, domain, N, q)
        for e in EPSS:
            worst_eta = max(r[3][e][1] for r in res)
            worst_eta_ge = max(r[3][e][2] for r in res)
            assert worst_eta == worst_eta_ge

            def worst_blanket(ep: F) -> ExpAffine:
                return max((blanket_enum(L, N, q, ep, x, xp, domain) for x, xp in pairs))

            bound = eta_from_delta_bound(worst_blanket, e, grid(e))
            with mpmath.workdps(50):
                assert mpmath.mpf(worst_eta.numerator) / worst_eta.denominator <= bound, (
                    f"L={L} domain={_dname(domain)} N={N} q={q} eps={e}: worst eta {worst_eta} > bound {bound}")
            # the worst real delta is also below the worst blanket delta (implied by (b); cheap to restate)
            worst_d = max(r[3][e][0] for r in res)
            assert worst_d <= worst_blanket(e)


def test_the_checks_have_teeth() -> None:
    """A blanket built from too small a domain (one-hot) does not dominate real pairs drawn from the whole cube:
    the comparison used in (b) must find that (here D' = {00, 00}, x = 11, x' = 00, q = 1/10, eps = 1)."""
    L, N, q, e = 2, 3, F(1, 10), F(1)
    assert any(t.delta_eta(e)[0] > blanket_delta_enumeration(L, N, q, e, t.x, t.x_prime, "onehot")
               for t in iter_real_pairs(L, N, q, "all"))
    d_real = real_pair_delta_eta(L, [0, 0], 3, 0, q, e).delta
    assert d_real > blanket_delta_enumeration(L, N, q, e, 3, 0, "onehot")
    assert d_real <= blanket_delta_enumeration(L, N, q, e, 3, 0, "all")
