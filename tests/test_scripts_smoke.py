"""Every script of ``scripts/`` imports: the names it takes from the package and the test oracles exist (a renamed
function broke ``scripts/lifetime_figure.py`` unnoticed once). The scripts only call the package (issue 11); their
logic is tested through it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "scripts").glob("*.py"))


@pytest.mark.slow
def test_every_script_imports() -> None:
    assert "reproduce_001.py" in SCRIPTS and len(SCRIPTS) >= 10
    code = ("import runpy, sys; sys.path.insert(0, 'scripts')\n"
            "for name in sys.argv[1:]:\n"
            "    runpy.run_path('scripts/' + name, run_name='_smoke')\n")
    done = subprocess.run([sys.executable, "-c", code, *SCRIPTS], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin",
                                            "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-2000:]
