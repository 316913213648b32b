#!/usr/bin/env bash
# A real OAuth 2.0 / OpenID Connect token endpoint for the tests of SASL/OAUTHBEARER to Kafka
# (KIP-768): NAV's mock-oauth2-server, from Maven Central through Maven itself. It issues signed
# JWTs for the client credentials grant and publishes their keys as a JWKS, which the broker
# checks every token against.
#
#   oidc.sh fetch
#       Resolve no.nav.security:mock-oauth2-server:$OIDC_VERSION with its runtime dependencies
#       into $REDOLINE_CACHE/mock-oauth2-server-$OIDC_VERSION/libs. A warm cache does nothing.
#   oidc.sh start DATA_DIR PORT [OWNER_PID]
#       Start the server in the background on 127.0.0.1:PORT. Its issuer is
#       http://127.0.0.1:PORT/redoline (written to DATA_DIR/issuer): tokens from
#       <issuer>/token, keys at <issuer>/jwks. A client credentials token has `sub`
#       redoline-oauth and `aud` kafka, whatever client asks (the server checks no client
#       secret: it stands for an identity provider, the broker's check of the token is what the
#       tests exercise). With OWNER_PID, a watchdog stops it once that process has exited (and
#       then deletes DATA_DIR if OIDC_REMOVE_DATA_ON_EXIT=1).
#   oidc.sh wait DATA_DIR PORT [TIMEOUT_SECONDS]
#       Wait until the server answers /isalive (default 60 s).
#   oidc.sh stop DATA_DIR
#       SIGTERM, then SIGKILL after 10 s. Idempotent.
#
# Environment: OIDC_VERSION (default below), REDOLINE_CACHE (default ~/.cache/redoline), JAVA.
set -euo pipefail

OIDC_VERSION="${OIDC_VERSION:-6.0.2}"
ISSUER_ID=redoline
SUBJECT=redoline-oauth
AUDIENCE=kafka
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
# shellcheck source=lib/cache.sh
. "$HERE/lib/cache.sh"
HOME_DIR="$CACHE/mock-oauth2-server-$OIDC_VERSION"
LIBS="$HOME_DIR/libs"
MARKER="$HOME_DIR/.complete"
SERVICE="token endpoint"
SERVICE_LOG=oidc.log
# shellcheck source=lib/service.sh
. "$HERE/lib/service.sh"
# shellcheck source=lib/maven.sh
. "$HERE/lib/maven.sh"
JAVA="${JAVA:-java}"


render_pom() { sed -e "s/@OIDC_VERSION@/$OIDC_VERSION/g" "$HERE/oidc/pom.xml.in"; }
fetched() { maven_fetched render_pom "$LIBS" "$MARKER"; }

cmd_fetch() {
  [ $# -eq 0 ] || die "usage: oidc.sh fetch"
  fetch_once "$HOME_DIR" fetched fetch_libs "mock-oauth2-server $OIDC_VERSION: cached in $LIBS"
}

fetch_libs() {
  maven_fetch render_pom "$LIBS" "$MARKER" "no.nav.security:mock-oauth2-server:$OIDC_VERSION" \
    "mock-oauth2-server-$OIDC_VERSION.jar"
}

# The JVM's command line names DATA_DIR in a property of its own.
service_pid() { pid_in_file "$1/oidc.pid" "-Dredoline.oidc.dir=$1 "; }

cmd_start() {
  if [ $# -lt 2 ] || [ $# -gt 3 ]; then die "usage: oidc.sh start DATA_DIR PORT [OWNER_PID]"; fi
  local dir port owner="${3:-}"
  dir="$(abs_dir "$1")"; port="$2"
  check_port "$port"
  check_owner "$owner"
  ! already_running "$dir" || return 0
  cmd_fetch
  command -v "$JAVA" >/dev/null || die "java not found (set JAVA)"
  # Client credentials requests (what librdkafka's OIDC client sends) get the subject the
  # broker's super.users or ACLs name, and the audience the broker expects.
  cat >"$dir/config.json" <<EOF
{
  "tokenCallbacks": [
    {
      "issuerId": "$ISSUER_ID",
      "tokenExpiry": 3600,
      "requestMappings": [
        {
          "requestParam": "grant_type",
          "match": "client_credentials",
          "claims": { "sub": "$SUBJECT", "aud": ["$AUDIENCE"] }
        }
      ]
    }
  ]
}
EOF
  echo "http://127.0.0.1:$port/$ISSUER_ID" >"$dir/issuer"
  : >"$dir/$SERVICE_LOG"
  # The quick C1 compiler and the serial collector: a small server on a 2-core machine.
  launch "$dir/oidc.pid" "$dir/$SERVICE_LOG" \
    env SERVER_HOSTNAME=127.0.0.1 SERVER_PORT="$port" JSON_CONFIG_PATH="$dir/config.json" \
    "$JAVA" -Dredoline.oidc.dir="$dir" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx128m \
    -cp "$LIBS/*" no.nav.security.mock.oauth2.StandaloneMockOAuth2ServerKt \
    || die "the token endpoint did not write its pid file"
  log "token endpoint starting from $dir (pid $(cat "$dir/oidc.pid"), issuer $(cat "$dir/issuer"))"
  watch_owner "$owner" "$dir" "${OIDC_REMOVE_DATA_ON_EXIT:-0}" config.json
}

oidc_ready() { curl -sf -m 2 "http://127.0.0.1:$2/isalive" >/dev/null 2>&1; }

case "${1:-}" in
  fetch) shift; cmd_fetch "$@" ;;
  start) shift; cmd_start "$@" ;;
  wait) shift; wait_ready 60 oidc_ready "$@" ;;
  stop) shift; stop_service oidc.pid 10 "$@" ;;
  *) die "usage: oidc.sh fetch | start DATA_DIR PORT [OWNER_PID] | wait DATA_DIR PORT [TIMEOUT] | stop DATA_DIR" ;;
esac
