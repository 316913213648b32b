#!/usr/bin/env bash
# The whole test environment as one unit, for `make test` (test-all.sh) and `make demo`
# (examples/demo-k8s.sh): a Kubernetes control plane (k8s.sh), a real node for it (node.sh) with
# the images of build-images.sh imported, a Kafka broker with a listener for pods and one per
# authentication, its authorizer on (kafka.sh, KAFKA_AUTH=1), the Kerberos KDC (kdc.sh) and OIDC
# token endpoint (oidc.sh) those listeners check against, a schema registry speaking Confluent's
# API (registry.sh: HTTP and HTTPS, and a second one that requires basic or bearer
# authentication), and, with STACK_POSTGRES=1, a PostgreSQL server (postgres.sh). Every address
# is on this machine. STACK_KAFKA_AUTH=0 leaves
# out the authentication listeners, the authorizer, the KDC, the token endpoint and the
# authenticating registry (the demo needs none of them, and they add about 15 s to its start);
# STACK_REGISTRY=0 leaves out the registries.
#
#   stack.sh start DIR [OWNER_PID]  starts them all (each service's directory under DIR), waits
#                                   until every one is ready, imports the images named by
#                                   REDOLINE_{CAPTURE,OPERATOR}_IMAGE_ARCHIVE when set, and writes
#                                   DIR/env. With OWNER_PID, each service's watchdog stops it once
#                                   OWNER_PID has exited.
#   stack.sh env DIR                prints the `export` lines that tell the tests where everything
#                                   is (REDOLINE_KUBECONFIG, REDOLINE_NODE_*, REDOLINE_KAFKA_*,
#                                   REDOLINE_KAFKA_AUTH_DIR: the listeners and credentials,
#                                   REDOLINE_SCHEMA_REGISTRY_URL, REDOLINE_SCHEMA_REGISTRY_DIR and
#                                   REDOLINE_SCHEMA_REGISTRY_AUTH_DIR: the registries'
#                                   registry.json, REDOLINE_POSTGRES_URL).
#   stack.sh stop DIR               stops everything, then fails if the node left anything behind
#                                   on the machine (node.sh check-clean). Safe to repeat.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

say() { echo "stack.sh: $*" >&2; }
usage() { say "usage: stack.sh start DIR [OWNER_PID] | env DIR | stop DIR"; exit 1; }

die() { say "$*"; exit 1; }
# shellcheck source=lib/ports.sh
. "$HERE/lib/ports.sh"

cmd_start() {
  local dir=$1 owner=${2:-}
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # PostgreSQL runs as the postgres user when this runs as root: it must reach its directory.
  chmod 755 "$dir"
  # What the machine looks like before the node, to check after it that nothing of it is left.
  bash "$HERE/node.sh" record "$dir/machine.before"
  # Every port at once, so that they differ (a `$(free_port)` each would not know the others).
  local ports kafka_port kafka_controller_port kafka_pod_port kdc_port oidc_port
  mapfile -t ports < <(free_ports 8)
  [ "${#ports[@]}" = 8 ] || die "no free ports found"
  kafka_port=${ports[0]} kafka_controller_port=${ports[1]} kafka_pod_port=${ports[2]}
  kdc_port=${ports[3]} oidc_port=${ports[4]}
  local postgres_port=""

  local auth=${STACK_KAFKA_AUTH:-1}
  # The broker logs in to the KDC and fetches the token endpoint's keys as it starts: these two
  # start first and are ready long before the broker starts, after the control plane.
  if [ "$auth" = 1 ]; then
    bash "$HERE/kdc.sh" start "$dir/kdc" "$kdc_port" ${owner:+"$owner"}
    bash "$HERE/oidc.sh" start "$dir/oidc" "$oidc_port" ${owner:+"$owner"}
  fi
  bash "$HERE/k8s.sh" start "$dir/k8s" ${owner:+"$owner"}
  # The node creates the pods' bridge before it returns: Kafka's pod listener binds its address.
  bash "$HERE/node.sh" start "$dir/node" "$dir/k8s" ${owner:+"$owner"}
  eval "$(bash "$HERE/node.sh" env "$dir/node")"
  if [ "$auth" = 1 ]; then
    bash "$HERE/kdc.sh" wait "$dir/kdc" "$kdc_port" 60
    bash "$HERE/oidc.sh" wait "$dir/oidc" "$oidc_port" 120
    KAFKA_POD_LISTENER="$REDOLINE_NODE_HOST_IP:$kafka_pod_port" KAFKA_AUTH=1 \
      KAFKA_KDC_DIR="$dir/kdc" KAFKA_OIDC_DIR="$dir/oidc" \
      bash "$HERE/kafka.sh" start "$dir/kafka" "$kafka_port" "$kafka_controller_port" ${owner:+"$owner"}
  else
    KAFKA_POD_LISTENER="$REDOLINE_NODE_HOST_IP:$kafka_pod_port" \
      bash "$HERE/kafka.sh" start "$dir/kafka" "$kafka_port" "$kafka_controller_port" ${owner:+"$owner"}
  fi
  if [ "${STACK_POSTGRES:-0}" = 1 ]; then
    postgres_port=${ports[5]}
    bash "$HERE/postgres.sh" start "$dir/postgres" "$postgres_port" ${owner:+"$owner"}
  fi
  local registry=${STACK_REGISTRY:-1} registry_port="" registry_auth_port=""
  if [ "$registry" = 1 ]; then
    registry_port=${ports[6]}
    bash "$HERE/registry.sh" start "$dir/registry" "$registry_port" ${owner:+"$owner"}
    if [ "$auth" = 1 ]; then
      registry_auth_port=${ports[7]}
      REGISTRY_AUTH=1 REGISTRY_OIDC_DIR="$dir/oidc" \
        bash "$HERE/registry.sh" start "$dir/registry-auth" "$registry_auth_port" ${owner:+"$owner"}
    fi
  fi
  bash "$HERE/kafka.sh" wait "$dir/kafka" "$kafka_port" 120
  bash "$HERE/k8s.sh" wait "$dir/k8s" 180
  bash "$HERE/node.sh" wait "$dir/node" 120
  [ -z "$postgres_port" ] || bash "$HERE/postgres.sh" wait "$dir/postgres" "$postgres_port" 60
  [ -z "$registry_port" ] || bash "$HERE/registry.sh" wait "$dir/registry" "$registry_port" 180
  [ -z "$registry_auth_port" ] ||
    bash "$HERE/registry.sh" wait "$dir/registry-auth" "$registry_auth_port" 180
  local archive
  for archive in "${REDOLINE_CAPTURE_IMAGE_ARCHIVE:-}" "${REDOLINE_OPERATOR_IMAGE_ARCHIVE:-}"; do
    [ -z "$archive" ] || bash "$HERE/node.sh" import "$dir/node" "$archive"
  done

  {
    bash "$HERE/node.sh" env "$dir/node"
    echo "export REDOLINE_KUBECONFIG=$dir/k8s/kubeconfig"
    echo "export REDOLINE_KAFKA_BOOTSTRAP=127.0.0.1:$kafka_port"
    echo "export REDOLINE_KAFKA_POD_BOOTSTRAP=$REDOLINE_NODE_HOST_IP:$kafka_pod_port"
    [ "$auth" != 1 ] || echo "export REDOLINE_KAFKA_AUTH_DIR=$dir/kafka/auth"
    [ -z "$postgres_port" ] ||
      echo "export REDOLINE_POSTGRES_URL=postgresql://postgres@127.0.0.1:$postgres_port/postgres"
    if [ -n "$registry_port" ]; then
      echo "export REDOLINE_SCHEMA_REGISTRY_URL=http://127.0.0.1:$registry_port/apis/ccompat/v7"
      echo "export REDOLINE_SCHEMA_REGISTRY_DIR=$dir/registry"
    fi
    [ -z "$registry_auth_port" ] ||
      echo "export REDOLINE_SCHEMA_REGISTRY_AUTH_DIR=$dir/registry-auth"
  } >"$dir/env.tmp"
  mv "$dir/env.tmp" "$dir/env"
}

cmd_env() {
  [ -s "$1/env" ] || { say "no environment started in $1"; exit 1; }
  cat "$1/env"
}

cmd_stop() {
  local dir=$1 status=0
  bash "$HERE/kafka.sh" stop "$dir/kafka" || true
  [ ! -d "$dir/registry" ] || bash "$HERE/registry.sh" stop "$dir/registry" || true
  [ ! -d "$dir/registry-auth" ] || bash "$HERE/registry.sh" stop "$dir/registry-auth" || true
  [ ! -d "$dir/oidc" ] || bash "$HERE/oidc.sh" stop "$dir/oidc" || true
  [ ! -d "$dir/kdc" ] || bash "$HERE/kdc.sh" stop "$dir/kdc" || true
  bash "$HERE/node.sh" stop "$dir/node" || status=1
  bash "$HERE/k8s.sh" stop "$dir/k8s" || true
  [ ! -d "$dir/postgres" ] || bash "$HERE/postgres.sh" stop "$dir/postgres" || true
  if [ -f "$dir/machine.before" ]; then
    bash "$HERE/node.sh" check-clean "$dir/machine.before" || status=1
  fi
  return $status
}

case "${1:-}" in
  start) [ $# -ge 2 ] || usage; shift; cmd_start "$@" ;;
  env) [ $# -eq 2 ] || usage; cmd_env "$2" ;;
  stop) [ $# -eq 2 ] || usage; cmd_stop "$2" ;;
  *) usage ;;
esac
