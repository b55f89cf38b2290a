"""The helper process (`sufficientdp._offload.Helper`, issue 10): many short calls run one after another in one
fresh interpreter, two at a time with this process (`ratio.proven._in_pairs`). The values must be those computed
here, an error must come back where the one-at-a-time loop raises it, and a helper that cannot run must leave the
calls to this process."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from tests.offload_spies import record_from_child

from sufficientdp import _offload
from sufficientdp._errors import ParameterError
from sufficientdp._offload import Helper, current_helper, helper_process
from sufficientdp.parameters import local_q
from sufficientdp.ratio import proven
from sufficientdp.ratio.proven import _in_pairs, proven_tail, single_bit_larger_crowds


def test_calls_run_one_after_another_in_one_child() -> None:
    helper = Helper()
    try:
        first = helper.submit(os.getpid, {})
        pid = first.result()
        second = helper.submit(os.getpid, {})
        assert second.result() == pid != os.getpid()  # the same child both times, not this process
        assert first.from_child and second.from_child
        value = helper.submit(local_q, {"bits": 7, "epsilon": 1.5, "reports": 2})
        assert value.result() == local_q(7, 1.5, 2)
    finally:
        helper.close()
    assert not helper.alive


def test_the_calls_error_comes_back_and_the_helper_goes_on() -> None:
    helper = Helper()
    try:
        bad = helper.submit(proven_tail, {"q": 0.7, "bits": 3, "population": 100, "epsilon": 1.0})
        with pytest.raises(ParameterError, match="q"):
            bad.result()
        assert bad.from_child and helper.alive
        assert helper.submit(os.getpid, {}).result() != os.getpid()
        helper.submit(os.getpid, {})
        with pytest.raises(RuntimeError, match="one call at a time"):
            helper.submit(os.getpid, {})
    finally:
        helper.close()


def test_a_helpers_child_starts_no_child_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_offload.os, "sched_getaffinity", lambda pid: {0, 1})
    assert _offload.spare_core()  # (here: two cores)
    helper = Helper()
    try:
        call = helper.submit(_offload.spare_core, {})
        assert call.result() is False and call.from_child  # (so helper_process and worth_a_helper start none there)
    finally:
        helper.close()


def test_a_helper_that_cannot_start_leaves_the_calls_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    helper = Helper()
    assert not helper.alive
    call = helper.submit(os.getpid, {})
    assert call.result() == os.getpid() and not call.from_child


def test_the_block_gives_its_helper_and_ends_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    assert current_helper() is None
    with helper_process(enabled=False) as none:
        assert none is None and current_helper() is None
    with helper_process() as helper:
        assert helper is not None and current_helper() is helper
    assert current_helper() is None and not helper.alive
    monkeypatch.setattr(_offload, "spare_core", lambda: False)
    with helper_process() as helper:
        assert helper is None  # one core: no second process


def _calls(n: int) -> list[dict[str, object]]:
    return [{"bits": 1 + i, "epsilon": 0.5 + 0.25 * i} for i in range(n)]


@pytest.mark.parametrize("n", [1, 4, 5])
def test_in_pairs_gives_the_values_in_order(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    alone = list(_in_pairs(local_q, _calls(n)))
    with helper_process():
        paired = list(_in_pairs(local_q, _calls(n)))
    assert paired == alone == [local_q(1 + i, 0.5 + 0.25 * i) for i in range(n)]


def test_in_pairs_raises_where_the_loop_would(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    calls: list[dict[str, object]] = [
        {"q": 0.3, "bits": 1, "population": 50, "epsilon": 1.0},
        {"q": 0.7, "bits": 1, "population": 50, "epsilon": 1.0},  # out of range: ParameterError, in the helper
    ]
    with helper_process():
        it = _in_pairs(proven_tail, calls)
        assert next(it).eta == proven_tail(**calls[0]).eta  # (the helper's error is held back)
        with pytest.raises(ParameterError):
            next(it)
        # a consumer that stops before the failing call never sees its error, and the helper stays usable
        for r in _in_pairs(proven_tail, calls):
            assert r.eta >= 0.0
            break
        helper = current_helper()
        assert helper is not None and helper.submit(os.getpid, {}).result() != os.getpid()


@pytest.mark.slow
@pytest.mark.parametrize("population", [200, 5000])  # the window of exact values, and delta alone (N >= 1000)
def test_larger_crowds_with_the_helper_is_the_bound_without(population: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    assert population + proven.LARGER_CROWDS_WINDOW <= proven.EXACT_L1_MAX_POPULATION
    alone = single_bit_larger_crowds(q=0.2, population=population, epsilon=1.0)
    seen = record_from_child(monkeypatch, _offload.Pending)
    with helper_process():
        paired = single_bit_larger_crowds(q=0.2, population=population, epsilon=1.0)
    assert seen and all(seen)  # some of its values came from the helper
    assert paired.eta == alone.eta and paired.details["bound"] == alone.details["bound"]


@pytest.mark.slow
def test_larger_crowds_calibration_with_the_helper_is_the_one_without(monkeypatch: pytest.MonkeyPatch) -> None:
    from sufficientdp import calibrate

    seen = record_from_child(monkeypatch, _offload.Pending)
    out = []
    for cores in (False, True):
        monkeypatch.setattr(_offload, "spare_core", lambda cores=cores: cores)
        c = calibrate(bits=1, population=2000, epsilon=2.0, eta=0.001, larger_crowds=True)
        out.append((c.q.hex(), c.eta_at_q))
        assert bool(seen) is cores and all(seen)  # the helper only with a spare core; then every pair used it
    assert out[0] == out[1]


def test_an_error_here_stops_the_helper_without_waiting_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_offload, "spare_core", lambda: True)
    bad = {"q": 0.7, "bits": 1, "population": 50, "epsilon": 1.0}  # computed here: ParameterError
    good = {"q": 0.3, "bits": 1, "population": 50, "epsilon": 1.0}  # sent to the helper meanwhile
    with helper_process() as helper:
        assert helper is not None
        with pytest.raises(ParameterError):
            list(_in_pairs(proven_tail, [bad, good]))
        assert not helper.alive and current_helper() is None  # stopped, its answer never read
        assert [r.eta for r in _in_pairs(proven_tail, [good, good])] == [proven_tail(**good).eta] * 2  # (here)


def test_a_frozen_application_starts_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    # (its executable is the application itself: `app -m sufficientdp._offload` would start the application)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    helper = Helper()
    assert not helper.alive
    call = helper.submit(os.getpid, {})
    assert call.result() == os.getpid() and not call.from_child
    once = _offload.Offloaded(os.getpid, {})
    assert once.result() == os.getpid() and not once.from_child


def test_from_both_ends_takes_each_item_once_and_stops_as_asked() -> None:
    import threading
    import time

    from sufficientdp._offload import from_both_ends

    items = list(range(40))
    seen: dict[int, str] = {}
    lock = threading.Lock()

    def side(name: str, pause: float, stop_at: int | None = None) -> Any:
        def call(i: int) -> bool:
            time.sleep(pause)
            with lock:
                assert i not in seen
                seen[i] = name
            return i == stop_at

        return call

    from_both_ends(items, side("here", 0.002), side("there", 0.001))
    assert sorted(seen) == items  # every item once
    assert {seen[0], seen[39]} == {"here", "there"}  # here from the first, there from the last
    assert all(seen[i] == "here" for i in range(max(i for i in seen if seen[i] == "here") + 1))
    seen.clear()
    from_both_ends(items, side("here", 0.002, stop_at=3), side("there", 0.002))
    assert 3 in seen and all(i not in seen for i in range(4, 8))  # here's stop ends both sides (there: from 39)
    seen.clear()
    from_both_ends(items, side("here", 0.004), side("there", 0.001, stop_at=37))
    assert sorted(seen) == items and [seen[i] for i in (37, 38, 39)] == ["there"] * 3  # there stopped after 37
    assert all(seen[i] == "here" for i in range(37))  # here took every item left
    seen.clear()

    def boom(i: int) -> None:
        raise ValueError(f"item {i}")

    with pytest.raises(ValueError, match="item 39"):
        from_both_ends(items, side("here", 0.001), boom)
    with pytest.raises(ValueError, match="item 0"):
        from_both_ends(items, boom, side("there", 0.001))
