"""Device-side state of the client: the privacy ledger kept in a small local file (issue 14).

A :class:`LedgerStore` keeps a device's :class:`~sufficientdp.collection.ledger.Ledger` in one JSON file: the
configured budget and, for each campaign the device joined, the campaign id, its family, its published per-release
guarantee ``(epsilon, eta)`` and when it was joined. Nothing else is stored: no value, no report, no credential, no
device identifier. The file is written atomically (a temporary file in the same directory, flushed and fsynced, then
renamed over the old one), so a crash leaves either the old or the new ledger, never a torn one.

A file that cannot be read back as a ledger (not JSON, a missing field, a value out of range) raises
:class:`LedgerError` naming the file; the store never resets a corrupted ledger to empty by itself, since an empty
ledger would silently grant the device its whole budget again. Remove or repair the file deliberately.

The :class:`~sufficientdp.client.Reporter` consults the store before it sends anything (``ledger=``): a campaign
that would exceed the budget is declined locally, nothing is sent, and the collector cannot tell a refusal from a
device that simply did not report.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import ParameterError, SufficientDPError
from ..collection.ledger import Budget, Decision, Ledger, Spend

__all__ = ["LedgerError", "LedgerStore", "MemoError", "MemoStore"]

#: Largest ledger file read, in bytes (MAX_SPENDS spends of ~150 bytes fit comfortably).
MAX_FILE_BYTES = 64 << 20


class LedgerError(SufficientDPError):
    """The ledger file exists but cannot be read back (corrupted, truncated, wrong format, unreadable)."""


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temporary file in the same directory, fsync, rename, fsync dir."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename durable (not supported on every platform)
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


class LedgerStore:
    """A device's privacy ledger in a local JSON file (thread-safe within one process).

    Args:
        path: the ledger file. It is created on the first recorded spend; its directory must exist.
        budget: the device's budget. Required when the file does not exist yet; when it exists, a given budget
            replaces the stored one (the spends are kept) and None keeps the stored budget.
        clock: seconds since the epoch (default :func:`time.time`); tests pass a fake clock.

    Raises:
        LedgerError: the file exists but is not a valid ledger (it is never reset silently).
        ParameterError: no file and no budget, or a budget that is not a :class:`Budget`.

    Examples:
        >>> import tempfile, os
        >>> d = tempfile.mkdtemp()
        >>> store = LedgerStore(os.path.join(d, "ledger.json"), budget=Budget(epsilon=2.0, eta=1e-3, period=86400))
        >>> store.decide(campaign="c1", epsilon=1.0, eta=1e-4).allowed
        True
        >>> _ = store.record(campaign="c1", family="daily", epsilon=1.0, eta=1e-4)
        >>> LedgerStore(os.path.join(d, "ledger.json")).ledger.spent(store.now())[0]
        1.0
    """

    def __init__(self, path: str | os.PathLike[str], *, budget: Budget | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise ParameterError(f"path must be a file path; got {type(path).__name__}")
        if budget is not None and not isinstance(budget, Budget):
            raise ParameterError(f"budget must be a Budget or None; got {type(budget).__name__}")
        if clock is not None and not callable(clock):
            raise ParameterError("clock must be a callable returning seconds since the epoch, or None")
        self.path = Path(path)
        self._clock: Callable[[], float] = time.time if clock is None else clock
        self._lock = threading.Lock()
        stored = self._load()
        if stored is None:
            if budget is None:
                raise ParameterError(f"no ledger at {self.path} and no budget given: pass budget=Budget(...)")
            self._ledger = Ledger(budget=budget)
        else:
            self._ledger = stored if budget is None else Ledger(budget=budget, spends=stored.spends)

    def _load(self) -> Ledger | None:
        try:
            with open(self.path, "rb") as fh:
                raw = fh.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise LedgerError(f"cannot read the privacy ledger at {self.path}: {type(exc).__name__}: {exc}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise LedgerError(f"the privacy ledger at {self.path} is larger than {MAX_FILE_BYTES} bytes; refusing "
                              "to read it")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise LedgerError(f"the privacy ledger at {self.path} is corrupted (not JSON: {exc}); it is not reset "
                              "automatically (an empty ledger would grant the whole budget again): repair or "
                              "remove it deliberately") from None
        try:
            return Ledger.from_dict(data)
        except ParameterError as exc:
            raise LedgerError(f"the privacy ledger at {self.path} is corrupted ({exc}); it is not reset "
                              "automatically: repair or remove it deliberately") from None

    def _save(self, ledger: Ledger) -> None:
        data = json.dumps(ledger.to_dict(), separators=(",", ":"), allow_nan=False).encode()
        _atomic_write(self.path, data)

    def now(self) -> float:
        """The store's clock."""
        return float(self._clock())

    @property
    def ledger(self) -> Ledger:
        """The current ledger (an immutable value)."""
        return self._ledger

    @property
    def budget(self) -> Budget:
        """The configured budget."""
        return self._ledger.budget

    def decide(self, *, campaign: str, epsilon: float, eta: float, now: float | None = None) -> Decision:
        """Would joining ``campaign`` (published guarantee ``(epsilon, eta)``) keep the device within budget?"""
        with self._lock:
            return self._ledger.decide(campaign=campaign, epsilon=epsilon, eta=eta,
                                       now=self.now() if now is None else now)

    def join(self, *, campaign: str, family: str, epsilon: float, eta: float,
             now: float | None = None) -> Decision:
        """Decide and, if allowed, record the spend and write the file before returning (one atomic step).

        Returns:
            The decision; when it is not allowed nothing is recorded.
        """
        with self._lock:
            at = self.now() if now is None else now
            decision = self._ledger.decide(campaign=campaign, epsilon=epsilon, eta=eta, now=at)
            if decision.allowed:
                new = self._ledger.record(Spend(campaign=campaign, family=family, epsilon=epsilon, eta=eta, at=at))
                if new is not self._ledger:
                    self._save(new)
                    self._ledger = new
            return decision

    def record(self, *, campaign: str, family: str, epsilon: float, eta: float,
               now: float | None = None) -> Ledger:
        """Record a spend (raises :class:`ParameterError` if it exceeds the budget) and write the file."""
        with self._lock:
            at = self.now() if now is None else now
            new = self._ledger.record(Spend(campaign=campaign, family=family, epsilon=epsilon, eta=eta, at=at))
            if new is not self._ledger:
                self._save(new)
                self._ledger = new
            return new

    def forget_before(self, when: float) -> Ledger:
        """Drop the spends at or before ``when`` (older than a period, they no longer count) and write the file."""
        with self._lock:
            new = self._ledger.forget_before(when)
            self._save(new)
            self._ledger = new
            return new

    def to_dict(self) -> dict[str, Any]:
        """What the file holds."""
        return self._ledger.to_dict()

    def __repr__(self) -> str:
        return f"LedgerStore({str(self.path)!r}, spends={len(self._ledger.spends)})"


class MemoError(SufficientDPError):
    """The memo file is corrupted, or a family's permanent flip probability changed (its memos cannot be reused)."""


class MemoStore:
    """A device's permanent randomized responses (memos) of memoized campaign families, in a local JSON file.

    RAPPOR-style memoization (issue 14, :mod:`sufficientdp.accounting.memoization`): within a family, a value's memo
    is the value with each bit flipped with the family's permanent probability q1, drawn once and reused by every
    release of the family; each release flips the memo again (the instantaneous q2) and sends only that.

    The memo is *derived*, not stored: the file keeps, per family, a random 256-bit secret and the family's q1
    (dyadic numerator and precision). Bit j of the memo of value v is flipped when the first 64 bits of
    ``HMAC-SHA256(secret, "memo" | v | j)`` read as an integer are below ``numerator * 2**(64 - precision)``, which
    happens with probability exactly q1 for a uniformly random secret, independently across bits and values. So
    the file holds no value and no memo, the same value always gets the same memo (also after a restart), and
    :meth:`forget` erases every memo of a family at once. Never sent anywhere.

    Args:
        path: the file (created on the first memo; its directory must exist).

    Raises:
        MemoError: the file exists but is not a valid memo store (it is never reset silently: a reset would draw
            new memos, and every new memo of an unchanged value leaks more).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise ParameterError(f"path must be a file path; got {type(path).__name__}")
        self.path = Path(path)
        self._lock = threading.Lock()
        self._families: dict[str, dict[str, Any]] = self._load()

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise MemoError(f"cannot read the memo store at {self.path}: {type(exc).__name__}: {exc}") from None
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("families"), dict):
                raise ValueError("not a version-1 memo store")
            families = {}
            for name, e in data["families"].items():
                secret = bytes.fromhex(e["secret"])
                num, prec = e["numerator"], e["precision"]
                if (len(secret) != 32 or not isinstance(num, int) or not isinstance(prec, int)
                        or not 2 <= prec <= 64 or not 0 < num < 1 << (prec - 1)):
                    raise ValueError(f"family {name!r:.60} has an invalid entry")
                families[str(name)] = {"secret": e["secret"], "numerator": num, "precision": prec}
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise MemoError(f"the memo store at {self.path} is corrupted ({exc}); it is not reset automatically "
                            "(new memos of unchanged values would leak more): repair or remove it deliberately"
                            ) from None
        return families

    def _save(self) -> None:
        data = json.dumps({"version": 1, "families": self._families}, separators=(",", ":")).encode()
        _atomic_write(self.path, data)

    @property
    def families(self) -> tuple[str, ...]:
        """The families with memos on this device."""
        return tuple(sorted(self._families))

    def memo(self, family: str, value: Any, numerator: int, precision: int) -> list[int]:
        """The memo of ``value`` (a sequence of 0/1) in ``family`` whose permanent flip is ``numerator/2**precision``.

        Raises:
            MemoError: the family's stored q1 differs (a collector changing q1 mid-family would make devices draw
                new memos); forget the family first if that is intended.
        """
        bits = [int(b) for b in value]
        if not isinstance(family, str) or not 1 <= len(family) <= 200 or not family.isprintable():
            raise ParameterError(f"family must be 1 to 200 printable characters; got {family!r:.80}")
        if any(b not in (0, 1) for b in bits):
            raise ParameterError("value entries must be 0 or 1")
        if not (isinstance(precision, int) and 2 <= precision <= 64 and isinstance(numerator, int)
                and 0 < numerator < 1 << (precision - 1)):
            raise ParameterError(f"the permanent flip must be a dyadic q in (0, 1/2); got {numerator}/2**{precision}")
        with self._lock:
            entry = self._families.get(family)
            if entry is None:
                entry = {"secret": secrets.token_hex(32), "numerator": numerator, "precision": precision}
                self._families[family] = entry
                try:
                    self._save()
                except BaseException:
                    del self._families[family]
                    raise
            elif (entry["numerator"], entry["precision"]) != (numerator, precision):
                raise MemoError(f"family {family!r:.60} was memoized with q1 = {entry['numerator']}/2**"
                                f"{entry['precision']}, the campaign now asks for {numerator}/2**{precision}; the "
                                "memos are not redrawn (forget the family deliberately to start over)")
            key = bytes.fromhex(entry["secret"])
        threshold = numerator << (64 - precision)
        prefix = b"memo" + bytes(bits)
        out = []
        for j, b in enumerate(bits):
            digest = hmac.new(key, prefix + j.to_bytes(4, "big"), hashlib.sha256).digest()
            out.append(b ^ int(int.from_bytes(digest[:8], "big") < threshold))
        return out

    def forget(self, family: str) -> bool:
        """Erase every memo of ``family`` (when the family ends). Returns False if it had none."""
        with self._lock:
            if family not in self._families:
                return False
            entry = self._families.pop(family)
            try:
                self._save()
            except BaseException:
                self._families[family] = entry
                raise
            return True

    def __repr__(self) -> str:  # never shows a secret
        return f"MemoStore({str(self.path)!r}, families={len(self._families)})"
