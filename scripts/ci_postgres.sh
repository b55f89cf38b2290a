#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the collector's tests and print its postgresql:// URL on stdout.
#
#   url=$(scripts/ci_postgres.sh [DIR])    # then: export SUFFICIENTDP_TEST_POSTGRES_URL="$url"
#
# * Finds initdb on PATH or under /usr/lib/postgresql/*/bin; if absent, installs the Debian package `postgresql`
#   with apt-get (as root, or through `sudo -n`). Set SUFFICIENTDP_PG_NO_INSTALL=1 to fail instead of installing.
# * Creates a cluster in DIR (default: a new mktemp directory) with trust authentication, listening only on
#   127.0.0.1 at a free port (or $SUFFICIENTDP_PG_PORT) and on a Unix socket in DIR; fsync stays on.
# * PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (else `nobody`).
# * Everything but the URL goes to stderr. Stop the server with:  kill -INT "$(head -1 DIR/data/postmaster.pid)"
set -euo pipefail

log() { echo "ci_postgres: $*" >&2; }

find_initdb() {
  if command -v initdb >/dev/null 2>&1; then command -v initdb; return 0; fi
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$found" ]; then echo "$found"; return 0; fi
  return 1
}

INITDB=$(find_initdb || true)
if [ -z "$INITDB" ]; then
  if [ "${SUFFICIENTDP_PG_NO_INSTALL:-0}" = "1" ]; then
    log "initdb not found and SUFFICIENTDP_PG_NO_INSTALL=1"; exit 1
  fi
  log "initdb not found: installing the Debian package postgresql"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends postgresql >&2
  INITDB=$(find_initdb) || { log "initdb still not found after installing postgresql"; exit 1; }
fi
BIN=$(dirname "$INITDB")
log "using $BIN"

DIR=${1:-$(mktemp -d "${TMPDIR:-/tmp}/sufficientdp-pg.XXXXXX")}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

if [ -n "${SUFFICIENTDP_PG_PORT:-}" ]; then
  PORT=$SUFFICIENTDP_PG_PORT
else
  PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi

RUN=()
if [ "$(id -u)" -eq 0 ]; then
  RUNAS=nobody
  if id postgres >/dev/null 2>&1; then RUNAS=postgres; fi
  chown "$RUNAS" "$DIR"
  if command -v runuser >/dev/null 2>&1; then RUN=(runuser -u "$RUNAS" --); else RUN=(su -s /bin/sh "$RUNAS" -c); fi
fi

run() {
  if [ "${#RUN[@]}" -eq 0 ]; then "$@"
  elif [ "${RUN[0]}" = "su" ]; then "${RUN[@]}" "$(printf '%q ' "$@")"
  else "${RUN[@]}" "$@"
  fi
}

if ! run test -w "$DIR"; then
  log "$DIR is not writable by the server's user (${RUNAS:-$(id -un)}): its parent directories must be searchable"
  exit 1
fi
run "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 >"$DIR/initdb.log" 2>&1 \
  || { cat "$DIR/initdb.log" >&2; log "initdb failed"; exit 1; }
run "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=on -c synchronous_commit=on" start >&2 \
  || { cat "$DIR/server.log" >&2; log "the server did not start"; exit 1; }
log "data directory $DIR/data; stop with: kill -INT \$(head -1 $DIR/data/postmaster.pid)"
echo "postgresql://postgres@127.0.0.1:$PORT/postgres"
