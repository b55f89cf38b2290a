"""``--seed`` on every command that takes it: an integer in [0, 2**128 - 1], refused by the parser with a message
naming the option (bad-input sweep, session 11: a negative seed reached numpy, which answered "expected
non-negative integer" without naming --seed)."""

import pytest
from cli_run import run

from sufficientdp.cli.main import build_parser, main


def _commands_with_seed() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions if a.choices)  # type: ignore[union-attr]
    out = []
    for name, p in sub.choices.items():
        if any("--seed" in a.option_strings for a in p._actions):
            out.append(name)
    return sorted(out)


def test_the_commands_with_a_seed():
    assert {"calibrate", "randomize", "estimate", "tail", "worst-case", "demo", "census"} <= set(
        _commands_with_seed())


@pytest.mark.parametrize("command", _commands_with_seed())
@pytest.mark.parametrize("value", ["-1", str(-(2**64)), str(2**128), "1e3", "abc", ""])
def test_a_bad_seed_is_one_line_naming_the_option(capsys, command, value):
    code, out, err = run(capsys, command, "--seed", value)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert "--seed" in lines[0] and "seed must be an integer in [0, 2**128 - 1]" in lines[0], lines[0]


def test_the_largest_seed_is_accepted(capsys):
    code, out, err = run(capsys, "calibrate", "--bits", "2", "--population", "50", "--epsilon", "1", "--method",
                         "mc", "--samples", "2000", "--seed", str(2**128 - 1), "--json")
    assert code == 0, err
    assert main(["calibrate", "--bits", "2", "--population", "50", "--epsilon", "1", "--method", "local",
                 "--seed", "0", "--json"]) == 0
