"""The allocator settings of the package's own processes (:mod:`sufficientdp._allocator`, issue 10).

Checked by what they are for, in fresh processes: the same proven bound computed with the settings faults far fewer
pages in (its freed buffers are reused instead of returned to the system and faulted in again) and gives the same
float, bit for bit. Page faults come from the kernel's own accounting (``getrusage``), not from a clock.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sufficientdp._allocator import tune_allocator

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt (Linux)")

_CHILD = """
import resource, sys
from sufficientdp._allocator import tune_allocator
if sys.argv[1] == "tuned":
    assert tune_allocator()
from sufficientdp.ratio.proven import proven_tail
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
tail = proven_tail(q=0.3509, bits=40, population=10_000_000, epsilon=2.0)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, tail.eta.hex())
"""


def _faults_and_eta(mode: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}  # glibc's defaults otherwise
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True, env=env,
                         timeout=300)
    faults, eta = out.stdout.split()
    return int(faults), eta


def test_the_settings_apply_on_linux() -> None:
    assert tune_allocator() is True


def test_a_bound_computed_with_the_settings_faults_fewer_pages_and_gives_the_same_float() -> None:
    default, eta_default = _faults_and_eta("default")
    tuned, eta_tuned = _faults_and_eta("tuned")
    assert eta_tuned == eta_default == "0x1.365d701f704a8p-1"  # tests/ratio/test_proven_same_floats.py, tail_L40
    assert tuned < 0.5 * default, (tuned, default)

