"""Reports people can read (an adapter, extra ``report``): the design report of a calibration as one
self-contained HTML page (docs/reports.md).

No math here: :mod:`sufficientdp.report.design` gathers the numbers from the core, :mod:`sufficientdp.plot`
draws them, and a Jinja2 template shipped with the package lays them out.
"""

from __future__ import annotations

from .design import DesignReport, design_report, render_design, write_html

__all__ = ["DesignReport", "design_report", "render_design", "write_html"]
