//! Validation of a capture config beyond its types: the JSON schema generated from the types
//! (the same attributes the CRD's schema comes from) and the CRD's CEL rules, mirrored in Rust
//! because the capture has no CEL engine. A test keeps the mirrored rules honest by pairing each
//! with a config the CRD refuses.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use redoline_crds::ByteQuantity;
use redoline_crds::v1alpha1::{
    DEBEZIUM_ONLY_FIELDS, FIELDS_BY_TYPE, FormatEncoding, FormatType, KafkaAuthenticationType,
    KafkaTopicsSpec, MIN_MEMORY_BYTES, MIN_SESSION_PGA_BYTES, SkippedOperation, StartPositionType,
    TopicCreation,
};
use serde_json::Value;

use super::kafka_auth::TrustedCertificateFiles;
use super::{CaptureConfig, ConfigError, KafkaConfig};
use crate::filter::Filters;

/// The schema of [`CaptureConfig`], generated once.
static SCHEMA: LazyLock<Value> =
    LazyLock::new(|| schemars::schema_for!(CaptureConfig).as_value().clone());

/// Checks ranges, lengths, patterns and enums of the schema; the first failure names its field.
pub fn against_schema(document: &Value) -> Result<(), ConfigError> {
    let validator = jsonschema::validator_for(&SCHEMA)
        .map_err(|error| ConfigError::new("(schema)", error.to_string()))?;
    match validator.iter_errors(document).next() {
        None => Ok(()),
        Some(error) => Err(ConfigError::new(
            dotted(error.instance_path().as_str()),
            error.to_string(),
        )),
    }
}

/// `/buffer/memoryMaxBytes` → `buffer.memoryMaxBytes`; `/tables/1` → `tables[1]`.
fn dotted(pointer: &str) -> String {
    let mut field = String::new();
    for segment in pointer.split('/').skip(1) {
        if segment.chars().all(|c| c.is_ascii_digit()) && !segment.is_empty() {
            field.push('[');
            field.push_str(segment);
            field.push(']');
        } else {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(&segment.replace("~1", "/").replace("~0", "~"));
        }
    }
    if field.is_empty() {
        "(top level)".to_owned()
    } else {
        field
    }
}

/// The field names accepted in the object holding the dotted `field` path (for an unknown-field
/// message).
pub fn accepted_fields(field: &str) -> BTreeSet<String> {
    let mut schema = &*SCHEMA;
    let mut parts: Vec<&str> = field.split('.').collect();
    parts.pop();
    for part in parts {
        let name = part.split('?').next().unwrap_or(part);
        match resolve(schema).get("properties").and_then(|p| p.get(name)) {
            Some(inner) => schema = inner,
            None => return BTreeSet::new(),
        }
    }
    resolve(schema)
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// Follows a `$ref` (and the single-member `anyOf`/`allOf` schemars writes for optional refs).
fn resolve(schema: &Value) -> &Value {
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| SCHEMA.get("$defs").and_then(|defs| defs.get(name)));
    if let Some(target) = target {
        return resolve(target);
    }
    for combinator in ["anyOf", "allOf", "oneOf"] {
        if let Some(found) = schema
            .get(combinator)
            .and_then(Value::as_array)
            .and_then(|options| options.iter().find(|o| o.get("$ref").is_some()))
        {
            return resolve(found);
        }
    }
    schema
}

/// The heartbeat's CEL rules: an action query needs an interval, and writes (so no `readOnly`).
fn heartbeat_rules(config: &CaptureConfig) -> Result<(), ConfigError> {
    if config.heartbeat.action_query.is_none() {
        return Ok(());
    }
    if config.heartbeat.interval_seconds == 0 {
        return Err(ConfigError::new(
            "heartbeat.actionQuery",
            "needs heartbeat.intervalSeconds above 0",
        ));
    }
    if config.mining.read_only {
        return Err(ConfigError::new(
            "heartbeat.actionQuery",
            "writes to the database: not allowed with mining.readOnly",
        ));
    }
    Ok(())
}

/// `spec.kafka.topics`' CEL rules: settings only where the capture creates topics, and never
/// more in-sync replicas required than there are replicas.
fn topic_rules(topics: &KafkaTopicsSpec) -> Result<(), ConfigError> {
    let data = &topics.data;
    let settings = data.partitions.is_some() || data.replication_factor.is_some();
    if data.creation != TopicCreation::Capture && (settings || !data.config.is_empty()) {
        return Err(ConfigError::new(
            "kafka.topics.data",
            "partitions, replicationFactor and config apply only with creation: capture",
        ));
    }
    let min_insync = data
        .config
        .get("min.insync.replicas")
        .filter(|value| (1..=9).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|value| value.parse::<i64>().ok());
    if let (Some(replication), Some(min_insync)) = (data.replication_factor, min_insync)
        && min_insync > i64::from(replication)
    {
        return Err(ConfigError::new(
            "kafka.topics.data",
            "config min.insync.replicas must not exceed replicationFactor, or no write with \
             acks=all could succeed",
        ));
    }
    let internal = &topics.internal;
    if let (Some(replication), Some(min_insync)) =
        (internal.replication_factor, internal.min_insync_replicas)
        && min_insync > replication
    {
        return Err(ConfigError::new(
            "kafka.topics.internal.minInsyncReplicas",
            "must not exceed replicationFactor, or no write with acks=all could succeed",
        ));
    }
    Ok(())
}

/// The CRD's CEL rules, in Rust.
pub fn rules(config: &CaptureConfig) -> Result<(), ConfigError> {
    let size = |field: &str, quantity: &ByteQuantity| {
        quantity
            .bytes()
            .map_err(|error| ConfigError::new(field, error.to_string()))
    };
    let memory = size("buffer.memoryMaxBytes", &config.buffer.memory_max_bytes)?;
    if memory < MIN_MEMORY_BYTES {
        return Err(ConfigError::new(
            "buffer.memoryMaxBytes",
            "must be at least 16Mi",
        ));
    }
    size("buffer.spill.maxBytes", &config.buffer.spill.max_bytes)?;
    let chunk = size("journal.chunkMaxBytes", &config.journal.chunk_max_bytes)?;
    if !(1 << 10..=16 << 20).contains(&chunk) {
        return Err(ConfigError::new(
            "journal.chunkMaxBytes",
            "must be between 1Ki and 16Mi",
        ));
    }
    let pga = size(
        "mining.sessionPgaMaxBytes",
        &config.mining.session_pga_max_bytes,
    )?;
    if pga != 0 && pga < MIN_SESSION_PGA_BYTES {
        return Err(ConfigError::new(
            "mining.sessionPgaMaxBytes",
            "must be 0 (no bound) or at least 16Mi",
        ));
    }
    if config.mining.min_scn_window > config.mining.max_scn_window {
        return Err(ConfigError::new(
            "mining.minScnWindow",
            "must not exceed mining.maxScnWindow",
        ));
    }
    if let Some(kafka) = &config.kafka {
        let field = "kafka.transactions.maxBytes";
        let bytes = size(field, &kafka.transactions.max_bytes)?;
        if !(1 << 10..=1 << 30).contains(&bytes) {
            return Err(ConfigError::new(field, "must be between 1Ki and 1Gi"));
        }
        topic_rules(&kafka.topics)?;
    }
    for (index, table) in config.tables.iter().enumerate() {
        if split_table_name(&table.0).is_none() {
            return Err(ConfigError::new(
                format!("tables[{index}]"),
                format!(
                    "{:?} must be OWNER.TABLE: two Oracle identifiers joined by a dot, each \
                     unquoted (letter first, then letters, digits, _ $ #) or in double quotes",
                    table.0
                ),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (index, table) in config.tables.iter().enumerate() {
        if !seen.insert(&table.0) {
            return Err(ConfigError::new(
                format!("tables[{index}]"),
                format!("{:?} is listed twice", table.0),
            ));
        }
    }
    for table in config.snapshot.select_overrides.keys() {
        if !config.tables.iter().any(|captured| &captured.0 == table) {
            return Err(ConfigError::new(
                format!("snapshot.selectOverrides.{table}"),
                "must be one of tables, written the same way",
            ));
        }
    }
    if config.snapshot.max_threads >= config.database.max_connections {
        return Err(ConfigError::new(
            "snapshot.maxThreads",
            "must be at most database.maxConnections - 1: the mining session holds one connection",
        ));
    }
    let start = &config.start_position;
    if (start.type_ == StartPositionType::Scn) != start.scn.is_some() {
        return Err(ConfigError::new(
            "startPosition.scn",
            "is required with type scn and not allowed with current or earliest",
        ));
    }
    database_rules(config)?;
    let skipped = &config.format.skipped_operations;
    if skipped.contains(&SkippedOperation::None) && skipped.len() > 1 {
        return Err(ConfigError::new(
            "format.skippedOperations",
            "none cannot be combined with other operations",
        ));
    }
    let avro = config.format.encoding == FormatEncoding::Avro;
    if avro && config.format.type_ != FormatType::Debezium {
        return Err(ConfigError::new(
            "format.encoding",
            "avro writes Debezium records: it needs format.type debezium",
        ));
    }
    if avro && config.file.is_some() {
        return Err(ConfigError::new(
            "format.encoding",
            "avro needs the Kafka sink: the file sink (file) writes JSON lines, which cannot hold \
             Avro records; use encoding json with file, or a kafka sink",
        ));
    }
    if config.format.type_ != FormatType::Debezium {
        let (filters, columns) = (&config.filters, &config.columns);
        let set = [
            !filters.column_include_list.is_empty(),
            !filters.column_exclude_list.is_empty(),
            !columns.message_key_columns.is_empty(),
            !columns.mask_hash.is_empty(),
            !columns.mask_with_chars.is_empty(),
            !columns.truncate_to_chars.is_empty(),
            !columns.propagate_source_type.is_empty(),
            !columns.datatype_propagate_source_type.is_empty(),
        ];
        if let Some((field, _)) = DEBEZIUM_ONLY_FIELDS
            .iter()
            .zip(set)
            .find(|(_, is_set)| *is_set)
        {
            return Err(ConfigError::new(
                *field,
                "shapes Debezium records: it needs format.type debezium",
            ));
        }
    }
    let filters = Filters::new(&config.filters, &config.columns)
        .map_err(|error| ConfigError::new(error.field, error.problem))?;
    if config.tables.is_empty() && !filters.selects_from_catalog() {
        return Err(ConfigError::new(
            "tables",
            "choose the captured tables: list them in tables or give filters a schema or table \
             list",
        ));
    }
    heartbeat_rules(config)?;
    schema_registry_rules(config)?;
    match (&config.kafka, &config.file) {
        (Some(kafka), None) => {
            let prefix_ok = kafka
                .topic_prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
            if !prefix_ok {
                return Err(ConfigError::new(
                    "kafka.topicPrefix",
                    "may hold only letters, digits, '.', '_' and '-'",
                ));
            }
            kafka_security_rules(kafka)
        }
        (None, Some(_)) => Ok(()),
        _ => Err(ConfigError::new(
            "kafka",
            "set exactly one of kafka (a Kafka sink) and file (a JSON Lines file)",
        )),
    }
}

/// The rules of `spec.kafka.tls` and `spec.kafka.authentication`, on the config's fields.
fn kafka_security_rules(kafka: &KafkaConfig) -> Result<(), ConfigError> {
    if let Some(tls) = &kafka.tls {
        trusted_certificate_rules("kafka.tls.trustedCertificates", &tls.trusted_certificates)?;
    }
    let Some(auth) = &kafka.authentication else {
        return Ok(());
    };
    for (field, types, required) in FIELDS_BY_TYPE {
        let Some((name, present)) = auth.counterpart(field) else {
            continue;
        };
        let with_type = types.contains(&auth.type_);
        if present != with_type && (*required || present) {
            let names: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
            let message = if *required {
                format!(
                    "is required with type {} and not allowed with any other type",
                    names.join(", ")
                )
            } else {
                format!("is allowed only with type {}", names.join(", "))
            };
            return Err(ConfigError::new(
                format!("kafka.authentication.{name}"),
                message,
            ));
        }
    }
    if auth.type_ == KafkaAuthenticationType::Tls && kafka.tls.is_none() {
        return Err(ConfigError::new(
            "kafka.tls",
            "authentication type tls needs kafka.tls: the client certificate is presented in the \
             TLS handshake",
        ));
    }
    trusted_certificate_rules(
        "kafka.authentication.tlsTrustedCertificates",
        &auth.tls_trusted_certificates,
    )?;
    if let Some(uri) = &auth.token_endpoint_uri {
        let scheme = uri.strip_prefix("https://").or(uri.strip_prefix("http://"));
        if scheme.is_none_or(|rest| rest.is_empty() || rest.contains(char::is_whitespace)) {
            return Err(ConfigError::new(
                "kafka.authentication.tokenEndpointUri",
                "must be an http:// or https:// URL",
            ));
        }
    }
    for (name, value) in &auth.sasl_extensions {
        let name_ok = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphabetic())
            && name != "auth";
        if !name_ok || value.contains([',', '=']) || value.len() > 1024 {
            return Err(ConfigError::new(
                format!("kafka.authentication.saslExtensions.{name}"),
                "names are letters only (not 'auth'), values hold no ',' or '='",
            ));
        }
    }
    if let Some(service) = &auth.service_name
        && service.contains(|c: char| c == '/' || c == '@' || c.is_whitespace())
    {
        return Err(ConfigError::new(
            "kafka.authentication.serviceName",
            "is the principal's first part, without '/' or '@'",
        ));
    }
    Ok(())
}

/// `schemaRegistry` goes with `format.encoding: avro` and only with it (the CRD's
/// `REGISTRY_WITH_AVRO_RULE`), and its own fields follow the CRD's rules.
fn schema_registry_rules(config: &CaptureConfig) -> Result<(), ConfigError> {
    let avro = config.format.encoding == FormatEncoding::Avro;
    match &config.schema_registry {
        Some(registry) if avro => registry.rules(),
        None if !avro => Ok(()),
        _ => Err(ConfigError::new(
            "schemaRegistry",
            "is required with format.encoding avro and not allowed with json",
        )),
    }
}

/// Each entry names exactly one of a file and a pattern; a pattern is a directory and a glob.
pub(super) fn trusted_certificate_rules(
    field: &str,
    entries: &[TrustedCertificateFiles],
) -> Result<(), ConfigError> {
    for (index, entry) in entries.iter().enumerate() {
        match (&entry.certificate, &entry.pattern) {
            (Some(_), None) => {}
            (None, Some(pattern)) => {
                if pattern.file_name().is_none() || pattern.parent().is_none() {
                    return Err(ConfigError::new(
                        format!("{field}[{index}].pattern"),
                        "must be a directory followed by a glob over file names, such as \
                         /certs/*.crt",
                    ));
                }
            }
            _ => {
                return Err(ConfigError::new(
                    format!("{field}[{index}]"),
                    "set exactly one of certificate and pattern",
                ));
            }
        }
    }
    Ok(())
}

fn database_rules(config: &CaptureConfig) -> Result<(), ConfigError> {
    let database = &config.database;
    let connection_fields = database.host.is_some()
        || database.service_name.is_some()
        || database.connect_string.is_some();
    if database.simulator.is_some() {
        return if connection_fields {
            Err(ConfigError::new(
                "database.simulator",
                "a simulated database takes no host, serviceName or connectString",
            ))
        } else {
            Ok(())
        };
    }
    if database.service_name.is_some() == database.connect_string.is_some() {
        return Err(ConfigError::new(
            "database",
            "set exactly one of database.serviceName and database.connectString (or database.simulator)",
        ));
    }
    if database.service_name.is_some() && database.host.is_none() {
        return Err(ConfigError::new(
            "database.host",
            "is required with database.serviceName",
        ));
    }
    if database.connect_string.is_some() && database.host.is_some() {
        return Err(ConfigError::new(
            "database.host",
            "must not be set with database.connectString, which names the host itself",
        ));
    }
    Ok(())
}

/// Splits `OWNER.TABLE` into the names the dictionary holds: unquoted parts upper-cased (as
/// Oracle folds them), quoted parts as written. `None` when the text is not two identifiers.
pub fn split_table_name(text: &str) -> Option<(String, String)> {
    let (owner, rest) = identifier(text)?;
    let rest = rest.strip_prefix('.')?;
    let (table, rest) = identifier(rest)?;
    rest.is_empty().then_some((owner, table))
}

/// One identifier as the dictionary holds it: unquoted folded to upper case, quoted as written.
/// `None` when the text is not exactly one identifier.
pub fn dictionary_name(text: &str) -> Option<String> {
    let (name, rest) = identifier(text)?;
    rest.is_empty().then_some(name)
}

/// One identifier at the start of `text`, and what follows it.
fn identifier(text: &str) -> Option<(String, &str)> {
    if let Some(quoted) = text.strip_prefix('"') {
        let end = quoted.find('"')?;
        let name = &quoted[..end];
        return (!name.is_empty() && name.len() <= 128)
            .then(|| (name.to_owned(), &quoted[end + 1..]));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '#')))
        .unwrap_or(text.len());
    let name = &text[..end];
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && name.len() <= 128;
    valid.then(|| (name.to_ascii_uppercase(), &text[end..]))
}
