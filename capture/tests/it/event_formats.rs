//! Golden tests of the event formats: a fixed set of change events over a table with every
//! supported Oracle type, typed from SQL_REDO-shaped raw values and encoded in each format and
//! option set, compared byte for byte with `tests/fixtures/events/*.jsonl`.
//!
//! Each Debezium fixture line is `{"topic":…,"key":<key JSON or null>,"value":<value JSON or
//! null>}`; `tests/tests/it/debezium_json.rs` feeds the enveloped ones to Kafka Connect's
//! `JsonConverter`. After an intended format change, regenerate with
//! `REDOLINE_BLESS=1 cargo test -p redoline-capture --test it -- event_formats::` and review the diff.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use apache_avro::types::Value as AvroValue;
use proptest::prelude::*;
use redoline_capture::dictionary::{Column, OracleType, TableSchema};
use redoline_capture::event::debezium::schema_change::schema_change_record;
use redoline_capture::event::debezium::{
    BinaryHandling, DebeziumEncoder, DebeziumOptions, DecimalHandling, Encoding, IntervalHandling,
    SkippedOperations, TimePrecision,
};
use redoline_capture::event::heartbeat::heartbeat_record;
use redoline_capture::event::{
    ChangeEvent, EncodeError, Operation, Record, SnapshotMarker, SourceInfo, TransactionStart,
    compact,
};
use redoline_capture::filter::Filters;
use redoline_capture::heartbeat::heartbeat_topic;
use redoline_capture::redo::ast::RawValue;
use redoline_capture::registry::memory::MemoryRegistry;
use redoline_capture::registry::{RegistryError, SchemaRegistry, SchemaUse};
use redoline_capture::schema_history::{ChangeKind, TableChange};
use redoline_capture::source::Xid;
use redoline_capture::value::{
    InvalidReason, OracleNumber, Row, Value, ValueError, typed, typed_column_value, typed_row,
};

fn lit(s: &str) -> RawValue<'static> {
    RawValue::Text(Cow::Owned(s.to_owned()))
}

fn call(name: &str, args: &[&str]) -> RawValue<'static> {
    RawValue::Call {
        name: Cow::Owned(name.to_owned()),
        args: args.iter().map(|a| lit(a)).collect(),
    }
}

/// Every supported type, in table order: (name, type).
const ALL_TYPES: &[(&str, &str)] = &[
    ("ID", "NUMBER(10)"),
    ("N_INT18", "NUMBER(18)"),
    ("N_INTEGER", "INTEGER"),
    ("N_DEC", "NUMBER(10,2)"),
    ("N_NEG_SCALE", "NUMBER(5,-2)"),
    ("N_FLOATING", "NUMBER"),
    ("F_FLOAT", "FLOAT(126)"),
    ("FLAG", "NUMBER(1)"),
    ("BF", "BINARY_FLOAT"),
    ("BD", "BINARY_DOUBLE"),
    ("C", "CHAR(10)"),
    ("NC", "NCHAR(3)"),
    ("VC", "VARCHAR2(20 CHAR)"),
    ("NVC", "NVARCHAR2(10)"),
    ("CL", "CLOB"),
    ("NCL", "NCLOB"),
    ("BL", "BLOB"),
    ("RW", "RAW(8)"),
    ("D", "DATE"),
    ("TS0", "TIMESTAMP(0)"),
    ("TS3", "TIMESTAMP(3)"),
    ("TS6", "TIMESTAMP"),
    ("TS9", "TIMESTAMP(9)"),
    ("TSTZ", "TIMESTAMP(6) WITH TIME ZONE"),
    ("TSLTZ", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    ("IYM", "INTERVAL YEAR(2) TO MONTH"),
    ("IDS", "INTERVAL DAY(3) TO SECOND(6)"),
    ("RID", "ROWID"),
    ("X", "XMLTYPE"),
];

fn all_types_table() -> Arc<TableSchema> {
    let columns = ALL_TYPES
        .iter()
        .map(|(name, t)| {
            let column = Column::new(*name, OracleType::parse(t).unwrap());
            if *name == "ID" { column.key(1) } else { column }
        })
        .collect();
    Arc::new(TableSchema::new("APP", "ALL_TYPES", columns).unwrap())
}

fn no_key_table() -> Arc<TableSchema> {
    Arc::new(
        TableSchema::new(
            "APP",
            "AUDIT LOG",
            vec![
                Column::new("MSG", OracleType::parse("VARCHAR2(100)").unwrap()).nullable(false),
                Column::new("AT", OracleType::parse("DATE").unwrap()),
            ],
        )
        .unwrap(),
    )
}

/// The raw values of a full row, as LogMiner writes them in an INSERT.
fn full_row_values(id: &str) -> Vec<(&'static str, RawValue<'static>)> {
    vec![
        ("ID", lit(id)),
        ("N_INT18", lit("-123456789012345678")),
        ("N_INTEGER", lit("12345678901234567890123456789012345678")),
        ("N_DEC", lit("10.5")),
        ("N_NEG_SCALE", lit("12300")),
        (
            "N_FLOATING",
            lit(".3333333333333333333333333333333333333333"),
        ),
        ("F_FLOAT", lit("-29669.9")),
        ("FLAG", lit("1")),
        ("BF", lit("0.1")),
        ("BD", lit("1.0E+300")),
        ("C", lit("ab        ")),
        ("NC", lit("Вы ")),
        ("VC", lit("Bob's \"dog\"\n")),
        ("NVC", lit("中国")),
        ("CL", lit("a small CLOB")),
        ("NCL", lit("ünï")),
        ("BL", call("HEXTORAW", &["556e69"])),
        ("RW", call("HEXTORAW", &["00ff10"])),
        (
            "D",
            call("TO_DATE", &["2024-01-02 03:04:05", "YYYY-MM-DD HH24:MI:SS"]),
        ),
        ("TS0", call("TO_TIMESTAMP", &["2020-02-01 00:00:00."])),
        ("TS3", call("TO_TIMESTAMP", &["2021-09-14 07:36:46.478"])),
        (
            "TS6",
            call("TO_TIMESTAMP", &["2021-09-14 07:36:46.123456000"]),
        ),
        (
            "TS9",
            call("TO_TIMESTAMP", &["2021-09-14 07:36:46.123456789"]),
        ),
        (
            "TSTZ",
            call("TO_TIMESTAMP_TZ", &["2024-02-14 10:58:02.202590000 +01:00"]),
        ),
        (
            "TSLTZ",
            call("TO_TIMESTAMP_TZ", &["2024-02-14 10:58:02.250000000 +00:00"]),
        ),
        ("IYM", call("TO_YMINTERVAL", &["+05-03"])),
        ("IDS", call("TO_DSINTERVAL", &["+002 03:04:05.123456"])),
        ("RID", lit("AAAR9JAAHAAAACFAAB")),
        ("X", call("XMLType", &["<a b=\"1\">x</a>"])),
    ]
}

/// Edge values: specials, negatives, before-1970 instants, LOB placeholders, NULLs.
fn edge_row_values() -> Vec<(&'static str, RawValue<'static>)> {
    vec![
        ("ID", lit("3")),
        ("N_INT18", lit("-0")),
        ("N_INTEGER", lit("-1")),
        ("N_DEC", lit("-.05")),
        ("N_NEG_SCALE", lit("-9900")),
        ("N_FLOATING", lit("1E+125")),
        ("F_FLOAT", lit("0")),
        ("FLAG", lit("0")),
        ("BF", lit("Nan")),
        ("BD", lit("-Inf")),
        ("C", RawValue::Null),
        ("NC", RawValue::Null),
        ("VC", lit("")),
        ("NVC", RawValue::Null),
        ("CL", call("EMPTY_CLOB", &[])),
        ("NCL", RawValue::Null),
        ("BL", call("EMPTY_BLOB", &[])),
        ("RW", RawValue::Null),
        (
            "D",
            call(
                "TO_DATE",
                &["31-dec-1969 23:59:59", "dd-mon-yyyy hh24:mi:ss"],
            ),
        ),
        ("TS0", RawValue::Null),
        ("TS3", call("TO_TIMESTAMP", &["1969-12-31 23:59:59.500"])),
        ("TS6", call("TO_TIMESTAMP", &["1969-12-31 23:59:59.999999"])),
        (
            "TS9",
            call("TO_TIMESTAMP", &["1969-12-31 23:59:59.000000001"]),
        ),
        (
            "TSTZ",
            call("TO_TIMESTAMP_TZ", &["2024-02-14 10:58:02.000000000 -05:30"]),
        ),
        ("TSLTZ", RawValue::Null),
        ("IYM", call("TO_YMINTERVAL", &["-03-06"])),
        ("IDS", call("TO_DSINTERVAL", &["-001 02:03:04.56"])),
        ("RID", RawValue::Null),
        ("X", RawValue::Unsupported),
    ]
}

fn row(table: &TableSchema, values: &[(&'static str, RawValue<'static>)]) -> Row {
    let values: Vec<_> = values
        .iter()
        .map(|(name, raw)| (Cow::Borrowed(*name), raw.clone()))
        .collect();
    typed_row(table, &values).unwrap()
}

/// `row` with some columns replaced.
fn with(
    mut values: Vec<(&'static str, RawValue<'static>)>,
    changes: &[(&'static str, RawValue<'static>)],
) -> Vec<(&'static str, RawValue<'static>)> {
    for (name, raw) in changes {
        if let Some(slot) = values.iter_mut().find(|(n, _)| n == name) {
            slot.1 = raw.clone();
        }
    }
    values
}

/// A before image as LogMiner logs it: LOB columns are not in it.
fn before_image(table: &TableSchema, values: &[(&'static str, RawValue<'static>)]) -> Row {
    let logged: Vec<_> = values
        .iter()
        .filter(|(name, _)| !table.column(name).unwrap().data_type.is_lob_like())
        .cloned()
        .collect();
    row(table, &logged)
}

fn source(scn: u64, ssn: u64) -> SourceInfo {
    SourceInfo {
        scn,
        commit_scn: Some(2_146_951),
        xid: Some(Xid::from_hex("07000C00F3010000").unwrap()),
        rs_id: Some("0x000007.000228b9.0010".to_owned()),
        ssn,
        redo_thread: 1,
        user_name: Some("APP_USER".to_owned()),
        row_id: Some("AAAR9JAAHAAAACFAAB".to_owned()),
        change_time: Some("2024-01-02T03:04:05Z".parse().unwrap()),
        commit_time: Some("2024-01-02T03:04:06Z".parse().unwrap()),
        transaction_start: Some(TransactionStart {
            scn: 2_146_940,
            time: Some("2024-01-02T03:04:01Z".parse().unwrap()),
        }),
        transaction_sequence: Some(ssn),
        snapshot: SnapshotMarker::False,
    }
}

/// The golden events, in order.
fn events() -> Vec<ChangeEvent> {
    let t = all_types_table();
    let n = no_key_table();
    let full1 = full_row_values("1");
    let updated1 = with(
        full1.clone(),
        &[
            ("VC", lit("paid")),
            ("N_DEC", lit("99999999.99")),
            ("CL", lit("a new CLOB")),
        ],
    );
    let moved2 = with(updated1.clone(), &[("ID", lit("2"))]);
    let edge = edge_row_values();
    let ev = |op, table: &Arc<TableSchema>, before, after, scn, order| ChangeEvent {
        op,
        table: Arc::clone(table),
        before,
        after,
        source: source(scn, order),
    };
    let insert = |table: &Arc<TableSchema>, values: &[_], scn, order| {
        let after = Some(row(table, values));
        ev(Operation::Create, table, None, after, scn, order)
    };
    let update = |table: &Arc<TableSchema>, old: &[_], new: &[_], scn, order| {
        let (before, after) = (Some(before_image(table, old)), Some(row(table, new)));
        ev(Operation::Update, table, before, after, scn, order)
    };
    let delete = |table: &Arc<TableSchema>, values: &[_], scn, order| {
        let before = Some(before_image(table, values));
        ev(Operation::Delete, table, before, None, scn, order)
    };
    let snapshot_image = Some(row(&t, &edge));
    let mut snapshot_read = ev(Operation::Read, &t, None, snapshot_image, 2_146_900, 1);
    snapshot_read.source = SourceInfo {
        scn: 2_146_900,
        snapshot: SnapshotMarker::Last,
        change_time: Some("2024-01-02T03:00:00Z".parse().unwrap()),
        ..SourceInfo::default()
    };
    let at = call("TO_DATE", &["2024-01-02 03:04:05", "YYYY-MM-DD HH24:MI:SS"]);
    vec![
        snapshot_read,
        insert(&t, &full1, 2_146_947, 1),
        update(&t, &full1, &updated1, 2_146_948, 2),
        update(&t, &updated1, &moved2, 2_146_949, 3),
        insert(&t, &edge, 2_146_950, 4),
        delete(&t, &edge, 2_146_950, 5),
        insert(&n, &[("MSG", lit("hello")), ("AT", at)], 2_146_950, 6),
        // The keyless table has no LOB column: its before image is the whole row.
        delete(
            &n,
            &[("MSG", lit("hello")), ("AT", RawValue::Null)],
            2_146_950,
            7,
        ),
        ev(Operation::Truncate, &n, None, None, 2_146_950, 8),
        ev(
            Operation::Ddl {
                sql: "ALTER TABLE APP.ALL_TYPES ADD (PRIORITY NUMBER(1))".to_owned(),
            },
            &t,
            None,
            None,
            2_146_950,
            9,
        ),
    ]
}

fn processed_at() -> jiff::Timestamp {
    "2024-01-02T03:04:07.123456789Z".parse().unwrap()
}

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/events")
        .join(name)
}

fn check_golden(name: &str, actual: &str) {
    let path = fixture_path(name);
    if std::env::var_os("REDOLINE_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with REDOLINE_BLESS=1)", path.display()));
    similar_asserts::assert_eq!(expected, actual, "{name} differs from the golden file");
    // Every line is valid JSON.
    for line in actual.lines() {
        let _: serde_json::Value = serde_json::from_str(line).unwrap();
    }
}

/// Appends `record` as one Debezium fixture line (see the module documentation).
fn push_record_line(out: &mut String, record: &Record) {
    out.push_str("{\"topic\":");
    out.push_str(&serde_json::to_string(&record.topic).unwrap());
    out.push_str(",\"key\":");
    out.push_str(json_text(record.key.as_deref()));
    out.push_str(",\"value\":");
    out.push_str(json_text(record.value.as_deref()));
    out.push_str("}\n");
}

/// A JSON key or value as text (`None`: `null`).
fn json_text(bytes: Option<&[u8]>) -> &str {
    std::str::from_utf8(bytes.unwrap_or(b"null")).unwrap()
}

fn debezium_lines(options: DebeziumOptions) -> String {
    let mut encoder = DebeziumEncoder::new(options);
    let mut out = String::new();
    for event in events() {
        for record in encoder.encode(&event, processed_at()).unwrap() {
            push_record_line(&mut out, &record);
        }
    }
    out
}

fn base_options() -> DebeziumOptions {
    DebeziumOptions {
        topic_prefix: "server1".to_owned(),
        database_name: "ORCLPDB1".to_owned(),
        connector_version: "0.1.0".to_owned(),
        ..DebeziumOptions::default()
    }
}

/// double decimals, connect time precision, hex binary, string intervals, NUMBER(1) as boolean,
/// transaction metadata and truncate events.
fn modes_a() -> DebeziumOptions {
    DebeziumOptions {
        decimal_handling: DecimalHandling::Double,
        time_precision: TimePrecision::Connect,
        binary_handling: BinaryHandling::Hex,
        interval_handling: IntervalHandling::String,
        number_one_as_boolean: true,
        provide_transaction_metadata: true,
        skipped_operations: SkippedOperations {
            truncate: false,
            ..SkippedOperations::default()
        },
        ..base_options()
    }
}

/// string decimals, URL-safe base64 binary, no tombstones, no envelope.
fn modes_b() -> DebeziumOptions {
    DebeziumOptions {
        decimal_handling: DecimalHandling::String,
        binary_handling: BinaryHandling::Base64UrlSafe,
        tombstones_on_delete: false,
        schemas_enabled: false,
        ..base_options()
    }
}

#[test]
fn compact_golden() {
    let mut out = String::new();
    for event in events() {
        out.push_str(&compact::encode(&event));
        out.push('\n');
    }
    check_golden("compact.jsonl", &out);
}

#[test]
fn debezium_enveloped_golden() {
    check_golden("debezium_envelope.jsonl", &debezium_lines(base_options()));
}

#[test]
fn debezium_plain_golden() {
    check_golden(
        "debezium_plain.jsonl",
        &debezium_lines(DebeziumOptions {
            schemas_enabled: false,
            ..base_options()
        }),
    );
}

#[test]
fn debezium_modes_a_golden() {
    check_golden("debezium_modes_a.jsonl", &debezium_lines(modes_a()));
}

#[test]
fn debezium_modes_b_golden() {
    check_golden("debezium_modes_b.jsonl", &debezium_lines(modes_b()));
}

/// The DDL event of `sql` on `table`, as the schema change golden files have it.
fn ddl(sql: &str, table: &Arc<TableSchema>) -> ChangeEvent {
    ChangeEvent {
        op: Operation::Ddl {
            sql: sql.to_owned(),
        },
        table: Arc::clone(table),
        before: None,
        after: None,
        source: SourceInfo {
            row_id: None,
            ..source(2_146_950, 0)
        },
    }
}

/// Schema change records (an ALTER of the table of every type, a DROP of the keyless one) and a
/// heartbeat record, enveloped: the records the engine writes beside the data.
#[test]
fn debezium_schema_change_and_heartbeat_golden() {
    let options = base_options();
    let (t, n) = (all_types_table(), no_key_table());
    let alter = "ALTER TABLE APP.ALL_TYPES ADD (PRIORITY NUMBER(1))";
    let drop = "DROP TABLE APP.NO_KEY";
    let mut out = String::new();
    let mut write = |record: Record| push_record_line(&mut out, &record);
    write(schema_change_record(
        &options,
        &ddl(alter, &t),
        alter,
        &TableChange::new(ChangeKind::Alter, &options.database_name, &t),
        processed_at(),
    ));
    write(schema_change_record(
        &options,
        &ddl(drop, &n),
        drop,
        &TableChange::new(ChangeKind::Drop, &options.database_name, &n),
        processed_at(),
    ));
    write(heartbeat_record(
        &heartbeat_topic("__debezium-heartbeat", &options.topic_prefix),
        &options.topic_prefix,
        true,
        processed_at(),
    ));
    check_golden("debezium_schema_change.jsonl", &out);
}

/// An `EMPTY_CLOB()` / `EMPTY_BLOB()` that no piece filled is null in a nullable column and
/// empty in a NOT NULL one, as Debezium's converters write it.
#[test]
fn empty_lobs_are_null_when_the_column_is_nullable() {
    let table = Arc::new(
        TableSchema::new(
            "APP",
            "DOCS",
            vec![
                Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
                Column::new("NOTE", OracleType::parse("CLOB").unwrap()),
                Column::new("BODY", OracleType::parse("CLOB").unwrap()).nullable(false),
                Column::new("PICTURE", OracleType::parse("BLOB").unwrap()),
                Column::new("SCAN", OracleType::parse("BLOB").unwrap()).nullable(false),
            ],
        )
        .unwrap(),
    );
    let event = ChangeEvent {
        op: Operation::Create,
        table: Arc::clone(&table),
        before: None,
        after: Some(row(
            &table,
            &[
                ("ID", lit("1")),
                ("NOTE", call("EMPTY_CLOB", &[])),
                ("BODY", call("EMPTY_CLOB", &[])),
                ("PICTURE", call("EMPTY_BLOB", &[])),
                ("SCAN", call("EMPTY_BLOB", &[])),
            ],
        )),
        source: source(2_146_950, 1),
    };
    let mut encoder = DebeziumEncoder::new(DebeziumOptions {
        schemas_enabled: false,
        binary_handling: BinaryHandling::Base64,
        ..base_options()
    });
    let records = encoder.encode(&event, processed_at()).unwrap();
    let value: serde_json::Value =
        serde_json::from_slice(records[0].value.as_deref().unwrap()).unwrap();
    let after = &value["after"];
    assert!(
        after["NOTE"].is_null() && after["PICTURE"].is_null(),
        "{after}"
    );
    assert_eq!(after["BODY"], "");
    assert_eq!(after["SCAN"], "");
}

/// Debezium's schema versions: the envelope is version 2 (`Envelope.SCHEMA_VERSION`), the source
/// block and the heartbeat key and value version 1.
#[test]
fn schemas_carry_debeziums_versions() {
    let mut encoder = DebeziumEncoder::new(base_options());
    let records = encoder.encode(&events()[1], processed_at()).unwrap();
    let value: serde_json::Value =
        serde_json::from_slice(records[0].value.as_deref().unwrap()).unwrap();
    assert_eq!(value["schema"]["name"], "server1.APP.ALL_TYPES.Envelope");
    assert_eq!(value["schema"]["version"], 2);
    let source = &value["schema"]["fields"][2];
    assert_eq!(source["field"], "source");
    assert_eq!(source["version"], 1);
    let payload = &value["payload"]["source"];
    assert_eq!(payload["start_scn"], "2146940");
    assert_eq!(payload["start_ts_ms"], 1_704_164_641_000_i64);
    assert!(payload["txSeq"].is_i64());
    assert!(payload["lcr_position"].is_null() && payload["redo_sql"].is_null());

    let heartbeat = heartbeat_record(
        "__debezium-heartbeat.server1",
        "server1",
        true,
        processed_at(),
    );
    for json in [heartbeat.key.as_deref(), heartbeat.value.as_deref()] {
        let json: serde_json::Value = serde_json::from_slice(json.unwrap()).unwrap();
        assert_eq!(json["schema"]["version"], 1, "{json}");
    }
}

/// BEGIN and END records of the transaction metadata topic, enveloped: BEGIN before the
/// transaction's first data event, END with the counts of the envelopes written (a key change
/// counts twice, tombstones and the skipped truncate not at all).
#[test]
fn debezium_transaction_metadata_golden() {
    let mut encoder = DebeziumEncoder::new(DebeziumOptions {
        provide_transaction_metadata: true,
        ..base_options()
    });
    let mut records = Vec::new();
    for event in events() {
        records.extend(encoder.encode(&event, processed_at()).unwrap());
    }
    records.extend(encoder.end_transaction(processed_at()).unwrap());
    assert_eq!(
        encoder.end_transaction(processed_at()).unwrap(),
        None,
        "one END per transaction"
    );
    let topics: Vec<&str> = records.iter().map(|r| r.topic.as_str()).collect();
    let begin = topics.iter().position(|t| *t == "server1.transaction");
    assert_eq!(
        begin,
        Some(1),
        "after the snapshot read, before the first change"
    );
    assert_eq!(topics.last(), Some(&"server1.transaction"));
    let mut out = String::new();
    for record in records.iter().filter(|r| r.topic == "server1.transaction") {
        push_record_line(&mut out, record);
    }
    check_golden("debezium_transaction.jsonl", &out);
    let end: serde_json::Value =
        serde_json::from_slice(records.last().unwrap().value.as_deref().unwrap()).unwrap();
    assert_eq!(end["payload"]["status"], "END");
    assert_eq!(end["payload"]["event_count"], 8);
    let orders: Vec<(i64, i64, String)> = records
        .iter()
        .filter(|r| r.topic != "server1.transaction")
        .filter_map(|r| r.value.as_deref())
        .map(|v| serde_json::from_slice::<serde_json::Value>(v).unwrap())
        .filter(|v| !v["payload"]["transaction"].is_null())
        .map(|v| {
            let tx = &v["payload"]["transaction"];
            assert_eq!(tx["id"], "07000c00f3010000");
            (
                tx["total_order"].as_i64().unwrap(),
                tx["data_collection_order"].as_i64().unwrap(),
                v["payload"]["op"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(i64, i64, String)> = [
        (1, 1, "c"),
        (2, 2, "u"),
        (3, 3, "d"),
        (4, 4, "c"),
        (5, 5, "c"),
        (6, 6, "d"),
        (7, 1, "c"),
        (8, 2, "d"),
    ]
    .into_iter()
    .map(|(t, d, op)| (t, d, op.to_owned()))
    .collect();
    assert_eq!(orders, expected);
}

/// `skipped.operations`: each op letter drops its envelopes, a key change's halves included.
#[test]
fn skipped_operations_drop_envelopes_by_op_letter() {
    let ops = |skipped: SkippedOperations| -> Vec<String> {
        let mut encoder = DebeziumEncoder::new(DebeziumOptions {
            skipped_operations: skipped,
            schemas_enabled: false,
            ..base_options()
        });
        events()
            .iter()
            .flat_map(|e| encoder.encode(e, processed_at()).unwrap())
            .map(|r| match r.value {
                Some(v) => serde_json::from_slice::<serde_json::Value>(&v).unwrap()["op"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                None => "tombstone".to_owned(),
            })
            .collect()
    };
    let none = SkippedOperations {
        create: false,
        update: false,
        delete: false,
        truncate: false,
    };
    // (skipped, the op letters left in order, why)
    let cases = [
        (
            none,
            "r c u d tombstone c c d tombstone c d tombstone t",
            "nothing skipped",
        ),
        (
            SkippedOperations::default(),
            "r c u d tombstone c c d tombstone c d tombstone",
            "the default skips truncates",
        ),
        (
            SkippedOperations {
                delete: true,
                ..none
            },
            "r c u c c c t",
            "no delete, no tombstone, the create half of the key change stays",
        ),
        (
            SkippedOperations {
                create: true,
                update: true,
                ..none
            },
            "r d tombstone d tombstone d tombstone t",
            "no create, no update, the delete half of the key change stays",
        ),
    ];
    for (skipped, expected, why) in cases {
        let expected: Vec<&str> = expected.split(' ').collect();
        assert_eq!(ops(skipped), expected, "{why}");
    }
}

/// Whether `record` is an envelope with op `op`.
fn has_op(record: &Record, op: &str) -> bool {
    record
        .value
        .as_deref()
        .is_some_and(|v| String::from_utf8_lossy(v).contains(&format!("\"op\":\"{op}\"")))
}

#[test]
fn a_key_change_is_delete_tombstone_create() {
    let mut encoder = DebeziumEncoder::new(base_options());
    let events = events();
    let records = encoder.encode(&events[3], processed_at()).unwrap();
    assert_eq!(records.len(), 3);
    assert!(has_op(&records[0], "d"));
    assert_eq!(records[1].value, None);
    assert_eq!(records[0].key, records[1].key);
    assert!(has_op(&records[2], "c"));
    assert_ne!(records[0].key, records[2].key);
}

/// Debezium's dispatcher follows every delete with a tombstone, whatever the key: a table
/// without a key gets a record with a null key and a null value.
#[test]
fn a_delete_from_a_table_without_key_is_followed_by_a_null_key_tombstone() {
    let events = events();
    assert_eq!(events[7].op, Operation::Delete);
    let mut encoder = DebeziumEncoder::new(base_options());
    let records = encoder.encode(&events[7], processed_at()).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].key, None);
    assert!(has_op(&records[0], "d"));
    assert_eq!(records[1].key, None);
    assert_eq!(records[1].value, None);
    for record in &records {
        assert_eq!(record.topic, "server1.APP.AUDIT_LOG");
    }
    let mut without_tombstones = DebeziumEncoder::new(DebeziumOptions {
        tombstones_on_delete: false,
        ..base_options()
    });
    let records = without_tombstones
        .encode(&events[7], processed_at())
        .unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].key, None);
}

#[test]
fn a_null_in_a_not_null_column_is_an_encode_error() {
    let mut encoder = DebeziumEncoder::new(base_options());
    let n = no_key_table();
    let event = ChangeEvent {
        op: Operation::Create,
        table: Arc::clone(&n),
        before: None,
        after: Some(row(&n, &[("AT", RawValue::Null)])),
        source: source(1, 1),
    };
    let err = encoder.encode(&event, processed_at()).unwrap_err();
    assert!(err.to_string().contains("MSG"), "{err}");
}

#[test]
fn typing_errors_name_table_column_and_value() {
    let t = all_types_table();
    type Case = (&'static str, RawValue<'static>, fn(&InvalidReason) -> bool);
    let cases: &[Case] = &[
        ("ID", lit("12a"), |r| matches!(r, InvalidReason::Number(_))),
        ("N_DEC", lit("1.234"), |r| {
            matches!(r, InvalidReason::NumberDoesNotFit { .. })
        }),
        ("C", lit("abcdefghijkl"), |r| {
            matches!(r, InvalidReason::TooLong { .. })
        }),
        (
            "D",
            call("TO_DATE", &["2023-02-30 00:00:00", "YYYY-MM-DD HH24:MI:SS"]),
            |r| matches!(r, InvalidReason::Temporal(_)),
        ),
        ("RW", call("HEXTORAW", &["abc"]), |r| {
            matches!(r, InvalidReason::Hex(_))
        }),
        (
            "TS3",
            call("TO_TIMESTAMP", &["2021-09-14 07:36:46.4781"]),
            |r| matches!(r, InvalidReason::FractionTooPrecise(3)),
        ),
        (
            "TSTZ",
            call("TO_TIMESTAMP_TZ", &["2024-02-14 10:58:02 US/Pacific"]),
            |r| matches!(r, InvalidReason::Temporal(_)),
        ),
        ("BL", lit("not hex"), |r| {
            matches!(r, InvalidReason::UnexpectedShape(_))
        }),
    ];
    for (column, raw, expected) in cases {
        let err = typed_column_value(&t, column, raw).unwrap_err();
        let ValueError::Invalid { table, source } = &err else {
            panic!("{err}");
        };
        assert_eq!(table, "APP.ALL_TYPES");
        assert_eq!(source.column, *column);
        assert!(expected(&source.reason), "{column}: {err}");
        let message = err.to_string();
        assert!(
            message.contains("APP.ALL_TYPES") && message.contains(column),
            "{message}"
        );
    }
}

/// Canonical text of a decimal built from its parts, computed independently of the parser.
fn canonical(negative: bool, int_part: &str, frac_part: &str) -> String {
    let int = int_part.trim_start_matches('0');
    let frac = frac_part.trim_end_matches('0');
    let body = match (int.is_empty(), frac.is_empty()) {
        (true, true) => return "0".to_owned(),
        (_, true) => int.to_owned(),
        (true, false) => format!("0.{frac}"),
        (false, false) => format!("{int}.{frac}"),
    };
    if negative { format!("-{body}") } else { body }
}

/// Big-endian two's complement back to an integer.
fn from_twos_complement(bytes: &[u8]) -> i128 {
    let mut value: i128 = if bytes[0] & 0x80 != 0 { -1 } else { 0 };
    for &b in bytes {
        value = (value << 8) | i128::from(b);
    }
    value
}

fn number_column(t: &str) -> Column {
    Column::new("N", OracleType::parse(t).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// NUMBER text → typed value → compact JSON is the exact decimal; the Connect Decimal bytes
    /// and VariableScaleDecimal scale give the same value back.
    #[test]
    fn number_text_round_trips_exactly(
        negative in any::<bool>(),
        int_part in "[0-9]{0,20}",
        frac_part in "[0-9]{0,18}",
        leading_dot in any::<bool>(),
    ) {
        prop_assume!(!(int_part.is_empty() && frac_part.is_empty()));
        let int_shown = if leading_dot && !frac_part.is_empty() { String::new() } else if int_part.is_empty() { "0".to_owned() } else { int_part.clone() };
        let text = format!(
            "{}{}{}{}",
            if negative { "-" } else { "" },
            int_shown,
            if frac_part.is_empty() { "" } else { "." },
            frac_part
        );
        let expected = canonical(negative, &int_shown, &frac_part);
        let value = typed(&lit(&text), &number_column("NUMBER")).unwrap();
        let Value::Number(number) = &value else { panic!("{value:?}") };
        prop_assert_eq!(number.to_string(), expected.clone());

        let mut json = String::new();
        compact::write_value(&mut json, &OracleType::parse("NUMBER").unwrap(), &value);
        let decoded: String = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&decoded, &expected);
        prop_assert_eq!(OracleNumber::parse(&decoded).unwrap(), number.clone());

        let unscaled = from_twos_complement(&number.unscaled_bytes(i32::try_from(number.scale()).unwrap()));
        let digits = number.significant_digits();
        let magnitude: i128 = if digits.is_empty() { 0 } else { digits.parse().unwrap() };
        prop_assert_eq!(unscaled, if number.is_negative() { -magnitude } else { magnitude });
    }

    /// Integers of NUMBER(18) are JSON integers equal to the text.
    #[test]
    fn number18_is_a_json_integer(v in -999_999_999_999_999_999i64..=999_999_999_999_999_999i64) {
        let value = typed(&lit(&v.to_string()), &number_column("NUMBER(18)")).unwrap();
        let mut json = String::new();
        compact::write_value(&mut json, &OracleType::parse("NUMBER(18)").unwrap(), &value);
        prop_assert_eq!(serde_json::from_str::<i64>(&json).unwrap(), v);
    }

    /// Typing never panics, whatever the text or call.
    #[test]
    fn typing_never_panics(text in any::<String>(), name in "[A-Z_]{0,16}", type_index in 0..ALL_TYPES.len()) {
        let column = Column::new("C", OracleType::parse(ALL_TYPES[type_index].1).unwrap());
        let _ = typed(&lit(&text), &column);
        let _ = typed(&call(&name, &[&text]), &column);
        let _ = typed(&call(&name, &[&text, &text]), &column);
        let _ = OracleType::parse(&text);
    }

    /// Date-time text that looks like LogMiner's never panics either.
    #[test]
    fn timestamp_like_text_never_panics(text in "[0-9]{1,5}-[0-9]{1,3}-[0-9]{1,3} [0-9]{1,3}:[0-9]{1,3}:[0-9]{1,3}(\\.[0-9]{0,12})?( [+-][0-9]{1,3}:[0-9]{1,3})?") {
        for t in ["DATE", "TIMESTAMP(9)", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH LOCAL TIME ZONE"] {
            let column = Column::new("C", OracleType::parse(t).unwrap());
            let _ = typed(&call("TO_TIMESTAMP", &[&text]), &column);
            let _ = typed(&call("TO_TIMESTAMP_TZ", &[&text]), &column);
            let _ = typed(&call("TO_DATE", &[&text, "YYYY-MM-DD HH24:MI:SS"]), &column);
        }
    }
}

/// The seam with the SQL_REDO parser: statements of the LogMiner corpus (logminer.md §3), parsed
/// by `redo::parse_dml` and typed by the table's columns.
#[test]
fn logminer_corpus_statements_type_exactly() {
    use redoline_capture::redo::{DmlStatement, parse_dml};

    let employees = TableSchema::new(
        "HR",
        "EMPLOYEES",
        [
            ("EMPLOYEE_ID", "NUMBER(6)"),
            ("FIRST_NAME", "VARCHAR2(20)"),
            ("LAST_NAME", "VARCHAR2(25)"),
            ("EMAIL", "VARCHAR2(25)"),
            ("PHONE_NUMBER", "VARCHAR2(20)"),
            ("HIRE_DATE", "DATE"),
            ("JOB_ID", "VARCHAR2(10)"),
            ("SALARY", "NUMBER(8,2)"),
            ("COMMISSION_PCT", "NUMBER(2,2)"),
            ("MANAGER_ID", "NUMBER(6)"),
            ("DEPARTMENT_ID", "NUMBER(4)"),
        ]
        .iter()
        .map(|(n, t)| Column::new(*n, OracleType::parse(t).unwrap()))
        .collect(),
    )
    .unwrap();
    let sql = r#"insert into "HR"."EMPLOYEES"("EMPLOYEE_ID","FIRST_NAME","LAST_NAME","EMAIL","PHONE_NUMBER","HIRE_DATE","JOB_ID","SALARY","COMMISSION_PCT","MANAGER_ID","DEPARTMENT_ID") values ('306','Nandini','Shastry','NSHASTRY','1234567890',TO_DATE('10-jan-2012 13:34:43', 'dd-mon-yyyy hh24:mi:ss'),'HR_REP','120000','.05','105','10');"#;
    let DmlStatement::Insert { values, .. } = parse_dml(sql).unwrap() else {
        panic!("not an insert");
    };
    let row = typed_row(&employees, &values).unwrap();
    let mut json = String::new();
    for (i, column) in employees.columns().iter().enumerate() {
        json.push_str(&column.name);
        json.push('=');
        compact::write_value(&mut json, &column.data_type, row.get(i).unwrap());
        json.push(' ');
    }
    assert_eq!(
        json.trim_end(),
        r#"EMPLOYEE_ID=306 FIRST_NAME="Nandini" LAST_NAME="Shastry" EMAIL="NSHASTRY" PHONE_NUMBER="1234567890" HIRE_DATE="2012-01-10T13:34:43" JOB_ID="HR_REP" SALARY="120000.00" COMMISSION_PCT="0.05" MANAGER_ID=105 DEPARTMENT_ID=10"#
    );

    let customers = TableSchema::new(
        "C##MYUSER",
        "CUSTOMERS",
        vec![
            Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
            Column::new("CLUB_STATUS", OracleType::parse("VARCHAR2(20)").unwrap()),
            Column::new("UPDATE_TS", OracleType::parse("TIMESTAMP(3)").unwrap()),
            Column::new(
                "WARRANTY",
                OracleType::parse("INTERVAL YEAR TO MONTH").unwrap(),
            ),
        ],
    )
    .unwrap();
    let sql = r#"update "C##MYUSER"."CUSTOMERS" set "CLUB_STATUS" = 'gold', "UPDATE_TS" = TO_TIMESTAMP('2021-09-14 07:36:49.000'), "WARRANTY" = TO_YMINTERVAL('+05-00') where "ID" = '43' and "CLUB_STATUS" = 'silver' and "UPDATE_TS" = TO_TIMESTAMP('2021-09-14 07:36:48.000') and "WARRANTY" IS NULL and ROWID = 'AAAR9JAAHAAAACFAAB';"#;
    let DmlStatement::Update { set, where_, .. } = parse_dml(sql).unwrap() else {
        panic!("not an update");
    };
    let before = typed_row(&customers, &where_).unwrap();
    let after = typed_row(&customers, &set).unwrap();
    assert_eq!(before.get(3), Some(&Value::Null));
    let mut json = String::new();
    compact::write_value(
        &mut json,
        &customers.columns()[2].data_type,
        after.get(2).unwrap(),
    );
    compact::write_value(
        &mut json,
        &customers.columns()[3].data_type,
        after.get(3).unwrap(),
    );
    assert_eq!(json, r#""2021-09-14T07:36:49""P5Y0M0DT0H0M0S""#);
}

/// Oracle names often hold `$` and `#`, which Kafka topic names cannot: Debezium names the key,
/// value and envelope schemas after the sanitised topic name, and so does redoline (issue 18).
#[test]
fn schema_names_follow_the_sanitised_topic_name() {
    let table = Arc::new(
        TableSchema::new(
            "C##APP",
            "ORDERS$HIST",
            vec![Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1)],
        )
        .unwrap(),
    );
    let event = ChangeEvent {
        op: Operation::Create,
        table: Arc::clone(&table),
        before: None,
        after: Some(row(&table, &[("ID", lit("7"))])),
        source: source(2_146_950, 1),
    };
    let mut encoder = DebeziumEncoder::new(base_options());
    let records = encoder.encode(&event, processed_at()).unwrap();
    let record = &records[0];
    assert_eq!(record.topic, "server1.C__APP.ORDERS_HIST");
    let key: serde_json::Value = serde_json::from_slice(record.key.as_deref().unwrap()).unwrap();
    assert_eq!(key["schema"]["name"], "server1.C__APP.ORDERS_HIST.Key");
    let value: serde_json::Value =
        serde_json::from_slice(record.value.as_deref().unwrap()).unwrap();
    assert_eq!(
        value["schema"]["name"],
        "server1.C__APP.ORDERS_HIST.Envelope"
    );
    let fields = value["schema"]["fields"].as_array().unwrap();
    for image in &fields[..2] {
        assert_eq!(image["name"], "server1.C__APP.ORDERS_HIST.Value", "{image}");
    }
}

// The Avro encoding (`format.encoding: avro`): the same events under the same options, one Avro
// fixture line per line of the JSON fixture, `avro_<name>.jsonl`:
// `{"topic":…,"keySchema":<Avro schema text, or null>,"key":<base64 Avro body, or null>,
// "valueSchema":…,"value":…}` (bodies without Confluent's 5-byte header, whose id is the
// registry's). Every Avro record is also decoded by apache-avro under its schema and compared
// with the JSON payload of the same record.

/// A registry shared between the encoder and the test, which reads the schemas back.
#[derive(Clone, Debug, Default)]
struct SharedRegistry(Arc<std::sync::Mutex<MemoryRegistry>>);

impl SchemaRegistry for SharedRegistry {
    fn id(&mut self, usage: SchemaUse<'_>, schema: &str) -> Result<u32, RegistryError> {
        // A test that panicked while holding the lock has failed already.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .id(usage, schema)
    }
}

impl SharedRegistry {
    fn schema(&self, id: u32) -> String {
        self.0.lock().unwrap().schema(id).unwrap().to_owned()
    }
}

/// A JSON encoder (no envelope) and an Avro encoder of `options`, with the Avro encoder's
/// registry.
fn json_and_avro(options: DebeziumOptions) -> (DebeziumEncoder, DebeziumEncoder, SharedRegistry) {
    let registry = SharedRegistry::default();
    let json = DebeziumEncoder::new(DebeziumOptions {
        schemas_enabled: false,
        ..options.clone()
    });
    let avro = DebeziumEncoder::with_registry(
        DebeziumOptions {
            encoding: Encoding::Avro,
            ..options
        },
        Arc::new(Filters::default()),
        Box::new(registry.clone()),
    );
    (json, avro, registry)
}

/// An Avro value as the JSON payload JsonConverter reads: records as objects, unions as their
/// value, bytes and decimals as base64, floating point in Rust's shortest form.
fn avro_as_json(value: AvroValue) -> serde_json::Value {
    use base64::Engine as _;
    let floating =
        |text: String| serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
    let base64 = |bytes: &[u8]| {
        serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
    };
    match value {
        AvroValue::Null => serde_json::Value::Null,
        AvroValue::Boolean(b) => b.into(),
        AvroValue::Int(i) => i.into(),
        AvroValue::Long(l) | AvroValue::TimestampMillis(l) => l.into(),
        AvroValue::Float(f) if f.is_finite() => floating(format!("{f:?}")),
        AvroValue::Double(d) if d.is_finite() => floating(format!("{d:?}")),
        AvroValue::Float(f) => avro_as_json(AvroValue::Double(f64::from(f))),
        AvroValue::Double(d) if d.is_nan() => "NaN".into(),
        AvroValue::Double(d) => if d > 0.0 { "Infinity" } else { "-Infinity" }.into(),
        AvroValue::Bytes(b) => base64(&b),
        AvroValue::Decimal(d) => base64(&Vec::<u8>::try_from(&d).unwrap()),
        AvroValue::String(s) => s.into(),
        AvroValue::Union(_, inner) => avro_as_json(*inner),
        AvroValue::Array(items) => items.into_iter().map(avro_as_json).collect(),
        AvroValue::Record(fields) => fields
            .into_iter()
            .map(|(name, value)| (name, avro_as_json(value)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => panic!("an Avro value the encoding never writes: {other:?}"),
    }
}

/// Checks one Avro key or value against its JSON twin and returns its fixture members.
fn avro_part(
    registry: &SharedRegistry,
    avro: Option<&[u8]>,
    json: Option<&[u8]>,
) -> (String, String) {
    let (Some(avro), Some(json)) = (avro, json) else {
        assert_eq!(
            avro.is_none(),
            json.is_none(),
            "a null in one encoding only"
        );
        return ("null".to_owned(), "null".to_owned());
    };
    assert_eq!(avro[0], 0, "Confluent's magic byte");
    let id = u32::from_be_bytes(avro[1..5].try_into().unwrap());
    let schema_text = registry.schema(id);
    let schema = apache_avro::Schema::parse_str(&schema_text).unwrap();
    let mut body = &avro[5..];
    let decoded = apache_avro::reader::datum::GenericDatumReader::builder(&schema)
        .build()
        .unwrap()
        .read_value(&mut body)
        .unwrap();
    assert!(body.is_empty(), "the body is read to its end");
    let expected: serde_json::Value = serde_json::from_slice(json).unwrap();
    similar_asserts::assert_eq!(avro_as_json(decoded), expected);
    use base64::Engine as _;
    (
        serde_json::to_string(&schema_text).unwrap(),
        serde_json::to_string(&base64::engine::general_purpose::STANDARD.encode(&avro[5..]))
            .unwrap(),
    )
}

/// Appends the fixture line of `avro`, checked against `json`, the same record in JSON.
fn push_avro_line(out: &mut String, registry: &SharedRegistry, avro: &Record, json: &Record) {
    assert_eq!(avro.topic, json.topic);
    let (key_schema, key) = avro_part(registry, avro.key.as_deref(), json.key.as_deref());
    let (value_schema, value) = avro_part(registry, avro.value.as_deref(), json.value.as_deref());
    out.push_str(&format!(
        "{{\"topic\":{},\"keySchema\":{key_schema},\"key\":{key},\"valueSchema\":{value_schema},\"value\":{value}}}\n",
        serde_json::to_string(&avro.topic).unwrap()
    ));
}

/// The Avro fixture of the events under `options` (ending with the transaction's END, if any).
fn avro_lines(options: DebeziumOptions) -> String {
    let (mut json, mut avro, registry) = json_and_avro(options);
    let mut out = String::new();
    for event in events() {
        let json_records = json.encode(&event, processed_at()).unwrap();
        let avro_records = avro.encode(&event, processed_at()).unwrap();
        assert_eq!(json_records.len(), avro_records.len());
        for (a, j) in avro_records.iter().zip(&json_records) {
            push_avro_line(&mut out, &registry, a, j);
        }
    }
    if let (Some(a), Some(j)) = (
        avro.end_transaction(processed_at()).unwrap(),
        json.end_transaction(processed_at()).unwrap(),
    ) {
        push_avro_line(&mut out, &registry, &a, &j);
    }
    out
}

#[test]
fn avro_envelope_golden() {
    let lines = avro_lines(base_options());
    assert_eq!(
        lines.lines().count(),
        debezium_lines(base_options()).lines().count(),
        "one Avro line per JSON line"
    );
    check_golden("avro_envelope.jsonl", &lines);
}

#[test]
fn avro_modes_a_golden() {
    // modes_a's JSON fixture has no END: its events end inside their transaction.
    let lines = avro_lines(modes_a());
    let json_lines = debezium_lines(modes_a()).lines().count();
    assert_eq!(lines.lines().count(), json_lines + 1, "and the END record");
    let without_end: String = lines
        .lines()
        .take(json_lines)
        .map(|l| format!("{l}\n"))
        .collect();
    check_golden("avro_modes_a.jsonl", &without_end);
}

#[test]
fn avro_modes_b_golden() {
    check_golden("avro_modes_b.jsonl", &avro_lines(modes_b()));
}

/// The records of `debezium_transaction.jsonl`: BEGIN and END, in Avro.
#[test]
fn avro_transaction_golden() {
    let options = DebeziumOptions {
        provide_transaction_metadata: true,
        ..base_options()
    };
    let (mut json, mut avro, registry) = json_and_avro(options);
    let mut pairs = Vec::new();
    for event in events() {
        let j = json.encode(&event, processed_at()).unwrap();
        let a = avro.encode(&event, processed_at()).unwrap();
        pairs.extend(a.into_iter().zip(j));
    }
    pairs.push((
        avro.end_transaction(processed_at()).unwrap().unwrap(),
        json.end_transaction(processed_at()).unwrap().unwrap(),
    ));
    let mut out = String::new();
    for (a, j) in pairs
        .iter()
        .filter(|(a, _)| a.topic == "server1.transaction")
    {
        push_avro_line(&mut out, &registry, a, j);
    }
    check_golden("avro_transaction.jsonl", &out);
}

/// The records of `debezium_schema_change.jsonl`: two schema change events and a heartbeat.
#[test]
fn avro_schema_change_and_heartbeat_golden() {
    let (mut json, mut avro, registry) = json_and_avro(base_options());
    let (t, n) = (all_types_table(), no_key_table());
    let mut out = String::new();
    for (sql, table, kind) in [
        (
            "ALTER TABLE APP.ALL_TYPES ADD (PRIORITY NUMBER(1))",
            &t,
            ChangeKind::Alter,
        ),
        ("DROP TABLE APP.NO_KEY", &n, ChangeKind::Drop),
    ] {
        let change = TableChange::new(kind, "ORCLPDB1", table);
        let event = ddl(sql, table);
        let a = avro
            .schema_change(&event, sql, &change, processed_at())
            .unwrap();
        let j = json
            .schema_change(&event, sql, &change, processed_at())
            .unwrap();
        push_avro_line(&mut out, &registry, &a, &j);
    }
    let topic = heartbeat_topic("__debezium-heartbeat", "server1");
    let a = avro.heartbeat(&topic, processed_at()).unwrap();
    let j = json.heartbeat(&topic, processed_at()).unwrap();
    push_avro_line(&mut out, &registry, &a, &j);
    check_golden("avro_schema_change.jsonl", &out);
}

#[test]
fn avro_schemas_are_registered_once_per_table_structure() {
    let (_, mut avro, registry) = json_and_avro(base_options());
    for event in events() {
        avro.encode(&event, processed_at()).unwrap();
    }
    let registry = registry.0.lock().unwrap();
    assert_eq!(registry.versions("server1.APP.ALL_TYPES-value").len(), 1);
    assert_eq!(registry.versions("server1.APP.ALL_TYPES-key").len(), 1);
    assert!(
        registry.versions("server1.APP.NO_KEY-key").is_empty(),
        "no key schema"
    );
}

/// A registry that refuses every schema: the refusal reaches the caller unchanged.
#[derive(Debug)]
struct Refusing;

impl SchemaRegistry for Refusing {
    fn id(&mut self, usage: SchemaUse<'_>, _: &str) -> Result<u32, RegistryError> {
        Err(RegistryError::NotRegistered {
            subject: format!("{}-value", usage.topic),
        })
    }
}

#[test]
fn a_registry_refusal_is_an_encode_error_carrying_it() {
    let mut avro = DebeziumEncoder::with_registry(
        DebeziumOptions {
            encoding: Encoding::Avro,
            ..base_options()
        },
        Arc::new(Filters::default()),
        Box::new(Refusing),
    );
    let error = avro.encode(&events()[0], processed_at()).unwrap_err();
    assert!(
        matches!(&error, EncodeError::Registry(RegistryError::NotRegistered { subject }) if subject.starts_with("server1.APP.")),
        "{error:?}"
    );
}

/// A random value of an `ALL_TYPES` column type, as the typing layer makes them.
fn value_of(type_name: &'static str) -> BoxedStrategy<Value> {
    let number = |pattern: &'static str| {
        pattern
            .prop_map(|text: String| Value::Number(OracleNumber::parse(&text).unwrap()))
            .boxed()
    };
    // Years a nanosecond epoch count holds (TIMESTAMP(9) under adaptive precision).
    let datetime = (
        1700i16..=2200,
        1i8..=12,
        1i8..=28,
        0i8..24,
        0i8..60,
        0i8..60,
        0i32..1_000_000_000,
    )
        .prop_map(|(y, mo, d, h, mi, s, n)| {
            jiff::civil::DateTime::new(y, mo, d, h, mi, s, n).unwrap()
        });
    match type_name {
        "NUMBER(10)" => number("-?[1-9][0-9]{0,9}|0"),
        "NUMBER(18)" => number("-?[1-9][0-9]{0,17}|0"),
        "INTEGER" => number("-?[1-9][0-9]{0,37}|0"),
        "NUMBER(10,2)" => number("-?[1-9][0-9]{0,7}(\\.[0-9]{1,2})?|0"),
        "NUMBER(5,-2)" => number("-?[1-9][0-9]{0,4}00|0"),
        "NUMBER" | "FLOAT(126)" => {
            number("-?[1-9][0-9]{0,20}(\\.[0-9]{1,20})?|-?0\\.[0-9]{0,30}[1-9]|0")
        }
        "NUMBER(1)" => number("-?[0-9]"),
        "BINARY_FLOAT" => any::<f32>().prop_map(Value::BinaryFloat).boxed(),
        "BINARY_DOUBLE" => any::<f64>().prop_map(Value::BinaryDouble).boxed(),
        "BLOB" | "RAW(8)" => proptest::collection::vec(any::<u8>(), 0..16)
            .prop_map(Value::Bytes)
            .boxed(),
        "DATE" => datetime.prop_map(Value::Date).boxed(),
        t if t.starts_with("TIMESTAMP(6) WITH") => (datetime, -840i32..=840)
            .prop_map(|(local, minutes)| Value::TimestampTz {
                local,
                offset: jiff::tz::Offset::from_seconds(minutes * 60).unwrap(),
            })
            .boxed(),
        t if t.contains("LOCAL TIME ZONE") => {
            (-62_000_000_000i64..250_000_000_000, 0i32..1_000_000_000)
                .prop_map(|(s, n)| Value::TimestampLtz(jiff::Timestamp::new(s, n).unwrap()))
                .boxed()
        }
        t if t.starts_with("TIMESTAMP") => datetime.prop_map(Value::Timestamp).boxed(),
        t if t.starts_with("INTERVAL YEAR") => (-1_200i64..1_200)
            .prop_map(|months| Value::IntervalYearToMonth { months })
            .boxed(),
        t if t.starts_with("INTERVAL DAY") => (-86_400_000_000_000_000i128..86_400_000_000_000_000)
            .prop_map(|n| Value::IntervalDayToSecond {
                nanoseconds: n / 1_000 * 1_000,
            })
            .boxed(),
        "XMLTYPE" => ".{0,12}".prop_map(Value::Xml).boxed(),
        _ => ".{0,12}".prop_map(Value::Text).boxed(),
    }
}

/// A random image of `ALL_TYPES`: each nullable column null one time in five, each LOB left out
/// of the image (its placeholder written) one time in five.
fn all_types_row() -> impl Strategy<Value = Row> {
    let columns: Vec<_> = ALL_TYPES
        .iter()
        .map(|(name, t)| {
            let value = value_of(t);
            let key = *name == "ID";
            let lob = matches!(*t, "CLOB" | "NCLOB" | "BLOB");
            (0u8..5, value).prop_map(move |(dice, value)| match dice {
                0 if !key && lob => None,
                1 if !key => Some(Value::Null),
                _ => Some(value),
            })
        })
        .collect();
    columns.prop_map(|values| {
        let mut row = Row::absent(values.len());
        for (index, value) in values.into_iter().enumerate() {
            if let Some(value) = value {
                row.set(index, value);
            }
        }
        row
    })
}

/// Random option sets: every decimal, time precision, binary and interval mode, NUMBER(1) as
/// boolean, the legacy decimal strategy, transaction metadata.
fn any_options() -> impl Strategy<Value = DebeziumOptions> {
    (
        0usize..3,
        any::<bool>(),
        0usize..4,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(decimal, connect, binary, string_interval, boolean, legacy, transactions)| {
                DebeziumOptions {
                    decimal_handling: [
                        DecimalHandling::Precise,
                        DecimalHandling::Double,
                        DecimalHandling::String,
                    ][decimal],
                    time_precision: if connect {
                        TimePrecision::Connect
                    } else {
                        TimePrecision::Adaptive
                    },
                    binary_handling: [
                        BinaryHandling::Bytes,
                        BinaryHandling::Base64,
                        BinaryHandling::Base64UrlSafe,
                        BinaryHandling::Hex,
                    ][binary],
                    interval_handling: if string_interval {
                        IntervalHandling::String
                    } else {
                        IntervalHandling::Numeric
                    },
                    number_one_as_boolean: boolean,
                    legacy_decimal_handling: legacy,
                    provide_transaction_metadata: transactions,
                    ..base_options()
                }
            },
        )
}

/// Column filters, a message key of two columns, masks and source type parameters: the
/// shapes the column rules give values and keys.
fn shaped_filters() -> Filters {
    let filters: redoline_crds::v1alpha1::FiltersSpec = serde_json::from_value(serde_json::json!({
        "columnExcludeList": ["APP\\.ALL_TYPES\\.NCL"]
    }))
    .unwrap();
    let columns: redoline_crds::v1alpha1::ColumnsSpec = serde_json::from_value(serde_json::json!({
        "messageKeyColumns": [{"table": "APP\\.ALL_TYPES", "columns": ["ID", "N_INT18"]}],
        "maskHash": [{"algorithm": "SHA-256", "salt": "s", "columns": ["APP\\.ALL_TYPES\\.VC"]}],
        "maskWithChars": [{"length": 3, "columns": ["APP\\.ALL_TYPES\\.NVC"]}],
        "truncateToChars": [{"length": 2, "columns": ["APP\\.ALL_TYPES\\.C"]}],
        "propagateSourceType": ["APP\\.ALL_TYPES\\.N_DEC"]
    }))
    .unwrap();
    Filters::new(&filters, &columns).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// For random rows of every column kind under random options (and, one time in two, the
    /// column rules), apache-avro decodes every Avro record under its registered schema to the
    /// values of the JSON encoding of the same record.
    #[test]
    fn avro_decodes_to_the_json_values(
        options in any_options(),
        shaped in any::<bool>(),
        before in all_types_row(),
        after in all_types_row(),
    ) {
        let filters = Arc::new(if shaped { shaped_filters() } else { Filters::default() });
        let registry = SharedRegistry::default();
        let mut json = DebeziumEncoder::with_filters(
            DebeziumOptions { schemas_enabled: false, ..options.clone() },
            Arc::clone(&filters),
        );
        let mut avro = DebeziumEncoder::with_registry(
            DebeziumOptions { encoding: Encoding::Avro, ..options },
            filters,
            Box::new(registry.clone()),
        );
        let table = all_types_table();
        let mut source = source(2_146_950, 1);
        source.xid = Some(Xid::from_hex("0a001b00c7000000").unwrap());
        let event = |op, before: Option<&Row>, after: Option<&Row>| ChangeEvent {
            op,
            table: Arc::clone(&table),
            before: before.cloned(),
            after: after.cloned(),
            source: source.clone(),
        };
        // Key columns are never null in an image: N_INT18 is one under the column rules.
        let mut before = before;
        let mut after = after;
        let key = table.column_index("N_INT18").unwrap();
        for row in [&mut before, &mut after] {
            if matches!(row.get(key), None | Some(Value::Null)) {
                row.set(key, Value::Number(OracleNumber::parse("7").unwrap()));
            }
        }
        let mut compared = 0;
        for event in [
            event(Operation::Create, None, Some(&after)),
            event(Operation::Update, Some(&before), Some(&after)),
            event(Operation::Delete, Some(&before), None),
        ] {
            let (j, a) = (json.encode(&event, processed_at()), avro.encode(&event, processed_at()));
            prop_assert_eq!(j.is_ok(), a.is_ok(), "{:?} / {:?}", j, a);
            let (Ok(j), Ok(a)) = (j, a) else { continue };
            prop_assert_eq!(j.len(), a.len());
            let mut out = String::new();
            for (a, j) in a.iter().zip(&j) {
                push_avro_line(&mut out, &registry, a, j);
                compared += 1;
            }
        }
        // The random values always fit their columns: every event is written.
        prop_assert!(compared >= 4, "{} records compared", compared);
    }
}

/// Oracle allows `#` and `$` in names, Avro does not: under Avro the record names and field
/// names are adjusted (invalid characters become `_`), the topic is unchanged, and the record
/// decodes under its schema.
#[test]
fn avro_adjusts_names_avro_refuses() {
    let table = Arc::new(
        TableSchema::new(
            "C##APP",
            "ORDERS$HIST",
            vec![
                Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
                Column::new("AMOUNT$", OracleType::parse("NUMBER(10,2)").unwrap()),
            ],
        )
        .unwrap(),
    );
    let event = ChangeEvent {
        op: Operation::Create,
        table: Arc::clone(&table),
        before: None,
        after: Some(row(&table, &[("ID", lit("7")), ("AMOUNT$", lit("12.50"))])),
        source: source(2_146_950, 1),
    };
    let (_, mut avro, registry) = json_and_avro(base_options());
    let records = avro.encode(&event, processed_at()).unwrap();
    let value = records[0].value.as_deref().unwrap();
    assert_eq!(records[0].topic, "server1.C__APP.ORDERS_HIST");
    let schema_text = registry.schema(u32::from_be_bytes(value[1..5].try_into().unwrap()));
    let schema = apache_avro::Schema::parse_str(&schema_text).unwrap();
    assert!(
        schema_text.contains(r#""name":"AMOUNT_""#)
            && schema_text.contains(r#""connect.name":"server1.C__APP.ORDERS_HIST.Envelope""#),
        "{schema_text}"
    );
    let decoded = apache_avro::reader::datum::GenericDatumReader::builder(&schema)
        .build()
        .unwrap()
        .read_value(&mut &value[5..])
        .unwrap();
    let decoded = avro_as_json(decoded);
    assert_eq!(decoded["after"]["AMOUNT_"], "BOI=", "1250 at scale 2");
}
