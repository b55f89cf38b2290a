"""Numerical building blocks shared by the analysis layers (numpy and scipy only; no paper concepts here)."""
