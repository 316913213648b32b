#!/usr/bin/env bash
# Builds helm from its Go module (no prebuilt downloads; Debian has no helm package), for the chart
# checks in tests/tests/helm_chart.rs. Same conventions as build-k8s.sh:
# Result: $REDOLINE_CACHE/helm-<version>/bin/helm. Idempotent: a complete cache is reused as is.
#   build-helm.sh        builds (or finds) it and says which
#   build-helm.sh path   only prints the binary's path (test-all.sh exports it as REDOLINE_HELM)
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}" # the newest v3 on the Go proxy when the chart was written
# shellcheck source=lib/cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
OUT="$CACHE/helm-$HELM_VERSION"
# Bump when the way the binary is built changes, so warm caches rebuild once.
BUILD_REV=2

if [ "${1:-}" = path ]; then echo "$OUT/bin/helm"; exit 0; fi

complete() {
  [ "$(cat "$OUT/bin/.build-rev" 2>/dev/null)" = "$BUILD_REV" ] && [ -x "$OUT/bin/helm" ]
}
if complete; then echo "helm $HELM_VERSION: cached in $OUT/bin"; exit 0; fi

command -v go >/dev/null || { echo "build-helm: Go is required (install Debian golang or use the machine's)"; exit 1; }
rm -rf "${OUT:?}/bin"
mkdir -p "$OUT/bin" "$OUT/src"
cd "$OUT/src"

# A wrapper module that requires helm at the pinned version: `go build` of a main package of a
# dependency uses helm's own go.mod requirements (go mod tidy keeps them), so the build is the
# one helm's release would make, minus their Makefile's extra stamping which is done below.
cat > go.mod <<GOMOD
module redoline.io/testenv/helm

go 1.24

require helm.sh/helm/v3 $HELM_VERSION
GOMOD
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "helm.sh/helm/v3/cmd/helm"
GO
go mod tidy -e >/dev/null 2>tidy.log || { cat tidy.log; exit 1; }

export CGO_ENABLED=0
# Stamp the versions as helm's Makefile does. Without the helm version `helm version` says
# v3.x-dev; without the Kubernetes version (from client-go, v0.X.Y -> 1.X) `helm template` and
# `helm lint` assume Kubernetes v1.20 and refuse our chart's kubeVersion constraint.
client_go=$(go list -f '{{.Version}}' -m k8s.io/client-go)
k8s_minor=$(echo "$client_go" | cut -d. -f2)
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done
echo "build-helm: building helm $HELM_VERSION (helm.sh/helm/v3/cmd/helm)"
go build -trimpath -ldflags "$ldflags" -o "$OUT/bin/helm.tmp" helm.sh/helm/v3/cmd/helm
mv "$OUT/bin/helm.tmp" "$OUT/bin/helm"
echo "$BUILD_REV" > "$OUT/bin/.build-rev"
complete && echo "helm $HELM_VERSION: built into $OUT/bin"
