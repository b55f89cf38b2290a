"""The design report's second process (issue 10): the homogeneous calibration runs beside the rest of the report
in a fresh interpreter (:mod:`sufficientdp._offload`). The report's numbers must not depend on it, an error
of the call must come back as the same error, and a child that cannot run must not change the answer."""

from __future__ import annotations

import os
import sys
import time

import pytest

from sufficientdp import _offload, calibrate
from sufficientdp._errors import ParameterError
from sufficientdp._offload import Offloaded, Offloads
from sufficientdp.report import design

pytest.importorskip("jinja2")

SMALL = {"bits": 3, "population": 200, "epsilon": 1.0, "eta": 0.01}


def test_the_call_runs_in_another_process() -> None:
    with Offloads() as calls:
        call = calls.start(os.getpid, {})
        pid = call.result()
    assert call.from_child and isinstance(pid, int) and pid != os.getpid()


def test_a_calibration_in_the_child_equals_one_here() -> None:
    kwargs = {"method": "homogeneous", **SMALL}
    with Offloads() as calls:
        there = calls.start(calibrate, kwargs).result()
    assert there == calibrate(**kwargs)


def test_the_calls_error_comes_back_as_the_same_error() -> None:
    kwargs = {"method": "homogeneous", **SMALL, "bits": 0}
    with pytest.raises(ParameterError) as here:
        calibrate(**kwargs)
    with Offloads() as calls, pytest.raises(ParameterError) as there:
        call = calls.start(calibrate, kwargs)
        call.result()
    assert call.from_child and str(there.value) == str(here.value)


@pytest.mark.parametrize("executable", ["/bin/false", "/nonexistent/python"])
def test_a_child_that_cannot_run_leaves_the_call_to_this_process(monkeypatch: pytest.MonkeyPatch,
                                                                 executable: str) -> None:
    monkeypatch.setattr(sys, "executable", executable)
    with Offloads() as calls:
        call = calls.start(os.getpid, {})
        assert call.result() == os.getpid() and not call.from_child


def test_leaving_the_block_stops_a_running_child() -> None:
    with Offloads() as calls:
        call = calls.start(calibrate, {"method": "homogeneous", "bits": 256, "population": 10**7, "epsilon": 1.0})
        time.sleep(0.5)
        proc = call._proc
        assert proc is not None and proc.poll() is None  # still computing
    assert proc.returncode is not None and proc.returncode < 0  # killed, not finished


@pytest.mark.slow
@pytest.mark.parametrize("method", ["proven", "local"])
def test_the_report_is_the_same_with_and_without_the_second_process(monkeypatch: pytest.MonkeyPatch,
                                                                    method: str) -> None:
    args = {"bits": 5, "population": 1000, "epsilon": 0.693147, "method": method}
    monkeypatch.setattr(design, "spare_core", lambda: True)
    started: list[Offloaded] = []
    real_start = Offloads.start

    def start(self: Offloads, fn: object, kwargs: dict[str, object]) -> Offloaded:
        call = real_start(self, fn, kwargs)  # type: ignore[arg-type]
        started.append(call)
        return call

    monkeypatch.setattr(Offloads, "start", start)
    beside = design.design_numbers(**args)
    assert len(started) == 1 and started[0].from_child  # the homogeneous row came from the child
    monkeypatch.setattr(design, "spare_core", lambda: False)
    alone = design.design_numbers(**args)
    assert len(started) == 1
    assert beside == alone
    row = next(r for r in beside["methods"] if r["method"] == "homogeneous")
    assert row["available"] and row["q"] == calibrate(method="homogeneous", bits=5, population=1000,
                                                      epsilon=0.693147).q


def test_spare_core_reads_the_affinity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_offload.os, "sched_getaffinity", lambda pid: {0})
    assert not _offload.spare_core()
    monkeypatch.setattr(_offload.os, "sched_getaffinity", lambda pid: {0, 1})
    assert _offload.spare_core()


@pytest.mark.slow
def test_figures_drawn_while_waiting_are_those_drawn_at_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    # the figures that do not show the methods are drawn from the numbers before the homogeneous row arrives
    args = {"bits": 5, "population": 1000, "epsilon": 0.693147}
    partial: list[dict[str, object]] = []
    real = design._figures_without_methods

    def spy(numbers: dict[str, object]) -> dict[str, str]:
        partial.append(numbers)
        return real(numbers)

    monkeypatch.setattr(design, "_figures_without_methods", spy)
    monkeypatch.setattr(design, "spare_core", lambda: True)
    beside = design.design_report(**args)
    assert len(partial) == 1  # once, while waiting (not again at the end)
    waiting = partial[0]["methods"]
    assert isinstance(waiting, list) and {} in waiting  # drawn before the homogeneous row was filled
    monkeypatch.setattr(design, "spare_core", lambda: False)
    alone = design.design_report(**args)
    assert len(partial) == 2  # at the end this time
    assert list(beside.figures) == list(alone.figures) == ["sigma_vs_q", "eta_vs_q", "methods_comparison",
                                                          "power_vs_level", "noise_vs_k", "ratio_distribution"]
    assert beside.figures == alone.figures and beside.html == alone.html
