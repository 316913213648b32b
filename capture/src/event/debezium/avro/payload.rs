//! The Avro bodies of data change events, written straight from the row values and each
//! column's [`Datum`] (shared with the JSON encoding, [`super::super::payload`]), in the layout
//! of the Avro schema made from the key and envelope Connect schemas: a column field is
//! `["null", T]` when the column is nullable (branch 0 null, 1 value), `T` otherwise; the
//! envelope is `before` and `after` (`["null", Value]`), `source`, `transaction`
//! (`["null", block]`), `op`, then `ts_ms`, `ts_us`, `ts_ns` (`["null", long]`). The values are
//! those of the JSON encoding in Avro's types: decimals as their unscaled big-endian
//! two's-complement bytes, integers as varints, doubles and floats little-endian, text as
//! length-prefixed UTF-8.

use super::binary;
use crate::event::EncodeError;
use crate::event::debezium::datum::{self, Datum};
use crate::event::debezium::{BinaryHandling, DebeziumOptions, Part, TablePlan};
use crate::event::{ChangeEvent, TransactionInfo};
use crate::value::{Row, Value};

/// Appends the body of the key of `row` (the plan has key columns).
pub(in crate::event::debezium) fn key(
    out: &mut Vec<u8>,
    plan: &TablePlan,
    options: &DebeziumOptions,
    row: &Row,
    scratch: &mut String,
) -> Result<(), EncodeError> {
    let table = &*plan.table;
    for &index in &plan.key {
        let Some(value) = row.get(index) else {
            return Err(EncodeError::MissingKeyColumn {
                table: table.qualified_name(),
                column: table.columns()[index].name.clone(),
            });
        };
        write_field(out, plan, options, index, Some(value), "key", scratch)?;
    }
    Ok(())
}

/// What an envelope holds beside its images and source: its place in the transaction and the
/// time the capture processed it.
#[derive(Clone, Copy, Debug)]
pub(in crate::event::debezium) struct Stamp<'t> {
    pub transaction: Option<&'t TransactionInfo>,
    pub processed_at: jiff::Timestamp,
}

/// Appends the body of the envelope of `part`.
pub(in crate::event::debezium) fn envelope(
    out: &mut Vec<u8>,
    plan: &TablePlan,
    options: &DebeziumOptions,
    event: &ChangeEvent,
    part: &Part<'_>,
    Stamp {
        transaction,
        processed_at,
    }: Stamp<'_>,
    scratch: &mut String,
) -> Result<(), EncodeError> {
    write_row(out, plan, options, part.before, "before", scratch)?;
    write_row(out, plan, options, part.after, "after", scratch)?;
    write_source(out, options, event);
    match transaction {
        Some(tx) => {
            binary::branch(out, 1);
            binary::string(out, &tx.id);
            binary::long(out, i64::try_from(tx.total_order).unwrap_or(i64::MAX));
            binary::long(
                out,
                i64::try_from(tx.data_collection_order).unwrap_or(i64::MAX),
            );
        }
        None => binary::branch(out, 0),
    }
    binary::string(out, part.op.letter());
    let nanos = processed_at.as_nanosecond();
    for unit in [1_000_000i128, 1_000, 1] {
        binary::branch(out, 1);
        binary::long(out, clamp(nanos.div_euclid(unit)));
    }
    Ok(())
}

fn clamp(value: i128) -> i64 {
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}

fn optional_string(out: &mut Vec<u8>, value: Option<&str>) {
    match value {
        Some(v) => {
            binary::branch(out, 1);
            binary::string(out, v);
        }
        None => binary::branch(out, 0),
    }
}

fn optional_long(out: &mut Vec<u8>, value: Option<i64>) {
    match value {
        Some(v) => {
            binary::branch(out, 1);
            binary::long(out, v);
        }
        None => binary::branch(out, 0),
    }
}

/// The `source` block (`io.debezium.connector.oracle.Source`), as the JSON encoding fills it.
fn write_source(out: &mut Vec<u8>, options: &DebeziumOptions, event: &ChangeEvent) {
    let source = &event.source;
    let table = &event.table;
    binary::string(out, &options.connector_version);
    binary::string(out, "oracle");
    binary::string(out, &options.topic_prefix);
    let change_time = source
        .change_time
        .or(source.commit_time)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let nanos = change_time.as_nanosecond();
    binary::long(out, clamp(nanos.div_euclid(1_000_000)));
    // `snapshot` has a default ("false"): its union is ["string", "null"].
    binary::branch(out, 0);
    binary::string(out, source.snapshot.as_str());
    binary::string(out, &options.database_name);
    // sequence
    binary::branch(out, 0);
    optional_long(out, Some(clamp(nanos.div_euclid(1_000))));
    optional_long(out, Some(clamp(nanos)));
    binary::string(out, table.schema());
    binary::string(out, table.table());
    let mut number = itoa::Buffer::new();
    match source.xid {
        Some(xid) => optional_string(out, Some(&xid.to_lower_hex())),
        None => binary::branch(out, 0),
    }
    optional_string(out, Some(number.format(source.scn)));
    optional_string(out, source.commit_scn.map(|scn| number.format(scn)));
    // lcr_position
    binary::branch(out, 0);
    optional_string(out, source.rs_id.as_deref());
    optional_long(out, Some(i64::try_from(source.ssn).unwrap_or(i64::MAX)));
    binary::branch(out, 1);
    binary::int(out, i32::from(source.redo_thread));
    optional_string(out, source.user_name.as_deref());
    // redo_sql
    binary::branch(out, 0);
    optional_string(out, source.row_id.as_deref());
    let millis = |t: jiff::Timestamp| clamp(t.as_nanosecond().div_euclid(1_000_000));
    optional_long(out, source.commit_time.map(millis));
    let start = source.transaction_start;
    optional_string(out, start.map(|start| number.format(start.scn)));
    optional_long(out, start.and_then(|start| start.time).map(millis));
    optional_long(
        out,
        source
            .transaction_sequence
            .map(|s| i64::try_from(s).unwrap_or(i64::MAX)),
    );
}

fn write_row(
    out: &mut Vec<u8>,
    plan: &TablePlan,
    options: &DebeziumOptions,
    row: Option<&Row>,
    image: &'static str,
    scratch: &mut String,
) -> Result<(), EncodeError> {
    let Some(row) = row else {
        binary::branch(out, 0);
        return Ok(());
    };
    binary::branch(out, 1);
    for &index in &plan.value_columns {
        let column = &plan.table.columns()[index];
        let value = row.get(index);
        match plan.masked(index, value) {
            Some(Some(masked)) => {
                if column.nullable {
                    binary::branch(out, 1);
                }
                binary::string(out, &masked);
            }
            Some(None) => write_field(out, plan, options, index, None, image, scratch)?,
            None => write_field(out, plan, options, index, value, image, scratch)?,
        }
    }
    Ok(())
}

/// Appends the field of column `index` (`None`: not in the image): its union branch when the
/// column is nullable, then its value.
fn write_field(
    out: &mut Vec<u8>,
    plan: &TablePlan,
    options: &DebeziumOptions,
    index: usize,
    value: Option<&Value>,
    image: &'static str,
    scratch: &mut String,
) -> Result<(), EncodeError> {
    match datum::of(plan, options, index, value, image)? {
        None => binary::branch(out, 0),
        Some(datum) => {
            if plan.table.columns()[index].nullable {
                binary::branch(out, 1);
            }
            write_datum(out, &datum, scratch);
        }
    }
    Ok(())
}

fn write_datum(out: &mut Vec<u8>, datum: &Datum<'_>, scratch: &mut String) {
    match datum {
        Datum::Long(v) => binary::long(out, *v),
        Datum::Boolean(b) => binary::boolean(out, *b),
        Datum::Decimal(unscaled) => binary::bytes(out, unscaled),
        Datum::VariableScaleDecimal { scale, unscaled } => {
            binary::int(out, *scale);
            binary::bytes(out, unscaled);
        }
        Datum::Float(v) => binary::float(out, *v),
        Datum::Double(v) => binary::double(out, *v),
        Datum::String(text) => binary::string(out, text),
        Datum::Formatted(formatted) => {
            scratch.clear();
            formatted.write(scratch);
            binary::string(out, scratch);
        }
        Datum::Binary(mode, bytes) => write_binary(out, *mode, bytes, scratch),
    }
}

/// Binary values: Avro `bytes`, or the text of the string modes.
fn write_binary(out: &mut Vec<u8>, mode: BinaryHandling, bytes: &[u8], scratch: &mut String) {
    match mode {
        BinaryHandling::Bytes => binary::bytes(out, bytes),
        _ => {
            scratch.clear();
            datum::binary_text(scratch, mode, bytes);
            binary::string(out, scratch);
        }
    }
}
