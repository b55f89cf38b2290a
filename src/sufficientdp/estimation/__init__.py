"""Estimators: per-bit counts and joint-vector frequencies with uncertainty (seed 001 §4, §6)."""

from .bits import STD_ERROR_METHODS, BitEstimates, estimate_bits
from .joint import JointEstimate, apply_channel, apply_inverse_channel, joint_frequencies

__all__ = ["STD_ERROR_METHODS", "BitEstimates", "JointEstimate", "apply_channel", "apply_inverse_channel",
           "estimate_bits", "joint_frequencies"]
