"""Tallies of a collector database (sufficientdp.engines.tally_collector; docs/collector.md, "Aggregating stored
reports").

Truth is a brute-force count, in plain Python, of the 0/1 reports that were submitted and then released; the numpy
engine (through the storage layer) and the DuckDB engine (SQL over the SQLite file) must both equal it, field for
field, per release and over all releases, and neither may count pending reports.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sufficientdp import DataError, ParameterError
from sufficientdp.cli.main import main
from sufficientdp.engines import COLLECTOR_ENGINES, tally_collector
from sufficientdp.service.storage import SCHEMA_VERSION, open_storage, open_storage_readonly, pack_reports


def _duckdb_skip_reason() -> str | None:
    """None if DuckDB can load sqlite_scanner here (locally, without downloading), else why not."""
    try:
        import duckdb

        from sufficientdp.engines.duckdb_engine import _load_sqlite_extension
    except ImportError as exc:
        return str(exc)
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                             "autoload_known_extensions": False})
    try:
        _load_sqlite_extension(con, duckdb)
    except ImportError as exc:
        return str(exc)
    finally:
        con.close()
    return None


_SKIP = _duckdb_skip_reason()
ENGINE_PARAMS = [pytest.param(e, marks=pytest.mark.skipif(e == "duckdb" and _SKIP is not None,
                                                          reason=f"DuckDB cannot read SQLite here: {_SKIP}"))
                 for e in COLLECTOR_ENGINES]


def brute_force(reports: list[list[int]], bits: int, full: bool) -> dict[str, Any]:
    """Tally.to_dict(include_vector_histogram=True) computed by hand (bit j of a vector ↔ 2^j)."""
    counts = [sum(r[j] for r in reports) for j in range(bits)]
    weights = [sum(1 for r in reports if sum(r) == w) for w in range(bits + 1)]
    d: dict[str, Any] = {"bits": bits, "reports": len(reports), "bit_counts": counts, "weight_histogram": weights}
    if full:
        vh = [0] * (1 << bits)
        for r in reports:
            vh[sum(x << j for j, x in enumerate(r))] += 1
        d["vector_histogram"] = vh
    return d


def random_reports(rng: np.random.Generator, n: int, bits: int) -> list[list[int]]:
    return (rng.random((n, bits)) < rng.random(bits)).astype(int).tolist()


# ------------------------------------------------------------------------------------- through the FastAPI app
@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A campaign (L = 10: two bytes, six padding bits) with two releases and pending reports, made over HTTP."""
    pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from sufficientdp.service.app import create_app

    db = tmp_path_factory.mktemp("collector") / "collector.db"
    admin = "admin-" + "3" * 20  # administrative calls (campaigns, releases) are closed without a token
    app = create_app(str(db), admin_token=admin)
    client = TestClient(app, headers={"authorization": f"Bearer {admin}"})

    def campaign(name: str) -> str:  # 202; the collector checks q in a background job: wait until active
        r = client.post("/v1/campaigns", json={"name": name, "bits": 10, "epsilon": 1.0, "crowd_size": 5,
                                               "q": 0.45, "eta": 0.5, "rate_limit": "none"})
        assert r.status_code == 202, r.text
        deadline = time.monotonic() + 120
        while (c := client.get(f"/v1/campaigns/{r.json()['id']}").json())["status"] == "calibrating":
            assert time.monotonic() < deadline, "the campaign never became active"
            time.sleep(0.05)
        assert c["status"] == "active", c
        return str(c["id"])

    cid = campaign("s")
    other = campaign("o")
    rng = np.random.default_rng(2024)
    batches: dict[str, list[list[int]]] = {}
    for n in (37, 23):
        reports = random_reports(rng, n, 10)
        for i in range(0, n, 10):  # several requests per release
            assert client.post(f"/v1/campaigns/{cid}/reports", json={"reports": reports[i:i + 10]}).status_code \
                == 200
        rel = client.post(f"/v1/campaigns/{cid}/releases")
        assert rel.status_code == 201, rel.text
        batches[rel.json()["id"]] = reports
    pending = random_reports(rng, 9, 10)
    pending[0] = [1] * 10  # a report that no release has: counting pending reports would show in bit_counts
    assert client.post(f"/v1/campaigns/{cid}/reports", json={"reports": pending}).status_code == 200
    # Another campaign's released and pending reports share the table.
    assert client.post(f"/v1/campaigns/{other}/reports", json={"reports": [[1] * 10] * 6}).status_code == 200
    assert client.post(f"/v1/campaigns/{other}/releases").status_code == 201
    assert client.post(f"/v1/campaigns/{other}/reports", json={"reports": [[1] * 10]}).status_code == 200
    status = client.get(f"/v1/campaigns/{cid}").json()
    assert (status["pending_reports"], status["released_reports"], status["releases"]) == (9, 60, 2)
    # The app (its connection pool, WAL file) stays open while the engines read: the normal production state.
    yield {"db": str(db), "campaign": cid, "other": other, "batches": batches, "pending": pending,
           "client": client}
    app.state.jobs.close()
    app.state.storage.close()


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
@pytest.mark.parametrize("url_form", ["path", "sqlite_url"])
def test_engines_equal_brute_force_per_release_and_overall(collector, engine, url_form):
    url = collector["db"] if url_form == "path" else "sqlite:///" + collector["db"]
    cid, batches = collector["campaign"], collector["batches"]
    for rid, reports in batches.items():
        t = tally_collector(url, cid, release_id=rid, engine=engine)
        assert t.to_dict(include_vector_histogram=True) == brute_force(reports, 10, True)
        # The release object the collector stored holds the same raw per-bit counts.
        body = collector["client"].get(f"/v1/campaigns/{cid}/estimates", params={"release": rid}).json()
        assert [e["count"] for e in body["releases"][0]["estimates"]] == t.bit_counts.tolist()
    released = [r for reports in batches.values() for r in reports]
    t = tally_collector(url, cid, engine=engine)
    assert t.to_dict(include_vector_histogram=True) == brute_force(released, 10, True)
    assert t.reports == 60  # the 9 pending reports are not counted


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_full_histogram_flag(collector, engine):
    cid = collector["campaign"]
    assert tally_collector(collector["db"], cid, engine=engine, full_histogram=False).vector_histogram is None
    assert tally_collector(collector["db"], cid, engine=engine).vector_histogram is not None  # L = 10 <= 16


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_unknown_campaign_and_release_are_named(collector, engine):
    db, cid = collector["db"], collector["campaign"]
    with pytest.raises(DataError, match="unknown campaign 'nope'"):
        tally_collector(db, "nope", engine=engine)
    with pytest.raises(DataError, match="unknown release 'f{32}' of campaign"):
        tally_collector(db, cid, release_id="f" * 32, engine=engine)
    # A release of another campaign is unknown for this one.
    rid, other = next(iter(collector["batches"])), collector["other"]
    with pytest.raises(DataError, match=f"unknown release '{rid}' of campaign '{other}'"):
        tally_collector(db, other, release_id=rid, engine=engine)


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_invalid_arguments(tmp_path, engine):
    with pytest.raises(DataError, match="does not exist"):
        tally_collector(str(tmp_path / "missing.db"), "c", engine=engine)
    assert not (tmp_path / "missing.db").exists()  # nothing was created
    with pytest.raises(ParameterError, match="database must"):
        tally_collector("mysql://x/y", "c", engine=engine)
    with pytest.raises(ParameterError, match="campaign_id"):
        tally_collector(str(tmp_path / "x.db"), "", engine=engine)


def test_unknown_engine_and_duckdb_on_postgres():
    with pytest.raises(ParameterError, match="engine must be one of 'numpy', 'duckdb'; got 'spark'"):
        tally_collector("x.db", "c", engine="spark")
    with pytest.raises(ParameterError, match="SQLite collector databases only"):
        tally_collector("postgresql://localhost/none", "c", engine="duckdb")


# ------------------------------------------------------------------------------------- through the storage layer
@pytest.fixture
def storage_db(tmp_path):
    url = "sqlite:///" + str(tmp_path / "c.db")
    storage = open_storage(url)
    yield url, storage
    storage.close()


def _release(storage: Any, cid: str, bits: int) -> str:
    return str(storage.release(cid, threshold=1, bits=bits, day="2024-01-01", build=lambda rid, t: {"id": rid})["id"])


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
@pytest.mark.parametrize("bits", [1, 7, 8, 9, 17, 20, 70])
def test_bit_order_across_byte_boundaries(storage_db, engine, bits):
    url, storage = storage_db
    storage.create_campaign("c", {"id": "c", "bits": bits}, None)
    eye = np.eye(bits, dtype=np.uint8).tolist()  # one report per bit: catches any bit/byte order mix-up
    rng = np.random.default_rng(bits)
    reports = eye + random_reports(rng, 40, bits)
    storage.submit("c", pack_reports(np.array(reports)), [None] * len(reports))
    rid = _release(storage, "c", bits)
    storage.submit("c", pack_reports(np.ones((3, bits), dtype=np.uint8)), [None] * 3)  # pending
    full = bits <= 20
    expected = brute_force(reports, bits, full)
    for release_id in (rid, None):
        t = tally_collector(url, "c", release_id=release_id, engine=engine, full_histogram=full)
        assert t.to_dict(include_vector_histogram=True) == expected


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_campaign_with_no_release_tallies_nothing(storage_db, engine):
    url, storage = storage_db
    storage.create_campaign("c", {"id": "c", "bits": 3}, None)
    storage.submit("c", pack_reports(np.ones((5, 3), dtype=np.uint8)), [None] * 5)
    assert tally_collector(url, "c", engine=engine).to_dict(include_vector_histogram=True) == {
        "bits": 3, "reports": 0, "bit_counts": [0, 0, 0], "weight_histogram": [0, 0, 0, 0],
        "vector_histogram": [0] * 8}


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_full_histogram_refused_above_20_bits(storage_db, engine):
    url, storage = storage_db
    storage.create_campaign("c", {"id": "c", "bits": 21}, None)
    assert tally_collector(url, "c", engine=engine).vector_histogram is None  # default: L <= 16 only
    with pytest.raises(ParameterError, match="full_histogram needs bits in"):
        tally_collector(url, "c", engine=engine, full_histogram=True)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
@pytest.mark.parametrize("bad", [b"\x01", b"\x01\x00\x00", b"\x01\x04"])
def test_malformed_stored_reports_are_refused(storage_db, engine, bad):
    """L = 10: two bytes, and bits 10..15 (positions 2..7 of the second byte) must be zero."""
    url, storage = storage_db
    storage.create_campaign("c", {"id": "c", "bits": 10}, None)
    storage.submit("c", [b"\x01\x02", bad], [None, None])
    storage.close()
    # Released by hand: the storage layer's own release tally would refuse these rows.
    con = sqlite3.connect(url[len("sqlite:///"):])
    with con:
        con.execute("UPDATE reports SET release_id = 'r'")
        con.execute("INSERT INTO releases VALUES ('r', 'c', 1, '2024-01-01', '{}')")
    con.close()
    with pytest.raises(DataError, match=r"1 stored report\(s\) of campaign 'c' are not 2-byte packed 10-bit"):
        tally_collector(url, "c", engine=engine)


# ------------------------------------------------------------------------------------- the reads are read-only
def _file_state(db: str) -> dict[str, Any]:
    """The database file's bytes and mtime, its side files, and its settings rows (read without writing)."""
    state: dict[str, Any] = {"main": Path(db).read_bytes(), "mtime": os.stat(db).st_mtime_ns,
                             "wal": Path(db + "-wal").read_bytes() if Path(db + "-wal").exists() else None,
                             "journal": Path(db + "-journal").exists()}
    # Without a -wal file the database is complete in the main file: read it as immutable (creates nothing).
    con = sqlite3.connect(Path(db).absolute().as_uri() + ("?mode=ro" if state["wal"] is not None
                                                          else "?mode=ro&immutable=1"), uri=True)
    try:
        state["settings"] = sorted(con.execute("SELECT key, value FROM settings").fetchall())
        state["issued_columns"] = [r[1] for r in con.execute("PRAGMA table_info(issued)").fetchall()]
    finally:
        con.close()
    return state


def _small_collector_db(tmp_path: Path) -> tuple[str, list[list[int]]]:
    """A closed SQLite collector database: campaign 'c' (L = 9) with one release of 30 reports and 4 pending."""
    db = str(tmp_path / "c.db")
    storage = open_storage(db)
    storage.create_campaign("c", {"id": "c", "bits": 9}, None)
    reports = random_reports(np.random.default_rng(9), 30, 9)
    storage.submit("c", pack_reports(np.array(reports)), [None] * 30)
    _release(storage, "c", 9)
    storage.submit("c", pack_reports(np.ones((4, 9), dtype=np.uint8)), [None] * 4)
    storage.close()
    return db, reports


@pytest.mark.slow
def test_numpy_engine_leaves_the_live_database_untouched(collector):
    """While the collector runs (WAL, pool open): same main file, same WAL, same settings rows."""
    before = _file_state(collector["db"])
    released = [r for reports in collector["batches"].values() for r in reports]
    t = tally_collector(collector["db"], collector["campaign"], engine="numpy")
    assert t.to_dict(include_vector_histogram=True) == brute_force(released, 10, True)
    assert _file_state(collector["db"]) == before


@pytest.mark.slow
@pytest.mark.parametrize("journal_mode", ["wal", "delete"])
def test_numpy_engine_leaves_a_closed_database_untouched(tmp_path, journal_mode):
    db, reports = _small_collector_db(tmp_path)
    con = sqlite3.connect(db)
    assert con.execute(f"PRAGMA journal_mode = {journal_mode}").fetchone()[0] == journal_mode
    con.close()
    assert not Path(db + "-wal").exists()
    before = _file_state(db)
    for engine in ("numpy", "duckdb") if _SKIP is None else ("numpy",):
        t = tally_collector(db, "c", engine=engine)
        assert t.to_dict(include_vector_histogram=True) == brute_force(reports, 9, True)
    after = _file_state(db)
    if journal_mode == "wal" and before["wal"] is None:
        # SQLite itself creates the empty -wal / -shm side files a WAL reader needs; it writes nothing in them.
        assert after.pop("wal") in (None, b"")
        before.pop("wal")
    assert after == before  # bytes (so the journal mode in the header too), mtime, settings
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == journal_mode
    con.close()


def test_numpy_engine_does_not_wait_for_a_writer(tmp_path):
    """A writer holding the write lock (with an uncommitted release) neither blocks the read nor shows in it."""
    db, reports = _small_collector_db(tmp_path)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        assert writer.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE reports SET release_id = (SELECT id FROM releases) WHERE release_id IS NULL")
        start = time.monotonic()
        t = tally_collector(db, "c", engine="numpy")
        assert time.monotonic() - start < 5  # the old read-write path waited for BEGIN IMMEDIATE (30 s timeout)
        assert t.to_dict(include_vector_histogram=True) == brute_force(reports, 9, True)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def _set_schema(db: str, version: bytes | None, *, drop_digest: bool = False) -> None:
    con = sqlite3.connect(db)
    with con:
        if drop_digest:
            con.execute("ALTER TABLE issued DROP COLUMN blinded_digest")
        if version is None:
            con.execute("DELETE FROM settings WHERE key = 'schema_version'")
        else:
            con.execute("UPDATE settings SET value = ? WHERE key = 'schema_version'", (version,))
    con.close()


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_version_1_database_is_read_without_migrating(tmp_path, engine):
    """Version 1 differs from 2 only in ``issued``: its reports are read as they are; nothing is migrated."""
    db, reports = _small_collector_db(tmp_path)
    _set_schema(db, b"1", drop_digest=True)
    before = _file_state(db)
    assert before["settings"] == [("schema_version", b"1")] and "blinded_digest" not in before["issued_columns"]
    for release_id in (None, json.loads(_releases(db)[0])["id"]):
        t = tally_collector(db, "c", release_id=release_id, engine=engine)
        assert t.to_dict(include_vector_histogram=True) == brute_force(reports, 9, True)
    after = _file_state(db)
    if before["wal"] is None:
        assert after.pop("wal") in (None, b"")
        before.pop("wal")
    assert after == before  # still version 1, no blinded_digest column


def _releases(db: str) -> list[str]:
    con = sqlite3.connect(Path(db).absolute().as_uri() + "?mode=ro", uri=True)
    try:
        return [r[0] for r in con.execute("SELECT body FROM releases ORDER BY seq")]
    finally:
        con.close()


@pytest.mark.parametrize(("version", "match"), [
    (str(SCHEMA_VERSION + 1).encode(),
     f"schema version {SCHEMA_VERSION + 1}; this sufficientdp reads versions 1 to {SCHEMA_VERSION}: upgrade"),
    (b"0", "schema version 0"), (b"two", "not an integer"), (None, "no schema_version setting"),
])
def test_numpy_engine_refuses_an_unknown_schema_version(tmp_path, version, match):
    db, _ = _small_collector_db(tmp_path)
    _set_schema(db, version)
    before = Path(db).read_bytes()
    with pytest.raises(DataError, match=match):
        tally_collector(db, "c", engine="numpy")
    assert Path(db).read_bytes() == before


def test_numpy_engine_refuses_a_file_that_is_not_a_collector_database(tmp_path):
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.close()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database" * 100)
    for path in (other, garbage):
        before = path.read_bytes()
        with pytest.raises(DataError, match="as a sufficientdp collector database"):
            tally_collector(str(path), "c", engine="numpy")
        assert path.read_bytes() == before
    with pytest.raises(FileNotFoundError):
        open_storage_readonly(str(tmp_path / "missing.db"))
    assert not (tmp_path / "missing.db").exists()


def test_readonly_reader_refuses_writes(tmp_path):
    db, reports = _small_collector_db(tmp_path)
    with open_storage_readonly("sqlite:///" + db) as reader:
        assert reader.schema_version == SCHEMA_VERSION and reader.campaign_spec("c") == {"id": "c", "bits": 9}
        got = [b for chunk in reader.released_reports("c", chunk_rows=7) for b in chunk]
        assert sorted(got) == sorted(pack_reports(np.array(reports)))
        with pytest.raises(LookupError, match="unknown release 'x' of campaign 'c'"):
            reader.released_reports("c", "x")
        with pytest.raises(LookupError, match="unknown campaign 'd'"):
            reader.released_reports("d")
        with pytest.raises(sqlite3.OperationalError, match="readonly|read-only"):
            reader._conn.execute("DELETE FROM settings")


# ------------------------------------------------------------------------------------------------------------ CLI
def run_json(capsys, *argv: str) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_cli_round_trip(collector, capsys, engine):
    db, cid, batches = collector["db"], collector["campaign"], collector["batches"]
    rid = next(iter(batches))
    one = run_json(capsys, "aggregate", "--database", db, "--campaign", cid, "--release", rid, "--engine", engine,
                   "--histogram")
    assert one == {**brute_force(batches[rid], 10, True), "columns": [f"bit{j}" for j in range(10)],
                   "campaign": cid, "release": rid}
    everything = run_json(capsys, "aggregate", "--database", "sqlite:///" + db, "--campaign", cid,
                          "--engine", engine)
    released = [r for reports in batches.values() for r in reports]
    assert everything == {**brute_force(released, 10, False), "columns": [f"bit{j}" for j in range(10)],
                          "campaign": cid, "release": None}
    assert main(["aggregate", "--database", db, "--campaign", cid, "--engine", engine]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"60 reports, 10 bits (campaign {cid}, all releases)\n")


@pytest.mark.parametrize("argv, message", [
    (["aggregate"], "exactly one of --input FILE and --database URL"),
    (["aggregate", "--input", "a.csv", "--database", "x.db"], "exactly one of --input FILE and --database URL"),
    (["aggregate", "--database", "x.db"], "--database needs --campaign ID"),
    (["aggregate", "--input", "a.csv", "--campaign", "c"], "--campaign and --release go with --database"),
    (["aggregate", "--database", "x.db", "--campaign", "c", "--engine", "spark"], "--engine numpy or duckdb"),
    (["aggregate", "--database", "missing.db", "--campaign", "c"], "database file 'missing.db' does not exist"),
])
def test_cli_errors(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sufficientdp: error: ") and message in err


@pytest.mark.slow
def test_cli_unknown_campaign(collector, capsys):
    assert main(["aggregate", "--database", collector["db"], "--campaign", "nope"]) == 2
    assert "unknown campaign 'nope'" in capsys.readouterr().err
