"""Choosing the flip probability q (seed 001 §3.2–§5)."""

from .calibrate import (
    METHODS,
    Calibration,
    calibrate,
    effective_bits,
    local_q,
    phi_from_q,
    q_from_phi,
    sigma_per_sqrt_n,
)

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
