"""The binomial law's log pmf, one copy for the analyses (issue 11).

It needs ``scipy.special.gammaln``, so it lives beside :mod:`.logspace` rather than in it: the interactive paths
import ``logspace`` without scipy (issue 10: start-up), and only modules that load ``scipy.special`` anyway import
this one.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaln

__all__ = ["log_binom_pmf_all"]


def log_binom_pmf_all(size: int, prob: float, *, log1m_prob: float | None = None) -> NDArray[np.float64]:
    """``log P[Bin(size, prob) = j]`` for ``j = 0..size``: ``log C(size, j) + j log(prob) + (size - j) log(1 - prob)``
    with ``gammaln`` for the coefficient (exact to rounding; ``0 < prob < 1``). ``log(1 - prob)`` is
    ``math.log1p(-prob)`` unless the caller passes its own ``log1m_prob`` (the exact homogeneous law passes
    ``math.log(1.0 - prob)``, the form its pinned values were computed with)."""
    j = np.arange(size + 1, dtype=np.float64)
    l1m = math.log1p(-prob) if log1m_prob is None else log1m_prob
    out: NDArray[np.float64] = (gammaln(size + 1.0) - gammaln(j + 1.0) - gammaln(size - j + 1.0)
                                + j * math.log(prob) + (size - j) * l1m)
    return out
