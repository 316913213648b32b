//! Encoders into Oracle's internal formats, written from the same documentation as the
//! decoders (see each decoder's module docs): the simulator writes rows LogMiner renders by
//! number with them, and the tests check that a value encoded here decodes to itself.

use jiff::civil;
use jiff::tz::Offset;

use super::text::windows_1252_byte;
use super::{CharacterSet, DatabaseFormats, NationalCharacterSet};
use crate::dictionary::OracleType;
use crate::value::{OracleNumber, Value};

/// The internal bytes of `value` for a column of `data_type`; `None` when the value has no
/// such form (a character the character set lacks, a type without an encoder).
pub(super) fn encode(
    data_type: &OracleType,
    value: &Value,
    formats: &DatabaseFormats,
) -> Option<Vec<u8>> {
    use OracleType as T;
    Some(match (data_type, value) {
        (_, Value::Null) => Vec::new(),
        (T::Number { .. } | T::Float { .. }, Value::Number(n)) => number(n),
        (T::BinaryFloat, Value::BinaryFloat(v)) => binary_float(*v).to_vec(),
        (T::BinaryDouble, Value::BinaryDouble(v)) => binary_double(*v).to_vec(),
        (T::Char { .. } | T::Varchar2 { .. }, Value::Text(t)) => text(t, formats.character_set)?,
        (T::NChar { .. } | T::NVarchar2 { .. }, Value::Text(t)) => {
            national_text(t, formats.national_character_set)
        }
        (T::Raw { .. }, Value::Bytes(b)) => b.clone(),
        (T::Date, Value::Date(d)) => date_time(*d)[..7].to_vec(),
        (T::Timestamp { .. }, Value::Timestamp(d)) => timestamp(*d),
        (T::TimestampWithTimeZone { .. }, Value::TimestampTz { local, offset }) => {
            timestamp_tz(*local, *offset)?
        }
        (T::TimestampWithLocalTimeZone { .. }, Value::TimestampLtz(instant)) => {
            timestamp(formats.database_time_zone.to_datetime(*instant))
        }
        (T::IntervalYearToMonth { .. }, Value::IntervalYearToMonth { months }) => {
            year_to_month(*months).to_vec()
        }
        (T::IntervalDayToSecond { .. }, Value::IntervalDayToSecond { nanoseconds }) => {
            day_to_second(*nanoseconds).to_vec()
        }
        (T::Boolean, Value::Boolean(b)) => vec![u8::from(*b)],
        _ => return None,
    })
}

/// NUMBER: group the decimal digits in pairs around the decimal point, drop zero pairs at
/// either end, store the exponent of the first pair (+193, or inverted for a negative number)
/// and each pair plus 1 (or 101 minus it, then 102 when fewer than 20 pairs).
pub(super) fn number(n: &OracleNumber) -> Vec<u8> {
    if n.is_zero() {
        return vec![0x80];
    }
    let mut digits: Vec<u8> = n.significant_digits().bytes().map(|b| b - b'0').collect();
    // Digits before the decimal point (negative when zeros follow the point first).
    let mut point = digits.len() as i32 - n.scale() as i32;
    if point.rem_euclid(2) == 1 {
        digits.insert(0, 0);
        point += 1;
    }
    if digits.len() % 2 == 1 {
        digits.push(0);
    }
    let mut pairs: Vec<u8> = digits.chunks(2).map(|p| p[0] * 10 + p[1]).collect();
    while pairs.last() == Some(&0) {
        pairs.pop();
    }
    // Leading zero pairs cannot occur: the significant digits start with a non-zero digit.
    let exponent = point / 2 - 1;
    let mut out = Vec::with_capacity(pairs.len() + 2);
    if n.is_negative() {
        out.push(!((193 + exponent) as u8));
        out.extend(pairs.iter().map(|d| 101 - d));
        if pairs.len() < 20 {
            out.push(102);
        }
    } else {
        out.push((193 + exponent) as u8);
        out.extend(pairs.iter().map(|d| d + 1));
    }
    out
}

pub(super) fn binary_float(v: f32) -> [u8; 4] {
    let bits = v.to_bits();
    let stored = if bits & 0x8000_0000 == 0 {
        bits | 0x8000_0000
    } else {
        !bits
    };
    stored.to_be_bytes()
}

pub(super) fn binary_double(v: f64) -> [u8; 8] {
    let bits = v.to_bits();
    let stored = if bits >> 63 == 0 {
        bits | 1 << 63
    } else {
        !bits
    };
    stored.to_be_bytes()
}

/// DATE's 7 bytes and the 4 fraction bytes.
pub(super) fn date_time(d: civil::DateTime) -> [u8; 11] {
    // Astronomical year 0 is 1 BC.
    let year = i32::from(d.year());
    let (century, year_of_century) = if year >= 1 {
        (100 + year / 100, 100 + year % 100)
    } else {
        let bc = 1 - year;
        (100 - bc / 100, 100 - bc % 100)
    };
    let mut out = [0u8; 11];
    out[0] = century as u8;
    out[1] = year_of_century as u8;
    out[2] = d.month() as u8;
    out[3] = d.day() as u8;
    out[4] = d.hour() as u8 + 1;
    out[5] = d.minute() as u8 + 1;
    out[6] = d.second() as u8 + 1;
    out[7..].copy_from_slice(&(d.subsec_nanosecond() as u32).to_be_bytes());
    out
}

/// TIMESTAMP: 7 bytes when the fraction is zero, else 11.
pub(super) fn timestamp(d: civil::DateTime) -> Vec<u8> {
    let bytes = date_time(d);
    if d.subsec_nanosecond() == 0 {
        bytes[..7].to_vec()
    } else {
        bytes.to_vec()
    }
}

/// TIMESTAMP WITH TIME ZONE: the UTC reading with its fraction, then the offset's hours + 20
/// and minutes + 60.
pub(super) fn timestamp_tz(local: civil::DateTime, offset: Offset) -> Option<Vec<u8>> {
    let utc = local
        .checked_sub(jiff::SignedDuration::from_secs(i64::from(offset.seconds())))
        .ok()
        .filter(|utc| (-4711..=9999).contains(&utc.year()))?;
    let minutes = offset.seconds() / 60;
    let mut out = date_time(utc).to_vec();
    out.push((20 + minutes / 60) as u8);
    out.push((60 + minutes % 60) as u8);
    Some(out)
}

/// Years + 2³¹ big-endian, months + 60; both with the interval's sign.
pub(super) fn year_to_month(months: i64) -> [u8; 5] {
    let years = ((months / 12) + (1 << 31)) as u32;
    let mut out = [0u8; 5];
    out[..4].copy_from_slice(&years.to_be_bytes());
    out[4] = (60 + months % 12) as u8;
    out
}

/// Days + 2³¹, hours, minutes, seconds + 60, nanoseconds + 2³¹.
pub(super) fn day_to_second(nanoseconds: i128) -> [u8; 11] {
    let seconds = nanoseconds / 1_000_000_000;
    let days = (seconds / 86_400 + (1 << 31)) as u32;
    let fraction = (nanoseconds % 1_000_000_000 + (1 << 31)) as u32;
    let mut out = [0u8; 11];
    out[..4].copy_from_slice(&days.to_be_bytes());
    out[4] = (60 + seconds / 3600 % 24) as u8;
    out[5] = (60 + seconds / 60 % 60) as u8;
    out[6] = (60 + seconds % 60) as u8;
    out[7..].copy_from_slice(&fraction.to_be_bytes());
    out
}

pub(super) fn text(t: &str, set: CharacterSet) -> Option<Vec<u8>> {
    match set {
        CharacterSet::Al32Utf8 => Some(t.as_bytes().to_vec()),
        CharacterSet::Utf8 => Some(cesu8(t)),
        CharacterSet::We8Iso8859P1 => t.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect(),
        CharacterSet::Us7Ascii => t.is_ascii().then(|| t.as_bytes().to_vec()),
        CharacterSet::We8MsWin1252 => t.chars().map(windows_1252_byte).collect(),
    }
}

pub(super) fn national_text(t: &str, set: NationalCharacterSet) -> Vec<u8> {
    match set {
        NationalCharacterSet::Al16Utf16 => t.encode_utf16().flat_map(u16::to_be_bytes).collect(),
        NationalCharacterSet::Utf8 => cesu8(t),
    }
}

/// Each UTF-16 code unit as a UTF-8 sequence of 1 to 3 bytes.
fn cesu8(t: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len());
    for unit in t.encode_utf16() {
        match unit {
            0..=0x7f => out.push(unit as u8),
            0x80..=0x7ff => {
                out.push(0xc0 | (unit >> 6) as u8);
                out.push(0x80 | (unit & 0x3f) as u8);
            }
            _ => {
                out.push(0xe0 | (unit >> 12) as u8);
                out.push(0x80 | (unit >> 6 & 0x3f) as u8);
                out.push(0x80 | (unit & 0x3f) as u8);
            }
        }
    }
    out
}
