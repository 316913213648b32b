//! The transaction buffer: changes wait here, per transaction, until LogMiner reports the end.
//!
//! ```text
//! LogMinerRow ─ push ─> TransactionBuffer ─ COMMIT ─> CommittedTransaction ─ rows ─> sink
//!                         │ heap, then spill files               │
//!                         └──────── release(receipt) <─ finish ──┘  (deletes the spill file)
//! ```
//!
//! # State machine, per (container, XID)
//! - An all-zero XID never owns changes and never creates an entry.
//! - START opens an entry (and names the session for the orphan check). A data change of a
//!   transaction without an entry opens one too: it began before the mined range.
//! - A data change is appended; an undo row (ROLLBACK = 1) cancels the latest earlier not yet
//!   cancelled statement it undoes on the same ROWID: an INSERT with the LOB rows it wrote, a
//!   DELETE, an UPDATE or a whole LOB write (`undo.rs`; `committed.rs` explains how for spilled
//!   transactions). An INSERT of a row with LOB columns carries a placeholder ROWID and is tied
//!   to the real one its next LOB row names, so its undo DELETE finds it.
//!   An undo row whose XID is sequence-less (XIDSQN 0xFFFFFFFF) belongs to the open transaction of
//!   the same container with the same undo segment and slot. An undo row matching nothing is
//!   counted (`unmatched_undo_rows`) and logged, never an error.
//! - COMMIT hands the rows out in redo order as a [`CommittedTransaction`]; ROLLBACK discards them
//!   and deletes the spill file. A COMMIT for a transaction in the released ledger stops with
//!   CDC-7001 and hands out nothing; other rows of such a transaction are not buffered.
//! - The orphan check and the maximum age drop transactions without an end (`orphan.rs`).
//!
//! # Heap budget and spill
//! The heap held by buffered rows is accounted as `transaction.rs` describes. When an addition
//! takes it over `buffer.memoryMaxBytes`, the largest transaction still on the heap moves whole to
//! a spill file and stays there: its later rows are appended to the file and never grow the heap
//! again. Largest first, again, until the heap is within budget. All spill files share one write
//! buffer of [`WRITE_BUFFER_BYTES`] (flushed when full, when another file is written, and at
//! COMMIT), and a commit from disk reads through [`READ_AHEAD_BYTES`]: fixed overheads outside the
//! budget, independent of the number and size of transactions.
//!
//! # Limits
//! - `buffer.spill.maxBytes`: spill files on disk (open transactions' and committed files not yet
//!   released) never exceed it; a write that would stops with CDC-4001 naming ten open
//!   transactions, those with the most bytes on disk first (then the largest by heap plus disk
//!   bytes). ENOSPC from the OS gives the same stop with the OS message.
//! - `transactions.maxStagedRecords` / `maxStagedRecordsTotal`: rows held (each LOB piece and each
//!   row of an update is a row; an undo row of a spilled transaction is held until COMMIT) for
//!   one transaction / all together; one more stops with CDC-4003.
//!
//! # Errors
//! [`BufferError`]; [`BufferError::stop`] gives the typed stop. After an error the buffer should
//! not be used further: the capture stops, and the spill files are removed at the next start.

mod codec;
mod committed;
mod error;
mod ledger;
pub mod metrics;
mod orphan;
mod spill;
mod transaction;
mod undo;

use std::collections::HashMap;
use std::path::PathBuf;

use jiff::Timestamp;
use redoline_crds::v1alpha1::TransactionsSpec;

use crate::source::{LogMinerRow, OperationCode};

pub use codec::{CodecError, decode_row, encode_row};
pub use committed::{CommittedTransaction, READ_AHEAD_BYTES, ReleaseReceipt};
pub use error::{BufferError, FullLedger, LARGEST_LISTED, OLDEST_LEDGER_ENTRIES_LISTED};
pub use ledger::{LedgerEntry, LedgerFull, ReleaseReason, ReleasedLedger};
pub use metrics::BufferMetrics;
pub use orphan::{Discarded, DlqRecord, DroppedTransaction, OpsEvent, OrphanCheck};
pub use spill::{Corruption, FrameReader, SPILL_EXTENSION, SpillError, spill_file_name};
pub use transaction::{TransactionKey, TransactionSummary};

use spill::SpillDir;
use transaction::{Storage, Transaction};

/// The shared spill write buffer is written out once it holds this much.
pub const WRITE_BUFFER_BYTES: usize = 1 << 20;
/// Room for the frame that crosses [`WRITE_BUFFER_BYTES`], so the buffer never reallocates for
/// rows of ordinary size (LogMiner splits SQL_REDO at 4000 bytes).
const WRITE_BUFFER_SLACK: usize = 64 << 10;

/// The buffer's settings, resolved from the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferSettings {
    pub memory_max_bytes: u64,
    pub spill_dir: PathBuf,
    pub spill_max_bytes: u64,
    pub transactions: TransactionsSpec,
}

impl BufferSettings {
    /// Reads the config's `buffer` and `transactions`; the spill directory is the spill volume's
    /// mount (or [`crate::config::default_spill_dir`] locally).
    pub fn from_config(
        buffer: &crate::config::BufferConfig,
        transactions: &TransactionsSpec,
        spill_dir: PathBuf,
    ) -> Result<Self, BufferError> {
        let size = |field, quantity: &redoline_crds::ByteQuantity| {
            quantity
                .bytes()
                .map_err(|source| BufferError::InvalidSize { field, source })
        };
        Ok(Self {
            memory_max_bytes: size("spec.buffer.memoryMaxBytes", &buffer.memory_max_bytes)?,
            spill_dir,
            spill_max_bytes: size("spec.buffer.spill.maxBytes", &buffer.spill.max_bytes)?,
            transactions: transactions.clone(),
        })
    }
}

/// What [`TransactionBuffer::push`] did with a row.
#[derive(Debug)]
pub enum Pushed {
    /// Held (a change, an undo row, or a START).
    Buffered,
    /// COMMIT: the rows, in redo order.
    Committed(Box<CommittedTransaction>),
    /// ROLLBACK: the transaction's rows are gone.
    RolledBack,
    /// Not the buffer's business (all-zero XID, an end without an entry, a row of a released
    /// transaction, an unmatched undo row, rows that change no data).
    Ignored,
}

/// Open transactions, keyed by container and XID (see the module docs).
#[derive(Debug)]
pub struct TransactionBuffer {
    config: BufferSettings,
    spill_dir: SpillDir,
    open: HashMap<TransactionKey, Transaction>,
    /// The shared spill write buffer and the transaction whose file its bytes belong to.
    pending: Vec<u8>,
    pending_owner: Option<TransactionKey>,
    heap_bytes: u64,
    staged_records: u64,
    spilled_transactions: u64,
    /// Bytes of spill files: open transactions' plus committed ones not yet released.
    disk_bytes: u64,
    /// Highest SCN pushed.
    mined_scn: u64,
    last_orphan_check: Option<Timestamp>,
    /// The database's clock as last read: `(capture's clock, database's clock)` at one moment.
    database_clock: Option<(Timestamp, jiff::civil::DateTime)>,
    ledger: ReleasedLedger,
    metrics: BufferMetrics,
}

impl TransactionBuffer {
    /// Opens the spill directory (removing files of an earlier run) and starts with `ledger`
    /// (from the bookmark, or empty).
    pub fn new(
        config: BufferSettings,
        ledger: ReleasedLedger,
        metrics: BufferMetrics,
    ) -> Result<Self, BufferError> {
        let spill_dir = SpillDir::open(&config.spill_dir).map_err(BufferError::Spill)?;
        let limit = |bytes: u64| i64::try_from(bytes).unwrap_or(i64::MAX);
        metrics.memory_max_bytes.set(limit(config.memory_max_bytes));
        metrics.spill_max_bytes.set(limit(config.spill_max_bytes));
        metrics
            .released_ledger_max_entries
            .set(limit(config.transactions.released_ledger_max_entries));
        let buffer = Self {
            config,
            spill_dir,
            open: HashMap::new(),
            pending: Vec::with_capacity(WRITE_BUFFER_BYTES + WRITE_BUFFER_SLACK),
            pending_owner: None,
            heap_bytes: 0,
            staged_records: 0,
            spilled_transactions: 0,
            disk_bytes: 0,
            mined_scn: 0,
            last_orphan_check: None,
            database_clock: None,
            ledger,
            metrics,
        };
        buffer.refresh_gauges();
        Ok(buffer)
    }

    /// Takes one mined row, in mining order; `now` is the capture's clock.
    pub fn push(&mut self, row: LogMinerRow, now: Timestamp) -> Result<Pushed, BufferError> {
        if row.xid.is_zero() {
            return Ok(Pushed::Ignored);
        }
        self.mined_scn = self.mined_scn.max(row.scn);
        self.ledger.observe(row.con_id, &row.xid);
        let pushed = match row.operation {
            OperationCode::Commit => self.commit(row)?,
            OperationCode::Rollback => self.rollback(&TransactionKey::of(&row))?,
            _ if self.ledger.get(row.con_id, &row.xid).is_some() => {
                tracing::debug!(xid = %row.xid, "A row of a released transaction is not buffered.");
                Pushed::Ignored
            }
            OperationCode::Start => {
                self.open
                    .entry(TransactionKey::of(&row))
                    .or_insert_with(|| Transaction::new(&row, now))
                    .note_identity(&row);
                Pushed::Buffered
            }
            operation if operation.is_data_change() && row.rollback => self.undo(row)?,
            operation if operation.is_data_change() => self.add(row, now)?,
            _ => Pushed::Ignored,
        };
        self.refresh_gauges();
        Ok(pushed)
    }

    /// Deletes a committed transaction's spill file once its rows are handed on.
    pub fn release(&mut self, receipt: ReleaseReceipt) -> Result<(), BufferError> {
        if let Some(file) = receipt.file {
            file.remove().map_err(BufferError::Spill)?;
            self.disk_bytes -= file.len;
            self.refresh_gauges();
        }
        Ok(())
    }

    /// The released ledger, for the bookmark.
    pub fn ledger(&self) -> &ReleasedLedger {
        &self.ledger
    }

    pub fn open_transactions(&self) -> usize {
        self.open.len()
    }

    /// Rows held by open transactions.
    pub fn buffered_events(&self) -> u64 {
        self.staged_records
    }

    pub fn heap_bytes(&self) -> u64 {
        self.heap_bytes
    }

    pub fn spilled_transactions(&self) -> u64 {
        self.spilled_transactions
    }

    /// Bytes of spill files, including committed files not yet released.
    pub fn spilled_bytes(&self) -> u64 {
        self.disk_bytes
    }

    /// The lowest first SCN of the open transactions: where mining must restart.
    pub fn oldest_first_scn(&self) -> Option<u64> {
        self.open.values().map(|t| t.first_scn).min()
    }

    /// Every open transaction with its first SCN, for the resume position (the engine pins
    /// journaled ones elsewhere).
    pub fn open_first_scns(&self) -> impl Iterator<Item = (TransactionKey, u64)> + '_ {
        self.open.values().map(|t| (t.key, t.first_scn))
    }

    /// When an open transaction opened ([`Self::opened_at`]) and the rows it holds (the
    /// journal's thresholds).
    pub fn open_transaction(&self, key: &TransactionKey) -> Option<(Timestamp, u64)> {
        self.open.get(key).map(|t| (self.opened_at(t), t.records))
    }

    /// Records the database's clock (`SCN_TO_TIMESTAMP` of the current SCN, so to its ~3-second
    /// granularity) as read at `now` on the capture's clock; transaction ages then count from
    /// their start in the database.
    pub fn observe_database_clock(&mut self, now: Timestamp, database: jiff::civil::DateTime) {
        self.database_clock = Some((now, database));
    }

    /// When a transaction opened, on the capture's clock, for its age (the journal threshold and
    /// `maxAgeSeconds`): when this process first saw it, or earlier when the database's clock
    /// says it started before. A restart mines a transaction again from its START row, so
    /// without the database's clock its age would start again at every process start, and a
    /// capture that keeps crashing would never journal or age out a long transaction.
    fn opened_at(&self, transaction: &Transaction) -> Timestamp {
        let seen = transaction.buffered_since;
        let (Some((read_at, database_now)), Some(started)) =
            (self.database_clock, transaction.started_at)
        else {
            return seen;
        };
        // Only a start before the clock was read backdates: a transaction that started since
        // is no older than this process has seen (the simulator's clock also stands still
        // between its steps, which would age every later transaction by the time since then).
        let age_when_read = database_now.duration_since(started);
        if !age_when_read.is_positive() {
            return seen;
        }
        read_at
            .checked_sub(age_when_read)
            .map_or(seen, |opened| opened.min(seen))
    }

    /// The key of the open transaction a row belongs to: its own, or for an undo row with a
    /// sequence-less XID the open transaction on the same undo slot (see the module docs).
    pub fn owner_of(&self, row: &LogMinerRow) -> Option<TransactionKey> {
        if row.xid.is_sequenceless() {
            self.open
                .keys()
                .find(|key| key.con_id == row.con_id && row.xid.same_slot(&key.xid))
                .copied()
        } else {
            Some(TransactionKey::of(row)).filter(|key| self.open.contains_key(key))
        }
    }

    /// Hands an open transaction's rows so far to `visit` in batches of at most `batch` rows:
    /// from the heap (changes an undo row cancelled are gone already), or read back from its
    /// spill file (undo rows included, as pushed). Pushing them into an empty buffer rebuilds
    /// the transaction. Returns false for a transaction that is not open.
    pub fn history<E: From<BufferError>>(
        &mut self,
        key: &TransactionKey,
        batch: usize,
        mut visit: impl FnMut(&[LogMinerRow]) -> Result<(), E>,
    ) -> Result<bool, E> {
        if self.pending_owner == Some(*key) {
            self.flush_pending()?;
        }
        let Some(transaction) = self.open.get(key) else {
            return Ok(false);
        };
        let batch = batch.max(1);
        match &transaction.storage {
            Storage::Heap(rows) => {
                for rows in rows.chunks(batch) {
                    visit(rows)?;
                }
            }
            Storage::Spilled { file, .. } => {
                let mut reader = file
                    .snapshot()
                    .open(READ_AHEAD_BYTES)
                    .map_err(BufferError::Spill)?;
                let mut rows = Vec::with_capacity(batch);
                while let Some(row) = reader.next_row().map_err(BufferError::Spill)? {
                    rows.push(row);
                    if rows.len() >= batch {
                        visit(&rows)?;
                        rows.clear();
                    }
                }
                if !rows.is_empty() {
                    visit(&rows)?;
                }
            }
        }
        Ok(true)
    }

    /// The open transactions, largest first (heap plus disk bytes), at most `limit`.
    pub fn largest(&self, limit: usize) -> Vec<TransactionSummary> {
        self.ranked(limit, Transaction::by_size_descending)
    }

    /// The open transactions with the most bytes on disk first, then the largest of the rest,
    /// at most `limit`: what CDC-4001 names, so a full disk names what is on it.
    pub fn most_on_disk(&self, limit: usize) -> Vec<TransactionSummary> {
        self.ranked(limit, Transaction::by_disk_descending)
    }

    fn ranked(
        &self,
        limit: usize,
        order: fn(&Transaction, &Transaction) -> std::cmp::Ordering,
    ) -> Vec<TransactionSummary> {
        let mut all: Vec<&Transaction> = self.open.values().collect();
        all.sort_by(|a, b| order(a, b));
        all.into_iter()
            .take(limit)
            .map(Transaction::summary)
            .collect()
    }

    fn add(&mut self, row: LogMinerRow, now: Timestamp) -> Result<Pushed, BufferError> {
        let key = TransactionKey::of(&row);
        self.check_staged_limits(&key)?;
        let transaction = self
            .open
            .entry(key)
            .or_insert_with(|| Transaction::new(&row, now));
        match &transaction.storage {
            Storage::Heap(_) => {
                self.heap_bytes += transaction.push_on_heap(row);
                self.staged_records += 1;
                self.enforce_heap_budget()?;
            }
            Storage::Spilled { .. } => self.append_to_spill(key, &row)?,
        }
        Ok(Pushed::Buffered)
    }

    fn undo(&mut self, row: LogMinerRow) -> Result<Pushed, BufferError> {
        let key = self.owner_of(&row);
        let Some(transaction) = key.and_then(|key| self.open.get_mut(&key)) else {
            committed::note_unmatched_undo(&self.metrics.unmatched_undo_rows, &row);
            return Ok(Pushed::Ignored);
        };
        let key = transaction.key;
        if let Storage::Spilled { has_undo, .. } = &mut transaction.storage {
            *has_undo = true;
            self.check_staged_limits(&key)?;
            self.append_to_spill(key, &row)?;
        } else if let Some((freed, removed)) = transaction.cancel_on_heap(&row) {
            self.heap_bytes -= freed;
            self.staged_records -= removed;
        } else {
            committed::note_unmatched_undo(&self.metrics.unmatched_undo_rows, &row);
            return Ok(Pushed::Ignored);
        }
        Ok(Pushed::Buffered)
    }

    fn commit(&mut self, row: LogMinerRow) -> Result<Pushed, BufferError> {
        let key = TransactionKey::of(&row);
        if let Some(entry) = self.ledger.get(key.con_id, &key.xid) {
            return Err(BufferError::ReleasedTransactionCommitted {
                entry: entry.clone(),
            });
        }
        if self.pending_owner == Some(key) {
            self.flush_pending()?;
        }
        let Some(transaction) = self.remove(&key) else {
            return Ok(Pushed::Ignored);
        };
        let summary = transaction.summary();
        let committed = match transaction.storage {
            Storage::Heap(rows) => CommittedTransaction::from_heap(key, summary, row, rows),
            Storage::Spilled { file, has_undo } => CommittedTransaction::from_spill(
                key,
                summary,
                row,
                file.seal(),
                has_undo,
                &self.metrics.spill_read_bytes,
                &self.metrics.unmatched_undo_rows,
            )?,
        };
        Ok(Pushed::Committed(Box::new(committed)))
    }

    fn rollback(&mut self, key: &TransactionKey) -> Result<Pushed, BufferError> {
        self.ledger.remove(key.con_id, &key.xid);
        Ok(if self.discard(key)? {
            Pushed::RolledBack
        } else {
            Pushed::Ignored
        })
    }

    /// Removes a transaction and its spill file (ROLLBACK, orphan, age); false when not open.
    fn discard(&mut self, key: &TransactionKey) -> Result<bool, BufferError> {
        if self.pending_owner == Some(*key) {
            self.pending.clear();
            self.pending_owner = None;
        }
        let Some(transaction) = self.remove(key) else {
            return Ok(false);
        };
        if let Storage::Spilled { file, .. } = transaction.storage {
            let sealed = file.seal();
            self.disk_bytes -= sealed.len;
            sealed.remove().map_err(BufferError::Spill)?;
        }
        Ok(true)
    }

    /// Takes a transaction out of the open set and out of the open counters; its spill file's
    /// bytes stay counted until the caller deletes or releases the file.
    fn remove(&mut self, key: &TransactionKey) -> Option<Transaction> {
        let transaction = self.open.remove(key)?;
        self.heap_bytes -= transaction.heap_bytes;
        self.staged_records -= transaction.records;
        if matches!(transaction.storage, Storage::Spilled { .. }) {
            self.spilled_transactions -= 1;
        }
        Some(transaction)
    }

    fn check_staged_limits(&self, key: &TransactionKey) -> Result<(), BufferError> {
        let limits = &self.config.transactions;
        if let Some(transaction) = self.open.get(key)
            && transaction.records >= limits.max_staged_records
        {
            return Err(BufferError::StagedRecordsExceeded {
                key: *key,
                limit: limits.max_staged_records,
                transaction: transaction.summary(),
            });
        }
        if self.staged_records >= limits.max_staged_records_total {
            return Err(BufferError::StagedRecordsTotalExceeded {
                limit: limits.max_staged_records_total,
                largest: self.largest(LARGEST_LISTED),
            });
        }
        Ok(())
    }

    /// Spills the largest heap transactions until the heap is within budget.
    fn enforce_heap_budget(&mut self) -> Result<(), BufferError> {
        while self.heap_bytes > self.config.memory_max_bytes {
            let largest = self
                .open
                .values()
                .filter(|t| matches!(t.storage, Storage::Heap(_)) && t.heap_bytes > 0)
                // The first in largest-first order.
                .min_by(|a, b| Transaction::by_size_descending(a, b))
                .map(|t| t.key);
            let Some(key) = largest else {
                break;
            };
            self.spill(key)?;
        }
        Ok(())
    }

    /// Moves a heap transaction whole to a new spill file.
    fn spill(&mut self, key: TransactionKey) -> Result<(), BufferError> {
        self.flush_pending()?;
        if !self.open.contains_key(&key) {
            return Ok(());
        }
        let file = self
            .spill_dir
            .create(key.xid, &mut self.pending)
            .map_err(|e| self.spill_error(e))?;
        self.pending_owner = Some(key);
        let Some(transaction) = self.open.get_mut(&key) else {
            return Ok(());
        };
        self.disk_bytes += file.len();
        let rows = match std::mem::replace(
            &mut transaction.storage,
            Storage::Spilled {
                file,
                has_undo: false,
            },
        ) {
            Storage::Heap(rows) => rows,
            Storage::Spilled { .. } => Vec::new(),
        };
        self.heap_bytes -= transaction.clear_heap();
        self.spilled_transactions += 1;
        tracing::debug!(%key, rows = rows.len(), "Moved a transaction to a spill file: the heap is over budget.");
        for row in rows {
            self.write_frame(key, &row)?;
        }
        Ok(())
    }

    /// Appends a new row to a spilled transaction.
    fn append_to_spill(
        &mut self,
        key: TransactionKey,
        row: &LogMinerRow,
    ) -> Result<(), BufferError> {
        self.write_frame(key, row)?;
        if let Some(transaction) = self.open.get_mut(&key) {
            transaction.records += 1;
            self.staged_records += 1;
        }
        Ok(())
    }

    /// Writes a row to a spilled transaction's file (through the shared write buffer), within
    /// the cap.
    fn write_frame(&mut self, key: TransactionKey, row: &LogMinerRow) -> Result<(), BufferError> {
        if self.pending_owner != Some(key) {
            self.flush_pending()?;
            self.pending_owner = Some(key);
        }
        let Some(Transaction {
            storage: Storage::Spilled { file, .. },
            ..
        }) = self.open.get_mut(&key)
        else {
            return Ok(());
        };
        let frame_len = file
            .append(row, &mut self.pending)
            .map_err(BufferError::Spill)?;
        if self.disk_bytes + frame_len > self.config.spill_max_bytes {
            file.unappend(frame_len, &mut self.pending);
            return Err(BufferError::CapacityExceeded {
                cap: self.config.spill_max_bytes,
                on_disk: self.disk_bytes,
                needed: frame_len,
                largest: self.most_on_disk(LARGEST_LISTED),
            });
        }
        self.disk_bytes += frame_len;
        if self.pending.len() >= WRITE_BUFFER_BYTES {
            self.flush_pending()?;
        }
        Ok(())
    }

    /// Writes the shared write buffer to its owner's file.
    fn flush_pending(&mut self) -> Result<(), BufferError> {
        let Some(owner) = self.pending_owner.take() else {
            return Ok(());
        };
        let Some(Transaction {
            storage: Storage::Spilled { file, .. },
            ..
        }) = self.open.get_mut(&owner)
        else {
            // Unreachable: COMMIT flushes before it removes the owner, and a discard empties the
            // buffer of its own bytes first.
            self.pending.clear();
            return Ok(());
        };
        let bytes = self.pending.len() as u64;
        let written = file.write_pending(&mut self.pending);
        written.map_err(|e| self.spill_error(e))?;
        self.metrics.spill_write_bytes.inc_by(bytes);
        Ok(())
    }

    /// A full volume becomes CDC-4001 with the transactions most on disk; the rest stays as is.
    fn spill_error(&self, error: SpillError) -> BufferError {
        match error {
            SpillError::VolumeFull { .. } => BufferError::VolumeFull {
                source: error,
                largest: self.most_on_disk(LARGEST_LISTED),
            },
            other => BufferError::Spill(other),
        }
    }

    fn refresh_gauges(&self) {
        let gauge = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        self.metrics
            .open_transactions
            .set(gauge(self.open.len() as u64));
        self.metrics.buffered_events.set(gauge(self.staged_records));
        self.metrics.heap_bytes.set(gauge(self.heap_bytes));
        self.metrics
            .spilled_transactions
            .set(gauge(self.spilled_transactions));
        self.metrics.spilled_bytes.set(gauge(self.disk_bytes));
        self.metrics
            .released_ledger_entries
            .set(gauge(self.ledger.len() as u64));
    }
}
