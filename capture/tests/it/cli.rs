//! The capture binary's command line: version (text and JSON), JSON logging and usage errors.

// Test files may panic: a failed expectation here is a failed test.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::process::Command;

fn capture(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_redoline-capture"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn version_prints_text_and_json() {
    let out = capture(&["version"]);
    assert!(out.status.success());
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("redoline-capture {version}")
    );

    let out = capture(&["--log-format", "json", "version", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["version"], version);
}

#[test]
fn unknown_command_and_bad_log_format_are_usage_errors() {
    let out = capture(&["mine-everything"]);
    assert_eq!(out.status.code(), Some(2));
    let out = capture(&["--log-format", "xml", "version"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values: text, json"));
}

/// `acls` prints the rules of `sink::kafka::acls` for a config file, in each format; a config
/// without Kafka is CDC-1001.
#[test]
fn acls_prints_the_rules_of_a_config_in_each_format() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("capture.yaml");
    std::fs::write(
        &config,
        "name: orders\nnamespace: sales\ndatabase: {host: db, serviceName: ORCL}\n\
         tables: [APP.ORDERS]\nkafka: {bootstrapServers: 'kafka:9093', topicPrefix: sales}\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let acls = |extra: &[&str]| {
        let mut args = vec!["acls", "--config", config, "--principal", "User:capture"];
        args.extend_from_slice(extra);
        let out = capture(&args);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let json: Vec<serde_json::Value> = serde_json::from_str(&acls(&["--format", "json"])).unwrap();
    let commands = acls(&[]);
    assert_eq!(commands.lines().count(), json.len());
    assert!(commands.lines().all(|line| line.starts_with(
        "kafka-acls.sh --bootstrap-server kafka:9093 --add --allow-principal User:capture"
    )));
    assert!(commands.contains("--transactional-id redoline/sales/orders"));
    let strimzi = acls(&["--format", "strimzi"]);
    let block: serde_json::Value =
        serde_norway::from_str(&strimzi).expect("the Strimzi block is YAML");
    assert_eq!(block["authorization"]["type"], "simple");
    let operations: usize = block["authorization"]["acls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|acl| acl["operations"].as_array().unwrap().len())
        .sum();
    assert_eq!(operations, json.len());
    let legacy = acls(&["--format", "json", "--legacy-idempotent-write"]);
    assert_eq!(
        legacy,
        acls(&["--format", "json"]),
        "transactional: no cluster rule"
    );

    let file = dir.path().join("file.yaml");
    std::fs::write(
        &file,
        "name: orders\ndatabase: {host: db, serviceName: ORCL}\ntables: [APP.ORDERS]\n\
         file: {path: out.jsonl}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_redoline-capture"))
        .args([
            "acls",
            "--config",
            file.to_str().unwrap(),
            "--principal",
            "User:x",
        ])
        .env("REDOLINE_TERMINATION_LOG", dir.path().join("termination"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("CDC-1001"));
}
