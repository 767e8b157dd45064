#!/usr/bin/env bash
# The proving service's tests that need a PostgreSQL server (the README's test command runs
# this): installs PostgreSQL from Debian's packages when it is missing, starts a private
# server (its own data directory under a temporary folder, a free loopback port, trust
# authentication for loopback only), runs the ignored PostgreSQL tests of crates/service with
# ZKGPU_TEST_POSTGRES pointing at it, then stops and deletes the server.
# Then the real processes (scripts/service.sh e2e, also run by test): zkgpu serve with SQLite
# proves 20 jobs that snarkjs verifies; then with PostgreSQL, the API and two zkgpu worker
# processes: a worker killed with SIGKILL in the middle of a proof (its job finishes on the
# other after the lease expires, once), the API restarted with jobs queued, the database
# stopped for a while; each of 20 jobs gets exactly one proof, which snarkjs verifies.
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
  PG_CTL=("${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60
    -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200")
  PG_PSQL=("$bin/psql" -X -q -t -A)
  trap 'cleanup' EXIT
  "${PG_CTL[@]}" start >/dev/null ||
    { cat "$PG_DIR/server.log" >&2; zk_die "the PostgreSQL server did not start"; }
  PG_URL="postgres://zkgpu@127.0.0.1:$port/postgres"
  echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($PG_DIR)" >&2
}

PIDS=()
cleanup() {
  local status=$? p
  for p in "${PIDS[@]}"; do
    { kill -9 "$p" && wait "$p"; } 2>/dev/null || true
  done
  [[ -n ${PG_DIR:-} ]] && stop_postgres
  if [[ -n ${WORK:-} ]]; then
    # A failure shows the processes' last words.
    if [[ $status != 0 ]]; then
      local f
      for f in "$WORK"/*.log; do
        [[ -f $f ]] && { echo "== $f (last 15 lines)" >&2; tail -15 "$f" | cut -c1-300 >&2; }
      done
    fi
    rm -rf "$WORK"
  fi
  return 0
}

stop_postgres() {
  "${PG_CTL[@]}" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}

FIX=crates/circom/tests/fixtures

# Waits until the API at $1 answers /readyz (up to 3 minutes: a first start compiles the
# GPU's pipelines).
wait_up() {
  local i
  for i in $(seq 360); do
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/readyz", timeout=2)' "$1" \
      2>/dev/null && return 0
    sleep 0.5
  done
  zk_die "the API at $1 did not come up"
}

sql() { "${PG_PSQL[@]}" "$DB_URL" -c "$1"; }

# zkgpu fetch of every id in $@ into $WORK/$TAG-N-{public,proof}.json; then snarkjs
# verifies all of them against $VKEY.
fetch_and_verify() {
  local api=$1 vkey=$2 tag=$3
  shift 3
  local pairs=() n=0 id
  for id in "$@"; do
    n=$((n + 1))
    "$ZKGPU" fetch --server "$api" "$id" "$WORK/$tag-$n-proof.json" "$WORK/$tag-$n-public.json" 2>/dev/null ||
      zk_die "$tag: job $id has no proof"
    pairs+=("$WORK/$tag-$n-public.json" "$WORK/$tag-$n-proof.json")
  done
  bash scripts/circom.sh verify "$vkey" "${pairs[@]}"
}

# One process with SQLite: 20 jobs, each proof verified by snarkjs.
e2e_sqlite() {
  local port api ids=() i
  port=$(free_port)
  api=http://127.0.0.1:$port
  "$ZKGPU" serve --data "$WORK/sqlite" --listen "127.0.0.1:$port" --cache-dir "$WORK/cache" \
    >"$WORK/sqlite-serve.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_up "$api"
  for i in $(seq 20); do
    ids+=("$("$ZKGPU" submit --server "$api" --no-wait "$FIX/multiplier.zkey" "$FIX/multiplier.wtns")")
  done
  fetch_and_verify "$api" "$FIX/multiplier_vkey.json" sqlite "${ids[@]}"
  kill -TERM "$pid"
  wait "$pid" || zk_die "zkgpu serve did not stop cleanly (log: $WORK/sqlite-serve.log)"
  echo "service e2e: SQLite, 20 jobs proved and verified by snarkjs" >&2
}

start_api() {
  "$ZKGPU" serve --no-workers --db "$DB_URL" --data "$WORK/pg" --listen "127.0.0.1:$API_PORT" \
    >>"$WORK/api.log" 2>&1 &
  API_PID=$!
  PIDS+=("$API_PID")
  wait_up "$API"
}

start_worker() {
  "$ZKGPU" worker --db "$DB_URL" --server "$API" --name "$1" --lease-secs 3 --devices 1 \
    --cache-dir "$WORK/cache" >>"$WORK/$1.log" 2>&1 &
  PIDS+=("$!")
  WORKER_PID=$!
}

# PostgreSQL, the API and two workers; a worker killed mid-proof, the API restarted, the
# database away for a while.
e2e_postgres() {
  sql_admin() { "${PG_PSQL[@]}" "$PG_URL" -c "$1"; }
  sql_admin "CREATE DATABASE service_e2e"
  DB_URL=${PG_URL%/*}/service_e2e
  API_PORT=$(free_port)
  API=http://127.0.0.1:$API_PORT
  start_api
  start_worker w1
  local w1=$WORKER_PID
  start_worker w2
  local ids=() small=() i
  for i in $(seq 8); do
    ids+=("$("$ZKGPU" submit --server "$API" --no-wait "$FIX/merkle.zkey" "$FIX/merkle.wtns")")
  done
  for i in $(seq 12); do
    small+=("$("$ZKGPU" submit --server "$API" --no-wait "$FIX/multiplier.zkey" "$FIX/multiplier.wtns")")
  done
  # SIGKILL to w1 while it proves.
  local victim=""
  for i in $(seq 600); do
    victim=$(sql "SELECT id FROM zkgpu_jobs WHERE state = 'running' AND worker LIKE 'w1-%' LIMIT 1")
    [[ -n $victim ]] && break
    sleep 0.2
  done
  [[ -n $victim ]] || zk_die "worker w1 never claimed a job (log: $WORK/w1.log)"
  { kill -9 "$w1" && wait "$w1"; } 2>/dev/null || true
  echo "service e2e: worker w1 killed (SIGKILL) while proving job $victim" >&2
  # The API restarted while jobs are queued.
  kill -TERM "$API_PID"
  wait "$API_PID" || true
  start_api
  echo "service e2e: API restarted" >&2
  # The database away for 3 s: the workers back off and resume.
  "${PG_CTL[@]}" -m fast stop >/dev/null
  sleep 3
  "${PG_CTL[@]}" start >/dev/null
  echo "service e2e: database stopped for 3 s and started again" >&2
  fetch_and_verify "$API" "$FIX/merkle_vkey.json" pg "${ids[@]}"
  fetch_and_verify "$API" "$FIX/multiplier_vkey.json" pg-small "${small[@]}"
  local done attempts worker
  done=$(sql "SELECT count(*) FROM zkgpu_jobs WHERE state = 'done'")
  [[ $done == 20 ]] || zk_die "$done of 20 jobs done"
  attempts=$(sql "SELECT attempts FROM zkgpu_jobs WHERE id = '$victim'")
  worker=$(sql "SELECT worker FROM zkgpu_jobs WHERE id = '$victim'")
  [[ $attempts -ge 2 && $worker == w2-* ]] ||
    zk_die "the killed worker's job: $attempts attempt(s), last worker $worker"
  # Graceful stops: SIGTERM, and each process exits cleanly.
  local p
  for p in "$WORKER_PID" "$API_PID"; do
    kill -TERM "$p"
    wait "$p" || zk_die "a service process did not stop cleanly on SIGTERM"
  done
  echo "service e2e: PostgreSQL, 20 jobs, each proved once and verified by snarkjs; the killed worker's job finished on $worker after $attempts claims" >&2
}

e2e() {
  ZKGPU=$(zk_zkgpu)
  WORK=$(mktemp -d /tmp/zkgpu-service.XXXXXX)
  export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
  export ZKGPU_LOG=${ZKGPU_LOG:-info,wgpu_hal=error,naga=error}
  e2e_sqlite
  e2e_postgres
  echo "service e2e: passed" >&2
}

case ${1:-} in
  test)
    shift
    zk_need_rust
    start_postgres
    # --workspace --test queue, not -p zkgpu-service: the workspace's features, so the test
    # build of scripts/test.sh is reused instead of compiling the crates below again.
    zk_step "the queue's tests on PostgreSQL" >&2
    ZKGPU_TEST_POSTGRES=$PG_URL cargo test --workspace --test queue "$@" -- --ignored
    (($# > 0)) || { zk_step "service e2e: real processes" >&2; e2e; }
    ;;
  e2e)
    zk_need_rust
    start_postgres
    e2e
    ;;
  postgres)
    start_postgres
    echo "$PG_URL"
    echo "(Ctrl-C stops it)" >&2
    sleep infinity
    ;;
  *)
    echo "usage: scripts/service.sh test [cargo test arguments] | e2e | postgres" >&2
    exit 2
    ;;
esac
