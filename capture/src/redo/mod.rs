//! SQL_REDO text → statements with untyped values. Pure: no I/O, no dictionary, no allocation per
//! token beyond what the output needs.
//!
//! # Grammar (DML, [`parse_dml`])
//!
//! Keywords match ignoring ASCII case; whitespace (newlines included) and `/* ... */` comments may
//! stand between any two tokens; a statement may end with one `;`.
//!
//! ```text
//! dml        := insert | update | delete
//! insert     := INSERT INTO table ( "COL" {, "COL"} ) VALUES ( value {, value} )
//! update     := UPDATE table [alias] SET assign {, assign} [WHERE conditions]
//! delete     := DELETE FROM table [alias] [WHERE conditions]
//! table      := "OWNER" . "TABLE" | "TABLE"
//! alias      := bare_word                     (not SET / WHERE)
//! assign     := column = value
//! conditions := condition {AND condition}
//! condition  := column = value | column IS NULL | [alias .] ROWID = 'rowid'
//! column     := [alias .] "COL"
//! value      := term {|| term}                (text terms only; NULL terms count as empty)
//! term       := 'literal' | NULL | number | Unsupported Type
//!             | UNISTR ( 'literal' )          (decoded: \XXXX UTF-16 units, \\ backslash)
//!             | NAME ( [value {, value}] )    (kept as a call: TO_DATE, HEXTORAW, EMPTY_CLOB, ...)
//! ```
//!
//! - `'...'` literals: `''` is one quote; backslashes, newlines and any UTF-8 are literal text. A
//!   literal without `''` is borrowed from the input ([`std::borrow::Cow::Borrowed`]).
//! - `"..."` names are kept as written (spaces, `#`, lower case): `"UNKNOWN"."OBJ# 45522"`,
//!   `"COL 1"`.
//! - `ROWID = '...'` is returned as the statement's rowid, never as a column; a second one is an
//!   error. The alias prefix `a.` is dropped; a prefix that is not the declared alias is an error.
//! - `"C" IS NULL` and `"C" = NULL` both give [`RawValue::Null`].
//! - Calls nest at most [`parse::MAX_CALL_DEPTH`] deep.
//! - `||` joins only text (LogMiner writes it for long `UNISTR` values); joining a call such as
//!   `TO_DATE(..)` is an error rather than a guess.
//!
//! Not accepted (an error, never a guess): `OR` in a where clause, bind variables (`XMLType(:1)`
//! of XML DOC rows), Debezium's "relaxed quote" repair of unescaped apostrophes, text after the
//! statement.
//!
//! Text in the exact spelling LogMiner writes (lower-case keywords, single spaces, literals, `NULL`
//! and one-level calls such as `TO_DATE('..', '..')`) is read by a fast path that gives up on
//! anything else; the general grammar then reads the statement, so both give the same result.
//!
//! LOB statements ([`lob::parse_lob`]) and DDL heads ([`ddl::parse_ddl`]) have their grammars in
//! their modules.
//!
//! # Error model
//!
//! Every parser returns [`ParseError`]: a [`ParseErrorKind`], the byte offset where parsing
//! stopped and a short excerpt of the text there. No input makes a parser panic, loop forever or
//! recurse without bound (fuzzed in `capture/fuzz`, property-tested in `tests/redo_parse.rs`).

pub mod ast;
pub mod cli;
pub mod ddl;
pub mod error;
pub mod extended;
mod fast;
mod lex;
pub mod lob;
pub mod parse;
mod unistr;

pub use ast::{ColumnValue, DmlStatement, RawValue, TableRef};
pub use ddl::{DdlKind, DdlStatement, ObjectName, parse_ddl};
pub use error::{ParseError, ParseErrorDetail, ParseErrorKind};
pub use extended::{ExtendedBegin, ExtendedPiece, parse_extended_begin, parse_extended_write};
pub use lob::{LobData, LobKind, LobLocator, LobStatement, LobWrite, parse_lob};

/// Parses one SQL_REDO DML statement (see the grammar above).
///
/// Borrows from `sql` wherever it can; never panics. Text in the exact shape LogMiner writes takes
/// the fast path ([`fast`]) to the same result as the general grammar ([`parse`]); the choice is
/// made here so that neither module needs the other.
pub fn parse_dml(sql: &str) -> Result<DmlStatement<'_>, ParseError> {
    match fast::parse(sql) {
        Some(statement) => Ok(statement),
        None => parse::parse_general(sql),
    }
}
