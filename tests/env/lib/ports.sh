# shellcheck shell=bash
# Free TCP ports for the services the test environment starts (sourced by k8s.sh, node.sh and
# stack.sh). The caller defines die().
#
#   free_port        one port; `$(free_port)` runs in a subshell, so two such calls may agree
#   free_ports N     N distinct ports, one a line

port_taken() { # any TCP socket (listening or not) bound to local port $1
  local hex
  hex=$(printf ':%04X' "$1")
  awk -v h="$hex" 'FNR > 1 && substr($2, length($2) - 4) == h { found = 1 } END { exit !found }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

PICKED=" "
free_port() { # below the kernel's ephemeral range, so outgoing connections do not collide
  local p i
  for i in $(seq 200); do
    p=$((20000 + RANDOM % 12000))
    [[ $PICKED == *" $p "* ]] && continue
    port_taken "$p" && continue
    PICKED+="$p "
    echo "$p"
    return 0
  done
  die "no free port found"
}

free_ports() {
  local i
  for ((i = 0; i < $1; i++)); do free_port; done
}
