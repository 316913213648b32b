//! Kafka Connect schemas of Debezium's Oracle events: how each column type maps to a Connect
//! type and logical name under the options, and the JSON of the key, value, source and envelope
//! schemas as Kafka Connect's `JsonConverter` writes them (`schemas.enable=true`).
//!
//! | Oracle type | option | Connect type | logical name |
//! |---|---|---|---|
//! | NUMBER(p,s), s < 0, p − s < 3 / 5 / 10 / 19 | any | int8 / int16 / int32 / int64 | |
//! | NUMBER(p,0), p < 3 / 5 / 10 / 19 | precise, or legacy strategy | int8 / int16 / int32 / int64 | |
//! | NUMBER(1) | `number_one_as_boolean` | boolean (value > 0) | |
//! | NUMBER(p,s) otherwise, INTEGER | precise | bytes, scale s (negative too) | `org.apache.kafka.connect.data.Decimal` |
//! | NUMBER, FLOAT(b) (no fixed scale) | precise | struct {scale int32, value bytes} | `io.debezium.data.VariableScaleDecimal` |
//! | any NUMBER or FLOAT not above, NUMBER(p,0) included | double / string | float64 / string | |
//! | BINARY_FLOAT / BINARY_DOUBLE | | float32 / float64 | |
//! | CHAR, NCHAR, VARCHAR2, NVARCHAR2, CLOB, NCLOB, LONG, ROWID, UROWID | | string | |
//! | XMLTYPE | | string | `io.debezium.data.Xml` |
//! | JSON | | string | `io.debezium.data.Json` |
//! | BOOLEAN | | boolean | |
//! | RAW, LONG RAW, BLOB | bytes / base64 / base64-url-safe / hex | bytes / string | |
//! | DATE, TIMESTAMP(0..=3) | adaptive | int64 ms | `io.debezium.time.Timestamp` |
//! | TIMESTAMP(4..=6) / (7..=9) | adaptive | int64 µs / ns | `io.debezium.time.MicroTimestamp` / `NanoTimestamp` |
//! | DATE, TIMESTAMP(n) | connect | int64 ms | `org.apache.kafka.connect.data.Timestamp` |
//! | TIMESTAMP WITH [LOCAL] TIME ZONE | any | string | `io.debezium.time.ZonedTimestamp` |
//! | INTERVAL … | numeric / string | float64 µs / string | `io.debezium.time.MicroDuration` / `io.debezium.time.Interval` |
//!
//! One deliberate difference from seed 004's `connect` table, which lists DATE as
//! `org.apache.kafka.connect.data.Date` (days): an Oracle DATE carries a time of day, and the
//! connector itself reads DATE columns as JDBC timestamps, so DATE is a `Timestamp` in both modes
//! and no time of day is dropped. Field `optional` follows the column's nullability, as Debezium does.

use super::{BinaryHandling, DebeziumOptions, DecimalHandling, IntervalHandling, TimePrecision};
use crate::dictionary::{Column, MAX_NUMBER_PRECISION, OracleType, TableSchema};
use crate::event::json;

/// How a column's values are written; resolved once per column from its type and the options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    Int8,
    Int16,
    Int32,
    Int64,
    Boolean,
    /// Connect `Decimal` at the column's scale, negative ones included (NUMBER(p,-2) counts
    /// hundreds), as Debezium writes it.
    Decimal {
        scale: i32,
        precision: u8,
    },
    VariableScaleDecimal,
    NumberAsDouble,
    /// Decimal text, padded to `scale` fraction digits.
    NumberAsString {
        scale: u32,
    },
    Float32,
    Float64,
    String,
    Xml,
    /// `io.debezium.data.Json`: a string holding a JSON document.
    Json,
    Binary(BinaryHandling),
    /// Epoch milliseconds; `connect` selects the Kafka Connect logical name.
    TimestampMillis {
        connect: bool,
    },
    TimestampMicros,
    TimestampNanos,
    /// ISO 8601 with offset, `fraction_digits` fraction digits.
    ZonedTimestamp {
        fraction_digits: u8,
    },
    MicroDuration,
    IntervalString,
}

impl FieldKind {
    /// A DATE or TIMESTAMP as the count of this time kind's unit since the epoch (milliseconds,
    /// microseconds or nanoseconds; milliseconds for any other kind), read as UTC as Debezium
    /// does; `None` past a 64-bit count.
    pub fn epoch_count(self, local: jiff::civil::DateTime) -> Option<i64> {
        let nanos = crate::value::temporal::epoch_nanoseconds(local, jiff::tz::Offset::UTC);
        let count = match self {
            Self::TimestampMicros => nanos.div_euclid(1_000),
            Self::TimestampNanos => nanos,
            _ => nanos.div_euclid(1_000_000),
        };
        i64::try_from(count).ok()
    }

    /// The kind of `data_type` under `options`.
    pub fn of(data_type: &OracleType, options: &DebeziumOptions) -> Self {
        use OracleType as T;
        match data_type {
            T::Number {
                precision: Some(1),
                scale: Some(0),
            } if options.number_one_as_boolean => Self::Boolean,
            T::Number {
                precision,
                scale: Some(scale),
            } => {
                let precision = precision.unwrap_or(MAX_NUMBER_PRECISION);
                // Debezium 2.7 (DBZ-7882) writes zero-scale numbers as the other decimal modes ask
                // (float64 or string) instead of as integers; the legacy strategy keeps integers.
                let integer_as_decimal_mode = *scale == 0
                    && options.decimal_handling != DecimalHandling::Precise
                    && !options.legacy_decimal_handling;
                if *scale <= 0 && !integer_as_decimal_mode {
                    let width = i16::from(precision) - i16::from(*scale);
                    match width {
                        ..3 => return Self::Int8,
                        3..5 => return Self::Int16,
                        5..10 => return Self::Int32,
                        10..19 => return Self::Int64,
                        _ => {}
                    }
                }
                match options.decimal_handling {
                    DecimalHandling::Precise => Self::Decimal {
                        scale: i32::from(*scale),
                        precision,
                    },
                    DecimalHandling::Double => Self::NumberAsDouble,
                    DecimalHandling::String => Self::NumberAsString {
                        scale: u32::try_from(*scale).unwrap_or(0),
                    },
                }
            }
            T::Number { scale: None, .. } | T::Float { .. } => match options.decimal_handling {
                DecimalHandling::Precise => Self::VariableScaleDecimal,
                DecimalHandling::Double => Self::NumberAsDouble,
                DecimalHandling::String => Self::NumberAsString { scale: 0 },
            },
            T::BinaryFloat => Self::Float32,
            T::BinaryDouble => Self::Float64,
            T::Char { .. }
            | T::NChar { .. }
            | T::Varchar2 { .. }
            | T::NVarchar2 { .. }
            | T::Long
            | T::Clob
            | T::NClob
            | T::RowId
            | T::URowId { .. } => Self::String,
            T::XmlType => Self::Xml,
            // Debezium 3.x: `io.debezium.data.Json`, the document as text.
            T::Json => Self::Json,
            // A 23ai BOOLEAN is JDBC BOOLEAN, which Debezium writes as a Connect boolean.
            T::Boolean => Self::Boolean,
            // Never encoded: the start check requires the column to be excluded. Debezium writes
            // the object types it passes through as strings.
            T::Unsupported { .. } => Self::String,
            T::Raw { .. } | T::LongRaw | T::Blob => Self::Binary(options.binary_handling),
            T::Date => Self::TimestampMillis {
                connect: options.time_precision == TimePrecision::Connect,
            },
            T::Timestamp {
                fractional_precision,
            } => match (options.time_precision, fractional_precision) {
                (TimePrecision::Connect, _) => Self::TimestampMillis { connect: true },
                (TimePrecision::Adaptive, 0..=3) => Self::TimestampMillis { connect: false },
                (TimePrecision::Adaptive, 4..=6) => Self::TimestampMicros,
                (TimePrecision::Adaptive, _) => Self::TimestampNanos,
            },
            T::TimestampWithTimeZone {
                fractional_precision,
            }
            | T::TimestampWithLocalTimeZone {
                fractional_precision,
            } => Self::ZonedTimestamp {
                fraction_digits: *fractional_precision,
            },
            T::IntervalYearToMonth { .. } | T::IntervalDayToSecond { .. } => {
                match options.interval_handling {
                    IntervalHandling::Numeric => Self::MicroDuration,
                    IntervalHandling::String => Self::IntervalString,
                }
            }
        }
    }

    /// Appends the field schema's members before `"optional"`: type and, for structs, fields.
    /// `extra` are parameters a column mapper adds (masking, source type), after the type's own.
    fn write_schema(
        self,
        out: &mut String,
        optional: bool,
        field: Option<&str>,
        extra: &[(&'static str, String)],
    ) {
        let (type_, name, parameters): (&str, Option<&str>, Option<String>) = match self {
            Self::Int8 => ("int8", None, None),
            Self::Int16 => ("int16", None, None),
            Self::Int32 => ("int32", None, None),
            Self::Int64 => ("int64", None, None),
            Self::Boolean => ("boolean", None, None),
            Self::Decimal { scale, precision } => (
                "bytes",
                Some("org.apache.kafka.connect.data.Decimal"),
                Some(format!(
                    "\"scale\":\"{scale}\",\"connect.decimal.precision\":\"{precision}\""
                )),
            ),
            Self::VariableScaleDecimal => {
                out.push_str(
                    "{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":false,\"field\":\"scale\"},{\"type\":\"bytes\",\"optional\":false,\"field\":\"value\"}],\"optional\":",
                );
                out.push_str(if optional { "true" } else { "false" });
                out.push_str(
                    ",\"name\":\"io.debezium.data.VariableScaleDecimal\",\"version\":1,\"doc\":\"Variable scaled decimal\"",
                );
                close_field(out, field);
                return;
            }
            Self::NumberAsDouble | Self::Float64 => ("double", None, None),
            Self::Float32 => ("float", None, None),
            Self::NumberAsString { .. } | Self::String => ("string", None, None),
            Self::Xml => ("string", Some("io.debezium.data.Xml"), None),
            Self::Json => ("string", Some("io.debezium.data.Json"), None),
            Self::Binary(BinaryHandling::Bytes) => ("bytes", None, None),
            Self::Binary(_) => ("string", None, None),
            Self::TimestampMillis { connect: true } => (
                "int64",
                Some("org.apache.kafka.connect.data.Timestamp"),
                None,
            ),
            Self::TimestampMillis { connect: false } => {
                ("int64", Some("io.debezium.time.Timestamp"), None)
            }
            Self::TimestampMicros => ("int64", Some("io.debezium.time.MicroTimestamp"), None),
            Self::TimestampNanos => ("int64", Some("io.debezium.time.NanoTimestamp"), None),
            Self::ZonedTimestamp { .. } => {
                ("string", Some("io.debezium.time.ZonedTimestamp"), None)
            }
            Self::MicroDuration => ("double", Some("io.debezium.time.MicroDuration"), None),
            Self::IntervalString => ("string", Some("io.debezium.time.Interval"), None),
        };
        out.push_str("{\"type\":\"");
        out.push_str(type_);
        out.push_str("\",\"optional\":");
        out.push_str(if optional { "true" } else { "false" });
        if let Some(name) = name {
            out.push_str(",\"name\":\"");
            out.push_str(name);
            out.push_str("\",\"version\":1");
        }
        if parameters.is_some() || !extra.is_empty() {
            out.push_str(",\"parameters\":{");
            let mut first = true;
            if let Some(parameters) = parameters {
                out.push_str(&parameters);
                first = false;
            }
            for (key, value) in extra {
                if !first {
                    out.push(',');
                }
                first = false;
                json::key(out, key);
                json::string(out, value);
            }
            out.push('}');
        }
        close_field(out, field);
    }
}

fn close_field(out: &mut String, field: Option<&str>) {
    if let Some(field) = field {
        out.push(',');
        json::key(out, "field");
        json::string(out, field);
    }
    out.push('}');
}

/// Appends the struct schema of `columns` (a row of the table, or its key).
fn write_struct_schema<'c>(
    out: &mut String,
    columns: impl Iterator<Item = (&'c Column, FieldKind, &'c [(&'static str, String)])>,
    optional: bool,
    name: &str,
    field: Option<&str>,
) {
    out.push_str("{\"type\":\"struct\",\"fields\":[");
    for (i, (column, kind, extra)) in columns.enumerate() {
        if i > 0 {
            out.push(',');
        }
        kind.write_schema(out, column.nullable, Some(&column.name), extra);
    }
    out.push_str("],\"optional\":");
    out.push_str(if optional { "true" } else { "false" });
    out.push(',');
    json::key(out, "name");
    json::string(out, name);
    close_field(out, field);
}

/// The key schema, `<prefix>.<SCHEMA>.<TABLE>.Key`; `None` for a table without key.
pub fn key_schema(
    table: &TableSchema,
    kinds: &[FieldKind],
    key: &[usize],
    prefix: &str,
) -> Option<String> {
    if key.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(256);
    // Debezium names schemas after the topic, so they are as sanitised as the topic name.
    let name = format!(
        "{}.Key",
        super::topic_name(prefix, table.schema(), table.table())
    );
    let columns = key
        .iter()
        .filter_map(|&i| Some((table.columns().get(i)?, *kinds.get(i)?, &[][..])));
    write_struct_schema(&mut out, columns, false, &name, None);
    Some(out)
}

/// The envelope schema, `<prefix>.<SCHEMA>.<TABLE>.Envelope`, with `before`/`after` of
/// `<prefix>.<SCHEMA>.<TABLE>.Value` (the columns `value_columns` lists), `source`,
/// `transaction`, `op` and the timestamps.
/// `parameters` holds each column's mapper parameters (masking, source type).
pub fn envelope_schema(
    table: &TableSchema,
    kinds: &[FieldKind],
    value_columns: &[usize],
    parameters: &[Vec<(&'static str, String)>],
    prefix: &str,
) -> String {
    let base = super::topic_name(prefix, table.schema(), table.table());
    let value_name = format!("{base}.Value");
    let mut out = String::with_capacity(4096);
    out.push_str("{\"type\":\"struct\",\"fields\":[");
    for field in ["before", "after"] {
        write_struct_schema(
            &mut out,
            value_columns.iter().filter_map(|&i| {
                Some((
                    table.columns().get(i)?,
                    *kinds.get(i)?,
                    parameters.get(i).map_or(&[][..], Vec::as_slice),
                ))
            }),
            true,
            &value_name,
            Some(field),
        );
        out.push(',');
    }
    out.push_str(SOURCE_SCHEMA);
    out.push(',');
    out.push_str(TRANSACTION_SCHEMA);
    out.push_str(
        ",{\"type\":\"string\",\"optional\":false,\"field\":\"op\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_ms\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_us\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_ns\"}],\"optional\":false,",
    );
    json::key(&mut out, "name");
    json::string(&mut out, &format!("{base}.Envelope"));
    // Debezium's envelope schema version (`Envelope.SCHEMA_VERSION`).
    out.push_str(",\"version\":2}");
    out
}

/// `io.debezium.connector.oracle.Source`: Debezium's common source fields, then Oracle's.
pub const SOURCE_SCHEMA: &str = concat!(
    "{\"type\":\"struct\",\"fields\":[",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"version\"},",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"connector\"},",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"name\"},",
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"ts_ms\"},",
    "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Enum\",\"version\":1,",
    "\"parameters\":{\"allowed\":\"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental\"},",
    "\"default\":\"false\",\"field\":\"snapshot\"},",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"db\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"sequence\"},",
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_us\"},",
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_ns\"},",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"schema\"},",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"table\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"txId\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"scn\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"commit_scn\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"lcr_position\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"rs_id\"},",
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"ssn\"},",
    "{\"type\":\"int32\",\"optional\":true,\"field\":\"redo_thread\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"user_name\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"redo_sql\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"row_id\"},",
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"commit_ts_ms\"},",
    "{\"type\":\"string\",\"optional\":true,\"field\":\"start_scn\"},",
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"start_ts_ms\"},",
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"txSeq\"}",
    "],\"optional\":false,\"name\":\"io.debezium.connector.oracle.Source\",\"version\":1,\"field\":\"source\"}"
);

/// Debezium's `transaction` block (`event.block`).
pub const TRANSACTION_SCHEMA: &str = concat!(
    "{\"type\":\"struct\",\"fields\":[",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"id\"},",
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"total_order\"},",
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"data_collection_order\"}",
    "],\"optional\":true,\"name\":\"event.block\",\"version\":1,\"field\":\"transaction\"}"
);

/// Key of the transaction metadata topic.
pub const TRANSACTION_KEY_SCHEMA: &str = concat!(
    "{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":false,\"field\":\"id\"}],",
    "\"optional\":false,\"name\":\"io.debezium.connector.common.TransactionMetadataKey\",\"version\":1}"
);

/// Value of the transaction metadata topic (`BEGIN` and `END`).
pub const TRANSACTION_VALUE_SCHEMA: &str = concat!(
    "{\"type\":\"struct\",\"fields\":[",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"status\"},",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"id\"},",
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"event_count\"},",
    "{\"type\":\"array\",\"items\":{\"type\":\"struct\",\"fields\":[",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"data_collection\"},",
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"event_count\"}",
    "],\"optional\":true,\"name\":\"event.collection\",\"version\":1},\"optional\":true,\"field\":\"data_collections\"},",
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"ts_ms\"}",
    "],\"optional\":false,\"name\":\"io.debezium.connector.common.TransactionMetadataValue\",\"version\":1}"
);

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(t: &str) -> FieldKind {
        FieldKind::of(&OracleType::parse(t).unwrap(), &DebeziumOptions::default())
    }

    #[test]
    fn numbers_map_like_debezium() {
        assert_eq!(kind("NUMBER(2)"), FieldKind::Int8);
        assert_eq!(kind("NUMBER(4)"), FieldKind::Int16);
        assert_eq!(kind("NUMBER(9)"), FieldKind::Int32);
        assert_eq!(kind("NUMBER(18)"), FieldKind::Int64);
        assert_eq!(kind("NUMBER(3,-2)"), FieldKind::Int32);
        assert_eq!(kind("NUMBER(2,-2)"), FieldKind::Int16);
        assert_eq!(
            kind("NUMBER(19)"),
            FieldKind::Decimal {
                scale: 0,
                precision: 19
            }
        );
        assert_eq!(
            kind("INTEGER"),
            FieldKind::Decimal {
                scale: 0,
                precision: 38
            }
        );
        assert_eq!(
            kind("NUMBER(10,2)"),
            FieldKind::Decimal {
                scale: 2,
                precision: 10
            }
        );
        assert_eq!(kind("NUMBER"), FieldKind::VariableScaleDecimal);
        assert_eq!(kind("FLOAT(126)"), FieldKind::VariableScaleDecimal);
        let boolean = DebeziumOptions {
            number_one_as_boolean: true,
            ..DebeziumOptions::default()
        };
        assert_eq!(
            FieldKind::of(&OracleType::parse("NUMBER(1)").unwrap(), &boolean),
            FieldKind::Boolean
        );
    }

    #[test]
    fn json_and_boolean_map_like_debezium_3() {
        // OracleValueConverters: a column whose type name is JSON gets `Json.builder()`, a
        // string named io.debezium.data.Json; a BOOLEAN (JDBC BOOLEAN) a Connect boolean.
        assert_eq!(kind("JSON"), FieldKind::Json);
        assert_eq!(kind("BOOLEAN"), FieldKind::Boolean);
        let mut out = String::new();
        FieldKind::Json.write_schema(&mut out, true, Some("DOC"), &[]);
        assert!(
            out.contains("\"type\":\"string\"")
                && out.contains("\"name\":\"io.debezium.data.Json\""),
            "{out}"
        );
        let mut out = String::new();
        FieldKind::Boolean.write_schema(&mut out, true, Some("FLAG"), &[]);
        assert!(out.contains("\"type\":\"boolean\""), "{out}");
    }

    #[test]
    fn negative_scales_stay_negative_in_connect_decimals() {
        // Width p - s of 19 or more: a Decimal counting in powers of ten, as Debezium writes it.
        assert_eq!(
            kind("NUMBER(20,-2)"),
            FieldKind::Decimal {
                scale: -2,
                precision: 20
            }
        );
    }

    #[test]
    fn zero_scale_numbers_follow_the_decimal_mode_unless_legacy() {
        let with = |decimal_handling, legacy_decimal_handling| DebeziumOptions {
            decimal_handling,
            legacy_decimal_handling,
            ..DebeziumOptions::default()
        };
        let of = |t: &str, options: &DebeziumOptions| {
            FieldKind::of(&OracleType::parse(t).unwrap(), options)
        };
        let double = with(DecimalHandling::Double, false);
        let string = with(DecimalHandling::String, false);
        for t in [
            "NUMBER(1)",
            "NUMBER(9)",
            "NUMBER(18)",
            "NUMBER(10,0)",
            "INTEGER",
        ] {
            assert_eq!(of(t, &double), FieldKind::NumberAsDouble, "{t}");
            assert_eq!(
                of(t, &string),
                FieldKind::NumberAsString { scale: 0 },
                "{t}"
            );
        }
        // Negative scales are not zero scales: Debezium keeps its integer widths for them.
        assert_eq!(of("NUMBER(3,-2)", &double), FieldKind::Int32);
        assert_eq!(
            of("NUMBER(20,-2)", &string),
            FieldKind::NumberAsString { scale: 0 }
        );
        // The legacy strategy: integers, as before Debezium 2.7.
        let legacy = with(DecimalHandling::String, true);
        assert_eq!(of("NUMBER(9)", &legacy), FieldKind::Int32);
        assert_eq!(
            of("NUMBER(19)", &legacy),
            FieldKind::NumberAsString { scale: 0 }
        );
        // The boolean converter wins over the decimal mode.
        let boolean = DebeziumOptions {
            number_one_as_boolean: true,
            ..string
        };
        assert_eq!(of("NUMBER(1)", &boolean), FieldKind::Boolean);
    }

    /// The fields, their order and the schema versions of Debezium 3.6's Oracle source block
    /// (`OracleSourceInfoStructMaker`, `SchemaFactory`): Java consumers read fields by name,
    /// and `source.get("start_scn")` throws on a field the schema lacks.
    #[test]
    fn the_source_schema_has_debeziums_fields_and_version() {
        let source: serde_json::Value = serde_json::from_str(SOURCE_SCHEMA).unwrap();
        let fields: Vec<(&str, &str, bool)> = source["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["field"].as_str().unwrap(),
                    f["type"].as_str().unwrap(),
                    f["optional"].as_bool().unwrap(),
                )
            })
            .collect();
        let expected = [
            ("version", "string", false),
            ("connector", "string", false),
            ("name", "string", false),
            ("ts_ms", "int64", false),
            ("snapshot", "string", true),
            ("db", "string", false),
            ("sequence", "string", true),
            ("ts_us", "int64", true),
            ("ts_ns", "int64", true),
            ("schema", "string", false),
            ("table", "string", false),
            ("txId", "string", true),
            ("scn", "string", true),
            ("commit_scn", "string", true),
            ("lcr_position", "string", true),
            ("rs_id", "string", true),
            ("ssn", "int64", true),
            ("redo_thread", "int32", true),
            ("user_name", "string", true),
            ("redo_sql", "string", true),
            ("row_id", "string", true),
            ("commit_ts_ms", "int64", true),
            ("start_scn", "string", true),
            ("start_ts_ms", "int64", true),
            ("txSeq", "int64", true),
        ];
        assert_eq!(fields, expected);
        assert_eq!(source["name"], "io.debezium.connector.oracle.Source");
        assert_eq!(source["version"], 1);

        let value: serde_json::Value = serde_json::from_str(TRANSACTION_VALUE_SCHEMA).unwrap();
        assert_eq!(value["version"], 1);
        let collections = &value["fields"][3];
        assert_eq!(collections["field"], "data_collections");
        assert_eq!(collections["optional"], true);
        assert_eq!(collections["items"]["name"], "event.collection");
        assert_eq!(collections["items"]["version"], 1);
        assert_eq!(collections["items"]["optional"], true);
        let key: serde_json::Value = serde_json::from_str(TRANSACTION_KEY_SCHEMA).unwrap();
        assert_eq!(key["version"], 1);
    }

    #[test]
    fn schemas_are_valid_json() {
        let _: serde_json::Value = serde_json::from_str(SOURCE_SCHEMA).unwrap();
        let _: serde_json::Value = serde_json::from_str(TRANSACTION_SCHEMA).unwrap();
        let _: serde_json::Value = serde_json::from_str(TRANSACTION_KEY_SCHEMA).unwrap();
        let _: serde_json::Value = serde_json::from_str(TRANSACTION_VALUE_SCHEMA).unwrap();
    }
}
