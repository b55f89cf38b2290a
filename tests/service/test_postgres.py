"""The collector API tests of test_app.py, run against PostgreSQL.

Where the server comes from, in order:

1. ``$SUFFICIENTDP_TEST_POSTGRES_URL`` (CI: ``scripts/ci_postgres.sh`` prints it); a fresh database is created in
   it for this module and dropped afterwards (or, without the privilege, the given database is used as is);
2. otherwise, if ``initdb`` is on PATH or under /usr/lib/postgresql/*/bin, a throwaway server started with
   ``scripts/ci_postgres.sh`` (never installing anything) and stopped at the end;
3. otherwise the tests are skipped, saying so.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

pytest.importorskip("fastapi", reason="the collector service needs the 'service' extra")
psycopg = pytest.importorskip("psycopg", reason="PostgreSQL tests need psycopg 3 (extra 'service')")

import test_app as _cases  # noqa: E402  (tests/service is on sys.path: pytest's rootdir-relative import)
from test_app import app, client, token_campaign  # noqa: E402,F401  (fixtures used by the imported tests)

URL_ENV = "SUFFICIENTDP_TEST_POSTGRES_URL"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ci_postgres.sh"

for _name in dir(_cases):
    if _name.startswith("test_"):
        globals()[_name] = getattr(_cases, _name)


def _initdb_available() -> bool:
    return shutil.which("initdb") is not None or bool(glob.glob("/usr/lib/postgresql/*/bin/initdb"))


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    url = os.environ.get(URL_ENV)
    if url:
        yield url
        return
    if not _initdb_available():
        pytest.skip(f"no PostgreSQL: set {URL_ENV} (scripts/ci_postgres.sh prints one) or install initdb")
    base = tempfile.mkdtemp(prefix="sufficientdp-pgtest-")
    os.chmod(base, 0o755)  # the server runs as another user when we are root
    try:
        out = subprocess.run(["bash", str(SCRIPT), os.path.join(base, "pg")], check=True, capture_output=True,
                             text=True, env={**os.environ, "SUFFICIENTDP_PG_NO_INSTALL": "1"}, timeout=180)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"scripts/ci_postgres.sh failed: {exc.stderr[-2000:]}")
    try:
        yield out.stdout.strip().splitlines()[-1]
    finally:
        pid_file = Path(base, "pg", "data", "postmaster.pid")
        if pid_file.exists():
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, signal.SIGINT)  # fast shutdown
            deadline = time.monotonic() + 30
            while pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def db_url(server_url: str) -> Iterator[str]:
    """A fresh database for this module (the app tests create campaigns with random ids, so sharing is safe)."""
    name = "sdp_test_" + secrets.token_hex(6)
    try:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
    except psycopg.Error:
        yield server_url  # no CREATE DATABASE privilege: use the given database
        return
    parts = urlsplit(server_url)
    yield urlunsplit(parts._replace(path="/" + name))
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_storage_is_postgres(app: object) -> None:  # noqa: F811
    assert app.state.storage.dialect == "postgresql"  # type: ignore[attr-defined]


def test_postgres_schema_has_no_time_columns(app: object) -> None:  # noqa: F811
    storage = app.state.storage  # type: ignore[attr-defined]
    with storage._tx(write=False) as cur:
        rows = storage._x(cur, "SELECT table_name, column_name FROM information_schema.columns "
                               "WHERE table_name IN ('reports', 'spent')").fetchall()
    assert {(t, c) for t, c in rows} == {("reports", "id"), ("reports", "campaign_id"), ("reports", "release_id"),
                                         ("reports", "report"), ("spent", "campaign_id"), ("spent", "nonce")}
