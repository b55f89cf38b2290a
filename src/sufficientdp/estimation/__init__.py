"""Placeholder while modules are being written."""
__version__ = "0.1.0"
