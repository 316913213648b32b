//! What `status` shows, as one model of the OracleCapture and the capture's `/status`: the
//! screen ([`crate::render`]) and `--output json` are both this model. Pure: built from JSON.

use redoline_crds::capture::{OldestTransaction, ThreadPosition};
use redoline_crds::v1alpha1::{ArchivedRedoStatus, RepositionStatus};
use serde::Serialize;
use serde_json::Value;

use crate::live::LiveStatus;

/// Where the runbook's entries are: one heading per stop code (`## CDC-2001 RedoMissing`).
pub const RUNBOOK_URL: &str = "https://github.com/redoline/redoline/blob/main/docs/runbook.md";

/// Everything `status` shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    pub name: String,
    pub namespace: String,
    /// Where the live figures come from.
    pub source: Source,
    pub phase: Option<String>,
    pub conditions: Vec<ConditionView>,
    /// The typed stop in force, else the latest one (`inForce` says which).
    pub stop: Option<StopView>,
    pub position: PositionView,
    pub threads: Vec<ThreadPosition>,
    /// The archived redo a restart needs and the hours left before CDC-2001 (`/status`, else
    /// `status.archivedRedo`); `None` when neither reports it.
    pub archived_redo: Option<ArchivedRedoStatus>,
    /// From `/status` only.
    pub transactions: Option<TransactionsView>,
    pub snapshot: SnapshotView,
    pub reposition: RepositionView,
}

/// Where the live part of the view comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Source {
    /// The capture's `/status`, through the API server's pod proxy.
    #[serde(rename_all = "camelCase")]
    Capture { pod: String, port: u16 },
    /// The OracleCapture status only, and why.
    #[serde(rename_all = "camelCase")]
    ResourceOnly { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionView {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StopView {
    pub code: String,
    pub reason: String,
    pub message: String,
    pub at: Option<String>,
    /// The stop is in force (`status.activeStop`), not only the latest one.
    pub in_force: bool,
    pub runbook: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PositionView {
    pub commit_scn: Option<u64>,
    pub commit_time: Option<String>,
    pub restart_scn: Option<u64>,
    pub lag_seconds: Option<f64>,
    /// The capture's own state word (`streaming`, `snapshotting`, ...), from `/status`.
    pub capture_state: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionsView {
    pub open: Option<u64>,
    pub spilled: Option<u64>,
    pub spilled_bytes: Option<u64>,
    pub journaled: Option<u64>,
    pub buffered_events: Option<u64>,
    pub heap_bytes: Option<u64>,
    pub oldest: Option<OldestTransaction>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotView {
    /// The initial snapshot's figures while it runs (`status.snapshot` without `requests`).
    pub initial: Option<Value>,
    pub requests: Vec<RequestView>,
}

/// One `spec.snapshot.requests` entry with its progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestView {
    pub id: String,
    /// `Pending`, `Running`, ... as reported; `None` while no status reports it yet.
    pub state: Option<String>,
    pub message: Option<String>,
    pub tables: Vec<RequestTableView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestTableView {
    pub table: String,
    pub state: Option<String>,
    pub rows_read: Option<u64>,
    pub rows_estimate: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepositionView {
    /// `spec.reposition`: `{id, scn}`.
    pub requested: Option<Value>,
    /// What the capture decided (`status.reposition`, or `/status` when newer).
    pub decided: Option<RepositionStatus>,
}

/// The anchor of a stop's runbook entry: GitHub's heading slug of `## CDC-2001 RedoMissing`.
pub fn runbook_link(code: &str, reason: &str) -> String {
    format!(
        "{RUNBOOK_URL}#{}-{}",
        code.to_ascii_lowercase(),
        reason.to_ascii_lowercase()
    )
}

fn text(value: &Value, pointer: &str) -> Option<String> {
    value.pointer(pointer)?.as_str().map(str::to_owned)
}

fn number(value: &Value, pointer: &str) -> Option<u64> {
    value.pointer(pointer)?.as_u64()
}

impl StatusView {
    /// The view of `capture` (the OracleCapture as JSON) and, when it answered, the capture's
    /// `/status`: live figures win over the status the operator last wrote.
    pub fn build(capture: &Value, live: Option<&LiveStatus>, source: Source) -> Self {
        let status = capture.get("status").cloned().unwrap_or(Value::Null);
        let conditions = status
            .get("conditions")
            .and_then(Value::as_array)
            .map(|all| {
                all.iter()
                    .map(|c| ConditionView {
                        type_: text(c, "/type").unwrap_or_default(),
                        status: text(c, "/status").unwrap_or_default(),
                        reason: text(c, "/reason").unwrap_or_default(),
                        message: text(c, "/message").unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let active = text(&status, "/activeStop");
        let stop = status.get("lastStop").and_then(|last| {
            let code = text(last, "/code")?;
            let reason = text(last, "/reason").unwrap_or_default();
            Some(StopView {
                runbook: runbook_link(&code, &reason),
                in_force: active.as_deref() == Some(code.as_str()),
                message: text(last, "/message").unwrap_or_default(),
                at: text(last, "/at"),
                code,
                reason,
            })
        });
        let position = match live {
            Some(live) if live.commit_scn.is_some() => PositionView {
                commit_scn: live.commit_scn,
                commit_time: live.commit_time.as_ref().map(|t| t.0.to_string()),
                restart_scn: live.restart_scn,
                lag_seconds: live.lag_seconds,
                capture_state: live.state.clone(),
            },
            _ => PositionView {
                commit_scn: number(&status, "/position/commitScn"),
                commit_time: text(&status, "/position/commitTime"),
                restart_scn: number(&status, "/position/restartScn"),
                lag_seconds: status.get("lagSeconds").and_then(Value::as_f64),
                capture_state: live.and_then(|l| l.state.clone()),
            },
        };
        let transactions = live.map(|live| TransactionsView {
            open: live.open_transactions,
            spilled: live.spilled_transactions,
            spilled_bytes: live.spilled_bytes,
            journaled: live.journaled_transactions,
            buffered_events: live.buffered_events,
            heap_bytes: live.heap_bytes,
            oldest: live.oldest_transaction.clone(),
        });
        // The requests from /status when it lists them (a capture that knows of none leaves
        // them out), else the operator's copy; the initial snapshot's figures from the source
        // of the live view.
        let live_snapshot = live.and_then(|l| l.snapshot.as_ref());
        let status_snapshot = status.get("snapshot");
        let requests = live_snapshot
            .filter(|s| s.get("requests").is_some())
            .or(status_snapshot);
        let initial = if live.is_some() {
            live_snapshot
        } else {
            status_snapshot
        };
        let snapshot = snapshot_view(capture, requests, initial);
        let decided = live
            .and_then(|l| l.reposition.clone())
            .or_else(|| serde_json::from_value(status.get("reposition")?.clone()).ok());
        // A capture older than the figure leaves it out of /status: the operator's copy then.
        let archived_redo = live
            .and_then(|l| l.archived_redo.clone())
            .or_else(|| serde_json::from_value(status.get("archivedRedo")?.clone()).ok());
        StatusView {
            name: text(capture, "/metadata/name").unwrap_or_default(),
            namespace: text(capture, "/metadata/namespace").unwrap_or_default(),
            source,
            phase: text(&status, "/phase"),
            conditions,
            stop,
            position,
            threads: live.map(|l| l.threads.clone()).unwrap_or_default(),
            archived_redo,
            transactions,
            snapshot,
            reposition: RepositionView {
                requested: capture.pointer("/spec/reposition").cloned(),
                decided,
            },
        }
    }

    /// The condition of this type.
    pub fn condition(&self, type_: &str) -> Option<&ConditionView> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }
}

/// The requests of the spec, each with what the status reports of it, then reported ones the
/// spec no longer names (a cancelled request, a table that joined).
fn snapshot_view(
    capture: &Value,
    reported: Option<&Value>,
    initial: Option<&Value>,
) -> SnapshotView {
    let reported_requests: Vec<&Value> = reported
        .and_then(|s| s.get("requests"))
        .and_then(Value::as_array)
        .map(|all| all.iter().collect())
        .unwrap_or_default();
    let request_view = |id: String, spec_tables: Vec<String>| {
        let report = reported_requests
            .iter()
            .find(|r| r.get("id").and_then(Value::as_str) == Some(id.as_str()));
        let reported_tables: Vec<RequestTableView> = report
            .and_then(|r| r.get("tables"))
            .and_then(Value::as_array)
            .map(|tables| {
                tables
                    .iter()
                    .map(|t| RequestTableView {
                        table: text(t, "/table").unwrap_or_default(),
                        state: text(t, "/state"),
                        rows_read: number(t, "/rowsRead"),
                        rows_estimate: number(t, "/rowsEstimate"),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let tables = if reported_tables.is_empty() {
            spec_tables
                .into_iter()
                .map(|table| RequestTableView {
                    table,
                    state: None,
                    rows_read: None,
                    rows_estimate: None,
                })
                .collect()
        } else {
            reported_tables
        };
        RequestView {
            state: report.and_then(|r| text(r, "/state")),
            message: report.and_then(|r| text(r, "/message")),
            id,
            tables,
        }
    };
    let mut requests: Vec<RequestView> = capture
        .pointer("/spec/snapshot/requests")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|r| {
                    let id = text(r, "/id")?;
                    let tables = r
                        .get("tables")
                        .and_then(Value::as_array)
                        .map(|t| {
                            t.iter()
                                .filter_map(|t| t.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default();
                    Some(request_view(id, tables))
                })
                .collect()
        })
        .unwrap_or_default();
    for report in &reported_requests {
        if let Some(id) = report.get("id").and_then(Value::as_str)
            && !requests.iter().any(|r| r.id == id)
        {
            requests.push(request_view(id.to_owned(), Vec::new()));
        }
    }
    let initial = initial.and_then(|s| {
        let mut figures = s.as_object()?.clone();
        figures.remove("requests");
        (!figures.is_empty()).then_some(Value::Object(figures))
    });
    SnapshotView { initial, requests }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn live_figures_win_and_the_resource_fills_in() {
        let capture = json!({
            "metadata": {"name": "orders", "namespace": "sales"},
            "spec": {"snapshot": {"requests": [{"id": "r1", "tables": ["APP.ORDERS"]},
                                               {"id": "r2", "tables": ["APP.ITEMS"]}]},
                     "reposition": {"id": "m1", "scn": 40}},
            "status": {"phase": "Stalled", "activeStop": "CDC-2001",
                       "lastStop": {"code": "CDC-2001", "reason": "RedoMissing", "message": "gone", "at": "2026-12-05T10:00:00Z"},
                       "position": {"commitScn": 10, "restartScn": 9},
                       "snapshot": {"requests": [{"id": "r1", "state": "Running",
                           "tables": [{"table": "APP.ORDERS", "state": "Running", "rowsRead": 5, "rowsEstimate": 50}]}]},
                       "reposition": {"id": "m1", "scn": 40, "state": "Refused", "message": "gone"},
                       "archivedRedo": {"retentionHours": 24, "hoursLeft": 3.5}}
        });
        let view = StatusView::build(
            &capture,
            None,
            Source::ResourceOnly {
                reason: "no pod".into(),
            },
        );
        let stop = view.stop.clone().unwrap();
        assert!(stop.in_force);
        assert_eq!(stop.runbook, format!("{RUNBOOK_URL}#cdc-2001-redomissing"));
        assert_eq!(view.position.commit_scn, Some(10));
        assert_eq!(view.snapshot.requests.len(), 2);
        assert_eq!(view.snapshot.requests[0].tables[0].rows_read, Some(5));
        assert_eq!(view.snapshot.requests[1].state, None, "not reported yet");
        assert_eq!(view.snapshot.initial, None);
        assert_eq!(
            view.reposition.decided.as_ref().map(|d| d.id.as_str()),
            Some("m1")
        );
        assert!(view.transactions.is_none());
        assert_eq!(view.archived_redo.as_ref().unwrap().hours_left, Some(3.5));

        let live = LiveStatus::parse(
            r#"{"state":"streaming","commitScn":12,"restartScn":11,"openTransactions":1}"#,
        )
        .unwrap();
        let view = StatusView::build(
            &capture,
            Some(&live),
            Source::Capture {
                pod: "orders-capture-0".into(),
                port: 8080,
            },
        );
        assert_eq!(view.position.commit_scn, Some(12));
        assert_eq!(view.transactions.unwrap().open, Some(1));
        // The live /status carries no requests: the operator's copy stands.
        assert_eq!(view.snapshot.requests[0].state.as_deref(), Some("Running"));
        // Nor archived redo figures (an older capture): the operator's copy again.
        assert_eq!(view.archived_redo.as_ref().unwrap().hours_left, Some(3.5));
        let newer = LiveStatus::parse(
            r#"{"state":"streaming","commitScn":12,"archivedRedo":{"retentionHours":24,"hoursLeft":2.0}}"#,
        )
        .unwrap();
        let view = StatusView::build(
            &capture,
            Some(&newer),
            Source::Capture {
                pod: "orders-capture-0".into(),
                port: 8080,
            },
        );
        assert_eq!(view.archived_redo.unwrap().hours_left, Some(2.0));
    }
}
