//! Typed column values: the untyped [`RawValue`]s of SQL_REDO read by the column's Oracle type.
//!
//! [`typed`] is pure and exact: numbers stay decimal ([`OracleNumber`]), date-times keep every
//! nanosecond and their offset, binary stays bytes. Its mapping, by column type:
//!
//! | column type | accepted raw value | [`Value`] |
//! |---|---|---|
//! | NUMBER, FLOAT, INTEGER | `'42'`, `'-.5'` | `Number`; NUMBER(p,s) must fit p and s exactly |
//! | BINARY_FLOAT / BINARY_DOUBLE | `'1.5'`, `'Inf'`, `'-Inf'`, `'Nan'` (also `Infinity`, `NaN`) | `BinaryFloat` / `BinaryDouble` |
//! | CHAR, NCHAR, VARCHAR2, NVARCHAR2, LONG, ROWID, UROWID | `'text'` (UNISTR already decoded) | `Text`, CHAR padding kept |
//! | CLOB, NCLOB | `'text'`, `EMPTY_CLOB()` | `Text`, `LobPlaceholder` |
//! | BLOB | `HEXTORAW('..')`, `EMPTY_BLOB()` | `Bytes`, `LobPlaceholder` |
//! | RAW, LONG RAW | `HEXTORAW('..')` | `Bytes`, at most the declared length |
//! | DATE, TIMESTAMP…, INTERVAL… | see [`temporal`] | `Date`, `Timestamp`, `TimestampTz`, `TimestampLtz`, `Interval…` |
//! | XMLTYPE | `XMLType('<a/>')`, `'<a/>'` | `Xml` |
//! | JSON | `'{"a":1}'`, `UNISTR(..)`, `EMPTY_BLOB()` / `EMPTY_CLOB()` (optionally after `/* JSON */`) | `Text`; an empty LOB is `Null` (nullable) or `""` |
//! | BOOLEAN | `'1'` / `'0'` (any integer text; zero is false), `'TRUE'` / `'FALSE'` | `Boolean` |
//! | a type the capture cannot decode | anything | `Null`: the column is excluded, its value dropped |
//! | any | `NULL` / `Unsupported Type` | `Null` / `Unsupported` |
//!
//! Decisions:
//! - A value that does not fit its column is an [`InvalidValue`] naming column, type and value,
//!   never a null or a rounded value: Oracle stores only values that fit, so a misfit means the
//!   dictionary does not match the redo (a DDL the capture has not seen), which must stop, not
//!   corrupt. This covers letters in a NUMBER, `'1.234'` in NUMBER(10,2), a fraction finer than
//!   TIMESTAMP(n), `HEXTORAW` of odd length or longer than RAW(n), and text of more characters
//!   than CHAR(n)/VARCHAR2(n) declares. Lengths are checked in characters even for BYTE
//!   semantics: the database character set is not known here, and a value can hold at most as
//!   many characters as bytes, so the check never refuses a value Oracle accepted.
//! - `''` in a character column is `Null`: Oracle stores the empty string as NULL.
//! - `EMPTY_CLOB()` / `EMPTY_BLOB()` are `LobPlaceholder`: the LOB's content follows in later
//!   redo (an UPDATE or LOB_WRITE rows) and LOB reassembly replaces the placeholder. A
//!   placeholder that reaches an encoder means no content followed: the LOB is empty.
//! - `Unsupported Type` is `Unsupported`; the caller applies `onUnsupported` (fail or skip).

pub mod binary;
pub mod internal;
pub mod nls;
pub mod number;
pub mod temporal;

use std::fmt;

use jiff::civil;
use jiff::tz::Offset;

use crate::dictionary::{Column, LobKind, MAX_NUMBER_PRECISION, OracleType, TableSchema};
use crate::redo::ast::{ColumnValue, RawValue};
pub use number::{NumberError, OracleNumber};
use temporal::TemporalError;

/// A typed column value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    /// NUMBER, FLOAT, INTEGER.
    Number(OracleNumber),
    BinaryFloat(f32),
    BinaryDouble(f64),
    /// Character data: CHAR, NCHAR, VARCHAR2, NVARCHAR2, CLOB, NCLOB, LONG, ROWID, UROWID.
    Text(String),
    /// XMLTYPE rendered as text.
    Xml(String),
    /// BOOLEAN (23ai).
    Boolean(bool),
    /// RAW, LONG RAW, BLOB.
    Bytes(Vec<u8>),
    /// DATE: a wall-clock reading to the second.
    Date(civil::DateTime),
    /// TIMESTAMP(n): a wall-clock reading to the nanosecond.
    Timestamp(civil::DateTime),
    /// TIMESTAMP(n) WITH TIME ZONE: the wall-clock reading at its offset.
    TimestampTz {
        local: civil::DateTime,
        offset: Offset,
    },
    /// TIMESTAMP(n) WITH LOCAL TIME ZONE: an instant.
    TimestampLtz(jiff::Timestamp),
    /// INTERVAL YEAR TO MONTH, in months (signed).
    IntervalYearToMonth {
        months: i64,
    },
    /// INTERVAL DAY TO SECOND, in nanoseconds (signed).
    IntervalDayToSecond {
        nanoseconds: i128,
    },
    /// `EMPTY_CLOB()` / `EMPTY_BLOB()`: content to come from LOB reassembly.
    LobPlaceholder(LobKind),
    /// LogMiner's `Unsupported Type`.
    Unsupported,
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }
}

/// A raw value that does not fit its column's type.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("column {column} ({data_type}): {value} {reason}")]
pub struct InvalidValue {
    pub column: String,
    pub data_type: OracleType,
    /// The raw value as SQL_REDO wrote it, cut to [`SHOWN_VALUE_LEN`] characters.
    pub value: String,
    pub reason: InvalidReason,
}

/// How much of a refused value an error shows.
pub const SHOWN_VALUE_LEN: usize = 120;

/// Why a raw value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidReason {
    #[error("is {0}, expected for this type")]
    UnexpectedShape(&'static str),
    #[error("is not a number: {0}")]
    Number(#[from] NumberError),
    #[error("does not fit NUMBER({precision},{scale}) without rounding")]
    NumberDoesNotFit { precision: u8, scale: i8 },
    #[error("is not a binary floating-point number")]
    Float,
    #[error("has {length} characters or bytes, more than the declared {max}")]
    TooLong { length: usize, max: u32 },
    #[error("is not valid hexadecimal: {0}")]
    Hex(#[from] binary::HexError),
    #[error("is not a valid date-time or interval: {0}")]
    Temporal(#[from] TemporalError),
    #[error("has a finer fraction than the column's {0} digits")]
    FractionTooPrecise(u8),
    #[error("exceeds the interval's {0}-digit leading field")]
    IntervalTooLarge(u8),
}

/// A value that cannot be typed for its table.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error("table {table} has no column {column:?} (the dictionary does not match the redo)")]
    UnknownColumn { table: String, column: String },
    #[error("table {table}: {source}")]
    Invalid {
        table: String,
        #[source]
        source: Box<InvalidValue>,
    },
}

/// A row image: one slot per table column, in table order. `None` is a column the image does
/// not carry (not logged, or a LOB left out of a before image); `Some(Value::Null)` is NULL.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Row {
    values: Vec<Option<Value>>,
}

impl Row {
    /// A row with every column absent.
    pub fn absent(column_count: usize) -> Self {
        Self {
            values: vec![None; column_count],
        }
    }

    /// A row from one value per column, in table order.
    pub fn from_values(values: Vec<Value>) -> Self {
        Self {
            values: values.into_iter().map(Some).collect(),
        }
    }

    pub fn set(&mut self, index: usize, value: Value) {
        if let Some(slot) = self.values.get_mut(index) {
            *slot = Some(value);
        }
    }

    /// The value of the column at `index`, `None` when the image does not carry it.
    pub fn get(&self, index: usize) -> Option<&Value> {
        self.values.get(index).and_then(Option::as_ref)
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Types one raw value for a column of `table`.
pub fn typed_column_value(
    table: &TableSchema,
    column_name: &str,
    raw: &RawValue<'_>,
) -> Result<(usize, Value), ValueError> {
    let Some(index) = table.column_index(column_name) else {
        return Err(ValueError::UnknownColumn {
            table: table.qualified_name(),
            column: column_name.to_owned(),
        });
    };
    let column = &table.columns()[index];
    typed(raw, column)
        .map(|value| (index, value))
        .map_err(|source| ValueError::Invalid {
            table: table.qualified_name(),
            source: Box::new(source),
        })
}

/// Types the column values of one statement (a VALUES list, SET or WHERE clause) into a row of
/// `table`; columns the statement does not name stay absent.
pub fn typed_row(table: &TableSchema, values: &[ColumnValue<'_>]) -> Result<Row, ValueError> {
    let mut row = Row::absent(table.columns().len());
    for (name, raw) in values {
        let (index, value) = typed_column_value(table, name, raw)?;
        row.set(index, value);
    }
    Ok(row)
}

/// Types one raw value by the column's Oracle type; see the module docs for the mapping.
pub fn typed(raw: &RawValue<'_>, column: &Column) -> Result<Value, InvalidValue> {
    let invalid = |reason: InvalidReason| InvalidValue {
        column: column.name.clone(),
        data_type: column.data_type.clone(),
        value: shown(raw),
        reason,
    };
    match raw {
        RawValue::Null => return Ok(Value::Null),
        // Before `Unsupported Type`: whatever LogMiner wrote for a column the capture cannot
        // decode is dropped. The start check allows such a column only when
        // spec.filters.columnExcludeList excludes it, so the value is never encoded.
        _ if column.data_type.is_unsupported() => return Ok(Value::Null),
        RawValue::Unsupported => return Ok(Value::Unsupported),
        // Debezium's JSON converter: an empty JSON LOB is null in a nullable column and the
        // empty string in a NOT NULL one.
        RawValue::Call { name, args }
            if column.data_type == OracleType::Json
                && args.is_empty()
                && (is(name, "EMPTY_BLOB") || is(name, "EMPTY_CLOB")) =>
        {
            return Ok(if column.nullable {
                Value::Null
            } else {
                Value::Text(String::new())
            });
        }
        RawValue::Text(_) | RawValue::Call { .. } => {}
    }
    typed_present(raw, &column.data_type).map_err(invalid)
}

fn typed_present(raw: &RawValue<'_>, data_type: &OracleType) -> Result<Value, InvalidReason> {
    use OracleType as T;
    match data_type {
        T::Number { precision, scale } => {
            let number = OracleNumber::parse(text(raw, "a quoted number")?)?;
            check_number(&number, *precision, *scale)?;
            Ok(Value::Number(number))
        }
        T::Float { .. } => Ok(Value::Number(OracleNumber::parse(text(
            raw,
            "a quoted number",
        )?)?)),
        T::BinaryFloat => {
            let t = text(raw, "a quoted number")?;
            // Parsed straight to f32: going through f64 could round twice.
            special_float(t)
                .map(|v| v as f32)
                .or_else(|| plain_float(t).and_then(|t| t.parse::<f32>().ok()))
                .map(Value::BinaryFloat)
                .ok_or(InvalidReason::Float)
        }
        T::BinaryDouble => {
            let t = text(raw, "a quoted number")?;
            special_float(t)
                .or_else(|| plain_float(t).and_then(|t| t.parse::<f64>().ok()))
                .map(Value::BinaryDouble)
                .ok_or(InvalidReason::Float)
        }
        T::Char { .. }
        | T::NChar { .. }
        | T::Varchar2 { .. }
        | T::NVarchar2 { .. }
        | T::Long
        | T::RowId
        | T::URowId { .. } => {
            let t = text(raw, "a quoted string")?;
            if t.is_empty() {
                return Ok(Value::Null);
            }
            check_length(t.chars().count(), data_type)?;
            Ok(Value::Text(t.to_owned()))
        }
        T::Clob | T::NClob => match raw {
            RawValue::Call { name, args } if is(name, "EMPTY_CLOB") && args.is_empty() => Ok(
                Value::LobPlaceholder(data_type.lob_kind().unwrap_or(LobKind::Clob)),
            ),
            _ => {
                let t = text(raw, "a quoted string or EMPTY_CLOB()")?;
                Ok(if t.is_empty() {
                    Value::Null
                } else {
                    Value::Text(t.to_owned())
                })
            }
        },
        T::Blob => match raw {
            RawValue::Call { name, args } if is(name, "EMPTY_BLOB") && args.is_empty() => {
                Ok(Value::LobPlaceholder(LobKind::Blob))
            }
            _ => Ok(Value::Bytes(hex_call(raw)?)),
        },
        T::Raw { .. } | T::LongRaw => {
            let bytes = hex_call(raw)?;
            check_length(bytes.len(), data_type)?;
            Ok(Value::Bytes(bytes))
        }
        T::Date => {
            let (local, _) = date_time_call(raw, &["TO_DATE"], &nls::DATE_FORMAT)?;
            if local.subsec_nanosecond() != 0 {
                return Err(InvalidReason::FractionTooPrecise(0));
            }
            Ok(Value::Date(local))
        }
        T::Timestamp {
            fractional_precision,
        } => {
            let (local, _) =
                date_time_call(raw, &["TO_TIMESTAMP", "TO_DATE"], &nls::TIMESTAMP_FORMAT)?;
            check_fraction(local, *fractional_precision)?;
            Ok(Value::Timestamp(local))
        }
        T::TimestampWithTimeZone {
            fractional_precision,
        } => {
            let (local, offset) =
                date_time_call(raw, &["TO_TIMESTAMP_TZ"], &nls::TIMESTAMP_TZ_FORMAT)?;
            let offset = offset.ok_or(TemporalError::MissingOffset)?;
            check_fraction(local, *fractional_precision)?;
            Ok(Value::TimestampTz { local, offset })
        }
        T::TimestampWithLocalTimeZone {
            fractional_precision,
        } => {
            // The session TIME_ZONE is UTC (see nls), so a reading without offset is UTC.
            let format = match raw {
                RawValue::Call { name, .. } if is(name, "TO_TIMESTAMP_TZ") => {
                    &*nls::TIMESTAMP_TZ_FORMAT
                }
                _ => &*nls::TIMESTAMP_FORMAT,
            };
            let (local, offset) =
                date_time_call(raw, &["TO_TIMESTAMP", "TO_TIMESTAMP_TZ"], format)?;
            check_fraction(local, *fractional_precision)?;
            let instant = temporal::instant(local, offset.unwrap_or(Offset::UTC))?;
            Ok(Value::TimestampLtz(instant))
        }
        T::IntervalYearToMonth { year_precision } => {
            let months = temporal::read_year_to_month(call_text(raw, "TO_YMINTERVAL")?)?;
            check_year_to_month(months, *year_precision)?;
            Ok(Value::IntervalYearToMonth { months })
        }
        T::IntervalDayToSecond {
            day_precision,
            fractional_precision,
        } => {
            let nanoseconds = temporal::read_day_to_second(call_text(raw, "TO_DSINTERVAL")?)?;
            check_day_to_second(nanoseconds, *day_precision, *fractional_precision)?;
            Ok(Value::IntervalDayToSecond { nanoseconds })
        }
        T::XmlType => match raw {
            RawValue::Call { name, args } if is(name, "XMLTYPE") => match args.as_slice() {
                [RawValue::Text(t)] => Ok(Value::Xml(t.to_string())),
                _ => Err(InvalidReason::UnexpectedShape(
                    "XMLType('...') with one literal",
                )),
            },
            _ => Ok(Value::Xml(text(raw, "XMLType('...')")?.to_owned())),
        },
        // LogMiner writes a JSON value as text (UNISTR decoded by the parser) or, for the
        // binary OSON form, as `HEXTORAW('ff4a5a..')` (Debezium's LogMinerDmlParserTest,
        // shouldParseJsonAsBinaryUpdate). OSON is Oracle's undocumented binary format that
        // Debezium decodes with Oracle's JDBC driver; it is refused here by name rather than
        // sent as bytes a consumer would take for the document.
        T::Json => match raw {
            RawValue::Call { name, .. } if is(name, "HEXTORAW") => {
                Err(InvalidReason::UnexpectedShape(
                    "JSON text; the binary OSON form (HEXTORAW) is not decoded, exclude the \
                     column with spec.filters.columnExcludeList",
                ))
            }
            _ => Ok(Value::Text(text(raw, "a quoted JSON text")?.to_owned())),
        },
        // Debezium's BOOLEAN converter reads the SQL_REDO text as a byte, zero being false;
        // TRUE / FALSE are BOOLEAN's own literals.
        T::Boolean => {
            let t = text(raw, "'1', '0', 'TRUE' or 'FALSE'")?.trim();
            if t.eq_ignore_ascii_case("TRUE") {
                Ok(Value::Boolean(true))
            } else if t.eq_ignore_ascii_case("FALSE") {
                Ok(Value::Boolean(false))
            } else {
                t.parse::<i8>()
                    .map(|b| Value::Boolean(b != 0))
                    .map_err(|_| InvalidReason::UnexpectedShape("'1', '0', 'TRUE' or 'FALSE'"))
            }
        }
        // Handled in `typed` before any shape is looked at.
        T::Unsupported { .. } => Ok(Value::Null),
    }
}

fn is(name: &str, expected: &str) -> bool {
    name.eq_ignore_ascii_case(expected)
}

fn text<'r>(raw: &'r RawValue<'_>, expected: &'static str) -> Result<&'r str, InvalidReason> {
    match raw {
        RawValue::Text(t) => Ok(t),
        _ => Err(InvalidReason::UnexpectedShape(expected)),
    }
}

/// The single literal argument of `NAME('...')`.
fn call_text<'r>(raw: &'r RawValue<'_>, function: &'static str) -> Result<&'r str, InvalidReason> {
    match raw {
        RawValue::Call { name, args } if is(name, function) => match args.as_slice() {
            [RawValue::Text(t)] => Ok(t),
            _ => Err(InvalidReason::UnexpectedShape(
                "a call with one literal argument",
            )),
        },
        _ => Err(InvalidReason::UnexpectedShape(function)),
    }
}

fn hex_call(raw: &RawValue<'_>) -> Result<Vec<u8>, InvalidReason> {
    Ok(binary::decode_hex(call_text(raw, "HEXTORAW")?)?)
}

/// `TO_DATE('..', 'fmt')`, `TO_TIMESTAMP('..'[, 'fmt'])`, ... or a bare literal in the session
/// format.
fn date_time_call(
    raw: &RawValue<'_>,
    functions: &[&'static str],
    session_format: &nls::DateTimeFormat,
) -> Result<(civil::DateTime, Option<Offset>), InvalidReason> {
    let (literal, format) = match raw {
        RawValue::Text(t) => (t.as_ref(), None),
        RawValue::Call { name, args } if functions.iter().any(|f| is(name, f)) => {
            match args.as_slice() {
                [RawValue::Text(t)] => (t.as_ref(), None),
                [RawValue::Text(t), RawValue::Text(f)] => (t.as_ref(), Some(f.as_ref())),
                _ => return Err(InvalidReason::UnexpectedShape("a literal and a format")),
            }
        }
        _ => {
            return Err(InvalidReason::UnexpectedShape(
                functions.first().copied().unwrap_or(""),
            ));
        }
    };
    let parsed = match format {
        None => temporal::read_date_time(literal, session_format)?,
        Some(f) if f == nls::NLS_DATE_FORMAT => {
            temporal::read_date_time(literal, &nls::DATE_FORMAT)?
        }
        Some(f) => {
            let format = nls::DateTimeFormat::parse(f).map_err(TemporalError::from)?;
            temporal::read_date_time(literal, &format)?
        }
    };
    Ok(parsed)
}

/// Whether a NUMBER value fits the column's `NUMBER(p,s)` (any value fits a floating NUMBER).
fn check_number(
    number: &OracleNumber,
    precision: Option<u8>,
    scale: Option<i8>,
) -> Result<(), InvalidReason> {
    if let Some(scale) = scale {
        let precision = precision.unwrap_or(MAX_NUMBER_PRECISION);
        if !number.fits(precision, scale) {
            return Err(InvalidReason::NumberDoesNotFit { precision, scale });
        }
    }
    Ok(())
}

/// Whether an INTERVAL YEAR(p) TO MONTH holds `months`.
fn check_year_to_month(months: i64, year_precision: u8) -> Result<(), InvalidReason> {
    if months.unsigned_abs() / 12 >= 10u64.pow(u32::from(year_precision)) {
        return Err(InvalidReason::IntervalTooLarge(year_precision));
    }
    Ok(())
}

/// Whether an INTERVAL DAY(p) TO SECOND(f) holds `nanoseconds`.
fn check_day_to_second(
    nanoseconds: i128,
    day_precision: u8,
    fractional_precision: u8,
) -> Result<(), InvalidReason> {
    let days = nanoseconds.unsigned_abs() / 86_400_000_000_000;
    if days >= 10u128.pow(u32::from(day_precision)) {
        return Err(InvalidReason::IntervalTooLarge(day_precision));
    }
    let unit = 10u128.pow(9 - u32::from(fractional_precision.min(9)));
    if !nanoseconds.unsigned_abs().is_multiple_of(unit) {
        return Err(InvalidReason::FractionTooPrecise(fractional_precision));
    }
    Ok(())
}

fn check_fraction(local: civil::DateTime, precision: u8) -> Result<(), InvalidReason> {
    let unit = 10i32.pow(9 - u32::from(precision.min(9)));
    if local.subsec_nanosecond() % unit != 0 {
        return Err(InvalidReason::FractionTooPrecise(precision));
    }
    Ok(())
}

fn check_length(length: usize, data_type: &OracleType) -> Result<(), InvalidReason> {
    match data_type.max_length() {
        Some(max) if length > max as usize => Err(InvalidReason::TooLong { length, max }),
        _ => Ok(()),
    }
}

/// `Inf`, `-Inf`, `Nan` as LogMiner writes them, and the `Infinity` / `NaN` spellings.
fn special_float(text: &str) -> Option<f64> {
    match text.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    }
}

/// Only plain decimal text: Rust's float parser would also take `inf` and `nan` in other
/// spellings, which [`special_float`] already decided on.
fn plain_float(text: &str) -> Option<&str> {
    let ok = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
        && text.bytes().any(|b| b.is_ascii_digit());
    ok.then_some(text)
}

/// The raw value as SQL_REDO wrote it, for error messages.
fn shown(raw: &RawValue<'_>) -> String {
    let mut out = String::new();
    write_raw(&mut out, raw);
    if out.chars().count() > SHOWN_VALUE_LEN {
        out = out.chars().take(SHOWN_VALUE_LEN).collect();
        out.push('…');
    }
    out
}

fn write_raw(out: &mut String, raw: &RawValue<'_>) {
    match raw {
        RawValue::Null => out.push_str("NULL"),
        RawValue::Unsupported => out.push_str("Unsupported Type"),
        RawValue::Text(t) => {
            out.push('\'');
            out.push_str(&t.replace('\'', "''"));
            out.push('\'');
        }
        RawValue::Call { name, args } => {
            out.push_str(name);
            out.push('(');
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_raw(out, arg);
            }
            out.push(')');
        }
    }
}

impl fmt::Display for Value {
    /// A short human form, for logs and errors (encoders have their own renderings).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Number(n) => write!(f, "{n}"),
            Value::BinaryFloat(v) => write!(f, "{v:?}"),
            Value::BinaryDouble(v) => write!(f, "{v:?}"),
            Value::Text(t) | Value::Xml(t) => write!(f, "{t:?}"),
            Value::Boolean(b) => write!(f, "{}", if *b { "TRUE" } else { "FALSE" }),
            Value::Bytes(b) => write!(f, "0x{}", binary::encode_hex(b)),
            Value::Date(d) | Value::Timestamp(d) => write!(f, "{d}"),
            Value::TimestampTz { local, offset } => write!(f, "{local}{offset}"),
            Value::TimestampLtz(t) => write!(f, "{t}"),
            Value::IntervalYearToMonth { months } => write!(f, "{months} months"),
            Value::IntervalDayToSecond { nanoseconds } => write!(f, "{nanoseconds} ns"),
            Value::LobPlaceholder(kind) => write!(f, "EMPTY_{kind:?}()"),
            Value::Unsupported => f.write_str("Unsupported Type"),
        }
    }
}

#[cfg(test)]
mod tests;
