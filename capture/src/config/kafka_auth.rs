//! `kafka.tls` and `kafka.authentication` in the capture config: the spec's fields
//! (`spec.kafka.tls`, `spec.kafka.authentication`, see `redoline_crds::v1alpha1`), with each Secret
//! reference replaced by the file that holds the value. The operator mounts the Secrets and
//! writes their paths here (`operator/src/build/kafka_credentials.rs`); a local run names its
//! own files. Values are read from the files when the Kafka client is made, never stored in the
//! config.
//!
//! | spec | config |
//! |---|---|
//! | `certificateAndKey: {secretName, certificate, key}` | `certificateAndKey: {certificate, key}` (paths) |
//! | `passwordSecret: {secretName, password}` | `passwordFile` |
//! | `clientSecret: {secretName, key}` | `clientSecretFile` |
//! | `keytabSecret: {secretName, key}` | `keytabFile` |
//! | `krb5Config` | none: the `KRB5_CONFIG` environment variable (read by the Kerberos library) |
//! | `{secretName, certificate}` | `{certificate}` (a path) |
//! | `{secretName, pattern}` | `{pattern}`: a directory and a glob over its file names, `/dir/*.crt` |
//!
//! The CRD's rules on these fields are evaluated with the spec's names given back
//! ([`super::crd_rules::COUNTERPARTS`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use redoline_crds::v1alpha1::KafkaAuthenticationType;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `kafka.tls`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaTlsConfig {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub trusted_certificates: Vec<TrustedCertificateFiles>,
}

/// PEM certificates: one file, or the files of a directory whose names match a glob.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrustedCertificateFiles {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<PathBuf>,
    /// A directory followed by a glob over file names (`*` and `?`): `/certs/*.crt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<PathBuf>,
}

impl TrustedCertificateFiles {
    /// Makes the certificate or pattern path absolute with `resolve`.
    pub(super) fn resolve_paths(&mut self, resolve: &dyn Fn(&mut PathBuf)) {
        self.certificate.iter_mut().for_each(resolve);
        self.pattern.iter_mut().for_each(resolve);
    }
}

/// `kafka.authentication`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaAuthenticationConfig {
    #[serde(rename = "type")]
    pub type_: KafkaAuthenticationType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_and_key: Option<CertAndKeyFiles>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    pub token_endpoint_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sasl_extensions: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub tls_trusted_certificates: Vec<TrustedCertificateFiles>,
    /// Letters, digits and `._-/@`: librdkafka hands it to `kinit` through a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    #[schemars(regex(pattern = r"^[A-Za-z0-9._/-]+(@[A-Za-z0-9._-]+)?$"))]
    pub principal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keytab_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub service_name: Option<String>,
}

/// A client certificate and its key, PEM files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CertAndKeyFiles {
    pub certificate: PathBuf,
    pub key: PathBuf,
}
