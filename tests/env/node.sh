#!/usr/bin/env bash
# One real Kubernetes node for the tests, joined to a control plane of k8s.sh: containerd (with
# runc) runs the pods, a kubelet registers the node "127.0.0.1", and kube-scheduler places pods on
# it. The node is tainted redoline.io/real-node=true:NoSchedule, because the whole test suite shares
# the control plane and most tests expect their pods to stay Pending; only a pod that tolerates the
# taint runs here.
#
# Pods get their own network namespace, attached to the Linux bridge NODE_BRIDGE by the CNI bridge
# and host-local plugins (/usr/lib/cni). The host's address on that bridge (the first of
# NODE_SUBNET, 10.244.0.1 by default) is how pods reach the host's services: the API server (it
# listens on every address) and whatever else binds that address, like Kafka's pod listener. There
# is no kube-proxy, no cluster DNS, no forwarding or NAT: pods reach the host and each other, not
# the outside world.
#
#   node.sh start DIR K8S_DIR [OWNER_PID]
#       K8S_DIR is the directory of a running (or starting) k8s.sh control plane. Creates the bridge
#       (before returning, so that a service can bind the host's bridge address right away),
#       starts containerd, imports the pause image, starts the kubelet and kube-scheduler. A
#       background launcher creates the StorageClass redoline-local once the API server answers;
#       with OWNER_PID it stays as a watchdog and stops the node once OWNER_PID has exited.
#   node.sh wait DIR [TIMEOUT]     until the node is Ready, the pause image is in containerd and
#                                  the StorageClass exists (default 120 s).
#   node.sh stop DIR               stops everything and puts the machine back as it was (see below).
#                                  Safe to repeat.
#   node.sh import DIR OCI_ARCHIVE imports an image archive into containerd's k8s.io namespace,
#                                  named after the org.opencontainers.image.ref.name annotation of
#                                  its index.json (a full reference, e.g. localhost/app:1); pods
#                                  run it with imagePullPolicy Never or IfNotPresent.
#   node.sh env DIR                prints the `export` lines the tests read (REDOLINE_NODE_*).
#   node.sh record STATE_FILE      notes what of the machine a node could change (its processes,
#   node.sh check-clean STATE_FILE mounts, cgroups, bridges and veths, sysctls, paths, iptables
#                                  chains; see snapshot), then compares after a stop: fails,
#                                  listing the difference, if a node left anything.
#   node.sh selftest               a throw-away control plane and node, a pod through its whole
#                                  life, a stop, and the cleanliness check.
#
# What the node does to the machine, and how it is undone:
#   - containerd and the kubelet run in a private mount namespace of their own, where
#     /var/lib/kubelet, /var/log/pods and /var/log/containers are bind mounts of directories in DIR
#     and /run/containerd, /run/netns and /var/lib/cni are tmpfs (paths they use whatever their
#     configuration says). Every mount they make dies with the namespace. Only the empty mount
#     points are made on the host, and removed at stop.
#   - Pod cgroups live below /<cgroup root>/kubepods, the cgroup root being named after DIR; stop
#     kills what is left in them and removes them.
#   - The kubelet sets a few sysctls machine-wide (kernel.panic, ...): their values from before the
#     start are restored at stop.
#   - The bridge and the pods' veth pairs are deleted at stop.
# Two nodes can run at once with distinct NODE_BRIDGE and NODE_SUBNET (each with its own control
# plane): the last one to stop restores the sysctls and removes the mount points.
#
# Environment (all optional):
#   NODE_BRIDGE        the bridge's name (default redoline0)
#   NODE_SUBNET        the pods' subnet (default 10.244.0.0/24); the host takes its first address,
#                      which must be in the API server's certificate (k8s.sh's K8S_NODE_HOST_IP)
#   K8S_BIN            directory with kubelet, kube-scheduler, kubectl and pause-image.tar
#                      (default: build-k8s.sh's cache, built by it if missing)
#   NODE_STOP_GRACE    seconds between TERM and KILL in stop (default 10)
#   NODE_REMOVE_DIR=1  the watchdog also deletes DIR after stopping (only a DIR made by start)
# Logs: DIR/logs/{containerd,kubelet,kube-scheduler,launcher}.log, the pods' logs in DIR/pod-logs.
# Local PersistentVolumes: directories below DIR/volumes (REDOLINE_NODE_VOLUMES), claimed through
# the StorageClass redoline-local.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
# shellcheck source=lib/k8s-bin.sh
. "$HERE/lib/k8s-bin.sh"
# shellcheck source=lib/proc.sh
. "$HERE/lib/proc.sh"
MARKER=.redoline-node
NODE_NAME=127.0.0.1 # the control plane's node certificate is for this name (k8s.sh)
TAINT=redoline.io/real-node=true:NoSchedule
STORAGE_CLASS=redoline-local
CNI_BIN=/usr/lib/cni
# The kubelet sets these machine-wide when it starts (pkg/kubelet/cm: setupKernelTunables).
SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
# Paths the kubelet, containerd and the CNI library write whatever they are configured with; inside
# the node's mount namespace each is covered: "bind:<dir below DIR>" or "tmpfs".
MOUNTS=(
  /var/lib/kubelet=bind:kubelet-root
  /var/log/pods=bind:pod-logs
  /var/log/containers=bind:container-logs
  /run/containerd=tmpfs
  /run/netns=tmpfs
  /var/lib/cni=tmpfs
)
# What record/check-clean compare besides processes, mounts, cgroups and links.
WATCHED_DIRS=(/var/lib/kubelet /var/log/pods /var/log/containers /run/containerd /run/netns
  /var/lib/cni /var/lib/containerd /opt/containerd /etc/cni /opt/cni /etc/kubernetes
  /usr/libexec/kubernetes /dev/termination-log)

say() { echo "node.sh: $*" >&2; }
die() { say "$*"; exit 1; }
usage() {
  die "usage: node.sh start DIR K8S_DIR [OWNER_PID] | wait DIR [TIMEOUT] | stop DIR | import DIR OCI_ARCHIVE | env DIR | record STATE_FILE | check-clean STATE_FILE | selftest"
}

ensure_bins() {
  local tool
  ensure_k8s_bin -e kubelet kube-scheduler kubectl pause-image.tar pause-image.ref
  for tool in containerd runc ctr unshare nsenter ip openssl python3; do
    command -v "$tool" >/dev/null || die "$tool is missing (tests/env/install-deps.sh installs it)"
  done
  for tool in bridge host-local loopback; do
    [ -x "$CNI_BIN/$tool" ] || die "$CNI_BIN/$tool is missing (Debian package containernetworking-plugins)"
  done
}

# DIR/settings: what start decided, for every later command.
load_settings() {
  local dir=$1
  [ -s "$dir/settings" ] || return 1
  # shellcheck source=/dev/null # written by write_settings
  . "$dir/settings"
}

write_settings() {
  local dir=$1 name
  shift
  for name in "$@"; do printf '%s=%q\n' "$name" "${!name}"; done >"$dir/settings.tmp"
  mv "$dir/settings.tmp" "$dir/settings"
}

kc() { "$BIN/kubectl" --kubeconfig="$K8S_DIR/kubeconfig" --request-timeout=5s "$@"; }
ctr_node() { ctr --address "$1/containerd/containerd.sock" --namespace k8s.io "${@:2}"; }

# --- processes ------------------------------------------------------------------------------

# "PID TARGET" for every process, TARGET being where /proc/PID/LINK points (exe, ns/mnt). One
# find for all processes: a readlink per process takes seconds on a busy machine.
proc_links() {
  # Processes come and go while find runs: its complaints about those are no failure.
  { find /proc/[0-9]*/"$1" -maxdepth 0 -printf '%p %l\n' 2>/dev/null || true; } |
    sed -n "s#^/proc/\([0-9]*\)/$1 #\1 #p"
}

# "PID NAME" for the processes whose executable is called NAME, one of the arguments.
procs_named() {
  proc_links exe | awk -v names=" $* " '{ n = $2; sub(/.*\//, "", n); if (index(names, " " n " ")) print $1, n }'
}

# Processes of the node's binaries that mention DIR (the kubelet's and containerd's configuration,
# the shims' containerd address), whether or not a pid file knows them.
strays() {
  local dir=$1 pid name
  while read -r pid name; do
    mentions_dir "$pid" "$dir" && echo "$pid"
  done < <(procs_named kubelet kube-scheduler containerd containerd-shim-runc-v2 containerd-shim)
  return 0
}

# Processes in the node's mount namespace (containerd, kubelet, shims, runc, the CNI plugins, and
# the containers unless they have their own).
in_namespace() {
  [ -z "$1" ] || proc_links ns/mnt | awk -v ns="$1" '$2 == ns { print $1 }'
}

# Processes in the node's cgroups (the containers).
in_cgroups() {
  local root=$1 h
  [ -n "$root" ] || return 0
  for h in $(cgroup_hierarchies); do
    if [ -d "$h$root" ]; then find "$h$root" -name cgroup.procs -exec cat {} + 2>/dev/null || true; fi
  done | sort -un
}

# --- the machine ----------------------------------------------------------------------------

# Directories of the other nodes that run now (their containerd's --config names them).
other_nodes() {
  local dir=$1 pid name args other
  procs_named containerd | while read -r pid name; do
    args=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null) || continue
    other=$(sed -n 's#^\(/.*\)/containerd/config\.toml$#\1#p' <<<"$args" | head -1)
    [ -n "$other" ] && [ "$other" != "$dir" ] && [ -e "$other/$MARKER" ] && echo "$other"
  done | sort -u
}

# DIR/machine.before: the sysctls before the first of the running nodes started, and the mount
# points that did not exist then. A node starting while another runs inherits that one's record
# (the sysctls are the kubelet's by then); the last to stop restores it.
record_machine() {
  local dir=$1 other name p top
  [ -s "$dir/machine.before" ] && return 0
  for other in $(other_nodes "$dir"); do
    if [ -s "$other/machine.before" ]; then
      cp "$other/machine.before" "$dir/machine.before"
      say "another node runs from $other: its record of the machine is kept for the restore"
      return 0
    fi
  done
  {
    for name in "${SYSCTLS[@]}"; do echo "sysctl $name $(sysctl -n "$name")"; done
    for p in "${MOUNTS[@]}"; do
      p=${p%%=*} top=""
      while [ ! -e "$p" ]; do top=$p p=$(dirname "$p"); done
      [ -z "$top" ] || echo "made $top"
    done
  } >"$dir/machine.before.tmp"
  mv "$dir/machine.before.tmp" "$dir/machine.before"
}

# Once restored (or left to another node, which has its own copy), the record goes: the next start
# in DIR records the machine afresh.
restore_machine() {
  local dir=$1 kind name value others status=0
  [ -s "$dir/machine.before" ] || return 0
  others=$(other_nodes "$dir")
  if [ -n "$others" ]; then
    say "another node still runs ($others): it restores the sysctls and mount points when it stops"
    rm -f "$dir/machine.before"
    return 0
  fi
  while read -r kind name value; do
    case $kind in
      sysctl)
        [ "$(sysctl -n "$name")" = "$value" ] || sysctl -q -w "$name=$value" >/dev/null || status=1 ;;
      made)
        # Only while no mount namespace still has a mount there (one process of each is enough).
        if proc_links ns/mnt | sort -u -k2,2 | awk '{ print "/proc/" $1 "/mountinfo" }' |
          xargs -r grep -qs " $name " 2>/dev/null; then
          say "not removing $name: still a mount point somewhere"
        elif [ -d "$name" ]; then
          find "$name" -depth -type d -empty -delete 2>/dev/null || true
          [ ! -e "$name" ] || say "not removing $name: not empty"
        fi ;;
    esac
  done <"$dir/machine.before"
  [ $status != 0 ] || rm -f "$dir/machine.before"
  return $status
}

make_mount_points() {
  local p
  for p in "${MOUNTS[@]}"; do mkdir -p "${p%%=*}"; done
}

# Where the cgroup hierarchies are mounted: each of v1, and v2 (alone, or beside v1 in a hybrid
# setup), from the mount table.
cgroup_hierarchies() {
  awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) ~ /^cgroup2?$/) print $5; break } }' \
    /proc/self/mountinfo | sort -u
}

make_cgroup_root() {
  local root=$1 h
  for h in $(cgroup_hierarchies); do
    mkdir -p "$h$root"
    # A new cpuset has no CPUs and no memory nodes: give it its parent's.
    if [ -e "$h$root/cpuset.cpus" ] && [ -z "$(cat "$h$root/cpuset.cpus")" ]; then
      cat "$h/cpuset.cpus" >"$h$root/cpuset.cpus"
      cat "$h/cpuset.mems" >"$h$root/cpuset.mems"
    fi
  done
}

remove_cgroup_root() { # fails if one stays (a process still in it)
  local root=$1 h i left
  for ((i = 0; i < 50; i++)); do
    left=""
    for h in $(cgroup_hierarchies); do
      [ -d "$h$root" ] || continue
      find "$h$root" -depth -type d -exec rmdir {} + 2>/dev/null || true
      [ -d "$h$root" ] && left+=" $h$root"
    done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  say "cgroups left:$left"
  return 1
}

make_bridge() {
  local bridge=$1 host_ip=$2 prefix=$3 subnet=$4
  ip link show "$bridge" >/dev/null 2>&1 &&
    die "bridge $bridge exists already (another node? set NODE_BRIDGE and NODE_SUBNET; a leftover: ip link del $bridge)"
  ip -o -4 addr show | grep -q " inet $host_ip/" && die "$host_ip is already an address of this host (set NODE_SUBNET)"
  [ -z "$(ip -4 route show exact "$subnet")" ] || die "a route to $subnet exists already (set NODE_SUBNET)"
  ip link add "$bridge" type bridge
  ip addr add "$host_ip/$prefix" dev "$bridge"
  ip link set "$bridge" up
}

# The bridge and every link on it (the host ends of the pods' veth pairs; deleting one deletes its
# pair).
remove_bridge() {
  local bridge=$1 link
  ip link show "$bridge" >/dev/null 2>&1 || return 0
  for link in $(ip -o link show master "$bridge" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$link" 2>/dev/null || true
  done
  ip link del "$bridge"
}

# --- ports ----------------------------------------------------------------------------------

# shellcheck source=lib/ports.sh
. "$HERE/lib/ports.sh"

# --- configuration --------------------------------------------------------------------------

containerd_config() {
  local dir=$1 c=$1/containerd
  cat <<EOF
version = 2
root = "$c/root"
state = "$c/state"
# Fail at start rather than run without the CRI the kubelet needs.
required_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = "$c/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "$c/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_REF"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # No AppArmor profile to load, and no CAP_SYS_RESOURCE on the machines that run the tests:
  # runc must not try to lower a container's oom_score_adj below its own.
  disable_apparmor = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$dir/cni/net.d"
    max_conf_num = 1
EOF
}

# The host's address is the range's gateway only so that host-local never hands it to a pod:
# isGateway false keeps the plugin from assigning it or touching ip_forward, ipMasq false from
# adding NAT rules.
cni_config() {
  local dir=$1
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "redoline",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": false,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$SUBNET", "gateway": "$HOST_IP"}]],
        "dataDir": "$dir/cni/ipam"
      }
    }
  ]
}
EOF
}

kubelet_config() {
  local dir=$1
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $HEALTHZ_PORT
containerRuntimeEndpoint: unix://$dir/containerd/containerd.sock
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $K8S_DIR/pki/ca.crt}
authorization: {mode: Webhook}
# The taint keeps every pod that does not tolerate it Pending, as it was before the node existed.
registerWithTaints:
- {key: redoline.io/real-node, value: "true", effect: NoSchedule}
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
failCgroupV1: false
failSwapOn: false
makeIPTablesUtilChains: false
# Never undo the machine's kernel settings silently: the ones it changes are restored at stop.
protectKernelDefaults: false
volumePluginDir: $dir/volume-plugins
# Imported images cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# A shared machine: evict only when truly out of room.
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
serializeImagePulls: false
# How often the kubelet syncs each pod, and so refreshes its Secret volumes (the Secret itself
# reaches the kubelet by its watch, configMapAndSecretChangeDetectionStrategy: Watch): 1m by
# default, so a rotated credential would take a minute or more to reach the files. 5 s lets the
# rotation tests (real_credentials.rs) see the kubelet swap the files within seconds.
syncFrequency: 5s
rotateCertificates: false
serverTLSBootstrap: false
resolvConf: /etc/resolv.conf
EOF
}

storage_class() {
  cat <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $STORAGE_CLASS
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
EOF
}

# --- start ----------------------------------------------------------------------------------

cmd_start() {
  (($# >= 2 && $# <= 3)) || usage
  local dir k8s_dir owner=${3:-} pid f
  check_owner "$owner"
  [ -d "$2" ] || die "no control plane directory $2"
  k8s_dir=$(cd "$2" && pwd)
  for f in kubeconfig kubelet.kubeconfig scheduler.kubeconfig pki/ca.crt pki/apiserver.crt ports; do
    [ -s "$k8s_dir/$f" ] || die "$k8s_dir/$f is missing: start the control plane with k8s.sh first"
  done
  [ "$(id -u)" = 0 ] || die "must run as root (mounts, cgroups, links)"
  dir=$(abs_dir "$1")
  claim_dir "$dir" "$MARKER" || die "$dir is neither empty nor made by node.sh"
  ensure_bins

  if live_pid "$dir" containerd >/dev/null && live_pid "$dir" kubelet >/dev/null; then
    say "already running in $dir"
    [ -z "$owner" ] || live_pid "$dir" launcher >/dev/null || start_launcher "$dir" "$owner"
    return 0
  fi
  stop_all "$dir" # half-dead leftovers of an earlier start

  K8S_DIR=$k8s_dir
  BRIDGE=${NODE_BRIDGE:-redoline0}
  SUBNET=${NODE_SUBNET:-10.244.0.0/24}
  local net
  net=$(python3 -c 'import ipaddress, sys; n = ipaddress.ip_network(sys.argv[1]); print(n[1], n.prefixlen)' "$SUBNET" 2>/dev/null) ||
    die "NODE_SUBNET=$SUBNET is not a network address (like 10.244.0.0/24)"
  HOST_IP=${net% *} PREFIX=${net#* }
  openssl x509 -noout -in "$k8s_dir/pki/apiserver.crt" -checkip "$HOST_IP" | grep -q 'does match' ||
    die "the API server's certificate does not name $HOST_IP: start the control plane with K8S_NODE_HOST_IP=$HOST_IP"
  APISERVER_PORT=$(sed -n 's/^APISERVER_PORT=//p' "$k8s_dir/ports")
  KUBELET_PORT=$(free_port)
  HEALTHZ_PORT=$(free_port)
  CGROUP_ROOT=/redoline-node-$(echo "$dir" | sha256sum | cut -c1-10)
  PAUSE_REF=$(<"$BIN/pause-image.ref")
  STARTED_AT=$(date +%s.%N)
  write_settings "$dir" K8S_DIR BRIDGE SUBNET HOST_IP PREFIX APISERVER_PORT KUBELET_PORT HEALTHZ_PORT \
    CGROUP_ROOT PAUSE_REF STARTED_AT

  mkdir -p "$dir/logs" "$dir/containerd" "$dir/cni/net.d" "$dir/cni/ipam" "$dir/kubelet" \
    "$dir/volumes" "$dir/volume-plugins"
  local m
  for m in "${MOUNTS[@]}"; do [[ $m != *=bind:* ]] || mkdir -p "$dir/${m#*=bind:}"; done
  # Own copies, so that every process of the node names DIR on its command line.
  cp "$k8s_dir/kubelet.kubeconfig" "$k8s_dir/scheduler.kubeconfig" "$dir/"
  containerd_config "$dir" >"$dir/containerd/config.toml"
  cni_config "$dir" >"$dir/cni/net.d/10-redoline.conflist"
  kubelet_config "$dir" >"$dir/kubelet/config.yaml"

  record_machine "$dir"
  make_bridge "$BRIDGE" "$HOST_IP" "$PREFIX" "$SUBNET"
  echo "$BRIDGE" >"$dir/bridge"
  make_mount_points
  make_cgroup_root "$CGROUP_ROOT"

  start_component "$dir" containerd unshare --mount --propagation private -- bash "$SELF" __namespace "$dir"
  pid=$(<"$dir/containerd.pid")
  local i
  for ((i = 0; i < 300; i++)); do
    ctr_node "$dir" version >/dev/null 2>&1 && break
    alive "$pid" || { tail -n 30 "$dir/logs/containerd.log" >&2; die "containerd exited"; }
    sleep 0.1
  done
  ctr_node "$dir" version >/dev/null 2>&1 || { tail -n 30 "$dir/logs/containerd.log" >&2; die "containerd did not answer within 30 s"; }
  local ns
  ns=$(readlink "/proc/$pid/ns/mnt")
  [ "$ns" != "$(readlink /proc/self/ns/mnt)" ] || die "containerd did not get a mount namespace of its own"
  echo "$ns" >"$dir/mntns"

  ctr_node "$dir" images import "$BIN/pause-image.tar" >"$dir/logs/import.log" 2>&1 ||
    { cat "$dir/logs/import.log" >&2; die "importing the pause image failed"; }

  start_component "$dir" kubelet nsenter --mount="/proc/$pid/ns/mnt" -- "$BIN/kubelet" \
    --config="$dir/kubelet/config.yaml" --kubeconfig="$dir/kubelet.kubeconfig" \
    --hostname-override="$NODE_NAME" --node-labels=redoline.io/real-node=true
  # No serving port: nothing scrapes it, and no port can clash.
  GOMEMLIMIT=${NODE_SCHEDULER_GOMEMLIMIT:-200MiB} \
    start_component "$dir" kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$dir/scheduler.kubeconfig" \
    --leader-elect=false --secure-port=0 --profiling=false
  start_launcher "$dir" "$owner"
  say "starting in $dir: bridge $BRIDGE ($HOST_IP/$PREFIX), kubelet on 127.0.0.1:$KUBELET_PORT, node $NODE_NAME tainted $TAINT"
}

# Inside the new mount namespace (pid = containerd's): cover the fixed paths, then become
# containerd.
cmd_namespace() {
  local dir=$1 m path what
  for m in "${MOUNTS[@]}"; do
    path=${m%%=*} what=${m#*=}
    case $what in
      bind:*) mount --bind "$dir/${what#bind:}" "$path" ;;
      tmpfs) mount -t tmpfs -o mode=0755 redoline-node "$path" ;;
    esac
  done
  exec containerd --config "$dir/containerd/config.toml"
}

start_launcher() { start_component "$1" launcher bash "$SELF" __launcher "$1" "$2"; }

# Background: creates the StorageClass once the API server answers, then optionally watches
# OWNER_PID and stops the node when it has gone.
cmd_launcher() {
  local dir=$1 owner=$2 i
  trap '' INT HUP
  trap 'exit 0' TERM
  load_settings "$dir" || exit 1
  for ((i = 0; i < 1200; i++)); do # 120 s
    storage_class | kc apply -f - >/dev/null 2>&1 && { say "StorageClass $STORAGE_CLASS created"; break; }
    [ -z "$owner" ] || kill -0 "$owner" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$owner" ] || exit 0
  say "watching owner pid $owner"
  while kill -0 "$owner" 2>/dev/null; do sleep 0.5; done
  say "owner $owner exited; stopping the node"
  stop_all "$dir" || true
  if [ "${NODE_REMOVE_DIR:-0}" = 1 ] && [ -e "$dir/$MARKER" ]; then rm -rf "$dir"; fi
}

# --- wait -----------------------------------------------------------------------------------

# shellcheck source=lib/logs.sh
. "$HERE/lib/logs.sh"
tails() { log_tails "$1" "${NODE_LOG_TAIL:-25}"; }

node_ready() {
  [ "$(kc get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

cmd_wait() {
  (($# >= 1 && $# <= 2)) || usage
  local dir timeout=${2:-120} start name dead
  dir=$(abs_dir "$1")
  load_settings "$dir" || die "no $dir/settings: not started?"
  start=$SECONDS
  while :; do
    if node_ready && ctr_node "$dir" images ls -q 2>/dev/null | grep -qxF "$PAUSE_REF" &&
      kc get storageclass "$STORAGE_CLASS" -o name >/dev/null 2>&1; then
      say "node $NODE_NAME of $dir Ready $(python3 -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$STARTED_AT") s after its start"
      return 0
    fi
    dead=""
    for name in containerd kubelet kube-scheduler; do live_pid "$dir" "$name" >/dev/null || dead+=" $name"; done
    if [ -n "$dead" ]; then
      say "exited:$dead"
      tails "$dir"
      return 1
    fi
    if ((SECONDS - start >= timeout)); then
      say "node of $dir not Ready within $timeout s"
      tails "$dir"
      return 1
    fi
    sleep 0.25
  done
}

# --- stop -----------------------------------------------------------------------------------

# Best effort throughout: a step that fails must not keep the later ones from cleaning up, so no
# errexit here; the status says whether something was left.
stop_all() {
  set +e
  local dir=$1 grace=${NODE_STOP_GRACE:-10} pid pids=() ns="" root="" name
  K8S_DIR="" BRIDGE="" CGROUP_ROOT=""
  load_settings "$dir" || true
  root=$CGROUP_ROOT
  [ -s "$dir/mntns" ] && ns=$(<"$dir/mntns")
  # The launcher first, so that it cannot act behind our back (unless it is the one stopping).
  if pid=$(live_pid "$dir" launcher) && [ "$pid" != "$$" ]; then kill -TERM "$pid" 2>/dev/null || true; fi

  # The kubelet and the scheduler first, so that nothing restarts what follows.
  for name in kube-scheduler kubelet; do
    if pid=$(live_pid "$dir" "$name"); then pids+=("$pid"); fi
  done
  for pid in $(strays "$dir"); do
    case "$(readlink "/proc/$pid/exe")" in */kubelet | */kube-scheduler) pids+=("$pid") ;; esac
  done
  terminate "$grace" 5 "${pids[@]}"
  [ $? != 1 ] || say "kubelet or kube-scheduler survived SIGKILL"

  # The containers: nobody is going to stop them gracefully any more.
  local i left
  for ((i = 0; i < 50; i++)); do
    left=$(in_cgroups "$root")
    [ -z "$left" ] && break
    # shellcheck disable=SC2086 # a list of pids
    kill -KILL $left 2>/dev/null || true
    sleep 0.1
  done

  # containerd, its shims, and anything else still in the node's mount namespace. Guard: never
  # the host's own namespace.
  [ "$ns" != "$(readlink /proc/self/ns/mnt)" ] || ns=""
  pids=()
  if pid=$(live_pid "$dir" containerd); then kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); fi
  wait_gone 5 "${pids[@]}" || true
  for ((i = 0; i < 100; i++)); do
    left=$(
      in_namespace "$ns"
      strays "$dir"
    )
    [ -z "$left" ] && break
    # shellcheck disable=SC2086 # a list of pids
    kill -KILL $left 2>/dev/null || true
    sleep 0.1
  done
  [ -z "$left" ] || say "processes of the node survived SIGKILL: $left"
  for name in launcher kube-scheduler kubelet containerd; do rm -f "$dir/$name.pid"; done

  local status=0
  if [ -n "$root" ]; then remove_cgroup_root "$root" || status=1; fi
  if [ -s "$dir/bridge" ]; then
    remove_bridge "$(<"$dir/bridge")" || status=1
    rm -f "$dir/bridge"
  fi
  # The addresses the pods had are free again (their network namespaces are gone).
  rm -rf "$dir/cni/ipam"
  rm -f "$dir/mntns"
  restore_machine "$dir" || status=1
  set -e
  return $status
}

cmd_stop() {
  [ $# -eq 1 ] || usage
  [ -d "$1" ] || return 0
  local dir
  dir=$(abs_dir "$1")
  [ -e "$dir/$MARKER" ] || die "$dir was not made by node.sh"
  stop_all "$dir"
  say "node of $dir stopped"
}

# --- import, env ----------------------------------------------------------------------------

cmd_import() {
  [ $# -eq 2 ] || usage
  local dir names name
  dir=$(abs_dir "$1")
  [ -s "$2" ] || die "no image archive $2"
  live_pid "$dir" containerd >/dev/null || die "containerd of $dir is not running"
  # ctr names an image after its annotation only when that is a full reference; a bare tag (what
  # the OCI spec suggests) would become "import-<date>:<tag>", which no pod spec names.
  names=$({ tar -xOf "$2" index.json 2>/dev/null || tar -xOf "$2" ./index.json 2>/dev/null; } | python3 -c '
import json, sys
for m in json.load(sys.stdin).get("manifests", []):
    print(m.get("annotations", {}).get("org.opencontainers.image.ref.name", ""))
' 2>/dev/null) || die "$2 is not an OCI image archive (no index.json)"
  while read -r name; do
    [[ $name == */*:* || $name == */*@* ]] ||
      die "$2 names its image '$name': org.opencontainers.image.ref.name must be a full reference like localhost/app:1"
  done <<<"$names"
  ctr_node "$dir" images import "$2" >&2
}

cmd_env() {
  [ $# -eq 1 ] || usage
  local dir
  dir=$(abs_dir "$1")
  load_settings "$dir" || die "no $dir/settings: not started?"
  printf 'export %s=%q\n' \
    REDOLINE_NODE_DIR "$dir" \
    REDOLINE_NODE_NAME "$NODE_NAME" \
    REDOLINE_NODE_HOST_IP "$HOST_IP" \
    REDOLINE_NODE_APISERVER "$HOST_IP:$APISERVER_PORT" \
    REDOLINE_NODE_TAINT "$TAINT" \
    REDOLINE_NODE_STORAGE_CLASS "$STORAGE_CLASS" \
    REDOLINE_NODE_VOLUMES "$dir/volumes" \
    REDOLINE_NODE_PAUSE_IMAGE "$PAUSE_REF" \
    REDOLINE_NODE_CTR "ctr --address $dir/containerd/containerd.sock --namespace k8s.io"
}

# --- record, check-clean --------------------------------------------------------------------

# One line per fact: "<kind> <what>". Only what a node makes is listed, so that the comparison
# holds on a machine where other work goes on (a build's overlay mounts, another program's
# containerd): the sysctls the kubelet sets, the paths it or containerd create, mounts at those
# paths, below a node's DIR or of network namespaces, the cgroups a kubelet or containerd names
# (redoline-node-*, kubepods*, k8s.io), bridges and veth pairs, the node's processes (by their
# command lines) and every process in a node's cgroups, and the kubelet's iptables chains.
snapshot() {
  local name p type pid
  for name in "${SYSCTLS[@]}"; do echo "sysctl $name=$(sysctl -n "$name")"; done
  for p in "${WATCHED_DIRS[@]}"; do [ -e "$p" ] && echo "path $p"; done
  # mountinfo: the mount point is field 5, the file system type follows the "-" field.
  awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { print $5, $(i + 1); break } }' /proc/self/mountinfo |
    while read -r p type; do
      if [ "$type" = nsfs ] || node_path "$p"; then echo "mount $p $type"; fi
    done
  for p in $(cgroup_hierarchies); do
    find "$p" -mindepth 1 -maxdepth 1 -type d \( -name 'redoline-node-*' -o -name 'kubepods*' -o -name k8s.io \) \
      -printf "cgroup $p/%f\n"
  done
  for type in bridge veth; do
    ip -o link show type "$type" | awk -v t="$type" -F': ' '{ sub(/@.*/, "", $2); print "link " t " " $2 }'
  done
  procs_named kubelet kube-scheduler containerd containerd-shim-runc-v2 containerd-shim |
    while read -r pid name; do
      case "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" in
        */kubelet/config.yaml* | */scheduler.kubeconfig* | */containerd/config.toml* | */containerd/containerd.sock*)
          echo "process $name $pid" ;;
      esac
    done
  { grep -l '/redoline-node-' /proc/[0-9]*/cgroup 2>/dev/null || true; } |
    sed -n 's#^/proc/\([0-9]*\)/cgroup$#process in-node-cgroup \1#p'
  if command -v iptables-save >/dev/null; then
    { iptables-save 2>/dev/null || true; } | { grep 'KUBE-' || true; } | sed 's/\[[0-9]*:[0-9]*\]//; s/^/iptables /'
  fi
  return 0
}

# A path where containerd or the kubelet mount things: a fixed one, or below a node's DIR.
node_path() {
  local p=$1 m
  for m in "${MOUNTS[@]}"; do [[ $p == "${m%%=*}" || $p == "${m%%=*}"/* ]] && return 0; done
  while [ "$p" != / ] && [ -n "$p" ]; do
    [ -e "$p/$MARKER" ] && return 0
    p=$(dirname "$p")
  done
  return 1
}

cmd_record() {
  [ $# -eq 1 ] || usage
  snapshot | sort -u >"$1"
}

# Fails when something is there now that was not before, or a sysctl differs. Things that
# vanished meanwhile are someone else's business.
cmd_check_clean() {
  [ $# -eq 1 ] || usage
  [ -s "$1" ] || die "no state file $1 (node.sh record writes it)"
  local now added removed
  now=$(snapshot | sort -u)
  added=$(comm -13 "$1" <(echo "$now"))
  removed=$(comm -23 "$1" <(echo "$now") | grep '^sysctl ' || true)
  if [ -z "$added" ] && [ -z "$removed" ]; then
    say "the machine is as it was before the node"
    return 0
  fi
  say "the machine is NOT as it was before the node:"
  # shellcheck disable=SC2001 # a prefix on every line
  [ -z "$added" ] || sed 's/^/  new:  /' <<<"$added" >&2
  # shellcheck disable=SC2001 # a prefix on every line
  [ -z "$removed" ] || sed 's/^/  gone: /' <<<"$removed" >&2
  return 1
}

# --- selftest -------------------------------------------------------------------------------

cmd_selftest() {
  [ $# -eq 0 ] || usage
  exec "$HERE/node/selftest.sh"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  wait) shift; cmd_wait "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  import) shift; cmd_import "$@" ;;
  env) shift; cmd_env "$@" ;;
  record) shift; cmd_record "$@" ;;
  check-clean) shift; cmd_check_clean "$@" ;;
  selftest) shift; cmd_selftest "$@" ;;
  __namespace) shift; cmd_namespace "$@" ;;
  __launcher) shift; cmd_launcher "$@" ;;
  *) usage ;;
esac
