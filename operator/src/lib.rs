//! `redoline-operator`: reconciles `OracleCapture` resources.
//!
//! ```text
//! spec → validate → build (ConfigMap, StatefulSet, Service, ServiceAccount) → apply
//!      → observe (pod, termination message, capture /status) → status conditions and Events
//! ```
//!
//! Built so far: the command line, logging and the pure desired-state builders ([`build`]). The
//! reconciler that applies them arrives with its issue.

pub mod build;
pub mod cli;

/// The version of this build.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
