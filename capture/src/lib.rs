//! `redoline-capture`: Oracle LogMiner change data capture, exactly once into Kafka.
//!
//! ```text
//! Oracle rows (source) → redo parse → buffer (heap, then spill) → event encode
//!     → sink: data + bookmark + journal in one Kafka transaction
//! ```
//!
//! Built so far: the command line, logging, the typed stops with their termination message, the
//! Oracle boundary, event encoding and the Kafka sink (`sink`: pages, bookmarks, the journal).
//! The mining path arrives module by module (see docs/ and the issues).

pub mod cli;
pub mod dictionary;
pub mod event;
pub mod exit;
pub mod redo;
pub mod sink;
pub mod source;
pub mod stop;
pub mod value;

pub use stop::Stop;

/// The version of this build.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
