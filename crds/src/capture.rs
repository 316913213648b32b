//! What the capture tells the operator, outside the Kubernetes API: the `/status` document the
//! operator polls and the termination message a typed stop leaves in the pod status (contracts:
//! "Capture HTTP endpoints", "Termination message"). Like [`crate::StopCode`], these are API: the
//! capture writes these types and the operator reads them, so the JSON has one definition.
//!
//! The capture writes exactly what it knows. The operator reads tolerantly, since the capture in a
//! pod can be older or newer than the operator: members it does not read are ignored, missing
//! optional ones are `None`, and a `state` it does not know is `None` ([`CaptureReport`]).

/// The time type of `/status` (RFC 3339, UTC, whole seconds), as in the OracleCapture status.
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::v1alpha1;

/// Where the capture is in its life: `state` in `/status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaptureState {
    Starting,
    Snapshotting,
    Streaming,
    Stopping,
}

/// The `snapshot` member of `/status` as the capture writes it, while it takes its initial
/// snapshot. The operator reads it as [`v1alpha1::SnapshotProgress`] (every figure optional) and
/// copies it into `status.snapshot`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotProgress {
    pub tables_total: u64,
    pub tables_done: u64,
    pub rows_scanned: u64,
    /// Unknown (absent) when a table not done has no statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_remaining_estimate: Option<u64>,
}

/// The `snapshot` member of `/status`: the initial snapshot's figures while it runs, and the
/// incremental snapshots (`spec.snapshot.requests`, tables that joined) the capture knows of.
/// The operator reads both as [`v1alpha1::SnapshotProgress`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotReport {
    /// Absent once the initial snapshot is over.
    #[serde(flatten)]
    pub initial: Option<SnapshotProgress>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<v1alpha1::SnapshotRequestStatus>,
}

impl SnapshotReport {
    /// Whether there is nothing to report.
    pub fn is_empty(&self) -> bool {
        self.initial.is_none() && self.requests.is_empty()
    }
}

/// The capture's `/status` document as the capture writes it. The operator reads the part it needs
/// as [`CaptureReport`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    pub state: CaptureState,
    pub commit_scn: Option<u64>,
    /// The database time of `commit_scn` as the bookmark stores it (UTC, whole seconds, rounded
    /// down): the commit time of the last emitted transaction, or the time of the SCN a
    /// heartbeat moved the position to. Null until known. An addition to the contract's
    /// `/status`, which lets the operator estimate the lag once no capture reports one.
    pub commit_time: Option<Time>,
    pub restart_scn: Option<u64>,
    pub lag_seconds: Option<f64>,
    pub open_transactions: u64,
    pub buffered_events: u64,
    pub heap_bytes: u64,
    pub spilled_transactions: u64,
    pub spilled_bytes: u64,
    /// Open transactions with chunks in the Kafka journal.
    pub journaled_transactions: u64,
    pub started_at: String,
    pub version: &'static str,
    /// The Kafka producer: ready, retrying a broker fault (with the action, attempt and error),
    /// fenced or failed. Absent with the file sink.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer: Option<ProducerState>,
    /// The initial snapshot's progress while it runs (tables total and done, rows scanned, rows
    /// left by the statistics), and the incremental snapshots' (`requests`); absent when there
    /// is neither.
    #[serde(skip_serializing_if = "SnapshotReport::is_empty")]
    pub snapshot: SnapshotReport,
    /// The oldest open transaction (by first SCN): it holds the restart SCN back. Absent with
    /// none open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oldest_transaction: Option<OldestTransaction>,
    /// Per redo thread, the log the current mining window starts in; absent before the first
    /// window.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadPosition>,
    /// What this run decided about `spec.reposition`; absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reposition: Option<v1alpha1::RepositionStatus>,
    /// The archived redo a restart needs and the hours left before it is deleted
    /// (`spec.mining.archiveRetentionHours`); absent before the first log listing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived_redo: Option<v1alpha1::ArchivedRedoStatus>,
    /// The config file on disk when it is not the one in force: changed beyond
    /// `snapshot.requests` (applied at the next start) or not loadable. Absent when the file is
    /// what the capture runs with (`snapshot.requests` changes apply while running).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_file: Option<ConfigFileState>,
}

/// Why the config file on disk is not the one in force: `configFile` in `/status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum ConfigFileState {
    /// Changed beyond `snapshot.requests`: the rest applies at the next start (the operator
    /// rolls the pod for such a change).
    RestartPending,
    /// It cannot be loaded (`error` names the field): the capture goes on with the config in
    /// force.
    Invalid { error: String },
}

/// The oldest open transaction on `/status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OldestTransaction {
    /// The transaction id (upper-case hex, as in the bookmark).
    pub xid: String,
    /// The SCN of its first change: where mining restarts from while it is open.
    pub first_scn: u64,
    /// When it opened, on the capture's clock: when the capture first saw it, or earlier when
    /// the database's clock says it started before (its age for the journal and
    /// `transactions.maxAgeSeconds` counts from here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_at: Option<Time>,
}

/// Where mining stands on one redo thread: the log the window starts in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadPosition {
    pub thread: u16,
    /// The log sequence number (`SEQUENCE#`).
    pub sequence: u32,
    /// The log's `FIRST_CHANGE#`.
    pub first_scn: u64,
    /// Whether the log is archived (false: an online log).
    pub archived: bool,
}

/// What the capture's Kafka producer is doing: `producer` in `/status`, and the capture's
/// `producer_state` metric.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum ProducerState {
    /// Connecting and initialising transactions.
    Starting,
    /// Writing pages.
    Ready,
    /// A transient fault: retrying `action` with backoff.
    #[serde(rename_all = "camelCase")]
    Retrying {
        action: String,
        attempt: u32,
        error: String,
    },
    /// Another instance took over the transactional id (CDC-5001).
    Fenced,
    /// Gave up: retries exhausted or a fault that cannot pass.
    Failed { error: String },
}

impl ProducerState {
    /// Every state's label in the `producer_state` metric.
    pub const LABELS: &'static [&'static str] =
        &["starting", "ready", "retrying", "fenced", "failed"];

    /// This state's label in the `producer_state` metric.
    pub fn label(&self) -> &'static str {
        match self {
            ProducerState::Starting => "starting",
            ProducerState::Ready => "ready",
            ProducerState::Retrying { .. } => "retrying",
            ProducerState::Fenced => "fenced",
            ProducerState::Failed { .. } => "failed",
        }
    }
}

/// The capture's `/status` document as the operator reads it ([`StatusReport`] is what the
/// capture writes): the state, the position, the lag and the snapshot progress.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureReport {
    /// `None` for a state this operator does not know (a newer capture): neither streaming nor
    /// snapshotting. The member itself is required.
    #[serde(deserialize_with = "known_state")]
    pub state: Option<CaptureState>,
    #[serde(default)]
    pub commit_scn: Option<u64>,
    /// The database time of `commitScn` (an addition to the contract's `/status`: older captures
    /// leave it out).
    #[serde(default)]
    pub commit_time: Option<Time>,
    #[serde(default)]
    pub restart_scn: Option<u64>,
    #[serde(default)]
    pub lag_seconds: Option<f64>,
    /// Sent while the capture takes its initial snapshot, or knows of incremental snapshots
    /// (an addition to the contract's `/status`: older captures leave it out).
    #[serde(default)]
    pub snapshot: Option<v1alpha1::SnapshotProgress>,
    /// What the capture decided about `spec.reposition` (an addition to the contract's
    /// `/status`: older captures leave it out).
    #[serde(default)]
    pub reposition: Option<v1alpha1::RepositionStatus>,
    /// The archived redo a restart needs and the hours left (an addition to the contract's
    /// `/status`: older captures leave it out).
    #[serde(default)]
    pub archived_redo: Option<v1alpha1::ArchivedRedoStatus>,
}

/// Reads `state` as text first, so that a state this version does not know is `None` rather than
/// an answer the operator cannot read at all.
fn known_state<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CaptureState>, D::Error> {
    let state = String::deserialize(d)?;
    let text = serde::de::value::StrDeserializer::<D::Error>::new(&state);
    Ok(CaptureState::deserialize(text).ok())
}

/// The termination message of a typed stop: one JSON object of at most 4096 bytes, which the
/// capture writes to its termination log and Kubernetes copies into the pod status. `doctor`
/// writes the same shape with code CDC-1002 and `details.checks`.
///
/// `code` is text rather than a [`crate::StopCode`]: the operator keeps a code a newer capture
/// writes when it has the code's shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TerminationMessage {
    pub code: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
    /// RFC 3339 time of the stop.
    #[serde(default)]
    pub at: Option<String>,
    /// What the stop is about, by kind: `transactions` (CDC-4001), `checks` (CDC-1002), ...
    #[serde(default, skip_serializing_if = "is_empty")]
    pub details: Value,
}

/// No details to write: null or an empty object.
fn is_empty(details: &Value) -> bool {
    details.is_null()
        || details
            .as_object()
            .is_some_and(|members| members.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_state_is_none_and_a_missing_one_is_refused() {
        let read = |json: &str| serde_json::from_str::<CaptureReport>(json);
        let streaming = read(r#"{"state":"streaming","lagSeconds":1.5}"#).unwrap();
        assert_eq!(streaming.state, Some(CaptureState::Streaming));
        assert_eq!(streaming.lag_seconds, Some(1.5));
        assert_eq!(read(r#"{"state":"draining"}"#).unwrap().state, None);
        assert!(read(r#"{"commitScn":1}"#).is_err());
    }

    #[test]
    fn a_termination_message_without_details_leaves_them_out() {
        let message = TerminationMessage {
            code: "CDC-7001".into(),
            reason: "ReleasedTransactionCommitted".into(),
            message: "m".into(),
            at: Some("2026-11-29T10:00:00Z".into()),
            details: Value::Object(Default::default()),
        };
        let json = serde_json::to_string(&message).unwrap();
        assert_eq!(
            json,
            r#"{"code":"CDC-7001","reason":"ReleasedTransactionCommitted","message":"m","at":"2026-11-29T10:00:00Z"}"#
        );
        let read: TerminationMessage = serde_json::from_str(&json).unwrap();
        assert_eq!(read.details, Value::Null);
    }
}
