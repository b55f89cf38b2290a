"""Golden values pinned before the shuffled-RR scans over m became one (issue 11).

Computed by the code before the change; the one scan reproduces them.
"""


import pytest

from sufficientdp.accounting.shuffled import (
    shuffled_rr_worst_bracket,
    shuffled_rr_worst_profile,
)
from sufficientdp.calibration.compare import shuffled_rr_exact_q, shuffled_rr_worst_delta
from sufficientdp.ratio.single_bit import single_bit_worst_tail, worst_over_crowds


def _pair(n, result):
    """``(value, m)`` with m folded to ``min(m, n - 1 - m)``: the add pair at m is the remove pair at n - 1 - m, so
    the two labels name the same pair (the old direct-convolution loop picked either by rounding noise)."""
    value, m = result
    return [value, min(m, n - 1 - m)]


CASES = {
    "shuffled worst delta": lambda: [
        x
        for n, q, e in ((1, 0.25, 0.5), (12, 0.2, 0.5), (60, 0.1, 1.0), (200, 0.3, 0.2))
        for x in _pair(n, shuffled_rr_worst_delta(n, q, e))
    ],
    "shuffled exact q": lambda: [
        x for n, e, d in ((20, 1.0, 1e-3), (100, 0.5, 1e-4)) for x in _pair(n, shuffled_rr_exact_q(n, e, d))
    ],
    # docs/comparison.md, L = 1, N = 400, epsilon = 1, delta = 1e-6: q = 0.067503 (the old loop said m = 399)
    "shuffled exact q, docs/comparison.md": lambda: _pair(400, shuffled_rr_exact_q(400, 1.0, 1e-6)),
    "shuffled profile subset": lambda: [
        float(x)
        for r in [shuffled_rr_worst_profile(population=300, q=0.2, epsilon=[0.2, 0.5, 1.0], ms=[0, 1, 5, 150, 290])]
        for x in list(r.delta) + list(r.eta) + list(r.worst_m_delta) + list(r.worst_m_eta)
    ],
    "shuffled profile full": lambda: [
        float(x)
        for r in [shuffled_rr_worst_profile(population=50, q=0.15, epsilon=[0.3, 1.0])]
        for x in list(r.delta) + list(r.eta) + list(r.worst_m_delta) + list(r.worst_m_eta)
    ],
    "shuffled bracket": lambda: [
        float(x)
        for r in [shuffled_rr_worst_bracket(population=400, q=0.2, epsilon=0.5, full_scan_max=100)]
        for x in (r.delta_lower, r.delta_upper, r.eta_lower, r.eta_upper, r.worst_m, r.worst_m_eta)
    ],
    "single bit worst tail subset": lambda: [
        float(x)
        for t in [single_bit_worst_tail(population=300, q=0.2, epsilon=0.5, ms=[0, 3, 100])]
        for x in (t.eta, t.eta_lower, t.eta_upper, t.delta)
    ],
    "worst over crowds": lambda: [
        float(x)
        for w in [worst_over_crowds(80, 0.25, 0.4)]
        for x in (w.eta, w.delta, w.delta_upper, w.worst_m_delta, w.worst_m_eta)
    ],
}

#: computed by the code before the change, repr of each float
GOLDEN = {
    "shuffled worst delta": [
        0.33781968235145515,
        0.0,
        0.055360584896312244,
        0.0,
        0.004791495223837213,
        0.0,
        2.375319191973927e-05,
        1.0,
    ],
    "shuffled exact q": [0.2301862704582751, 0.0, 0.20651976062112773, 0.0],
    "shuffled exact q, docs/comparison.md": [0.06750293073868358, 0.0],
    "shuffled profile subset": [
        0.0005572161178405259,
        9.579924200189963e-09,
        3.392193263480392e-20,
        0.018455802280656016,
        5.80968567912246e-07,
        1.763469948993592e-18,
        0.0,
        0.0,
        0.0,
        1.0,
        1.0,
        0.0,
    ],
    "shuffled profile full": [
        0.0307900060171962,
        0.0007327819172681182,
        0.22914834859187277,
        0.005268259159541529,
        2.0,
        0.0,
        7.0,
        1.0,
    ],
    "shuffled bracket": [1.0272715651277565e-10, 0.47025574585997637, 9.093511825564937e-09, 1.0, 1.0, 0.0],
    "single bit worst tail subset": [
        5.053185434967954e-07,
        5.053185434965468e-07,
        5.053185434970432e-07,
        9.579924200204326e-09,
    ],
    "worst over crowds": [0.00477791504309444, 0.0001638822657193862, 0.00016388226571944966, 1.0, 2.0],
}

#: relative tolerance per case (default 1e-12: summation order may move the last bits)
REL: dict[str, float] = {}


@pytest.mark.parametrize("name", list(CASES))
def test_numbers_unchanged(name):
    assert CASES[name]() == pytest.approx(GOLDEN[name], rel=REL.get(name, 1e-12), abs=1e-300)
