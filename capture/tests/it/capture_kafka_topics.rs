#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! `spec.kafka.topics` against the real broker: topics the capture creates carry the declared
//! settings (read back with DescribeConfigs and the topic's metadata); a missing data topic with
//! `creation: external` stops the capture with CDC-1001 naming it, and is not auto-created by the
//! broker (whose `auto.create.topics.enable` is on, Kafka's default); an internal topic with
//! fewer replicas than its `min.insync.replicas` stops it with CDC-1001 naming the topic and the
//! setting.

use crate::kafka_support;

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use kafka_support::{Capture, TABLES, bootstrap, ids, insert, read_values};
use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;

const TIMEOUT: Duration = Duration::from_secs(30);

fn admin(bootstrap: &str) -> AdminClient<DefaultClientContext> {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap()
}

fn options() -> AdminOptions {
    AdminOptions::new()
        .request_timeout(Some(TIMEOUT))
        .operation_timeout(Some(TIMEOUT))
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The topic's configs as DescribeConfigs answers, and its partition and replica counts.
fn describe(bootstrap: &str, topic: &str) -> (HashMap<String, String>, usize, usize) {
    let admin = admin(bootstrap);
    let described =
        block_on(admin.describe_configs([&ResourceSpecifier::Topic(topic)], &options()))
            .unwrap()
            .remove(0)
            .unwrap();
    let configs = described
        .entries
        .into_iter()
        .filter_map(|entry| Some((entry.name, entry.value?)))
        .collect();
    let metadata = admin.inner().fetch_metadata(Some(topic), TIMEOUT).unwrap();
    let partitions = metadata.topics()[0].partitions();
    (configs, partitions.len(), partitions[0].replicas().len())
}

fn one_row() -> String {
    let mut scenario = String::from(TABLES);
    scenario.push_str(&insert("t1", 1, "one"));
    scenario.push_str("{\"tx\":\"t1\",\"commit\":true}\n");
    scenario
}

#[test]
fn topics_the_capture_creates_carry_the_declared_settings() {
    let bootstrap = bootstrap();
    let prefix = kafka_support::unique_prefix("topics-declared");
    let capture = Capture::new(&one_row(), &bootstrap, &prefix, "");
    capture.write_config_with(
        "capture.yaml",
        &bootstrap,
        &prefix,
        0,
        ", topics: {data: {partitions: 3, replicationFactor: 1, \
         config: {retention.ms: '3600000', min.insync.replicas: '1'}}, \
         internal: {replicationFactor: 1, minInsyncReplicas: 1}}",
        "",
    );
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");

    let data = format!("{prefix}.APP.ITEMS");
    assert_eq!(ids(&read_values(&bootstrap, &data)), [1]);
    let (configs, partitions, replicas) = describe(&bootstrap, &data);
    assert_eq!((partitions, replicas), (3, 1));
    assert_eq!(configs["retention.ms"], "3600000");
    assert_eq!(configs["min.insync.replicas"], "1");

    for internal in [
        "redoline.offsets",
        "cdc.txjournal",
        "redoline.schema-history",
    ] {
        let topic = format!("{prefix}.{internal}");
        let (configs, partitions, replicas) = describe(&bootstrap, &topic);
        assert_eq!((partitions, replicas), (1, 1), "{topic}");
        assert_eq!(configs["cleanup.policy"], "compact", "{topic}");
        assert_eq!(configs["min.insync.replicas"], "1", "{topic}");
    }
}

#[test]
fn a_missing_external_data_topic_stops_the_capture_naming_it() {
    let bootstrap = bootstrap();
    let prefix = kafka_support::unique_prefix("topics-external");
    let capture = Capture::new(&one_row(), &bootstrap, &prefix, "");
    capture.write_config_with(
        "capture.yaml",
        &bootstrap,
        &prefix,
        0,
        ", topics: {data: {creation: external}}",
        "",
    );
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 3, "a typed stop: {stderr}");
    let message = capture.termination("run").expect("a termination message");
    let data = format!("{prefix}.APP.ITEMS");
    assert_eq!(message["code"], "CDC-1001", "{message}");
    assert_eq!(message["details"]["topic"], data.as_str(), "{message}");
    assert_eq!(
        message["details"]["field"], "spec.kafka.topics.data.creation",
        "{message}"
    );
    // Nothing created it on the way: neither the capture nor the broker's auto-creation.
    let metadata = admin(&bootstrap)
        .inner()
        .fetch_metadata(None, TIMEOUT)
        .unwrap();
    assert!(
        !metadata.topics().iter().any(|t| t.name() == data),
        "{data} was created"
    );
}

#[test]
fn an_internal_topic_with_fewer_replicas_than_min_insync_is_cdc_1001() {
    let bootstrap = bootstrap();
    let prefix = kafka_support::unique_prefix("topics-min-isr");
    let offsets = format!("{prefix}.redoline.offsets");
    // Kafka creates it (min.insync.replicas may exceed the replicas); every acks=all write to it
    // would then fail with NOT_ENOUGH_REPLICAS.
    let topic = NewTopic::new(&offsets, 1, TopicReplication::Fixed(1))
        .set("cleanup.policy", "compact")
        .set("min.insync.replicas", "2");
    let created = block_on(admin(&bootstrap).create_topics([&topic], &options())).unwrap();
    assert!(created[0].is_ok(), "{created:?}");

    let capture = Capture::new(&one_row(), &bootstrap, &prefix, "");
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 3, "a typed stop: {stderr}");
    let message = capture.termination("run").expect("a termination message");
    assert_eq!(message["code"], "CDC-1001", "{message}");
    assert_eq!(message["details"]["topic"], offsets.as_str(), "{message}");
    assert_eq!(
        message["details"]["setting"], "min.insync.replicas",
        "{message}"
    );
    assert!(
        message["message"]
            .as_str()
            .unwrap()
            .contains("has 1 replicas but min.insync.replicas=2"),
        "{message}"
    );
}
