#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! An incremental snapshot to the real broker while a workload streams, SIGKILLed several times
//! while `/status` shows the request under way: a `read_committed` consumer then sees every row
//! of the table exactly once as an `r` event, each after every change committed at or below its
//! chunk's SCN and before every later one, because each chunk is one Kafka transaction carrying
//! the bookmark with the request's progress.

use crate::kafka_support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use kafka_support::{Capture, TABLES, bootstrap, free_port, insert, read_values, unique_prefix};

const ROWS: u64 = 3_000;
const TRANSACTIONS: u64 = 300;
const KILLS: u64 = 3;

fn update(tx: &str, id: u64, order: u64) -> String {
    format!(
        "{{\"tx\":\"{tx}\",\"update\":\"APP.ITEMS\",\"where\":{{\"ID\":{id}}},\"set\":{{\"ORDER_ID\":{order}}}}}\n"
    )
}

#[test]
fn a_request_killed_repeatedly_reads_every_row_once_at_its_place() {
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    for id in 1..=ROWS {
        scenario.push_str(&insert("load", id, "row"));
    }
    scenario.push_str("{\"tx\":\"load\",\"commit\":true}\n");
    let seeded = scenario.clone();
    // Updates spread over the SCNs (a window, at least 1000 SCNs, holds few of them), each on
    // a row of its own.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for n in 0..TRANSACTIONS {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let tx = format!("u{n}");
        scenario.push_str(&update(&tx, state % ROWS + 1, n + 2));
        scenario.push_str(&format!(
            "{{\"database\":{{\"scn\":{}}}}}\n",
            1_010_000 + 400 * n
        ));
        scenario.push_str(&format!("{{\"tx\":\"{tx}\",\"commit\":true}}\n"));
    }
    let prefix = unique_prefix("snapshot-incremental-kill");
    let snapshot = "snapshot: {mode: never, fetchSize: 40, requests: [{id: reread-items-1, tables: [APP.ITEMS]}]}";
    let extra = "mining: {maxScnWindow: 1000}\n";
    // The rows first, streamed without a request; then the updates arrive with the request.
    let capture = Capture::new(&seeded, &bootstrap, &prefix, extra);
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    std::fs::write(capture.path("scenario.jsonl"), &scenario).unwrap();
    let port = free_port();
    capture.write_snapshot_configs(&bootstrap, &prefix, port, extra, snapshot);
    let last_seen =
        capture.kill_at_progress(port, false, KILLS, Duration::from_secs(30), |report| {
            report["snapshot"]["requests"][0]["tables"][0]["rowsRead"].as_u64()
        });
    assert!(last_seen < ROWS, "the kills came before the end");
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    let events = read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"));
    // The stream builds the table; a read must be the row as the stream left it, and sit
    // between the changes committed at or below its SCN and those above.
    let mut model: BTreeMap<u64, u64> = BTreeMap::new();
    let mut read: BTreeSet<u64> = BTreeSet::new();
    let mut latest_commit = 0;
    let mut pending_reads: Vec<u64> = Vec::new();
    for event in &events {
        let id = event["after"]["ID"].as_u64().unwrap();
        let order = event["after"]["ORDER_ID"].as_u64().unwrap();
        match event["op"].as_str().unwrap() {
            "r" => {
                let scn = event["scn"].as_u64().unwrap();
                assert!(
                    latest_commit <= scn,
                    "a change committed at {latest_commit} precedes a read at {scn}"
                );
                assert_eq!(
                    model.get(&id),
                    Some(&order),
                    "read of {id} at {scn}: {event}"
                );
                assert!(read.insert(id), "{id} read twice");
                pending_reads.push(scn);
            }
            _ => {
                let commit = event["commit_scn"].as_u64().unwrap();
                assert!(
                    pending_reads.iter().all(|scn| commit > *scn),
                    "a change committed at {commit} follows a read at a later SCN"
                );
                latest_commit = latest_commit.max(commit);
                model.insert(id, order);
            }
        }
    }
    assert_eq!(
        read,
        (1..=ROWS).collect::<BTreeSet<u64>>(),
        "every row read once"
    );
}
