"""Frequentist semantics: the maximal power of a test of ``H0: D1`` against ``H1: D2`` at a given level.

The attacker observes one output ``w`` of the mechanism and tests whether the data are ``D1`` or its neighbour
``D2`` (e.g. "Jessie's record is r0" against "it is r1"). A test has *level* ``l = P(reject | D1)`` (false alarm)
and *power* ``P(reject | D2)``. Each guarantee caps the power at every level:

* pure eps-DP (Thm 6.1, Wasserman–Zhou):  ``power <= min(e^eps l, 1 - e^{-eps}(1 - l))``  (attained by binary
  randomized response with a randomized test);
* (eps, delta)-DP (Thm 6.2, Kairouz–Oh–Viswanath): ``power <= min(e^eps l + delta, 1 - e^{-eps}(1 - l - delta))``,
  minimised over the mechanism's whole (eps, delta) curve when it is known;
* (alpha, gamma)-RDP and rho-zCDP (Thm 6.3, Balle et al.): ``power <= sup{p : D_alpha(Ber(l)||Ber(p)) <= gamma and
  D_alpha(Ber(p)||Ber(l)) <= gamma}`` — **both** directions of the Rényi divergence of the Bernoulli pair
  ``(l, p)``; for zCDP with ``gamma = rho alpha`` for all ``alpha > 1``. No closed form: bisection on ``p`` over a
  grid of orders (a finite grid drops constraints, so the result can only be too large: a rigorous upper bound).
  The bound is attained by the binary mechanism ``D1 -> Ber(l), D2 -> Ber(p)``, which satisfies exactly those
  constraints;
* f-DP (Def 5.7): ``power <= 1 - f(l)``; for a known mechanism the exact maximal power is the Neyman–Pearson
  power of its PLD (:func:`~sufficientdp.accounting.conversions.max_power`), maximised over both directions.

§6.4 (compound hypotheses): the bounds above hold unchanged when the attacker is uncertain about the other records
(``H0*: D^- ~ F, input D^- ∪ {r0}`` vs ``H1*: D^- ~ F, input D^- ∪ {r1}``), because the power-bound function
``g`` is concave and the compound test's level/power are ``F``-averages (Jensen). So every number here also bounds
the power of an attacker who knows nothing about the rest of the data.

References:
    papers/census-semantics-digest.md §3.1–3.4 (Thms 6.1–6.3, Tables 1, 2, 6, §6.4);
    papers/004_47af1ee980af8d2f.txt Sec. 6.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._errors import ParameterError
from .._frozen import data_frame, freeze, thaw
from .._numerics.search import Bracket, Midpoint, search, verdict
from .._validation import check_positive_finite, check_real_array
from ..accounting.conversions import max_power
from ..accounting.mechanisms import GaussianPLD, binary_randomized_response
from ..loss.distribution import PrivacyLossDistribution, _scalar_or_array
from ..loss.result import Kind

__all__ = [
    "PowerTable",
    "approx_dp_power_bound",
    "fdp_power",
    "power_table",
    "pure_dp_power_bound",
    "rdp_power_bound",
    "zcdp_power_bound",
]

#: Default orders for the zCDP power bound: 1 + logspace(-7, 4) (the digest uses a comparable grid, §3.3).
ZCDP_ALPHAS: NDArray[np.float64] = 1.0 + np.logspace(-7.0, 4.0, 1101)

_BISECT_STEPS = 64
_REL_SLACK = 1e-12  # constraint slack in the permissive direction: keeps the bound an upper bound under rounding


def _check_levels(level: ArrayLike, name: str = "level") -> NDArray[np.float64]:
    return check_real_array(name, level, low=0.0, high=1.0)


def _check_nonneg(name: str, value: ArrayLike) -> NDArray[np.float64]:
    return check_real_array(name, value, low=0.0, high=math.inf, closed_low=True)


# ---------------------------------------------------------------------------------------------------- Thm 6.1
def pure_dp_power_bound(level: ArrayLike, epsilon: float) -> Any:
    """Maximal power of a level-``l`` test against an eps-DP mechanism: ``min(e^eps l, 1 - e^{-eps}(1-l))``.

    Thm 6.1 (digest eq. 4); the matching lower bound on the power of the *best* test is not needed here.
    Attained at every level by binary randomized response with ``P(keep) = e^eps/(1+e^eps)`` and a randomized
    Neyman–Pearson test, so the bound is tight.

    Args:
        level: in (0, 1), scalar or array.
        epsilon: eps >= 0, finite.

    Raises:
        ParameterError: level outside (0, 1), eps negative or not finite.

    Example (digest Table 1, eps = 1, level 0.05: 0.136):
        >>> round(pure_dp_power_bound(0.05, 1.0), 6)
        0.135914
    """
    x = _check_levels(level)
    eps = float(_check_nonneg("epsilon", epsilon))
    out = np.minimum(np.exp(eps) * x, 1.0 + np.exp(-eps) * (x - 1.0))  # -expm1 form is not needed: both in [0,1]
    return _scalar_or_array(np.minimum(out * (1.0 + _REL_SLACK), 1.0))


# ---------------------------------------------------------------------------------------------------- Thm 6.2
def approx_dp_power_bound(level: ArrayLike, epsilon: ArrayLike, delta: ArrayLike) -> Any:
    """Thm 6.2: ``power <= min(e^eps l + delta, 1 - e^{-eps}(1 - l - delta))``, minimised over (eps, delta) pairs.

    Pass one pair, or equal-length arrays describing points of the mechanism's (eps, delta) curve (the bound is
    the minimum over them, digest §3.2).

    Args:
        level: in (0, 1), scalar or array.
        epsilon: eps >= 0 (scalar or 1-D array).
        delta: delta in [0, 1] (same shape as epsilon).

    Raises:
        ParameterError: shapes differ or values outside their ranges.

    Examples:
        >>> round(approx_dp_power_bound(0.05, 1.0, 1e-3), 6)
        0.136914
    """
    x = _check_levels(level)
    eps = np.atleast_1d(_check_nonneg("epsilon", epsilon)).ravel()
    d = np.atleast_1d(_check_nonneg("delta", delta)).ravel()
    if eps.shape != d.shape:
        raise ParameterError(f"epsilon and delta must have the same length; got {eps.size} and {d.size}")
    if np.any(d > 1):
        raise ParameterError(f"delta must be in [0, 1]; got {delta!r}")
    flat = x.ravel()[:, None]
    first = np.exp(eps)[None, :] * flat + d[None, :]
    second = 1.0 - np.exp(-eps)[None, :] * (1.0 - flat - d[None, :])
    out = np.min(np.minimum(first, second), axis=1)
    return _scalar_or_array(np.minimum(out * (1.0 + _REL_SLACK), 1.0).reshape(x.shape))


# ---------------------------------------------------------------------------------------------------- Thm 6.3
def _log_bern_moment(
    log_x: float, log_1mx: float, log_y: float, log_1my: float, alphas: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``log(x^a y^{1-a} + (1-x)^a (1-y)^{1-a}) = (a-1) D_a(Ber(x) || Ber(y))``, vectorized over a > 1."""
    with np.errstate(invalid="ignore"):
        t1 = np.where(np.isneginf(log_x), -np.inf, alphas * log_x + (1.0 - alphas) * log_y)
        t2 = np.where(np.isneginf(log_1mx), -np.inf, alphas * log_1mx + (1.0 - alphas) * log_1my)
    return np.asarray(np.logaddexp(t1, t2), dtype=np.float64)


def _feasible(level: float, power: float, alphas: NDArray[np.float64], log_rhs: NDArray[np.float64]) -> bool:
    with np.errstate(divide="ignore"):
        ll, l1 = math.log(level), math.log1p(-level)
        lp = math.log(power) if power > 0 else -math.inf
        lq = math.log1p(-power) if power < 1 else -math.inf
    c1 = _log_bern_moment(ll, l1, lp, lq, alphas)  # D_a(Ber(l) || Ber(p)): first inequality of Thm 6.3
    c2 = _log_bern_moment(lp, lq, ll, l1, alphas)  # D_a(Ber(p) || Ber(l)): second inequality
    slack = log_rhs + _REL_SLACK * np.maximum(1.0, np.abs(log_rhs))
    return bool(np.all(c1 <= slack) and np.all(c2 <= slack))


def _bisect_power(level: float, alphas: NDArray[np.float64], log_rhs: NDArray[np.float64]) -> float:
    # the safe end is the infeasible one (an upper bound on the power): search for the smallest infeasible power
    # between level (feasible: both divergences 0) and 1 (infeasible: D_a(Ber(l)||Ber(1)) = inf)
    end = search(verdict(lambda p: not _feasible(level, p, alphas, log_rhs)), Bracket(fail=level, ok=1.0),
                 Midpoint(), max_probes=_BISECT_STEPS)
    return end.ok  # every feasible power is <= it


def _binding_alpha(level: float, power: float, alphas: NDArray[np.float64], log_rhs: NDArray[np.float64]) -> int:
    with np.errstate(divide="ignore"):
        ll, l1 = math.log(level), math.log1p(-level)
        lp, lq = math.log(power), (math.log1p(-power) if power < 1 else -math.inf)
    c = np.maximum(_log_bern_moment(ll, l1, lp, lq, alphas), _log_bern_moment(lp, lq, ll, l1, alphas))
    with np.errstate(invalid="ignore"):
        return int(np.nanargmax(c - log_rhs))


def rdp_power_bound(level: ArrayLike, alphas: ArrayLike, gammas: ArrayLike) -> Any:
    """Thm 6.3: the maximal power over all mechanisms satisfying ``(alpha_i, gamma_i)``-RDP for every pair.

    ``sup{p : for all i, D_{alpha_i}(Ber(l)||Ber(p)) <= gamma_i and D_{alpha_i}(Ber(p)||Ber(l)) <= gamma_i}``
    by bisection (rounded up). Tight: the binary mechanism ``D1 -> Ber(l), D2 -> Ber(p)`` attains it.

    Args:
        level: in (0, 1), scalar or array.
        alphas: orders > 1 (1-D).
        gammas: RDP values >= 0 (same length).

    Raises:
        ParameterError: shapes differ or values outside their ranges.
    """
    x = _check_levels(level)
    a = np.atleast_1d(np.asarray(alphas, dtype=np.float64)).ravel()
    g = np.atleast_1d(_check_nonneg("gammas", gammas)).ravel()
    if a.size == 0 or np.any(~np.isfinite(a)) or np.any(a <= 1):
        raise ParameterError(f"alphas must be finite and in (1, inf); got {alphas!r}")
    if a.shape != g.shape:
        raise ParameterError(f"alphas and gammas must have the same length; got {a.size} and {g.size}")
    log_rhs = (a - 1.0) * g
    out = np.array([_bisect_power(float(v), a, log_rhs) for v in x.ravel()])
    return _scalar_or_array(out.reshape(x.shape))


def zcdp_power_bound(level: ArrayLike, rho: float, *, alphas: ArrayLike | None = None) -> Any:
    """Thm 6.3 for rho-zCDP: the maximal power of a level-``l`` test over ALL rho-zCDP mechanisms (an upper bound).

    Constraints ``D_alpha(Ber(l)||Ber(p)) <= rho alpha`` and ``D_alpha(Ber(p)||Ber(l)) <= rho alpha`` for every
    ``alpha > 1`` (both are needed: at rho = 2.63, l = 0.1 the first binds, the second alone allows power 1 —
    digest §3.3). Uses the grid :data:`ZCDP_ALPHAS` (or ``alphas``), then adds a fine local grid around the
    binding order and bisects again; adding orders only removes infeasible powers, and a finite set of orders
    can only overstate the power, so the result is a rigorous upper bound (rounded up).

    Args:
        level: in (0, 1), scalar or array.
        rho: > 0, finite.
        alphas: optional orders (> 1) replacing the default grid.

    Raises:
        ParameterError: level outside (0, 1), rho <= 0 or not finite, bad alphas.

    References:
        census-semantics-digest.md §3.3, Table 2 (rho = 2.63: 0.70, 0.95, 0.96) and Table 6
        (rho = 0.1115: 0.04, 0.14, 0.24).

    Examples:
        >>> [round(float(p), 3) for p in zcdp_power_bound([0.01, 0.05, 0.1], 2.63)]
        [0.698, 0.947, 0.962]
    """
    x = _check_levels(level)
    rho = check_positive_finite("rho", rho)
    if alphas is None:
        grid = ZCDP_ALPHAS
    else:
        grid = np.atleast_1d(np.asarray(alphas, dtype=np.float64)).ravel()
        if grid.size == 0 or np.any(~np.isfinite(grid)) or np.any(grid <= 1):
            raise ParameterError(f"alphas must be finite and in (1, inf); got {alphas!r}")
    out = np.empty(x.size)
    for i, v in enumerate(x.ravel()):
        lv = float(v)
        p = _bisect_power(lv, grid, rho * grid * (grid - 1.0))
        if alphas is None and p < 1.0:
            j = _binding_alpha(lv, p, grid, rho * grid * (grid - 1.0))
            lo_a = grid[max(j - 1, 0)]
            hi_a = grid[min(j + 1, grid.size - 1)]
            local = np.linspace(lo_a, hi_a, 401)
            fine = np.concatenate([grid, local[local > 1.0]])
            p = min(p, _bisect_power(lv, fine, rho * fine * (fine - 1.0)))
        out[i] = p
    return _scalar_or_array(out.reshape(x.shape))


# ---------------------------------------------------------------------------------------------------- f-DP
def fdp_power(pld: PrivacyLossDistribution | GaussianPLD, level: ArrayLike) -> Any:
    """Exact maximal power ``1 - f(l)`` of a known mechanism: Neyman–Pearson on its PLD, worst of both directions.

    For a :class:`GaussianPLD`, ``Phi(mu + Phi^{-1}(l))`` (mu-GDP). For a discrete PLD, the randomized LRT of
    :func:`~sufficientdp.accounting.conversions.max_power` for ``(P, Q)`` and for ``(Q, P)``.

    Raises:
        ParameterError: pld of the wrong type, level outside (0, 1).
    """
    x = _check_levels(level)
    if isinstance(pld, GaussianPLD):
        return pld.power(x)
    if not isinstance(pld, PrivacyLossDistribution):
        raise ParameterError(f"pld must be a PrivacyLossDistribution or GaussianPLD; got {type(pld).__name__}")
    out = np.maximum(np.asarray(max_power(pld, x)), np.asarray(max_power(pld.reverse(), x)))
    return _scalar_or_array(np.asarray(out, dtype=np.float64).reshape(x.shape))


# ---------------------------------------------------------------------------------------------------- table
@dataclass(frozen=True, slots=True, kw_only=True)
class PowerTable:
    """Power at each level, one column per guarantee or mechanism, each with its kind ("exact" | "bound").

    Attributes:
        levels: the significance levels.
        columns: column name -> powers aligned with ``levels``.
        kind: column name -> ``Kind.EXACT`` (the most powerful test of that very mechanism) or ``Kind.BOUND`` (an
            upper bound over every mechanism with the stated guarantee).
        parameters: the privacy parameters used.
        notes: caveats.

    Immutable: the mappings are read-only (:class:`~sufficientdp._frozen.FrozenDict`), the columns tuples.
    :meth:`to_pandas` gives one row per level.
    """

    levels: tuple[float, ...]
    columns: Mapping[str, tuple[float, ...]]
    kind: Mapping[str, Kind]
    parameters: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", tuple(float(v) for v in self.levels))
        object.__setattr__(self, "columns", freeze({k: tuple(float(x) for x in v) for k, v in self.columns.items()}))
        object.__setattr__(self, "kind", freeze({k: Kind(v) for k, v in self.kind.items()}))
        object.__setattr__(self, "parameters", freeze(self.parameters))
        object.__setattr__(self, "notes", tuple(self.notes))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``levels``, one list per column, ``kind``, ``parameters``, ``notes``."""
        d: dict[str, Any] = {"levels": list(self.levels)}
        for name, values in self.columns.items():
            d[name] = list(values)
        d["kind"] = {k: str(v) for k, v in self.kind.items()}
        d["parameters"] = thaw(self.parameters)
        d["notes"] = list(self.notes)
        return d

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` indexed by ``level``, one column per entry of ``columns`` (in order).

        Raises:
            ImportError: pandas is not installed (``pip install 'sufficientdp[pandas]'``).
        """
        return data_frame({"level": self.levels, **self.columns}, index="level")

    def format(self) -> str:
        """Plain-text table."""
        names = list(self.columns)
        head = f"{'level':>8} " + " ".join(f"{n + ' (' + self.kind[n] + ')':>28}" for n in names)
        rows = [head]
        for i, lv in enumerate(self.levels):
            rows.append(f"{lv:8.4g} " + " ".join(f"{self.columns[n][i]:28.6f}" for n in names))
        return "\n".join(rows)


_COMPOUND_NOTE = (
    "§6.4: these bounds also hold when the attacker is uncertain about everyone else's records (compound "
    "hypotheses), since the power-bound function is concave."
)


def power_table(
    levels: ArrayLike,
    *,
    rho: float | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    mechanism: PrivacyLossDistribution | GaussianPLD | None = None,
    mechanism_name: str = "mechanism",
) -> PowerTable:
    """Tabulate the attacker's maximal power at ``levels`` for the given guarantees.

    Columns (present when their inputs are given):

    * ``rho``: ``power_gaussian`` (exact, the Gaussian mechanism that is exactly rho-zCDP, mu = sqrt(2 rho)) and
      ``power_zcdp_bound`` (bound over all rho-zCDP mechanisms, Thm 6.3);
    * ``epsilon`` without ``delta``: ``power_pure_dp_bound`` (Thm 6.1) and ``power_rr`` (exact, binary randomized
      response with that eps — equal to the bound);
    * ``epsilon`` and ``delta``: ``power_approx_dp_bound`` (Thm 6.2);
    * ``mechanism``: ``power_<mechanism_name>`` (exact f-DP power of that PLD) and, when it is a GaussianPLD,
      ``power_zcdp_bound`` for its rho.

    Raises:
        ParameterError: no guarantee given, or any value outside its range.

    Examples:
        >>> t = power_table([0.05], rho=0.1115)
        >>> round(t.columns["power_gaussian"][0], 5), round(t.columns["power_zcdp_bound"][0], 5)
        (0.12047, 0.14018)
    """
    x = np.atleast_1d(_check_levels(levels, "levels")).ravel()
    if rho is None and epsilon is None and mechanism is None:
        raise ParameterError("power_table needs rho, epsilon or mechanism; got none")
    if delta is not None and epsilon is None:
        raise ParameterError("delta requires epsilon")
    cols: dict[str, tuple[float, ...]] = {}
    kind: dict[str, Kind] = {}
    params: dict[str, Any] = {}
    notes = [_COMPOUND_NOTE]

    def put(name: str, values: Any, k: Kind) -> None:
        cols[name] = tuple(float(v) for v in np.atleast_1d(values))
        kind[name] = k

    if rho is not None:
        rho = check_positive_finite("rho", rho)
        params["rho"] = rho
        g = GaussianPLD.from_rho(rho)
        params["mu"] = g.mu
        put("power_gaussian", g.power(x), Kind.EXACT)
        put("power_zcdp_bound", zcdp_power_bound(x, rho), Kind.BOUND)
        notes.append(
            "power_zcdp_bound covers every rho-zCDP mechanism (including one spending the whole budget on one "
            "person); power_gaussian is the Gaussian mechanism with sigma^2 = 1/(2 rho) and sensitivity 1."
        )
    if epsilon is not None:
        eps = float(_check_nonneg("epsilon", epsilon))
        params["epsilon"] = eps
        if delta is None:
            put("power_pure_dp_bound", pure_dp_power_bound(x, eps), Kind.BOUND)
            if eps > 0:
                put("power_rr", fdp_power(binary_randomized_response(1.0 / (1.0 + math.exp(eps))), x), Kind.EXACT)
        else:
            d = float(_check_nonneg("delta", delta))
            if d > 1:
                raise ParameterError(f"delta must be in [0, 1]; got {delta!r}")
            params["delta"] = d
            put("power_approx_dp_bound", approx_dp_power_bound(x, eps, d), Kind.BOUND)
    if mechanism is not None:
        put(f"power_{mechanism_name}", fdp_power(mechanism, x), Kind.EXACT)
        if isinstance(mechanism, GaussianPLD) and "power_zcdp_bound" not in cols:
            params["rho"] = mechanism.rho
            params["mu"] = mechanism.mu
            put("power_zcdp_bound", zcdp_power_bound(x, mechanism.rho), Kind.BOUND)
    return PowerTable(levels=tuple(float(v) for v in x), columns=cols, kind=kind, parameters=params,
                      notes=tuple(notes))
