//! `spec.schemaRegistry`: the Confluent-compatible schema registry the Avro encoding
//! (`spec.format.encoding: avro`) registers and looks up its schemas in. The fields are named
//! after the Confluent serializer settings they stand for (`schema.registry.url`,
//! `*.subject.name.strategy`, `auto.register.schemas`, `basic.auth.*`, `bearer.auth.*`); TLS
//! trust takes the same type as `spec.kafka.tls`, so a Strimzi cluster CA Secret serves both.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::kafka_auth::{GenericSecretSource, KafkaTlsSpec, PasswordSecretSource};

/// `spec.schemaRegistry`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("!has(self.tls) || self.url.startsWith('https://')").message(REGISTRY_TLS_NEEDS_HTTPS).field_path(".tls"))]
pub struct SchemaRegistrySpec {
    /// The root of the registry's Confluent-compatible API: `http://registry:8081` for
    /// Confluent's, `https://registry:8080/apis/ccompat/v7` for Apicurio's. With `tls`, https.
    #[schemars(length(min = 1, max = 2048))]
    #[x_kube(validation = kube::core::Rule::new("self.matches('^https?://[^\\\\s?#]+$')").message("spec.schemaRegistry.url must be an http:// or https:// URL without query or fragment"))]
    pub url: String,

    /// How subjects are named (Confluent's `key.subject.name.strategy` and
    /// `value.subject.name.strategy`): `TopicName` (`<topic>-key`, `<topic>-value`),
    /// `RecordName` (the record's full name) or `TopicRecordName` (`<topic>-<full name>`).
    #[serde(default)]
    pub subject_name_strategy: SubjectNameStrategy,

    /// Register schemas the subject does not have yet (Confluent's `auto.register.schemas`).
    /// `false`: look them up only; a schema the pipeline owner has not registered stops the
    /// capture (CDC-6004).
    #[serde(default = "default_true")]
    pub auto_register: bool,

    /// TLS to the registry: the CA certificates its certificate is checked against. Unset or
    /// empty: the image's system CA store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<KafkaTlsSpec>,

    /// How the capture proves who it is to the registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<SchemaRegistryAuthenticationSpec>,
}

fn default_true() -> bool {
    true
}

/// The rule tying `tls` to an https URL.
pub const REGISTRY_TLS_NEEDS_HTTPS: &str =
    "spec.schemaRegistry.tls needs an https:// spec.schemaRegistry.url";

/// Confluent's subject name strategies (`io.confluent.kafka.serializers.subject.*Strategy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum SubjectNameStrategy {
    /// `<topic>-key` and `<topic>-value`: one schema lineage per topic.
    #[default]
    TopicName,
    /// The record's full name (`namespace.name`): one lineage per record type, across topics.
    RecordName,
    /// `<topic>-<full name>`: one lineage per record type and topic.
    TopicRecordName,
}

/// How the capture signs in to the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SchemaRegistryAuthenticationType {
    /// HTTP Basic with a user name and password (Confluent's `basic.auth.user.info`).
    Basic,
    /// A bearer token (Confluent's `bearer.auth.token`), sent as `Authorization: Bearer`.
    Bearer,
}

/// `spec.schemaRegistry.authentication`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("(self.type == 'basic') == has(self.username)").message("spec.schemaRegistry.authentication.username is required with type basic and not allowed with bearer").field_path(".username"))]
#[x_kube(validation = kube::core::Rule::new("(self.type == 'basic') == has(self.passwordSecret)").message("spec.schemaRegistry.authentication.passwordSecret is required with type basic and not allowed with bearer").field_path(".passwordSecret"))]
#[x_kube(validation = kube::core::Rule::new("(self.type == 'bearer') == has(self.tokenSecret)").message("spec.schemaRegistry.authentication.tokenSecret is required with type bearer and not allowed with basic").field_path(".tokenSecret"))]
pub struct SchemaRegistryAuthenticationSpec {
    /// `basic` or `bearer`.
    #[serde(rename = "type")]
    pub type_: SchemaRegistryAuthenticationType,

    /// With `basic`: the user name (no `:`, which HTTP Basic uses to end it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    #[schemars(regex(pattern = r"^[^:]+$"))]
    pub username: Option<String>,

    /// With `basic`: the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_secret: Option<PasswordSecretSource>,

    /// With `bearer`: the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_secret: Option<GenericSecretSource>,
}
