//! The Oracle functions the client's statements call, as the SQL Language Reference 19c
//! ("Functions") defines them. A function the model does not know is ORA-00904, as Oracle
//! answers for a name that is neither a column nor a function.

use jiff::civil;

use super::datum::Datum;
use super::{Database, OraError};
use crate::value::binary::{decode_hex, encode_hex};

pub fn is_aggregate(name: &str) -> bool {
    matches!(name, "MIN" | "MAX" | "COUNT")
}

/// `MIN`, `MAX` and `COUNT` over a group's values; NULLs are ignored, and `MIN`/`MAX` of no
/// value is NULL.
pub fn aggregate(name: &str, values: Vec<Datum>) -> Result<Datum, OraError> {
    let present = values.into_iter().filter(|value| !value.is_null());
    match name {
        "COUNT" => Ok(Datum::number(present.count() as i128)),
        "MIN" | "MAX" => {
            let mut best: Option<Datum> = None;
            for value in present {
                let better = match &best {
                    None => true,
                    Some(current) => {
                        let order = value.compare(current)?.unwrap_or(std::cmp::Ordering::Equal);
                        if name == "MIN" {
                            order.is_lt()
                        } else {
                            order.is_gt()
                        }
                    }
                };
                if better {
                    best = Some(value);
                }
            }
            Ok(best.unwrap_or(Datum::Null))
        }
        _ => Err(OraError::invalid_identifier(name)),
    }
}

fn arity(name: &str, count: usize, range: std::ops::RangeInclusive<usize>) -> Result<(), OraError> {
    if range.contains(&count) {
        Ok(())
    } else {
        Err(OraError::new(
            909,
            &format!("invalid number of arguments to {name}"),
        ))
    }
}

pub fn scalar(
    name: &str,
    values: Vec<Datum>,
    database: &mut dyn Database,
) -> Result<Datum, OraError> {
    let count = values.len();
    let mut args = values.into_iter();
    let mut next = || args.next().unwrap_or(Datum::Null);
    match name {
        "NVL" => {
            arity(name, count, 2..=2)?;
            let (first, second) = (next(), next());
            Ok(if first.is_null() { second } else { first })
        }
        "TO_CHAR" => {
            arity(name, count, 1..=2)?;
            let (value, format) = (next(), next());
            to_char(&value, format.to_text().as_deref())
        }
        "TO_NUMBER" => {
            arity(name, count, 1..=1)?;
            Ok(next().to_number()?.map_or(Datum::Null, Datum::Number))
        }
        "RAWTOHEX" => {
            arity(name, count, 1..=1)?;
            Ok(match next() {
                Datum::Null => Datum::Null,
                Datum::Raw(bytes) => Datum::text(encode_hex(&bytes).to_ascii_uppercase()),
                // Character data is converted to RAW first, which takes hex digits.
                Datum::Text(text) => {
                    let bytes =
                        decode_hex(&text).map_err(|_| OraError::new(1465, "invalid hex number"))?;
                    Datum::text(encode_hex(&bytes).to_ascii_uppercase())
                }
                _ => {
                    return Err(OraError::new(
                        932,
                        "inconsistent datatypes: expected BINARY",
                    ));
                }
            })
        }
        "HEXTORAW" => {
            arity(name, count, 1..=1)?;
            Ok(match next().to_text() {
                None => Datum::Null,
                Some(text) => Datum::Raw(
                    decode_hex(&text).map_err(|_| OraError::new(1465, "invalid hex number"))?,
                ),
            })
        }
        "UPPER" => {
            arity(name, count, 1..=1)?;
            Ok(next()
                .to_text()
                .map_or(Datum::Null, |t| Datum::text(t.to_uppercase())))
        }
        "SYS_CONTEXT" => {
            arity(name, count, 2..=3)?;
            let (namespace, parameter) = (next(), next());
            let namespace = namespace.to_text().unwrap_or_default().to_uppercase();
            let parameter = parameter.to_text().unwrap_or_default().to_uppercase();
            if namespace != "USERENV" {
                return Ok(Datum::Null);
            }
            database.sys_context(&parameter)
        }
        "SCN_TO_TIMESTAMP" => {
            arity(name, count, 1..=1)?;
            match next().to_u64()? {
                None => Ok(Datum::Null),
                Some(scn) => database.scn_to_timestamp(scn).map(Datum::Timestamp),
            }
        }
        "ROWIDTOCHAR" | "CHARTOROWID" => {
            arity(name, count, 1..=1)?;
            let value = next();
            match value.to_text() {
                None => Ok(Datum::Null),
                Some(text) if is_row_id(&text) && name == "CHARTOROWID" => Ok(Datum::RowId(text)),
                Some(text) if is_row_id(&text) => Ok(Datum::text(text)),
                Some(_) => Err(OraError::new(1410, "invalid ROWID")),
            }
        }
        "DBMS_ROWID.ROWID_CREATE" => {
            arity(name, count, 5..=5)?;
            let mut parts = [0u64; 5];
            for part in &mut parts {
                match next().to_u64()? {
                    Some(value) => *part = value,
                    None => return Ok(Datum::Null),
                }
            }
            row_id_create(parts).map(Datum::RowId)
        }
        _ => Err(OraError::invalid_identifier(name)),
    }
}

/// `DBMS_ROWID.ROWID_CREATE(rowid_type, object_number, relative_fno, block_number,
/// row_number)` (PL/SQL Packages and Types Reference, DBMS_ROWID): type 1 (`ROWID_EXTENDED`)
/// is `OOOOOOFFFBBBBBBRRR`, the data object, relative file, block and row in base 64 (6, 3, 6
/// and 3 digits). The model refuses the restricted type 0, which a table's rows never have,
/// and parts too large for their digits (ORA-01410).
fn row_id_create([kind, object, file, block, row]: [u64; 5]) -> Result<String, OraError> {
    if kind != 1 {
        return Err(OraError::invalid_sql(
            "restricted ROWIDs (ROWID_CREATE type 0)",
        ));
    }
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::with_capacity(18);
    for (value, digits) in [(object, 6u32), (file, 3), (block, 6), (row, 3)] {
        if value >> (6 * digits) != 0 {
            return Err(OraError::new(1410, "invalid ROWID"));
        }
        for position in (0..digits).rev() {
            text.push(char::from(
                ALPHABET[((value >> (6 * position)) & 63) as usize],
            ));
        }
    }
    Ok(text)
}

/// An extended ROWID as `ROWIDTOCHAR` writes it: 18 characters of Oracle's base-64 alphabet
/// (Database Concepts, "Rowid Format": object, file, block and row, `OOOOOOFFFBBBBBBRRR`).
pub fn is_row_id(text: &str) -> bool {
    text.len() == 18
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// `TO_CHAR` of a number (`TM9`, `TM`, or no format: the shortest exact text) or of a date or
/// timestamp under a datetime format model (SQL Language Reference, "Format Models").
pub fn to_char(value: &Datum, format: Option<&str>) -> Result<Datum, OraError> {
    match value {
        Datum::Null => Ok(Datum::Null),
        Datum::Number(number) => match format.map(str::to_uppercase).as_deref() {
            None | Some("TM" | "TM9") => Ok(Datum::Number(number.clone())
                .to_text()
                .map_or(Datum::Null, Datum::text)),
            Some(other) => Err(OraError::new(
                1481,
                &format!("invalid number format model: {other}"),
            )),
        },
        Datum::Text(text) => Ok(Datum::text(text.clone())),
        Datum::Raw(_) | Datum::RowId(_) => Ok(value.to_text().map_or(Datum::Null, Datum::text)),
        Datum::Date(time) | Datum::Timestamp(time) => match format {
            None => Ok(value.to_text().map_or(Datum::Null, Datum::text)),
            Some(format) => {
                let precision = if matches!(value, Datum::Timestamp(_)) {
                    Precision::Fractional
                } else {
                    Precision::Seconds
                };
                format_datetime(*time, format, precision).map(Datum::text)
            }
        },
        Datum::TimestampTz(time, offset) => match format {
            None => Ok(value.to_text().map_or(Datum::Null, Datum::text)),
            Some(format) => {
                format_datetime(*time, format, Precision::WithOffset(*offset)).map(Datum::text)
            }
        },
    }
}

/// What a datetime value holds beyond seconds, which decides the format elements it accepts.
#[derive(Clone, Copy)]
enum Precision {
    /// `DATE`.
    Seconds,
    /// `TIMESTAMP`: fractional seconds.
    Fractional,
    /// `TIMESTAMP WITH TIME ZONE`: fractional seconds and an offset from UTC.
    WithOffset(jiff::tz::Offset),
}

/// Writes a datetime under a format model: `SYYYY`/`YYYY`, `MM`, `DD`, `HH24`, `MI`, `SS`,
/// `FF1`..`FF9` (timestamps only: ORA-01821 on a DATE), `TZH` and `TZM` (a value with an
/// offset only: ORA-01821 otherwise), punctuation and `"quoted text"`.
fn format_datetime(
    time: civil::DateTime,
    format: &str,
    precision: Precision,
) -> Result<String, OraError> {
    // Writing to a String cannot fail.
    use std::fmt::Write as _;
    let timestamp = !matches!(precision, Precision::Seconds);
    let unknown = || OraError::new(1821, "date format not recognized");
    let upper = format.to_uppercase();
    let mut rest = upper.as_str();
    let mut out = String::with_capacity(32);
    while let Some(first) = rest.chars().next() {
        let mut take = |element: &str| -> bool {
            if rest.starts_with(element) {
                rest = &rest[element.len()..];
                true
            } else {
                false
            }
        };
        if take("SYYYY") {
            // A space stands for the sign of a year AD (Format Models: "S prefixes BC dates
            // with a minus sign").
            let year = time.year();
            out.push(if year < 0 { '-' } else { ' ' });
            let _ = write!(out, "{:04}", year.unsigned_abs());
        } else if take("YYYY") {
            let _ = write!(out, "{:04}", time.year().unsigned_abs());
        } else if take("MM") {
            let _ = write!(out, "{:02}", time.month());
        } else if take("DD") {
            let _ = write!(out, "{:02}", time.day());
        } else if take("HH24") {
            let _ = write!(out, "{:02}", time.hour());
        } else if take("MI") {
            let _ = write!(out, "{:02}", time.minute());
        } else if take("SS") {
            let _ = write!(out, "{:02}", time.second());
        } else if rest.starts_with("TZH") || rest.starts_with("TZM") {
            let Precision::WithOffset(offset) = precision else {
                return Err(unknown());
            };
            // TZH is the signed hours (`+01`, `-05`), TZM the minutes of the same offset: Oracle
            // writes a sign on the hours even when they are zero (`+00`, `-00` for -00:30).
            let seconds = offset.seconds();
            let element = &rest[..3];
            rest = &rest[3..];
            if element == "TZH" {
                let sign = if seconds < 0 { '-' } else { '+' };
                out.push(sign);
                let _ = write!(out, "{:02}", seconds.unsigned_abs() / 3600);
            } else {
                let _ = write!(out, "{:02}", seconds.unsigned_abs() % 3600 / 60);
            }
        } else if rest.starts_with("FF") {
            if !timestamp {
                return Err(unknown());
            }
            let digits = rest[2..]
                .chars()
                .next()
                .and_then(|c| c.to_digit(10))
                .filter(|d| (1..=9).contains(d));
            rest = &rest[2 + usize::from(digits.is_some())..];
            let width = digits.unwrap_or(6) as usize;
            let nanos = format!("{:09}", time.subsec_nanosecond());
            out.push_str(&nanos[..width]);
        } else if first == '"' {
            let end = rest[1..].find('"').ok_or_else(unknown)?;
            out.push_str(
                &format[format.len() - rest.len() + 1..format.len() - rest.len() + 1 + end],
            );
            rest = &rest[end + 2..];
        } else if matches!(first, '-' | '/' | ',' | '.' | ';' | ':' | ' ') {
            out.push(first);
            rest = &rest[1..];
        } else {
            return Err(unknown());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_under_the_format_model() {
        let time = civil::date(2024, 1, 2).at(3, 4, 5, 123_456_789);
        assert_eq!(
            to_char(&Datum::Date(time), Some("YYYY-MM-DD HH24:MI:SS")).unwrap(),
            Datum::text("2024-01-02 03:04:05")
        );
        assert_eq!(
            to_char(&Datum::Timestamp(time), Some("SYYYY-MM-DD HH24:MI:SS.FF9")).unwrap(),
            Datum::text(" 2024-01-02 03:04:05.123456789")
        );
        assert_eq!(
            to_char(&Datum::Date(time), Some("YYYY-MM-DD HH24:MI:SS.FF3"))
                .unwrap_err()
                .code,
            1821
        );
        assert_eq!(
            to_char(&Datum::Date(time), Some("YYYY-MON-DD"))
                .unwrap_err()
                .code,
            1821
        );
    }

    #[test]
    fn an_offset_is_written_with_tzh_and_tzm_and_only_for_a_value_that_has_one() {
        let time = civil::date(2024, 3, 31).at(3, 0, 0, 0);
        let at =
            |seconds| Datum::TimestampTz(time, jiff::tz::Offset::from_seconds(seconds).unwrap());
        for (seconds, expected) in [
            (7_200, "+02:00"),
            (0, "+00:00"),
            (-19_800, "-05:30"),
            (-1_800, "-00:30"),
        ] {
            assert_eq!(
                to_char(&at(seconds), Some("TZH:TZM")).unwrap(),
                Datum::text(expected)
            );
        }
        assert_eq!(
            to_char(&at(3_600), Some("YYYY-MM-DD HH24:MI:SS.FF3 TZH:TZM")).unwrap(),
            Datum::text("2024-03-31 03:00:00.000 +01:00")
        );
        for plain in [Datum::Date(time), Datum::Timestamp(time)] {
            assert_eq!(to_char(&plain, Some("TZH:TZM")).unwrap_err().code, 1821);
        }
    }

    #[test]
    fn numbers_are_written_exactly_and_other_number_formats_are_refused() {
        let n = Datum::Number(super::super::datum::Number::parse("12.50").unwrap());
        assert_eq!(to_char(&n, Some("TM9")).unwrap(), Datum::text("12.5"));
        assert_eq!(to_char(&n, Some("999.99")).unwrap_err().code, 1481);
    }
}
