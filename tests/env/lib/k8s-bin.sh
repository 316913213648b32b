# shellcheck shell=bash
# Sourced by build-k8s.sh, k8s.sh and node.sh: which Kubernetes the tests run, and where its
# programs are. Sources lib/cache.sh. Defines:
#   K8S_VERSION  the release build-k8s.sh builds (default below; matches k8s-openapi's v1_34
#                feature)
#   K8S_HOME     build-k8s.sh's directory in the cache, $CACHE/k8s-$K8S_VERSION
#   BIN          the programs and files k8s.sh and node.sh run: K8S_BIN when set (a directory of
#                ready ones), else $K8S_HOME/bin, which build-k8s.sh fills
#
#   ensure_k8s_bin TEST NAME...
#       Runs build-k8s.sh once when one of $BIN/NAME fails `test TEST` (-x for programs, -e for
#       other files); with K8S_BIN set, nothing is built and a missing one is fatal. The caller
#       defines HERE, say() and die().

# shellcheck source=cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/cache.sh"

K8S_VERSION="${K8S_VERSION:-v1.34.4}"
K8S_HOME="$CACHE/k8s-$K8S_VERSION"
BIN="${K8S_BIN:-$K8S_HOME/bin}"

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
