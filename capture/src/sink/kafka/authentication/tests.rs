use std::path::{Path, PathBuf};
use std::process::Command;

use redoline_crds::StopCode;

use super::*;
use crate::config::{self, CaptureConfig};
use crate::sink::kafka::config::KafkaClientSettings;

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

fn kafka(kafka: &str) -> KafkaConfig {
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

#[test]
fn globs_match_as_strimzi_patterns_do_and_skip_kubernetes_entries() {
    assert!(glob_matches("*.crt", "ca.crt"));
    assert!(glob_matches("*.crt", "ca-2026-12-05T13-00-00Z.crt"));
    assert!(!glob_matches("*.crt", "ca.p12"));
    assert!(!glob_matches("*.crt", "ca.password"));
    assert!(glob_matches("ca?.crt", "ca2.crt"));
    assert!(!glob_matches("ca?.crt", "ca.crt"));
    assert!(glob_matches("*", "user.key"));
    assert!(glob_matches("a*b*c", "aXXbYbZc"));
    assert!(!glob_matches("a*b*c", "aXXbYbZ"));
    assert!(glob_matches("ca.crt", "ca.crt"));
    assert!(!glob_matches("*", "..data"));
    assert!(!glob_matches("*", "..2026_12_05_13_00_00.000000001"));
}

/// A Secret volume as the kubelet writes it: the keys in a timestamped directory, `..data`
/// linking to it, and each key a link through `..data`.
fn secret_volume(root: &Path, name: &str, keys: &[(&str, &[u8])]) -> PathBuf {
    let volume = root.join(name);
    let stamped = volume.join("..2026_12_05_13_00_00.000000001");
    std::fs::create_dir_all(&stamped).unwrap();
    for (key, value) in keys {
        std::fs::write(stamped.join(key), value).unwrap();
        std::os::unix::fs::symlink(Path::new("..data").join(key), volume.join(key)).unwrap();
    }
    std::os::unix::fs::symlink("..2026_12_05_13_00_00.000000001", volume.join("..data")).unwrap();
    volume
}

/// A self-signed CA certificate and its key, PEM, made by the openssl command.
fn certificate(dir: &Path, name: &str) -> (String, String) {
    let (crt, key) = (
        dir.join(format!("{name}.crt")),
        dir.join(format!("{name}.key")),
    );
    let status = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", &format!("/CN={name}")])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&crt)
        .output()
        .expect("the openssl command runs");
    assert!(status.status.success(), "{status:?}");
    (
        std::fs::read_to_string(crt).unwrap(),
        std::fs::read_to_string(key).unwrap(),
    )
}

/// The Secrets a Strimzi KafkaUser (tls and scram-sha-512) and a Strimzi cluster CA come in,
/// with Strimzi's keys (KafkaUser: `ca.crt`, `user.crt`, `user.key`, `user.p12`, `user.password`
/// for TLS users, `password` and `sasl.jaas.config` for SCRAM users; cluster CA: `ca.crt`,
/// `ca.p12`, `ca.password`, and during a renewal the old CA under a dated `.crt` key), used as
/// they are: librdkafka accepts what they map to.
#[test]
fn strimzi_secrets_work_unchanged() {
    let root = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let (ca, _) = certificate(scratch.path(), "cluster-ca");
    let (old_ca, _) = certificate(scratch.path(), "cluster-ca-old");
    let (user_crt, user_key) = certificate(scratch.path(), "capture");
    let cluster_ca = secret_volume(
        root.path(),
        "my-cluster-cluster-ca-cert",
        &[
            ("ca.crt", ca.as_bytes()),
            ("ca-2026-01-01T00-00-00Z.crt", old_ca.as_bytes()),
            ("ca.p12", b"\x30\x82\x04binary"),
            ("ca.password", b"p12password"),
        ],
    );
    let tls_user = secret_volume(
        root.path(),
        "capture-tls",
        &[
            ("ca.crt", ca.as_bytes()),
            ("user.crt", user_crt.as_bytes()),
            ("user.key", user_key.as_bytes()),
            ("user.p12", b"\x30\x82\x04binary"),
            ("user.password", b"p12password"),
        ],
    );
    let scram_user = secret_volume(
        root.path(),
        "capture-scram",
        &[
            ("password", b"Zm9vYmFyc2VjcmV0"),
            (
                "sasl.jaas.config",
                b"org.apache.kafka.common.security.scram.ScramLoginModule required \
                  username=\"capture\" password=\"Zm9vYmFyc2VjcmV0\";",
            ),
        ],
    );
    let pattern = format!("{}/*.crt", cluster_ca.display());
    let mtls = format!(
        "tls: {{trustedCertificates: [{{pattern: '{pattern}'}}]}}, \
         authentication: {{type: tls, certificateAndKey: {{certificate: {0}/user.crt, key: {0}/user.key}}}}",
        tls_user.display()
    );
    let scram = format!(
        "tls: {{trustedCertificates: [{{certificate: {}/ca.crt}}]}}, \
         authentication: {{type: scram-sha-512, username: capture, passwordFile: {}/password}}",
        cluster_ca.display(),
        scram_user.display()
    );
    use rdkafka::producer::BaseProducer;
    for block in [mtls, scram.clone()] {
        let settings = KafkaClientSettings::with_bootstrap("127.0.0.1:1")
            .with_security(&kafka(&block))
            .unwrap_or_else(|stop| panic!("{block}: {stop}"));
        let producer = settings.producer_config(Some("redoline/a/b"));
        let pem = producer.get("ssl.ca.pem").unwrap();
        assert!(pem.contains(ca.trim_end()), "{block}");
        let created: Result<BaseProducer, _> = producer.create();
        assert!(created.is_ok(), "{block}: {:?}", created.err());
    }
    // Both CAs, each once, in name order (the dated key before ca.crt); not the PKCS#12 store.
    let settings = KafkaClientSettings::with_bootstrap("b:1")
        .with_security(&kafka(&format!(
            "tls: {{trustedCertificates: [{{pattern: '{pattern}'}}]}}"
        )))
        .unwrap();
    let config = settings.client_config();
    let pem = config.get("ssl.ca.pem").unwrap();
    assert_eq!(pem, format!("{}\n{}\n", old_ca.trim_end(), ca.trim_end()));
    let settings = KafkaClientSettings::with_bootstrap("b:1")
        .with_security(&kafka(&scram))
        .unwrap();
    assert_eq!(
        settings.client_config().get("sasl.password"),
        Some("Zm9vYmFyc2VjcmV0")
    );
    assert!(!format!("{settings:?}").contains("Zm9vYmFyc2VjcmV0"));
}

#[test]
fn unusable_files_are_cdc_1001_naming_the_field() {
    let root = tempfile::tempdir().unwrap();
    let volume = secret_volume(
        root.path(),
        "ca",
        &[("ca.p12", b"\x30\x82binary"), ("ca.password", b"x")],
    );
    let cases = [
        (
            format!(
                "tls: {{trustedCertificates: [{{pattern: '{}/*.crt'}}]}}",
                volume.display()
            ),
            "spec.kafka.tls.trustedCertificates",
            "matches *.crt",
        ),
        (
            format!(
                "tls: {{trustedCertificates: [{{pattern: '{}/*'}}]}}",
                volume.display()
            ),
            "spec.kafka.tls.trustedCertificates",
            "holds no PEM certificate",
        ),
        (
            format!(
                "tls: {{trustedCertificates: [{{certificate: {}/ca.crt}}]}}",
                volume.display()
            ),
            "spec.kafka.tls.trustedCertificates",
            "cannot read",
        ),
        (
            format!(
                "authentication: {{type: plain, username: u, passwordFile: {}/password}}",
                volume.display()
            ),
            "spec.kafka.authentication.passwordSecret",
            "cannot read",
        ),
    ];
    for (block, field, words) in cases {
        let stop = KafkaClientSettings::with_bootstrap("b:1")
            .with_security(&kafka(&block))
            .unwrap_err();
        assert_eq!(stop.code, StopCode::InvalidConfiguration, "{block}");
        assert!(stop.message.starts_with(field), "{block}: {stop}");
        assert!(stop.message.contains(words), "{block}: {stop}");
    }
}

/// A property set both by a typed field and by `configSecret` (itself, an alias, or the other
/// form of the same certificate) is CDC-1001 naming both, whichever is added first.
#[test]
fn a_property_set_twice_names_both_fields() {
    let root = tempfile::tempdir().unwrap();
    let volume = secret_volume(root.path(), "user", &[("password", b"pw")]);
    let block = format!(
        "authentication: {{type: scram-sha-256, username: u, passwordFile: {}/password}}",
        volume.display()
    );
    for secret_property in ["sasl.username", "sasl.mechanisms", "security.protocol"] {
        let after = KafkaClientSettings::with_bootstrap("b:1")
            .with_property(secret_property, "x")
            .unwrap()
            .with_security(&kafka(&block))
            .unwrap_err();
        let before = KafkaClientSettings::with_bootstrap("b:1")
            .with_security(&kafka(&block))
            .unwrap()
            .with_property(secret_property, "x")
            .unwrap_err();
        for stop in [after, before] {
            assert_eq!(stop.code, StopCode::InvalidConfiguration);
            assert!(
                stop.message
                    .starts_with("spec.kafka.configSecret: property")
                    && stop.message.contains(secret_property)
                    && stop.message.contains("spec.kafka.authentication"),
                "{stop}"
            );
        }
    }
    let ca = kafka("tls: {trustedCertificates: [{certificate: /nowhere}]}");
    let stop = KafkaClientSettings::with_bootstrap("b:1")
        .with_property("ssl.ca.location", "/etc/ssl/ca.pem")
        .unwrap()
        .with_security(&ca)
        .unwrap_err();
    assert!(
        stop.message.contains("ssl.ca.location")
            && stop.message.contains("ssl.ca.pem")
            && stop.message.contains("spec.kafka.tls.trustedCertificates"),
        "{stop}"
    );
    // Anything the typed fields leave alone still comes from configSecret.
    KafkaClientSettings::with_bootstrap("b:1")
        .with_security(&kafka(&block))
        .unwrap()
        .with_property("ssl.endpoint.identification.algorithm", "none")
        .unwrap();
}

/// Whether this librdkafka build has `feature` (librdkafka refuses a `builtin.features` list
/// naming one it lacks).
fn librdkafka_has(feature: &str) -> bool {
    use rdkafka::producer::BaseProducer;
    rdkafka::ClientConfig::new()
        .set("builtin.features", feature)
        .create::<BaseProducer>()
        .is_ok()
}

/// librdkafka is built with every feature the typed authentications need (the rdkafka `ssl`,
/// `gssapi` and `curl` features), and accepts the OIDC properties; creating the client fetches no
/// token yet.
#[test]
fn librdkafka_has_what_every_authentication_needs_and_takes_the_oidc_properties() {
    use rdkafka::producer::BaseProducer;
    // The probe itself works: nothing is called `no_such_feature`.
    assert!(!librdkafka_has("no_such_feature"));
    for feature in [
        "ssl",
        "sasl_gssapi",
        "sasl_scram",
        "sasl_oauthbearer",
        "oidc",
    ] {
        assert!(
            librdkafka_has(feature),
            "librdkafka is built without {feature}"
        );
    }
    let root = tempfile::tempdir().unwrap();
    let volume = secret_volume(root.path(), "client", &[("secret", b"s3cret")]);
    let block = format!(
        "tls: {{}}, authentication: {{type: oauth, clientId: capture, clientSecretFile: {}/secret, \
         tokenEndpointUri: 'https://127.0.0.1:1/token', scope: kafka, saslExtensions: {{a: b}}}}",
        volume.display()
    );
    let settings = KafkaClientSettings::with_bootstrap("127.0.0.1:1")
        .with_security(&kafka(&block))
        .unwrap();
    let created: Result<BaseProducer, _> = settings.producer_config(None).create();
    assert!(created.is_ok(), "{:?}", created.err());
}
