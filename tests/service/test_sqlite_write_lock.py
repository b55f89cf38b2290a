"""The SQLite collector's writer lock (:class:`sufficientdp.service.storage.SQLiteStorage`, issue 10).

Write transactions of every thread and every process on one SQLite file take turns through an exclusive
``flock`` on ``<database>-writer-lock``. Checked here against another *process* holding that lock: writes wait
for it (and then go through), reads do not, and the wait is bounded (SQLite's own "database is locked" error,
nothing stored).
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

fcntl = pytest.importorskip("fcntl", reason="the writer lock is a POSIX flock")

from sufficientdp.service import storage as storage_module  # noqa: E402
from sufficientdp.service.storage import WRITE_LOCK_SUFFIX, SQLiteStorage, open_storage  # noqa: E402

_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()  # hold until told
"""


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SQLiteStorage]:
    s = open_storage(str(tmp_path / "c.db"))
    assert isinstance(s, SQLiteStorage)
    yield s
    s.close()


class Holder:
    """Another process holding the writer lock until :meth:`release`."""

    def __init__(self, path: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _HOLDER, path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "held"

    def release(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)


@pytest.fixture
def holder(storage: SQLiteStorage) -> Iterator[Holder]:
    h = Holder(storage.path + WRITE_LOCK_SUFFIX)
    try:
        yield h
    finally:
        h.release()


def _submit(s: SQLiteStorage, campaign: str = "c") -> Any:
    return s.submit_grouped(campaign, [b"\x01"], [secrets.token_bytes(32)])


def test_the_lock_file_sits_beside_the_database_readable_by_its_owner_only(storage: SQLiteStorage) -> None:
    assert _submit(storage).result(timeout=30) == (1, 0)
    mode = os.stat(storage.path + WRITE_LOCK_SUFFIX).st_mode
    assert stat.S_IMODE(mode) & 0o077 == 0


def test_a_write_waits_for_another_process_and_then_goes_through(storage: SQLiteStorage, holder: Holder) -> None:
    fut = _submit(storage)
    time.sleep(0.5)
    assert not fut.done()  # waiting for the other process's turn
    assert storage.counts("c") == (0, 0, 0)  # reads are not held up (and nothing is stored yet)
    holder.release()
    assert fut.result(timeout=30) == (1, 0)
    assert storage.counts("c") == (1, 0, 0)


def test_two_threads_of_one_process_take_turns_too(storage: SQLiteStorage) -> None:
    with storage._write_turn():  # this thread's turn: another thread's write must wait for it
        fut = _submit(storage)
        time.sleep(0.3)
        assert not fut.done()
    assert fut.result(timeout=30) == (1, 0)


def test_the_wait_is_bounded_and_a_timed_out_write_stores_nothing(storage: SQLiteStorage, holder: Holder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage_module, "_WRITE_LOCK_WAIT", 0.3)
    fut = _submit(storage)
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        fut.result(timeout=30)
    holder.release()
    assert storage.counts("c") == (0, 0, 0)
    assert _submit(storage).result(timeout=30) == (1, 0)  # the writer lives on
    assert storage.counts("c") == (1, 0, 0)


def test_a_process_that_dies_holding_the_lock_releases_it(storage: SQLiteStorage) -> None:
    h = Holder(storage.path + WRITE_LOCK_SUFFIX)
    fut = _submit(storage)
    time.sleep(0.3)
    assert not fut.done()
    h.proc.kill()
    h.proc.wait(timeout=30)
    assert fut.result(timeout=30) == (1, 0)
