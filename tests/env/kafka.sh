#!/usr/bin/env bash
# A real single-node Apache Kafka (KRaft, broker and controller in one JVM) for the redoline tests.
# The broker jars come from Maven Central through Maven itself; nothing else is downloaded.
#
#   kafka.sh fetch
#       Resolve org.apache.kafka:kafka_2.13:$KAFKA_VERSION, its runtime dependencies and a log4j2
#       backend into $REDOLINE_CACHE/kafka-$KAFKA_VERSION/libs. A warm cache does nothing.
#   kafka.sh start DATA_DIR PORT CONTROLLER_PORT [OWNER_PID]
#       Format DATA_DIR (once, random cluster id) and start the broker in the background, listening
#       on 127.0.0.1:PORT (clients) and 127.0.0.1:CONTROLLER_PORT (KRaft). Pid file, log file and
#       configuration live in DATA_DIR. With OWNER_PID, a watchdog stops the broker once that
#       process has exited (and then deletes DATA_DIR if KAFKA_REMOVE_DATA_ON_EXIT=1).
#       Starting a broker that is already running from DATA_DIR does nothing.
#       With KAFKA_POD_LISTENER=ADDRESS:PORT (e.g. 10.244.0.1:29092, the host's address on
#       node.sh's pod bridge), a second plaintext listener "POD" on that address, advertised as
#       such, so that clients in pods get broker addresses they can reach.
#   kafka.sh wait DATA_DIR PORT [TIMEOUT_SECONDS]
#       Wait until the broker has logged that it started and accepts connections on PORT. Fails
#       with the tail of its log when it dies or the timeout (default 120 s) passes.
#   kafka.sh stop DATA_DIR
#       SIGTERM, then SIGKILL after KAFKA_STOP_GRACE seconds (default 20). Idempotent.
#
# Environment: KAFKA_VERSION (default below), LOG4J_VERSION, REDOLINE_CACHE (default
# ~/.cache/redoline), KAFKA_HEAP_OPTS (default -Xms256m -Xmx512m), KAFKA_JVM_OPTS (extra options),
# JAVA (default: java on PATH; Kafka 4.x brokers need Java 17 or newer).
set -euo pipefail

KAFKA_VERSION="${KAFKA_VERSION:-4.1.2}"
# The log4j-core version kafka-server $KAFKA_VERSION depends on; the slf4j binding must match it.
LOG4J_VERSION="${LOG4J_VERSION:-2.25.3}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
# shellcheck source=lib/cache.sh
. "$HERE/lib/cache.sh"
HOME_DIR="$CACHE/kafka-$KAFKA_VERSION"
LIBS="$HOME_DIR/libs"
MARKER="$HOME_DIR/.complete"
SERVICE=broker
SERVICE_LOG=broker.log
# shellcheck source=lib/service.sh
. "$HERE/lib/service.sh"
TEMPLATES="$HERE/kafka"
JAVA="${JAVA:-java}"

die() { echo "kafka.sh: $*" >&2; exit 1; }
log() { echo "kafka.sh: $*" >&2; }

# --- fetch ------------------------------------------------------------------------------------

render_pom() {
  sed -e "s/@KAFKA_VERSION@/$KAFKA_VERSION/g" -e "s/@LOG4J_VERSION@/$LOG4J_VERSION/g" \
    "$TEMPLATES/pom.xml.in"
}


# The marker holds a digest of the pom that produced libs/, so changing the template refetches.
pom_digest() { render_pom | sha256sum | cut -d' ' -f1; }

fetched() { [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$(pom_digest)" ] && [ -d "$LIBS" ]; }

cmd_fetch() {
  [ $# -eq 0 ] || die "usage: kafka.sh fetch"
  if fetched; then
    log "kafka $KAFKA_VERSION: cached in $LIBS"
    return 0
  fi
  build_once "$HOME_DIR" fetched fetch_libs
}

fetch_libs() {
  command -v mvn >/dev/null || die "fetch needs Maven (mvn) on PATH"
  log "kafka $KAFKA_VERSION: resolving with Maven into $LIBS"
  local work="$HOME_DIR/maven"
  rm -rf "$work" "$LIBS.partial"
  mkdir -p "$work"
  render_pom > "$work/pom.xml"
  if ! mvn -B -q -f "$work/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$LIBS.partial" >"$work/mvn.log" 2>&1; then
    tail -n 40 "$work/mvn.log" >&2
    die "Maven could not resolve org.apache.kafka:kafka_2.13:$KAFKA_VERSION (log: $work/mvn.log)"
  fi
  [ -f "$LIBS.partial/kafka_2.13-$KAFKA_VERSION.jar" ] \
    || die "Maven finished but kafka_2.13-$KAFKA_VERSION.jar is not in $LIBS.partial"
  rm -rf "$LIBS"
  mv "$LIBS.partial" "$LIBS"
  pom_digest > "$MARKER"
  log "kafka $KAFKA_VERSION: $(find "$LIBS" -name '*.jar' | wc -l) jars in $LIBS"
}

# --- process helpers --------------------------------------------------------------------------

# The pid in DATA_DIR/broker.pid if that process is alive and really is this directory's broker
# (a stale pid file whose number now belongs to something else must never be signalled).
service_pid() {
  local dir="$1" pid
  [ -f "$dir/broker.pid" ] || return 1
  pid="$(cat "$dir/broker.pid")"
  [ -n "$pid" ] && alive "$pid" || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/server.properties" || return 1
  echo "$pid"
}

# Alive and not a zombie waiting for a parent that never reaps it.
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state="$(sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" || return 1
  [ "$state" != Z ]
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# --- start ------------------------------------------------------------------------------------

# A random Kafka Uuid in its text form, as Uuid.randomUuid makes them (see the start command).
random_kafka_uuid() {
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    case "$id" in
      -* | AAAAAAAAAAAAAAAAAAAAAA | AAAAAAAAAAAAAAAAAAAAAQ) ;;
      *) printf '%s\n' "$id"; return ;;
    esac
  done
}

cmd_start() {
  if [ $# -lt 3 ] || [ $# -gt 4 ]; then die "usage: kafka.sh start DATA_DIR PORT CONTROLLER_PORT [OWNER_PID]"; fi
  local dir port cport pid owner="${4:-}"
  dir="$(abs_dir "$1")"; port="$2"; cport="$3"
  check_port "$port"; check_port "$cport"
  [ "$port" != "$cport" ] || die "PORT and CONTROLLER_PORT must differ"
  [ -z "$owner" ] || check_owner "$owner"
  if pid="$(service_pid "$dir")"; then
    log "broker already running from $dir (pid $pid)"
    return 0
  fi
  cmd_fetch
  command -v "$JAVA" >/dev/null || die "java not found (set JAVA)"

  sed -e "s#@DATA_DIR@#$dir#g" -e "s/@PORT@/$port/g" -e "s/@CONTROLLER_PORT@/$cport/g" \
    "$TEMPLATES/server.properties.in" > "$dir/server.properties"
  if [ -n "${KAFKA_POD_LISTENER:-}" ]; then
    [[ $KAFKA_POD_LISTENER =~ ^([0-9]+\.){3}[0-9]+:([0-9]+)$ ]] \
      || die "KAFKA_POD_LISTENER must be IPv4-ADDRESS:PORT, got '$KAFKA_POD_LISTENER'"
    check_port "${KAFKA_POD_LISTENER##*:}"
    sed -i -e "s#^listeners=.*#&,POD://$KAFKA_POD_LISTENER#" \
      -e "s#^advertised.listeners=.*#&,POD://$KAFKA_POD_LISTENER#" \
      -e "s#^listener.security.protocol.map=.*#&,POD:PLAINTEXT#" "$dir/server.properties"
  fi

  local cp="$LIBS/*"
  # The serial collector suits a small heap on 2 cores (no parallel GC threads competing with
  # the tests).
  local -a jvm=(-Djava.awt.headless=true -XX:+UseSerialGC
    -Dlog4j2.configurationFile="$TEMPLATES/log4j2.properties")
  # shellcheck disable=SC2206 # word splitting of option strings is intended
  jvm+=(${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} ${KAFKA_JVM_OPTS:-})

  # Format once: a fresh directory gets a random cluster id (Kafka's Uuid text form is the
  # unpadded URL-safe base64 of 16 random bytes). Like Kafka's own Uuid.randomUuid, draw again
  # when the id starts with '-' (one time in 64: the storage tool would read it as an option) or
  # is one of the two reserved ids. A directory formatted before keeps its own.
  if [ ! -f "$dir/log-dirs/meta.properties" ]; then
    local cluster_id
    cluster_id=$(random_kafka_uuid)
    # A one-shot tool: the quick C1 compiler alone starts it about a second sooner.
    if ! "$JAVA" "${jvm[@]}" -XX:TieredStopAtLevel=1 -cp "$cp" kafka.tools.StorageTool format \
        --cluster-id "$cluster_id" --config "$dir/server.properties" >"$dir/format.log" 2>&1; then
      cat "$dir/format.log" >&2
      die "formatting $dir failed"
    fi
  fi

  # The broker gets its own session (no terminal signals from whoever started us) and no
  # inherited descriptors: a caller capturing our output must see EOF when this script exits.
  : > "$dir/broker.log"
  # shellcheck disable=SC2016 # $$ and "$@" belong to the inner shell
  setsid bash -c 'echo $$ > "$1"; shift; exec "$@"' start-broker "$dir/broker.pid" \
    "$JAVA" "${jvm[@]}" -cp "$cp" kafka.Kafka "$dir/server.properties" \
    </dev/null >>"$dir/broker.log" 2>&1 &
  for _ in $(seq 50); do [ -s "$dir/broker.pid" ] && break; sleep 0.1; done
  [ -s "$dir/broker.pid" ] || die "broker did not write its pid file"
  local bpid
  bpid="$(cat "$dir/broker.pid")"
  log "broker starting from $dir (pid $bpid, 127.0.0.1:$port, controller 127.0.0.1:$cport${KAFKA_POD_LISTENER:+, pods $KAFKA_POD_LISTENER})"

  if [ -n "$owner" ]; then
    # The watchdog: once the owner is gone, stop the broker (and remove its data if asked).
    # Its own pid is kept so `stop` can end it too.
    local marker=""
    [ "${KAFKA_REMOVE_DATA_ON_EXIT:-0}" != 1 ] || marker=server.properties
    start_watchdog "$owner" "$SELF" "$dir" "$marker"
    log "watchdog: stops the broker when pid $owner exits"
  fi
}

# --- wait -------------------------------------------------------------------------------------

cmd_wait() {
  if [ $# -lt 2 ] || [ $# -gt 3 ]; then die "usage: kafka.sh wait DATA_DIR PORT [TIMEOUT_SECONDS]"; fi
  wait_ready "$1" "$2" "${3:-120}" broker_ready
}

# KafkaRaftServer logs this once the broker and controller have both finished starting.
broker_ready() { grep -q "Kafka Server started" "$1/broker.log" 2>/dev/null && port_open "$2"; }

# --- stop -------------------------------------------------------------------------------------

cmd_stop() {
  [ $# -eq 1 ] || die "usage: kafka.sh stop DATA_DIR"
  local dir grace="${KAFKA_STOP_GRACE:-20}" pid
  dir="$(stopping_dir "$1")" || return 0
  end_watchdog "$dir"
  if ! pid="$(service_pid "$dir")"; then
    rm -f "$dir/broker.pid"
    log "broker of $dir is not running"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  if alive "$pid"; then
    log "broker (pid $pid) still running after ${grace}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 10))
    while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    if alive "$pid"; then die "broker (pid $pid) survived SIGKILL"; fi
  fi
  rm -f "$dir/broker.pid"
  log "broker of $dir stopped"
}

case "${1:-}" in
  fetch) shift; cmd_fetch "$@" ;;
  start) shift; cmd_start "$@" ;;
  wait) shift; cmd_wait "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) die "usage: kafka.sh fetch | start DATA_DIR PORT CONTROLLER_PORT [OWNER_PID] | wait DATA_DIR PORT [TIMEOUT] | stop DATA_DIR" ;;
esac
