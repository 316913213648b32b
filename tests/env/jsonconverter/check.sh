#!/usr/bin/env bash
# Builds (once, cached) and runs the JsonConverter check on a JSON Lines file of records.
#
#   check.sh RECORDS.jsonl
#
# The build lives in $REDOLINE_CACHE/jsonconverter-<digest of pom.xml and sources> (default cache
# ~/.cache/redoline); Maven resolves org.apache.kafka:connect-json from Maven Central. Exit status
# is the check's: 0 when every record converts.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: check.sh RECORDS.jsonl" >&2; exit 2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cache.sh
. "$HERE/../lib/cache.sh"
# shellcheck source=../lib/maven.sh
. "$HERE/../lib/maven.sh"
die() { echo "check.sh: $*" >&2; exit 1; }
# shellcheck disable=SC2046 # the source files' names have no spaces
BUILD="$(cache_dir jsonconverter "$HERE" pom.xml $(cd "$HERE" && find src -type f | sort))"
JAVA="${JAVA:-java}"

built() { [ -f "$BUILD/.complete" ]; }

build() { maven_package "$HERE" "$BUILD"; }

build_once "$BUILD" built build

exec "$JAVA" -cp "$BUILD/project/target/classes:$BUILD/project/target/lib/*" \
  io.redoline.jsonconverter.Check "$1"
