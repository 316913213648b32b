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
