"""`serve`'s calibration-job options: checked against the collector's declared bounds before anything starts, one
line and exit 2 on a bad value, and passed to create_app as its keyword arguments."""

from __future__ import annotations

import argparse

import pytest
from tests.cli.cli_run import run

from sufficientdp.cli import _cmd_serve
from sufficientdp.service import jobs


@pytest.mark.parametrize(("option", "value", "allowed"), [
    ("--calibration-workers", "0", f"[1, {jobs.MAX_WORKERS}]"),
    ("--calibration-workers", str(jobs.MAX_WORKERS + 1), f"[1, {jobs.MAX_WORKERS}]"),
    ("--calibration-queue", "-1", f"[0, {jobs.MAX_QUEUE}]"),
    ("--calibration-time-limit", "nan", f"(0, {jobs.MAX_TIME_LIMIT:g}]"),
    ("--calibration-time-limit", "0", f"(0, {jobs.MAX_TIME_LIMIT:g}]"),
    ("--calibration-memory-mb", str((jobs.MIN_MEMORY_LIMIT >> 20) - 1), f"[{jobs.MIN_MEMORY_LIMIT >> 20}, "),
    ("--calibration-memory-mb", "lots", "an integer"),
])
def test_bad_job_limits_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path, option: str,
                                                value: str, allowed: str) -> None:
    code, out, err = run(capsys, "serve", "--database", str(tmp_path / "c.db"), option, value)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and option.lstrip("-") in err and allowed in err
    assert not (tmp_path / "c.db").exists()  # nothing started, nothing created


def test_job_limits_reach_create_app_with_their_units() -> None:
    parse = {o: _cmd_serve._job_limit(o) for o in ("calibration-workers", "calibration-queue",
                                                     "calibration-time-limit", "calibration-memory-mb")}
    args = argparse.Namespace(calibration_workers=parse["calibration-workers"]("3"),
                              calibration_queue=parse["calibration-queue"]("0"),
                              calibration_time_limit=parse["calibration-time-limit"]("12.5"),
                              calibration_memory_mb=parse["calibration-memory-mb"]("512"))
    assert _cmd_serve._job_limits(args) == {"calibration_workers": 3, "calibration_queue": 0,
                                            "calibration_time_limit": 12.5, "calibration_memory_limit": 512 << 20}
    none = argparse.Namespace(calibration_workers=None, calibration_queue=None, calibration_time_limit=None,
                              calibration_memory_mb=None)
    assert _cmd_serve._job_limits(none) == {}  # the collector's own defaults


def test_help_states_the_collectors_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "serve", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default {jobs.DEFAULT_QUEUE})" in text and f"(default {jobs.DEFAULT_TIME_LIMIT:g})" in text
    assert f"(default {jobs.DEFAULT_MEMORY_LIMIT >> 20})" in text and f"at most {jobs.MAX_WORKERS})" in text
