"""The exact single-bit evaluation refuses binomial tables beyond MAX_TABLE_PEOPLE entries instead of allocating
them (bad-input sweep, session 11: `account --mechanism shuffled-rr --population 10**12` was a MemoryError of
7.3 TiB, exit 1; at 10**10, 37 GiB)."""

import pytest

from sufficientdp import ParameterError
from sufficientdp.accounting.shuffled import shuffled_rr_worst_bracket
from sufficientdp.cli.main import main
from sufficientdp.ratio.single_bit import MAX_TABLE_PEOPLE


@pytest.mark.parametrize("population", [10**10, 10**12])
def test_huge_crowds_are_refused_naming_the_population(population):
    with pytest.raises(ParameterError, match=f"population: .*at most {MAX_TABLE_PEOPLE}"):
        shuffled_rr_worst_bracket(population=population, q=0.2, epsilon=1.0)


def test_the_cli_says_so_in_one_line(capsys):
    code = main(["account", "--mechanism", "shuffled-rr", "--q", "0.2", "--epsilon", "1", "--population",
                 str(10**12), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "population" in err


def test_a_billion_people_still_get_their_bracket():
    r = shuffled_rr_worst_bracket(population=10**9, q=0.2, epsilon=1.0)
    assert r.kind.value == "bracket" and 0.0 <= r.delta_lower <= r.delta_upper <= 1.0
