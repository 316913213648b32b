# Sourced by the test services' scripts (kafka.sh, postgres.sh): the watchdog that stops a
# service once the process that owns it has exited, and its end when the service is stopped.
#
#   start_watchdog OWNER_PID SCRIPT DIR [REMOVE_MARKER]
#       In the background: once OWNER_PID has exited, run `SCRIPT stop DIR`; with REMOVE_MARKER
#       (a file name), then delete DIR if that file is in it (so only a directory the service
#       made is removed). The watchdog's pid is DIR/watchdog.pid, its output DIR/watchdog.log.
#   end_watchdog DIR
#       End DIR's watchdog, unless the caller runs under it (a stop the watchdog itself started).

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
