//! Decoders of Oracle's internal value formats: the bytes a column value has in a data block
//! and in the redo.
//!
//! What for: once a table is altered, LogMiner (with the online catalog) can no longer render
//! the rows written under its older version, and writes them by object and column number with
//! every value as the hex of its internal bytes: `insert into "UNKNOWN"."OBJ# 74103"("COL 1",
//! "COL 2") values (HEXTORAW('c102'),HEXTORAW('4142'))` (Oracle Database Utilities, "Using the
//! Online Catalog"; issue 32). [`decode_internal`] turns such a value into the same [`Value`]
//! that [`super::typed`] makes of LogMiner's rendered text, given the type the schema history
//! knew for that column at that SCN, so those rows need not be dropped. Pure: no I/O, no panic
//! on any input.
//!
//! | type | internal format | source |
//! |---|---|---|
//! | NUMBER, FLOAT, INTEGER | exponent byte (sign bit, base-100 exponent excess 65), 1..20 base-100 digits (+1; negatives 101 − digit and a 102 terminator when fewer than 20), zero `80`, −∞ `00`, +∞ `ff65` | OCI Programmer's Guide, Data Types, "NUMBER"; OpenLogReplicator `Builder::parseNumber` |
//! | DATE | 7 bytes: century+100, year+100 (BC: 100 − century, 100 − year), month, day, hour+1, minute+1, second+1 | OCI, "DATE"; OpenLogReplicator `Builder::processValue` (DATE, TIMESTAMP) |
//! | TIMESTAMP | DATE's 7 bytes, then nanoseconds as 4 bytes big-endian; 7 bytes when the fraction is zero | OCI, "Oracle ANSI DATE, TIMESTAMP, and INTERVAL Data Types"; OpenLogReplicator |
//! | TIMESTAMP WITH TIME ZONE | the UTC date-time as TIMESTAMP (always 11 bytes), then hour+20 and minute+60 of the offset; a first zone byte with the high bit set is a time zone region id | as above; OpenLogReplicator (TIMESTAMP_WITH_TZ) |
//! | TIMESTAMP WITH LOCAL TIME ZONE | as TIMESTAMP, the reading normalised to the database time zone (`DBTIMEZONE`) | Oracle Database SQL Language Reference, "TIMESTAMP WITH LOCAL TIME ZONE Data Type"; OpenLogReplicator reads `DBTIMEZONE` for it |
//! | BINARY_FLOAT / BINARY_DOUBLE | IEEE 754 big-endian, sign bit flipped for positives, every bit inverted for negatives (so that bytes sort as numbers) | OCI, "BINARY_FLOAT and BINARY_DOUBLE"; OpenLogReplicator `Builder::decodeFloat` / `decodeDouble` |
//! | CHAR, VARCHAR2 | the database character set (`NLS_CHARACTERSET`) | OCI, "CHAR", "VARCHAR2" |
//! | NCHAR, NVARCHAR2 | the national character set: AL16UTF16 (UTF-16 big-endian) or UTF8 | Oracle Globalization Support Guide, "Unicode Data Types" |
//! | RAW | the bytes | OCI, "RAW" |
//! | INTERVAL YEAR TO MONTH | 5 bytes: years as 4 bytes big-endian excess 2³¹, months+60 | OCI, "INTERVAL YEAR TO MONTH"; OpenLogReplicator (INTERVAL_YEAR_TO_MONTH) |
//! | INTERVAL DAY TO SECOND | 11 bytes: days excess 2³¹, hours+60, minutes+60, seconds+60, nanoseconds excess 2³¹ | OCI, "INTERVAL DAY TO SECOND"; OpenLogReplicator (INTERVAL_DAY_TO_SECOND) |
//! | BOOLEAN (23ai) | one byte, 0 or 1 | OpenLogReplicator (BOOLEAN) |
//!
//! Decisions:
//! - A zero-length value is `Null`: Oracle stores no zero-length value of any type (the empty
//!   string is NULL).
//! - Every malformed input (wrong length, a digit or field out of range, a date that does not
//!   exist, mixed signs in an interval, bytes that are not valid in the character set) is an
//!   [`InternalFormatError`] naming the type and the hex. So is a well-formed value the column
//!   cannot hold (`NUMBER(5,2)`, `VARCHAR2(10)`, `TIMESTAMP(3)`, `INTERVAL DAY(2)`), with the
//!   same checks [`super::typed`] applies, for the same reason: a misfit means the type the
//!   caller chose is not the one the row was written with.
//! - NUMBER's infinities and a TIMESTAMP WITH TIME ZONE that names a region
//!   (`TIMESTAMP '...' US/Pacific`) are typed errors: [`Value::Number`] holds only finite
//!   decimals, and a region id maps to a name only through Oracle's time zone file
//!   (`$ORACLE_HOME/oracore/zoneinfo`), which is not public.
//! - Types with no internal decoder here (LOBs, LONG, ROWID, XMLTYPE, JSON, ...) are
//!   [`InternalReason::NotDecoded`]; LogMiner writes their values differently anyway.
//! - The character sets and time zone are those of [`DatabaseFormats`], which the capture
//!   reads once at start ([`crate::source::storage`]: `NLS_DATABASE_PARAMETERS`,
//!   `DBTIMEZONE`); [`DatabaseFormats::new`] gives AL32UTF8 and AL16UTF16, the defaults of a
//!   database created since 12.2, for tests.

mod datetime;
mod float;
mod number;
mod text;

mod encode;
#[cfg(test)]
mod tests;

use jiff::tz::Offset;

use super::binary::encode_hex;
use super::{
    InvalidReason, SHOWN_VALUE_LEN, Value, check_day_to_second, check_fraction, check_length,
    check_number, check_year_to_month,
};
use crate::dictionary::OracleType;
pub use text::{CharacterSet, NationalCharacterSet, UnknownCharacterSet};

/// What the database says about how it stores values, beyond the column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatabaseFormats {
    /// `NLS_CHARACTERSET`: CHAR and VARCHAR2.
    pub character_set: CharacterSet,
    /// `NLS_NCHAR_CHARACTERSET`: NCHAR and NVARCHAR2.
    pub national_character_set: NationalCharacterSet,
    /// `DBTIMEZONE` as an offset: TIMESTAMP WITH LOCAL TIME ZONE values are stored as readings
    /// in it. Not the host's offset (`SYSTIMESTAMP`, what the source's `database_utc_offset`
    /// reads for LogMiner's own times): `DBTIMEZONE` is set in the database, and Oracle refuses
    /// to change it while a table has such a column, so one value holds for all stored data.
    pub database_time_zone: Offset,
}

impl DatabaseFormats {
    /// AL32UTF8 and AL16UTF16 (the defaults since 12.2) with the given database time zone.
    pub fn new(database_time_zone: Offset) -> Self {
        Self {
            character_set: CharacterSet::Al32Utf8,
            national_character_set: NationalCharacterSet::Al16Utf16,
            database_time_zone,
        }
    }
}

/// Bytes that are not a value of the type in Oracle's internal format.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{data_type} value HEXTORAW('{hex}') {reason}")]
pub struct InternalFormatError {
    pub data_type: OracleType,
    /// The bytes as hex, cut to [`SHOWN_VALUE_LEN`] characters.
    pub hex: String,
    pub reason: InternalReason,
}

/// Why bytes were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InternalReason {
    #[error("has {actual} bytes, expected {expected}")]
    Length {
        expected: &'static str,
        actual: usize,
    },
    #[error("has the digit byte {byte:#04x} at {at}, outside the base-100 digits")]
    NumberDigit { at: usize, byte: u8 },
    #[error("is a negative NUMBER of fewer than 20 digits without its 102 terminator")]
    NumberTerminator,
    #[error("is NUMBER's {0} infinity, which no decimal value holds")]
    NumberInfinity(&'static str),
    #[error("has the {field} byte {byte}, out of range")]
    Field { field: &'static str, byte: u8 },
    #[error("has the {field} {value}, out of range")]
    FieldValue { field: &'static str, value: i64 },
    #[error("mixes positive and negative fields")]
    MixedSigns,
    #[error("is not a valid date-time: {0}")]
    DateTime(String),
    #[error(
        "names the time zone region id {0:#06x}; region ids map to names only through Oracle's \
         time zone file, which the capture does not have"
    )]
    TimeZoneRegion(u16),
    #[error("is not valid {charset} text at byte {at}")]
    Text { charset: &'static str, at: usize },
    #[error("{0}")]
    Declared(#[from] InvalidReason),
    #[error(
        "cannot be decoded: the capture has no internal-format decoder for this type; exclude \
         the column with spec.filters.columnExcludeList"
    )]
    NotDecoded,
}

/// The internal bytes of `value` for a column of `data_type`, the inverse of
/// [`decode_internal`] written from the same documentation: what the simulator writes for a
/// row LogMiner renders by number. `None` when the value has no such form (a character the
/// character set lacks, a type without an encoder).
pub fn encode_internal(
    data_type: &OracleType,
    value: &Value,
    formats: &DatabaseFormats,
) -> Option<Vec<u8>> {
    encode::encode(data_type, value, formats)
}

/// Decodes `bytes`, a column value in Oracle's internal format (LogMiner's `HEXTORAW('..')`
/// for an `OBJ# n` row), by the column's type; see the module docs.
pub fn decode_internal(
    data_type: &OracleType,
    bytes: &[u8],
    formats: &DatabaseFormats,
) -> Result<Value, InternalFormatError> {
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    decode_present(data_type, bytes, formats).map_err(|reason| InternalFormatError {
        data_type: data_type.clone(),
        hex: shown_hex(bytes),
        reason,
    })
}

fn decode_present(
    data_type: &OracleType,
    bytes: &[u8],
    formats: &DatabaseFormats,
) -> Result<Value, InternalReason> {
    use OracleType as T;
    match data_type {
        T::Number { precision, scale } => {
            let value = number::decode(bytes)?;
            check_number(&value, *precision, *scale)?;
            Ok(Value::Number(value))
        }
        T::Float { .. } => Ok(Value::Number(number::decode(bytes)?)),
        T::BinaryFloat => Ok(Value::BinaryFloat(float::decode_f32(bytes)?)),
        T::BinaryDouble => Ok(Value::BinaryDouble(float::decode_f64(bytes)?)),
        T::Char { .. } | T::Varchar2 { .. } => {
            let text = formats.character_set.decode(bytes)?;
            check_length(text.chars().count(), data_type)?;
            Ok(Value::Text(text))
        }
        T::NChar { .. } | T::NVarchar2 { .. } => {
            let text = formats.national_character_set.decode(bytes)?;
            check_length(text.chars().count(), data_type)?;
            Ok(Value::Text(text))
        }
        T::Raw { .. } => {
            check_length(bytes.len(), data_type)?;
            Ok(Value::Bytes(bytes.to_vec()))
        }
        T::Date => Ok(Value::Date(datetime::decode_date(bytes)?)),
        T::Timestamp {
            fractional_precision,
        } => {
            let local = datetime::decode_timestamp(bytes)?;
            check_fraction(local, *fractional_precision)?;
            Ok(Value::Timestamp(local))
        }
        T::TimestampWithTimeZone {
            fractional_precision,
        } => {
            let (local, offset) = datetime::decode_timestamp_tz(bytes)?;
            check_fraction(local, *fractional_precision)?;
            Ok(Value::TimestampTz { local, offset })
        }
        T::TimestampWithLocalTimeZone {
            fractional_precision,
        } => {
            let local = datetime::decode_timestamp(bytes)?;
            check_fraction(local, *fractional_precision)?;
            let instant = super::temporal::instant(local, formats.database_time_zone)
                .map_err(|e| InternalReason::DateTime(e.to_string()))?;
            Ok(Value::TimestampLtz(instant))
        }
        T::IntervalYearToMonth { year_precision } => {
            let months = datetime::decode_year_to_month(bytes)?;
            check_year_to_month(months, *year_precision)?;
            Ok(Value::IntervalYearToMonth { months })
        }
        T::IntervalDayToSecond {
            day_precision,
            fractional_precision,
        } => {
            let nanoseconds = datetime::decode_day_to_second(bytes)?;
            check_day_to_second(nanoseconds, *day_precision, *fractional_precision)?;
            Ok(Value::IntervalDayToSecond { nanoseconds })
        }
        T::Boolean => match bytes {
            [0] => Ok(Value::Boolean(false)),
            [1] => Ok(Value::Boolean(true)),
            [byte] => Err(InternalReason::Field {
                field: "BOOLEAN",
                byte: *byte,
            }),
            _ => Err(InternalReason::Length {
                expected: "1",
                actual: bytes.len(),
            }),
        },
        T::Long
        | T::Clob
        | T::NClob
        | T::Blob
        | T::LongRaw
        | T::RowId
        | T::URowId { .. }
        | T::XmlType
        | T::Json
        | T::Unsupported { .. } => Err(InternalReason::NotDecoded),
    }
}

/// The bytes as hex for an error, cut to [`SHOWN_VALUE_LEN`] characters.
fn shown_hex(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(SHOWN_VALUE_LEN / 2)];
    let mut hex = encode_hex(shown);
    if shown.len() < bytes.len() {
        hex.push('…');
    }
    hex
}

/// The field of a signed value stored with an excess (`byte - excess`), checked within ±`max`.
fn excess_field(
    field: &'static str,
    byte: u8,
    excess: i64,
    max: i64,
) -> Result<i64, InternalReason> {
    let value = i64::from(byte) - excess;
    if value.abs() > max {
        return Err(InternalReason::Field { field, byte });
    }
    Ok(value)
}
