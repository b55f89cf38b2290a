"""engines._handoff.Handoff: bounded, and a closed consumer releases a reader blocked on the full queue."""

from __future__ import annotations

import threading
import time

from sufficientdp.engines._handoff import Handoff


def test_items_arrive_in_order_and_the_queue_is_bounded() -> None:
    h = Handoff(maxsize=2)
    assert h.offer(0, "a") and h.offer(0, "b")
    assert h.take() == (0, "a") and h.take() == (0, "b")


def test_close_releases_a_blocked_reader() -> None:
    h = Handoff(maxsize=1)
    assert h.offer(0, 1)
    result: list[bool] = []
    reader = threading.Thread(target=lambda: result.append(h.offer(0, 2)))
    reader.start()
    time.sleep(0.2)
    assert reader.is_alive() and result == []  # blocked: the queue holds its one item
    h.close()
    reader.join(timeout=5)
    assert not reader.is_alive() and result == [False]
    assert h.offer(0, 3) is False
