#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Heartbeats on the simulator and the file sink: on an idle source the heartbeat records
//! appear, the bookmark moves to what mining has reached (also with `mining.readOnly`, where no
//! flush row is written) and the lag stays small; the action query writes real redo.

use std::time::Duration;

use serde_json::Value;

use crate::run_support;

use run_support::{Capture, Running, free_port, status};

/// One committed row, then two idle minutes on the database's clock, written out (checkpoint):
/// the SCN moves on, the captured table does not.
const IDLE: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
{"table":"APP.BEAT","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"N","type":"NUMBER(10)"}],"logging":"all"}
{"tx":"a","insert":"APP.ORDERS","values":{"ID":1}}
{"tx":"a","commit":true}
{"tx":"b","insert":"APP.BEAT","values":{"ID":1,"N":0}}
{"tx":"b","commit":true}
{"advance_seconds":120}
{"checkpoint":true}
"#;

/// A Debezium-format capture of `tables` that keeps running (no `--exit-at-end`).
fn capture(tables: &[&str], extra: &str) -> (Capture, u16) {
    let port = free_port();
    let capture = Capture::new(
        tables,
        IDLE,
        &format!("format: {{type: debezium, schemas: false}}\nhttp: {{port: {port}}}\n{extra}"),
    );
    let config = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace("format: {type: compact}\n", "");
    std::fs::write(capture.path("capture.yaml"), config).unwrap();
    (capture, port)
}

fn stop(mut capture: Running) {
    assert_eq!(capture.terminate().code(), Some(0));
}

fn heartbeats(capture: &Capture) -> Vec<Value> {
    capture
        .events()
        .into_iter()
        .filter(|line| line["topic"] == "__debezium-heartbeat.redoline")
        .collect()
}

fn stored_bookmark(capture: &Capture) -> Value {
    let text = std::fs::read_to_string(capture.path("out.jsonl.bookmark")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["bookmark"].clone()
}

/// The SCN of the last step of [`IDLE`] (the checkpoint): steps take SCNs from 1,000,001 on.
const LAST_SCN: u64 = 1_000_000 + 8;

#[test]
fn an_idle_read_only_capture_stays_current_with_heartbeats() {
    // Without heartbeats a read-only capture's bookmark stays at the last commit.
    let (quiet, port) = capture(&["APP.ORDERS"], "mining: {readOnly: true}\n");
    let mut running = quiet.start();
    // The last commit (one window may publish the row's page before the page that moves the
    // bookmark past the uncaptured transaction after it), then nothing moves it.
    let seen = running.wait_for(port, "the last commit", |s| s["commitScn"] == LAST_SCN - 2);
    std::thread::sleep(Duration::from_secs(2));
    let later = status(port).unwrap();
    stop(running);
    assert_eq!(
        later["commitScn"], seen["commitScn"],
        "the last commit: {later}"
    );
    assert_eq!(
        later["lagSeconds"], 120.0,
        "two idle minutes behind: {later}"
    );
    // The position's database time is the last commit's, two idle minutes ago.
    let commit_time = |value: &Value| -> jiff::Timestamp {
        value
            .as_str()
            .unwrap_or_else(|| panic!("no time: {value}"))
            .parse()
            .unwrap()
    };
    let last_commit = commit_time(&later["commitTime"]);

    let (run, port) = capture(
        &["APP.ORDERS"],
        "mining: {readOnly: true}\nheartbeat: {intervalSeconds: 1}\n",
    );
    let mut running = run.start();
    // Without a flush, windows end below the newest redo LGWR has written (LAST_REDO_CHANGE# - 1,
    // here the last step's SCN): the idle SCN mining reaches is the one before.
    let reached = LAST_SCN - 1;
    let status = running.wait_for(port, "the bookmark at the idle SCN", |s| {
        s["commitScn"] == reached && heartbeats(&run).len() >= 2
    });
    assert_eq!(status["restartScn"], reached);
    // The simulator has one redo thread: /status names the log mining reads on it.
    assert_eq!(status["threads"][0]["thread"], 1, "{status}");
    assert!(
        status["threads"][0]["sequence"].as_u64().is_some(),
        "{status}"
    );
    // The lag is polled every 15 s: the next poll sees the bookmark at the idle SCN, whose time
    // is the database's time now, not two minutes before.
    running.wait_for(port, "a small lag", |s| {
        s["lagSeconds"].as_f64().is_some_and(|lag| lag < 5.0)
    });
    stop(running);
    let bookmark = stored_bookmark(&run);
    assert_eq!(
        (
            bookmark["commit_scn"].as_u64(),
            bookmark["restart_scn"].as_u64()
        ),
        (Some(reached), Some(reached))
    );
    // Heartbeats moved the stored time with the position: the idle SCN's time, two minutes
    // after the last commit, so a capture stopped here does not look two minutes behind.
    let idle_time = commit_time(&bookmark["commit_time"]);
    let moved = idle_time.duration_since(last_commit).as_secs();
    assert!((119..=121).contains(&moved), "{idle_time} vs {last_commit}");
    let beat = &heartbeats(&run)[0];
    assert_eq!(beat["key"], serde_json::json!({"serverName": "redoline"}));
    assert!(beat["value"]["ts_ms"].as_i64().unwrap() > 1_700_000_000_000);
    let rows = |capture: &Capture| {
        capture
            .events()
            .iter()
            .filter(|line| line["topic"] == "redoline.APP.ORDERS")
            .count()
    };
    assert_eq!(rows(&run), 1, "the row once, heartbeats do not repeat it");

    // A restart from the moved bookmark repeats nothing. Not `--exit-at-end`: its end, the SCN
    // current at start, is never written past on a database that writes nothing more.
    let before = heartbeats(&run).len();
    let mut running = run.start();
    running.wait_for(port, "the restart's heartbeats", |s| {
        s["commitScn"] == reached && heartbeats(&run).len() >= before + 2
    });
    stop(running);
    assert_eq!(rows(&run), 1);
}

#[test]
fn the_action_query_writes_redo_like_any_transaction() {
    let (run, port) = capture(
        &["APP.BEAT"],
        "heartbeat: {intervalSeconds: 1, actionQuery: \"update \\\"APP\\\".\\\"BEAT\\\" set \\\"N\\\" = '7' where \\\"ID\\\" = '1'\"}\n",
    );
    let mut running = run.start();
    running.wait_for(port, "the action query's update", |_| {
        run.events()
            .iter()
            .any(|line| line["value"]["op"] == "u" && line["value"]["after"]["N"] == 7)
    });
    stop(running);
}

#[test]
fn an_action_query_the_database_refuses_stops_with_cdc_1001() {
    let (run, _) = capture(
        &["APP.ORDERS"],
        "heartbeat: {intervalSeconds: 1, actionQuery: \"update \\\"APP\\\".\\\"NOPE\\\" set \\\"N\\\" = '1' where \\\"ID\\\" = '1'\"}\n",
    );
    let mut running = run.start();
    let exit = running.wait_exit(run_support::RUN_LIMIT);
    assert_eq!(exit.code(), Some(3), "{}", running.stderr());
    let message = run.termination();
    assert_eq!(message["code"], "CDC-1001", "{message}");
    assert!(
        message["message"]
            .as_str()
            .unwrap()
            .starts_with("spec.heartbeat.actionQuery"),
        "{message}"
    );
}
