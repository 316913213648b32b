//! A committed transaction on its way out: its rows in redo order, and the receipt that lets the
//! buffer delete its spill file once the rows are safely handed on.
//!
//! # Hand-off
//! [`CommittedTransaction`] is an iterator of `Result<LogMinerRow, BufferError>`. Rows of a heap
//! transaction are moved out as they are; a spilled transaction is streamed from its file through
//! a fixed read-ahead buffer ([`READ_AHEAD_BYTES`]), so the heap stays within budget whatever the
//! transaction's size. After the last row, [`CommittedTransaction::finish`] gives a
//! [`ReleaseReceipt`]; `TransactionBuffer::release(receipt)` deletes the file. The Kafka sink
//! calls it after its Kafka transaction committed, so a crash in between re-mines the transaction
//! from a file-less restart instead of losing it. Until released, the file's bytes still count
//! towards `spill.maxBytes`.
//!
//! # Damage found while streaming
//! A streamed file is checked as it is read: each frame's CRC, the length and frame count written.
//! A missing file or a wrong length is found before the first row (the file's size is checked at
//! open). A flipped bit in the middle is found only when that frame is read, after earlier rows
//! were handed out. Reading the whole file first just to verify it would double the I/O of every
//! large commit and still not protect against damage between that check and the read. So the
//! contract is the transactional one: rows are provisional until the iterator has ended and
//! `finish` succeeded; an `Err` from the iterator (CDC-3002) means the consumer must abort what it
//! received (the Kafka sink aborts its Kafka transaction), so nothing of the transaction becomes
//! visible. `finish` refuses to give a receipt for a transaction not read to its end.
//!
//! # Undo rows of a spilled transaction
//! An undo row cancels the latest earlier not yet cancelled statement of its transaction that it
//! undoes on its ROWID (the rules, and the tie of placeholder INSERTs, are in `undo.rs`). On the
//! heap those rows are removed at once. A spill file is append-only and a
//! per-change index would cost heap in proportion to the transaction (the very thing spilling
//! avoids), so an undo row is appended as a frame like any row and the transaction only remembers
//! that it has undo rows. At COMMIT, when it has any, two passes come before the stream:
//! 1. collect the ROWIDs that have undo rows (this pass also verifies every frame, so such a
//!    transaction emits nothing at all if damaged);
//! 2. for those ROWIDs only, keep a stack of frame numbers per ROWID: a change pushes (a
//!    placeholder INSERT onto the stack of the ROWID it ties to), an undo row pops the frames it
//!    cancels and marks them (nothing to pop means the undo row matched nothing: counted and
//!    logged).
//!
//! The stream then skips undo frames and cancelled frames. The extra memory is proportional to
//! the undo rows, not to the transaction; a failed bulk statement of millions of rows costs a few
//! dozen bytes per undone row during its commit.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::sync::Arc;

use prometheus::IntCounter;

use crate::source::{LogMinerRow, OperationCode};

use super::error::BufferError;
use super::spill::{FrameReader, SealedSpillFile, SpillError};
use super::transaction::{TransactionKey, TransactionSummary};
use super::undo;

/// Read-ahead buffer of a spilled transaction's stream: with one row, the heap a commit from disk
/// takes (the undo passes add memory in proportion to the undo rows only).
pub const READ_AHEAD_BYTES: usize = 1 << 20;

/// Proof that a committed transaction was read to its end; give it to
/// `TransactionBuffer::release` once the rows are handed on.
#[derive(Debug)]
#[must_use = "the spill file stays on disk and counts towards the cap until released"]
pub struct ReleaseReceipt {
    pub(super) key: TransactionKey,
    pub(super) file: Option<SealedSpillFile>,
}

impl ReleaseReceipt {
    pub fn key(&self) -> TransactionKey {
        self.key
    }
}

/// A committed transaction's rows in redo order (see the module docs).
#[derive(Debug)]
pub struct CommittedTransaction {
    key: TransactionKey,
    summary: TransactionSummary,
    commit: LogMinerRow,
    rows: Rows,
    file: Option<SealedSpillFile>,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    Ended,
    Failed,
}

#[derive(Debug)]
enum Rows {
    Heap(std::vec::IntoIter<LogMinerRow>),
    Spilled(Box<SpillStream>),
}

#[derive(Debug)]
struct SpillStream {
    frames: FrameReader<File>,
    /// Number of the next frame.
    next_frame: u64,
    /// Cancelled frame numbers, ascending, and the next one to meet.
    cancelled: Vec<u64>,
    next_cancelled: usize,
    read_bytes: IntCounter,
    counted_bytes: u64,
}

impl CommittedTransaction {
    pub(super) fn from_heap(
        key: TransactionKey,
        summary: TransactionSummary,
        commit: LogMinerRow,
        rows: Vec<LogMinerRow>,
    ) -> Self {
        Self {
            key,
            summary,
            commit,
            rows: Rows::Heap(rows.into_iter()),
            file: None,
            state: State::Reading,
        }
    }

    /// Opens a spilled transaction; runs the undo passes first when it has undo rows.
    pub(super) fn from_spill(
        key: TransactionKey,
        summary: TransactionSummary,
        commit: LogMinerRow,
        file: SealedSpillFile,
        has_undo: bool,
        read_bytes: &IntCounter,
        unmatched_undo_rows: &IntCounter,
    ) -> Result<Self, BufferError> {
        let cancelled = if has_undo {
            let undone = rowids_with_undo(&file, read_bytes)?;
            cancelled_frames(&file, &undone, read_bytes, unmatched_undo_rows)?
        } else {
            Vec::new()
        };
        let frames = file.open(READ_AHEAD_BYTES).map_err(BufferError::Spill)?;
        let counted_bytes = frames.offset();
        read_bytes.inc_by(counted_bytes);
        Ok(Self {
            key,
            summary,
            commit,
            rows: Rows::Spilled(Box::new(SpillStream {
                frames,
                next_frame: 0,
                cancelled,
                next_cancelled: 0,
                read_bytes: read_bytes.clone(),
                counted_bytes,
            })),
            file: Some(file),
            state: State::Reading,
        })
    }

    pub fn key(&self) -> TransactionKey {
        self.key
    }

    /// The transaction as it was at COMMIT (events counts rows held, undo rows included).
    pub fn summary(&self) -> &TransactionSummary {
        &self.summary
    }

    /// The COMMIT row (commit SCN and time).
    pub fn commit_row(&self) -> &LogMinerRow {
        &self.commit
    }

    /// Whether the rows come from a spill file.
    pub fn is_spilled(&self) -> bool {
        self.file.is_some()
    }

    /// The receipt for [`TransactionBuffer::release`](super::TransactionBuffer::release), once
    /// every row was read without error.
    pub fn finish(self) -> Result<ReleaseReceipt, BufferError> {
        match self.state {
            State::Ended => Ok(ReleaseReceipt {
                key: self.key,
                file: self.file,
            }),
            State::Reading | State::Failed => Err(BufferError::HandOffIncomplete { key: self.key }),
        }
    }
}

impl SpillStream {
    fn next_row(&mut self) -> Result<Option<LogMinerRow>, SpillError> {
        loop {
            let row = self.frames.next_row();
            let offset = self.frames.offset();
            self.read_bytes.inc_by(offset - self.counted_bytes);
            self.counted_bytes = offset;
            let Some(row) = row? else {
                return Ok(None);
            };
            let frame = self.next_frame;
            self.next_frame += 1;
            if self.cancelled.get(self.next_cancelled) == Some(&frame) {
                self.next_cancelled += 1;
                continue;
            }
            if !row.rollback {
                return Ok(Some(row));
            }
        }
    }
}

impl Iterator for CommittedTransaction {
    type Item = Result<LogMinerRow, BufferError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.state != State::Reading {
            return None;
        }
        let next = match &mut self.rows {
            Rows::Heap(rows) => Ok(rows.next()),
            Rows::Spilled(stream) => stream.next_row(),
        };
        match next {
            Ok(Some(row)) => Some(Ok(row)),
            Ok(None) => {
                self.state = State::Ended;
                None
            }
            Err(e) => {
                self.state = State::Failed;
                tracing::error!(key = %self.key, error = %e, "A committed transaction's spill file is damaged; nothing of it may be published.");
                Some(Err(BufferError::Spill(e)))
            }
        }
    }
}

/// Visits every row of `file` in order, with its frame number.
fn for_each_frame(
    file: &SealedSpillFile,
    read_bytes: &IntCounter,
    mut visit: impl FnMut(u64, LogMinerRow),
) -> Result<(), BufferError> {
    let mut frames = file.open(READ_AHEAD_BYTES).map_err(BufferError::Spill)?;
    let mut frame = 0;
    let result = loop {
        match frames.next_row() {
            Ok(Some(row)) => {
                visit(frame, row);
                frame += 1;
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(BufferError::Spill(e)),
        }
    };
    read_bytes.inc_by(frames.offset());
    result
}

/// What pass 1 finds: the ROWIDs that have undo rows, and the tables with undo DELETEs (whose
/// untied placeholder INSERTs pass 2 must remember for the fallback).
#[derive(Debug, Default)]
struct Undone {
    row_ids: HashSet<Arc<str>>,
    delete_tables: HashSet<undo::TableName>,
}

/// Pass 1: see [`Undone`].
fn rowids_with_undo(
    file: &SealedSpillFile,
    read_bytes: &IntCounter,
) -> Result<Undone, BufferError> {
    let mut undone = Undone::default();
    for_each_frame(file, read_bytes, |_, row| {
        if row.rollback {
            if row.operation == OperationCode::Delete {
                undone.delete_tables.insert(undo::table_name(&row));
            }
            undone.row_ids.insert(row.row_id);
        }
    })?;
    Ok(undone)
}

/// Pass 2: the frames cancelled by undo rows, ascending (the rules in `undo.rs`, with the
/// placeholder INSERTs tied as the heap ties them).
fn cancelled_frames(
    file: &SealedSpillFile,
    undone: &Undone,
    read_bytes: &IntCounter,
    unmatched_undo_rows: &IntCounter,
) -> Result<Vec<u64>, BufferError> {
    // Per undone ROWID, its changes not cancelled yet, oldest first.
    let mut stacks: HashMap<Arc<str>, Vec<(u64, OperationCode)>> = HashMap::new();
    // Placeholder INSERTs that tied to no ROWID, in tables with undo DELETEs (the fallback).
    let mut untied: Vec<(u64, undo::TableName)> = Vec::new();
    let mut placeholder: Option<(u64, LogMinerRow)> = None;
    let mut cancelled = Vec::new();
    for_each_frame(file, read_bytes, |frame, row| {
        if let Some((insert_frame, insert)) = placeholder.take() {
            if undo::ties_to(&insert, &row) {
                if undone.row_ids.contains(&row.row_id) {
                    stacks
                        .entry(row.row_id.clone())
                        .or_default()
                        .push((insert_frame, OperationCode::Insert));
                }
            } else {
                let table = undo::table_name(&insert);
                if undone.delete_tables.contains(&table) {
                    untied.push((insert_frame, table));
                }
            }
        }
        if undo::is_placeholder_insert(&row) {
            placeholder = Some((frame, row));
            return;
        }
        if !undone.row_ids.contains(&row.row_id) {
            return;
        }
        let stack = stacks.entry(row.row_id.clone()).or_default();
        if !row.rollback {
            stack.push((frame, row.operation));
            return;
        }
        let count = undo::undone_count(
            row.operation,
            stack.iter().rev().map(|(_, operation)| *operation),
        );
        match count {
            Some(count) => {
                let kept = stack.len() - count;
                cancelled.extend(stack.drain(kept..).map(|(frame, _)| frame));
            }
            None => {
                let fallback = (row.operation == OperationCode::Delete)
                    .then(|| {
                        untied
                            .iter()
                            .rposition(|(_, table)| *table == undo::table_name(&row))
                    })
                    .flatten();
                match fallback {
                    Some(at) => cancelled.push(untied.remove(at).0),
                    None => note_unmatched_undo(unmatched_undo_rows, &row),
                }
            }
        }
    })?;
    cancelled.sort_unstable();
    Ok(cancelled)
}

/// Counts and logs an undo row that cancels nothing.
pub(super) fn note_unmatched_undo(counter: &IntCounter, row: &LogMinerRow) {
    counter.inc();
    tracing::warn!(xid = %row.xid, row_id = %row.row_id, scn = row.scn, "An undo row matched no earlier change of its transaction; it is ignored.");
}
