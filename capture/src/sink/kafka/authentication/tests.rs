use super::*;
use crate::config::{self, CaptureConfig};

/// A capture config with a Kafka sink carrying `kafka` (the rest of the `kafka:` block).
fn config(kafka: &str) -> CaptureConfig {
    let text = format!(
        "name: demo\n\
         database: {{simulator: {{scenario: s.jsonl}}}}\n\
         tables: [SALES.ORDERS]\n\
         kafka: {{bootstrapServers: 'b:9092', topicPrefix: x, {kafka}}}\n"
    );
    config::parse(&text, &[]).unwrap_or_else(|e| panic!("{kafka}: {e}"))
}

/// The Kafka sink settings of a capture config whose `kafka:` block adds `kafka` (the client
/// settings' tests read them too, `kafka::config`).
pub(in crate::sink::kafka) fn kafka(kafka: &str) -> KafkaConfig {
    config(kafka).kafka.unwrap()
}

/// The mapping as (name, value) pairs, file contents shown as `file:<path>`.
fn mapped(kafka_block: &str) -> Vec<(&'static str, String)> {
    properties(&kafka(kafka_block))
        .into_iter()
        .map(|p| {
            let value = match p.value {
                PropertyValue::Text(text) => text,
                PropertyValue::FileText(path) => format!("file:{}", path.display()),
                PropertyValue::Certificates(list) => format!("certificates:{}", list.len()),
            };
            (p.name, value)
        })
        .collect()
}

fn pairs(expected: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    expected
        .iter()
        .map(|(n, v)| (*n, (*v).to_owned()))
        .collect()
}

#[test]
fn without_tls_or_authentication_nothing_is_set() {
    assert!(mapped("exactlyOnce: true").is_empty());
}

#[test]
fn each_type_maps_to_its_librdkafka_properties() {
    assert_eq!(mapped("tls: {}"), pairs(&[("security.protocol", "ssl")]));
    assert_eq!(
        mapped("tls: {trustedCertificates: [{certificate: /c/ca.crt}, {pattern: '/d/*.crt'}]}"),
        pairs(&[
            ("security.protocol", "ssl"),
            ("ssl.ca.pem", "certificates:2")
        ])
    );
    assert_eq!(
        mapped(
            "tls: {}, authentication: {type: tls, certificateAndKey: \
             {certificate: /u/user.crt, key: /u/user.key}}"
        ),
        pairs(&[
            ("security.protocol", "ssl"),
            ("ssl.certificate.location", "/u/user.crt"),
            ("ssl.key.location", "/u/user.key"),
        ])
    );
    for (type_, mechanism) in [
        ("scram-sha-256", "SCRAM-SHA-256"),
        ("scram-sha-512", "SCRAM-SHA-512"),
        ("plain", "PLAIN"),
    ] {
        let auth = format!(
            "authentication: {{type: {type_}, username: capture, passwordFile: /p/password}}"
        );
        assert_eq!(
            mapped(&auth),
            pairs(&[
                ("security.protocol", "sasl_plaintext"),
                ("sasl.mechanism", mechanism),
                ("sasl.username", "capture"),
                ("sasl.password", "file:/p/password"),
            ])
        );
        assert_eq!(
            mapped(&format!("tls: {{}}, {auth}"))[0],
            ("security.protocol", "sasl_ssl".to_owned())
        );
    }
    assert_eq!(
        mapped(
            "tls: {}, authentication: {type: oauth, clientId: capture, clientSecretFile: /o/secret, \
             tokenEndpointUri: 'https://idp/token', scope: kafka, \
             saslExtensions: {logicalCluster: lkc-1, identityPoolId: pool-2}, \
             tlsTrustedCertificates: [{certificate: /o/ca.crt}]}"
        ),
        pairs(&[
            ("security.protocol", "sasl_ssl"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("sasl.oauthbearer.method", "oidc"),
            ("sasl.oauthbearer.client.id", "capture"),
            ("sasl.oauthbearer.client.secret", "file:/o/secret"),
            ("sasl.oauthbearer.token.endpoint.url", "https://idp/token"),
            ("sasl.oauthbearer.scope", "kafka"),
            (
                "sasl.oauthbearer.extensions",
                "identityPoolId=pool-2,logicalCluster=lkc-1"
            ),
            ("https.ca.pem", "certificates:1"),
        ])
    );
    let gssapi = |extra: &str| {
        mapped(&format!(
            "authentication: {{type: gssapi, principal: capture@EXAMPLE.COM, \
             keytabFile: /k/capture.keytab{extra}}}"
        ))
    };
    assert_eq!(
        gssapi(""),
        pairs(&[
            ("security.protocol", "sasl_plaintext"),
            ("sasl.mechanism", "GSSAPI"),
            ("sasl.kerberos.service.name", "kafka"),
            ("sasl.kerberos.principal", "capture@EXAMPLE.COM"),
            ("sasl.kerberos.keytab", "/k/capture.keytab"),
            ("sasl.kerberos.kinit.cmd", KINIT_COMMAND),
        ])
    );
    assert_eq!(
        gssapi(", serviceName: broker")[2],
        ("sasl.kerberos.service.name", "broker".to_owned())
    );
}

#[test]
fn every_mapped_property_is_one_configsecret_cannot_also_set() {
    let all = [
        "tls: {trustedCertificates: [{certificate: /c}]}, authentication: {type: tls, certificateAndKey: {certificate: /a, key: /b}}",
        "authentication: {type: plain, username: u, passwordFile: /p}",
        "authentication: {type: oauth, clientId: c, clientSecretFile: /s, tokenEndpointUri: 'http://i/t', scope: s, saslExtensions: {a: b}, tlsTrustedCertificates: [{certificate: /c}]}",
        "authentication: {type: gssapi, principal: p, keytabFile: /k}",
    ];
    for block in all {
        for property in properties(&kafka(block)) {
            assert!(
                conflicting_properties(property.name).contains(&property.name),
                "{}",
                property.name
            );
        }
    }
}
