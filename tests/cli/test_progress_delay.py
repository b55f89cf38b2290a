"""Progress bars appear only on work that runs longer than two seconds (a quick command's stderr stays clean)."""

from __future__ import annotations

import importlib

import pytest

cli_main = importlib.import_module("sufficientdp.cli.main")


def test_quick_work_draws_no_bar(capsys: pytest.CaptureFixture[str]) -> None:
    bar = cli_main._step_progress(True, "calibrate (proven search)")
    for done in range(1, 41):
        bar(done, 40)
    bar.close()
    assert capsys.readouterr().err == ""


def test_long_work_draws_a_bar(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import tqdm.std

    clock = [1000.0]
    monkeypatch.setattr(tqdm.std, "time", lambda: clock[0])
    bar = cli_main._step_progress(True, "calibrate (proven search)")
    bar(1, 40)
    clock[0] += 2.5  # two and a half seconds later
    bar(2, 40)
    bar.close()
    err = capsys.readouterr().err
    assert "calibrate (proven search)" in err and "2/40" in err


def test_disabled_bar_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    bar = cli_main._step_progress(False, "tail (proven)")
    bar(5, 10)
    bar.close()
    assert capsys.readouterr().err == ""
