"""Choosing the flip probability q (seed 001 §3.2–§5).

The method names load at once (:mod:`.methods`); everything else on first use, so that the command line starts
fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .methods import METHODS

__all__ = [
    "METHODS",
    "Calibration",
    "calibrate",
    "effective_bits",
    "local_q",
    "phi_from_q",
    "q_from_phi",
    "sigma_per_sqrt_n",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _calibrate

    value = getattr(_calibrate, name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from ._calibrate import (
        Calibration,
        calibrate,
        effective_bits,
        local_q,
        phi_from_q,
        q_from_phi,
        sigma_per_sqrt_n,
    )
