//! The capture's `/status` as the plugin reads it: every member optional, unknown ones ignored
//! (the capture in the pod may be older or newer than the plugin). The capture writes it as
//! `redoline_crds::capture::StatusReport`.

use redoline_crds::capture::{OldestTransaction, ThreadPosition, Time};
use redoline_crds::v1alpha1::{ArchivedRedoStatus, RepositionStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `/status`, tolerantly.
///
/// The operator reads the same document as `redoline_crds::capture::CaptureReport`, whose
/// members this repeats. Not merged on purpose: the operator types what it judges (an unknown
/// `state` is `None`, `snapshot` is parsed), while the plugin shows what the capture wrote, so a
/// newer capture's state or snapshot shape is displayed as written rather than failing the read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveStatus {
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub commit_scn: Option<u64>,
    #[serde(default)]
    pub commit_time: Option<Time>,
    #[serde(default)]
    pub restart_scn: Option<u64>,
    #[serde(default)]
    pub lag_seconds: Option<f64>,
    #[serde(default)]
    pub open_transactions: Option<u64>,
    #[serde(default)]
    pub buffered_events: Option<u64>,
    #[serde(default)]
    pub heap_bytes: Option<u64>,
    #[serde(default)]
    pub spilled_transactions: Option<u64>,
    #[serde(default)]
    pub spilled_bytes: Option<u64>,
    #[serde(default)]
    pub journaled_transactions: Option<u64>,
    #[serde(default)]
    pub oldest_transaction: Option<OldestTransaction>,
    #[serde(default)]
    pub threads: Vec<ThreadPosition>,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    /// The Kafka producer's state, as written (`{"state": "ready"}`, ...).
    #[serde(default)]
    pub producer: Option<Value>,
    /// The initial snapshot's figures and the incremental snapshots' `requests`.
    #[serde(default)]
    pub snapshot: Option<Value>,
    #[serde(default)]
    pub reposition: Option<RepositionStatus>,
    #[serde(default)]
    pub archived_redo: Option<ArchivedRedoStatus>,
}

impl LiveStatus {
    /// Reads a `/status` body; a body that is not a JSON object is an error naming what it is.
    pub fn parse(body: &str) -> Result<Self, String> {
        serde_json::from_str(body).map_err(|e| format!("the answer is not a capture /status: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_knows_and_ignores_the_rest() {
        let live = LiveStatus::parse(
            r#"{"state":"streaming","commitScn":5,"restartScn":4,"lagSeconds":1.5,
                "openTransactions":2,"oldestTransaction":{"xid":"0A00","firstScn":3},
                "threads":[{"thread":1,"sequence":9,"firstScn":2,"archived":false}],
                "newerMember":{"x":1}}"#,
        )
        .unwrap();
        assert_eq!(live.state.as_deref(), Some("streaming"));
        assert_eq!(live.oldest_transaction.unwrap().first_scn, 3);
        assert_eq!(live.threads[0].sequence, 9);
        assert_eq!(live.spilled_bytes, None);
        assert!(LiveStatus::parse("<html>").is_err());
    }
}
