#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The field corpus: Oracle behaviours reported in the field (Debezium's LogMiner fixes), one
//! simulator scenario each under `fixtures/field/`, every one run through the real
//! `redoline-capture run` binary (simulator source, file sink, compact format, no snapshot, from
//! the oldest redo).
//!
//! Each run is checked against models independent of the capture:
//! - replaying the emitted changes of each table (by key, or by the whole row for a table
//!   without one) gives exactly the simulator's own committed rows at the scenario's end;
//! - each transaction's events are together (no transaction twice), commit SCNs never go back;
//! - no event of a rolled-back, killed or RESETLOGS-abandoned transaction appears, and a
//!   committed transaction has exactly one change event per surviving change (the steps a
//!   rollback to a savepoint or a failed statement undid do not count);
//! - or, for a fixture declaring `# expect: stop CDC-NNNN`, the capture stops with that code.
//!
//! Comment lines a fixture may carry (the first line is always its description):
//! - `# expect: stop CDC-NNNN`: the run ends with that typed stop instead of data;
//! - `# config: <yaml>`: a line appended to the capture's config;
//! - `# start: <yaml>`: the capture's `startPosition` instead of `{type: earliest}`;
//! - `# pdb: NAME`: the capture's `database.pdb` (a CDB scenario);
//! - `# uncaptured: OWNER.TABLE`: a declared table the capture leaves out;
//! - `# touches: N`: the next step changes N rows (default 1) for the event count;
//! - `# event: {"op": .., "table": "OWNER.TABLE", "tx": .., "after": {..}, "before": {..}}`: one
//!   line per change event (`i`, `u`, `d`) the run must publish, all of them, in this order; each
//!   named field must equal the event's (`tx` is the scenario's transaction name, `after` and
//!   `before` the whole image, `ts` the compact format's UTC commit time).
//!
//! A fixture named `*.jsonl.pending` is skipped: it shows a capture bug not fixed yet.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use redoline_capture::event::compact::write_value;
use redoline_capture::simulator::Simulator;
use redoline_capture::source::DatabaseCatalog;
use serde_json::{Map, Value};

use crate::run_support;

use run_support::Capture;

const MINIMUM_FIXTURES: usize = 30;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/field")
}

/// What a fixture says about itself in its comments.
struct Fixture {
    name: String,
    text: String,
    expect_stop: Option<String>,
    config: Vec<String>,
    start: Option<String>,
    pdb: Option<String>,
    tables: Vec<String>,
    /// The change events the run must publish, in order (`# event:` lines).
    events: Vec<Value>,
}

fn read_fixture(path: &Path) -> Fixture {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("# ") && first.contains(" — reported: DBZ-"),
        "{name}: the first line must be `# <Oracle behaviour> — reported: DBZ-NNNN (<where>)`, not {first:?}"
    );
    let mut expect_stop = None;
    let mut config = Vec::new();
    let mut start = None;
    let mut pdb = None;
    let mut uncaptured = Vec::new();
    let mut tables = Vec::new();
    let mut events = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("# event: ") {
            events.push(
                serde_json::from_str(rest)
                    .unwrap_or_else(|e| panic!("{name}: `# event:` is not JSON: {rest}: {e}")),
            );
        } else if let Some(rest) = line.strip_prefix("# expect: stop ") {
            expect_stop = Some(rest.trim().to_owned());
        } else if let Some(rest) = line.strip_prefix("# config: ") {
            config.push(rest.to_owned());
        } else if let Some(rest) = line.strip_prefix("# start: ") {
            start = Some(rest.trim().to_owned());
        } else if let Some(rest) = line.strip_prefix("# pdb: ") {
            pdb = Some(rest.trim().to_owned());
        } else if let Some(rest) = line.strip_prefix("# uncaptured: ") {
            uncaptured.push(rest.trim().to_owned());
        } else if !line.starts_with('#') && !line.is_empty() {
            let step: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{name}: not JSON: {line}: {e}"));
            if let (Some(table), Some(_)) = (step["table"].as_str(), step.get("columns")) {
                assert!(
                    table.contains('.'),
                    "{name}: name the owner of {table} (tables are captured by OWNER.TABLE)"
                );
                tables.push(table.to_owned());
            }
            if let Some(ddl) = step["ddl"].as_str()
                && let Some(rest) = ddl.strip_prefix("CREATE TABLE ")
            {
                tables.push(rest.split([' ', '(']).next().unwrap().to_owned());
            }
        }
    }
    tables.retain(|t| !uncaptured.contains(t));
    Fixture {
        name,
        text,
        expect_stop,
        config,
        start,
        pdb,
        tables,
        events,
    }
}

/// A scenario transaction as the scenario's own steps decide its fate.
#[derive(Debug)]
struct ScenarioTx {
    name: String,
    xid: String,
    /// Changes surviving so far, one entry per step (its row count).
    changes: Vec<usize>,
    savepoints: Vec<(String, usize)>,
    /// A LOB step: its events merge with the row's, so no count is checked.
    lob: bool,
    outcome: Option<bool>,
}

/// The in-process simulator at the scenario's end and the transactions the scenario ran.
struct Model {
    sim: Simulator,
    transactions: Vec<ScenarioTx>,
}

fn model(fixture: &Fixture) -> Model {
    let mut sim = Simulator::new();
    let mut transactions: Vec<ScenarioTx> = Vec::new();
    let mut open: HashMap<String, usize> = HashMap::new();
    let mut touches = 1;
    for line in fixture.text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("# touches: ") {
            touches = rest.trim().parse().unwrap();
        }
        let known: BTreeSet<String> = sim
            .open_transactions()
            .unwrap()
            .into_iter()
            .map(|t| t.xid.to_string())
            .collect();
        sim.apply_line(line)
            .unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let step: Value = serde_json::from_str(trimmed).unwrap();
        if step.get("resetlogs").is_some() {
            for (_, index) in open.drain() {
                transactions[index].outcome = Some(false);
            }
        }
        let Some(name) = step["tx"].as_str() else {
            continue;
        };
        let changes_rows = ["insert", "update", "delete"]
            .iter()
            .any(|k| step.get(*k).is_some());
        let lob = ["lob_write", "lob_trim", "lob_erase"]
            .iter()
            .any(|k| step.get(*k).is_some());
        if (changes_rows || lob || step.get("unsupported").is_some()) && !open.contains_key(name) {
            let started: Vec<String> = sim
                .open_transactions()
                .unwrap()
                .into_iter()
                .map(|t| t.xid.to_string())
                .filter(|xid| !known.contains(xid))
                .collect();
            assert_eq!(started.len(), 1, "{}: tx {name} has one XID", fixture.name);
            open.insert(name.to_owned(), transactions.len());
            transactions.push(ScenarioTx {
                name: name.to_owned(),
                xid: started[0].clone(),
                changes: Vec::new(),
                savepoints: Vec::new(),
                lob: false,
                outcome: None,
            });
        }
        let Some(&index) = open.get(name) else {
            continue;
        };
        let tx = &mut transactions[index];
        let captured = ["insert", "update", "delete"]
            .iter()
            .filter_map(|k| step[*k].as_str())
            .any(|table| fixture.tables.iter().any(|t| t == table));
        if changes_rows && captured && step["fails"] != Value::Bool(true) {
            tx.changes.push(touches);
        }
        if changes_rows {
            touches = 1;
        }
        tx.lob |= lob;
        if let Some(savepoint) = step["savepoint"].as_str() {
            tx.savepoints.retain(|(n, _)| n != savepoint);
            tx.savepoints.push((savepoint.to_owned(), tx.changes.len()));
        }
        if let Some(savepoint) = step["rollback_to"].as_str() {
            let at = tx
                .savepoints
                .iter()
                .position(|(n, _)| n == savepoint)
                .unwrap();
            let kept = tx.savepoints[at].1;
            tx.changes.truncate(kept);
            tx.savepoints.truncate(at + 1);
        }
        let ends = if step.get("commit").is_some() {
            Some(true)
        } else if step.get("rollback").is_some() || step.get("kill").is_some() {
            Some(false)
        } else {
            None
        };
        if let Some(committed) = ends {
            tx.outcome = Some(committed);
            open.remove(name);
        }
    }
    Model { sim, transactions }
}

/// A row as compact JSON values by column name.
type JsonRow = Map<String, Value>;

/// The committed rows of a table, rendered as the compact format writes values.
fn expected_rows(sim: &Simulator, table: &str) -> Vec<JsonRow> {
    let (owner, name) = table.split_once('.').unwrap();
    let Some(schema) = sim.schema(owner, name) else {
        return Vec::new(); // dropped
    };
    sim.committed_rows(owner, name)
        .unwrap()
        .into_iter()
        .map(|(_, values)| {
            schema
                .columns()
                .iter()
                .zip(values)
                .map(|(column, value)| {
                    let mut text = String::new();
                    write_value(&mut text, &column.data_type, &value);
                    (column.name.clone(), serde_json::from_str(&text).unwrap())
                })
                .collect()
        })
        .collect()
}

/// The rows replaying a table's change events gives; an error names the first event that
/// matches no row.
fn replay(events: &[Value], table: &str, key: &[String]) -> Result<Vec<JsonRow>, String> {
    let (owner, name) = table.split_once('.').unwrap();
    let mut rows: Vec<JsonRow> = Vec::new();
    let matches = |row: &JsonRow, image: &JsonRow| {
        if key.is_empty() {
            image
                .iter()
                .all(|(c, v)| row.get(c).unwrap_or(&Value::Null) == v)
        } else {
            key.iter().all(|c| row.get(c) == image.get(c))
        }
    };
    for event in events {
        if event["schema"] != owner || event["table"] != name {
            continue;
        }
        let image = |side: &str| event[side].as_object().cloned().unwrap_or_default();
        match event["op"].as_str().unwrap() {
            "i" => rows.push(image("after")),
            "u" | "d" => {
                let mut before = image("before");
                if !key.is_empty() && !key.iter().all(|c| before.contains_key(c)) {
                    before = image("after");
                }
                let Some(at) = rows.iter().position(|row| matches(row, &before)) else {
                    return Err(format!(
                        "no replayed row matches the before image of {event}"
                    ));
                };
                if event["op"] == "u" {
                    for (column, value) in image("after") {
                        rows[at].insert(column, value);
                    }
                } else {
                    rows.remove(at);
                }
            }
            "truncate" => rows.clear(),
            "ddl" => {
                if event["sql"]
                    .as_str()
                    .is_some_and(|sql| sql.to_uppercase().starts_with("DROP TABLE"))
                {
                    rows.clear();
                }
            }
            other => return Err(format!("unexpected op {other} in {event}")),
        }
    }
    Ok(rows)
}

/// Rows projected onto the expected columns (a column added later is NULL in older rows, a
/// dropped one is gone), sorted so that row order does not matter.
fn normalized(rows: Vec<JsonRow>, columns: &[String]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .into_iter()
        .map(|row| {
            let projected: JsonRow = columns
                .iter()
                .map(|c| (c.clone(), row.get(c).cloned().unwrap_or(Value::Null)))
                .collect();
            Value::Object(projected).to_string()
        })
        .collect();
    out.sort();
    out
}

/// A RAC scenario cannot run with `--exit-at-end`: its end is the current SCN, and only the
/// flush write of the connected instance (thread 1) passes it, so a quiet thread 2 holds capture
/// below it for ever (`capture_features.rs` runs RAC the same way). Runs as a pod does, until
/// the expected number of change events is out (at most 60 s), then SIGTERM.
fn run_rac(capture: &Capture, expected_events: usize) -> (i32, String) {
    let mut child = capture.start();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let changes = |capture: &Capture| {
        capture
            .committed_events()
            .iter()
            .filter(|e| ["i", "u", "d"].contains(&e["op"].as_str().unwrap_or("")))
            .count()
    };
    // A fixture that expects a stop ends the run early: its exit is the outcome.
    while changes(capture) < expected_events
        && std::time::Instant::now() < deadline
        && child.try_wait().is_none()
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Anything more (a duplicate, a rolled-back change) would come right after.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let exit = match child.try_wait() {
        Some(exit) => exit,
        None => child.terminate(),
    };
    (exit.code().unwrap_or(-1), child.stderr())
}

/// Runs one fixture through one door of the simulator (`boundary`, or `sql`: the real Oracle
/// client over the simulator's model of Oracle); the failures found (empty when it passes).
fn check(path: &Path, door: &str) -> Vec<String> {
    let fixture = read_fixture(path);
    let name = format!("{} (through {door})", fixture.name);
    let model = model(&fixture);
    let tables: Vec<&str> = fixture.tables.iter().map(String::as_str).collect();
    let capture = Capture::new(&tables, &fixture.text, &fixture.config.join("\n"));
    let mut config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
    if let Some(start) = &fixture.start {
        config = config.replace(
            "startPosition: {type: earliest}",
            &format!("startPosition: {start}"),
        );
    }
    if let Some(pdb) = &fixture.pdb {
        config = config.replace("database: {", &format!("database: {{pdb: {pdb}, "));
    }
    config = config.replace(
        "{scenario: scenario.jsonl}",
        &format!("{{scenario: scenario.jsonl, through: {door}}}"),
    );
    std::fs::write(capture.path("capture.yaml"), config).unwrap();
    // A change event per surviving change of every committed transaction.
    let expected_events: usize = model
        .transactions
        .iter()
        .filter(|tx| tx.outcome == Some(true))
        .map(|tx| tx.changes.iter().sum::<usize>())
        .sum();
    let (status, stderr) = if fixture.text.contains("\"thread\":") {
        run_rac(&capture, expected_events)
    } else {
        capture.run()
    };
    let events = capture.events();
    let mut failures = Vec::new();
    let mut fail = |message: String| failures.push(format!("{name}: {message}"));

    if let Some(code) = &fixture.expect_stop {
        if status == 0 {
            fail(format!("expected stop {code}, the run ended normally"));
        } else {
            let termination = capture.termination();
            if termination["code"] != code.as_str() {
                fail(format!(
                    "expected stop {code}, got {termination} ({stderr})"
                ));
            }
        }
    } else if status != 0 {
        fail(format!("exit status {status}: {stderr}"));
        return failures;
    }

    // Commit order, each transaction together, one commit SCN each.
    let mut last_commit = 0;
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    let mut previous: Option<String> = None;
    for event in &events {
        let (Some(xid), Some(commit)) = (event["xid"].as_str(), event["commit_scn"].as_u64())
        else {
            fail(format!("an event without xid or commit_scn: {event}"));
            continue;
        };
        if commit < last_commit {
            fail(format!("commit SCN {commit} after {last_commit}: {event}"));
        }
        last_commit = commit;
        if previous.as_deref() != Some(xid) {
            if seen.contains_key(xid) {
                fail(format!("transaction {xid} appears twice: {event}"));
            }
            seen.insert(xid.to_owned(), commit);
        } else if seen[xid] != commit {
            fail(format!("transaction {xid} with two commit SCNs: {event}"));
        }
        previous = Some(xid.to_owned());
    }

    // Rolled-back work is never published; a committed transaction has one event per change.
    for tx in &model.transactions {
        let published = events
            .iter()
            .filter(|e| {
                e["xid"] == tx.xid.as_str()
                    && ["i", "u", "d"].contains(&e["op"].as_str().unwrap_or(""))
            })
            .count();
        match tx.outcome {
            Some(true) if fixture.expect_stop.is_none() && !tx.lob => {
                let expected: usize = tx.changes.iter().sum();
                if published != expected {
                    fail(format!(
                        "transaction {} ({}): {published} change events, {expected} changes survive",
                        tx.name, tx.xid
                    ));
                }
            }
            Some(false) | None if published > 0 => fail(format!(
                "transaction {} ({}) was {} but {published} of its events were published",
                tx.name,
                tx.xid,
                if tx.outcome.is_none() {
                    "never committed"
                } else {
                    "rolled back"
                },
            )),
            _ => {}
        }
    }

    if !fixture.events.is_empty() {
        let published: Vec<&Value> = events
            .iter()
            .filter(|e| ["i", "u", "d"].contains(&e["op"].as_str().unwrap_or("")))
            .collect();
        let shown = |event: &Value| {
            let tx = model
                .transactions
                .iter()
                .find(|tx| event["xid"] == tx.xid.as_str())
                .map(|tx| tx.name.as_str());
            serde_json::json!({
                "op": event["op"],
                "table": format!(
                    "{}.{}",
                    event["schema"].as_str().unwrap_or("?"),
                    event["table"].as_str().unwrap_or("?")
                ),
                "tx": tx,
                "after": event["after"],
                "before": event["before"],
                "ts": event["ts"],
            })
        };
        let differs = published.len() != fixture.events.len()
            || published
                .iter()
                .zip(&fixture.events)
                .any(|(event, expected)| {
                    let event = shown(event);
                    expected
                        .as_object()
                        .unwrap()
                        .iter()
                        .any(|(field, value)| &event[field] != value)
                });
        if differs {
            let got: Vec<String> = published.iter().map(|e| shown(e).to_string()).collect();
            fail(format!(
                "the change events differ from the {} `# event:` lines; published:\n  {}",
                fixture.events.len(),
                got.join("\n  ")
            ));
        }
    }

    if fixture.expect_stop.is_none() {
        for table in &fixture.tables {
            let (owner, table_name) = table.split_once('.').unwrap();
            let schema = model.sim.schema(owner, table_name);
            let columns: Vec<String> = schema
                .as_ref()
                .map(|s| s.columns().iter().map(|c| c.name.clone()).collect())
                .unwrap_or_default();
            let key: Vec<String> = schema
                .as_ref()
                .map(|s| s.key_columns().map(|c| c.name.clone()).collect())
                .unwrap_or_default();
            let expected = normalized(expected_rows(&model.sim, table), &columns);
            let got = match replay(&events, table, &key) {
                Ok(rows) => normalized(rows, &columns),
                Err(message) => {
                    fail(format!("{table}: {message}"));
                    continue;
                }
            };
            if expected != got {
                let at = expected
                    .iter()
                    .zip(&got)
                    .position(|(e, g)| e != g)
                    .unwrap_or(expected.len().min(got.len()));
                fail(format!(
                    "{table}: {} rows expected, {} replayed; first difference at row {at}:\n  expected {}\n  replayed {}",
                    expected.len(),
                    got.len(),
                    expected.get(at).map_or("(none)", String::as_str),
                    got.get(at).map_or("(none)", String::as_str),
                ));
            }
        }
    }
    failures
}

#[test]
fn every_field_fixture_holds() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= MINIMUM_FIXTURES,
        "the field corpus has {} fixtures, at least {MINIMUM_FIXTURES} expected",
        paths.len()
    );
    // Every fixture through both doors: the real client must read each scenario as the
    // simulator's own boundary does.
    let runs: Vec<(PathBuf, &str)> = paths
        .iter()
        .flat_map(|path| [(path.clone(), "boundary"), (path.clone(), "sql")])
        .collect();
    let queue = Mutex::new(runs);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let Some((path, door)) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let found =
                        std::panic::catch_unwind(|| check(&path, door)).unwrap_or_else(|panic| {
                            let message = panic
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                                .unwrap_or_default();
                            vec![format!("{} (through {door}): {message}", path.display())]
                        });
                    failures.lock().unwrap().extend(found);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} field fixtures failed:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
