"""Figures of sufficientdp (an adapter over the core; extra ``report``: matplotlib, Agg backend).

Every function returns a :class:`matplotlib.figure.Figure`; :func:`to_svg` turns one into an inline ``<svg>``.
No math here: the numbers come from the core (or are passed in already computed).
"""

from __future__ import annotations

try:
    import matplotlib  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("sufficientdp.plot needs matplotlib: pip install 'sufficientdp[report]'") from exc

from ._style import PALETTE, new_figure, to_svg
from .figures import (
    eta_vs_q,
    methods_comparison,
    noise_vs_k,
    power_vs_level,
    ratio_distribution,
    ratio_distribution_grid,
    release_estimates,
    sigma_vs_population,
    sigma_vs_q,
)

__all__ = ["PALETTE", "eta_vs_q", "methods_comparison", "new_figure", "noise_vs_k", "power_vs_level",
           "ratio_distribution", "ratio_distribution_grid", "release_estimates", "sigma_vs_population",
           "sigma_vs_q", "to_svg"]
