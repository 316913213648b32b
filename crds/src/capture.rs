//! What the capture tells the operator, outside the Kubernetes API: the `/status` document the
//! operator polls (contracts: "Capture HTTP endpoints"). Like [`crate::StopCode`], this is API:
//! the capture writes these types and the operator reads them, so the JSON has one definition.
//!
//! The capture writes exactly what it knows. The operator reads tolerantly, since the capture in a
//! pod can be older or newer than the operator: members it does not read are ignored, missing
//! optional ones are `None`, and a `state` it does not know is `None` ([`CaptureReport`]).

use serde::{Deserialize, Deserializer, Serialize};

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

/// The capture's `/status` document as the operator reads it: the state, the position, the lag and
/// the snapshot progress. The capture writes more (buffer figures, the Kafka producer's state);
/// see its `http::StatusReport`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureReport {
    /// `None` for a state this operator does not know (a newer capture): neither streaming nor
    /// snapshotting. The member itself is required.
    #[serde(deserialize_with = "known_state")]
    pub state: Option<CaptureState>,
    #[serde(default)]
    pub commit_scn: Option<u64>,
    #[serde(default)]
    pub restart_scn: Option<u64>,
    #[serde(default)]
    pub lag_seconds: Option<f64>,
    /// Sent while the capture takes its initial snapshot (an addition to the contract's
    /// `/status`: older captures leave it out).
    #[serde(default)]
    pub snapshot: Option<v1alpha1::SnapshotProgress>,
}

/// Reads `state` as text first, so that a state this version does not know is `None` rather than
/// an answer the operator cannot read at all.
fn known_state<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CaptureState>, D::Error> {
    let state = String::deserialize(d)?;
    let text = serde::de::value::StrDeserializer::<D::Error>::new(&state);
    Ok(CaptureState::deserialize(text).ok())
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
}
