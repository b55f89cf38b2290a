"""Temporary partial init while modules are being written."""
__version__ = "0.1.0"
from ._errors import CalibrationError, DataError, ParameterError, SufficientDPError
from .calibration import Calibration, calibrate, local_q, sigma_per_sqrt_n
from .parameters import PrivacyTarget, RandomizationParams
from .randomization._dyadic import DyadicProbability
from .ratio import RatioMoments, ratio_moments
