#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! A transaction's age (the journal threshold, `transactions.maxAgeSeconds`) counts from its start
//! in the database, not from when this process first saw it: every restart mines an open
//! transaction again from its START row, so a capture that keeps crashing would otherwise never
//! age one out.

mod run_support;

use run_support::Capture;

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
