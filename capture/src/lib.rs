//! `redoline-capture`: Oracle LogMiner change data capture, exactly once into Kafka.
//!
//! ```text
//! Oracle rows (source) → CSF join (source::csf) → buffer (heap, then spill; the journal)
//!     → at COMMIT: assemble (redo parse, typing, LOBs) → filter → encode (event)
//!     → page → sink: data + bookmark + journal in one Kafka transaction (or the file sink)
//! ```
//!
//! [`engine`] is the loop that joins them (start, the mining windows, the per-row pipeline);
//! [`run`] builds a run from the config and restarts it after transient faults. The Oracle
//! boundary is [`source`] (the real client and the simulator); [`buffer`] holds open
//! transactions; [`assemble`] turns a committed transaction into events; [`filter`] applies the
//! connector filters; [`event`] encodes (Debezium or compact); [`sink`] writes pages with their
//! bookmark. Every way a command ends early is one [`error::CaptureError`], whose
//! `disposition()` decides between a retry, a typed stop ([`stop`]) and a restart.

pub mod assemble;
pub mod buffer;
pub mod cli;
pub mod config;
pub mod dictionary;
pub mod doctor;
pub mod engine;
pub mod error;
pub mod event;
pub mod exit;
pub mod filter;
#[doc(hidden)]
pub mod fuzz;
pub mod heartbeat;
pub mod http;
#[cfg(test)]
mod import_graph;
pub mod lag;
pub mod live_config;
pub mod login_guard;
pub mod metrics;
pub mod outage;
pub mod record_location;
pub mod redo;
pub mod registry;
pub mod rotation;
pub mod run;
pub mod schema_history;
pub mod simulator;
pub mod sink;
pub mod snapshot;
pub mod source;
pub mod stop;
pub mod value;

pub use stop::Stop;

/// The version of this build.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

// The mining thread allocates and frees many small, short-lived values per row (column strings,
// typed values, records); glibc's allocator spent a fifth of a Debezium run in malloc/free and
// consolidation.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
