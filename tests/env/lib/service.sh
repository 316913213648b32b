# shellcheck shell=bash
# Sourced by the scripts of the test services that run as one process in the background, each
# from a data directory of its own: kafka.sh, registry.sh, oidc.sh, kdc.sh, postgres.sh. Sources
# lib/proc.sh (abs_dir, alive, launch, terminate, check_owner, ...). Each script defines first:
#   SELF              its own absolute path (what the watchdog runs `stop` with, and the name
#                     its messages start with)
#   SERVICE           what the service is called in messages ("broker", "server")
#   SERVICE_LOG       its log file's name in the data directory
# and then:
#   service_pid DIR   prints the pid of DIR's running service; fails when none runs (pid_in_file
#                     with what the service's command line says of DIR)
#
# Boilerplate, named as such: every service script has the same shape, which these functions do
# not hide because each part of it is the script's own. Its header comment is its manual; then
# the variables above (and where its download is cached), service_pid; a `fetch`
# (fetched, fetch_once) where it downloads something; `start DATA_DIR PORT... [OWNER_PID]`
# (argument checks, already_running, what the service needs, launch, watch_owner); a readiness
# test for wait_ready; and a `case` that dispatches the commands, `wait` to wait_ready and `stop`
# to stop_service with the service's own test, deadline, pid file and grace period. Near-copies
# of those few lines between the scripts are that shape, not copied logic: the logic lives here
# and in lib/proc.sh.
# k8s.sh and node.sh, which run several processes each, share that shape in their own way
# (live_pid and start_component from lib/proc.sh, a background launcher that also watches the
# owner, a `wait` loop that names the component that died); their steps differ in substance.
#
#   log MESSAGE, die MESSAGE
#       A message on standard error, prefixed with the script's name; die then exits with 1.
#   check_port PORT
#       Argument check: PORT is a TCP port number.
#   port_open PORT
#       Succeeds when something accepts TCP connections on 127.0.0.1:PORT.
#   log_tail DIR [LINES]
#       The last lines (default 40) of DIR's service log.
#   already_running DIR
#       Succeeds, saying so, when DIR's service runs already (`start` then does nothing).
#   watch_owner OWNER_PID DIR [REMOVE_DATA MARKER]
#       Nothing when OWNER_PID is empty. Otherwise a watchdog in the background: once OWNER_PID
#       has exited, it runs `$SELF stop DIR`; when REMOVE_DATA is 1, it then deletes DIR if the
#       file MARKER is in it (so only a directory the service was set up in is removed). Its pid
#       is DIR/watchdog.pid, its output DIR/watchdog.log.
#   end_watchdog DIR
#       End DIR's watchdog, unless the caller runs under it (a stop the watchdog itself started).
#   wait_ready DEFAULT_TIMEOUT READY DATA_DIR PORT [TIMEOUT_SECONDS]
#       The `wait` command: polls until `READY DIR PORT` succeeds (DIR absolute); fails with the
#       log's tail when the service is not running or TIMEOUT_SECONDS (default DEFAULT_TIMEOUT)
#       pass first.
#   stopping_dir DIR
#       Prints DIR's absolute path for `stop`; logs that there is nothing to stop and fails when
#       DIR does not exist.
#   stop_service PID_FILE GRACE_SECONDS DATA_DIR
#       The `stop` command of a service run as one process: nothing when DATA_DIR does not exist;
#       else ends its watchdog, then SIGTERM, SIGKILL after GRACE_SECONDS (failing when the
#       process outlives that by 10 s), and removes DATA_DIR/PID_FILE.

# shellcheck source=proc.sh
. "$(dirname "${BASH_SOURCE[0]}")/proc.sh"

log() { echo "${SELF##*/}: $*" >&2; }
die() { log "$@"; exit 1; }

check_port() {
  if ! [[ "$1" =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then die "bad port: $1"; fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

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

already_running() {
  local pid
  pid="$(service_pid "$1")" || return 1
  log "$SERVICE already running from $1 (pid $pid)"
}

watch_owner() {
  local owner=$1 dir=$2 marker=""
  [ -n "$owner" ] || return 0
  [ "${3:-0}" != 1 ] || marker=$4
  # shellcheck disable=SC2016 # the variables belong to the inner shell
  launch "$dir/watchdog.pid" "$dir/watchdog.log" bash -c '
    owner=$1 script=$2 dir=$3 marker=$4
    # Even a service that died first keeps its directory (and log) until the owner is gone.
    while kill -0 "$owner" 2>/dev/null; do sleep 1; done
    echo "owner $owner exited: stopping"
    "$script" stop "$dir" || true
    if [ -n "$marker" ] && [ -f "$dir/$marker" ]; then rm -rf "$dir"; fi
  ' watchdog "$owner" "$SELF" "$dir" "$marker" || die "the watchdog did not start"
  log "watchdog: stops the $SERVICE when pid $owner exits"
}

end_watchdog() {
  local dir=$1 wpid
  # Its command line names DIR as an argument of its own (watch_owner).
  if wpid="$(pid_in_file "$dir/watchdog.pid" " $dir ")" && [ "$wpid" != "$PPID" ] \
      && [ "$wpid" != "$$" ]; then
    kill "$wpid" 2>/dev/null || true
  fi
  rm -f "$dir/watchdog.pid"
}

wait_ready() {
  local default=$1 ready=$2
  shift 2
  if [ $# -lt 2 ] || [ $# -gt 3 ]; then die "usage: ${SELF##*/} wait DATA_DIR PORT [TIMEOUT_SECONDS]"; fi
  local dir="$1" port="$2" timeout="${3:-$default}"
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

stop_service() {
  local dir pid_file=$1 grace=$2 pid status=0
  shift 2
  [ $# -eq 1 ] || die "usage: ${SELF##*/} stop DATA_DIR"
  dir="$(stopping_dir "$1")" || return 0
  end_watchdog "$dir"
  if ! pid="$(service_pid "$dir")"; then
    rm -f "$dir/$pid_file"
    log "$SERVICE of $dir is not running"
    return 0
  fi
  terminate "$grace" 10 "$pid" || status=$?
  case $status in
    2) log "$SERVICE (pid $pid) was still running after ${grace}s: SIGKILL" ;;
    1) die "$SERVICE (pid $pid) survived SIGKILL" ;;
  esac
  rm -f "$dir/$pid_file"
  log "$SERVICE of $dir stopped"
}
