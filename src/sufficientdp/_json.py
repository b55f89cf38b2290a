"""Results as strict JSON, one rule for every writer (the command line's ``--json``, the reports' embedded numbers,
the saved results of ``docs/proven_bound.md``).

JSON has no NaN and no infinity (Python's ``json`` writes the non-standard tokens ``NaN`` and ``Infinity``, which
other parsers reject). An infinite float becomes the string ``"inf"`` or ``"-inf"``: an infinite epsilon or bound is
a result, not a missing one (issue 11: writing it as ``null`` made "infinite" read like "not computed"). NaN becomes
``null``, "not computed". :func:`restore_infinities` turns the strings back into floats for a reader of a file this
module wrote.

No math here: plain containers only (numpy for its scalar and array types).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["dumps", "jsonable", "restore_infinities"]

_INFINITIES = {"inf": math.inf, "-inf": -math.inf}


def _key(k: Any) -> str:
    """A mapping key as the string ``json`` would write for it (``true``, ``null``, ``3``, ``0.5``); other keys
    (tuples, ...) as ``str(k)``."""
    if isinstance(k, np.generic):
        k = k.item()
    if isinstance(k, str):
        return k
    if isinstance(k, (bool, int, float)) or k is None:
        return json.dumps(k)
    return str(k)


def jsonable(obj: Any, *, fallback: Callable[[Any], Any] | None = None) -> Any:
    """``obj`` as plain JSON values, at any depth: a finite float stays, ``±inf`` becomes ``"inf"``/``"-inf"``, NaN
    becomes ``None``; mappings (read-only result mappings too) become dicts with string keys, lists, tuples, sets and numpy arrays
    become lists, numpy scalars become Python scalars.

    Args:
        obj: the value to convert.
        fallback: applied to any other object (e.g. ``str``); without it such an object raises TypeError.

    Returns:
        A structure ``json.dumps(..., allow_nan=False)`` writes.

    Raises:
        TypeError: an object of another type and no ``fallback``.

    Examples:
        >>> jsonable({"eps": float("inf"), "delta": float("nan"), "q": (0.25, np.float64(-np.inf))})
        {'eps': 'inf', 'delta': None, 'q': [0.25, '-inf']}
    """
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):  # numpy float64 too
        if math.isnan(obj):
            return None
        return float(obj) if math.isfinite(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, np.generic):  # other numpy scalars: integers, float32, bool_
        return jsonable(obj.item(), fallback=fallback)
    if isinstance(obj, Mapping):
        return {_key(k): jsonable(v, fallback=fallback) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v, fallback=fallback) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist(), fallback=fallback)
    if fallback is None:
        raise TypeError(f"{type(obj).__name__} is not JSON serializable")
    return jsonable(fallback(obj))


def dumps(obj: Any, *, fallback: Callable[[Any], Any] | None = None, **kwargs: Any) -> str:
    """``json.dumps(jsonable(obj, fallback=fallback), allow_nan=False, **kwargs)``: strict JSON, never ``NaN`` or
    ``Infinity``."""
    return json.dumps(jsonable(obj, fallback=fallback), allow_nan=False, **kwargs)


def restore_infinities(obj: Any) -> Any:
    """The inverse of :func:`jsonable` for infinities: every string ``"inf"`` / ``"-inf"`` (at any depth of parsed
    JSON) becomes the float again. For files whose string fields can never be exactly those words."""
    if isinstance(obj, str):
        return _INFINITIES.get(obj, obj)
    if isinstance(obj, dict):
        return {k: restore_infinities(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [restore_infinities(v) for v in obj]
    return obj
