"""Validation helpers used at every public entry point (STYLE.md, habit 4)."""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from ._errors import ParameterError

__all__ = [
    "MAX_BITS",
    "MAX_EPSILON",
    "MAX_MC_SAMPLES",
    "MAX_POPULATION",
    "MAX_REPORTS",
    "check_confidence_level",
    "check_epsilon",
    "check_finite_real",
    "check_int",
    "check_reports",
    "check_rng",
    "check_open_interval",
    "check_population",
    "check_positive_finite",
    "renamed",
    "renamed_fields",
    "renamed_params",
]

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])


#: Largest privacy level the sufficient-DP analyses accept: lambda = e**50 ~ 5e21, far beyond any meaningful
#: guarantee (the CLI's --epsilon and campaigns use the same limit).
MAX_EPSILON = 50.0
#: Largest L (bits per report) the analyses accept (the CLI's --bits limit).
MAX_BITS = 4096
#: Largest N (people) the analyses accept (the CLI's --population limit).
MAX_POPULATION = 10**12
#: Most draws one Monte Carlo tail takes (its sample arrays: 0.8 GB each at the limit; the CLI's --samples limit).
MAX_MC_SAMPLES = 10**8
#: Largest k (reports per person) the analyses and the randomizer accept (the CLI's --reports limit).
MAX_REPORTS = 1000


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """Return ``value`` as a float if ``0 < value <= MAX_EPSILON``."""
    fvalue = _as_float(name, value, f"(0, {MAX_EPSILON:g}]")
    if not (0.0 < fvalue <= MAX_EPSILON):
        raise ParameterError(f"{name} must be in (0, {MAX_EPSILON:g}]; got {_describe(value)}")
    return fvalue


def check_reports(value: Any, name: str = "reports") -> int:
    """Return ``value`` as an int if it is an integer in ``[1, MAX_REPORTS]``."""
    return check_int(name, value, minimum=1, maximum=MAX_REPORTS)


def _describe(value: Any) -> str:
    return repr(value)


def check_int(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer in ``[minimum, maximum]``.

    Floats with an integral value (``3.0``) are accepted; ``bool`` and non-integral values are not. Every refusal
    states the whole range (a value of the wrong type too).
    """
    allowed = f">= {minimum}" + ("" if maximum is None else f" and <= {maximum}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be an integer {allowed}; got {_describe(value)}")
    if isinstance(value, numbers.Integral):
        ivalue = int(value)
    else:
        fvalue = float(value)
        if not math.isfinite(fvalue) or fvalue != math.floor(fvalue):
            raise ParameterError(f"{name} must be an integer {allowed}; got {_describe(value)}")
        ivalue = int(fvalue)
    if ivalue < minimum or (maximum is not None and ivalue > maximum):
        raise ParameterError(f"{name} must be an integer {allowed}; got {_describe(value)}")
    return ivalue


def _as_float(name: str, value: Any, range_text: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be a real number in {range_text}; got {_describe(value)}")
    fvalue = float(value)
    if math.isnan(fvalue):
        raise ParameterError(f"{name} must be a real number in {range_text}; got nan")
    return fvalue


def check_open_interval(name: str, value: Any, low: float, high: float) -> float:
    """Return ``value`` as a float if ``low < value < high``."""
    range_text = f"({low:g}, {high:g})"
    fvalue = _as_float(name, value, range_text)
    if not (low < fvalue < high):
        raise ParameterError(f"{name} must be in {range_text}; got {_describe(value)}")
    return fvalue


def check_confidence_level(confidence_level: Any, level: Any = None, *, default: float = 0.95) -> float:
    """The confidence level of intervals, in (0, 1), from ``confidence_level`` or its former name ``level``.

    One name per idea (``confidence_level``, as scipy.stats names it); ``level`` is still accepted with a
    DeprecationWarning. Giving both is an error.
    """
    if level is not None:
        if confidence_level is not None:
            raise ParameterError(f"give confidence_level or its former name level, not both; got "
                                 f"{_describe(confidence_level)} and {_describe(level)}")
        warnings.warn("level= is deprecated; use confidence_level=", DeprecationWarning, stacklevel=3)
        return check_open_interval("level", level, 0.0, 1.0)
    return check_open_interval("confidence_level", default if confidence_level is None else confidence_level,
                               0.0, 1.0)


def renamed(name: str, value: Any, old_name: str, old_value: Any, *, default: Any = None, stacklevel: int = 3) -> Any:
    """The value of parameter ``name``, also accepted under its former name ``old_name`` (DeprecationWarning).

    One name per idea (issue 11: ``population``, ``confidence_level``); the former name keeps working for a while.
    Giving both is a :class:`ParameterError`; giving neither returns ``default``. The value is not checked here.
    ``stacklevel`` is the warning's (3: the caller of the function that calls this one; one more per wrapper).
    """
    if old_value is None:
        return default if value is None else value
    if value is not None:
        raise ParameterError(f"give {name} or its former name {old_name}, not both; got {_describe(value)} and "
                             f"{_describe(old_value)}")
    warnings.warn(f"{old_name}= is deprecated; use {name}=", DeprecationWarning, stacklevel=stacklevel)
    return old_value


def check_population(population: Any, n: Any = None, *, minimum: int = 1) -> int:
    """The number of people, required, from ``population`` or its former name ``n`` (a DeprecationWarning at the
    public function's caller: call this directly from the public function)."""
    value = renamed("population", population, "n", n, stacklevel=4)
    if value is None:
        raise ParameterError(f"population must be given (an integer >= {minimum}); got None")
    return check_int("population", value, minimum=minimum)


def renamed_params(renames: Mapping[str, str]) -> Callable[[_F], _F]:
    """Function decorator: former parameter names, ``{old: new}``, still work as keywords, with a DeprecationWarning at
    the caller's line (both is a :class:`ParameterError`). Positional calls are unchanged; the signature shows the new
    names only."""
    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise ParameterError(f"give {new} or its former name {old}, not both")
                    warnings.warn(f"{old}= is deprecated; use {new}=", DeprecationWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def renamed_fields(renames: Mapping[str, str]) -> Callable[[type[_T]], type[_T]]:
    """Class decorator (above ``@dataclass``): former field names, ``{old: new}``, still work, with a warning.

    The constructor (and :func:`dataclasses.replace`) accepts ``old=`` for ``new=`` with a DeprecationWarning (both
    is a :class:`ParameterError`); ``obj.old`` is a read-only property that warns and returns ``obj.new``.
    """
    def decorate(cls: type[_T]) -> type[_T]:
        init = cls.__init__

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise ParameterError(f"give {new} or its former name {old}, not both")
                    warnings.warn(f"{cls.__name__}({old}=...) is deprecated; use {new}=", DeprecationWarning,
                                  stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            init(self, *args, **kwargs)

        cls.__init__ = __init__  # type: ignore[method-assign]
        for old, new in renames.items():
            def getter(self: Any, old: str = old, new: str = new) -> Any:
                warnings.warn(f"{type(self).__name__}.{old} is deprecated; use .{new}", DeprecationWarning,
                              stacklevel=2)
                return getattr(self, new)

            setattr(cls, old, property(getter, doc=f"Deprecated: the former name of :attr:`{new}`."))
        return cls

    return decorate


def check_choice(name: str, value: Any, allowed: tuple[str, ...],
                 aliases: Mapping[str, str] | None = None) -> str:
    """``value`` if it is one of ``allowed`` (or the value an alias of ``aliases`` stands for), else ParameterError.

    The check of a word from a fixed vocabulary: every direction vocabulary
    (:class:`~sufficientdp.loss.result.Direction`, and the ``"add"``/``"remove"`` words that name different pairs)
    goes through it. The message names the parameter, the value and the allowed values (aliases included):
    ``"direction must be one of add, remove; got 'up'"``.

    Examples:
        >>> check_choice("direction", "add", ("add", "remove"))
        'add'
        >>> check_choice("outlier_in", "original", ("forward", "reverse"), {"original": "reverse"})
        'reverse'
    """
    aliases = aliases or {}
    if isinstance(value, str):
        if value in allowed:
            return str(value)
        if value in aliases and aliases[value] in allowed:
            return str(aliases[value])
    usable = [f"{a!r} = {c!r}" for a, c in aliases.items() if c in allowed]
    alias_text = f" (or the alias{'es' if len(usable) > 1 else ''} {', '.join(usable)})" if usable else ""
    listed = ", ".join(allowed)
    raise ParameterError(f"{name} must be one of {listed}{alias_text}; got {value!r}")


def check_positive_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is finite and ``> 0``."""
    range_text = "(0, inf)"
    fvalue = _as_float(name, value, range_text)
    if not (0.0 < fvalue < math.inf):
        raise ParameterError(f"{name} must be finite and > 0, i.e. in {range_text}; got {_describe(value)}")
    return fvalue


def check_finite_real(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a finite real number (not a bool, an array or a string)."""
    fvalue = _as_float(name, value, "(-inf, inf)")
    if not math.isfinite(fvalue):
        raise ParameterError(f"{name} must be a finite real number; got {_describe(value)}")
    return fvalue


def check_real_array(name: str, value: Any, *, low: float, high: float, closed_low: bool = False,
                     closed_high: bool = False, allow_empty: bool = False) -> NDArray[np.float64]:
    """Return ``value`` as a non-empty float64 array whose entries lie in the interval (closed ends as asked).

    ``high`` may be ``inf`` (entries must then be finite). The message names the parameter, the value and the
    interval, e.g. ``level must be in (0, 1); got 1.5``.
    """
    import numpy as np

    lo_br, hi_br = ("[" if closed_low else "("), ("]" if closed_high and math.isfinite(high) else ")")
    interval = f"{lo_br}{low:g}, {'inf' if high == math.inf else f'{high:g}'}{hi_br}"
    message = f"{name} must be {'finite and ' if high == math.inf else ''}in {interval}; got {value!r}"
    if isinstance(value, bool):
        raise ParameterError(message)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(message) from None
    ok = np.isfinite(arr)
    ok &= (arr >= low) if closed_low else (arr > low)
    ok &= (arr <= high) if closed_high else (arr < high)
    if (arr.size == 0 and not allow_empty) or not bool(np.all(ok)):
        raise ParameterError(message)
    return arr


def check_nonnegative_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is finite and ``>= 0``."""
    range_text = "[0, inf)"
    fvalue = _as_float(name, value, range_text)
    if not (0.0 <= fvalue < math.inf):
        raise ParameterError(f"{name} must be finite and >= 0, i.e. in {range_text}; got {_describe(value)}")
    return fvalue


def check_rng(rng: Any) -> np.random.Generator:
    """A numpy Generator from ``rng`` (a Generator, an int seed or None for fresh entropy); else ParameterError."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise ParameterError(f"rng must be a numpy.random.Generator, an int seed or None; got {rng!r}")
