//! `redoline.io/v1alpha1` `OracleCapture`: one captured Oracle database streamed to Kafka.
//!
//! Defaults follow the product seeds (buffer, journal and orphan handling from seed 000, mining
//! from seed 001, format and snapshot modes from seed 004) and are written into the schema, so the
//! apiserver fills them in and `kubectl get -o yaml` shows the values in force. Validation lives in
//! the schema as OpenAPI constraints and CEL rules, so a bad spec is refused at `kubectl apply`
//! with a message naming the field, rather than by a crash-looping pod.

mod hash_algorithm;
mod kafka_auth;
mod schema_registry;
mod status;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, LocalObjectReference, ResourceRequirements, Toleration,
};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::quantity::ByteQuantity;
pub use hash_algorithm::{HashAlgorithm, UnknownHashAlgorithm};
pub use kafka_auth::{
    CertAndKeySecretSource, CertSecretSource, FIELDS_BY_TYPE, GenericSecretSource,
    KafkaAuthenticationSpec, KafkaAuthenticationType, KafkaTlsSpec, Krb5ConfigSource,
    PasswordSecretSource, TLS_AUTHENTICATION_NEEDS_TLS,
};
pub use schema_registry::{
    REGISTRY_TLS_NEEDS_HTTPS, SchemaRegistryAuthenticationSpec, SchemaRegistryAuthenticationType,
    SchemaRegistrySpec, SubjectNameStrategy,
};
pub use status::{
    ArchivedRedoStatus, LastStop, NeededArchivedLog, OracleCaptureStatus, Phase, Position,
    RepositionState, RepositionStatus, SnapshotProgress, SnapshotRequestState,
    SnapshotRequestStatus, SnapshotTableStatus, condition_type,
};

/// The smallest heap budget the capture accepts: below it, ordinary transactions would spill.
pub const MIN_MEMORY_BYTES: u64 = 16 << 20;
/// The smallest `mining.sessionPgaMaxBytes` other than 0: a fresh server process with LogMiner
/// started holds a few MiB already, so a smaller bound would end the session after every window,
/// and a bare number meant as MiB is caught rather than read as bytes.
pub const MIN_SESSION_PGA_BYTES: u64 = 16 << 20;
/// The flush table's default name (seed 001).
pub const DEFAULT_FLUSH_TABLE: &str = "REDOLINE_LOGMNR_FLUSH";
/// `transactions.releasedLedgerMaxEntries` unless set: the bound the ledger had before it was a
/// setting.
pub const RELEASED_LEDGER_DEFAULT_ENTRIES: u64 = 4096;
/// The largest `transactions.releasedLedgerMaxEntries`: a ledger this full, of the largest
/// entries, still leaves a bookmark under Kafka's default `message.max.bytes` (1,000,000 bytes
/// for the producer) with room for the rest of the bookmark.
pub const RELEASED_LEDGER_MAX_ENTRIES: u64 = 8192;

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
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].reason","description":"Why the capture is or is not Ready"}"#,
    printcolumn = r#"{"name":"Stop","type":"string","jsonPath":".status.activeStop","description":"The typed stop in force (see docs/runbook.md)"}"#,
    printcolumn = r#"{"name":"Lag","type":"number","jsonPath":".status.lagSeconds","description":"Seconds behind the database"}"#,
    printcolumn = r#"{"name":"Commit SCN","type":"integer","jsonPath":".status.position.commitScn","description":"Commit SCN of the last emitted transaction"}"#,
    printcolumn = r#"{"name":"Snapshot","type":"string","priority":1,"jsonPath":".status.snapshot.requests[?(@.state==\"Running\")].id","description":"The incremental snapshot being read (spec.snapshot.requests)"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("!has(self.snapshot) || !has(self.snapshot.selectOverrides) || self.snapshot.selectOverrides.all(t, has(self.tables) && t in self.tables)").message("every key of spec.snapshot.selectOverrides must be one of spec.tables, written the same way").field_path(".snapshot.selectOverrides"))]
#[x_kube(validation = kube::core::Rule::new(snapshot_request_tables_rule()).message("every table of spec.snapshot.requests must be one of spec.tables, written the same way, unless spec.filters chooses tables").field_path(".snapshot.requests"))]
#[x_kube(validation = kube::core::Rule::new(tables_chosen_rule()).message("choose the captured tables: list them in spec.tables or give spec.filters a schema or table list").field_path(".tables"))]
#[x_kube(validation = kube::core::Rule::new("self.format.type == 'debezium' || !has(self.format.encoding) || self.format.encoding == 'json'").message("spec.format.encoding avro writes Debezium records: it needs spec.format.type debezium").field_path(".format.encoding"))]
#[schemars(extend("x-kubernetes-validations" = debezium_only_rules()))]
#[x_kube(validation = kube::core::Rule::new(REGISTRY_WITH_AVRO_RULE).message(REGISTRY_WITH_AVRO).field_path(".schemaRegistry"))]
#[x_kube(validation = kube::core::Rule::new(SNAPSHOT_THREADS_RULE).message(SNAPSHOT_THREADS).field_path(".snapshot.maxThreads"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.heartbeat) || !has(self.heartbeat.actionQuery) || !has(self.mining) || !has(self.mining.readOnly) || !self.mining.readOnly").message("spec.heartbeat.actionQuery writes to the database: not allowed with spec.mining.readOnly").field_path(".heartbeat.actionQuery"))]
pub struct OracleCaptureSpec {
    /// How to reach the database.
    pub database: DatabaseSpec,

    /// The captured tables as OWNER.TABLE, in dictionary case (unquoted names upper case; a quoted
    /// part such as "Mixed Case" keeps its case). Optional when the schema or table lists of
    /// `filters` choose tables; the two add up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 1000))]
    #[schemars(extend("x-kubernetes-list-type" = "set"))]
    pub tables: Vec<TableName>,

    /// Where a capture with no bookmark starts. Ignored once a bookmark exists.
    #[serde(default)]
    pub start_position: StartPosition,

    /// The initial snapshot of the captured tables.
    #[serde(default)]
    pub snapshot: SnapshotSpec,

    /// Moves a running capture's position to an SCN, once per `id` (docs/operator.md,
    /// "Repositioning"). The capture records the id in its bookmark, so the move applies once
    /// even across restarts; a new id moves again. Refused, and the position kept, when the redo
    /// for the SCN is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reposition: Option<Reposition>,

    /// Where change events, bookmarks and the journal go.
    pub kafka: KafkaSpec,

    /// How change events are encoded.
    #[serde(default)]
    pub format: FormatSpec,

    /// The schema registry the Avro encoding registers its schemas in: required with
    /// `format.encoding: avro`, not allowed otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_registry: Option<SchemaRegistrySpec>,

    /// Which changes and columns are emitted: username and column include/exclude lists.
    #[serde(default)]
    pub filters: FiltersSpec,

    /// Per-column settings: the columns that form message keys.
    #[serde(default)]
    pub columns: ColumnsSpec,

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

/// The snapshot's reader sessions leave one of `database.maxConnections` to the mining session.
const SNAPSHOT_THREADS_RULE: &str = "!has(self.snapshot) || !has(self.snapshot.maxThreads) || \
     self.snapshot.maxThreads <= (has(self.database.maxConnections) ? \
     self.database.maxConnections : 2) - 1";
/// Why [`SNAPSHOT_THREADS_RULE`] refuses a spec.
pub const SNAPSHOT_THREADS: &str = "spec.snapshot.maxThreads must be at most \
     spec.database.maxConnections - 1: the mining session holds one connection";

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
#[x_kube(validation = kube::core::Rule::new("!has(self.serviceName) || has(self.host)").message("spec.database.host is required with spec.database.serviceName").field_path(".host"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.connectString) || !has(self.host)").message("spec.database.host must not be set with spec.database.connectString, which names the host itself").field_path(".host"))]
pub struct DatabaseSpec {
    /// Database host name or address (with serviceName).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub host: Option<String>,

    /// Listener port (with serviceName).
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: u16,

    /// Service name to connect to: the CDB root's service, with `pdb` naming the PDB that owns
    /// the tables (any release, and the only way on 19c and earlier, where LogMiner cannot run
    /// inside a PDB); on 21c and later also the PDB's own service, without `pdb` (LogMiner then
    /// runs inside the PDB); or a non-CDB's service.
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

    /// Pooled database sessions, at least 2: the LogMiner session holds one for the whole
    /// mining window while the dictionary, flush and snapshot calls need another.
    #[serde(default = "default_max_connections")]
    #[schemars(range(min = 2, max = 16))]
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
#[x_kube(validation = kube::core::Rule::new("self.type == 'scn' ? has(self.scn) : !has(self.scn)").message("spec.startPosition.scn is required with type scn and not allowed with current or earliest").field_path(".scn"))]
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

/// A declared move of the capture's position: `spec.reposition`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reposition {
    /// Names this move: the capture applies each id once. Choose a new id for every move (for
    /// example `restore-2026-12-05`).
    #[schemars(length(min = 1, max = 63))]
    #[schemars(regex(pattern = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"))]
    pub id: String,
    /// The SCN the capture continues from, as `startPosition.scn` places a new capture: mining
    /// restarts at it, transactions committed before it are not emitted, and a transaction that
    /// began before it is emitted from its changes at or after it only (choose an SCN no
    /// transaction was open across, such as a `restartScn` the status reported). Moving back
    /// repeats changes, moving forward skips them.
    #[schemars(range(min = 1))]
    pub scn: u64,
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotSpec {
    /// `initial` snapshots then streams; `initial_only` snapshots and stops; `no_data` records the
    /// structure and streams; `when_needed` snapshots when there is no usable bookmark; `never`
    /// streams only. Debezium's `schema_only` means `no_data`.
    #[serde(default)]
    pub mode: SnapshotMode,

    /// Rows per flashback batch: each batch is read `AS OF SCN`, then committed as one page with
    /// the snapshot's progress in its bookmark, so a restart continues after the last batch.
    #[serde(default = "default_snapshot_fetch_size")]
    #[schemars(range(min = 1, max = 100_000))]
    pub fetch_size: u32,

    /// Database sessions reading the initial snapshot's chunks at once (Debezium's
    /// `snapshot.max.threads`), each a connection of its own: at most
    /// `database.maxConnections` - 1, the mining session holding the other. Rows are written in
    /// chunk order whatever the number.
    #[serde(default = "default_snapshot_max_threads")]
    #[schemars(range(min = 1, max = 16))]
    pub max_threads: u32,

    /// A condition per table (OWNER.TABLE as in spec.tables → a SQL condition), added to the
    /// snapshot's query of that table as `AND (<condition>)`, so only matching rows are read.
    /// Trusted operator input: it runs as written in the capture user's session.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "select_overrides_schema")]
    pub select_overrides: BTreeMap<String, String>,

    /// What happens to a table that joins a running capture (added to `spec.tables`, or found
    /// by the schema and table lists of `spec.filters`): `snapshot` reads its rows while
    /// streaming goes on (an incremental snapshot), `skip` captures its changes only.
    #[serde(default)]
    pub tables_added: TablesAdded,

    /// Re-reads of tables while streaming goes on (incremental snapshots; docs/snapshot.md). A
    /// new `id` starts one; removing a request that is still running cancels it; a finished
    /// one is remembered with the capture's bookmark and never runs again. A change of this
    /// list alone does not restart the capture: it applies once the kubelet has updated the
    /// mounted config (a minute or two).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["id"]))]
    pub requests: Vec<SnapshotRequest>,
}

impl Default for SnapshotSpec {
    fn default() -> Self {
        Self {
            mode: SnapshotMode::default(),
            fetch_size: default_snapshot_fetch_size(),
            max_threads: default_snapshot_max_threads(),
            select_overrides: BTreeMap::new(),
            tables_added: TablesAdded::default(),
            requests: Vec::new(),
        }
    }
}

/// What happens to a table that joins a running capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TablesAdded {
    /// Its rows are read while streaming goes on, as an incremental snapshot.
    #[default]
    Snapshot,
    /// Only its changes from the listing that finds it on are captured.
    Skip,
}

/// One incremental snapshot: a (re-)read of some captured tables while streaming goes on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotRequest {
    /// Names the request, unique in the list (a DNS label: lower case letters, digits and
    /// `-`). A new id starts a read; the capture remembers finished ids, so reusing one does
    /// nothing: give a new read a new id.
    #[schemars(length(min = 1, max = 63))]
    #[schemars(regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"))]
    pub id: String,

    /// The tables to read, OWNER.TABLE written as in spec.tables (or as the filter lists find
    /// them), in reading order.
    #[schemars(length(min = 1, max = 10))]
    pub tables: Vec<TableName>,

    /// A SQL condition added to each table's read as `AND (<condition>)`, as a
    /// `selectOverrides` value (with which it is AND-ed). Trusted operator input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4000))]
    pub condition: Option<String>,
}

fn default_snapshot_fetch_size() -> u32 {
    10_000
}

fn default_snapshot_max_threads() -> u32 {
    1
}

/// Conditions are non-empty and bounded, so a typo cannot turn into an unbounded query text;
/// at most 100 tables, which keeps the CEL rule checking the keys within the apiserver's cost
/// budget.
fn select_overrides_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": 100,
        "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 4000}
    })
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
#[x_kube(validation = kube::core::Rule::new("!has(self.authentication) || self.authentication.type != 'tls' || has(self.tls)").message(TLS_AUTHENTICATION_NEEDS_TLS).field_path(".tls"))]
pub struct KafkaSpec {
    /// Comma-separated host:port list of brokers.
    #[schemars(length(min = 1, max = 4096))]
    pub bootstrap_servers: String,

    /// Prefix of every topic name: data topics are `<prefix>.<SCHEMA>.<TABLE>`.
    #[schemars(length(min = 1, max = 200))]
    #[x_kube(validation = kube::core::Rule::new("self.matches('^[A-Za-z0-9._-]+$')").message("spec.kafka.topicPrefix may hold only letters, digits, '.', '_' and '-'"))]
    pub topic_prefix: String,

    /// TLS to the brokers and the CA certificates trusted (Strimzi's `tls`). Unset: plaintext,
    /// unless `configSecret` sets `security.protocol`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<KafkaTlsSpec>,

    /// How the capture authenticates to the brokers (Strimzi's `authentication`, plus `gssapi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<KafkaAuthenticationSpec>,

    /// A Secret whose keys are librdkafka client properties, for anything `tls` and
    /// `authentication` do not cover (`ssl.endpoint.identification.algorithm`, `linger.ms`, ...).
    /// A property those fields set cannot be set here too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_secret: Option<SecretRef>,

    /// Write data, bookmark and journal in one Kafka transaction, so each committed database
    /// transaction appears exactly once to read_committed consumers.
    #[serde(default = "default_true")]
    pub exactly_once: bool,

    /// How many committed database transactions one Kafka transaction carries.
    #[serde(default)]
    pub transactions: KafkaTransactionsSpec,

    /// Who creates the topics, and with which settings (see docs/kafka.md, "Topics").
    #[serde(default)]
    pub topics: KafkaTopicsSpec,
}

/// The capture's topics: data topics (change events, transaction metadata, schema changes,
/// heartbeats) and its internal ones (bookmarks, journal, schema history, ops events, dead
/// letters), which the capture always creates itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaTopicsSpec {
    /// The topics events are written to.
    #[serde(default)]
    pub data: DataTopicsSpec,
    /// The capture's own topics.
    #[serde(default)]
    pub internal: InternalTopicsSpec,
}

/// Data topics: who creates a missing one, and (when the capture does) its settings. Unset
/// settings are the broker's defaults (`num.partitions`, `default.replication.factor`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new(DATA_TOPIC_SETTINGS_RULE).message("spec.kafka.topics.data: partitions, replicationFactor and config apply only with creation: capture"))]
#[x_kube(validation = kube::core::Rule::new(DATA_TOPIC_MIN_ISR_RULE).message("spec.kafka.topics.data: config min.insync.replicas must not exceed replicationFactor, or no write with acks=all could succeed"))]
pub struct DataTopicsSpec {
    /// `capture`: the capture creates a missing data topic with these settings before it first
    /// writes to it; `broker`: left to the broker's auto-creation (`auto.create.topics.enable`);
    /// `external`: created by someone else (Strimzi KafkaTopic resources, a pipeline), and a
    /// missing one stops the capture with CDC-1001 naming it.
    #[serde(default)]
    pub creation: TopicCreation,
    /// Partitions of a created data topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10_000))]
    pub partitions: Option<i32>,
    /// Replication factor of a created data topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 32))]
    pub replication_factor: Option<i32>,
    /// Topic configs of a created data topic (`retention.ms`, `min.insync.replicas`,
    /// `cleanup.policy`, ...), by Kafka's names.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "topic_config_schema")]
    pub config: BTreeMap<String, String>,
}

const DATA_TOPIC_SETTINGS_RULE: &str = "!has(self.creation) || self.creation == 'capture' || (!has(self.partitions) && !has(self.replicationFactor) && (!has(self.config) || size(self.config) == 0))";
const DATA_TOPIC_MIN_ISR_RULE: &str = "!has(self.replicationFactor) || !has(self.config) || !('min.insync.replicas' in self.config) || !self.config['min.insync.replicas'].matches('^[0-9]{1,9}$') || int(self.config['min.insync.replicas']) <= self.replicationFactor";

/// Topic config names are Kafka's (lower case, dots); at most 50, values bounded. The name rule
/// is said twice: the CRD drops `propertyNames` (structural schemas have no such keyword), so the
/// apiserver checks the CEL rule, and the capture's JSON schema check `propertyNames`.
fn topic_config_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": 50,
        "propertyNames": {"pattern": TOPIC_CONFIG_NAME},
        "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 1024},
        "x-kubernetes-validations": [{
            "rule": format!("self.all(name, name.matches('{TOPIC_CONFIG_NAME}'))"),
            "message": "spec.kafka.topics.data.config: names are Kafka's topic config names, such as retention.ms",
        }]
    })
}

const TOPIC_CONFIG_NAME: &str = "^[a-z0-9.]{1,100}$";

/// Who creates a missing data topic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TopicCreation {
    /// The capture, with `spec.kafka.topics.data`'s settings.
    #[default]
    Capture,
    /// The broker's auto-creation, with the broker's defaults.
    Broker,
    /// Someone else; a missing topic stops the capture.
    External,
}

/// The internal topics (bookmarks, journal, schema history, ops events, dead letters), which
/// the capture creates when missing. Unset settings are the broker's defaults. At start the
/// capture checks that each has at least `min.insync.replicas` replicas, and that the compacted
/// ones are compacted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("!has(self.replicationFactor) || !has(self.minInsyncReplicas) || self.minInsyncReplicas <= self.replicationFactor").message("spec.kafka.topics.internal.minInsyncReplicas must not exceed replicationFactor, or no write with acks=all could succeed").field_path(".minInsyncReplicas"))]
pub struct InternalTopicsSpec {
    /// Replication factor of a created internal topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 32))]
    pub replication_factor: Option<i32>,
    /// `min.insync.replicas` of a created internal topic: how many replicas must have a write
    /// before it is acknowledged (the capture writes with acks=all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 32))]
    pub min_insync_replicas: Option<i32>,
}

/// Bounds of one Kafka transaction (a page, with its bookmark at the end). Database transactions
/// are never split: one larger than a bound is a Kafka transaction of its own. A Kafka
/// transaction is committed as soon as any bound is reached, and at the end of every mining
/// window; `maxRecords: 1` (or `maxDelayMillis: 0`) gives one Kafka transaction per database
/// transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaTransactionsSpec {
    /// Commit once the Kafka transaction has been open this long: the latency it may add.
    #[serde(default = "default_kafka_max_delay_millis")]
    #[schemars(range(max = 60_000))]
    pub max_delay_millis: u64,
    /// Commit once the Kafka transaction holds this many records.
    #[serde(default = "default_kafka_max_records")]
    #[schemars(range(min = 1, max = 10_000_000))]
    pub max_records: u64,
    /// Commit once the Kafka transaction holds this many key and value bytes.
    #[serde(default = "default_kafka_max_bytes")]
    #[schemars(extend("x-kubernetes-validations" = kafka_bytes_rules()))]
    pub max_bytes: ByteQuantity,
}

impl Default for KafkaTransactionsSpec {
    fn default() -> Self {
        Self {
            max_delay_millis: default_kafka_max_delay_millis(),
            max_records: default_kafka_max_records(),
            max_bytes: default_kafka_max_bytes(),
        }
    }
}

fn default_kafka_max_delay_millis() -> u64 {
    100
}
fn default_kafka_max_records() -> u64 {
    100_000
}
fn default_kafka_max_bytes() -> ByteQuantity {
    ByteQuantity::quantity("16Mi")
}

fn kafka_bytes_rules() -> serde_json::Value {
    let mut rules = quantity_rules("spec.kafka.transactions.maxBytes");
    if let Some(list) = rules.as_array_mut() {
        list.push(serde_json::json!({
            "rule": bounded_size_rule("SIZE.compareTo(quantity('1Ki')) >= 0 && SIZE.compareTo(quantity('1Gi')) <= 0"),
            "message": "spec.kafka.transactions.maxBytes must be between 1Ki and 1Gi",
        }));
    }
    rules
}

/// The event format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FormatSpec {
    /// `debezium` (Debezium-compatible keys and values) or `compact` (one small JSON object per
    /// change).
    #[serde(rename = "type", default)]
    pub type_: FormatType,
    /// With `debezium`: how keys and values are written. `json` (Kafka Connect's JsonConverter) or
    /// `avro` (Avro binary in Confluent's wire format, each schema registered in
    /// `spec.schemaRegistry`, as Confluent's AvroConverter writes it). `avro` needs
    /// `type: debezium`.
    #[serde(default)]
    pub encoding: FormatEncoding,
    /// With `debezium` and `encoding: json`: wrap keys and values in the `schema`/`payload`
    /// envelope, as Kafka Connect's JsonConverter does with `schemas.enable=true`. Not used with
    /// `encoding: avro`, whose records carry a schema id instead.
    #[serde(default = "default_true")]
    pub schemas: bool,
    /// With `debezium`, Debezium's `decimal.handling.mode`: `precise` (Connect Decimal),
    /// `double` or `string`.
    #[serde(default)]
    pub decimal_handling_mode: DecimalHandlingMode,
    /// With `debezium`, Debezium's `legacy.decimal.handling.strategy`: under `double` or `string`,
    /// keep NUMBER(p,0) columns with p < 19 as integers, as Debezium before 2.7 wrote them.
    /// Default false: they follow the decimal mode, as Debezium 2.7 and later write them.
    #[serde(default)]
    pub legacy_decimal_handling_strategy: bool,
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
    /// With `debezium`, Debezium's `provide.transaction.metadata`: a BEGIN and an END record per
    /// transaction on `<prefix>.transaction`, and the `transaction` block in every data event.
    #[serde(default)]
    pub transaction_metadata: bool,
    /// With `debezium`, Debezium's `skipped.operations`: the operations not emitted, among `c`
    /// (create), `u` (update), `d` (delete) and `t` (truncate); `none` skips nothing.
    #[serde(default = "default_skipped_operations")]
    #[schemars(length(max = 4))]
    #[schemars(extend("x-kubernetes-list-type" = "set"))]
    #[schemars(extend("x-kubernetes-validations" = [{
        "rule": "!('none' in self) || size(self) == 1",
        "message": "spec.format.skippedOperations: none cannot be combined with other operations",
    }]))]
    pub skipped_operations: Vec<SkippedOperation>,
    /// With `debezium`: a schema change event on the topic `<topicPrefix>` for each DDL on a
    /// captured table, with the table's new structure (Debezium's `include.schema.changes`).
    #[serde(default = "default_true")]
    pub include_schema_changes: bool,
}

/// An operation Debezium's `skipped.operations` can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SkippedOperation {
    #[serde(rename = "c")]
    Create,
    #[serde(rename = "u")]
    Update,
    #[serde(rename = "d")]
    Delete,
    #[serde(rename = "t")]
    Truncate,
    #[serde(rename = "none")]
    None,
}

/// At least one way to choose tables: `tables` or a schema/table list of `filters`.
fn tables_chosen_rule() -> String {
    format!(
        "(has(self.tables) && size(self.tables) > 0) || {}",
        filters_choose_tables()
    )
}

/// A request's tables are captured ones: listed in `spec.tables`, or left to the capture to
/// find among what the filter lists choose (a request naming a table no list chooses fails
/// there, with its message in the status). Bounded: 32 requests of 10 tables against at most
/// 1000 listed tables. `filters` itself is no sign of choosing: it defaults to `{}`.
fn snapshot_request_tables_rule() -> String {
    format!(
        "!has(self.snapshot) || !has(self.snapshot.requests) || {} || \
         self.snapshot.requests.all(r, r.tables.all(t, has(self.tables) && t in self.tables))",
        filters_choose_tables()
    )
}

/// Whether a schema or table list of `filters` is given and not empty.
fn filters_choose_tables() -> String {
    TABLE_LISTS
        .iter()
        .map(|list| {
            format!(
                "(has(self.filters) && has(self.filters.{list}) && size(self.filters.{list}) > 0)"
            )
        })
        .collect::<Vec<_>>()
        .join(" || ")
}

/// The `filters` lists that choose tables from the catalog.
pub const TABLE_LISTS: [&str; 4] = [
    "schemaIncludeList",
    "schemaExcludeList",
    "tableIncludeList",
    "tableExcludeList",
];

/// The column options that only the `debezium` format applies (see [`DEBEZIUM_ONLY_FIELDS`]): one
/// rule per field, so that the refusal names the field that is set.
fn debezium_only_rules() -> serde_json::Value {
    let rules: Vec<serde_json::Value> = DEBEZIUM_ONLY_FIELDS
        .iter()
        .map(|field| {
            let (parent, name) = field.rsplit_once('.').unwrap_or(("", field));
            serde_json::json!({
                "rule": format!(
                    "self.format.type == 'debezium' || !has(self.{parent}.{name}) || size(self.{parent}.{name}) == 0"
                ),
                "message": format!("spec.{field} shapes Debezium records: it needs spec.format.type debezium"),
                "fieldPath": format!(".{field}"),
            })
        })
        .collect();
    serde_json::Value::Array(rules)
}

/// The spec fields only the `debezium` format applies: with `compact` they would silently do
/// nothing (a column meant to be hidden would be published), so they are refused.
pub const DEBEZIUM_ONLY_FIELDS: [&str; 8] = [
    "filters.columnIncludeList",
    "filters.columnExcludeList",
    "columns.messageKeyColumns",
    "columns.maskHash",
    "columns.maskWithChars",
    "columns.truncateToChars",
    "columns.propagateSourceType",
    "columns.datatypePropagateSourceType",
];

fn default_skipped_operations() -> Vec<SkippedOperation> {
    vec![SkippedOperation::Truncate]
}

/// Which changes and columns are emitted. Every list holds regular expressions that must match
/// the whole name (RE2 syntax, which covers POSIX extended expressions without backreferences),
/// case-sensitively, against names in dictionary case.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("!has(self.schemaIncludeList) || !has(self.schemaExcludeList) || size(self.schemaIncludeList) == 0 || size(self.schemaExcludeList) == 0").message("set at most one of spec.filters.schemaIncludeList and spec.filters.schemaExcludeList").field_path(".schemaIncludeList"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.tableIncludeList) || !has(self.tableExcludeList) || size(self.tableIncludeList) == 0 || size(self.tableExcludeList) == 0").message("set at most one of spec.filters.tableIncludeList and spec.filters.tableExcludeList").field_path(".tableIncludeList"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.usernameIncludeList) || !has(self.usernameExcludeList) || size(self.usernameIncludeList) == 0 || size(self.usernameExcludeList) == 0").message("set at most one of spec.filters.usernameIncludeList and spec.filters.usernameExcludeList").field_path(".usernameIncludeList"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.columnIncludeList) || !has(self.columnExcludeList) || size(self.columnIncludeList) == 0 || size(self.columnExcludeList) == 0").message("set at most one of spec.filters.columnIncludeList and spec.filters.columnExcludeList").field_path(".columnIncludeList"))]
pub struct FiltersSpec {
    /// Regular expressions on the owner: tables of matching schemas are captured (Debezium's
    /// `schema.include.list`), Oracle-maintained schemas never.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    pub schema_include_list: Vec<String>,
    /// Regular expressions on the owner: tables of matching schemas are not captured (Debezium's
    /// `schema.exclude.list`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    pub schema_exclude_list: Vec<String>,
    /// Regular expressions on `SCHEMA.TABLE`: matching tables are captured (Debezium's
    /// `table.include.list`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    pub table_include_list: Vec<String>,
    /// Regular expressions on `SCHEMA.TABLE`: matching tables are not captured (Debezium's
    /// `table.exclude.list`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    pub table_exclude_list: Vec<String>,
    /// Only changes made by these database users are emitted (Debezium's
    /// `log.mining.username.include.list`). User names, compared without regard to case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 128)))]
    pub username_include_list: Vec<String>,
    /// Changes made by these database users are not emitted (Debezium's
    /// `log.mining.username.exclude.list`). User names, compared without regard to case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 128)))]
    pub username_exclude_list: Vec<String>,
    /// Regular expressions on `SCHEMA.TABLE.COLUMN`: only matching columns are in event values
    /// (Debezium's `column.include.list`). Key columns always stay in keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    pub column_include_list: Vec<String>,
    /// Regular expressions on `SCHEMA.TABLE.COLUMN`: matching columns are left out of event
    /// values (Debezium's `column.exclude.list`). Key columns always stay in keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    pub column_exclude_list: Vec<String>,
}

/// Per-column settings of the `debezium` format. Column patterns are regular expressions on
/// `SCHEMA.TABLE.COLUMN`, matched like the filter lists.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ColumnsSpec {
    /// Columns that form the message key instead of the primary key, per table (Debezium's
    /// `message.key.columns`); the first entry whose `table` matches applies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub message_key_columns: Vec<MessageKeyColumns>,
    /// Character columns whose values are replaced by the hex digest of salt and value
    /// (Debezium's `column.mask.hash.v2.<algorithm>.with.salt.<salt>`), cut to the column's
    /// length.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub mask_hash: Vec<HashMask>,
    /// Character columns whose values are replaced by `length` asterisks (Debezium's
    /// `column.mask.with.<length>.chars`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub mask_with_chars: Vec<LengthRule>,
    /// Character columns whose values are cut to `length` characters (Debezium's
    /// `column.truncate.to.<length>.chars`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub truncate_to_chars: Vec<LengthRule>,
    /// Columns whose field schemas carry their Oracle type, length and scale as parameters
    /// (Debezium's `column.propagate.source.type`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    pub propagate_source_type: Vec<String>,
    /// Regular expressions on Oracle type names (`NUMBER`, `VARCHAR2`): columns of matching
    /// types carry the same parameters (Debezium's `datatype.propagate.source.type`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 1024)))]
    pub datatype_propagate_source_type: Vec<String>,
}

/// A salted hash of character columns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HashMask {
    /// The digest, named as Java's MessageDigest names it, in any case: MD2, MD5, SHA-1,
    /// SHA-256, SHA-512/256, SHA3-512, ... (the rule lists every name and alias).
    pub algorithm: HashAlgorithm,
    /// Hashed before the value.
    #[schemars(length(max = 1024))]
    pub salt: String,
    /// Regular expressions on `SCHEMA.TABLE.COLUMN`.
    #[schemars(length(min = 1, max = 100), inner(length(min = 1, max = 1024)))]
    pub columns: Vec<String>,
}

/// A length applied to the columns the patterns match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LengthRule {
    /// Characters.
    #[schemars(range(max = 1_000_000))]
    pub length: u32,
    /// Regular expressions on `SCHEMA.TABLE.COLUMN`.
    #[schemars(length(min = 1, max = 100), inner(length(min = 1, max = 1024)))]
    pub columns: Vec<String>,
}

/// The key columns of the tables a regular expression matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageKeyColumns {
    /// A regular expression matching the whole `SCHEMA.TABLE`.
    #[schemars(length(min = 1, max = 1024))]
    pub table: String,
    /// The key columns in key order, names in dictionary case.
    #[schemars(length(min = 1, max = 32), inner(length(min = 1, max = 128)))]
    pub columns: Vec<String>,
}

impl Default for FormatSpec {
    fn default() -> Self {
        Self {
            type_: FormatType::default(),
            encoding: FormatEncoding::default(),
            schemas: true,
            decimal_handling_mode: DecimalHandlingMode::default(),
            legacy_decimal_handling_strategy: false,
            time_precision_mode: TimePrecisionMode::default(),
            binary_handling_mode: BinaryHandlingMode::default(),
            interval_handling_mode: IntervalHandlingMode::default(),
            number_one_as_boolean: false,
            tombstones_on_delete: true,
            transaction_metadata: false,
            skipped_operations: default_skipped_operations(),
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

/// How the `debezium` format writes keys and values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FormatEncoding {
    /// JSON text, as Kafka Connect's JsonConverter writes it.
    #[default]
    Json,
    /// Avro binary in Confluent's wire format (magic byte 0, 4-byte schema id, body).
    Avro,
}

/// `spec.schemaRegistry` goes with the Avro encoding and only with it.
pub const REGISTRY_WITH_AVRO_RULE: &str =
    "has(self.schemaRegistry) == (has(self.format.encoding) && self.format.encoding == 'avro')";
/// The message of [`REGISTRY_WITH_AVRO_RULE`], also the capture's.
pub const REGISTRY_WITH_AVRO: &str =
    "spec.schemaRegistry is required with spec.format.encoding avro and not allowed with json";

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
    /// A transaction open longer than this is journaled (counted from its start in the database,
    /// so a restart does not reset it).
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

    /// Longest a transaction may stay open, counted from its start in the database (its first
    /// row's time), so a restart does not reset it; unlimited when unset.
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

    /// Most entries in the released ledger: transactions released as orphans or discarded for
    /// their age whose COMMIT could still come (their undo slot not yet seen reused). One more
    /// release stops the capture with CDC-7003. The ledger travels in every bookmark, about 100
    /// bytes an entry, so the bound keeps the bookmark within Kafka's default 1 MB message size.
    #[serde(default = "default_released_ledger_max_entries")]
    #[schemars(range(min = 1, max = RELEASED_LEDGER_MAX_ENTRIES))]
    pub released_ledger_max_entries: u64,
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
            released_ledger_max_entries: default_released_ledger_max_entries(),
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("self.minScnWindow <= self.maxScnWindow").message("spec.mining.minScnWindow must not exceed spec.mining.maxScnWindow").field_path(".minScnWindow"))]
pub struct MiningSpec {
    /// Largest SCN range one window mines (one `START_LOGMNR` over the range). Windows start at
    /// this size and are made smaller while they exceed `windowMaxSeconds` or
    /// `sessionPgaMaxBytes`.
    #[serde(default = "default_max_scn_window")]
    #[schemars(range(min = 1000))]
    pub max_scn_window: u64,

    /// Smallest SCN range windows are made down to when they exceed `windowMaxSeconds` or
    /// `sessionPgaMaxBytes` (Debezium's `log.mining.batch.size.min`). Each breach halves the
    /// window size; after four windows in a row that were as large as allowed and used less than
    /// half of each bound, it doubles again, up to `maxScnWindow`.
    #[serde(default = "default_min_scn_window")]
    #[schemars(range(min = 1))]
    pub min_scn_window: u64,

    /// Seconds one window may take, from `START_LOGMNR` to the end of its fetch, before the next
    /// windows are made smaller; 0 turns the bound off. Work between windows (the lag, the
    /// orphan check, the maximum age, heartbeats) waits for the window in progress, and a long
    /// window holds its LogMiner session busy the whole time.
    #[serde(default = "default_window_max_seconds")]
    #[schemars(range(max = 3600))]
    pub window_max_seconds: u64,

    /// Memory (`session pga memory`) of the database session LogMiner runs on, read after each
    /// window, past which that session is ended for a fresh one (a server process gives its PGA
    /// back only when it ends) and the next windows are made smaller; 0 turns the bound off,
    /// otherwise at least 16Mi. Keep it well below `PGA_AGGREGATE_LIMIT`, which ends the
    /// sessions using the most PGA with ORA-04036 once the instance's total passes it.
    #[serde(default = "default_session_pga_max_bytes")]
    #[schemars(extend("x-kubernetes-validations" = session_pga_rules()))]
    pub session_pga_max_bytes: ByteQuantity,

    /// Seconds between polls that find nothing new.
    #[serde(default = "default_poll_interval")]
    #[schemars(range(min = 1, max = 3600))]
    pub poll_interval_seconds: u64,

    /// With schema or table lists in `spec.filters`: seconds between listings of the catalog,
    /// the last of which finds a table created later that the lists choose (it is captured from
    /// there, and read as `snapshot.tablesAdded` says). Each listing is one catalog query.
    #[serde(default = "default_table_listing_interval")]
    #[schemars(range(min = 1, max = 3600))]
    pub table_listing_interval_seconds: u64,

    /// File sink only: changes per page: 0 aggregates transactions into pages of up to 100,000
    /// changes, otherwise one page per transaction. Kafka pages follow `spec.kafka.transactions`.
    #[serde(default = "default_batch_size")]
    #[schemars(range(max = 100_000))]
    pub batch_size: u64,

    /// Per-round-trip call timeout; 0 disables it.
    #[serde(default = "default_statement_timeout")]
    pub statement_timeout_seconds: u64,

    /// Table committed to before each window (after the window's end SCN is read) so the log
    /// writer writes out the redo up to the window's end; created if missing.
    #[serde(default = "default_flush_table")]
    #[schemars(length(min = 1, max = 128))]
    #[schemars(regex(
        pattern = r"^[A-Za-z][A-Za-z0-9_$#]{0,127}([.][A-Za-z][A-Za-z0-9_$#]{0,127})?$"
    ))]
    pub flush_table: String,

    /// `fail` stops with CDC-6001 on a change LogMiner cannot render; `skip` logs and counts it.
    #[serde(default)]
    pub on_unsupported: OnUnsupported,

    /// Never write to the database: the flush-table commit before each window is skipped, and the
    /// capture user needs no CREATE TABLE or tablespace quota (for a user without write rights
    /// on the primary). It does not make a standby minable: the capture lists the primary's
    /// online logs (`V$LOG`) and its archived logs, never a standby's standby redo logs
    /// (`V$STANDBY_LOG`), so mining a physical or logical standby is not supported yet. Nothing
    /// is lost: every window ends below the newest redo the log writer has written
    /// (`V$THREAD.LAST_REDO_CHANGE#`). The cost is lag: changes wait for the log writer's own
    /// writes (a commit on the instance, its 3-second timeout, a log switch), and the newest SCN
    /// it wrote waits for the next write, so on a quiet database the last transaction can wait
    /// until the database writes more redo.
    #[serde(default)]
    pub read_only: bool,

    /// Seconds one LogMiner session (and the database session it runs on) is kept across
    /// windows before it is ended and a fresh one started; 0 keeps it until the logs change.
    /// LogMiner's memory in the server process (PGA) grows over a long session, and a session
    /// that outgrows it fails with ORA-04030 (Debezium's `log.mining.session.max.ms` with
    /// `log.mining.restart.connection`). A log switch starts a fresh session anyway.
    #[serde(default = "default_session_max_seconds")]
    #[schemars(range(max = 86_400))]
    pub session_max_seconds: u64,

    /// Hours the database keeps an archived log after archiving it, as its deletion policy
    /// says: Amazon RDS's `archivelog retention hours` (`rdsadmin.rdsadmin_util.show_configuration`),
    /// the `COMPLETED BEFORE 'SYSDATE-n'` of an RMAN `DELETE ARCHIVELOG` job, or a cron job's
    /// age limit. With it the capture reports how many hours are left before the oldest
    /// archived log it needs to restart is deleted (`status.archivedRedo`, CDC-2001 once it
    /// is gone); without it that is unknown, since Oracle exposes no time-based deletion
    /// policy. A declaration only: the capture deletes nothing. A full fast recovery area
    /// deletes reclaimable logs sooner than any policy (docs/runbook.md, CDC-2001).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 8760))]
    pub archive_retention_hours: Option<u32>,
}

/// Heartbeats (Debezium's `heartbeat.*`): at each interval a record on the heartbeat topic, in
/// a page whose bookmark moves to the SCN mining has reached when no transaction is open, so lag
/// and archived-redo retention follow an idle (or read-only) capture.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("!has(self.actionQuery) || self.intervalSeconds > 0").message("spec.heartbeat.actionQuery needs spec.heartbeat.intervalSeconds above 0").field_path(".actionQuery"))]
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
            min_scn_window: default_min_scn_window(),
            window_max_seconds: default_window_max_seconds(),
            session_pga_max_bytes: default_session_pga_max_bytes(),
            poll_interval_seconds: default_poll_interval(),
            table_listing_interval_seconds: default_table_listing_interval(),
            batch_size: default_batch_size(),
            statement_timeout_seconds: default_statement_timeout(),
            flush_table: default_flush_table(),
            on_unsupported: OnUnsupported::default(),
            read_only: false,
            session_max_seconds: default_session_max_seconds(),
            archive_retention_hours: None,
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
fn default_released_ledger_max_entries() -> u64 {
    RELEASED_LEDGER_DEFAULT_ENTRIES
}
fn default_max_scn_window() -> u64 {
    500_000
}
/// Debezium's `log.mining.batch.size.min` default, and the smallest `maxScnWindow`.
fn default_min_scn_window() -> u64 {
    1000
}
/// A minute: far above what a window takes in steady streaming (well under a second) or over a
/// backlog of archived logs at `maxScnWindow` (seconds), so only a window that is truly too large
/// for the redo it covers (a bulk load, many LOBs) makes the next ones smaller.
fn default_window_max_seconds() -> u64 {
    60
}
/// Half of the smallest default `PGA_AGGREGATE_LIMIT` (2 GB): the capture's one session cannot
/// take an instance with default settings to its limit on its own.
fn default_session_pga_max_bytes() -> ByteQuantity {
    ByteQuantity::quantity("1Gi")
}
fn default_poll_interval() -> u64 {
    1
}
fn default_table_listing_interval() -> u64 {
    60
}
fn default_batch_size() -> u64 {
    1000
}
fn default_statement_timeout() -> u64 {
    600
}
/// An hour: long enough that starting a session (registering its logs) is rare next to the
/// windows it serves, short enough that a session's memory is returned well before a busy day
/// makes it large.
fn default_session_max_seconds() -> u64 {
    3600
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

fn session_pga_rules() -> serde_json::Value {
    let mut rules = quantity_rules("spec.mining.sessionPgaMaxBytes");
    if let Some(list) = rules.as_array_mut() {
        list.push(serde_json::json!({
            "rule": bounded_size_rule(&format!("SIZE.compareTo(quantity('0')) == 0 || SIZE.compareTo(quantity('{MIN_SESSION_PGA_BYTES}')) >= 0")),
            "message": "spec.mining.sessionPgaMaxBytes must be 0 (no bound) or at least 16Mi",
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
