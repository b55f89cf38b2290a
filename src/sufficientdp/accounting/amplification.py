"""Privacy amplification by shuffling: closed-form (epsilon, delta) bounds for shuffled epsilon0-LDP reports.

Setting (all three papers): n people each apply an ``epsilon0``-LDP local randomizer to their own datum (pure
local DP) and a trusted shuffler releases the multiset of the n outputs. Neighbouring datasets differ in one
person's datum (replacement). The shuffled release is then ``(epsilon, delta)``-DP with ``epsilon`` much smaller
than ``epsilon0`` once n is large. Every function here returns an :class:`AmplificationBound` with
``kind="bound"``: an upper bound on the shuffled epsilon (or delta) *inside the stated validity range*, *if the
statement is what the paper proves*; outside the range the result has ``valid=False`` and names the condition that
failed (no number is extrapolated).

**Verification status (read this first).** None of the three statements has been checked against the papers' own
text: the full texts of arXiv:1811.12469, arXiv:1903.02837 and arXiv:2012.12803 were not reachable with the tools
available (stored web pages hold only the opening of each paper; no copy of the theorem pages was found). Each
result therefore carries ``verified=False`` and a ``provenance`` naming what it *was* checked against: the authors'
own reference code (BBGN, FMT) or third-party implementations/restatements (EFMRTT). Theorem numbers are as given
by those sources, not read from the papers. Independently of the papers, the tests check every bound against the
*exact* privacy profile of shuffled binary randomized response (:mod:`sufficientdp.ratio.single_bit`), which any
valid bound for all ``epsilon0``-LDP randomizers must dominate; that check can refute a bound, not prove one.

Bounds (the statement each function evaluates, and its sources, are in its docstring):

* :func:`efmrtt19_epsilon` — Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, "Amplification by
  shuffling: from local to central differential privacy via anonymity", SODA 2019 (arXiv:1811.12469), simplified
  form of the amplification theorem (Theorem 7 per third-party sources): ``epsilon = 12 epsilon0
  sqrt(log(1/delta)/n)`` for ``epsilon0 < 1/2``, ``delta < 1/100``, ``n >= 1000``. Unverified against the paper.
* :func:`bbgn19_delta` / :func:`bbgn19_epsilon` — Balle, Bell, Gascón, Nissim, "The privacy blanket of the
  shuffle model", CRYPTO 2019 (arXiv:1903.02837): the numerical privacy-blanket bound with Hoeffding's inequality,
  instantiated with the *generic* parameters of an ``epsilon0``-LDP randomizer (``gamma >= e**-epsilon0``, range
  ``b = (e**eps + 1)(e**epsilon0 - e**-epsilon0)``), exactly as the authors' reference code evaluates it. Theorem
  number unverified; formula verified against the authors' code only.
* :func:`fmt21_epsilon` — Feldman, McMillan, Talwar, "Hiding among the clones: a simple and nearly optimal analysis
  of privacy amplification by shuffling", FOCS 2021 (arXiv:2012.12803), closed form (Theorem 3.1 per restatements),
  evaluated as the authors' reference implementation evaluates it. Verified against the authors' code only.

Where two readings differ we take the larger epsilon and the stricter condition (see each function), so the
result stays an upper bound under either reading.

Inversion: :func:`max_epsilon0` finds the largest ``epsilon0`` at which a bound certifies ``(epsilon, delta)`` at
n (bisection; returns the feasible end, checked). :func:`flip_probability_for_epsilon0` maps a per-person
``epsilon0`` over ``L`` bits and ``k`` reports to the bit flip probability q (pure-DP composition inside the
local randomizer: ``epsilon0 = k L log(p/q)``, exact for bit-vector randomized response under replacement).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .._errors import ParameterError
from .._numerics.search import Bracket, Midpoint, scan, search, verdict
from .._validation import check_int, check_open_interval, check_positive_finite, renamed_fields, renamed_params
from ..parameters import local_q

__all__ = [
    "BOUNDS",
    "AmplificationBound",
    "Epsilon0Result",
    "amplification_epsilon",
    "bbgn19_delta",
    "bbgn19_epsilon",
    "efmrtt19_epsilon",
    "flip_probability_for_epsilon0",
    "fmt21_condition",
    "fmt21_epsilon",
    "max_epsilon0",
]

#: Names accepted by :func:`amplification_epsilon` and :func:`max_epsilon0`.
BOUNDS = ("efmrtt19", "bbgn19", "fmt21")

_REFERENCES = {
    "efmrtt19": ("Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, SODA 2019 (arXiv:1811.12469), "
                 "Thm 7 (number per third-party sources; unverified)"),
    "bbgn19": ("Balle, Bell, Gascon, Nissim, CRYPTO 2019 (arXiv:1903.02837), privacy blanket + Hoeffding, generic "
               "epsilon0-LDP parameters (theorem number unverified)"),
    "fmt21": ("Feldman, McMillan, Talwar, FOCS 2021 (arXiv:2012.12803), Thm 3.1 (number per restatements; "
              "unverified)"),
}

_STATEMENTS = {
    "efmrtt19": ("unverified against the paper's text: epsilon = 12 epsilon0 sqrt(log(1/delta)/n), for "
                 "epsilon0 < 1/2, delta < 1/100, n >= 1000 (as restated by implementations)"),
    "bbgn19": ("unverified against the paper's text: delta <= b^2/(4 a gamma n) * "
               "(1 - gamma (1 - exp(-2 a^2/b^2)))^n with a = e^eps - 1, gamma = e^-epsilon0, "
               "b = (e^eps + 1)(e^epsilon0 - e^-epsilon0), for 0 < eps < epsilon0 (as evaluated by the authors' "
               "reference code)"),
    "fmt21": ("unverified against the paper's text: epsilon = log(1 + (e^epsilon0 - 1)/(e^epsilon0 + 1) * "
              "(8 sqrt(e^epsilon0 log(4/delta)/n) + 8 e^epsilon0/n)), for epsilon0 <= log(n/(16 log(4/delta))) "
              "(stricter of the restated log(2/delta) and the authors' code's log(4/delta); evaluated with the "
              "authors' implementation's refinement, never smaller)"),
}

#: What each statement was actually checked against (none against the paper's own text).
_PROVENANCE = {
    "efmrtt19": ("implementations only: BorjaBalle/amplification-by-shuffling@"
                 "1778a0dd16405cb10d780d5f1878ed0b1fb76f2e shuffleddp/amplification_bounds.py class Erlingsson "
                 "(12*eps0*sqrt(log(1/delta)/n); eps0 <= 0.5, n >= 1000, delta <= 0.01) and rootcoder007/morie "
                 "shuffle_model (cites Thm 7, arXiv:1811.12469v2 p. 11: n >= 1000, 0 < eps0 < 1/2, "
                 "0 < delta < 1/100)"),
    "bbgn19": ("authors' reference code only: BorjaBalle/amplification-by-shuffling@"
               "1778a0dd16405cb10d780d5f1878ed0b1fb76f2e shuffleddp/amplification_bounds.py "
               "Hoeffding.get_delta with shuffleddp/mechanisms.py LDPMechanism (get_gamma lower bound e^-eps0, "
               "get_range_l)"),
    "fmt21": ("authors' reference implementation only: apple/ml-shuffling-amplification@"
              "993d285a546114bf8c70c33d053dca322a755707 computeamplification.py closedformanalysis"),
}

#: Whether the statement was checked against the paper's own text. False for all three (see the module docstring).
_VERIFIED = {"efmrtt19": False, "bbgn19": False, "fmt21": False}


def _up(x: float, ulps: int = 4) -> float:
    """``x`` moved up by a few ulps: covers the rounding of a handful of floating-point operations."""
    for _ in range(ulps):
        x = math.nextafter(x, math.inf)
    return x


@renamed_fields({"n": "population"})
@dataclass(frozen=True, slots=True, kw_only=True)
class AmplificationBound:
    """An amplification-by-shuffling bound evaluated at one configuration.

    Attributes:
        bound: ``"efmrtt19"``, ``"bbgn19"`` or ``"fmt21"``.
        epsilon0: local (per-person, pure) DP level of the randomizer.
        population: n, the people whose reports are shuffled together (``n``: its former name, a deprecated
            read-only property).
        epsilon: the shuffled epsilon (None when the theorem does not apply, ``valid=False``).
        delta: the shuffled delta (None when not applicable).
        valid: whether the theorem's conditions hold at these parameters.
        failed_condition: the condition that failed (None if valid).
        kind: always ``"bound"``: an upper bound, rounded up (if the statement is what the paper proves).
        reference: paper and theorem.
        statement: the formula and its validity range, prefixed ``"unverified: ..."`` unless ``verified``.
        verified: whether the statement was checked against the paper's own text (False for all three bounds
            here: do not present the number as a verified guarantee).
        provenance: what the statement *was* checked against (repository, path, commit).
    """

    bound: str
    epsilon0: float
    population: int
    epsilon: float | None
    delta: float | None
    valid: bool
    failed_condition: str | None
    kind: str = "bound"
    reference: str = ""
    statement: str = ""
    verified: bool = False
    provenance: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def _result(bound: str, epsilon0: float, n: int, epsilon: float | None, delta: float | None,
            failed: str | None) -> AmplificationBound:
    return AmplificationBound(bound=bound, epsilon0=epsilon0, population=n, epsilon=epsilon if failed is None else None,
                              delta=delta, valid=failed is None, failed_condition=failed,
                              reference=_REFERENCES[bound], statement=_STATEMENTS[bound],
                              verified=_VERIFIED[bound], provenance=_PROVENANCE[bound])


def _check_common(epsilon0: Any, n: Any, delta: Any) -> tuple[float, int, float]:
    return (check_positive_finite("epsilon0", epsilon0), check_int("population", n, minimum=1),
            check_open_interval("delta", delta, 0.0, 1.0))


# ---------------------------------------------------------------------------------------------------- EFMRTT 2019
@renamed_params({"n": "population"})
def efmrtt19_epsilon(epsilon0: float, population: int, delta: float) -> AmplificationBound:
    """Erlingsson et al. (SODA 2019), simple amplification bound ``epsilon = 12 epsilon0 sqrt(log(1/delta) / n)``.

    **Unverified against the paper's text** (``verified=False``). The statement as restated by the sources we could
    read: Theorem 7 of arXiv:1811.12469 (for the shuffled sequence of possibly adaptively chosen ``epsilon0``-LDP
    randomizers) gives a general bound
    ``epsilon <= epsilon1 sqrt(2 n log(1/delta)) + n epsilon1 (e^epsilon1 - 1)``,
    ``epsilon1 = 2 e^(2 epsilon0) (e^epsilon0 - 1) / n``, and, for ``n >= 1000``, ``0 < epsilon0 < 1/2`` and
    ``0 < delta < 1/100``, the simple form evaluated here. Sources: rootcoder007/morie ``shuffle_model`` (states it
    read Theorem 7 from p. 11 of arXiv:1811.12469v2) and the privacy-blanket authors' code
    BorjaBalle/amplification-by-shuffling@1778a0d ``shuffleddp/amplification_bounds.py`` class ``Erlingsson``
    (same constant 12, conditions ``eps0 <= 0.5``, ``n >= 1000``, ``delta <= 0.01``). We apply the stricter, strict
    inequalities ``epsilon0 < 1/2`` and ``delta < 1/100``. Only the simple form is implemented.

    Args:
        epsilon0: local DP level, > 0.
        n: people (reports shuffled), >= 1.
        delta: target delta in (0, 1).

    Returns:
        An :class:`AmplificationBound` (``valid=False`` outside the theorem's range).

    References:
        arXiv:1811.12469 (Theorem 7 per the sources above; theorem text not checked).

    Examples:
        >>> r = efmrtt19_epsilon(0.4, 10_000, 1e-6)
        >>> round(r.epsilon, 4)  # 12 * 0.4 * sqrt(log(1e6) / 1e4)
        0.1784
    """
    n = population  # the papers' n
    epsilon0, n, delta = _check_common(epsilon0, n, delta)
    failed = None
    if not epsilon0 < 0.5:
        failed = f"epsilon0 < 1/2 (got {epsilon0:g})"
    elif not delta < 0.01:
        failed = f"delta < 1/100 (got {delta:g})"
    elif n < 1000:
        failed = f"n >= 1000 (got {n})"
    eps = _up(12.0 * epsilon0 * math.sqrt(-math.log(delta) / n))
    return _result("efmrtt19", epsilon0, n, eps, delta, failed)


# ---------------------------------------------------------------------------------------------------- FMT 2021
def _fmt21_value(epsilon0: float, n: int, delta: float) -> float:
    e0 = math.exp(epsilon0)
    a = 8.0 * math.sqrt(e0 * math.log(4.0 / delta) / n)
    c = 8.0 * e0 / n
    # Theorem 3.1 as printed: (e^e0 - 1)/(e^e0 + 1) = (1 - e^-e0)/(1 + e^-e0)
    printed = math.log1p(math.tanh(0.5 * epsilon0) * (a + c))
    # reference implementation (closedformanalysis): (1 - e^-e0)/(1 + e^(-e0 - log(1 + a + c))) >= printed factor
    e = math.log1p(a + c)
    refined = math.log1p(-math.expm1(-epsilon0) / (1.0 + math.exp(-epsilon0 - e)) * (a + c))
    return _up(max(printed, refined))


def _fmt21_limit(n: int, delta: float) -> float:
    """Largest epsilon0 the FMT closed form is applied to: ``log(n / (16 log(4/delta)))`` (-inf if n too small).

    Restatements of Theorem 3.1 print ``log(n / (16 log(2/delta)))``; the authors' ``closedformanalysis`` declares
    ``epsilon0 > log(n / (16 log(4/delta)))`` "not a valid parameter regime" and returns epsilon0. Neither was
    checked against the paper's text, so we apply the stricter one (``log(4/delta)``), valid under either reading.
    """
    arg = n / (16.0 * math.log(4.0 / delta))
    return math.log(arg) if arg > 1.0 else -math.inf


@renamed_params({"n": "population"})
def fmt21_condition(epsilon0: float, population: int, delta: float) -> str | None:
    """The failed validity condition of the FMT closed form at these parameters, or None if it applies.

    The condition is ``0 < epsilon0 <= log(n / (16 log(4/delta)))`` (see :func:`_fmt21_limit` for why ``4/delta``).
    """
    n = population  # the papers' n
    lim = _fmt21_limit(n, delta)
    if not epsilon0 <= lim:
        return (f"epsilon0 <= log(n / (16 log(4/delta))) = {lim:.6g} (got {epsilon0:g}; stricter of the restated "
                "log(2/delta) and the authors' code's log(4/delta))")
    return None


@renamed_params({"n": "population"})
def fmt21_epsilon(epsilon0: float, population: int, delta: float) -> AmplificationBound:
    """Feldman, McMillan, Talwar (FOCS 2021), closed form (Theorem 3.1 per restatements).

    **Unverified against the paper's text** (``verified=False``). As restated by third parties (e.g. the OpenDP
    smartnoise shuffle-amplification code and several notes), Theorem 3.1 says: for ``epsilon0 <= log(n / (16
    log(2/delta)))`` the shuffled output of n (possibly adaptively chosen) ``epsilon0``-DP local randomizers is
    ``(epsilon, delta)``-DP with::

        epsilon <= log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (8 sqrt(e^eps0 log(4/delta)) / sqrt(n) + 8 e^eps0 / n))

    Verified against the authors' reference implementation only: apple/ml-shuffling-amplification@993d285
    ``computeamplification.py`` ``closedformanalysis``. That function uses the factor
    ``(1 - e^-eps0)/(1 + e^(-eps0 - eps'))`` with ``eps' = log(1 + a + c)`` instead of ``(1 - e^-eps0)/(1 +
    e^-eps0)``; it is never smaller, and we report the larger of the two (safe under either reading). It also
    refuses ``epsilon0 > log(n / (16 log(4/delta)))`` ("not a valid parameter regime"), stricter than the restated
    ``log(2/delta)``; we apply the stricter condition.

    Args:
        epsilon0: local DP level, > 0.
        n: people (reports shuffled), >= 1.
        delta: target delta in (0, 1).

    Returns:
        An :class:`AmplificationBound` (``valid=False`` outside the theorem's range).

    References:
        arXiv:2012.12803 (Theorem 3.1 per restatements; theorem text not checked); apple/ml-shuffling-amplification
        ``computeamplification.py`` at commit 993d285a546114bf8c70c33d053dca322a755707.

    Examples:
        >>> r = fmt21_epsilon(1.0, 100_000, 1e-6)
        >>> r.valid, round(r.epsilon, 4)
        (True, 0.0753)
    """
    n = population  # the papers' n
    epsilon0, n, delta = _check_common(epsilon0, n, delta)
    failed = fmt21_condition(epsilon0, n, delta)
    return _result("fmt21", epsilon0, n, _fmt21_value(epsilon0, n, delta), delta, failed)


# ---------------------------------------------------------------------------------------------------- BBGN 2019
def _bbgn19_log_delta(epsilon: float, epsilon0: float, n: int) -> float:
    """``log`` of the blanket/Hoeffding delta bound with generic gamma = e^-eps0 (``-inf`` if eps >= eps0).

    Rounded up: the floating-point error of every term (``n log(base)`` amplifies that of ``log(base)`` n-fold) is
    covered by a slack of 16 ulps of the sum of the terms' magnitudes.
    """
    if epsilon >= epsilon0:
        return -math.inf
    a = math.expm1(epsilon)
    log_b = math.log1p(math.exp(epsilon)) + math.log(2.0 * math.sinh(epsilon0))  # (e^eps+1)(e^e0 - e^-e0)
    t = 2.0 * math.exp(2.0 * (math.log(a) - log_b))  # 2 a^2 / b^2
    log_gamma = -epsilon0
    # (1 - gamma (1 - e^-t))^n in the log domain
    log_base = math.log1p(-math.exp(log_gamma) * -math.expm1(-t))
    terms = (2.0 * log_b, -math.log(4.0 * a), -log_gamma, -math.log(n), n * log_base)
    # each term carries a relative error of a few ulps (n * log_base inherits that of log_base): widen upwards
    slack = 16.0 * 2.220446049250313e-16 * (sum(abs(x) for x in terms) + 1.0)
    return math.fsum(terms) + slack


@renamed_params({"n": "population"})
def bbgn19_delta(epsilon: float, epsilon0: float, population: int) -> AmplificationBound:
    """Balle, Bell, Gascón, Nissim (CRYPTO 2019): privacy-blanket delta bound for a generic eps0-LDP randomizer.

    **Unverified against the paper's text** (``verified=False``; theorem number unknown). The expression below is
    exactly what the authors' reference code evaluates (BorjaBalle/amplification-by-shuffling@1778a0d,
    ``shuffleddp/amplification_bounds.py`` ``Hoeffding.get_delta`` with ``shuffleddp/mechanisms.py``
    ``LDPMechanism``: ``gamma`` lower bound ``e^-eps0`` in both ``1/(gamma n)`` and the binomial term, range with
    upper bound ``gamma <= 1``; the repository README says it implements the bounds proved in arXiv:1903.02837).

    The blanket theorem bounds ``delta(eps) <= E[(sum_{i <= M} L_i)_+] / (gamma n)`` with ``M ~ Bin(n, gamma)`` and
    L_i i.i.d. privacy amplification variables of mean ``-(e^eps - 1)`` and range ``b``; Hoeffding's inequality
    then gives::

        delta <= b^2 / (4 a gamma n) * (1 - gamma (1 - exp(-2 a^2 / b^2)))^n,   a = e^eps - 1,

    and every ``epsilon0``-LDP randomizer has ``gamma >= e^-epsilon0`` and ``b <= (e^eps + 1)(e^eps0 - e^-eps0)``.
    Valid for ``0 < eps < epsilon0`` (for ``eps >= epsilon0`` the release is ``(epsilon0, 0)``-DP anyway, delta 0).

    Args:
        epsilon: shuffled epsilon, > 0.
        epsilon0: local DP level, > 0.
        n: people, >= 1.

    Returns:
        An :class:`AmplificationBound` with ``delta`` (capped at 1) and ``epsilon`` = the input.

    References:
        arXiv:1903.02837 (privacy blanket, Hoeffding bound, generic randomizers; theorem text not checked).

    Examples:
        >>> r = bbgn19_delta(0.5, 2.0, 100_000)
        >>> r.delta < 1e-6
        True
    """
    n = population  # the papers' n
    epsilon = check_positive_finite("epsilon", epsilon)
    epsilon0 = check_positive_finite("epsilon0", epsilon0)
    n = check_int("population", n, minimum=1)
    ld = _bbgn19_log_delta(epsilon, epsilon0, n)
    delta = 0.0 if ld == -math.inf else min(1.0, _up(math.exp(ld)) if ld < 700 else 1.0)
    return _result("bbgn19", epsilon0, n, epsilon, delta, None)


@renamed_params({"n": "population"})
def bbgn19_epsilon(epsilon0: float, population: int, delta: float) -> AmplificationBound:
    """Smallest epsilon with :func:`bbgn19_delta` ``<= delta`` (bisection; the returned epsilon is checked).

    ``valid=False`` when no ``epsilon < epsilon0`` reaches ``delta`` (the bound gives no amplification; the trivial
    ``(epsilon0, 0)`` guarantee still holds).

    Examples:
        >>> r = bbgn19_epsilon(2.0, 100_000, 1e-6)
        >>> r.valid, r.epsilon < 0.5
        (True, True)
    """
    n = population  # the papers' n
    epsilon0, n, delta = _check_common(epsilon0, n, delta)
    log_target = math.log(delta)

    def ok(e: float) -> bool:
        return _bbgn19_log_delta(e, epsilon0, n) <= log_target

    hi = math.nextafter(epsilon0, 0.0)
    if not ok(hi):
        return _result("bbgn19", epsilon0, n, None, delta,
                       f"some epsilon < epsilon0 = {epsilon0:g} with blanket delta <= {delta:g} (none exists)")
    hi = search(verdict(ok), Bracket(fail=0.0, ok=hi), Midpoint(), max_probes=200).ok  # epsilon > 0: 0 the low end
    return _result("bbgn19", epsilon0, n, hi, delta, None)


# ---------------------------------------------------------------------------------------------------- dispatch
_EPS_FUNCS: dict[str, Callable[[float, int, float], AmplificationBound]] = {
    "efmrtt19": efmrtt19_epsilon, "bbgn19": bbgn19_epsilon, "fmt21": fmt21_epsilon,
}


def _check_bound(bound: Any) -> str:
    if bound not in BOUNDS:
        raise ParameterError(f"bound must be one of {', '.join(BOUNDS)}; got {bound!r}")
    return str(bound)


@renamed_params({"n": "population"})
def amplification_epsilon(bound: str, *, epsilon0: float, population: int, delta: float) -> AmplificationBound:
    """The shuffled epsilon of ``bound`` (one of :data:`BOUNDS`) at ``(epsilon0, n, delta)``.

    Examples:
        >>> amplification_epsilon("efmrtt19", epsilon0=0.4, population=100, delta=1e-6).failed_condition
        'n >= 1000 (got 100)'
    """
    n = population  # the papers' n
    return _EPS_FUNCS[_check_bound(bound)](epsilon0, n, delta)


@renamed_fields({"n": "population"})
@dataclass(frozen=True, slots=True, kw_only=True)
class Epsilon0Result:
    """The largest local epsilon0 that a bound certifies as ``(epsilon, delta)``-DP after shuffling n reports.

    Attributes:
        bound: which bound.
        epsilon, delta, population: the target and the crowd of n people (``n``: the former name of
            ``population``, a deprecated read-only property).
        epsilon0: the largest epsilon0 found by the amplification bound (None if the bound certifies no
            epsilon0 > epsilon, e.g. outside its validity range).
        usable_epsilon0: ``max(epsilon, epsilon0)``: without amplification an epsilon-LDP randomizer already gives
            ``(epsilon, 0)``-DP after shuffling, so this is always safe to use.
        amplified: whether ``usable_epsilon0 > epsilon`` (the bound helped).
        kind: ``"bound"``.
        notes: why there is no amplification, if so; and, when the amplified value rests on a statement not
            checked against the paper's text, a note starting ``"unverified: "``.
        verified: whether the guarantee for ``usable_epsilon0`` rests only on verified statements: True when there
            is no amplification (the trivial ``(epsilon, 0)`` guarantee), else the bound's own status (False for
            all three bounds here).
        provenance: what the bound's statement was checked against (see :class:`AmplificationBound`).
    """

    bound: str
    epsilon: float
    delta: float
    population: int
    epsilon0: float | None
    usable_epsilon0: float
    amplified: bool
    kind: str = "bound"
    notes: tuple[str, ...] = ()
    verified: bool = False
    provenance: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["notes"] = list(self.notes)
        return d


def _certifies(bound: str, epsilon0: float, n: int, epsilon: float, delta: float) -> bool:
    if bound == "bbgn19":
        return _bbgn19_log_delta(epsilon, epsilon0, n) <= math.log(delta)
    r = _EPS_FUNCS[bound](epsilon0, n, delta)
    return r.valid and r.epsilon is not None and r.epsilon <= epsilon


@renamed_params({"n": "population"})
def max_epsilon0(bound: str, *, epsilon: float, delta: float, population: int) -> Epsilon0Result:
    """Largest ``epsilon0`` such that ``bound`` certifies the shuffled output of n reports ``(epsilon, delta)``-DP.

    Each bound is non-decreasing in ``epsilon0`` (checked in the tests), so a bisection finds the boundary; the
    value returned is the feasible end of the final bracket and is re-checked.

    Args:
        bound: one of :data:`BOUNDS`.
        epsilon: target shuffled epsilon, > 0.
        delta: target delta in (0, 1).
        n: people, >= 1.

    Returns:
        An :class:`Epsilon0Result`.

    Examples:
        >>> r = max_epsilon0("fmt21", epsilon=1.0, delta=1e-6, population=100_000)
        >>> r.amplified, round(r.epsilon0, 3)
        (True, 5.697)
    """
    n = population  # the papers' n
    bound = _check_bound(bound)
    epsilon = check_positive_finite("epsilon", epsilon)
    delta = check_open_interval("delta", delta, 0.0, 1.0)
    n = check_int("population", n, minimum=1)
    notes: list[str] = []
    if bound == "efmrtt19":
        hi = math.nextafter(0.5, 0.0)
    elif bound == "fmt21":
        hi = max(_fmt21_limit(n, delta), 0.0)
    else:
        hi = 64.0
    found: float | None = None
    if hi > 0.0 and _certifies(bound, hi, n, epsilon, delta):
        found = hi
    elif hi > 0.0:
        # 0 is feasible in the limit; find a positive feasible point first (halving from hi), then the
        # largest certified epsilon0 below the failing hi
        def certifies(e0: float) -> bool:
            return _certifies(bound, e0, n, epsilon, delta)

        def halving(top: float) -> Iterator[float]:
            probe = top
            while probe > 1e-12:
                yield probe
                probe *= 0.5

        _, low = scan(certifies, halving(hi), until=True)
        if low is not None:
            found = search(verdict(certifies), Bracket(fail=hi, ok=low), Midpoint(), max_probes=200).ok
    if found is None:
        r = _EPS_FUNCS[bound](epsilon, n, delta)
        why = r.failed_condition or "the bound exceeds epsilon for every epsilon0 in its range"
        notes.append(f"{bound}: no epsilon0 certified ({why}); no amplification, epsilon0 = epsilon.")
    usable = max(epsilon, found) if found is not None else epsilon
    if found is not None and found <= epsilon:
        notes.append(f"{bound}: the bound certifies only epsilon0 = {found:.6g} <= epsilon; the trivial "
                     "guarantee (epsilon0 = epsilon) is better.")
    amplified = usable > epsilon
    if amplified and not _VERIFIED[bound]:
        notes.append(f"unverified: the {bound} statement ({_REFERENCES[bound]}) was not checked against the "
                     f"paper's text; checked against {_PROVENANCE[bound]}. Treat epsilon0 = {usable:.6g} as "
                     "resting on an unverified formula, not a verified guarantee.")
    return Epsilon0Result(bound=bound, epsilon=epsilon, delta=delta, population=n, epsilon0=found, usable_epsilon0=usable,
                          amplified=amplified, notes=tuple(notes), verified=_VERIFIED[bound] or not amplified,
                          provenance=_PROVENANCE[bound])


def flip_probability_for_epsilon0(epsilon0: float, bits: int, reports: int = 1) -> float:
    """Smallest flip probability q whose bit-vector RR over ``k`` reports of ``L`` bits is ``epsilon0``-LDP.

    ``epsilon0 = k L log(p/q)`` (pure-DP composition; exact for replacement neighbours differing in all bits), so
    ``q = 1 / (1 + exp(epsilon0 / (k L)))``, rounded up until ``k L log(p/q) <= epsilon0`` holds in floating point.

    Examples:
        >>> round(flip_probability_for_epsilon0(math.log(3), 1), 6)
        0.25
    """
    epsilon0 = check_positive_finite("epsilon0", epsilon0)
    return local_q(bits, epsilon0, reports)
