"""Accounting: privacy-loss distributions, reference mechanisms and conversions between DP variants.

The privacy-loss distribution type itself is :class:`sufficientdp.loss.PrivacyLossDistribution` (re-exported
here); this package builds them for mechanisms and converts between DP variants. See
papers/census-semantics-digest.md §1 (definitions and conversions) and §2 (mechanisms).
"""

from ..loss.distribution import MAX_COMPOSE_ATOMS, MERGE_TOL, PrivacyLossDistribution
from .conversions import (
    RDP_CONVERSION_METHODS,
    ZCDP_CONVERSION_METHODS,
    RdpConversion,
    gdp_mu_from_tradeoff,
    gdp_tradeoff,
    max_power,
    pure_to_zcdp,
    rdp_to_approx_dp,
    rdp_to_delta,
    zcdp_tail_bound,
    zcdp_tail_epsilon,
    zcdp_to_approx_dp,
    zcdp_to_delta,
)
from .discrete_gaussian import (
    DiscreteGaussian,
    NormalizerBracket,
    discrete_gaussian_log_normalizer,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from .mechanisms import (
    GaussianPLD,
    binary_randomized_response,
    bit_vector_randomized_response,
    gaussian,
    geometric,
    k_randomized_response,
)
from .memoization import MemoGuarantee, composed_flip, memoized_guarantee
from .pbdp import (
    EtaDeltaTable,
    PbdpCurve,
    compare_eta_delta,
    pbdp_curve,
    pbdp_delta,
    pbdp_epsilon,
    pbdp_holds,
    postprocessed_tail,
)
from .rounds import MAX_ROUNDS, MAX_TOTAL_REPORTS, homogeneous_rounds_tail, rounds_tail
from .sampling import SUBSAMPLING_DIRECTIONS, poisson_subsample
from .shuffled import (
    ShuffledRRProfile,
    homogeneous_histogram_pld,
    shuffled_rr_pld,
    shuffled_rr_profile,
    shuffled_rr_worst_profile,
)

__all__ = [
    "DiscreteGaussian",
    "EtaDeltaTable",
    "GaussianPLD",
    "MAX_COMPOSE_ATOMS",
    "MAX_ROUNDS",
    "MAX_TOTAL_REPORTS",
    "MERGE_TOL",
    "MemoGuarantee",
    "NormalizerBracket",
    "PbdpCurve",
    "PrivacyLossDistribution",
    "RDP_CONVERSION_METHODS",
    "RdpConversion",
    "SUBSAMPLING_DIRECTIONS",
    "ShuffledRRProfile",
    "ZCDP_CONVERSION_METHODS",
    "binary_randomized_response",
    "bit_vector_randomized_response",
    "compare_eta_delta",
    "composed_flip",
    "discrete_gaussian_log_normalizer",
    "gaussian",
    "gdp_mu_from_tradeoff",
    "gdp_tradeoff",
    "geometric",
    "homogeneous_histogram_pld",
    "homogeneous_rounds_tail",
    "k_randomized_response",
    "max_power",
    "memoized_guarantee",
    "pbdp_curve",
    "pbdp_delta",
    "pbdp_epsilon",
    "pbdp_holds",
    "poisson_subsample",
    "postprocessed_tail",
    "pure_to_zcdp",
    "rdp_to_approx_dp",
    "rdp_to_delta",
    "rounds_tail",
    "sample_bernoulli_exp",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
    "shuffled_rr_pld",
    "shuffled_rr_profile",
    "shuffled_rr_worst_profile",
    "zcdp_tail_bound",
    "zcdp_tail_epsilon",
    "zcdp_to_approx_dp",
    "zcdp_to_delta",
]
