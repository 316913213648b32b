//! Pages: how committed transactions are grouped into Kafka transactions (`mining.batchSize`).
//!
//! A page is what one Kafka transaction carries, with one bookmark at its end. Seed 001's
//! `batch_size`:
//! - `0`: transactions are aggregated into pages of up to [`AGGREGATE_MAX_RECORDS`] records; the
//!   engine calls [`PageBuilder::flush`] at least at the end of every idle cycle, so a quiet
//!   database never holds events back.
//! - any other value: one page per transaction.
//!
//! A transaction is never split across pages: a page boundary inside one would make part of it
//! visible on its own. So a single transaction larger than the limit is a page of its own.
//! Journal records (chunks, tombstones of rolled back transactions) are not transactions; they
//! ride with the next page, or the next flush.
//!
//! **Restart floor.** When a page leaves the builder while a later transaction already waits in
//! it, that transaction is committed but not in the page, so the page's bookmark must still let
//! mining reach it: [`Page::restart_floor`] is the lowest restart SCN of the transactions left
//! behind, and the engine takes `restart_scn = min(open transactions' pins, restart_floor)`.

use crate::event::Xid;
use crate::event::debezium::Record;

use super::bookmark::{Bookmark, CommitOutOfOrder};

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

/// One committed transaction, encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedTransaction {
    pub commit_scn: u64,
    pub xid: Xid,
    /// Where mining must restart to produce this transaction whole again: its first SCN, or the
    /// position its journal covers.
    pub restart_scn: u64,
    /// Its change events and transaction metadata, in order.
    pub records: Vec<Record>,
    /// The tombstones of its journal chunks (`Journal::forget`).
    pub journal_tombstones: Vec<Record>,
}

/// What one Kafka transaction carries, besides the bookmark.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// Written before the bookmark: change events, transaction metadata, journal chunks.
    pub records: Vec<Record>,
    /// Written after the bookmark: tombstones of journal chunks of ended transactions. In one
    /// Kafka transaction the order is moot; at least once, a tombstone acknowledged before the
    /// bookmark that covers its transaction's end could lose the transaction's beginning.
    pub after_bookmark: Vec<Record>,
    /// The transactions in the page, in commit order.
    pub commits: Vec<(u64, Xid)>,
    /// See the module docs: the lowest restart SCN of committed transactions not in this page.
    pub restart_floor: Option<u64>,
}

impl Page {
    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.after_bookmark.is_empty() && self.commits.is_empty()
    }

    /// Moves `bookmark` past the page's transactions (the restart SCN is the engine's).
    /// Records in the page, the bookmark not included.
    pub fn len(&self) -> usize {
        self.records.len() + self.after_bookmark.len()
    }

    pub fn advance(&self, bookmark: &mut Bookmark) -> Result<(), CommitOutOfOrder> {
        self.commits
            .iter()
            .try_for_each(|(scn, xid)| bookmark.record_commit(*scn, *xid))
    }
}

/// Groups transactions and journal records into pages by a [`PagePolicy`].
#[derive(Debug)]
pub struct PageBuilder {
    policy: PagePolicy,
    pending: Page,
}

impl PageBuilder {
    pub fn new(policy: PagePolicy) -> Self {
        Self {
            policy,
            pending: Page::default(),
        }
    }

    /// Adds a committed transaction; returns the pages now complete, oldest first (at most two:
    /// the pages before and after it may both be due).
    pub fn push_transaction(&mut self, transaction: CommittedTransaction) -> Vec<Page> {
        let mut ready = Vec::new();
        if let PagePolicy::Aggregate { max_records } = self.policy
            && !self.pending.commits.is_empty()
            && self.pending.len() + transaction.records.len() + transaction.journal_tombstones.len()
                > max_records
        {
            ready.push(self.take(Some(transaction.restart_scn)));
        }
        self.pending.records.extend(transaction.records);
        self.pending
            .after_bookmark
            .extend(transaction.journal_tombstones);
        self.pending
            .commits
            .push((transaction.commit_scn, transaction.xid));
        let full = match self.policy {
            PagePolicy::PerTransaction => true,
            PagePolicy::Aggregate { max_records } => self.pending.len() >= max_records,
        };
        if full {
            ready.push(self.take(None));
        }
        ready
    }

    /// Adds records that belong to no committed transaction and must precede the bookmark
    /// (journal chunks, the rebuild's stale tombstones); they go with the next page.
    pub fn push_records(&mut self, records: impl IntoIterator<Item = Record>) {
        self.pending.records.extend(records);
    }

    /// Adds journal tombstones of a transaction that ended without a COMMIT (rollback, orphan
    /// release, discard); they go with the next page, after its bookmark.
    pub fn push_tombstones(&mut self, records: impl IntoIterator<Item = Record>) {
        self.pending.after_bookmark.extend(records);
    }

    /// The pending page, if anything is pending: at the end of every idle cycle.
    pub fn flush(&mut self) -> Option<Page> {
        (!self.pending.is_empty()).then(|| self.take(None))
    }

    fn take(&mut self, restart_floor: Option<u64>) -> Page {
        let mut page = std::mem::take(&mut self.pending);
        page.restart_floor = restart_floor;
        page
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record(n: usize) -> Record {
        Record {
            topic: "t".into(),
            key: Some(n.to_string()),
            value: Some(n.to_string()),
        }
    }

    fn transaction(n: u32, records: usize) -> CommittedTransaction {
        CommittedTransaction {
            commit_scn: 100 + u64::from(n),
            xid: Xid::from_parts(1, 1, n),
            restart_scn: 10 + u64::from(n),
            records: (0..records).map(record).collect(),
            journal_tombstones: Vec::new(),
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
    fn per_transaction_pages_carry_pending_journal_records() {
        let mut builder = PageBuilder::new(PagePolicy::PerTransaction);
        builder.push_records([record(7)]);
        builder.push_tombstones([record(9)]);
        let pages = builder.push_transaction(transaction(1, 2));
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].records.len(), 3);
        assert_eq!(pages[0].after_bookmark, [record(9)]);
        assert_eq!(pages[0].commits, [(101, Xid::from_parts(1, 1, 1))]);
        assert_eq!(builder.flush(), None);
        builder.push_records([record(8)]);
        let flushed = builder.flush().unwrap();
        assert!(flushed.commits.is_empty() && flushed.records.len() == 1);
    }

    #[test]
    fn aggregation_closes_a_page_before_it_would_overflow_and_sets_the_floor() {
        let mut builder = PageBuilder::new(PagePolicy::Aggregate { max_records: 10 });
        assert!(builder.push_transaction(transaction(1, 4)).is_empty());
        assert!(builder.push_transaction(transaction(2, 4)).is_empty());
        let pages = builder.push_transaction(transaction(3, 4));
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].commits.len(), 2);
        assert_eq!(
            pages[0].restart_floor,
            Some(13),
            "transaction 3 is left behind"
        );
        // A transaction larger than the limit is a page of its own, never split.
        let pages = builder.push_transaction(transaction(4, 25));
        assert_eq!(pages.len(), 2);
        assert_eq!(pages[0].commits, [(103, Xid::from_parts(1, 1, 3))]);
        assert_eq!(pages[1].records.len(), 25);
        assert_eq!(pages[1].restart_floor, None);
        assert_eq!(builder.flush(), None);
    }

    proptest! {
        /// Every record arrives once, in order; no page exceeds the limit unless it holds one
        /// transaction; each transaction sits whole in one page.
        #[test]
        fn pages_keep_order_and_never_split_a_transaction(
            sizes in proptest::collection::vec(0usize..30, 1..30),
            per_transaction in any::<bool>(),
        ) {
            let policy = if per_transaction {
                PagePolicy::PerTransaction
            } else {
                PagePolicy::Aggregate { max_records: 20 }
            };
            let mut builder = PageBuilder::new(policy);
            let mut pages = Vec::new();
            let mut expected = Vec::new();
            for (i, size) in sizes.iter().enumerate() {
                let n = u32::try_from(i).unwrap();
                let mut tx = transaction(n, 0);
                tx.records = (0..*size).map(|r| record(i * 1000 + r)).collect();
                expected.extend(tx.records.clone());
                pages.extend(builder.push_transaction(tx));
            }
            pages.extend(builder.flush());
            let seen: Vec<Record> = pages.iter().flat_map(|p| p.records.clone()).collect();
            prop_assert_eq!(seen, expected);
            let commits: Vec<u64> = pages.iter().flat_map(|p| p.commits.iter().map(|c| c.0)).collect();
            prop_assert_eq!(commits.len(), sizes.len());
            for page in &pages {
                prop_assert!(!page.commits.is_empty());
                if per_transaction {
                    prop_assert_eq!(page.commits.len(), 1);
                } else if page.commits.len() > 1 {
                    prop_assert!(page.records.len() <= 20);
                }
            }
        }
    }
}
