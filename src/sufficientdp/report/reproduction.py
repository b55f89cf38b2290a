"""``docs/reproduction.md``: every number in seed 001's tables and worked examples, beside the project's value.

Seed 001 is ``papers/001_3d8ddaba8b46cf9c.txt`` ("Sufficient Differential Privacy"); the errata are in
``papers/ERRATA.md``. For every printed number of §3.3 (two tables), §3.4 (table and text), §4 (worked examples)
and §6.1 (k-randomization) :func:`build` computes the project's value at run time, says which formula or method
produced it, and gives a status:

* **matches** — rounding the project's value to the printed digits gives the printed value;
* **matches to the printed precision** — off by at most one unit in the last printed digit and by at most 1%
  relative (the cause is named);
* **does not follow** — otherwise (the cause is named where it can be found).

An adapter (issue 11): it lays out numbers from the core and holds no math. The tails come from
:func:`sufficientdp.ratio.sampling.count_ratio_above` (seeded plain Monte Carlo of eq. 3.5-3.6 with 95%
Clopper-Pearson intervals) and, for L = 5, :func:`sufficientdp.ratio.exact.five_bit_tail` (enumeration, up to a
stated truncated mass); they are *estimates of eta at the calibrated q*, not bounds: the paper's "mean + 3 sigma"
rule is a heuristic (ERRATA 3) and does not fix eta. The closing cross-check compares the library with an
independent mpmath evaluation of the paper's formulas (:mod:`sufficientdp.report._mp_oracle`; needs ``mpmath``, from
the ``test`` extra; without it that section says it was skipped). ``scripts/reproduce_001.py`` is the command line.

The only literals are the paper's printed values (each cited with its section) and the configurations the paper
states.
"""

from __future__ import annotations

import itertools
import math
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import scipy

from ..calibration import Calibration, calibrate, local_q, sigma_per_sqrt_n
from ..calibration.paper import (
    paper_eq_6_3_limit_q,
    paper_eq_6_3_q,
    paper_maurer_heuristic,
    paper_maurer_middle_line,
)
from ..ratio import ratio_moments
from ..ratio.exact import TruncatedTail, five_bit_tail, outlier_alone
from ..ratio.sampling import ThresholdCount, count_ratio_above
from ..ratio.tail import certified_tail
from . import _mp_oracle as oracle
from .census_tables import section as census_section

__all__ = ["MATCH", "MATCH_PREC", "NO", "Claim", "Report", "Settings", "build", "rounded", "rounding_status",
           "settings_for"]

SEED_FILE = "seed 001 (`001_3d8ddaba8b46cf9c.txt`)"

MATCH = "matches"
MATCH_PREC = "matches to the printed precision"
NO = "does not follow"

# ---------------------------------------------------------------------------------------------------------------
# The paper's printed values (the only result literals in this script), each with its section.
# ---------------------------------------------------------------------------------------------------------------
L_SMALL = 5  # §3.3: "let's set L = 5"
POPULATIONS = (1000, 3000, 5000)  # §3.3: "1000, 3000 and 5000 vectors collections"
EPS_PAPER_LN2 = 0.693  # §3.3: "lambda = e^{0.693} = 2"
EPS_E2 = 2.0  # §3.3: "setting lambda = e^2"
BETA = 3.0  # §3.2: mean + 3 sigma
# §3.3, first table (lambda = 2): q and p(R(S) >= lambda)
P33_Q_LAM2 = {1000: "0.2446", 3000: "0.2109", 5000: "0.1778"}
P33_P_LAM2 = {1000: "0.006", 3000: "0.0048", 5000: "0.0045"}
# §3.3, second table (lambda = e^2)
P33_Q_E2 = {1000: "0.1692", 3000: "0.1424", 5000: "0.1310"}
P33_P_E2 = {1000: "0.0037", 3000: "0.0062", 5000: "0.0074"}
# §3.4 table (headed "lambda = 2"): q, p(R(S) >= lambda), bound
P34_Q = {1000: "0.1692", 3000: "0.1424", 5000: "0.1310"}
P34_P = {1000: "0.0037", 3000: "0.0062", 5000: "0.0074"}
P34_BOUND = {1000: "0.052", 3000: "0.057", 5000: "0.062"}
# §3.4 text and §4, §6.1: L = 40, N = 10M, lambda = e^2
L_BIG = 40
N_BIG = 10_000_000
P34_BETA_A, P34_BOUND_A = 3.05, "0.0096"  # §3.4: "for beta = 3.05, the bounding probability is 0.0096"
P34_BETA_B, P34_BOUND_B = 3.5, "0.002"  # §3.4: "Setting beta = 3.5 gives the bounding probability of 0.002"
P34_DQ = "0.0025"  # §3.4: "(q increased by 0.0025)"
# §4 worked examples
P4_LOCAL_Q_L5 = "0.465"  # §4 eq. (4.3)
P4_SIGMA_LOCAL_L5 = "7.5"  # §4: "sigma = 7.5 sqrt(N)"
P4_Q_SUFF_L5 = "0.1778"  # §4: "the corresponding noise level is only q = 0.1778"
P4_SIGMA_SUFF_L5 = "0.6"  # §4: "sigma = 0.6 sqrt(N)"
P4_FOLD_L5 = "12"  # §4: "This is 12 fold increase in precision!"
P4_LOCAL_Q_L40 = "0.4875"  # §4: "The required noise for local DP is q = 0.4875"
P4_TIMES_L40 = "20"  # §4: "The noise that high increases deviation 20 times!"
P4_DEV_L40 = "200"  # §4: "could deviate 200K units" (thousands)
P4_Q_SUFF_L40 = "0.351"  # §4: "The required noise is q = 0.351"
P4_MULT_L40 = "1.6"  # §4: "multiplies deviation only by 1.6"
P4_GAIN_L40 = "12.5"  # §4: "(the 12.5 precision increase again)"
P4_ERR_L40 = "15"  # §4: "error not exceeding 15K" (thousands)
P4_SHARE, P4_REL_ERR = 0.01, 0.10  # §4: "estimate even 1% of the population with 10% error"
# §6.1
P61_Q_K1 = "0.351"  # §6.1: "the sufficient noise is q = 0.351"
P61_K_MAX = 200  # §6.1: "for values of k changeling from 1 to 200"
P61_SHARE = 0.005  # §6.1: "minimal precision down to 0.5% of population"
P61_K = "4"  # §6.1: "devices may submit their randomizations 4 times"


# ---------------------------------------------------------------------------------------------------------------
# Status and formatting helpers
# ---------------------------------------------------------------------------------------------------------------
def rounding_status(value: float, printed: str) -> str:
    """Compare ``value`` with a printed decimal.

    ``MATCH`` if rounding to the printed digits gives the printed value; ``MATCH_PREC`` if the difference is at
    most one unit of the last printed digit and at most 1% of the printed value; ``NO`` otherwise.
    """
    d = Decimal(printed)
    unit = Decimal(1).scaleb(int(d.as_tuple().exponent))
    v = Decimal(repr(float(value)))
    if v.quantize(unit, rounding=ROUND_HALF_UP) == d:
        return MATCH
    if abs(v - d) <= unit and abs(v - d) <= Decimal("0.01") * abs(d):
        return MATCH_PREC
    return NO


def rounded(value: float, printed: str) -> str:
    """``value`` rounded to the digits of ``printed``."""
    d = Decimal(printed)
    unit = Decimal(1).scaleb(int(d.as_tuple().exponent))
    return str(Decimal(repr(float(value))).quantize(unit, rounding=ROUND_HALF_UP))


def f6(x: float) -> str:
    return f"{x:.6f}"


def sig(x: float, n: int = 4) -> str:
    return f"{x:.{n}g}"


def pct(x: float, n: int = 1) -> str:
    return f"{100 * x:.{n}f}%"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)




@dataclass(frozen=True)
class Claim:
    """One printed number of the paper and what the project computes for it."""

    section: str
    what: str
    paper: str
    project: str
    method: str
    status: str
    note: str = ""


@dataclass(frozen=True)
class Report:
    """The claims of the summary table and the markdown parts, in order (filled by the sections)."""

    claims: list[Claim] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    def claim(self, *args: str, **kw: str) -> Claim:
        c = Claim(*args, **kw)
        self.claims.append(c)
        return c

    def add(self, text: str) -> None:
        self.parts.append(text)




def fmt_count(e: ThresholdCount) -> str:
    """A Monte Carlo count as ``estimate [lower, upper]``."""
    return f"{e.estimate:.5f} [{e.lower:.5f}, {e.upper:.5f}]"


def fmt_exact(x: TruncatedTail) -> str:
    """An enumerated tail to six decimals."""
    return f"{x.value:.6f}"



# ---------------------------------------------------------------------------------------------------------------
# The reproduction
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """A run: ``quick`` (fewer samples, exact tails only for N = 1000), the seed, the Monte Carlo sample sizes,
    whether every exact tail is computed, and the k step of the (6.3) cross-check."""

    quick: bool
    seed: int
    samples_l5: int
    samples_l40: int
    exact_all: bool
    k_check_step: int


def log(msg: str) -> None:
    """Progress, on stderr."""
    print(msg, file=sys.stderr, flush=True)


def row_rng(settings: Settings, row: int) -> np.random.Generator:
    """Independent stream per table row, stable under adding rows elsewhere."""
    return np.random.default_rng([settings.seed, row])


def q312(n: int, eps: float, bits: int = L_SMALL, beta: float = BETA, simplified: bool = False) -> float:
    method = "paper-simplified" if simplified else "paper-sigma"
    return calibrate(bits=bits, population=n, epsilon=eps, beta=beta, method=method).q


def section_33(rep: Report, st: Settings, tails: dict[Any, Any]) -> dict[Any, Any]:
    """§3.3, both tables."""
    log("§3.3: calibrations, Monte Carlo and exact tails ...")
    lam_a, lam_2, lam_e2 = math.exp(EPS_PAPER_LN2), 2.0, math.exp(EPS_E2)
    qs: dict[Any, Any] = {}
    for n in POPULATIONS:
        qs[("0.693", n)] = q312(n, EPS_PAPER_LN2)
        qs[("ln2", n)] = q312(n, math.log(2))
        qs[("0.693s", n)] = q312(n, EPS_PAPER_LN2, simplified=True)
        qs[("ln2s", n)] = q312(n, math.log(2), simplified=True)
        qs[("e2", n)] = q312(n, EPS_E2)
        qs[("e2s", n)] = q312(n, EPS_E2, simplified=True)

    out = ["## §3.3 Experimental results (L = 5)", ""]
    out.append(
        "Calibration: the smallest q with E R + 3 sd(R) <= lambda, with the exact moments of §3.1 (eq. 3.12) "
        "and with the simpler eq. (3.13)/(3.15)/(3.16), via `sufficientdp.calibration.calibrate(method="
        "\"paper-sigma\" | \"paper-simplified\")`. Tails: P[R(S) >= lambda] in the homogeneous configuration "
        "(N - 1 all-zero vectors and one all-ones outlier), exactly by enumeration (value shown; the omitted "
        "mass bound is listed) and by Monte Carlo of eq. (3.5)-(3.6) with a 95% Clopper-Pearson interval.")
    out.append("")
    out.append(f"### First table: lambda = 2, printed as e^0.693 (e^0.693 = {lam_a:.5f})")
    out.append("")
    rows: list[list[Any]] = []
    for n in POPULATIONS:
        q_a = qs[("0.693", n)]
        status = rounding_status(q_a, P33_Q_LAM2[n])
        note = ""
        if status == NO:
            note = (f"ERRATA 1: (3.12) gives {q_a:.4f} and (3.13) gives {qs[('0.693s', n)]:.4f}; "
                    "no variant gives the printed value")
        rep.claim("§3.3", f"q, lambda = 2, N = {n}", P33_Q_LAM2[n], f"{q_a:.6f}",
                  "eq. (3.12) at eps = 0.693", status, note)
        rows.append([n, P33_Q_LAM2[n], f6(q_a), f6(qs[("ln2", n)]), f6(qs[("0.693s", n)]), f6(qs[("ln2s", n)]),
                     status])
    out.append(table(["N", "paper q", "(3.12), eps = 0.693", "(3.12), eps = ln 2", "(3.13), eps = 0.693",
                      "(3.13), eps = ln 2", "status (vs 3.12 at 0.693)"], rows))
    out.append("")
    conservative = all(qs[(k + "s", n)] >= qs[(k, n)] for k in ("0.693", "ln2", "e2") for n in POPULATIONS)
    q1000_ln2 = qs[("ln2", 1000)]
    q1000_ln2_s = qs[("ln2s", 1000)]
    st_ln2 = rounding_status(q1000_ln2, P33_Q_LAM2[1000])
    rep.claim("§3.3", "q, lambda = 2, N = 1000, at eps = ln 2 exactly", P33_Q_LAM2[1000], f"{q1000_ln2:.6f}",
              "eq. (3.12) at eps = ln 2", st_ln2,
              f"rounds to {rounded(q1000_ln2, '0.0001')}; the paper evaluated at eps = 0.693 literally; "
              f"(3.13) at ln 2 gives {q1000_ln2_s:.6f} (rounds to {rounded(q1000_ln2_s, '0.0001')})")
    out.append(
        f"The paper computed this table with eps = 0.693 literally. At eps = ln 2 exactly, (3.12) gives "
        f"q = {q1000_ln2:.5f} for N = 1000 (printed {P33_Q_LAM2[1000]}; rounds to {rounded(q1000_ln2, '0.0001')}) and (3.13) "
        f"gives {q1000_ln2_s:.5f}. (3.13) is the simpler, more conservative form (ERRATA 7): its q is "
        f"{'larger' if conservative else 'NOT always larger'}"
        f" than that of (3.12) in every row here. The N = 5000 value {P33_Q_LAM2[5000]} "
        + ("does not follow from either (ERRATA 1)." if max(
            rounding_status(qs[(k, 5000)], P33_Q_LAM2[5000]) for k in ("0.693", "ln2", "0.693s", "ln2s")) == NO
           and min(rounding_status(qs[(k, 5000)], P33_Q_LAM2[5000]) for k in ("0.693", "ln2", "0.693s", "ln2s"))
           == NO else "follows from one of them."))
    out.append("")

    # tails, lambda = 2
    rows = []
    specs = [(n, qs[("0.693", n)], "(3.12) at eps = 0.693") for n in POPULATIONS]
    specs.append((5000, float(P33_Q_LAM2[5000]), "printed q, misprint"))
    refs: dict[int, float] = {}
    for i, (n, q, label) in enumerate(specs):
        est = count_ratio_above(q=q, bits=L_SMALL, population=n, thresholds=[lam_a, lam_2],
                      samples=st.samples_l5, rng=row_rng(st, 100 + i))
        ex = (five_bit_tail(q=q, population=n, thresholds=[lam_a, lam_2])
              if (st.exact_all or n == 1000) else None)
        tails[("lam2", n, label)] = (q, est, ex)
        paper = P33_P_LAM2[n]
        ref = ex[1].value if ex else est[1].estimate
        refs.setdefault(n, ref)
        status = rounding_status(ref, paper)
        in_ci = est[1].contains(float(paper))
        note_bits = [f"paper value {'inside' if in_ci else 'outside'} the MC 95% CI"]
        if label.startswith("printed"):
            note_bits.append(f"at the printed q = {P33_Q_LAM2[5000]} (ERRATA 1) the tail is "
                             f"{ref / refs[n]:.1f} times that at the (3.12) q")
        rep.claim("§3.3", f"p(R >= 2), N = {n}, q = {q:.4f} ({label})", paper, f"{ref:.5f}",
                  "exact enumeration" if ex else "Monte Carlo", status, "; ".join(note_bits))
        rows.append([n, f"{q:.6f} ({label})", paper,
                     fmt_exact(ex[0]) if ex else "not computed (--quick)",
                     fmt_exact(ex[1]) if ex else "not computed (--quick)",
                     fmt_count(est[1]), "yes" if in_ci else "no",
                     ("yes" if est[1].contains(ex[1].value) else "NO") if ex else "-", status])
    out.append("Tail probabilities (the paper's p(R(S) >= lambda) column):")
    out.append("")
    out.append(table(["N", "q used", "paper p", "exact P[R >= e^0.693]", "exact P[R >= 2]",
                      "MC P[R >= 2] (95% CI)", "paper in CI", "exact in CI", "status (exact vs paper)"], rows))
    out.append("")

    out.append(f"### Second table: lambda = e^2 (= {lam_e2:.5f})")
    out.append("")
    rows_q, rows_t = [], []
    for i, n in enumerate(POPULATIONS):
        q = qs[("e2", n)]
        status = rounding_status(q, P33_Q_E2[n])
        rep.claim("§3.3", f"q, lambda = e^2, N = {n}", P33_Q_E2[n], f"{q:.6f}", "eq. (3.12)", status)
        rows_q.append([n, P33_Q_E2[n], f6(q), f6(qs[("e2s", n)]), status])
        est = count_ratio_above(q=q, bits=L_SMALL, population=n, thresholds=[lam_e2], samples=st.samples_l5,
                      rng=row_rng(st, 200 + i))
        ex = five_bit_tail(q=q, population=n, thresholds=[lam_e2]) if (st.exact_all or n == 1000) else None
        tails[("e2", n)] = (q, est, ex)
        paper = P33_P_E2[n]
        ref = ex[0].value if ex else est[0].estimate
        s2 = rounding_status(ref, paper)
        in_ci = est[0].contains(float(paper))
        rep.claim("§3.3", f"p(R >= e^2), N = {n}", paper, f"{ref:.5f}",
                  "exact enumeration" if ex else "Monte Carlo", s2,
                  f"paper value {'inside' if in_ci else 'outside'} the MC 95% CI")
        rows_t.append([n, f6(q), paper, fmt_exact(ex[0]) if ex else "not computed (--quick)", fmt_count(est[0]),
                       "yes" if in_ci else "no", ("yes" if est[0].contains(ex[0].value) else "NO") if ex else "-",
                       s2])
    out.append(table(["N", "paper q", "(3.12)", "(3.13)", "status"], rows_q))
    out.append("")
    out.append(table(["N", "q", "paper p", "exact P[R >= e^2]", "MC P[R >= e^2] (95% CI)", "paper in CI",
                      "exact in CI", "status (exact vs paper)"], rows_t))
    out.append("")
    outside = [c.what for c in rep.claims if c.what.startswith("p(R >=") and "outside" in c.note]
    inside_no = [c.what for c in rep.claims
                 if c.what.startswith("p(R >=") and "inside" in c.note and c.status == NO]
    out.append(
        "The paper does not say how its p(R(S) >= lambda) values were obtained (it mentions generating the PDF "
        f"of R(S)) nor with how many samples. Printed values outside the 95% Monte Carlo interval here: "
        f"{len(outside)} of {len([c for c in rep.claims if c.what.startswith('p(R >=')])}"
        + (" (" + "; ".join(outside) + ")" if outside else "")
        + ". " + ("Inside the interval but not matching the project's value (exact where computed) to the "
                  "printed digits: " + "; ".join(inside_no) + ". " if inside_no else "")
        + _direction_sentence(rep))
    out.append("")
    rep.add("\n".join(out))
    return qs


def _direction_sentence(rep: Report) -> str:
    """Whether the printed tail values that do not follow lie below or above the project's values."""
    pairs = [(float(c.paper), float(c.project)) for c in rep.claims
             if c.what.startswith("p(R >=") and c.status == NO]
    below = sum(1 for a, b in pairs if a < b)
    return (f"Of the {len(pairs)} printed tail values that do not follow, {below} lie below the project's value "
            f"and {len(pairs) - below} above.")


def section_34(rep: Report, st: Settings, qs: dict[Any, Any], tails: dict[Any, Any]) -> None:
    """§3.4: the 'bound' column and the L = 40 claims."""
    log("§3.4: Maurer heuristic, L = 40 ...")
    out = ["## §3.4 Concentration inequality and choice of sigma multiples", ""]
    same_q = all(rounding_status(qs[("e2", n)], P34_Q[n]) == MATCH for n in POPULATIONS)
    same_p = all(P34_P[n] == P33_P_E2[n] for n in POPULATIONS)
    same = same_q and same_p
    rep.claim("§3.4", "table heading \"lambda = 2\"", "lambda = 2", "lambda = e^2" if same else "?",
              "compare the table's q with §3.3", NO,
              "ERRATA 2: the q column is that of the lambda = e^2 table" if same else "")
    out.append(
        "ERRATA 2: the table is headed lambda = 2 but its q and p columns are those of the lambda = e^2 table of "
        f"§3.3 (the (3.12) q at lambda = e^2 rounds to the printed q in every row: {same_q}; the p column is "
        f"the lambda = e^2 p column of §3.3: {same_p}).")
    out.append("")
    out.append(
        "ERRATA 3: Maurer's inequality bounds the lower deviation P[E S - S > t] of a sum of non-negative "
        "variables; the privacy risk is the upper tail P[R > lambda], so nothing below is a bound on eta. "
        "The last line of (3.17) also drops the phi^(2L) term of sigma^2. Candidates tried for the \"bound\" "
        "column (beta = 3): the last line of (3.17) (library `paper_maurer_heuristic`) and its middle line "
        "(which keeps phi^(2L)), each at the lambda = e^2 q values (printed and computed) and at the lambda = 2 "
        "q values.")
    out.append("")
    variants = {
        "last line, lambda = e^2 q (computed)": ("last", {n: qs[("e2", n)] for n in POPULATIONS}),
        "last line, lambda = e^2 q (printed)": ("last", {n: float(P34_Q[n]) for n in POPULATIONS}),
        "middle line, lambda = e^2 q (computed)": ("middle", {n: qs[("e2", n)] for n in POPULATIONS}),
        "middle line, lambda = e^2 q (printed)": ("middle", {n: float(P34_Q[n]) for n in POPULATIONS}),
        "last line, lambda = 2 q (computed, eps = 0.693)": ("last", {n: qs[("0.693", n)] for n in POPULATIONS}),
        "middle line, lambda = 2 q (computed, eps = 0.693)":
            ("middle", {n: qs[("0.693", n)] for n in POPULATIONS}),
        "middle line, lambda = 2 q (printed)": ("middle", {n: float(P33_Q_LAM2[n]) for n in POPULATIONS}),
    }
    rows: list[list[Any]] = []
    reproduces = []
    for name, (line, qmap) in variants.items():
        vals = {n: maurer(qmap[n], L_SMALL, n, BETA, line) for n in POPULATIONS}
        stt = [rounding_status(vals[n], P34_BOUND[n]) for n in POPULATIONS]
        if all(s in (MATCH, MATCH_PREC) for s in stt):
            reproduces.append(name)
        rows.append([name] + [f"{vals[n]:.4f} ({s})" for n, s in zip(POPULATIONS, stt)])
    rows.append(["paper"] + [P34_BOUND[n] for n in POPULATIONS])
    out.append(table(["variant"] + [f"N = {n}" for n in POPULATIONS], rows))
    out.append("")
    mid = {n: maurer(qs[("e2", n)], L_SMALL, n, BETA, "middle") for n in POPULATIONS}
    beta_need = [BETA * math.sqrt(math.log(float(P34_BOUND[n])) / math.log(mid[n])) for n in POPULATIONS]
    for n in POPULATIONS:
        rep.claim("§3.4", f"\"bound\", N = {n}", P34_BOUND[n], f"{mid[n]:.4f} (middle line, e^2 q)",
                  "eq. (3.17), all variants in the section table",
                  MATCH if reproduces else rounding_status(mid[n], P34_BOUND[n]),
                  ("reproduced by: " + ", ".join(reproduces)) if reproduces else
                  "no variant reproduces the column; the closest is the middle line at the lambda = e^2 q")
    if reproduces:
        out.append("Variants that reproduce the whole column to the printed precision: "
                   + "; ".join(reproduces) + ".")
    else:
        out.append(
            "No variant reproduces the column. The closest is the middle line of (3.17) (with phi^(2L)) at the "
            "lambda = e^2 q values, which gives " + ", ".join(f"{mid[n]:.3f}" for n in POPULATIONS)
            + " against the printed " + ", ".join(P34_BOUND[n] for n in POPULATIONS)
            + ": the same increasing trend, but lower. The last line "
            "as printed gives about exp(-beta^2/2) = " + f"{math.exp(-BETA**2 / 2):.4f}" + " for every row. "
            "Equivalently, the middle line reproduces the printed column only with beta = "
            + ", ".join(f"{b:.3f}" for b in beta_need)
            + " instead of 3 (for instance a simulated sigma "
            + f"{100 * (1 - max(beta_need) / BETA):.0f}-{100 * (1 - min(beta_need) / BETA):.0f}% below the exact "
            "one); the paper does not say "
            "how the column was computed. "
            "The exact tails in the same rows (§3.3) are "
            + ", ".join(fmt_exact(tails[("e2", n)][2][0]) if tails[("e2", n)][2] else fmt_count(tails[("e2", n)][1][0])
                        for n in POPULATIONS) + ".")
    out.append("")

    # L = 40, N = 10M, lambda = e^2
    out.append("### L = 40, N = 10M, lambda = e^2")
    out.append("")
    q_b = {b: q312(N_BIG, EPS_E2, bits=L_BIG, beta=b) for b in (BETA, P34_BETA_A, P34_BETA_B)}
    q_bs = {b: q312(N_BIG, EPS_E2, bits=L_BIG, beta=b, simplified=True) for b in (BETA, P34_BETA_A, P34_BETA_B)}
    rows = []
    for b, printed in ((P34_BETA_A, P34_BOUND_A), (P34_BETA_B, P34_BOUND_B)):
        gauss = math.exp(-b * b / 2)
        last = paper_maurer_heuristic(q_b[b], bits=L_BIG, population=N_BIG, beta=b)
        midv = maurer(q_b[b], L_BIG, N_BIG, b, "middle")
        s_g, s_l, s_m = (rounding_status(v, printed) for v in (gauss, last, midv))
        best = MATCH if MATCH in (s_g, s_l, s_m) else (MATCH_PREC if MATCH_PREC in (s_g, s_l, s_m) else NO)
        which = [nm for nm, s in (("exp(-beta^2/2)", s_g), ("last line", s_l), ("middle line", s_m)) if s == best]
        rep.claim("§3.4", f"bounding probability, L = 40, N = 10M, beta = {b}", printed,
                  f"{gauss:.6f} / {last:.6f} / {midv:.6f}", "exp(-beta^2/2) / (3.17) last / (3.17) middle", best,
                  f"{best} via " + ", ".join(which) + "; a heuristic, not a bound (ERRATA 3)")
        rows.append([b, f6(q_b[b]), printed, f"{gauss:.6f} ({s_g})", f"{last:.6f} ({s_l})", f"{midv:.6f} ({s_m})"])
    out.append(table(["beta", "q (3.12) at this beta", "paper", "exp(-beta^2/2)", "(3.17) last line",
                      "(3.17) middle line"], rows))
    out.append("")
    dq = q_b[P34_BETA_B] - q_b[P34_BETA_A]
    dq3 = q_b[P34_BETA_B] - q_b[BETA]
    s_dq = rounding_status(dq, P34_DQ)
    rep.claim("§3.4", "q increase from beta = 3.05 to 3.5", P34_DQ, f"{dq:.5f}", "eq. (3.12) solved at each beta",
              s_dq, f"from beta = 3: {dq3:.5f}; relative: {dq / q_b[P34_BETA_A]:.4f}, {dq3 / q_b[BETA]:.4f}; "
              "(3.13) gives the same to 1e-9")
    out.append(
        f"q at beta = 3, 3.05, 3.5 from (3.12): {q_b[BETA]:.6f}, {q_b[P34_BETA_A]:.6f}, {q_b[P34_BETA_B]:.6f} "
        f"((3.13): {q_bs[BETA]:.6f}, {q_bs[P34_BETA_A]:.6f}, {q_bs[P34_BETA_B]:.6f}). Going from beta = 3.05 to "
        f"3.5 raises q by {dq:.5f} (from beta = 3: {dq3:.5f}), not by the printed 0.0025 (status: {s_dq}); as "
        f"relative increases these are {dq / q_b[P34_BETA_A]:.4f} and {dq3 / q_b[BETA]:.4f}.")
    out.append("")
    rows = []
    for i, b in enumerate((BETA, P34_BETA_A, P34_BETA_B)):
        est = count_ratio_above(q=q_b[b], bits=L_BIG, population=N_BIG, thresholds=[math.exp(EPS_E2)],
                      samples=st.samples_l40, rng=row_rng(st, 300 + i))[0]
        tails[("L40", b)] = (q_b[b], est)
        h = paper_maurer_heuristic(q_b[b], bits=L_BIG, population=N_BIG, beta=b)
        rows.append([b, f6(q_b[b]), f"{h:.5f}", fmt_count(est), f"{est.hits}/{est.samples}"])
    out.append("What the calibrated q actually gives (Monte Carlo estimate of eta = P[R >= e^2], 95% CI; an "
               "estimate, not a bound):")
    out.append("")
    out.append(table(["beta", "q", "paper heuristic (3.17 last line)", "MC eta [95% CI]", "hits/samples"], rows))
    out.append("")
    rep.add("\n".join(out))


def maurer(q: float, bits: int, n: int, beta: float, line: str) -> float:
    """Eq. (3.17): the last line (``paper_maurer_heuristic``) or the middle line (``paper_maurer_middle_line``)."""
    f = paper_maurer_heuristic if line == "last" else paper_maurer_middle_line
    return f(q, bits=bits, population=n, beta=beta)


def section_4(rep: Report, st: Settings, qs: dict[Any, Any]) -> dict[Any, Any]:
    """§4 precision gain."""
    log("§4: precision gain ...")
    out = ["## §4 Precision gain", ""]
    out.append("sigma(d_hat) = sqrt(N) sqrt(q p)/(p - q) (§4), computed by `sigma_per_sqrt_n`; local DP "
               "q = 1/(1 + lambda^(1/L)) (eq. 4.2) by `local_q`.")
    out.append("")
    rows: list[list[Any]] = []

    def add(what: str, paper: str, value: float, method: str, status: str | None = None, note: str = "",
            shown: str | None = None) -> None:
        s = status or rounding_status(value, paper)
        shown = shown if shown is not None else sig(value, 6)
        rep.claim("§4", what, paper, shown, method, s, note)
        rows.append([what, paper, shown, method, s, note])

    ql5 = local_q(L_SMALL, math.log(2))
    ql5a = local_q(L_SMALL, EPS_PAPER_LN2)
    add("local DP q, L = 5, lambda = 2", P4_LOCAL_Q_L5, ql5, "eq. (4.2)", note=f"eps = 0.693: {ql5a:.6f}")
    s_loc = sigma_per_sqrt_n(ql5)
    s_loc_r = sigma_per_sqrt_n(float(P4_LOCAL_Q_L5))
    add("sigma/sqrt(N) at local q, L = 5", P4_SIGMA_LOCAL_L5, s_loc, "sqrt(qp)/(p-q)",
        note=f"at the rounded q = 0.465: {s_loc_r:.3f}; neither gives 7.5")
    q5000 = qs[("0.693", 5000)]
    add("sufficient q, L = 5, N = 5000, lambda = 2", P4_Q_SUFF_L5, q5000, "eq. (3.12) at eps = 0.693",
        note="ERRATA 1 (misprint carried over from §3.3)")
    s_mis = sigma_per_sqrt_n(float(P4_Q_SUFF_L5))
    s_cor = sigma_per_sqrt_n(q5000)
    st_sig = rounding_status(s_cor, P4_SIGMA_SUFF_L5)
    add("sigma/sqrt(N) at sufficient q, L = 5, N = 5000", P4_SIGMA_SUFF_L5, s_cor,
        "sqrt(qp)/(p-q) at the (3.12) q", status=st_sig,
        note=f"at the printed q = 0.1778: {s_mis:.4f} ({rounding_status(s_mis, P4_SIGMA_SUFF_L5)}); "
        "inherits ERRATA 1")
    fold_c = s_loc / s_cor
    fold_m = s_loc / s_mis
    add("precision gain, L = 5, N = 5000 (\"12 fold\")", P4_FOLD_L5, fold_c, "ratio of the two sigmas",
        note=f"with the printed q = 0.1778: {fold_m:.2f} ({rounding_status(fold_m, P4_FOLD_L5)}); "
        f"the paper's own {P4_SIGMA_LOCAL_L5}/{P4_SIGMA_SUFF_L5} = "
        f"{float(P4_SIGMA_LOCAL_L5) / float(P4_SIGMA_SUFF_L5):.1f}; inherits ERRATA 1")
    ql40 = local_q(L_BIG, EPS_E2)
    add("local DP q, L = 40, lambda = e^2", P4_LOCAL_Q_L40, ql40, "eq. (4.2)")
    s40 = sigma_per_sqrt_n(ql40)
    add("sigma/sqrt(N) at local q, L = 40 (\"20 times\")", P4_TIMES_L40, s40, "sqrt(qp)/(p-q)")
    root_n = math.sqrt(N_BIG)
    dev1, dev3 = s40 * root_n, 3 * s40 * root_n
    add("deviation at local q, N = 10M (\"200K\")", "200K", dev3 / 1000,
        "3 sigma = 3 x sigma/sqrt(N) x sqrt(N)", status=rounding_status(dev3 / 1000, "2E+2"),
        note=f"1 sigma = {dev1:,.0f}; 3 sigma = {dev3:,.0f} (read as 3 sigma, like the 15K below; "
        "1 significant figure)", shown=f"{dev3:,.0f}")
    c40 = calibrate(bits=L_BIG, population=N_BIG, epsilon=EPS_E2, method="paper-sigma")
    add("sufficient q, L = 40, N = 10M, lambda = e^2", P4_Q_SUFF_L40, c40.q, "eq. (3.12)")
    add("sigma/sqrt(N) at sufficient q (\"1.6\")", P4_MULT_L40, c40.sigma_per_sqrt_n, "sqrt(qp)/(p-q)")
    add("precision gain, L = 40 (\"12.5\")", P4_GAIN_L40, c40.gain_vs_local, "local sigma / sufficient sigma")
    err3 = 3 * c40.sigma_per_sqrt_n * root_n
    add("error bound at sufficient q (\"15K\")", "15K", err3 / 1000, "3 sigma", status=rounding_status(err3 / 1000,
        P4_ERR_L40), note=f"1 sigma = {c40.sigma_per_sqrt_n * root_n:,.0f}", shown=f"{err3:,.0f}")
    group = P4_SHARE * N_BIG
    rel3 = err3 / group
    z_needed = P4_REL_ERR * group / (c40.sigma_per_sqrt_n * root_n)
    status_rel = MATCH if rel3 <= P4_REL_ERR else NO
    add("\"1% of the population with 10% error\"", "10% of 1%", rel3, "3 sigma / (0.01 N)", status=status_rel,
        note=f"3 sigma is {pct(rel3)} of 1% of N; 10% holds only for an error of {z_needed:.2f} sigma "
        f"(about a 95% two-sided interval)", shown=pct(rel3))
    out.append(table(["claim", "paper", "project", "method", "status", "note"], rows))
    out.append("")
    rep.add("\n".join(out))
    return {"c40": c40, "err3": err3}


def section_61(rep: Report, st: Settings, s4: dict[Any, Any]) -> dict[Any, Any]:
    """§6.1 k-randomization."""
    log("§6.1: eq. (6.3) for k = 1..200 ...")
    out = ["## §6.1 k-randomization (L = 40, N = 10M, lambda = e^2)", ""]
    out.append(
        "ERRATA 4: eq. (6.1)-(6.3) are not bounds (the k outlier reports can be matched to a k-subset in k! "
        "ways, and overlapping-subset variances are added as if independent); the conclusion that k reports "
        "need no more noise than one is false. The curve below is the paper's (6.3) only "
        "(`sufficientdp.calibration.paper.paper_eq_6_3_q`), to reproduce the paper. The last columns of the "
        "second table show the project's calibration for k reports (`calibrate(reports=k, method='paper-sigma')`: Maclaurin's "
        "inequality R(S^k) <= (mean w)^k, then mean + 3 sd of that mean at threshold lambda^(1/k); rigorous "
        "reduction, still the paper's heuristic for the tail).")
    out.append("")
    out.append("(§6.1 also says \"Choosing lambda = 2 and N = 1,000,000\" and then uses L = 40, N = 10M, "
               "lambda = e^2; the numbers it states belong to the latter, which is used here.)")
    out.append("")
    ks = list(range(1, P61_K_MAX + 1))
    qk = [paper_eq_6_3_q(bits=L_BIG, population=N_BIG, epsilon=EPS_E2, reports=k) for k in ks]
    s_k1 = rounding_status(qk[0], P61_Q_K1)
    rep.claim("§6.1", "q at k = 1 from eq. (6.3)", P61_Q_K1, f"{qk[0]:.6f}", "eq. (6.3), k = 1", s_k1,
              f"(3.12) gives {s4['c40'].q:.6f}")
    kmin = int(np.argmin(qk)) + 1
    q_inf = paper_eq_6_3_limit_q(bits=L_BIG, population=N_BIG, epsilon=EPS_E2)
    mono = all(b <= a for a, b in itertools.pairwise(qk))
    rep.claim("§6.1", "shape of q(k): \"slight decrease ... asymptotic leveling\"", "qualitative",
              f"{qk[0]:.4f} -> min {qk[kmin - 1]:.5f} at k = {kmin} -> {qk[-1]:.5f} at k = {P61_K_MAX}",
              "eq. (6.3) for k = 1..200", MATCH if qk[-1] < qk[0] else NO,
              f"limit k -> inf: phi^L = N eps, q = {q_inf:.5f}; "
              + ("monotone" if mono else f"not monotone: rises by {qk[-1] - qk[kmin - 1]:.1e} after k = {kmin}"))
    out.append(f"q(k) from eq. (6.3), k = 1..{P61_K_MAX} (row label + column = k):")
    out.append("")
    rows: list[list[Any]] = []
    for r0 in range(0, P61_K_MAX, 10):
        rows.append([f"{r0}+"] + [f"{qk[r0 + j]:.4f}" for j in range(10)])
    out.append(table(["k"] + [str(j) for j in range(1, 11)], rows))
    out.append("")
    out.append(
        f"q(1) = {qk[0]:.6f} (printed {P61_Q_K1}: {s_k1}; (3.12) gives {s4['c40'].q:.6f}). q(k) decreases to a minimum "
        f"of {qk[kmin - 1]:.6f} at k = {kmin} and then "
        + ("stays there" if mono else f"creeps up to {qk[-1]:.6f} at k = {P61_K_MAX}")
        + f". As k grows the variance term of (6.3) vanishes and (1 + phi^L/(kN))^k -> exp(phi^L/N), so the "
        f"curve levels at phi^L = N ln(lambda), i.e. q = {q_inf:.6f}: the paper's \"asymptotic leveling at low "
        "bound\".")
    out.append("")

    # the "4 times for 0.5%" claim
    root_n = math.sqrt(N_BIG)
    sig_paper = [sigma_per_sqrt_n(q, k) for q, k in zip(qk, ks)]
    cal = {}

    def corrected(k: int) -> Calibration:
        if k not in cal:
            cal[k] = calibrate(bits=L_BIG, population=N_BIG, epsilon=EPS_E2, reports=k, method="paper-sigma")
        return cal[k]

    def first_k(ok: Callable[[int], bool]) -> int | None:
        for k in ks:
            if ok(k):
                return k
        return None

    s1 = sig_paper[0]
    k_half_paper = first_k(lambda k: sig_paper[k - 1] <= s1 / 2)
    k_half_corr = first_k(lambda k: corrected(k).sigma_per_sqrt_n <= s1 / 2)
    target = P4_REL_ERR * P61_SHARE * N_BIG  # absolute error allowed for 0.5% with 10%
    k_abs3_paper = first_k(lambda k: 3 * sig_paper[k - 1] * root_n <= target)
    k_abs3_corr = first_k(lambda k: 3 * corrected(k).sigma_per_sqrt_n * root_n <= target)
    k_abs196_paper = first_k(lambda k: 1.96 * sig_paper[k - 1] * root_n <= target)
    k_abs196_corr = first_k(lambda k: 1.96 * corrected(k).sigma_per_sqrt_n * root_n <= target)
    s_k = rounding_status(k_half_paper or -1, P61_K)
    rep.claim("§6.1", "k needed for 0.5% of the population (\"4 times\")", P61_K, str(k_half_paper),
              "smallest k with sigma_k <= sigma_1/2 under the paper's (6.3) q(k)", s_k,
              f"with the project's k-report calibration (ERRATA 4): k = {k_half_corr}; reading \"10% error\" as "
              f"3 sigma <= {target:,.0f}: k = {k_abs3_paper} (paper q(k)) / {k_abs3_corr} (project)")
    out.append(
        "\"If business application requires minimal precision down to 0.5% of population, devices may submit "
        "their randomizations 4 times\": a group half the size of the 1% example needs half the absolute error "
        "for the same relative error, i.e. sigma_k <= sigma_1 / 2 with sigma_k/sqrt(N) = sqrt(q_k p_k / k)/"
        "(p_k - q_k) (§6).")
    out.append("")
    rows = [
        ["sigma_k <= sigma_1 / 2 (same relative error as the 1% example)", k_half_paper, k_half_corr],
        [f"3 sigma_k <= 10% of 0.5% of N = {target:,.0f} (the paper's 3-sigma error, as in \"15K\")",
         k_abs3_paper, k_abs3_corr],
        [f"1.96 sigma_k <= {target:,.0f} (95% two-sided)", k_abs196_paper, k_abs196_corr],
    ]
    out.append(table(["criterion", "smallest k, paper's (6.3) q(k)", "smallest k, project calibration"], rows))
    out.append("")
    sel = [1, 2, 3, 4, 5, 8, 10, 20, 50, 100, 200]
    rows = []
    for k in sel:
        c = corrected(k)
        rows.append([k, f6(qk[k - 1]), f"{sig_paper[k - 1]:.4f}", f6(c.q), f"{c.sigma_per_sqrt_n:.4f}",
                     f6(c.local_q), f"{c.local_sigma_per_sqrt_n:.3f}"])
    out.append(table(["k", "q, paper (6.3)", "sigma/sqrt(N), paper q", "q, project (Maclaurin + 3 sd)",
                      "sigma/sqrt(N), project", "q, local DP (k-fold)", "sigma/sqrt(N), local DP"], rows))
    out.append("")
    rep.add("\n".join(out))
    return {"qk": qk, "ks": ks}


def section_eta(rep: Report, st: Settings, tails: dict[Any, Any]) -> None:
    """eta at every calibrated q."""
    out = ["## eta = P[R > lambda] at each paper calibration (mean + 3 sigma does not fix eta)", ""]
    out.append("Each q below satisfies E R + beta sd(R) = lambda (eq. 3.12). The probability that the privacy "
               "ratio exceeds lambda at that q is estimated (Monte Carlo, 95% Clopper-Pearson interval) and, "
               "for L = 5, computed exactly up to the omitted mass. These are estimates of eta for the "
               "homogeneous configuration of §1.2, not bounds, and the configuration itself is the paper's "
               "unproven worst case (ERRATA 5). P[R > lambda] and P[R >= lambda] had the same Monte Carlo "
               "counts in " + str(sum(1 for v in tails.values() if all(e.hits == e.hits_strict for e in
                                                                        (v[1] if isinstance(v[1], list)
                                                                         else [v[1]]))))
               + f" of {len(tails)} rows.")
    out.append("")
    rows: list[list[Any]] = []
    etas = []
    for key, val in tails.items():
        if key[0] == "lam2" and not key[2].startswith("(3.12)"):
            continue
        if key[0] == "lam2":
            q, est, ex = val
            e, x = est[0], (ex[0] if ex else None)
            lam_s, lam, n, bits, beta = "e^0.693", math.exp(EPS_PAPER_LN2), key[1], L_SMALL, BETA
        elif key[0] == "e2":
            q, est, ex = val
            e, x = est[0], (ex[0] if ex else None)
            lam_s, lam, n, bits, beta = "e^2", math.exp(EPS_E2), key[1], L_SMALL, BETA
        else:
            q, e = val
            x = None
            lam_s, lam, n, bits, beta = "e^2", math.exp(EPS_E2), N_BIG, L_BIG, key[1]
        if beta == BETA:
            etas.append(x.value if x else e.estimate)
        alone, l_star = outlier_alone(q=q, bits=bits, population=n, ratio=lam)
        cert = certified_tail(q=q, bits=bits, population=n, epsilon=math.log(lam))
        bracket = f"[{cert.eta_lower:.6f}, {cert.eta_upper:.6f}]" if cert.eta_lower is not None else "-"
        rows.append([bits, f"{n:,}", lam_s, beta, f6(q), fmt_exact(x) if x else "-",
                     f"{x.truncated:.1e}" if x else "-", bracket, fmt_count(e), f"{e.samples:,}",
                     (f"{alone:.5f} (l1 >= {l_star})" if l_star is not None
                      else "0 (no outlier report suffices)")])
    out.append(table(["L", "N", "lambda", "beta", "q", "exact eta", "omitted mass <=",
                      "certified bracket [lower, upper]", "MC eta [95% CI]", "samples", "outlier alone"], rows))
    out.append("")
    out.append("The certified bracket is rigorous on both sides (`sufficientdp.ratio.tail.certified_tail`: exact "
               "conditioning on the outlier's report, exact enumeration of the heavy zero-report levels, a "
               "Chernoff bound above and Cantelli below for the rest). A Monte Carlo interval is a 95% interval: "
               "about one row in twenty may miss the truth by chance, and the bracket is the reference.")
    out.append("")
    out.append("\"Outlier alone\" is P[(N - 1) + w(l1) >= N lambda] with l1 ~ Bin(L, p) the number of bits the "
               "outlier's report keeps: the chance that the outlier's own report pushes R over lambda while the "
               "zero reports sit at their mean (a reference point, not a bound). Where it is close to eta, "
               "the failures come from single heavy reports: mostly the outlier's own report, and also (at "
               "L = 40, about 8% of eta) a zero report that happens to keep 35 or more set bits, which alone "
               "pushes R over lambda. The mean + beta sd rule barely controls either.")
    out.append("")
    out.append("")
    out.append(f"At beta = 3 the estimated eta ranges from {min(etas):.4f} to {max(etas):.4f} across these "
               "configurations: the \"mean + 3 sigma\" rule does not pin the failure probability, so a product "
               "that promises an eta must calibrate it from the tail itself.")
    out.append("")
    rep.add("\n".join(out))


def section_crosscheck(rep: Report, st: Settings, qs: dict[Any, Any], k61: dict[Any, Any]) -> list[str]:
    """Library against an independent mpmath evaluation of the paper's formulas."""
    out = ["## Cross-check: library vs. an independent mpmath evaluation", ""]
    disagreements: list[str] = []
    if not oracle.available:
        out.append("Skipped: mpmath is not installed (`pip install -e '.[test]'`).")
        rep.add("\n".join(out))
        return disagreements
    log("cross-check against mpmath ...")
    with oracle.mpmath.workdps(50):
        return _crosscheck_body(rep, st, qs, k61, out, disagreements)


def _crosscheck_body(rep: Report, st: Settings, qs: dict[Any, Any], k61: dict[Any, Any], out: list[str],
                     disagreements: list[str]) -> list[str]:
    rows: list[list[Any]] = []

    def add(name: str, diffs: list[float], tol: float, kind: str) -> None:
        worst = max(diffs)
        ok = worst <= tol
        if not ok:
            disagreements.append(f"{name}: worst {kind} difference {worst:.2e} > {tol:.0e}")
        rows.append([name, len(diffs), f"{worst:.1e}", kind, f"{tol:.0e}", "yes" if ok else "NO"])

    d = []
    signed: list[float] = []
    for (key, n), q in qs.items():
        eps = {"0.693": EPS_PAPER_LN2, "ln2": math.log(2), "e2": EPS_E2}[key.rstrip("s")]
        ref = float(oracle.mp_q_312(L_SMALL, n, eps, simplified=key.endswith("s")))
        d.append(abs(q - ref))
        signed.append(q - ref)
    for b in (BETA, P34_BETA_A, P34_BETA_B):
        for simp in (False, True):
            ref = float(oracle.mp_q_312(L_BIG, N_BIG, EPS_E2, beta=b, simplified=simp))
            diff = q312(N_BIG, EPS_E2, bits=L_BIG, beta=b, simplified=simp) - ref
            d.append(abs(diff))
            signed.append(diff)
    add("`calibrate` q (paper-sigma, paper-simplified): §3.3 and §3.4 configurations", d, 1e-12, "absolute")
    d = []
    for q in (0.05, 0.1311, 0.1692, 0.2446, 0.351, 0.45, 0.4999):
        for bits, n in ((L_SMALL, 1000), (L_SMALL, 5000), (L_BIG, N_BIG), (200, 10**9)):
            for simp in (False, True):
                m = ratio_moments(q=q, bits=bits, n=n, simplified=simp)
                mm, ss = oracle.mp_moments(q, bits, n, simp)
                d.append(abs(m.mean / float(mm) - 1))
                d.append(abs(m.sd / float(ss) - 1))
    add("`ratio_moments` mean and sd (§3.1 and eq. 3.13)", d, 1e-12, "relative")
    d = []
    for bits, eps in ((L_SMALL, math.log(2)), (L_SMALL, EPS_PAPER_LN2), (L_BIG, EPS_E2), (200, 0.1)):
        ref = oracle.mp_local_q(bits, eps)
        d.append(abs(local_q(bits, eps) - float(ref)))
    add("`local_q` (eq. 4.2)", d, 1e-15, "absolute")
    d = []
    for q in (0.05, 0.1778, 0.351, 0.465, 0.4875, 0.4999):
        ref = oracle.mp_sigma_per_sqrt_n(q)
        d.append(abs(sigma_per_sqrt_n(q) / float(ref) - 1))
    add("`sigma_per_sqrt_n` (§4)", d, 1e-12, "relative")
    d = []
    for q in (0.1310, 0.1424, 0.1692, 0.2446, 0.351):
        for bits, n, b in ((L_SMALL, 1000, BETA), (L_SMALL, 5000, BETA), (L_BIG, N_BIG, P34_BETA_A)):
            ref = oracle.mp_maurer(q, bits, n, b, "last")
            d.append(abs(paper_maurer_heuristic(q, bits=bits, population=n, beta=b) / float(ref) - 1))
            ref = oracle.mp_maurer(q, bits, n, b, "middle")
            d.append(abs(maurer(q, bits, n, b, "middle") / float(ref) - 1))
    add("`paper_maurer_heuristic` and the middle line of (3.17)", d, 1e-10, "relative")
    d = []
    lam_e2 = oracle.mp_exp(EPS_E2)
    for k in range(1, P61_K_MAX + 1, st.k_check_step):
        def lhs(q: Any, k: int = k) -> Any:
            return oracle.mp_eq_6_3(q, L_BIG, N_BIG, k) - lam_e2

        ref = oracle.mp_bisect(lhs)
        d.append(abs(k61["qk"][k - 1] - float(ref)))
        signed.append(k61["qk"][k - 1] - float(ref))
    add(f"`paper_eq_6_3_q`, k = 1..{P61_K_MAX} step {st.k_check_step} (eq. 6.3)", d, 1e-12, "absolute")
    out.append(
        "The oracle evaluates the paper's printed formulas in 50-digit arithmetic (§3.1 moments, (3.12), "
        "(3.13), (3.17), (4.2), §4 sigma, (6.3)) and solves for q by bisection to 1e-33.")
    out.append("")
    out.append(table(["library function", "cases", "worst difference", "kind", "tolerance", "agree"], rows))
    out.append("")
    out.append(_crosscheck_verdict(disagreements, signed))
    out.append("")
    rep.add("\n".join(out))
    return disagreements


def _crosscheck_verdict(disagreements: list[str], signed: list[float]) -> str:
    """The closing sentence of the cross-check: the disagreements, or on which side of the oracle's q the
    library's q lies (``signed``: library minus oracle)."""
    if disagreements:
        return "Disagreements: " + "; ".join(disagreements) + "."
    below = sum(1 for x in signed if x < 0)
    return ("No disagreement beyond the tolerances. "
            + ("The library's q is never below the oracle's (it rounds towards more noise)."
               if below == 0 else f"The library's q is below the oracle's in {below} of {len(signed)} "
               f"cases, by at most {-min(signed):.1e} (one double-precision ulp near q = 0.3 is "
               f"{math.ulp(0.3):.1e}; the oracle's root is itself rounded to a double for the "
               "comparison)."))


def render(rep: Report, st: Settings) -> str:
    head = [
        "# Reproduction of seed 001, \"Sufficient Differential Privacy\"",
        "",
        ("This file is generated; do not edit it by hand. Regenerate it with `make reproduce`, which runs "
         "`python scripts/reproduce_001.py --output docs/reproduction.md` (add `--quick` for a fast run with "
         "fewer Monte Carlo samples, `--seed N` for another random stream; the cross-check section needs mpmath, "
         "from the `test` extra). Every number below is computed "
         "at run time by `sufficientdp` (and checked against an independent mpmath evaluation of the paper's "
         "formulas at the end); the only literals are the paper's printed values. Errata references are to "
         "`ERRATA.md` beside the papers."),
        "",
        (f"Run: {'quick' if st.quick else 'full'} mode, seed {st.seed}, {st.samples_l5:,} Monte Carlo samples "
         f"per L = 5 row and {st.samples_l40:,} per L = 40 row; numpy {np.__version__}, "
         f"scipy {scipy.__version__}, Python {platform.python_version()}."),
        "",
        ("Status: **matches** = the project's value rounded to the printed digits is the printed value; "
         f"**{MATCH_PREC}** = within one unit of the last printed digit and 1% relative (cause named); "
         f"**{NO}** = neither (cause named where found). Tail probabilities are compared using the exact value "
         "where computed."),
        "",
        "## Summary",
        "",
    ]
    counts = {s: sum(1 for c in rep.claims if c.status == s) for s in (MATCH, MATCH_PREC, NO)}
    head.append(f"{len(rep.claims)} printed numbers or claims: {counts[MATCH]} {MATCH}, "
                f"{counts[MATCH_PREC]} {MATCH_PREC}, {counts[NO]} {NO}.")
    head.append("")
    rows = [[c.section, c.what, c.paper, c.project, c.method, f"**{c.status}**" if c.status == NO else c.status,
             c.note] for c in rep.claims]
    head.append(table(["section", "claim", "paper", "project", "method", "status", "note"], rows))
    head.append("")
    return "\n".join(head + rep.parts).rstrip() + "\n"


def section_census(rep: Report, st: Settings) -> None:
    """Seed 004's Tables 1, 2 and 6 (:mod:`sufficientdp.report.census_tables`), computed by sufficientdp.census."""
    rep.add(census_section(dgm_samples=20_000 if st.quick else 200_000, seed=2020 + st.seed - 1))


def build(st: Settings) -> tuple[str, list[str]]:
    """The markdown of ``docs/reproduction.md`` for the run ``st``, and the library-vs-mpmath disagreements."""
    rep = Report()
    tails: dict[Any, Any] = {}
    qs = section_33(rep, st, tails)
    section_34(rep, st, qs, tails)
    s4 = section_4(rep, st, qs)
    k61 = section_61(rep, st, s4)
    section_eta(rep, st, tails)
    disagreements = section_crosscheck(rep, st, qs, k61)
    section_census(rep, st)
    return render(rep, st), disagreements


def settings_for(*, quick: bool, seed: int) -> Settings:
    """The run of ``make reproduce`` (4M Monte Carlo samples per row, every exact tail, every k of the (6.3)
    cross-check) or, with ``quick``, the fast one (100k / 50k samples, exact tails only for N = 1000, k step 20)."""
    return Settings(quick=quick, seed=seed, samples_l5=100_000 if quick else 4_000_000,
                    samples_l40=50_000 if quick else 4_000_000, exact_all=not quick,
                    k_check_step=20 if quick else 1)
