"""Test modules are imported by basename (pytest's default import mode, no __init__.py in tests/): two test files
with one name in different folders stop the whole suite at collection. This keeps the names unique."""

from collections import Counter
from pathlib import Path


def test_test_module_basenames_are_unique() -> None:
    root = Path(__file__).parent
    names = Counter(p.name for p in root.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
