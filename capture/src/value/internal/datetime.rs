//! DATE, TIMESTAMP (with time zone, with local time zone) and INTERVAL in Oracle's internal
//! formats.
//!
//! From the OCI Programmer's Guide (Data Types, "DATE" and "Oracle ANSI DATE, TIMESTAMP, and
//! INTERVAL Data Types"), in our words:
//! - DATE is 7 bytes: century and year of the century each plus 100, month, day, then hour,
//!   minute and second each plus 1. A BC year stores 100 minus each (4712 BC is `53, 88`).
//! - TIMESTAMP adds the nanoseconds as a 4-byte big-endian integer; a stored value with no
//!   fraction keeps only the 7 DATE bytes.
//! - TIMESTAMP WITH TIME ZONE is 13 bytes: the date-time in UTC as a TIMESTAMP with its 4
//!   fraction bytes, then the offset's hours plus 20 and minutes plus 60
//!   (`1999-10-29 21:00:00 -07:00` is `119,199,10,30,5,1,1,0,0,0,0,13,60`, as Oracle's DUMP
//!   shows it: 13 bytes although the fraction is zero). A first zone byte with the high bit set
//!   starts a time zone region id instead. OpenLogReplicator (`Builder::processValue`,
//!   TIMESTAMP_WITH_TZ) also admits 9 bytes but still reads the zone at bytes 12 and 13; with
//!   no documented 9-byte layout, such a value is refused here.
//! - TIMESTAMP WITH LOCAL TIME ZONE is stored as a TIMESTAMP, the reading in the database time
//!   zone.
//! - INTERVAL YEAR TO MONTH is 5 bytes: the years as a 4-byte big-endian integer plus 2³¹, then
//!   the months plus 60. INTERVAL DAY TO SECOND is 11 bytes: the days plus 2³¹, hours, minutes
//!   and seconds each plus 60, and the nanoseconds plus 2³¹. Every field carries the
//!   interval's sign (OpenLogReplicator's interval readers take a negative field for a negative
//!   interval, as we do).

use jiff::SignedDuration;
use jiff::civil;
use jiff::tz::Offset;

use super::{InternalReason, excess_field};

/// The most nanoseconds in a fraction.
const MAX_NANOSECOND: u32 = 999_999_999;
/// Excess of the 4-byte interval fields.
const EXCESS_31: i64 = 1 << 31;
/// The largest interval field Oracle's 9-digit precisions allow.
const MAX_LEADING: i64 = 999_999_999;

/// A DATE: exactly 7 bytes.
pub(super) fn decode_date(bytes: &[u8]) -> Result<civil::DateTime, InternalReason> {
    if bytes.len() != 7 {
        return Err(InternalReason::Length {
            expected: "7",
            actual: bytes.len(),
        });
    }
    date_time(bytes, 0)
}

/// A TIMESTAMP (or a TIMESTAMP WITH LOCAL TIME ZONE's reading): 7 or 11 bytes.
pub(super) fn decode_timestamp(bytes: &[u8]) -> Result<civil::DateTime, InternalReason> {
    match bytes.len() {
        7 => date_time(bytes, 0),
        11 => date_time(&bytes[..7], fraction(&bytes[7..])?),
        actual => Err(InternalReason::Length {
            expected: "7 or 11",
            actual,
        }),
    }
}

/// A TIMESTAMP WITH TIME ZONE: the local reading and its offset.
pub(super) fn decode_timestamp_tz(
    bytes: &[u8],
) -> Result<(civil::DateTime, Offset), InternalReason> {
    let bytes: &[u8; 13] = bytes.try_into().map_err(|_| InternalReason::Length {
        expected: "13",
        actual: bytes.len(),
    })?;
    let utc = date_time(&bytes[..7], fraction(&bytes[7..11])?)?;
    let offset = zone_offset(bytes[11], bytes[12])?;
    let local = utc
        .checked_add(SignedDuration::from_secs(i64::from(offset.seconds())))
        .map_err(|e| InternalReason::DateTime(e.to_string()))?;
    Ok((local, offset))
}

/// The offset of the two zone bytes: hours + 20 and minutes + 60, both with the offset's sign,
/// within Oracle's −12:00..=+14:00.
fn zone_offset(hour_byte: u8, minute_byte: u8) -> Result<Offset, InternalReason> {
    if hour_byte & 0x80 != 0 {
        return Err(InternalReason::TimeZoneRegion(u16::from_be_bytes([
            hour_byte,
            minute_byte,
        ])));
    }
    let hours = excess_field("time zone hour", hour_byte, 20, 14)?;
    let minutes = excess_field("time zone minute", minute_byte, 60, 59)?;
    same_sign(&[hours, minutes])?;
    let minutes = hours * 60 + minutes;
    if !(-12 * 60..=14 * 60).contains(&minutes) {
        return Err(InternalReason::FieldValue {
            field: "time zone offset in minutes",
            value: minutes,
        });
    }
    Offset::from_seconds((minutes * 60) as i32).map_err(|e| InternalReason::DateTime(e.to_string()))
}

/// An INTERVAL YEAR TO MONTH, in months.
pub(super) fn decode_year_to_month(bytes: &[u8]) -> Result<i64, InternalReason> {
    let [y0, y1, y2, y3, month_byte] = *bytes else {
        return Err(InternalReason::Length {
            expected: "5",
            actual: bytes.len(),
        });
    };
    let years = excess_u32("years", [y0, y1, y2, y3])?;
    let months = excess_field("months", month_byte, 60, 11)?;
    same_sign(&[years, months])?;
    Ok(years * 12 + months)
}

/// An INTERVAL DAY TO SECOND, in nanoseconds.
pub(super) fn decode_day_to_second(bytes: &[u8]) -> Result<i128, InternalReason> {
    let [d0, d1, d2, d3, hour, minute, second, f0, f1, f2, f3] = *bytes else {
        return Err(InternalReason::Length {
            expected: "11",
            actual: bytes.len(),
        });
    };
    let days = excess_u32("days", [d0, d1, d2, d3])?;
    let hours = excess_field("hours", hour, 60, 23)?;
    let minutes = excess_field("minutes", minute, 60, 59)?;
    let seconds = excess_field("seconds", second, 60, 59)?;
    let nanoseconds = excess_u32("nanoseconds", [f0, f1, f2, f3])?;
    same_sign(&[days, hours, minutes, seconds, nanoseconds])?;
    let seconds = ((i128::from(days) * 24 + i128::from(hours)) * 60 + i128::from(minutes)) * 60
        + i128::from(seconds);
    Ok(seconds * 1_000_000_000 + i128::from(nanoseconds))
}

/// A 4-byte big-endian field stored plus 2³¹, within ±999,999,999.
fn excess_u32(field: &'static str, bytes: [u8; 4]) -> Result<i64, InternalReason> {
    let value = i64::from(u32::from_be_bytes(bytes)) - EXCESS_31;
    if value.abs() > MAX_LEADING {
        return Err(InternalReason::FieldValue { field, value });
    }
    Ok(value)
}

/// Refuses fields of both signs: every field of a stored interval or offset has its sign.
fn same_sign(fields: &[i64]) -> Result<(), InternalReason> {
    let negative = fields.iter().any(|&f| f < 0);
    let positive = fields.iter().any(|&f| f > 0);
    if negative && positive {
        return Err(InternalReason::MixedSigns);
    }
    Ok(())
}

/// The nanoseconds of a 4-byte fraction.
fn fraction(bytes: &[u8]) -> Result<u32, InternalReason> {
    let mut value: u32 = 0;
    for &b in bytes {
        value = value << 8 | u32::from(b);
    }
    if value > MAX_NANOSECOND {
        return Err(InternalReason::FieldValue {
            field: "nanoseconds",
            value: i64::from(value),
        });
    }
    Ok(value)
}

/// The date-time of DATE's 7 bytes, with `nanosecond`.
fn date_time(bytes: &[u8], nanosecond: u32) -> Result<civil::DateTime, InternalReason> {
    let &[century, year_byte, month, day, hour, minute, second] = bytes else {
        return Err(InternalReason::Length {
            expected: "7",
            actual: bytes.len(),
        });
    };
    // AD: both bytes are excess 100. BC: both are 100 minus the value, so neither exceeds 100.
    let year: i32 = if century >= 100 && year_byte >= 100 {
        let (c, y) = (i32::from(century) - 100, i32::from(year_byte) - 100);
        if y > 99 {
            return Err(InternalReason::Field {
                field: "year",
                byte: year_byte,
            });
        }
        c * 100 + y
    } else if century <= 100 && year_byte <= 100 {
        -((100 - i32::from(century)) * 100 + (100 - i32::from(year_byte)))
    } else {
        return Err(InternalReason::Field {
            field: "year",
            byte: year_byte,
        });
    };
    // Oracle's years are 4712 BC to 9999 AD without a year 0; civil years are astronomical
    // (1 BC is year 0), as in `temporal`.
    let astronomical = match year {
        1..=9999 => year,
        -4712..=-1 => year + 1,
        _ => {
            return Err(InternalReason::FieldValue {
                field: "year",
                value: i64::from(year),
            });
        }
    };
    let month = stored("month", month, 1, 12)?;
    let day = stored("day", day, 1, 31)?;
    // The time fields are stored plus 1.
    let hour = stored("hour", hour, 1, 24)? - 1;
    let minute = stored("minute", minute, 1, 60)? - 1;
    let second = stored("second", second, 1, 60)? - 1;
    let date = civil::Date::new(astronomical as i16, month, day)
        .map_err(|e| InternalReason::DateTime(e.to_string()))?;
    let time = civil::Time::new(hour, minute, second, nanosecond as i32)
        .map_err(|e| InternalReason::DateTime(e.to_string()))?;
    Ok(date.to_datetime(time))
}

/// A field byte within `min..=max`.
fn stored(field: &'static str, byte: u8, min: u8, max: u8) -> Result<i8, InternalReason> {
    if !(min..=max).contains(&byte) {
        return Err(InternalReason::Field { field, byte });
    }
    Ok(byte as i8)
}
