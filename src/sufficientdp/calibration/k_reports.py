"""Calibrating q for k reports per person by Monte Carlo, and the k that minimises the error (seed 001 §6).

The tails come from :mod:`sufficientdp.ratio.k_reports` (R(S^k) = e_k(w)/C(kN, k), ERRATA 4); this module holds
the searches over q and k. Every result here is an *estimate* about the homogeneous configuration (the outlier
differs in j bits from N - 1 identical people); ``calibrate(method="homogeneous" | "proven", reports=k)`` gives
the rigorous k-report calibrations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._errors import CalibrationError, ParameterError
from .._frozen import data_frame
from .._numerics.search import Bracket, Midpoint, search, verdict
from .._validation import check_int, check_open_interval, check_positive_finite, check_rng, renamed
from ..loss.result import TailResult
from ..parameters import local_q
from ..ratio.k_reports import k_maclaurin_bound_tail, k_tail_mc, sigma_per_sqrt_n_k

__all__ = ["KCalibration", "KScan", "best_k", "calibrate_k"]

_CALIBRATION_METHODS = ("mc", "maclaurin-mc")


@dataclass(frozen=True, slots=True, kw_only=True)
class KCalibration:
    """Result of :func:`calibrate_k` (an *estimate*: the tail was estimated by Monte Carlo).

    Attributes:
        q: the calibrated flip probability (smallest q on the bisection grid whose criterion held).
        reports, bits, outlier_bits, population, epsilon, eta_target: the inputs.
        method: ``"mc"`` (the correct R(S^k)) or ``"maclaurin-mc"`` (the Maclaurin upper bound's tail).
        criterion: ``"upper"`` (Clopper-Pearson upper limit <= target) or ``"estimate"`` (point estimate).
        sigma_per_sqrt_n: ``sqrt(q p / k) / (p - q)`` at q.
        local_q: the local-DP q with k-fold composition (eta = 0 there); the bisection's upper end.
        check: a fresh Monte Carlo of the calibrated tail at q (independent samples).
        kind: always ``"estimate"``.
        notes: caveats.
    """

    q: float
    reports: int
    bits: int
    outlier_bits: int
    population: int
    epsilon: float
    eta_target: float
    method: str
    criterion: str
    sigma_per_sqrt_n: float
    local_q: float
    check: TailResult
    kind: str = "estimate"
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        d = asdict(self)
        d["check"] = self.check.to_dict()
        d["notes"] = list(self.notes)
        return d


@dataclass(frozen=True, slots=True)
class _Target:
    bits: int
    j: int
    population: int
    reports: int
    epsilon: float


def _target(bits: Any, population: Any, reports: Any, epsilon: Any, outlier_bits: Any) -> _Target:
    bits = check_int("bits", bits, minimum=1)
    population = check_int("population", population, minimum=2)
    reports = check_int("reports", reports, minimum=1)
    epsilon = check_positive_finite("epsilon", epsilon)
    j = bits if outlier_bits is None else check_int("outlier_bits", outlier_bits, minimum=1, maximum=bits)
    return _Target(bits=bits, j=j, population=population, reports=reports, epsilon=epsilon)


def _tail_at(q: float, cfg: _Target, method: str, samples: int, seed: int, confidence: float) -> TailResult:
    fn = k_tail_mc if method == "mc" else k_maclaurin_bound_tail
    return fn(q=q, bits=cfg.bits, population=cfg.population, reports=cfg.reports, epsilon=cfg.epsilon,
              samples=samples, rng=np.random.default_rng(seed), outlier_bits=cfg.j, confidence_level=confidence)


def calibrate_k(*, bits: int, population: int, reports: int, epsilon: float, eta: float, method: str = "mc",
                rng: np.random.Generator | int | None = None, samples: int = 20_000,
                outlier_bits: int | None = None, criterion: str = "upper", confidence_level: float | None = None,
                confidence: float | None = None,
                iterations: int = 16) -> KCalibration:
    """Flip probability q(k) meeting ``P[R(S^k) > e**epsilon] <= eta`` — a Monte Carlo *estimate*.

    Bisection on q in ``(q_min, local_q]`` where ``local_q = 1/(1 + e**(epsilon/(k j)))`` is the local-DP flip
    probability with k-fold composition (there ``R(S^k) <= (p/q)**(jk) = e**epsilon``, so eta = 0). Every
    evaluation reuses the same seed (common random numbers), which makes the estimated tail a smooth, nearly
    monotone function of q; numpy's samplers do not couple draws across q exactly, so monotonicity is not
    guaranteed and the bisection's answer is re-checked with fresh samples (``check``).

    ``method="mc"`` estimates the tail of the correct ratio R(S^k); ``method="maclaurin-mc"`` estimates the tail of
    its rigorous upper bound ``(mean w)**k`` (more noise; the *reduction* is a proof, the estimate is not).

    Args:
        bits: L; population: N >= 2; reports: k >= 1; epsilon > 0; eta in (0, 1): the target.
        method: ``"mc"`` or ``"maclaurin-mc"``.
        rng: seed source (a Generator, int or None); one integer seed is drawn from it for the common numbers.
        samples: Monte Carlo samples per evaluation.
        outlier_bits: j (default L).
        criterion: ``"upper"`` (default; the Clopper-Pearson upper limit must be <= eta, the safe side) or
            ``"estimate"`` (the point estimate must be <= eta).
        confidence_level: level of the intervals.
        iterations: bisection steps.

    Returns:
        A :class:`KCalibration` (``kind="estimate"``).

    Raises:
        ParameterError: an input out of range.
        CalibrationError: the criterion fails even at local_q (cannot happen: eta = 0 there).

    References:
        ERRATA 4; seed 001 §3.2 (calibration), §6 (k-randomization), eq. (4.2) (local DP).
    """
    confidence = renamed("confidence_level", confidence_level, "confidence", confidence, default=0.95)
    cfg = _target(bits, population, reports, epsilon, outlier_bits)
    eta = check_open_interval("eta", eta, 0.0, 1.0)
    if method not in _CALIBRATION_METHODS:
        raise ParameterError(f"method must be one of {', '.join(_CALIBRATION_METHODS)}; got {method!r}")
    if criterion not in ("upper", "estimate"):
        raise ParameterError(f"criterion must be one of upper, estimate; got {criterion!r}")
    samples = check_int("samples", samples, minimum=1)
    confidence = check_open_interval("confidence_level", confidence, 0.0, 1.0)
    iterations = check_int("iterations", iterations, minimum=1, maximum=60)
    gen = check_rng(rng)
    seed = int(gen.integers(0, 2**63 - 1))
    q_local = local_q(cfg.j, cfg.epsilon, cfg.reports)

    def ok(q: float) -> bool:
        r = _tail_at(q, cfg, method, samples, seed, confidence)
        value = r.eta_upper if criterion == "upper" else r.eta
        return value is not None and value <= eta

    lo = 1e-4
    q = lo if ok(lo) else search(verdict(ok), Bracket(fail=lo, ok=q_local), Midpoint(), max_probes=iterations).ok
    check = _tail_at(q, cfg, method, samples, seed + 1, confidence) if q < q_local else TailResult(
        eta=0.0, eta_lower=0.0, eta_upper=0.0, method="local-dp", kind="exact", epsilon=cfg.epsilon, q=q,
        bits=cfg.bits, population=cfg.population, reports=cfg.reports, outlier_bits=cfg.j)
    notes = [
        "Monte Carlo calibration: q is an estimate, not a proof; check is an independent re-estimate at q.",
        f"common random numbers: every bisection step used seed {seed}.",
        f"outlier differs in j = {cfg.j} bits; ERRATA 5: the all-ones outlier is the paper's unproven worst case.",
    ]
    if method == "maclaurin-mc":
        notes.append("tail of the Maclaurin upper bound (mean w)^k (a proof), estimated by Monte Carlo.")
    if q >= q_local:
        notes.append("reached the local-DP flip probability: eta = 0 exactly there.")
    return KCalibration(q=q, reports=cfg.reports, bits=cfg.bits, outlier_bits=cfg.j, population=cfg.population,
                        epsilon=cfg.epsilon, eta_target=eta, method=method, criterion=criterion,
                        sigma_per_sqrt_n=sigma_per_sqrt_n_k(q, cfg.reports), local_q=q_local, check=check,
                        notes=tuple(notes))


@dataclass(frozen=True, slots=True, kw_only=True)
class KScan:
    """Result of :func:`best_k`: one :class:`KCalibration` per k and the k with the smallest sd(d_hat)."""

    calibrations: tuple[KCalibration, ...]
    best_reports: int
    best_sigma_per_sqrt_n: float
    kind: str = "estimate"

    def table(self) -> list[dict[str, float]]:
        """Rows ``{k, q, sigma_per_sqrt_n, eta_check, eta_check_upper}``."""
        return [{"k": c.reports, "q": c.q, "sigma_per_sqrt_n": c.sigma_per_sqrt_n, "eta_check": c.check.eta,
                 "eta_check_upper": c.check.eta_upper if c.check.eta_upper is not None else math.nan}
                for c in self.calibrations]

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` of :meth:`table`, one row per k, indexed by ``k``.

        Raises:
            ImportError: pandas is not installed (``pip install 'sufficientdp[pandas]'``).
        """
        rows = self.table()
        names = ("k", "q", "sigma_per_sqrt_n", "eta_check", "eta_check_upper")
        return data_frame({name: [r[name] for r in rows] for name in names}, index="k")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"calibrations": [c.to_dict() for c in self.calibrations], "best_reports": self.best_reports,
                "best_sigma_per_sqrt_n": self.best_sigma_per_sqrt_n, "kind": self.kind}


def best_k(*, bits: int, population: int, epsilon: float, eta: float, max_reports: int = 8,
           reports: Sequence[int] | None = None, method: str = "mc",
           rng: np.random.Generator | int | None = None, samples: int = 20_000,
           outlier_bits: int | None = None, criterion: str = "upper", iterations: int = 16) -> KScan:
    """Scan k = 1..K, calibrate q(k) with :func:`calibrate_k`, and return the k minimizing ``sd(d_hat)/sqrt(N)``.

    Args:
        max_reports: K (ignored when ``reports`` lists the k to try).
        Others: as in :func:`calibrate_k`.

    Returns:
        A :class:`KScan` (an estimate: every q(k) is a Monte Carlo calibration).
    """
    max_reports = check_int("max_reports", max_reports, minimum=1, maximum=1000)
    ks = list(range(1, max_reports + 1)) if reports is None else [check_int("reports", k) for k in reports]
    if not ks:
        raise ParameterError("reports must list at least one k >= 1; got an empty list")
    gen = check_rng(rng)
    cals = tuple(calibrate_k(bits=bits, population=population, reports=k, epsilon=epsilon, eta=eta,
                             method=method, rng=gen, samples=samples, outlier_bits=outlier_bits,
                             criterion=criterion, iterations=iterations) for k in ks)
    best = min(cals, key=lambda c: c.sigma_per_sqrt_n)
    if not cals:  # pragma: no cover
        raise CalibrationError("no k calibrated")
    return KScan(calibrations=cals, best_reports=best.reports, best_sigma_per_sqrt_n=best.sigma_per_sqrt_n)
