//! Turning events into the sink's records: one JSON line per record for the file sink.
//!
//! - `compact`: the contracts' compact object, one line per event.
//! - `debezium`: one line per Kafka record the Debezium encoder makes (a delete's tombstone
//!   included): `{"topic": "...", "key": <key JSON or null>, "value": <value JSON or null>}`, so a
//!   file holds exactly what the Kafka sink would write, topic by topic.

use redoline_crds::v1alpha1::{FormatSpec, FormatType};

use crate::event::debezium::{DebeziumEncoder, DebeziumOptions, EncodeError};
use crate::event::{ChangeEvent, compact};

/// The configured event format.
#[derive(Debug)]
pub enum LineEncoder {
    Compact,
    Debezium(Box<DebeziumEncoder>),
}

impl LineEncoder {
    pub fn new(format: &FormatSpec, topic_prefix: &str, database_name: &str) -> Self {
        match format.type_ {
            FormatType::Compact => Self::Compact,
            FormatType::Debezium => Self::Debezium(Box::new(DebeziumEncoder::new(
                DebeziumOptions::from_spec(format, topic_prefix, database_name),
            ))),
        }
    }

    /// Calls `line` once per line of `event`.
    pub fn encode(
        &mut self,
        event: &ChangeEvent,
        processed_at: jiff::Timestamp,
        line: &mut dyn FnMut(&[u8]),
    ) -> Result<(), EncodeError> {
        match self {
            Self::Compact => line(compact::encode(event).as_bytes()),
            Self::Debezium(encoder) => {
                for record in encoder.encode(event, processed_at)? {
                    let text = format!(
                        "{{\"topic\":{},\"key\":{},\"value\":{}}}",
                        serde_json::Value::String(record.topic),
                        record.key.as_deref().unwrap_or("null"),
                        record.value.as_deref().unwrap_or("null"),
                    );
                    line(text.as_bytes());
                }
            }
        }
        Ok(())
    }
}
