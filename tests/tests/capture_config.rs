#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The operator renders the capture config; the capture must accept exactly what it renders.

use redoline_capture::config;
use redoline_crds::OracleCapture;

#[test]
fn the_operator_rendered_config_loads_in_the_capture() {
    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crds/examples/oraclecapture.yaml"
    ))
    .unwrap();
    let mut capture: OracleCapture = serde_norway::from_str(&sample).unwrap();
    capture.metadata.namespace = Some("sales".to_owned());
    let rendered = redoline_operator::build::render_capture_config(&capture).unwrap();
    let loaded = config::parse(&rendered, &[]).unwrap_or_else(|e| panic!("{e}\n{rendered}"));
    assert_eq!(loaded.name, capture.metadata.name.clone().unwrap());
    assert_eq!(loaded.namespace.as_deref(), Some("sales"));
    assert_eq!(loaded.tables, capture.spec.tables);
    assert_eq!(loaded.mining, capture.spec.mining);
    assert_eq!(loaded.journal, capture.spec.journal);
    assert_eq!(
        loaded.buffer.memory_max_bytes,
        capture.spec.buffer.memory_max_bytes
    );
    let kafka = loaded.kafka.unwrap();
    assert_eq!(kafka.topic_prefix, capture.spec.kafka.topic_prefix);
    assert!(loaded.file.is_none());
}
