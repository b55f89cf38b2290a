"""Joint frequencies of whole bit vectors from the anonymized report histogram (seed 001 §1.3, §4, §6).

Model. N people hold L-bit vectors; each sends k independent reports made by flipping every bit independently
with probability q (p = 1 - q). The server sees only the histogram ``h`` of the kN reports over the 2**L vectors.
Index convention: bit j of a vector is bit j of its integer index (least significant first), so index 1 is the
vector with only bit 0 set -- seed 001 §1.3 enumerates ``v_1 = 00..0, v_2 = 10..0, v_3 = 01..0, ...`` in the same
order. With ``f`` the histogram of the people's true vectors and ``C = [[p, q], [q, p]]``,

    E[h] = k A f,   A = C ⊗ C ⊗ ... ⊗ C  (L factors),   A[s, x] = P[report s | vector x] = q**d p**(L-d),

where d = d(s, x) is the Hamming distance (seed 001 §1.3). ``A`` is never built: an L-fold Kronecker product of
2x2 matrices is applied one bit at a time on a (2**(L-j-1), 2, 2**j) view of the array, O(L 2**L) work.

Estimators. ``method="inverse"`` is the unbiased moment estimator ``f_hat = A**-1 h / k`` -- seed 001 §4's per-bit
estimator ``d_hat = (M/k - qN)/(p - q)`` generalised from one bit to the joint distribution of all L bits, with
``A**-1 = (C**-1)⊗...⊗(C**-1)`` and ``C**-1 = [[p, -q], [-q, p]] / (p - q)``. ``method="em"`` is the non-negative
maximum-likelihood estimate found by expectation-maximization.

Variance of the inverse estimator (derivation). Write ``B = A**-1``. The kN reports are independent; report r
comes from a person with vector x_r and is a one-hot vector with mean ``a_r = A e_{x_r}``, so
``Cov h = sum_r (diag a_r - a_r a_r^T)``. Then ``Var (B h)_v = sum_r [sum_s B[v,s]**2 a_r[s] - (B a_r)_v**2]``
and ``B a_r = e_{x_r}``; summing over the k reports of each of the f_v people with vector v, and with
``f_hat = B h / k``,

    Var f_hat_v = ( ((B∘B) E[h])_v - k f_v ) / k**2,   B∘B = (C**-1 ∘ C**-1)^{⊗L},
    C**-1 ∘ C**-1 = [[p**2, q**2], [q**2, p**2]] / (p - q)**2

(∘ is the elementwise product; the Hadamard product of Kronecker products is the Kronecker product of the
Hadamard products). Equivalently ``Var f_hat_v = (sum_u f_u α**(L-d(u,v)) β**d(u,v) - f_v) / k`` with
``β = pq/(p-q)**2`` and ``α = 1 + β``; for L = 1 this is ``N p q / (k (p - q)**2)``, seed 001 §4 and §6. The
reported standard error plugs h in for E[h] and f_hat in for f -- an *unbiased* estimate of the variance, since
both substitutions are unbiased -- floored at 0 before the square root. Covariances between cells are not zero
but are not reported.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import norm

from .._errors import DataError, ParameterError
from .._validation import check_int, check_open_interval, check_positive_finite

__all__ = ["MAX_BITS", "JointEstimate", "apply_channel", "apply_inverse_channel", "joint_frequencies"]

#: Largest supported vector length L (the histogram has 2**L cells).
MAX_BITS = 20

_METHODS = ("inverse", "em")


# ----------------------------------------------------------------------------------------------------------------
# Kronecker-product channel
# ----------------------------------------------------------------------------------------------------------------


def _apply_per_bit(x: np.ndarray, matrices: Sequence[np.ndarray]) -> np.ndarray:
    """Apply ``matrices[L-1] ⊗ ... ⊗ matrices[0]`` to ``x`` (length 2**L), i.e. matrix j acts on bit j.

    Bit j is bit j of the index (least significant first), so this equals ``np.kron(M[L-1], ..., M[0]) @ x``:
    ``np.kron`` makes its *first* factor the most significant index digit. On a C-order reshape of ``x`` to
    ``(2,) * L`` bit 0 is the *last* axis. Each step views the array as ``(2**(L-j-1), 2, 2**j)`` and mixes the
    middle axis, so the cost is O(L 2**L) and no dense matrix is formed.
    """
    bits = len(matrices)
    y = np.array(x, dtype=np.float64, copy=True)
    scratch = np.empty(y.size // 2)
    for j, m in enumerate(matrices):
        v = y.reshape(1 << (bits - j - 1), 2, 1 << j)
        x0 = v[:, 0, :]
        x1 = v[:, 1, :]
        new0 = scratch.reshape(x0.shape)
        np.multiply(x0, m[0, 0], out=new0)
        new0 += m[0, 1] * x1
        x1 *= m[1, 1]
        x1 += m[1, 0] * x0
        x0[...] = new0
    return y


def _channel_matrix(q: float) -> np.ndarray:
    p = 1.0 - q
    return np.array([[p, q], [q, p]])


def _inverse_matrix(q: float) -> np.ndarray:
    p = 1.0 - q
    return np.array([[p, -q], [-q, p]]) / (p - q)


def _inverse_squared_matrix(q: float) -> np.ndarray:
    """``C**-1 ∘ C**-1`` (elementwise square of the 2x2 inverse)."""
    p = 1.0 - q
    return np.array([[p * p, q * q], [q * q, p * p]]) / ((p - q) ** 2)


def _check_vector(name: str, values: ArrayLike, bits: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
        raise DataError(f"{name} must be a real numeric array; got dtype {arr.dtype}")
    if arr.shape != (1 << bits,):
        raise DataError(f"{name} must be a 1-D array of length 2**bits = {1 << bits}; got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{name} must be finite")
    return arr


def apply_channel(f: ArrayLike, q: float, bits: int) -> np.ndarray:
    """Forward channel ``A f`` with ``A = C^{⊗L}``, ``C = [[p, q], [q, p]]`` (seed 001 §1.3).

    ``(A f)[s] = sum_x q**d(s,x) p**(L-d(s,x)) f[x]`` with d the Hamming distance of the indices; for a histogram
    ``f`` of people, ``k * apply_channel(f, q, L)`` is the expected report histogram.

    Args:
        f: real vector of length ``2**bits`` (index bit j = vector bit j).
        q: flip probability in (0, 0.5).
        bits: L, in [1, MAX_BITS].

    Returns:
        ``A f`` as a float64 array of length ``2**bits``.

    Raises:
        ParameterError: q or bits out of range.
        DataError: f has the wrong shape or non-finite values.

    References:
        seed 001 §1.3 (``P[A_0(x) = s] = q**(L-m) p**m``).

    Example:
        >>> apply_channel([0.0, 1.0], q=0.25, bits=1).tolist()
        [0.25, 0.75]
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)
    x = _check_vector("f", f, bits)
    return _apply_per_bit(x, [_channel_matrix(q)] * bits)


def apply_inverse_channel(h: ArrayLike, q: float, bits: int) -> np.ndarray:
    """Inverse channel ``A**-1 h`` with ``A**-1 = (C**-1)^{⊗L}``, ``C**-1 = [[p, -q], [-q, p]] / (p - q)``.

    ``apply_inverse_channel(h, q, L) / k`` is the unbiased estimator of the people histogram (seed 001 §4,
    generalised to whole vectors). The error amplification is at most ``(1/(p - q))**L``.

    Args:
        h: real vector of length ``2**bits``.
        q: flip probability in (0, 0.5).
        bits: L, in [1, MAX_BITS].

    Returns:
        ``A**-1 h`` as a float64 array of length ``2**bits``.

    Raises:
        ParameterError: q or bits out of range.
        DataError: h has the wrong shape or non-finite values.

    References:
        seed 001 §4 (``d_hat = (M - qN)/(p - q)``, here applied bit by bit), §1.3.

    Example:
        >>> apply_inverse_channel([0.25, 0.75], q=0.25, bits=1).tolist()
        [0.0, 1.0]
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    bits = check_int("bits", bits, minimum=1, maximum=MAX_BITS)
    x = _check_vector("h", h, bits)
    return _apply_per_bit(x, [_inverse_matrix(q)] * bits)


# ----------------------------------------------------------------------------------------------------------------
# Result object
# ----------------------------------------------------------------------------------------------------------------


def _labels(bits: int) -> np.ndarray:
    """Vector labels as 0/1 strings with bit 0 first (``"100"`` is index 1 for L = 3)."""
    idx = np.arange(1 << bits, dtype=np.int64)
    digits = ((idx[:, None] >> np.arange(bits)) & 1).astype(bool)
    chars = np.ascontiguousarray(np.where(digits, "1", "0").astype("<U1"))
    return chars.view(f"<U{bits}").ravel()


def _json_floats(a: np.ndarray) -> list[float | None]:
    return [None if math.isnan(x) else x for x in a.tolist()]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class JointEstimate:
    """Estimated number of people holding each of the 2**L bit vectors.

    Arrays are float64 of length 2**L, indexed so that bit j of the index is bit j of the vector, and read-only.
    (``eq=False``: comparing arrays with ``==`` is not a truth value, so equality is identity.)

    Attributes:
        estimate: the estimated counts. ``"inverse"``: unbiased, may be negative or exceed N.
            ``"em"``: non-negative, sums to N.
        lower, upper: normal confidence interval at ``level`` clipped to [0, N] (``"inverse"``); NaN for ``"em"``.
        std_error: plug-in standard error (``"inverse"``); NaN for ``"em"``.
        method: ``"inverse"`` or ``"em"``.
        bits: L.
        population: N = number of reports / k.
        reports: k, reports per person.
        q: flip probability used.
        level: confidence level.
        iterations: EM iterations performed (``None`` for ``"inverse"``).
        converged: whether EM met its tolerance (``None`` for ``"inverse"``).
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    std_error: np.ndarray
    method: str
    bits: int
    population: int
    reports: int
    q: float
    level: float
    iterations: int | None = None
    converged: bool | None = None

    def __post_init__(self) -> None:
        for name in ("estimate", "lower", "upper", "std_error"):
            arr = np.array(getattr(self, name), dtype=np.float64, copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def label(self, index: int) -> str:
        """The vector with integer ``index`` as a 0/1 string, bit 0 first (``label(1) == "10"`` for L = 2)."""
        index = check_int("index", index, minimum=0, maximum=(1 << self.bits) - 1)
        return "".join(str((index >> j) & 1) for j in range(self.bits))

    def top(self, n: int = 10) -> list[tuple[int, float]]:
        """The ``n`` vectors with the largest estimates, as ``(index, estimate)`` pairs, largest first.

        Ties are broken by the smaller index. Use :meth:`label` to turn an index into its bit string.
        """
        n = check_int("n", n, minimum=1)
        order = np.lexsort((np.arange(self.estimate.size), -self.estimate))[:n]
        return [(int(i), float(self.estimate[i])) for i in order]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of plain Python values; NaN (EM intervals) becomes ``None``."""
        return {
            "method": self.method,
            "bits": self.bits,
            "population": self.population,
            "reports": self.reports,
            "q": self.q,
            "level": self.level,
            "iterations": self.iterations,
            "converged": self.converged,
            "estimate": _json_floats(self.estimate),
            "lower": _json_floats(self.lower),
            "upper": _json_floats(self.upper),
            "std_error": _json_floats(self.std_error),
        }

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` indexed by ``vector`` (0/1 string, bit 0 first).

        Columns: ``estimate``, ``lower``, ``upper``, ``std_error``.

        Raises:
            ImportError: pandas is not installed (``pip install 'sufficientdp[pandas]'``).
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_pandas() needs pandas: pip install 'sufficientdp[pandas]'") from exc
        index = pd.Index(_labels(self.bits).tolist(), name="vector")
        return pd.DataFrame(
            {
                "estimate": self.estimate,
                "lower": self.lower,
                "upper": self.upper,
                "std_error": self.std_error,
            },
            index=index,
        )


# ----------------------------------------------------------------------------------------------------------------
# Estimation
# ----------------------------------------------------------------------------------------------------------------


def _check_histogram(histogram: ArrayLike) -> tuple[np.ndarray, int, int]:
    """Return (counts as float64, L, total) or raise DataError."""
    arr = np.asarray(histogram)
    if arr.dtype.kind not in "iuf":
        raise DataError(f"histogram must hold non-negative integer counts; got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise DataError(f"histogram must be 1-D of length 2**L; got shape {arr.shape}")
    n = arr.shape[0]
    if n < 2 or n & (n - 1):
        raise DataError(f"histogram length must be 2**L with 1 <= L <= {MAX_BITS}; got length {n}")
    bits = n.bit_length() - 1
    if bits > MAX_BITS:
        raise DataError(f"histogram length must be 2**L with 1 <= L <= {MAX_BITS}; got length {n} (L = {bits})")
    if arr.dtype.kind == "f" and (not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr))):
        raise DataError("histogram must hold non-negative integer counts; got non-integral or non-finite "
                        "values")
    if np.any(arr < 0):
        raise DataError(f"histogram must hold non-negative integer counts; got minimum {arr.min()}")
    total = int(arr.sum(dtype=np.float64)) if arr.dtype.kind == "f" else int(arr.sum(dtype=np.int64))
    if total == 0:
        raise DataError("histogram must contain at least one report; got total 0")
    return arr.astype(np.float64), bits, total


def _em(
    h: np.ndarray, q: float, bits: int, reports: int, population: int, max_iter: int, tol: float
) -> tuple[np.ndarray, int, bool]:
    forward = [_channel_matrix(q)] * bits
    f = np.full(h.shape, population / h.size)
    converged = False
    it = 0
    while it < max_iter:
        it += 1
        m = _apply_per_bit(f, forward)  # = A f, strictly positive since A > 0 and f >= 0, sum f = N > 0
        ratio = np.divide(h, m, out=np.zeros_like(h), where=h > 0)
        f_new = f * _apply_per_bit(ratio, forward) / reports  # A is symmetric: A^T = A
        f_new *= population / f_new.sum()  # exact in exact arithmetic; removes rounding drift
        change = float(np.max(np.abs(f_new - f) / np.maximum(f, 1.0)))
        f = f_new
        if change < tol:
            converged = True
            break
    return f, it, converged


def joint_frequencies(
    histogram: ArrayLike,
    *,
    q: float,
    reports: int = 1,
    method: str = "inverse",
    level: float = 0.95,
    max_iter: int = 10_000,
    tol: float = 1e-6,
) -> JointEstimate:
    r"""Estimate how many people hold each L-bit vector from the histogram of their randomized reports.

    ``method="inverse"`` (default): the unbiased estimator

        f_hat = (C**-1)^{⊗L} h / k,   C**-1 = [[p, -q], [-q, p]] / (p - q),

    seed 001 §4's ``d_hat = (M/k - qN)/(p - q)`` generalised from one bit to whole vectors. Its exact variance is
    ``Var f_hat_v = (((C**-1∘C**-1)^{⊗L} E[h])_v - k f_v) / k**2`` (derivation in the module docstring); the
    standard error plugs in h and f_hat (an unbiased variance estimate), floored at 0. The interval is
    ``f_hat ± z_{(1+level)/2} * std_error`` clipped to [0, N]; the estimate itself is not clipped. Clipping never
    uncovers the truth (it lies in [0, N]); for a vector nobody holds it removes one tail, so coverage there is
    about ``1 - (1 - level)/2`` rather than ``level``. The intervals are marginal, one cell at a time, not
    simultaneous over the 2**L cells.

    ``method="em"``: the non-negative maximum-likelihood estimate under the multinomial model in which each report
    is drawn from ``A f / N`` (``A = C^{⊗L}``), by expectation-maximization from the uniform start:

        f <- f ∘ A^T (h / (A f)) / k.

    Every iterate is non-negative and sums to N, and the log-likelihood ``sum_s h_s log (A f)_s`` never decreases.
    Iteration stops when ``max_v |f_new_v - f_v| / max(f_v, 1) < tol`` (relative change; cells below one person
    are compared absolutely, since cells converging to 0 keep a constant *relative* change) or after
    ``max_iter`` iterations. When the inverse estimate is positive in every cell it *is* the maximum-likelihood
    estimate, and EM converges to it. No standard errors are given for EM (the estimate is biased near 0 and
    the normal approximation fails at the boundary): ``std_error``, ``lower`` and ``upper`` are NaN.

    Both methods cost O(L 2**L) per pass (the 2**L x 2**L matrix is never formed); an EM iteration is two passes
    (about 0.2 s at L = 20 on one core, microseconds at L <= 8). EM is fast when the maximum is interior but
    converges slowly (sublinearly) when it has cells at or near 0 -- thousands of iterations are common for small,
    noisy samples -- so check ``converged`` and raise ``max_iter`` if needed.

    Args:
        histogram: counts of the kN reports per vector, length 2**L with 1 <= L <= 20; index bit j = vector bit j
            (index 1 is the vector with only bit 0 set).
        q: flip probability that was used, in (0, 0.5).
        reports: k >= 1, reports per person; the total count must be a multiple of k.
        method: ``"inverse"`` or ``"em"``.
        level: confidence level in (0, 1) (``"inverse"`` only).
        max_iter: maximum EM iterations, >= 1 (``"em"`` only).
        tol: EM stopping tolerance, > 0 (``"em"`` only).

    Returns:
        A :class:`JointEstimate`.

    Raises:
        ParameterError: q, reports, method, level, max_iter or tol out of range.
        DataError: histogram not 1-D of length 2**L (1 <= L <= 20), not non-negative integers, empty, or its total
            not divisible by ``reports``.

    References:
        seed 001 (papers/001_3d8ddaba8b46cf9c.txt) §1.3 (the channel ``q**(L-m) p**m`` and the vector
        enumeration), §4 (unbiased estimator and its standard deviation ``sqrt(N p q)/(p - q)``), §6 (k reports:
        the variance divides by k).

    Example:
        Ten people, L = 2, q = 1/4, one report each (index 1 = "10" = only bit 0 set):

        >>> import numpy as np
        >>> est = joint_frequencies(np.array([3, 4, 1, 2]), q=0.25)
        >>> est.estimate.tolist()
        [3.5, 5.5, -0.5, 1.5]
        >>> est.top(2), est.label(1)
        ([(1, 5.5), (0, 3.5)], '10')
        >>> em = joint_frequencies(np.array([3, 4, 1, 2]), q=0.25, method="em", tol=1e-10, max_iter=10_000)
        >>> bool(em.converged), round(float(em.estimate.sum()), 9), bool(em.estimate.min() >= 0)
        (True, 10.0, True)
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    reports = check_int("reports", reports, minimum=1)
    if not isinstance(method, str) or method not in _METHODS:
        raise ParameterError(f"method must be one of {', '.join(map(repr, _METHODS))}; got {method!r}")
    level = check_open_interval("level", level, 0.0, 1.0)
    max_iter = check_int("max_iter", max_iter, minimum=1)
    tol = check_positive_finite("tol", tol)
    h, bits, total = _check_histogram(histogram)
    if total % reports:
        raise DataError(
            f"histogram total {total} is not a multiple of reports={reports} (each person sends k reports)"
        )
    population = total // reports
    n = float(population)

    if method == "inverse":
        est = _apply_per_bit(h, [_inverse_matrix(q)] * bits) / reports
        second = _apply_per_bit(h, [_inverse_squared_matrix(q)] * bits)
        var = (second - reports * est) / (reports * reports)
        se = np.sqrt(np.maximum(var, 0.0))
        z = float(norm.ppf(0.5 + level / 2.0))
        lower = np.clip(est - z * se, 0.0, n)
        upper = np.clip(est + z * se, 0.0, n)
        return JointEstimate(
            estimate=est, lower=lower, upper=upper, std_error=se, method=method, bits=bits,
            population=population, reports=reports, q=q, level=level,
        )

    f, iterations, converged = _em(h, q, bits, reports, population, max_iter, tol)
    nan = np.full(h.shape, np.nan)
    return JointEstimate(
        estimate=f, lower=nan, upper=nan, std_error=nan, method=method, bits=bits,
        population=population, reports=reports, q=q, level=level, iterations=iterations, converged=converged,
    )
