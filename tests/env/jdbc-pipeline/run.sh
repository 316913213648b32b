#!/usr/bin/env bash
# Builds (once, cached) and runs Kafka Connect standalone with Debezium's JDBC sink connector.
#
#   run.sh fetch
#       Resolve the worker (runtime/pom.xml: connect-runtime, connect-json, a log4j2 backend) and
#       the connector plugin (plugin/pom.xml: debezium-connector-jdbc and the PostgreSQL driver)
#       and the Avro converter plugin (converter/pom.xml: Apicurio Registry's Kafka Connect
#       converters) into $REDOLINE_CACHE/jdbc-pipeline-<digest of this directory's build files>:
#       runtime/ is the worker's class path, plugins/debezium-connector-jdbc/ and
#       plugins/apicurio-registry-converter/ the plugins, as a user unpacks them into the worker's
#       plugin.path (Connect loads each in a class loader of its own).
#   run.sh path
#       Prints the plugin directory to put into plugin.path (fetching first when needed).
#   run.sh connect WORKER.properties CONNECTOR.properties...
#       Runs org.apache.kafka.connect.cli.ConnectStandalone in the foreground (exec: the caller's
#       child is the JVM), logging to stdout.
#
# Maven resolves everything from Maven Central (settings.xml maps the Confluent repository named
# by Debezium's poms to Central). Environment: REDOLINE_CACHE (default ~/.cache/redoline), JAVA,
# CONNECT_HEAP_OPTS (default -Xms128m -Xmx512m).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cache.sh
. "$HERE/../lib/cache.sh"
BUILD="$(cache_dir jdbc-pipeline "$HERE" runtime/pom.xml plugin/pom.xml converter/pom.xml settings.xml)"
PLUGIN="$BUILD/plugins/debezium-connector-jdbc"
CONVERTER="$BUILD/plugins/apicurio-registry-converter"
JAVA="${JAVA:-java}"

die() { echo "run.sh: $*" >&2; exit 1; }

resolve() {
  local pom="$1" out="$2"
  if ! mvn -B -q -s "$HERE/settings.xml" -f "$pom" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$out" >>"$BUILD/mvn.log" 2>&1; then
    tail -n 40 "$BUILD/mvn.log" >&2
    die "the Maven resolution of $pom failed (log: $BUILD/mvn.log)"
  fi
}

fetched() { [ -f "$BUILD/.complete" ]; }

fetch() {
  command -v mvn >/dev/null || die "Maven (mvn) is needed to resolve Kafka Connect and the JDBC sink"
  rm -rf "$BUILD/project" "$BUILD/runtime" "$BUILD/plugins" "$BUILD/mvn.log"
  mkdir -p "$BUILD/project"
  cp -r "$HERE/runtime" "$HERE/plugin" "$HERE/converter" "$BUILD/project/"
  resolve "$BUILD/project/runtime/pom.xml" "$BUILD/runtime"
  # Kafka's own jars (the connector's pom brings connect-api and kafka-clients of the Kafka it
  # was built with) stay out of the plugin: the worker provides them, as in Debezium's archive.
  resolve "$BUILD/project/plugin/pom.xml" "$PLUGIN"
  rm -f "$PLUGIN"/connect-api-*.jar "$PLUGIN"/kafka-clients-*.jar
  # Jackson too: the worker has it (connect-runtime 4.1.2: 2.19) with a Jackson module
  # registered as a service, which a second Jackson in the plugin's loader refuses ("not a
  # subtype") when Hibernate lists the modules. Debezium's archive leaves it to the worker.
  rm -f "$PLUGIN"/jackson-*.jar
  resolve "$BUILD/project/converter/pom.xml" "$CONVERTER"
  rm -f "$CONVERTER"/jackson-*.jar "$CONVERTER"/kafka-clients-*.jar
  ls "$CONVERTER"/apicurio-registry-utils-converter-*.jar >/dev/null 2>&1 || die "the Avro converter is not in $CONVERTER"
  [ -f "$BUILD/runtime/connect-runtime-4.1.2.jar" ] || die "connect-runtime is not in $BUILD/runtime"
  ls "$PLUGIN"/debezium-connector-jdbc-*.jar >/dev/null 2>&1 || die "the JDBC sink is not in $PLUGIN"
  touch "$BUILD/.complete"
}

cmd_fetch() { build_once "$BUILD" fetched fetch; }

case "${1:-}" in
  fetch) cmd_fetch ;;
  path) cmd_fetch; echo "$BUILD/plugins" ;;
  connect)
    shift
    [ $# -ge 2 ] || die "usage: run.sh connect WORKER.properties CONNECTOR.properties..."
    cmd_fetch
    command -v "$JAVA" >/dev/null || die "java not found (set JAVA)"
    # shellcheck disable=SC2086 # word splitting of option strings is intended
    exec "$JAVA" -Djava.awt.headless=true -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      ${CONNECT_HEAP_OPTS:--Xms128m -Xmx512m} \
      -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
      -cp "$BUILD/runtime/*" org.apache.kafka.connect.cli.ConnectStandalone "$@"
    ;;
  *) die "usage: run.sh fetch | path | connect WORKER.properties CONNECTOR.properties..." ;;
esac
