"""Print seed 004's Tables 1, 2 and 6 (Kifer et al., 2020 Census semantics) as computed, beside the paper.

The section is built by :mod:`sufficientdp.report.census_tables` (it also closes ``docs/reproduction.md``).

Usage::

    python scripts/census_tables.py            # prints the markdown section
"""

from __future__ import annotations

from sufficientdp.report.census_tables import section

if __name__ == "__main__":
    print(section())
