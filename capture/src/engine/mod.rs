//! The capture loop: the one place that joins the boundary, the buffer, the assembler, the
//! encoder and the sink.
//!
//! ```text
//! start:  bookmark (or the start position) → incarnation check → restart SCN
//!         → snapshot.mode: the initial snapshot first, in batches (engine/snapshot.rs)
//! loop:   current SCN → flush → plan window (size, current SCN, redo written per thread)
//!         → logs → START_LOGMNR
//!         → rows: CSF join → buffer (heap, spill) → COMMIT: skip if already emitted, else
//!           assemble → encode → sink page → bookmark (commit SCN, restart SCN) → release spill
//!         → END_LOGMNR → orphan check, max age (ops events, dead letters), lag, status
//! ```
//!
//! The sink is an [`output::Output`]: the file sink or the Kafka sink, driven the same way
//! (records per event, a page per transaction or aggregated by `mining.batchSize`, the bookmark
//! last, spill files released only once the page is committed). With Kafka, the ops events and
//! dead letters of dropped transactions ride in the next page, with the bookmark whose released
//! ledger lists them, so both become visible together.
//!
//! Rules kept here:
//! - A transaction reaches the sink once: a COMMIT the bookmark already covers (resume rule) is
//!   read out of the buffer and dropped.
//! - The bookmark's restart SCN never passes the first SCN of a transaction still open, so a
//!   restart mines every open transaction from its beginning; a journaled one (Kafka,
//!   [`journaling`]) pins it at its last journaled row instead, and a restart rebuilds its
//!   beginning from the journal. It never passes the SCN mining has reached either.
//! - A DDL on a captured table ends the window right after its transaction: the table's new
//!   structure is taken from the schema history or read from the catalog (then recorded), its
//!   schema change event and history record join the DDL transaction's page, and mining goes on
//!   from the DDL's commit SCN. Rows at that SCN that were already given to the buffer are
//!   recognised and not given twice.
//! - A transaction is typed with the table structures in force at its commit SCN (the schema
//!   history, [`dictionary`]); a first start records every captured table's structure.
//! - Every typed stop ends the run with the stop (the caller writes the termination message).
//! - Connector options (issue 8) hook in at three marked places: the captured tables (`tables` plus
//!   what the schema and table lists select, listed again between windows by
//!   [`dictionary::TableListing`]), the username lists (events of other users are not encoded;
//!   their transactions still move the bookmark), and the END record of transaction metadata
//!   appended after a transaction's events, in its page.

pub mod dictionary;
pub mod journaling;
pub mod output;
mod snapshot;

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::{StartPosition, StartPositionType};

use self::dictionary::{CapturedTables, TableListing};
use self::journaling::Journaling;
use self::output::{Output, RecordEncoder};
use self::snapshot::SnapshotPhase;
use crate::assemble::csf::ContinuationJoiner;
use crate::assemble::{CommitInfo, TransactionAssembler};
use crate::buffer::{CommittedTransaction, OrphanCheck, Pushed, ReleaseReceipt, TransactionBuffer};
use crate::config::{CaptureConfig, ConfigError};
use crate::error::CaptureError;
use crate::event::{ChangeEvent, Operation, Xid};
use crate::filter::Filters;
use crate::heartbeat::{HeartbeatClock, heartbeat_record, heartbeat_topic};
use crate::http::{CaptureState, StatusBoard};
use crate::lag::LagTracker;
use crate::metrics::{EngineMetrics, SkipReason};
use crate::schema_history::{ChangeKind, NewVersion, SchemaHistory, TableChange};
use crate::sink::journal::{Journal, RebuiltTransaction};
use crate::sink::{Bookmark, PageFill, PagePolicy};
use crate::source::window::{Plan, WindowPlanner};
use crate::source::{
    DatabaseCatalog, LogMinerRow, MiningWindow, OpenTransaction, OperationCode, OracleSource,
    SourceError, missing_scn_range,
};
use crate::stop::Stop;

/// Why the run ended without a stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Asked to stop (SIGTERM).
    Stopped,
    /// `--exit-at-end`: everything committed when the run began is emitted.
    ReachedEnd,
}

/// The PDB's incarnation SCN for the bookmark's check; `None` (the check skipped, with a
/// warning, as seed 001 says) when the capture user may not read V$PDB_INCARNATION, and
/// [`SourceError::NoSuchPdb`] when the view is readable and does not know the PDB.
fn readable_pdb_incarnation<S: DatabaseCatalog>(
    source: &mut S,
    pdb: &str,
) -> Result<Option<u64>, SourceError> {
    match source.pdb_incarnation(pdb) {
        Ok(Some(incarnation)) => Ok(Some(incarnation.incarnation_scn)),
        // Readable, and no such PDB: a misspelt name would otherwise mine nothing, silently.
        Ok(None) => Err(SourceError::NoSuchPdb {
            pdb: pdb.to_owned(),
            known: "V$PDB_INCARNATION has no current incarnation of it".to_owned(),
        }),
        Err(error) if error.is_not_granted() => {
            tracing::warn!(
                pdb,
                %error,
                "V$PDB_INCARNATION cannot be read: the bookmark is not checked against the PDB's \
                 incarnation, so a flashback or point-in-time recovery of the PDB would go \
                 unnoticed; grant SELECT ON V_$PDB_INCARNATION to the capture user"
            );
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// Tries of a window whose listed logs LogMiner cannot use, and the pause after the first
/// (doubling: 0.2 + 0.4 + 0.8 + 1.6 s in all, time for the archiver to finish a log).
const LOG_RELIST_ATTEMPTS: u32 = 5;
const LOG_RELIST_FIRST_PAUSE: Duration = Duration::from_millis(200);

/// The `RedoMissing` for logs LogMiner still cannot use after the retries: the log it named, or
/// the thread whose listed logs begin latest (the one least likely to reach the start).
fn unusable_logs(window: &MiningWindow, log: Option<&crate::source::RedoLog>) -> SourceError {
    if let Some(log) = log {
        return SourceError::RedoMissing {
            thread: log.thread,
            from_scn: log.first_scn.max(window.start_scn),
            to_scn: log.next_scn.unwrap_or(window.end_scn).min(window.end_scn),
        };
    }
    let mut first_by_thread: BTreeMap<u16, u64> = BTreeMap::new();
    for log in &window.logs {
        let first = first_by_thread.entry(log.thread).or_insert(log.first_scn);
        *first = (*first).min(log.first_scn);
    }
    let thread = first_by_thread
        .iter()
        .max_by_key(|(_, first)| **first)
        .map_or(1, |(thread, _)| *thread);
    SourceError::RedoMissing {
        thread,
        from_scn: window.start_scn,
        to_scn: window.end_scn,
    }
}

/// How a run behaves beyond its config.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Stop with [`Finish::ReachedEnd`] once everything committed at start is emitted.
    pub exit_at_end: bool,
    /// The database's time zone (LogMiner's TIMESTAMP column is a DATE in it).
    pub time_zone: TimeZone,
    /// Set to stop after the current transaction.
    pub stop: Arc<AtomicBool>,
}

/// What a run writes to and reports through, built by the caller.
#[derive(Debug)]
pub struct Wiring {
    pub sink: Output,
    /// The journal as rebuilt at start (`Journal::off()` with the file sink), and the open
    /// transactions it rebuilt, pushed into the buffer before mining.
    pub journal: Journal,
    pub rebuilt: Vec<RebuiltTransaction>,
    /// The bookmark the sink holds from an earlier run.
    pub stored_bookmark: Option<serde_json::Value>,
    /// The schema history the sink holds (empty at a first start).
    pub schema_history: SchemaHistory,
    pub buffer: TransactionBuffer,
    pub metrics: EngineMetrics,
    pub board: StatusBoard,
}

/// Everything the row callback needs (the source is busy streaming while it runs).
struct Pipeline {
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
    time_zone: TimeZone,
    /// Receipts of transactions in the page not committed yet (their spill files stay).
    pending: Vec<ReleaseReceipt>,
    page_records: u64,
    /// When the first transaction with records joined the page (the time bound counts from it).
    page_started: Option<Instant>,
    /// Rows given to the buffer at the latest SCN, to recognise them when a window restarts at
    /// that SCN.
    latest_scn: u64,
    latest_rows: HashSet<RowIdentity>,
    /// After a restart at an SCN: the rows of that SCN already given.
    replayed: Option<(u64, HashSet<RowIdentity>)>,
    /// A DDL transaction committed at this SCN; the window ends here.
    ddl_commit_scn: Option<u64>,
    /// A stop request ended the window at this SCN (the latest row given to the buffer): rows at
    /// and above it may not have been mined yet.
    stopped_at_scn: Option<u64>,
    /// The DDL events of that transaction, waiting for their tables' new structure.
    ddl_events: Vec<ChangeEvent>,
    /// Names the schema history, schema change and heartbeat records carry.
    topic_prefix: String,
    heartbeat_topic: String,
    /// Commit the page even without records or transactions: its bookmark moved (heartbeat).
    bookmark_moved: bool,
    database_name: String,
    failure: Option<CaptureError>,
    stop: Arc<AtomicBool>,
}

/// What identifies a row within its SCN.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct RowIdentity {
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

/// The capture: a source, the pipeline, and the loop's own state.
pub struct Engine<S: OracleSource> {
    source: S,
    pipeline: Pipeline,
    board: StatusBoard,
    planner: WindowPlanner,
    lag: LagTracker,
    next_scn: u64,
    end_scn: Option<u64>,
    options: RunOptions,
    /// Lists the catalog again for the schema and table lists of `spec.filters`.
    table_listing: TableListing,
    /// Windows (idle polls included) and snapshot batches completed by this run: progress that
    /// resets the restart budget of transient source faults.
    windows_completed: u64,
    /// What the run does before streaming (engine/snapshot.rs).
    snapshot_phase: SnapshotPhase,
    heartbeat: HeartbeatClock,
}

impl<S: OracleSource> std::fmt::Debug for Engine<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("next_scn", &self.next_scn)
            .field("bookmark", &self.pipeline.bookmark)
            .finish_non_exhaustive()
    }
}

impl<S: OracleSource> Engine<S> {
    /// Prepares a run: reads the dictionary and the stored bookmark (or anchors a fresh one),
    /// checks the incarnation, and positions mining.
    pub fn start(
        config: CaptureConfig,
        mut source: S,
        wiring: Wiring,
        options: RunOptions,
    ) -> Result<Self, CaptureError> {
        let Wiring {
            sink,
            journal,
            rebuilt,
            stored_bookmark,
            schema_history,
            mut buffer,
            metrics,
            board,
        } = wiring;
        let database = source.database()?;
        let filters = Arc::new(
            Filters::new(&config.filters, &config.columns)
                .map_err(|error| ConfigError::new(error.field, error.problem).stop())?,
        );
        // The captured tables: spec.tables and what the schema and table lists select.
        let mut table_listing = TableListing::new(&filters, &config.mining.flush_table);
        // In spec order (the snapshot reads them in this order), then the listed ones.
        let mut table_names = config.table_names();
        for listed in table_listing.select(&mut source)? {
            if !table_names.contains(&listed) {
                table_names.push(listed);
            }
        }
        let pdb_incarnation = match &config.database.pdb {
            Some(pdb) => readable_pdb_incarnation(&mut source, pdb)?,
            None => None,
        };
        let resumed = stored_bookmark.is_some();
        let stored = match stored_bookmark {
            Some(value) => {
                let mut bookmark: Bookmark = serde_json::from_value(value).map_err(|error| {
                    Stop::new(
                        StopCode::BookmarkUnreadable,
                        format!("the stored bookmark cannot be read: {error}"),
                    )
                })?;
                bind_unrecorded_incarnation(&mut bookmark, database.resetlogs_scn, pdb_incarnation);
                if bookmark.resetlogs_scn != database.resetlogs_scn
                    || (pdb_incarnation.is_some()
                        && bookmark.pdb_incarnation_scn.is_some()
                        && bookmark.pdb_incarnation_scn != pdb_incarnation)
                {
                    return Err(Stop::new(
                        StopCode::IncarnationMismatch,
                        format!(
                            "the bookmark belongs to incarnation RESETLOGS SCN {} (PDB {:?}), the \
                             database is at RESETLOGS SCN {} (PDB {:?}); take a new snapshot and \
                             reset the bookmark",
                            bookmark.resetlogs_scn,
                            bookmark.pdb_incarnation_scn,
                            database.resetlogs_scn,
                            pdb_incarnation
                        ),
                    )
                    .into());
                }
                Some(bookmark)
            }
            None => None,
        };
        // Snapshot hook (engine/snapshot.rs): `snapshot.mode` and the stored bookmark decide
        // where the run starts and whether it snapshots first.
        let (mut bookmark, snapshot_phase) = Self::position(
            &config,
            &table_names,
            &mut source,
            stored,
            database.resetlogs_scn,
            pdb_incarnation,
        )?;
        let mut journaling = Journaling::new(journal);
        if let Some(generation) = journaling.generation() {
            bookmark.journal_generation = generation;
        }
        journaling.restore(&mut buffer, rebuilt, Timestamp::now())?;
        tracing::info!(
            commit_scn = bookmark.commit_scn,
            restart_scn = bookmark.restart_scn,
            "mining starts"
        );
        let next_scn = bookmark.restart_scn;
        // Schema history hook: the structures in force from the resume position.
        let (tables, first_versions) = CapturedTables::start(
            &mut source,
            &table_names,
            schema_history,
            bookmark.restart_scn,
            resumed,
        )?;
        let topic_prefix = config
            .kafka
            .as_ref()
            .map_or("redoline", |k| k.topic_prefix.as_str())
            .to_owned();
        let encoder = RecordEncoder::new(
            &config.format,
            &topic_prefix,
            &database.name,
            Arc::clone(&filters),
        );
        let end_scn = if options.exit_at_end {
            // Everything committed before the flush write: on RAC the flush reaches only the
            // connected instance, so its own SCN may lie above another thread's written redo.
            let end = source.current_scn()?;
            if !config.mining.read_only {
                source.flush_redo()?;
            }
            Some(end)
        } else {
            None
        };
        metrics.restart_scn.set(to_gauge(bookmark.restart_scn));
        let page_policy = match &config.kafka {
            Some(kafka) => PagePolicy::for_kafka(&kafka.transactions)?,
            None => PagePolicy::from_batch_size(config.mining.batch_size),
        };
        let mut pipeline = Pipeline {
            tables,
            buffer,
            sink,
            encoder,
            filters,
            page_policy,
            journaling,
            board: board.clone(),
            mined_frontier: bookmark.restart_scn,
            bookmark,
            joiner: ContinuationJoiner::default(),
            metrics,
            time_zone: options.time_zone.clone(),
            pending: Vec::new(),
            page_records: 0,
            page_started: None,
            latest_scn: 0,
            latest_rows: HashSet::new(),
            replayed: None,
            ddl_commit_scn: None,
            stopped_at_scn: None,
            ddl_events: Vec::new(),
            heartbeat_topic: heartbeat_topic(&config.heartbeat.topic_prefix, &topic_prefix),
            // A fresh position is stored before anything else happens (`run`): a restart must
            // resume from it, not anchor again at a later SCN and miss what came in between.
            bookmark_moved: !resumed,
            topic_prefix,
            database_name: database.name.clone(),
            failure: None,
            stop: Arc::clone(&options.stop),
            config,
        };
        pipeline.record_versions(&first_versions)?;
        let heartbeat =
            HeartbeatClock::new(pipeline.config.heartbeat.interval_seconds, Timestamp::now());
        Ok(Self {
            heartbeat,
            planner: WindowPlanner::new(pipeline.config.mining.max_scn_window),
            source,
            pipeline,
            board,
            lag: LagTracker::default(),
            next_scn,
            end_scn,
            options,
            table_listing,
            windows_completed: 0,
            snapshot_phase,
        })
    }

    /// The position of a capture with no bookmark (seed 001 start positions).
    fn anchor(
        start: &StartPosition,
        source: &mut S,
        resetlogs_scn: u64,
        pdb_incarnation: Option<u64>,
    ) -> Result<Bookmark, CaptureError> {
        let (anchor, restart) = match start.type_ {
            StartPositionType::Current => {
                // Transactions open now began earlier: mine from the oldest one's start so they
                // are captured whole.
                let before = source.current_scn()?;
                match source.open_transactions() {
                    Ok(open) => {
                        let position =
                            FreshPosition::from_reads(before, &open, source.current_scn()?);
                        warn_of_transactions_older_than_the_redo(source, &open)?;
                        (position.scn, position.restart_scn)
                    }
                    Err(error) => {
                        tracing::warn!(%error, "open transactions could not be read; transactions open now may be captured only from here");
                        (before, before)
                    }
                }
            }
            StartPositionType::Earliest => {
                let oldest = source
                    .redo_logs(0)?
                    .iter()
                    .map(|log| log.first_scn)
                    .min()
                    .ok_or(CaptureError::NoRedoLog)?;
                tracing::warn!(
                    oldest,
                    "starting at the oldest redo: transactions open before it are captured from there on"
                );
                (oldest.saturating_sub(1), oldest)
            }
            StartPositionType::Scn => {
                let scn = start.scn.unwrap_or(1);
                (scn.saturating_sub(1), scn)
            }
        };
        let mut bookmark =
            Bookmark::initial(anchor.saturating_add(1), resetlogs_scn, pdb_incarnation, 0);
        bookmark.restart_scn = restart.min(anchor.saturating_add(1));
        Ok(bookmark)
    }

    /// Runs until stopped, a typed stop, or (with `exit_at_end`) the end.
    pub fn run(&mut self) -> Result<Finish, CaptureError> {
        // Snapshot hook (engine/snapshot.rs): the snapshot first; `initial_only` ends there.
        let started = self
            .pipeline
            .commit_page()
            .and_then(|()| self.before_streaming());
        let result = match started {
            Ok(Some(finish)) => Ok(finish),
            Ok(None) => {
                self.board.update(Timestamp::now(), |report| {
                    report.state = CaptureState::Streaming;
                    report.snapshot = None;
                });
                // The position and the transactions rebuilt from the journal, before the
                // first window.
                self.pipeline.publish_status(Timestamp::now());
                self.mine_until_done()
            }
            Err(error) => Err(error),
        };
        if result.is_ok() {
            // The lag once more at stop, so the last figure reported is the final one.
            let now = Timestamp::now();
            if self.lag.due(now, true)
                && let Ok(current_scn) = self.source.current_scn()
            {
                self.poll_lag(now, current_scn);
            }
        }
        let lag = self.lag.lag_seconds();
        self.board.update(Timestamp::now(), |report| {
            report.state = CaptureState::Stopping;
            report.lag_seconds = lag;
        });
        if let Some(stop) = result.as_ref().err().and_then(CaptureError::stop) {
            self.pipeline.metrics.stopped(stop.code.code());
        }
        result
    }

    fn mine_until_done(&mut self) -> Result<Finish, CaptureError> {
        let poll = Duration::from_secs(self.pipeline.config.mining.poll_interval_seconds);
        loop {
            if self.options.stop.load(Ordering::Relaxed) {
                return Ok(Finish::Stopped);
            }
            if self.end_scn.is_some_and(|end| self.next_scn > end) {
                self.pipeline.commit_page()?;
                return Ok(Finish::ReachedEnd);
            }
            let now = Timestamp::now();
            self.board.beat(now);
            // The SCN first, then the flush: the flush commit makes LGWR write everything in
            // the log buffer, so all redo at or below an SCN read before it is on disk once it
            // returns. Redo other sessions make after the SCN read may still be in the buffer;
            // the planner keeps the window below what LGWR has written (`LAST_REDO_CHANGE#`,
            // read after the flush), which is also what makes `mining.readOnly` safe.
            let current = self.source.current_scn()?;
            if !self.pipeline.config.mining.read_only {
                self.source.flush_redo()?;
            }
            if self.table_listing.due() {
                let recorded = self.table_listing.refresh(
                    &mut self.source,
                    &mut self.pipeline.tables,
                    self.next_scn,
                )?;
                self.pipeline.record_versions(&recorded)?;
            }
            let threads = self.source.threads()?;
            let (plan, delay) = self.planner.plan(self.next_scn, current, &threads, now);
            if let Some(delay) = delay {
                tracing::warn!("{}", delay.message());
            }
            match plan {
                Plan::Idle => {
                    self.pipeline.commit_page()?;
                    self.after_window(current)?;
                    self.heartbeat_if_due()?;
                    std::thread::sleep(poll);
                }
                Plan::Mine { window, .. } => {
                    let end = match self.end_scn {
                        Some(end_scn) => window.end_scn.min(end_scn),
                        None => window.end_scn,
                    };
                    self.mine_window(window.start_scn, end)?;
                    if self.options.stop.load(Ordering::Relaxed) {
                        // The window's pages are committed; nothing else is due before exiting.
                        return Ok(Finish::Stopped);
                    }
                    self.after_window(current)?;
                    self.heartbeat_if_due()?;
                }
            }
            self.windows_completed += 1;
        }
    }

    fn mine_window(&mut self, start_scn: u64, end_scn: u64) -> Result<(), CaptureError> {
        let started = Instant::now();
        let metrics = &self.pipeline.metrics;
        metrics.window_start_scn.set(to_gauge(start_scn));
        metrics.window_end_scn.set(to_gauge(end_scn));
        self.start_mining_with_fresh_logs(start_scn, end_scn)?;
        let pipeline = &mut self.pipeline;
        let streamed = self.source.stream_rows(&mut |row| pipeline.push_row(row));
        let ended = self.source.end_mining();
        let fetched = streamed?;
        ended?;
        self.pipeline.metrics.rows_fetched.inc_by(fetched);
        if let Some(failure) = self.pipeline.failure.take() {
            return Err(failure);
        }
        // Schema history hook: the DDL's structures and schema change events join its page.
        if let Some(ddl_scn) = self.pipeline.ddl_commit_scn {
            self.pipeline.after_ddl(&mut self.source, ddl_scn)?;
        }
        self.pipeline.commit_page()?;
        // A window cut short (a DDL to reload, or a stop request) resumes at the SCN of its last
        // row: rows of that SCN already given to the buffer are recognised and not given twice,
        // and nothing above it counts as mined (the orphan check and the heartbeat's idle
        // bookmark read `next_scn`). Only a window streamed to its end moves past `end_scn`.
        let cut_at = self
            .pipeline
            .ddl_commit_scn
            .take()
            .or(self.pipeline.stopped_at_scn.take());
        self.next_scn = match cut_at {
            Some(scn) => {
                self.pipeline.replayed =
                    Some((scn, std::mem::take(&mut self.pipeline.latest_rows)));
                scn
            }
            None => end_scn + 1,
        };
        self.pipeline
            .metrics
            .window_duration
            .observe(started.elapsed().as_secs_f64());
        Ok(())
    }

    /// Lists the logs and starts LogMiner over the window. When LogMiner cannot use logs the
    /// listing named (a log archived, reused or deleted in between: ORA-01291 at START_LOGMNR,
    /// ORA-01284/00308 at ADD_LOGFILE), the window is tried again on a fresh listing, a few
    /// times with a growing pause, as Debezium's log collector does. A listing that shows a gap
    /// is `RedoMissing` at once, naming its thread; a failure that outlasts the retries is
    /// `RedoMissing` for the log LogMiner could not use, or, when it named none, for the thread
    /// whose listed logs begin latest.
    fn start_mining_with_fresh_logs(
        &mut self,
        start_scn: u64,
        end_scn: u64,
    ) -> Result<(), CaptureError> {
        let mut pause = LOG_RELIST_FIRST_PAUSE;
        for attempt in 1..=LOG_RELIST_ATTEMPTS {
            let logs = self.source.logs_covering(start_scn)?;
            let window = MiningWindow {
                start_scn,
                end_scn,
                logs: logs.logs,
                tables: self.pipeline.tables.names(),
                pdb: self.pipeline.config.database.pdb.clone(),
                // The capture never reads SQL_UNDO: undo rows carry their own SQL_REDO.
                with_sql_undo: false,
            };
            let (log, message) = match self.source.start_mining(&window) {
                Ok(()) => return Ok(()),
                Err(SourceError::LogsChanged { log, message }) => (log, message),
                Err(error) => return Err(error.into()),
            };
            if attempt == LOG_RELIST_ATTEMPTS {
                return Err(unusable_logs(&window, log.as_ref()).into());
            }
            tracing::warn!(
                attempt,
                start_scn,
                end_scn,
                %message,
                "LogMiner cannot use the listed logs; listing them again"
            );
            self.pipeline.metrics.retried("logs_changed");
            std::thread::sleep(pause);
            pause *= 2;
        }
        Ok(())
    }

    /// Between windows: orphans, maximum age, lag, and the status the operator reads.
    fn after_window(&mut self, current_scn: u64) -> Result<(), CaptureError> {
        let now = Timestamp::now();
        // First: the lag poll reads the database's clock, which transaction ages count from.
        if self.lag.due(now, false) {
            self.poll_lag(now, current_scn);
        }
        let buffer = &mut self.pipeline.buffer;
        if buffer.orphan_check_due(now) {
            let open = self.source.open_transactions()?;
            let sessions = self.source.sessions()?;
            // A transaction missing from the list was gone when the list was read: the SCN read
            // after the lists is one its end (if any) lies below. The SCN read before the window
            // is not: a transaction committing during the window would look released by mistake.
            let listed_at_scn = self.source.current_scn()?;
            let events = self.pipeline.buffer.check_orphans(OrphanCheck {
                now,
                current_scn: listed_at_scn,
                mined_through_scn: self.next_scn.saturating_sub(1),
                open_transactions: &open,
                sessions: &sessions,
            })?;
            for event in events {
                let json = serde_json::to_string(&event).unwrap_or_default();
                tracing::warn!(event = %json, "transaction-orphan-released");
                self.pipeline.sink.publish_dropped(&event, json, None)?;
            }
        }
        for discarded in self.pipeline.buffer.enforce_max_age(now)? {
            let event = serde_json::to_string(&discarded.ops_event).unwrap_or_default();
            let dlq = serde_json::to_string(&discarded.dlq_record).unwrap_or_default();
            tracing::warn!(event = %event, dlq = %dlq, "transaction-discarded");
            self.pipeline
                .sink
                .publish_dropped(&discarded.ops_event, event, Some(dlq))?;
        }
        let sink = &mut self.pipeline.sink;
        let tombstones = self.pipeline.journaling.after_window(
            &mut self.pipeline.buffer,
            now,
            &mut |chunks| sink.push_records(chunks),
        )?;
        self.pipeline.sink.push_tombstones(tombstones);
        // What this added is in an open page (with Kafka, an open Kafka transaction): closed now
        // rather than left open across the next window or a stop.
        if self.pipeline.sink.has_loose_records() {
            self.pipeline.commit_page()?;
        }
        let lag = self.lag.lag_seconds();
        self.board.update(now, |report| report.lag_seconds = lag);
        self.pipeline.publish_status(now);
        Ok(())
    }

    /// Heartbeat hook: at each interval, the action query, then a heartbeat record in a page
    /// whose bookmark moves to what mining has reached when no transaction is open.
    fn heartbeat_if_due(&mut self) -> Result<(), CaptureError> {
        let now = Timestamp::now();
        if !self.heartbeat.due(now) {
            return Ok(());
        }
        self.heartbeat.sent(now);
        if let Some(query) = &self.pipeline.config.heartbeat.action_query {
            self.source.heartbeat_action(query)?;
        }
        // Mining has given every row up to the SCN before `next_scn` to the buffer.
        self.pipeline
            .heartbeat(self.next_scn.saturating_sub(1), now)
    }

    /// Asks for the lag (seed 001: commit times of the current and the emitted SCN); a failure is
    /// logged once and leaves the lag unknown, never failing the run.
    fn poll_lag(&mut self, now: Timestamp, current_scn: u64) {
        let emitted = self.pipeline.bookmark.commit_scn;
        let times = self
            .source
            .scn_to_timestamp(current_scn)
            .and_then(|current| Ok((current, self.source.scn_to_timestamp(emitted)?)));
        match times {
            Ok((current, emitted)) => {
                if let Some(database_now) = current {
                    self.pipeline
                        .buffer
                        .observe_database_clock(now, database_now);
                }
                self.lag.record(now, current, emitted);
            }
            Err(error) => {
                if self.lag.record_failure(now) {
                    tracing::warn!(%error, "the lag query failed; lag is unknown until it works again");
                }
            }
        }
        self.pipeline.metrics.set_lag(self.lag.lag_seconds());
    }

    /// How many windows (idle polls included) and snapshot batches this run has completed.
    pub fn windows_completed(&self) -> u64 {
        self.windows_completed
    }

    /// The bookmark of the last committed page.
    pub fn bookmark(&self) -> &Bookmark {
        &self.pipeline.bookmark
    }
}

impl Pipeline {
    /// One mined row; `Break` ends the window (a failure, a DDL to reload, or a stop request).
    fn push_row(&mut self, row: LogMinerRow) -> ControlFlow<()> {
        match self.try_push_row(row) {
            Ok(flow) => flow,
            Err(error) => {
                self.failure = Some(error);
                ControlFlow::Break(())
            }
        }
    }

    fn try_push_row(&mut self, row: LogMinerRow) -> Result<ControlFlow<()>, CaptureError> {
        if row.scn != self.latest_scn {
            self.latest_scn = row.scn;
            self.latest_rows.clear();
        }
        let identity = RowIdentity::of(&row);
        let already_given = match &self.replayed {
            Some((scn, seen)) if row.scn == *scn => seen.contains(&identity),
            Some((scn, _)) if row.scn > *scn => {
                self.replayed = None;
                false
            }
            _ => false,
        };
        // A replayed row still joins the rows given at this SCN: a second cut at the same SCN
        // must recognise it again.
        self.latest_rows.insert(identity);
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
        let chunks = self.journaling.observe(&self.buffer, &row)?;
        self.sink.push_records(chunks)?;
        match self.buffer.push(row, Timestamp::now())? {
            Pushed::Committed(transaction) => {
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

    /// A committed transaction: skipped when the bookmark covers it, else assembled, encoded and
    /// written to the page.
    fn emit(&mut self, mut transaction: CommittedTransaction) -> Result<(), CaptureError> {
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
        let mut written = 0u64;
        let mut failure: Option<CaptureError> = None;
        let encoder = &mut self.encoder;
        let sink = &mut self.sink;
        let metrics = &self.metrics;
        // A table the snapshot re-read at a later SCN (after ORA-01555) already holds its
        // changes committed up to that SCN (engine/snapshot.rs).
        let snapshot_covered = self
            .bookmark
            .snapshot
            .as_ref()
            .filter(|snapshot| snapshot.covers_any(commit.scn));
        let filters = &self.filters;
        let ddl_events = &mut self.ddl_events;
        let mut write = |event: crate::event::ChangeEvent| {
            if failure.is_some() {
                return;
            }
            // Whoever ran it, a DDL changes the structure: its schema change event and history
            // record are written even when the username lists leave its own event out.
            if matches!(event.op, Operation::Ddl { .. }) {
                ddl_events.push(event.clone());
            }
            if !filters.admits_user(event.source.user_name.as_deref())
                || snapshot_covered.is_some_and(|snapshot| {
                    snapshot.covers(&event.table.qualified_name(), commit.scn)
                })
            {
                return;
            }
            metrics.event(&event.op, &event.table);
            let appended = encoder
                .encode(&event, now)
                .map_err(CaptureError::from)
                .and_then(|records| sink.append(encoder, records));
            match appended {
                Ok(count) => written += count,
                Err(error) => failure = Some(error),
            }
        };
        for row in transaction.by_ref() {
            let row = row?;
            assembler.push(row, &mut write)?;
        }
        let stats = assembler.finish(&mut write)?;
        if let Some(failure) = failure {
            return Err(failure);
        }
        if let Some(end) = self.encoder.end_transaction(committed_at.unwrap_or(now)) {
            written += self.sink.append(&self.encoder, vec![end])?;
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
    fn after_ddl<S: DatabaseCatalog>(
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
                    && reload.table.table() == event.table.table()
            }) else {
                continue;
            };
            let kind = if reload.dropped {
                ChangeKind::Drop
            } else {
                ChangeKind::of_ddl(sql)
            };
            let change = TableChange::new(kind, &self.database_name, &reload.table);
            if let Some(record) = self.encoder.schema_change(event, &change, now) {
                self.page_records += self.sink.append(&self.encoder, vec![record])?;
            }
        }
        Ok(())
    }

    /// A heartbeat record and, with no transaction open, the bookmark moved to `mined_through`
    /// (every row up to it was given to the buffer), committed as a page.
    fn heartbeat(&mut self, mined_through: u64, now: Timestamp) -> Result<(), CaptureError> {
        let record = heartbeat_record(
            &self.heartbeat_topic,
            &self.topic_prefix,
            self.encoder.schemas_enabled(),
            now,
        );
        self.sink.push_heartbeat(&self.encoder, record)?;
        if self.buffer.open_transactions() == 0 {
            self.bookmark.pass_idle(mined_through);
            self.mined_frontier = self.mined_frontier.max(mined_through);
        }
        self.bookmark_moved = true;
        self.commit_page()
    }

    /// Writes new table structures to the schema history (Kafka: into the page).
    fn record_versions(&mut self, versions: &[NewVersion]) -> Result<(), CaptureError> {
        let now = Timestamp::now();
        for version in versions {
            let (key, value) = version.encode(&self.topic_prefix, &self.database_name, now);
            self.sink.record_history(key, value)?;
        }
        Ok(())
    }

    /// Commits the page (data, then bookmark) and only then deletes its spill files.
    fn commit_page(&mut self) -> Result<(), CaptureError> {
        if self.pending.is_empty() && !self.sink.has_loose_records() && !self.bookmark_moved {
            return Ok(());
        }
        self.bookmark_moved = false;
        // Open transactions pin the resume position (journaled ones at their journal's end);
        // with none open, a page of transactions moves it to the last commit, and a page of
        // journal records alone leaves it.
        match self
            .journaling
            .restart_scn(&self.buffer, self.mined_frontier)
        {
            Some(pin) => self.bookmark.restart_scn = pin,
            None if !self.pending.is_empty() => {
                self.bookmark.restart_scn = self.bookmark.commit_scn;
            }
            None => {}
        }
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

    /// Position and buffer figures for `/status`: after every window and every page, so a long
    /// window full of pages still shows progress.
    fn publish_status(&self, now: Timestamp) {
        self.board.update(now, |report| {
            report.commit_scn = Some(self.bookmark.commit_scn);
            report.restart_scn = Some(self.bookmark.restart_scn);
            report.open_transactions = self.buffer.open_transactions() as u64;
            report.buffered_events = self.buffer.buffered_events();
            report.heap_bytes = self.buffer.heap_bytes();
            report.spilled_transactions = self.buffer.spilled_transactions();
            report.spilled_bytes = self.buffer.spilled_bytes();
            report.journaled_transactions = self.journaling.journaled() as u64;
        });
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

/// A bookmark written without the incarnation (`resetlogs_scn` 0, or no PDB incarnation while
/// mining a PDB) is bound to the current one, with a warning: a recovery before it was recorded
/// cannot be detected, so the operator is told to reset the bookmark if there was one.
fn bind_unrecorded_incarnation(
    bookmark: &mut Bookmark,
    resetlogs_scn: u64,
    pdb_incarnation: Option<u64>,
) {
    if bookmark.resetlogs_scn == 0 {
        tracing::warn!(
            resetlogs_scn,
            "the bookmark records no database incarnation: it is bound to the current one; reset \
             the bookmark if the database was recovered to a point in time since it was written"
        );
        bookmark.resetlogs_scn = resetlogs_scn;
    }
    if bookmark.pdb_incarnation_scn.is_none() && pdb_incarnation.is_some() {
        tracing::warn!(
            pdb_incarnation_scn = pdb_incarnation,
            "the bookmark records no PDB incarnation: it is bound to the current one; reset the \
             bookmark if the PDB was recovered or flashed back since it was written"
        );
        bookmark.pdb_incarnation_scn = pdb_incarnation;
    }
}

/// A position taken now (`startPosition: current`, a new snapshot): the SCN it stands at (commits
/// at or below it are before the position) and where mining must start so that every
/// transaction committing after it is mined from its first change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FreshPosition {
    scn: u64,
    restart_scn: u64,
}

impl FreshPosition {
    /// Reads the current SCN, the open transactions, and the current SCN again.
    fn read<S: DatabaseCatalog>(source: &mut S) -> Result<Self, SourceError> {
        let before = source.current_scn()?;
        let open = source.open_transactions()?;
        let after = source.current_scn()?;
        Ok(Self::from_reads(before, &open, after))
    }

    /// `GV$TRANSACTION` is not read consistently with `V$DATABASE.CURRENT_SCN` (a fixed view has
    /// no read consistency), so a transaction can commit between the two reads, missing from the
    /// list yet committing after an SCN read first. Standing at `after`, read once the list was
    /// complete, every transaction that commits later was open while the list was read: it is
    /// either listed (mining starts at its start) or began after the list was read, so above
    /// `before`, where mining starts at the latest.
    fn from_reads(before: u64, open: &[OpenTransaction], after: u64) -> Self {
        Self {
            scn: after.max(before),
            restart_scn: oldest_start(open).unwrap_or(before).min(before),
        }
    }
}

/// A transaction open at start that began before the oldest redo still listed cannot be
/// captured whole: mining must start at its start, whose logs are gone, so the first window
/// stops with RedoMissing. Say which transaction it is, since it is often one left open by a
/// forgotten session, which the DBA can end.
fn warn_of_transactions_older_than_the_redo<S: crate::source::RedoMiner>(
    source: &mut S,
    open: &[OpenTransaction],
) -> Result<(), SourceError> {
    let Some(oldest) = open
        .iter()
        .filter(|t| t.start_scn > 1)
        .min_by_key(|t| t.start_scn)
    else {
        return Ok(());
    };
    let oldest_redo = source.redo_logs(0)?.iter().map(|log| log.first_scn).min();
    if let Some(oldest_redo) = oldest_redo.filter(|&first| oldest.start_scn < first) {
        tracing::warn!(
            xid = %oldest.xid,
            instance = oldest.instance,
            start_scn = oldest.start_scn,
            oldest_redo_scn = oldest_redo,
            "a transaction open now began before the oldest redo still available, so it cannot \
             be captured whole and the capture stops (CDC-2001) at its first window; end that \
             transaction (often a forgotten session) or restore the archived logs from its start"
        );
    }
    Ok(())
}

/// The start SCN of the oldest of `open` transactions (a start SCN of 0 or 1 is unknown).
fn oldest_start(open: &[OpenTransaction]) -> Option<u64> {
    open.iter()
        .map(|t| t.start_scn)
        .filter(|&scn| scn > 1)
        .min()
}

fn to_gauge(scn: u64) -> i64 {
    i64::try_from(scn).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(start_scn: u64) -> OpenTransaction {
        OpenTransaction {
            xid: Xid::from_parts(1, 2, 3),
            instance: 1,
            start_scn,
            status: "ACTIVE".to_owned(),
            con_id: None,
        }
    }

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

    #[test]
    fn a_fresh_position_stands_after_the_list_and_mines_from_before_it() {
        // Nothing open: stand at the second read, mine from the first (a transaction may have
        // begun in between, after the list was read).
        assert_eq!(
            FreshPosition::from_reads(100, &[], 105),
            FreshPosition {
                scn: 105,
                restart_scn: 100
            }
        );
        // The oldest listed transaction's start; unknown start SCNs (0, 1) do not count.
        assert_eq!(
            FreshPosition::from_reads(100, &[open(1), open(40), open(70)], 105),
            FreshPosition {
                scn: 105,
                restart_scn: 40
            }
        );
    }

    #[test]
    fn an_unrecorded_incarnation_is_bound_to_the_current_one() {
        let mut bookmark = Bookmark::initial(10, 0, None, 0);
        bind_unrecorded_incarnation(&mut bookmark, 77, Some(5));
        assert_eq!(
            (bookmark.resetlogs_scn, bookmark.pdb_incarnation_scn),
            (77, Some(5))
        );
        let mut recorded = Bookmark::initial(10, 3, Some(4), 0);
        bind_unrecorded_incarnation(&mut recorded, 77, Some(5));
        assert_eq!(
            (recorded.resetlogs_scn, recorded.pdb_incarnation_scn),
            (3, Some(4)),
            "a recorded incarnation is kept, so the mismatch is caught"
        );
    }
}
