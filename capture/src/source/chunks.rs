//! Chunks of a table for snapshot reads, as pure logic: the table's extents and statistics in,
//! ranges of blocks out ([`plan`]), and the [`RowRange`] a chunk read is bounded by.
//!
//! This is what Oracle's `DBMS_PARALLEL_EXECUTE.CREATE_CHUNKS_BY_ROWID` does (PL/SQL Packages
//! and Types Reference, DBMS_PARALLEL_EXECUTE): a heap table's rows live in the blocks of its
//! segment's extents (`DBA_EXTENTS`: `RELATIVE_FNO`, `BLOCK_ID`, `BLOCKS`), and every ROWID
//! names its data object, relative file, block and row (Database Concepts, "Rowid Format";
//! `DBMS_ROWID`). The range from `ROWID_CREATE(1, data_object_id, file, first_block, 0)` to
//! `ROWID_CREATE(1, data_object_id, file, last_block, 32767)` therefore holds exactly the rows
//! of those blocks, and `WHERE ROWID BETWEEN :lo AND :hi` is answered with a ROWID range scan
//! that reads only them (Database SQL Tuning Guide, "Table Access by Rowid Range"), so every
//! chunk costs its own blocks whatever its place in the table. A partitioned table has one
//! segment per partition (or subpartition), each with its own data object id; a chunk never
//! spans two of them.
//!
//! An index-organised table has no physical ROWIDs: it is chunked by primary key ranges
//! ([`RowRange::Key`]).

use serde::{Deserialize, Serialize};

/// The bounds of one chunk read, stored in the bookmark as the plan of a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowRange {
    /// A heap table's rows with `lo <= ROWID <= hi` (extended ROWIDs as `ROWIDTOCHAR` writes
    /// them).
    RowId { lo: String, hi: String },
    /// An index-organised table's rows whose primary key is above `after` and at most
    /// `through`, key values as the flashback read selects them (its key order); `None` is
    /// unbounded on that side.
    Key {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        through: Option<Vec<String>>,
    },
}

impl RowRange {
    /// The whole of an index-organised table.
    pub fn whole_key() -> Self {
        Self::Key {
            after: None,
            through: None,
        }
    }
}

/// The row number `ROWID_CREATE` is given for a chunk's last block: above any row a block can
/// hold, so the range ends after the block's last row (as CREATE_CHUNKS_BY_ROWID's ranges do).
pub const LAST_ROW: u64 = 32_767;

/// One extent of a table's segment, as `DBA_EXTENTS` lists it, with the data object id of its
/// segment (`DBA_OBJECTS.DATA_OBJECT_ID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Extent {
    pub data_object: u64,
    /// `RELATIVE_FNO`: the file number ROWIDs carry.
    pub file: u64,
    /// `BLOCK_ID`: the extent's first block.
    pub block: u64,
    pub blocks: u64,
}

/// A place in a segment: `(relative file, block)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct BlockAddress {
    pub file: u64,
    pub block: u64,
}

/// A chunk: the blocks from `first` to `last` (both included) of one data object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRange {
    pub data_object: u64,
    pub first: BlockAddress,
    pub last: BlockAddress,
}

/// Rows per block assumed for a table without statistics: a middling row of some 100 bytes in
/// an 8 KB block. A wrong guess only makes chunks larger or smaller, never wrong.
pub const ROWS_PER_BLOCK_WITHOUT_STATISTICS: u64 = 64;

/// How many blocks hold about `rows_per_chunk` rows, from the optimizer's statistics
/// (`NUM_ROWS`, `BLOCKS`) when the table has them.
pub fn blocks_per_chunk(rows_per_chunk: u64, num_rows: Option<u64>, blocks: Option<u64>) -> u64 {
    let rows_per_block = match (num_rows, blocks) {
        (Some(rows), Some(blocks)) if rows > 0 && blocks > 0 => rows.div_ceil(blocks),
        _ => ROWS_PER_BLOCK_WITHOUT_STATISTICS,
    };
    rows_per_chunk.max(1).div_ceil(rows_per_block).max(1)
}

/// Chunks of `target_blocks` blocks each (the last of a data object may be smaller), covering
/// every block of every extent once, in ROWID order: extents are taken in `(data object, file,
/// block)` order, an extent larger than what a chunk still takes is split, and a chunk ends at
/// a change of data object. Consecutive extents in that order may be grouped, since the
/// ROWIDs between them belong to other segments, whose rows carry other data object ids.
pub fn plan(extents: &[Extent], target_blocks: u64) -> Vec<BlockRange> {
    let target = target_blocks.max(1);
    let mut sorted: Vec<Extent> = extents.iter().copied().filter(|e| e.blocks > 0).collect();
    sorted.sort_unstable();
    let mut chunks = Vec::new();
    let mut open: Option<(BlockRange, u64)> = None;
    for extent in sorted {
        let mut block = extent.block;
        let end = extent.block + extent.blocks;
        while block < end {
            if let Some((chunk, _)) =
                open.filter(|(chunk, _)| chunk.data_object != extent.data_object)
            {
                chunks.push(chunk);
                open = None;
            }
            let taken = open.map_or(0, |(_, taken)| taken);
            let take = (target - taken).min(end - block);
            let last = BlockAddress {
                file: extent.file,
                block: block + take - 1,
            };
            let (chunk, taken) = match open {
                Some((chunk, taken)) => (BlockRange { last, ..chunk }, taken + take),
                None => (
                    BlockRange {
                        data_object: extent.data_object,
                        first: BlockAddress {
                            file: extent.file,
                            block,
                        },
                        last,
                    },
                    take,
                ),
            };
            block += take;
            if taken >= target {
                chunks.push(chunk);
                open = None;
            } else {
                open = Some((chunk, taken));
            }
        }
    }
    if let Some((chunk, _)) = open {
        chunks.push(chunk);
    }
    chunks
}

/// Oracle's base-64 alphabet for extended ROWIDs (Database Concepts, "Rowid Format").
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The extended ROWID `OOOOOOFFFBBBBBBRRR` of a row: data object (6 digits), relative file (3),
/// block (6) and row (3) in base 64, as `DBMS_ROWID.ROWID_CREATE(1, …)` builds it for a
/// smallfile tablespace (PL/SQL Packages and Types Reference, DBMS_ROWID). `None` when a part
/// does not fit its digits.
pub fn extended_row_id(data_object: u64, file: u64, block: u64, row: u64) -> Option<String> {
    let mut text = String::with_capacity(18);
    for (value, digits) in [(data_object, 6u32), (file, 3), (block, 6), (row, 3)] {
        if value >> (6 * digits) != 0 {
            return None;
        }
        for position in (0..digits).rev() {
            text.push(char::from(
                ALPHABET[((value >> (6 * position)) & 63) as usize],
            ));
        }
    }
    Some(text)
}

/// The parts `(data object, file, block, row)` of an extended ROWID; `None` for other text.
pub fn row_id_parts(text: &str) -> Option<(u64, u64, u64, u64)> {
    if text.len() != 18 {
        return None;
    }
    let read = |range: std::ops::Range<usize>| {
        text.get(range)?.bytes().try_fold(0u64, |acc, byte| {
            let digit = ALPHABET.iter().position(|&c| c == byte)?;
            Some(acc << 6 | digit as u64)
        })
    };
    Some((read(0..6)?, read(6..9)?, read(9..15)?, read(15..18)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extent(data_object: u64, file: u64, block: u64, blocks: u64) -> Extent {
        Extent {
            data_object,
            file,
            block,
            blocks,
        }
    }

    fn range(object: u64, first: (u64, u64), last: (u64, u64)) -> BlockRange {
        BlockRange {
            data_object: object,
            first: BlockAddress {
                file: first.0,
                block: first.1,
            },
            last: BlockAddress {
                file: last.0,
                block: last.1,
            },
        }
    }

    /// Every block of every extent, from the chunks, in order: each exactly once.
    fn blocks_of(chunks: &[BlockRange], extents: &[Extent]) -> Vec<(u64, u64, u64)> {
        let mut all: Vec<(u64, u64, u64)> = extents
            .iter()
            .flat_map(|e| (e.block..e.block + e.blocks).map(move |b| (e.data_object, e.file, b)))
            .collect();
        all.sort_unstable();
        let mut covered = Vec::new();
        for chunk in chunks {
            covered.extend(all.iter().copied().filter(|&(object, file, block)| {
                object == chunk.data_object
                    && (file, block) >= (chunk.first.file, chunk.first.block)
                    && (file, block) <= (chunk.last.file, chunk.last.block)
            }));
        }
        covered
    }

    #[test]
    fn extents_are_grouped_and_split_to_the_target() {
        let extents = [
            extent(70, 7, 128, 8),
            extent(70, 7, 136, 8),
            extent(70, 7, 256, 128),
        ];
        let chunks = plan(&extents, 12);
        assert_eq!(
            chunks,
            vec![
                range(70, (7, 128), (7, 139)),
                range(70, (7, 140), (7, 263)),
                range(70, (7, 264), (7, 275)),
                range(70, (7, 276), (7, 287)),
                range(70, (7, 288), (7, 299)),
                range(70, (7, 300), (7, 311)),
                range(70, (7, 312), (7, 323)),
                range(70, (7, 324), (7, 335)),
                range(70, (7, 336), (7, 347)),
                range(70, (7, 348), (7, 359)),
                range(70, (7, 360), (7, 371)),
                range(70, (7, 372), (7, 383)),
            ]
        );
        assert_eq!(blocks_of(&chunks, &extents).len(), 144);
    }

    #[test]
    fn chunks_span_files_but_never_data_objects() {
        // A partitioned table: two partitions (data objects 81, 82), extents in two files,
        // listed out of order.
        let extents = [
            extent(82, 5, 16, 8),
            extent(81, 6, 8, 8),
            extent(81, 5, 400, 8),
            extent(82, 4, 1000, 8),
        ];
        let chunks = plan(&extents, 100);
        assert_eq!(
            chunks,
            vec![range(81, (5, 400), (6, 15)), range(82, (4, 1000), (5, 23))]
        );
        let mut expected: Vec<_> = blocks_of(&chunks, &extents);
        expected.dedup();
        assert_eq!(expected.len(), 32);
    }

    #[test]
    fn a_table_without_extents_has_no_chunk() {
        assert!(plan(&[], 10).is_empty());
        assert!(plan(&[extent(1, 1, 1, 0)], 10).is_empty());
    }

    #[test]
    fn every_block_is_in_one_chunk_whatever_the_target() {
        let extents = [
            extent(9, 3, 8, 8),
            extent(9, 3, 24, 16),
            extent(9, 4, 8, 128),
        ];
        for target in 1..=200 {
            let chunks = plan(&extents, target);
            let covered = blocks_of(&chunks, &extents);
            let mut unique = covered.clone();
            unique.dedup();
            assert_eq!(covered, unique, "target {target}");
            assert_eq!(covered.len(), 152, "target {target}");
            let blocks = |c: &BlockRange| blocks_of(std::slice::from_ref(c), &extents).len() as u64;
            assert!(
                chunks.iter().all(|c| blocks(c) <= target),
                "target {target}"
            );
            assert!(
                chunks[..chunks.len() - 1]
                    .iter()
                    .all(|c| blocks(c) == target),
                "target {target}"
            );
        }
    }

    #[test]
    fn blocks_per_chunk_follows_the_statistics() {
        // 100 rows per block: 10,000 rows in 100 blocks.
        assert_eq!(blocks_per_chunk(10_000, Some(1_000_000), Some(10_000)), 100);
        // Rows per block rounded up: chunks err on the small side.
        assert_eq!(blocks_per_chunk(10, Some(15), Some(10)), 5);
        // No statistics, or an empty table's: the default density.
        assert_eq!(blocks_per_chunk(6_400, None, Some(10)), 100);
        assert_eq!(blocks_per_chunk(6_400, Some(0), Some(0)), 100);
        assert_eq!(blocks_per_chunk(0, None, None), 1);
    }

    #[test]
    fn row_ids_are_encoded_as_oracle_writes_them() {
        // A ROWID of the field corpus: AAAR9J (data object 73545) AAH (file 7) AAAACF (block
        // 133) AAB (row 1).
        assert_eq!(
            extended_row_id(73_545, 7, 133, 1).as_deref(),
            Some("AAAR9JAAHAAAACFAAB")
        );
        assert_eq!(
            row_id_parts("AAAR9JAAHAAAACFAAB"),
            Some((73_545, 7, 133, 1))
        );
        // The last row number of a chunk: 32767 = 7 * 4096 + 63 * 64 + 63.
        assert_eq!(
            extended_row_id(1, 1, 1, LAST_ROW).as_deref(),
            Some("AAAAABAABAAAAABH//")
        );
        assert_eq!(extended_row_id(1, 262_144, 1, 0), None);
        assert_eq!(row_id_parts("short"), None);
    }

    #[test]
    fn a_range_is_stored_as_tagged_json() {
        let range = RowRange::RowId {
            lo: "AAAR9JAAHAAAACAAAA".to_owned(),
            hi: "AAAR9JAAHAAAACHH//".to_owned(),
        };
        let text = serde_json::to_string(&range).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"row_id","lo":"AAAR9JAAHAAAACAAAA","hi":"AAAR9JAAHAAAACHH//"}"#
        );
        assert_eq!(serde_json::from_str::<RowRange>(&text).unwrap(), range);
        let whole = serde_json::to_string(&RowRange::whole_key()).unwrap();
        assert_eq!(whole, r#"{"kind":"key"}"#);
        assert_eq!(
            serde_json::from_str::<RowRange>(&whole).unwrap(),
            RowRange::whole_key()
        );
    }
}
