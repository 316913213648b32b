//! The capture config file: the `OracleCapture` spec's fields and shape, plus `name` and the
//! local-run alternatives of the contracts (`database.simulator`, a `file` sink, `buffer.spill.dir`).
//!
//! Loading is all or nothing, before anything connects ([`load`]):
//! 1. the YAML is read and environment overrides are applied ([`env`]);
//! 2. it is deserialized into [`CaptureConfig`]; an unknown field or a wrong type is an error
//!    naming the field path and, for an unknown field, the fields accepted there;
//! 3. it is checked against the JSON schema generated from the same types the CRD is generated
//!    from (ranges, lengths, patterns, enums), then against the capture's own rules and the
//!    CRD's CEL rules, evaluated from the generated CRD ([`validate`], [`crd_rules`]);
//! 4. secrets are read from the files the pod mounts ([`secrets`]).
//!
//! Every failure is a [`ConfigError`] naming the field, which the capture reports as CDC-1001.
//! Types shared with the CRD come from `redoline_crds`; the config's own types exist only where
//! the shapes differ (no Secret references, local alternatives). Those re-declare the spec's
//! fields they keep, with the spec's bounds: they cannot embed the spec's structs, since
//! `#[serde(flatten)]` would hide an unknown field from `deserialize`, which names it. A test
//! (`shared_fields_carry_the_crds_bounds`) holds every shared field's bounds to the CRD's.

pub mod certificates;
pub mod crd_rules;
pub mod env;
pub mod kafka_auth;
pub mod schema_registry;
pub mod secrets;
pub mod validate;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use redoline_crds::ByteQuantity;
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::{
    BufferSpec, ColumnsSpec, FiltersSpec, FormatSpec, HeartbeatSpec, JournalSpec, KafkaTopicsSpec,
    KafkaTransactionsSpec, MiningSpec, Reposition, SlaSpec, SnapshotSpec, StartPosition, TableName,
    TransactionsSpec, default_max_connections, default_port, default_spill_max_bytes,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stop::Stop;

/// The whole capture config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaptureConfig {
    /// The capture's name (the OracleCapture's name): part of its Kafka identity.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The OracleCapture's namespace, when run by the operator (part of the Kafka identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub namespace: Option<String>,
    pub database: DatabaseConfig,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 1000))]
    pub tables: Vec<TableName>,
    #[serde(default)]
    pub start_position: StartPosition,
    #[serde(default)]
    pub snapshot: SnapshotSpec,
    /// A move of the stored position, applied once per id (`engine::reposition`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reposition: Option<Reposition>,
    /// The Kafka sink; exactly one of `kafka` and `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kafka: Option<KafkaConfig>,
    /// The file sink (local runs): JSON Lines, one event per line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileSinkConfig>,
    #[serde(default)]
    pub format: FormatSpec,
    /// The schema registry of the Avro encoding ([`schema_registry`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_registry: Option<schema_registry::SchemaRegistryConfig>,
    #[serde(default)]
    pub filters: FiltersSpec,
    #[serde(default)]
    pub columns: ColumnsSpec,
    #[serde(default)]
    pub buffer: BufferConfig,
    #[serde(default)]
    pub journal: JournalSpec,
    #[serde(default)]
    pub transactions: TransactionsSpec,
    #[serde(default)]
    pub mining: MiningSpec,
    #[serde(default)]
    pub heartbeat: HeartbeatSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sla: Option<SlaSpec>,
    #[serde(default)]
    pub http: HttpConfig,
}

/// The database: a connection (as in the spec, without the Secret references) or the simulator.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub host: Option<String>,
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub service_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub connect_string: Option<String>,
    /// The PDB whose changes are wanted when connected to CDB$ROOT (19c classic mining). Folded
    /// to upper case unless double-quoted, as Oracle folds identifiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub pdb: Option<String>,
    /// At least 2: the LogMiner session holds one for the whole window, and a pool without
    /// waiting (as the client builds it) fails every other call with ORA-24418.
    #[serde(default = "default_max_connections")]
    #[schemars(range(min = 2, max = 16))]
    pub max_connections: u32,
    /// The Oracle simulator instead of a database (tests, demo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulator: Option<SimulatorConfig>,
}

/// A simulated database driven by a scenario file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SimulatorConfig {
    /// The scenario (JSON Lines), relative to the config file's directory when relative.
    pub scenario: PathBuf,
    /// Keep reading the scenario as it grows: lines appended while the capture runs are the
    /// database's new activity (a workload feeding the demo).
    #[serde(default)]
    pub follow: bool,
    /// Which door of the simulator the capture goes through: `boundary` (the simulator answers
    /// the capture's Oracle boundary directly, the fastest) or `sql` (the real Oracle client,
    /// whose every statement the simulator's model of Oracle evaluates; see docs/simulator.md).
    #[serde(default)]
    pub through: SimulatorDoor,
}

/// The door a capture reaches the simulator through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SimulatorDoor {
    /// The simulator implements the boundary traits itself.
    #[default]
    Boundary,
    /// The real Oracle client runs its SQL against the simulator's model of Oracle.
    Sql,
}

/// The Kafka sink, as in the spec; TLS and authentication name the files holding their
/// credentials ([`kafka_auth`]), other client properties come from the mounted `configSecret`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaConfig {
    #[schemars(length(min = 1, max = 4096))]
    pub bootstrap_servers: String,
    #[schemars(length(min = 1, max = 200))]
    pub topic_prefix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<kafka_auth::KafkaTlsConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<kafka_auth::KafkaAuthenticationConfig>,
    #[serde(default = "default_true")]
    pub exactly_once: bool,
    /// How many database transactions one Kafka transaction carries.
    #[serde(default)]
    pub transactions: KafkaTransactionsSpec,
    /// Who creates the topics, with which settings.
    #[serde(default)]
    pub topics: KafkaTopicsSpec,
}

impl KafkaConfig {
    /// Makes every credential file path absolute with `resolve`.
    fn resolve_relative_paths(&mut self, resolve: &dyn Fn(&mut PathBuf)) {
        let certificates = |list: &mut Vec<kafka_auth::TrustedCertificateFiles>| {
            for entry in list {
                entry.resolve_paths(resolve);
            }
        };
        if let Some(tls) = &mut self.tls {
            certificates(&mut tls.trusted_certificates);
        }
        if let Some(auth) = &mut self.authentication {
            certificates(&mut auth.tls_trusted_certificates);
            if let Some(pair) = &mut auth.certificate_and_key {
                resolve(&mut pair.certificate);
                resolve(&mut pair.key);
            }
            auth.password_file.iter_mut().for_each(resolve);
            auth.client_secret_file.iter_mut().for_each(resolve);
            auth.keytab_file.iter_mut().for_each(resolve);
        }
    }
}

fn default_true() -> bool {
    true
}

/// The file sink.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileSinkConfig {
    /// Relative to the config file's directory when relative.
    pub path: PathBuf,
}

/// The local spill directory: the temporary directory, `redoline-spill` and the capture name.
pub fn default_spill_dir(capture_name: &str) -> PathBuf {
    std::env::temp_dir()
        .join("redoline-spill")
        .join(capture_name)
}

/// The buffer: the spec's budget, and the spill directory instead of the volume's size/class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BufferConfig {
    #[serde(default = "default_memory_max_bytes")]
    pub memory_max_bytes: ByteQuantity,
    #[serde(default)]
    pub spill: SpillConfig,
}

fn default_memory_max_bytes() -> ByteQuantity {
    BufferSpec::default().memory_max_bytes
}

impl Default for BufferConfig {
    fn default() -> Self {
        Self {
            memory_max_bytes: default_memory_max_bytes(),
            spill: SpillConfig::default(),
        }
    }
}

/// Where spill files go and how much they may hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpillConfig {
    /// The spill directory; the system temporary directory plus `redoline-spill/<name>` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    #[serde(default = "default_spill_max_bytes")]
    pub max_bytes: ByteQuantity,
}

impl Default for SpillConfig {
    fn default() -> Self {
        Self {
            dir: None,
            max_bytes: default_spill_max_bytes(),
        }
    }
}

/// The HTTP endpoints (`/metrics`, `/healthz`, `/readyz`, `/status`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpConfig {
    /// 0 disables the server.
    #[serde(default = "default_http_port")]
    pub port: u16,
}

fn default_http_port() -> u16 {
    8080
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            port: default_http_port(),
        }
    }
}

/// A config that cannot be used, naming the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Dotted path of the field (`buffer.memoryMaxBytes`), or the file for file-level errors.
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The typed stop CDC-1001.
    pub fn stop(&self) -> Stop {
        Stop::new(
            StopCode::InvalidConfiguration,
            format!("invalid capture config: {self}"),
        )
        .with_detail("field", self.field.clone())
    }
}

/// Reads, overrides, deserializes and validates a config file; relative paths in it are made
/// relative to the file's directory.
pub fn load(path: &Path, environment: &[(String, String)]) -> Result<CaptureConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        ConfigError::new(
            path.display().to_string(),
            format!("cannot read the config file: {error}"),
        )
    })?;
    let mut config = parse(&text, environment)?;
    if let Some(base) = path.parent() {
        config.resolve_relative_paths(base);
    }
    Ok(config)
}

/// Parses and validates config text (no file paths resolved).
pub fn parse(text: &str, environment: &[(String, String)]) -> Result<CaptureConfig, ConfigError> {
    let mut document: serde_json::Value = serde_norway::from_str(text)
        .map_err(|error| ConfigError::new("(file)", format!("not valid YAML: {error}")))?;
    if document.is_null() {
        document = serde_json::Value::Object(serde_json::Map::new());
    }
    env::apply_overrides(&mut document, environment)?;
    let mut config = deserialize(&document)?;
    validate::against_schema(&document)?;
    validate::rules(&config)?;
    // Held in dictionary case from here on, as V$CONTAINERS and SRC_CON_NAME spell it.
    if let Some(pdb) = &mut config.database.pdb {
        *pdb = validate::dictionary_name(pdb).ok_or_else(|| {
            ConfigError::new(
                "database.pdb",
                format!(
                    "{pdb:?} is not a PDB name: an unquoted identifier (folded to upper case, \
                     as Oracle does) or a double-quoted one"
                ),
            )
        })?;
    }
    Ok(config)
}

/// Deserializes with the path of a wrong-typed field and every unknown field reported.
fn deserialize(document: &serde_json::Value) -> Result<CaptureConfig, ConfigError> {
    let mut unknown: Vec<String> = Vec::new();
    let mut record_unknown = |path: serde_ignored::Path<'_>| unknown.push(path.to_string());
    let config: CaptureConfig = serde_path_to_error::deserialize(serde_ignored::Deserializer::new(
        document,
        &mut record_unknown,
    ))
    .map_err(|error| {
        let field = error.path().to_string();
        ConfigError::new(
            if field == "." {
                "(top level)".to_owned()
            } else {
                field
            },
            error.into_inner().to_string(),
        )
    })?;
    if let Some(field) = unknown.into_iter().next() {
        let accepted = validate::accepted_fields(&field);
        return Err(ConfigError::new(
            field,
            format!("unknown field; accepted here: {}", join(&accepted)),
        ));
    }
    Ok(config)
}

fn join(names: &BTreeSet<String>) -> String {
    names.iter().cloned().collect::<Vec<_>>().join(", ")
}

impl CaptureConfig {
    fn resolve_relative_paths(&mut self, base: &Path) {
        let resolve = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        };
        if let Some(simulator) = &mut self.database.simulator {
            resolve(&mut simulator.scenario);
        }
        if let Some(file) = &mut self.file {
            resolve(&mut file.path);
        }
        if let Some(dir) = &mut self.buffer.spill.dir {
            resolve(dir);
        }
        if let Some(kafka) = &mut self.kafka {
            kafka.resolve_relative_paths(&resolve);
        }
        if let Some(registry) = &mut self.schema_registry {
            registry.resolve_relative_paths(&resolve);
        }
    }

    /// The spill directory: configured, or the temporary directory plus the capture's name.
    pub fn spill_dir(&self) -> PathBuf {
        self.buffer
            .spill
            .dir
            .clone()
            .unwrap_or_else(|| default_spill_dir(&self.name))
    }

    /// `(owner, table)` pairs as the dictionary spells them (quotes removed).
    pub fn table_names(&self) -> Vec<(String, String)> {
        self.tables
            .iter()
            .filter_map(|table| validate::split_table_name(&table.0))
            .collect()
    }
}

#[cfg(test)]
mod tests;
