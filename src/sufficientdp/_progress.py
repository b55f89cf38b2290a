"""One ``progress(done, total)`` callback across several consecutive searches (a command that runs two
calibrations draws one bar): each phase gets an equal share of the steps, and its end is reported even when the
search stops before the evaluations it announced, so the bar never goes back and ends full."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int], object]

#: Steps per phase.
STEPS = 1000


class Phases:
    """``phases`` consecutive searches reporting to ``progress`` (None: nothing is reported).

    Examples:
        >>> seen = []
        >>> p = Phases(lambda d, t: seen.append((d, t)), 2)
        >>> p.of(1)(3, 4)
        >>> p.end(1)
        >>> seen
        [(1750, 2000), (2000, 2000)]
    """

    def __init__(self, progress: Progress | None, phases: int) -> None:
        self.progress = progress
        self.phases = phases

    def of(self, phase: int) -> Progress | None:
        """The callback of phase ``phase`` (0-based): its ``(done, total)`` mapped into the phase's share."""
        progress = self.progress
        if progress is None:
            return None
        whole = STEPS * self.phases

        def report(done: int, total: int) -> None:
            progress(round(STEPS * (phase + min(max(done / max(total, 1), 0.0), 1.0))), whole)

        return report

    def end(self, phase: int) -> None:
        """Phase ``phase`` is over: the bar moves to its end."""
        if self.progress is not None:
            self.progress(STEPS * (phase + 1), STEPS * self.phases)
