//! The capture in Avro through a real schema registry (Apicurio Registry, `tests/env/registry.sh`),
//! read by code no one here wrote:
//!
//! * a workload of every column type the simulator models, captured once in JSON and once in
//!   Avro (the real `redoline-capture` binary, an initial snapshot then streamed inserts, updates
//!   and deletes), is read back from the Avro topic by Confluent's Python client
//!   (`tests/env/python-avro`: `AvroDeserializer` fetching every writer schema from the registry
//!   by the id in the record) and must carry, record for record, the keys and values the JSON
//!   encoding carries (its `payload`s; the consumer leaves Avro's logical types undecoded, so a
//!   decimal compares as the unscaled bytes and a timestamp as the number Kafka Connect's JSON
//!   has; BINARY_FLOAT values compare as 32-bit floats, which JSON prints shortest);
//! * lookup only (`autoRegister: false`): schemas a pipeline owner registered ahead of the
//!   capture are found and their ids are the ones in the records; a subject without the schema is
//!   the typed stop CDC-6004 naming it;
//! * the registry's own compatibility rule (BACKWARD set on the subject) refusing the schema of an
//!   `ALTER TABLE ADD` of a NOT NULL column is the typed stop CDC-6003 naming the subject;
//! * the client's TLS (the registry's HTTPS listener, its CA trusted from a file), basic and bearer
//!   authentication (a registry that requires them; tokens from a real OIDC token endpoint it
//!   checks them against) are let in, and an untrusted certificate, a wrong password, a forged
//!   token and no credentials are each CDC-1005.
//!
//! Kafka: `REDOLINE_KAFKA_BOOTSTRAP` or a broker of this process; the registry:
//! `REDOLINE_SCHEMA_REGISTRY_DIR` or one of this process. Nothing is skipped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::reader::read_to_end;
use redoline_tests::kafka::{KafkaEnv, unique_prefix};
use redoline_tests::process::run_script;
use redoline_tests::registry::RegistryEnv;
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn step(value: Value) -> String {
    value.to_string() + "\n"
}

fn table_line(name: &str, columns: &[(&str, &str)], not_null: &[&str]) -> String {
    let columns: Vec<Value> = columns
        .iter()
        .map(|(column, oracle_type)| {
            let mut c = json!({"name": column, "type": oracle_type});
            if *column == "ID" {
                c["key"] = true.into();
            } else if not_null.contains(column) {
                c["nullable"] = false.into();
            }
            c
        })
        .collect();
    json!({"table": name, "columns": columns, "logging": "all"}).to_string() + "\n"
}

/// Every column type the simulator models (its `values.rs`).
const ALL_TYPES: &[(&str, &str)] = &[
    ("ID", "NUMBER(10)"),
    ("FLAG", "NUMBER(1)"),
    ("N_INT18", "NUMBER(18)"),
    ("N_WIDE", "NUMBER(25)"),
    ("N_DEC", "NUMBER(10,2)"),
    ("N_NEG_SCALE", "NUMBER(5,-2)"),
    ("N_FLOATING", "NUMBER"),
    ("F_FLOAT", "FLOAT(126)"),
    ("BF", "BINARY_FLOAT"),
    ("BD", "BINARY_DOUBLE"),
    ("C", "CHAR(10)"),
    ("NC", "NCHAR(3)"),
    ("VC", "VARCHAR2(20 CHAR)"),
    ("NVC", "NVARCHAR2(10)"),
    ("RW", "RAW(8)"),
    ("CL", "CLOB"),
    ("NCL", "NCLOB"),
    ("BL", "BLOB"),
    ("D", "DATE"),
    ("TS0", "TIMESTAMP(0)"),
    ("TS3", "TIMESTAMP(3)"),
    ("TS6", "TIMESTAMP"),
    ("TS9", "TIMESTAMP(9)"),
    ("TSTZ", "TIMESTAMP(6) WITH TIME ZONE"),
    ("TSLTZ", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    ("IYM", "INTERVAL YEAR(2) TO MONTH"),
    ("IDS", "INTERVAL DAY(3) TO SECOND(6)"),
];

/// The rows committed before the capture's first run: its initial snapshot reads them.
fn snapshot_part() -> String {
    let mut s = table_line("APP.ALL_TYPES", ALL_TYPES, &[]);
    s += &step(json!({"tx":"s1","insert":"APP.ALL_TYPES","values":{
        "ID":1,"FLAG":1,"N_INT18":"-123456789012345678","N_WIDE":"1234567890123456789012345",
        "N_DEC":"10.50","N_NEG_SCALE":12300,"N_FLOATING":"0.3333333333333333333333333333333333333333",
        "F_FLOAT":"-29669.9","BF":0.1,"BD":123.456,"C":"ab","NC":"xyz",
        "VC":"héllo wörld","NVC":"Привет","RW":"00ff10","CL":"a CLOB","NCL":"ünï NCLOB",
        "BL":"cafebabe","D":"2024-01-02 03:04:05","TS0":"2024-01-02 03:04:05",
        "TS3":"2021-09-14 07:36:46.478","TS6":"2021-09-14 07:36:46.123456",
        "TS9":"2021-09-14 07:36:46.123456789","TSTZ":"2024-01-02 03:04:05.123456 +01:00",
        "TSLTZ":"2024-01-02 03:04:05.123","IYM":"+05-03","IDS":"+02 03:04:05.123456"}}));
    s += &step(json!({"tx":"s1","insert":"APP.ALL_TYPES","values":{
        "ID":2,"FLAG":0,"N_INT18":"999999999999999999","N_WIDE":"-9999999999999999999999999",
        "N_DEC":"-0.05","N_NEG_SCALE":-99900,"N_FLOATING":"-0.00000000015","F_FLOAT":"12345678.875",
        "BF":"NaN","BD":"-Inf","C":"x","NC":"é","VC":"O'Brien \\ \"quoted\"","NVC":"日本",
        "RW":"deadbeef","D":"1969-12-31 23:59:59","TS0":"1900-01-01 00:00:00",
        "TS3":"1969-12-31 23:59:59.999","TS6":"1969-12-31 23:59:59.999999",
        "TS9":"2000-02-29 12:00:00.000000001","TSTZ":"1999-12-31 20:30:00 -05:30",
        "TSLTZ":"1970-01-01 00:00:00","IYM":"-01-06","IDS":"-00 00:00:01.5"}}));
    s += &step(json!({"tx":"s1","commit":true}));
    s += &step(json!({"advance_seconds":5}));
    s
}

/// Streamed by the capture's second run: an insert of NULLs, updates, a delete (and its
/// tombstone), a change of the key.
fn streaming_part() -> String {
    let mut s = String::new();
    s += &step(json!({"tx":"a","insert":"APP.ALL_TYPES","values":{"ID":3}}));
    s += &step(json!({"tx":"a","update":"APP.ALL_TYPES","where":{"ID":1},
        "set":{"N_DEC":"-99999999.99","VC":"changed","BF":-0.25,"TS9":"2030-01-01 00:00:00.5"}}));
    s += &step(json!({"tx":"a","commit":true}));
    s += &step(json!({"tx":"b","delete":"APP.ALL_TYPES","where":{"ID":2}}));
    s += &step(json!({"tx":"b","update":"APP.ALL_TYPES","where":{"ID":3},"set":{"ID":30}}));
    s += &step(json!({"tx":"b","commit":true}));
    s
}

/// The capture's config: one table, Debezium's default modes, JSON or Avro (`registry`: the
/// fields of the `schemaRegistry` block, e.g. `url: "...", autoRegister: false`).
fn capture_config(bootstrap: &str, prefix: &str, table: &str, registry: Option<&str>) -> String {
    let (encoding, registry) = match registry {
        None => (String::new(), String::new()),
        Some(fields) => (
            ", encoding: avro".to_owned(),
            format!("schemaRegistry: {{{fields}}}\n"),
        ),
    };
    format!(
        "name: {prefix}\n\
         namespace: avro-e2e\n\
         database: {{simulator: {{scenario: scenario.jsonl}}}}\n\
         tables: [{table}]\n\
         kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: {prefix}}}\n\
         format: {{type: debezium{encoding}}}\n\
         {registry}\
         snapshot: {{mode: initial}}\n\
         http: {{port: 0}}\n"
    )
}

/// `url: "<the registry's Confluent API over HTTP>"`.
fn url_of(registry: &RegistryEnv) -> String {
    format!("url: \"{}\"", registry.url)
}

/// One run of the capture to the end of the scenario; the error holds its output and its
/// termination message.
fn run_capture(dir: &Path, what: &str) -> anyhow::Result<String> {
    let binary = redoline_tests::capture_binary_beside(&std::env::current_exe()?)?;
    let config = dir.join("capture.yaml").display().to_string();
    let termination = dir.join(format!("{what}.termination"));
    let termination_text = termination.display().to_string();
    let result = run_script(
        &binary,
        &["run", "--exit-at-end", "--config", config.as_str()],
        &[
            ("REDOLINE_TERMINATION_LOG", termination_text.as_str()),
            ("RUST_LOG", "warn"),
        ],
        Duration::from_secs(300),
    );
    result.map_err(|e| {
        let message = std::fs::read_to_string(&termination).unwrap_or_default();
        anyhow::anyhow!("termination message: {message}\n{e:#}")
    })
}

/// A capture directory with its config and scenario.
fn prepare(work: &Path, name: &str, config: &str, scenario: &str) -> PathBuf {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("capture.yaml"), config).unwrap();
    std::fs::write(dir.join("scenario.jsonl"), scenario).unwrap();
    dir
}

/// The keys and values of `topic` in the JSON encoding: their `payload`s (null for none).
fn json_records(bootstrap: &str, topic: &str) -> Vec<(Value, Value)> {
    let settings = KafkaClientSettings::with_bootstrap(bootstrap);
    let payload = |bytes: &Option<Vec<u8>>| -> Value {
        bytes.as_ref().map_or(Value::Null, |b| {
            let v: Value = serde_json::from_slice(b).unwrap();
            v["payload"].clone()
        })
    };
    let mut out = Vec::new();
    read_to_end(&settings, topic, Duration::from_secs(30), |record| {
        out.push((payload(&record.key), payload(&record.value)));
        Ok(())
    })
    .unwrap_or_else(|e| panic!("reading {topic} back: {e}"));
    out
}

/// `count` records of `topics` read by the Python consumer, as its JSON lines.
fn python_records(
    bootstrap: &str,
    registry: &RegistryEnv,
    topics: &str,
    count: usize,
    raw: bool,
) -> Vec<Value> {
    let script = repo_root().join("tests/env/python-avro/venv.sh");
    let count_text = count.to_string();
    let mut args = vec![
        "consume",
        "--bootstrap",
        bootstrap,
        "--registry",
        registry.url.as_str(),
        "--topics",
        topics,
        "--count",
        count_text.as_str(),
        "--timeout",
        "120",
    ];
    if raw {
        args.push("--raw");
    }
    // Building the venv on a cold cache installs from PyPI.
    let output = run_script(&script, &args, &[], Duration::from_secs(900))
        .unwrap_or_else(|e| panic!("the Python consumer failed: {e:#}"));
    output
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What differs between the two captures of the same changes whatever the encoding: the time each
/// processed the event (the envelope's `ts_*`) and its topic prefix (`source.name`).
const PER_CAPTURE: [&str; 4] = [
    " value.ts_ms",
    " value.ts_us",
    " value.ts_ns",
    " value.source.name",
];

/// Where `avro` (the Python consumer's undecoded datum) and `json` (the JSON encoding's payload)
/// differ, by path. Numbers equal as 64-bit floats, or as 32-bit floats (a BINARY_FLOAT, which
/// JSON prints shortest and Avro's float widens exactly), are equal.
fn differences(path: &str, avro: &Value, json: &Value, out: &mut Vec<String>) {
    if PER_CAPTURE.iter().any(|p| path.ends_with(p)) {
        return;
    }
    match (avro, json) {
        (Value::Object(a), Value::Object(j)) => {
            for key in a.keys().chain(j.keys().filter(|k| !a.contains_key(*k))) {
                let at = format!("{path}.{key}");
                differences(
                    &at,
                    a.get(key).unwrap_or(&Value::Null),
                    j.get(key).unwrap_or(&Value::Null),
                    out,
                );
                if a.contains_key(key) != j.contains_key(key) {
                    out.push(format!(
                        "{at}: only in {}",
                        if a.contains_key(key) { "Avro" } else { "JSON" }
                    ));
                }
            }
        }
        (Value::Array(a), Value::Array(j)) if a.len() == j.len() => {
            for (i, (x, y)) in a.iter().zip(j).enumerate() {
                differences(&format!("{path}[{i}]"), x, y, out);
            }
        }
        (Value::Number(a), Value::Number(j)) => {
            let (x, y) = (a.as_f64().unwrap(), j.as_f64().unwrap());
            let same = a == j || x == y || {
                #[allow(clippy::cast_possible_truncation)]
                let narrow = (x as f32, y as f32);
                narrow.0 == narrow.1
            };
            if !same {
                out.push(format!("{path}: Avro {a}, JSON {j}"));
            }
        }
        (a, j) if a == j => {}
        (a, j) => out.push(format!("{path}: Avro {a}, JSON {j}")),
    }
}

#[test]
fn python_consumer_reads_the_avro_capture_back_to_the_json_values() {
    let started = Instant::now();
    let kafka = KafkaEnv::shared().unwrap_or_else(|e| panic!("no Kafka broker: {e:#}"));
    let bootstrap = kafka.bootstrap_servers().to_owned();
    let registry = RegistryEnv::shared().unwrap_or_else(|e| panic!("no schema registry: {e:#}"));
    let run_id = unique_prefix("avro-python");
    let work = tempfile::tempdir().unwrap();

    let json_prefix = format!("{run_id}-json");
    let avro_prefix = format!("{run_id}-avro");
    let open = url_of(registry);
    for (prefix, avro) in [(&json_prefix, None), (&avro_prefix, Some(open.as_str()))] {
        let config = capture_config(&bootstrap, prefix, "APP.ALL_TYPES", avro);
        let dir = prepare(work.path(), prefix, &config, &snapshot_part());
        run_capture(&dir, "snapshot").unwrap_or_else(|e| panic!("{prefix} snapshot: {e:#}"));
        std::fs::write(
            dir.join("scenario.jsonl"),
            snapshot_part() + &streaming_part(),
        )
        .unwrap();
        run_capture(&dir, "streaming").unwrap_or_else(|e| panic!("{prefix} streaming: {e:#}"));
    }
    let captured = started.elapsed();

    let expected = json_records(&bootstrap, &format!("{json_prefix}.APP.ALL_TYPES"));
    let ops: Vec<&str> = expected
        .iter()
        .map(|(_, v)| v["op"].as_str().unwrap_or("tombstone"))
        .collect();
    for op in ["r", "c", "u", "d", "tombstone"] {
        assert!(
            ops.contains(&op),
            "no {op} in the workload's records: {ops:?}"
        );
    }
    let topic = format!("{avro_prefix}.APP.ALL_TYPES");
    let read = python_records(&bootstrap, registry, &topic, expected.len(), true);
    assert_eq!(read.len(), expected.len());
    let mut wrong = Vec::new();
    for (i, (record, (key, value))) in read.iter().zip(&expected).enumerate() {
        differences(&format!("record {i} key"), &record["key"], key, &mut wrong);
        differences(
            &format!("record {i} value"),
            &record["value"],
            value,
            &mut wrong,
        );
        assert!(record["keySchemaId"].is_u64(), "{record}");
        assert_eq!(
            record["valueSchemaId"].is_u64(),
            !value.is_null(),
            "{record}"
        );
    }
    assert!(
        wrong.is_empty(),
        "the Avro records differ from the JSON ones:\n{}",
        wrong.join("\n")
    );

    // Decoded as a consumer would (logical types on): Connect's Decimal is Avro's decimal, exact
    // at the column's scale (Debezium's time types are plain numbers and strings in Avro too).
    let decoded = python_records(&bootstrap, registry, &topic, 1, false);
    let after = &decoded[0]["value"]["after"];
    assert_eq!(after["N_DEC"], "10.50", "{after}");
    assert_eq!(after["N_WIDE"], "1234567890123456789012345", "{after}");

    // One schema per structure: the key's and the value's subjects each hold one version.
    assert_eq!(
        registry.subject_versions(&format!("{topic}-key")).unwrap(),
        [1]
    );
    assert_eq!(
        registry
            .subject_versions(&format!("{topic}-value"))
            .unwrap(),
        [1]
    );
    eprintln!(
        "avro python: captured twice in {captured:?}, {} records equal, in {:?}",
        expected.len(),
        started.elapsed()
    );
}

#[test]
fn lookup_only_uses_the_registered_ids_and_stops_without_them() {
    let started = Instant::now();
    let kafka = KafkaEnv::shared().unwrap_or_else(|e| panic!("no Kafka broker: {e:#}"));
    let bootstrap = kafka.bootstrap_servers().to_owned();
    let registry = RegistryEnv::shared().unwrap_or_else(|e| panic!("no schema registry: {e:#}"));
    let run_id = unique_prefix("avro-lookup");
    let work = tempfile::tempdir().unwrap();
    let scenario = snapshot_part();

    // The pipeline owner's schemas: those an auto-registering capture of the same table makes,
    // named for the owned topics.
    let source = format!("{run_id}-source");
    let config = capture_config(
        &bootstrap,
        &source,
        "APP.ALL_TYPES",
        Some(&url_of(registry)),
    );
    run_capture(
        &prepare(work.path(), &source, &config, &scenario),
        "snapshot",
    )
    .unwrap();
    let owned = format!("{run_id}-owned");
    let mut ids = Vec::new();
    for side in ["key", "value"] {
        // Its record names start with the topic prefix (Avro's name rules make `-` a `_`).
        let schema = registry
            .subject_schema(&format!("{source}.APP.ALL_TYPES-{side}"), 1)
            .unwrap()
            .replace(&source.replace('-', "_"), &owned.replace('-', "_"));
        ids.push(
            registry
                .register(&format!("{owned}.APP.ALL_TYPES-{side}"), &schema)
                .unwrap(),
        );
    }

    let lookup = format!("{}, autoRegister: false", url_of(registry));
    let config = capture_config(&bootstrap, &owned, "APP.ALL_TYPES", Some(&lookup));
    run_capture(
        &prepare(work.path(), &owned, &config, &scenario),
        "snapshot",
    )
    .unwrap_or_else(|e| panic!("lookup only with the schemas registered: {e:#}"));
    let read = python_records(
        &bootstrap,
        registry,
        &format!("{owned}.APP.ALL_TYPES"),
        2,
        false,
    );
    for record in &read {
        assert_eq!(record["keySchemaId"], ids[0], "{record}");
        assert_eq!(record["valueSchemaId"], ids[1], "{record}");
    }
    assert_eq!(
        registry
            .subject_versions(&format!("{owned}.APP.ALL_TYPES-value"))
            .unwrap(),
        [1],
        "lookup only registers nothing"
    );

    let missing = format!("{run_id}-missing");
    let config = capture_config(&bootstrap, &missing, "APP.ALL_TYPES", Some(&lookup));
    let error = run_capture(
        &prepare(work.path(), &missing, &config, &scenario),
        "snapshot",
    )
    .expect_err("lookup only without the schema must stop");
    let message = format!("{error:#}");
    assert!(message.contains("CDC-6004"), "{message}");
    assert!(
        message.contains(&format!("{missing}.APP.ALL_TYPES-")),
        "{message}"
    );
    assert!(
        registry
            .subject_versions(&format!("{missing}.APP.ALL_TYPES-value"))
            .unwrap()
            .is_empty(),
        "lookup only registers nothing"
    );
    eprintln!("avro lookup: in {:?}", started.elapsed());
}

#[test]
fn an_incompatible_change_under_the_registrys_rule_is_a_typed_stop() {
    let started = Instant::now();
    let kafka = KafkaEnv::shared().unwrap_or_else(|e| panic!("no Kafka broker: {e:#}"));
    let bootstrap = kafka.bootstrap_servers().to_owned();
    let registry = RegistryEnv::shared().unwrap_or_else(|e| panic!("no schema registry: {e:#}"));
    let prefix = unique_prefix("avro-compat");
    let work = tempfile::tempdir().unwrap();

    let mut scenario = table_line(
        "APP.EVOLVING",
        &[("ID", "NUMBER(10)"), ("A", "VARCHAR2(10)")],
        &[],
    );
    scenario += &step(json!({"tx":"s","insert":"APP.EVOLVING","values":{"ID":1,"A":"one"}}));
    scenario += &step(json!({"tx":"s","commit":true}));
    scenario += &step(json!({"advance_seconds":5}));
    let config = capture_config(&bootstrap, &prefix, "APP.EVOLVING", Some(&url_of(registry)));
    let dir = prepare(work.path(), &prefix, &config, &scenario);
    run_capture(&dir, "snapshot").unwrap();
    let subject = format!("{prefix}.APP.EVOLVING-value");
    assert_eq!(registry.subject_versions(&subject).unwrap(), [1]);

    // The pipeline owner's rule: consumers on the new schema must read the old records. A NOT
    // NULL column has no default in the new schema, so it cannot.
    registry.set_compatibility(&subject, "BACKWARD").unwrap();
    scenario += &step(json!({"ddl": "ALTER TABLE APP.EVOLVING ADD (B NUMBER(5) NOT NULL)"}));
    scenario += &step(json!({"tx":"t","insert":"APP.EVOLVING","values":{"ID":2,"A":"two","B":2}}));
    scenario += &step(json!({"tx":"t","commit":true}));
    std::fs::write(dir.join("scenario.jsonl"), &scenario).unwrap();
    let error =
        run_capture(&dir, "streaming").expect_err("the refused schema must stop the capture");
    let message = format!("{error:#}");
    assert!(message.contains("CDC-6003"), "{message}");
    assert!(message.contains(&subject), "{message}");
    assert!(message.contains("BACKWARD"), "{message}");
    assert_eq!(
        registry.subject_versions(&subject).unwrap(),
        [1],
        "the refused schema is not in the registry"
    );
    // Nothing of the new structure reached the topic: the snapshot's row alone.
    let records = count_records(&bootstrap, &format!("{prefix}.APP.EVOLVING"));
    assert_eq!(records, 1);
    eprintln!("avro compatibility: in {:?}", started.elapsed());
}

/// The number of committed records of `topic`, whatever their encoding.
fn count_records(bootstrap: &str, topic: &str) -> usize {
    let settings = KafkaClientSettings::with_bootstrap(bootstrap);
    let mut n = 0;
    read_to_end(&settings, topic, Duration::from_secs(30), |_| {
        n += 1;
        Ok(())
    })
    .unwrap_or_else(|e| panic!("reading {topic} back: {e}"));
    n
}

/// The capture's client against the real registry's TLS listener and its authentication (basic,
/// and bearer tokens of the OIDC token endpoint it trusts): each right one is let in and writes
/// its records; a CA that did not sign the registry's certificate, a wrong password, a token the
/// token endpoint did not sign and no credentials are each CDC-1005.
#[test]
fn tls_and_authentication_against_the_real_registry() {
    let started = Instant::now();
    let kafka = KafkaEnv::shared().unwrap_or_else(|e| panic!("no Kafka broker: {e:#}"));
    let bootstrap = kafka.bootstrap_servers().to_owned();
    let open = RegistryEnv::shared().unwrap_or_else(|e| panic!("no schema registry: {e:#}"));
    let secured =
        RegistryEnv::shared_auth().unwrap_or_else(|e| panic!("no authenticating registry: {e:#}"));
    let basic = secured.basic.as_ref().unwrap();
    let run_id = unique_prefix("avro-auth");
    let work = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = work.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let password = file("password", &basic.password);
    let wrong_password = file("wrong-password", "not-the-password");
    let token = file("token", &secured.bearer_token().unwrap());
    let forged = file("forged-token", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.");
    let tls = |ca: &Path| {
        format!(
            "url: \"{}\", tls: {{trustedCertificates: [{{certificate: {}}}]}}",
            open.tls_url,
            ca.display()
        )
    };
    let basic_with = |password_file: &str| {
        format!(
            "url: \"{}\", authentication: {{type: basic, username: {}, passwordFile: {password_file}}}",
            secured.url, basic.username
        )
    };
    let bearer_with = |token_file: &str| {
        format!(
            "url: \"{}\", authentication: {{type: bearer, tokenFile: {token_file}}}",
            secured.url
        )
    };
    let cases: Vec<(&str, String, bool)> = vec![
        ("tls", tls(&open.ca), true),
        ("basic", basic_with(&password), true),
        ("bearer", bearer_with(&token), true),
        ("untrusted", tls(&open.untrusted_ca), false),
        ("wrong-password", basic_with(&wrong_password), false),
        ("forged-token", bearer_with(&forged), false),
        ("anonymous", url_of(secured), false),
    ];
    let scenario = snapshot_part();
    for (name, registry, admitted) in &cases {
        let prefix = format!("{run_id}-{name}");
        let config = capture_config(&bootstrap, &prefix, "APP.ALL_TYPES", Some(registry));
        let result = run_capture(
            &prepare(work.path(), &prefix, &config, &scenario),
            "snapshot",
        );
        let topic = format!("{prefix}.APP.ALL_TYPES");
        if *admitted {
            result.unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert_eq!(count_records(&bootstrap, &topic), 2, "{name}");
        } else {
            let message = format!("{:#}", result.expect_err(name));
            assert!(message.contains("CDC-1005"), "{name}: {message}");
        }
    }
    eprintln!(
        "avro auth: {} captures in {:?}",
        cases.len(),
        started.elapsed()
    );
}
