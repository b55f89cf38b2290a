"""A bounded hand-over from reader threads to the one consumer that counts (the engines' background readers).

A reader :meth:`Handoff.offer` s ``(kind, value)`` items; the consumer :meth:`Handoff.take` s them and, when it is
done or fails, :meth:`Handoff.close` s: a reader blocked on the full queue then gives up within 50 ms instead of
waiting forever, so memory stays bounded by ``maxsize`` items and no thread outlives the call.
"""

from __future__ import annotations

import queue
import threading
from typing import Any


class Handoff:
    """A queue of at most ``maxsize`` ``(kind, value)`` items that its consumer can close."""

    __slots__ = ("_closed", "_items")

    def __init__(self, maxsize: int) -> None:
        self._items: queue.Queue[tuple[int, Any]] = queue.Queue(maxsize=maxsize)
        self._closed = threading.Event()

    def offer(self, kind: int, value: Any) -> bool:
        """Put an item, waiting while the queue is full; False (nothing put) once the consumer has closed."""
        while not self._closed.is_set():
            try:
                self._items.put((kind, value), timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def take(self) -> tuple[int, Any]:
        """The next item (waits for one)."""
        return self._items.get()

    def close(self) -> None:
        """The consumer stops: readers' pending and later offers return False."""
        self._closed.set()
