//! Scenario values (JSON) to stored column values, with Oracle's rules.
//!
//! | column type | JSON accepted | stored as |
//! |---|---|---|
//! | NUMBER(p,s), FLOAT, INTEGER | number, or decimal string (`"10.50"`, exact) | `Number`; must fit p and s exactly (Oracle would round excess fraction digits; a scenario states exact values, so a misfit is an error) |
//! | BINARY_FLOAT / DOUBLE | number, `"Inf"`, `"-Inf"`, `"NaN"` | `BinaryFloat` / `BinaryDouble` |
//! | CHAR(n), NCHAR(n) | string | `Text`, blank-padded to n (characters for CHAR semantics and NCHAR, bytes otherwise) |
//! | VARCHAR2, NVARCHAR2, LONG, ROWID, UROWID, CLOB, NCLOB | string | `Text` |
//! | RAW, LONG RAW, BLOB | hex string | `Bytes` |
//! | DATE | `"2024-01-02T03:04:05"` (or a space for `T`, or a date alone) | `Date`, no fraction allowed |
//! | TIMESTAMP(n) | same, fraction up to n digits | `Timestamp` |
//! | TIMESTAMP WITH TIME ZONE | same with `+01:00` / `Z` | `TimestampTz` |
//! | TIMESTAMP WITH LOCAL TIME ZONE | same, offset optional (UTC) | `TimestampLtz` |
//! | INTERVAL YEAR TO MONTH / DAY TO SECOND | `"+05-00"` / `"+02 03:04:05.5"` | intervals |
//!
//! `null` is NULL everywhere; an empty string is NULL in character and LOB columns (Oracle stores
//! `''` as NULL), and empty hex is NULL too (`HEXTORAW('')` is NULL). Lengths count bytes of the
//! UTF-8 database character set unless the column says CHAR (ORA-12899 otherwise).

use jiff::civil;
use jiff::tz::Offset;
use serde_json::Value as Json;

use crate::dictionary::{LengthSemantics, MAX_NUMBER_PRECISION, OracleType};
use crate::value::{OracleNumber, Value, binary, temporal};

/// Converts one scenario value for a column of `data_type`; the error says why (the caller adds
/// line and field).
pub(crate) fn to_value(json: Json, data_type: &OracleType) -> Result<Value, String> {
    use OracleType as T;
    if json.is_null() {
        return Ok(Value::Null);
    }
    match data_type {
        T::Number { precision, scale } => {
            let number = number(&json)?;
            if let Some(scale) = *scale {
                let precision = precision.unwrap_or(MAX_NUMBER_PRECISION);
                if !number.fits(precision, scale) {
                    return Err(format!(
                        "{number} does not fit {data_type} (ORA-01438 or rounding)"
                    ));
                }
            }
            Ok(Value::Number(number))
        }
        T::Float { .. } => number(&json).map(Value::Number),
        T::BinaryFloat => float(&json).map(|v| Value::BinaryFloat(v as f32)),
        T::BinaryDouble => float(&json).map(Value::BinaryDouble),
        T::Char { length, semantics } => {
            padded(owned(json)?, *length, *semantics == LengthSemantics::Char)
        }
        T::NChar { length } => padded(owned(json)?, *length, true),
        T::Varchar2 { length, semantics } => {
            bounded(owned(json)?, *length, *semantics == LengthSemantics::Char)
        }
        T::NVarchar2 { length } => bounded(owned(json)?, *length, true),
        T::Long | T::RowId | T::URowId { .. } | T::Clob | T::NClob => {
            let text = owned(json)?;
            Ok(if text.is_empty() {
                Value::Null
            } else {
                Value::Text(text)
            })
        }
        T::Raw { length } => {
            let bytes = hex(&json)?;
            if bytes.len() > *length as usize {
                return Err(format!(
                    "{} bytes is longer than {data_type} (ORA-12899)",
                    bytes.len()
                ));
            }
            Ok(bytes_or_null(bytes))
        }
        T::LongRaw | T::Blob => hex(&json).map(bytes_or_null),
        T::Date => {
            let (local, offset) = date_time(&json)?;
            if offset.is_some() || local.subsec_nanosecond() != 0 {
                return Err("a DATE has no fraction and no offset".to_owned());
            }
            Ok(Value::Date(local))
        }
        T::Timestamp {
            fractional_precision,
        } => {
            let (local, offset) = date_time(&json)?;
            if offset.is_some() {
                return Err("a TIMESTAMP without time zone takes no offset".to_owned());
            }
            fraction_fits(local, *fractional_precision)?;
            Ok(Value::Timestamp(local))
        }
        T::TimestampWithTimeZone {
            fractional_precision,
        } => {
            let (local, offset) = date_time(&json)?;
            let offset = offset.ok_or("a TIMESTAMP WITH TIME ZONE needs an offset")?;
            fraction_fits(local, *fractional_precision)?;
            Ok(Value::TimestampTz { local, offset })
        }
        T::TimestampWithLocalTimeZone {
            fractional_precision,
        } => {
            let (local, offset) = date_time(&json)?;
            fraction_fits(local, *fractional_precision)?;
            temporal::instant(local, offset.unwrap_or(Offset::UTC))
                .map(Value::TimestampLtz)
                .map_err(|e| e.to_string())
        }
        T::IntervalYearToMonth { .. } => temporal::read_year_to_month(string(&json)?)
            .map(|months| Value::IntervalYearToMonth { months })
            .map_err(|e| e.to_string()),
        T::IntervalDayToSecond { .. } => temporal::read_day_to_second(string(&json)?)
            .map(|nanoseconds| Value::IntervalDayToSecond { nanoseconds })
            .map_err(|e| e.to_string()),
        T::XmlType => Err("XMLTYPE columns are not simulated".to_owned()),
        // A JSON column takes the document: a JSON string is its text, anything else is
        // written out compactly.
        T::Json => Ok(match json {
            Json::String(text) if text.is_empty() => Value::Null,
            Json::String(text) => Value::Text(text),
            other => Value::Text(other.to_string()),
        }),
        T::Boolean => match json {
            Json::Bool(b) => Ok(Value::Boolean(b)),
            other => Err(format!("a BOOLEAN takes true or false, not {other}")),
        },
        // LogMiner cannot render such a value; it writes `Unsupported Type` whatever it is.
        T::Unsupported { .. } => Ok(Value::Unsupported),
    }
}

/// Checks a typed value (a [`super::TypedStep`]'s) for a column of `data_type` by the rules
/// scenario values follow: the variant must be the one the column stores, and it must fit;
/// CHAR values are blank-padded, empty text and bytes become NULL.
pub(crate) fn check_value(value: Value, data_type: &OracleType) -> Result<Value, String> {
    use OracleType as T;
    match (value, data_type) {
        (Value::Null, _) => Ok(Value::Null),
        (Value::Number(number), T::Number { precision, scale }) => {
            if let Some(scale) = *scale
                && !number.fits(precision.unwrap_or(MAX_NUMBER_PRECISION), scale)
            {
                return Err(format!(
                    "{number} does not fit {data_type} (ORA-01438 or rounding)"
                ));
            }
            Ok(Value::Number(number))
        }
        (value @ Value::Number(_), T::Float { .. })
        | (value @ Value::BinaryFloat(_), T::BinaryFloat)
        | (value @ Value::BinaryDouble(_), T::BinaryDouble)
        | (value @ Value::IntervalYearToMonth { .. }, T::IntervalYearToMonth { .. })
        | (value @ Value::IntervalDayToSecond { .. }, T::IntervalDayToSecond { .. }) => Ok(value),
        (Value::Text(text), T::Char { length, semantics }) => {
            padded(text, *length, *semantics == LengthSemantics::Char)
        }
        (Value::Text(text), T::NChar { length }) => padded(text, *length, true),
        (Value::Text(text), T::Varchar2 { length, semantics }) => {
            bounded(text, *length, *semantics == LengthSemantics::Char)
        }
        (Value::Text(text), T::NVarchar2 { length }) => bounded(text, *length, true),
        (Value::Text(text), T::Long | T::RowId | T::URowId { .. } | T::Clob | T::NClob) => {
            Ok(if text.is_empty() {
                Value::Null
            } else {
                Value::Text(text)
            })
        }
        (Value::Bytes(bytes), T::Raw { length }) => {
            if bytes.len() > *length as usize {
                return Err(format!(
                    "{} bytes is longer than {data_type} (ORA-12899)",
                    bytes.len()
                ));
            }
            Ok(bytes_or_null(bytes))
        }
        (Value::Bytes(bytes), T::LongRaw | T::Blob) => Ok(bytes_or_null(bytes)),
        (Value::Text(text), T::Json) => Ok(if text.is_empty() {
            Value::Null
        } else {
            Value::Text(text)
        }),
        (value @ Value::Boolean(_), T::Boolean)
        | (value @ Value::Unsupported, T::Unsupported { .. }) => Ok(value),
        (Value::Date(local), T::Date) => {
            if local.subsec_nanosecond() != 0 {
                return Err("a DATE has no fraction and no offset".to_owned());
            }
            Ok(Value::Date(local))
        }
        (
            Value::Timestamp(local),
            T::Timestamp {
                fractional_precision,
            },
        ) => {
            fraction_fits(local, *fractional_precision)?;
            Ok(Value::Timestamp(local))
        }
        (
            Value::TimestampTz { local, offset },
            T::TimestampWithTimeZone {
                fractional_precision,
            },
        ) => {
            fraction_fits(local, *fractional_precision)?;
            Ok(Value::TimestampTz { local, offset })
        }
        (
            Value::TimestampLtz(instant),
            T::TimestampWithLocalTimeZone {
                fractional_precision,
            },
        ) => {
            fraction_fits(
                instant.to_zoned(jiff::tz::TimeZone::UTC).datetime(),
                *fractional_precision,
            )?;
            Ok(Value::TimestampLtz(instant))
        }
        (value, _) => Err(format!("{value:?} is not a value of {data_type}")),
    }
}

fn string(json: &Json) -> Result<&str, String> {
    json.as_str()
        .ok_or_else(|| format!("expected a string, found {json}"))
}

/// Scenario strings are moved into the value, not copied.
fn owned(json: Json) -> Result<String, String> {
    match json {
        Json::String(text) => Ok(text),
        other => Err(format!("expected a string, found {other}")),
    }
}

fn number(json: &Json) -> Result<OracleNumber, String> {
    let parse = |text: &str| OracleNumber::parse(text).map_err(|e| format!("{text:?} is {e}"));
    match json {
        // Integers are the common case: no intermediate string.
        Json::Number(n) => match n.as_i64() {
            Some(integer) => parse(integer_text(integer, &mut [0u8; 20])),
            None => parse(&n.to_string()),
        },
        Json::String(text) => parse(text),
        other => Err(format!(
            "expected a number or decimal string, found {other}"
        )),
    }
}

/// Decimal text of `value` written into `buffer`.
fn integer_text(value: i64, buffer: &mut [u8; 20]) -> &str {
    let mut at = buffer.len();
    let mut rest = value.unsigned_abs();
    loop {
        at -= 1;
        buffer[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if value < 0 {
        at -= 1;
        buffer[at] = b'-';
    }
    std::str::from_utf8(&buffer[at..]).unwrap_or("0")
}

fn float(json: &Json) -> Result<f64, String> {
    match json {
        Json::Number(n) => n.as_f64().ok_or_else(|| format!("{n} is not a float")),
        Json::String(s) => match s.as_str() {
            "Inf" | "Infinity" => Ok(f64::INFINITY),
            "-Inf" | "-Infinity" => Ok(f64::NEG_INFINITY),
            "NaN" | "Nan" => Ok(f64::NAN),
            other => other
                .parse()
                .map_err(|_| format!("{other:?} is not a float")),
        },
        other => Err(format!("expected a number, found {other}")),
    }
}

fn hex(json: &Json) -> Result<Vec<u8>, String> {
    binary::decode_hex(string(json)?).map_err(|e| e.to_string())
}

fn bytes_or_null(bytes: Vec<u8>) -> Value {
    if bytes.is_empty() {
        Value::Null
    } else {
        Value::Bytes(bytes)
    }
}

/// The length of `text` as the column counts it.
fn length(text: &str, in_chars: bool) -> usize {
    if in_chars {
        text.chars().count()
    } else {
        text.len()
    }
}

fn bounded(text: String, max: u32, in_chars: bool) -> Result<Value, String> {
    if text.is_empty() {
        return Ok(Value::Null);
    }
    let length = length(&text, in_chars);
    if length > max as usize {
        return Err(format!(
            "{length} {} is longer than the column's {max} (ORA-12899)",
            if in_chars { "characters" } else { "bytes" }
        ));
    }
    Ok(Value::Text(text))
}

/// CHAR and NCHAR values are stored blank-padded to the declared length.
fn padded(text: String, max: u32, in_chars: bool) -> Result<Value, String> {
    match bounded(text, max, in_chars)? {
        Value::Text(mut text) => {
            let missing = (max as usize).saturating_sub(length(&text, in_chars));
            text.extend(std::iter::repeat_n(' ', missing));
            Ok(Value::Text(text))
        }
        other => Ok(other),
    }
}

/// ISO 8601 local date-time (`T` or a space between date and time, or a date alone), with an
/// optional `Z` / `±HH:MM` offset.
fn date_time(json: &Json) -> Result<(civil::DateTime, Option<Offset>), String> {
    let text = string(json)?.trim();
    let (local_text, offset) = split_offset(text)?;
    let local = if local_text.len() == 10 {
        local_text
            .parse::<civil::Date>()
            .map(|date| date.to_datetime(civil::Time::midnight()))
    } else if local_text.as_bytes().get(10) == Some(&b' ') {
        local_text.replacen(' ', "T", 1).parse::<civil::DateTime>()
    } else {
        local_text.parse::<civil::DateTime>()
    }
    .map_err(|e| format!("{text:?} is not an ISO 8601 date-time: {e}"))?;
    Ok((local, offset))
}

fn split_offset(text: &str) -> Result<(&str, Option<Offset>), String> {
    if let Some(local) = text.strip_suffix('Z') {
        return Ok((local, Some(Offset::UTC)));
    }
    let bytes = text.as_bytes();
    if bytes.len() > 16
        && matches!(bytes[bytes.len() - 6], b'+' | b'-')
        && bytes[bytes.len() - 3] == b':'
    {
        let (local, offset_text) = text.split_at(text.len() - 6);
        let hours: i32 = offset_text[1..3]
            .parse()
            .map_err(|_| format!("bad offset {offset_text:?}"))?;
        let minutes: i32 = offset_text[4..6]
            .parse()
            .map_err(|_| format!("bad offset {offset_text:?}"))?;
        let seconds = (hours * 3600 + minutes * 60)
            * if bytes[bytes.len() - 6] == b'-' {
                -1
            } else {
                1
            };
        let offset = Offset::from_seconds(seconds).map_err(|e| e.to_string())?;
        return Ok((local.trim_end(), Some(offset)));
    }
    Ok((text, None))
}

fn fraction_fits(local: civil::DateTime, precision: u8) -> Result<(), String> {
    let unit = 10i32.pow(9 - u32::from(precision.min(9)));
    if local.subsec_nanosecond() % unit != 0 {
        return Err(format!(
            "the fraction has more than the column's {precision} digits"
        ));
    }
    Ok(())
}
