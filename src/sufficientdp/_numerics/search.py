"""One safe monotone search: a bracket that keeps "fails at ``fail``, passes at ``ok``" (issue 11).

Every search of the library for the boundary of a condition (the smallest q that meets a privacy target, the
largest epsilon0 an amplification bound certifies, a binomial window, ...) is this bracket, narrowed by one of a
few probe policies:

* :func:`scan` — the grid phase: probe given points in order until the verdict flips (the bracket's start);
* :func:`search` — the bracket loop: a policy proposes a point strictly inside, the test decides which end it
  replaces, until a tolerance or a probe budget is reached. Policies:

  * :class:`Midpoint` — arithmetic, geometric (``sqrt(lo hi)`` or ``exp`` of the mean log), integer, or geometric
    while the ends are more than a ratio apart;
  * :class:`RegulaFalsi` — the root of a transformed excess interpolated between the ends, with the Illinois
    modification (the end that has not moved twice in a row has its excess halved), kept a margin inside the
    bracket, with a fallback to bisection where the interpolation is unusable or stalls;
  * :class:`Creep` — upward (toward ``ok``) by a few units in the last place from the failing end (after a root
    finder's estimate), or by a Newton step on the score when that is longer.

* :func:`bisect_many` — bisection of many brackets at once (numpy arrays, a fixed number of probes);
* :func:`walk` — the expanding walk: steps away from a point whose verdict is known (geometric, or any rule the
  caller gives, :func:`geometric`) until the verdict flips, returning the :class:`Walk` (its :meth:`Walk.bracket`
  once it flipped).

The safe side: the ``ok`` end of the returned :class:`Bracket` is the starting ``ok`` end or a point at which the
test was *observed* to pass; the ``fail`` end is the starting one or a point observed to fail. Nothing else is
assumed: the test need not be monotone (monotonicity only decides how close the answer is to the boundary), a probe
that is not strictly inside the bracket ends the search, and ``max_probes`` bounds the number of evaluations. The
ends may be in either order (``ok > fail``: the smallest passing point; ``ok < fail``: the largest).

Every expression (midpoints, interpolation, clamps) is the one the hand-written searches it replaced used, so the
probe sequences and the answers are unchanged bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._errors import ParameterError
from .._validation import check_int, check_nonnegative_finite

__all__ = ["Bracket", "Creep", "Midpoint", "Policy", "RegulaFalsi", "Test", "Walk", "bisect_many", "creep_then_bisect",
           "geometric", "scan", "search", "verdict", "walk"]

#: ``test(x) -> (passes, score)``: the verdict at x, and a transformed excess (``> 0`` failing, ``<= 0`` passing)
#: that interpolating policies read (``nan`` when no policy needs it).
Test = Callable[[float], tuple[bool, float]]


def verdict(passes: Callable[[float], bool]) -> Test:
    """A :data:`Test` from a plain predicate (score ``nan``: for the policies that do not interpolate)."""
    def test(x: float) -> tuple[bool, float]:
        return bool(passes(x)), math.nan
    return test


@dataclass(frozen=True, slots=True)
class Bracket:
    """The search state: the test fails at ``fail`` and passes at ``ok`` (observed, or known to the caller).

    Attributes:
        fail: the failing end.
        ok: the passing end (the safe answer).
        fail_score: the score at ``fail`` (read by :class:`RegulaFalsi`; ``nan`` otherwise).
        ok_score: the score at ``ok``.
        last: +1 if the last probe passed, -1 if it failed, 0 before the first probe.
        stalls: probes since the bracket last halved (:class:`RegulaFalsi`'s ``max_stalls``).
        checkpoint: the width ``|ok - fail|`` when it last halved (``nan``: set by :func:`search` at its start).
        probes: probes made by :func:`search` so far.
    """

    fail: float
    ok: float
    fail_score: float = math.nan
    ok_score: float = math.nan
    last: int = 0
    stalls: int = 0
    checkpoint: float = math.nan
    probes: int = 0

    @property
    def width(self) -> float:
        """``|ok - fail|``."""
        return abs(self.ok - self.fail)

    def inside(self, x: float) -> bool:
        """Whether x lies strictly between the ends (the only points :func:`search` probes)."""
        if self.fail < self.ok:
            return self.fail < x < self.ok
        return self.ok < x < self.fail


class Policy:
    """Where :func:`search` probes next: ``propose(bracket)`` returns ``(x, bisected)`` or None to stop.

    ``bisected`` tells the stall counter that the probe was a bisection (the counter restarts after it).
    ``illinois`` asks :func:`search` to halve the score of the end that has not moved twice in a row.
    """

    illinois = False

    def propose(self, b: Bracket) -> tuple[float, bool] | None:  # pragma: no cover - interface
        raise NotImplementedError


_MEANS = ("arithmetic", "geometric", "log-geometric", "integer", "integer-upper")


class Midpoint(Policy):
    """Bisection. ``mean``: ``"arithmetic"`` ``0.5 (lo + hi)``; ``"geometric"`` ``sqrt(lo hi)``;
    ``"log-geometric"`` ``exp(0.5 (log lo + log hi))``; ``"integer"`` ``(lo + hi) // 2``; ``"integer-upper"``
    ``(lo + hi + 1) // 2`` (the upper middle: the probe of a search over ``[fail + 1, ok]``). With
    ``arithmetic_within`` (> 1, geometric means only) the arithmetic mean is used once
    ``hi <= arithmetic_within * lo``."""

    __slots__ = ("_within", "mean")

    def __init__(self, mean: str = "arithmetic", *, arithmetic_within: float | None = None) -> None:
        if mean not in _MEANS:
            raise ParameterError(f"mean must be one of {', '.join(_MEANS)}; got {mean!r}")
        if arithmetic_within is not None:
            if mean not in ("geometric", "log-geometric"):
                raise ParameterError(f"arithmetic_within applies to the geometric means only; got mean={mean!r}")
            if not (isinstance(arithmetic_within, (int, float)) and 1.0 < arithmetic_within < math.inf):
                raise ParameterError(f"arithmetic_within must be a finite number > 1; got {arithmetic_within!r}")
        self.mean = mean
        self._within = arithmetic_within

    def propose(self, b: Bracket) -> tuple[float, bool]:
        lo, hi = (b.fail, b.ok) if b.fail < b.ok else (b.ok, b.fail)
        mean = self.mean
        if self._within is not None and not hi > self._within * lo:
            mean = "arithmetic"
        if mean == "arithmetic":
            return 0.5 * (lo + hi), True
        if mean == "geometric":
            return math.sqrt(lo * hi), True
        if mean == "log-geometric":
            return math.exp(0.5 * (math.log(lo) + math.log(hi))), True
        if mean == "integer":
            return (lo + hi) // 2, True
        return (lo + hi + 1) // 2, True


class RegulaFalsi(Policy):
    """Regula falsi with the Illinois modification on the scores (a transformed excess, ``> 0`` failing).

    Interpolates the score's root between the ends (in ``log`` of the ends when ``log``; the probe is then ``exp``
    of the point), from the ``anchor`` end (``"fail"``: ``a + fa (b - a) / (fa - fb)``; ``"ok"``:
    ``b - fb (b - a) / (fb - fa)``; a = fail, b = ok), when the scores are usable: ``ok_score`` finite and
    ``fail_score > ok_score`` (``strict``: also ``fail_score`` finite and ``fail_score > 0 >= ok_score``), and
    fewer than ``max_stalls`` probes in a row have failed to halve the bracket. The point is kept ``margin``
    (absolute) or ``margin_frac`` of the width inside the bracket, then moved ``lean`` toward ``ok`` (at most to
    ``ok - lean``) so that the passing end moves. Otherwise the probe is the midpoint ``0.5 (a + b)`` (kept inside
    the margin too when ``guard_bisection``).
    """

    __slots__ = ("anchor", "guard_bisection", "lean", "log", "margin", "margin_frac", "max_stalls", "strict")
    illinois = True

    def __init__(self, *, anchor: str = "ok", log: bool = False, margin: float = 0.0, margin_frac: float = 0.0,
                 lean: float = 0.0, max_stalls: int | None = None, strict: bool = False,
                 guard_bisection: bool = False) -> None:
        if anchor not in ("fail", "ok"):
            raise ParameterError(f"anchor must be 'fail' or 'ok'; got {anchor!r}")
        self.margin = check_nonnegative_finite("margin", margin)
        self.margin_frac = check_nonnegative_finite("margin_frac", margin_frac)
        if self.margin_frac >= 0.5:
            raise ParameterError(f"margin_frac must be in [0, 0.5); got {margin_frac!r}")
        if self.margin and self.margin_frac:
            raise ParameterError("give margin or margin_frac, not both")
        self.lean = check_nonnegative_finite("lean", lean)
        self.max_stalls = None if max_stalls is None else check_int("max_stalls", max_stalls, minimum=1)
        self.anchor, self.log, self.strict, self.guard_bisection = anchor, bool(log), bool(strict), guard_bisection

    def _usable(self, b: Bracket) -> bool:
        fa, fb = b.fail_score, b.ok_score
        if self.max_stalls is not None and not b.stalls < self.max_stalls:
            return False
        if self.strict:
            return math.isfinite(fa) and math.isfinite(fb) and fa > 0.0 >= fb
        return math.isfinite(fb) and fa > fb

    def _guard(self, x: float, a: float, b: float) -> float:
        lo, hi = (a, b) if a < b else (b, a)
        m = self.margin_frac * (hi - lo) if self.margin_frac else self.margin
        return min(max(x, lo + m), hi - m)

    def propose(self, br: Bracket) -> tuple[float, bool]:
        a, b = (math.log(br.fail), math.log(br.ok)) if self.log else (br.fail, br.ok)
        fa, fb = br.fail_score, br.ok_score
        if self._usable(br):
            x = a + fa * (b - a) / (fa - fb) if self.anchor == "fail" else b - fb * (b - a) / (fb - fa)
            x = self._guard(x, a, b)
            if self.lean:  # aim just past the root, toward ok, so that the passing end moves
                x = min(b - self.lean, x + self.lean) if a < b else max(b + self.lean, x - self.lean)
            bisected = False
        else:
            x = 0.5 * (a + b)
            if self.guard_bisection:
                x = self._guard(x, a, b)
            bisected = True
        return (math.exp(x) if self.log else x), bisected


class Creep(Policy):
    """From the failing end toward ``ok`` by one unit in the last place plus ``rel |fail|`` (after a root finder's
    estimate ``first``, probed first when strictly inside); stops at the first pass.

    With ``scale`` (> 0) the step is a Newton step when that is longer: for a score (the excess, ``> 0`` failing)
    whose derivative in ``log x`` is about ``-scale``, the probe is ``max(creep, fail (1 + fail_score / scale))``
    going up (``min(creep, fail (1 - fail_score / scale))`` going down; a ``nan`` score leaves the creep)."""

    __slots__ = ("first", "rel", "scale")

    def __init__(self, *, rel: float, first: float | None = None, scale: float | None = None) -> None:
        self.rel = check_nonnegative_finite("rel", rel)
        self.first = first
        if scale is not None and not (isinstance(scale, (int, float)) and 0.0 < scale < math.inf):
            raise ParameterError(f"scale must be a finite number > 0; got {scale!r}")
        self.scale = scale

    def propose(self, b: Bracket) -> tuple[float, bool] | None:
        if b.last == 1:
            return None
        if b.last == 0 and self.first is not None and b.inside(self.first):
            return self.first, False
        step = math.nextafter(b.fail, b.ok)
        up = b.ok > b.fail
        x = step + abs(b.fail) * self.rel if up else step - abs(b.fail) * self.rel
        if self.scale is not None:
            x = max(x, b.fail * (1.0 + b.fail_score / self.scale)) if up else \
                min(x, b.fail * (1.0 - b.fail_score / self.scale))
        return x, False


def creep_then_bisect(test: Test, fail: float, ok: float, *, rel: float, creep_probes: int = 64,
                      bisect_probes: int = 1100) -> float:
    """A point observed to pass near ``fail`` (a root finder's estimate that fails; ``ok`` passes): :class:`Creep`
    from ``fail`` by an ulp plus ``rel |fail|`` for at most ``creep_probes`` probes, then arithmetic bisection of
    what is left for at most ``bisect_probes`` (enough to reach adjacent floats from any bracket of positive
    floats). Bounded work where a creep alone can need millions of probes (a root finder's absolute tolerance
    large against the root, or a creep starting at 0 through the subnormals); where the creep passes within its
    budget the answer is the creep's."""
    crept = search(test, Bracket(fail=fail, ok=ok), Creep(rel=rel), max_probes=creep_probes)
    if crept.last == 1:
        return crept.ok
    return search(test, Bracket(fail=crept.fail, ok=crept.ok), Midpoint(), max_probes=bisect_probes).ok


def scan(test: Callable[[float], bool], points: Iterable[float], *,
         until: bool) -> tuple[float | None, float | None]:
    """The grid phase: probe ``points`` in order until ``test`` returns ``until``.

    Returns ``(before, hit)``: ``hit`` is the first point with verdict ``until`` (None if none) and ``before`` the
    point probed just before it (verdict ``not until``; None if ``hit`` is the first point, or the last point
    probed when no point hits, None if there are none). With an increasing grid and ``until=True`` that is
    ``(fail, ok)``; with a decreasing grid and ``until=False`` it is ``(ok, fail)``.
    """
    before: float | None = None
    for x in points:
        if bool(test(x)) is until:
            return before, x
        before = x
    return before, None


def search(test: Test, start: Bracket, policy: Policy, *, max_probes: int, atol: float = 0.0,
           rtol: float = 0.0, until: Callable[[Bracket], bool] | None = None) -> Bracket:
    """Narrow ``start`` (fails at ``fail``, passes at ``ok``) by ``policy`` and return the final bracket.

    Before each probe the search stops if ``|ok - fail| <= atol + rtol |ok|`` (both 0: no tolerance), if
    ``until(bracket)`` (a caller's own tolerance, e.g. on the ratio of the ends), if the policy stops, or if its
    point is not strictly inside the bracket; at most ``max_probes`` probes are made.
    A passing probe becomes ``ok``, a failing one ``fail``: the returned ``ok`` is ``start.ok`` or a point at which
    ``test`` passed, whatever the test does (it need not be monotone).

    Raises:
        ParameterError: ``max_probes`` not an integer >= 0, or a tolerance negative or not finite.
    """
    max_probes = check_int("max_probes", max_probes, minimum=0)
    atol = check_nonnegative_finite("atol", atol)
    rtol = check_nonnegative_finite("rtol", rtol)
    fail, ok, f_fail, f_ok = start.fail, start.ok, start.fail_score, start.ok_score
    last, stalls, checkpoint, probes = start.last, start.stalls, start.checkpoint, start.probes
    if math.isnan(checkpoint):
        checkpoint = abs(ok - fail)
    illinois = policy.illinois
    for _ in range(max_probes):
        width = abs(ok - fail)
        if width <= (atol if not rtol else (rtol * abs(ok) if not atol else atol + rtol * abs(ok))):
            break
        b = Bracket(fail, ok, f_fail, f_ok, last, stalls, checkpoint, probes)
        if until is not None and until(b):
            break
        proposal = policy.propose(b)
        if proposal is None:
            break
        x, bisected = proposal
        if not b.inside(x):
            break
        passed, score = test(x)
        probes += 1
        if passed:
            ok, f_ok = x, score
            if illinois and last == 1:  # the failing end has not moved twice in a row: halve its weight
                f_fail *= 0.5
            last = 1
        else:
            fail, f_fail = x, score
            if illinois and last == -1:
                f_ok *= 0.5
            last = -1
        width = abs(ok - fail)
        if bisected or width <= 0.5 * checkpoint:
            checkpoint, stalls = width, 0
        else:
            stalls += 1
    return Bracket(fail, ok, f_fail, f_ok, last, stalls, checkpoint, probes)


def bisect_many(over: Callable[[NDArray[Any]], NDArray[np.bool_]], below: NDArray[Any], above: NDArray[Any], *,
                probes: int, integer: bool = False) -> tuple[NDArray[Any], NDArray[Any]]:
    """Many brackets at once: ``over`` is False at ``below`` and True at ``above`` (elementwise, as the caller
    knows or assumes); ``probes`` midpoints, arithmetic ``0.5 (below + above)`` or, ``integer``,
    ``(below + above) // 2``, each replace the end with the same verdict.

    Returns ``(below, above)``: each end is its starting value or a point where ``over`` was observed to give that
    end's verdict. (Every element is probed ``probes`` times: an array has no early stop; a midpoint equal to an
    end is probed again, which moves nothing for a consistent ``over``.)

    Raises:
        ParameterError: ``probes`` not an integer >= 0.
    """
    probes = check_int("probes", probes, minimum=0)
    for _ in range(probes):
        mid = (below + above) // 2 if integer else 0.5 * (below + above)
        up = over(mid)
        above = np.where(up, mid, above)
        below = np.where(up, below, mid)
    return below, above


@dataclass(frozen=True, slots=True)
class Walk:
    """The end of :func:`walk`: every point it probed up to ``last`` kept the starting verdict; ``hit`` flipped it.

    Attributes:
        passes: the starting verdict (True: the walk started from a passing point).
        last: the last point with the starting verdict (the start if no probe kept it).
        last_score: the score at ``last`` (the start's as given).
        prior: the point with the starting verdict before ``last`` (``last`` itself if ``last`` is the start).
        prior_score: the score at ``prior``.
        hit: the first point with the other verdict (None if the walk stopped before the verdict flipped).
        hit_score: the score at ``hit`` (``nan`` if None).
        steps: probes made.
    """

    passes: bool
    last: float
    last_score: float
    prior: float
    prior_score: float
    hit: float | None
    hit_score: float
    steps: int

    def bracket(self) -> Bracket | None:
        """The bracket the walk found (``last`` and ``hit``, scores included), None if the verdict never flipped."""
        if self.hit is None:
            return None
        if self.passes:
            return Bracket(fail=self.hit, ok=self.last, fail_score=self.hit_score, ok_score=self.last_score)
        return Bracket(fail=self.last, ok=self.hit, fail_score=self.last_score, ok_score=self.hit_score)


def walk(test: Test, start: float, *, passes: bool, step: Callable[[float, int], tuple[float, bool] | None],
         max_steps: int, start_score: float = math.nan) -> Walk:
    """The expanding walk: from ``start`` (verdict ``passes``, as the caller knows or observed) probe the points
    ``step`` proposes until ``test``'s verdict flips.

    ``step(x, k)`` gets the current end (the last point with the starting verdict, ``start`` at first) and the
    number of probes made, and returns ``(next point, final)`` or None to stop before probing; ``final`` stops the
    walk after that probe if it keeps the verdict (a clamp at a limit, a floor). :func:`geometric` is the common
    rule. At most ``max_steps`` probes are made.

    Returns the :class:`Walk`: ``last`` is ``start`` or a point observed to keep the starting verdict, ``hit`` a
    point observed to flip it (whatever the test does; with ``passes=True``, ``Walk.bracket()`` fails at ``hit``
    and passes at ``last``).

    Raises:
        ParameterError: ``max_steps`` not an integer >= 0.
    """
    max_steps = check_int("max_steps", max_steps, minimum=0)
    passes = bool(passes)
    last, last_score = start, start_score
    prior, prior_score = start, start_score
    for k in range(max_steps):
        proposal = step(last, k)
        if proposal is None:
            break
        x, final = proposal
        passed, score = test(x)
        if bool(passed) is not passes:
            return Walk(passes, last, last_score, prior, prior_score, x, score, k + 1)
        prior, prior_score, last, last_score = last, last_score, x, score
        if final:
            return Walk(passes, last, last_score, prior, prior_score, None, math.nan, k + 1)
    else:
        k = max_steps
    return Walk(passes, last, last_score, prior, prior_score, None, math.nan, k)


def geometric(factor: float, *, limit: float | None = None, floor: float | None = None
              ) -> Callable[[float, int], tuple[float, bool] | None]:
    """A :func:`walk` rule: the next point is ``x * factor`` (``factor > 0``, != 1). ``limit``: the point is
    clamped to it (``min`` going up, ``max`` going down) and the walk stops once there (no step from a point at
    or past it); ``floor``: no point beyond it is probed (the walk stops before it)."""
    if not (isinstance(factor, (int, float)) and 0.0 < factor < math.inf and factor != 1.0):
        raise ParameterError(f"factor must be a finite number > 0 other than 1; got {factor!r}")
    up = factor > 1.0

    def step(x: float, k: int) -> tuple[float, bool] | None:
        if limit is not None and not (x < limit if up else x > limit):
            return None
        y = x * factor
        if limit is not None:
            y = min(limit, y) if up else max(limit, y)
        if floor is not None and (y > floor if up else y < floor):
            return None
        return y, False
    return step
