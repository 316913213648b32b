# Sourced by k8s.sh and node.sh: the Kubernetes programs and files they run from $BIN, which
# build-k8s.sh fills, unless K8S_BIN names a directory of ready ones. The caller defines BIN,
# K8S_VERSION, HERE, say() and die().
#
#   ensure_k8s_bin TEST NAME...
#       Runs build-k8s.sh once when one of $BIN/NAME fails `test TEST` (-x for programs, -e for
#       other files); with K8S_BIN set, nothing is built and a missing one is fatal.

ensure_k8s_bin() {
  local check=$1 name
  shift
  for name in "$@"; do
    test "$check" "$BIN/$name" && continue
    [ -n "${K8S_BIN:-}" ] && die "K8S_BIN=$K8S_BIN has no $name"
    say "$name missing in $BIN, running build-k8s.sh"
    K8S_VERSION="$K8S_VERSION" bash "$HERE/build-k8s.sh" >&2
    return
  done
}
