# shellcheck shell=bash
# The last lines of every log of a service, for a failure message (sourced by k8s.sh and node.sh).

# log_tails DIR LINES: the last LINES lines of each DIR/logs/*.log, on stderr.
log_tails() {
  local dir=$1 lines=$2 f
  for f in "$dir"/logs/*.log; do
    [ -e "$f" ] || continue
    echo "----- last lines of $f -----" >&2
    tail -n "$lines" "$f" >&2
  done
}
