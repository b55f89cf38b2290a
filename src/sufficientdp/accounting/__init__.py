"""Accounting: privacy-loss distributions, reference mechanisms and conversions between DP variants.

See /work/shared/papers/census-semantics-digest.md §1 (definitions and conversions) and §2 (mechanisms).
"""

from .conversions import (
    RdpConversion,
    gdp_mu_from_tradeoff,
    gdp_tradeoff,
    max_power,
    pure_to_zcdp,
    rdp_to_approx_dp,
    zcdp_tail_bound,
    zcdp_to_approx_dp,
)
from .mechanisms import (
    GaussianPLD,
    binary_randomized_response,
    bit_vector_randomized_response,
    gaussian,
    geometric,
    k_randomized_response,
)
from .pld import MAX_COMPOSE_ATOMS, MERGE_TOL, PrivacyLossDistribution

__all__ = [
    "MAX_COMPOSE_ATOMS",
    "MERGE_TOL",
    "GaussianPLD",
    "PrivacyLossDistribution",
    "RdpConversion",
    "binary_randomized_response",
    "bit_vector_randomized_response",
    "gaussian",
    "gdp_mu_from_tradeoff",
    "gdp_tradeoff",
    "geometric",
    "k_randomized_response",
    "max_power",
    "pure_to_zcdp",
    "rdp_to_approx_dp",
    "zcdp_tail_bound",
    "zcdp_to_approx_dp",
]
