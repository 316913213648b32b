#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The initial snapshot through `redoline-capture run` on the simulator and the file sink:
//! every row appears exactly once, as an `r` event or as a later change, with transactions open,
//! committed and rolled back around the snapshot SCN; a SIGKILL mid-snapshot continues from the
//! last committed batch; ORA-01555 mid-table re-reads the table at a new SCN; every mode.
//!
//! A scenario file is the database: a second run with more lines appended sees the same
//! database later on (the first lines replay to the same SCNs), so "after the snapshot" is
//! whatever the second run's lines add.

use crate::run_support;

use std::collections::BTreeMap;
use std::time::Duration;

use redoline_capture::source::RowRange;
use redoline_capture::source::chunk_plan::ChunkPlan;
use redoline_capture::source::chunks::{LAST_ROW, extended_row_id, row_id_parts};
use run_support::lines::{commit, delete, insert, rollback, update};
use run_support::{Capture, Xorshift, free_port};
use serde_json::Value;

const ORDERS: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all"}
{"table":"APP.ITEMS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all"}
"#;

/// A capture of both tables with `snapshot` as its snapshot spec.
fn capture(scenario: &str, snapshot: &str, extra: &str) -> Capture {
    let capture = Capture::new(&["APP.ORDERS", "APP.ITEMS"], scenario, extra);
    let config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
    std::fs::write(
        capture.path("capture.yaml"),
        config.replace("snapshot: {mode: never}", &format!("snapshot: {snapshot}")),
    )
    .unwrap();
    capture
}

/// The same capture through the real Oracle client over the simulator's SQL door, so the
/// snapshot's flashback queries are evaluated as written (`docs/simulator.md`, Two doors).
fn through_sql(capture: Capture) -> Capture {
    let config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
    std::fs::write(
        capture.path("capture.yaml"),
        config.replace(
            "{scenario: scenario.jsonl}",
            "{scenario: scenario.jsonl, through: sql}",
        ),
    )
    .unwrap();
    capture
}

/// Room in the session pool for `threads` snapshot readers and the mining session.
fn with_readers(capture: Capture, threads: u32) -> Capture {
    let config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
    std::fs::write(
        capture.path("capture.yaml"),
        config.replace(
            "through: sql}",
            &format!("through: sql}}, maxConnections: {}", threads + 1),
        ),
    )
    .unwrap();
    capture
}

/// The table contents the events build, checking each event against it: an `r` or `i` of a
/// row already there, or a `u`/`d` of a row not there, is a duplicate or a gap.
fn replay(events: &[Value]) -> BTreeMap<(String, u64), u64> {
    let mut rows = BTreeMap::new();
    for event in events {
        let table = event["table"].as_str().unwrap().to_owned();
        let image = if event["op"] == "d" {
            &event["before"]
        } else {
            &event["after"]
        };
        let key = (table, image["ID"].as_u64().unwrap());
        let present = rows.contains_key(&key);
        match event["op"].as_str().unwrap() {
            "r" | "i" => {
                assert!(!present, "{key:?} appears twice: {event}");
                rows.insert(key, image["V"].as_u64().unwrap());
            }
            "u" => {
                assert!(
                    present,
                    "update of {key:?}, never read nor inserted: {event}"
                );
                rows.insert(key, image["V"].as_u64().unwrap());
            }
            "d" => {
                assert!(
                    present,
                    "delete of {key:?}, never read nor inserted: {event}"
                );
                rows.remove(&key);
            }
            other => panic!("unexpected op {other}"),
        }
    }
    rows
}

/// A deterministic workload around a snapshot: the lines before it, the lines after it, and the
/// final contents of the tables.
struct Workload {
    before: String,
    after: String,
    expected: BTreeMap<(String, u64), u64>,
}

/// Rows committed before the snapshot; transactions open at the snapshot SCN that commit after
/// it or roll back; transactions that begin after one of those and commit before the snapshot;
/// then more committed changes. Each open transaction works on rows of its own (row locks).
fn workload(seed: u64) -> Workload {
    let mut random = Xorshift::new(seed | 1);
    let mut next = move |n: u64| random.next() % n;
    let mut before = String::from(ORDERS);
    let mut committed: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let mut id = 0;
    for table in ["ORDERS", "ITEMS"] {
        for _ in 0..40 {
            id += 1;
            let v = next(1000);
            before.push_str(&insert("seed", table, id, v));
            committed.insert((table.to_owned(), id), v);
        }
    }
    before.push_str(&commit("seed"));
    // Each open transaction takes its own rows: a pending change and what commit does to the
    // committed contents.
    type Change = ((String, u64), Option<u64>);
    let mut free: Vec<(String, u64)> = committed.keys().cloned().collect();
    let mut take = |n: u64| -> Option<(String, u64)> {
        if free.is_empty() {
            None
        } else {
            Some(free.remove(usize::try_from(n).unwrap() % free.len()))
        }
    };
    let mut work = |tx: &str, lines: &mut String, id: &mut u64, changes: &mut Vec<Change>| {
        for _ in 0..3 {
            let table = if next(2) == 0 { "ORDERS" } else { "ITEMS" };
            match next(3) {
                0 => {
                    *id += 1;
                    let v = next(1000);
                    lines.push_str(&insert(tx, table, *id, v));
                    changes.push(((table.to_owned(), *id), Some(v)));
                }
                1 => {
                    if let Some(key) = take(next(1000)) {
                        let v = next(1000);
                        lines.push_str(&update(tx, &key.0, key.1, v));
                        changes.push((key, Some(v)));
                    }
                }
                _ => {
                    if let Some(key) = take(next(1000)) {
                        lines.push_str(&delete(tx, &key.0, key.1));
                        changes.push((key, None));
                    }
                }
            }
        }
    };
    let apply = |committed: &mut BTreeMap<(String, u64), u64>, changes: Vec<Change>| {
        for (key, value) in changes {
            match value {
                Some(v) => committed.insert(key, v),
                None => committed.remove(&key),
            };
        }
    };
    let mut late = Vec::new();
    for n in 0..4 {
        let (tx, mut changes) = (format!("late{n}"), Vec::new());
        work(&tx, &mut before, &mut id, &mut changes);
        late.push((tx, changes));
        // One that begins after an open one and commits before the snapshot.
        let (early, mut early_changes) = (format!("early{n}"), Vec::new());
        work(&early, &mut before, &mut id, &mut early_changes);
        before.push_str(&commit(&early));
        apply(&mut committed, early_changes);
        let (doomed, mut ignored) = (format!("doomed{n}"), Vec::new());
        work(&doomed, &mut before, &mut id, &mut ignored);
        late.push((doomed, Vec::new()));
    }
    let mut after = String::new();
    for (tx, changes) in late {
        if tx.starts_with("doomed") {
            after.push_str(&rollback(&tx));
        } else {
            after.push_str(&commit(&tx));
            apply(&mut committed, changes);
        }
    }
    // Rows the rolled-back transactions held are free again only once they ended; new work
    // after the snapshot uses fresh rows.
    for n in 0..5 {
        let (tx, mut changes) = (format!("after{n}"), Vec::new());
        work(&tx, &mut after, &mut id, &mut changes);
        after.push_str(&commit(&tx));
        apply(&mut committed, changes);
    }
    Workload {
        before,
        after,
        expected: committed,
    }
}

#[test]
fn every_row_appears_once_as_a_read_or_as_a_later_change() {
    for (seed, door, threads) in [
        (7, "boundary", 1),
        (1234, "sql", 1),
        (99_991, "boundary", 1),
        (31_337, "sql", 1),
        (4_242, "sql", 4),
        (77, "sql", 4),
    ] {
        let workload = workload(seed);
        let capture = capture(
            &workload.before,
            &format!("{{mode: initial, fetchSize: 7, maxThreads: {threads}}}"),
            "",
        );
        let capture = if door == "sql" {
            with_readers(through_sql(capture), threads)
        } else {
            capture
        };
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        let reads = capture.events();
        assert!(
            !reads.is_empty() && reads.iter().all(|e| e["op"] == "r"),
            "seed {seed}"
        );
        capture.append(&workload.after);
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        let events = capture.events();
        assert!(
            events[reads.len()..].iter().all(|e| e["op"] != "r"),
            "a completed snapshot is not taken again (seed {seed})"
        );
        assert_eq!(replay(&events), workload.expected, "seed {seed}");
    }
}

/// `rows` committed rows in each table.
fn big_tables(rows: u64) -> String {
    let mut lines = String::from(ORDERS);
    for table in ["ORDERS", "ITEMS"] {
        for id in 1..=rows {
            lines.push_str(&insert("load", table, id, id));
        }
    }
    lines.push_str(&commit("load"));
    lines
}

/// A capture of the two `rows`-row tables of `big_tables`, 50 rows a snapshot batch, started and
/// SIGKILLed once `/status` shows the snapshot past `past_rows` rows of its first table; returns
/// it and the progress it showed.
fn killed_mid_snapshot(rows: u64, past_rows: u64) -> (Capture, Value) {
    killed_mid_snapshot_reading(rows, past_rows, None)
}

/// As [`killed_mid_snapshot`], through the real client with `threads` parallel readers when
/// given.
fn killed_mid_snapshot_reading(
    rows: u64,
    past_rows: u64,
    threads: Option<u32>,
) -> (Capture, Value) {
    let port = free_port();
    let capture = capture(
        &big_tables(rows),
        &format!(
            "{{mode: initial, fetchSize: 50, maxThreads: {}}}",
            threads.unwrap_or(1)
        ),
        &format!("http: {{port: {port}}}\n"),
    );
    let capture = match threads {
        Some(threads) => with_readers(through_sql(capture), threads),
        None => capture,
    };
    let mut child = capture.spawn(true, "info");
    let report = child.wait_for_within(
        port,
        "the snapshot's progress",
        Duration::from_secs(60),
        Duration::from_millis(5),
        |report| {
            report["state"] == "snapshotting"
                && report["snapshot"]["rowsScanned"].as_u64().unwrap_or(0) > past_rows
        },
    );
    child.kill();
    (capture, report["snapshot"].clone())
}

#[test]
fn a_crash_mid_snapshot_continues_from_the_last_committed_batch() {
    const ROWS: u64 = 20_000;
    let (capture, progress) = killed_mid_snapshot(ROWS, 500);
    assert_eq!(progress["tablesTotal"], 2);
    assert_eq!(progress["tablesDone"], 0);
    assert_eq!(
        progress["rowsRemainingEstimate"].as_u64().unwrap()
            + progress["rowsScanned"].as_u64().unwrap(),
        2 * ROWS,
        "the estimate is the statistics' row count less the rows read: {progress}"
    );
    let before = capture.committed_events().len();
    assert!(before > 500 && before < 2 * ROWS as usize, "{before}");
    the_rest_delivers_each_row_once(&capture, ROWS);
}

/// The same with four readers through the real client: chunks read in parallel are written in
/// chunk order, so the finished chunks the bookmark records are exact and the resumed run
/// writes each row once.
#[test]
fn a_crash_mid_snapshot_with_four_readers_continues_from_the_last_committed_chunk() {
    const ROWS: u64 = 3_000;
    let (capture, _) = killed_mid_snapshot_reading(ROWS, 500, Some(4));
    let before = capture.committed_events().len();
    assert!(before > 500 && before < 2 * ROWS as usize, "{before}");
    let bookmark: Value =
        serde_json::from_str(&std::fs::read_to_string(capture.path("out.jsonl.bookmark")).unwrap())
            .unwrap();
    let text = bookmark.to_string();
    assert!(
        text.contains("chunks_done"),
        "the progress is chunks: {text}"
    );
    the_rest_delivers_each_row_once(&capture, ROWS);
}

/// A run of the killed capture to its end: every row of the two `rows`-row tables once in the
/// output, with its own value.
fn the_rest_delivers_each_row_once(capture: &Capture, rows: u64) {
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let events = capture.events();
    assert_eq!(events.len(), 2 * rows as usize, "no duplicate and no gap");
    let contents = replay(&events);
    assert_eq!(contents.len(), 2 * rows as usize);
    assert!(contents.iter().all(|((_, id), v)| id == v));
}

/// The snapshot progress in a bookmark file's JSON, wherever the sink keeps it.
fn snapshot_tables(value: &mut Value) -> Option<&mut Vec<Value>> {
    match value {
        Value::Object(map) => {
            if map.contains_key("completed") && map.get("tables").is_some_and(Value::is_array) {
                return map.get_mut("tables").and_then(Value::as_array_mut);
            }
            map.values_mut().find_map(snapshot_tables)
        }
        Value::Array(items) => items.iter_mut().find_map(snapshot_tables),
        _ => None,
    }
}

/// A bookmark written before chunks records the last ROWID written (`after_row_id`): a capture
/// of today goes on after it, in batches, and every row arrives once. The bookmark is made by
/// turning a chunked one back into that form: its plan keeps the chunks from the first one not
/// written on, and the ROWID above every row of the block before that chunk's first block stands
/// for the last ROWID written (through the real client, which compares ROWIDs by address as
/// Oracle does).
#[test]
fn a_bookmark_with_the_old_rowid_progress_goes_on_after_its_rowid() {
    const ROWS: u64 = 3_000;
    let (capture, _) = killed_mid_snapshot_reading(ROWS, 500, Some(1));
    let path = capture.path("out.jsonl.bookmark");
    let mut bookmark: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let tables = snapshot_tables(&mut bookmark).expect("a snapshot in progress");
    let table = tables
        .iter_mut()
        .find(|table| table.get("chunks").is_some())
        .expect("a table read in chunks");
    let written = table["chunks_done"][0][1].as_u64().expect("chunks written");
    let plan = ChunkPlan::decode(table["chunks"].as_str().expect("a packed plan")).unwrap();
    assert_eq!(
        plan.first(),
        written + 1,
        "the plan keeps the chunks not written"
    );
    let Some(RowRange::RowId { lo, .. }) = plan.get(written + 1) else {
        panic!("a ROWID range after the chunks written");
    };
    let (object, file, block, row) = row_id_parts(lo).unwrap();
    assert_eq!(row, 0);
    let last_row_id = Value::String(extended_row_id(object, file, block - 1, LAST_ROW).unwrap());
    let object = table.as_object_mut().unwrap();
    object.remove("chunks");
    object.remove("chunks_done");
    object.insert("after_row_id".to_owned(), last_row_id);
    std::fs::write(&path, bookmark.to_string()).unwrap();
    the_rest_delivers_each_row_once(&capture, ROWS);
}

#[test]
fn ora_01555_mid_table_reads_the_table_again_at_a_new_scn() {
    const ROWS: u64 = 20_000;
    let (capture, _) = killed_mid_snapshot(ROWS, 500);
    let before = capture.committed_events().len() as u64;
    // While the capture was down: a committed update of a row already read and one not read
    // yet, then the undo of the snapshot SCN is overwritten.
    let mut later = update("late", "ORDERS", 1, 777_777);
    later.push_str(&update("late", "ORDERS", ROWS, 888_888));
    later.push_str(&commit("late"));
    later.push_str("{\"undo_lost\":true}\n");
    capture.append(&later);
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("ORA-01555"), "{stderr}");
    assert!(
        capture.events().iter().all(|e| e["op"] == "r"),
        "the update committed before the table's new SCN is in its reading, not streamed"
    );
    // A change after the new SCN streams.
    capture.append(&(update("later", "ORDERS", 2, 999_999) + &commit("later")));
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let events = capture.events();
    let reads_of_orders = |events: &[Value]| {
        events
            .iter()
            .filter(|e| e["op"] == "r" && e["table"] == "ORDERS")
            .count() as u64
    };
    assert_eq!(
        reads_of_orders(&events),
        before + ROWS,
        "the rows read before the restart, then the whole table again"
    );
    // Apart from the table's first reading, every row once.
    let second_reading: Vec<Value> = events[before as usize..].to_vec();
    let contents = replay(&second_reading);
    assert_eq!(contents[&("ORDERS".to_owned(), 1)], 777_777);
    assert_eq!(contents[&("ORDERS".to_owned(), ROWS)], 888_888);
    assert_eq!(contents[&("ORDERS".to_owned(), 2)], 999_999);
    let updates: Vec<&Value> = events.iter().filter(|e| e["op"] == "u").collect();
    assert_eq!(
        updates.len(),
        1,
        "only the change after the new SCN streams: {updates:?}"
    );
}

#[test]
fn initial_only_snapshots_once_and_never_streams() {
    let capture = capture(&big_tables(3), "{mode: initial_only}", "");
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(capture.events().len(), 6);
    capture.append(&(insert("x", "ORDERS", 100, 1) + &commit("x")));
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(
        capture.events().len(),
        6,
        "a restart after the snapshot neither streams nor snapshots again"
    );
}

#[test]
fn no_data_streams_from_the_current_scn_and_schema_only_is_its_old_name() {
    for mode in ["no_data", "schema_only"] {
        let capture = capture(&big_tables(3), &format!("{{mode: {mode}}}"), "");
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        assert!(capture.events().is_empty(), "{mode}: no rows");
        assert_eq!(
            stderr.contains("schema_only is the old name"),
            mode == "schema_only"
        );
        capture.append(&(insert("x", "ORDERS", 100, 1) + &commit("x")));
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        let events = capture.events();
        assert_eq!(events.len(), 1, "{mode}");
        assert_eq!(events[0]["op"], "i");
    }
}

#[test]
fn never_streams_from_the_start_position() {
    let capture = capture(&big_tables(3), "{mode: never}", "");
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let events = capture.events();
    assert_eq!(
        events.len(),
        6,
        "startPosition earliest: every insert, streamed"
    );
    assert!(events.iter().all(|e| e["op"] == "i"));
}

#[test]
fn when_needed_snapshots_again_once_the_bookmarks_redo_is_gone() {
    let mut scenario = big_tables(3);
    // Open at the snapshot: the restart SCN stays at its start.
    scenario.push_str(&insert("open", "ITEMS", 50, 1));
    let capture = capture(&scenario, "{mode: when_needed}", "");
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(capture.events().len(), 6);
    // Without a purge the bookmark is usable: stream only.
    capture.append(&commit("open"));
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(capture.events().len(), 7);
    // The logs the restart SCN needs are purged.
    let bookmark: Value =
        serde_json::from_str(&std::fs::read_to_string(capture.path("out.jsonl.bookmark")).unwrap())
            .unwrap();
    let restart_scn = bookmark["bookmark"]["restart_scn"].as_u64().unwrap();
    capture.append(&format!(
        "{{\"log_switch\":true}}\n{}{}{{\"archive_purge_before_scn\":{}}}\n",
        insert("y", "ORDERS", 60, 1) + &commit("y"),
        // More switches than online groups (3): the restart SCN's log is archived only.
        "{\"log_switch\":true}\n".repeat(4),
        restart_scn + 1_000
    ));
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("when_needed takes a new snapshot"),
        "{stderr}"
    );
    let events = capture.events();
    let second: Vec<&Value> = events[7..].iter().collect();
    assert_eq!(
        second.iter().filter(|e| e["op"] == "r").count(),
        8,
        "a new snapshot of every row: {second:?}"
    );
}

/// The `source` blocks of a Debezium-format snapshot of `scenario`, `fetch_size` rows a batch.
fn snapshot_sources(scenario: &str, fetch_size: u32) -> Vec<Value> {
    let capture = capture(
        scenario,
        &format!("{{mode: initial, fetchSize: {fetch_size}}}"),
        "",
    );
    let config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
    std::fs::write(
        capture.path("capture.yaml"),
        config.replace("format: {type: compact}", "format: {type: debezium}"),
    )
    .unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    capture
        .events()
        .iter()
        .map(|line| {
            let value = &line["value"];
            value
                .get("payload")
                .unwrap_or(value)
                .get("source")
                .cloned()
                .unwrap()
        })
        .collect()
}

fn markers(sources: &[Value]) -> Vec<&str> {
    sources
        .iter()
        .map(|s| s["snapshot"].as_str().unwrap())
        .collect()
}

#[test]
fn markers_and_source_fields_follow_debezium() {
    let sources = snapshot_sources(&big_tables(3), 2);
    let markers = markers(&sources);
    assert_eq!(
        markers,
        [
            "first",
            "true",
            "last_in_data_collection",
            "first_in_data_collection",
            "true",
            "last"
        ]
    );
    let scn = &sources[0]["scn"];
    assert!(
        sources
            .iter()
            .all(|s| &s["scn"] == scn && s["commit_scn"].is_null() && s["txId"].is_null())
    );
}

/// Debezium marks the snapshot's final record `last` even when the tables after its table are
/// empty; here ITEMS, the last table, has no row.
#[test]
fn the_last_row_is_marked_last_when_the_tables_after_it_are_empty() {
    let mut orders_only = String::from(ORDERS);
    for id in 1..=3 {
        orders_only.push_str(&insert("load", "ORDERS", id, id));
    }
    orders_only.push_str(&commit("load"));
    // Three rows read two at a time, and three rows read in one batch.
    for fetch_size in [2, 3, 10] {
        let sources = snapshot_sources(&orders_only, fetch_size);
        let expected = ["first", "true", "last"];
        assert_eq!(markers(&sources), expected, "fetchSize {fetch_size}");
    }
}

#[test]
fn select_overrides_limit_the_rows_read() {
    let capture = capture(
        &big_tables(10),
        "{mode: initial, selectOverrides: {APP.ORDERS: \"ID > 7 AND V <> 9\"}}",
        "",
    );
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let events = capture.events();
    let orders: Vec<u64> = events
        .iter()
        .filter(|e| e["table"] == "ORDERS")
        .map(|e| e["after"]["ID"].as_u64().unwrap())
        .collect();
    assert_eq!(orders, [8, 10]);
    assert_eq!(events.iter().filter(|e| e["table"] == "ITEMS").count(), 10);

    // Through the real client, Oracle evaluates the condition, OR included.
    let through_oracle = through_sql(capture_with_override("ID = 1 OR ID > 9"));
    let (status, stderr) = through_oracle.run();
    assert_eq!(status, 0, "{stderr}");
    let orders: Vec<u64> = (through_oracle.events().iter())
        .filter(|e| e["table"] == "ORDERS")
        .map(|e| e["after"]["ID"].as_u64().unwrap())
        .collect();
    assert_eq!(orders, [1]);

    let refused = capture_with_override("ID = 1 OR ID = 2");
    let (status, stderr) = refused.run();
    assert_eq!(status, 3, "{stderr}");
    let termination = refused.termination();
    assert_eq!(termination["code"], "CDC-1001", "{termination}");
    let message = termination["message"].as_str().unwrap();
    assert!(
        message.contains("selectOverrides") && message.contains("joined by AND"),
        "a condition outside the simulator's subset is a typed stop naming the field: {message}"
    );
}

fn capture_with_override(condition: &str) -> Capture {
    capture(
        &big_tables(2),
        &format!("{{mode: initial, selectOverrides: {{APP.ORDERS: \"{condition}\"}}}}"),
        "",
    )
}

/// ORDERS range-partitioned on ID (the partition below 3000 left empty) and ITEMS
/// index-organised on a composite key, both read by the initial snapshot through the real
/// client over the simulator's SQL door, with one reader and with four: every committed row
/// once, as the table was at the snapshot SCN, and the changes after it streamed on top.
#[test]
fn partitioned_and_index_organised_tables_are_snapshotted_whole() {
    const LAID_OUT: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all","range":{"column":"ID","partitions":[{"name":"P1","below":1000},{"name":"P2","below":2000},{"name":"P3","below":3000},{"name":"PMAX"}]}}
{"table":"APP.ITEMS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"K","type":"VARCHAR2(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all","organization":"index"}
"#;
    let item = |tx: &str, id: u64, v: u64| {
        format!(
            "{{\"tx\":\"{tx}\",\"insert\":\"APP.ITEMS\",\"values\":{{\"ID\":{id},\"K\":\"k{}\",\"V\":{v}}}}}\n",
            id % 13
        )
    };
    let mut before = String::from(LAID_OUT);
    let mut expected = BTreeMap::new();
    for n in 0..300_u64 {
        // Round-robin over P1, P2 and PMAX; ITEMS keys out of order.
        let id = [n, 1_000 + n, 5_000 + n][(n % 3) as usize];
        before.push_str(&insert("a", "ORDERS", id, n));
        expected.insert(("ORDERS".to_owned(), id), n);
        let id = (n * 37) % 300;
        before.push_str(&item("a", id, n));
        expected.insert(("ITEMS".to_owned(), id), n);
    }
    before.push_str(&commit("a"));
    for id in (0..300).step_by(9) {
        before.push_str(&delete("b", "ORDERS", id));
        expected.remove(&("ORDERS".to_owned(), id));
    }
    before.push_str(&commit("b"));
    let mut after = String::new();
    for id in (1_001..1_300).step_by(30) {
        after.push_str(&update("c", "ORDERS", id, 7));
        expected.insert(("ORDERS".to_owned(), id), 7);
    }
    after.push_str(&item("c", 10_000, 8));
    expected.insert(("ITEMS".to_owned(), 10_000), 8);
    after.push_str(&commit("c"));
    for threads in [1, 4] {
        let capture = with_readers(
            through_sql(capture(
                &before,
                &format!("{{mode: initial, fetchSize: 16, maxThreads: {threads}}}"),
                "",
            )),
            threads,
        );
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        let reads = capture.events();
        assert!(reads.iter().all(|e| e["op"] == "r"), "{threads} readers");
        assert_eq!(
            reads.len(),
            300 + 300 - (0..300).step_by(9).count(),
            "{threads} readers"
        );
        capture.append(&after);
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{stderr}");
        assert_eq!(replay(&capture.events()), expected, "{threads} readers");
    }
}
