//! The sink interface the engine drives: [`Output`], the file sink or the Kafka sink, driven
//! the same way (records per event, a page per transaction or aggregated, the bookmark last).
//!
//! - **file**: one JSON line per record ([`FileLines`]): the compact object alone, or for Debezium
//!   `{"topic": "...", "key": <key JSON or null>, "value": <value JSON or null>}`, so a file holds
//!   exactly what the Kafka sink would write, topic by topic. Lines stream into the data file;
//!   only the bookmark waits for the page's end. Records of the capture's own topics (ops, DLQ,
//!   journal) have no place in the file: ops events and dead letters are logged instead.
//! - **Kafka**: each record goes into the page's Kafka transaction as it is encoded
//!   ([`KafkaSink::produce`]; the transaction is begun at the page's first record), and
//!   [`KafkaSink::commit_page`] closes it with the bookmark. **Memory bound**: nothing here grows
//!   with a transaction. A spilled transaction's rows are read back from its spill file, encoded
//!   and produced one event at a time; librdkafka's queue (`queue.buffering.max.*`, 16 MiB by
//!   default) bounds what is in flight, and the producer waits while it is full. Only the
//!   tombstones of ended journal entries wait in the [`Page`] for the bookmark (key-only, one per
//!   journal chunk). The cost: a page whose Kafka transaction must be aborted mid-stream cannot
//!   be sent again, so the attempt ends with a retry (`crate::error::Disposition::Retry`) and the
//!   run starts again from the stored bookmark, mining the page's transactions again (their
//!   spill files were never released, since the page never committed; the new attempt's buffer
//!   starts afresh and spills them again).
//!
//! Heartbeat records go to the heartbeat topic with Kafka, and into a Debezium-format file
//! ([`Output::push_heartbeat`]).

use redoline_crds::v1alpha1::FormatType;

use super::file::{FileSink, FileSinkError};
use super::{Bookmark, KafkaSink, Page, SinkError};
use crate::buffer::OpsEvent;
use crate::event::Record;

/// A failure of the sink a run writes to.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(transparent)]
    File(#[from] FileSinkError),
    #[error(transparent)]
    Kafka(#[from] Box<SinkError>),
    #[error("the bookmark cannot be written as JSON: {0}")]
    BookmarkJson(#[source] serde_json::Error),
}

impl From<SinkError> for OutputError {
    fn from(error: SinkError) -> Self {
        Self::Kafka(Box::new(error))
    }
}

/// What a line of the data file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileLines {
    /// The record's value alone (the compact format: records of change events only).
    Values,
    /// `{"topic":…,"key":…,"value":…}` (the Debezium format: records of every topic).
    Records,
}

impl FileLines {
    /// The lines of a format.
    pub fn of(format: FormatType) -> Self {
        match format {
            FormatType::Compact => Self::Values,
            FormatType::Debezium => Self::Records,
        }
    }
}

/// The file sink and the shape of its lines.
#[derive(Debug)]
pub struct FileOutput {
    pub sink: FileSink,
    lines: FileLines,
}

impl FileOutput {
    fn append(&mut self, record: &Record) -> Result<(), FileSinkError> {
        match self.lines {
            FileLines::Values => self
                .sink
                .append_line(&[record.value.as_deref().unwrap_or_default()]),
            FileLines::Records => self.sink.append_record_line(
                &record.topic,
                record.key.as_deref(),
                record.value.as_deref(),
            ),
        }
    }
}

/// The sink a run writes to.
#[derive(Debug)]
pub enum Output {
    File(FileOutput),
    Kafka(Box<KafkaOutput>),
}

/// The Kafka sink and the page being written.
#[derive(Debug)]
pub struct KafkaOutput {
    pub sink: KafkaSink,
    page: Page,
}

impl KafkaOutput {
    /// Gives `records` to the page's Kafka transaction, in order.
    fn produce(&mut self, records: impl IntoIterator<Item = Record>) -> Result<(), OutputError> {
        for record in records {
            self.sink.produce(&mut self.page, record)?;
        }
        Ok(())
    }
}

impl Output {
    pub fn file(sink: FileSink, lines: FileLines) -> Self {
        Self::File(FileOutput { sink, lines })
    }

    pub fn kafka(sink: KafkaSink) -> Self {
        Self::Kafka(Box::new(KafkaOutput {
            sink,
            page: Page::default(),
        }))
    }

    /// Makes data topics ready before a page writes to them (see `KafkaSink::prepare_topics`);
    /// nothing for a file.
    pub fn prepare_topics(&self, topics: &[String]) -> Result<(), OutputError> {
        match self {
            Self::File(_) => Ok(()),
            Self::Kafka(kafka) => Ok(kafka.sink.prepare_topics(topics)?),
        }
    }

    /// Adds a committed transaction's records to the page.
    pub fn append(&mut self, records: Vec<Record>) -> Result<u64, OutputError> {
        let count = records.len() as u64;
        match self {
            Self::File(file) => {
                for record in &records {
                    file.append(record)?;
                }
            }
            Self::Kafka(kafka) => kafka.produce(records)?,
        }
        Ok(count)
    }

    /// Records of the capture's own topics (ops events, dead letters, journal chunks) that must
    /// precede the next bookmark. Kafka only: the file sink has no such topics.
    pub fn push_records(
        &mut self,
        records: impl IntoIterator<Item = Record>,
    ) -> Result<(), OutputError> {
        match self {
            Self::File(_) => Ok(()),
            Self::Kafka(kafka) => kafka.produce(records),
        }
    }

    /// An ops event (and the dead letter of a discarded transaction) for the next page, keyed by
    /// the transaction's xid, its JSON as logged. Nothing with the file sink (it is logged only).
    pub fn publish_dropped(
        &mut self,
        event: &OpsEvent,
        json: String,
        dlq: Option<String>,
    ) -> Result<(), OutputError> {
        let Self::Kafka(kafka) = self else {
            return Ok(());
        };
        let topics = &kafka.sink.options().topics;
        let (OpsEvent::TransactionOrphanReleased { transaction, .. }
        | OpsEvent::TransactionDiscarded { transaction, .. }) = event;
        let xid = transaction.transaction.xid.clone();
        let mut records = vec![Record {
            topic: topics.ops.clone(),
            key: Some(xid.clone().into_bytes()),
            value: Some(json.into_bytes()),
        }];
        if let Some(dlq) = dlq {
            records.push(Record {
                topic: topics.dlq.clone(),
                key: Some(xid.into_bytes()),
                value: Some(dlq.into_bytes()),
            });
        }
        kafka.produce(records)
    }

    /// A schema history record (see [`crate::schema_history`]): with Kafka into the page, before
    /// its bookmark; with the file sink appended to the history file and synced at once.
    pub fn record_history(&mut self, key: String, value: String) -> Result<(), OutputError> {
        match self {
            Self::File(file) => file.sink.append_history(&value)?,
            Self::Kafka(kafka) => {
                let topic = kafka.sink.options().topics.schema_history.clone();
                kafka.produce([Record {
                    topic,
                    key: Some(key.into_bytes()),
                    value: Some(value.into_bytes()),
                }])?;
            }
        }
        Ok(())
    }

    /// A heartbeat record ([`crate::heartbeat`]) for the next page: with Kafka always; with the
    /// file sink only in the Debezium format (whose file holds every topic's records); a compact
    /// file holds change events alone.
    pub fn push_heartbeat(&mut self, record: Record) -> Result<(), OutputError> {
        match self {
            Self::File(FileOutput {
                lines: FileLines::Values,
                ..
            }) => Ok(()),
            _ => self.append(vec![record]).map(|_| ()),
        }
    }

    /// Journal tombstones of transactions that ended: after the next bookmark (see `Page`).
    pub fn push_tombstones(&mut self, records: impl IntoIterator<Item = Record>) {
        if let Self::Kafka(kafka) = self {
            kafka.page.push_after_bookmark(records);
        }
    }

    /// Whether the page was given records that belong to no transaction (they need a page even
    /// when no transaction committed).
    pub fn has_loose_records(&self) -> bool {
        match self {
            Self::File(_) => false,
            Self::Kafka(kafka) => !kafka.page.is_empty(),
        }
    }

    /// Key and value bytes given to the open page (Kafka; the file sink's pages have no byte
    /// bound).
    pub fn page_bytes(&self) -> u64 {
        match self {
            Self::File(_) => 0,
            Self::Kafka(kafka) => kafka.page.totals().1,
        }
    }

    /// Commits the page with `bookmark`; returns once it is durable and visible, the signal to
    /// release the page's spill files.
    pub fn commit(&mut self, bookmark: &Bookmark) -> Result<(), OutputError> {
        match self {
            Self::File(file) => {
                let value = serde_json::to_value(bookmark).map_err(OutputError::BookmarkJson)?;
                file.sink.commit(&value)?;
            }
            Self::Kafka(kafka) => {
                let committed = kafka.sink.commit_page(&mut kafka.page, bookmark)?;
                tracing::debug!(
                    commit_scn = committed.commit_scn,
                    records = committed.records,
                    "page committed"
                );
            }
        }
        Ok(())
    }
}
