//! The PL/SQL shapes LogMiner writes for out-of-row LOB changes (logminer.md §3, "LOBs"):
//!
//! ```text
//! lob       := [declare] (locator [write] | write | trim | erase) [END [;]]
//! declare   := DECLARE <declarations, skipped> BEGIN
//! locator   := select "COL" into LOC from TABLE [alias] [where CONDITIONS] for update ;
//! write     := BUF := VALUE ; dbms_lob.write ( LOC , INT , INT , BUF ) ;
//! trim      := dbms_lob.trim ( LOC , INT ) ;
//! erase     := dbms_lob.erase ( LOC , INT , INT ) ;
//! LOC       := loc_c | loc_nc | loc_b          BUF := buf_c | buf_nc | buf_b
//! VALUE     := 'text' | UNISTR('..') [|| ..] | HEXTORAW('hex')
//! ```
//!
//! SEL_LOB_LOCATOR rows carry the declare block and the `select ... for update`; LOB_WRITE rows
//! usually carry only the buffer assignment and the write call, but one capture shows the whole
//! block in one row, so every shape accepts the optional declare block, locator select and `END;`
//! (the exact whitespace and `END;` placement is UNVERIFIED; the parser ignores whitespace).
//! The LOB_TRIM and LOB_ERASE texts are UNVERIFIED; both are parsed as shown above. A locator
//! select in front of a trim or erase is checked and then dropped (only a write keeps it, in
//! [`LobWrite::locator`]).

use std::borrow::Cow;

use super::ast::{ColumnValue, RawValue, TableRef};
use super::error::{ParseError, ParseErrorKind};
use super::lex::Cursor;
use super::parse::{alias, conditions, table_ref, value};

/// Which kind of LOB a locator or buffer variable is for (`loc_c`, `loc_nc`, `loc_b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LobKind {
    Clob,
    Nclob,
    Blob,
}

impl LobKind {
    fn from_variable(word: &str, prefix: &str) -> Option<Self> {
        let suffix = word
            .get(..prefix.len())
            .filter(|head| head.eq_ignore_ascii_case(prefix))
            .and_then(|_| word.get(prefix.len()..))?;
        if suffix.eq_ignore_ascii_case("c") {
            Some(Self::Clob)
        } else if suffix.eq_ignore_ascii_case("nc") {
            Some(Self::Nclob)
        } else if suffix.eq_ignore_ascii_case("b") {
            Some(Self::Blob)
        } else {
            None
        }
    }
}

/// The SEL_LOB_LOCATOR select: which LOB column of which row the following writes change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LobLocator<'a> {
    /// The LOB column, as written inside the double quotes.
    pub column: Cow<'a, str>,
    pub kind: LobKind,
    pub table: TableRef<'a>,
    /// The row's key columns (the where clause), in order.
    pub where_: Vec<ColumnValue<'a>>,
    /// Present when the where clause names a ROWID.
    pub rowid: Option<Cow<'a, str>>,
}

/// The bytes of one LOB_WRITE piece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobData<'a> {
    /// Character data (`buf_c := '...'`, `''` unescaped, UNISTR decoded).
    Text(Cow<'a, str>),
    /// Binary data as the hex text inside `HEXTORAW('...')`.
    Hex(Cow<'a, str>),
}

/// One LOB_WRITE piece: `amount` characters (CLOB) or bytes (BLOB) at 1-based `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LobWrite<'a> {
    pub kind: LobKind,
    pub data: LobData<'a>,
    pub amount: u64,
    pub offset: u64,
    /// The locator select, when the row carries the whole block.
    pub locator: Option<LobLocator<'a>>,
}

/// A LOB statement of SQL_REDO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobStatement<'a> {
    /// SEL_LOB_LOCATOR.
    Locator(LobLocator<'a>),
    /// LOB_WRITE.
    Write(LobWrite<'a>),
    /// LOB_TRIM: the LOB is cut to `new_length`.
    Trim { kind: LobKind, new_length: u64 },
    /// LOB_ERASE: `amount` units from 1-based `offset` are erased.
    Erase {
        kind: LobKind,
        amount: u64,
        offset: u64,
    },
}

/// Parses the SQL_REDO of a SEL_LOB_LOCATOR, LOB_WRITE, LOB_TRIM or LOB_ERASE row.
pub fn parse_lob(sql: &str) -> Result<LobStatement<'_>, ParseError> {
    let mut cursor = Cursor::new(sql);
    skip_declare_block(&mut cursor)?;
    let locator = if cursor.eat_keyword("select")? {
        Some(locator(&mut cursor)?)
    } else {
        None
    };
    let statement = if cursor.at_end()? || cursor.peek_keyword("end")? {
        match locator {
            Some(locator) => LobStatement::Locator(locator),
            None => {
                return Err(cursor.error(ParseErrorKind::UnknownStatement("a LOB statement")));
            }
        }
    } else if cursor.eat_keyword("dbms_lob")? {
        cursor.expect(b'.', "`.` after dbms_lob")?;
        if cursor.eat_keyword("trim")? {
            cursor.expect(b'(', "`(`")?;
            let kind = variable(&mut cursor, "loc_")?;
            cursor.expect(b',', "`,`")?;
            let new_length = cursor.unsigned("the new length")?;
            cursor.expect(b')', "`)`")?;
            LobStatement::Trim { kind, new_length }
        } else if cursor.eat_keyword("erase")? {
            cursor.expect(b'(', "`(`")?;
            let kind = variable(&mut cursor, "loc_")?;
            cursor.expect(b',', "`,`")?;
            let amount = cursor.unsigned("the amount")?;
            cursor.expect(b',', "`,`")?;
            let offset = cursor.unsigned("the offset")?;
            cursor.expect(b')', "`)`")?;
            LobStatement::Erase {
                kind,
                amount,
                offset,
            }
        } else {
            return Err(cursor.error(ParseErrorKind::Expected("`trim` or `erase`")));
        }
    } else {
        LobStatement::Write(write(&mut cursor, locator)?)
    };
    finish_block(&mut cursor)?;
    Ok(statement)
}

/// `DECLARE ... BEGIN`: the variable declarations are skipped token by token.
fn skip_declare_block(cursor: &mut Cursor<'_>) -> Result<(), ParseError> {
    if !cursor.eat_keyword("declare")? {
        return Ok(());
    }
    while !cursor.eat_keyword("begin")? {
        if cursor.at_end()? {
            return Err(cursor.error(ParseErrorKind::Expected("`BEGIN`")));
        }
        cursor.skip_token()?;
    }
    Ok(())
}

/// `"COL" into LOC from TABLE [alias] [where ...] for update ;` after `select`.
fn locator<'a>(cursor: &mut Cursor<'a>) -> Result<LobLocator<'a>, ParseError> {
    let column = cursor.quoted_identifier()?;
    cursor.expect_keyword("into", "`into`")?;
    let kind = variable(cursor, "loc_")?;
    cursor.expect_keyword("from", "`from`")?;
    let table = table_ref(cursor)?;
    let alias = alias(cursor, "for")?;
    let (where_, rowid) = if cursor.eat_keyword("where")? {
        conditions(cursor, alias)?
    } else {
        (Vec::new(), None)
    };
    cursor.expect_keyword("for", "`for update`")?;
    cursor.expect_keyword("update", "`update` after `for`")?;
    cursor.expect(b';', "`;`")?;
    Ok(LobLocator {
        column,
        kind,
        table,
        where_,
        rowid,
    })
}

/// `BUF := VALUE ; dbms_lob.write ( LOC , amount , offset , BUF ) ;`
fn write<'a>(
    cursor: &mut Cursor<'a>,
    locator: Option<LobLocator<'a>>,
) -> Result<LobWrite<'a>, ParseError> {
    let buffer_at = cursor.pos();
    let buffer = cursor
        .word()?
        .ok_or_else(|| cursor.error(ParseErrorKind::Expected("a LOB buffer assignment")))?;
    let buffer_kind = LobKind::from_variable(buffer, "buf_").ok_or_else(|| {
        cursor.error_at(
            ParseErrorKind::Expected("buf_c, buf_nc or buf_b"),
            buffer_at,
        )
    })?;
    if !cursor.eat_pair(b":=")? {
        return Err(cursor.error(ParseErrorKind::Expected("`:=`")));
    }
    cursor.skip_trivia()?;
    let data_at = cursor.pos();
    let data = match value(cursor, 0)? {
        RawValue::Text(text) => Some(LobData::Text(text)),
        RawValue::Call { name, mut args } if name.eq_ignore_ascii_case("hextoraw") => {
            match (args.pop(), args.is_empty()) {
                (Some(RawValue::Text(hex)), true) => Some(LobData::Hex(hex)),
                _ => None,
            }
        }
        RawValue::Null | RawValue::Unsupported | RawValue::Call { .. } => None,
    };
    let data = data.ok_or_else(|| {
        cursor.error_at(
            ParseErrorKind::Expected("a quoted literal or HEXTORAW('..')"),
            data_at,
        )
    })?;
    cursor.expect(b';', "`;`")?;
    cursor.expect_keyword("dbms_lob", "`dbms_lob.write`")?;
    cursor.expect(b'.', "`.` after dbms_lob")?;
    cursor.expect_keyword("write", "`write`")?;
    cursor.expect(b'(', "`(`")?;
    let kind = variable(cursor, "loc_")?;
    cursor.expect(b',', "`,`")?;
    let amount = cursor.unsigned("the amount")?;
    cursor.expect(b',', "`,`")?;
    let offset = cursor.unsigned("the offset")?;
    cursor.expect(b',', "`,`")?;
    let written_at = cursor.pos();
    let written = variable(cursor, "buf_")?;
    if written != buffer_kind {
        return Err(cursor.error_at(
            ParseErrorKind::Expected("the buffer assigned above"),
            written_at,
        ));
    }
    cursor.expect(b')', "`)`")?;
    Ok(LobWrite {
        kind,
        data,
        amount,
        offset,
        locator,
    })
}

/// `loc_c`, `buf_nc`, ...: the LOB kind a variable name stands for.
fn variable(cursor: &mut Cursor<'_>, prefix: &'static str) -> Result<LobKind, ParseError> {
    cursor.skip_trivia()?;
    let at = cursor.pos();
    let expected = if prefix == "loc_" {
        "loc_c, loc_nc or loc_b"
    } else {
        "buf_c, buf_nc or buf_b"
    };
    cursor
        .word()?
        .and_then(|word| LobKind::from_variable(word, prefix))
        .ok_or_else(|| cursor.error_at(ParseErrorKind::Expected(expected), at))
}

/// An optional `;`, an optional `END [;]`, then nothing.
fn finish_block(cursor: &mut Cursor<'_>) -> Result<(), ParseError> {
    cursor.eat(b';')?;
    if cursor.eat_keyword("end")? {
        cursor.eat(b';')?;
    }
    if cursor.at_end()? {
        Ok(())
    } else {
        Err(cursor.error(ParseErrorKind::TrailingText))
    }
}
