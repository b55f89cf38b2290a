"""Anonymizing aggregation: tally reports into counts (seed 001 §1.3, eq. 3.3–3.4)."""

from ._kernels import bit_counts, vector_histogram, weight_histogram
from .tally import MAX_HISTOGRAM_BITS, Tally, tally, tally_packed

__all__ = ["MAX_HISTOGRAM_BITS", "Tally", "bit_counts", "tally", "tally_packed", "vector_histogram",
           "weight_histogram"]
