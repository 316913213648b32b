#!/usr/bin/env bash
# `node.sh selftest`: a throw-away control plane and node, one pod through its whole life, a stop,
# and the check that the machine is as it was. Fails loudly at the first thing that is not so.
#
# The pod is what operator pods will be: non-root (uid 65532), read-only root file system, every
# capability dropped, an emptyDir and a local PersistentVolume through a claim, talking to the API
# server at the host's bridge address. Its program (probe.c) reports what it sees; the test checks
# that, `kubectl exec` and `logs`, SIGTERM on `kubectl delete pod`, and a termination message with
# an exit code.
#
# It uses its own bridge and subnet (NODE_BRIDGE, NODE_SUBNET; defaults below), so that it can run
# beside a test run's node. Prints the times from the node's start to node Ready and to the pod
# Ready.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../lib/oci.sh
. "$HERE/lib/oci.sh"
export NODE_BRIDGE=${NODE_BRIDGE:-redoline-self}
export NODE_SUBNET=${NODE_SUBNET:-10.244.254.0/24}
K8S_NODE_HOST_IP=$(python3 -c 'import ipaddress, sys; print(ipaddress.ip_network(sys.argv[1])[1])' "$NODE_SUBNET")
export K8S_NODE_HOST_IP
BIN=$(bash "$HERE/k8s.sh" bin-dir)

say() { echo "selftest: $*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/redoline-node-selftest.XXXXXX")
bash "$HERE/node.sh" record "$work/machine.before"

finish() {
  local status=$? clean=0
  trap - EXIT
  timeout 120 bash "$HERE/node.sh" stop "$work/node" || status=1
  timeout 60 bash "$HERE/k8s.sh" stop "$work/k8s" || status=1
  bash "$HERE/node.sh" check-clean "$work/machine.before" || clean=1
  if [ $status = 0 ] && [ $clean = 0 ]; then
    rm -rf "$work"
    say "passed"
  else
    [ $clean = 0 ] || say "FAILED: the node left the machine changed (see above)"
    say "logs kept in $work"
    exit 1
  fi
}
trap finish EXIT

kc() { timeout 60 "$BIN/kubectl" --kubeconfig="$work/k8s/kubeconfig" --request-timeout=30s "$@"; }
elapsed() { python3 -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$1"; }

# The probe image: one static binary.
mkdir -p "$work/probe-root"
gcc -Os -Wall -Werror -static -o "$work/probe-root/probe" "$HERE/node/probe.c"
strip "$work/probe-root/probe"
oci_archive "$work/probe-root" localhost/redoline-probe:selftest "$work/probe.tar" 65532:65532 /probe

# The pod is created as soon as the API server answers, before the node is Ready, so that the
# time to its Ready is the shortest a test can get.
bash "$HERE/k8s.sh" start "$work/k8s" $$
bash "$HERE/node.sh" start "$work/node" "$work/k8s" $$
started_at=$(sed -n 's/^STARTED_AT=//p' "$work/node/settings")
eval "$(bash "$HERE/node.sh" env "$work/node")"
bash "$HERE/node.sh" import "$work/node" "$work/probe.tar"
bash "$HERE/k8s.sh" wait "$work/k8s" 180
$REDOLINE_NODE_CTR images ls -q | grep -qxF localhost/redoline-probe:selftest ||
  fail "the imported image is not listed by $REDOLINE_NODE_CTR"

pv="$REDOLINE_NODE_VOLUMES/probe"
mkdir -p "$pv"
chmod 0777 "$pv"
kc apply -f - <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: selftest-probe}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: $REDOLINE_NODE_STORAGE_CLASS
  local: {path: $pv}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: ["$REDOLINE_NODE_NAME"]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: probe-data}
spec:
  storageClassName: $REDOLINE_NODE_STORAGE_CLASS
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: probe}
spec:
  tolerations: [{key: redoline.io/real-node, operator: Exists, effect: NoSchedule}]
  securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
  terminationGracePeriodSeconds: 30
  containers:
  - name: probe
    image: localhost/redoline-probe:selftest
    imagePullPolicy: Never
    env:
    - {name: PROBE_WRITE, value: /scratch:/data}
    - {name: PROBE_CONNECT, value: "$REDOLINE_NODE_APISERVER"}
    - {name: PROBE_SIGTERM_FILE, value: /data/sigterm.txt}
    securityContext:
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
    readinessProbe:
      exec: {command: [/probe, "true"]}
      periodSeconds: 1
    volumeMounts:
    - {name: scratch, mountPath: /scratch}
    - {name: data, mountPath: /data}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: data, persistentVolumeClaim: {claimName: probe-data}}
EOF
created_at=$(date +%s.%N)
bash "$HERE/node.sh" wait "$work/node" 120
node_ready=$(elapsed "$started_at")
kc wait pod/probe --for=condition=Ready --timeout=60s || {
  kc describe pod probe >&2 || true
  fail "the pod did not get Ready"
}
pod_ready=$(elapsed "$started_at") pod_created_ready=$(elapsed "$created_at")

logs=$(kc logs probe)
# shellcheck disable=SC2001 # a prefix on every line
echo "$logs" | sed 's/^/  pod: /' >&2
for want in "uid=65532 gid=65532" "CapEff:	0000000000000000" "rootfs read-only" "wrote /scratch/probe.txt" \
  "wrote /data/probe.txt" "connect $REDOLINE_NODE_APISERVER ok"; do
  grep -qF "$want" <<<"$logs" || fail "the pod's log lacks '$want'"
done
[ -s "$pv/probe.txt" ] || fail "the pod's file is not in the local volume $pv"
ip=$(kc get pod probe -o jsonpath='{.status.podIP}')
python3 -c 'import ipaddress, sys; sys.exit(ipaddress.ip_address(sys.argv[1]) not in ipaddress.ip_network(sys.argv[2]))' \
  "$ip" "$NODE_SUBNET" || fail "pod IP $ip is not in $NODE_SUBNET"
kc exec probe -- /probe true || fail "kubectl exec failed"

kc delete pod probe --wait=true --timeout=45s
grep -qx "got SIGTERM" "$pv/sigterm.txt" 2>/dev/null || fail "the pod did not record SIGTERM in $pv/sigterm.txt"

kc apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: probe-exit}
spec:
  restartPolicy: Never
  tolerations: [{key: redoline.io/real-node, operator: Exists, effect: NoSchedule}]
  securityContext: {runAsNonRoot: true, runAsUser: 65532}
  containers:
  - name: probe
    image: localhost/redoline-probe:selftest
    imagePullPolicy: Never
    args: [exit, "3", "bye from the probe"]
    securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
EOF
kc wait pod/probe-exit --for=jsonpath='{.status.phase}'=Failed --timeout=60s
terminated=$(kc get pod probe-exit -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}/{.status.containerStatuses[0].state.terminated.message}')
[ "$terminated" = "3/bye from the probe" ] || fail "termination: got '$terminated', want '3/bye from the probe'"

say "after node.sh start: node Ready in ${node_ready} s, the first pod Ready in ${pod_ready} s (${pod_created_ready} s after it was created)"
