"""Large domains share the bounds of every pair type with a helper process (issue 10; `worth_a_helper`): the rows of
k > 1 reports, and the curves over T rounds. Every number must be the float one process computes, every row
included, and the work must really have been done by a child (else the test would compare one process with
itself)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

import numpy as np
import pytest
from tests.offload_spies import record_from_child

from sufficientdp import _offload
from sufficientdp._numerics.blas import one_blas_thread
from sufficientdp.loss.profile import fft_allowance
from sufficientdp.ratio import proven
from sufficientdp.ratio.proven import Domain, evaluate, pair_types, worth_a_helper

_T = TypeVar("_T")


def _children(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, for every call sent to a helper from now on, whether its value came from the child."""
    return record_from_child(monkeypatch, _offload.Pending)


def _one_process_then_two(monkeypatch: pytest.MonkeyPatch, compute: Callable[[], _T]) -> tuple[_T, _T, list[bool]]:
    """``compute()`` in one process, then with the helper allowed (a spare core assumed, also on a one-core runner;
    the caches cleared before each, else the second run reads the first one's rows), and the helper's record."""
    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    seen = _children(monkeypatch)
    out = []
    for classes in (10**12, 0):
        monkeypatch.setattr(proven, "_SPLIT_CLASSES", classes)
        proven._ROWS.clear()
        proven._ETA_BY_TYPE.clear()
        out.append(compute())
    return out[0], out[1], seen


@pytest.mark.slow
@pytest.mark.parametrize(("bits", "population", "q", "reports", "epsilon"),
                         [(8, 10_000, 0.3, 3, 1.0), (10, 100_000, 0.33, 2, 2.0), (12, 10**6, 0.36, 2, 1.0)])
def test_two_processes_give_the_one_process_bound(bits: int, population: int, q: float, reports: int,
                                                  epsilon: float, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two, seen = _one_process_then_two(monkeypatch, lambda: evaluate(
        q=q, population=population, epsilon=epsilon, reports=reports, domain=Domain(bits=bits)))
    assert seen and all(seen)  # the second evaluation sent rows to the helper, and the child answered
    assert (two.eta.hex(), two.delta.hex(), two.epsilon_prime.hex(), two.worst) == (
        one.eta.hex(), one.delta.hex(), one.epsilon_prime.hex(), one.worst)
    assert [(k, v.hex()) for k, v in two.by_type] == [(k, v.hex()) for k, v in one.by_type]  # every row, in order
    assert two.notes == one.notes and two.log_gamma == one.log_gamma


@pytest.mark.slow
def test_two_processes_give_the_one_process_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    # proven_delta with k > 1: the next type's climb in the helper; the answer is the same float (the top type's
    # last rung decides, and a climb in the helper only lowers another type's valid bound)
    one, two, seen = _one_process_then_two(monkeypatch, lambda: proven.proven_delta(
        q=0.33, bits=10, population=100_000, epsilon=2.0, reports=2))
    assert seen and all(seen)
    assert (two.delta.hex(), two.worst) == (one.delta.hex(), one.worst) and 0.0 < one.delta < 1e-3


def test_a_trivial_widest_type_does_not_wait_for_the_other_half(monkeypatch: pytest.MonkeyPatch) -> None:
    one, two, seen = _one_process_then_two(monkeypatch, lambda: evaluate(
        q=0.1, population=100, epsilon=1.0, reports=2, domain=Domain(bits=8)))
    assert one.eta == 1.0 and two == one
    assert seen == []  # the child was stopped, its answer never asked for


def test_a_helper_only_where_it_gains_and_where_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    types = list(pair_types(Domain(bits=30), 0.3))
    assert worth_a_helper(types)  # L = 30: 5,456 report classes, above the threshold
    assert not worth_a_helper(list(pair_types(Domain(bits=12), 0.3)))  # 455 classes: one process
    monkeypatch.setattr(proven, "_SPLIT_CLASSES", 0)
    assert not worth_a_helper(types[:3]) and worth_a_helper(types[:4])  # fewer than four types: one process
    monkeypatch.setattr(proven, "_SPLIT_CLASSES", 4000)
    monkeypatch.setattr(_offload, "spare_core", lambda: False)
    assert not worth_a_helper(types)  # one core: one process
    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    monkeypatch.setattr(proven, "_ONE_PROCESS", proven._ONE_PROCESS)
    monkeypatch.setattr(proven, "_THREADED_CLASSES", proven._THREADED_CLASSES)
    assert proven.second_process_allowed()
    proven.bound_in_one_thread()  # (the collector's jobs: no thread pool, no second process)
    assert not worth_a_helper(types) and not proven.second_process_allowed()


def test_the_fft_allowance_does_not_depend_on_the_blas_threads() -> None:
    # 50,000 terms: OpenBLAS splits a dot product this long between its threads, and the float then depends on
    # how many it has (the allowance was `base @ base`)
    base = np.random.default_rng(1).random(50_000)
    free = fft_allowance(1 << 17, 4, base)
    with one_blas_thread():
        assert fft_allowance(1 << 17, 4, base) == free


@pytest.mark.slow
@pytest.mark.parametrize("values", ["changing", "fixed"])
def test_t_rounds_curves_in_two_processes_give_the_one_process_bound(
        values: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper takes first curves from the last type on while this process takes them from the first, and
    bounds the next type to refine beside this one: every number must be the one-process float, and every bound
    must have been computed once, here or in the child (its bounds join the memos and are not computed again)."""
    from sufficientdp.accounting import rounds
    from sufficientdp.accounting.rounds import evaluate_rounds

    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    seen = record_from_child(monkeypatch, _offload.Pending)
    calls = [0]
    bound = proven._blanket_delta

    def counted(*args: object, **kwargs: object) -> float:
        calls[0] += 1
        return bound(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(proven, "_blanket_delta", counted)
    from_child = [0, 0]  # bounds the child computed, for first curves and for full ones
    adopt = rounds._Curves._adopt

    def counting_adopt(self: rounds._Curves, answer: list[tuple[str, object, dict[float, float], int]],
                       points: int, into: dict[str, object]) -> None:
        for name, _, memo, _ in answer:
            known = len(self.memos.get(self._key(name, points)[:-1], {}))  # (sent along: computed here before)
            from_child[points == proven.DEFAULT_POINTS] += len(memo) - known
        adopt(self, answer, points, into)  # type: ignore[arg-type]

    monkeypatch.setattr(rounds._Curves, "_adopt", counting_adopt)
    out, here, known = [], [], []
    for classes in (10**12, 0):  # one process, then two
        monkeypatch.setattr(proven, "_SPLIT_CLASSES", classes)
        ticks: list[tuple[int, int]] = []
        cache: dict[tuple[object, ...], object] = {}
        calls[0] = 0
        ev = evaluate_rounds(q=0.33, population=10**5, epsilon=2.0, n=3, domain=Domain(bits=9), values=values,
                             progress=lambda d, t: ticks.append((d, t)), cache=cache)
        out.append((ev, ticks[-1]))
        here.append(calls[0])
        memos = cast(dict[object, dict[float, float]], cache[("memos",)])
        known.append(sum(len(m) for m in memos.values()))
    (one, end_one), (two, end_two) = out
    assert seen and all(seen)  # the child answered every call
    assert from_child[0] > 0 and from_child[1] > 0  # first curves and full ones came from the child
    assert here[0] == known[0]  # one process: every bound once
    assert here[1] + sum(from_child) == known[1]  # two: every bound once, here or there
    assert here[1] < here[0]
    assert (two.eta.hex(), two.delta.hex(), two.epsilon_prime.hex(), two.worst, two.by_type, two.evaluations) == (
        one.eta.hex(), one.delta.hex(), one.epsilon_prime.hex(), one.worst, one.by_type, one.evaluations)
    assert [(c.name, c.epsilons.tolist(), c.deltas.tolist()) for c in two.curves] == [
        (c.name, c.epsilons.tolist(), c.deltas.tolist()) for c in one.curves]
    assert end_two == end_one  # the progress ends where it does in one process


@pytest.mark.slow
def test_a_t_round_calibration_shares_one_helper_and_finds_the_one_process_q(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The search of `calibration.rounds.rounds_q` holds one helper for all its evaluations (the small ones of a
    few pair types included): the same q and the same bound as in one process."""
    from sufficientdp.calibration.rounds import rounds_q

    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    started = [0]
    start = _offload.Helper.__init__

    def counted(self: _offload.Helper) -> None:
        started[0] += 1
        start(self)

    monkeypatch.setattr(_offload.Helper, "__init__", counted)
    seen = record_from_child(monkeypatch, _offload.Pending)
    out = []
    for classes in (10**12, 0):  # one process, then a helper
        monkeypatch.setattr(proven, "_SPLIT_CLASSES", classes)
        q, tail, notes = rounds_q(bits=9, population=10**5, epsilon=2.0, eta=1e-3, rounds=3)
        out.append((q.hex(), tail.eta.hex(), tail.delta_upper, tail.details["worst_pair"],
                    tail.details["bounds_evaluated"], notes))
    assert out[1] == out[0]
    assert started[0] == 1  # one helper for the whole search
    assert len(seen) > 1 and all(seen)  # its answers came from the child


def test_the_t_round_search_decides_its_helper_on_the_domain_it_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A weight domain with more pair types than the T-round bound enumerates is bounded as all of {0,1}^L: the
    search must not build the weight domain's own pair types to decide on its helper (at L = 256, w = 25 that
    alone ran out of memory)."""
    from sufficientdp.calibration import rounds as calibration_rounds

    built: list[Domain] = []
    original = calibration_rounds.pair_types

    def spy(domain: Domain, q: float) -> object:
        built.append(domain)
        return original(domain, q)

    monkeypatch.setattr(calibration_rounds, "pair_types", spy)
    weight = Domain.from_max_weight(10, 5)  # 85 pair types: bounded as all of {0,1}^10
    q, tail, _ = calibration_rounds.rounds_q(bits=10, population=10**4, epsilon=2.0, eta=1e-3, rounds=2,
                                             domain=weight)
    assert built == [Domain(bits=10)]
    assert 0 < q < 0.5 and tail.eta <= 1e-3
