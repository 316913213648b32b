//! Independent conversion of the Avro encoding: for every golden Debezium record that Kafka
//! Connect's `JsonConverter` can read (the enveloped fixtures `debezium_json.rs` checks), the
//! `JsonConverter` of our JSON record followed by Apicurio Registry's Kafka Connect
//! `AvroConverter` (its port of Confluent's `AvroData`, default options) writing through a real
//! registry must give the Avro schema and the Avro body that our Avro encoding wrote for the same
//! change (`capture/tests/fixtures/events/avro_*.jsonl`, one line per JSON line; the capture's
//! `event_formats.rs` proves those are byte for byte what the encoder writes).
//!
//! The schemas are compared as parsed Avro schemas (names, fields, defaults, logical types and
//! every property), their `connect.*` properties one by one too, the bodies byte for byte. JSON has
//! no NaN or infinities (the JSON encoding writes them as strings, which `JsonConverter` reads as
//! 0): the harness puts them back into the Connect value and says where, and this test asserts it
//! did so only for the fixture's non-finite floats. `debezium_modes_b` has no JSON envelope (its
//! options turn schemas off), so `JsonConverter` cannot read it: the capture's own tests decode its
//! Avro twin with apache-avro instead.
//!
//! The harness is the Maven project `tests/env/avroconverter`, built once into the cache by its
//! `check.sh`; the registry is `testenv::registry`'s (`tests/env/registry.sh`, Apicurio Registry).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redoline_tests::process::run_script;
use redoline_tests::registry::RegistryEnv;

/// The JSON fixtures `JsonConverter` reads, each with its Avro twin.
const PAIRS: [(&str, &str); 4] = [
    ("debezium_envelope.jsonl", "avro_envelope.jsonl"),
    ("debezium_modes_a.jsonl", "avro_modes_a.jsonl"),
    ("debezium_transaction.jsonl", "avro_transaction.jsonl"),
    ("debezium_schema_change.jsonl", "avro_schema_change.jsonl"),
];

/// Building the harness on a cold cache resolves Kafka's and Apicurio's jars with Maven.
const CHECK_TIMEOUT: Duration = Duration::from_secs(900);

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn check(registry: &RegistryEnv, json: &Path, avro: &Path) -> anyhow::Result<String> {
    let script = repo_root().join("tests/env/avroconverter/check.sh");
    run_script(
        &script,
        &[
            "check".as_ref(),
            json.as_os_str(),
            avro.as_os_str(),
            registry.apicurio_url.as_ref(),
            registry.url.as_ref(),
        ],
        &[],
        CHECK_TIMEOUT,
    )
}

#[test]
fn apicurio_avro_converter_writes_our_schemas_and_bytes() {
    let registry = RegistryEnv::shared().unwrap();
    let fixtures = repo_root().join("capture/tests/fixtures/events");
    for (json, avro) in PAIRS {
        let started = Instant::now();
        let json_path = fixtures.join(json);
        let avro_path = fixtures.join(avro);
        let json_text = std::fs::read_to_string(&json_path).unwrap();
        let records = json_text.lines().filter(|l| !l.trim().is_empty()).count();
        assert!(records > 0, "{json} is empty");
        let output = check(registry, &json_path, &avro_path)
            .unwrap_or_else(|e| panic!("{avro} differs from what the converter makes:\n{e:#}"));
        assert!(
            output
                .lines()
                .any(|l| l == format!("matched {records} records")),
            "{output}"
        );
        // Only the fixture's NaN and infinities needed putting back: as many as the JSON has.
        let non_finite = json_text.matches("\"NaN\"").count()
            + json_text.matches("\"Infinity\"").count()
            + json_text.matches("\"-Infinity\"").count();
        let restored = output
            .lines()
            .filter(|l| l.starts_with("restored "))
            .count();
        assert_eq!(restored, non_finite, "{output}");
        eprintln!(
            "{avro}: {records} records equal to the converter's in {:?}",
            started.elapsed()
        );
    }
}

/// The comparison is not vacuous: one flipped bit of a body and one changed field type of a
/// schema are each reported, naming the record.
#[test]
fn a_changed_body_or_schema_is_reported() {
    let registry = RegistryEnv::shared().unwrap();
    let fixtures = repo_root().join("capture/tests/fixtures/events");
    let json_path = fixtures.join("debezium_transaction.jsonl");
    let avro_text = std::fs::read_to_string(fixtures.join("avro_transaction.jsonl")).unwrap();
    let mut lines: Vec<serde_json::Value> = avro_text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let mut body = engine.decode(lines[0]["value"].as_str().unwrap()).unwrap();
    // The status string's first character (after its length): BEGIN becomes CEGIN.
    body[1] ^= 1;
    lines[0]["value"] = engine.encode(&body).into();
    let schema = lines[1]["valueSchema"].as_str().unwrap().replace(
        r#""name":"id","type":"string""#,
        r#""name":"id","type":"bytes""#,
    );
    assert_ne!(schema, lines[1]["valueSchema"].as_str().unwrap());
    lines[1]["valueSchema"] = schema.into();
    let dir = tempfile::tempdir().unwrap();
    let avro_path = dir.path().join("avro.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&avro_path, text).unwrap();

    let error = check(registry, &json_path, &avro_path).unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.contains("---- record 1 (server1.transaction) differs"),
        "{message}"
    );
    assert!(
        message.contains("value body differs at byte 1"),
        "{message}"
    );
    assert!(
        message.contains("---- record 2 (server1.transaction) differs"),
        "{message}"
    );
    assert!(message.contains("value schema differs"), "{message}");
    assert!(message.contains("mismatched 2 of 2 records"), "{message}");
}
