//! Test files may panic: a failed expectation here is a failed test.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

//!
//! The OracleCapture CRD on a real kube-apiserver: it is accepted, the sample resource is created
//! with the documented defaults filled in server-side, each invalid spec is refused by the
//! apiserver with a message naming the field, and `kubectl explain` / `kubectl get` show the
//! descriptions and printer columns.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::{LastStop, OracleCaptureStatus, Position};
use redoline_tests::k8s::{KubeEnv, apply_crd};
use serde_json::{Value, json};

const SAMPLE: &str = include_str!("../../../crds/examples/oraclecapture.yaml");

async fn setup(test: &str) -> (KubeEnv2, Api<DynamicObject>) {
    let env = KubeEnv::shared().expect("control plane");
    let client = env.client().await.expect("client");
    apply_crd(&client, &redoline_crds::crd())
        .await
        .expect("CRD applies and becomes Established");
    let ns = env.namespace(test).await.expect("namespace");
    let resource = ApiResource::erase::<OracleCapture>(&());
    let api = Api::namespaced_with(client, &ns.name, &resource);
    (KubeEnv2 { env, ns: ns.name }, api)
}

struct KubeEnv2 {
    env: &'static KubeEnv,
    ns: String,
}

/// The smallest valid spec, as JSON, so each case below changes one thing.
fn minimal_spec() -> Value {
    json!({
        "database": {"host": "db", "serviceName": "PDB1", "credentialsSecret": {"name": "db"}},
        "tables": ["APP.ORDERS"],
        "kafka": {"bootstrapServers": "kafka:9092", "topicPrefix": "app"}
    })
}

fn object(name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "redoline.io/v1alpha1",
        "kind": "OracleCapture",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("object")
}

/// Sets `value` at the dotted `path` of `spec` (a `null` value removes the member).
fn with(mut spec: Value, path: &str, value: Value) -> Value {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop().expect("path");
    let mut node = &mut spec;
    for part in parts {
        node = node
            .as_object_mut()
            .expect("object on path")
            .entry(part)
            .or_insert_with(|| json!({}));
    }
    let map = node.as_object_mut().expect("object at path end");
    if value.is_null() {
        map.remove(last);
    } else {
        map.insert(last.to_owned(), value);
    }
    spec
}

#[tokio::test]
async fn sample_is_created_and_defaults_are_filled_in_by_the_apiserver() {
    let (_env, api) = setup("crd-sample").await;

    let mut sample: DynamicObject = serde_norway::from_str(SAMPLE).expect("sample parses");
    sample.metadata.namespace = None;
    let created = api
        .create(&PostParams::default(), &sample)
        .await
        .expect("sample accepted");
    let typed: OracleCapture =
        serde_json::from_value(serde_json::to_value(&created).expect("json")).expect("typed");
    assert_eq!(typed.spec.tables.len(), 3);

    let minimal = api
        .create(&PostParams::default(), &object("minimal", minimal_spec()))
        .await
        .expect("minimal spec accepted");
    let spec = &minimal.data["spec"];
    assert_eq!(spec["database"]["port"], 1521);
    assert_eq!(spec["buffer"]["memoryMaxBytes"], "256Mi");
    assert_eq!(spec["buffer"]["spill"]["maxBytes"], "10Gi");
    assert_eq!(spec["journal"]["thresholdSeconds"], 300);
    assert_eq!(spec["journal"]["chunkMaxBytes"], "512Ki");
    assert_eq!(spec["transactions"]["orphanAction"], "release");
    assert_eq!(spec["transactions"]["maxStagedRecords"], 1_000_000);
    assert_eq!(spec["transactions"]["releasedLedgerMaxEntries"], 4096);
    assert_eq!(spec["mining"]["maxScnWindow"], 500_000);
    assert_eq!(spec["mining"]["flushTable"], "REDOLINE_LOGMNR_FLUSH");
    assert_eq!(spec["mining"]["sessionMaxSeconds"], 3600);
    assert_eq!(spec["mining"]["minScnWindow"], 1000);
    assert_eq!(spec["mining"]["windowMaxSeconds"], 60);
    assert_eq!(spec["mining"]["sessionPgaMaxBytes"], "1Gi");
    assert_eq!(spec["format"]["type"], "debezium");
    assert_eq!(spec["startPosition"]["type"], "current");
    assert_eq!(spec["snapshot"]["mode"], "initial");
    assert_eq!(spec["kafka"]["exactlyOnce"], true);

    // Sizes may be byte counts or any quantity the apiserver understands.
    for (name, size) in [
        ("bytes", json!(268_435_456)),
        ("decimal", json!("1.5Gi")),
        ("exp", json!("5e8")),
    ] {
        api.create(
            &PostParams::default(),
            &object(
                &format!("size-{name}"),
                with(minimal_spec(), "buffer.memoryMaxBytes", size),
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("size {name} refused: {e}"));
    }
}

#[tokio::test]
async fn invalid_specs_are_refused_with_a_message_naming_the_field() {
    let (_env, api) = setup("crd-invalid").await;

    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "no tables",
            with(minimal_spec(), "tables", json!([])),
            "choose the captured tables",
        ),
        (
            "tables missing",
            with(minimal_spec(), "tables", Value::Null),
            "choose the captured tables",
        ),
        (
            "none with other skipped operations",
            with(
                minimal_spec(),
                "format.skippedOperations",
                json!(["t", "none"]),
            ),
            "none cannot be combined",
        ),
        (
            "unknown skipped operation",
            with(minimal_spec(), "format.skippedOperations", json!(["r"])),
            "spec.format.skippedOperations[0]",
        ),
        (
            "username include and exclude lists",
            with(
                minimal_spec(),
                "filters",
                json!({"usernameIncludeList": ["APP"], "usernameExcludeList": ["ETL"]}),
            ),
            "set at most one of spec.filters.usernameIncludeList",
        ),
        (
            "schema include and exclude lists",
            with(
                minimal_spec(),
                "filters",
                json!({"schemaIncludeList": ["APP"], "schemaExcludeList": ["HR"]}),
            ),
            "set at most one of spec.filters.schemaIncludeList",
        ),
        (
            "avro with the compact format",
            with(
                with(minimal_spec(), "format.type", json!("compact")),
                "format.encoding",
                json!("avro"),
            ),
            "spec.format.encoding avro writes Debezium records",
        ),
        (
            "unknown encoding",
            with(minimal_spec(), "format.encoding", json!("protobuf")),
            "spec.format.encoding",
        ),
        (
            "column list with the compact format",
            with(
                with(minimal_spec(), "format.type", json!("compact")),
                "filters.columnExcludeList",
                json!(["APP\\.ORDERS\\.CARD"]),
            ),
            "spec.filters.columnExcludeList shapes Debezium records: it needs spec.format.type debezium",
        ),
        (
            "unknown hash algorithm",
            with(
                minimal_spec(),
                "columns.maskHash",
                json!([{"algorithm": "SHA-257", "salt": "s", "columns": ["A"]}]),
            ),
            "spec.columns.maskHash[0].algorithm",
        ),
        (
            "hash algorithm with a trailing space (the JDK does not trim)",
            with(
                minimal_spec(),
                "columns.maskHash",
                json!([{"algorithm": "SHA-256 ", "salt": "s", "columns": ["A"]}]),
            ),
            "MessageDigest names",
        ),
        (
            "table without owner",
            with(minimal_spec(), "tables", json!(["ORDERS"])),
            "must be OWNER.TABLE",
        ),
        (
            "table with three parts",
            with(minimal_spec(), "tables", json!(["APP.ORDERS.X"])),
            "spec.tables[0]",
        ),
        (
            "table with a space",
            with(minimal_spec(), "tables", json!(["APP.MY ORDERS"])),
            "must be OWNER.TABLE",
        ),
        (
            "duplicate tables",
            with(minimal_spec(), "tables", json!(["APP.A", "APP.A"])),
            "Duplicate value",
        ),
        (
            "serviceName and connectString",
            with(
                minimal_spec(),
                "database.connectString",
                json!("db:1521/PDB1"),
            ),
            "set exactly one of spec.database.serviceName and spec.database.connectString",
        ),
        (
            "neither serviceName nor connectString",
            with(minimal_spec(), "database.serviceName", Value::Null),
            "set exactly one of spec.database.serviceName and spec.database.connectString",
        ),
        (
            "serviceName without host",
            with(minimal_spec(), "database.host", Value::Null),
            "spec.database.host is required",
        ),
        (
            "port out of range",
            with(minimal_spec(), "database.port", json!(70000)),
            "spec.database.port",
        ),
        (
            "no credentials",
            with(minimal_spec(), "database.credentialsSecret", Value::Null),
            "spec.database.credentialsSecret: Required value",
        ),
        (
            "unknown format",
            with(minimal_spec(), "format.type", json!("avro")),
            "spec.format.type: Unsupported value: \"avro\"",
        ),
        (
            "unknown binary handling mode",
            with(minimal_spec(), "format.binaryHandlingMode", json!("octal")),
            "spec.format.binaryHandlingMode: Unsupported value",
        ),
        (
            "unknown snapshot mode",
            with(minimal_spec(), "snapshot.mode", json!("sometimes")),
            "spec.snapshot.mode: Unsupported value",
        ),
        (
            "unknown orphan action",
            with(minimal_spec(), "transactions.orphanAction", json!("ignore")),
            "spec.transactions.orphanAction: Unsupported value",
        ),
        (
            "unknown age action",
            with(minimal_spec(), "transactions.maxAgeAction", json!("warn")),
            "spec.transactions.maxAgeAction: Unsupported value",
        ),
        (
            "unknown onUnsupported",
            with(minimal_spec(), "mining.onUnsupported", json!("ignore")),
            "spec.mining.onUnsupported: Unsupported value",
        ),
        (
            "unknown start position",
            with(
                minimal_spec(),
                "startPosition",
                json!({"type": "yesterday"}),
            ),
            "spec.startPosition.type: Unsupported value",
        ),
        (
            "scn type without scn",
            with(minimal_spec(), "startPosition", json!({"type": "scn"})),
            "spec.startPosition.scn is required with type scn",
        ),
        (
            "reposition to SCN 0",
            with(
                minimal_spec(),
                "reposition",
                json!({"id": "restore-1", "scn": 0}),
            ),
            "spec.reposition.scn: Invalid value",
        ),
        (
            "reposition id that is no DNS-like name",
            with(
                minimal_spec(),
                "reposition",
                json!({"id": "Restore_1", "scn": 42}),
            ),
            "spec.reposition.id: Invalid value",
        ),
        (
            "reposition without an id",
            with(minimal_spec(), "reposition", json!({"scn": 42})),
            "spec.reposition.id: Required value",
        ),
        (
            "heartbeat action query without an interval",
            with(
                minimal_spec(),
                "heartbeat",
                json!({"actionQuery": "UPDATE APP.BEAT SET N = 1"}),
            ),
            "spec.heartbeat.actionQuery needs spec.heartbeat.intervalSeconds above 0",
        ),
        (
            "heartbeat action query on a read-only capture",
            with(
                with(
                    minimal_spec(),
                    "heartbeat",
                    json!({"intervalSeconds": 5, "actionQuery": "UPDATE APP.BEAT SET N = 1"}),
                ),
                "mining",
                json!({"readOnly": true}),
            ),
            "not allowed with spec.mining.readOnly",
        ),
        (
            "scn with type current",
            with(
                minimal_spec(),
                "startPosition",
                json!({"type": "current", "scn": 42}),
            ),
            "spec.startPosition.scn is required with type scn",
        ),
        (
            "select override of a table not captured",
            with(
                minimal_spec(),
                "snapshot",
                json!({"selectOverrides": {"APP.ITEMS": "ID > 5"}}),
            ),
            "every key of spec.snapshot.selectOverrides must be one of spec.tables",
        ),
        (
            "snapshot request of a table not captured",
            with(
                minimal_spec(),
                "snapshot",
                json!({"requests": [{"id": "again", "tables": ["APP.ITEMS"]}]}),
            ),
            "every table of spec.snapshot.requests must be one of spec.tables",
        ),
        (
            "snapshot fetch size zero",
            with(minimal_spec(), "snapshot", json!({"fetchSize": 0})),
            "spec.snapshot.fetchSize",
        ),
        (
            "snapshot readers zero",
            with(minimal_spec(), "snapshot", json!({"maxThreads": 0})),
            "spec.snapshot.maxThreads",
        ),
        (
            "snapshot readers leave no connection to mining",
            with(minimal_spec(), "snapshot", json!({"maxThreads": 2})),
            redoline_crds::v1alpha1::SNAPSHOT_THREADS,
        ),
        (
            "spill cap above volume size",
            with(
                minimal_spec(),
                "buffer.spill",
                json!({"size": "10Gi", "maxBytes": "20Gi"}),
            ),
            "spec.buffer.spill.maxBytes must not exceed spec.buffer.spill.size",
        ),
        (
            "spill cap above volume size in bytes",
            with(
                minimal_spec(),
                "buffer.spill",
                json!({"size": 1_000_000, "maxBytes": "1Mi"}),
            ),
            "spec.buffer.spill.maxBytes must not exceed spec.buffer.spill.size",
        ),
        (
            "memory budget under 16Mi",
            with(minimal_spec(), "buffer.memoryMaxBytes", json!("8Mi")),
            "spec.buffer.memoryMaxBytes must be at least 16Mi",
        ),
        (
            "memory budget as small integer",
            with(minimal_spec(), "buffer.memoryMaxBytes", json!(1000)),
            "spec.buffer.memoryMaxBytes must be at least 16Mi",
        ),
        (
            "memory budget not a size",
            with(minimal_spec(), "buffer.memoryMaxBytes", json!("lots")),
            "spec.buffer.memoryMaxBytes must be a byte count or a quantity",
        ),
        (
            "spill size not a size",
            with(minimal_spec(), "buffer.spill.size", json!("big")),
            "spec.buffer.spill.size must be a byte count or a quantity",
        ),
        (
            "journal chunk too large",
            with(minimal_spec(), "journal.chunkMaxBytes", json!("64Mi")),
            "spec.journal.chunkMaxBytes must be between 1Ki and 16Mi",
        ),
        (
            "journal threshold zero",
            with(minimal_spec(), "journal.thresholdSeconds", json!(0)),
            "spec.journal.thresholdSeconds",
        ),
        (
            "bad topic prefix",
            with(minimal_spec(), "kafka.topicPrefix", json!("orders/prod")),
            "spec.kafka.topicPrefix may hold only",
        ),
        (
            "no kafka",
            with(minimal_spec(), "kafka", Value::Null),
            "spec.kafka: Required value",
        ),
        (
            "staged records zero",
            with(minimal_spec(), "transactions.maxStagedRecords", json!(0)),
            "spec.transactions.maxStagedRecords",
        ),
        (
            "staged total above limit",
            with(
                minimal_spec(),
                "transactions.maxStagedRecordsTotal",
                json!(2_000_000),
            ),
            "spec.transactions.maxStagedRecordsTotal",
        ),
        (
            "released ledger above its bound",
            with(
                minimal_spec(),
                "transactions.releasedLedgerMaxEntries",
                json!(8193),
            ),
            "spec.transactions.releasedLedgerMaxEntries",
        ),
        (
            "one database session",
            with(minimal_spec(), "database.maxConnections", json!(1)),
            "spec.database.maxConnections",
        ),
        (
            "SLA of zero seconds",
            with(minimal_spec(), "sla", json!({"maxLagSeconds": 0})),
            "spec.sla.maxLagSeconds",
        ),
        (
            "SCN window too small",
            with(minimal_spec(), "mining.maxScnWindow", json!(10)),
            "spec.mining.maxScnWindow",
        ),
        (
            "bad flush table",
            with(minimal_spec(), "mining.flushTable", json!("drop table x;")),
            "spec.mining.flushTable",
        ),
        (
            "window floor above the window",
            with(minimal_spec(), "mining.minScnWindow", json!(600_000)),
            "spec.mining.minScnWindow must not exceed spec.mining.maxScnWindow",
        ),
        (
            "window bound over an hour",
            with(minimal_spec(), "mining.windowMaxSeconds", json!(3601)),
            "spec.mining.windowMaxSeconds",
        ),
        (
            "session PGA bound in bytes meant as MiB",
            with(minimal_spec(), "mining.sessionPgaMaxBytes", json!(1024)),
            "spec.mining.sessionPgaMaxBytes must be 0 (no bound) or at least 16Mi",
        ),
        (
            "mining session kept over a day",
            with(minimal_spec(), "mining.sessionMaxSeconds", json!(86_401)),
            "spec.mining.sessionMaxSeconds",
        ),
        (
            "internal topics needing more in-sync replicas than they have",
            with(
                minimal_spec(),
                "kafka.topics",
                json!({"internal": {"replicationFactor": 2, "minInsyncReplicas": 3}}),
            ),
            "spec.kafka.topics.internal.minInsyncReplicas must not exceed replicationFactor",
        ),
        (
            "data topic settings the capture would not apply",
            with(
                minimal_spec(),
                "kafka.topics",
                json!({"data": {"creation": "external", "partitions": 6}}),
            ),
            "partitions, replicationFactor and config apply only with creation: capture",
        ),
        (
            "data topics needing more in-sync replicas than they have",
            with(
                minimal_spec(),
                "kafka.topics",
                json!({"data": {"replicationFactor": 1, "config": {"min.insync.replicas": "2"}}}),
            ),
            "config min.insync.replicas must not exceed replicationFactor",
        ),
        (
            "a topic config name Kafka does not spell so",
            with(
                minimal_spec(),
                "kafka.topics",
                json!({"data": {"config": {"Retention_MS": "1"}}}),
            ),
            "spec.kafka.topics.data.config",
        ),
    ];

    let mut failures = Vec::new();
    for (i, (name, spec, expected)) in cases.iter().enumerate() {
        match api
            .create(
                &PostParams::default(),
                &object(&format!("invalid-{i}"), spec.clone()),
            )
            .await
        {
            Ok(_) => failures.push(format!("{name}: accepted")),
            Err(kube::Error::Api(status)) if status.code == 422 => {
                if !status.message.contains(expected) {
                    failures.push(format!(
                        "{name}: message does not contain {expected:?}: {}",
                        status.message
                    ));
                }
            }
            Err(other) => failures.push(format!("{name}: unexpected error {other}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Any name Java's MessageDigest accepts, in any case, as Debezium's `column.mask.hash.v2.*`.
#[tokio::test]
async fn hash_algorithms_are_accepted_as_the_jdk_accepts_them() {
    let (_env, api) = setup("crd-hash").await;
    for (i, name) in [
        "MD5",
        "sha1",
        "SHA",
        "sha-512/256",
        "Sha3-512",
        "SHA512/224",
    ]
    .iter()
    .enumerate()
    {
        let spec = with(
            minimal_spec(),
            "columns.maskHash",
            json!([{"algorithm": name, "salt": "s", "columns": ["A"]}]),
        );
        api.create(&PostParams::default(), &object(&format!("hash-{i}"), spec))
            .await
            .unwrap_or_else(|e| panic!("{name} refused: {e}"));
    }
}

/// `spec.kafka.tls` and `spec.kafka.authentication` as Strimzi users write them are accepted,
/// and each type's missing or foreign field is refused naming it.
#[tokio::test]
async fn kafka_authentication_rules_hold_on_the_apiserver() {
    let (_env, api) = setup("crd-kafka-auth").await;
    let kafka = |block: Value| {
        let mut spec = minimal_spec();
        spec["kafka"]
            .as_object_mut()
            .unwrap()
            .extend(block.as_object().unwrap().clone());
        spec
    };
    let cluster_ca = json!({"trustedCertificates": [
        {"secretName": "my-cluster-cluster-ca-cert", "pattern": "*.crt"}]});
    let accepted = [
        json!({"tls": cluster_ca}),
        json!({"tls": {}}),
        json!({"tls": cluster_ca, "authentication": {"type": "tls", "certificateAndKey":
            {"secretName": "capture", "certificate": "user.crt", "key": "user.key"}}}),
        json!({"tls": cluster_ca, "authentication": {"type": "scram-sha-512", "username": "capture",
            "passwordSecret": {"secretName": "capture", "password": "password"}}}),
        json!({"authentication": {"type": "plain", "username": "capture",
            "passwordSecret": {"secretName": "capture", "password": "password"}}}),
        json!({"tls": {}, "authentication": {"type": "oauth", "clientId": "capture",
            "clientSecret": {"secretName": "idp", "key": "secret"},
            "tokenEndpointUri": "https://idp.example/realms/kafka/protocol/openid-connect/token",
            "scope": "kafka", "saslExtensions": {"logicalCluster": "lkc-1"},
            "tlsTrustedCertificates": [{"secretName": "idp-ca", "certificate": "ca.crt"}]}}),
        json!({"authentication": {"type": "gssapi", "principal": "capture/host@EXAMPLE.COM",
            "keytabSecret": {"secretName": "keytab", "key": "capture.keytab"},
            "krb5Config": {"configMapName": "krb5"}, "serviceName": "kafka"}}),
    ];
    // The Strimzi example as shipped.
    let example = include_str!("../../../crds/examples/oraclecapture-strimzi.yaml");
    let capture = example
        .split("\n---\n")
        .find(|doc| doc.contains("kind: OracleCapture"))
        .expect("the example has an OracleCapture");
    let mut capture: DynamicObject = serde_norway::from_str(capture).expect("example parses");
    capture.metadata.namespace = None;
    api.create(&PostParams::default(), &capture)
        .await
        .unwrap_or_else(|e| panic!("the Strimzi example is refused: {e}"));
    for (i, block) in accepted.iter().enumerate() {
        api.create(
            &PostParams::default(),
            &object(&format!("kafka-auth-{i}"), kafka(block.clone())),
        )
        .await
        .unwrap_or_else(|e| panic!("{block} refused: {e}"));
    }

    let password = json!({"secretName": "capture", "password": "password"});
    let refused = [
        (
            json!({"authentication": {"type": "tls", "certificateAndKey":
                {"secretName": "c", "certificate": "user.crt", "key": "user.key"}}}),
            "type tls needs spec.kafka.tls",
        ),
        (
            json!({"tls": {}, "authentication": {"type": "tls"}}),
            "spec.kafka.authentication.certificateAndKey is required with type tls",
        ),
        (
            json!({"authentication": {"type": "scram-sha-256", "passwordSecret": password}}),
            "spec.kafka.authentication.username is required",
        ),
        (
            json!({"authentication": {"type": "plain", "username": "u"}}),
            "spec.kafka.authentication.passwordSecret is required",
        ),
        (
            json!({"authentication": {"type": "scram-sha-512", "username": "u",
                "passwordSecret": password, "scope": "kafka"}}),
            "spec.kafka.authentication.scope is allowed only with type oauth",
        ),
        (
            json!({"authentication": {"type": "oauth", "clientId": "c",
                "clientSecret": {"secretName": "s", "key": "k"}}}),
            "spec.kafka.authentication.tokenEndpointUri is required",
        ),
        (
            json!({"authentication": {"type": "oauth", "clientId": "c",
                "clientSecret": {"secretName": "s", "key": "k"}, "tokenEndpointUri": "idp/token"}}),
            "spec.kafka.authentication.tokenEndpointUri must be an http:// or https:// URL",
        ),
        (
            json!({"authentication": {"type": "oauth", "clientId": "c",
                "clientSecret": {"secretName": "s", "key": "k"},
                "tokenEndpointUri": "https://i/t", "saslExtensions": {"auth": "x"}}}),
            "spec.kafka.authentication.saslExtensions",
        ),
        (
            json!({"authentication": {"type": "gssapi",
                "keytabSecret": {"secretName": "k", "key": "capture.keytab"}}}),
            "spec.kafka.authentication.principal is required",
        ),
        (
            json!({"authentication": {"type": "gssapi", "principal": "p \"x\"",
                "keytabSecret": {"secretName": "k", "key": "capture.keytab"}}}),
            "spec.kafka.authentication.principal",
        ),
        (
            json!({"authentication": {"type": "gssapi", "principal": "p",
                "keytabSecret": {"secretName": "k", "key": "k"},
                "krb5Config": {"configMapName": "a", "secretName": "b"}}}),
            "set exactly one of configMapName and secretName",
        ),
        (
            json!({"authentication": {"type": "gssapi", "principal": "p",
                "keytabSecret": {"secretName": "k", "key": "k"}, "serviceName": "kafka/broker"}}),
            "spec.kafka.authentication.serviceName",
        ),
        (
            json!({"authentication": {"type": "plain", "username": "u", "passwordSecret": password,
                "serviceName": "kafka"}}),
            "spec.kafka.authentication.serviceName is allowed only with type gssapi",
        ),
        (
            json!({"tls": {"trustedCertificates": [{"secretName": "ca"}]}}),
            "set exactly one of certificate and pattern",
        ),
        (
            json!({"tls": {"trustedCertificates": [
                {"secretName": "ca", "certificate": "ca.crt", "pattern": "*.crt"}]}}),
            "set exactly one of certificate and pattern",
        ),
        (
            json!({"tls": {"trustedCertificates": [{"secretName": "ca", "certificate": "../ca.crt/x"}]}}),
            "spec.kafka.tls.trustedCertificates[0].certificate",
        ),
        (
            json!({"authentication": {"type": "kerberos"}}),
            "spec.kafka.authentication.type",
        ),
    ];
    let mut failures = Vec::new();
    for (i, (block, expected)) in refused.iter().enumerate() {
        match api
            .create(
                &PostParams::default(),
                &object(&format!("kafka-auth-bad-{i}"), kafka(block.clone())),
            )
            .await
        {
            Ok(_) => failures.push(format!("{block}: accepted")),
            Err(kube::Error::Api(status)) if status.code == 422 => {
                if !status.message.contains(expected) {
                    failures.push(format!(
                        "{block}: message does not contain {expected:?}: {}",
                        status.message
                    ));
                }
            }
            Err(other) => failures.push(format!("{block}: unexpected error {other}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn schema_and_table_lists_may_replace_the_table_list() {
    let (_env, api) = setup("crd-lists").await;
    let spec = with(
        with(minimal_spec(), "tables", Value::Null),
        "filters.schemaIncludeList",
        json!(["APP"]),
    );
    api.create(&PostParams::default(), &object("lists", spec))
        .await
        .expect("a schema list chooses the tables");
    // With a list choosing the tables, a request may name a table spec.tables does not list:
    // the capture finds it among what the lists choose.
    let requested = with(
        with(
            minimal_spec(),
            "filters.tableIncludeList",
            json!(["APP\\..*"]),
        ),
        "snapshot",
        json!({"requests": [{"id": "again", "tables": ["APP.ITEMS"]}]}),
    );
    api.create(&PostParams::default(), &object("lists-request", requested))
        .await
        .expect("a table list lets a request name a table it chooses");
}

#[tokio::test]
async fn explain_and_printer_columns_are_useful() {
    let (env, api) = setup("crd-kubectl").await;

    // API discovery can trail the CRD's Established condition by a moment.
    let mut explain = env
        .env
        .kubectl()
        .args(["explain", "oraclecapture.spec.buffer"])
        .output()
        .expect("kubectl runs");
    for _ in 0..30 {
        if explain.status.success() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        explain = env
            .env
            .kubectl()
            .args(["explain", "oraclecapture.spec.buffer"])
            .output()
            .expect("kubectl runs");
    }
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(
        explain.status.success(),
        "{}",
        String::from_utf8_lossy(&explain.stderr)
    );
    assert!(text.contains("heap budget"), "{text}");
    assert!(text.contains("memoryMaxBytes"), "{text}");
    assert!(text.contains("Heap budget for buffered changes"), "{text}");

    api.create(&PostParams::default(), &object("columns", minimal_spec()))
        .await
        .expect("created");
    // The status subresource takes the status written by the operator.
    let typed: Api<OracleCapture> = Api::namespaced(api.clone().into_client(), &env.ns);
    let status = OracleCaptureStatus {
        observed_generation: Some(1),
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: "False".into(),
            reason: "SpillCapacityExceeded".into(),
            message: "CDC-4001 spill cap exceeded".into(),
            last_transition_time: Time(jiff_now()),
            observed_generation: Some(1),
        }],
        phase: None,
        position: Some(Position {
            commit_scn: Some(9_876_543_210),
            restart_scn: Some(9_876_500_000),
            commit_time: Some(Time(jiff_now())),
        }),
        lag_seconds: Some(12.5),
        last_stop: Some(LastStop {
            code: "CDC-4001".into(),
            reason: "SpillCapacityExceeded".into(),
            message: "spill cap exceeded".into(),
            at: Time(jiff_now()),
        }),
        active_stop: Some("CDC-4001".into()),
        snapshot: None,
        reposition: None,
        archived_redo: None,
    };
    typed
        .patch_status(
            "columns",
            &PatchParams::apply("redoline-tests").force(),
            &Patch::Apply(json!({
                "apiVersion": "redoline.io/v1alpha1",
                "kind": "OracleCapture",
                "status": status,
            })),
        )
        .await
        .expect("status subresource accepts the status");

    let get = env
        .env
        .kubectl()
        .args(["get", "ocap", "columns", "-n", &env.ns])
        .output()
        .expect("kubectl runs");
    let table = String::from_utf8_lossy(&get.stdout);
    assert!(
        get.status.success(),
        "{}",
        String::from_utf8_lossy(&get.stderr)
    );
    let mut lines = table.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME", "READY", "REASON", "STOP", "LAG", "COMMIT", "SCN", "AGE"
        ],
        "{table}"
    );
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        &row[..6],
        [
            "columns",
            "False",
            "SpillCapacityExceeded",
            "CDC-4001",
            "12.5",
            "9876543210"
        ],
        "{table}"
    );
}

fn jiff_now() -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::now()
}

/// `spec.kafka.topics` as docs/kafka.md shows it is accepted, and an unset one defaults to the
/// capture creating data topics.
#[tokio::test]
async fn declared_topics_are_accepted_and_creation_defaults_to_the_capture() {
    let (_env, api) = setup("crd-topics").await;
    let topics = json!({
        "data": {
            "creation": "capture",
            "partitions": 6,
            "replicationFactor": 3,
            "config": {"min.insync.replicas": "2", "retention.ms": "604800000"}
        },
        "internal": {"replicationFactor": 3, "minInsyncReplicas": 2}
    });
    let declared = with(minimal_spec(), "kafka.topics", topics.clone());
    let created = api
        .create(&PostParams::default(), &object("declared", declared))
        .await
        .expect("accepted");
    assert_eq!(created.data["spec"]["kafka"]["topics"], topics);
    let external = with(
        minimal_spec(),
        "kafka.topics",
        json!({"data": {"creation": "external"}}),
    );
    api.create(&PostParams::default(), &object("external", external))
        .await
        .expect("accepted");
    let plain = api
        .create(&PostParams::default(), &object("plain", minimal_spec()))
        .await
        .expect("accepted");
    let creation = &plain.data["spec"]["kafka"]["topics"]["data"]["creation"];
    assert_eq!(creation, "capture", "{}", plain.data["spec"]["kafka"]);
}

/// `spec.schemaRegistry` goes with `spec.format.encoding: avro`, and its rules: an http(s) URL,
/// https with TLS, the fields of each authentication type. The Avro example is accepted.
#[tokio::test]
async fn schema_registry_is_required_with_avro_and_its_fields_are_checked() {
    let (_env, api) = setup("crd-schema-registry").await;
    let avro = |registry: Value| {
        let spec = with(minimal_spec(), "format.encoding", json!("avro"));
        with(spec, "schemaRegistry", registry)
    };
    let example = include_str!("../../../crds/examples/oraclecapture-avro.yaml");
    let mut capture: DynamicObject = serde_norway::from_str(example).expect("example parses");
    capture.metadata.namespace = None;
    api.create(&PostParams::default(), &capture)
        .await
        .unwrap_or_else(|e| panic!("the Avro example is refused: {e}"));
    let password = json!({"secretName": "registry-user", "password": "password"});
    let accepted = [
        json!({"url": "http://registry:8081"}),
        json!({"url": "https://registry:8443/apis/ccompat/v7", "subjectNameStrategy": "TopicRecordName",
            "autoRegister": false,
            "tls": {"trustedCertificates": [{"secretName": "ca", "pattern": "*.crt"}]},
            "authentication": {"type": "bearer", "tokenSecret": {"secretName": "t", "key": "token"}}}),
        json!({"url": "http://registry:8081", "subjectNameStrategy": "RecordName",
            "authentication": {"type": "basic", "username": "u", "passwordSecret": password}}),
    ];
    for (i, registry) in accepted.iter().enumerate() {
        api.create(
            &PostParams::default(),
            &object(&format!("registry-{i}"), avro(registry.clone())),
        )
        .await
        .unwrap_or_else(|e| panic!("{registry} refused: {e}"));
    }
    let refused = [
        (
            with(minimal_spec(), "format.encoding", json!("avro")),
            "spec.schemaRegistry is required with spec.format.encoding avro",
        ),
        (
            with(
                minimal_spec(),
                "schemaRegistry",
                json!({"url": "http://registry:8081"}),
            ),
            "spec.schemaRegistry is required with spec.format.encoding avro",
        ),
        (
            avro(json!({"url": "registry:8081"})),
            "spec.schemaRegistry.url must be an http:// or https:// URL",
        ),
        (
            avro(json!({"url": "http://registry:8081", "tls": {}})),
            "spec.schemaRegistry.tls needs an https://",
        ),
        (
            avro(
                json!({"url": "http://r", "authentication": {"type": "basic", "passwordSecret": password}}),
            ),
            "spec.schemaRegistry.authentication.username is required with type basic",
        ),
        (
            avro(json!({"url": "http://r", "authentication": {"type": "basic", "username": "u"}})),
            "spec.schemaRegistry.authentication.passwordSecret is required with type basic",
        ),
        (
            avro(json!({"url": "http://r", "authentication": {"type": "bearer"}})),
            "spec.schemaRegistry.authentication.tokenSecret is required with type bearer",
        ),
        (
            avro(
                json!({"url": "http://r", "authentication": {"type": "bearer", "username": "u",
                "tokenSecret": {"secretName": "t", "key": "token"}}}),
            ),
            "spec.schemaRegistry.authentication.username is required with type basic and not allowed with bearer",
        ),
        (
            avro(json!({"url": "http://r", "subjectNameStrategy": "Topic"})),
            "subjectNameStrategy",
        ),
    ];
    for (i, (spec, message)) in refused.into_iter().enumerate() {
        let error = api
            .create(
                &PostParams::default(),
                &object(&format!("registry-bad-{i}"), spec.clone()),
            )
            .await
            .expect_err(&format!("{spec} accepted"));
        assert!(error.to_string().contains(message), "{spec}: {error}");
    }
}
