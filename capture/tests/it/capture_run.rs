#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! `redoline-capture run` end to end on the simulator and the file sink: what is emitted, that a
//! restart or a SIGKILL at any moment neither repeats nor loses a transaction, and the typed stops
//! with their termination messages.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use crate::run_support;

use run_support::{BINARY, Capture, Xorshift};

/// A capture of the two tables of [`TABLES`].
/// Replaces `from` by `to` in the run's config.
fn edit_config(run: &Capture, from: &str, to: &str) {
    let config = std::fs::read_to_string(run.path("capture.yaml")).unwrap();
    assert!(config.contains(from), "{from:?} is not in the config");
    std::fs::write(run.path("capture.yaml"), config.replace(from, to)).unwrap();
}

fn new_run(scenario: &str, extra: &str) -> Capture {
    Capture::new(&["APP.ORDERS", "APP.ITEMS"], scenario, extra)
}

const TABLES: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"STATUS","type":"VARCHAR2(16)"},{"name":"TOTAL","type":"NUMBER(12,2)"}],"logging":"all"}
{"table":"APP.ITEMS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"ORDER_ID","type":"NUMBER(10)"},{"name":"NOTE","type":"VARCHAR2(4000)"}],"logging":"all"}
"#;

/// A deterministic interleaving of transactions with savepoints, rollbacks and failed statements.
fn workload(transactions: u32) -> (String, Vec<(String, u64)>) {
    let mut lines = String::from(TABLES);
    let mut expected = Vec::new();
    let mut random = Xorshift::new(0x9e37_79b9_7f4a_7c15);
    let mut next = || random.next();
    let mut open: Vec<(u32, Vec<(String, u64)>)> = Vec::new();
    let mut id = 0u64;
    let mut started = 0;
    while started < transactions || !open.is_empty() {
        if started < transactions && (open.len() < 3 || next() % 3 == 0) {
            open.push((started, Vec::new()));
            started += 1;
        }
        let pick = (next() % open.len() as u64) as usize;
        let (tx, changes) = &mut open[pick];
        let tx = *tx;
        match next() % 10 {
            0 if !changes.is_empty() => {
                lines.push_str(&format!("{{\"tx\":\"t{tx}\",\"rollback\":true}}\n"));
                open.remove(pick);
            }
            1 | 2 if !changes.is_empty() => {
                lines.push_str(&format!("{{\"tx\":\"t{tx}\",\"commit\":true}}\n"));
                let (_, changes) = open.remove(pick);
                expected.extend(changes);
            }
            3 => {
                id += 1;
                lines.push_str(&format!(
                    "{{\"tx\":\"t{tx}\",\"savepoint\":\"s\"}}\n{{\"tx\":\"t{tx}\",\"insert\":\"APP.ITEMS\",\"values\":{{\"ID\":{id},\"ORDER_ID\":1,\"NOTE\":\"undone\"}}}}\n{{\"tx\":\"t{tx}\",\"rollback_to\":\"s\"}}\n"
                ));
            }
            4 => {
                id += 1;
                let note = "x".repeat((next() % 3000) as usize + 1);
                lines.push_str(&format!(
                    "{{\"tx\":\"t{tx}\",\"insert\":\"APP.ITEMS\",\"values\":{{\"ID\":{id},\"ORDER_ID\":{tx},\"NOTE\":\"{note}\"}}}}\n"
                ));
                changes.push(("ITEMS".to_owned(), id));
            }
            _ => {
                id += 1;
                lines.push_str(&format!(
                    "{{\"tx\":\"t{tx}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{id},\"STATUS\":\"NEW\",\"TOTAL\":\"{}.{:02}\"}}}}\n",
                    next() % 1000,
                    next() % 100
                ));
                changes.push(("ORDERS".to_owned(), id));
            }
        }
        if next() % 50 == 0 {
            lines.push_str("{\"log_switch\":true}\n");
        }
    }
    (lines, expected)
}

fn emitted(events: &[Value]) -> Vec<(String, u64)> {
    events
        .iter()
        .map(|e| {
            (
                e["table"].as_str().unwrap().to_owned(),
                e["after"]["ID"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn committed_transactions_are_emitted_once_in_commit_order() {
    let (scenario, expected) = workload(300);
    let run = new_run(&scenario, "");
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    let events = run.events();
    assert_eq!(emitted(&events), expected, "rolled back work never appears");
    let commit_scns: Vec<u64> = events
        .iter()
        .map(|e| e["commit_scn"].as_u64().unwrap())
        .collect();
    assert!(commit_scns.windows(2).all(|w| w[0] <= w[1]), "commit order");
    // A second run resumes from the bookmark and adds nothing.
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(run.events().len(), events.len());
}

#[test]
fn a_tiny_heap_budget_spills_and_still_emits_everything() {
    // One transaction of 5,000 rows of 3,900 bytes (about 20 MB of SQL_REDO), open across the
    // whole workload, must pass the 16 MiB budget and spill.
    let (workload, mut expected) = workload(120);
    let note = "s".repeat(3_900);
    let big = |id: u64| {
        format!(
            "{{\"tx\":\"big\",\"insert\":\"APP.ITEMS\",\"values\":{{\"ID\":{id},\"ORDER_ID\":1,\"NOTE\":\"{note}\"}}}}\n"
        )
    };
    let (tables, steps) = workload.split_at(TABLES.len());
    let mut scenario = tables.to_owned();
    let ids = 1_000_000..1_005_000u64;
    for id in ids.clone() {
        scenario.push_str(&big(id));
    }
    scenario.push_str(steps);
    scenario.push_str("{\"tx\":\"big\",\"commit\":true}\n");
    expected.extend(ids.map(|id| ("ITEMS".to_owned(), id)));
    let port = run_support::free_port();
    let run = new_run(
        &scenario,
        &format!(
            "buffer: {{memoryMaxBytes: 16Mi, spill: {{dir: spill, maxBytes: 1Gi}}}}\nhttp: {{port: {port}}}\n"
        ),
    );
    // Runs on (no --exit-at-end) so its metrics can be read once everything is out.
    let mut child = run.start();
    child.wait_until(
        "everything emitted",
        std::time::Duration::from_secs(120),
        std::time::Duration::from_millis(100),
        |_| run.committed_events().len() >= expected.len(),
    );
    let spilled =
        run_support::metric(port, "redoline_capture_buffer_spill_write_bytes_total").unwrap_or(0.0);
    assert_eq!(child.terminate().code(), Some(0));
    assert!(spilled > 16.0 * 1024.0 * 1024.0, "spilled {spilled} bytes");
    assert_eq!(emitted(&run.events()), expected);
}

#[test]
fn sigkill_at_any_moment_neither_repeats_nor_loses_a_transaction() {
    let (scenario, expected) = workload(1500);
    let config = "mining: {maxScnWindow: 1000}\n";
    // An uninterrupted run sets the time scale: kills land anywhere from start-up to the end.
    let reference = new_run(&scenario, config);
    let started = Instant::now();
    assert_eq!(reference.run().0, 0);
    let full_run = started.elapsed();
    assert_eq!(emitted(&reference.events()), expected);

    let run = new_run(&scenario, config);
    let mut kills = 0;
    let mut state = 0x2545_f491_u64;
    while kills < 12 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        let fraction = 0.1 + (state >> 33) as f64 / f64::from(u32::MAX) * 0.8;
        let mut child = run.spawn(true, "info");
        std::thread::sleep(full_run.mul_f64(fraction));
        match child.try_wait() {
            Some(status) => {
                assert_eq!(status.code(), Some(0), "a run failed: {}", child.stderr());
                break;
            }
            None => {
                child.kill();
                kills += 1;
            }
        }
    }
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(emitted(&run.events()), expected, "after {kills} kills");
    assert_eq!(
        std::fs::read(run.path("out.jsonl")).unwrap(),
        std::fs::read(reference.path("out.jsonl")).unwrap(),
        "the killed run's file equals the uninterrupted one, byte for byte"
    );
}

#[test]
fn an_invalid_config_is_cdc_1001_naming_the_field() {
    let run = new_run(TABLES, "mining: {maxScnWindow: 5}\n");
    let (status, _) = run.run();
    assert_eq!(status, 3);
    let message = run.termination();
    assert_eq!(message["code"], "CDC-1001");
    assert_eq!(message["details"]["field"], "mining.maxScnWindow");
    assert!(
        message["details"].get("position").is_none(),
        "no bookmark was read: no position to report"
    );
}

#[test]
fn an_unsupported_change_stops_with_cdc_6001_or_is_skipped() {
    let scenario = format!(
        "{TABLES}{{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":1}}}}\n{{\"tx\":\"a\",\"commit\":true}}\n{{\"unsupported\":\"APP.ORDERS\"}}\n{{\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":2}}}}\n{{\"tx\":\"b\",\"commit\":true}}\n"
    );
    let run = new_run(&scenario, "");
    assert_eq!(run.run().0, 3);
    let message = run.termination();
    assert_eq!(message["code"], "CDC-6001");
    // Where it stopped, for the operator's lag estimate: past transaction `a`, with its time.
    let position = &message["details"]["position"];
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(run.path("out.jsonl.bookmark")).unwrap())
            .unwrap();
    assert_eq!(
        position["commitScn"], stored["bookmark"]["commit_scn"],
        "{message}"
    );
    assert!(position["commitTime"].is_string(), "{message}");
    assert_eq!(
        emitted(&run.events()),
        [("ORDERS".to_owned(), 1)],
        "nothing after the stop"
    );

    let skipping = new_run(&scenario, "mining: {onUnsupported: skip}\n");
    assert_eq!(skipping.run().0, 0);
    assert_eq!(
        emitted(&skipping.events()),
        [("ORDERS".to_owned(), 1), ("ORDERS".to_owned(), 2)]
    );
}

#[test]
fn the_spill_cap_stops_with_cdc_4001_listing_the_largest_transactions() {
    // 5,000 rows of 4,000 characters: far over the 16Mi heap budget, so the transaction spills,
    // and its file passes the 1Mi cap.
    let mut scenario = String::from(TABLES);
    let note = "y".repeat(4000);
    for i in 0..5000 {
        scenario.push_str(&format!(
            "{{\"tx\":\"big\",\"insert\":\"APP.ITEMS\",\"values\":{{\"ID\":{i},\"ORDER_ID\":1,\"NOTE\":\"{note}\"}}}}\n"
        ));
    }
    scenario.push_str("{\"tx\":\"big\",\"commit\":true}\n");
    let run = new_run(
        &scenario,
        "buffer: {memoryMaxBytes: 16Mi, spill: {dir: spill, maxBytes: 1Mi}}\n",
    );
    let (status, stderr) = run.run();
    assert_eq!(status, 3, "{stderr}");
    let message = run.termination();
    assert_eq!(message["code"], "CDC-4001");
    let listed = message["details"]["transactions"].as_array().unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0]["diskBytes"].as_u64().unwrap() > 0);
    assert!(
        run.events().is_empty(),
        "nothing of the transaction is emitted"
    );
}

#[test]
fn purged_redo_stops_with_cdc_2001_naming_the_range() {
    let mut scenario = String::from(TABLES);
    scenario.push_str("{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n{\"tx\":\"a\",\"commit\":true}\n");
    scenario.push_str("{\"log_switch\":true}\n{\"log_switch\":true}\n{\"log_switch\":true}\n");
    scenario.push_str("{\"archive_purge_before_scn\":1000010}\n");
    let run = new_run(&scenario, "");
    edit_config(
        &run,
        "startPosition: {type: earliest}",
        "startPosition: {type: scn, scn: 1000001}",
    );
    let (status, stderr) = run.run();
    assert_eq!(status, 3, "{stderr}");
    let message = run.termination();
    assert_eq!(message["code"], "CDC-2001");
    assert!(
        message["message"].as_str().unwrap().contains("SCN 1000001"),
        "{message}"
    );
}

fn doctor(dir: &Path, json: bool) -> (i32, String) {
    let mut command = Command::new(BINARY);
    command
        .args(["doctor", "--config"])
        .arg(dir.join("capture.yaml"))
        // As run_support::run_command: the default spill directory of this test only.
        .env("TMPDIR", dir)
        .env("REDOLINE_TERMINATION_LOG", dir.join("termination.log"));
    if json {
        command.arg("--json");
    }
    let output = command.output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn doctor_prints_fixes_and_writes_cdc_1002() {
    let healthy = new_run(TABLES, "");
    let (status, text) = doctor(healthy.dir.path(), false);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("all") && text.contains("checks passed"),
        "{text}"
    );

    let broken = new_run(
        &format!("{TABLES}{{\"database\":{{\"supplemental\":{{\"min\":\"NO\"}}}}}}\n"),
        "",
    );
    let (status, json) = doctor(broken.dir.path(), true);
    assert_eq!(status, 3);
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["ok"], false);
    let message = broken.termination();
    assert_eq!(message["code"], "CDC-1002");
    assert_eq!(
        message["details"]["checks"][0]["fix"],
        "ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;"
    );
}

/// Seed 001: `doctor` asks the lag from the stored bookmark, so it is known while no capture
/// runs: the position, its database time and the lag behind the database now.
#[test]
fn doctor_prints_the_stored_position_and_its_lag() {
    // One commit, then five quiet minutes on the database's clock.
    let scenario = format!(
        "{TABLES}{{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":1}}}}\n\
         {{\"tx\":\"a\",\"commit\":true}}\n{{\"advance_seconds\":300}}\n{{\"checkpoint\":true}}\n"
    );
    let run = new_run(&scenario, "");
    let (status, text) = doctor(run.dir.path(), false);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("stored position: none yet; the capture starts at spec.startPosition"),
        "{text}"
    );

    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    let (status, json) = doctor(run.dir.path(), true);
    assert_eq!(status, 0, "{json}");
    let report: Value = serde_json::from_str(&json).unwrap();
    let position = &report["position"];
    assert_eq!(position["state"], "stored", "{report}");
    let commit_scn = position["commitScn"].as_u64().unwrap();
    let lag = position["lagSeconds"].as_f64().unwrap();
    assert!((295.0..=305.0).contains(&lag), "{position}");
    let commit_time = position["commitTime"].as_str().unwrap().to_owned();
    let (_, text) = doctor(run.dir.path(), false);
    assert!(
        text.contains(&format!(
            "stored position: commit SCN {commit_scn} at {commit_time}, restart SCN"
        )) && text.contains(&format!("lag {lag:.0}s behind the database")),
        "{text}"
    );

    // A bookmark written before the time was stored: the lag comes from SCN_TO_TIMESTAMP of
    // its commit SCN.
    let path = run.path("out.jsonl.bookmark");
    let mut stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    stored["bookmark"]
        .as_object_mut()
        .unwrap()
        .remove("commit_time");
    std::fs::write(&path, stored.to_string()).unwrap();
    let (status, text) = doctor(run.dir.path(), false);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains(&format!(
            "stored position: commit SCN {commit_scn} (its time is not stored), restart SCN"
        )) && text.contains(&format!("lag {lag:.0}s behind the database")),
        "{text}"
    );
}

/// Seed 001: a capture user who cannot read V$PDB_INCARNATION skips the PDB incarnation check
/// with a warning; neither `doctor` nor `run` fails on it.
#[test]
fn an_unreadable_pdb_incarnation_skips_the_check_with_a_warning() {
    let mut scenario = String::from(TABLES);
    scenario.push_str(
        "{\"database\":{\"pdb\":\"ORCLPDB1\",\"ungranted_views\":[\"V$PDB_INCARNATION\"]}}\n",
    );
    scenario.push_str("{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n{\"tx\":\"a\",\"commit\":true}\n");
    let run = new_run(&scenario, "");
    edit_config(&run, "database: {", "database: {pdb: ORCLPDB1, ");

    let (status, text) = doctor(run.dir.path(), false);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("GRANT SELECT ON V_$PDB_INCARNATION"),
        "{text}"
    );

    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("V$PDB_INCARNATION cannot be read"),
        "{stderr}"
    );
    assert_eq!(emitted(&run.events()), [("ORDERS".to_owned(), 1)]);
}

/// `database.pdb` is folded to upper case as Oracle folds an unquoted name, so `orclpdb1` finds
/// PDB ORCLPDB1; a name that matches no PDB stops the run (CDC-1001 naming the field) instead of
/// mining nothing with the incarnation check off.
#[test]
fn the_pdb_name_is_folded_like_oracle_and_an_unknown_pdb_stops_the_run() {
    let mut scenario = String::from(TABLES);
    scenario.push_str("{\"database\":{\"pdb\":\"ORCLPDB1\"}}\n");
    scenario.push_str("{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n{\"tx\":\"a\",\"commit\":true}\n");
    for (pdb, found) in [
        ("orclpdb1", true),
        ("\"orclpdb1\"", false),
        ("SALES", false),
    ] {
        let run = new_run(&scenario, "");
        edit_config(&run, "database: {", &format!("database: {{pdb: '{pdb}', "));
        let (status, stderr) = run.run();
        if found {
            assert_eq!(status, 0, "{pdb}: {stderr}");
            assert_eq!(emitted(&run.events()), [("ORDERS".to_owned(), 1)]);
        } else {
            assert_ne!(status, 0, "{pdb}: {stderr}");
            let message = run.termination();
            assert_eq!(message["code"], "CDC-1001", "{pdb}: {message}");
            let text = message["message"].as_str().unwrap_or_default();
            assert!(text.contains("spec.database.pdb"), "{pdb}: {text}");
        }
    }
}

/// LogMiner losing the race with the archiver (a listed online log reused before START_LOGMNR,
/// ORA-01291) is retried with a fresh listing and captures everything; only a failure that
/// outlasts the retries stops the run, as CDC-2001 naming a thread.
#[test]
fn a_lost_race_with_the_archiver_is_retried_on_a_fresh_listing() {
    for (races, completes) in [(2, true), (9, false)] {
        let mut scenario = String::from(TABLES);
        scenario.push_str("{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n{\"tx\":\"a\",\"commit\":true}\n");
        scenario.push_str(&format!("{{\"archiver_race\":{races}}}\n"));
        let run = new_run(&scenario, "");
        let (status, stderr) = run.run();
        if completes {
            assert_eq!(status, 0, "{stderr}");
            assert!(stderr.contains("listing them again"), "{stderr}");
            assert_eq!(emitted(&run.events()), [("ORDERS".to_owned(), 1)]);
        } else {
            assert_ne!(status, 0, "{stderr}");
            let message = run.termination();
            assert_eq!(message["code"], "CDC-2001", "{message}");
            assert_eq!(message["details"]["thread"], 1, "{message}");
            assert!(run.events().is_empty());
        }
    }
}

/// Starting at the current position with a transaction open since before the oldest redo still
/// there: it cannot be captured whole, so the run stops (CDC-2001), and the log says which
/// transaction holds the start back.
#[test]
fn a_transaction_older_than_the_redo_is_named_when_it_stops_the_start() {
    let mut scenario = String::from(TABLES);
    scenario.push_str("{\"tx\":\"old\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n");
    scenario.push_str("{\"log_switch\":true}\n{\"log_switch\":true}\n{\"log_switch\":true}\n");
    scenario.push_str("{\"archive_purge_before_scn\":1000100}\n");
    scenario.push_str("{\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":2}}\n{\"tx\":\"b\",\"commit\":true}\n");
    let run = new_run(&scenario, "");
    edit_config(
        &run,
        "startPosition: {type: earliest}",
        "startPosition: {type: current}",
    );
    let (status, stderr) = run.run();
    assert_ne!(status, 0, "{stderr}");
    assert!(
        stderr.contains("began before the oldest redo still available"),
        "{stderr}"
    );
    assert_eq!(run.termination()["code"], "CDC-2001");
}

const DOCS: &str = r#"{"table":"APP.DOCS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"BODY","type":"CLOB"}],"logging":"all"}
"#;

fn docs_insert(tx: &str, id: u64, body: &str) -> String {
    format!(
        "{{\"tx\":\"{tx}\",\"insert\":\"APP.DOCS\",\"values\":{{\"ID\":{id},\"BODY\":\"{body}\"}}}}\n"
    )
}

/// `(op, ID)` of compact events of APP.DOCS / APP.WIDE; `ID` is `None` for DDL.
fn changes(events: &[Value]) -> Vec<(String, Option<u64>)> {
    events
        .iter()
        .map(|e| {
            (
                e["op"].as_str().unwrap_or_default().to_owned(),
                e["after"]["ID"].as_u64(),
            )
        })
        .collect()
}

/// Row 1's BODY is set in transaction a; transaction b inserts row 2 and then overwrites
/// characters 3 and 4 of row 1's BODY, whose earlier value is not part of b: the change cannot be
/// rebuilt into a whole value. Transaction c follows.
fn partial_lob_scenario() -> String {
    format!(
        "{DOCS}{}{{\"tx\":\"a\",\"commit\":true}}\n{}{{\"tx\":\"b\",\"lob_write\":\"APP.DOCS\",\"where\":{{\"ID\":1}},\"column\":\"BODY\",\"offset\":3,\"data\":\"XY\"}}\n{{\"tx\":\"b\",\"commit\":true}}\n{}{{\"tx\":\"c\",\"commit\":true}}\n",
        docs_insert("a", 1, "hello"),
        docs_insert("b", 2, "two"),
        docs_insert("c", 3, "three"),
    )
}

#[test]
fn a_lob_write_that_cannot_be_rebuilt_stops_with_cdc_6002_or_is_skipped() {
    let scenario = partial_lob_scenario();
    let run = Capture::new(&["APP.DOCS"], &scenario, "");
    let (status, stderr) = run.run();
    assert_eq!(status, 3, "{stderr}");
    let message = run.termination();
    assert_eq!(message["code"], "CDC-6002", "{message}");
    let text = message["message"].as_str().unwrap();
    assert!(text.contains("APP.DOCS.BODY"), "table and column: {text}");
    // The committed pages (see `file_sink_stop_leaves_no_line_of_the_failed_transaction` for
    // the data file as a whole).
    let events = run.committed_events();
    assert_eq!(
        changes(&events),
        [("i".to_owned(), Some(1))],
        "nothing of transaction b (not even its insert of row 2), nothing after it"
    );
    assert_eq!(events[0]["after"]["BODY"], "hello");

    let skipping = Capture::new(&["APP.DOCS"], &scenario, "mining: {onUnsupported: skip}\n");
    let (status, stderr) = skipping.run();
    assert_eq!(status, 0, "{stderr}");
    let events = skipping.events();
    assert_eq!(
        changes(&events),
        [
            ("i".to_owned(), Some(1)),
            ("i".to_owned(), Some(2)),
            ("i".to_owned(), Some(3))
        ],
        "only the LOB change is dropped, never emitted padded: {events:?}"
    );
    assert_eq!(skipping.committed_events().len(), 3);
}

/// After a typed stop the data file ends at its last committed page, as it does after a restart:
/// the lines of the page the failed transaction was written into (here row 2 of transaction b)
/// are not left behind for a reader of the stopped capture's file.
#[test]
fn file_sink_stop_leaves_no_line_of_the_failed_transaction() {
    let run = Capture::new(&["APP.DOCS"], &partial_lob_scenario(), "");
    assert_eq!(run.run().0, 3);
    assert_eq!(changes(&run.events()), [("i".to_owned(), Some(1))]);
}

const WIDE: &str = r#"{"table":"APP.WIDE","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"EXTRA","type":"VARCHAR2(10)"}],"logging":"all"}
"#;

#[test]
fn redo_older_than_a_drop_column_stops_with_cdc_2002_even_under_skip() {
    // Row 1 is inserted with EXTRA, then EXTRA is dropped. The capture starts afterwards from the
    // oldest redo: LogMiner renders row 1 with today's dictionary, which cannot name it, so by
    // number ("UNKNOWN"."OBJ# n", "COL 1", "COL 2"); the capture's history (read at start) has no
    // column 2, so the row does not fit.
    let scenario = format!(
        "{WIDE}{{\"tx\":\"a\",\"insert\":\"APP.WIDE\",\"values\":{{\"ID\":1,\"EXTRA\":\"gone\"}}}}\n{{\"tx\":\"a\",\"commit\":true}}\n{{\"ddl\":\"ALTER TABLE APP.WIDE DROP COLUMN EXTRA\"}}\n{{\"tx\":\"b\",\"insert\":\"APP.WIDE\",\"values\":{{\"ID\":2}}}}\n{{\"tx\":\"b\",\"commit\":true}}\n"
    );
    for config in ["", "mining: {onUnsupported: skip}\n"] {
        let run = Capture::new(&["APP.WIDE"], &scenario, config);
        let (status, stderr) = run.run();
        assert_eq!(status, 3, "{config}{stderr}");
        let message = run.termination();
        assert_eq!(message["code"], "CDC-2002", "{message}");
        let text = message["message"].as_str().unwrap();
        assert!(
            text.contains("APP.WIDE") && text.contains("COL 2"),
            "table and column: {text}"
        );
        // Skipping would drop a whole change of a captured table that a correct history reads.
        assert!(run.events().is_empty(), "nothing is emitted: {config}");
    }
}

#[test]
fn a_fresh_position_is_stored_before_the_first_change() {
    // `startPosition: current` on an idle database: the first run emits nothing, yet it must
    // store where it began, or the next run would anchor again later and miss what came between.
    let capture = new_run(TABLES, "");
    let config = std::fs::read_to_string(capture.path("capture.yaml")).unwrap();
    std::fs::write(
        capture.path("capture.yaml"),
        config.replace(
            "startPosition: {type: earliest}",
            "startPosition: {type: current}",
        ),
    )
    .unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert!(capture.events().is_empty());
    assert!(
        capture.path("out.jsonl.bookmark").exists(),
        "the anchored position is stored"
    );
    let mut scenario = std::fs::read_to_string(capture.path("scenario.jsonl")).unwrap();
    scenario.push_str(
        "{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1,\"STATUS\":\"NEW\",\"TOTAL\":\"1\"}}\n\
         {\"tx\":\"a\",\"commit\":true}\n",
    );
    std::fs::write(capture.path("scenario.jsonl"), scenario).unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(capture.events().len(), 1, "the change after the first run");
}

/// Seed 001: "A table that logs no key columns is rejected at startup". APP.A is chosen by the
/// schema list, not named in `tables`, and logs nothing supplementally, so its update would carry
/// no key: the run stops with CDC-1002 naming the table and its fix before anything is emitted
/// (it used to crash-loop on an encoding error in the Debezium format, and to emit the update
/// without its key in the compact one), and doctor reports the same check failing.
#[test]
fn a_filter_chosen_table_that_logs_no_key_stops_the_start_with_cdc_1002() {
    let scenario = |logging: &str| {
        format!(
            r#"{{"table":"APP.A","columns":[{{"name":"ID","type":"NUMBER(10)","key":true}},{{"name":"V","type":"NUMBER(10)"}}],"logging":"{logging}"}}
{{"tx":"a","insert":"APP.A","values":{{"ID":1,"V":1}}}}
{{"tx":"a","commit":true}}
{{"tx":"b","update":"APP.A","where":{{"ID":1}},"set":{{"V":2}}}}
{{"tx":"b","commit":true}}
"#
        )
    };
    let chosen_by_the_schema_list = |logging: &str, format: &str| {
        let run = Capture::new(&[], &scenario(logging), "");
        edit_config(
            &run,
            "tables: []\nfile: {path: out.jsonl}\nformat: {type: compact}\n",
            &format!(
                "filters: {{schemaIncludeList: ['APP']}}\nfile: {{path: out.jsonl}}\n\
                 format: {{type: {format}}}\n"
            ),
        );
        run
    };
    let fix = "ALTER TABLE APP.A ADD SUPPLEMENTAL LOG DATA (PRIMARY KEY) COLUMNS;";
    for format in ["debezium", "compact"] {
        let run = chosen_by_the_schema_list("none", format);
        let (status, stderr) = run.run();
        assert_eq!(status, 3, "{format}: {stderr}");
        let message = run.termination();
        assert_eq!(message["code"], "CDC-1002", "{format}");
        assert_eq!(message["reason"], "PrerequisitesNotMet");
        let text = message["message"].as_str().unwrap();
        assert!(text.contains("table APP.A") && text.contains(fix), "{text}");
        assert_eq!(message["details"]["checks"][0]["name"], "table APP.A");
        assert_eq!(message["details"]["checks"][0]["fix"], fix);
        assert!(run.events().is_empty(), "{format}: nothing is emitted");

        let (status, json) = doctor(run.dir.path(), true);
        assert_eq!(status, 3, "{json}");
        let report: Value = serde_json::from_str(&json).unwrap();
        let check = (report["checks"].as_array().unwrap().iter())
            .find(|check| check["name"] == "table APP.A")
            .expect("doctor checks the table the schema list chooses");
        assert_eq!(check["ok"], false);
        assert_eq!(check["fix"], fix);
    }

    // Fixed as told: the update carries its key.
    let run = chosen_by_the_schema_list("pk", "compact");
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    let update = (run.events().into_iter())
        .find(|event| event["op"] == "u")
        .expect("the update");
    assert_eq!(update["before"]["ID"], 1, "{update}");
    let (status, text) = doctor(run.dir.path(), false);
    assert_eq!(status, 0, "{text}");
}

/// Seed 004: the key is the primary key "(or unique key constraint)". APP.U has no primary key
/// and one unique constraint on a NOT NULL column: its records are keyed by that column, in the
/// key schema too, and primary-key logging (which logs that unique key for a table without a
/// primary key) passes the key-logging check.
#[test]
fn a_table_with_only_a_unique_constraint_is_keyed_by_it() {
    let scenario = r#"{"table":"APP.U","columns":[{"name":"CODE","type":"VARCHAR2(8)","nullable":false},{"name":"V","type":"NUMBER(10)"}],"unique":[{"name":"UK_U_CODE","columns":["CODE"]}],"logging":"pk"}
{"tx":"a","insert":"APP.U","values":{"CODE":"X","V":1}}
{"tx":"a","commit":true}
{"tx":"b","update":"APP.U","where":{"CODE":"X"},"set":{"V":2}}
{"tx":"b","commit":true}
"#;
    let compact = Capture::new(&["APP.U"], scenario, "");
    let (status, stderr) = compact.run();
    assert_eq!(status, 0, "{stderr}");
    // The file sink writes no record key; the update's before image shows the unique key
    // logged (the compact record key is built from the same key columns, event/compact.rs).
    let update = (compact.events().into_iter())
        .find(|event| event["op"] == "u")
        .expect("the update");
    assert_eq!(update["before"]["CODE"], "X", "{update}");

    let debezium = Capture::new(&["APP.U"], scenario, "");
    edit_config(
        &debezium,
        "format: {type: compact}",
        "format: {type: debezium, schemas: true}",
    );
    let (status, stderr) = debezium.run();
    assert_eq!(status, 0, "{stderr}");
    let records: Vec<Value> = (debezium.events().into_iter())
        .filter(|line| line["value"]["payload"]["op"].is_string())
        .collect();
    assert_eq!(records.len(), 2);
    for record in &records {
        assert_eq!(record["key"]["payload"], serde_json::json!({"CODE": "X"}));
        let fields = record["key"]["schema"]["fields"].as_array().unwrap();
        assert_eq!(fields.len(), 1, "{}", record["key"]);
        assert_eq!(fields[0]["field"], "CODE");
        assert_eq!(fields[0]["optional"], false);
    }
}

/// `columns.messageKeyColumns` makes V the record key of APP.A, whose primary-key logging does
/// not log V: its update could not carry its record key (the Debezium format failed to encode it,
/// with no stop code), so the start check refuses the table and names ALL column logging.
#[test]
fn configured_key_columns_that_are_not_logged_stop_the_start_with_cdc_1002() {
    let scenario = r#"{"table":"APP.A","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"},{"name":"W","type":"NUMBER(10)"}],"logging":"pk"}
{"tx":"a","insert":"APP.A","values":{"ID":1,"V":1,"W":1}}
{"tx":"a","commit":true}
{"tx":"b","update":"APP.A","where":{"ID":1},"set":{"W":2}}
{"tx":"b","commit":true}
"#;
    let run = Capture::new(
        &["APP.A"],
        scenario,
        "columns: {messageKeyColumns: [{table: 'APP\\.A', columns: [V]}]}\n",
    );
    edit_config(
        &run,
        "format: {type: compact}",
        "format: {type: debezium, schemas: false}",
    );
    let (status, stderr) = run.run();
    assert_eq!(status, 3, "{stderr}");
    let message = run.termination();
    assert_eq!(message["code"], "CDC-1002");
    assert_eq!(
        message["details"]["checks"][0]["fix"],
        "ALTER TABLE APP.A ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;"
    );
    assert!(run.events().is_empty());
}

/// RAC, a quiet instance: thread 2 commits once and then writes nothing, while thread 1 commits
/// on. Windows end below what every instance's log writer has written, so a flush that reached
/// one instance left thread 2's `LAST_REDO_CHANGE#` at its last commit: thread 1's later commits
/// were never emitted and `--exit-at-end` never ended (the run limit fails the test). The flush
/// commits on every instance, through both doors of the simulator; through the real client it
/// takes a session on each instance out of `maxConnections` (2 + instances at least).
#[test]
fn a_quiet_rac_instance_does_not_hold_back_the_others_or_the_end() {
    let scenario = format!(
        "{TABLES}{{\"thread\":2}}\n\
         {{\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":1,\"STATUS\":\"NEW\"}}}}\n\
         {{\"tx\":\"b\",\"commit\":true}}\n\
         {{\"thread\":1}}\n\
         {{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":2,\"STATUS\":\"NEW\"}}}}\n\
         {{\"tx\":\"a\",\"commit\":true}}\n\
         {{\"tx\":\"c\",\"insert\":\"APP.ITEMS\",\"values\":{{\"ID\":3,\"ORDER_ID\":2}}}}\n\
         {{\"tx\":\"c\",\"commit\":true}}\n"
    );
    for door in ["boundary", "sql"] {
        let run = new_run(&scenario, "");
        edit_config(
            &run,
            "simulator: {scenario: scenario.jsonl}",
            &format!("simulator: {{scenario: scenario.jsonl, through: {door}}}, maxConnections: 4"),
        );
        let began = Instant::now();
        let (status, stderr) = run.run();
        assert_eq!(status, 0, "{door}: {stderr}");
        assert_eq!(
            emitted(&run.events()),
            [
                ("ORDERS".to_owned(), 1),
                ("ORDERS".to_owned(), 2),
                ("ITEMS".to_owned(), 3)
            ],
            "{door}"
        );
        println!("{door}: ended in {:?}", began.elapsed());
    }
}
