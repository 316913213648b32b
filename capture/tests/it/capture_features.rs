#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! `redoline-capture run` features beyond the basic flow: RAC threads, a database incarnation
//! change, LOBs, and the HTTP face with a graceful SIGTERM while the capture runs.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

const TABLES: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"STATUS","type":"VARCHAR2(16)"}],"logging":"all"}
{"table":"APP.DOCS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"BODY","type":"CLOB"},{"name":"PIC","type":"BLOB"}],"logging":"all"}
"#;

use crate::run_support;

use run_support::{Capture, free_port};

/// A capture of the two tables of [`TABLES`].
fn new_capture(scenario: &str, extra: &str) -> Capture {
    Capture::new(&["APP.ORDERS", "APP.DOCS"], scenario, extra)
}

#[test]
fn rac_threads_are_merged_in_commit_order() {
    let mut scenario = String::from(TABLES);
    for i in 0..40 {
        let thread = 1 + i % 2;
        scenario.push_str(&format!(
            "{{\"thread\":{thread}}}\n{{\"tx\":\"t{i}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{i},\"STATUS\":\"T{thread}\"}}}}\n"
        ));
        if i % 3 == 2 {
            // Commit a few at once, across threads.
            for j in (i - 2)..=i {
                let thread = 1 + j % 2;
                scenario.push_str(&format!(
                    "{{\"thread\":{thread}}}\n{{\"tx\":\"t{j}\",\"commit\":true}}\n"
                ));
            }
        }
    }
    scenario.push_str("{\"thread\":1}\n{\"tx\":\"t39\",\"commit\":true}\n");
    // The flush write reaches thread 1 only: thread 2's checkpoint moves with its log switch
    // (ARCHIVE_LAG_TARGET on a real RAC), without which capture waits for it.
    scenario.push_str("{\"log_switch\":\"all\"}\n");
    let capture = new_capture(&scenario, "");
    // Not `--exit-at-end`: its end is the current SCN, above thread 2's last write, and only the
    // flush write of the connected instance (thread 1) passes it. Run as a pod does: until every
    // transaction is out, then SIGTERM.
    let mut child = capture.start();
    child.wait_until(
        "40 transactions",
        Duration::from_secs(40),
        Duration::from_millis(100),
        |_| capture.committed_events().len() >= 40,
    );
    let exit = child.terminate();
    assert!(exit.success(), "{exit:?}");
    let events = capture.committed_events();
    assert_eq!(
        events.len(),
        40,
        "every committed transaction of both threads"
    );
    let commits: Vec<u64> = events
        .iter()
        .map(|e| e["commit_scn"].as_u64().unwrap())
        .collect();
    assert!(commits.windows(2).all(|w| w[0] <= w[1]), "{commits:?}");
    let threads: std::collections::BTreeSet<&str> = events
        .iter()
        .map(|e| e["after"]["STATUS"].as_str().unwrap())
        .collect();
    assert_eq!(threads.len(), 2);
}

#[test]
fn a_bookmark_from_another_incarnation_is_cdc_2003() {
    let mut scenario = String::from(TABLES);
    scenario.push_str("{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n{\"tx\":\"a\",\"commit\":true}\n");
    let capture = new_capture(&scenario, "");
    assert_eq!(capture.run().0, 0);
    // The database was recovered to a point in time and opened RESETLOGS.
    scenario.push_str("{\"resetlogs\":true}\n{\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":2}}\n{\"tx\":\"b\",\"commit\":true}\n");
    std::fs::write(capture.path("scenario.jsonl"), &scenario).unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 3, "{stderr}");
    assert_eq!(capture.termination()["code"], "CDC-2003");
    assert_eq!(
        capture.events().len(),
        1,
        "nothing of the other incarnation"
    );
}

#[test]
fn a_bookmark_without_its_incarnation_is_bound_with_a_warning() {
    let mut scenario = String::from(TABLES);
    scenario.push_str("{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n{\"tx\":\"a\",\"commit\":true}\n");
    let capture = new_capture(&scenario, "");
    assert_eq!(capture.run().0, 0);
    // A bookmark written before the incarnation was recorded.
    let path = capture.path("out.jsonl.bookmark");
    let mut stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    stored["bookmark"]
        .as_object_mut()
        .unwrap()
        .remove("resetlogs_scn");
    std::fs::write(&path, stored.to_string()).unwrap();
    scenario.push_str("{\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":2}}\n{\"tx\":\"b\",\"commit\":true}\n");
    std::fs::write(capture.path("scenario.jsonl"), &scenario).unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("records no database incarnation"),
        "{stderr}"
    );
    assert_eq!(capture.events().len(), 2, "resumed without repeating");
}

#[test]
fn lob_values_arrive_whole() {
    let big: String = (0..9000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let mut scenario = String::from(TABLES);
    scenario.push_str(&format!(
        "{{\"tx\":\"a\",\"insert\":\"APP.DOCS\",\"values\":{{\"ID\":1,\"BODY\":\"{big}\",\"PIC\":\"cafe\"}}}}\n{{\"tx\":\"a\",\"commit\":true}}\n"
    ));
    scenario.push_str("{\"tx\":\"b\",\"lob_write\":\"APP.DOCS\",\"where\":{\"ID\":1},\"column\":\"BODY\",\"offset\":1,\"data\":\"short now\"}\n{\"tx\":\"b\",\"commit\":true}\n");
    let capture = new_capture(&scenario, "");
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let events = capture.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["op"], "i");
    assert_eq!(events[0]["after"]["BODY"], big.as_str());
    assert_eq!(events[0]["after"]["PIC"], "yv4=", "BLOB as base64");
    assert_eq!(events[1]["op"], "u");
    assert!(
        events[1]["after"]["BODY"]
            .as_str()
            .unwrap()
            .starts_with("short now"),
        "{}",
        events[1]
    );
    assert!(
        events[1]["before"].get("BODY").is_none(),
        "before never holds LOB columns"
    );
}

/// The issue's reproduction, end to end: an INSERT of a row with a CLOB rolled back to a
/// savepoint, and failed INSERTs with LOBs (inline and in pieces), are never published; the
/// committed row and its LOB are.
#[test]
fn undone_lob_inserts_are_not_published() {
    let big = "\u{1F600}x".repeat(4_500);
    let mut scenario = String::from(TABLES);
    for line in [
        r#"{"tx":"a","insert":"APP.DOCS","values":{"ID":1,"BODY":"committed"}}"#.to_owned(),
        r#"{"tx":"a","savepoint":"s"}"#.to_owned(),
        r#"{"tx":"a","insert":"APP.DOCS","values":{"ID":2,"BODY":"rolled back"}}"#.to_owned(),
        r#"{"tx":"a","rollback_to":"s"}"#.to_owned(),
        r#"{"tx":"a","insert":"APP.DOCS","values":{"ID":1,"BODY":""},"fails":true}"#.to_owned(),
        format!(
            r#"{{"tx":"a","insert":"APP.DOCS","values":{{"ID":3,"BODY":"{big}"}},"fails":true}}"#
        ),
        r#"{"tx":"a","commit":true}"#.to_owned(),
    ] {
        scenario.push_str(&line);
        scenario.push('\n');
    }
    let capture = new_capture(&scenario, "");
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    assert!(!stderr.contains("matched no earlier change"), "{stderr}");
    let events = capture.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["op"], "i");
    assert_eq!(events[0]["after"]["ID"], 1);
    assert_eq!(events[0]["after"]["BODY"], "committed");
}

fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes(),
        )
        .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

#[test]
fn status_and_metrics_answer_while_running_and_sigterm_stops_cleanly() {
    let mut scenario = String::from(TABLES);
    for i in 0..20 {
        scenario.push_str(&format!(
            "{{\"tx\":\"t{i}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{i}}}}}\n{{\"tx\":\"t{i}\",\"commit\":true}}\n"
        ));
    }
    let port = free_port();
    let capture = new_capture(&scenario, &format!("http: {{port: {port}}}\n"));
    let mut child = capture.start();
    let status = child.wait_for_within(
        port,
        "a streaming status with the 20 events out",
        Duration::from_secs(30),
        Duration::from_millis(100),
        |status: &Value| {
            status["state"] == "streaming"
                && capture.events().len() == 20
                && status["commitScn"].is_u64()
        },
    );
    assert_eq!(status["openTransactions"], 0);
    assert!(status["version"].is_string());
    let ready = get(port, "/readyz").unwrap();
    assert!(ready.starts_with("HTTP/1.1 200"), "{ready}");
    assert!(get(port, "/healthz").unwrap().starts_with("HTTP/1.1 200"));
    let metrics = get(port, "/metrics").unwrap();
    assert!(
        metrics.contains(r#"redoline_capture_events_total{op="c",table="APP.ORDERS"} 20"#),
        "{metrics}"
    );
    assert!(
        metrics.contains("redoline_capture_buffer_open_transactions 0"),
        "{metrics}"
    );

    // SIGTERM: the capture finishes what it does and exits 0.
    let exit = child.terminate();
    assert_eq!(exit.code(), Some(0));
    assert_eq!(capture.events().len(), 20);
}

/// Issue 31 (N3): with `MAX_STRING_SIZE = EXTENDED`, a VARCHAR2 value over 4000 bytes is logged
/// as 32K_BEGIN / 32K_WRITE / 32K_END rows after the INSERT; the capture joins them into the
/// column. Another such insert rolled back to a savepoint, and a failed one, are not published.
#[test]
fn extended_strings_arrive_whole() {
    let big: String = (0..20_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let other = "z'".repeat(10_000);
    let mut scenario = String::from(r#"{"database":{"max_string_size":"EXTENDED"}}"#);
    scenario.push('\n');
    scenario.push_str(TABLES);
    scenario.push_str(r#"{"table":"APP.NOTES","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"TXT","type":"VARCHAR2(32767)"}],"logging":"all"}"#);
    scenario.push('\n');
    for line in [
        r#"{"tx":"a","savepoint":"s"}"#.to_owned(),
        format!(r#"{{"tx":"a","insert":"APP.NOTES","values":{{"ID":2,"TXT":"{other}"}}}}"#),
        r#"{"tx":"a","rollback_to":"s"}"#.to_owned(),
        format!(r#"{{"tx":"a","insert":"APP.NOTES","values":{{"ID":1,"TXT":"{big}"}}}}"#),
        format!(
            r#"{{"tx":"a","insert":"APP.NOTES","values":{{"ID":3,"TXT":"{other}"}},"fails":true}}"#
        ),
        r#"{"tx":"a","commit":true}"#.to_owned(),
    ] {
        scenario.push_str(&line);
        scenario.push('\n');
    }
    // Both doors: the simulator's own answers, and the real client's SQL over the model.
    for through in ["boundary", "sql"] {
        let capture = Capture::new(&["APP.ORDERS", "APP.DOCS", "APP.NOTES"], &scenario, "");
        let config = std::fs::read_to_string(capture.path("capture.yaml"))
            .unwrap()
            .replace(
                "{simulator: {scenario: scenario.jsonl}}",
                &format!("{{simulator: {{scenario: scenario.jsonl, through: {through}}}}}"),
            );
        std::fs::write(capture.path("capture.yaml"), config).unwrap();
        let (status, stderr) = capture.run();
        assert_eq!(status, 0, "{through}: {stderr}");
        assert!(!stderr.contains("matched no earlier change"), "{stderr}");
        let events = capture.events();
        assert_eq!(events.len(), 1, "{through}: {events:?}");
        assert_eq!(events[0]["op"], "i");
        assert_eq!(events[0]["after"]["ID"], 1);
        // Not assert_eq: a failure would print 20,000 characters.
        let txt = events[0]["after"]["TXT"].as_str().map(str::len);
        assert!(
            events[0]["after"]["TXT"] == big.as_str(),
            "{through}: TXT is not the whole value (length {txt:?})"
        );
    }
}
