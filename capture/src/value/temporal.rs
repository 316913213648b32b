//! Dates, timestamps and intervals: reading LogMiner's literals and the arithmetic the encoders
//! need (epoch counts, ISO 8601 text), exact to the nanosecond.
//!
//! | Oracle type | SQL_REDO | [`super::Value`] |
//! |---|---|---|
//! | DATE | `TO_DATE('2024-01-02 03:04:05', 'YYYY-MM-DD HH24:MI:SS')` | `Date(civil::DateTime)`, whole seconds |
//! | TIMESTAMP(n) | `TO_TIMESTAMP('2024-01-02 03:04:05.123000000')` | `Timestamp(civil::DateTime)` |
//! | TIMESTAMP(n) WITH TIME ZONE | `TO_TIMESTAMP_TZ('2024-01-02 03:04:05.1 +01:00')` | `TimestampTz { local, offset_seconds }` |
//! | TIMESTAMP(n) WITH LOCAL TIME ZONE | `TO_TIMESTAMP(..)` in the session zone (UTC) or `TO_TIMESTAMP_TZ(..)` | `TimestampLtz(jiff::Timestamp)` |
//! | INTERVAL YEAR TO MONTH | `TO_YMINTERVAL('+05-00')` | `IntervalYearToMonth { months }` |
//! | INTERVAL DAY TO SECOND | `TO_DSINTERVAL('+02 03:04:05.123456')` | `IntervalDayToSecond { nanoseconds }` |
//!
//! A date-time without an offset is a wall-clock reading (Oracle's DATE and TIMESTAMP carry no
//! zone); encoders that need an epoch count read it as UTC, as Debezium does. Values outside
//! years 1..=9999 are refused: Oracle's BC dates have no ISO 8601 form the consumers agree on.

use jiff::civil;
use jiff::tz::Offset;

use super::nls::{DateTimeFields, DateTimeFormat, FormatError, LiteralError};

/// A datetime or interval literal that is not valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemporalError {
    #[error("unsupported format: {0}")]
    Format(#[from] FormatError),
    #[error("does not match its format: {0}")]
    Literal(#[from] LiteralError),
    #[error("{0} is missing")]
    MissingField(&'static str),
    #[error("not a valid date-time: {0}")]
    OutOfRange(String),
    #[error("a numeric time zone offset is required")]
    MissingOffset,
    #[error("not an interval literal")]
    NotAnInterval,
}

/// Reads `literal` with `format` into a civil date-time and, when the format has one, an offset.
pub fn read_date_time(
    literal: &str,
    format: &DateTimeFormat,
) -> Result<(civil::DateTime, Option<Offset>), TemporalError> {
    let fields = format.read(literal)?;
    let date_time = civil_from_fields(&fields)?;
    let offset = fields
        .offset_seconds
        .map(|seconds| {
            Offset::from_seconds(seconds).map_err(|e| TemporalError::OutOfRange(e.to_string()))
        })
        .transpose()?;
    Ok((date_time, offset))
}

fn civil_from_fields(fields: &DateTimeFields) -> Result<civil::DateTime, TemporalError> {
    let year = fields.year.ok_or(TemporalError::MissingField("the year"))?;
    let month = fields
        .month
        .ok_or(TemporalError::MissingField("the month"))?;
    let day = fields.day.ok_or(TemporalError::MissingField("the day"))?;
    let mut hour = fields.hour.unwrap_or(0);
    if fields.hour_is_12h {
        if !(1..=12).contains(&hour) {
            return Err(TemporalError::OutOfRange(format!(
                "hour {hour} on a 12-hour clock"
            )));
        }
        hour %= 12;
        if fields.pm == Some(true) {
            hour += 12;
        }
    }
    // Oracle's DATE range is 4712 BC to 9999 AD, with no year 0; civil years are astronomical
    // (ISO 8601), where 1 BC is year 0 and 44 BC is -43.
    let astronomical = match year {
        1..=9999 => year,
        -4712..=-1 => year + 1,
        _ => return Err(TemporalError::OutOfRange(format!("year {year}"))),
    };
    civil::DateTime::new(
        astronomical as i16,
        month as i8,
        day as i8,
        hour as i8,
        fields.minute.unwrap_or(0) as i8,
        fields.second.unwrap_or(0) as i8,
        fields.nanosecond as i32,
    )
    .map_err(|e| TemporalError::OutOfRange(e.to_string()))
}

/// Nanoseconds since 1970-01-01T00:00:00Z of a wall-clock reading at `offset`.
/// Every civil date-time has one (unlike a `jiff::Timestamp`), so this cannot fail.
pub fn epoch_nanoseconds(date_time: civil::DateTime, offset: Offset) -> i128 {
    // Civil arithmetic, not a `jiff::Timestamp`: a Timestamp ends a day before 9999-12-31
    // 23:59:59 (jiff keeps room for offsets), and Oracle's largest DATE is a common "end of
    // time" value that must encode.
    let since_epoch = date_time.duration_since(civil::DateTime::constant(1970, 1, 1, 0, 0, 0, 0));
    since_epoch.as_nanos() - i128::from(offset.seconds()) * 1_000_000_000
}

/// The UTC instant of a wall-clock reading at `offset`.
pub fn instant(
    date_time: civil::DateTime,
    offset: Offset,
) -> Result<jiff::Timestamp, TemporalError> {
    offset
        .to_timestamp(date_time)
        .map_err(|e| TemporalError::OutOfRange(e.to_string()))
}

/// How many fraction digits to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fraction {
    /// None when zero, else the fewest digits that keep the value (`.5`, `.478`, `.000000001`).
    Shortest,
    /// Exactly this many digits (0 writes no `.`), as a column's fractional precision.
    Digits(u8),
}

/// Appends `2024-01-02T03:04:05[.fraction]` (years 1..=9999, see the module docs).
pub fn write_iso_local(out: &mut String, date_time: civil::DateTime, fraction: Fraction) {
    let year = u32::from(date_time.year().unsigned_abs());
    push_two_digits(out, year / 100);
    push_two_digits(out, year % 100);
    out.push('-');
    push_two_digits(out, u32::from(date_time.month().unsigned_abs()));
    out.push('-');
    push_two_digits(out, u32::from(date_time.day().unsigned_abs()));
    out.push('T');
    push_two_digits(out, u32::from(date_time.hour().unsigned_abs()));
    out.push(':');
    push_two_digits(out, u32::from(date_time.minute().unsigned_abs()));
    out.push(':');
    push_two_digits(out, u32::from(date_time.second().unsigned_abs()));
    write_fraction(out, date_time.subsec_nanosecond().unsigned_abs(), fraction);
}

/// Appends `.ddd` for `nanoseconds` (< 1e9) as `fraction` says.
pub fn write_fraction(out: &mut String, nanoseconds: u32, fraction: Fraction) {
    let mut digits = [b'0'; 9];
    let mut rest = nanoseconds.min(999_999_999);
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    let shown = match fraction {
        Fraction::Shortest => 9 - digits.iter().rev().take_while(|&&d| d == b'0').count(),
        Fraction::Digits(n) => usize::from(n.min(9)),
    };
    if shown > 0 {
        out.push('.');
        for &d in &digits[..shown] {
            out.push(char::from(d));
        }
    }
}

/// Appends `value` (< 100) as two digits.
fn push_two_digits(out: &mut String, value: u32) {
    out.push(char::from(b'0' + (value / 10 % 10) as u8));
    out.push(char::from(b'0' + (value % 10) as u8));
}

/// Appends an offset as `+01:00` / `-05:30`, or `Z` for UTC when `utc_as_z`.
pub fn write_offset(out: &mut String, offset: Offset, utc_as_z: bool) {
    let seconds = offset.seconds();
    if seconds == 0 && utc_as_z {
        out.push('Z');
        return;
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let magnitude = seconds.unsigned_abs();
    out.push(sign);
    out.push_str(&format!(
        "{:02}:{:02}",
        magnitude / 3600,
        magnitude / 60 % 60
    ));
}

/// Reads `TO_YMINTERVAL` text, `[+|-]Y-M` (`+05-00`, `-03-06`), as a number of months.
pub fn read_year_to_month(text: &str) -> Result<i64, TemporalError> {
    let (negative, body) = split_sign(text.trim());
    let (years, months) = body.split_once('-').ok_or(TemporalError::NotAnInterval)?;
    let years = small_number(years, 9)?;
    let months = small_number(months, 2)?;
    if months > 11 {
        return Err(TemporalError::OutOfRange(format!("{months} months")));
    }
    let total = i64::try_from(years * 12 + months).map_err(|_| TemporalError::NotAnInterval)?;
    Ok(if negative { -total } else { total })
}

/// Reads `TO_DSINTERVAL` text, `[+|-]D HH:MI:SS[.f]` (`+02 03:04:05.123456`), as nanoseconds.
pub fn read_day_to_second(text: &str) -> Result<i128, TemporalError> {
    let (negative, body) = split_sign(text.trim());
    let (days, clock) = body.split_once(' ').ok_or(TemporalError::NotAnInterval)?;
    let days = small_number(days, 9)?;
    let mut parts = clock.splitn(3, ':');
    let hours = small_number(parts.next().unwrap_or(""), 2)?;
    let minutes = small_number(parts.next().unwrap_or(""), 2)?;
    let seconds_text = parts.next().ok_or(TemporalError::NotAnInterval)?;
    let (seconds, fraction) = seconds_text.split_once('.').unwrap_or((seconds_text, ""));
    let seconds = small_number(seconds, 2)?;
    if hours > 23 || minutes > 59 || seconds > 59 {
        return Err(TemporalError::OutOfRange(clock.to_owned()));
    }
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TemporalError::NotAnInterval);
    }
    let mut nanos: u64 = 0;
    for b in fraction.bytes() {
        nanos = nanos * 10 + u64::from(b - b'0');
    }
    for _ in fraction.len()..9 {
        nanos *= 10;
    }
    let total = ((i128::from(days) * 24 + i128::from(hours)) * 60 + i128::from(minutes)) * 60
        + i128::from(seconds);
    let total = total * 1_000_000_000 + i128::from(nanos);
    Ok(if negative { -total } else { total })
}

fn split_sign(text: &str) -> (bool, &str) {
    if let Some(rest) = text.strip_prefix('-') {
        (true, rest)
    } else {
        (false, text.strip_prefix('+').unwrap_or(text))
    }
}

fn small_number(text: &str, max_digits: usize) -> Result<u64, TemporalError> {
    if text.is_empty() || text.len() > max_digits || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TemporalError::NotAnInterval);
    }
    text.parse().map_err(|_| TemporalError::NotAnInterval)
}

/// Splits a year-to-month interval into signed (years, months), both with the interval's sign.
pub fn year_month_parts(months: i64) -> (i64, i64) {
    (months / 12, months % 12)
}

/// Splits a day-to-second interval into signed (days, hours, minutes, seconds, nanoseconds).
pub fn day_second_parts(nanoseconds: i128) -> (i128, i128, i128, i128, i128) {
    let seconds = nanoseconds / 1_000_000_000;
    (
        seconds / 86_400,
        seconds / 3600 % 24,
        seconds / 60 % 60,
        seconds % 60,
        nanoseconds % 1_000_000_000,
    )
}

/// Appends an ISO 8601 duration with every component written and carrying the sign
/// (`P1Y2M0DT0H0M0S`, `P0Y0M-2DT-3H-4M-5.5S`), the form of Debezium's `io.debezium.time.Interval`.
pub fn write_iso_duration(out: &mut String, months: i64, nanoseconds: i128) {
    use std::fmt::Write;
    let (years, months) = year_month_parts(months);
    let (days, hours, minutes, seconds, nanos) = day_second_parts(nanoseconds);
    let _ = write!(out, "P{years}Y{months}M{days}DT{hours}H{minutes}M");
    if seconds == 0 && nanos < 0 {
        out.push('-');
    }
    let _ = write!(out, "{seconds}");
    write_fraction(
        out,
        u32::try_from(nanos.unsigned_abs()).unwrap_or(0),
        Fraction::Shortest,
    );
    out.push('S');
}

#[cfg(test)]
mod tests {
    use super::super::nls::{DATE_FORMAT, TIMESTAMP_FORMAT, TIMESTAMP_TZ_FORMAT};
    use super::*;

    #[test]
    fn reads_and_writes_date_times() {
        let (dt, offset) = read_date_time("2024-01-02 03:04:05", &DATE_FORMAT).unwrap();
        assert_eq!(offset, None);
        let mut s = String::new();
        write_iso_local(&mut s, dt, Fraction::Shortest);
        assert_eq!(s, "2024-01-02T03:04:05");
        let (dt, _) = read_date_time("2021-09-14 07:36:46.478", &TIMESTAMP_FORMAT).unwrap();
        let mut s = String::new();
        write_iso_local(&mut s, dt, Fraction::Digits(6));
        assert_eq!(s, "2021-09-14T07:36:46.478000");
        let (dt, offset) =
            read_date_time("2024-02-14 10:58:02.202590 +01:00", &TIMESTAMP_TZ_FORMAT).unwrap();
        assert_eq!(offset, Some(Offset::from_seconds(3600).unwrap()));
        assert_eq!(
            epoch_nanoseconds(dt, offset.unwrap()),
            1_707_904_682_202_590_000
        );
    }

    /// The whole range of Oracle's DATE encodes, its last second included.
    #[test]
    fn epoch_counts_cover_oracles_date_range() {
        let (last, _) = read_date_time("9999-12-31 23:59:59", &DATE_FORMAT).unwrap();
        assert_eq!(
            epoch_nanoseconds(last, Offset::UTC),
            253_402_300_799_000_000_000
        );
        let (first, _) = read_date_time("0001-01-01 00:00:00", &DATE_FORMAT).unwrap();
        assert_eq!(
            epoch_nanoseconds(first, Offset::UTC),
            -62_135_596_800_000_000_000
        );
        let (epoch, _) = read_date_time("1970-01-01 01:00:00", &DATE_FORMAT).unwrap();
        assert_eq!(
            epoch_nanoseconds(epoch, Offset::from_seconds(3600).unwrap()),
            0
        );
    }

    #[test]
    fn refuses_impossible_dates() {
        for bad in [
            "2023-02-29 00:00:00",
            "2024-13-01 00:00:00",
            "2024-01-01 24:00:00",
        ] {
            assert!(
                matches!(
                    read_date_time(bad, &DATE_FORMAT),
                    Err(TemporalError::OutOfRange(_))
                ),
                "{bad}"
            );
        }
        assert!(read_date_time("0000-01-01 00:00:00", &DATE_FORMAT).is_err());
    }

    #[test]
    fn intervals() {
        assert_eq!(read_year_to_month("+05-00").unwrap(), 60);
        assert_eq!(read_year_to_month("-03-06").unwrap(), -42);
        assert!(read_year_to_month("+05-12").is_err());
        assert!(read_year_to_month("five").is_err());
        assert_eq!(
            read_day_to_second("+02 03:04:05.123456").unwrap(),
            ((2 * 24 + 3) * 3600 + 4 * 60 + 5) as i128 * 1_000_000_000 + 123_456_000
        );
        assert_eq!(
            read_day_to_second("-001 02:03:04.56").unwrap(),
            -((26 * 3600 + 3 * 60 + 4) as i128 * 1_000_000_000 + 560_000_000)
        );
        assert!(read_day_to_second("+02 25:00:00").is_err());
        let mut s = String::new();
        write_iso_duration(&mut s, -42, 0);
        assert_eq!(s, "P-3Y-6M0DT0H0M0S");
        let mut s = String::new();
        write_iso_duration(&mut s, 0, read_day_to_second("-00 00:00:00.5").unwrap());
        assert_eq!(s, "P0Y0M0DT0H0M-0.5S");
    }
}
