"""A device-side privacy ledger: what each campaign a device joined spends, and a budget per period (issue 14).

A device that takes part in many campaigns leaks more than in one. The ledger records, for each campaign the device
joined, the campaign's published and pinned guarantee ``(epsilon_i, eta_i)``: ``P[L_i > epsilon_i] <= eta_i`` for the
privacy loss ``L_i`` of that campaign's anonymized release, over every pair of neighbouring collections (the
campaign's ``proven`` guarantee at its N_min, covering its k reports per person). Before joining a new campaign the
device asks :meth:`Ledger.decide`; it joins only if the campaigns it joined within the last ``period`` together with
the new one stay within its budget ``(epsilon_B, eta_B)``.

The rule (rigorous, for independent releases): the total loss of the releases is ``L = sum_i L_i``, and
``{sum_i L_i > sum_i epsilon_i}`` is contained in the union of the events ``{L_i > epsilon_i}``, so

    P[L > sum_i epsilon_i] <= sum_i eta_i

for every pair of neighbouring collections (the person's data may differ in every campaign). This is the simple
rule of docs/proofs/rounds.md; the composed bound of :func:`sufficientdp.accounting.rounds.rounds_tail` is tighter
for T identical rounds but needs every round's parameters, which a device does not plan in advance.

A campaign already recorded is free to join again (its guarantee covers all its k reports), and spends older than
the period no longer count. The ledger is an immutable value: :meth:`Ledger.record` returns a new one, and
:meth:`Ledger.to_dict` / :meth:`Ledger.from_dict` store it (the HTTP ``Reporter`` keeps it in a local file and never
sends it; a refusal looks like silence to the collector).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import ParameterError
from .._validation import check_epsilon, check_nonnegative_finite, check_open_interval, check_positive_finite

__all__ = ["MAX_SPENDS", "Budget", "Decision", "Ledger", "Spend"]

#: Most spends a ledger holds (a device joining one campaign an hour for a year stays far below).
MAX_SPENDS = 100_000
#: Longest campaign identifier or family name, in characters.
_MAX_NAME = 200
#: Longest period: 100 years, in seconds.
_MAX_PERIOD = 100 * 365.25 * 86400.0


def _check_name(name: str, value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= _MAX_NAME or not value.isprintable():
        shown = repr(value)
        raise ParameterError(f"{name} must be 1 to {_MAX_NAME} printable characters; got "
                             f"{shown if len(shown) <= 60 else shown[:57] + '...'}")
    return value


def _check_time(name: str, value: Any) -> float:
    return check_nonnegative_finite(name, value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """What a device allows itself within any window of ``period`` seconds.

    Attributes:
        epsilon: total privacy level, in (0, 50].
        eta: total probability cut-off, in (0, 1).
        period: the window in seconds, in (0, 100 years] (for example 86400 * 30 for a month).
    """

    epsilon: float
    eta: float
    period: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "eta", check_open_interval("eta", self.eta, 0.0, 1.0))
        period = check_positive_finite("period", self.period)
        if period > _MAX_PERIOD:
            raise ParameterError(f"period must be in (0, {_MAX_PERIOD:g}] seconds; got {self.period!r}")
        object.__setattr__(self, "period", period)


@dataclass(frozen=True, slots=True, kw_only=True)
class Spend:
    """One campaign the device joined, with the campaign's pinned guarantee.

    Attributes:
        campaign: the campaign's identifier.
        family: the campaign family it belongs to (informational; every family counts against one budget).
        epsilon: the campaign's privacy level, in (0, 50].
        eta: the campaign's bound on ``P[L > epsilon]``, in [0, 1) (0 for local DP at that epsilon).
        at: when the device joined, seconds since the epoch (>= 0).
    """

    campaign: str
    family: str
    epsilon: float
    eta: float
    at: float

    def __post_init__(self) -> None:
        _check_name("campaign", self.campaign)
        _check_name("family", self.family)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.eta != 0:
            object.__setattr__(self, "eta", check_open_interval("eta", self.eta, 0.0, 1.0))
        else:
            object.__setattr__(self, "eta", 0.0)
        object.__setattr__(self, "at", _check_time("at", self.at))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"campaign": self.campaign, "family": self.family, "epsilon": self.epsilon, "eta": self.eta,
                "at": self.at}


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """Whether joining a campaign keeps the device within its budget.

    Attributes:
        allowed: True to join.
        reason: one line, for the device's own log (never sent to the collector).
        spent_epsilon, spent_eta: what the campaigns joined within the period already spend.
        after_epsilon, after_eta: the totals if the device joins (equal to the spent totals when the campaign was
            already joined).
        budget: the budget decided against.
    """

    allowed: bool
    reason: str
    spent_epsilon: float
    spent_eta: float
    after_epsilon: float
    after_eta: float
    budget: Budget

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"allowed": self.allowed, "reason": self.reason, "spent_epsilon": self.spent_epsilon,
                "spent_eta": self.spent_eta, "after_epsilon": self.after_epsilon, "after_eta": self.after_eta,
                "budget": {"epsilon": self.budget.epsilon, "eta": self.budget.eta, "period": self.budget.period}}


@dataclass(frozen=True, slots=True, kw_only=True)
class Ledger:
    """The campaigns a device joined and its budget (immutable; :meth:`record` returns a new ledger).

    Examples:
        >>> ledger = Ledger(budget=Budget(epsilon=3.0, eta=0.003, period=30 * 86400))
        >>> d = ledger.decide(campaign="c1", epsilon=1.0, eta=0.001, now=0.0)
        >>> d.allowed, d.after_epsilon
        (True, 1.0)
        >>> for i in range(3):
        ...     ledger = ledger.record(Spend(campaign=f"c{i}", family="daily", epsilon=1.0, eta=0.001, at=i * 86400))
        >>> ledger.decide(campaign="c3", epsilon=1.0, eta=0.001, now=3 * 86400).allowed
        False
        >>> ledger.decide(campaign="c3", epsilon=1.0, eta=0.001, now=31 * 86400).allowed  # c0 left the window
        True
    """

    budget: Budget
    spends: tuple[Spend, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.budget, Budget):
            raise ParameterError(f"budget must be a Budget; got {type(self.budget).__name__}")
        spends = tuple(self.spends)
        if len(spends) > MAX_SPENDS:
            raise ParameterError(f"a ledger holds at most {MAX_SPENDS} spends; got {len(spends)}")
        if any(not isinstance(s, Spend) for s in spends):
            raise ParameterError("spends must be Spend values")
        object.__setattr__(self, "spends", spends)

    def _window(self, now: float) -> list[Spend]:
        start = now - self.budget.period
        return [s for s in self.spends if start < s.at <= now]

    def spent(self, now: float) -> tuple[float, float]:
        """``(sum epsilon_i, sum eta_i)`` over the campaigns joined in ``(now - period, now]``."""
        now = _check_time("now", now)
        window = self._window(now)
        return math.fsum(s.epsilon for s in window), min(1.0, math.fsum(s.eta for s in window))

    def decide(self, *, campaign: str, epsilon: float, eta: float, now: float) -> Decision:
        """May the device join ``campaign`` (pinned guarantee ``(epsilon, eta)``) at time ``now``?"""
        campaign = _check_name("campaign", campaign)
        epsilon = check_epsilon(epsilon)
        eta = 0.0 if eta == 0 else check_open_interval("eta", eta, 0.0, 1.0)
        now = _check_time("now", now)
        spent_eps, spent_eta = self.spent(now)
        if any(s.campaign == campaign for s in self.spends):
            return Decision(allowed=True, reason=f"campaign {campaign} already joined: its guarantee covers its "
                            "reports", spent_epsilon=spent_eps, spent_eta=spent_eta, after_epsilon=spent_eps,
                            after_eta=spent_eta, budget=self.budget)
        after_eps = math.fsum((spent_eps, epsilon))
        after_eta = min(1.0, math.fsum((spent_eta, eta)))
        # A relative slack of 1e-12 keeps exact splits (3 x eps/3) inside a budget they meet in exact arithmetic.
        ok_eps = after_eps <= self.budget.epsilon * (1.0 + 1e-12)
        ok_eta = after_eta <= self.budget.eta * (1.0 + 1e-12)
        if ok_eps and ok_eta:
            reason = (f"within budget: epsilon {after_eps:.6g} <= {self.budget.epsilon:g}, eta {after_eta:.3g} <= "
                      f"{self.budget.eta:g} over the period")
        else:
            over = [f"epsilon {after_eps:.6g} > {self.budget.epsilon:g}"] if not ok_eps else []
            over += [f"eta {after_eta:.3g} > {self.budget.eta:g}"] if not ok_eta else []
            reason = "declined: joining would spend " + " and ".join(over) + " within the period"
        return Decision(allowed=ok_eps and ok_eta, reason=reason, spent_epsilon=spent_eps, spent_eta=spent_eta,
                        after_epsilon=after_eps, after_eta=after_eta, budget=self.budget)

    def record(self, spend: Spend) -> Ledger:
        """A new ledger with ``spend`` added (a campaign already recorded is not added twice).

        Raises:
            ParameterError: the spend would exceed the budget (ask :meth:`decide` first), or the ledger is full.
        """
        if not isinstance(spend, Spend):
            raise ParameterError(f"spend must be a Spend; got {type(spend).__name__}")
        if any(s.campaign == spend.campaign for s in self.spends):
            return self
        decision = self.decide(campaign=spend.campaign, epsilon=spend.epsilon, eta=spend.eta, now=spend.at)
        if not decision.allowed:
            raise ParameterError(f"cannot record campaign {spend.campaign}: {decision.reason}")
        return Ledger(budget=self.budget, spends=(*self.spends, spend))

    def forget_before(self, when: float) -> Ledger:
        """A new ledger without the spends at or before ``when`` (those older than a period no longer count)."""
        when = _check_time("when", when)
        return Ledger(budget=self.budget, spends=tuple(s for s in self.spends if s.at > when))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (what the device stores locally)."""
        return {"version": 1,
                "budget": {"epsilon": self.budget.epsilon, "eta": self.budget.eta, "period": self.budget.period},
                "spends": [s.to_dict() for s in self.spends]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ledger:
        """Rebuild a ledger from :meth:`to_dict` (every field validated)."""
        if not isinstance(data, Mapping) or data.get("version") != 1:
            raise ParameterError("ledger data must be a mapping with version 1")
        b = data.get("budget")
        spends = data.get("spends")
        if not isinstance(b, Mapping) or not isinstance(spends, list):
            raise ParameterError("ledger data must hold a budget mapping and a spends list")
        try:
            budget = Budget(epsilon=b["epsilon"], eta=b["eta"], period=b["period"])
            items = tuple(Spend(**{k: s[k] for k in ("campaign", "family", "epsilon", "eta", "at")})
                          for s in spends)
        except (KeyError, TypeError) as exc:
            raise ParameterError(f"ledger data is malformed: {exc}") from None
        return cls(budget=budget, spends=items)
