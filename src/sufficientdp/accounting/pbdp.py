"""Probabilistically-bounded DP (pbdp): the tail of the privacy loss that no post-processing can enlarge.

Three equivalent definitions (digest §1.7; paper 004, Defs 5.2–5.4, equivalence in its Appendix A). For every
ordered pair of neighbours ``(D1, D2)``:

* **v1 (tail)**, ``delta in [0, 1]``: for every post-processing ``A``, ``P[L^{A∘M}_{D1,D2} > eps] <= delta``.
* **v2 (binary tests)**, ``delta in [0, 1]``: for every binary ``A``,
  ``P(A(M(D1))=1) > e^eps P(A(M(D2))=1)  ==>  P(A(M(D1))=1) <= delta``.
* **v3 (level/power)**, ``delta in (0, 1]``: for every binary ``A``,
  ``P(A(M(D1))=1) <= e^{-eps} delta  ==>  P(A(M(D2))=1) <= delta``.

The smallest such ``delta`` as a function of ``eps`` is the *pbdp curve*; it is a reparametrisation of the f-DP
trade-off function, ``eps(delta) = log(delta / f^{-1}(1 - delta))`` (digest §1.8).

**How eta (sufficient DP) and delta differ.** For one PLD (one neighbour pair, one direction) and every eps::

    delta(eps) = E[(1 - e^{eps - L})_+]  <=  eta(eps) = P[L > eps]  <=  delta_pbdp(eps)

* ``delta`` (approximate DP, hockey stick) is *not* a probability of a bad event; it only bounds ``P[L = inf]``.
* ``eta`` — the quantity sufficient DP bounds (``P[R(S) > lambda]``, ``lambda = e^eps``) — is the raw tail of the
  privacy loss of the release as published. It is exactly the pbdp tail of v1 *without* the supremum over
  post-processings, and the tail alone is not post-processing invariant (digest Ex. 4.9): an analyst who coarsens
  the output can see a larger tail.
* ``delta_pbdp`` closes that gap: it is the largest tail any post-processing can produce. It implies
  ``(eps, delta_pbdp)``-DP, but ``(eps, delta)``-DP does not imply ``(eps, delta)``-pbdp (see
  :func:`compare_eta_delta`).

Computation. The attainable pairs ``(a, b) = (P(A(M(D1))=1), P(A(M(D2))=1))`` over randomized tests form a convex
region whose upper edge is the Neyman–Pearson curve ``a = pw(b)`` (:func:`~.conversions.max_power`). Then
``delta_pbdp(eps) = sup{pw(b) : pw(b) > e^eps b}``, the value at the crossing of ``pw`` with the line
``a = e^eps b``; for a discrete PLD ``pw`` is piecewise linear and the crossing is found in closed form. Both
directions of the neighbour pair are taken (the maximum). Results are rounded up (relative ``1e-12``).

References:
    papers/census-semantics-digest.md §1.7 (Defs 5.2–5.4), §1.8 (f-DP -> (eps, delta) curve),
    §1.9 (Gaussian pbdp curve), §8 "pitfalls" (pbdp delta 0.679 vs tail 0.436 at rho = 2.63, eps = 3).
    papers/004_47af1ee980af8d2f.txt Sec. 5.2, Ex. 4.9, Ex. 5.6, Appendix A.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import log_ndtr, ndtr, ndtri

from .._errors import ParameterError
from .._frozen import data_frame
from .._numerics.search import scan
from ..loss.distribution import (
    ETA_DELTA_EXPLANATION,
    PrivacyLossDistribution,
    _check_epsilon,
    _check_probability,
    _scalar_or_array,
)
from .conversions import max_power, zcdp_tail_bound
from .mechanisms import GaussianPLD

__all__ = [
    "EtaDeltaTable",
    "PbdpCurve",
    "compare_eta_delta",
    "pbdp_curve",
    "pbdp_delta",
    "pbdp_epsilon",
    "pbdp_holds",
    "postprocessed_tail",
]

_ROUND_UP = 1e-12



def _check_pld(pld: Any) -> PrivacyLossDistribution | GaussianPLD:
    if not isinstance(pld, (PrivacyLossDistribution, GaussianPLD)):
        raise ParameterError(f"pld must be a PrivacyLossDistribution or GaussianPLD; got {type(pld).__name__}")
    return pld


def _directions(pld: PrivacyLossDistribution | GaussianPLD) -> list[Any]:
    """Both orderings of the neighbour pair (the Gaussian PLD is symmetric)."""
    if isinstance(pld, GaussianPLD):
        return [pld]
    return [pld, pld.reverse()]


def _up(x: float) -> float:
    return min(1.0, x * (1.0 + _ROUND_UP)) if x > 0 else x


def _knots(pld: PrivacyLossDistribution) -> tuple[NDArray[np.float64], ...]:
    """Neyman–Pearson curve of ``H0: Q`` vs ``H1: P``: atoms by decreasing loss, cumulative masses at the knots."""
    losses = pld.losses[::-1]
    p_mass = pld.probabilities[::-1]
    log_q = np.log(p_mass) - losses
    a_knots = pld.infinity_mass + np.concatenate([[0.0], np.cumsum(p_mass)])  # P-mass (power)
    b_knots = np.concatenate([[0.0], np.cumsum(np.exp(log_q))])  # Q-mass (level)
    return losses, a_knots, b_knots


def _pbdp_delta_discrete(pld: PrivacyLossDistribution, eps: float) -> float:
    """``sup{pw(b) : pw(b) > e^eps b}`` for one direction, in closed form on the piecewise-linear NP curve."""
    losses, a, b = _knots(pld)
    with np.errstate(divide="ignore"):
        gap = a - np.exp(eps + np.log(b))  # pw(b) - e^eps b at the knots (b = 0 -> a)
    positive = np.nonzero(gap > 0)[0]
    if positive.size == 0:
        return 0.0
    k = int(positive[-1])
    if k == losses.size:  # every finite atom rejected and still above the line: continue on the -inf atom (a = 1)
        return 1.0
    t = math.exp(min(float(losses[k]) - eps, 0.0))  # slope of the next piece over e^eps; < 1 there (concavity)
    if t >= 1.0:
        return float(a[k + 1])
    delta = float(a[k]) + float(gap[k]) * t / -math.expm1(float(losses[k]) - eps)
    return min(delta, float(a[k + 1]))


def _pbdp_delta_gaussian(g: GaussianPLD, eps: float) -> float:
    """Crossing of ``Phi(mu + z)`` with ``e^eps Phi(z)``: root of ``log Phi(mu+z) - log Phi(z) = eps``."""
    mu = g.mu
    if eps <= 0.0:
        return 1.0

    def h(z: float) -> float:  # nan where both logs are -inf (z far left at tiny mu): neither side of the root
        with np.errstate(invalid="ignore"):
            return float(log_ndtr(mu + z) - log_ndtr(z)) - eps

    start = -(eps + mu * mu / 2.0) / mu - 10.0
    # the first of start, 2 start, 4 start, ..., 2**59 start where h > 0 (start itself, by the asymptote
    # -mu z - mu^2/2, unless mu is so small that h loses its digits there: rho = 1e-300 ran the doubling into an
    # OverflowError). None: the crossing lies left of every point, and delta is at most Phi(mu + 2**59 start),
    # which underflows to 0 there
    _, left = scan(lambda z: h(z) > 0.0, (start * 2.0**i for i in range(60)), until=True)
    if left is None:
        return float(ndtr(mu + start * 2.0**59))
    lo = left
    # the first of 1, 2, 4, ..., 2**59 where h < 0; none: the crossing is beyond double precision, the bound is 1
    _, hi = scan(lambda z: h(z) < 0.0, (2.0**i for i in range(60)), until=True)
    if hi is None:
        return 1.0
    # (the bracket spans about mu / 2: at mu = 1e150 about 500 steps, more than brentq's default 100)
    from scipy.optimize import brentq  # noqa: PLC0415 - 0.2-0.4 s to import: loaded when a root is needed
    z = float(brentq(h, lo, hi, xtol=1e-13, rtol=1e-14, maxiter=2000))
    return float(ndtr(mu + z + 1e-12))  # nudge right: pw is increasing, so this rounds delta up


def pbdp_delta(pld: PrivacyLossDistribution | GaussianPLD, epsilon: ArrayLike) -> Any:
    """The pbdp curve ``delta_pbdp(eps)``: the smallest delta for which the mechanism is ``(eps, delta)``-pbdp.

    ``delta_pbdp(eps) = max over both directions of sup_A P[L^{A∘M} > eps]`` (Def 5.2, v1) computed as
    ``sup{P(A(M(D1))=1) : P(A(M(D1))=1) > e^eps P(A(M(D2))=1)}`` over randomized binary tests (Def 5.3, v2):
    the crossing of the Neyman–Pearson curve with the line ``a = e^eps b``. Exact for discrete PLDs (closed form
    on each linear piece) and for the Gaussian (root of ``log Phi(mu+z) - log Phi(z) = eps``); rounded up.

    Args:
        pld: a :class:`PrivacyLossDistribution` (both directions are used) or :class:`GaussianPLD`.
        epsilon: eps >= 0, finite (scalar or array).

    Returns:
        float or array of the same shape, in [0, 1].

    Raises:
        ParameterError: pld of the wrong type; epsilon negative, NaN or infinite.

    References:
        004_47af1ee980af8d2f.txt Defs 5.2–5.3; census-semantics-digest.md §1.7, §8 (0.679 at rho=2.63, eps=3).

    Examples:
        >>> from sufficientdp.accounting.mechanisms import binary_randomized_response
        >>> rr = binary_randomized_response(1 / (1 + math.e))        # pure 1-DP randomized response
        >>> round(pbdp_delta(rr, 0.5), 4), pbdp_delta(rr, 1.0)
        (0.8137, 0.0)
    """
    _check_pld(pld)
    eps = _check_epsilon(epsilon)
    out = np.empty(eps.size)
    for i, e in enumerate(eps.ravel()):
        vals = []
        for d in _directions(pld):
            if isinstance(d, GaussianPLD):
                vals.append(_pbdp_delta_gaussian(d, float(e)))
            else:
                vals.append(_pbdp_delta_discrete(d, float(e)))
        out[i] = _up(max(vals))
    return _scalar_or_array(out.reshape(eps.shape))


def _min_level_for_power(pld: PrivacyLossDistribution, power: float) -> float:
    """``f^{-1}(1 - power) = inf{b : pw(b) >= power}`` (digest §1.8 generalised inverse), one direction."""
    losses, a, b = _knots(pld)
    if power <= a[0]:
        return 0.0
    k = int(np.searchsorted(a, power, side="left")) - 1  # a[k] < power <= a[k+1]
    k = min(k, losses.size - 1)
    return float(b[k]) + (power - float(a[k])) * math.exp(-float(losses[k]))


def pbdp_epsilon(pld: PrivacyLossDistribution | GaussianPLD, delta: ArrayLike) -> Any:
    """The pbdp curve as ``eps(delta) = log(delta / f^{-1}(1 - delta))`` (f-DP form, digest §1.8 / Def 5.4 v3).

    ``f^{-1}(1 - delta)`` is the smallest level at which a test reaches power ``delta``; v3 then reads "a test
    of level ``<= e^{-eps} delta`` has power ``<= delta``". For the Gaussian,
    ``eps(delta) = log(delta) - log Phi(Phi^{-1}(delta) - mu)`` (digest §1.9, computed without ``1 - delta``).
    Maximum over both directions; ``inf`` if ``delta <= P(L = inf)``; rounded up.

    Args:
        pld: a :class:`PrivacyLossDistribution` or :class:`GaussianPLD`.
        delta: in (0, 1] (scalar or array).

    Raises:
        ParameterError: pld of the wrong type; delta outside (0, 1].

    Examples:
        >>> g = GaussianPLD.from_rho(2.63)
        >>> round(float(pbdp_delta(g, pbdp_epsilon(g, 0.1))), 6)
        0.1
    """
    _check_pld(pld)
    d = _check_probability(delta, "delta")
    if np.any(d <= 0):
        raise ParameterError(f"delta must be in (0, 1]; got {delta!r}")
    out = np.empty(d.size)
    for i, dv in enumerate(d.ravel()):
        t = float(dv)
        vals = []
        for direction in _directions(pld):
            if isinstance(direction, GaussianPLD):
                vals.append(math.log(t) - float(log_ndtr(ndtri(t) - direction.mu)))
            else:
                b = _min_level_for_power(direction, t)
                vals.append(math.inf if b <= 0.0 else math.log(t) - math.log(b))
        e = max(0.0, max(vals))
        out[i] = e if not math.isfinite(e) else e * (1.0 + _ROUND_UP) + 1e-15
    return _scalar_or_array(out.reshape(d.shape))


def pbdp_holds(pld: PrivacyLossDistribution | GaussianPLD, epsilon: float, delta: float, *, version: int = 3) -> bool:
    """Check ``(eps, delta)``-pbdp with one of the three definitions, each in its own formulation.

    * ``version=1`` (Def 5.2, tail): ``delta >= sup_A P[L^{A∘M} > eps]`` (:func:`pbdp_delta`).
    * ``version=2`` (Def 5.3): no randomized binary test has ``a > e^eps b`` and ``a > delta``; checked as
      ``pw(b) <= e^eps b`` at ``b = delta e^{-eps}`` and at every knot with ``pw(b) > delta`` (the NP curve
      is concave, so these are its extreme points beyond the threshold).
    * ``version=3`` (Def 5.4, needs ``delta > 0``): the most powerful test of level ``e^{-eps} delta`` has power
      ``<= delta`` (:func:`~.conversions.max_power`, both directions).

    Raises:
        ParameterError: bad pld, eps < 0, delta outside [0, 1] (or outside (0, 1] for version 3), bad version.
    """
    _check_pld(pld)
    eps = float(_check_epsilon(epsilon))
    dl = float(_check_probability(delta, "delta"))
    if version not in (1, 2, 3):
        raise ParameterError(f"version must be 1, 2 or 3; got {version!r}")
    if version == 1:
        return bool(float(pbdp_delta(pld, eps)) <= dl * (1.0 + 1e-9) + 1e-15)
    if version == 3:
        if dl <= 0.0:
            raise ParameterError(f"delta must be in (0, 1] for version 3 (Def 5.4); got {delta!r}")
        level = math.exp(-eps) * dl
        return all(float(max_power(d, level)) <= dl * (1.0 + 1e-9) + 1e-15 for d in _directions(pld))
    # version 2
    for d in _directions(pld):
        if isinstance(d, GaussianPLD):
            # pw(b) = Phi(mu + Phi^{-1}(b)); with concave pw, a > e^eps b and a > delta is possible iff it is
            # possible at b = delta e^{-eps}
            b = math.exp(-eps) * dl
            if b < 1.0 and float(d.power(b)) > dl * (1.0 + 1e-9) + 1e-15:
                return False
            continue
        _, a, bk = _knots(d)
        cand_b = [math.exp(-eps) * dl] + [float(x) for x, y in zip(bk, a, strict=True) if y > dl]
        for bb in cand_b:
            if bb > 1.0:
                continue
            pw = float(max_power(d, min(bb, 1.0))) if bb > 0 else float(d.infinity_mass)
            if pw > dl * (1.0 + 1e-9) + 1e-15 and pw > math.exp(eps) * bb * (1.0 + 1e-9) + 1e-15:
                return False
    return True


def postprocessed_tail(p: ArrayLike, q: ArrayLike, channel: ArrayLike, epsilon: float) -> float:
    """Tail ``P[L^{A∘M}_{D1,D2} > eps]`` after a post-processing channel ``A`` (the quantity inside Def 5.2).

    Args:
        p: pmf of ``M(D1)`` on n outputs.
        q: pmf of ``M(D2)`` on the same outputs.
        channel: row-stochastic n x m matrix, ``channel[w, v] = P(A(w) = v)``.
        epsilon: eps >= 0.

    Returns:
        ``sum_v P(A(M(D1)) = v) [log(P(A(M(D1))=v) / P(A(M(D2))=v)) > eps]``, with ``Q = 0 < P`` counted as inf.

    Raises:
        ParameterError: shapes disagree, a pmf or a channel row is not a probability vector.

    Example (digest Ex. 4.9: A2 keeps the first of two randomized responses):
        >>> import numpy as np
        >>> e = math.exp(1.0); a = e / (1 + e); b = 1 / (1 + e)
        >>> p = [a * a, a * b, b * a, b * b]; q = [b * b, b * a, a * b, a * a]   # outputs 11, 10, 01, 00
        >>> keep_first = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
        >>> round(postprocessed_tail(p, q, keep_first, 0.5), 6) == round(a, 6)
        True
    """
    pld = PrivacyLossDistribution.from_pmfs(p, q)  # validates the pmfs
    assert pld.pmfs is not None
    pa, qa = pld.pmfs
    k = np.asarray(channel, dtype=np.float64)
    if k.ndim != 2 or k.shape[0] != pa.size:
        raise ParameterError(f"channel must be a 2-D array with {pa.size} rows; got shape {k.shape}")
    if np.any(~np.isfinite(k)) or np.any(k < 0) or np.any(np.abs(k.sum(axis=1) - 1.0) > 1e-9):
        raise ParameterError("channel must be row-stochastic (entries >= 0, each row summing to 1)")
    eps = float(_check_epsilon(epsilon))
    pp, qq = pa @ k, qa @ k
    with np.errstate(divide="ignore"):
        loss = np.where(qq > 0, np.log(np.where(pp > 0, pp, 1.0)) - np.log(np.where(qq > 0, qq, 1.0)), np.inf)
    return float(np.sum(np.where((pp > 0) & (loss > eps), pp, 0.0)))


@dataclass(frozen=True, slots=True, kw_only=True)
class PbdpCurve:
    """The pbdp curve at a grid of eps, with the zCDP upper bound when a rho is known.

    Attributes:
        epsilons: the grid (tuple).
        delta_pbdp: ``delta_pbdp(eps)`` of the mechanism (kind ``"exact"``; rounded up).
        zcdp_bound: ``exp(-(eps - rho)^2/(4 rho))`` (kind ``"bound"``) or None.
        rho: the zCDP parameter the bound uses, or None.
        kind: per-column kinds.
    """

    epsilons: tuple[float, ...]
    delta_pbdp: tuple[float, ...]
    zcdp_bound: tuple[float, ...] | None = None
    rho: float | None = None
    kind: dict[str, str] = field(default_factory=lambda: {"delta_pbdp": "exact", "zcdp_bound": "bound"})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "epsilons": list(self.epsilons),
            "delta_pbdp": list(self.delta_pbdp),
            "zcdp_bound": None if self.zcdp_bound is None else list(self.zcdp_bound),
            "rho": self.rho,
            "kind": dict(self.kind),
        }


def pbdp_curve(pld: PrivacyLossDistribution | GaussianPLD, epsilons: ArrayLike, *, rho: float | None = None) -> PbdpCurve:
    """Tabulate :func:`pbdp_delta` over ``epsilons``; with ``rho``, also the zCDP bound on the pbdp delta.

    The bound ``P[L > eps] <= exp(-(eps-rho)^2/(4 rho))`` holds for every post-processing, hence bounds
    ``delta_pbdp`` (digest §1.13). ``rho`` defaults to ``mu^2/2`` for a :class:`GaussianPLD`.
    """
    _check_pld(pld)
    eps = np.atleast_1d(_check_epsilon(epsilons)).ravel()
    if rho is None and isinstance(pld, GaussianPLD):
        rho = pld.rho
    bound = None if rho is None else tuple(float(x) for x in np.atleast_1d(zcdp_tail_bound(rho, eps)))
    return PbdpCurve(
        epsilons=tuple(float(e) for e in eps),
        delta_pbdp=tuple(float(x) for x in np.atleast_1d(pbdp_delta(pld, eps))),
        zcdp_bound=bound,
        rho=None if rho is None else float(rho),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class EtaDeltaTable:
    """``delta(eps) <= eta(eps) <= delta_pbdp(eps)`` side by side (all exact for the given PLD, both directions).

    Attributes:
        epsilons: the grid.
        delta: approximate-DP (hockey-stick) delta, max over both directions.
        eta: tail ``P[L > eps]`` of the release as published (sufficient DP's eta), max over both directions.
        delta_pbdp: the pbdp delta (largest tail over post-processings).
        explanation: how the three differ.
    """

    epsilons: tuple[float, ...]
    delta: tuple[float, ...]
    eta: tuple[float, ...]
    delta_pbdp: tuple[float, ...]
    explanation: str = ETA_DELTA_EXPLANATION
    kind: str = "exact"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "epsilons": list(self.epsilons),
            "delta": list(self.delta),
            "eta": list(self.eta),
            "delta_pbdp": list(self.delta_pbdp),
            "explanation": self.explanation,
            "kind": self.kind,
        }

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` indexed by ``epsilon``: ``delta``, ``eta``, ``delta_pbdp``.

        Raises:
            ImportError: pandas is not installed (``pip install 'sufficientdp[pandas]'``).
        """
        return data_frame({"epsilon": self.epsilons, "delta": self.delta, "eta": self.eta,
                           "delta_pbdp": self.delta_pbdp}, index="epsilon")

    def format(self) -> str:
        """Plain-text table."""
        rows = [f"{'eps':>8} {'delta(eps)':>12} {'eta(eps)':>12} {'delta_pbdp':>12}"]
        for e, d, t, b in zip(self.epsilons, self.delta, self.eta, self.delta_pbdp, strict=True):
            rows.append(f"{e:8.4g} {d:12.6g} {t:12.6g} {b:12.6g}")
        return "\n".join(rows + ["", self.explanation])


def compare_eta_delta(pld: PrivacyLossDistribution | GaussianPLD, epsilons: ArrayLike) -> EtaDeltaTable:
    """Sufficient DP's ``eta`` beside the approximate-DP ``delta`` and the pbdp delta, for any PLD.

    ``eta(eps) = P[L > eps]`` is the pbdp tail of Def 5.2 for the identity post-processing only; ``delta`` is the
    hockey stick ``E[(1 - e^{eps-L})_+]``; ``delta_pbdp`` the supremum of the tail over post-processings. Hence
    ``delta <= eta <= delta_pbdp`` and pbdp implies approximate DP, not conversely.

    Examples:
        >>> from sufficientdp.accounting.mechanisms import binary_randomized_response
        >>> t = compare_eta_delta(binary_randomized_response(1 / (1 + math.e)), [0.5])
        >>> [round(x[0], 4) for x in (t.delta, t.eta, t.delta_pbdp)]
        [0.2876, 0.7311, 0.8137]
    """
    _check_pld(pld)
    eps = np.atleast_1d(_check_epsilon(epsilons)).ravel()
    dirs = _directions(pld)
    delta = np.max([np.atleast_1d(d.delta(eps)) for d in dirs], axis=0)
    eta = np.max([np.atleast_1d(d.eta(eps)) for d in dirs], axis=0)
    pb = np.atleast_1d(pbdp_delta(pld, eps))
    return EtaDeltaTable(
        epsilons=tuple(float(e) for e in eps),
        delta=tuple(float(x) for x in delta),
        eta=tuple(float(x) for x in eta),
        delta_pbdp=tuple(float(x) for x in pb),
    )
