//! Consumer-side check of the `debezium` format: Kafka Connect's own `JsonConverter`
//! (`schemas.enable=true`) reads redoline's schema-enveloped keys and values back without error,
//! and Decimal / Timestamp fields come back as `BigDecimal` / `java.util.Date` with the exact
//! values. Debezium's own `ExtractNewRecordState` SMT (defaults, and deletes rewritten with every
//! Oracle source field added) and its `VariableScaleDecimal` decoder process every record.
//!
//! The records are the capture's golden Debezium fixtures (`capture/tests/fixtures/events/`),
//! which `capture/tests/it/event_formats.rs` proves are byte for byte what the encoder writes for a
//! table of every supported type, under the default options and under double decimals, connect
//! time precision, hex binary, string intervals and transaction metadata (including the
//! BEGIN/END records of the transaction topic), and the schema change and heartbeat records. The harness is the
//! Maven project in `tests/env/jsonconverter`, built once into the cache by its `check.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::time::Duration;

use redoline_tests::process::run_script;

/// The enveloped fixtures (schemas enabled).
const ENVELOPED_FIXTURES: [&str; 4] = [
    "debezium_envelope.jsonl",
    "debezium_modes_a.jsonl",
    "debezium_transaction.jsonl",
    "debezium_schema_change.jsonl",
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn json_converter_reads_every_enveloped_record_back() {
    let root = repo_root();
    let fixtures = root.join("capture/tests/fixtures/events");
    let mut records = String::new();
    for name in ENVELOPED_FIXTURES {
        let text = std::fs::read_to_string(fixtures.join(name)).unwrap();
        assert!(!text.trim().is_empty(), "{name} is empty");
        records.push_str(&text);
    }
    let expected_records = records.lines().filter(|l| !l.trim().is_empty()).count();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("records.jsonl");
    std::fs::write(&input, &records).unwrap();

    let script = root.join("tests/env/jsonconverter/check.sh");
    let output = run_script(&script, &[&input], &[], Duration::from_secs(600))
        .unwrap_or_else(|e| panic!("the JsonConverter check failed: {e:#}"));

    assert!(
        output.contains(&format!("checked {expected_records} records")),
        "{output}"
    );
    for line in [
        // Schema change events, their structures read back as Connect structs.
        "schema change ALTER TABLE APP.ALL_TYPES ADD (PRIORITY NUMBER(1))",
        "schema change DROP TABLE APP.NO_KEY",
        // Connect Decimal, scale from the column, exact.
        "decimal c N_DEC=10.50",
        "decimal d N_DEC=-0.05",
        "decimal c N_INTEGER=12345678901234567890123456789012345678",
        // VariableScaleDecimal for NUMBER and FLOAT without a fixed scale.
        "variable c N_FLOATING=0.3333333333333333333333333333333333333333",
        "variable c F_FLOAT=-29669.9",
        // time.precision.mode=connect: java.util.Date, milliseconds, floor before 1970.
        "timestamp c D=1704164645000",
        "timestamp c TS3=1631605006478",
        "timestamp c TS9=1631605006123",
        "timestamp r TS6=-1",
        // Debezium's ExtractNewRecordState reads the Oracle source fields by name.
        "flattened u __source_txSeq=2",
        "flattened c __source_start_scn=2146940",
        "flattened c __source_start_ts_ms=1704164641000",
        "flattened d __op=d",
        "flattened r __source_snapshot=last",
        "flattened c __source_lcr_position=null",
    ] {
        assert!(
            output.lines().any(|l| l.trim() == line),
            "missing {line:?} in:\n{output}"
        );
    }
}

/// The harness is not vacuous: a record JsonConverter cannot read fails the run.
#[test]
fn json_converter_check_fails_on_an_unreadable_record() {
    let root = repo_root();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("broken.jsonl");
    let broken = concat!(
        r#"{"topic":"t","key":null,"value":{"schema":{"type":"struct","fields":["#,
        r#"{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","#,
        r#""version":1,"parameters":{"scale":"2"},"field":"N"}],"optional":false},"#,
        r#""payload":{"N":"not base64!"}}}"#,
        "\n"
    );
    std::fs::write(&input, broken).unwrap();
    let script = root.join("tests/env/jsonconverter/check.sh");
    let result = run_script(&script, &[&input], &[], Duration::from_secs(600));
    assert!(
        result.is_err(),
        "the check accepted a broken record: {result:?}"
    );
}
