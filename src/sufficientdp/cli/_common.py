"""What every command of the ``sufficientdp`` command line shares: the one-line usage error and its parser, option
types with declared domains, JSON output and progress bars.

``main`` and the command modules ``cli/_cmd_*.py`` import this module at their top; no command module imports
``main`` (an import-linter contract checks it), so the command line has no import cycle. Light on purpose (numpy
and the calibration methods' names only): it is imported on every start.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from .._json import dumps
from ..calibration.methods import METHODS

__all__ = ["BAR_AFTER", "FLOAT_DOMAINS", "INT_LIMITS", "MAX_SEED", "Parser", "StepProgress", "UsageError",
           "calibration_options", "emit", "method_choice", "positive_int", "progress_bar", "real", "seed",
           "step_progress"]


class UsageError(Exception):
    """A command-line mistake: printed as one line on stderr, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are :class:`UsageError` (one line, exit 2) instead of usage and exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


# ---------------------------------------------------------------------------------------------------- output
def emit(obj: dict[str, Any]) -> None:
    """Print ``obj`` as one line of strict JSON on stdout (what every command's ``--json`` prints): ``±inf`` as
    ``"inf"``/``"-inf"`` (an infinite epsilon is a result, not a missing one), NaN as null ("not computed"); see
    :mod:`sufficientdp._json`."""
    sys.stdout.write(dumps(obj) + "\n")


# ---------------------------------------------------------------------------------------------------- progress
def progress_bar(total: int, enabled: bool, desc: str, delay: float = 2.0) -> Any:
    """A tqdm progress bar on stderr when available and enabled (drawn once the work has run ``delay`` seconds: a
    quick command prints nothing); otherwise a no-op object."""
    if enabled:
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, unit="rows", file=sys.stderr, leave=False, delay=delay)
        except ImportError:
            pass

    class _Null:
        def update(self, n: int) -> None:
            pass

        def close(self) -> None:
            pass

    return _Null()


#: The progress clock (a module attribute so that the tests can move it).
clock = time.monotonic
#: Seconds of work before a progress bar is created (tqdm costs about 0.1 s to import: a quick command never pays
#: it; the bar is still drawn two seconds after the start).
BAR_AFTER = 1.0


class StepProgress:
    """A ``progress(done, total)`` callback drawing a tqdm bar on stderr, created by the first call made at least
    :data:`BAR_AFTER` seconds after this object and drawn two seconds after it."""

    def __init__(self, enabled: bool, desc: str, unit: str = "steps") -> None:
        self.enabled = enabled
        self.desc = desc
        self.unit = unit
        self.bar: Any = None
        self.start = clock()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            waited = clock() - self.start
            if waited < BAR_AFTER:
                return
            self.bar = progress_bar(total, True, self.desc, delay=max(0.0, 2.0 - waited))
            self.bar_done = 0
            if hasattr(self.bar, "unit"):
                self.bar.unit = self.unit
        self.bar.update(done - self.bar_done)
        self.bar_done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def step_progress(enabled: bool, desc: str, unit: str = "steps") -> StepProgress:
    """A :class:`StepProgress` (``enabled``: draw it at all; a ``--json`` or ``--quiet`` command passes False)."""
    return StepProgress(enabled, desc, unit)


# ---------------------------------------------------------------------------------------------------- option types
#: Upper limits of the integer options (each is checked >= 1 and <= its limit before any work). They bound the work
#: a command can be asked to do; the library's own limits are at least as wide.
INT_LIMITS = {
    "bits": 4096, "max-weight": 4096, "outlier-bits": 4096, "differing": 4096,
    "population": 10**12, "crowd-size": 10**12, "reports": 1000,
    "samples": 10**8, "dgm-samples": 10**7, "budget": 10**7, "top": 10**6,
    "exact-max-population": 10**7, "full-scan-max": 10**7, "max-body-bytes": 1 << 30,
    "max-group": 4, "max-copies": 256,
}
_DEFAULT_INT_LIMIT = 10**9

#: Domains of the real-valued options: (low, high, low included, high included).
FLOAT_DOMAINS: dict[str, tuple[float, float, bool, bool]] = {
    "epsilon": (0.0, 50.0, False, True), "eta": (0.0, 1.0, False, False), "q": (0.0, 0.5, False, False),
    "beta": (0.0, 100.0, True, True), "delta": (0.0, 1.0, True, False), "deltas": (0.0, 1.0, False, False),
    "level": (0.0, 1.0, False, False), "confidence-level": (0.0, 1.0, False, False),
    "levels": (0.0, 1.0, False, False), "failure": (0.0, 1.0, False, False),
    "rho": (0.0, 1e6, False, True), "sigma": (0.0, 1e12, False, True), "sensitivity": (0.0, 1e12, False, True),
    "time-budget": (0.0, 3600.0, False, True),
}


def _domain_text(lo: float, hi: float, lo_in: bool, hi_in: bool) -> str:
    return f"{'[' if lo_in else '('}{lo:g}, {hi:g}{']' if hi_in else ')'}"


def bounded_int(text: str, name: str, lo: int, hi: int, allowed: str | None = None) -> int:
    """``int(text)`` if it lies in [lo, hi], else an ``ArgumentTypeError`` naming the option and what it allows
    (``allowed``, default ``an integer in [lo, hi]``)."""
    allowed = allowed or f"an integer in [{lo}, {hi}]"
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name} must be {allowed}; got {text!r}") from None
    if not lo <= v <= hi:
        raise argparse.ArgumentTypeError(f"{name} must be {allowed}; got {text}")
    return v


def positive_int(name: str) -> Any:
    """The argparse type of the integer option ``--name``: in [1, its limit in :data:`INT_LIMITS`]."""
    limit = INT_LIMITS.get(name, _DEFAULT_INT_LIMIT)
    return lambda text: bounded_int(text, name, 1, limit)


#: Largest ``--seed`` (a numpy SeedSequence takes any non-negative integer; 128 bits is its own entropy size).
MAX_SEED = 2**128 - 1


def seed(text: str) -> int:
    """The argparse type of ``--seed``: an integer in [0, :data:`MAX_SEED`] (numpy refuses negative seeds with a
    message that does not name the option)."""
    return bounded_int(text, "seed", 0, MAX_SEED, "an integer in [0, 2**128 - 1]")


def real(name: str) -> Any:
    """The argparse type of the real option ``--name``: a finite number, in its domain in :data:`FLOAT_DOMAINS`."""
    domain = FLOAT_DOMAINS.get(name)

    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number; got {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number; got {text!r}")
        if domain is not None:
            lo, hi, lo_in, hi_in = domain
            inside = (lo <= v if lo_in else lo < v) and (v <= hi if hi_in else v < hi)
            if not inside:
                raise argparse.ArgumentTypeError(f"{name} must be in {_domain_text(*domain)}; got {text}")
        return v

    return conv


def method_choice(choices: Sequence[str]) -> Any:
    """The argparse type of ``--method``: one of ``choices`` (the renamed ``certified`` is refused with the reason)."""

    def conv(text: str) -> str:
        if text == "certified":
            raise argparse.ArgumentTypeError(
                "'certified' was renamed 'homogeneous' (it bounds only the paper's homogeneous configuration); "
                "the default is now 'proven', which covers every pair of collections")
        if text not in choices:
            raise argparse.ArgumentTypeError(f"method must be one of {', '.join(choices)}; got {text!r}")
        return text

    return conv


def calibration_options(p: argparse.ArgumentParser, *, beta_help: str, max_weight_help: str, method_help: str,
                        eta_help: str, rounds_help: str) -> None:
    """The options of a calibration (``calibrate`` and ``report design`` take the same ones)."""

    p.add_argument("--bits", type=positive_int("bits"), required=True, help="L, bits per report")
    p.add_argument("--population", type=positive_int("population"), required=True,
                   help="N, the smallest crowd a release covers")
    p.add_argument("--epsilon", type=real("epsilon"), required=True, help="privacy level (lambda = e^epsilon)")
    p.add_argument("--beta", type=real("beta"), default=3.0, help=beta_help)
    p.add_argument("--max-weight", type=positive_int("max-weight"), default=None, help=max_weight_help)
    p.add_argument("--one-hot", action="store_true", help="every person's vector has exactly one set bit")
    p.add_argument("--reports", type=positive_int("reports"), default=1, help="k, reports per person")
    p.add_argument("--method", type=method_choice(METHODS), default="proven", help=method_help)
    p.add_argument("--eta", type=real("eta"), default=None, help=eta_help)
    p.add_argument("--samples", type=positive_int("samples"), default=None, help="Monte Carlo samples (mc)")
    p.add_argument("--seed", type=seed, default=None, help="seed for Monte Carlo (mc)")
    p.add_argument("--rounds", type=positive_int("rounds"), default=1, help=rounds_help)
