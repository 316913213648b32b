//! The test environment of redoline: real services for the end-to-end tests.
//!
//! * [`kafka`]: a single-node Apache Kafka broker (KRaft) from Maven Central jars.
//! * [`k8s`]: etcd, kube-apiserver and kube-controller-manager built from their Go modules, with
//!   an admin kubeconfig and the matching kubectl.
//! * [`operator`]: the sample OracleCapture and the operator run in-process over a test namespace,
//!   with bounded polling, for the operator's integration tests.
//! * [`metric_names`]: the metric names the operator really exports, for the dashboard and alert
//!   checks.
//! * [`demo`]: the Kubernetes demo (`make demo`) and the flow `tests/tests/it/demo_e2e.rs` asserts:
//!   the operator from the chart, the capture pod on the real node on the Oracle simulator, a
//!   workload.
//! * [`node`]: the real node (kubelet, containerd, runc) and the images built here, for the tests
//!   that run pods; [`helm`]: the chart installed with a real helm.
//! * [`samples`]: output samples committed in the docs, compared or rewritten (blessed).
//! * [`process`]: starting, waiting for and stopping the scripts under `tests/env/` that run them;
//!   [`wait`]: bounded polling.
//!
//! Each is started once per test binary on first use, or reused when `REDOLINE_KAFKA_BOOTSTRAP` /
//! `REDOLINE_KUBECONFIG` point at a running one (as `make test` does), and stopped by a watchdog
//! when the test process exits. Tests isolate themselves with a topic prefix or a namespace of
//! their own. See docs/testing.md.

pub mod demo;
pub mod helm;
pub mod k8s;
pub mod metric_names;
pub mod node;
pub mod operator;
pub mod samples;

// In a crate of their own so the capture's integration tests can start the same broker.
pub use redoline_testenv::{kafka, process, registry, wait};

/// The `redoline-capture` built beside `exe` (a binary of `target/<profile>/` or a test of
/// `target/<profile>/deps/`), for tests that run the capture as a process.
pub fn capture_binary_beside(exe: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    binary_beside(exe, "redoline-capture")
}

/// The workspace binary `name` built beside `exe` (see [`capture_binary_beside`]): Cargo gives a
/// test `CARGO_BIN_EXE_<name>` only for its own crate's binaries.
pub fn binary_beside(exe: &std::path::Path, name: &str) -> anyhow::Result<std::path::PathBuf> {
    let candidates = exe.ancestors().skip(1).take(2).map(|dir| dir.join(name));
    for candidate in candidates {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    anyhow::bail!(
        "no {name} beside {}: build it first (cargo build -p {name})",
        exe.display()
    )
}
