"""``--max-weight`` takes the same range in every command (session 17: ``calibrate --bits 2 --max-weight 10`` was
refused, ``tail`` and ``account --rounds`` with the same arguments computed the bound for all of {0,1}^2)."""

import json

import pytest
from cli_run import run

COMMON = ("--bits", "2", "--population", "10", "--epsilon", "1", "--max-weight", "10")


@pytest.mark.parametrize("argv", [
    ("calibrate", *COMMON),
    ("tail", *COMMON, "--q", "0.35"),
    ("account", "--rounds", "2", *COMMON, "--q", "0.35"),
])
def test_a_max_weight_above_bits_is_refused_everywhere(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.strip() == "sufficientdp: error: max_weight must be an integer >= 1 and <= 2; got 10"


@pytest.mark.parametrize("argv", [("tail", "--q", "0.35"), ("calibrate",)])
def test_max_weight_equal_to_bits_is_every_vector(capsys, argv):
    base = ("--bits", "3", "--population", "50", "--epsilon", "1")
    code_w, out_w, _ = run(capsys, argv[0], *base, "--max-weight", "3", *argv[1:], "--json")
    code, out, _ = run(capsys, argv[0], *base, *argv[1:], "--json")
    assert code_w == code == 0
    with_w, plain = json.loads(out_w), json.loads(out)
    key = "eta" if argv[0] == "tail" else "q"
    assert with_w[key] == plain[key]


@pytest.mark.parametrize(("value", "shown"), [(2.5, "2.5"), ("3", "'3'"), (True, "True"), (float("nan"), "nan")])
def test_a_max_weight_of_the_wrong_kind_is_refused_with_the_whole_range(value, shown):
    # (the refusal of a value that is not an integer at all named only ">= 1" before session 18)
    from sufficientdp._errors import ParameterError
    from sufficientdp.ratio.proven import Domain

    with pytest.raises(ParameterError) as info:
        Domain.from_max_weight(5, value)
    assert str(info.value) == f"max_weight must be an integer >= 1 and <= 5; got {shown}"
