//! `schemaRegistry` in the capture config: the spec's `spec.schemaRegistry`
//! (`redoline_crds::v1alpha1::SchemaRegistrySpec`) with each Secret reference replaced by the
//! file that holds the value, as [`super::kafka_auth`] does for Kafka. The operator mounts the
//! Secrets under `/var/run/secrets/redoline/schema-registry/` and writes the paths here
//! (`operator/src/build/kafka_credentials.rs`); a local run names its own files. The files are
//! read when the registry client is made ([`crate::registry::http`]), never stored in the config.
//! The other fields repeat the spec's, with its bounds (see [`super`] for why they are not
//! embedded, and the test that holds them to the CRD's).
//!
//! | spec | config |
//! |---|---|
//! | `tls.trustedCertificates: [{secretName, certificate}]` | `[{certificate}]` (a path) |
//! | `tls.trustedCertificates: [{secretName, pattern}]` | `[{pattern}]`: `/dir/*.crt` |
//! | `authentication.passwordSecret: {secretName, password}` | `authentication.passwordFile` |
//! | `authentication.tokenSecret: {secretName, key}` | `authentication.tokenFile` |

use std::path::PathBuf;

use redoline_crds::v1alpha1::{SchemaRegistryAuthenticationType, SubjectNameStrategy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::kafka_auth::KafkaTlsConfig;

/// `schemaRegistry`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchemaRegistryConfig {
    /// The root of the registry's Confluent-compatible API.
    #[schemars(length(min = 1, max = 2048))]
    pub url: String,
    #[serde(default)]
    pub subject_name_strategy: SubjectNameStrategy,
    #[serde(default = "default_true")]
    pub auto_register: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<KafkaTlsConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<RegistryAuthenticationConfig>,
}

fn default_true() -> bool {
    true
}

/// `schemaRegistry.authentication`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistryAuthenticationConfig {
    #[serde(rename = "type")]
    pub type_: SchemaRegistryAuthenticationType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
}

impl SchemaRegistryConfig {
    /// Makes every credential file path absolute with `resolve`.
    pub(super) fn resolve_relative_paths(&mut self, resolve: &dyn Fn(&mut PathBuf)) {
        if let Some(tls) = &mut self.tls {
            for entry in &mut tls.trusted_certificates {
                entry.resolve_paths(resolve);
            }
        }
        if let Some(auth) = &mut self.authentication {
            auth.password_file.iter_mut().for_each(resolve);
            auth.token_file.iter_mut().for_each(resolve);
        }
    }

    /// The capture's rules of `schemaRegistry` (the CRD's CEL rules are evaluated from the CRD,
    /// [`super::crd_rules`]): certificate patterns are paths here, and the user name's
    /// pattern, which the CRD's schema holds (`^[^:]+$`) and the config's schema does not.
    pub(super) fn rules(&self) -> Result<(), ConfigError> {
        if let Some(tls) = &self.tls {
            super::validate::certificate_patterns(
                "schemaRegistry.tls.trustedCertificates",
                &tls.trusted_certificates,
            )?;
        }
        if self
            .authentication
            .as_ref()
            .and_then(|auth| auth.username.as_deref())
            .is_some_and(|name| name.contains(':'))
        {
            return Err(ConfigError::new(
                "schemaRegistry.authentication.username",
                "must not hold ':', which ends the user name in HTTP Basic",
            ));
        }
        Ok(())
    }
}
