//! Where committed transactions go. The Kafka sink: pages of committed transactions, each one
//! Kafka transaction with its bookmark and the journal records due with it; for local runs, the
//! file sink ([`file`]).
//!
//! ```text
//! engine ── committed transactions' records, one at a time ─▶ kafka::KafkaSink::produce ─┐
//!        ── long open transactions ─▶ journal::Journal ─▶ chunk records ─▶ (the same) ─────┤
//!                                       └──────────────▶ tombstones ─▶ Page (waiting)     │
//!                           (first record: begin; librdkafka's queue bounds what is in flight) │
//!   Bookmark (commit_scn, restart_scn, ...) ─────────────────────────────────────────────────┤
//!                                                                                           ▼
//!                        kafka::KafkaSink::commit_page: bookmark → tombstones → commit
//!                                                                   │
//!                                                                   ▼ Committed (receipt)
//!                                                engine releases the page's spill files
//! ```
//!
//! Start-up, in this order (each step needs the previous one):
//! 1. [`KafkaSink::open`]: create missing topics, create the producer and initialise
//!    transactions. That fences an earlier instance and aborts its open transaction, so what
//!    follows reads a stable end.
//! 2. [`KafkaSink::read_bookmark`]: the last committed bookmark, or none (CDC-5002 if
//!    unreadable).
//! 3. [`journal::read_journal`]: the journal topic read back and rebuilt against the bookmark
//!    into the open transactions to hand to the buffer, the [`journal::Journal`] state and the
//!    tombstones for chunks of uncommitted generations (CDC-4002 on a chunk gap).
//! 4. The first page carries those tombstones and a bookmark with the new journal generation.
//!
//! The engine drives one interface, [`Output`] ([`output`]): the file sink ([`file`]) or the
//! Kafka sink, whose modules are all under [`kafka`]. Pure modules: [`bookmark`], [`page`],
//! [`journal`] (state and codec), [`kafka::retry`] (policy), [`kafka::topics`] (names). I/O at
//! named edges: [`kafka`] (producer), [`kafka::reader`] (read a topic to its end),
//! [`kafka::topics::ensure_topics`] (admin).
//!
//! Without Kafka (the file sink) there is no journal: see [`journal::JournalMode::Off`].

pub mod bookmark;
pub mod file;
pub mod journal;
pub mod kafka;
pub mod output;
pub mod page;

use std::fmt;

pub use bookmark::Bookmark;
pub use kafka::config::KafkaClientSettings;
pub use kafka::error::SinkError;
pub use kafka::metrics::SinkMetrics;
pub use kafka::retry::{ProducerState, RetryPolicy, SinkStatus};
pub use kafka::sender::send_waiting;
pub use kafka::topics::TopicNames;
pub use kafka::{Committed, DeliveryMode, KafkaSink, SinkOptions, peek_bookmark};
pub use output::{FileLines, Output, OutputError};
pub use page::{Page, PageFill, PagePolicy};

/// Which capture this is: the `OracleCapture`'s namespace and name. It keys the bookmark and
/// the journal and derives the transactional id, so it must stay the same across restarts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CaptureIdentity {
    pub namespace: String,
    pub name: String,
}

impl CaptureIdentity {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The bookmark's record key and the journal's `capture` field: `namespace/name`.
    pub fn key(&self) -> String {
        self.to_string()
    }

    /// `redoline/<namespace>/<name>`: one per capture, the same on every restart, so a second
    /// instance fences the first (CDC-5001) rather than both writing.
    pub fn transactional_id(&self) -> String {
        format!("redoline/{self}")
    }
}

impl fmt::Display for CaptureIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_derives_key_and_transactional_id() {
        let identity = CaptureIdentity::new("sales", "orders");
        assert_eq!(identity.key(), "sales/orders");
        assert_eq!(identity.transactional_id(), "redoline/sales/orders");
    }
}
