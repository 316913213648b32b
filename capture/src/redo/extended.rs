//! The PL/SQL LogMiner writes for a VARCHAR2 / NVARCHAR2 / RAW value longer than 4000 bytes
//! (2000 for RAW) in a database with `MAX_STRING_SIZE = EXTENDED` (logminer.md §1, codes 91–93):
//!
//! ```text
//! 32K_BEGIN := DECLARE <declarations, skipped> BEGIN [DBMS_LOB.CreateTemporary ( .. ) ;]
//!              Stmt := 'update TABLE [alias] set COLUMN = :BIND [where CONDITIONS] [;]' ; [END [;]]
//! 32K_WRITE := buf_c := VALUE ; <the append call, skipped> [END [;]]
//! 32K_END   := (nothing the capture reads)
//! ```
//!
//! The begin row names the column and the row (its where clause; the quoted update is one
//! literal with its quotes doubled, unescaped before it is read). Each write row carries the next
//! piece of the value, appended in order. The shapes follow Debezium's `ExtendedStringParser`
//! (begin: `DECLARE`, `BEGIN`, ` Stmt := '`, the update with `:BIND`, trailing `';`) and
//! `AbstractLogMinerEventProcessor.handleExtendedStringWriteEvent` (write: the piece is the
//! quoted text of the first assignment, ending before the last statement), DBZ-8039. The exact
//! whitespace and the text of the append call are UNVERIFIED; the parser ignores whitespace and
//! skips the call token by token.

use std::borrow::Cow;

use super::ast::{ColumnValue, RawValue, TableRef};
use super::error::{ParseError, ParseErrorKind};
use super::lex::Cursor;
use super::parse::{alias, conditions, table_ref, value};

/// A 32K_BEGIN row: which column of which row the following 32K_WRITE pieces rebuild.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtendedBegin {
    pub table: TableRef<'static>,
    /// The column, as written inside the double quotes.
    pub column: String,
    /// The row's key columns (the where clause), in order.
    pub where_: Vec<ColumnValue<'static>>,
    pub rowid: Option<String>,
}

/// One 32K_WRITE piece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtendedPiece<'a> {
    /// Character data (`''` unescaped, UNISTR decoded).
    Text(Cow<'a, str>),
    /// RAW data as the hex text inside `HEXTORAW('...')`.
    Hex(Cow<'a, str>),
}

/// Parses the SQL_REDO of a 32K_BEGIN row.
pub fn parse_extended_begin(sql: &str) -> Result<ExtendedBegin, ParseError> {
    let mut cursor = Cursor::new(sql);
    cursor.expect_keyword("declare", "`DECLARE`")?;
    while !cursor.eat_keyword("begin")? {
        if cursor.at_end()? {
            return Err(cursor.error(ParseErrorKind::Expected("`BEGIN`")));
        }
        cursor.skip_token()?;
    }
    // Everything up to the `Stmt :=` assignment (the temporary LOB's creation) is skipped.
    while !cursor.eat_keyword("stmt")? {
        if cursor.at_end()? {
            return Err(cursor.error(ParseErrorKind::Expected("`Stmt := '...'`")));
        }
        cursor.skip_token()?;
    }
    if !cursor.eat_pair(b":=")? {
        return Err(cursor.error(ParseErrorKind::Expected("`:=`")));
    }
    let statement = cursor.string_literal()?;
    cursor.expect(b';', "`;` after the statement")?;
    if cursor.eat_keyword("end")? {
        cursor.eat(b';')?;
    }
    cursor.finish()?;
    // The quoted update is parsed on its own; an error in it points into the unescaped text.
    inner_update(&statement)
}

/// `update TABLE [alias] set COLUMN = :BIND [where CONDITIONS] [;]`
fn inner_update(sql: &str) -> Result<ExtendedBegin, ParseError> {
    let mut cursor = Cursor::new(sql);
    cursor.expect_keyword("update", "`update`")?;
    let table = table_ref(&mut cursor)?;
    let alias = alias(&mut cursor, "set")?;
    cursor.expect_keyword("set", "`set`")?;
    cursor.skip_trivia()?;
    if cursor.peek()? != Some(b'"') {
        let at = cursor.pos();
        let word = cursor.word()?;
        if !word.is_some_and(|word| alias.is_some_and(|alias| alias.eq_ignore_ascii_case(word))) {
            return Err(cursor.error_at(ParseErrorKind::UnknownAlias, at));
        }
        cursor.expect(b'.', "`.` after the table alias")?;
    }
    let column = cursor.quoted_identifier()?.into_owned();
    cursor.expect(b'=', "`=`")?;
    cursor.expect(b':', "the bind variable `:NAME`")?;
    if cursor.word()?.is_none() {
        return Err(cursor.error(ParseErrorKind::Expected("the bind variable's name")));
    }
    let (where_, rowid) = if cursor.eat_keyword("where")? {
        conditions(&mut cursor, alias)?
    } else {
        (Vec::new(), None)
    };
    cursor.eat(b';')?;
    cursor.finish()?;
    Ok(ExtendedBegin {
        table: TableRef {
            schema: table.schema.map(|s| Cow::Owned(s.into_owned())),
            table: Cow::Owned(table.table.into_owned()),
        },
        column,
        where_: where_
            .into_iter()
            .map(|(name, value)| (Cow::Owned(name.into_owned()), owned(value)))
            .collect(),
        rowid: rowid.map(Cow::into_owned),
    })
}

fn owned(value: RawValue<'_>) -> RawValue<'static> {
    match value {
        RawValue::Null => RawValue::Null,
        RawValue::Unsupported => RawValue::Unsupported,
        RawValue::Text(text) => RawValue::Text(Cow::Owned(text.into_owned())),
        RawValue::Call { name, args } => RawValue::Call {
            name: Cow::Owned(name.into_owned()),
            args: args.into_iter().map(owned).collect(),
        },
    }
}

/// Parses the SQL_REDO of a 32K_WRITE row: the piece it appends.
pub fn parse_extended_write(sql: &str) -> Result<ExtendedPiece<'_>, ParseError> {
    let mut cursor = Cursor::new(sql);
    let at = cursor.pos();
    let buffer = cursor
        .word()?
        .ok_or_else(|| cursor.error(ParseErrorKind::Expected("a buffer assignment")))?;
    if !buffer.to_ascii_lowercase().starts_with("buf_") {
        return Err(cursor.error_at(ParseErrorKind::Expected("buf_c, buf_nc or buf_b"), at));
    }
    if !cursor.eat_pair(b":=")? {
        return Err(cursor.error(ParseErrorKind::Expected("`:=`")));
    }
    cursor.skip_trivia()?;
    let data_at = cursor.pos();
    let piece = match value(&mut cursor, 0)? {
        RawValue::Text(text) => ExtendedPiece::Text(text),
        RawValue::Call { name, mut args } if name.eq_ignore_ascii_case("hextoraw") => {
            match (args.pop(), args.is_empty()) {
                (Some(RawValue::Text(hex)), true) => ExtendedPiece::Hex(hex),
                _ => {
                    return Err(cursor.error_at(
                        ParseErrorKind::Expected("HEXTORAW('..') with one literal"),
                        data_at,
                    ));
                }
            }
        }
        _ => {
            return Err(cursor.error_at(
                ParseErrorKind::Expected("a quoted literal or HEXTORAW('..')"),
                data_at,
            ));
        }
    };
    cursor.expect(b';', "`;` after the piece")?;
    // The append call that follows is not needed: the pieces come in order.
    while !cursor.at_end()? {
        cursor.skip_token()?;
    }
    Ok(piece)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 32K_BEGIN text of Debezium's `ExtendedStringParserTest` (quoted in logminer.md §3).
    const DEBEZIUM_BEGIN: &str = "DECLARE \n TempLob CLOB;\n buf_c   VARCHAR2(32767);\n Stmt    CLOB;\nBEGIN\n DBMS_LOB.CreateTemporary(TempLob, FALSE);\n Stmt := 'update \"DEBEZIUM\".\"TEST_TABLE\" a set a.\"DATA\" = :DATA where a.\"ID\" = ''1'';';";

    #[test]
    fn the_begin_row_names_the_column_and_the_row() {
        let begin = parse_extended_begin(DEBEZIUM_BEGIN).expect("parses");
        assert_eq!(begin.table.schema.as_deref(), Some("DEBEZIUM"));
        assert_eq!(begin.table.table, "TEST_TABLE");
        assert_eq!(begin.column, "DATA");
        assert_eq!(
            begin.where_,
            vec![(Cow::Borrowed("ID"), RawValue::Text(Cow::Borrowed("1")))]
        );
        assert_eq!(begin.rowid, None);
    }

    #[test]
    fn the_begin_row_without_alias_or_with_a_rowid_and_end() {
        let sql = "DECLARE Stmt CLOB; BEGIN Stmt := 'update \"S\".\"T\" set \"C\" = :C where \"ID\" = ''it''''s'' and ROWID = ''AAAB'';'; END;";
        let begin = parse_extended_begin(sql).expect("parses");
        assert_eq!(begin.column, "C");
        assert_eq!(
            begin.where_,
            vec![(Cow::Borrowed("ID"), RawValue::Text(Cow::Borrowed("it's")))]
        );
        assert_eq!(begin.rowid.as_deref(), Some("AAAB"));
    }

    #[test]
    fn a_begin_row_that_is_not_the_shape_is_refused() {
        for bad in [
            "",
            "BEGIN Stmt := 'update \"S\".\"T\" set \"C\" = :C';",
            "DECLARE BEGIN Stmt := 'update \"S\".\"T\" set \"C\" = ''x''';",
            "DECLARE BEGIN Stmt := 'update \"S\".\"T\" b set a.\"C\" = :C';",
            "DECLARE BEGIN Stmt := 'delete from \"S\".\"T\"';",
            "DECLARE BEGIN Stmt := 'update \"S\".\"T\" set \"C\" = :C'; garbage",
            "DECLARE BEGIN DBMS_LOB.CreateTemporary(TempLob, FALSE);",
        ] {
            assert!(parse_extended_begin(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn write_rows_carry_one_piece_each() {
        // The piece is the assignment's literal; Debezium cuts it from offset 12 to the quote
        // before the next-to-last `;` (handleExtendedStringWriteEvent).
        let sql = "\n buf_c := 'abc''d';\n DBMS_LOB.WriteAppend(TempLob, LENGTH(buf_c), buf_c);";
        assert_eq!(
            parse_extended_write(sql).expect("parses"),
            ExtendedPiece::Text(Cow::Owned("abc'd".to_owned()))
        );
        let raw = " buf_b := HEXTORAW('0aff');\n DBMS_LOB.WriteAppend(TempLob, 2, buf_b);";
        assert_eq!(
            parse_extended_write(raw).expect("parses"),
            ExtendedPiece::Hex(Cow::Borrowed("0aff"))
        );
        for bad in [
            "",
            "x := 'a';",
            "buf_c = 'a';",
            "buf_c := 'a'",
            "buf_c := NULL;",
        ] {
            assert!(parse_extended_write(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
