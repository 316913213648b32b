#!/usr/bin/env bash
# A throw-away PostgreSQL server (Debian's `postgresql` package) for the redoline tests: the
# database the Debezium JDBC sink writes into (tests/tests/debezium_jdbc_pipeline.rs).
#
#   postgres.sh start DATA_DIR PORT [OWNER_PID]
#       Initialise DATA_DIR/data once (initdb, superuser `postgres`, trust authentication, UTF-8)
#       and start the server in the background on 127.0.0.1:PORT, its socket in DATA_DIR. The log
#       is DATA_DIR/postgres.log. With OWNER_PID, a watchdog stops the server once that process
#       has exited. Starting a server that already runs from DATA_DIR does nothing.
#   postgres.sh wait DATA_DIR PORT [TIMEOUT_SECONDS]
#       Wait until the server accepts connections on PORT (pg_isready). Fails with the tail of its
#       log when it dies or the timeout (default 60 s) passes.
#   postgres.sh stop DATA_DIR
#       Fast shutdown (pg_ctl -m fast), immediate after POSTGRES_STOP_GRACE seconds (default 20).
#       Idempotent.
#
# The server is reached as postgresql://postgres@127.0.0.1:PORT/postgres. initdb and postgres
# refuse to run as root: as root the server runs as Debian's `postgres` user (runuser), which then
# owns DATA_DIR/data. Environment: PG_BIN (default: the newest /usr/lib/postgresql/<ver>/bin).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
SERVICE=server
SERVICE_LOG=postgres.log
# shellcheck source=lib/service.sh
. "$HERE/lib/service.sh"


pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
  local dir
  dir=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  [ -x "$dir/postgres" ] || die "no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)"
  echo "$dir"
}

# Runs a command as the server's user: ourselves, or `postgres` when we are root.
as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# The postmaster's pid (the first line of its pid file), when it runs from DATA_DIR/data.
service_pid() { pid_in_file "$1/data/postmaster.pid" "$1/data"; }

cmd_start() {
  if [ $# -lt 2 ] || [ $# -gt 3 ]; then die "usage: postgres.sh start DATA_DIR PORT [OWNER_PID]"; fi
  local dir port owner="${3:-}" bin pid
  dir="$(abs_dir "$1")"; port="$2"
  check_port "$port"
  check_owner "$owner"
  ! already_running "$dir" || return 0
  bin="$(pg_bin)"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the postgres user (Debian's postgresql package creates it)"
    chown postgres "$dir"
    # A parent directory of mode 0700 (mktemp -d) hides DATA_DIR from that user.
    runuser -u postgres -- test -w "$dir" \
      || die "the postgres user cannot reach $dir: give its parent directories search permission (chmod o+x)"
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    rm -rf "$dir/data"
    if ! as_server_user "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 \
        --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1; then
      cat "$dir/initdb.log" >&2
      die "initdb of $dir/data failed"
    fi
  fi
  : > "$dir/$SERVICE_LOG"
  [ "$(id -u)" -ne 0 ] || chown postgres "$dir/$SERVICE_LOG"
  # A test database: no durability needed, and few connections (one sink task per mode).
  as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/$SERVICE_LOG" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50" \
    >/dev/null || { log_tail "$dir" >&2; die "the server of $dir did not start"; }
  pid="$(service_pid "$dir")" || { log_tail "$dir" >&2; die "the server of $dir exited at once"; }
  log "server started from $dir (pid $pid, 127.0.0.1:$port)"
  watch_owner "$owner" "$dir"
}

cmd_wait() {
  # Found once, before polling: pg_bin reads PG_BIN first.
  PG_BIN="$(pg_bin)"
  wait_ready 60 server_ready "$@"
}

server_ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$2" -U postgres; }

cmd_stop() {
  [ $# -eq 1 ] || die "usage: postgres.sh stop DATA_DIR"
  local dir grace="${POSTGRES_STOP_GRACE:-20}" bin
  dir="$(stopping_dir "$1")" || return 0
  end_watchdog "$dir"
  if ! service_pid "$dir" >/dev/null; then
    log "server of $dir is not running"
    return 0
  fi
  bin="$(pg_bin)"
  if ! as_server_user "$bin/pg_ctl" -D "$dir/data" -m fast -w -t "$grace" stop >/dev/null 2>&1; then
    log "server of $dir still running after ${grace}s: immediate shutdown"
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 10 stop >/dev/null 2>&1 || true
  fi
  if service_pid "$dir" >/dev/null; then die "the server of $dir survived its shutdown"; fi
  log "server of $dir stopped"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  wait) shift; cmd_wait "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) die "usage: postgres.sh start DATA_DIR PORT [OWNER_PID] | wait DATA_DIR PORT [TIMEOUT] | stop DATA_DIR" ;;
esac
