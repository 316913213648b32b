//! A column's value in the type its [`FieldKind`] gives it: the decisions the JSON payload
//! ([`super::payload`]) and the Avro one ([`super::avro::payload`]) share, made once. What a
//! field holds (null, the placeholder of a LOB the image does not carry, a value), which
//! value-to-kind pairs are encodable and with what errors, are the same in both encodings; only
//! the bytes each writes for a [`Datum`] differ.

use base64::Engine as _;
use jiff::civil::DateTime;
use jiff::tz::Offset;

use super::schema::FieldKind;
use super::{BinaryHandling, DebeziumOptions, EncodeError, TablePlan};
use crate::dictionary::LobKind;
use crate::value::temporal::{self, Fraction};
use crate::value::{OracleNumber, Value, binary};

/// A field's value, typed for writing.
#[derive(Clone, Debug)]
pub(super) enum Datum<'a> {
    Long(i64),
    Boolean(bool),
    /// Connect `Decimal`: the unscaled big-endian two's-complement bytes at the kind's scale.
    Decimal(Vec<u8>),
    /// Debezium's `VariableScaleDecimal`: the value's own scale and its unscaled bytes.
    VariableScaleDecimal {
        scale: i32,
        unscaled: Vec<u8>,
    },
    Float(f32),
    Double(f64),
    /// Text from the database, which the JSON encoding escapes.
    String(&'a str),
    /// Text the capture writes itself (digits, ISO 8601), which needs no escaping.
    Formatted(Formatted<'a>),
    /// Binary, written in `binary.handling.mode`.
    Binary(BinaryHandling, &'a [u8]),
}

/// The text forms the capture writes.
#[derive(Clone, Debug)]
pub(super) enum Formatted<'a> {
    /// Decimal digits, padded to `scale` fraction digits.
    PlainNumber {
        number: &'a OracleNumber,
        scale: u32,
    },
    /// ISO 8601 date-time with its offset (`Z` for UTC).
    Zoned {
        local: DateTime,
        offset: Offset,
        fraction_digits: u8,
    },
    /// ISO 8601 duration.
    Duration { months: i64, nanoseconds: i128 },
}

impl Formatted<'_> {
    pub(super) fn write(&self, out: &mut String) {
        match *self {
            Self::PlainNumber { number, scale } => number.write_plain(out, scale),
            Self::Zoned {
                local,
                offset,
                fraction_digits,
            } => {
                temporal::write_iso_local(out, local, Fraction::Digits(fraction_digits));
                temporal::write_offset(out, offset, true);
            }
            Self::Duration {
                months,
                nanoseconds,
            } => temporal::write_iso_duration(out, months, nanoseconds),
        }
    }
}

/// The field of column `index` holding `value` (`None`: not in the `image`): `None` for a null,
/// which only a nullable column may hold; the placeholder for a LOB the image does not carry.
pub(super) fn of<'a>(
    plan: &TablePlan,
    options: &'a DebeziumOptions,
    index: usize,
    value: Option<&'a Value>,
    image: &'static str,
) -> Result<Option<Datum<'a>>, EncodeError> {
    let column = &plan.table.columns()[index];
    let kind = plan.kinds[index];
    match value {
        None if column.data_type.is_lob_like() => {
            let placeholder = &options.unavailable_value_placeholder;
            Ok(Some(match kind {
                FieldKind::Binary(mode) => Datum::Binary(mode, placeholder.as_bytes()),
                _ => Datum::String(placeholder),
            }))
        }
        None | Some(Value::Null | Value::Unsupported) if !column.nullable => {
            Err(EncodeError::NullInRequiredColumn {
                table: plan.table.qualified_name(),
                column: column.name.clone(),
                image,
            })
        }
        None | Some(Value::Null | Value::Unsupported) => Ok(None),
        // An EMPTY_CLOB() / EMPTY_BLOB() no piece filled: null in a nullable column, empty in
        // a NOT NULL one, as Debezium's converters write it.
        Some(Value::LobPlaceholder(LobKind::Clob | LobKind::NClob | LobKind::Blob))
            if column.nullable && matches!(kind, FieldKind::String | FieldKind::Binary(_)) =>
        {
            Ok(None)
        }
        Some(value) => {
            typed(kind, value)
                .map(Some)
                .map_err(|problem| EncodeError::Unrepresentable {
                    table: plan.table.qualified_name(),
                    column: column.name.clone(),
                    problem,
                })
        }
    }
}

/// `value` as `kind`; the problem when it cannot be.
fn typed(kind: FieldKind, value: &Value) -> Result<Datum<'_>, String> {
    Ok(match (kind, value) {
        (
            FieldKind::Int8 | FieldKind::Int16 | FieldKind::Int32 | FieldKind::Int64,
            Value::Number(n),
        ) => match n.to_i64() {
            Some(v) => Datum::Long(v),
            None => return Err(format!("{n} is not a 64-bit integer")),
        },
        (FieldKind::Boolean, Value::Boolean(b)) => Datum::Boolean(*b),
        (FieldKind::Boolean, Value::Number(n)) => Datum::Boolean(!n.is_zero() && !n.is_negative()),
        (FieldKind::Decimal { scale, .. }, Value::Number(n)) => {
            Datum::Decimal(n.unscaled_bytes(scale))
        }
        (FieldKind::VariableScaleDecimal, Value::Number(n)) => {
            let scale = i32::try_from(n.scale()).unwrap_or(i32::MAX);
            Datum::VariableScaleDecimal {
                scale,
                unscaled: n.unscaled_bytes(scale),
            }
        }
        (FieldKind::NumberAsDouble, Value::Number(n)) => Datum::Double(n.to_f64()),
        (FieldKind::NumberAsString { scale }, Value::Number(number)) => {
            Datum::Formatted(Formatted::PlainNumber { number, scale })
        }
        (FieldKind::Float32, Value::BinaryFloat(v)) => Datum::Float(*v),
        (FieldKind::Float64, Value::BinaryDouble(v)) => Datum::Double(*v),
        (FieldKind::String | FieldKind::Xml | FieldKind::Json, Value::Text(t) | Value::Xml(t)) => {
            Datum::String(t)
        }
        (FieldKind::String, Value::LobPlaceholder(LobKind::Clob | LobKind::NClob)) => {
            Datum::String("")
        }
        (FieldKind::Binary(mode), Value::Bytes(bytes)) => Datum::Binary(mode, bytes),
        (FieldKind::Binary(mode), Value::LobPlaceholder(LobKind::Blob)) => Datum::Binary(mode, &[]),
        (
            FieldKind::TimestampMillis { .. }
            | FieldKind::TimestampMicros
            | FieldKind::TimestampNanos,
            Value::Date(local) | Value::Timestamp(local),
        ) => match kind.epoch_count(*local) {
            Some(count) => Datum::Long(count),
            None => return Err(format!("{local} is beyond a 64-bit epoch count")),
        },
        (FieldKind::ZonedTimestamp { fraction_digits }, Value::TimestampTz { local, offset }) => {
            Datum::Formatted(Formatted::Zoned {
                local: *local,
                offset: *offset,
                fraction_digits,
            })
        }
        (FieldKind::ZonedTimestamp { fraction_digits }, Value::TimestampLtz(instant)) => {
            Datum::Formatted(Formatted::Zoned {
                local: Offset::UTC.to_datetime(*instant),
                offset: Offset::UTC,
                fraction_digits,
            })
        }
        (FieldKind::MicroDuration, Value::IntervalYearToMonth { months }) => {
            // Debezium's average month: 365.25 / 12 days.
            Datum::Double(*months as f64 * (365.25 / 12.0) * 86_400_000_000.0)
        }
        (FieldKind::MicroDuration, Value::IntervalDayToSecond { nanoseconds }) => {
            Datum::Double((*nanoseconds / 1_000) as f64)
        }
        (FieldKind::IntervalString, Value::IntervalYearToMonth { months }) => {
            Datum::Formatted(Formatted::Duration {
                months: *months,
                nanoseconds: 0,
            })
        }
        (FieldKind::IntervalString, Value::IntervalDayToSecond { nanoseconds }) => {
            Datum::Formatted(Formatted::Duration {
                months: 0,
                nanoseconds: *nanoseconds,
            })
        }
        _ => {
            let value = short_kind(value);
            return Err(format!("a {value} value cannot be encoded as {kind:?}"));
        }
    })
}

fn short_kind(value: &Value) -> &'static str {
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
