"""Immutable containers for results (STYLE.md: results are immutable; issue 11: "frozen" results were mutable).

``freeze`` turns nested dicts into :class:`FrozenDict`, lists into tuples and numpy arrays into read-only copies;
``thaw`` turns a frozen structure back into plain JSON-ready dicts and lists; ``data_frame`` builds the
``pandas.DataFrame`` of a table-shaped result's ``to_pandas()`` (pandas imported only then).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

import numpy as np

__all__ = ["FrozenDict", "data_frame", "freeze", "readonly", "thaw"]


class FrozenDict(Mapping[str, Any]):
    """A read-only, hashable-free mapping that pickles, compares equal to a dict with the same items, and serializes
    with :func:`thaw`."""

    __slots__ = ("_data",)
    _data: dict[str, Any]

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(items or {}))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (self._data,))

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("FrozenDict is read-only")


def readonly(a: Any, dtype: Any = None) -> np.ndarray:
    """A read-only copy of ``a`` as a numpy array."""
    out = np.array(a, dtype=dtype, copy=True)
    out.flags.writeable = False
    return out


def freeze(obj: Any) -> Any:
    """Deep-frozen copy: dicts become :class:`FrozenDict`, lists and tuples tuples, arrays read-only copies."""
    if isinstance(obj, Mapping):
        return FrozenDict({k: freeze(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return tuple(freeze(v) for v in obj)
    if isinstance(obj, np.ndarray):
        return readonly(obj)
    return obj


def thaw(obj: Any) -> Any:
    """Plain, JSON-ready copy of a frozen structure: mappings become dicts, tuples lists, arrays lists."""
    if isinstance(obj, Mapping):
        return {k: thaw(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [thaw(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return obj


def data_frame(columns: Mapping[str, Any], *, index: str | None = None) -> Any:
    """A ``pandas.DataFrame`` of equal-length ``columns`` (in order), indexed by column ``index`` when given.

    pandas is imported here, on demand (the core imports only numpy and scipy).

    Raises:
        ImportError: pandas is not installed (``pip install 'sufficientdp[pandas]'``).
    """
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("to_pandas() needs pandas: pip install 'sufficientdp[pandas]'") from exc
    frame = pd.DataFrame({name: list(values) if isinstance(values, tuple) else values
                          for name, values in columns.items()})
    return frame.set_index(index) if index is not None else frame
