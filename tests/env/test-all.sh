#!/usr/bin/env bash
# The whole test suite, as `make test` and CI run it:
#   1. provision the tools (cached under ~/.cache/redoline, keyed by version; the Maven fetches
#      overlap the Go builds),
#   2. format and lint checks,
#   3. one Kafka broker (a listener per authentication, with its KDC and OIDC token endpoint,
#      REDOLINE_KAFKA_AUTH_DIR), a schema registry (and one requiring authentication:
#      REDOLINE_SCHEMA_REGISTRY_*), one PostgreSQL server and one Kubernetes control plane with one real node
#      (tainted: only pods that tolerate it run) for the whole run, shared by every test binary
#      through REDOLINE_KAFKA_BOOTSTRAP (REDOLINE_KAFKA_POD_BOOTSTRAP from pods),
#      REDOLINE_POSTGRES_URL, REDOLINE_KUBECONFIG and REDOLINE_NODE_* (each test still gets its
#      own topic prefix or namespace), stopped again when this script exits; the run fails if the
#      node left the machine changed,
#   4. every test of the workspace with cargo-nextest, test binaries side by side (.config/nextest.toml;
#      capture/tests/it/fuzz_corpus.rs replays the fuzz targets' seeds and mutations of them; the
#      libFuzzer run is `make fuzz`, which CI runs after this), then the doc tests.
set -euo pipefail
cd "$(dirname "$0")/../.."

step() { printf '\n== %s (%ss)\n' "$*" "$SECONDS"; }

# The Maven and PyPI fetches mostly wait on the network (cold: ~1.5 min, a fifth of it CPU), so they run
# alongside the Go builds, in their own process group so that a failed build stops them too.
fetch_log=$(mktemp "${TMPDIR:-/tmp}/redoline-fetch.XXXXXX")
setsid -w bash -c 'bash tests/env/kafka.sh fetch && bash tests/env/kafka.sh fetch-tools && bash tests/env/oidc.sh fetch && bash tests/env/registry.sh fetch && bash tests/env/jdbc-pipeline/run.sh fetch && bash tests/env/avroconverter/check.sh build && bash tests/env/python-avro/venv.sh build' \
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
# The chart tests (tests/tests/it/helm_chart.rs) take helm from here; they fail if it is missing.
REDOLINE_HELM=$(bash tests/env/build-helm.sh path)
export REDOLINE_HELM
step "provision: GitOps health harness (gopher-lua, cel-go)"
bash tests/env/gitops-health/build.sh >/dev/null
step "provision: Kafka jars, the OIDC token endpoint, the schema registry, the Avro converter check, the Python Avro consumer, Kafka Connect and Debezium's JDBC sink (pipeline test)"
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
# The binaries the tests run as processes: a package's binary is built for its own integration
# tests only, and kubectl-redoline has none (tests/tests/it/kubectl_plugin.rs runs it).
cargo build --workspace --bins --locked
step "build: container images (capture, operator)"
# From the debug binaries just built, on a Debian base (docs/images.md); cached by their inputs.
bash tests/env/build-images.sh
eval "$(bash tests/env/build-images.sh env)"

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/redoline-test-env.XXXXXX")
cleanup() {
  status=$?
  # Fails when the node left anything behind on the machine: then the run fails too.
  bash tests/env/stack.sh stop "$run_dir" || status=1
  if [ $status -eq 0 ]; then rm -rf "$run_dir"; else echo "test environment logs kept in $run_dir"; fi
  exit $status
}
trap cleanup EXIT

step "start: the control plane and its node (with the images), Kafka, the schema registries and PostgreSQL"
STACK_POSTGRES=1 bash tests/env/stack.sh start "$run_dir" $$
eval "$(bash tests/env/stack.sh env "$run_dir")"

step "test: workspace"
# Every test runs even when one fails (nextest.toml: no fail-fast), so one run shows every failure;
# the doc tests run after, which nextest does not run.
tests_status=0
cargo nextest run --workspace --locked --no-fail-fast || tests_status=$?
cargo test --workspace --locked --doc || tests_status=$?
[ "$tests_status" = 0 ]
step "done"
