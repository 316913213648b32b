//! Byte sizes written the way Kubernetes users write them.
//!
//! A size is either a plain byte count (`268435456`) or a Kubernetes quantity string (`256Mi`,
//! `10Gi`, `1.5G`, `512k`, `1e9`). The schema marks it `x-kubernetes-int-or-string`, so the
//! apiserver accepts both, and CEL rules in the CRD (see [`cel_quantity`]) compare sizes with the
//! apiserver's own quantity library. [`ByteQuantity::bytes`] gives the same number in Rust.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// A size in bytes: a byte count or a Kubernetes quantity such as `256Mi`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ByteQuantity {
    /// A plain byte count.
    Bytes(u64),
    /// A Kubernetes quantity string.
    Quantity(String),
}

/// Why a size could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error("`{0}` is not a size: write a byte count or a quantity such as 256Mi or 10Gi")]
    Malformed(String),
    #[error("`{0}` is not a whole number of bytes")]
    Fractional(String),
    #[error("`{0}` is larger than 2^63-1 bytes")]
    TooLarge(String),
}

impl ByteQuantity {
    /// A quantity from its string form, such as `"256Mi"`.
    pub fn quantity(text: &str) -> Self {
        Self::Quantity(text.to_owned())
    }

    /// The size in bytes.
    pub fn bytes(&self) -> Result<u64, QuantityError> {
        match self {
            Self::Bytes(n) if *n <= i64::MAX as u64 => Ok(*n),
            Self::Bytes(n) => Err(QuantityError::TooLarge(n.to_string())),
            Self::Quantity(text) => parse_bytes(text),
        }
    }
}

impl fmt::Display for ByteQuantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bytes(n) => write!(f, "{n}"),
            Self::Quantity(text) => f.write_str(text),
        }
    }
}

impl JsonSchema for ByteQuantity {
    fn schema_name() -> Cow<'static, str> {
        "ByteQuantity".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "x-kubernetes-int-or-string": true })
    }
}

/// A CEL expression turning the int-or-string size field `field` into a CEL quantity, for rules
/// that compare sizes (`.compareTo(..)`). `asInteger()` is no use here: it refuses quantities such as
/// `1.5Gi` that are whole numbers of bytes but not stored as integers. Strings that are not
/// quantities are refused by the field's own rule first.
pub fn cel_quantity(field: &str) -> String {
    format!("(type({field}) == int ? quantity(string({field})) : quantity({field}))")
}

/// Parses a Kubernetes quantity (`<signed number><suffix>`) into whole bytes, exactly: no floating
/// point, so `1.5Gi` is 1610612736 and `0.5` is an error rather than a rounded zero.
fn parse_bytes(text: &str) -> Result<u64, QuantityError> {
    let malformed = || QuantityError::Malformed(text.to_owned());
    let s = text.trim();
    let number_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(number_end);
    let number = number.strip_prefix('+').unwrap_or(number);
    if number.starts_with('-') {
        return Err(malformed());
    }
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(malformed());
    }
    // value = digits * 10^(exp10) * 2^(exp2)
    let (exp2, exp10): (u32, i64) = match suffix {
        "" => (0, 0),
        "Ki" => (10, 0),
        "Mi" => (20, 0),
        "Gi" => (30, 0),
        "Ti" => (40, 0),
        "Pi" => (50, 0),
        "Ei" => (60, 0),
        "m" => (0, -3),
        "k" => (0, 3),
        "M" => (0, 6),
        "G" => (0, 9),
        "T" => (0, 12),
        "P" => (0, 15),
        "E" => (0, 18),
        exp if exp.starts_with(['e', 'E']) => {
            let e: i64 = exp[1..].parse().map_err(|_| malformed())?;
            (0, e)
        }
        _ => return Err(malformed()),
    };
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    let scale = exp10 - frac_part.len() as i64;
    let too_large = || QuantityError::TooLarge(text.to_owned());
    let mut value: u128 = 0;
    for b in digits.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u128::from(b - b'0')))
            .ok_or_else(too_large)?;
    }
    value = value.checked_shl(exp2).ok_or_else(too_large)?;
    if value != 0 && scale > 0 {
        for _ in 0..scale {
            value = value.checked_mul(10).ok_or_else(too_large)?;
        }
    } else if scale < 0 {
        for _ in 0..(-scale) {
            if !value.is_multiple_of(10) {
                return Err(QuantityError::Fractional(text.to_owned()));
            }
            value /= 10;
        }
    }
    if value > i64::MAX as u128 {
        return Err(too_large());
    }
    Ok(value as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn q(s: &str) -> Result<u64, QuantityError> {
        ByteQuantity::quantity(s).bytes()
    }

    #[test]
    fn binary_and_decimal_suffixes() {
        assert_eq!(q("256Mi"), Ok(256 << 20));
        assert_eq!(q("10Gi"), Ok(10 << 30));
        assert_eq!(q("1.5Gi"), Ok(1_610_612_736));
        assert_eq!(q("512k"), Ok(512_000));
        assert_eq!(q("2G"), Ok(2_000_000_000));
        assert_eq!(q("1e9"), Ok(1_000_000_000));
        assert_eq!(q("1E3"), Ok(1_000));
        assert_eq!(q("4096"), Ok(4096));
        assert_eq!(q("+7"), Ok(7));
        assert_eq!(q("0"), Ok(0));
        assert_eq!(q("2000m"), Ok(2));
    }

    #[test]
    fn rejects_what_is_not_a_whole_byte_count() {
        assert!(matches!(q("0.5"), Err(QuantityError::Fractional(_))));
        assert!(matches!(q("1500m"), Err(QuantityError::Fractional(_))));
        assert!(matches!(q("-1Gi"), Err(QuantityError::Malformed(_))));
        assert!(matches!(q("12 MB"), Err(QuantityError::Malformed(_))));
        assert!(matches!(q("Mi"), Err(QuantityError::Malformed(_))));
        assert!(matches!(q(""), Err(QuantityError::Malformed(_))));
        assert!(matches!(q("1.2.3"), Err(QuantityError::Malformed(_))));
        assert!(matches!(q("9Ei"), Err(QuantityError::TooLarge(_))));
        assert!(matches!(
            ByteQuantity::Bytes(u64::MAX).bytes(),
            Err(QuantityError::TooLarge(_))
        ));
    }

    #[test]
    fn reads_ints_and_strings_from_yaml() {
        let v: Vec<ByteQuantity> = serde_norway::from_str("[1024, 64Mi, '10']").unwrap();
        assert_eq!(
            v,
            vec![
                ByteQuantity::Bytes(1024),
                ByteQuantity::quantity("64Mi"),
                ByteQuantity::quantity("10")
            ]
        );
    }

    proptest! {
        #[test]
        fn binary_suffixes_scale_exactly(n in 0u64..(1 << 20), shift in prop::sample::select(vec![("Ki", 10), ("Mi", 20), ("Gi", 30), ("Ti", 40)])) {
            prop_assert_eq!(q(&format!("{n}{}", shift.0)), Ok(n << shift.1));
        }

        #[test]
        fn never_panics(s in "\\PC{0,24}") {
            let _ = q(&s);
        }
    }
}
