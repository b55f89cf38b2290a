"""Durable storage of the collector: SQLite (default) or PostgreSQL (``postgresql://`` URL, psycopg 3).

Schema (the same on both back ends; ``BLOB`` is ``BYTEA`` in PostgreSQL):

* ``campaigns(id, spec, signer_pem)`` — the public campaign object (JSON) and the private token key (PEM) if any.
* ``reports(id, campaign_id, release_id, report)`` — one row per accepted report. ``id`` is 16 random bytes
  (SQLite: a ``WITHOUT ROWID`` table, so rows live in the b-tree in random key order, not arrival order);
  ``report`` is the packed report: bit j in byte ``j // 8`` at position ``j % 8`` (least significant first),
  ``ceil(L / 8)`` bytes. ``release_id`` is NULL while pending and names the release that consumed it afterwards.
  No timestamp, no client address, no nonce.
* ``spent(campaign_id, nonce)`` — idempotency keys / spent token nonces. No reference to report rows.
* ``issued(campaign_id, credential_mac, blinded_digest)`` — HMAC-SHA256 of the credential for each token issuance
  and the SHA-256 digest of the exact list of blinded values signed for it (:func:`blinded_digest`), so that a
  retry of the same request (its answer was lost) is answered again and any other list is refused. NULL for rows
  written by schema version 1 (such an issuance is never re-answered).
* ``releases(id, campaign_id, seq, day, body)`` — the release objects (JSON); ``day`` is the UTC date only.
* ``settings(key, value)`` — the credential HMAC key (if not supplied by the deployment) and the schema version.
* ``jobs(campaign_id, request, attempts)`` — one row per campaign whose calibration (or check of a given q) has not
  finished: the validated request (JSON) and how many times a job was started for it. The row is written in the
  transaction that creates the campaign and deleted in the one that stores the outcome (first writer wins), so a
  campaign is ``calibrating`` exactly while it has a row; a restarted collector re-queues these rows
  (:mod:`sufficientdp.service.jobs`).

Schema versions: 1 (no ``issued.blinded_digest``), 2 (no ``jobs`` table; every campaign was created active), 3
(campaign objects have no ``token_scheme``: every token campaign used RSA-FDH tokens), 4 (current). Opening an
older database adds what is missing (``ALTER TABLE`` / ``CREATE TABLE``, in the schema transaction) and, from
version 3, writes ``"token_scheme": "rsa-fdh-sha256"`` into the stored object of every token campaign (the tokens it
issued keep verifying; a campaign without tokens is served with a null ``token_scheme`` and is not rewritten);
nothing else of a campaign, and no report, spent nonce or issuance, is touched. A database of a newer version than this code knows is refused (an older sufficientdp would
serve a calibrating campaign, which has no q yet, as if it were active, and would verify RSABSSA tokens as RSA-FDH
ones).

Durability: every request's writes are committed before the response is sent. Reports go through a group commit
(:meth:`Storage.submit_grouped`): one writer thread takes every request queued meanwhile into one transaction, each
in its own savepoint (a failing request is rolled back alone), commits it with one fsync, and only then resolves
the requests' futures; so many one-report requests share an fsync and nothing acknowledged is lost on a crash.
On PostgreSQL, a request whose writes lost a deadlock against another collector process's batch (the same nonces
in opposite orders) is queued again after its batch's commit instead of failing. Every other call is one
transaction of its own. SQLite runs in WAL mode with
``synchronous=FULL`` (the WAL is fsynced at every commit); PostgreSQL commits with its default
``synchronous_commit=on``. Releases take all pending reports of a campaign in one transaction (``BEGIN
IMMEDIATE`` in SQLite; ``SELECT ... FOR UPDATE`` on the campaign row in PostgreSQL), so they are disjoint.

Limits (docs/collector.md): PostgreSQL's heap order and ``xmin`` system column reveal insertion order (and which
rows were written by the same request) to anyone with direct database access; SQLite's WAL holds recent pages in
commit order until a checkpoint.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeAlias

import numpy as np

from .._errors import ParameterError
from ..aggregation.tally import Tally, tally_packed
from ..collection.tokens import SCHEME_RSA_FDH

__all__ = [
    "SCHEMA_VERSION",
    "CampaignRecord",
    "CrowdTooSmall",
    "Storage",
    "StorageReader",
    "blinded_digest",
    "open_storage",
    "open_storage_readonly",
    "pack_report_rows",
    "pack_reports",
    "tally_report_bytes",
]

#: Version of the schema this code writes (stored in ``settings``); see the module docstring for the history.
SCHEMA_VERSION: Final = 4
_FETCH_ROWS: Final = 1 << 16
#: Most requests the group-commit writer puts in one transaction.
GROUP_COMMIT_MAX_REQUESTS: Final = 512
#: Most reports it puts in one transaction (a single larger request is committed alone).
GROUP_COMMIT_MAX_REPORTS: Final = 20_000
#: Most times the group-commit writer puts back a request whose writes lost a deadlock or serialization conflict
#: against another process's transaction (PostgreSQL); after that its future gets the error.
GROUP_COMMIT_MAX_RETRIES: Final = 8
#: A request queued for the group-commit writer: campaign id, packed reports, nonces, its future, times retried.
_Queued: TypeAlias = "tuple[str, list[bytes], list[bytes | None], Future[tuple[int, int]], int]"
_log = logging.getLogger("sufficientdp.service")

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS campaigns (id TEXT PRIMARY KEY, spec TEXT NOT NULL, signer_pem BLOB)",
    "CREATE TABLE IF NOT EXISTS reports (id BLOB PRIMARY KEY, campaign_id TEXT NOT NULL, release_id TEXT, "
    "report BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS reports_by_release ON reports (campaign_id, release_id)",
    "CREATE TABLE IF NOT EXISTS spent (campaign_id TEXT NOT NULL, nonce BLOB NOT NULL, "
    "PRIMARY KEY (campaign_id, nonce))",
    "CREATE TABLE IF NOT EXISTS issued (campaign_id TEXT NOT NULL, credential_mac BLOB NOT NULL, "
    "blinded_digest BLOB, PRIMARY KEY (campaign_id, credential_mac))",
    "CREATE TABLE IF NOT EXISTS releases (id TEXT PRIMARY KEY, campaign_id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "day TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (campaign_id, seq))",
    "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS jobs (campaign_id TEXT PRIMARY KEY, request TEXT NOT NULL, "
    "attempts INTEGER NOT NULL)",
)
#: Statements that bring a database of version ``v`` to ``v + 1`` (run by ``init_schema``, in its transaction).
_MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {
    1: ("ALTER TABLE issued ADD COLUMN blinded_digest BLOB",),
    2: (),  # the jobs table: created by the CREATE TABLE IF NOT EXISTS statements of _SCHEMA
    3: (),  # token_scheme in the campaign objects: written by Storage._mark_token_schemes (a data migration)
}
_DIGEST_CONTEXT: Final = b"sufficientdp/tokens/blinded-list/v1\x00"


class CrowdTooSmall(Exception):
    """A release was asked for with fewer pending reports than ``k * N_min``."""

    def __init__(self, pending: int, needed: int) -> None:
        super().__init__(f"{pending} pending reports, {needed} needed")
        self.pending = pending
        self.needed = needed


@dataclass(frozen=True, slots=True)
class CampaignRecord:
    """A stored campaign: its public object and its private token key (PEM) if it uses tokens."""

    spec: dict[str, Any]
    signer_pem: bytes | None


def pack_reports(reports: np.ndarray) -> list[bytes]:
    """``(n, L)`` 0/1 uint8 array -> n packed rows (bit j in byte j // 8 at position j % 8)."""
    packed = np.packbits(np.asarray(reports, dtype=np.uint8), axis=1, bitorder="little")
    return [row.tobytes() for row in packed]


def pack_report_rows(rows: list[list[int]], bits: int) -> list[bytes] | None:
    """Pack a few short 0/1 rows without numpy (the same bytes as :func:`pack_reports`); None if a value is not 0
    or 1 (the caller then validates with numpy and names the value).

    For the collector's one-report requests: numpy's conversions cost about ten times the packing of one short row
    in plain Python. Every row must have ``bits`` values (checked by the caller).

    Examples:
        >>> pack_report_rows([[1, 0, 0, 0, 0, 0, 0, 0, 1]], 9) == pack_reports(np.array([[1, 0, 0, 0, 0, 0, 0, 0, 1]]))
        True
        >>> pack_report_rows([[1, 2]], 2) is None
        True
    """
    n_bytes = -(-bits // 8)
    out = []
    for row in rows:
        x = 0
        for j, v in enumerate(row):
            if v == 1:
                x |= 1 << j
            elif v != 0:
                return None
        out.append(x.to_bytes(n_bytes, "little"))
    return out


def tally_report_bytes(chunks: Iterable[list[bytes]], bits: int, *, full_histogram: bool) -> Tally:
    """Tally packed rows (as written by :func:`pack_reports`) chunk by chunk."""
    n_bytes = -(-bits // 8)
    n_words = -(-bits // 64)
    total: Tally | None = None
    for rows in chunks:
        if not rows:
            continue
        raw = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), n_bytes)
        padded = np.zeros((len(rows), 8 * n_words), dtype=np.uint8)
        padded[:, :n_bytes] = raw
        words = padded.view("<u8").astype(np.uint64, copy=False)
        t = tally_packed(words, bits, full_histogram=full_histogram)
        total = t if total is None else total.merge(t)
    if total is None:
        empty = np.zeros((0, n_words), dtype=np.uint64)
        total = tally_packed(empty, bits, full_histogram=full_histogram)
    return total


def blinded_digest(values: list[int], modulus_bytes: int) -> bytes:
    """SHA-256 digest of an ordered list of blinded values, as stored in ``issued.blinded_digest``.

    ``SHA-256(context || len(values) as 4 bytes || v_1 || ... || v_m)`` with each ``v_i`` as ``modulus_bytes``
    big-endian bytes: an injective encoding of the list of integers (order and length included), so two
    requests get the same digest exactly when they ask to sign the same values in the same order. The blinded
    values are uniform in ``Z_n^*`` whatever the token nonces are, so the digest reveals nothing about them.

    Raises:
        ParameterError: a value is negative or does not fit in ``modulus_bytes`` bytes.

    Examples:
        >>> len(blinded_digest([5, 7], 256))
        32
        >>> blinded_digest([5, 7], 256) == blinded_digest([7, 5], 256)
        False
    """
    out = hashlib.sha256(_DIGEST_CONTEXT)
    out.update(len(values).to_bytes(4, "big"))
    for i, v in enumerate(values):
        if v < 0 or v.bit_length() > 8 * modulus_bytes:
            raise ParameterError(f"values[{i}] must be in [0, 2**{8 * modulus_bytes}); got a {v.bit_length()}-bit "
                                 "value")
        out.update(v.to_bytes(modulus_bytes, "big"))
    return out.digest()


class Storage:
    """Collector storage over a DB-API connection per thread (one transaction per call)."""

    dialect: str = "sqlite"

    def __init__(self, *, max_connections: int = 8) -> None:
        self._max = max_connections
        self._idle: list[Any] = []
        self._count = 0
        self._cond = threading.Condition()
        self._closed = False
        self._group_cond = threading.Condition()
        self._group_queue: deque[_Queued] = deque()
        self._group_thread: threading.Thread | None = None
        self._group_stopping = False

    # ------------------------------------------------------------------------------------------- back-end hooks
    def _connect(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def _begin(self, conn: Any, *, write: bool) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _sql(self, text: str) -> str:
        return text

    def _lock_campaign(self, cur: Any, campaign_id: str) -> None:
        """Serialize releases of one campaign (SQLite: BEGIN IMMEDIATE already holds the write lock)."""

    # ------------------------------------------------------------------------------------------------ plumbing
    def _acquire(self) -> Any:
        with self._cond:
            while not self._idle and self._count >= self._max:
                if not self._cond.wait(timeout=60.0):
                    raise TimeoutError("no database connection became free within 60 s")
            if self._idle:
                return self._idle.pop()
            self._count += 1
        try:
            return self._connect()
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def _release(self, conn: Any, *, broken: bool) -> None:
        with self._cond:
            broken = broken or self._closed
            if broken:
                self._count -= 1
            else:
                self._idle.append(conn)
            self._cond.notify()
        if broken:
            try:
                conn.close()
            except Exception:  # pragma: no cover - best effort
                pass

    @contextmanager
    def _tx(self, *, write: bool = True) -> Iterator[Any]:
        """One transaction on a pooled connection: committed on success, rolled back on any exception."""
        conn = self._acquire()
        broken = False
        try:
            self._begin(conn, write=write)
            cur = conn.cursor()
            try:
                yield cur
            except BaseException:
                try:
                    conn.rollback()
                except Exception:
                    broken = True
                raise
            else:
                conn.commit()
            finally:
                cur.close()
        except BaseException:
            if not broken:
                broken = self._is_broken(conn)
            raise
        finally:
            self._release(conn, broken=broken)

    def _is_broken(self, conn: Any) -> bool:
        return False

    def _is_retryable(self, exc: BaseException) -> bool:
        """Whether a request's writes failed only because of a concurrent transaction (retry it later)."""
        return False

    def _x(self, cur: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
        cur.execute(self._sql(sql), params)
        return cur

    def init_schema(self) -> None:
        """Create the tables if they do not exist and migrate an older schema (one transaction).

        Raises:
            RuntimeError: the database has a schema version newer than :data:`SCHEMA_VERSION`, or an unreadable
                one.
        """
        with self._tx() as cur:
            self._create_and_migrate(cur)

    def _create_and_migrate(self, cur: Any) -> None:
        for stmt in _SCHEMA:
            self._x(cur, self._ddl(stmt))
        # A new database gets the current version; an existing one keeps the version it was written with.
        self._x(cur, "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                ("schema_version", str(SCHEMA_VERSION).encode()))
        raw = bytes(self._x(cur, "SELECT value FROM settings WHERE key = ?", ("schema_version",)).fetchone()[0])
        try:
            version = int(raw.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            raise RuntimeError(f"the database's schema_version is not an integer: {raw[:20]!r}") from None
        if version > SCHEMA_VERSION:
            raise RuntimeError(f"the database has schema version {version}; this sufficientdp knows versions up "
                               f"to {SCHEMA_VERSION}: upgrade sufficientdp")
        if version < 1:
            raise RuntimeError(f"the database's schema_version must be >= 1; got {version}")
        if version < SCHEMA_VERSION:
            for v in range(version, SCHEMA_VERSION):
                for stmt in _MIGRATIONS[v]:
                    self._x(cur, self._ddl(stmt))
                if v == 3:
                    self._mark_token_schemes(cur)
            self._x(cur, "UPDATE settings SET value = ? WHERE key = ?",
                    (str(SCHEMA_VERSION).encode(), "schema_version"))

    def _ddl(self, stmt: str) -> str:
        return stmt

    def _mark_token_schemes(self, cur: Any) -> None:
        """Migration 3 -> 4: every stored token campaign without a ``token_scheme`` is marked RSA-FDH.

        A campaign of version 3 or older that uses tokens issued RSA-FDH tokens (the only scheme then), so it is
        marked ``"rsa-fdh-sha256"`` and keeps verifying them. Only the ``spec`` column of those rows changes (in
        the schema transaction); the key, reports, spent nonces, issuances and every other campaign stay as they
        are.
        """
        rows = self._x(cur, "SELECT id, spec FROM campaigns").fetchall()
        for campaign_id, text in rows:
            spec = json.loads(text)
            if not isinstance(spec, dict) or "token_scheme" in spec or spec.get("rate_limit") != "tokens":
                continue
            spec["token_scheme"] = SCHEME_RSA_FDH
            self._x(cur, "UPDATE campaigns SET spec = ? WHERE id = ?", (json.dumps(spec), campaign_id))

    def close(self) -> None:
        """Commit the requests queued for the group-commit writer and stop it, then close every connection (one
        in use is closed when its transaction ends)."""
        self._stop_group_writer()
        with self._cond:
            self._closed = True
            conns, self._idle = self._idle, []
            self._count -= len(conns)
        for conn in conns:
            try:
                conn.close()
            except Exception:  # pragma: no cover - best effort
                pass

    # --------------------------------------------------------------------------------------------------- API
    def setting(self, key: str, make: Callable[[], bytes]) -> bytes:
        """The value of a setting, created with ``make()`` on first use (first writer wins)."""
        with self._tx() as cur:
            self._x(cur, "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                    (key, make()))
            row = self._x(cur, "SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return bytes(row[0])

    def create_campaign(self, campaign_id: str, spec: dict[str, Any], signer_pem: bytes | None, *,
                        job: dict[str, Any] | None = None) -> None:
        """Store a new campaign, and with ``job`` its unfinished calibration job (one transaction)."""
        with self._tx() as cur:
            self._x(cur, "INSERT INTO campaigns (id, spec, signer_pem) VALUES (?, ?, ?)",
                    (campaign_id, json.dumps(spec), signer_pem))
            if job is not None:
                self._x(cur, "INSERT INTO jobs (campaign_id, request, attempts) VALUES (?, ?, 0)",
                        (campaign_id, json.dumps(job)))

    def unfinished_jobs(self) -> list[tuple[str, dict[str, Any], int]]:
        """``(campaign id, request, attempts)`` of every campaign whose job has not stored an outcome."""
        with self._tx(write=False) as cur:
            rows = self._x(cur, "SELECT campaign_id, request, attempts FROM jobs ORDER BY campaign_id").fetchall()
        return [(str(r[0]), json.loads(r[1]), int(r[2])) for r in rows]

    def start_job(self, campaign_id: str) -> int | None:
        """Count one more start of a campaign's job; the new count, or None if the job is finished."""
        with self._tx() as cur:
            self._x(cur, "UPDATE jobs SET attempts = attempts + 1 WHERE campaign_id = ?", (campaign_id,))
            if cur.rowcount != 1:
                return None
            row = self._x(cur, "SELECT attempts FROM jobs WHERE campaign_id = ?", (campaign_id,)).fetchone()
        return int(row[0])

    def finish_job(self, campaign_id: str, spec: dict[str, Any]) -> bool:
        """Store a job's outcome: replace the campaign object and delete the job (one transaction).

        Returns:
            False (and nothing changes) if the job was already finished, e.g. by another collector process.
        """
        with self._tx() as cur:
            self._x(cur, "DELETE FROM jobs WHERE campaign_id = ?", (campaign_id,))
            if cur.rowcount != 1:
                return False
            self._x(cur, "UPDATE campaigns SET spec = ? WHERE id = ?", (json.dumps(spec), campaign_id))
        return True

    def get_campaign(self, campaign_id: str) -> CampaignRecord | None:
        """The stored campaign, or None."""
        with self._tx(write=False) as cur:
            row = self._x(cur, "SELECT spec, signer_pem FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
        if row is None:
            return None
        return CampaignRecord(spec=json.loads(row[0]), signer_pem=None if row[1] is None else bytes(row[1]))

    def counts(self, campaign_id: str) -> tuple[int, int, int]:
        """``(pending reports, released reports, releases)``."""
        with self._tx(write=False) as cur:
            pending = self._x(cur, "SELECT COUNT(*) FROM reports WHERE campaign_id = ? AND release_id IS NULL",
                              (campaign_id,)).fetchone()[0]
            released = self._x(cur, "SELECT COUNT(*) FROM reports WHERE campaign_id = ? "
                                    "AND release_id IS NOT NULL", (campaign_id,)).fetchone()[0]
            n_rel = self._x(cur, "SELECT COUNT(*) FROM releases WHERE campaign_id = ?",
                            (campaign_id,)).fetchone()[0]
        return int(pending), int(released), int(n_rel)

    def issue(self, campaign_id: str, credential_mac: bytes, digest: bytes,
              sign: Callable[[], list[int]]) -> list[int] | None:
        """Record one issuance for ``credential_mac`` and return ``sign()``; None if another list was signed.

        The first request of a credential stores ``(credential_mac, digest)``, where ``digest`` is
        :func:`blinded_digest` of the blinded values ``sign`` signs. A later request with the same credential and
        the same digest (a retry whose answer was lost) gets ``sign()`` again and records nothing; any other
        digest, or an issuance recorded before schema version 2 (no digest), gets None.

        Re-signing is safe because RSA signing is deterministic (``b**d mod n`` is a function of ``b``): the
        repeat returns exactly the signatures already returned once, so the credential still obtains signatures
        on one list of at most k values, and the requester learns nothing new.

        ``sign`` runs inside the transaction: if it raises, nothing is recorded.
        """
        with self._tx() as cur:
            cur = self._x(cur, "INSERT INTO issued (campaign_id, credential_mac, blinded_digest) VALUES (?, ?, ?) "
                               "ON CONFLICT DO NOTHING", (campaign_id, credential_mac, digest))
            if cur.rowcount != 1:
                # The row exists (committed: SQLite's BEGIN IMMEDIATE serializes writers; PostgreSQL's INSERT ...
                # ON CONFLICT waited for the concurrent inserter to commit, and READ COMMITTED sees its row now).
                row = self._x(cur, "SELECT blinded_digest FROM issued WHERE campaign_id = ? "
                                   "AND credential_mac = ?", (campaign_id, credential_mac)).fetchone()
                if row is None or row[0] is None or not hmac.compare_digest(bytes(row[0]), digest):
                    return None
            return sign()

    def submit(self, campaign_id: str, reports: list[bytes], nonces: list[bytes | None]) -> tuple[int, int]:
        """Store reports (one transaction); a report whose nonce is already spent is a duplicate.

        Returns:
            ``(accepted, duplicates)``.
        """
        with self._tx() as cur:
            return self._insert_reports(cur, campaign_id, reports, nonces)

    def submit_grouped(self, campaign_id: str, reports: list[bytes],
                       nonces: list[bytes | None]) -> Future[tuple[int, int]]:
        """Queue reports for the group-commit writer; the future is ``(accepted, duplicates)`` after the commit.

        The same writes as :meth:`submit`, made by one writer thread that takes every queued request (at most
        :data:`GROUP_COMMIT_MAX_REQUESTS` or :data:`GROUP_COMMIT_MAX_REPORTS` at a time) into one transaction, each
        request inside its own savepoint, and commits them with one fsync (SQLite ``synchronous=FULL``;
        PostgreSQL ``synchronous_commit``). A request's future is resolved only after the commit that holds it
        returned, so an acknowledged request is durable exactly as with :meth:`submit`. A request whose writes
        fail is rolled back to its savepoint and its future gets the exception; the others of the batch are
        committed. If the commit itself fails, every future of the batch gets the exception (nothing of it was
        stored). A future cancelled before the writer takes it is skipped (nothing stored).

        Raises (through the future):
            RuntimeError: the storage is closed.
        """
        fut: Future[tuple[int, int]] = Future()
        with self._group_cond:
            if self._closed or self._group_stopping:
                raise RuntimeError("the storage is closed")
            self._group_queue.append((campaign_id, reports, nonces, fut, 0))
            if self._group_thread is None or not self._group_thread.is_alive():
                self._group_thread = threading.Thread(target=self._group_writer, name="sufficientdp-group-commit",
                                                      daemon=True)
                self._group_thread.start()
            self._group_cond.notify()
        return fut

    def _insert_reports(self, cur: Any, campaign_id: str, reports: list[bytes],
                        nonces: list[bytes | None]) -> tuple[int, int]:
        accepted = duplicates = 0
        for report, nonce in zip(reports, nonces, strict=True):
            if nonce is not None:
                self._x(cur, "INSERT INTO spent (campaign_id, nonce) VALUES (?, ?) ON CONFLICT DO NOTHING",
                        (campaign_id, nonce))
                if cur.rowcount != 1:
                    duplicates += 1
                    continue
            self._x(cur, "INSERT INTO reports (id, campaign_id, release_id, report) VALUES (?, ?, NULL, ?)",
                    (secrets.token_bytes(16), campaign_id, report))
            accepted += 1
        return accepted, duplicates

    def _next_group(self) -> list[_Queued] | None:
        """The next batch of queued requests (blocks while the queue is empty); None once stopped and drained."""
        with self._group_cond:
            while not self._group_queue:
                if self._group_stopping:
                    return None
                self._group_cond.wait()
            batch: list[_Queued] = []
            n_reports = 0
            while self._group_queue and len(batch) < GROUP_COMMIT_MAX_REQUESTS and \
                    (not batch or n_reports + len(self._group_queue[0][1]) <= GROUP_COMMIT_MAX_REPORTS):
                item = self._group_queue.popleft()
                n_reports += len(item[1])
                batch.append(item)
        return batch

    def _group_writer(self) -> None:
        """The writer thread: one transaction (one commit) per batch of queued requests, a savepoint each.

        Several collector processes on one PostgreSQL database can deadlock: two batches that hold the same two
        nonces (one token sent to two processes at once, twice) insert them in opposite orders, and the server
        aborts one of the waiting statements. That request's savepoint is rolled back and, after the commit of the
        rest of its batch, it is queued again at the front (at most :data:`GROUP_COMMIT_MAX_RETRIES` times): the
        other transaction then finishes, and the retry finds the nonce spent (a duplicate) or stores it.
        """
        while (batch := self._next_group()) is not None:
            # A request put back after a conflict is already running (its future cannot be cancelled any more).
            live = [item for item in batch if item[4] > 0 or item[3].set_running_or_notify_cancel()]
            if not live:
                continue
            results: list[tuple[int, int] | BaseException] = []
            try:
                with self._tx() as cur:
                    for campaign_id, reports, nonces, _, _ in live:
                        self._x(cur, "SAVEPOINT sdp_report")
                        try:
                            results.append(self._insert_reports(cur, campaign_id, reports, nonces))
                        except Exception as exc:  # this request only: undo its writes, keep the others
                            self._x(cur, "ROLLBACK TO SAVEPOINT sdp_report")
                            results.append(exc)
                        self._x(cur, "RELEASE SAVEPOINT sdp_report")
            except BaseException as exc:  # noqa: BLE001 - the transaction failed: nothing of the batch was stored
                _log.warning("group commit of %d requests failed: %s", len(live), type(exc).__name__)
                for item in live:
                    item[3].set_exception(exc)
                continue  # the writer lives on: the next batch gets a fresh transaction
            retry: list[_Queued] = []
            for item, result in zip(live, results, strict=True):  # after the commit: acknowledge
                if isinstance(result, BaseException):
                    if item[4] < GROUP_COMMIT_MAX_RETRIES and self._is_retryable(result):
                        retry.append((*item[:4], item[4] + 1))
                    else:
                        item[3].set_exception(result)
                else:
                    item[3].set_result(result)
            if retry:
                with self._group_cond:
                    self._group_queue.extendleft(reversed(retry))  # first, in their order

    def _stop_group_writer(self) -> None:
        """Let the writer commit what is queued, then stop it (called by :meth:`close`)."""
        with self._group_cond:
            self._group_stopping = True
            thread = self._group_thread
            self._group_cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def release(self, campaign_id: str, *, threshold: int, bits: int, day: str,
                build: Callable[[str, Tally], dict[str, Any]]) -> dict[str, Any]:
        """Release every pending report of a campaign at once, if there are at least ``threshold``.

        In one transaction: the pending reports are marked with a new release id, tallied, ``build(id, tally)``
        makes the release object, and it is stored. Nothing changes if anything fails.

        Raises:
            CrowdTooSmall: fewer than ``threshold`` pending reports.
        """
        release_id = secrets.token_hex(16)
        with self._tx() as cur:
            self._lock_campaign(cur, campaign_id)
            self._x(cur, "UPDATE reports SET release_id = ? WHERE campaign_id = ? AND release_id IS NULL",
                    (release_id, campaign_id))
            n = int(cur.rowcount)
            if n < threshold:
                raise CrowdTooSmall(n, threshold)
            self._x(cur, "SELECT report FROM reports WHERE campaign_id = ? AND release_id = ?",
                    (campaign_id, release_id))

            def chunks() -> Iterator[list[bytes]]:
                while True:
                    rows = cur.fetchmany(_FETCH_ROWS)
                    if not rows:
                        return
                    yield [bytes(r[0]) for r in rows]

            from ..collection.campaign import MAX_HISTOGRAM_BITS

            t = tally_report_bytes(chunks(), bits, full_histogram=bits <= MAX_HISTOGRAM_BITS)
            if t.reports != n:  # pragma: no cover - the UPDATE and the SELECT run in one transaction
                raise RuntimeError("release: marked and read report counts differ")
            body = build(release_id, t)
            seq = int(self._x(cur, "SELECT COUNT(*) FROM releases WHERE campaign_id = ?",
                              (campaign_id,)).fetchone()[0]) + 1
            self._x(cur, "INSERT INTO releases (id, campaign_id, seq, day, body) VALUES (?, ?, ?, ?, ?)",
                    (release_id, campaign_id, seq, day, json.dumps(body)))
        return body

    def releases(self, campaign_id: str) -> list[dict[str, Any]]:
        """All releases of a campaign, in the order they were made."""
        with self._tx(write=False) as cur:
            rows = self._x(cur, "SELECT body FROM releases WHERE campaign_id = ? ORDER BY seq",
                           (campaign_id,)).fetchall()
        return [json.loads(r[0]) for r in rows]


WRITE_LOCK_SUFFIX: Final = "-writer-lock"
"""Suffix of the SQLite database's writer lock file (beside the ``-wal`` and ``-shm`` files; it may stay)."""
_WRITE_LOCK_WAIT = 30.0  # seconds a writer waits for the lock (SQLite's own busy timeout, for the same failure)
_WRITE_LOCK_PAUSE = 2.5e-4  # longest pause between attempts (first 10 us, doubling)


class SQLiteStorage(Storage):
    """SQLite back end: WAL journal, ``synchronous=FULL``, ``WITHOUT ROWID`` tables, 30 s busy timeout.

    Write transactions, of every thread and every collector process on the same file, take turns through an
    exclusive ``flock`` on ``<database>-writer-lock`` before ``BEGIN IMMEDIATE``. SQLite alone would make them
    wait in its busy handler, which sleeps 1, 2, 5, 10, ... 100 ms between attempts: with several processes, a
    writer that just missed the lock slept ~10-50 ms while the other committed in ~1-2 ms. The flock is polled
    every 10-250 us (and given up after 30 s, like SQLite's busy timeout, with SQLite's own "database is locked"
    error), so a waiting writer starts within a fraction of a millisecond of the other's commit. The lock orders
    writers only: SQLite still provides the isolation (a writer that does not take the lock, such as an older
    sufficientdp, is still serialized by SQLite). Where ``fcntl`` is missing (Windows) only SQLite's lock is
    used.
    """

    dialect = "sqlite"

    def __init__(self, path: str) -> None:
        super().__init__(max_connections=16)
        self.path = path
        self._lock_path = path + WRITE_LOCK_SUFFIX

    @contextmanager
    def _tx(self, *, write: bool = True) -> Iterator[Any]:
        if not write:
            with super()._tx(write=False) as cur:
                yield cur
            return
        with self._write_turn(), super()._tx(write=True) as cur:  # (the lock before a pooled connection)
            yield cur

    @contextmanager
    def _write_turn(self) -> Iterator[None]:
        """Hold the writer lock file's exclusive ``flock`` (a fresh open file each time: two threads of one
        process exclude each other too); released when the file is closed, also when the process dies."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: SQLite's busy handler alone
            yield
            return
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            pause, deadline = 1e-5, 0.0
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    now = time.monotonic()
                    if not deadline:
                        deadline = now + _WRITE_LOCK_WAIT
                    elif now > deadline:
                        raise sqlite3.OperationalError("database is locked") from None
                    time.sleep(pause)
                    pause = min(2.0 * pause, _WRITE_LOCK_PAUSE)
            yield
        finally:
            os.close(fd)

    def _connect(self) -> Any:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        return conn

    def _begin(self, conn: Any, *, write: bool) -> None:
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def close(self) -> None:
        """Close every connection, then checkpoint the WAL into the database and truncate it.

        After a clean shutdown the ``-wal`` file is gone (SQLite removes it when its last connection closes) or
        empty: the WAL holds recent pages in commit order, which should not outlive the collector. A checkpoint
        that cannot complete (another process still reads the database, for instance an open
        :class:`StorageReader`) leaves the WAL for the next one; nothing is lost either way.
        """
        super().close()
        if not Path(self.path).exists():
            return
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                conn.close()
        except sqlite3.Error as exc:  # best effort: the data are safe in the WAL
            _log.warning("WAL checkpoint at shutdown failed: %s", type(exc).__name__)

    def _ddl(self, stmt: str) -> str:
        if stmt.startswith("CREATE TABLE"):
            return stmt + " WITHOUT ROWID"
        return stmt


class PostgresStorage(Storage):
    """PostgreSQL back end through psycopg 3 (``synchronous_commit`` as configured; on by default)."""

    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        super().__init__(max_connections=10)
        try:
            import psycopg
        except ImportError as exc:
            raise ImportError(
                "a postgresql:// database needs psycopg 3: pip install 'sufficientdp[service]'") from exc
        self._psycopg = psycopg
        self.url = url

    def _connect(self) -> Any:
        return self._psycopg.connect(self.url, autocommit=False)

    def _begin(self, conn: Any, *, write: bool) -> None:
        pass  # psycopg opens a transaction on the first statement

    def _is_broken(self, conn: Any) -> bool:
        return bool(conn.closed or conn.broken)

    def _is_retryable(self, exc: BaseException) -> bool:
        errors = self._psycopg.errors
        return isinstance(exc, (errors.DeadlockDetected, errors.SerializationFailure))

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def _ddl(self, stmt: str) -> str:
        return stmt.replace("BLOB", "BYTEA")

    def _lock_campaign(self, cur: Any, campaign_id: str) -> None:
        self._x(cur, "SELECT id FROM campaigns WHERE id = ? FOR UPDATE", (campaign_id,))

    def init_schema(self) -> None:
        # Concurrent CREATE TABLE IF NOT EXISTS (and migrations) can race in PostgreSQL; serialize with an
        # advisory lock.
        with self._tx() as cur:
            self._x(cur, "SELECT pg_advisory_xact_lock(7301)")
            self._create_and_migrate(cur)


def _parse_url(database_url: str) -> tuple[str, str]:
    """``("postgresql", url)`` or ``("sqlite", path)`` for a database URL (see :func:`open_storage`)."""
    if not isinstance(database_url, str) or not database_url:
        raise ParameterError(f"database must be a sqlite:/// path or a postgresql:// URL; got {database_url!r}")
    if database_url.startswith(("postgresql://", "postgres://")):
        return "postgresql", database_url
    if database_url.startswith("sqlite:///"):
        path = database_url[len("sqlite:///"):]
        if not path or path == ":memory:":
            raise ParameterError(f"database must name an SQLite file (sqlite:///path.db); got {database_url!r}")
        return "sqlite", path
    if "://" in database_url or database_url == ":memory:":
        raise ParameterError("database must be a sqlite:/// path, a file path or a postgresql:// URL; "
                             f"got {database_url!r}")
    return "sqlite", database_url


def open_storage(database_url: str) -> Storage:
    """Open (and initialize) the storage named by a URL.

    Accepted: ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``, a plain file path (SQLite), or a
    ``postgresql://`` / ``postgres://`` URL (psycopg 3 conninfo).

    This creates the database or migrates its schema (a write transaction): the collector's entry point. To read a
    live database for analysis, use :func:`open_storage_readonly`.

    Raises:
        ParameterError: an unsupported URL scheme or an empty path.
        ImportError: PostgreSQL without psycopg installed.
    """
    kind, target = _parse_url(database_url)
    storage: Storage = PostgresStorage(target) if kind == "postgresql" else SQLiteStorage(target)
    storage.init_schema()
    return storage


class StorageReader:
    """Read-only access to a collector database, for analysis (see :func:`open_storage_readonly`).

    One connection and one read-only transaction for the reader's lifetime, so every query sees the same snapshot.
    Not thread-safe. Close it promptly (or use it as a context manager): in WAL mode an open snapshot keeps the
    collector's checkpoints from passing it.
    """

    def __init__(self, conn: Any, *, dialect: str, error: type[BaseException] | tuple[type[BaseException], ...],
                 name: str) -> None:
        self._conn = conn
        self._cursors = 0
        self.dialect = dialect
        self.name = name
        try:
            raw = self._one("SELECT value FROM settings WHERE key = ?", ("schema_version",))
        except error as exc:
            self.close()
            raise RuntimeError(f"cannot read {name} as a sufficientdp collector database: "
                               f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        except BaseException:
            self.close()
            raise
        try:
            if raw is None:
                raise RuntimeError(f"{name} has no schema_version setting: not a sufficientdp collector database")
            try:
                version = int(bytes(raw[0]).decode("ascii"))
            except (UnicodeDecodeError, ValueError):
                raise RuntimeError(f"the schema_version of {name} is not an integer: {bytes(raw[0])[:20]!r}") \
                    from None
            if not 1 <= version <= SCHEMA_VERSION:
                raise RuntimeError(f"{name} has schema version {version}; this sufficientdp reads versions 1 to "
                                   f"{SCHEMA_VERSION}" + (": upgrade sufficientdp" if version > SCHEMA_VERSION else ""))
        except BaseException:
            self.close()
            raise
        #: The schema version of the database (never migrated by a reader; the tables it reads are the same in
        #: every known version).
        self.schema_version: int = version

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s") if self.dialect == "postgresql" else text

    def _one(self, sql: str, params: tuple[Any, ...]) -> Any:
        cur = self._conn.cursor()
        try:
            cur.execute(self._sql(sql), params)
            return cur.fetchone()
        finally:
            cur.close()

    def campaign_spec(self, campaign_id: str) -> dict[str, Any] | None:
        """The public campaign object, or None for an unknown campaign (the token key is never read)."""
        row = self._one("SELECT spec FROM campaigns WHERE id = ?", (campaign_id,))
        return None if row is None else dict(json.loads(row[0]))

    def released_reports(self, campaign_id: str, release_id: str | None = None, *,
                         chunk_rows: int = _FETCH_ROWS) -> Iterator[list[bytes]]:
        """The packed reports of one release of a campaign, or of all its releases (``release_id`` None).

        Pending reports (not yet released) are never returned. The campaign and the release are checked when
        this is called; the reports are then yielded in lists of at most ``chunk_rows``, in no particular order.

        Raises:
            LookupError: unknown campaign, or a release that is not one of the campaign's.
        """
        if self._one("SELECT 1 FROM campaigns WHERE id = ?", (campaign_id,)) is None:
            raise LookupError(f"unknown campaign {campaign_id!r}")
        if release_id is not None:
            if self._one("SELECT 1 FROM releases WHERE id = ? AND campaign_id = ?",
                         (release_id, campaign_id)) is None:
                raise LookupError(f"unknown release {release_id!r} of campaign {campaign_id!r}")
            sql = "SELECT report FROM reports WHERE campaign_id = ? AND release_id = ?"
            params: tuple[Any, ...] = (campaign_id, release_id)
        else:
            sql = "SELECT report FROM reports WHERE campaign_id = ? AND release_id IS NOT NULL"
            params = (campaign_id,)
        if self.dialect == "postgresql":  # a server-side cursor: the rows are not all fetched at once
            self._cursors += 1
            cur = self._conn.cursor(name=f"sufficientdp_released_{self._cursors}")
        else:
            cur = self._conn.cursor()
        try:
            cur.execute(self._sql(sql), params)
        except BaseException:
            cur.close()
            raise
        return self._chunks(cur, max(1, int(chunk_rows)))

    @staticmethod
    def _chunks(cur: Any, n: int) -> Iterator[list[bytes]]:
        try:
            while rows := cur.fetchmany(n):
                yield [bytes(r[0]) for r in rows]
        finally:
            cur.close()

    def close(self) -> None:
        """End the read-only transaction (nothing to commit) and close the connection."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.rollback()
        except Exception:  # pragma: no cover - best effort
            pass
        conn.close()

    def __enter__(self) -> StorageReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_storage_readonly(database_url: str) -> StorageReader:
    """Open a collector database for reading only: never creates, locks for writing, migrates or writes it.

    Unlike :func:`open_storage`, nothing is created or initialized: SQLite is opened through the URI
    ``file:...?mode=ro`` (with ``PRAGMA query_only``; the journal mode is left as it is), PostgreSQL in
    ``READ ONLY`` ``REPEATABLE READ`` transactions. A database whose schema version this code does not know (newer
    than :data:`SCHEMA_VERSION`, missing or malformed) is refused; a version-1 database is read as it is, without
    migrating it (the campaigns, releases and reports tables are the same in versions 1 and 2).

    SQLite note: reading a WAL database needs its ``-wal`` and ``-shm`` side files; if the collector is not
    running they do not exist, and SQLite creates them (empty) in the database's directory, as any reader does.
    The database file itself is not written.

    Raises:
        ParameterError: an unsupported URL scheme or an empty path.
        FileNotFoundError: the SQLite file does not exist.
        RuntimeError: not a collector database, or an unknown schema version.
        ImportError: PostgreSQL without psycopg installed.
    """
    kind, target = _parse_url(database_url)
    if kind == "postgresql":
        try:
            import psycopg
        except ImportError as exc:
            raise ImportError(
                "a postgresql:// database needs psycopg 3: pip install 'sufficientdp[service]'") from exc
        pg = psycopg.connect(target, autocommit=False)
        try:
            pg.read_only = True  # every transaction is BEGIN ... READ ONLY: the server refuses any write
            pg.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ  # one snapshot for all queries
        except BaseException:
            pg.close()
            raise
        return StorageReader(pg, dialect="postgresql", error=psycopg.errors.UndefinedTable,
                             name="the database")
    path = Path(target)
    if not path.is_file():
        raise FileNotFoundError(f"database file {target!r} does not exist")
    conn = sqlite3.connect(path.absolute().as_uri() + "?mode=ro", uri=True, isolation_level=None,
                           check_same_thread=False, timeout=30.0)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("BEGIN")  # deferred: a read transaction (snapshot) from the first SELECT until close()
    except BaseException:
        conn.close()
        raise
    return StorageReader(conn, dialect="sqlite", error=sqlite3.DatabaseError, name=repr(target))
