"""How much noise each privacy approach needs for the same release, and what each one promises.

For L bits, N people, k reports per person and a target epsilon (plus delta for approximate DP and eta for
sufficient DP) :func:`compare_approaches` computes the flip probability q each approach needs and the resulting
standard deviation of an unbiased per-bit count, ``sd(d_hat) = sqrt(N q p / k) / (p - q)`` (exact; seed 001 §4,
:mod:`sufficientdp.estimation.bits`). Rows:

* ``local-dp`` — pure epsilon-LDP over all L bits and k reports: ``q = 1/(1 + e^(epsilon/(kL)))`` (seed 001 eq.
  4.2, composed). A proof for every collection (kind ``"exact"``).
* ``shuffle-efmrtt19``, ``shuffle-bbgn19``, ``shuffle-fmt21`` — amplification by shuffling
  (:mod:`sufficientdp.accounting.amplification`): the largest per-person ``epsilon0`` whose shuffled release of N
  people is ``(epsilon, delta)``-DP, mapped to q by ``epsilon0 = k L log(p/q)``. Composition: each person's k reports
  of L bits are treated as *one* local message (pure-DP composition inside the local randomizer, exact for
  bit-vector RR). Shuffling the kN reports separately is a post-processing of shuffling the N bundles (flatten each
  bundle), so the bound also holds for unbundled reports. Kind ``"bound"``; where a theorem's conditions fail the
  row falls back to ``epsilon0 = epsilon`` (no amplification) and says so.
* ``shuffled-rr-exact`` — L = 1, k = 1 only: the smallest q whose shuffled binary RR has exact
  ``max_m delta(epsilon) <= delta`` over every neighbouring pair of counts (m, m+1), both directions. For L > 1 it is
  not applicable: the bits of one report are linked, so the L-bit release is not L independent single-bit releases
  and no per-bit reduction is valid.
* ``approximate-dp-proven`` — the smallest q whose release is ``(epsilon, delta)``-DP for every pair of
  neighbouring collections by the privacy-blanket bound on delta computed for this mechanism
  (:func:`sufficientdp.calibration.approximate.proven_delta_q`; docs/proofs/blanket.md): the same statement as the
  amplification rows, for every L, from an analysis of the actual bit-vector randomizer. Kind ``"bound"``; k = 1
  only (k > 1: ``n/a``, with the reason: its search is slow there).
* ``sufficient-dp-paper`` — the paper's calibration, method ``paper-sigma`` (``E R + beta sd R <= e^epsilon``,
  seed 001 eq. 3.12). A heuristic, not a bound on eta (ERRATA 3).
* ``sufficient-dp-proven`` — method ``proven``: a rigorous bound ``P[R > e^epsilon] <= eta`` for every pair of
  neighbouring collections (docs/proofs/blanket.md; exact at L = 1). The product's default.
* ``sufficient-dp-homogeneous`` — method ``homogeneous``: a rigorous bound for the paper's homogeneous
  configuration only, which is not the worst case (docs/worst_case.md): shown to price what the proof costs.

The guarantees differ in kind — (epsilon, 0) for every pair of collections, (epsilon, delta) for every pair, a tail
bound for every pair or for one configuration — and each row's ``scope`` and ``guarantee`` say which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .._frozen import data_frame
from .._numerics.search import Bracket, Midpoint, search
from .._progress import Phases
from .._validation import (
    check_int,
    check_nonnegative_finite,
    check_open_interval,
    check_positive_finite,
    check_reports,
    renamed_params,
)
from ..accounting.amplification import BOUNDS, flip_probability_for_epsilon0, max_epsilon0
from ..ratio.single_bit import worst_over_crowds
from ._calibrate import DEFAULT_ETA, SCOPE, calibrate, local_q, sigma_per_sqrt_n

__all__ = ["APPROACHES", "Comparison", "ComparisonRow", "compare_approaches", "shuffled_rr_exact_q",
           "shuffled_rr_worst_delta"]

APPROACHES = ("local-dp", "shuffle-efmrtt19", "shuffle-bbgn19", "shuffle-fmt21", "shuffled-rr-exact",
              "approximate-dp-proven", "sufficient-dp-paper", "sufficient-dp-homogeneous", "sufficient-dp-proven")

_ALLOWANCE = 1e-11

@dataclass(frozen=True, slots=True, kw_only=True)
class ComparisonRow:
    """One approach: the flip probability it needs and the resulting error.

    Attributes:
        approach: one of :data:`APPROACHES`.
        q: flip probability (None when not applicable / not computed).
        sd: ``sd(d_hat)`` of a per-bit count at q (None with q).
        sd_per_sqrt_n: ``sd / sqrt(N)``.
        kind: ``"exact"``, ``"bound"``, ``"heuristic"`` (the paper's mean + beta sd) or ``"n/a"``.
        scope: for which collections it holds: ``"all-collections"``, ``"homogeneous"`` or ``"per-report"``.
        guarantee: what the row promises, in words.
        epsilon0: per-person local epsilon implied by q over kL bits (``k L log(p/q)``), where q exists.
        notes: caveats.
        verified: False when the row rests on a published statement not yet checked against the paper's own
            text (the shuffle-amplification bounds; see :mod:`sufficientdp.accounting.amplification`).
    """

    approach: str
    q: float | None
    sd: float | None
    sd_per_sqrt_n: float | None
    kind: str
    guarantee: str
    scope: str = "all-collections"
    epsilon0: float | None = None
    notes: tuple[str, ...] = field(default=())
    verified: bool = True

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["notes"] = list(self.notes)
        return d


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """Result of :func:`compare_approaches`: the inputs and one :class:`ComparisonRow` per approach."""

    bits: int
    population: int
    reports: int
    epsilon: float
    delta: float
    eta: float
    beta: float
    rows: tuple[ComparisonRow, ...]

    @property
    def records(self) -> list[dict[str, Any]]:
        """The rows as a list of flat dicts (``pandas.DataFrame(comparison.records)``)."""
        out = []
        for r in self.rows:
            d = r.to_dict()
            d["notes"] = "; ".join(r.notes)
            out.append(d)
        return out

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` of :attr:`records`, one row per approach, indexed by ``approach``.

        Raises:
            ImportError: pandas is not installed (``pip install 'sufficientdp[pandas]'``).
        """
        records = self.records
        names = list(records[0]) if records else list(ComparisonRow.__dataclass_fields__)
        return data_frame({name: [r[name] for r in records] for name in names}, index="approach")

    def row(self, approach: str) -> ComparisonRow:
        """The row of ``approach``."""
        for r in self.rows:
            if r.approach == approach:
                return r
        raise KeyError(approach)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the inputs and ``rows``."""
        return {"bits": self.bits, "population": self.population, "reports": self.reports,
                "epsilon": self.epsilon, "delta": self.delta, "eta": self.eta, "beta": self.beta,
                "rows": [r.to_dict() for r in self.rows]}


# ------------------------------------------------------------------------------------------ exact shuffled RR
@renamed_params({"n": "population"})
def shuffled_rr_worst_delta(population: int, q: float, epsilon: float) -> tuple[float, int]:
    """Worst ``delta(epsilon)`` of shuffled binary RR over all neighbouring counts (m, m+1), both directions.

    The one scan over m, :func:`sufficientdp.ratio.single_bit.worst_over_crowds` (every pair, both directions,
    O(n) overall), read for a calibration loop as an upper bound: the exact worst delta plus the allowance
    ``1e-11 (1 + e^eps)`` this function has always added (so calibrated q values do not move), and never below
    the upper end of the scan's rounding bracket (``delta_upper``). Targets delta below ~1e-10 are therefore not
    meaningful here.

    Returns:
        ``(delta_upper, worst_m)``: ``worst_m`` is the representative m of the worst pair (the add pair at m is the
        remove pair at ``n - 1 - m``; ties keep the smallest m), 0 when every delta is 0.
    """
    n = population  # the paper's n (people)
    n = check_int("population", n, minimum=1)
    q = check_open_interval("q", q, 0.0, 0.5)
    epsilon = check_positive_finite("epsilon", epsilon)
    worst = worst_over_crowds(n, q, epsilon)
    upper = max(worst.delta + _ALLOWANCE * (1.0 + math.exp(epsilon)), worst.delta_upper)
    return min(1.0, upper), max(worst.worst_m_delta, 0)


@renamed_params({"n": "population"})
def shuffled_rr_exact_q(population: int, epsilon: float, delta: float, *, rel_tol: float = 1e-6) -> tuple[float, int]:
    """Smallest q (to ``rel_tol``, rounded up) at which shuffled binary RR of n people is ``(epsilon, delta)``-DP.

    ``delta(epsilon)`` is non-increasing in q: RR with ``q' > q`` is RR with q followed by an independent flip of
    each report (``q' = q (1 - r) + p r``), a post-processing that commutes with shuffling. So a bisection on q is
    valid; the returned q is the feasible end of the bracket.

    Returns:
        ``(q, argmax_m)`` of the worst neighbouring pair at q.
    """
    n = population  # the paper's n (people)
    n = check_int("population", n, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    rel_tol = check_nonnegative_finite("rel_tol", rel_tol)
    lo = local_q(1, epsilon)  # local DP: delta = 0 <= target; feasible (the hi end)
    hi_feasible = lo
    low_end = 1e-12
    d, m = shuffled_rr_worst_delta(n, low_end, epsilon)
    if d <= delta:
        return low_end, m
    arg = [0]  # the worst pair at the feasible end

    def test(q: float) -> tuple[bool, float]:
        d, m = shuffled_rr_worst_delta(n, q, epsilon)
        if d <= delta:
            arg[0] = m
        return d <= delta, math.nan

    # low_end infeasible, hi_feasible feasible; 200 halvings of a width <= 1/2 end below the floats near 1e-12
    end = search(test, Bracket(fail=low_end, ok=hi_feasible), Midpoint(), max_probes=200, rtol=rel_tol)
    return end.ok, arg[0]


# ------------------------------------------------------------------------------------------ the comparison
def _row(approach: str, q: float | None, *, population: int, reports: int, bits: int, kind: str, guarantee: str,
         notes: list[str], verified: bool = True, scope: str = "all-collections") -> ComparisonRow:
    if q is None:
        return ComparisonRow(approach=approach, q=None, sd=None, sd_per_sqrt_n=None, kind=kind,
                             guarantee=guarantee, scope=scope, notes=tuple(notes), verified=verified)
    s = sigma_per_sqrt_n(q, reports)
    e0 = bits * reports * (math.log1p(-q) - math.log(q))
    return ComparisonRow(approach=approach, q=q, sd=s * math.sqrt(population), sd_per_sqrt_n=s, kind=kind,
                         guarantee=guarantee, scope=scope, epsilon0=e0, notes=tuple(notes), verified=verified)


def compare_approaches(
    *,
    bits: int,
    population: int,
    epsilon: float,
    delta: float,
    eta: float = DEFAULT_ETA,
    reports: int = 1,
    beta: float = 3.0,
    sufficient: bool = True,
    exact_max_population: int = 400,
    progress: Any = None,
) -> Comparison:
    """Flip probability and per-bit count error of each approach for the same (L, N, k, epsilon, delta, eta).

    Args:
        bits: L >= 1.
        population: N >= 1 (the crowd a release covers; also n of the shuffle bounds).
        epsilon: target epsilon > 0 (sufficient DP: lambda = e^epsilon).
        delta: target delta in (0, 1) for the approximate-DP rows (shuffling bounds, exact shuffled RR).
        eta: target ``P[R > e^epsilon]`` in (0, 1) for the sufficient-DP rows (default 1e-3).
        reports: k >= 1 reports per person.
        beta: the paper's multiple of sd (``paper-sigma``), >= 0.
        sufficient: compute the rows of the product's own bounds: the sufficient-DP rows ``proven`` and
            ``homogeneous`` and ``approximate-dp-proven`` (slow for large L).
        exact_max_population: compute the exact shuffled-RR row only for N up to this.
        progress: optional ``progress(done, total)`` callback for the sufficient-DP searches.

    Returns:
        A :class:`Comparison`.

    Raises:
        ParameterError: a parameter out of range (names it, its value and the range).

    References:
        seed 001 eq. (3.12), (4.2), §4; ERRATA 3, 4; docs/comparison.md; the amplification papers cited in
        :mod:`sufficientdp.accounting.amplification`.

    Examples:
        >>> c = compare_approaches(bits=1, population=100, epsilon=1.0, delta=1e-3, sufficient=False)
        >>> c.row("local-dp").q > c.row("shuffled-rr-exact").q
        True
    """
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    eta = check_open_interval("eta", eta, 0.0, 1.0)
    reports = check_reports(reports)
    beta = check_nonnegative_finite("beta", beta)
    exact_max_population = check_int("exact_max_population", exact_max_population, minimum=1)
    kw: dict[str, Any] = {"population": population, "reports": reports, "bits": bits}
    rows: list[ComparisonRow] = []

    q_loc = local_q(bits, epsilon, reports)
    rows.append(_row("local-dp", q_loc, kind="exact", scope="per-report",
                     guarantee=f"proof: pure epsilon-LDP for each person's {reports} report(s) of {bits} bit(s); "
                               "every pair of collections (eta = 0, delta = 0)",
                     notes=["seed 001 eq. (4.2) with k-fold composition"], **kw))

    comp_note = (f"epsilon0 over all {bits} bit(s) x {reports} report(s) of a person as one local message "
                 "(pure-DP composition inside the randomizer: epsilon0 = k L log(p/q)); unbundled shuffling is a "
                 "post-processing of bundled shuffling")
    for b in BOUNDS:
        r = max_epsilon0(b, epsilon=epsilon, delta=delta, population=population)
        q = flip_probability_for_epsilon0(r.usable_epsilon0, bits, reports)
        q = min(q, q_loc) if not r.amplified else q
        notes = [comp_note, *r.notes]
        rows.append(_row(f"shuffle-{b}", q, kind="bound",
                         guarantee=f"(epsilon, delta)-DP for every pair of neighbouring collections (replacement of "
                                   f"one person), shuffled, by the {b} amplification bound"
                                   + ("" if r.amplified else "; here no amplification: equals local DP")
                                   + ("" if r.verified else " (unverified statement: not checked against the "
                                                            "paper's text)"),
                         notes=notes, verified=r.verified, **kw))

    exact_g = "exact: (epsilon, delta)-DP of shuffled binary RR, worst over all neighbouring counts, both directions"
    if bits != 1 or reports != 1:
        rows.append(_row("shuffled-rr-exact", None, kind="n/a", guarantee=exact_g,
                         notes=["not applicable: the exact analysis is for one bit per person (L = 1, k = 1); the "
                                "bits of an L-bit report are linked, so no per-bit reduction is valid"], **kw))
    elif population > exact_max_population:
        rows.append(_row("shuffled-rr-exact", None, kind="n/a", guarantee=exact_g,
                         notes=[f"not computed: N = {population} > exact_max_population = {exact_max_population} "
                                "(one scan over every m per bisection step)"], **kw))
    else:
        q_ex, m_ex = shuffled_rr_exact_q(population, epsilon, delta)
        rows.append(_row("shuffled-rr-exact", q_ex, kind="exact", guarantee=exact_g,
                         notes=[f"worst neighbouring pair at q: counts ({m_ex}, {m_ex + 1}); q found by bisection to "
                                "relative 1e-6, rounded up"], **kw))

    phases = Phases(progress, 3)  # one bar for the three searches
    approx_g = ("(epsilon, delta)-DP of the anonymized release for every pair of neighbouring collections (one "
                "person's vector replaced), both directions, every crowd of at least N people: the privacy-blanket "
                "bound on delta computed for bit-vector randomized response (docs/proofs/blanket.md)")
    if sufficient and reports == 1:
        from .approximate import proven_delta_q

        q_ap, d_ap = proven_delta_q(bits=bits, population=population, epsilon=epsilon, delta=delta,
                                    reports=reports, progress=phases.of(0))
        phases.end(0)
        rows.append(_row("approximate-dp-proven", q_ap, kind="bound", guarantee=approx_g,
                         notes=[f"delta = {delta:g}; delta bound at q = {d_ap:.6g}", "the smallest q found whose "
                                "bound meets delta (within 0.014% of the search's bracket)"], **kw))
    else:
        why = ("skipped (sufficient=False)" if not sufficient else
               "not computed here for k > 1: every probe of the search composes the k reports' curves of every pair "
               "type, and the bound's jitter near the root costs probes (40 s at L = 40, k = 2); "
               "sufficientdp.calibration.approximate.proven_delta_q(reports=k) computes it")
        rows.append(_row("approximate-dp-proven", None, kind="n/a", guarantee=approx_g, notes=[why], **kw))
    cal = calibrate(bits=bits, population=population, epsilon=epsilon, beta=beta, reports=reports,
                    method="paper-sigma")
    rows.append(_row("sufficient-dp-paper", cal.q, kind=cal.kind, guarantee=cal.guarantee, scope=cal.scope,
                     notes=list(cal.notes), **kw))
    for phase, method in enumerate(("homogeneous", "proven"), start=1):
        if sufficient:
            cal = calibrate(bits=bits, population=population, epsilon=epsilon, reports=reports, method=method,
                            eta=eta, progress=phases.of(phase))
            phases.end(phase)
            rows.append(_row(f"sufficient-dp-{method}", cal.q, kind=cal.kind, guarantee=cal.guarantee,
                             scope=cal.scope, notes=[f"eta = {eta:g}; eta_at_q = {cal.eta_at_q}", *cal.notes],
                             **kw))
        else:
            rows.append(_row(f"sufficient-dp-{method}", None, kind="n/a", scope=SCOPE[method],
                             guarantee=f"sufficient-DP tail bound, method {method} (not computed)",
                             notes=["skipped (sufficient=False)"], **kw))
    return Comparison(bits=bits, population=population, reports=reports, epsilon=epsilon, delta=delta, eta=eta,
                      beta=beta, rows=tuple(rows))
