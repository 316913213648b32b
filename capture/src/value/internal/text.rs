//! Character data in the database and national character sets.
//!
//! CHAR and VARCHAR2 are stored in the database character set (`NLS_CHARACTERSET`), NCHAR and
//! NVARCHAR2 in the national one (`NLS_NCHAR_CHARACTERSET`), with no length prefix or
//! terminator; CHAR keeps its blank padding (OCI Programmer's Guide, Data Types, "CHAR",
//! "VARCHAR2"). The sets decoded here, from Oracle's Globalization Support Guide (Appendix A,
//! "Locale Data"; "Supporting Multilingual Databases with Unicode"):
//! - AL32UTF8: UTF-8.
//! - UTF8: CESU-8, Unicode 3.0's UTF-8 in which a character beyond the BMP is its UTF-16
//!   surrogate pair, each half as a 3-byte sequence.
//! - WE8MSWIN1252: Windows code page 1252 (Unicode's `CP1252.TXT` mapping; its 5 undefined
//!   bytes are refused).
//! - WE8ISO8859P1: ISO 8859-1, each byte the code point of the same number.
//! - US7ASCII: bytes below 0x80.
//! - AL16UTF16 (national only): UTF-16 big-endian.
//!
//! Bytes that are not valid in the set are refused with their position, never replaced.

use super::InternalReason;

/// A database character set (`NLS_CHARACTERSET`) the decoders read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharacterSet {
    Al32Utf8,
    Utf8,
    We8MsWin1252,
    We8Iso8859P1,
    Us7Ascii,
}

/// A national character set (`NLS_NCHAR_CHARACTERSET`); Oracle allows only these two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NationalCharacterSet {
    Al16Utf16,
    Utf8,
}

/// A character set name the decoders do not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "character set {0} has no decoder for internal-format values (AL32UTF8, UTF8, \
     WE8MSWIN1252, WE8ISO8859P1, US7ASCII; national AL16UTF16, UTF8)"
)]
pub struct UnknownCharacterSet(pub String);

impl CharacterSet {
    /// The set of an `NLS_CHARACTERSET` value.
    pub fn from_name(name: &str) -> Result<Self, UnknownCharacterSet> {
        match name.trim().to_ascii_uppercase().as_str() {
            "AL32UTF8" => Ok(Self::Al32Utf8),
            "UTF8" => Ok(Self::Utf8),
            "WE8MSWIN1252" => Ok(Self::We8MsWin1252),
            "WE8ISO8859P1" => Ok(Self::We8Iso8859P1),
            "US7ASCII" => Ok(Self::Us7Ascii),
            _ => Err(UnknownCharacterSet(name.to_owned())),
        }
    }

    /// Oracle's name of the set.
    pub fn name(self) -> &'static str {
        match self {
            Self::Al32Utf8 => "AL32UTF8",
            Self::Utf8 => "UTF8",
            Self::We8MsWin1252 => "WE8MSWIN1252",
            Self::We8Iso8859P1 => "WE8ISO8859P1",
            Self::Us7Ascii => "US7ASCII",
        }
    }

    pub(super) fn decode(self, bytes: &[u8]) -> Result<String, InternalReason> {
        let invalid = |at| InternalReason::Text {
            charset: self.name(),
            at,
        };
        match self {
            Self::Al32Utf8 => std::str::from_utf8(bytes)
                .map(str::to_owned)
                .map_err(|e| invalid(e.valid_up_to())),
            Self::Utf8 => cesu8(bytes).map_err(invalid),
            Self::We8Iso8859P1 => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
            Self::Us7Ascii => match bytes.iter().position(|b| !b.is_ascii()) {
                Some(at) => Err(invalid(at)),
                None => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
            },
            Self::We8MsWin1252 => bytes
                .iter()
                .enumerate()
                .map(|(at, &b)| windows_1252(b).ok_or_else(|| invalid(at)))
                .collect(),
        }
    }
}

impl NationalCharacterSet {
    /// The set of an `NLS_NCHAR_CHARACTERSET` value.
    pub fn from_name(name: &str) -> Result<Self, UnknownCharacterSet> {
        match name.trim().to_ascii_uppercase().as_str() {
            "AL16UTF16" => Ok(Self::Al16Utf16),
            "UTF8" => Ok(Self::Utf8),
            _ => Err(UnknownCharacterSet(name.to_owned())),
        }
    }

    /// Oracle's name of the set.
    pub fn name(self) -> &'static str {
        match self {
            Self::Al16Utf16 => "AL16UTF16",
            Self::Utf8 => "UTF8",
        }
    }

    pub(super) fn decode(self, bytes: &[u8]) -> Result<String, InternalReason> {
        let invalid = |at| InternalReason::Text {
            charset: self.name(),
            at,
        };
        match self {
            Self::Al16Utf16 => {
                if !bytes.len().is_multiple_of(2) {
                    return Err(invalid(bytes.len() - 1));
                }
                let units = bytes
                    .chunks_exact(2)
                    .map(|pair| u16::from_be_bytes([pair[0], pair[1]]));
                from_utf16(units.enumerate().map(|(i, unit)| (unit, i * 2))).map_err(invalid)
            }
            Self::Utf8 => cesu8(bytes).map_err(invalid),
        }
    }
}

/// Decodes CESU-8: sequences of 1 to 3 bytes, each a UTF-16 code unit, surrogate pairs
/// joined. The error is the byte offset of the first invalid sequence.
fn cesu8(bytes: &[u8]) -> Result<String, usize> {
    let mut units = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&lead) = bytes.get(at) {
        let continuation = |i: usize| match bytes.get(at + i) {
            Some(&b) if b & 0xc0 == 0x80 => Ok(u16::from(b & 0x3f)),
            _ => Err(at),
        };
        let (unit, len) = match lead {
            0x00..=0x7f => (u16::from(lead), 1),
            0xc2..=0xdf => (u16::from(lead & 0x1f) << 6 | continuation(1)?, 2),
            0xe0..=0xef => {
                let unit = u16::from(lead & 0x0f) << 12 | continuation(1)? << 6 | continuation(2)?;
                // Overlong: a value that fits in two bytes.
                if unit < 0x800 {
                    return Err(at);
                }
                (unit, 3)
            }
            _ => return Err(at),
        };
        units.push((unit, at));
        at += len;
    }
    from_utf16(units.into_iter())
}

/// Joins UTF-16 code units (with the byte offset each came from) into text; the error is the
/// offset of an unpaired surrogate.
fn from_utf16(units: impl Iterator<Item = (u16, usize)>) -> Result<String, usize> {
    let mut out = String::new();
    let mut units = units.peekable();
    while let Some((unit, at)) = units.next() {
        let c = match unit {
            0xd800..=0xdbff => match units.peek() {
                Some(&(low @ 0xdc00..=0xdfff, _)) => {
                    units.next();
                    let code =
                        0x10000 + ((u32::from(unit) - 0xd800) << 10 | (u32::from(low) - 0xdc00));
                    char::from_u32(code).ok_or(at)?
                }
                _ => return Err(at),
            },
            0xdc00..=0xdfff => return Err(at),
            _ => char::from_u32(u32::from(unit)).ok_or(at)?,
        };
        out.push(c);
    }
    Ok(out)
}

/// Windows-1252: bytes 0x80..=0x9f map to the characters of Unicode's `CP1252.TXT` (five of
/// them are undefined there); every other byte is its own code point, as in ISO 8859-1.
fn windows_1252(byte: u8) -> Option<char> {
    const HIGH: [Option<char>; 32] = [
        Some('\u{20ac}'),
        None,
        Some('\u{201a}'),
        Some('\u{0192}'),
        Some('\u{201e}'),
        Some('\u{2026}'),
        Some('\u{2020}'),
        Some('\u{2021}'),
        Some('\u{02c6}'),
        Some('\u{2030}'),
        Some('\u{0160}'),
        Some('\u{2039}'),
        Some('\u{0152}'),
        None,
        Some('\u{017d}'),
        None,
        None,
        Some('\u{2018}'),
        Some('\u{2019}'),
        Some('\u{201c}'),
        Some('\u{201d}'),
        Some('\u{2022}'),
        Some('\u{2013}'),
        Some('\u{2014}'),
        Some('\u{02dc}'),
        Some('\u{2122}'),
        Some('\u{0161}'),
        Some('\u{203a}'),
        Some('\u{0153}'),
        None,
        Some('\u{017e}'),
        Some('\u{0178}'),
    ];
    match byte {
        0x80..=0x9f => HIGH[usize::from(byte - 0x80)],
        _ => Some(char::from(byte)),
    }
}

/// The byte of `c` in Windows-1252, for the encoder.
pub(super) fn windows_1252_byte(c: char) -> Option<u8> {
    (0..=255u8).find(|&b| windows_1252(b) == Some(c))
}
