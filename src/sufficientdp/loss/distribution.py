"""THE privacy-loss distribution (PLD) type: discrete, with exact +inf / -inf atoms.

The privacy-loss random variable of a pair of output distributions ``(P, Q)`` (digest §1.2) is
``L = log(P(w) / Q(w))`` with ``w ~ P``. For the anonymized release of seed 001 with ``P = A(D_m)`` and
``Q = A(D)`` it is the log of the privacy ratio, ``L = log R(S)`` with ``S ~ A(D_m)`` (seed 001 eq. 1.5-1.7), so one
type serves both: :class:`PrivacyLossDistribution` stores finite atoms ``(losses, probabilities)`` (probabilities
under ``P``, kept both as given and in the log domain, so a tail of 1e-1000 is still a number), the ``P``-mass of
the ``+inf`` atom (outputs with ``Q(w) = 0 < P(w)``), and, for the record, the ``Q``-mass of the ``-inf`` atom
(outputs with ``P(w) = 0 < Q(w)``; it has ``P``-probability zero, but the reverse PLD needs it). Optional fields
say which configuration of the seed-001 release a distribution describes (``q``, ``bits``, ``population``, ...);
``sufficientdp.ratio.exact.RatioDistribution`` is another name for this class.

Every rounding goes in the safe direction: atoms whose losses agree within ``merge_tol`` (:data:`MERGE_TOL`) are
merged at the *larger* loss, which can only increase ``delta``, ``eta``, the Rényi divergence and the attacker's
power.

References:
    papers/census-semantics-digest.md §1.2 (PLRV, composition), §1.5 eq. (3) (hockey stick),
    §1.7 (pbdp / tail), §1.10 (Rényi divergence); seed 001 eq. (1.5)-(1.7) (the privacy ratio and its tail).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._errors import ParameterError
from .._frozen import freeze, readonly, thaw
from .._numerics.logspace import logsumexp
from .._numerics.search import creep_then_bisect, verdict
from .._validation import _as_float, check_int, check_open_interval, check_real_array
from .result import TailResult

__all__ = ["ETA_DELTA_EXPLANATION", "MAX_COMPOSE_ATOMS", "MERGE_TOL", "PrivacyLossDistribution"]

#: How delta, eta and delta_pbdp differ, in one paragraph (printed by the account command; kept here, next to
#: :meth:`PrivacyLossDistribution.delta` / :meth:`~PrivacyLossDistribution.eta`, so that printing it imports no
#: accounting module).
ETA_DELTA_EXPLANATION = (
    "delta(eps) is the approximate-DP (hockey-stick) delta: it bounds P[L = inf] but is NOT the probability that "
    "the privacy loss exceeds eps. eta(eps) = P[L > eps] is that probability for the release as published (the "
    "quantity sufficient DP bounds, P[R(S) > lambda] with lambda = e^eps); it is not post-processing invariant. "
    "delta_pbdp(eps) is the largest tail any post-processing can produce (probabilistically-bounded DP). Always "
    "delta <= eta <= delta_pbdp."
)

#: Losses closer than this (absolute; a relative difference of about 1e-12 on the ratio ``e**loss``) are merged
#: into one atom at the larger loss.
MERGE_TOL = 1e-12
#: Exact convolution refuses products with more atoms than this (before merging).
MAX_COMPOSE_ATOMS = 4_000_000

_PMF_SUM_TOL = 1e-9
_REAL = "a real number in (-inf, inf)"


def _check_epsilon(epsilon: ArrayLike, name: str = "epsilon") -> NDArray[np.float64]:
    """``epsilon >= 0`` (scalar or array), as the accounting functions take it."""
    return check_real_array(name, epsilon, low=0.0, high=math.inf, closed_low=True, allow_empty=True)


def _check_probability(value: ArrayLike, name: str) -> NDArray[np.float64]:
    return check_real_array(name, value, low=0.0, high=1.0, closed_low=True, closed_high=True, allow_empty=True)


def _scalar_or_array(x: NDArray[np.float64]) -> Any:
    return float(x) if x.ndim == 0 else x


def _real_epsilon(epsilon: Any) -> float:
    """One real ``epsilon`` (any sign, +-inf allowed, not NaN)."""
    return _as_float("epsilon", epsilon, "(-inf, inf)")


def _real_epsilons(epsilon: Any) -> NDArray[np.float64]:
    """Real ``epsilon`` values, scalar or array (any sign, +-inf allowed, not NaN)."""
    arr = np.asarray(epsilon)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ParameterError(f"epsilon must be {_REAL} (or an array of them); got {epsilon!r}")
    out = arr.astype(np.float64)
    if np.any(np.isnan(out)):
        raise ParameterError(f"epsilon must be {_REAL} (or an array of them); got nan")
    return out


def _ro(a: ArrayLike) -> NDArray[np.float64]:
    out = np.array(a, dtype=np.float64)
    out.setflags(write=False)
    return out


def _merge(
    losses: NDArray[np.float64], weights: NDArray[np.float64], log_domain: bool, tol: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Sort atoms by loss, drop zero-mass atoms, merge losses within ``tol`` at the group's largest loss.

    ``weights`` are probabilities, or their logs when ``log_domain``; the merged masses are summed in that domain
    (``logaddexp`` in the log domain).
    """
    keep = weights > (-np.inf if log_domain else 0.0)
    losses, weights = losses[keep], weights[keep]
    if losses.size == 0:
        return losses, weights
    order = np.argsort(losses, kind="stable")
    losses, weights = losses[order], weights[order]
    starts = np.concatenate([[0], np.flatnonzero(np.diff(losses) > tol) + 1])
    ends = np.concatenate([starts[1:], [losses.size]]) - 1
    summed = (np.logaddexp if log_domain else np.add).reduceat(weights, starts)
    return losses[ends], summed


def _either(name: str, value: Any, alias: str, other: Any) -> Any:
    if (value is None) == (other is None):
        raise ParameterError(f"give exactly one of {name} and {alias}")
    return value if value is not None else other


@dataclass(frozen=True, slots=True, init=False)
class PrivacyLossDistribution:
    """A discrete privacy-loss distribution ``L = log(P/Q)``, ``w ~ P`` (digest §1.2; seed 001 eq. 1.6).

    Build it with :meth:`from_pmfs`, a mechanism of :mod:`sufficientdp.accounting.mechanisms`, or the exact
    privacy-ratio distributions of :mod:`sufficientdp.ratio.exact` (there ``P = A(D_m)``, ``Q = A(D)`` and the loss
    is ``log R(S)``). The keyword constructor takes the finite atoms as ``losses`` (alias ``log_ratios``) and their
    masses as ``probabilities`` or ``log_probabilities``; atoms are sorted, zero-mass atoms dropped and losses within
    ``merge_tol`` merged at the larger loss; the finite masses plus ``infinity_mass`` must sum to 1 (within 1e-9).

    Attributes:
        losses: finite losses, strictly increasing (read-only 1-D float array); also :attr:`log_ratios`.
        probabilities: their ``P``-probabilities (read-only, same shape, all > 0).
        log_probabilities: their logs (read-only; exact as given when built from logs).
        infinity_mass: ``P``-mass of the ``+inf`` atom (outputs with ``Q = 0``).
        neg_infinity_mass: ``Q``-mass of the ``-inf`` atom (outputs with ``P = 0``); ``P``-probability zero.
        pmfs: the ``(p, q)`` arrays it was built from (read-only copies), or None (e.g. after composition).
        q, bits, population: the seed-001 configuration (flip probability, L, N), or None.
        outlier_bits: ``j`` for the homogeneous configuration, else None.
        method: how it was computed (``"exact-histogram"``, ``"exact-homogeneous"``), or None.
        outputs: number of outputs enumerated (before merging equal losses), 0 if not recorded.
        merge_tol: the merging tolerance used.
        details: configuration extras, read-only (a :class:`~sufficientdp._frozen.FrozenDict`; ``to_dict`` gives
            plain JSON).

    Examples:
        >>> pld = PrivacyLossDistribution.from_pmfs([0.75, 0.25], [0.25, 0.75])
        >>> round(pld.max_loss, 6), round(float(pld.delta(0.0)), 6)
        (1.098612, 0.5)
    """

    losses: NDArray[np.float64]
    probabilities: NDArray[np.float64]
    log_probabilities: NDArray[np.float64]
    infinity_mass: float
    neg_infinity_mass: float
    pmfs: tuple[NDArray[np.float64], NDArray[np.float64]] | None
    q: float | None
    bits: int | None
    population: int | None
    outlier_bits: int | None
    method: str | None
    outputs: int
    merge_tol: float
    details: Mapping[str, Any]
    _log_sf: NDArray[np.float64] = field(repr=False, compare=False)

    def __init__(
        self,
        *,
        losses: ArrayLike | None = None,
        probabilities: ArrayLike | None = None,
        infinity_mass: float = 0.0,
        neg_infinity_mass: float = 0.0,
        pmfs: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
        log_ratios: ArrayLike | None = None,
        log_probabilities: ArrayLike | None = None,
        q: float | None = None,
        bits: int | None = None,
        population: int | None = None,
        outlier_bits: int | None = None,
        method: str | None = None,
        outputs: int = 0,
        merge_tol: float = MERGE_TOL,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        raw_losses = np.asarray(_either("losses", losses, "log_ratios", log_ratios), dtype=np.float64)
        log_domain = log_probabilities is not None
        raw_mass = np.asarray(
            _either("probabilities", probabilities, "log_probabilities", log_probabilities), dtype=np.float64
        )
        if raw_losses.ndim != 1 or raw_losses.shape != raw_mass.shape:
            raise ParameterError(
                f"losses and probabilities must be 1-D arrays of equal length; got shapes {raw_losses.shape} and "
                f"{raw_mass.shape}"
            )
        if not np.all(np.isfinite(raw_losses)):
            raise ParameterError("losses must be finite (use infinity_mass for the +inf atom)")
        if log_domain:
            if np.any(np.isnan(raw_mass)) or np.any(raw_mass > 0):
                raise ParameterError("log_probabilities must be <= 0 and not NaN")
        elif np.any(~np.isfinite(raw_mass)) or np.any(raw_mass < 0):
            raise ParameterError("probabilities must be finite and >= 0")
        for name, v in (("infinity_mass", infinity_mass), ("neg_infinity_mass", neg_infinity_mass)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0.0 <= float(v) <= 1.0):
                raise ParameterError(f"{name} must be in [0, 1]; got {v!r}")
        total = float((np.exp(raw_mass) if log_domain else raw_mass).sum()) + float(infinity_mass)
        if abs(total - 1.0) > _PMF_SUM_TOL:
            raise ParameterError(
                f"probabilities + infinity_mass must sum to 1 (within {_PMF_SUM_TOL:g}); got {total!r}"
            )
        tol = float(merge_tol)
        merged_losses, merged = _merge(raw_losses, raw_mass, log_domain, tol)
        if log_domain:
            log_p, probs = merged, np.exp(merged)
        else:
            with np.errstate(divide="ignore"):
                log_p, probs = np.log(merged), merged
        setattr_ = object.__setattr__
        setattr_(self, "losses", _ro(merged_losses))
        setattr_(self, "probabilities", _ro(probs))
        setattr_(self, "log_probabilities", _ro(log_p))
        setattr_(self, "infinity_mass", float(infinity_mass))
        setattr_(self, "neg_infinity_mass", float(neg_infinity_mass))
        setattr_(self, "pmfs", None if pmfs is None else tuple(readonly(a, np.float64) for a in pmfs))
        setattr_(self, "q", q)
        setattr_(self, "bits", bits)
        setattr_(self, "population", population)
        setattr_(self, "outlier_bits", outlier_bits)
        setattr_(self, "method", method)
        setattr_(self, "outputs", int(outputs))
        setattr_(self, "merge_tol", tol)
        setattr_(self, "details", freeze({} if details is None else details))
        # log P[L >= losses[k]] over the finite atoms (reverse cumulative logsumexp)
        sf = np.logaddexp.accumulate(log_p[::-1])[::-1] if log_p.size else log_p
        setattr_(self, "_log_sf", _ro(sf))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_pmfs(cls, p: ArrayLike, q: ArrayLike) -> PrivacyLossDistribution:
        """Build the PLD of ``L = log(p/q)`` under ``p`` from two pmfs on the same finite outcome space.

        Outcomes with ``p > 0 = q`` go to the ``+inf`` atom, outcomes with ``p = 0 < q`` to the ``-inf`` record
        (exactly, no clipping); outcomes with ``p = q = 0`` are ignored.

        Args:
            p: pmf of ``M(D1)`` (1-D, entries in [0, 1], sum 1 within 1e-9).
            q: pmf of ``M(D2)`` (same shape).

        Raises:
            ParameterError: shapes differ, entries outside [0, 1] or NaN, or a sum is not 1.
        """
        pa = np.array(p, dtype=np.float64).ravel()
        qa = np.array(q, dtype=np.float64).ravel()
        if pa.shape != qa.shape or pa.size == 0:
            raise ParameterError(f"p and q must be non-empty and of equal length; got {pa.size} and {qa.size}")
        for name, arr in (("p", pa), ("q", qa)):
            if np.any(np.isnan(arr)) or np.any(arr < 0) or np.any(arr > 1):
                raise ParameterError(f"{name} must have entries in [0, 1]; got {arr!r}")
            s = float(arr.sum())
            if abs(s - 1.0) > _PMF_SUM_TOL:
                raise ParameterError(f"{name} must sum to 1 (within {_PMF_SUM_TOL:g}); got sum {s!r}")
        finite = (pa > 0) & (qa > 0)
        losses = np.log(pa[finite]) - np.log(qa[finite])
        inf_mass = float(pa[(pa > 0) & (qa == 0)].sum())
        neg_mass = float(qa[(pa == 0) & (qa > 0)].sum())
        pa.setflags(write=False)
        qa.setflags(write=False)
        return cls(
            losses=losses,
            probabilities=pa[finite],
            infinity_mass=inf_mass,
            neg_infinity_mass=neg_mass,
            pmfs=(pa, qa),
        )

    def reverse(self) -> PrivacyLossDistribution:
        """The PLD of the other direction, ``log(Q/P)`` under ``Q``.

        From the stored pmfs when available (exact); otherwise by change of measure: the atom at loss ``l`` with
        ``P``-mass ``p`` becomes an atom at ``-l`` with ``Q``-mass ``p e^{-l}``, and the ``±inf`` masses swap.
        """
        if self.pmfs is not None:
            return PrivacyLossDistribution.from_pmfs(self.pmfs[1], self.pmfs[0])
        q_mass = np.exp(self.log_probabilities - self.losses)
        # merged (rounded-up) losses make q_mass a little small (relative 1e-12); the sum check tolerates it
        return PrivacyLossDistribution(
            losses=-self.losses[::-1],
            probabilities=q_mass[::-1],
            infinity_mass=self.neg_infinity_mass,
            neg_infinity_mass=self.infinity_mass,
        )

    # ------------------------------------------------------------------ the atoms as ratios R = e**L
    @property
    def log_ratios(self) -> NDArray[np.float64]:
        """Another name for :attr:`losses`: ``log R`` of each atom, increasing."""
        return self.losses

    @property
    def ratios(self) -> NDArray[np.float64]:
        """The distinct finite values of ``R = e**L``, increasing."""
        return np.exp(self.losses)

    @property
    def max_ratio(self) -> float:
        """``max R`` over the outputs (``inf`` with a ``+inf`` atom)."""
        if self.infinity_mass > 0:
            return math.inf
        return float(np.exp(self.losses[-1]))

    @property
    def min_ratio(self) -> float:
        """``min R`` over the outputs with ``P > 0``."""
        return float(np.exp(self.losses[0]))

    @property
    def mean(self) -> float:
        """``E_P R`` (for the homogeneous configuration: ``(N - 1)/N + phi**j / N``, seed 001 eq. 3.12)."""
        if self.infinity_mass > 0:
            return math.inf
        return float(np.exp(logsumexp(self.log_probabilities + self.losses)))

    # ------------------------------------------------------------------ scalar summaries
    @property
    def max_loss(self) -> float:
        """Largest loss: the pure-DP epsilon of this direction (``inf`` if there is a ``+inf`` atom)."""
        if self.infinity_mass > 0 or self.losses.size == 0:
            return math.inf
        return max(0.0, float(self.losses[-1]))

    def log_eta(self, epsilon: float) -> float:
        """``log eta(epsilon)``; ``-inf`` when no output has ``L > epsilon``."""
        eps = _real_epsilon(epsilon)
        k = int(np.searchsorted(self.losses, eps, side="right"))
        finite = float(self._log_sf[k]) if k < self._log_sf.size else -math.inf
        if self.infinity_mass > 0:
            return float(np.logaddexp(finite, math.log(self.infinity_mass)))
        return finite

    def eta(self, epsilon: ArrayLike) -> Any:
        """Tail ``eta(epsilon) = P[L > epsilon]`` (seed 001 eq. 1.7; including the ``+inf`` atom), exact.

        Any real ``epsilon`` (not NaN), scalar (returns a float) or array; always ``eta >= delta`` (digest §1.7).
        Summed in the log domain, so tails far below the smallest float are ``log_eta`` values, not 0 by accident.

        Examples:
            >>> from sufficientdp.ratio.exact import homogeneous_ratio_distribution
            >>> dist = homogeneous_ratio_distribution(0.25, 2, 3)
            >>> round(dist.eta(1.0), 6)  # = 2521/4096
            0.615479
        """
        if np.ndim(epsilon) == 0 and not isinstance(epsilon, np.ndarray):
            return min(1.0, math.exp(self.log_eta(_real_epsilon(epsilon))))
        return _scalar_or_array(self.eta_many(epsilon))

    def eta_many(self, epsilons: ArrayLike) -> NDArray[np.float64]:
        """:meth:`eta` over an array of ``epsilon`` values (finite or infinite, not NaN), as an array."""
        eps = _real_epsilons(epsilons)
        k = np.searchsorted(self.losses, eps, side="right")
        out: NDArray[np.float64] = np.exp(np.append(self._log_sf, -np.inf)[k])
        if self.infinity_mass > 0:
            out = out + self.infinity_mass
        return np.minimum(1.0, out)

    def epsilon_for(self, eta: float) -> float:
        """Smallest ``epsilon`` with ``eta(epsilon) <= eta`` (the exact inverse of the tail; ``-inf`` if eta >= 1).

        It is a loss of an atom: ``losses[k]`` for the first ``k`` with ``P[L > losses[k]] <= eta`` (``inf`` when
        ``eta`` is below the ``+inf`` atom's mass).

        Examples:
            >>> from sufficientdp.ratio.exact import homogeneous_ratio_distribution
            >>> dist = homogeneous_ratio_distribution(0.25, 2, 3)
            >>> eps = dist.epsilon_for(0.05)
            >>> dist.eta(eps) <= 0.05 < dist.eta(eps - 1e-9)
            True
        """
        target = check_open_interval("eta", eta, 0.0, math.inf) if eta != 0 else 0.0
        if target >= 1.0:
            return -math.inf
        if target < self.infinity_mass:
            return math.inf
        after = np.append(self._log_sf[1:], -np.inf)  # log P[finite L > losses[k]]
        if self.infinity_mass > 0:
            after = np.logaddexp(after, math.log(self.infinity_mass))
        k = int(np.argmax(after <= math.log(target) if target > 0 else after == -np.inf))
        return float(self.losses[k])

    def delta(self, epsilon: ArrayLike) -> Any:
        """Hockey-stick divergence ``delta(eps) = E_P[(1 - e^{eps - L})_+] + P(L = inf)`` (digest eq. 3), exact.

        Any real ``epsilon`` (not NaN). A scalar gives a float, summed as ``math.fsum`` of
        ``P_k * (-expm1(eps - L_k))`` over the atoms with ``L_k > eps``; an array gives an array, by a blocked
        matrix product (a few ulps). Example: ``from_pmfs([.75,.25],[.25,.75]).delta(0) == 0.5``.
        """
        if np.ndim(epsilon) == 0 and not isinstance(epsilon, np.ndarray):
            eps = _real_epsilon(epsilon)
            k = int(np.searchsorted(self.losses, eps, side="right"))
            terms = (self.probabilities[k:] * -np.expm1(eps - self.losses[k:])).tolist()
            return float(min(1.0, max(0.0, math.fsum([*terms, self.infinity_mass]))))
        eps_arr = _real_epsilons(epsilon)
        flat = eps_arr.ravel()
        out = np.empty(flat.size)
        block = max(1, 4_000_000 // max(1, self.losses.size))  # bound the (eps x atoms) work array
        for start in range(0, flat.size, block):
            chunk = flat[start : start + block]
            # (1 - e^{eps-L})_+ = -expm1(eps - L) for L > eps
            with np.errstate(invalid="ignore"):
                diff = chunk[:, None] - self.losses[None, :]
            terms = np.where(diff < 0, -np.expm1(np.minimum(diff, 0.0)), 0.0)
            out[start : start + block] = terms @ self.probabilities + self.infinity_mass
        return _scalar_or_array(np.minimum(out, 1.0).reshape(eps_arr.shape))

    def delta_many(self, epsilons: ArrayLike) -> NDArray[np.float64]:
        """Fast vectorized :meth:`delta`: ``A(eps) - e**eps * B(eps)`` with ``A``, ``B`` the tail sums of ``P`` and
        ``P / R`` (plain reverse cumulative sums; adequate for comparisons at the 1e-12 level, not for tiny deltas).
        """
        eps = _real_epsilons(epsilons)
        prob = self.probabilities
        tail_a = np.append(np.cumsum(prob[::-1])[::-1], 0.0) + self.infinity_mass
        tail_b = np.append(np.cumsum((prob * np.exp(-self.losses))[::-1])[::-1], 0.0)
        k = np.searchsorted(self.losses, eps, side="right")
        with np.errstate(over="ignore", invalid="ignore"):
            out = tail_a[k] - np.exp(eps) * tail_b[k]
        out = np.where(k >= self.losses.size, self.infinity_mass, out)
        return np.clip(out, 0.0, 1.0)

    def epsilon_for_delta(self, delta: ArrayLike) -> Any:
        """Smallest ``eps >= 0`` with ``delta(eps) <= delta`` (``inf`` if ``delta < P(L = inf)``).

        Exact on each linear piece ``delta(eps) = A - e^eps B``; the result is nudged up until the check passes.
        """
        d = _check_probability(delta, "delta")
        out = np.empty(d.size)
        for i, target in enumerate(d.ravel()):
            out[i] = self._eps_for_delta_scalar(float(target))
        return _scalar_or_array(out.reshape(d.shape))

    def _eps_for_delta_scalar(self, target: float) -> float:
        if target < self.infinity_mass:
            return math.inf
        if float(self.delta(0.0)) <= target:
            return 0.0
        ls, ps = self.losses, self.probabilities
        # suffix sums over atoms with loss > eps: A = sum p + inf_mass, B = sum p e^{-l}
        qs = np.exp(self.log_probabilities - ls)
        a_suf = np.concatenate([np.cumsum(ps[::-1])[::-1], [0.0]]) + self.infinity_mass
        b_suf = np.concatenate([np.cumsum(qs[::-1])[::-1], [0.0]])
        # delta at the positive knots eps = l_j (atoms with index > j count); knots <= 0 are handled above
        with np.errstate(over="ignore", divide="ignore"):
            d_knots = np.where(ls > 0, a_suf[1:] - np.exp(ls + np.log(b_suf[1:])), np.inf)
        # first positive knot where delta <= target; the solution lies in (max(l_{j-1}, 0), l_j]
        j = int(np.argmax(d_knots <= target))
        lo = max(float(ls[j - 1]), 0.0) if j > 0 else 0.0
        hi = float(ls[j])
        a, b = float(a_suf[j]), float(b_suf[j])
        eps = math.log((a - target) / b) if a > target and b > 0 else hi
        eps = min(max(eps, lo), hi)
        # round in the safe direction (bounded: from eps = 0 a creep would step through the subnormals)
        test = verdict(lambda e: float(self.delta(e)) <= target)
        if eps >= hi or test(eps)[0]:
            return eps
        return creep_then_bisect(test, eps, hi, rel=1e-15)

    def renyi(self, alpha: ArrayLike) -> Any:
        """Rényi divergence ``D_alpha(P||Q) = log E_P[e^{(alpha-1)L}] / (alpha-1)`` for ``alpha > 1`` (digest §1.10).

        ``inf`` when there is a ``+inf`` atom. Vectorized over ``alpha``; computed with ``logsumexp``.
        """
        if isinstance(alpha, bool):
            raise ParameterError(f"alpha must be a real number in (1, inf); got {alpha!r}")
        try:
            a = np.asarray(alpha, dtype=np.float64)
        except (TypeError, ValueError):
            raise ParameterError(f"alpha must be a real number in (1, inf); got {alpha!r}") from None
        if np.any(np.isnan(a)) or np.any(a <= 1) or np.any(np.isinf(a)):
            raise ParameterError(f"alpha must be finite and in (1, inf); got {alpha!r}")
        if self.infinity_mass > 0:
            return _scalar_or_array(np.full(a.shape, np.inf))
        flat = a.ravel()
        logp = self.log_probabilities
        lse = logsumexp(logp[None, :] + (flat[:, None] - 1.0) * self.losses[None, :], axis=1)
        out = np.maximum(lse / (flat - 1.0), 0.0)
        return _scalar_or_array(out.reshape(a.shape))

    def tail(self, epsilon: float) -> TailResult:
        """The exact tail statement at ``epsilon`` as a :class:`TailResult` (``kind="exact"``).

        ``eta_lower``/``eta_upper`` bracket the effect of ties at the threshold: they are
        ``P[R > e**epsilon * (1 + tol)]`` and ``P[R > e**epsilon * (1 - tol)]`` with ``tol = 1e-9``, so a ratio that
        equals ``e**epsilon`` in exact arithmetic but not in floating point is visible. Needs the configuration
        (``q``, ``bits``, ``population``).
        """
        eps = _real_epsilon(epsilon)
        if self.q is None or self.bits is None or self.population is None:
            raise ParameterError("tail needs a distribution with q, bits and population (a seed-001 configuration)")
        tol = 1e-9
        return TailResult(
            eta=self.eta(eps),
            eta_lower=self.eta(eps + tol),
            eta_upper=self.eta(eps - tol),
            delta=self.delta(eps),
            method="exact",
            kind="exact",
            epsilon=eps,
            q=self.q,
            bits=self.bits,
            population=self.population,
            outlier_bits=self.outlier_bits,
            details={
                "enumeration": self.method,
                "outputs": self.outputs,
                "atoms": int(self.losses.size),
                "max_ratio": self.max_ratio,
                **self.details,
            },
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (arrays become lists)."""
        return {
            "ratios": self.ratios.tolist(),
            "probabilities": self.probabilities.tolist(),
            "infinity_mass": self.infinity_mass,
            "neg_infinity_mass": self.neg_infinity_mass,
            "q": self.q,
            "bits": self.bits,
            "population": self.population,
            "outlier_bits": self.outlier_bits,
            "method": self.method,
            "outputs": self.outputs,
            "merge_tol": self.merge_tol,
            "max_ratio": self.max_ratio,
            "details": thaw(self.details),
        }

    # ------------------------------------------------------------------ composition
    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution:
        """PLD of releasing both outputs with independent randomness: the independent sum (digest Ex. 4.6).

        Exact convolution: losses added, probabilities multiplied, equal losses (within :data:`MERGE_TOL`)
        merged at the larger loss. Infinite atoms: ``P(L=inf) = 1 - (1-i1)(1-i2)``, likewise the ``-inf`` record.

        Raises:
            ParameterError: ``other`` is not a PrivacyLossDistribution, or the product support exceeds
                :data:`MAX_COMPOSE_ATOMS`.
        """
        if not isinstance(other, PrivacyLossDistribution):
            raise ParameterError(f"other must be a PrivacyLossDistribution; got {type(other).__name__}")
        size = self.losses.size * other.losses.size
        if size > MAX_COMPOSE_ATOMS:
            raise ParameterError(
                f"product support must have at most MAX_COMPOSE_ATOMS={MAX_COMPOSE_ATOMS} atoms; got {size}"
            )
        losses = (self.losses[:, None] + other.losses[None, :]).ravel()
        probs = (self.probabilities[:, None] * other.probabilities[None, :]).ravel()
        inf_mass = 1.0 - (1.0 - self.infinity_mass) * (1.0 - other.infinity_mass)
        neg = 1.0 - (1.0 - self.neg_infinity_mass) * (1.0 - other.neg_infinity_mass)
        return PrivacyLossDistribution(
            losses=losses, probabilities=probs, infinity_mass=inf_mass, neg_infinity_mass=neg
        )

    def self_compose(self, k: int) -> PrivacyLossDistribution:
        """The ``k``-fold composition with itself, by repeated squaring (``k >= 1``)."""
        k = check_int("k", k, minimum=1)
        result: PrivacyLossDistribution | None = None
        base = self
        while True:
            if k & 1:
                result = base if result is None else result.compose(base)
            k >>= 1
            if not k:
                break
            base = base.compose(base)
        assert result is not None  # k >= 1 guarantees one factor
        return result
