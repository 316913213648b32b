//! What the SQL_REDO parser produces: statements and untyped values, borrowing from the input
//! where they can (a literal without `''` escapes is a slice of the statement text).
//!
//! Values are untyped here: `'42'` is text until the column's Oracle type says it is a NUMBER
//! (see `crate::value`). This split keeps the parser free of the dictionary.

use std::borrow::Cow;

/// Column slots reserved before a column or value list is read (8 slots stay under 1 KiB, the
/// size glibc serves from its per-thread cache).
pub(crate) const COLUMNS_UP_FRONT: usize = 8;

/// A value as LogMiner wrote it in SQL_REDO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawValue<'a> {
    /// `NULL` in a value list or SET, or `IS NULL` in a where clause.
    Null,
    /// A quoted literal (with `''` unescaped), a bare number, or the decoded text of
    /// `UNISTR('...')` (also several joined with `||`).
    Text(Cow<'a, str>),
    /// LogMiner's bare `Unsupported Type`.
    Unsupported,
    /// Any other function call, such as `TO_DATE('..', '..')`, `HEXTORAW('..')`, `EMPTY_CLOB()`.
    /// The name is as written (upper case in LogMiner's output).
    Call {
        name: Cow<'a, str>,
        args: Vec<RawValue<'a>>,
    },
}

/// `"OWNER"."TABLE"` as written, without the quotes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRef<'a> {
    /// Absent when LogMiner wrote no owner (NO_ROWID_IN_STMT captures seen in the wild).
    pub schema: Option<Cow<'a, str>>,
    pub table: Cow<'a, str>,
}

/// A column name (as written inside the double quotes) and its value.
pub type ColumnValue<'a> = (Cow<'a, str>, RawValue<'a>);

/// One DML statement of SQL_REDO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DmlStatement<'a> {
    Insert {
        table: TableRef<'a>,
        values: Vec<ColumnValue<'a>>,
    },
    Update {
        table: TableRef<'a>,
        set: Vec<ColumnValue<'a>>,
        /// Empty when the update carried no before image.
        where_: Vec<ColumnValue<'a>>,
        rowid: Option<Cow<'a, str>>,
    },
    Delete {
        table: TableRef<'a>,
        where_: Vec<ColumnValue<'a>>,
        rowid: Option<Cow<'a, str>>,
    },
}
