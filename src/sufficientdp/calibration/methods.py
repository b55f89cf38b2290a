"""The calibration methods' names, defaults and scopes (no computation here: the command line reads them at start)."""

from __future__ import annotations

__all__ = ["DEFAULT_ETA", "DEFAULT_METHOD", "METHODS", "SCOPE"]

METHODS = ("proven", "homogeneous", "exact", "mc", "local", "paper-sigma", "paper-simplified")
#: The default: the strongest true claim (every pair of collections of the domain).
DEFAULT_METHOD = "proven"
#: Default target probability cut-off for the tail-based methods.
DEFAULT_ETA = 1e-3

_KIND = {"proven": "bound", "homogeneous": "bound", "exact": "exact", "mc": "estimate", "local": "exact",
         "paper-sigma": "heuristic", "paper-simplified": "heuristic"}

#: For which collections each method's statement holds (results carry it as ``scope``).
SCOPE = {"proven": "all-collections", "homogeneous": "homogeneous", "exact": "homogeneous", "mc": "homogeneous",
         "local": "per-report", "paper-sigma": "homogeneous", "paper-simplified": "homogeneous"}

_RENAMED = {"certified": ("'certified' was renamed 'homogeneous': it bounds eta for the paper's homogeneous "
                          "configuration only, which is not the worst case. The default is now 'proven' (every "
                          "pair of collections).")}

