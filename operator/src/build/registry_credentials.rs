//! The credentials of `spec.schemaRegistry` in the capture pod, mounted as Kafka's are
//! (`kafka_credentials`, whose helpers this uses): each Secret under
//! `/var/run/secrets/redoline/schema-registry/<purpose>/`, only the named keys projected (a
//! `pattern` mounts the whole Secret), the paths written into the rendered config's
//! `schemaRegistry` in place of the Secret references. The capture's rotation watch covers the
//! tree, so a rotated password, token or CA restarts it with the new one.

use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::SchemaRegistryAuthenticationType;
use serde_json::{Map, Value, json};

use super::kafka_credentials::{MountedCredentials, trusted, trusted_config};

/// Where the schema registry's credentials are mounted, one directory per purpose.
pub const REGISTRY_DIR: &str = "/var/run/secrets/redoline/schema-registry";

/// The volumes and mounts for `spec.schemaRegistry.tls` and `.authentication`.
pub fn build(capture: &OracleCapture) -> MountedCredentials {
    let mut out = MountedCredentials::default();
    let Some(registry) = &capture.spec.schema_registry else {
        return out;
    };
    if let Some(tls) = &registry.tls {
        for (index, source) in tls.trusted_certificates.iter().enumerate() {
            let field = format!("spec.schemaRegistry.tls.trustedCertificates[{index}]");
            let dir = format!("{REGISTRY_DIR}/tls/{index}");
            trusted(
                &mut out,
                format!("schema-registry-tls-{index}"),
                source,
                field,
                &dir,
            );
        }
    }
    let Some(auth) = &registry.authentication else {
        return out;
    };
    if let Some(password) = &auth.password_secret {
        const FIELD: &str = "spec.schemaRegistry.authentication.passwordSecret";
        out.secret(
            "schema-registry-password".into(),
            &password.secret_name,
            FIELD.into(),
            &[(&password.password, format!("{FIELD}.password"))],
            &format!("{REGISTRY_DIR}/password"),
        );
    }
    if let Some(token) = &auth.token_secret {
        const FIELD: &str = "spec.schemaRegistry.authentication.tokenSecret";
        out.secret(
            "schema-registry-token".into(),
            &token.secret_name,
            FIELD.into(),
            &[(&token.key, format!("{FIELD}.key"))],
            &format!("{REGISTRY_DIR}/token"),
        );
    }
    out
}

/// `schemaRegistry.tls` and `.authentication` of the capture config: the spec's fields with each
/// Secret reference replaced by the path [`build`] mounts it at.
pub fn config_fields(capture: &OracleCapture) -> Map<String, Value> {
    let mut fields = Map::new();
    let Some(registry) = &capture.spec.schema_registry else {
        return fields;
    };
    if let Some(tls) = &registry.tls {
        let certificates: Vec<Value> = tls
            .trusted_certificates
            .iter()
            .enumerate()
            .map(|(index, source)| trusted_config(source, &format!("{REGISTRY_DIR}/tls/{index}")))
            .collect();
        let mut tls = Map::new();
        if !certificates.is_empty() {
            tls.insert("trustedCertificates".into(), Value::Array(certificates));
        }
        fields.insert("tls".into(), Value::Object(tls));
    }
    if let Some(auth) = &registry.authentication {
        let mut out = Map::new();
        let type_ = match auth.type_ {
            SchemaRegistryAuthenticationType::Basic => "basic",
            SchemaRegistryAuthenticationType::Bearer => "bearer",
        };
        out.insert("type".into(), json!(type_));
        if let Some(username) = &auth.username {
            out.insert("username".into(), json!(username));
        }
        if let Some(password) = &auth.password_secret {
            out.insert(
                "passwordFile".into(),
                json!(format!("{REGISTRY_DIR}/password/{}", password.password)),
            );
        }
        if let Some(token) = &auth.token_secret {
            out.insert(
                "tokenFile".into(),
                json!(format!("{REGISTRY_DIR}/token/{}", token.key)),
            );
        }
        fields.insert("authentication".into(), Value::Object(out));
    }
    fields
}

#[cfg(test)]
mod tests;
