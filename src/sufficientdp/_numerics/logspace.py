"""Log-domain sums and binomial coefficients in plain numpy (no scipy import on the interactive paths).

``scipy.special`` costs 0.2–0.4 s to import (it loads scipy's array-API layer, which imports most of numpy's
submodules), more than a whole small calibration; the all-collections bound only needs the two functions below
(issue 10: start-up).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["log_comb", "log_factorials", "logsumexp"]

_MAX_TABLE = 10_000_001  # log-factorial tables beyond this are computed per call (not cached)


def logsumexp(a: ArrayLike, axis: int | None = None) -> Any:
    """``log(sum(exp(a)))`` over ``axis`` (all elements when None), stable for large and ``-inf`` entries.

    A slice of only ``-inf`` gives ``-inf``; a ``+inf`` entry gives ``+inf``; NaN propagates. Matches
    ``scipy.special.logsumexp`` to a few ulps (tested).
    """
    x = np.asarray(a, dtype=float)
    if x.size == 0:
        return -math.inf if axis is None else np.full(np.delete(x.shape, axis), -math.inf)
    top = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    # +inf entries: exp(inf - 0) = inf, so out is inf already; all -inf: log(0) + 0 = -inf.
    out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return float(out) if axis is None else out


@lru_cache(maxsize=8)
def _table(n_max: int) -> NDArray[np.float64]:
    table = np.array([math.lgamma(i + 1.0) for i in range(n_max + 1)], dtype=float)
    table.setflags(write=False)
    return table


def log_factorials(n_max: int) -> NDArray[np.float64]:
    """``log(i!)`` for ``i = 0 .. n_max`` (``math.lgamma``, correctly rounded to about an ulp; read-only)."""
    if n_max < 0:
        raise ValueError(f"n_max must be >= 0; got {n_max}")
    size = 1 << max(6, n_max.bit_length())  # cache a few power-of-two sizes
    if size > _MAX_TABLE:
        return np.array([math.lgamma(i + 1.0) for i in range(n_max + 1)], dtype=float)
    return _table(size - 1)[: n_max + 1]


def log_comb(n: ArrayLike, k: ArrayLike) -> Any:
    """``log C(n, k)`` for integer-valued ``0 <= k <= n`` (arrays broadcast; floats holding integers accepted).

    The same formula as ``gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)``, read from a log-factorial table.
    """
    n_arr = np.asarray(n)
    k_arr = np.asarray(k)
    ni = n_arr.astype(np.int64)
    ki = k_arr.astype(np.int64)
    if np.any(ni != n_arr) or np.any(ki != k_arr) or np.any(ki < 0) or np.any(ki > ni):
        raise ValueError("log_comb needs integers 0 <= k <= n")
    top = int(np.max(ni)) if ni.size else 0
    lf = log_factorials(top)
    out = lf[ni] - lf[ki] - lf[ni - ki]
    return float(out) if out.ndim == 0 else out
