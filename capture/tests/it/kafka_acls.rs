#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The least-privilege proof of `redoline-capture acls`: against a broker whose authorizer is on
//! (`allow.everyone.if.no.acl.found=false`), a principal with no rights but the ACLs
//! `sink::kafka::acls::required_acls` derives from the capture's config (what `redoline-capture
//! acls` prints) runs the capture through an initial snapshot, streaming, a transaction
//! journaled to Kafka, and a restart that reads bookmark, journal and schema history back. And
//! without any one of those ACLs, the same capture stops with CDC-5004 naming the operation and
//! resource that were refused: not a retry loop, and not librdkafka's words. The one exception
//! is a `Describe` printed next to `Read` or `Write` on the same resource: Kafka's authorizer
//! grants Describe to whoever may read or write, so leaving such a rule out changes nothing,
//! which the test checks too (the rule is printed all the same: it says what the capture asks
//! for).
//!
//! Not yet proven: leaving out DescribeConfigs. rust-rdkafka 0.39 drops the error of each
//! resource of a DescribeConfigs answer (`TOPIC_AUTHORIZATION_FAILED` among them) and returns the
//! resource without entries, which the start-up check cannot tell from a broker whose metadata
//! lags a topic's creation (retried, see `topics`): the capture retries it for its budget and
//! then stops with CDC-5003. Those cases are skipped here and listed in the output.
//!
//! Every case is a capture of its own (its own topic prefix and transactional id), so all the
//! cases' ACLs live side by side for the one principal, added in a few batched `kafka-acls.sh`
//! runs; the complete case's rules are added one by one with the arguments
//! `AclRule::kafka_acls_args` prints.

use crate::kafka_support;

use std::collections::BTreeMap;
use std::process::Output;
use std::time::{Duration, Instant};

use kafka_support::{Capture, TABLES, ids, insert, read_values, unique_prefix};
use redoline_capture::sink::kafka::acls::{
    AclRule, Operation, Pattern, ResourceKind, required_acls,
};
use redoline_capture::sink::kafka::config::KAFKA_CONFIG_DIR_ENV;
use redoline_testenv::kafka_auth::KafkaAuthEnv;
use serde_json::Value;

const PRINCIPAL: &str = "User:acl-capture";

fn env() -> &'static KafkaAuthEnv {
    match KafkaAuthEnv::shared() {
        Ok(env) => env,
        Err(error) => panic!("{error:#}"),
    }
}

/// Three rows for the snapshot, then a transaction left open that is journaled (one event is
/// enough), and with `restart`, its commit and one more transaction.
fn scenario(restart: bool) -> String {
    let mut scenario = String::from(TABLES);
    for id in 1..=3 {
        scenario.push_str(&insert("load", id, "snapshot row"));
    }
    scenario.push_str("{\"tx\":\"load\",\"commit\":true}\n");
    scenario.push_str(&insert("long", 10, "journaled"));
    scenario.push_str(&insert("long", 11, "journaled"));
    if restart {
        scenario.push_str(&insert("short", 20, "after the restart"));
        scenario.push_str("{\"tx\":\"short\",\"commit\":true}\n");
        scenario.push_str("{\"tx\":\"long\",\"commit\":true}\n");
    }
    scenario
}

/// A capture as `User:acl-capture`, with the features whose requests the ACLs cover.
fn acl_capture(prefix: &str) -> Capture {
    let (listener, properties) = env().acl_client();
    let capture = Capture::new(
        &scenario(false),
        &listener,
        prefix,
        "journal: {thresholdSeconds: 300, thresholdEvents: 1}\n",
    );
    let path = capture.path("capture.yaml");
    let config = std::fs::read_to_string(&path)
        .unwrap()
        .replace("snapshot: {mode: never}", "snapshot: {mode: initial}");
    std::fs::write(&path, config).unwrap();
    let dir = capture.path("kafka-config");
    std::fs::create_dir(&dir).unwrap();
    for (name, value) in properties {
        std::fs::write(dir.join(name), value).unwrap();
    }
    capture
}

fn rules_of(capture: &Capture) -> Vec<AclRule> {
    let config = redoline_capture::config::load(&capture.path("capture.yaml"), &[]).unwrap();
    required_acls(&config, PRINCIPAL)
}

/// A run, killed when it takes longer than any run of this scenario takes, stopped or not: a
/// capture that retries a refusal would run for its whole retry budget (10 minutes).
fn run(capture: &Capture, log: &str) -> Output {
    const LIMIT: Duration = Duration::from_secs(120);
    let mut command = capture.command("capture.yaml", true, log);
    command.env(KAFKA_CONFIG_DIR_ENV, capture.path("kafka-config"));
    let mut running = capture.start(command, log);
    let status = running.wait_exit(LIMIT);
    Output {
        status,
        stdout: Vec::new(),
        stderr: running.stderr().into_bytes(),
    }
}

/// The first run, then the restart with the rest of the scenario; stops at the first run that
/// fails. Returns the last run's output and its log name.
fn first_and_restart(capture: &Capture) -> (Output, &'static str) {
    let first = run(capture, "first");
    if first.status.code() != Some(0) {
        return (first, "first");
    }
    std::fs::write(capture.path("scenario.jsonl"), scenario(true)).unwrap();
    (run(capture, "restart"), "restart")
}

fn describe(rule: &AclRule) -> String {
    format!(
        "{} {:?} {:?} {}",
        rule.operation, rule.resource, rule.pattern, rule.name
    )
}

/// `kafka-acls.sh --add` runs granting every rule of `rules`: one per pattern type and
/// operation, listing all its resources (kafka-acls.sh adds each operation on each resource).
fn add_batched(env: &KafkaAuthEnv, rules: &[AclRule]) {
    let mut groups: BTreeMap<(Pattern, Operation), Vec<&AclRule>> = BTreeMap::new();
    for rule in rules {
        assert_eq!(rule.principal, PRINCIPAL);
        groups
            .entry((rule.pattern, rule.operation))
            .or_default()
            .push(rule);
    }
    for ((pattern, operation), rules) in groups {
        let mut args: Vec<String> = [
            "--bootstrap-server",
            &env.plaintext,
            "--add",
            "--allow-principal",
            PRINCIPAL,
            "--allow-host",
            "*",
            "--operation",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        args.push(operation.to_string());
        for rule in rules {
            match rule.resource {
                ResourceKind::Topic => args.push("--topic".into()),
                ResourceKind::Group => args.push("--group".into()),
                ResourceKind::TransactionalId => args.push("--transactional-id".into()),
                ResourceKind::Cluster => {
                    args.push("--cluster".into());
                    continue;
                }
            }
            args.push(rule.name.clone());
        }
        args.push("--resource-pattern-type".into());
        args.push(
            match pattern {
                Pattern::Literal => "literal",
                Pattern::Prefixed => "prefixed",
            }
            .into(),
        );
        env.kafka_acls(&args).unwrap();
    }
}

/// Whether Kafka's authorizer grants `rule` through another printed rule: Read and Write on a
/// resource imply Describe on it (`AclAuthorizer`/`StandardAuthorizer`: DESCRIBE is allowed by
/// READ, WRITE, DELETE or ALTER).
fn implied(rule: &AclRule, rules: &[AclRule]) -> bool {
    rule.operation == Operation::Describe
        && rules.iter().any(|other| {
            matches!(other.operation, Operation::Read | Operation::Write)
                && (other.resource, other.pattern, &other.name)
                    == (rule.resource, rule.pattern, &rule.name)
        })
}

fn resource_name(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Topic => "topic",
        ResourceKind::Group => "group",
        ResourceKind::TransactionalId => "transactional id",
        ResourceKind::Cluster => "cluster",
    }
}

#[test]
fn the_printed_acls_are_enough_and_each_of_them_is_needed() {
    let started = Instant::now();
    let env = env();

    // The complete case: every printed rule, added with the printed arguments.
    let prefix = unique_prefix("acl-all");
    let complete = acl_capture(&prefix);
    let rules = rules_of(&complete);
    assert!(!rules.is_empty());
    for rule in &rules {
        env.kafka_acls(&rule.kafka_acls_args(&env.plaintext))
            .unwrap();
    }
    let granted = started.elapsed();

    // One case per rule, that rule left out; all cases' rules added at once.
    let mut all_case_rules = Vec::new();
    let cases: Vec<(Capture, AclRule, bool)> = (0..rules.len())
        .map(|left_out| {
            let capture = acl_capture(&unique_prefix(&format!("acl-{left_out}")));
            let mut case_rules = rules_of(&capture);
            assert_eq!(case_rules.len(), rules.len(), "cases derive rules alike");
            let redundant = implied(&case_rules[left_out], &case_rules);
            let missing = case_rules.remove(left_out);
            assert_eq!(
                (missing.resource, missing.pattern, missing.operation),
                (
                    rules[left_out].resource,
                    rules[left_out].pattern,
                    rules[left_out].operation
                ),
            );
            all_case_rules.extend(case_rules);
            (capture, missing, redundant)
        })
        .collect();
    add_batched(env, &all_case_rules);
    let cases_granted = started.elapsed();

    let (output, log) = first_and_restart(&complete);
    assert_eq!(
        output.status.code(),
        Some(0),
        "with every printed ACL, {log}: {:?}\n{}",
        complete.termination(log),
        String::from_utf8_lossy(&output.stderr)
    );
    let topic = format!("{prefix}.APP.ITEMS");
    let events = read_values(&env.plaintext, &topic);
    assert_eq!(ids(&events), [1, 2, 3, 20, 10, 11], "{events:?}");

    let mut reports = Vec::new();
    for (capture, missing, redundant) in &cases {
        if missing.operation == Operation::DescribeConfigs {
            reports.push(format!(
                "without {:<60} not run: the refusal is not visible through rust-rdkafka",
                describe(missing)
            ));
            continue;
        }
        let (output, log) = first_and_restart(capture);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if *redundant {
            assert_eq!(
                output.status.code(),
                Some(0),
                "without {}, which Read or Write imply: {:?}\n{stderr}",
                describe(missing),
                capture.termination(log),
            );
            reports.push(format!(
                "without {:<60} runs: Read or Write on it imply Describe",
                describe(missing)
            ));
            continue;
        }
        assert_ne!(
            output.status.code(),
            Some(0),
            "without {} the capture still ran: {stderr}",
            describe(missing)
        );
        let stop: Value = capture.termination(log).unwrap_or_else(|| {
            panic!(
                "without {}: no typed stop ({log}): {stderr}",
                describe(missing)
            )
        });
        assert_eq!(
            stop["code"],
            "CDC-5004",
            "without {}: {stop}",
            describe(missing)
        );
        assert_eq!(
            stop["details"]["resource"],
            resource_name(missing.resource),
            "without {}: {stop}",
            describe(missing)
        );
        assert_eq!(
            stop["details"]["operation"],
            missing.operation.to_string(),
            "without {}: {stop}",
            describe(missing)
        );
        let name = stop["details"]["name"].as_str().unwrap_or_default();
        let named = match missing.pattern {
            Pattern::Literal => name == missing.name,
            Pattern::Prefixed => name.starts_with(&missing.name),
        };
        assert!(named, "without {}: {stop}", describe(missing));
        reports.push(format!(
            "without {:<60} stop in the {log} run: {} {} {}",
            describe(missing),
            stop["details"]["operation"],
            stop["details"]["resource"],
            stop["details"]["name"],
        ));
    }
    println!("{}", reports.join("\n"));
    println!(
        "{} rules; granting the complete case took {granted:?}, all cases {cases_granted:?}, \
         everything {:?}",
        rules.len(),
        started.elapsed()
    );
}
