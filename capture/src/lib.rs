//! `redoline-capture`: Oracle LogMiner change data capture, exactly once into Kafka.
//!
//! ```text
//! Oracle rows (source) → redo parse → buffer (heap, then spill) → event encode
//!     → sink: data + bookmark + journal in one Kafka transaction
//! ```
//!
//! Built so far: the command line and config, the typed stops, the Oracle boundary ([`source`]:
//! the real client and the simulator), the transaction buffer ([`buffer`]), assembling committed
//! transactions into events ([`assemble`]), the encoders ([`event`]), the sinks ([`sink`]: Kafka
//! pages with bookmarks and the journal, and the file sink), doctor, lag and the HTTP face. The mining loop that joins them arrives with the capture process issue.

pub mod assemble;
pub mod buffer;
pub mod cli;
pub mod config;
pub mod dictionary;
pub mod doctor;
pub mod engine;
pub mod event;
pub mod exit;
pub mod filter;
#[doc(hidden)]
pub mod fuzz;
pub mod heartbeat;
pub mod http;
pub mod lag;
pub mod metrics;
pub mod redo;
pub mod restart;
pub mod run;
pub mod schema_history;
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
