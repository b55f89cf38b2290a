"""scipy.stats, imported on first use.

``import scipy.stats`` loads every distribution (about 0.6 s on the 2-core machine), and most commands never call
one: the default proven bound needs none. The analysis modules reach the few laws they use (boost's binomial, the
beta and normal quantiles) through :func:`scipy_stats`, so the import happens at the first call (issue 10:
start-up time). The functions, and so the numbers, are scipy's own.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["scipy_stats"]


def scipy_stats() -> ModuleType:
    """The ``scipy.stats`` module (imported the first time; Python caches it after that)."""
    return importlib.import_module("scipy.stats")
