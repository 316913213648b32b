//! Helpers for the tests of the capture's Kafka sink (`redoline_capture::sink`) on the shared
//! broker (`kafka_sink_pages`, `kafka_sink_journal`): options for a capture of the test's own, a `read_committed` read-back, records.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use prometheus::Registry;
use rdkafka::consumer::{BaseConsumer, Consumer};
use redoline_capture::event::Record;
use redoline_capture::sink::kafka::reader::{TopicRecord, read_to_end};
use redoline_capture::sink::kafka::topics::{RequiredTopic, ensure_topics_retrying};
use redoline_capture::sink::{
    Bookmark, CaptureIdentity, Committed, DeliveryMode, KafkaClientSettings, KafkaSink, Page,
    RetryPolicy, SinkError, SinkMetrics, SinkOptions, SinkStatus, TopicNames,
};
use redoline_crds::v1alpha1::{JournalSpec, KafkaSpec};

use redoline_testenv::kafka::KafkaEnv;

/// Bound of every single Kafka call in these tests.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// Sink options for a capture named after `prefix` (also its topic prefix and namespace), with a
/// short retry budget so a wrong classification fails the test instead of stalling it.
pub fn sink_options(env: &KafkaEnv, prefix: &str, mode: DeliveryMode) -> SinkOptions {
    let settings = KafkaClientSettings::with_bootstrap(env.bootstrap_servers());
    let topics = TopicNames::new(&kafka_spec(env, prefix), &JournalSpec::default());
    let mut options = SinkOptions::new(
        CaptureIdentity::new(prefix, "capture"),
        settings,
        topics,
        mode,
    );
    options.call_timeout = CALL_TIMEOUT;
    options.retry = RetryPolicy {
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_secs(2),
        budget: Duration::from_secs(20),
    };
    options
}

/// `spec.kafka` for a test prefix.
pub fn kafka_spec(env: &KafkaEnv, prefix: &str) -> KafkaSpec {
    KafkaSpec {
        bootstrap_servers: env.bootstrap_servers().to_owned(),
        topic_prefix: prefix.to_owned(),
        tls: None,
        authentication: None,
        config_secret: None,
        exactly_once: true,
        transactions: Default::default(),
        topics: Default::default(),
    }
}

/// Opens a sink with metrics on a registry of its own.
pub fn open(options: &SinkOptions) -> Result<KafkaSink> {
    let metrics = SinkMetrics::new(&Registry::new())?;
    KafkaSink::open(options.clone(), metrics, SinkStatus::default())
        .map_err(|e| anyhow!("opening the sink: {e}"))
}

/// Creates a plain data topic (one partition) for the test.
pub fn create_data_topic(options: &SinkOptions, topic: &str) -> Result<()> {
    ensure_topics_retrying(
        &options.settings,
        &[RequiredTopic::plain(topic, "test", "data")],
        CALL_TIMEOUT,
        CALL_TIMEOUT * 2,
    )
    .with_context(|| format!("creating {topic}"))
}

/// Every record of `topic` a `read_committed` consumer sees, up to the end, once the
/// transactions written to it have settled ([`settled`]).
pub fn read_committed(options: &SinkOptions, topic: &str) -> Result<Vec<TopicRecord>> {
    settled(options, topic)?;
    let mut records = Vec::new();
    read_to_end(&options.settings, topic, CALL_TIMEOUT * 2, |record| {
        records.push(record);
        Ok(())
    })
    .with_context(|| format!("reading {topic} back"))?;
    Ok(records)
}

/// Waits until no transaction on `topic` is still open or unmarked: each partition's last stable
/// offset (the end a `read_committed` consumer sees) has reached its high watermark. A
/// producer's commit returns once the coordinator has logged it; the markers that make the
/// records visible reach the partitions after that (KIP-98), so a read at once may end short of
/// a transaction already committed. The tests are the only writers of their topics.
pub fn settled(options: &SinkOptions, topic: &str) -> Result<()> {
    let committed: BaseConsumer = options
        .settings
        .reader_config(&format!("{topic}-settled"))
        .create()
        .context("a read_committed consumer")?;
    let uncommitted: BaseConsumer = options
        .settings
        .reader_config(&format!("{topic}-settled"))
        .set("isolation.level", "read_uncommitted")
        .create()
        .context("a read_uncommitted consumer")?;
    let partitions: Vec<i32> = committed
        .fetch_metadata(Some(topic), CALL_TIMEOUT)
        .with_context(|| format!("metadata of {topic}"))?
        .topics()
        .iter()
        .filter(|t| t.name() == topic)
        .flat_map(|t| t.partitions().iter().map(|p| p.id()))
        .collect();
    let deadline = Instant::now() + CALL_TIMEOUT * 2;
    loop {
        let mut open = Vec::new();
        for &partition in &partitions {
            let (_, stable) = committed.fetch_watermarks(topic, partition, CALL_TIMEOUT)?;
            let (_, high) = uncommitted.fetch_watermarks(topic, partition, CALL_TIMEOUT)?;
            if stable < high {
                open.push((partition, stable, high));
            }
        }
        if open.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(anyhow!(
                "{topic}: transactions still open after {:?} (partition, last stable offset, \
                 high watermark): {open:?}",
                CALL_TIMEOUT * 2
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The values of `records` as text (`None` for a tombstone).
pub fn values(records: &[TopicRecord]) -> Vec<Option<String>> {
    records
        .iter()
        .map(|r| {
            r.value
                .as_ref()
                .map(|v| String::from_utf8_lossy(v).into_owned())
        })
        .collect()
}

/// `count` data records `{tag}-{i}` for `topic`.
pub fn data_records(topic: &str, tag: &str, count: usize) -> Vec<Record> {
    (0..count)
        .map(|i| Record {
            topic: topic.to_owned(),
            key: Some(format!("{tag}-key-{i}").into_bytes()),
            value: Some(format!("{tag}-{i}").into_bytes()),
        })
        .collect()
}

/// Writes one page as the engine does: each of `records` given to it, then `bookmark`, then the
/// `after_bookmark` tombstones.
pub fn write_page(
    sink: &KafkaSink,
    records: &[Record],
    after_bookmark: Vec<Record>,
    bookmark: &Bookmark,
) -> Result<Committed, SinkError> {
    let mut page = Page::default();
    for record in records {
        sink.produce(&mut page, record.clone())?;
    }
    page.push_after_bookmark(after_bookmark);
    sink.commit_page(&mut page, bookmark)
}
