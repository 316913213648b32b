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
#       With KAFKA_AUTH=1, a listener per authentication and the broker's authorizer (see
#       "Authentication" below); what clients need to know is in DATA_DIR/auth/auth.json.
#   kafka.sh wait DATA_DIR PORT [TIMEOUT_SECONDS]
#       Wait until the broker has logged that it started and accepts connections on PORT. Fails
#       with the tail of its log when it dies or the timeout (default 120 s) passes.
#   kafka.sh stop DATA_DIR
#       SIGTERM, then SIGKILL after KAFKA_STOP_GRACE seconds (default 20). Idempotent.
#   kafka.sh fetch-tools
#       Resolve org.apache.kafka:kafka-tools:$KAFKA_VERSION (kafka-acls.sh's AclCommand) with its
#       dependencies into $REDOLINE_CACHE/kafka-tools-$KAFKA_VERSION/libs, apart from the broker's
#       jars. A warm cache does nothing.
#   kafka.sh acls ARGS...
#       kafka-acls.sh ARGS... (fetching the tools first when needed).
#
# Environment: KAFKA_VERSION (default below), LOG4J_VERSION, REDOLINE_CACHE (default
# ~/.cache/redoline), KAFKA_HEAP_OPTS (default -Xms256m -Xmx512m), KAFKA_JVM_OPTS (extra options),
# JAVA (default: java on PATH; Kafka 4.x brokers need Java 17 or newer).
#
# Authentication (KAFKA_AUTH=1). Certificates, keys and passwords are made once per DATA_DIR
# (openssl: a CA, the broker's certificate for 127.0.0.1 and localhost, a client certificate for
# mutual TLS, and a second CA that signed nothing the broker has, for the untrusted case). On
# loopback ports of its own choosing, the broker gets these listeners:
#   SSL        TLS, server verified by the client, no client certificate (principal ANONYMOUS)
#   MTLS       TLS with ssl.client.auth=required (principal User:CN=redoline-mtls)
#   PODMTLS    the same on the pods' address, with KAFKA_POD_LISTENER
#   SASLSSL    SASL over TLS: PLAIN (redoline-plain), SCRAM-SHA-256 and SCRAM-SHA-512
#              (redoline-scram, and acl-capture, the one principal without super-user rights)
#   KERBEROS   SASL_PLAINTEXT with GSSAPI (redoline-kerberos), when KAFKA_KDC_DIR names a
#              running tests/env/kdc.sh directory; the broker is kafka/127.0.0.1
#   OAUTH      SASL_PLAINTEXT with OAUTHBEARER (redoline-oauth), tokens checked against the JWKS
#              of the tests/env/oidc.sh server whose directory KAFKA_OIDC_DIR names (KIP-768)
# The broker runs StandardAuthorizer with allow.everyone.if.no.acl.found=false; every principal
# above but acl-capture is a super user, and so is ANONYMOUS (the plaintext, pod and controller
# listeners), so tests that do not test authorization see no difference. SCRAM credentials are
# written when the directory is formatted.
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
# shellcheck source=lib/maven.sh
. "$HERE/lib/maven.sh"
# shellcheck source=lib/tls.sh
. "$HERE/lib/tls.sh"
# shellcheck source=lib/ports.sh
. "$HERE/lib/ports.sh"
TEMPLATES="$HERE/kafka"
JAVA="${JAVA:-java}"


# --- fetch ------------------------------------------------------------------------------------

render_pom() {
  sed -e "s/@KAFKA_VERSION@/$KAFKA_VERSION/g" -e "s/@LOG4J_VERSION@/$LOG4J_VERSION/g" \
    "$TEMPLATES/pom.xml.in"
}

fetched() { maven_fetched render_pom "$LIBS" "$MARKER"; }

cmd_fetch() {
  [ $# -eq 0 ] || die "usage: kafka.sh fetch"
  fetch_once "$HOME_DIR" fetched fetch_libs "kafka $KAFKA_VERSION: cached in $LIBS"
}

fetch_libs() {
  maven_fetch render_pom "$LIBS" "$MARKER" "org.apache.kafka:kafka_2.13:$KAFKA_VERSION" \
    "kafka_2.13-$KAFKA_VERSION.jar"
  log "kafka $KAFKA_VERSION: $(find "$LIBS" -name '*.jar' | wc -l) jars in $LIBS"
}

# --- tools -----------------------------------------------------------------------------------

TOOLS_HOME="$CACHE/kafka-tools-$KAFKA_VERSION"
TOOLS_LIBS="$TOOLS_HOME/libs"

render_tools_pom() {
  sed -e "s/@KAFKA_VERSION@/$KAFKA_VERSION/g" -e "s/@LOG4J_VERSION@/$LOG4J_VERSION/g" \
    "$TEMPLATES/tools-pom.xml.in"
}

tools_fetched() { maven_fetched render_tools_pom "$TOOLS_LIBS" "$TOOLS_HOME/.complete"; }

fetch_tools() {
  maven_fetch render_tools_pom "$TOOLS_LIBS" "$TOOLS_HOME/.complete" \
    "org.apache.kafka:kafka-tools:$KAFKA_VERSION"
}

cmd_fetch_tools() {
  tools_fetched || build_once "$TOOLS_HOME" tools_fetched fetch_tools
}

cmd_acls() {
  cmd_fetch_tools
  # A one-shot tool: the quick C1 compiler, a small heap, no parallel GC threads; log4j2's own
  # default configuration (errors only, on the console).
  "$JAVA" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx128m \
    -cp "$TOOLS_LIBS/*" org.apache.kafka.tools.AclCommand "$@"
}

# --- process helpers --------------------------------------------------------------------------

# The broker's command line names its configuration in DATA_DIR.
service_pid() { pid_in_file "$1/broker.pid" "$1/server.properties"; }

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
  local dir port cport owner="${4:-}"
  dir="$(abs_dir "$1")"; port="$2"; cport="$3"
  check_port "$port"; check_port "$cport"
  [ "$port" != "$cport" ] || die "PORT and CONTROLLER_PORT must differ"
  check_owner "$owner"
  ! already_running "$dir" || return 0
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

  local -a format_extra=()
  local auth_jvm=""
  [ "${KAFKA_AUTH:-0}" != 1 ] || setup_auth "$dir" "$port"

  local cp="$LIBS/*"
  # The serial collector suits a small heap on 2 cores (no parallel GC threads competing with
  # the tests).
  local -a jvm=(-Djava.awt.headless=true -XX:+UseSerialGC
    -Dlog4j2.configurationFile="$TEMPLATES/log4j2.properties")
  # shellcheck disable=SC2206 # word splitting of option strings is intended
  jvm+=(${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} ${KAFKA_JVM_OPTS:-} $auth_jvm)

  # Format once: a fresh directory gets a random cluster id (Kafka's Uuid text form is the
  # unpadded URL-safe base64 of 16 random bytes). Like Kafka's own Uuid.randomUuid, draw again
  # when the id starts with '-' (one time in 64: the storage tool would read it as an option) or
  # is one of the two reserved ids. A directory formatted before keeps its own.
  if [ ! -f "$dir/log-dirs/meta.properties" ]; then
    local cluster_id
    cluster_id=$(random_kafka_uuid)
    # A one-shot tool: the quick C1 compiler alone starts it about a second sooner.
    if ! "$JAVA" "${jvm[@]}" -XX:TieredStopAtLevel=1 -cp "$cp" kafka.tools.StorageTool format \
        --cluster-id "$cluster_id" --config "$dir/server.properties" "${format_extra[@]}" \
        >"$dir/format.log" 2>&1; then
      cat "$dir/format.log" >&2
      die "formatting $dir failed"
    fi
  fi

  : > "$dir/$SERVICE_LOG"
  launch "$dir/broker.pid" "$dir/$SERVICE_LOG" \
    "$JAVA" "${jvm[@]}" -cp "$cp" kafka.Kafka "$dir/server.properties" \
    || die "broker did not write its pid file"
  log "broker starting from $dir (pid $(cat "$dir/broker.pid"), 127.0.0.1:$port, controller 127.0.0.1:$cport${KAFKA_POD_LISTENER:+, pods $KAFKA_POD_LISTENER})"
  watch_owner "$owner" "$dir" "${KAFKA_REMOVE_DATA_ON_EXIT:-0}" server.properties
}

# --- authentication (KAFKA_AUTH=1) ------------------------------------------------------------

# Once per directory: CAs, certificates, passwords (kept with the data they were formatted into).
make_credentials() {
  local auth=$1
  make_ca "$auth" ca redoline-test-ca
  make_ca "$auth" untrusted-ca redoline-untrusted-ca
  # The pods' listener's address too (KAFKA_POD_LISTENER), for the PODMTLS listener.
  local pod_san=""
  [ -z "${KAFKA_POD_LISTENER:-}" ] || pod_san=",IP:${KAFKA_POD_LISTENER%%:*}"
  sign_cert "$auth" broker broker "subjectAltName=IP:127.0.0.1,DNS:localhost$pod_san
extendedKeyUsage=serverAuth"
  sign_cert "$auth" redoline-mtls redoline-mtls "extendedKeyUsage=clientAuth"
  # Kafka's PEM key store: the private key (PKCS#8, as openssl writes it) then the chain.
  cat "$auth/broker.key" "$auth/broker.pem" >"$auth/broker-keystore.pem"
  local user
  {
    for user in PLAIN SCRAM ACL; do
      echo "${user}_PASSWORD=$(random_secret)"
    done
  } >"$auth/passwords.env.tmp"
  mv "$auth/passwords.env.tmp" "$auth/passwords.env"
}

# Adds the listeners, authorizer and SASL settings to DATA_DIR/server.properties, sets
# format_extra (SCRAM credentials) and auth_jvm (JVM options) of cmd_start, and writes
# DATA_DIR/auth/auth.json.
setup_auth() {
  local dir=$1 port=$2 auth="$1/auth"
  [ -f "$auth/passwords.env" ] || make_credentials "$auth"
  # shellcheck disable=SC1091 # made above
  . "$auth/passwords.env"
  local ssl_port mtls_port sasl_port krb_port="" oauth_port=""
  ssl_port=$(free_port); mtls_port=$(free_port); sasl_port=$(free_port)
  local listeners="SSL://127.0.0.1:$ssl_port,MTLS://127.0.0.1:$mtls_port,SASLSSL://127.0.0.1:$sasl_port"
  local map="SSL:SSL,MTLS:SSL,SASLSSL:SASL_SSL"
  local supers="User:ANONYMOUS;User:CN=redoline-mtls;User:redoline-plain;User:redoline-scram"
  local krb_json="null" oauth_json="null" pod_mtls_json="null"
  # Mutual TLS for pods as well (tests of Strimzi-shaped Secrets on the node), on the pods'
  # address beside the plaintext POD listener.
  if [ -n "${KAFKA_POD_LISTENER:-}" ]; then
    local pod_mtls
    pod_mtls="${KAFKA_POD_LISTENER%%:*}:$(free_port)"
    listeners+=",PODMTLS://$pod_mtls"
    map+=",PODMTLS:SSL"
    pod_mtls_json="\"$pod_mtls\""
  fi
  {
    echo
    echo "# --- authentication (kafka.sh, KAFKA_AUTH=1) ---"
    echo "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    echo "allow.everyone.if.no.acl.found=false"
    # Kafka's PEM stores: no keystore password to manage in a throwaway environment.
    for l in ssl mtls podmtls saslssl; do
      echo "listener.name.$l.ssl.keystore.type=PEM"
      echo "listener.name.$l.ssl.keystore.location=$auth/broker-keystore.pem"
      echo "listener.name.$l.ssl.truststore.type=PEM"
      echo "listener.name.$l.ssl.truststore.location=$auth/ca.pem"
    done
    echo "listener.name.ssl.ssl.client.auth=none"
    echo "listener.name.mtls.ssl.client.auth=required"
    echo "listener.name.podmtls.ssl.client.auth=required"
    echo "listener.name.saslssl.ssl.client.auth=none"
    echo "listener.name.saslssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
    echo "listener.name.saslssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_redoline-plain=\"$PLAIN_PASSWORD\";"
    echo "listener.name.saslssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
    echo "listener.name.saslssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
  } >>"$dir/server.properties"
  format_extra=(--add-scram "SCRAM-SHA-256=[name=redoline-scram,password=$SCRAM_PASSWORD]"
    --add-scram "SCRAM-SHA-512=[name=redoline-scram,password=$SCRAM_PASSWORD]"
    --add-scram "SCRAM-SHA-512=[name=acl-capture,password=$ACL_PASSWORD]")

  if [ -n "${KAFKA_KDC_DIR:-}" ]; then
    local kdc
    kdc=$(cd "$KAFKA_KDC_DIR" && pwd) || die "KAFKA_KDC_DIR: no such directory"
    { [ -f "$kdc/kafka.keytab" ] && [ -f "$kdc/krb5.conf" ]; } || die "KAFKA_KDC_DIR=$kdc holds no realm (tests/env/kdc.sh start)"
    krb_port=$(free_port)
    listeners+=",KERBEROS://127.0.0.1:$krb_port"
    map+=",KERBEROS:SASL_PLAINTEXT"
    supers+=";User:redoline-kerberos"
    {
      echo "listener.name.kerberos.sasl.enabled.mechanisms=GSSAPI"
      echo "sasl.kerberos.service.name=kafka"
      echo "listener.name.kerberos.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab=\"$kdc/kafka.keytab\" principal=\"kafka/127.0.0.1@REDOLINE.TEST\";"
    } >>"$dir/server.properties"
    auth_jvm+=" -Djava.security.krb5.conf=$kdc/krb5.conf"
    krb_json=$(printf '{"listener": "127.0.0.1:%s", "krb5Conf": "%s", "keytab": "%s", "principal": "redoline-kerberos@REDOLINE.TEST", "serviceName": "kafka"}' \
      "$krb_port" "$kdc/krb5.conf" "$kdc/client.keytab")
  fi

  if [ -n "${KAFKA_OIDC_DIR:-}" ]; then
    local issuer
    issuer=$(cat "$KAFKA_OIDC_DIR/issuer") || die "KAFKA_OIDC_DIR=$KAFKA_OIDC_DIR holds no issuer (tests/env/oidc.sh start)"
    oauth_port=$(free_port)
    listeners+=",OAUTH://127.0.0.1:$oauth_port"
    map+=",OAUTH:SASL_PLAINTEXT"
    supers+=";User:redoline-oauth"
    {
      echo "listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER"
      echo "listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
      echo "listener.name.oauth.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
      echo "sasl.oauthbearer.jwks.endpoint.url=$issuer/jwks"
      echo "sasl.oauthbearer.expected.audience=kafka"
      echo "sasl.oauthbearer.expected.issuer=$issuer"
    } >>"$dir/server.properties"
    # Kafka 4 fetches from no URL it was not allowed to (CVE-2025-27817).
    auth_jvm+=" -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=$issuer/jwks"
    oauth_json=$(printf '{"listener": "127.0.0.1:%s", "tokenEndpoint": "%s/token", "clientId": "redoline-capture", "clientSecret": "unchecked-by-the-mock-server", "principal": "redoline-oauth"}' \
      "$oauth_port" "$issuer")
  fi

  echo "super.users=$supers" >>"$dir/server.properties"
  sed -i -e "s#^listeners=.*#&,$listeners#" -e "s#^advertised.listeners=.*#&,$listeners#" \
    -e "s#^listener.security.protocol.map=.*#&,$map#" "$dir/server.properties"

  cat >"$auth/auth.json.tmp" <<EOF
{
  "plaintext": "127.0.0.1:$port",
  "ssl": "127.0.0.1:$ssl_port",
  "mtls": "127.0.0.1:$mtls_port",
  "podMtls": $pod_mtls_json,
  "saslSsl": "127.0.0.1:$sasl_port",
  "ca": "$auth/ca.pem",
  "caKey": "$auth/ca.key",
  "untrustedCa": "$auth/untrusted-ca.pem",
  "clientCertificate": "$auth/redoline-mtls.pem",
  "clientKey": "$auth/redoline-mtls.key",
  "plain": {"username": "redoline-plain", "password": "$PLAIN_PASSWORD"},
  "scram": {"username": "redoline-scram", "password": "$SCRAM_PASSWORD"},
  "aclUser": {"username": "acl-capture", "password": "$ACL_PASSWORD", "mechanism": "SCRAM-SHA-512"},
  "kerberos": $krb_json,
  "oauth": $oauth_json
}
EOF
  mv "$auth/auth.json.tmp" "$auth/auth.json"
}

# --- wait -------------------------------------------------------------------------------------

# KafkaRaftServer logs this once the broker and controller have both finished starting.
broker_ready() { grep -q "Kafka Server started" "$1/$SERVICE_LOG" 2>/dev/null && port_open "$2"; }

case "${1:-}" in
  fetch) shift; cmd_fetch "$@" ;;
  start) shift; cmd_start "$@" ;;
  wait) shift; wait_ready 120 broker_ready "$@" ;;
  stop) shift; stop_service broker.pid "${KAFKA_STOP_GRACE:-20}" "$@" ;;
  fetch-tools) shift; cmd_fetch_tools ;;
  acls) shift; cmd_acls "$@" ;;
  *) die "usage: kafka.sh fetch | fetch-tools | start DATA_DIR PORT CONTROLLER_PORT [OWNER_PID] | wait DATA_DIR PORT [TIMEOUT] | stop DATA_DIR | acls ARGS..." ;;
esac
