//! The Avro encoding of the Debezium format (`format.encoding: avro`): what a Debezium pipeline
//! writes with Confluent's `AvroConverter` for keys and values.
//!
//! Every key and value is Confluent's wire format: the magic byte 0, the registry id of its
//! schema as 4 big-endian bytes, then the Avro binary body ([`binary`]). The Avro schemas are made
//! from the Connect schemas the JSON encoding carries ([`connect`] reads them back, [`schema`]
//! converts them as Kafka Connect's `AvroData` does), checked by `apache-avro`, and registered
//! through the [`SchemaRegistry`] once per table structure (and once per record kind for
//! heartbeats, transaction metadata and schema change events); the ids are cached.
//!
//! Data change events are written straight from the row values (`payload`); the rare records
//! (heartbeats, `BEGIN`/`END`, schema change events) go through their JSON payload and their
//! Connect schema ([`binary::write_json`]). Tombstones and null keys stay Kafka nulls.

pub mod binary;
pub mod connect;
pub(super) mod payload;
pub mod schema;

use std::borrow::Cow;
use std::collections::HashMap;

use connect::ConnectSchema;

use super::EncodeError;
use crate::registry::{SchemaRegistry, SchemaRole, SchemaUse};

/// Confluent's wire format: magic byte 0 and the schema id, before the body.
pub const MAGIC: u8 = 0;

/// Starts a record of schema `id`: the 5-byte Confluent header, with room for a body of about
/// `body` bytes.
pub fn framed(id: u32, body: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + body);
    out.push(MAGIC);
    out.extend_from_slice(&id.to_be_bytes());
    out
}

/// A Connect schema ready for Avro: the Avro schema made from it and its top record's name.
#[derive(Clone, Debug)]
pub struct AvroSchema {
    pub connect: ConnectSchema,
    pub avro: String,
    pub record_name: String,
}

impl AvroSchema {
    /// The Avro schema of the Connect schema JSON `connect` (as JsonConverter writes it), checked
    /// by `apache-avro`.
    pub fn of_connect(connect: &str) -> Result<Self, EncodeError> {
        let invalid = |problem: String| EncodeError::AvroSchema { problem };
        let connect = ConnectSchema::parse(connect).map_err(|e| invalid(e.to_string()))?;
        let avro = schema::avro_schema(&connect).map_err(|e| invalid(e.to_string()))?;
        apache_avro::Schema::parse_str(&avro)
            .map_err(|e| invalid(format!("apache-avro refuses {avro}: {e}")))?;
        Ok(Self {
            record_name: schema::record_name(&connect),
            connect,
            avro,
        })
    }

    /// The registry id of this schema as `role` of records on `topic`.
    pub fn register(
        &self,
        registry: &mut dyn SchemaRegistry,
        topic: &str,
        role: SchemaRole,
    ) -> Result<u32, EncodeError> {
        let usage = SchemaUse {
            topic,
            record_name: &self.record_name,
            role,
        };
        registry
            .id(usage, &self.avro)
            .map_err(EncodeError::Registry)
    }
}

/// The records of fixed schemas: their kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixedKind {
    Heartbeat,
    Transaction,
    SchemaChange,
}

impl FixedKind {
    /// The Connect schema (JSON) of this kind's keys or values.
    fn connect_schema(self, role: SchemaRole) -> Cow<'static, str> {
        use super::{schema, schema_change};
        match (self, role) {
            (Self::Heartbeat, SchemaRole::Key) => {
                Cow::Borrowed(crate::event::heartbeat::KEY_SCHEMA)
            }
            (Self::Heartbeat, SchemaRole::Value) => {
                Cow::Borrowed(crate::event::heartbeat::VALUE_SCHEMA)
            }
            (Self::Transaction, SchemaRole::Key) => Cow::Borrowed(schema::TRANSACTION_KEY_SCHEMA),
            (Self::Transaction, SchemaRole::Value) => {
                Cow::Borrowed(schema::TRANSACTION_VALUE_SCHEMA)
            }
            (Self::SchemaChange, SchemaRole::Key) => Cow::Borrowed(schema_change::KEY_SCHEMA),
            (Self::SchemaChange, SchemaRole::Value) => Cow::Owned(schema_change::value_schema()),
        }
    }
}

/// What the Avro encoding keeps beside the encoder: the registry, and the schemas and ids of
/// the fixed-schema records.
#[derive(Debug)]
pub struct AvroState {
    pub registry: Box<dyn SchemaRegistry>,
    /// Each kind's schema and its id under the topic it was registered for.
    fixed: HashMap<(FixedKind, SchemaRole), (AvroSchema, String, u32)>,
    /// Room for values formatted as text before they are written.
    pub scratch: String,
}

impl AvroState {
    pub fn new(registry: Box<dyn SchemaRegistry>) -> Self {
        Self {
            registry,
            fixed: HashMap::new(),
            scratch: String::new(),
        }
    }

    /// The Avro form of a key or value of a fixed-schema record on `topic`, from its JSON
    /// payload (`json`, without the schema envelope).
    pub fn fixed(
        &mut self,
        kind: FixedKind,
        role: SchemaRole,
        topic: &str,
        json: &[u8],
    ) -> Result<Vec<u8>, EncodeError> {
        let cached = self
            .fixed
            .get(&(kind, role))
            .is_some_and(|(_, registered_for, _)| registered_for == topic);
        if !cached {
            let schema = AvroSchema::of_connect(&kind.connect_schema(role))?;
            let id = schema.register(&mut *self.registry, topic, role)?;
            self.fixed
                .insert((kind, role), (schema, topic.to_owned(), id));
        }
        let Some((schema, _, id)) = self.fixed.get(&(kind, role)) else {
            return Err(EncodeError::AvroSchema {
                problem: format!("no {kind:?} schema"),
            });
        };
        let id = *id;
        let value: serde_json::Value =
            serde_json::from_slice(json).map_err(|e| EncodeError::AvroSchema {
                problem: format!("a {kind:?} payload is not JSON: {e}"),
            })?;
        let mut out = framed(id, json.len());
        binary::write_json(&mut out, &schema.connect, &value, "").map_err(|e| {
            EncodeError::AvroSchema {
                problem: format!("{kind:?}: {e}"),
            }
        })?;
        Ok(out)
    }
}
