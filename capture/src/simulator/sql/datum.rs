//! One value of the Oracle model, typed as Oracle types it, and the conversions Oracle applies
//! between types (SQL Language Reference 19c, "Data Type Comparison Rules" and "Implicit Data
//! Conversion").

use std::borrow::Cow;
use std::cmp::Ordering;

use jiff::civil;

use super::OraError;
use crate::value::binary::encode_hex;

/// A value: `NUMBER`, character data, `RAW`, `DATE` or `TIMESTAMP`. Oracle has no empty string:
/// a zero-length character value is NULL ([`Datum::text`] folds it).
#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    Null,
    /// A `NUMBER`, as canonical decimal text (no leading `+`, no trailing fraction zeros).
    Number(Number),
    /// `VARCHAR2`, `CHAR`, `NVARCHAR2`.
    Text(String),
    /// `RAW`.
    Raw(Vec<u8>),
    /// `DATE`: seconds precision.
    Date(civil::DateTime),
    /// `TIMESTAMP`: fractional seconds.
    Timestamp(civil::DateTime),
    /// `ROWID`: compared by the address it encodes, not by its text.
    RowId(String),
    /// `TIMESTAMP WITH TIME ZONE` with an offset (what `SYSTIMESTAMP` is): the local time and
    /// its offset from UTC.
    TimestampTz(civil::DateTime, jiff::tz::Offset),
}

impl Datum {
    /// Character data; the empty string is NULL, as in Oracle.
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        if text.is_empty() {
            Self::Null
        } else {
            Self::Text(text)
        }
    }

    pub fn number(value: impl Into<i128>) -> Self {
        Self::Number(Number::from_integer(value.into()))
    }

    /// An optional whole number: NULL for `None`.
    pub fn number_or_null<T: Into<i128>>(value: Option<T>) -> Self {
        value.map_or(Self::Null, Self::number)
    }

    pub fn text_or_null(value: Option<&str>) -> Self {
        value.map_or(Self::Null, Self::text)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// The value converted to character data as `TO_CHAR` without a format does it; dates use
    /// the session's fixed NLS format (`value::nls`): every session the client opens sets it.
    pub fn to_text(&self) -> Option<String> {
        self.text_of().map(Cow::into_owned)
    }

    /// [`Datum::to_text`], borrowed when the value is character data already.
    pub fn text_of(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Null => None,
            Self::Text(text) | Self::RowId(text) => Some(Cow::Borrowed(text)),
            other => {
                let mut text = String::new();
                other.push_text(&mut text);
                Some(Cow::Owned(text))
            }
        }
    }

    /// [`Datum::to_text`] of a value no longer needed: character data is moved, not copied.
    pub fn into_text(self) -> Option<String> {
        match self {
            Self::Text(text) | Self::RowId(text) => Some(text),
            other => other.to_text(),
        }
    }

    /// Appends [`Datum::to_text`] to `out` (nothing for NULL).
    pub fn push_text(&self, out: &mut String) {
        use std::fmt::Write as _;
        // Writing to a String cannot fail.
        let _ = match self {
            Self::Null => Ok(()),
            Self::Number(number) => write!(out, "{number}"),
            Self::Text(text) | Self::RowId(text) => {
                out.push_str(text);
                Ok(())
            }
            Self::Raw(bytes) => {
                out.push_str(&encode_hex(bytes).to_ascii_uppercase());
                Ok(())
            }
            Self::Date(time) => write!(out, "{}", time.strftime("%Y-%m-%d %H:%M:%S")),
            Self::Timestamp(time) => write!(out, "{}", time.strftime("%Y-%m-%d %H:%M:%S%.9f")),
            Self::TimestampTz(time, offset) => {
                let seconds = offset.seconds();
                write!(
                    out,
                    "{} {}{:02}:{:02}",
                    time.strftime("%Y-%m-%d %H:%M:%S%.9f"),
                    if seconds < 0 { '-' } else { '+' },
                    seconds.unsigned_abs() / 3600,
                    seconds.unsigned_abs() % 3600 / 60
                )
            }
        };
    }

    /// The value as a `NUMBER`: character data is converted (ORA-01722 when it is not one).
    pub fn to_number(&self) -> Result<Option<Number>, OraError> {
        match self {
            Self::Null => Ok(None),
            Self::Number(number) => Ok(Some(number.clone())),
            Self::Text(text) => Number::parse(text)
                .map(Some)
                .ok_or_else(|| OraError::new(1722, "invalid number")),
            Self::Raw(_)
            | Self::Date(_)
            | Self::Timestamp(_)
            | Self::TimestampTz(..)
            | Self::RowId(_) => Err(OraError::new(
                932,
                "inconsistent datatypes: expected NUMBER",
            )),
        }
    }

    /// The value as a whole number (a bind, a row limit, an SCN).
    pub fn to_u64(&self) -> Result<Option<u64>, OraError> {
        match self.to_number()? {
            None => Ok(None),
            Some(number) => number
                .to_i128()
                .and_then(|value| u64::try_from(value).ok())
                .map(Some)
                .ok_or_else(|| OraError::new(1722, "invalid number")),
        }
    }

    /// How Oracle compares two values: a number with character data converts the characters to
    /// a number; `None` when either side is NULL (the comparison is unknown).
    pub fn compare(&self, other: &Self) -> Result<Option<Ordering>, OraError> {
        use Datum as D;
        Ok(match (self, other) {
            (D::Null, _) | (_, D::Null) => None,
            (D::Number(a), D::Number(b)) => Some(a.cmp(b)),
            (D::Number(_), D::Text(_)) | (D::Text(_), D::Number(_)) => {
                let (Some(a), Some(b)) = (self.to_number()?, other.to_number()?) else {
                    return Ok(None);
                };
                Some(a.cmp(&b))
            }
            (D::Text(a), D::Text(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
            (D::Raw(a), D::Raw(b)) => Some(a.cmp(b)),
            (D::Date(a) | D::Timestamp(a), D::Date(b) | D::Timestamp(b)) => Some(a.cmp(b)),
            // Character data compared with a ROWID is converted to one.
            (D::RowId(a) | D::Text(a), D::RowId(b) | D::Text(b)) => {
                Some(row_id_digits(a)?.cmp(&row_id_digits(b)?))
            }
            // Values with an offset compare as instants (Oracle compares them in UTC).
            (D::TimestampTz(a, a_offset), D::TimestampTz(b, c_offset)) => {
                let utc = |time: &civil::DateTime, offset: &jiff::tz::Offset| {
                    offset.to_timestamp(*time).ok()
                };
                utc(a, a_offset)
                    .zip(utc(b, c_offset))
                    .map(|(a, b)| a.cmp(&b))
            }
            _ => {
                return Err(OraError::new(932, "inconsistent datatypes"));
            }
        })
    }

    /// The order of `ORDER BY`: NULLs are placed by the caller.
    pub fn sort_order(&self, other: &Self) -> Ordering {
        self.compare(other)
            .ok()
            .flatten()
            .unwrap_or(Ordering::Equal)
    }
}

/// The base-64 digits of an extended ROWID, in Oracle's alphabet (`A`-`Z`, `a`-`z`, `0`-`9`,
/// `+`, `/`: Database Concepts, "Rowid Format"), whose order is the order of the addresses;
/// ORA-01410 for text that is not one.
fn row_id_digits(text: &str) -> Result<Vec<u8>, OraError> {
    if text.len() != 18 {
        return Err(OraError::new(1410, "invalid ROWID"));
    }
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' => Ok(b - b'A'),
            b'a'..=b'z' => Ok(b - b'a' + 26),
            b'0'..=b'9' => Ok(b - b'0' + 52),
            b'+' => Ok(62),
            b'/' => Ok(63),
            _ => Err(OraError::new(1410, "invalid ROWID")),
        })
        .collect()
}

/// A `NUMBER`, exact. A whole number that fits 64 bits, which is what most values the views
/// hold are (SCNs, codes, counts, ids), is kept as one, so building and comparing them costs no
/// allocation; any other value as canonical decimal text (no leading `+`, no leading zeros, no
/// trailing fraction zeros). Each value has one form, so equal numbers are equal as values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Number(Repr);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    Integer(i64),
    /// Never a whole number that fits an `i64`.
    Decimal(Box<str>),
}

impl Number {
    pub fn from_integer(value: i128) -> Self {
        match i64::try_from(value) {
            Ok(value) => Self(Repr::Integer(value)),
            Err(_) => Self(Repr::Decimal(value.to_string().into_boxed_str())),
        }
    }

    /// Parses decimal text as `TO_NUMBER` does (blanks around it allowed, `.5`, `+3`, `1e3` no).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        if whole.is_empty() && fraction.is_empty()
            || !whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let whole = whole.trim_start_matches('0');
        let fraction = fraction.trim_end_matches('0');
        if whole.is_empty() && fraction.is_empty() {
            return Some(Self(Repr::Integer(0)));
        }
        if fraction.is_empty()
            && let Ok(magnitude) = whole.parse::<i128>()
        {
            return Some(Self::from_integer(if negative {
                -magnitude
            } else {
                magnitude
            }));
        }
        let mut canonical = String::with_capacity(whole.len() + fraction.len() + 3);
        if negative {
            canonical.push('-');
        }
        canonical.push_str(if whole.is_empty() { "0" } else { whole });
        if !fraction.is_empty() {
            canonical.push('.');
            canonical.push_str(fraction);
        }
        Some(Self(Repr::Decimal(canonical.into_boxed_str())))
    }

    /// The value as a whole number, when it is one that fits.
    pub fn to_i128(&self) -> Option<i128> {
        match &self.0 {
            Repr::Integer(value) => Some(i128::from(*value)),
            Repr::Decimal(text) => text.parse().ok(),
        }
    }

    pub fn is_zero(&self) -> bool {
        self.0 == Repr::Integer(0)
    }

    /// The number with the opposite sign.
    pub fn negated(&self) -> Self {
        match &self.0 {
            Repr::Integer(value) => Self::from_integer(-i128::from(*value)),
            Repr::Decimal(text) => match text.strip_prefix('-') {
                Some(magnitude) => Self::parse(magnitude),
                None => Self::parse(&format!("-{text}")),
            }
            .unwrap_or_else(|| Self::from_integer(0)),
        }
    }

    /// Sign, whole digits and fraction digits of the canonical text.
    fn parts(text: &str) -> (bool, &str, &str) {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        (negative, whole, fraction)
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Repr::Integer(value) => write!(f, "{value}"),
            Repr::Decimal(text) => f.write_str(text),
        }
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        if let (Repr::Integer(a), Repr::Integer(b)) = (&self.0, &other.0) {
            return a.cmp(b);
        }
        let (a, b) = (self.to_string(), other.to_string());
        let (a_negative, a_whole, a_fraction) = Self::parts(&a);
        let (b_negative, b_whole, b_fraction) = Self::parts(&b);
        let magnitude = a_whole
            .len()
            .cmp(&b_whole.len())
            .then_with(|| a_whole.cmp(b_whole))
            .then_with(|| a_fraction.cmp(b_fraction));
        match (a_negative, b_negative) {
            (false, false) => magnitude,
            (true, true) => magnitude.reverse(),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_canonical_and_ordered_by_value() {
        let n = |text| Number::parse(text).expect(text);
        assert_eq!(n("007.50").to_string(), "7.5");
        assert_eq!(n("-0.0").to_string(), "0");
        assert_eq!(n(".5").to_string(), "0.5");
        assert_eq!(n("-0012").to_string(), "-12");
        assert_eq!(n("12.000"), Number::from_integer(12));
        let huge = "123456789012345678901234567890";
        assert_eq!(n(huge).to_string(), huge);
        assert_eq!(n(huge), Number::from_integer(huge.parse().unwrap()));
        assert!(n(huge) > n("9223372036854775807"));
        let negative_huge = format!("-{huge}");
        assert!(n(&negative_huge) < n("-1.5"));
        assert_eq!(n("2.5").negated().to_string(), "-2.5");
        assert_eq!(n("-7").negated(), n("7"));
        assert!(n("10") > n("9.99"));
        assert!(n("-10") < n("-9"));
        assert!(n("0.05") < n("0.5"));
        assert_eq!(Number::parse("1e3"), None);
        assert_eq!(Number::parse("ab"), None);
    }

    #[test]
    fn row_ids_compare_by_address_not_by_text() {
        // `0` (52) comes after `z` (51) in Oracle's alphabet, before it in ASCII.
        let low = Datum::RowId("AAAR3sAAEAAAACXAAz".to_owned());
        let high = Datum::RowId("AAAR3sAAEAAAACXAA0".to_owned());
        assert_eq!(low.compare(&high).unwrap(), Some(Ordering::Less));
        assert_eq!(
            Datum::text("AAAR3sAAEAAAACXAA0").compare(&low).unwrap(),
            Some(Ordering::Greater)
        );
        assert_eq!(low.compare(&Datum::text("x")).unwrap_err().code, 1410);
    }

    #[test]
    fn the_empty_string_is_null_and_text_compares_with_numbers_as_a_number() {
        assert_eq!(Datum::text(""), Datum::Null);
        assert_eq!(
            Datum::number(10).compare(&Datum::text("9")).unwrap(),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Datum::number(10)
                .compare(&Datum::text("x"))
                .unwrap_err()
                .code,
            1722
        );
        assert_eq!(Datum::Null.compare(&Datum::number(1)).unwrap(), None);
        assert_eq!(
            Datum::Raw(vec![0x0a, 0xff]).to_text().as_deref(),
            Some("0AFF")
        );
    }
}
