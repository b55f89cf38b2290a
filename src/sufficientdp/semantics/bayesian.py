"""Bayesian semantics: how far a release can move an attacker's belief about one person's record.

Posterior-to-posterior framework (paper 004 Sec. 7, digest §4). Compare the attacker's posterior about the target's
record ``r`` in the actual world with the posterior in a counterfactual world where the record was replaced by a
draw from the attacker's own posterior given everyone else (``psample``). Their ratio is the Bayesian analogue of the
privacy loss. When the attacker knows everyone else's record ("rest known"), the counterfactual posterior is just
the prior, so the ratio is posterior / prior.

* Pure eps-DP (Sec. 7.3): for every prior (even a wrong one), every output and every ``r``, the ratio is in
  ``[e^{-eps}, e^{eps}]``. With the rest known the posterior *odds* move by at most ``e^{±eps}`` (tight: binary
  randomized response).
* Rest known (Thm 7.4.1), ``w`` drawn with a correct prior: ``P(ratio >= e^eps) <= exp(-(eps-gamma) alpha - gamma)``
  for (alpha, gamma)-RDP; ``exp(-(eps+rho)^2/(4 rho))`` for rho-zCDP with ``eps > rho`` (``e^{-eps}`` below, by
  Markov with ``E[ratio] = 1`` — digest §8 [DERIVED]).
* Rest known, f-DP (Thm "3" of Sec. 7.4.1): ``P(ratio > e^eps | r) <= delta`` on the pbdp curve.
* Arbitrary (correct) prior (Thm 7.4.2), about the *true* record: ``P(ratio >= e^eps | r) <= exp((alpha-1)(gamma-eps))``
  for RDP; ``exp(-(eps-rho)^2/(4 rho))`` for zCDP with ``eps > rho`` (1 below).

All these are Markov/Chernoff-type *upper bounds* (``kind = "bound"``); for small eps they overstate the risk.
The non-pure statements need a *correct* prior; a wrong prior can show arbitrarily large perceived ratios
(Ex. 7.1). Approximate (eps, delta)-DP has no such reading here (the paper does not review it).

Two readings from seed 003, with their caveats: total variation (statistical distance) and prior-to-posterior.

References:
    papers/census-semantics-digest.md §4.1–4.4, §8 (pitfalls);
    papers/004_47af1ee980af8d2f.txt Sec. 7 and Appendix C;
    papers/003_94afa14f96cb68a4.txt §1 (differencing), §2.1 Remark 2 (why not statistical
    distance), §2.2 Theorems 1–2 (Bayesian reading).
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
from .._validation import check_int, check_positive_finite, check_real_array
from ..accounting.mechanisms import GaussianPLD
from ..accounting.pbdp import pbdp_delta, pbdp_epsilon
from ..loss.distribution import PrivacyLossDistribution, _scalar_or_array
from ..loss.result import Kind

__all__ = [
    "PosteriorBound",
    "PosteriorTable",
    "PriorToPosteriorReading",
    "TotalVariationReading",
    "correlated_prior_shift",
    "fdp_posterior_delta",
    "posterior_table",
    "prior_to_posterior_reading",
    "pure_dp_posterior_bound",
    "rdp_posterior_delta",
    "total_variation_reading",
    "zcdp_posterior_delta",
    "zcdp_posterior_epsilon",
]

_UP = 1.0 + 1e-12

TV_CAVEAT = (
    "Total variation (statistical distance) alone is not a privacy definition (seed 003, §2.1 Remark 2): if it "
    "must be <= 1/(2n) the output is at least half the time independent of the data (useless); if it may be about "
    "1/n, the mechanism that publishes each record in the clear with probability 1/(2n) qualifies, yet reveals some "
    "person's record with probability 1/2. It also says nothing about rare outputs with huge likelihood ratios."
)
PRIOR_TO_POSTERIOR_CAVEAT = (
    "Prior-to-posterior bounds hold only when the attacker's prior makes the target's record independent of the "
    "other records (e.g. the attacker knows them all). In general no mechanism that is useful can bound the change "
    "from prior to posterior: if the attacker believes records are correlated (everyone in a village answers alike; "
    "'smoking causes cancer'), the published statistics move the belief about a person even if that person's record "
    "is not used at all; and exact releases are broken by differencing (seed 003 §1: last year's and this year's "
    "totals reveal a newcomer's answer). Posterior-to-posterior comparisons (paper 004 §7) isolate what is learned "
    "because the record was used."
)
WRONG_PRIOR_CAVEAT = (
    "RDP, zCDP and f-DP readings hold for outputs drawn under a correct prior; with a wrong prior an attacker can "
    "perceive arbitrarily large posterior ratios (paper 004 Ex. 7.1). Pure DP is immune."
)


def _check_prior(prior: ArrayLike, name: str = "prior") -> NDArray[np.float64]:
    return check_real_array(name, prior, low=0.0, high=1.0)


def _check_eps(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be finite and >= 0; got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be finite and >= 0; got {value!r}") from None
    if not math.isfinite(v) or v < 0:
        raise ParameterError(f"{name} must be finite and >= 0; got {value!r}")
    return v


def _check_delta_open(delta: Any) -> float:
    if isinstance(delta, bool):
        raise ParameterError(f"delta must be in (0, 1); got {delta!r}")
    try:
        v = float(delta)
    except (TypeError, ValueError):
        raise ParameterError(f"delta must be in (0, 1); got {delta!r}") from None
    if not 0.0 < v < 1.0:
        raise ParameterError(f"delta must be in (0, 1); got {delta!r}")
    return v


def _odds_up(p: NDArray[np.float64], eps: float) -> NDArray[np.float64]:
    """``p e^eps / (p e^eps + 1 - p)`` (posterior when the odds grow by e^eps), computed as 1/(1 + (1-p)/p e^-eps)."""
    return np.asarray(1.0 / (1.0 + (1.0 - p) / p * math.exp(-eps)), dtype=np.float64)


def _odds_down(p: NDArray[np.float64], eps: float) -> NDArray[np.float64]:
    return np.asarray(1.0 / (1.0 + (1.0 - p) / p * _exp(eps)), dtype=np.float64)


def _exp(x: float) -> float:
    """``e**x``, infinite instead of an OverflowError above about 709."""
    return math.exp(x) if x < 709.0 else math.inf


# ---------------------------------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True, kw_only=True)
class PosteriorBound:
    """Bounds on the attacker's posterior probability of the record, given its prior (or counterfactual) belief.

    Attributes:
        prior: the prior probability (rest known) or the counterfactual posterior (arbitrary prior).
        lower: lower bound on the actual posterior.
        upper: upper bound on the actual posterior.
        failure_probability: probability (over the output) that the bound may fail; 0 for pure DP.
        ratio_epsilon: the posterior-to-posterior log-ratio bound used.
        semantics: which theorem.
        tight: whether some mechanism with these parameters attains ``upper``.
        kind: always ``Kind.BOUND`` (a :class:`~sufficientdp.loss.result.Kind`, equal to ``"bound"``).
        caveat: what the statement assumes.
    """

    prior: float
    lower: float
    upper: float
    failure_probability: float
    ratio_epsilon: float
    semantics: str
    tight: bool
    kind: Kind = Kind.BOUND
    caveat: str = ""

    def __post_init__(self) -> None:
        if self.kind != Kind.BOUND:
            raise ParameterError(f"kind must be {Kind.BOUND.value!r}; got {self.kind!r}")
        object.__setattr__(self, "kind", Kind.BOUND)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "prior": self.prior,
            "lower": self.lower,
            "upper": self.upper,
            "failure_probability": self.failure_probability,
            "ratio_epsilon": self.ratio_epsilon if math.isfinite(self.ratio_epsilon) else None,
            "semantics": self.semantics,
            "tight": self.tight,
            "kind": str(self.kind),
            "caveat": self.caveat,
        }


def pure_dp_posterior_bound(prior: float, epsilon: float, *, rest_known: bool = True) -> PosteriorBound:
    """Posterior band for pure eps-DP (paper 004 Sec. 7.3), for every output and every prior.

    * ``rest_known=True``: posterior odds = prior odds x likelihood ratio in ``[e^-eps, e^eps]``:
      ``upper = p e^eps / (p e^eps + 1 - p)``; attained by binary randomized response (tight).
    * ``rest_known=False``: ``prior`` is the counterfactual posterior ``p_c``; the actual posterior ``p_a``
      satisfies ``p_a <= e^eps p_c`` and ``1 - p_a >= e^-eps (1 - p_c)`` (the ratio theorem applied to the record
      and to its complement, whose marginals agree), so ``upper = min(e^eps p_c, 1 - e^-eps (1 - p_c))``.

    Args:
        prior: in (0, 1).
        epsilon: eps >= 0, finite.
        rest_known: which setting.

    Raises:
        ParameterError: prior outside (0, 1), eps negative or not finite.

    Examples:
        >>> b = pure_dp_posterior_bound(0.5, math.log(3))
        >>> round(b.lower, 6), round(b.upper, 6)
        (0.25, 0.75)
    """
    p = float(_check_prior(prior))
    eps = _check_eps("epsilon", epsilon)
    pa = np.asarray(p)
    if rest_known:
        lo, hi = float(_odds_down(pa, eps)), float(_odds_up(pa, eps))
        sem, tight = "pure DP, rest known (posterior odds within e^{+-eps})", True
    else:
        hi = min(_exp(eps) * p, 1.0 - math.exp(-eps) * (1.0 - p))
        lo = max(math.exp(-eps) * p, 1.0 - _exp(eps) * (1.0 - p), 0.0)
        sem, tight = "pure DP, any prior (Sec. 7.3: posterior ratio within e^{+-eps})", False
    return PosteriorBound(prior=p, lower=max(0.0, lo / _UP), upper=min(1.0, hi * _UP), failure_probability=0.0,
                          ratio_epsilon=eps, semantics=sem, tight=tight,
                          caveat="holds for every output and every prior, even a wrong one")


# ---------------------------------------------------------------------------------------------------- curves
def rdp_posterior_delta(epsilon: ArrayLike, alpha: float, gamma: float, *, rest_known: bool = True) -> Any:
    """Probability that the posterior-to-posterior ratio reaches ``e^eps`` under (alpha, gamma)-RDP.

    * rest known (Thm 7.4.1): ``min(1, e^{-eps}, exp(-(eps - gamma) alpha - gamma))`` (``e^{-eps}``: Markov with
      ``E[ratio] = 1``, valid for every mechanism);
    * arbitrary prior, true record (Thm 7.4.2): ``min(1, exp((alpha - 1)(gamma - eps)))``.

    Raises:
        ParameterError: eps negative or not finite, alpha <= 1, gamma < 0.
    """
    eps = np.asarray(epsilon, dtype=np.float64)
    if eps.size == 0 or np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ParameterError(f"epsilon must be finite and >= 0; got {epsilon!r}")
    a = _check_eps("alpha", alpha)
    if a <= 1.0:
        raise ParameterError(f"alpha must be in (1, inf); got {alpha!r}")
    g = _check_eps("gamma", gamma)
    if rest_known:
        out = np.minimum(np.exp(-eps), np.exp(-(eps - g) * a - g))
    else:
        out = np.exp((a - 1.0) * (g - eps))
    return _scalar_or_array(np.minimum(out * _UP, 1.0))


def zcdp_posterior_delta(epsilon: ArrayLike, rho: float, *, rest_known: bool = True) -> Any:
    """Probability that the posterior-to-posterior ratio reaches ``e^eps`` under rho-zCDP (digest §4.3–4.4).

    * rest known (Thm 7.4.1): ``exp(-(eps + rho)^2 / (4 rho))`` for ``eps > rho``, ``e^{-eps}`` otherwise;
    * arbitrary prior (Thm 7.4.2): ``exp(-(eps - rho)^2 / (4 rho))`` for ``eps > rho``, 1 otherwise. (The paper's
      text garbles this as ``e^{-(eps - rho^2)/4 rho}``; this is the intended formula, equal to the zCDP bound on
      the pbdp delta.)

    Raises:
        ParameterError: eps negative or not finite, rho <= 0.

    Examples:
        >>> round(zcdp_posterior_delta(3.0, 0.5), 6), round(zcdp_posterior_delta(3.0, 0.5, rest_known=False), 6)
        (0.002187, 0.043937)
    """
    eps = np.asarray(epsilon, dtype=np.float64)
    if eps.size == 0 or np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ParameterError(f"epsilon must be finite and >= 0; got {epsilon!r}")
    rho = check_positive_finite("rho", rho)
    if rest_known:
        out = np.where(eps > rho, np.exp(-((eps + rho) ** 2) / (4.0 * rho)), np.exp(-eps))
    else:
        out = np.where(eps > rho, np.exp(-((eps - rho) ** 2) / (4.0 * rho)), 1.0)
    return _scalar_or_array(np.minimum(out * _UP, 1.0))


def zcdp_posterior_epsilon(delta: float, rho: float, *, rest_known: bool = True) -> float:
    """Inverse of :func:`zcdp_posterior_delta`: the log-ratio bound that fails with probability at most ``delta``.

    Rest known: ``log(1/delta)`` if ``delta >= e^{-rho}``, else ``2 sqrt(rho log(1/delta)) - rho``.
    Arbitrary prior: ``rho + 2 sqrt(rho log(1/delta))``. Rounded up.

    Raises:
        ParameterError: delta outside (0, 1), rho <= 0.
    """
    d = _check_delta_open(delta)
    rho = check_positive_finite("rho", rho)
    log_inv = -math.log(d)
    if rest_known:
        eps = log_inv if log_inv <= rho else 2.0 * math.sqrt(rho * log_inv) - rho
    else:
        eps = rho + 2.0 * math.sqrt(rho * log_inv)
    return eps * _UP + 1e-15


def fdp_posterior_delta(pld: PrivacyLossDistribution | GaussianPLD, epsilon: ArrayLike) -> Any:
    """Rest known, f-DP (paper 004 Sec. 7.4.1, "Theorem 3"): ``P(ratio > e^eps | r) <= delta_pbdp(eps)``.

    The Bayesian (eps, delta) curve coincides with the pbdp curve of the mechanism
    (:func:`~sufficientdp.accounting.pbdp.pbdp_delta`).
    """
    return pbdp_delta(pld, epsilon)


# ---------------------------------------------------------------------------------------------------- table
@dataclass(frozen=True, slots=True, kw_only=True)
class PosteriorTable:
    """Upper bounds on the attacker's posterior for several priors, one column per semantics.

    Attributes:
        priors: prior (or counterfactual-posterior) probabilities of the record.
        failure_probability: probability over the output with which a non-pure bound may fail.
        columns: name -> upper bounds on the posterior, aligned with ``priors``.
        ratio_epsilon: name -> the log-ratio bound used (``posterior <= min(1, prior e^eps)`` or the odds form).
        kind: name -> ``Kind.BOUND``.
        notes: caveats.
        descriptions: name -> what the column is.

    Immutable: the mappings are read-only (:class:`~sufficientdp._frozen.FrozenDict`), the columns tuples.
    :meth:`to_pandas` gives one row per prior.
    """

    priors: tuple[float, ...]
    failure_probability: float
    columns: Mapping[str, tuple[float, ...]]
    ratio_epsilon: Mapping[str, float]
    kind: Mapping[str, Kind]
    notes: tuple[str, ...] = ()
    descriptions: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "priors", tuple(float(v) for v in self.priors))
        object.__setattr__(self, "columns", freeze({k: tuple(float(x) for x in v) for k, v in self.columns.items()}))
        object.__setattr__(self, "ratio_epsilon", freeze(self.ratio_epsilon))
        object.__setattr__(self, "kind", freeze({k: Kind(v) for k, v in self.kind.items()}))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "descriptions", freeze(self.descriptions))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "priors": list(self.priors),
            "failure_probability": self.failure_probability,
            "columns": {k: list(v) for k, v in self.columns.items()},
            "ratio_epsilon": {k: (v if math.isfinite(v) else None) for k, v in self.ratio_epsilon.items()},
            "kind": {k: str(v) for k, v in self.kind.items()},
            "descriptions": thaw(self.descriptions),
            "notes": list(self.notes),
        }

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` indexed by ``prior``, one column per entry of ``columns`` (in order).

        Raises:
            ImportError: pandas is not installed (``pip install 'sufficientdp[pandas]'``).
        """
        return data_frame({"prior": self.priors, **self.columns}, index="prior")

    def format(self) -> str:
        """Plain-text table."""
        names = list(self.columns)
        rows = [f"{'prior':>8} " + " ".join(f"{n:>26}" for n in names)]
        for i, p in enumerate(self.priors):
            rows.append(f"{p:8.4g} " + " ".join(f"{self.columns[n][i]:26.6f}" for n in names))
        rows.append("")
        for n in names:
            rows.append(f"{n}: {self.descriptions.get(n, '')} (log-ratio bound {self.ratio_epsilon[n]:.4g})")
        return "\n".join(rows)


def posterior_table(
    priors: ArrayLike,
    *,
    rho: float | None = None,
    epsilon: float | None = None,
    mechanism: PrivacyLossDistribution | GaussianPLD | None = None,
    mechanism_name: str = "mechanism",
    failure_probability: float = 0.05,
) -> PosteriorTable:
    """Upper bounds on the attacker's posterior belief in the target's record, for each prior.

    Non-pure columns hold with probability at least ``1 - failure_probability`` over the output (correct prior):
    with ``eps`` the log-ratio bound at that failure probability, ``posterior <= min(1, prior e^eps)``.

    * ``epsilon`` (pure DP, failure probability 0): ``pure_dp_rest_known`` (odds form, tight) and
      ``pure_dp_any_prior``;
    * ``rho``: ``zcdp_rest_known`` (Thm 7.4.1), ``zcdp_any_prior`` (Thm 7.4.2), ``gaussian_fdp_rest_known``
      (Thm 3 for the Gaussian mechanism with mu = sqrt(2 rho));
    * ``mechanism``: ``<name>_fdp_rest_known`` (Thm 3 with the mechanism's pbdp curve).

    In the ``any_prior`` columns the "prior" is the counterfactual posterior (what the attacker would believe from
    everyone else's data); with the rest known it is the prior.

    Raises:
        ParameterError: no guarantee given, or a value outside its range.

    Examples:
        >>> t = posterior_table([0.1], epsilon=1.0)
        >>> round(t.columns["pure_dp_rest_known"][0], 4)
        0.232
    """
    p = np.atleast_1d(_check_prior(priors, "priors")).ravel()
    fail = _check_delta_open(failure_probability)
    if rho is None and epsilon is None and mechanism is None:
        raise ParameterError("posterior_table needs rho, epsilon or mechanism; got none")
    cols: dict[str, tuple[float, ...]] = {}
    ratio: dict[str, float] = {}
    desc: dict[str, str] = {}
    notes: list[str] = []

    def ratio_col(name: str, eps: float, text: str) -> None:
        cols[name] = tuple(float(min(1.0, v * _exp(eps) * _UP)) if math.isfinite(eps) else 1.0 for v in p)
        ratio[name] = eps
        desc[name] = text

    if epsilon is not None:
        eps = _check_eps("epsilon", epsilon)
        cols["pure_dp_rest_known"] = tuple(pure_dp_posterior_bound(float(v), eps).upper for v in p)
        ratio["pure_dp_rest_known"] = eps
        desc["pure_dp_rest_known"] = "pure DP, rest known: odds x e^eps, every output (tight for randomized response)"
        cols["pure_dp_any_prior"] = tuple(pure_dp_posterior_bound(float(v), eps, rest_known=False).upper for v in p)
        ratio["pure_dp_any_prior"] = eps
        desc["pure_dp_any_prior"] = "pure DP, any prior (Sec. 7.3), every output"
    if rho is not None:
        rho = check_positive_finite("rho", rho)
        ratio_col("zcdp_rest_known", zcdp_posterior_epsilon(fail, rho, rest_known=True),
                  "rho-zCDP, rest known (Thm 7.4.1)")
        ratio_col("zcdp_any_prior", zcdp_posterior_epsilon(fail, rho, rest_known=False),
                  "rho-zCDP, arbitrary correct prior, true record (Thm 7.4.2)")
        ratio_col("gaussian_fdp_rest_known", float(pbdp_epsilon(GaussianPLD.from_rho(rho), fail)),
                  "Gaussian mechanism with this rho, f-DP, rest known (Thm 3 = pbdp curve)")
    if mechanism is not None:
        if not isinstance(mechanism, (PrivacyLossDistribution, GaussianPLD)):
            raise ParameterError(
                f"mechanism must be a PrivacyLossDistribution or GaussianPLD; got {type(mechanism).__name__}"
            )
        ratio_col(f"{mechanism_name}_fdp_rest_known", float(pbdp_epsilon(mechanism, fail)),
                  f"{mechanism_name}, f-DP, rest known (Thm 3 = pbdp curve)")
    if rho is not None or mechanism is not None:
        notes.append(f"non-pure columns hold with probability >= {1 - fail:g} over the output; " + WRONG_PRIOR_CAVEAT)
        notes.append("Markov-type bounds (Thms 7.4.1, 7.4.2) overstate the risk for small eps.")
    return PosteriorTable(priors=tuple(float(v) for v in p), failure_probability=0.0 if rho is None and
                          mechanism is None else fail, columns=cols, ratio_epsilon=ratio,
                          kind={k: Kind.BOUND for k in cols}, notes=tuple(notes), descriptions=desc)


# ---------------------------------------------------------------------------------------------------- seed 003
@dataclass(frozen=True, slots=True, kw_only=True)
class TotalVariationReading:
    """Statistical distance between the output distributions of neighbours, with why it is not enough.

    Attributes:
        total_variation: ``sup_S |P(M(D1) in S) - P(M(D2) in S)| = delta(0)``.
        kind: "exact" (from a PLD) or "bound" (from pure eps: ``tanh(eps/2)``, attained by randomized response).
        advantage: an attacker with prior 1/2 guesses the record correctly with probability at most
            ``(1 + tv)/2``.
        caveat: :data:`TV_CAVEAT`.
    """

    total_variation: float
    kind: str
    advantage: float
    caveat: str = TV_CAVEAT

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"total_variation": self.total_variation, "kind": self.kind, "advantage": self.advantage,
                "caveat": self.caveat}


def total_variation_reading(
    pld: PrivacyLossDistribution | GaussianPLD | None = None, *, epsilon: float | None = None
) -> TotalVariationReading:
    """Total variation (statistical distance) of a mechanism (exact, both directions) or of any eps-DP mechanism.

    ``TV = delta(0)`` (digest §1.5). Pure eps-DP gives ``TV <= (e^eps - 1)/(e^eps + 1) = tanh(eps/2)``, tighter
    than seed 003's ``1 - e^{-eps}``.

    Raises:
        ParameterError: neither or both of pld / epsilon given, or bad values.

    Examples:
        >>> round(total_variation_reading(epsilon=math.log(3)).total_variation, 6)
        0.5
    """
    if (pld is None) == (epsilon is None):
        raise ParameterError("give exactly one of pld or epsilon")
    if pld is not None:
        if isinstance(pld, GaussianPLD):
            tv, kind = float(pld.delta(0.0)), "exact"
        elif isinstance(pld, PrivacyLossDistribution):
            tv, kind = max(float(pld.delta(0.0)), float(pld.reverse().delta(0.0))), "exact"
        else:
            raise ParameterError(f"pld must be a PrivacyLossDistribution or GaussianPLD; got {type(pld).__name__}")
    else:
        eps = _check_eps("epsilon", epsilon)
        tv, kind = min(1.0, math.tanh(eps / 2.0) * _UP), "bound"
    return TotalVariationReading(total_variation=tv, kind=kind, advantage=min(1.0, (1.0 + tv) / 2.0))


@dataclass(frozen=True, slots=True, kw_only=True)
class PriorToPosteriorReading:
    """Prior-to-posterior band under pure eps-DP, valid only under the stated assumption.

    Attributes:
        prior: the prior probability of the record.
        lower / upper: band on the posterior (odds within ``e^{+-eps}``).
        assumption: when it holds.
        kind: "bound".
        caveat: :data:`PRIOR_TO_POSTERIOR_CAVEAT`.
    """

    prior: float
    lower: float
    upper: float
    assumption: str
    kind: str = "bound"
    caveat: str = PRIOR_TO_POSTERIOR_CAVEAT

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"prior": self.prior, "lower": self.lower, "upper": self.upper, "assumption": self.assumption,
                "kind": self.kind, "caveat": self.caveat}


def prior_to_posterior_reading(prior: float, epsilon: float) -> PriorToPosteriorReading:
    """Seed 003's Bayesian reading (§2.2): the posterior stays close to the prior — when records are independent.

    If, in the attacker's prior, the target's record is independent of the others (in particular when the
    attacker knows them), each likelihood ``P(w | r)`` is an average of ``P(M(D^- ∪ {r}) = w)`` over the same
    ``D^-``, so likelihood ratios stay within ``e^{+-eps}`` and the posterior odds within ``e^{+-eps}`` of the prior
    odds. Seed 003's Theorem 1 states ``e^{2 eps}`` (and then ``<= 1 + 2 eps``, which has the inequality the wrong
    way round); the odds band here is tighter and correct. Without independence no bound exists
    (:func:`correlated_prior_shift`).

    Raises:
        ParameterError: prior outside (0, 1), eps negative or not finite.
    """
    b = pure_dp_posterior_bound(prior, epsilon, rest_known=True)
    return PriorToPosteriorReading(
        prior=b.prior, lower=b.lower, upper=b.upper,
        assumption="the target's record is independent of the other records under the attacker's prior",
    )


def correlated_prior_shift(prior: float, epsilon: float, n: int) -> PriorToPosteriorReading:
    """Why prior-to-posterior cannot be bounded: a correlated prior and an eps-DP count (exact computation).

    The attacker believes all ``n`` people (the target included) answer alike: all 1 with probability ``prior``,
    all 0 otherwise. The eps-DP two-sided geometric mechanism releases the count; it outputs ``n`` (its most
    likely value when everyone answers 1). Likelihood ratio ``P(w=n | count n)/P(w=n | count 0) = e^{eps n}``, so
    the posterior that the target answered 1 is ``prior e^{eps n} / (prior e^{eps n} + 1 - prior)`` — it tends to 1
    as n grows, for any eps, and the same happens if the target's own record is left out. The returned band is
    degenerate at that posterior (``kind = "exact"``) to contrast with the independent-record band.

    Raises:
        ParameterError: prior outside (0, 1), eps <= 0 or not finite, n < 1.
    """
    p = float(_check_prior(prior))
    eps = check_positive_finite("epsilon", epsilon)
    n = check_int("n", n, minimum=1)
    post = float(_odds_up(np.asarray(p), eps * n))
    return PriorToPosteriorReading(prior=p, lower=post, upper=post, kind="exact",
                                   assumption=f"correlated prior: all {n} records equal")
