#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Incremental snapshots through `redoline-capture run` on the simulator and the file sink: a
//! request read while a workload streams places each chunk at its `AS OF` SCN (every change
//! committed at or below it before the chunk, every later one after it), reads every row once,
//! and never runs again once done; a table that joins the capture is read the same way.

use crate::run_support;

use std::collections::{BTreeMap, BTreeSet};

use run_support::lines::{commit, delete, insert, update};
use run_support::{Capture, Xorshift, free_port};
use serde_json::Value;

const TABLES: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all"}
{"table":"APP.ITEMS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all"}
"#;

/// A deterministic workload: seeded rows in both tables, then small transactions on both,
/// with the tables' contents as they commit.
struct Workload {
    random: Xorshift,
    rows: BTreeMap<(String, u64), u64>,
    id: u64,
    /// The SCN the next transaction jumps to.
    scn: u64,
}

type Change = ((String, u64), Option<u64>);

impl Workload {
    /// The tables and `rows` committed rows in each (the simulator keeps 100 rows to a block,
    /// and a chunk is at least a block).
    fn seeded(seed: u64, rows: u64) -> (Self, String) {
        let mut workload = Self {
            random: Xorshift::new(seed | 1),
            rows: BTreeMap::new(),
            id: 0,
            scn: 1_002_000,
        };
        let mut lines = String::from(TABLES);
        for table in ["ORDERS", "ITEMS"] {
            for _ in 0..rows {
                workload.id += 1;
                let v = workload.next(1000);
                lines.push_str(&insert("seed", table, workload.id, v));
                workload.rows.insert((table.to_owned(), workload.id), v);
            }
        }
        lines.push_str(&commit("seed"));
        (workload, lines)
    }

    fn next(&mut self, n: u64) -> u64 {
        self.random.next() % n
    }

    /// `transactions` more (named `<prefix><n>`), every third left open until the next third
    /// commits, each on rows of its own; the SCN jumps 2000 between them, so a window (of 3000
    /// SCNs here) holds few.
    fn transactions(&mut self, prefix: &str, transactions: u64) -> String {
        let mut lines = String::new();
        let mut held: Option<(String, Vec<Change>)> = None;
        let mut busy: BTreeSet<(String, u64)> = BTreeSet::new();
        for n in 0..transactions {
            let tx = format!("{prefix}{n}");
            let mut changes = Vec::new();
            for _ in 0..2 {
                let table = if self.next(3) == 0 { "ITEMS" } else { "ORDERS" };
                let free: Vec<(String, u64)> = (self.rows.keys())
                    .filter(|key| key.0 == table && !busy.contains(*key))
                    .cloned()
                    .collect();
                let pick = self.next(free.len().max(1) as u64);
                match self.next(4) {
                    0 | 1 if !free.is_empty() => {
                        let key = free[usize::try_from(pick).unwrap()].clone();
                        let v = self.next(1000);
                        lines.push_str(&update(&tx, table, key.1, v));
                        busy.insert(key.clone());
                        changes.push((key, Some(v)));
                    }
                    2 if !free.is_empty() => {
                        let key = free[usize::try_from(pick).unwrap()].clone();
                        lines.push_str(&delete(&tx, table, key.1));
                        busy.insert(key.clone());
                        changes.push((key, None));
                    }
                    _ => {
                        self.id += 1;
                        let v = self.next(1000);
                        lines.push_str(&insert(&tx, table, self.id, v));
                        busy.insert((table.to_owned(), self.id));
                        changes.push(((table.to_owned(), self.id), Some(v)));
                    }
                }
            }
            lines.push_str(&format!("{{\"database\":{{\"scn\":{}}}}}\n", self.scn));
            self.scn += 2000;
            if n % 3 == 0 {
                if let Some((tx, changes)) = held.take() {
                    self.finish(&tx, changes, &mut busy, &mut lines);
                }
                held = Some((tx, changes));
            } else {
                self.finish(&tx, changes, &mut busy, &mut lines);
            }
        }
        if let Some((tx, changes)) = held.take() {
            self.finish(&tx, changes, &mut busy, &mut lines);
        }
        lines
    }

    fn finish(
        &mut self,
        tx: &str,
        changes: Vec<Change>,
        busy: &mut BTreeSet<(String, u64)>,
        lines: &mut String,
    ) {
        lines.push_str(&commit(tx));
        for (key, value) in changes {
            busy.remove(&key);
            match value {
                Some(v) => self.rows.insert(key, v),
                None => self.rows.remove(&key),
            };
        }
    }
}

/// The seeded tables and `transactions` transactions, with the final contents.
fn workload(seed: u64, transactions: u64) -> (String, BTreeMap<(String, u64), u64>) {
    let (mut workload, mut lines) = Workload::seeded(seed, 300);
    lines.push_str(&workload.transactions("t", transactions));
    (lines, workload.rows)
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
///
/// With `whole` false the events do not begin with the table's first row (a table that joined
/// the capture): a row the stream has not touched yet may be read as it is.
fn check_reads(events: &[Value], whole: bool) -> BTreeMap<String, BTreeSet<u64>> {
    let mut model: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let mut touched: BTreeSet<(String, u64)> = BTreeSet::new();
    let mut read: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for (position, event) in events.iter().enumerate() {
        let key = key(event);
        match event["op"].as_str().unwrap() {
            "r" => {
                let scn = event["scn"].as_u64().unwrap();
                let unseen = !whole && !touched.contains(&key);
                assert!(
                    unseen || model.get(&key).copied() == event["after"]["V"].as_u64(),
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
                touched.insert(key.clone());
                model.insert(key, event["after"]["V"].as_u64().unwrap());
            }
            "d" => {
                touched.insert(key.clone());
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
            "mining: {maxScnWindow: 3000}\n",
        );
        set_snapshot(
            &capture,
            "{mode: never, fetchSize: 50, requests: [{id: reread-orders-1, tables: [APP.ORDERS]}]}",
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
        let read = check_reads(&events, true);
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

#[test]
fn a_table_that_joins_is_read_while_changes_stream_unless_told_to_skip() {
    for (seed, tables_added) in [(5, "snapshot"), (11, "skip")] {
        let (mut workload, mut scenario) = Workload::seeded(seed, 300);
        scenario.push_str(&workload.transactions("t", 40));
        let capture = Capture::new(&["APP.ORDERS"], &scenario, "mining: {maxScnWindow: 3000}\n");
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        let first_run = capture.events().len();
        // More work on both tables, and ITEMS joins the capture.
        let more = workload.transactions("m", 80);
        capture.append(&more);
        let config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
        std::fs::write(
            capture.path("capture.yaml"),
            config
                .replace("tables: [APP.ORDERS]", "tables: [APP.ORDERS, APP.ITEMS]")
                .replace(
                    "snapshot: {mode: never}",
                    &format!(
                        "snapshot: {{mode: never, fetchSize: 50, tablesAdded: {tables_added}}}"
                    ),
                ),
        )
        .unwrap();
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        let events = capture.events()[first_run..].to_vec();
        let reads: Vec<&Value> = events.iter().filter(|e| e["op"] == "r").collect();
        if tables_added == "skip" {
            assert!(reads.is_empty(), "seed {seed}");
            continue;
        }
        assert!(
            !reads.is_empty() && reads.iter().all(|e| e["table"] == "ITEMS"),
            "seed {seed}"
        );
        let read = check_reads(&events, false);
        assert!(
            read["ITEMS"].len() >= 20,
            "seed {seed}: {:?}",
            read["ITEMS"]
        );
    }
}

#[test]
fn removing_a_running_request_cancels_it_for_good() {
    let mut scenario = String::from(TABLES);
    for id in 1..=20_000 {
        scenario.push_str(&insert("load", "ITEMS", id, id % 1000));
    }
    scenario.push_str(&commit("load"));
    let port = free_port();
    let capture = Capture::new(
        &["APP.ORDERS", "APP.ITEMS"],
        &scenario,
        &format!("http: {{port: {port}}}\n"),
    );
    // The rows streamed first, then the request.
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let streamed = capture.events().len();
    set_snapshot(
        &capture,
        "{mode: never, fetchSize: 10, requests: [{id: reread-items-1, tables: [APP.ITEMS]}]}",
    );
    let mut child = capture.start();
    let running = child.wait_for(port, "the request running", |report| {
        report["snapshot"]["requests"][0]["tables"][0]["rowsRead"]
            .as_u64()
            .is_some_and(|rows| rows >= 50)
    });
    assert_eq!(running["snapshot"]["requests"][0]["state"], "Running");
    assert!(child.terminate().success());
    let read_before = capture.committed_events().len() - streamed;
    assert!(read_before < 20_000, "stopped part-way");
    // Removed from the spec: cancelled, nothing more read; put back, still nothing.
    let config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
    let without = config.replace(
        ", requests: [{id: reread-items-1, tables: [APP.ITEMS]}]",
        "",
    );
    std::fs::write(capture.path("capture.yaml"), &without).unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(capture.events().len(), streamed + read_before);
    let bookmark = std::fs::read_to_string(capture.path("out.jsonl.bookmark")).unwrap();
    assert!(bookmark.contains("\"Cancelled\""), "{bookmark}");
    std::fs::write(capture.path("capture.yaml"), &config).unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(
        capture.events().len(),
        streamed + read_before,
        "a cancelled id never runs again"
    );
}
