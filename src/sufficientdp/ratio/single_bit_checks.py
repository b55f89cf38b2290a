"""Numerical checks of seed 000's single-bit (L = 1) claims on a grid (§3.1.2, §3.1.3, §3.1.4, §3.1.5, Prop. 3.2,
§4 claim 4.1), for ``docs/single_bit.md``.

Seed 000 is ``papers/000_2c4289e004756bf1.txt`` (the single-bit theory; ``papers/ERRATA.md`` item 8: several of these are marked
TODO there). Notation (§3.1): ``A_n(m) = Bin(m, p) + Bin(n - m, q)``; ``rho_n(s; m) = P_{n,m}(s) / P_{n,m}(s - 1)``;
the privacy ratio is ``pi(s; m) = P[A_n(m) = s] / P[A_n(m + 1) = s]``. Every pmf comes from the exact log-domain
convolution of :mod:`sufficientdp.ratio.single_bit`; an inequality counts as violated only beyond a relative
tolerance of :data:`TOL` on the log scale (a violation must exceed rounding), and :func:`exact_recheck` repeats the
monotonicity claims for small n in exact rational arithmetic (``fractions.Fraction``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .single_bit import log_cdf, log_pmf, log_privacy_ratio

__all__ = ["ALPHAS", "CLAIMS", "NS", "QS", "TOL", "check_claims", "exact_recheck"]

#: relative tolerance on the log scale below which a violation counts as rounding
TOL = 1e-9
#: the grid: population sizes n, flip probabilities q and quantile levels alpha
NS = (1, 2, 3, 5, 8, 13, 21, 34, 60, 100)
QS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.45, 0.49)
ALPHAS = (1e-6, 1e-3, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1 - 1e-6)

_RHO_S = "rho decreasing in s (3.1.2)"
_RHO_M = "rho increasing in m (3.1.2, §4 claim 4.1)"
_PI_S = "pi decreasing in s (3.1.4)"
_PI_M = "pi increasing in m (3.1.4)"
_PI_DIAG = "pi(s;m) >= pi(s+1;m+1) (3.1.4)"
_STEP = "quantile step tau(m) - tau(m-1) in {0,1} (3.1.5)"
_IFF = "quantile iff-condition (3.1.5)"
_PROP = "Prop. 3.2: R_m(d) <= R_0(d+1) for d > sigma"
_CDF = "cdf sandwich F(m,x) <= F(m-1,x) <= F(m,x+1) (3.1.3)"
#: the claims checked, in the order of the document's table
CLAIMS = (_RHO_S, _RHO_M, _PI_S, _PI_M, _PI_DIAG, _STEP, _IFF, _PROP, _CDF)


class _Tally:
    """Checks per claim, and the first five counterexamples (further ones are counted as ``None``)."""

    def __init__(self) -> None:
        self.res: dict[str, list[Any]] = {k: [0, []] for k in CLAIMS}

    def record(self, name: str, ok: bool, case: tuple[Any, ...]) -> None:
        self.res[name][0] += 1
        if not ok and len(self.res[name][1]) < 5:
            self.res[name][1].append(case)
        elif not ok:
            self.res[name][1].append(None)


def _check_rho(t: _Tally, n: int, q: float, lrho: NDArray[np.float64], tol: float) -> None:
    for m in range(n + 1):
        d = np.diff(lrho[m])
        for i, v in enumerate(d):
            t.record(_RHO_S, bool(v <= tol * (1 + abs(lrho[m, i]))), (n, m, i + 1, q))
    for m in range(n):
        d = lrho[m + 1] - lrho[m]
        for i, v in enumerate(d):
            t.record(_RHO_M, bool(v >= -tol * (1 + abs(lrho[m, i]))), (n, m, i + 1, q))


def _check_pi(t: _Tally, n: int, q: float, tol: float) -> None:
    lpi = np.array([log_privacy_ratio(np.arange(n + 1), population=n, m=m, q=q) for m in range(n)])  # [m, s]
    for m in range(n):
        for s in range(n):
            t.record(_PI_S, bool(lpi[m, s + 1] <= lpi[m, s] + tol * (1 + abs(lpi[m, s]))), (n, m, s, q))
    for m in range(n - 1):
        for s in range(n + 1):
            t.record(_PI_M, bool(lpi[m + 1, s] >= lpi[m, s] - tol * (1 + abs(lpi[m, s]))), (n, m, s, q))
        for s in range(n):
            t.record(_PI_DIAG, bool(lpi[m + 1, s + 1] <= lpi[m, s] + tol * (1 + abs(lpi[m, s]))), (n, m, s, q))


def _check_cdf(t: _Tally, n: int, q: float, f: NDArray[np.float64], alphas: Sequence[float], tol: float) -> None:
    p = 1 - q
    for m in range(1, n + 1):
        for x in range(n):
            ok = f[m, x] <= f[m - 1, x] * (1 + tol) and f[m - 1, x] <= f[m, x + 1] * (1 + tol)
            t.record(_CDF, bool(ok), (n, m, x, q))
    for alpha in alphas:
        tau = [int(np.argmax(f[m] >= alpha)) for m in range(n + 1)]
        for m in range(1, n + 1):
            step = tau[m] - tau[m - 1]
            t.record(_STEP, step in (0, 1), (n, m, alpha, q))
            if n >= 2:
                t0 = tau[m - 1]
                prev = math.exp(float(log_pmf(t0, population=n - 1, m=m - 1, q=q))) if t0 <= n - 1 else 0.0
                cond = f[m - 1, t0] - alpha >= (p - q) * prev
                # skip cases within rounding of the boundary
                if abs((f[m - 1, t0] - alpha) - (p - q) * prev) > 1e-12:
                    t.record(_IFF, bool(cond == (step == 0)), (n, m, alpha, q))


def _check_prop_3_2(t: _Tally, n: int, q: float, lrho: NDArray[np.float64], tol: float) -> None:
    # Prop 3.2 (its proof is unfinished): s_m(d) = floor(mu_m - d) v 0, R_m(d) = rho(s_m(d); m)
    p = 1 - q
    sigma = math.sqrt(n * p * q)
    for dd in np.linspace(sigma + 1e-9, sigma + 4, 9):
        s0 = max(math.floor(n * q - (dd + 1)), 0)
        if s0 < 1:
            continue
        r0 = lrho[0, s0 - 1]
        for m in range(n + 1):
            sm = max(math.floor(n * q + m * (p - q) - dd), 0)
            if sm < 1:
                continue
            rm = lrho[m, sm - 1]
            t.record(_PROP, bool(rm <= r0 + tol * (1 + abs(r0))), (n, m, round(float(dd), 3), q))


def check_claims(*, ns: Sequence[int] = NS, qs: Sequence[float] = QS, alphas: Sequence[float] = ALPHAS,
                 tol: float = TOL) -> dict[str, list[Any]]:
    """Check every claim of :data:`CLAIMS` at every n, q (every m and s; every alpha for the quantile claims).

    Returns:
        ``{claim: [checks, counterexamples]}``: the number of inequalities checked and the violations (the first
        five as ``(n, m, s or x or alpha or d, q)`` tuples, the rest as ``None``), in the order of :data:`CLAIMS`.

    References:
        seed 000 §3.1.2-§3.1.5, Prop. 3.2, §4 (4.1); ``papers/ERRATA.md`` item 8.
    """
    t = _Tally()
    for n in ns:
        for q in qs:
            lp = np.array([log_pmf(np.arange(n + 1), population=n, m=m, q=q) for m in range(n + 1)])  # log P_{n,m}(s)
            lrho = lp[:, 1:] - lp[:, :-1]  # log rho_n(s; m), s = 1..n
            _check_rho(t, n, q, lrho, tol)
            if n >= 1:
                _check_pi(t, n, q, tol)
            f = np.exp(np.array([log_cdf(np.arange(n + 1), population=n, m=m, q=q) for m in range(n + 1)]))
            _check_cdf(t, n, q, f, alphas, tol)
            _check_prop_3_2(t, n, q, lrho, tol)
    return t.res


def _pmf_exact(n: int, m: int, q: Fraction) -> list[Fraction]:
    """``P[A_n(m) = s]``, s = 0..n, as exact rationals (the convolution of the two binomials)."""
    p = 1 - q
    a = [Fraction(math.comb(m, j)) * p**j * q ** (m - j) for j in range(m + 1)]
    b = [Fraction(math.comb(n - m, j)) * q**j * p ** (n - m - j) for j in range(n - m + 1)]
    out = [Fraction(0)] * (n + 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def exact_recheck(*, n_max: int = 9,
                  qs: Sequence[Fraction] = (Fraction(1, 20), Fraction(1, 5), Fraction(1, 3), Fraction(9, 20))
                  ) -> tuple[int, int]:
    """Exact rational re-check, for every n <= ``n_max``, q in ``qs`` and every m, s, of rho decreasing in s and of
    pi decreasing in s, increasing in m, and ``pi(s; m) >= pi(s + 1; m + 1)``.

    Returns:
        ``(inequalities checked, violated)``.
    """
    checks = fails = 0
    for n in range(1, n_max + 1):
        for q in qs:
            tab = [_pmf_exact(n, m, q) for m in range(n + 1)]
            for m in range(n + 1):
                rho = [tab[m][s] / tab[m][s - 1] for s in range(1, n + 1)]
                for s in range(len(rho) - 1):
                    checks += 1
                    fails += rho[s + 1] > rho[s]
                if m < n:
                    pi = [tab[m][s] / tab[m + 1][s] for s in range(n + 1)]
                    for s in range(n):
                        checks += 1
                        fails += pi[s + 1] > pi[s]
                    if m + 1 < n:
                        pi2 = [tab[m + 1][s] / tab[m + 2][s] for s in range(n + 1)]
                        for s in range(n):
                            checks += 2
                            fails += pi2[s] < pi[s]
                            fails += pi2[s + 1] > pi[s]
    return checks, fails
