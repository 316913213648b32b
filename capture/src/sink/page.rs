//! Pages: how committed transactions are grouped, each page with one bookmark at its end.
//!
//! With Kafka a page is one Kafka transaction, and its bounds come from
//! `spec.kafka.transactions` ([`PagePolicy::for_kafka`]): a page is committed once it has been open
//! `maxDelayMillis` (100 ms), or holds `maxRecords` (100,000) records or `maxBytes` (16 MiB) of
//! keys and values, whichever comes first, and at the end of every mining window. Committing a
//! Kafka transaction costs milliseconds whatever it holds, so carrying many small database
//! transactions in one is what lets the capture keep up with a busy OLTP database; the price is
//! up to `maxDelayMillis` of added latency. Exactly once is unchanged: the page's data, journal
//! records and bookmark are in one Kafka transaction, and the bookmark is the last page
//! transaction's.
//!
//! With the file sink, seed 001's `mining.batchSize` ([`PagePolicy::from_batch_size`]):
//! - `0`: transactions are aggregated into pages of up to [`AGGREGATE_MAX_RECORDS`] records; the
//!   engine commits the page at least at the end of every window and idle cycle, so a quiet
//!   database never holds events back.
//! - any other value: one page per transaction.
//!
//! A transaction is never split across pages: a page boundary inside one would make part of it
//! visible on its own. So a single transaction larger than a bound is a page of its own.
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

use std::time::{Duration, Instant};

use redoline_crds::quantity::QuantityError;
use redoline_crds::v1alpha1::KafkaTransactionsSpec;

use crate::event::Record;

/// The most records an aggregated file page holds (`batchSize: 0`), unless one transaction is
/// larger.
pub const AGGREGATE_MAX_RECORDS: u64 = 100_000;

/// How transactions are grouped into pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PagePolicy {
    /// A page per transaction.
    PerTransaction,
    /// Transactions aggregated into a page until one of its bounds is reached.
    Aggregate(PageBounds),
}

/// When an aggregated page is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageBounds {
    pub max_records: u64,
    pub max_bytes: u64,
    /// How long a page with records may stay open.
    pub max_delay: Duration,
}

/// What the page holds so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageFill {
    pub records: u64,
    pub bytes: u64,
    /// Since the first transaction with records joined the page (`None`: none did).
    pub age: Option<Duration>,
}

impl PagePolicy {
    /// The file sink's `mining.batchSize`: 0 aggregates, anything else is a page per transaction.
    pub fn from_batch_size(batch_size: u64) -> Self {
        if batch_size == 0 {
            PagePolicy::Aggregate(PageBounds {
                max_records: AGGREGATE_MAX_RECORDS,
                max_bytes: u64::MAX,
                max_delay: Duration::MAX,
            })
        } else {
            PagePolicy::PerTransaction
        }
    }

    /// The Kafka sink's `spec.kafka.transactions`. `None` when `maxBytes` cannot be read (the
    /// config check refuses such a value before a run starts).
    pub fn for_kafka(spec: &KafkaTransactionsSpec) -> Result<Self, QuantityError> {
        Ok(PagePolicy::Aggregate(PageBounds {
            max_records: spec.max_records.max(1),
            max_bytes: spec.max_bytes.bytes()?,
            max_delay: Duration::from_millis(spec.max_delay_millis),
        }))
    }

    /// Whether the page must be committed now, right after a transaction that wrote
    /// `transaction_records` records. A transaction that wrote nothing (one that touched no
    /// captured table, such as the flush write) rides with the next page.
    pub fn due(&self, transaction_records: u64, page: PageFill) -> bool {
        match self {
            PagePolicy::PerTransaction => transaction_records > 0,
            PagePolicy::Aggregate(bounds) => page.records > 0 && bounds.reached(page),
        }
    }

    /// Whether a page begun at `started` has been open too long, checked between rows: the time
    /// bound holds while a window streams rows of transactions still open.
    pub fn overdue(&self, started: Option<Instant>, now: Instant) -> bool {
        match (self, started) {
            (PagePolicy::Aggregate(bounds), Some(started)) => {
                now.saturating_duration_since(started) >= bounds.max_delay
            }
            _ => false,
        }
    }
}

impl PageBounds {
    fn reached(&self, page: PageFill) -> bool {
        page.records >= self.max_records
            || page.bytes >= self.max_bytes
            || page.age.is_some_and(|age| age >= self.max_delay)
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
    (record.key.as_ref().map_or(0, Vec::len) + record.value.as_ref().map_or(0, Vec::len)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &str, value: Option<&str>) -> Record {
        Record {
            topic: "t".into(),
            key: Some(key.into()),
            value: value.map(|v| v.as_bytes().to_vec()),
        }
    }

    #[test]
    fn batch_size_zero_aggregates_and_anything_else_pages_per_transaction() {
        let aggregate = PagePolicy::from_batch_size(0);
        let fill = |records| PageFill {
            records,
            bytes: 1 << 40,
            age: Some(Duration::from_secs(3600)),
        };
        assert!(!aggregate.due(10, fill(99_999)), "only the record bound");
        assert!(aggregate.due(10, fill(100_000)));
        let per = PagePolicy::from_batch_size(1000);
        assert!(per.due(1, fill(1)));
        assert!(
            !per.due(0, fill(5)),
            "a transaction that wrote nothing rides along"
        );
        assert!(!per.overdue(Some(Instant::now()), Instant::now()));
    }

    #[test]
    fn a_kafka_page_is_due_at_its_first_bound() {
        let spec = KafkaTransactionsSpec::default();
        let policy = PagePolicy::for_kafka(&spec).unwrap();
        let small = PageFill {
            records: 10,
            bytes: 4096,
            age: Some(Duration::from_millis(5)),
        };
        assert!(!policy.due(10, small));
        assert!(policy.due(
            10,
            PageFill {
                records: 100_000,
                ..small
            }
        ));
        assert!(policy.due(
            10,
            PageFill {
                bytes: 16 << 20,
                ..small
            }
        ));
        assert!(policy.due(
            10,
            PageFill {
                age: Some(Duration::from_millis(100)),
                ..small
            }
        ));
        assert!(
            !policy.due(
                0,
                PageFill {
                    records: 0,
                    bytes: 0,
                    age: None
                }
            ),
            "an empty page waits for records"
        );
        let started = Instant::now();
        assert!(!policy.overdue(Some(started), started + Duration::from_millis(99)));
        assert!(policy.overdue(Some(started), started + Duration::from_millis(100)));
        assert!(!policy.overdue(None, started + Duration::from_secs(1)));

        // One Kafka transaction per database transaction, if a user wants that back.
        let one = PagePolicy::for_kafka(&KafkaTransactionsSpec {
            max_records: 1,
            ..spec.clone()
        })
        .unwrap();
        assert!(one.due(
            1,
            PageFill {
                records: 1,
                ..small
            }
        ));
        let unreadable = KafkaTransactionsSpec {
            max_bytes: redoline_crds::ByteQuantity::quantity("lots"),
            ..spec
        };
        assert!(PagePolicy::for_kafka(&unreadable).is_err());
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
