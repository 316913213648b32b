//! `kafka.tls` and `kafka.authentication` as librdkafka properties (librdkafka's
//! CONFIGURATION.md names each). Pure: this module says which property takes which value and
//! where the value comes from; [`super::config`] reads the files.
//!
//! | spec | librdkafka |
//! |---|---|
//! | `tls` | `security.protocol` `ssl` (`sasl_ssl` with a SASL type) |
//! | `tls.trustedCertificates` | `ssl.ca.pem`: every certificate, concatenated (librdkafka adds each PEM block of the string to the trust store) |
//! | no `tls`, a SASL type | `security.protocol` `sasl_plaintext` |
//! | `tls` type | `ssl.certificate.location`, `ssl.key.location`: the mounted files |
//! | `scram-sha-256`, `scram-sha-512`, `plain` | `sasl.mechanism` `SCRAM-SHA-256`, `SCRAM-SHA-512`, `PLAIN`; `sasl.username`; `sasl.password` from its file |
//! | `oauth` | `sasl.mechanism` `OAUTHBEARER`, `sasl.oauthbearer.method` `oidc`, `.client.id`, `.client.secret` from its file, `.token.endpoint.url`, `.scope`, `.extensions`; `https.ca.pem` from `tlsTrustedCertificates` |
//! | `gssapi` | `sasl.mechanism` `GSSAPI`, `sasl.kerberos.service.name` (`kafka` unless set), `.principal`, `.keytab`, `.kinit.cmd` |
//!
//! Each property remembers the spec field it comes from, so a `configSecret` key setting the same
//! property (or one librdkafka treats as the same: an alias, or the other form of a certificate
//! or key) is refused naming both fields ([`conflicting_properties`]).

use std::path::PathBuf;

use redoline_crds::v1alpha1::KafkaAuthenticationType;

use crate::config::KafkaConfig;
use crate::config::kafka_auth::TrustedCertificateFiles;

/// Where a property's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropertyValue {
    /// The value itself.
    Text(String),
    /// The text of a file: a mounted Secret key holding a password or a client secret.
    FileText(PathBuf),
    /// PEM certificates from these files, concatenated into one string.
    Certificates(Vec<TrustedCertificateFiles>),
}

/// One librdkafka property set from the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    pub name: &'static str,
    pub value: PropertyValue,
    /// The spec field it comes from, for messages.
    pub field: &'static str,
}

/// The kinit command: a fresh ticket from the keytab, both substitutions quoted for the shell
/// librdkafka runs it with. librdkafka's default first tries `kinit -R` (renewing the ticket in
/// the cache), which fails on the first start and adds nothing when a keytab is at hand.
pub const KINIT_COMMAND: &str =
    r#"kinit -t "%{sasl.kerberos.keytab}" -k "%{sasl.kerberos.principal}""#;

/// The brokers' Kerberos service name when `serviceName` is unset (Kafka's and librdkafka's
/// default).
pub const DEFAULT_KERBEROS_SERVICE: &str = "kafka";

/// The properties for the config's `tls` and `authentication`, in a stable order. Empty when
/// neither is set: `configSecret` alone decides then, as before these fields existed.
pub fn properties(kafka: &KafkaConfig) -> Vec<Property> {
    let mut out = Vec::new();
    let text = |value: &str| PropertyValue::Text(value.to_owned());
    let auth = kafka.authentication.as_ref();
    let sasl = auth.is_some_and(|a| a.type_ != KafkaAuthenticationType::Tls);
    let protocol = match (&kafka.tls, sasl) {
        (Some(_), true) => Some(("sasl_ssl", "spec.kafka.tls")),
        (Some(_), false) => Some(("ssl", "spec.kafka.tls")),
        (None, true) => Some(("sasl_plaintext", "spec.kafka.authentication")),
        // A tls type without spec.kafka.tls is refused by the validation before this runs.
        (None, false) => None,
    };
    if let Some((protocol, field)) = protocol {
        out.push(Property {
            name: "security.protocol",
            value: text(protocol),
            field,
        });
    }
    if let Some(tls) = &kafka.tls
        && !tls.trusted_certificates.is_empty()
    {
        out.push(Property {
            name: "ssl.ca.pem",
            value: PropertyValue::Certificates(tls.trusted_certificates.clone()),
            field: "spec.kafka.tls.trustedCertificates",
        });
    }
    let Some(auth) = auth else {
        return out;
    };
    let mut push = |name: &'static str, value: PropertyValue, field: &'static str| {
        out.push(Property { name, value, field });
    };
    let mechanism = match auth.type_ {
        KafkaAuthenticationType::Tls => None,
        KafkaAuthenticationType::ScramSha256 => Some("SCRAM-SHA-256"),
        KafkaAuthenticationType::ScramSha512 => Some("SCRAM-SHA-512"),
        KafkaAuthenticationType::Plain => Some("PLAIN"),
        KafkaAuthenticationType::Oauth => Some("OAUTHBEARER"),
        KafkaAuthenticationType::Gssapi => Some("GSSAPI"),
    };
    if let Some(mechanism) = mechanism {
        push(
            "sasl.mechanism",
            text(mechanism),
            "spec.kafka.authentication.type",
        );
    }
    if let Some(pair) = &auth.certificate_and_key {
        let field = "spec.kafka.authentication.certificateAndKey";
        let path = |path: &PathBuf| PropertyValue::Text(path.display().to_string());
        push("ssl.certificate.location", path(&pair.certificate), field);
        push("ssl.key.location", path(&pair.key), field);
    }
    if let Some(username) = &auth.username {
        push(
            "sasl.username",
            text(username),
            "spec.kafka.authentication.username",
        );
    }
    if let Some(file) = &auth.password_file {
        push(
            "sasl.password",
            PropertyValue::FileText(file.clone()),
            "spec.kafka.authentication.passwordSecret",
        );
    }
    if auth.type_ == KafkaAuthenticationType::Oauth {
        push(
            "sasl.oauthbearer.method",
            text("oidc"),
            "spec.kafka.authentication.type",
        );
    }
    if let Some(id) = &auth.client_id {
        push(
            "sasl.oauthbearer.client.id",
            text(id),
            "spec.kafka.authentication.clientId",
        );
    }
    if let Some(file) = &auth.client_secret_file {
        push(
            "sasl.oauthbearer.client.secret",
            PropertyValue::FileText(file.clone()),
            "spec.kafka.authentication.clientSecret",
        );
    }
    if let Some(uri) = &auth.token_endpoint_uri {
        push(
            "sasl.oauthbearer.token.endpoint.url",
            text(uri),
            "spec.kafka.authentication.tokenEndpointUri",
        );
    }
    if let Some(scope) = &auth.scope {
        push(
            "sasl.oauthbearer.scope",
            text(scope),
            "spec.kafka.authentication.scope",
        );
    }
    if !auth.sasl_extensions.is_empty() {
        let pairs: Vec<String> = auth
            .sasl_extensions
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        push(
            "sasl.oauthbearer.extensions",
            PropertyValue::Text(pairs.join(",")),
            "spec.kafka.authentication.saslExtensions",
        );
    }
    if !auth.tls_trusted_certificates.is_empty() {
        push(
            "https.ca.pem",
            PropertyValue::Certificates(auth.tls_trusted_certificates.clone()),
            "spec.kafka.authentication.tlsTrustedCertificates",
        );
    }
    if auth.type_ == KafkaAuthenticationType::Gssapi {
        push(
            "sasl.kerberos.service.name",
            text(
                auth.service_name
                    .as_deref()
                    .unwrap_or(DEFAULT_KERBEROS_SERVICE),
            ),
            "spec.kafka.authentication.serviceName",
        );
        if let Some(principal) = &auth.principal {
            push(
                "sasl.kerberos.principal",
                text(principal),
                "spec.kafka.authentication.principal",
            );
        }
        if let Some(keytab) = &auth.keytab_file {
            push(
                "sasl.kerberos.keytab",
                PropertyValue::Text(keytab.display().to_string()),
                "spec.kafka.authentication.keytabSecret",
            );
        }
        push(
            "sasl.kerberos.kinit.cmd",
            text(KINIT_COMMAND),
            "spec.kafka.authentication.keytabSecret",
        );
    }
    out
}

/// The `configSecret` properties that would set the same thing as `name` does: itself, its
/// librdkafka aliases, and the other forms of the same certificate, key or CA (librdkafka takes
/// one form of each).
pub fn conflicting_properties(name: &str) -> &'static [&'static str] {
    match name {
        "security.protocol" => &["security.protocol"],
        "sasl.mechanism" => &["sasl.mechanism", "sasl.mechanisms"],
        "ssl.ca.pem" => &["ssl.ca.pem", "ssl.ca.location"],
        "ssl.certificate.location" => &[
            "ssl.certificate.location",
            "ssl.certificate.pem",
            "ssl.keystore.location",
        ],
        "ssl.key.location" => &["ssl.key.location", "ssl.key.pem", "ssl.keystore.location"],
        "sasl.username" => &["sasl.username"],
        "sasl.password" => &["sasl.password"],
        "sasl.oauthbearer.method" => &["sasl.oauthbearer.method"],
        "sasl.oauthbearer.client.id" => &[
            "sasl.oauthbearer.client.id",
            "sasl.oauthbearer.client.credentials.client.id",
        ],
        "sasl.oauthbearer.client.secret" => &[
            "sasl.oauthbearer.client.secret",
            "sasl.oauthbearer.client.credentials.client.secret",
        ],
        "sasl.oauthbearer.token.endpoint.url" => &["sasl.oauthbearer.token.endpoint.url"],
        "sasl.oauthbearer.scope" => &["sasl.oauthbearer.scope"],
        "sasl.oauthbearer.extensions" => &["sasl.oauthbearer.extensions"],
        "https.ca.pem" => &["https.ca.pem", "https.ca.location"],
        "sasl.kerberos.service.name" => &["sasl.kerberos.service.name"],
        "sasl.kerberos.principal" => &["sasl.kerberos.principal"],
        "sasl.kerberos.keytab" => &["sasl.kerberos.keytab"],
        "sasl.kerberos.kinit.cmd" => &["sasl.kerberos.kinit.cmd"],
        _ => &[],
    }
}

#[cfg(test)]
pub(super) mod tests;
