//! The schema registry: where the Avro encoding (`format.encoding: avro`) gets the id that a key or
//! value schema has, so that each record carries it in Confluent's wire format (magic byte 0, the
//! id as 4 big-endian bytes, the Avro binary body). Consumers fetch the schema by that id.
//!
//! [`SchemaRegistry`] is the seam between the pure encoder and the registry's I/O: the encoder
//! asks once per table structure version (and per record kind: heartbeat, transaction metadata,
//! schema change) and caches the answer. [`memory::MemoryRegistry`] is a model of a registry for
//! tests and benchmarks; [`http::HttpRegistry`] speaks Confluent's Schema Registry API
//! ([`protocol`]), naming subjects by the configured strategy ([`subject`]).
//!
//! Registering outside the Kafka transaction cannot expose a record without its schema: the id
//! is asked for, and the registration completes, before the record holding it is made, let alone
//! produced; a registry that does not answer ends the run before anything of the record is
//! written. A Kafka transaction aborted after a registration leaves at most a schema version no
//! record uses, which is harmless (Confluent's serializers leave the same). And an id, once
//! given, always names the same schema: a consumer of a record written in a later attempt finds
//! the schema its id names.

pub mod cache;
pub mod error;
pub mod http;
pub mod memory;
pub mod protocol;
pub mod subject;

pub use error::RegistryError;

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

/// Gives the registry id of a schema under the subject its use names.
pub trait SchemaRegistry: Send + std::fmt::Debug {
    /// The id of `schema` (Avro schema JSON) for `usage`, registering it when the configuration
    /// allows. Called once per distinct schema and use: callers cache the answer.
    fn id(&mut self, usage: SchemaUse<'_>, schema: &str) -> Result<u32, RegistryError>;
}
