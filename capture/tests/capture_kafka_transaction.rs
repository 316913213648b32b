#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Transaction metadata on Kafka: with `format.transactionMetadata`, each captured transaction's
//! BEGIN and END records reach `<prefix>.transaction` (committed with its data, so a
//! `read_committed` consumer sees them), and the data events carry the matching `transaction`
//! block.

mod kafka_support;

use kafka_support::{Capture, TABLES, bootstrap, insert, read_values};

#[test]
fn begin_and_end_records_reach_the_transaction_topic() {
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    for id in 1..=3 {
        scenario.push_str(&insert("a", id, "first"));
    }
    scenario.push_str("{\"tx\":\"a\",\"commit\":true}\n");
    scenario.push_str(&insert("b", 4, "second"));
    scenario.push_str("{\"tx\":\"b\",\"delete\":\"APP.ITEMS\",\"where\":{\"ID\":1}}\n");
    scenario.push_str("{\"tx\":\"b\",\"commit\":true}\n");
    let prefix = kafka_support::unique_prefix("txmeta");
    let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
    let path = capture.path("capture.yaml");
    let config = std::fs::read_to_string(&path).unwrap().replace(
        "format: {type: compact}",
        "format: {type: debezium, schemas: false, transactionMetadata: true}",
    );
    std::fs::write(&path, config).unwrap();
    let (status, stderr) = capture.run("capture.yaml");
    assert_eq!(status, 0, "{stderr}");

    let markers = read_values(&bootstrap, &format!("{prefix}.transaction"));
    let statuses: Vec<&str> = markers
        .iter()
        .map(|m| m["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["BEGIN", "END", "BEGIN", "END"], "{markers:?}");
    assert_eq!(markers[1]["event_count"], 3);
    assert_eq!(markers[3]["event_count"], 2);
    assert_eq!(
        markers[3]["data_collections"],
        serde_json::json!([{"data_collection": "ORCL.APP.ITEMS", "event_count": 2}])
    );
    let data = read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"));
    let blocks: Vec<(&str, u64)> = data
        .iter()
        .map(|v| {
            let tx = &v["transaction"];
            (
                tx["id"].as_str().unwrap(),
                tx["total_order"].as_u64().unwrap(),
            )
        })
        .collect();
    let (first, second) = (
        markers[0]["id"].as_str().unwrap(),
        markers[2]["id"].as_str().unwrap(),
    );
    assert_ne!(first, second);
    assert_eq!(
        blocks,
        [(first, 1), (first, 2), (first, 3), (second, 1), (second, 2)]
    );
}
