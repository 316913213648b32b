#!/usr/bin/env bash
# The whole test suite, as `make test` and CI run it:
#   1. provision the tools (cached under ~/.cache/redoline, keyed by version; the Maven fetches
#      overlap the Go builds),
#   2. format and lint checks,
#   3. one Kafka broker, one PostgreSQL server and one Kubernetes control plane with one real node
#      (tainted: only pods that tolerate it run) for the whole run, shared by every test binary
#      through REDOLINE_KAFKA_BOOTSTRAP (REDOLINE_KAFKA_POD_BOOTSTRAP from pods),
#      REDOLINE_POSTGRES_URL, REDOLINE_KUBECONFIG and REDOLINE_NODE_* (each test still gets its
#      own topic prefix or namespace), stopped again when this script exits; the run fails if the
#      node left the machine changed,
#   4. every test of the workspace with cargo-nextest, test binaries side by side (.config/nextest.toml;
#      capture/tests/fuzz_corpus.rs replays the fuzz targets' seeds and mutations of them; the
#      libFuzzer run is `make fuzz`, which CI runs after this), then the doc tests.
set -euo pipefail
cd "$(dirname "$0")/../.."

step() { printf '\n== %s (%ss)\n' "$*" "$SECONDS"; }

# The Maven fetches mostly wait on the network (cold: ~1.5 min, a fifth of it CPU), so they run
# alongside the Go builds, in their own process group so that a failed build stops them too.
fetch_log=$(mktemp "${TMPDIR:-/tmp}/redoline-fetch.XXXXXX")
setsid -w bash -c 'bash tests/env/kafka.sh fetch && bash tests/env/jdbc-pipeline/run.sh fetch' \
  >"$fetch_log" 2>&1 </dev/null &
fetch_pid=$!
trap 'kill -- -$fetch_pid 2>/dev/null || true; rm -f "$fetch_log"' EXIT

step "provision: Kubernetes control plane binaries"
bash tests/env/build-k8s.sh
step "provision: cargo-nextest (the test runner)"
bash tests/env/build-nextest.sh
PATH="$(bash tests/env/build-nextest.sh path):$PATH"
export PATH
step "provision: helm (chart checks)"
bash tests/env/build-helm.sh
# The chart tests (tests/tests/helm_chart.rs) take helm from here; they fail if it is missing.
REDOLINE_HELM=$(bash tests/env/build-helm.sh path)
export REDOLINE_HELM
step "provision: GitOps health harness (gopher-lua, cel-go)"
bash tests/env/gitops-health/build.sh >/dev/null
step "provision: Kafka jars, Kafka Connect and Debezium's JDBC sink (pipeline test)"
fetch_status=0
wait "$fetch_pid" || fetch_status=$?
cat "$fetch_log"
rm -f "$fetch_log"
trap - EXIT
[ "$fetch_status" = 0 ] || { echo "test-all: fetching the Maven artifacts failed"; exit 1; }

step "check: cargo fmt"
cargo fmt --all -- --check
step "check: cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
step "build: tests"
cargo test --workspace --locked --no-run

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/redoline-test-env.XXXXXX")
# What the machine looks like before the node, to check after it that nothing of it is left.
bash tests/env/node.sh record "$run_dir/machine.before"
cleanup() {
  status=$?
  bash tests/env/kafka.sh stop "$run_dir/kafka" || true
  bash tests/env/node.sh stop "$run_dir/node" || status=1
  bash tests/env/k8s.sh stop "$run_dir/k8s" || true
  bash tests/env/postgres.sh stop "$run_dir/postgres" || true
  bash tests/env/node.sh check-clean "$run_dir/machine.before" || status=1
  if [ $status -eq 0 ]; then rm -rf "$run_dir"; else echo "test environment logs kept in $run_dir"; fi
  exit $status
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
kafka_port=$(free_port)
kafka_controller_port=$(free_port)
kafka_pod_port=$(free_port)
postgres_port=$(free_port)
# PostgreSQL runs as the postgres user when this script runs as root: it must reach its directory.
chmod 755 "$run_dir"

step "start: the control plane and its node, Kafka on 127.0.0.1:$kafka_port, PostgreSQL on 127.0.0.1:$postgres_port"
bash tests/env/k8s.sh start "$run_dir/k8s" $$
# The node creates the pods' bridge before it returns: Kafka's pod listener binds its address.
bash tests/env/node.sh start "$run_dir/node" "$run_dir/k8s" $$
eval "$(bash tests/env/node.sh env "$run_dir/node")"
KAFKA_POD_LISTENER="$REDOLINE_NODE_HOST_IP:$kafka_pod_port" \
  bash tests/env/kafka.sh start "$run_dir/kafka" "$kafka_port" "$kafka_controller_port" $$
bash tests/env/postgres.sh start "$run_dir/postgres" "$postgres_port" $$
bash tests/env/kafka.sh wait "$run_dir/kafka" "$kafka_port" 120
bash tests/env/k8s.sh wait "$run_dir/k8s" 180
bash tests/env/node.sh wait "$run_dir/node" 120
bash tests/env/postgres.sh wait "$run_dir/postgres" "$postgres_port" 60
export REDOLINE_KAFKA_BOOTSTRAP="127.0.0.1:$kafka_port"
export REDOLINE_KAFKA_POD_BOOTSTRAP="$REDOLINE_NODE_HOST_IP:$kafka_pod_port"
export REDOLINE_KUBECONFIG="$run_dir/k8s/kubeconfig"
export REDOLINE_POSTGRES_URL="postgresql://postgres@127.0.0.1:$postgres_port/postgres"

step "test: workspace"
# Every test runs even when one fails (nextest.toml: no fail-fast), so one run shows every failure;
# the doc tests run after, which nextest does not run.
tests_status=0
cargo nextest run --workspace --locked --no-fail-fast || tests_status=$?
cargo test --workspace --locked --doc || tests_status=$?
[ "$tests_status" = 0 ]
step "done"
