"""Figure conventions shared by every plot: the Agg backend, a colour-blind-safe palette, SVG export.

An adapter: no math here (the numbers come from the core).
"""

from __future__ import annotations

import io
from typing import Any

import matplotlib

matplotlib.use("Agg", force=False)  # no display needed; never opens a window

from matplotlib.figure import Figure  # noqa: E402

__all__ = ["PALETTE", "new_figure", "to_svg"]

#: Okabe & Ito (2008) colour-blind-safe palette, in the order the figures use it.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
#: Line styles paired with the palette, so that a figure also reads in grey scale.
STYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 1)), "-")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
TARGET_COLOUR = "#000000"


def new_figure(width: float = 6.4, height: float = 4.0) -> tuple[Figure, Any]:
    """A Figure (not registered with pyplot, so nothing leaks between calls) and its single Axes."""
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def to_svg(fig: Figure) -> str:
    """The figure as an inline ``<svg>`` element (no XML prolog, no external references)."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "sufficientdp"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    start = text.find("<svg")
    return text[start:] if start >= 0 else text
