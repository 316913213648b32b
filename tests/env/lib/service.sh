# Sourced by the scripts of the test services that run in the background (kafka.sh,
# postgres.sh). Each defines first:
#   die, log          its messages (prefixed with the script's name)
#   SERVICE           what the service is called in messages ("broker", "server")
#   SERVICE_LOG       its log file's name in the data directory
#   service_pid DIR   prints the pid of DIR's running service; fails when none runs
#
#   check_port PORT, check_owner OWNER_PID, abs_dir DIR
#       Argument checks; abs_dir makes DIR and prints its absolute path.
#   log_tail DIR [LINES]
#       The last lines (default 40) of DIR's service log.
#   wait_ready DIR PORT TIMEOUT_SECONDS READY
#       Polls until `READY DIR PORT` succeeds (DIR absolute); fails with the log's tail when the
#       service is not running or TIMEOUT_SECONDS pass first.
#   stopping_dir DIR
#       Prints DIR's absolute path for `stop`; logs that there is nothing to stop and fails when
#       DIR does not exist.
#   start_watchdog OWNER_PID SCRIPT DIR [REMOVE_MARKER]
#       In the background: once OWNER_PID has exited, run `SCRIPT stop DIR`; with REMOVE_MARKER
#       (a file name), then delete DIR if that file is in it (so only a directory the service
#       made is removed). The watchdog's pid is DIR/watchdog.pid, its output DIR/watchdog.log.
#   end_watchdog DIR
#       End DIR's watchdog, unless the caller runs under it (a stop the watchdog itself started).
#   alive PID
#       Succeeds while PID runs: a zombie (exited, not yet reaped by its parent) counts as gone.
#   stop_service DIR PID_FILE GRACE_SECONDS
#       The `stop` of a service run as one process: ends DIR's watchdog, then SIGTERM, SIGKILL
#       after GRACE_SECONDS (failing when the process outlives that by 10 s), and removes
#       DIR/PID_FILE. DIR is absolute (stopping_dir).

check_port() {
  if ! [[ "$1" =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then die "bad port: $1"; fi
}

check_owner() {
  [[ "$1" =~ ^[0-9]+$ ]] || die "bad OWNER_PID: $1"
  kill -0 "$1" 2>/dev/null || die "OWNER_PID $1 is not running"
}

abs_dir() { mkdir -p "$1" && (cd "$1" && pwd); }

log_tail() {
  local file="$1/$SERVICE_LOG"
  if [ -f "$file" ]; then
    echo "----- last lines of $file -----"
    tail -n "${2:-40}" "$file"
    echo "-----"
  else
    echo "(no $file)"
  fi
}

wait_ready() {
  local dir="$1" port="$2" timeout="$3" ready="$4"
  check_port "$port"
  [ -d "$dir" ] || die "no such data directory: $dir"
  dir="$(cd "$dir" && pwd)"
  local deadline=$((SECONDS + timeout))
  while :; do
    if ! service_pid "$dir" >/dev/null; then
      log_tail "$dir" >&2
      if grep -q "Address already in use" "$dir/$SERVICE_LOG" 2>/dev/null; then
        die "the $SERVICE of $dir exited: a port was taken (Address already in use)"
      fi
      die "the $SERVICE of $dir is not running (see the log above)"
    fi
    if "$ready" "$dir" "$port"; then
      log "$SERVICE of $dir is ready on 127.0.0.1:$port"
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      log_tail "$dir" >&2
      die "the $SERVICE of $dir was not ready on 127.0.0.1:$port within ${timeout}s"
    fi
    sleep 0.2
  done
}

stopping_dir() {
  [ -d "$1" ] || { log "no data directory $1: nothing to stop"; return 1; }
  (cd "$1" && pwd)
}

start_watchdog() {
  local owner=$1 script=$2 dir=$3 marker=${4:-}
  # shellcheck disable=SC2016 # the variables belong to the inner shell
  setsid bash -c '
    owner=$1 script=$2 dir=$3 marker=$4
    echo $$ > "$dir/watchdog.pid"
    # Even a service that died first keeps its directory (and log) until the owner is gone.
    while kill -0 "$owner" 2>/dev/null; do sleep 1; done
    echo "owner $owner exited: stopping"
    "$script" stop "$dir" || true
    if [ -n "$marker" ] && [ -f "$dir/$marker" ]; then rm -rf "$dir"; fi
  ' watchdog "$owner" "$script" "$dir" "$marker" </dev/null >>"$dir/watchdog.log" 2>&1 &
}

end_watchdog() {
  local dir=$1 wpid
  [ -f "$dir/watchdog.pid" ] || return 0
  wpid="$(cat "$dir/watchdog.pid")"
  if [ -n "$wpid" ] && [ "$wpid" != "$PPID" ] && [ "$wpid" != "$$" ] && kill -0 "$wpid" 2>/dev/null \
      && tr '\0' ' ' < "/proc/$wpid/cmdline" 2>/dev/null | grep -q '^bash -c'; then
    kill "$wpid" 2>/dev/null || true
  fi
  rm -f "$dir/watchdog.pid"
}

alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state="$(sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" || return 1
  [ "$state" != Z ]
}

stop_service() {
  local dir=$1 pid_file=$2 grace=$3 pid
  end_watchdog "$dir"
  if ! pid="$(service_pid "$dir")"; then
    rm -f "$dir/$pid_file"
    log "$SERVICE of $dir is not running"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  if alive "$pid"; then
    log "$SERVICE (pid $pid) still running after ${grace}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 10))
    while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    if alive "$pid"; then die "$SERVICE (pid $pid) survived SIGKILL"; fi
  fi
  rm -f "$dir/$pid_file"
  log "$SERVICE of $dir stopped"
}
