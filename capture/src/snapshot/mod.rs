//! The initial snapshot, as pure logic: what a run does at start ([`decide`]), the progress the
//! bookmark stores ([`SnapshotState`]), the figures `/status` shows ([`SnapshotProgress`]) and
//! Debezium's `source.snapshot` markers ([`marker`]). The loop that reads the tables and writes
//! the pages is `engine::snapshot`; the procedure is documented in `docs/snapshot.md`.
//!
//! Consistency in one sentence: every table is read `AS OF SCN` S (its own, later SCN after an
//! ORA-01555 restart), and streaming starts at the oldest transaction open at S but emits only
//! transactions committed after S (the bookmark's `commit_scn`), and for a table read at a later
//! SCN only its changes committed after that SCN ([`SnapshotState::covers`]).

pub use redoline_crds::capture::SnapshotProgress;
use redoline_crds::v1alpha1::SnapshotMode;
use serde::{Deserialize, Serialize};

use crate::event::SnapshotMarker;
use crate::source::RowRange;
use crate::source::chunk_plan::ChunkPlan;

pub mod incremental;

/// What a run does before (or instead of) streaming.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartAction {
    /// Take a new snapshot at the current SCN, then stream (or idle, `initial_only`).
    Snapshot,
    /// Continue the snapshot the bookmark records, then stream (or idle).
    Resume,
    /// Stream from the stored bookmark, or from the start position when there is none.
    Stream,
    /// No bookmark and `no_data`: stream from the current SCN (the structure is all a
    /// `no_data` snapshot takes, and the dictionary is read at every start).
    StreamFromCurrent,
    /// `initial_only` after its snapshot: neither stream nor snapshot again.
    Idle,
}

/// What the stored bookmark says about snapshots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored<'a> {
    /// No bookmark: a fresh capture.
    Nothing,
    /// A bookmark, with the snapshot it records (none for a capture that never snapshotted),
    /// and whether the redo its restart SCN needs is gone (only asked with `when_needed`).
    Bookmark {
        snapshot: Option<&'a SnapshotState>,
        redo_missing: bool,
    },
}

/// The start rule of `snapshot.mode` (docs/snapshot.md, "Modes").
pub fn decide(mode: SnapshotMode, stored: Stored<'_>) -> StartAction {
    match stored {
        Stored::Nothing => match mode {
            SnapshotMode::Initial | SnapshotMode::InitialOnly | SnapshotMode::WhenNeeded => {
                StartAction::Snapshot
            }
            SnapshotMode::NoData | SnapshotMode::SchemaOnly => StartAction::StreamFromCurrent,
            SnapshotMode::Never => StartAction::Stream,
        },
        // A snapshot in progress is finished whatever the mode says now: its bookmark promises
        // the rows at or below its SCN, and streaming alone would never deliver them.
        Stored::Bookmark {
            snapshot: Some(snapshot),
            ..
        } if !snapshot.completed => StartAction::Resume,
        Stored::Bookmark { redo_missing, .. } => match mode {
            SnapshotMode::InitialOnly => StartAction::Idle,
            SnapshotMode::WhenNeeded if redo_missing => StartAction::Snapshot,
            _ => StartAction::Stream,
        },
    }
}

/// A snapshot's progress, stored in the bookmark of every page it writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotState {
    /// The snapshot SCN S: the position streaming hands off at.
    pub scn: u64,
    /// Every table of the snapshot, in reading order.
    pub tables: Vec<TableSnapshot>,
    /// All tables are read; streaming (or idling) follows.
    pub completed: bool,
}

/// One table's part of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSnapshot {
    /// `OWNER.TABLE` as the dictionary names it.
    pub table: String,
    /// The SCN the table is read as of: S, or a later SCN after ORA-01555 restarted it.
    pub scn: u64,
    /// Where the last row written in a committed page stands in the table's read order (its
    /// ROWID, or its primary key for an index-organised table); the next batch reads after it.
    /// Serialised under the name it had when every position was a ROWID, so bookmarks written
    /// then still resume.
    #[serde(
        default,
        rename = "after_row_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub after: Option<String>,
    /// Rows of this table written so far (at this SCN).
    pub rows: u64,
    pub done: bool,
    /// The chunks the table is read in, once planned ([`crate::source::chunks`]). Stored, not
    /// derived again at a resume: the plan comes from the table's extents and statistics,
    /// which grow and change while the capture is down, and a different plan would not line
    /// up with the chunks already written. Only the chunks from the first one not done on are
    /// kept, packed ([`ChunkPlan`]). Dropped once the table is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<ChunkPlan>,
    /// The chunks whose rows are in a committed page, as inclusive ranges of chunk indexes.
    #[serde(default, skip_serializing_if = "ChunkSet::is_empty")]
    pub chunks_done: ChunkSet,
}

/// A set of chunk indexes as sorted, disjoint, non-adjacent inclusive ranges: a table read in
/// order holds one range however many chunks it has.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChunkSet(Vec<(u32, u32)>);

impl ChunkSet {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, index: u32) -> bool {
        self.0
            .iter()
            .any(|&(first, last)| first <= index && index <= last)
    }

    /// The first index not in the set.
    pub fn first_missing(&self) -> u32 {
        match self.0.first() {
            Some(&(0, last)) => last.saturating_add(1),
            _ => 0,
        }
    }

    pub fn insert(&mut self, index: u32) {
        if self.contains(index) {
            return;
        }
        self.0.push((index, index));
        self.0.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.0.len());
        for &(first, last) in &self.0 {
            match merged.last_mut() {
                Some(previous) if first <= previous.1.saturating_add(1) => {
                    previous.1 = previous.1.max(last);
                }
                _ => merged.push((first, last)),
            }
        }
        self.0 = merged;
    }
}

/// How one batch ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchEnd {
    /// More rows may follow.
    More,
    /// The table is read to its end.
    TableDone,
}

impl SnapshotState {
    /// A snapshot at `scn` of `tables` (qualified names), nothing read yet.
    pub fn new(scn: u64, tables: impl IntoIterator<Item = String>) -> Self {
        Self {
            scn,
            tables: tables
                .into_iter()
                .map(|table| TableSnapshot {
                    table,
                    scn,
                    after: None,
                    rows: 0,
                    done: false,
                    chunks: None,
                    chunks_done: ChunkSet::default(),
                })
                .collect(),
            completed: false,
        }
    }

    /// The index of the table being read (the first not done); `None` once all are.
    pub fn current(&self) -> Option<usize> {
        self.tables.iter().position(|t| !t.done)
    }

    /// Records a written batch of table `index`: `rows` rows, the last at `last_position`.
    pub fn record_batch(
        &mut self,
        index: usize,
        rows: u64,
        last_position: Option<String>,
        end: BatchEnd,
    ) {
        let total = self.tables.len();
        if let Some(table) = self.tables.get_mut(index) {
            table.rows += rows;
            if last_position.is_some() {
                table.after = last_position;
            }
            table.done = end == BatchEnd::TableDone;
        }
        self.completed = self.tables.iter().all(|t| t.done) || total == 0;
    }

    /// The plan of table `index`'s chunks, nothing of it read yet.
    pub fn plan_table(&mut self, index: usize, chunks: Vec<RowRange>) {
        if let Some(table) = self.tables.get_mut(index) {
            table.chunks = Some(ChunkPlan::new(chunks));
            table.chunks_done = ChunkSet::default();
        }
    }

    /// The next chunk of table `index` to read (the first not done) and its range; `None`
    /// when the table has no plan or every chunk is done.
    pub fn next_chunk(&self, index: usize) -> Option<(u32, &RowRange)> {
        let table = self.tables.get(index)?;
        let next = table.chunks_done.first_missing();
        let range = table.chunks.as_ref()?.get(u64::from(next))?;
        Some((next, range))
    }

    /// Records chunks `chunks` of table `index` as written in a committed page, with `rows`
    /// rows; the table is done when its every chunk is (its plan is then dropped).
    pub fn record_chunks(&mut self, index: usize, chunks: std::ops::Range<u32>, rows: u64) {
        let total = self.tables.len();
        if let Some(table) = self.tables.get_mut(index) {
            for chunk in chunks {
                table.chunks_done.insert(chunk);
            }
            table.rows += rows;
            let first_missing = u64::from(table.chunks_done.first_missing());
            let planned = table.chunks.as_ref().map_or(0, ChunkPlan::len);
            // The chunks before the first one not done are needed no more: the bookmark
            // carries only the rest.
            if let Some(plan) = table.chunks.as_mut() {
                plan.forget_before(first_missing);
            }
            if first_missing >= planned {
                table.done = true;
                table.chunks = None;
                table.chunks_done = ChunkSet::default();
            }
        }
        self.completed = self.tables.iter().all(|t| t.done) || total == 0;
    }

    /// ORA-01555 on table `index`: it is read again from its start, as of `scn`, with a new
    /// plan.
    pub fn restart_table(&mut self, index: usize, scn: u64) {
        if let Some(table) = self.tables.get_mut(index) {
            table.scn = scn;
            table.after = None;
            table.rows = 0;
            table.done = false;
            table.chunks = None;
            table.chunks_done = ChunkSet::default();
        }
    }

    /// Whether a streamed change of `table` committed at `commit_scn` is already in the snapshot:
    /// the table was read as of an SCN at or above the commit. For tables read at S the
    /// bookmark's resume rule already skips these; this matters for tables restarted later.
    pub fn covers(&self, table: &str, commit_scn: u64) -> bool {
        self.tables
            .iter()
            .any(|t| t.table == table && commit_scn <= t.scn)
    }

    /// Whether any table was read as of an SCN at or above `commit_scn` (a cheap test before
    /// [`Self::covers`], which only a table restarted at a later SCN makes true after S).
    pub fn covers_any(&self, commit_scn: u64) -> bool {
        self.tables.iter().any(|t| commit_scn <= t.scn)
    }

    /// The figures `/status` and the metrics show; `estimates` holds each table's estimated
    /// row count (optimizer statistics), in the order of [`Self::tables`], `None` when unknown.
    pub fn progress(&self, estimates: &[Option<u64>]) -> SnapshotProgress {
        let remaining = self
            .tables
            .iter()
            .zip(estimates.iter().chain(std::iter::repeat(&None)))
            .filter(|(table, _)| !table.done)
            .map(|(table, estimate)| estimate.map(|rows| rows.saturating_sub(table.rows)))
            .sum::<Option<u64>>();
        SnapshotProgress {
            tables_total: self.tables.len() as u64,
            tables_done: self.tables.iter().filter(|t| t.done).count() as u64,
            rows_scanned: self.tables.iter().map(|t| t.rows).sum(),
            rows_remaining_estimate: remaining,
        }
    }
}

/// Where a snapshot row stands, for its marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowPlace {
    pub first_table: bool,
    pub last_table: bool,
    pub first_in_table: bool,
    pub last_in_table: bool,
}

/// Debezium's `source.snapshot` of a snapshot row, in Debezium's order of precedence: `last`
/// for the last row of the last table, `first` for the first row of the first table,
/// `last_in_data_collection` / `first_in_data_collection` for the last / first row of another
/// table, `true` otherwise (so a one-row table is marked as its last row).
pub fn marker(place: RowPlace) -> SnapshotMarker {
    if place.last_table && place.last_in_table {
        SnapshotMarker::Last
    } else if place.first_table && place.first_in_table {
        SnapshotMarker::First
    } else if place.last_in_table {
        SnapshotMarker::LastInDataCollection
    } else if place.first_in_table {
        SnapshotMarker::FirstInDataCollection
    } else {
        SnapshotMarker::True
    }
}

#[cfg(test)]
mod tests;
