"""The result types and vocabulary of privacy statements, re-exported from :mod:`sufficientdp.loss.result`.

They live in the ``loss`` layer (below ``ratio``) so that the one privacy-loss distribution type,
:class:`sufficientdp.loss.PrivacyLossDistribution`, can return a :class:`TailResult`. This module keeps the old
import path working; it defines nothing.
"""

from __future__ import annotations

from ..loss.result import DIRECTIONS, KINDS, SCOPES, Direction, Kind, Scope, TailResult

__all__ = ["DIRECTIONS", "KINDS", "SCOPES", "Direction", "Kind", "Scope", "TailResult"]
