"""Privacy amplification by Poisson subsampling, exactly, on a privacy-loss distribution.

Each person is included independently with probability ``gamma`` before the mechanism runs. If ``(P, Q)`` is the
pair of output distributions for a dataset with and without the person (``P = M(D ∪ {x})``, ``Q = M(D)``), the
subsampled mechanism's pairs are (Balle, Barthe & Gaboardi 2018, Theorem 8; Zhu, Dong & Wang 2022, §4)::

    add:    (gamma P + (1 - gamma) Q,  Q)                    loss  log(gamma e^L + 1 - gamma)
    remove: (Q,  gamma P + (1 - gamma) Q)                    loss -log(gamma e^L + 1 - gamma)

Only the PLD of ``(P, Q)`` is needed: an atom at loss ``l`` with ``P``-mass ``p`` has ``Q``-mass ``p e^{-l}``;
the ``+inf`` atom (``P``-mass ``a``, ``Q``-mass 0) stays ``+inf`` with mass ``gamma a`` when adding and becomes a
``-inf`` record of ``Q``-mass ``gamma a`` when removing; the ``-inf`` record (``Q``-mass ``b``, ``P``-mass 0) becomes a
*finite* atom: loss ``log(1 - gamma)`` with mass ``(1 - gamma) b`` (add), loss ``-log(1 - gamma)`` with mass ``b``
(remove). For a pure ``eps``-DP mechanism the largest loss is ``log(1 + gamma (e^eps - 1))`` (add; the classic
amplification bound) and ``-log(1 - gamma (1 - e^{-eps}))`` (remove), which is never larger.

References:
    Balle, Barthe, Gaboardi (2018), "Privacy amplification by subsampling: tight analyses via couplings and
    divergences", Theorem 8 (and [9] of papers/004_47af1ee980af8d2f.txt); Zhu, Dong, Wang (2022),
    "Optimal accounting of differential privacy via characteristic function", §4; digest §1.2 (PLRV).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .._errors import ParameterError
from .._validation import check_choice
from ..loss.distribution import PrivacyLossDistribution

__all__ = ["SUBSAMPLING_DIRECTIONS", "poisson_subsample"]

#: The add/remove-one neighbouring relation: the output drawn from the dataset with the person ("add") or without
#: ("remove"). Not :class:`~sufficientdp.loss.result.Direction` (pairs of equal size; see its docstring).
SUBSAMPLING_DIRECTIONS = ("add", "remove")


def _check_rate(rate: Any) -> float:
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or math.isnan(float(rate)) \
            or not (0.0 < float(rate) <= 1.0):
        raise ParameterError(f"rate must be in (0, 1]; got {rate!r}")
    return float(rate)


def poisson_subsample(pld: PrivacyLossDistribution, rate: float, direction: str = "add") -> PrivacyLossDistribution:
    """PLD of the Poisson-subsampled mechanism (each person kept with probability ``rate``), exactly.

    ``pld`` must be the PLD of ``(P, Q) = (M(D ∪ {x}), M(D))`` — the "with the person" distribution first. For a
    symmetric mechanism (randomized response, Gaussian, discrete Gaussian, geometric) any PLD of it will do.
    Losses are computed in the log domain (``log(gamma e^l + 1 - gamma) = logaddexp(log gamma + l, log1p(-gamma))``)
    and the ``P``-masses of the new pair as ``p (gamma + (1 - gamma) e^{-l})`` (add) or ``p e^{-l}`` (remove).

    Args:
        pld: a :class:`~sufficientdp.loss.distribution.PrivacyLossDistribution`.
        rate: the inclusion probability ``gamma`` in (0, 1] (``rate = 1`` returns the same pair, or its reverse).
        direction: ``"add"`` (pair ``(gamma P + (1 - gamma) Q, Q)``) or ``"remove"`` (``(Q, gamma P + (1-gamma) Q)``).

    Returns:
        The subsampled PLD (no ``pmfs`` attached); exact given the input PLD. Atoms merged by the input (at the
        larger loss) make its ``Q``-masses ``p e^{-l}`` slightly small, so results stay within float rounding.

    Raises:
        ParameterError: ``pld`` not a PrivacyLossDistribution, ``rate`` outside (0, 1], unknown ``direction``.

    References:
        Balle, Barthe, Gaboardi 2018, Theorem 8; Zhu, Dong, Wang 2022, §4.

    Examples:
        >>> from sufficientdp.accounting.mechanisms import binary_randomized_response
        >>> sub = poisson_subsample(binary_randomized_response(0.25), 0.1)
        >>> round(sub.max_loss, 12) == round(math.log(1 + 0.1 * (3 - 1)), 12)  # log(1 + gamma (e^eps - 1))
        True
    """
    if not isinstance(pld, PrivacyLossDistribution):
        raise ParameterError(f"pld must be a PrivacyLossDistribution; got {type(pld).__name__}")
    gamma = _check_rate(rate)
    direction = check_choice("direction", direction, SUBSAMPLING_DIRECTIONS)
    ls = pld.losses
    log_p = np.log(pld.probabilities)
    log_g = math.log(gamma)
    log_1mg = math.log1p(-gamma) if gamma < 1.0 else -math.inf
    with np.errstate(divide="ignore"):
        mix = np.logaddexp(log_g + ls, log_1mg)  # log(gamma e^l + 1 - gamma) = log(mixture / Q)
    log_q = log_p - ls  # Q-masses of the finite atoms
    a, b = pld.infinity_mass, pld.neg_infinity_mass
    if direction == "add":
        losses = mix
        probs = np.exp(log_q + mix)  # (gamma p + (1 - gamma) q)
        inf_mass = gamma * a
        neg_mass = 0.0
        if b > 0.0 and gamma < 1.0:  # the -inf outcome: P' = (1 - gamma) b, Q' = b
            losses = np.append(losses, log_1mg)
            probs = np.append(probs, (1.0 - gamma) * b)
        elif b > 0.0:
            neg_mass = b
    else:
        losses = -mix
        probs = np.exp(log_q)
        inf_mass = 0.0
        neg_mass = gamma * a  # the +inf outcome: P' = Q-mass 0, Q' = gamma a
        if b > 0.0 and gamma < 1.0:  # the -inf outcome: P' = b, Q' = (1 - gamma) b
            losses = np.append(losses, -log_1mg)
            probs = np.append(probs, b)
        elif b > 0.0:
            inf_mass = b
    return PrivacyLossDistribution(losses=np.asarray(losses, dtype=np.float64),
                                   probabilities=np.asarray(probs, dtype=np.float64),
                                   infinity_mass=min(1.0, inf_mass), neg_infinity_mass=min(1.0, neg_mass))
