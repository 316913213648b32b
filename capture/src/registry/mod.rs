//! The schema registry: where the Avro encoding (`format.encoding: avro`) gets the id that a key or
//! value schema has, so that each record carries it in Confluent's wire format (magic byte 0, the
//! id as 4 big-endian bytes, the Avro binary body). Consumers fetch the schema by that id.
//!
//! [`SchemaRegistry`] is the seam between the pure encoder and the registry's I/O: the encoder
//! asks once per table structure version (and per record kind: heartbeat, transaction metadata,
//! schema change) and caches the answer. [`memory::MemoryRegistry`] is a model of a registry for
//! tests and benchmarks; the HTTP client speaks Confluent's Schema Registry API.

pub mod memory;

/// Which schema of a record a subject names: Confluent's serializers register keys and values
/// separately (`isKey`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchemaRole {
    Key,
    Value,
}

/// What a subject name strategy needs to know of a schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemaUse<'a> {
    /// The Kafka topic the record goes to.
    pub topic: &'a str,
    /// The Avro full name of the schema's top record (`namespace.name`).
    pub record_name: &'a str,
    pub role: SchemaRole,
}

/// Why a schema has no id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Registration is off (`autoRegister: false`) and the subject has no such schema.
    #[error(
        "the schema registry has no schema like this one under subject {subject}, and \
         registration is off (schemaRegistry.autoRegister: false); register it, or turn \
         registration on"
    )]
    NotRegistered { subject: String },
    /// The registry refused the schema under its compatibility rule for the subject.
    #[error("the schema registry refused the new schema of subject {subject} ({rule}): {reason}")]
    Incompatible {
        subject: String,
        rule: String,
        reason: String,
    },
}

/// Gives the registry id of a schema under the subject its use names.
pub trait SchemaRegistry: Send + std::fmt::Debug {
    /// The id of `schema` (Avro schema JSON) for `usage`, registering it when the configuration
    /// allows. Called once per distinct schema and use: callers cache the answer.
    fn id(&mut self, usage: SchemaUse<'_>, schema: &str) -> Result<u32, RegistryError>;
}
