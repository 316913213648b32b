//! The payloads of Debezium records: keys, envelopes, `source` and the column values, written
//! as [`super::schema`]'s table says.

use base64::Engine as _;

use super::schema::FieldKind;
use super::{BinaryHandling, DebeziumOptions, EncodeError, Part, TablePlan};
use crate::dictionary::{LobKind, TableSchema};
use crate::event::{ChangeEvent, TransactionInfo, json};
use crate::value::temporal::{self, Fraction};
use crate::value::{Row, Value, binary};

pub(super) fn key(
    plan: &TablePlan,
    options: &DebeziumOptions,
    row: &Row,
) -> Result<Option<String>, EncodeError> {
    let table = &*plan.table;
    if plan.key.is_empty() {
        return Ok(None);
    }
    let mut out = String::with_capacity(64);
    if options.wraps_json() {
        out.push_str(plan.key_prefix.as_deref().unwrap_or(""));
    }
    out.push('{');
    for (n, &index) in plan.key.iter().enumerate() {
        let column = &table.columns()[index];
        let Some(value) = row.get(index) else {
            return Err(EncodeError::MissingKeyColumn {
                table: table.qualified_name(),
                column: column.name.clone(),
            });
        };
        if n > 0 {
            out.push(',');
        }
        json::key(&mut out, &column.name);
        write_field(&mut out, plan, options, index, Some(value), "key")?;
    }
    out.push('}');
    if options.wraps_json() {
        out.push('}');
    }
    Ok(Some(out))
}

pub(super) fn envelope(
    plan: &TablePlan,
    options: &DebeziumOptions,
    event: &ChangeEvent,
    part: &Part<'_>,
    transaction: Option<&TransactionInfo>,
    processed_at: jiff::Timestamp,
) -> Result<String, EncodeError> {
    let Part { before, after, op } = *part;
    let mut out = String::with_capacity(plan.value_prefix.len() + 512);
    out.push_str(&plan.value_prefix);
    out.push('{');
    json::key(&mut out, "before");
    write_row(&mut out, plan, options, before, "before")?;
    out.push(',');
    json::key(&mut out, "after");
    write_row(&mut out, plan, options, after, "after")?;
    out.push(',');
    json::key(&mut out, "source");
    write_source(&mut out, &plan.table, options, event);
    out.push(',');
    json::key(&mut out, "transaction");
    match transaction {
        Some(tx) => {
            out.push('{');
            json::key(&mut out, "id");
            json::string(&mut out, &tx.id);
            out.push(',');
            json::key(&mut out, "total_order");
            json::integer(&mut out, tx.total_order);
            out.push(',');
            json::key(&mut out, "data_collection_order");
            json::integer(&mut out, tx.data_collection_order);
            out.push('}');
        }
        None => out.push_str("null"),
    }
    out.push(',');
    json::key(&mut out, "op");
    json::string(&mut out, op.letter());
    write_times(&mut out, processed_at);
    out.push('}');
    if options.wraps_json() {
        out.push('}');
    }
    Ok(out)
}

/// Appends `,"ts_ms":..,"ts_us":..,"ts_ns":..`.
fn write_times(out: &mut String, at: jiff::Timestamp) {
    let nanos = at.as_nanosecond();
    for (key, unit) in [
        (",\"ts_ms\":", 1_000_000i128),
        (",\"ts_us\":", 1_000),
        (",\"ts_ns\":", 1),
    ] {
        out.push_str(key);
        json::integer(out, nanos.div_euclid(unit));
    }
}

/// The `source` block of `event` on `table` (also the source of a schema change event).
pub(super) fn write_source(
    out: &mut String,
    table: &TableSchema,
    options: &DebeziumOptions,
    event: &ChangeEvent,
) {
    let source = &event.source;
    let optional_string = |out: &mut String, name: &str, value: Option<&str>| {
        out.push(',');
        json::key(out, name);
        match value {
            Some(v) => json::string(out, v),
            None => out.push_str("null"),
        }
    };
    out.push('{');
    json::key(out, "version");
    json::string(out, &options.connector_version);
    out.push(',');
    json::key(out, "connector");
    out.push_str("\"oracle\",");
    json::key(out, "name");
    json::string(out, &options.topic_prefix);
    let change_time = source
        .change_time
        .or(source.commit_time)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    out.push(',');
    json::key(out, "ts_ms");
    json::integer(out, change_time.as_nanosecond().div_euclid(1_000_000));
    out.push(',');
    json::key(out, "snapshot");
    json::string(out, source.snapshot.as_str());
    out.push(',');
    json::key(out, "db");
    json::string(out, &options.database_name);
    out.push_str(",\"sequence\":null");
    let nanos = change_time.as_nanosecond();
    out.push(',');
    json::key(out, "ts_us");
    json::integer(out, nanos.div_euclid(1_000));
    out.push(',');
    json::key(out, "ts_ns");
    json::integer(out, nanos);
    json::schema_and_table(out, table);
    optional_string(out, "txId", source.xid.map(|x| x.to_lower_hex()).as_deref());
    out.push_str(",\"scn\":");
    json::integer_string(out, source.scn);
    out.push_str(",\"commit_scn\":");
    match source.commit_scn {
        Some(scn) => json::integer_string(out, scn),
        None => out.push_str("null"),
    }
    // XStream's position: never set by a LogMiner capture, as in Debezium's LogMiner adapter.
    out.push_str(",\"lcr_position\":null");
    optional_string(out, "rs_id", source.rs_id.as_deref());
    out.push(',');
    json::key(out, "ssn");
    json::integer(out, source.ssn);
    out.push(',');
    json::key(out, "redo_thread");
    json::integer(out, source.redo_thread);
    optional_string(out, "user_name", source.user_name.as_deref());
    // Debezium fills it only with `log.mining.include.redo.sql`, which redoline does not offer.
    out.push_str(",\"redo_sql\":null");
    optional_string(out, "row_id", source.row_id.as_deref());
    let optional_millis = |out: &mut String, name: &str, time: Option<jiff::Timestamp>| {
        out.push(',');
        json::key(out, name);
        match time {
            Some(t) => json::integer(out, t.as_nanosecond().div_euclid(1_000_000)),
            None => out.push_str("null"),
        }
    };
    optional_millis(out, "commit_ts_ms", source.commit_time);
    let start = source.transaction_start;
    out.push_str(",\"start_scn\":");
    match start {
        Some(start) => json::integer_string(out, start.scn),
        None => out.push_str("null"),
    }
    optional_millis(out, "start_ts_ms", start.and_then(|start| start.time));
    out.push(',');
    json::key(out, "txSeq");
    match source.transaction_sequence {
        Some(sequence) => json::integer(out, sequence),
        None => out.push_str("null"),
    }
    out.push('}');
}

fn write_row(
    out: &mut String,
    plan: &TablePlan,
    options: &DebeziumOptions,
    row: Option<&Row>,
    image: &'static str,
) -> Result<(), EncodeError> {
    let Some(row) = row else {
        out.push_str("null");
        return Ok(());
    };
    out.push('{');
    for (n, &index) in plan.value_columns.iter().enumerate() {
        let column = &plan.table.columns()[index];
        if n > 0 {
            out.push(',');
        }
        json::key(out, &column.name);
        match (&plan.masks[index], row.get(index)) {
            // A masked character value (an absent LOB keeps its placeholder).
            (Some(mask), value @ (Some(Value::Text(_) | Value::Null) | None))
                if value.is_some() || !column.data_type.is_lob_like() =>
            {
                let text = match value {
                    Some(Value::Text(text)) => Some(text.as_str()),
                    _ => None,
                };
                match mask.apply(text) {
                    Some(masked) => json::string(out, &masked),
                    None => write_field(out, plan, options, index, None, image)?,
                }
            }
            (_, value) => write_field(out, plan, options, index, value, image)?,
        }
    }
    out.push('}');
    Ok(())
}

/// Appends the value of column `index` (`None`: not in the image).
fn write_field(
    out: &mut String,
    plan: &TablePlan,
    options: &DebeziumOptions,
    index: usize,
    value: Option<&Value>,
    image: &'static str,
) -> Result<(), EncodeError> {
    let column = &plan.table.columns()[index];
    let kind = plan.kinds[index];
    let value = match value {
        None if column.data_type.is_lob_like() => {
            let placeholder = &options.unavailable_value_placeholder;
            match kind {
                FieldKind::Binary(_) => {
                    write_binary(out, options.binary_handling, placeholder.as_bytes())
                }
                _ => json::string(out, placeholder),
            }
            return Ok(());
        }
        None | Some(Value::Null | Value::Unsupported) => {
            if !column.nullable {
                return Err(EncodeError::NullInRequiredColumn {
                    table: plan.table.qualified_name(),
                    column: column.name.clone(),
                    image,
                });
            }
            out.push_str("null");
            return Ok(());
        }
        Some(value) => value,
    };
    let unrepresentable = |problem: String| EncodeError::Unrepresentable {
        table: plan.table.qualified_name(),
        column: column.name.clone(),
        problem,
    };
    let mismatch = || {
        unrepresentable(format!(
            "a {} value cannot be encoded as {kind:?}",
            short_kind(value)
        ))
    };
    match (kind, value) {
        (
            FieldKind::Int8 | FieldKind::Int16 | FieldKind::Int32 | FieldKind::Int64,
            Value::Number(n),
        ) => {
            let Some(v) = n.to_i64() else {
                return Err(unrepresentable(format!("{n} is not a 64-bit integer")));
            };
            json::integer(out, v);
        }
        (FieldKind::Boolean, Value::Boolean(b)) => out.push_str(if *b { "true" } else { "false" }),
        (FieldKind::Boolean, Value::Number(n)) => {
            out.push_str(if !n.is_zero() && !n.is_negative() {
                "true"
            } else {
                "false"
            });
        }
        (FieldKind::Decimal { scale, .. }, Value::Number(n)) => {
            out.push('"');
            base64::engine::general_purpose::STANDARD.encode_string(n.unscaled_bytes(scale), out);
            out.push('"');
        }
        (FieldKind::VariableScaleDecimal, Value::Number(n)) => {
            out.push_str("{\"scale\":");
            json::integer(out, n.scale());
            out.push_str(",\"value\":\"");
            base64::engine::general_purpose::STANDARD.encode_string(
                n.unscaled_bytes(i32::try_from(n.scale()).unwrap_or(i32::MAX)),
                out,
            );
            out.push_str("\"}");
        }
        (FieldKind::NumberAsDouble, Value::Number(n)) => json::f64_number(out, n.to_f64()),
        (FieldKind::NumberAsString { scale }, Value::Number(n)) => {
            out.push('"');
            n.write_plain(out, scale);
            out.push('"');
        }
        (FieldKind::Float32, Value::BinaryFloat(v)) => json::f32_number(out, *v),
        (FieldKind::Float64, Value::BinaryDouble(v)) => json::f64_number(out, *v),
        (FieldKind::String | FieldKind::Xml | FieldKind::Json, Value::Text(t) | Value::Xml(t)) => {
            json::string(out, t)
        }
        // An EMPTY_CLOB() / EMPTY_BLOB() no piece filled: null in a nullable column, empty in
        // a NOT NULL one, as Debezium's converters write it.
        (
            FieldKind::String | FieldKind::Binary(_),
            Value::LobPlaceholder(LobKind::Clob | LobKind::NClob | LobKind::Blob),
        ) if column.nullable => out.push_str("null"),
        (FieldKind::String, Value::LobPlaceholder(LobKind::Clob | LobKind::NClob)) => {
            json::string(out, "")
        }
        (FieldKind::Binary(mode), Value::Bytes(bytes)) => write_binary(out, mode, bytes),
        (FieldKind::Binary(mode), Value::LobPlaceholder(LobKind::Blob)) => {
            write_binary(out, mode, &[])
        }
        (
            FieldKind::TimestampMillis { .. }
            | FieldKind::TimestampMicros
            | FieldKind::TimestampNanos,
            Value::Date(local) | Value::Timestamp(local),
        ) => {
            let Some(count) = kind.epoch_count(*local) else {
                return Err(unrepresentable(format!(
                    "{local} is beyond a 64-bit epoch count"
                )));
            };
            json::integer(out, count);
        }
        (FieldKind::ZonedTimestamp { fraction_digits }, Value::TimestampTz { local, offset }) => {
            out.push('"');
            temporal::write_iso_local(out, *local, Fraction::Digits(fraction_digits));
            temporal::write_offset(out, *offset, true);
            out.push('"');
        }
        (FieldKind::ZonedTimestamp { fraction_digits }, Value::TimestampLtz(instant)) => {
            out.push('"');
            let utc = jiff::tz::Offset::UTC.to_datetime(*instant);
            temporal::write_iso_local(out, utc, Fraction::Digits(fraction_digits));
            out.push_str("Z\"");
        }
        (FieldKind::MicroDuration, Value::IntervalYearToMonth { months }) => {
            // Debezium's average month: 365.25 / 12 days.
            let micros = *months as f64 * (365.25 / 12.0) * 86_400_000_000.0;
            json::f64_number(out, micros);
        }
        (FieldKind::MicroDuration, Value::IntervalDayToSecond { nanoseconds }) => {
            json::f64_number(out, (*nanoseconds / 1_000) as f64);
        }
        (FieldKind::IntervalString, Value::IntervalYearToMonth { months }) => {
            out.push('"');
            temporal::write_iso_duration(out, *months, 0);
            out.push('"');
        }
        (FieldKind::IntervalString, Value::IntervalDayToSecond { nanoseconds }) => {
            out.push('"');
            temporal::write_iso_duration(out, 0, *nanoseconds);
            out.push('"');
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

pub(super) fn short_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "NULL",
        Value::Number(_) => "NUMBER",
        Value::BinaryFloat(_) => "BINARY_FLOAT",
        Value::BinaryDouble(_) => "BINARY_DOUBLE",
        Value::Text(_) => "text",
        Value::Xml(_) => "XML",
        Value::Boolean(_) => "BOOLEAN",
        Value::Bytes(_) => "binary",
        Value::Date(_) => "DATE",
        Value::Timestamp(_) => "TIMESTAMP",
        Value::TimestampTz { .. } => "TIMESTAMP WITH TIME ZONE",
        Value::TimestampLtz(_) => "TIMESTAMP WITH LOCAL TIME ZONE",
        Value::IntervalYearToMonth { .. } => "INTERVAL YEAR TO MONTH",
        Value::IntervalDayToSecond { .. } => "INTERVAL DAY TO SECOND",
        Value::LobPlaceholder(_) => "LOB placeholder",
        Value::Unsupported => "unsupported",
    }
}

fn write_binary(out: &mut String, mode: BinaryHandling, bytes: &[u8]) {
    out.push('"');
    binary_text(out, mode, bytes);
    out.push('"');
}

/// The text of binary `bytes` in a string `binary.handling.mode` (unquoted).
pub(super) fn binary_text(out: &mut String, mode: BinaryHandling, bytes: &[u8]) {
    match mode {
        BinaryHandling::Bytes | BinaryHandling::Base64 => {
            base64::engine::general_purpose::STANDARD.encode_string(bytes, out);
        }
        BinaryHandling::Base64UrlSafe => {
            base64::engine::general_purpose::URL_SAFE.encode_string(bytes, out);
        }
        BinaryHandling::Hex => out.push_str(&binary::encode_hex(bytes)),
    }
}
