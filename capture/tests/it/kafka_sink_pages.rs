#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The capture's Kafka sink on the real broker: a page's data and bookmark become visible to
//! `read_committed` together or not at all, the bookmark reads back at start, a second instance
//! fences the first (CDC-5001), an unreadable bookmark is CDC-5002, the compacted topics are
//! created (and a wrong one refused), and at least once the bookmark waits for the data.

use std::time::Duration;

use anyhow::{Result, bail};
use prometheus::Registry;
use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use redoline_capture::event::Record;
use redoline_capture::sink::{
    Bookmark, DeliveryMode, KafkaSink, ProducerState, RetryPolicy, SinkError, SinkMetrics,
    SinkStatus,
};
use redoline_capture::source::Xid;
use redoline_crds::StopCode;
use redoline_testenv::kafka::KafkaEnv;

use crate::kafka_support;
use kafka_support::sink::{
    CALL_TIMEOUT, create_data_topic, data_records, open, read_committed, sink_options, values,
    write_page,
};

/// Commits a page and checks the receipt names its bookmark.
fn commit(sink: &KafkaSink, records: Vec<Record>, bookmark: &Bookmark) -> Result<()> {
    let receipt = write_page(sink, &records, Vec::new(), bookmark)?;
    assert_eq!(receipt.commit_scn, bookmark.commit_scn);
    Ok(())
}

fn bookmark_at(commit_scn: u64, n: u32) -> Bookmark {
    let mut bookmark = Bookmark::initial(1_000, 1, Some(7), 1);
    bookmark
        .record_commit(commit_scn, Xid::from_parts(1, 2, n))
        .unwrap();
    bookmark.restart_scn = commit_scn - 5;
    bookmark
}

fn texts(prefix: &str, range: std::ops::Range<usize>) -> Vec<Option<String>> {
    range.map(|i| Some(format!("{prefix}-{i}"))).collect()
}

#[test]
fn pages_commit_data_and_bookmark_together_and_the_bookmark_reads_back() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-commit");
    let options = sink_options(env, &prefix, DeliveryMode::ExactlyOnce);
    let data = format!("{prefix}.APP.ORDERS");
    let sink = open(&options)?;
    create_data_topic(&options, &data)?;
    assert_eq!(sink.read_bookmark()?, None, "a new capture has no bookmark");

    let first = bookmark_at(2_000, 1);
    let receipt = write_page(&sink, &data_records(&data, "a", 3), Vec::new(), &first)?;
    assert_eq!((receipt.commit_scn, receipt.records), (2_000, 4));
    let second = bookmark_at(2_010, 2);
    commit(&sink, data_records(&data, "b", 2), &second)?;

    let mut expected = texts("a", 0..3);
    expected.extend(texts("b", 0..2));
    assert_eq!(values(&read_committed(&options, &data)?), expected);
    let bookmarks = read_committed(&options, &options.topics.offsets)?;
    assert_eq!(bookmarks.len(), 2);
    assert_eq!(sink.read_bookmark()?, Some(second.clone()));

    // A restart: a new sink reads the last committed bookmark back.
    drop(sink);
    let restarted = open(&options)?;
    assert_eq!(restarted.read_bookmark()?, Some(second));
    Ok(())
}

#[test]
fn an_aborted_page_leaves_nothing_visible() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-abort");
    let mut options = sink_options(env, &prefix, DeliveryMode::ExactlyOnce);
    // librdkafka refuses a larger record when it is sent: the injected error after some sends.
    options.settings = options
        .settings
        .with_property("message.max.bytes", "100000")?;
    let data = format!("{prefix}.APP.ORDERS");
    let registry = Registry::new();
    let sink = KafkaSink::open(
        options.clone(),
        SinkMetrics::new(&registry)?,
        SinkStatus::default(),
    )?;
    create_data_topic(&options, &data)?;

    let committed = bookmark_at(2_000, 1);
    commit(&sink, data_records(&data, "ok", 2), &committed)?;

    let mut failing = data_records(&data, "aborted", 5);
    failing.push(Record {
        topic: data.clone(),
        key: Some(b"too-large".to_vec()),
        value: Some(vec![b'x'; 200_000]),
    });
    failing.extend(data_records(&data, "after", 2));
    let Err(error) = write_page(&sink, &failing, Vec::new(), &bookmark_at(2_050, 2)) else {
        bail!("a page with a record over message.max.bytes committed");
    };
    assert!(matches!(error, SinkError::Kafka { .. }), "{error}");
    println!("the page was aborted as expected: {error}");
    assert!(error.stop().is_none());

    assert_eq!(values(&read_committed(&options, &data)?), texts("ok", 0..2));
    assert_eq!(sink.read_bookmark()?, Some(committed));

    // The sink goes on after the abort.
    let next = bookmark_at(2_060, 3);
    commit(&sink, data_records(&data, "next", 1), &next)?;
    let mut expected = texts("ok", 0..2);
    expected.extend(texts("next", 0..1));
    assert_eq!(values(&read_committed(&options, &data)?), expected);
    assert_eq!(sink.read_bookmark()?, Some(next));
    assert_eq!(counter(&registry, "transactions_committed_total"), 2.0);
    assert_eq!(counter(&registry, "transactions_aborted_total"), 1.0);
    assert_eq!(
        counter(&registry, "records_sent_total"),
        5.0,
        "3 records, 2 bookmarks"
    );
    Ok(())
}

/// The value of the counter `redoline_capture_kafka_<name>`.
fn counter(registry: &Registry, name: &str) -> f64 {
    let name = format!("redoline_capture_kafka_{name}");
    registry
        .gather()
        .into_iter()
        .find(|family| family.name() == name)
        .map_or(f64::NAN, |family| {
            family.get_metric()[0].get_counter().get_value()
        })
}

#[test]
fn a_second_instance_fences_the_first_with_cdc_5001() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-fence");
    let options = sink_options(env, &prefix, DeliveryMode::ExactlyOnce);
    let data = format!("{prefix}.APP.ORDERS");
    let zombie = open(&options)?;
    create_data_topic(&options, &data)?;
    commit(
        &zombie,
        data_records(&data, "zombie", 2),
        &bookmark_at(2_000, 1),
    )?;

    let survivor = open(&options)?;
    let Err(error) = write_page(
        &zombie,
        &data_records(&data, "fenced", 2),
        Vec::new(),
        &bookmark_at(2_010, 2),
    ) else {
        bail!("the fenced instance could still commit");
    };
    let stop = error.stop().expect("fencing is a typed stop");
    assert_eq!(stop.code, StopCode::ProducerFenced, "{error}");
    println!("fenced as expected: {stop}");
    assert_eq!(zombie.status().get(), ProducerState::Fenced);
    assert_eq!(survivor.status().get(), ProducerState::Ready);
    assert_eq!(
        stop.details["transactionalId"],
        format!("redoline/{prefix}/capture")
    );

    let survivor_bookmark = bookmark_at(2_020, 3);
    commit(
        &survivor,
        data_records(&data, "survivor", 1),
        &survivor_bookmark,
    )?;
    let mut expected = texts("zombie", 0..2);
    expected.extend(texts("survivor", 0..1));
    assert_eq!(values(&read_committed(&options, &data)?), expected);
    assert_eq!(survivor.read_bookmark()?, Some(survivor_bookmark));
    Ok(())
}

#[test]
fn garbage_under_the_bookmark_key_is_cdc_5002() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-garbage");
    let options = sink_options(env, &prefix, DeliveryMode::ExactlyOnce);
    let sink = open(&options)?;
    commit(&sink, Vec::new(), &bookmark_at(2_000, 1))?;

    let producer: ThreadedProducer<DefaultProducerContext> = env.client_config().create()?;
    let key = options.identity.key();
    producer
        .send(
            BaseRecord::to(&options.topics.offsets)
                .key(&key)
                .payload("{\"commit_scn\": \"not a number\""),
        )
        .map_err(|(e, _)| e)?;
    producer.flush(CALL_TIMEOUT)?;

    let Err(error) = sink.read_bookmark() else {
        bail!("garbage was read as a bookmark");
    };
    let stop = error
        .stop()
        .expect("an unreadable bookmark is a typed stop");
    assert_eq!(stop.code, StopCode::BookmarkUnreadable, "{error}");
    assert_eq!(stop.details["topic"], options.topics.offsets.as_str());
    assert_eq!(
        stop.details["offset"], 2,
        "after the bookmark and its commit marker"
    );
    Ok(())
}

fn cleanup_policy(env: &KafkaEnv, topic: &str) -> Result<String> {
    let admin: AdminClient<DefaultClientContext> = env.client_config().create()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let resources = [ResourceSpecifier::Topic(topic)];
    let options = AdminOptions::new().request_timeout(Some(CALL_TIMEOUT));
    let results = runtime.block_on(admin.describe_configs(&resources, &options))?;
    let Some(Ok(resource)) = results.into_iter().next() else {
        bail!("no configuration for {topic}");
    };
    Ok(resource
        .get("cleanup.policy")
        .and_then(|e| e.value.clone())
        .unwrap_or_default())
}

#[test]
fn topics_are_created_compacted_and_a_delete_policy_offsets_topic_is_refused() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-topics");
    let options = sink_options(env, &prefix, DeliveryMode::ExactlyOnce);
    open(&options)?;
    assert_eq!(cleanup_policy(env, &options.topics.offsets)?, "compact");
    assert_eq!(cleanup_policy(env, &options.topics.journal)?, "compact");
    assert_eq!(cleanup_policy(env, &options.topics.ops)?, "delete");
    assert_eq!(cleanup_policy(env, &options.topics.dlq)?, "delete");
    // Opening again finds them and accepts them.
    open(&options)?;

    let other = env.unique_prefix("sink-topics-bad");
    let bad = sink_options(env, &other, DeliveryMode::ExactlyOnce);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(env.create_topic(&bad.topics.offsets, 1))?;
    let Err(error) = open(&bad) else {
        bail!("a delete-policy offsets topic was accepted");
    };
    let message = format!("{error:#}");
    assert!(message.contains("CDC-1001"), "{message}");
    assert!(message.contains(&bad.topics.offsets), "{message}");
    assert!(message.contains("cleanup.policy=delete"), "{message}");
    Ok(())
}

#[test]
fn at_least_once_writes_the_bookmark_only_after_the_data_is_acknowledged() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-alo");
    let options = sink_options(env, &prefix, DeliveryMode::AtLeastOnce);
    let data = format!("{prefix}.APP.ORDERS");
    let sink = open(&options)?;
    create_data_topic(&options, &data)?;

    let first = bookmark_at(2_000, 1);
    commit(&sink, data_records(&data, "a", 3), &first)?;
    assert_eq!(values(&read_committed(&options, &data)?), texts("a", 0..3));
    assert_eq!(sink.read_bookmark()?, Some(first.clone()));

    // A record the broker refuses after it was queued (an invalid topic name is only found out
    // by the broker): its delivery fails, so the bookmark must not be written.
    let mut refused = data_records(&data, "b", 2);
    refused.push(Record {
        topic: format!("{prefix} not a topic!"),
        key: None,
        value: Some(b"lost".to_vec()),
    });
    let started = std::time::Instant::now();
    let Err(error) = write_page(&sink, &refused, Vec::new(), &bookmark_at(2_010, 2)) else {
        bail!("a page with an undeliverable record was acknowledged");
    };
    println!("the page failed as expected: {error}");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(
        sink.read_bookmark()?,
        Some(first),
        "the bookmark must wait for the data"
    );
    Ok(())
}

#[test]
fn an_unreachable_broker_is_retried_shown_and_given_up_after_the_budget() -> Result<()> {
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("sink-unreachable");
    let mut options = sink_options(env, &prefix, DeliveryMode::ExactlyOnce);
    // A port nothing listens on: every call fails as a broker that is away would.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    options.settings =
        redoline_capture::sink::KafkaClientSettings::with_bootstrap(&closed.to_string());
    options.call_timeout = Duration::from_millis(500);
    options.retry = RetryPolicy {
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(400),
        budget: Duration::from_secs(3),
    };
    let registry = Registry::new();
    let metrics = SinkMetrics::new(&registry)?;
    let status = SinkStatus::default();
    let watcher = {
        let status = status.clone();
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while std::time::Instant::now() < deadline {
                if let ProducerState::Retrying { action, .. } = status.get() {
                    return Some(action);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            None
        })
    };
    let started = std::time::Instant::now();
    let Err(error) = KafkaSink::open(options, metrics, status.clone()) else {
        bail!("a sink opened without a broker");
    };
    println!("gave up as expected after {:?}: {error}", started.elapsed());
    assert!(
        matches!(error, SinkError::RetriesExhausted { .. }),
        "{error}"
    );
    let stop = error.stop().expect("a spent retry budget is a typed stop");
    assert_eq!(stop.code.code(), "CDC-5003", "{stop}");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(
        watcher
            .join()
            .map_err(|_| anyhow::anyhow!("the watcher panicked"))?
            .as_deref(),
        // The first step of an open: the brokers are reached (and authenticate) before the
        // topics are created.
        Some("reach the brokers")
    );
    assert!(matches!(status.get(), ProducerState::Failed { .. }));
    let retries = counter(&registry, "retries_total");
    assert!(retries >= 2.0, "{retries}");
    Ok(())
}
