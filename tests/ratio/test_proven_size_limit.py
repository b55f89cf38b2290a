"""The all-collections bound evaluates at most MAX_CLASSES report classes (summed over the pair types): a domain
with more is refused before any work, naming bits (issue 10: at L = 1024 the bound had passed 6 GB, at L = 4096 it
was killed at 24 GB, although --bits allows 4096). A weight domain with more falls back to all of {0,1}^L while
that is within the limit (the looser bound covers it)."""

from __future__ import annotations

import pytest

import sufficientdp.ratio.proven as proven
from sufficientdp._errors import ParameterError
from sufficientdp.cli.main import main
from sufficientdp.ratio.proven import MAX_CLASSES, MAX_FULL_BITS, Domain, _class_count, pair_types, proven_tail


@pytest.mark.parametrize("domain", [Domain(bits=6), Domain(bits=7, kind="weight", max_weight=3),
                                    Domain(bits=9, kind="weight", max_weight=1), Domain(bits=5, kind="onehot")])
def test_the_count_is_the_classes_the_pair_types_hold(domain: Domain) -> None:
    assert _class_count(domain) == sum(t.log_omega.size for t in pair_types(domain, 0.2))


def test_the_limit_of_all_of_the_cube_is_286_bits() -> None:
    assert _class_count(Domain(bits=286)) <= MAX_CLASSES < _class_count(Domain(bits=287))
    assert MAX_FULL_BITS == 286
    assert _class_count(Domain(bits=286)) == sum((287 - j) * (j + 1) for j in range(1, 287)) == 3_980_977
    assert _class_count(Domain(bits=256)) == 2_861_952  # (sum over j of (j + 1)(257 - j))


def test_too_large_a_domain_is_refused_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def built(*args: object) -> None:
        raise AssertionError("pair types were built")

    monkeypatch.setattr(proven, "pair_types", built)
    with pytest.raises(ParameterError, match=r"^bits must be at most 286 for the all-collections bound over all "
                                             r"of \{0,1\}\^300; got 300"):
        proven_tail(q=0.45, bits=300, population=10**7, epsilon=2.0)
    with pytest.raises(ParameterError, match=r"^bits=4096 with max_weight=4000: "):
        proven_tail(q=0.45, bits=4096, population=10**7, epsilon=2.0,
                    domain=Domain(bits=4096, kind="weight", max_weight=4000))


def test_a_weight_domain_over_the_limit_falls_back_to_the_cube_within_it() -> None:
    dom = Domain(bits=250, kind="weight", max_weight=200)
    assert _class_count(dom) > MAX_CLASSES >= _class_count(Domain(bits=250))
    notes: list[str] = []
    assert proven._checked_size(dom, notes) == Domain(bits=250) and "looser" in notes[0]


def test_the_cli_says_it_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calibrate", "--bits", "1024", "--population", "10000000", "--epsilon", "2", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "bits must be at most 286" in err


def test_the_composed_bound_over_rounds_has_the_same_limit(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # It had no class limit: `account --mechanism campaign --q 0.45 --bits 1024` ended in "math domain error" (log
    # of an underflowed probability in the positive-part bound), naming no parameter.
    from sufficientdp.accounting import rounds

    def built(*args: object) -> None:
        raise AssertionError("pair types were built")

    with monkeypatch.context() as mp:
        mp.setattr(rounds, "pair_types", built)
        with pytest.raises(ParameterError, match=r"^bits must be at most 286 for the all-collections bound"):
            rounds.rounds_tail(q=0.45, bits=1024, population=100_000, epsilon=1.0, rounds=2)
    code = main(["account", "--mechanism", "campaign", "--q", "0.45", "--bits", "1024", "--population", "100000",
                 "--epsilon", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "bits must be at most 286" in err
