#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Every Kafka authentication the capture supports, each against a broker listener configured for
//! it (`redoline_testenv::kafka_auth`): TLS with the broker verified, mutual TLS, SASL/PLAIN and
//! SCRAM-SHA-256/512 over TLS, SASL/GSSAPI with a keytab against a real MIT KDC, and
//! SASL/OAUTHBEARER with OIDC client credentials against a real token endpoint whose keys the
//! broker checks (KIP-768).
//!
//! For each, the real binary captures a transaction through the listener, then runs again with
//! one more transaction: that second run reads its bookmark back through the same authenticated
//! client, so it sends only the new transaction. The topic is then read through the broker's
//! plaintext listener, and (where the client needs nothing from the process environment) through
//! the authenticated client too.
//!
//! The capture is configured as the operator configures it from `spec.kafka.tls` and
//! `spec.kafka.authentication`: the typed blocks, naming files laid out as the kubelet mounts
//! Secrets made the way Strimzi makes them (a KafkaUser Secret: `ca.crt`, `user.crt`, `user.key`,
//! `user.p12`, `user.password`, or `password` and `sasl.jaas.config`; the cluster CA Secret:
//! `ca.crt`, `ca.p12`, `ca.password`, trusted by the pattern `*.crt`). One more run gives the
//! same client as librdkafka properties, as `spec.kafka.configSecret` gives them (one file per
//! property in `$REDOLINE_KAFKA_CONFIG_DIR`).
//!
//! The failures that teach something stop the capture with a typed stop at once, not after a
//! retry budget: a wrong password, and a broker certificate the configured CA did not sign.

use crate::kafka_support;

use std::process::Output;
use std::time::Instant;

use kafka_support::{Capture, TABLES, ids, insert, read_values_with, unique_prefix};
use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::config::KAFKA_CONFIG_DIR_ENV;
use redoline_testenv::kafka_auth::{KafkaAuthEnv, Mechanism};
use serde_json::Value;

fn env() -> &'static KafkaAuthEnv {
    match KafkaAuthEnv::shared() {
        Ok(env) => env,
        Err(error) => panic!("{error:#}"),
    }
}

fn scenario(transactions: &[(&str, u64)]) -> String {
    let mut scenario = String::from(TABLES);
    for (tx, id) in transactions {
        scenario.push_str(&insert(tx, *id, &format!("row {id}")));
        scenario.push_str(&format!("{{\"tx\":\"{tx}\",\"commit\":true}}\n"));
    }
    scenario
}

/// A capture whose Kafka client is `properties`, written as the mounted `configSecret` is.
fn capture_with(
    listener: &str,
    prefix: &str,
    properties: &[(String, String)],
    scenario: &str,
) -> Capture {
    let capture = Capture::new(scenario, listener, prefix, "");
    let dir = capture.path("kafka-config");
    std::fs::create_dir(&dir).unwrap();
    for (name, value) in properties {
        std::fs::write(dir.join(name), value).unwrap();
    }
    capture
}

/// How a test's credentials differ from the environment's right ones.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Spoiled {
    Nothing,
    /// The password file holds another password.
    Password,
    /// The cluster CA Secret holds a CA that did not sign the broker's certificate.
    ClusterCa,
}

/// A capture configured with typed `kafka.tls` and `kafka.authentication` for `mechanism`, the
/// credentials written as the kubelet mounts Strimzi's Secrets (see the module docs).
fn capture_typed(mechanism: Mechanism, prefix: &str, scenario: &str, spoiled: Spoiled) -> Capture {
    let env = env();
    let (listener, _) = env.client(mechanism).unwrap();
    let capture = Capture::new(scenario, &listener, prefix, "");
    let mount = |secret: &str, files: &[(&str, Vec<u8>)]| -> String {
        let dir = capture.path(secret);
        std::fs::create_dir_all(&dir).unwrap();
        for (key, value) in files {
            std::fs::write(dir.join(key), value).unwrap();
        }
        dir.display().to_string()
    };
    let read = |path: &std::path::Path| std::fs::read(path).unwrap();
    let ca = match spoiled {
        Spoiled::ClusterCa => read(&env.untrusted_ca),
        _ => read(&env.ca),
    };
    // `<cluster>-cluster-ca-cert`: the certificate, and a PKCS #12 store with its password that
    // the pattern leaves out.
    let cluster_ca = mount(
        "my-cluster-cluster-ca-cert",
        &[
            ("ca.crt", ca.clone()),
            ("ca.p12", b"not PEM: must not be read".to_vec()),
            ("ca.password", b"changeit".to_vec()),
        ],
    );
    let tls = format!(", tls: {{trustedCertificates: [{{pattern: \"{cluster_ca}/*.crt\"}}]}}");
    let password = |credentials: &redoline_testenv::kafka_auth::Credentials| -> Vec<u8> {
        match spoiled {
            Spoiled::Password => b"not-the-password".to_vec(),
            _ => credentials.password.clone().into_bytes(),
        }
    };
    // A SCRAM or PLAIN KafkaUser Secret: `password`, and the JAAS line Java clients use.
    let sasl_user = |credentials: &redoline_testenv::kafka_auth::Credentials| -> String {
        let user = mount(
            "kafka-user",
            &[
                ("password", password(credentials)),
                (
                    "sasl.jaas.config",
                    b"org.apache.kafka.common.security.scram.ScramLoginModule required;".to_vec(),
                ),
            ],
        );
        format!(
            "username: {}, passwordFile: \"{user}/password\"",
            credentials.username
        )
    };
    let kafka = match mechanism {
        Mechanism::Tls => tls,
        Mechanism::MutualTls => {
            let user = mount(
                "kafka-user",
                &[
                    ("ca.crt", ca),
                    ("user.crt", read(&env.client_certificate)),
                    ("user.key", read(&env.client_key)),
                    ("user.p12", b"not PEM".to_vec()),
                    ("user.password", b"changeit".to_vec()),
                ],
            );
            format!(
                "{tls}, authentication: {{type: tls, certificateAndKey: \
                 {{certificate: \"{user}/user.crt\", key: \"{user}/user.key\"}}}}"
            )
        }
        Mechanism::Plain => format!(
            "{tls}, authentication: {{type: plain, {}}}",
            sasl_user(&env.plain)
        ),
        Mechanism::ScramSha256 => format!(
            "{tls}, authentication: {{type: scram-sha-256, {}}}",
            sasl_user(&env.scram)
        ),
        Mechanism::ScramSha512 => format!(
            "{tls}, authentication: {{type: scram-sha-512, {}}}",
            sasl_user(&env.scram)
        ),
        Mechanism::Gssapi => {
            let k = env.kerberos.as_ref().unwrap();
            let keytab = mount("keytab", &[("capture.keytab", read(&k.keytab))]);
            format!(
                ", authentication: {{type: gssapi, principal: \"{}\", \
                 keytabFile: \"{keytab}/capture.keytab\", serviceName: {}}}",
                k.principal, k.service_name
            )
        }
        Mechanism::OAuthBearer => {
            let o = env.oauth.as_ref().unwrap();
            let secret = mount(
                "oauth-client",
                &[("client-secret", o.client_secret.clone().into_bytes())],
            );
            format!(
                ", authentication: {{type: oauth, clientId: {}, \
                 clientSecretFile: \"{secret}/client-secret\", tokenEndpointUri: \"{}\"}}",
                o.client_id, o.token_endpoint
            )
        }
    };
    capture.write_config_with("capture.yaml", &listener, prefix, 0, &kafka, "");
    capture
}

fn run(capture: &Capture, process_env: &[(String, String)], log: &str) -> Output {
    let mut command = capture.command("capture.yaml", true, log);
    let properties = capture.path("kafka-config");
    if properties.is_dir() {
        command.env(KAFKA_CONFIG_DIR_ENV, properties);
    }
    command
        .envs(process_env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

fn read(listener: &str, properties: &[(String, String)], topic: &str) -> Vec<Value> {
    let mut settings = KafkaClientSettings::with_bootstrap(listener);
    for (name, value) in properties {
        settings = settings.with_property(name, value).unwrap();
    }
    read_values_with(&settings, topic)
}

/// How a test gives the capture its Kafka client.
#[derive(Clone, Copy)]
enum Configured {
    /// `kafka.tls` and `kafka.authentication`.
    Typed,
    /// librdkafka properties, as `spec.kafka.configSecret` holds them.
    Properties,
}

/// Captures one transaction, then resumes from the bookmark read back through the same client,
/// and checks the topic holds each row once. Prints how long it took.
fn capture_through(mechanism: Mechanism, configured: Configured) {
    let started = Instant::now();
    let env = env();
    let (listener, properties) = env.client(mechanism).unwrap();
    let prefix = unique_prefix(&format!("auth-{mechanism:?}").to_lowercase());
    let first_scenario = scenario(&[("a", 1)]);
    let capture = match configured {
        Configured::Typed => capture_typed(mechanism, &prefix, &first_scenario, Spoiled::Nothing),
        Configured::Properties => capture_with(&listener, &prefix, &properties, &first_scenario),
    };
    let process_env = env.process_env(mechanism, capture.dir.path()).unwrap();

    let first = run(&capture, &process_env, "first");
    assert_eq!(
        first.status.code(),
        Some(0),
        "{mechanism:?}: {}",
        String::from_utf8_lossy(&first.stderr)
    );
    std::fs::write(
        capture.path("scenario.jsonl"),
        scenario(&[("a", 1), ("b", 2)]),
    )
    .unwrap();
    let second = run(&capture, &process_env, "second");
    assert_eq!(
        second.status.code(),
        Some(0),
        "{mechanism:?}: {}",
        String::from_utf8_lossy(&second.stderr)
    );

    let topic = format!("{prefix}.APP.ITEMS");
    assert_eq!(
        ids(&read(&env.plaintext, &[], &topic)),
        [1, 2],
        "{mechanism:?}"
    );
    if process_env.is_empty() {
        assert_eq!(
            ids(&read(&listener, &properties, &topic)),
            [1, 2],
            "{mechanism:?}"
        );
    }
    println!(
        "{mechanism:?}: two capture runs and the read-back took {:?}",
        started.elapsed()
    );
}

#[test]
fn tls_with_the_broker_verified() {
    capture_through(Mechanism::Tls, Configured::Typed);
}

#[test]
fn mutual_tls() {
    capture_through(Mechanism::MutualTls, Configured::Typed);
}

#[test]
fn sasl_plain_over_tls() {
    capture_through(Mechanism::Plain, Configured::Typed);
}

#[test]
fn scram_sha_256_over_tls() {
    capture_through(Mechanism::ScramSha256, Configured::Typed);
}

#[test]
fn scram_sha_512_over_tls() {
    capture_through(Mechanism::ScramSha512, Configured::Typed);
}

/// The same client as librdkafka properties in `configSecret`, which stays for what the typed
/// fields do not cover.
#[test]
fn scram_sha_512_as_config_secret_properties() {
    capture_through(Mechanism::ScramSha512, Configured::Properties);
}

#[test]
fn gssapi_with_a_keytab() {
    capture_through(Mechanism::Gssapi, Configured::Typed);
}

#[test]
fn oauthbearer_with_oidc_client_credentials() {
    capture_through(Mechanism::OAuthBearer, Configured::Typed);
}

/// Runs a capture whose client `spoil` changed, and returns its typed stop (the termination
/// message) and stderr.
fn refused(mechanism: Mechanism, spoiled: Spoiled) -> (Value, String) {
    let prefix = unique_prefix(&format!("refused-{mechanism:?}").to_lowercase());
    let capture = capture_typed(mechanism, &prefix, &scenario(&[("a", 1)]), spoiled);
    let started = Instant::now();
    let output = run(&capture, &[], "run");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    let stop = capture
        .termination("run")
        .unwrap_or_else(|| panic!("no typed stop after {:?}: {stderr}", started.elapsed()));
    println!(
        "{mechanism:?} refused: stopped after {:?}",
        started.elapsed()
    );
    (stop, stderr)
}

/// A wrong SCRAM password: the broker's refusal reaches librdkafka's error callback only (the
/// calls just wait), and the capture stops with CDC-1004 at once rather than retrying it.
#[test]
fn a_wrong_password_is_a_typed_stop() {
    let (stop, stderr) = refused(Mechanism::ScramSha512, Spoiled::Password);
    assert_eq!(stop["code"], "CDC-1004", "{stop}\n{stderr}");
    assert_eq!(stop["details"]["layer"], "SASL", "{stop}");
    let message = stop["message"].as_str().unwrap();
    assert!(message.contains("SCRAM-SHA-512"), "{message}");
    assert!(!message.contains("not-the-password"), "{message}");
    assert!(!stderr.contains("not-the-password"), "{stderr}");
}

/// The broker's certificate checked against a CA that did not sign it: the TLS handshake fails,
/// which is CDC-1004 as well.
#[test]
fn a_broker_certificate_from_another_ca_is_a_typed_stop() {
    let (stop, stderr) = refused(Mechanism::Tls, Spoiled::ClusterCa);
    assert_eq!(stop["code"], "CDC-1004", "{stop}\n{stderr}");
    assert_eq!(stop["details"]["layer"], "TLS", "{stop}");
    let message = stop["message"].as_str().unwrap();
    assert!(message.contains("certificate verify failed"), "{message}");
}
