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
//! | delete | value with `op` `d`, then a tombstone (same key, null value; a null key too for a table without a key), unless `tombstones_on_delete` is off |
//! | truncate | value with `op` `t` and a null key, unless `skipped_operations` holds `t` (Debezium skips `t` by default) |
//! | DDL | none here: the engine writes the schema change event to `<prefix>` once the table's new structure is read ([`schema_change`]) |
//!
//! `skipped_operations` (Debezium's `skipped.operations`, default `t`) drops envelopes by op
//! letter, as Debezium does per emitted record: skipping `d` also drops the delete half (and its
//! tombstone) of a key change, skipping `u` leaves key changes alone.
//!
//! With `provide_transaction_metadata` the encoder numbers each transaction's envelopes (see
//! [`DebeziumEncoder`]) and writes the `BEGIN` / `END` records of `<prefix>.transaction`
//! (`status`, `id`, `event_count`, `data_collections`, `ts_ms`); the transaction id is the
//! lower-case hex XID, as in `source.txId`.
//!
//! [`Filters`] shape values and keys ([`Filters::published_columns`] decides, once per table
//! structure; the plan applies it): columns the column lists leave out vanish from values and
//! value schemas (key columns stay in keys), `message.key.columns` replaces a table's key, and
//! the column rules of [`crate::filter::mask`] mask character values in value images (the field schema
//! gains `"masked":"true"`) and add `__debezium.source.column.*` schema parameters.
//!
//! The value is the envelope `{before, after, source, transaction, op, ts_ms, ts_us, ts_ns}`;
//! `source` holds `version`, `connector` (`oracle`), `name` (the topic prefix), `ts_ms` (change
//! time), `snapshot`, `db`, `schema`, `table`, `txId` (lower-case hex XID), `scn` and
//! `commit_scn` (strings), `rs_id`, `ssn`, `redo_thread`, `user_name`, `row_id`, `commit_ts_ms`.
//! The key is the struct of the key columns, or no key (`None`) for a table without one. With
//! `schemas_enabled` both are wrapped as `{"schema":…,"payload":…}` exactly as Kafka Connect's
//! `JsonConverter` writes them, so its `toConnectData` reads them back (checked by the Java
//! harness in `tests/env/jsonconverter`). Value mappings are in [`schema`]. With
//! `encoding` [`Encoding::Avro`] the same records are written in Avro, in Confluent's wire format,
//! their schemas made from the same Connect schemas and registered through a
//! [`SchemaRegistry`] ([`avro`]).
//!
//! Columns an image does not carry: LOB, LONG and LONG RAW columns get Debezium's unavailable
//! placeholder (`__debezium_unavailable_value`, as text or as its bytes); others are `null`. A
//! `null` for a NOT NULL column is an [`EncodeError`]: Kafka Connect's struct validation would
//! refuse the record. Not written: the `__debezium.oldkey` / `__debezium.newkey` headers of a
//! key change, `source.redo_sql`, `lcr_position` and `start_scn`.

pub mod avro;
mod datum;
mod payload;
pub mod schema;
pub mod schema_change;

use std::collections::HashMap;
use std::sync::Arc;

use redoline_crds::v1alpha1::{
    BinaryHandlingMode, DecimalHandlingMode, FormatEncoding, FormatSpec, IntervalHandlingMode,
    SkippedOperation, TimePrecisionMode,
};

use super::json;
use super::{ChangeEvent, EncodeError, Operation, Record, TransactionInfo};
use crate::dictionary::TableSchema;
use crate::filter::mask::ColumnMask;
use crate::filter::{Filters, PublishedColumns};
use crate::registry::{SchemaRegistry, SchemaRole};
use crate::value::{Row, Value};
use avro::{AvroSchema, AvroState, FixedKind};
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

/// How keys and values are written (`format.encoding`): the converter a Debezium pipeline would
/// configure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// Kafka Connect's `JsonConverter`.
    #[default]
    Json,
    /// An Avro converter (Confluent's `AvroConverter`): Avro binary in Confluent's wire format.
    Avro,
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
    /// `source.version`: redoline's version and the Debezium release whose records these
    /// match ([`source_version`]).
    pub connector_version: String,
    pub encoding: Encoding,
    /// With the JSON encoding, wrap keys and values in `{"schema","payload"}`
    /// (`schemas.enable`). Default true.
    pub schemas_enabled: bool,
    pub decimal_handling: DecimalHandling,
    /// `legacy.decimal.handling.strategy`: NUMBER(p,0) stays an integer under `double` and
    /// `string`, as before Debezium 2.7. Default false.
    pub legacy_decimal_handling: bool,
    pub time_precision: TimePrecision,
    pub binary_handling: BinaryHandling,
    pub interval_handling: IntervalHandling,
    /// Debezium's `NumberOneToBooleanConverter` on every NUMBER(1) column. Default false.
    pub number_one_as_boolean: bool,
    /// `tombstones.on.delete`. Default true.
    pub tombstones_on_delete: bool,
    /// `skipped.operations`. Default `t`.
    pub skipped_operations: SkippedOperations,
    /// `provide.transaction.metadata`: `BEGIN`/`END` records and the envelope's `transaction`.
    /// Default false.
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
            connector_version: source_version(),
            encoding: Encoding::Json,
            schemas_enabled: true,
            decimal_handling: DecimalHandling::default(),
            legacy_decimal_handling: false,
            time_precision: TimePrecision::default(),
            binary_handling: BinaryHandling::default(),
            interval_handling: IntervalHandling::default(),
            number_one_as_boolean: false,
            tombstones_on_delete: true,
            skipped_operations: SkippedOperations::default(),
            provide_transaction_metadata: false,
            include_schema_changes: true,
            unavailable_value_placeholder: "__debezium_unavailable_value".to_owned(),
        }
    }
}

/// The Debezium release whose Oracle connector records the `debezium` format matches, field for
/// field: the one its tests compare with.
pub const DEBEZIUM_COMPATIBLE_RELEASE: &str = "3.6";

/// `source.version`: says what wrote the record and what it is compatible with, since consumers
/// that log or branch on it would otherwise take redoline's version for Debezium's.
pub fn source_version() -> String {
    format!(
        "redoline-{} (Debezium {DEBEZIUM_COMPATIBLE_RELEASE} compatible)",
        crate::VERSION
    )
}

impl DebeziumOptions {
    /// Whether JSON records are wrapped in `{"schema","payload"}`: `schemas.enable` under the
    /// JSON encoding (Avro records carry a schema id instead).
    pub fn wraps_json(&self) -> bool {
        self.schemas_enabled && self.encoding == Encoding::Json
    }

    /// The options an OracleCapture's `spec.format` and `spec.kafka.topicPrefix` ask for; the rest
    /// keep Debezium's defaults.
    pub fn from_spec(format: &FormatSpec, topic_prefix: &str, database_name: &str) -> Self {
        Self {
            topic_prefix: topic_prefix.to_owned(),
            database_name: database_name.to_owned(),
            encoding: match format.encoding {
                FormatEncoding::Json => Encoding::Json,
                FormatEncoding::Avro => Encoding::Avro,
            },
            schemas_enabled: format.schemas,
            decimal_handling: match format.decimal_handling_mode {
                DecimalHandlingMode::Precise => DecimalHandling::Precise,
                DecimalHandlingMode::Double => DecimalHandling::Double,
                DecimalHandlingMode::String => DecimalHandling::String,
            },
            legacy_decimal_handling: format.legacy_decimal_handling_strategy,
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
            skipped_operations: SkippedOperations::from_spec(&format.skipped_operations),
            provide_transaction_metadata: format.transaction_metadata,
            include_schema_changes: format.include_schema_changes,
            ..Self::default()
        }
    }
}

/// `skipped.operations`: the data events not written. Snapshot reads are never skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkippedOperations {
    pub create: bool,
    pub update: bool,
    pub delete: bool,
    pub truncate: bool,
}

impl Default for SkippedOperations {
    /// Debezium's default, `t`.
    fn default() -> Self {
        Self::from_spec(&[SkippedOperation::Truncate])
    }
}

impl SkippedOperations {
    /// The set a `skippedOperations` list names (`none`: nothing).
    pub fn from_spec(operations: &[SkippedOperation]) -> Self {
        let has = |op| operations.contains(&op);
        Self {
            create: has(SkippedOperation::Create),
            update: has(SkippedOperation::Update),
            delete: has(SkippedOperation::Delete),
            truncate: has(SkippedOperation::Truncate),
        }
    }

    fn skips(self, op: EnvelopeOp) -> bool {
        match op {
            EnvelopeOp::Create => self.create,
            EnvelopeOp::Update => self.update,
            EnvelopeOp::Delete => self.delete,
            EnvelopeOp::Truncate => self.truncate,
            EnvelopeOp::Read => false,
        }
    }
}

/// Per-table encoding state, built once per table definition.
#[derive(Debug)]
struct TablePlan {
    table: Arc<TableSchema>,
    kinds: Vec<FieldKind>,
    /// The columns of the message key, in key order: the primary key, or `message.key.columns`.
    key: Vec<usize>,
    /// The columns in event values (`column.include.list` / `column.exclude.list`).
    value_columns: Vec<usize>,
    /// Each column's mask in value images (keys are never masked, as in Debezium).
    masks: Vec<Option<ColumnMask>>,
    topic: String,
    /// `{"schema":<key schema>,"payload":` when schemas are enabled.
    key_prefix: Option<String>,
    /// `{"schema":<envelope schema>,"payload":` when schemas are enabled.
    value_prefix: String,
    /// The registry ids of the key (`None`: no key) and envelope schemas, with Avro.
    avro: Option<(Option<u32>, u32)>,
}

impl TablePlan {
    /// The masked form of column `index`'s `value` in a value image, when the column has a mask
    /// and the value is character text, NULL, or absent from a column other than a LOB (an
    /// absent LOB keeps its placeholder): `Some(None)` is a NULL. `None`: written as it is.
    fn masked(&self, index: usize, value: Option<&Value>) -> Option<Option<String>> {
        let mask = self.masks[index].as_ref()?;
        let text = match value {
            Some(Value::Text(text)) => Some(text.as_str()),
            Some(Value::Null) => None,
            None if !self.table.columns()[index].data_type.is_lob_like() => None,
            _ => return None,
        };
        Some(mask.apply(text))
    }
}

/// The transaction whose data events are being numbered (`provide.transaction.metadata`).
#[derive(Debug)]
struct OpenTransaction {
    id: String,
    /// Tables in the order their first event came, with their event counts.
    tables: Vec<(Arc<TableSchema>, u64)>,
    total: u64,
}

/// Encodes change events as Debezium records; caches per-table schemas.
///
/// With `provide_transaction_metadata` it also numbers a transaction's data events as Debezium's
/// transaction monitor does: every envelope written counts (both halves of a key change; not
/// tombstones, not skipped operations), the `BEGIN` record goes just before the first one, and
/// [`DebeziumEncoder::end_transaction`] gives the `END` record once the caller has encoded the
/// transaction's last event. A transaction that writes no data event gets neither.
#[derive(Debug)]
pub struct DebeziumEncoder {
    options: DebeziumOptions,
    filters: Arc<Filters>,
    plans: HashMap<(String, String), Arc<TablePlan>>,
    /// The plan used last: events come in runs of one table, and the run needs no lookup.
    last_plan: Option<Arc<TablePlan>>,
    open: Option<OpenTransaction>,
    /// The registry and cached schemas of the Avro encoding.
    avro: Option<AvroState>,
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

/// One envelope an event becomes: its op and images (the key comes from `after`, else `before`).
#[derive(Clone, Copy, Debug)]
struct Part<'r> {
    op: EnvelopeOp,
    before: Option<&'r Row>,
    after: Option<&'r Row>,
}

impl DebeziumEncoder {
    /// An encoder of every column, keyed by primary keys.
    pub fn new(options: DebeziumOptions) -> Self {
        Self::with_filters(options, Arc::new(Filters::default()))
    }

    /// An encoder whose values hold the columns `filters` admits and whose keys follow its
    /// message key columns.
    pub fn with_filters(options: DebeziumOptions, filters: Arc<Filters>) -> Self {
        Self {
            options,
            filters,
            plans: HashMap::new(),
            last_plan: None,
            open: None,
            avro: None,
        }
    }

    /// An encoder whose Avro schemas (`encoding: avro`) get their ids from `registry`.
    pub fn with_registry(
        options: DebeziumOptions,
        filters: Arc<Filters>,
        registry: Box<dyn SchemaRegistry>,
    ) -> Self {
        Self {
            avro: Some(AvroState::new(registry)),
            ..Self::with_filters(options, filters)
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
        let plan = self.plan(&event.table)?;
        let before = event.before.as_ref();
        let after = event.after.as_ref();
        let need = |row, op, image| need(row, &plan.table, op, image);
        let part = |op, before, after| Part { op, before, after };
        // At most two envelopes: a key change is a delete of the old key, then a create.
        let parts: [Option<Part>; 2] = match &event.op {
            Operation::Create => [
                Some(part(
                    EnvelopeOp::Create,
                    None,
                    Some(need(after, "create", "after")?),
                )),
                None,
            ],
            Operation::Read => [
                Some(part(
                    EnvelopeOp::Read,
                    None,
                    Some(need(after, "read", "after")?),
                )),
                None,
            ],
            Operation::Update if event.key_changed(&plan.key) => [
                Some(part(
                    EnvelopeOp::Delete,
                    Some(need(before, "update", "before")?),
                    None,
                )),
                Some(part(
                    EnvelopeOp::Create,
                    None,
                    Some(need(after, "update", "after")?),
                )),
            ],
            Operation::Update => [
                Some(part(
                    EnvelopeOp::Update,
                    before,
                    Some(need(after, "update", "after")?),
                )),
                None,
            ],
            Operation::Delete => [
                Some(part(
                    EnvelopeOp::Delete,
                    Some(need(before, "delete", "before")?),
                    None,
                )),
                None,
            ],
            Operation::Truncate => [Some(part(EnvelopeOp::Truncate, None, None)), None],
            Operation::Ddl { .. } => [None, None],
        };
        // Room for BEGIN, and a key change's delete, tombstone and create.
        let mut records = Vec::with_capacity(4);
        for part in parts.into_iter().flatten() {
            if self.options.skipped_operations.skips(part.op) {
                continue;
            }
            // Truncates have a null key, as in Debezium.
            let key_row = match (part.op, part.after.or(part.before)) {
                (EnvelopeOp::Truncate, _) | (_, None) => None,
                (_, Some(row)) => Some(row),
            };
            let transaction = self.number(event, &plan.table, &mut records, processed_at)?;
            let (key, value) = match (&plan.avro, &mut self.avro) {
                (Some((key_id, value_id)), Some(avro)) => {
                    let key = match (key_row, key_id) {
                        (Some(row), Some(id)) => {
                            let mut out = avro::framed(*id, 32);
                            avro::payload::key(
                                &mut out,
                                &plan,
                                &self.options,
                                row,
                                &mut avro.scratch,
                            )?;
                            Some(out)
                        }
                        _ => None,
                    };
                    let mut value = avro::framed(*value_id, 256);
                    avro::payload::envelope(
                        &mut value,
                        &plan,
                        &self.options,
                        event,
                        &part,
                        avro::payload::Stamp {
                            transaction: transaction.as_ref(),
                            processed_at,
                        },
                        &mut avro.scratch,
                    )?;
                    (key, value)
                }
                _ => {
                    let key = match key_row {
                        Some(row) => key(&plan, &self.options, row)?.map(String::into_bytes),
                        None => None,
                    };
                    let value = envelope(
                        &plan,
                        &self.options,
                        event,
                        &part,
                        transaction.as_ref(),
                        processed_at,
                    )?;
                    (key, value.into_bytes())
                }
            };
            records.push(Record {
                topic: plan.topic.clone(),
                key: key.clone(),
                value: Some(value),
            });
            // The delete's tombstone, for log compaction. A table without a key gets one too,
            // with a null key, as Debezium's dispatcher sends it whatever the key.
            if part.op == EnvelopeOp::Delete && self.options.tombstones_on_delete {
                records.push(Record {
                    topic: plan.topic.clone(),
                    key,
                    value: None,
                });
            }
        }
        Ok(records)
    }

    /// The next place in the event's transaction (with `provide_transaction_metadata` and a
    /// transaction id), pushing the `BEGIN` record before the transaction's first data event.
    fn number(
        &mut self,
        event: &ChangeEvent,
        table: &Arc<TableSchema>,
        records: &mut Vec<Record>,
        processed_at: jiff::Timestamp,
    ) -> Result<Option<TransactionInfo>, EncodeError> {
        if !self.options.provide_transaction_metadata {
            return Ok(None);
        }
        let Some(xid) = event.source.xid else {
            return Ok(None);
        };
        let id = xid.to_lower_hex();
        let open = match &mut self.open {
            Some(open) if open.id == id => open,
            slot => {
                // BEGIN carries the time of the transaction's first change, as Debezium's does.
                let at = event.source.change_time.unwrap_or(processed_at);
                let begin = transaction_record(&self.options, &id, at, None);
                records.push(to_avro(
                    &mut self.avro,
                    &self.options,
                    FixedKind::Transaction,
                    begin,
                )?);
                slot.insert(OpenTransaction {
                    id,
                    tables: Vec::new(),
                    total: 0,
                })
            }
        };
        open.total += 1;
        let per_table = match open
            .tables
            .iter_mut()
            .find(|(t, _)| t.schema() == table.schema() && t.table() == table.table())
        {
            Some((_, count)) => count,
            None => {
                open.tables.push((Arc::clone(table), 0));
                let last = open.tables.len() - 1;
                &mut open.tables[last].1
            }
        };
        *per_table += 1;
        Ok(Some(TransactionInfo {
            id: open.id.clone(),
            total_order: open.total,
            data_collection_order: *per_table,
        }))
    }

    /// The `END` record of the transaction whose events were just encoded (`None` when it wrote
    /// no data event, or without `provide_transaction_metadata`): its event count in total and
    /// per table, `at` its commit time.
    pub fn end_transaction(&mut self, at: jiff::Timestamp) -> Result<Option<Record>, EncodeError> {
        let Some(open) = self.open.take() else {
            return Ok(None);
        };
        let tables: Vec<(&TableSchema, u64)> =
            open.tables.iter().map(|(t, n)| (&**t, *n)).collect();
        let end = transaction_record(&self.options, &open.id, at, Some(&tables));
        to_avro(&mut self.avro, &self.options, FixedKind::Transaction, end).map(Some)
    }

    /// The schema change record of a DDL `event` (its statement `ddl`) that made `change`.
    pub fn schema_change(
        &mut self,
        event: &ChangeEvent,
        ddl: &str,
        change: &crate::schema_history::TableChange,
        processed_at: jiff::Timestamp,
    ) -> Result<Record, EncodeError> {
        let record =
            schema_change::schema_change_record(&self.options, event, ddl, change, processed_at);
        to_avro(
            &mut self.avro,
            &self.options,
            FixedKind::SchemaChange,
            record,
        )
    }

    /// Debezium's heartbeat record on `topic` at `at` (see [`super::heartbeat`]).
    pub fn heartbeat(&mut self, topic: &str, at: jiff::Timestamp) -> Result<Record, EncodeError> {
        let record = super::heartbeat::heartbeat_record(
            topic,
            &self.options.topic_prefix,
            self.options.wraps_json(),
            at,
        );
        to_avro(&mut self.avro, &self.options, FixedKind::Heartbeat, record)
    }

    fn plan(&mut self, table: &Arc<TableSchema>) -> Result<Arc<TablePlan>, EncodeError> {
        if let Some(last) = &self.last_plan
            && Arc::ptr_eq(&last.table, table)
        {
            return Ok(Arc::clone(last));
        }
        let name = (table.schema().to_owned(), table.table().to_owned());
        let plan = match self.plans.get(&name) {
            Some(plan) if Arc::ptr_eq(&plan.table, table) || *plan.table == **table => {
                Arc::clone(plan)
            }
            _ => {
                let registry = self.avro.as_mut().map(|avro| &mut avro.registry);
                let plan = Arc::new(build_plan(table, &self.options, &self.filters, registry)?);
                self.plans.insert(name, Arc::clone(&plan));
                plan
            }
        };
        self.last_plan = Some(Arc::clone(&plan));
        Ok(plan)
    }
}

/// A `BEGIN` (`end` is `None`) or `END` record of `<prefix>.transaction`; `end` lists the
/// tables with their event counts (names `<db>.<SCHEMA>.<TABLE>`, as Debezium names Oracle data
/// collections).
fn transaction_record(
    options: &DebeziumOptions,
    id: &str,
    at: jiff::Timestamp,
    end: Option<&[(&TableSchema, u64)]>,
) -> Record {
    let mut key = String::with_capacity(128);
    let mut value = String::with_capacity(512);
    if options.wraps_json() {
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
    if options.wraps_json() {
        key.push('}');
        value.push('}');
    }
    Record {
        topic: transaction_topic(&options.topic_prefix),
        key: Some(key.into_bytes()),
        value: Some(value.into_bytes()),
    }
}

/// `record` (a heartbeat, transaction metadata or schema change record in JSON, unwrapped) in
/// the encoding of the options: unchanged with JSON, its Avro form with Avro.
fn to_avro(
    avro: &mut Option<AvroState>,
    options: &DebeziumOptions,
    kind: FixedKind,
    record: Record,
) -> Result<Record, EncodeError> {
    if options.encoding == Encoding::Json {
        return Ok(record);
    }
    let Some(avro) = avro else {
        return Err(EncodeError::NoSchemaRegistry);
    };
    let mut convert = |role, json: Option<Vec<u8>>| {
        json.map(|json| avro.fixed(kind, role, &record.topic, &json))
            .transpose()
    };
    let key = convert(SchemaRole::Key, record.key)?;
    let value = convert(SchemaRole::Value, record.value)?;
    Ok(Record {
        topic: record.topic,
        key,
        value,
    })
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

fn build_plan(
    table: &Arc<TableSchema>,
    options: &DebeziumOptions,
    filters: &Filters,
    registry: Option<&mut Box<dyn SchemaRegistry>>,
) -> Result<TablePlan, EncodeError> {
    let kinds: Vec<FieldKind> = table
        .columns()
        .iter()
        .map(|c| FieldKind::of(&c.data_type, options))
        .collect();
    // Which columns are published is the filter stage's decision; the plan applies it.
    let PublishedColumns {
        key,
        values: value_columns,
        masks,
        source_types,
    } = filters.published_columns(table)?;
    let parameters: Vec<Vec<(&'static str, String)>> = masks
        .iter()
        .zip(source_types)
        .map(|(mask, source_type)| {
            let mut parameters = Vec::new();
            if mask.as_ref().is_some_and(ColumnMask::marks_schema) {
                parameters.push(("masked", "true".to_owned()));
            }
            parameters.extend(source_type);
            parameters
        })
        .collect();
    let prefix = &options.topic_prefix;
    let topic = topic_name(prefix, table.schema(), table.table());
    let key_prefix = if options.wraps_json() {
        schema::key_schema(table, &kinds, &key, prefix)
            .map(|s| format!("{{\"schema\":{s},\"payload\":"))
    } else {
        None
    };
    let value_prefix = if options.wraps_json() {
        format!(
            "{{\"schema\":{},\"payload\":",
            schema::envelope_schema(table, &kinds, &value_columns, &parameters, prefix)
        )
    } else {
        String::new()
    };
    // With Avro: the schemas made from the same Connect schemas, registered once per plan (per
    // table structure).
    let avro = match (options.encoding, registry) {
        (Encoding::Json, _) => None,
        (Encoding::Avro, None) => return Err(EncodeError::NoSchemaRegistry),
        (Encoding::Avro, Some(registry)) => {
            let key_id = match schema::key_schema(table, &kinds, &key, prefix) {
                Some(connect) => Some(AvroSchema::of_connect(&connect)?.register(
                    &mut **registry,
                    &topic,
                    SchemaRole::Key,
                )?),
                None => None,
            };
            let envelope =
                schema::envelope_schema(table, &kinds, &value_columns, &parameters, prefix);
            let value_id = AvroSchema::of_connect(&envelope)?.register(
                &mut **registry,
                &topic,
                SchemaRole::Value,
            )?;
            Some((key_id, value_id))
        }
    };
    Ok(TablePlan {
        avro,
        topic,
        table: Arc::clone(table),
        kinds,
        key,
        value_columns,
        masks,
        key_prefix,
        value_prefix,
    })
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
            legacy_decimal_handling_strategy: true,
            number_one_as_boolean: true,
            tombstones_on_delete: false,
            schemas: false,
            include_schema_changes: false,
            encoding: FormatEncoding::Avro,
            ..FormatSpec::default()
        };
        let options = DebeziumOptions::from_spec(&format, "orders", "ORDERSPDB");
        assert_eq!(options.topic_prefix, "orders");
        assert_eq!(options.database_name, "ORDERSPDB");
        assert_eq!(options.decimal_handling, DecimalHandling::String);
        assert_eq!(options.time_precision, TimePrecision::Connect);
        assert_eq!(options.binary_handling, BinaryHandling::Base64UrlSafe);
        assert_eq!(options.interval_handling, IntervalHandling::String);
        assert_eq!(options.encoding, Encoding::Avro);
        assert_eq!(
            options.connector_version,
            format!("redoline-{} (Debezium 3.6 compatible)", crate::VERSION)
        );
        assert!(
            options.number_one_as_boolean
                && options.legacy_decimal_handling
                && !options.tombstones_on_delete
                && !options.schemas_enabled
                && !options.include_schema_changes
        );
    }

    #[test]
    fn masks_apply_to_text_null_and_absent_values_but_not_to_an_absent_lob() {
        use redoline_crds::v1alpha1::{ColumnsSpec, FiltersSpec, LengthRule};

        use crate::dictionary::{Column, OracleType};

        let column = |name, data_type| Column::new(name, OracleType::parse(data_type).unwrap());
        let table = Arc::new(
            TableSchema::new(
                "APP",
                "T",
                vec![
                    column("ID", "NUMBER(10)").key(1),
                    column("NAME", "VARCHAR2(10)"),
                    column("NOTE", "CLOB"),
                    column("CODE", "VARCHAR2(10)"),
                ],
            )
            .unwrap(),
        );
        let rule = |length, columns: &str| LengthRule {
            length,
            columns: vec![columns.to_owned()],
        };
        let columns = ColumnsSpec {
            mask_with_chars: vec![rule(3, "APP\\.T\\.(ID|NAME|NOTE)")],
            truncate_to_chars: vec![rule(2, "APP\\.T\\.CODE")],
            ..ColumnsSpec::default()
        };
        let filters = Filters::new(&FiltersSpec::default(), &columns).unwrap();
        let plan = build_plan(&table, &DebeziumOptions::default(), &filters, None).unwrap();
        let text = Value::Text("secret".into());
        let stars = Some(Some("***".to_owned()));
        assert_eq!(plan.masked(1, Some(&text)), stars);
        assert_eq!(plan.masked(1, Some(&Value::Null)), stars);
        assert_eq!(plan.masked(1, None), stars);
        assert_eq!(plan.masked(2, Some(&text)), stars);
        assert_eq!(
            plan.masked(2, None),
            None,
            "an absent LOB keeps its placeholder"
        );
        assert_eq!(
            plan.masked(0, Some(&text)),
            None,
            "masks apply to characters only"
        );
        assert_eq!(plan.masked(3, Some(&text)), Some(Some("se".to_owned())));
        assert_eq!(plan.masked(3, Some(&Value::Null)), Some(None));
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
