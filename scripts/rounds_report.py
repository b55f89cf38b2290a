"""Tables for docs/rounds.md: the total eta over T rounds, and the q per round for a total target.

The tables are made by :mod:`sufficientdp.report.rounds`; this script prints them (Markdown, a few minutes).

Usage: ``.venv/bin/python scripts/rounds_report.py``
"""

from __future__ import annotations

from sufficientdp.report.rounds import eta_table, q_table

if __name__ == "__main__":
    print(eta_table())
    print()
    print(q_table())
