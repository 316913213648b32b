//! Events per second into a local broker with exactly-once on (`KafkaSink::produce` for each
//! record, then `KafkaSink::commit_page`: one Kafka transaction per page with its bookmark), for 1 KiB events in transactions of 1, 100 and
//! 10,000 events, next to a plain rdkafka producer (no transactions, no bookmark) writing the same
//! bytes in the same run.
//!
//! ```text
//! REDOLINE_KAFKA_BOOTSTRAP=127.0.0.1:9092 cargo bench -p redoline-capture --bench kafka_sink
//! ```
//!
//! Targets (issue 6): at least 100,000 events/s for 100-event transactions, and at least 70% of
//! the plain producer's throughput. Figures are printed, never asserted.

use std::time::{Duration, Instant};

use prometheus::Registry;
use rdkafka::producer::{DefaultProducerContext, Producer, ThreadedProducer};
use redoline_capture::event::Record;
use redoline_capture::sink::kafka::topics::{RequiredTopic, ensure_topics_retrying};
use redoline_capture::sink::{
    Bookmark, CaptureIdentity, DeliveryMode, KafkaClientSettings, KafkaSink, Page, PageFill,
    PagePolicy, SinkMetrics, SinkOptions, SinkStatus, TopicNames, send_waiting,
};
use redoline_capture::source::Xid;
use redoline_crds::v1alpha1::{JournalSpec, KafkaSpec, KafkaTransactionsSpec};

/// What a step of this benchmark fails with.
type BenchError = Box<dyn std::error::Error>;

const EVENT_BYTES: usize = 1024;
/// Each measurement stops after this many events or this long, whichever comes first.
const MAX_EVENTS: usize = 300_000;
const MAX_TIME: Duration = Duration::from_secs(15);

fn main() -> Result<(), BenchError> {
    let Ok(bootstrap) = std::env::var("REDOLINE_KAFKA_BOOTSTRAP") else {
        eprintln!("kafka_sink: set REDOLINE_KAFKA_BOOTSTRAP=host:port to run this benchmark");
        return Ok(());
    };
    let run = format!(
        "bench-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis()
    );
    let settings = KafkaClientSettings::with_bootstrap(&bootstrap);
    let spec = KafkaSpec {
        bootstrap_servers: bootstrap.clone(),
        topic_prefix: run.clone(),
        tls: None,
        authentication: None,
        config_secret: None,
        exactly_once: true,
        transactions: KafkaTransactionsSpec::default(),
        topics: Default::default(),
    };
    let topics = TopicNames::new(&spec, &JournalSpec::default());
    let options = SinkOptions::new(
        CaptureIdentity::new(&run, "bench"),
        settings.clone(),
        topics,
        DeliveryMode::ExactlyOnce,
    );
    let sink = KafkaSink::open(
        options,
        SinkMetrics::new(&Registry::new())?,
        SinkStatus::default(),
    )?;
    let data = format!("{run}.APP.ORDERS");
    let plain_topic = format!("{run}.plain");
    ensure_topics_retrying(
        &settings,
        &[
            RequiredTopic::plain(&data, "bench", "data"),
            RequiredTopic::plain(&plain_topic, "bench", "data"),
        ],
        Duration::from_secs(30),
        Duration::from_secs(60),
    )?;
    let value = "x".repeat(EVENT_BYTES);

    let plain = plain_producer(&settings, &plain_topic, &value)?;
    println!(
        "plain producer (no transactions): {:>9.0} events/s  {:>7.1} MiB/s  ({} events in {:.2?})",
        plain.rate(),
        plain.mib_per_second(),
        plain.events,
        plain.elapsed
    );
    println!(
        "exactly once (KafkaSink::produce + commit_page, 1 KiB events, one bookmark per transaction):"
    );
    for transaction_events in [1, 100, 10_000] {
        let result = exactly_once(&sink, &records(&data, &value, transaction_events))?;
        println!(
            "  {transaction_events:>6} events/transaction: {}  ({} events, {} transactions in {:.2?})",
            result.against(&plain),
            result.events,
            result.pages,
            result.elapsed
        );
    }
    for transaction_events in [1, 10, 100] {
        let result = aggregated(&sink, &records(&data, &value, transaction_events))?;
        println!(
            "  {transaction_events:>6} events/transaction, pages bounded by the default \
             spec.kafka.transactions (100 ms, 100,000 records, 16 MiB): {}  \
             ({} events in {} Kafka transactions, {:.2?})",
            result.against(&plain),
            result.events,
            result.pages,
            result.elapsed
        );
    }
    Ok(())
}

struct Measured {
    events: usize,
    elapsed: Duration,
    /// Kafka transactions committed.
    pages: usize,
}

impl Measured {
    fn rate(&self) -> f64 {
        self.events as f64 / self.elapsed.as_secs_f64()
    }

    fn mib_per_second(&self) -> f64 {
        self.rate() * EVENT_BYTES as f64 / f64::from(1 << 20)
    }

    /// The rate, in events and MiB, and its share of the plain producer's.
    fn against(&self, plain: &Measured) -> String {
        format!(
            "{:>9.0} events/s  {:>7.1} MiB/s  {:>5.1}% of plain",
            self.rate(),
            self.mib_per_second(),
            100.0 * self.rate() / plain.rate()
        )
    }
}

fn records(topic: &str, value: &str, transaction_events: usize) -> Vec<Record> {
    (0..transaction_events)
        .map(|i| Record {
            topic: topic.to_owned(),
            key: Some(format!("key-{i}").into_bytes()),
            value: Some(value.as_bytes().to_vec()),
        })
        .collect()
}

/// Database transactions of `records` each, a Kafka transaction per database transaction.
fn exactly_once(sink: &KafkaSink, records: &[Record]) -> Result<Measured, BenchError> {
    let mut bookmark = Bookmark::initial(1, 1, None, 1);
    let started = Instant::now();
    let mut events = 0;
    let mut n = 0u32;
    let mut page = Page::default();
    while events < MAX_EVENTS && started.elapsed() < MAX_TIME {
        n += 1;
        for record in records {
            sink.produce(&mut page, record.clone())?;
        }
        bookmark.record_commit(u64::from(n) + 1, Xid::from_parts(1, 1, n))?;
        let receipt = sink.commit_page(&mut page, &bookmark)?;
        events += receipt.records - 1;
    }
    Ok(Measured {
        events,
        elapsed: started.elapsed(),
        pages: n as usize,
    })
}

/// Database transactions of `records` each, paged as the engine pages them for Kafka
/// (`PagePolicy::due` with the default `spec.kafka.transactions`).
fn aggregated(sink: &KafkaSink, records: &[Record]) -> Result<Measured, BenchError> {
    let policy = PagePolicy::for_kafka(&KafkaTransactionsSpec::default())?;
    let mut bookmark = Bookmark::initial(1, 1, None, 1);
    let started = Instant::now();
    let mut events = 0;
    let mut pages = 0;
    let mut page = Page::default();
    let mut fill = PageFill::default();
    let mut page_started = None;
    for n in 0..u32::try_from(MAX_EVENTS / records.len())? {
        if started.elapsed() >= MAX_TIME {
            break;
        }
        let began = Instant::now();
        for record in records {
            sink.produce(&mut page, record.clone())?;
        }
        let opened = *page_started.get_or_insert(began);
        fill.records += records.len() as u64;
        fill.bytes = page.totals().1;
        fill.age = Some(opened.elapsed());
        bookmark.record_commit(u64::from(n) + 2, Xid::from_parts(2, 2, n))?;
        if policy.due(records.len() as u64, fill) {
            events += sink.commit_page(&mut page, &bookmark)?.records - 1;
            pages += 1;
            fill = PageFill::default();
            page_started = None;
        }
    }
    if fill.records > 0 {
        events += sink.commit_page(&mut page, &bookmark)?.records - 1;
        pages += 1;
    }
    Ok(Measured {
        events,
        elapsed: started.elapsed(),
        pages,
    })
}

fn plain_producer(
    settings: &KafkaClientSettings,
    topic: &str,
    value: &str,
) -> Result<Measured, BenchError> {
    let producer: ThreadedProducer<DefaultProducerContext> =
        settings.producer_config(None).create()?;
    let keys: Vec<String> = (0..MAX_EVENTS).map(|i| format!("key-{i}")).collect();
    let started = Instant::now();
    let mut events = 0;
    for key in &keys {
        if started.elapsed() >= MAX_TIME {
            break;
        }
        send_waiting(&producer, topic, Some(key.as_str()), Some(value))?;
        events += 1;
    }
    producer.flush(Duration::from_secs(60))?;
    Ok(Measured {
        events,
        elapsed: started.elapsed(),
        pages: 0,
    })
}
