#!/usr/bin/env bash
# A throw-away Kubernetes control plane on loopback for the tests: etcd, kube-apiserver and
# kube-controller-manager; no scheduler, no nodes, no kubelet of its own. Pods therefore stay Pending, but
# everything that lives in the API server and the controller manager is the real thing: server-side
# apply, watches, admission, RBAC, ServiceAccount tokens, StatefulSets creating Pods and PVCs,
# namespace deletion, garbage collection. node.sh adds a scheduler and one real node (a kubelet)
# to it; that node is tainted, so only pods that tolerate the taint leave Pending.
#
#   k8s.sh start DIR [OWNER_PID]  PKI, etcd and kube-apiserver at once; kube-controller-manager as
#                                 soon as the API server answers (a background launcher does that,
#                                 so start returns quickly). With OWNER_PID, that launcher stays as
#                                 a watchdog and stops everything once OWNER_PID has exited.
#   k8s.sh wait DIR [TIMEOUT]     until /readyz is ok and namespace + ServiceAccount "default" exist.
#   k8s.sh stop DIR               TERM, then KILL after a grace period. Safe to repeat.
#   k8s.sh bin-dir                prints the directory with etcd, kube-apiserver, kubectl, ...
#
# DIR/kubeconfig is the admin kubeconfig (group system:masters). Logs: DIR/logs/*.log. For
# node.sh: DIR/kubelet.kubeconfig (user system:node:127.0.0.1 in group system:nodes, the identity
# the Node authorizer and NodeRestriction expect of node "127.0.0.1"), DIR/scheduler.kubeconfig
# (system:kube-scheduler), DIR/pki/ca.crt (which also signs the API server's client certificate
# towards kubelets) and DIR/ports.
# The API server listens on every address (0.0.0.0), not only loopback: pods on node.sh's bridge
# reach it at the bridge's address, which is therefore in its serving certificate.
# Environment (all optional):
#   K8S_ETCD_CLIENT_PORT, K8S_ETCD_PEER_PORT, K8S_APISERVER_PORT  fixed ports instead of free ones
#   K8S_BIN              directory with the binaries (default: the cache of build-k8s.sh, built
#                        by it if missing)
#   K8S_REMOVE_DIR=1     the watchdog also deletes DIR after stopping (only a DIR made by start)
#   K8S_STOP_GRACE       seconds between TERM and KILL in stop (default 10)
#   K8S_KCM_SA_CREDENTIALS=true  controllers use per-controller ServiceAccounts (slower start)
#   K8S_NODE_HOST_IP     the host's address on node.sh's pod bridge, added to the API server's
#                        certificate (default 10.244.0.1, node.sh's default)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
# shellcheck source=lib/k8s-bin.sh
. "$HERE/lib/k8s-bin.sh"
# shellcheck source=lib/proc.sh
. "$HERE/lib/proc.sh"
COMPONENTS=(kube-controller-manager kube-apiserver etcd) # stop order: dependants first
MARKER=.redoline-k8s
SERVICE_CIDR=10.96.0.0/20 # 4094 ClusterIPs: room for the 1,000-capture operator benchmark
SERVICE_IP=10.96.0.1 # first address of SERVICE_CIDR: the "kubernetes" Service
NODE_HOST_IP=${K8S_NODE_HOST_IP:-10.244.0.1}
NODE_NAME=127.0.0.1 # node.sh's kubelet registers under this name (its --hostname-override)
PKI_REV=2 # bump when make_pki's output changes, so that a restart in an old DIR remakes it

say() { echo "k8s.sh: $*" >&2; }
die() { say "$*"; exit 1; }
usage() { die "usage: k8s.sh start DIR [OWNER_PID] | wait DIR [TIMEOUT] | stop DIR | bin-dir"; }

ensure_bins() { ensure_k8s_bin -x etcd kube-apiserver kube-controller-manager kubectl; }

# --- processes ------------------------------------------------------------------------------

# Our binaries' processes that mention DIR, whether or not a pid file knows them.
strays() {
  local dir=$1 p exe
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    case "$exe" in "$BIN"/etcd | "$BIN"/kube-apiserver | "$BIN"/kube-controller-manager) ;; *) continue ;; esac
    mentions_dir "${p#/proc/}" "$dir" && echo "${p#/proc/}"
  done
  return 0
}

stop_all() {
  local dir=$1 grace=${K8S_STOP_GRACE:-10} name pid pids=()
  # The launcher first, so that it cannot start the controller manager behind our back.
  if pid=$(live_pid "$dir" launcher) && [ "$pid" != "$$" ]; then
    kill -TERM "$pid" 2>/dev/null || true
  fi
  for name in "${COMPONENTS[@]}"; do
    if pid=$(live_pid "$dir" "$name"); then pids+=("$pid"); fi
  done
  mapfile -t -O "${#pids[@]}" pids < <(strays "$dir")
  # SIGKILL after the grace period, without waiting for it to take: the strays sweep follows.
  terminate "$grace" 0 "${pids[@]}" || true
  for pid in $(strays "$dir"); do kill -KILL "$pid" 2>/dev/null || true; done
  for name in "${COMPONENTS[@]}"; do rm -f "$dir/$name.pid"; done
}

# --- ports ----------------------------------------------------------------------------------

# shellcheck source=lib/ports.sh
. "$HERE/lib/ports.sh"

# --- PKI ------------------------------------------------------------------------------------

openssl_conf() {
  cat <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost,IP:$NODE_HOST_IP,IP:$SERVICE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
EOF
}

ec_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# leaf NAME SUBJECT SECTION: NAME.key + NAME.crt signed by the CA
leaf() {
  local pki=$1 name=$2 subject=$3 section=$4
  ec_key "$pki/$name.key"
  openssl req -new -config "$pki/openssl.cnf" -key "$pki/$name.key" -subj "$subject" -out "$pki/$name.csr"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -set_serial "0x$(openssl rand -hex 12)" -days 3650 \
    -extfile "$pki/openssl.cnf" -extensions "$section" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr"
}

make_pki() {
  local pki=$1/pki
  [ "$(cat "$pki/complete" 2>/dev/null)" = "$PKI_REV $NODE_HOST_IP" ] && return 0
  rm -rf "$pki" && mkdir -p "$pki" && chmod 700 "$pki"
  openssl_conf >"$pki/openssl.cnf"
  ec_key "$pki/ca.key"
  openssl req -x509 -new -config "$pki/openssl.cnf" -key "$pki/ca.key" -subj "/CN=redoline-test-ca" \
    -extensions ca -days 3650 -out "$pki/ca.crt"
  leaf "$pki" apiserver "/CN=kube-apiserver" server
  leaf "$pki" admin "/O=system:masters/CN=redoline-test-admin" client
  # In system:masters: unless K8S_KCM_SA_CREDENTIALS=true, every controller acts as this identity,
  # and the bootstrap role of system:kube-controller-manager alone is too narrow for that.
  leaf "$pki" controller-manager "/O=system:masters/CN=system:kube-controller-manager" client
  # The bootstrap RBAC binds the scheduler's roles to this user.
  leaf "$pki" scheduler "/CN=system:kube-scheduler" client
  leaf "$pki" node "/O=system:nodes/CN=system:node:$NODE_NAME" client
  # The API server towards kubelets (logs, exec, port-forward): the kubelet trusts ca.crt, and
  # asks the API server whether this user may use its API (webhook authorization); as a master
  # it may.
  leaf "$pki" apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" client
  # ServiceAccount token signing: RSA, the algorithm every token consumer understands.
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$pki/sa.key" 2>/dev/null
  openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
  echo "$PKI_REV $NODE_HOST_IP" >"$pki/complete"
}

b64() { base64 -w0 <"$1"; }

kubeconfig() { # kubeconfig PKI PORT USER
  local pki=$1 port=$2 user=$3
  cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: redoline-test
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(b64 "$pki/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(b64 "$pki/$user.crt")
    client-key-data: $(b64 "$pki/$user.key")
contexts:
- name: redoline-test
  context:
    cluster: redoline-test
    user: $user
    namespace: default
current-context: redoline-test
EOF
}

# --- start ----------------------------------------------------------------------------------

cmd_start() {
  (($# >= 1 && $# <= 2)) || usage
  local dir owner=${2:-}
  check_owner "$owner"
  dir=$(abs_dir "$1")
  claim_dir "$dir" "$MARKER" || die "$dir is neither empty nor made by k8s.sh"
  ensure_bins

  if live_pid "$dir" kube-apiserver >/dev/null && live_pid "$dir" etcd >/dev/null; then
    say "already running in $dir"
    [ -z "$owner" ] || live_pid "$dir" launcher >/dev/null || start_launcher "$dir" "$owner"
    return 0
  fi
  stop_all "$dir" # half-dead leftovers of an earlier start

  mkdir -p "$dir/logs"
  make_pki "$dir"
  local pki=$dir/pki etcd_port peer_port api_port
  etcd_port=${K8S_ETCD_CLIENT_PORT:-$(free_port)}
  peer_port=${K8S_ETCD_PEER_PORT:-$(free_port)}
  api_port=${K8S_APISERVER_PORT:-$(free_port)}
  cat >"$dir/ports" <<EOF
ETCD_CLIENT_PORT=$etcd_port
ETCD_PEER_PORT=$peer_port
APISERVER_PORT=$api_port
EOF
  kubeconfig "$pki" "$api_port" admin >"$dir/kubeconfig.tmp" && mv "$dir/kubeconfig.tmp" "$dir/kubeconfig"
  kubeconfig "$pki" "$api_port" controller-manager >"$dir/controller-manager.kubeconfig"
  kubeconfig "$pki" "$api_port" scheduler >"$dir/scheduler.kubeconfig"
  kubeconfig "$pki" "$api_port" node >"$dir/kubelet.kubeconfig"
  chmod 600 "$dir"/*.kubeconfig "$dir/kubeconfig"

  rm -rf "$dir/etcd-data"
  # No fsync: the data is thrown away anyway, and fsync on a shared CI disk is the slowest part.
  start_component "$dir" etcd "$BIN/etcd" --name=redoline-test --data-dir="$dir/etcd-data" \
    --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-cluster="redoline-test=http://127.0.0.1:$peer_port" --initial-cluster-state=new \
    --unsafe-no-fsync --quota-backend-bytes=$((256 * 1024 * 1024)) --log-level=warn

  # The API server retries etcd until it answers, so both can start together.
  GOMEMLIMIT=${K8S_APISERVER_GOMEMLIMIT:-600MiB} \
    start_component "$dir" kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=0.0.0.0 --advertise-address=127.0.0.1 --secure-port="$api_port" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --allow-privileged=false \
    --endpoint-reconciler-type=none \
    --profiling=false

  start_launcher "$dir" "$owner"
  say "starting in $dir: etcd on 127.0.0.1:$etcd_port, kube-apiserver on https://127.0.0.1:$api_port (and every other address of the host)"
}

start_launcher() { start_component "$1" launcher bash "$SELF" __launcher "$1" "$2"; }

api_ok() { # api_ok DIR PATH: the admin credentials get "ok" from PATH
  [ "$("$BIN/kubectl" --kubeconfig="$1/kubeconfig" --request-timeout=3s get --raw "$2" 2>/dev/null)" = ok ]
}

# Background: starts the controller manager once the API server is healthy (the controller manager
# gives up when the API server is not healthy within seconds of its start), then optionally watches
# OWNER_PID.
cmd_launcher() {
  local dir=$1 owner=$2 pki=$1/pki i
  trap '' INT HUP
  trap 'exit 0' TERM
  if ! live_pid "$dir" kube-controller-manager >/dev/null; then
    for ((i = 0; i < 1200; i++)); do # 120 s
      api_ok "$dir" /healthz && break
      live_pid "$dir" kube-apiserver >/dev/null || { say "kube-apiserver exited"; break; }
      [ -z "$owner" ] || kill -0 "$owner" 2>/dev/null || break
      sleep 0.1
    done
    if api_ok "$dir" /healthz; then
      say "kube-apiserver healthy after $((i / 10)).$((i % 10)) s; starting kube-controller-manager"
      # K8S_KCM_SA_CREDENTIALS=true runs each controller as its own ServiceAccount under RBAC, as
      # kubeadm does; it costs ~4 s of start-up, so by default the controllers share the
      # controller manager's identity. No serving port (nothing scrapes it; avoids port clashes).
      # The FlexVolume directory in DIR: by default it creates /usr/libexec/kubernetes/... .
      GOMEMLIMIT=${K8S_KCM_GOMEMLIMIT:-300MiB} \
        start_component "$dir" kube-controller-manager "$BIN/kube-controller-manager" \
        --kubeconfig="$dir/controller-manager.kubeconfig" \
        --secure-port=0 \
        --leader-elect=false \
        --use-service-account-credentials="${K8S_KCM_SA_CREDENTIALS:-false}" \
        --service-account-private-key-file="$pki/sa.key" \
        --root-ca-file="$pki/ca.crt" \
        --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
        --service-cluster-ip-range="$SERVICE_CIDR" \
        --controllers='*' \
        --flex-volume-plugin-dir="$dir/flexvolume" \
        --profiling=false
    else
      say "kube-apiserver not healthy; kube-controller-manager not started"
    fi
  fi
  [ -n "$owner" ] || exit 0
  say "watching owner pid $owner"
  while kill -0 "$owner" 2>/dev/null; do sleep 0.2; done
  say "owner $owner exited; stopping the control plane"
  stop_all "$dir"
  if [ "${K8S_REMOVE_DIR:-0}" = 1 ] && [ -e "$dir/$MARKER" ]; then
    rm -rf "$dir"
  fi
}

# --- wait -----------------------------------------------------------------------------------

# shellcheck source=lib/logs.sh
. "$HERE/lib/logs.sh"
tails() { log_tails "$1" "${K8S_LOG_TAIL:-25}"; }

cmd_wait() {
  (($# >= 1 && $# <= 2)) || usage
  local dir timeout=${2:-120} start now k=(--request-timeout=3s)
  dir=$(abs_dir "$1")
  [ -s "$dir/kubeconfig" ] || die "no $dir/kubeconfig: not started?"
  k+=(--kubeconfig="$dir/kubeconfig")
  start=$(date +%s)
  while :; do
    if api_ok "$dir" /readyz &&
      "$BIN/kubectl" "${k[@]}" get namespace default -o name >/dev/null 2>&1 &&
      "$BIN/kubectl" "${k[@]}" -n default get serviceaccount default -o name >/dev/null 2>&1; then
      say "control plane in $dir ready after $(($(date +%s) - start)) s"
      return 0
    fi
    local name dead=""
    for name in etcd kube-apiserver; do live_pid "$dir" "$name" >/dev/null || dead+=" $name"; done
    if [ -s "$dir/kube-controller-manager.pid" ] && ! live_pid "$dir" kube-controller-manager >/dev/null; then
      dead+=" kube-controller-manager"
    fi
    if [ -n "$dead" ]; then
      say "exited:$dead"
      tails "$dir"
      return 1
    fi
    now=$(date +%s)
    if ((now - start >= timeout)); then
      say "control plane in $dir not ready within $timeout s"
      tails "$dir"
      return 1
    fi
    sleep 0.25
  done
}

cmd_stop() {
  [ $# -eq 1 ] || usage
  [ -d "$1" ] || return 0
  local dir
  dir=$(abs_dir "$1")
  stop_all "$dir"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  wait) shift; cmd_wait "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  bin-dir) echo "$BIN" ;;
  __launcher) shift; cmd_launcher "$@" ;;
  *) usage ;;
esac
