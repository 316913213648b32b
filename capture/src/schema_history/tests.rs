use proptest::prelude::*;
use redoline_crds::StopCode;

use super::*;
use crate::dictionary::{Column, OracleType};

fn at() -> RecordLocation {
    RecordLocation {
        topic: "sales.redoline.schema-history".into(),
        partition: 0,
        offset: 7,
    }
}

fn orders(extra: &[&str]) -> Arc<TableSchema> {
    let mut columns = vec![Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1)];
    for name in extra {
        columns.push(Column::new(
            *name,
            OracleType::parse("VARCHAR2(16)").unwrap(),
        ));
    }
    Arc::new(TableSchema::new("APP", "ORDERS", columns).unwrap())
}

fn version(table: Arc<TableSchema>, from_scn: u64, ddl: Option<&str>) -> NewVersion {
    NewVersion {
        table,
        from_scn,
        kind: ddl.map_or(ChangeKind::Create, ChangeKind::of_ddl),
        ddl: ddl.map(str::to_owned),
    }
}

fn load(history: &mut SchemaHistory, record: &(String, String)) -> Result<(), Stop> {
    history.load(Some(record.0.as_bytes()), Some(record.1.as_bytes()), &at())
}

#[test]
fn versions_read_back_apply_from_their_scn() {
    let now = jiff::Timestamp::UNIX_EPOCH;
    let first = version(orders(&[]), 100, None).encode("sales", "ORCL", now);
    let added = version(
        orders(&["NOTE"]),
        201,
        Some("ALTER TABLE APP.ORDERS ADD (NOTE VARCHAR2(16))"),
    )
    .encode("sales", "ORCL", now);
    let mut history = SchemaHistory::default();
    load(&mut history, &added).unwrap();
    load(&mut history, &first).unwrap();
    // The same version again (a restart mined the DDL again): still two versions.
    load(&mut history, &added).unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history.in_force("APP", "ORDERS", 150), Some(orders(&[])));
    assert_eq!(history.in_force("APP", "ORDERS", 200), Some(orders(&[])));
    assert_eq!(
        history.in_force("APP", "ORDERS", 201),
        Some(orders(&["NOTE"]))
    );
    assert_eq!(
        history.in_force("APP", "ORDERS", 50),
        Some(orders(&[])),
        "before the first version, the oldest known structure"
    );
    assert_eq!(history.in_force("APP", "ITEMS", 150), None);
    assert!(history.knows("APP", "ORDERS"));
    assert_eq!(
        history.version_from("APP", "ORDERS", 201),
        Some(orders(&["NOTE"]))
    );
    assert_eq!(history.version_from("APP", "ORDERS", 200), None);
}

#[test]
fn a_record_has_debeziums_history_shape() {
    let (key, value) = version(
        orders(&["NOTE"]),
        201,
        Some("ALTER TABLE APP.ORDERS ADD (NOTE VARCHAR2(16))"),
    )
    .encode(
        "sales",
        "ORCL",
        jiff::Timestamp::from_millisecond(1_700_000_000_000).unwrap(),
    );
    assert_eq!(
        key,
        r#"{"table":"\"ORCL\".\"APP\".\"ORDERS\"","scn":"201"}"#
    );
    let value: serde_json::Value = serde_json::from_str(&value).unwrap();
    assert_eq!(value["source"]["server"], "sales");
    assert_eq!(value["position"]["scn"], "201");
    assert_eq!(value["ts_ms"], 1_700_000_000_000i64);
    assert_eq!(value["databaseName"], "ORCL");
    assert_eq!(value["schemaName"], "APP");
    assert_eq!(
        value["ddl"],
        "ALTER TABLE APP.ORDERS ADD (NOTE VARCHAR2(16))"
    );
    let change = &value["tableChanges"][0];
    assert_eq!(change["type"], "ALTER");
    assert_eq!(change["id"], "\"ORCL\".\"APP\".\"ORDERS\"");
    assert_eq!(
        change["table"]["primaryKeyColumnNames"],
        serde_json::json!(["ID"])
    );
    assert_eq!(change["table"]["columns"][1]["name"], "NOTE");
}

/// `orders` with its object numbers and each column's segment column number.
fn numbered(table: &TableSchema, object_id: u64, data_object_id: u64) -> Arc<TableSchema> {
    let columns = table
        .columns()
        .iter()
        .zip(1u16..)
        .map(|(column, number)| column.clone().segment(number))
        .collect();
    Arc::new(
        TableSchema::new(table.schema(), table.table(), columns)
            .unwrap()
            .with_object(crate::dictionary::ObjectNumbers {
                object_id,
                data_object_id: Some(data_object_id),
            }),
    )
}

#[test]
fn object_and_column_numbers_are_written_as_debezium_attributes_and_read_back() {
    let table = numbered(&orders(&["NOTE"]), 74_103, 74_110);
    let record =
        version(Arc::clone(&table), 300, None).encode("sales", "ORCL", jiff::Timestamp::UNIX_EPOCH);
    let value: serde_json::Value = serde_json::from_str(&record.1).unwrap();
    let structure = &value["tableChanges"][0]["table"];
    assert_eq!(
        structure["attributes"],
        serde_json::json!([
            {"name": "OBJECT_ID", "value": "74103"},
            {"name": "DATA_OBJECT_ID", "value": "74110"}
        ])
    );
    assert_eq!(structure["columns"][1]["segmentColumnId"], 2);
    let mut history = SchemaHistory::default();
    load(&mut history, &record).unwrap();
    assert_eq!(
        history.in_force("APP", "ORDERS", 300),
        Some(Arc::clone(&table))
    );
    assert_eq!(history.in_force_by_object(74_103, 300), Some(table));
    assert_eq!(history.in_force_by_object(74_103, 299), None);
    assert_eq!(history.in_force_by_object(1, 300), None);
}

/// A record written before the capture read object and column numbers (no attributes, no
/// `segmentColumnId`) still loads, as a version that knows neither.
#[test]
fn a_record_without_numbers_still_loads() {
    let old = r#"{"source":{"server":"sales"},"position":{"scn":"100"},"ts_ms":0,"databaseName":"ORCL","schemaName":"APP","ddl":null,"tableChanges":[{"type":"CREATE","id":"\"ORCL\".\"APP\".\"ORDERS\"","table":{"defaultCharsetName":null,"primaryKeyColumnNames":["ID"],"columns":[{"name":"ID","jdbcType":2,"nativeType":null,"typeName":"NUMBER","typeExpression":"NUMBER(10)","charsetName":null,"length":10,"scale":0,"position":1,"optional":false,"autoIncremented":false,"generated":false,"comment":null,"hasDefaultValue":false,"defaultValueExpression":null,"enumValues":null}],"comment":null,"attributes":[]}}]}"#;
    let key = r#"{"table":"\"ORCL\".\"APP\".\"ORDERS\"","scn":"100"}"#;
    let mut history = SchemaHistory::default();
    history
        .load(Some(key.as_bytes()), Some(old.as_bytes()), &at())
        .unwrap();
    let table = history.in_force("APP", "ORDERS", 100).unwrap();
    assert_eq!(table, orders(&[]));
    assert_eq!(table.object(), None);
    assert_eq!(table.columns()[0].segment_column, None);
    // The catalog's numbered version from a later SCN replaces nothing and is found by number.
    let newer = numbered(&orders(&[]), 74_103, 74_103);
    assert!(history.insert(Arc::clone(&newer), 200));
    assert_eq!(history.in_force_by_object(74_103, 250), Some(newer));
    // A malformed number is refused with the attribute named.
    let bad = old.replace(
        r#""attributes":[]"#,
        r#""attributes":[{"name":"OBJECT_ID","value":"x"}]"#,
    );
    let error = history
        .load(Some(key.as_bytes()), Some(bad.as_bytes()), &at())
        .unwrap_err();
    assert!(error.message.contains("OBJECT_ID"), "{}", error.message);
}

/// Renamed between versions: both are found by the object number, each at its SCN; a tombstone
/// removes a version from both indexes.
#[test]
fn versions_of_a_renamed_table_are_found_by_object_number() {
    let before = numbered(&orders(&[]), 74_103, 74_103);
    let renamed = TableSchema::new("APP", "PURCHASES", before.columns().to_vec())
        .unwrap()
        .with_object(before.object().unwrap());
    let renamed = Arc::new(renamed);
    let mut history = SchemaHistory::default();
    history.insert(Arc::clone(&before), 100);
    history.insert(Arc::clone(&renamed), 200);
    assert_eq!(
        history.in_force_by_object(74_103, 150),
        Some(Arc::clone(&before))
    );
    assert_eq!(history.in_force_by_object(74_103, 200), Some(renamed));
    let key = r#"{"table":"\"ORCL\".\"APP\".\"PURCHASES\"","scn":"200"}"#;
    history.load(Some(key.as_bytes()), None, &at()).unwrap();
    assert_eq!(history.in_force_by_object(74_103, 250), Some(before));
}

#[test]
fn a_tombstone_removes_the_version_its_key_names() {
    let record =
        version(orders(&[]), 100, None).encode("sales", "ORCL", jiff::Timestamp::UNIX_EPOCH);
    let mut history = SchemaHistory::default();
    load(&mut history, &record).unwrap();
    history
        .load(Some(record.0.as_bytes()), None, &at())
        .unwrap();
    assert!(history.is_empty());
}

#[test]
fn an_unreadable_record_is_cdc_5002_naming_its_place() {
    let mut history = SchemaHistory::default();
    let good = version(orders(&[]), 100, None).encode("sales", "ORCL", jiff::Timestamp::UNIX_EPOCH);
    for (key, value) in [
        (good.0.clone(), "not json".to_owned()),
        (
            good.0.clone(),
            good.1.replace("\"scn\":\"100\"", "\"scn\":\"x\""),
        ),
        (good.0.clone(), good.1.replace("NUMBER(10)", "NUMBER(99)")),
        (good.0.clone(), good.1.replace("\\\"ORCL\\\".", "")),
    ] {
        let stop = history
            .load(Some(key.as_bytes()), Some(value.as_bytes()), &at())
            .unwrap_err();
        assert_eq!(stop.code, StopCode::BookmarkUnreadable, "{value}");
        assert!(
            stop.message
                .contains("sales.redoline.schema-history/0 offset 7"),
            "{}",
            stop.message
        );
    }
    assert!(history.load(Some(b"?"), None, &at()).is_err());
    assert!(history.is_empty(), "a refused record adds nothing");
}

#[test]
fn ddl_kinds_follow_the_statement() {
    assert_eq!(
        ChangeKind::of_ddl("create table app.t (id number)"),
        ChangeKind::Create
    );
    assert_eq!(
        ChangeKind::of_ddl("DROP TABLE APP.T PURGE"),
        ChangeKind::Drop
    );
    assert_eq!(
        ChangeKind::of_ddl("ALTER TABLE APP.T ADD (X NUMBER)"),
        ChangeKind::Alter
    );
    assert_eq!(ChangeKind::of_ddl("RENAME T TO U"), ChangeKind::Alter);
}

proptest! {
    /// Whatever the bytes, reading a record either adds a readable version or refuses it with
    /// CDC-5002; it never panics.
    #[test]
    fn arbitrary_records_are_read_or_refused(
        key in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..64)),
        value in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..256)),
    ) {
        let mut history = SchemaHistory::default();
        match history.load(key.as_deref(), value.as_deref(), &at()) {
            Ok(()) => {}
            Err(stop) => prop_assert_eq!(stop.code, StopCode::BookmarkUnreadable),
        }
    }

    /// The version in force at an SCN is the one with the greatest `from_scn` not after it.
    #[test]
    fn the_version_in_force_is_the_latest_started(
        starts in proptest::collection::btree_set(1u64..1000, 1..8),
        probe in 0u64..1100,
    ) {
        let mut history = SchemaHistory::default();
        let starts: Vec<u64> = starts.into_iter().collect();
        for (i, &from) in starts.iter().enumerate() {
            let names: Vec<String> = (0..i).map(|n| format!("C{n}")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            history.insert(orders(&names), from);
        }
        let expected = starts.iter().rposition(|&s| s <= probe).unwrap_or(0);
        let table = history.in_force("APP", "ORDERS", probe).unwrap();
        prop_assert_eq!(table.columns().len(), expected + 1);
    }
}
