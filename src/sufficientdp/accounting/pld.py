"""Discrete privacy-loss distributions (PLDs) with exact +inf / -inf atoms.

The privacy-loss random variable of a pair of output distributions ``(P, Q)`` (digest §1.2) is
``L = log(P(w) / Q(w))`` with ``w ~ P``. A :class:`PrivacyLossDistribution` stores it as finite atoms
``(losses, probabilities)`` (probabilities under ``P``), the ``P``-mass of the ``+inf`` atom (outputs with
``Q(w) = 0 < P(w)``), and, for the record, the ``Q``-mass of the ``-inf`` atom (outputs with ``P(w) = 0 < Q(w)``;
it has ``P``-probability zero, but the reverse PLD needs it).

Every rounding goes in the safe direction: atoms whose losses agree within :data:`MERGE_TOL` are merged at the
*larger* loss, which can only increase ``delta``, ``eta``, the Rényi divergence and the attacker's power.

References:
    papers/census-semantics-digest.md §1.2 (PLRV, composition), §1.5 eq. (3) (hockey stick),
    §1.7 (pbdp / tail), §1.10 (Rényi divergence).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from .._errors import ParameterError
from .._validation import check_int, check_real_array

__all__ = ["MAX_COMPOSE_ATOMS", "MERGE_TOL", "PrivacyLossDistribution"]

#: Losses closer than this (absolute) are merged into one atom at the larger loss.
MERGE_TOL = 1e-12
#: Exact convolution refuses products with more atoms than this (before merging).
MAX_COMPOSE_ATOMS = 4_000_000

_PMF_SUM_TOL = 1e-9


def _check_epsilon(epsilon: ArrayLike, name: str = "epsilon") -> NDArray[np.float64]:
    return check_real_array(name, epsilon, low=0.0, high=math.inf, closed_low=True, allow_empty=True)


def _check_probability(value: ArrayLike, name: str) -> NDArray[np.float64]:
    return check_real_array(name, value, low=0.0, high=1.0, closed_low=True, closed_high=True, allow_empty=True)


def _scalar_or_array(x: NDArray[np.float64]) -> Any:
    return float(x) if x.ndim == 0 else x


def _merge(
    losses: NDArray[np.float64], probs: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Sort atoms by loss, drop zero-mass atoms, merge losses within MERGE_TOL at the group's largest loss."""
    keep = probs > 0
    losses, probs = losses[keep], probs[keep]
    if losses.size == 0:
        return losses, probs
    order = np.argsort(losses, kind="stable")
    losses, probs = losses[order], probs[order]
    new_group = np.empty(losses.size, dtype=bool)
    new_group[0] = True
    new_group[1:] = np.diff(losses) > MERGE_TOL
    group = np.cumsum(new_group) - 1
    n = int(group[-1]) + 1
    merged_p = np.bincount(group, weights=probs, minlength=n).astype(np.float64)
    merged_l = np.full(n, -np.inf)
    np.maximum.at(merged_l, group, losses)
    return merged_l, merged_p


@dataclass(frozen=True, slots=True, kw_only=True)
class PrivacyLossDistribution:
    """A discrete privacy-loss distribution ``L = log(P/Q)``, ``w ~ P`` (digest §1.2).

    Attributes:
        losses: finite losses, strictly increasing (1-D float array).
        probabilities: their ``P``-probabilities (same shape, all > 0).
        infinity_mass: ``P``-mass of the ``+inf`` atom (outputs with ``Q = 0``).
        neg_infinity_mass: ``Q``-mass of the ``-inf`` atom (outputs with ``P = 0``); ``P``-probability zero.
        pmfs: the ``(p, q)`` arrays it was built from, or None (e.g. after composition).

    Use :meth:`from_pmfs` (or :mod:`sufficientdp.accounting.mechanisms`) rather than the constructor.

    Example:
        >>> pld = PrivacyLossDistribution.from_pmfs([0.75, 0.25], [0.25, 0.75])
        >>> round(pld.max_loss, 6), round(float(pld.delta(0.0)), 6)
        (1.098612, 0.5)
    """

    losses: NDArray[np.float64]
    probabilities: NDArray[np.float64]
    infinity_mass: float = 0.0
    neg_infinity_mass: float = 0.0
    pmfs: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None

    def __post_init__(self) -> None:
        losses = np.asarray(self.losses, dtype=np.float64)
        probs = np.asarray(self.probabilities, dtype=np.float64)
        if losses.ndim != 1 or losses.shape != probs.shape:
            raise ParameterError(
                f"losses and probabilities must be 1-D arrays of equal length; got shapes {losses.shape} and "
                f"{probs.shape}"
            )
        if not np.all(np.isfinite(losses)):
            raise ParameterError("losses must be finite (use infinity_mass for the +inf atom)")
        if np.any(~np.isfinite(probs)) or np.any(probs < 0):
            raise ParameterError("probabilities must be finite and >= 0")
        for name in ("infinity_mass", "neg_infinity_mass"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0.0 <= float(v) <= 1.0):
                raise ParameterError(f"{name} must be in [0, 1]; got {v!r}")
        total = float(probs.sum()) + float(self.infinity_mass)
        if abs(total - 1.0) > _PMF_SUM_TOL:
            raise ParameterError(
                f"probabilities + infinity_mass must sum to 1 (within {_PMF_SUM_TOL:g}); got {total!r}"
            )
        losses, probs = _merge(losses, probs)
        losses.setflags(write=False)
        probs.setflags(write=False)
        object.__setattr__(self, "losses", losses)
        object.__setattr__(self, "probabilities", probs)
        object.__setattr__(self, "infinity_mass", float(self.infinity_mass))
        object.__setattr__(self, "neg_infinity_mass", float(self.neg_infinity_mass))

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
        q_mass = np.exp(np.log(self.probabilities) - self.losses)
        # merged (rounded-up) losses make q_mass a little small (relative 1e-12); the sum check tolerates it
        return PrivacyLossDistribution(
            losses=-self.losses[::-1],
            probabilities=q_mass[::-1],
            infinity_mass=self.neg_infinity_mass,
            neg_infinity_mass=self.infinity_mass,
        )

    # ------------------------------------------------------------------ scalar summaries
    @property
    def max_loss(self) -> float:
        """Largest loss: the pure-DP epsilon of this direction (``inf`` if there is a ``+inf`` atom)."""
        if self.infinity_mass > 0 or self.losses.size == 0:
            return math.inf
        return max(0.0, float(self.losses[-1]))

    def delta(self, epsilon: ArrayLike) -> Any:
        """Hockey-stick divergence ``delta(eps) = E_P[(1 - e^{eps - L})_+] + P(L = inf)`` (digest eq. 3).

        Vectorized over ``epsilon`` (finite, >= 0). Example: ``from_pmfs([.75,.25],[.25,.75]).delta(0) == 0.5``.
        """
        eps = _check_epsilon(epsilon)
        flat = eps.ravel()
        out = np.empty(flat.size)
        block = max(1, 4_000_000 // max(1, self.losses.size))  # bound the (eps x atoms) work array
        for start in range(0, flat.size, block):
            chunk = flat[start : start + block]
            # (1 - e^{eps-L})_+ = -expm1(eps - L) for L > eps
            diff = chunk[:, None] - self.losses[None, :]
            terms = np.where(diff < 0, -np.expm1(np.minimum(diff, 0.0)), 0.0)
            out[start : start + block] = terms @ self.probabilities + self.infinity_mass
        return _scalar_or_array(np.minimum(out, 1.0).reshape(eps.shape))

    def eta(self, epsilon: ArrayLike) -> Any:
        """Tail ``eta(eps) = P[L > eps]`` (including the ``+inf`` atom); always ``eta >= delta`` (digest §1.7)."""
        eps = _check_epsilon(epsilon)
        cum = np.concatenate([[0.0], np.cumsum(self.probabilities[::-1])])  # mass of the top-j atoms
        above = self.losses.size - np.searchsorted(self.losses, eps.ravel(), side="right")
        out = cum[above] + self.infinity_mass
        return _scalar_or_array(np.minimum(out, 1.0).reshape(eps.shape))

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
        qs = np.exp(np.log(ps) - ls)
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
        while eps < hi and float(self.delta(eps)) > target:
            eps = min(hi, float(np.nextafter(eps, np.inf)) + abs(eps) * 1e-15)
        return eps

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
        logp = np.log(self.probabilities)
        lse = logsumexp(logp[None, :] + (flat[:, None] - 1.0) * self.losses[None, :], axis=1)
        out = np.maximum(lse / (flat - 1.0), 0.0)
        return _scalar_or_array(out.reshape(a.shape))

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
