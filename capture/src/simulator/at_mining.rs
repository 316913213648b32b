//! How a stored row reads when it is mined: LogMiner with the online catalog renders redo with
//! the dictionary as it is *when mining*, not as it was when the row was written (Oracle
//! Database Utilities, "LogMiner Dictionary Options": the online catalog "reflects the current
//! state of the database"; "Using the Online Catalog": once a table is altered LogMiner cannot
//! rebuild SQL for its older versions). The rows are stored as they were written; this module
//! decides, when a window shows a row, which of three forms it takes:
//! - **as written**: the table has the name and the dictionary version it had then;
//! - **renamed**: the table was renamed since (`ALTER TABLE .. RENAME TO`, `RENAME`), or dropped
//!   into the recycle bin, which renames it `BIN$...`: the same statement under the current name
//!   (the object number, which the dictionary looks names up by, is unchanged);
//! - **by number**: the table's columns changed since (ADD, DROP, RENAME or MODIFY COLUMN each
//!   make a new dictionary version, `DATA_OBJV#`), or it was dropped with PURGE: `SEG_OWNER`
//!   `UNKNOWN`, `TABLE_NAME` `OBJ# n`, columns `"COL n"` by segment column number, every value
//!   `HEXTORAW` of its internal bytes, `STATUS` 2 and `INFO` `Dictionary Mismatch` (logminer.md
//!   §2–3; the shape of Oracle's own example in the Utilities guide). The values are the written
//!   statement's, typed with the version the row was written under and encoded by
//!   [`crate::value::internal::encode_internal`].
//!
//! Modelled choices, not verified on a database: DDL rows keep the names they were written with;
//! a LOB or 32K row, or a statement continued over several rows (CSF), that would be rendered by
//! number has no SQL_REDO at all, as does a value with no internal encoding here (LONG, LOBs,
//! XMLTYPE): the capture cannot rebuild such a row and must stop on it, which is what the tests
//! check.

use std::fmt::Write as _;
use std::sync::Arc;

use super::database::Table;
use crate::dictionary::TableSchema;
use crate::redo::ast::{ColumnValue, DmlStatement};
use crate::redo::parse_dml;
use crate::source::OperationCode;
use crate::value::internal::{DatabaseFormats, encode_internal};
use crate::value::{binary::encode_hex, typed};

/// The owner LogMiner writes for a row it names by object number.
pub(crate) const NUMBERED_OWNER: &str = "UNKNOWN";
/// `INFO` of a row LogMiner could not render with the current dictionary.
pub(crate) const MISMATCH_INFO: &str = "Dictionary Mismatch";

/// The table a row changed, as the dictionary knew it when the row was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowObject {
    /// The table's slot in the simulator's tables.
    pub table: u32,
    /// Its dictionary version then ([`super::database::Table::versions`]).
    pub version: u32,
    /// `ALL_OBJECTS.OBJECT_ID`: the row's `DATA_OBJ#`.
    pub object_id: u32,
}

/// Which form a stored row takes when mined now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AtMining {
    AsWritten,
    /// Under the table's current name (interned id and text).
    Renamed {
        name_id: u32,
        owner: Arc<str>,
        table: Arc<str>,
    },
    /// By object and column numbers, with the version the row was written under.
    Numbered {
        object_id: u32,
        schema: Arc<TableSchema>,
    },
}

/// The form of a stored row given today's tables: the row's table as written (`object`), its
/// operation, and the interned name it was written under (`name_id`).
pub(crate) fn at_mining(
    object: Option<RowObject>,
    operation: OperationCode,
    name_id: Option<u32>,
    tables: &[Table],
) -> AtMining {
    let Some(object) = object else {
        return AtMining::AsWritten;
    };
    if operation == OperationCode::Ddl {
        return AtMining::AsWritten;
    }
    let Some(table) = tables.get(object.table as usize) else {
        return AtMining::AsWritten;
    };
    if table.purged || table.dictionary_version() != object.version {
        return match table.versions.get(object.version as usize) {
            Some(schema) => AtMining::Numbered {
                object_id: table.object_id,
                schema: Arc::clone(schema),
            },
            None => AtMining::AsWritten,
        };
    }
    let (owner, name) = table.mined_name();
    if name_id == Some(table.name_id) && !table.dropped {
        AtMining::AsWritten
    } else {
        AtMining::Renamed {
            name_id: table.name_id,
            owner,
            table: name,
        }
    }
}

/// `sql` with its first `"OWNER"."TABLE"` (the written name) replaced by the current one.
pub(crate) fn renamed_sql(sql: &str, written: (&str, &str), current: (&str, &str)) -> String {
    let old = format!("\"{}\".\"{}\"", written.0, written.1);
    let new = format!("\"{}\".\"{}\"", current.0, current.1);
    sql.replacen(&old, &new, 1)
}

/// A DML statement as LogMiner writes it by number, or `None` when it cannot be: not an
/// INSERT, UPDATE or DELETE, a column the version does not have, or a value without an internal
/// encoding.
pub(crate) fn numbered_sql(
    sql: &str,
    object_id: u32,
    schema: &TableSchema,
    formats: &DatabaseFormats,
) -> Option<String> {
    let statement = parse_dml(sql).ok()?;
    let mut out = String::with_capacity(sql.len() * 2);
    let table = format!("\"{NUMBERED_OWNER}\".\"OBJ# {object_id}\"");
    match &statement {
        DmlStatement::Insert { values, .. } => {
            let _ = write!(out, "insert into {table}(");
            let mut list = String::new();
            for (index, (name, raw)) in values.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                    list.push(',');
                }
                let (number, bytes) = numbered(schema, name, raw, formats)?;
                let _ = write!(out, "\"COL {number}\"");
                write_bytes(&mut list, bytes.as_deref());
            }
            let _ = write!(out, ") values ({list});");
        }
        DmlStatement::Update {
            set, where_, rowid, ..
        } => {
            let _ = write!(out, "update {table} set ");
            for (index, (name, raw)) in set.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                let (number, bytes) = numbered(schema, name, raw, formats)?;
                let _ = write!(out, "\"COL {number}\" = ");
                write_bytes(&mut out, bytes.as_deref());
            }
            write_where(&mut out, where_, rowid.as_deref(), schema, formats)?;
            out.push(';');
        }
        DmlStatement::Delete { where_, rowid, .. } => {
            let _ = write!(out, "delete from {table}");
            write_where(&mut out, where_, rowid.as_deref(), schema, formats)?;
            out.push(';');
        }
    }
    Some(out)
}

/// ` where "COL 1" = HEXTORAW('..') and "COL 2" IS NULL and ROWID = '..'`.
fn write_where(
    out: &mut String,
    conditions: &[ColumnValue<'_>],
    rowid: Option<&str>,
    schema: &TableSchema,
    formats: &DatabaseFormats,
) -> Option<()> {
    let mut first = true;
    let mut and = |out: &mut String| {
        out.push_str(if first { " where " } else { " and " });
        first = false;
    };
    for (name, raw) in conditions {
        let (number, bytes) = numbered(schema, name, raw, formats)?;
        and(out);
        match bytes {
            Some(bytes) => {
                let _ = write!(out, "\"COL {number}\" = ");
                write_bytes(out, Some(&bytes));
            }
            None => {
                let _ = write!(out, "\"COL {number}\" IS NULL");
            }
        }
    }
    if let Some(rowid) = rowid {
        and(out);
        let _ = write!(out, "ROWID = '{rowid}'");
    }
    Some(())
}

/// A column's segment column number and its value's internal bytes (`None` for NULL).
fn numbered(
    schema: &TableSchema,
    name: &str,
    raw: &crate::redo::ast::RawValue<'_>,
    formats: &DatabaseFormats,
) -> Option<(u16, Option<Vec<u8>>)> {
    let index = schema.column_index(name)?;
    let column = &schema.columns()[index];
    // The model numbers a version's columns by position (DROP COLUMN renumbers, as Oracle does).
    let number = column
        .segment_column
        .or_else(|| u16::try_from(index + 1).ok())?;
    let value = typed(raw, column).ok()?;
    if value.is_null() {
        return Some((number, None));
    }
    let bytes = encode_internal(&column.data_type, &value, formats)?;
    Some((number, Some(bytes)))
}

/// `HEXTORAW('..')` in lower-case hex, or `NULL`.
fn write_bytes(out: &mut String, bytes: Option<&[u8]>) {
    match bytes {
        Some(bytes) => {
            out.push_str("HEXTORAW('");
            out.push_str(&encode_hex(bytes));
            out.push_str("')");
        }
        None => out.push_str("NULL"),
    }
}
