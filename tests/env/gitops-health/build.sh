#!/usr/bin/env bash
# Builds (once, cached) the GitOps health harness (main.go: Argo CD's Lua interpreter and Flux's
# CEL environment) and prints the path of the binary on stdout.
#
# The build lives in $REDOLINE_CACHE/gitops-health-<digest of go.mod, go.sum, main.go> (default
# cache ~/.cache/redoline), so an edit rebuilds and an unchanged tree reuses it. Go fetches the
# modules pinned in go.sum from the Go module proxy.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cache.sh
. "$HERE/../lib/cache.sh"
OUT="$(cache_dir gitops-health "$HERE" go.mod go.sum main.go)"
BIN="$OUT/bin/gitops-health"

built() { [ -x "$BIN" ]; }

build() {
  command -v go >/dev/null || { echo "gitops-health: Go is required to build the harness" >&2; exit 1; }
  echo "gitops-health: building into $OUT" >&2
  mkdir -p "$OUT/bin"
  (cd "$HERE" && CGO_ENABLED=0 go build -trimpath -mod=readonly -o "$BIN.tmp" .) >&2
  mv "$BIN.tmp" "$BIN"
}

build_once "$OUT" built build
echo "$BIN"
