"""interpret --failure is a probability in (0, 1), as the posterior bounds require: 0 passed the parser (whose
domain was [0, 1)) and was refused later as "delta must be in (0, 1)", a name the user never gave (bad-input
sweep, session 11)."""

import pytest
from cli_run import run


@pytest.mark.parametrize("value", ["0", "0.0", "1", "-0.1"])
def test_failure_out_of_range_names_the_option(capsys, value):
    code, _, err = run(capsys, "interpret", "--rho", "1", "--failure", value)
    assert code == 2 and err.count("\n") == 1
    assert "argument --failure: failure must be in (0, 1)" in err, err


def test_a_small_failure_probability_is_accepted(capsys):
    code, _, err = run(capsys, "interpret", "--rho", "1", "--failure", "1e-9", "--json")
    assert code == 0, err
