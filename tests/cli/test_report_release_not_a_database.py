"""report release on a file that is not a collector database: one line, exit 2, the file untouched and no page
written (bad-input sweep, session 11: it was an internal error, exit 1, where aggregate --database said so)."""

import pytest
from cli_run import run

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")


@pytest.mark.parametrize("content", [b"garbage" * 100, b"a,b\n0,1\n", b""])
def test_not_a_database_is_one_line_exit_2(tmp_path, capsys, content):
    db = tmp_path / "not.db"
    db.write_bytes(content)
    out = tmp_path / "r.html"
    code, stdout, err = run(capsys, "report", "release", "--database", str(db), "--campaign", "c1", "--output",
                            str(out))
    assert code == 2 and stdout == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "as a sufficientdp collector database" in lines[0], err
    assert not out.exists() and db.read_bytes() == content
