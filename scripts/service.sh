#!/usr/bin/env bash
# The proving service's tests that need a PostgreSQL server (the README's test command runs
# this): installs PostgreSQL from Debian's packages when it is missing, starts a private
# server (its own data directory under a temporary folder, a free loopback port, trust
# authentication for loopback only), runs the ignored PostgreSQL tests of crates/service with
# ZKGPU_TEST_POSTGRES pointing at it, then stops and deletes the server.
#   scripts/service.sh test [cargo test arguments...]
#   scripts/service.sh postgres   (start one and print its URL; stop it with Ctrl-C)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

pg_bindir() {
  local d
  if command -v pg_config >/dev/null && [[ -x $(pg_config --bindir)/initdb ]]; then
    pg_config --bindir
    return
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [[ -x $d/initdb ]] && { echo "$d"; return; }
  done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Starts the server; sets PG_DIR, PG_URL and a trap that stops it.
start_postgres() {
  local bin
  bin=$(pg_bindir)
  if [[ -z $bin ]]; then
    bash scripts/apt-install.sh "no PostgreSQL server found (the service's tests start one)" postgresql
    bin=$(pg_bindir)
    [[ -n $bin ]] || zk_die "PostgreSQL installed but no initdb found under /usr/lib/postgresql"
  fi
  PG_DIR=$(mktemp -d /tmp/zkgpu-pg.XXXXXX)
  local port
  port=$(free_port)
  # PostgreSQL refuses to run as root: as root, the server runs as the postgres user (made
  # by Debian's package).
  local as=()
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || zk_die "running as root and there is no postgres user to run the server as"
    chown postgres "$PG_DIR"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bin/initdb" -D "$PG_DIR/data" -U zkgpu --auth=trust --no-sync -E UTF8 >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; zk_die "initdb failed"; }
  "${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null ||
    { cat "$PG_DIR/server.log" >&2; zk_die "the PostgreSQL server did not start"; }
  PG_STOP=("${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -m immediate stop)
  trap 'stop_postgres' EXIT
  PG_URL="postgres://zkgpu@127.0.0.1:$port/postgres"
  echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($PG_DIR)" >&2
}

stop_postgres() {
  "${PG_STOP[@]}" >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}

case ${1:-} in
  test)
    shift
    zk_need_rust
    start_postgres
    ZKGPU_TEST_POSTGRES=$PG_URL cargo test -p zkgpu-service "$@" -- --ignored
    ;;
  postgres)
    start_postgres
    echo "$PG_URL"
    echo "(Ctrl-C stops it)" >&2
    sleep infinity
    ;;
  *)
    echo "usage: scripts/service.sh test [cargo test arguments] | postgres" >&2
    exit 2
    ;;
esac
