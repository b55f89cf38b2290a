"""The paper's own formulas that are *not* guarantees, kept only to reproduce its numbers.

Nothing here may be used to claim privacy:

* :func:`paper_eq_6_3_q` — seed 001 eq. (6.3)/(8.38) for k-randomization. ERRATA 4: the derivation miscounts the
  matchings (k! ways, not one) and adds variances of overlapping terms as if independent, so (6.1)–(6.3) are not
  bounds and the conclusion that k reports need no more noise than one is false.
* :func:`paper_maurer_heuristic` — seed 001 eq. (3.17). ERRATA 3: Maurer's inequality bounds the *lower* tail of
  a sum of non-negative variables; the privacy risk lives in the upper tail, so this certifies nothing about eta.
  :func:`paper_maurer_middle_line` is the middle line of the same display (it keeps the phi^(2L) term).
* :func:`paper_eq_6_3_limit_q` — where the (6.3) curve levels off as k grows (seed 001 §6.1).
"""

from __future__ import annotations

import math

from .._validation import check_int, check_positive_finite
from ..ratio.homogeneous import log_phi
from ._calibrate import phi_from_q, q_from_phi
from .search import smallest_q_satisfying

__all__ = ["paper_eq_6_3_lhs", "paper_eq_6_3_limit_q", "paper_eq_6_3_q", "paper_maurer_heuristic",
           "paper_maurer_middle_line"]


def paper_eq_6_3_lhs(q: float, *, bits: int, population: int, reports: int, beta: float = 3.0) -> float:
    """Left side of seed 001 eq. (6.3): ``(1 + phi^L/(kN))^k + beta*sqrt((phi^L/(kN) + psi^L/(kN)^2)^k
    - (1/(kN) + phi^(2L)/(kN)^2)^k)`` with ``psi = phi^2 + phi - 1``. NOT a bound (ERRATA 4)."""
    phi = math.exp(log_phi(q))
    psi = phi * phi + phi - 1.0
    kn = float(reports) * population
    mean = (1.0 + phi**bits / kn) ** reports
    var = (phi**bits / kn + psi**bits / kn**2) ** reports - (1.0 / kn + phi ** (2 * bits) / kn**2) ** reports
    return mean + beta * math.sqrt(max(var, 0.0))


def paper_eq_6_3_q(*, bits: int, population: int, epsilon: float, reports: int, beta: float = 3.0) -> float:
    """Flip probability from seed 001 eq. (6.3) — the paper's k-randomization formula, NOT a guarantee.

    Kept only to reproduce §6.1 and to show it missing its own target (ERRATA 4).
    """
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=2)
    reports = check_int("reports", reports, minimum=1)
    lam = math.exp(check_positive_finite("epsilon", epsilon))

    def excess(q: float) -> float:
        try:
            return paper_eq_6_3_lhs(q, bits=bits, population=population, reports=reports, beta=beta) - lam
        except OverflowError:
            return math.inf

    return smallest_q_satisfying(excess, what="seed 001 eq. (6.3)")


def paper_maurer_heuristic(q: float, *, bits: int, population: int, beta: float = 3.0) -> float:
    """Seed 001 eq. (3.17), last line: ``exp(-beta^2/2 * [1 - ((N-1) + phi^L)/((N-1) phi^L + psi^L)])``.

    NOT a bound on eta = P[R > lambda] (ERRATA 3: it bounds the lower tail, and drops the phi^(2L) term).
    """
    phi = math.exp(log_phi(q))
    psi = phi * phi + phi - 1.0
    n1 = population - 1
    frac = (n1 + phi**bits) / (n1 * phi**bits + psi**bits)
    return math.exp(-beta * beta / 2.0 * (1.0 - frac))


def paper_maurer_middle_line(q: float, *, bits: int, population: int, beta: float = 3.0) -> float:
    """Seed 001 eq. (3.17), middle line: ``exp(-beta^2 sigma^2 / (2 [(N-1) phi^L + psi^L]))`` with the exact
    ``sigma^2 = (N-1)(phi^L - 1) + psi^L - phi^(2L)`` (the last line drops the ``phi^(2L)`` term), in floats through
    ``log phi``. One of the candidates ``docs/reproduction.md`` tries for §3.4's "bound" column.

    NOT a bound on eta = P[R > lambda] (ERRATA 3: Maurer's inequality bounds the lower tail).

    References:
        ``papers/001_3d8ddaba8b46cf9c.txt`` (seed 001) eq. (3.17); ``papers/ERRATA.md`` item 3.

    Examples:
        >>> round(paper_maurer_middle_line(0.1692, bits=5, population=1000), 4)
        0.0459
    """
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=2)
    lphi = math.log(phi_from_q(q))
    phi_l = math.exp(bits * lphi)
    psi_l = math.exp(bits * math.log(math.exp(2 * lphi) + math.exp(lphi) - 1.0))
    var = (population - 1) * (phi_l - 1.0) + psi_l - phi_l * phi_l
    den = (population - 1) * phi_l + psi_l
    return math.exp(-beta * beta * var / (2.0 * den))


def paper_eq_6_3_limit_q(*, bits: int, population: int, epsilon: float) -> float:
    """The level of seed 001's (6.3) curve as k -> infinity: the variance term vanishes and
    ``(1 + phi^L/(kN))^k -> exp(phi^L / N)``, so ``q(k)`` tends to the q with ``phi^L = N epsilon``
    (the paper's "asymptotic leveling at low bound", §6.1). Reproduces the paper only (ERRATA 4).

    References:
        ``papers/001_3d8ddaba8b46cf9c.txt`` (seed 001) eq. (6.3), §6.1; ``papers/ERRATA.md`` item 4.

    Examples:
        >>> round(paper_eq_6_3_limit_q(bits=40, population=10_000_000, epsilon=2.0), 4)
        0.3301
    """
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    return q_from_phi((population * epsilon) ** (1.0 / bits))
