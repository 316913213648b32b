//! Pages: how committed transactions are grouped into Kafka transactions (`mining.batchSize`).
//!
//! A page is what one Kafka transaction carries, with one bookmark at its end. Seed 001's
//! `batch_size`:
//! - `0`: transactions are aggregated into pages of up to [`AGGREGATE_MAX_RECORDS`] records; the
//!   engine commits the page at least at the end of every window and idle cycle, so a quiet
//!   database never holds events back.
//! - any other value: one page per transaction.
//!
//! A transaction is never split across pages: a page boundary inside one would make part of it
//! visible on its own. So a single transaction larger than the limit is a page of its own.
//! Journal records (chunks, tombstones of rolled back transactions) are not transactions; they
//! ride with the next page, or the next flush.
//!
//! **Streaming.** A page is not collected in memory: its records go into its open Kafka
//! transaction as they are encoded, a spilled transaction's as they are read back from its spill
//! file, and the bookmark closes it ([`Page`], [`super::KafkaSink::produce`],
//! [`super::KafkaSink::commit_page`]). librdkafka's queue (`queue.buffering.max.messages`,
//! `queue.buffering.max.kbytes`, see `config`) bounds what is in flight; the producer waits
//! while it is full. So the memory a page costs does not grow with its transactions; the price
//! is that a page whose Kafka transaction must be aborted cannot be sent again from memory: the
//! capture starts again from the stored bookmark and mines it again (`SinkError::PageAborted`).

use std::time::Instant;

use crate::event::debezium::Record;

/// The most records an aggregated page holds (`batchSize: 0`), unless one transaction is larger.
pub const AGGREGATE_MAX_RECORDS: usize = 100_000;

/// How transactions are grouped into pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PagePolicy {
    /// A page per transaction.
    PerTransaction,
    /// Transactions aggregated into pages of up to `max_records` records.
    Aggregate { max_records: usize },
}

impl PagePolicy {
    /// `mining.batchSize`: 0 aggregates, anything else is a page per transaction.
    pub fn from_batch_size(batch_size: u64) -> Self {
        if batch_size == 0 {
            PagePolicy::Aggregate {
                max_records: AGGREGATE_MAX_RECORDS,
            }
        } else {
            PagePolicy::PerTransaction
        }
    }
}

/// The page being written: what the sink keeps between a page's first record and its bookmark.
///
/// The records themselves are not here: each one goes into the page's open Kafka transaction
/// as it is encoded ([`super::KafkaSink::produce`]) and librdkafka's queue holds it until it is
/// delivered, so nothing here grows with the page's data. Only the tombstones of journal chunks
/// of ended transactions wait, because they must follow the bookmark (see
/// [`Page::push_after_bookmark`]); they are key-only records, one per 512 KiB chunk.
#[derive(Debug, Default)]
pub struct Page {
    /// When the first record was given ([`Page::begin`]): the Kafka transaction is open
    /// (exactly once), and delivery failures from here on belong to this page.
    begun: Option<Instant>,
    /// Records and key/value bytes already given to the producer.
    records: usize,
    bytes: u64,
    /// Written after the bookmark: tombstones of journal chunks of ended transactions. In one
    /// Kafka transaction the order is moot; at least once, a tombstone acknowledged before the
    /// bookmark that covers its transaction's end could lose the transaction's beginning.
    after_bookmark: Vec<Record>,
}

impl Page {
    /// Nothing was given to this page yet.
    pub fn is_empty(&self) -> bool {
        self.begun.is_none() && self.after_bookmark.is_empty()
    }

    /// Whether the page is begun (its Kafka transaction open, exactly once).
    pub fn is_begun(&self) -> bool {
        self.begun.is_some()
    }

    /// Marks the page begun at `now`; `false` when it already was.
    pub fn begin(&mut self, now: Instant) -> bool {
        if self.begun.is_some() {
            return false;
        }
        self.begun = Some(now);
        true
    }

    /// When the page was begun.
    pub fn begun_at(&self) -> Option<Instant> {
        self.begun
    }

    /// A record of `bytes` key and value bytes was given to the producer.
    pub fn sent(&mut self, bytes: u64) {
        self.records += 1;
        self.bytes += bytes;
    }

    /// Records given so far and their bytes, the tombstones waiting included.
    pub fn totals(&self) -> (usize, u64) {
        let waiting = self.after_bookmark.iter().map(record_bytes).sum::<u64>();
        (
            self.records + self.after_bookmark.len(),
            self.bytes + waiting,
        )
    }

    /// Tombstones to write after the bookmark (see the field).
    pub fn push_after_bookmark(&mut self, records: impl IntoIterator<Item = Record>) {
        self.after_bookmark.extend(records);
    }

    /// The records this page holds in memory: the tombstones waiting for the bookmark.
    pub fn held(&self) -> usize {
        self.after_bookmark.len()
    }

    /// The tombstones, for the commit.
    pub fn after_bookmark(&self) -> &[Record] {
        &self.after_bookmark
    }
}

/// Key and value bytes of a record, as the metrics count them.
pub fn record_bytes(record: &Record) -> u64 {
    (record.key.as_ref().map_or(0, String::len) + record.value.as_ref().map_or(0, String::len))
        as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &str, value: Option<&str>) -> Record {
        Record {
            topic: "t".into(),
            key: Some(key.into()),
            value: value.map(str::to_owned),
        }
    }

    #[test]
    fn batch_size_zero_aggregates_and_anything_else_pages_per_transaction() {
        assert_eq!(
            PagePolicy::from_batch_size(0),
            PagePolicy::Aggregate {
                max_records: 100_000
            }
        );
        assert_eq!(
            PagePolicy::from_batch_size(1000),
            PagePolicy::PerTransaction
        );
    }

    #[test]
    fn a_page_counts_what_it_sent_and_holds_only_the_tombstones() {
        let mut page = Page::default();
        assert!(page.is_empty() && !page.is_begun());
        page.push_after_bookmark([record("chunk-0", None)]);
        assert!(
            !page.is_empty() && !page.is_begun(),
            "tombstones alone need a page"
        );
        let now = Instant::now();
        assert!(page.begin(now));
        assert!(!page.begin(now), "a page is begun once");
        for _ in 0..1000 {
            page.sent(10);
        }
        assert_eq!(page.held(), 1, "sent records are not held");
        assert_eq!(page.totals(), (1001, 10_000 + 7));
        assert_eq!(page.begun_at(), Some(now));
    }
}
