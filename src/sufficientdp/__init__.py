"""sufficientdp: bit-vector randomized response with sufficient differential privacy.

The flow (seed 001): each device flips every bit of its report with probability q (:func:`randomize`), the server
anonymizes by tallying (:func:`tally`), analysts get unbiased counts with confidence intervals
(:func:`estimate_bits`, :func:`joint_frequencies`), and q is chosen by :func:`calibrate`.

Exceptions: :class:`SufficientDPError` is the base; :class:`ParameterError` (a ``ValueError``) for parameters
outside their domain; :class:`DataError` (a ``ValueError``) for malformed data; :class:`CalibrationError` when no q
meets a target.
"""

from __future__ import annotations

__version__ = "0.1.0"

from ._errors import CalibrationError, DataError, ParameterError, SufficientDPError
from .aggregation import Tally, tally, tally_packed
from .calibration import Calibration, calibrate, local_q, sigma_per_sqrt_n
from .estimation import BitEstimates, JointEstimate, estimate_bits, joint_frequencies
from .parameters import PrivacyTarget, RandomizationParams
from .randomization import (
    DyadicProbability,
    Randomizer,
    encode_bits,
    encode_one_hot,
    encode_set,
    pack_bits,
    randomize,
    unpack_bits,
)
from .ratio import RatioMoments, ratio_moments

__all__ = [
    "BitEstimates",
    "Calibration",
    "CalibrationError",
    "DataError",
    "DyadicProbability",
    "JointEstimate",
    "ParameterError",
    "PrivacyTarget",
    "RandomizationParams",
    "Randomizer",
    "RatioMoments",
    "SufficientDPError",
    "Tally",
    "__version__",
    "calibrate",
    "encode_bits",
    "encode_one_hot",
    "encode_set",
    "estimate_bits",
    "joint_frequencies",
    "local_q",
    "pack_bits",
    "randomize",
    "ratio_moments",
    "sigma_per_sqrt_n",
    "tally",
    "tally_packed",
    "unpack_bits",
]
