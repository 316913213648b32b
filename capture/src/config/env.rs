//! Config fields from the environment.
//!
//! Any field can be set or overridden by a variable named `REDOLINE__` followed by its path,
//! segments joined by `__`, each segment in upper snake case: `REDOLINE__MINING__MAX_SCN_WINDOW=
//! 100000` sets `mining.maxScnWindow`, `REDOLINE__KAFKA__BOOTSTRAP_SERVERS=broker:9092` sets
//! `kafka.bootstrapServers`. The value is read as a YAML scalar or flow collection, so numbers
//! stay numbers and `REDOLINE__TABLES='[APP.ORDERS, APP.LINES]'` is a list. Secrets do not go
//! through here: they come from files ([`super::secrets`]).

use serde_json::{Map, Value};

use super::ConfigError;

/// The prefix of override variables.
pub const PREFIX: &str = "REDOLINE__";

/// Applies every `REDOLINE__...` variable of `environment` to the document, in name order so
/// the result does not depend on the environment's order.
pub fn apply_overrides(
    document: &mut Value,
    environment: &[(String, String)],
) -> Result<(), ConfigError> {
    let mut overrides: Vec<&(String, String)> = environment
        .iter()
        .filter(|(name, _)| name.starts_with(PREFIX))
        .collect();
    overrides.sort();
    for (name, text) in overrides {
        let path: Vec<String> = name[PREFIX.len()..].split("__").map(camel_case).collect();
        if path.iter().any(String::is_empty) {
            return Err(ConfigError::new(name.clone(), "names an empty field"));
        }
        let value: Value = serde_norway::from_str(text).map_err(|error| {
            ConfigError::new(name.clone(), format!("is not a YAML value: {error}"))
        })?;
        set(document, &path, value).map_err(|field| {
            ConfigError::new(
                name.clone(),
                format!("cannot set a field inside {field}, which is not a mapping"),
            )
        })?;
    }
    Ok(())
}

/// `MAX_SCN_WINDOW` → `maxScnWindow`.
fn camel_case(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for (index, word) in segment.split('_').filter(|w| !w.is_empty()).enumerate() {
        let lower = word.to_ascii_lowercase();
        if index == 0 {
            out.push_str(&lower);
        } else {
            let mut chars = lower.chars();
            if let Some(first) = chars.next() {
                out.push(first.to_ascii_uppercase());
                out.extend(chars);
            }
        }
    }
    out
}

fn set(document: &mut Value, path: &[String], value: Value) -> Result<(), String> {
    let mut node = document;
    for (depth, segment) in path.iter().enumerate() {
        if node.is_null() {
            *node = Value::Object(Map::new());
        }
        let Value::Object(object) = node else {
            return Err(path[..depth].join("."));
        };
        if depth + 1 == path.len() {
            object.insert(segment.clone(), value);
            return Ok(());
        }
        node = object.entry(segment.clone()).or_insert(Value::Null);
    }
    Ok(())
}
