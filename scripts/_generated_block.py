"""Write a generated block into a Markdown document between two marker comments (shared by the report scripts)."""

from __future__ import annotations

from pathlib import Path


def splice(path: Path, begin: str, end: str, generated: str, title: str | None = None) -> None:
    """Replace the text between ``begin`` and ``end`` in ``path`` by ``generated`` (which holds both markers).

    Without the markers the block is appended; a missing file is created, headed by ``title`` if given.
    """
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            _, tail = rest.split(end, 1)
            text = head + generated + tail
        else:
            text = text.rstrip("\n") + "\n\n" + generated + "\n"
    else:
        text = (f"# {title}\n\n" if title else "") + generated + "\n"
    path.write_text(text, encoding="utf-8")
