//! Database state: tables with per-SCN row versions, transactions with their undo, undo slots,
//! sessions and the catalog facts `doctor` checks.
//!
//! Row versions: each row keeps its history as `(scn, values)` versions so flashback reads `AS OF
//! SCN` see exactly the committed data of that SCN. A transaction's changes append versions
//! marked [`PENDING`] and lock the row (a second transaction touching a locked row is a scenario
//! error: Oracle would block); commit stamps them with the commit SCN, rollback pops them in
//! reverse order, which is also exactly the undo Oracle applies.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use jiff::civil;

use super::render;
use super::scenario::{Layout, TableLogging, UniqueDecl};
use crate::dictionary::TableSchema;
use crate::source::unique_key::{UniqueIndexColumn, usable_unique_keys};
use crate::source::{MinimalLogging, SessionId, SupplementalLogging, Xid};
use crate::value::Value;

/// A hash map with a fast, non-keyed hasher: the simulator's keys are scenario data, not
/// attacker input, and SipHash was a tenth of the time per row.
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
/// A set with [`FastHasher`].
pub(crate) type FastSet<T> = HashSet<T, BuildHasherDefault<FastHasher>>;

/// FxHash's multiplier.
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// FxHash (rustc's hasher) over 8-byte words, with a finalizer.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(SEED);
        }
        for &byte in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(SEED);
        }
    }

    // Integers (row numbers, interned names, log sequences, key lengths) as one word each,
    // rather than byte by byte through `write`.
    fn write_u8(&mut self, value: u8) {
        self.write_u64(u64::from(value));
    }

    fn write_u16(&mut self, value: u16) {
        self.write_u64(u64::from(value));
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(SEED);
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }

    /// A multiply only moves entropy upwards, and hashbrown picks buckets with the low bits:
    /// the murmur3 finalizer mixes the high bits back down (without it, short keys collided).
    fn finish(&self) -> u64 {
        let mut hash = self.0;
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        hash ^ (hash >> 33)
    }
}

/// The SCN of a version not yet committed.
pub(crate) const PENDING: u64 = u64::MAX;

/// The name a dropped table has in the recycle bin (`BIN$` and a unique id, Oracle Database
/// Administrator's Guide, "Naming Conventions for Objects in the Recycle Bin"); the model's id is
/// the object number.
pub(crate) fn recycle_bin_name(object_id: u32) -> String {
    format!("BIN$SIMULATED{object_id:05}==$0")
}

/// Oracle's extended ROWID alphabet.
const ROWID_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// Relative file number and first block of every simulated segment, and rows per block.
const ROWID_FILE: u64 = 7;
const ROWID_FIRST_BLOCK: u64 = 131;
const ROWS_PER_BLOCK: u64 = 100;
/// The absolute file number (`DBA_EXTENTS.FILE_ID`) of the model's data file, whose relative
/// number (`RELATIVE_FNO`, what ROWIDs carry) is [`ROWID_FILE`]: they differ in a database with
/// more than one tablespace, and a ROWID built from the wrong one names no row.
pub(crate) const ABSOLUTE_FILE: u64 = 12;
/// Where every segment's first extent starts. Its first blocks hold the segment header and
/// the space bitmaps of automatic segment space management (Database Concepts, "Segment Space
/// and the High Water Mark"), so rows start at [`ROWID_FIRST_BLOCK`]. Every segment of the
/// model sits at the same blocks: the data object id in their ROWIDs tells them apart.
const SEGMENT_FIRST_BLOCK: u64 = 128;
/// Extent sizes of a locally managed tablespace with AUTOALLOCATE: 16 extents of 64 KB (8
/// blocks of 8 KB), then extents of 1 MB (128 blocks) (Database Administrator's Guide,
/// "Creating a Locally Managed Tablespace"; the larger steps after 64 MB are not modelled).
const SMALL_EXTENTS: u64 = 16;
const SMALL_EXTENT_BLOCKS: u64 = 8;
const LARGE_EXTENT_BLOCKS: u64 = 128;

/// One version of a row: its values from `scn` on (`None`: deleted).
#[derive(Clone, Debug)]
pub(crate) struct Version {
    pub scn: u64,
    pub values: Option<Arc<[Value]>>,
}

/// A row's versions, oldest first. Most rows only ever have one: it is kept inline, without a
/// heap block of its own.
#[derive(Clone, Debug)]
pub(crate) enum Versions {
    None,
    One(Version),
    Many(Vec<Version>),
}

impl Versions {
    pub fn one(version: Version) -> Self {
        Self::One(version)
    }

    pub fn push(&mut self, version: Version) {
        *self = match std::mem::replace(self, Self::None) {
            Self::None => Self::One(version),
            Self::One(first) => Self::Many(vec![first, version]),
            Self::Many(mut all) => {
                all.push(version);
                Self::Many(all)
            }
        };
    }

    pub fn pop(&mut self) -> Option<Version> {
        match std::mem::replace(self, Self::None) {
            Self::None => None,
            Self::One(only) => Some(only),
            Self::Many(mut all) => {
                let last = all.pop();
                *self = Self::Many(all);
                last
            }
        }
    }

    /// Removes the versions in `range` (positions).
    pub fn remove(&mut self, range: std::ops::Range<usize>) {
        if range.is_empty() {
            return;
        }
        if let Self::Many(all) = self {
            all.drain(range);
        }
    }
}

impl std::ops::Deref for Versions {
    type Target = [Version];

    fn deref(&self) -> &[Version] {
        match self {
            Self::None => &[],
            Self::One(only) => std::slice::from_ref(only),
            Self::Many(all) => all,
        }
    }
}

impl std::ops::DerefMut for Versions {
    fn deref_mut(&mut self) -> &mut [Version] {
        match self {
            Self::None => &mut [],
            Self::One(only) => std::slice::from_mut(only),
            Self::Many(all) => all,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct TableRow {
    pub row_id: Arc<str>,
    pub versions: Versions,
    /// The transaction holding the row lock.
    pub locked_by: Option<u64>,
}

impl TableRow {
    /// The newest values, pending ones included (what the locking transaction sees).
    pub fn current(&self) -> Option<&Arc<[Value]>> {
        self.versions.last().and_then(|v| v.values.as_ref())
    }

    /// The committed values as of `scn`.
    pub fn as_of(&self, scn: u64) -> Option<&Arc<[Value]>> {
        self.versions
            .iter()
            .rev()
            .find(|v| v.scn != PENDING && v.scn <= scn)
            .and_then(|v| v.values.as_ref())
    }

    /// Whether reading the row as of `scn` needs undo: a version newer than `scn`, committed
    /// or pending, must be rolled back in the consistent read.
    pub fn changed_after(&self, scn: u64) -> bool {
        self.versions.iter().any(|v| v.scn > scn)
    }
}

/// A table's rows by row number. Row numbers are handed out densely, so a vector indexed by
/// them is both the fastest lookup and ROWID order; a slot is empty when the insert that made
/// the row was undone.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    slots: Vec<Option<TableRow>>,
}

impl Rows {
    pub fn get(&self, number: &u64) -> Option<&TableRow> {
        self.slots.get(usize::try_from(*number).ok()?)?.as_ref()
    }

    pub fn get_mut(&mut self, number: &u64) -> Option<&mut TableRow> {
        self.slots.get_mut(usize::try_from(*number).ok()?)?.as_mut()
    }

    pub fn insert(&mut self, number: u64, row: TableRow) {
        let Ok(index) = usize::try_from(number) else {
            return;
        };
        if self.slots.len() <= index {
            self.slots.resize_with(index + 1, || None);
        }
        self.slots[index] = Some(row);
    }

    pub fn remove(&mut self, number: &u64) {
        if let Some(slot) = usize::try_from(*number)
            .ok()
            .and_then(|i| self.slots.get_mut(i))
        {
            *slot = None;
        }
    }

    pub fn values(&self) -> impl Iterator<Item = &TableRow> {
        self.slots.iter().flatten()
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut TableRow> {
        self.slots.iter_mut().flatten()
    }

    /// `(row number, row)` in ROWID order from row number `first` on.
    pub fn starting_at(&self, first: u64) -> impl Iterator<Item = (u64, &TableRow)> {
        self.slots
            .iter()
            .enumerate()
            .skip(usize::try_from(first).unwrap_or(usize::MAX))
            .filter_map(|(number, row)| row.as_ref().map(|row| (number as u64, row)))
    }
}

/// A table's dictionary entry with its pre-quoted names (`"OWNER"."TABLE"`, `"COLUMN"` per
/// column in table order): everything SQL text is rendered from. A new one is made at every
/// DDL that changes the columns, so a row rendered later still sees the columns it was made
/// under.
#[derive(Debug)]
pub(crate) struct TableText {
    pub schema: Arc<TableSchema>,
    pub quoted_table: String,
    pub quoted_columns: Vec<String>,
    /// Positions of the columns that are not LOB-like (every column an ALL-logged before image
    /// holds).
    pub non_lob: Vec<usize>,
    /// What primary-key supplemental logging logs of an updated row: the primary key, else one
    /// of the unique indexes on NOT NULL columns ("one of the unique index keys", Oracle
    /// Database Utilities, "Database-Level Identification Key Logging"; which one is not
    /// documented, the model takes the first by name), else nothing (every non-LOB column is
    /// then logged).
    pub identification_key: Vec<usize>,
}

/// Key values at most this long (rendered) are kept inline in the key index.
const INLINE_KEY: usize = 22;

/// A key-index entry: the key columns' values as SQL text renders them, each followed by
/// `\u{1}`. Short entries (the common case) are kept inline, so looking a row up by its key or
/// indexing a new row allocates nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum IndexKey {
    Inline(u8, [u8; INLINE_KEY]),
    Heap(Box<[u8]>),
}

impl IndexKey {
    fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        if bytes.len() <= INLINE_KEY {
            let mut inline = [0; INLINE_KEY];
            inline[..bytes.len()].copy_from_slice(bytes);
            Self::Inline(bytes.len() as u8, inline)
        } else {
            Self::Heap(bytes.into())
        }
    }
}

/// A segment of a table: its only one, a partition's, or an IOT's key index (Database
/// Concepts, "Partitioned Tables": each partition is a segment of its own, with its own data
/// object id; "Index-Organized Tables": the rows live in the primary key index's segment).
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    /// `DBA_EXTENTS.PARTITION_NAME`, `DBA_OBJECTS.SUBOBJECT_NAME`: `None` but for a partition.
    pub partition: Option<String>,
    /// `VALUES LESS THAN`: the partition's rows have their partition column below it
    /// (`None`: MAXVALUE, or not a partition).
    pub below: Option<i64>,
    /// A subpartition's bound on the subpartition column (`None`: MAXVALUE, or not one).
    pub sub_below: Option<i64>,
    /// A subpartition's partition: its name and object number (a partition with
    /// subpartitions is an object without a segment).
    pub parent: Option<(String, u32)>,
    /// The segment's own object (the partition's or the index's; the table's for a heap).
    pub object_id: u32,
    /// The data object id its ROWIDs carry.
    pub data_object: u32,
    /// Rows placed in it so far: row slots are handed out from its first row block on.
    pub rows: u64,
}

/// A table and its rows.
#[derive(Debug)]
pub(crate) struct Table {
    pub schema: Arc<TableSchema>,
    pub logging: TableLogging,
    /// Unique constraints, each enforced by a unique index of its name (not checked on DML).
    pub unique: Vec<UniqueDecl>,
    /// Interned `(owner, table)`: what mining windows filter on.
    pub name_id: u32,
    pub owner: Arc<str>,
    pub name: Arc<str>,
    /// The quoted names SQL text is written with, shared with rows whose SQL_UNDO is rendered
    /// only when a window asks for it.
    pub text: Arc<TableText>,
    /// Dropped: the table keeps its slot (open transactions may still name it) but is no
    /// longer live. Without PURGE it sits in the recycle bin under [`recycle_bin_name`].
    pub dropped: bool,
    /// Dropped with PURGE: gone from the dictionary, so LogMiner names its rows by number.
    pub purged: bool,
    /// Every column structure the table has had, oldest first: the dictionary versions
    /// (`DATA_OBJV#`), one more at each DDL that changes a column. A row remembers the version
    /// it was written under (`at_mining::RowObject`).
    pub versions: Vec<Arc<TableSchema>>,
    /// Column name → position, with the fast hasher (looked up for every scenario value).
    pub column_positions: FastMap<String, usize>,
    /// `ALL_OBJECTS.OBJECT_ID`: the data object number the table was created with, kept for
    /// its life.
    pub object_id: u32,
    /// `DATA_OBJECT_ID`, which ROWIDs carry. Oracle gives a new one at TRUNCATE and MOVE; the
    /// model keeps it (its truncated rows keep their ROWIDs).
    pub data_object: u32,
    pub rows: Rows,
    /// Where rows are stored: the table's one segment for a heap table, one per partition for
    /// a partitioned one, the key index's for an index-organised one.
    pub segments: Vec<Segment>,
    /// The partition column of a range-partitioned table.
    pub partition_column: Option<usize>,
    /// The subpartition column of a range-range partitioned table.
    pub subpartition_column: Option<usize>,
    /// `ORGANIZATION INDEX` (`ALL_TABLES.IOT_TYPE = 'IOT'`): rows have logical ROWIDs.
    pub index_organized: bool,
    /// Rendered key values → row number, for rows that currently exist.
    pub key_index: FastMap<IndexKey, u64>,
    /// The buffer key values are rendered into.
    key_text: RefCell<String>,
    pub next_row: u64,
    /// The last DDL: flashback reads before it fail (ORA-01466).
    pub ddl_scn: u64,
}

impl Table {
    pub fn new(
        schema: TableSchema,
        logging: TableLogging,
        unique: Vec<UniqueDecl>,
        name_id: u32,
        data_object: u32,
        scn: u64,
    ) -> Self {
        let owner: Arc<str> = Arc::from(schema.schema());
        let name: Arc<str> = Arc::from(schema.table());
        let schema = Arc::new(schema);
        let mut table = Self {
            text: Arc::new(TableText {
                schema: Arc::clone(&schema),
                quoted_table: String::new(),
                quoted_columns: Vec::new(),
                non_lob: Vec::new(),
                identification_key: Vec::new(),
            }),
            dropped: false,
            purged: false,
            versions: vec![Arc::clone(&schema)],
            column_positions: FastMap::default(),
            schema,
            logging,
            unique,
            name_id,
            owner,
            name,
            object_id: data_object,
            data_object,
            rows: Rows::default(),
            segments: vec![Segment {
                partition: None,
                below: None,
                sub_below: None,
                parent: None,
                object_id: data_object,
                data_object,
                rows: 0,
            }],
            partition_column: None,
            subpartition_column: None,
            index_organized: false,
            key_index: FastMap::default(),
            key_text: RefCell::new(String::new()),
            next_row: 0,
            ddl_scn: scn,
        };
        table.refresh_columns();
        table
    }

    /// The current dictionary version (an index into [`Table::versions`]).
    pub fn dictionary_version(&self) -> u32 {
        u32::try_from(self.versions.len().saturating_sub(1)).unwrap_or(u32::MAX)
    }

    /// The table's name in today's dictionary: its recycle bin name once dropped.
    pub fn mined_name(&self) -> (Arc<str>, Arc<str>) {
        let name = if self.dropped {
            Arc::from(recycle_bin_name(self.object_id).as_str())
        } else {
            Arc::clone(&self.name)
        };
        (Arc::clone(&self.owner), name)
    }

    pub fn refresh_columns(&mut self) {
        self.text = Arc::new(TableText {
            schema: Arc::clone(&self.schema),
            quoted_table: format!("\"{}\".\"{}\"", self.owner, self.name),
            quoted_columns: self
                .schema
                .columns()
                .iter()
                .map(|c| render::quoted(&c.name))
                .collect(),
            non_lob: (self.schema.columns().iter().enumerate())
                .filter(|(_, c)| !c.data_type.is_lob_like())
                .map(|(i, _)| i)
                .collect(),
            identification_key: if self.schema.has_key() {
                self.schema.key_indexes().to_vec()
            } else {
                usable_unique_keys(&self.unique_index_columns(), self.schema.columns())
                    .first()
                    .map(|key| {
                        (key.columns.iter())
                            .filter_map(|name| self.schema.column_index(name))
                            .collect()
                    })
                    .unwrap_or_default()
            },
        });
        self.column_positions = self
            .schema
            .columns()
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
    }

    /// The columns of the unique indexes of its unique constraints, as `ALL_IND_COLUMNS` lists
    /// them (the primary key's index is not among them).
    pub fn unique_index_columns(&self) -> Vec<UniqueIndexColumn> {
        let mut rows = Vec::new();
        for constraint in &self.unique {
            for (position, column) in constraint.columns.iter().enumerate() {
                rows.push(UniqueIndexColumn {
                    index: constraint.name.clone(),
                    column: column.clone(),
                    position: u16::try_from(position + 1).unwrap_or(u16::MAX),
                });
            }
        }
        rows
    }

    /// The key-index entry of a row's values; `None` for a table without a key.
    pub fn key_of(&self, values: &[Value]) -> Option<IndexKey> {
        let key = self.schema.key_indexes();
        if key.is_empty() {
            return None;
        }
        let mut text = self.key_text.borrow_mut();
        text.clear();
        for &index in key {
            if let (Some(value), Some(column)) =
                (values.get(index), self.schema.columns().get(index))
            {
                render::write_value(&mut text, value, &column.data_type);
            }
            text.push('\u{1}');
        }
        Some(IndexKey::new(&text))
    }

    /// The key-index entry named by `(column, value)` conditions that cover the key exactly.
    pub fn key_of_conditions(&self, conditions: &[(usize, Value)]) -> Option<IndexKey> {
        let mut text = self.key_text.borrow_mut();
        text.clear();
        for &index in self.schema.key_indexes() {
            let (_, value) = conditions.iter().find(|(i, _)| *i == index)?;
            let column = self.schema.columns().get(index)?;
            render::write_value(&mut text, value, &column.data_type);
            text.push('\u{1}');
        }
        (!text.is_empty()).then(|| IndexKey::new(&text))
    }

    /// Moves the key index from `before` to `after` for row `row`.
    pub fn reindex(&mut self, row: u64, before: Option<&[Value]>, after: Option<&[Value]>) {
        if let Some(key) = before.and_then(|values| self.key_of(values))
            && self.key_index.get(&key) == Some(&row)
        {
            self.key_index.remove(&key);
        }
        if let Some(key) = after.and_then(|values| self.key_of(values)) {
            self.key_index.insert(key, row);
        }
    }

    /// Lays the table out as declared: a segment per partition, each a new object with its
    /// own data object id (numbers from `next_object`), or the key index of an IOT. The table
    /// itself then has no segment (`DBA_OBJECTS.DATA_OBJECT_ID` NULL).
    pub fn lay_out(&mut self, layout: &Layout, next_object: &mut u32) -> Result<(), String> {
        match layout {
            Layout::Heap => {}
            Layout::IndexOrganized => {
                if !self.schema.has_key() {
                    return Err("an index-organised table needs a primary key (ORA-25175)".into());
                }
                *next_object += 1;
                self.index_organized = true;
                self.segments = vec![Segment {
                    partition: None,
                    below: None,
                    sub_below: None,
                    parent: None,
                    object_id: *next_object,
                    data_object: *next_object,
                    rows: 0,
                }];
            }
            Layout::Range {
                column,
                subcolumn,
                partitions,
            } => {
                let index = |column: &str| {
                    self.schema
                        .column_index(column)
                        .ok_or_else(|| format!("no column {column} (ORA-00904)"))
                };
                self.partition_column = Some(index(column)?);
                self.subpartition_column = subcolumn.as_deref().map(index).transpose()?;
                let mut segments = Vec::new();
                let mut object = || {
                    *next_object += 1;
                    *next_object
                };
                for partition in partitions {
                    let segment = |name: &str, sub_below, parent, number| Segment {
                        partition: Some(name.to_owned()),
                        below: partition.below,
                        sub_below,
                        parent,
                        object_id: number,
                        data_object: number,
                        rows: 0,
                    };
                    let number = object();
                    if partition.subpartitions.is_empty() {
                        segments.push(segment(&partition.name, None, None, number));
                    }
                    for (name, below) in &partition.subpartitions {
                        let parent = Some((partition.name.clone(), number));
                        segments.push(segment(name, *below, parent, object()));
                    }
                }
                self.segments = segments;
            }
        }
        Ok(())
    }

    /// `DBA_OBJECTS.DATA_OBJECT_ID` of the table: NULL when its rows are in other segments.
    pub fn table_data_object(&self) -> Option<u32> {
        (self.partition_column.is_none() && !self.index_organized).then_some(self.data_object)
    }

    /// `DBA_EXTENTS.SEGMENT_NAME` and `SEGMENT_TYPE` of the table's segments: an IOT's is its
    /// key index, `SYS_IOT_TOP_<object id of the table>`.
    pub fn segment_name_and_type(&self, segment: &Segment) -> (String, &'static str) {
        if self.index_organized {
            (format!("SYS_IOT_TOP_{}", self.object_id), "INDEX")
        } else if segment.parent.is_some() {
            (self.name.to_string(), "TABLE SUBPARTITION")
        } else if segment.partition.is_some() {
            (self.name.to_string(), "TABLE PARTITION")
        } else {
            (self.name.to_string(), "TABLE")
        }
    }

    /// The segment a row with `values` goes to: the first partition whose bound is above its
    /// partition column (a NULL goes to MAXVALUE), then within it the first subpartition
    /// whose bound is above its subpartition column; ORA-14400 when none is.
    pub fn segment_for(&self, values: &[Value]) -> Result<usize, String> {
        let Some(column) = self.partition_column else {
            return Ok(0);
        };
        let value = |column: Option<usize>| match column.and_then(|c| values.get(c)) {
            Some(Value::Number(number)) => Ok(Some(number.to_f64())),
            Some(Value::Null) | None => Ok(None),
            Some(other) => Err(format!("a range bound compared with {other:?}")),
        };
        let below = |value: Option<f64>, bound: Option<i64>| match (value, bound) {
            (_, None) => true,
            (Some(value), Some(bound)) => value < bound as f64,
            (None, Some(_)) => false,
        };
        let (value, subvalue) = (value(Some(column))?, value(self.subpartition_column)?);
        let no_partition =
            || "ORA-14400: inserted partition key does not map to any partition".to_owned();
        fn partition_of(segment: &Segment) -> Option<&String> {
            (segment.parent.as_ref().map(|(name, _)| name)).or(segment.partition.as_ref())
        }
        let first = (self.segments.iter())
            .position(|segment| below(value, segment.below))
            .ok_or_else(no_partition)?;
        let partition = self.segments.get(first).and_then(partition_of);
        (self.segments.iter().enumerate().skip(first))
            .take_while(|(_, segment)| partition_of(segment) == partition)
            .find(|(_, segment)| segment.parent.is_none() || below(subvalue, segment.sub_below))
            .map(|(index, _)| index)
            .ok_or_else(no_partition)
    }

    /// The extents of a segment as `(relative file, first block, blocks)`, enough for every
    /// row slot handed out in it. Segment creation is deferred until the first insert
    /// (`DEFERRED_SEGMENT_CREATION`, the default since 11.2), so a segment never written to
    /// has none.
    pub fn extents(segment: &Segment) -> Vec<(u64, u64, u64)> {
        let mut extents = Vec::new();
        if segment.rows == 0 {
            return extents;
        }
        let last_block = ROWID_FIRST_BLOCK + (segment.rows - 1) / ROWS_PER_BLOCK;
        let mut block = SEGMENT_FIRST_BLOCK;
        while block <= last_block {
            let blocks = if (extents.len() as u64) < SMALL_EXTENTS {
                SMALL_EXTENT_BLOCKS
            } else {
                LARGE_EXTENT_BLOCKS
            };
            extents.push((ROWID_FILE, block, blocks));
            block += blocks;
        }
        extents
    }

    /// The blocks below the high water marks that hold rows: `ALL_TABLES.BLOCKS` as
    /// statistics gathered now would give it.
    pub fn used_blocks(&self) -> u64 {
        (self.segments.iter())
            .map(|segment| segment.rows.div_ceil(ROWS_PER_BLOCK))
            .sum()
    }

    /// Whether row numbers are in ROWID order: one segment of physical ROWIDs.
    pub fn rows_in_row_id_order(&self) -> bool {
        self.partition_column.is_none() && !self.index_organized
    }

    /// The row numbers whose ROWIDs lie in `lo..=hi` (ROWIDs as `(data object, relative file,
    /// block, row)`): ROWID order is row-number order, so the bounds are found by bisection.
    pub fn row_numbers_within(
        &self,
        lo: (u64, u64, u64, u64),
        hi: (u64, u64, u64, u64),
    ) -> std::ops::Range<u64> {
        let object = u64::from(self.data_object);
        let address = |row: u64| {
            (
                object,
                ROWID_FILE,
                ROWID_FIRST_BLOCK + row / ROWS_PER_BLOCK,
                row % ROWS_PER_BLOCK,
            )
        };
        let first = partition_point(self.next_row, |row| address(row) < lo);
        let end = partition_point(self.next_row, |row| address(row) <= hi);
        first..end.max(first)
    }

    /// A new row number and its ROWID text, in the segment a row with `values` goes to
    /// ([`Table::segment_for`], which the caller has checked). An IOT row's ROWID is logical:
    /// `*` and its key in base 64 (Database Concepts, "Logical Rowids"; the model encodes the
    /// key's text, not Oracle's internal format, which no reader decodes).
    pub fn allocate_row(&mut self, values: &[Value]) -> (u64, Arc<str>) {
        let row = self.next_row;
        self.next_row += 1;
        if self.index_organized {
            // The index grows with its entries: the model sizes its segment as a heap's of as
            // many rows.
            if let Some(segment) = self.segments.first_mut() {
                segment.rows += 1;
            }
            let mut text = String::from("*");
            if let Some(key) = self.key_of(values) {
                let bytes: &[u8] = match &key {
                    IndexKey::Inline(length, bytes) => &bytes[..usize::from(*length)],
                    IndexKey::Heap(bytes) => bytes,
                };
                for &byte in bytes {
                    push_base64(&mut text, u64::from(byte), 2);
                }
            }
            return (row, Arc::from(text.as_str()));
        }
        let index = self.segment_for(values).unwrap_or(0);
        let Some(segment) = self.segments.get_mut(index) else {
            return (row, Arc::from(row_id_text(self.data_object, row)));
        };
        let slot = segment.rows;
        segment.rows += 1;
        let mut text = [0u8; 18];
        let mut at = 0;
        let mut push = |value: u64, digits: u32| {
            for position in (0..digits).rev() {
                text[at] = ROWID_ALPHABET[((value >> (6 * position)) & 63) as usize];
                at += 1;
            }
        };
        push(u64::from(segment.data_object), 6);
        push(ROWID_FILE, 3);
        push(ROWID_FIRST_BLOCK + slot / ROWS_PER_BLOCK, 6);
        push(slot % ROWS_PER_BLOCK, 3);
        // Base-64 digits are ASCII; the text is `row_id_text`'s, with one allocation.
        let row_id = std::str::from_utf8(&text).map_or_else(
            |_| Arc::from(row_id_text(segment.data_object, slot)),
            Arc::from,
        );
        (row, row_id)
    }
}

/// The first of `0..count` for which `below` is false, `below` being true then false.
fn partition_point(count: u64, below: impl Fn(u64) -> bool) -> u64 {
    let (mut low, mut high) = (0, count);
    while low < high {
        let middle = low + (high - low) / 2;
        if below(middle) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    low
}

/// `OOOOOOFFFBBBBBBRRR`: data object, relative file, block and row, in base 64.
pub(crate) fn row_id_text(data_object: u32, row: u64) -> String {
    let mut text = String::with_capacity(18);
    push_base64(&mut text, u64::from(data_object), 6);
    push_base64(&mut text, ROWID_FILE, 3);
    push_base64(&mut text, ROWID_FIRST_BLOCK + row / ROWS_PER_BLOCK, 6);
    push_base64(&mut text, row % ROWS_PER_BLOCK, 3);
    text
}

/// The row number a ROWID of this simulator names (`None` for anything else).
pub(crate) fn row_number(row_id: &str) -> Option<u64> {
    if row_id.len() != 18 {
        return None;
    }
    let block = read_base64(row_id.get(9..15)?)?;
    let slot = read_base64(row_id.get(15..18)?)?;
    Some(block.checked_sub(ROWID_FIRST_BLOCK)? * ROWS_PER_BLOCK + slot)
}

fn push_base64(out: &mut String, value: u64, digits: u32) {
    for position in (0..digits).rev() {
        let digit = (value >> (6 * position)) & 63;
        out.push(char::from(ROWID_ALPHABET[digit as usize]));
    }
}

fn read_base64(text: &str) -> Option<u64> {
    text.bytes().try_fold(0u64, |acc, byte| {
        let digit = ROWID_ALPHABET.iter().position(|&c| c == byte)?;
        Some(acc << 6 | digit as u64)
    })
}

/// Column positions in ascending order: a bit set when every position is below 64 (no heap
/// block per UPDATE), else a list.
#[derive(Clone, Debug)]
pub(crate) enum Columns {
    Bits(u64),
    List(Vec<usize>),
}

impl Columns {
    /// `columns` must be ascending.
    pub fn of(columns: &[usize]) -> Self {
        match columns
            .iter()
            .try_fold(0u64, |bits, &i| (i < 64).then(|| bits | 1 << i))
        {
            Some(bits) => Self::Bits(bits),
            None => Self::List(columns.to_vec()),
        }
    }

    pub fn to_vec(&self) -> Vec<usize> {
        match self {
            Self::Bits(bits) => (0..64).filter(|i| bits & (1 << i) != 0).collect(),
            Self::List(list) => list.clone(),
        }
    }
}

/// What undoing one change does.
#[derive(Clone, Debug)]
pub(crate) enum Undo {
    /// Undo of an INSERT: a DELETE.
    Delete,
    /// Undo of a DELETE: an INSERT of the old values.
    Insert(Arc<[Value]>),
    /// Undo of an UPDATE (or a LOB change): the old values of these columns.
    Update {
        columns: Columns,
        before: Arc<[Value]>,
    },
}

/// One change of a transaction, in the order made.
#[derive(Clone, Debug)]
pub(crate) struct Change {
    pub table: usize,
    pub row: u64,
    pub row_id: Arc<str>,
    pub scn: u64,
    pub undo: Undo,
}

/// XID and start of a transaction that has made its first change.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Started {
    pub xid: Xid,
    pub start_scn: u64,
}

#[derive(Debug)]
pub(crate) struct Transaction {
    pub id: u64,
    pub thread: u16,
    pub user: Arc<str>,
    pub session: SessionId,
    pub started: Option<Started>,
    pub changes: Vec<Change>,
    pub savepoints: Vec<(String, usize)>,
}

impl Transaction {
    /// Records an UPDATE (or a LOB change) of row `row` of table `table` at `scn`: its undo puts
    /// back `before`'s values of `columns`.
    pub fn record_update(
        &mut self,
        table: usize,
        row: u64,
        row_id: &Arc<str>,
        scn: u64,
        columns: &[usize],
        before: Arc<[Value]>,
    ) {
        self.changes.push(Change {
            table,
            row,
            row_id: Arc::clone(row_id),
            scn,
            undo: Undo::Update {
                columns: Columns::of(columns),
                before,
            },
        });
    }
}

/// Undo segment slots: a transaction takes a free `(usn, slot)`; a later transaction reusing the
/// slot gets the next sequence, as Oracle's transaction table does.
#[derive(Debug)]
pub(crate) struct SlotPool {
    free: VecDeque<(u16, u16)>,
    sequences: HashMap<(u16, u16), u32>,
}

impl SlotPool {
    pub fn new() -> Self {
        let mut free = VecDeque::new();
        for slot in 0..32u16 {
            for usn in 1..=10u16 {
                free.push_back((usn, slot));
            }
        }
        Self {
            free,
            sequences: HashMap::new(),
        }
    }

    /// Takes the least recently used slot (or a fresh one when all are busy).
    pub fn take(&mut self) -> Xid {
        let (usn, slot) = self.free.pop_front().unwrap_or_else(|| {
            let busy = self.sequences.len();
            (11 + (busy / 1000) as u16, (busy % 1000) as u16)
        });
        let sequence = self
            .sequences
            .entry((usn, slot))
            .and_modify(|s| *s += 1)
            .or_insert(700 + u32::from(slot) * 3 + u32::from(usn));
        Xid::from_parts(usn, slot, *sequence)
    }

    pub fn release(&mut self, xid: Xid) {
        self.free.push_back((xid.usn(), xid.slot()));
    }
}

/// Catalog facts (`V$DATABASE`, privileges) and the clock.
#[derive(Debug)]
pub(crate) struct Catalog {
    pub dbid: u64,
    pub name: String,
    pub version: String,
    pub archivelog: bool,
    pub supplemental: SupplementalLogging,
    pub pdb: Option<Arc<str>>,
    pub con_id: u32,
    pub pdb_incarnation: u32,
    pub pdb_incarnation_scn: u64,
    pub incarnation: u32,
    pub resetlogs_scn: u64,
    pub resetlogs_time: civil::DateTime,
    pub default_user: Arc<str>,
    pub capture_user: Arc<str>,
    pub privileges: BTreeSet<String>,
    pub roles: BTreeSet<String>,
    pub scn: u64,
    /// The clock, in UTC: scenarios move it as an instant, whatever the host's zone.
    pub now: civil::DateTime,
    /// The database host's time zone (`{"database":{"time_zone":"Europe/Berlin"}}`, UTC unless
    /// set): what SYSDATE, SYSTIMESTAMP, SCN_TO_TIMESTAMP and LogMiner's DATE columns show the
    /// clock in. The redo keeps its own copy to stamp rows as they are written.
    pub time_zone: jiff::tz::TimeZone,
    /// `MAX_STRING_SIZE = EXTENDED` (`{"database":{"max_string_size":"EXTENDED"}}`).
    pub max_string_size_extended: bool,
    /// `NLS_CHARACTERSET` and `NLS_NCHAR_CHARACTERSET` (`{"database":{"character_set":
    /// "WE8MSWIN1252","national_character_set":"UTF8"}}`; AL32UTF8 and AL16UTF16, the defaults
    /// since 12.2, unless set).
    pub character_set: String,
    pub national_character_set: String,
    /// `DBTIMEZONE` (`{"database":{"dbtimezone":"-05:00"}}`, `+00:00` unless set): set in the
    /// database, independent of the host's `time_zone`.
    pub dbtimezone: String,
    /// `(first SCN, time)` whenever the clock moved: SCN_TO_TIMESTAMP's mapping.
    pub scn_times: Vec<(u64, civil::DateTime)>,
    pub scn_time_retention_seconds: i64,
    /// Undo generated below this SCN is overwritten (`{"undo_lost": true}`): a flashback read
    /// as of an earlier SCN that needs undo fails with ORA-01555.
    pub undo_kept_from_scn: u64,
    /// Views the capture user may not read (`{"database":{"ungranted_views":[..]}}`).
    pub ungranted_views: BTreeSet<String>,
    /// START_LOGMNR calls still to fail as if an online log the listing named had been reused
    /// before the start (the archiver race, ORA-01291).
    pub archiver_races: u32,
}

/// The instant a UTC clock time names (the ends of jiff's range saturate, never reached by a
/// scenario's clock).
fn utc_instant(utc: civil::DateTime) -> jiff::Timestamp {
    jiff::tz::TimeZone::UTC
        .to_timestamp(utc)
        .unwrap_or(jiff::Timestamp::MAX)
}

/// The local time the host in `zone` shows at the UTC clock time `utc`: what Oracle stores in a
/// DATE taken from SYSDATE, such as LogMiner's TIMESTAMP and COMMIT_TIMESTAMP.
pub(crate) fn host_local_time(zone: &jiff::tz::TimeZone, utc: civil::DateTime) -> civil::DateTime {
    zone.to_datetime(utc_instant(utc))
}

/// The first SCN of a new simulator and its clock.
pub(crate) const FIRST_SCN: u64 = 1_000_000;
pub(crate) const FIRST_TIME: civil::DateTime = civil::date(2024, 1, 2).at(0, 0, 0, 0);

impl Catalog {
    pub fn new() -> Self {
        // Seed 001's grants for a capture user (CREATE TABLE is for the flush table), and SET
        // CONTAINER, which a common user working in a PDB from the root needs.
        let privileges = [
            "CREATE SESSION",
            "SET CONTAINER",
            "CREATE TABLE",
            "LOGMINING",
            "SELECT ANY TRANSACTION",
            "FLASHBACK ANY TABLE",
            "SELECT ANY TABLE",
            "SELECT ANY DICTIONARY",
        ];
        Self {
            dbid: 1_234_567_890,
            name: "ORCL".to_owned(),
            version: "19.0.0.0.0".to_owned(),
            archivelog: true,
            supplemental: SupplementalLogging {
                min: MinimalLogging::Yes,
                primary_key: false,
                unique: false,
                foreign_key: false,
                all: false,
            },
            pdb: None,
            con_id: 0,
            pdb_incarnation: 1,
            pdb_incarnation_scn: 1,
            incarnation: 1,
            resetlogs_scn: 1,
            resetlogs_time: civil::date(2023, 6, 1).at(0, 0, 0, 0),
            default_user: Arc::from("APP"),
            capture_user: Arc::from("REDOLINE"),
            privileges: privileges.iter().map(|p| (*p).to_owned()).collect(),
            roles: ["EXECUTE_CATALOG_ROLE", "SELECT_CATALOG_ROLE"]
                .iter()
                .map(|r| (*r).to_owned())
                .collect(),
            scn: FIRST_SCN,
            now: FIRST_TIME,
            time_zone: jiff::tz::TimeZone::UTC,
            max_string_size_extended: false,
            character_set: "AL32UTF8".to_owned(),
            national_character_set: "AL16UTF16".to_owned(),
            dbtimezone: "+00:00".to_owned(),
            scn_times: vec![(FIRST_SCN, FIRST_TIME)],
            scn_time_retention_seconds: 5 * 86_400,
            undo_kept_from_scn: 0,
            ungranted_views: BTreeSet::new(),
            archiver_races: 0,
        }
    }

    /// The time SCN `scn` was reached, `None` before the first SCN, beyond the current one, or
    /// older than the retained mapping (ORA-08181).
    pub fn time_of(&self, scn: u64) -> Option<civil::DateTime> {
        if scn > self.scn {
            return None;
        }
        let index = self.scn_times.partition_point(|(first, _)| *first <= scn);
        let (_, time) = *self.scn_times.get(index.checked_sub(1)?)?;
        let age = self.now.duration_since(time).as_secs();
        (age <= self.scn_time_retention_seconds).then_some(host_local_time(&self.time_zone, time))
    }

    /// The clock as the host shows it: its local time and offset from UTC now (SYSTIMESTAMP).
    pub fn host_now(&self) -> jiff::Zoned {
        utc_instant(self.now).to_zoned(self.time_zone.clone())
    }

    /// Whether the effective logging of a table puts every column in before images.
    pub fn effective_logging(&self, table: TableLogging) -> TableLogging {
        if self.supplemental.all {
            TableLogging::All
        } else if self.supplemental.primary_key && table == TableLogging::None {
            TableLogging::PrimaryKey
        } else {
            table
        }
    }
}
