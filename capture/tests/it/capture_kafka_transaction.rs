#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Transaction metadata on Kafka: with `format.transactionMetadata`, each captured transaction's
//! BEGIN and END records reach `<prefix>.transaction` (committed with its data, so a
//! `read_committed` consumer sees them), and the data events carry the matching `transaction`
//! block. And the pages: by default many database transactions share a Kafka transaction
//! (`kafka.transactions`), `maxRecords: 1` gives one each, and the time bound commits a page
//! even while a window streams rows of a transaction still open.

use crate::kafka_support;

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

/// By default one Kafka transaction carries many database transactions (`kafka.transactions`:
/// 100 ms, 100,000 records, 16 MiB), each whole and in commit order, and the bookmark of each page
/// is its last transaction's; `maxRecords: 1` gives back one Kafka transaction per database
/// transaction. Pages are counted by their bookmarks (one record per page on
/// `<prefix>.redoline.offsets`).
#[test]
fn many_database_transactions_share_a_kafka_transaction_by_default() {
    const TRANSACTIONS: u64 = 300;
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    for n in 0..TRANSACTIONS {
        let tx = format!("t{n}");
        scenario.push_str(&insert(&tx, 2 * n + 1, "first"));
        scenario.push_str(&insert(&tx, 2 * n + 2, "second"));
        scenario.push_str(&format!("{{\"tx\":\"{tx}\",\"commit\":true}}\n"));
    }
    let run = |kafka: &str| {
        let prefix = kafka_support::unique_prefix("pages");
        let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
        capture.write_config_with("capture.yaml", &bootstrap, &prefix, 0, kafka, "");
        let (status, stderr) = capture.run("capture.yaml");
        assert_eq!(status, 0, "{stderr}");
        let data = read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"));
        let expected: Vec<u64> = (1..=2 * TRANSACTIONS).collect();
        assert_eq!(
            kafka_support::ids(&data),
            expected,
            "every row once, in commit order"
        );
        let bookmarks = read_values(&bootstrap, &format!("{prefix}.redoline.offsets"));
        let last = bookmarks.last().expect("a bookmark");
        let last_commit = data.last().unwrap()["commit_scn"].as_u64().unwrap();
        assert_eq!(last["commit_scn"].as_u64(), Some(last_commit), "{last}");
        bookmarks.len() as u64
    };
    let shared = run("");
    let one_each = run(", transactions: {maxRecords: 1}");
    eprintln!(
        "{TRANSACTIONS} database transactions: {shared} pages by default, {one_each} with maxRecords: 1"
    );
    assert!(one_each >= TRANSACTIONS, "{one_each} pages");
    assert!(shared * 10 <= TRANSACTIONS, "{shared} pages");
}

/// The time bound holds while a window streams: a page holding a committed transaction is
/// committed once `maxDelayMillis` has passed even when the rows that follow belong to a
/// transaction still open (here 50,000 rows, far longer to mine than 20 ms). So a bookmark at the
/// first transaction's commit exists before the large one commits; without the check between
/// rows both would share one page, committed at the large one's COMMIT.
#[test]
fn the_time_bound_commits_a_page_while_an_open_transaction_streams() {
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    scenario.push_str(&insert("small", 1, "first"));
    scenario.push_str("{\"tx\":\"small\",\"commit\":true}\n");
    for id in 2..50_002 {
        scenario.push_str(&insert("large", id, "x"));
    }
    scenario.push_str("{\"tx\":\"large\",\"commit\":true}\n");
    let prefix = kafka_support::unique_prefix("timebound");
    let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
    let kafka = ", transactions: {maxDelayMillis: 20}";
    capture.write_config_with("capture.yaml", &bootstrap, &prefix, 0, kafka, "");
    let (status, stderr) = capture.run("capture.yaml");
    assert_eq!(status, 0, "{stderr}");

    let data = read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"));
    assert_eq!(data.len(), 50_001);
    let small_commit = data[0]["commit_scn"].as_u64().unwrap();
    let large_commit = data[1]["commit_scn"].as_u64().unwrap();
    let bookmarks = read_values(&bootstrap, &format!("{prefix}.redoline.offsets"));
    let commits: Vec<u64> = bookmarks
        .iter()
        .filter_map(|b| b["commit_scn"].as_u64())
        .collect();
    assert!(
        commits.contains(&small_commit),
        "no page ended at the small transaction's commit {small_commit}: {commits:?}"
    );
    assert_eq!(commits.last(), Some(&large_commit), "{commits:?}");
}
