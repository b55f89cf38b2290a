"""``calibrate(method="exact")`` bit for bit (issue 10, session 9): the q and the eta at q of the exact homogeneous
calibration, pinned before its speed-up.

Every value below was printed by ``sufficientdp calibrate --method exact --json`` at commit fd1e8fc (before the
upper-end-only exact tail of the calibration search); the speed-up must return the same floats (``float.hex``),
since it computes the same upper ends of the same exact tails at the same q. The bits are those of the numpy and
scipy the values were computed with (:data:`PINNED_STACK`); under other versions (``make test-lowest``), whose
special functions differ in the last bits, q must lie within two widths of the search's final bracket of the pinned
q (two searches on slightly different etas can end in neighbouring brackets, each ``(1e-3 ** (1/12)) ** (2 ** -12)``
wide, 1.4e-4 relative) and the eta at q must meet the target.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy

from sufficientdp.calibration import calibrate

PINNED_STACK = ("2.4", "1.17")  # numpy, scipy (major.minor) that computed GOLDEN
BRACKET = math.log(1e3) / 12 / 2**12  # log-width of the exact search's final bracket (12 bisections of the grid)

# (bits, population, epsilon, eta, reports) -> (q, eta at q), float.hex, from the CLI at commit fd1e8fc
GOLDEN = {
    (3, 100, 1.0, 1e-3, 1): ("0x1.0601030926809p-2", "0x1.0624d849ce2bcp-10"),
    (4, 300, 0.8, 1e-2, 1): ("0x1.e6a2414e01bc2p-3", "0x1.478b249830bf0p-7"),
    (2, 1000, 0.5, 1e-3, 1): ("0x1.41a5d51a11ad2p-3", "0x1.062491ccd607ep-10"),
    (2, 50, 1.0, 1e-2, 2): ("0x1.11e7622d7eb72p-2", "0x1.47aaf8bd786a3p-7"),
}

# the issue-10 benchmark row (`calibrate --method exact`, L = 5, N = 1000), a few seconds
GOLDEN_SLOW = {
    (5, 1000, 0.693147, 1e-3, 1): ("0x1.08c22ad5b5a9fp-2", "0x1.056c47923069cp-10"),
    (6, 500, 2.0, 1e-3, 1): ("0x1.d4737c0466ea3p-3", "0x1.053e0f1936b97p-10"),
}


def _pinned_stack() -> bool:
    return (".".join(np.__version__.split(".")[:2]), ".".join(scipy.__version__.split(".")[:2])) == PINNED_STACK


def _check(config: tuple[int, int, float, float, int], want: tuple[str, str]) -> None:
    bits, population, epsilon, eta, reports = config
    res = calibrate(method="exact", bits=bits, population=population, epsilon=epsilon, eta=eta, reports=reports)
    assert res.eta_at_q is not None and res.eta_at_q <= eta
    if _pinned_stack():
        assert (res.q.hex(), res.eta_at_q.hex()) == want
    else:
        assert abs(math.log(res.q / float.fromhex(want[0]))) <= 2 * BRACKET


@pytest.mark.parametrize("config", sorted(GOLDEN))
def test_exact_calibration_returns_the_pinned_floats(config: tuple[int, int, float, float, int]) -> None:
    _check(config, GOLDEN[config])


@pytest.mark.slow
@pytest.mark.parametrize("config", sorted(GOLDEN_SLOW))
def test_exact_calibration_returns_the_pinned_floats_at_the_benchmark_sizes(
        config: tuple[int, int, float, float, int]) -> None:
    _check(config, GOLDEN_SLOW[config])
