"""In-process CLI runners shared by the CLI tests."""

import json

from sufficientdp.cli.main import main


def run(capsys, *argv):
    """Exit code, stdout and stderr of ``sufficientdp *argv``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    """The single JSON object printed by ``sufficientdp *argv --json`` (which must succeed)."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])
