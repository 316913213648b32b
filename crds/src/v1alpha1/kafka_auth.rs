//! `spec.kafka.tls` and `spec.kafka.authentication`: how the capture reaches a secured Kafka
//! cluster, in the shape of Strimzi's client types (`ClientTls`, `KafkaClientAuthentication*`,
//! `CertSecretSource`, `CertAndKeySecretSource`, `PasswordSecretSource`, `GenericSecretSource`),
//! so a block written for a Strimzi KafkaConnect or KafkaMirrorMaker2 reads the same here and the
//! Secrets a Strimzi KafkaUser and a Strimzi cluster CA come in are used as they are.
//!
//! Strimzi models each authentication type as a class of its own; a CRD schema is one object, so
//! here the fields of every type sit side by side and CEL rules say which fields each `type`
//! needs and allows (`required_with_type`). `gssapi` is not one of Strimzi's types: its fields
//! (`principal`, `keytabSecret`, `krb5Config`, `serviceName`) are redoline's, named after the
//! librdkafka properties they become.

use std::collections::BTreeMap;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The authentication types, named as Strimzi names them (plus `gssapi`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum KafkaAuthenticationType {
    /// Mutual TLS: a client certificate and key (needs `spec.kafka.tls`).
    Tls,
    /// SASL/SCRAM-SHA-256 with a user name and password.
    #[serde(rename = "scram-sha-256")]
    ScramSha256,
    /// SASL/SCRAM-SHA-512 with a user name and password.
    #[serde(rename = "scram-sha-512")]
    ScramSha512,
    /// SASL/PLAIN with a user name and password (use it over TLS: the password travels as is).
    Plain,
    /// SASL/OAUTHBEARER with tokens from an OIDC token endpoint (client credentials grant).
    Oauth,
    /// SASL/GSSAPI (Kerberos) with a keytab.
    Gssapi,
}

impl KafkaAuthenticationType {
    /// The name in `spec.kafka.authentication.type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tls => "tls",
            Self::ScramSha256 => "scram-sha-256",
            Self::ScramSha512 => "scram-sha-512",
            Self::Plain => "plain",
            Self::Oauth => "oauth",
            Self::Gssapi => "gssapi",
        }
    }

    /// Whether the type signs in with `username` and `passwordSecret`.
    pub fn uses_password(self) -> bool {
        matches!(self, Self::ScramSha256 | Self::ScramSha512 | Self::Plain)
    }
}

/// Which `type` needs which field: each field is required with these types and refused with any
/// other. The CRD's rules are generated from this table (the capture evaluates the same rules).
pub const FIELDS_BY_TYPE: &[(&str, &[KafkaAuthenticationType], bool)] = {
    use KafkaAuthenticationType::*;
    &[
        // (field, types, required with them)
        ("certificateAndKey", &[Tls], true),
        ("username", &[ScramSha256, ScramSha512, Plain], true),
        ("passwordSecret", &[ScramSha256, ScramSha512, Plain], true),
        ("clientId", &[Oauth], true),
        ("clientSecret", &[Oauth], true),
        ("tokenEndpointUri", &[Oauth], true),
        ("scope", &[Oauth], false),
        ("saslExtensions", &[Oauth], false),
        ("tlsTrustedCertificates", &[Oauth], false),
        ("principal", &[Gssapi], true),
        ("keytabSecret", &[Gssapi], true),
        ("krb5Config", &[Gssapi], false),
        ("serviceName", &[Gssapi], false),
    ]
};

/// The message of the rule for `field`.
fn field_rule_message(field: &str, types: &[KafkaAuthenticationType], required: bool) -> String {
    let names: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
    let names = names.join(", ");
    if required {
        format!(
            "spec.kafka.authentication.{field} is required with type {names} and not allowed \
             with any other type"
        )
    } else {
        format!("spec.kafka.authentication.{field} is allowed only with type {names}")
    }
}

fn field_rules() -> serde_json::Value {
    let rules: Vec<serde_json::Value> = FIELDS_BY_TYPE
        .iter()
        .map(|(field, types, required)| {
            let list: Vec<String> = types.iter().map(|t| format!("'{}'", t.as_str())).collect();
            let with_type = format!("self.type in [{}]", list.join(", "));
            let rule = if *required {
                format!("({with_type}) == has(self.{field})")
            } else {
                format!("!has(self.{field}) || ({with_type})")
            };
            serde_json::json!({
                "rule": rule,
                "message": field_rule_message(field, types, *required),
                "fieldPath": format!(".{field}"),
            })
        })
        .collect();
    serde_json::Value::Array(rules)
}

/// `spec.kafka.tls`: TLS to the brokers, and which certificate authorities the capture trusts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaTlsSpec {
    /// The CA certificates the brokers' certificates are checked against, from Secrets (for a
    /// Strimzi cluster: `{secretName: <cluster>-cluster-ca-cert, pattern: "*.crt"}`, which also
    /// takes the old CA while Strimzi renews it). Empty: the image's system CA store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub trusted_certificates: Vec<CertSecretSource>,
}

/// PEM certificates in a Secret: one key (`certificate`) or every key whose name matches a glob
/// (`pattern`, `*` and `?` as in a shell, e.g. `*.crt`). Strimzi's `CertSecretSource`. Keys
/// have the shape Kubernetes allows for Secret keys, which is also a plain file name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("has(self.certificate) != has(self.pattern)").message("set exactly one of certificate and pattern in each trusted certificate"))]
pub struct CertSecretSource {
    /// The Secret's name.
    #[schemars(length(min = 1, max = 253))]
    pub secret_name: String,
    /// The key holding the certificate(s), PEM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[schemars(regex(pattern = r"^[-._a-zA-Z0-9]+$"))]
    pub certificate: Option<String>,
    /// A glob over the Secret's keys: every matching key holds PEM certificates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[schemars(regex(pattern = r"^[-._a-zA-Z0-9*?]+$"))]
    pub pattern: Option<String>,
}

/// `spec.kafka.authentication`: how the capture proves who it is to the brokers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = field_rules()))]
pub struct KafkaAuthenticationSpec {
    /// `tls`, `scram-sha-256`, `scram-sha-512`, `plain`, `oauth` or `gssapi`.
    #[serde(rename = "type")]
    pub type_: KafkaAuthenticationType,

    /// With `tls`: the client certificate and key (a Strimzi KafkaUser Secret: `user.crt` and
    /// `user.key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_and_key: Option<CertAndKeySecretSource>,

    /// With `scram-sha-256`, `scram-sha-512` and `plain`: the user name (a Strimzi KafkaUser's
    /// name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub username: Option<String>,

    /// With `scram-sha-256`, `scram-sha-512` and `plain`: the password (a Strimzi KafkaUser
    /// Secret: key `password`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_secret: Option<PasswordSecretSource>,

    /// With `oauth`: the client id of the client credentials grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub client_id: Option<String>,

    /// With `oauth`: the client secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<GenericSecretSource>,

    /// With `oauth`: the authorization server's token endpoint (http or https).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    #[x_kube(validation = kube::core::Rule::new("self.matches('^https?://[^\\\\s]+$')").message("spec.kafka.authentication.tokenEndpointUri must be an http:// or https:// URL"))]
    pub token_endpoint_uri: Option<String>,

    /// With `oauth`: the scope asked for in the token request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub scope: Option<String>,

    /// With `oauth`: SASL extensions sent to the broker with the token (KIP-342), such as a
    /// Confluent Cloud `logicalCluster` and `identityPoolId`. Not a Strimzi field.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "sasl_extensions_schema")]
    pub sasl_extensions: BTreeMap<String, String>,

    /// With `oauth`: the CA certificates the token endpoint's certificate is checked against.
    /// Empty: the image's system CA store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub tls_trusted_certificates: Vec<CertSecretSource>,

    /// With `gssapi`: the capture's Kerberos principal (`capture@EXAMPLE.COM`, or
    /// `capture/host@EXAMPLE.COM`). Letters, digits and `._-/@` only: librdkafka hands it to
    /// `kinit` through a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    #[schemars(regex(pattern = r"^[A-Za-z0-9._/-]+(@[A-Za-z0-9._-]+)?$"))]
    pub principal: Option<String>,

    /// With `gssapi`: the keytab holding the principal's keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keytab_secret: Option<GenericSecretSource>,

    /// With `gssapi`: the `krb5.conf` naming the realm and its KDCs, from a ConfigMap or a
    /// Secret. Unset: the image's `/etc/krb5.conf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub krb5_config: Option<Krb5ConfigSource>,

    /// With `gssapi`: the brokers' Kerberos service name (their principal's first part).
    /// Unset: `kafka`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = kube::core::Rule::new("self.matches('^[^/@\\\\s]+$')").message("spec.kafka.authentication.serviceName is the principal's first part, without '/' or '@'"))]
    pub service_name: Option<String>,
}

/// librdkafka passes extensions as `name=value,name=value`, and RFC 7628 allows only letters
/// in a name and reserves `auth`. Values are bounded so the rule stays within the apiserver's
/// cost budget.
fn sasl_extensions_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": 20,
        "additionalProperties": {"type": "string", "maxLength": 1024},
        "x-kubernetes-validations": [{
            "rule": "self.all(k, k.matches('^[A-Za-z]{1,64}$') && k != 'auth' && !self[k].contains(',') && !self[k].contains('='))",
            "message": "spec.kafka.authentication.saslExtensions: names are letters only (not 'auth'), values hold no ',' or '='"
        }]
    })
}

/// A client certificate and its private key, PEM, in one Secret (Strimzi's
/// `CertAndKeySecretSource`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CertAndKeySecretSource {
    /// The Secret's name.
    #[schemars(length(min = 1, max = 253))]
    pub secret_name: String,
    /// The key holding the certificate (Strimzi: `user.crt`).
    #[schemars(length(min = 1, max = 253))]
    #[schemars(regex(pattern = r"^[-._a-zA-Z0-9]+$"))]
    pub certificate: String,
    /// The key holding the private key, unencrypted PEM (Strimzi: `user.key`).
    #[schemars(length(min = 1, max = 253))]
    #[schemars(regex(pattern = r"^[-._a-zA-Z0-9]+$"))]
    pub key: String,
}

/// A password in a Secret (Strimzi's `PasswordSecretSource`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordSecretSource {
    /// The Secret's name.
    #[schemars(length(min = 1, max = 253))]
    pub secret_name: String,
    /// The key holding the password (Strimzi: `password`).
    #[schemars(length(min = 1, max = 253))]
    #[schemars(regex(pattern = r"^[-._a-zA-Z0-9]+$"))]
    pub password: String,
}

/// One key of a Secret (Strimzi's `GenericSecretSource`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenericSecretSource {
    /// The Secret's name.
    #[schemars(length(min = 1, max = 253))]
    pub secret_name: String,
    /// The key.
    #[schemars(length(min = 1, max = 253))]
    #[schemars(regex(pattern = r"^[-._a-zA-Z0-9]+$"))]
    pub key: String,
}

/// Where `krb5.conf` comes from: one key of a ConfigMap or of a Secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("has(self.configMapName) != has(self.secretName)").message("spec.kafka.authentication.krb5Config: set exactly one of configMapName and secretName"))]
pub struct Krb5ConfigSource {
    /// The ConfigMap's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub config_map_name: Option<String>,
    /// The Secret's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub secret_name: Option<String>,
    /// The key holding the file.
    #[serde(default = "default_krb5_key")]
    #[schemars(length(min = 1, max = 253))]
    #[schemars(regex(pattern = r"^[-._a-zA-Z0-9]+$"))]
    pub key: String,
}

fn default_krb5_key() -> String {
    "krb5.conf".into()
}

/// The rule on `spec.kafka` tying the authentication to TLS.
pub const TLS_AUTHENTICATION_NEEDS_TLS: &str = "spec.kafka.authentication type tls needs spec.kafka.tls: the client certificate is presented in the TLS handshake";
