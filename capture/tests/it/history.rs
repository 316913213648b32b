#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Schema changes on the simulator and the file sink: the schema history keeps every structure
//! with the SCN it applies from, so a capture resumed before a DDL types the rows before it with
//! the old structure and those after it with the new one, and writes one schema change event per
//! DDL, in order, with the new structure.

use serde_json::Value;

use crate::run_support;

use run_support::Capture;

const ORDERS: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"STATUS","type":"VARCHAR2(16)"}],"logging":"all"}
"#;

fn insert(tx: &str, id: u64, extra: &str) -> String {
    format!(
        "{{\"tx\":\"{tx}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{id},\"STATUS\":\"NEW\"{extra}}}}}\n{{\"tx\":\"{tx}\",\"commit\":true}}\n"
    )
}

const ADD_PRIORITY: &str = "ALTER TABLE APP.ORDERS ADD (PRIORITY NUMBER(1))";
const ADD_NOTE: &str = "ALTER TABLE APP.ORDERS ADD (NOTE VARCHAR2(20))";

/// Rows 2 and 3 around the first DDL.
fn first_ddl() -> String {
    format!(
        "{}{{\"ddl\":\"{ADD_PRIORITY}\"}}\n{}",
        insert("b", 2, ""),
        insert("c", 3, ",\"PRIORITY\":5"),
    )
}

/// Rows 4 and 5 around the second DDL.
fn second_ddl() -> String {
    format!(
        "{}{{\"ddl\":\"{ADD_NOTE}\"}}\n{}",
        insert("d", 4, ""),
        insert("e", 5, ",\"PRIORITY\":1,\"NOTE\":\"late\""),
    )
}

fn debezium(scenario: &str) -> Capture {
    let capture = Capture::new(
        &["APP.ORDERS"],
        scenario,
        "format: {type: debezium, schemas: false}\n",
    );
    // The helper writes a compact capture; this one is Debezium's format.
    let config = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace("format: {type: compact}\n", "");
    std::fs::write(capture.path("capture.yaml"), config).unwrap();
    capture
}

/// A data event: `(ID, the after image's column names, sorted)`.
type Row = (u64, Vec<String>);
/// A schema change event: `(ddl, type, the new structure's column names)`.
type SchemaChange = (String, String, Vec<String>);

/// `(ID, after's column names sorted)` of the data events, and the schema change events' DDL and
/// column names, in file order.
fn summary(lines: &[Value]) -> (Vec<Row>, Vec<SchemaChange>) {
    let mut rows = Vec::new();
    let mut changes = Vec::new();
    for line in lines {
        let value = &line["value"];
        if line["topic"] == "redoline" {
            assert_eq!(line["key"], serde_json::json!({"databaseName": "ORCL"}));
            let change = &value["tableChanges"][0];
            let columns = change["table"]["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect();
            changes.push((
                value["ddl"].as_str().unwrap().to_owned(),
                change["type"].as_str().unwrap().to_owned(),
                columns,
            ));
        } else if !value.is_null() {
            let after = value["after"].as_object().unwrap();
            let mut columns: Vec<String> = after.keys().cloned().collect();
            columns.sort();
            rows.push((after["ID"].as_u64().unwrap(), columns));
        }
    }
    (rows, changes)
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn rows_are_typed_with_the_structure_in_force_when_they_were_written() {
    let first = format!("{ORDERS}{}", insert("a", 1, ""));
    let run = debezium(&first);
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(summary(&run.events()).0.len(), 1);
    let history = std::fs::read_to_string(run.path("out.jsonl.schema-history")).unwrap();
    assert_eq!(
        history.lines().count(),
        1,
        "the first start records the table's structure: {history}"
    );
    let before_ddl = std::fs::read(run.path("out.jsonl.bookmark")).unwrap();

    // The first DDL happens while the capture is down: at its restart the catalog already has
    // the new column, but row 2 was written before it.
    let with_first = format!("{first}{}", first_ddl());
    std::fs::write(run.path("scenario.jsonl"), &with_first).unwrap();
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    // Then the second one.
    std::fs::write(
        run.path("scenario.jsonl"),
        format!("{with_first}{}", second_ddl()),
    )
    .unwrap();
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");

    let old = names(&["ID", "STATUS"]);
    let with_priority = names(&["ID", "PRIORITY", "STATUS"]);
    let with_note = names(&["ID", "NOTE", "PRIORITY", "STATUS"]);
    let expected_rows = vec![
        (1, old.clone()),
        (2, old.clone()),
        (3, with_priority.clone()),
        (4, with_priority.clone()),
        (5, with_note.clone()),
    ];
    let expected_changes = vec![
        (
            ADD_PRIORITY.to_owned(),
            "ALTER".to_owned(),
            names(&["ID", "STATUS", "PRIORITY"]),
        ),
        (
            ADD_NOTE.to_owned(),
            "ALTER".to_owned(),
            names(&["ID", "STATUS", "PRIORITY", "NOTE"]),
        ),
    ];
    let (rows, changes) = summary(&run.events());
    assert_eq!(rows, expected_rows);
    assert_eq!(
        changes, expected_changes,
        "one schema change per DDL, in order"
    );
    let row_3 = run
        .events()
        .into_iter()
        .find(|line| line["value"]["after"]["ID"] == 3)
        .unwrap();
    assert_eq!(row_3["value"]["after"]["PRIORITY"], 5);
    let history = std::fs::read_to_string(run.path("out.jsonl.schema-history")).unwrap();
    assert_eq!(history.lines().count(), 3, "{history}");

    // Back to the bookmark before both DDLs, as after a crash: the catalog now has both new
    // columns, yet the history read back types every row as before, and each DDL's schema
    // change appears once, in order, with the structure it made.
    std::fs::write(run.path("out.jsonl.bookmark"), &before_ddl).unwrap();
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    let (rows, changes) = summary(&run.events());
    assert_eq!(rows, expected_rows);
    assert_eq!(changes, expected_changes);
    let history = std::fs::read_to_string(run.path("out.jsonl.schema-history")).unwrap();
    assert_eq!(
        history.lines().count(),
        3,
        "versions found in the history are not written again: {history}"
    );
}

/// Both DDLs happen while the capture is down: the catalog it finds at the first DDL already has
/// the second DDL's column, so that DDL's structure is derived from the statement.
#[test]
fn two_ddls_while_the_capture_is_down_keep_their_own_structures() {
    let first = format!("{ORDERS}{}", insert("a", 1, ""));
    let run = debezium(&first);
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    std::fs::write(
        run.path("scenario.jsonl"),
        format!("{first}{}{}", first_ddl(), second_ddl()),
    )
    .unwrap();
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    let (rows, changes) = summary(&run.events());
    assert_eq!(
        rows,
        vec![
            (1, names(&["ID", "STATUS"])),
            (2, names(&["ID", "STATUS"])),
            (3, names(&["ID", "PRIORITY", "STATUS"])),
            (4, names(&["ID", "PRIORITY", "STATUS"])),
            (5, names(&["ID", "NOTE", "PRIORITY", "STATUS"])),
        ]
    );
    let structures: Vec<Vec<String>> = changes.into_iter().map(|(_, _, c)| c).collect();
    assert_eq!(
        structures,
        [
            names(&["ID", "STATUS", "PRIORITY"]),
            names(&["ID", "STATUS", "PRIORITY", "NOTE"])
        ]
    );
}

#[test]
fn a_damaged_schema_history_stops_with_cdc_5002() {
    let run = debezium(&format!("{ORDERS}{}", insert("a", 1, "")));
    assert_eq!(run.run().0, 0);
    std::fs::write(
        run.path("out.jsonl.schema-history"),
        "{\"not\":\"history\"}\n",
    )
    .unwrap();
    let (status, stderr) = run.run();
    assert_eq!(status, 3, "{stderr}");
    let message = run.termination();
    assert_eq!(message["code"], "CDC-5002", "{message}");
    assert!(
        message["message"]
            .as_str()
            .unwrap()
            .contains("out.jsonl.schema-history"),
        "{message}"
    );
}

/// Rewrites `run`'s config to follow its scenario and serve HTTP on a fresh port: that port.
fn follow_and_serve(run: &Capture) -> u16 {
    let port = run_support::free_port();
    let config = std::fs::read_to_string(run.path("capture.yaml")).unwrap();
    let config = with_http_port(&config, port).replace(
        "{simulator: {scenario: scenario.jsonl}}",
        "{simulator: {scenario: scenario.jsonl, follow: true}}",
    );
    std::fs::write(run.path("capture.yaml"), config).unwrap();
    port
}

/// The config with its `http:` line set to `port`.
fn with_http_port(config: &str, port: u16) -> String {
    config
        .lines()
        .map(|line| {
            if line.starts_with("http:") {
                format!("http: {{port: {port}}}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Polls the sample `series` on `/metrics` until it equals `value` (at most 60 s), the capture
/// still running.
fn wait_for_metric(child: &mut run_support::Running, port: u16, series: &str, value: f64) {
    child.wait_until(
        &format!("{series} at {value}"),
        std::time::Duration::from_secs(60),
        std::time::Duration::from_millis(100),
        |_| run_support::metric(port, series) == Some(value),
    );
}

const STATUS_RUNNING: &str = r#"redoline_capture_schema_history_status{status="running"}"#;
const RECOVERY_START: &str = "redoline_capture_schema_history_recovery_start_timestamp_seconds";
const RECOVERED: &str = "redoline_capture_schema_history_changes_recovered_total";
const LAST_RECOVERED: &str =
    "redoline_capture_schema_history_last_recovered_change_timestamp_seconds";
const APPLIED: &str = "redoline_capture_schema_history_changes_applied_total";
const LAST_APPLIED: &str = "redoline_capture_schema_history_last_applied_change_timestamp_seconds";

/// Debezium's schema history metrics on `/metrics`: the first start reads back an empty history
/// and records the table's structure (one change applied), a DDL mined while running applies
/// another, and a restart reads both back (two changes recovered, none applied).
#[test]
fn the_schema_history_metrics_show_recovery_and_ddl() {
    let first = format!("{ORDERS}{}", insert("a", 1, ""));
    let run = debezium(&first);
    let port = follow_and_serve(&run);
    let before = jiff::Timestamp::now().as_millisecond() as f64 / 1000.0;
    let mut child = run.start();
    wait_for_metric(&mut child, port, APPLIED, 1.0);
    wait_for_metric(&mut child, port, STATUS_RUNNING, 1.0);
    assert_eq!(run_support::metric(port, RECOVERED), Some(0.0));
    assert_eq!(run_support::metric(port, LAST_RECOVERED), Some(-1.0));
    let recovery_start = run_support::metric(port, RECOVERY_START).unwrap();
    assert!(
        recovery_start >= before.floor(),
        "{recovery_start} < {before}"
    );
    let first_applied = run_support::metric(port, LAST_APPLIED).unwrap();
    assert!(first_applied >= recovery_start, "{first_applied}");

    std::fs::write(
        run.path("scenario.jsonl"),
        format!("{first}{}", first_ddl()),
    )
    .unwrap();
    wait_for_metric(&mut child, port, APPLIED, 2.0);
    let ddl_applied = run_support::metric(port, LAST_APPLIED).unwrap();
    assert!(
        ddl_applied >= first_applied,
        "{ddl_applied} < {first_applied}"
    );
    assert_eq!(run_support::metric(port, RECOVERED), Some(0.0));
    assert_eq!(child.terminate().code(), Some(0));

    let port = follow_and_serve(&run);
    let mut child = run.start();
    wait_for_metric(&mut child, port, RECOVERED, 2.0);
    wait_for_metric(&mut child, port, STATUS_RUNNING, 1.0);
    assert_eq!(run_support::metric(port, APPLIED), Some(0.0));
    let recovery_start = run_support::metric(port, RECOVERY_START).unwrap();
    let last_recovered = run_support::metric(port, LAST_RECOVERED).unwrap();
    assert!(
        recovery_start >= ddl_applied && last_recovered >= recovery_start,
        "recovery started at {recovery_start}, last record read at {last_recovered}, \
         after the DDL applied at {ddl_applied}"
    );
    assert_eq!(child.terminate().code(), Some(0));
}
