//! Byte sizes written the way Kubernetes users write them.
//!
//! A size is either a plain byte count (`268435456`) or a Kubernetes quantity string (`256Mi`,
//! `10Gi`, `1.5G`, `512k`, `1e9`). The schema marks it `x-kubernetes-int-or-string`, so the
//! apiserver accepts both, and CEL rules in the CRD (see [`cel_quantity`]) compare sizes with the
//! apiserver's own quantity library. [`ByteQuantity::bytes`] gives the same number in Rust, and
//! [`Quantity`] is the capture's implementation of that library's `quantity` type
//! (`capture/src/config/crd_rules/kubernetes.rs`).
//!
//! Why ours: k8s-openapi's `Quantity` is the string only, without parsing or arithmetic. The
//! crate `kube_quantity` (0.9, read for this) parses the number as an `f64` (nom's `double`)
//! before turning it into a decimal, so long digit strings are rounded, and it takes what
//! apimachinery's `ParseQuantity` refuses (a bare suffix such as `Mi` reads as 0; `double` also
//! reads `inf` and `nan`). A size limit decided by rounding, or a spec the apiserver refused
//! being accepted by the capture, is what this module exists to avoid; exact parsing is ~100
//! lines, tested here against the grammar.

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

/// A Kubernetes quantity, exactly: `digits × 10^exp10 × 2^exp2`, signed. The grammar is
/// apimachinery's (`k8s.io/apimachinery/pkg/api/resource/quantity.go`, `ParseQuantity`):
/// `<sign>? <digits>[.<digits>] <suffix>`, the suffix one of the binary `Ki`…`Ei`, the decimal
/// `m`, `k`, `M`…`E`, or an exponent `e<int>`/`E<int>`. No floating point, so `1.5Gi` and
/// `1536Mi` are equal and `0.5` is not a whole byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    /// The significant digits, trailing zeros moved into `exp10`.
    digits: u128,
    exp10: i64,
    exp2: u32,
}

impl Quantity {
    /// Parses `text`, or tells why it is not a quantity.
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let malformed = || QuantityError::Malformed(text.to_owned());
        let (negative, unsigned) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let number_end = unsigned
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(unsigned.len());
        let (number, suffix) = unsigned.split_at(number_end);
        let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
        if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
            return Err(malformed());
        }
        let (exp2, suffix_exp10): (u32, i64) = match suffix {
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
            exponent if exponent.starts_with(['e', 'E']) => {
                let e = &exponent[1..];
                let unsigned_e = e.strip_prefix(['+', '-']).unwrap_or(e);
                if unsigned_e.is_empty() || !unsigned_e.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(malformed());
                }
                (0, e.parse().map_err(|_| malformed())?)
            }
            _ => return Err(malformed()),
        };
        let all_digits = format!("{int_part}{frac_part}");
        let significant = all_digits.trim_start_matches('0');
        let kept = significant.trim_end_matches('0');
        let trailing_zeros = (significant.len() - kept.len()) as i64;
        let mut digits: u128 = 0;
        for b in kept.bytes() {
            digits = digits
                .checked_mul(10)
                .and_then(|v| v.checked_add(u128::from(b - b'0')))
                .ok_or_else(|| QuantityError::TooLarge(text.to_owned()))?;
        }
        let exp10 = if digits == 0 {
            0
        } else {
            suffix_exp10 + trailing_zeros - frac_part.len() as i64
        };
        Ok(Self {
            negative: negative && digits != 0,
            digits,
            exp10,
            exp2: if digits == 0 { 0 } else { exp2 },
        })
    }

    /// The magnitude as an integer count of `10^scale`, when it fits.
    fn scaled(&self, scale: i64) -> Option<u128> {
        if self.digits.leading_zeros() < self.exp2 {
            return None;
        }
        let mut value = self.digits << self.exp2;
        for _ in 0..(self.exp10 - scale) {
            value = value.checked_mul(10)?;
        }
        Some(value)
    }

    /// Orders two quantities by value, exactly; `None` when the two cannot be brought to one
    /// scale within 128 bits (values beyond any size this API holds).
    pub fn compare(&self, other: &Self) -> Option<std::cmp::Ordering> {
        use std::cmp::Ordering;
        match (self.negative, other.negative) {
            (false, true) => return Some(Ordering::Greater),
            (true, false) => return Some(Ordering::Less),
            _ => {}
        }
        let scale = self.exp10.min(other.exp10);
        let magnitude = self.scaled(scale)?.cmp(&other.scaled(scale)?);
        Some(if self.negative {
            magnitude.reverse()
        } else {
            magnitude
        })
    }

    /// The value as whole bytes.
    fn bytes(&self, text: &str) -> Result<u64, QuantityError> {
        if self.negative {
            return Err(QuantityError::Malformed(text.to_owned()));
        }
        let too_large = || QuantityError::TooLarge(text.to_owned());
        let mut value = self.scaled(self.exp10.min(0)).ok_or_else(too_large)?;
        for _ in self.exp10..0 {
            if !value.is_multiple_of(10) {
                return Err(QuantityError::Fractional(text.to_owned()));
            }
            value /= 10;
        }
        u64::try_from(value)
            .ok()
            .filter(|value| *value <= i64::MAX as u64)
            .ok_or_else(too_large)
    }
}

/// Parses a Kubernetes quantity into whole bytes, exactly: `1.5Gi` is 1610612736 and `0.5` is an
/// error rather than a rounded zero.
fn parse_bytes(text: &str) -> Result<u64, QuantityError> {
    Quantity::parse(text.trim())?.bytes(text)
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

    #[test]
    fn quantities_compare_exactly_across_suffixes() {
        use std::cmp::Ordering::*;
        let cmp = |a: &str, b: &str| {
            Quantity::parse(a)
                .unwrap()
                .compare(&Quantity::parse(b).unwrap())
        };
        assert_eq!(cmp("1.5Gi", "1536Mi"), Some(Equal));
        assert_eq!(cmp("16Mi", "16777216"), Some(Equal));
        assert_eq!(cmp("1500m", "1"), Some(Greater));
        assert_eq!(cmp("1k", "1Ki"), Some(Less));
        assert_eq!(cmp("-1", "0"), Some(Less));
        assert_eq!(cmp("-2", "-1"), Some(Less));
        assert_eq!(cmp("0", "-0"), Some(Equal));
        assert_eq!(cmp("1e3", "1k"), Some(Equal));
        assert_eq!(cmp(".5", "500m"), Some(Equal));
        for malformed in ["", ".", "1.2.3", "1e", "1 Gi", " 1", "Mi", "1KiB", "1e1.5"] {
            assert!(Quantity::parse(malformed).is_err(), "{malformed:?}");
        }
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
