//! The capture's mining and emission metrics, served on `/metrics` by [`crate::http`].
//!
//! The buffer and the Kafka sink register their own families (`redoline_capture_buffer_...`,
//! `redoline_capture_kafka_...`) on the same [`prometheus::Registry`]; these are the engine's.
//! Every name carries the contract prefix `redoline_capture_`; [`ALL`] lists them for the tests
//! and the dashboard check.
//!
//! | name | type | labels |
//! |---|---|---|
//! | `redoline_capture_lag_seconds` | gauge | (absent until the lag is known; -1 when unknown) |
//! | `redoline_capture_commit_scn` / `redoline_capture_restart_scn` | gauge | |
//! | `redoline_capture_archived_redo_hours_left` | gauge | (hours before the oldest archived log a restart needs passes `mining.archiveRetentionHours`; -1 when unknown) |
//! | `redoline_capture_events_total` | counter | `op` (`c`,`u`,`d`,`r`,`ddl`,`truncate`), `table` |
//! | `redoline_capture_transactions_total` | counter | `outcome` = `committed` / `rolled_back` |
//! | `redoline_capture_skipped_changes_total` | counter | `reason` = `unsupported` / `dictionary_mismatch` / `partial_lob` |
//! | `redoline_capture_window_start_scn` / `redoline_capture_window_end_scn` | gauge | |
//! | `redoline_capture_window_duration_seconds` | histogram | |
//! | `redoline_capture_window_max_scns` | gauge | (the most SCNs the next window may cover: `mining.maxScnWindow`, less while windows are made smaller) |
//! | `redoline_capture_window_shrinks_total` | counter | `reason` = `duration` / `pga` / `out_of_memory` |
//! | `redoline_capture_window_grows_total` | counter | |
//! | `redoline_capture_logminer_session_pga_bytes` / `redoline_capture_logminer_session_pga_max_bytes` | gauge | (the mining session's `session pga memory` / `session pga memory max`; -1 until read) |
//! | `redoline_capture_logminer_sessions_recycled_total` | counter | `reason` = `age` / `memory` / `pga` |
//! | `redoline_capture_rows_fetched_total` | counter | |
//! | `redoline_capture_roundtrips_total` | counter | `call` |
//! | `redoline_capture_last_stop` | gauge | `code` (1 for the latest typed stop) |
//! | `redoline_capture_retries_total` | counter | `cause` = `database_unavailable` / `database_timeout` / `log_switched` / `logs_changed` / `session_memory` / `kafka_page_aborted` / `schema_registry_unavailable` |
//! | `redoline_capture_credentials_loaded_timestamp_seconds` | gauge | (when this process read the mounted credentials it follows, [`crate::rotation`]; -1 when none are followed) |
//! | `redoline_capture_config_file_invalid` | gauge | (1 while the config file on disk does not load and the run goes on with the config in force, [`crate::live_config`]) |
//! | `redoline_capture_snapshot_tables_total` / `redoline_capture_snapshot_tables_done` | gauge | |
//! | `redoline_capture_snapshot_rows_scanned` | gauge | (rows of the snapshot written, resumed runs included) |
//! | `redoline_capture_snapshot_rows_remaining_estimate` | gauge | (-1 when a table has no statistics) |
//! | `redoline_capture_schema_history_status` | gauge | `status` = `stopped` / `recovering` / `running` (1 for the current one) |
//! | `redoline_capture_schema_history_recovery_start_timestamp_seconds` | gauge | (-1 before the first recovery) |
//! | `redoline_capture_schema_history_changes_recovered_total` / `redoline_capture_schema_history_changes_applied_total` | counter | |
//! | `redoline_capture_schema_history_last_recovered_change_timestamp_seconds` / `redoline_capture_schema_history_last_applied_change_timestamp_seconds` | gauge | (-1 before the first) |
//!
//! Label values are bounded: operations, outcomes and reasons are fixed sets, `table` is one of
//! the captured tables (at most 1000), `call` one of the boundary's calls.

use prometheus::{
    Gauge, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry,
};

use std::sync::{Arc, Mutex, PoisonError};

use crate::dictionary::TableSchema;
use crate::event::Operation;
use crate::snapshot::SnapshotProgress;
use crate::source::SessionMemory;
use crate::source::window_size::{Breach, CapChange};

pub const LAG_SECONDS: &str = "redoline_capture_lag_seconds";
pub const COMMIT_SCN: &str = "redoline_capture_commit_scn";
pub const RESTART_SCN: &str = "redoline_capture_restart_scn";
pub const ARCHIVED_REDO_HOURS_LEFT: &str = "redoline_capture_archived_redo_hours_left";
pub const EVENTS_TOTAL: &str = "redoline_capture_events_total";
pub const TRANSACTIONS_TOTAL: &str = "redoline_capture_transactions_total";
pub const SKIPPED_CHANGES_TOTAL: &str = "redoline_capture_skipped_changes_total";
pub const WINDOW_START_SCN: &str = "redoline_capture_window_start_scn";
pub const WINDOW_END_SCN: &str = "redoline_capture_window_end_scn";
pub const WINDOW_DURATION_SECONDS: &str = "redoline_capture_window_duration_seconds";
pub const WINDOW_MAX_SCNS: &str = "redoline_capture_window_max_scns";
pub const WINDOW_SHRINKS_TOTAL: &str = "redoline_capture_window_shrinks_total";
pub const WINDOW_GROWS_TOTAL: &str = "redoline_capture_window_grows_total";
pub const SESSION_PGA_BYTES: &str = "redoline_capture_logminer_session_pga_bytes";
pub const SESSION_PGA_MAX_BYTES: &str = "redoline_capture_logminer_session_pga_max_bytes";
pub const SESSIONS_RECYCLED_TOTAL: &str = "redoline_capture_logminer_sessions_recycled_total";
pub const ROWS_FETCHED_TOTAL: &str = "redoline_capture_rows_fetched_total";
pub const ROUNDTRIPS_TOTAL: &str = "redoline_capture_roundtrips_total";
pub const LAST_STOP: &str = "redoline_capture_last_stop";
pub const RETRIES_TOTAL: &str = "redoline_capture_retries_total";
pub const SNAPSHOT_TABLES_TOTAL: &str = "redoline_capture_snapshot_tables_total";
pub const SNAPSHOT_TABLES_DONE: &str = "redoline_capture_snapshot_tables_done";
pub const SNAPSHOT_ROWS_SCANNED: &str = "redoline_capture_snapshot_rows_scanned";
pub const SNAPSHOT_ROWS_REMAINING_ESTIMATE: &str =
    "redoline_capture_snapshot_rows_remaining_estimate";
pub const SCHEMA_HISTORY_STATUS: &str = "redoline_capture_schema_history_status";
pub const SCHEMA_HISTORY_RECOVERY_START: &str =
    "redoline_capture_schema_history_recovery_start_timestamp_seconds";
pub const SCHEMA_HISTORY_CHANGES_RECOVERED_TOTAL: &str =
    "redoline_capture_schema_history_changes_recovered_total";
pub const SCHEMA_HISTORY_CHANGES_APPLIED_TOTAL: &str =
    "redoline_capture_schema_history_changes_applied_total";
pub const SCHEMA_HISTORY_LAST_RECOVERED_CHANGE: &str =
    "redoline_capture_schema_history_last_recovered_change_timestamp_seconds";
pub const SCHEMA_HISTORY_LAST_APPLIED_CHANGE: &str =
    "redoline_capture_schema_history_last_applied_change_timestamp_seconds";
pub const CREDENTIALS_LOADED: &str = "redoline_capture_credentials_loaded_timestamp_seconds";
pub const CONFIG_FILE_INVALID: &str = "redoline_capture_config_file_invalid";

/// Every metric name above.
pub const ALL: [&str; 32] = [
    LAG_SECONDS,
    COMMIT_SCN,
    RESTART_SCN,
    ARCHIVED_REDO_HOURS_LEFT,
    EVENTS_TOTAL,
    TRANSACTIONS_TOTAL,
    SKIPPED_CHANGES_TOTAL,
    WINDOW_START_SCN,
    WINDOW_END_SCN,
    WINDOW_DURATION_SECONDS,
    WINDOW_MAX_SCNS,
    WINDOW_SHRINKS_TOTAL,
    WINDOW_GROWS_TOTAL,
    SESSION_PGA_BYTES,
    SESSION_PGA_MAX_BYTES,
    SESSIONS_RECYCLED_TOTAL,
    ROWS_FETCHED_TOTAL,
    ROUNDTRIPS_TOTAL,
    LAST_STOP,
    RETRIES_TOTAL,
    SNAPSHOT_TABLES_TOTAL,
    SNAPSHOT_TABLES_DONE,
    SNAPSHOT_ROWS_SCANNED,
    SNAPSHOT_ROWS_REMAINING_ESTIMATE,
    SCHEMA_HISTORY_STATUS,
    SCHEMA_HISTORY_RECOVERY_START,
    SCHEMA_HISTORY_CHANGES_RECOVERED_TOTAL,
    SCHEMA_HISTORY_CHANGES_APPLIED_TOTAL,
    SCHEMA_HISTORY_LAST_RECOVERED_CHANGE,
    SCHEMA_HISTORY_LAST_APPLIED_CHANGE,
    CREDENTIALS_LOADED,
    CONFIG_FILE_INVALID,
];

/// A mining window takes from milliseconds (idle, online log) to minutes (archived backlog).
const WINDOW_BUCKETS: [f64; 12] = [
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// The engine's metrics.
#[derive(Clone, Debug)]
pub struct EngineMetrics {
    pub lag_seconds: Gauge,
    pub commit_scn: IntGauge,
    pub restart_scn: IntGauge,
    pub archived_redo_hours_left: Gauge,
    events: IntCounterVec,
    transactions: IntCounterVec,
    skipped: IntCounterVec,
    pub window_start_scn: IntGauge,
    pub window_end_scn: IntGauge,
    pub window_duration: Histogram,
    window_max_scns: IntGauge,
    window_shrinks: IntCounterVec,
    window_grows: IntCounter,
    session_pga: IntGauge,
    session_pga_max: IntGauge,
    sessions_recycled: IntCounterVec,
    pub rows_fetched: IntCounter,
    roundtrips: IntCounterVec,
    last_stop: IntGaugeVec,
    retries: IntCounterVec,
    snapshot_tables_total: IntGauge,
    snapshot_tables_done: IntGauge,
    snapshot_rows_scanned: IntGauge,
    snapshot_rows_remaining: IntGauge,
    pub schema_history: SchemaHistoryMetrics,
    /// Set by [`crate::rotation::watch`]. A change ends the process, so a counter of changes
    /// would rarely be scraped; this timestamp moves with each rotation instead.
    pub credentials_loaded: Gauge,
    /// Set by [`crate::live_config::follow`]: 1 while the config file does not load.
    pub config_file_invalid: IntGauge,
    last_table_events: LastTableEvents,
}

/// Debezium's schema history MBean (`SchemaHistoryMXBean`, kept by debezium-core
/// `relational/history/SchemaHistoryMetrics.java`) in Prometheus' terms: the status as one series
/// per state, its instants as Unix timestamps (Prometheus computes the "milliseconds since" from
/// them), its counts as counters. The last recovered and applied records themselves
/// (`LastRecoveredChange`, `LastAppliedChange`) are whole DDL texts, unfit for label values.
///
/// Debezium counts a change recovered for each history record read at start, and a change
/// applied for each record it writes (a DDL, or the structures recorded at the first start);
/// here the same, for each read and each written version.
#[derive(Clone, Debug)]
pub struct SchemaHistoryMetrics {
    status: IntGaugeVec,
    recovery_start: Gauge,
    changes_recovered: IntCounter,
    changes_applied: IntCounter,
    last_recovered: Gauge,
    last_applied: Gauge,
}

/// Debezium's `SchemaHistoryStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaHistoryStatus {
    /// Not in use: before the first start and between a failed attempt and its retry.
    Stopped,
    /// Being read back at start.
    Recovering,
    /// Read back; the capture records the versions DDL makes.
    Running,
}

impl SchemaHistoryStatus {
    const ALL: [Self; 3] = [Self::Stopped, Self::Recovering, Self::Running];

    fn label(self) -> &'static str {
        match self {
            Self::Stopped => "stopped",
            Self::Recovering => "recovering",
            Self::Running => "running",
        }
    }
}

impl SchemaHistoryMetrics {
    fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let metrics = Self {
            status: IntGaugeVec::new(
                Opts::new(
                    SCHEMA_HISTORY_STATUS,
                    "1 for the schema history's current status: stopped, recovering or running",
                ),
                &["status"],
            )?,
            recovery_start: Gauge::new(
                SCHEMA_HISTORY_RECOVERY_START,
                "Unix time the latest reading back of the schema history started; -1 before the first",
            )?,
            changes_recovered: IntCounter::new(
                SCHEMA_HISTORY_CHANGES_RECOVERED_TOTAL,
                "Schema history records read back at start, over every start and retry",
            )?,
            changes_applied: IntCounter::new(
                SCHEMA_HISTORY_CHANGES_APPLIED_TOTAL,
                "Table structures written to the schema history (first start and DDL)",
            )?,
            last_recovered: Gauge::new(
                SCHEMA_HISTORY_LAST_RECOVERED_CHANGE,
                "Unix time the latest schema history record was read back; -1 before the first",
            )?,
            last_applied: Gauge::new(
                SCHEMA_HISTORY_LAST_APPLIED_CHANGE,
                "Unix time the latest table structure was written to the schema history; -1 before the first",
            )?,
        };
        for gauge in [
            &metrics.recovery_start,
            &metrics.last_recovered,
            &metrics.last_applied,
        ] {
            gauge.set(-1.0);
        }
        metrics.set_status(SchemaHistoryStatus::Stopped);
        registry.register(Box::new(metrics.status.clone()))?;
        registry.register(Box::new(metrics.recovery_start.clone()))?;
        registry.register(Box::new(metrics.changes_recovered.clone()))?;
        registry.register(Box::new(metrics.changes_applied.clone()))?;
        registry.register(Box::new(metrics.last_recovered.clone()))?;
        registry.register(Box::new(metrics.last_applied.clone()))?;
        Ok(metrics)
    }

    /// 1 for `status`, 0 for the others (every state keeps a series, so `== 1` alerts and
    /// dashboards see a change rather than a series that vanishes).
    pub fn set_status(&self, status: SchemaHistoryStatus) {
        for state in SchemaHistoryStatus::ALL {
            self.status
                .with_label_values(&[state.label()])
                .set(i64::from(state == status));
        }
    }

    /// Reading the history back starts.
    pub fn recovery_started(&self, now: jiff::Timestamp) {
        self.set_status(SchemaHistoryStatus::Recovering);
        self.recovery_start.set(unix_seconds(now));
    }

    /// One record was read back.
    pub fn change_recovered(&self, now: jiff::Timestamp) {
        self.changes_recovered.inc();
        self.last_recovered.set(unix_seconds(now));
    }

    /// The history was read back whole.
    pub fn recovery_finished(&self) {
        self.set_status(SchemaHistoryStatus::Running);
    }

    /// One version was written.
    pub fn change_applied(&self, now: jiff::Timestamp) {
        self.changes_applied.inc();
        self.last_applied.set(unix_seconds(now));
    }
}

/// Seconds since the Unix epoch, with milliseconds.
fn unix_seconds(at: jiff::Timestamp) -> f64 {
    at.as_millisecond() as f64 / 1000.0
}

/// The `events_total` counters of the table an event was counted for last. Every event is
/// counted, and `with_label_values` builds, hashes and looks up its labels under the family's lock
/// each time; events come in runs of one table, so a run needs that once per operation.
#[derive(Debug, Default)]
struct LastTableEvents(Mutex<TableEvents>);

#[derive(Debug, Default)]
struct TableEvents {
    table: Option<Arc<TableSchema>>,
    by_operation: [Option<IntCounter>; OPERATIONS],
}

/// A clone starts with no table: the cache is the clone's own.
impl Clone for LastTableEvents {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Why a change was skipped under `onUnsupported: skip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    Unsupported,
    DictionaryMismatch,
    PartialLob,
}

impl EngineMetrics {
    /// Creates and registers every family.
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let metrics = Self {
            lag_seconds: Gauge::new(
                LAG_SECONDS,
                "Seconds between the commit time of the database's current SCN and of the last emitted commit SCN; -1 when unknown",
            )?,
            commit_scn: IntGauge::new(COMMIT_SCN, "Commit SCN of the last emitted transaction")?,
            restart_scn: IntGauge::new(RESTART_SCN, "SCN mining restarts from after a restart")?,
            archived_redo_hours_left: Gauge::new(
                ARCHIVED_REDO_HOURS_LEFT,
                "Hours before the oldest archived log a restart needs passes mining.archiveRetentionHours; -1 when unknown",
            )?,
            events: IntCounterVec::new(
                Opts::new(
                    EVENTS_TOTAL,
                    "Change events emitted, by operation and table",
                ),
                &["op", "table"],
            )?,
            transactions: IntCounterVec::new(
                Opts::new(TRANSACTIONS_TOTAL, "Transactions ended, by outcome"),
                &["outcome"],
            )?,
            skipped: IntCounterVec::new(
                Opts::new(
                    SKIPPED_CHANGES_TOTAL,
                    "Changes dropped under onUnsupported: skip, by reason",
                ),
                &["reason"],
            )?,
            window_start_scn: IntGauge::new(
                WINDOW_START_SCN,
                "First SCN of the latest mining window",
            )?,
            window_end_scn: IntGauge::new(WINDOW_END_SCN, "Last SCN of the latest mining window")?,
            window_duration: Histogram::with_opts(
                HistogramOpts::new(WINDOW_DURATION_SECONDS, "Time to mine one window")
                    .buckets(WINDOW_BUCKETS.to_vec()),
            )?,
            window_max_scns: IntGauge::new(
                WINDOW_MAX_SCNS,
                "Most SCNs the next mining window may cover: mining.maxScnWindow, less while windows are made smaller",
            )?,
            window_shrinks: IntCounterVec::new(
                Opts::new(
                    WINDOW_SHRINKS_TOTAL,
                    "Times the mining window's SCN cap was halved, by the bound a window exceeded",
                ),
                &["reason"],
            )?,
            window_grows: IntCounter::new(
                WINDOW_GROWS_TOTAL,
                "Times the mining window's SCN cap was doubled after windows well within their bounds",
            )?,
            session_pga: IntGauge::new(
                SESSION_PGA_BYTES,
                "PGA of the mining session's server process (session pga memory)",
            )?,
            session_pga_max: IntGauge::new(
                SESSION_PGA_MAX_BYTES,
                "Largest PGA of the mining session so far (session pga memory max)",
            )?,
            sessions_recycled: IntCounterVec::new(
                Opts::new(
                    SESSIONS_RECYCLED_TOTAL,
                    "Mining sessions ended for a fresh one, by reason",
                ),
                &["reason"],
            )?,
            rows_fetched: IntCounter::new(ROWS_FETCHED_TOTAL, "Rows of V$LOGMNR_CONTENTS fetched")?,
            roundtrips: IntCounterVec::new(
                Opts::new(ROUNDTRIPS_TOTAL, "Calls to the database, by call"),
                &["call"],
            )?,
            last_stop: IntGaugeVec::new(
                Opts::new(LAST_STOP, "1 for the code of the latest typed stop"),
                &["code"],
            )?,
            retries: IntCounterVec::new(
                Opts::new(
                    RETRIES_TOTAL,
                    "Restarts of the mining loop after a transient database or Kafka fault, by cause",
                ),
                &["cause"],
            )?,
            snapshot_tables_total: IntGauge::new(
                SNAPSHOT_TABLES_TOTAL,
                "Tables of the initial snapshot",
            )?,
            snapshot_tables_done: IntGauge::new(
                SNAPSHOT_TABLES_DONE,
                "Tables of the initial snapshot read to their end",
            )?,
            snapshot_rows_scanned: IntGauge::new(
                SNAPSHOT_ROWS_SCANNED,
                "Rows the initial snapshot has written, across restarts",
            )?,
            snapshot_rows_remaining: IntGauge::new(
                SNAPSHOT_ROWS_REMAINING_ESTIMATE,
                "Rows the initial snapshot has left, from the optimizer statistics; -1 when unknown",
            )?,
            schema_history: SchemaHistoryMetrics::new(registry)?,
            credentials_loaded: Gauge::new(
                CREDENTIALS_LOADED,
                "When this process read the mounted credentials it follows (a change ends it for a restart with the new ones); -1 when none are followed",
            )?,
            config_file_invalid: IntGauge::new(
                CONFIG_FILE_INVALID,
                "1 while the config file on disk cannot be loaded (the capture goes on with the config in force; /status configFile names the error)",
            )?,
            last_table_events: LastTableEvents::default(),
        };
        metrics.lag_seconds.set(-1.0);
        metrics.session_pga.set(-1);
        metrics.session_pga_max.set(-1);
        registry.register(Box::new(metrics.lag_seconds.clone()))?;
        metrics.credentials_loaded.set(-1.0);
        registry.register(Box::new(metrics.credentials_loaded.clone()))?;
        registry.register(Box::new(metrics.config_file_invalid.clone()))?;
        registry.register(Box::new(metrics.commit_scn.clone()))?;
        registry.register(Box::new(metrics.restart_scn.clone()))?;
        metrics.archived_redo_hours_left.set(-1.0);
        registry.register(Box::new(metrics.archived_redo_hours_left.clone()))?;
        registry.register(Box::new(metrics.events.clone()))?;
        registry.register(Box::new(metrics.transactions.clone()))?;
        registry.register(Box::new(metrics.skipped.clone()))?;
        registry.register(Box::new(metrics.window_start_scn.clone()))?;
        registry.register(Box::new(metrics.window_end_scn.clone()))?;
        registry.register(Box::new(metrics.window_duration.clone()))?;
        registry.register(Box::new(metrics.window_max_scns.clone()))?;
        registry.register(Box::new(metrics.window_shrinks.clone()))?;
        registry.register(Box::new(metrics.window_grows.clone()))?;
        for reason in Breach::LABELS {
            metrics.window_shrinks.with_label_values(&[reason]);
        }
        registry.register(Box::new(metrics.session_pga.clone()))?;
        registry.register(Box::new(metrics.session_pga_max.clone()))?;
        registry.register(Box::new(metrics.sessions_recycled.clone()))?;
        for reason in ["age", "memory", "pga"] {
            metrics.sessions_recycled.with_label_values(&[reason]);
        }
        registry.register(Box::new(metrics.rows_fetched.clone()))?;
        registry.register(Box::new(metrics.roundtrips.clone()))?;
        registry.register(Box::new(metrics.last_stop.clone()))?;
        registry.register(Box::new(metrics.retries.clone()))?;
        registry.register(Box::new(metrics.snapshot_tables_total.clone()))?;
        registry.register(Box::new(metrics.snapshot_tables_done.clone()))?;
        registry.register(Box::new(metrics.snapshot_rows_scanned.clone()))?;
        registry.register(Box::new(metrics.snapshot_rows_remaining.clone()))?;
        for outcome in ["committed", "rolled_back"] {
            metrics.transactions.with_label_values(&[outcome]);
        }
        Ok(metrics)
    }

    /// Counts one emitted event.
    pub fn event(&self, op: &Operation, table: &Arc<TableSchema>) {
        let (index, label) = operation_label(op);
        let mut last = self
            .last_table_events
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !last
            .table
            .as_ref()
            .is_some_and(|last| Arc::ptr_eq(last, table))
        {
            *last = TableEvents {
                table: Some(Arc::clone(table)),
                by_operation: Default::default(),
            };
        }
        last.by_operation[index]
            .get_or_insert_with(|| {
                self.events
                    .with_label_values(&[label, &table.qualified_name()])
            })
            .inc();
    }

    pub fn transaction_committed(&self) {
        self.transactions.with_label_values(&["committed"]).inc();
    }

    pub fn transaction_rolled_back(&self) {
        self.transactions.with_label_values(&["rolled_back"]).inc();
    }

    pub fn skipped(&self, reason: SkipReason) {
        let label = match reason {
            SkipReason::Unsupported => "unsupported",
            SkipReason::DictionaryMismatch => "dictionary_mismatch",
            SkipReason::PartialLob => "partial_lob",
        };
        self.skipped.with_label_values(&[label]).inc();
    }

    pub fn roundtrip(&self, call: &str) {
        self.roundtrips.with_label_values(&[call]).inc();
    }

    /// Marks `code` (`CDC-4001`) as the latest stop.
    pub fn stopped(&self, code: &str) {
        self.last_stop.reset();
        self.last_stop.with_label_values(&[code]).set(1);
    }

    /// The mining session's memory as the database reports it.
    pub fn set_session_memory(&self, memory: SessionMemory) {
        let gauge = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        self.session_pga.set(gauge(memory.pga_bytes));
        self.session_pga_max.set(gauge(memory.pga_max_bytes));
    }

    /// Counts a mining session ended for a fresh one: `age` (`mining.sessionMaxSeconds`),
    /// `memory` (ORA-04030) or `pga` (`mining.sessionPgaMaxBytes`).
    pub fn session_recycled(&self, reason: &str) {
        self.sessions_recycled.with_label_values(&[reason]).inc();
    }

    /// The cap on the next window's SCN range.
    pub fn set_window_max_scns(&self, scns: u64) {
        self.window_max_scns
            .set(i64::try_from(scns).unwrap_or(i64::MAX));
    }

    /// Counts a change of the window cap and shows the new one.
    pub fn window_cap_changed(&self, change: &CapChange) {
        match change {
            CapChange::Shrunk { to, breach, .. } => {
                self.window_shrinks
                    .with_label_values(&[breach.label()])
                    .inc();
                self.set_window_max_scns(*to);
            }
            CapChange::Grew { to, .. } => {
                self.window_grows.inc();
                self.set_window_max_scns(*to);
            }
        }
    }

    /// Counts one restart after a transient fault; `cause` is one of a fixed set of labels.
    pub fn retried(&self, cause: &str) {
        self.retries.with_label_values(&[cause]).inc();
    }

    /// Shows a snapshot's progress.
    pub fn set_snapshot(&self, progress: &SnapshotProgress) {
        let gauge = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        self.snapshot_tables_total.set(gauge(progress.tables_total));
        self.snapshot_tables_done.set(gauge(progress.tables_done));
        self.snapshot_rows_scanned.set(gauge(progress.rows_scanned));
        self.snapshot_rows_remaining
            .set(progress.rows_remaining_estimate.map_or(-1, gauge));
    }

    /// Sets the lag gauge; -1 when unknown.
    pub fn set_lag(&self, lag_seconds: Option<f64>) {
        self.lag_seconds.set(lag_seconds.unwrap_or(-1.0));
    }
}

/// The `op` label: the compact format's operation letters.
/// How many values the `op` label has.
const OPERATIONS: usize = 6;

/// The `op` label of an operation, and its place among the [`OPERATIONS`].
fn operation_label(op: &Operation) -> (usize, &'static str) {
    match op {
        Operation::Create => (0, "c"),
        Operation::Update => (1, "u"),
        Operation::Delete => (2, "d"),
        Operation::Read => (3, "r"),
        Operation::Truncate => (4, "truncate"),
        Operation::Ddl { .. } => (5, "ddl"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::{Encoder, TextEncoder};

    #[test]
    fn every_family_renders_under_its_name() {
        let registry = Registry::new();
        let metrics = EngineMetrics::new(&registry).unwrap();
        let table = |name: &str| {
            let id = crate::dictionary::Column::new("ID", crate::dictionary::OracleType::Date);
            Arc::new(TableSchema::new("APP", name, vec![id]).unwrap())
        };
        let (orders, lines) = (table("ORDERS"), table("LINES"));
        // Runs of one table and a switch back: each count lands under its own table.
        metrics.event(&Operation::Create, &orders);
        metrics.event(&Operation::Create, &orders);
        metrics.event(&Operation::Delete, &orders);
        metrics.event(&Operation::Create, &lines);
        metrics.event(&Operation::Create, &orders);
        metrics.transaction_committed();
        metrics.skipped(SkipReason::PartialLob);
        metrics.roundtrip("start LogMiner");
        metrics.stopped("CDC-4001");
        metrics.stopped("CDC-6002");
        metrics.window_duration.observe(0.2);
        metrics.set_lag(Some(3.0));
        metrics.retried("database_unavailable");
        metrics.set_snapshot(&SnapshotProgress {
            tables_total: 3,
            tables_done: 1,
            rows_scanned: 120,
            rows_remaining_estimate: None,
        });
        let mut text = Vec::new();
        TextEncoder::new()
            .encode(&registry.gather(), &mut text)
            .unwrap();
        let text = String::from_utf8(text).unwrap();
        for name in ALL {
            assert!(
                text.contains(&format!("# TYPE {name} ")),
                "{name} missing:\n{text}"
            );
        }
        assert!(text.contains(r#"redoline_capture_events_total{op="c",table="APP.ORDERS"} 3"#));
        assert!(text.contains(r#"redoline_capture_events_total{op="d",table="APP.ORDERS"} 1"#));
        assert!(text.contains(r#"redoline_capture_events_total{op="c",table="APP.LINES"} 1"#));
        assert!(text.contains(r#"redoline_capture_last_stop{code="CDC-6002"} 1"#));
        assert!(
            !text.contains(r#"code="CDC-4001""#),
            "only the latest stop is shown"
        );
        assert!(text.contains("redoline_capture_lag_seconds 3"));
        assert!(text.contains(r#"redoline_capture_retries_total{cause="database_unavailable"} 1"#));
        assert!(text.contains("redoline_capture_snapshot_rows_scanned 120"));
        assert!(text.contains("redoline_capture_snapshot_rows_remaining_estimate -1"));
    }

    fn render(registry: &Registry) -> String {
        let mut text = Vec::new();
        TextEncoder::new()
            .encode(&registry.gather(), &mut text)
            .unwrap();
        String::from_utf8(text).unwrap()
    }

    #[test]
    fn the_schema_history_shows_its_status_instants_and_counts() {
        let registry = Registry::new();
        let history = EngineMetrics::new(&registry).unwrap().schema_history;
        let text = render(&registry);
        for line in [
            r#"redoline_capture_schema_history_status{status="stopped"} 1"#,
            r#"redoline_capture_schema_history_status{status="recovering"} 0"#,
            r#"redoline_capture_schema_history_status{status="running"} 0"#,
            "redoline_capture_schema_history_recovery_start_timestamp_seconds -1",
            "redoline_capture_schema_history_changes_recovered_total 0",
            "redoline_capture_schema_history_last_applied_change_timestamp_seconds -1",
        ] {
            assert!(text.contains(line), "{line} missing:\n{text}");
        }
        let at = |second: i64| jiff::Timestamp::from_millisecond(second * 1000 + 250).unwrap();
        history.recovery_started(at(1_700_000_000));
        assert!(render(&registry).contains(r#"{status="recovering"} 1"#));
        history.change_recovered(at(1_700_000_001));
        history.change_recovered(at(1_700_000_002));
        history.recovery_finished();
        history.change_applied(at(1_700_000_010));
        let text = render(&registry);
        for line in [
            r#"redoline_capture_schema_history_status{status="running"} 1"#,
            r#"redoline_capture_schema_history_status{status="recovering"} 0"#,
            "redoline_capture_schema_history_recovery_start_timestamp_seconds 1700000000.25",
            "redoline_capture_schema_history_changes_recovered_total 2",
            "redoline_capture_schema_history_last_recovered_change_timestamp_seconds 1700000002.25",
            "redoline_capture_schema_history_changes_applied_total 1",
            "redoline_capture_schema_history_last_applied_change_timestamp_seconds 1700000010.25",
        ] {
            assert!(text.contains(line), "{line} missing:\n{text}");
        }
        history.set_status(SchemaHistoryStatus::Stopped);
        assert!(render(&registry).contains(r#"{status="stopped"} 1"#));
    }
}
