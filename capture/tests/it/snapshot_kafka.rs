#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The initial snapshot to the real broker, SIGKILLed several times while `/status` shows it
//! under way: a `read_committed` consumer then sees every row exactly once as an `r` event,
//! because each batch is one Kafka transaction carrying the bookmark with the snapshot's
//! progress.

use crate::kafka_support;

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use kafka_support::{
    Capture, TABLES, bootstrap, free_port, ids, insert, read_values, unique_prefix,
};

const ROWS: u64 = 20_000;
const KILLS: u64 = 3;

#[test]
fn a_snapshot_killed_repeatedly_delivers_every_row_once() {
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    for id in 1..=ROWS {
        scenario.push_str(&insert("load", id, "snapshot row"));
    }
    scenario.push_str("{\"tx\":\"load\",\"commit\":true}\n");
    let prefix = unique_prefix("snapshot-kill");
    let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
    let port = free_port();
    capture.write_config("killed.yaml", &bootstrap, &prefix, port, "");
    for file in ["capture.yaml", "killed.yaml"] {
        let text = std::fs::read_to_string(capture.path(file)).unwrap();
        std::fs::write(
            capture.path(file),
            text.replace(
                "snapshot: {mode: never}",
                "snapshot: {mode: initial, fetchSize: 100}",
            ),
        )
        .unwrap();
    }
    let mut last_seen = 0;
    for kill in 0..KILLS {
        let mut child = capture.spawn("killed.yaml", true, &format!("kill{kill}"));
        let rows = |report: &Value| {
            Some(report)
                .filter(|report| report["state"] == "snapshotting")
                .and_then(|report| report["snapshot"]["rowsScanned"].as_u64())
        };
        let report = child.wait_for_within(
            port,
            &format!("the snapshot's progress before kill {kill}"),
            Duration::from_secs(120),
            Duration::from_millis(5),
            |report| rows(report).is_some_and(|rows| rows > last_seen + 300),
        );
        last_seen = rows(&report).unwrap_or_default();
        child.kill();
    }
    assert!(last_seen < ROWS, "the kills came before the end");
    let (status, stderr) = capture.run("capture.yaml");
    assert_eq!(status, 0, "{stderr}");
    let values = read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"));
    assert!(values.iter().all(|v| v["op"] == "r"));
    let seen = ids(&values);
    assert_eq!(seen.len() as u64, ROWS, "no duplicate");
    assert_eq!(
        seen.iter().copied().collect::<BTreeSet<u64>>(),
        (1..=ROWS).collect(),
        "no gap"
    );
}
