"""Semantics of the privacy guarantees: what an attacker can and cannot do (frequentist and Bayesian readings).

* :mod:`.frequentist` — maximal power of a test at a given level (Thms 6.1–6.3, §6.4, f-DP).
* :mod:`.bayesian` — posterior-to-posterior bounds (§7), the total-variation and prior-to-posterior readings.

References:
    papers/census-semantics-digest.md §3 (Sec. 6) and §4 (Sec. 7);
    papers/003_94afa14f96cb68a4.txt (statistical distance, Bayesian reading, differencing).
"""

from .bayesian import (
    PosteriorBound,
    PosteriorTable,
    PriorToPosteriorReading,
    TotalVariationReading,
    correlated_prior_shift,
    fdp_posterior_delta,
    posterior_table,
    prior_to_posterior_reading,
    pure_dp_posterior_bound,
    rdp_posterior_delta,
    total_variation_reading,
    zcdp_posterior_delta,
    zcdp_posterior_epsilon,
)
from .frequentist import (
    PowerTable,
    approx_dp_power_bound,
    fdp_power,
    power_table,
    pure_dp_power_bound,
    rdp_power_bound,
    zcdp_power_bound,
)

__all__ = [
    "PosteriorBound",
    "PosteriorTable",
    "PowerTable",
    "PriorToPosteriorReading",
    "TotalVariationReading",
    "approx_dp_power_bound",
    "correlated_prior_shift",
    "fdp_posterior_delta",
    "fdp_power",
    "posterior_table",
    "power_table",
    "prior_to_posterior_reading",
    "pure_dp_posterior_bound",
    "pure_dp_power_bound",
    "rdp_posterior_delta",
    "rdp_power_bound",
    "total_variation_reading",
    "zcdp_posterior_delta",
    "zcdp_posterior_epsilon",
    "zcdp_power_bound",
]
