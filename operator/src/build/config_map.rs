//! The capture config, rendered from the spec into a ConfigMap.
//!
//! The config has the spec's field names and shape (the contracts' "capture config file") plus
//! `name` and the spill directory on the mounted volume. Fields that only shape the pod (`image`,
//! `pod`, `suspend`, the spill volume's `size` and `storageClassName`) are left out, and so are the
//! Secret references: credentials reach the capture as mounted files named by environment
//! variables (see `statefulset.rs`) or, for `kafka.tls` and `kafka.authentication`, by the paths
//! written in their place (see `kafka_credentials.rs`), never through the ConfigMap. The SHA-256 of the rendered file goes on the pod template, so a config change rolls
//! the pod, except a change of `snapshot.requests` alone: the capture follows the mounted file and
//! applies that one while it runs ([`rolling_hash`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use redoline_crds::OracleCapture;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{
    BuildError, Identity, OperatorSettings, SPILL_DIR, kafka_credentials, registry_credentials,
    simulator,
};

/// The key of the config file in the ConfigMap, and its file name in the pod.
pub const CONFIG_FILE: &str = "capture.yaml";
/// Pod template annotation holding the SHA-256 of the rendered config.
pub const CONFIG_HASH_ANNOTATION: &str = "redoline.io/config-sha256";

/// The capture config file for this resource, as YAML.
pub fn render_capture_config(capture: &OracleCapture) -> Result<String, BuildError> {
    let document = render_document(capture)?;
    serde_norway::to_string(&document).map_err(|e| BuildError::RenderConfig(e.to_string()))
}

/// The capture config as a document, before it is written out.
fn render_document(capture: &OracleCapture) -> Result<serde_json::Map<String, Value>, BuildError> {
    let render = |e: &dyn std::fmt::Display| BuildError::RenderConfig(e.to_string());
    let mut config = serde_json::to_value(&capture.spec).map_err(|e| render(&e))?;
    let Value::Object(fields) = &mut config else {
        return Err(BuildError::RenderConfig("the spec is not an object".into()));
    };
    for pod_only in ["image", "pod", "suspend"] {
        fields.remove(pod_only);
    }
    if let Some(Value::Object(database)) = fields.get_mut("database") {
        database.remove("credentialsSecret");
        database.remove("walletSecret");
    }
    if let Some(Value::Object(kafka)) = fields.get_mut("kafka") {
        kafka.remove("configSecret");
        // The Secret references of tls and authentication become the paths they are mounted at.
        kafka.remove("tls");
        kafka.remove("authentication");
        kafka.extend(kafka_credentials::config_fields(capture));
    }
    if let Some(Value::Object(registry)) = fields.get_mut("schemaRegistry") {
        registry.remove("tls");
        registry.remove("authentication");
        registry.extend(registry_credentials::config_fields(capture));
    }
    if let Some(Value::Object(spill)) = fields.get_mut("buffer").and_then(|b| b.get_mut("spill")) {
        // The volume's size and class shape the claim, not the capture: leaving them out keeps
        // the config (and its hash) unchanged when a spill volume is expanded in place.
        spill.remove("size");
        spill.remove("storageClassName");
        spill.insert("dir".into(), Value::String(SPILL_DIR.into()));
    }
    let name = capture.metadata.name.clone().unwrap_or_default();
    let mut document = serde_json::Map::new();
    document.insert("name".into(), Value::String(name));
    if let Some(namespace) = &capture.metadata.namespace {
        // Name and namespace together are the capture's identity in Kafka (transactional id,
        // bookmark key), so two captures of the same name in two namespaces never collide.
        document.insert("namespace".into(), Value::String(namespace.clone()));
    }
    document.append(fields);
    Ok(document)
}

pub(super) fn build(
    capture: &OracleCapture,
    identity: &Identity,
    settings: &OperatorSettings,
) -> Result<ConfigMap, BuildError> {
    let mut document = render_document(capture)?;
    if settings.simulator_scenarios.is_some() {
        simulator::simulated_database(&mut document, identity);
    }
    let rendered =
        serde_norway::to_string(&document).map_err(|e| BuildError::RenderConfig(e.to_string()))?;
    let mut metadata = identity.metadata(identity.config_map_name());
    metadata.annotations = Some(BTreeMap::from([(
        CONFIG_HASH_ANNOTATION.to_owned(),
        rolling_hash(document)?,
    )]));
    Ok(ConfigMap {
        metadata,
        data: Some(BTreeMap::from([(CONFIG_FILE.to_owned(), rendered)])),
        ..ConfigMap::default()
    })
}

/// The SHA-256 of the rendered config without `snapshot.requests`: the capture applies a
/// change of the requests alone while it runs (it follows the mounted file), so such a change
/// must not roll the pod, whose restart would mine the open transactions again from the oldest
/// one's start. Every other change of the config changes the hash.
fn rolling_hash(mut document: serde_json::Map<String, Value>) -> Result<String, BuildError> {
    if let Some(Value::Object(snapshot)) = document.get_mut("snapshot") {
        snapshot.remove("requests");
    }
    let rendered =
        serde_norway::to_string(&document).map_err(|e| BuildError::RenderConfig(e.to_string()))?;
    Ok(sha256_hex(&rendered))
}

pub(super) fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;

    #[test]
    fn renders_the_spec_shape_without_pod_fields_or_secret_references() {
        let yaml = render_capture_config(&fixtures::sample()).unwrap();
        let config: Value = serde_norway::from_str(&yaml).unwrap();
        assert_eq!(config["name"], "orders");
        assert_eq!(config["tables"][1], "SALES.ORDER_LINES");
        assert_eq!(config["database"]["serviceName"], "ORDERSPDB");
        assert_eq!(config["buffer"]["memoryMaxBytes"], "512Mi");
        assert_eq!(config["buffer"]["spill"]["dir"], SPILL_DIR);
        assert_eq!(config["buffer"]["spill"]["maxBytes"], "20Gi");
        assert!(config["buffer"]["spill"].get("size").is_none());
        assert_eq!(config["mining"]["flushTable"], "REDOLINE_LOGMNR_FLUSH");
        for absent in ["pod", "image", "suspend"] {
            assert!(
                config.get(absent).is_none(),
                "{absent} leaked into the config"
            );
        }
        assert!(config["database"].get("credentialsSecret").is_none());
        assert!(config["kafka"].get("configSecret").is_none());
        assert!(
            !yaml.contains("orders-db-cdc"),
            "a Secret name leaked: {yaml}"
        );
    }

    #[test]
    fn the_hash_follows_the_config() {
        let identity = Identity::of(&fixtures::sample()).unwrap();
        let settings = fixtures::settings();
        let build =
            |capture: &OracleCapture, identity: &Identity| build(capture, identity, &settings);
        let a = build(&fixtures::sample(), &identity).unwrap();
        let mut changed = fixtures::sample();
        changed.spec.mining.poll_interval_seconds = 5;
        let b = build(&changed, &identity).unwrap();
        let hash = |cm: &ConfigMap| {
            cm.metadata.annotations.as_ref().unwrap()[CONFIG_HASH_ANNOTATION].clone()
        };
        assert_ne!(hash(&a), hash(&b));
        assert_eq!(hash(&a).len(), 64);
        // Pod-only fields do not change the config, so they do not roll the pod by themselves.
        let mut scaled = fixtures::sample();
        scaled.spec.suspend = true;
        assert_eq!(hash(&a), hash(&build(&scaled, &identity).unwrap()));
        // Nor does a bigger spill volume, which is expanded in place without a restart.
        let mut expanded = fixtures::sample();
        expanded.spec.buffer.spill.size = redoline_crds::ByteQuantity::quantity("48Gi");
        assert_eq!(hash(&a), hash(&build(&expanded, &identity).unwrap()));
    }

    #[test]
    fn snapshot_requests_change_the_file_but_not_the_hash() {
        use redoline_crds::v1alpha1::{SnapshotRequest, TableName};
        let identity = Identity::of(&fixtures::sample()).unwrap();
        let settings = fixtures::settings();
        let hash = |capture: &OracleCapture| {
            let cm = build(capture, &identity, &settings).unwrap();
            let hash = cm.metadata.annotations.as_ref().unwrap()[CONFIG_HASH_ANNOTATION].clone();
            (hash, cm.data.unwrap()[CONFIG_FILE].clone())
        };
        let (before, file_before) = hash(&fixtures::sample());
        let request = |id: &str| SnapshotRequest {
            id: id.to_owned(),
            tables: vec![TableName("SALES.ORDERS".to_owned())],
            condition: Some("STATUS = 'OPEN'".to_owned()),
        };
        // A request added, another added, one removed: the file follows, the hash does not.
        let mut asked = fixtures::sample();
        asked.spec.snapshot.requests = vec![request("reread-1")];
        let (one, file_one) = hash(&asked);
        assert_eq!(one, before);
        assert_ne!(file_one, file_before);
        assert!(file_one.contains("reread-1"), "{file_one}");
        asked.spec.snapshot.requests.push(request("reread-2"));
        assert_eq!(hash(&asked).0, before);
        asked.spec.snapshot.requests.remove(0);
        assert_eq!(hash(&asked).0, before);
        // Any other snapshot field, with the requests or without, rolls the pod.
        let mut fetch = asked.clone();
        fetch.spec.snapshot.fetch_size = 500;
        assert_ne!(hash(&fetch).0, before);
        let mut overrides = fixtures::sample();
        overrides
            .spec
            .snapshot
            .select_overrides
            .insert("SALES.ORDERS".to_owned(), "ID > 0".to_owned());
        assert_ne!(hash(&overrides).0, before);
        let mut tables = asked.clone();
        tables.spec.tables.pop();
        assert_ne!(hash(&tables).0, before);
    }
}
