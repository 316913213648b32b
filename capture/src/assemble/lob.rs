//! Reassembling a LOB value from LogMiner's pieces (seed 001, "Partial LOB writes").
//!
//! A LOB changed out of row arrives as SEL_LOB_LOCATOR, then LOB_WRITE pieces, then maybe
//! LOB_TRIM / LOB_ERASE. [`LobBuilder`] applies them in order:
//! - CLOB/NCLOB positions and lengths count UTF-16 code units, as Oracle counts them, so the value
//!   is kept as UTF-16. When LogMiner splits one write into pieces, it advances each later piece's
//!   offset by the previous piece's *character* count; a character outside the Basic Multilingual
//!   Plane is one character but two code units, so the builder recognises the advance (offset =
//!   previous offset + previous character count) and places the piece right after the previous
//!   one in code units instead; a trim or erase in between ends the pieces, so a write after it
//!   is taken at its offset in code units. BLOB offsets are bytes and need no correction.
//! - Writes that start at offset 1 and run on without a gap, with no trim or erase, are a whole
//!   new value: that is how LogMiner logs `UPDATE ... SET lob = ...`. Followed by a trim to exactly
//!   the written length, they are still a whole new value (a shorter value replacing a longer one).
//! - Anything else (an append, a write above offset 1, a gap, a trim or erase) is applied to the
//!   value the LOB had before, which is known only when it was set earlier in the same
//!   transaction (an `EMPTY_CLOB()` insert, an earlier update, earlier pieces), and is still
//!   among the values the assembler keeps ([`super::known_lobs`]). Without it the value cannot
//!   be rebuilt: [`LobError::Partial`], which the capture stops on (CDC-6002) or skips, never a
//!   padded or truncated value.
//! - Known limit: a write at offset 1 that overwrites only the start of a longer value, without a
//!   trim, looks exactly like a whole new value in the redo, so it is read as one.
//! - Gaps are filled as Oracle fills them: spaces in character LOBs, zero bytes in BLOBs; an erase
//!   writes the same fillers.

use crate::value::Value;

/// Which kind of LOB is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LobFlavor {
    /// CLOB or NCLOB: UTF-16 code units.
    Character,
    /// BLOB: bytes.
    Binary,
}

/// Why a LOB value cannot be rebuilt.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LobError {
    #[error(
        "{0}: the LOB's earlier value is not known from this transaction (not set in it, or set before the last {budget} MiB of LOB values it set), so the change cannot be rebuilt", budget = super::known_lobs::KNOWN_LOB_BUDGET_BYTES >> 20
    )]
    Partial(String),
    #[error("a LOB_WRITE piece is not valid {0}")]
    BadPiece(&'static str),
}

/// The value a builder starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Base {
    /// Set earlier in this transaction (empty after `EMPTY_CLOB()`).
    Known(Vec<u16>),
    KnownBytes(Vec<u8>),
    Unknown,
}

/// The previous write piece, for LogMiner's offset advance and the whole-value rule.
#[derive(Clone, Copy, Debug)]
struct LastPiece {
    /// Offset as LogMiner wrote it (1-based).
    logged_offset: u64,
    /// Characters (CLOB) or bytes (BLOB) in the piece, as LogMiner counts its advance.
    logged_length: u64,
    /// Where the piece really went (1-based code units or bytes).
    true_offset: u64,
    /// Its length in code units or bytes.
    true_length: u64,
}

/// Applies LOB pieces in redo order.
#[derive(Clone, Debug)]
pub struct LobBuilder {
    flavor: LobFlavor,
    base: Base,
    /// The content written so far when every write ran on from offset 1 (the whole-value path).
    units: Vec<u16>,
    bytes: Vec<u8>,
    contiguous_from_start: bool,
    /// At least one write was applied.
    wrote: bool,
    /// The write just before, when no trim or erase came after it: LogMiner's piece advance
    /// only runs from one LOB_WRITE piece to the next.
    last: Option<LastPiece>,
    /// A trim or erase happened, or a write was not contiguous from offset 1.
    needs_base: Option<String>,
    /// A trim to exactly the end of the contiguous writes.
    trimmed_to_written: bool,
    pieces: u64,
}

impl LobBuilder {
    /// A builder for a LOB whose current value is `known` (set in this transaction), or `None`
    /// when it is not known.
    pub fn new(flavor: LobFlavor, known: Option<&Value>) -> Self {
        let base = match (flavor, known) {
            (_, Some(Value::LobPlaceholder(_))) | (_, Some(Value::Null)) => match flavor {
                LobFlavor::Character => Base::Known(Vec::new()),
                LobFlavor::Binary => Base::KnownBytes(Vec::new()),
            },
            (LobFlavor::Character, Some(Value::Text(text))) => {
                Base::Known(text.encode_utf16().collect())
            }
            (LobFlavor::Binary, Some(Value::Bytes(bytes))) => Base::KnownBytes(bytes.clone()),
            _ => Base::Unknown,
        };
        Self {
            flavor,
            base,
            units: Vec::new(),
            bytes: Vec::new(),
            contiguous_from_start: true,
            wrote: false,
            last: None,
            needs_base: None,
            trimmed_to_written: false,
            pieces: 0,
        }
    }

    /// Pieces applied so far (LOB pieces count toward the staged-record limits).
    pub fn pieces(&self) -> u64 {
        self.pieces
    }

    /// A LOB_WRITE of text (CLOB/NCLOB) at LogMiner's 1-based `offset`.
    pub fn write_text(&mut self, text: &str, offset: u64) -> Result<(), LobError> {
        if self.flavor != LobFlavor::Character {
            return Err(LobError::BadPiece("for a BLOB (text data)"));
        }
        let data: Vec<u16> = text.encode_utf16().collect();
        let characters = text.chars().count() as u64;
        let position = self.true_offset(offset)?;
        self.note_write(offset, characters, position, data.len() as u64);
        if self.contiguous_from_start {
            self.units.extend_from_slice(&data);
        }
        if let Base::Known(base) = &mut self.base {
            overwrite(base, position, &data, u16::from(b' '));
        }
        Ok(())
    }

    /// A LOB_WRITE of bytes (BLOB) at the 1-based `offset`.
    pub fn write_bytes(&mut self, data: &[u8], offset: u64) -> Result<(), LobError> {
        if self.flavor != LobFlavor::Binary {
            return Err(LobError::BadPiece("for a character LOB (binary data)"));
        }
        let position = self.true_offset(offset)?;
        self.note_write(offset, data.len() as u64, position, data.len() as u64);
        if self.contiguous_from_start {
            self.bytes.extend_from_slice(data);
        }
        if let Base::KnownBytes(base) = &mut self.base {
            overwrite(base, position, data, 0);
        }
        Ok(())
    }

    /// LOB_TRIM to `length` code units or bytes.
    pub fn trim(&mut self, length: u64) {
        self.pieces += 1;
        let written = self.written_length();
        self.last = None;
        if self.contiguous_from_start && self.wrote && length == written {
            self.trimmed_to_written = true;
        } else {
            self.needs_base
                .get_or_insert_with(|| format!("a trim to {length}"));
        }
        let keep = usize::try_from(length).unwrap_or(usize::MAX);
        match &mut self.base {
            Base::Known(base) => base.truncate(keep),
            Base::KnownBytes(base) => base.truncate(keep),
            Base::Unknown => {}
        }
    }

    /// LOB_ERASE of `amount` units from the 1-based `offset`.
    pub fn erase(&mut self, amount: u64, offset: u64) {
        self.pieces += 1;
        self.last = None;
        self.needs_base
            .get_or_insert_with(|| format!("an erase of {amount} at offset {offset}"));
        match &mut self.base {
            Base::Known(base) => {
                let filler = vec![u16::from(b' '); clamp(amount)];
                erase_within(base, offset, &filler);
            }
            Base::KnownBytes(base) => {
                let filler = vec![0u8; clamp(amount)];
                erase_within(base, offset, &filler);
            }
            Base::Unknown => {}
        }
    }

    /// The LOB's new value.
    pub fn finish(self) -> Result<Value, LobError> {
        let whole_value = self.needs_base.is_none() || self.trimmed_to_written;
        if whole_value && self.contiguous_from_start && self.wrote {
            return Ok(match self.flavor {
                LobFlavor::Character => Value::Text(String::from_utf16_lossy(&self.units)),
                LobFlavor::Binary => Value::Bytes(self.bytes),
            });
        }
        let reason = self
            .needs_base
            .unwrap_or_else(|| "a write that does not start at offset 1".to_owned());
        match self.base {
            Base::Known(units) => Ok(Value::Text(String::from_utf16_lossy(&units))),
            Base::KnownBytes(bytes) => Ok(Value::Bytes(bytes)),
            Base::Unknown => Err(LobError::Partial(reason)),
        }
    }

    fn written_length(&self) -> u64 {
        match self.flavor {
            LobFlavor::Character => self.units.len() as u64,
            LobFlavor::Binary => self.bytes.len() as u64,
        }
    }

    /// Where a piece LogMiner placed at `offset` really goes.
    fn true_offset(&self, offset: u64) -> Result<u64, LobError> {
        if offset == 0 {
            return Err(LobError::BadPiece("(offset 0; offsets start at 1)"));
        }
        Ok(match self.last {
            Some(last) if offset == last.logged_offset + last.logged_length => {
                last.true_offset + last.true_length
            }
            _ => offset,
        })
    }

    fn note_write(
        &mut self,
        logged_offset: u64,
        logged_length: u64,
        true_offset: u64,
        true_length: u64,
    ) {
        self.pieces += 1;
        let expected = self.written_length() + 1;
        if !(self.contiguous_from_start && true_offset == expected) || self.trimmed_to_written {
            self.contiguous_from_start = false;
            self.needs_base.get_or_insert_with(|| {
                format!("a write at offset {logged_offset} that does not run on from offset 1")
            });
        }
        self.wrote = true;
        self.last = Some(LastPiece {
            logged_offset,
            logged_length,
            true_offset,
            true_length,
        });
    }
}

fn clamp(amount: u64) -> usize {
    usize::try_from(amount).unwrap_or(usize::MAX).min(1 << 30)
}

/// Writes `data` at 1-based `position`, filling any gap with `filler`.
fn overwrite<T: Copy>(base: &mut Vec<T>, position: u64, data: &[T], filler: T) {
    let start = usize::try_from(position.saturating_sub(1))
        .unwrap_or(usize::MAX)
        .min(1 << 31);
    if base.len() < start {
        base.resize(start, filler);
    }
    let end = start + data.len();
    if base.len() < end {
        base.resize(end, filler);
    }
    base[start..end].copy_from_slice(data);
}

/// Replaces existing units from 1-based `offset` with `filler` (never growing the value).
fn erase_within<T: Copy>(base: &mut [T], offset: u64, filler: &[T]) {
    let start = usize::try_from(offset.saturating_sub(1)).unwrap_or(usize::MAX);
    for (slot, fill) in base.iter_mut().skip(start).zip(filler) {
        *slot = *fill;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dictionary::LobKind;

    fn text(value: Result<Value, LobError>) -> String {
        match value.unwrap() {
            Value::Text(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn contiguous_writes_from_offset_one_are_a_whole_new_value() {
        let mut lob = LobBuilder::new(LobFlavor::Character, None);
        lob.write_text("hello ", 1).unwrap();
        lob.write_text("world", 7).unwrap();
        assert_eq!(text(lob.finish()), "hello world");
        let mut lob = LobBuilder::new(LobFlavor::Binary, None);
        lob.write_bytes(&[1, 2], 1).unwrap();
        lob.write_bytes(&[3], 3).unwrap();
        assert_eq!(lob.finish().unwrap(), Value::Bytes(vec![1, 2, 3]));
    }

    #[test]
    fn logminer_piece_advance_is_corrected_outside_the_bmp() {
        // "a😀" is 2 characters but 3 UTF-16 units; LogMiner logs the next piece at 1 + 2 = 3,
        // where it really belongs at unit 4.
        let mut lob = LobBuilder::new(LobFlavor::Character, None);
        lob.write_text("a😀", 1).unwrap();
        lob.write_text("b", 3).unwrap();
        assert_eq!(text(lob.finish()), "a😀b");
    }

    #[test]
    fn a_write_after_a_trim_is_not_a_continued_piece() {
        // Trimmed to 4 units ("😀😀"), the next write at 5 goes right after it, not at
        // 1 + 8 units as a piece continuing the 4-character write would.
        let known = Value::Text("abcdefghij".to_owned());
        let mut lob = LobBuilder::new(LobFlavor::Character, Some(&known));
        lob.write_text("😀😀😀😀", 1).unwrap();
        lob.trim(4);
        lob.write_text("xy", 5).unwrap();
        assert_eq!(text(lob.finish()), "😀😀xy");
    }

    #[test]
    fn partial_changes_need_the_earlier_value() {
        let mut append = LobBuilder::new(LobFlavor::Character, None);
        append.write_text("tail", 10).unwrap();
        assert!(matches!(append.finish(), Err(LobError::Partial(_))));

        let mut trim = LobBuilder::new(LobFlavor::Character, None);
        trim.trim(3);
        assert!(matches!(trim.finish(), Err(LobError::Partial(_))));

        let known = Value::Text("abcdef".to_owned());
        let mut patch = LobBuilder::new(LobFlavor::Character, Some(&known));
        patch.write_text("XY", 3).unwrap();
        patch.trim(5);
        assert_eq!(text(patch.finish()), "abXYe");

        let mut erase = LobBuilder::new(LobFlavor::Character, Some(&known));
        erase.erase(2, 2);
        assert_eq!(text(erase.finish()), "a  def");
    }

    #[test]
    fn an_empty_lob_from_the_insert_is_a_known_base() {
        let placeholder = Value::LobPlaceholder(LobKind::Clob);
        let mut gap = LobBuilder::new(LobFlavor::Character, Some(&placeholder));
        gap.write_text("x", 3).unwrap();
        assert_eq!(text(gap.finish()), "  x");
        let blob = Value::LobPlaceholder(LobKind::Blob);
        let mut gap = LobBuilder::new(LobFlavor::Binary, Some(&blob));
        gap.write_bytes(&[7], 2).unwrap();
        assert_eq!(gap.finish().unwrap(), Value::Bytes(vec![0, 7]));
    }

    #[test]
    fn a_shorter_value_is_writes_then_a_trim_to_their_end() {
        let mut lob = LobBuilder::new(LobFlavor::Character, None);
        lob.write_text("short", 1).unwrap();
        lob.trim(5);
        assert_eq!(text(lob.finish()), "short");
        let mut cut_short = LobBuilder::new(LobFlavor::Character, None);
        cut_short.write_text("short", 1).unwrap();
        cut_short.trim(4);
        assert!(cut_short.finish().is_err());
    }

    #[test]
    fn pieces_are_counted_and_bad_pieces_refused() {
        let mut lob = LobBuilder::new(LobFlavor::Character, None);
        lob.write_text("a", 1).unwrap();
        lob.write_text("b", 2).unwrap();
        lob.trim(2);
        assert_eq!(lob.pieces(), 3);
        assert!(lob.write_bytes(&[1], 3).is_err());
        assert!(
            LobBuilder::new(LobFlavor::Character, None)
                .write_text("a", 0)
                .is_err()
        );
    }
}
