#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! A transaction's age (the journal threshold, `transactions.maxAgeSeconds`) counts from its start
//! in the database, not from when this process first saw it: every restart mines an open
//! transaction again from its START row, so a capture that keeps crashing would otherwise never
//! age one out. A transaction discarded for its age must never be published in part later.

use crate::run_support;

use run_support::Capture;
use serde_json::Value;

const ORDERS: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
"#;

#[test]
fn a_fresh_process_sees_the_age_a_transaction_has_in_the_database() {
    // `stuck` started two minutes ago on the database's clock; this run has just started.
    let scenario = format!(
        "{ORDERS}{}{}{}{}",
        r#"{"tx":"stuck","insert":"APP.ORDERS","values":{"ID":1}}"#.to_owned() + "\n",
        "{\"advance_seconds\":120}\n",
        r#"{"tx":"done","insert":"APP.ORDERS","values":{"ID":2}}"#.to_owned() + "\n",
        "{\"tx\":\"done\",\"commit\":true}\n",
    );
    let run = Capture::new(
        &["APP.ORDERS"],
        &scenario,
        "transactions: {maxAgeSeconds: 60, maxAgeAction: fail}\n",
    );
    let (status, stderr) = run.run();
    assert_eq!(status, 3, "{stderr}");
    let message = run.termination();
    assert_eq!(message["code"], "CDC-4004", "{message}");
    let age = message["details"]["ageSeconds"].as_i64().unwrap();
    assert!((120..180).contains(&age), "{message}");
    let emitted: Vec<u64> = run
        .events()
        .iter()
        .map(|e| e["after"]["ID"].as_u64().unwrap())
        .collect();
    assert_eq!(
        emitted,
        [2],
        "the committed transaction, mined before the check"
    );
}

/// More transactions discarded for their age than the released ledger holds (4096 by default),
/// none of their undo slots reused, then the first of them goes on and commits, in a later
/// window. Its COMMIT must never publish the row mined after the discard: the capture stops with
/// CDC-7003 at the discard that finds the ledger full. Before, the ledger forgot its oldest entry
/// with a warning and the late row was published as if it were the whole transaction.
#[test]
fn a_late_commit_after_more_discards_than_the_ledger_holds_is_never_published_in_part() {
    const OPEN: u64 = 4097;
    const LATE_ID: u64 = 999_999;
    let mut scenario = String::from(ORDERS);
    for tx in 0..OPEN {
        scenario.push_str(&format!(
            "{{\"tx\":\"t{tx}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{tx}}}}}\n"
        ));
    }
    scenario.push_str("{\"advance_seconds\":120}\n");
    // More SCNs than a window, so the late row and COMMIT are mined after the discards.
    for id in 0..1100 {
        scenario.push_str(&format!(
            "{{\"tx\":\"filler\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{}}}}}\n",
            100_000 + id
        ));
    }
    scenario.push_str("{\"tx\":\"filler\",\"commit\":true}\n");
    scenario.push_str(&format!(
        "{{\"tx\":\"t0\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{LATE_ID}}}}}\n"
    ));
    scenario.push_str("{\"tx\":\"t0\",\"commit\":true}\n");
    let run = Capture::new(
        &["APP.ORDERS"],
        &scenario,
        "transactions: {maxAgeSeconds: 60, maxAgeAction: discard}\nmining: {maxScnWindow: 1000}\n",
    );
    let (status, stderr) = run.run();
    let late: Vec<Value> = run
        .events()
        .into_iter()
        .filter(|e| e["after"]["ID"].as_u64() == Some(LATE_ID))
        .collect();
    assert_eq!(late, [] as [Value; 0], "published in part: {stderr}");
    assert_eq!(status, 3, "{stderr}");
    let message = run.termination();
    assert_eq!(message["code"], "CDC-7003", "{message}");
    assert_eq!(message["reason"], "ReleasedLedgerFull");
    assert_eq!(message["details"]["limit"], 4096);
    assert_eq!(message["details"]["releaseReason"], "discarded");
}
