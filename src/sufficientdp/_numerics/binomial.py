"""The binomial law's log pmf, one copy for the analyses (issue 11).

It needs ``scipy.special.gammaln``, so it lives beside :mod:`.logspace` rather than in it: the interactive paths
import ``logspace`` without scipy (issue 10: start-up), and only modules that load ``scipy.special`` anyway import
this one.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

__all__ = ["log_binom_pmf", "log_binom_pmf_all"]


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


@lru_cache(maxsize=8)
def _log_factorial_table(size: int) -> NDArray[np.float64]:
    """``gammaln(i + 1)`` for ``i = 0..size`` (read-only; the same floats as ``gammaln`` on each value)."""
    table: NDArray[np.float64] = gammaln(np.arange(size + 1) + 1.0)
    table.setflags(write=False)
    return table


def log_binom_pmf(k: ArrayLike, size: ArrayLike, prob: float) -> NDArray[np.float64]:
    """``log P[Bin(size, prob) = k]`` elementwise over integer arrays ``k`` and ``size`` (broadcast), ``-inf``
    where ``k < 0`` or ``k > size``: the formula of :func:`log_binom_pmf_all` (``gammaln`` coefficient, then
    ``+ k log(prob) + (size - k) log1p(-prob)``, in that order) at scattered ``(k, size)`` pairs, the log-factorials
    read from one table (for many sizes at once a row per size would cost ``O(size)`` each).

    Examples:
        >>> import numpy as np
        >>> v = log_binom_pmf([0, 2, 3], [2, 2, 2], 0.25)
        >>> np.round(np.exp(v), 4).tolist()  # 0.75**2, 0.25**2, impossible
        [0.5625, 0.0625, 0.0]
    """
    kk, nn = np.broadcast_arrays(np.asarray(k, dtype=np.int64), np.asarray(size, dtype=np.int64))
    ok = (kk >= 0) & (kk <= nn)
    kk, nn = np.where(ok, kk, 0), np.where(ok, nn, 0)
    top = int(nn.max()) if nn.size else 0
    lf = _log_factorial_table(1 << max(6, top.bit_length()))  # a few power-of-two sizes, cached
    val = lf[nn] - lf[kk] - lf[nn - kk] + kk * math.log(prob) + (nn - kk) * math.log1p(-prob)
    out: NDArray[np.float64] = np.where(ok, val, -np.inf)
    return out
