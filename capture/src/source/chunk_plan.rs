//! A table's plan of chunks as the bookmark stores it: only the chunks not yet read, packed.
//!
//! The plan travels in every bookmark while its table is read (a restart must read the same
//! chunks: [`crate::source::chunks`]). As a JSON list of tagged ranges it costs some 50-70 bytes
//! a chunk: a 100-million-row table at the default `fetchSize` (10,000 chunks) made bookmarks of
//! about 0.7 MB, near Kafka's default 1 MB message limit. A [`ChunkPlan`] therefore
//! - keeps the chunks from the first one not read on ([`ChunkPlan::forget_before`]), with that
//!   chunk's index, so chunk indexes stay what they were when the table was planned;
//! - is stored as one base64 string (standard alphabet, padded) of the bytes below, where the
//!   ROWIDs of a heap table's ranges are delta-encoded numbers: consecutive chunks of a plan are
//!   block ranges of one data object and file, of one size, each after the previous, so most
//!   chunks take 2 bytes (under 3 characters of base64).
//!
//! Bytes (integers are LEB128 varints; "signed" ones zigzag-encoded first):
//!
//! ```text
//! version (1) | first chunk index | chunk count | chunk...
//! chunk = flags, then by kind (flags >> 6):
//!   0 ROWID range, parts as numbers (data object, relative file, block, row: the extended
//!     ROWID OOOOOOFFFBBBBBBRRR of Database Concepts, "Rowid Format", and DBMS_ROWID):
//!     lo.object, lo.file unless flag 16 (the previous such chunk's hi ones), as signed deltas
//!     from them (zeros before the first chunk); lo.block, a signed delta from the previous hi
//!     block; lo.row unless flag 1 (row 0); hi.object unless flag 4 (lo's), hi.file unless
//!     flag 8 (lo's), as signed deltas from lo's; the span hi.block − lo.block unless flag 32
//!     (the previous chunk's span, 0 at first), as a signed delta from the previous span;
//!     hi.row unless flag 2 (row 32767, `chunks::LAST_ROW`)
//!   1 ROWID range as text (a ROWID that is not an extended ROWID): lo, hi as strings
//!   2 key range: after (flag 1: present; flag 4: the previous chunk's through), through
//!     (flag 2: present), each a count of values and the values as strings
//! string = length, UTF-8 bytes
//! ```
//!
//! Decoding reads bytes that come back from Kafka: every failure is a [`PlanDecodeError`],
//! nothing is allocated beyond what the input's length can hold, and a plan decodes to what
//! was encoded (a proptest round trip here; the fuzz target `chunk_plan` checks that whatever
//! decodes encodes back to the same plan). A bookmark written before this encoding holds the
//! whole plan as a JSON list of [`RowRange`]s; it still loads, as a plan whose first chunk is
//! chunk 0.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use super::chunks::{LAST_ROW, RowRange, extended_row_id, row_id_parts};

/// The format's version byte.
const VERSION: u8 = 1;

const KIND_ROW_ID: u8 = 0;
const KIND_ROW_ID_TEXT: u8 = 1;
const KIND_KEY: u8 = 2;

/// The kind is in the top two bits of a chunk's flags.
const KIND_SHIFT: u8 = 6;
const FLAG_BITS: u8 = (1 << KIND_SHIFT) - 1;

const ROW_ZERO: u8 = 1;
const ROW_LAST: u8 = 2;
const SAME_OBJECT: u8 = 4;
const SAME_FILE: u8 = 8;
const CONTINUES: u8 = 16;
const SAME_SPAN: u8 = 32;

const AFTER: u8 = 1;
const THROUGH: u8 = 2;
const AFTER_IS_PREVIOUS: u8 = 4;

/// The chunks of a table from index `first` on (the earlier ones are read).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkPlan {
    first: u64,
    ranges: Vec<RowRange>,
}

/// Why stored plan text or bytes are not a plan.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanDecodeError {
    #[error("the chunk plan is not base64: {0}")]
    Base64(String),
    #[error("the chunk plan is empty")]
    Empty,
    #[error("chunk plan format {0} is unknown (this redoline writes {VERSION})")]
    Version(u8),
    #[error("the chunk plan ends inside {0}")]
    Truncated(&'static str),
    #[error("a number of the chunk plan does not fit 64 bits ({0})")]
    Overflow(&'static str),
    #[error("chunk {chunk} of the plan has unknown flags {flags:#04x}")]
    Flags { chunk: u64, flags: u8 },
    #[error("chunk {chunk} of the plan has a ROWID part out of range ({part})")]
    RowIdOutOfRange { chunk: u64, part: &'static str },
    #[error("chunk {chunk} of the plan has a string that is not UTF-8")]
    NotUtf8 { chunk: u64 },
    #[error("chunk {chunk} of the plan reuses a previous key bound that does not exist")]
    NoPreviousKey { chunk: u64 },
    #[error("the chunk plan has {0} bytes after its last chunk")]
    TrailingBytes(usize),
}

impl ChunkPlan {
    /// A plan just made: every chunk, from chunk 0.
    pub fn new(ranges: Vec<RowRange>) -> Self {
        Self { first: 0, ranges }
    }

    /// How many chunks the table was planned in (read ones included).
    pub fn len(&self) -> u64 {
        self.first + self.ranges.len() as u64
    }

    /// Whether the table was planned in no chunk at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of the first chunk kept.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// Chunk `index`; `None` when it is read (forgotten) or past the end.
    pub fn get(&self, index: u64) -> Option<&RowRange> {
        let offset = index.checked_sub(self.first)?;
        self.ranges.get(usize::try_from(offset).ok()?)
    }

    /// The chunks from `index` on, in order; none when `index` is forgotten.
    pub fn chunks_from(&self, index: u64) -> &[RowRange] {
        index
            .checked_sub(self.first)
            .and_then(|offset| usize::try_from(offset).ok())
            .and_then(|offset| self.ranges.get(offset..))
            .unwrap_or_default()
    }

    /// Forgets the chunks before `index` (read: the bookmark need not carry them).
    pub fn forget_before(&mut self, index: u64) {
        let Some(read) = index.checked_sub(self.first) else {
            return;
        };
        let read = usize::try_from(read)
            .unwrap_or(usize::MAX)
            .min(self.ranges.len());
        self.ranges.drain(..read);
        self.first += read as u64;
    }

    /// The packed bytes (module doc).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![VERSION];
        put_varint(&mut out, self.first);
        put_varint(&mut out, self.ranges.len() as u64);
        let mut previous = Previous::default();
        let mut previous_through: Option<&Vec<String>> = None;
        for range in &self.ranges {
            match range {
                RowRange::RowId { lo, hi } => match (row_id_parts(lo), row_id_parts(hi)) {
                    (Some(lo), Some(hi)) => {
                        let lo = [lo.0, lo.1, lo.2, lo.3];
                        let hi = [hi.0, hi.1, hi.2, hi.3];
                        previous = put_row_id_range(&mut out, lo, hi, previous);
                    }
                    _ => {
                        out.push(KIND_ROW_ID_TEXT << KIND_SHIFT);
                        put_string(&mut out, lo);
                        put_string(&mut out, hi);
                    }
                },
                RowRange::Key { after, through } => {
                    let mut flags = KIND_KEY << KIND_SHIFT;
                    let reuse = after.is_some() && after.as_ref() == previous_through;
                    if after.is_some() {
                        flags |= AFTER;
                    }
                    if reuse {
                        flags |= AFTER_IS_PREVIOUS;
                    }
                    if through.is_some() {
                        flags |= THROUGH;
                    }
                    out.push(flags);
                    if let (Some(after), false) = (after, reuse) {
                        put_values(&mut out, after);
                    }
                    if let Some(through) = through {
                        put_values(&mut out, through);
                    }
                }
            }
            previous_through = match range {
                RowRange::Key { through, .. } => through.as_ref(),
                RowRange::RowId { .. } => None,
            };
        }
        out
    }

    /// A plan from its packed bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PlanDecodeError> {
        let mut input = Input { bytes, at: 0 };
        let version = input
            .byte("the version")
            .map_err(|_| PlanDecodeError::Empty)?;
        if version != VERSION {
            return Err(PlanDecodeError::Version(version));
        }
        let first = input.varint("the first chunk index")?;
        let count = input.varint("the chunk count")?;
        if first.checked_add(count).is_none() {
            return Err(PlanDecodeError::Overflow("the chunk count"));
        }
        // Each chunk takes at least its flags byte: a count beyond the bytes left is truncated
        // input, found before anything is allocated for it.
        if count > input.left() as u64 {
            return Err(PlanDecodeError::Truncated("the chunks"));
        }
        let mut ranges = Vec::with_capacity(count as usize);
        let mut previous = Previous::default();
        let mut previous_through: Option<Vec<String>> = None;
        for offset in 0..count {
            let chunk = first + offset;
            let flags = input.byte("a chunk's flags")?;
            let range = match flags >> KIND_SHIFT {
                KIND_ROW_ID => {
                    let (lo, hi) = input.row_id_range(chunk, flags, &mut previous)?;
                    let text = |parts: [u64; 4], part| {
                        extended_row_id(parts[0], parts[1], parts[2], parts[3])
                            .ok_or(PlanDecodeError::RowIdOutOfRange { chunk, part })
                    };
                    RowRange::RowId {
                        lo: text(lo, "lo")?,
                        hi: text(hi, "hi")?,
                    }
                }
                KIND_ROW_ID_TEXT if flags & FLAG_BITS == 0 => RowRange::RowId {
                    lo: input.string(chunk)?,
                    hi: input.string(chunk)?,
                },
                KIND_KEY if flags & FLAG_BITS & !(AFTER | THROUGH | AFTER_IS_PREVIOUS) == 0 => {
                    let after = match (flags & AFTER != 0, flags & AFTER_IS_PREVIOUS != 0) {
                        (false, false) => None,
                        (true, false) => Some(input.values(chunk)?),
                        (true, true) => Some(
                            previous_through
                                .clone()
                                .ok_or(PlanDecodeError::NoPreviousKey { chunk })?,
                        ),
                        (false, true) => return Err(PlanDecodeError::Flags { chunk, flags }),
                    };
                    let through = if flags & THROUGH != 0 {
                        Some(input.values(chunk)?)
                    } else {
                        None
                    };
                    RowRange::Key { after, through }
                }
                _ => return Err(PlanDecodeError::Flags { chunk, flags }),
            };
            previous_through = match &range {
                RowRange::Key { through, .. } => through.clone(),
                RowRange::RowId { .. } => None,
            };
            ranges.push(range);
        }
        if input.left() > 0 {
            return Err(PlanDecodeError::TrailingBytes(input.left()));
        }
        Ok(Self { first, ranges })
    }

    /// The base64 text the bookmark stores.
    pub fn encode(&self) -> String {
        STANDARD.encode(self.to_bytes())
    }

    /// A plan from the text the bookmark stores.
    pub fn decode(text: &str) -> Result<Self, PlanDecodeError> {
        let bytes = STANDARD
            .decode(text)
            .map_err(|error| PlanDecodeError::Base64(error.to_string()))?;
        Self::from_bytes(&bytes)
    }
}

/// What the next ROWID range is encoded against: the previous one's hi parts and block span.
#[derive(Clone, Copy, Debug, Default)]
struct Previous {
    hi: [u64; 4],
    span: i64,
}

/// Writes one ROWID range; returns what the next is encoded against.
fn put_row_id_range(out: &mut Vec<u8>, lo: [u64; 4], hi: [u64; 4], previous: Previous) -> Previous {
    let span = delta(lo[2], hi[2]);
    let mut flags = KIND_ROW_ID << KIND_SHIFT;
    if lo[0] == previous.hi[0] && lo[1] == previous.hi[1] {
        flags |= CONTINUES;
    }
    if span == previous.span {
        flags |= SAME_SPAN;
    }
    if lo[3] == 0 {
        flags |= ROW_ZERO;
    }
    if hi[3] == LAST_ROW {
        flags |= ROW_LAST;
    }
    if hi[0] == lo[0] {
        flags |= SAME_OBJECT;
    }
    if hi[1] == lo[1] {
        flags |= SAME_FILE;
    }
    out.push(flags);
    if flags & CONTINUES == 0 {
        put_signed(out, delta(previous.hi[0], lo[0]));
        put_signed(out, delta(previous.hi[1], lo[1]));
    }
    put_signed(out, delta(previous.hi[2], lo[2]));
    if flags & ROW_ZERO == 0 {
        put_varint(out, lo[3]);
    }
    if flags & SAME_OBJECT == 0 {
        put_signed(out, delta(lo[0], hi[0]));
    }
    if flags & SAME_FILE == 0 {
        put_signed(out, delta(lo[1], hi[1]));
    }
    if flags & SAME_SPAN == 0 {
        put_signed(out, span.wrapping_sub(previous.span));
    }
    if flags & ROW_LAST == 0 {
        put_varint(out, hi[3]);
    }
    Previous { hi, span }
}

/// `to - from`: ROWID parts are at most 36 bits, so the difference fits.
fn delta(from: u64, to: u64) -> i64 {
    (i128::from(to) - i128::from(from)) as i64
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_signed(out: &mut Vec<u8>, value: i64) {
    put_varint(out, ((value << 1) ^ (value >> 63)) as u64);
}

fn put_string(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn put_values(out: &mut Vec<u8>, values: &[String]) {
    put_varint(out, values.len() as u64);
    for value in values {
        put_string(out, value);
    }
}

/// The bytes being decoded and the position in them.
struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn byte(&mut self, what: &'static str) -> Result<u8, PlanDecodeError> {
        let byte = *self
            .bytes
            .get(self.at)
            .ok_or(PlanDecodeError::Truncated(what))?;
        self.at += 1;
        Ok(byte)
    }

    fn varint(&mut self, what: &'static str) -> Result<u64, PlanDecodeError> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = self.byte(what)?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(PlanDecodeError::Overflow(what));
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(PlanDecodeError::Overflow(what))
    }

    fn signed(&mut self, what: &'static str) -> Result<i64, PlanDecodeError> {
        let raw = self.varint(what)?;
        Ok((raw >> 1) as i64 ^ -((raw & 1) as i64))
    }

    /// `base` moved by a signed delta; a result below 0 or past 64 bits is out of range.
    fn part(&mut self, base: u64, chunk: u64, part: &'static str) -> Result<u64, PlanDecodeError> {
        let moved = i128::from(base) + i128::from(self.signed(part)?);
        u64::try_from(moved).map_err(|_| PlanDecodeError::RowIdOutOfRange { chunk, part })
    }

    fn row_id_range(
        &mut self,
        chunk: u64,
        flags: u8,
        previous: &mut Previous,
    ) -> Result<([u64; 4], [u64; 4]), PlanDecodeError> {
        let (object, file) = if flags & CONTINUES != 0 {
            (previous.hi[0], previous.hi[1])
        } else {
            (
                self.part(previous.hi[0], chunk, "lo data object")?,
                self.part(previous.hi[1], chunk, "lo file")?,
            )
        };
        let block = self.part(previous.hi[2], chunk, "lo block")?;
        let row = if flags & ROW_ZERO != 0 {
            0
        } else {
            self.varint("lo row")?
        };
        let lo = [object, file, block, row];
        let hi_object = if flags & SAME_OBJECT != 0 {
            object
        } else {
            self.part(object, chunk, "hi data object")?
        };
        let hi_file = if flags & SAME_FILE != 0 {
            file
        } else {
            self.part(file, chunk, "hi file")?
        };
        let span = if flags & SAME_SPAN != 0 {
            previous.span
        } else {
            previous.span.wrapping_add(self.signed("hi block")?)
        };
        let hi_block = u64::try_from(i128::from(block) + i128::from(span)).map_err(|_| {
            PlanDecodeError::RowIdOutOfRange {
                chunk,
                part: "hi block",
            }
        })?;
        let hi_row = if flags & ROW_LAST != 0 {
            LAST_ROW
        } else {
            self.varint("hi row")?
        };
        let hi = [hi_object, hi_file, hi_block, hi_row];
        *previous = Previous { hi, span };
        Ok((lo, hi))
    }

    fn string(&mut self, chunk: u64) -> Result<String, PlanDecodeError> {
        let length = self.varint("a string's length")?;
        if length > self.left() as u64 {
            return Err(PlanDecodeError::Truncated("a string"));
        }
        let end = self.at + length as usize;
        let text = std::str::from_utf8(&self.bytes[self.at..end])
            .map_err(|_| PlanDecodeError::NotUtf8 { chunk })?
            .to_owned();
        self.at = end;
        Ok(text)
    }

    fn values(&mut self, chunk: u64) -> Result<Vec<String>, PlanDecodeError> {
        let count = self.varint("a key's value count")?;
        // Each value takes at least its length byte.
        if count > self.left() as u64 {
            return Err(PlanDecodeError::Truncated("a key's values"));
        }
        (0..count).map(|_| self.string(chunk)).collect()
    }
}

/// How a plan is written in the bookmark: the packed text, or (read only) the JSON list a
/// bookmark written before it holds.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Packed(String),
    Listed(Vec<RowRange>),
}

impl Serialize for ChunkPlan {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.encode())
    }
}

impl<'de> Deserialize<'de> for ChunkPlan {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Stored::deserialize(deserializer)? {
            Stored::Packed(text) => Self::decode(&text).map_err(serde::de::Error::custom),
            Stored::Listed(ranges) => Ok(Self::new(ranges)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::chunks::{BlockAddress, BlockRange, Extent, plan};
    use proptest::prelude::*;

    fn row_id_ranges(chunks: &[BlockRange]) -> Vec<RowRange> {
        chunks
            .iter()
            .map(|c| RowRange::RowId {
                lo: extended_row_id(c.data_object, c.first.file, c.first.block, 0).unwrap(),
                hi: extended_row_id(c.data_object, c.last.file, c.last.block, LAST_ROW).unwrap(),
            })
            .collect()
    }

    #[test]
    fn a_plan_of_extents_packs_to_a_few_bytes_a_chunk() {
        let extents: Vec<Extent> = (0..100)
            .map(|n| Extent {
                data_object: 73_545,
                file: 7,
                block: 128 + n * 1024,
                blocks: 1024,
            })
            .collect();
        let ranges = row_id_ranges(&plan(&extents, 100));
        let json = serde_json::to_string(&ranges).unwrap().len();
        let plan = ChunkPlan::new(ranges);
        let packed = serde_json::to_string(&plan).unwrap().len();
        let chunks = plan.len() as usize;
        assert!(packed * 8 < json, "{packed} bytes packed, {json} as JSON");
        assert!(packed < chunks * 3, "{packed} bytes for {chunks} chunks");
        assert_eq!(
            serde_json::from_str::<ChunkPlan>(&serde_json::to_string(&plan).unwrap()).unwrap(),
            plan
        );
    }

    #[test]
    fn read_chunks_are_forgotten_and_indexes_kept() {
        let ranges = row_id_ranges(&[
            BlockRange {
                data_object: 9,
                first: BlockAddress { file: 4, block: 8 },
                last: BlockAddress { file: 4, block: 15 },
            },
            BlockRange {
                data_object: 9,
                first: BlockAddress { file: 4, block: 16 },
                last: BlockAddress { file: 5, block: 3 },
            },
            BlockRange {
                data_object: 10,
                first: BlockAddress { file: 5, block: 4 },
                last: BlockAddress { file: 5, block: 9 },
            },
        ]);
        let mut plan = ChunkPlan::new(ranges.clone());
        plan.forget_before(2);
        assert_eq!((plan.first(), plan.len()), (2, 3));
        assert_eq!(plan.get(1), None);
        assert_eq!(plan.get(2), Some(&ranges[2]));
        assert_eq!(plan.get(3), None);
        // Forgetting again, or less, changes nothing; past the end leaves nothing.
        plan.forget_before(1);
        assert_eq!(plan.get(2), Some(&ranges[2]));
        let again = ChunkPlan::decode(&plan.encode()).unwrap();
        assert_eq!(again, plan);
        plan.forget_before(10);
        assert_eq!((plan.first(), plan.len(), plan.get(2)), (3, 3, None));
    }

    #[test]
    fn a_plan_stored_as_a_json_list_still_loads() {
        // The shape of bookmarks written before the packed plan.
        let old = r#"[{"kind":"row_id","lo":"AAAR9JAAHAAAACAAAA","hi":"AAAR9JAAHAAAACHH//"},
            {"kind":"key","after":["5"],"through":["9"]},{"kind":"key"}]"#;
        let plan: ChunkPlan = serde_json::from_str(old).unwrap();
        assert_eq!(plan.first(), 0);
        assert_eq!(plan.len(), 3);
        assert_eq!(
            plan.get(0),
            Some(&RowRange::RowId {
                lo: "AAAR9JAAHAAAACAAAA".to_owned(),
                hi: "AAAR9JAAHAAAACHH//".to_owned(),
            })
        );
        assert_eq!(plan.get(2), Some(&RowRange::whole_key()));
    }

    #[test]
    fn damaged_bytes_are_typed_errors() {
        let plan = ChunkPlan::new(row_id_ranges(&[BlockRange {
            data_object: 70,
            first: BlockAddress {
                file: 7,
                block: 128,
            },
            last: BlockAddress {
                file: 7,
                block: 227,
            },
        }]));
        let bytes = plan.to_bytes();
        assert_eq!(ChunkPlan::from_bytes(&[]), Err(PlanDecodeError::Empty));
        assert_eq!(
            ChunkPlan::from_bytes(&[2, 0, 0]),
            Err(PlanDecodeError::Version(2))
        );
        assert!(matches!(
            ChunkPlan::from_bytes(&bytes[..bytes.len() - 1]),
            Err(PlanDecodeError::Truncated(_))
        ));
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert_eq!(
            ChunkPlan::from_bytes(&trailing),
            Err(PlanDecodeError::TrailingBytes(1))
        );
        // A count of chunks the bytes cannot hold is refused before anything is allocated.
        let mut huge = vec![VERSION, 0];
        put_varint(&mut huge, u64::MAX >> 1);
        assert!(matches!(
            ChunkPlan::from_bytes(&huge),
            Err(PlanDecodeError::Truncated(_))
        ));
        // A block below 0.
        let mut negative = vec![VERSION, 0, 1, (KIND_ROW_ID << KIND_SHIFT) | 0x0f];
        put_signed(&mut negative, 0);
        put_signed(&mut negative, 0);
        put_signed(&mut negative, -1);
        put_signed(&mut negative, 0);
        // A span that ends below block 0.
        let mut backwards = vec![VERSION, 0, 1, (KIND_ROW_ID << KIND_SHIFT) | 0x1f];
        put_signed(&mut backwards, 5);
        put_signed(&mut backwards, -6);
        assert!(matches!(
            ChunkPlan::from_bytes(&backwards),
            Err(PlanDecodeError::RowIdOutOfRange {
                chunk: 0,
                part: "hi block"
            })
        ));
        assert!(matches!(
            ChunkPlan::from_bytes(&negative),
            Err(PlanDecodeError::RowIdOutOfRange { chunk: 0, .. })
        ));
        // A file number past its 3 base-64 digits.
        let mut wide = vec![VERSION, 0, 1, (KIND_ROW_ID << KIND_SHIFT) | 0x0f];
        put_signed(&mut wide, 1);
        put_signed(&mut wide, 1 << 18);
        put_signed(&mut wide, 0);
        put_signed(&mut wide, 0);
        assert!(matches!(
            ChunkPlan::from_bytes(&wide),
            Err(PlanDecodeError::RowIdOutOfRange { chunk: 0, .. })
        ));
        assert!(matches!(
            ChunkPlan::from_bytes(&[VERSION, 0, 1, 0xff]),
            Err(PlanDecodeError::Flags { chunk: 0, .. })
        ));
        assert!(matches!(
            ChunkPlan::from_bytes(&[
                VERSION,
                0,
                1,
                (KIND_KEY << KIND_SHIFT) | AFTER | AFTER_IS_PREVIOUS
            ]),
            Err(PlanDecodeError::NoPreviousKey { chunk: 0 })
        ));
        assert!(matches!(
            ChunkPlan::from_bytes(&[VERSION, 0, 1, KIND_ROW_ID_TEXT << KIND_SHIFT, 1, 0xff, 0]),
            Err(PlanDecodeError::NotUtf8 { chunk: 0 })
        ));
        assert!(matches!(
            ChunkPlan::decode("not base64!"),
            Err(PlanDecodeError::Base64(_))
        ));
        assert!(serde_json::from_str::<ChunkPlan>("\"AgAA\"").is_err());
    }

    const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    /// Extended ROWIDs, mostly neighbouring ones as plans have them, and other text.
    fn row_id_text() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (0u64..1 << 36, 0u64..1 << 18, 0u64..1 << 36, 0u64..1 << 18)
                .prop_map(|(o, f, b, r)| extended_row_id(o, f, b, r).unwrap()),
            4 => (0u64..4, 0u64..4, 0u64..300, prop_oneof![Just(0u64), Just(LAST_ROW), 0u64..40])
                .prop_map(|(o, f, b, r)| extended_row_id(70 + o, 7 + f, 128 + b, r).unwrap()),
            1 => proptest::string::string_regex(&format!("[{ALPHABET}]{{0,20}}|.{{0,6}}")).unwrap(),
        ]
    }

    fn key_values() -> impl Strategy<Value = Option<Vec<String>>> {
        proptest::option::of(proptest::collection::vec(".{0,8}", 0..3))
    }

    fn range() -> impl Strategy<Value = RowRange> {
        prop_oneof![
            3 => (row_id_text(), row_id_text()).prop_map(|(lo, hi)| RowRange::RowId { lo, hi }),
            1 => (key_values(), key_values())
                .prop_map(|(after, through)| RowRange::Key { after, through }),
        ]
    }

    /// Key plans as the planner makes them: each chunk after the previous one's bound.
    fn key_chain() -> impl Strategy<Value = Vec<RowRange>> {
        proptest::collection::vec(proptest::collection::vec("[0-9]{1,4}", 1..3), 0..6).prop_map(
            |bounds| {
                let mut after = None;
                let mut ranges = Vec::new();
                for through in bounds {
                    ranges.push(RowRange::Key {
                        after: after.clone(),
                        through: Some(through.clone()),
                    });
                    after = Some(through);
                }
                ranges.push(RowRange::Key {
                    after,
                    through: None,
                });
                ranges
            },
        )
    }

    proptest! {
        #[test]
        fn every_plan_decodes_to_what_was_encoded(
            ranges in prop_oneof![proptest::collection::vec(range(), 0..40), key_chain()],
            read in 0u64..50,
        ) {
            let mut plan = ChunkPlan::new(ranges);
            plan.forget_before(read);
            let bytes = plan.to_bytes();
            prop_assert_eq!(ChunkPlan::from_bytes(&bytes), Ok(plan.clone()));
            let json = serde_json::to_string(&plan).unwrap();
            prop_assert_eq!(serde_json::from_str::<ChunkPlan>(&json).unwrap(), plan);
        }
    }
}
