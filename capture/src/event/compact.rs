//! The `compact` format: one JSON object per change, the contracts' shape
//!
//! ```json
//! {"op":"u","schema":"APP","table":"ORDERS","before":{"ID":1,"STATUS":"new"},
//!  "after":{"ID":1,"STATUS":"paid"},"scn":2146947,"commit_scn":2146951,
//!  "xid":"07000C00F3010000","ts":"2024-01-02T03:04:05"}
//! ```
//!
//! Members always appear in that order. `op` is `i`, `u`, `d`, `r` (a snapshot read; the
//! contracts are silent, this is Debezium's letter), `ddl` (with a `sql` member after `after`)
//! or `truncate`. `commit_scn`, `xid` and `ts` are `null` when unknown; `xid` is upper-case hex,
//! as `RAWTOHEX` writes it; `ts` is the commit time (else the change time) in UTC, an ISO 8601
//! date-time without zone designator as in the contracts' example.
//!
//! Values, by column type:
//!
//! | type | JSON |
//! |---|---|
//! | NUMBER(p,s) with s ≤ 0 and p − s ≤ 18 (NUMBER(10), NUMBER(5,-2)) | integer |
//! | other NUMBER, INTEGER (38 digits), FLOAT | exact decimal string, padded to the column's scale when it has one (`"10.50"`) |
//! | BINARY_FLOAT / BINARY_DOUBLE | number in shortest round-trip form; `"NaN"`, `"Infinity"`, `"-Infinity"` |
//! | CHAR, NCHAR, VARCHAR2, NVARCHAR2, CLOB, NCLOB, LONG, ROWID, UROWID, XMLTYPE | string (CHAR padding kept) |
//! | RAW, LONG RAW, BLOB | base64 string (standard alphabet, padded) |
//! | DATE, TIMESTAMP(n) | `"2024-01-02T03:04:05"`, a fraction only when non-zero, as few digits as exact |
//! | TIMESTAMP WITH TIME ZONE | the same plus the offset as written (`+01:00`, `+00:00`) |
//! | TIMESTAMP WITH LOCAL TIME ZONE | the instant in UTC with `Z` |
//! | INTERVAL YEAR TO MONTH / DAY TO SECOND | ISO 8601 duration, every component signed (`P1Y2M0DT0H0M0S`) |
//!
//! The type of a NUMBER column's values follows the column, not each value, so a consumer sees
//! one JSON type per column. A LOB placeholder (`EMPTY_CLOB()` with no content after it) is the
//! empty string; an `Unsupported` value that reaches the encoder (`onUnsupported: skip`) is
//! `null`. Columns an image does not carry are left out, and `before` never holds LOB, LONG or
//! LONG RAW columns (LogMiner does not log them in before images).

use base64::Engine as _;

use super::json;
use super::{ChangeEvent, Operation};
use crate::dictionary::{OracleType, TableSchema};
use crate::value::temporal::{self, Fraction};
use crate::value::{Row, Value};

/// Encodes `event` as one compact JSON object (no trailing newline).
pub fn encode(event: &ChangeEvent) -> String {
    let mut out = String::with_capacity(256);
    encode_into(event, &mut out);
    out
}

/// Appends `event` as one compact JSON object to `out`.
pub fn encode_into(event: &ChangeEvent, out: &mut String) {
    let table = &*event.table;
    out.push('{');
    json::key(out, "op");
    out.push_str(match event.op {
        Operation::Create => "\"i\"",
        Operation::Update => "\"u\"",
        Operation::Delete => "\"d\"",
        Operation::Read => "\"r\"",
        Operation::Truncate => "\"truncate\"",
        Operation::Ddl { .. } => "\"ddl\"",
    });
    json::schema_and_table(out, table);
    out.push(',');
    json::key(out, "before");
    write_row(out, table, event.before.as_ref(), true);
    out.push(',');
    json::key(out, "after");
    write_row(out, table, event.after.as_ref(), false);
    if let Operation::Ddl { sql } = &event.op {
        out.push(',');
        json::key(out, "sql");
        json::string(out, sql);
    }
    out.push(',');
    json::key(out, "scn");
    json::integer(out, event.source.scn);
    out.push(',');
    json::key(out, "commit_scn");
    match event.source.commit_scn {
        Some(scn) => json::integer(out, scn),
        None => out.push_str("null"),
    }
    out.push(',');
    json::key(out, "xid");
    match &event.source.xid {
        Some(xid) => json::string(out, &xid.to_upper_hex()),
        None => out.push_str("null"),
    }
    out.push(',');
    json::key(out, "ts");
    match event.source.commit_time.or(event.source.change_time) {
        Some(instant) => {
            // ISO text needs no JSON escaping.
            out.push('"');
            let utc = jiff::tz::Offset::UTC.to_datetime(instant);
            temporal::write_iso_local(out, utc, Fraction::Shortest);
            out.push('"');
        }
        None => out.push_str("null"),
    }
    out.push('}');
}

/// The Kafka record key of a compact event: the key columns of its after image (its before image
/// for a delete), `{"ID":1}`, so every change of a row lands in one partition, in order. `None`
/// when the table has no key or the event no image (DDL, truncate): such records go keyless.
pub fn encode_key(event: &ChangeEvent) -> Option<String> {
    let table = &*event.table;
    let row = event.after.as_ref().or(event.before.as_ref())?;
    if table.key_indexes().is_empty() {
        return None;
    }
    let mut out = String::with_capacity(32);
    out.push('{');
    for (n, &index) in table.key_indexes().iter().enumerate() {
        let (Some(column), Some(value)) = (table.columns().get(index), row.get(index)) else {
            return None;
        };
        if n > 0 {
            out.push(',');
        }
        json::key(&mut out, &column.name);
        write_value(&mut out, &column.data_type, value);
    }
    out.push('}');
    Some(out)
}

fn write_row(out: &mut String, table: &TableSchema, row: Option<&Row>, is_before: bool) {
    let Some(row) = row else {
        out.push_str("null");
        return;
    };
    out.push('{');
    let mut first = true;
    for (index, column) in table.columns().iter().enumerate() {
        if is_before && column.data_type.is_lob_like() {
            continue;
        }
        let Some(value) = row.get(index) else {
            continue;
        };
        if !first {
            out.push(',');
        }
        first = false;
        json::key(out, &column.name);
        write_value(out, &column.data_type, value);
    }
    out.push('}');
}

/// Appends one value as the module docs' table says.
pub fn write_value(out: &mut String, data_type: &OracleType, value: &Value) {
    match value {
        Value::Null | Value::Unsupported => out.push_str("null"),
        Value::Number(number) => match data_type {
            OracleType::Number {
                precision: Some(p),
                scale: Some(s),
            } if *s <= 0 && i16::from(*p) - i16::from(*s) <= 18 => {
                number.write_plain(out, 0);
            }
            OracleType::Number { scale: Some(s), .. } => {
                out.push('"');
                number.write_plain(out, u32::try_from(*s).unwrap_or(0));
                out.push('"');
            }
            _ => {
                out.push('"');
                number.write_plain(out, 0);
                out.push('"');
            }
        },
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::BinaryFloat(v) => json::f32_number(out, *v),
        Value::BinaryDouble(v) => json::f64_number(out, *v),
        Value::Text(text) | Value::Xml(text) => json::string(out, text),
        Value::Bytes(bytes) => {
            out.push('"');
            base64::engine::general_purpose::STANDARD.encode_string(bytes, out);
            out.push('"');
        }
        Value::Date(local) | Value::Timestamp(local) => {
            out.push('"');
            temporal::write_iso_local(out, *local, Fraction::Shortest);
            out.push('"');
        }
        Value::TimestampTz { local, offset } => {
            out.push('"');
            temporal::write_iso_local(out, *local, Fraction::Shortest);
            temporal::write_offset(out, *offset, false);
            out.push('"');
        }
        Value::TimestampLtz(instant) => {
            out.push('"');
            let utc = jiff::tz::Offset::UTC.to_datetime(*instant);
            temporal::write_iso_local(out, utc, Fraction::Shortest);
            out.push_str("Z\"");
        }
        Value::IntervalYearToMonth { months } => {
            out.push('"');
            temporal::write_iso_duration(out, *months, 0);
            out.push('"');
        }
        Value::IntervalDayToSecond { nanoseconds } => {
            out.push('"');
            temporal::write_iso_duration(out, 0, *nanoseconds);
            out.push('"');
        }
        Value::LobPlaceholder(_) => out.push_str("\"\""),
    }
}
