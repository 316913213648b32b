//! `redoline.io/v1alpha1` `OracleCapture`: one captured Oracle database streamed to Kafka.
//!
//! Defaults follow the product seeds (buffer, journal and orphan handling from seed 000, mining
//! from seed 001, format and snapshot modes from seed 004) and are written into the schema, so the
//! apiserver fills them in and `kubectl get -o yaml` shows the values in force. Validation lives in
//! the schema as OpenAPI constraints and CEL rules, so a bad spec is refused at `kubectl apply`
//! with a message naming the field, rather than by a crash-looping pod.

mod status;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, LocalObjectReference, ResourceRequirements, Toleration,
};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::quantity::ByteQuantity;
pub use status::{
    LastStop, OracleCaptureStatus, Phase, Position, SnapshotProgress, condition_type,
};

/// The smallest heap budget the capture accepts: below it, ordinary transactions would spill.
pub const MIN_MEMORY_BYTES: u64 = 16 << 20;
/// The flush table's default name (seed 001).
pub const DEFAULT_FLUSH_TABLE: &str = "REDOLINE_LOGMNR_FLUSH";

/// Captures the committed changes of Oracle tables from the redo logs (LogMiner) and publishes each
/// committed transaction exactly once, in commit order, to Kafka.
#[derive(CustomResource, KubeSchema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "redoline.io",
    version = "v1alpha1",
    kind = "OracleCapture",
    plural = "oraclecaptures",
    shortname = "ocap",
    category = "redoline",
    namespaced,
    status = "OracleCaptureStatus",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status","description":"Whether the capture is streaming"}"#,
    printcolumn = r#"{"name":"Stop","type":"string","jsonPath":".status.lastStop.code","description":"The latest typed stop (see docs/runbook.md)"}"#,
    printcolumn = r#"{"name":"Lag","type":"number","jsonPath":".status.lagSeconds","description":"Seconds behind the database"}"#,
    printcolumn = r#"{"name":"Commit SCN","type":"integer","jsonPath":".status.position.commitScn","description":"Commit SCN of the last emitted transaction"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("!has(self.heartbeat) || !has(self.heartbeat.actionQuery) || !has(self.mining) || !has(self.mining.readOnly) || !self.mining.readOnly").message("spec.heartbeat.actionQuery writes to the database: not allowed with spec.mining.readOnly"))]
pub struct OracleCaptureSpec {
    /// How to reach the database.
    pub database: DatabaseSpec,

    /// The captured tables as OWNER.TABLE, in dictionary case (unquoted names upper case; a quoted
    /// part such as "Mixed Case" keeps its case).
    #[schemars(length(min = 1, max = 1000))]
    #[schemars(extend("x-kubernetes-list-type" = "set"))]
    pub tables: Vec<TableName>,

    /// Where a capture with no bookmark starts. Ignored once a bookmark exists.
    #[serde(default)]
    pub start_position: StartPosition,

    /// The initial snapshot of the captured tables.
    #[serde(default)]
    pub snapshot: SnapshotSpec,

    /// Where change events, bookmarks and the journal go.
    pub kafka: KafkaSpec,

    /// How change events are encoded.
    #[serde(default)]
    pub format: FormatSpec,

    /// The transaction buffer: heap budget, then spill files on a persistent volume.
    #[serde(default)]
    pub buffer: BufferSpec,

    /// The journal of long transactions, which lets archived redo be purged while a long
    /// transaction is open.
    #[serde(default)]
    pub journal: JournalSpec,

    /// Limits and policies for open transactions: orphans, age and size.
    #[serde(default)]
    pub transactions: TransactionsSpec,

    /// How LogMiner is driven.
    #[serde(default)]
    pub mining: MiningSpec,

    /// Heartbeat records, which also move the bookmark on a quiet database.
    #[serde(default)]
    pub heartbeat: HeartbeatSpec,

    /// A service level for lag, reported as the LagWithinSLA condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sla: Option<SlaSpec>,

    /// Stops the capture (scales it to zero) while keeping its bookmark and volume.
    #[serde(default)]
    pub suspend: bool,

    /// The capture image; defaults to the image the operator was installed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,

    /// Settings for the capture pod.
    #[serde(default)]
    pub pod: PodSettings,
}

/// A captured table, OWNER.TABLE.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": TABLE_NAME_RULE,
    "message": "must be OWNER.TABLE: two Oracle identifiers joined by a dot, each unquoted (letter first, then letters, digits, _ $ #) or in double quotes",
}]))]
pub struct TableName(#[schemars(length(min = 3, max = 261))] pub String);

const TABLE_NAME_RULE: &str = r#"self.matches('^([A-Za-z][A-Za-z0-9_$#]{0,127}|"[^"]{1,128}")[.]([A-Za-z][A-Za-z0-9_$#]{0,127}|"[^"]{1,128}")$')"#;

/// The database connection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("has(self.serviceName) != has(self.connectString)").message("set exactly one of spec.database.serviceName and spec.database.connectString"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.serviceName) || has(self.host)").message("spec.database.host is required with spec.database.serviceName"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.connectString) || !has(self.host)").message("spec.database.host must not be set with spec.database.connectString, which names the host itself"))]
pub struct DatabaseSpec {
    /// Database host name or address (with serviceName).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub host: Option<String>,

    /// Listener port (with serviceName).
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: u16,

    /// Service name of the PDB that owns the tables (Oracle 21c+ mines per PDB), or of a non-CDB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub service_name: Option<String>,

    /// A full connect string (EZConnect or a TNS descriptor) instead of host, port and serviceName.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub connect_string: Option<String>,

    /// The PDB whose changes are captured when the connection goes to CDB$ROOT (classic mining
    /// on 19c and earlier, where LogMiner cannot run inside a PDB). Leave unset when connecting to
    /// the PDB itself (21c and later) or to a non-CDB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub pdb: Option<String>,

    /// The Secret holding the capture user's name and password.
    pub credentials_secret: CredentialsSecretRef,

    /// A Secret holding an Oracle wallet (cwallet.sso, tnsnames.ora, ...) for TLS connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wallet_secret: Option<SecretRef>,

    /// Pooled database sessions.
    #[serde(default = "default_max_connections")]
    #[schemars(range(min = 1, max = 16))]
    pub max_connections: u32,
}

/// A Secret in the capture's namespace holding database credentials.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsSecretRef {
    /// The Secret's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The key holding the user name.
    #[serde(default = "default_username_key")]
    #[schemars(length(min = 1, max = 253))]
    pub username_key: String,
    /// The key holding the password.
    #[serde(default = "default_password_key")]
    #[schemars(length(min = 1, max = 253))]
    pub password_key: String,
}

/// A Secret in the capture's namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SecretRef {
    /// The Secret's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// Where a capture with no bookmark starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("self.type == 'scn' ? has(self.scn) : !has(self.scn)").message("spec.startPosition.scn is required with type scn and not allowed with current or earliest"))]
pub struct StartPosition {
    /// `current` (the database's current SCN), `earliest` (the oldest available redo) or `scn`.
    #[serde(rename = "type")]
    pub type_: StartPositionType,
    /// The SCN to start from, with type `scn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub scn: Option<u64>,
}

impl Default for StartPosition {
    fn default() -> Self {
        Self {
            type_: StartPositionType::Current,
            scn: None,
        }
    }
}

/// Where a fresh capture starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StartPositionType {
    Current,
    Earliest,
    Scn,
}

/// The initial snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotSpec {
    /// `initial` snapshots then streams; `initial_only` snapshots and stops; `no_data` records the
    /// structure and streams; `when_needed` snapshots when there is no usable bookmark; `never`
    /// streams only. Debezium's `schema_only` means `no_data`.
    #[serde(default)]
    pub mode: SnapshotMode,
}

/// Snapshot modes, named as in Debezium's `snapshot.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotMode {
    #[default]
    Initial,
    InitialOnly,
    NoData,
    SchemaOnly,
    WhenNeeded,
    Never,
}

/// The Kafka sink.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaSpec {
    /// Comma-separated host:port list of brokers.
    #[schemars(length(min = 1, max = 4096))]
    pub bootstrap_servers: String,

    /// Prefix of every topic name: data topics are `<prefix>.<SCHEMA>.<TABLE>`.
    #[schemars(length(min = 1, max = 200))]
    #[x_kube(validation = kube::core::Rule::new("self.matches('^[A-Za-z0-9._-]+$')").message("spec.kafka.topicPrefix may hold only letters, digits, '.', '_' and '-'"))]
    pub topic_prefix: String,

    /// A Secret whose keys are librdkafka client properties (security.protocol, sasl.mechanism,
    /// sasl.username, sasl.password, ssl.ca.pem, ...), for SASL and TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_secret: Option<SecretRef>,

    /// Write data, bookmark and journal in one Kafka transaction, so each committed database
    /// transaction appears exactly once to read_committed consumers.
    #[serde(default = "default_true")]
    pub exactly_once: bool,
}

/// The event format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FormatSpec {
    /// `debezium` (Debezium-compatible keys and values) or `compact` (one small JSON object per
    /// change).
    #[serde(rename = "type", default)]
    pub type_: FormatType,
    /// With `debezium`: wrap keys and values in the `schema`/`payload` envelope, as Kafka Connect's
    /// JsonConverter does with `schemas.enable=true`.
    #[serde(default = "default_true")]
    pub schemas: bool,
    /// With `debezium`, Debezium's `decimal.handling.mode`: `precise` (Connect Decimal),
    /// `double` or `string`.
    #[serde(default)]
    pub decimal_handling_mode: DecimalHandlingMode,
    /// With `debezium`, Debezium's `time.precision.mode`: `adaptive` or `connect`.
    #[serde(default)]
    pub time_precision_mode: TimePrecisionMode,
    /// With `debezium`, Debezium's `binary.handling.mode`: `bytes`, `base64`,
    /// `base64-url-safe` or `hex`.
    #[serde(default)]
    pub binary_handling_mode: BinaryHandlingMode,
    /// With `debezium`, Debezium's `interval.handling.mode`: `numeric` (microseconds) or `string`
    /// (ISO 8601).
    #[serde(default)]
    pub interval_handling_mode: IntervalHandlingMode,
    /// With `debezium`: NUMBER(1) columns as booleans (Debezium's NumberOneToBooleanConverter).
    #[serde(default)]
    pub number_one_as_boolean: bool,
    /// With `debezium`: a tombstone (null value) after each delete, for log compaction
    /// (Debezium's `tombstones.on.delete`).
    #[serde(default = "default_true")]
    pub tombstones_on_delete: bool,
    /// With `debezium`: a schema change event on the topic `<topicPrefix>` for each DDL on a
    /// captured table, with the table's new structure (Debezium's `include.schema.changes`).
    #[serde(default = "default_true")]
    pub include_schema_changes: bool,
}

impl Default for FormatSpec {
    fn default() -> Self {
        Self {
            type_: FormatType::default(),
            schemas: true,
            decimal_handling_mode: DecimalHandlingMode::default(),
            time_precision_mode: TimePrecisionMode::default(),
            binary_handling_mode: BinaryHandlingMode::default(),
            interval_handling_mode: IntervalHandlingMode::default(),
            number_one_as_boolean: false,
            tombstones_on_delete: true,
            include_schema_changes: true,
        }
    }
}

/// Debezium's `decimal.handling.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecimalHandlingMode {
    #[default]
    Precise,
    Double,
    String,
}

/// Debezium's `time.precision.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TimePrecisionMode {
    #[default]
    Adaptive,
    Connect,
}

/// Debezium's `binary.handling.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BinaryHandlingMode {
    #[default]
    Bytes,
    Base64,
    Base64UrlSafe,
    Hex,
}

/// Debezium's `interval.handling.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IntervalHandlingMode {
    #[default]
    Numeric,
    String,
}

/// The event format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FormatType {
    #[default]
    Debezium,
    Compact,
}

/// The transaction buffer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BufferSpec {
    /// Heap budget for buffered changes. Past it, the largest open transactions move to spill files.
    #[serde(default = "default_memory_max_bytes")]
    #[schemars(extend("x-kubernetes-validations" = memory_rules()))]
    pub memory_max_bytes: ByteQuantity,

    /// The spill volume.
    #[serde(default)]
    pub spill: SpillSpec,
}

impl Default for BufferSpec {
    fn default() -> Self {
        Self {
            memory_max_bytes: default_memory_max_bytes(),
            spill: SpillSpec::default(),
        }
    }
}

/// The persistent volume spill files are written to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new(spill_cap_rule()).message("spec.buffer.spill.maxBytes must not exceed spec.buffer.spill.size: the volume would fill before the cap stops the capture"))]
pub struct SpillSpec {
    /// Storage class of the spill volume; the cluster default when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,

    /// Size of the spill volume.
    #[serde(default = "default_spill_size")]
    #[schemars(extend("x-kubernetes-validations" = quantity_rules("spec.buffer.spill.size")))]
    pub size: ByteQuantity,

    /// Cap on spill files on disk; exceeding it stops the capture with CDC-4001.
    #[serde(default = "default_spill_max_bytes")]
    #[schemars(extend("x-kubernetes-validations" = quantity_rules("spec.buffer.spill.maxBytes")))]
    pub max_bytes: ByteQuantity,
}

impl Default for SpillSpec {
    fn default() -> Self {
        Self {
            storage_class_name: None,
            size: default_spill_size(),
            max_bytes: default_spill_max_bytes(),
        }
    }
}

/// The journal of long transactions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JournalSpec {
    /// A transaction open longer than this is journaled.
    #[serde(default = "default_journal_seconds")]
    #[schemars(range(min = 1))]
    pub threshold_seconds: u64,

    /// A transaction holding more changes than this is journaled.
    #[serde(default = "default_journal_events")]
    #[schemars(range(min = 1))]
    pub threshold_events: u64,

    /// Journal chunks are split at about this size (at most 16Mi, to fit Kafka's message limits).
    #[serde(default = "default_chunk_max_bytes")]
    #[schemars(extend("x-kubernetes-validations" = chunk_rules()))]
    pub chunk_max_bytes: ByteQuantity,

    /// The compacted journal topic; `<topicPrefix>.cdc.txjournal` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 249))]
    pub topic: Option<String>,
}

impl Default for JournalSpec {
    fn default() -> Self {
        Self {
            threshold_seconds: default_journal_seconds(),
            threshold_events: default_journal_events(),
            chunk_max_bytes: default_chunk_max_bytes(),
            topic: None,
        }
    }
}

/// Policies for open transactions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionsSpec {
    /// How often buffered transactions are checked against GV$TRANSACTION for orphans.
    #[serde(default = "default_orphan_interval")]
    #[schemars(range(min = 10))]
    pub orphan_check_interval_seconds: u64,

    /// `release` drops an orphan as a rollback and records it; `fail` stops with CDC-7002.
    #[serde(default)]
    pub orphan_action: OrphanAction,

    /// Longest a transaction may stay open in the buffer; unlimited when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_age_seconds: Option<u64>,

    /// `fail` stops with CDC-4004; `discard` drops the transaction and records it.
    #[serde(default)]
    pub max_age_action: MaxAgeAction,

    /// Most changes one open transaction may buffer before the capture stops with CDC-4003.
    #[serde(default = "default_max_staged")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub max_staged_records: u64,

    /// Most changes all open transactions together may buffer (LOB pieces included).
    #[serde(default = "default_max_staged")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub max_staged_records_total: u64,
}

impl Default for TransactionsSpec {
    fn default() -> Self {
        Self {
            orphan_check_interval_seconds: default_orphan_interval(),
            orphan_action: OrphanAction::default(),
            max_age_seconds: None,
            max_age_action: MaxAgeAction::default(),
            max_staged_records: default_max_staged(),
            max_staged_records_total: default_max_staged(),
        }
    }
}

/// What happens to an orphaned transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OrphanAction {
    #[default]
    Release,
    Fail,
}

/// What happens to a transaction older than `maxAgeSeconds`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MaxAgeAction {
    #[default]
    Fail,
    Discard,
}

/// How LogMiner is driven.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MiningSpec {
    /// Largest SCN range mined by one LogMiner session.
    #[serde(default = "default_max_scn_window")]
    #[schemars(range(min = 1000))]
    pub max_scn_window: u64,

    /// Seconds between polls that find nothing new.
    #[serde(default = "default_poll_interval")]
    #[schemars(range(min = 1, max = 3600))]
    pub poll_interval_seconds: u64,

    /// Changes per page: 0 aggregates transactions into pages of up to 100,000 changes, otherwise
    /// one page per transaction.
    #[serde(default = "default_batch_size")]
    #[schemars(range(max = 100_000))]
    pub batch_size: u64,

    /// Per-round-trip call timeout; 0 disables it.
    #[serde(default = "default_statement_timeout")]
    pub statement_timeout_seconds: u64,

    /// Table committed to before each window so the log writer flushes redo up to the window's
    /// end; created if missing.
    #[serde(default = "default_flush_table")]
    #[schemars(length(min = 1, max = 128))]
    #[schemars(regex(
        pattern = r"^[A-Za-z][A-Za-z0-9_$#]{0,127}([.][A-Za-z][A-Za-z0-9_$#]{0,127})?$"
    ))]
    pub flush_table: String,

    /// `fail` stops with CDC-6001 on a change LogMiner cannot render; `skip` logs and counts it.
    #[serde(default)]
    pub on_unsupported: OnUnsupported,

    /// Never write to the database: the flush-table commit before each window is skipped (for a
    /// user without write rights, or a read-only standby). Windows then see only the redo the log
    /// writer has already written, so changes can arrive a few seconds later.
    #[serde(default)]
    pub read_only: bool,
}

/// Heartbeats (Debezium's `heartbeat.*`): at each interval a record on the heartbeat topic, in
/// a page whose bookmark moves to the SCN mining has reached when no transaction is open, so lag
/// and archived-redo retention follow an idle (or read-only) capture.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("!has(self.actionQuery) || self.intervalSeconds > 0").message("spec.heartbeat.actionQuery needs spec.heartbeat.intervalSeconds above 0"))]
pub struct HeartbeatSpec {
    /// Seconds between heartbeats; 0 turns them off (Debezium's `heartbeat.interval.ms`).
    #[serde(default)]
    #[schemars(range(max = 86_400))]
    pub interval_seconds: u64,

    /// The heartbeat topic is `<topicPrefix>.<spec.kafka.topicPrefix>` (Debezium's
    /// `topic.heartbeat.prefix`).
    #[serde(default = "default_heartbeat_topic_prefix")]
    #[schemars(length(min = 1, max = 200))]
    #[schemars(regex(pattern = r"^[A-Za-z0-9._-]+$"))]
    pub topic_prefix: String,

    /// SQL the capture runs and commits on its connection at each heartbeat (Debezium's
    /// `heartbeat.action.query`), typically an UPDATE of a one-row table, so a database whose
    /// captured tables are quiet still writes redo. The capture user needs the right to run it;
    /// not allowed with `spec.mining.readOnly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4000))]
    pub action_query: Option<String>,
}

impl Default for HeartbeatSpec {
    fn default() -> Self {
        Self {
            interval_seconds: 0,
            topic_prefix: default_heartbeat_topic_prefix(),
            action_query: None,
        }
    }
}

impl Default for MiningSpec {
    fn default() -> Self {
        Self {
            max_scn_window: default_max_scn_window(),
            poll_interval_seconds: default_poll_interval(),
            batch_size: default_batch_size(),
            statement_timeout_seconds: default_statement_timeout(),
            flush_table: default_flush_table(),
            on_unsupported: OnUnsupported::default(),
            read_only: false,
        }
    }
}

/// What happens to a change LogMiner cannot render.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnUnsupported {
    #[default]
    Fail,
    Skip,
}

/// A service level for lag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlaSpec {
    /// Lag above this many seconds sets LagWithinSLA to False (reason LagSLABreached).
    #[schemars(range(min = 1))]
    pub max_lag_seconds: u64,
}

/// Settings for the capture pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSettings {
    /// CPU and memory for the capture container. The memory limit should leave room above
    /// spec.buffer.memoryMaxBytes for the Kafka producer and the process itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,

    /// Node labels the capture pod must match.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,

    /// Tolerations of the capture pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,

    /// Affinity of the capture pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,

    /// An existing ServiceAccount to run as, instead of the one the operator creates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub service_account_name: Option<String>,

    /// Image pull policy of the capture container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,

    /// Secrets for pulling the capture image.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,

    /// Extra labels for the capture pod.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,

    /// Extra annotations for the capture pod.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// When the kubelet pulls the capture image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ImagePullPolicy {
    Always,
    IfNotPresent,
    Never,
}

pub fn default_port() -> u16 {
    1521
}
pub fn default_max_connections() -> u32 {
    2
}
fn default_username_key() -> String {
    "username".into()
}
fn default_password_key() -> String {
    "password".into()
}
fn default_true() -> bool {
    true
}
fn default_memory_max_bytes() -> ByteQuantity {
    ByteQuantity::quantity("256Mi")
}
fn default_spill_size() -> ByteQuantity {
    ByteQuantity::quantity("12Gi")
}
pub fn default_spill_max_bytes() -> ByteQuantity {
    ByteQuantity::quantity("10Gi")
}
fn default_journal_seconds() -> u64 {
    300
}
fn default_journal_events() -> u64 {
    100_000
}
fn default_chunk_max_bytes() -> ByteQuantity {
    ByteQuantity::quantity("512Ki")
}
fn default_orphan_interval() -> u64 {
    300
}
fn default_max_staged() -> u64 {
    1_000_000
}
fn default_max_scn_window() -> u64 {
    500_000
}
fn default_poll_interval() -> u64 {
    1
}
fn default_batch_size() -> u64 {
    1000
}
fn default_statement_timeout() -> u64 {
    600
}
fn default_heartbeat_topic_prefix() -> String {
    "__debezium-heartbeat".into()
}
fn default_flush_table() -> String {
    DEFAULT_FLUSH_TABLE.into()
}

/// CEL rules for an int-or-string size field: a byte count or a Kubernetes quantity.
fn quantity_rules(field: &str) -> serde_json::Value {
    serde_json::json!([{
        "rule": "type(self) == int ? self >= 0 : isQuantity(self)",
        "message": format!("{field} must be a byte count or a quantity such as 256Mi or 10Gi"),
    }])
}

/// A size rule that only applies once the value is known to be a valid size.
fn bounded_size_rule(bound: &str) -> String {
    format!(
        "(type(self) == string && !isQuantity(self)) || {}",
        bound.replace("SIZE", &cel_quantity("self"))
    )
}

fn memory_rules() -> serde_json::Value {
    let mut rules = quantity_rules("spec.buffer.memoryMaxBytes");
    if let Some(list) = rules.as_array_mut() {
        list.push(serde_json::json!({
            "rule": bounded_size_rule(&format!("SIZE.compareTo(quantity('{MIN_MEMORY_BYTES}')) >= 0")),
            "message": "spec.buffer.memoryMaxBytes must be at least 16Mi",
        }));
    }
    rules
}

fn chunk_rules() -> serde_json::Value {
    let mut rules = quantity_rules("spec.journal.chunkMaxBytes");
    if let Some(list) = rules.as_array_mut() {
        list.push(serde_json::json!({
            "rule": bounded_size_rule("SIZE.compareTo(quantity('1Ki')) >= 0 && SIZE.compareTo(quantity('16Mi')) <= 0"),
            "message": "spec.journal.chunkMaxBytes must be between 1Ki and 16Mi",
        }));
    }
    rules
}

fn spill_cap_rule() -> String {
    let valid = "(type(self.maxBytes) == int || isQuantity(self.maxBytes)) && (type(self.size) == int || isQuantity(self.size))";
    format!(
        "!({valid}) || {}.compareTo({}) <= 0",
        cel_quantity("self.maxBytes"),
        cel_quantity("self.size")
    )
}

use crate::quantity::cel_quantity;
