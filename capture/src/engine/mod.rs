//! The capture loop: the one place that joins the boundary, the buffer, the assembler, the
//! encoder and the sink.
//!
//! ```text
//! start (start.rs):  bookmark (or the start position) → incarnation check → restart SCN
//!         → snapshot.mode: the initial snapshot first, in batches (snapshot.rs)
//! loop (mining.rs):  current SCN → flush → plan window (size, current SCN, redo written per
//!         thread) → logs → START_LOGMNR → rows → END_LOGMNR → the next window's size (its
//!         duration, the session's PGA) → orphan check, max age (ops events, dead letters), lag,
//!         status
//! rows (pipeline.rs): CSF join → buffer (heap, spill) → COMMIT: skip if already emitted, else
//!         assemble → filter → encode → page → sink → bookmark (commit SCN, restart SCN)
//!         → release spill
//! ```
//!
//! The sink is an [`Output`]: the file sink or the Kafka sink, driven the same way
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
//!   history, [`captured_tables`]); a first start records every captured table's structure.
//! - Every typed stop ends the run with the stop (the caller writes the termination message).
//! - Connector options (issue 8) hook in at three marked places: the captured tables (`tables` plus
//!   what the schema and table lists select, listed again between windows by
//!   [`captured_tables::TableListing`]), the change filter of the pipeline's event writer (users
//!   the username lists leave out, changes a snapshot read already holds: not encoded, their
//!   transactions still move the bookmark), and the END record of transaction metadata appended
//!   after a transaction's events, in its page. Which change is not published, and why, is
//!   [`crate::filter`]'s one answer.

pub mod captured_tables;
pub mod idle;
mod incremental;
pub mod journaling;
mod mining;
mod pipeline;
mod reposition;
mod snapshot;
mod start;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use self::captured_tables::TableListing;
use self::idle::IdlePacer;
use self::pipeline::Pipeline;
use self::snapshot::SnapshotPhase;
use crate::buffer::TransactionBuffer;
use crate::heartbeat::HeartbeatClock;
use crate::http::StatusBoard;
use crate::lag::LagTracker;
use crate::live_config::LiveRequests;
use crate::metrics::EngineMetrics;
use crate::schema_history::SchemaHistory;
use crate::sink::Bookmark;
use crate::sink::Output;
use crate::sink::journal::{Journal, RebuiltTransaction};
use crate::source::OracleSource;
use crate::source::window::WindowPlanner;
use crate::source::window_size::WindowSizer;

/// Why the run ended without a stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Asked to stop (SIGTERM).
    Stopped,
    /// `--exit-at-end`: everything committed when the run began is emitted.
    ReachedEnd,
}

/// How a run behaves beyond its config.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Stop with [`Finish::ReachedEnd`] once everything committed at start is emitted.
    pub exit_at_end: bool,
    /// Set to stop after the current transaction.
    pub stop: Arc<AtomicBool>,
    /// The snapshot requests in force: the config's at start, replaced while running when the
    /// config file changes only them (`live_config`).
    pub requests: LiveRequests,
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
    /// The schema registry of the Avro encoding (`format.encoding: avro`); `None` otherwise.
    pub schema_registry: Option<Box<dyn crate::registry::SchemaRegistry>>,
}

/// The capture: a source, the pipeline, and the loop's own state.
pub struct Engine<S: OracleSource> {
    source: S,
    pipeline: Pipeline,
    board: StatusBoard,
    planner: WindowPlanner,
    /// The cap on the planner's windows, made smaller while windows cost too much.
    window_sizer: WindowSizer,
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
    /// The pause after a window that brought nothing.
    idle: IdlePacer,
    /// When the current mining session (LogMiner and the database session under it) began:
    /// it is recycled once older than `mining.sessionMaxSeconds`.
    mining_since: Option<std::time::Instant>,
    /// Whether reading the mining session's memory failed already (reported once).
    session_memory_failed: bool,
    /// The last listing of the redo logs, reused while no thread has switched logs since.
    log_listing: Option<LogListing>,
    /// The row estimates of the tables incremental snapshots read (`None`: no statistics),
    /// read once per table and run for the status.
    row_estimates: std::collections::BTreeMap<String, Option<u64>>,
    /// The generation of [`RunOptions::requests`] the incremental state was last reconciled
    /// with.
    requests_generation: u64,
}

/// The redo logs listed for windows from `from_scn` on, when the threads were at `sequences`
/// (`V$THREAD.SEQUENCE#` per thread). Until one of them moves (a log switch, which is also when
/// logs are archived) the same files hold every later window's redo, so a window asks for
/// `V$THREAD` once and lists the logs again only after a switch, as Debezium does (its loop
/// lists logs again only when `isLogSwitchPending`). A file deleted meanwhile (an archive purge)
/// fails at ADD_LOGFILE and sends the window to a fresh listing, as any listing gone stale.
///
/// The listing reaches back to the bookmark's restart SCN when that is older than the window
/// (an open transaction holds it back): the logs a restart needs, with their completion times,
/// come with it, for the hours of archived redo left ([`crate::source::archive_retention`]).
#[derive(Clone, Debug)]
struct LogListing {
    from_scn: u64,
    sequences: Vec<(u16, u32)>,
    logs: Vec<crate::source::RedoLog>,
    /// The threads as read with it, and when it was read (the logs' ages are as of then).
    threads: Vec<crate::source::RedoThread>,
    listed_at: std::time::Instant,
}

impl<S: OracleSource> std::fmt::Debug for Engine<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("next_scn", &self.next_scn)
            .field("bookmark", self.pipeline.bookmark())
            .finish_non_exhaustive()
    }
}

impl<S: OracleSource> Engine<S> {
    /// How many windows (idle polls included) and snapshot batches this run has completed.
    pub fn windows_completed(&self) -> u64 {
        self.windows_completed
    }

    /// The bookmark of the last committed page.
    pub fn bookmark(&self) -> &Bookmark {
        self.pipeline.bookmark()
    }
}

fn to_gauge(scn: u64) -> i64 {
    i64::try_from(scn).unwrap_or(i64::MAX)
}
