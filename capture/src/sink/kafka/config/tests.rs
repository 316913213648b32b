use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::sink::kafka::authentication::tests::kafka;

#[test]
fn secret_directory_properties_are_read_and_redacted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("security.protocol"), "sasl_ssl\n").unwrap();
    std::fs::write(dir.path().join("sasl.mechanism"), "SCRAM-SHA-512").unwrap();
    std::fs::write(dir.path().join("sasl.username"), "capture").unwrap();
    std::fs::write(dir.path().join("sasl.password"), "hunter2\n").unwrap();
    std::fs::write(
        dir.path().join("ssl.key.pem"),
        "-----BEGIN PRIVATE KEY-----",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("..2026_11_29")).unwrap();
    std::fs::write(dir.path().join("..data"), "ignored").unwrap();

    let settings = KafkaClientSettings::with_bootstrap("broker:9092")
        .with_properties_dir(dir.path())
        .unwrap();
    let config = settings.producer_config(Some("redoline/sales/orders"));
    assert_eq!(config.get("sasl.password"), Some("hunter2"));
    assert_eq!(config.get("security.protocol"), Some("sasl_ssl"));
    assert_eq!(
        config.get("transactional.id"),
        Some("redoline/sales/orders")
    );
    assert_eq!(config.get("enable.idempotence"), Some("true"));
    assert_eq!(config.get("..data"), None);

    let shown = format!("{settings:?}");
    assert!(
        !shown.contains("hunter2") && !shown.contains("PRIVATE"),
        "{shown}"
    );
    assert!(shown.contains("SCRAM-SHA-512") && shown.contains("sasl.password"));
}

#[test]
fn reserved_properties_cannot_be_overridden() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("enable.idempotence"), "false").unwrap();
    let stop = KafkaClientSettings::with_bootstrap("b:1")
        .with_properties_dir(dir.path())
        .unwrap_err();
    assert_eq!(stop.code, StopCode::InvalidConfiguration);
    assert!(stop.message.contains("enable.idempotence"), "{stop}");
}

/// librdkafka is built with OpenSSL, Cyrus SASL and libcurl: TLS, SCRAM, GSSAPI (Kerberos)
/// and OAUTHBEARER with OIDC settings create a producer (no broker is contacted), and a
/// refused property is reported without its value.
#[test]
fn sasl_and_tls_settings_reach_librdkafka_and_refusals_hide_values() {
    use rdkafka::producer::BaseProducer;
    let sasl_ssl = |mechanism: &str| {
        KafkaClientSettings::with_bootstrap("127.0.0.1:1")
            .with_property("security.protocol", "sasl_ssl")
            .and_then(|s| s.with_property("sasl.mechanism", mechanism))
            .and_then(|s| s.with_property("ssl.endpoint.identification.algorithm", "https"))
            .unwrap()
    };
    let mut accepted = Vec::new();
    for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let settings = sasl_ssl(mechanism)
            .with_property("sasl.username", "capture")
            .and_then(|s| s.with_property("sasl.password", "hunter2"))
            .unwrap();
        accepted.push((mechanism, settings));
    }
    let kerberos = sasl_ssl("GSSAPI")
        .with_property("sasl.kerberos.service.name", "kafka")
        .and_then(|s| s.with_property("sasl.kerberos.principal", "capture@EXAMPLE.COM"))
        .and_then(|s| s.with_property("sasl.kerberos.keytab", "/nonexistent/capture.keytab"))
        .and_then(|s| s.with_property("sasl.kerberos.min.time.before.relogin", "60000"))
        .unwrap();
    accepted.push(("GSSAPI", kerberos));
    let oidc = sasl_ssl("OAUTHBEARER")
        .with_property("sasl.oauthbearer.method", "oidc")
        .and_then(|s| s.with_property("sasl.oauthbearer.client.id", "capture"))
        .and_then(|s| s.with_property("sasl.oauthbearer.client.secret", "hunter2"))
        .and_then(|s| {
            s.with_property(
                "sasl.oauthbearer.token.endpoint.url",
                "https://idp.example.com/token",
            )
        })
        .unwrap();
    accepted.push(("OAUTHBEARER", oidc));
    for (mechanism, settings) in accepted {
        let created: Result<BaseProducer, _> =
            settings.producer_config(Some("redoline/a/b")).create();
        assert!(created.is_ok(), "{mechanism}: {:?}", created.err());
    }

    // A property librdkafka does not know, valued like a secret.
    let settings = KafkaClientSettings::with_bootstrap("127.0.0.1:1")
        .with_property("sasl.password.file", "hunter2")
        .unwrap();
    let error = settings
        .producer_config(None)
        .create::<BaseProducer>()
        .err()
        .unwrap();
    let stop = refused_settings(&error);
    assert_eq!(stop.code, StopCode::InvalidConfiguration);
    assert!(stop.message.contains("sasl.password.file"), "{stop}");
    assert!(!stop.message.contains("hunter2"), "{stop}");
}

#[test]
fn secret_properties_override_producer_defaults() {
    let settings = KafkaClientSettings::with_bootstrap("b:1")
        .with_property("linger.ms", "20")
        .unwrap();
    assert_eq!(settings.producer_config(None).get("linger.ms"), Some("20"));
    assert_eq!(settings.producer_config(None).get("transactional.id"), None);
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
