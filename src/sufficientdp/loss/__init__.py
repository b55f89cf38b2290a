"""Privacy-loss distributions and the result types of privacy statements.

* :mod:`sufficientdp.loss.distribution` — :class:`PrivacyLossDistribution`, THE privacy-loss distribution type
  (digest §1.2; for the anonymized release of seed 001 the law of ``log R(S)``, also known by its old name
  ``sufficientdp.ratio.exact.RatioDistribution``).
* :mod:`sufficientdp.loss.profile` — dominating pairs from bounds on a privacy profile and their n-fold
  composition ("connect the dots"), for k reports per person and for T rounds.
* :mod:`sufficientdp.loss.result` — :class:`TailResult`, :class:`Interval` and the vocabulary :class:`Kind`,
  :class:`Scope`, :class:`Direction`.

This layer sits below ``sufficientdp.ratio`` and ``sufficientdp.accounting``, which both build these types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:
    from .distribution import MAX_COMPOSE_ATOMS, MERGE_TOL, PrivacyLossDistribution
    from .result import DIRECTIONS, KINDS, SCOPES, Direction, Interval, Kind, Scope, TailResult

# (loaded on first use: a result type does not need the distribution code; issue 10, start-up)
__getattr__ = lazy_getattr(__name__, {
    "MAX_COMPOSE_ATOMS": ".distribution", "MERGE_TOL": ".distribution", "PrivacyLossDistribution": ".distribution",
    "DIRECTIONS": ".result", "KINDS": ".result", "SCOPES": ".result", "Direction": ".result", "Interval": ".result",
    "Kind": ".result", "Scope": ".result", "TailResult": ".result",
})

__all__ = [
    "DIRECTIONS",
    "KINDS",
    "MAX_COMPOSE_ATOMS",
    "MERGE_TOL",
    "SCOPES",
    "Direction",
    "Interval",
    "Kind",
    "PrivacyLossDistribution",
    "Scope",
    "TailResult",
]
