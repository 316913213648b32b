//! `OracleCapture.status`: what the operator observed, in the shapes Kubernetes tools read.
//!
//! Conditions follow the Kubernetes API conventions and kstatus: `Ready` (normal polarity),
//! `Reconciling` and `Stalled` (abnormal polarity), plus `PrerequisitesMet` and, when an SLA is set,
//! `LagWithinSLA`. `observedGeneration` is written at the top level and on every condition so
//! `kubectl wait`, Flux and Argo CD never judge a spec the operator has not seen yet.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Condition types written by the operator.
pub mod condition_type {
    /// The capture pod runs, prerequisites are met, nothing stopped it and it is streaming.
    pub const READY: &str = "Ready";
    /// The result of `redoline-capture doctor`.
    pub const PREREQUISITES_MET: &str = "PrerequisitesMet";
    /// True after a typed stop; the reason is the stop's reason, the message starts with its code.
    pub const STALLED: &str = "Stalled";
    /// True while a spec change is rolling out.
    pub const RECONCILING: &str = "Reconciling";
    /// Only when `spec.sla.maxLagSeconds` is set: False with reason `LagSLABreached`.
    pub const LAG_WITHIN_SLA: &str = "LagWithinSLA";
}

/// The observed state of an OracleCapture.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OracleCaptureStatus {
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,

    /// Ready, PrerequisitesMet, Stalled, Reconciling and LagWithinSLA, in the Kubernetes condition
    /// shape.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,

    /// A one-word summary for humans (Pending, Snapshotting, Streaming, Suspended, Stalled).
    /// Tools should read the conditions instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,

    /// The capture's position in the redo stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,

    /// Seconds between the database's current SCN and the last emitted commit, both as UTC
    /// instants (the host's local times less its UTC offset, so a DST switch between them does
    /// not count), as the streaming capture last measured it: the live lag. Absent when unknown
    /// (for example when the position is older than the SCN-to-time mapping) and while no
    /// capture streams; `LagWithinSLA` then gives the lag estimated from `position.commitTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_seconds: Option<f64>,

    /// The latest typed stop of the capture, kept after a restart so the cause stays visible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_stop: Option<LastStop>,

    /// The code of the typed stop in force (the one `Stalled` reports), absent once the capture
    /// streams again; `lastStop` keeps the latest one after that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::STOP_CODE_PATTERN))]
    pub active_stop: Option<String>,

    /// Progress of the initial snapshot, present only while the capture takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotProgress>,

    /// The latest `spec.reposition` the capture decided on: applied, or refused with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reposition: Option<RepositionStatus>,

    /// How long the archived redo a restart needs is kept, as the capture last reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_redo: Option<ArchivedRedoStatus>,
}

/// The archived redo a restart of the capture needs and how long it is kept, as the capture
/// reports it on `/status`: hours left before the database deletes the oldest archived log
/// holding the restart SCN (CDC-2001 once it is gone).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedRedoStatus {
    /// `spec.mining.archiveRetentionHours`; absent when not declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_hours: Option<u32>,
    /// Hours until the oldest needed archived log is past the retention (0 when it already
    /// is: the deletion policy may remove it at any time; 0 too when the redo at the restart
    /// SCN is gone already). While the restart SCN is still in an online log on every thread,
    /// the full retention. Absent when unknown: no retention declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hours_left: Option<f64>,
    /// When the oldest needed archived log passes the retention (its `COMPLETION_TIME` plus
    /// the retention, UTC): from then on the deletion policy may remove it. Absent when
    /// unknown, or while the restart SCN is in online logs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletable_from: Option<Time>,
    /// The archived log holding the restart SCN that was archived first, over the redo
    /// threads; absent while the restart SCN is in online logs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_needed: Option<NeededArchivedLog>,
}

/// One archived log (`V$ARCHIVED_LOG`) a restart of the capture needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NeededArchivedLog {
    /// `THREAD#`.
    pub thread: u16,
    /// `SEQUENCE#`.
    pub sequence: u32,
    /// `COMPLETION_TIME`, when archiving it completed (UTC); absent when the database's
    /// offset from UTC is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Time>,
}

/// What became of a `spec.reposition`, as the capture reports it on `/status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepositionStatus {
    /// The `spec.reposition.id` this is about.
    pub id: String,
    /// The SCN asked for.
    pub scn: u64,
    /// `Applied` (the bookmark moved and records the id) or `Refused` (the position was kept).
    pub state: RepositionState,
    /// When the capture decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Time>,
    /// Why it was refused, or where the position moved from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// See [`RepositionStatus::state`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RepositionState {
    Applied,
    Refused,
}

/// How far the initial snapshot has got, as the capture reports it on `/status`. Every field is
/// optional: a capture reports what it knows (the estimate, for one, comes from optimizer
/// statistics and may be missing).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotProgress {
    /// Tables the snapshot reads in total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables_total: Option<u64>,
    /// Tables read completely.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables_done: Option<u64>,
    /// Rows read so far, over all tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_scanned: Option<u64>,
    /// An estimate of the rows still to read (from the database's table statistics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_remaining_estimate: Option<u64>,
    /// The incremental snapshots of `spec.snapshot.requests` and of tables that joined the
    /// capture (id `tables-added-<SCN>`), as the capture last reported them; finished ones stay
    /// listed while the spec names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["id"]))]
    pub requests: Vec<SnapshotRequestStatus>,
}

/// Where an incremental snapshot, or one of its tables, stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SnapshotRequestState {
    /// Waiting for the requests before it.
    Pending,
    /// Being read, a chunk between mining windows.
    Running,
    /// Read to its end.
    Done,
    /// Removed from the spec before it finished.
    Cancelled,
    /// Could not be read (`message` says why); it does not run again.
    Failed,
}

impl SnapshotRequestState {
    /// Whether the state is final: the request never runs again.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Done | Self::Cancelled | Self::Failed)
    }
}

/// One incremental snapshot's progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotRequestStatus {
    /// The request's id in `spec.snapshot.requests`.
    pub id: String,
    pub state: SnapshotRequestState,
    /// When its first chunk was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When it ended (done, cancelled or failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Each table's progress, in reading order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<SnapshotTableStatus>,
}

/// One table of an incremental snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotTableStatus {
    /// OWNER.TABLE.
    pub table: String,
    pub state: SnapshotRequestState,
    /// Rows written so far.
    #[serde(default)]
    pub rows_read: u64,
    /// Rows the table holds by its optimizer statistics, when it has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_estimate: Option<u64>,
}

/// A one-word summary of the capture's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Phase {
    Pending,
    Snapshotting,
    Streaming,
    Suspended,
    Stalled,
}

/// Where the capture stands in the redo stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Position {
    /// The commit SCN of the last transaction emitted and committed to the sink.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_scn: Option<u64>,
    /// The SCN mining restarts from after a restart: held back by the oldest open transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_scn: Option<u64>,
    /// The database time of `commitScn` (UTC, whole seconds rounded down), as the capture stores
    /// it with its bookmark: the commit time of the last emitted transaction, or the time of the
    /// SCN a heartbeat moved the position to on a quiet database. While no capture streams,
    /// `LagWithinSLA` estimates the lag as the time since it. Absent until the capture has
    /// streamed and reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_time: Option<Time>,
}

/// The latest typed stop, as written to the capture pod's termination message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastStop {
    /// The stop code, such as `CDC-4001`; see docs/runbook.md.
    #[schemars(regex(pattern = crate::STOP_CODE_PATTERN))]
    pub code: String,
    /// The stop's CamelCase reason, such as `SpillCapacityExceeded`.
    pub reason: String,
    /// What happened and what to do.
    pub message: String,
    /// When the capture stopped.
    pub at: Time,
}

impl OracleCaptureStatus {
    /// The condition of the given type, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }
}
