#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! `reposition` in the capture config (`spec.reposition`): a stored position moved to an SCN once
//! per id, and refused, with the position kept and the capture streaming on, when the redo for
//! the SCN is gone. On the simulator and the file sink.

use serde_json::Value;

use crate::run_support;

use run_support::Capture;

const TABLES: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"STATUS","type":"VARCHAR2(16)"}],"logging":"all"}
"#;

/// Five transactions of one insert each, ids 1 to 5.
fn five_orders() -> String {
    let mut scenario = String::from(TABLES);
    for id in 1..=5 {
        scenario.push_str(&format!(
            "{{\"tx\":\"t{id}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{id},\"STATUS\":\"NEW\"}}}}\n{{\"tx\":\"t{id}\",\"commit\":true}}\n"
        ));
    }
    scenario
}

fn append_config(run: &Capture, line: &str) {
    let mut config = std::fs::read_to_string(run.path("capture.yaml")).unwrap();
    config.push_str(line);
    std::fs::write(run.path("capture.yaml"), config).unwrap();
}

fn stored_bookmark(run: &Capture) -> Value {
    let text = std::fs::read_to_string(run.path("out.jsonl.bookmark")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["bookmark"].clone()
}

fn ids(events: &[Value]) -> Vec<u64> {
    events
        .iter()
        .map(|e| e["after"]["ID"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_new_id_moves_the_position_once_and_the_changes_from_it_are_emitted_again() {
    let run = Capture::new(&["APP.ORDERS"], &five_orders(), "");
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    let first = run.committed_events();
    assert_eq!(ids(&first), [1, 2, 3, 4, 5]);
    // Mining restarts at the SCN: the third transaction's first change, so it is read whole.
    let third_start = first[2]["scn"].as_u64().unwrap();

    // Back to the third transaction: it and the two after it again, nothing before.
    append_config(
        &run,
        &format!("reposition: {{id: back-1, scn: {third_start}}}\n"),
    );
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("spec.reposition applied"), "{stderr}");
    assert_eq!(ids(&run.committed_events()), [1, 2, 3, 4, 5, 3, 4, 5]);
    let bookmark = stored_bookmark(&run);
    assert_eq!(
        bookmark["reposition"],
        serde_json::json!({"id": "back-1", "scn": third_start})
    );

    // The same id once more: applied already, so the run starts where the last one ended.
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    assert!(!stderr.contains("spec.reposition applied"), "{stderr}");
    assert_eq!(run.committed_events().len(), 8);
}

#[test]
fn a_reposition_into_purged_redo_is_refused_and_the_capture_streams_on() {
    let mut scenario = String::from(TABLES);
    scenario.push_str("{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n{\"tx\":\"a\",\"commit\":true}\n");
    scenario.push_str("{\"log_switch\":true}\n{\"log_switch\":true}\n{\"log_switch\":true}\n");
    scenario.push_str("{\"archive_purge_before_scn\":1000010}\n");
    scenario.push_str("{\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":2}}\n{\"tx\":\"b\",\"commit\":true}\n");
    let run = Capture::new(&["APP.ORDERS"], &scenario, "");
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "{stderr}");
    let before = stored_bookmark(&run);
    assert_eq!(ids(&run.committed_events()), [2]);

    append_config(&run, "reposition: {id: too-far, scn: 1000001}\n");
    let (status, stderr) = run.run();
    assert_eq!(status, 0, "a refusal is no stop: {stderr}");
    assert!(stderr.contains("spec.reposition refused"), "{stderr}");
    assert!(
        stderr.contains("the redo for SCN 1000001 is gone"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the oldest SCN still available is"),
        "{stderr}"
    );
    let after = stored_bookmark(&run);
    assert_eq!(after["commit_scn"], before["commit_scn"]);
    assert!(after.get("reposition").is_none(), "{after}");
    assert_eq!(
        ids(&run.events()),
        [2],
        "nothing repeated, nothing written past the page"
    );
}
