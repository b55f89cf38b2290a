"""Choosing the flip probability q (seed 001 §3.2, §4, §5).

Methods:

* ``"local"`` — local DP: every pair of reports has ratio at most ``(p/q)**(k L_eff)``, so
  ``q = 1 / (1 + lambda**(1/(k L_eff)))`` (seed 001 eq. 4.2, composed over k reports). This is a *proof*:
  local DP implies the anonymized ratio never exceeds lambda (eta = 0).
* ``"paper-sigma"`` — the paper's heuristic with the exact moments (eq. 3.12): the smallest q with
  ``E R + beta * sd(R) <= lambda``. It is **not** a bound on eta = P[R > lambda] (ERRATA 3); the paper reports
  eta of a few 1e-3 at beta = 3 for L = 5.
* ``"paper-simplified"`` — the same with the simpler, more conservative eq. (3.13)/(3.15), solved for phi and
  mapped to q by eq. (3.16).

``max_weight=w`` applies the cardinality reduction of seed 001 §5: reports with at most w set bits are treated as
``L_eff = min(L, 2w)`` bits. For the sufficient-DP methods this rests on an **unproven** remark of the paper
(ERRATA 6); results say so. For local DP it is exact (two such reports differ in at most 2w bits).

For ``reports=k > 1`` the paper's own formula (6.3) is wrong (ERRATA 4). Here the sufficient-DP methods use the
rigorous reduction of ERRATA 4 — Maclaurin's inequality ``R(S^k) <= (mean of the kN per-report ratios)**k`` — and
apply the heuristic to that mean with threshold ``lambda**(1/k)`` (kN reports, k of them from the outlier). The
reduction is a proof; the mean + beta * sd step is still the heuristic. The paper's (6.3) is available only as
:func:`sufficientdp.calibration.paper.paper_eq_6_3_q`, for reproducing the paper.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from .._errors import ParameterError
from .._numerics.logspace import log_add_exp, log_expm1
from .._numerics.search import Bracket, Creep, scan, search, verdict
from .._validation import (
    MAX_BITS,
    MAX_POPULATION,
    check_epsilon,
    check_int,
    check_nonnegative_finite,
    check_open_interval,
    check_reports,
)
from ..parameters import effective_bits, local_q, sigma_per_sqrt_n
from ..ratio.homogeneous import log_phi, ratio_moments
from ..ratio.proven import Domain
from .methods import _RENAMED, DEFAULT_ETA, DEFAULT_METHOD, METHODS, SCOPE
from .proven import proven_q
from .result import Calibration
from .search import smallest_q_satisfying

__all__ = [
    "DEFAULT_ETA",
    "DEFAULT_METHOD",
    "METHODS",
    "SCOPE",
    "Calibration",
    "calibrate",
    "effective_bits",
    "local_q",
    "phi_from_q",
    "q_from_phi",
    "sigma_per_sqrt_n",
]

_GUARANTEE = {
    "proven": ("rigorous upper bound: P[R > e^epsilon] <= eta for every pair of neighbouring collections of the "
               "domain, both directions (privacy-blanket dominating pair, docs/proofs/blanket.md; exact scan of "
               "every crowd at L = 1)"),
    "homogeneous": ("rigorous upper bound for the homogeneous configuration only (N - 1 identical vectors and one "
                    "neighbour), both directions, worst outlier weight j; NOT the worst case over all "
                    "collections (docs/worst_case.md), so other collections can exceed eta"),
    "mc": ("estimate: Monte Carlo upper confidence limit of P[R > e^epsilon] <= eta for the homogeneous "
           "configuration only (worst outlier weight j, both directions); not a bound"),
    "exact": ("exact: P[R > e^epsilon] <= eta computed exactly for the homogeneous configuration, both "
              "directions, worst outlier weight j (small cases only); other collections can exceed it"),
    "local": "proof: local DP, every single report's ratio is at most e^epsilon, so eta = 0 for every collection",
    "paper-sigma": "heuristic: E[R] + beta*sd(R) <= e^epsilon with exact moments (seed 001 eq. 3.12); not a bound on eta",
    "paper-simplified": "heuristic: seed 001 eq. (3.13)/(3.15), more conservative than (3.12); not a bound on eta",
}


def phi_from_q(q: float) -> float:
    """``phi = (p**3 + q**3) / (p q)`` (seed 001 eq. 3.14)."""
    return math.exp(log_phi(q))


def q_from_phi(phi: float) -> float:
    """Inverse of :func:`phi_from_q` on (0, 1/2): ``q = 1 / (1 + t)``, ``t = ((phi+1) + sqrt((phi+1)**2 - 4)) / 2``.

    Seed 001 eq. (3.16). Written as ``q = 1/(1+t)`` with the larger root ``t = p/q > 1``.

    Examples:
        >>> round(q_from_phi(phi_from_q(0.3)), 12)
        0.3
    """
    if not phi > 1.0:
        raise ParameterError(f"phi must be in (1, inf); got {phi!r}")
    s = phi + 1.0
    t = 0.5 * (s + math.sqrt((s - 2.0) * (s + 2.0)))
    return 1.0 / (1.0 + t)


def _excess_sigma(q: float, *, bits: int, n: float, n_out: int, log_threshold_minus_1: float,
                  beta: float, simplified: bool) -> float:
    """log(E R - 1 + beta sd) - log(threshold - 1): <= 0 iff the heuristic condition holds."""
    m = ratio_moments(q=q, bits=bits, n=n, n_outlier=n_out, simplified=simplified)
    log_lhs = log_add_exp(m.log_excess_mean, math.log(beta) + 0.5 * m.log_var) if beta > 0 else m.log_excess_mean
    return log_lhs - log_threshold_minus_1


def calibrate(
    *,
    bits: int,
    population: int,
    epsilon: float,
    beta: float = 3.0,
    max_weight: int | None = None,
    reports: int = 1,
    method: str = DEFAULT_METHOD,
    onehot: bool = False,
    eta: float | None = None,
    rng: Any = None,
    samples: int | None = None,
    progress: Any = None,
    rounds: int = 1,
    larger_crowds: bool = False,
) -> Calibration:
    """Smallest flip probability q meeting the privacy criterion of ``method``.

    The sufficient-DP criterion (seed 001 eq. 1.7) is ``P[R(S) > e**epsilon] <= eta``; the paper calibrates it
    with ``E R + beta * sd(R) <= e**epsilon`` (eq. 3.12), which is a heuristic, not a bound on eta.

    Args:
        bits: L in [1, 4096], bits per report.
        population: N in [1, 10**12], people in the anonymized crowd. The ``"proven"`` bound at L >= 2 also holds for
            every larger crowd (it falls with N); at L = 1 (one report) it is the exact value for crowds of exactly
            N people, which is not monotone in N: see ``larger_crowds``.
        epsilon: privacy level > 0 (``lambda = e**epsilon``).
        beta: multiple of the standard deviation (>= 0, default 3 as in the paper). Ignored by ``"local"``.
        max_weight: w, if every report has at most w set bits (cardinality reduction, seed 001 §5).
        reports: k >= 1 reports per person.
        method: ``"proven"`` (default: rigorous bound over every pair of collections of the domain),
            ``"homogeneous"`` (rigorous for the paper's configuration only), ``"exact"`` (homogeneous, small
            cases), ``"mc"`` (Monte Carlo estimate, homogeneous), ``"local"``, or the paper's heuristics
            ``"paper-sigma"`` / ``"paper-simplified"``.
        onehot: people hold one-hot vectors (exactly one bit set; ``"proven"`` uses that domain).
        eta: target cut-off in (0, 1) for the tail-based methods (default 1e-3).
        rng, samples: Monte Carlo settings for ``"mc"`` (a seeded ``numpy.random.Generator`` for reproducibility).
        progress: optional callback ``progress(done, total)`` for long searches.
        rounds: T >= 1 rounds released separately; ``epsilon`` and ``eta`` are then totals over the T rounds and q
            is per round (``"proven"``: :func:`sufficientdp.calibration.rounds.rounds_q`; ``"local"``: local DP
            composed T k times; docs/proofs/rounds.md).
        larger_crowds: ``"proven"`` only: q must also meet the target for every crowd of more than N people
            (N is then the smallest crowd a release will ever cover; what the collector uses). Changes only
            L = 1 with one report (:func:`sufficientdp.ratio.proven.single_bit_larger_crowds`).

    Returns:
        A :class:`Calibration`.

    Raises:
        ParameterError: a parameter out of range (message names it, its value and the range).
        CalibrationError: no q < 1/2 meets the criterion (cannot happen for these methods with N >= 2).

    References:
        seed 001 eq. (3.12), (3.13), (3.15), (3.16), (4.2), §5; ERRATA 3, 4, 6, 7.

    Examples:
        >>> round(calibrate(bits=5, population=3000, epsilon=math.log(2), method="paper-sigma").q, 4)
        0.2109
    """
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)
    population = check_int("population", population, minimum=1, maximum=MAX_POPULATION)
    epsilon = check_epsilon(epsilon)
    reports = check_reports(reports)
    beta = check_nonnegative_finite("beta", beta)
    if max_weight is not None:  # (checked first: the domain below would compare a Decimal or an array with L)
        max_weight = check_int("max_weight", max_weight, minimum=1, maximum=bits)
    if not isinstance(larger_crowds, bool):
        raise ParameterError(f"larger_crowds must be True or False; got {larger_crowds!r}")
    if larger_crowds and method != "proven":
        raise ParameterError(f"larger_crowds=True applies only to method='proven'; got method={method!r}")
    if check_int("rounds", rounds, minimum=1) > 1:
        from .rounds import calibrate_rounds

        return calibrate_rounds(bits=bits, population=population, epsilon=epsilon, rounds=rounds,
                                max_weight=max_weight, reports=reports, method=method, onehot=onehot, eta=eta,
                                progress=progress)
    if method in _RENAMED:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}; got {method!r}: {_RENAMED[method]}")
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if onehot and max_weight is not None:
        raise ParameterError("onehot and max_weight are exclusive (one-hot vectors have exactly one set bit)")
    if onehot and bits < 2:
        raise ParameterError(f"bits must be >= 2 for one-hot vectors; got {bits}")
    dom = Domain(bits=bits, kind="onehot") if onehot else Domain.from_max_weight(bits, max_weight)
    domain_name = dom.kind
    l_eff = 2 if onehot else effective_bits(bits, max_weight)
    lam = math.exp(epsilon)
    q_local = local_q(l_eff, epsilon, reports)
    notes: list[str] = []
    if onehot and method not in ("proven", "local"):
        notes.append("one-hot vectors: this method uses L_eff = 2 (the paper's cardinality reduction, unproven for "
                     "sufficient DP, ERRATA 6).")
    if max_weight is not None and l_eff < bits and method != "proven":
        if method == "local":
            notes.append(f"reports have at most {max_weight} set bits, so neighbours differ in at most "
                         f"{l_eff} bits; local DP uses L_eff = {l_eff} (exact).")
        else:
            notes.append(f"cardinality reduction L_eff = min(L, 2w) = {l_eff} (seed 001 §5) is an unproven "
                         "remark of the paper (ERRATA 6).")

    ratio_mean: float | None = None
    ratio_sd: float | None = None
    eta_target: float | None = None
    eta_at_q: float | None = None
    used_beta: float | None = None
    if method == "proven":
        eta_target = check_open_interval("eta", DEFAULT_ETA if eta is None else eta, 0.0, 1.0)
        q, tail, tail_notes = proven_q(bits=bits, population=population, epsilon=epsilon, eta=eta_target,
                                       reports=reports, domain=dom, progress=progress, larger_crowds=larger_crowds)
        if tail.details.get("crowds") == "exactly N people":
            notes.append("L = 1: eta at q is exact for crowds of exactly N people; it is not monotone in N (a "
                         "larger crowd can have a larger eta). If releases may cover more people, calibrate with "
                         "larger_crowds=True (--larger-crowds).")
        eta_at_q = tail.eta
        notes.extend(tail_notes)
        notes.extend(str(n) for n in tail.details.get("notes", []))
        if reports > 1:
            notes.append(f"k = {reports}: the k reports are bounded by the k-fold composition of a discrete pair "
                         "that dominates each blanket pair (docs/proofs/blanket.md, step 6).")
        if q < 0.5:
            m = ratio_moments(q=q, bits=l_eff, n=float(population) * reports, n_outlier=reports)
            ratio_mean, ratio_sd = m.mean, m.sd
    elif method in ("homogeneous", "mc", "exact"):
        eta_target = check_open_interval("eta", DEFAULT_ETA if eta is None else eta, 0.0, 1.0)
        # imported on use: the homogeneous machinery pulls in scipy.stats (~0.5 s of start-up) that the default
        # method never needs
        from .homogeneous import calibrate_tail

        q, eta_at_q, tail_notes = calibrate_tail(method="certified" if method == "homogeneous" else method,
                                                 bits=l_eff, population=population, epsilon=epsilon,
                                                 eta=eta_target, reports=reports, rng=rng, samples=samples,
                                                 progress=progress)
        notes.extend(tail_notes)
        used_beta = None
        if q < 0.5:
            m = ratio_moments(q=q, bits=l_eff, n=float(population) * reports, n_outlier=reports)
            ratio_mean, ratio_sd = m.mean, m.sd
    elif method == "local":
        q = q_local
    else:
        used_beta = beta
        simplified = method == "paper-simplified"
        n = float(population) * reports
        n_out = reports
        log_thr_m1 = log_expm1(epsilon / reports)  # log(lambda^(1/k) - 1)
        if population * reports <= reports:
            # A crowd of one: the anonymized output is the person's own reports; only local DP applies.
            q = q_local
            notes.append("population 1: no crowd to hide in; local DP flip probability used.")
        elif simplified and reports == 1:
            q = _solve_phi_simplified(bits=l_eff, n=n, log_thr_m1=log_thr_m1, beta=beta)
        else:
            q = smallest_q_satisfying(
                lambda x: _excess_sigma(x, bits=l_eff, n=n, n_out=n_out, log_threshold_minus_1=log_thr_m1,
                                        beta=beta, simplified=simplified),
                what=f"the {method} condition",
            )
        # Never return more noise than local DP needs: local DP already implies R <= lambda always.
        if q > q_local:
            q = q_local
            notes.append("the heuristic asked for more noise than local DP; local DP's q is used (it implies "
                         "R <= e^epsilon with certainty).")
        m = ratio_moments(q=q, bits=l_eff, n=n, n_outlier=n_out, simplified=False)
        ratio_mean, ratio_sd = m.mean, m.sd
        if reports > 1:
            notes.append(f"k = {reports} reports: Maclaurin's inequality R(S^k) <= (mean w)^k (ERRATA 4) reduces "
                         f"the target to mean w <= e^(epsilon/k); the heuristic is applied to that mean.")
        notes.append("mean + beta*sd is the paper's heuristic, not a bound on eta = P[R > e^epsilon] "
                     "(ERRATA 3); the outlier configuration is the paper's unproven worst case (ERRATA 5).")
    sig = sigma_per_sqrt_n(q, reports)
    sig_local = sigma_per_sqrt_n(q_local, reports)
    return Calibration(
        q=q,
        method=method,
        guarantee=_GUARANTEE[method],
        scope=SCOPE[method],
        domain=domain_name,
        bits=bits,
        effective_bits=l_eff,
        max_weight=max_weight,
        population=population,
        reports=reports,
        epsilon=epsilon,
        lam=lam,
        beta=used_beta,
        sigma_per_sqrt_n=sig,
        local_q=q_local,
        local_sigma_per_sqrt_n=sig_local,
        gain_vs_local=sig_local / sig,
        ratio_mean=ratio_mean,
        ratio_sd=ratio_sd,
        eta_target=eta_target,
        eta_at_q=eta_at_q,
        notes=tuple(notes),
        larger_crowds=larger_crowds,
    )


def _simplified_lhs_log(lphi_l: float, log_var1: float, n: float, beta: float) -> float:
    """log(phi^L/N + beta*sqrt(phi^L/N + (psi^L - phi^2L)/N^2)) for eq. (3.15)."""
    log_n = math.log(n)
    log_a = lphi_l - log_n
    log_b = log_add_exp(lphi_l - log_n, log_var1 - 2 * log_n)
    return log_add_exp(log_a, math.log(beta) + 0.5 * log_b) if beta > 0 else log_a


def _solve_phi_simplified(*, bits: int, n: float, log_thr_m1: float, beta: float) -> float:
    """Solve eq. (3.15) for phi, then map to q with eq. (3.16), keeping the condition satisfied at q."""
    from scipy.optimize import brentq

    def excess_logphi(x: float) -> float:  # x = log(phi) > 0
        phi_m1 = math.expm1(x)
        log_var1 = 2 * bits * x + log_expm1(bits * math.log1p(phi_m1 / math.exp(2 * x)))
        return _simplified_lhs_log(bits * x, log_var1, n, beta) - log_thr_m1

    lo = 1e-300
    # the first of 1, 2, 4, ... where the excess is not negative (the excess grows with log phi: there is one)
    _, top = scan(lambda y: not excess_logphi(y) < 0.0, (2.0**i for i in itertools.count()), until=True)
    hi = 1.0 if top is None else top
    if excess_logphi(lo) > 0.0:
        lo_q = 0.5 - 1e-12
        return lo_q
    x = brentq(excess_logphi, lo, hi, xtol=1e-300, rtol=4.5 * 2.220446049250313e-16, maxiter=500)
    # phi decreasing in q: brentq's q first, then nudge phi down (q up) until the condition holds at the returned q
    # (64 probes; q -> 1/2, phi -> 1 passes: the excess at log phi = 1e-300 was checked above)
    q = q_from_phi(math.exp(x))
    found = search(verdict(lambda y: excess_logphi(log_phi(y)) <= 0.0), Bracket(fail=0.0, ok=0.5),
                   Creep(rel=2.2e-16, first=q), max_probes=64)
    return found.ok
