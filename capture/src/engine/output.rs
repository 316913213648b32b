//! Where the engine's pages go: the same loop drives the file sink and the Kafka sink.
//!
//! Events become Kafka-shaped [`Record`]s first ([`RecordEncoder`]), whatever the sink:
//! - `debezium`: the Debezium encoder's records (a delete's tombstone included), to
//!   `<prefix>.<SCHEMA>.<TABLE>`.
//! - `compact`: one record per event to `<prefix>.<SCHEMA>.<TABLE>` too, its value the contracts'
//!   compact object, its key the row's key columns (`compact::encode_key`).
//!
//! [`Output`] then writes them:
//! - **file**: one JSON line per record: the compact object alone, or for Debezium
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
//!   be sent again, so the attempt ends with a retry (`crate::error::Disposition::Retry`) and the run starts
//!   again from the stored bookmark, mining the page's transactions again (their spill files
//!   were never released, since the page never committed; the new attempt's buffer starts
//!   afresh and spills them again).
//!
//! With `format.transactionMetadata` (Debezium's `provide.transaction.metadata`), the Debezium
//! encoder's `BEGIN` record comes before a transaction's first data record and
//! [`RecordEncoder::end_transaction`] gives its `END` record, so both are in the transaction's
//! page (one Kafka transaction with its data and bookmark) and, with the file sink, in the same
//! file stream as `{"topic":"<prefix>.transaction",...}` lines. The compact format has none.
//!
//! Heartbeat records go to the heartbeat topic with Kafka, and into a Debezium-format file
//! ([`Output::push_heartbeat`]).
//!
//! Debezium-format captures also write a schema change event to `<prefix>` for each DDL on a
//! captured table ([`RecordEncoder::schema_change`]), in the DDL transaction's page.

use std::sync::Arc;

use jiff::Timestamp;
use redoline_crds::v1alpha1::{FormatSpec, FormatType};

use crate::buffer::OpsEvent;
use crate::dictionary::TableSchema;
use crate::error::CaptureError;
use crate::event::debezium::schema_change::schema_change_record;
use crate::event::debezium::{DebeziumEncoder, DebeziumOptions, EncodeError, Record, topic_name};
use crate::event::{ChangeEvent, Operation, compact};
use crate::filter::Filters;
use crate::schema_history::TableChange;
use crate::sink::file::{FileSink, FileSinkError};
use crate::sink::{Bookmark, KafkaSink, Page};

/// The configured event format, producing records.
#[derive(Debug)]
pub enum RecordEncoder {
    Compact {
        topic_prefix: String,
        /// The topic of the table encoded last: events come in runs of one table.
        last_topic: Option<(Arc<TableSchema>, String)>,
    },
    Debezium(Box<DebeziumEncoder>),
}

impl RecordEncoder {
    /// `filters` shape Debezium values and keys (column lists, message key columns).
    pub fn new(
        format: &FormatSpec,
        topic_prefix: &str,
        database_name: &str,
        filters: Arc<Filters>,
    ) -> Self {
        match format.type_ {
            FormatType::Compact => Self::Compact {
                topic_prefix: topic_prefix.to_owned(),
                last_topic: None,
            },
            FormatType::Debezium => Self::Debezium(Box::new(DebeziumEncoder::with_filters(
                DebeziumOptions::from_spec(format, topic_prefix, database_name),
                filters,
            ))),
        }
    }

    /// The record that closes the transaction just encoded (Debezium's `END`), if any.
    pub fn end_transaction(&mut self, committed_at: Timestamp) -> Option<Record> {
        match self {
            Self::Compact { .. } => None,
            Self::Debezium(encoder) => encoder.end_transaction(committed_at),
        }
    }

    /// The records of one event, in order.
    pub fn encode(
        &mut self,
        event: &ChangeEvent,
        processed_at: Timestamp,
    ) -> Result<Vec<Record>, EncodeError> {
        match self {
            Self::Compact {
                topic_prefix,
                last_topic,
            } => {
                let topic = match last_topic {
                    Some((table, topic)) if Arc::ptr_eq(table, &event.table) => topic.clone(),
                    _ => {
                        let topic =
                            topic_name(topic_prefix, event.table.schema(), event.table.table());
                        *last_topic = Some((Arc::clone(&event.table), topic.clone()));
                        topic
                    }
                };
                Ok(vec![Record {
                    topic,
                    key: compact::encode_key(event),
                    value: Some(compact::encode(event)),
                }])
            }
            Self::Debezium(encoder) => encoder.encode(event, processed_at),
        }
    }

    /// The schema change record of a DDL event (Debezium's `include.schema.changes`), with the
    /// structure the DDL made; `None` for the compact format, whose `ddl` event is its record.
    pub fn schema_change(
        &self,
        event: &ChangeEvent,
        change: &TableChange,
        processed_at: Timestamp,
    ) -> Option<Record> {
        let (Self::Debezium(encoder), Operation::Ddl { sql }) = (self, &event.op) else {
            return None;
        };
        let options = encoder.options();
        options
            .include_schema_changes
            .then(|| schema_change_record(options, event, sql, change, processed_at))
    }

    /// Whether records carry Connect schemas (Debezium's `schemas.enable`).
    pub fn schemas_enabled(&self) -> bool {
        match self {
            Self::Compact { .. } => false,
            Self::Debezium(encoder) => encoder.options().schemas_enabled,
        }
    }

    /// The file sink's line of a record (see the module docs).
    fn append_line(&self, sink: &mut FileSink, record: &Record) -> Result<(), FileSinkError> {
        match self {
            Self::Compact { .. } => {
                sink.append_line(&[record.value.as_deref().unwrap_or_default().as_bytes()])
            }
            Self::Debezium(_) => sink.append_record_line(
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
    File(FileSink),
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
    fn produce(&mut self, records: impl IntoIterator<Item = Record>) -> Result<(), CaptureError> {
        for record in records {
            self.sink.produce(&mut self.page, record)?;
        }
        Ok(())
    }
}

impl Output {
    pub fn kafka(sink: KafkaSink) -> Self {
        Self::Kafka(Box::new(KafkaOutput {
            sink,
            page: Page::default(),
        }))
    }

    /// Adds a committed transaction's records to the page.
    pub fn append(
        &mut self,
        encoder: &RecordEncoder,
        records: Vec<Record>,
    ) -> Result<u64, CaptureError> {
        let count = records.len() as u64;
        match self {
            Self::File(sink) => {
                for record in &records {
                    encoder.append_line(sink, record)?;
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
    ) -> Result<(), CaptureError> {
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
    ) -> Result<(), CaptureError> {
        let Self::Kafka(kafka) = self else {
            return Ok(());
        };
        let topics = &kafka.sink.options().topics;
        let (OpsEvent::TransactionOrphanReleased { transaction, .. }
        | OpsEvent::TransactionDiscarded { transaction, .. }) = event;
        let xid = transaction.transaction.xid.clone();
        let mut records = vec![Record {
            topic: topics.ops.clone(),
            key: Some(xid.clone()),
            value: Some(json),
        }];
        if let Some(dlq) = dlq {
            records.push(Record {
                topic: topics.dlq.clone(),
                key: Some(xid),
                value: Some(dlq),
            });
        }
        kafka.produce(records)
    }

    /// A schema history record (see [`crate::schema_history`]): with Kafka into the page, before
    /// its bookmark; with the file sink appended to the history file and synced at once.
    pub fn record_history(&mut self, key: String, value: String) -> Result<(), CaptureError> {
        match self {
            Self::File(sink) => sink.append_history(&value)?,
            Self::Kafka(kafka) => {
                let topic = kafka.sink.options().topics.schema_history.clone();
                kafka.produce([Record {
                    topic,
                    key: Some(key),
                    value: Some(value),
                }])?;
            }
        }
        Ok(())
    }

    /// A heartbeat record ([`crate::heartbeat`]) for the next page: with Kafka always; with the
    /// file sink only in the Debezium format (whose file holds every topic's records); a compact
    /// file holds change events alone.
    pub fn push_heartbeat(
        &mut self,
        encoder: &RecordEncoder,
        record: Record,
    ) -> Result<(), CaptureError> {
        match (&*self, encoder) {
            (Self::File(_), RecordEncoder::Compact { .. }) => Ok(()),
            _ => self.append(encoder, vec![record]).map(|_| ()),
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
    pub fn commit(&mut self, bookmark: &Bookmark) -> Result<(), CaptureError> {
        match self {
            Self::File(sink) => {
                let value = serde_json::to_value(bookmark).map_err(CaptureError::BookmarkJson)?;
                sink.commit(&value)?;
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
