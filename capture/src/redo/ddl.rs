//! DDL rows: which kind of statement, and which table it touches.
//!
//! SQL_REDO of a DDL row is the statement as the user issued it (case, whitespace, comments and
//! all) plus `;`. Only the head is parsed:
//!
//! ```text
//! ddl    := create | alter | drop | truncate | <anything else: Other>
//! create := CREATE [OR REPLACE] {GLOBAL TEMPORARY | PRIVATE TEMPORARY | SHARDED | DUPLICATED
//!           | IMMUTABLE | BLOCKCHAIN} TABLE [IF NOT EXISTS] NAME ...
//! alter  := ALTER TABLE NAME ...          drop := DROP TABLE [IF EXISTS] NAME ...
//! truncate := TRUNCATE TABLE NAME ...     rename := RENAME NAME TO PART
//! (ALTER TABLE NAME RENAME TO PART also gives the new name)
//! NAME   := PART [. PART]                 PART := "Quoted" | bare_word
//! ```
//!
//! A bare name is folded to upper case as Oracle does (`t` names table `T`); a quoted name is
//! kept as written. Any other DDL (`CREATE INDEX`, `COMMENT ON`, `GRANT`, ...) is
//! [`DdlKind::Other`] with no object: the caller decides what to do with it.

use std::borrow::Cow;

use super::error::{ParseError, ParseErrorKind};
use super::lex::Cursor;

/// What a DDL statement does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DdlKind {
    CreateTable,
    AlterTable,
    DropTable,
    TruncateTable,
    /// `RENAME old TO new`: the statement form of a table rename (`ALTER TABLE old RENAME TO
    /// new` is an [`DdlKind::AlterTable`] with [`DdlStatement::renamed_to`]).
    RenameTable,
    /// Any other DDL; its object is not extracted.
    Other,
}

/// `OWNER.NAME` of a DDL statement (unquoted parts upper-cased).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectName<'a> {
    pub schema: Option<Cow<'a, str>>,
    pub name: Cow<'a, str>,
}

/// A DDL statement's kind and the table it touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DdlStatement<'a> {
    pub kind: DdlKind,
    /// The table, for every kind but [`DdlKind::Other`].
    pub object: Option<ObjectName<'a>>,
    /// The table's new name when the statement renames it (`ALTER TABLE old RENAME TO new`,
    /// `RENAME old TO new`). Oracle takes no owner before the new name: a table keeps its
    /// schema (SQL Language Reference, RENAME and ALTER TABLE, "rename_table_clause").
    pub renamed_to: Option<Cow<'a, str>>,
}

/// Words that may stand between `CREATE` and `TABLE`.
const CREATE_TABLE_MODIFIERS: [&str; 7] = [
    "global",
    "private",
    "temporary",
    "sharded",
    "duplicated",
    "immutable",
    "blockchain",
];

/// Parses the head of a DDL statement's SQL_REDO.
pub fn parse_ddl(sql: &str) -> Result<DdlStatement<'_>, ParseError> {
    let mut cursor = Cursor::new(sql);
    if cursor.at_end()? {
        return Err(cursor.error(ParseErrorKind::Expected("a DDL statement")));
    }
    let kind = if cursor.eat_keyword("create")? {
        if cursor.eat_keyword("or")? {
            cursor.expect_keyword("replace", "`replace` after `or`")?;
        }
        while CREATE_TABLE_MODIFIERS
            .iter()
            .any(|modifier| matches!(cursor.peek_keyword(modifier), Ok(true)))
        {
            cursor.word()?;
        }
        if cursor.eat_keyword("table")? {
            if cursor.eat_keyword("if")? {
                cursor.expect_keyword("not", "`not exists`")?;
                cursor.expect_keyword("exists", "`exists`")?;
            }
            DdlKind::CreateTable
        } else {
            DdlKind::Other
        }
    } else if cursor.eat_keyword("alter")? && cursor.eat_keyword("table")? {
        DdlKind::AlterTable
    } else if cursor.eat_keyword("drop")? && cursor.eat_keyword("table")? {
        if cursor.eat_keyword("if")? {
            cursor.expect_keyword("exists", "`exists` after `if`")?;
        }
        DdlKind::DropTable
    } else if cursor.eat_keyword("truncate")? && cursor.eat_keyword("table")? {
        DdlKind::TruncateTable
    } else if cursor.eat_keyword("rename")? {
        DdlKind::RenameTable
    } else {
        DdlKind::Other
    };
    let object = match kind {
        DdlKind::Other => None,
        DdlKind::CreateTable
        | DdlKind::AlterTable
        | DdlKind::DropTable
        | DdlKind::TruncateTable
        | DdlKind::RenameTable => Some(object_name(&mut cursor)?),
    };
    let renamed_to = match kind {
        DdlKind::RenameTable => {
            cursor.expect_keyword("to", "`to` after the table to rename")?;
            Some(name_part(&mut cursor)?)
        }
        // `RENAME COLUMN`, `RENAME CONSTRAINT` and `RENAME PARTITION` rename something else.
        DdlKind::AlterTable if cursor.eat_keyword("rename")? && cursor.eat_keyword("to")? => {
            Some(name_part(&mut cursor)?)
        }
        _ => None,
    };
    Ok(DdlStatement {
        kind,
        object,
        renamed_to,
    })
}

/// `PART [. PART]`.
fn object_name<'a>(cursor: &mut Cursor<'a>) -> Result<ObjectName<'a>, ParseError> {
    let first = name_part(cursor)?;
    if cursor.eat(b'.')? {
        Ok(ObjectName {
            schema: Some(first),
            name: name_part(cursor)?,
        })
    } else {
        Ok(ObjectName {
            schema: None,
            name: first,
        })
    }
}

/// `"Quoted"` as written, or a bare word folded to upper case.
fn name_part<'a>(cursor: &mut Cursor<'a>) -> Result<Cow<'a, str>, ParseError> {
    if cursor.peek()? == Some(b'"') {
        return cursor.quoted_identifier();
    }
    match cursor.word()? {
        Some(word) if word.bytes().any(|byte| byte.is_ascii_lowercase()) => {
            Ok(Cow::Owned(word.to_ascii_uppercase()))
        }
        Some(word) => Ok(Cow::Borrowed(word)),
        None => Err(cursor.error(ParseErrorKind::Expected("a table name"))),
    }
}
