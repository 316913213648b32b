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
//! the authenticated client too. The client settings are librdkafka properties, given to the
//! capture as `spec.kafka.configSecret` gives them: one file per property in
//! `$REDOLINE_KAFKA_CONFIG_DIR`.
//!
//! The failures that teach something stop the capture with a typed stop at once, not after a
//! retry budget: a wrong password, and a broker certificate the configured CA did not sign.

mod kafka_support;

use std::process::Output;
use std::time::{Duration, Instant};

use kafka_support::{Capture, TABLES, ids, insert, unique_prefix};
use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::config::KAFKA_CONFIG_DIR_ENV;
use redoline_capture::sink::kafka::reader::read_to_end;
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

fn run(capture: &Capture, process_env: &[(String, String)], log: &str) -> Output {
    capture
        .command("capture.yaml", true, log)
        .env(KAFKA_CONFIG_DIR_ENV, capture.path("kafka-config"))
        .envs(process_env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

fn read(listener: &str, properties: &[(String, String)], topic: &str) -> Vec<Value> {
    let mut settings = KafkaClientSettings::with_bootstrap(listener);
    for (name, value) in properties {
        settings = settings.with_property(name, value).unwrap();
    }
    let mut values = Vec::new();
    read_to_end(&settings, topic, Duration::from_secs(60), |record| {
        if let Some(value) = record.value {
            values.push(serde_json::from_slice(&value).unwrap());
        }
        Ok(())
    })
    .unwrap();
    values
}

/// Captures one transaction, then resumes from the bookmark read back through the same client,
/// and checks the topic holds each row once. Prints how long it took.
fn capture_through(mechanism: Mechanism) {
    let started = Instant::now();
    let env = env();
    let (listener, properties) = env.client(mechanism).unwrap();
    let prefix = unique_prefix(&format!("auth-{mechanism:?}").to_lowercase());
    let capture = capture_with(&listener, &prefix, &properties, &scenario(&[("a", 1)]));
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
    capture_through(Mechanism::Tls);
}

#[test]
fn mutual_tls() {
    capture_through(Mechanism::MutualTls);
}

#[test]
fn sasl_plain_over_tls() {
    capture_through(Mechanism::Plain);
}

#[test]
fn scram_sha_256_over_tls() {
    capture_through(Mechanism::ScramSha256);
}

#[test]
fn scram_sha_512_over_tls() {
    capture_through(Mechanism::ScramSha512);
}

#[test]
fn gssapi_with_a_keytab() {
    capture_through(Mechanism::Gssapi);
}

#[test]
fn oauthbearer_with_oidc_client_credentials() {
    capture_through(Mechanism::OAuthBearer);
}

/// Runs a capture whose client `spoil` changed, and returns its typed stop (the termination
/// message) and stderr.
fn refused(mechanism: Mechanism, spoil: impl Fn(&mut Vec<(String, String)>)) -> (Value, String) {
    let env = env();
    let (listener, mut properties) = env.client(mechanism).unwrap();
    spoil(&mut properties);
    let prefix = unique_prefix(&format!("refused-{mechanism:?}").to_lowercase());
    let capture = capture_with(&listener, &prefix, &properties, &scenario(&[("a", 1)]));
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

fn set(properties: &mut [(String, String)], name: &str, value: &str) {
    let property = properties.iter_mut().find(|(n, _)| n == name).unwrap();
    property.1 = value.to_owned();
}

/// A wrong SCRAM password: the broker's refusal reaches librdkafka's error callback only (the
/// calls just wait), and the capture stops with CDC-1004 at once rather than retrying it.
#[test]
fn a_wrong_password_is_a_typed_stop() {
    let (stop, stderr) = refused(Mechanism::ScramSha512, |p| {
        set(p, "sasl.password", "not-the-password");
    });
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
    let untrusted = env().untrusted_ca.display().to_string();
    let (stop, stderr) = refused(Mechanism::Tls, |p| set(p, "ssl.ca.location", &untrusted));
    assert_eq!(stop["code"], "CDC-1004", "{stop}\n{stderr}");
    assert_eq!(stop["details"]["layer"], "TLS", "{stop}");
    let message = stop["message"].as_str().unwrap();
    assert!(message.contains("certificate verify failed"), "{message}");
}
