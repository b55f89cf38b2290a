"""The 2020 Census noise module (seed 004, Kifer et al.): budget allocation, attacker scenarios, semantics.

See papers/census-semantics-digest.md §5 and 004_47af1ee980af8d2f.txt §8.
"""

from .allocation import (
    ATTRIBUTES,
    GEO_LEVELS,
    HOUSING_QUERIES,
    PERSON_QUERIES,
    PRODUCTION_2020,
    Allocation,
    CensusQuery,
    QueryRho,
)
from .scenarios import (
    PAPER_LEVELS,
    SCENARIOS,
    DgmPower,
    PosteriorRow,
    PowerRow,
    Scenario,
    ScenarioReport,
    analyze_scenario,
    custom_scenario,
    dgm_power,
    gaussian_power,
    get_scenario,
    posterior_bounds,
)

__all__ = [
    "ATTRIBUTES",
    "GEO_LEVELS",
    "HOUSING_QUERIES",
    "PAPER_LEVELS",
    "PERSON_QUERIES",
    "PRODUCTION_2020",
    "SCENARIOS",
    "Allocation",
    "CensusQuery",
    "DgmPower",
    "PosteriorRow",
    "PowerRow",
    "QueryRho",
    "Scenario",
    "ScenarioReport",
    "analyze_scenario",
    "custom_scenario",
    "dgm_power",
    "gaussian_power",
    "get_scenario",
    "posterior_bounds",
]
