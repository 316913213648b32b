//! librdkafka client settings: the spec's broker list, redoline's producer defaults, the
//! properties of `spec.kafka.tls` and `spec.kafka.authentication` ([`super::authentication`]),
//! and those of `spec.kafka.configSecret`.
//!
//! The typed fields name files (the operator mounts their Secrets, see `kafka_auth` in the
//! config): passwords and client secrets are read from them here, trusted certificates are
//! concatenated into one PEM string, certificate and key files are handed to librdkafka by path.
//! The operator mounts `configSecret` as a directory (`$REDOLINE_KAFKA_CONFIG_DIR`): every file
//! is one librdkafka property, named by the file and valued by its content (a trailing newline is
//! dropped). That is how anything the typed fields do not cover reaches librdkafka (a producer
//! setting such as `linger.ms`, or SASL and TLS settings for a spec without the typed fields). A
//! property set both ways is CDC-1001 naming both fields. Properties that exactly-once delivery
//! rests on are redoline's own and cannot be overridden ([`RESERVED_PROPERTIES`]); naming one is
//! CDC-1001.
//!
//! Secrets are never logged: `Debug` shows the property names but replaces the value of every
//! property that may hold a secret ([`is_sensitive`]) with `<redacted>`, and a librdkafka error
//! about a property is reported without its value.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use rdkafka::ClientConfig;
use rdkafka::error::KafkaError;
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::KafkaSpec;

use super::authentication::{self, PropertyValue, conflicting_properties};
use crate::config::KafkaConfig;
use crate::config::certificates::certificates_pem;
use crate::config::secrets::read_secret_file;
use crate::stop::Stop;

/// The directory holding the mounted `spec.kafka.configSecret` (set by the operator).
pub const KAFKA_CONFIG_DIR_ENV: &str = "REDOLINE_KAFKA_CONFIG_DIR";

/// Properties redoline sets itself: overriding them would break exactly-once delivery, fencing
/// or the read-back of bookmarks and journal.
pub const RESERVED_PROPERTIES: &[&str] = &[
    "bootstrap.servers",
    "transactional.id",
    "enable.idempotence",
    "acks",
    "request.required.acks",
    "isolation.level",
    "enable.auto.commit",
    "group.id",
    // Follows `spec.kafka.topics.data.creation` (see `KafkaSink::open`).
    "allow.auto.create.topics",
];

/// Redoline's producer defaults, applied before the Secret's properties.
const PRODUCER_DEFAULTS: &[(&str, &str)] = &[
    // Java's default partitioner, so keys land where a Java producer would put them.
    ("partitioner", "murmur2_random"),
    // Kafka's own default since 4.0: batches fill while a page streams, and a page's commit
    // waits for at most this much of its last batch.
    ("linger.ms", "5"),
    // Debezium records with schemas repeat their schema in every record: lz4 shrinks a page to a
    // fraction, which is what a broker's disk and network carry, for little CPU. Every Kafka
    // client reads it.
    ("compression.type", "lz4"),
    // The next transaction's AddPartitionsToTxn meets CONCURRENT_TRANSACTIONS until the broker
    // has written the previous commit's markers; librdkafka's 100 ms default backoff would cap
    // small pages at a few per second. (Retries back off exponentially from here.)
    ("retry.backoff.ms", "5"),
    // A page is one transaction, streamed while its transactions are read back and encoded, so a
    // large one stays open for a while; the broker aborts it if it is not committed in this
    // time. 15 minutes is the broker's default `transaction.max.timeout.ms`. (A capture that
    // restarts aborts its open transaction at once, in `init_transactions`.)
    ("transaction.timeout.ms", "900000"),
    // What librdkafka holds unsent or unacknowledged: the bound of a page's memory, since pages
    // stream (see `page`). librdkafka's defaults (100,000 messages, 1 GiB) would let one large
    // transaction take a gigabyte; 16 MiB keeps batches full at a fraction of that.
    ("queue.buffering.max.messages", "20000"),
    ("queue.buffering.max.kbytes", "16384"),
    ("message.timeout.ms", "60000"),
];

/// The client settings of one capture. `Debug` redacts secrets (see the module docs).
#[derive(Clone, PartialEq, Eq)]
pub struct KafkaClientSettings {
    bootstrap_servers: String,
    /// From `spec.kafka.configSecret`, `spec.kafka.tls` and `spec.kafka.authentication`, by
    /// property name.
    properties: BTreeMap<String, String>,
    /// The properties set from `spec.kafka.tls` and `spec.kafka.authentication`, with the field
    /// each comes from.
    typed: BTreeMap<&'static str, &'static str>,
}

impl KafkaClientSettings {
    /// The settings from the spec alone (no Secret).
    pub fn new(spec: &KafkaSpec) -> Self {
        Self::with_bootstrap(&spec.bootstrap_servers)
    }

    /// Settings for a broker list (tests, benchmarks).
    pub fn with_bootstrap(bootstrap_servers: &str) -> Self {
        Self {
            bootstrap_servers: bootstrap_servers.to_owned(),
            properties: BTreeMap::new(),
            typed: BTreeMap::new(),
        }
    }

    /// Adds one property of `spec.kafka.configSecret`; a reserved one, or one that
    /// `spec.kafka.tls` or `spec.kafka.authentication` set, is CDC-1001.
    pub fn with_property(mut self, name: &str, value: &str) -> Result<Self, Stop> {
        if let Some((typed, field)) = self
            .typed
            .iter()
            .find(|(typed, _)| conflicting_properties(typed).contains(&name))
        {
            return Err(both_set(name, typed, field));
        }
        if RESERVED_PROPERTIES.contains(&name) {
            return Err(Stop::new(
                StopCode::InvalidConfiguration,
                format!(
                    "spec.kafka.configSecret: property {name} is set by redoline and cannot be \
                     overridden"
                ),
            )
            .with_detail("field", "spec.kafka.configSecret")
            .with_detail("property", name));
        }
        self.properties.insert(name.to_owned(), value.to_owned());
        Ok(self)
    }

    /// Adds the properties of a mounted Secret: one file per property. Kubernetes' own entries
    /// (names starting with `.`, such as `..data`) are skipped.
    pub fn with_properties_dir(mut self, dir: &Path) -> Result<Self, Stop> {
        let unreadable = |path: &Path, e: std::io::Error| {
            Stop::new(
                StopCode::InvalidConfiguration,
                format!(
                    "spec.kafka.configSecret: cannot read {}: {e}",
                    path.display()
                ),
            )
            .with_detail("field", "spec.kafka.configSecret")
        };
        let entries = std::fs::read_dir(dir).map_err(|e| unreadable(dir, e))?;
        let mut files: Vec<(String, PathBuf)> = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| unreadable(dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            // Secret keys are symlinks into `..data`; follow them, skip directories.
            if name.starts_with('.') || path.is_dir() {
                continue;
            }
            files.push((name, path));
        }
        files.sort();
        for (name, path) in files {
            let text = std::fs::read_to_string(&path).map_err(|e| unreadable(&path, e))?;
            let value = text.strip_suffix('\n').unwrap_or(&text);
            let value = value.strip_suffix('\r').unwrap_or(value);
            self = self.with_property(&name, value)?;
        }
        Ok(self)
    }

    /// Adds the properties of the config's `tls` and `authentication` ([`authentication`]),
    /// reading the files they name: a password, a client secret, the trusted certificates. A
    /// file that cannot be read, a certificate file without a PEM certificate, or a property the
    /// `configSecret` already set is CDC-1001 naming the field.
    pub fn with_security(mut self, kafka: &KafkaConfig) -> Result<Self, Stop> {
        for property in authentication::properties(kafka) {
            let conflict = conflicting_properties(property.name)
                .iter()
                .find(|name| self.properties.contains_key(**name));
            if let Some(secret_property) = conflict {
                return Err(both_set(secret_property, property.name, property.field));
            }
            let value = match &property.value {
                PropertyValue::Text(text) => text.clone(),
                PropertyValue::FileText(path) => read_secret_file(path)
                    .map_err(|message| {
                        unusable_file(property.field, &format!("{}: {message}", path.display()))
                    })?
                    .expose()
                    .to_owned(),
                PropertyValue::Certificates(sources) => certificates_pem(sources)
                    .map_err(|message| unusable_file(property.field, &message))?,
            };
            self.properties.insert(property.name.to_owned(), value);
            self.typed.insert(property.name, property.field);
        }
        Ok(self)
    }

    /// The broker list.
    pub fn bootstrap_servers(&self) -> &str {
        &self.bootstrap_servers
    }

    /// A base configuration for any client (admin, consumer): the broker list and the Secret's
    /// properties.
    pub fn client_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.bootstrap_servers);
        for (name, value) in &self.properties {
            config.set(name, value);
        }
        config
    }

    /// The producer configuration: defaults, then the Secret's properties, then the reserved
    /// properties for the delivery mode (`transactional_id` is `None` for at-least-once).
    pub fn producer_config(&self, transactional_id: Option<&str>) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.bootstrap_servers);
        for (name, value) in PRODUCER_DEFAULTS {
            config.set(*name, *value);
        }
        for (name, value) in &self.properties {
            config.set(name, value);
        }
        config.set("enable.idempotence", "true");
        config.set("acks", "all");
        if let Some(id) = transactional_id {
            config.set("transactional.id", id);
        }
        config
    }

    /// A consumer that reads a topic to its end once, committing nothing.
    pub fn reader_config(&self, group_id: &str) -> ClientConfig {
        let mut config = self.client_config();
        config
            .set("group.id", group_id)
            .set("isolation.level", "read_committed")
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .set("enable.partition.eof", "true")
            // Reading never creates a topic (librdkafka's consumer default, said outright): doctor
            // reads the offsets topic before a capture has created it with its settings, and a
            // broker with `auto.create.topics.enable` would otherwise create it with its own
            // defaults (KIP-361).
            .set("allow.auto.create.topics", "false")
            // The end is reported by a fetch that finds nothing new, and the broker holds such a
            // fetch for `fetch.wait.max.ms` (500 ms by default): at start every topic read back
            // (bookmark, schema history, journal) would pay it.
            .set("fetch.wait.max.ms", "10");
        config
    }
}

/// A property set both by a typed field and by `spec.kafka.configSecret`.
fn both_set(secret_property: &str, typed_property: &str, field: &str) -> Stop {
    let same = if secret_property == typed_property {
        String::new()
    } else {
        format!(" (which librdkafka takes in place of {typed_property})")
    };
    Stop::new(
        StopCode::InvalidConfiguration,
        format!(
            "spec.kafka.configSecret: property {secret_property}{same} is also set by {field}: \
             set it in one place"
        ),
    )
    .with_detail("field", "spec.kafka.configSecret")
    .with_detail("property", secret_property)
    .with_detail("also", field)
}

fn unusable_file(field: &str, message: &str) -> Stop {
    Stop::new(
        StopCode::InvalidConfiguration,
        format!("{field}: {message}"),
    )
    .with_detail("field", field)
}

/// Drops a librdkafka client (a start-up's admin client or topic reader) on a thread of its own:
/// librdkafka's destroy waits about 100 ms for the client's broker threads to end, which a
/// start-up need not wait for. Without a thread (none could be started), it is dropped here.
pub fn close_in_background<C: Send + 'static>(client: C) {
    let _ = std::thread::Builder::new()
        .name("kafka-client-close".to_owned())
        .spawn(move || drop(client));
}

/// librdkafka refused the configuration: CDC-1001 naming the property, never its value (it may be
/// a secret).
pub fn refused_settings(error: &KafkaError) -> Stop {
    let message = match error {
        KafkaError::ClientConfig(_, description, property, _) => format!(
            "spec.kafka.configSecret: librdkafka refuses property {property}: {description}"
        ),
        other => format!("spec.kafka: the Kafka client cannot be created: {other}"),
    };
    Stop::new(StopCode::InvalidConfiguration, message).with_detail("field", "spec.kafka")
}

/// Whether a property may hold a secret (its value is then never shown).
pub fn is_sensitive(name: &str) -> bool {
    const MARKERS: &[&str] = &[
        "password",
        "secret",
        "key",
        "pem",
        "jaas",
        "token",
        "oauthbearer",
        "credential",
    ];
    let name = name.to_ascii_lowercase();
    MARKERS.iter().any(|marker| name.contains(marker))
}

impl fmt::Debug for KafkaClientSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let properties: BTreeMap<&str, &str> = self
            .properties
            .iter()
            .map(|(name, value)| {
                let shown = if is_sensitive(name) {
                    "<redacted>"
                } else {
                    value.as_str()
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("KafkaClientSettings")
            .field("bootstrap_servers", &self.bootstrap_servers)
            .field("properties", &properties)
            .finish()
    }
}

#[cfg(test)]
mod tests;
