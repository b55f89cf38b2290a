"""One check for every direction vocabulary (issue 11, audit gap 5).

``Direction`` (both/forward/reverse) is the vocabulary of the homogeneous pair; ``outlier_in="modified"`` /
``"original"`` are documented aliases of ``FORWARD`` / ``REVERSE`` (the same idea: which collection holds the
outlier, seed 001 §1.2). The ``"add"``/``"remove"`` words of shuffled randomized response and of Poisson
subsampling name different pairs and stay, checked by the same helper. Each public function gives identical
results for every accepted spelling.
"""

from __future__ import annotations

import numpy as np
import pytest

from sufficientdp._errors import ParameterError
from sufficientdp.accounting.mechanisms import binary_randomized_response
from sufficientdp.accounting.sampling import poisson_subsample
from sufficientdp.accounting.shuffled import homogeneous_histogram_pld, shuffled_rr_pld
from sufficientdp.loss.result import DIRECTION_ALIASES, Direction, check_choice, check_direction
from sufficientdp.ratio.analysis import privacy_tail
from sufficientdp.ratio.exact import homogeneous_ratio_distribution
from sufficientdp.ratio.k_reports import k_tail_certified
from sufficientdp.ratio.reverse import two_sided_tail
from sufficientdp.ratio.sampling import RatioSample, sample_privacy_ratio
from sufficientdp.ratio.single_bit import single_bit_tail

FWD_REV = (Direction.FORWARD, Direction.REVERSE)


def _same(results: list[object]) -> bool:
    """Every result equal to the first, wall-clock ``seconds`` entries aside (the only field that may differ)."""
    def strip(x: object) -> object:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "seconds"}
        if isinstance(x, (list, tuple)):
            return [strip(v) for v in x]
        return x
    first = strip(results[0])
    return all(strip(r) == first for r in results[1:])


def test_check_direction_canonical_members_and_aliases() -> None:
    for spelling, member in [("both", Direction.BOTH), ("forward", Direction.FORWARD), ("reverse", Direction.REVERSE),
                             (Direction.REVERSE, Direction.REVERSE), ("modified", Direction.FORWARD),
                             ("original", Direction.REVERSE)]:
        got = check_direction("direction", spelling)
        assert got is member and type(got) is Direction
    assert dict(DIRECTION_ALIASES) == {"modified": "forward", "original": "reverse"}


@pytest.mark.parametrize(("value", "allowed", "message"), [
    ("up", tuple(Direction), "direction must be one of both, forward, reverse (or the aliases 'modified' = "
                             "'forward', 'original' = 'reverse'); got 'up'"),
    ("both", FWD_REV, "direction must be one of forward, reverse (or the aliases 'modified' = 'forward', "
                      "'original' = 'reverse'); got 'both'"),
    (None, FWD_REV, "got None"),
    (1, FWD_REV, "got 1"),
    ("Forward", FWD_REV, "got 'Forward'"),
])
def test_check_direction_rejects_with_name_value_and_allowed(value: object, allowed: tuple[Direction, ...],
                                                             message: str) -> None:
    with pytest.raises(ParameterError) as err:
        check_direction("direction", value, allowed)
    assert message in str(err.value)


def test_check_choice_without_aliases() -> None:
    assert check_choice("direction", "remove", ("add", "remove")) == "remove"
    with pytest.raises(ParameterError, match=r"^direction must be one of add, remove; got 'forward'$"):
        check_choice("direction", "forward", ("add", "remove"))
    # an alias whose canonical value is not allowed here is not offered
    with pytest.raises(ParameterError, match=r"^k must be one of forward \(or the alias 'modified' = 'forward'\); "
                                             r"got 'original'$"):
        check_choice("k", "original", ("forward",), DIRECTION_ALIASES)


@pytest.mark.parametrize("spellings", [("forward", Direction.FORWARD, "modified"),
                                       ("reverse", Direction.REVERSE, "original"), ("both", Direction.BOTH)])
def test_privacy_tail_and_two_sided_tail_accept_every_spelling(spellings: tuple[str, ...]) -> None:
    common = {"q": 0.2, "bits": 2, "population": 6, "epsilon": 1.0}
    assert _same([privacy_tail(method="exact", direction=d, **common).to_dict() for d in spellings])
    assert _same([two_sided_tail(method="exact", direction=d, **common).to_dict() for d in spellings])


@pytest.mark.parametrize("spellings", [(Direction.FORWARD, "forward", "modified"),
                                       (Direction.REVERSE, "reverse", "original")])
def test_sample_privacy_ratio_accepts_every_spelling(spellings: tuple[str, ...]) -> None:
    draws = [sample_privacy_ratio(q=0.2, bits=3, population=7, samples=500, reports=2, outlier_in=d, rng=5)
             for d in spellings]
    for s in draws:
        assert s.outlier_in is spellings[0] and type(s.outlier_in) is Direction
        np.testing.assert_array_equal(s.log_ratios, draws[0].log_ratios)
        assert s.to_dict() == draws[0].to_dict() and s.to_dict()["outlier_in"] == spellings[0].value
        assert s.tail(1.0).to_dict() == draws[0].tail(1.0).to_dict()
    # a sample built directly is normalized by the same check
    assert RatioSample(log_ratios=[0.0], q=0.2, bits=1, population=2, outlier_in="original").outlier_in \
        is Direction.REVERSE
    with pytest.raises(ParameterError, match=r"^outlier_in must be one of forward, reverse \(or the aliases "
                                             r"'modified' = 'forward', 'original' = 'reverse'\); got 'both'$"):
        sample_privacy_ratio(q=0.2, bits=3, population=7, samples=5, outlier_in="both", rng=5)


def test_the_add_remove_vocabularies_are_checked_by_the_same_helper() -> None:
    with pytest.raises(ParameterError, match=r"^direction must be one of add, remove, both; got 'forward'$"):
        single_bit_tail(population=5, m=1, q=0.2, epsilon=1.0, direction="forward")
    with pytest.raises(ParameterError, match=r"^direction must be one of add, remove; got 'both'$"):
        shuffled_rr_pld(population=5, m=1, q=0.2, direction="both")
    with pytest.raises(ParameterError, match=r"^direction must be one of add, remove; got 'reverse'$"):
        poisson_subsample(binary_randomized_response(0.25), 0.1, direction="reverse")
    # the words are unchanged: the same values as before the shared check
    assert single_bit_tail(population=5, m=1, q=0.2, epsilon=0.5, direction="add").details["direction"] == "add"


@pytest.mark.parametrize("spellings", [(Direction.FORWARD, "forward", "modified"),
                                       (Direction.REVERSE, "reverse", "original")])
def test_homogeneous_distributions_accept_every_spelling(spellings: tuple[str, ...]) -> None:
    dists = [homogeneous_ratio_distribution(0.2, 3, 6, 2, outlier_in=d) for d in spellings]
    plds = [homogeneous_histogram_pld(q=0.2, population=6, outlier_bits=2, outlier_in=d) for d in spellings]
    for d, p in zip(dists, plds):
        np.testing.assert_array_equal(d.losses, dists[0].losses)
        np.testing.assert_array_equal(d.probabilities, dists[0].probabilities)
        assert d.infinity_mass == dists[0].infinity_mass and d.details == dists[0].details
        assert d.details["outlier_in"] == spellings[0].value
        np.testing.assert_array_equal(p.losses, plds[0].losses)
        np.testing.assert_array_equal(p.probabilities, plds[0].probabilities)
    for call in (lambda: homogeneous_ratio_distribution(0.2, 3, 6, outlier_in="both"),
                 lambda: homogeneous_histogram_pld(q=0.2, population=6, outlier_bits=2, outlier_in="both")):
        with pytest.raises(ParameterError, match=r"^outlier_in must be one of forward, reverse \(or the aliases "
                                                 r"'modified' = 'forward', 'original' = 'reverse'\); got 'both'$"):
            call()


@pytest.mark.parametrize("spellings", [(Direction.FORWARD, "forward", "modified"),
                                       (Direction.REVERSE, "reverse", "original")])
def test_k_tail_certified_accepts_every_spelling(spellings: tuple[str, ...]) -> None:
    tails = [k_tail_certified(q=0.2, bits=3, population=20, reports=2, epsilon=1.0, direction=d).to_dict()
             for d in spellings]
    assert _same(tails) and tails[0]["details"]["direction"] == spellings[0].value
    with pytest.raises(ParameterError, match=r"^direction must be one of forward, reverse \(or the aliases "
                                             r"'modified' = 'forward', 'original' = 'reverse'\); got 'both'$"):
        k_tail_certified(q=0.2, bits=3, population=20, reports=2, epsilon=1.0, direction="both")
