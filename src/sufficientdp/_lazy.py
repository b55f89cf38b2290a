"""Lazy package attributes (PEP 562): a package names its public objects and the module each lives in, and the
module is imported on first access (fast start-up: a command loads only what it uses; issue 10)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, names: Mapping[str, str],
                 submodules: frozenset[str] = frozenset()) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``names`` maps a public name to the (relative) module defining it, and a
    name in ``submodules`` is the submodule itself. A loaded name is cached in the package's namespace, so the
    next access does not come here again."""

    def __getattr__(name: str) -> Any:
        if name in submodules:
            return importlib.import_module(f".{name}", package)
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
