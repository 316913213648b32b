# The commands a newcomer needs. See README.md.
.PHONY: test demo crds env

## Run every test: provisions Kafka and a Kubernetes control plane locally (cached), then
## fmt, clippy and all tests against them.
test:
	bash tests/env/test-all.sh

## Run the capture on the embedded Oracle simulator into a local file (no Oracle, no Kafka).
demo:
	@echo "make demo: the local demo needs the capture engine (mining loop, buffer and sinks), which"
	@echo "is not built yet; it becomes real with the capture process issue. See README.md."
	@exit 1

## Regenerate the committed CRD YAML from the Rust types.
crds:
	cargo run -q -p redoline-crds --bin crdgen > crds/oraclecaptures.redoline.io.yaml

## Build and cache the test environment's tools without running tests.
env:
	bash tests/env/build-k8s.sh
	bash tests/env/kafka.sh fetch
