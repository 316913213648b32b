//! The committed CRD matches the types, and the sample resource reads with the documented defaults.

use redoline_crds::v1alpha1::{
    BinaryHandlingMode, DecimalHandlingMode, FormatType, IntervalHandlingMode, MaxAgeAction,
    OnUnsupported, OrphanAction, SnapshotMode, StartPositionType, TimePrecisionMode,
};
use redoline_crds::{ByteQuantity, OracleCapture, OracleCaptureSpec};

const COMMITTED_CRD: &str = include_str!("../oraclecaptures.redoline.io.yaml");
const SAMPLE: &str = include_str!("../examples/oraclecapture.yaml");

#[test]
fn committed_crd_matches_the_types() {
    let generated = redoline_crds::crd_yaml().unwrap();
    assert!(
        generated == COMMITTED_CRD,
        "crds/oraclecaptures.redoline.io.yaml is stale: run `make crds` and commit the result"
    );
}

#[test]
fn sample_resource_reads() {
    let capture: OracleCapture = serde_norway::from_str(SAMPLE).unwrap();
    assert_eq!(capture.spec.tables.len(), 3);
    assert_eq!(
        capture.spec.buffer.spill.max_bytes.bytes().unwrap(),
        20 << 30
    );
    assert_eq!(capture.spec.sla.unwrap().max_lag_seconds, 120);
}

/// The defaults a user gets when writing only the required fields are the seeds' defaults.
#[test]
fn minimal_spec_gets_the_seed_defaults() {
    let spec: OracleCaptureSpec = serde_norway::from_str(
        r#"
database: {connectString: "db:1521/PDB1", credentialsSecret: {name: db}}
tables: [APP.ORDERS]
kafka: {bootstrapServers: "k:9092", topicPrefix: app}
"#,
    )
    .unwrap();
    assert_eq!(spec.database.port, 1521);
    assert_eq!(spec.database.max_connections, 2);
    assert_eq!(spec.database.credentials_secret.username_key, "username");
    assert_eq!(spec.start_position.type_, StartPositionType::Current);
    assert_eq!(spec.snapshot.mode, SnapshotMode::Initial);
    assert!(spec.kafka.exactly_once);
    assert_eq!(spec.format.type_, FormatType::Debezium);
    assert!(spec.format.schemas);
    assert_eq!(
        spec.format.decimal_handling_mode,
        DecimalHandlingMode::Precise
    );
    assert_eq!(spec.format.time_precision_mode, TimePrecisionMode::Adaptive);
    assert_eq!(spec.format.binary_handling_mode, BinaryHandlingMode::Bytes);
    assert_eq!(
        spec.format.interval_handling_mode,
        IntervalHandlingMode::Numeric
    );
    assert!(!spec.format.number_one_as_boolean);
    assert!(spec.format.tombstones_on_delete);
    assert_eq!(spec.buffer.memory_max_bytes.bytes().unwrap(), 256 << 20);
    assert_eq!(spec.buffer.spill.max_bytes.bytes().unwrap(), 10 << 30);
    assert_eq!(spec.journal.threshold_seconds, 300);
    assert_eq!(spec.journal.threshold_events, 100_000);
    assert_eq!(spec.journal.chunk_max_bytes.bytes().unwrap(), 512 << 10);
    assert_eq!(spec.transactions.orphan_check_interval_seconds, 300);
    assert_eq!(spec.transactions.orphan_action, OrphanAction::Release);
    assert_eq!(spec.transactions.max_age_seconds, None);
    assert_eq!(spec.transactions.max_age_action, MaxAgeAction::Fail);
    assert_eq!(spec.transactions.max_staged_records, 1_000_000);
    assert_eq!(spec.mining.max_scn_window, 500_000);
    assert_eq!(spec.mining.min_scn_window, 1000);
    assert_eq!(spec.mining.window_max_seconds, 60);
    assert_eq!(spec.mining.session_pga_max_bytes.bytes().unwrap(), 1 << 30);
    assert_eq!(spec.mining.poll_interval_seconds, 1);
    assert_eq!(spec.mining.batch_size, 1000);
    assert_eq!(spec.mining.statement_timeout_seconds, 600);
    assert_eq!(spec.mining.flush_table, "REDOLINE_LOGMNR_FLUSH");
    assert_eq!(spec.mining.on_unsupported, OnUnsupported::Fail);
    assert!(!spec.suspend);
}

/// The schema carries the same defaults, so the apiserver fills in what serde would.
#[test]
fn schema_defaults_match_serde_defaults() {
    let crd = redoline_crds::crd();
    let schema = serde_json::to_value(&crd.spec.versions[0].schema).unwrap();
    let spec = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(
        spec["buffer"]["properties"]["memoryMaxBytes"]["default"],
        "256Mi"
    );
    assert_eq!(
        spec["mining"]["properties"]["maxScnWindow"]["default"],
        500_000
    );
    assert_eq!(
        spec["mining"]["properties"]["sessionPgaMaxBytes"]["default"],
        "1Gi"
    );
    assert_eq!(spec["format"]["properties"]["type"]["default"], "debezium");
    assert_eq!(
        spec["transactions"]["properties"]["orphanAction"]["default"],
        "release"
    );
    assert_eq!(
        ByteQuantity::quantity("10Gi"),
        serde_json::from_value(
            spec["buffer"]["properties"]["spill"]["properties"]["maxBytes"]["default"].clone()
        )
        .unwrap()
    );
}

/// The Helm chart installs the same CRD (charts/redoline/crds/, refreshed by `make crds`).
#[test]
fn helm_chart_carries_the_committed_crd() {
    const CHART_CRD: &str =
        include_str!("../../charts/redoline/crds/oraclecaptures.redoline.io.yaml");
    assert!(
        CHART_CRD == COMMITTED_CRD,
        "charts/redoline/crds/oraclecaptures.redoline.io.yaml differs from \
         crds/oraclecaptures.redoline.io.yaml: run `make crds`"
    );
}
