//! BINARY_FLOAT and BINARY_DOUBLE in Oracle's internal format.
//!
//! From the OCI Programmer's Guide (Data Types, "BINARY_FLOAT and BINARY_DOUBLE"), in our
//! words: the IEEE 754 single or double, big-endian, transformed so that the bytes sort as the
//! numbers do: a positive number (sign bit clear) has its sign bit set, a negative one has
//! every bit inverted. So a stored value with the high bit set was positive (flip it back) and
//! one without was negative (invert it all), which is how OpenLogReplicator's
//! `Builder::decodeFloat` / `decodeDouble` read it (they rebuild the value from exponent and
//! significand; taking the bits back is the same and exact for NaN payloads and zeros).

use super::InternalReason;

pub(super) fn decode_f32(bytes: &[u8]) -> Result<f32, InternalReason> {
    let stored: [u8; 4] = bytes.try_into().map_err(|_| InternalReason::Length {
        expected: "4",
        actual: bytes.len(),
    })?;
    let stored = u32::from_be_bytes(stored);
    let bits = if stored & 0x8000_0000 != 0 {
        stored ^ 0x8000_0000
    } else {
        !stored
    };
    Ok(f32::from_bits(bits))
}

pub(super) fn decode_f64(bytes: &[u8]) -> Result<f64, InternalReason> {
    let stored: [u8; 8] = bytes.try_into().map_err(|_| InternalReason::Length {
        expected: "8",
        actual: bytes.len(),
    })?;
    let stored = u64::from_be_bytes(stored);
    let bits = if stored & 0x8000_0000_0000_0000 != 0 {
        stored ^ 0x8000_0000_0000_0000
    } else {
        !stored
    };
    Ok(f64::from_bits(bits))
}
