//! Exact Oracle NUMBER values.
//!
//! LogMiner writes NUMBER, FLOAT and INTEGER values as decimal text with `.` as the decimal
//! separator (the capture fixes `NLS_NUMERIC_CHARACTERS`, see [`super::nls`]): `'42'`, `'-7'`,
//! `'.05'` (no leading zero), `'29669.9'`. [`OracleNumber`] keeps such a value exactly, as a
//! string of significant decimal digits and a scale, never as a binary float: a NUMBER holds up
//! to 40 significant digits (`1/3` in an unconstrained NUMBER), more than an `i128` or an `f64`.
//!
//! Invariants of an [`OracleNumber`] (so equal values are equal structs):
//! - `digits` holds ASCII digits without leading zeros; zero has no digits, scale 0 and no sign
//!   (`-0` is zero);
//! - `scale` is the number of fraction digits, without trailing zeros (`'10.50'` is `105`, scale 1);
//!   integers have scale 0 and keep their trailing zeros (`'1E+3'` is `1000`).
//!
//! Accepted text: `[+|-] digits [. [digits]] | [+|-] . digits`, optionally followed by an exponent
//! `E[+|-]digits` (tolerated although LogMiner is not known to write it), at most
//! [`MAX_TEXT_LEN`] characters and an exponent within ±[`MAX_EXPONENT`], which covers Oracle's
//! range (1E-130 to below 1E126). Anything else is a [`NumberError`]; parsing never panics.

use std::fmt;

/// The longest NUMBER text accepted.
pub const MAX_TEXT_LEN: usize = 256;
/// The largest decimal exponent accepted (Oracle's NUMBER spans 1E-130 to 1E126).
pub const MAX_EXPONENT: i32 = 200;

/// An exact decimal number; see the module docs for its invariants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OracleNumber {
    negative: bool,
    digits: String,
    scale: u32,
}

/// Text that is not a decimal number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    #[error("not a decimal number")]
    NotANumber,
    #[error("longer than {MAX_TEXT_LEN} characters")]
    TooLong,
    #[error("exponent beyond ±{MAX_EXPONENT}")]
    ExponentOutOfRange,
}

impl OracleNumber {
    /// Parses decimal text; see the module docs for the accepted forms.
    pub fn parse(text: &str) -> Result<Self, NumberError> {
        if text.len() > MAX_TEXT_LEN {
            return Err(NumberError::TooLong);
        }
        let bytes = text.as_bytes();
        let mut at = 0;
        let negative = take_sign(bytes, &mut at);
        let int_start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        let int_part = &text[int_start..at];
        let mut frac_part = "";
        if at < bytes.len() && bytes[at] == b'.' {
            at += 1;
            let frac_start = at;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            frac_part = &text[frac_start..at];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(NumberError::NotANumber);
        }
        let mut exponent: i32 = 0;
        if at < bytes.len() && (bytes[at] == b'e' || bytes[at] == b'E') {
            at += 1;
            let exp_negative = take_sign(bytes, &mut at);
            let exp_start = at;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            let exp_text = &text[exp_start..at];
            if exp_text.is_empty() {
                return Err(NumberError::NotANumber);
            }
            let magnitude: i32 = exp_text
                .parse()
                .map_err(|_| NumberError::ExponentOutOfRange)?;
            if magnitude > MAX_EXPONENT {
                return Err(NumberError::ExponentOutOfRange);
            }
            exponent = if exp_negative { -magnitude } else { magnitude };
        }
        if at != bytes.len() {
            return Err(NumberError::NotANumber);
        }
        Ok(Self::from_parts(negative, int_part, frac_part, exponent))
    }

    /// Builds the normalized form of `±int_part.frac_part × 10^exponent` (ASCII digits only).
    fn from_parts(negative: bool, int_part: &str, frac_part: &str, exponent: i32) -> Self {
        let mut digits = String::with_capacity(int_part.len() + frac_part.len());
        digits.push_str(int_part);
        digits.push_str(frac_part);
        // value = digits × 10^(exponent - frac_len)
        let mut scale = i64::try_from(frac_part.len()).unwrap_or(0) - i64::from(exponent);
        if scale < 0 {
            for _ in 0..(-scale) {
                digits.push('0');
            }
            scale = 0;
        }
        let leading = digits.bytes().take_while(|&b| b == b'0').count();
        digits.drain(..leading);
        while scale > 0 && digits.ends_with('0') {
            digits.pop();
            scale -= 1;
        }
        if digits.is_empty() {
            return Self::zero();
        }
        Self {
            negative,
            digits,
            scale: u32::try_from(scale).unwrap_or(0),
        }
    }

    pub fn zero() -> Self {
        Self {
            negative: false,
            digits: String::new(),
            scale: 0,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Fraction digits (without trailing zeros).
    pub fn scale(&self) -> u32 {
        self.scale
    }

    /// Significant digits, without leading zeros (and, in the fraction, trailing zeros).
    pub fn significant_digits(&self) -> &str {
        &self.digits
    }

    /// Digits before the decimal point (0 for `0.05`).
    pub fn integer_digit_count(&self) -> u32 {
        u32::try_from(self.digits.len())
            .unwrap_or(u32::MAX)
            .saturating_sub(self.scale)
    }

    /// Whether the value fits `NUMBER(precision, scale)` exactly, as Oracle would store it
    /// without rounding. A negative scale requires that many trailing zeros.
    pub fn fits(&self, precision: u8, scale: i8) -> bool {
        if self.is_zero() {
            return true;
        }
        let integer_digits = i64::from(self.integer_digit_count());
        let allowed = i64::from(precision) - i64::from(scale);
        if scale >= 0 {
            i64::from(self.scale) <= i64::from(scale) && integer_digits <= allowed
        } else {
            let zeros = usize::from(scale.unsigned_abs());
            self.scale == 0
                && self.digits.len() > zeros
                && self.digits.as_bytes()[self.digits.len() - zeros..]
                    .iter()
                    .all(|&b| b == b'0')
                && integer_digits <= allowed
        }
    }

    /// The value as an `i64` when it is an integer in range.
    pub fn to_i64(&self) -> Option<i64> {
        if self.scale != 0 || self.digits.len() > 19 {
            return None;
        }
        if self.is_zero() {
            return Some(0);
        }
        let magnitude: i128 = self.digits.parse().ok()?;
        let value = if self.negative { -magnitude } else { magnitude };
        i64::try_from(value).ok()
    }

    /// The nearest `f64` (correctly rounded), for `decimal.handling.mode=double`.
    pub fn to_f64(&self) -> f64 {
        self.to_plain_string(0).parse().unwrap_or(f64::NAN)
    }

    /// Plain decimal notation (never an exponent) with at least `min_scale` fraction digits:
    /// `105`/scale 1 with `min_scale` 2 is `10.50`; `5`/scale 2 is `0.05`.
    pub fn to_plain_string(&self, min_scale: u32) -> String {
        let mut out = String::with_capacity(self.digits.len() + 4);
        self.write_plain(&mut out, min_scale);
        out
    }

    /// [`Self::to_plain_string`] appended to `out`.
    pub fn write_plain(&self, out: &mut String, min_scale: u32) {
        if self.negative {
            out.push('-');
        }
        let scale = self.scale as usize;
        let len = self.digits.len();
        if len > scale {
            out.push_str(&self.digits[..len - scale]);
        } else {
            out.push('0');
        }
        let fraction_digits = self.scale.max(min_scale);
        if fraction_digits == 0 {
            return;
        }
        out.push('.');
        if len < scale {
            for _ in 0..(scale - len) {
                out.push('0');
            }
            out.push_str(&self.digits);
        } else {
            out.push_str(&self.digits[len - scale..]);
        }
        for _ in self.scale..fraction_digits {
            out.push('0');
        }
    }

    /// The unscaled value at `scale` as big-endian two's-complement bytes in the shortest form,
    /// as Java's `BigInteger.toByteArray` writes them and Kafka Connect's `Decimal` reads them.
    /// `scale` is at least [`Self::scale`] for an exact result (typing checks the column's scale);
    /// fraction digits beyond a smaller `scale` are dropped. A negative `scale` counts in powers
    /// of ten (`12300` at scale -2 is `123`), as NUMBER(p,-2) columns hold them.
    pub fn unscaled_bytes(&self, scale: i32) -> Vec<u8> {
        let keep = self.digits.len() as i64 - (i64::from(self.scale) - i64::from(scale)).max(0);
        let kept = &self.digits[..usize::try_from(keep.max(0)).unwrap_or(0)];
        let padding = u32::try_from(i64::from(scale) - i64::from(self.scale)).unwrap_or(0);
        // Base-256 magnitude, little-endian while building.
        let mut magnitude: Vec<u8> = Vec::with_capacity(kept.len() / 2 + 2);
        let mut push_digit = |d: u8| {
            let mut carry = u32::from(d);
            for byte in magnitude.iter_mut() {
                let v = u32::from(*byte) * 10 + carry;
                *byte = (v & 0xff) as u8;
                carry = v >> 8;
            }
            while carry > 0 {
                magnitude.push((carry & 0xff) as u8);
                carry >>= 8;
            }
        };
        for b in kept.bytes() {
            push_digit(b - b'0');
        }
        for _ in 0..padding {
            push_digit(0);
        }
        if magnitude.is_empty() {
            return vec![0];
        }
        if self.negative {
            // Two's complement: invert and add one.
            let mut carry = true;
            for byte in magnitude.iter_mut() {
                *byte = !*byte;
                if carry {
                    let (v, overflow) = byte.overflowing_add(1);
                    *byte = v;
                    carry = overflow;
                }
            }
            if magnitude.last().is_some_and(|&b| b & 0x80 == 0) {
                magnitude.push(0xff);
            }
            while magnitude.len() > 1
                && magnitude[magnitude.len() - 1] == 0xff
                && magnitude[magnitude.len() - 2] & 0x80 != 0
            {
                magnitude.pop();
            }
        } else if magnitude.last().is_some_and(|&b| b & 0x80 != 0) {
            magnitude.push(0);
        }
        magnitude.reverse();
        magnitude
    }
}

impl fmt::Display for OracleNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_plain_string(0))
    }
}

/// Consumes an optional `+` or `-` at `at`; true for `-`.
pub(crate) fn take_sign(bytes: &[u8], at: &mut usize) -> bool {
    match bytes.get(*at) {
        Some(b'-') => {
            *at += 1;
            true
        }
        Some(b'+') => {
            *at += 1;
            false
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> OracleNumber {
        OracleNumber::parse(s).unwrap()
    }

    #[test]
    fn parses_logminer_number_text() {
        assert_eq!(n("42").to_string(), "42");
        assert_eq!(n(".05").to_string(), "0.05");
        assert_eq!(n("-.5").to_string(), "-0.5");
        assert_eq!(n("29669.9").to_string(), "29669.9");
        assert_eq!(n("10.50").to_string(), "10.5");
        assert_eq!(n("007").to_string(), "7");
        assert_eq!(n("-0"), OracleNumber::zero());
        assert_eq!(n("-0.000"), OracleNumber::zero());
        assert_eq!(n("5."), n("5"));
        assert_eq!(n("1E+3").to_string(), "1000");
        assert_eq!(n("1.5e-3").to_string(), "0.0015");
        assert_eq!(
            n(".3333333333333333333333333333333333333333").to_string(),
            "0.3333333333333333333333333333333333333333"
        );
    }

    #[test]
    fn refuses_what_is_not_a_number() {
        for bad in [
            "", "-", ".", "abc", "1a", "1.2.3", " 1", "1 ", "1e", "1e+", "--1", "1,5", "0x10",
            "Inf", "NaN",
        ] {
            assert_eq!(
                OracleNumber::parse(bad),
                Err(NumberError::NotANumber),
                "{bad:?}"
            );
        }
        assert_eq!(
            OracleNumber::parse("1e999"),
            Err(NumberError::ExponentOutOfRange)
        );
        assert_eq!(
            OracleNumber::parse(&"1".repeat(300)),
            Err(NumberError::TooLong)
        );
    }

    #[test]
    fn plain_string_pads_to_column_scale() {
        assert_eq!(n("10.5").to_plain_string(2), "10.50");
        assert_eq!(n(".05").to_plain_string(3), "0.050");
        assert_eq!(n("-3").to_plain_string(2), "-3.00");
        assert_eq!(n("0").to_plain_string(1), "0.0");
    }

    #[test]
    fn fits_follows_oracle_precision_and_scale() {
        assert!(n("12345678.90").fits(10, 2));
        assert!(!n("123456789.9").fits(10, 2));
        assert!(!n("1.234").fits(10, 2));
        assert!(n("12300").fits(3, -2));
        assert!(!n("12310").fits(3, -2));
        assert!(!n("123400").fits(3, -2));
        assert!(n(".05").fits(2, 2));
        assert!(n("0").fits(1, 0));
        assert!(n("-9").fits(1, 0));
        assert!(!n("10").fits(1, 0));
    }

    #[test]
    fn unscaled_bytes_match_java_big_integer() {
        assert_eq!(n("0").unscaled_bytes(0), [0x00]);
        assert_eq!(n("1").unscaled_bytes(0), [0x01]);
        assert_eq!(n("127").unscaled_bytes(0), [0x7f]);
        assert_eq!(n("128").unscaled_bytes(0), [0x00, 0x80]);
        assert_eq!(n("-1").unscaled_bytes(0), [0xff]);
        assert_eq!(n("-128").unscaled_bytes(0), [0x80]);
        assert_eq!(n("-129").unscaled_bytes(0), [0xff, 0x7f]);
        assert_eq!(n("-256").unscaled_bytes(0), [0xff, 0x00]);
        assert_eq!(n("10.5").unscaled_bytes(2), [0x04, 0x1a]); // 1050
        assert_eq!(n("65535").unscaled_bytes(0), [0x00, 0xff, 0xff]);
        // Negative scales: NUMBER(p,-2) values count hundreds.
        assert_eq!(n("12300").unscaled_bytes(-2), [0x7b]);
        assert_eq!(n("-500").unscaled_bytes(-2), [0xfb]);
        assert_eq!(n("0").unscaled_bytes(-2), [0x00]);
    }

    #[test]
    fn integers_convert_to_i64_in_range() {
        assert_eq!(n("9223372036854775807").to_i64(), Some(i64::MAX));
        assert_eq!(n("-9223372036854775808").to_i64(), Some(i64::MIN));
        assert_eq!(n("9223372036854775808").to_i64(), None);
        assert_eq!(n("1.5").to_i64(), None);
        assert_eq!(n("0").to_i64(), Some(0));
    }
}
