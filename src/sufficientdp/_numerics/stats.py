"""scipy.stats, imported on first use.

``import scipy.stats`` loads every distribution (about 0.6 s on the 2-core machine), and most commands never call
one: the default proven bound needs none. The analysis modules reach the few laws they use (boost's binomial, the
beta quantile) through :func:`scipy_stats`, the normal quantile through :func:`normal_quantile`, so the import happens at the first call (issue 10:
start-up time). The functions, and so the numbers, are scipy's own.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["normal_quantile", "scipy_stats"]


def scipy_stats() -> ModuleType:
    """The ``scipy.stats`` module (imported the first time; Python caches it after that)."""
    return importlib.import_module("scipy.stats")


def normal_quantile(p: float) -> float:
    """``scipy.stats.norm.ppf(p)`` for a probability ``p``, without importing scipy.stats: the standard normal
    quantile is ``scipy.special.ndtri`` (what ``norm.ppf`` evaluates, times scale 1 plus loc 0: the same float;
    ``-inf`` at 0, ``inf`` at 1, nan outside [0, 1] as ``norm.ppf`` gives). Used for the z of confidence intervals
    and detection thresholds (``estimate`` then starts in a fraction of scipy.stats' 0.6 s import; issue 10).

        >>> normal_quantile(0.975)
        1.959963984540054
    """
    from scipy.special import ndtri  # noqa: PLC0415 - 0.2 s to import: only the commands that need a quantile

    return float(ndtri(p))
