"""Accounting: privacy-loss distributions, reference mechanisms and conversions between DP variants.

The privacy-loss distribution type itself is :class:`sufficientdp.loss.PrivacyLossDistribution` (re-exported
here); this package builds them for mechanisms and converts between DP variants. See
papers/census-semantics-digest.md §1 (definitions and conversions) and §2 (mechanisms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

# The public names load their modules on first use (PEP 562), so that a command needing one mechanism does not
# import every accounting module (scipy.stats, scipy.optimize: about 0.5 s; issue 10). ``from
# sufficientdp.accounting import gaussian`` and ``sufficientdp.accounting.conversions`` work as before.
_LAZY = {
    "MAX_COMPOSE_ATOMS": "..loss.distribution", "MERGE_TOL": "..loss.distribution",
    "PrivacyLossDistribution": "..loss.distribution",
    "RDP_CONVERSION_METHODS": ".conversions", "RdpConversion": ".conversions",
    "ZCDP_CONVERSION_METHODS": ".conversions",
    "gdp_mu_from_tradeoff": ".conversions", "gdp_tradeoff": ".conversions", "max_power": ".conversions",
    "pure_to_zcdp": ".conversions", "rdp_to_approx_dp": ".conversions", "rdp_to_delta": ".conversions",
    "zcdp_tail_bound": ".conversions", "zcdp_tail_epsilon": ".conversions", "zcdp_to_approx_dp": ".conversions",
    "zcdp_to_delta": ".conversions",
    "DiscreteGaussian": ".discrete_gaussian", "NormalizerBracket": ".discrete_gaussian",
    "discrete_gaussian_log_normalizer": ".discrete_gaussian", "sample_bernoulli_exp": ".discrete_gaussian",
    "sample_discrete_gaussian": ".discrete_gaussian", "sample_discrete_laplace": ".discrete_gaussian",
    "GaussianPLD": ".mechanisms", "binary_randomized_response": ".mechanisms",
    "bit_vector_randomized_response": ".mechanisms", "gaussian": ".mechanisms", "geometric": ".mechanisms",
    "k_randomized_response": ".mechanisms",
    "MemoGuarantee": ".memoization", "composed_flip": ".memoization", "memoized_guarantee": ".memoization",
    "EtaDeltaTable": ".pbdp", "PbdpCurve": ".pbdp", "compare_eta_delta": ".pbdp", "pbdp_curve": ".pbdp",
    "pbdp_delta": ".pbdp", "pbdp_epsilon": ".pbdp", "pbdp_holds": ".pbdp", "postprocessed_tail": ".pbdp",
    "MAX_ROUNDS": ".rounds", "MAX_TOTAL_REPORTS": ".rounds", "homogeneous_rounds_tail": ".rounds",
    "rounds_tail": ".rounds",
    "SUBSAMPLING_DIRECTIONS": ".sampling", "poisson_subsample": ".sampling",
    "ShuffledRRProfile": ".shuffled", "homogeneous_histogram_pld": ".shuffled", "shuffled_rr_pld": ".shuffled",
    "shuffled_rr_profile": ".shuffled", "shuffled_rr_worst_profile": ".shuffled",
}
#: The submodules the eager package imported (so they were attributes of it): still reachable as attributes.
_SUBMODULES = frozenset({"amplification", "conversions", "discrete_gaussian", "mechanisms", "memoization", "pbdp",
                         "rounds", "sampling", "shuffled"})
_HELPERS = frozenset({"TYPE_CHECKING", "lazy_getattr", "annotations", "_LAZY", "_SUBMODULES", "_HELPERS", "__getattr__",
                      "__dir__"})


__getattr__ = lazy_getattr(__name__, _LAZY, _SUBMODULES)


def __dir__() -> list[str]:
    """The names the eager package had: its public names, its submodules and the module attributes."""
    return sorted((set(globals()) - _HELPERS) | set(_LAZY) | _SUBMODULES)


if TYPE_CHECKING:  # for type checkers and IDEs: the eager imports
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
