#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The schema history, schema change and heartbeat topics with the Kafka sink: the first start
//! records the table, a DDL adds its new structure and one schema change event, a restart reads
//! the history back and repeats neither, and heartbeats reach `__debezium-heartbeat.<prefix>`.

use crate::kafka_support;

use std::time::Duration;

use kafka_support::{Capture, POLL, TABLES, bootstrap, insert, read_values};

const DDL: &str = "ALTER TABLE APP.ITEMS ADD (PRIORITY NUMBER(1))";

#[test]
fn ddl_reaches_the_history_and_schema_change_topics_and_heartbeats_flow() {
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    scenario.push_str(&insert("a", 1, "before"));
    scenario.push_str("{\"tx\":\"a\",\"commit\":true}\n");
    scenario.push_str(&format!("{{\"ddl\":\"{DDL}\"}}\n"));
    scenario.push_str(&insert("b", 2, "after"));
    scenario.push_str("{\"tx\":\"b\",\"commit\":true}\n");
    let prefix = kafka_support::unique_prefix("history");
    let capture = Capture::new(
        &scenario,
        &bootstrap,
        &prefix,
        "heartbeat: {intervalSeconds: 1}\nmining: {pollIntervalSeconds: 1}\n",
    );
    let config = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace(
            "format: {type: compact}",
            "format: {type: debezium, schemas: false}",
        );
    std::fs::write(capture.path("capture.yaml"), config).unwrap();

    let (status, stderr) = capture.run("capture.yaml");
    assert_eq!(status, 0, "{stderr}");
    let history_topic = format!("{prefix}.redoline.schema-history");
    let history = read_values(&bootstrap, &history_topic);
    assert_eq!(history.len(), 2, "{history:?}");
    assert!(history[0]["ddl"].is_null(), "the first start: {history:?}");
    assert_eq!(history[1]["ddl"], DDL);
    let columns = |record: &serde_json::Value| {
        record["tableChanges"][0]["table"]["columns"]
            .as_array()
            .unwrap()
            .len()
    };
    // The first start reads today's catalog, already past the DDL (the scenario is loaded whole).
    assert_eq!((columns(&history[0]), columns(&history[1])), (4, 4));
    let changes = read_values(&bootstrap, &prefix);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["ddl"], DDL);
    assert_eq!(changes[0]["tableChanges"][0]["type"], "ALTER");
    assert_eq!(columns(&changes[0]), 4);

    // A second run reads the history back and keeps running: heartbeats appear, nothing of the
    // first run is written again, and /metrics shows the history's two records recovered.
    let port = kafka_support::free_port();
    let serving = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace("http: {port: 0}", &format!("http: {{port: {port}}}"));
    std::fs::write(capture.path("serving.yaml"), serving).unwrap();
    let mut child = capture.spawn("serving.yaml", false, "heartbeat");
    let heartbeat_topic = format!("__debezium-heartbeat.{prefix}");
    child.wait_until("a heartbeat", Duration::from_secs(60), POLL, |_| {
        kafka_support::try_read_values(&bootstrap, &heartbeat_topic)
            .is_some_and(|beats| !beats.is_empty())
    });
    let history_metric = |name: &str| {
        kafka_support::metric(port, &format!("redoline_capture_schema_history_{name}"))
    };
    assert_eq!(history_metric("changes_recovered_total"), Some(2.0));
    assert_eq!(history_metric("changes_applied_total"), Some(0.0));
    assert_eq!(history_metric(r#"status{status="running"}"#), Some(1.0));
    child.kill();
    let beats = read_values(&bootstrap, &heartbeat_topic);
    assert!(beats[0]["ts_ms"].as_i64().unwrap() > 0, "{beats:?}");
    assert_eq!(read_values(&bootstrap, &history_topic).len(), 2);
    assert_eq!(read_values(&bootstrap, &prefix).len(), 1);
    assert_eq!(
        read_values(&bootstrap, &format!("{prefix}.APP.ITEMS")).len(),
        2
    );
}
