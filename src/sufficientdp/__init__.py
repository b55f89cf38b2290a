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

from typing import TYPE_CHECKING, Any

from ._errors import CalibrationError, DataError, ParameterError, SufficientDPError

# The public names load their modules on first use (PEP 562), so that ``import sufficientdp`` and the command line
# start fast; ``from sufficientdp import calibrate`` works as usual.
_LAZY = {
    "Tally": ".aggregation", "tally": ".aggregation", "tally_packed": ".aggregation",
    "Calibration": ".calibration", "calibrate": ".calibration", "local_q": ".parameters",
    "sigma_per_sqrt_n": ".parameters", "effective_bits": ".parameters",
    "BitEstimates": ".estimation", "JointEstimate": ".estimation", "estimate_bits": ".estimation",
    "joint_frequencies": ".estimation",
    "PrivacyTarget": ".parameters", "RandomizationParams": ".parameters",
    "DyadicProbability": ".randomization", "Randomizer": ".randomization", "encode_bits": ".randomization",
    "encode_one_hot": ".randomization", "encode_set": ".randomization", "pack_bits": ".randomization",
    "randomize": ".randomization", "unpack_bits": ".randomization",
    "RatioMoments": ".ratio", "ratio_moments": ".ratio",
    "TailResult": ".loss.result", "Interval": ".loss.result", "Kind": ".loss.result", "Scope": ".loss.result",
    "Direction": ".loss.result", "privacy_tail": ".ratio.analysis", "proven_tail": ".ratio.proven",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sufficientdp' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # for type checkers and IDEs: the eager imports
    from .aggregation import Tally, tally, tally_packed
    from .calibration import Calibration, calibrate
    from .estimation import BitEstimates, JointEstimate, estimate_bits, joint_frequencies
    from .loss.result import Direction, Interval, Kind, Scope, TailResult
    from .parameters import PrivacyTarget, RandomizationParams, effective_bits, local_q, sigma_per_sqrt_n
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
    from .ratio.analysis import privacy_tail
    from .ratio.proven import proven_tail

__all__ = [
    "BitEstimates",
    "Calibration",
    "CalibrationError",
    "DataError",
    "Direction",
    "DyadicProbability",
    "Interval",
    "JointEstimate",
    "Kind",
    "ParameterError",
    "PrivacyTarget",
    "RandomizationParams",
    "Randomizer",
    "RatioMoments",
    "Scope",
    "SufficientDPError",
    "TailResult",
    "Tally",
    "__version__",
    "calibrate",
    "effective_bits",
    "encode_bits",
    "encode_one_hot",
    "encode_set",
    "estimate_bits",
    "joint_frequencies",
    "local_q",
    "pack_bits",
    "privacy_tail",
    "proven_tail",
    "randomize",
    "ratio_moments",
    "sigma_per_sqrt_n",
    "tally",
    "tally_packed",
    "unpack_bits",
]
