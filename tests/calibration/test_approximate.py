"""``proven_delta_q``: the smallest q whose release is (epsilon, delta)-DP for every pair of collections by the
privacy-blanket bound, pinned to independent truth.

* Brute force (tests/oracles/rounds.py, no product code): the exact worst delta over every neighbouring pair of small
  collections at the returned q, and at larger crowds, is at most the target.
* One bit: the exact shuffled-RR calibration (its own bisection over the exact scan) gives the same q.
* The answer is not wasteful: 1% less noise, the bound misses the target.
"""

from __future__ import annotations

import pytest
from tests.oracles import rounds as oracle

from sufficientdp._errors import ParameterError
from sufficientdp.calibration.approximate import proven_delta_q
from sufficientdp.calibration.compare import compare_approaches, shuffled_rr_exact_q
from sufficientdp.parameters import local_q
from sufficientdp.ratio.proven import Domain, proven_delta


@pytest.mark.parametrize(("bits", "population", "epsilon", "delta"), [(2, 3, 1.0, 0.05), (2, 2, 0.5, 0.1),
                                                                    (3, 2, 1.0, 0.1)])
def test_exact_worst_delta_at_the_answer_meets_the_target(bits: int, population: int, epsilon: float,
                                                          delta: float) -> None:
    q, at_q = proven_delta_q(bits=bits, population=population, epsilon=epsilon, delta=delta)
    assert 0.0 < q < local_q(bits, epsilon) and at_q <= delta
    exact = [oracle.worst_fixed(bits, n, q, 1, [epsilon])[1][0] for n in range(population, population + 3)]
    assert max(exact) <= delta
    assert exact[0] > delta / 20  # informative: the truth is not far below the target
    # not wasteful: 1% less noise and the bound misses the target
    assert proven_delta(q=q * 0.99, bits=bits, population=population, epsilon=epsilon).delta > delta


def test_one_bit_matches_the_exact_shuffled_rr_calibration() -> None:
    q, at_q = proven_delta_q(bits=1, population=400, epsilon=1.0, delta=1e-6)
    q_exact, _ = shuffled_rr_exact_q(400, 1.0, 1e-6)
    assert at_q <= 1e-6
    assert q == pytest.approx(q_exact, rel=1e-4)


def test_enough_stops_at_the_target_with_a_valid_bound() -> None:
    kw = {"q": 0.25, "bits": 3, "population": 3, "epsilon": 1.0}
    tight = proven_delta(**kw).delta  # type: ignore[arg-type]
    loose = proven_delta(**kw, enough=0.9).delta  # type: ignore[arg-type]
    exact = oracle.worst_fixed(3, 3, 0.25, 1, [1.0])[1][0]
    assert exact - 1e-12 <= tight <= loose <= 0.9
    assert proven_delta(**kw, enough=tight / 2).delta == tight  # (a target it cannot meet: refined to the end)


def test_compare_shows_the_row_beside_the_amplification_bounds() -> None:
    c = compare_approaches(bits=5, population=100_000, epsilon=1.0, delta=1e-6)
    row = c.row("approximate-dp-proven")
    assert row.kind == "bound" and row.scope == "all-collections" and row.q is not None
    assert "(epsilon, delta)-DP" in row.guarantee
    local, fmt = c.row("local-dp"), c.row("shuffle-fmt21")
    assert local.q is not None and fmt.q is not None and row.q < fmt.q < local.q
    # (epsilon, 1e-6) for every collection costs more noise than eta = 1e-3 (eta >= delta at the same q)
    proven = c.row("sufficient-dp-proven")
    assert proven.q is not None and row.q > proven.q
    skipped = compare_approaches(bits=5, population=100_000, epsilon=1.0, delta=1e-6, sufficient=False)
    assert skipped.row("approximate-dp-proven").q is None
    k2 = compare_approaches(bits=3, population=1000, epsilon=1.0, delta=1e-6, reports=2).row("approximate-dp-proven")
    assert k2.q is None and k2.kind == "n/a" and "proven_delta_q(reports=k)" in k2.notes[0]


def test_two_reports_meets_the_target_against_brute_force() -> None:
    q, at_q = proven_delta_q(bits=1, population=3, epsilon=2.0, delta=0.05, reports=2)
    worst = 0.0
    for base, x, xp in oracle.pairs(1, 3):
        p = oracle.round_law(1, q, tuple(sorted((base + (x,)) * 2)))
        q_ = oracle.round_law(1, q, tuple(sorted((base + (xp,)) * 2)))
        worst = max(worst, oracle.joint_eta_delta([p], [q_], [2.0])[1][0])
    assert worst <= at_q <= 0.05 and worst > 0.05 / 20


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"delta": 0.0}, r"^delta must be in \(0, 1\)"),
    ({"delta": 1.5}, r"^delta must be in \(0, 1\)"),
    ({"epsilon": 0.0}, r"^epsilon"),
    ({"population": 0}, r"^population must be"),
    ({"domain": Domain(bits=4)}, r"^domain must be a Domain with bits = 3"),
])
def test_bad_input_is_refused_naming_the_parameter(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"bits": 3, "population": 10, "epsilon": 1.0, "delta": 1e-3, **kwargs}
    with pytest.raises(ParameterError, match=message):
        proven_delta_q(**args)  # type: ignore[arg-type]
