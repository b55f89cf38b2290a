"""docs/design.md's module index names every module of the package (issue 11: the docs name the module where each
concept lives), and is current: regenerate it with ``python scripts/module_index.py --output docs/design.md``."""

from __future__ import annotations

from pathlib import Path

from sufficientdp.report.module_index import BEGIN, END, _summary, generate, modules

ROOT = Path(__file__).resolve().parents[1]


def test_design_md_module_index_is_current() -> None:
    doc = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    block = BEGIN + doc.split(BEGIN, 1)[1].split(END, 1)[0] + END
    assert block == generate(), "docs/design.md's module index is stale: run scripts/module_index.py --output docs/design.md"


def test_every_module_file_is_listed() -> None:
    pkg = ROOT / "src" / "sufficientdp"
    files = [p for p in pkg.rglob("*.py") if p.name != "__main__.py" and "__pycache__" not in p.parts]
    names = {name for name, _ in modules(pkg)}
    assert len(names) == len(files)
    assert {"sufficientdp.ratio.single_bit", "sufficientdp.service.routers.campaigns", "sufficientdp"} <= names


def test_summary_shortens_at_a_clause_and_rewrites_roles() -> None:
    assert _summary(None) == "(no module docstring)"
    assert _summary("Uses :func:`~a.b` and ``c``.\n\nMore.") == "Uses `a.b` and `c`."
    long = "word " * 30 + "; " + "tail " * 40
    out = _summary(long)
    assert out.endswith(" …") and len(out) <= 242 and "tail" not in out
