//! Services the redoline tests run against, in a crate of their own so that every crate's tests
//! can use them: `redoline-tests` re-exports them, and the capture's integration tests (which
//! cannot depend on `redoline-tests`, itself a dependent of the capture) take them from here.
//!
//! * [`kafka`]: a single-node Apache Kafka broker (KRaft) from Maven Central jars, shared by the
//!   tests of a test binary, or the one `REDOLINE_KAFKA_BOOTSTRAP` names.
//! * [`kafka_auth`]: that broker with a listener per authentication (TLS, mutual TLS, PLAIN,
//!   SCRAM, GSSAPI against a real KDC, OAUTHBEARER against a real OIDC token endpoint) and its
//!   authorizer on, or the one `REDOLINE_KAFKA_AUTH_DIR` describes.
//! * [`registry`]: a real schema registry speaking Confluent's API (Apicurio Registry), open
//!   and one requiring basic or bearer authentication, or the ones `REDOLINE_SCHEMA_REGISTRY_DIR`
//!   and `REDOLINE_SCHEMA_REGISTRY_AUTH_DIR` describe.
//! * [`process`]: starting, waiting for and stopping the scripts under `tests/env/` that run the
//!   services.
//! * [`wait`]: bounded polling, blocking and async, failing with what was awaited.
//! * [`random`]: the reproducible generator of the seed-driven tests.
//! * [`usage`]: the CPU time and memory a process has used, for the benchmarks.
//! * [`Credentials`]: a user name and password, as the broker and registry scripts give them.

pub mod kafka;
pub mod kafka_auth;
pub mod process;
pub mod random;
pub mod registry;
pub mod usage;
pub mod wait;

use serde::Deserialize;

/// A user name and its password, as the scripts of the services describe them.
#[derive(Debug, Clone, Deserialize)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}
