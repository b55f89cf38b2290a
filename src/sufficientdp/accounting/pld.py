"""Discrete privacy-loss distributions: the old import path of :mod:`sufficientdp.loss.distribution`.

:class:`PrivacyLossDistribution` is the one privacy-loss distribution type of the package (it also serves as the
exact privacy-ratio distribution of :mod:`sufficientdp.ratio.exact`); it lives in :mod:`sufficientdp.loss`, below
``ratio`` and ``accounting``. This module re-exports it and defines nothing.
"""

from __future__ import annotations

from ..loss.distribution import MAX_COMPOSE_ATOMS, MERGE_TOL, PrivacyLossDistribution

__all__ = ["MAX_COMPOSE_ATOMS", "MERGE_TOL", "PrivacyLossDistribution"]
