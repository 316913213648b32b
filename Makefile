# The commands a newcomer needs. See README.md.
.PHONY: test demo crds docs env

## Run every test: provisions Kafka and a Kubernetes control plane locally (cached), then
## fmt, clippy and all tests against them.
test:
	bash tests/env/test-all.sh

## Run the capture on the embedded Oracle simulator into a local file (no Oracle, no Kafka).
demo:
	bash examples/demo.sh

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
