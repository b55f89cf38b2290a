"""Print ``name==version`` pins at the lowest version pyproject.toml declares for each direct dependency.

The lowest-dependencies check (``make test-lowest``, issue 11) installs these pins into a separate venv and runs the
core tests there, so a lower bound the code does not actually support fails CI instead of a user's install.

    python scripts/lowest_pins.py                 # [project] dependencies (numpy, scipy)
    python scripts/lowest_pins.py --extra crypto  # plus the `crypto` extra's direct dependencies

Every requirement must carry a ``>=`` lower bound (or an ``==`` pin); one without is an error, since there would be
nothing to pin. Environment markers are kept, so a pin for another platform is skipped by pip as usual.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

_REQ = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<extras>\[[^\]]*\])?\s*(?P<spec>[^;]*?)\s*"
                  r"(?:;\s*(?P<marker>.*))?$")


def lowest_pin(requirement: str) -> str:
    """``"numpy>=2.0"`` -> ``"numpy==2.0"``; the ``>=`` (or ``==``) version of one PEP 508 requirement string."""
    match = _REQ.match(requirement)
    if match is None:
        raise ValueError(f"cannot parse requirement {requirement!r}")
    name, extras, marker = match["name"], match["extras"] or "", match["marker"]
    clauses = [c.strip() for c in match["spec"].split(",") if c.strip()]
    lows = [c[2:].strip() for c in clauses if c.startswith((">=", "=="))]
    if len(lows) != 1:
        raise ValueError(f"requirement {requirement!r} needs exactly one '>=' or '==' bound to pin its lowest version")
    pin = f"{name}{extras}=={lows[0]}"
    return f"{pin}; {marker}" if marker else pin


def lowest_pins(pyproject: dict, extras: list[str]) -> list[str]:
    """Pins for ``[project] dependencies`` and the named extras (extras naming this package are skipped)."""
    project = pyproject["project"]
    requirements = list(project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    for extra in extras:
        if extra not in optional:
            raise ValueError(f"extra must be one of {', '.join(sorted(optional))}; got {extra!r}")
        requirements += [r for r in optional[extra] if _REQ.match(r) and _REQ.match(r)["name"] != project["name"]]
    return [lowest_pin(r) for r in requirements]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyproject", type=Path, default=Path(__file__).resolve().parent.parent / "pyproject.toml")
    parser.add_argument("--extra", action="append", default=[], help="also pin this extra's direct dependencies")
    args = parser.parse_args(argv)
    with args.pyproject.open("rb") as f:
        pins = lowest_pins(tomllib.load(f), args.extra)
    sys.stdout.write("".join(p + "\n" for p in pins))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
