//! The payloads of Debezium records: keys, envelopes, `source` and the column values, written
//! as [`super::schema`]'s table says.

use base64::Engine as _;

use super::datum::{self, Datum};
use super::{BinaryHandling, DebeziumOptions, EncodeError, Part, TablePlan};
use crate::dictionary::TableSchema;
use crate::event::{ChangeEvent, TransactionInfo, json};
use crate::value::{Row, Value};

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
        let value = row.get(index);
        match plan.masked(index, value) {
            Some(Some(masked)) => json::string(out, &masked),
            Some(None) => write_field(out, plan, options, index, None, image)?,
            None => write_field(out, plan, options, index, value, image)?,
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
    match datum::of(plan, options, index, value, image)? {
        None => out.push_str("null"),
        Some(datum) => write_datum(out, &datum),
    }
    Ok(())
}

fn write_datum(out: &mut String, datum: &Datum<'_>) {
    match datum {
        Datum::Long(v) => json::integer(out, *v),
        Datum::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Datum::Decimal(unscaled) => {
            out.push('"');
            base64::engine::general_purpose::STANDARD.encode_string(unscaled, out);
            out.push('"');
        }
        Datum::VariableScaleDecimal { scale, unscaled } => {
            out.push_str("{\"scale\":");
            json::integer(out, *scale);
            out.push_str(",\"value\":\"");
            base64::engine::general_purpose::STANDARD.encode_string(unscaled, out);
            out.push_str("\"}");
        }
        Datum::Float(v) => json::f32_number(out, *v),
        Datum::Double(v) => json::f64_number(out, *v),
        Datum::String(text) => json::string(out, text),
        Datum::Formatted(formatted) => {
            out.push('"');
            formatted.write(out);
            out.push('"');
        }
        Datum::Binary(mode, bytes) => write_binary(out, *mode, bytes),
    }
}

fn write_binary(out: &mut String, mode: BinaryHandling, bytes: &[u8]) {
    out.push('"');
    datum::binary_text(out, mode, bytes);
    out.push('"');
}
