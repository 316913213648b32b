//! Debezium's schema change events: one record on the topic `<prefix>` per DDL on a captured
//! table (with `include.schema.changes`, the default).
//!
//! - key `{"databaseName": <db>}` (`io.debezium.connector.oracle.SchemaChangeKey`);
//! - value `{source, ts_ms, databaseName, schemaName, ddl, tableChanges}`
//!   (`io.debezium.connector.oracle.SchemaChangeValue`): `source` is the DDL row's source block
//!   as in data events, `ts_ms` the time the capture processed it, `ddl` the statement as issued,
//!   `tableChanges` one entry `{type, id, table}` with the table's structure after the DDL (the
//!   last one for a `DROP`), see [`crate::schema_history::structure`].
//!
//! With `schemas_enabled` both are wrapped in `{"schema","payload"}` like the data records.

use super::payload::write_source;
use super::schema::SOURCE_SCHEMA;
use super::{DebeziumOptions, legal_topic};
use crate::event::Record;
use crate::event::{ChangeEvent, json};
use crate::schema_history::TableChange;

/// The schema change record of the DDL `event` (its statement `ddl`) that made `change`.
pub fn schema_change_record(
    options: &DebeziumOptions,
    event: &ChangeEvent,
    ddl: &str,
    change: &TableChange,
    processed_at: jiff::Timestamp,
) -> Record {
    let mut key = String::with_capacity(64);
    if options.wraps_json() {
        key.push_str("{\"schema\":");
        key.push_str(KEY_SCHEMA);
        key.push_str(",\"payload\":");
    }
    key.push('{');
    json::key(&mut key, "databaseName");
    json::string(&mut key, &options.database_name);
    key.push('}');
    if options.wraps_json() {
        key.push('}');
    }

    let mut value = String::with_capacity(2048);
    if options.wraps_json() {
        value.push_str("{\"schema\":");
        value.push_str(&value_schema());
        value.push_str(",\"payload\":");
    }
    value.push('{');
    json::key(&mut value, "source");
    write_source(&mut value, &event.table, options, event);
    value.push(',');
    json::key(&mut value, "ts_ms");
    json::integer(&mut value, processed_at.as_millisecond());
    value.push(',');
    json::key(&mut value, "databaseName");
    json::string(&mut value, &options.database_name);
    value.push(',');
    json::key(&mut value, "schemaName");
    json::string(&mut value, event.table.schema());
    value.push(',');
    json::key(&mut value, "ddl");
    json::string(&mut value, ddl);
    value.push(',');
    json::key(&mut value, "tableChanges");
    // Strings, integers, booleans and lists only: serialising cannot fail.
    value.push('[');
    value.push_str(&serde_json::to_string(&change.connect_form()).unwrap_or_default());
    value.push_str("]}");
    if options.wraps_json() {
        value.push('}');
    }
    Record {
        topic: legal_topic(&options.topic_prefix),
        key: Some(key.into_bytes()),
        value: Some(value.into_bytes()),
    }
}

/// `io.debezium.connector.oracle.SchemaChangeKey`.
pub(super) const KEY_SCHEMA: &str = concat!(
    "{\"type\":\"struct\",\"fields\":[",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"databaseName\"}",
    "],\"optional\":false,\"name\":\"io.debezium.connector.oracle.SchemaChangeKey\",\"version\":1}"
);

/// `io.debezium.connector.schema.Column`.
const COLUMN_SCHEMA: &str = concat!(
    "{\"type\":\"struct\",\"fields\":[",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"name\"},",
    "{\"type\":\"int32\",\"optional\":false,\"field\":\"jdbcType\"},",
    "{\"type\":\"int32\",\"optional\":true,\"field\":\"nativeType\"},",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"typeName\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"typeExpression\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"charsetName\"},",
    "{\"type\":\"int32\",\"optional\":true,\"field\":\"length\"},",
    "{\"type\":\"int32\",\"optional\":true,\"field\":\"scale\"},",
    "{\"type\":\"int32\",\"optional\":false,\"field\":\"position\"},",
    "{\"type\":\"boolean\",\"optional\":true,\"field\":\"optional\"},",
    "{\"type\":\"boolean\",\"optional\":true,\"field\":\"autoIncremented\"},",
    "{\"type\":\"boolean\",\"optional\":true,\"field\":\"generated\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"comment\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"defaultValueExpression\"},",
    "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":false},\"optional\":true,\"field\":\"enumValues\"}",
    "],\"optional\":false,\"name\":\"io.debezium.connector.schema.Column\",\"version\":1}"
);

/// `io.debezium.connector.oracle.SchemaChangeValue`, with the source block of data events.
pub(super) fn value_schema() -> String {
    let mut out = String::with_capacity(4096);
    out.push_str("{\"type\":\"struct\",\"fields\":[");
    out.push_str(SOURCE_SCHEMA);
    out.push_str(concat!(
        ",{\"type\":\"int64\",\"optional\":false,\"field\":\"ts_ms\"},",
        "{\"type\":\"string\",\"optional\":true,\"field\":\"databaseName\"},",
        "{\"type\":\"string\",\"optional\":true,\"field\":\"schemaName\"},",
        "{\"type\":\"string\",\"optional\":true,\"field\":\"ddl\"},",
        "{\"type\":\"array\",\"items\":{\"type\":\"struct\",\"fields\":[",
        "{\"type\":\"string\",\"optional\":false,\"field\":\"type\"},",
        "{\"type\":\"string\",\"optional\":false,\"field\":\"id\"},",
        "{\"type\":\"struct\",\"fields\":[",
        "{\"type\":\"string\",\"optional\":true,\"field\":\"defaultCharsetName\"},",
        "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":false},\"optional\":true,\"field\":\"primaryKeyColumnNames\"},",
        "{\"type\":\"array\",\"items\":",
    ));
    out.push_str(COLUMN_SCHEMA);
    out.push_str(concat!(
        ",\"optional\":false,\"field\":\"columns\"},",
        "{\"type\":\"string\",\"optional\":true,\"field\":\"comment\"}",
        "],\"optional\":true,\"name\":\"io.debezium.connector.schema.Table\",\"version\":1,\"field\":\"table\"}",
        "],\"optional\":false,\"name\":\"io.debezium.connector.schema.Change\",\"version\":1},",
        "\"optional\":false,\"field\":\"tableChanges\"}",
        "],\"optional\":false,\"name\":\"io.debezium.connector.oracle.SchemaChangeValue\",\"version\":1}",
    ));
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::Value;

    use super::*;
    use crate::dictionary::{Column, OracleType, TableSchema};
    use crate::event::{Operation, SnapshotMarker, SourceInfo};
    use crate::schema_history::ChangeKind;

    const DDL: &str = "ALTER TABLE APP.ORDERS ADD (NOTE VARCHAR2(16))";

    fn ddl_event() -> (ChangeEvent, TableChange) {
        let table = Arc::new(
            TableSchema::new(
                "APP",
                "ORDERS",
                vec![
                    Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
                    Column::new("NOTE", OracleType::parse("VARCHAR2(16)").unwrap()),
                ],
            )
            .unwrap(),
        );
        let change = TableChange::new(ChangeKind::Alter, "ORCL", &table);
        let event = ChangeEvent {
            op: Operation::Ddl { sql: DDL.into() },
            table,
            before: None,
            after: None,
            source: SourceInfo {
                scn: 1_000_010,
                commit_scn: Some(1_000_010),
                xid: None,
                rs_id: None,
                ssn: 0,
                redo_thread: 1,
                user_name: Some("APP".into()),
                row_id: None,
                change_time: None,
                commit_time: None,
                transaction_start: None,
                transaction_sequence: None,
                snapshot: SnapshotMarker::False,
            },
        };
        (event, change)
    }

    fn options(schemas_enabled: bool) -> DebeziumOptions {
        DebeziumOptions {
            topic_prefix: "sales".into(),
            database_name: "ORCL".into(),
            schemas_enabled,
            ..DebeziumOptions::default()
        }
    }

    #[test]
    fn a_schema_change_has_debeziums_shape() {
        let (event, change) = ddl_event();
        let at = jiff::Timestamp::from_millisecond(1_700_000_000_000).unwrap();
        let record = schema_change_record(&options(false), &event, DDL, &change, at);
        assert_eq!(record.topic, "sales");
        let key: Value = serde_json::from_slice(record.key.as_deref().unwrap()).unwrap();
        assert_eq!(key, serde_json::json!({"databaseName": "ORCL"}));
        let value: Value = serde_json::from_slice(record.value.as_deref().unwrap()).unwrap();
        assert_eq!(value["ts_ms"], 1_700_000_000_000i64);
        assert_eq!(value["databaseName"], "ORCL");
        assert_eq!(value["schemaName"], "APP");
        assert_eq!(value["ddl"], DDL);
        assert_eq!(value["source"]["table"], "ORDERS");
        assert_eq!(value["source"]["scn"], "1000010");
        let changes = value["tableChanges"].as_array().unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0]["type"], "ALTER");
        assert_eq!(changes[0]["id"], "\"ORCL\".\"APP\".\"ORDERS\"");
        let columns: Vec<&str> = changes[0]["table"]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(columns, ["ID", "NOTE"], "the structure after the DDL");
    }

    #[test]
    fn with_schemas_the_payload_is_wrapped_and_its_schema_names_every_field() {
        let (event, change) = ddl_event();
        let record = schema_change_record(
            &options(true),
            &event,
            DDL,
            &change,
            jiff::Timestamp::UNIX_EPOCH,
        );
        let key: Value = serde_json::from_slice(record.key.as_deref().unwrap()).unwrap();
        assert_eq!(key["payload"]["databaseName"], "ORCL");
        assert_eq!(
            key["schema"]["name"],
            "io.debezium.connector.oracle.SchemaChangeKey"
        );
        let value: Value = serde_json::from_slice(record.value.as_deref().unwrap()).unwrap();
        let schema = &value["schema"];
        assert_eq!(
            schema["name"],
            "io.debezium.connector.oracle.SchemaChangeValue"
        );
        let payload = &value["payload"];
        // Every payload field has a schema field, down to the columns.
        let fields = |schema: &Value| -> Vec<String> {
            schema["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["field"].as_str().unwrap().to_owned())
                .collect()
        };
        let mut top: Vec<String> = payload.as_object().unwrap().keys().cloned().collect();
        top.sort();
        let mut declared = fields(schema);
        declared.sort();
        assert_eq!(top, declared);
        let table_schema = &schema["fields"][5]["items"]["fields"][2];
        let column_schema = &table_schema["fields"][2]["items"];
        let mut column_fields = fields(column_schema);
        column_fields.sort();
        let mut column_keys: Vec<String> = payload["tableChanges"][0]["table"]["columns"][0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        column_keys.sort();
        assert_eq!(column_keys, column_fields);
        let mut table_keys: Vec<String> = payload["tableChanges"][0]["table"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        table_keys.sort();
        let mut table_fields = fields(table_schema);
        table_fields.sort();
        assert_eq!(table_keys, table_fields);
        // Debezium 3.6's Connect form (SchemaFactory): no `attributes`, no `hasDefaultValue`;
        // those belong to its JSON history document only.
        assert_eq!(
            fields(table_schema),
            [
                "defaultCharsetName",
                "primaryKeyColumnNames",
                "columns",
                "comment"
            ]
        );
        assert_eq!(
            fields(column_schema),
            [
                "name",
                "jdbcType",
                "nativeType",
                "typeName",
                "typeExpression",
                "charsetName",
                "length",
                "scale",
                "position",
                "optional",
                "autoIncremented",
                "generated",
                "comment",
                "defaultValueExpression",
                "enumValues"
            ]
        );
    }
}
