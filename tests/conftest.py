"""Test-wide settings: property tests draw the same examples on every run (CI must not flake on a new draw).

Set HYPOTHESIS_PROFILE=explore to draw fresh examples locally.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
