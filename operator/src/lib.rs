//! `redoline-operator`: reconciles `OracleCapture` resources.
//!
//! ```text
//! spec → validate → build (ConfigMap, StatefulSet, Service, ServiceAccount) → apply
//!      → observe (pod, termination message, capture /status) → status conditions and Events
//! ```
//!
//! The pure parts, desired state ([`build`]) and status ([`status`]), never touch the network or
//! the clock; [`controller`] is the edge that reads and writes the cluster and polls the capture,
//! and [`events`] publishes what changed.

pub mod build;
pub mod cli;
pub mod controller;
pub mod events;
pub mod http;
pub mod leader;
pub mod metrics;
pub mod status;

/// The version of this build.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
