#!/usr/bin/env bash
# The Kubernetes demo (`make demo`): a local Kafka broker and control plane, the operator, the
# sample OracleCapture, its pod run by a kubelet stand-in on the Oracle simulator with a live
# workload; Ready, events in Kafka, a lag SLA breach and its remedy, a CDC-4001 stop. The flow is
# tests/src/demo/ (asserted by tests/tests/demo_e2e.rs). Everything it starts is stopped and
# removed at the end; the tools are built once and cached under ~/.cache/redoline.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "checking system packages (Debian), then building the control plane and fetching Kafka (cached after the first run)"
bash tests/env/install-deps.sh
bash tests/env/build-k8s.sh
bash tests/env/kafka.sh fetch

say "building redoline-capture and the demo"
cargo build -q -p redoline-capture -p redoline-tests --bin redoline-capture --bin redoline-demo

RUST_LOG=${RUST_LOG:-warn} target/debug/redoline-demo "$@"
