use super::*;
use crate::config;

const PRINCIPAL: &str = "User:capture";

fn config(extra: &str) -> CaptureConfig {
    let text = format!(
        "name: orders\nnamespace: sales\ndatabase: {{simulator: {{scenario: s.jsonl}}}}\n\
         tables: [APP.ORDERS]\n{extra}"
    );
    config::parse(&text, &[]).unwrap()
}

fn kafka(fields: &str) -> String {
    format!("kafka: {{bootstrapServers: 'b:9092', topicPrefix: sales{fields}}}\n")
}

/// `(resource, pattern, name, operation)` of every rule, in order.
fn shape(rules: &[AclRule]) -> Vec<(ResourceKind, Pattern, String, Operation)> {
    rules
        .iter()
        .map(|r| (r.resource, r.pattern, r.name.clone(), r.operation))
        .collect()
}

fn has(rules: &[AclRule], resource: ResourceKind, name: &str, operation: Operation) -> bool {
    rules.iter().any(|r| r.covers(resource, name, operation))
}

use Operation::*;
use Pattern::*;
use ResourceKind::*;

#[test]
fn exactly_once_defaults_need_the_prefix_internal_topics_groups_and_the_transactional_id() {
    let rules = required_acls(&config(&kafka("")), PRINCIPAL);
    let t = |p, name: &str, o| (Topic, p, name.to_owned(), o);
    let mut expected = vec![
        t(Prefixed, "sales.", Describe),
        t(Prefixed, "sales.", Write),
        t(Prefixed, "sales.", Create),
        // The schema change topic is the prefix itself (Debezium's include.schema.changes).
        t(Literal, "sales", Describe),
        t(Literal, "sales", Write),
        t(Literal, "sales", Create),
    ];
    // Describe, Write and Create of the internal topics come with the prefix.
    for topic in [
        "sales.redoline.offsets",
        "sales.cdc.txjournal",
        "sales.redoline.schema-history",
        "sales.redoline.ops",
        "sales.redoline.dlq",
    ] {
        expected.push(t(Literal, topic, DescribeConfigs));
    }
    for topic in [
        "sales.redoline.offsets",
        "sales.cdc.txjournal",
        "sales.redoline.schema-history",
    ] {
        expected.push(t(Literal, topic, Read));
        expected.push((Group, Literal, format!("redoline-reader-{topic}"), Describe));
    }
    expected.push((
        TransactionalId,
        Literal,
        "redoline/sales/orders".into(),
        Describe,
    ));
    expected.push((
        TransactionalId,
        Literal,
        "redoline/sales/orders".into(),
        Write,
    ));
    assert_eq!(shape(&rules), expected);
    assert!(
        rules
            .iter()
            .all(|r| r.principal == PRINCIPAL && r.host == "*")
    );
    assert!(
        !rules
            .iter()
            .any(|r| r.operation == IdempotentWrite || r.resource == Cluster)
    );
    // Transactional: no broker needs IdempotentWrite.
    assert_eq!(
        legacy_idempotent_write(&config(&kafka("")), PRINCIPAL),
        None
    );
}

#[test]
fn at_least_once_has_no_transactional_id_and_needs_idempotent_write_only_before_kafka_2_8() {
    let config = config(&kafka(", exactlyOnce: false"));
    let rules = required_acls(&config, PRINCIPAL);
    assert!(!rules.iter().any(|r| r.resource == TransactionalId));
    assert!(has(&rules, Topic, "sales.APP.ORDERS", Write));
    let legacy = legacy_idempotent_write(&config, PRINCIPAL).unwrap();
    assert_eq!(
        (legacy.resource, legacy.name.as_str(), legacy.operation),
        (Cluster, "kafka-cluster", IdempotentWrite)
    );
}

#[test]
fn a_journal_topic_outside_the_prefix_gets_literal_rules_and_its_reader_group() {
    let rules = required_acls(
        &config(&format!(
            "{}journal: {{topic: shared.journal}}\n",
            kafka("")
        )),
        PRINCIPAL,
    );
    for operation in [Describe, Write, Create, DescribeConfigs, Read] {
        assert!(
            rules.iter().any(|r| r.pattern == Literal
                && r.name == "shared.journal"
                && r.operation == operation),
            "{operation}"
        );
    }
    assert!(has(
        &rules,
        Group,
        "redoline-reader-shared.journal",
        Describe
    ));
    assert!(!has(&rules, Topic, "sales.cdc.txjournal", Read));
}

#[test]
fn heartbeats_add_their_topic_only_when_on() {
    let off = required_acls(&config(&kafka("")), PRINCIPAL);
    assert!(!off.iter().any(|r| r.name.contains("heartbeat")));
    let on = required_acls(
        &config(&format!(
            "{}heartbeat: {{intervalSeconds: 10}}\n",
            kafka("")
        )),
        PRINCIPAL,
    );
    for operation in [Describe, Write, Create] {
        assert!(has(&on, Topic, "__debezium-heartbeat.sales", operation));
    }
    assert_eq!(on.len(), off.len() + 3);
}

#[test]
fn external_data_topics_need_no_create_but_internal_topics_still_do() {
    let rules = required_acls(
        &config(&kafka(", topics: {data: {creation: external}}")),
        PRINCIPAL,
    );
    assert!(!has(&rules, Topic, "sales.APP.ORDERS", Create));
    assert!(!has(&rules, Topic, "sales", Create));
    for topic in ["sales.redoline.offsets", "sales.redoline.dlq"] {
        assert!(has(&rules, Topic, topic, Create), "{topic}");
    }
    // Broker auto-creation checks Create on the topic as well.
    let broker = required_acls(
        &config(&kafka(", topics: {data: {creation: broker}}")),
        PRINCIPAL,
    );
    assert!(has(&broker, Topic, "sales.APP.ORDERS", Create));
}

#[test]
fn the_schema_change_topic_only_with_debezium_schema_changes() {
    for format in [
        "format: {type: compact}\n",
        "format: {includeSchemaChanges: false}\n",
    ] {
        let rules = required_acls(&config(&format!("{}{format}", kafka(""))), PRINCIPAL);
        assert!(!has(&rules, Topic, "sales", Write), "{format}");
    }
}

#[test]
fn snapshots_write_the_data_topics_and_need_nothing_more() {
    let streaming = required_acls(
        &config(&format!("{}snapshot: {{mode: never}}\n", kafka(""))),
        PRINCIPAL,
    );
    let snapshot = required_acls(
        &config(&format!("{}snapshot: {{mode: initial}}\n", kafka(""))),
        PRINCIPAL,
    );
    assert_eq!(streaming, snapshot);
}

#[test]
fn a_file_sink_needs_no_acls() {
    let config = config("file: {path: out.jsonl}\n");
    assert!(required_acls(&config, PRINCIPAL).is_empty());
    assert!(legacy_idempotent_write(&config, PRINCIPAL).is_none());
}

#[test]
fn kafka_acls_arguments_and_commands() {
    let rules = required_acls(&config(&kafka("")), PRINCIPAL);
    assert_eq!(
        rules[0].kafka_acls_args("b:9092"),
        [
            "--bootstrap-server",
            "b:9092",
            "--add",
            "--allow-principal",
            "User:capture",
            "--allow-host",
            "*",
            "--operation",
            "Describe",
            "--topic",
            "sales.",
            "--resource-pattern-type",
            "prefixed"
        ]
    );
    let cluster = AclRule::new(
        PRINCIPAL,
        Cluster,
        Literal,
        CLUSTER_NAME,
        IdempotentWrite,
        "",
    );
    assert_eq!(
        cluster.kafka_acls_args("b:9092")[7..],
        ["--operation", "IdempotentWrite", "--cluster"]
    );
    let commands = kafka_acls_commands(&rules, "b:9092");
    assert_eq!(commands.lines().count(), rules.len());
    assert!(
        commands.starts_with(
            "kafka-acls.sh --bootstrap-server b:9092 --add --allow-principal User:capture \
             --allow-host '*' --operation Describe --topic sales. --resource-pattern-type prefixed\n"
        ),
        "{commands}"
    );
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
}

#[test]
fn strimzi_block_has_one_acl_per_resource_with_its_operations() {
    let rules = required_acls(&config(&kafka("")), PRINCIPAL);
    let block = strimzi_authorization(&rules);
    assert_eq!(block["type"], "simple");
    let acls = block["acls"].as_array().unwrap();
    assert_eq!(
        acls[0],
        serde_json::json!({
            "resource": {"type": "topic", "name": "sales.", "patternType": "prefix"},
            "operations": ["Describe", "Write", "Create"],
            "host": "*",
        })
    );
    let offsets = acls
        .iter()
        .find(|a| a["resource"]["name"] == "sales.redoline.offsets")
        .unwrap();
    assert_eq!(
        offsets["operations"],
        serde_json::json!(["DescribeConfigs", "Read"])
    );
    let id = acls
        .iter()
        .find(|a| a["resource"]["type"] == "transactionalId")
        .unwrap();
    assert_eq!(id["resource"]["name"], "redoline/sales/orders");
    assert_eq!(id["operations"], serde_json::json!(["Describe", "Write"]));
    // Every rule is in the block once.
    let total: usize = acls
        .iter()
        .map(|a| a["operations"].as_array().unwrap().len())
        .sum();
    assert_eq!(total, rules.len());
}
