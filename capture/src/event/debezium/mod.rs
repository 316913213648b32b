//! The `debezium` format: Kafka records shaped like those of Debezium's Oracle connector
//! (LogMiner adapter), so consumers, sink connectors and schema tooling written for Debezium keep
//! working. Debezium is the behaviour reference; this is our own implementation.
//!
//! Records of one [`ChangeEvent`]:
//!
//! | event | records (topic `<prefix>.<SCHEMA>.<TABLE>`) |
//! |---|---|
//! | create / read | value with `op` `c` / `r` |
//! | update | value with `op` `u`; when the key changed: delete (old key), tombstone, create (new key) |
//! | delete | value with `op` `d`, then a tombstone (same key, null value) when the table has a key, unless `tombstones_on_delete` is off |
//! | truncate | value with `op` `t` and a null key, only with `emit_truncate` (Debezium skips `t` by default) |
//! | DDL | none here: the engine writes the schema change event to `<prefix>` once the table's new structure is read ([`schema_change`]) |
//!
//! With `provide_transaction_metadata`, [`DebeziumEncoder::transaction_begin`] and
//! [`DebeziumEncoder::transaction_end`] give the `BEGIN` / `END` records of
//! `<prefix>.transaction` (`status`, `id`, `event_count`, `data_collections`, `ts_ms`); the
//! engine, which knows where transactions start and end, sends them around the data records.
//!
//! The value is the envelope `{before, after, source, transaction, op, ts_ms, ts_us, ts_ns}`;
//! `source` holds `version`, `connector` (`oracle`), `name` (the topic prefix), `ts_ms` (change
//! time), `snapshot`, `db`, `schema`, `table`, `txId` (lower-case hex XID), `scn` and
//! `commit_scn` (strings), `rs_id`, `ssn`, `redo_thread`, `user_name`, `row_id`, `commit_ts_ms`.
//! The key is the struct of the key columns, or no key (`None`) for a table without one. With
//! `schemas_enabled` both are wrapped as `{"schema":…,"payload":…}` exactly as Kafka Connect's
//! `JsonConverter` writes them, so its `toConnectData` reads them back (checked by the Java
//! harness in `tests/env/jsonconverter`). Value mappings are in [`schema`].
//!
//! Columns an image does not carry: LOB, LONG and LONG RAW columns get Debezium's unavailable
//! placeholder (`__debezium_unavailable_value`, as text or as its bytes); others are `null`. A
//! `null` for a NOT NULL column is an [`EncodeError`]: Kafka Connect's struct validation would
//! refuse the record. Not written: the `__debezium.oldkey` / `__debezium.newkey` headers of a
//! key change, `source.redo_sql`, `lcr_position` and `start_scn`.

mod payload;
pub mod schema;
pub mod schema_change;

use std::collections::HashMap;
use std::sync::Arc;

use redoline_crds::v1alpha1::{
    BinaryHandlingMode, DecimalHandlingMode, FormatSpec, IntervalHandlingMode, TimePrecisionMode,
};

use super::json;
use super::{ChangeEvent, Operation};
use crate::dictionary::TableSchema;
use crate::value::Row;
use payload::{envelope, key};
use schema::FieldKind;

/// `decimal.handling.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecimalHandling {
    #[default]
    Precise,
    Double,
    String,
}

/// `time.precision.mode` (`adaptive` and `connect`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimePrecision {
    #[default]
    Adaptive,
    Connect,
}

/// `binary.handling.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BinaryHandling {
    #[default]
    Bytes,
    Base64,
    Base64UrlSafe,
    Hex,
}

/// `interval.handling.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IntervalHandling {
    #[default]
    Numeric,
    String,
}

/// The Debezium connector options the encoding depends on; `Default` is Debezium's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebeziumOptions {
    /// `topic.prefix`: topic names, schema names and `source.name` (required by Debezium, which
    /// has no default; `redoline` here).
    pub topic_prefix: String,
    /// `source.db`: the database (or PDB) name, from the connection; empty by default.
    pub database_name: String,
    /// `source.version`.
    pub connector_version: String,
    /// Wrap keys and values in `{"schema","payload"}` (`schemas.enable`). Default true.
    pub schemas_enabled: bool,
    pub decimal_handling: DecimalHandling,
    pub time_precision: TimePrecision,
    pub binary_handling: BinaryHandling,
    pub interval_handling: IntervalHandling,
    /// Debezium's `NumberOneToBooleanConverter` on every NUMBER(1) column. Default false.
    pub number_one_as_boolean: bool,
    /// `tombstones.on.delete`. Default true.
    pub tombstones_on_delete: bool,
    /// Emit truncate events (Debezium's `skipped.operations` defaults to `t`). Default false.
    pub emit_truncate: bool,
    /// `provide.transaction.metadata`: fill the envelope's `transaction`. Default false.
    pub provide_transaction_metadata: bool,
    /// `include.schema.changes`: schema change events on `<prefix>`. Default true.
    pub include_schema_changes: bool,
    /// `unavailable.value.placeholder`.
    pub unavailable_value_placeholder: String,
}

impl Default for DebeziumOptions {
    fn default() -> Self {
        Self {
            topic_prefix: "redoline".to_owned(),
            database_name: String::new(),
            connector_version: crate::VERSION.to_owned(),
            schemas_enabled: true,
            decimal_handling: DecimalHandling::default(),
            time_precision: TimePrecision::default(),
            binary_handling: BinaryHandling::default(),
            interval_handling: IntervalHandling::default(),
            number_one_as_boolean: false,
            tombstones_on_delete: true,
            emit_truncate: false,
            provide_transaction_metadata: false,
            include_schema_changes: true,
            unavailable_value_placeholder: "__debezium_unavailable_value".to_owned(),
        }
    }
}

impl DebeziumOptions {
    /// The options an OracleCapture's `spec.format` and `spec.kafka.topicPrefix` ask for; the rest
    /// keep Debezium's defaults.
    pub fn from_spec(format: &FormatSpec, topic_prefix: &str, database_name: &str) -> Self {
        Self {
            topic_prefix: topic_prefix.to_owned(),
            database_name: database_name.to_owned(),
            schemas_enabled: format.schemas,
            decimal_handling: match format.decimal_handling_mode {
                DecimalHandlingMode::Precise => DecimalHandling::Precise,
                DecimalHandlingMode::Double => DecimalHandling::Double,
                DecimalHandlingMode::String => DecimalHandling::String,
            },
            time_precision: match format.time_precision_mode {
                TimePrecisionMode::Adaptive => TimePrecision::Adaptive,
                TimePrecisionMode::Connect => TimePrecision::Connect,
            },
            binary_handling: match format.binary_handling_mode {
                BinaryHandlingMode::Bytes => BinaryHandling::Bytes,
                BinaryHandlingMode::Base64 => BinaryHandling::Base64,
                BinaryHandlingMode::Base64UrlSafe => BinaryHandling::Base64UrlSafe,
                BinaryHandlingMode::Hex => BinaryHandling::Hex,
            },
            interval_handling: match format.interval_handling_mode {
                IntervalHandlingMode::Numeric => IntervalHandling::Numeric,
                IntervalHandlingMode::String => IntervalHandling::String,
            },
            number_one_as_boolean: format.number_one_as_boolean,
            tombstones_on_delete: format.tombstones_on_delete,
            include_schema_changes: format.include_schema_changes,
            ..Self::default()
        }
    }
}

/// One Kafka record: `None` key or value is a Kafka null (no key; a tombstone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub topic: String,
    pub key: Option<String>,
    pub value: Option<String>,
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
}

/// Per-table encoding state, built once per table definition.
#[derive(Debug)]
struct TablePlan {
    table: Arc<TableSchema>,
    kinds: Vec<FieldKind>,
    topic: String,
    /// `{"schema":<key schema>,"payload":` when schemas are enabled.
    key_prefix: Option<String>,
    /// `{"schema":<envelope schema>,"payload":` when schemas are enabled.
    value_prefix: String,
}

/// Encodes change events as Debezium records; caches per-table schemas.
#[derive(Debug)]
pub struct DebeziumEncoder {
    options: DebeziumOptions,
    plans: HashMap<(String, String), Arc<TablePlan>>,
}

/// Which kind of envelope a record carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EnvelopeOp {
    Create,
    Update,
    Delete,
    Read,
    Truncate,
}

impl EnvelopeOp {
    fn letter(self) -> &'static str {
        match self {
            Self::Create => "c",
            Self::Update => "u",
            Self::Delete => "d",
            Self::Read => "r",
            Self::Truncate => "t",
        }
    }
}

impl DebeziumEncoder {
    pub fn new(options: DebeziumOptions) -> Self {
        Self {
            options,
            plans: HashMap::new(),
        }
    }

    pub fn options(&self) -> &DebeziumOptions {
        &self.options
    }

    /// The topic of a table's change events.
    pub fn topic(&self, table: &TableSchema) -> String {
        topic_name(&self.options.topic_prefix, table.schema(), table.table())
    }

    /// The records of `event`, in order; `processed_at` is the envelope's `ts_ms` (the time the
    /// capture processed the event, as Debezium's connector clock).
    pub fn encode(
        &mut self,
        event: &ChangeEvent,
        processed_at: jiff::Timestamp,
    ) -> Result<Vec<Record>, EncodeError> {
        let plan = self.plan(&event.table);
        let options = &self.options;
        let mut records = Vec::with_capacity(2);
        let before = event.before.as_ref();
        let after = event.after.as_ref();
        let need = |row, op, image| need(row, &plan.table, op, image);
        let record = |key, before, after, op| -> Result<Record, EncodeError> {
            Ok(Record {
                topic: plan.topic.clone(),
                key,
                value: Some(envelope(
                    &plan,
                    options,
                    event,
                    before,
                    after,
                    op,
                    processed_at,
                )?),
            })
        };
        // A delete, then its tombstone (for log compaction) when the table has a key.
        let deletion = |old| -> Result<Vec<Record>, EncodeError> {
            let old_key = key(&plan, options, old)?;
            let mut out = vec![record(
                old_key.clone(),
                Some(old),
                None,
                EnvelopeOp::Delete,
            )?];
            if options.tombstones_on_delete && old_key.is_some() {
                out.push(Record {
                    topic: plan.topic.clone(),
                    key: old_key,
                    value: None,
                });
            }
            Ok(out)
        };
        match &event.op {
            Operation::Create | Operation::Read => {
                let op = if event.op == Operation::Create {
                    EnvelopeOp::Create
                } else {
                    EnvelopeOp::Read
                };
                let after = need(after, "create", "after")?;
                records.push(record(key(&plan, options, after)?, None, Some(after), op)?);
            }
            Operation::Update if event.key_changed() => {
                let old = need(before, "update", "before")?;
                let new = need(after, "update", "after")?;
                records.extend(deletion(old)?);
                let new_key = key(&plan, options, new)?;
                records.push(record(new_key, None, Some(new), EnvelopeOp::Create)?);
            }
            Operation::Update => {
                let new = need(after, "update", "after")?;
                let new_key = key(&plan, options, new)?;
                records.push(record(new_key, before, Some(new), EnvelopeOp::Update)?);
            }
            Operation::Delete => {
                records.extend(deletion(need(before, "delete", "before")?)?);
            }
            Operation::Truncate => {
                if options.emit_truncate {
                    records.push(record(None, None, None, EnvelopeOp::Truncate)?);
                }
            }
            Operation::Ddl { .. } => {}
        }
        Ok(records)
    }

    /// The `BEGIN` record of a transaction on `<prefix>.transaction` (with
    /// `provide_transaction_metadata`); `id` is the transaction id as in `transaction.id`.
    pub fn transaction_begin(&self, id: &str, at: jiff::Timestamp) -> Record {
        self.transaction_record(id, at, None)
    }

    /// The `END` record of a transaction: its event count in total and per table, tables in the
    /// order given (names `<db>.<SCHEMA>.<TABLE>`, as Debezium names Oracle data collections).
    pub fn transaction_end(
        &self,
        id: &str,
        at: jiff::Timestamp,
        events_per_table: &[(&TableSchema, u64)],
    ) -> Record {
        self.transaction_record(id, at, Some(events_per_table))
    }

    fn transaction_record(
        &self,
        id: &str,
        at: jiff::Timestamp,
        end: Option<&[(&TableSchema, u64)]>,
    ) -> Record {
        let options = &self.options;
        let mut key = String::with_capacity(128);
        let mut value = String::with_capacity(512);
        if options.schemas_enabled {
            key.push_str("{\"schema\":");
            key.push_str(schema::TRANSACTION_KEY_SCHEMA);
            key.push_str(",\"payload\":");
            value.push_str("{\"schema\":");
            value.push_str(schema::TRANSACTION_VALUE_SCHEMA);
            value.push_str(",\"payload\":");
        }
        key.push('{');
        json::key(&mut key, "id");
        json::string(&mut key, id);
        key.push('}');
        value.push('{');
        json::key(&mut value, "status");
        value.push_str(if end.is_some() {
            "\"END\","
        } else {
            "\"BEGIN\","
        });
        json::key(&mut value, "id");
        json::string(&mut value, id);
        value.push(',');
        json::key(&mut value, "event_count");
        match end {
            Some(tables) => json::integer(&mut value, tables.iter().map(|(_, n)| n).sum::<u64>()),
            None => value.push_str("null"),
        }
        value.push(',');
        json::key(&mut value, "data_collections");
        match end {
            Some(tables) => {
                value.push('[');
                for (i, (table, count)) in tables.iter().enumerate() {
                    if i > 0 {
                        value.push(',');
                    }
                    value.push('{');
                    json::key(&mut value, "data_collection");
                    let name = format!(
                        "{}.{}.{}",
                        options.database_name,
                        table.schema(),
                        table.table()
                    );
                    json::string(&mut value, &name);
                    value.push(',');
                    json::key(&mut value, "event_count");
                    json::integer(&mut value, *count);
                    value.push('}');
                }
                value.push(']');
            }
            None => value.push_str("null"),
        }
        value.push(',');
        json::key(&mut value, "ts_ms");
        json::integer(&mut value, at.as_nanosecond().div_euclid(1_000_000));
        value.push('}');
        if options.schemas_enabled {
            key.push('}');
            value.push('}');
        }
        Record {
            topic: transaction_topic(&options.topic_prefix),
            key: Some(key),
            value: Some(value),
        }
    }

    fn plan(&mut self, table: &Arc<TableSchema>) -> Arc<TablePlan> {
        let name = (table.schema().to_owned(), table.table().to_owned());
        if let Some(plan) = self.plans.get(&name)
            && (Arc::ptr_eq(&plan.table, table) || *plan.table == **table)
        {
            return Arc::clone(plan);
        }
        let plan = Arc::new(build_plan(table, &self.options));
        self.plans.insert(name, Arc::clone(&plan));
        plan
    }
}

fn need<'r>(
    row: Option<&'r Row>,
    table: &TableSchema,
    op: &'static str,
    image: &'static str,
) -> Result<&'r Row, EncodeError> {
    row.ok_or_else(|| EncodeError::MissingImage {
        table: table.qualified_name(),
        op,
        image,
    })
}

fn build_plan(table: &Arc<TableSchema>, options: &DebeziumOptions) -> TablePlan {
    let kinds: Vec<FieldKind> = table
        .columns()
        .iter()
        .map(|c| FieldKind::of(&c.data_type, options))
        .collect();
    let prefix = &options.topic_prefix;
    let key_prefix = if options.schemas_enabled {
        schema::key_schema(table, &kinds, prefix).map(|s| format!("{{\"schema\":{s},\"payload\":"))
    } else {
        None
    };
    let value_prefix = if options.schemas_enabled {
        format!(
            "{{\"schema\":{},\"payload\":",
            schema::envelope_schema(table, &kinds, prefix)
        )
    } else {
        String::new()
    };
    TablePlan {
        topic: topic_name(prefix, table.schema(), table.table()),
        table: Arc::clone(table),
        kinds,
        key_prefix,
        value_prefix,
    }
}

/// `<prefix>.<SCHEMA>.<TABLE>`, each character outside `[A-Za-z0-9._-]` replaced by `_` (Kafka's
/// legal topic characters), as Debezium's topic naming does.
pub fn topic_name(prefix: &str, schema: &str, table: &str) -> String {
    legal_topic(&format!("{prefix}.{schema}.{table}"))
}

/// `<prefix>.transaction`, the transaction metadata topic.
pub fn transaction_topic(prefix: &str) -> String {
    legal_topic(&format!("{prefix}.transaction"))
}

fn legal_topic(raw: &str) -> String {
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_follow_the_spec_and_default_like_debezium() {
        assert_eq!(
            DebeziumOptions::from_spec(&FormatSpec::default(), "redoline", ""),
            DebeziumOptions::default()
        );
        let format = FormatSpec {
            decimal_handling_mode: DecimalHandlingMode::String,
            time_precision_mode: TimePrecisionMode::Connect,
            binary_handling_mode: BinaryHandlingMode::Base64UrlSafe,
            interval_handling_mode: IntervalHandlingMode::String,
            number_one_as_boolean: true,
            tombstones_on_delete: false,
            schemas: false,
            include_schema_changes: false,
            ..FormatSpec::default()
        };
        let options = DebeziumOptions::from_spec(&format, "orders", "ORDERSPDB");
        assert_eq!(options.topic_prefix, "orders");
        assert_eq!(options.database_name, "ORDERSPDB");
        assert_eq!(options.decimal_handling, DecimalHandling::String);
        assert_eq!(options.time_precision, TimePrecision::Connect);
        assert_eq!(options.binary_handling, BinaryHandling::Base64UrlSafe);
        assert_eq!(options.interval_handling, IntervalHandling::String);
        assert!(
            options.number_one_as_boolean
                && !options.tombstones_on_delete
                && !options.schemas_enabled
                && !options.include_schema_changes
        );
    }

    #[test]
    fn topic_names_replace_illegal_characters() {
        assert_eq!(topic_name("server1", "APP", "ORDERS"), "server1.APP.ORDERS");
        assert_eq!(
            topic_name("server1", "C##USER", "My Table$"),
            "server1.C__USER.My_Table_"
        );
    }
}
