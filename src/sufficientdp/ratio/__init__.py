"""The privacy ratio R(S) of the anonymized output and its distribution (seed 001 §1.2, §2, §3)."""

from .homogeneous import RatioMoments, log_phi, ratio_moments

__all__ = ["RatioMoments", "log_phi", "ratio_moments"]
