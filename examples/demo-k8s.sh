#!/usr/bin/env bash
# The Kubernetes demo (`make demo`): a local Kafka broker, control plane and real node (kubelet,
# containerd, runc; needs root), the images built from images/*.Dockerfile, the operator installed
# by the Helm chart, the sample OracleCapture's pod run by the kubelet on the Oracle simulator with
# a live workload; Ready, events in Kafka, a lag SLA breach and its remedy, a CDC-4001 stop. The
# flow is tests/src/demo/ (asserted by tests/tests/it/demo_e2e.rs). Everything it starts is stopped and
# removed at the end, and the machine is checked to be as it was; the tools are built once and
# cached under ~/.cache/redoline.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

[ "$(id -u)" = 0 ] || { echo "make demo runs a kubelet and containerd: run it as root" >&2; exit 1; }

say "checking system packages (Debian), then building the control plane, the node and helm and fetching Kafka (cached after the first run)"
bash tests/env/install-deps.sh
bash tests/env/build-k8s.sh
bash tests/env/build-helm.sh
REDOLINE_HELM=$(bash tests/env/build-helm.sh path)
export REDOLINE_HELM
bash tests/env/kafka.sh fetch

say "building redoline-capture, redoline-operator and the demo, then their images (cached by their inputs)"
cargo build -q --locked -p redoline-capture -p redoline-operator -p redoline-tests \
  --bin redoline-capture --bin redoline-operator --bin redoline-demo
bash tests/env/build-images.sh >/dev/null
eval "$(bash tests/env/build-images.sh env)"

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/redoline-demo-env.XXXXXX")
cleanup() {
  status=$?
  bash tests/env/stack.sh stop "$run_dir" >/dev/null || status=1
  if [ $status -eq 0 ]; then rm -rf "$run_dir"; else echo "demo environment logs kept in $run_dir"; fi
  exit $status
}
trap cleanup EXIT

say "starting the control plane, the node (importing both images) and Kafka"
# The demo uses none of the broker's authentication listeners (tests/env/stack.sh).
STACK_KAFKA_AUTH=0 STACK_REGISTRY=0 bash tests/env/stack.sh start "$run_dir" $$
eval "$(bash tests/env/stack.sh env "$run_dir")"

RUST_LOG=${RUST_LOG:-warn} target/debug/redoline-demo "$@"
