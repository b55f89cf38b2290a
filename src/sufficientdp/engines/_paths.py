"""File names that DuckDB and Spark would read as glob patterns.

DuckDB's ``read_parquet``/``read_csv`` and Spark's (Hadoop's) readers expand ``*``, ``?``, ``[...]`` (and Hadoop
``{a,b}``) in the path they are given, so a report file named ``r[1].parquet`` would be read as ``r1.parquet``:
another file, counted without a word. The engines name exactly the file they were given:

* :func:`duckdb_readable` — a name with a glob character is read through a symbolic link with a plain name in a
  temporary folder (DuckDB has no escape for its patterns);
* :func:`hadoop_escaped` — glob characters escaped with a backslash, which Hadoop's pattern syntax reads literally.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .._errors import DataError

__all__ = ["duckdb_readable", "hadoop_escaped"]

_DUCKDB_GLOB = frozenset("*?[]{}")
_HADOOP_GLOB = frozenset("*?[]{}")  # (not the backslash itself: a Windows path separator)


@contextmanager
def duckdb_readable(path: Path) -> Iterator[Path]:
    """``path`` itself, or (when its text holds a glob character) a symbolic link to it with a plain name, removed
    on exit. Raises DataError naming the file when no link can be made (e.g. a platform without symlinks)."""
    if not _DUCKDB_GLOB.intersection(str(path)):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="sufficientdp-") as folder:
        link = Path(folder) / ("reports" + path.suffix.lower())
        try:
            link.symlink_to(path.resolve())
        except OSError as exc:
            raise DataError(f"cannot read {str(path)!r} with the duckdb engine: DuckDB reads * ? [ ] {{ }} in a file "
                            f"name as a pattern and no link with a plain name could be made ({exc.strerror}); "
                            "rename the file or use engine='numpy'") from None
        yield link


def hadoop_escaped(text: str) -> str:
    """``text`` with every Hadoop glob character escaped by a backslash (read literally by Spark's readers)."""
    return "".join("\\" + ch if ch in _HADOOP_GLOB else ch for ch in text)

