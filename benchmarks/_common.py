"""Helpers shared by the benchmark scripts (timing and machine description)."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from typing import Any

__all__ = ["best_seconds", "cpu_model"]


def best_seconds(func: Callable[[], Any], repeats: int) -> float:
    """Best wall time of ``repeats`` calls (the least disturbed run on a noisy machine)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, or what the platform module knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
