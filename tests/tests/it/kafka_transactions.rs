//! Kafka transactions on the real test broker, with the same client (rdkafka) redoline uses:
//! what an aborted transaction leaves behind, what a committed one shows, and that a second
//! producer with the same `transactional.id` fences the first. Redoline's exactly-once delivery
//! rests on exactly these guarantees, so they are checked here rather than assumed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};
use redoline_tests::kafka::KafkaEnv;

/// Upper bound for any single wait on the broker: deliveries, transaction calls, consuming.
const WAIT: Duration = Duration::from_secs(60);

/// One record as a consumer saw it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Seen {
    partition: i32,
    offset: i64,
    key: String,
    value: String,
}

fn transactional_producer(env: &KafkaEnv, transactional_id: &str) -> Result<FutureProducer> {
    env.client_config()
        .set("transactional.id", transactional_id)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("transaction.timeout.ms", "60000")
        .set("message.timeout.ms", "30000")
        .create()
        .context("creating a transactional producer")
}

/// `count` records named `{tag}-{i}`, spread round-robin over all partitions.
fn records(tag: &str, count: usize) -> Vec<(String, String)> {
    (0..count)
        .map(|i| (format!("{tag}-key-{i}"), format!("{tag}-{i}")))
        .collect()
}

/// Sends every record (record `i` to partition `i % partitions`) and waits until the broker has
/// acknowledged each one: after this they are in the log, whatever becomes of the transaction.
async fn send_acknowledged(
    producer: &FutureProducer,
    topic: &str,
    partitions: i32,
    records: &[(String, String)],
) -> Result<()> {
    let mut deliveries = Vec::new();
    for (i, (key, value)) in records.iter().enumerate() {
        let partition = i32::try_from(i)? % partitions;
        let record = FutureRecord::to(topic)
            .partition(partition)
            .key(key)
            .payload(value);
        match producer.send_result(record) {
            Ok(delivery) => deliveries.push((value, delivery)),
            Err((e, _)) => bail!("queueing {value} failed: {e}"),
        }
    }
    for (value, delivery) in deliveries {
        match tokio::time::timeout(WAIT, delivery).await {
            Err(_) => bail!("no delivery report for {value} within {WAIT:?}"),
            Ok(Err(_)) => bail!("the delivery future of {value} was cancelled"),
            Ok(Ok(Err((e, _)))) => bail!("{value} was not delivered: {e}"),
            Ok(Ok(Ok(_))) => {}
        }
    }
    Ok(())
}

/// Reads `topic` from the beginning with the given `isolation.level` until it has at least
/// `expected` records and every partition has reported its end, then returns what it read.
/// The end is the last stable offset for `read_committed` and the high watermark for
/// `read_uncommitted`, so nothing present in the log is left unread when this returns.
async fn read_all(
    env: &KafkaEnv,
    topic: &str,
    partitions: i32,
    isolation: &str,
    expected: usize,
) -> Result<Vec<Seen>> {
    let consumer: StreamConsumer = env
        .client_config()
        .set("group.id", format!("{topic}-{isolation}"))
        .set("isolation.level", isolation)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("enable.partition.eof", "true")
        .create()
        .context("creating a consumer")?;
    let mut assignment = TopicPartitionList::new();
    for p in 0..partitions {
        assignment.add_partition_offset(topic, p, Offset::Beginning)?;
    }
    consumer
        .assign(&assignment)
        .context("assigning partitions")?;

    let deadline = Instant::now() + WAIT;
    let mut at_end: BTreeSet<i32> = BTreeSet::new();
    let mut seen = Vec::new();
    while seen.len() < expected || at_end.len() < usize::try_from(partitions)? {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(next) = tokio::time::timeout(left, consumer.recv()).await else {
            bail!(
                "{isolation} consumer of {topic}: after {WAIT:?} it has read {} of {expected} \
                 records, partitions at their end: {at_end:?}; read so far: {seen:#?}\n{}",
                seen.len(),
                env.log_tail()
            );
        };
        match next {
            Ok(message) => {
                at_end.remove(&message.partition());
                let text = |bytes: Option<&[u8]>| {
                    String::from_utf8(bytes.unwrap_or_default().to_vec())
                        .context("a key or value is not UTF-8")
                };
                seen.push(Seen {
                    partition: message.partition(),
                    offset: message.offset(),
                    key: text(message.key())?,
                    value: text(message.payload())?,
                });
            }
            Err(KafkaError::PartitionEOF(partition)) => {
                at_end.insert(partition);
            }
            Err(e) => bail!("{isolation} consumer of {topic} failed: {e}"),
        }
    }
    Ok(seen)
}

/// Values as a multiset, so duplicates show up as counts above 1.
fn counted(seen: &[Seen]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for s in seen {
        *counts.entry(s.value.as_str()).or_default() += 1;
    }
    counts
}

fn once_each(records: &[(String, String)]) -> BTreeMap<&str, usize> {
    records.iter().map(|(_, v)| (v.as_str(), 1)).collect()
}

/// Reads `topic` with each isolation level and asserts what each sees: `read_committed` exactly
/// the `committed` records, once each; `read_uncommitted` the `aborted` ones as well, once each.
/// Returns both readings, committed first.
async fn read_both_ways(
    env: &KafkaEnv,
    topic: &str,
    partitions: i32,
    aborted: &[(String, String)],
    committed: &[(String, String)],
) -> Result<(Vec<Seen>, Vec<Seen>)> {
    let read_committed =
        read_all(env, topic, partitions, "read_committed", committed.len()).await?;
    assert_eq!(counted(&read_committed), once_each(committed));
    let everything: Vec<_> = aborted.iter().chain(committed).cloned().collect();
    let read_uncommitted =
        read_all(env, topic, partitions, "read_uncommitted", everything.len()).await?;
    assert_eq!(counted(&read_uncommitted), once_each(&everything));
    Ok((read_committed, read_uncommitted))
}

#[tokio::test]
async fn read_committed_sees_committed_records_once_and_no_aborted_ones() -> Result<()> {
    const PARTITIONS: i32 = 3;
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("txn-abort-commit");
    let topic = format!("{prefix}-topic");
    env.create_topic(&topic, PARTITIONS).await?;

    let aborted = records("aborted", 12);
    let committed = records("committed", 9);

    let producer = transactional_producer(env, &format!("{prefix}-txn"))?;
    producer
        .init_transactions(WAIT)
        .context("init_transactions")?;

    producer.begin_transaction()?;
    send_acknowledged(&producer, &topic, PARTITIONS, &aborted).await?;
    producer
        .abort_transaction(WAIT)
        .context("abort_transaction")?;

    producer.begin_transaction()?;
    send_acknowledged(&producer, &topic, PARTITIONS, &committed).await?;
    producer
        .commit_transaction(WAIT)
        .context("commit_transaction")?;

    // Exactly the committed records, each once; without isolation the aborted records are there
    // too: the abort wrote data, and it is the isolation level that hides it.
    let (read_committed, read_uncommitted) =
        read_both_ways(env, &topic, PARTITIONS, &aborted, &committed).await?;
    // The committed records keep the keys they were sent with.
    let pairs: BTreeSet<(&str, &str)> = read_committed
        .iter()
        .map(|s| (s.key.as_str(), s.value.as_str()))
        .collect();
    let sent: BTreeSet<(&str, &str)> = committed
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(pairs, sent);

    // Both consumers agree on where each committed record is, and in every partition the
    // aborted records sit before the committed ones: read_committed skipped over them.
    let committed_at: BTreeSet<&Seen> = read_committed.iter().collect();
    for s in &read_uncommitted {
        if s.value.starts_with("committed-") {
            assert!(committed_at.contains(s), "read_committed lacks {s:?}");
        }
    }
    for partition in 0..PARTITIONS {
        let offsets_of = |tag: &str| -> Vec<i64> {
            read_uncommitted
                .iter()
                .filter(|s| s.partition == partition && s.value.starts_with(tag))
                .map(|s| s.offset)
                .collect()
        };
        let (aborted_at, committed_at) = (offsets_of("aborted-"), offsets_of("committed-"));
        assert!(!aborted_at.is_empty() && !committed_at.is_empty());
        assert!(
            aborted_at.iter().max() < committed_at.iter().min(),
            "partition {partition}: aborted at {aborted_at:?}, committed at {committed_at:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_second_producer_with_the_same_transactional_id_fences_the_first() -> Result<()> {
    const PARTITIONS: i32 = 2;
    let env = KafkaEnv::shared()?;
    let prefix = env.unique_prefix("txn-fencing");
    let topic = format!("{prefix}-topic");
    let transactional_id = format!("{prefix}-txn");
    env.create_topic(&topic, PARTITIONS).await?;

    let zombie_records = records("zombie", 4);
    let survivor_records = records("survivor", 5);

    let zombie = transactional_producer(env, &transactional_id)?;
    zombie
        .init_transactions(WAIT)
        .context("init_transactions (first producer)")?;
    zombie.begin_transaction()?;
    send_acknowledged(&zombie, &topic, PARTITIONS, &zombie_records).await?;

    // The newcomer bumps the producer epoch and aborts the open transaction of the first.
    let survivor = transactional_producer(env, &transactional_id)?;
    survivor
        .init_transactions(WAIT)
        .context("init_transactions (second producer)")?;

    let Err(error) = zombie.commit_transaction(WAIT) else {
        bail!("the fenced producer could still commit");
    };
    let code = error.rdkafka_error_code();
    assert!(
        matches!(
            code,
            Some(
                RDKafkaErrorCode::Fenced
                    | RDKafkaErrorCode::ProducerFenced
                    | RDKafkaErrorCode::InvalidProducerEpoch
            )
        ),
        "expected a fencing error, got {error} ({code:?})"
    );
    let KafkaError::Transaction(txn_error) = &error else {
        bail!("expected a transaction error, got {error}");
    };
    assert!(txn_error.is_fatal(), "fencing must be fatal: {txn_error}");
    println!("the first producer was fenced as expected: {error}");

    survivor.begin_transaction()?;
    send_acknowledged(&survivor, &topic, PARTITIONS, &survivor_records).await?;
    survivor
        .commit_transaction(WAIT)
        .context("commit_transaction (second producer)")?;

    // Only the survivor's records are committed; the zombie's did reach the log, and the fencing
    // aborted them.
    read_both_ways(env, &topic, PARTITIONS, &zombie_records, &survivor_records).await?;
    Ok(())
}
