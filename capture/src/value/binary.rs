//! Hexadecimal text, as `HEXTORAW('..')` carries RAW and BLOB bytes (lower case in LogMiner's
//! output; both cases are read).

/// Hex text that is not a whole number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    #[error("odd number of hex digits ({0})")]
    OddLength(usize),
    #[error("{0:?} at character {1} is not a hex digit")]
    NotHex(char, usize),
}

/// Decodes hex text into bytes.
pub fn decode_hex(text: &str) -> Result<Vec<u8>, HexError> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return Err(HexError::OddLength(bytes.len()));
    }
    let mut out = Vec::with_capacity(bytes.len() / 2);
    for (pair_index, pair) in bytes.chunks_exact(2).enumerate() {
        let high = nibble(pair[0]).ok_or_else(|| not_hex(text, pair_index * 2))?;
        let low = nibble(pair[1]).ok_or_else(|| not_hex(text, pair_index * 2 + 1))?;
        out.push(high << 4 | low);
    }
    Ok(out)
}

fn not_hex(text: &str, at: usize) -> HexError {
    let c = text.get(at..).and_then(|s| s.chars().next()).unwrap_or('?');
    HexError::NotHex(c, at)
}

fn nibble(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Lower-case hex text of `bytes`.
pub fn encode_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(decode_hex("45465f4748").unwrap(), b"EF_GH");
        assert_eq!(decode_hex("FF00").unwrap(), [0xff, 0]);
        assert_eq!(decode_hex("").unwrap(), Vec::<u8>::new());
        assert_eq!(encode_hex(&[0xde, 0xad, 0x01]), "dead01");
        assert_eq!(decode_hex("abc"), Err(HexError::OddLength(3)));
        assert_eq!(decode_hex("zz"), Err(HexError::NotHex('z', 0)));
        assert!(matches!(decode_hex("aéb"), Err(HexError::NotHex(..))));
    }
}
