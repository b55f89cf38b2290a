"""Log-domain sums and binomial coefficients in plain numpy (no scipy import on the interactive paths).

Every log-space helper of the core lives here, once (issue 11): :func:`logsumexp` (any axis, infinities handled,
weights; its ``split_max`` form is scipy's algorithm, so the core calls no ``scipy.special.logsumexp``),
:func:`logsumexp_finite_rows` (its lean form for finite rows) and :func:`logsumexp_finite_columns` (the same
floats, transposed), :func:`logsumexp_groups` (sums over groups of terms), :func:`log_add_exp` /
:func:`log_sub_exp` / :func:`log_expm1` (two scalar terms), :func:`log_comb` (a log-factorial table, integer
``n``), :func:`log_falling_factorials` and :func:`log_comb_large_n` (the falling factorial, ``n`` up to ~1e9). Each
keeps the arithmetic of the copy it replaced, so results are unchanged bit for bit. ``np.logaddexp`` (the
``log1p`` form) is used directly where the code used it; :func:`log_add_exp` is the ``log(1 + e^-d)`` form the
closed-form calibration was built on. The binomial log pmf, which needs ``gammaln``, is
:func:`sufficientdp._numerics.binomial.log_binom_pmf_all`.

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

__all__ = [
    "log_add_exp", "log_comb", "log_comb_large_n", "log_expm1", "log_factorials", "log_falling_factorials",
    "log_sub_exp", "logsumexp", "logsumexp_finite_columns", "logsumexp_finite_rows", "logsumexp_groups",
]

_MAX_TABLE = 10_000_001  # log-factorial tables beyond this are computed per call (not cached)


def logsumexp(a: ArrayLike, axis: int | None = None, *, b: ArrayLike | None = None, split_max: bool = False) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis`` (all elements when None), stable for large and ``-inf`` entries.

    Two arithmetic forms of the one sum, each kept where the code was built (and its golden values pinned) with it:

    - ``split_max=False`` (the default): the shifted sum ``m + log(sum(exp(a - m)))``, ``m`` the largest term.
    - ``split_max=True``: the largest term(s) come out of the sum, which goes through ``log1p``:
      ``m + log(c) + log1p(s / c)``, ``c`` the weight at the maxima and ``s`` the shifted sum of the rest. More
      accurate when one term dominates (a tail sum). This is the algorithm of ``scipy.special.logsumexp`` since
      scipy 1.15, reproduced here so that the core has one log-space helper (issue 11) and no per-version drift:
      on scipy >= 1.15 the two agree bit for bit (tested).

    ``b``: non-negative weights, broadcast against ``a`` (only with ``split_max=True``; a zero weight removes its
    term even where ``a`` is infinite). A slice of only ``-inf`` gives ``-inf``; a ``+inf`` entry gives ``+inf``; NaN
    propagates. Both forms match an mpmath sum to a few ulps (tested).
    """
    if split_max:
        return _logsumexp_split(a, axis, b)
    if b is not None:
        raise ValueError("logsumexp: weights b need split_max=True")
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


def _logsumexp_split(a: ArrayLike, axis: int | None, b: ArrayLike | None) -> Any:
    """The ``split_max=True`` form of :func:`logsumexp` (the same operations, in the same order, as scipy's)."""
    x = np.atleast_1d(np.asarray(a, dtype=float))
    w = None
    if b is not None:
        w = np.atleast_1d(np.asarray(b, dtype=float))
        x, w = np.broadcast_arrays(x, w)
        if np.any(w < 0):
            raise ValueError("logsumexp: weights b must be >= 0")
    axes = tuple(range(x.ndim)) if axis is None else axis
    if x.size == 0:
        out = np.full(np.delete(x.shape, axes), -math.inf)
        return float(out) if out.ndim == 0 else out
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # Infinite results come from the plain sum (its log handles inf and 0 as C99 says).
        out_inf = np.log(np.sum(np.exp(x) if w is None else w * np.exp(x), axis=axes, keepdims=True))
        if w is not None:
            x = np.where(w == 0, -math.inf, x)
        top = np.max(x, axis=axes, keepdims=True)
        at_top = x == top
        rest = np.where(at_top, -math.inf, x)
        c = np.sum(at_top.astype(float) if w is None else w * at_top, axis=axes, keepdims=True, dtype=float)
        e = np.exp(rest - top) if w is None else w * np.exp(rest - top)
        s = np.sum(e, axis=axes, keepdims=True, dtype=float)
        s = np.where(s == 0, s, s / c)
        out = np.log1p(s) + np.log(c) + top
    out = np.where(np.isfinite(out), out, out_inf)
    out = np.squeeze(out, axis=axes)
    return float(out) if out.ndim == 0 else out


_EXP_ZERO = -746.0
"""``exp(x)`` is exactly 0 in double precision for every ``x`` below this: the true value is under half the smallest
subnormal (``x < log(2**-1075) = -745.13...``), so it rounds to 0 (numpy's SIMD kernels and every libm return 0
there; tested)."""


def logsumexp_finite_rows(a: NDArray[np.float64], *, overwrite: bool = False) -> NDArray[np.float64]:
    """``log(sum(exp(a), axis=1))`` for a 2-d array of **finite** values: :func:`logsumexp` ``(a, axis=1)`` (the same
    floats) without its infinity handling, which costs a third of the time on the many small calls of the lattice
    bracket. ``overwrite=True`` works in ``a`` (which is then garbage) instead of a new array.

    On arrays of more than :data:`_EXP_CUT_SIZE` terms, the shifted terms below :data:`_EXP_ZERO` are set to 0
    without calling ``exp``, which would return exactly 0 for them, ~20 times slower per element than for other
    values (its underflow path): the same terms in the same order go into the same row sums, so the result is the
    same, bit for bit (tested). The reductions are the ufuncs' own (what ``np.max`` / ``np.sum`` call)."""
    top = _MAX_REDUCE(a, axis=1)  # (np.max and np.sum call these ufunc reductions: the same floats)
    if overwrite:
        shifted = a
        shifted -= top[:, None]
    else:
        shifted = a - top[:, None]
    return _log_row_sums(top, shifted)


def logsumexp_finite_columns(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`logsumexp_finite_rows` of ``a.T`` (the same floats), for a C-ordered array whose columns are the sums
    (terms x sums): the maxima are taken down the columns, where the ufunc's reduction runs along contiguous rows
    (a few times faster than across short rows), and the shifted terms are written transposed, so that each sum
    is the contiguous row reduction the rows form does (numpy's pairwise order: the order decides the floats)."""
    top = _MAX_REDUCE(a, axis=0)  # the maximum is exact in any order
    shifted = np.subtract(a.T, top[:, None], out=np.empty((a.shape[1], a.shape[0])))
    return _log_row_sums(top, shifted)


def _log_row_sums(top: NDArray[np.float64], shifted: NDArray[np.float64]) -> NDArray[np.float64]:
    """``top + log(sum(exp(shifted), axis=1))``, working in ``shifted`` (C-ordered; overwritten)."""
    if shifted.size <= _EXP_CUT_SIZE:  # (the cut costs more calls than it saves on a small array)
        np.exp(shifted, out=shifted)
    else:
        zero = shifted < _EXP_ZERO
        np.copyto(shifted, 0.0, where=zero)  # (any value with a fast exp; replaced by 0 below)
        np.exp(shifted, out=shifted)
        np.copyto(shifted, 0.0, where=zero)
    return np.asarray(top + np.log(_ADD_REDUCE(shifted, axis=1)), dtype=float)


_MAX_REDUCE = np.maximum.reduce
_ADD_REDUCE = np.add.reduce
_EXP_CUT_SIZE = 4096


def logsumexp_groups(a: NDArray[np.float64], onehot: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log`` of the sums of ``exp(a)`` over groups of the last axis (``onehot``: terms x groups, 0/1 entries);
    a group of only ``-inf`` terms gives ``-inf``."""
    mx = np.max(a, axis=-1)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        out: NDArray[np.float64] = np.log(np.exp(a - safe[..., None]) @ onehot) + safe[..., None]
        return out


def log_add_exp(a: float, b: float) -> float:
    """``log(e**a + e**b)`` for floats, as ``m + log(e**(a-m) + e**(b-m))`` with ``m = max(a, b)``; exact for a
    ``-inf`` term. (``np.logaddexp`` computes ``m + log1p(e**-|a-b|)``, which can differ in the last bit.)"""
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))


def log_sub_exp(la: float, lb: float) -> float:
    """``log(e**la - e**lb)`` for ``la >= lb`` (``-inf`` when equal, or when ``lb > la``)."""
    if la == -math.inf or lb >= la:
        return -math.inf
    return la + math.log(-math.expm1(lb - la))


def log_expm1(x: float) -> float:
    """``log(e**x - 1)``, stable for tiny and huge ``x``; ``-inf`` for ``x <= 0`` (where it is ``<= log 0``)."""
    if x <= 0.0:
        return -math.inf
    if x > 30.0:
        return x + math.log1p(-math.exp(-x))
    return math.log(math.expm1(x))


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


def log_falling_factorials(s: ArrayLike, m: int) -> NDArray[np.float64]:
    """``out[..., k] = log (s)_k = sum_{t<k} log(s - t)`` for ``k = 0..m`` (``-inf`` when ``s < k``), shape
    ``s.shape + (m + 1,)``: accurate for large ``s``, where ``lgamma(s + 1) - lgamma(s - k + 1)`` cancels."""
    t = np.arange(m, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.log(np.maximum(np.asarray(s, dtype=np.float64)[..., None] - t, 0.0))
    out = np.zeros(np.shape(s) + (m + 1,))
    out[..., 1:] = np.cumsum(steps, axis=-1)
    return out


def log_comb_large_n(n: float, k: int) -> float:
    """``log C(n, k)`` for a small integer ``k >= 0`` and real ``n >= k``, by the falling factorial
    ``sum_{r<k} log(n - r) - log k!``: accurate for ``n`` up to ~1e9, where :func:`log_comb`'s table would not fit."""
    return float(sum(math.log(n - r) for r in range(k)) - math.lgamma(k + 1))
