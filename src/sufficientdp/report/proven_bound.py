"""``docs/proven_bound.md``: how much noise the all-collections bound (``method="proven"``) costs.

Two questions, answered with :func:`sufficientdp.calibrate`, :func:`sufficientdp.ratio.proven.proven_tail` and the
best-e' checks of :mod:`sufficientdp.calibration.proven_grid`:

1. **Tightness at the paper's configurations** (seed 001 §3.3, ``papers/001_3d8ddaba8b46cf9c.txt``): L = 5,
   N in {1000, 2000, 3000, 5000}, epsilon = ln 2; and L = 40, N = 1e7, epsilon = 2; eta = 1e-3. For each: q and
   sd(d_hat)/sqrt(N) for local DP, the paper's heuristic, the homogeneous bound and the proven bound, and the
   proven bound on eta at every other method's q (how far the homogeneous q is from being certified over every
   collection).
2. **Cardinality reduction** (seed 001 §5, ERRATA 6: "at most w set bits => the noise of L_eff = 2w bits
   suffices", unproven): at the proven q for all of {0,1}^(2w), the all-collections bound for one-hot vectors and
   for vectors with at most w set bits (:func:`~sufficientdp.calibration.proven_grid.best_bound`); where it
   exceeds eta, the smallest q that bound certifies (:func:`~sufficientdp.calibration.proven_grid.certified_q`);
   and what ``calibrate`` returns for the domain (its search defects are listed).

An adapter (issue 11): it runs the computations (each timed; with a budget, in a child process stopped once it has
used more than ``budget`` CPU seconds), lays out the tables and words the verdicts; it holds no math.
``scripts/proven_report.py`` is the command line (run times are in its docstring).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import multiprocessing as mp
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from .._json import dumps, restore_infinities
from ..calibration import calibrate
from ..calibration.proven_grid import BISECT_REL, best_bound, certified_q
from ..parameters import local_q
from ..ratio.proven import Domain, proven_tail

LN2 = math.log(2.0)
ETA = 1e-3
METHODS = ("local", "paper-sigma", "homogeneous", "proven")

#: (L, N, epsilon) of the paper's tables (seed 001 §3.3, lambda = 2 at L = 5; lambda = e^2 at L = 40).
PAPER: tuple[tuple[int, int, float], ...] = (
    (5, 1000, LN2),
    (5, 2000, LN2),
    (5, 3000, LN2),
    (5, 5000, LN2),
    (40, 10**7, 2.0),
)
QUICK_PAPER: tuple[tuple[int, int, float], ...] = ((5, 1000, LN2),)

#: (kind, L, w) of the reduced domains: one-hot ("onehot", L, None) or at most w set bits ("weight", L, w).
CARD_DOMAINS: tuple[tuple[str, int, int | None], ...] = (
    ("onehot", 64, None),
    ("onehot", 1024, None),
    ("weight", 16, 1),
    ("weight", 16, 2),
    ("weight", 16, 3),
    ("weight", 40, 1),
    ("weight", 40, 2),
)
QUICK_CARD_DOMAINS: tuple[tuple[str, int, int | None], ...] = (("onehot", 16, None), ("weight", 8, 1))
CARD_N: tuple[int, ...] = (10**4, 10**5, 10**6)
QUICK_CARD_N: tuple[int, ...] = (10**4,)
CARD_EPSILON = 1.0
DEFAULT_BUDGET = 180.0
#: a budgeted job is also stopped after this many times its budget in wall-clock time (a heavily shared machine)
WALL_FACTOR = 4.0
#: the bisection (:func:`~sufficientdp.calibration.proven_grid.certified_q`) gets this many times the part-2
#: budget
REFINE_FACTOR = 6.0
#: relative difference of two q below which they count as equal (the proven search stops at ~4e-5 relative)
Q_REL_TOL = 1e-4


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------- running jobs


@dataclass
class Outcome:
    """One timed computation: ``value`` (a dict) when it finished, else ``status`` says why not.

    ``cpu`` is the CPU time of the computation (load-independent: the machine may be shared), ``seconds`` its
    wall-clock time."""

    value: dict[str, Any] | None
    seconds: float
    status: str = "ok"  # "ok", "skipped" (over budget) or "error: ..."
    cpu: float = 0.0

    @property
    def ok(self) -> bool:
        return self.value is not None


def _calibration(**kwargs: Any) -> dict[str, Any]:
    return calibrate(**kwargs).to_dict()


def _tail(**kwargs: Any) -> dict[str, Any]:
    r = proven_tail(**kwargs)
    return {"eta": r.eta, "kind": r.kind, "scope": r.scope, "worst_pair": r.details.get("worst_pair"),
            "epsilon_prime": r.details.get("epsilon_prime"), "notes": list(r.details.get("notes", []))}


def _run(fn: Callable[..., dict[str, Any]], kwargs: dict[str, Any]) -> tuple[str, dict[str, Any] | None, float]:
    c0 = time.process_time()
    try:
        status, value = "ok", fn(**kwargs)
    except Exception as exc:  # reported in the document
        status, value = f"error: {type(exc).__name__}: {exc}", None
    return status, value, time.process_time() - c0


def _child(fn: Callable[..., dict[str, Any]], kwargs: dict[str, Any], conn: Any) -> None:
    try:
        conn.send(_run(fn, kwargs))
    finally:
        conn.close()


def _cpu_seconds(pid: int | None) -> float | None:
    """CPU time (user + system) of a live process, from /proc; None where that is not available."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def timed(label: str, fn: Callable[..., dict[str, Any]], kwargs: dict[str, Any],
          budget: float | None = None) -> Outcome:
    """Run ``fn(**kwargs)``, timed, logging to stderr.

    With a budget it runs in a child process that is stopped (and the job reported as skipped) once it has used
    more than ``budget`` CPU seconds, or ``WALL_FACTOR * budget`` wall-clock seconds whatever the load."""
    log(f"{label} ...")
    t0 = time.perf_counter()
    if budget is None:
        status, value, cpu = _run(fn, kwargs)
    else:
        ctx = mp.get_context("fork")
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(fn, kwargs, send), daemon=True)
        proc.start()
        send.close()
        status, value, cpu = "skipped", None, 0.0
        while True:
            if recv.poll(1.0):
                try:
                    status, value, cpu = recv.recv()
                except EOFError:  # the child died without answering
                    status = f"error: worker exited with code {proc.exitcode}"
                break
            used = _cpu_seconds(proc.pid)
            wall = time.perf_counter() - t0
            if (used if used is not None else wall) > budget or wall > WALL_FACTOR * budget:
                cpu = used if used is not None else 0.0
                proc.terminate()
                break
        proc.join()
        recv.close()
    seconds = time.perf_counter() - t0
    if value is not None and "q" in value:
        log(f"{label}: q = {value['q']:.6g} (cpu {cpu:.1f} s, wall {seconds:.1f} s)")
    elif value is not None:
        log(f"{label}: eta bound = {value['eta']:.4g} (cpu {cpu:.1f} s, wall {seconds:.1f} s)")
    else:
        log(f"{label}: {status} (cpu {cpu:.1f} s, wall {seconds:.1f} s)")
    return Outcome(value, seconds, status, cpu)


# ----------------------------------------------------------------------------------------------------- formatting


def fmt_q(x: float | None) -> str:
    return "—" if x is None else f"{x:.5f}"


def fmt_g(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 1e-2 and abs(x) < 1e4:
        return f"{x:.{digits}g}"
    return f"{x:.{max(digits - 1, 1)}e}"


def fmt_eps(eps: float) -> str:
    return "ln 2" if abs(eps - LN2) < 1e-12 else f"{eps:g}"


def fmt_n(n: int) -> str:
    if n >= 10**4 and n == 10 ** round(math.log10(n)):
        return f"10^{round(math.log10(n))}"
    return str(n)


def fmt_s(o: Outcome | None) -> str:
    """``cpu / wall`` seconds, or why there is no result."""
    if o is None:
        return "—"
    times = f"{o.cpu:.0f} / {o.seconds:.0f}"
    return times if o.ok else f"{o.status} ({times})"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def q_compare(q_dom: float, q_ref: float) -> int:
    """-1 if ``q_dom`` is smaller than ``q_ref`` (less noise), 0 if equal within ``Q_REL_TOL``, +1 if larger."""
    if abs(q_dom - q_ref) <= Q_REL_TOL * max(q_dom, q_ref):
        return 0
    return -1 if q_dom < q_ref else 1


def verdict(q_dom: float | None, q_ref: float | None, at_ref: float | None, eta: float) -> str:
    """Does the noise of L_eff = 2w (the proven q for all of {0,1}^(2w)) suffice for the domain, by the proven
    bound?

    Decided only by the domain's all-collections bound *at the 2w q* (``at_ref``): "yes" when it is at most eta
    (a proof, for this configuration), "not proven" when it is above (the bound is an upper bound, so this does not
    refute the remark). Comparing the two calibrated q alone decides nothing: each is the smallest q the search
    found to about 2e-4 relative (its auxiliary e' search is not a global optimum), and eta is not closed under
    post-processing, so a bound <= eta at a smaller q does not carry over to a larger one."""
    if at_ref is None:
        return "— (bound at the 2w q not computed)"
    if at_ref <= eta:
        return f"yes (bound {at_ref / eta:.3g}× η at the 2w q)"
    return f"not proven (bound {at_ref / eta:.3g}× η at the 2w q)"


def certified(q_dom: float | None, q_ref: float | None, at_ref: float | None, eta: float) -> bool | None:
    """True / False as :func:`verdict` says yes / not proven; None without the numbers to decide."""
    v = verdict(q_dom, q_ref, at_ref, eta)
    return None if v.startswith("—") else v.startswith("yes")


def _needs(r: CardRow) -> str:
    """", the bound certifies q = ... (k× the 2w q)" when the bisection ran."""
    qb, qr = _val(r.refined, "q"), _val(r.ref, "q")
    if qb is None or qr is None:
        return ""
    return f" (it certifies q = {fmt_q(qb)}, {qb / qr:.3g}× the 2w q)"


def card_conclusion(rows: Sequence[CardRow], eta: float) -> str:
    """The verdict on ERRATA 6 over the rows, with the numbers it rests on."""
    ats = [(r, a) for r in rows if (a := _val(r.at_ref, "eta")) is not None]
    held = [(r, a) for r, a in ats if a <= eta]
    failed = [(r, a) for r, a in ats if a > eta]
    undecided = len(rows) - len(ats)
    if not ats:
        return "**Verdict on L_eff = 2w (ERRATA 6): not determined** — no row could be decided."

    def ws(group: Sequence[tuple[CardRow, float]]) -> str:
        return ", ".join(str(w) for w in sorted({r.w for r, _ in group}))

    def span(xs: Sequence[float], digits: int = 3) -> str:
        lo, hi = min(xs), max(xs)
        return f"{lo:.{digits}g}" if f"{lo:.{digits}g}" == f"{hi:.{digits}g}" else \
            f"{lo:.{digits}g}–{hi:.{digits}g}"

    held_text = ""
    if held:
        worst_r, worst_a = max(held, key=lambda t: t[1])
        held_text = (f"In {len(held)} of {len(ats)} decided rows (w = {ws(held)}) the all-collections bound for the "
                     f"domain at the proven q of {{0,1}}^(2w) is at most η ({span([a / eta for _, a in held])}× η; "
                     f"largest {fmt_g(worst_a)}, {_domain_label(worst_r.kind, worst_r.bits, worst_r.max_weight)}, "
                     f"N = {fmt_n(worst_r.population)}): there the noise of L_eff = 2w provably suffices. This is a "
                     "proof for exactly those (domain, N, ε, η), not of the remark in general.")
    if not failed:
        text = ("**Verdict on L_eff = 2w (ERRATA 6): holds at every configuration tested.** " + held_text)
    else:
        ratios = [qb / qr for r, _ in failed
                  if (qb := _val(r.refined, "q")) is not None and (qr := _val(r.ref, "q")) is not None]
        fail_text = (f"In {len(failed)} rows (w = {ws(failed)}) the bound at the 2w q is "
                     f"{span([a / eta for _, a in failed])}× η, so this proof does not certify the noise of "
                     "L_eff = 2w there"
                     + (f"; the q it does certify is {span(ratios)}× the 2w q" if ratios else "") + ": "
                     + "; ".join(f"{_domain_label(r.kind, r.bits, r.max_weight)}, N = {fmt_n(r.population)}: bound "
                                 f"{fmt_g(a)} = {a / eta:.3g}× η" + _needs(r) for r, a in failed)
                     + ". The bound is an upper bound, so these rows neither confirm nor refute the remark; "
                     "refuting it would need a collection of the domain whose exact η exceeds η at that q, and "
                     "none was searched for here.")
        w_held = {r.w for r, _ in held}
        w_failed = {r.w for r, _ in failed}
        split = "" if w_held & w_failed else (
            f" Short version: holds (proven) where tested for w = {ws(held)}; not determined for "
            f"w = {ws(failed)}"
            + (f", where the proof needs {span(ratios)}× the 2w q." if ratios else ".") if held else "")
        text = ("**Verdict on L_eff = 2w (ERRATA 6): not determined in general.**" + split + " "
                + (held_text + " " if held_text else "") + fail_text)
    if undecided:
        text += f" {undecided} rows could not be decided (skipped)."
    return text


# ------------------------------------------------------------------------------------------------------ part 1


@dataclass
class PaperRow:
    bits: int
    population: int
    epsilon: float
    cal: dict[str, Outcome] = field(default_factory=dict)
    proven_at: dict[str, Outcome] = field(default_factory=dict)  # proven bound at the q of each other method


def run_paper(configs: Sequence[tuple[int, int, float]], eta: float, budget: float | None) -> list[PaperRow]:
    rows = []
    for bits, n, eps in configs:
        row = PaperRow(bits, n, eps)
        for m in METHODS:
            row.cal[m] = timed(f"[paper] L={bits} N={n} eps={eps:.4g} {m}", _calibration,
                               {"bits": bits, "population": n, "epsilon": eps, "eta": eta, "method": m}, budget)
        for m in ("paper-sigma", "homogeneous"):
            c = row.cal[m]
            if c.ok and c.value is not None and c.value["q"] < 0.5:
                row.proven_at[m] = timed(f"[paper] L={bits} N={n} proven bound at the {m} q", _tail,
                                         {"q": c.value["q"], "bits": bits, "population": n, "epsilon": eps},
                                         budget)
        rows.append(row)
    return rows


def _val(o: Outcome | None, key: str) -> Any:
    return None if o is None or o.value is None else o.value.get(key)


def suspicious_paper(rows: Sequence[PaperRow]) -> list[str]:
    """Configurations where the proven q is below the homogeneous q (the homogeneous configuration is one of the
    pairs the proven bound covers, but both are upper bounds, so this is possible — and worth a look)."""
    out = []
    for r in rows:
        qp, qh = _val(r.cal.get("proven"), "q"), _val(r.cal.get("homogeneous"), "q")
        if qp is not None and qh is not None and q_compare(qp, qh) < 0:
            out.append(f"L = {r.bits}, N = {r.population}, ε = {fmt_eps(r.epsilon)}: proven q = {qp:.6f} < "
                       f"homogeneous q = {qh:.6f} (ratio {qp / qh:.4f}; homogeneous bound at its own q "
                       f"{fmt_g(_val(r.cal.get('homogeneous'), 'eta_at_q'))}, proven bound at the proven q "
                       f"{fmt_g(_val(r.cal.get('proven'), 'eta_at_q'))})")
    return out


def paper_section(rows: Sequence[PaperRow], eta: float) -> str:
    detail = []
    for r in rows:
        for m in METHODS:
            o = r.cal[m]
            own = _val(o, "eta_at_q")
            if m == "local":
                at = "0 (local DP)"
                own_s = "0"
            elif m == "proven":
                at = fmt_g(own)
                own_s = fmt_g(own)
            else:
                at = fmt_g(_val(r.proven_at.get(m), "eta"))
                own_s = "— (heuristic)" if m == "paper-sigma" else fmt_g(own)
            detail.append([str(r.bits), fmt_n(r.population), fmt_eps(r.epsilon), m,
                           str(_val(o, "scope") or "—"), fmt_q(_val(o, "q")), fmt_g(_val(o, "sigma_per_sqrt_n"), 4),
                           own_s, at, fmt_s(o)])
    summary = []
    for r in rows:
        sd = {m: _val(r.cal[m], "sigma_per_sqrt_n") for m in METHODS}
        ratio_h = None if sd["proven"] is None or sd["homogeneous"] is None else sd["proven"] / sd["homogeneous"]
        ratio_s = None if sd["proven"] is None or sd["paper-sigma"] is None else sd["proven"] / sd["paper-sigma"]
        gain = None if sd["proven"] is None or sd["local"] is None else sd["local"] / sd["proven"]
        at_h = _val(r.proven_at.get("homogeneous"), "eta")
        at_s = _val(r.proven_at.get("paper-sigma"), "eta")
        summary.append([str(r.bits), fmt_n(r.population), fmt_eps(r.epsilon), fmt_g(ratio_h, 4), fmt_g(ratio_s, 4),
                        fmt_g(gain, 4),
                        "—" if at_h is None else f"{fmt_g(at_h)} ({at_h / eta:.3g}× η)",
                        "—" if at_s is None else f"{fmt_g(at_s)} ({at_s / eta:.3g}× η)",
                        str(_val(r.proven_at.get("homogeneous"), "worst_pair") or "—")])
    parts = [
        "## 1. Tightness at the paper's configurations",
        "",
        f"η = {fmt_g(eta)} throughout. Each row is one `calibrate(bits=L, population=N, epsilon=ε, eta=η, "
        "method=…)`. \"η at q (own)\" is what the method itself states at its q; \"proven bound at q\" is "
        "`proven_tail(q=…)` at that same q: an upper bound on η over every pair of neighbouring collections.",
        "",
        table(["L", "N", "ε", "method", "scope", "q", "sd(d̂)/√N", "η at q (own)", "proven bound at q",
               "time cpu / wall (s)"], detail),
        "",
        "Summary: the cost of covering every collection, and how far the homogeneous q is from being certified "
        "over every collection.",
        "",
        table(["L", "N", "ε", "sd proven / sd homogeneous", "sd proven / sd paper-sigma", "sd local / sd proven",
               "proven bound at homogeneous q", "proven bound at paper-sigma q", "worst pair type at homogeneous q"],
              summary),
    ]
    sus = suspicious_paper(rows)
    parts += ["", "**Check: proven q ≥ homogeneous q.** "
              + ("Holds at every configuration above (within the search precision, "
                 f"{Q_REL_TOL:g} relative)." if not sus else
                 "Fails at: " + "; ".join(sus) + ". Both are upper bounds (the homogeneous configuration is one of "
                 "the pairs the proven bound covers), so this means the homogeneous bound is looser than the "
                 "proven one there; it does not invalidate either, but deserves a look.")]
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------------------ part 2


@dataclass
class CardRow:
    kind: str
    bits: int
    max_weight: int | None
    population: int
    dom: Outcome | None
    ref: Outcome | None
    at_ref: Outcome | None = None  # the domain's proven bound at the q of {0,1}^(2w)
    refined: Outcome | None = None  # smallest q the best-e' bound certifies (rows not certified)

    @property
    def w(self) -> int:
        return 1 if self.kind == "onehot" else int(self.max_weight or 0)


def _domain_label(kind: str, bits: int, w: int | None) -> str:
    return Domain(bits=bits, kind=kind, max_weight=w).label


def run_card(domains: Sequence[tuple[str, int, int | None]], ns: Sequence[int], epsilon: float, eta: float,
             budget: float | None) -> list[CardRow]:
    refs: dict[tuple[int, int], Outcome] = {}
    rows = []
    for kind, bits, w in domains:
        l_eff = 2 if kind == "onehot" else 2 * int(w or 0)
        dom_obj = Domain(bits=bits, kind=kind, max_weight=w)
        for n in ns:
            label = f"[card] {dom_obj.label} N={n}"
            if (l_eff, n) not in refs:
                refs[(l_eff, n)] = timed(f"[card] all of {{0,1}}^{l_eff} N={n}", _calibration,
                                         {"bits": l_eff, "population": n, "epsilon": epsilon, "eta": eta,
                                          "method": "proven"}, budget)
            ref = refs[(l_eff, n)]
            kwargs: dict[str, Any] = {"bits": bits, "population": n, "epsilon": epsilon, "eta": eta,
                                      "method": "proven"}
            if kind == "onehot":
                kwargs["onehot"] = True
            else:
                kwargs["max_weight"] = w
            dom = timed(label, _calibration, kwargs, budget)
            at_ref = None
            q_ref = _val(ref, "q")
            refined = None
            if q_ref is not None and q_ref < 0.5:
                at_ref = timed(f"{label} proven bound at the q of {{0,1}}^{l_eff}", best_bound,
                               {"q": q_ref, "bits": bits, "population": n, "epsilon": epsilon,
                                "domain": dom_obj}, budget)
                q_dom = _val(dom, "q")
                at = _val(at_ref, "eta")
                if at is not None and at > eta and q_dom is not None and q_dom > q_ref:
                    refined = timed(f"{label} smallest q certified (best e')", certified_q,
                                    {"q_fail": q_ref, "q_ok": q_dom, "bits": bits, "population": n,
                                     "epsilon": epsilon, "eta": eta, "domain": dom_obj},
                                    None if budget is None else REFINE_FACTOR * budget)
            rows.append(CardRow(kind, bits, w, n, dom, ref, at_ref, refined))
    return rows


def _local_q_for(kind: str, bits: int, w: int | None, epsilon: float) -> float:
    """Local DP's q for the domain (largest distance 2 for one-hot, min(L, 2w) for weight <= w)."""
    return local_q(2 if kind == "onehot" else min(bits, 2 * int(w or 0)), epsilon)


def card_section(rows: Sequence[CardRow], epsilon: float, eta: float, budget: float | None) -> str:
    out_rows = []
    skipped = []
    fallbacks = []
    search_defects = []
    counts = {True: 0, False: 0, None: 0}
    prev: dict[tuple[str, int, int | None], tuple[int, float]] = {}
    for r in rows:
        qd, qr, at = _val(r.dom, "q"), _val(r.ref, "q"), _val(r.at_ref, "eta")
        lib = _val(r.at_ref, "eta_library")
        sd_d, sd_r = _val(r.dom, "sigma_per_sqrt_n"), _val(r.ref, "sigma_per_sqrt_n")
        label = _domain_label(r.kind, r.bits, r.max_weight)
        where = f"{label}, N = {fmt_n(r.population)}"
        for what, o in (("calibration", r.dom), ("bound at the 2w q", r.at_ref), ("{0,1}^(2w) calibration", r.ref),
                        ("bisection", r.refined)):
            if o is not None and o.status == "skipped":
                skipped.append(f"{where} ({what})")
        notes = [*(_val(r.dom, "notes") or []), *(_val(r.at_ref, "notes") or [])]
        if any("too many pair types" in str(n) for n in notes):
            fallbacks.append(where)
        counts[certified(qd, qr, at, eta)] += 1
        # the smallest domain q that the best-e' bound certifies: <= the 2w q when certified there, else bisected
        if at is not None and at <= eta and qr is not None:
            best_q, best_s, upto = qr, f"≤ {fmt_q(qr)} (the 2w q)", "≤ "
            best_sd = sd_r
        else:
            best_q, upto = _val(r.refined, "q"), ""
            best_s = fmt_q(best_q)
            best_sd = _val(r.refined, "sigma_per_sqrt_n")
        if qd is not None:
            key = (r.kind, r.bits, r.max_weight)
            q_loc = _local_q_for(r.kind, r.bits, r.max_weight, epsilon)
            if abs(qd - q_loc) <= 1e-6 * q_loc and r.population > 1:
                search_defects.append(f"{where}: calibrate returned local DP's q = {fmt_q(qd)}"
                                      + ("" if best_q is None else f", while q = {fmt_q(best_q)} is certified"))
            elif best_q is not None and qd > 1.05 * best_q:
                search_defects.append(f"{where}: calibrate returned q = {fmt_q(qd)}, {qd / best_q:.3g}× the "
                                      f"q = {fmt_q(best_q)} that the bound certifies")
            if key in prev and prev[key][0] < r.population and qd > prev[key][1] * (1 + Q_REL_TOL):
                search_defects.append(f"{where}: calibrate's q {fmt_q(qd)} is larger than at N = "
                                      f"{fmt_n(prev[key][0])} ({fmt_q(prev[key][1])}), not smaller")
            prev[key] = (r.population, qd)
        out_rows.append([
            label, str(r.w), fmt_n(r.population), fmt_q(qr), fmt_g(at), fmt_g(lib),
            verdict(qd, qr, at, eta),
            fmt_q(qd), best_s,
            upto + fmt_g(None if best_q is None or qr is None else best_q / qr, 4),
            f"{fmt_g(sd_r, 4)} / {fmt_g(sd_d, 4)} / {upto}{fmt_g(best_sd, 4)}",
            fmt_s(r.ref), fmt_s(r.at_ref), fmt_s(r.dom), fmt_s(r.refined),
        ])
    parts = [
        "## 2. Cardinality reduction: is the noise of L_eff = 2w enough?",
        "",
        "Seed 001 §5 remarks that reports with at most w set bits need only the noise of L_eff = 2w bits. There "
        "is no proof (ERRATA 6). Here both sides are computed with the *proven* bound, so they are comparable. "
        "\"The noise of L_eff = 2w\" is the proven q for every vector of {0,1}^(2w) "
        "(`calibrate(bits=2w, method=\"proven\")`; one-hot is w = 1, so 2 bits). At that q the all-collections "
        "bound for the domain (one-hot vectors of L bits, or at most w set bits of L) is evaluated: "
        "`proven_tail(q=…, bits=L, domain=…)`, and also `evaluate(…, epsilon_prime=e′)` on a grid of the "
        "auxiliary e′ (`sufficientdp.calibration.proven_grid.best_bound`; every e′ < ε gives a valid bound, so the "
        "smallest is reported). If that bound is at most η, the noise of 2w bits provably suffices for the domain at that N, "
        f"ε and η. ε = {fmt_g(epsilon)}, η = {fmt_g(eta)}.",
        "",
        "\"Noise of 2w bits suffices?\" reads **yes** when the domain's bound at the q of {0,1}^(2w) is at most "
        "η. **not proven** means the bound there exceeds η; the bound is an upper bound, so this does not show "
        "that the paper's remark is false, only that this proof does not support it there. For those rows the "
        "last q column is the smallest q that the best-e′ bound certifies for the domain (geometric bisection "
        f"between the 2w q and calibrate's q, to {BISECT_REL:g} relative): the noise this proof needs. "
        "\"calibrate's q\" is what `calibrate(bits=L, max_weight=w | onehot=True, method=\"proven\")` returns "
        "today (valid: its own bound at that q is at most η). The q of {0,1}^(2w) comes from the same search, "
        "so it may sit a little above the smallest q its bound certifies (η is not closed under "
        "post-processing, so a bound ≤ η at one q does not carry over to another q; only the bound at the q "
        "shown decides).",
        "",
        table(["domain", "w", "N", "q of {0,1}^(2w) (proven)", "domain bound at the 2w q (best e′)",
               "proven_tail's own value there", "noise of 2w bits suffices?", "calibrate's q (domain)",
               "smallest domain q certified (best e′)", "that q / 2w q",
               "sd/√N at the 2w q / calibrate's q / certified q", "time {0,1}^(2w) cpu / wall (s)", "time bound at 2w q (s)",
               "time calibrate (s)", "time bisection (s)"],
              out_rows),
        "",
        f"Counted: the noise of L_eff = 2w is certified by the proven bound in {counts[True]} of "
        f"{counts[True] + counts[False]} decided rows and not certified in {counts[False]}"
        + (f"; {counts[None]} rows could not be decided (skipped)." if counts[None] else "."),
        "",
        card_conclusion(rows, eta),
    ]
    if search_defects:
        parts += ["", "**Calibration search defects** (the product's `calibrate` for these domains returns more "
                  "noise than its own bound needs; valid, but not the smallest q): " + "; ".join(search_defects)
                  + ". proven_tail's e′ search also returns bounds well above its best e′ for weight domains "
                  "(compare the two bound columns). Both are in `sufficientdp.calibration.proven` / "
                  "`sufficientdp.ratio.proven`, not in this script."]
    if skipped:
        parts += ["", f"**Skipped** (over the {fmt_g(budget)} CPU-second budget per computation): "
                  + "; ".join(skipped) + "."]
    else:
        parts += ["", "Nothing was skipped" + (f" (budget {fmt_g(budget)} CPU seconds per computation)."
                                               if budget is not None else ".")]
    if fallbacks:
        parts += ["", "**Fallback:** for " + "; ".join(fallbacks) + " the weight domain has too many pair types to "
                  "enumerate, so the proven bound used all of {0,1}^L (valid for the domain, looser)."]
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------------------ document


EXPLANATION = """\
## 3. What the columns mean

* **q** — the flip probability of every bit (larger q = more noise; q = 1/2 is pure noise).
* **sd(d̂)/√N** — the exact standard deviation of an estimated count of set bits, divided by √N:
  √(q(1 − q))/(1 − 2q) (seed 001 §4). The error of the product's estimates scales with it; a ratio of two of
  them is how many times larger the error is.
* **scope** — for which collections the method's statement holds:
  * **all-collections** (`proven`): P[privacy loss > ε] ≤ η for *every* pair of neighbouring collections of the
    domain, in both directions (privacy-blanket dominating pair, `docs/proofs/blanket.md`). This is a proof.
  * **homogeneous** (`homogeneous`, `paper-sigma`): only the paper's configuration (N − 1 identical vectors and
    one neighbour). `homogeneous` is a rigorous bound for that configuration; `paper-sigma` is the paper's
    mean + 3·sd heuristic (eq. 3.12), not a bound on η at all (ERRATA 3). The homogeneous configuration is *not*
    the worst case (ERRATA 5, `docs/worst_case.md`), so other collections can exceed η at these q.
  * **per-report** (`local`): local DP; every single report already has privacy loss ≤ ε, so η = 0 for every
    collection. A proof, with much more noise.
* **η at q (own)** — what the method itself states at its q (for `homogeneous`: its bound for the homogeneous
  configuration; for `proven`: the all-collections bound).
* **proven bound at q** — the all-collections bound evaluated at that method's q. Above η means the proof cannot
  certify that q for every collection. It is an upper bound, so it does not by itself show that some collection
  really exceeds η (the exhaustive search of `docs/worst_case.md` does show that at small sizes).
* **worst pair type** — the type of neighbouring pair (x, x′) that gives the largest bound; for all of {0,1}^L
  it is the Hamming distance j between x and x′.
* **time cpu / wall** — CPU seconds and wall-clock seconds of that computation on the machine that generated the
  file (the bound evaluates two pair types at a time on two threads, so CPU time can exceed wall-clock time; the
  machine was shared with other jobs, so the wall-clock time is only indicative)."""


def _git_commit(root: Path) -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _out_to(o: Outcome | None) -> dict[str, Any] | None:
    return None if o is None else {"value": o.value, "seconds": o.seconds, "status": o.status, "cpu": o.cpu}


def _out_from(d: dict[str, Any] | None) -> Outcome | None:
    return None if d is None else Outcome(d["value"], d["seconds"], d["status"], d["cpu"])


def results_to_json(state: dict[str, Any]) -> str:
    """Everything :func:`render` needs, as JSON (so the document can be re-rendered without recomputing)."""
    paper = [{"bits": r.bits, "population": r.population, "epsilon": r.epsilon,
              "cal": {m: _out_to(o) for m, o in r.cal.items()},
              "proven_at": {m: _out_to(o) for m, o in r.proven_at.items()}} for r in state["paper_rows"]]
    card = [{"kind": r.kind, "bits": r.bits, "max_weight": r.max_weight, "population": r.population,
             "dom": _out_to(r.dom), "ref": _out_to(r.ref), "at_ref": _out_to(r.at_ref),
             "refined": _out_to(r.refined)} for r in state["card_rows"]]
    # Strict JSON (sufficientdp._json): an infinite bound is written "inf" (read back by results_from_json), NaN
    # null; numpy scalars as numbers, other objects as their str.
    return dumps({"meta": state["meta"], "paper_rows": paper, "card_rows": card}, fallback=str, indent=1)


def results_from_json(text: str) -> dict[str, Any]:
    """The results saved by :func:`results_to_json` (its ``"inf"`` strings are infinite floats again)."""
    raw = restore_infinities(json.loads(text))
    paper = []
    for d in raw["paper_rows"]:
        row = PaperRow(d["bits"], d["population"], d["epsilon"])
        row.cal = {m: o for m, v in d["cal"].items() if (o := _out_from(v)) is not None}
        row.proven_at = {m: o for m, v in d["proven_at"].items() if (o := _out_from(v)) is not None}
        paper.append(row)
    card = [CardRow(d["kind"], d["bits"], d["max_weight"], d["population"], _out_from(d["dom"]),
                    _out_from(d["ref"]), _out_from(d["at_ref"]), _out_from(d["refined"])) for d in raw["card_rows"]]
    return {"meta": raw["meta"], "paper_rows": paper, "card_rows": card}


def compute(*, paper: Sequence[tuple[int, int, float]], card_domains: Sequence[tuple[str, int, int | None]],
            card_ns: Sequence[int], eta: float = ETA, card_epsilon: float = CARD_EPSILON,
            budget: float | None = DEFAULT_BUDGET, paper_budget: float | None = None,
            command: str = "", quick: bool = False, repo: Path | None = None) -> dict[str, Any]:
    """Run every computation; the results and their provenance (see :func:`render`; ``repo``: the git work tree
    whose commit is recorded, default the one holding this file)."""
    t0 = time.perf_counter()
    started = _dt.datetime.now(_dt.UTC)
    commit = _git_commit(repo if repo is not None else Path(__file__).resolve().parents[3])  # at the start: the library is imported now, whatever is committed later
    paper_rows = run_paper(paper, eta, paper_budget)
    card_rows = run_card(card_domains, card_ns, card_epsilon, eta, budget)
    meta = {"eta": eta, "card_epsilon": card_epsilon, "budget": budget, "command": command, "quick": quick,
            "started": started.strftime("%Y-%m-%d %H:%M UTC"), "minutes": (time.perf_counter() - t0) / 60,
            "version": __version__, "commit": commit, "python": sys.version.split()[0]}
    return {"meta": meta, "paper_rows": paper_rows, "card_rows": card_rows}


def render(state: dict[str, Any], *, rendered_by: str = "") -> tuple[str, list[str]]:
    """The Markdown document, and the list of suspicious findings (proven q below homogeneous q)."""
    meta = state["meta"]
    eta = meta["eta"]
    head = [
        "# The proven bound: what covering every collection costs",
        "",
        "<!-- Generated by scripts/proven_report.py; do not edit by hand. -->",
        "",
        "`method=\"proven\"` bounds η = P[privacy loss > ε] over **every** pair of neighbouring collections "
        "(`docs/proofs/blanket.md`, `sufficientdp.ratio.proven`). The paper's own calibrations only cover its "
        "homogeneous configuration, which is not the worst case (ERRATA 5). This page measures how much more "
        "noise the proof needs than the homogeneous bound, how far the homogeneous q is from being certified, and "
        "whether the paper's cardinality reduction (ERRATA 6) survives under the proof.",
    ]
    if meta["quick"]:
        head += ["", "**Quick run (`--quick`): a reduced grid, for checking the script. Not the full tables.**"]
    tail = [
        "## Provenance",
        "",
        f"* Command: `{meta['command']}`" if meta["command"] else "* Command: (called from Python)",
        f"* Date: {meta['started']}; total run time {meta['minutes']:.1f} min",
        f"* sufficientdp {meta['version']}, git {meta['commit']} when the run started; Python {meta['python']}",
    ]
    if rendered_by:
        tail.append(f"* Rendered from the saved results by `{rendered_by}`")
    doc = "\n".join(head) + "\n\n" + paper_section(state["paper_rows"], eta) + "\n\n" + \
        card_section(state["card_rows"], meta["card_epsilon"], eta, meta["budget"]) + "\n\n" + EXPLANATION + \
        "\n\n" + "\n".join(tail) + "\n"
    return doc, suspicious_paper(state["paper_rows"])
