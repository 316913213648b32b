#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Redo still in the instance's log buffer when a window is planned: a capture following a
//! scenario as it grows (the simulator applies appended steps when the capture reads the current
//! SCN, as other sessions work while the capture does) must not mine past what the log writer has
//! written, or an open transaction's row is skipped for good and the transaction is emitted
//! without it; with `mining.readOnly` (no flush) too.

use std::time::Duration;

use serde_json::Value;

use crate::run_support;

use run_support::{Capture, Running, metric};

const ORDERS: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
"#;

fn insert(tx: &str, id: u32) -> String {
    format!("{{\"tx\":\"{tx}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{id}}}}}\n")
}

/// A capture of APP.ORDERS that follows its scenario, with its HTTP face on a port of its own;
/// `extra` is appended to the config.
fn following_capture(scenario: &str, extra: &str) -> (Capture, u16) {
    let port = run_support::free_port();
    let capture = Capture::new(
        &["APP.ORDERS"],
        scenario,
        &format!("http: {{port: {port}}}\n{extra}"),
    );
    let config = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace(
            "simulator: {scenario: scenario.jsonl}",
            "simulator: {scenario: scenario.jsonl, follow: true}",
        );
    std::fs::write(capture.path("capture.yaml"), config).unwrap();
    (capture, port)
}

/// Waits until two more windows have started than when called: the one that was planned when
/// the caller appended a step is mined by then, and so is the next, which reads that step.
fn two_more_windows(child: &mut Running, port: u16) {
    let end = || metric(port, "redoline_capture_window_end_scn").unwrap_or(0.0);
    let before = end();
    child.wait_until(
        "two more windows",
        Duration::from_secs(40),
        Duration::from_millis(50),
        |_| end() >= before + 2.0,
    );
}

/// The IDs of the compact events of each emitted transaction (by commit SCN), in order.
fn transactions(events: &[Value]) -> Vec<Vec<u64>> {
    let mut grouped: Vec<(u64, Vec<u64>)> = Vec::new();
    for event in events {
        let scn = event["commit_scn"].as_u64().unwrap();
        let id = event["after"]["ID"].as_u64().unwrap();
        match grouped.last_mut() {
            Some((last, ids)) if *last == scn => ids.push(id),
            _ => grouped.push((scn, vec![id])),
        }
    }
    grouped.into_iter().map(|(_, ids)| ids).collect()
}

#[test]
fn a_row_made_while_the_capture_plans_its_window_is_emitted_with_its_transaction() {
    let (capture, port) = following_capture(&format!("{ORDERS}{}", insert("a", 1)), "");
    let mut child = capture.start();
    child.wait_for(port, "transaction a buffered", |s| {
        s["openTransactions"] == 1 && s["bufferedEvents"] == 1
    });
    // Another row of the open transaction: in the log buffer, not yet on disk, until a commit.
    capture.append(&insert("a", 2));
    two_more_windows(&mut child, port);
    capture.append("{\"tx\":\"a\",\"commit\":true}\n");
    child.wait_for(port, "transaction a emitted", |s| {
        s["openTransactions"] == 0 && s["commitScn"].is_u64()
    });
    assert_eq!(child.terminate().code(), Some(0));
    assert_eq!(
        transactions(&capture.events()),
        [vec![1, 2]],
        "transaction a whole"
    );
}

#[test]
fn without_the_flush_a_window_waits_for_what_the_log_writer_has_written() {
    // b's commit writes a's first row too; the clock step after it leaves the buffer empty.
    let scenario = format!(
        "{ORDERS}{}{}{{\"tx\":\"b\",\"commit\":true}}\n{{\"advance_seconds\":1}}\n",
        insert("a", 1),
        insert("b", 100)
    );
    let (capture, port) = following_capture(&scenario, "mining: {readOnly: true}\n");
    let mut child = capture.start();
    let status = child.wait_for(port, "b emitted and a buffered", |s| {
        s["openTransactions"] == 1 && s["bufferedEvents"] == 1 && s["commitScn"].is_u64()
    });
    let b_commit = status["commitScn"].as_u64().unwrap();
    // a's second row stays in the log buffer: no commit, flush or timeout writes it. The capture
    // looks at the current SCN every poll (1 s) meanwhile; a window reaching the row would skip
    // it. (Read-only windows wait for the log writer, so no window is there to wait for.)
    capture.append(&insert("a", 2));
    std::thread::sleep(Duration::from_secs(3));
    capture.append("{\"tx\":\"a\",\"commit\":true}\n{\"advance_seconds\":1}\n");
    child.wait_for(port, "transaction a emitted", |s| {
        s["openTransactions"] == 0 && s["commitScn"].as_u64().is_some_and(|scn| scn > b_commit)
    });
    assert_eq!(child.terminate().code(), Some(0));
    assert_eq!(
        transactions(&capture.events()),
        [vec![100], vec![1, 2]],
        "transaction a whole"
    );
}
