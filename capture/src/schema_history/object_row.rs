//! Rows LogMiner names only by numbers: the table version in force and the typed values.
//!
//! With the online catalog, LogMiner renders redo with the dictionary as it is when mining.
//! Once a table has been altered it cannot rebuild statements for the older version, and
//! writes the object and column numbers instead of names, each value as the hex of its
//! internal bytes: `insert into "UNKNOWN"."OBJ# 74103"("COL 1","COL 2") values
//! (HEXTORAW('c102'),HEXTORAW('4142'))` (Oracle Database Utilities, "LogMiner Dictionary
//! Options" / "Using the Online Catalog"; the same form appears without any dictionary). Debezium
//! recognises the `OBJ# ` prefix (`AbstractLogMinerStreamingChangeEventSource.
//! isTableLookupByObjectIdRequired`) and maps `COL n` back to names
//! (`LogMinerColumnResolverDmlParser`).
//!
//! [`resolve`] does that mapping from the schema history, pure and without I/O:
//! - the object number is `ALL_OBJECTS.OBJECT_ID`, which a rename keeps
//!   ([`SchemaHistory::in_force_by_object`]);
//! - `n` in `COL n` is the column's segment column number
//!   ([`crate::dictionary::Column::segment_column`]), which DROP COLUMN renumbers, so the
//!   version in force at the row's SCN is the one that knows it. Oracle's DDL lock keeps a
//!   transaction that wrote the table from spanning an ALTER of it, so the row's own SCN and its
//!   transaction's commit SCN select the same version;
//! - each value is decoded from Oracle's internal format by the column's type in that version
//!   ([`decode_internal`]), with the database's character sets and time zone.
//!
//! What it cannot render is a typed [`ObjectRowError`] naming the SCN, the object and what is
//! missing, for the caller to stop on (never a silent drop). [`object_number`] and
//! [`NumberedValue::from_parsed`] read such a statement as the redo parser gives it.

use std::sync::Arc;

use super::SchemaHistory;
use crate::dictionary::TableSchema;
use crate::redo::ast::{ColumnValue, RawValue};
use crate::source::StorageFormatError;
use crate::value::Row;
use crate::value::binary::decode_hex;
use crate::value::internal::{DatabaseFormats, InternalFormatError, decode_internal};

/// The prefix of the table name LogMiner writes for an object it cannot name (`OBJ# 74103`,
/// owner `UNKNOWN`).
const OBJECT_PREFIX: &str = "OBJ# ";
/// The prefix of a column name LogMiner writes for a column it cannot name (`COL 3`).
const COLUMN_PREFIX: &str = "COL ";

/// The object number of a table named `OBJ# n`; `None` for any other name.
pub fn object_number(table_name: &str) -> Option<u64> {
    let digits = table_name.strip_prefix(OBJECT_PREFIX)?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())
        .flatten()
}

/// The segment column number of a column named `COL n`; `None` for any other name.
pub fn column_number(column_name: &str) -> Option<u16> {
    let digits = column_name.strip_prefix(COLUMN_PREFIX)?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())
        .flatten()
}

/// One value of such a row: the column number and the internal bytes (`None` for NULL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberedValue {
    pub column: u16,
    pub bytes: Option<Vec<u8>>,
}

/// A parsed value of such a row that is not `"COL n" = HEXTORAW('..')` or NULL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("column {column:?} of a row named by object number: {problem}")]
pub struct NumberedValueError {
    pub column: String,
    pub problem: String,
}

impl NumberedValue {
    /// The values of a parsed statement on `"UNKNOWN"."OBJ# n"` (a VALUES list, SET or WHERE
    /// clause): each column `COL n`, each value `HEXTORAW('..')` or NULL. The `ROWID` LogMiner
    /// adds to a WHERE clause is left out, as for any table.
    pub fn from_parsed(values: &[ColumnValue<'_>]) -> Result<Vec<Self>, NumberedValueError> {
        let mut numbered = Vec::with_capacity(values.len());
        for (name, raw) in values {
            if name.as_ref() == "ROWID" {
                continue;
            }
            let refuse = |problem: String| NumberedValueError {
                column: name.to_string(),
                problem,
            };
            let column = column_number(name)
                .ok_or_else(|| refuse("the column is not named COL n".to_owned()))?;
            let bytes = match raw {
                RawValue::Null => None,
                RawValue::Call { name, args } if name.eq_ignore_ascii_case("HEXTORAW") => {
                    match args.as_slice() {
                        [RawValue::Text(hex)] => {
                            Some(decode_hex(hex).map_err(|error| refuse(error.to_string()))?)
                        }
                        _ => return Err(refuse("HEXTORAW without one literal".to_owned())),
                    }
                }
                _ => {
                    return Err(refuse(
                        "the value is neither HEXTORAW('..') nor NULL".to_owned(),
                    ));
                }
            };
            numbered.push(Self { column, bytes });
        }
        Ok(numbered)
    }
}

/// A row matched to its table version: the values in the version's column order, the columns
/// the row does not carry absent.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedRow {
    pub table: Arc<TableSchema>,
    pub row: Row,
}

/// Why a row named by numbers cannot be rendered.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ObjectRowError {
    #[error(
        "the row at SCN {scn} names object {object_id} (OBJ# {object_id}), and the schema history \
         has no version of a captured table with that object number at that SCN"
    )]
    NoVersion { scn: u64, object_id: u64 },
    #[error(
        "the row at SCN {scn} of object {object_id} ({table}) names COL {column}, a column number \
         the table's version in force at that SCN does not have"
    )]
    UnknownColumn {
        scn: u64,
        object_id: u64,
        table: String,
        column: u16,
    },
    #[error(
        "the row at SCN {scn} of object {object_id} ({table}) names columns by number, and the \
         table's version in force at that SCN was recorded without column numbers (before the \
         capture read them)"
    )]
    NoColumnNumbers {
        scn: u64,
        object_id: u64,
        table: String,
    },
    #[error("the row at SCN {scn} of object {object_id} ({table}), column {column}: {source}")]
    Value {
        scn: u64,
        object_id: u64,
        table: String,
        column: String,
        #[source]
        source: Box<InternalFormatError>,
    },
    #[error("the row at SCN {scn} of object {object_id} ({table}) cannot be decoded: {source}")]
    Formats {
        scn: u64,
        object_id: u64,
        table: String,
        #[source]
        source: StorageFormatError,
    },
}

/// The table version of object `object_id` in force at `scn`, and `values` typed into a row of
/// it; see the module docs.
pub fn resolve(
    history: &SchemaHistory,
    object_id: u64,
    scn: u64,
    values: &[NumberedValue],
    formats: &Result<DatabaseFormats, StorageFormatError>,
) -> Result<ResolvedRow, ObjectRowError> {
    let table = history
        .in_force_by_object(object_id, scn)
        .ok_or(ObjectRowError::NoVersion { scn, object_id })?;
    let name = || table.qualified_name();
    if table.columns().iter().all(|c| c.segment_column.is_none()) {
        return Err(ObjectRowError::NoColumnNumbers {
            scn,
            object_id,
            table: name(),
        });
    }
    let mut row = Row::absent(table.columns().len());
    for value in values {
        let Some(index) = table
            .columns()
            .iter()
            .position(|c| c.segment_column == Some(value.column))
        else {
            return Err(ObjectRowError::UnknownColumn {
                scn,
                object_id,
                table: name(),
                column: value.column,
            });
        };
        let column = &table.columns()[index];
        let typed = match &value.bytes {
            None => crate::value::Value::Null,
            Some(bytes) => {
                let formats = formats.as_ref().map_err(|source| ObjectRowError::Formats {
                    scn,
                    object_id,
                    table: name(),
                    source: source.clone(),
                })?;
                decode_internal(&column.data_type, bytes, formats).map_err(|source| {
                    ObjectRowError::Value {
                        scn,
                        object_id,
                        table: name(),
                        column: column.name.clone(),
                        source: Box::new(source),
                    }
                })?
            }
        };
        row.set(index, typed);
    }
    Ok(ResolvedRow { table, row })
}

#[cfg(test)]
mod tests;
