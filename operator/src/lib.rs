//! `redoline-operator`: reconciles `OracleCapture` resources.
//!
//! ```text
//! spec → validate → build (ConfigMap, StatefulSet, Service, ServiceAccount) → apply
//!      → observe (pod, termination message, capture /status) → status conditions and Events
//! ```
//!
//! Built so far: the command line, logging, the pure desired-state builders ([`build`]) and the
//! pure status logic ([`status`]). The reconciler that applies and observes arrives with its issue.

pub mod build;
pub mod cli;
pub mod status;

/// The version of this build.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
