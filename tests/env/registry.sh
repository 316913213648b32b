#!/usr/bin/env bash
# A real schema registry that speaks Confluent's Schema Registry API, for the tests of the Avro
# encoding: Apicurio Registry, whose Quarkus application Apicurio publishes on Maven Central as a
# ready-made distribution (io.apicurio:apicurio-registry-app:$REGISTRY_VERSION, classifier `all`,
# a tar.gz of the Quarkus "fast-jar" layout). Its Confluent-compatible API is served under
# /apis/ccompat/v7; its own APIs under /apis/registry/v2 and /v3. Storage is its default, an
# in-memory H2 database: every start is an empty registry.
#
#   registry.sh fetch
#       Resolve the distribution with Maven and unpack it into
#       $REDOLINE_CACHE/apicurio-registry-$REGISTRY_VERSION/app. A warm cache does nothing.
#   registry.sh start DATA_DIR PORT [OWNER_PID]
#       Start the registry in the background: HTTP on 127.0.0.1:PORT, HTTPS on a free port with a
#       certificate for 127.0.0.1 and localhost signed by a CA of DATA_DIR's own (made once per
#       directory), its management interface (health, metrics) on another free loopback port.
#       What clients need is written to DATA_DIR/registry.json (see below). With OWNER_PID, a
#       watchdog stops it once that process has exited (and then deletes DATA_DIR if
#       REGISTRY_REMOVE_DATA_ON_EXIT=1). Starting a registry that already runs from DATA_DIR does
#       nothing.
#       With REGISTRY_AUTH=1 every API call must authenticate: HTTP basic with the user
#       redoline-registry (password made once per directory), and, when REGISTRY_OIDC_DIR names
#       a running tests/env/oidc.sh directory, a bearer token that server issued (checked against
#       its keys: OpenID Connect discovery from its issuer).
#   registry.sh wait DATA_DIR PORT [TIMEOUT_SECONDS]
#       Wait until the Confluent API answers on PORT (default 120 s).
#   registry.sh stop DATA_DIR
#       SIGTERM, then SIGKILL after 15 s. Idempotent.
#
# DATA_DIR/registry.json:
#   {"url": "http://127.0.0.1:PORT/apis/ccompat/v7", "tlsUrl": "https://127.0.0.1:TLS/apis/ccompat/v7",
#    "apicurioUrl": "http://127.0.0.1:PORT/apis/registry/v2", "ca": ".../ca.pem",
#    "untrustedCa": ".../untrusted-ca.pem",
#    "basic": {"username": .., "password": ..} | null,     (REGISTRY_AUTH=1)
#    "bearer": {"tokenEndpoint": .., "clientId": .., "clientSecret": ..} | null}
#
# Environment: REGISTRY_VERSION (default below), REDOLINE_CACHE (default ~/.cache/redoline),
# REGISTRY_JAVA (a Java 21 or newer; by default `java` on PATH when it is one, else the newest
# JDK under /usr/lib/jvm that is), REGISTRY_HEAP_OPTS (default -Xms64m -Xmx384m).
set -euo pipefail

REGISTRY_VERSION="${REGISTRY_VERSION:-3.3.3}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
# shellcheck source=lib/cache.sh
. "$HERE/lib/cache.sh"
HOME_DIR="$CACHE/apicurio-registry-$REGISTRY_VERSION"
APP="$HOME_DIR/app"
MARKER="$HOME_DIR/.complete"
SERVICE=registry
SERVICE_LOG=registry.log
# shellcheck source=lib/service.sh
. "$HERE/lib/service.sh"
# shellcheck source=lib/ports.sh
. "$HERE/lib/ports.sh"
# shellcheck source=lib/tls.sh
. "$HERE/lib/tls.sh"
ARTIFACT="io.apicurio:apicurio-registry-app:$REGISTRY_VERSION:tar.gz:all"
BASIC_USER=redoline-registry
OIDC_CLIENT=redoline-capture


# --- fetch ------------------------------------------------------------------------------------

fetched() { [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$ARTIFACT" ] && [ -f "$APP/quarkus-run.jar" ]; }

cmd_fetch() {
  [ $# -eq 0 ] || die "usage: registry.sh fetch"
  fetch_once "$HOME_DIR" fetched fetch_app "apicurio registry $REGISTRY_VERSION: cached in $APP"
}

fetch_app() {
  command -v mvn >/dev/null || die "fetch needs Maven (mvn) on PATH"
  log "apicurio registry $REGISTRY_VERSION: resolving $ARTIFACT with Maven"
  local work="$HOME_DIR/download"
  rm -rf "$work" "$APP.partial"
  mkdir -p "$work" "$APP.partial"
  # The copy goal of a recent dependency plugin needs no project; the distribution is one file.
  if ! timeout 900 mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact="$ARTIFACT" -DoutputDirectory="$work" -Dmdep.useBaseVersion=true \
      >"$HOME_DIR/mvn.log" 2>&1; then
    tail -n 40 "$HOME_DIR/mvn.log" >&2
    die "Maven could not resolve $ARTIFACT (log: $HOME_DIR/mvn.log)"
  fi
  tar -xzf "$work/apicurio-registry-app-$REGISTRY_VERSION-all.tar.gz" -C "$APP.partial" \
    || die "unpacking the distribution failed"
  [ -f "$APP.partial/quarkus-run.jar" ] || die "the distribution holds no quarkus-run.jar"
  rm -rf "$APP" "$work"
  mv "$APP.partial" "$APP"
  echo "$ARTIFACT" >"$MARKER"
  log "apicurio registry $REGISTRY_VERSION: unpacked into $APP"
}

# --- java -------------------------------------------------------------------------------------

java_major() { "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }

# Apicurio Registry 3 is built for Java 21.
find_java() {
  if [ -n "${REGISTRY_JAVA:-}" ]; then echo "$REGISTRY_JAVA"; return 0; fi
  local candidate major
  # An unmatched glob stays itself, which `command -v` then skips.
  for candidate in java $(printf '%s\n' /usr/lib/jvm/*/bin/java | sort -rV); do
    command -v "$candidate" >/dev/null 2>&1 || continue
    major=$(java_major "$candidate")
    if [ "${major:-0}" -ge 21 ]; then command -v "$candidate"; return 0; fi
  done
  die "Apicurio Registry needs Java 21 or newer: none found on PATH or under /usr/lib/jvm (set REGISTRY_JAVA)"
}

# --- process helpers --------------------------------------------------------------------------

# The JVM's command line names DATA_DIR in a property of its own.
service_pid() { pid_in_file "$1/registry.pid" "-Dredoline.registry.dir=$1 "; }

# --- credentials ------------------------------------------------------------------------------

# Once per directory: a CA, the server's certificate (127.0.0.1, localhost), a CA that signed
# nothing (for the untrusted case), the basic user's password.
make_credentials() {
  local auth=$1
  make_ca "$auth" ca redoline-registry-ca
  make_ca "$auth" untrusted-ca redoline-untrusted-registry-ca
  sign_cert "$auth" server registry "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
  random_secret >"$auth/basic-password.tmp"
  mv "$auth/basic-password.tmp" "$auth/basic-password"
}

# --- start ------------------------------------------------------------------------------------

cmd_start() {
  if [ $# -lt 2 ] || [ $# -gt 3 ]; then die "usage: registry.sh start DATA_DIR PORT [OWNER_PID]"; fi
  local dir port owner="${3:-}" java
  dir="$(abs_dir "$1")"; port="$2"
  check_port "$port"
  check_owner "$owner"
  ! already_running "$dir" || return 0
  cmd_fetch
  java=$(find_java)
  local auth="$dir/auth"
  [ -f "$auth/basic-password" ] || make_credentials "$auth"
  local tls_port management_port
  PICKED+="$port "
  tls_port=$(free_port)
  management_port=$(free_port)

  # Quarkus reads its runtime configuration from system properties; what is fixed at build time
  # (the extensions, H2 in memory as the default storage) stays as Apicurio built it.
  local -a props=(
    -Dquarkus.http.host=127.0.0.1
    -Dquarkus.http.port="$port"
    -Dquarkus.http.ssl-port="$tls_port"
    -Dquarkus.http.insecure-requests=enabled
    -Dquarkus.http.ssl.certificate.files="$auth/server.pem"
    -Dquarkus.http.ssl.certificate.key-files="$auth/server.key"
    -Dquarkus.management.host=127.0.0.1
    -Dquarkus.management.port="$management_port"
    # Nothing here collects traces: no exporter retrying a collector that is not there.
    -Dquarkus.otel.enabled=false
    -Dquarkus.otel.sdk.disabled=true
  )
  local basic_json=null bearer_json=null
  if [ "${REGISTRY_AUTH:-0}" = 1 ]; then
    local password
    password=$(cat "$auth/basic-password")
    props+=(
      -Dapicurio.authn.enabled=true
      -Dquarkus.http.auth.basic=true
      -Dquarkus.security.users.embedded.plain-text=true
      "-Dquarkus.security.users.embedded.users.$BASIC_USER=$password"
      "-Dquarkus.security.users.embedded.roles.$BASIC_USER=sr-admin"
    )
    basic_json=$(printf '{"username": "%s", "password": "%s"}' "$BASIC_USER" "$password")
    if [ -n "${REGISTRY_OIDC_DIR:-}" ]; then
      local issuer
      issuer=$(cat "$REGISTRY_OIDC_DIR/issuer") \
        || die "REGISTRY_OIDC_DIR=$REGISTRY_OIDC_DIR holds no issuer (tests/env/oidc.sh start)"
      props+=(
        -Dquarkus.oidc.tenant-enabled=true
        -Dquarkus.oidc.auth-server-url="$issuer"
        -Dquarkus.oidc.client-id="$OIDC_CLIENT"
        -Dquarkus.oidc.application-type=service
      )
      bearer_json=$(printf '{"tokenEndpoint": "%s/token", "clientId": "%s", "clientSecret": "unchecked-by-the-mock-server"}' \
        "$issuer" "$OIDC_CLIENT")
    fi
  fi

  cat >"$dir/registry.json.tmp" <<EOF
{
  "url": "http://127.0.0.1:$port/apis/ccompat/v7",
  "tlsUrl": "https://127.0.0.1:$tls_port/apis/ccompat/v7",
  "apicurioUrl": "http://127.0.0.1:$port/apis/registry/v2",
  "ca": "$auth/ca.pem",
  "untrustedCa": "$auth/untrusted-ca.pem",
  "basic": $basic_json,
  "bearer": $bearer_json
}
EOF
  mv "$dir/registry.json.tmp" "$dir/registry.json"

  : >"$dir/$SERVICE_LOG"
  # The serial collector and the quick C1 compiler: a small server on a 2-core machine; the
  # working directory is DATA_DIR (Quarkus writes nothing else there).
  # shellcheck disable=SC2206 # option strings split
  local -a heap=(${REGISTRY_HEAP_OPTS:--Xms64m -Xmx384m})
  launch "$dir/registry.pid" "$dir/$SERVICE_LOG" env -C "$dir" \
    "$java" -Dredoline.registry.dir="$dir" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    "${heap[@]}" "${props[@]}" -jar "$APP/quarkus-run.jar" \
    || die "the registry did not write its pid file"
  log "registry starting from $dir (pid $(cat "$dir/registry.pid"), http 127.0.0.1:$port, https 127.0.0.1:$tls_port${REGISTRY_AUTH:+, auth=$REGISTRY_AUTH})"
  watch_owner "$owner" "$dir" "${REGISTRY_REMOVE_DATA_ON_EXIT:-0}" registry.json
}

# Up once the Confluent API answers at all: 200, or 401 when it asks for credentials.
registry_ready() {
  local code
  code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$2/apis/ccompat/v7/subjects" 2>/dev/null) || return 1
  [ "$code" = 200 ] || [ "$code" = 401 ]
}

case "${1:-}" in
  fetch) shift; cmd_fetch "$@" ;;
  start) shift; cmd_start "$@" ;;
  wait) shift; wait_ready 120 registry_ready "$@" ;;
  stop) shift; stop_service registry.pid 15 "$@" ;;
  *) die "usage: registry.sh fetch | start DATA_DIR PORT [OWNER_PID] | wait DATA_DIR PORT [TIMEOUT] | stop DATA_DIR" ;;
esac
