#!/usr/bin/env bash
# Builds (once, cached) and runs the independent Avro conversion check (src/.../Check.java).
#
#   check.sh check JSON.jsonl AVRO.jsonl V2_URL CCOMPAT_URL
#       Line N of AVRO.jsonl must be redoline's Avro of line N of JSON.jsonl: the same schema and
#       body that Kafka Connect's JsonConverter then Apicurio's AvroConverter make of it. Exit 0
#       when every record matches; each mismatch is printed with both sides.
#   check.sh make JSON.jsonl V2_URL CCOMPAT_URL
#       Prints the converter's own Avro lines for JSON.jsonl.
#
# V2_URL: the registry's Apicurio v2 API root (registry.json's apicurioUrl), CCOMPAT_URL its
# Confluent API root (url); tests/env/registry.sh runs one. The build lives in
# $REDOLINE_CACHE/avroconverter-<digest of pom.xml, settings.xml and sources> (default cache
# ~/.cache/redoline); Maven resolves Kafka's connect-json and Apicurio's converter from Maven
# Central (settings.xml maps the other repositories Apicurio's poms name to it).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cache.sh
. "$HERE/../lib/cache.sh"
# shellcheck source=../lib/maven.sh
. "$HERE/../lib/maven.sh"
die() { echo "check.sh: $*" >&2; exit 1; }
JAVA="${JAVA:-java}"

usage() {
  echo "usage: check.sh check JSON.jsonl AVRO.jsonl V2_URL CCOMPAT_URL | make JSON.jsonl V2_URL CCOMPAT_URL | build" >&2
  exit 2
}

case "${1:-}" in
  check) [ $# -eq 5 ] || usage ;;
  make) [ $# -eq 4 ] || usage ;;
  build) [ $# -eq 1 ] || usage ;;
  *) usage ;;
esac
CLASSPATH_OF_CHECK=$(maven_classpath avroconverter "$HERE" -s "$HERE/settings.xml")
[ "$1" != build ] || exit 0
exec "$JAVA" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$CLASSPATH_OF_CHECK" \
  io.redoline.avroconverter.Check "$@"
