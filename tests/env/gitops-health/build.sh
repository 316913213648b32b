#!/usr/bin/env bash
# Builds (once, cached) the GitOps health harness (main.go: Argo CD's Lua interpreter and Flux's
# CEL environment) and prints the path of the binary on stdout.
#
# The build lives in $REDOLINE_CACHE/gitops-health-<digest of go.mod, go.sum, main.go> (default
# cache ~/.cache/redoline), so an edit rebuilds and an unchanged tree reuses it. Go fetches the
# modules pinned in go.sum from the Go module proxy.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${REDOLINE_CACHE:-$HOME/.cache/redoline}"
digest=$(cd "$HERE" && cat go.mod go.sum main.go | sha256sum | cut -c1-16)
OUT="$CACHE/gitops-health-$digest"
BIN="$OUT/bin/gitops-health"

if [ ! -x "$BIN" ]; then
  command -v go >/dev/null || { echo "gitops-health: Go is required to build the harness" >&2; exit 1; }
  mkdir -p "$OUT/bin"
  # Several test binaries may ask at once: one builds, the others wait for it.
  exec 9>"$OUT/.lock"
  flock 9
  if [ ! -x "$BIN" ]; then
    echo "gitops-health: building into $OUT" >&2
    (cd "$HERE" && CGO_ENABLED=0 go build -trimpath -mod=readonly -o "$BIN.tmp" .) >&2
    mv "$BIN.tmp" "$BIN"
  fi
  exec 9>&-
fi
echo "$BIN"
