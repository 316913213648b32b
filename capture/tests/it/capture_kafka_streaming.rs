#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Pages stream into Kafka: a committed transaction far larger than the heap budget is read
//! back from its spill file and produced into the open Kafka transaction as it is encoded, so
//! the sink never holds more than librdkafka's queue allows; and a page that fails in the middle
//! of the stream leaves nothing visible to a `read_committed` consumer, and the next run emits
//! its transaction exactly once.

use crate::kafka_support;

use std::path::Path;

use kafka_support::{Capture, TABLES, bootstrap, ids, insert, read_values, unique_prefix};
use redoline_capture::config::ConfigError;
use redoline_capture::run::{RunSettings, run_with};
use redoline_capture::simulator::Simulator;

/// `queue.buffering.max.messages` of the producer defaults (sink/kafka/config.rs).
const QUEUE_MAX_MESSAGES: u64 = 20_000;

/// A committed transaction `t0` of ids `1..=10`, then `big` of `rows` rows with `note` (`odd`
/// instead at row `odd_at`); returns the scenario and the ids in commit order.
fn scenario(rows: u64, note: &str, odd: Option<(u64, &str)>) -> (String, Vec<u64>) {
    let mut lines = String::from(TABLES);
    for id in 1..=10 {
        lines.push_str(&insert("t0", id, "small"));
    }
    lines.push_str("{\"tx\":\"t0\",\"commit\":true}\n");
    for id in 11..11 + rows {
        let text = match odd {
            Some((at, odd)) if id == 10 + at => odd,
            _ => note,
        };
        lines.push_str(&insert("big", id, text));
    }
    lines.push_str("{\"tx\":\"big\",\"commit\":true}\n");
    (lines, (1..11 + rows).collect())
}

/// The value of the metric `name` (a gauge or a counter without labels).
fn metric(registry: &prometheus::Registry, name: &str) -> f64 {
    let family = registry
        .gather()
        .into_iter()
        .find(|family| family.name() == name)
        .unwrap_or_else(|| panic!("{name} is not registered"));
    let metric = &family.get_metric()[0];
    match family.get_field_type() {
        prometheus::proto::MetricType::COUNTER => metric.get_counter().get_value(),
        _ => metric.get_gauge().get_value(),
    }
}

/// What the sink holds is bounded by librdkafka's queue, not by the transaction: 40,000 records
/// of 1 KB (over twice the queue's 20,000 messages, 40 MB against a 16 MiB heap budget) reach
/// Kafka while the Kafka sink never holds more than the queue. Collecting the page in memory
/// (the old sink) held all 40,000 records at once and fails here.
#[test]
fn a_spilled_transaction_streams_through_a_bounded_producer_queue() {
    let bootstrap = bootstrap();
    let prefix = unique_prefix("stream");
    let rows = 2 * QUEUE_MAX_MESSAGES;
    let (lines, expected) = scenario(rows, &"s".repeat(1000), None);
    let capture = Capture::new(
        &lines,
        &bootstrap,
        &prefix,
        "buffer: {memoryMaxBytes: 16Mi, spill: {dir: spill, maxBytes: 1Gi}}\n",
    );
    // A name of its own: the other test's capture (run in parallel) has the shared one, and
    // the name derives the transactional id.
    let path = capture.path("capture.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("name: test", "name: streaming", 1)).unwrap();
    let config = redoline_capture::config::load(&path, &[]).unwrap();
    let settings = RunSettings::new(true);
    let registry = settings.registry.clone();
    let scenario_path = capture.path("scenario.jsonl");
    let outcome = run_with(
        config,
        || {
            Simulator::from_scenario_file(&scenario_path).map_err(|error| {
                ConfigError::new("database.simulator.scenario", error.to_string()).into()
            })
        },
        settings,
    );
    assert!(outcome.is_ok(), "{outcome:?}");

    assert!(
        metric(&registry, "redoline_capture_buffer_spill_write_bytes_total")
            > 16.0 * 1024.0 * 1024.0,
        "the big transaction must have spilled"
    );
    let held = metric(&registry, "redoline_capture_kafka_held_records_max");
    println!("the Kafka sink held at most {held} records for a transaction of {rows}");
    assert!(held > 0.0);
    assert!(
        held <= QUEUE_MAX_MESSAGES as f64,
        "the sink held {held} records at once: pages must stream, not collect"
    );
    let events = read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"));
    assert_eq!(ids(&events), expected);
}

/// A page that fails after part of it was produced: the capture aborts its Kafka transaction
/// and fails; nothing of the transaction is visible, the bookmark stays where it was, and a
/// second run (the fault gone) emits the transaction exactly once.
#[test]
fn a_page_aborted_mid_stream_is_invisible_and_the_rerun_emits_it_once() {
    let bootstrap = bootstrap();
    let prefix = unique_prefix("stream-abort");
    // 30,000 rows of 1 KB spill; row 20,000 is larger than the first run's
    // `message.max.bytes`, so its send fails with thousands of the page's records already
    // produced into the open Kafka transaction.
    let (lines, expected) = scenario(30_000, &"s".repeat(1000), Some((20_000, &"x".repeat(3900))));
    let capture = Capture::new(
        &lines,
        &bootstrap,
        &prefix,
        "buffer: {memoryMaxBytes: 16Mi, spill: {dir: spill, maxBytes: 1Gi}}\n",
    );
    let properties = capture.path("kafka-config");
    std::fs::create_dir(&properties).unwrap();
    std::fs::write(properties.join("message.max.bytes"), "3000").unwrap();

    let failed = capture
        .command("capture.yaml", true, "first")
        .env("REDOLINE_KAFKA_CONFIG_DIR", &properties)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_ne!(
        failed.status.code(),
        Some(0),
        "the oversized record must fail the page: {stderr}"
    );
    let topic = format!("{prefix}.APP.ITEMS");
    assert_eq!(
        ids(&read_values(&bootstrap, &topic)),
        (1..=10).collect::<Vec<_>>(),
        "nothing of the aborted page may be visible: {stderr}"
    );

    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(ids(&read_values(&bootstrap, &topic)), expected);
    assert_spill_released(&capture.path("spill"));
}

/// After the committed run the spill directory holds no transaction any more.
fn assert_spill_released(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "spill files left: {left:?}");
}
