"""A spy shared by the tests of the second process (`sufficientdp._offload`): which answers came from the child."""

from __future__ import annotations

from typing import Any

import pytest


def record_from_child(monkeypatch: pytest.MonkeyPatch, cls: Any) -> list[bool]:
    """From now on, every ``cls.result()`` (``Offloaded`` or ``Pending``) appends whether its answer came from the
    child process (``from_child``) to the returned list."""
    seen: list[bool] = []
    original = cls.result

    def result(self: Any) -> Any:
        value = original(self)
        seen.append(bool(self.from_child))
        return value

    monkeypatch.setattr(cls, "result", result)
    return seen
