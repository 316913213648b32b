//! The credentials of `spec.kafka.tls` and `spec.kafka.authentication` in the capture pod: one
//! volume per referenced Secret (or the krb5.conf ConfigMap), the paths the capture config names,
//! and `KRB5_CONFIG`.
//!
//! - Each Secret is mounted under `/var/run/secrets/redoline/kafka-tls/<n>/` (the n-th trusted
//!   certificate) or `/var/run/secrets/redoline/kafka-auth/<purpose>/`, every file named as its
//!   key, so a Strimzi KafkaUser Secret shows up as `user.crt` and `user.key`.
//! - Only the named keys are projected (`items`): a key missing from the Secret then fails the
//!   mount, which the kubelet reports as a `FailedMount` event naming the key, before the capture
//!   starts. A `pattern` mounts the whole Secret, since which keys match is known only to the
//!   capture (it globs the directory).
//! - The paths go into the rendered capture config ([`config_fields`]), in place of the Secret
//!   references (the config never names a Secret); the pod changes when a reference does.
//! - `KRB5_CONFIG` is set on the containers, not by the capture: the Kerberos library reads it
//!   from the environment, which the capture must not change once its threads run.

use k8s_openapi::api::core::v1::{ConfigMapVolumeSource, KeyToPath, Volume, VolumeMount};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::CertSecretSource;

use super::SecretVolume;
use super::statefulset::secret_volume;
use serde_json::{Map, Value, json};

/// Where the trusted certificates of `spec.kafka.tls` are mounted, one directory each.
pub const KAFKA_TLS_DIR: &str = "/var/run/secrets/redoline/kafka-tls";
/// Where the credentials of `spec.kafka.authentication` are mounted, one directory each.
pub const KAFKA_AUTH_DIR: &str = "/var/run/secrets/redoline/kafka-auth";

/// What the pod needs for a set of the capture's credentials (Kafka's here, the schema
/// registry's in `registry_credentials`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MountedCredentials {
    pub volumes: Vec<Volume>,
    pub mounts: Vec<VolumeMount>,
    pub env: Vec<(&'static str, String)>,
    /// The Secret volumes among `volumes`, with the spec fields naming them, for the status of a
    /// failed mount.
    pub secret_volumes: Vec<SecretVolume>,
}

impl MountedCredentials {
    /// A Secret volume at `dir`, with only `keys` projected (all keys when empty), each file
    /// named as its key; `field` names the Secret in the spec and `keys` pairs each key with
    /// the field naming it.
    pub(super) fn secret(
        &mut self,
        volume: String,
        secret: &str,
        field: String,
        keys: &[(&str, String)],
        dir: &str,
    ) {
        let items = (!keys.is_empty()).then(|| keys.iter().map(|(key, _)| item(key)).collect());
        let known = keys.iter().fold(
            SecretVolume::new(volume.clone(), secret, field),
            |known, (key, field)| known.key(key, field.clone()),
        );
        self.secret_volumes.push(known);
        self.volumes.push(secret_volume(&volume, secret, items));
        self.mount(volume, dir);
    }

    fn mount(&mut self, volume: String, dir: &str) {
        self.mounts.push(VolumeMount {
            name: volume,
            mount_path: dir.into(),
            read_only: Some(true),
            ..VolumeMount::default()
        });
    }
}

fn item(key: &str) -> KeyToPath {
    KeyToPath {
        key: key.into(),
        path: key.into(),
        mode: None,
    }
}

/// The volumes, mounts and environment for `spec.kafka.tls` and `spec.kafka.authentication`.
pub fn build(capture: &OracleCapture) -> MountedCredentials {
    let kafka = &capture.spec.kafka;
    let mut out = MountedCredentials::default();
    if let Some(tls) = &kafka.tls {
        for (index, source) in tls.trusted_certificates.iter().enumerate() {
            let dir = format!("{KAFKA_TLS_DIR}/{index}");
            let field = format!("spec.kafka.tls.trustedCertificates[{index}]");
            trusted(&mut out, format!("kafka-tls-{index}"), source, field, &dir);
        }
    }
    let Some(auth) = &kafka.authentication else {
        return out;
    };
    if let Some(pair) = &auth.certificate_and_key {
        const FIELD: &str = "spec.kafka.authentication.certificateAndKey";
        out.secret(
            "kafka-auth-cert-and-key".into(),
            &pair.secret_name,
            FIELD.into(),
            &[
                (&pair.certificate, format!("{FIELD}.certificate")),
                (&pair.key, format!("{FIELD}.key")),
            ],
            &format!("{KAFKA_AUTH_DIR}/certificate-and-key"),
        );
    }
    if let Some(password) = &auth.password_secret {
        out.secret(
            "kafka-auth-password".into(),
            &password.secret_name,
            "spec.kafka.authentication.passwordSecret".into(),
            &[(
                &password.password,
                "spec.kafka.authentication.passwordSecret.password".into(),
            )],
            &format!("{KAFKA_AUTH_DIR}/password"),
        );
    }
    if let Some(secret) = &auth.client_secret {
        out.secret(
            "kafka-auth-client-secret".into(),
            &secret.secret_name,
            "spec.kafka.authentication.clientSecret".into(),
            &[(
                &secret.key,
                "spec.kafka.authentication.clientSecret.key".into(),
            )],
            &format!("{KAFKA_AUTH_DIR}/client-secret"),
        );
    }
    for (index, source) in auth.tls_trusted_certificates.iter().enumerate() {
        let dir = format!("{KAFKA_AUTH_DIR}/tls-trusted/{index}");
        let field = format!("spec.kafka.authentication.tlsTrustedCertificates[{index}]");
        trusted(
            &mut out,
            format!("kafka-auth-tls-{index}"),
            source,
            field,
            &dir,
        );
    }
    if let Some(keytab) = &auth.keytab_secret {
        out.secret(
            "kafka-auth-keytab".into(),
            &keytab.secret_name,
            "spec.kafka.authentication.keytabSecret".into(),
            &[(
                &keytab.key,
                "spec.kafka.authentication.keytabSecret.key".into(),
            )],
            &format!("{KAFKA_AUTH_DIR}/keytab"),
        );
    }
    if let Some(krb5) = &auth.krb5_config {
        let dir = format!("{KAFKA_AUTH_DIR}/krb5");
        let volume = "kafka-auth-krb5".to_owned();
        if let Some(config_map) = &krb5.config_map_name {
            out.volumes.push(Volume {
                name: volume.clone(),
                config_map: Some(ConfigMapVolumeSource {
                    name: config_map.clone(),
                    items: Some(vec![item(&krb5.key)]),
                    default_mode: Some(0o444),
                    optional: Some(false),
                }),
                ..Volume::default()
            });
            out.mount(volume, &dir);
        } else if let Some(secret) = &krb5.secret_name {
            const FIELD: &str = "spec.kafka.authentication.krb5Config";
            let key = [(krb5.key.as_str(), format!("{FIELD}.key"))];
            out.secret(volume, secret, FIELD.into(), &key, &dir);
        }
        out.env.push(("KRB5_CONFIG", format!("{dir}/{}", krb5.key)));
    }
    out
}

/// Mounts the Secret of one trusted certificate entry at `dir`: its one key, or every key for a
/// `pattern`.
pub(super) fn trusted(
    out: &mut MountedCredentials,
    volume: String,
    source: &CertSecretSource,
    field: String,
    dir: &str,
) {
    let keys: Vec<(&str, String)> = source
        .certificate
        .iter()
        .map(|key| (key.as_str(), format!("{field}.certificate")))
        .collect();
    out.secret(volume, &source.secret_name, field, &keys, dir);
}

/// The config's entry for one trusted certificate mounted at `dir`.
pub(super) fn trusted_config(source: &CertSecretSource, dir: &str) -> Value {
    match (&source.certificate, &source.pattern) {
        (Some(key), _) => json!({"certificate": format!("{dir}/{key}")}),
        (None, Some(pattern)) => json!({"pattern": format!("{dir}/{pattern}")}),
        // Refused by the CRD's rule (exactly one of the two).
        (None, None) => json!({}),
    }
}

/// `kafka.tls` and `kafka.authentication` of the capture config: the spec's fields with each
/// Secret reference replaced by the path [`build`] mounts it at. Written over the spec's own
/// fields in the rendered config.
pub fn config_fields(capture: &OracleCapture) -> Map<String, Value> {
    let kafka = &capture.spec.kafka;
    let mut fields = Map::new();
    if let Some(tls) = &kafka.tls {
        let certificates: Vec<Value> = tls
            .trusted_certificates
            .iter()
            .enumerate()
            .map(|(index, source)| trusted_config(source, &format!("{KAFKA_TLS_DIR}/{index}")))
            .collect();
        let mut tls = Map::new();
        if !certificates.is_empty() {
            tls.insert("trustedCertificates".into(), Value::Array(certificates));
        }
        fields.insert("tls".into(), Value::Object(tls));
    }
    let Some(auth) = &kafka.authentication else {
        return fields;
    };
    let mut out = Map::new();
    out.insert("type".into(), json!(auth.type_.as_str()));
    if let Some(pair) = &auth.certificate_and_key {
        let dir = format!("{KAFKA_AUTH_DIR}/certificate-and-key");
        out.insert(
            "certificateAndKey".into(),
            json!({
                "certificate": format!("{dir}/{}", pair.certificate),
                "key": format!("{dir}/{}", pair.key),
            }),
        );
    }
    let mut text = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            out.insert(name.into(), json!(value));
        }
    };
    text("username", &auth.username);
    text("clientId", &auth.client_id);
    text("tokenEndpointUri", &auth.token_endpoint_uri);
    text("scope", &auth.scope);
    text("principal", &auth.principal);
    text("serviceName", &auth.service_name);
    if let Some(password) = &auth.password_secret {
        out.insert(
            "passwordFile".into(),
            json!(format!("{KAFKA_AUTH_DIR}/password/{}", password.password)),
        );
    }
    if let Some(secret) = &auth.client_secret {
        out.insert(
            "clientSecretFile".into(),
            json!(format!("{KAFKA_AUTH_DIR}/client-secret/{}", secret.key)),
        );
    }
    if !auth.sasl_extensions.is_empty() {
        out.insert("saslExtensions".into(), json!(auth.sasl_extensions));
    }
    if !auth.tls_trusted_certificates.is_empty() {
        let certificates: Vec<Value> = auth
            .tls_trusted_certificates
            .iter()
            .enumerate()
            .map(|(index, source)| {
                trusted_config(source, &format!("{KAFKA_AUTH_DIR}/tls-trusted/{index}"))
            })
            .collect();
        out.insert("tlsTrustedCertificates".into(), Value::Array(certificates));
    }
    if let Some(keytab) = &auth.keytab_secret {
        out.insert(
            "keytabFile".into(),
            json!(format!("{KAFKA_AUTH_DIR}/keytab/{}", keytab.key)),
        );
    }
    fields.insert("authentication".into(), Value::Object(out));
    fields
}

#[cfg(test)]
mod tests;
