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
maximum-likelihood estimate (the fixed point of expectation-maximization, hence the name), computed by L-BFGS in
a square-root parametrization or, as a reference, by plain EM; intervals by parametric bootstrap. Details, the
solvers that were tried, and coverage simulations: docs/joint_estimation.md.

Certified distance from the maximum: ``l(pi*) - l(pi) <= n log(max_v g_v / n)`` for every ``pi*`` on the simplex,
with ``g = A^T (h / A pi)`` and ``n = sum h`` (Jensen's inequality), 0 exactly at a maximum (``gap_bound``).

Variance of the inverse estimator: ``Var f_hat_v = (((C**-1∘C**-1)^{⊗L} E[h])_v - k f_v) / k**2`` exactly, which is
``N p q / (k (p - q)**2)`` for L = 1 (seed 001 §4, §6); the standard error plugs in h and f_hat (an unbiased
variance estimate), floored at 0. Derivations: ``docs/proofs/joint_estimation.md``; seed 001 is
``papers/001_3d8ddaba8b46cf9c.txt``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._errors import DataError, ParameterError
from .._numerics.stats import normal_quantile
from .._validation import (
    check_confidence_level,
    check_int,
    check_open_interval,
    check_positive_finite,
    renamed_fields,
)
from ..loss.result import Interval
from .bits import _interval

__all__ = ["MAX_BITS", "MAX_BOOTSTRAP", "JointEstimate", "apply_channel", "apply_inverse_channel", "joint_frequencies"]

#: Largest supported vector length L (the histogram has 2**L cells).
MAX_BITS = 20

#: Largest number of bootstrap replicates.
MAX_BOOTSTRAP = 10_000

_METHODS = ("inverse", "em")
_SOLVERS = ("lbfgs", "em")
_MAX_BOOTSTRAP_CELLS = 1 << 26  # replicates x 2**L kept as float32: 256 MiB
_WINDOW = 10  # iterations over which the log-likelihood gain is compared with tol
_MEMORY = 10  # L-BFGS correction pairs
_ARMIJO = 1e-4  # sufficient-decrease constant
_MAX_HALVINGS = 60
_EM_WARM_UP = 5  # EM steps from the uniform distribution before L-BFGS


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

    Examples:
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

    Examples:
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


@renamed_fields({"level": "confidence_level"})
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class JointEstimate:
    """Estimated number of people holding each of the 2**L bit vectors.

    Arrays are float64 of length 2**L, indexed so that bit j of the index is bit j of the vector, and read-only.
    (``eq=False``: comparing arrays with ``==`` is not a truth value, so equality is identity.)

    Attributes:
        estimate: the estimated counts. ``"inverse"``: unbiased, may be negative or exceed N.
            ``"em"``: the maximum-likelihood estimate, non-negative, sums to N.
        lower, upper: confidence interval at ``level`` per cell, clipped to [0, N]: normal (``"inverse"``) or
            parametric bootstrap (``"em"`` with ``bootstrap > 0``); NaN for ``"em"`` without bootstrap. An
            ``"inverse"`` estimate outside [0, N] widens its cell's interval to hold it (a negative estimate -3 has
            ``lower = -3``, never a clipped [0, 0] that hides it).
        std_error: plug-in standard error (``"inverse"``), the bootstrap standard deviation (``"em"`` with
            bootstrap), else NaN.
        method: ``"inverse"`` or ``"em"``.
        bits: L.
        population: N = number of reports / k.
        reports: k, reports per person.
        q: flip probability used.
        confidence_level: of the intervals (as scipy names it; ``level``, its former name, still reads with a
            DeprecationWarning; ``to_dict`` keeps the key ``"level"``).
        interval: how ``lower``/``upper`` were made: ``"normal"``, ``"parametric-bootstrap"`` or ``"none"``.
        iterations: solver iterations of the fit (``None`` for ``"inverse"``; 0 when the closed form applies).
        converged: whether the fit met its stopping rule (``None`` for ``"inverse"``). ``False`` means it
            stopped at ``max_iter`` (or could not improve further in floating point) first.
        solver: ``"lbfgs"`` or ``"em"`` as requested, or ``"closed-form"`` when the inverse estimate is
            positive and therefore the MLE (``None`` for ``"inverse"``).
        tol: the stopping tolerance in nats (``None`` for ``"inverse"``).
        max_iter: the iteration limit of a fit (``None`` for ``"inverse"``).
        criterion: log-likelihood gained over the last 10 iterations when the fit stopped (nats).
        log_likelihood: ``sum_s h_s log (A f / N)_s`` at the estimate (nats; the multinomial coefficient is
            dropped).
        gap_bound: certified bound ``max log-likelihood - log_likelihood <= gap_bound`` (nats, up to rounding).
        bootstrap: number of bootstrap replicates (0: none).
        bootstrap_unconverged: replicates whose refit did not converge (``None`` without bootstrap).
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
    confidence_level: float
    interval: str = "normal"
    iterations: int | None = None
    converged: bool | None = None
    solver: str | None = None
    tol: float | None = None
    max_iter: int | None = None
    criterion: float | None = None
    log_likelihood: float | None = None
    gap_bound: float | None = None
    bootstrap: int = 0
    bootstrap_unconverged: int | None = None

    def __post_init__(self) -> None:
        for name in ("estimate", "lower", "upper", "std_error"):
            arr = np.array(getattr(self, name), dtype=np.float64, copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def status(self) -> str:
        """One line on how the estimate was obtained; starts with ``"NOT CONVERGED"`` when the fit did not converge.

        ``"inverse"`` gives ``"closed form"``.
        """
        if self.method == "inverse":
            return "closed form"
        window = min(_WINDOW, self.iterations or 0)
        gain = f"the log-likelihood rose by {self.criterion:.3g} nats over the last {window} iterations"
        bound = f"certified within {self.gap_bound:.3g} nats of the maximum"
        if self.solver == "closed-form":
            text = "closed form: the inverse estimate is positive, hence the MLE"
        elif self.converged:
            by_bound = self.gap_bound is not None and self.tol is not None and self.gap_bound <= self.tol
            rule = f"{bound} <= tol = {self.tol:g}" if by_bound else f"{gain} <= tol = {self.tol:g}"
            text = f"converged after {self.iterations} iterations ({self.solver}): {rule}"
        else:
            why = ("max_iter reached" if self.iterations == self.max_iter else
                   "no further progress is representable in floating point")
            text = (f"NOT CONVERGED after {self.iterations} iterations ({self.solver}; {why}): {gain} > tol = "
                    f"{self.tol:g}; this is not the MLE to that tolerance")
        text += f"; log-likelihood {self.log_likelihood:.10g} ({bound})"
        if self.bootstrap_unconverged:
            text += (f"; WARNING: {self.bootstrap_unconverged} of {self.bootstrap} bootstrap refits did not "
                     "converge")
        return text

    def cell_interval(self, index: int) -> Interval:
        """Cell ``index``'s estimate with its confidence interval, an :class:`~sufficientdp.loss.result.Interval`.

        ``Interval(lower[index], estimate[index], upper[index], confidence_level=confidence_level, kind="estimate")``; an
        unknown end (NaN: ``"em"`` without bootstrap) is None; the ends are :attr:`lower` and :attr:`upper`, which
        already hold an ``"inverse"`` estimate outside [0, N] (as :meth:`BitEstimates.interval`). (The field
        ``interval`` names how the intervals were made.)
        """
        index = check_int("index", index, minimum=0, maximum=(1 << self.bits) - 1)
        return _interval(float(self.lower[index]), float(self.estimate[index]), float(self.upper[index]),
                         self.confidence_level)

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
        """JSON-ready dict of plain Python values; NaN (EM without bootstrap) becomes ``None``."""
        return {
            "method": self.method,
            "bits": self.bits,
            "population": self.population,
            "reports": self.reports,
            "q": self.q,
            "level": self.confidence_level,
            "interval": self.interval,
            "status": self.status,
            "iterations": self.iterations,
            "converged": self.converged,
            "solver": self.solver,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "criterion": self.criterion,
            "log_likelihood": self.log_likelihood,
            "gap_bound": None if self.gap_bound is None or math.isinf(self.gap_bound) else self.gap_bound,
            "bootstrap": self.bootstrap,
            "bootstrap_unconverged": self.bootstrap_unconverged,
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


def _channel(x: np.ndarray, q: float, bits: int) -> np.ndarray:
    """``A x`` for ``A = C^{⊗L}``, which is symmetric, so this is also ``A^T x`` (the solvers' inner loop).

    ``C = p [[1, t], [t, 1]]`` with ``t = q/p``: per bit two scaled copies and two additions (four array passes
    instead of the seven of :func:`_apply_per_bit`), and one final scaling by ``p**L``. Entries grow by at most
    ``(1 + t)**L < 2**L`` before that scaling.
    """
    p = 1.0 - q
    t = q / p
    y = np.array(x, dtype=np.float64, copy=True)
    half = y.size // 2
    s0 = np.empty(half)
    s1 = np.empty(half)
    for j in range(bits):
        v = y.reshape(1 << (bits - j - 1), 2, 1 << j)
        x0 = v[:, 0, :]
        x1 = v[:, 1, :]
        a = s0.reshape(x0.shape)
        b = s1.reshape(x0.shape)
        np.multiply(x0, t, out=a)
        np.multiply(x1, t, out=b)
        x0 += b
        x1 += a
    y *= p**bits
    return y


def _ratio(h: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``h / m`` with 0 where ``h_s = 0``: those cells add nothing to ``A^T (h / A pi)``, and at a tiny q their
    ``(A pi)_s`` may underflow to 0 (0/0 made the fit NaN: q = 1e-100 at L = 10, q = 5e-324 at L = 3)."""
    out: np.ndarray = np.divide(h, m, out=np.zeros_like(m), where=h > 0)
    return out


def _log_likelihood(h: np.ndarray, m: np.ndarray) -> float:
    """``sum_s h_s log m_s`` over the cells with ``h_s > 0`` (the others add 0, even where ``m_s`` underflowed)."""
    return float(h @ np.log(m, out=np.zeros_like(m), where=h > 0))


@dataclass(frozen=True, slots=True)
class _Fit:
    """One maximum-likelihood fit: counts summing to N and how the iteration ended."""

    f: np.ndarray
    iterations: int
    converged: bool
    criterion: float
    log_likelihood: float
    gap_bound: float
    solver: str


def _gap_bound(n: float, g_max: float) -> float:
    """Certified ``l* - l(pi) <= n log(max_v g_v / n)`` (Jensen; module docstring), floored at 0 (rounding)."""
    return max(0.0, n * math.log(g_max / n)) if g_max > 0 else math.inf


def _window_gain(history: list[float]) -> float:
    """Log-likelihood gained over the last ``_WINDOW`` iterations (or since the start, if fewer)."""
    return history[-1] - history[max(0, len(history) - 1 - _WINDOW)]


def _interior_mle(h: np.ndarray, q: float, bits: int, population: int) -> _Fit | None:
    """The closed-form MLE ``N A**-1 h / n`` when it is strictly positive in every cell, else ``None``."""
    n = float(h.sum())
    pi = _apply_per_bit(h, [_inverse_matrix(q)] * bits) / n
    if not np.all(pi > 0):
        return None
    m = _channel(pi, q, bits)
    ll = _log_likelihood(h, m)
    g_max = float(_channel(_ratio(h, m), q, bits).max())
    return _Fit(pi * population, 0, True, 0.0, ll, _gap_bound(n, g_max), "closed-form")


def _fit_lbfgs(
    h: np.ndarray, q: float, bits: int, population: int, start: np.ndarray, max_iter: int, tol: float,
    progress: Callable[[int, int], None] | None,
) -> _Fit:
    """Maximize ``l(pi) = sum_s h_s log (A pi)_s`` over the simplex by L-BFGS in ``pi = theta**2 / |theta|**2``.

    The objective ``psi(theta) = -sum_s h_s log (A theta**2)_s + n log sum_v theta_v**2`` is ``-l`` at
    ``pi = theta**2 / sum theta**2`` (scale invariant), unconstrained and smooth; its gradient is
    ``2 theta (n / |theta|**2 - A^T (h / A theta**2))``. Cells at the boundary go to ``theta_v = 0`` quadratically
    instead of crawling there as under EM. Two-loop L-BFGS (memory ``_MEMORY``) with Armijo backtracking, so the
    log-likelihood never decreases; the memory is dropped whenever its direction is not a descent direction.
    """
    n = float(h.sum())
    theta = np.sqrt(start)

    def evaluate(th: np.ndarray) -> tuple[float, np.ndarray, float]:
        sq = th * th
        total = float(sq.sum())
        m = _channel(sq, q, bits)
        ll = _log_likelihood(h, m) - n * math.log(total)
        g = _channel(_ratio(h, m), q, bits)
        return ll, 2.0 * th * (n / total - g), total * float(g.max())

    ll, grad, g_max = evaluate(theta)
    history = [ll]
    gap = _gap_bound(n, g_max)
    memory: list[tuple[np.ndarray, np.ndarray, float]] = []
    it = 0
    converged = gap <= tol
    while not converged and it < max_iter:
        direction = -grad
        alphas = []
        for s, y, rho in reversed(memory):
            a = rho * float(s @ direction)
            direction -= a * y
            alphas.append(a)
        if memory:
            s, y, _ = memory[-1]
            direction *= float(s @ y) / float(y @ y)
        else:  # the EM step to first order: theta <- theta sqrt(g |theta|**2 / n)
            direction *= float(theta @ theta) / (4.0 * n)
        for (s, y, rho), a in zip(memory, reversed(alphas)):
            direction += (a - rho * float(y @ direction)) * s
        slope = float(grad @ direction)
        if not slope < 0:
            memory.clear()
            direction = -grad * (float(theta @ theta) / (4.0 * n))
            slope = float(grad @ direction)
        step = 1.0
        for _ in range(_MAX_HALVINGS):
            trial = theta + step * direction
            ll_new, grad_new, g_max_new = evaluate(trial)
            if -ll_new <= -ll + _ARMIJO * step * slope:
                break
            step *= 0.5
        else:  # no decrease is representable: the fit cannot improve in floating point
            it += 1
            history.append(ll)
            converged = _window_gain(history) <= tol
            if progress is not None:
                progress(it, max_iter)
            break
        s = trial - theta
        y = grad_new - grad
        sy = float(s @ y)
        if sy > 1e-10 * math.sqrt(float(s @ s) * float(y @ y)):
            memory.append((s, y, 1.0 / sy))
            if len(memory) > _MEMORY:
                memory.pop(0)
        theta, ll, grad, g_max = trial, ll_new, grad_new, g_max_new
        it += 1
        history.append(ll)
        gap = _gap_bound(n, g_max)
        converged = gap <= tol or _window_gain(history) <= tol
        if progress is not None:
            progress(it, max_iter)
    f = theta * theta
    f *= population / f.sum()
    return _Fit(f, it, converged, _window_gain(history), ll, _gap_bound(n, g_max), "lbfgs")


def _fit_em(
    h: np.ndarray, q: float, bits: int, population: int, start: np.ndarray, max_iter: int, tol: float,
    progress: Callable[[int, int], None] | None,
) -> _Fit:
    """Plain EM ``pi <- pi * A^T (h / A pi) / n`` with the same stopping rule as :func:`_fit_lbfgs` (baseline)."""
    n = float(h.sum())
    pi = start / start.sum()
    m = _channel(pi, q, bits)
    g = _channel(_ratio(h, m), q, bits)
    history = [_log_likelihood(h, m)]
    gap = _gap_bound(n, float(g.max()))
    it = 0
    converged = gap <= tol
    while not converged and it < max_iter:
        pi = pi * g
        pi /= pi.sum()
        m = _channel(pi, q, bits)
        g = _channel(_ratio(h, m), q, bits)
        it += 1
        history.append(_log_likelihood(h, m))
        gap = _gap_bound(n, float(g.max()))
        converged = gap <= tol or _window_gain(history) <= tol
        if progress is not None:
            progress(it, max_iter)
    return _Fit(pi * population, it, converged, _window_gain(history), history[-1], gap, "em")


def _em_start(h: np.ndarray, q: float, bits: int, steps: int) -> np.ndarray:
    """Uniform distribution followed by ``steps`` EM steps (strictly positive; a cheap, smooth start)."""
    pi = np.full(h.shape, 1.0 / h.size)
    for _ in range(steps):
        pi = pi * _channel(_ratio(h, _channel(pi, q, bits)), q, bits)
        pi /= pi.sum()
    return pi


def _fit(
    h: np.ndarray, q: float, bits: int, population: int, solver: str, start: np.ndarray | None, max_iter: int,
    tol: float, progress: Callable[[int, int], None] | None,
) -> _Fit:
    if solver == "em":
        return _fit_em(h, q, bits, population, np.full(h.shape, 1.0 / h.size) if start is None else start,
                       max_iter, tol, progress)
    interior = _interior_mle(h, q, bits, population)
    if interior is not None:
        return interior
    if start is None:
        start = _em_start(h, q, bits, _EM_WARM_UP)
    return _fit_lbfgs(h, q, bits, population, start, max_iter, tol, progress)


# ----------------------------------------------------------------------------------------------------------------
# Parametric bootstrap
# ----------------------------------------------------------------------------------------------------------------


def _round_to_total(f: np.ndarray, total: int) -> np.ndarray:
    """Non-negative integers summing to ``total`` nearest to ``f`` (largest remainder; ties to the smaller index)."""
    base: np.ndarray = np.floor(np.maximum(f, 0.0)).astype(np.int64)
    missing = total - int(base.sum())
    if missing > 0:
        order = np.lexsort((np.arange(f.size), -(f - base)))[:missing]
        base[order] += 1
    elif missing < 0:  # only from rounding of a sum that exceeds total by less than one per cell
        order = np.lexsort((np.arange(f.size), f - base))
        order = order[base[order] > 0][:-missing]
        base[order] -= 1
    return base


def _simulate_histogram(people: np.ndarray, q: float, bits: int, reports: int,
                        rng: np.random.Generator) -> np.ndarray:
    """Report histogram of ``people[v]`` people holding vector v, k reports each, every bit flipped w.p. q.

    Exact in distribution and O(L 2**L) whatever N: bit by bit, ``Binomial(count_i, q)`` of the reports now at
    index i flip bit j and move to ``i XOR 2**j`` (each report flips each bit independently).
    """
    h = people.astype(np.int64) * reports
    for j in range(bits):
        flips = rng.binomial(h, q)
        v = h.reshape(1 << (bits - j - 1), 2, 1 << j)
        fv = flips.reshape(v.shape)
        v -= fv
        v[:, 0, :] += fv[:, 1, :]
        v[:, 1, :] += fv[:, 0, :]
    return h


def _bootstrap(
    fit: _Fit, q: float, bits: int, reports: int, population: int, replicates: int, level: float,
    rng: np.random.Generator, solver: str, max_iter: int, tol: float,
    progress: Callable[[int, int], None] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Parametric bootstrap: (lower, upper, std_error, unconverged replicates).

    The people histogram is the fit rounded to integers summing to N; each replicate simulates the kN reports
    from it and refits from the same start as the fit (a warm start at the sparse ``f_hat`` is slower: cells the
    replicate needs must first grow back from near 0). With ``P_lo``, ``P_hi`` the ``(1 -+ level)/2``
    percentiles of the replicates of a cell, the interval is the union of the percentile interval
    ``[P_lo, P_hi]`` and the basic interval ``[2 f_hat - P_hi, 2 f_hat - P_lo]``, clipped to [0, N]; the standard
    error is the replicates' standard deviation.
    """
    size = fit.f.size
    people = _round_to_total(fit.f, population)
    samples = np.empty((replicates, size), dtype=np.float32)
    unconverged = 0
    if progress is not None:
        progress(0, replicates)
    for b in range(replicates):
        hb = _simulate_histogram(people, q, bits, reports, rng).astype(np.float64)
        rep = _fit(hb, q, bits, population, solver, None, max_iter, tol, None)
        samples[b] = rep.f
        unconverged += not rep.converged
        if progress is not None:
            progress(b + 1, replicates)
    p_lo, p_hi = (a.astype(np.float64) for a in
                  np.quantile(samples, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0))
    lower = np.clip(np.minimum(p_lo, 2.0 * fit.f - p_hi), 0.0, population)
    upper = np.clip(np.maximum(p_hi, 2.0 * fit.f - p_lo), 0.0, population)
    se = samples.std(axis=0, ddof=1, dtype=np.float64) if replicates > 1 else np.full(size, np.nan)
    return lower, upper, se, unconverged


def joint_frequencies(
    histogram: ArrayLike,
    *,
    q: float,
    reports: int = 1,
    method: str = "inverse",
    confidence_level: float | None = None,
    max_iter: int = 10_000,
    tol: float = 1e-3,
    solver: str = "lbfgs",
    bootstrap: int = 0,
    rng: np.random.Generator | None = None,
    progress: Callable[[int, int], None] | None = None,
    level: float | None = None,
) -> JointEstimate:
    r"""Estimate how many people hold each L-bit vector from the histogram of their randomized reports.

    ``method="inverse"`` (default): the unbiased estimator

        f_hat = (C**-1)^{⊗L} h / k,   C**-1 = [[p, -q], [-q, p]] / (p - q),

    seed 001 §4's ``d_hat = (M/k - qN)/(p - q)`` generalised from one bit to whole vectors. Its exact variance is
    ``Var f_hat_v = (((C**-1∘C**-1)^{⊗L} E[h])_v - k f_v) / k**2`` (``docs/proofs/joint_estimation.md``); the
    standard error plugs in h and f_hat (an unbiased variance estimate), floored at 0. The interval is
    ``f_hat ± z_{(1+level)/2} * std_error`` clipped to [0, N]; the estimate itself is not clipped. Clipping never
    uncovers the truth (it lies in [0, N]); for a vector nobody holds it removes one tail, so coverage there is
    about ``1 - (1 - level)/2`` rather than ``level``. The intervals are marginal, one cell at a time, not
    simultaneous over the 2**L cells.

    ``method="em"``: the non-negative maximum-likelihood estimate under the multinomial model in which each report
    is drawn from ``A f / N`` (``A = C^{⊗L}``): ``f_hat = N pi_hat`` with ``pi_hat`` maximizing

        l(pi) = sum_s h_s log (A pi)_s   over the probability simplex

    (concave: ``(A pi)_s`` is the same at every maximizer for the cells with ``h_s > 0``, but ``pi`` itself need
    not be unique when many cells are empty -- then solvers may return different maximizers of equal likelihood).
    With ``solver="lbfgs"``, when the inverse estimate is strictly positive it *is* the maximum (``A pi = h / n``
    maximizes ``sum h log m`` over all distributions m) and is returned with ``iterations == 0`` and
    ``solver == "closed-form"``. Otherwise ``solver``:

    * ``"lbfgs"`` (default): L-BFGS on ``pi = theta**2 / |theta|**2``, started from 5 EM steps from the
      uniform distribution; Armijo backtracking keeps the log-likelihood non-decreasing. Cells of the boundary
      (``pi_v = 0``) are reached quadratically in theta, where EM approaches them sublinearly.
    * ``"em"``: plain EM from the uniform distribution, ``pi <- pi ∘ A^T (h / A pi) / n`` -- the slow reference.

    Stopping rule (both solvers): the fit has *converged* when the log-likelihood gained over the last 10
    iterations is at most ``tol`` nats, or when the certified bound ``gap_bound >= l(pi*) - l(pi)`` (Jensen's
    inequality, 0 exactly at the maximum; ``docs/proofs/joint_estimation.md``) is at most ``tol``. A likelihood
    ``tol`` nats below the maximum puts every linear functional of the estimate within about ``sqrt(2 tol)``
    standard errors of the MLE's, so the default 1e-3 is statistically negligible. If ``max_iter`` is reached
    first, ``converged`` is ``False`` and :attr:`JointEstimate.status` says so.

    Intervals for ``"em"`` (``bootstrap > 0``): parametric bootstrap. The estimate, rounded to integer counts
    summing to N, is taken as the population; each replicate simulates its kN reports exactly (every bit of every
    report flipped independently with probability q) and is refitted like the data. With ``P_lo``, ``P_hi`` the
    ``(1 -+ level)/2`` percentiles of a cell's replicates, the interval is

        [min(P_lo, 2 f_hat - P_hi), max(P_hi, 2 f_hat - P_lo)]  clipped to [0, N],

    the union of the percentile and the basic ("reverse percentile") interval; ``std_error`` is the replicates'
    standard deviation. The MLE is biased and the two intervals fail at opposite ends; in seeded simulations at
    ``level = 0.95`` the union covered 0.94 to 1.0 per cell but one (0.91; ``docs/joint_estimation.md``,
    Intervals). Marginal per cell, not simultaneous. Cost: ``bootstrap`` refits.

    One pass of the channel costs O(L 2**L) (the 2**L x 2**L matrix is never formed): about 1.5 ms at L = 16,
    0.03 s at L = 20 on one core; an iteration of either solver is two passes.

    Args:
        histogram: counts of the kN reports per vector, length 2**L with 1 <= L <= 20; index bit j = vector bit j
            (index 1 is the vector with only bit 0 set).
        q: flip probability that was used, in (0, 0.5).
        reports: k >= 1, reports per person; the total count must be a multiple of k.
        method: ``"inverse"`` or ``"em"``.
        confidence_level: of the intervals, in (0, 1); default 0.95 (the result's ``level``).
        max_iter: maximum solver iterations of one fit, >= 1 (``"em"`` only).
        tol: stopping tolerance in nats of log-likelihood, > 0 (``"em"`` only).
        solver: ``"lbfgs"`` or ``"em"`` (``"em"`` only).
        bootstrap: bootstrap replicates, 0 <= bootstrap <= MAX_BOOTSTRAP and ``bootstrap * 2**L <= 2**26``
            (the replicates are kept in memory as float32); ``"em"`` only.
        rng: generator for the bootstrap simulation (default: a fresh ``numpy.random.default_rng()``; pass a
            seeded one to reproduce intervals).
        progress: optional callback ``progress(done, total)``: after every iteration of the fit with
            ``total = max_iter`` (the fit may stop early), then, with bootstrap, once with ``(0, bootstrap)`` and
            after every replicate with ``total = bootstrap``.
        level: the former name of ``confidence_level`` (deprecated; give one of the two).

    Returns:
        A :class:`JointEstimate`.

    Raises:
        ParameterError: q, reports, method, confidence_level, max_iter, tol, solver, bootstrap, rng or progress
            invalid.
        DataError: histogram not 1-D of length 2**L (1 <= L <= 20), not non-negative integers, empty, or its total
            not divisible by ``reports``.

    References:
        seed 001 (papers/001_3d8ddaba8b46cf9c.txt) §1.3 (the channel ``q**(L-m) p**m`` and the vector
        enumeration), §4 (unbiased estimator and its standard deviation ``sqrt(N p q)/(p - q)``), §6 (k reports:
        the variance divides by k). Nocedal & Wright, *Numerical Optimization* (2006), Alg. 7.4 (two-loop
        L-BFGS) and §3.1 (Armijo). Efron & Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 6 and 13
        (parametric bootstrap, percentile interval).

    Examples:
        Ten people, L = 2, q = 1/4, one report each (index 1 = "10" = only bit 0 set):

        >>> import numpy as np
        >>> est = joint_frequencies(np.array([3, 4, 1, 2]), q=0.25)
        >>> est.estimate.tolist()
        [3.5, 5.5, -0.5, 1.5]
        >>> est.top(2), est.label(1)
        ([(1, 5.5), (0, 3.5)], '10')
        >>> em = joint_frequencies(np.array([3, 4, 1, 2]), q=0.25, method="em", bootstrap=200,
        ...                        rng=np.random.default_rng(1))
        >>> bool(em.converged), round(float(em.estimate.sum()), 9), bool(em.estimate.min() >= 0)
        (True, 10.0, True)
        >>> bool(np.all((em.lower <= em.estimate) & (em.estimate <= em.upper))), em.interval
        (True, 'parametric-bootstrap')
    """
    q = check_open_interval("q", q, 0.0, 0.5)
    reports = check_int("reports", reports, minimum=1)
    if not isinstance(method, str) or method not in _METHODS:
        raise ParameterError(f"method must be one of {', '.join(map(repr, _METHODS))}; got {method!r}")
    level = check_confidence_level(confidence_level, level)
    max_iter = check_int("max_iter", max_iter, minimum=1)
    tol = check_positive_finite("tol", tol)
    if not isinstance(solver, str) or solver not in _SOLVERS:
        raise ParameterError(f"solver must be one of {', '.join(map(repr, _SOLVERS))}; got {solver!r}")
    bootstrap = check_int("bootstrap", bootstrap, minimum=0, maximum=MAX_BOOTSTRAP)
    if bootstrap and method != "em":
        raise ParameterError(f"bootstrap applies to method='em' only; got bootstrap={bootstrap} with "
                             f"method={method!r}")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy.random.Generator or None; got {rng!r}")
    if progress is not None and not callable(progress):
        raise ParameterError(f"progress must be a callable progress(done, total) or None; got {progress!r}")
    h, bits, total = _check_histogram(histogram)
    if bootstrap * h.size > _MAX_BOOTSTRAP_CELLS:
        raise ParameterError(
            f"bootstrap must be <= 2**26 / 2**L = {_MAX_BOOTSTRAP_CELLS // h.size} at L = {bits} (the replicates "
            f"are kept in memory); got {bootstrap}")
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
        z = normal_quantile(0.5 + level / 2.0)
        # clipped to [0, N], then widened to hold an unbiased estimate outside it (as BitEstimates): one interval
        # in lower/upper, cell_interval, to_dict and to_pandas, never a clipped [0, 0] hiding a negative estimate
        lower = np.minimum(np.clip(est - z * se, 0.0, n), est)
        upper = np.maximum(np.clip(est + z * se, 0.0, n), est)
        return JointEstimate(
            estimate=est, lower=lower, upper=upper, std_error=se, method=method, bits=bits,
            population=population, reports=reports, q=q, confidence_level=level,
        )

    fit = _fit(h, q, bits, population, solver, None, max_iter, tol, progress)
    if progress is not None:
        progress(max_iter, max_iter)
    if bootstrap:
        lower, upper, se, unconverged = _bootstrap(
            fit, q, bits, reports, population, bootstrap, level,
            np.random.default_rng() if rng is None else rng, solver, max_iter, tol, progress)
        interval, n_unconverged = "parametric-bootstrap", unconverged
    else:
        lower = upper = se = np.full(h.shape, np.nan)
        interval, n_unconverged = "none", None
    return JointEstimate(
        estimate=fit.f, lower=lower, upper=upper, std_error=se, method=method, bits=bits,
        population=population, reports=reports, q=q, confidence_level=level, interval=interval,
        iterations=fit.iterations, converged=fit.converged, solver=fit.solver, tol=tol, max_iter=max_iter,
        criterion=fit.criterion,
        log_likelihood=fit.log_likelihood, gap_bound=fit.gap_bound, bootstrap=bootstrap,
        bootstrap_unconverged=n_unconverged,
    )
