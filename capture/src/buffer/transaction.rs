//! One open transaction: its key, what its START row named, its rows and their honest size.
//!
//! # Heap accounting
//! A transaction on the heap holds its rows in one `Vec<LogMinerRow>`. It is charged
//! - the vector's *capacity* times `size_of::<LogMinerRow>()` (the slots really allocated,
//!   growth slack included), plus
//! - per row, the heap allocations the row owns alone: the capacity of `SQL_REDO` and `SQL_UNDO`,
//!   and `ROW_ID` and `RS_ID` (each an `Arc<str>`: its bytes plus the two reference counts),
//!   which differ from row to row.
//!
//! Owner, table, user, `INFO` and container name are `Arc<str>` the source shares between the
//! rows of a table and session (see `source/row.rs`): one allocation serves thousands of rows and
//! belongs to the source's interning, so a row is charged only its pointer, which the struct size
//! already contains. Allocator rounding and the hash map entry (a few hundred bytes per
//! transaction) are not charged; the budget is a bound on buffered rows, not on the process.

use std::cmp::Ordering;
use std::fmt;
use std::mem::size_of;
use std::sync::Arc;

use serde::Serialize;

use crate::source::{LogMinerRow, OperationCode, SessionId, Xid};

use super::spill::SpillFile;
use super::undo;

/// What the orphan checks have seen of one transaction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OrphanWatch {
    consecutive_absences: u32,
    /// The SCN of the first check that missed it (what the released ledger records).
    pub(super) first_absence_scn: Option<u64>,
}

impl OrphanWatch {
    /// Records one check of the open-transaction list read at database SCN `current_scn`.
    pub fn record(&mut self, present: bool, current_scn: u64) {
        if present {
            *self = Self::default();
        } else {
            self.consecutive_absences = self.consecutive_absences.saturating_add(1);
            self.first_absence_scn.get_or_insert(current_scn);
        }
    }

    /// Whether the transaction is an orphan (conditions 1 to 3 of [`super::orphan`]).
    pub fn is_orphan(&self, mined_through_scn: u64, session_gone: bool) -> bool {
        self.consecutive_absences >= 2
            && self
                .first_absence_scn
                .is_some_and(|scn| mined_through_scn > scn)
            && session_gone
    }
}

/// Bytes of an `Arc<str>` allocation besides the text: the strong and weak counts.
const ARC_HEADER: u64 = 2 * size_of::<usize>() as u64;
const ROW_SLOT: u64 = size_of::<LogMinerRow>() as u64;

/// A transaction's identity: container (`CON_ID`; `None` in a non-CDB) and XID. `CON_ID` rather
/// than `SRC_CON_NAME` because it is the container's number and always set in a CDB; the name
/// maps one to one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TransactionKey {
    pub con_id: Option<u32>,
    pub xid: Xid,
}

impl TransactionKey {
    pub fn of(row: &LogMinerRow) -> Self {
        Self {
            con_id: row.con_id,
            xid: row.xid,
        }
    }
}

impl fmt::Display for TransactionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.con_id {
            Some(con_id) => write!(f, "{} in container {con_id}", self.xid.to_lower_hex()),
            None => f.write_str(&self.xid.to_lower_hex()),
        }
    }
}

/// A transaction as CDC-4001 lists it (contracts: `{xid,user,firstScn,events,heapBytes,diskBytes}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionSummary {
    /// 16 lower-case hex digits, as Debezium's `txId`.
    pub xid: String,
    pub user: Option<String>,
    pub first_scn: u64,
    /// Rows held, on the heap or in the spill file (undo rows of a spilled transaction included).
    pub events: u64,
    pub heap_bytes: u64,
    pub disk_bytes: u64,
}

/// Where a transaction's rows are.
#[derive(Debug)]
pub(super) enum Storage {
    Heap(Vec<LogMinerRow>),
    /// Moved to its spill file for good; `has_undo` says whether an undo row was appended, which
    /// is all the commit needs to know to decide on the undo passes.
    Spilled {
        file: SpillFile,
        has_undo: bool,
    },
}

/// An open transaction.
#[derive(Debug)]
pub(super) struct Transaction {
    pub key: TransactionKey,
    /// SCN of its first row seen (START, or the first change when it began before the range).
    pub first_scn: u64,
    pub user: Option<Arc<str>>,
    /// The session of its START row, or of its first row naming one.
    pub session: Option<SessionId>,
    /// When the buffer first saw it (the injected clock).
    pub buffered_since: jiff::Timestamp,
    /// The database's clock at its first row seen (the START row's `TIMESTAMP`): its age counts
    /// from there, whichever process first saw it.
    pub started_at: Option<jiff::civil::DateTime>,
    /// Rows held (the staged records of `maxStagedRecords`).
    pub records: u64,
    /// Heap bytes charged for its rows (zero once spilled).
    pub heap_bytes: u64,
    pub storage: Storage,
    pub orphan: OrphanWatch,
    /// The latest heap row is a placeholder INSERT that the next change may tie to its ROWID.
    placeholder_pending: bool,
}

impl Transaction {
    pub fn new(row: &LogMinerRow, now: jiff::Timestamp) -> Self {
        let mut transaction = Self {
            key: TransactionKey::of(row),
            first_scn: row.scn,
            user: None,
            session: None,
            buffered_since: now,
            started_at: row.timestamp,
            records: 0,
            heap_bytes: 0,
            storage: Storage::Heap(Vec::new()),
            orphan: OrphanWatch::default(),
            placeholder_pending: false,
        };
        transaction.note_identity(row);
        transaction
    }

    /// Takes user and session from the START row, or from the first row naming them.
    pub fn note_identity(&mut self, row: &LogMinerRow) {
        let is_start = row.operation == crate::source::OperationCode::Start;
        if self.user.is_none() || is_start {
            self.user = row.username.clone().or(self.user.take());
        }
        if let (Some(sid), Some(serial)) = (row.session, row.serial)
            && (self.session.is_none() || is_start)
        {
            self.session = Some(SessionId {
                thread: row.thread,
                sid,
                serial,
            });
        }
    }

    pub fn disk_bytes(&self) -> u64 {
        match &self.storage {
            Storage::Heap(_) => 0,
            Storage::Spilled { file, .. } => file.len(),
        }
    }

    /// Removes the rows on the heap that the undo row `undo` cancels (the rules in `undo.rs`) and
    /// returns the bytes freed and the rows removed; `None` when it cancels nothing. The vector's
    /// capacity stays allocated and charged. Searching from the end finds the usual match (a
    /// recent statement) at once.
    pub fn cancel_on_heap(&mut self, undo: &LogMinerRow) -> Option<(u64, u64)> {
        let Storage::Heap(rows) = &mut self.storage else {
            return None;
        };
        self.placeholder_pending = false;
        let mut candidates = Vec::new();
        let count = undo::undone_count(
            undo.operation,
            rows.iter()
                .enumerate()
                .rev()
                .filter(|(_, row)| row.row_id == undo.row_id)
                .map(|(index, row)| {
                    candidates.push(index);
                    row.operation
                }),
        );
        let cancelled: Vec<usize> = match count {
            Some(count) => candidates.into_iter().take(count).collect(),
            None if undo.operation == OperationCode::Delete => rows
                .iter()
                .rposition(|row| undo::is_placeholder_insert(row) && undo::same_table(row, undo))
                .into_iter()
                .collect(),
            None => Vec::new(),
        };
        if cancelled.is_empty() {
            return None;
        }
        // Newest first, so each index is still where it was.
        let freed: u64 = cancelled
            .iter()
            .map(|&index| owned_heap_bytes(&rows.remove(index)))
            .sum();
        let removed = cancelled.len() as u64;
        self.heap_bytes -= freed;
        self.records -= removed;
        Some((freed, removed))
    }

    /// Appends a change on the heap and returns the heap growth; a placeholder INSERT directly
    /// before it takes its ROWID when it ties (see `undo.rs`).
    pub fn push_on_heap(&mut self, row: LogMinerRow) -> u64 {
        let Storage::Heap(rows) = &mut self.storage else {
            return 0;
        };
        if std::mem::take(&mut self.placeholder_pending)
            && let Some(insert) = rows.last_mut()
            && undo::ties_to(insert, &row)
        {
            insert.row_id = Arc::clone(&row.row_id);
        }
        self.placeholder_pending = undo::is_placeholder_insert(&row);
        let grown = append_row(rows, row);
        self.heap_bytes += grown;
        self.records += 1;
        grown
    }

    /// Forgets the heap charge (the rows moved to disk) and returns it.
    pub fn clear_heap(&mut self) -> u64 {
        std::mem::take(&mut self.heap_bytes)
    }

    pub fn summary(&self) -> TransactionSummary {
        TransactionSummary {
            xid: self.key.xid.to_lower_hex(),
            user: self.user.as_deref().map(str::to_owned),
            first_scn: self.first_scn,
            events: self.records,
            heap_bytes: self.heap_bytes,
            disk_bytes: self.disk_bytes(),
        }
    }

    /// Larger first (heap plus disk), then by key, for "the largest transactions" lists.
    pub fn by_size_descending(a: &Self, b: &Self) -> Ordering {
        let size = |t: &Self| t.heap_bytes + t.disk_bytes();
        size(b).cmp(&size(a)).then(a.key.cmp(&b.key))
    }

    /// More bytes on disk first, then as [`Self::by_size_descending`]: for a stop about the disk
    /// (CDC-4001). A row takes more bytes on the heap than in a spill file, so by heap plus disk
    /// bytes transactions still on the heap can outrank the spilled ones that filled the disk.
    pub fn by_disk_descending(a: &Self, b: &Self) -> Ordering {
        b.disk_bytes()
            .cmp(&a.disk_bytes())
            .then_with(|| Self::by_size_descending(a, b))
    }
}

/// Adds a row to a heap transaction's rows and returns the heap growth (the row's own
/// allocations and any vector slots the push allocated).
fn append_row(rows: &mut Vec<LogMinerRow>, row: LogMinerRow) -> u64 {
    let owned = owned_heap_bytes(&row);
    let slots_before = rows.capacity();
    rows.push(row);
    owned + (rows.capacity() - slots_before) as u64 * ROW_SLOT
}

/// Heap bytes a row owns alone (see the module docs).
pub(super) fn owned_heap_bytes(row: &LogMinerRow) -> u64 {
    let string = |s: &Option<String>| s.as_ref().map_or(0, |s| s.capacity() as u64);
    let arc = |s: &Arc<str>| s.len() as u64 + ARC_HEADER;
    string(&row.sql_redo) + string(&row.sql_undo) + arc(&row.row_id) + arc(&row.rs_id)
}
