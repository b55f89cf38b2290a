"""scripts/lowest_pins.py: the pins of the lowest-dependencies check (make test-lowest) read pyproject's bounds."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from tests.oracles.scripts import load_script

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@pytest.fixture(scope="module")
def pins():
    return load_script("lowest_pins")


@pytest.mark.parametrize("requirement, pin", [
    ("numpy>=2.0", "numpy==2.0"),
    ("scipy >= 1.13", "scipy==1.13"),
    ("duckdb>=1.5,<1.6", "duckdb==1.5"),
    ("pyspark<5,>=4.3", "pyspark==4.3"),
    ("psycopg[binary]>=3.1", "psycopg[binary]==3.1"),
    ("ruff==0.17.6", "ruff==0.17.6"),
    ("x>=1; sys_platform == 'linux'", "x==1; sys_platform == 'linux'"),
])
def test_lowest_pin_of_one_requirement(pins, requirement: str, pin: str) -> None:
    assert pins.lowest_pin(requirement) == pin


@pytest.mark.parametrize("requirement", ["numpy", "numpy<3", "numpy>1.0", "numpy>=1,>=2"])
def test_a_requirement_without_one_lower_bound_is_refused(pins, requirement: str) -> None:
    with pytest.raises(ValueError, match="needs exactly one"):
        pins.lowest_pin(requirement)


def test_pins_of_this_pyproject(pins) -> None:
    """Every runtime dependency is pinned at its declared bound; an extra adds its own, not this package."""
    with PYPROJECT.open("rb") as f:
        project = tomllib.load(f)
    declared = project["project"]["dependencies"]
    got = pins.lowest_pins(project, [])
    assert [p.split("==")[0] for p in got] == [d.split(">=")[0].strip() for d in declared]
    assert all(p.split("==")[1] == d.split(">=")[1].split(",")[0].strip() for p, d in zip(got, declared))
    with_pandas = pins.lowest_pins(project, ["pandas"])
    assert with_pandas[:len(got)] == got and [p.split("==")[0] for p in with_pandas[len(got):]] == ["pandas"]
    assert not any(p.startswith("sufficientdp") for p in pins.lowest_pins(project, ["all"]))
    with pytest.raises(ValueError, match="extra must be one of"):
        pins.lowest_pins(project, ["nope"])
