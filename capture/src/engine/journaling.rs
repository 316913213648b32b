//! The journal of long transactions during mining (the rules are `sink::journal`'s): which open
//! transactions are journaled, the rows mined since their last chunk, and where they pin the
//! resume position.
//!
//! - At start the transactions rebuilt from the journal are pushed into the buffer, before
//!   mining resumes at the bookmark's restart SCN ([`Journaling::restore`]).
//! - While a window is mined, every row of a journaled transaction is kept aside
//!   ([`Journaling::observe`]), undo rows included; once [`ROWS_BATCH`] rows of one transaction
//!   are kept they become its next chunks at once, so what is kept never grows with the window.
//! - After each window ([`Journaling::after_window`]): the kept rows of journaled transactions
//!   become their next chunks; a transaction that passed the thresholds is journaled whole, its
//!   history read from the buffer (heap or spill file) [`ROWS_BATCH`] rows at a time, each
//!   batch's chunks handed to the sink before the next is read. Journaled transactions that left
//!   the buffer without a COMMIT (rollback, orphan release, discard) get their tombstones then too.
//! - Chunks go into the page being written (its Kafka transaction), so they become visible with
//!   the bookmark whose restart SCN takes the new pins into account. A chunk written in the middle
//!   of a window keeps the journal's rule: every row of the transaction below its last journaled
//!   SCN is in the journal, and the rows kept since are mined again after a restart.
//! - At COMMIT the engine asks for the tombstones ([`Journaling::ended`]) and puts them into the
//!   transaction's own page: a page that made the transaction visible without removing its
//!   chunks would let a later start rebuild it as open.
//! - [`Journaling::restart_scn`]: the lowest pin over the open transactions (a journaled one pins
//!   at its last journaled row, any other at its first row), never above what was mined.
//!
//! With the journal off (the file sink) every call is a no-op and every pin is the first SCN.

use std::collections::HashMap;

use jiff::Timestamp;

use crate::buffer::{TransactionBuffer, TransactionKey};
use crate::error::CaptureError;
use crate::event::Record;
use crate::sink::journal::{Journal, JournalMode, RebuiltTransaction, TxKey};
use crate::source::LogMinerRow;

/// The most rows of one journaled transaction held for a journal write: a batch of its history
/// read back when it is first journaled, or the rows mined since its last chunk.
pub const ROWS_BATCH: usize = 1024;

/// See the module documentation.
#[derive(Debug)]
pub struct Journaling {
    journal: Journal,
    /// The journaled transactions: the buffer's key and the journal's.
    keys: HashMap<TransactionKey, TxKey>,
    /// Rows of journaled transactions mined since their last chunk.
    since: HashMap<TransactionKey, Vec<LogMinerRow>>,
}

impl Journaling {
    pub fn new(journal: Journal) -> Self {
        Self {
            journal,
            keys: HashMap::new(),
            since: HashMap::new(),
        }
    }

    /// The generation bookmarks carry, `None` with the journal off.
    pub fn generation(&self) -> Option<u64> {
        (self.journal.mode() == JournalMode::Kafka).then(|| self.journal.generation())
    }

    /// Journaled transactions open now.
    pub fn journaled(&self) -> usize {
        self.keys.len()
    }

    /// Pushes the transactions rebuilt from the journal into the buffer.
    pub fn restore(
        &mut self,
        buffer: &mut TransactionBuffer,
        rebuilt: Vec<RebuiltTransaction>,
        now: Timestamp,
    ) -> Result<(), CaptureError> {
        for transaction in rebuilt {
            let con_id = transaction.rows.first().and_then(|row| row.con_id);
            tracing::info!(
                xid = %transaction.key.xid,
                rows = transaction.rows.len(),
                "open transaction rebuilt from the journal"
            );
            for row in transaction.rows {
                buffer.push(row, now)?;
            }
            let key = TransactionKey {
                con_id,
                xid: transaction.key.xid,
            };
            self.since.insert(key, Vec::new());
            self.keys.insert(key, transaction.key);
        }
        Ok(())
    }

    /// A row about to be pushed into the buffer: kept when it belongs to a journaled
    /// transaction. Returns the chunks to write now when that transaction's kept rows reached
    /// [`ROWS_BATCH`].
    pub fn observe(
        &mut self,
        buffer: &TransactionBuffer,
        row: &LogMinerRow,
    ) -> Result<Vec<Record>, CaptureError> {
        if self.keys.is_empty() || !row.operation.is_data_change() {
            return Ok(Vec::new());
        }
        let Some(key) = buffer.owner_of(row) else {
            return Ok(Vec::new());
        };
        let (Some(rows), Some(tx)) = (self.since.get_mut(&key), self.keys.get(&key)) else {
            return Ok(Vec::new());
        };
        rows.push(row.clone());
        if rows.len() < ROWS_BATCH {
            return Ok(Vec::new());
        }
        let chunks = write(&mut self.journal, tx, rows);
        rows.clear();
        chunks
    }

    /// Where mining must restart for the open transactions, at most `mined_frontier` (rows below
    /// it were all given to the buffer); `None` when none is open.
    pub fn restart_scn(&self, buffer: &TransactionBuffer, mined_frontier: u64) -> Option<u64> {
        buffer
            .open_first_scns()
            .map(|(key, first_scn)| match self.keys.get(&key) {
                Some(tx) => self.journal.restart_scn(tx, first_scn),
                None => first_scn,
            })
            .min()
            .map(|pin| pin.min(mined_frontier))
    }

    /// A transaction ended: the tombstones of its chunks (none when it was never journaled).
    pub fn ended(&mut self, key: &TransactionKey) -> Vec<Record> {
        self.since.remove(key);
        match self.keys.remove(key) {
            Some(tx) => self.journal.forget(&tx),
            None => Vec::new(),
        }
    }

    /// After a window: hands the chunks to `publish` as they are made, and returns the
    /// tombstones for the page's end (see the module docs).
    pub fn after_window(
        &mut self,
        buffer: &mut TransactionBuffer,
        now: Timestamp,
        publish: &mut dyn FnMut(Vec<Record>) -> Result<(), CaptureError>,
    ) -> Result<Vec<Record>, CaptureError> {
        if self.journal.mode() == JournalMode::Off {
            return Ok(Vec::new());
        }
        let mut tombstones = Vec::new();
        let gone: Vec<TransactionKey> = self
            .keys
            .keys()
            .filter(|key| buffer.open_transaction(key).is_none())
            .copied()
            .collect();
        for key in gone {
            tombstones.extend(self.ended(&key));
        }
        for (key, tx) in &self.keys {
            let rows = self
                .since
                .get_mut(key)
                .map(std::mem::take)
                .unwrap_or_default();
            publish(write(&mut self.journal, tx, &rows)?)?;
        }
        let due: Vec<TransactionKey> = buffer
            .open_first_scns()
            .map(|(key, _)| key)
            .filter(|key| !self.keys.contains_key(key))
            .filter(|key| {
                buffer.open_transaction(key).is_some_and(|(since, events)| {
                    let age = now.duration_since(since).unsigned_abs();
                    self.journal.is_due(age, events)
                })
            })
            .collect();
        for key in due {
            let mut tx_key: Option<TxKey> = None;
            let journal = &mut self.journal;
            buffer.history(&key, ROWS_BATCH, |rows: &[LogMinerRow]| {
                let tx = tx_key.get_or_insert_with(|| TxKey {
                    container: rows
                        .first()
                        .and_then(|row| row.src_con_name.as_deref().map(str::to_owned)),
                    xid: key.xid,
                });
                publish(write(journal, tx, rows)?)
            })?;
            if let Some(tx) = tx_key.filter(|tx| self.journal.is_journaled(tx)) {
                tracing::info!(xid = %key.xid, "transaction journaled");
                self.since.insert(key, Vec::new());
                self.keys.insert(key, tx);
            }
        }
        Ok(tombstones)
    }
}

fn write(
    journal: &mut Journal,
    tx: &TxKey,
    rows: &[LogMinerRow],
) -> Result<Vec<Record>, CaptureError> {
    Ok(journal.write(tx, rows)?)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use prometheus::Registry;
    use redoline_crds::v1alpha1::TransactionsSpec;

    use super::*;
    use crate::buffer::{BufferMetrics, BufferSettings};
    use crate::sink::CaptureIdentity;
    use crate::sink::journal::JournalSettings;
    use crate::source::Xid;
    use crate::source::fixtures;

    /// A transaction of 3,000 rows is journaled in batches (each handed to the sink before the
    /// next is read), and once journaled its rows become chunks every [`ROWS_BATCH`] rows during
    /// the window, moving its pin, rather than piling up until the window ends.
    #[test]
    fn journal_writes_are_bounded_by_the_batch_not_the_transaction() {
        let spill = tempfile::tempdir().unwrap();
        let mut buffer = TransactionBuffer::new(
            BufferSettings {
                memory_max_bytes: 16 << 20,
                spill_dir: spill.path().to_owned(),
                spill_max_bytes: 1 << 30,
                transactions: TransactionsSpec::default(),
            },
            Default::default(),
            BufferMetrics::new(&Registry::new()).unwrap(),
        )
        .unwrap();
        let settings = JournalSettings {
            threshold: Duration::from_secs(300),
            threshold_events: 10,
            chunk_max_bytes: 64 << 20,
            topic: "t.cdc.txjournal".into(),
        };
        let mut journaling =
            Journaling::new(Journal::new(settings, &CaptureIdentity::new("ns", "c"), 1));
        let xid = Xid::from_parts(1, 2, 3);
        let now = Timestamp::now();
        for scn in 100..3100 {
            let row = fixtures::insert(xid, scn);
            assert!(journaling.observe(&buffer, &row).unwrap().is_empty());
            buffer.push(row, now).unwrap();
        }

        let mut batches = Vec::new();
        let tombstones = journaling
            .after_window(&mut buffer, now, &mut |chunks| {
                batches.push(chunks.len());
                Ok(())
            })
            .unwrap();
        assert!(tombstones.is_empty());
        assert_eq!(journaling.journaled(), 1);
        // 3,000 rows in batches of 1,024: three batches of one (large) chunk each, handed over
        // one by one.
        assert_eq!(batches, [1, 1, 1]);
        assert_eq!(journaling.restart_scn(&buffer, u64::MAX), Some(3099));

        let mut written_at = Vec::new();
        for scn in 3100..5200 {
            let row = fixtures::insert(xid, scn);
            if !journaling.observe(&buffer, &row).unwrap().is_empty() {
                written_at.push(scn);
            }
            buffer.push(row, now).unwrap();
        }
        let first = 3100 + ROWS_BATCH as u64 - 1;
        assert_eq!(written_at, [first, first + ROWS_BATCH as u64]);
        assert_eq!(
            journaling.restart_scn(&buffer, u64::MAX),
            Some(first + ROWS_BATCH as u64),
            "the pin follows the chunks written during the window"
        );
    }
}
