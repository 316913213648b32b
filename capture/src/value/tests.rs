use std::borrow::Cow;

use super::*;

fn col(name: &str, t: &str) -> Column {
    Column::new(name, OracleType::parse(t).unwrap())
}

fn lit(s: &str) -> RawValue<'static> {
    RawValue::Text(Cow::Owned(s.to_owned()))
}

fn call(name: &str, args: Vec<RawValue<'static>>) -> RawValue<'static> {
    RawValue::Call {
        name: Cow::Owned(name.to_owned()),
        args,
    }
}

fn ok(raw: RawValue<'static>, t: &str) -> Value {
    typed(&raw, &col("C", t)).unwrap()
}

fn reason(raw: RawValue<'static>, t: &str) -> InvalidReason {
    typed(&raw, &col("C", t)).unwrap_err().reason
}

#[test]
fn numbers_are_exact() {
    assert_eq!(
        ok(lit("42"), "NUMBER(10)"),
        Value::Number(OracleNumber::parse("42").unwrap())
    );
    assert_eq!(ok(lit(".05"), "NUMBER(3,2)").to_string(), "0.05");
    assert_eq!(ok(lit("-0"), "NUMBER"), Value::Number(OracleNumber::zero()));
    assert_eq!(ok(lit("12300"), "NUMBER(3,-2)").to_string(), "12300");
    assert_eq!(
        ok(lit("12345678901234567890123456789012345678"), "INTEGER").to_string(),
        "12345678901234567890123456789012345678"
    );
    assert_eq!(ok(lit("1.5"), "FLOAT(126)").to_string(), "1.5");
    assert_eq!(
        reason(lit("12a"), "NUMBER"),
        InvalidReason::Number(NumberError::NotANumber)
    );
    assert_eq!(
        reason(lit("1.234"), "NUMBER(10,2)"),
        InvalidReason::NumberDoesNotFit {
            precision: 10,
            scale: 2
        }
    );
    assert_eq!(
        reason(lit("12345"), "NUMBER(4)"),
        InvalidReason::NumberDoesNotFit {
            precision: 4,
            scale: 0
        }
    );
    assert!(matches!(
        reason(call("HEXTORAW", vec![lit("c229")]), "NUMBER"),
        InvalidReason::UnexpectedShape(_)
    ));
}

#[test]
fn binary_floats_and_specials() {
    assert_eq!(ok(lit("1.5"), "BINARY_DOUBLE"), Value::BinaryDouble(1.5));
    assert_eq!(ok(lit("0.1"), "BINARY_FLOAT"), Value::BinaryFloat(0.1));
    assert_eq!(
        ok(lit("1.0E+10"), "BINARY_DOUBLE"),
        Value::BinaryDouble(1e10)
    );
    for (t, v) in [
        ("Inf", f64::INFINITY),
        ("-Inf", f64::NEG_INFINITY),
        ("Infinity", f64::INFINITY),
    ] {
        assert_eq!(ok(lit(t), "BINARY_DOUBLE"), Value::BinaryDouble(v));
    }
    assert!(matches!(ok(lit("Nan"), "BINARY_FLOAT"), Value::BinaryFloat(v) if v.is_nan()));
    assert!(matches!(ok(lit("NaN"), "BINARY_DOUBLE"), Value::BinaryDouble(v) if v.is_nan()));
    assert_eq!(
        reason(lit("infinit"), "BINARY_DOUBLE"),
        InvalidReason::Float
    );
    assert_eq!(reason(lit("1,5"), "BINARY_DOUBLE"), InvalidReason::Float);
}

#[test]
fn characters() {
    assert_eq!(
        ok(lit("ab        "), "CHAR(10)"),
        Value::Text("ab        ".into())
    );
    assert_eq!(ok(lit("Вы"), "NVARCHAR2(2)"), Value::Text("Вы".into()));
    assert_eq!(ok(lit(""), "VARCHAR2(10)"), Value::Null);
    assert_eq!(
        reason(lit("abcdefghijkl"), "CHAR(10)"),
        InvalidReason::TooLong {
            length: 12,
            max: 10
        }
    );
    assert_eq!(
        ok(lit("x".repeat(5000).as_str()), "CLOB"),
        Value::Text("x".repeat(5000))
    );
    assert_eq!(
        ok(call("EMPTY_CLOB", vec![]), "CLOB"),
        Value::LobPlaceholder(LobKind::Clob)
    );
    assert_eq!(
        ok(call("EMPTY_CLOB", vec![]), "NCLOB"),
        Value::LobPlaceholder(LobKind::NClob)
    );
    assert_eq!(
        ok(lit("AAAR9JAAHAAAACFAAB"), "ROWID"),
        Value::Text("AAAR9JAAHAAAACFAAB".into())
    );
}

#[test]
fn binary() {
    assert_eq!(
        ok(call("HEXTORAW", vec![lit("0E")]), "RAW(1)"),
        Value::Bytes(vec![0x0e])
    );
    assert_eq!(
        ok(call("HEXTORAW", vec![lit("556e69")]), "BLOB"),
        Value::Bytes(b"Uni".to_vec())
    );
    assert_eq!(
        ok(call("EMPTY_BLOB", vec![]), "BLOB"),
        Value::LobPlaceholder(LobKind::Blob)
    );
    assert!(matches!(
        reason(call("HEXTORAW", vec![lit("abc")]), "RAW(4)"),
        InvalidReason::Hex(binary::HexError::OddLength(3))
    ));
    assert!(matches!(
        reason(call("HEXTORAW", vec![lit("0102")]), "RAW(1)"),
        InvalidReason::TooLong { length: 2, max: 1 }
    ));
    assert!(matches!(
        reason(lit("0102"), "RAW(4)"),
        InvalidReason::UnexpectedShape(_)
    ));
}

/// The session formats are SYYYY: a BC year keeps its sign (Oracle has no year 0, so 44 BC is
/// astronomical year -43), an AD year comes with a leading space, and literals written under
/// the old YYYY formats still read.
#[test]
fn signed_years_keep_bc_dates() {
    let bc = ok(
        call(
            "TO_DATE",
            vec![lit("-0044-03-15 12:00:00"), lit(nls::NLS_DATE_FORMAT)],
        ),
        "DATE",
    );
    assert_eq!(bc, Value::Date(civil::datetime(-43, 3, 15, 12, 0, 0, 0)));
    let ad = ok(
        call("TO_TIMESTAMP", vec![lit(" 2024-01-02 03:04:05.120000000")]),
        "TIMESTAMP(3)",
    );
    assert_eq!(
        ad,
        Value::Timestamp(civil::datetime(2024, 1, 2, 3, 4, 5, 120_000_000))
    );
    let unsigned = ok(
        call("TO_TIMESTAMP", vec![lit("2024-01-02 03:04:05.120000000")]),
        "TIMESTAMP(3)",
    );
    assert_eq!(unsigned, ad);
    let earliest = ok(
        call(
            "TO_DATE",
            vec![lit("-4712-01-01 00:00:00"), lit("SYYYY-MM-DD HH24:MI:SS")],
        ),
        "DATE",
    );
    assert_eq!(
        earliest,
        Value::Date(civil::datetime(-4711, 1, 1, 0, 0, 0, 0))
    );
    assert!(matches!(
        reason(
            call(
                "TO_DATE",
                vec![lit("-4713-01-01 00:00:00"), lit("SYYYY-MM-DD HH24:MI:SS")]
            ),
            "DATE"
        ),
        InvalidReason::Temporal(TemporalError::OutOfRange(_))
    ));
}

#[test]
fn dates_and_timestamps() {
    let date = |text: &str, format: &str| call("TO_DATE", vec![lit(text), lit(format)]);
    let timestamp = |text: &str| call("TO_TIMESTAMP", vec![lit(text)]);
    let timestamp_tz = |text: &str| call("TO_TIMESTAMP_TZ", vec![lit(text)]);
    let civil = |text: &str| text.parse::<civil::DateTime>().unwrap();
    // (text, format, the DATE's value)
    let dates = [
        (
            "10-jan-2012 13:34:43",
            "dd-mon-yyyy hh24:mi:ss",
            "2012-01-10T13:34:43",
        ),
        (
            "2021-03-17 10:18:55",
            "YYYY-MM-DD HH24:MI:SS",
            "2021-03-17T10:18:55",
        ),
    ];
    for (text, format, expected) in dates {
        assert_eq!(
            ok(date(text, format), "DATE"),
            Value::Date(civil(expected)),
            "{text}"
        );
    }
    // (text, column type, the TIMESTAMP's value)
    let timestamps = [
        (
            "2020-02-01 00:00:00.",
            "TIMESTAMP(0)",
            "2020-02-01T00:00:00",
        ),
        (
            "2021-09-14 07:36:46.478",
            "TIMESTAMP(3)",
            "2021-09-14T07:36:46.478",
        ),
        (
            "2021-09-14 07:36:46.123456789",
            "TIMESTAMP(9)",
            "2021-09-14T07:36:46.123456789",
        ),
    ];
    for (text, t, expected) in timestamps {
        assert_eq!(
            ok(timestamp(text), t),
            Value::Timestamp(civil(expected)),
            "{text}"
        );
    }
    assert_eq!(
        ok(
            timestamp_tz("2024-02-14 10:58:02.202590 +01:00"),
            "TIMESTAMP WITH TIME ZONE"
        ),
        Value::TimestampTz {
            local: civil::datetime(2024, 2, 14, 10, 58, 2, 202_590_000),
            offset: Offset::from_seconds(3600).unwrap()
        }
    );
    // (raw value, the instant): a reading without offset is in the session TIME_ZONE, UTC.
    let local_time_zone = [
        (
            timestamp_tz("2024-02-14 10:58:02 +01:00"),
            "2024-02-14T09:58:02Z",
        ),
        (timestamp("2024-02-14 10:58:02"), "2024-02-14T10:58:02Z"),
    ];
    for (raw, expected) in local_time_zone {
        assert_eq!(
            ok(raw.clone(), "TIMESTAMP WITH LOCAL TIME ZONE"),
            Value::TimestampLtz(expected.parse().unwrap()),
            "{raw:?}"
        );
    }
    assert_eq!(
        reason(timestamp("2021-09-14 07:36:46.1234"), "TIMESTAMP(3)"),
        InvalidReason::FractionTooPrecise(3)
    );
    assert!(matches!(
        reason(
            timestamp_tz("2024-02-14 10:58:02 Europe/Paris"),
            "TIMESTAMP WITH TIME ZONE"
        ),
        InvalidReason::Temporal(TemporalError::Literal(nls::LiteralError::TimeZoneRegion(_)))
    ));
    assert!(matches!(
        reason(date("2023-02-29 00:00:00", "YYYY-MM-DD HH24:MI:SS"), "DATE"),
        InvalidReason::Temporal(TemporalError::OutOfRange(_))
    ));
    assert!(matches!(
        reason(date("10-JAN-12", "DD-MON-RR"), "DATE"),
        InvalidReason::Temporal(TemporalError::Format(nls::FormatError::TwoDigitYear(_)))
    ));
    assert!(matches!(
        reason(lit("yesterday"), "DATE"),
        InvalidReason::Temporal(_)
    ));
}

#[test]
fn intervals() {
    assert_eq!(
        ok(
            call("TO_YMINTERVAL", vec![lit("+05-00")]),
            "INTERVAL YEAR TO MONTH"
        ),
        Value::IntervalYearToMonth { months: 60 }
    );
    assert_eq!(
        ok(
            call("TO_DSINTERVAL", vec![lit("+02 03:04:05.123456")]),
            "INTERVAL DAY TO SECOND"
        ),
        Value::IntervalDayToSecond {
            nanoseconds: 183_845_123_456_000
        }
    );
    assert_eq!(
        reason(
            call("TO_YMINTERVAL", vec![lit("+100-00")]),
            "INTERVAL YEAR(2) TO MONTH"
        ),
        InvalidReason::IntervalTooLarge(2)
    );
}

#[test]
fn xml_unsupported_and_null() {
    assert_eq!(
        ok(call("XMLType", vec![lit("<a/>")]), "XMLTYPE"),
        Value::Xml("<a/>".into())
    );
    assert_eq!(ok(RawValue::Unsupported, "NUMBER"), Value::Unsupported);
    assert_eq!(ok(RawValue::Null, "DATE"), Value::Null);
}

#[test]
fn errors_name_table_column_and_value() {
    let table = TableSchema::new(
        "APP",
        "ORDERS",
        vec![col("ID", "NUMBER(10)").key(1), col("CODE", "CHAR(2)")],
    )
    .unwrap();
    let err = typed_column_value(&table, "ID", &lit("x1")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("APP.ORDERS") && text.contains("ID") && text.contains("'x1'"),
        "{text}"
    );
    let err = typed_column_value(&table, "NOPE", &lit("1")).unwrap_err();
    assert!(matches!(err, ValueError::UnknownColumn { .. }));
    let values = vec![(Cow::Borrowed("CODE"), lit("ab"))];
    let row = typed_row(&table, &values).unwrap();
    assert_eq!(row.get(0), None);
    assert_eq!(row.get(1), Some(&Value::Text("ab".into())));
}

/// Types every value of a parsed SQL_REDO INSERT for `table`.
fn insert_row(table: &TableSchema, sql: &str) -> Row {
    match crate::redo::parse_dml(sql).unwrap() {
        crate::redo::ast::DmlStatement::Insert { values, .. } => typed_row(table, &values).unwrap(),
        other => panic!("not an insert: {other:?}"),
    }
}

#[test]
fn json_values_as_logminer_writes_them() {
    // SQL_REDO shapes from Debezium's LogMinerDmlParserTest (dbz#1884): an empty JSON LOB
    // behind a `/* JSON */` hint; and a text literal, as Debezium's JSON converter takes it.
    let table = TableSchema::new(
        "DEBEZIUM",
        "DBZ1872",
        vec![
            col("ID", "NUMBER(9)").key(1),
            col("EXTRA_DATA", "JSON"),
            col("STRICT_DATA", "JSON").nullable(false),
        ],
    )
    .unwrap();
    let row = insert_row(
        &table,
        "insert into \"DEBEZIUM\".\"DBZ1872\"(\"ID\",\"EXTRA_DATA\",\"STRICT_DATA\") values \
         ('1',/* JSON */ EMPTY_BLOB(),/* JSON */ EMPTY_BLOB());",
    );
    // Debezium: null in a nullable column, "" in a NOT NULL one.
    assert_eq!(row.get(1), Some(&Value::Null));
    assert_eq!(row.get(2), Some(&Value::Text(String::new())));
    let row = insert_row(
        &table,
        "insert into \"DEBEZIUM\".\"DBZ1872\"(\"ID\",\"EXTRA_DATA\") values \
         ('1','{\"name\":\"Sally Field\",\"age\":77}');",
    );
    assert_eq!(
        row.get(1),
        Some(&Value::Text("{\"name\":\"Sally Field\",\"age\":77}".into()))
    );
    // The binary OSON form (shouldParseJsonAsBinaryUpdate) is refused by name, not passed on
    // as bytes.
    let oson = call("HEXTORAW", vec![lit("ff4a5a0121")]);
    let error = typed(&oson, &col("EXTRA_DATA", "JSON")).unwrap_err();
    assert!(error.to_string().contains("OSON"), "{error}");
}

#[test]
fn boolean_values_read_as_debezium_reads_them() {
    // Debezium's OracleValueConverters.convertBoolean parses the SQL_REDO text as a byte:
    // zero is false, anything else true.
    assert_eq!(ok(lit("1"), "BOOLEAN"), Value::Boolean(true));
    assert_eq!(ok(lit("0"), "BOOLEAN"), Value::Boolean(false));
    assert_eq!(ok(lit("-1"), "BOOLEAN"), Value::Boolean(true));
    assert_eq!(ok(lit("TRUE"), "BOOLEAN"), Value::Boolean(true));
    assert_eq!(ok(lit("false"), "BOOLEAN"), Value::Boolean(false));
    assert_eq!(ok(RawValue::Null, "BOOLEAN"), Value::Null);
    assert!(matches!(
        reason(lit("yes"), "BOOLEAN"),
        InvalidReason::UnexpectedShape(_)
    ));
}

#[test]
fn values_of_a_type_the_capture_cannot_decode_are_dropped() {
    // What LogMiner writes for such a column (`Unsupported Type`, or an object constructor) is
    // dropped: the column may only be captured excluded.
    let shape = Column::new(
        "SHAPE",
        OracleType::parse_catalog("MDSYS.SDO_GEOMETRY").unwrap(),
    );
    for raw in [
        RawValue::Unsupported,
        call("MDSYS.SDO_GEOMETRY", vec![lit("2001")]),
        lit("x"),
    ] {
        assert_eq!(typed(&raw, &shape).unwrap(), Value::Null);
    }
}
