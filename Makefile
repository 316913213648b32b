# The commands a newcomer needs. See README.md.
.PHONY: test fuzz demo demo-local crds docs env

## Run every test: provisions Kafka and a Kubernetes control plane locally (cached), then
## fmt, clippy and all tests against them (the fuzz targets replay their corpus and mutations).
test:
	bash tests/env/test-all.sh

## Coverage-guided fuzzing of the fuzz targets with libFuzzer (nightly, cargo-fuzz; cached), for
## FUZZ_SECONDS per target (30 here; CI runs it after `make test`). A crash fails it.
fuzz:
	FUZZ_SECONDS=$${FUZZ_SECONDS:-30} bash tests/env/fuzz.sh

## The demo: a local Kafka and Kubernetes control plane, the operator and a capture on the
## embedded Oracle simulator with a live workload (no Oracle needed).
demo:
	bash examples/demo-k8s.sh

## The capture alone on the embedded Oracle simulator, into a local file (no Kafka, no Kubernetes).
demo-local:
	bash examples/demo-local.sh

## Regenerate the committed CRD YAML from the Rust types, and the chart's copies of it and of the
## operator's RBAC rules (tests fail when any of them drifts).
crds:
	cargo run -q -p redoline-crds --bin crdgen > crds/oraclecaptures.redoline.io.yaml
	cp crds/oraclecaptures.redoline.io.yaml charts/redoline/crds/oraclecaptures.redoline.io.yaml
	cp operator/rbac/clusterrole.yaml charts/redoline/files/rbac/clusterrole.yaml

## Regenerate docs/reference.md (the OracleCapture reference) from the CRD schema.
docs:
	cargo run -q -p redoline-crds --bin refgen > docs/reference.md

## Build and cache the test environment's tools without running tests.
env:
	bash tests/env/build-k8s.sh
	bash tests/env/build-helm.sh
	bash tests/env/kafka.sh fetch
