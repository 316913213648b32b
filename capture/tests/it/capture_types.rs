#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Column types through the binary, the simulator and the file sink (issue 31, N4): a column of
//! a type the capture cannot decode stops the capture at start (CDC-1001) naming the column and
//! the exclusion; excluded, the rest of the row is captured; JSON and BOOLEAN columns are
//! emitted as Debezium 3.x emits them.

use serde_json::Value;

use crate::run_support;

use run_support::Capture;

const SHAPES: &str = r#"{"table":"APP.SHAPES","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(16)"},{"name":"SHAPE","type":"MDSYS.SDO_GEOMETRY"}],"logging":"all"}
{"tx":"a","insert":"APP.SHAPES","values":{"ID":1,"NAME":"square","SHAPE":"polygon"}}
{"tx":"a","commit":true}
{"tx":"b","update":"APP.SHAPES","where":{"ID":1},"set":{"NAME":"box","SHAPE":"polygon"}}
{"tx":"b","commit":true}
"#;

const DOCS: &str = r#"{"table":"APP.DOCS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"DOC","type":"JSON"},{"name":"FLAG","type":"BOOLEAN"}],"logging":"all"}
{"tx":"a","insert":"APP.DOCS","values":{"ID":1,"DOC":{"name":"Sally Field","age":77},"FLAG":true}}
{"tx":"a","commit":true}
{"tx":"b","update":"APP.DOCS","where":{"ID":1},"set":{"FLAG":false}}
{"tx":"b","commit":true}
"#;

/// A Debezium-format capture of `table` with Connect schemas and `extra` config.
fn debezium(table: &str, scenario: &str, extra: &str) -> Capture {
    let capture = Capture::new(&[table], scenario, extra);
    let config = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace(
            "format: {type: compact}\n",
            "format: {type: debezium, schemas: true}\n",
        );
    std::fs::write(capture.path("capture.yaml"), config).unwrap();
    capture
}

fn data_events(capture: &Capture) -> Vec<Value> {
    capture
        .events()
        .into_iter()
        .filter(|line| line["value"]["payload"]["op"].is_string())
        .collect()
}

#[test]
fn a_column_of_a_type_the_capture_cannot_decode_stops_at_start_naming_it() {
    let capture = debezium("APP.SHAPES", SHAPES, "");
    let (status, stderr) = capture.run();
    assert_eq!(status, 3, "a typed stop: {stderr}");
    let termination = capture.termination();
    assert_eq!(termination["code"], "CDC-1001", "{termination}");
    let message = termination["message"].as_str().unwrap();
    assert!(
        message.contains("APP.SHAPES.SHAPE (MDSYS.SDO_GEOMETRY)")
            && message.contains(r"'APP\.SHAPES\.SHAPE'")
            && message.contains("spec.filters.columnExcludeList"),
        "{message}"
    );
    assert!(data_events(&capture).is_empty(), "nothing mined");
}

#[test]
fn the_excluded_column_is_dropped_and_the_rest_of_the_row_captured() {
    let capture = debezium(
        "APP.SHAPES",
        SHAPES,
        "filters: {columnExcludeList: ['APP\\.SHAPES\\.SHAPE']}\n",
    );
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let events = data_events(&capture);
    assert_eq!(events.len(), 2, "{events:?}");
    let insert = &events[0]["value"]["payload"];
    assert_eq!(insert["op"], "c");
    assert_eq!(insert["after"]["ID"], 1);
    assert_eq!(insert["after"]["NAME"], "square");
    assert!(insert["after"].get("SHAPE").is_none(), "{insert}");
    let update = &events[1]["value"]["payload"];
    assert_eq!(update["op"], "u");
    assert_eq!(update["after"]["NAME"], "box");
    assert!(update["after"].get("SHAPE").is_none(), "{update}");
}

#[test]
fn json_and_boolean_columns_are_emitted_as_debezium_emits_them() {
    let capture = debezium("APP.DOCS", DOCS, "");
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let events = data_events(&capture);
    assert_eq!(events.len(), 2, "{events:?}");
    let value = &events[0]["value"];
    let after = &value["payload"]["after"];
    // The document as text, the boolean as a Connect boolean.
    let doc: Value = serde_json::from_str(after["DOC"].as_str().unwrap()).unwrap();
    assert_eq!(doc, serde_json::json!({"name": "Sally Field", "age": 77}));
    assert_eq!(after["FLAG"], true);
    assert_eq!(events[1]["value"]["payload"]["after"]["FLAG"], false);
    // The after struct's field schemas.
    let fields = value["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "after")
        .unwrap()["fields"]
        .as_array()
        .unwrap()
        .clone();
    let field = |name: &str| fields.iter().find(|f| f["field"] == name).unwrap().clone();
    assert_eq!(field("DOC")["type"], "string");
    assert_eq!(field("DOC")["name"], "io.debezium.data.Json");
    assert_eq!(field("DOC")["version"], 1);
    assert_eq!(field("FLAG")["type"], "boolean");
}

#[test]
fn through_the_sql_door_the_catalog_names_the_object_type_with_its_owner() {
    // The SQL door answers ALL_TAB_COLS as Oracle does: DATA_TYPE 'SDO_GEOMETRY' and
    // DATA_TYPE_OWNER 'MDSYS'; the capture puts them back together for the stop.
    let capture = debezium("APP.SHAPES", SHAPES, "");
    let config = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace(
            "{simulator: {scenario: scenario.jsonl}}",
            "{simulator: {scenario: scenario.jsonl, through: sql}}",
        );
    assert!(config.contains("through: sql"), "{config}");
    std::fs::write(capture.path("capture.yaml"), config).unwrap();
    let (status, stderr) = capture.run();
    assert_eq!(status, 3, "a typed stop: {stderr}");
    let termination = capture.termination();
    assert_eq!(termination["code"], "CDC-1001", "{termination}");
    assert_eq!(
        termination["details"]["columns"],
        serde_json::json!(["APP.SHAPES.SHAPE"])
    );
    let message = termination["message"].as_str().unwrap();
    assert!(message.contains("(MDSYS.SDO_GEOMETRY)"), "{message}");
}
