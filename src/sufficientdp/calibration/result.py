"""The result of a calibration: :class:`Calibration` (what q is, what it rests on, for which collections)."""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

from ..loss.result import Kind, Scope
from ..ratio.proven import is_exact_single_bit
from .methods import _KIND

__all__ = ["Calibration"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """Result of :func:`calibrate`.

    Attributes:
        q: the flip probability (rounded so the method's condition holds at it).
        method: one of ``METHODS``.
        guarantee: what kind of statement q rests on (proof or heuristic), in words.
        scope: for which collections it holds (a :class:`~sufficientdp.loss.result.Scope`):
            ``"all-collections"``, ``"homogeneous"`` or ``"per-report"``.
        domain: the vectors people may hold (``"all"``, ``"onehot"``, ``"weight"``).
        bits, effective_bits, max_weight, population, reports, epsilon, lam, beta: the inputs (and L_eff).
        sigma_per_sqrt_n: ``sd(d_hat) / sqrt(N)`` at q, exact (seed 001 §4).
        local_q, local_sigma_per_sqrt_n: the same for local DP at the same epsilon, L_eff and k.
        gain_vs_local: ``local_sigma_per_sqrt_n / sigma_per_sqrt_n`` (how many times smaller the error is).
        ratio_mean, ratio_sd: exact moments of R at q (heuristic methods; None for local).
        eta_target: the target probability cut-off (tail-based methods; the ``eta`` given to :func:`calibrate`),
            eta_at_q: the bound, exact value or estimate of P[R > e^epsilon] at q (see ``guarantee`` for which).
            (In every result type, ``eta`` alone is a value of P[R > e^epsilon], never a target.)
        notes: caveats that apply (unproven reductions, ERRATA references).
        rounds: T, the rounds the target covers together (epsilon and eta are then totals; q is per round).
        larger_crowds: the target also holds for every crowd of more than ``population`` people (``"proven"``
            at L = 1; at L >= 2 the proven bound holds for larger crowds anyway).
    """

    q: float
    method: str
    guarantee: str
    scope: str
    domain: str
    bits: int
    effective_bits: int
    max_weight: int | None
    population: int
    reports: int
    epsilon: float
    lam: float
    beta: float | None
    sigma_per_sqrt_n: float
    local_q: float
    local_sigma_per_sqrt_n: float
    gain_vs_local: float
    ratio_mean: float | None = None
    ratio_sd: float | None = None
    eta_target: float | None = None
    eta_at_q: float | None = None
    notes: tuple[str, ...] = field(default=())
    rounds: int = 1
    larger_crowds: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", Scope(self.scope))

    @property
    def eta(self) -> float | None:
        """Deprecated: the target, now :attr:`eta_target` (``eta`` alone names a value of P[R > e^epsilon])."""
        warnings.warn("Calibration.eta is deprecated; use eta_target (the target) or eta_at_q (the value at q)",
                      DeprecationWarning, stacklevel=2)
        return self.eta_target

    @property
    def kind(self) -> str:
        """What kind of statement q rests on: ``"bound"`` (proven, homogeneous), ``"exact"`` (exact tail, local
        DP's proof, or the exact all-crowd scan at L = 1), ``"estimate"`` (Monte Carlo) or ``"heuristic"`` (the
        paper's mean + beta * sd)."""
        if self.method == "proven" and self.rounds == 1 and is_exact_single_bit(
                bits=self.bits, population=self.population, reports=self.reports, larger_crowds=self.larger_crowds):
            return Kind.EXACT
        return Kind(_KIND[self.method])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (with ``kind``)."""
        d = asdict(self)
        d["notes"] = list(self.notes)
        d["scope"] = str(self.scope)
        d["kind"] = str(self.kind)
        return d
