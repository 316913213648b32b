#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The journal of long transactions across a restart: a transaction open when the capture
//! stops is journaled, the archived redo of its beginning is purged, and the next run rebuilds
//! it from the journal and still emits it whole at its COMMIT. A reposition drops what the
//! journal holds for the old position.
//!
//! The simulator replays its whole scenario at every start, and each step spends one SCN, so
//! steps appended to the scenario file between the runs happen "later" with every earlier SCN
//! unchanged: the first run sees the transaction open, the second sees the purge and the COMMIT.

use crate::kafka_support;

use std::time::Duration;

use kafka_support::{Capture, TABLES, bootstrap, ids, insert, read_values};
use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::reader::read_to_end;
use serde_json::Value;

/// Live records of a compacted topic: the newest value per key (`None` for a tombstone).
fn latest(bootstrap: &str, topic: &str) -> Vec<(String, Option<Value>)> {
    let settings = KafkaClientSettings::with_bootstrap(bootstrap);
    let mut records: Vec<(String, Option<Value>)> = Vec::new();
    read_to_end(&settings, topic, Duration::from_secs(60), |record| {
        let key = String::from_utf8(record.key.unwrap_or_default()).unwrap();
        let value = record.value.map(|v| {
            serde_json::from_slice(&v).unwrap_or(Value::String(String::from_utf8_lossy(&v).into()))
        });
        records.retain(|(k, _)| *k != key);
        records.push((key, value));
        Ok(())
    })
    .unwrap();
    records
}

#[test]
fn a_journaled_transaction_survives_a_restart_and_the_purge_of_its_beginning() {
    let bootstrap = bootstrap();
    let prefix = kafka_support::unique_prefix("journal");
    let mut scenario = String::from(TABLES);
    scenario.push_str(&insert("long", 1, "first"));
    scenario.push_str(&insert("long", 2, "second"));
    scenario.push_str("{\"log_switch\":true}\n");
    scenario.push_str(&insert("long", 3, "third"));
    scenario.push_str("{\"log_switch\":true}\n");
    scenario.push_str(&insert("short", 10, "x"));
    scenario.push_str("{\"tx\":\"short\",\"commit\":true}\n");
    let capture = Capture::new(
        &scenario,
        &bootstrap,
        &prefix,
        "journal: {thresholdSeconds: 300, thresholdEvents: 1}\n",
    );

    // First run: the long transaction is open at the end, and journaled.
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    let journal = latest(&bootstrap, &format!("{prefix}.cdc.txjournal"));
    assert!(
        journal.iter().any(|(_, value)| value.is_some()),
        "the open transaction is journaled: {journal:?}"
    );
    let bookmarks = latest(&bootstrap, &format!("{prefix}.redoline.offsets"));
    let bookmark = bookmarks[0].1.clone().unwrap();
    let restart_scn = bookmark["restart_scn"].as_u64().unwrap();
    assert_eq!(
        ids(&read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"))),
        [10]
    );

    // Later: the redo before the journal's end is purged, then the transaction goes on and
    // commits.
    let purge_before = restart_scn - 1;
    scenario.push_str("{\"log_switch\":true}\n");
    scenario.push_str(&format!(
        "{{\"archive_purge_before_scn\":{purge_before}}}\n"
    ));
    scenario.push_str(&insert("long", 4, "fourth"));
    scenario.push_str("{\"tx\":\"long\",\"commit\":true}\n");
    std::fs::write(capture.path("scenario.jsonl"), &scenario).unwrap();

    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    let events = read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"));
    assert_eq!(
        ids(&events),
        [10, 1, 2, 3, 4],
        "emitted whole at its COMMIT"
    );
    let first_scn = events[1]["scn"].as_u64().unwrap();
    assert!(
        first_scn <= purge_before,
        "the transaction's beginning (SCN {first_scn}) was in the purged redo (before {purge_before})"
    );
    let journal = latest(&bootstrap, &format!("{prefix}.cdc.txjournal"));
    assert!(
        journal.iter().all(|(_, value)| value.is_none()),
        "the COMMIT tombstoned every chunk: {journal:?}"
    );
}

#[test]
fn a_reposition_removes_the_journal_of_the_old_position_and_mines_again_from_the_scn() {
    let bootstrap = bootstrap();
    let prefix = kafka_support::unique_prefix("journal-reposition");
    let journal_settings = "journal: {thresholdSeconds: 300, thresholdEvents: 1}\n";
    let mut scenario = String::from(TABLES);
    scenario.push_str(&insert("short", 10, "x"));
    scenario.push_str("{\"tx\":\"short\",\"commit\":true}\n");
    scenario.push_str(&insert("long", 1, "first"));
    scenario.push_str(&insert("long", 2, "second"));
    let capture = Capture::new(&scenario, &bootstrap, &prefix, journal_settings);
    let items = format!("{prefix}.APP.ITEMS");
    let journal_topic = format!("{prefix}.cdc.txjournal");

    // First run: the long transaction is open at the end, and journaled.
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    let events = read_values(&bootstrap, &items);
    assert_eq!(ids(&events), [10]);
    let short_scn = events[0]["scn"].as_u64().unwrap();
    let first_chunks: Vec<String> = latest(&bootstrap, &journal_topic)
        .into_iter()
        .filter(|(_, value)| value.is_some())
        .map(|(key, _)| key)
        .collect();
    assert!(
        !first_chunks.is_empty(),
        "the open transaction is journaled"
    );

    // Back to the short transaction: it is emitted again, the long one mined again from its
    // start, and the old position's chunks are removed.
    capture.write_config(
        "capture.yaml",
        &bootstrap,
        &prefix,
        0,
        &format!("{journal_settings}reposition: {{id: back-1, scn: {short_scn}}}\n"),
    );
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(ids(&read_values(&bootstrap, &items)), [10, 10]);
    let journal = latest(&bootstrap, &journal_topic);
    for key in &first_chunks {
        assert!(
            journal.iter().any(|(k, value)| k == key && value.is_none()),
            "chunk {key} of the old position is tombstoned: {journal:?}"
        );
    }
    let bookmarks = latest(&bootstrap, &format!("{prefix}.redoline.offsets"));
    let bookmark = bookmarks[0].1.clone().unwrap();
    assert_eq!(bookmark["reposition"]["id"], "back-1", "{bookmark}");

    // The long transaction commits: emitted once, whole, from this position's journal alone.
    scenario.push_str(&insert("long", 3, "third"));
    scenario.push_str("{\"tx\":\"long\",\"commit\":true}\n");
    std::fs::write(capture.path("scenario.jsonl"), &scenario).unwrap();
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(ids(&read_values(&bootstrap, &items)), [10, 10, 1, 2, 3]);
}
