//! NUMBER (and FLOAT, INTEGER) in Oracle's internal format.
//!
//! From the OCI Programmer's Guide (Data Types, "NUMBER"), in our words: one exponent byte, then
//! 1 to 20 mantissa bytes, each a base-100 digit, the most significant first, the value being
//! `d1.d2d3… × 100^e`. The exponent byte's high bit is set for positive numbers; its low 7 bits
//! are `e + 65` (so `193 + e` for a positive number), and a negative number stores the whole
//! byte inverted (`62 − e`). A positive digit is stored plus 1 (1..=100), a negative one as
//! 101 minus the digit (2..=101), and a negative number ends with the byte 102 unless it has
//! all 20 digits: that keeps negatives sorting below their prefixes byte by byte. Zero is the
//! single byte `0x80`; negative infinity `0x00` and positive infinity `0xff 0x65`.
//! OpenLogReplicator's `Builder::parseNumber` reads the same layout (its `0xC0 − byte` count of
//! leading zero pairs is `−1 − e`).

use super::InternalReason;
use crate::value::number::OracleNumber;

/// The most mantissa bytes.
const MAX_DIGITS: usize = 20;
/// A negative number's terminator byte.
const TERMINATOR: u8 = 102;

pub(super) fn decode(bytes: &[u8]) -> Result<OracleNumber, InternalReason> {
    let Some((&exponent_byte, rest)) = bytes.split_first() else {
        return Err(length(bytes));
    };
    match bytes {
        [0x80] => return Ok(OracleNumber::zero()),
        [0x00] => return Err(InternalReason::NumberInfinity("negative")),
        [0xff, 0x65] => return Err(InternalReason::NumberInfinity("positive")),
        _ => {}
    }
    if bytes.len() > MAX_DIGITS + 1 {
        return Err(length(bytes));
    }
    let positive = exponent_byte & 0x80 != 0;
    let mantissa = if positive {
        rest
    } else {
        match rest.split_last() {
            Some((&TERMINATOR, digits)) => digits,
            _ if rest.len() == MAX_DIGITS => rest,
            _ => return Err(InternalReason::NumberTerminator),
        }
    };
    if mantissa.is_empty() {
        return Err(length(bytes));
    }
    // The base-100 exponent of the first digit.
    let exponent = if positive {
        i32::from(exponent_byte) - 193
    } else {
        62 - i32::from(exponent_byte)
    };
    let mut text = String::with_capacity(mantissa.len() * 2 + 8);
    if !positive {
        text.push('-');
    }
    for (index, &byte) in mantissa.iter().enumerate() {
        let digit = match (positive, byte) {
            (true, 1..=100) => byte - 1,
            (false, 2..=101) => 101 - byte,
            _ => {
                return Err(InternalReason::NumberDigit {
                    at: index + 1,
                    byte,
                });
            }
        };
        text.push(char::from(b'0' + digit / 10));
        text.push(char::from(b'0' + digit % 10));
    }
    // The digits read as an integer; the last one weighs 100^(e − (n − 1)).
    let last_weight = exponent - (mantissa.len() as i32 - 1);
    text.push_str(&format!("E{}", 2 * last_weight));
    // Within OracleNumber's limits by construction (at most 40 digits, |exponent| ≤ 168).
    OracleNumber::parse(&text).map_err(|_| InternalReason::Length {
        expected: "a NUMBER within Oracle's range",
        actual: bytes.len(),
    })
}

fn length(bytes: &[u8]) -> InternalReason {
    InternalReason::Length {
        expected: "1 to 21 (an exponent byte and 1 to 20 digits)",
        actual: bytes.len(),
    }
}
