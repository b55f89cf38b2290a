"""The CLI side of the last hostile inputs of docs/reliability.md: one line on stderr and exit 2 (never a traceback
or an internal error), or the right answer where it is computable."""

import json
import warnings

import mpmath as mp
import pytest
from cli_run import run


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_demo_population_1e12_one_line(capsys):
    # was: MemoryError (N x L floats) after the calibration
    code, out, err = run(capsys, "demo", "--population", "1000000000000", "--quiet")
    _one_line_error(code, err, "population must be in [1, 41666666]", "got 1000000000000")


def test_demo_bits_4096_limit_one_line(capsys):
    code, out, err = run(capsys, "demo", "--bits", "4096", "--population", "400000", "--quiet")
    _one_line_error(code, err, "population must be in [1, 389408]", "bits = 4096", "got 400000")


@pytest.mark.parametrize(("bits", "q"), [("4096", "0.3"), ("4", "1e-300"), ("4096", "1e-300"), ("1", "5e-324")])
def test_account_bit_vector_rr_extremes(capsys, bits, q):
    # was: "probabilities + infinity_mass must sum to 1" (the reverse PLD's tails had underflowed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, out, err = run(capsys, "account", "--mechanism", "bit-vector-rr", "--bits", bits, "--q", q,
                             "--epsilon", "1", "--json")
    assert code == 0, err
    d = json.loads(out)
    # exact: eta = P[L > 1] = P[m > (j + 1/a) / 2], m ~ Binomial(j, 1 - q) (both directions are alike): at these
    # q the loss of every atom but the middle one is above 1 nat, and the middle one has no mass at odd j or
    # 1 - P[m = j/2] otherwise
    with mp.workdps(400):
        j, qq = int(bits), mp.mpf(q)
        a = mp.log1p(-qq) - mp.log(qq)
        eta = mp.fsum(mp.binomial(j, m) * (1 - qq) ** m * qq ** (j - m) for m in range(j + 1)
                      if (2 * m - j) * a > 1)
    assert d["eta"] == pytest.approx(float(eta), rel=1e-12)
    assert 0.0 <= d["delta"] <= d["eta"]


def test_account_campaign_q_1e_300_one_line(capsys):
    # was: RuntimeWarning in loss.profile (e**epsilon overflowed in the curves' hull): an internal error
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, out, err = run(capsys, "account", "--mechanism", "campaign", "--q", "1e-300", "--bits", "4",
                             "--population", "100", "--epsilon", "1", "--rounds", "2")
    _one_line_error(code, err, "q must be in [9.98245e-39, 0.5)", "got 1e-300")
