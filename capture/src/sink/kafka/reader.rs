//! Reads a topic from its beginning to its end, once, with `read_committed`: how the bookmark and
//! the journal are read back at start.
//!
//! "The end" is each partition's end as the broker reports it when the reader gets there
//! (`enable.partition.eof`): the high watermark, or for `read_committed` the last stable offset.
//! Read after the transactional producer has been initialised, that is the true end: the
//! producer's `init_transactions` fenced any earlier instance and aborted its open transaction,
//! so no transaction of this capture can still hold the last stable offset back.

use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use super::config::{KafkaClientSettings, close_in_background};
use crate::stop::Stop;

/// One record as read back (key and value as bytes; `None` is a Kafka null).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicRecord {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// Why a topic could not be read to its end.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Transient: the broker failed or did not answer.
    #[error("reading {topic}: {action} failed: {source}")]
    Kafka {
        topic: String,
        action: &'static str,
        #[source]
        source: KafkaError,
    },
    /// Transient: the end was not reached in time.
    #[error(
        "reading {topic}: the end of partitions {pending:?} was not reached within {timeout:?}"
    )]
    Timeout {
        topic: String,
        pending: Vec<i32>,
        timeout: Duration,
    },
    /// Definite: a record was refused by the caller (CDC-5002, CDC-4002).
    #[error(transparent)]
    Refused(Stop),
}

/// The reader's client context: the end of a partition is what the reader waits for, and comes
/// through librdkafka's error callback too; rust-rdkafka's default context logs it as an error
/// on every start.
#[derive(Debug)]
struct ReaderContext;

impl ClientContext for ReaderContext {
    fn error(&self, error: KafkaError, reason: &str) {
        match error {
            KafkaError::PartitionEOF(_)
            | KafkaError::Global(rdkafka::types::RDKafkaErrorCode::PartitionEOF) => {
                tracing::debug!(reason, "Read back to a partition's end.")
            }
            error => {
                tracing::warn!(%error, reason, "Kafka client error while reading a topic back.")
            }
        }
    }
}

impl ConsumerContext for ReaderContext {}

type Reader = BaseConsumer<ReaderContext>;

/// The `group.id` of the reader of `topic`: librdkafka asks for its coordinator (Describe on the
/// group), though the reader assigns its partitions and never joins nor commits.
pub fn reader_group(topic: &str) -> String {
    format!("redoline-reader-{topic}")
}

/// Reads `topic` to its end, handing every record to `visit` in partition offset order.
pub fn read_to_end(
    settings: &KafkaClientSettings,
    topic: &str,
    timeout: Duration,
    mut visit: impl FnMut(TopicRecord) -> Result<(), Stop>,
) -> Result<(), ReadError> {
    let failed = |action| failed(topic, action);
    let consumer: Reader = settings
        .reader_config(&reader_group(topic))
        .create_with_context(ReaderContext)
        .map_err(failed("creating a consumer"))?;
    let read = read_with(&consumer, topic, timeout, &mut visit);
    close_in_background(consumer);
    read
}

/// A broker fault while `action` on `topic`.
fn failed(topic: &str, action: &'static str) -> impl FnOnce(KafkaError) -> ReadError {
    let topic = topic.to_owned();
    move |source| ReadError::Kafka {
        topic,
        action,
        source,
    }
}

fn read_with(
    consumer: &Reader,
    topic: &str,
    timeout: Duration,
    visit: &mut impl FnMut(TopicRecord) -> Result<(), Stop>,
) -> Result<(), ReadError> {
    let failed = |action| failed(topic, action);
    let metadata = consumer
        .fetch_metadata(Some(topic), timeout)
        .map_err(failed("fetching metadata"))?;
    let partitions: Vec<i32> = metadata
        .topics()
        .iter()
        .filter(|t| t.name() == topic)
        .flat_map(|t| t.partitions().iter().map(|p| p.id()))
        .collect();
    if partitions.is_empty() {
        // The broker lists a topic the principal may not describe with that error and no
        // partitions; say so, rather than that the topic is missing.
        let code = metadata
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .and_then(|t| t.error())
            .map(rdkafka::types::RDKafkaErrorCode::from)
            .filter(|code| *code == rdkafka::types::RDKafkaErrorCode::TopicAuthorizationFailed)
            .unwrap_or(rdkafka::types::RDKafkaErrorCode::UnknownTopicOrPartition);
        return Err(failed("fetching metadata")(KafkaError::MetadataFetch(code)));
    }

    let mut assignment = TopicPartitionList::new();
    let mut pending = Vec::new();
    for &partition in &partitions {
        let (low, high) = consumer
            .fetch_watermarks(topic, partition, timeout)
            .map_err(failed("fetching watermarks"))?;
        // An empty partition may never report its end: there is nothing to fetch.
        if high > low {
            assignment
                .add_partition_offset(topic, partition, Offset::Beginning)
                .map_err(failed("assigning partitions"))?;
            pending.push(partition);
        }
    }
    if pending.is_empty() {
        return Ok(());
    }
    consumer
        .assign(&assignment)
        .map_err(failed("assigning partitions"))?;

    let deadline = Instant::now() + timeout;
    while !pending.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadError::Timeout {
                topic: topic.to_owned(),
                pending,
                timeout,
            });
        }
        match consumer.poll(left.min(Duration::from_millis(500))) {
            None => {}
            Some(Ok(message)) => visit(TopicRecord {
                partition: message.partition(),
                offset: message.offset(),
                key: message.key().map(<[u8]>::to_vec),
                value: message.payload().map(<[u8]>::to_vec),
            })
            .map_err(ReadError::Refused)?,
            Some(Err(KafkaError::PartitionEOF(partition))) => {
                pending.retain(|p| *p != partition);
            }
            Some(Err(e)) => return Err(failed("consuming")(e)),
        }
    }
    Ok(())
}
