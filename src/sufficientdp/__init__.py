"""sufficientdp: bit-vector randomized response with sufficient differential privacy.

The flow (seed 001): each device flips every bit of its report with probability q (:func:`randomize`), the server
anonymizes by tallying (:func:`tally`), analysts get unbiased counts with confidence intervals
(:func:`estimate_bits`, :func:`joint_frequencies`), and q is chosen by :func:`calibrate`. The guarantee at a q:
:func:`privacy_tail` (:func:`proven_tail` over every collection, :func:`rounds_tail` over T rounds), each a
:class:`TailResult` whose ranges are :class:`Interval` values.

The top level is the curated surface; the low-level helpers live in their modules: ``sufficientdp.randomization``
(``pack_bits``, ``unpack_bits``, ``DyadicProbability``), ``sufficientdp.aggregation`` (``tally_packed``),
``sufficientdp.parameters`` (``effective_bits``), ``sufficientdp.ratio`` (``ratio_moments``). Arguments use one
name per idea: ``population`` (N, people), ``reports`` (k), ``confidence_level`` (as scipy names it).

Exceptions: :class:`SufficientDPError` is the base; :class:`ParameterError` (a ``ValueError``) for parameters
outside their domain; :class:`DataError` (a ``ValueError``) for malformed data; :class:`CalibrationError` when no q
meets a target.
"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from ._errors import CalibrationError, DataError, ParameterError, SufficientDPError
from ._lazy import lazy_getattr as _lazy_getattr

# The public names load their modules on first use (PEP 562), so that ``import sufficientdp`` and the command line
# start fast; ``from sufficientdp import calibrate`` works as usual.
_LAZY = {
    # the guarantee: choosing q, and the tail eta = P[privacy loss > epsilon] with its result types
    "Calibration": ".calibration", "calibrate": ".calibration",
    "privacy_tail": ".ratio.analysis", "proven_tail": ".ratio.proven", "rounds_tail": ".accounting.rounds",
    "TailResult": ".loss.result", "Interval": ".loss.result", "Kind": ".loss.result", "Scope": ".loss.result",
    "Direction": ".loss.result",
    # the mechanism's parameters and facts
    "PrivacyTarget": ".parameters", "RandomizationParams": ".parameters", "local_q": ".parameters",
    "sigma_per_sqrt_n": ".parameters",
    # the flow: encode, randomize, tally, estimate
    "encode_bits": ".randomization", "encode_one_hot": ".randomization", "encode_set": ".randomization",
    "randomize": ".randomization", "Randomizer": ".randomization",
    "Tally": ".aggregation", "tally": ".aggregation",
    "BitEstimates": ".estimation", "JointEstimate": ".estimation", "estimate_bits": ".estimation",
    "joint_frequencies": ".estimation",
}


__getattr__ = _lazy_getattr(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # for type checkers and IDEs: the eager imports
    from .accounting.rounds import rounds_tail
    from .aggregation import Tally, tally
    from .calibration import Calibration, calibrate
    from .estimation import BitEstimates, JointEstimate, estimate_bits, joint_frequencies
    from .loss.result import Direction, Interval, Kind, Scope, TailResult
    from .parameters import PrivacyTarget, RandomizationParams, local_q, sigma_per_sqrt_n
    from .randomization import Randomizer, encode_bits, encode_one_hot, encode_set, randomize
    from .ratio.analysis import privacy_tail
    from .ratio.proven import proven_tail

__all__ = [
    "BitEstimates",
    "Calibration",
    "CalibrationError",
    "DataError",
    "Direction",
    "Interval",
    "JointEstimate",
    "Kind",
    "ParameterError",
    "PrivacyTarget",
    "RandomizationParams",
    "Randomizer",
    "Scope",
    "SufficientDPError",
    "TailResult",
    "Tally",
    "__version__",
    "calibrate",
    "encode_bits",
    "encode_one_hot",
    "encode_set",
    "estimate_bits",
    "joint_frequencies",
    "local_q",
    "privacy_tail",
    "proven_tail",
    "randomize",
    "rounds_tail",
    "sigma_per_sqrt_n",
    "tally",
]
