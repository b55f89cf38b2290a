"""Progress bars appear only on work that runs longer than two seconds (a quick command's stderr stays clean)."""

from __future__ import annotations

import importlib

import pytest

cli_common = importlib.import_module("sufficientdp.cli._common")


def test_quick_work_draws_no_bar(capsys: pytest.CaptureFixture[str]) -> None:
    bar = cli_common.step_progress(True, "calibrate (proven search)")
    for done in range(1, 41):
        bar(done, 40)
    bar.close()
    assert capsys.readouterr().err == ""


def test_long_work_draws_a_bar(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import tqdm.std

    clock = [1000.0]
    monkeypatch.setattr(tqdm.std, "time", lambda: clock[0])
    monkeypatch.setattr(cli_common, "clock", lambda: clock[0])
    bar = cli_common.step_progress(True, "calibrate (proven search)")
    bar(1, 40)
    assert bar.bar is None  # no tqdm yet (a quick command does not import it)
    clock[0] += 1.2
    bar(2, 40)  # the bar is created, not drawn
    assert bar.bar is not None and capsys.readouterr().err == ""
    clock[0] += 1.3  # two and a half seconds after the start
    bar(3, 40)
    bar.close()
    err = capsys.readouterr().err
    assert "calibrate (proven search)" in err and "3/40" in err


def test_quick_command_does_not_import_tqdm() -> None:
    import subprocess
    import sys

    code = ("import sys; from sufficientdp.cli.main import main; main(['account', '--mechanism', 'shuffled-rr', "
            "'--population', '2000', '--q', '0.25', '--epsilon', '0.1']); print('tqdm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False"


def test_disabled_bar_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    bar = cli_common.step_progress(False, "tail (proven)")
    bar(5, 10)
    bar.close()
    assert capsys.readouterr().err == ""
