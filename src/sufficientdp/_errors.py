"""Exception tree of sufficientdp.

All errors raised on purpose by the library derive from :class:`SufficientDPError`:

* :class:`ParameterError` (also a :class:`ValueError`): a parameter is outside its declared domain. The message
  names the parameter, the value received and the allowed range, e.g. ``"q must be in (0, 0.5); got 0.7"``.
* :class:`DataError` (also a :class:`ValueError`): input data (reports, counts, files) has the wrong shape or
  contains values other than 0/1.
* :class:`CalibrationError` (also a :class:`ValueError`): no parameter value satisfies the requested privacy target
  (the target, as given, is infeasible).
"""

from __future__ import annotations

__all__ = ["CalibrationError", "DataError", "ParameterError", "SufficientDPError"]


class SufficientDPError(Exception):
    """Base class of every error raised on purpose by sufficientdp."""


class ParameterError(SufficientDPError, ValueError):
    """A parameter is outside its declared domain (names the parameter, the value and the range)."""


class DataError(SufficientDPError, ValueError):
    """Input data has the wrong shape, type or values."""


class CalibrationError(SufficientDPError, ValueError):
    """No parameter value satisfies the requested privacy target."""
