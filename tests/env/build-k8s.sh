#!/usr/bin/env bash
# Builds the Kubernetes used by the tests from Go modules (no prebuilt downloads): etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kubectl, all at the versions
# below, and the pause image every pod's sandbox needs. k8s.sh runs the control plane, node.sh the
# kubelet, kube-scheduler and the pause image, and the tests run kubectl (kubectl_output, `kubectl
# wait`, the demo).
# Result: $REDOLINE_CACHE/k8s-<version>/bin, with the pause image as the OCI archive
# bin/pause-image.tar (name in `bin/pause-image.ref`). Idempotent: a complete cache is reused as is.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/oci.sh
. "$HERE/lib/oci.sh"
# K8S_VERSION and K8S_HOME, the directory built here.
# shellcheck source=lib/k8s-bin.sh
. "$HERE/lib/k8s-bin.sh"

OUT="$K8S_HOME"
BINS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
# Bump when the way the binaries are built changes, so warm caches rebuild once.
BUILD_REV=4

complete() {
  [ "$(cat "$OUT/bin/.build-rev" 2>/dev/null)" = "$BUILD_REV" ] || return 1
  for b in "${BINS[@]}"; do [ -x "$OUT/bin/$b" ] || return 1; done
  [ -s "$OUT/bin/pause-image.tar" ] && [ -s "$OUT/bin/pause-image.ref" ]
}
if complete; then echo "k8s $K8S_VERSION: cached in $OUT/bin"; exit 0; fi

command -v go >/dev/null || { echo "build-k8s: Go is required (https://go.dev is not reachable; install Debian golang or use the machine's)"; exit 1; }
rm -rf "${OUT:?}/bin"
mkdir -p "$OUT/bin" "$OUT/src"
cd "$OUT/src"

# k8s.io/kubernetes pins its staging modules at v0.0.0 with replaces into ./staging, which do not
# apply to a consumer. A wrapper module re-points each staging module at its published v0.X.Y tag.
staging_version="v0.${K8S_VERSION#v1.}"
go mod download -json "k8s.io/kubernetes@$K8S_VERSION" > kubernetes.mod.json
gomod=$(python3 -c 'import json,sys; print(json.load(open("kubernetes.mod.json"))["GoMod"])')
staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$gomod")
[ -n "$staging" ] || { echo "build-k8s: found no staging modules in $gomod"; exit 1; }

{
  echo "module redoline.io/testenv/k8s"
  echo
  echo "go $(sed -n 's/^go //p' "$gomod")"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  for m in $staging; do echo "	$m => $m $staging_version"; done
  echo ")"
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
# etcd comes at the version kubernetes itself requires (go.etcd.io/etcd/server/v3 in its go.mod).
go mod tidy -e >/dev/null 2>tidy.log || { cat tidy.log; exit 1; }

export CGO_ENABLED=0
# Stamp the release version, as Kubernetes' own build does; without it every binary reports
# v0.0.0-master and kubectl warns about version skew.
major=${K8S_VERSION#v}; minor=${major#*.}; major=${major%%.*}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
# One `go build` for all six, so that one binary's link overlaps the others' compiles (four builds
# in a row leave a core idle at every link).
# No DWARF from the compiler: `-w` dropped it at link time anyway.
tmp="$OUT/bin/.tmp"
mkdir -p "$tmp"
echo "build-k8s: building ${BINS[*]}"
go build -trimpath -gcflags=all=-dwarf=false -ldflags "$ldflags" -o "$tmp/" \
  go.etcd.io/etcd/server/v3 \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kubectl
# `go build -o DIR/` names a binary after its package path, without a /vN suffix.
mv "$tmp/server" "$OUT/bin/etcd"
for name in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do mv "$tmp/$name" "$OUT/bin/$name"; done
rmdir "$tmp"

# The pause image: the sandbox every pod runs first, holding its namespaces. Built from the
# kubernetes module's own source as its Makefile does (static, so the image needs no libc), at
# the tag that Makefile gives it.
src=$(python3 -c 'import json; print(json.load(open("kubernetes.mod.json"))["Dir"])')
pause_tag=$(sed -n 's/^TAG ?= *//p' "$src/build/pause/Makefile")
[ -n "$pause_tag" ] || { echo "build-k8s: no TAG in $src/build/pause/Makefile"; exit 1; }
command -v gcc >/dev/null || { echo "build-k8s: gcc is required for the pause image (install-deps.sh)"; exit 1; }
rootfs="$OUT/bin/.pause-rootfs"
rm -rf "$rootfs" && mkdir -p "$rootfs"
gcc -Os -Wall -Werror -static -DVERSION="v$pause_tag-redoline" -o "$rootfs/pause" "$src/build/pause/linux/pause.c"
strip "$rootfs/pause"
# The upstream image runs as 65535:65535 (build/pause/Dockerfile).
oci_archive "$rootfs" "localhost/redoline-pause:$pause_tag" "$OUT/bin/pause-image.tar" 65535:65535 /pause
rm -rf "$rootfs"
echo "localhost/redoline-pause:$pause_tag" > "$OUT/bin/pause-image.ref"
echo "$BUILD_REV" > "$OUT/bin/.build-rev"
complete && echo "k8s $K8S_VERSION: built into $OUT/bin"
