#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The initial snapshot to the real broker, SIGKILLed several times while `/status` shows it
//! under way: a `read_committed` consumer then sees every row exactly once as an `r` event,
//! because each batch is one Kafka transaction carrying the bookmark with the snapshot's
//! progress.

use crate::kafka_support;

use std::collections::BTreeSet;
use std::time::Duration;

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
    capture.write_snapshot_configs(
        &bootstrap,
        &prefix,
        port,
        "",
        "snapshot: {mode: initial, fetchSize: 100}",
    );
    let last_seen =
        capture.kill_at_progress(port, true, KILLS, Duration::from_secs(120), |report| {
            Some(report)
                .filter(|report| report["state"] == "snapshotting")
                .and_then(|report| report["snapshot"]["rowsScanned"].as_u64())
        });
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
