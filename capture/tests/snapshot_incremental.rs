#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Incremental snapshots through `redoline-capture run` on the simulator and the file sink: a
//! request read while a workload streams places each chunk at its `AS OF` SCN (every change
//! committed at or below it before the chunk, every later one after it), reads every row once,
//! and never runs again once done; a table that joins the capture is read the same way.

mod run_support;

use std::collections::{BTreeMap, BTreeSet};

use run_support::{Capture, Xorshift};
use serde_json::Value;

const TABLES: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all"}
{"table":"APP.ITEMS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all"}
"#;

fn insert(tx: &str, table: &str, id: u64, v: u64) -> String {
    format!("{{\"tx\":\"{tx}\",\"insert\":\"APP.{table}\",\"values\":{{\"ID\":{id},\"V\":{v}}}}}\n")
}
fn update(tx: &str, table: &str, id: u64, v: u64) -> String {
    format!(
        "{{\"tx\":\"{tx}\",\"update\":\"APP.{table}\",\"where\":{{\"ID\":{id}}},\"set\":{{\"V\":{v}}}}}\n"
    )
}
fn delete(tx: &str, table: &str, id: u64) -> String {
    format!("{{\"tx\":\"{tx}\",\"delete\":\"APP.{table}\",\"where\":{{\"ID\":{id}}}}}\n")
}
fn commit(tx: &str) -> String {
    format!("{{\"tx\":\"{tx}\",\"commit\":true}}\n")
}

/// Seeded rows in both tables, then `transactions` small transactions on both, two at a time
/// open (each on rows of its own), with the final contents of the tables.
fn workload(seed: u64, transactions: u64) -> (String, BTreeMap<(String, u64), u64>) {
    let mut random = Xorshift::new(seed | 1);
    let mut next = move |n: u64| random.next() % n;
    let mut lines = String::from(TABLES);
    let mut rows: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let mut id = 0;
    for table in ["ORDERS", "ITEMS"] {
        for _ in 0..30 {
            id += 1;
            let v = next(1000);
            lines.push_str(&insert("seed", table, id, v));
            rows.insert((table.to_owned(), id), v);
        }
    }
    lines.push_str(&commit("seed"));
    // The transaction left open, committed after the next one begins and commits.
    let mut held: Option<(String, Vec<((String, u64), Option<u64>)>)> = None;
    let mut busy: BTreeSet<(String, u64)> = BTreeSet::new();
    for n in 0..transactions {
        let tx = format!("t{n}");
        let mut changes = Vec::new();
        for _ in 0..2 {
            let table = if next(3) == 0 { "ITEMS" } else { "ORDERS" };
            let free: Vec<(String, u64)> = rows
                .keys()
                .filter(|key| key.0 == table && !busy.contains(*key))
                .cloned()
                .collect();
            match next(4) {
                0 | 1 if !free.is_empty() => {
                    let key = free[usize::try_from(next(free.len() as u64)).unwrap()].clone();
                    let v = next(1000);
                    lines.push_str(&update(&tx, table, key.1, v));
                    busy.insert(key.clone());
                    changes.push((key, Some(v)));
                }
                2 if !free.is_empty() => {
                    let key = free[usize::try_from(next(free.len() as u64)).unwrap()].clone();
                    lines.push_str(&delete(&tx, table, key.1));
                    busy.insert(key.clone());
                    changes.push((key, None));
                }
                _ => {
                    id += 1;
                    let v = next(1000);
                    lines.push_str(&insert(&tx, table, id, v));
                    busy.insert((table.to_owned(), id));
                    changes.push(((table.to_owned(), id), Some(v)));
                }
            }
        }
        let mut finish =
            |tx: &str, changes: Vec<((String, u64), Option<u64>)>, lines: &mut String| {
                lines.push_str(&commit(tx));
                for (key, value) in changes {
                    busy.remove(&key);
                    match value {
                        Some(v) => rows.insert(key, v),
                        None => rows.remove(&key),
                    };
                }
            };
        // The SCN jumps between transactions, so a window (at least 1000 SCNs) holds few.
        lines.push_str(&format!(
            "{{\"database\":{{\"scn\":{}}}}}\n",
            1_000_000 + 400 * (n + 1)
        ));
        if n % 3 == 0 {
            if let Some((tx, changes)) = held.take() {
                finish(&tx, changes, &mut lines);
            }
            held = Some((tx, changes));
        } else {
            finish(&tx, changes, &mut lines);
        }
    }
    if let Some((tx, changes)) = held.take() {
        lines.push_str(&commit(&tx));
        for (key, value) in changes {
            match value {
                Some(v) => rows.insert(key, v),
                None => rows.remove(&key),
            };
        }
    }
    (lines, rows)
}

fn key(event: &Value) -> (String, u64) {
    let image = if event["op"] == "d" {
        &event["before"]
    } else {
        &event["after"]
    };
    (
        event["table"].as_str().unwrap().to_owned(),
        image["ID"].as_u64().unwrap(),
    )
}

/// Checks the placement of every `r` event and returns the keys read, per table: the stream's
/// changes so far build the tables, and an `r` row must be exactly that row as it stands there
/// (its chunk's SCN is above every change before it); no change before it is committed above
/// its SCN, none after it at or below. A key read twice by one request is a duplicate.
fn check_reads(events: &[Value]) -> BTreeMap<String, BTreeSet<u64>> {
    let mut model: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let mut read: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for (position, event) in events.iter().enumerate() {
        let key = key(event);
        match event["op"].as_str().unwrap() {
            "r" => {
                let scn = event["scn"].as_u64().unwrap();
                assert_eq!(
                    model.get(&key).copied(),
                    event["after"]["V"].as_u64(),
                    "the read of {key:?} at SCN {scn} is not the row as the stream left it: {event}"
                );
                for (index, other) in events.iter().enumerate() {
                    let Some(commit_scn) = other["commit_scn"].as_u64() else {
                        continue;
                    };
                    if other["table"] != event["table"] || other["op"] == "r" {
                        continue;
                    }
                    if index < position {
                        assert!(
                            commit_scn <= scn,
                            "a change committed at {commit_scn} precedes the read at {scn}: {other}"
                        );
                    } else {
                        assert!(
                            commit_scn > scn,
                            "a change committed at {commit_scn} follows the read at {scn}: {other}"
                        );
                    }
                }
                assert!(
                    read.entry(key.0.clone()).or_default().insert(key.1),
                    "{key:?} read twice"
                );
            }
            "i" | "u" => {
                model.insert(key, event["after"]["V"].as_u64().unwrap());
            }
            "d" => {
                model.remove(&key);
            }
            other => panic!("unexpected op {other}"),
        }
    }
    read
}

fn set_snapshot(capture: &Capture, snapshot: &str) {
    let config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
    std::fs::write(
        capture.path("capture.yaml"),
        config.replace("snapshot: {mode: never}", &format!("snapshot: {snapshot}")),
    )
    .unwrap();
}

#[test]
fn a_reread_while_changes_stream_places_each_chunk_at_its_scn() {
    for seed in [3, 77, 4242] {
        let (scenario, expected) = workload(seed, 120);
        let capture = Capture::new(
            &["APP.ORDERS", "APP.ITEMS"],
            &scenario,
            "mining: {maxScnWindow: 1000}\n",
        );
        set_snapshot(
            &capture,
            "{mode: never, fetchSize: 4, requests: [{id: reread-orders-1, tables: [APP.ORDERS]}]}",
        );
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        let events = capture.events();
        let reads: Vec<&Value> = events.iter().filter(|e| e["op"] == "r").collect();
        assert!(
            reads.iter().all(|e| e["table"] == "ORDERS"),
            "{stderr}\n{:?}",
            reads
                .iter()
                .map(|e| e["table"].as_str())
                .collect::<BTreeSet<_>>()
        );
        let scns: BTreeSet<u64> = reads.iter().map(|e| e["scn"].as_u64().unwrap()).collect();
        assert!(
            scns.len() > 2,
            "chunks at several SCNs, between windows (seed {seed})"
        );
        let first = events.iter().position(|e| e["op"] == "r").unwrap();
        let last = events.iter().rposition(|e| e["op"] == "r").unwrap();
        assert!(
            events[first..last].iter().any(|e| e["op"] != "r"),
            "changes stream between chunks (seed {seed})"
        );
        let read = check_reads(&events);
        // Every row that stood through the whole read was read.
        let streamed_during: BTreeSet<(String, u64)> = events[first..=last]
            .iter()
            .filter(|e| e["op"] != "r")
            .map(key)
            .collect();
        for (_, id) in expected.keys().filter(|(table, _)| table == "ORDERS") {
            let row = ("ORDERS".to_owned(), *id);
            let inserted_after = events[last..]
                .iter()
                .any(|e| e["op"] == "i" && key(e) == row);
            assert!(
                streamed_during.contains(&row)
                    || inserted_after
                    || read.get(&row.0).is_some_and(|ids| ids.contains(id)),
                "{row:?} stood through the read and was never read (seed {seed})"
            );
        }
        // Done stays done: the same spec again reads nothing more.
        let before = events.len();
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        assert_eq!(capture.events().len(), before, "seed {seed}");
    }
}
