//! The pipeline a window's rows stream through while the source is busy: CSF join → buffer →
//! at COMMIT assemble → filter → encode → page → sink, and the page commits with its bookmark.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use redoline_crds::StopCode;
use redoline_crds::capture::{OldestTransaction, Time};
use redoline_crds::v1alpha1::SnapshotRequest;

use super::captured_tables::{CapturedTables, TableListing};
use super::idle::WindowYield;
use super::journaling::Journaling;
use super::to_gauge;
use crate::assemble::{CommitInfo, TableLookup, TransactionAssembler};
use crate::buffer::{CommittedTransaction, OrphanCheck, Pushed, ReleaseReceipt, TransactionBuffer};
use crate::config::CaptureConfig;
use crate::dictionary::TableSchema;
use crate::error::CaptureError;
use crate::event::RecordEncoder;
use crate::event::{ChangeEvent, Operation};
use crate::filter::Filters;
use crate::http::StatusBoard;
use crate::metrics::{EngineMetrics, SkipReason};
use crate::schema_history::{ChangeKind, NewVersion, TableChange};
use crate::sink::Output;
use crate::sink::{Bookmark, PageFill, PagePolicy};
use crate::snapshot::SnapshotState;
use crate::snapshot::incremental::{IncrementalState, NextChunk, Transition};
use crate::source::csf::ContinuationJoiner;
use crate::source::{
    DatabaseCatalog, LogMinerRow, OperationCode, RowRange, Xid, missing_scn_range,
};
use crate::stop::Stop;

/// Everything the row callback needs (the source is busy streaming while it runs).
pub(super) struct Pipeline {
    config: CaptureConfig,
    tables: CapturedTables,
    buffer: TransactionBuffer,
    sink: Output,
    encoder: RecordEncoder,
    /// Connector filters: changes by users the username lists leave out are not encoded.
    filters: Arc<Filters>,
    page_policy: PagePolicy,
    journaling: Journaling,
    board: StatusBoard,
    /// Every row below this SCN was given to the buffer: the resume position never passes it.
    mined_frontier: u64,
    bookmark: Bookmark,
    joiner: ContinuationJoiner,
    metrics: EngineMetrics,
    /// The database host's offset from UTC as read before the window being mined, as a fixed
    /// zone: LogMiner's TIMESTAMP and COMMIT_TIMESTAMP are DATEs in the host's local time.
    time_zone: TimeZone,
    /// The UTC commit time of the latest transaction emitted, with its commit SCN: the lag
    /// counts from it rather than from its local time read again later, which a DST switch in
    /// between would shift by the switch.
    last_commit_time: Option<(u64, Timestamp)>,
    /// Receipts of transactions in the page not committed yet (their spill files stay).
    pending: Vec<ReleaseReceipt>,
    page_records: u64,
    /// When the first transaction with records joined the page (the time bound counts from it).
    page_started: Option<Instant>,
    /// Rows given to the buffer at the latest SCN, to recognise them when a window restarts at
    /// that SCN.
    latest_scn: u64,
    latest_rows: RowCounts,
    /// After a restart at an SCN: the rows of that SCN already given, not met again yet.
    replayed: Option<(u64, RowCounts)>,
    /// A DDL transaction committed at this SCN; the window ends here.
    ddl_commit_scn: Option<u64>,
    /// A stop request ended the window at this SCN (the latest row given to the buffer): rows at
    /// and above it may not have been mined yet.
    stopped_at_scn: Option<u64>,
    /// The DDL events of that transaction, waiting for their tables' new structure.
    ddl_events: Vec<ChangeEvent>,
    /// What the window being mined gave the capture, for the pause after it.
    window_yield: WindowYield,
    /// Names the schema history, schema change and heartbeat records carry.
    topic_prefix: String,
    heartbeat_topic: String,
    /// Commit the page even without records or transactions: its bookmark moved (heartbeat).
    bookmark_moved: bool,
    database_name: String,
    failure: Option<CaptureError>,
    stop: Arc<AtomicBool>,
}

/// What a pipeline is built from (engine/start.rs); the rest of its state starts empty.
pub(super) struct PipelineParts {
    pub(super) config: CaptureConfig,
    pub(super) tables: CapturedTables,
    pub(super) buffer: TransactionBuffer,
    pub(super) sink: Output,
    pub(super) encoder: RecordEncoder,
    pub(super) filters: Arc<Filters>,
    pub(super) page_policy: PagePolicy,
    pub(super) journaling: Journaling,
    pub(super) board: StatusBoard,
    pub(super) bookmark: Bookmark,
    pub(super) metrics: EngineMetrics,
    pub(super) topic_prefix: String,
    pub(super) heartbeat_topic: String,
    /// Whether the first page commits even without records (a fresh position to store).
    pub(super) bookmark_moved: bool,
    pub(super) database_name: String,
    pub(super) stop: Arc<AtomicBool>,
}

/// How many rows of each identity were given at one SCN. Counted, not merely noted: the pieces
/// of a SQL_REDO continued over several rows (CSF) share SCN, RS_ID and SSN, so a fetch that
/// ended after the first of two `CSF = 1` pieces must skip one piece when the SCN is mined again
/// and give the other, which a set would have skipped too.
pub(super) type RowCounts = HashMap<RowIdentity, u32>;

/// What identifies a row within its SCN.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct RowIdentity {
    xid: Xid,
    rs_id: Arc<str>,
    ssn: u64,
    operation: u16,
    rollback: bool,
    csf: bool,
    thread: u16,
}

impl RowIdentity {
    fn of(row: &LogMinerRow) -> Self {
        Self {
            xid: row.xid,
            rs_id: Arc::clone(&row.rs_id),
            ssn: row.ssn,
            operation: row.operation.code(),
            rollback: row.rollback,
            csf: row.csf,
            thread: row.thread,
        }
    }
}

impl Pipeline {
    pub(super) fn new(parts: PipelineParts) -> Self {
        let PipelineParts {
            config,
            tables,
            buffer,
            sink,
            encoder,
            filters,
            page_policy,
            journaling,
            board,
            bookmark,
            metrics,
            topic_prefix,
            heartbeat_topic,
            bookmark_moved,
            database_name,
            stop,
        } = parts;
        Self {
            config,
            tables,
            buffer,
            sink,
            encoder,
            filters,
            page_policy,
            journaling,
            board,
            mined_frontier: bookmark.restart_scn,
            bookmark,
            joiner: ContinuationJoiner::default(),
            metrics,
            // Replaced before each window's rows are read (`set_time_zone`): nothing is
            // converted with this one.
            time_zone: TimeZone::UTC,
            last_commit_time: None,
            pending: Vec::new(),
            page_records: 0,
            page_started: None,
            latest_scn: 0,
            latest_rows: HashMap::new(),
            replayed: None,
            ddl_commit_scn: None,
            stopped_at_scn: None,
            ddl_events: Vec::new(),
            window_yield: WindowYield::default(),
            topic_prefix,
            heartbeat_topic,
            bookmark_moved,
            database_name,
            failure: None,
            stop,
        }
    }

    pub(super) fn config(&self) -> &CaptureConfig {
        &self.config
    }

    /// The snapshot requests in force, as the config file now lists them (engine/incremental.rs).
    pub(super) fn set_snapshot_requests(&mut self, requests: Vec<SnapshotRequest>) {
        self.config.snapshot.requests = requests;
    }

    pub(super) fn metrics(&self) -> &EngineMetrics {
        &self.metrics
    }

    /// The bookmark of the last committed page, with the changes to go with the next one.
    pub(super) fn bookmark(&self) -> &Bookmark {
        &self.bookmark
    }

    pub(super) fn tables(&self) -> &CapturedTables {
        &self.tables
    }

    /// Lists the catalog with `listing` and captures the newly selected tables from `from_scn`,
    /// their structures recorded in the schema history; whether any joined.
    pub(super) fn refresh_tables<S: DatabaseCatalog>(
        &mut self,
        listing: &mut TableListing,
        source: &mut S,
        from_scn: u64,
    ) -> Result<bool, CaptureError> {
        let recorded = listing.refresh(source, &mut self.tables, from_scn)?;
        self.record_versions(&recorded)?;
        Ok(!recorded.is_empty())
    }

    /// The structure of captured table `owner.table` in force at `scn` (a snapshot's read
    /// SCN), or `None` when it is not captured or has no structure in force there yet.
    pub(super) fn table_at(
        &mut self,
        owner: &str,
        table: &str,
        scn: u64,
    ) -> Option<Arc<TableSchema>> {
        self.tables.at_commit(scn);
        self.tables.table(owner, table, None)
    }

    /// The structure of captured table `owner.table` at the SCN the tables were last looked up
    /// at (before streaming: the start's).
    pub(super) fn table_now(&mut self, owner: &str, table: &str) -> Option<Arc<TableSchema>> {
        self.tables.table(owner, table, None)
    }

    /// The database host's offset for the window about to be mined.
    pub(super) fn set_time_zone(&mut self, offset: jiff::tz::Offset) {
        self.time_zone = TimeZone::fixed(offset);
    }

    /// The database host's offset read for the window being mined, as a fixed zone.
    pub(super) fn time_zone(&self) -> &TimeZone {
        &self.time_zone
    }

    /// The lowest first SCN of the transactions open in the buffer.
    pub(super) fn oldest_open_scn(&self) -> Option<u64> {
        self.buffer.oldest_first_scn()
    }

    /// Starts counting what the next window gives.
    pub(super) fn start_window(&mut self) {
        self.window_yield = WindowYield::default();
    }

    /// What the window just mined gave.
    pub(super) fn window_yield(&self) -> WindowYield {
        self.window_yield
    }

    /// The commit time this run's events carried for the commit at `scn`, when it emitted it.
    pub(super) fn commit_time_of(&self, scn: u64) -> Option<Timestamp> {
        self.last_commit_time
            .filter(|(emitted, _)| *emitted == scn)
            .map(|(_, time)| time)
    }

    /// The database's clock read at `now` (transaction ages count from it) and, when known,
    /// the time of the emitted position, which the next page stores.
    pub(super) fn observe_database_time(
        &mut self,
        now: Timestamp,
        database_now: Option<jiff::civil::DateTime>,
        emitted: Option<Timestamp>,
    ) {
        if let Some(database_now) = database_now {
            self.buffer.observe_database_clock(now, database_now);
        }
        if let Some(emitted) = emitted {
            self.bookmark.reached_time(emitted);
        }
    }

    /// At the start of streaming: the incremental snapshot state the bookmark carries (a first
    /// one knows the tables of `captured`) reconciled with `requests`, and the tables captured
    /// now joined at `scn` (a request for them when `snapshot`); the transitions.
    pub(super) fn open_incremental(
        &mut self,
        captured: Vec<String>,
        requests: &[SnapshotRequest],
        now: Timestamp,
        scn: u64,
        snapshot: bool,
    ) -> Vec<Transition> {
        let state = (self.bookmark.incremental)
            .get_or_insert_with(|| IncrementalState::new(captured.iter().cloned()));
        let mut transitions = state.reconcile(requests, now);
        transitions.extend(state.tables_joined(captured, scn, snapshot));
        transitions
    }

    /// The incremental snapshot state the bookmark carries changed by `change`, when there is
    /// one, with what `change` reports. The callers below name each step; the caller of a step
    /// commits the bookmark or marks it changed ([`Self::bookmark_changed`]).
    fn change_incremental<T>(
        &mut self,
        change: impl FnOnce(&mut IncrementalState) -> T,
    ) -> Option<T> {
        self.bookmark.incremental.as_mut().map(change)
    }

    /// The incremental snapshot requests brought in line with `requests` (`snapshot.requests`
    /// as the config file now lists them): the transitions, none without an incremental state.
    pub(super) fn reconcile_requests(
        &mut self,
        requests: &[SnapshotRequest],
        now: Timestamp,
    ) -> Vec<Transition> {
        self.change_incremental(|state| state.reconcile(requests, now))
            .unwrap_or_default()
    }

    /// Tables that joined the capture (`captured` now, at `scn`): the request for them, when
    /// `snapshot` asks for one (`snapshot.tablesAdded: snapshot`).
    pub(super) fn incremental_tables_joined(
        &mut self,
        captured: Vec<String>,
        scn: u64,
        snapshot: bool,
    ) -> Option<Transition> {
        self.change_incremental(|state| state.tables_joined(captured, scn, snapshot))
            .flatten()
    }

    /// Plans the chunks of `chunk`'s table as `ranges`: the transitions, and the range of the
    /// table's first chunk (`None` for a table without one, done). `None` without a state.
    pub(super) fn plan_chunks(
        &mut self,
        chunk: &NextChunk,
        ranges: Vec<RowRange>,
        now: Timestamp,
    ) -> Option<(Vec<Transition>, Option<RowRange>)> {
        self.change_incremental(|state| {
            let transitions = state.plan(chunk, ranges, now);
            let first = state.next_chunk().and_then(|next| next.range);
            (transitions, first)
        })
    }

    /// The chunk `read` was read with `rows` rows at `now`.
    pub(super) fn record_chunk(
        &mut self,
        read: &NextChunk,
        rows: u64,
        now: Timestamp,
    ) -> Vec<Transition> {
        self.change_incremental(|state| state.record_chunk(read, rows, now))
            .unwrap_or_default()
    }

    /// Request `id` ends as failed with `message`.
    pub(super) fn fail_request(
        &mut self,
        id: &str,
        message: String,
        now: Timestamp,
    ) -> Option<Transition> {
        self.change_incremental(|state| state.fail(id, message, now))
            .flatten()
    }

    /// The bookmark changed (snapshot progress): the next page commits even without records.
    pub(super) fn bookmark_changed(&mut self) {
        self.bookmark_moved = true;
    }

    /// Commits the bookmark's change now, with whatever the page holds.
    pub(super) fn commit_bookmark(&mut self) -> Result<(), CaptureError> {
        self.bookmark_moved = true;
        self.commit_page()
    }

    /// Commits the initial snapshot's progress `state` with the bookmark, and the batch read
    /// into the page with it.
    pub(super) fn commit_snapshot(&mut self, state: SnapshotState) -> Result<(), CaptureError> {
        self.bookmark.snapshot = Some(state);
        Ok(self.sink.commit(&self.bookmark)?)
    }

    /// A snapshot's read event (initial or incremental): encoded and appended to the page. The
    /// filters chose its table and columns already; no user or SCN applies to a read.
    pub(super) fn write_read_event(
        &mut self,
        event: &ChangeEvent,
        processed_at: Timestamp,
    ) -> Result<(), CaptureError> {
        self.metrics.event(&event.op, &event.table);
        let records = self.encoder.encode(event, processed_at)?;
        self.sink.append(records)?;
        Ok(())
    }

    /// One mined row; `Break` ends the window (a failure, a DDL to reload, or a stop request).
    pub(super) fn push_row(&mut self, row: LogMinerRow) -> ControlFlow<()> {
        match self.try_push_row(row) {
            Ok(flow) => flow,
            Err(error) => {
                self.failure = Some(error);
                ControlFlow::Break(())
            }
        }
    }

    pub(super) fn try_push_row(
        &mut self,
        row: LogMinerRow,
    ) -> Result<ControlFlow<()>, CaptureError> {
        if row.scn != self.latest_scn {
            self.latest_scn = row.scn;
            self.latest_rows.clear();
        }
        let identity = RowIdentity::of(&row);
        let already_given = match &mut self.replayed {
            Some((scn, seen)) if row.scn == *scn => match seen.get_mut(&identity) {
                Some(left) if *left > 0 => {
                    *left -= 1;
                    true
                }
                _ => false,
            },
            Some((scn, _)) if row.scn > *scn => {
                self.replayed = None;
                false
            }
            _ => false,
        };
        // A replayed row still joins the rows given at this SCN: a second cut at the same SCN
        // must recognise it again.
        *self.latest_rows.entry(identity).or_insert(0) += 1;
        if already_given {
            return Ok(ControlFlow::Continue(()));
        }
        if row.operation == OperationCode::MissingScn {
            return Err(missing_redo_stop(&row).into());
        }
        let Some(row) = self.joiner.push(row) else {
            return Ok(ControlFlow::Continue(()));
        };
        self.mined_frontier = self.mined_frontier.max(row.scn);
        if !matches!(
            row.operation,
            OperationCode::Start | OperationCode::Commit | OperationCode::Rollback
        ) {
            self.window_yield.changes += 1;
        }
        let chunks = self.journaling.observe(&self.buffer, &row)?;
        self.sink.push_records(chunks)?;
        match self.buffer.push(row, Timestamp::now())? {
            Pushed::Committed(transaction) => {
                if transaction.summary().events > 0 {
                    self.window_yield.emitted += 1;
                }
                self.emit(*transaction)?;
                if self.tables.has_stale() {
                    self.ddl_commit_scn = Some(self.latest_scn);
                    return Ok(ControlFlow::Break(()));
                }
            }
            Pushed::RolledBack => self.metrics.transaction_rolled_back(),
            Pushed::Buffered | Pushed::Ignored => {}
        }
        // The time bound also holds while the window streams rows of transactions still open.
        if !self.tables.has_stale() && self.page_policy.overdue(self.page_started, Instant::now()) {
            self.commit_page()?;
        }
        if self.stop.load(Ordering::Relaxed) {
            self.stopped_at_scn = Some(self.latest_scn);
            return Ok(ControlFlow::Break(()));
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Where a window whose fetch failed part-way (an online log overwritten under it,
    /// ORA-00310) is mined again, given that mining it began at `from_scn`. Rows come in SCN
    /// order, so every row below the SCN of the last row given is in the buffer already: mining
    /// resumes at that SCN, and the rows of it already given are recognised and not given
    /// twice, as after a window cut at a DDL. With no row given since `from_scn`, the window is
    /// mined again from there, keeping what an earlier cut left to recognise.
    ///
    /// The rows given at that SCN are the ones this fetch met there plus, when this fetch was
    /// itself a second try at the SCN, those of the earlier fetch it had not met again yet. The
    /// count starts afresh for the next fetch, which meets every row of the SCN again: carried
    /// over, a row met in both fetches would count twice, and a later piece of the same
    /// identity be skipped as if given.
    pub(super) fn resume_after_failed_fetch(&mut self, from_scn: u64) -> u64 {
        if self.latest_scn < from_scn || self.latest_rows.is_empty() {
            return from_scn;
        }
        let mut given = std::mem::take(&mut self.latest_rows);
        if let Some((scn, not_met)) = self.replayed.take()
            && scn == self.latest_scn
        {
            for (identity, count) in not_met {
                *given.entry(identity).or_insert(0) += count;
            }
        }
        self.replayed = Some((self.latest_scn, given));
        self.latest_scn
    }

    /// The failure that ended the window, if one did (the row callback cannot return it).
    pub(super) fn take_failure(&mut self) -> Option<CaptureError> {
        self.failure.take()
    }

    /// After a window's rows: the DDL's structures and schema change events join its page, the
    /// page commits, and the SCN the next window starts at. A window cut short (a DDL to reload,
    /// or a stop request) resumes at the SCN of its last row: rows of that SCN already given to
    /// the buffer are recognised and not given twice, and nothing above it counts as mined (the
    /// orphan check and the heartbeat's idle bookmark read the next SCN). Only a window
    /// streamed to its end moves past `end_scn`.
    pub(super) fn end_window<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
        end_scn: u64,
    ) -> Result<u64, CaptureError> {
        // Schema history hook: the DDL's structures and schema change events join its page.
        if let Some(ddl_scn) = self.ddl_commit_scn {
            self.after_ddl(source, ddl_scn)?;
        }
        self.commit_page()?;
        let cut_at = self.ddl_commit_scn.take().or(self.stopped_at_scn.take());
        Ok(match cut_at {
            Some(scn) => {
                self.replayed = Some((scn, std::mem::take(&mut self.latest_rows)));
                scn
            }
            None => end_scn + 1,
        })
    }

    /// Whether the buffer's orphan check is due; it needs the database's lists of open
    /// transactions and sessions, which the caller reads.
    pub(super) fn orphan_check_due(&self, now: Timestamp) -> bool {
        self.buffer.orphan_check_due(now)
    }

    /// Releases the open transactions the database no longer knows (`buffer::orphan`), each
    /// release published as an ops event.
    pub(super) fn release_orphans(&mut self, check: OrphanCheck<'_>) -> Result<(), CaptureError> {
        for event in self.buffer.check_orphans(check)? {
            let json = serde_json::to_string(&event).unwrap_or_default();
            tracing::warn!(event = %json, "transaction-orphan-released");
            self.sink.publish_dropped(&event, json, None)?;
        }
        Ok(())
    }

    /// Between windows: transactions over their maximum age discarded (ops event and DLQ
    /// record), long transactions' journal written, and what that added committed.
    pub(super) fn after_window(&mut self, now: Timestamp) -> Result<(), CaptureError> {
        for discarded in self.buffer.enforce_max_age(now)? {
            let event = serde_json::to_string(&discarded.ops_event).unwrap_or_default();
            let dlq = serde_json::to_string(&discarded.dlq_record).unwrap_or_default();
            tracing::warn!(event = %event, dlq = %dlq, "transaction-discarded");
            self.sink
                .publish_dropped(&discarded.ops_event, event, Some(dlq))?;
        }
        let sink = &mut self.sink;
        let tombstones = self
            .journaling
            .after_window(&mut self.buffer, now, &mut |chunks| {
                Ok(sink.push_records(chunks)?)
            })?;
        self.sink.push_tombstones(tombstones);
        // What this added is in an open page (with Kafka, an open Kafka transaction): closed now
        // rather than left open across the next window or a stop.
        if self.sink.has_loose_records() {
            self.commit_page()?;
        }
        Ok(())
    }

    /// Whether a heartbeat now would move the bookmark to `mined_through`: only with no
    /// transaction open, and only forward.
    pub(super) fn heartbeat_moves_bookmark(&self, mined_through: u64) -> bool {
        self.buffer.open_transactions() == 0 && mined_through > self.bookmark.commit_scn
    }

    /// A committed transaction: skipped when the bookmark covers it, else assembled, encoded and
    /// written to the page.
    pub(super) fn emit(
        &mut self,
        mut transaction: CommittedTransaction,
    ) -> Result<(), CaptureError> {
        let began = Instant::now();
        let commit = transaction.commit_row().clone();
        // A journaled transaction's chunks go with the page that makes it visible (or, emitted
        // before a crash, with the next page).
        let tombstones = self.journaling.ended(&transaction.key());
        self.sink.push_tombstones(tombstones);
        if self.bookmark.already_emitted(commit.scn, &commit.xid) {
            for row in transaction.by_ref() {
                row?;
            }
            let receipt = transaction.finish()?;
            self.buffer.release(receipt)?;
            return Ok(());
        }
        let commit_info = CommitInfo {
            xid: commit.xid,
            commit_scn: commit.scn,
            commit_time: commit
                .timestamp
                .and_then(|time| time.to_zoned(self.time_zone.clone()).ok())
                .map(|zoned| zoned.timestamp()),
        };
        let committed_at = commit_info.commit_time;
        self.tables.at_commit(commit.scn);
        let mut assembler = TransactionAssembler::new(
            &mut self.tables,
            commit_info,
            self.config.mining.on_unsupported,
            self.time_zone.clone(),
        );
        let now = Timestamp::now();
        let mut writer = EventWriter {
            filters: &self.filters,
            // A table the snapshot re-read at a later SCN (after ORA-01555) already holds its
            // changes committed up to that SCN (engine/snapshot.rs).
            snapshot_covered: self
                .bookmark
                .snapshot
                .as_ref()
                .filter(|snapshot| snapshot.covers_any(commit.scn)),
            commit_scn: commit.scn,
            encoder: &mut self.encoder,
            sink: &mut self.sink,
            metrics: &self.metrics,
            ddl_events: &mut self.ddl_events,
            now,
            written: 0,
            failure: None,
        };
        let mut write = |event: ChangeEvent| writer.write(event);
        for row in transaction.by_ref() {
            let row = row?;
            assembler.push(row, &mut write)?;
        }
        let stats = assembler.finish(&mut write)?;
        let mut written = writer.finish()?;
        if let Some(end) = self.encoder.end_transaction(committed_at.unwrap_or(now))? {
            written += self.sink.append(vec![end])?;
        }
        for _ in 0..stats.skipped {
            self.metrics.skipped(SkipReason::Unsupported);
        }
        let receipt = transaction.finish()?;
        self.pending.push(receipt);
        self.page_records += written;
        if written > 0 {
            self.page_started.get_or_insert(began);
        }
        self.metrics.transaction_committed();
        self.bookmark.record_commit(commit.scn, commit.xid)?;
        if let Some(time) = committed_at {
            self.last_commit_time = Some((commit.scn, time));
            self.bookmark.reached_time(time);
        }
        // A transaction that wrote nothing (one that touched no captured table, such as the flush
        // write) moves the bookmark with the next page instead of costing a page of its own. A
        // DDL's page waits for its schema change records (`after_ddl`).
        let fill = PageFill {
            records: self.page_records,
            bytes: self.sink.page_bytes(),
            age: self.page_started.map(|started| started.elapsed()),
        };
        if !self.tables.has_stale() && self.page_policy.due(written, fill) {
            self.commit_page()?;
        }
        Ok(())
    }

    /// After a DDL transaction committed at `ddl_scn`: the changed tables' new structures (from
    /// the history, or read from the catalog and recorded), and a schema change event per DDL
    /// event, in the DDL transaction's page.
    pub(super) fn after_ddl<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
        ddl_scn: u64,
    ) -> Result<(), CaptureError> {
        let events = std::mem::take(&mut self.ddl_events);
        let statement = |owner: &str, table: &str| {
            events.iter().find_map(|event| match &event.op {
                Operation::Ddl { sql }
                    if event.table.schema() == owner && event.table.table() == table =>
                {
                    Some(sql.clone())
                }
                _ => None,
            })
        };
        let (reloaded, recorded) = self.tables.reload_stale(source, ddl_scn, statement)?;
        self.record_versions(&recorded)?;
        let now = Timestamp::now();
        for event in &events {
            let Operation::Ddl { sql } = &event.op else {
                continue;
            };
            let Some(reload) = reloaded.iter().find(|reload| {
                reload.table.schema() == event.table.schema()
                    && (reload.renamed_from.as_deref()).unwrap_or(reload.table.table())
                        == event.table.table()
            }) else {
                continue;
            };
            let kind = if reload.dropped {
                ChangeKind::Drop
            } else {
                ChangeKind::of_ddl(sql)
            };
            let change = TableChange::new(kind, &self.database_name, &reload.table);
            if let Some(record) = self.encoder.schema_change(event, &change, now)? {
                self.page_records += self.sink.append(vec![record])?;
            }
        }
        Ok(())
    }

    /// A heartbeat record and, with no transaction open, the bookmark moved to `mined_through`
    /// (every row up to it was given to the buffer) and to its database time `mined_time` when
    /// known, committed as a page.
    pub(super) fn heartbeat(
        &mut self,
        mined_through: u64,
        mined_time: Option<Timestamp>,
        now: Timestamp,
    ) -> Result<(), CaptureError> {
        let record = self
            .encoder
            .heartbeat(&self.heartbeat_topic, &self.topic_prefix, now)?;
        self.sink.push_heartbeat(record)?;
        if self.buffer.open_transactions() == 0 {
            self.bookmark.pass_idle(mined_through, mined_time);
            self.mined_frontier = self.mined_frontier.max(mined_through);
        }
        self.bookmark_moved = true;
        self.commit_page()
    }

    /// Writes new table structures to the schema history (Kafka: into the page).
    pub(super) fn record_versions(&mut self, versions: &[NewVersion]) -> Result<(), CaptureError> {
        let now = Timestamp::now();
        for version in versions {
            let (key, value) = version.encode(&self.topic_prefix, &self.database_name, now);
            self.sink.record_history(key, value)?;
            self.metrics.schema_history.change_applied(now);
        }
        Ok(())
    }

    /// Commits the page (data, then bookmark) and only then deletes its spill files.
    pub(super) fn commit_page(&mut self) -> Result<(), CaptureError> {
        if self.pending.is_empty() && !self.sink.has_loose_records() && !self.bookmark_moved {
            return Ok(());
        }
        self.bookmark_moved = false;
        // Open transactions pin the resume position (journaled ones at their journal's end);
        // with none open, a page of transactions moves it to the last commit, and a page of
        // journal records alone leaves it.
        let pin = self
            .journaling
            .restart_scn(&self.buffer, self.mined_frontier);
        self.bookmark.move_restart(pin, !self.pending.is_empty());
        // Orphan releases and discards change the ledger between commits; their ops events are
        // in this page, so its bookmark must list them.
        self.bookmark.released = self.buffer.ledger().clone();
        self.sink.commit(&self.bookmark)?;
        self.metrics
            .commit_scn
            .set(to_gauge(self.bookmark.commit_scn));
        self.metrics
            .restart_scn
            .set(to_gauge(self.bookmark.restart_scn));
        for receipt in self.pending.drain(..) {
            self.buffer.release(receipt)?;
        }
        self.publish_status(Timestamp::now());
        self.page_records = 0;
        self.page_started = None;
        Ok(())
    }

    /// The oldest open transaction, for `/status`.
    fn oldest_transaction(&self) -> Option<OldestTransaction> {
        let (key, first_scn) = self
            .buffer
            .open_first_scns()
            .min_by_key(|(_, first_scn)| *first_scn)?;
        Some(OldestTransaction {
            xid: key.xid.to_string(),
            first_scn,
            opened_at: self
                .buffer
                .open_transaction(&key)
                .map(|(opened_at, _)| Time(opened_at)),
        })
    }

    /// Position and buffer figures for `/status`: after every window and every page, so a long
    /// window full of pages still shows progress.
    pub(super) fn publish_status(&self, now: Timestamp) {
        self.board.update(now, |report| {
            report.commit_scn = Some(self.bookmark.commit_scn);
            report.commit_time = self.bookmark.commit_time.map(Time);
            report.restart_scn = Some(self.bookmark.restart_scn);
            report.open_transactions = self.buffer.open_transactions() as u64;
            report.buffered_events = self.buffer.buffered_events();
            report.heap_bytes = self.buffer.heap_bytes();
            report.spilled_transactions = self.buffer.spilled_transactions();
            report.spilled_bytes = self.buffer.spilled_bytes();
            report.journaled_transactions = self.journaling.journaled() as u64;
            report.oldest_transaction = self.oldest_transaction();
        });
    }
}

/// Writes the events of one committed transaction as the assembler gives them: filter (the
/// change stage of `crate::filter`), then encode, then append to the page. The first failure is kept and later events are dropped, as
/// the assembler's callback cannot return it.
struct EventWriter<'p> {
    filters: &'p Filters,
    /// The snapshot state when it covers some table at this commit, else `None`.
    snapshot_covered: Option<&'p SnapshotState>,
    commit_scn: u64,
    encoder: &'p mut RecordEncoder,
    sink: &'p mut Output,
    metrics: &'p EngineMetrics,
    /// The transaction's DDL events, for `Pipeline::after_ddl`.
    ddl_events: &'p mut Vec<ChangeEvent>,
    /// The processing time the records carry.
    now: Timestamp,
    /// Records appended to the page.
    written: u64,
    failure: Option<CaptureError>,
}

impl EventWriter<'_> {
    fn write(&mut self, event: ChangeEvent) {
        if self.failure.is_some() {
            return;
        }
        // Whoever ran it, a DDL changes the structure: its schema change event and history
        // record are written even when the username lists leave its own event out.
        if matches!(event.op, Operation::Ddl { .. }) {
            self.ddl_events.push(event.clone());
        }
        let covered = || {
            self.snapshot_covered.is_some_and(|snapshot| {
                snapshot.covers(&event.table.qualified_name(), self.commit_scn)
            })
        };
        if (self.filters)
            .withheld(event.source.user_name.as_deref(), covered)
            .is_some()
        {
            return;
        }
        self.metrics.event(&event.op, &event.table);
        let appended = self
            .encoder
            .encode(&event, self.now)
            .map_err(CaptureError::from)
            .and_then(|records| Ok(self.sink.append(records)?));
        match appended {
            Ok(count) => self.written += count,
            Err(error) => self.failure = Some(error),
        }
    }

    /// The records appended, or the first failure.
    fn finish(self) -> Result<u64, CaptureError> {
        match self.failure {
            Some(failure) => Err(failure),
            None => Ok(self.written),
        }
    }
}

/// CDC-2001 for a MISSING_SCN row, with the range and thread in its details, as the gap found
/// while planning the logs has them (`SourceError::RedoMissing`).
fn missing_redo_stop(row: &LogMinerRow) -> Stop {
    let stop = Stop::new(
        StopCode::RedoMissing,
        format!(
            "LogMiner reports missing redo on thread {} ({}); restore the archived logs or take a \
             new snapshot",
            row.thread,
            row.info.as_deref().unwrap_or("no detail")
        ),
    )
    .with_detail("thread", row.thread);
    match row.info.as_deref().and_then(missing_scn_range) {
        Some((from_scn, to_scn)) => stop
            .with_detail("fromScn", from_scn.to_string())
            .with_detail("toScn", to_scn.to_string()),
        None => stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_scn_row_stops_with_its_range_in_the_details() {
        let row = LogMinerRow {
            operation: OperationCode::MissingScn,
            thread: 2,
            info: Some("Missing SCN 100 - 200".into()),
            ..LogMinerRow::default()
        };
        let stop = missing_redo_stop(&row);
        assert_eq!(stop.code, StopCode::RedoMissing);
        assert_eq!(stop.details["fromScn"], "100");
        assert_eq!(stop.details["toScn"], "200");
        assert_eq!(stop.details["thread"], 2);
    }
}
