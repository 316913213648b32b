#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Debezium connector options on a whole capture (simulator, file sink, `debezium` format without
//! the schema envelope unless a test asks for it): username and column lists, message key
//! columns, skipped operations, tombstones and transaction metadata.

use crate::run_support;

use serde_json::Value;

use run_support::Capture;

const TABLES: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"STATUS","type":"VARCHAR2(16)"},{"name":"CARD","type":"VARCHAR2(19)"},{"name":"CODE","type":"VARCHAR2(8)"}],"logging":"all"}
{"table":"APP.LINES","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"ORDER_ID","type":"NUMBER(10)"}],"logging":"all"}
{"table":"APP.OTHER","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
"#;

/// A capture of APP.ORDERS and APP.LINES in the `debezium` format; `format` holds extra
/// `spec.format` fields, `extra` other config.
fn capture(scenario: &str, format: &str, extra: &str) -> Capture {
    let capture = Capture::new(&["APP.ORDERS", "APP.LINES"], scenario, extra);
    let path = capture.path("capture.yaml");
    let config = std::fs::read_to_string(&path).unwrap().replace(
        "format: {type: compact}",
        &format!("format: {{type: debezium, schemas: false{format}}}"),
    );
    std::fs::write(&path, config).unwrap();
    capture
}

fn run(capture: &Capture) -> Vec<Value> {
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    capture.events()
}

/// The data records (topic, key, value) of a table topic, without tombstones.
fn data(records: &[Value], table: &str) -> Vec<Value> {
    let topic = format!("redoline.APP.{table}");
    records
        .iter()
        .filter(|r| r["topic"] == topic.as_str() && !r["value"].is_null())
        .cloned()
        .collect()
}

fn ops(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["topic"] != "redoline.transaction")
        .map(|r| match r["value"]["op"].as_str() {
            Some(op) => op.to_owned(),
            None => "tombstone".to_owned(),
        })
        .collect()
}

fn scenario(steps: &str) -> String {
    format!("{TABLES}{steps}")
}

const TWO_USERS: &str = r#"{"tx":"a","user":"APP","insert":"APP.ORDERS","values":{"ID":1,"STATUS":"new"}}
{"tx":"a","commit":true}
{"tx":"b","user":"ETL","insert":"APP.ORDERS","values":{"ID":2,"STATUS":"load"}}
{"tx":"b","update":"APP.ORDERS","where":{"ID":1},"set":{"STATUS":"etl"}}
{"tx":"b","commit":true}
{"tx":"c","user":"app","insert":"APP.LINES","values":{"ID":7,"ORDER_ID":1}}
{"tx":"c","commit":true}
"#;

#[test]
fn the_username_exclude_list_drops_that_users_transactions() {
    let capture = capture(
        &scenario(TWO_USERS),
        "",
        "filters: {usernameExcludeList: [etl]}\n",
    );
    let records = run(&capture);
    let ids: Vec<i64> = records
        .iter()
        .map(|r| r["value"]["after"]["ID"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 7], "ETL's insert and update are not emitted");
    assert!(
        records
            .iter()
            .all(|r| r["value"]["source"]["user_name"] != "ETL")
    );
    // The filtered transaction still moved the bookmark: a second run emits nothing more.
    let before = capture.events().len();
    assert_eq!(capture.run().0, 0);
    assert_eq!(capture.events().len(), before);
}

#[test]
fn the_username_include_list_keeps_only_those_users() {
    let capture = capture(
        &scenario(TWO_USERS),
        "",
        "filters: {usernameIncludeList: [ETL]}\n",
    );
    let records = run(&capture);
    assert_eq!(ops(&records), ["c", "u"]);
    assert!(
        records
            .iter()
            .all(|r| r["value"]["source"]["user_name"] == "ETL")
    );
}

const ORDER_LIFE: &str = r#"{"tx":"a","insert":"APP.ORDERS","values":{"ID":1,"STATUS":"new","CARD":"4111-1111","CODE":"K1"}}
{"tx":"a","commit":true}
{"tx":"b","update":"APP.ORDERS","where":{"ID":1},"set":{"STATUS":"paid","CARD":"4222-2222"}}
{"tx":"b","commit":true}
{"tx":"c","delete":"APP.ORDERS","where":{"ID":1}}
{"tx":"c","commit":true}
"#;

#[test]
fn excluded_columns_vanish_from_values_and_schemas_but_keys_keep_key_columns() {
    let capture = capture(
        &scenario(ORDER_LIFE),
        ", schemas: true",
        "filters: {columnExcludeList: ['APP\\.ORDERS\\.(CARD|ID)']}\n",
    );
    let records = run(&capture);
    let orders = data(&records, "ORDERS");
    assert_eq!(orders.len(), 3);
    for record in &orders {
        let payload = &record["value"]["payload"];
        for image in ["before", "after"] {
            if let Some(row) = payload[image].as_object() {
                let mut names: Vec<&str> = row.keys().map(String::as_str).collect();
                names.sort_unstable();
                assert_eq!(names, ["CODE", "STATUS"], "{image}: {row:?}");
            }
        }
        let value_fields: Vec<&str> = record["value"]["schema"]["fields"][0]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["field"].as_str().unwrap())
            .collect();
        assert_eq!(value_fields, ["STATUS", "CODE"]);
        assert_eq!(record["key"]["payload"], serde_json::json!({"ID": 1}));
    }
}

#[test]
fn the_column_include_list_keeps_only_matching_columns() {
    let capture = capture(
        &scenario(ORDER_LIFE),
        "",
        "filters: {columnIncludeList: ['APP\\.ORDERS\\.(ID|STATUS)', 'APP\\.LINES\\..*']}\n",
    );
    let records = run(&capture);
    let after = &data(&records, "ORDERS")[0]["value"]["after"];
    assert_eq!(after, &serde_json::json!({"ID": 1, "STATUS": "new"}));
}

#[test]
fn message_key_columns_replace_the_primary_key() {
    let capture = capture(
        &scenario(ORDER_LIFE),
        "",
        "columns: {messageKeyColumns: [{table: 'APP\\.ORD.*', columns: [CODE, STATUS]}]}\n",
    );
    let records = run(&capture);
    let keys: Vec<&Value> = records
        .iter()
        .filter(|r| r["topic"] == "redoline.APP.ORDERS")
        .map(|r| &r["key"])
        .collect();
    // The update changed STATUS, part of the configured key: delete, tombstone, create.
    assert_eq!(
        ops(&records),
        ["c", "d", "tombstone", "c", "d", "tombstone"]
    );
    assert_eq!(keys[0], &serde_json::json!({"CODE": "K1", "STATUS": "new"}));
    assert_eq!(keys[1], &serde_json::json!({"CODE": "K1", "STATUS": "new"}));
    assert_eq!(
        keys[3],
        &serde_json::json!({"CODE": "K1", "STATUS": "paid"})
    );
}

#[test]
fn an_unknown_message_key_column_stops_the_capture_naming_the_field() {
    let capture = capture(
        &scenario(ORDER_LIFE),
        "",
        "columns: {messageKeyColumns: [{table: 'APP\\.ORDERS', columns: [NOPE]}]}\n",
    );
    let (status, stderr) = capture.run();
    assert_eq!(status, 3, "{stderr}");
    let termination = capture.termination();
    assert_eq!(termination["code"], "CDC-1001");
    let message = termination["message"].as_str().unwrap();
    assert!(
        message.contains("messageKeyColumns") && message.contains("NOPE"),
        "{termination}"
    );
    assert!(capture.events().is_empty());
}

const WITH_TRUNCATE: &str = r#"{"tx":"a","insert":"APP.ORDERS","values":{"ID":1,"STATUS":"new"}}
{"tx":"a","commit":true}
{"tx":"b","update":"APP.ORDERS","where":{"ID":1},"set":{"STATUS":"paid"}}
{"tx":"b","commit":true}
{"tx":"c","delete":"APP.ORDERS","where":{"ID":1}}
{"tx":"c","commit":true}
{"truncate":"APP.ORDERS"}
"#;

#[test]
fn skipped_operations_default_to_truncate_and_follow_the_spec() {
    let default = capture(&scenario(WITH_TRUNCATE), "", "");
    assert_eq!(ops(&run(&default)), ["c", "u", "d", "tombstone"]);
    let none = capture(&scenario(WITH_TRUNCATE), ", skippedOperations: [none]", "");
    let records = run(&none);
    assert_eq!(ops(&records), ["c", "u", "d", "tombstone", "t"]);
    assert!(
        records.last().unwrap()["key"].is_null(),
        "truncates have no key"
    );
    // A list replaces the default: truncates are emitted unless `t` is in it.
    let creates_and_deletes = capture(&scenario(WITH_TRUNCATE), ", skippedOperations: [c, d]", "");
    assert_eq!(ops(&run(&creates_and_deletes)), ["u", "t"]);
}

#[test]
fn tombstones_follow_deletes_unless_turned_off() {
    let on = capture(&scenario(WITH_TRUNCATE), "", "");
    let records = run(&on);
    let tombstone = records.last().unwrap();
    assert!(tombstone["value"].is_null());
    assert_eq!(tombstone["key"], serde_json::json!({"ID": 1}));
    let off = capture(&scenario(WITH_TRUNCATE), ", tombstonesOnDelete: false", "");
    assert_eq!(ops(&run(&off)), ["c", "u", "d"]);
}

const TRANSACTIONS: &str = r#"{"tx":"a","insert":"APP.ORDERS","values":{"ID":1,"STATUS":"new"}}
{"tx":"a","insert":"APP.LINES","values":{"ID":10,"ORDER_ID":1}}
{"tx":"a","insert":"APP.LINES","values":{"ID":11,"ORDER_ID":1}}
{"tx":"a","update":"APP.ORDERS","where":{"ID":1},"set":{"ID":2}}
{"tx":"a","commit":true}
{"tx":"b","insert":"APP.OTHER","values":{"ID":5}}
{"tx":"b","commit":true}
{"tx":"c","delete":"APP.LINES","where":{"ID":10}}
{"tx":"c","commit":true}
"#;

#[test]
fn transaction_metadata_brackets_each_transaction_with_counts() {
    let capture = capture(&scenario(TRANSACTIONS), ", transactionMetadata: true", "");
    let records = run(&capture);
    let shape: Vec<String> = records
        .iter()
        .map(|r| {
            if r["topic"] == "redoline.transaction" {
                r["value"]["status"].as_str().unwrap().to_owned()
            } else if r["value"].is_null() {
                "tombstone".to_owned()
            } else {
                r["value"]["op"].as_str().unwrap().to_owned()
            }
        })
        .collect();
    // Transaction b touches no captured table: no BEGIN/END for it.
    assert_eq!(
        shape,
        [
            "BEGIN",
            "c",
            "c",
            "c",
            "d",
            "tombstone",
            "c",
            "END",
            "BEGIN",
            "d",
            "tombstone",
            "END"
        ]
    );
    let end = &records[7]["value"];
    let begin = &records[0];
    assert_eq!(end["event_count"], 5, "the key change counts twice");
    assert_eq!(
        end["data_collections"],
        serde_json::json!([
            {"data_collection": "ORCL.APP.ORDERS", "event_count": 3},
            {"data_collection": "ORCL.APP.LINES", "event_count": 2},
        ])
    );
    let id = begin["key"]["id"].as_str().unwrap();
    assert_eq!(id.len(), 16, "the lower-case hex XID: {id}");
    assert_eq!(id, id.to_lowercase());
    assert_eq!(begin["value"]["id"], id);
    assert!(begin["value"]["event_count"].is_null());
    let blocks: Vec<(String, u64, u64)> = records[1..7]
        .iter()
        .filter(|r| !r["value"].is_null())
        .map(|r| {
            let tx = &r["value"]["transaction"];
            assert_eq!(r["value"]["source"]["txId"], id);
            (
                tx["id"].as_str().unwrap().to_owned(),
                tx["total_order"].as_u64().unwrap(),
                tx["data_collection_order"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64, u64)> = [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)]
        .into_iter()
        .map(|(total, table)| (id.to_owned(), total, table))
        .collect();
    assert_eq!(blocks, expected);
    let last = &records[11]["value"];
    assert_eq!(last["event_count"], 1);
    assert_ne!(last["id"], id.to_owned().as_str());
}

#[test]
fn without_transaction_metadata_there_is_no_transaction_topic_or_block() {
    let capture = capture(&scenario(TRANSACTIONS), "", "");
    let records = run(&capture);
    assert!(records.iter().all(|r| r["topic"] != "redoline.transaction"));
    assert!(
        records
            .iter()
            .filter(|r| !r["value"].is_null())
            .all(|r| r["value"]["transaction"].is_null())
    );
}

/// Any JDK MessageDigest name, in any case, one algorithm per rule; the expected values are
/// `MessageDigest.getInstance(..)` over `pep` then the value, in `%02x` hex, run on a JDK 17 and
/// cut to VARCHAR2(16) and VARCHAR2(19).
#[test]
fn each_hash_rule_uses_its_own_jdk_algorithm() {
    let capture = capture(
        &scenario(ORDER_LIFE),
        "",
        "columns:\n  \
           maskHash:\n  \
           - {algorithm: md5, salt: pep, columns: ['APP\\.ORDERS\\.STATUS']}\n  \
           - {algorithm: SHA3-256, salt: pep, columns: ['APP\\.ORDERS\\.CARD']}\n",
    );
    let records = run(&capture);
    let orders = data(&records, "ORDERS");
    let image = |i: usize, name: &str| orders[i]["value"][name].clone();
    assert_eq!(image(0, "after")["STATUS"], "75ebb2e14cbaa87c");
    assert_eq!(image(0, "after")["CARD"], "31ad2974e04ba86567d");
    assert_eq!(image(1, "after")["STATUS"], "59d5a5f628d48903");
    assert_eq!(image(1, "after")["CARD"], "30ac01b9a83f501e26a");
}

#[test]
fn masks_apply_to_value_images_and_keys_keep_real_values() {
    let capture = capture(
        &scenario(ORDER_LIFE),
        ", schemas: true",
        "columns:\n  \
           messageKeyColumns: [{table: 'APP\\.ORDERS', columns: [CODE]}]\n  \
           maskHash: [{algorithm: SHA-256, salt: pep, columns: ['APP\\.ORDERS\\.CARD']}]\n  \
           maskWithChars: [{length: 3, columns: ['APP\\.ORDERS\\.STATUS']}]\n  \
           truncateToChars: [{length: 1, columns: ['APP\\.ORDERS\\.CODE']}]\n  \
           propagateSourceType: ['APP\\.ORDERS\\.STATUS']\n  \
           datatypePropagateSourceType: [NUMBER]\n",
    );
    let records = run(&capture);
    let orders = data(&records, "ORDERS");
    assert_eq!(orders.len(), 3);
    let image = |i: usize, name: &str| orders[i]["value"]["payload"][name].clone();
    // SHA-256 of "pep" + value, lower-case hex, cut to VARCHAR2(19).
    assert_eq!(
        image(0, "after"),
        serde_json::json!({"ID": 1, "STATUS": "***", "CARD": "159f44b6e0d84b41c25", "CODE": "K"})
    );
    assert_eq!(image(1, "before")["CARD"], "159f44b6e0d84b41c25");
    assert_eq!(image(1, "after")["CARD"], "6380913ce0d4cb1b27f");
    assert_eq!(image(2, "before")["STATUS"], "***");
    for record in &orders {
        assert_eq!(record["key"]["payload"], serde_json::json!({"CODE": "K1"}));
    }
    let fields = orders[0]["value"]["schema"]["fields"][0]["fields"]
        .as_array()
        .unwrap();
    let parameters =
        |name: &str| fields.iter().find(|f| f["field"] == name).unwrap()["parameters"].clone();
    assert_eq!(parameters("CARD"), serde_json::json!({"masked": "true"}));
    assert_eq!(
        parameters("STATUS"),
        serde_json::json!({
            "masked": "true",
            "__debezium.source.column.type": "VARCHAR2",
            "__debezium.source.column.name": "STATUS",
            "__debezium.source.column.length": "16",
        })
    );
    assert_eq!(
        parameters("ID"),
        serde_json::json!({
            "__debezium.source.column.type": "NUMBER",
            "__debezium.source.column.name": "ID",
            "__debezium.source.column.length": "10",
            "__debezium.source.column.scale": "0",
        })
    );
    assert!(parameters("CODE").is_null(), "truncation is not a mask");
}

#[test]
fn schema_and_table_lists_choose_the_captured_tables() {
    let steps = r#"{"table":"HR.EMP","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
{"tx":"a","insert":"APP.ORDERS","values":{"ID":1,"STATUS":"new"}}
{"tx":"a","insert":"APP.LINES","values":{"ID":10,"ORDER_ID":1}}
{"tx":"a","insert":"APP.OTHER","values":{"ID":5}}
{"tx":"a","insert":"HR.EMP","values":{"ID":7}}
{"tx":"a","commit":true}
{"ddl":"CREATE TABLE APP.LATER (ID NUMBER(8) PRIMARY KEY, SUPPLEMENTAL LOG DATA (PRIMARY KEY) COLUMNS)"}
{"tx":"b","insert":"APP.LATER","values":{"ID":3}}
{"tx":"b","commit":true}
"#;
    let capture = Capture::new(&[], &scenario(steps), "");
    let path = capture.path("capture.yaml");
    let config = std::fs::read_to_string(&path)
        .unwrap()
        .replace("tables: []\n", "")
        .replace(
            "format: {type: compact}",
            "format: {type: compact}\n\
             filters: {schemaIncludeList: ['APP'], tableExcludeList: ['APP\\.OTH.*']}",
        );
    std::fs::write(&path, config).unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let tables: Vec<String> = capture
        .events()
        .iter()
        .map(|e| {
            format!(
                "{} {}.{}",
                e["op"].as_str().unwrap(),
                e["schema"].as_str().unwrap(),
                e["table"].as_str().unwrap()
            )
        })
        .collect();
    // APP.OTHER is excluded, HR is not included; APP.LATER, created later, is captured (its
    // CREATE TABLE is a DDL event of a captured table).
    assert_eq!(
        tables,
        [
            "i APP.ORDERS",
            "i APP.LINES",
            "ddl APP.LATER",
            "i APP.LATER"
        ]
    );
}
