# shellcheck shell=bash
# Sourced by every script that runs programs in the background and finds them again by a pid file
# in a directory of its own: the services of lib/service.sh (kafka.sh, registry.sh, oidc.sh,
# kdc.sh, postgres.sh), k8s.sh and node.sh. One way to start, recognise and end such a process, so that a stale pid file (its number
# reused by another program) is never signalled, by any of them. Nothing here prints or exits but
# check_owner and start_component, through the caller's die(): the callers say what failed.
#
#   abs_dir DIR
#       Makes DIR (and its parents) and prints its absolute path.
#   claim_dir DIR MARKER
#       Marks DIR (absolute) as the caller's with the file MARKER, which a later stop or cleanup
#       checks before it deletes anything there; fails when DIR holds files but no MARKER (someone
#       else's directory).
#   alive PID
#       Succeeds while PID runs. A zombie (exited, not yet reaped by its parent) counts as gone.
#   mentions PID TEXT...
#       Succeeds when the command line of PID (arguments joined by spaces, with a space after the
#       last one) contains one of the TEXTs.
#   mentions_dir PID DIR
#       DIR, or a path below it, is an argument of PID.
#   pid_in_file FILE TEXT...
#       Prints the pid on FILE's first line when that process is alive and `mentions` one of the
#       TEXTs (how each script knows the process is still its own); fails otherwise.
#   launch PID_FILE LOG_FILE COMMAND...
#       Runs COMMAND detached: its own session (no signals from the caller's terminal), no
#       standard input, its output appended to LOG_FILE, and no other descriptor of the caller
#       (so that a caller reading this script's output sees its end when the script exits).
#       PID_FILE gets COMMAND's pid: an inner shell writes its own pid and then becomes COMMAND
#       with exec, as do env, unshare and nsenter in turn. Fails when PID_FILE is not written
#       within 5 s.
#   wait_gone SECONDS PID...
#       Polls until no PID is alive; fails when one still is after SECONDS.
#   terminate GRACE_SECONDS KILL_SECONDS PID...
#       SIGTERM to every PID; SIGKILL to those still alive after GRACE_SECONDS; then waits
#       KILL_SECONDS more. Status: 0 when all ended on SIGTERM, 2 when SIGKILL was needed and
#       ended them, 1 when one survived even that.
#   check_owner [OWNER_PID]
#       The argument check of an optional OWNER_PID: empty, or a running process.
#
# k8s.sh and node.sh run several components from one DIR, each named NAME:
#   live_pid DIR NAME
#       The pid in DIR/NAME.pid while that process is alive and mentions_dir DIR.
#   start_component DIR NAME COMMAND...
#       launch with DIR/NAME.pid and DIR/logs/NAME.log; dies when it does not start.

abs_dir() { mkdir -p "$1" && (cd "$1" && pwd); }

claim_dir() {
  [ -e "$1/$2" ] || [ -z "$(ls -A "$1")" ] || return 1
  touch "$1/$2"
}

alive() {
  local state
  # The state follows the parenthesised command name, which may itself hold spaces or ')'.
  state="$(sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

mentions() {
  local pid=$1 cmdline text
  shift
  cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") 2>/dev/null || return 1
  for text in "$@"; do
    [[ $cmdline == *"$text"* ]] && return 0
  done
  return 1
}

mentions_dir() { mentions "$1" "$2/" "$2 "; }

pid_in_file() {
  local file=$1 pid
  shift
  [ -s "$file" ] || return 1
  pid=$(head -n 1 "$file")
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" && mentions "$pid" "$@" || return 1
  echo "$pid"
}

launch() {
  local pid_file=$1 log_file=$2 i
  shift 2
  # A pid file left by an earlier run must not pass for this one's.
  rm -f "$pid_file"
  # shellcheck disable=SC2016 # $$ and "$@" belong to the inner shell
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' launch "$pid_file" "$@" \
    </dev/null >>"$log_file" 2>&1 &
  for ((i = 0; i < 250; i++)); do
    [ -s "$pid_file" ] && return 0
    sleep 0.02
  done
  return 1
}

wait_gone() {
  local seconds=$1 i pid alive_one
  shift
  for ((i = 0; i <= seconds * 10; i++)); do
    alive_one=""
    for pid in "$@"; do alive "$pid" && alive_one=$pid && break; done
    [ -z "$alive_one" ] && return 0
    sleep 0.1
  done
  return 1
}

terminate() {
  local grace=$1 after_kill=$2
  shift 2
  (($# > 0)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  wait_gone "$grace" "$@" && return 0
  kill -KILL "$@" 2>/dev/null || true
  wait_gone "$after_kill" "$@" && return 2
  return 1
}

check_owner() {
  [ -n "${1:-}" ] || return 0
  [[ "$1" =~ ^[0-9]+$ ]] || die "OWNER_PID must be a pid, got '$1'"
  kill -0 "$1" 2>/dev/null || die "OWNER_PID $1 is not running"
}

live_pid() { pid_in_file "$1/$2.pid" "$1/" "$1 "; }

start_component() {
  local dir=$1 name=$2
  shift 2
  launch "$dir/$name.pid" "$dir/logs/$name.log" "$@" || die "$name did not start"
}
