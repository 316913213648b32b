#!/usr/bin/env bash
# A real MIT Kerberos KDC (Debian's krb5-kdc) for the tests of SASL/GSSAPI to Kafka: one realm,
# made afresh in DATA_DIR for each run, serving on a loopback port.
#
#   kdc.sh start DATA_DIR PORT [OWNER_PID]
#       Create the realm REDOLINE.TEST in DATA_DIR (database, stash, krb5.conf, kdc.conf; once),
#       with the broker's service principal kafka/127.0.0.1 and the client principal
#       redoline-kerberos, each exported to a keytab (kafka.keytab, client.keytab). Then start
#       krb5kdc in the background on 127.0.0.1:PORT (TCP and UDP). With OWNER_PID, a watchdog
#       stops it once that process has exited (and then deletes DATA_DIR if
#       KDC_REMOVE_DATA_ON_EXIT=1). Starting a KDC that already runs from DATA_DIR does nothing.
#   kdc.sh wait DATA_DIR PORT [TIMEOUT_SECONDS]
#       Wait until the KDC has logged that it serves and accepts connections on PORT (default
#       30 s); fails with the tail of its log otherwise.
#   kdc.sh stop DATA_DIR
#       SIGTERM, then SIGKILL after 10 s. Idempotent.
#
# Clients use DATA_DIR/krb5.conf (KRB5_CONFIG, or -Djava.security.krb5.conf for a JVM). The
# broker's service principal is named after the address clients connect to (127.0.0.1): Cyrus
# SASL asks for kafka@<broker host>, and krb5.conf turns off every DNS canonicalisation, so
# that is the principal the client's library requests a ticket for.
set -euo pipefail

REALM=REDOLINE.TEST
SERVICE_PRINCIPAL=kafka/127.0.0.1
CLIENT_PRINCIPAL=redoline-kerberos
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
SERVICE=KDC
SERVICE_LOG=kdc.log
# shellcheck source=lib/service.sh
. "$HERE/lib/service.sh"


# krb5kdc's command line names its own pid file in DATA_DIR.
service_pid() { pid_in_file "$1/kdc.pid" "$1/krb5kdc.pid"; }

write_configs() {
  local dir=$1 port=$2
  # No DNS anywhere: the realm's KDC is given, and host names in service principals are used as
  # written (no canonicalisation, no reverse lookup, no search domain added to short names).
  # TCP only from clients (udp_preference_limit = 1), which the JVM's Kerberos honours too.
  cat >"$dir/krb5.conf" <<EOF
[libdefaults]
  default_realm = $REALM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  qualify_shortname = ""
  udp_preference_limit = 1
  ticket_lifetime = 10h
  forwardable = true

[realms]
  $REALM = {
    kdc = 127.0.0.1:$port
  }
EOF
  cat >"$dir/kdc.conf" <<EOF
[kdcdefaults]
  kdc_ports = $port
  kdc_tcp_ports = $port

[realms]
  $REALM = {
    database_name = $dir/principal
    key_stash_file = $dir/stash
    acl_file = $dir/kadm5.acl
    max_life = 10h
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }

[logging]
  kdc = FILE:$dir/$SERVICE_LOG
  admin_server = FILE:$dir/kadmin.log
  default = FILE:$dir/kdc.log
EOF
  : >"$dir/kadm5.acl"
}

create_realm() {
  local dir=$1
  # The master key protects the database on disk; a throwaway realm needs no one to know it.
  local master
  master=$(head -c 24 /dev/urandom | base64)
  kdb5_util -r "$REALM" create -s -P "$master" >"$dir/create.log" 2>&1 \
    || { cat "$dir/create.log" >&2; die "creating realm $REALM in $dir failed"; }
  local p
  for p in "$SERVICE_PRINCIPAL" "$CLIENT_PRINCIPAL"; do
    kadmin.local -r "$REALM" -q "addprinc -randkey $p@$REALM" >>"$dir/create.log" 2>&1 \
      || { cat "$dir/create.log" >&2; die "adding principal $p failed"; }
  done
  kadmin.local -r "$REALM" -q "ktadd -k $dir/kafka.keytab $SERVICE_PRINCIPAL@$REALM" \
    >>"$dir/create.log" 2>&1 || die "exporting the broker's keytab failed"
  kadmin.local -r "$REALM" -q "ktadd -k $dir/client.keytab $CLIENT_PRINCIPAL@$REALM" \
    >>"$dir/create.log" 2>&1 || die "exporting the client's keytab failed"
  # Read by the broker (a JVM) and by the capture's librdkafka (kinit -k -t).
  chmod 644 "$dir/kafka.keytab" "$dir/client.keytab"
}

cmd_start() {
  if [ $# -lt 2 ] || [ $# -gt 3 ]; then die "usage: kdc.sh start DATA_DIR PORT [OWNER_PID]"; fi
  local dir port owner="${3:-}"
  dir="$(abs_dir "$1")"; port="$2"
  check_port "$port"
  check_owner "$owner"
  ! already_running "$dir" || return 0
  for tool in kdb5_util kadmin.local krb5kdc; do
    command -v "$tool" >/dev/null || die "$tool not found (Debian: krb5-kdc, krb5-admin-server; tests/env/install-deps.sh)"
  done
  export KRB5_CONFIG="$dir/krb5.conf" KRB5_KDC_PROFILE="$dir/kdc.conf"
  # The port may change between starts of one directory (the configs follow it); the realm stays.
  write_configs "$dir" "$port"
  [ -f "$dir/principal" ] || create_realm "$dir"

  : >"$dir/$SERVICE_LOG"
  # -n: stay in the foreground, so the pid recorded is the KDC's.
  launch "$dir/kdc.pid" "$dir/kdc.out" krb5kdc -n -r "$REALM" -P "$dir/krb5kdc.pid" \
    || die "the KDC did not write its pid file"
  log "KDC starting from $dir (pid $(cat "$dir/kdc.pid"), realm $REALM, 127.0.0.1:$port)"
  watch_owner "$owner" "$dir" "${KDC_REMOVE_DATA_ON_EXIT:-0}" kdc.conf
}

# krb5kdc logs this once its sockets are bound.
kdc_ready() { grep -q "commencing operation" "$1/$SERVICE_LOG" 2>/dev/null && port_open "$2"; }

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  wait) shift; wait_ready 30 kdc_ready "$@" ;;
  stop) shift; stop_service kdc.pid 10 "$@" ;;
  *) die "usage: kdc.sh start DATA_DIR PORT [OWNER_PID] | wait DATA_DIR PORT [TIMEOUT] | stop DATA_DIR" ;;
esac
