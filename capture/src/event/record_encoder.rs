//! Events to Kafka-shaped [`Record`]s, whatever the sink, in the configured format:
//! - `debezium`: the Debezium encoder's records (a delete's tombstone included), to
//!   `<prefix>.<SCHEMA>.<TABLE>`, in JSON or (`format.encoding: avro`, with a schema registry)
//!   Avro.
//! - `compact`: one record per event to `<prefix>.<SCHEMA>.<TABLE>` too, its value the contracts'
//!   compact object, its key the row's key columns (`compact::encode_key`).
//!
//! With `format.transactionMetadata` (Debezium's `provide.transaction.metadata`), the Debezium
//! encoder's `BEGIN` record comes before a transaction's first data record and
//! [`RecordEncoder::end_transaction`] gives its `END` record, so both are in the transaction's
//! page. The compact format has none. Debezium-format captures also write a schema change event
//! to `<prefix>` for each DDL on a captured table ([`RecordEncoder::schema_change`]).

use std::sync::Arc;

use jiff::Timestamp;
use redoline_crds::v1alpha1::{FormatEncoding, FormatSpec, FormatType};

use crate::config::ConfigError;
use crate::dictionary::TableSchema;
use crate::event::debezium::{DebeziumEncoder, DebeziumOptions, topic_name};
use crate::event::heartbeat::heartbeat_record;
use crate::event::{ChangeEvent, Operation, compact};
use crate::event::{EncodeError, Record};
use crate::filter::Filters;
use crate::registry::SchemaRegistry;
use crate::schema_history::TableChange;

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
    /// `filters` shape Debezium values and keys (column lists, message key columns);
    /// `registry` gives the ids of Avro schemas (`format.encoding: avro`, which needs one).
    pub fn new(
        format: &FormatSpec,
        topic_prefix: &str,
        database_name: &str,
        filters: Arc<Filters>,
        registry: Option<Box<dyn SchemaRegistry>>,
    ) -> Result<Self, ConfigError> {
        let options = DebeziumOptions::from_spec(format, topic_prefix, database_name);
        Ok(match (format.type_, format.encoding, registry) {
            (FormatType::Compact, _, _) => Self::Compact {
                topic_prefix: topic_prefix.to_owned(),
                last_topic: None,
            },
            (FormatType::Debezium, FormatEncoding::Json, _) => {
                Self::Debezium(Box::new(DebeziumEncoder::with_filters(options, filters)))
            }
            (FormatType::Debezium, FormatEncoding::Avro, Some(registry)) => Self::Debezium(
                Box::new(DebeziumEncoder::with_registry(options, filters, registry)),
            ),
            (FormatType::Debezium, FormatEncoding::Avro, None) => {
                return Err(ConfigError::new(
                    "format.encoding",
                    "avro needs a schema registry (schemaRegistry), and none is configured",
                ));
            }
        })
    }

    /// The record that closes the transaction just encoded (Debezium's `END`), if any.
    pub fn end_transaction(
        &mut self,
        committed_at: Timestamp,
    ) -> Result<Option<Record>, EncodeError> {
        match self {
            Self::Compact { .. } => Ok(None),
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
                    key: compact::encode_key(event).map(String::into_bytes),
                    value: Some(compact::encode(event).into_bytes()),
                }])
            }
            Self::Debezium(encoder) => encoder.encode(event, processed_at),
        }
    }

    /// The schema change record of a DDL event (Debezium's `include.schema.changes`), with the
    /// structure the DDL made; `None` for the compact format, whose `ddl` event is its record.
    pub fn schema_change(
        &mut self,
        event: &ChangeEvent,
        change: &TableChange,
        processed_at: Timestamp,
    ) -> Result<Option<Record>, EncodeError> {
        let (Self::Debezium(encoder), Operation::Ddl { sql }) = (self, &event.op) else {
            return Ok(None);
        };
        if !encoder.options().include_schema_changes {
            return Ok(None);
        }
        encoder
            .schema_change(event, sql, change, processed_at)
            .map(Some)
    }

    /// Debezium's heartbeat record on `topic` for the capture `topic_prefix` at `at`, in the
    /// Debezium format's encoding (plain JSON with the compact format).
    pub fn heartbeat(
        &mut self,
        topic: &str,
        topic_prefix: &str,
        at: Timestamp,
    ) -> Result<Record, EncodeError> {
        match self {
            Self::Compact { .. } => Ok(heartbeat_record(topic, topic_prefix, false, at)),
            Self::Debezium(encoder) => encoder.heartbeat(topic, at),
        }
    }
}

#[cfg(test)]
mod tests {
    use redoline_crds::v1alpha1::FormatEncoding;

    use super::*;
    use crate::registry::memory::MemoryRegistry;

    #[test]
    fn avro_needs_a_registry() {
        let format = FormatSpec {
            encoding: FormatEncoding::Avro,
            ..FormatSpec::default()
        };
        let filters = Arc::new(Filters::default());
        let Err(error) = RecordEncoder::new(&format, "p", "DB", Arc::clone(&filters), None) else {
            panic!("avro without a registry")
        };
        assert_eq!(error.field, "format.encoding");
        let registry: Box<dyn SchemaRegistry> = Box::new(MemoryRegistry::default());
        assert!(RecordEncoder::new(&format, "p", "DB", filters, Some(registry)).is_ok());
    }
}
