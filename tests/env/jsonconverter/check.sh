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
JAVA="${JAVA:-java}"

CLASSPATH_OF_CHECK=$(maven_classpath jsonconverter "$HERE")
exec "$JAVA" -cp "$CLASSPATH_OF_CHECK" io.redoline.jsonconverter.Check "$1"
