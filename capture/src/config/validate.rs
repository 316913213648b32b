//! Validation of a capture config beyond its types: the JSON schema generated from the types
//! (the same attributes the CRD's schema comes from), the capture's own rules, and the CRD's CEL
//! rules, evaluated from the CRD itself ([`super::crd_rules`]). A test pairs each CRD rule with a
//! config the CRD refuses and the capture refuses too.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use redoline_crds::v1alpha1::FormatEncoding;
use serde_json::Value;

use super::kafka_auth::TrustedCertificateFiles;
use super::{CaptureConfig, ConfigError};
use crate::filter::Filters;

/// The schema of [`CaptureConfig`], generated once.
pub(super) static SCHEMA: LazyLock<Value> =
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
pub(super) fn resolve(schema: &Value) -> &Value {
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

/// The capture's rules and the CRD's CEL rules ([`super::crd_rules`]), in this order: first the
/// local alternatives (which change what the CRD's rules mean: a simulated database, the file
/// sink), then the CRD's rules, then what only the capture can tell (whole byte counts, the
/// filters' patterns compiled, certificate paths).
pub fn rules(config: &CaptureConfig) -> Result<(), ConfigError> {
    local_alternatives(config)?;
    let document = serde_json::to_value(config)
        .map_err(|error| ConfigError::new("(top level)", error.to_string()))?;
    // A simulated database has no connection: the CRD's rules of `database` describe one.
    let skip: &[&str] = if config.database.simulator.is_some() {
        &["database"]
    } else {
        &[]
    };
    super::crd_rules::check(&document, skip)?;
    whole_byte_sizes(config)?;
    Filters::new(&config.filters, &config.columns)
        .map_err(|error| ConfigError::new(error.field, error.problem))?;
    if let Some(kafka) = &config.kafka {
        if let Some(tls) = &kafka.tls {
            certificate_patterns("kafka.tls.trustedCertificates", &tls.trusted_certificates)?;
        }
        if let Some(auth) = &kafka.authentication {
            certificate_patterns(
                "kafka.authentication.tlsTrustedCertificates",
                &auth.tls_trusted_certificates,
            )?;
        }
    }
    if let Some(registry) = &config.schema_registry {
        registry.rules()?;
    }
    Ok(())
}

/// The capture's rules of what the CRD does not have: `database.simulator` in place of a
/// connection, `file` in place of `kafka`.
fn local_alternatives(config: &CaptureConfig) -> Result<(), ConfigError> {
    let database = &config.database;
    let connection_fields = database.host.is_some()
        || database.service_name.is_some()
        || database.connect_string.is_some();
    if database.simulator.is_some() && connection_fields {
        return Err(ConfigError::new(
            "database.simulator",
            "a simulated database takes no host, serviceName or connectString",
        ));
    }
    match (&config.kafka, &config.file) {
        (Some(_), None) | (None, Some(_)) => {}
        _ => {
            return Err(ConfigError::new(
                "kafka",
                "set exactly one of kafka (a Kafka sink) and file (a JSON Lines file)",
            ));
        }
    }
    if config.format.encoding == FormatEncoding::Avro && config.file.is_some() {
        return Err(ConfigError::new(
            "format.encoding",
            "avro needs the Kafka sink: the file sink (file) writes JSON lines, which cannot hold \
             Avro records; use encoding json with file, or a kafka sink",
        ));
    }
    Ok(())
}

/// The CRD takes any quantity (`1500m` is one); the capture counts whole bytes.
fn whole_byte_sizes(config: &CaptureConfig) -> Result<(), ConfigError> {
    let mut sizes = vec![
        ("buffer.memoryMaxBytes", &config.buffer.memory_max_bytes),
        ("buffer.spill.maxBytes", &config.buffer.spill.max_bytes),
        ("journal.chunkMaxBytes", &config.journal.chunk_max_bytes),
        (
            "mining.sessionPgaMaxBytes",
            &config.mining.session_pga_max_bytes,
        ),
    ];
    if let Some(kafka) = &config.kafka {
        sizes.push(("kafka.transactions.maxBytes", &kafka.transactions.max_bytes));
    }
    for (field, size) in sizes {
        size.bytes()
            .map_err(|error| ConfigError::new(field, error.to_string()))?;
    }
    Ok(())
}

/// A pattern names a directory and a glob over its file names (the spec's pattern is a glob
/// within a Secret; the config's is a path). Exactly one of certificate and pattern is the
/// CRD's rule.
pub(super) fn certificate_patterns(
    field: &str,
    entries: &[TrustedCertificateFiles],
) -> Result<(), ConfigError> {
    for (index, entry) in entries.iter().enumerate() {
        if let Some(pattern) = &entry.pattern
            && (pattern.file_name().is_none() || pattern.parent().is_none())
        {
            return Err(ConfigError::new(
                format!("{field}[{index}].pattern"),
                "must be a directory followed by a glob over file names, such as /certs/*.crt",
            ));
        }
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
