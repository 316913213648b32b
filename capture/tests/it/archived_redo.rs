#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Hours of archived redo left before CDC-2001 on `/status` (`archivedRedo`) and the metric, on
//! the simulator: the oldest archived log a restart needs is the one holding the restart SCN an
//! open transaction holds back, its age is read on the database's clock (a host in Berlin), and
//! once the transaction commits the restart SCN is in the online log again.

use serde_json::Value;

use crate::run_support;

use run_support::{Capture, metric};

const TABLE: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
"#;

#[test]
fn the_hours_left_count_from_the_completion_of_the_log_holding_the_restart_scn() {
    let port = run_support::free_port();
    // Transaction a opens in sequence 1 and stays open; sequence 1 is archived at 00:00:12
    // UTC (switched at 00:00:10, the archiver's copy takes 2 s), sequence 2 an hour later.
    let scenario = format!(
        "{{\"database\":{{\"time_zone\":\"Europe/Berlin\"}}}}\n{TABLE}\
         {{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":1}}}}\n\
         {{\"advance_seconds\":10}}\n{{\"log_switch\":true}}\n\
         {{\"advance_seconds\":3600}}\n\
         {{\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":2}}}}\n\
         {{\"tx\":\"b\",\"commit\":true}}\n{{\"log_switch\":true}}\n\
         {{\"advance_seconds\":1800}}\n"
    );
    let capture = Capture::new(
        &["APP.ORDERS"],
        &scenario,
        &format!("http: {{port: {port}}}\nmining: {{archiveRetentionHours: 24}}\n"),
    );
    let config = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace(
            "{simulator: {scenario: scenario.jsonl}}",
            "{simulator: {scenario: scenario.jsonl, follow: true}}",
        );
    std::fs::write(capture.path("capture.yaml"), config).unwrap();
    let mut child = capture.start();

    let status = child.wait_for(port, "sequence 1 needed", |s| {
        s["archivedRedo"]["oldestNeeded"]["sequence"] == 1
    });
    let redo = &status["archivedRedo"];
    assert_eq!(redo["retentionHours"], 24, "{status}");
    assert_eq!(
        redo["oldestNeeded"],
        serde_json::json!({"thread": 1, "sequence": 1, "completedAt": "2024-01-02T00:00:12Z"}),
        "{status}"
    );
    assert_eq!(redo["deletableFrom"], "2024-01-03T00:00:12Z", "{status}");
    // Listed when the database's clock showed 01:30:10 UTC: 1 h 29 min 58 s old, less the
    // seconds the capture has run since the listing.
    let left = redo["hoursLeft"].as_f64().unwrap();
    let expected = 24.0 - (3600.0 + 1800.0 - 2.0) / 3600.0;
    assert!(
        left <= expected && left > expected - 0.05,
        "{left} h left, expected about {expected}: {status}"
    );
    let gauge = metric(port, "redoline_capture_archived_redo_hours_left").unwrap();
    assert!(
        gauge <= expected && gauge > expected - 0.05,
        "gauge {gauge}"
    );

    // Transaction a commits: the restart SCN moves into the online log, so no archived log is
    // needed and the whole retention is left.
    capture.append("{\"tx\":\"a\",\"commit\":true}\n");
    let status = child.wait_for(port, "nothing archived needed", |s: &Value| {
        s["archivedRedo"].is_object() && s["archivedRedo"].get("oldestNeeded").is_none()
    });
    assert_eq!(status["archivedRedo"]["hoursLeft"], 24.0, "{status}");
    assert_eq!(child.terminate().code(), Some(0));
}
