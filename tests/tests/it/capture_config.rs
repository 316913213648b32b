#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The operator renders the capture config; the capture must accept exactly what it renders.

use redoline_capture::config;
use redoline_crds::OracleCapture;
use redoline_tests::operator;

#[test]
fn the_operator_rendered_config_loads_in_the_capture() {
    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crds/examples/oraclecapture.yaml"
    ))
    .unwrap();
    let mut capture: OracleCapture = serde_norway::from_str(&sample).unwrap();
    capture.metadata.namespace = Some("sales".to_owned());
    let rendered = redoline_operator::build::render_capture_config(&capture).unwrap();
    let loaded = config::parse(&rendered, &[]).unwrap_or_else(|e| panic!("{e}\n{rendered}"));
    assert_eq!(loaded.name, capture.metadata.name.clone().unwrap());
    assert_eq!(loaded.namespace.as_deref(), Some("sales"));
    assert_eq!(loaded.tables, capture.spec.tables);
    assert_eq!(loaded.mining, capture.spec.mining);
    assert_eq!(loaded.journal, capture.spec.journal);
    assert_eq!(
        loaded.buffer.memory_max_bytes,
        capture.spec.buffer.memory_max_bytes
    );
    let kafka = loaded.kafka.unwrap();
    assert_eq!(kafka.topic_prefix, capture.spec.kafka.topic_prefix);
    assert!(loaded.file.is_none());
}

/// For each authentication type, with Strimzi's Secrets: the capture accepts the config the
/// operator renders, and every credential file it names is one the pod mounts (a projected key
/// of a mounted volume, or inside a volume mounted whole).
#[test]
fn every_kafka_credential_file_the_config_names_is_mounted() {
    use std::path::{Path, PathBuf};

    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crds/examples/oraclecapture.yaml"
    ))
    .unwrap();
    let cluster_ca = serde_json::json!({"trustedCertificates": [
        {"secretName": "my-cluster-cluster-ca-cert", "pattern": "*.crt"}]});
    let kafka_blocks = [
        serde_json::json!({"tls": cluster_ca, "authentication": {"type": "tls",
            "certificateAndKey": {"secretName": "capture", "certificate": "user.crt", "key": "user.key"}}}),
        serde_json::json!({"tls": cluster_ca, "authentication": {"type": "scram-sha-512",
            "username": "capture", "passwordSecret": {"secretName": "capture", "password": "password"}}}),
        serde_json::json!({"tls": {}, "authentication": {"type": "oauth", "clientId": "capture",
            "clientSecret": {"secretName": "idp", "key": "secret"},
            "tokenEndpointUri": "https://idp/token",
            "tlsTrustedCertificates": [{"secretName": "idp-ca", "certificate": "ca.crt"}]}}),
        serde_json::json!({"authentication": {"type": "gssapi", "principal": "capture@EXAMPLE.COM",
            "keytabSecret": {"secretName": "keytab", "key": "capture.keytab"},
            "krb5Config": {"configMapName": "krb5"}}}),
    ];
    for block in kafka_blocks {
        let mut capture: OracleCapture = serde_norway::from_str(&sample).unwrap();
        capture.metadata.uid = Some("8d7e0c1a-5b2f-4f4e-9a51-0c4b1c2d3e4f".into());
        operator::set_kafka_fields(&mut capture, &block).unwrap();
        let rendered = redoline_operator::build::render_capture_config(&capture).unwrap();
        let loaded = config::parse(&rendered, &[]).unwrap_or_else(|e| panic!("{e}\n{rendered}"));
        let kafka = loaded.kafka.unwrap();

        let mut named: Vec<PathBuf> = Vec::new();
        let mut certificates = |list: &[config::kafka_auth::TrustedCertificateFiles]| {
            for entry in list {
                named.extend(entry.certificate.clone());
                named.extend(entry.pattern.clone());
            }
        };
        if let Some(tls) = &kafka.tls {
            certificates(&tls.trusted_certificates);
        }
        let auth = kafka.authentication.unwrap();
        certificates(&auth.tls_trusted_certificates);
        if let Some(pair) = &auth.certificate_and_key {
            named.extend([pair.certificate.clone(), pair.key.clone()]);
        }
        named.extend(auth.password_file.clone());
        named.extend(auth.client_secret_file.clone());
        named.extend(auth.keytab_file.clone());
        assert!(!named.is_empty(), "{block}");

        let children = redoline_operator::build::build(
            &capture,
            &redoline_operator::build::OperatorSettings {
                default_image: "capture:test".into(),
                simulator_scenarios: None,
            },
        )
        .unwrap();
        let pod = children.stateful_set.spec.unwrap().template.spec.unwrap();
        let volumes = pod.volumes.unwrap();
        let mounts = pod.containers[0].volume_mounts.clone().unwrap();
        let mounted = |file: &Path| {
            mounts.iter().any(|mount| {
                let Ok(rest) = file.strip_prefix(&mount.mount_path) else {
                    return false;
                };
                let volume = volumes.iter().find(|v| v.name == mount.name).unwrap();
                let items = volume
                    .secret
                    .as_ref()
                    .and_then(|s| s.items.clone())
                    .or_else(|| volume.config_map.as_ref().and_then(|c| c.items.clone()));
                match items {
                    None => rest.components().count() == 1,
                    Some(items) => items.iter().any(|item| Path::new(&item.path) == rest),
                }
            })
        };
        for file in named {
            assert!(
                file.starts_with("/var/run/secrets/redoline/"),
                "{}",
                file.display()
            );
            assert!(mounted(&file), "{block}: {} is not mounted", file.display());
        }
    }
}

/// The Avro example: the capture accepts the config the operator renders, and every schema
/// registry credential file it names is a projected key of a Secret the pod mounts.
#[test]
fn the_avro_example_renders_a_registry_config_the_capture_loads() {
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crds/examples/oraclecapture-avro.yaml"
    ))
    .unwrap();
    let mut capture: OracleCapture = serde_norway::from_str(&example).unwrap();
    capture.metadata.uid = Some("8d7e0c1a-5b2f-4f4e-9a51-0c4b1c2d3e4f".into());
    let rendered = redoline_operator::build::render_capture_config(&capture).unwrap();
    let loaded = config::parse(&rendered, &[]).unwrap_or_else(|e| panic!("{e}\n{rendered}"));
    let registry = loaded.schema_registry.unwrap();
    let spec = capture.spec.schema_registry.unwrap();
    assert_eq!(registry.url, spec.url);
    assert_eq!(registry.subject_name_strategy, spec.subject_name_strategy);
    let ca = registry.tls.unwrap().trusted_certificates[0]
        .certificate
        .clone()
        .unwrap();
    let password = registry.authentication.unwrap().password_file.unwrap();
    assert_eq!(
        ca,
        std::path::Path::new("/var/run/secrets/redoline/schema-registry/tls/0/ca.crt")
    );
    assert_eq!(
        password,
        std::path::Path::new("/var/run/secrets/redoline/schema-registry/password/password")
    );
    assert!(!rendered.contains("secretName"), "{rendered}");
}
