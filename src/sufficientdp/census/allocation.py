"""The 2020 Census noise module: privacy-loss budget allocation of the TopDown Algorithm, as exact fractions.

Stage 1 of TopDown answers every (query, geographic unit) and adds independent discrete-Gaussian noise to each
cell. A query at a geographic level gets the zCDP parameter

* person query: ``rho* = 2.56 x (Table 4 person proportion of the level) x (Table 5 proportion of the query)``;
* housing query (OCCUPANCY STATUS, 2 cells): ``rho* = 0.07 x (Table 4 housing proportion of the level)``;

and each of its cells gets discrete-Gaussian noise of variance parameter ``sigma^2 = 1/rho*``
(``f(k) ∝ exp(-k^2 / (2 sigma^2))``). Under bounded neighbours one record moves between two cells of a histogram
query, so the squared L2 sensitivity is 2 and the query is ``Δ^2/(2 sigma^2) = rho*``-zCDP (Canonne, Kamath &
Steinke 2020). The continuous-Gaussian proxy with sensitivity 1 has ``sigma^2 = 1/(2 rho*)`` and ``mu = sqrt(2 rho*)``.

For one block, summing ``rho*`` over every query in the block and in its custom block group, tract, county, state
and the nation gives the total ``rho = 2.56 + 0.07 = 2.63`` (the same for every block). Invariants (state
populations, housing-unit counts, occupied group-quarters facilities) are outside this accounting.

References:
    papers/004_47af1ee980af8d2f.txt §8.1, Tables 3, 4 and 5 (reproduced there from the Census
    Bureau's production settings); census-semantics-digest.md §5.1 and §1.13.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from .._errors import ParameterError

__all__ = [
    "ATTRIBUTES",
    "GEO_LEVELS",
    "HOUSING_QUERIES",
    "PERSON_QUERIES",
    "PRODUCTION_2020",
    "Allocation",
    "CensusQuery",
    "QueryRho",
]

#: Geographic levels of the TopDown hierarchy, top to bottom (004 Table 4). ``CBG`` = custom block group.
GEO_LEVELS: tuple[str, ...] = ("US", "STATE", "COUNTY", "TRACT", "CBG", "BLOCK")

#: Attributes named by the queries (persons: 004 §8.1 list; housing: OCCUPANCY).
ATTRIBUTES: tuple[str, ...] = ("CENRACE", "HHGQ", "HHINSTLEVELS", "HISPANIC", "OCCUPANCY", "VOTINGAGE")

_UNIVERSES = ("person", "housing")


@dataclass(frozen=True, slots=True, kw_only=True)
class CensusQuery:
    """One query type of the noise module: a histogram over the cross-product of ``attributes``.

    Attributes:
        name: the paper's name, e.g. ``"VOTINGAGE x CENRACE"``.
        attributes: the attributes crossed (empty for TOTAL).
        cells: number of histogram cells (004 Table 5).
        universe: ``"person"`` or ``"housing"``.
    """

    name: str
    attributes: frozenset[str]
    cells: int
    universe: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ParameterError(f"name must be a non-empty string; got {self.name!r}")
        attrs = frozenset(self.attributes)
        unknown = sorted(attrs - set(ATTRIBUTES))
        if unknown:
            raise ParameterError(f"attributes must be among {list(ATTRIBUTES)}; got {unknown!r}")
        object.__setattr__(self, "attributes", attrs)
        if isinstance(self.cells, bool) or not isinstance(self.cells, int) or self.cells < 1:
            raise ParameterError(f"cells must be an integer >= 1; got {self.cells!r}")
        if self.universe not in _UNIVERSES:
            raise ParameterError(f"universe must be one of {list(_UNIVERSES)}; got {self.universe!r}")

    def involves(self, attributes: Iterable[str]) -> bool:
        """Whether the query crosses any of ``attributes``."""
        return bool(self.attributes & frozenset(attributes))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"name": self.name, "attributes": sorted(self.attributes), "cells": self.cells,
                "universe": self.universe}


def _q(name: str, cells: int, universe: str = "person") -> CensusQuery:
    attrs = frozenset() if name == "TOTAL" else frozenset(a.strip() for a in name.split(" x "))
    if name == "OCCUPANCY STATUS":
        attrs = frozenset({"OCCUPANCY"})
    return CensusQuery(name=name, attributes=attrs, cells=cells, universe=universe)


#: Person queries in the order of 004 Table 5 (cell counts from the same table).
PERSON_QUERIES: tuple[CensusQuery, ...] = (
    _q("TOTAL", 1),
    _q("CENRACE", 63),
    _q("HISPANIC", 2),
    _q("VOTINGAGE", 2),
    _q("HHINSTLEVELS", 3),
    _q("HHGQ", 8),
    _q("HISPANIC x CENRACE", 126),
    _q("VOTINGAGE x CENRACE", 126),
    _q("VOTINGAGE x HISPANIC", 4),
    _q("VOTINGAGE x HISPANIC x CENRACE", 252),
    _q("HHGQ x VOTINGAGE x HISPANIC x CENRACE", 2016),
)

#: Housing-unit queries (004 §8.1: OCCUPANCY STATUS, occupied / unoccupied).
HOUSING_QUERIES: tuple[CensusQuery, ...] = (_q("OCCUPANCY STATUS", 2, "housing"),)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryRho:
    """The budget of one (query, geographic level) measurement.

    Attributes:
        query: the query.
        level: geographic level (one of :data:`GEO_LEVELS`).
        rho_star: its zCDP parameter, exact.
    """

    query: CensusQuery
    level: str
    rho_star: Fraction

    @property
    def measured(self) -> bool:
        """``False`` when ``rho* = 0`` (no noisy measurement is taken, e.g. TOTAL at the US level)."""
        return self.rho_star > 0

    @property
    def rho(self) -> float:
        """``rho*`` as a float (correctly rounded)."""
        return float(self.rho_star)

    @property
    def sigma2(self) -> float:
        """Discrete-Gaussian variance parameter per cell, ``sigma^2 = 1/rho*`` (004 §8.1); ``inf`` if unmeasured."""
        return float(1 / self.rho_star) if self.measured else math.inf

    @property
    def gaussian_sigma2(self) -> float:
        """Variance of the sensitivity-1 continuous-Gaussian proxy, ``1/(2 rho*)`` (004 §8.3; digest §1.9)."""
        return float(1 / (2 * self.rho_star)) if self.measured else math.inf

    @property
    def mu(self) -> float:
        """GDP parameter of the continuous-Gaussian proxy, ``sqrt(2 rho*)``."""
        return math.sqrt(2 * self.rho_star)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``rho_star_exact`` as ``"p/q"``; non-finite values become ``None``)."""
        return {
            "query": self.query.name,
            "universe": self.query.universe,
            "level": self.level,
            "cells": self.query.cells,
            "rho_star_exact": str(self.rho_star),
            "rho_star": self.rho,
            "sigma2": self.sigma2 if self.measured else None,
            "gaussian_sigma2": self.gaussian_sigma2 if self.measured else None,
            "mu": self.mu,
            "kind": "exact",
        }


def _frozen_levels(name: str, table: Mapping[str, Any]) -> Mapping[str, Fraction]:
    if not isinstance(table, Mapping) or set(table) != set(GEO_LEVELS):
        got = sorted(table) if isinstance(table, Mapping) else table
        raise ParameterError(f"{name} must map exactly the levels {list(GEO_LEVELS)}; got {got!r}")
    out: dict[str, Fraction] = {}
    for level in GEO_LEVELS:
        value = table[level]
        if isinstance(value, bool) or not isinstance(value, (int, Fraction, str)):
            raise ParameterError(f"{name}[{level!r}] must be an exact fraction (int, Fraction or 'p/q'); "
                                 f"got {value!r}")
        try:
            frac = Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise ParameterError(f"{name}[{level!r}] must be a fraction in [0, 1]; got {value!r}") from None
        if not 0 <= frac <= 1:
            raise ParameterError(f"{name}[{level!r}] must be in [0, 1]; got {value!r}")
        out[level] = frac
    total = sum(out.values(), Fraction(0))
    if total != 1:
        raise ParameterError(f"{name} proportions must sum to exactly 1; got {total}")
    return MappingProxyType(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class Allocation:
    """A zCDP budget allocation of the TopDown noise module (004 Tables 3–5), in exact arithmetic.

    Validation: base budgets are positive; every level's person and housing proportions (Table 4) and every
    level's per-query proportions (a column of Table 5) lie in [0, 1] and sum to exactly 1.

    Attributes:
        person_rho: base budget for person characteristics (Table 3: 2.56).
        housing_rho: base budget for housing-unit characteristics (Table 3: 0.07).
        person_levels: Table 4 person column, level -> proportion.
        housing_levels: Table 4 housing column, level -> proportion.
        query_proportions: Table 5, person-query name -> (level -> proportion).
        person_queries: the person queries (names must match ``query_proportions``).
        housing_queries: housing queries; the level's housing budget is split equally among them.
        source: where the numbers come from.

    Examples:
        >>> a = PRODUCTION_2020
        >>> a.rho_star("VOTINGAGE x CENRACE", "STATE")   # 2.56 x 1440/4099 x 12/4097 (004 §8.1: ~0.0026)
        Fraction(221184, 83968015)
        >>> a.total_rho
        Fraction(263, 100)
    """

    person_rho: Fraction
    housing_rho: Fraction
    person_levels: Mapping[str, Fraction]
    housing_levels: Mapping[str, Fraction]
    query_proportions: Mapping[str, Mapping[str, Fraction]]
    person_queries: tuple[CensusQuery, ...] = PERSON_QUERIES
    housing_queries: tuple[CensusQuery, ...] = HOUSING_QUERIES
    source: str = "custom"

    def __post_init__(self) -> None:
        for name in ("person_rho", "housing_rho"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, Fraction, str)):
                raise ParameterError(f"{name} must be an exact positive number (int, Fraction or 'p/q'); "
                                     f"got {value!r}")
            try:
                frac = Fraction(value)
            except (ValueError, ZeroDivisionError):
                raise ParameterError(f"{name} must be a positive fraction; got {value!r}") from None
            if frac <= 0:
                raise ParameterError(f"{name} must be > 0; got {value!r}")
            object.__setattr__(self, name, frac)
        object.__setattr__(self, "person_levels", _frozen_levels("person_levels", self.person_levels))
        object.__setattr__(self, "housing_levels", _frozen_levels("housing_levels", self.housing_levels))
        for name, queries, universe in (("person_queries", self.person_queries, "person"),
                                        ("housing_queries", self.housing_queries, "housing")):
            qs = tuple(queries)
            if not qs or not all(isinstance(q, CensusQuery) and q.universe == universe for q in qs):
                raise ParameterError(f"{name} must be a non-empty sequence of {universe} CensusQuery objects")
            if len({q.name for q in qs}) != len(qs):
                raise ParameterError(f"{name} must have distinct names; got {[q.name for q in qs]}")
            object.__setattr__(self, name, qs)
        props = self.query_proportions
        names = [q.name for q in self.person_queries]
        if not isinstance(props, Mapping) or set(props) != set(names):
            got = sorted(props) if isinstance(props, Mapping) else props
            raise ParameterError(f"query_proportions must have exactly the person queries {names}; got {got!r}")
        rows = {n: _row(n, props[n]) for n in names}
        for level in GEO_LEVELS:
            column = sum((rows[n][level] for n in names), Fraction(0))
            if column != 1:
                raise ParameterError(f"query_proportions at level {level!r} must sum to exactly 1; got {column}")
        object.__setattr__(self, "query_proportions",
                           MappingProxyType({n: MappingProxyType(rows[n]) for n in names}))
        object.__setattr__(self, "source", str(self.source))

    # ------------------------------------------------------------------ lookups
    def query(self, name: str) -> CensusQuery:
        """The query called ``name`` (person or housing)."""
        for q in self.person_queries + self.housing_queries:
            if q.name == name:
                return q
        valid = [q.name for q in self.person_queries + self.housing_queries]
        raise ParameterError(f"query must be one of {valid}; got {name!r}")

    def rho_star(self, query: str, level: str) -> Fraction:
        """Exact ``rho*`` of ``query`` at geographic ``level`` (004 §8.1 rule; see module docstring)."""
        q = self.query(query)
        if level not in GEO_LEVELS:
            raise ParameterError(f"level must be one of {list(GEO_LEVELS)}; got {level!r}")
        if q.universe == "person":
            return self.person_rho * self.person_levels[level] * self.query_proportions[q.name][level]
        return self.housing_rho * self.housing_levels[level] / len(self.housing_queries)

    def measurements(self) -> tuple[QueryRho, ...]:
        """Every (query, level) with its ``rho*``: person queries in Table 5 order, then housing; levels top-down."""
        return tuple(QueryRho(query=q, level=level, rho_star=self.rho_star(q.name, level))
                     for q in self.person_queries + self.housing_queries for level in GEO_LEVELS)

    @property
    def person_total(self) -> Fraction:
        """Sum of person ``rho*`` along one block's chain of geographic units (= ``person_rho``)."""
        return sum((m.rho_star for m in self.measurements() if m.query.universe == "person"), Fraction(0))

    @property
    def housing_total(self) -> Fraction:
        """Sum of housing ``rho*`` along one block's chain of geographic units (= ``housing_rho``)."""
        return sum((m.rho_star for m in self.measurements() if m.query.universe == "housing"), Fraction(0))

    @property
    def total_rho(self) -> Fraction:
        """Overall zCDP ``rho``: the per-block sum over all levels (004 §8.1; 2.56 + 0.07 = 2.63, exact)."""
        return self.person_total + self.housing_total

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: base budgets, both tables as ``"p/q"`` strings, and every measurement."""
        return {
            "source": self.source,
            "person_rho": str(self.person_rho),
            "housing_rho": str(self.housing_rho),
            "total_rho_exact": str(self.total_rho),
            "total_rho": float(self.total_rho),
            "kind": "exact",
            "person_levels": {k: str(v) for k, v in self.person_levels.items()},
            "housing_levels": {k: str(v) for k, v in self.housing_levels.items()},
            "query_proportions": {n: {k: str(v) for k, v in row.items()}
                                  for n, row in self.query_proportions.items()},
            "measurements": [m.to_dict() for m in self.measurements()],
        }


def _row(name: str, row: Any) -> dict[str, Fraction]:
    if not isinstance(row, Mapping) or set(row) != set(GEO_LEVELS):
        got = sorted(row) if isinstance(row, Mapping) else row
        raise ParameterError(f"query_proportions[{name!r}] must map exactly {list(GEO_LEVELS)}; got {got!r}")
    out: dict[str, Fraction] = {}
    for level in GEO_LEVELS:
        value = row[level]
        if isinstance(value, bool) or not isinstance(value, (int, Fraction, str)):
            raise ParameterError(f"query_proportions[{name!r}][{level!r}] must be an exact fraction; got {value!r}")
        try:
            frac = Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise ParameterError(f"query_proportions[{name!r}][{level!r}] must be a fraction in [0, 1]; "
                                 f"got {value!r}") from None
        if not 0 <= frac <= 1:
            raise ParameterError(f"query_proportions[{name!r}][{level!r}] must be in [0, 1]; got {value!r}")
        out[level] = frac
    return out


def _levels(*values: str | int) -> dict[str, Fraction]:
    return {level: Fraction(v) for level, v in zip(GEO_LEVELS, values, strict=True)}


#: 2020 redistricting-data production settings: 004 Table 3 (base rho), Table 4 (levels), Table 5 (queries).
PRODUCTION_2020 = Allocation(
    person_rho=Fraction("2.56"),  # 004 Table 3
    housing_rho=Fraction("0.07"),  # 004 Table 3
    # 004 Table 4, "Person rho Proportions"; order US, State, County, Tract, CBG, Block.
    person_levels=_levels("104/4099", "1440/4099", "447/4099", "687/4099", "1256/4099", "165/4099"),
    # 004 Table 4, "Housing Units rho Proportions".
    housing_levels=_levels("1/205", "1/205", "7/82", "364/1025", "1759/4100", "99/820"),
    # 004 Table 5, rows as printed; columns US, State, County, Tract, CBG, Block.
    query_proportions={
        "TOTAL": _levels(0, "3773/4097", "3126/4097", "1567/4102", "1705/4099", "5/4097"),
        "CENRACE": _levels("52/4097", "6/4097", "10/4097", "4/2051", "3/4099", "9/4097"),
        "HISPANIC": _levels("26/4097", "6/4097", "10/4097", "5/4102", "3/4099", "5/4097"),
        "VOTINGAGE": _levels("26/4097", "6/4097", "10/4097", "5/4102", "3/4099", "5/4097"),
        "HHINSTLEVELS": _levels("26/4097", "6/4097", "10/4097", "5/4102", "3/4099", "5/4097"),
        "HHGQ": _levels("26/4097", "6/4097", "10/4097", "5/4102", "3/4099", "5/4097"),
        "HISPANIC x CENRACE": _levels("130/4097", "12/4097", "28/4097", "1933/4102", "1055/4099", "21/4097"),
        "VOTINGAGE x CENRACE": _levels("130/4097", "12/4097", "28/4097", "10/2051", "9/4099", "21/4097"),
        "VOTINGAGE x HISPANIC": _levels("26/4097", "6/4097", "10/4097", "5/4102", "3/4099", "5/4097"),
        "VOTINGAGE x HISPANIC x CENRACE": _levels("26/241", "2/241", "101/4097", "67/4102", "24/4099", "71/4097"),
        "HHGQ x VOTINGAGE x HISPANIC x CENRACE": _levels("189/241", "230/4097", "754/4097", "241/2051",
                                                         "1288/4099", "3945/4097"),
    },
    source="004 (Kifer et al. 2022) Tables 3-5: 2020 redistricting production settings",
)
