#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Two capture processes with one identity: the second one's `init_transactions` fences the
//! first, which stops with CDC-5001 (its termination message says so) instead of writing on;
//! the second carries on from the last committed bookmark, and a `read_committed` consumer sees
//! every transaction once. `doctor`, which reads the stored bookmark with a consumer alone,
//! fences nobody.

use crate::kafka_support;

use std::time::Duration;

use kafka_support::{
    BINARY, Capture, POLL, RUN_LIMIT, TABLES, bootstrap, free_port, ids, insert, read_values,
    unique_prefix,
};
use serde_json::Value;

#[test]
fn a_second_instance_fences_the_first_which_stops_with_cdc_5001() {
    let bootstrap = bootstrap();
    // Enough one-row transactions (a Kafka transaction each) that the first instance is still
    // writing when the second one starts.
    let mut scenario = String::from(TABLES);
    let mut expected = Vec::new();
    for id in 1..=3000u64 {
        scenario.push_str(&insert(&format!("t{id}"), id, "x"));
        scenario.push_str(&format!("{{\"tx\":\"t{id}\",\"commit\":true}}\n"));
        expected.push(id);
    }
    let prefix = kafka_support::unique_prefix("fencing");
    let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
    let (first_port, second_port) = (free_port(), free_port());
    capture.write_config("first.yaml", &bootstrap, &prefix, first_port, "");
    capture.write_config("second.yaml", &bootstrap, &prefix, second_port, "");

    let mut first = capture.spawn("first.yaml", false, "first");
    first.wait_for_within(
        first_port,
        "the first instance to commit",
        Duration::from_secs(60),
        POLL,
        |report| {
            report["producer"]["state"] == "ready"
                && report["commitScn"]
                    .as_u64()
                    .is_some_and(|scn| scn > 1_000_100)
        },
    );
    let mut second = capture.spawn("second.yaml", true, "second");

    let exited = first.wait_exit(Duration::from_secs(60));
    assert_eq!(exited.code(), Some(3), "a typed stop: {}", first.stderr());
    let message = capture.termination("first").expect("a termination message");
    assert_eq!(message["code"], "CDC-5001", "{message}");
    assert!(
        message["details"]["transactionalId"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{prefix}/test")),
        "{message}"
    );

    let exit = second.wait_exit(RUN_LIMIT);
    assert_eq!(exit.code(), Some(0), "{}", second.stderr());
    let seen = ids(&read_values(&bootstrap, &format!("{prefix}.APP.ITEMS")));
    assert_eq!(seen, expected, "every transaction once across the takeover");
}

/// `doctor --json` with the capture's config `capture.yaml`: its report.
fn doctor(capture: &Capture) -> Value {
    let output = std::process::Command::new(BINARY)
        .args(["doctor", "--json", "--config"])
        .arg(capture.path("capture.yaml"))
        .env("TMPDIR", capture.dir.path())
        .env(
            "REDOLINE_TERMINATION_LOG",
            capture.path("doctor.termination"),
        )
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Seed 001: `doctor` asks the lag from the stored bookmark. It reads the offsets topic with a
/// consumer alone, so it shows the position while the capture runs without fencing it (the init
/// container runs it before every start, and people run it beside a live capture); before the
/// first run there is no offsets topic, and reading creates none.
#[test]
fn doctor_reads_the_stored_position_without_fencing_a_running_capture() {
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    scenario.push_str(&insert("t1", 1, "x"));
    scenario.push_str("{\"tx\":\"t1\",\"commit\":true}\n");
    let prefix = unique_prefix("doctor");
    let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
    let before = doctor(&capture);
    assert_eq!(
        before["position"],
        serde_json::json!({"state": "none"}),
        "{before}"
    );

    let port = free_port();
    capture.write_config("running.yaml", &bootstrap, &prefix, port, "");
    let mut running = capture.spawn("running.yaml", false, "running");
    let reported = running.wait_for_within(
        port,
        "the committed row",
        Duration::from_secs(60),
        POLL,
        |reported| reported["producer"]["state"] == "ready" && reported["commitTime"].is_string(),
    );
    let report = doctor(&capture);
    let position = &report["position"];
    assert_eq!(position["state"], "stored", "{report}");
    let stored_scn = position["commitScn"].as_u64().unwrap();
    // At least the position the capture reported before: it only moves on (its flush commits).
    assert!(
        stored_scn >= reported["commitScn"].as_u64().unwrap(),
        "{position} {reported}"
    );
    assert!(position["commitTime"].is_string(), "{position}");
    assert!(position["lagSeconds"].as_f64().is_some(), "{position}");

    assert!(running.try_wait().is_none(), "the capture runs on");
    assert_eq!(running.terminate().code(), Some(0), "not fenced");
    assert!(capture.termination("running").is_none());
    assert_eq!(
        ids(&read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"))),
        [1]
    );
}
