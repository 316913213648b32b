//! What an encoder gives the sink: Kafka records, or the reason an event has none.
//!
//! Every encoder (Debezium, compact), the heartbeat and the journal produce [`Record`]s, and the
//! sink writes them; neither side needs the other's details, so the type lives beside the event
//! model rather than inside one encoder.

use crate::filter::UnknownKeyColumn;
use crate::registry::RegistryError;

/// One Kafka record: `None` key or value is a Kafka null (no key; a tombstone). Keys and values
/// are bytes: JSON text, or Avro in Confluent's wire format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub topic: String,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// An event Debezium's record shapes cannot carry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("{table}: column {column} is NOT NULL but the {image} image has no value for it")]
    NullInRequiredColumn {
        table: String,
        column: String,
        image: &'static str,
    },
    #[error(
        "{table}: spec.columns.messageKeyColumns names column {column}, which the table does not \
         have; fix the entry that matches {table}"
    )]
    UnknownKeyColumn { table: String, column: String },
    #[error("{table}: key column {column} is missing from the row image")]
    MissingKeyColumn { table: String, column: String },
    #[error("{table}: the {op} event has no {image} image")]
    MissingImage {
        table: String,
        op: &'static str,
        image: &'static str,
    },
    #[error("{table}: column {column}: {problem}")]
    Unrepresentable {
        table: String,
        column: String,
        problem: String,
    },
    /// The schema registry gave no id for a schema (an outage or a refusal: the error says
    /// which), so no record of that schema can be written.
    #[error("{0}")]
    Registry(RegistryError),
    /// A Connect schema that makes no valid Avro schema: a fault of this crate.
    #[error("no Avro schema: {problem}")]
    AvroSchema { problem: String },
    /// `format.encoding: avro` on an encoder built without a schema registry.
    #[error("the Avro encoding needs a schema registry, and the encoder has none")]
    NoSchemaRegistry,
}

impl From<UnknownKeyColumn> for EncodeError {
    fn from(UnknownKeyColumn { table, column }: UnknownKeyColumn) -> Self {
        Self::UnknownKeyColumn { table, column }
    }
}
