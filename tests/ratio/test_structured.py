"""Structured pairs at any N (sufficientdp.ratio.structured): the exact bracket and the worst-case search.

Independent truth, none of it sharing code with the module under test:

* brute force over *ordered* outputs in exact rationals (no sufficiency, no eq. 2.2) at tiny N, L = 2 and 3;
* the exhaustive histogram enumeration of :mod:`sufficientdp.ratio.exact` (a dynamic programme over people on the
  full 2**L-cell histograms) for every pair at L = 2, N = 4 and L = 3, N = 3, and for the ERRATA 5 pair at N = 100;
* the exact single-bit theory (:func:`sufficientdp.ratio.single_bit.single_bit_tail`, log-concave cutoff) at
  L = 1 up to N = 1e5, and its all-crowd scan (:func:`worst_over_crowds`);
* the homogeneous enumeration over set-bit counts (:func:`homogeneous_ratio_distribution`, eq. 3.4-3.6);
* seeded Monte Carlo at N = 500-1000 with R(S) computed on full cell histograms by a separate formula.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from sufficientdp import ParameterError
from sufficientdp.ratio.exact import _distribution_from_codes, homogeneous_ratio_distribution
from sufficientdp.ratio.single_bit import single_bit_tail, worst_over_crowds
from sufficientdp.ratio.structured import (
    StructuredPair,
    StructuredSearchResult,
    TooLarge,
    _log_q_pair,
    _model,
    _ratio_bounds,
    candidate_pairs,
    combined_claims,
    homogeneous_pair,
    structured_search,
    structured_tail,
)
from sufficientdp.ratio.worst_case import neighbouring_pairs


def _inside(t, truth: float, rel: float = 1e-9, abs_: float = 1e-13) -> bool:
    return t.eta_lower * (1 - rel) - abs_ <= truth <= t.eta_upper * (1 + rel) + abs_


# ---------------------------------------------------------------------------------------------------- brute force


def _brute_atoms(pair: StructuredPair, q: Fraction) -> dict[float, float]:
    """{log R: P_{A(D_m)}[log R = that value]} by summing prod_i p(r_i | d_i) over every ordered tuple of reports,
    in exact rationals (R = inf is keyed as inf)."""
    bits, cells = pair.bits, 1 << pair.bits
    base = [c for c, n in pair.common for _ in range(n)]
    d, dm = [*base, pair.original_vector], [*base, pair.modified_vector]
    p = 1 - q

    def kernel(y: int, r: int) -> Fraction:
        k = bin(y ^ r).count("1")
        return q**k * p ** (bits - k)

    pd: dict[tuple[int, ...], Fraction] = defaultdict(Fraction)
    pdm: dict[tuple[int, ...], Fraction] = defaultdict(Fraction)
    for reports in itertools.product(range(cells), repeat=len(d)):
        hist = tuple(np.bincount(reports, minlength=cells).tolist())
        a = b = Fraction(1)
        for y, ym, r in zip(d, dm, reports):
            a *= kernel(y, r)
            b *= kernel(ym, r)
        pd[hist] += a
        pdm[hist] += b
    atoms: dict[float, Fraction] = defaultdict(Fraction)
    for h, v in pdm.items():
        if v > 0:
            atoms[math.inf if pd[h] == 0 else math.log(v / pd[h])] += v
    return {k: float(v) for k, v in atoms.items()}


def _brute_eta(pair: StructuredPair, q: Fraction, epsilon: float) -> float:
    return sum(v for k, v in _brute_atoms(pair, q).items() if k > epsilon)


BRUTE = [
    (StructuredPair.build(2, {0: 2, 1: 1}, 3, 0), Fraction(1, 10), 1.3),
    (StructuredPair.build(2, {0: 1, 1: 1, 3: 1}, 3, 0), Fraction(1, 10), 2.2),
    (StructuredPair.build(2, {0: 3}, 1, 2), Fraction(1, 5), 0.7),
    (StructuredPair.build(3, {0: 1, 1: 1}, 7, 0), Fraction(1, 10), 1.9),
    (StructuredPair.build(3, {0: 1, 6: 1}, 1, 7), Fraction(1, 4), 0.45),
    (StructuredPair.build(3, {5: 2}, 0, 3), Fraction(1, 5), 1.1),
]


@pytest.mark.parametrize("pair, q, eps", BRUTE, ids=[p.label for p, _, _ in BRUTE])
def test_tail_matches_brute_force_over_ordered_outputs(pair, q, eps):
    truth = _brute_eta(pair, q, eps)
    t = structured_tail(pair, float(q), eps)
    assert _inside(t, truth), (truth, t.eta_lower, t.eta_upper)
    assert t.eta_upper - t.eta_lower <= 1e-12
    # the other direction is a different pair with a different eta
    assert _inside(structured_tail(pair.swapped(), float(q), eps), _brute_eta(pair.swapped(), q, eps))


@pytest.mark.parametrize("pair, q, eps", BRUTE[:4], ids=[p.label for p, _, _ in BRUTE[:4]])
def test_tail_is_strict_at_the_atoms(pair, q, eps):
    """Just above an atom of log R its histograms are not counted, just below they are (eta uses "> e**eps")."""
    atoms = _brute_atoms(pair, q)
    finite = sorted(k for k in atoms if math.isfinite(k))
    for a in finite[:: max(1, len(finite) // 6)]:
        for e in (a - 1e-3, a + 1e-3):
            truth = sum(v for k, v in atoms.items() if k > e)
            assert _inside(structured_tail(pair, float(q), e), truth), (a, e)


@pytest.mark.slow
@pytest.mark.parametrize("bits, n, q", [(2, 4, 0.13), (3, 3, 0.21)])
def test_tail_matches_exhaustive_enumeration_for_every_pair(bits, n, q):
    """Every pair up to symmetry, both directions, three thresholds (away from the atoms (p/q)**k)."""
    lmax = bits * math.log((1 - q) / q)
    eps_list = [-0.31 * lmax, 0.37 * lmax, 0.71 * lmax]
    checked = 0
    for pr in neighbouring_pairs(bits, n):
        counts = np.bincount(np.asarray(pr.common, dtype=np.int64), minlength=1 << bits)
        for x, xp in ((pr.original_vector, pr.modified_vector), (pr.modified_vector, pr.original_vector)):
            sp = StructuredPair.build(bits, {c: int(k) for c, k in enumerate(counts)}, x, xp)
            dist = _distribution_from_codes(np.asarray(pr.common, dtype=np.int64), x, xp, bits, q)
            for eps in eps_list:
                t = structured_tail(sp, q, eps)
                assert _inside(t, dist.eta(eps)), (sp.label, eps, dist.eta(eps), t.eta_lower, t.eta_upper)
                assert t.eta_upper - t.eta_lower <= 1e-9 * max(dist.eta(eps), 1e-4)
                checked += 1
    assert checked >= 60


def test_errata_pair_at_n100_pinned_to_the_exact_enumeration():
    """ERRATA 5: {00×97, 10×2} + 11→00 at q = 0.1, epsilon = 3 beats every homogeneous pair by 1.9x.

    Truth: 2.7402794151872928e-06 from exact._distribution_from_codes (all C(103, 3) = 176851 histograms, 2 s);
    the reverse homogeneous pair {00×99} + 11→00: 1.4407545770026147e-06 (homogeneous_ratio_distribution, j = 2,
    outlier_in="original"); the paper's direction: 2.400072807778321e-26.
    """
    t = structured_tail(StructuredPair.build(2, {0: 97, 1: 2}, 3, 0), 0.1, 3.0)
    assert _inside(t, 2.7402794151872928e-06)
    rev = structured_tail(homogeneous_pair(2, 100, 2, reverse=True), 0.1, 3.0)
    assert _inside(rev, 1.4407545770026147e-06)
    fwd = structured_tail(homogeneous_pair(2, 100, 2), 0.1, 3.0)
    assert _inside(fwd, 2.400072807778321e-26, rel=1e-6, abs_=0.0)
    assert t.eta_lower / rev.eta_upper == pytest.approx(1.902, abs=1e-3)


# ---------------------------------------------------------------------------------------------------- large N


@pytest.mark.parametrize("n", [1000, 100_000])
@pytest.mark.parametrize("q, eps", [(0.1, 0.3), (0.3, 1.0)])
def test_single_bit_matches_the_exact_theory(n, q, eps):
    """L = 1, {0×(n-1-m), 1×m}: the changed person 1→0 is single_bit_tail's "remove", 0→1 its "add"."""
    for m in (0, 3, 18):
        ref = single_bit_tail(population=n, m=m, q=q, epsilon=eps)
        for direction, (x, xp) in (("remove", (1, 0)), ("add", (0, 1))):
            truth = ref.details["per_direction"][direction]["eta"]
            t = structured_tail(StructuredPair.build(1, {0: n - 1 - m, 1: m}, x, xp), q, eps)
            assert _inside(t, truth, rel=1e-8, abs_=0.0), (m, direction, truth, t.eta_lower, t.eta_upper)
            assert t.eta_upper - t.eta_lower <= 3e-6 * truth or t.eta_upper < 1e-60


@pytest.mark.slow
@pytest.mark.parametrize("bits, n", [(2, 1000), (3, 120)])
def test_homogeneous_pairs_match_the_set_bit_enumeration(bits, n):
    q = 0.12
    for j in range(1, bits + 1):
        for reverse in (False, True):
            dist = homogeneous_ratio_distribution(q, bits, n, j, outlier_in="original" if reverse else "modified")
            for f in (0.23, 0.58):
                eps = f * j * math.log((1 - q) / q)
                t = structured_tail(homogeneous_pair(bits, n, j, reverse=reverse), q, eps)
                assert _inside(t, dist.eta(eps), rel=1e-7, abs_=0.0), (j, reverse, eps)
                assert t.eta_upper - t.eta_lower <= 3e-6 * dist.eta(eps) or t.eta_upper < 1e-60


def _cell_law(v: int, bits: int, q: float) -> np.ndarray:
    d = np.array([bin(c ^ v).count("1") for c in range(1 << bits)])
    return d * math.log(q) + (bits - d) * math.log1p(-q)


def _log_p(s: np.ndarray, n0: int, group: list[int], bits: int, q: float) -> np.ndarray:
    """log P(S | n0 zero vectors + group) on full cell histograms: sum over the group's cell histogram u."""
    cells = 1 << bits
    laws: dict[tuple[int, ...], float] = {(0,) * cells: 0.0}
    for v in group:
        lv, nxt = _cell_law(v, bits, q), {}
        for key, val in laws.items():
            for c in range(cells):
                k2 = list(key)
                k2[c] += 1
                t = tuple(k2)
                nxt[t] = float(np.logaddexp(nxt[t], val + lv[c])) if t in nxt else val + lv[c]
        laws = nxt
    u = np.array(list(laws), dtype=np.int64)
    lu = np.array(list(laws.values()))
    t = s[:, None, :] - u[None, :, :]
    ok = (t >= 0).all(axis=2)
    tc = np.maximum(t, 0)
    lm = gammaln(n0 + 1) - gammaln(tc + 1).sum(axis=2) + (tc * _cell_law(0, bits, q)).sum(axis=2)
    return logsumexp(np.where(ok, lm + lu[None, :], -np.inf), axis=1)


MC = [
    (StructuredPair.build(2, {0: 997, 1: 2}, 3, 0), 0.1, 0.3),
    (StructuredPair.build(2, {0: 996, 1: 2, 3: 1}, 3, 0), 0.1, 0.5),
    (StructuredPair.build(3, {0: 497, 1: 2}, 3, 0), 0.15, 0.6),
]


@pytest.mark.slow
@pytest.mark.parametrize("pair, q, eps", MC, ids=[p.label for p, _, _ in MC])
def test_tail_agrees_with_seeded_monte_carlo(pair, q, eps):
    """20,000 draws of S ~ A(D_m); |mc - eta| <= 5 standard errors (a correct eta fails w.p. < 6e-7 per case).

    Checked once with 200,000 draws (seed 7): z = -0.61, 0.28, 0.64.
    """
    rng = np.random.default_rng(20240917)
    bits, cells, draws = pair.bits, 1 << pair.bits, 20_000
    counts = dict(pair.common)
    n0 = counts.pop(0)
    group = [c for c, k in counts.items() for _ in range(k)]
    s = rng.multinomial(n0, np.exp(_cell_law(0, bits, q)), size=draws)
    for v in [*group, pair.modified_vector]:
        s[np.arange(draws), rng.choice(cells, size=draws, p=np.exp(_cell_law(v, bits, q)))] += 1
    log_r = _log_p(s, n0, [*group, pair.modified_vector], bits, q) - _log_p(s, n0, [*group, pair.original_vector],
                                                                           bits, q)
    mc = float(np.mean(log_r > eps))
    t = structured_tail(pair, q, eps)
    assert t.eta_upper - t.eta_lower < 1e-9
    assert abs(mc - t.eta) <= 5 * math.sqrt(t.eta * (1 - t.eta) / draws)


def test_ratio_formula_matches_the_polynomial_form():
    """Posterior-mean form of R used by the bounds (exact at a point) = ratio of the Q polynomials (docstring)."""
    pair = StructuredPair.build(3, {0: 40, 1: 2, 6: 1}, 7, 2)
    mdl = _model(pair, 0.17)
    rng = np.random.default_rng(3)
    s = rng.multinomial(pair.population, np.exp(mdl.log_pi0), size=25).astype(np.int64)
    lo, hi = _ratio_bounds(mdl, s, s)
    lq_d, lq_dm = _log_q_pair(mdl, [s[:, v] for v in range(mdl.K)])
    assert np.allclose(lo, lq_dm - lq_d, atol=1e-9) and np.allclose(hi, lq_dm - lq_d, atol=1e-9)
    # on a box the bounds enclose every histogram in it
    box_lo, box_hi = _ratio_bounds(mdl, np.maximum(s - 2, 0), s + 2)
    assert np.all(box_lo <= lo + 1e-12) and np.all(hi <= box_hi + 1e-12)


# ---------------------------------------------------------------------------------------------------- options


def test_floor_and_mass_tol_keep_the_bracket_rigorous():
    pair, q, eps, truth = StructuredPair.build(2, {0: 97, 1: 2}, 3, 0), 0.1, 3.0, 2.7402794151872928e-06
    loose = structured_tail(pair, q, eps, mass_tol=1e-3 * truth)
    assert _inside(loose, truth) and loose.eta_upper - loose.eta_lower <= 1.01e-3 * truth
    pruned = structured_tail(pair, q, eps, floor=1e-4)
    assert pruned.eta_upper <= 1e-4 and pruned.eta_lower <= truth <= pruned.eta_upper
    with pytest.raises(TooLarge):
        structured_tail(pair, q, eps, max_items=3)


def test_large_groups_raise_too_large_instead_of_exhausting_memory():
    with pytest.raises(TooLarge, match="too large"):
        structured_tail(StructuredPair.build(1, {0: 5000, 1: 5000}, 0, 1), 0.2, 0.1)


def test_invalid_inputs_name_parameter_value_and_range():
    pair = homogeneous_pair(2, 50, 2)
    cases = [
        (lambda: structured_tail(pair, 0.7, 1.0), "q must be in (0, 0.5); got 0.7"),
        (lambda: structured_tail(pair, 0.1, float("nan")), "epsilon must be a real number"),
        (lambda: structured_tail(pair, 0.1, 1.0, rel_tol=0), "rel_tol must be in (0, 1); got 0"),
        (lambda: structured_tail(pair, 0.1, 1.0, time_limit=1e6), "time_limit must be in (0, 3600] seconds"),
        (lambda: structured_tail("pair", 0.1, 1.0), "pair must be a StructuredPair"),  # type: ignore[arg-type]
        (lambda: structured_search(2, 100, 0.1, 1.0, time_budget=0), "time_budget must be finite and > 0"),
        (lambda: structured_search(2, 100, 0.1, 1.0, time_budget=3601), "time_budget must be in (0, 3600]"),
        (lambda: structured_search(2, 100, 0.1, 1.0, max_group=5), "max_group must be an integer >= 1 and <= 4"),
        (lambda: structured_search(2, 1, 0.1, 1.0), "population must be an integer >= 2"),
        (lambda: structured_search(0, 100, 0.1, 1.0), "bits must be an integer >= 1 and <= 30; got 0"),
        (lambda: structured_search(2, 100, 0.1, 1.0, mass_tol=0.5), "mass_tol must be in [0, 0.01]; got 0.5"),
        (lambda: structured_search(2, 100, 0.1, 1.0, extra_pairs=[pair]), "extra_pairs must have bits = 2 and "
                                                                           "population = 100"),
        (lambda: candidate_pairs(2, 100, max_copies=300), "max_copies must be an integer >= 0 and <= 256"),
        (lambda: StructuredPair.build(2, {0: 3}, 1, 1), "original_vector and modified_vector must differ"),
        (lambda: StructuredPair.build(2, {4: 3}, 1, 0), "vector code must be an integer >= 0 and <= 3; got 4"),
    ]
    for call, message in cases:
        with pytest.raises(ParameterError) as err:
            call()
        assert message in str(err.value), (message, str(err.value))
        assert isinstance(err.value, ValueError)


# ---------------------------------------------------------------------------------------------------- search


def test_candidate_pairs_families_and_deduplication():
    pairs = candidate_pairs(2, 100)
    fams = {p.family for p in pairs}
    assert fams == {"homogeneous", "copies of the outlier", "partial outliers", "small groups"}
    assert [p.label for p in pairs[:4]] == ["{00×99} + 00→10", "{00×99} + 10→00", "{00×99} + 00→11",
                                            "{00×99} + 11→00"]
    labels = [p.label for p in pairs]
    assert "{00×97, 10×2} + 11→00" in labels and "{00×98, 11×1} + 00→11" in labels
    assert len(set(labels)) == len(labels)
    # one pair per orbit of the bit permutations: 01 ↔ 10 swaps give the same pair
    assert "{00×97, 01×2} + 11→00" not in labels
    assert all(p.population == 100 and p.bits == 2 for p in pairs)
    assert len(candidate_pairs(5, 1000)) > 0  # larger L: block families only (no 'small groups')
    assert "small groups" not in {p.family for p in candidate_pairs(5, 1000)}


@pytest.mark.slow
def test_search_finds_the_errata_counterexample_and_is_honest():
    r = structured_search(2, 100, 0.1, 3.0, time_budget=120)
    assert r.pair.label == "{00×97, 10×2} + 11→00"
    assert _inside(r, 2.7402794151872928e-06)
    assert r.homogeneous_eta == pytest.approx(2.400072807778321e-26, rel=1e-6)
    assert r.reverse_homogeneous_eta == pytest.approx(1.4407545770026147e-06, rel=1e-8)
    assert not r.two_sided_holds and not r.conjecture_holds and r.ratio == pytest.approx(1.902, abs=1e-3)
    assert r.complete and r.pairs_skipped == 0 and not r.exhaustive
    assert r.kind == "lower bound" and r.scope == "all-collections" and "not every pair" in r.searched.lower()
    d = json.loads(json.dumps(r.to_dict()))
    assert d["two_sided_holds"] is False and d["pair"]["label"] == r.pair.label
    assert d["homogeneous_by_weight"][0]["weight"] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.eta = 0.0  # type: ignore[misc]
    assert isinstance(r, StructuredSearchResult) and isinstance(r.ranking, tuple) and isinstance(r.families, tuple)


def test_search_at_one_bit_is_the_exact_all_crowd_scan():
    """L = 1: every pair is structured; the search returns worst_over_crowds' pair, confirmed by the bracket."""
    n, q, eps = 1000, 0.018737648076089106, 1.0  # q: `sufficientdp calibrate --bits 1 --population 1000 --epsilon 1`
    r = structured_search(1, n, q, eps)
    ref = worst_over_crowds(n, q, eps)
    assert r.exhaustive and r.kind == "exact" and r.scope == "all-collections"
    assert r.eta == pytest.approx(ref.eta, rel=1e-9) and r.pair.label == "{0×987, 1×12} + 1→0"
    assert _inside(structured_tail(r.pair, q, eps), ref.eta, rel=1e-6, abs_=0.0)
    assert r.eta > r.reverse_homogeneous_eta and not r.two_sided_holds  # m = 12 beats m = 0 (ERRATA 5)


@pytest.mark.slow
def test_found_eta_is_below_the_proven_all_collections_bound():
    """A found (exact) eta above proven_tail would mean a bug in one of them; q from the default calibration."""
    from sufficientdp.ratio.proven import proven_tail

    q = 0.12673994661798166  # `sufficientdp calibrate --bits 2 --population 1000 --epsilon 1` (proven, eta 1e-3)
    r = structured_search(2, 1000, q, 1.0, time_budget=60)
    bound = proven_tail(q=q, bits=2, population=1000, epsilon=1.0)
    assert 1e-6 < r.eta_upper <= bound.eta <= 1e-3


@pytest.mark.slow
def test_time_budget_skips_and_reports():
    r = structured_search(3, 10_000, 0.11194302168958273, 1.0, time_budget=0.5)
    assert not r.complete and r.pairs_skipped > 0
    assert any("time budget" in f.reason for f in r.families if f.skipped)
    assert r.pairs_evaluated + r.pairs_skipped == r.pairs_total == len(candidate_pairs(3, 10_000))


@pytest.mark.slow
def test_extra_pairs_and_combined_claims():
    from sufficientdp.ratio.worst_case import worst_case_search

    h = worst_case_search(2, 6, 0.1, 3.0, rng=np.random.default_rng(0), budget=20)
    extra = [StructuredPair.from_collections(x["original"], x["modified"]) for x in h.ranking]
    r = structured_search(2, 6, 0.1, 3.0, extra_pairs=extra)
    assert r.eta_lower >= h.eta * (1 - 1e-9)  # the heuristic's best pair is re-evaluated exactly
    claims = combined_claims(r, h)
    assert claims["two_sided_holds"] == (r.two_sided_holds and h.two_sided_holds)
    assert claims["eta_lower"] >= max(r.eta_lower, h.eta) * (1 - 1e-12)
